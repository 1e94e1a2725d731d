/* SPDX-License-Identifier: MIT */
/* memaccept: libFuzzer target: memmap_parse + bitmap_build checked against an independent model. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "include/panic.h"
#include "mm/bitmap.h"
#include "mm/memmap.h"
#include "tests/fuzz/fuzz.h"

/*
 * Input: a 12-byte header, then raw descriptors exactly as firmware would lay them out.
 *   [0]    desc_size: < 0xf0: 40, 48, 56, 64, 72 (byte % 5); else 33..48 (too small, odd)
 *   [1]    desc_version: < 0xf0: 1; else 0..15
 *   [2]    phys_bits: < 0xe0: 36..64; else 0..31 (nonsense a hostile CPUID could report)
 *   [3]    flags: bit 0 can_accept, bit 1 fake_set, bits 2-3 how to read fake_start,
 *          bit 4 scratch one byte short, bit 5 range capacity one short
 *   [4-11] fake_start, little endian
 *
 * The model below works from the raw bytes with 128-bit arithmetic, per elementary
 * interval between descriptor edges. It shares no code with mm/memmap.c: where the two
 * disagree about which memory may be used or accepted, the run traps.
 */

typedef unsigned __int128 u128;

#define HDR 12
#define TWO64 ((u128)1 << 64)
/* Bigger bitmaps are skipped: they cost time, not coverage. */
#define MAX_BITMAP_BYTES (1u << 20)

static u64 le64(const u8 *p)
{
	u64 v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static u32 le32(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

static u128 down(u128 x, u64 a)
{
	return x - x % a;
}

static u128 up(u128 x, u64 a)
{
	return down(x + a - 1, a);
}

/* One descriptor as the model sees it (UEFI 2.9 7.2: Type @0, PhysicalStart @8, NumberOfPages @24). */
struct rdesc {
	u128 s, e;		/* claimed extent, rounded outward to 4 KiB */
	u32 type;
	bool doubtful;		/* unaligned, wrapping or past the address width */
};

/* What the UEFI specification's types mean for us (table 7-6), written out again here. */
static u32 model_kind(u32 type)
{
	if (type == 1)
		return RANGE_IMAGE;
	if (type == 2 || type == 3 || type == 4)
		return RANGE_RECLAIMABLE;
	if (type == 5 || type == 6)
		return RANGE_RUNTIME;
	if (type == 9 || type == 10)
		return RANGE_ACPI;
	if (type == 11 || type == 12)
		return RANGE_MMIO;
	return RANGE_RESERVED;
}

static int cmp128(const void *a, const void *b)
{
	u128 x = *(const u128 *)a, y = *(const u128 *)b;

	return x < y ? -1 : x > y;
}

static const struct memmap *M;

/* Index of the first output range with end > a (binary search of our own). */
static unsigned first_after(u128 a)
{
	unsigned lo = 0, hi = M->nranges;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (M->ranges[mid].end <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Is all of [p, q) covered by output ranges whose kind is in `kinds` (a bit mask)? */
static bool covered_by(u128 p, u128 q, u32 kinds)
{
	u128 cur = p;

	for (unsigned i = first_after(p); i < M->nranges && cur < q; i++) {
		const struct mem_range *r = &M->ranges[i];

		if (r->start > cur || !(kinds & (1u << r->kind)))
			return false;
		cur = r->end;
	}
	return cur >= q;
}

static bool no_output(u128 p, u128 q)
{
	unsigned i = first_after(p);

	return i == M->nranges || M->ranges[i].start >= q;
}

struct edge {
	u64 s, e;
};

static struct edge *edges;
static unsigned nedges, edge_cap;

static void on_edge(void *ctx, u64 s, u64 e)
{
	CHECK(ctx == &edges);
	CHECK(nedges < edge_cap);
	edges[nedges++] = (struct edge){ s, e };
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/* Full units [lo, hi) of one unaccepted output range. */
struct fu {
	u128 lo, hi;
	unsigned range;
};

static const struct mem_range *model_find(u64 a)
{
	unsigned i = first_after(a);

	return i < M->nranges && M->ranges[i].start <= a ? &M->ranges[i] : NULL;
}

/* A few units cleared after the build; the query model skips them. */
#define NCLEARED 4
static u64 cleared[NCLEARED];
static unsigned ncleared;

static bool is_cleared(u128 u)
{
	for (unsigned i = 0; i < ncleared; i++)
		if (cleared[i] == u)
			return true;
	return false;
}

static bool model_any(const struct fu *f, unsigned nf, u64 s, u64 e)
{
	if (s >= e)
		return false;
	for (unsigned i = 0; i < nf; i++) {
		u128 lo = f[i].lo > down(s, UNIT_SIZE) ? f[i].lo : down(s, UNIT_SIZE);
		u128 hi = f[i].hi < up(e, UNIT_SIZE) ? f[i].hi : up(e, UNIT_SIZE);

		for (u128 u = lo; u < hi; u += UNIT_SIZE)
			if (!is_cleared(u))
				return true;
	}
	return false;
}

static bool model_next(const struct fu *f, unsigned nf, u64 from, u64 *unit)
{
	for (unsigned i = 0; i < nf; i++) {
		u128 u = f[i].lo > down(from, UNIT_SIZE) ? f[i].lo : down(from, UNIT_SIZE);

		for (; u < f[i].hi; u += UNIT_SIZE) {
			if (!is_cleared(u)) {
				*unit = (u64)u;
				return true;
			}
		}
	}
	return false;
}

static void check_queries(const struct unaccepted_bitmap *b, const struct fu *f, unsigned nf)
{
	u64 pts[64];
	unsigned np = 0;

	pts[np++] = 0;
	pts[np++] = UINT64_MAX;
	for (unsigned i = 0; i < nf && np + 6 <= 64; i++) {
		u64 lo = (u64)f[i].lo, hi = (u64)f[i].hi;

		pts[np++] = lo;
		pts[np++] = lo - 1;
		pts[np++] = hi - 1;
		pts[np++] = hi;
		pts[np++] = lo + (hi - lo) / 2;
		pts[np++] = hi + UNIT_SIZE / 2;
	}
	for (unsigned i = 0; i < np; i++) {
		u64 got = 0, want = 0;
		bool g = bitmap_next(b, pts[i], &got), w = model_next(f, nf, pts[i], &want);

		CHECK(g == w && (!g || got == want));
		CHECK(bitmap_test(b, pts[i]) == model_any(f, nf, pts[i], pts[i] + 1));
		for (unsigned j = 0; j < np; j++)
			CHECK(bitmap_any(b, pts[i], pts[j]) == model_any(f, nf, pts[i], pts[j]));
	}
}

/* (b) (c) (d): the bitmap against the output map. */
static void check_bitmap(const struct memmap *m)
{
	struct bitmap_layout l = bitmap_layout(m);
	u64 bytes = bitmap_storage_bytes(l);

	if (bytes > MAX_BITMAP_BYTES)
		return;

	struct unaccepted_bitmap b;
	void *storage = malloc(bytes ? bytes : 1);
	struct fu *f = malloc((m->nranges + 1) * sizeof(*f));
	unsigned nf = 0;
	u64 want_set = 0;

	edge_cap = 2 * m->nranges + 2;
	edges = malloc(edge_cap * sizeof(*edges));
	nedges = 0;
	bitmap_build(&b, m, storage, on_edge, &edges);
	CHECK(b.nsegs == l.nsegs && b.nwords == l.nwords);

	for (unsigned i = 0; i < m->nranges; i++) {
		const struct mem_range *r = &m->ranges[i];
		u128 lo = up(r->start, UNIT_SIZE), hi = down(r->end, UNIT_SIZE);

		if (r->kind == RANGE_UNACCEPTED && lo < hi) {
			f[nf++] = (struct fu){ lo, hi, i };
			want_set += (u64)((hi - lo) >> UNIT_SHIFT);
		}
	}

	/* Segments: in order, aligned, packed words, one per run of touching full units. */
	u64 *want = calloc(b.nwords ? b.nwords : 1, sizeof(u64));
	u64 word = 0, units = 0;
	unsigned s = 0;

	for (unsigned i = 0; i < b.nsegs; i++) {
		const struct bitmap_segment *g = &b.segs[i];

		CHECK(g->units > 0 && g->base % UNIT_SIZE == 0);
		CHECK(g->word == word);
		CHECK((u128)g->base + ((u128)g->units << UNIT_SHIFT) <= TWO64);
		word += (g->units + 63) / 64;
		units += g->units;
	}
	CHECK(word == b.nwords && units == b.units);
	unsigned starts = 0;

	for (unsigned i = 0; i < nf; i++) {
		/* Each run of full units lies in one segment; a new one starts where runs do not touch. */
		while (s < b.nsegs && (u128)b.segs[s].base + ((u128)b.segs[s].units << UNIT_SHIFT) <= f[i].lo)
			s++;
		CHECK(s < b.nsegs);
		const struct bitmap_segment *g = &b.segs[s];
		u128 gend = (u128)g->base + ((u128)g->units << UNIT_SHIFT);

		CHECK(g->base <= f[i].lo && f[i].hi <= gend);
		if (g->base == f[i].lo) {
			CHECK(i == 0 || f[i].lo != f[i - 1].hi);
			starts++;
		} else {
			CHECK(i > 0 && f[i].lo == f[i - 1].hi);
		}
		/* A segment ends exactly where its last run of full units ends. */
		if (i + 1 == nf || f[i + 1].lo >= gend)
			CHECK(f[i].hi == gend);
		for (u64 bit = (u64)((f[i].lo - g->base) >> UNIT_SHIFT),
			 end = (u64)((f[i].hi - g->base) >> UNIT_SHIFT); bit < end;) {
			if (bit % 64 == 0 && end - bit >= 64) {
				want[g->word + bit / 64] = ~0ULL;
				bit += 64;
			} else {
				want[g->word + bit / 64] |= 1ULL << (bit % 64);
				bit++;
			}
		}
	}
	CHECK(starts == b.nsegs);
	/* (b) no bit outside a full unaccepted unit, (c) every such unit has its bit. */
	for (unsigned i = 0; i < b.nsegs; i++)
		for (u64 w = 0; w * 64 < b.segs[i].units; w++)
			CHECK(bitmap_word(&b, i, w) == want[b.segs[i].word + w]);
	CHECK(b.set == want_set && bitmap_recount(&b) == want_set);

	/* (d) every unaccepted byte outside set units is reported once as an edge. */
	u64 edge_bytes = 0;

	qsort(edges, nedges, sizeof(*edges), cmp_edge);
	for (unsigned i = 0; i < nedges; i++) {
		const struct edge *e = &edges[i];
		const struct mem_range *r = model_find(e->s);

		CHECK(e->s < e->e);
		CHECK(i == 0 || edges[i - 1].e <= e->s);
		CHECK(r && r->kind == RANGE_UNACCEPTED && e->e <= r->end);
		CHECK(!bitmap_any(&b, e->s, e->e));
		edge_bytes += e->e - e->s;
	}
	CHECK(edge_bytes == b.edge_bytes);
	for (unsigned i = 0, k = 0, j = 0; i < m->nranges; i++) {
		const struct mem_range *r = &m->ranges[i];
		u64 in_edges = 0, in_units = 0;

		if (r->kind != RANGE_UNACCEPTED)
			continue;
		for (; k < nedges && edges[k].s < r->end; k++)
			in_edges += edges[k].e - edges[k].s;
		for (; j < nf && f[j].range == i; j++)
			in_units += (u64)(f[j].hi - f[j].lo);
		CHECK(in_edges + in_units == r->end - r->start);
	}

	/* Queries just after the build, then after clearing a few units. */
	ncleared = 0;
	check_queries(&b, f, nf);
	if (nf) {
		u64 picks[NCLEARED] = { (u64)f[0].lo, (u64)f[nf - 1].hi - UNIT_SIZE,
					(u64)f[nf / 2].lo, (u64)f[nf / 2].hi - UNIT_SIZE };

		for (unsigned i = 0; i < NCLEARED; i++) {
			if (is_cleared(picks[i]))
				continue;
			bitmap_clear(&b, picks[i]);
			cleared[ncleared++] = picks[i];
			CHECK(!bitmap_test(&b, picks[i]));
		}
		CHECK(b.set == want_set - ncleared && bitmap_recount(&b) == b.set);
		check_queries(&b, f, nf);
	}
	free(want);
	free(edges);
	free(f);
	free(storage);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	if (size < HDR)
		return 0;

	u64 desc_size = data[0] < 0xf0 ? 40 + 8 * (data[0] % 5) : 33 + (data[0] - 0xf0);
	u32 version = data[1] < 0xf0 ? 1 : data[1] - 0xf0;
	unsigned pb = data[2] < 0xe0 ? 36 + data[2] % 29 : data[2] - 0xe0;
	bool can_accept = data[3] & 1, fake_set = data[3] & 2;
	bool tight_scratch = data[3] & 16, tight_cap = data[3] & 32;
	u64 fake = le64(data + 4);
	static const u64 fake_masks[4] = { ~0ULL, (1ULL << 34) - 1, (1ULL << 40) - UNIT_SIZE, 0xffffffff };

	fake &= fake_masks[(data[3] >> 2) & 3];

	const u8 *map = data + HDR;
	u64 map_size = size - HDR;
	u64 n = desc_size >= EFI_MEM_DESC_SIZE ? map_size / desc_size : 0;
	size_t scratch_size = memmap_scratch_bytes(n) - tight_scratch;
	unsigned cap = (unsigned)(2 * n + 4 - tight_cap);
	/* Exactly the sizes promised, on the heap: any overrun is an ASan report. */
	struct mem_range *ranges = malloc(cap * sizeof(*ranges));
	void *scratch = malloc(scratch_size);
	struct memmap m;
	struct memmap_input in = {
		.buf = map, .size = map_size, .desc_size = desc_size, .desc_version = version,
		.phys_bits = pb, .fake_set = fake_set, .fake_start = fake, .can_accept = can_accept,
	};
	int rc = memmap_parse(&in, &m, ranges, cap, scratch, scratch_size);
	bool want_unusable = desc_size < EFI_MEM_DESC_SIZE || tight_scratch || tight_cap;

	M = &m;
	CHECK((rc == -1) == want_unusable && m.unusable == want_unusable);
	if (want_unusable) {
		CHECK(m.nranges == 0 && m.anomalies >= 1);
		CHECK(m.anomaly_count[desc_size < EFI_MEM_DESC_SIZE ? ANOM_DESC_SIZE_SMALL : ANOM_TOO_MANY] == 1);
		goto out;
	}

	/* (a) sorted, disjoint, non-empty, 4 KiB aligned, merged, below the address width. */
	u128 lim = pb >= 64 ? TWO64 - 1 : (u128)1 << pb;	/* memmap.c's UINT64_MAX for >= 64 */
	u128 ulim = down(lim, PAGE_SIZE);	/* the last page that can exist ends here */

	for (unsigned i = 0; i < m.nranges; i++) {
		const struct mem_range *r = &m.ranges[i];

		CHECK(r->start < r->end);
		CHECK(r->start % PAGE_SIZE == 0 && r->end % PAGE_SIZE == 0);
		CHECK(r->kind < RANGE_KIND_COUNT);
		CHECK(i == 0 || m.ranges[i - 1].end <= r->start);
		CHECK(i == 0 || m.ranges[i - 1].end < r->start || m.ranges[i - 1].kind != r->kind);
		CHECK(r->end <= ulim);
	}

	/* The model's view of each descriptor. */
	struct rdesc *d = malloc((n + 1) * sizeof(*d));
	u128 *cuts = malloc((2 * n + 4) * sizeof(*cuts));
	unsigned nd = 0, nc = 0;
	u64 conv = 0, by_type[EFI_MEMORY_TYPE_COUNT + 1] = { 0 };
	u32 zero = 0, wraps = 0, unknown = 0, unsorted = 0;
	bool any15 = false;

	for (u64 i = 0; i < n; i++) {
		const u8 *p = map + i * desc_size;
		u32 type = le32(p);
		u64 start = le64(p + 8), pages = le64(p + 24);
		u128 end = (u128)start + ((u128)pages << 12);

		if (i && start < le64(p - desc_size + 8))
			unsorted = 1;
		if (pages == 0) {
			zero++;
			continue;
		}
		if (type >= 16 && type < 0x70000000)
			unknown++;
		if (end >= TWO64)
			wraps++;
		any15 |= type == EFI_UNACCEPTED_MEMORY;
		d[nd] = (struct rdesc){ down(start, PAGE_SIZE), up(end, PAGE_SIZE), type,
					start % PAGE_SIZE || end >= TWO64 || end > lim };
		if (!d[nd].doubtful) {
			if (type == EFI_CONVENTIONAL_MEMORY)
				conv += (u64)(end - start);
			by_type[type < 16 ? type : 16] += (u64)(end - start);
		}
		cuts[nc++] = d[nd].s;
		cuts[nc++] = d[nd].e;
		nd++;
	}
	cuts[nc++] = ulim;
	if (fake_set) {
		cuts[nc++] = down(fake, PAGE_SIZE);
		cuts[nc++] = up(fake, PAGE_SIZE);
	}
	qsort(cuts, nc, sizeof(*cuts), cmp128);

	/* Counters and anomalies that follow from the raw map alone. */
	CHECK(m.descriptors == n);
	CHECK(m.conventional_bytes == conv);
	CHECK(memcmp(m.bytes_by_type, by_type, sizeof(by_type)) == 0);
	CHECK(m.anomaly_count[ANOM_ZERO_PAGES] == zero);
	CHECK(m.anomaly_count[ANOM_OVERFLOW] == wraps);
	CHECK(m.anomaly_count[ANOM_UNKNOWN_TYPE] == unknown);
	CHECK(m.anomaly_count[ANOM_UNSORTED] == unsorted);
	CHECK(m.anomaly_count[ANOM_DESC_SIZE_ODD] == (desc_size % 8 != 0));
	CHECK(m.anomaly_count[ANOM_DESC_VERSION] == (version != 1));
	CHECK(m.anomaly_count[ANOM_MAP_SIZE] == (map_size % desc_size != 0));
	CHECK(m.anomaly_count[ANOM_TOO_MANY] == 0 && m.anomaly_count[ANOM_DESC_SIZE_SMALL] == 0);
	CHECK(can_accept || m.anomaly_count[ANOM_UNACCEPTED_NO_PLATFORM] <= 1);
	CHECK(!can_accept || m.anomaly_count[ANOM_UNACCEPTED_NO_PLATFORM] == 0);
	CHECK(any15 || m.anomaly_count[ANOM_UNACCEPTED_NO_PLATFORM] == 0);
	u32 total = 0;

	for (unsigned k = 0; k < ANOM_KIND_COUNT; k++)
		total += m.anomaly_count[k];
	CHECK(m.anomalies == total);
	for (unsigned k = 0; k < m.anomalies && k < MEMMAP_ANOMALY_LOG; k++)
		CHECK(m.log[k].kind < ANOM_KIND_COUNT && m.anomaly_count[m.log[k].kind] > 0);

	/* (e) every elementary interval against what its descriptors allow. */
	u128 fake_lo = fake_set ? up(fake, PAGE_SIZE) : TWO64;	/* wholly at or above fake_start */
	u128 fake_hi = fake_set ? down(fake, PAGE_SIZE) : TWO64;	/* wholly below it */
	u64 fake_min = 0, fake_slack = 0, unacc = 0, suspect = 0;
	u32 nunacc = 0;
	bool valid15 = false;
	const u32 USABLE = 1u << RANGE_USABLE, UNACC = 1u << RANGE_UNACCEPTED;
	const u32 SUSPECT = 1u << RANGE_SUSPECT;

	for (unsigned c = 0; c + 1 < nc; c++) {
		u128 p = cuts[c], q = cuts[c + 1];

		if (p == q || p >= TWO64)
			continue;
		if (q > TWO64)
			q = TWO64;
		/* memmap_find agrees with our own lookup at both ends. */
		CHECK(memmap_find(&m, (u64)p) == model_find((u64)p));
		CHECK(memmap_find(&m, (u64)(q - 1)) == model_find((u64)(q - 1)));
		if (p >= ulim) {
			CHECK(no_output(p, q));
			continue;
		}

		unsigned cover = 0;
		bool doubtful = false, mixed = false;
		u32 type = 0;

		for (unsigned i = 0; i < nd; i++) {
			if (d[i].s > p || d[i].e < q)
				continue;
			if (cover++ && d[i].type != type)
				mixed = true;
			type = d[i].type;
			doubtful |= d[i].doubtful;
		}
		if (cover == 0) {
			CHECK(no_output(p, q));
		} else if (doubtful || mixed) {
			/* Never used, never accepted: its state is in doubt. */
			CHECK(covered_by(p, q, SUSPECT));
		} else if (type == EFI_UNACCEPTED_MEMORY) {
			valid15 = true;
			CHECK(covered_by(p, q, can_accept ? UNACC : SUSPECT));
		} else if (type == EFI_CONVENTIONAL_MEMORY) {
			if (p >= fake_lo) {
				CHECK(covered_by(p, q, UNACC));
				fake_min += (u64)(q - p);
			} else if (q <= fake_hi) {
				CHECK(covered_by(p, q, USABLE));
			} else {
				/* The page that holds an unaligned fake_start: either is safe. */
				CHECK(q - p == PAGE_SIZE);
				CHECK(covered_by(p, q, USABLE) || covered_by(p, q, UNACC));
				fake_slack = PAGE_SIZE;
			}
		} else {
			CHECK(covered_by(p, q, 1u << model_kind(type)));
		}
	}
	CHECK(can_accept || !valid15 || m.anomaly_count[ANOM_UNACCEPTED_NO_PLATFORM] == 1);

	for (unsigned i = 0; i < m.nranges; i++) {
		const struct mem_range *r = &m.ranges[i];

		if (r->kind == RANGE_UNACCEPTED) {
			unacc += r->end - r->start;
			nunacc++;
		}
		if (r->kind == RANGE_SUSPECT)
			suspect += r->end - r->start;
	}
	CHECK(m.unaccepted_bytes == unacc && m.unaccepted_ranges == nunacc);
	CHECK(m.suspect_bytes == suspect);
	CHECK(m.fake_unaccepted_bytes >= fake_min && m.fake_unaccepted_bytes <= fake_min + fake_slack);
	free(cuts);
	free(d);

	check_bitmap(&m);
out:
	free(scratch);
	free(ranges);
	return 0;
}
