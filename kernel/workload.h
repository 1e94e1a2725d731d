/* SPDX-License-Identifier: MIT */
/* memaccept: workloads that exercise the allocator and measure allocation and acceptance. */
#ifndef KERNEL_WORKLOAD_H
#define KERNEL_WORKLOAD_H

#include "include/types.h"

enum workload_kind {
	WL_NONE,
	WL_TOUCH,	/* touch:SIZE|auto - allocate SIZE in 4 KiB pages, write each page */
	WL_ALLOC2M,	/* alloc2m:SIZE - allocate SIZE in 2 MiB blocks, write each block */
	WL_MIX,		/* mix:OPS[:SEED] - random allocations (4 KiB..2 MiB) and frees */
	WL_BANDWIDTH,	/* bandwidth:SIZE - write bandwidth of memory that is already accepted */
	WL_PTOUCH,	/* ptouch:SIZE - every started vCPU touches its share of SIZE at once */
	WL_CONFORMANCE,	/* conformance - judge what the firmware handed over (kernel/conformance.c) */
	WL_WAIT,	/* wait:MS - busy-wait MS milliseconds by the TSC clock (checks the clock) */
	WL_PROBE,	/* probe[:SIZE] - time the platform's acceptance primitives (kernel/probe.c) */
};

struct workload_step {
	u32 kind;
	bool size_auto;
	u64 size;	/* bytes (touch, alloc2m, bandwidth; probe: its budget) */
	u64 ops;	/* mix */
	u64 seed;	/* mix */
	u64 ms;		/* wait */
};

#define WORKLOAD_MAX_STEPS 8

/* workload=A,B,C runs the steps in order in one boot. */
struct workload_spec {
	unsigned nsteps;
	struct workload_step steps[WORKLOAD_MAX_STEPS];
};

#define WORKLOAD_DEFAULT "touch:auto"

/* Parse `workload=`; on error writes a one-line reason to err and returns false. */
bool workload_parse(const char *s, struct workload_spec *w, char *err, size_t errlen);
/* Run the steps; returns an exit code (EXIT_OK, or EXIT_OUT_OF_MEMORY when memory ran out). */
int workload_run(const struct workload_spec *w);

#endif
