/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of mm/probe_model.c: a unit's predicted cost from the probe's primitives, and the verdict. */
#include "mm/probe_model.h"
#include "tests/unit/unit.h"

static struct probe_q q3(u64 a, u64 b, u64 c)
{
	return (struct probe_q){ { a, b, c, b } };
}

/* TDX on a 4 KiB host, two units: each one refused 2 MiB try and 512 page accepts. */
TEST(probe_model_calls_per_unit)
{
	struct probe_term t[2] = {
		{ .kind = PT_CALLS, .one = q3(900, 1000, 1500), .calls = 2, .entries = 2 },
		{ .kind = PT_CALLS, .one = q3(40, 50, 70), .calls = 1024, .entries = 1024 },
	};

	EXPECT_EQ(probe_term_ns(&t[0], 2, PROBE_Q50), 1000);
	EXPECT_EQ(probe_term_ns(&t[1], 2, PROBE_Q50), 512 * 50);
	EXPECT_EQ(probe_model_ns(t, 2, 2, PROBE_Q10), 900 + 512 * 40);
	EXPECT_EQ(probe_model_ns(t, 2, 2, PROBE_Q50), 1000 + 512 * 50);
	EXPECT_EQ(probe_model_ns(t, 2, 2, PROBE_Q90), 1500 + 512 * 70);
	/* No unit counted, or a quantile that does not exist: nothing. */
	EXPECT_EQ(probe_model_ns(t, 2, 0, PROBE_Q50), 0);
	EXPECT_EQ(probe_term_ns(&t[0], 2, 4), 0);
	/* The mean prices a sum: a heavy tail shows in it, not in the median. */
	t[1].one.q[PROBE_MEAN] = 90;
	EXPECT_EQ(probe_model_ns(t, 2, 2, PROBE_MEAN), 1000 + 512 * 90);
}

/* Per-entry samples (ns per page) count each page, not each call. */
TEST(probe_model_per_entry)
{
	struct probe_term t = { .kind = PT_PER_ENTRY, .one = q3(2, 3, 4), .calls = 3, .entries = 3 * 512 };

	EXPECT_EQ(probe_term_ns(&t, 3, PROBE_Q50), 512 * 3);
	EXPECT_EQ(probe_term_ns(&t, 3, PROBE_Q90), 512 * 4);
}

/*
 * A request of n entries costs one + (n - 1) * (many - one) / (many_n - 1): an SVSM
 * PVALIDATE of 510 entries and one of 2, as the backend sends them for a 4 KiB unit.
 */
TEST(probe_model_linear)
{
	struct probe_term t = { .kind = PT_LINEAR, .one = q3(100, 1000, 2000), .many = q3(100, 510000, 2000),
				.many_n = 510, .calls = 2, .entries = 512 };

	/* 2 calls: 2 * 1000 + (512 - 2) * (510000 - 1000) / 509 = 2000 + 510 * 1000. */
	EXPECT_EQ(probe_term_ns(&t, 1, PROBE_Q50), 2000 + 510 * 1000);
	/* A request of many entries no dearer than one: entries cost nothing beyond the calls. */
	EXPECT_EQ(probe_term_ns(&t, 1, PROBE_Q10), 200);
	EXPECT_EQ(probe_term_ns(&t, 1, PROBE_Q90), 4000);
	/* No distribution of many entries: every entry priced as a call of one. */
	t.many_n = 0;
	EXPECT_EQ(probe_term_ns(&t, 1, PROBE_Q50), 512 * 1000);
	/* Fewer entries than calls (cannot happen): never negative. */
	t.many_n = 510, t.entries = 1;
	EXPECT_EQ(probe_term_ns(&t, 1, PROBE_Q50), 2000);
	/* Rounded down per unit: 3 calls of 1000 over 2 units. */
	struct probe_term u = { .kind = PT_CALLS, .one = q3(1, 1000, 1), .calls = 3 };

	EXPECT_EQ(probe_term_ns(&u, 2, PROBE_Q50), 1500);
	u.calls = 1, u.one = q3(1, 3, 1);
	EXPECT_EQ(probe_term_ns(&u, 2, PROBE_Q50), 1);
}

TEST(probe_compare_verdicts)
{
	struct probe_verdict v;

	/* Measured 1000, model 800 (600..1100): 20% below, inside the spread. */
	probe_compare(1000, 600, 800, 1100, &v);
	EXPECT_EQ(v.diff_permille, 200);
	EXPECT(v.model_below);
	EXPECT(v.within_spread);
	EXPECT_EQ(v.unexplained_ns, 0);
	/* Measured above the model's p90: the excess is what no primitive explains. */
	probe_compare(2000, 600, 800, 1100, &v);
	EXPECT_EQ(v.diff_permille, 600);
	EXPECT(!v.within_spread);
	EXPECT_EQ(v.unexplained_ns, 900);
	/* Below the model's p10: the model prices something the unit did not pay. */
	probe_compare(500, 600, 800, 1100, &v);
	EXPECT(!v.model_below);
	EXPECT_EQ(v.diff_permille, 600);
	EXPECT_EQ(v.unexplained_ns, 100);
	/* The edges of the spread are inside it; nothing measured: no ratio. */
	probe_compare(1100, 600, 800, 1100, &v);
	EXPECT(v.within_spread);
	probe_compare(0, 0, 0, 0, &v);
	EXPECT_EQ(v.diff_permille, 0);
	EXPECT(v.within_spread);
}
