/* SPDX-License-Identifier: MIT */
/* memaccept: the unaccepted-memory bitmap: one bit per 2 MiB unit, set = unaccepted. */
#ifndef MM_BITMAP_H
#define MM_BITMAP_H

#include "include/types.h"
#include "mm/memmap.h"

/*
 * The bitmap covers only spans that contain unaccepted units. Like Linux's EFI
 * unaccepted-memory table it starts at a base offset, so memory below the first
 * unaccepted unit costs nothing; unlike it, a gap of BITMAP_SEGMENT_GAP or more without
 * unaccepted units starts a new segment with its own base, so holes in the middle (the
 * PCI hole below 4 GiB, or RAM at both ends of a 4 PiB address space) cost nothing
 * either. A 256 GiB q35 guest has two segments: [1 GiB, 2 GiB) and [4 GiB, 258 GiB).
 */
#define BITMAP_SEGMENT_GAP (1 * GiB)

struct bitmap_segment {
	u64 base;		/* address of the segment's first unit (2 MiB aligned) */
	u64 units;		/* bits in the segment */
	u64 word;		/* index of the segment's first word in words[] */
};

struct unaccepted_bitmap {
	struct bitmap_segment *segs;
	unsigned nsegs;
	u64 *words;
	u64 nwords;
	u64 units;		/* bits in all segments */
	u64 set;		/* bits currently set: unaccepted units */
	u64 edge_bytes;		/* unaccepted bytes in partial units (no bit: see edge() below) */
};

struct bitmap_layout {
	unsigned nsegs;
	u64 nwords;
};

/* How much storage bitmap_build() needs for this map. */
struct bitmap_layout bitmap_layout(const struct memmap *m);
static inline u64 bitmap_storage_bytes(struct bitmap_layout l)
{
	return l.nwords * sizeof(u64) + l.nsegs * sizeof(struct bitmap_segment);
}

/*
 * Set a bit for every unit that lies entirely inside one unaccepted range ("round
 * inward": a bit never covers accepted memory, which would allow a double accept) and
 * call edge(ctx, start, end) for every unaccepted piece outside such units, in address
 * order; the caller accepts those separately (mm/page_alloc.h palloc_add_edge). `storage` holds bitmap_storage_bytes() bytes, 8-byte aligned.
 */
void bitmap_build(struct unaccepted_bitmap *b, const struct memmap *m, void *storage,
		  void (*edge)(void *ctx, u64 start, u64 end), void *ctx);

/* Is addr inside a segment of the bitmap (accepted since, or not)? */
bool bitmap_covers(const struct unaccepted_bitmap *b, u64 addr);
/* Is the unit containing addr unaccepted? */
bool bitmap_test(const struct unaccepted_bitmap *b, u64 addr);
/* Does [start, end) overlap any unaccepted unit? Word at a time. */
bool bitmap_any(const struct unaccepted_bitmap *b, u64 start, u64 end);
/* The first unaccepted unit whose end lies above `from`; false if none. Word at a time. */
bool bitmap_next(const struct unaccepted_bitmap *b, u64 from, u64 *unit);
/* Number of unaccepted units (kept as a counter). */
static inline u64 bitmap_count(const struct unaccepted_bitmap *b)
{
	return b->set;
}
/* Clear the bit of an accepted unit. Bits are never set again after bitmap_build(). */
void bitmap_clear(struct unaccepted_bitmap *b, u64 unit);
/* Count set bits from scratch (checks the counter; for tests and debug). */
u64 bitmap_recount(const struct unaccepted_bitmap *b);

#endif
