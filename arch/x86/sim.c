/* SPDX-License-Identifier: MIT */
/* memaccept: software acceptance: what TDX guarantees (accepted memory reads as zero), done by hand. */
#include "arch/x86/sim.h"
#include "arch/x86/emu_hooks.h"
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
	/* memset (rep stosq for the bulk): writing the range is the whole cost of a sim accept. */
	memset((void *)(uintptr_t)start, 0, end - start);
	/* Test image: the page model checks that nothing is accepted twice. */
	emu_observe_accept(start, end);
	return 0;
}

static const struct cc_platform sim = {
	.name = "sim",
	.accept = sim_accept,
	.io_out = plain_io_out,
	.io_in = plain_io_in,
	.terminate = plain_terminate,
	.counters = counters,
	.ncounters = ARRAY_SIZE(counters),
};

const struct cc_platform *sim_platform(void)
{
	return &sim;
}
