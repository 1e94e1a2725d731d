/* SPDX-License-Identifier: MIT */
/* memaccept: self-thinning time series (pure logic, host-tested). */
#include "lib/muldiv.h"
#include "lib/string.h"
#include "mm/series.h"

void series_init(struct series *s)
{
	memset(s, 0, sizeof(*s));
	s->stride = 1;
}

void series_add(struct series *s, u64 t, u64 v)
{
	s->last_t = t;
	s->last_v = v;
	s->has_last = true;
	if (s->seen++ % s->stride)
		return;
	if (s->n == SERIES_MAX) {
		/* Keep samples 0, 2, 4, ...: what remains is every (2 * stride)-th sample. */
		for (unsigned i = 0; i < SERIES_MAX / 2; i++) {
			s->t[i] = s->t[2 * i];
			s->v[i] = s->v[2 * i];
		}
		s->n = SERIES_MAX / 2;
		s->stride *= 2;
		if ((s->seen - 1) % s->stride)
			return;
	}
	s->t[s->n] = t;
	s->v[s->n] = v;
	s->n++;
}

unsigned series_points(const struct series *s, u64 *t, u64 *v)
{
	unsigned n = s->n;

	memcpy(t, s->t, n * sizeof(u64));
	memcpy(v, s->v, n * sizeof(u64));
	if (s->has_last && (n == 0 || t[n - 1] != s->last_t || v[n - 1] != s->last_v)) {
		t[n] = s->last_t;
		v[n] = s->last_v;
		n++;
	}
	return n;
}

void series_rescale_t(struct series *s, u64 num, u64 den)
{
	if (!den || num == den)
		return;
	for (unsigned i = 0; i < s->n; i++)
		s->t[i] = mul_div_u64(s->t[i], num, den);
	s->last_t = mul_div_u64(s->last_t, num, den);
}
