/* SPDX-License-Identifier: MIT */
/* memaccept: the probe's model of one unit's acceptance, from its primitives' times (pure logic, host-tested). */
#ifndef MM_PROBE_MODEL_H
#define MM_PROBE_MODEL_H

#include "include/types.h"

/*
 * One primitive's distribution as the model reads it, in ns: three quantiles and the
 * mean. A unit's time is a sum of many calls, so its expectation is the calls times
 * their mean, whatever the tail; the quantiles show how the terms alone would spread.
 */
struct probe_q {
	u64 q[4];	/* PROBE_Q10, PROBE_Q50, PROBE_Q90, PROBE_MEAN */
};
#define PROBE_Q10 0
#define PROBE_Q50 1
#define PROBE_Q90 2
#define PROBE_MEAN 3

/*
 * One term of a unit's cost: what the units accepted exactly as the backend accepts
 * (`units` of them) did in total, priced by a primitive's distribution.
 *   PT_CALLS      calls x one call's time (an exit, a TDCALL, a PVALIDATE)
 *   PT_PER_ENTRY  entries x the time per entry (samples are ns per page)
 *   PT_LINEAR     calls whose time grows with their entries (a PSC exit, an SVSM
 *                 PVALIDATE request): a call of one entry costs `one`, a call of
 *                 many_n entries `many`, so each further entry (many - one) / (many_n - 1),
 *                 never below 0; many_n <= 1 (no such distribution): every entry costs `one`.
 */
enum probe_term_kind { PT_CALLS, PT_PER_ENTRY, PT_LINEAR };

struct probe_term {
	u32 kind;
	struct probe_q one, many;
	u64 many_n;
	u64 calls, entries;
};

/* The term's time per unit at q (a quantile or the mean), rounded down; 0 when units is 0. */
u64 probe_term_ns(const struct probe_term *t, u64 units, unsigned q);
/* The sum of n terms per unit at q. */
u64 probe_model_ns(const struct probe_term *t, unsigned n, u64 units, unsigned q);

/*
 * Measured (units accepted the normal way) against the model's prediction `mid`: the
 * difference in thousandths of the measured time and which side the model is on; and
 * whether the measurement lies inside the probe's own spread [lo, hi] (the p10 and p90
 * of what the primitives of each probe unit took together); if not, how far outside:
 * the time no primitive explains.
 */
struct probe_verdict {
	u64 diff_permille;
	bool model_below;
	bool within_spread;
	u64 unexplained_ns;
};
void probe_compare(u64 measured, u64 lo, u64 mid, u64 hi, struct probe_verdict *v);

#endif
