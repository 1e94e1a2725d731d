/* SPDX-License-Identifier: MIT */
/* memaccept: the acceptance policies on top of the page allocator. */
#include "kernel/cmdline.h"
#include "mm/page_alloc.h"
#include "mm/policy.h"

static u32 policy;
static u64 ahead;

void policy_init(u32 p, u64 ahead_bytes)
{
	policy = p;
	ahead = ahead_bytes;
}

/* Keep `ahead` bytes free by accepting the lowest units. */
static void top_up(void)
{
	while (palloc_free_bytes() < ahead && palloc_accept_next(ACCEPT_AHEAD))
		;
}

void policy_boot(void (*progress)(u64 done, u64 total))
{
	const struct unaccepted_bitmap *b = palloc_bitmap();

	if (policy == POLICY_AHEAD) {
		top_up();
		return;
	}
	if (policy != POLICY_EAGER)
		return;
	/*
	 * Segment by segment, in naturally aligned chunks: 1 GiB when that is at most a
	 * tenth of the work (so TDX can accept whole 1 GiB pages), smaller otherwise, so
	 * that a progress line comes at least every 10%.
	 */
	u64 total = bitmap_count(b) * UNIT_SIZE, done = 0, reported = 0;
	u64 chunk = GiB;

	while (chunk > UNIT_SIZE && chunk > total / 10)
		chunk >>= 1;
	for (unsigned i = 0; i < b->nsegs; i++) {
		u64 base = b->segs[i].base, end = base + (b->segs[i].units << UNIT_SHIFT);

		for (u64 a = base; a < end;) {
			u64 stop = MIN(end, ALIGN_DOWN(a, chunk) + chunk);

			/* Report before a chunk that would take the gap past 10%: gaps stay <= 10%. */
			if (progress && done > reported && (done + (stop - a) - reported) * 10 > total) {
				progress(done, total);
				reported = done;
			}
			done += palloc_accept_range(a, stop, ACCEPT_EAGER);
			a = stop;
		}
	}
	if (progress && total)
		progress(done, total);
}

bool policy_refill(unsigned order)
{
	(void)order;
	/* Any unit serves any order up to 2 MiB: take the lowest one. */
	return palloc_accept_next(ACCEPT_LAZY);
}

void policy_after_alloc(void)
{
	if (policy == POLICY_AHEAD)
		top_up();
}
