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

/* What was taken, merged into ranges, for the page allocator to leave out. */
struct early_reserved {
	u64 start, end;
};
unsigned early_reserved(const struct early_reserved **out);
u64 early_bytes(void);

#endif
