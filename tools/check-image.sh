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
# No unresolved symbols may survive into the image.
undef=$(echo "$syms" | awk '$1 == "U" {print $2}' | head -5)
[ -z "$undef" ] || fail "undefined symbols: $undef"
exit 0
