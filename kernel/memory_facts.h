/* SPDX-License-Identifier: MIT */
/* memaccept: what memory bring-up (memory.c) records for its reports (memory_report.c). */
#ifndef KERNEL_MEMORY_FACTS_H
#define KERNEL_MEMORY_FACTS_H

#include "mm/bitmap.h"

/* Platform counters tracked per partial unit (left out of the per-GiB figures). */
#define MAX_PLATFORM_COUNTERS 32

struct memory_facts {
	const struct unaccepted_bitmap *bitmap;
	/* The bitmap as built, for its report after `ready` (eager has cleared it by then). */
	u64 bitmap_bytes, unaccepted_at_build;
	unsigned edges;			/* partial units found */
	u64 edges_at_boot;		/* of which accepted at boot: the allocator's table was full */
	u64 edge_bytes_at_ready;	/* partial-unit bytes accepted by `ready` */
	u64 map_ns_total;		/* time spent mapping accepted memory, inside the accept times */
	/*
	 * Platform calls made for partial units (accepted 4 KiB at a time), left out of the
	 * per-GiB figures of whole units. Taken as the counters' change around each edge's
	 * accept: exact while no other CPU accepts at the same time (at boot, lazy, eager,
	 * which takes the edges after the APs finished); background APs may add a few of
	 * their own unit calls to it.
	 */
	u64 edge_counters[MAX_PLATFORM_COUNTERS];
};

extern struct memory_facts memory_facts;

#endif
