/* SPDX-License-Identifier: MIT */
/* memaccept: software acceptance: what TDX guarantees (accepted memory reads as zero), done by hand. */
#include "arch/x86/sim.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/probe.h"
#include "arch/x86/tsc.h"
#include "lib/string.h"

enum { SIM_ACCEPT, SIM_ACCEPT_PAGES };

static struct platform_counter counters[] = {
	[SIM_ACCEPT] = { "sim_accept", 0 },
	[SIM_ACCEPT_PAGES] = { "sim_accept_4k_pages", 0 },
};

static int sim_accept(u64 start, u64 end)
{
	/* Several CPUs accept at once: the counters are the only shared state here. */
	platform_count(counters, SIM_ACCEPT, 1);
	platform_count(counters, SIM_ACCEPT_PAGES, (end - start) >> PAGE_SHIFT);
	/*
	 * Test image: the page model checks that nothing is accepted twice, and marks the
	 * range accepted before the first write to it, as a platform's accept would.
	 */
	emu_observe_accept(start, end);
	/* memset (rep stosq for the bulk): writing the range is the whole cost of a sim accept. */
	memset((void *)(uintptr_t)start, 0, end - start);
	return 0;
}

/*
 * workload=probe: the unit zeroed in one memset, as sim_accept does, or (every 8th unit)
 * page by page, each timed. The counters and the page model see the same as for sim_accept.
 */
static int sim_probe_unit(u64 unit, struct probe_sink *s, unsigned k, bool *backend)
{
	*backend = k % 8 != 7;
	emu_observe_accept(unit, unit + UNIT_SIZE);
	if (*backend) {
		u64 t = tsc_now_ns();

		memset((void *)(uintptr_t)unit, 0, UNIT_SIZE);
		s->add(s, PR_SIM_ZERO_2M, tsc_now_ns() - t, UNIT_SIZE >> PAGE_SHIFT);
	} else {
		for (u64 a = unit; a < unit + UNIT_SIZE; a += PAGE_SIZE) {
			u64 t = tsc_now_ns();

			memset((void *)(uintptr_t)a, 0, PAGE_SIZE);
			s->add(s, PR_SIM_ZERO_4K, tsc_now_ns() - t, 1);
		}
	}
	platform_count(counters, SIM_ACCEPT, *backend ? 1 : UNIT_SIZE >> PAGE_SHIFT);
	platform_count(counters, SIM_ACCEPT_PAGES, UNIT_SIZE >> PAGE_SHIFT);
	return 0;
}

/* A sim accept makes no call: nothing to time without memory. */
static void sim_probe_calls(struct probe_sink *s, unsigned n)
{
	(void)s, (void)n;
}

static bool sim_probe_satisfied(struct probe_sink *s, u64 min)
{
	return s->count(s, PR_SIM_ZERO_2M) >= min && s->count(s, PR_SIM_ZERO_4K) >= min;
}

static const struct platform_probe sim_probe = {
	.calls = sim_probe_calls,
	.accept_unit = sim_probe_unit,
	.satisfied = sim_probe_satisfied,
	.prims = (1ULL << PR_SIM_ZERO_4K) | (1ULL << PR_SIM_ZERO_2M),
};

static const struct cc_platform sim = {
	.name = "sim",
	.accept = sim_accept,
	.io_out = plain_io_out,
	.io_in = plain_io_in,
	.terminate = plain_terminate,
	.counters = counters,
	.ncounters = ARRAY_SIZE(counters),
	.probe = &sim_probe,
};

const struct cc_platform *sim_platform(void)
{
	return &sim;
}
