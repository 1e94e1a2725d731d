/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the page allocator (mm/page_alloc.c) and the policies, against a reference model. */
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "kernel/cmdline.h"
#include "mm/bitmap.h"
#include "mm/memmap.h"
#include "mm/accept.h"
#include "mm/page_alloc.h"
#include "mm/palloc_internal.h"
#include "mm/policy.h"
#include "tests/unit/unit.h"

/*
 * Unaccepted memory is poisoned for AddressSanitizer until the mock platform accepts it,
 * so any touch of it by the allocator (a free-list node, a meta page) is reported at
 * the faulting instruction; so are reserved holes, which it must never touch either.
 */
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif


/* Fake physical memory starts here: page 0 (which palloc never hands out) is not in it. */
#define FB (1 * GiB)
#define MAX_RANGES 32
#define MAX_RES 8
#define MAX_EDGES 32
#define MAX_CALLS 8192
#define LAT_CAP 4096
#define META_MAGIC 0x4d455441u	/* "META": the first word of a meta page (mm/page_alloc.c) */

/* Per-page state of the reference model. */
#define PS_BOOT_FREE 0x01	/* usable or reclaimable, not reserved: free after populate */
#define PS_UNACCEPTED 0x02	/* RANGE_UNACCEPTED in the map */
#define PS_ASKED 0x04		/* the platform has been asked to accept it */
#define PS_ACCEPTED 0x08	/* ... and it did */
#define PS_FAIL 0x10		/* the mock platform refuses any accept that touches it */
#define PS_MAP 0x20		/* in a range of the map */

struct accept_call {
	u64 start, end;
	int rc;
};

/* One allocator instance over fake memory, and everything the model knows about it. */
static struct {
	struct mem_range ranges[MAX_RANGES];
	struct memmap map;
	struct palloc_reserved res[MAX_RES];
	unsigned nres;
	struct unaccepted_bitmap bm;
	void *bm_storage;
	struct palloc_reserved edges[MAX_EDGES];
	unsigned nedges;
	u8 *raw;		/* the mapping; arena is its first 2 MiB aligned byte */
	u64 raw_bytes;
	u8 *arena;		/* backs fake physical [FB, FB + span) */
	u64 span;
	bool backed;		/* poison unaccepted memory, fill accepted memory, stamp blocks */
	u8 *ps;			/* PS_* per page */
	u32 *owner;		/* per page: id of the live block holding it, 0 = none */
	void *meta[4 * PALLOC_MAX_ZONES];
	unsigned nmeta;
	/*
	 * What meta_alloc_uninit handed out, in order: per zone, its info array (a u16 per
	 * unit), then its free-unit bits (a bit per unit).
	 */
	u8 *info[2 * PALLOC_MAX_ZONES];
	u64 info_bytes[2 * PALLOC_MAX_ZONES];
	unsigned ninfo;
	u8 info_fill;		/* what they hold before the allocator writes: INFO_GARBAGE unless set */
	bool info_fill_set;
	u32 lat[LAT_CAP];
	u64 clock;
	struct accept_call calls[MAX_CALLS];
	u64 ncalls;
	u64 accepted_bytes;	/* what the mock accepted successfully */
	u64 bad_accepts;	/* pages asked twice, or asked though never unaccepted */
	u64 boot_free_bytes;
} fx;

struct block {
	u64 addr;
	u32 order, id;
};

/* Live blocks of the model. */
static struct block *live;
static u64 nlive, live_cap, live_bytes;
static u32 next_id;

static u64 pg(u64 pa)
{
	return (pa - FB) >> PAGE_SHIFT;
}

static void *va(u64 pa)
{
	return fx.arena + (pa - FB);
}

/* ------------------------------------------------------------------ the mock platform */

static int mock_accept(void *ctx, u64 start, u64 end)
{
	u64 bad = 0, first_bad = 0;
	int rc = 0;

	EXPECT(ctx == &fx);
	if (!EXPECT(IS_ALIGNED(start, PAGE_SIZE) && IS_ALIGNED(end, PAGE_SIZE) && start < end &&
		    start >= FB && end - FB <= fx.span)) {
		fx.bad_accepts++;
		return -1;
	}
	/* Accepting a page twice is the attack the bitmap exists to prevent. */
	for (u64 p = pg(start); p < pg(end); p++) {
		if (!(fx.ps[p] & PS_UNACCEPTED) || (fx.ps[p] & PS_ASKED)) {
			if (!bad++)
				first_bad = FB + (p << PAGE_SHIFT);
		}
		if (fx.ps[p] & PS_FAIL)
			rc = -1;
		fx.ps[p] |= PS_ASKED;
	}
	if (bad) {
		printf("  mock: accept [%llx, %llx): %llu pages not unaccepted or asked before, first %llx\n",
		       start, end, bad, first_bad);
		fx.bad_accepts += bad;
		EXPECT(!"double accept");
	}
	/* The log holds every call of these tests; a test that makes more is broken. */
	if (EXPECT(fx.ncalls < MAX_CALLS))
		fx.calls[fx.ncalls++] = (struct accept_call){ start, end, rc };
	if (rc)
		return rc;
	for (u64 p = pg(start); p < pg(end); p++)
		fx.ps[p] |= PS_ACCEPTED;
	fx.accepted_bytes += end - start;
	if (fx.backed) {
		/* TDX hands accepted memory over zeroed. */
		UNPOISON(va(start), end - start);
		memset(va(start), 0, end - start);
	}
	return 0;
}

static void *mock_meta_alloc(u64 bytes)
{
	void *p = calloc(1, bytes ? bytes : 1);

	if (!p || fx.nmeta == ARRAY_SIZE(fx.meta)) {
		fprintf(stderr, "test_page_alloc: meta_alloc(%llu) failed\n", bytes);
		abort();
	}
	fx.meta[fx.nmeta++] = p;
	return p;
}

/*
 * The allocator initialises each page of its info array before it reads it, so the mock
 * hands the array over full of garbage (every test here runs on it), page aligned as
 * the kernel's early allocator does, and remembers where it is for the tests that check
 * which pages were written.
 */
#define INFO_GARBAGE 0xa5
#define INFO_PAGE_UNITS (PAGE_SIZE / sizeof(u16))	/* units per info page (mm/page_alloc.c) */

static void *mock_meta_alloc_uninit(u64 bytes)
{
	u64 size = ALIGN_UP(bytes ? bytes : 1, PAGE_SIZE);
	void *p = aligned_alloc(PAGE_SIZE, size);

	if (!p || fx.nmeta == ARRAY_SIZE(fx.meta) || fx.ninfo == ARRAY_SIZE(fx.info)) {
		fprintf(stderr, "test_page_alloc: meta_alloc_uninit(%llu) failed\n", bytes);
		abort();
	}
	memset(p, fx.info_fill_set ? fx.info_fill : INFO_GARBAGE, size);
	fx.meta[fx.nmeta++] = p;
	fx.info[fx.ninfo] = p;
	fx.info_bytes[fx.ninfo++] = bytes;
	return p;
}

static u64 mock_now(void)
{
	return fx.clock += 1000;
}

/* ------------------------------------------------------------------ fixture */

/*
 * (Un)poison what is off limits until accepted: in every unit the map touches, each page
 * that is not free at boot. Units wholly outside the map are left alone: nothing may
 * reach them, and poisoning a gap of gigabytes would cost as much shadow memory.
 */
static void poison_map(bool on)
{
	const u64 per_unit = UNIT_SIZE / PAGE_SIZE;

	for (u64 u = 0; u < fx.span >> PAGE_SHIFT; u += per_unit) {
		bool in_map = false;

		for (u64 p = u; p < u + per_unit; p++)
			in_map |= (fx.ps[p] & PS_MAP) != 0;
		for (u64 p = u, q; in_map && p < u + per_unit; p = q) {
			bool off = !(fx.ps[p] & PS_BOOT_FREE);

			for (q = p + 1; q < u + per_unit && !(fx.ps[q] & PS_BOOT_FREE) == off; q++)
				;
			if (off && on)
				POISON(fx.arena + (p << PAGE_SHIFT), (q - p) << PAGE_SHIFT);
			else if (off)
				UNPOISON(fx.arena + (p << PAGE_SHIFT), (q - p) << PAGE_SHIFT);
		}
	}
}

static void fixture_free(void)
{
	if (fx.raw) {
		if (fx.backed)
			poison_map(false);
		munmap(fx.raw, fx.raw_bytes);
	}
	for (unsigned i = 0; i < fx.nmeta; i++)
		free(fx.meta[i]);
	free(fx.ps);
	free(fx.owner);
	free(fx.bm_storage);
	free(live);
	memset(&fx, 0, sizeof(fx));
	live = NULL;
	nlive = live_cap = live_bytes = 0;
	next_id = 0;
}

/*
 * Start a map over fake physical [FB, FB + span). The arena is reserved address space:
 * only what the allocator or the test touches costs memory, so spans of a few GiB are fine
 * when `backed` is false (nothing is poisoned, filled or stamped then).
 */
static void map_begin(u64 span, bool backed)
{
	/* The previous test may have left through a panic: clean up here. */
	fixture_free();
	fx.span = span;
	fx.backed = backed;
	fx.raw_bytes = ALIGN_UP(span, UNIT_SIZE) + UNIT_SIZE;
	fx.raw = mmap(NULL, fx.raw_bytes, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	fx.ps = calloc(span >> PAGE_SHIFT, 1);
	fx.owner = calloc(span >> PAGE_SHIFT, sizeof(u32));
	if (fx.raw == MAP_FAILED || !fx.ps || !fx.owner) {
		fprintf(stderr, "test_page_alloc: no memory for a %llu MiB arena\n", span >> 20);
		abort();
	}
	fx.arena = (u8 *)(uintptr_t)ALIGN_UP((u64)(uintptr_t)fx.raw, UNIT_SIZE);
	fx.map.ranges = fx.ranges;
	fx.map.cap = MAX_RANGES;
}

/* Add [FB + s, FB + e) to the map; ranges must come in address order. */
static void map_add(u64 s, u64 e, u32 kind)
{
	if (fx.map.nranges == MAX_RANGES)
		abort();
	fx.ranges[fx.map.nranges++] = (struct mem_range){ FB + s, FB + e, kind, 0 };
}

/* A boot-time allocation inside usable memory: never free. */
static void map_reserve(u64 s, u64 e)
{
	fx.res[fx.nres++] = (struct palloc_reserved){ FB + s, FB + e };
}

/* The mock refuses every accept that touches [FB + s, FB + e). */
static void map_fail(u64 s, u64 e)
{
	for (u64 p = pg(FB + s); p < pg(FB + e); p++)
		fx.ps[p] |= PS_FAIL;
}

static void on_edge(void *ctx, u64 start, u64 end)
{
	EXPECT(ctx == &fx);
	if (fx.nedges == MAX_EDGES)
		abort();
	fx.edges[fx.nedges++] = (struct palloc_reserved){ start, end };
}

/* The per-CPU cache size fixture_start() gives the allocator (0: none, the default). */
static unsigned fixture_cache;

/* Build the bitmap, bring the allocator up as kernel/memory.c does; no policy hooks yet. */
static void fixture_start(void)
{
	struct bitmap_layout l;
	struct palloc_env env = {
		.accept = mock_accept,
		.ctx = &fx,
		.meta_alloc = mock_meta_alloc,
		.meta_alloc_uninit = mock_meta_alloc_uninit,
		.now_ns = mock_now,
		.cpu_cache_high = fixture_cache,
	};

	for (unsigned i = 0; i < fx.map.nranges; i++) {
		const struct mem_range *r = &fx.ranges[i];
		u8 bit = PS_MAP | (r->kind == RANGE_UNACCEPTED ? PS_UNACCEPTED :
			 r->kind == RANGE_USABLE || r->kind == RANGE_RECLAIMABLE ? PS_BOOT_FREE : 0);

		for (u64 p = pg(r->start); p < pg(r->end); p++)
			fx.ps[p] |= bit;
	}
	for (unsigned i = 0; i < fx.nres; i++)
		for (u64 p = pg(fx.res[i].start); p < pg(fx.res[i].end); p++)
			fx.ps[p] &= (u8)~PS_BOOT_FREE;
	for (u64 p = 0; p < fx.span >> PAGE_SHIFT; p++)
		if (fx.ps[p] & PS_BOOT_FREE)
			fx.boot_free_bytes += PAGE_SIZE;
	if (fx.backed)
		poison_map(true);

	l = bitmap_layout(&fx.map);
	fx.bm_storage = malloc(bitmap_storage_bytes(l) + 8);
	bitmap_build(&fx.bm, &fx.map, fx.bm_storage, on_edge, &fx);
	env.phys_offset = (u64)(uintptr_t)fx.arena - FB;
	palloc_init(&fx.map, &fx.bm, &env, fx.lat, LAT_CAP);
	palloc_populate(&fx.map, fx.res, fx.nres);
	/* Round inward: the partial units wait in the allocator's table (kernel/memory.c). */
	for (unsigned i = 0; i < fx.nedges; i++)
		if (!palloc_add_edge(fx.edges[i].start, fx.edges[i].end))
			palloc_accept_edge(fx.edges[i].start, fx.edges[i].end);
}

static void use_policy(u32 policy, u64 ahead)
{
	policy_init(policy, ahead);
	palloc_set_hooks(policy_refill, policy == POLICY_AHEAD ? policy_after_alloc : NULL);
}

/* ------------------------------------------------------------------ the model */

static u64 stamp(u64 pa, u32 id)
{
	return (pa * 0x9e3779b97f4a7c15ULL) ^ ((u64)id << 40) ^ 0x5a17;
}

/* Check a block palloc just handed out, and record it as live. */
static bool take(u64 a, unsigned order)
{
	u64 size = PAGE_SIZE << order, owned = 0, unaccepted = 0;
	bool ok = true;

	ok &= EXPECT(IS_ALIGNED(a, size));
	ok &= EXPECT(a >= FB && a - FB <= fx.span && fx.span - (a - FB) >= size);
	if (!ok) {
		printf("  block %llx of order %u is misaligned or outside managed memory\n", a, order);
		return false;
	}
	ok &= EXPECT_EQ(palloc_block_order(a), order);
	/* Never inside a unit whose bit is still set. */
	for (u64 u = ALIGN_DOWN(a, UNIT_SIZE); u < a + size; u += UNIT_SIZE)
		ok &= EXPECT(!bitmap_test(&fx.bm, u));
	for (u64 p = pg(a); p < pg(a + size); p++) {
		owned += fx.owner[p] != 0;
		unaccepted += !(fx.ps[p] & (PS_BOOT_FREE | PS_ACCEPTED));
	}
	if (owned || unaccepted) {
		printf("  block %llx order %u: %llu pages already handed out, %llu pages never accepted\n",
		       a, order, owned, unaccepted);
		EXPECT(!"block overlaps a live block or unaccepted memory");
		return false;
	}
	if (!ok)
		return false;
	if (nlive == live_cap) {
		live_cap = live_cap ? 2 * live_cap : 1024;
		live = realloc(live, live_cap * sizeof(*live));
		if (!live)
			abort();
	}
	live[nlive++] = (struct block){ a, order, ++next_id };
	live_bytes += size;
	for (u64 p = pg(a); p < pg(a + size); p++) {
		u64 pa = FB + (p << PAGE_SHIFT);

		fx.owner[p] = next_id;
		if (fx.backed) {
			/* Both ends of each page: catches a free-list node or meta write into a live block. */
			*(u64 *)va(pa) = stamp(pa, next_id);
			*(u64 *)va(pa + PAGE_SIZE - 8) = ~stamp(pa, next_id);
		}
	}
	return true;
}

/* Free live block i through palloc, after checking nobody wrote into it. */
static bool release(u64 i)
{
	struct block b = live[i];
	u64 size = PAGE_SIZE << b.order, smashed = 0;

	for (u64 p = pg(b.addr); p < pg(b.addr + size); p++) {
		u64 pa = FB + (p << PAGE_SHIFT);

		if (fx.backed && (*(u64 *)va(pa) != stamp(pa, b.id) ||
				  *(u64 *)va(pa + PAGE_SIZE - 8) != ~stamp(pa, b.id)))
			smashed++;
		fx.owner[p] = 0;
	}
	if (!EXPECT_EQ(smashed, 0)) {
		printf("  live block %llx order %u was written by someone else\n", b.addr, b.order);
		return false;
	}
	palloc_free(b.addr);
	live[i] = live[--nlive];
	live_bytes -= size;
	return EXPECT_EQ(palloc_block_order(b.addr), -1);
}

static void release_all(void)
{
	while (nlive)
		if (!release(unit_rand() % nlive))
			return;
}

static u64 free_bytes_by_order(void)
{
	u64 bytes = 0;

	for (unsigned k = 0; k <= PALLOC_MAX_ORDER; k++)
		bytes += palloc_free_blocks(k) * (PAGE_SIZE << k);
	return bytes;
}

/* The counters against each other and against the model. */
static bool check_counters(void)
{
	const struct palloc_stats *s = palloc_stats();
	bool ok = true;

	ok &= EXPECT_EQ(palloc_stats()->free_bytes, palloc_count_free());
	ok &= EXPECT_EQ(palloc_stats()->free_bytes, free_bytes_by_order());
	ok &= EXPECT_EQ(palloc_stats()->free_bytes + live_bytes + s->meta_bytes, s->managed_bytes);
	ok &= EXPECT_EQ(s->managed_bytes, fx.boot_free_bytes + fx.accepted_bytes);
	ok &= EXPECT_EQ(s->unaccepted_bytes, bitmap_count(&fx.bm) * UNIT_SIZE);
	ok &= EXPECT_EQ(bitmap_recount(&fx.bm), bitmap_count(&fx.bm));
	ok &= EXPECT_EQ(s->accepted_bytes, fx.accepted_bytes);
	ok &= EXPECT_EQ(s->accept_calls, fx.ncalls);
	ok &= EXPECT_EQ(s->accept_lat.count, fx.ncalls);
	ok &= EXPECT_EQ(palloc_stats()->allocs - palloc_stats()->frees, nlive);
	ok &= EXPECT_EQ(fx.bad_accepts, 0);
	/*
	 * A set bit means nobody ever asked for any page of the unit; a clear bit on a unit
	 * that is wholly unaccepted in the map, that the platform was asked for it.
	 */
	for (u64 u = FB; u < FB + fx.span; u += UNIT_SIZE) {
		bool asked = false, whole = true;

		for (u64 p = pg(u); p < pg(u + UNIT_SIZE); p++) {
			bool in = p < fx.span >> PAGE_SHIFT;

			asked |= in && (fx.ps[p] & PS_ASKED);
			whole &= in && (fx.ps[p] & PS_UNACCEPTED);
		}
		if (bitmap_test(&fx.bm, u) && asked) {
			printf("  unit %llx is still unaccepted in the bitmap but was accepted\n", u);
			ok = EXPECT(!"bit set for an accepted unit");
		}
		if (whole && !bitmap_test(&fx.bm, u) && !asked) {
			printf("  unit %llx was cleared in the bitmap but never accepted\n", u);
			ok = EXPECT(!"bit clear for a unit never accepted");
		}
	}
	return ok;
}

/* Units whose every page the allocator manages, and units it manages only part of. */
static void count_units(u64 *whole, u64 *partial)
{
	*whole = *partial = 0;
	for (u64 u = 0; u < fx.span >> PAGE_SHIFT; u += UNIT_SIZE / PAGE_SIZE) {
		u64 n = 0;

		for (u64 p = u; p < u + UNIT_SIZE / PAGE_SIZE; p++)
			n += (fx.ps[p] & (PS_BOOT_FREE | PS_ACCEPTED)) != 0;
		*whole += n == UNIT_SIZE / PAGE_SIZE;
		*partial += n && n < UNIT_SIZE / PAGE_SIZE;
	}
}

/* ------------------------------------------------------------------ the stress map */

/*
 * 128 MiB at 1 GiB, offsets in MiB (u = 2 MiB unit):
 *   [0, 20K)          reserved           u0 partial: meta page at its page 5
 *   [20K, 6.5M)       usable             u1, u2 whole; u3 begins usable ...
 *   [6.5M, 40.25M)    unaccepted         ... and ends as an edge: u3 collapses; u4..u19 in the bitmap; edge in u20
 *   [40.25M, 40.5M)   reserved           a hole in the middle of u20
 *   [40.5M, 42M)      usable             rest of u20
 *   [42M, 50M)        reclaimable        with a boot-time allocation in the middle of u22
 *   [50M, 64M)        unaccepted         u25..u31
 *   [64M, 66M)        reserved           u32 is not RAM
 *   [66M, 127M)       unaccepted         u33..u62; edge [126M, 127M) in u63
 *   [127M, 127.0625M) loader image       never free; the rest of u63 is not RAM
 */
#define STRESS_SPAN (128 * MiB)
/* The unaccepted pieces of u3, u20 and u63. */
#define STRESS_EDGES (1 * MiB + 512 * KiB + 256 * KiB + 1 * MiB)

static void stress_map(void)
{
	map_begin(STRESS_SPAN, true);
	map_add(0, 20 * KiB, RANGE_RESERVED);
	map_add(20 * KiB, 6 * MiB + 512 * KiB, RANGE_USABLE);
	map_add(6 * MiB + 512 * KiB, 40 * MiB + 256 * KiB, RANGE_UNACCEPTED);
	map_add(40 * MiB + 256 * KiB, 40 * MiB + 512 * KiB, RANGE_RESERVED);
	map_add(40 * MiB + 512 * KiB, 42 * MiB, RANGE_USABLE);
	map_add(42 * MiB, 50 * MiB, RANGE_RECLAIMABLE);
	map_reserve(44 * MiB + 8 * KiB, 44 * MiB + 24 * KiB);
	map_add(50 * MiB, 64 * MiB, RANGE_UNACCEPTED);
	map_add(64 * MiB, 66 * MiB, RANGE_RESERVED);
	map_add(66 * MiB, 127 * MiB, RANGE_UNACCEPTED);
	map_add(127 * MiB, 127 * MiB + 64 * KiB, RANGE_IMAGE);
}

static u64 env_u64(const char *name, u64 def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Orders 0..9 weighted toward small blocks, in thousandths. */
static unsigned pick_order(void)
{
	static const u16 weight[PALLOC_MAX_ORDER + 1] = { 400, 150, 100, 90, 70, 50, 40, 35, 35, 30 };
	u64 r = unit_rand() % 1000;

	for (unsigned k = 0; k <= PALLOC_MAX_ORDER; k++) {
		if (r < weight[k])
			return k;
		r -= weight[k];
	}
	return 0;
}

enum stress_mode { STRESS_LAZY, STRESS_AHEAD, STRESS_EAGER };

/* Is [start, end) exactly one of the partial units bitmap_build reported? */
static bool is_edge(u64 start, u64 end)
{
	for (unsigned i = 0; i < fx.nedges; i++)
		if (fx.edges[i].start == start && fx.edges[i].end == end)
			return true;
	return false;
}

/* Up to n of the lowest unaccepted units, in order. */
static unsigned lowest_units(u64 *out, unsigned n)
{
	unsigned k = 0;
	u64 from = 0;

	while (k < n && bitmap_next(&fx.bm, from, &out[k]))
		from = out[k++] + UNIT_SIZE;
	return k;
}

/*
 * Random allocations and frees in phases that grow and shrink the live set, so that
 * memory runs out now and then. Every operation is checked; the counters every 4096.
 */
static bool stress(u64 ops, enum stress_mode mode, u64 ahead, u64 seed, u64 *ooms)
{
	const struct palloc_stats *s = palloc_stats();
	u64 phase_end = 0, calls_at_start = fx.ncalls;
	bool grow = false;	/* flipped at op 0: the first phase grows */

	unit_srand(seed);
	for (u64 op = 0; op < ops; op++) {
		if (op == phase_end) {
			grow = !grow;
			phase_end = op + 256 + unit_rand() % 4096;
		}
		if (nlive && unit_rand() % 100 >= (grow ? 70u : 30u)) {
			if (!release(unit_rand() % nlive))
				return false;
		} else {
			unsigned order = pick_order(), nlow;
			u64 low[4], calls = fx.ncalls, fails = s->alloc_failures;
			bool had_block = false;

			for (unsigned k = order; k <= PALLOC_MAX_ORDER; k++)
				had_block |= palloc_free_blocks(k) != 0;
			nlow = lowest_units(low, ARRAY_SIZE(low));
			u64 a = palloc_alloc(order);

			if (mode == STRESS_LAZY && fx.ncalls != calls) {
				/* Lazy: only when nothing fits, one unit per call, lowest first. */
				bool ok = EXPECT(!had_block);

				/*
				 * A second unit only when the platform refused the first; the
				 * partial units only once no whole unit is left, in address order.
				 */
				for (u64 c = calls; ok && c < fx.ncalls; c++)
					if (c - calls < nlow)
						ok = EXPECT_EQ(fx.calls[c].start, low[c - calls]) &&
						     EXPECT_EQ(fx.calls[c].end - fx.calls[c].start, UNIT_SIZE) &&
						     EXPECT(c + 1 == fx.ncalls || fx.calls[c].rc);
					else
						ok = EXPECT(nlow < ARRAY_SIZE(low)) &&
						     EXPECT(is_edge(fx.calls[c].start, fx.calls[c].end)) &&
						     EXPECT(c == calls + nlow || fx.calls[c].start > fx.calls[c - 1].start);
				if (!ok)
					return false;
			}
			if (mode == STRESS_EAGER && !EXPECT_EQ(fx.ncalls, calls_at_start))
				return false;
			if (!a) {
				/* Out of memory only once everything is accepted and nothing fits. */
				bool ok = EXPECT_EQ(bitmap_count(&fx.bm), 0) &&
					  EXPECT_EQ(s->edge_unaccepted_bytes, 0) &&
					  EXPECT_EQ(s->alloc_failures, fails + 1);

				for (unsigned k = order; ok && k <= PALLOC_MAX_ORDER; k++)
					ok = EXPECT_EQ(palloc_free_blocks(k), 0);
				if (!ok)
					return false;
				(*ooms)++;
			} else {
				if (!take(a, order))
					return false;
				if (mode == STRESS_AHEAD && bitmap_count(&fx.bm) &&
				    !EXPECT(palloc_stats()->free_bytes >= ahead))
					return false;
			}
		}
		if (op % 4096 == 4095 && !check_counters())
			return false;
	}
	return check_counters();
}

static u64 stress_ops(void)
{
	return env_u64("PALLOC_STRESS_OPS", 1000000);
}

static u64 stress_seed(void)
{
	return env_u64("PALLOC_STRESS_SEED", 0x5eed);
}

static void stress_report(const char *name, u64 ops, u64 ooms, double t0)
{
	printf("  %s: %llu ops (PALLOC_STRESS_OPS, PALLOC_STRESS_SEED=%#llx), %llu out of memory, %.2f s\n",
	       name, ops, stress_seed(), ooms, now_s() - t0);
}

/* ------------------------------------------------------------------ stress tests */

/*
 * Memory runs out within a few thousand operations, after which nothing is left to
 * accept; so the lazy stress starts over on a fresh allocator in epochs, each accepting
 * its units among different fragmentation.
 */
#define EPOCHS 8

static void stress_lazy(const char *name, u64 ops, unsigned cache)
{
	u64 whole, partial, ooms = 0;
	double t0 = now_s();

	for (u64 e = 0; e < EPOCHS; e++) {
		stress_map();
		/* One unit the platform refuses: it must be lost, not handed out. */
		map_fail(60 * MiB, 62 * MiB);
		fixture_cache = cache;
		fixture_start();
		use_policy(POLICY_LAZY, 0);
		ASSERT(check_counters());
		/*
		 * Meta pages in u0, u3, u20, u22; whole: u1, u2, u21, u23, u24. The edges in
		 * u3, u20 and u63 wait: u3 stays split and u63 unmanaged until they are accepted.
		 */
		ASSERT_EQ(palloc_stats()->meta_bytes, 4 * PAGE_SIZE);
		ASSERT_EQ(palloc_free_blocks(PALLOC_MAX_ORDER), 5);
		ASSERT_EQ(palloc_stats()->edge_unaccepted_bytes, STRESS_EDGES);
		ASSERT_EQ(palloc_stats()->accepted_bytes, 0);
		ASSERT_EQ(bitmap_count(&fx.bm), 16 + 7 + 30);
		ASSERT(stress(ops / EPOCHS + (e < ops % EPOCHS), STRESS_LAZY, 0, stress_seed() + e, &ooms));
	}
	stress_report(name, ops, ooms, t0);
	/* Memory ran out several times, so every unit and every edge has been reached. */
	EXPECT_EQ(bitmap_count(&fx.bm), 0);
	EXPECT_EQ(palloc_stats()->accept_failures, 1);
	EXPECT_EQ(palloc_stats()->edge_unaccepted_bytes, 0);
	EXPECT_EQ(palloc_stats()->edge_accepted_bytes, STRESS_EDGES);
	EXPECT_EQ(palloc_stats()->accepted_by_path[ACCEPT_LAZY],
		  (16 + 7 + 30 - 1) * UNIT_SIZE + STRESS_EDGES);
	release_all();
	ASSERT(check_counters());
	/* Freed units wait to be collapsed until a 2 MiB request needs them; trim does all. */
	palloc_trim();
	ASSERT(check_counters());
	count_units(&whole, &partial);
	EXPECT_EQ(whole, 6 + 16 + 7 + 30 - 1);
	EXPECT_EQ(palloc_stats()->meta_bytes, partial * PAGE_SIZE);
	EXPECT_EQ(palloc_free_blocks(PALLOC_MAX_ORDER), whole);
}

TEST(palloc_stress_lazy)
{
	stress_lazy("lazy stress", stress_ops(), 0);
}

/*
 * The same with the per-CPU cache on (one CPU): lazy acceptance still starts only when
 * nothing this CPU can reach fits, the cache included, and the counters count it as free.
 */
TEST(palloc_stress_lazy_cpu_cache)
{
	stress_lazy("lazy stress, CPU cache", stress_ops() / 4, PALLOC_CPU_CACHE_MAX);
	fixture_cache = 0;
}

TEST(palloc_stress_ahead)
{
	const u64 ahead = 6 * MiB;
	u64 ooms = 0;
	double t0 = now_s();

	stress_map();
	fixture_start();
	use_policy(POLICY_AHEAD, ahead);
	policy_boot(NULL);
	EXPECT(palloc_stats()->free_bytes >= ahead);
	ASSERT(stress(stress_ops() / 4, STRESS_AHEAD, ahead, stress_seed(), &ooms));
	stress_report("ahead stress", stress_ops() / 4, ooms, t0);
	EXPECT(palloc_stats()->accepted_by_path[ACCEPT_AHEAD] > 0);
}

static u64 progress_calls, progress_done, progress_gap;

static void on_progress(u64 done, u64 total)
{
	EXPECT(done > progress_done && done <= total);
	progress_calls++;
	progress_gap = MAX(progress_gap, done - progress_done);
	progress_done = done;
}

/*
 * Run eager acceptance (mm/policy.c) and check its platform calls against the units that
 * were unaccepted: naturally aligned chunks of 1 GiB, halved while a chunk is more than a
 * tenth of the work, so one call per run of contiguous units, cut at every chunk boundary.
 */
static bool boot_eager_and_check(void)
{
	u64 n = bitmap_count(&fx.bm), total = n * UNIT_SIZE, chunk = GiB, c = fx.ncalls, from = 0;
	u64 *units = malloc((n + 1) * sizeof(u64));
	bool ok = true;

	while (chunk > UNIT_SIZE && chunk > total / 10)
		chunk >>= 1;
	for (u64 i = 0; i < n; i++) {
		if (!bitmap_next(&fx.bm, from, &units[i]))
			abort();
		from = units[i] + UNIT_SIZE;
	}
	u64 edge_bytes = palloc_stats()->edge_unaccepted_bytes, pending[MAX_EDGES][2], npending = 0;

	/* The edges still pending (all but those a full table had accepted at boot). */
	for (unsigned i = 0; i < fx.nedges; i++)
		if (!(fx.ps[pg(fx.edges[i].start)] & PS_ASKED)) {
			pending[npending][0] = fx.edges[i].start;
			pending[npending++][1] = fx.edges[i].end;
		}
	progress_calls = progress_done = progress_gap = 0;
	policy_boot(on_progress);
	policy_boot_edges();
	for (u64 i = 0; ok && i < n; c++) {
		u64 s = units[i], e = s + UNIT_SIZE;

		for (i++; i < n && units[i] == e && !IS_ALIGNED(e, chunk); i++)
			e += UNIT_SIZE;
		ok = EXPECT(c < fx.ncalls) && EXPECT_EQ(fx.calls[c].start, s) &&
		     EXPECT_EQ(fx.calls[c].end, e);
	}
	free(units);
	/* Then every pending edge, in address order: eager leaves nothing unaccepted. */
	for (u64 i = 0; ok && i < npending; i++, c++)
		ok = EXPECT(c < fx.ncalls) && EXPECT_EQ(fx.calls[c].start, pending[i][0]) &&
		     EXPECT_EQ(fx.calls[c].end, pending[i][1]);
	ok = ok && EXPECT_EQ(fx.ncalls, c);
	ok = ok && EXPECT_EQ(bitmap_count(&fx.bm), 0);
	ok = ok && EXPECT_EQ(palloc_stats()->edge_unaccepted_bytes, 0);
	ok = ok && EXPECT_EQ(palloc_stats()->accepted_by_path[ACCEPT_EAGER], total + edge_bytes);
	/* Progress: the last call reports everything; no stretch of more than 10% plus a chunk. */
	ok = ok && EXPECT_EQ(progress_done, total);
	ok = ok && EXPECT(progress_gap <= total / 10 + chunk);
	return ok;
}

TEST(palloc_stress_eager)
{
	u64 ooms = 0;
	double t0 = now_s();

	stress_map();
	fixture_start();
	use_policy(POLICY_EAGER, 0);
	/* 53 units: 8 MiB chunks. */
	ASSERT(boot_eager_and_check());
	EXPECT_EQ(fx.ncalls, 4 + 2 + 8 + 3);	/* the chunks, then the three edges */
	ASSERT(check_counters());
	ASSERT(stress(stress_ops() / 4, STRESS_EAGER, 0, stress_seed(), &ooms));
	stress_report("eager stress", stress_ops() / 4, ooms, t0);
	EXPECT_EQ(palloc_stats()->accepted_by_path[ACCEPT_LAZY], 0);
}

/*
 * Two zones (a gap of 2 GiB between them), with lazy acceptance running through the
 * first into the second; the second ends in a partial unit.
 */
TEST(palloc_stress_two_zones)
{
	u64 ooms = 0;
	double t0 = now_s();

	map_begin(2 * GiB + 32 * MiB, true);
	map_add(0, 4 * MiB, RANGE_USABLE);
	map_add(4 * MiB, 32 * MiB, RANGE_UNACCEPTED);
	map_add(2 * GiB, 2 * GiB + 30 * MiB, RANGE_UNACCEPTED);
	map_add(2 * GiB + 30 * MiB, 2 * GiB + 31 * MiB, RANGE_USABLE);
	fixture_start();
	use_policy(POLICY_LAZY, 0);
	ASSERT_EQ(bitmap_count(&fx.bm), 14 + 15);
	ASSERT(stress(stress_ops() / 4, STRESS_LAZY, 0, stress_seed() + 50, &ooms));
	stress_report("two-zone stress", stress_ops() / 4, ooms, t0);
	EXPECT_EQ(bitmap_count(&fx.bm), 0);
	release_all();
	palloc_trim();
	EXPECT_EQ(palloc_free_blocks(PALLOC_MAX_ORDER), 2 + 14 + 15);
	EXPECT_EQ(palloc_stats()->meta_bytes, PAGE_SIZE);
	ASSERT(check_counters());
}

TEST(palloc_out_of_memory_then_free_all_collapses_units)
{
	const struct palloc_stats *s = palloc_stats();
	u64 whole, partial, a, fails;
	unsigned order;

	stress_map();
	fixture_start();
	use_policy(POLICY_LAZY, 0);
	unit_srand(stress_seed() + 100);
	for (;;) {
		order = pick_order();
		fails = s->alloc_failures;
		a = palloc_alloc(order);
		if (!a)
			break;
		ASSERT(take(a, order));
	}
	EXPECT_EQ(bitmap_count(&fx.bm), 0);
	EXPECT_EQ(s->unaccepted_bytes, 0);
	EXPECT_EQ(s->alloc_failures, fails + 1);
	for (unsigned k = order; k <= PALLOC_MAX_ORDER; k++)
		EXPECT_EQ(palloc_free_blocks(k), 0);
	/* Fill what is left, largest first, until not even a page is free. */
	for (int k = (int)order - 1; k >= 0;) {
		a = palloc_alloc((unsigned)k);
		if (!a) {
			k--;
			continue;
		}
		ASSERT(take(a, (unsigned)k));
	}
	EXPECT_EQ(palloc_stats()->free_bytes, 0);
	EXPECT_EQ(palloc_count_free(), 0);
	ASSERT(check_counters());

	release_all();
	ASSERT(check_counters());
	count_units(&whole, &partial);
	EXPECT_EQ(whole, 6 + 16 + 7 + 30);
	EXPECT_EQ(palloc_stats()->free_bytes, s->managed_bytes - s->meta_bytes);
	/*
	 * Freed units are collapsed when a 2 MiB request needs one (no palloc_trim here):
	 * every whole unit serves one order-9 allocation, then none is left, and only the
	 * partial units keep a meta page.
	 */
	for (u64 i = 0; i < whole; i++) {
		a = palloc_alloc(PALLOC_MAX_ORDER);
		ASSERT(EXPECT(a != 0));
		ASSERT(take(a, PALLOC_MAX_ORDER));
	}
	EXPECT_EQ(palloc_alloc(PALLOC_MAX_ORDER), 0);
	EXPECT_EQ(s->meta_bytes, partial * PAGE_SIZE);
	ASSERT(check_counters());
}

/* ------------------------------------------------------------------ panics */

/* 8 MiB of usable memory at 1 GiB, nothing unaccepted. */
static void small_usable(void)
{
	map_begin(8 * MiB, true);
	map_add(0, 8 * MiB, RANGE_USABLE);
	fixture_start();
}

TEST(free_twice_panics)
{
	u64 a;

	small_usable();
	a = palloc_alloc(0);
	ASSERT(take(a, 0) && release(0));
	CHECK_PANICS(palloc_free(a), "double free");
}

/*
 * The second free of a block that merged with its lower buddy finds an inner page of a
 * free block, not a free head: it must still be named a double free.
 */
TEST(free_twice_after_merge_panics)
{
	u64 a, b, c;

	small_usable();
	a = palloc_alloc(0);
	b = palloc_alloc(0);
	c = palloc_alloc(0);
	ASSERT(a && b && c);
	/* A fresh unit hands out its pages 1, 2, 3 (page 0 holds the metadata). */
	ASSERT_EQ(b, a + PAGE_SIZE);
	ASSERT_EQ(c, b + PAGE_SIZE);
	palloc_free(b);
	palloc_free(c);		/* merges with b */
	EXPECT_EQ(palloc_block_order(c), -1);
	CHECK_PANICS(palloc_free(c), "double free");
}

TEST(free_unit_twice_panics)
{
	u64 a;

	small_usable();
	a = palloc_alloc(PALLOC_MAX_ORDER);
	ASSERT(take(a, PALLOC_MAX_ORDER) && release(0));
	CHECK_PANICS(palloc_free(a), "double free");
}

TEST(free_inside_block_panics)
{
	u64 a;

	small_usable();
	a = palloc_alloc(3);
	ASSERT(take(a, 3));
	EXPECT_EQ(palloc_block_order(a + PAGE_SIZE), -1);
	CHECK_PANICS(palloc_free(a + 2 * PAGE_SIZE), "not the start of an allocated block");
}

TEST(free_inside_unit_panics)
{
	u64 a;

	small_usable();
	a = palloc_alloc(PALLOC_MAX_ORDER);
	ASSERT(take(a, PALLOC_MAX_ORDER));
	CHECK_PANICS(palloc_free(a + 64 * PAGE_SIZE), "is not allocated");
}

TEST(free_outside_zones_panics)
{
	small_usable();
	CHECK_PANICS(palloc_free(FB + 64 * GiB), "outside every zone");
}

TEST(free_unaligned_panics)
{
	u64 a;

	small_usable();
	a = palloc_alloc(0);
	ASSERT(take(a, 0));
	CHECK_PANICS(palloc_free(a + 8), "unaligned");
}

/* The meta page is managed but was never handed out: freeing it is a foreign free. */
TEST(free_meta_page_panics)
{
	u64 a;

	small_usable();
	a = palloc_alloc(0);
	ASSERT(take(a, 0));
	ASSERT_EQ(*(u32 *)va(ALIGN_DOWN(a, UNIT_SIZE)), META_MAGIC);
	CHECK_PANICS(palloc_free(ALIGN_DOWN(a, UNIT_SIZE)), "never allocated");
}

/* Adding memory the allocator already manages is a double add, meta page included. */
TEST(add_free_twice_panics)
{
	small_usable();
	CHECK_PANICS(palloc_add_free(FB + 2 * MiB, FB + 4 * MiB), "already managed");
}

TEST(add_free_of_meta_page_panics)
{
	map_begin(4 * MiB, true);
	map_add(0, 12 * KiB, RANGE_RESERVED);
	map_add(12 * KiB, 1 * MiB, RANGE_USABLE);
	fixture_start();
	ASSERT_EQ(*(u32 *)va(FB + 12 * KiB), META_MAGIC);
	/* The meta page alone: no other page of the range could catch the double add. */
	CHECK_PANICS(palloc_add_free(FB + 12 * KiB, FB + 16 * KiB), "already managed");
}

TEST(alloc_order_too_big_panics)
{
	small_usable();
	CHECK_PANICS(palloc_alloc(PALLOC_MAX_ORDER + 1), "above the maximum");
}

/* ------------------------------------------------------------------ deterministic tests */

TEST(block_order_reports_block_heads_only)
{
	u64 a[PALLOC_MAX_ORDER + 1], u;

	small_usable();
	for (unsigned k = 0; k <= PALLOC_MAX_ORDER; k++) {
		a[k] = palloc_alloc(k);
		ASSERT(take(a[k], k));
		EXPECT_EQ(palloc_block_order(a[k]), k);
		if (k)
			EXPECT_EQ(palloc_block_order(a[k] + PAGE_SIZE), -1);
		EXPECT_EQ(palloc_block_order(a[k] + 16), -1);
	}
	u = ALIGN_DOWN(a[0], UNIT_SIZE);
	EXPECT_EQ(palloc_block_order(u), -1);			/* the meta page */
	EXPECT_EQ(palloc_block_order(FB - UNIT_SIZE), -1);	/* outside every zone */
	EXPECT_EQ(palloc_block_order(FB + 64 * GiB), -1);
	/* Whole free units. */
	for (u64 x = FB; x < FB + 8 * MiB; x += UNIT_SIZE)
		if (x != u && x != a[PALLOC_MAX_ORDER])
			EXPECT_EQ(palloc_block_order(x), -1);
	ASSERT(release(0));
	EXPECT_EQ(palloc_block_order(a[0]), -1);
}

/*
 * A unit with usable memory only in part keeps its metadata in its own first free page;
 * a unit completed by an edge collapses back into a whole free unit once the edge is
 * accepted, which lazy acceptance does only after the last whole unit.
 *   u0: [12K, 1M) usable: meta at page 3      u1: [2M, 3M) usable, upper half not RAM: meta at page 0
 *   u2: one usable page: all meta, nothing free
 *   u3: [6M, 7M) usable + [7M, 10M) unaccepted: meta at page 0 until edge [7M, 8M) completes u3;
 *   u4 in the bitmap
 */
TEST(partial_unit_meta_page_is_its_first_free_page)
{
	const struct palloc_stats *s = palloc_stats();
	u64 a, n = 0, meta[4] = { FB + 12 * KiB, FB + 2 * MiB, FB + 4 * MiB, FB + 6 * MiB }, free0;

	map_begin(16 * MiB, true);
	map_add(0, 12 * KiB, RANGE_RESERVED);
	map_add(12 * KiB, 1 * MiB, RANGE_USABLE);
	map_add(2 * MiB, 3 * MiB, RANGE_USABLE);
	map_add(4 * MiB, 4 * MiB + 4 * KiB, RANGE_USABLE);
	map_add(6 * MiB, 7 * MiB, RANGE_USABLE);
	map_add(7 * MiB, 10 * MiB, RANGE_UNACCEPTED);
	fixture_start();
	for (unsigned i = 0; i < ARRAY_SIZE(meta); i++)
		EXPECT_EQ(*(u32 *)va(meta[i]), META_MAGIC);
	EXPECT_EQ(s->meta_bytes, 4 * PAGE_SIZE);
	EXPECT_EQ(s->managed_bytes, (1 * MiB - 12 * KiB) + 1 * MiB + 4 * KiB + 1 * MiB);
	EXPECT_EQ(palloc_stats()->free_bytes, s->managed_bytes - 4 * PAGE_SIZE);
	EXPECT_EQ(palloc_free_blocks(PALLOC_MAX_ORDER), 0);
	/* Nothing was accepted at boot: the edge waits. */
	EXPECT_EQ(fx.ncalls, 0);
	EXPECT_EQ(s->edge_unaccepted_bytes, 1 * MiB);
	ASSERT(check_counters());

	/* The whole unit first, then the edge, which completes u3; then nothing is left. */
	EXPECT(palloc_accept_next(ACCEPT_LAZY));
	EXPECT_EQ(fx.calls[0].start, FB + 8 * MiB);
	EXPECT_EQ(s->edge_unaccepted_bytes, 1 * MiB);
	EXPECT(palloc_accept_next(ACCEPT_LAZY));
	EXPECT_EQ(fx.calls[1].start, FB + 7 * MiB);
	EXPECT_EQ(fx.calls[1].end, FB + 8 * MiB);
	EXPECT(!palloc_accept_next(ACCEPT_LAZY));
	EXPECT_EQ(fx.ncalls, 2);
	EXPECT_EQ(s->edge_unaccepted_bytes, 0);
	EXPECT_EQ(s->edge_accepted_bytes, 1 * MiB);
	EXPECT_EQ(s->accepted_by_path[ACCEPT_LAZY], 3 * MiB);
	EXPECT_EQ(s->meta_bytes, 3 * PAGE_SIZE);
	EXPECT_EQ(palloc_free_blocks(PALLOC_MAX_ORDER), 2);
	ASSERT(check_counters());

	/* Every page except the meta pages (u3 and u4 get their own when split). */
	free0 = palloc_stats()->free_bytes;
	while ((a = palloc_alloc_accepted(0)) != 0) {
		ASSERT(take(a, 0));
		for (unsigned i = 0; i < 3; i++)
			ASSERT(EXPECT(a != meta[i]));
		n++;
	}
	EXPECT_EQ(n * PAGE_SIZE, free0 - 2 * PAGE_SIZE);
	EXPECT_EQ(s->meta_bytes, 5 * PAGE_SIZE);
	release_all();
	palloc_trim();
	EXPECT_EQ(s->meta_bytes, 3 * PAGE_SIZE);
	EXPECT_EQ(palloc_free_blocks(PALLOC_MAX_ORDER), 2);
	ASSERT(check_counters());
}

/*
 * Lazy acceptance: memory runs out -> exactly one 2 MiB unit is accepted, and it is the
 * lowest unit still unaccepted (growing accepted memory upward from the bottom).
 */
TEST(lazy_accepts_one_unit_per_exhaustion_lowest_unit_first)
{
	const struct palloc_stats *s = palloc_stats();
	u64 expect_next, exhaustions = 0, a;

	map_begin(32 * MiB, true);
	map_add(0, 4 * MiB, RANGE_USABLE);
	map_add(4 * MiB, 20 * MiB, RANGE_UNACCEPTED);
	map_add(20 * MiB, 22 * MiB, RANGE_RESERVED);
	map_add(22 * MiB, 30 * MiB, RANGE_UNACCEPTED);
	fixture_start();
	use_policy(POLICY_LAZY, 0);
	/* A unit accepted out of order is skipped by the lazy path later. */
	EXPECT_EQ(palloc_accept_range(FB + 8 * MiB, FB + 10 * MiB, ACCEPT_EXPLICIT), UNIT_SIZE);
	ASSERT_EQ(fx.ncalls, 1);
	ASSERT_EQ(bitmap_count(&fx.bm), 11);
	for (;;) {
		u64 calls = fx.ncalls, free_before = palloc_stats()->free_bytes;
		bool more = bitmap_next(&fx.bm, 0, &expect_next);

		a = palloc_alloc(0);
		if (!a) {
			EXPECT(!more);
			break;
		}
		ASSERT(take(a, 0));
		if (fx.ncalls == calls)
			continue;
		exhaustions++;
		ASSERT_EQ(free_before, 0);
		ASSERT_EQ(fx.ncalls, calls + 1);
		ASSERT_EQ(fx.calls[calls].start, expect_next);
		ASSERT_EQ(fx.calls[calls].end, expect_next + UNIT_SIZE);
		ASSERT(!bitmap_test(&fx.bm, expect_next));
		/* The new page comes from the new unit. */
		ASSERT_EQ(ALIGN_DOWN(a, UNIT_SIZE), expect_next);
	}
	EXPECT_EQ(exhaustions, 11);
	EXPECT_EQ(s->accepted_by_path[ACCEPT_LAZY], 11 * UNIT_SIZE);
	EXPECT_EQ(s->accepted_by_path[ACCEPT_EXPLICIT], UNIT_SIZE);
	EXPECT_EQ(s->alloc_failures, 1);
	EXPECT_EQ(fx.calls[1].start, FB + 4 * MiB);
	EXPECT_EQ(fx.calls[2].start, FB + 6 * MiB);
	EXPECT_EQ(fx.calls[3].start, FB + 10 * MiB);
	EXPECT_EQ(fx.calls[8].start, FB + 22 * MiB);
	ASSERT(check_counters());
}

/* A 2 MiB request accepts one unit even while small blocks are free. */
TEST(lazy_order9_accepts_one_unit_although_pages_are_free)
{
	u64 a, b;

	map_begin(8 * MiB, true);
	map_add(0, 2 * MiB, RANGE_USABLE);
	map_add(2 * MiB, 8 * MiB, RANGE_UNACCEPTED);
	fixture_start();
	use_policy(POLICY_LAZY, 0);
	a = palloc_alloc(0);
	ASSERT(take(a, 0));
	ASSERT_EQ(fx.ncalls, 0);
	b = palloc_alloc(PALLOC_MAX_ORDER);
	ASSERT(take(b, PALLOC_MAX_ORDER));
	EXPECT_EQ(b, FB + 2 * MiB);
	EXPECT_EQ(fx.ncalls, 1);
	EXPECT_EQ(fx.calls[0].start, FB + 2 * MiB);
	EXPECT_EQ(fx.calls[0].end, FB + 4 * MiB);
	EXPECT_EQ(bitmap_count(&fx.bm), 2);
	ASSERT(check_counters());
}

/* Without hooks nothing is ever accepted: palloc_alloc fails and counts it. */
TEST(no_policy_never_accepts)
{
	map_begin(8 * MiB, true);
	map_add(0, 2 * MiB, RANGE_USABLE);
	map_add(2 * MiB, 8 * MiB, RANGE_UNACCEPTED);
	fixture_start();
	ASSERT(take(palloc_alloc(PALLOC_MAX_ORDER), PALLOC_MAX_ORDER));
	EXPECT_EQ(live[0].addr, FB);
	EXPECT_EQ(palloc_alloc(0), 0);
	EXPECT_EQ(palloc_stats()->alloc_failures, 1);
	EXPECT_EQ(fx.ncalls, 0);
	ASSERT(check_counters());
}

/*
 * One platform call per run of contiguous unaccepted units, split where a unit was already
 * accepted, at a hole in the map, and at every 1 GiB boundary (the memory is never touched,
 * so several GiB of fake memory cost nothing here).
 */
TEST(accept_range_splits_runs_at_1g_and_at_gaps)
{
	static const struct accept_call want[] = {
		{ FB + 100 * MiB, FB + 102 * MiB, 0 },		/* the explicit single unit first */
		{ FB + 4 * MiB, FB + 100 * MiB, 0 },
		{ FB + 102 * MiB, FB + 1 * GiB, 0 },		/* stops at the 2 GiB boundary */
		{ FB + 1 * GiB, FB + 2 * GiB, 0 },		/* a whole naturally aligned GiB */
		{ FB + 2 * GiB, FB + 2 * GiB + 8 * MiB, 0 },
		{ FB + 2 * GiB + 10 * MiB, FB + 2 * GiB + 20 * MiB, 0 },	/* after the hole */
	};
	u64 total = (2 * GiB + 8 * MiB - 4 * MiB) + 10 * MiB - UNIT_SIZE;

	map_begin(2 * GiB + 32 * MiB, false);
	map_add(0, 4 * MiB, RANGE_USABLE);
	map_add(4 * MiB, 2 * GiB + 8 * MiB, RANGE_UNACCEPTED);
	map_add(2 * GiB + 8 * MiB, 2 * GiB + 10 * MiB, RANGE_RESERVED);
	map_add(2 * GiB + 10 * MiB, 2 * GiB + 20 * MiB, RANGE_UNACCEPTED);
	fixture_start();
	EXPECT_EQ(palloc_accept_range(FB + 100 * MiB, FB + 102 * MiB, ACCEPT_EXPLICIT), UNIT_SIZE);
	/* The whole span, including memory that is not unaccepted: only set bits count. */
	EXPECT_EQ(palloc_accept_range(FB, FB + 2 * GiB + 32 * MiB, ACCEPT_EXPLICIT), total);
	ASSERT_EQ(fx.ncalls, ARRAY_SIZE(want));
	for (unsigned i = 0; i < ARRAY_SIZE(want); i++) {
		EXPECT_EQ(fx.calls[i].start, want[i].start);
		EXPECT_EQ(fx.calls[i].end, want[i].end);
	}
	EXPECT_EQ(bitmap_count(&fx.bm), 0);
	EXPECT_EQ(palloc_stats()->accepted_by_path[ACCEPT_EXPLICIT], total + UNIT_SIZE);
	EXPECT_EQ(palloc_free_blocks(PALLOC_MAX_ORDER), 2 + (total + UNIT_SIZE) / UNIT_SIZE);
	/* Nothing left: a second pass makes no call. */
	EXPECT_EQ(palloc_accept_range(FB, FB + 2 * GiB + 32 * MiB, ACCEPT_EXPLICIT), 0);
	EXPECT_EQ(fx.ncalls, ARRAY_SIZE(want));
	ASSERT(check_counters());
}

/*
 * With 10 GiB or more to accept, eager acceptance makes one call per naturally aligned
 * GiB (one TDX call with a 1 GiB page), in both zones of a map with a hole of over 1 GiB.
 */
TEST(eager_accepts_whole_gibs_across_zones)
{
	u64 n;

	map_begin(12 * GiB, false);
	map_add(0, 2 * MiB, RANGE_USABLE);
	map_add(2 * MiB, 10 * GiB + 4 * MiB, RANGE_UNACCEPTED);
	map_add(11 * GiB + 512 * MiB, 11 * GiB + 520 * MiB, RANGE_UNACCEPTED);
	fixture_start();
	use_policy(POLICY_EAGER, 0);
	n = bitmap_count(&fx.bm);
	ASSERT_EQ(n, 5121 + 4);
	ASSERT(boot_eager_and_check());
	ASSERT_EQ(fx.ncalls, 12);
	EXPECT_EQ(fx.calls[0].start, FB + 2 * MiB);
	EXPECT_EQ(fx.calls[0].end, FB + 1 * GiB);
	for (unsigned i = 1; i < 10; i++)
		EXPECT_EQ(fx.calls[i].end - fx.calls[i].start, GiB);
	EXPECT_EQ(fx.calls[10].start, FB + 10 * GiB);
	EXPECT_EQ(fx.calls[10].end, FB + 10 * GiB + 4 * MiB);
	ASSERT(check_counters());
	/* Whole units from both zones, lowest first, without any further accept. */
	for (u64 i = 0; i < 1 + n; i++) {
		u64 a = palloc_alloc(PALLOC_MAX_ORDER);

		ASSERT(take(a, PALLOC_MAX_ORDER));
		if (i == 0)
			EXPECT_EQ(a, FB);
		if (i == 5122)
			EXPECT_EQ(a, FB + 11 * GiB + 512 * MiB);
	}
	EXPECT_EQ(palloc_alloc(PALLOC_MAX_ORDER), 0);
	EXPECT_EQ(fx.ncalls, 12);
	ASSERT(check_counters());
}

/*
 * The platform refuses a unit: it is lost. Never handed out, counted once, and never
 * asked for again (the mock flags any second request for the same page).
 */
TEST(accept_failure_loses_the_unit_for_good)
{
	const struct palloc_stats *s = palloc_stats();
	u64 a, got = 0;

	map_begin(16 * MiB, true);
	map_add(0, 2 * MiB, RANGE_USABLE);
	map_add(2 * MiB, 12 * MiB, RANGE_UNACCEPTED);
	map_fail(4 * MiB, 6 * MiB);
	fixture_start();
	use_policy(POLICY_LAZY, 0);
	while ((a = palloc_alloc(PALLOC_MAX_ORDER)) != 0) {
		ASSERT(take(a, PALLOC_MAX_ORDER));
		EXPECT(a != FB + 4 * MiB);
		got++;
	}
	EXPECT_EQ(got, 5);
	EXPECT_EQ(fx.ncalls, 5);
	EXPECT_EQ(s->accept_failures, 1);
	EXPECT_EQ(s->unaccepted_bytes, 0);
	EXPECT_EQ(bitmap_count(&fx.bm), 0);
	EXPECT_EQ(palloc_block_order(FB + 4 * MiB), -1);
	ASSERT(check_counters());
	/* Freed and carved into pages: still nothing from the lost unit. */
	release_all();
	while ((a = palloc_alloc(0)) != 0) {
		ASSERT(take(a, 0));
		ASSERT(EXPECT(ALIGN_DOWN(a, UNIT_SIZE) != FB + 4 * MiB));
	}
	EXPECT_EQ(fx.ncalls, 5);
	EXPECT_EQ(s->accept_failures, 1);
	ASSERT(check_counters());
}

/* A refused multi-unit call loses every unit of the run; a refused edge loses the edge. */
TEST(accept_failure_of_a_run_and_of_an_edge)
{
	const struct palloc_stats *s = palloc_stats();

	map_begin(16 * MiB, true);
	map_add(0, 2 * MiB, RANGE_USABLE);
	map_add(2 * MiB, 10 * MiB + 64 * KiB, RANGE_UNACCEPTED);
	map_fail(10 * MiB, 10 * MiB + 64 * KiB);	/* the edge */
	map_fail(6 * MiB, 6 * MiB + 4 * KiB);		/* one page of the second unit */
	fixture_start();
	EXPECT_EQ(s->accept_failures, 0);
	EXPECT_EQ(s->edge_unaccepted_bytes, 64 * KiB);
	EXPECT_EQ(s->managed_bytes, 2 * MiB);
	EXPECT_EQ(palloc_accept_range(FB + 4 * MiB, FB + 10 * MiB, ACCEPT_EXPLICIT), 0);	/* refused: nothing accepted */
	EXPECT_EQ(s->accept_failures, 3);
	EXPECT_EQ(s->accepted_bytes, 0);
	EXPECT_EQ(s->managed_bytes, 2 * MiB);
	EXPECT_EQ(bitmap_count(&fx.bm), 1);
	EXPECT_EQ(s->unaccepted_bytes, UNIT_SIZE);
	ASSERT(check_counters());
	/* The unit below the failed run still works. */
	use_policy(POLICY_LAZY, 0);
	ASSERT(take(palloc_alloc(PALLOC_MAX_ORDER), PALLOC_MAX_ORDER));
	ASSERT(take(palloc_alloc(PALLOC_MAX_ORDER), PALLOC_MAX_ORDER));
	EXPECT_EQ(live[0].addr, FB);
	EXPECT_EQ(live[1].addr, FB + 2 * MiB);
	/* The edge comes last, and is refused: lost, never handed out. */
	EXPECT_EQ(palloc_alloc(PALLOC_MAX_ORDER), 0);
	EXPECT_EQ(fx.ncalls, 3);
	EXPECT_EQ(fx.calls[2].start, FB + 10 * MiB);
	EXPECT_EQ(s->accept_failures, 3 + 1);
	EXPECT_EQ(s->edge_unaccepted_bytes, 0);
	EXPECT_EQ(s->edge_accepted_bytes, 0);
	EXPECT_EQ(palloc_alloc(0), 0);
	ASSERT(check_counters());
}

/* Accept-ahead tops up at boot and after every allocation, and stops when nothing is left. */
TEST(ahead_keeps_the_spare_topped_up)
{
	const struct palloc_stats *s = palloc_stats();
	u64 a;

	map_begin(32 * MiB, true);
	map_add(0, 2 * MiB, RANGE_USABLE);
	map_add(2 * MiB, 32 * MiB, RANGE_UNACCEPTED);
	fixture_start();
	use_policy(POLICY_AHEAD, 5 * MiB);
	policy_boot(NULL);
	/* 2 MiB usable + two units = 6 MiB >= 5 MiB. */
	EXPECT_EQ(fx.ncalls, 2);
	EXPECT_EQ(palloc_stats()->free_bytes, 6 * MiB);
	while ((a = palloc_alloc(3)) != 0) {
		ASSERT(take(a, 3));
		if (bitmap_count(&fx.bm))
			ASSERT(EXPECT(palloc_stats()->free_bytes >= 5 * MiB));
	}
	EXPECT_EQ(bitmap_count(&fx.bm), 0);
	EXPECT_EQ(s->accepted_by_path[ACCEPT_AHEAD], 30 * MiB);
	EXPECT_EQ(s->accepted_by_path[ACCEPT_LAZY], 0);
	ASSERT(check_counters());
}

/*
 * One page allocated and freed over and over in an otherwise free unit: the unit is split
 * once and stays split (no collapse/split per pair); a 2 MiB request still gets it.
 */
TEST(freed_unit_is_not_collapsed_per_free)
{
	const struct palloc_stats *s = palloc_stats();
	u64 a, first;

	map_begin(4 * MiB, true);
	map_add(0, 2 * MiB, RANGE_RESERVED);
	map_add(2 * MiB, 4 * MiB, RANGE_USABLE);
	fixture_start();
	ASSERT_EQ(palloc_free_blocks(PALLOC_MAX_ORDER), 1);
	first = palloc_alloc_accepted(0);
	ASSERT(first != 0);
	EXPECT_EQ(s->meta_bytes, PAGE_SIZE);
	palloc_free(first);
	for (unsigned i = 0; i < 1000; i++) {
		a = palloc_alloc_accepted(0);
		ASSERT_EQ(a, first);
		/* Still split: the meta page stayed, no whole unit came back in between. */
		EXPECT_EQ(s->meta_bytes, PAGE_SIZE);
		EXPECT_EQ(palloc_free_blocks(PALLOC_MAX_ORDER), 0);
		palloc_free(a);
	}
	/* A 2 MiB request collapses it on demand. */
	a = palloc_alloc_accepted(PALLOC_MAX_ORDER);
	EXPECT_EQ(a, FB + 2 * MiB);
	EXPECT_EQ(s->meta_bytes, 0);
	palloc_free(a);
	EXPECT_EQ(palloc_free_blocks(PALLOC_MAX_ORDER), 1);
}

/*
 * The allocator keeps its state in meta pages and its own structures, never in the
 * memory it manages: a free block is not written (no links inside it), nor is a block
 * handed out. Links inside free pages made every second 4 KiB allocation write to a
 * page it did not return; under accept_memory=background that page had been zeroed by
 * another vCPU and was cold (mm/page_alloc.c, the layout comment). Four whole units
 * (meta page: each unit's page 0) get a pattern, then random allocations and frees of
 * orders 0-9 run; every page but a meta page must keep the pattern throughout.
 */
#define UNTOUCHED 0xa5

static u64 pages_changed(u64 units)
{
	u64 changed = 0;

	for (u64 p = 0; p < units * (UNIT_SIZE / PAGE_SIZE); p++) {
		const u8 *b = va(FB + (p << PAGE_SHIFT));

		if (p % (UNIT_SIZE / PAGE_SIZE) == 0)
			continue;	/* a meta page, once its unit is split */
		for (u64 i = 0; i < PAGE_SIZE; i++)
			if (b[i] != UNTOUCHED) {
				changed++;
				break;
			}
	}
	return changed;
}

TEST(allocator_never_writes_to_the_memory_it_manages)
{
	const u64 units = 4;
	u64 addr[512], n = 0;

	map_begin(units * UNIT_SIZE, true);
	map_add(0, units * UNIT_SIZE, RANGE_USABLE);
	fixture_start();
	memset(va(FB), UNTOUCHED, units * UNIT_SIZE);
	unit_srand(stress_seed() + 300);
	for (unsigned step = 0; step < 20000; step++) {
		if (n < ARRAY_SIZE(addr) && (n == 0 || unit_rand() % 3)) {
			unsigned order = (unsigned)(unit_rand() % 64 ? unit_rand() % 4 :
						    unit_rand() % (PALLOC_MAX_ORDER + 1));
			u64 a = palloc_alloc_accepted(order);

			if (a)
				addr[n++] = a;
		} else {
			u64 i = unit_rand() % n;

			palloc_free(addr[i]);
			addr[i] = addr[--n];
		}
		if (step % 1000 == 0 && !EXPECT_EQ(pages_changed(units), 0))
			return;
	}
	while (n)
		palloc_free(addr[--n]);
	EXPECT_EQ(pages_changed(units), 0);
	palloc_trim();
	EXPECT_EQ(palloc_free_blocks(PALLOC_MAX_ORDER), units);
	EXPECT_EQ(palloc_count_free(), units * UNIT_SIZE);
}

/*
 * The edge table is bounded: once PALLOC_MAX_EDGES pieces wait, palloc_add_edge says no
 * (the kernel then accepts the piece at once), and nothing it refused is ever accepted
 * through the table. Pieces that are not a partial unit's, or that overlap one already
 * in the table, panic: either would be a double accept in the making.
 */
TEST(edge_table_is_bounded_and_checks_its_input)
{
	map_begin(8 * MiB, true);
	map_add(0, 2 * MiB, RANGE_USABLE);
	map_add(2 * MiB, 4 * MiB, RANGE_IMAGE);	/* a managed unit that is never free */
	map_add(4 * MiB, 8 * MiB, RANGE_UNACCEPTED);
	fixture_start();
	for (unsigned i = 0; i < PALLOC_MAX_EDGES; i++)
		ASSERT(palloc_add_edge(FB + 2 * MiB + i * 8 * KiB, FB + 2 * MiB + i * 8 * KiB + 4 * KiB));
	EXPECT(!palloc_add_edge(FB + 2 * MiB + 4 * KiB, FB + 2 * MiB + 8 * KiB));
	EXPECT_EQ(palloc_stats()->edge_unaccepted_bytes, PALLOC_MAX_EDGES * 4 * KiB);
	CHECK_PANICS(palloc_add_edge(FB + 4 * MiB, FB + 6 * MiB), "not the unaccepted piece");
	CHECK_PANICS(palloc_add_edge(FB + 4 * MiB, FB + 4 * MiB + 4 * KiB), "not the unaccepted piece");
	CHECK_PANICS(palloc_add_edge(FB, FB + 4 * KiB), "not the unaccepted piece");
	CHECK_PANICS(palloc_add_edge(FB + 3 * MiB + 512, FB + 3 * MiB + 4 * KiB), "not the unaccepted piece");
	CHECK_PANICS(palloc_add_edge(FB + 3 * MiB, FB + 5 * MiB), "not the unaccepted piece");
}

TEST(edge_overlapping_one_in_the_table_panics)
{
	map_begin(8 * MiB, true);
	map_add(0, 2 * MiB, RANGE_USABLE);
	map_add(2 * MiB, 4 * MiB, RANGE_IMAGE);
	fixture_start();
	ASSERT(palloc_add_edge(FB + 2 * MiB + 64 * KiB, FB + 2 * MiB + 128 * KiB));
	CHECK_PANICS(palloc_add_edge(FB + 2 * MiB + 124 * KiB, FB + 2 * MiB + 132 * KiB), "overlaps");
}

/* ------------------------------------------------------------------ page 0 */

/*
 * A firmware map may call page 0 unaccepted (found by tests/fuzz/fuzz_accept.c). Once
 * accepted, the unit or partial unit holding it becomes free memory without page 0, as
 * palloc_populate leaves page 0 out of usable memory: handed out, it would read as "out
 * of memory" (0) while memory remains, and the kernel would map NULL. These maps start
 * at physical 0, which the fixture above (at FB) cannot hold: their own small arena.
 */
static void *p0_meta[8];
static unsigned p0_nmeta;

static void *p0_meta_alloc(u64 bytes)
{
	void *p = calloc(1, bytes ? bytes : 1);

	if (!p || p0_nmeta == ARRAY_SIZE(p0_meta))
		abort();
	return p0_meta[p0_nmeta++] = p;
}

static int p0_accept(void *ctx, u64 start, u64 end)
{
	(void)ctx;
	return EXPECT(start < end && end <= 4 * MiB) ? 0 : -1;
}

/* Allocate everything, largest blocks first; true if no block was page 0 and nothing is left. */
static bool page0_run(const struct mem_range *r, unsigned nr)
{
	static struct mem_range ranges[4];
	static u32 lat[64];
	struct memmap m = { .ranges = ranges, .nranges = nr, .cap = ARRAY_SIZE(ranges) };
	struct unaccepted_bitmap bm;
	struct palloc_reserved edges[4];
	unsigned nedges = 0;
	u64 storage[16], got = 0;
	u8 *raw = mmap(NULL, 6 * MiB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	u8 *arena = (u8 *)(uintptr_t)ALIGN_UP((u64)(uintptr_t)raw, UNIT_SIZE);
	struct palloc_env env = { .accept = p0_accept, .meta_alloc = p0_meta_alloc,
				  .now_ns = mock_now, .phys_offset = (u64)(uintptr_t)arena };
	bool ok = true;

	memcpy(ranges, r, nr * sizeof(*r));
	if (!EXPECT(raw != MAP_FAILED && bitmap_storage_bytes(bitmap_layout(&m)) <= sizeof(storage)))
		return false;
	bitmap_build(&bm, &m, storage, NULL, NULL);
	palloc_init(&m, &bm, &env, lat, ARRAY_SIZE(lat));
	palloc_populate(&m, NULL, 0);
	/* The partial units' pieces, as bitmap_build reports them for these maps. */
	for (unsigned i = 0; i < nr; i++)
		if (r[i].kind == RANGE_UNACCEPTED && !IS_ALIGNED(r[i].end, UNIT_SIZE))
			edges[nedges++] = (struct palloc_reserved){ ALIGN_DOWN(r[i].end, UNIT_SIZE), r[i].end };
	for (unsigned i = 0; i < nedges; i++)
		ok &= EXPECT(palloc_add_edge(edges[i].start, edges[i].end));
	use_policy(POLICY_LAZY, 0);
	for (int order = PALLOC_MAX_ORDER; order >= 0; order--)
		for (u64 a; (a = palloc_alloc((unsigned)order)) != 0;)
			got += PAGE_SIZE << order;
	ok &= EXPECT_EQ(palloc_unaccepted_bytes(), 0);
	ok &= EXPECT_EQ(palloc_stats()->edge_unaccepted_bytes, 0);
	ok &= EXPECT_EQ(palloc_stats()->free_bytes, 0);
	/* Everything managed was handed out but the meta pages: page 0 is not managed. */
	ok &= EXPECT_EQ(got + palloc_stats()->meta_bytes, palloc_stats()->managed_bytes);
	ok &= EXPECT_EQ(palloc_stats()->managed_bytes, 4 * MiB - PAGE_SIZE);
	ok &= EXPECT_EQ(palloc_block_order(0), -1);
	palloc_set_hooks(NULL, NULL);
	munmap(raw, 6 * MiB);
	while (p0_nmeta)
		free(p0_meta[--p0_nmeta]);
	return ok;
}

TEST(unaccepted_page_0_is_never_handed_out)
{
	/* Whole units: unit 0, accepted first, would be a 2 MiB block at 0. */
	static const struct mem_range whole[] = { { 0, 4 * MiB, RANGE_UNACCEPTED, 15 } };
	/* A partial unit: [0, 1 MiB) waits as an edge, page 0 its lowest page. */
	static const struct mem_range edge[] = { { 0, 1 * MiB, RANGE_UNACCEPTED, 15 },
						 { 1 * MiB, 4 * MiB, RANGE_USABLE, 7 } };

	EXPECT(page0_run(whole, ARRAY_SIZE(whole)));
	EXPECT(page0_run(edge, ARRAY_SIZE(edge)));
}

/* ------------------------------------------------------------------ per-unit info, initialised lazily */

/*
 * The info array (one u16 per unit) is handed over unzeroed and initialised an info
 * page (INFO_PAGE_UNITS units, 4 GiB) at a time. A 64 GiB map: the first GiB usable,
 * the rest unaccepted except a reserved unit at 40 GiB (not RAM: OUTSIDE for good).
 * Zone base FB, so info page k holds [FB + 4k GiB, FB + 4(k + 1) GiB); 16 pages.
 */
#define INFO_SPAN (64 * GiB)
#define INFO_PAGE_SPAN (INFO_PAGE_UNITS * UNIT_SIZE)
#define INFO_PAGES (INFO_SPAN / INFO_PAGE_SPAN)

static void info_map(u8 fill)
{
	map_begin(INFO_SPAN, false);
	map_add(0, 1 * GiB, RANGE_USABLE);
	map_add(1 * GiB, 40 * GiB, RANGE_UNACCEPTED);
	map_add(40 * GiB, 40 * GiB + 2 * MiB, RANGE_RESERVED);
	map_add(40 * GiB + 2 * MiB, INFO_SPAN, RANGE_UNACCEPTED);
	fx.info_fill = fill;
	fx.info_fill_set = true;
}

/*
 * Info pages of the single zone that still hold the fill byte everywhere, and so do the
 * free-unit bits of their units (INFO_PAGE_UNITS / 8 bytes each).
 */
static u64 info_pages_untouched(u8 fill, bool untouched[INFO_PAGES])
{
	u64 n = 0, bits = INFO_PAGE_UNITS / 8;

	if (!EXPECT_EQ(fx.ninfo, 2) || !EXPECT_EQ(fx.info_bytes[0], INFO_SPAN / UNIT_SIZE * sizeof(u16)) ||
	    !EXPECT_EQ(fx.info_bytes[1], INFO_SPAN / UNIT_SIZE / 8))
		return 0;
	for (u64 p = 0; p < INFO_PAGES; p++) {
		untouched[p] = true;
		for (u64 b = 0; b < PAGE_SIZE; b++)
			untouched[p] &= fx.info[0][p * PAGE_SIZE + b] == fill;
		for (u64 b = 0; b < bits; b++)
			untouched[p] &= fx.info[1][p * bits + b] == fill;
		n += untouched[p];
	}
	return n;
}

/* What a run observed, folded into one number to compare runs with different fills. */
static u64 info_hash;

static void observe(u64 v)
{
	info_hash = (info_hash ^ v) * 0x100000001b3ULL;
}

/* Every unit's state and, for a sample, the block order: all of it goes into the hash. */
static void observe_states(void)
{
	for (u64 u = FB; u < FB + INFO_SPAN; u += UNIT_SIZE)
		observe((u64)palloc_unit_state(u));
	for (u64 a = FB; a < FB + INFO_SPAN; a += 256 * MiB + 4 * KiB)
		observe((u64)palloc_block_order(ALIGN_DOWN(a, PAGE_SIZE)));
}

/*
 * Allocation, free, acceptance on demand, explicit claims in far info pages, the
 * queries and the counters, each checked, on an info array that starts as `fill`.
 * Returns the hash of everything it saw (addresses handed out, states, orders).
 */
static u64 info_scenario(u8 fill)
{
	const struct palloc_stats *s = palloc_stats();
	u64 a;

	info_hash = 0xcbf29ce484222325ULL;
	info_map(fill);
	fixture_start();
	use_policy(POLICY_LAZY, 0);
	EXPECT(check_counters());
	EXPECT_EQ(palloc_unit_state(FB), U_FREE);
	EXPECT_EQ(palloc_unit_state(FB + 1 * GiB), U_OUTSIDE);
	EXPECT_EQ(palloc_unit_state(FB + 40 * GiB), U_OUTSIDE);
	EXPECT_EQ(palloc_unit_state(FB + 63 * GiB), U_OUTSIDE);
	EXPECT_EQ(palloc_unit_state(FB + INFO_SPAN), -1);
	EXPECT_EQ(palloc_block_order(FB + 50 * GiB), -1);
	EXPECT_EQ(palloc_stats()->free_bytes, 1 * GiB);
	EXPECT_EQ(s->unaccepted_bytes, 63 * GiB - UNIT_SIZE);
	observe_states();

	/* The usable GiB whole, then pages: lazy acceptance takes the unit at 1 GiB. */
	for (unsigned i = 0; i < 512; i++) {
		a = palloc_alloc(PALLOC_MAX_ORDER);
		if (!take(a, PALLOC_MAX_ORDER))
			return 0;
		observe(a);
	}
	EXPECT_EQ(fx.ncalls, 0);
	for (unsigned i = 0; i < 600; i++) {
		a = palloc_alloc(0);
		if (!take(a, 0))
			return 0;
		observe(a);
	}
	EXPECT_EQ(fx.ncalls, 2);
	EXPECT_EQ(fx.calls[0].start, FB + 1 * GiB);
	EXPECT_EQ(palloc_unit_state(FB + 1 * GiB), U_SPLIT);
	EXPECT_EQ(palloc_unit_state(FB + 1 * GiB + 4 * UNIT_SIZE), U_OUTSIDE);

	/* Claims across an info page boundary and in a far page (48 GiB: page 12). */
	EXPECT_EQ(palloc_accept_range(FB + 4 * GiB - UNIT_SIZE, FB + 4 * GiB + UNIT_SIZE, ACCEPT_EXPLICIT),
		  2 * UNIT_SIZE);
	EXPECT_EQ(palloc_accept_range(FB + 48 * GiB, FB + 48 * GiB + 4 * MiB, ACCEPT_EXPLICIT), 4 * MiB);
	EXPECT_EQ(palloc_unit_state(FB + 4 * GiB), U_FREE);
	EXPECT_EQ(palloc_unit_state(FB + 4 * GiB + UNIT_SIZE), U_OUTSIDE);
	EXPECT_EQ(palloc_unit_state(FB + 48 * GiB + 2 * MiB), U_FREE);
	EXPECT_EQ(palloc_unit_state(FB + 48 * GiB + 4 * MiB), U_OUTSIDE);
	EXPECT_EQ(palloc_unit_state(FB + 48 * GiB - UNIT_SIZE), U_OUTSIDE);
	EXPECT(check_counters());
	observe_states();

	/* Half of it back, then more of every order: from the accepted units, lowest first. */
	for (u64 i = 0; i < nlive; i++)
		if (i % 2 && !release(i))
			return 0;
	for (unsigned i = 0; i < 3000; i++) {
		unsigned order = (unsigned)(unit_rand() % (PALLOC_MAX_ORDER + 1));

		a = palloc_alloc(order);
		if (!take(a, order))
			return 0;
		observe(a);
	}
	EXPECT(check_counters());
	release_all();
	palloc_trim();
	EXPECT(check_counters());
	observe(palloc_stats()->free_bytes);
	observe(s->accepted_bytes);
	observe(fx.ncalls);
	observe_states();
	return info_hash;
}

/*
 * The allocator must not read an info page before it initialised it: with the info
 * array full of garbage (0xa5: states ACCEPTING, 0xa2: USED, 0xa3: SPLIT, 0xff) the
 * same run sees exactly what it sees on zeroed memory.
 */
TEST(info_garbage_behaves_as_zeroed_64g)
{
	static const u8 fills[] = { 0xa5, 0xa2, 0xa3, 0xff };
	u64 want;

	unit_srand(stress_seed() + 14);
	want = info_scenario(0);
	ASSERT(want != 0);
	for (unsigned i = 0; i < ARRAY_SIZE(fills); i++) {
		unit_srand(stress_seed() + 14);
		u64 got = info_scenario(fills[i]);

		if (!EXPECT_EQ(got, want))
			printf("  info filled with %#x before palloc_init: the run differs\n", fills[i]);
	}
}

/*
 * A free of an address no allocation returned, in an info page nobody initialised,
 * panics whatever garbage the page holds: never a unit pushed to the free map that was
 * never accepted (garbage reading as USED), never a meta page outside the unit.
 */
TEST(info_garbage_foreign_free_panics)
{
	static const u8 fills[] = { 0xa5, 0xa2, 0xa3, 0xff };

	for (unsigned i = 0; i < ARRAY_SIZE(fills); i++) {
		info_map(fills[i]);
		fixture_start();
		/* A panic leaves the allocator's lock held: released by hand between the checks. */
		CHECK_PANICS(palloc_free(FB + 50 * GiB), "palloc_free");
		palloc_lock = (struct spinlock)SPINLOCK_INIT;
		CHECK_PANICS(palloc_free(FB + 50 * GiB + 8 * KiB), "palloc_free");
		palloc_lock = (struct spinlock)SPINLOCK_INIT;
		/* In an initialised page, a unit that is OUTSIDE: the plain refusal. */
		CHECK_PANICS(palloc_free(FB + 2 * GiB), "not allocated (unit state 0)");
		palloc_lock = (struct spinlock)SPINLOCK_INIT;
		EXPECT_EQ(palloc_stats()->free_bytes, 1 * GiB);
		EXPECT_EQ(palloc_free_blocks(PALLOC_MAX_ORDER), 512);
	}
}

/*
 * Init writes only the info page of the memory that is free at boot: with only the
 * first GiB usable, 15 of the 16 pages keep the fill. Queries write nothing; a claim
 * initialises exactly its own page.
 */
TEST(info_init_touches_one_page_for_the_first_gib)
{
	bool untouched[INFO_PAGES];

	info_map(INFO_GARBAGE);
	fixture_start();
	use_policy(POLICY_LAZY, 0);
	ASSERT_EQ(info_pages_untouched(INFO_GARBAGE, untouched), INFO_PAGES - 1);
	EXPECT(!untouched[0]);
	observe_states();
	for (u64 u = FB; u < FB + INFO_SPAN; u += UNIT_SIZE)
		palloc_units_claimed(u, u + UNIT_SIZE);
	EXPECT_EQ(info_pages_untouched(INFO_GARBAGE, untouched), INFO_PAGES - 1);
	/* Lazy acceptance from the bottom stays in page 0 for the next 3 GiB. */
	ASSERT(take(palloc_alloc(PALLOC_MAX_ORDER), PALLOC_MAX_ORDER));
	for (unsigned i = 0; i < 600; i++)
		ASSERT(take(palloc_alloc(0), 0));
	EXPECT_EQ(info_pages_untouched(INFO_GARBAGE, untouched), INFO_PAGES - 1);
	EXPECT_EQ(palloc_accept_range(FB + 48 * GiB, FB + 48 * GiB + 4 * MiB, ACCEPT_EXPLICIT), 4 * MiB);
	EXPECT_EQ(info_pages_untouched(INFO_GARBAGE, untouched), INFO_PAGES - 2);
	EXPECT(!untouched[12]);
	ASSERT(check_counters());
}
