/* SPDX-License-Identifier: MIT */
/* memaccept: boot-time allocations (page tables, bitmap, allocator metadata) before the page allocator exists. */
#ifndef MM_EARLY_H
#define MM_EARLY_H

#include "include/types.h"
#include "mm/memmap.h"

#define EARLY_MAX_RESERVED 32

/* Allocate from RANGE_USABLE memory of `m`: memory the firmware has already accepted. */
void early_init(const struct memmap *m);
/* Zeroed, aligned to `align` (a power of two >= 4 KiB); panics when nothing fits. */
u64 early_alloc(u64 size, u64 align);
/* Like early_alloc, but the memory is NOT zeroed: its contents are whatever was there. */
u64 early_reserve_uninit(u64 size, u64 align);
/* A zeroed page for the page tables (pt_alloc_fn). */
u64 early_alloc_page(void);
/* Stop allocating; the page allocator takes over the rest. */
void early_finish(void);

/*
 * Called with each block before it is handed out, before anything writes to it: the
 * caller may ask the platform about the memory around it (workload=conformance does, for
 * every descriptor the block comes from) and keep pages out of use with early_exclude.
 * It returns false when it excluded anything, and the allocator chooses again.
 */
void early_set_check(bool (*check)(void *ctx, u64 start, u64 end), void *ctx);
/* Never hand out [start, end): left out of the page allocator too. */
void early_exclude(u64 start, u64 end);
/*
 * For the test image's platform emulator, whose own state comes from this allocator:
 * while set, the `n` pages at `pages` are not handed out (they stay free), so that the
 * emulator's storage never lands on a page a planted firmware fault is about.
 */
void early_avoid(const u64 *pages, unsigned n);

/* What was taken, merged into ranges, for the page allocator to leave out. */
struct early_reserved {
	u64 start, end;
};
unsigned early_reserved(const struct early_reserved **out);
u64 early_bytes(void);

#endif
