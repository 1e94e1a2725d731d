/* SPDX-License-Identifier: MIT */
/* memaccept: libFuzzer target: memory map -> bitmap and partial units -> allocator -> allocate everything, against a model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "include/boot_info.h"
#include "include/panic.h"
#include "lib/string.h"
#include "mm/accept.h"
#include "mm/bitmap.h"
#include "mm/memmap.h"
#include "mm/page_alloc.h"
#include "mm/palloc_internal.h"
#include "mm/policy.h"
#include "tests/fuzz/fuzz.h"

/*
 * The kernel's boot-time allocator, built over the fake physical memory below: it writes
 * to the physical addresses it hands out, which here live at arena + address.
 */
static void *phys_memset(void *p, int c, size_t n);
#define memset phys_memset
#include "mm/early.c"
#undef memset

/*
 * One input is one boot, run as kernel/memory.c runs it (memory_parse_map,
 * memory_build_page_tables' early pages, memory_build_bitmap, memory_init_allocator),
 * over fake physical memory, with a mock platform accept that records every call. Then
 * the fuzz bytes allocate and free blocks of every order on up to four simulated CPUs,
 * after which everything left is allocated, then everything freed. A reference model,
 * one bit per page of RAM, checks each step:
 *   - the platform is asked for each unaccepted page exactly once, for nothing else, in
 *     whole units or in one partial unit's whole unaccepted piece;
 *   - a block handed out lies in memory free at boot or accepted (and not refused)
 *     before, overlaps no live block, and is what palloc_block_order says;
 *   - an allocation fails only when nothing is left to accept and no unit holds two
 *     free blocks of the order asked (only one can hold its meta page); once all is
 *     allocated no unit has more than one page left over (its meta page);
 *   - the statistics (free, meta, managed, accepted, partial units, calls, refusals) agree.
 * In one input of eight, unaccepted memory is also unmapped until it is accepted: a
 * touch of it is a crash, as it faults in the kernel.
 *
 * Input: a 15-byte header, ndesc 6-byte descriptors, then one byte per operation.
 *   [0]      bits 0-1 CPUs - 1; bit 2 fake_unaccepted_start set; bits 3-4 policy (lazy,
 *            eager, ahead, lazy); bit 5 the platform refuses one unit; bit 6 a firmware
 *            hold (memmap_hold); bit 7 no platform to accept (unaccepted is suspect)
 *   [1]      physical address bits: 32 + byte % 5 (so that all RAM is below 64 GiB)
 *   [2-4]    fake_unaccepted_start in pages
 *   [5]      early allocations: bits 0-2 page-table pages, bits 4-7 AP stack pages (bit 3: [13])
 *   [6]      AP trampoline page (0: none)
 *   [7]      accept_ahead in MiB
 *   [8]      which unit (counted among those with unaccepted memory) the platform refuses
 *   [9-11]   hold start in pages; [12] hold length in 16-page steps
 *   [13]     per-CPU caches: bit 7 on, bits 0-4 cpu_cache_high (0: the maximum, 31);
 *            bits 5 and 6 both set, and bit 3 of [5]: unaccepted memory unmapped until accepted
 *   [14]     ndesc (0: a large guest instead, see "large guests" below)
 *   desc     type (low nibble through the table below), start page (24 bits), pages (16)
 *   op       bits 0-3 order (table below), bits 4-5 CPU, bits 6-7 == 3: free, else allocate
 */

#define HDR 15
#define DESC_BYTES 6
#define MAX_OPS 512
/* RAM (usable, reclaimable, unaccepted) per input: more costs time and finds nothing new. */
#define MODEL_PAGES (16 * 1024)	/* 64 MiB */
#define MODEL_WORDS (MODEL_PAGES / 64)
#define ARENA_BITS 37		/* 128 GiB: the large guests (below); other maps end below 64 GiB */
#define ARENA_BYTES (1ULL << ARENA_BITS)
#define MAX_DESC 256
#define MAX_RANGES (2 * MAX_DESC + 4)
#define MAX_SEGS MAX_RANGES
#define MAX_EDGES (4 * MAX_RANGES)
#define MAX_LIVE (MODEL_PAGES + 64)
#define PT_PER_ACCEPT 3		/* the kernel's reserve per CPU (kernel/memory.c) */
#define MAX_RESV (MAX_CPUS * PT_PER_ACCEPT)
#define PAGES_PER_UNIT (UNIT_SIZE / PAGE_SIZE)

/* fatal() is the kernel stopping cleanly (early_alloc: no accepted memory left): not a finding. */
static jmp_buf stop;

__noreturn void fatal(int code, const char *fmt, ...)
{
	(void)code;
	(void)fmt;
	longjmp(stop, 1);
}

static u8 *arena;		/* fake physical address 0 */
static u64 inputs;

static void *phys_memset(void *p, int c, size_t n)
{
	u64 pa = (u64)(uintptr_t)p;

	CHECK(pa < ARENA_BYTES && n <= ARENA_BYTES - pa);
	return memset(arena + pa, c, n);
}

static void *virt(u64 pa)
{
	CHECK(pa < ARENA_BYTES);
	return arena + pa;
}

/* ------------------------------------------------------------------ the model */

/* The model's own loops are not coverage the fuzzer should chase (and cost it time). */
#define MODEL __attribute__((no_sanitize("coverage")))

/* Runs of RAM the model tracks page by page; a page's index is base + its offset. */
struct seg {
	u64 start, end, base;
};

static struct seg segs[MAX_SEGS];
static unsigned nsegs;
static u64 npages;

/* One bit per page of those runs. */
static u64 m_unacc[MODEL_WORDS];	/* RANGE_UNACCEPTED in the map */
static u64 m_asked[MODEL_WORDS];	/* the platform was asked to accept it */
static u64 m_avail[MODEL_WORDS];	/* free at boot, or accepted: may be handed out */
static u64 m_used[MODEL_WORDS];		/* in a live block */

struct live {
	u64 addr;
	u32 order;
};

static struct live live[MAX_LIVE];
static u64 nlive, live_bytes;

static struct {
	u64 calls, accepted, edge_accepted, refused_units, refused_edges;
	u64 bootfree;
	u64 page0;		/* page 0 was accepted: not managed */
	u64 refuse_unit;	/* the unit the platform refuses, or ~0 */
	bool refuse;
	bool short_reserve;	/* boot memory could not fill every CPU's page-table reserve */
} mdl;

static u64 rng;

static u64 next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* The run holding pa, or NULL. */
MODEL static const struct seg *seg_of(u64 pa)
{
	unsigned lo = 0, hi = nsegs;

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (segs[mid].end <= pa)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nsegs && segs[lo].start <= pa ? &segs[lo] : NULL;
}

/* Page indices of [s, e), which must lie in one run: false if it does not. */
MODEL static bool span(u64 s, u64 e, u64 *a, u64 *b)
{
	const struct seg *g = seg_of(s);

	if (!g || e > g->end || s >= e)
		return false;
	*a = g->base + ((s - g->start) >> PAGE_SHIFT);
	*b = *a + ((e - s) >> PAGE_SHIFT);
	return true;
}

MODEL static bool bit(const u64 *w, u64 i)
{
	return (w[i / 64] >> (i % 64)) & 1;
}

MODEL static void set_bits(u64 *w, u64 a, u64 b, bool on)
{
	while (a < b) {
		u64 n = MIN(b - a, 64 - a % 64);
		u64 mask = (n == 64 ? ~0ULL : ((1ULL << n) - 1)) << (a % 64);

		if (on)
			w[a / 64] |= mask;
		else
			w[a / 64] &= ~mask;
		a += n;
	}
}

/* Bits [a, b) of w: all set (want = true) or all clear (want = false)? */
MODEL static bool all_bits(const u64 *w, u64 a, u64 b, bool want)
{
	while (a < b) {
		u64 n = MIN(b - a, 64 - a % 64);
		u64 mask = (n == 64 ? ~0ULL : ((1ULL << n) - 1)) << (a % 64);
		u64 v = w[a / 64] & mask;

		if (want ? v != mask : v != 0)
			return false;
		a += n;
	}
	return true;
}

/* Mark [s, e) (inside the model's runs) in w; parts outside them are skipped. */
MODEL static void mark(u64 *w, u64 s, u64 e, bool on)
{
	for (unsigned i = 0; i < nsegs; i++) {
		u64 lo = MAX(s, segs[i].start), hi = MIN(e, segs[i].end), a, b;

		if (lo < hi && span(lo, hi, &a, &b))
			set_bits(w, a, b, on);
	}
}

/* ------------------------------------------------------------------ fake physical memory */

/*
 * The arena is address space for all of [0, 64 GiB), mapped without reserving memory:
 * only what the allocator and early_alloc touch costs a page. When the input asks for
 * it (one in eight), unaccepted memory is mapped without access until the mock
 * platform accepts it, so that a touch of it faults here as it does in the kernel
 * (memory_build_page_tables leaves it unmapped). Not always: mprotect costs as much as
 * the rest of a run.
 */
static bool protect;
static u64 closed_lo = ~0ULL, closed_hi;

static void arena_prot(u64 s, u64 e, int prot)
{
	CHECK(e <= ARENA_BYTES && s <= e);
	if (protect && s < e)
		CHECK(mprotect(arena + s, e - s, prot) == 0);
}

static void arena_close(u64 s, u64 e)
{
	arena_prot(s, e, PROT_NONE);
	closed_lo = MIN(closed_lo, s);
	closed_hi = MAX(closed_hi, e);
}

/* Resident memory in MiB (/proc/self/statm: pages). */
static u64 rss_mib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long long size = 0, res = 0;

	if (f) {
		if (fscanf(f, "%llu %llu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * PAGE_SIZE >> 20;
}

/*
 * Pages stay resident from one input to the next (most inputs reuse addresses, and a
 * first touch costs a page fault); when they add up, the arena goes back to the host.
 */
#define ARENA_RSS_MIB 512

static void arena_reset(void)
{
	if (closed_lo < closed_hi)
		arena_prot(closed_lo, closed_hi, PROT_READ | PROT_WRITE);
	closed_lo = ~0ULL;
	closed_hi = 0;
	if (++inputs % 1024 == 0 && rss_mib() > ARENA_RSS_MIB)
		CHECK(mmap(arena, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
			   MAP_NORESERVE | MAP_FIXED, -1, 0) == arena);
}

/* ------------------------------------------------------------------ the simulated CPUs */

static unsigned ncpus, cur_cpu;
static bool in_hook;
static u64 clock_ns;

static unsigned sim_cpu_id(void)
{
	return cur_cpu;
}

/*
 * The clock. It is read where a CPU waits for the others (drain_all) and around each
 * platform call: there the other CPUs run a step, as they would meanwhile: each serves
 * a pending request to drain its cache (what palloc_poll does in their waiting loops).
 */
static u64 sim_now(void)
{
	clock_ns += 1000;
	if (!in_hook && ncpus > 1) {
		unsigned me = cur_cpu;

		in_hook = true;
		for (unsigned c = 0; c < ncpus; c++) {
			if (c == me)
				continue;
			cur_cpu = c;
			palloc_poll();
		}
		cur_cpu = me;
		in_hook = false;
	}
	return clock_ns;
}

/* ------------------------------------------------------------------ blocks handed out */

/* A block palloc handed out: check it against the model and record it. */
static void take(u64 a, unsigned order)
{
	u64 size = PAGE_SIZE << order, i, j;

	CHECK(a && IS_ALIGNED(a, size));
	CHECK(span(a, a + size, &i, &j));
	/* Free at boot or accepted, and in no live block. */
	CHECK(all_bits(m_avail, i, j, true));
	CHECK(all_bits(m_used, i, j, false));
	CHECK(palloc_block_order(a) == (int)order);
	set_bits(m_used, i, j, true);
	CHECK(nlive < MAX_LIVE);
	live[nlive++] = (struct live){ a, order };
	live_bytes += size;
}

static void release(u64 k)
{
	struct live b = live[k];
	u64 size = PAGE_SIZE << b.order, i, j;

	CHECK(span(b.addr, b.addr + size, &i, &j));
	set_bits(m_used, i, j, false);
	live[k] = live[--nlive];
	live_bytes -= size;
	palloc_free(b.addr);
}

/*
 * Page tables, as kernel/memory.c gets them: inside an accept from the accepting CPU's
 * reserve (palloc_pt_page), which the allocator refills from that accept's memory.
 * The model marks the reserves' pages used (sync_reserve: they are accepted, and no
 * block handed out may overlap them) and the page tables taken from them too, for good.
 */
static u64 resv[MAX_RESV];
static unsigned nresv;
static u64 npt;			/* page-table pages taken */
static u64 pd_present;		/* one bit per GiB: a page directory maps it */

static void sync_reserve(void)
{
	u64 i, j;

	for (unsigned k = 0; k < nresv; k++) {
		CHECK(span(resv[k], resv[k] + PAGE_SIZE, &i, &j));
		set_bits(m_used, i, j, false);
	}
	nresv = palloc_pt_reserve_pages(resv, MAX_RESV);
	CHECK(nresv <= ncpus * PT_PER_ACCEPT);
	for (unsigned k = 0; k < nresv; k++) {
		CHECK(span(resv[k], resv[k] + PAGE_SIZE, &i, &j));
		CHECK(all_bits(m_avail, i, j, true));
		CHECK(all_bits(m_used, i, j, false));
		set_bits(m_used, i, j, true);
	}
}

/* accept_backend's mapping of [s, e): a page directory for each 1 GiB region not mapped yet. */
static void map_for_accept(u64 s, u64 e)
{
	for (u64 g = s / GiB; g <= (e - 1) / GiB; g++) {
		if (pd_present >> g & 1)
			continue;
		u64 pa = palloc_pt_page(), i, j;

		/*
		 * Never none while memory is still to come. Only after a refused accept (its
		 * page tables were not taken back), or when boot memory was too small to fill
		 * every reserve, may one run short: then the kernel stops
		 * (EXIT_OUT_OF_MEMORY), and so does this boot.
		 */
		if (!pa) {
			CHECK(mdl.refused_units + mdl.refused_edges || mdl.short_reserve);
			longjmp(stop, 1);
		}
		CHECK(span(pa, pa + PAGE_SIZE, &i, &j));
		CHECK(all_bits(m_avail, i, j, true));
		/* From the reserve (marked used by sync_reserve): it leaves it for good. */
		for (unsigned k = 0; k < nresv; k++)
			if (resv[k] == pa) {
				set_bits(m_used, i, j, false);
				resv[k] = resv[--nresv];
				break;
			}
		CHECK(all_bits(m_used, i, j, false));
		set_bits(m_used, i, j, true);
		npt++;
		pd_present |= 1ULL << g;
	}
}

/* ------------------------------------------------------------------ the mock platform */

static int mock_accept(void *ctx, u64 s, u64 e)
{
	u64 i, j, unit = ALIGN_DOWN(s, UNIT_SIZE);
	bool whole = IS_ALIGNED(s, UNIT_SIZE) && IS_ALIGNED(e, UNIT_SIZE);

	CHECK(ctx == &mdl);
	CHECK(IS_ALIGNED(s, PAGE_SIZE) && IS_ALIGNED(e, PAGE_SIZE) && s < e);
	/* Unaccepted in the map, never asked before: exactly once, nothing else. */
	CHECK(span(s, e, &i, &j));
	CHECK(all_bits(m_unacc, i, j, true));
	CHECK(all_bits(m_asked, i, j, false));
	if (!whole) {
		/* A partial unit: inside one unit, and all of that unit's unaccepted piece. */
		u64 pi, pj;

		CHECK(e - unit <= UNIT_SIZE);
		CHECK(s == unit || !span(s - PAGE_SIZE, s, &pi, &pj) || !bit(m_unacc, pi));
		CHECK(e == unit + UNIT_SIZE || !span(e, e + PAGE_SIZE, &pi, &pj) || !bit(m_unacc, pi));
	}
	set_bits(m_asked, i, j, true);
	mdl.calls++;
	/* accept_backend maps the range first: page-table pages. */
	map_for_accept(s, e);
	if (mdl.refuse && s < mdl.refuse_unit + UNIT_SIZE && mdl.refuse_unit < e) {
		if (whole)
			mdl.refused_units += (e - s) >> UNIT_SHIFT;
		else
			mdl.refused_edges++;
		return -5;
	}
	arena_prot(s, e, PROT_READ | PROT_WRITE);
	set_bits(m_avail, i, j, true);
	mdl.accepted += e - s;
	if (s == 0) {
		/* Accepted, but page 0 is never handed out (the kernel keeps NULL unmapped). */
		mark(m_avail, 0, PAGE_SIZE, false);
		mdl.page0 = PAGE_SIZE;
	}
	if (!whole)
		mdl.edge_accepted += e - s;
	return 0;
}

/* ------------------------------------------------------------------ checks */

MODEL static bool nothing_left_to_accept(void)
{
	for (u64 w = 0; w < (npages + 63) / 64; w++)
		if (m_unacc[w] & ~m_asked[w])
			return false;
	return true;
}

/*
 * Per unit, over the pages set in `w` and clear in `minus` (NULL: none): how many
 * disjoint naturally aligned blocks of 2^order pages lie in them (the most in any one
 * unit), how many pages there are in all, and how many units hold some (all) of them.
 */
struct tally {
	u64 max_blocks, pages, units_some, units_part;
	u64 max_unit;		/* a unit with max_blocks */
};

/* First index in [i, end) whose bit is `on`, or end. Word at a time. */
MODEL static u64 find(const u64 *w, const u64 *minus, u64 i, u64 end, bool on)
{
	while (i < end) {
		u64 v = w[i / 64] & ~(minus ? minus[i / 64] : 0);

		if (!on)
			v = ~v;
		v &= ~0ULL << (i % 64);
		if (v)
			return MIN(end, ALIGN_DOWN(i, 64) + (u64)__builtin_ctzll(v));
		i = ALIGN_DOWN(i, 64) + 64;
	}
	return end;
}

/* Unit by unit, in address order: a new unit flushes the last one's counts. */
struct tally_state {
	struct tally t;
	u64 unit, blocks, pages;
};

MODEL static void tally_flush(struct tally_state *st)
{
	if (st->pages) {
		st->t.units_some++;
		st->t.units_part += st->pages < PAGES_PER_UNIT;
	}
	if (st->blocks > st->t.max_blocks) {
		st->t.max_blocks = st->blocks;
		st->t.max_unit = st->unit;
	}
	st->blocks = st->pages = 0;
}

MODEL static struct tally tally(const u64 *w, const u64 *minus, unsigned order)
{
	struct tally_state st = { { 0, 0, 0, 0, 0 }, ~0ULL, 0, 0 };
	u64 size = PAGE_SIZE << order;

	for (unsigned g = 0; g < nsegs; g++) {
		u64 end = segs[g].base + ((segs[g].end - segs[g].start) >> PAGE_SHIFT);

		for (u64 i = segs[g].base; i < end;) {
			u64 ri = find(w, minus, i, end, true);

			if (ri == end)
				break;
			u64 rj = find(w, minus, ri, end, false);
			u64 a = segs[g].start + ((ri - segs[g].base) << PAGE_SHIFT);
			u64 re = segs[g].start + ((rj - segs[g].base) << PAGE_SHIFT);

			while (a < re) {
				u64 u = ALIGN_DOWN(a, UNIT_SIZE), b = MIN(re, u + UNIT_SIZE);

				if (u != st.unit) {
					tally_flush(&st);
					st.unit = u;
				}
				st.pages += (b - a) >> PAGE_SHIFT;
				st.t.pages += (b - a) >> PAGE_SHIFT;
				if (b / size > ALIGN_UP(a, size) / size)
					st.blocks += b / size - ALIGN_UP(a, size) / size;
				a = b;
			}
			i = rj;
		}
	}
	tally_flush(&st);
	return st.t;
}

/*
 * An allocation of `order` failed: nothing may be left to accept, and no unit may hold
 * two disjoint free blocks of that order (a split unit's meta page is in one at most).
 */
static void check_failure(unsigned order)
{
	sync_reserve();
	CHECK(nothing_left_to_accept());
	if (order == PALLOC_MAX_ORDER)
		return;
	struct tally t = tally(m_avail, m_used, order);

	if (t.max_blocks >= 2) {
		fprintf(stderr, "fuzz_accept: order %u failed, yet unit %llx (state %d) holds %llu free "
			"blocks of it; the allocator's free blocks by order:", order, t.max_unit,
			palloc_unit_state(t.max_unit), t.max_blocks);
		for (unsigned k = 0; k <= PALLOC_MAX_ORDER; k++)
			fprintf(stderr, " %llu", palloc_free_blocks(k));
		fprintf(stderr, "\n");
	}
	CHECK(t.max_blocks < 2);
}

MODEL static u64 avail_bytes(void)
{
	u64 n = 0;

	for (u64 w = 0; w < (npages + 63) / 64; w++)
		n += __builtin_popcountll(m_avail[w]);
	return n * PAGE_SIZE;
}

static void check_stats(void)
{
	const struct palloc_stats *s = palloc_stats();

	CHECK(s->accept_calls == mdl.calls);
	CHECK(s->accepted_bytes == mdl.accepted);
	CHECK(s->edge_accepted_bytes == mdl.edge_accepted);
	CHECK(s->accept_failures == mdl.refused_units + mdl.refused_edges);
	CHECK(s->managed_bytes == mdl.bootfree + mdl.accepted - mdl.page0);
	sync_reserve();
	CHECK(s->allocs - s->frees == nlive + nresv + npt);
	CHECK(s->free_bytes + s->meta_bytes + live_bytes + (nresv + npt) * PAGE_SIZE == s->managed_bytes);
}

/* ------------------------------------------------------------------ the boot */

static const u32 type_table[16] = {
	EFI_CONVENTIONAL_MEMORY, EFI_CONVENTIONAL_MEMORY, EFI_CONVENTIONAL_MEMORY,
	EFI_UNACCEPTED_MEMORY, EFI_UNACCEPTED_MEMORY, EFI_UNACCEPTED_MEMORY,
	EFI_BOOT_SERVICES_DATA, EFI_BOOT_SERVICES_CODE, EFI_LOADER_DATA, EFI_LOADER_CODE,
	EFI_RUNTIME_SERVICES_DATA, EFI_ACPI_RECLAIM_MEMORY, EFI_ACPI_MEMORY_NVS,
	EFI_MEMORY_MAPPED_IO, EFI_RESERVED_MEMORY, EFI_PERSISTENT_MEMORY,
};
static const u8 order_table[16] = { 0, 0, 0, 0, 1, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9, 9 };

static struct efi_mem_desc descs[MAX_DESC];
static struct mem_range ranges[MAX_RANGES];
static u64 scratch[(MAX_DESC * 64 + 64) / 8 + 1];
static struct memmap fmap;
static struct unaccepted_bitmap bm;
static struct palloc_reserved edges[MAX_EDGES];
static unsigned nedges;
static u32 lat_samples[1024];

static u32 le(const u8 *p, unsigned n)
{
	u32 v = 0;

	while (n--)
		v = v << 8 | p[n];
	return v;
}

static void on_edge(void *ctx, u64 s, u64 e)
{
	CHECK(ctx == &edges);
	CHECK(nedges < MAX_EDGES);
	edges[nedges++] = (struct palloc_reserved){ s, e };
}

static void *meta_alloc(u64 bytes)
{
	u64 pa = early_alloc(bytes, 8);

	return virt(pa);
}

static void *meta_alloc_uninit(u64 bytes)
{
	u64 pa = early_reserve_uninit(bytes, 8);

	return virt(pa);
}

/* Build the model's runs from the map: false when it holds more RAM than the model. */
static bool model_init(void)
{
	u64 base = 0;

	nsegs = 0;
	for (unsigned i = 0; i < fmap.nranges; i++) {
		const struct mem_range *r = &fmap.ranges[i];

		if (r->kind != RANGE_USABLE && r->kind != RANGE_RECLAIMABLE && r->kind != RANGE_UNACCEPTED)
			continue;
		if (base + ((r->end - r->start) >> PAGE_SHIFT) > MODEL_PAGES)
			return false;
		if (nsegs && segs[nsegs - 1].end == r->start)
			segs[nsegs - 1].end = r->end;
		else
			segs[nsegs++] = (struct seg){ r->start, r->end, base };
		base += (r->end - r->start) >> PAGE_SHIFT;
	}
	npages = base;
	memset(m_unacc, 0, (npages + 63) / 64 * 8);
	memset(m_asked, 0, (npages + 63) / 64 * 8);
	memset(m_avail, 0, (npages + 63) / 64 * 8);
	memset(m_used, 0, (npages + 63) / 64 * 8);
	nlive = live_bytes = 0;
	return true;
}

static void boot_and_run(const u8 *data, size_t size)
{
	const u8 *h = data;
	unsigned ndesc = h[14];	/* at most 255 < MAX_DESC */
	bool can_accept = !(h[0] & 0x80);
	u32 policy = (h[0] >> 3) & 3;

	if (size < HDR + (size_t)ndesc * DESC_BYTES)
		return;
	ncpus = 1 + (h[0] & 3);
	protect = (h[13] & 0x60) == 0x60 && (h[5] & 8);
	cur_cpu = 0;
	if (policy == 3)
		policy = POLICY_LAZY;
	for (unsigned k = 0; k < ndesc; k++) {
		const u8 *p = data + HDR + k * DESC_BYTES;

		descs[k] = (struct efi_mem_desc){ .type = type_table[p[0] & 15],
			.phys_start = (u64)le(p + 1, 3) << PAGE_SHIFT, .num_pages = le(p + 4, 2) };
	}

	/* memory_parse_map */
	struct memmap_input in = {
		.buf = descs, .size = ndesc * sizeof(descs[0]), .desc_size = sizeof(descs[0]),
		.desc_version = EFI_MEM_DESC_VERSION, .phys_bits = 32 + h[1] % 5,
		.fake_set = h[0] & 4, .fake_start = (u64)le(h + 2, 3) << PAGE_SHIFT,
		.can_accept = can_accept,
	};

	if (memmap_parse(&in, &fmap, ranges, MAX_RANGES, scratch, sizeof(scratch)) || fmap.unusable)
		return;
	if (h[0] & 0x40) {
		u64 hs = (u64)le(h + 9, 3) << PAGE_SHIFT;

		memmap_hold(&fmap, hs, hs + ((u64)h[12] << (PAGE_SHIFT + 4)));
	}
	if (!model_init())
		return;
	for (unsigned i = 0; i < fmap.nranges; i++) {
		const struct mem_range *r = &fmap.ranges[i];

		if (r->kind == RANGE_UNACCEPTED) {
			mark(m_unacc, r->start, r->end, true);
			arena_close(r->start, r->end);
		}
		if (r->kind == RANGE_USABLE || r->kind == RANGE_RECLAIMABLE)
			mark(m_avail, r->start, r->end, true);
	}
	/* The unit the platform refuses: the n-th one with unaccepted memory. */
	memset(&mdl, 0, sizeof(mdl));
	mdl.refuse = h[0] & 0x20;
	mdl.refuse_unit = ~0ULL;
	for (unsigned g = 0, n = 0; mdl.refuse && g < nsegs && mdl.refuse_unit == ~0ULL; g++)
		for (u64 u = ALIGN_DOWN(segs[g].start, UNIT_SIZE); u < segs[g].end; u += UNIT_SIZE) {
			u64 i, j;

			if (span(MAX(u, segs[g].start), MIN(u + UNIT_SIZE, segs[g].end), &i, &j) &&
			    !all_bits(m_unacc, i, j, false) && n++ == h[8]) {
				mdl.refuse_unit = u;
				break;
			}
		}

	/* early_init, then memory_build_page_tables' and the APs' stacks' pages. */
	early_init(&fmap);
	for (unsigned k = 0; k < (h[5] & 7u); k++)
		early_alloc_page();
	/* Not zeroed as the kernel's stacks are: nothing reads them here, and zeroing costs time. */
	if (h[5] >> 4)
		early_reserve_uninit((u64)(h[5] >> 4) * PAGE_SIZE, PAGE_SIZE);

	/* memory_build_bitmap */
	struct bitmap_layout l = bitmap_layout(&fmap);
	u64 bytes = bitmap_storage_bytes(l);
	void *storage = bytes ? virt(early_alloc(bytes, 8)) : scratch;

	nedges = 0;
	bitmap_build(&bm, &fmap, storage, on_edge, &edges);
	CHECK(bitmap_recount(&bm) == bitmap_count(&bm));

	/* memory_init_allocator */
	u32 cache = h[13] & 0x80 ? ((h[13] & 31) ? h[13] & 31 : PALLOC_CPU_CACHE_MAX) : 0;
	struct palloc_env env = {
		.accept = mock_accept, .ctx = &mdl,
		.meta_alloc = meta_alloc, .meta_alloc_uninit = meta_alloc_uninit,
		.now_ns = sim_now, .phys_offset = (u64)(uintptr_t)arena,
		.cpu_id = sim_cpu_id, .ncpus = ncpus, .cpu_cache_high = cache,
		.pt_reserve = PT_PER_ACCEPT,
	};
	const struct early_reserved *er;
	struct palloc_reserved res[EARLY_MAX_RESERVED + 1];
	unsigned n;

	palloc_init(&fmap, &bm, &env, lat_samples, ARRAY_SIZE(lat_samples));
	CHECK(palloc_unaccepted_bytes() == bitmap_count(&bm) * UNIT_SIZE);
	early_finish();
	n = early_reserved(&er);
	for (unsigned k = 0; k < n; k++) {
		u64 i, j;

		/* Boot-time allocations come from usable memory only. */
		CHECK(span(er[k].start, er[k].end, &i, &j));
		mark(m_avail, er[k].start, er[k].end, false);
		res[k] = (struct palloc_reserved){ er[k].start, er[k].end };
	}
	if (h[6]) {
		u64 t = (u64)h[6] << PAGE_SHIFT;

		res[n++] = (struct palloc_reserved){ t, t + TRAMPOLINE_PAGES * PAGE_SIZE };
		mark(m_avail, t, t + TRAMPOLINE_PAGES * PAGE_SIZE, false);
	}
	mark(m_avail, 0, PAGE_SIZE, false);
	mdl.bootfree = avail_bytes();
	/* Below 4 GiB everything is mapped at boot (holes as MMIO), above it every range but unaccepted memory. */
	nresv = 0;
	npt = 0;
	pd_present = 0xf;
	for (unsigned k = 0; k < fmap.nranges; k++)
		if (fmap.ranges[k].kind != RANGE_UNACCEPTED && fmap.ranges[k].kind != RANGE_SUSPECT)
			for (u64 g = fmap.ranges[k].start / GiB; g <= (fmap.ranges[k].end - 1) / GiB && g < 64; g++)
				pd_present |= 1ULL << g;
	palloc_populate(&fmap, res, n);
	sync_reserve();
	mdl.short_reserve = nresv < ncpus * PT_PER_ACCEPT;
	CHECK(!mdl.short_reserve || palloc_stats()->free_bytes == 0);
	CHECK(palloc_stats()->free_bytes + palloc_stats()->meta_bytes + nresv * PAGE_SIZE == mdl.bootfree);

	for (unsigned k = 0; k < nedges; k++)
		if (!palloc_add_edge(edges[k].start, edges[k].end))
			palloc_accept_edge(edges[k].start, edges[k].end);
	policy_init(policy, (u64)h[7] * MiB);
	policy_set_cpus(NULL);
	palloc_set_hooks(policy_refill, policy == POLICY_AHEAD ? policy_after_alloc : NULL);
	policy_boot(NULL);
	policy_boot_edges();
	if (policy == POLICY_EAGER) {
		CHECK(nothing_left_to_accept());
		CHECK(bitmap_count(&bm) == 0);
	}
	check_stats();

	/* The fuzz bytes: allocations of every order and frees, each on its CPU. */
	const u8 *ops = data + HDR + ndesc * DESC_BYTES;
	size_t nops = MIN(size - (HDR + ndesc * DESC_BYTES), (size_t)MAX_OPS);
	u64 calls_at_ready = mdl.calls;

	/* Once an order failed, it and larger ones fail until something is freed: not retried. */
	unsigned failed = PALLOC_MAX_ORDER + 1;

	for (size_t k = 0; k < nops; k++) {
		u8 op = ops[k];

		cur_cpu = ((op >> 4) & 3) % ncpus;
		if (op >> 6 == 3 && nlive) {
			release(next_rand() % nlive);
			failed = PALLOC_MAX_ORDER + 1;
			continue;
		}
		unsigned order = order_table[op & 15];

		if (order >= failed)
			continue;
		u64 a = palloc_alloc(order);

		if (a) {
			take(a, order);
		} else {
			check_failure(order);
			failed = order;
		}
	}
	if (policy == POLICY_EAGER)
		CHECK(mdl.calls == calls_at_ready);

	/* Everything left, largest blocks first, on CPU 0: the others' caches are drained for it. */
	cur_cpu = 0;
	for (int order = PALLOC_MAX_ORDER; order >= 0; order--) {
		u64 a;

		while ((a = palloc_alloc((unsigned)order)))
			take(a, (unsigned)order);
		check_failure((unsigned)order);
	}
	/* All is allocated: every unaccepted page was asked for, and only meta pages are left. */
	CHECK(nothing_left_to_accept());
	CHECK(bitmap_count(&bm) == 0);
	const struct palloc_stats *s = palloc_stats();

	CHECK(s->free_bytes == 0);
	CHECK(s->unaccepted_bytes == 0 && s->edge_unaccepted_bytes == 0);
	struct tally left = tally(m_avail, m_used, 0);

	CHECK(left.max_blocks <= 1 && left.pages * PAGE_SIZE == s->meta_bytes);
	CHECK(avail_bytes() == mdl.bootfree + mdl.accepted - mdl.page0);
	check_stats();

	/* Everything back, on random CPUs; then the caches drained and freed units collapsed. */
	while (nlive) {
		cur_cpu = next_rand() % ncpus;
		release(next_rand() % nlive);
	}
	cur_cpu = 0;
	palloc_drain_all();
	palloc_trim();
	s = palloc_stats();
	struct tally units = tally(m_avail, NULL, 0);

	CHECK(s->meta_bytes >= units.units_part * PAGE_SIZE && s->meta_bytes <= units.units_some * PAGE_SIZE);
	sync_reserve();
	CHECK(s->free_bytes + s->meta_bytes + (nresv + npt) * PAGE_SIZE == avail_bytes());
	CHECK(palloc_count_free() == s->free_bytes);
	u64 by_order = 0;

	for (unsigned k = 0; k <= PALLOC_MAX_ORDER; k++)
		by_order += palloc_free_blocks(k) * (PAGE_SIZE << k);
	CHECK(by_order == s->free_bytes);
	check_stats();
}


/* ------------------------------------------------------------------ large guests */

/*
 * An input whose descriptor count ([14]) is 0 boots a large guest instead of a map from
 * the input: 64 to 127 GiB of RAM, all of it unaccepted but 8 to 262 MiB at 16 MiB, on
 * 1 to 256 simulated CPUs. Its model is sparse: one byte per 2 MiB unit (accepted or
 * not), the live blocks, the page tables and the reserves' pages (a per-page model of
 * 64 GiB would cost the fuzzer more than the run). So the claim cursors really spread
 * (CPU c starts c x 128 MiB up, up to 32 GiB apart) and the accepts really need page
 * directories for new 1 GiB regions. It checks: every unit accepted at most once and
 * only from the unaccepted range; every block handed out in boot memory or an accepted
 * unit, overlapping no live block, page table or reserve page; no allocation refused
 * and no page table missing while units are left; the statistics.
 *   [0] bits 3-4 policy (lazy, eager, ahead, lazy)   [1] RAM above 64 GiB, GiB (% 64)
 *   [2] boot memory above 8 MiB, in 2 MiB steps (% 128)   [3] CPUs - 1   [7] accept_ahead in MiB
 *   op: bits 0-3 order (order_table), bits 6-7 == 3 free, else allocate; the CPU of
 *   op k is (k * 37 + (op >> 4)) % CPUs, so that the ops reach every CPU.
 */
#define BIG_BASE (16 * MiB)
#define BIG_MAX_UNITS ((128 * GiB) / UNIT_SIZE)
#define BIG_MAX_LIVE (MAX_OPS + 8)
#define BIG_MAX_PT 256

static struct {
	u64 boot_end, end;		/* usable [BIG_BASE, boot_end), unaccepted [boot_end, end) */
	u64 accepted, calls;
	u64 pd[2];			/* a page directory maps this GiB */
	u64 pt[BIG_MAX_PT];
	unsigned npt;
	struct live live[BIG_MAX_LIVE];
	unsigned nlive;
	struct palloc_reserved boot[EARLY_MAX_RESERVED];	/* boot-time allocations: never managed */
	unsigned nboot;
	/* Last: only the units of this guest are cleared. */
	u8 unit[BIG_MAX_UNITS];		/* units from boot_end: 1 once accepted */
} big;

MODEL static bool big_overlaps(u64 a, u64 e)
{
	for (unsigned k = 0; k < big.nlive; k++)
		if (a < big.live[k].addr + (PAGE_SIZE << big.live[k].order) && big.live[k].addr < e)
			return true;
	for (unsigned k = 0; k < big.npt; k++)
		if (a < big.pt[k] + PAGE_SIZE && big.pt[k] < e)
			return true;
	for (unsigned k = 0; k < nresv; k++)
		if (a < resv[k] + PAGE_SIZE && resv[k] < e)
			return true;
	for (unsigned k = 0; k < big.nboot; k++)
		if (a < big.boot[k].end && big.boot[k].start < e)
			return true;
	return false;
}

/* Accepted memory, or boot memory the allocator manages. */
MODEL static bool big_usable(u64 a, u64 e)
{
	if (a >= BIG_BASE && e <= big.boot_end)
		return true;
	if (a < big.boot_end || e > big.end)
		return false;
	for (u64 u = ALIGN_DOWN(a, UNIT_SIZE); u < e; u += UNIT_SIZE)
		if (!big.unit[(u - big.boot_end) >> UNIT_SHIFT])
			return false;
	return true;
}

static int big_accept(void *ctx, u64 s, u64 e)
{
	CHECK(ctx == &big);
	CHECK(IS_ALIGNED(s, UNIT_SIZE) && IS_ALIGNED(e, UNIT_SIZE) && s < e);
	CHECK(s >= big.boot_end && e <= big.end);
	for (u64 u = s; u < e; u += UNIT_SIZE) {
		CHECK(!big.unit[(u - big.boot_end) >> UNIT_SHIFT]);	/* never twice */
		big.unit[(u - big.boot_end) >> UNIT_SHIFT] = 1;
	}
	/* accept_backend maps first: a page directory per new 1 GiB region, from the reserve. */
	for (u64 g = s / GiB; g <= (e - 1) / GiB; g++) {
		if (big.pd[g / 64] >> (g % 64) & 1)
			continue;
		u64 pa = palloc_pt_page();

		CHECK(pa != 0);		/* units are being accepted: memory is still to come */
		for (unsigned k = 0; k < nresv; k++)
			if (resv[k] == pa) {
				resv[k] = resv[--nresv];
				break;
			}
		CHECK(big_usable(pa, pa + PAGE_SIZE) && !big_overlaps(pa, pa + PAGE_SIZE));
		CHECK(big.npt < BIG_MAX_PT);
		big.pt[big.npt++] = pa;
		big.pd[g / 64] |= 1ULL << (g % 64);
	}
	big.calls++;
	big.accepted += e - s;
	return 0;
}

/* The reserves as they are now: accepted, and nobody else's. */
static void big_sync_reserve(void)
{
	nresv = palloc_pt_reserve_pages(resv, MAX_RESV);
	CHECK(nresv <= ncpus * PT_PER_ACCEPT);
	for (unsigned k = 0; k < nresv; k++) {
		u64 pa = resv[k];

		resv[k] = ~0ULL;	/* not an overlap with itself */
		CHECK(big_usable(pa, pa + PAGE_SIZE) && !big_overlaps(pa, pa + PAGE_SIZE));
		resv[k] = pa;
	}
}

static void big_take(u64 a, unsigned order)
{
	u64 size = PAGE_SIZE << order;

	/* The reserves as of the last sync (a page leaves one only as a page table). */
	CHECK(a && IS_ALIGNED(a, size));
	CHECK(big_usable(a, a + size));
	CHECK(!big_overlaps(a, a + size));
	CHECK(palloc_block_order(a) == (int)order);
	CHECK(big.nlive < BIG_MAX_LIVE);
	big.live[big.nlive++] = (struct live){ a, order };
}

static void big_check_stats(void)
{
	const struct palloc_stats *st = palloc_stats();
	u64 by_cpu = 0, live_bytes = 0;

	big_sync_reserve();
	for (unsigned c = 0; c < ncpus; c++)
		by_cpu += palloc_cpu_stats(c)->accepted_bytes;
	for (unsigned k = 0; k < big.nlive; k++)
		live_bytes += PAGE_SIZE << big.live[k].order;
	CHECK(st->accepted_bytes == big.accepted && by_cpu == big.accepted);
	CHECK(st->accept_calls == big.calls);
	CHECK(st->unaccepted_bytes == bitmap_count(&bm) * UNIT_SIZE);
	CHECK(st->unaccepted_bytes + big.accepted == big.end - big.boot_end);
	CHECK(st->allocs - st->frees == big.nlive + nresv + big.npt);
	CHECK(st->free_bytes + st->meta_bytes + live_bytes + (nresv + big.npt) * PAGE_SIZE ==
	      st->managed_bytes);
}

static void big_run(const u8 *data, size_t size)
{
	const u8 *h = data;
	u32 policy = (h[0] >> 3) & 3;

	if (policy == 3)
		policy = POLICY_LAZY;
	memset(&big, 0, offsetof(typeof(big), unit));
	big.boot_end = BIG_BASE + (8 + 2 * (u64)(h[2] % 128)) * MiB;	/* whole units */
	big.end = (64 + (u64)(h[1] % 64)) * GiB;
	memset(big.unit, 0, (big.end - big.boot_end) >> UNIT_SHIFT);
	ncpus = 1 + h[3];
	cur_cpu = 0;
	nresv = 0;
	protect = false;
	/* Boot memory (and the holes below 4 GiB, as MMIO) is mapped at boot. */
	big.pd[0] = 0xf | 1ULL << (BIG_BASE / GiB) | 1ULL << ((big.boot_end - 1) / GiB);

	ranges[0] = (struct mem_range){ BIG_BASE, big.boot_end, RANGE_USABLE, 0 };
	ranges[1] = (struct mem_range){ big.boot_end, big.end, RANGE_UNACCEPTED, 0 };
	fmap = (struct memmap){ .ranges = ranges, .cap = MAX_RANGES, .nranges = 2 };
	early_init(&fmap);

	struct bitmap_layout l = bitmap_layout(&fmap);
	void *storage = virt(early_alloc(bitmap_storage_bytes(l), 8));

	nedges = 0;
	bitmap_build(&bm, &fmap, storage, on_edge, &edges);
	CHECK(nedges == 0 && bitmap_count(&bm) == (big.end - big.boot_end) >> UNIT_SHIFT);

	struct palloc_env env = {
		.accept = big_accept, .ctx = &big,
		.meta_alloc = meta_alloc, .meta_alloc_uninit = meta_alloc_uninit,
		.now_ns = sim_now, .phys_offset = (u64)(uintptr_t)arena,
		.cpu_id = sim_cpu_id, .ncpus = ncpus, .cpu_cache_high = PALLOC_CPU_CACHE_MAX,
		.pt_reserve = PT_PER_ACCEPT,
	};
	const struct early_reserved *er;
	struct palloc_reserved res[EARLY_MAX_RESERVED];

	palloc_init(&fmap, &bm, &env, lat_samples, ARRAY_SIZE(lat_samples));
	early_finish();
	unsigned n = early_reserved(&er);

	CHECK(n <= EARLY_MAX_RESERVED);
	for (unsigned k = 0; k < n; k++)
		big.boot[big.nboot++] = res[k] = (struct palloc_reserved){ er[k].start, er[k].end };
	palloc_populate(&fmap, res, n);
	big_sync_reserve();
	CHECK(nresv == ncpus * PT_PER_ACCEPT);	/* 8 MiB of boot memory hold 256 reserves */
	policy_init(policy, (u64)h[7] * MiB);
	policy_set_cpus(NULL);
	palloc_set_hooks(policy_refill, policy == POLICY_AHEAD ? policy_after_alloc : NULL);
	policy_boot(NULL);
	if (policy == POLICY_EAGER)
		CHECK(bitmap_count(&bm) == 0);
	big_check_stats();

	const u8 *ops = data + HDR;
	size_t nops = MIN(size - HDR, (size_t)MAX_OPS);

	for (size_t k = 0; k < nops; k++) {
		u8 op = ops[k];

		cur_cpu = (unsigned)((k * 37 + (op >> 4)) % ncpus);
		if (op >> 6 == 3 && big.nlive) {
			unsigned i = (unsigned)(next_rand() % big.nlive);

			palloc_free(big.live[i].addr);
			big.live[i] = big.live[--big.nlive];
			continue;
		}
		unsigned order = order_table[op & 15];
		u64 a = palloc_alloc(order);

		/* 64 GiB and at most 512 allocations: never out of memory. */
		CHECK(a != 0);
		big_take(a, order);
	}
	big_check_stats();
	/* Everything back, on random CPUs; then the caches drained. */
	while (big.nlive) {
		unsigned i = (unsigned)(next_rand() % big.nlive);

		cur_cpu = (unsigned)(next_rand() % ncpus);
		palloc_free(big.live[i].addr);
		big.live[i] = big.live[--big.nlive];
	}
	cur_cpu = 0;
	palloc_drain_all();
	big_check_stats();
	CHECK(palloc_count_free() == palloc_stats()->free_bytes);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	if (!arena) {
		void *p = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			       -1, 0);

		CHECK(p != MAP_FAILED);
		arena = p;
	}
	if (size < HDR)
		return 0;
	rng = 0x9e3779b97f4a7c15ULL ^ size;
	for (size_t k = 0; k < size; k++)
		rng = (rng ^ data[k]) * 0x100000001b3ULL;
	rng |= 1;
	clock_ns = 0;
	if (!setjmp(stop)) {
		if (data[14] == 0)
			big_run(data, size);
		else
			boot_and_run(data, size);
	}
	arena_reset();
	return 0;
}
