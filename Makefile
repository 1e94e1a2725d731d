# SPDX-License-Identifier: MIT
# memaccept: one Makefile for the images, the host tests, QEMU runs and benchmarks.

ifeq ($(origin CC),default)
CC := gcc
endif
ifeq ($(origin LD),default)
LD := ld.lld
endif
NASM ?= nasm
QEMU ?= qemu-system-x86_64
OVMF_CODE ?= /usr/share/OVMF/OVMF_CODE_4M.fd
OVMF_VARS ?= /usr/share/OVMF/OVMF_VARS_4M.fd
# Debian's interpreter: it is the one python3-matplotlib installs into.
PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo python3)
HOSTCC ?= gcc
FUZZCC ?= clang

# make run / make debug / make image settings.
MEM ?= 4G
SMP ?= 1
IMAGE ?= prod
ARGS ?= fake_unaccepted_start=1G
TIMEOUT ?= 600

B := build
# V=1 shows the full commands.
Q := $(if $(V),,@)
DEPS := tools/deps.sh

# ---------------------------------------------------------------- kernel sources
COMMON_SRCS := $(wildcard boot/*.c kernel/*.c mm/*.c arch/x86/*.c arch/x86/tdx/*.c \
	arch/x86/sev/*.c drivers/*.c lib/*.c)
COMMON_ASM := $(wildcard boot/*.asm arch/x86/*.asm arch/x86/tdx/*.asm arch/x86/sev/*.asm)
# Only in memaccept-test.efi: in-guest test cases and the platform emulator.
TEST_SRCS := $(wildcard kernel/tests/*.c arch/x86/emu/*.c boot/test/*.c)
TEST_ASM := $(wildcard arch/x86/emu/*.asm)

# -Os: the boot runs almost every line of the kernel once, and under QEMU's TCG a first
# execution costs a translation (memmap_parse: 1.1 ms the first time, 0.08 ms the
# second), so time to ready follows code size there; the hot paths are rep stos and a
# few hundred instructions either way.
KCFLAGS := -std=gnu11 -Os -g -I. \
	-ffreestanding -fno-builtin -fno-stack-protector -fno-stack-check \
	-fpie -fvisibility=hidden -mno-red-zone -mgeneral-regs-only \
	-fno-asynchronous-unwind-tables -fno-omit-frame-pointer \
	-fno-tree-loop-distribute-patterns -fshort-wchar \
	-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter -MMD -MP
# GNU-EFI headers only for boot/, which is the only EFI-aware code.
EFI_CFLAGS := -isystem /usr/include/efi -isystem /usr/include/efi/x86_64 -DGNU_EFI_USE_MS_ABI
PROD_DEFS :=
TEST_DEFS := -DCONFIG_TEST_IMAGE -DCONFIG_EMULATOR

# Static PIE at address 0 (see linker.ld); --orphan-handling=error makes every input
# section land somewhere on purpose; -z text refuses relocations in code.
LDFLAGS := -T linker.ld -pie --no-dynamic-linker -nostdlib -z text -z norelro \
	-z max-page-size=0x1000 --build-id=none --orphan-handling=error

PROD_OBJS := $(patsubst %,$(B)/prod/%.o,$(COMMON_SRCS) $(COMMON_ASM))
TEST_OBJS := $(patsubst %,$(B)/test/%.o,$(COMMON_SRCS) $(COMMON_ASM) $(TEST_SRCS) $(TEST_ASM))

.PHONY: all deps-build deps-run deps-test prod test-image run debug test unit qemu-test bench \
	image report clean fuzz conformance
all: $(B)/memaccept.efi $(B)/memaccept-test.efi

deps-build:
	@$(DEPS) build
deps-run: deps-build
	@$(DEPS) run
deps-test: deps-run
	@$(DEPS) test image report fuzz

$(B)/.deps-build: $(DEPS)
	@$(DEPS) build
	@mkdir -p $(B) && touch $@

# Rebuild when the flags change, not only when sources do.
FLAGS_prod := $(CC) $(KCFLAGS) $(PROD_DEFS) $(EFI_CFLAGS) $(NASM)
FLAGS_test := $(CC) $(KCFLAGS) $(TEST_DEFS) $(EFI_CFLAGS) $(NASM)
$(B)/%/.flags: FORCE
	@mkdir -p $(dir $@)
	@echo '$(FLAGS_$*)' | cmp -s - $@ || echo '$(FLAGS_$*)' > $@
.PHONY: FORCE
.PRECIOUS: $(B)/%/.flags

$(B)/prod/%.c.o: %.c $(B)/.deps-build $(B)/prod/.flags
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(KCFLAGS) $(PROD_DEFS) $(if $(filter boot/%,$<),$(EFI_CFLAGS)) -c $< -o $@
$(B)/test/%.c.o: %.c $(B)/.deps-build $(B)/test/.flags
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(KCFLAGS) $(TEST_DEFS) $(if $(filter boot/%,$<),$(EFI_CFLAGS)) -c $< -o $@
$(B)/prod/%.asm.o: %.asm $(B)/.deps-build $(B)/prod/.flags
	@mkdir -p $(dir $@)
	@echo "  NASM    $@"
	$(Q)$(NASM) -f elf64 -g -MD $@.d -o $@ $<
$(B)/test/%.asm.o: %.asm $(B)/.deps-build $(B)/test/.flags
	@mkdir -p $(dir $@)
	@echo "  NASM    $@"
	$(Q)$(NASM) -f elf64 -g -DCONFIG_TEST_IMAGE -MD $@.d -o $@ $<

# The .elf keeps symbols and debug info (the debug file); the .efi is what firmware loads.
$(B)/memaccept.elf: $(PROD_OBJS) linker.ld
	@echo "  LD      $@"
	$(Q)$(LD) $(LDFLAGS) -o $@ $(PROD_OBJS)
$(B)/memaccept-test.elf: $(TEST_OBJS) linker.ld
	@echo "  LD      $@"
	$(Q)$(LD) $(LDFLAGS) -o $@ $(TEST_OBJS)
$(B)/%.efi: $(B)/%.elf tools/elf2efi.py tools/check-image.sh
	$(PYTHON) tools/elf2efi.py $< $@
	@sh tools/check-image.sh $< $(if $(findstring -test,$@),test,prod)

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# ---------------------------------------------------------------- running
IMAGE_EFI = $(if $(filter test,$(IMAGE)),$(B)/memaccept-test.efi,$(B)/memaccept.efi)
RUNQEMU = $(PYTHON) tools/runqemu.py --qemu $(QEMU) --ovmf-code $(OVMF_CODE) --ovmf-vars $(OVMF_VARS)

# The test image boots under the instruction observer (OBSERVER=0: without it).
OBSERVER ?= 1
OBSERVER_SO := $(B)/observer.so
RUN_OBSERVER = $(if $(and $(filter test,$(IMAGE)),$(filter 1,$(OBSERVER))),$(OBSERVER_SO))

run: deps-run $(IMAGE_EFI) $(RUN_OBSERVER)
	@$(RUNQEMU) --efi $(IMAGE_EFI) --mem $(MEM) --smp $(SMP) --timeout $(TIMEOUT) --args "$(ARGS)" \
		$(if $(RUN_OBSERVER),--observer $(RUN_OBSERVER))

# The instruction observer: a QEMU TCG plugin, host code (tools/observer/observer.c).
$(OBSERVER_SO): tools/observer/observer.c arch/x86/observer.h arch/x86/emu/traps.h $(B)/.deps-build
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	$(Q)$(HOSTCC) -std=gnu11 -O2 -g -I. -shared -fPIC -fvisibility=hidden -Wall -Wextra -Werror \
		-o $@ $<

# QEMU stops before the first instruction and waits for gdb on :1234.
debug: deps-run $(IMAGE_EFI)
	@echo "gdb $(IMAGE_EFI:.efi=.elf), then: target remote :1234; the kernel prints its image base;"
	@echo "add-symbol-file $(IMAGE_EFI:.efi=.elf) -o <image base>"
	@$(RUNQEMU) --efi $(IMAGE_EFI) --mem $(MEM) --smp $(SMP) --timeout 0 --args "$(ARGS)" --gdb

# A GPT disk image with an EFI system partition: boots as a plain disk on any UEFI VM.
image: $(B)/memaccept.img
$(B)/memaccept.img: $(B)/memaccept.efi tools/mkimage.sh
	@$(DEPS) image
	sh tools/mkimage.sh $< "$(ARGS)" $@

# ---------------------------------------------------------------- tests
# test_*_smp.c run threads: ThreadSanitizer instead of ASan (the two cannot be combined).
UNIT_TSAN_SRCS := $(wildcard tests/unit/test_*_smp.c)
UNIT_SRCS := $(filter-out $(UNIT_TSAN_SRCS),$(wildcard tests/unit/test_*.c))
UNIT_BINS := $(patsubst tests/unit/%.c,$(B)/unit/%,$(UNIT_SRCS) $(UNIT_TSAN_SRCS))
# The pure-logic sources the unit tests link against, built for the host with sanitizers.
UNIT_LIB_SRCS := mm/memmap.c mm/bitmap.c mm/page_alloc.c mm/accept.c mm/latency.c mm/policy.c mm/series.c mm/probe_model.c \
	kernel/cmdline.c lib/format.c lib/string.c lib/sort.c arch/x86/tdx/accept.c arch/x86/tdx/guest_abi.c \
	arch/x86/emu/decode.c \
	arch/x86/emu/faults.c arch/x86/emu/model.c arch/x86/sev/psc.c arch/x86/sev/svsm.c arch/x86/sev/vmsa.c arch/x86/sev/vc_insn.c \
	kernel/conformance.c arch/x86/acpi_walk.c kernel/mp_wakeup.c \
	arch/x86/acpi.c arch/x86/tsc_cal.c arch/x86/paging.c
# Every header a unit test may include: a changed constant must rebuild the tests that check it.
UNIT_HDRS := $(wildcard mm/*.h kernel/*.h lib/*.h include/*.h arch/x86/*.h arch/x86/*/*.h drivers/*.h)
UNIT_CFLAGS := -std=gnu11 -O1 -g -I. -DHOSTED -fsanitize=address,undefined \
	-fno-sanitize-recover=all -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter

$(B)/unit/%: tests/unit/%.c tests/unit/unit.h tests/unit/unit.c $(UNIT_LIB_SRCS) $(UNIT_HDRS)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	$(Q)$(HOSTCC) $(UNIT_CFLAGS) -o $@ $< tests/unit/unit.c $(UNIT_LIB_SRCS)

UNIT_TSAN_CFLAGS := $(filter-out -fsanitize=%,$(UNIT_CFLAGS)) -fsanitize=thread -pthread
$(patsubst tests/unit/%.c,$(B)/unit/%,$(UNIT_TSAN_SRCS)): $(B)/unit/%: tests/unit/%.c tests/unit/unit.h \
		tests/unit/unit.c $(UNIT_LIB_SRCS) $(UNIT_HDRS)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@ (ThreadSanitizer)"
	$(Q)$(HOSTCC) $(UNIT_TSAN_CFLAGS) -o $@ $< tests/unit/unit.c $(UNIT_LIB_SRCS)

unit: $(UNIT_BINS)

# Fuzzing and host benchmarks (before `test`, which needs $(FUZZ_BIN) defined).
-include $(wildcard tests/fuzz/*.mk tests/bench/*.mk)

# Everything: host unit tests, QEMU cases from tests/qemu/manifest.toml, host tool tests.
# The host benchmarks are built (not run) so that they cannot rot unnoticed.
test: deps-test all $(UNIT_BINS) $(B)/memaccept.img $(FUZZ_BIN) $(BENCH_BINS) $(OBSERVER_SO)
	@$(PYTHON) tests/run.py --qemu $(QEMU) --ovmf-code $(OVMF_CODE) --ovmf-vars $(OVMF_VARS) \
		--unit $(UNIT_BINS) --fuzz $(FUZZ_BIN) --observer $(OBSERVER_SO)

# The QEMU measurement matrix (tools/bench.py): build/bench/report.md, results.json, logs,
# PNGs. BENCH_ARGS="--quick" for a short trial run, "--jobs N" for N boots at a time.
bench: deps-run $(B)/memaccept.efi
	@$(DEPS) report
	@$(PYTHON) tools/bench.py --qemu $(QEMU) --ovmf-code $(OVMF_CODE) --ovmf-vars $(OVMF_VARS) $(BENCH_ARGS)

# Compare boots from their console logs: make report LOG="a.log lazy=b.log ..."
report:
	@test -n "$(LOG)" || { echo 'make report: set LOG="FILE ..." (console logs, LABEL=FILE to name one), e.g. LOG="build/bench/logs/b-*.log"' >&2; exit 2; }
	@$(DEPS) report
	@$(PYTHON) tools/report.py --markdown $(B)/report/report.md --plots $(B)/report $(LOG)

# Firmware conformance (docs/firmware.md): boot the production image with
# workload=conformance and print one verdict per rule; build/conformance/ keeps the console
# and a Markdown copy. OVMF_CODE/OVMF_VARS pick the firmware, MACHINE adds q35 properties
# (MACHINE=max-ram-below-4g=1G), CONFORMANCE_ARGS adds options.
CONFORMANCE_DIR := $(B)/conformance
conformance: deps-run $(B)/memaccept.efi
	@mkdir -p $(CONFORMANCE_DIR)
	@echo "conformance: $(OVMF_CODE), $(MEM) RAM$(if $(MACHINE), $(MACHINE))"
	@$(RUNQEMU) --efi $(B)/memaccept.efi --mem $(MEM) --smp $(SMP) --timeout $(TIMEOUT) \
		--args "workload=conformance $(CONFORMANCE_ARGS)" --log $(CONFORMANCE_DIR)/console.log \
		$(if $(MACHINE),-- -machine $(MACHINE)) > $(CONFORMANCE_DIR)/runqemu.out 2>&1 || \
		{ tail -20 $(CONFORMANCE_DIR)/runqemu.out; exit 1; }
	@$(PYTHON) tools/report.py --conformance --markdown $(CONFORMANCE_DIR)/report.md \
		$(CONFORMANCE_DIR)/console.log

clean:
	rm -rf $(B)

