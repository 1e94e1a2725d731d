/* SPDX-License-Identifier: MIT */
/* memaccept: acceptance (mm/accept.c): which memory becomes usable, and when. */
#ifndef MM_ACCEPT_H
#define MM_ACCEPT_H

#include "mm/bitmap.h"
#include "mm/page_alloc.h"

/*
 * Accept the unaccepted units in [start, end) (2 MiB aligned) in as few platform calls
 * as contiguity allows, and add them to the free lists; units another CPU is accepting
 * are waited for, so on return no unit of the range is unaccepted or being accepted.
 * Returns the bytes this call accepted.
 */
u64 palloc_accept_range(u64 start, u64 end, enum accept_path path);
/*
 * Partial units: the unaccepted piece [start, end) of a 2 MiB unit that also holds
 * accepted memory (4 KiB aligned, inside a managed zone) never gets a bitmap bit (round
 * inward). It waits in a table of at most PALLOC_MAX_EDGES pieces, unmapped and off the
 * free lists, and is accepted on demand like a whole unit, after every whole unit
 * (palloc_accept_next) or by palloc_accept_edges. false: the table is full; the caller
 * accepts the piece at once with palloc_accept_edge.
 */
#define PALLOC_MAX_EDGES 256
bool palloc_add_edge(u64 start, u64 end);
/* Accept a partial unit's unaccepted piece now (path ACCEPT_BOOT_EDGE), add it as free memory. */
void palloc_accept_edge(u64 start, u64 end);
/* Accept every pending partial unit (eager, background); returns the bytes this call accepted. */
u64 palloc_accept_edges(enum accept_path path);
/* Is addr inside a partial unit's piece that is not accepted (pending or being accepted)? */
bool palloc_edge_unaccepted(u64 addr);
/*
 * Accept the lowest unaccepted unit or, once no whole unit is left, the lowest pending
 * partial unit; false when neither is left.
 */
bool palloc_accept_next(enum accept_path path);

/*
 * For checks while the other CPUs are quiet: the pages in every CPU's page-table
 * reserve (palloc_pt_page), at most cap of them into out; returns how many.
 */
unsigned palloc_pt_reserve_pages(u64 *out, unsigned cap);
/* What CPU `cpu` accepted (NULL for cpu >= MAX_CPUS). */
const struct palloc_cpu_stats *palloc_cpu_stats(unsigned cpu);
/* The unaccepted bitmap acceptance works from. */
const struct unaccepted_bitmap *palloc_bitmap(void);

#endif
