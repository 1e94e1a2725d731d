/* SPDX-License-Identifier: MIT */
/* memaccept: the unaccepted-memory bitmap: one bit per 2 MiB unit, set = unaccepted. */
#ifndef MM_BITMAP_H
#define MM_BITMAP_H

#include "include/types.h"
#include "mm/memmap.h"

/*
 * The bitmap covers only the runs of whole unaccepted units: one segment per run, with
 * its own base, so memory below, between and above them costs nothing (Linux's EFI
 * unaccepted-memory table has one base and a bit for every unit up to the last). A
 * 256 GiB q35 guest with all memory above 1 GiB unaccepted has two segments,
 * [1 GiB, 2 GiB) and [4 GiB, 258 GiB).
 *
 * Every bit is set when the bitmap is built, so the words are not written then: they are
 * written a chunk (BITMAP_CHUNK_WORDS words: 4096 units, 8 GiB) at a time, the first time
 * a bit of the chunk is cleared, and until then the chunk reads as all ones inside its
 * segments. So building the bitmap of an 8 TiB guest writes 128 bytes of chunk bits, not
 * 512 KiB of words: under
 * a hypervisor that backs guest memory on its first write each page written is a host
 * fault (under QEMU's TCG, the bitmap phase of a lazy 8 TiB boot took 2.5 ms writing
 * them all and 0.4 ms now, as at 1 GiB).
 */
#define BITMAP_CHUNK_WORDS 64

struct bitmap_segment {
	u64 base;		/* address of the segment's first unit (2 MiB aligned) */
	u64 units;		/* bits in the segment */
	u64 word;		/* index of the segment's first word in words[] */
};

struct unaccepted_bitmap {
	struct bitmap_segment *segs;
	unsigned nsegs;
	u64 *words;		/* valid in the chunks marked in written[] */
	u64 *written;		/* bit c: words [c * BITMAP_CHUNK_WORDS, +BITMAP_CHUNK_WORDS) hold the bits */
	u64 nwords;
	u64 units;		/* bits in all segments */
	u64 set;		/* bits currently set: unaccepted units */
	u64 edge_bytes;		/* unaccepted bytes in partial units (no bit: see edge() below) */
};

struct bitmap_layout {
	unsigned nsegs;
	u64 nwords;
};

static inline u64 bitmap_written_words(u64 nwords)
{
	u64 chunks = (nwords + BITMAP_CHUNK_WORDS - 1) / BITMAP_CHUNK_WORDS;

	return (chunks + 63) / 64;
}

/* How much storage bitmap_build() needs for this map. */
struct bitmap_layout bitmap_layout(const struct memmap *m);
static inline u64 bitmap_storage_bytes(struct bitmap_layout l)
{
	return (l.nwords + bitmap_written_words(l.nwords)) * sizeof(u64) +
	       l.nsegs * sizeof(struct bitmap_segment);
}

/*
 * Set a bit for every unit that lies entirely inside one unaccepted range ("round
 * inward": a bit never covers accepted memory, which would allow a double accept) and
 * call edge(ctx, start, end) for every unaccepted piece outside such units, in address
 * order; the caller accepts those separately (mm/page_alloc.h palloc_add_edge).
 * `storage` holds bitmap_storage_bytes() bytes, 8-byte aligned, and need not be zeroed:
 * bitmap_build writes only the segments and one bit per chunk.
 */
void bitmap_build(struct unaccepted_bitmap *b, const struct memmap *m, void *storage,
		  void (*edge)(void *ctx, u64 start, u64 end), void *ctx);

/* Was addr inside a whole unaccepted unit when the bitmap was built (accepted since, or not)? */
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
/*
 * Clear the bit of a unit about to be accepted (it writes the unit's chunk the first
 * time: callers are serialised). Bits are never set again after bitmap_build().
 */
void bitmap_clear(struct unaccepted_bitmap *b, u64 unit);
/* Word i of segment seg as it reads now (written or not): for tests. */
u64 bitmap_word(const struct unaccepted_bitmap *b, unsigned seg, u64 i);
/* Count set bits from scratch (checks the counter; for tests and debug). */
u64 bitmap_recount(const struct unaccepted_bitmap *b);

#endif
