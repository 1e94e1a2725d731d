/* SPDX-License-Identifier: MIT */
/* memaccept: latency recording: a log2 histogram plus a bounded sample set for exact percentiles. */
#ifndef MM_LATENCY_H
#define MM_LATENCY_H

#include "include/types.h"

#define LAT_BUCKETS 40		/* bucket k counts values in [2^k, 2^(k+1)) ns; bucket 0 also 0 */

struct latency {
	u64 count;
	u64 total_ns;
	u64 max_ns;
	u64 min_ns;
	u64 buckets[LAT_BUCKETS];
	/* Samples for percentiles: all of them up to `cap`, then a uniform reservoir. */
	u32 *samples;		/* ns, saturated at 2^32-1 (4.3 s) */
	u64 cap;
	u64 nsamples;
	u64 rng;
	bool sorted;		/* samples are sorted (no value added since) */
};

void latency_init(struct latency *l, u32 *samples, u64 cap);
void latency_add(struct latency *l, u64 ns);
/*
 * Percentile p in thousandths (500 = p50, 999 = p99.9), nearest-rank over the kept
 * samples; sorts them in place (call when recording is over, or between phases).
 * Exact while count <= cap; a uniform sample of all values beyond that.
 */
u64 latency_percentile(struct latency *l, unsigned permille);
/*
 * Multiply every recorded value by num/den: values recorded before the clock's
 * frequency was known are corrected once it is (kernel/clock.c). The histogram is
 * rebuilt from the samples when they are all kept, else its buckets stay as they were.
 */
void latency_rescale(struct latency *l, u64 num, u64 den);
/* Whether percentiles are exact (every value was kept). */
static inline bool latency_exact(const struct latency *l)
{
	return l->count <= l->cap;
}

#endif
