/* SPDX-License-Identifier: MIT */
/* memaccept: a bounded time series (time, value) that thins itself out as it grows. */
#ifndef MM_SERIES_H
#define MM_SERIES_H

#include "include/types.h"

#define SERIES_MAX 128

/*
 * Keeps every stride-th sample; when full, drops every other kept sample and doubles
 * the stride, so any run length fits in SERIES_MAX points spread evenly over the count
 * of samples. The newest sample is always kept as `last`.
 */
struct series {
	u64 t[SERIES_MAX], v[SERIES_MAX];
	unsigned n;
	u64 stride, seen;
	u64 last_t, last_v;
	bool has_last;
};

void series_init(struct series *s);
void series_add(struct series *s, u64 t, u64 v);
/* Multiply every time by num/den (see latency_rescale). */
void series_rescale_t(struct series *s, u64 num, u64 den);
/* Points in order, the newest included: returns the count written (<= SERIES_MAX + 1). */
unsigned series_points(const struct series *s, u64 *t, u64 *v);

#endif
