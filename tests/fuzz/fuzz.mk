# SPDX-License-Identifier: MIT
# memaccept: libFuzzer target for the memory-map validator and the bitmap (included by the Makefile).
#
#   make fuzz-build                build $(B)/fuzz/fuzz_memmap with $(FUZZCC)
#   make fuzz [FUZZ_SECONDS=600]   fuzz from tests/fuzz/seeds/; crashes land in $(B)/fuzz/
# (make test runs a 20-second smoke run of the same binary: tests/run.py --fuzz.)

FUZZ_SECONDS ?= 600
FUZZ_DIR := $(B)/fuzz
FUZZ_BIN := $(FUZZ_DIR)/fuzz_memmap
FUZZ_CORPUS := $(FUZZ_DIR)/corpus
FUZZ_SRCS := tests/fuzz/fuzz_memmap.c mm/memmap.c mm/bitmap.c lib/sort.c
# -O1 keeps the sanitizers' reports readable; -fno-sanitize-recover makes every UB a crash.
FUZZ_CFLAGS := -std=gnu11 -O1 -g -I. -DHOSTED -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all -fno-omit-frame-pointer -Wall -Wextra -Werror -Wno-unused-parameter

.PHONY: fuzz-build fuzz

fuzz-build: $(FUZZ_BIN)

$(FUZZ_BIN): $(FUZZ_SRCS) $(wildcard mm/*.h include/*.h include/panic.h lib/*.h) tests/fuzz/fuzz.mk
	@$(DEPS) fuzz
	@mkdir -p $(dir $@)
	@echo "  FUZZCC  $@"
	$(Q)$(FUZZCC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_SRCS)

# The fuzzer's own status decides the target's result; the last lines say how many inputs
# ran and whether anything was found.
fuzz: $(FUZZ_BIN)
	@mkdir -p $(FUZZ_CORPUS)
	@cp tests/fuzz/seeds/* $(FUZZ_CORPUS)/
	@echo "  FUZZ    $(FUZZ_SECONDS) s on $(FUZZ_CORPUS), log in $(FUZZ_DIR)/fuzz.log"
	@$(FUZZ_BIN) -max_len=4096 -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 \
		-artifact_prefix=$(FUZZ_DIR)/ $(FUZZ_CORPUS) > $(FUZZ_DIR)/fuzz.log 2>&1; rc=$$?; \
	tail -n 25 $(FUZZ_DIR)/fuzz.log; \
	execs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $(FUZZ_DIR)/fuzz.log); \
	if [ "$$rc" = 0 ]; then \
		echo "fuzz: $${execs:-?} executions in $(FUZZ_SECONDS) s, no findings"; \
	else \
		echo "fuzz: FAILED (status $$rc) after $${execs:-?} executions; input: $$(ls -t $(FUZZ_DIR)/crash-* $(FUZZ_DIR)/leak-* $(FUZZ_DIR)/timeout-* 2>/dev/null | head -n 1)"; \
	fi; \
	exit $$rc
