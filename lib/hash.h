/* SPDX-License-Identifier: MIT */
/* memaccept: a 64-bit mixing function, for order-independent summaries of memory map ranges. */
#ifndef LIB_HASH_H
#define LIB_HASH_H

#include "include/types.h"

/* The finalizer of the SplitMix64 generator: every input bit reaches every output bit. */
static inline u64 hash_mix64(u64 x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/*
 * One memory map range. A summary is the sum of these over a set of ranges, so it does
 * not depend on the order the firmware lists them in.
 */
static inline u64 hash_range(u64 start, u64 pages, u64 attribute)
{
	return hash_mix64(start ^ hash_mix64(pages ^ hash_mix64(attribute)));
}

#endif
