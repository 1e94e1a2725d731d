# SPDX-License-Identifier: MIT
# memaccept: host benchmark of the page allocator's fast path (included by the Makefile).
#
#   make bench-host-palloc   ns per alloc+free pair (orders 0, 3, 9, many live blocks), and
#                            instructions per pair under callgrind when valgrind is installed
#
# Same sources as the unit tests, but optimised and without sanitizers, so that the
# numbers resemble the kernel's. BENCH_PALLOC_PAIRS sets the pairs per run (default 5M).

PALLOC_BENCH_CFLAGS := -std=gnu11 -O2 -g -I. -DHOSTED -Wall -Wextra -Werror -Wno-unused-parameter

.PHONY: bench-host-palloc

# The allocator and what it calls, nothing else.
PALLOC_BENCH_SRCS := mm/page_alloc.c mm/bitmap.c mm/memmap.c mm/latency.c mm/policy.c \
	mm/series.c lib/string.c lib/format.c lib/sort.c

$(B)/bench/bench_palloc: tests/bench/bench_palloc.c $(PALLOC_BENCH_SRCS) tests/bench/palloc.mk \
		$(wildcard mm/*.h kernel/*.h lib/*.h include/*.h)
	@mkdir -p $(dir $@)
	@echo "  HOSTCC  $@"
	$(Q)$(HOSTCC) $(PALLOC_BENCH_CFLAGS) -o $@ tests/bench/bench_palloc.c $(PALLOC_BENCH_SRCS)

# valgrind is optional: without it the table says n/a for instructions.
bench-host-palloc: $(B)/bench/bench_palloc
	@$<
