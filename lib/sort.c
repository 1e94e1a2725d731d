/* SPDX-License-Identifier: MIT */
/* memaccept: heapsort, written once for the two element types the kernel sorts. */
#include "lib/sort.h"

/*
 * Heapsort suits a kernel: in place, no recursion, O(n log n) in the worst case, which
 * matters for the fuzzed memory-map code. The body is the same for every element type.
 */
#define DEFINE_HEAPSORT(name, type)                                                   \
	static void name##_sift(type *a, size_t root, size_t n)                       \
	{                                                                              \
		for (size_t child; (child = 2 * root + 1) < n; root = child) {        \
			if (child + 1 < n && a[child + 1] > a[child])                   \
				child++;                                               \
			if (a[root] >= a[child])                                       \
				return;                                                \
			type t = a[root];                                              \
			a[root] = a[child];                                            \
			a[child] = t;                                                  \
		}                                                                      \
	}                                                                              \
	void name(type *a, size_t n)                                                  \
	{                                                                              \
		for (size_t start = n / 2; start-- > 0;)                               \
			name##_sift(a, start, n);                                      \
		for (size_t end = n; end-- > 1;) {                                     \
			type t = a[0];                                                 \
			a[0] = a[end];                                                 \
			a[end] = t;                                                    \
			name##_sift(a, 0, end);                                        \
		}                                                                      \
	}

DEFINE_HEAPSORT(sort_u64, u64)
DEFINE_HEAPSORT(sort_u32, u32)
