/* SPDX-License-Identifier: MIT */
/* memaccept: latency histogram and percentiles (pure logic, host-tested). */
#include "mm/latency.h"
#include "lib/muldiv.h"
#include "lib/sort.h"
#include "lib/string.h"

void latency_init(struct latency *l, u32 *samples, u64 cap)
{
	memset(l, 0, sizeof(*l));
	l->samples = samples;
	l->cap = samples ? cap : 0;
	l->min_ns = UINT64_MAX;
	l->rng = 0x853c49e6748fea9bULL;
}

static unsigned log2_bucket(u64 v)
{
	unsigned k = v ? 63 - (unsigned)__builtin_clzll(v) : 0;

	return k < LAT_BUCKETS ? k : LAT_BUCKETS - 1;
}

static u64 next_rand(struct latency *l)
{
	/* xorshift64: plenty for choosing reservoir slots. */
	l->rng ^= l->rng << 13;
	l->rng ^= l->rng >> 7;
	l->rng ^= l->rng << 17;
	return l->rng;
}

void latency_add(struct latency *l, u64 ns)
{
	u32 s = ns > UINT32_MAX ? UINT32_MAX : (u32)ns;

	l->count++;
	l->total_ns += ns;
	l->max_ns = MAX(l->max_ns, ns);
	l->min_ns = MIN(l->min_ns, ns);
	l->buckets[log2_bucket(ns)]++;
	l->sorted = false;
	if (!l->cap)
		return;
	if (l->nsamples < l->cap) {
		l->samples[l->nsamples++] = s;
	} else {
		/* Reservoir sampling (Vitter's algorithm R): each value kept with p = cap/count. */
		u64 j = next_rand(l) % l->count;

		if (j < l->cap)
			l->samples[j] = s;
	}
}

u64 latency_percentile(struct latency *l, unsigned permille)
{
	if (!l->nsamples)
		return 0;
	if (!l->sorted) {
		sort_u32(l->samples, l->nsamples);
		l->sorted = true;
	}
	/* Nearest rank: the smallest value with at least p of the samples at or below it. */
	u64 rank = (permille * l->nsamples + 999) / 1000;

	if (rank == 0)
		rank = 1;
	if (permille >= 1000)
		return l->max_ns;
	return l->samples[rank - 1];
}

static u64 scale(u64 v, u64 num, u64 den)
{
	return mul_div_u64(v, num, den);
}

void latency_rescale(struct latency *l, u64 num, u64 den)
{
	if (!den || num == den || !l->count)
		return;
	l->total_ns = scale(l->total_ns, num, den);
	l->max_ns = scale(l->max_ns, num, den);
	l->min_ns = scale(l->min_ns, num, den);
	for (u64 i = 0; i < l->nsamples; i++) {
		u64 v = scale(l->samples[i], num, den);

		l->samples[i] = v > UINT32_MAX ? UINT32_MAX : (u32)v;
	}
	if (!latency_exact(l) || l->nsamples != l->count)
		return;
	memset(l->buckets, 0, sizeof(l->buckets));
	for (u64 i = 0; i < l->nsamples; i++)
		l->buckets[log2_bucket(l->samples[i])]++;
}
