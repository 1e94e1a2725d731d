/* SPDX-License-Identifier: MIT */
/* memaccept: workloads that exercise the allocator and measure allocation and acceptance. */
#ifndef KERNEL_WORKLOAD_H
#define KERNEL_WORKLOAD_H

#include "include/types.h"

enum workload_kind {
	WL_NONE,
	WL_TOUCH,	/* touch:SIZE|auto - allocate SIZE in 4 KiB pages and write each page */
};

struct workload_spec {
	u32 kind;
	bool size_auto;
	u64 size;
};

#define WORKLOAD_DEFAULT "touch:auto"

/* Parse `workload=`; on error writes a one-line reason to err and returns false. */
bool workload_parse(const char *s, struct workload_spec *w, char *err, size_t errlen);
/* Run it; returns an exit code (EXIT_OK, or EXIT_OUT_OF_MEMORY when memory ran out). */
int workload_run(const struct workload_spec *w);

#endif
