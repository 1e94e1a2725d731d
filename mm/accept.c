/* SPDX-License-Identifier: MIT */
/* memaccept: acceptance: claiming unaccepted units and partial units, the platform call, waiting for other CPUs' accepts (pure logic, host-tested). */
#include "include/panic.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "mm/palloc_internal.h"

/*
 * The page allocator (page_alloc.c) hands out memory; this file decides which memory
 * becomes usable and when. A unit's life here: its bit is set in the unaccepted bitmap;
 * a CPU claims it under the allocator's lock (bit cleared, the allocator marks it
 * accepting), calls the platform without the lock, and under the lock again gives it
 * to the allocator as free, or as lost if the platform refused. Partial units (a piece
 * of a unit, the rest firmware-owned) wait in a table and go the same way, a page range
 * at a time. Claiming under the lock is what keeps two CPUs from accepting the same
 * memory; the generation counter is how a CPU that needs memory another CPU is
 * accepting waits for it (the role of Linux's accepting list).
 */

/* A partial unit's unaccepted piece, accepted on demand (palloc_add_edge). */
enum edge_state { E_PENDING, E_ACCEPTING, E_DONE, E_LOST };

struct palloc_edge {
	u64 start, end;		/* fixed once added; state changes under the lock */
	u8 state;
};

/* Acceptance's state; guarded by palloc_lock like the allocator's. */
static struct {
	struct palloc_env env;
	struct unaccepted_bitmap *bitmap;
	struct palloc_stats *stats;	/* the allocator's, which the reports read */
	u64 next_cursor;	/* every unit below this is accepted, being accepted or not RAM */
	u64 accepting;		/* units (and edges) claimed and not yet accepted */
	u64 generation;		/* bumped whenever claimed units (or edges) finish */
	struct palloc_edge edges[PALLOC_MAX_EDGES];	/* partial units, in the order added */
	unsigned nedges;
	unsigned edge_cursor;	/* no pending edge below this index */
	struct palloc_cpu_stats cpu[MAX_CPUS];
} acc;

void accept_init(struct unaccepted_bitmap *bm, const struct palloc_env *env,
		 struct palloc_stats *stats)
{
	memset(&acc, 0, sizeof(acc));
	acc.env = *env;
	acc.bitmap = bm;
	acc.stats = stats;
}

bool accept_in_flight_locked(u64 *generation)
{
	*generation = acc.generation;
	return acc.accepting != 0;
}

/*
 * Wait until some claimed unit has been accepted (or lost), when `generation` was read
 * while units were being accepted; the caller then looks again. Spinning is the whole
 * waiting mechanism: memaccept takes no interrupts and has nothing else to run.
 */
void accept_wait(u64 generation)
{
	while (atomic_load64(&acc.generation) == generation)
		spin_relax();
}

static unsigned this_cpu(void)
{
	unsigned cpu = acc.env.cpu_id ? acc.env.cpu_id() : 0;

	if (cpu >= MAX_CPUS)
		panic("palloc: CPU index %u is beyond MAX_CPUS (%d)", cpu, MAX_CPUS);
	return cpu;
}

/*
 * One timed platform call for [start, end), made WITHOUT the lock: the calling CPU's
 * own counters are updated here (nobody else writes them); the shared statistics by
 * the caller, under the lock (record_accept).
 */
static int timed_accept(u64 start, u64 end, u64 *ns_out)
{
	u64 t0 = acc.env.now_ns();
	int rc = acc.env.accept(acc.env.ctx, start, end);
	u64 t1 = acc.env.now_ns();
	/* A clock that went backwards must not become a 584-year accept. */
	u64 ns = t1 > t0 ? t1 - t0 : 0;
	struct palloc_cpu_stats *c = &acc.cpu[this_cpu()];

	c->accept_calls++;
	c->accept_ns += ns;
	if (!rc)
		c->accepted_bytes += end - start;
	*ns_out = t0 + ns;
	return rc;
}

/* Under the lock: the call's latency, bytes (by path) and a point of the series. */
static void record_accept(u64 start, u64 end, enum accept_path path, int rc, u64 t_end, u64 ns)
{
	acc.stats->accept_calls++;
	latency_add(&acc.stats->accept_lat, ns);
	if (!rc) {
		acc.stats->accepted_bytes += end - start;
		acc.stats->accepted_by_path[path] += end - start;
		series_add(&acc.stats->accepted_over_time, t_end, acc.stats->accepted_bytes);
	}
}

/* Under the lock: take units [start, end) (unaccepted, in a zone) for this CPU to accept. */
static void claim_locked(u64 start, u64 end)
{
	palloc_units_claim_locked(start, end);
	/* A cleared bit is never set again, even if the accept fails. */
	for (u64 u = start; u < end; u += UNIT_SIZE)
		bitmap_clear(acc.bitmap, u);
	acc.accepting += (end - start) >> UNIT_SHIFT;
	acc.stats->unaccepted_bytes -= end - start;
}

/*
 * Accept whole units [start, end) that this CPU claimed: the platform call without the
 * lock, then the units go to the free map (or are lost) under it.
 */
static void accept_run(u64 start, u64 end, enum accept_path path)
{
	u64 t_end, t0 = acc.env.now_ns();
	int rc = timed_accept(start, end, &t_end);

	spin_lock(&palloc_lock);
	record_accept(start, end, path, rc, t_end, t_end > t0 ? t_end - t0 : 0);
	/* On a refusal the platform reported why; the units are never used, never retried. */
	palloc_units_done_locked(start, end, rc == 0);
	acc.accepting -= (end - start) >> UNIT_SHIFT;
	/* Release: whoever waits on the generation sees the units' new state. */
	atomic_add64(&acc.generation, 1);
	spin_unlock(&palloc_lock);
}

/* Largest run accepted in one call: keeps one latency sample from covering a whole guest. */
#define MAX_RUN (1 * GiB)

/*
 * Under the lock: the first run of unaccepted units at or after `from` and below `end`
 * (contiguous, at most MAX_RUN, not crossing a MAX_RUN boundary), claimed for this CPU.
 * false when there is none.
 */
static bool claim_run_locked(u64 from, u64 end, u64 *run_start, u64 *run_end)
{
	u64 unit, next;

	if (!bitmap_next(acc.bitmap, from, &unit) || unit >= end)
		return false;
	next = unit + UNIT_SIZE;
	while (next < end && !IS_ALIGNED(next, MAX_RUN) && bitmap_test(acc.bitmap, next))
		next += UNIT_SIZE;
	claim_locked(unit, next);
	*run_start = unit;
	*run_end = next;
	return true;
}

u64 palloc_accept_range(u64 start, u64 end, enum accept_path path)
{
	u64 total = 0, from = start, rs, re;

	if (!IS_ALIGNED(start, UNIT_SIZE) || !IS_ALIGNED(end, UNIT_SIZE))
		panic("palloc_accept_range: [%llx, %llx) is not unit aligned", start, end);
	for (;;) {
		spin_lock(&palloc_lock);
		bool claimed = claim_run_locked(from, end, &rs, &re);

		spin_unlock(&palloc_lock);
		if (!claimed)
			break;
		accept_run(rs, re, path);
		total += re - rs;
		from = re;
	}
	/* Units other CPUs claimed first: the caller may use the range once they are done. */
	for (;;) {
		spin_lock(&palloc_lock);
		bool busy = acc.accepting && palloc_units_claimed_locked(start, end);
		u64 generation = acc.generation;

		spin_unlock(&palloc_lock);
		if (!busy)
			break;
		accept_wait(generation);
	}
	return total;
}

/* ------------------------------------------------------------------ partial units */

bool palloc_add_edge(u64 start, u64 end)
{
	u64 unit = ALIGN_DOWN(start, UNIT_SIZE);
	int state = palloc_unit_state(unit);

	/* A piece of one unit, never all of it: a whole unit is the bitmap's. */
	if (!IS_ALIGNED(start, PAGE_SIZE) || !IS_ALIGNED(end, PAGE_SIZE) || start >= end ||
	    end - unit > UNIT_SIZE || end - start == UNIT_SIZE || state < 0 ||
	    state == U_FREE || state == U_USED || bitmap_test(acc.bitmap, unit))
		panic("palloc_add_edge: [%llx, %llx) is not the unaccepted piece of a partial unit "
		      "in a zone (unit state %d)", start, end, state);
	spin_lock(&palloc_lock);
	if (acc.nedges == PALLOC_MAX_EDGES) {
		spin_unlock(&palloc_lock);
		return false;
	}
	/* Two entries for one page would be a double accept. */
	for (unsigned i = 0; i < acc.nedges; i++)
		if (start < acc.edges[i].end && acc.edges[i].start < end)
			panic("palloc_add_edge: [%llx, %llx) overlaps the edge [%llx, %llx)", start, end,
			      acc.edges[i].start, acc.edges[i].end);
	acc.edges[acc.nedges++] = (struct palloc_edge){ start, end, E_PENDING };
	acc.stats->edge_unaccepted_bytes += end - start;
	spin_unlock(&palloc_lock);
	return true;
}

/* Under the lock: a partial unit's piece was accepted (rc 0) or refused: free, or lost. */
static void edge_finished_locked(u64 start, u64 end, enum accept_path path, int rc, u64 t0,
				 u64 t_end)
{
	record_accept(start, end, path, rc, t_end, t_end > t0 ? t_end - t0 : 0);
	if (rc) {
		acc.stats->accept_failures++;
		return;
	}
	acc.stats->edge_accepted_bytes += end - start;
	palloc_add_free_locked(start, end);
}

void palloc_accept_edge(u64 start, u64 end)
{
	u64 t_end, t0 = acc.env.now_ns();
	int rc = timed_accept(start, end, &t_end);

	spin_lock(&palloc_lock);
	edge_finished_locked(start, end, ACCEPT_BOOT_EDGE, rc, t0, t_end);
	spin_unlock(&palloc_lock);
}

/*
 * Claim the first pending partial unit and accept it, as accept_run does for whole
 * units: claimed under the lock, accepted without it, freed under it. Returns false
 * when none is pending; *bytes: what was accepted (0 if the platform refused).
 */
static bool accept_next_edge(enum accept_path path, u64 *bytes)
{
	struct palloc_edge *e;
	u64 t_end, t0;
	int rc;

	spin_lock(&palloc_lock);
	while (acc.edge_cursor < acc.nedges && acc.edges[acc.edge_cursor].state != E_PENDING)
		acc.edge_cursor++;
	if (acc.edge_cursor == acc.nedges) {
		spin_unlock(&palloc_lock);
		return false;
	}
	e = &acc.edges[acc.edge_cursor++];
	e->state = E_ACCEPTING;
	acc.accepting++;
	acc.stats->edge_unaccepted_bytes -= e->end - e->start;
	spin_unlock(&palloc_lock);

	t0 = acc.env.now_ns();
	rc = timed_accept(e->start, e->end, &t_end);

	spin_lock(&palloc_lock);
	if (e->state != E_ACCEPTING)
		panic("accept_next_edge: edge [%llx, %llx) changed state to %u while being accepted",
		      e->start, e->end, e->state);
	e->state = rc ? E_LOST : E_DONE;
	edge_finished_locked(e->start, e->end, path, rc, t0, t_end);
	acc.accepting--;
	atomic_add64(&acc.generation, 1);
	spin_unlock(&palloc_lock);
	*bytes = rc ? 0 : e->end - e->start;
	return true;
}

u64 palloc_accept_edges(enum accept_path path)
{
	u64 total = 0, bytes;

	while (accept_next_edge(path, &bytes))
		total += bytes;
	return total;
}

/* Without the lock: the page-fault handler's diagnosis, which may run while it is held. */
bool palloc_edge_unaccepted(u64 addr)
{
	for (unsigned i = 0; i < acc.nedges; i++)
		if (addr >= acc.edges[i].start && addr < acc.edges[i].end)
			return __atomic_load_n(&acc.edges[i].state, __ATOMIC_RELAXED) <= E_ACCEPTING;
	return false;
}

/*
 * The next unit is always the lowest one still unaccepted. Growing accepted memory
 * upward from the bottom keeps it in one contiguous block: fewer page-table pages, and
 * whole naturally aligned 1 GiB runs for eager acceptance. The cursor only moves up,
 * because bits are never set again: O(1) amortised.
 */
bool palloc_accept_next(enum accept_path path)
{
	u64 unit;

	spin_lock(&palloc_lock);
	if (!bitmap_next(acc.bitmap, acc.next_cursor, &unit)) {
		u64 bytes;

		spin_unlock(&palloc_lock);
		/* Partial units last: a page-by-page accept for less than one unit's memory. */
		return accept_next_edge(path, &bytes);
	}
	acc.next_cursor = unit;
	claim_locked(unit, unit + UNIT_SIZE);
	spin_unlock(&palloc_lock);
	accept_run(unit, unit + UNIT_SIZE, path);
	return true;
}

const struct palloc_cpu_stats *palloc_cpu_stats(unsigned cpu)
{
	return cpu < MAX_CPUS ? &acc.cpu[cpu] : NULL;
}

const struct unaccepted_bitmap *palloc_bitmap(void)
{
	return acc.bitmap;
}
