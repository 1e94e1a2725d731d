/* SPDX-License-Identifier: MIT */
/* memaccept: what the host benchmarks share: the kernel's panic() for host builds, a clock. */
#ifndef TESTS_BENCH_BENCH_HOST_H
#define TESTS_BENCH_BENCH_HOST_H

#include "include/types.h"

/* CLOCK_MONOTONIC in nanoseconds. */
u64 now_ns(void);

#endif
