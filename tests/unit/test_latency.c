/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of mm/latency.c: log2 histogram, exact and reservoir-sampled percentiles. */
#include <string.h>
#include "mm/latency.h"
#include "tests/unit/unit.h"

#define CAP 1000

static u32 samples[CAP];
static struct latency lat;

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Nearest rank, written out as its definition: the smallest value such that at least
 * permille/1000 of all values are at or below it.
 */
static u64 ref_percentile(const u64 *sorted, u64 n, unsigned permille)
{
	for (u64 i = 0; i < n; i++)
		if ((i + 1) * 1000 >= (u64)permille * n)
			return sorted[i];
	return sorted[n - 1];
}

/* The bucket of v by repeated halving: bucket k holds [2^k, 2^(k+1)), 0 and 1 in bucket 0. */
static unsigned ref_bucket(u64 v)
{
	unsigned k = 0;

	while (v > 1) {
		v >>= 1;
		k++;
	}
	return k < LAT_BUCKETS ? k : LAT_BUCKETS - 1;
}

/* Counters and histogram against the values added (all of them, in any order). */
static bool check_aggregates(const u64 *v, u64 n)
{
	u64 total = 0, mn = UINT64_MAX, mx = 0, buckets[LAT_BUCKETS] = { 0 };
	bool ok = true;

	for (u64 i = 0; i < n; i++) {
		total += v[i];
		mn = MIN(mn, v[i]);
		mx = MAX(mx, v[i]);
		buckets[ref_bucket(v[i])]++;
	}
	ok &= EXPECT_EQ(lat.count, n);
	ok &= EXPECT_EQ(lat.total_ns, total);
	ok &= EXPECT_EQ(lat.min_ns, mn);
	ok &= EXPECT_EQ(lat.max_ns, mx);
	for (unsigned k = 0; k < LAT_BUCKETS; k++)
		ok &= EXPECT_EQ(lat.buckets[k], buckets[k]);
	return ok;
}

/* A value of 0..32 random bits: spread over many buckets, none saturated. */
static u64 random_value(void)
{
	unsigned bits = unit_rand() % 33;

	return bits ? unit_rand() >> (64 - bits) : 0;
}

TEST(latency_percentiles_exact_below_cap)
{
	static const u64 counts[] = { 1, 2, 3, 7, 10, 11, 100, 999, CAP };
	static u64 v[CAP], sorted[CAP];

	unit_srand(42);
	for (unsigned c = 0; c < ARRAY_SIZE(counts); c++) {
		u64 n = counts[c];

		latency_init(&lat, samples, CAP);
		for (u64 i = 0; i < n; i++) {
			v[i] = random_value();
			latency_add(&lat, v[i]);
			/* Asking in the middle sorts the samples; later values must still count. */
			if (i == n / 2)
				latency_percentile(&lat, 500);
		}
		memcpy(sorted, v, n * sizeof(u64));
		qsort(sorted, n, sizeof(u64), cmp_u64);
		ASSERT(check_aggregates(v, n));
		ASSERT(EXPECT(latency_exact(&lat)));
		for (unsigned p = 0; p <= 1000; p++)
			if (!EXPECT_EQ(latency_percentile(&lat, p), ref_percentile(sorted, n, p))) {
				printf("  n = %llu, permille %u\n", n, p);
				return;
			}
		/* Beyond 100%: the maximum. */
		EXPECT_EQ(latency_percentile(&lat, 5000), sorted[n - 1]);
	}
}

TEST(latency_small_counts_by_hand)
{
	latency_init(&lat, samples, CAP);
	EXPECT_EQ(latency_percentile(&lat, 500), 0);	/* nothing recorded */
	EXPECT_EQ(lat.count, 0);
	for (u64 v = 10; v >= 1; v--)
		latency_add(&lat, v * 100);
	/* 100..1000: p50 is the 5th value, p51 the 6th, p99 and p100 the 10th, p0 the 1st. */
	EXPECT_EQ(latency_percentile(&lat, 500), 500);
	EXPECT_EQ(latency_percentile(&lat, 510), 600);
	EXPECT_EQ(latency_percentile(&lat, 990), 1000);
	EXPECT_EQ(latency_percentile(&lat, 1000), 1000);
	EXPECT_EQ(latency_percentile(&lat, 0), 100);
	EXPECT_EQ(latency_percentile(&lat, 100), 100);
	EXPECT_EQ(latency_percentile(&lat, 101), 200);
	EXPECT_EQ(lat.total_ns, 5500);
	EXPECT_EQ(lat.min_ns, 100);
	EXPECT_EQ(lat.max_ns, 1000);
}

/* Without sample storage: histogram and counters only, percentiles report 0. */
TEST(latency_without_samples)
{
	latency_init(&lat, NULL, CAP);
	EXPECT_EQ(lat.cap, 0);
	EXPECT(latency_exact(&lat));
	latency_add(&lat, 300);
	latency_add(&lat, 5);
	EXPECT(!latency_exact(&lat));
	EXPECT_EQ(latency_percentile(&lat, 500), 0);
	EXPECT_EQ(lat.count, 2);
	EXPECT_EQ(lat.total_ns, 305);
	EXPECT_EQ(lat.buckets[8], 1);
	EXPECT_EQ(lat.buckets[2], 1);
}

/* Beyond the cap: counters exact, percentiles from a uniform reservoir of CAP values. */
TEST(latency_reservoir_uniform_distribution)
{
	const u64 n = 200000, range = 1000000;
	static u64 v[200000];

	unit_srand(7);
	latency_init(&lat, samples, CAP);
	for (u64 i = 0; i < n; i++) {
		v[i] = unit_rand() % range;
		latency_add(&lat, v[i]);
	}
	ASSERT(check_aggregates(v, n));
	EXPECT_EQ(lat.nsamples, CAP);
	EXPECT(!latency_exact(&lat));
	/* Standard error of a sample quantile from 1000 values is under 1.6%; allow 5%. */
	for (unsigned p = 100; p <= 900; p += 100) {
		u64 got = latency_percentile(&lat, p), want = range / 1000 * p;

		if (!EXPECT(got + range / 20 >= want && got <= want + range / 20))
			printf("  permille %u: %llu, expected about %llu\n", p, got, want);
	}
	EXPECT_EQ(latency_percentile(&lat, 1000), lat.max_ns);
}

/*
 * Values in increasing order: a reservoir that kept the first values, or favoured the
 * latest, would put the median far from the middle.
 */
TEST(latency_reservoir_is_not_biased_by_order)
{
	const u64 n = 100000;
	u64 sum = 0;

	latency_init(&lat, samples, CAP);
	for (u64 i = 0; i < n; i++)
		latency_add(&lat, i);
	EXPECT_EQ(lat.count, n);
	EXPECT_EQ(lat.total_ns, n * (n - 1) / 2);
	EXPECT_EQ(lat.min_ns, 0);
	EXPECT_EQ(lat.max_ns, n - 1);
	for (u64 i = 0; i < lat.nsamples; i++)
		sum += samples[i];
	EXPECT(sum / CAP > n / 2 - n / 20 && sum / CAP < n / 2 + n / 20);
	for (unsigned p = 100; p <= 900; p += 400) {
		u64 got = latency_percentile(&lat, p), want = n / 1000 * p;

		if (!EXPECT(got + n / 20 >= want && got <= want + n / 20))
			printf("  permille %u: %llu, expected about %llu\n", p, got, want);
	}
}

/* A known two-valued distribution: 99% fast, 1% slow accepts. */
TEST(latency_reservoir_keeps_the_tail)
{
	const u64 n = 100000;

	unit_srand(11);
	latency_init(&lat, samples, CAP);
	for (u64 i = 0; i < n; i++)
		latency_add(&lat, unit_rand() % 100 ? 100 : 1000000);
	EXPECT_EQ(lat.buckets[6] + lat.buckets[19], n);
	EXPECT(lat.buckets[19] > n / 200 && lat.buckets[19] < n / 50);
	EXPECT_EQ(latency_percentile(&lat, 500), 100);
	EXPECT_EQ(latency_percentile(&lat, 950), 100);
	EXPECT_EQ(latency_percentile(&lat, 999), 1000000);
	EXPECT_EQ(latency_percentile(&lat, 1000), 1000000);
}

/* Bucket k holds [2^k, 2^(k+1)); 0 and 1 go to bucket 0; everything from 2^39 to the last. */
TEST(latency_log2_bucket_boundaries)
{
	struct {
		u64 v;
		unsigned bucket;
	} cases[] = {
		{ 0, 0 }, { 1, 0 }, { 2, 1 }, { 3, 1 }, { 4, 2 }, { 1023, 9 }, { 1024, 10 },
		{ (1ULL << 38) - 1, 37 }, { 1ULL << 38, 38 }, { (1ULL << 39) - 1, 38 },
		{ 1ULL << 39, 39 }, { 1ULL << 40, 39 }, { 1ULL << 63, 39 }, { UINT64_MAX, 39 },
	};

	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
		latency_init(&lat, samples, CAP);
		latency_add(&lat, cases[i].v);
		for (unsigned k = 0; k < LAT_BUCKETS; k++)
			if (!EXPECT_EQ(lat.buckets[k], k == cases[i].bucket))
				printf("  value %llu: bucket %u\n", cases[i].v, k);
	}
	for (unsigned k = 1; k < LAT_BUCKETS; k++) {
		latency_init(&lat, samples, CAP);
		latency_add(&lat, (1ULL << k) - 1);
		latency_add(&lat, 1ULL << k);
		EXPECT_EQ(lat.buckets[k - 1], 1);
		EXPECT_EQ(lat.buckets[k], 1);
	}
}

/* Samples saturate at 2^32-1 ns; the maximum, the total and the histogram do not. */
TEST(latency_saturates_huge_values)
{
	latency_init(&lat, samples, CAP);
	latency_add(&lat, 1ULL << 33);
	EXPECT_EQ(samples[0], UINT32_MAX);
	EXPECT_EQ(latency_percentile(&lat, 500), UINT32_MAX);
	EXPECT_EQ(latency_percentile(&lat, 1000), 1ULL << 33);
	EXPECT_EQ(lat.max_ns, 1ULL << 33);
	EXPECT_EQ(lat.total_ns, 1ULL << 33);
	EXPECT_EQ(lat.buckets[33], 1);
	latency_add(&lat, UINT32_MAX);
	latency_add(&lat, (u64)UINT32_MAX + 1);
	latency_add(&lat, 7);
	EXPECT_EQ(latency_percentile(&lat, 250), 7);
	EXPECT_EQ(latency_percentile(&lat, 500), UINT32_MAX);
	EXPECT_EQ(latency_percentile(&lat, 750), UINT32_MAX);
	EXPECT_EQ(lat.total_ns, (1ULL << 33) + 2 * (u64)UINT32_MAX + 1 + 7);
	latency_add(&lat, UINT64_MAX);
	EXPECT_EQ(lat.max_ns, UINT64_MAX);
	EXPECT_EQ(lat.min_ns, 7);
	EXPECT_EQ(lat.buckets[LAT_BUCKETS - 1], 1);
	EXPECT_EQ(latency_percentile(&lat, 1000), UINT64_MAX);
	EXPECT_EQ(latency_percentile(&lat, 999), UINT32_MAX);
}
