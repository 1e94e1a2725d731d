/* SPDX-License-Identifier: MIT */
/* memaccept: bit-counting helpers that need no POPCNT instruction (kernel code targets plain x86-64). */
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

#endif
