/* SPDX-License-Identifier: MIT */
/* memaccept: a bump allocator over firmware-accepted memory, used only while booting. */
#include "include/panic.h"
#include "lib/string.h"
#include "mm/early.h"

/*
 * Allocations come from the top of the highest usable range below 4 GiB, growing down,
 * so they stay out of the way of the low memory and end up in one or two reserved
 * ranges. Only RANGE_USABLE is used: boot-services memory still holds the firmware's
 * page tables and stack until the kernel has switched to its own.
 */
#define LOW_LIMIT (4 * GiB)
#define MIN_ADDR (1 * MiB)

static const struct memmap *map;
static struct early_reserved reserved[EARLY_MAX_RESERVED];
static unsigned nreserved;
static u64 total;
static bool finished;
static bool (*check_fn)(void *ctx, u64 start, u64 end);
static void *check_ctx;
static const u64 *avoid_pages;
static unsigned navoid;

void early_init(const struct memmap *m)
{
	map = m;
	nreserved = 0;
	total = 0;
	finished = false;
	check_fn = NULL;
	avoid_pages = NULL;
	navoid = 0;
}

static bool overlaps_reserved(u64 s, u64 e)
{
	for (unsigned i = 0; i < nreserved; i++)
		if (s < reserved[i].end && reserved[i].start < e)
			return true;
	return false;
}

/* The lowest page early_avoid named in [s, e), or e. */
static u64 avoided(u64 s, u64 e)
{
	u64 low = e;

	for (unsigned i = 0; i < navoid; i++)
		if (avoid_pages[i] < e && avoid_pages[i] + PAGE_SIZE > s && avoid_pages[i] < low)
			low = ALIGN_DOWN(avoid_pages[i], PAGE_SIZE);
	return low;
}

static void add_reserved(u64 s, u64 e)
{
	for (unsigned i = 0; i < nreserved; i++) {
		if (reserved[i].start == e) {
			reserved[i].start = s;
			return;
		}
		if (reserved[i].end == s) {
			reserved[i].end = e;
			return;
		}
	}
	if (nreserved == EARLY_MAX_RESERVED)
		panic("early_alloc: more than %d separate reservations", EARLY_MAX_RESERVED);
	reserved[nreserved++] = (struct early_reserved){ s, e };
}

/* Highest aligned block of `size` in [lo, hi) not yet reserved, or 0. */
static u64 fit(u64 lo, u64 hi, u64 size, u64 align)
{
	while (hi >= lo + size) {
		u64 s = ALIGN_DOWN(hi - size, align);

		if (s < lo)
			return 0;
		if (!overlaps_reserved(s, s + size) && avoided(s, s + size) == s + size)
			return s;
		/* Step below the lowest reservation (or avoided page) that is in the way. */
		u64 below = avoided(s, s + size);

		for (unsigned i = 0; i < nreserved; i++)
			if (reserved[i].start < s + size && reserved[i].end > s && reserved[i].start < below)
				below = reserved[i].start;
		hi = below;
	}
	return 0;
}

/* The highest block that fits, below 4 GiB first, then anywhere; 0 if none. */
static u64 choose(u64 size, u64 align)
{
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned i = map->nranges; i-- > 0;) {
			const struct mem_range *r = &map->ranges[i];
			u64 lo = MAX(r->start, MIN_ADDR), hi = r->end;

			if (r->kind != RANGE_USABLE)
				continue;
			if (pass == 0 && (lo >= LOW_LIMIT))
				continue;
			if (pass == 0)
				hi = MIN(hi, LOW_LIMIT);
			u64 s = hi > lo ? fit(lo, hi, size, align) : 0;

			if (s)
				return s;
		}
	}
	return 0;
}

/* Take `size` bytes (whole pages) aligned to `align`, without writing to them. */
static u64 reserve(u64 size, u64 align)
{
	u64 s;

	if (finished)
		panic("early_alloc: called after the page allocator took over");
	size = ALIGN_UP(size, PAGE_SIZE);
	if (align < PAGE_SIZE)
		align = PAGE_SIZE;
	/* Each refusal by the check excluded at least one page: this ends. */
	while ((s = choose(size, align))) {
		if (check_fn && !check_fn(check_ctx, s, s + size))
			continue;
		add_reserved(s, s + size);
		total += size;
		return s;
	}
	fatal(EXIT_OUT_OF_MEMORY, "early_alloc: no accepted memory left for %llu bytes at boot",
	      (unsigned long long)size);
}

u64 early_alloc(u64 size, u64 align)
{
	u64 s = reserve(size, align);

	memset((void *)(uintptr_t)s, 0, ALIGN_UP(size, PAGE_SIZE));
	return s;
}

/*
 * No memset: a page nobody writes is never touched, so under a hypervisor that backs
 * guest memory on first write it costs nothing. Only for callers that initialise each
 * page before they read it (the allocator's per-unit state, mm/page_alloc.c).
 */
u64 early_reserve_uninit(u64 size, u64 align)
{
	return reserve(size, align);
}

u64 early_alloc_page(void)
{
	return early_alloc(PAGE_SIZE, PAGE_SIZE);
}

void early_finish(void)
{
	finished = true;
}

void early_set_check(bool (*check)(void *ctx, u64 start, u64 end), void *ctx)
{
	check_ctx = ctx;
	check_fn = check;
}

void early_exclude(u64 start, u64 end)
{
	start = ALIGN_DOWN(start, PAGE_SIZE);
	end = ALIGN_UP(end, PAGE_SIZE);
	if (start < end && !overlaps_reserved(start, end))
		add_reserved(start, end);
}

void early_avoid(const u64 *pages, unsigned n)
{
	avoid_pages = pages;
	navoid = pages ? n : 0;
}

unsigned early_reserved(const struct early_reserved **out)
{
	*out = reserved;
	return nreserved;
}

u64 early_bytes(void)
{
	return total;
}
