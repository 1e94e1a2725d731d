/* SPDX-License-Identifier: MIT */
/* memaccept: the probe's model arithmetic (pure logic, host-tested: tests/unit/test_probe_model.c). */
#include "mm/probe_model.h"
#include "lib/muldiv.h"

u64 probe_term_ns(const struct probe_term *t, u64 units, unsigned q)
{
	u64 one, total;

	if (!units || q > PROBE_MEAN)
		return 0;
	one = t->one.q[q];
	switch (t->kind) {
	case PT_CALLS:
		total = t->calls * one;
		break;
	case PT_PER_ENTRY:
		total = t->entries * one;
		break;
	case PT_LINEAR: {
		u64 extra = t->entries > t->calls ? t->entries - t->calls : 0;

		total = t->calls * one;
		if (t->many_n <= 1)
			total += extra * one;
		else if (t->many.q[q] > one)
			total += mul_div_u64(extra, t->many.q[q] - one, t->many_n - 1);
		break;
	}
	default:
		return 0;
	}
	return total / units;
}

u64 probe_model_ns(const struct probe_term *t, unsigned n, u64 units, unsigned q)
{
	u64 sum = 0;

	for (unsigned i = 0; i < n; i++)
		sum += probe_term_ns(&t[i], units, q);
	return sum;
}

void probe_compare(u64 measured, u64 lo, u64 mid, u64 hi, struct probe_verdict *v)
{
	u64 diff = measured > mid ? measured - mid : mid - measured;

	v->diff_permille = measured ? mul_div_u64(diff, 1000, measured) : 0;
	v->model_below = mid < measured;
	v->within_spread = lo <= measured && measured <= hi;
	v->unexplained_ns = measured > hi ? measured - hi : measured < lo ? lo - measured : 0;
}
