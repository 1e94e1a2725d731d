# SPDX-License-Identifier: MIT
# memaccept: host benchmarks (included by the Makefile).
#
#   make bench-host-bitmap   bitmap_any/bitmap_next against a bit-at-a-time loop, 256 GiB and 4 TiB

BENCH_DIR := $(B)/bench
# Optimised and without sanitizers: the numbers are meant to resemble the kernel's.
BENCH_CFLAGS := -std=gnu11 -O2 -g -I. -DHOSTED -Wall -Wextra -Werror -Wno-unused-parameter

.PHONY: bench-host-bitmap

$(BENCH_DIR)/bench_bitmap: tests/bench/bench_bitmap.c mm/bitmap.c $(wildcard mm/*.h include/*.h kernel/panic.h lib/string.h) tests/bench/bench.mk
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	$(Q)$(HOSTCC) $(BENCH_CFLAGS) -o $@ tests/bench/bench_bitmap.c mm/bitmap.c

bench-host-bitmap: $(BENCH_DIR)/bench_bitmap
	@$<
