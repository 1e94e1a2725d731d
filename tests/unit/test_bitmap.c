/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the unaccepted bitmap (mm/bitmap.c): building, queries, clearing. */
#include <string.h>
#include "mm/bitmap.h"
#include "mm/memmap.h"
#include "tests/unit/unit.h"


#define PIB (1ULL << 50)
#define MAXR 512

/* A normalised map written by hand: the bitmap only reads ranges. */
static struct mem_range ranges[MAXR];
static struct memmap mm;

static void map_reset(void)
{
	memset(&mm, 0, sizeof(mm));
	mm.ranges = ranges;
	mm.cap = MAXR;
}

static void range(u64 start, u64 end, u32 kind)
{
	if (mm.nranges < MAXR)
		ranges[mm.nranges++] = (struct mem_range){ start, end, kind, 0 };
}

struct edge {
	u64 start, end;
};

static struct edge edges[MAXR * 2];
static unsigned nedges;
static u64 edge_calls_ctx;

static void on_edge(void *ctx, u64 start, u64 end)
{
	EXPECT(ctx == &edge_calls_ctx);
	/* A piece of one unit only: the allocator keeps partial units one at a time. */
	EXPECT(start < end && ALIGN_DOWN(start, UNIT_SIZE) == ALIGN_DOWN(end - 1, UNIT_SIZE));
	if (nedges < ARRAY_SIZE(edges))
		edges[nedges] = (struct edge){ start, end };
	nedges++;
}

static struct unaccepted_bitmap bm;
static void *storage;

/*
 * Build into storage of exactly bitmap_storage_bytes() (heap: the sanitizer catches any
 * write past it) and check what must hold after every build.
 */
static struct bitmap_layout build(void)
{
	struct bitmap_layout l = bitmap_layout(&mm);
	u64 units = 0;

	free(storage);
	storage = malloc(bitmap_storage_bytes(l) ? bitmap_storage_bytes(l) : 1);
	nedges = 0;
	bitmap_build(&bm, &mm, storage, on_edge, &edge_calls_ctx);
	EXPECT_EQ(bm.nsegs, l.nsegs);
	EXPECT_EQ(bm.nwords, l.nwords);
	EXPECT_EQ(bitmap_recount(&bm), bm.set);
	EXPECT_EQ(bitmap_count(&bm), bm.set);
	for (unsigned i = 0; i < bm.nsegs; i++) {
		EXPECT(IS_ALIGNED(bm.segs[i].base, UNIT_SIZE));
		units += bm.segs[i].units;
	}
	EXPECT_EQ(bm.units, units);
	return l;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The edges reported, in address order, must be exactly these. */
static void check_edges(const struct edge *want, unsigned n, int line)
{
	u64 bytes = 0;

	qsort(edges, MIN(nedges, ARRAY_SIZE(edges)), sizeof(edges[0]), cmp_edge);
	if (!unit_check_eq(nedges, n, __FILE__, line, "nedges", "expected"))
		n = MIN(n, nedges);
	for (unsigned i = 0; i < n; i++) {
		unit_check_eq(edges[i].start, want[i].start, __FILE__, line, "edge start", "expected");
		unit_check_eq(edges[i].end, want[i].end, __FILE__, line, "edge end", "expected");
		bytes += want[i].end - want[i].start;
	}
	unit_check_eq(bm.edge_bytes, bytes, __FILE__, line, "edge_bytes", "expected");
}

#define EXPECT_EDGES(...)                                                 \
	do {                                                              \
		const struct edge e_[] = { __VA_ARGS__ };                 \
		check_edges(e_, ARRAY_SIZE(e_), __LINE__);                \
	} while (0)
#define EXPECT_NO_EDGES()                                                 \
	do {                                                              \
		EXPECT_EQ(nedges, 0);                                     \
		EXPECT_EQ(bm.edge_bytes, 0);                              \
	} while (0)

/* Bits set exactly for the units of [lo, hi) among [from, to), checked one unit at a time. */
static void expect_units(u64 from, u64 to, u64 lo, u64 hi, int line)
{
	for (u64 a = from; a < to; a += UNIT_SIZE) {
		bool want = a >= lo && a < hi;

		if (bitmap_test(&bm, a) != want || bitmap_test(&bm, a + UNIT_SIZE - 1) != want) {
			unit_check_eq(bitmap_test(&bm, a), want, __FILE__, line, "bitmap_test", "expected");
			return;
		}
	}
}

TEST(bitmap_no_unaccepted_memory)
{
	u64 unit = 12345;

	map_reset();
	range(0, 1 * GiB, RANGE_USABLE);
	range(1 * GiB, 2 * GiB, RANGE_SUSPECT);
	struct bitmap_layout l = build();

	EXPECT_EQ(l.nsegs, 0);
	EXPECT_EQ(l.nwords, 0);
	EXPECT_EQ(bitmap_storage_bytes(l), 0);
	EXPECT_EQ(bitmap_count(&bm), 0);
	EXPECT(!bitmap_test(&bm, 0));
	EXPECT(!bitmap_test(&bm, 1 * GiB));
	EXPECT(!bitmap_any(&bm, 0, UINT64_MAX));
	EXPECT(!bitmap_next(&bm, 0, &unit));
	EXPECT_EQ(unit, 12345);
	EXPECT_NO_EDGES();
}

/* Round inward: no bit for a unit that is only partly unaccepted; the rest are edges. */
TEST(bitmap_sub_unit_ranges)
{
	map_reset();
	range(1 * GiB, 1 * GiB + 4 * KiB, RANGE_USABLE);
	range(1 * GiB + 4 * KiB, 1 * GiB + 1 * MiB, RANGE_UNACCEPTED);
	range(3 * GiB + 1 * MiB, 3 * GiB + 3 * MiB, RANGE_UNACCEPTED);	/* two partial units */
	range(5 * GiB, 5 * GiB + 2 * MiB - 4 * KiB, RANGE_UNACCEPTED);	/* one page short */
	range(7 * GiB + 4 * KiB, 7 * GiB + 2 * MiB, RANGE_UNACCEPTED);
	struct bitmap_layout l = build();

	EXPECT_EQ(l.nsegs, 0);
	EXPECT_EQ(bitmap_count(&bm), 0);
	EXPECT_EDGES({ 1 * GiB + 4 * KiB, 1 * GiB + 1 * MiB },
		     { 3 * GiB + 1 * MiB, 3 * GiB + 2 * MiB }, { 3 * GiB + 2 * MiB, 3 * GiB + 3 * MiB },
		     { 5 * GiB, 5 * GiB + 2 * MiB - 4 * KiB },
		     { 7 * GiB + 4 * KiB, 7 * GiB + 2 * MiB });
	EXPECT(!bitmap_test(&bm, 3 * GiB + 2 * MiB));
	EXPECT(!bitmap_any(&bm, 0, 8 * GiB));
}

TEST(bitmap_unaligned_range)
{
	u64 unit;

	map_reset();
	range(1 * GiB + 4 * KiB, 1 * GiB + 10 * MiB + 8 * KiB, RANGE_UNACCEPTED);
	build();
	EXPECT_EQ(bitmap_count(&bm), 4);
	EXPECT_EDGES({ 1 * GiB + 4 * KiB, 1 * GiB + 2 * MiB },
		     { 1 * GiB + 10 * MiB, 1 * GiB + 10 * MiB + 8 * KiB });
	expect_units(1 * GiB - 4 * MiB, 1 * GiB + 16 * MiB, 1 * GiB + 2 * MiB, 1 * GiB + 10 * MiB,
		     __LINE__);
	EXPECT(bitmap_next(&bm, 0, &unit) && unit == 1 * GiB + 2 * MiB);
	EXPECT(bitmap_next(&bm, 1 * GiB + 10 * MiB - 1, &unit) && unit == 1 * GiB + 8 * MiB);
	EXPECT(!bitmap_next(&bm, 1 * GiB + 10 * MiB, &unit));
	EXPECT(!bitmap_any(&bm, 1 * GiB, 1 * GiB + 2 * MiB));
	EXPECT(bitmap_any(&bm, 1 * GiB, 1 * GiB + 2 * MiB + 1));
	EXPECT(bitmap_any(&bm, 1 * GiB + 10 * MiB - 1, 1 * GiB + 10 * MiB));
	EXPECT(!bitmap_any(&bm, 1 * GiB + 10 * MiB, UINT64_MAX));
	EXPECT(!bitmap_any(&bm, 1 * GiB + 4 * MiB, 1 * GiB + 4 * MiB));	/* empty */
}

/* Adjacent unaccepted descriptors are merged by memmap_parse and fill units together. */
TEST(bitmap_adjacent_descriptors_join)
{
	static const struct efi_mem_desc raw[] = {
		{ EFI_CONVENTIONAL_MEMORY, 0, 0, 0, (1 * GiB) >> 12, 0 },
		{ EFI_UNACCEPTED_MEMORY, 0, 1 * GiB, 0, (1 * MiB) >> 12, 0 },
		{ EFI_UNACCEPTED_MEMORY, 0, 1 * GiB + 1 * MiB, 0, (1 * MiB) >> 12, 0 },
		{ EFI_UNACCEPTED_MEMORY, 0, 2 * GiB + 1 * MiB, 0, (2 * MiB) >> 12, 0 },
		{ EFI_UNACCEPTED_MEMORY, 0, 2 * GiB + 3 * MiB, 0, (2 * MiB) >> 12, 0 },
	};
	static u64 scratch[1024];
	struct memmap_input in = {
		.buf = raw, .size = sizeof(raw), .desc_size = sizeof(raw[0]),
		.desc_version = EFI_MEM_DESC_VERSION, .phys_bits = 48, .can_accept = true,
	};

	ASSERT_EQ(memmap_parse(&in, &mm, ranges, MAXR, scratch, sizeof(scratch)), 0);
	ASSERT_EQ(mm.nranges, 3);
	build();
	/* [1G, 1G+2M) from two halves; [2G+2M, 2G+4M) from two ranges each covering half. */
	EXPECT_EQ(bitmap_count(&bm), 2);
	EXPECT(bitmap_test(&bm, 1 * GiB));
	EXPECT(bitmap_test(&bm, 2 * GiB + 2 * MiB));
	EXPECT_EDGES({ 2 * GiB + 1 * MiB, 2 * GiB + 2 * MiB }, { 2 * GiB + 4 * MiB, 2 * GiB + 5 * MiB });
	EXPECT_EQ(bm.nsegs, 2);	/* two runs of whole units, two segments */
}

/* One segment per run of whole unaccepted units, whatever the gap between runs. */
TEST(bitmap_segments)
{
	struct bitmap_layout l;

	map_reset();
	range(0, 2 * MiB, RANGE_UNACCEPTED);
	range(2 * MiB, 4 * MiB, RANGE_USABLE);
	range(4 * MiB, 6 * MiB, RANGE_UNACCEPTED);		/* one unit apart */
	range(6 * MiB, 8 * MiB, RANGE_UNACCEPTED);		/* touches it: the same run */
	range(8 * MiB + 4 * KiB, 200 * MiB, RANGE_UNACCEPTED);	/* a page apart */
	l = build();
	ASSERT_EQ(l.nsegs, 3);
	EXPECT_EQ(l.nwords, 1 + 1 + 2);
	EXPECT_EQ(bitmap_storage_bytes(l), (4 + 1) * 8 + 3 * sizeof(struct bitmap_segment));
	EXPECT_EQ(bm.segs[0].base, 0);
	EXPECT_EQ(bm.segs[0].units, 1);
	EXPECT_EQ(bm.segs[1].base, 4 * MiB);
	EXPECT_EQ(bm.segs[1].units, 2);
	EXPECT_EQ(bm.segs[1].word, 1);
	EXPECT_EQ(bm.segs[2].base, 10 * MiB);
	EXPECT_EQ(bm.segs[2].units, 95);
	EXPECT_EQ(bm.segs[2].word, 2);
	EXPECT_EQ(bitmap_count(&bm), 1 + 2 + 95);
	EXPECT_EDGES({ 8 * MiB + 4 * KiB, 10 * MiB });
	EXPECT(!bitmap_covers(&bm, 2 * MiB));
	EXPECT(!bitmap_covers(&bm, 8 * MiB));	/* the partial unit is no segment's */
	EXPECT(bitmap_covers(&bm, 10 * MiB));
	EXPECT(!bitmap_test(&bm, 2 * MiB));
	EXPECT(bitmap_test(&bm, 6 * MiB));
	EXPECT(!bitmap_test(&bm, 8 * MiB));
	EXPECT(bitmap_test(&bm, 200 * MiB - 1));
	EXPECT(!bitmap_test(&bm, 200 * MiB));
}

/*
 * Building writes no word, and clearing a bit writes the words of its chunk only: the
 * rest of the storage keeps whatever it held (0xa5 here), and reads as all ones.
 */
TEST(bitmap_words_written_a_chunk_at_a_time)
{
	const u64 poison = 0xa5a5a5a5a5a5a5a5ULL;
	u64 unit;

	map_reset();
	range(0, 1 * GiB, RANGE_USABLE);
	range(1 * GiB, 2 * GiB, RANGE_UNACCEPTED);		/* 512 units: 8 words */
	range(4 * GiB, 36 * GiB + 2 * MiB, RANGE_UNACCEPTED);	/* 16385 units: 257 words */
	struct bitmap_layout l = bitmap_layout(&mm);

	ASSERT_EQ(l.nwords, 8 + 257);
	free(storage);
	storage = malloc(bitmap_storage_bytes(l));
	memset(storage, 0xa5, bitmap_storage_bytes(l));
	nedges = 0;
	bitmap_build(&bm, &mm, storage, on_edge, &edge_calls_ctx);
	for (u64 i = 0; i < bm.nwords; i++)
		ASSERT_EQ(bm.words[i], poison);
	EXPECT_EQ(bitmap_count(&bm), 512 + 16385);
	EXPECT_EQ(bitmap_recount(&bm), 512 + 16385);
	EXPECT_EQ(bitmap_word(&bm, 1, 256), 1);		/* the last word: one unit of 64 */
	EXPECT(bitmap_test(&bm, 36 * GiB));
	EXPECT(!bitmap_test(&bm, 36 * GiB + 2 * MiB));

	/* Word 8 + 100 lies in chunk 1 (words 64..127): only that chunk is written. */
	unit = 4 * GiB + (u64)(100 * 64 + 5) * UNIT_SIZE;
	bitmap_clear(&bm, unit);
	for (u64 i = 0; i < bm.nwords; i++) {
		bool in_chunk = i / BITMAP_CHUNK_WORDS == 1;

		if (!EXPECT(in_chunk ? bm.words[i] != poison : bm.words[i] == poison))
			break;
	}
	EXPECT_EQ(bm.words[8 + 100], ~(1ULL << 5));
	EXPECT_EQ(bitmap_word(&bm, 1, 100), ~(1ULL << 5));
	EXPECT_EQ(bitmap_word(&bm, 1, 55), ~0ULL);		/* word 63 of chunk 0: not written */
	EXPECT_EQ(bitmap_word(&bm, 1, 56), ~0ULL);		/* word 64: chunk 1, written */
	EXPECT(!bitmap_test(&bm, unit));
	EXPECT(bitmap_test(&bm, unit + UNIT_SIZE));
	EXPECT_EQ(bitmap_count(&bm), 512 + 16385 - 1);
	EXPECT_EQ(bitmap_recount(&bm), 512 + 16385 - 1);
	EXPECT(bitmap_next(&bm, unit, &unit) && unit == 4 * GiB + (u64)(100 * 64 + 6) * UNIT_SIZE);

	/* The segment's last word, in the last chunk: its bits beyond the segment stay clear. */
	bitmap_clear(&bm, 36 * GiB);
	EXPECT_EQ(bm.words[8 + 256], 0);
	EXPECT(!bitmap_next(&bm, 36 * GiB, &unit));
	EXPECT(bitmap_next(&bm, 36 * GiB - 2 * MiB, &unit) && unit == 36 * GiB - 2 * MiB);
}

/* A 256 GiB q35 guest, the largest make bench boots: two segments, under 16 KiB of storage. */
TEST(bitmap_q35_256g)
{
	struct bitmap_layout l;
	u64 unit;

	map_reset();
	range(0, 1 * GiB, RANGE_USABLE);
	range(1 * GiB, 2 * GiB, RANGE_UNACCEPTED);
	range(2 * GiB, 3 * GiB, RANGE_RESERVED);
	range(4 * GiB, 258 * GiB, RANGE_UNACCEPTED);
	l = build();
	ASSERT_EQ(l.nsegs, 2);
	EXPECT(bitmap_storage_bytes(l) <= 16 * KiB);
	EXPECT_EQ(bm.units, 512 + 130048);
	EXPECT_EQ(bitmap_count(&bm), 512 + 130048);
	EXPECT_NO_EDGES();
	EXPECT(bitmap_test(&bm, 1 * GiB));
	EXPECT(!bitmap_test(&bm, 2 * GiB));
	EXPECT(bitmap_test(&bm, 258 * GiB - 1));
	EXPECT(!bitmap_test(&bm, 258 * GiB));
	EXPECT(!bitmap_any(&bm, 2 * GiB, 4 * GiB));
	EXPECT(bitmap_next(&bm, 2 * GiB - 1, &unit) && unit == 2 * GiB - 2 * MiB);
	EXPECT(bitmap_next(&bm, 2 * GiB, &unit) && unit == 4 * GiB);
}

/* RAM at both ends of a 4 PiB address space: the hole costs nothing. */
TEST(bitmap_4pib_hole)
{
	static const struct efi_mem_desc raw[] = {
		{ EFI_CONVENTIONAL_MEMORY, 0, 0, 0, (1 * GiB) >> 12, 0 },
		{ EFI_UNACCEPTED_MEMORY, 0, 1 * GiB, 0, (1 * GiB) >> 12, 0 },
		{ EFI_UNACCEPTED_MEMORY, 0, 4 * PIB - 1 * GiB, 0, (1 * GiB) >> 12, 0 },
	};
	static u64 scratch[1024];
	struct memmap_input in = {
		.buf = raw, .size = sizeof(raw), .desc_size = sizeof(raw[0]),
		.desc_version = EFI_MEM_DESC_VERSION, .phys_bits = 52, .can_accept = true,
	};
	struct bitmap_layout l;
	u64 unit;

	ASSERT_EQ(memmap_parse(&in, &mm, ranges, MAXR, scratch, sizeof(scratch)), 0);
	ASSERT_EQ(mm.anomalies, 0);
	l = build();
	EXPECT_EQ(l.nsegs, 2);
	EXPECT_EQ(l.nwords, 16);
	EXPECT(bitmap_storage_bytes(l) <= 256);
	EXPECT_EQ(bitmap_count(&bm), 1024);
	EXPECT(bitmap_next(&bm, 2 * GiB, &unit) && unit == 4 * PIB - 1 * GiB);
	EXPECT(!bitmap_any(&bm, 2 * GiB, 4 * PIB - 1 * GiB));
	EXPECT(bitmap_any(&bm, 2 * GiB, 4 * PIB - 1 * GiB + 1));
	EXPECT(bitmap_any(&bm, 0, UINT64_MAX));
	EXPECT(bitmap_test(&bm, 4 * PIB - 1));
	EXPECT(!bitmap_test(&bm, 4 * PIB));
	EXPECT(bitmap_next(&bm, 4 * PIB - 1, &unit) && unit == 4 * PIB - 2 * MiB);
	EXPECT(!bitmap_next(&bm, 4 * PIB, &unit));
	EXPECT(!bitmap_any(&bm, 4 * PIB, UINT64_MAX));
}

/* Ranges whose unit counts straddle word boundaries, with queries right at them. */
TEST(bitmap_word_boundaries)
{
	static const u64 counts[] = { 1, 63, 64, 65, 127, 128, 129 };

	for (unsigned i = 0; i < ARRAY_SIZE(counts); i++) {
		u64 base = 8 * GiB, end = base + counts[i] * UNIT_SIZE, unit;

		map_reset();
		range(base, end, RANGE_UNACCEPTED);
		build();
		EXPECT_EQ(bm.nwords, (counts[i] + 63) / 64);
		EXPECT_EQ(bitmap_count(&bm), counts[i]);
		expect_units(base - 4 * UNIT_SIZE, end + 70 * UNIT_SIZE, base, end, __LINE__);
		EXPECT(bitmap_next(&bm, end - 1, &unit) && unit == end - UNIT_SIZE);
		EXPECT(!bitmap_next(&bm, end, &unit));
		EXPECT(bitmap_any(&bm, end - 1, end + 64 * UNIT_SIZE));
		EXPECT(!bitmap_any(&bm, end, end + 64 * UNIT_SIZE));
		/* Clear everything but the last unit: next() must walk the empty words. */
		for (u64 a = base; a + UNIT_SIZE < end; a += UNIT_SIZE)
			bitmap_clear(&bm, a);
		EXPECT_EQ(bitmap_count(&bm), 1);
		EXPECT_EQ(bitmap_recount(&bm), 1);
		EXPECT(bitmap_next(&bm, base, &unit) && unit == end - UNIT_SIZE);
		EXPECT(bitmap_any(&bm, base, end));
		EXPECT(!bitmap_any(&bm, base, end - UNIT_SIZE));
	}
}

/* The naive reference: one bool per unit over [0, span). */
#define NAIVE_UNITS 40000
static bool naive[NAIVE_UNITS];

static bool naive_any(u64 start, u64 end)
{
	if (start >= end)
		return false;
	for (u64 u = start >> UNIT_SHIFT; u < NAIVE_UNITS && u <= (end - 1) >> UNIT_SHIFT; u++)
		if (naive[u])
			return true;
	return false;
}

static bool naive_next(u64 from, u64 *unit)
{
	for (u64 u = from >> UNIT_SHIFT; u < NAIVE_UNITS; u++) {
		if (naive[u]) {
			*unit = u << UNIT_SHIFT;
			return true;
		}
	}
	return false;
}

/* Random byte address below `span`: unit-aligned, word-aligned or anywhere. */
static u64 rand_addr(u64 span)
{
	u64 a = unit_rand() % span;

	switch (unit_rand() % 4) {
	case 0:
		return ALIGN_DOWN(a, UNIT_SIZE);
	case 1:
		return ALIGN_DOWN(a, 64 * UNIT_SIZE) + (unit_rand() % 3) - 1;
	default:
		return a;
	}
}

/* Random unaccepted ranges with gaps from a page to more than a GiB. */
static u64 random_map(void)
{
	u64 a = (unit_rand() % 8) * UNIT_SIZE;

	map_reset();
	while (mm.nranges + 2 < MAXR) {
		u64 len = (unit_rand() % 4 ? unit_rand() % 200 : unit_rand() % 3) * UNIT_SIZE;
		u64 gap;

		/* Unaligned edges now and then, so some units are only partly covered. */
		len += unit_rand() % 2 ? 0 : (unit_rand() % 512) * PAGE_SIZE;
		if (len == 0)
			len = PAGE_SIZE;
		switch (unit_rand() % 4) {
		case 0:
			gap = PAGE_SIZE + (unit_rand() % 4) * UNIT_SIZE;
			break;
		case 1:
			gap = 1 * GiB - UNIT_SIZE + (unit_rand() % 3) * UNIT_SIZE;
			break;
		case 2:
			gap = 1 * GiB + (unit_rand() % 300) * UNIT_SIZE;
			break;
		default:
			gap = (1 + unit_rand() % 100) * UNIT_SIZE + (unit_rand() % 2) * PAGE_SIZE;
			break;
		}
		if (((a + len + gap) >> UNIT_SHIFT) + 2 >= NAIVE_UNITS)
			break;
		range(a, a + len, RANGE_UNACCEPTED);
		/* Something else between them, as memmap_parse would leave it. */
		range(a + len, a + len + gap, unit_rand() % 2 ? RANGE_USABLE : RANGE_RESERVED);
		a += len + gap;
	}
	memset(naive, 0, sizeof(naive));
	for (unsigned i = 0; i < mm.nranges; i++) {
		const struct mem_range *r = &ranges[i];

		if (r->kind != RANGE_UNACCEPTED)
			continue;
		for (u64 u = r->start >> UNIT_SHIFT; (u + 1) << UNIT_SHIFT <= r->end; u++)
			if (u << UNIT_SHIFT >= r->start)
				naive[u] = true;
	}
	return a;
}

static u64 naive_count(void)
{
	u64 n = 0;

	for (u64 u = 0; u < NAIVE_UNITS; u++)
		n += naive[u];
	return n;
}

/* Every query against the naive reference; returns false at the first difference. */
static bool compare_with_naive(u64 span, unsigned queries)
{
	for (u64 u = 0; u < NAIVE_UNITS; u++)
		if (!EXPECT_EQ(bitmap_test(&bm, u << UNIT_SHIFT), naive[u]))
			return false;
	for (unsigned q = 0; q < queries; q++) {
		u64 s = rand_addr(span), e, got = 0, want = 0;

		switch (unit_rand() % 3) {
		case 0:
			e = s + unit_rand() % (4 * UNIT_SIZE);
			break;
		case 1:
			e = s + unit_rand() % (200 * UNIT_SIZE);
			break;
		default:
			e = rand_addr(span);
			break;
		}
		if (bitmap_any(&bm, s, e) != naive_any(s, e)) {
			printf("  bitmap_any(%llx, %llx) = %d\n", s, e, bitmap_any(&bm, s, e));
			return EXPECT(false);
		}
		bool fg = bitmap_next(&bm, s, &got), fw = naive_next(s, &want);

		if (fg != fw || (fg && got != want)) {
			printf("  bitmap_next(%llx) = %d/%llx, naive %d/%llx\n", s, fg, got, fw, want);
			return EXPECT(false);
		}
	}
	return true;
}

TEST(bitmap_queries_match_naive_reference)
{
	for (u64 seed = 1; seed <= 12; seed++) {
		unit_srand(seed * 0x9e3779b97f4a7c15ULL);
		u64 span = random_map() + 4 * GiB;	/* queries also past the end */

		build();
		ASSERT_EQ(bitmap_count(&bm), naive_count());
		ASSERT(compare_with_naive(span, 1500));

		/* Accept in rounds: random units, then whole words, then almost everything. */
		for (unsigned round = 0; round < 3; round++) {
			u64 n = bitmap_count(&bm);
			u64 target = round == 0 ? n / 3 : round == 1 ? n / 2 : n - n / 64;

			while (bitmap_count(&bm) > n - target) {
				u64 u = unit_rand() % NAIVE_UNITS;
				/* Round 1 empties 64-unit groups: long runs of zero words. */
				u64 last = round == 1 ? MIN(ALIGN_DOWN(u, 64) + 64, NAIVE_UNITS) : u + 1;

				for (u = round == 1 ? ALIGN_DOWN(u, 64) : u; u < last; u++) {
					if (!naive[u] || bitmap_count(&bm) <= n - target)
						continue;
					bitmap_clear(&bm, u << UNIT_SHIFT);
					naive[u] = false;
				}
			}
			ASSERT_EQ(bitmap_count(&bm), naive_count());
			ASSERT_EQ(bitmap_recount(&bm), bitmap_count(&bm));
			ASSERT(compare_with_naive(span, 1500));
		}
	}
}

TEST(bitmap_clear_all_counters)
{
	u64 unit, n, from = 0;

	map_reset();
	range(1 * GiB + 4 * KiB, 3 * GiB, RANGE_UNACCEPTED);
	range(8 * GiB, 8 * GiB + 130 * MiB, RANGE_UNACCEPTED);
	build();
	n = bitmap_count(&bm);
	EXPECT_EQ(n, 1023 + 65);
	EXPECT_EQ(bm.edge_bytes, 2 * MiB - 4 * KiB);
	while (bitmap_next(&bm, from, &unit)) {
		EXPECT(unit >= from);
		EXPECT(bitmap_test(&bm, unit));
		bitmap_clear(&bm, unit);
		EXPECT(!bitmap_test(&bm, unit));
		ASSERT_EQ(bitmap_count(&bm), --n);
		ASSERT_EQ(bitmap_recount(&bm), n);
		from = unit + unit_rand() % UNIT_SIZE;	/* anywhere inside the unit just cleared */
	}
	EXPECT_EQ(n, 0);
	EXPECT(!bitmap_any(&bm, 0, UINT64_MAX));
}

TEST(bitmap_clear_twice_panics)
{
	map_reset();
	range(1 * GiB, 1 * GiB + 8 * MiB, RANGE_UNACCEPTED);
	build();
	bitmap_clear(&bm, 1 * GiB + 2 * MiB);
	EXPECT_EQ(bitmap_count(&bm), 3);
	/* Clearing twice would mean accepting twice. */
	CHECK_PANICS(bitmap_clear(&bm, 1 * GiB + 2 * MiB), "bitmap_clear: unit 40200000 is already accepted");
	EXPECT_EQ(bitmap_count(&bm), 3);
	EXPECT_EQ(bitmap_recount(&bm), 3);
}

TEST(bitmap_clear_outside_panics)
{
	map_reset();
	range(1 * GiB, 1 * GiB + 8 * MiB, RANGE_UNACCEPTED);
	range(4 * GiB, 4 * GiB + 8 * MiB, RANGE_UNACCEPTED);
	build();
	/* Between the segments. */
	CHECK_PANICS(bitmap_clear(&bm, 2 * GiB), "80000000 is not a unit");
	EXPECT_EQ(bitmap_count(&bm), 8);
}

TEST(bitmap_clear_unaligned_panics)
{
	map_reset();
	range(1 * GiB, 1 * GiB + 8 * MiB, RANGE_UNACCEPTED);
	build();
	CHECK_PANICS(bitmap_clear(&bm, 1 * GiB + 4 * KiB), "40001000 is not a unit");
	/* The refused call changed nothing. */
	EXPECT_EQ(bitmap_count(&bm), 4);
	EXPECT_EQ(bitmap_recount(&bm), 4);
}
