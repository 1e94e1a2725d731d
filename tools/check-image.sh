#!/bin/sh
# SPDX-License-Identifier: MIT
# memaccept: post-link checks on the ELF behind an image (relocations are checked by elf2efi.py).
# Usage: check-image.sh IMAGE.elf prod|test
set -eu
elf=$1
kind=$2
fail() { echo "check-image: $elf: $*" >&2; exit 1; }

syms=$(nm "$elf")
if [ "$kind" = prod ]; then
	# The production image carries no emulator and no in-guest test cases.
	bad=$(echo "$syms" | awk '$3 ~ /^(emu_|testcase_|emutest_)/ {print $3}' | head -5)
	[ -z "$bad" ] || fail "test-only symbols in the production image: $bad"
fi
# The confidential-computing instructions live in their backends only: TDCALL in
# arch/x86/tdx (tdx_* functions), PVALIDATE and VMGEXIT in arch/x86/sev (snp_*/ghcb_*).
misplaced=$(objdump -d --no-show-raw-insn "$elf" | awk '
	/^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn); next }
	/\ttdcall/ && fn !~ /^tdx_/ { print fn ": tdcall" }
	/\t(pvalidate|vmgexit)/ && fn !~ /^(snp_|ghcb_)/ { print fn ": " $2 }' | head -5)
[ -z "$misplaced" ] || fail "confidential-computing instructions outside their backends: $misplaced"
# The instructions a TD or SNP guest traps (CPUID, RDMSR/WRMSR, HLT, port I/O, WBINVD,
# INVD, MONITOR/MWAIT, RDPMC, VMCALL/VMMCALL) appear only in their accessors (arch/x86:
# cpu_cpuid, cpu_halt, msr_read_safe, msr_write_safe, raw_io_in/out), in the AP start-up
# code (tramp_*), in the SNP termination's halt, and in the test image's emulator and test
# cases (code from arch/x86/emu, boot/test, kernel/tests). The instruction observer
# catches at run time what runs; this catches what is written, run or not.
raw=$(objdump -d -l --no-show-raw-insn "$elf" | awk '
	function flush() { if (pending != "" && !(kind == "test" && testcode)) printf "%s", pending; pending = "" }
	/^[0-9a-f]+ <.*>:$/ { flush(); fn = $2; gsub(/[<>:]/, "", fn); testcode = 0; next }
	/^\/.*:[0-9]+/ { if ($1 ~ /\/(arch\/x86\/emu|boot\/test|kernel\/tests)\//) testcode = 1; next }
	/\t(rdmsr|wrmsr|cpuid|hlt|wbinvd|invd|monitor|mwait|rdpmc|vmcall|vmmcall|ins[bwl]?|outs[bwl]?)( |$)/ ||
	/\t(in|out) / {
		if (fn !~ /^(cpu_cpuid|cpu_halt|msr_read_safe|msr_write_safe|raw_io_in|raw_io_out|snp_terminate)$/ &&
		    fn !~ /^tramp_/)
			pending = pending fn ": " $2 "\n"
	}
	END { flush() }' kind="$kind" | sort -u | head -5)
[ -z "$raw" ] || fail "instructions a TD or SNP guest traps outside their accessors: $raw"
# The page allocator's fast paths (palloc_alloc, palloc_free; everything else is in
# alloc_slow and free_slow) take no lock and make no atomic read-modify-write but one:
# no LOCK-prefixed instruction, no XCHG (which locks implicitly), no call but the CPU
# index. The one: palloc_free's compare-exchange of the block's page byte (one LOCK
# CMPXCHG), which is what makes a double free on two CPUs at once panic instead of
# caching the block twice (mm/page_alloc.c, palloc_free).
fast=$(objdump -d --no-show-raw-insn "$elf" | awk '
	/^[0-9a-f]+ <.*>:$/ { fn = $2; gsub(/[<>:]/, "", fn); if (fn ~ /^palloc_(alloc|free)$/) seen[fn] = 1; next }
	fn == "palloc_free" && /\tlock cmpxchg / && !cas++ { next }
	fn ~ /^palloc_(alloc|free)$/ && (/\t(lock |xchg)/ || (/\tcall / && !/\tcall +\*/ && !/<panic>/)) { print fn ": " $0 }
	END { if (kernel && (!seen["palloc_alloc"] || !seen["palloc_free"])) print "palloc_alloc or palloc_free not found" }' \
	kernel="$(echo "$syms" | awk '$3 == "palloc_init" {print 1}')" | head -3)
[ -z "$fast" ] || fail "the allocator's fast path locks or calls out: $fast"
# No unresolved symbols may survive into the image.
undef=$(echo "$syms" | awk '$1 == "U" {print $2}' | head -5)
[ -z "$undef" ] || fail "undefined symbols: $undef"
exit 0
