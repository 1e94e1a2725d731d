/* SPDX-License-Identifier: MIT */
/* memaccept: buddy allocator whose top order is the 2 MiB acceptance unit (pure logic, host-tested); acceptance itself is mm/accept.c. */
#include "include/panic.h"
#include "lib/bits.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "mm/palloc_internal.h"

/*
 * Layout of the state:
 *
 * - Zones are the runs of RAM in the memory map (a gap of 1 GiB or more starts a new
 *   one), each with one u16 per 2 MiB unit: 1 MiB of state for a 1 TiB guest, zero
 *   for holes between zones.
 * - A unit is OUTSIDE (not RAM, used by the firmware or the kernel, or unaccepted:
 *   the bitmap tells which), ACCEPTING (claimed: its bit is clear, a CPU is accepting
 *   it), FREE (a whole free 2 MiB block), USED (handed out whole), SPLIT (carved into
 *   smaller blocks), or LOST (the platform refused to accept it).
 * - A SPLIT unit keeps its page-level state in one of its own pages, the meta page: one
 *   byte per page, set on the first page (the head) of every free or allocated block.
 *   So a split unit gives up 1/512 of itself, and an unsplit unit costs two bytes.
 * - Those two bytes cost nothing until something uses a unit near them: the info array
 *   is reserved without being zeroed and initialised one page (2048 units, 4 GiB) at a
 *   time, when a unit of that page first leaves OUTSIDE (added as free memory, claimed
 *   for acceptance). A per-zone bit per info page says which pages are initialised;
 *   a unit in any other page is OUTSIDE, and the queries (palloc_unit_state,
 *   palloc_block_order, a refused free) answer from that bit without reading the page.
 *   So a 256 GiB guest with only its low memory accepted writes one page of info, not
 *   64 (under a hypervisor that backs guest memory on first write, each page written
 *   is a host fault). A free unit, a split unit and a block handed out are in an
 *   initialised page by construction, so allocation and free read info unchecked.
 * - Free blocks of order 0..8 are bits in their unit's meta page (one bit per possible
 *   block head and order, 1022 bits), and each order has a doubly linked list of the
 *   split units that hold a free block of that order, linked through the meta pages.
 *   Whole free units are a bit in a per-zone bitmap. So the allocator never writes to
 *   free memory: a guest that never uses a unit never touches it, and an allocation
 *   touches only the meta page and this structure, never the memory it hands out (the
 *   role of Linux's struct page). Links inside the free pages cost a first touch of a
 *   new page on about every second 4 KiB allocation; when another vCPU had accepted
 *   (zeroed) that page, it was cold for this one: under QEMU TCG, an allocation that
 *   wrote 3-5 such links took 0.7 us longer than when the same CPU had just accepted
 *   the unit (accept_memory=background against lazy, touch workload).
 *
 * Nothing here touches memory that is not accepted: every address on a free list, and
 * every meta page, is inside a unit that was accepted before it was added.
 */

#define PAGES_PER_UNIT (UNIT_SIZE / PAGE_SIZE)
#define ORDERS (PALLOC_MAX_ORDER + 1)

#define UI_STATE(i) ((i) & 0x7)
#define UI_PENDING (1u << 3)	/* SPLIT: on the pending-collapse stack */
#define UI_META_SHIFT 4		/* SPLIT: index of the meta page within the unit */
_Static_assert(U_OUTSIDE == 0, "a zeroed info page says OUTSIDE for each of its units");

/* Units whose info shares one page of a zone's info array: 2048 units, 4 GiB. */
#define INFO_PER_PAGE (PAGE_SIZE / sizeof(u16))
/* Fully free split units waiting to become whole again (see maybe_collapse). */
#define PENDING_MAX 64

/* Per-page bytes in the meta page; 0 means "inside a block, not its head". */
#define PG_ORDER_MASK 0x0f
#define PG_FREE 0x10
#define PG_USED 0x20
#define PG_RESERVED 0x40	/* never managed: not RAM, boot data, or the meta page itself */
#define PG_CACHED 0x80		/* the head of a free block in a CPU's cache (per-CPU caches below) */

#define META_MAGIC 0x4d455441u	/* "META" */

/*
 * Free-block bits: order k's blocks start at bit FREEMAP_BITS - (FREEMAP_BITS >> k),
 * one bit per 2^k pages, so the orders follow each other from 0 (512 bits) to 8 (2).
 */
#define FREEMAP_BITS (2 * PAGES_PER_UNIT)

struct unit_meta {
	u32 magic;
	u16 free_pages;
	u16 reserved_pages;
	u16 nfree[PALLOC_MAX_ORDER];	/* free blocks of each order in this unit */
	u16 home;		/* 1 + the CPU whose cache refills from this unit (0: none) */
	/* This unit's neighbours on each order's list (their meta pages). */
	struct unit_meta *next[PALLOC_MAX_ORDER], *prev[PALLOC_MAX_ORDER];
	u64 freemap[FREEMAP_BITS / 64];
	u8 page[PAGES_PER_UNIT];
};
_Static_assert(sizeof(struct unit_meta) <= PAGE_SIZE, "the meta page holds struct unit_meta");

struct zone {
	u64 base;		/* 2 MiB aligned */
	u64 units;
	u64 bytes;		/* units * UNIT_SIZE */
	u16 *info;		/* not zeroed at init: page p is valid once bit p of info_ready is set */
	/*
	 * Bit set: the unit is U_FREE. Not zeroed at init either: the words of an info
	 * page's units are zeroed with the page (info_page_init), and only those are read.
	 */
	u64 *free_units;
	u64 *info_ready;	/* one bit per INFO_PER_PAGE units: their info was initialised */
};

/*
 * All of the allocator's state, in one place, guarded by one lock. The lock is never
 * held across a platform accept call (those take from microseconds to seconds): units
 * are claimed under the lock (bitmap bit cleared, state U_ACCEPTING), accepted without
 * it, and handed to the free map under it again.
 */
struct palloc_state {
	struct zone zones[PALLOC_MAX_ZONES];
	unsigned nzones;
	struct unit_meta *free_head[PALLOC_MAX_ORDER];	/* first unit on each order's list */
	u64 free_count[ORDERS];		/* free blocks per order */
	struct palloc_env env;
	struct palloc_stats stats;	/* free_bytes, allocs, frees: merged when read (palloc_stats) */
	u64 buddy_free_bytes;		/* free in the buddy lists; the CPUs' caches hold the rest */
	bool (*refill_hook)(unsigned order);
	void (*after_alloc_hook)(void);
	u64 free_unit_hint;	/* no free whole unit lies below this address */
	u64 pending[PENDING_MAX];
	unsigned npending;
};

static struct palloc_state ps;
struct spinlock palloc_lock __aligned(64);

/* Per-CPU caches of small free blocks: see "per-CPU caches" below. */
#define PCP_ORDERS (PALLOC_PCP_MAX_ORDER + 1)

struct pcp_slot {
	u8 *state;	/* the block's page byte, in its unit's meta page */
	u64 block;
};

struct pcp {
	u32 count[PCP_ORDERS];	/* written by the owner only (relaxed), read by a drain requester */
	u64 asked;		/* the latest drain request for this CPU (requesters raise it) */
	u64 served;		/* the drain request this CPU served last (owner, release) */
	/*
	 * This CPU's allocations and frees, every path: only the owner writes them (relaxed
	 * stores), so each only grows and the sum over the CPUs, read one counter at a time,
	 * never goes backwards between two reads (palloc_stats).
	 */
	u64 allocs, frees;
	struct unit_meta *home;	/* the split unit refills come from first (under the lock) */
	/* A stack per order, interleaved: order k's n-th block is slot[n][k] (one lea to find). */
	struct pcp_slot slot[PALLOC_CPU_CACHE_MAX][PCP_ORDERS];
} __aligned(64);
/* A power of two, so that finding a CPU's cache is a shift. */
_Static_assert(sizeof(struct pcp) == 2048, "struct pcp is 2 KiB");

static struct pcp pcps[MAX_CPUS];
static u64 drain_request;
/*
 * Set (release) when palloc_init has finished, cleared when it starts: the other CPUs
 * poll (palloc_poll) from the moment they start, which may be before the boot CPU has
 * set the allocator up, and must not read its state until then.
 */
static bool palloc_up;
#ifdef PALLOC_TEST_POINTS
void (*palloc_test_point)(enum palloc_point point);

void palloc_test_forget(void)
{
	/* As before the first palloc_init: a test of start-up runs its CPUs from here. */
	__atomic_store_n(&palloc_up, false, __ATOMIC_RELEASE);
}
#endif


static __always_inline void *virt(u64 pa)
{
	return (void *)(uintptr_t)(pa + ps.env.phys_offset);
}

static __always_inline u64 phys(const void *p)
{
	return (u64)(uintptr_t)p - ps.env.phys_offset;
}

/* Read-only, so that the per-CPU fast paths may call it without the lock (a handful of zones). */
static __always_inline const struct zone *zone_of(u64 addr)
{
	/* Most guests have one zone, or most memory in the first: that one without the loop. */
	if (likely(addr - ps.zones[0].base < ps.zones[0].bytes))
		return &ps.zones[0];
	for (unsigned i = 1; i < ps.nzones; i++)
		if (addr - ps.zones[i].base < ps.zones[i].bytes)
			return &ps.zones[i];
	return NULL;
}

/*
 * A unit's info word and a split unit's page bytes are read by paths under either lock
 * and by the per-CPU fast paths, and written under the lock of whoever owns the unit at
 * the time (acceptance for an unaccepted unit, the allocator for the rest) or by the CPU
 * that holds a block (its own page byte): relaxed atomic loads and stores, plain moves
 * on x86, so that no reader meets a torn or racing access.
 */
static __always_inline u16 info_get(const u16 *info)
{
	return __atomic_load_n(info, __ATOMIC_RELAXED);
}

static inline void info_set(u16 *info, u16 v)
{
	__atomic_store_n(info, v, __ATOMIC_RELAXED);
}

static inline u8 pg_get(const struct unit_meta *m, u64 idx)
{
	return __atomic_load_n(&m->page[idx], __ATOMIC_RELAXED);
}

static inline void pg_set(struct unit_meta *m, u64 idx, u8 v)
{
	__atomic_store_n(&m->page[idx], v, __ATOMIC_RELAXED);
}

/*
 * A unit's info, unchecked: only for a unit whose info page is initialised because the
 * unit is not OUTSIDE (free, split, handed out, claimed). Other units: unit_info_init
 * or unit_state_peek below.
 */
static u16 *unit_info(u64 unit)
{
	const struct zone *z = zone_of(unit);

	return z ? &z->info[(unit - z->base) >> UNIT_SHIFT] : NULL;
}

/* Is the info of unit index i of zone z initialised? (Without the lock: acquire.) */
static bool info_ready(const struct zone *z, u64 i)
{
	u64 page = i / INFO_PER_PAGE;

	return (__atomic_load_n(&z->info_ready[page / 64], __ATOMIC_ACQUIRE) >> (page % 64)) & 1;
}

/*
 * Initialise the info page holding unit index i: each of its units is OUTSIDE (not RAM,
 * or not accepted yet, which the bitmap tells apart). Under the lock, or before other
 * CPUs run. The bit is published after the page is written, so that a reader without
 * the lock that sees it also sees the page (info_ready's acquire).
 */
static void info_page_init(const struct zone *z, u64 i)
{
	u64 page = i / INFO_PER_PAGE, first = page * INFO_PER_PAGE;

	u64 n = MIN(INFO_PER_PAGE, z->units - first);

	memset(&z->info[first], 0, n * sizeof(u16));
	memset(&z->free_units[first / 64], 0, (n + 63) / 64 * sizeof(u64));
	__atomic_fetch_or(&z->info_ready[page / 64], 1ULL << (page % 64), __ATOMIC_RELEASE);
}

/* Serialises the first write of an info page: the allocator and acceptance may both need it. */
static struct spinlock info_lock;

/*
 * A unit's info for a path where the unit may leave OUTSIDE (adding free memory,
 * claiming for acceptance): its info page is initialised first. NULL outside zones.
 */
static u16 *unit_info_init(u64 unit)
{
	const struct zone *z = zone_of(unit);

	if (!z)
		return NULL;
	u64 i = (unit - z->base) >> UNIT_SHIFT;

	if (!info_ready(z, i)) {
		spin_lock(&info_lock);
		if (!info_ready(z, i))
			info_page_init(z, i);
		spin_unlock(&info_lock);
	}
	return &z->info[i];
}

/* A unit's state without writing anything: OUTSIDE while its info page is not initialised. */
static int unit_state_peek(u64 unit)
{
	const struct zone *z = zone_of(unit);

	if (!z)
		return -1;
	u64 i = (unit - z->base) >> UNIT_SHIFT;

	return info_ready(z, i) ? (int)UI_STATE(info_get(&z->info[i])) : U_OUTSIDE;
}

static __always_inline struct unit_meta *meta_of(u64 unit, u16 info)
{
	/* Masked: whatever info holds, the meta page read is one of this unit's pages. */
	return virt(unit + ((u64)((info >> UI_META_SHIFT) & (PAGES_PER_UNIT - 1)) << PAGE_SHIFT));
}

/* ------------------------------------------------------------------ free lists */

static unsigned freemap_bit(u64 idx, unsigned order)
{
	return FREEMAP_BITS - (FREEMAP_BITS >> order) + (unsigned)(idx >> order);
}

/* The block of 2^order pages at page idx of a split unit becomes free. */
static void block_free_add(struct unit_meta *m, u64 idx, unsigned order)
{
	bits_set(m->freemap, freemap_bit(idx, order));
	if (m->nfree[order]++ == 0) {
		/* The unit's first free block of this order: it goes to the front of the list. */
		m->prev[order] = NULL;
		m->next[order] = ps.free_head[order];
		if (m->next[order])
			m->next[order]->prev[order] = m;
		ps.free_head[order] = m;
	}
	ps.free_count[order]++;
	ps.buddy_free_bytes += PAGE_SIZE << order;
}

/* A free block of 2^order pages left a split unit (taken or merged); its bit is clear. */
static void block_free_gone(struct unit_meta *m, unsigned order)
{
	if (--m->nfree[order] == 0) {
		if (m->prev[order])
			m->prev[order]->next[order] = m->next[order];
		else
			ps.free_head[order] = m->next[order];
		if (m->next[order])
			m->next[order]->prev[order] = m->prev[order];
	}
	ps.free_count[order]--;
	ps.buddy_free_bytes -= PAGE_SIZE << order;
}

/* The free block of 2^order pages at page idx of a split unit is merged with its buddy. */
static void block_free_remove(struct unit_meta *m, u64 idx, unsigned order)
{
	bits_clear(m->freemap, freemap_bit(idx, order));
	block_free_gone(m, order);
}

/*
 * Take the lowest free block of `order` from a unit that has one (nfree > 0); returns
 * its page index. The orders' bit ranges follow each other upwards, so the first set
 * bit at or after the start of this order's range is this order's.
 */
static u64 block_free_take(struct unit_meta *m, unsigned order)
{
	unsigned first = FREEMAP_BITS - (FREEMAP_BITS >> order);
	unsigned w = first / 64;
	u64 bits = m->freemap[w] & (~0ULL << (first % 64));	/* not the lower orders' */

	/* Not bits_find_next: nfree > 0 promises a bit, and this is the allocation path. */
	while (!bits)
		bits = m->freemap[++w];
	unsigned bit = (unsigned)__builtin_ctzll(bits);

	m->freemap[w] &= ~(1ULL << bit);
	block_free_gone(m, order);
	return (u64)(w * 64 + bit - first) << order;
}

/* Whole free units: a bit in the zone's free_units map. */
static void unit_free_push(u64 unit, u16 *info)
{
	const struct zone *z = zone_of(unit);
	u64 bit = (unit - z->base) >> UNIT_SHIFT;

	info_set(info, U_FREE);
	bits_set(z->free_units, bit);
	ps.free_count[PALLOC_MAX_ORDER]++;
	ps.buddy_free_bytes += UNIT_SIZE;
	if (unit < ps.free_unit_hint)
		ps.free_unit_hint = unit;
}

static void unit_free_remove(u64 unit)
{
	const struct zone *z = zone_of(unit);
	u64 bit = (unit - z->base) >> UNIT_SHIFT;

	bits_clear(z->free_units, bit);
	ps.free_count[PALLOC_MAX_ORDER]--;
	ps.buddy_free_bytes -= UNIT_SIZE;
}

/*
 * The first free whole unit of zone z at or after unit index `from`, z->units if none.
 * Only initialised info pages can hold one, and only their free_units words are read.
 */
static u64 zone_next_free_unit(const struct zone *z, u64 from)
{
	u64 pages = (z->units + INFO_PER_PAGE - 1) / INFO_PER_PAGE;

	for (u64 page = from / INFO_PER_PAGE; page < pages; page++) {
		u64 ready = __atomic_load_n(&z->info_ready[page / 64], __ATOMIC_ACQUIRE) >> (page % 64);

		if (!ready) {
			/* No initialised page left in this word of info_ready: the next word. */
			page = ALIGN_DOWN(page, 64) + 63;
			continue;
		}
		page += (u64)__builtin_ctzll(ready);
		if (page >= pages)
			break;
		u64 lo = MAX(from, page * INFO_PER_PAGE), hi = MIN((page + 1) * INFO_PER_PAGE, z->units);
		u64 found = bits_find_next(z->free_units, hi, lo);

		if (found < hi)
			return found;
	}
	return z->units;
}

/* The lowest free whole unit (the caller checked that one exists). */
static u64 lowest_free_unit(void)
{
	for (unsigned i = 0; i < ps.nzones; i++) {
		const struct zone *z = &ps.zones[i];
		u64 end = z->base + z->units * UNIT_SIZE;

		if (end <= ps.free_unit_hint)
			continue;
		u64 bit = ps.free_unit_hint > z->base ? (ps.free_unit_hint - z->base) >> UNIT_SHIFT : 0;
		u64 found = zone_next_free_unit(z, bit);

		if (found < z->units) {
			ps.free_unit_hint = z->base + (found << UNIT_SHIFT);
			return ps.free_unit_hint;
		}
	}
	panic("lowest_free_unit: %llu free units counted, none found from %llx",
	      ps.free_count[PALLOC_MAX_ORDER], ps.free_unit_hint);
}

/* ------------------------------------------------------------------ split units */

/* Free 2^order pages at page index idx of a split unit, merging with free buddies. */
static void free_in_unit(struct unit_meta *m, u64 idx, unsigned order)
{
	m->free_pages += 1u << order;
	/* A split unit always holds its meta page, so blocks inside it stop at order 8. */
	while (order < PALLOC_MAX_ORDER - 1) {
		u64 buddy = idx ^ (1ULL << order);

		if (pg_get(m, buddy) != (PG_FREE | order))
			break;
		block_free_remove(m, buddy, order);
		pg_set(m, buddy, 0);
		idx &= ~(1ULL << order);
		order++;
	}
	pg_set(m, idx, (u8)(PG_FREE | order));
	block_free_add(m, idx, order);
}

static void unit_unhome(struct unit_meta *m);

static bool collapsible(u16 info, const struct unit_meta *m)
{
	return (info >> UI_META_SHIFT) == 0 && m->reserved_pages == 1 &&
	       m->free_pages == PAGES_PER_UNIT - 1;
}

/*
 * When everything but the meta page at index 0 is free again, the buddies have merged
 * into blocks of order 0..8 at pages 1, 2, 4, ..., 256: turn them back into one free
 * 2 MiB block, so that 2 MiB allocations can use the unit again.
 */
static void collapse(u64 unit, u16 *info, struct unit_meta *m)
{
	for (unsigned order = 0; order < PALLOC_MAX_ORDER; order++) {
		u64 idx = 1ULL << order;

		if (pg_get(m, idx) != (PG_FREE | order))
			panic("collapse: unit %llx page %llu is %#x, expected a free order-%u block",
			      unit, idx, pg_get(m, idx), order);
		block_free_remove(m, idx, order);
	}
	unit_unhome(m);
	m->magic = 0;
	ps.stats.meta_bytes -= PAGE_SIZE;
	unit_free_push(unit, info);
}

/*
 * A freed unit is not collapsed at once: a workload that allocates and frees one page
 * in an otherwise empty unit would split and collapse it every time (measured on the
 * host: ~4,900 instructions per alloc+free instead of ~240). It waits on a small stack
 * until a 2 MiB allocation needs it (collapse_pending) or the stack is full. At boot
 * (now = true) there is no such pattern: collapse right away.
 */
static void maybe_collapse(u64 unit, u16 *info, struct unit_meta *m, bool now)
{
	u16 v = info_get(info);

	if (!collapsible(v, m) || (v & UI_PENDING))
		return;
	if (now || ps.npending == PENDING_MAX) {
		collapse(unit, info, m);
		return;
	}
	ps.pending[ps.npending++] = unit;
	info_set(info, v | UI_PENDING);
}

/* Collapse one pending unit that is still fully free; false when none is left. */
static bool collapse_pending(void)
{
	while (ps.npending) {
		u64 unit = ps.pending[--ps.npending];
		u16 *info = unit_info(unit), v = info_get(info) & (u16)~UI_PENDING;

		info_set(info, v);
		if (UI_STATE(v) != U_SPLIT)
			continue;
		struct unit_meta *m = meta_of(unit, v);

		if (collapsible(v, m)) {
			collapse(unit, info, m);
			return true;
		}
	}
	return false;
}

void palloc_trim(void)
{
	/* A block in a cache keeps its unit split: this CPU's go back first. */
	palloc_drain_this_cpu();
	spin_lock(&palloc_lock);
	while (collapse_pending())
		;
	spin_unlock(&palloc_lock);
}

/* Start page-level tracking of a unit; every page starts reserved except what is freed later. */
static struct unit_meta *make_split(u64 unit, u16 *info, u64 meta_idx)
{
	struct unit_meta *m = virt(unit + (meta_idx << PAGE_SHIFT));

	memset(m, 0, sizeof(*m));
	m->magic = META_MAGIC;
	memset(m->page, PG_RESERVED, sizeof(m->page));
	m->reserved_pages = PAGES_PER_UNIT;
	info_set(info, (u16)(U_SPLIT | (meta_idx << UI_META_SHIFT)));
	ps.stats.meta_bytes += PAGE_SIZE;
	return m;
}

/* Make pages [a, b) of a split unit free (they were reserved). */
static void unreserve(u64 unit, struct unit_meta *m, u64 a, u64 b)
{
	for (u64 i = a; i < b; i++) {
		if (pg_get(m, i) != PG_RESERVED)
			panic("palloc_add_free: page %llx is already managed", unit + (i << PAGE_SHIFT));
		pg_set(m, i, 0);
	}
	m->reserved_pages -= (u16)(b - a);
	/* Largest naturally aligned blocks; free_in_unit merges them with free neighbours. */
	while (a < b) {
		unsigned order = 0;

		while (order < PALLOC_MAX_ORDER - 1 && !(a & (1ULL << order)) &&
		       a + (2ULL << order) <= b)
			order++;
		free_in_unit(m, a, order);
		a += 1ULL << order;
	}
}

/* Split a free 2 MiB block: page 0 becomes the meta page, the rest free blocks. */
static void split_free_unit(u64 unit, u16 *info)
{
	unit_free_remove(unit);
	struct unit_meta *m = make_split(unit, info, 0);

	unreserve(unit, m, 1, PAGES_PER_UNIT);
}

/* ------------------------------------------------------------------ init */

static bool managed_kind(u32 kind)
{
	return kind == RANGE_USABLE || kind == RANGE_UNACCEPTED || kind == RANGE_RECLAIMABLE ||
	       kind == RANGE_IMAGE;
}

static void build_zones(const struct memmap *m)
{
	u64 start = 0, end = 0;
	bool open = false;

	ps.nzones = 0;
	for (unsigned i = 0; i <= m->nranges; i++) {
		const struct mem_range *r = i < m->nranges ? &m->ranges[i] : NULL;

		if (r && !managed_kind(r->kind))
			continue;
		if (open && (!r || (ALIGN_DOWN(r->start, UNIT_SIZE) > end &&
				    ALIGN_DOWN(r->start, UNIT_SIZE) - end >= GiB))) {
			if (ps.nzones == PALLOC_MAX_ZONES)
				panic("palloc_init: more than %d separate runs of RAM", PALLOC_MAX_ZONES);
			struct zone *z = &ps.zones[ps.nzones++];

			z->base = start;
			z->units = (end - start) >> UNIT_SHIFT;
			z->bytes = end - start;
			u64 words = (z->units + 63) / 64;
			u64 pages = (z->units + INFO_PER_PAGE - 1) / INFO_PER_PAGE;

			void *(*uninit)(u64) = ps.env.meta_alloc_uninit ? ps.env.meta_alloc_uninit
									: ps.env.meta_alloc;

			/* Not zeroed: info_page_init writes each page's part before anything reads it. */
			z->info = uninit(z->units * sizeof(u16));
			z->free_units = uninit(words * 8);
			/* Zeroed: one bit per info page (256 bytes for 8 TiB). */
			z->info_ready = ps.env.meta_alloc((pages + 63) / 64 * 8);
			open = false;
		}
		if (!r)
			break;
		if (!open) {
			start = ALIGN_DOWN(r->start, UNIT_SIZE);
			open = true;
		}
		end = MAX(end, r->end > ALIGN_DOWN(UINT64_MAX, UNIT_SIZE) ? ALIGN_DOWN(UINT64_MAX, UNIT_SIZE)
									  : ALIGN_UP(r->end, UNIT_SIZE));
	}
}

static void add_free_locked(u64 start, u64 end)
{
	if (!IS_ALIGNED(start, PAGE_SIZE) || !IS_ALIGNED(end, PAGE_SIZE) || start > end)
		panic("palloc_add_free: bad range [%llx, %llx)", start, end);
	/*
	 * Page 0 is never free, whoever adds it: palloc_populate leaves it out of usable
	 * memory, and a firmware map may also call it unaccepted (then it arrives here once
	 * accepted). Handed out, it would read as "no memory" (0) and map NULL.
	 */
	if (start < PAGE_SIZE) {
		start = PAGE_SIZE;
		if (start >= end)
			return;
	}
	for (u64 unit = ALIGN_DOWN(start, UNIT_SIZE); unit < end; unit += UNIT_SIZE) {
		u64 a = MAX(start, unit), b = MIN(end, unit + UNIT_SIZE);
		u16 *info = unit_info_init(unit), v;

		if (!info)
			panic("palloc_add_free: %llx is outside every zone", unit);
		v = info_get(info);
		if (a == unit && b == unit + UNIT_SIZE && UI_STATE(v) == U_OUTSIDE) {
			unit_free_push(unit, info);
		} else if (UI_STATE(v) == U_OUTSIDE) {
			/* A partial unit: its first free page holds the metadata. */
			u64 first = (a - unit) >> PAGE_SHIFT;
			struct unit_meta *m = make_split(unit, info, first);

			if (b - a > PAGE_SIZE)
				unreserve(unit, m, first + 1, (b - unit) >> PAGE_SHIFT);
		} else if (UI_STATE(v) == U_SPLIT) {
			struct unit_meta *m = meta_of(unit, v);
			u64 meta = v >> UI_META_SHIFT;

			/* The meta page is marked reserved too, but it is in use: not free to add. */
			if (meta >= (a - unit) >> PAGE_SHIFT && meta < (b - unit) >> PAGE_SHIFT)
				panic("palloc_add_free: page %llx is already managed (meta page)",
				      unit + (meta << PAGE_SHIFT));
			unreserve(unit, m, (a - unit) >> PAGE_SHIFT, (b - unit) >> PAGE_SHIFT);
			maybe_collapse(unit, info, m, true);
		} else {
			panic("palloc_add_free: unit %llx is already managed (state %u)", unit,
			      UI_STATE(v));
		}
		ps.stats.managed_bytes += b - a;
	}
}

void palloc_add_free(u64 start, u64 end)
{
	spin_lock(&palloc_lock);
	add_free_locked(start, end);
	spin_unlock(&palloc_lock);
}

/* [s, e) minus the sorted, disjoint reserved ranges, handed to palloc_add_free(). */
static void add_free_except(u64 s, u64 e, const struct palloc_reserved *res, unsigned nres)
{
	for (unsigned i = 0; i < nres && s < e; i++) {
		if (res[i].end <= s || res[i].start >= e)
			continue;
		if (res[i].start > s)
			add_free_locked(s, res[i].start);
		s = MAX(s, res[i].end);
	}
	if (s < e)
		add_free_locked(s, e);
}

/* The CPU index of an allocator without env.cpu_id: one CPU. */
static unsigned only_cpu(void)
{
	return 0;
}

void palloc_init(const struct memmap *m, struct unaccepted_bitmap *bm,
		 const struct palloc_env *e, u32 *lat_samples, u64 lat_cap)
{
	/* The CPUs an earlier palloc_init (host tests, the fuzzer) may have left caches for. */
	unsigned was = ps.env.ncpus;

	if (e->ncpus > MAX_CPUS)
		panic("palloc_init: %u CPUs, at most MAX_CPUS (%d)", e->ncpus, MAX_CPUS);
	/* Before any other CPU uses the allocator (palloc_poll waits for palloc_up): no lock. */
	__atomic_store_n(&palloc_up, false, __ATOMIC_RELAXED);
	memset(&ps, 0, sizeof(ps));
	drain_request = 0;
	palloc_lock = (struct spinlock)SPINLOCK_INIT;
	info_lock = (struct spinlock)SPINLOCK_INIT;
	if (e->cpu_cache_high > PALLOC_CPU_CACHE_MAX)
		panic("palloc_init: a per-CPU cache of %u blocks is above the maximum %d",
		      e->cpu_cache_high, PALLOC_CPU_CACHE_MAX);
	ps.env = *e;
	if (!ps.env.cpu_id) {
		ps.env.cpu_id = only_cpu;
		ps.env.ncpus = 1;
	} else if (!ps.env.ncpus) {
		ps.env.ncpus = MAX_CPUS;
	}
	/* Only the caches that can be in use, not MAX_CPUS of them (512 KiB). */
	memset(pcps, 0, MAX(was, ps.env.ncpus) * sizeof(pcps[0]));
	accept_init(bm, &ps.env, was, &ps.stats);
	ps.free_unit_hint = UINT64_MAX;
	ps.npending = 0;
	ps.refill_hook = NULL;
	ps.after_alloc_hook = NULL;
	latency_init(&ps.stats.accept_lat, lat_samples, lat_cap);
	series_init(&ps.stats.accepted_over_time);
	build_zones(m);
	ps.stats.unaccepted_bytes = bitmap_count(bm) * UNIT_SIZE;
	/* Everything above is visible to a CPU that sees the flag (palloc_poll's acquire). */
	__atomic_store_n(&palloc_up, true, __ATOMIC_RELEASE);
}

void palloc_populate(const struct memmap *m, const struct palloc_reserved *reserved,
		     unsigned nreserved)
{
	struct palloc_reserved res[PALLOC_MAX_RESERVED];
	unsigned nres = 0;

	/* Page 0 is never handed out: it is unmapped, so that NULL faults. */
	res[nres++] = (struct palloc_reserved){ 0, PAGE_SIZE };
	for (unsigned i = 0; i < nreserved; i++) {
		if (nres == ARRAY_SIZE(res))
			panic("palloc_populate: more than %zu reserved ranges", ARRAY_SIZE(res));
		res[nres++] = reserved[i];
	}
	/* Sort by start (a handful of entries). */
	for (unsigned i = 1; i < nres; i++)
		for (unsigned j = i; j > 0 && res[j].start < res[j - 1].start; j--) {
			struct palloc_reserved t = res[j];

			res[j] = res[j - 1];
			res[j - 1] = t;
		}

	spin_lock(&palloc_lock);
	for (unsigned i = 0; i < m->nranges; i++) {
		const struct mem_range *r = &m->ranges[i];

		if (r->kind == RANGE_USABLE || r->kind == RANGE_RECLAIMABLE)
			add_free_except(r->start, r->end, res, nres);
	}
	/* Every CPU's page-table reserve for its accepts, before anything else can take memory. */
	accept_reserve_fill_all_locked();
	ps.stats.initial_free_bytes = ps.buddy_free_bytes;
	spin_unlock(&palloc_lock);
}

/* ------------------------------------------------------------------ allocation */

/* Take a block of 2^order pages from split unit m, out of a free block of order k >= order. */
static u64 take_from_unit(struct unit_meta *m, unsigned k, unsigned order)
{
	u64 unit = ALIGN_DOWN(phys(m), UNIT_SIZE);
	u64 idx = block_free_take(m, k);

	/* Split down: hand back the upper halves. */
	while (k > order) {
		k--;
		u64 half = idx + (1ULL << k);

		pg_set(m, half, (u8)(PG_FREE | k));
		block_free_add(m, half, k);
	}
	pg_set(m, idx, (u8)(PG_USED | order));
	m->free_pages -= (u16)(1u << order);
	return unit + (idx << PAGE_SHIFT);
}

/* Take a free block of 2^order pages (page byte PG_USED). Under the lock; 0 when none is free. */
static u64 alloc_block_locked(unsigned order)
{
	for (;;) {
		unsigned k = order;

		while (k < PALLOC_MAX_ORDER && !ps.free_count[k])
			k++;
		if (k == PALLOC_MAX_ORDER && !ps.free_count[k]) {
			/* Only whole units serve from here: make one out of a freed split unit. */
			if (collapse_pending())
				continue;
			return 0;
		}

		if (k == PALLOC_MAX_ORDER) {
			u64 block = lowest_free_unit();
			u16 *info = unit_info(block);

			if (order == PALLOC_MAX_ORDER) {
				unit_free_remove(block);
				info_set(info, U_USED);
				return block;
			}
			/* Carve the unit up; the search finds a block of order <= 8 next time. */
			split_free_unit(block, info);
			continue;
		}

		return take_from_unit(ps.free_head[k], k, order);
	}
}

/*
 * Give back a block of 2^order pages at page idx of split unit `unit` (its page byte no
 * longer PG_USED or PG_CACHED). Under the lock.
 */
static void free_block_locked(u64 unit, u16 *info, struct unit_meta *m, u64 idx, unsigned order)
{
	pg_set(m, idx, 0);
#ifdef CONFIG_DEBUG_PALLOC
	/* Junk, so that a use after free reads garbage instead of stale data. */
	memset(virt(unit + (idx << PAGE_SHIFT)), 0x6b, PAGE_SIZE << order);
#endif
	free_in_unit(m, idx, order);
	maybe_collapse(unit, info, m, false);
}

/* ------------------------------------------------------------------ per-CPU caches */

/*
 * Each CPU keeps a few free blocks of orders 0..PALLOC_PCP_MAX_ORDER to itself, as
 * Linux's per-CPU page lists do (mm/page_alloc.c rmqueue_pcplist, free_unref_page): an
 * allocation of such an order on a CPU whose cache holds one, and a free while its cache
 * has room, touch only that CPU's cache and the block's page byte: no lock, no atomic
 * read-modify-write. The cache is refilled and drained under the lock, a quarter of
 * env.cpu_cache_high blocks at a time, and holds at most env.cpu_cache_high of each order.
 *
 * A cached block stays out of the buddy lists: its page byte says PG_CACHED, so a free
 * of it is refused as a double free, and its unit cannot collapse. It counts as free
 * memory in the statistics. The cache keeps each block's address and its page byte's
 * (inside the unit's meta page); a free finds the byte from the block's address without
 * the lock (zone_of is read-only, and a unit's info does not change while one of its
 * blocks is handed out).
 *
 * Memory in another CPU's cache is still free memory: a CPU that finds nothing else
 * raises every holder's `asked` and waits until each has drained (drain_all). A CPU
 * serves that at its next allocation or free, or in palloc_poll(), which the kernel's
 * waiting loops call.
 */

static __always_inline unsigned this_cpu(void)
{
	unsigned cpu = ps.env.cpu_id();

	if (unlikely(cpu >= ps.env.ncpus))
		panic("palloc: CPU index %u, but palloc_init was told of %u CPUs", cpu, ps.env.ncpus);
	return cpu;
}

/*
 * The cache of CPU cpu. The empty asm makes the pointer opaque to the compiler, which
 * would otherwise recompute pcps + cpu * sizeof(struct pcp) for every field the fast
 * paths touch (20 more instructions per allocation and free, by callgrind).
 */
static __always_inline struct pcp *pcp_of(unsigned cpu)
{
	struct pcp *p = &pcps[cpu];

	__asm__("" : "+r"(p));
	return p;
}

/* This CPU's cache. */
static __always_inline struct pcp *this_pcp(void)
{
	return pcp_of(this_cpu());
}

/*
 * The same for the two fast paths (palloc_alloc, palloc_free), bounded by the array
 * (a constant) instead of ps.env.ncpus (a load: 2 more instructions per pair). A CPU
 * beyond ncpus still meets this_cpu's check on its first allocation, as its cache starts
 * empty and sends it to the slow path, and on every free that does not fit its cache.
 */
static __always_inline struct pcp *this_pcp_fast(void)
{
	unsigned cpu = ps.env.cpu_id();

	if (unlikely(cpu >= MAX_CPUS))
		panic("palloc: CPU index %u is beyond MAX_CPUS (%d)", cpu, MAX_CPUS);
	return pcp_of(cpu);
}

static __always_inline u32 pcp_count(const struct pcp *p, unsigned order)
{
	return __atomic_load_n(&p->count[order], __ATOMIC_RELAXED);
}

static __always_inline void pcp_set_count(struct pcp *p, unsigned order, u32 n)
{
	__atomic_store_n(&p->count[order], n, __ATOMIC_RELAXED);
}

/* A counter only its CPU writes, read by whoever merges the statistics. */
static __always_inline void pcp_tally(u64 *c, u64 n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

static __always_inline bool drain_pending(const struct pcp *p)
{
	return __atomic_load_n(&p->asked, __ATOMIC_RELAXED) != p->served;
}

static bool pcp_holds(const struct pcp *p)
{
	for (unsigned order = 0; order < PCP_ORDERS; order++)
		if (pcp_count(p, order))
			return true;
	return false;
}

/* The page byte of the head of a block in a split unit; NULL for anything else. */
static __always_inline u8 *block_state(u64 addr)
{
	u64 unit = ALIGN_DOWN(addr, UNIT_SIZE);
	const struct zone *z = zone_of(unit);

	if (!z || !IS_ALIGNED(addr, PAGE_SIZE))
		return NULL;
	u16 info = info_get(&z->info[(addr - z->base) >> UNIT_SHIFT]);

	/* Garbage in an uninitialised info page may read as SPLIT: the magic check follows. */
	if (UI_STATE(info) != U_SPLIT)
		return NULL;
	struct unit_meta *m = meta_of(unit, info);

	if (m->magic != META_MAGIC)
		return NULL;
	return &m->page[(addr - unit) >> PAGE_SHIFT];
}

/* Return this CPU's cached blocks of `order` down to `keep`. Under the lock. */
static void pcp_drain_locked(struct pcp *p, unsigned order, u32 keep)
{
	for (u32 n = pcp_count(p, order); n > keep; n--) {
		u64 block = p->slot[n - 1][order].block, unit = ALIGN_DOWN(block, UNIT_SIZE);
		u16 *info = unit_info(unit);

		free_block_locked(unit, info, meta_of(unit, info_get(info)),
				  (block - unit) >> PAGE_SHIFT, order);
		pcp_set_count(p, order, n - 1);
	}
}

/* Everything this CPU holds goes back to the buddy lists; a drain request is served. */
static void pcp_serve(struct pcp *p)
{
	u64 asked = __atomic_load_n(&p->asked, __ATOMIC_ACQUIRE);

	spin_lock(&palloc_lock);
	for (unsigned order = 0; order < PCP_ORDERS; order++)
		pcp_drain_locked(p, order, 0);
	spin_unlock(&palloc_lock);
	__atomic_store_n(&p->served, asked, __ATOMIC_RELEASE);
}

void palloc_poll(void)
{
	/* Before palloc_init has finished, or on a CPU it was not told of: no cache to serve. */
	if (!__atomic_load_n(&palloc_up, __ATOMIC_ACQUIRE))
		return;
	unsigned cpu = ps.env.cpu_id();

	if (cpu >= ps.env.ncpus)
		return;
	struct pcp *p = pcp_of(cpu);

	if (drain_pending(p))
		pcp_serve(p);
}

void palloc_drain_this_cpu(void)
{
	pcp_serve(this_pcp());
}

/* How long a CPU that found no memory waits for the others to drain their caches. */
#define DRAIN_TIMEOUT_NS (1000 * 1000 * 1000ULL)

/*
 * Ask every CPU that holds blocks to drain its cache, drain this one's, and wait until
 * each has done so (or a second went by: a CPU that never allocates, frees or polls
 * again keeps its few blocks). true if another CPU gave blocks back: worth a new look.
 */
static bool drain_all(void)
{
	u64 request = atomic_add64(&drain_request, 1), t0 = ps.env.now_ns();
	unsigned me = this_cpu();
	bool gave = false;

	pcp_serve(&pcps[me]);
	for (unsigned cpu = 0; cpu < ps.env.ncpus; cpu++) {
		struct pcp *p = &pcps[cpu];
		u64 asked = __atomic_load_n(&p->asked, __ATOMIC_RELAXED);

		if (cpu == me || !pcp_holds(p))
			continue;
		/* Raise, never lower: a later request may have been posted meanwhile. */
		while (asked < request &&
		       !__atomic_compare_exchange_n(&p->asked, &asked, request, false,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
		PALLOC_TEST_POINT(PALLOC_POINT_DRAIN_ASKED);
		/*
		 * Meanwhile answer requests to this CPU: one that asked before this CPU's own
		 * drain above would otherwise wait for it in turn, up to the timeout.
		 */
		while (__atomic_load_n(&p->served, __ATOMIC_ACQUIRE) < request &&
		       ps.env.now_ns() - t0 < DRAIN_TIMEOUT_NS) {
			if (drain_pending(&pcps[me]))
				pcp_serve(&pcps[me]);
			spin_relax();
		}
		gave |= __atomic_load_n(&p->served, __ATOMIC_ACQUIRE) >= request;
	}
	return gave;
}

void palloc_drain_all(void)
{
	drain_all();
}

/*
 * Home units. The page bytes of a unit's pages sit side by side in its meta page, 64 to a
 * cache line, and the fast paths write the byte of every block they hand out or take
 * back. Two CPUs whose caches held blocks of one unit would write the same cache lines
 * over and over (measured on the host: two threads doing order-0 pairs at 0.6 times the
 * pairs per second of one). So each CPU refills from a split unit of its own, its home,
 * as long as it has a block that fits, and looks for another one that no other CPU calls
 * home (or splits a whole free unit) when it has not. Only when there is none does it
 * take from a unit another CPU uses. A home is only a preference: it changes where
 * blocks come from, never whether an allocation succeeds or acceptance starts.
 */
static void unit_unhome(struct unit_meta *m)
{
	if (m->home) {
		pcps[m->home - 1].home = NULL;
		m->home = 0;
	}
}

/* The smallest order from `order` up that split unit m has a free block of; PALLOC_MAX_ORDER if none. */
static unsigned unit_fit(const struct unit_meta *m, unsigned order)
{
	while (order < PALLOC_MAX_ORDER && !m->nfree[order])
		order++;
	return order;
}

/* A split unit nobody calls home with a block that fits, or a whole free unit split for it. */
static struct unit_meta *find_home(unsigned order)
{
	for (unsigned k = order; k < PALLOC_MAX_ORDER; k++)
		for (struct unit_meta *m = ps.free_head[k]; m; m = m->next[k])
			if (!m->home)
				return m;
	if (!ps.free_count[PALLOC_MAX_ORDER])
		return NULL;
	u64 unit = lowest_free_unit();
	u16 *info = unit_info(unit);

	split_free_unit(unit, info);
	return meta_of(unit, info_get(info));
}

/* alloc_block_locked for a refill: from this CPU's home unit while it has a block that fits. */
static u64 alloc_block_home_locked(struct pcp *p, unsigned order)
{
	struct unit_meta *m = p->home;
	unsigned k = m ? unit_fit(m, order) : PALLOC_MAX_ORDER;

	if (k == PALLOC_MAX_ORDER && (m = find_home(order)) != NULL) {
		if (p->home)
			p->home->home = 0;
		m->home = (u16)(p - pcps + 1);
		p->home = m;
		k = unit_fit(m, order);
	}
	if (k == PALLOC_MAX_ORDER)
		return alloc_block_locked(order);
	return take_from_unit(m, k, order);
}

/* Refill this CPU's cache of `order` under the lock: a batch of blocks, fewer if that is all. */
static bool pcp_refill(struct pcp *p, unsigned order)
{
	u32 batch = MAX(ps.env.cpu_cache_high / 4, 1u), n = 0;
	struct pcp_slot got[PALLOC_CPU_CACHE_MAX];

	spin_lock(&palloc_lock);
	while (n < batch) {
		u64 block = alloc_block_home_locked(p, order);

		if (!block)
			break;
		got[n].block = block;
		got[n].state = block_state(block);
		__atomic_store_n(got[n++].state, (u8)(PG_CACHED | order), __ATOMIC_RELAXED);
	}
	/* Lowest first out: pushed in reverse, the first allocation takes the lowest block. */
	for (u32 i = 0; i < n; i++)
		p->slot[pcp_count(p, order) + i][order] = got[n - 1 - i];
	/*
	 * Published before the lock is released: a CPU that takes the lock next and finds
	 * the lists empty must see these blocks in this cache, or its drain_all would pass
	 * this CPU by and it would be refused while they sit here.
	 */
	pcp_set_count(p, order, pcp_count(p, order) + n);
	spin_unlock(&palloc_lock);
	PALLOC_TEST_POINT(PALLOC_POINT_REFILLED);
	return n != 0;
}

/* Take a block from this CPU's cache: 0 when it holds none of `order`. */
static inline u64 pcp_take(struct pcp *p, unsigned order)
{
	u32 n = pcp_count(p, order);

	if (!n)
		return 0;
	const struct pcp_slot *slot = &p->slot[n - 1][order];

	pcp_set_count(p, order, n - 1);
	__atomic_store_n(slot->state, (u8)(PG_USED | order), __ATOMIC_RELAXED);
	pcp_tally(&p->allocs, 1);
	return slot->block;
}

/* A block into this CPU's cache, which has room; its page byte already says PG_CACHED. */
static __always_inline void pcp_put(struct pcp *p, unsigned order, u32 n, u8 *state, u64 block)
{
	p->slot[n][order] = (struct pcp_slot){ state, block };
	pcp_set_count(p, order, n + 1);
	pcp_tally(&p->frees, 1);
}

/* One attempt without acceptance: this CPU's cache first (refilled if empty), else the lists. */
static u64 alloc_once(unsigned order)
{
	struct pcp *p = this_pcp();
	u64 block;

	if (drain_pending(p))
		pcp_serve(p);
	if (order <= PALLOC_PCP_MAX_ORDER && ps.env.cpu_cache_high) {
		if ((block = pcp_take(p, order)) || (pcp_refill(p, order) && (block = pcp_take(p, order))))
			return block;
		return 0;
	}
	spin_lock(&palloc_lock);
	block = alloc_block_locked(order);
	if (block)
		pcp_tally(&p->allocs, 1);
	spin_unlock(&palloc_lock);
	return block;
}

u64 palloc_alloc_accepted(unsigned order)
{
	if (order > PALLOC_MAX_ORDER)
		panic("palloc_alloc: order %u is above the maximum %d", order, PALLOC_MAX_ORDER);
	return alloc_once(order);
}

/* Everything but a hit in this CPU's cache: refill, accept, wait, drain the others. */
static __noinline u64 alloc_slow(unsigned order)
{
	if (order > PALLOC_MAX_ORDER)
		panic("palloc_alloc: order %u is above the maximum %d", order, PALLOC_MAX_ORDER);
	/*
	 * An accept that needs memory takes it without acceptance (palloc_alloc_accepted,
	 * palloc_pt_page): acceptance from inside an accept would claim and map more memory
	 * while this CPU's own claim is half done, and recurse without bound.
	 */
	if (accept_this_cpu_accepting())
		panic("palloc_alloc: called from inside an accept on CPU %u (order %u); an accept "
		      "path must use palloc_alloc_accepted or palloc_pt_page", this_cpu(), order);
	for (;;) {
		u64 block = alloc_once(order);

		if (block) {
			if (ps.after_alloc_hook)
				ps.after_alloc_hook();
			return block;
		}
		/*
		 * Nothing fits in this CPU's cache or the lists. A larger block in this CPU's
		 * cache may: give them back first, so that acceptance starts only when nothing
		 * this CPU can reach fits (other CPUs' caches are asked below, if ever).
		 */
		if (pcp_holds(this_pcp())) {
			palloc_drain_this_cpu();
			continue;
		}
		/* Nothing free: the policy may accept more. */
		if (ps.refill_hook && ps.refill_hook(order))
			continue;
		/*
		 * Nothing left to claim. Asked now, not before the refill: another CPU may have
		 * claimed the last unit while this one looked, and its memory is still to come.
		 */
		u64 generation;

		if (accept_in_flight(&generation)) {
			accept_wait(generation);
			continue;
		}
		/* Memory other CPUs hold in their caches is free memory too. */
		if (drain_all())
			continue;
		/* A last look: the drains (or a free meanwhile) may have left something. */
		if ((block = alloc_once(order)))
			return block;
		spin_lock(&palloc_lock);
		ps.stats.alloc_failures++;
		spin_unlock(&palloc_lock);
		return 0;
	}
}

u64 palloc_alloc(unsigned order)
{
	/* The fast path: a hit in this CPU's cache, nothing shared written. */
	if (likely(order <= PALLOC_PCP_MAX_ORDER)) {
		struct pcp *p = this_pcp_fast();
		u32 n = pcp_count(p, order);

		if (likely(n && !drain_pending(p))) {
			const struct pcp_slot *slot = &p->slot[n - 1][order];

			pcp_set_count(p, order, n - 1);
			__atomic_store_n(slot->state, (u8)(PG_USED | order), __ATOMIC_RELAXED);
			pcp_tally(&p->allocs, 1);
			return slot->block;
		}
	}
	return alloc_slow(order);
}

static int block_order_locked(u64 addr)
{
	u64 unit = ALIGN_DOWN(addr, UNIT_SIZE);
	int state = unit_state_peek(unit);

	/* Any address may be asked about: only a used or split unit's info is read. */
	if ((state != U_USED && state != U_SPLIT) || !IS_ALIGNED(addr, PAGE_SIZE))
		return -1;
	if (state == U_USED)
		return addr == unit ? PALLOC_MAX_ORDER : -1;
	u8 st = pg_get(meta_of(unit, info_get(unit_info(unit))), (addr - unit) >> PAGE_SHIFT);

	return st & PG_USED ? (int)(st & PG_ORDER_MASK) : -1;
}

int palloc_block_order(u64 addr)
{
	spin_lock(&palloc_lock);
	int order = block_order_locked(addr);

	spin_unlock(&palloc_lock);
	return order;
}

/*
 * Is page idx inside a free block? Only to name a refused free: a block freed twice may
 * have merged with its lower buddy since, so its page is no longer a head. Heads are
 * marked and inner pages are 0, so the first mark at or below idx starts its block.
 */
static bool in_free_block(const struct unit_meta *m, u64 idx)
{
	for (u64 i = idx + 1; i-- > 0;) {
		u8 st = pg_get(m, i);

		if (st)
			return (st & PG_FREE) && idx - i < (1ULL << (st & PG_ORDER_MASK));
	}
	return false;
}

/* A refused free of a unit that is not split; its info page may never have been initialised. */
static __noreturn void free_refused(u64 addr, const struct zone *z, u64 i)
{
	int state = info_ready(z, i) ? (int)UI_STATE(info_get(&z->info[i])) : U_OUTSIDE;

	panic("palloc_free: %llx is not allocated (unit state %d%s)", addr, state,
	      state == U_FREE ? ", a free unit: double free" : "");
}

static void free_locked(u64 addr)
{
	u64 unit = ALIGN_DOWN(addr, UNIT_SIZE);
	const struct zone *z = zone_of(unit);

	if (!z || !IS_ALIGNED(addr, PAGE_SIZE))
		panic("palloc_free: %llx was never allocated (outside every zone or unaligned)", addr);
	u64 i = (unit - z->base) >> UNIT_SHIFT;
	u16 *info = &z->info[i], v = info_get(info);

	/*
	 * A block handed out is in an initialised info page: no check on this path. Only a
	 * foreign free can read an uninitialised page's garbage as SPLIT; meta_of keeps the
	 * page it reads inside that unit, which nobody has used: unaccepted, so unmapped in
	 * the kernel (the read faults and is reported), or not RAM the allocator manages,
	 * whose page fails the magic check below.
	 */
	if (UI_STATE(v) != U_SPLIT) {
		/* Garbage in a page nobody initialised must never pass for a unit handed out. */
		if (UI_STATE(v) != U_USED || addr != unit || !info_ready(z, i))
			free_refused(addr, z, i);
		unit_free_push(unit, info);
		return;
	}

	struct unit_meta *m = meta_of(unit, v);
	u64 idx = (addr - unit) >> PAGE_SHIFT;
	u8 st = pg_get(m, idx);

	if (m->magic != META_MAGIC)
		panic("palloc_free: metadata of unit %llx is corrupt (magic %#x)", unit, m->magic);
	/*
	 * Taken from PG_USED in one atomic step: another CPU's fast path may be freeing the
	 * same block into its cache right now (a double free on two CPUs at once), and only
	 * one of the two may win.
	 */
	if (!(st & PG_USED) || !__atomic_compare_exchange_n(&m->page[idx], &st, 0, false,
							      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		panic("palloc_free: %llx is not the start of an allocated block (%s)", addr,
		      st & PG_CACHED ? "double free: the block is in a CPU's cache"
		      : in_free_block(m, idx) ? "double free" : "inside a block or never allocated");
	free_block_locked(unit, info, m, idx, st & PG_ORDER_MASK);
}

/* Everything but a free into this CPU's cache with room: under the lock. */
static __noinline void free_slow(u64 addr, u8 *state)
{
	struct pcp *p = this_pcp();
	u32 high = ps.env.cpu_cache_high;

	if (drain_pending(p))
		pcp_serve(p);
	spin_lock(&palloc_lock);
	/* A small block freed while this CPU's cache of its order is full: a batch goes too. */
	u8 st = state ? __atomic_load_n(state, __ATOMIC_RELAXED) : 0;
	unsigned order = st & PG_ORDER_MASK;

	free_locked(addr);
	pcp_tally(&p->frees, 1);
	if ((st & PG_USED) && high && order <= PALLOC_PCP_MAX_ORDER && pcp_count(p, order) >= high)
		pcp_drain_locked(p, order, high - MAX(high / 4, 1u));
	spin_unlock(&palloc_lock);
}

void palloc_free(u64 addr)
{
	/* The fast path: a small block goes to this CPU's cache while it has room. */
	struct pcp *p = this_pcp_fast();
	u8 *state = block_state(addr);

	if (likely(state && !drain_pending(p))) {
		u8 st = __atomic_load_n(state, __ATOMIC_RELAXED);

		PALLOC_TEST_POINT(PALLOC_POINT_FREE_CHECKED);

		/* Handed out (no other flag) and of a cached order: one test. */
		_Static_assert(PALLOC_PCP_MAX_ORDER == 3, "the masks below mean orders 0..3");
		if (likely((st & ~3u) == PG_USED)) {
			unsigned order = st & 3u;
			u32 n = pcp_count(p, order);

			/*
			 * One atomic step from handed out to cached: of two CPUs freeing the block
			 * at once, one wins and the other finds PG_CACHED on the slow path, which
			 * panics (a check, then a store, would let both cache it).
			 */
			if (likely(n < ps.env.cpu_cache_high) &&
			    likely(__atomic_compare_exchange_n(state, &st, (u8)(PG_CACHED | order), false,
							       __ATOMIC_RELAXED, __ATOMIC_RELAXED))) {
				pcp_put(p, order, n, state, addr);
				return;
			}
		}
	}
	free_slow(addr, state);
}

/* ------------------------------------------------------------------ for acceptance (accept.c) */

void palloc_set_hooks(bool (*refill)(unsigned order), void (*after_alloc)(void))
{
	ps.refill_hook = refill;
	ps.after_alloc_hook = after_alloc;
}

int palloc_unit_state(u64 unit)
{
	return unit_state_peek(unit);
}

/*
 * Claiming is acceptance's (under its own lock): an unaccepted unit, OUTSIDE for the
 * allocator, which no allocator path writes, becomes ACCEPTING.
 */
void palloc_units_claim(u64 start, u64 end)
{
	for (u64 u = start; u < end; u += UNIT_SIZE) {
		u16 *info = unit_info_init(u);

		if (!info)
			panic("palloc: unaccepted unit %llx is outside every zone", u);
		if (UI_STATE(info_get(info)) != U_OUTSIDE)
			panic("palloc: unaccepted unit %llx has state %u", u, UI_STATE(info_get(info)));
		info_set(info, U_ACCEPTING);
	}
}

void palloc_units_done_locked(u64 start, u64 end, bool accepted)
{
	for (u64 u = start; u < end; u += UNIT_SIZE) {
		u16 *info = unit_info(u);

		if (UI_STATE(info_get(info)) != U_ACCEPTING)
			panic("palloc: unit %llx changed state to %u while being accepted", u,
			      UI_STATE(info_get(info)));
		if (!accepted) {
			info_set(info, U_LOST);
			continue;
		}
		if (u == 0) {
			/* Without page 0 (add_free_locked): a partial unit, its meta page at page 1. */
			info_set(info, U_OUTSIDE);
			add_free_locked(0, UNIT_SIZE);
			continue;
		}
		unit_free_push(u, info);
		ps.stats.managed_bytes += UNIT_SIZE;
	}
}

bool palloc_units_claimed(u64 start, u64 end)
{
	for (u64 u = start; u < end; u += UNIT_SIZE)
		if (unit_state_peek(u) == U_ACCEPTING)
			return true;
	return false;
}

void palloc_add_free_locked(u64 start, u64 end)
{
	add_free_locked(start, end);
}

u64 palloc_alloc_locked(unsigned order)
{
	u64 block = alloc_block_locked(order);

	if (block)
		pcp_tally(&this_pcp()->allocs, 1);
	return block;
}

/* ------------------------------------------------------------------ reports */

/* Bytes in the CPUs' caches now (each count read once: exact only while they are quiet). */
static u64 cached_bytes(u64 *blocks_of_order)
{
	u64 bytes = 0;

	for (unsigned cpu = 0; cpu < ps.env.ncpus; cpu++)
		for (unsigned order = 0; order < PCP_ORDERS; order++) {
			u32 n = pcp_count(&pcps[cpu], order);

			bytes += (u64)n * (PAGE_SIZE << order);
			if (blocks_of_order)
				blocks_of_order[order] += n;
		}
	return bytes;
}

/*
 * The statistics, with the per-CPU parts merged in: free memory in the caches and the
 * fast paths' allocation and free counts. Read them while the other CPUs are quiet (the
 * report at the end); palloc_drain_all() first gives the buddy lists everything back.
 */
const struct palloc_stats *palloc_stats(void)
{
	u64 allocs = 0, frees = 0;

	/* Each counter only grows: the sums never go backwards from one call to the next. */
	for (unsigned cpu = 0; cpu < ps.env.ncpus; cpu++) {
		allocs += __atomic_load_n(&pcps[cpu].allocs, __ATOMIC_RELAXED);
		frees += __atomic_load_n(&pcps[cpu].frees, __ATOMIC_RELAXED);
	}
	ps.stats.allocs = allocs;
	ps.stats.frees = frees;
	ps.stats.free_bytes = palloc_free_bytes();
	return &ps.stats;
}

struct palloc_stats *palloc_stats_mut(void)
{
	return &ps.stats;
}

u64 palloc_cpu_allocs(unsigned cpu)
{
	return cpu < MAX_CPUS ? __atomic_load_n(&pcps[cpu].allocs, __ATOMIC_RELAXED) : 0;
}

u64 palloc_free_bytes(void)
{
	spin_lock(&palloc_lock);
	u64 bytes = ps.buddy_free_bytes;

	spin_unlock(&palloc_lock);
	return bytes + cached_bytes(NULL);
}

u64 palloc_lock_acquisitions(void)
{
	return spin_acquired(&palloc_lock) + spin_acquired(&info_lock) + accept_lock_acquisitions();
}

u64 palloc_unaccepted_bytes(void)
{
	return __atomic_load_n(&ps.stats.unaccepted_bytes, __ATOMIC_RELAXED);
}

u64 palloc_count_free(void)
{
	u64 bytes = cached_bytes(NULL);

	/* Under the lock: the lists and the free-unit maps change under it. */
	spin_lock(&palloc_lock);
	/* The bits themselves, not the nfree counts: this is the check of both. */
	for (unsigned order = 0; order < PALLOC_MAX_ORDER; order++)
		for (const struct unit_meta *m = ps.free_head[order]; m; m = m->next[order]) {
			for (u64 idx = 0; idx < PAGES_PER_UNIT; idx += 1ULL << order) {
				if (bits_test(m->freemap, freemap_bit(idx, order)))
					bytes += PAGE_SIZE << order;
			}
		}
	for (unsigned i = 0; i < ps.nzones; i++)
		for (u64 u = 0; (u = zone_next_free_unit(&ps.zones[i], u)) < ps.zones[i].units; u++)
			bytes += UNIT_SIZE;
	spin_unlock(&palloc_lock);
	return bytes;
}

u64 palloc_free_blocks(unsigned order)
{
	u64 cached[PCP_ORDERS] = { 0 };

	if (order >= ORDERS)
		return 0;
	cached_bytes(cached);
	spin_lock(&palloc_lock);
	u64 n = ps.free_count[order];

	spin_unlock(&palloc_lock);
	return n + (order < PCP_ORDERS ? cached[order] : 0);
}
