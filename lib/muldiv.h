/* SPDX-License-Identifier: MIT */
/* memaccept: a * b / c with a 128-bit intermediate, without libgcc (the kernel does not link it). */
#ifndef LIB_MULDIV_H
#define LIB_MULDIV_H

#include "include/types.h"

/*
 * MUL leaves the 128-bit product in RDX:RAX and DIV divides it by c (Intel SDM vol. 2,
 * MUL and DIV); DIV faults when the quotient needs more than 64 bits, which is exactly
 * when the high half is at least c: then, and for c = 0, the result saturates.
 */
static inline u64 mul_div_u64(u64 a, u64 b, u64 c)
{
	u64 lo, hi, q, r;

	if (!c)
		return UINT64_MAX;
	__asm__("mulq %3" : "=a"(lo), "=d"(hi) : "a"(a), "rm"(b) : "cc");
	if (hi >= c)
		return UINT64_MAX;
	__asm__("divq %4" : "=a"(q), "=d"(r) : "a"(lo), "d"(hi), "rm"(c) : "cc");
	(void)r;
	return q;
}

/*
 * MiB per second for bytes in ns nanoseconds, 0 for no time. bytes * 10^9 needs the
 * 128-bit intermediate from 18.4 GB on (2^64 / 10^9): a 64-bit product wraps there.
 */
static inline u64 rate_mib_s(u64 bytes, u64 ns)
{
	return ns ? mul_div_u64(bytes, 1000000000ULL, ns) >> 20 : 0;
}

#endif
