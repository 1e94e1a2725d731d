# SPDX-License-Identifier: MIT
# memaccept: libFuzzer targets (included by the Makefile):
#   fuzz_accept  memory map -> bitmap and partial units -> allocator -> allocate everything,
#                against a reference model (tests/fuzz/fuzz_accept.c)
#   fuzz_memmap  the memory-map validator and the bitmap (tests/fuzz/fuzz_memmap.c)
#   fuzz_vc_insn the SNP #VC check: exit code against the bytes at RIP (tests/fuzz/fuzz_vc_insn.c)
#   fuzz_psc     the SNP Page State Change protocol and PVALIDATE answers against a hostile
#                hypervisor (tests/fuzz/fuzz_psc.c)
#   fuzz_ve      the TDX #VE check and its TDVMCALL emulation against a hostile VMM
#                (tests/fuzz/fuzz_ve.c)
#   fuzz_mailbox waking APs through the ACPI wakeup mailbox against a firmware and a clock
#                the input drives (tests/fuzz/fuzz_mailbox.c)
#   fuzz_acpi    the host's ACPI tables: RSDP/XSDT/MADT/FADT walk, PM timer, wakeup mailbox
#                checks (tests/fuzz/fuzz_acpi.c)
#
#   make fuzz-build     build them all with $(FUZZCC)
#   make fuzz           fuzz_accept for FUZZ_ACCEPT_RUNS inputs (at most FUZZ_ACCEPT_SECONDS),
#                       then fuzz_memmap for FUZZ_SECONDS, then each parser of host input
#                       (fuzz_psc, fuzz_acpi, fuzz_ve, fuzz_mailbox, fuzz_vc_insn) for
#                       FUZZ_HOST_RUNS inputs (at most FUZZ_HOST_SECONDS each); crashes
#                       land in $(B)/fuzz/
# (make test runs a short smoke run of each: tests/run.py --fuzz.)

FUZZ_SECONDS ?= 300
FUZZ_ACCEPT_RUNS ?= 10000000
FUZZ_ACCEPT_SECONDS ?= 3600
# The parsers of host input: 10^7 inputs each.
FUZZ_HOST_RUNS ?= 10000000
FUZZ_HOST_SECONDS ?= 3600
FUZZ_DIR := $(B)/fuzz
FUZZ_MEMMAP_BIN := $(FUZZ_DIR)/fuzz_memmap
FUZZ_ACCEPT_BIN := $(FUZZ_DIR)/fuzz_accept
FUZZ_VC_BIN := $(FUZZ_DIR)/fuzz_vc_insn
FUZZ_ACPI_BIN := $(FUZZ_DIR)/fuzz_acpi
FUZZ_PSC_BIN := $(FUZZ_DIR)/fuzz_psc
FUZZ_VE_BIN := $(FUZZ_DIR)/fuzz_ve
FUZZ_MAILBOX_BIN := $(FUZZ_DIR)/fuzz_mailbox
# All: `make test` hands every one to tests/run.py --fuzz.
FUZZ_BIN := $(FUZZ_ACCEPT_BIN) $(FUZZ_MEMMAP_BIN) $(FUZZ_ACPI_BIN) $(FUZZ_PSC_BIN) $(FUZZ_VC_BIN) \
	$(FUZZ_VE_BIN) $(FUZZ_MAILBOX_BIN)
FUZZ_VC_SRCS := tests/fuzz/fuzz_vc_insn.c arch/x86/sev/vc_insn.c lib/string.c
FUZZ_VE_SRCS := tests/fuzz/fuzz_ve.c arch/x86/tdx/ve_emul.c arch/x86/sev/vc_insn.c lib/string.c
FUZZ_MAILBOX_SRCS := tests/fuzz/fuzz_mailbox.c arch/x86/mp_mailbox.c
FUZZ_MEMMAP_SRCS := tests/fuzz/fuzz_memmap.c mm/memmap.c mm/bitmap.c lib/sort.c
FUZZ_ACPI_SRCS := tests/fuzz/fuzz_acpi.c arch/x86/acpi_walk.c arch/x86/acpi.c kernel/mp_wakeup.c kernel/smp_ids.c \
	lib/string.c
FUZZ_PSC_SRCS := tests/fuzz/fuzz_psc.c arch/x86/sev/psc.c mm/probe_model.c lib/string.c
# fuzz_accept.c includes mm/early.c itself (over its fake physical memory).
FUZZ_ACCEPT_SRCS := tests/fuzz/fuzz_accept.c mm/memmap.c mm/bitmap.c mm/page_alloc.c mm/accept.c \
	mm/latency.c mm/series.c mm/policy.c lib/sort.c
FUZZ_HDRS := $(wildcard mm/*.h include/*.h lib/*.h arch/x86/*.h kernel/*.h) mm/early.c tests/fuzz/fuzz.h tests/fuzz/fuzz.mk
# -O1 keeps the sanitizers' reports readable; -fno-sanitize-recover makes every UB a crash.
FUZZ_CFLAGS := -std=gnu11 -O1 -g -I. -DHOSTED -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter
# fuzz_accept without comparison tracing and with libFuzzer's plain (not entropic) input
# schedule: they cost about a third and a fifth of its runs, and the planted bugs of
# tests/README.md were found as fast without them.
FUZZ_ACCEPT_CFLAGS := $(FUZZ_CFLAGS) -fno-sanitize-coverage=trace-cmp
FUZZ_ACCEPT_FLAGS := -entropic=0
# fuzz_psc without comparison tracing too: psc.c compares every entry of a request with
# what it sent after each exit, and tracing those compares was 60% of the run (callgrind);
# the planted bugs of tests/README.md were still found (times there).
FUZZ_PSC_CFLAGS := $(FUZZ_CFLAGS) -fno-sanitize-coverage=trace-cmp

.PHONY: fuzz-build fuzz

fuzz-build: $(FUZZ_BIN)

$(FUZZ_MEMMAP_BIN): $(FUZZ_MEMMAP_SRCS) $(FUZZ_HDRS)
	@$(DEPS) fuzz
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZCC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_MEMMAP_SRCS)

$(FUZZ_VC_BIN): $(FUZZ_VC_SRCS) $(FUZZ_HDRS) arch/x86/sev/vc_insn.h arch/x86/sev/snp.h
	@$(DEPS) fuzz
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZCC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_VC_SRCS)

$(FUZZ_VE_BIN): $(FUZZ_VE_SRCS) $(FUZZ_HDRS) arch/x86/tdx/ve_emul.h arch/x86/tdx/tdx.h arch/x86/sev/vc_insn.h
	@$(DEPS) fuzz
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZCC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_VE_SRCS)

$(FUZZ_MAILBOX_BIN): $(FUZZ_MAILBOX_SRCS) $(FUZZ_HDRS)
	@$(DEPS) fuzz
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZCC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_MAILBOX_SRCS)

$(FUZZ_ACCEPT_BIN): $(FUZZ_ACCEPT_SRCS) $(FUZZ_HDRS)
	@$(DEPS) fuzz
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZCC) $(FUZZ_ACCEPT_CFLAGS) -o $@ $(FUZZ_ACCEPT_SRCS)

$(FUZZ_ACPI_BIN): $(FUZZ_ACPI_SRCS) $(FUZZ_HDRS)
	@$(DEPS) fuzz
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZCC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_ACPI_SRCS)

$(FUZZ_PSC_BIN): $(FUZZ_PSC_SRCS) $(FUZZ_HDRS)
	@$(DEPS) fuzz
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZCC) $(FUZZ_PSC_CFLAGS) -o $@ $(FUZZ_PSC_SRCS)

# run_fuzz NAME BINARY SEEDS MAX_LEN LIBFUZZER_LIMITS: one target from its committed seeds;
# the last lines say how many inputs ran, how fast, and whether anything was found.
define run_fuzz
	mkdir -p $(FUZZ_DIR)/corpus-$(1); cp $(3)/* $(FUZZ_DIR)/corpus-$(1)/; \
	echo "  FUZZ    $(1): $(5), log in $(FUZZ_DIR)/fuzz-$(1).log"; \
	t0=$$(date +%s); \
	$(2) -max_len=$(4) $(5) -print_final_stats=1 -artifact_prefix=$(FUZZ_DIR)/$(1)- \
		$(FUZZ_DIR)/corpus-$(1) > $(FUZZ_DIR)/fuzz-$(1).log 2>&1; rc=$$?; \
	secs=$$(( $$(date +%s) - t0 )); \
	tail -n 8 $(FUZZ_DIR)/fuzz-$(1).log; \
	execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_DIR)/fuzz-$(1).log); \
	if [ "$$rc" = 0 ]; then \
		echo "fuzz $(1): $${execs:-?} inputs in $$secs s ($$(( $${execs:-0} / ($$secs + 1) )) per s), no findings"; \
	else \
		echo "fuzz $(1): FAILED (status $$rc) after $${execs:-?} inputs; input: $$(ls -t $(FUZZ_DIR)/$(1)-* 2>/dev/null | head -n 1)"; \
		status=1; \
	fi
endef

# The fuzzers' own status decides the target's result.
fuzz: $(FUZZ_BIN)
	@status=0; \
	$(call run_fuzz,accept,$(FUZZ_ACCEPT_BIN),tests/fuzz/seeds-accept,1024,$(FUZZ_ACCEPT_FLAGS) -runs=$(FUZZ_ACCEPT_RUNS) -max_total_time=$(FUZZ_ACCEPT_SECONDS)); \
	$(call run_fuzz,memmap,$(FUZZ_MEMMAP_BIN),tests/fuzz/seeds,4096,-max_total_time=$(FUZZ_SECONDS)); \
	$(call run_fuzz,psc,$(FUZZ_PSC_BIN),tests/fuzz/seeds-psc,512,-runs=$(FUZZ_HOST_RUNS) -max_total_time=$(FUZZ_HOST_SECONDS)); \
	$(call run_fuzz,acpi,$(FUZZ_ACPI_BIN),tests/fuzz/seeds-acpi,16384,-runs=$(FUZZ_HOST_RUNS) -max_total_time=$(FUZZ_HOST_SECONDS)); \
	$(call run_fuzz,ve,$(FUZZ_VE_BIN),tests/fuzz/seeds-ve,256,-runs=$(FUZZ_HOST_RUNS) -max_total_time=$(FUZZ_HOST_SECONDS)); \
	$(call run_fuzz,mailbox,$(FUZZ_MAILBOX_BIN),tests/fuzz/seeds-mailbox,1024,-runs=$(FUZZ_HOST_RUNS) -max_total_time=$(FUZZ_HOST_SECONDS)); \
	$(call run_fuzz,vc_insn,$(FUZZ_VC_BIN),tests/fuzz/seeds-vc,32,-runs=$(FUZZ_HOST_RUNS) -max_total_time=$(FUZZ_HOST_SECONDS)); \
	exit $$status
