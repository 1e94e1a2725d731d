# SPDX-License-Identifier: MIT
# memaccept: host benchmarks (included by the Makefile).
#
#   make bench-host-bitmap   bitmap_any/bitmap_next against a bit-at-a-time loop, 256 GiB and 4 TiB
#   make bench-host-palloc   ns per alloc+free pair (orders 0, 3, 9, many live blocks), and
#                            instructions per pair under callgrind when valgrind is installed
#
# Optimised and without sanitizers: the numbers are meant to resemble the kernel's.
# BENCH_PALLOC_PAIRS sets the palloc bench's pairs per run (default 5M).

BENCH_DIR := $(B)/bench
BENCH_CFLAGS := -std=gnu11 -O2 -g -I. -DHOSTED -Wall -Wextra -Werror -Wno-unused-parameter
BENCH_BINS := $(BENCH_DIR)/bench_bitmap $(BENCH_DIR)/bench_palloc

.PHONY: bench-host-bitmap bench-host-palloc

$(BENCH_DIR)/bench_bitmap: tests/bench/bench_bitmap.c tests/bench/bench_host.c mm/bitmap.c \
		tests/bench/bench.mk $(wildcard tests/bench/*.h mm/*.h include/*.h include/panic.h lib/*.h)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	$(Q)$(HOSTCC) $(BENCH_CFLAGS) -o $@ tests/bench/bench_bitmap.c tests/bench/bench_host.c mm/bitmap.c

# The allocator and what it calls, nothing else.
PALLOC_BENCH_SRCS := mm/page_alloc.c mm/accept.c mm/bitmap.c mm/memmap.c mm/latency.c mm/policy.c \
	mm/series.c lib/string.c lib/format.c lib/sort.c

$(BENCH_DIR)/bench_palloc: tests/bench/bench_palloc.c tests/bench/bench_host.c $(PALLOC_BENCH_SRCS) \
		tests/bench/bench.mk $(wildcard tests/bench/*.h mm/*.h kernel/*.h lib/*.h include/*.h)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	$(Q)$(HOSTCC) $(BENCH_CFLAGS) -o $@ tests/bench/bench_palloc.c tests/bench/bench_host.c \
		$(PALLOC_BENCH_SRCS) -pthread

bench-host-bitmap: $(BENCH_DIR)/bench_bitmap
	@$<

# valgrind is optional: without it the table says n/a for instructions.
bench-host-palloc: $(BENCH_DIR)/bench_palloc
	@$<
