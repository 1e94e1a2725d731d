/* SPDX-License-Identifier: MIT */
/* memaccept: helpers for arrays of u64 bit words (kernel code targets plain x86-64: no POPCNT). */
#ifndef LIB_BITS_H
#define LIB_BITS_H

#include "include/types.h"

/* Without -mpopcnt, __builtin_popcountll becomes a libgcc call, which the kernel does not link. */
static inline u64 popcount64(u64 v)
{
	v = v - ((v >> 1) & 0x5555555555555555ULL);
	v = (v & 0x3333333333333333ULL) + ((v >> 2) & 0x3333333333333333ULL);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (v * 0x0101010101010101ULL) >> 56;
}

static inline void bits_set(u64 *w, u64 i)
{
	w[i / 64] |= 1ULL << (i % 64);
}

static inline void bits_clear(u64 *w, u64 i)
{
	w[i / 64] &= ~(1ULL << (i % 64));
}

static inline bool bits_test(const u64 *w, u64 i)
{
	return w[i / 64] >> (i % 64) & 1;
}

/* The index of the first set bit at or after from in bits [0, nbits) of w, or nbits if none. */
static inline u64 bits_find_next(const u64 *w, u64 nbits, u64 from)
{
	for (u64 i = from / 64; from < nbits; i++, from = i * 64) {
		u64 v = w[i] & (~0ULL << (from % 64));

		if (v) {
			u64 found = i * 64 + (u64)__builtin_ctzll(v);

			return found < nbits ? found : nbits;
		}
	}
	return nbits;
}

#endif
