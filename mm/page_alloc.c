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
	/* This unit's neighbours on each order's list (their meta pages). */
	struct unit_meta *next[PALLOC_MAX_ORDER], *prev[PALLOC_MAX_ORDER];
	u64 freemap[FREEMAP_BITS / 64];
	u8 page[PAGES_PER_UNIT];
};
_Static_assert(sizeof(struct unit_meta) <= PAGE_SIZE, "the meta page holds struct unit_meta");

struct zone {
	u64 base;		/* 2 MiB aligned */
	u64 units;
	u16 *info;		/* not zeroed at init: page p is valid once bit p of info_ready is set */
	u64 *free_units;	/* bit set: the unit is U_FREE */
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
	const struct zone *last_zone;
	struct unit_meta *free_head[PALLOC_MAX_ORDER];	/* first unit on each order's list */
	u64 free_count[ORDERS];		/* free blocks per order */
	struct palloc_env env;
	struct palloc_stats stats;
	bool (*refill_hook)(unsigned order);
	void (*after_alloc_hook)(void);
	u64 free_unit_hint;	/* no free whole unit lies below this address */
	u64 pending[PENDING_MAX];
	unsigned npending;
};

static struct palloc_state ps;
struct spinlock palloc_lock;

static inline void *virt(u64 pa)
{
	return (void *)(uintptr_t)(pa + ps.env.phys_offset);
}

static inline u64 phys(const void *p)
{
	return (u64)(uintptr_t)p - ps.env.phys_offset;
}

static const struct zone *zone_of(u64 addr)
{
	if (ps.last_zone && addr - ps.last_zone->base < ps.last_zone->units * UNIT_SIZE)
		return ps.last_zone;
	for (unsigned i = 0; i < ps.nzones; i++) {
		if (addr - ps.zones[i].base < ps.zones[i].units * UNIT_SIZE) {
			ps.last_zone = &ps.zones[i];
			return ps.last_zone;
		}
	}
	return NULL;
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

	memset(&z->info[first], 0, MIN(INFO_PER_PAGE, z->units - first) * sizeof(u16));
	__atomic_fetch_or(&z->info_ready[page / 64], 1ULL << (page % 64), __ATOMIC_RELEASE);
}

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

	if (!info_ready(z, i))
		info_page_init(z, i);
	return &z->info[i];
}

/* A unit's state without writing anything: OUTSIDE while its info page is not initialised. */
static int unit_state_peek(u64 unit)
{
	const struct zone *z = zone_of(unit);

	if (!z)
		return -1;
	u64 i = (unit - z->base) >> UNIT_SHIFT;

	return info_ready(z, i) ? (int)UI_STATE(z->info[i]) : U_OUTSIDE;
}

static struct unit_meta *meta_of(u64 unit, u16 info)
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
	ps.stats.free_bytes += PAGE_SIZE << order;
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
	ps.stats.free_bytes -= PAGE_SIZE << order;
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

	*info = U_FREE;
	bits_set(z->free_units, bit);
	ps.free_count[PALLOC_MAX_ORDER]++;
	ps.stats.free_bytes += UNIT_SIZE;
	if (unit < ps.free_unit_hint)
		ps.free_unit_hint = unit;
}

static void unit_free_remove(u64 unit)
{
	const struct zone *z = zone_of(unit);
	u64 bit = (unit - z->base) >> UNIT_SHIFT;

	bits_clear(z->free_units, bit);
	ps.free_count[PALLOC_MAX_ORDER]--;
	ps.stats.free_bytes -= UNIT_SIZE;
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
		u64 found = bits_find_next(z->free_units, z->units, bit);

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

		if (m->page[buddy] != (PG_FREE | order))
			break;
		block_free_remove(m, buddy, order);
		m->page[buddy] = 0;
		idx &= ~(1ULL << order);
		order++;
	}
	m->page[idx] = (u8)(PG_FREE | order);
	block_free_add(m, idx, order);
}

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

		if (m->page[idx] != (PG_FREE | order))
			panic("collapse: unit %llx page %llu is %#x, expected a free order-%u block",
			      unit, idx, m->page[idx], order);
		block_free_remove(m, idx, order);
	}
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
	if (!collapsible(*info, m) || (*info & UI_PENDING))
		return;
	if (now || ps.npending == PENDING_MAX) {
		collapse(unit, info, m);
		return;
	}
	ps.pending[ps.npending++] = unit;
	*info |= UI_PENDING;
}

/* Collapse one pending unit that is still fully free; false when none is left. */
static bool collapse_pending(void)
{
	while (ps.npending) {
		u64 unit = ps.pending[--ps.npending];
		u16 *info = unit_info(unit);

		*info &= (u16)~UI_PENDING;
		if (UI_STATE(*info) != U_SPLIT)
			continue;
		struct unit_meta *m = meta_of(unit, *info);

		if (collapsible(*info, m)) {
			collapse(unit, info, m);
			return true;
		}
	}
	return false;
}

void palloc_trim(void)
{
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
	*info = (u16)(U_SPLIT | (meta_idx << UI_META_SHIFT));
	ps.stats.meta_bytes += PAGE_SIZE;
	return m;
}

/* Make pages [a, b) of a split unit free (they were reserved). */
static void unreserve(u64 unit, struct unit_meta *m, u64 a, u64 b)
{
	for (u64 i = a; i < b; i++) {
		if (m->page[i] != PG_RESERVED)
			panic("palloc_add_free: page %llx is already managed", unit + (i << PAGE_SHIFT));
		m->page[i] = 0;
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
			u64 words = (z->units + 63) / 64;
			u64 pages = (z->units + INFO_PER_PAGE - 1) / INFO_PER_PAGE;

			/* Not zeroed: info_page_init writes each page before anything reads it. */
			z->info = (ps.env.meta_alloc_uninit ? ps.env.meta_alloc_uninit
							    : ps.env.meta_alloc)(z->units * sizeof(u16));
			/* Zeroed, in one piece: the free-unit bits, then the info pages' ready bits. */
			z->free_units = ps.env.meta_alloc((words + (pages + 63) / 64) * 8);
			z->info_ready = z->free_units + words;
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
	for (u64 unit = ALIGN_DOWN(start, UNIT_SIZE); unit < end; unit += UNIT_SIZE) {
		u64 a = MAX(start, unit), b = MIN(end, unit + UNIT_SIZE);
		u16 *info = unit_info_init(unit);

		if (!info)
			panic("palloc_add_free: %llx is outside every zone", unit);
		if (a == unit && b == unit + UNIT_SIZE && UI_STATE(*info) == U_OUTSIDE) {
			unit_free_push(unit, info);
		} else if (UI_STATE(*info) == U_OUTSIDE) {
			/* A partial unit: its first free page holds the metadata. */
			u64 first = (a - unit) >> PAGE_SHIFT;
			struct unit_meta *m = make_split(unit, info, first);

			if (b - a > PAGE_SIZE)
				unreserve(unit, m, first + 1, (b - unit) >> PAGE_SHIFT);
		} else if (UI_STATE(*info) == U_SPLIT) {
			struct unit_meta *m = meta_of(unit, *info);
			u64 meta = *info >> UI_META_SHIFT;

			/* The meta page is marked reserved too, but it is in use: not free to add. */
			if (meta >= (a - unit) >> PAGE_SHIFT && meta < (b - unit) >> PAGE_SHIFT)
				panic("palloc_add_free: page %llx is already managed (meta page)",
				      unit + (meta << PAGE_SHIFT));
			unreserve(unit, m, (a - unit) >> PAGE_SHIFT, (b - unit) >> PAGE_SHIFT);
			maybe_collapse(unit, info, m, true);
		} else {
			panic("palloc_add_free: unit %llx is already managed (state %u)", unit,
			      UI_STATE(*info));
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

void palloc_init(const struct memmap *m, struct unaccepted_bitmap *bm,
		 const struct palloc_env *e, u32 *lat_samples, u64 lat_cap)
{
	/* Before any other CPU uses the allocator: no lock needed, and none taken. */
	memset(&ps, 0, sizeof(ps));
	palloc_lock = (struct spinlock)SPINLOCK_INIT;
	ps.env = *e;
	accept_init(bm, e, &ps.stats);
	ps.last_zone = NULL;
	ps.free_unit_hint = UINT64_MAX;
	ps.npending = 0;
	ps.refill_hook = NULL;
	ps.after_alloc_hook = NULL;
	latency_init(&ps.stats.accept_lat, lat_samples, lat_cap);
	series_init(&ps.stats.accepted_over_time);
	build_zones(m);
	ps.stats.unaccepted_bytes = bitmap_count(bm) * UNIT_SIZE;
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
	ps.stats.initial_free_bytes = ps.stats.free_bytes;
	spin_unlock(&palloc_lock);
}

/* ------------------------------------------------------------------ allocation */

static u64 alloc_locked(unsigned order)
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
				*info = U_USED;
				ps.stats.allocs++;
				return block;
			}
			/* Carve the unit up; the search finds a block of order <= 8 next time. */
			split_free_unit(block, info);
			continue;
		}

		struct unit_meta *m = ps.free_head[k];
		u64 unit = ALIGN_DOWN(phys(m), UNIT_SIZE);
		u64 idx = block_free_take(m, k);
		u64 block = unit + (idx << PAGE_SHIFT);

		/* Split down: hand back the upper halves. */
		while (k > order) {
			k--;
			u64 half = idx + (1ULL << k);

			m->page[half] = (u8)(PG_FREE | k);
			block_free_add(m, half, k);
		}
		m->page[idx] = (u8)(PG_USED | order);
		m->free_pages -= (u16)(1u << order);
		ps.stats.allocs++;
		return block;
	}
}

u64 palloc_alloc_accepted(unsigned order)
{
	u64 block;

	if (order > PALLOC_MAX_ORDER)
		panic("palloc_alloc: order %u is above the maximum %d", order, PALLOC_MAX_ORDER);
	spin_lock(&palloc_lock);
	block = alloc_locked(order);
	spin_unlock(&palloc_lock);
	return block;
}

u64 palloc_alloc(unsigned order)
{
	if (order > PALLOC_MAX_ORDER)
		panic("palloc_alloc: order %u is above the maximum %d", order, PALLOC_MAX_ORDER);
	for (;;) {
		spin_lock(&palloc_lock);
		u64 block = alloc_locked(order);

		if (block) {
			spin_unlock(&palloc_lock);
			if (ps.after_alloc_hook)
				ps.after_alloc_hook();
			return block;
		}
		/* Only on a miss: whether other CPUs' accepts are still to come. */
		u64 generation;
		bool in_flight = accept_in_flight_locked(&generation);

		spin_unlock(&palloc_lock);
		if (ps.refill_hook && ps.refill_hook(order))
			continue;
		/* Nothing left to claim, but other CPUs are still accepting: their units come. */
		if (in_flight) {
			accept_wait(generation);
			continue;
		}
		spin_lock(&palloc_lock);
		ps.stats.alloc_failures++;
		spin_unlock(&palloc_lock);
		return 0;
	}
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
	u8 st = meta_of(unit, *unit_info(unit))->page[(addr - unit) >> PAGE_SHIFT];

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
	for (u64 i = idx + 1; i-- > 0;)
		if (m->page[i])
			return (m->page[i] & PG_FREE) && idx - i < (1ULL << (m->page[i] & PG_ORDER_MASK));
	return false;
}

/* A refused free of a unit that is not split; its info page may never have been initialised. */
static __noreturn void free_refused(u64 addr, const struct zone *z, u64 i)
{
	int state = info_ready(z, i) ? (int)UI_STATE(z->info[i]) : U_OUTSIDE;

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
	u16 *info = &z->info[i];

	ps.stats.frees++;
	/*
	 * A block handed out is in an initialised info page: no check on this path. Only a
	 * foreign free can read an uninitialised page's garbage as SPLIT; meta_of keeps the
	 * page it reads inside that unit, which nobody has used: unaccepted, so unmapped in
	 * the kernel (the read faults and is reported), or not RAM the allocator manages,
	 * whose page fails the magic check below.
	 */
	if (UI_STATE(*info) != U_SPLIT) {
		/* Garbage in a page nobody initialised must never pass for a unit handed out. */
		if (UI_STATE(*info) != U_USED || addr != unit || !info_ready(z, i))
			free_refused(addr, z, i);
		unit_free_push(unit, info);
		return;
	}

	struct unit_meta *m = meta_of(unit, *info);
	u64 idx = (addr - unit) >> PAGE_SHIFT;
	u8 st = m->page[idx];

	if (m->magic != META_MAGIC)
		panic("palloc_free: metadata of unit %llx is corrupt (magic %#x)", unit, m->magic);
	if (!(st & PG_USED))
		panic("palloc_free: %llx is not the start of an allocated block (%s)", addr,
		      in_free_block(m, idx) ? "double free" : "inside a block or never allocated");
	unsigned order = st & PG_ORDER_MASK;

	m->page[idx] = 0;
#ifdef CONFIG_DEBUG_PALLOC
	/* Junk, so that a use after free reads garbage instead of stale data. */
	memset(virt(addr), 0x6b, PAGE_SIZE << order);
#endif
	free_in_unit(m, idx, order);
	maybe_collapse(unit, info, m, false);
}

void palloc_free(u64 addr)
{
	spin_lock(&palloc_lock);
	free_locked(addr);
	spin_unlock(&palloc_lock);
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

void palloc_units_claim_locked(u64 start, u64 end)
{
	for (u64 u = start; u < end; u += UNIT_SIZE) {
		u16 *info = unit_info_init(u);

		if (!info)
			panic("palloc: unaccepted unit %llx is outside every zone", u);
		if (UI_STATE(*info) != U_OUTSIDE)
			panic("palloc: unaccepted unit %llx has state %u", u, UI_STATE(*info));
		*info = U_ACCEPTING;
	}
}

void palloc_units_done_locked(u64 start, u64 end, bool accepted)
{
	for (u64 u = start; u < end; u += UNIT_SIZE) {
		u16 *info = unit_info(u);

		if (UI_STATE(*info) != U_ACCEPTING)
			panic("palloc: unit %llx changed state to %u while being accepted", u,
			      UI_STATE(*info));
		if (!accepted) {
			*info = U_LOST;
			ps.stats.accept_failures++;
			continue;
		}
		unit_free_push(u, info);
		ps.stats.managed_bytes += UNIT_SIZE;
	}
}

bool palloc_units_claimed_locked(u64 start, u64 end)
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

/* ------------------------------------------------------------------ reports */

const struct palloc_stats *palloc_stats(void)
{
	return &ps.stats;
}

struct palloc_stats *palloc_stats_mut(void)
{
	return &ps.stats;
}

u64 palloc_free_bytes(void)
{
	spin_lock(&palloc_lock);
	u64 bytes = ps.stats.free_bytes;

	spin_unlock(&palloc_lock);
	return bytes;
}

u64 palloc_unaccepted_bytes(void)
{
	spin_lock(&palloc_lock);
	u64 bytes = ps.stats.unaccepted_bytes;

	spin_unlock(&palloc_lock);
	return bytes;
}

u64 palloc_count_free(void)
{
	u64 bytes = 0;

	/* The bits themselves, not the nfree counts: this is the check of both. */
	for (unsigned order = 0; order < PALLOC_MAX_ORDER; order++)
		for (const struct unit_meta *m = ps.free_head[order]; m; m = m->next[order]) {
			for (u64 idx = 0; idx < PAGES_PER_UNIT; idx += 1ULL << order) {
				if (bits_test(m->freemap, freemap_bit(idx, order)))
					bytes += PAGE_SIZE << order;
			}
		}
	for (unsigned i = 0; i < ps.nzones; i++)
		for (u64 w = 0; w * 64 < ps.zones[i].units; w++)
			bytes += popcount64(ps.zones[i].free_units[w]) * UNIT_SIZE;
	return bytes;
}

u64 palloc_free_blocks(unsigned order)
{
	return order < ORDERS ? ps.free_count[order] : 0;
}
