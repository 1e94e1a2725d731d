/* SPDX-License-Identifier: MIT */
/* memaccept: workload=probe[:SIZE]: the platform's acceptance primitives, timed, and a model of one unit. */
#ifndef KERNEL_PROBE_H
#define KERNEL_PROBE_H

#include "include/types.h"

/* Without :SIZE the probe may use this much unaccepted memory (it stops once every distribution is full). */
#define PROBE_DEFAULT_BUDGET (1024ULL * 1024 * 1024)

/*
 * Time each primitive at least PROBE_MIN_SAMPLES times, accepting at most budget bytes
 * of unaccepted memory (whole units, through the allocator: nothing is accepted twice
 * and nothing is given back), and print the `probe` event. Returns EXIT_OK.
 */
int probe_run(u64 budget);

#endif
