/* SPDX-License-Identifier: MIT */
/* memaccept: workload=probe: each primitive acceptance is made of, timed many times, and a model of one unit that adds up. */
#include "arch/x86/platform.h"
#include "arch/x86/probe.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "include/exit_codes.h"
#include "kernel/memory.h"
#include "kernel/probe.h"
#include "lib/string.h"
#include "mm/latency.h"
#include "mm/accept.h"
#include "mm/page_alloc.h"
#include "mm/probe_model.h"

/* Samples kept per primitive for exact percentiles; beyond that a uniform sample (mm/latency.h). */
#define PROBE_SAMPLES 4096
/* Each round trip that needs no memory is timed this many times. */
#define PROBE_CALLS 256
/* Units the loop may fail to get (another CPU took them) before it gives up. */
#define PROBE_MISSES 16
/* The probe units written page by page (first write and rewrite of 4 KiB pages). */
#define PROBE_PAGE_WRITES(k) ((k) % 8 == 5)

static const char *const names[PR_COUNT] = {
	[PR_MAP_UNIT] = "map_unit",
	[PR_FIRST_WRITE_4K] = "first_write_4k",
	[PR_FIRST_WRITE_2M] = "first_write_2m",
	[PR_REWRITE_4K] = "rewrite_4k",
	[PR_REWRITE_2M] = "rewrite_2m",
	[PR_CLOCK] = "clock_read",
	[PR_SIM_ZERO_4K] = "sim_zero_4k",
	[PR_SIM_ZERO_2M] = "sim_zero_2m",
	[PR_TDX_ACCEPT_4K] = "tdx_accept_4k",
	[PR_TDX_ACCEPT_2M] = "tdx_accept_2m",
	[PR_TDX_ACCEPT_2M_REFUSED] = "tdx_accept_2m_refused",
	[PR_TDX_VP_INFO] = "tdx_vp_info",
	[PR_TDX_VMCALL_NOOP] = "tdx_tdvmcall_noop",
	[PR_SNP_VMGEXIT_NOOP] = "snp_vmgexit_noop",
	[PR_SNP_PSC_1] = "snp_psc_1",
	[PR_SNP_PSC_16] = "snp_psc_16",
	[PR_SNP_PSC_253] = "snp_psc_253",
	[PR_SNP_PSC_2M] = "snp_psc_2m",
	[PR_SNP_PSC_OTHER] = "snp_psc_other",
	[PR_SNP_PVALIDATE_4K] = "snp_pvalidate_4k",
	[PR_SNP_PVALIDATE_2M] = "snp_pvalidate_2m",
	[PR_SNP_PVALIDATE_2M_REFUSED] = "snp_pvalidate_2m_refused",
	[PR_SNP_EVICT_4K] = "snp_evict_4k",
	[PR_SVSM_NOOP] = "svsm_noop",
	[PR_SVSM_PVAL_1] = "svsm_pvalidate_1",
	[PR_SVSM_PVAL_MANY] = "svsm_pvalidate_many",
	[PR_SVSM_PVAL_OTHER] = "svsm_pvalidate_other",
	[PR_SVSM_PVAL_2M] = "svsm_pvalidate_2m",
	[PR_SVSM_PVAL_2M_REFUSED] = "svsm_pvalidate_2m_refused",
};

#define BIT(p) (1ULL << (p))
#define GENERIC_PRIMS (BIT(PR_MAP_UNIT) | BIT(PR_FIRST_WRITE_4K) | BIT(PR_FIRST_WRITE_2M) | \
		       BIT(PR_REWRITE_4K) | BIT(PR_REWRITE_2M) | BIT(PR_CLOCK))
/* A 2 MiB try that either succeeds or is refused, whichever the host's page size makes it. */
static const unsigned pairs[][2] = {
	{ PR_TDX_ACCEPT_2M, PR_TDX_ACCEPT_2M_REFUSED },
	{ PR_SNP_PVALIDATE_2M, PR_SNP_PVALIDATE_2M_REFUSED },
	{ PR_SVSM_PVAL_2M, PR_SVSM_PVAL_2M_REFUSED },
};

struct probe {
	struct probe_sink sink;
	const struct platform_probe *pp;
	struct latency lat[PR_COUNT];
	/* What the current unit's accept did, and the totals of the units accepted as the backend does. */
	u64 unit_calls[PR_COUNT], unit_entries[PR_COUNT];
	u64 calls[PR_COUNT], entries[PR_COUNT];
	u64 backend_units;
	unsigned k;	/* probe units so far */
	int rc;		/* the last probe unit's accept */
	u64 cur_ns;	/* what the current probe unit's primitives took together */
	struct latency unit_lat;	/* units accepted the normal way, timed whole */
	struct latency unit_prims;	/* probe units accepted as the backend does: mapping + primitives */
};

static u32 samples[PR_COUNT][PROBE_SAMPLES], unit_samples[PROBE_SAMPLES], prims_samples[PROBE_SAMPLES];
static struct probe probe;

static void sink_add(struct probe_sink *s, unsigned prim, u64 ns, u64 entries)
{
	struct probe *p = (struct probe *)s;

	if (prim >= PR_COUNT)
		return;
	latency_add(&p->lat[prim], ns);
	/* Eviction samples are per page (a 2 MiB eviction counts for its 512 pages). */
	p->cur_ns += prim == PR_SNP_EVICT_4K ? ns * entries : ns;
	p->unit_calls[prim]++;
	p->unit_entries[prim] += entries;
}

static u64 sink_count(struct probe_sink *s, unsigned prim)
{
	return prim < PR_COUNT ? ((struct probe *)s)->lat[prim].count : 0;
}

static bool generic_satisfied(struct probe *p)
{
	for (unsigned i = 0; i < PR_COUNT; i++)
		if ((GENERIC_PRIMS & BIT(i)) && p->lat[i].count < PROBE_MIN_SAMPLES)
			return false;
	return true;
}

static bool probe_satisfied(struct probe *p)
{
	return generic_satisfied(p) && p->pp->satisfied(&p->sink, PROBE_MIN_SAMPLES);
}

/* memset timed: one sample of prim. */
static void timed_write(struct probe *p, unsigned prim, u64 pa, u64 len)
{
	u64 t = tsc_now_ns();

	memset((void *)(uintptr_t)pa, 0, len);
	sink_add(&p->sink, prim, tsc_now_ns() - t, len >> PAGE_SHIFT);
}

/*
 * The accept of one probe unit, called by the accept path (kernel/memory.c) after the
 * unit is mapped, with the allocator's claim held: the platform's timed accept, then
 * (the unit is accepted, nobody has it yet) its first write and a rewrite, in zeroes,
 * so the unit reaches the free lists as an accept leaves it on TDX and sim.
 */
static int probe_accept(void *ctx, u64 start, u64 end)
{
	struct probe *p = ctx;
	bool backend = false;

	(void)end;
	p->cur_ns = 0;
	sink_add(&p->sink, PR_MAP_UNIT, memory_last_map_ns(), UNIT_SIZE >> PAGE_SHIFT);
	memset(p->unit_calls, 0, sizeof(p->unit_calls));
	memset(p->unit_entries, 0, sizeof(p->unit_entries));
	p->rc = p->pp->accept_unit(start, &p->sink, p->k, &backend);
	if (p->rc)
		return p->rc;
	if (backend) {
		latency_add(&p->unit_prims, p->cur_ns);
		p->backend_units++;
		for (unsigned i = 0; i < PR_COUNT; i++) {
			p->calls[i] += p->unit_calls[i];
			p->entries[i] += p->unit_entries[i];
		}
	}
	if (PROBE_PAGE_WRITES(p->k) && p->lat[PR_FIRST_WRITE_4K].count < PROBE_MIN_SAMPLES) {
		for (u64 a = start; a < start + UNIT_SIZE; a += PAGE_SIZE)
			timed_write(p, PR_FIRST_WRITE_4K, a, PAGE_SIZE);
		for (u64 a = start; a < start + UNIT_SIZE; a += PAGE_SIZE)
			timed_write(p, PR_REWRITE_4K, a, PAGE_SIZE);
	} else {
		timed_write(p, PR_FIRST_WRITE_2M, start, UNIT_SIZE);
		timed_write(p, PR_REWRITE_2M, start, UNIT_SIZE);
	}
	p->k++;
	return 0;
}

/* ------------------------------------------------------------------ the model */

static struct probe_q quantiles(struct probe *p, unsigned prim)
{
	struct latency *l = &p->lat[prim];

	return (struct probe_q){ { latency_percentile(l, 100), latency_percentile(l, 500),
				   latency_percentile(l, 900), l->count ? l->total_ns / l->count : 0 } };
}

/*
 * The classes whose calls cost more with more entries (PT_LINEAR), priced by their one-
 * and many-entry distributions; members: every distribution of the class.
 */
static const struct {
	const char *name;
	unsigned one, many;
	u64 many_n;
	unsigned members[4];
} linear[] = {
	{ "snp_psc_4k_requests", PR_SNP_PSC_1, PR_SNP_PSC_253, 253,
	  { PR_SNP_PSC_1, PR_SNP_PSC_16, PR_SNP_PSC_253, PR_SNP_PSC_OTHER } },
	{ "svsm_pvalidate_4k_requests", PR_SVSM_PVAL_1, PR_SVSM_PVAL_MANY, 510,
	  { PR_SVSM_PVAL_1, PR_SVSM_PVAL_MANY, PR_SVSM_PVAL_OTHER, PR_COUNT } },
};

#define MAX_TERMS (PR_COUNT + 1)

struct model {
	struct probe_term t[MAX_TERMS];
	const char *name[MAX_TERMS];
	unsigned n;
};

static bool in_linear(unsigned prim)
{
	for (unsigned c = 0; c < ARRAY_SIZE(linear); c++)
		for (unsigned j = 0; j < ARRAY_SIZE(linear[c].members); j++)
			if (linear[c].members[j] == prim)
				return true;
	return false;
}

/*
 * One unit as the backend accepts it: mapping it, plus every primitive those units made,
 * as often as they made it (exits x exit cost, pages x per-page cost; the zeroing is
 * inside the accept on TDX, and is the accept on sim). The allocator's own work (its
 * lock, the bitmap, the free lists) is not a primitive: it is part of what the measured
 * unit has and the model lacks.
 */
static void build_model(struct probe *p, struct model *m)
{
	m->n = 0;
	m->t[m->n] = (struct probe_term){ .kind = PT_CALLS, .one = quantiles(p, PR_MAP_UNIT),
					  .calls = p->backend_units, .entries = p->backend_units };
	m->name[m->n++] = names[PR_MAP_UNIT];
	for (unsigned i = 0; i < PR_COUNT; i++) {
		if (!p->calls[i] || in_linear(i))
			continue;
		m->t[m->n] = (struct probe_term){ .kind = i == PR_SNP_EVICT_4K ? PT_PER_ENTRY : PT_CALLS,
						  .one = quantiles(p, i), .calls = p->calls[i],
						  .entries = p->entries[i] };
		m->name[m->n++] = names[i];
	}
	for (unsigned c = 0; c < ARRAY_SIZE(linear); c++) {
		struct probe_term t = { .kind = PT_LINEAR, .one = quantiles(p, linear[c].one),
					.many = quantiles(p, linear[c].many),
					.many_n = p->lat[linear[c].many].count ? linear[c].many_n : 0 };

		for (unsigned j = 0; j < ARRAY_SIZE(linear[c].members); j++) {
			unsigned prim = linear[c].members[j];

			if (prim < PR_COUNT) {
				t.calls += p->calls[prim];
				t.entries += p->entries[prim];
			}
		}
		if (!t.calls)
			continue;
		m->t[m->n] = t;
		m->name[m->n++] = linear[c].name;
	}
}

/* ------------------------------------------------------------------ report */

static void ev_dist(const char *key, struct latency *l)
{
	ev_obj_begin(key);
	ev_u64("count", l->count);
	ev_u64("p10", latency_percentile(l, 100));
	ev_u64("p50", latency_percentile(l, 500));
	ev_u64("p90", latency_percentile(l, 900));
	ev_u64("p99", latency_percentile(l, 990));
	ev_u64("max", l->max_ns);
	ev_u64("mean", l->count ? l->total_ns / l->count : 0);
	ev_bool("exact", latency_exact(l));
	ev_obj_end();
}

static bool in_pair(unsigned prim, unsigned *other)
{
	for (unsigned i = 0; i < ARRAY_SIZE(pairs); i++)
		for (unsigned j = 0; j < 2; j++)
			if (pairs[i][j] == prim) {
				*other = pairs[i][1 - j];
				return true;
			}
	return false;
}

/* Why a primitive this platform has got no sample: what the host did instead. */
static const char *absent_reason(struct probe *p, unsigned prim)
{
	unsigned other;

	if (in_pair(prim, &other) && p->lat[other].count)
		return prim < other ? "the host refused every 2 MiB try: it maps private memory in 4 KiB pages"
				    : "the host took every 2 MiB try: it backs unaccepted units with 2 MiB pages";
	if (prim == PR_SNP_PSC_OTHER || prim == PR_SVSM_PVAL_OTHER)
		return "every request had one of the measured sizes";
	return "not reached: the unaccepted memory or the budget ran out first";
}

static void print_dist(const char *name, struct latency *l)
{
	kprintf("probe: %-27s %7llu  p10 %8llu  p50 %8llu  p90 %8llu  p99 %8llu  max %9llu ns\n", name,
		l->count, latency_percentile(l, 100), latency_percentile(l, 500), latency_percentile(l, 900),
		latency_percentile(l, 990), l->max_ns);
}

static const char *host_pages(struct probe *p)
{
	for (unsigned i = 0; i < ARRAY_SIZE(pairs); i++) {
		if (p->lat[pairs[i][0]].count)
			return "2M";
		if (p->lat[pairs[i][1]].count)
			return "4K";
	}
	return "n/a";
}

static void report(struct probe *p, const struct palloc_stats *st, u64 acc0, u64 unacc0, u64 nprobe,
		   u64 nnormal, u64 budget)
{
	u64 mask = GENERIC_PRIMS | p->pp->prims;
	bool complete = probe_satisfied(p) && p->unit_lat.count >= PROBE_MIN_SAMPLES;
	struct model m;
	struct probe_verdict v = { 0 }, spread = { 0 };
	struct latency *u = &p->unit_lat;
	u64 measured = u->count ? u->total_ns / u->count : 0, pred, lo, hi;

	/*
	 * The prediction: mapping plus each primitive's calls per unit times its mean. The
	 * spread: p10 to p90 of what mapping and the primitives of each probe unit accepted
	 * as the backend does took together. The measured units' median should fall inside.
	 */
	build_model(p, &m);
	pred = probe_model_ns(m.t, m.n, p->backend_units, PROBE_MEAN);
	lo = latency_percentile(&p->unit_prims, 100);
	hi = latency_percentile(&p->unit_prims, 900);
	probe_compare(measured, lo, pred, hi, &v);
	probe_compare(latency_percentile(u, 500), lo, pred, hi, &spread);
	v.within_spread = spread.within_spread;
	v.unexplained_ns = spread.unexplained_ns;

	kprintf("probe: %s, host pages %s: %llu probe units and %llu units accepted as usual, %llu MiB "
		"consumed (budget %llu MiB)\n", platform->name, host_pages(p), nprobe, nnormal,
		(st->accepted_bytes - acc0) >> 20, budget >> 20);
	kprintf("probe: %-27s %7s  (ns)\n", "primitive", "samples");
	for (unsigned i = 0; i < PR_COUNT; i++)
		if ((mask & BIT(i)) && p->lat[i].count)
			print_dist(names[i], &p->lat[i]);
	print_dist("unit (accepted as usual)", &p->unit_lat);
	for (unsigned i = 0; p->backend_units && i < m.n; i++)
		kprintf("probe: model %-27s %llu.%03llu calls, %llu.%03llu entries per unit: %llu ns\n",
			m.name[i], m.t[i].calls * 1000 / p->backend_units / 1000,
			m.t[i].calls * 1000 / p->backend_units % 1000,
			m.t[i].entries * 1000 / p->backend_units / 1000,
			m.t[i].entries * 1000 / p->backend_units % 1000,
			probe_term_ns(&m.t[i], p->backend_units, PROBE_MEAN));
	kprintf("probe: model %llu us per unit (mean; a probe unit's primitives took %llu-%llu us, p10-p90), "
		"measured %llu us (mean; median %llu us): the model is %llu.%llu%% %s; the median is %s\n",
		pred / 1000, lo / 1000, hi / 1000, measured / 1000, latency_percentile(u, 500) / 1000,
		v.diff_permille / 10, v.diff_permille % 10, v.model_below ? "below" : "above",
		v.within_spread ? "within the probe's spread" : "OUTSIDE the probe's spread");
	if (!v.within_spread)
		kprintf("probe: %llu us per unit that no primitive explains (%s)\n", v.unexplained_ns / 1000,
			latency_percentile(u, 500) > hi ? "host or allocator work the probe does not time"
						       : "the primitives cost more alone than inside a unit");

	ev_begin("probe");
	ev_str("platform", platform->name);
	ev_str("host_pages", host_pages(p));
	ev_u64("min_samples", PROBE_MIN_SAMPLES);
	ev_bool("complete", complete);
	ev_u64("budget_bytes", budget);
	ev_u64("probe_units", nprobe);
	ev_u64("measured_units", nnormal);
	ev_u64("consumed_bytes", st->accepted_bytes - acc0);
	ev_u64("accepted_before", acc0);
	ev_u64("accepted_after", st->accepted_bytes);
	ev_u64("unaccepted_before", unacc0);
	ev_u64("unaccepted_after", st->unaccepted_bytes);
	ev_obj_begin("primitives");
	for (unsigned i = 0; i < PR_COUNT; i++)
		if ((mask & BIT(i)) && p->lat[i].count)
			ev_dist(names[i], &p->lat[i]);
	ev_obj_end();
	ev_obj_begin("absent");
	for (unsigned i = 0; i < PR_COUNT; i++)
		if ((mask & BIT(i)) && !p->lat[i].count)
			ev_str(names[i], absent_reason(p, i));
	if (mask & BIT(PR_SVSM_PVAL_1))
		ev_str("snp_pvalidate", "below VMPL0 only the SVSM may run PVALIDATE: see svsm_pvalidate_*");
	ev_obj_end();
	ev_dist("unit", &p->unit_lat);
	ev_obj_begin("model");
	ev_u64("units", p->backend_units);
	ev_obj_begin("terms");
	for (unsigned i = 0; i < m.n; i++) {
		ev_obj_begin(m.name[i]);
		ev_u64("calls_per_unit_milli", p->backend_units ? m.t[i].calls * 1000 / p->backend_units : 0);
		ev_u64("entries_per_unit_milli", p->backend_units ? m.t[i].entries * 1000 / p->backend_units : 0);
		ev_u64("ns", probe_term_ns(&m.t[i], p->backend_units, PROBE_MEAN));
		ev_obj_end();
	}
	ev_obj_end();
	ev_u64("predicted_ns", pred);
	ev_dist("probe_unit", &p->unit_prims);
	ev_u64("measured_ns", measured);
	ev_u64("diff_permille", v.diff_permille);
	ev_bool("model_below", v.model_below);
	ev_bool("within_spread", v.within_spread);
	ev_u64("unexplained_ns", v.unexplained_ns);
	ev_obj_end();
	ev_end();
}

/* ------------------------------------------------------------------ the run */

int probe_run(u64 budget)
{
	const struct palloc_stats *st = palloc_stats();
	u64 acc0 = st->accepted_bytes, unacc0 = st->unaccepted_bytes, consumed = 0, nprobe = 0, nnormal = 0;
	unsigned misses = 0;
	struct probe *p = &probe;

	memset(p, 0, sizeof(*p));
	p->sink = (struct probe_sink){ sink_add, sink_count };
	p->pp = platform->probe;
	for (unsigned i = 0; i < PR_COUNT; i++)
		latency_init(&p->lat[i], samples[i], PROBE_SAMPLES);
	latency_init(&p->unit_lat, unit_samples, PROBE_SAMPLES);
	latency_init(&p->unit_prims, prims_samples, PROBE_SAMPLES);
	if (!p->pp) {
		kprintf("probe: platform %s accepts nothing: no primitive to time\n", platform->name);
		ev_begin("probe");
		ev_str("platform", platform->name);
		ev_bool("complete", false);
		ev_str("why", "this platform has no unaccepted memory and no acceptance primitives");
		ev_end();
		return EXIT_OK;
	}
	kprintf("probe: timing %s's primitives, at least %d samples each, using at most %llu MiB of "
		"unaccepted memory (%llu MiB left)\n", platform->name, PROBE_MIN_SAMPLES, budget >> 20,
		unacc0 >> 20);
	/* Every sample is two clock reads apart: how much of it the reads are themselves. */
	for (unsigned i = 0; i < PROBE_CALLS; i++) {
		u64 t = tsc_now_ns();

		sink_add(&p->sink, PR_CLOCK, tsc_now_ns() - t, 0);
	}
	p->pp->calls(&p->sink, PROBE_CALLS);
	/*
	 * Probe units and units accepted the normal way, alternating while both are wanted, so
	 * that a host that speeds up or slows down meanwhile favours neither. Each is the
	 * lowest unit still unaccepted, claimed and counted by the allocator as any accept.
	 */
	for (unsigned i = 0; consumed + UNIT_SIZE <= budget; i++) {
		bool want_probe = !probe_satisfied(p), want_normal = p->unit_lat.count < PROBE_MIN_SAMPLES;
		bool is_probe = want_probe && (!want_normal || (i & 1));
		u64 unit, got, t;

		if ((!want_probe && !want_normal) || !memory_next_unaccepted(0, &unit))
			break;
		if (is_probe)
			memory_set_probe_accept(probe_accept, p);
		t = tsc_now_ns();
		got = palloc_accept_range(unit, unit + UNIT_SIZE, ACCEPT_EXPLICIT);
		t = tsc_now_ns() - t;
		if (is_probe)
			memory_set_probe_accept(NULL, NULL);
		if (got != UNIT_SIZE || (is_probe && p->rc)) {
			if (++misses == PROBE_MISSES)
				break;
			continue;
		}
		consumed += got;
		if (is_probe) {
			nprobe++;
		} else {
			nnormal++;
			latency_add(&p->unit_lat, t);
			sink_add(&p->sink, PR_MAP_UNIT, memory_last_map_ns(), UNIT_SIZE >> PAGE_SHIFT);
		}
	}
	report(p, palloc_stats(), acc0, unacc0, nprobe, nnormal, budget);
	return EXIT_OK;
}
