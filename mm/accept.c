/* SPDX-License-Identifier: MIT */
/* memaccept: acceptance: claiming unaccepted units and partial units, the platform call, waiting for other CPUs' accepts (pure logic, host-tested). */
#include "arch/x86/observer.h"
#include "include/panic.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "mm/accept.h"
#include "mm/palloc_internal.h"

/*
 * For the instruction observer (tools/observer): one accept's whole path, from before its
 * claim to after its memory reached the free lists, so that its instructions outside the
 * platform's call are counted with the allocator's share (the platform call inside is
 * bracketed by kernel/memory.c accept_backend). 8-byte NOPs; a BEGIN without an END
 * (nothing was left to claim) is started again by the next BEGIN.
 */
#define ACCEPT_MARK_BEGIN() OBS_MARK(OBS_KIND_ACCEPT, OBS_ACCEPT_BEGIN)
#define ACCEPT_MARK_END() OBS_MARK(OBS_KIND_ACCEPT, OBS_ACCEPT_END)

/*
 * The page allocator (page_alloc.c) hands out memory; this file decides which memory
 * becomes usable and when. A unit's life here: its bit is set in the unaccepted bitmap;
 * a CPU claims it under acceptance's own lock (bit cleared, the unit marked accepting),
 * calls the platform without any lock, and hands it to the allocator as free (under
 * the allocator's lock), or as lost if the platform refused. Partial units (a piece of
 * a unit, the rest firmware-owned) wait in a table and go the same way, a page range at
 * a time. Claiming under the lock is what keeps two CPUs from accepting the same
 * memory. A CPU that needs a particular unit another CPU is accepting waits for that
 * unit; one that needs any memory while some is being accepted waits for the next
 * accept to finish (the generation counter): Linux keeps a list of the ranges being
 * accepted for the same purpose (drivers/firmware/efi/unaccepted_memory.c).
 */

/* A partial unit's unaccepted piece, accepted on demand (palloc_add_edge). */
enum edge_state { E_PENDING, E_ACCEPTING, E_DONE, E_LOST };

struct palloc_edge {
	u64 start, end;		/* fixed once added; state changes under the lock */
	u8 state;
};

static struct {
	/* The bitmap, the claim cursors and the partial units; never held across an accept. */
	struct spinlock lock __aligned(64);
	/* The shared statistics an accept adds to: latency, bytes by path, the series. */
	struct spinlock stats_lock __aligned(64);
	struct palloc_env env;
	struct unaccepted_bitmap *bitmap;
	struct palloc_stats *stats;	/* the allocator's, which the reports read */
	u64 accepting;		/* units and edges claimed and not yet done (atomic) */
	u64 generation;		/* bumped whenever a claim is done (atomic) */
	struct palloc_edge edges[PALLOC_MAX_EDGES];	/* partial units, in the order added */
	unsigned nedges;
	unsigned edge_cursor;	/* no pending edge below this index */
	/* Per CPU, last: accept_init clears the CPUs in use, not MAX_CPUS of them. */
	struct palloc_cpu_stats cpu[MAX_CPUS];
	/*
	 * Where each CPU looks for the next unit to claim (palloc_accept_next): apart, so
	 * that CPUs accepting at once do not all start at the lowest unit's bitmap word.
	 */
	u64 cursor[MAX_CPUS];
	bool cursor_set[MAX_CPUS];
	/* Per CPU, written only by that CPU (the fill at palloc_populate: before the others run). */
	struct accept_cpu {
		u64 pt[PALLOC_PT_RESERVE_MAX];	/* page-table pages for this CPU's accepts */
		unsigned npt;
		bool in_accept;		/* inside env.accept: see palloc_pt_page */
	} __aligned(64) mine[MAX_CPUS];
} acc;

void accept_init(struct unaccepted_bitmap *bm, const struct palloc_env *env, unsigned was,
		 struct palloc_stats *stats)
{
	unsigned n = MAX(was, env->ncpus);

	memset(&acc, 0, (size_t)((char *)acc.cpu - (char *)&acc));
	memset(acc.cpu, 0, n * sizeof(acc.cpu[0]));
	memset(acc.cursor, 0, n * sizeof(acc.cursor[0]));
	memset(acc.cursor_set, 0, n * sizeof(acc.cursor_set[0]));
	memset(acc.mine, 0, n * sizeof(acc.mine[0]));
	if (env->pt_reserve > PALLOC_PT_RESERVE_MAX)
		panic("palloc_init: a page-table reserve of %u pages is above the maximum %d",
		      env->pt_reserve, PALLOC_PT_RESERVE_MAX);
	acc.lock = (struct spinlock)SPINLOCK_INIT;
	acc.stats_lock = (struct spinlock)SPINLOCK_INIT;
	acc.env = *env;
	acc.bitmap = bm;
	acc.stats = stats;
}

u64 accept_lock_acquisitions(void)
{
	return spin_acquired(&acc.lock) + spin_acquired(&acc.stats_lock);
}

bool accept_in_flight(u64 *generation)
{
	*generation = atomic_load64(&acc.generation);
	return atomic_load64(&acc.accepting) != 0;
}

static unsigned this_cpu(void)
{
	unsigned cpu = acc.env.cpu_id ? acc.env.cpu_id() : 0;

	if (cpu >= acc.env.ncpus)
		panic("palloc: CPU index %u, but palloc_init was told of %u CPUs", cpu, acc.env.ncpus);
	return cpu;
}

/*
 * Page tables for accepts. Mapping a range to accept it may need new page-table pages
 * (a page-directory page for a new 1 GiB region, and so on), and an accept often runs
 * because no memory is free. A shared pool topped up after the fact runs dry when more
 * CPUs than it holds pages open new regions at once (the claim cursors start CPUs 128
 * MiB apart, so 256 CPUs open 32 regions of 1 GiB). So each CPU holds what one accept
 * can need (env.pt_reserve pages), and takes back what its accept used from that
 * accept's own memory, under the allocator's lock in the same hold that makes the
 * memory free (accept_done), before any other CPU can take it.
 */
static void reserve_top_up_locked(struct accept_cpu *me)
{
	while (me->npt < acc.env.pt_reserve) {
		u64 page = palloc_alloc_locked(0);

		if (!page)
			break;
		me->pt[me->npt++] = page;
	}
}

void accept_reserve_fill_all_locked(void)
{
	/* As far as free memory goes: a short reserve is topped up before each claim. */
	for (unsigned cpu = 0; cpu < acc.env.ncpus; cpu++)
		reserve_top_up_locked(&acc.mine[cpu]);
}

/*
 * Before a claim: a reserve is short only after an accept the platform refused (no new
 * memory to take back from); top it up from whatever is free.
 */
static void reserve_ready(void)
{
	struct accept_cpu *me = &acc.mine[this_cpu()];

	if (me->npt >= acc.env.pt_reserve)
		return;
	spin_lock(&palloc_lock);
	reserve_top_up_locked(me);
	spin_unlock(&palloc_lock);
}

bool accept_this_cpu_accepting(void)
{
	/* Before palloc_init (no CPU index yet) nothing is accepting. */
	return acc.env.cpu_id && acc.mine[this_cpu()].in_accept;
}

u64 palloc_pt_page(void)
{
	struct accept_cpu *me = &acc.mine[this_cpu()];

	if (me->in_accept && me->npt)
		return me->pt[--me->npt];
	return palloc_alloc_accepted(0);
}

/* A per-CPU count: only its CPU writes it, others may read it at any time. */
static inline void cpu_count(u64 *c, u64 n)
{
	__atomic_store_n(c, *c + n, __ATOMIC_RELAXED);
}

/*
 * Wait until some claimed unit has been accepted (or lost), when `generation` was read
 * while units were being accepted; the caller then looks again. Spinning is the whole
 * waiting mechanism: memaccept takes no interrupts and has nothing else to run. Meanwhile
 * this CPU answers requests to drain its cache: the CPU it waits for may need them.
 */
void accept_wait(u64 generation)
{
	cpu_count(&acc.cpu[this_cpu()].accept_waits, 1);
	while (atomic_load64(&acc.generation) == generation) {
		palloc_poll();
		spin_relax();
	}
}

/*
 * One timed platform call for [start, end), made without any lock: the calling CPU's
 * own counters are updated here (nobody else writes them); the shared statistics by
 * accept_done.
 */
static int timed_accept(u64 start, u64 end, u64 *ns_out)
{
	struct accept_cpu *me = &acc.mine[this_cpu()];

	/* An accept callback that accepts again would claim inside its own half-done claim. */
	if (me->in_accept)
		panic("palloc: an accept of [%llx, %llx) started from inside an accept on CPU %u",
		      start, end, this_cpu());
	me->in_accept = true;
	u64 t0 = acc.env.now_ns();
	int rc = acc.env.accept(acc.env.ctx, start, end);
	u64 t1 = acc.env.now_ns();

	me->in_accept = false;
	/* A clock that went backwards must not become a 584-year accept. */
	u64 ns = t1 > t0 ? t1 - t0 : 0;
	struct palloc_cpu_stats *c = &acc.cpu[this_cpu()];

	cpu_count(&c->accept_calls, 1);
	cpu_count(&c->accept_ns, ns);
	if (!rc)
		cpu_count(&c->accepted_bytes, end - start);
	*ns_out = ns;
	return rc;
}

/*
 * The one end of every accept, whole units or a partial unit's piece: the statistics,
 * then the memory goes to the allocator as free (or is lost: never used, never
 * retried: the platform said why), then waiters may look again. `claimed`: units or
 * edges this accept had counted as in flight.
 */
static void accept_done(u64 start, u64 end, bool whole_units, enum accept_path path, int rc,
			u64 ns, u64 claimed)
{
	PALLOC_TEST_POINT(PALLOC_POINT_ACCEPT_TIMED);
	spin_lock(&acc.stats_lock);
	acc.stats->accept_calls++;
	latency_add(&acc.stats->accept_lat, ns);
	if (rc) {
		acc.stats->accept_failures += whole_units ? (end - start) >> UNIT_SHIFT : 1;
	} else {
		acc.stats->accepted_bytes += end - start;
		acc.stats->accepted_by_path[path] += end - start;
		if (!whole_units)
			acc.stats->edge_accepted_bytes += end - start;
		/*
		 * Timed under the lock that orders the points: an accept that ended earlier
		 * but reaches the lock later must not add a point before the last one.
		 */
		series_add(&acc.stats->accepted_over_time, acc.env.now_ns(), acc.stats->accepted_bytes);
	}
	spin_unlock(&acc.stats_lock);

	spin_lock(&palloc_lock);
	if (whole_units)
		palloc_units_done_locked(start, end, rc == 0);
	else if (!rc)
		palloc_add_free_locked(start, end);
	/* What this accept's page tables took from the reserve, from its own memory. */
	reserve_top_up_locked(&acc.mine[this_cpu()]);
	spin_unlock(&palloc_lock);

	/* Release: whoever waits on the generation sees the memory where it went. */
	__atomic_sub_fetch(&acc.accepting, claimed, __ATOMIC_ACQ_REL);
	atomic_add64(&acc.generation, 1);
}

/* Under the lock: take units [start, end) (unaccepted, in a zone) for this CPU to accept. */
static void claim_locked(u64 start, u64 end)
{
	palloc_units_claim(start, end);
	/* A cleared bit is never set again, even if the accept fails. */
	for (u64 u = start; u < end; u += UNIT_SIZE)
		bitmap_clear(acc.bitmap, u);
	atomic_add64(&acc.accepting, (end - start) >> UNIT_SHIFT);
	__atomic_store_n(&acc.stats->unaccepted_bytes, acc.stats->unaccepted_bytes - (end - start),
			 __ATOMIC_RELAXED);
}

/* Accept whole units [start, end) that this CPU claimed; the bytes accepted (0: refused). */
static u64 accept_run(u64 start, u64 end, enum accept_path path)
{
	u64 ns;
	int rc = timed_accept(start, end, &ns);

	accept_done(start, end, true, path, rc, ns, (end - start) >> UNIT_SHIFT);
	return rc ? 0 : end - start;
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
		ACCEPT_MARK_BEGIN();
		reserve_ready();
		spin_lock(&acc.lock);
		bool claimed = claim_run_locked(from, end, &rs, &re);

		spin_unlock(&acc.lock);
		if (!claimed)
			break;
		total += accept_run(rs, re, path);
		ACCEPT_MARK_END();
		from = re;
	}
	/* Units other CPUs claimed first: wait for those units, not for any accept. */
	if (palloc_units_claimed(start, end))
		cpu_count(&acc.cpu[this_cpu()].accept_waits, 1);
	while (palloc_units_claimed(start, end)) {
		palloc_poll();
		spin_relax();
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
	spin_lock(&acc.lock);
	if (acc.nedges == PALLOC_MAX_EDGES) {
		spin_unlock(&acc.lock);
		return false;
	}
	/* Two entries for one page would be a double accept. */
	for (unsigned i = 0; i < acc.nedges; i++)
		if (start < acc.edges[i].end && acc.edges[i].start < end)
			panic("palloc_add_edge: [%llx, %llx) overlaps the edge [%llx, %llx)", start, end,
			      acc.edges[i].start, acc.edges[i].end);
	acc.edges[acc.nedges++] = (struct palloc_edge){ start, end, E_PENDING };
	acc.stats->edge_unaccepted_bytes += end - start;
	spin_unlock(&acc.lock);
	return true;
}

void palloc_accept_edge(u64 start, u64 end)
{
	u64 ns;
	int rc;

	ACCEPT_MARK_BEGIN();
	reserve_ready();
	atomic_add64(&acc.accepting, 1);
	rc = timed_accept(start, end, &ns);
	accept_done(start, end, false, ACCEPT_BOOT_EDGE, rc, ns, 1);
	ACCEPT_MARK_END();
}

/*
 * Claim the first pending partial unit and accept it, as accept_run does for whole
 * units. Returns false when none is pending; *bytes: what was accepted (0 if the
 * platform refused).
 */
static bool accept_next_edge(enum accept_path path, u64 *bytes)
{
	struct palloc_edge *e;
	u64 ns;
	int rc;

	ACCEPT_MARK_BEGIN();
	reserve_ready();
	spin_lock(&acc.lock);
	while (acc.edge_cursor < acc.nedges && acc.edges[acc.edge_cursor].state != E_PENDING)
		acc.edge_cursor++;
	if (acc.edge_cursor == acc.nedges) {
		spin_unlock(&acc.lock);
		return false;
	}
	e = &acc.edges[acc.edge_cursor++];
	__atomic_store_n(&e->state, E_ACCEPTING, __ATOMIC_RELAXED);
	atomic_add64(&acc.accepting, 1);
	acc.stats->edge_unaccepted_bytes -= e->end - e->start;
	spin_unlock(&acc.lock);

	rc = timed_accept(e->start, e->end, &ns);
	/* The claim made it this CPU's alone: nobody else changes its state meanwhile. */
	__atomic_store_n(&e->state, rc ? E_LOST : E_DONE, __ATOMIC_RELAXED);
	accept_done(e->start, e->end, false, path, rc, ns, 1);
	ACCEPT_MARK_END();
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
 * Where CPU `cpu` starts looking: the lowest unaccepted unit for the first CPU, and one
 * bitmap word (64 units, 128 MiB) further up for each next one, so that CPUs accepting
 * at once claim from different words. Growing accepted memory upward from there keeps
 * it in few contiguous blocks: few page-table pages, whole naturally aligned runs.
 */
#define CURSOR_SPREAD (64 * UNIT_SIZE)

/*
 * Accept the next unit this CPU finds from its cursor (wrapping to the bottom once), or
 * once no whole unit is left, the lowest pending partial unit. A cursor only moves up
 * (bits are never set again): O(1) amortised.
 */
bool palloc_accept_next(enum accept_path path)
{
	unsigned cpu = this_cpu();
	u64 unit;

	ACCEPT_MARK_BEGIN();
	reserve_ready();
	spin_lock(&acc.lock);
	if (!acc.cursor_set[cpu]) {
		u64 lowest;

		acc.cursor_set[cpu] = true;
		if (bitmap_next(acc.bitmap, 0, &lowest))
			acc.cursor[cpu] = lowest + cpu * CURSOR_SPREAD;
	}
	if (!bitmap_next(acc.bitmap, acc.cursor[cpu], &unit) && !bitmap_next(acc.bitmap, 0, &unit)) {
		u64 bytes;

		spin_unlock(&acc.lock);
		/* Partial units last: a page-by-page accept for less than one unit's memory. */
		return accept_next_edge(path, &bytes);
	}
	acc.cursor[cpu] = unit;
	claim_locked(unit, unit + UNIT_SIZE);
	spin_unlock(&acc.lock);
	accept_run(unit, unit + UNIT_SIZE, path);
	ACCEPT_MARK_END();
	return true;
}

unsigned palloc_pt_reserve_pages(u64 *out, unsigned cap)
{
	unsigned n = 0;

	for (unsigned cpu = 0; cpu < acc.env.ncpus; cpu++)
		for (unsigned k = 0; k < acc.mine[cpu].npt && n < cap; k++)
			out[n++] = acc.mine[cpu].pt[k];
	return n;
}

const struct palloc_cpu_stats *palloc_cpu_stats(unsigned cpu)
{
	return cpu < MAX_CPUS ? &acc.cpu[cpu] : NULL;
}

const struct unaccepted_bitmap *palloc_bitmap(void)
{
	return acc.bitmap;
}
