/* SPDX-License-Identifier: MIT */
/* memaccept: the workloads and their `workload` events. */
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "include/panic.h"
#include "kernel/cmdline.h"
#include "kernel/conformance.h"
#include "kernel/memory.h"
#include "kernel/probe.h"
#include "kernel/smp.h"
#include "kernel/workload.h"
#include "lib/format.h"
#include "lib/muldiv.h"
#include "lib/sort.h"
#include "lib/string.h"
#include "mm/accept.h"
#include "mm/page_alloc.h"

#define ALLOC_SAMPLES (128 * 1024)
/*
 * touch:auto touches 90% of the free memory plus this much (or all unaccepted memory,
 * if less): enough to show acceptance latencies, and never more than the guest has
 * (splitting units costs a page each for metadata, so "all free memory" would not fit).
 */
#define AUTO_EXTRA (512 * MiB)
/* Blocks a mix or bandwidth step can hold at once (bandwidth: 16 GiB of 2 MiB blocks). */
#define MAX_LIVE 8192
#define BANDWIDTH_PASSES 3
/* wait:MS at most a minute: it only exists to compare the guest's clock with the host's. */
#define WAIT_MAX_MS 60000

static u32 fast_samples[ALLOC_SAMPLES], slow_samples[ALLOC_SAMPLES], all_samples[ALLOC_SAMPLES];
static u32 free_samples[ALLOC_SAMPLES];
static u64 live_addr[MAX_LIVE];

/* ------------------------------------------------------------------ parsing */

static bool parse_step(const char *s, size_t len, struct workload_step *st, char *err, size_t errlen)
{
	char buf[64];
	const char *arg;

	if (len >= sizeof(buf)) {
		format_buf(err, errlen, "workload step '%.20s...' is too long", s);
		return false;
	}
	memcpy(buf, s, len);
	buf[len] = 0;
	memset(st, 0, sizeof(*st));
	arg = buf;
	while (*arg && *arg != ':')
		arg++;
	if (*arg == ':')
		arg++;

	if (strcmp(buf, "none") == 0) {
		st->kind = WL_NONE;
		return true;
	}
	if (strcmp(buf, "probe") == 0) {
		st->kind = WL_PROBE;
		st->size = PROBE_DEFAULT_BUDGET;
		return true;
	}
	if (str_starts(buf, "probe:")) {
		st->kind = WL_PROBE;
		if (parse_size(arg, strlen(arg), &st->size) && st->size >= UNIT_SIZE)
			return true;
		format_buf(err, errlen, "workload %s: needs a size of at least 2M, like 512M", buf);
		return false;
	}
	if (strcmp(buf, "conformance") == 0) {
		st->kind = WL_CONFORMANCE;
		return true;
	}
	if (str_starts(buf, "touch:") && strcmp(arg, "auto") == 0) {
		st->kind = WL_TOUCH;
		st->size_auto = true;
		return true;
	}
	if (str_starts(buf, "touch:") || str_starts(buf, "alloc2m:") || str_starts(buf, "bandwidth:") ||
	    str_starts(buf, "ptouch:")) {
		st->kind = buf[0] == 't' ? WL_TOUCH : buf[0] == 'a' ? WL_ALLOC2M :
			   buf[0] == 'p' ? WL_PTOUCH : WL_BANDWIDTH;
		if (parse_size(arg, strlen(arg), &st->size) && st->size)
			return true;
		format_buf(err, errlen, "workload %s: needs a size like 512M", buf);
		return false;
	}
	if (str_starts(buf, "wait:")) {
		st->kind = WL_WAIT;
		if (parse_size(arg, strlen(arg), &st->ms) && st->ms && st->ms <= WAIT_MAX_MS)
			return true;
		format_buf(err, errlen, "workload %s: needs milliseconds, 1 to %d", buf, WAIT_MAX_MS);
		return false;
	}
	if (str_starts(buf, "mix:")) {
		const char *colon = arg;

		st->kind = WL_MIX;
		st->seed = 1;
		while (*colon && *colon != ':')
			colon++;
		if (!parse_size(arg, (size_t)(colon - arg), &st->ops) || !st->ops ||
		    (*colon && !parse_size(colon + 1, strlen(colon + 1), &st->seed))) {
			format_buf(err, errlen, "workload %s: expected mix:OPS or mix:OPS:SEED", buf);
			return false;
		}
		return true;
	}
	format_buf(err, errlen, "workload step '%s' is not none, touch:SIZE|auto, alloc2m:SIZE, "
		   "mix:OPS[:SEED], bandwidth:SIZE, ptouch:SIZE, wait:MS, probe[:SIZE] or conformance", buf);
	return false;
}

bool workload_parse(const char *s, struct workload_spec *w, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	for (const char *p = s;;) {
		const char *comma = p;

		while (*comma && *comma != ',')
			comma++;
		if (w->nsteps == WORKLOAD_MAX_STEPS) {
			format_buf(err, errlen, "workload=%s has more than %d steps", s, WORKLOAD_MAX_STEPS);
			return false;
		}
		if (!parse_step(p, (size_t)(comma - p), &w->steps[w->nsteps++], err, errlen))
			return false;
		if (!*comma)
			return true;
		p = comma + 1;
	}
}

/* ------------------------------------------------------------------ measurement */

/*
 * What a step changed, from counters read before and after it. Acceptance and
 * allocation counts are those of the CPUs the step runs on (its own CPU, or every CPU
 * for ptouch): other CPUs may accept meanwhile (accept_memory=background), and their
 * work is not the step's. Free memory is global.
 */
struct step {
	const char *name;
	unsigned cpu, ncpus;	/* the step runs on CPUs [cpu, cpu + ncpus) */
	u64 t0_ns;
	u64 free_before, accepted_before, calls_before, accept_ns_before, meta_before, allocs_before;
	u64 own_allocs;		/* allocations the step made itself */
	struct latency fast, slow;	/* allocation latency: served from free memory / had to accept */
	struct latency all;		/* every allocation */
};

/* The acceptance and allocation counts of the step's CPUs, summed. */
struct step_counts {
	u64 accepted, calls, ns, allocs;
};

static struct step_counts step_counts(const struct step *s)
{
	struct step_counts c = { 0 };

	for (unsigned cpu = s->cpu; cpu < s->cpu + s->ncpus; cpu++) {
		const struct palloc_cpu_stats *cs = palloc_cpu_stats(cpu);

		c.accepted += __atomic_load_n(&cs->accepted_bytes, __ATOMIC_RELAXED);
		c.calls += __atomic_load_n(&cs->accept_calls, __ATOMIC_RELAXED);
		c.ns += __atomic_load_n(&cs->accept_ns, __ATOMIC_RELAXED);
		c.allocs += palloc_cpu_allocs(cpu);
	}
	return c;
}

static void step_begin_on(struct step *s, const char *name, bool all_cpus)
{
	const struct palloc_stats *st = palloc_stats();

	memset(s, 0, sizeof(*s));
	s->name = name;
	s->cpu = all_cpus ? 0 : smp_this_cpu();
	s->ncpus = all_cpus ? smp_cpu_slots() : 1;

	struct step_counts c = step_counts(s);

	s->free_before = st->free_bytes;
	s->accepted_before = c.accepted;
	s->calls_before = c.calls;
	s->accept_ns_before = c.ns;
	s->meta_before = st->meta_bytes;
	s->allocs_before = c.allocs;
	latency_init(&s->fast, fast_samples, ALLOC_SAMPLES);
	latency_init(&s->slow, slow_samples, ALLOC_SAMPLES);
	latency_init(&s->all, all_samples, ALLOC_SAMPLES);
	s->t0_ns = tsc_now_ns();
}

/* A step that runs on the calling CPU only. */
static void step_begin(struct step *s, const char *name)
{
	step_begin_on(s, name, false);
}

/*
 * palloc_alloc, timed, filed under fast or slow by whether this CPU had to accept memory
 * for it or wait for another CPU's accept: its own counts, so that another CPU accepting
 * meanwhile (background acceptance) does not make a fast allocation look slow.
 */
static u64 timed_alloc(struct step *s, unsigned order)
{
	const struct palloc_cpu_stats *cs = palloc_cpu_stats(smp_this_cpu());
	u64 calls = cs->accept_calls, waits = cs->accept_waits, t = tsc_now_ns();
	u64 pa = palloc_alloc(order);
	u64 ns = tsc_now_ns() - t;

	if (pa) {
		bool slow = cs->accept_calls != calls || cs->accept_waits != waits;

		latency_add(slow ? &s->slow : &s->fast, ns);
		latency_add(&s->all, ns);
		s->own_allocs++;
	}
	return pa;
}

/* Quantiles (in thousandths) reported with each latency, enough to draw a CDF. */
static const u64 quantiles[] = { 10, 50, 100, 200, 300, 400, 500, 600, 700, 800, 900,
				      950, 990, 999 };

static void ev_latency(const char *key, struct latency *l)
{
	ev_obj_begin(key);
	ev_u64("count", l->count);
	ev_u64("total_ns", l->total_ns);
	ev_u64("p50_ns", latency_percentile(l, 500));
	ev_u64("p90_ns", latency_percentile(l, 900));
	ev_u64("p99_ns", latency_percentile(l, 990));
	ev_u64("p999_ns", latency_percentile(l, 999));
	ev_u64("max_ns", l->max_ns);
	ev_bool("exact", latency_exact(l));
	ev_u64_array("quantiles_permille", quantiles, ARRAY_SIZE(quantiles));
	ev_arr_begin("quantiles_ns");
	for (unsigned i = 0; i < ARRAY_SIZE(quantiles); i++)
		ev_arr_u64(latency_percentile(l, (unsigned)quantiles[i]));
	ev_arr_end();
	ev_obj_end();
}


/* Opens the step's `workload` event with the fields every step has; the caller adds and ends. */
static void step_event(struct step *s, bool ok)
{
	const struct palloc_stats *st = palloc_stats();
	struct step_counts c = step_counts(s);
	u64 accepted = c.accepted - s->accepted_before;
	u64 accept_ns = c.ns - s->accept_ns_before;

	ev_begin("workload");
	ev_str("name", s->name);
	ev_str("result", ok ? "ok" : "out_of_memory");
	ev_u64("us", (tsc_now_ns() - s->t0_ns) / 1000);
	/* When the step ended, as every other time: since efi_main. */
	ev_u64("end_us", tsc_now_ns() / 1000);
	ev_u64("free_before", s->free_before);
	ev_u64("free_after", st->free_bytes);
	ev_u64("accepted_bytes", accepted);
	ev_u64("accept_calls", c.calls - s->calls_before);
	ev_u64("accept_ns", accept_ns);
	ev_u64("accept_mib_s", rate_mib_s(accepted, accept_ns));
	ev_u64("meta_bytes_added", st->meta_bytes - s->meta_before);
	/* Pages the kernel took for itself meanwhile (page tables for newly accepted memory). */
	ev_u64("kernel_pages_added", c.allocs - s->allocs_before - s->own_allocs);
	ev_latency("alloc_all", &s->all);
	ev_latency("alloc_fast", &s->fast);
	ev_latency("alloc_accepting", &s->slow);
}

static void report_oom(const char *what, u64 done, u64 want)
{
	kprintf("workload: out of memory after %llu of %llu %s: nothing left to accept\n", done, want,
		what);
}

/* ------------------------------------------------------------------ the steps */

/* Allocate up to count blocks of order and write each whole, as a real workload would. */
static u64 alloc_and_write(struct step *s, unsigned order, u64 count)
{
	u64 done = 0;

	for (; done < count; done++) {
		u64 pa = timed_alloc(s, order);

		if (!pa)
			break;
		memset((void *)(uintptr_t)pa, 0x5a, PAGE_SIZE << order);
	}
	return done;
}

/* The event of a step that wanted count blocks of block_bytes and got done of them. */
static int end_alloc_step(struct step *s, u64 done, u64 count, u64 block_bytes)
{
	step_event(s, done == count);
	ev_u64("bytes", count * block_bytes);
	ev_u64("done_bytes", done * block_bytes);
	ev_end();
	return done == count ? EXIT_OK : EXIT_OUT_OF_MEMORY;
}

static int touch(const struct workload_step *w)
{
	const struct palloc_stats *st = palloc_stats();
	u64 size = w->size_auto ? st->free_bytes / 10 * 9 + MIN(AUTO_EXTRA, st->unaccepted_bytes)
				: w->size;
	u64 pages = ALIGN_UP(size, PAGE_SIZE) >> PAGE_SHIFT, done;
	struct step s;

	step_begin(&s, "touch");
	kprintf("workload: touch %llu MiB in 4 KiB pages (%llu MiB free, %llu MiB unaccepted)\n",
		(pages << PAGE_SHIFT) >> 20, st->free_bytes >> 20, st->unaccepted_bytes >> 20);
	done = alloc_and_write(&s, 0, pages);
	if (done < pages)
		report_oom("pages", done, pages);
	kprintf("workload: touched %llu MiB, accepted %llu MiB on the way\n",
		(done << PAGE_SHIFT) >> 20, (step_counts(&s).accepted - s.accepted_before) >> 20);
	return end_alloc_step(&s, done, pages, PAGE_SIZE);
}

static int alloc2m(const struct workload_step *w)
{
	u64 blocks = ALIGN_UP(w->size, UNIT_SIZE) >> UNIT_SHIFT, done;
	struct step s;

	step_begin(&s, "alloc2m");
	kprintf("workload: alloc2m %llu MiB in 2 MiB blocks\n", blocks * 2);
	done = alloc_and_write(&s, PALLOC_MAX_ORDER, blocks);
	if (done < blocks)
		report_oom("2 MiB blocks", done, blocks);
	return end_alloc_step(&s, done, blocks, UNIT_SIZE);
}

static u64 rng_next(u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Mostly small blocks, some large, a few whole units: like a kernel's mix. */
static unsigned random_order(u64 *rng)
{
	u64 r = rng_next(rng) % 100;

	if (r < 50)
		return 0;
	if (r < 75)
		return 1 + (unsigned)(rng_next(rng) % 3);
	if (r < 95)
		return 4 + (unsigned)(rng_next(rng) % 5);
	return PALLOC_MAX_ORDER;
}

static int mix(const struct workload_step *w)
{
	u64 rng = w->seed ? w->seed : 1, nlive = 0, live_bytes = 0, peak = 0, failures = 0;
	struct latency frees;
	struct step s;

	step_begin(&s, "mix");
	latency_init(&frees, free_samples, ALLOC_SAMPLES);
	kprintf("workload: mix of %llu random allocations and frees (seed %llu)\n", w->ops, w->seed);
	for (u64 op = 0; op < w->ops; op++) {
		bool alloc = nlive == 0 || (nlive < MAX_LIVE && rng_next(&rng) % 100 < 55);

		if (alloc) {
			unsigned order = random_order(&rng);
			u64 pa = timed_alloc(&s, order);

			if (pa) {
				/* Touch the first line: the block is really used. */
				memset((void *)(uintptr_t)pa, 0x5a, 64);
				live_addr[nlive++] = pa;
				live_bytes += PAGE_SIZE << order;
				peak = MAX(peak, live_bytes);
				continue;
			}
			failures++;
			if (!nlive)
				continue;
		}
		/* Free a random live block (swap with the last). */
		u64 i = rng_next(&rng) % nlive, t = tsc_now_ns();

		live_bytes -= PAGE_SIZE << palloc_block_order(live_addr[i]);
		palloc_free(live_addr[i]);
		latency_add(&frees, tsc_now_ns() - t);
		live_addr[i] = live_addr[--nlive];
	}
	while (nlive)
		palloc_free(live_addr[--nlive]);
	step_event(&s, true);
	ev_u64("ops", w->ops);
	ev_u64("seed", w->seed);
	ev_u64("alloc_failures", failures);
	ev_u64("peak_live_bytes", peak);
	ev_latency("free", &frees);
	ev_end();
	return EXIT_OK;
}

/* Writes n 2 MiB blocks once with `byte`; returns the nanoseconds it took. */
static u64 write_blocks(const u64 *addr, u64 n, int byte)
{
	u64 t = tsc_now_ns();

	for (u64 i = 0; i < n; i++)
		memset((void *)(uintptr_t)addr[i], byte, UNIT_SIZE);
	return tsc_now_ns() - t;
}

/*
 * Per-unit samples of the bandwidth step (ns, and the pairs' ratios in thousandths):
 * every first write of one never-written unit, and for each pair its accept of one
 * unaccepted unit, its first write and their ratio. All kept: percentiles are exact.
 */
static u32 unit_write_samples[MAX_LIVE], pair_accept_samples[MAX_LIVE],
	pair_write_samples[MAX_LIVE], pair_ratio_samples[MAX_LIVE];
static struct latency unit_write, pair_accept, pair_write, pair_ratio;
/* Spread reported with each per-unit series: tenth, median, ninetieth percentile. */
#define SPREAD_LO 100
#define SPREAD_HI 900

/* {"count","p10","p50","p90","total"} of a per-unit series (all 0 when it is empty). */
static void ev_spread(const char *key, struct latency *l)
{
	ev_obj_begin(key);
	ev_u64("count", l->count);
	ev_u64("p10", latency_percentile(l, SPREAD_LO));
	ev_u64("p50", latency_percentile(l, 500));
	ev_u64("p90", latency_percentile(l, SPREAD_HI));
	ev_u64("total", l->total_ns);
	ev_obj_end();
}

/*
 * Accepts the lowest unaccepted whole unit, timed as a lazy allocation would see it
 * (lock, bitmap, mapping, the platform's accept, free lists). 0: no whole unit was left
 * for this CPU to accept (none, or only partial units, which are not a 2 MiB sample).
 */
static u64 timed_accept_unit(void)
{
	const struct palloc_cpu_stats *cs = palloc_cpu_stats(smp_this_cpu());
	u64 before = cs->accepted_bytes, t;

	if (palloc_unaccepted_bytes() < UNIT_SIZE)
		return 0;
	t = tsc_now_ns();
	if (!palloc_accept_next(ACCEPT_EXPLICIT))
		return 0;
	t = tsc_now_ns() - t;
	return cs->accepted_bytes - before == UNIT_SIZE ? t : 0;
}

/*
 * First writes to the nfresh never-written blocks, one unit at a time, each paired with
 * an accept of one unaccepted unit right before or after it (the order alternates, so a
 * host that speeds up or slows down during the step favours neither side). A host stall
 * (the vCPU thread descheduled, fresh memory backed slowly) then lands on one sample of
 * one pair and the medians and the per-pair ratio pass over it; the totals do not.
 * Returns the pairs made; unit_write gets all nfresh first writes, paired or not.
 */
static u64 paired_first_writes(const u64 *addr, u64 nfresh, u64 *fresh_ns)
{
	latency_init(&unit_write, unit_write_samples, MAX_LIVE);
	latency_init(&pair_accept, pair_accept_samples, MAX_LIVE);
	latency_init(&pair_write, pair_write_samples, MAX_LIVE);
	latency_init(&pair_ratio, pair_ratio_samples, MAX_LIVE);
	for (u64 i = 0; i < nfresh; i++) {
		bool accept_first = (i & 1) == 0, can_pair = pair_accept.count == i;
		u64 acc = 0, w;

		if (can_pair && accept_first)
			acc = timed_accept_unit();
		w = write_blocks(&addr[i], 1, 0x11);
		if (can_pair && !accept_first)
			acc = timed_accept_unit();
		latency_add(&unit_write, w);
		if (acc) {
			latency_add(&pair_accept, acc);
			latency_add(&pair_write, w);
			/* Accept rate over first-write rate of the pair, in thousandths. */
			latency_add(&pair_ratio, w * 1000 / acc);
		}
	}
	*fresh_ns = unit_write.total_ns;
	return pair_accept.count;
}

/*
 * Was the unit at pa free when the firmware handed over the map (conventional memory),
 * so that nothing has written it since it was accepted? Only if no earlier workload step
 * wrote and freed it: the bench runs bandwidth first. Boot-services memory is free
 * memory too, but the firmware wrote it, and memory memaccept accepted was zeroed by the
 * accept: under QEMU the host already backs both, and a first write there costs what a
 * rewrite costs (0.75-0.87 ms per unit against 1.4-1.6 ms in one 1 GiB boot).
 */
static bool never_written(u64 pa)
{
	const struct mem_range *r = memmap_find(&kernel_memmap, pa);

	return r && r->kind == RANGE_USABLE && r->end >= pa + UNIT_SIZE;
}

/*
 * Takes up to want whole free units that were never written (never_written) into
 * addr[], without accepting anything; the other free units it meets are given back.
 * Returns how many it took; *skipped gets the bytes it passed over.
 */
static u64 take_never_written(u64 *addr, u64 want, u64 *skipped)
{
	static u64 other[MAX_LIVE];
	u64 n = 0, nother = 0;

	while (n < want && nother < MAX_LIVE) {
		u64 pa = palloc_alloc_accepted(PALLOC_MAX_ORDER);

		if (!pa)
			break;
		if (never_written(pa))
			addr[n++] = pa;
		else
			other[nother++] = pa;
	}
	*skipped = nother * UNIT_SIZE;
	while (nother)
		palloc_free(other[--nother]);
	return n;
}

/*
 * The two limits acceptance is compared with. First write: 2 MiB blocks of memory that
 * is accepted but was never written since (the firmware left it free and nobody touched
 * it; palloc never writes free memory), taken without accepting anything, written once:
 * under QEMU that includes the host backing each page, which a sim accept pays too.
 * While unaccepted units remain, each of those first writes is paired with the accept
 * of one unit (paired_first_writes): acceptance and its limit sampled side by side over
 * the same stretch of time. The accepted units stay free for later steps.
 * Rewrite: the never-written memory (plus whatever had to be accepted to reach SIZE)
 * written BANDWIDTH_PASSES more times, the median pass.
 */
static int bandwidth(const struct workload_step *w)
{
	u64 blocks = MIN(ALIGN_UP(w->size, UNIT_SIZE) >> UNIT_SHIFT, (u64)MAX_LIVE), n = 0, nfresh;
	u64 pass_ns[BANDWIDTH_PASSES], first_ns = 0, fresh_ns = 0, pairs, skipped;
	struct step s;

	step_begin(&s, "bandwidth");
	/* Accepted, never-written memory first: whole free units, no acceptance. */
	n = nfresh = take_never_written(live_addr, blocks, &skipped);
	s.own_allocs += n + skipped / UNIT_SIZE;
	for (; n < blocks; n++) {
		live_addr[n] = timed_alloc(&s, PALLOC_MAX_ORDER);
		if (!live_addr[n])
			break;
	}
	if (n < blocks) {
		report_oom("2 MiB blocks", n, blocks);
		while (n)
			palloc_free(live_addr[--n]);
		step_event(&s, false);
		ev_end();
		return EXIT_OUT_OF_MEMORY;
	}
	pairs = paired_first_writes(live_addr, nfresh, &fresh_ns);
	first_ns = fresh_ns + write_blocks(live_addr + nfresh, n - nfresh, 0x11);
	for (unsigned p = 0; p < BANDWIDTH_PASSES; p++)
		pass_ns[p] = write_blocks(live_addr, n, 0x22 + (int)p);
	sort_u64(pass_ns, BANDWIDTH_PASSES);
	u64 median = pass_ns[BANDWIDTH_PASSES / 2];
	u64 bytes = n * UNIT_SIZE, fresh_bytes = nfresh * UNIT_SIZE;

	while (n)
		palloc_free(live_addr[--n]);
	kprintf("workload: write bandwidth %llu MiB/s over %llu MiB of accepted memory; first write "
		"to %llu MiB never written since acceptance %llu MiB/s\n", rate_mib_s(bytes, median),
		bytes >> 20, fresh_bytes >> 20, rate_mib_s(fresh_bytes, fresh_ns));
	if (pairs) {
		u64 r = latency_percentile(&pair_ratio, 500);

		kprintf("workload: %llu paired units: median accept %llu us, median first write %llu us, "
			"accept / first write %llu.%03llu (median of the pairs)\n", pairs,
			latency_percentile(&pair_accept, 500) / 1000,
			latency_percentile(&pair_write, 500) / 1000, r / 1000, r % 1000);
	}
	step_event(&s, true);
	ev_u64("bytes", bytes);
	ev_u64("write_mib_s", rate_mib_s(bytes, median));
	ev_u64("first_pass_mib_s", rate_mib_s(bytes, first_ns));
	ev_u64("first_write_bytes", fresh_bytes);
	ev_u64("first_write_mib_s", rate_mib_s(fresh_bytes, fresh_ns));
	/* Free units passed over because the firmware or an accept had written them. */
	ev_u64("first_write_skipped_bytes", skipped);
	/* Every first write of one unit (ns), paired or not. */
	ev_spread("first_write_unit_ns", &unit_write);
	/* The pairs: their accepts, their first writes (the first `pairs` samples) and ratios. */
	ev_obj_begin("paired");
	ev_u64("pairs", pairs);
	ev_spread("accept_ns", &pair_accept);
	ev_spread("first_write_ns", &pair_write);
	ev_spread("ratio_permille", &pair_ratio);
	ev_obj_end();
	ev_u64("passes", BANDWIDTH_PASSES);
	ev_end();
	return EXIT_OK;
}

/* ptouch: what each vCPU was asked for and did. */
struct ptouch {
	u64 want[MAX_CPUS], done[MAX_CPUS], ns[MAX_CPUS];
};

static void ptouch_cpu(unsigned cpu, void *arg)
{
	struct ptouch *p = arg;
	u64 t0 = tsc_now_ns(), done = 0;

	for (; done < p->want[cpu]; done++) {
		u64 pa = palloc_alloc(0);

		if (!pa)
			break;
		memset((void *)(uintptr_t)pa, 0x5a, PAGE_SIZE);
	}
	p->done[cpu] = done;
	p->ns[cpu] = tsc_now_ns() - t0;
}

/*
 * Every started vCPU allocates and writes its share of SIZE in 4 KiB pages, all at the
 * same time: they contend for the allocator and, under lazy acceptance, accept units
 * side by side. Per-CPU figures come from each CPU's own counters.
 */
static int ptouch(const struct workload_step *w)
{
	static struct ptouch p;
	u64 pages = ALIGN_UP(w->size, PAGE_SIZE) >> PAGE_SHIFT, done = 0;
	u64 acc0[MAX_CPUS], us[MAX_CPUS], by_cpu[MAX_CPUS], acc[MAX_CPUS];
	unsigned slots = smp_cpu_slots(), n = smp_cpus_started(), k = 0;
	struct step s;

	memset(&p, 0, sizeof(p));
	for (unsigned c = 0; c < slots; c++) {
		acc0[c] = palloc_cpu_stats(c)->accepted_bytes;
		if (!smp_cpu_online(c))
			continue;
		/* Equal shares; the boot CPU takes the remainder. */
		p.want[c] = pages / n + (c == 0 ? pages % n : 0);
		k++;
	}
	step_begin_on(&s, "ptouch", true);
	kprintf("workload: ptouch %llu MiB in 4 KiB pages on %u vCPUs\n", (pages << PAGE_SHIFT) >> 20, k);
	smp_run(ptouch_cpu, &p);
	for (unsigned c = 0; c < slots; c++) {
		done += p.done[c];
		by_cpu[c] = p.done[c] << PAGE_SHIFT;
		us[c] = p.ns[c] / 1000;
		acc[c] = palloc_cpu_stats(c)->accepted_bytes - acc0[c];
	}
	if (done < pages)
		report_oom("pages", done, pages);
	s.own_allocs = done;
	step_event(&s, done == pages);
	ev_u64("bytes", pages << PAGE_SHIFT);
	ev_u64("done_bytes", done << PAGE_SHIFT);
	ev_u64("cpus", k);
	ev_u64_array("bytes_by_cpu", by_cpu, slots);
	ev_u64_array("us_by_cpu", us, slots);
	ev_u64_array("accepted_by_cpu", acc, slots);
	ev_end();
	return done == pages ? EXIT_OK : EXIT_OUT_OF_MEMORY;
}

/*
 * Busy-waits w->ms by the TSC clock between two `clock_mark` lines, printed at once: a
 * harness that timestamps the lines as they arrive sees how long the guest's
 * milliseconds take on the host's clock, so a wrong TSC frequency shows.
 */
static int wait_ms(const struct workload_step *w)
{
	struct step s;
	u64 t0, t1;

	step_begin(&s, "wait");
	ev_begin("clock_mark");
	ev_str("mark", "start");
	ev_end();
	t0 = tsc_now_ns();
	do
		t1 = tsc_now_ns();
	while (t1 - t0 < w->ms * 1000000ULL);
	ev_begin("clock_mark");
	ev_str("mark", "end");
	ev_u64("guest_us", (t1 - t0) / 1000);
	ev_end();
	step_event(&s, true);
	ev_end();
	return EXIT_OK;
}

int workload_run(const struct workload_spec *w)
{
	for (unsigned i = 0; i < w->nsteps; i++) {
		const struct workload_step *st = &w->steps[i];
		int code;

		switch (st->kind) {
		case WL_NONE:
			code = EXIT_OK;
			break;
		case WL_TOUCH:
			code = touch(st);
			break;
		case WL_ALLOC2M:
			code = alloc2m(st);
			break;
		case WL_MIX:
			code = mix(st);
			break;
		case WL_BANDWIDTH:
			code = bandwidth(st);
			break;
		case WL_PTOUCH:
			code = ptouch(st);
			break;
		case WL_CONFORMANCE:
			code = conformance_run();
			break;
		case WL_WAIT:
			code = wait_ms(st);
			break;
		case WL_PROBE:
			code = probe_run(st->size);
			break;
		default:
			panic("workload_run: unknown workload kind %u", st->kind);
		}
		if (code != EXIT_OK)
			return code;
	}
	return EXIT_OK;
}
