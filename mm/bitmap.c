/* SPDX-License-Identifier: MIT */
/* memaccept: building and querying the unaccepted bitmap (pure logic, host-tested and fuzzed). */
#include "include/panic.h"
#include "lib/bits.h"
#include "lib/string.h"
#include "mm/bitmap.h"

#define WORD_BITS 64

/* Full units of an unaccepted range: [*lo, *hi), empty when lo >= hi. */
static void full_units(const struct mem_range *r, u64 *lo, u64 *hi)
{
	*lo = r->start > ALIGN_DOWN(UINT64_MAX, UNIT_SIZE) ? UINT64_MAX : ALIGN_UP(r->start, UNIT_SIZE);
	*hi = ALIGN_DOWN(r->end, UNIT_SIZE);
}

/*
 * Walk the runs of whole unaccepted units in address order: one segment each (two
 * ranges whose whole units touch make one run). Calls seg(ctx, base, end) once per
 * segment; used both to size and to build.
 */
static void for_each_segment(const struct memmap *m, void (*seg)(void *ctx, u64 base, u64 end),
			     void *ctx)
{
	u64 base = 0, end = 0;
	bool open = false;

	for (unsigned i = 0; i < m->nranges; i++) {
		u64 lo, hi;

		if (m->ranges[i].kind != RANGE_UNACCEPTED)
			continue;
		full_units(&m->ranges[i], &lo, &hi);
		if (lo >= hi)
			continue;
		if (open && lo != end) {
			seg(ctx, base, end);
			open = false;
		}
		if (!open) {
			base = lo;
			open = true;
		}
		end = hi;
	}
	if (open)
		seg(ctx, base, end);
}

static void count_segment(void *ctx, u64 base, u64 end)
{
	struct bitmap_layout *l = ctx;

	l->nsegs++;
	l->nwords += (((end - base) >> UNIT_SHIFT) + WORD_BITS - 1) / WORD_BITS;
}

struct bitmap_layout bitmap_layout(const struct memmap *m)
{
	struct bitmap_layout l = { 0, 0 };

	for_each_segment(m, count_segment, &l);
	return l;
}

static void add_segment(void *ctx, u64 base, u64 end)
{
	struct unaccepted_bitmap *b = ctx;
	struct bitmap_segment *s = &b->segs[b->nsegs++];

	s->base = base;
	s->units = (end - base) >> UNIT_SHIFT;
	s->word = b->nwords;
	b->nwords += (s->units + WORD_BITS - 1) / WORD_BITS;
	b->units += s->units;
}

/* The segment that contains addr, or the first one after it (NULL: none). */
static const struct bitmap_segment *seg_at_or_after(const struct unaccepted_bitmap *b, u64 addr)
{
	unsigned lo = 0, hi = b->nsegs;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		const struct bitmap_segment *s = &b->segs[mid];

		if (s->base + (s->units << UNIT_SHIFT) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nsegs ? &b->segs[lo] : NULL;
}

/* ---- chunks: words are written the first time a bit of theirs is cleared (bitmap.h) */

static bool chunk_written(const struct unaccepted_bitmap *b, u64 chunk)
{
	/* Acquire: a reader that sees the bit sees the words written before it. */
	return (__atomic_load_n(&b->written[chunk / 64], __ATOMIC_ACQUIRE) >> (chunk % 64)) & 1;
}

/* Word i of segment s before any bit of it was cleared: every unit of the segment set. */
static u64 word_as_built(const struct bitmap_segment *s, u64 i)
{
	u64 left = s->units - i * WORD_BITS;

	return left >= WORD_BITS ? ~0ULL : (1ULL << left) - 1;
}

/* Word i of segment s as it reads now. */
static u64 word_at(const struct unaccepted_bitmap *b, const struct bitmap_segment *s, u64 i)
{
	u64 w = s->word + i;

	if (!chunk_written(b, w / BITMAP_CHUNK_WORDS))
		return word_as_built(s, i);
	return __atomic_load_n(&b->words[w], __ATOMIC_RELAXED);
}

/* Write the chunk holding word w: each of its words as built, then mark it written. */
static void chunk_write(struct unaccepted_bitmap *b, u64 w)
{
	u64 chunk = w / BITMAP_CHUNK_WORDS;
	u64 first = chunk * BITMAP_CHUNK_WORDS, last = MIN(first + BITMAP_CHUNK_WORDS, b->nwords);

	/* Segments are in word order, each with at least one word: walk those in the chunk. */
	for (const struct bitmap_segment *s = b->segs; s < b->segs + b->nsegs; s++) {
		u64 s_end = s->word + (s->units + WORD_BITS - 1) / WORD_BITS;

		for (u64 i = MAX(first, s->word); i < MIN(last, s_end); i++)
			b->words[i] = word_as_built(s, i - s->word);
	}
	__atomic_fetch_or(&b->written[chunk / 64], 1ULL << (chunk % 64), __ATOMIC_RELEASE);
}

/*
 * An unaccepted piece outside the whole units, reported once per 2 MiB unit it touches:
 * the allocator keeps partial units one unit at a time. A short range can cross a unit
 * boundary without holding a whole unit (OVMF's allocations leave such ranges: 16 vCPUs
 * on 2 GiB, [0x7dbfa000, 0x7dc16000)).
 */
static void add_edge(struct unaccepted_bitmap *b, u64 start, u64 end,
		     void (*edge)(void *ctx, u64 start, u64 end), void *ctx)
{
	b->edge_bytes += end - start;
	while (start < end) {
		u64 stop = MIN(end, ALIGN_DOWN(start, UNIT_SIZE) + UNIT_SIZE);

		if (edge)
			edge(ctx, start, stop);
		start = stop;
	}
}

void bitmap_build(struct unaccepted_bitmap *b, const struct memmap *m, void *storage,
		  void (*edge)(void *ctx, u64 start, u64 end), void *ctx)
{
	struct bitmap_layout l = bitmap_layout(m);

	memset(b, 0, sizeof(*b));
	b->segs = storage;
	b->written = (u64 *)(b->segs + l.nsegs);
	b->words = b->written + bitmap_written_words(l.nwords);
	for_each_segment(m, add_segment, b);
	/* No chunk written: every unit of every segment reads as set. */
	memset(b->written, 0, bitmap_written_words(b->nwords) * sizeof(u64));
	b->set = b->units;

	for (unsigned i = 0; i < m->nranges; i++) {
		const struct mem_range *r = &m->ranges[i];
		u64 lo, hi;

		if (r->kind != RANGE_UNACCEPTED)
			continue;
		full_units(r, &lo, &hi);
		if (lo >= hi) {
			/* No whole unit inside: all of it is edge pieces. */
			add_edge(b, r->start, r->end, edge, ctx);
			continue;
		}
		if (r->start < lo)
			add_edge(b, r->start, lo, edge, ctx);
		if (hi < r->end)
			add_edge(b, hi, r->end, edge, ctx);
	}
}

bool bitmap_covers(const struct unaccepted_bitmap *b, u64 addr)
{
	const struct bitmap_segment *s = seg_at_or_after(b, addr);

	return s && addr >= s->base;
}

bool bitmap_test(const struct unaccepted_bitmap *b, u64 addr)
{
	const struct bitmap_segment *s = seg_at_or_after(b, addr);
	u64 bit;

	if (!s || addr < s->base)
		return false;
	bit = (addr - s->base) >> UNIT_SHIFT;
	return (word_at(b, s, bit / WORD_BITS) >> (bit % WORD_BITS)) & 1;
}

/* Any bit set in bits [lo, hi) of segment s? */
static bool any_in(const struct unaccepted_bitmap *b, const struct bitmap_segment *s, u64 lo, u64 hi)
{
	u64 first = lo / WORD_BITS, last = (hi - 1) / WORD_BITS;
	u64 head = ~0ULL << (lo % WORD_BITS);
	u64 tail = ~0ULL >> (WORD_BITS - 1 - (hi - 1) % WORD_BITS);

	if (first == last)
		return word_at(b, s, first) & head & tail;
	if (word_at(b, s, first) & head)
		return true;
	for (u64 i = first + 1; i < last; i++)
		if (word_at(b, s, i))
			return true;
	return word_at(b, s, last) & tail;
}

/* The first set bit of segment s at or after bit `from`; s->units if none. */
static u64 find_next(const struct unaccepted_bitmap *b, const struct bitmap_segment *s, u64 from)
{
	for (u64 i = from / WORD_BITS; from < s->units; i++, from = i * WORD_BITS) {
		u64 v = word_at(b, s, i) & (~0ULL << (from % WORD_BITS));

		if (v)
			return MIN(i * WORD_BITS + (u64)__builtin_ctzll(v), s->units);
	}
	return s->units;
}

bool bitmap_any(const struct unaccepted_bitmap *b, u64 start, u64 end)
{
	if (start >= end)
		return false;
	for (const struct bitmap_segment *s = seg_at_or_after(b, start);
	     s && s < b->segs + b->nsegs && s->base < end; s++) {
		u64 seg_end = s->base + (s->units << UNIT_SHIFT);
		u64 lo = (MAX(start, s->base) - s->base) >> UNIT_SHIFT;
		u64 hi = ((MIN(end, seg_end) - s->base) + UNIT_SIZE - 1) >> UNIT_SHIFT;

		if (lo < hi && any_in(b, s, lo, hi))
			return true;
	}
	return false;
}

bool bitmap_next(const struct unaccepted_bitmap *b, u64 from, u64 *unit)
{
	for (const struct bitmap_segment *s = seg_at_or_after(b, from);
	     s && s < b->segs + b->nsegs; s++) {
		u64 bit = from > s->base ? (from - s->base) >> UNIT_SHIFT : 0;
		u64 found = find_next(b, s, bit);

		if (found < s->units) {
			*unit = s->base + (found << UNIT_SHIFT);
			return true;
		}
	}
	return false;
}

void bitmap_clear(struct unaccepted_bitmap *b, u64 unit)
{
	const struct bitmap_segment *s = seg_at_or_after(b, unit);
	u64 bit;

	if (!IS_ALIGNED(unit, UNIT_SIZE) || !s || unit < s->base)
		panic("bitmap_clear: %llx is not a unit of the bitmap", unit);
	bit = (unit - s->base) >> UNIT_SHIFT;
	u64 w = s->word + bit / WORD_BITS;
	u64 mask = 1ULL << (bit % WORD_BITS);

	if (!chunk_written(b, w / BITMAP_CHUNK_WORDS))
		chunk_write(b, w);
	/* Clearing twice would mean accepting twice: the caller lost track of a unit. */
	if (!(b->words[w] & mask))
		panic("bitmap_clear: unit %llx is already accepted", unit);
	__atomic_store_n(&b->words[w], b->words[w] & ~mask, __ATOMIC_RELAXED);
	b->set--;
}

u64 bitmap_word(const struct unaccepted_bitmap *b, unsigned seg, u64 i)
{
	if (seg >= b->nsegs || i >= (b->segs[seg].units + WORD_BITS - 1) / WORD_BITS)
		panic("bitmap_word: word %llu of segment %u is outside the bitmap", i, seg);
	return word_at(b, &b->segs[seg], i);
}

u64 bitmap_recount(const struct unaccepted_bitmap *b)
{
	u64 n = 0;

	for (const struct bitmap_segment *s = b->segs; s < b->segs + b->nsegs; s++)
		for (u64 i = 0; i * WORD_BITS < s->units; i++)
			n += popcount64(word_at(b, s, i));
	return n;
}
