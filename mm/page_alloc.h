/* SPDX-License-Identifier: MIT */
/* memaccept: the physical page allocator: buddy blocks of 4 KiB to 2 MiB over accepted memory only. */
#ifndef MM_PAGE_ALLOC_H
#define MM_PAGE_ALLOC_H

#include "include/smp.h"
#include "include/types.h"
#include "mm/bitmap.h"
#include "mm/latency.h"
#include "mm/memmap.h"
#include "mm/series.h"

/*
 * Reads past the end of an allocation. Linux accepts one extra unit after a range
 * that ends on a unit boundary, because load_unaligned_zeropad() may read a word that
 * straddles the end of a page. memaccept has no such reads: memset/memcpy (rep
 * stos/movs) touch exactly the bytes asked for, string routines stop at the
 * terminator of strings that live in the image, and the bitmap and allocator read
 * whole u64 words only inside their own storage. So nothing reads past the end of an
 * allocation and no extra unit is accepted. Instead of trusting that, unaccepted units
 * stay unmapped: a read that ever did cross into one faults and is reported with its
 * address (kernel/memory.c; test case stray_cross does exactly that read).
 */

#define PALLOC_MAX_ORDER 9	/* 2^9 pages = 2 MiB = one acceptance unit */
/*
 * Per-CPU caches (page_alloc.c): blocks of orders 0..PALLOC_PCP_MAX_ORDER (Linux caches
 * the same orders per CPU, up to its PAGE_ALLOC_COSTLY_ORDER), at most
 * PALLOC_CPU_CACHE_MAX of each order per CPU.
 */
#define PALLOC_PCP_MAX_ORDER 3
#define PALLOC_CPU_CACHE_MAX 31
#define PALLOC_MAX_ZONES 64
#define PALLOC_MAX_RESERVED 64	/* ranges palloc_populate() excludes, page 0 included */

/* Which path accepted memory, for the statistics. */
enum accept_path {
	ACCEPT_BOOT_EDGE,	/* partial units accepted at boot: only when the edge table is full */
	ACCEPT_LAZY,		/* an allocation found no free memory */
	ACCEPT_EAGER,		/* accept_memory=eager, before `ready` */
	ACCEPT_AHEAD,		/* accept_memory=ahead, keeping the spare topped up */
	ACCEPT_EXPLICIT,	/* palloc_accept_range() from a workload or test */
	ACCEPT_BACKGROUND,	/* accept_memory=background: the other vCPUs, after `ready` */
	ACCEPT_PATH_COUNT,
};

struct palloc_stats {
	u64 managed_bytes;	/* accepted memory the allocator owns (free or handed out) */
	u64 free_bytes;
	u64 meta_bytes;		/* pages holding split-unit metadata */
	u64 initial_free_bytes;	/* free at the end of palloc_init() */
	u64 allocs, frees, alloc_failures;
	u64 accepted_bytes;	/* by this allocator, all paths */
	u64 accepted_by_path[ACCEPT_PATH_COUNT];
	u64 accept_calls;	/* platform accept calls made through palloc */
	u64 accept_failures;	/* units, and partial-unit edges, the platform refused: lost */
	u64 unaccepted_bytes;	/* whole units still unaccepted (Linux's Unaccepted: in /proc/meminfo) */
	u64 edge_unaccepted_bytes;	/* partial units' unaccepted pieces still pending */
	u64 edge_accepted_bytes;	/* ... accepted, whatever the path (also counted by path) */
	struct latency accept_lat;	/* ns per accept call */
	struct series accepted_over_time;	/* (ns since env.now_ns's origin, accepted_bytes) */
};

/*
 * What one CPU accepted, kept by that CPU without a lock (only it writes its slot) and
 * merged for the report: the `accepted_by_cpu` array of the summary.
 */
/* One CPU's part: written only by that CPU, read by anyone (relaxed). */
struct palloc_cpu_stats {
	u64 accepted_bytes;
	u64 accept_calls;
	u64 accept_ns;
	u64 accept_waits;	/* times it waited for units another CPU was accepting */
} __aligned(64);	/* one cache line each: no false sharing between CPUs */

/*
 * What the allocator needs from outside: acceptance (map the range, run the platform's
 * accept), metadata memory at init, and how to reach physical memory (identity map in
 * the kernel; an arena in the host tests).
 */
struct palloc_env {
	/* Map and accept [start, end); both 4 KiB aligned. 0, or negative: the range is lost. */
	int (*accept)(void *ctx, u64 start, u64 end);
	void *ctx;
	/* Zeroed, 8-byte aligned memory that is never freed (per-unit state). */
	void *(*meta_alloc)(u64 bytes);
	/*
	 * The same, but not zeroed (the allocator initialises each page of it before its
	 * first read: the per-unit info arrays). NULL: meta_alloc is used.
	 */
	void *(*meta_alloc_uninit)(u64 bytes);
	/* Time source for accept latencies: ns since any fixed point. */
	u64 (*now_ns)(void);
	/* Physical address -> pointer. */
	u64 phys_offset;
	/* The calling CPU's index, 0..ncpus-1; NULL: always 0 (one CPU). */
	unsigned (*cpu_id)(void);
	/*
	 * How many CPU indices cpu_id may return (at most MAX_CPUS; 0: MAX_CPUS, or 1
	 * without cpu_id). Whatever walks every CPU (draining the caches, the statistics)
	 * walks these, so a guest pays for the CPUs it has, not for MAX_CPUS.
	 */
	unsigned ncpus;
	/* Blocks of each small order a CPU keeps to itself (0: no per-CPU caches). */
	unsigned cpu_cache_high;
	/*
	 * Pages each CPU keeps for the page tables its accept callback may need to map one
	 * accept's range (at most PALLOC_PT_RESERVE_MAX; 0: none). See palloc_pt_page.
	 */
	unsigned pt_reserve;
};

#define PALLOC_PT_RESERVE_MAX 4

struct palloc_reserved {
	u64 start, end;
};

/*
 * Every public function below may be called from any CPU at the same time. Small blocks
 * come from and go to the calling CPU's own cache without any lock; the free lists have
 * one lock, acceptance (the bitmap, claims, partial units) another, and neither is held
 * while the platform accepts. A unit is claimed (its bitmap bit cleared) under the
 * acceptance lock before it is accepted, so no two CPUs accept the same unit; it reaches
 * the free lists only after the platform call returned, so nothing is handed out
 * unaccepted; and a CPU that needs a unit another CPU is still accepting waits for it
 * (palloc_alloc, palloc_accept_range).
 *
 * Set the allocator up over the RAM of `m` (its per-unit state comes from
 * env->meta_alloc); every set bit of `bm` is a unit that can be accepted later. Nothing
 * is free until palloc_populate().
 */
void palloc_init(const struct memmap *m, struct unaccepted_bitmap *bm,
		 const struct palloc_env *env, u32 *lat_samples, u64 lat_cap);
/*
 * Every RANGE_USABLE and RANGE_RECLAIMABLE byte of the map becomes free memory, except
 * page 0 and the `reserved` ranges (boot-time allocations). The caller must no longer
 * use boot-services memory.
 */
void palloc_populate(const struct memmap *m, const struct palloc_reserved *reserved,
		     unsigned nreserved);

/* Add [start, end) (accepted, 4 KiB aligned, inside a managed zone) as free memory. */
void palloc_add_free(u64 start, u64 end);

/* Allocate 2^order pages, naturally aligned. No acceptance: 0 when none are free. */
u64 palloc_alloc_accepted(unsigned order);
/*
 * Allocate; accepts more units through the policy when none are free, and waits for
 * units other CPUs are accepting before it gives up. 0: out of memory. Never from
 * inside an accept callback (it panics): that path uses palloc_alloc_accepted or
 * palloc_pt_page.
 */
u64 palloc_alloc(unsigned order);
/* Return a block from palloc_alloc*(); panics on a double or foreign free. */
void palloc_free(u64 addr);
/*
 * The per-CPU caches: serve another CPU's request to drain them (call it wherever a CPU
 * waits: a CPU that runs out of memory waits for the others' caches); give this CPU's
 * back now; give every CPU's back (each drains its own: the others must be allocating,
 * freeing or polling), so that the statistics count nothing in a cache.
 */
void palloc_poll(void);
void palloc_drain_this_cpu(void);
void palloc_drain_all(void);
/* Times the allocator's locks (free lists, info pages, acceptance) were taken so far. */
u64 palloc_lock_acquisitions(void);
/*
 * Turn every fully free split unit back into a whole 2 MiB block now (freed units wait
 * until a 2 MiB allocation needs them; see maybe_collapse in page_alloc.c). This CPU's
 * cache is given back first; the other CPUs' stay (palloc_drain_all() before, for those).
 */
void palloc_trim(void);
/*
 * A page for a page table. Inside this CPU's accept callback: from this CPU's reserve
 * (env.pt_reserve pages, filled by palloc_populate and topped up from each accept's own
 * memory before anyone else can take it), so that mapping memory that is being accepted
 * because none is left never needs memory that only that accept could provide, however
 * many CPUs accept at once. Anywhere else: free memory, without acceptance. 0: none.
 * The page is not zeroed. Page tables are never freed.
 */
u64 palloc_pt_page(void);

/* Order of an allocated block, or -1 if addr is not the start of one. */
int palloc_block_order(u64 addr);

/*
 * Policy hooks (mm/policy.c): refill supplies memory when an allocation finds none;
 * after_alloc runs after every successful palloc_alloc() that did not come from the
 * calling CPU's cache: every allocation of 32 KiB or more, and the one in each batch
 * that refills the cache (so after at most PALLOC_CPU_CACHE_MAX / 4 small ones).
 */
void palloc_set_hooks(bool (*refill)(unsigned order), void (*after_alloc)(void));

/*
 * The statistics, as of this call: free_bytes, allocs and frees merge the per-CPU
 * caches' parts in when it is called, so call it again after allocating or freeing.
 * Exact while the other CPUs are idle (the report at the end, after palloc_drain_all);
 * palloc_free_bytes() / palloc_unaccepted_bytes() may be called any time.
 */
const struct palloc_stats *palloc_stats(void);
u64 palloc_free_bytes(void);
u64 palloc_unaccepted_bytes(void);
struct palloc_stats *palloc_stats_mut(void);
/* Successful allocations CPU `cpu` made so far (every path, page-table pages included). */
u64 palloc_cpu_allocs(unsigned cpu);
/*
 * Count free memory from the free-block bits and the free-unit maps, not the counters
 * (for checks; walks every split unit that has a free block).
 */
u64 palloc_count_free(void);
/* Free blocks per order, for the report. */
u64 palloc_free_blocks(unsigned order);

#endif
