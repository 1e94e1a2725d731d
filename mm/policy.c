/* SPDX-License-Identifier: MIT */
/* memaccept: the acceptance policies on top of the page allocator. */
#include "lib/string.h"
#include "mm/accept.h"
#include "mm/page_alloc.h"
#include "mm/policy.h"

static u32 policy;
static u64 ahead;
static u64 ahead_in_flight;	/* bytes being accepted for the spare (top_up), atomically */
static struct policy_cpus cpuset = { .n = 1, .slots = 1 };

void policy_set_cpus(const struct policy_cpus *c)
{
	if (c)
		cpuset = *c;
	else
		cpuset = (struct policy_cpus){ .n = 1, .slots = 1 };
}

/* Parallel eager: CPU c accepts the units in [start[c], end[c]). */
struct eager_shares {
	u64 start[MAX_CPUS], end[MAX_CPUS];
	void (*progress)(u64 done, u64 total);
	u64 total;
	u64 reported;		/* last progress the boot CPU printed */
	u64 chunk;		/* naturally aligned runs, at most 1 GiB */
};

/* Accept one share in naturally aligned runs of sh->chunk. */
static void eager_share(unsigned cpu, void *arg)
{
	struct eager_shares *sh = arg;

	for (u64 a = sh->start[cpu]; a < sh->end[cpu];) {
		u64 stop = MIN(sh->end[cpu], ALIGN_DOWN(a, sh->chunk) + sh->chunk);

		palloc_accept_range(a, stop, ACCEPT_EAGER);
		a = stop;
		/* The boot CPU reports for everyone, when there is something new to say. */
		if (cpu == 0 && sh->progress) {
			u64 done = sh->total - palloc_unaccepted_bytes();

			if (done != sh->reported)
				sh->progress(done, sh->total);
			sh->reported = done;
		}
	}
}

/*
 * One contiguous share per online CPU below `slots` (the boot CPU too, or not), each
 * with the same number of units (holes in between cost nothing): large runs per CPU, so
 * the platform sees few, large calls. Returns how many CPUs got a share; *per: units per share.
 */
static unsigned split_shares(bool with_boot_cpu, unsigned slots, u64 *start, u64 *end, u64 *per)
{
	const struct unaccepted_bitmap *b = palloc_bitmap();
	u64 units = bitmap_count(b), idx = 0, unit, last = 0;
	u64 first[MAX_CPUS + 1];
	unsigned online[MAX_CPUS], n = 0, j = 0;

	for (unsigned c = with_boot_cpu ? 0 : 1; c < slots && c < MAX_CPUS; c++)
		if (!cpuset.online || cpuset.online(c))
			online[n++] = c;
	if (!n)
		return 0;
	*per = (units + n - 1) / n;
	/* The first unit of share j is set bit number j * per. */
	for (u64 from = 0; bitmap_next(b, from, &unit); from = unit + UNIT_SIZE) {
		if (j < n && idx == (u64)j * *per)
			first[j++] = unit;
		idx++;
		last = unit + UNIT_SIZE;
	}
	while (j <= n)
		first[j++] = last;	/* shares left without units are empty */
	for (unsigned k = 0; k < n; k++) {
		start[online[k]] = first[k];
		end[online[k]] = first[k + 1];
	}
	return n;
}

/*
 * Eager: every unit, before ready. One contiguous share per online CPU (one share, the
 * boot CPU's, when it runs alone), each in naturally aligned runs: 1 GiB when that is at
 * most a tenth of a share (so TDX can accept whole 1 GiB pages), smaller otherwise, so
 * that the boot CPU's progress line comes at least every 10%.
 */
static void eager(void (*progress)(u64 done, u64 total))
{
	struct eager_shares sh = { .progress = progress,
				   .total = bitmap_count(palloc_bitmap()) * UNIT_SIZE };
	bool parallel = cpuset.n > 1 && cpuset.run_all;
	u64 per;

	if (!split_shares(true, parallel ? cpuset.slots : 1, sh.start, sh.end, &per))
		return;
	sh.chunk = GiB;
	while (sh.chunk > UNIT_SIZE && sh.chunk > per * UNIT_SIZE / 10)
		sh.chunk >>= 1;
	if (parallel)
		cpuset.run_all(eager_share, &sh);
	else
		eager_share(0, &sh);
	if (progress && sh.reported != sh.total)
		progress(sh.total - palloc_unaccepted_bytes(), sh.total);
}

/*
 * Background: the APs accept everything that is left, each its share, in runs small
 * enough that the boot CPU (running the workload, accepting lazily what it needs first)
 * rarely waits long for a unit an AP has claimed.
 */
#define BACKGROUND_RUN (16 * MiB)

static struct {
	u64 start[MAX_CPUS], end[MAX_CPUS];
	u64 (*now_ns)(void);
	unsigned cpus;
	u64 finished;		/* APs done, atomically */
	u64 done_ns;		/* when the last one finished */
	u64 bytes;		/* what the APs accepted, atomically */
	bool running;
} bg;

static void background_share(unsigned cpu, void *arg)
{
	(void)arg;
	for (u64 a = bg.start[cpu]; a < bg.end[cpu];) {
		u64 stop = MIN(bg.end[cpu], ALIGN_DOWN(a, BACKGROUND_RUN) + BACKGROUND_RUN);

		__atomic_add_fetch(&bg.bytes, palloc_accept_range(a, stop, ACCEPT_BACKGROUND),
				   __ATOMIC_RELAXED);
		a = stop;
		/* Work the boot CPU hands out meanwhile (ptouch) runs here, between runs. */
		if (cpuset.yield)
			cpuset.yield();
	}
	/* Then the partial units (each claimed once, whichever AP gets there first). */
	__atomic_add_fetch(&bg.bytes, palloc_accept_edges(ACCEPT_BACKGROUND), __ATOMIC_RELAXED);
	/* The last AP to finish notes the time: then nothing is unaccepted any more. */
	if (__atomic_add_fetch(&bg.finished, 1, __ATOMIC_ACQ_REL) == bg.cpus)
		__atomic_store_n(&bg.done_ns, bg.now_ns(), __ATOMIC_RELEASE);
}

bool policy_background_start(u64 (*now_ns)(void))
{
	u64 per;

	if (policy != POLICY_BACKGROUND || !cpuset.start_long)
		return false;
	memset(&bg, 0, sizeof(bg));
	bg.now_ns = now_ns;
	bg.cpus = split_shares(false, cpuset.slots, bg.start, bg.end, &per);
	if (!bg.cpus)
		return false;
	bg.running = true;
	cpuset.start_long(background_share, NULL);
	return true;
}

bool policy_background_wait(u64 *done_ns, u64 *bytes, unsigned *cpus)
{
	if (!bg.running)
		return false;
	cpuset.wait_long();
	*done_ns = __atomic_load_n(&bg.done_ns, __ATOMIC_ACQUIRE);
	*bytes = __atomic_load_n(&bg.bytes, __ATOMIC_RELAXED);
	*cpus = bg.cpus;
	return true;
}

void policy_init(u32 p, u64 ahead_bytes)
{
	policy = p;
	ahead = ahead_bytes;
	ahead_in_flight = 0;
}

/*
 * Keep `ahead` bytes free by accepting the lowest units. CPUs that find the spare short
 * at the same time share the shortfall: a unit counts as soon as a CPU sets out to
 * accept it (ahead_in_flight), so each accepts only what the others have not already
 * begun, instead of every one of them accepting a unit for the same gap. (A partial
 * unit counts as a whole one: the spare may come out short by less than a unit, until
 * the next allocation tops it up again.)
 */
static void top_up(void)
{
	for (;;) {
		u64 flying = __atomic_load_n(&ahead_in_flight, __ATOMIC_ACQUIRE);

		if (palloc_free_bytes() + flying >= ahead)
			return;
		if (!__atomic_compare_exchange_n(&ahead_in_flight, &flying, flying + UNIT_SIZE, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;
		bool more = palloc_accept_next(ACCEPT_AHEAD);

		__atomic_sub_fetch(&ahead_in_flight, UNIT_SIZE, __ATOMIC_ACQ_REL);
		if (!more)
			return;
	}
}

void policy_boot(void (*progress)(u64 done, u64 total))
{
	if (policy == POLICY_AHEAD)
		top_up();
	else if (policy == POLICY_EAGER)
		eager(progress);
}

void policy_boot_edges(void)
{
	if (policy == POLICY_EAGER)
		palloc_accept_edges(ACCEPT_EAGER);
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
