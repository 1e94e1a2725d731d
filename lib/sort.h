/* SPDX-License-Identifier: MIT */
/* memaccept: in-place heapsort of integer arrays (O(n log n), no recursion, no allocation). */
#ifndef LIB_SORT_H
#define LIB_SORT_H

#include "include/types.h"

void sort_u64(u64 *a, size_t n);
void sort_u32(u32 *a, size_t n);

#endif
