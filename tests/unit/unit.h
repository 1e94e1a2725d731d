/* SPDX-License-Identifier: MIT */
/* memaccept: a tiny host unit-test harness (each test file is its own binary, built with sanitizers). */
#ifndef TESTS_UNIT_UNIT_H
#define TESTS_UNIT_UNIT_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "include/types.h"

typedef void (*unit_fn)(void);
void unit_register(const char *name, unit_fn fn);
/* Records a failed check in the running test; returns cond. */
bool unit_check(bool cond, const char *file, int line, const char *expr);
bool unit_check_eq(u64 a, u64 b, const char *file, int line, const char *ea, const char *eb);

#define TEST(name)                                                              \
	static void name(void);                                                 \
	__attribute__((constructor)) static void unit_register_##name(void)    \
	{                                                                       \
		unit_register(#name, name);                                     \
	}                                                                       \
	static void name(void)

#define EXPECT(cond) unit_check((cond), __FILE__, __LINE__, #cond)
#define EXPECT_EQ(a, b) unit_check_eq((u64)(a), (u64)(b), __FILE__, __LINE__, #a, #b)
/* Stop the current test when a check fails (later checks would only add noise). */
#define ASSERT(cond)                      \
	do {                              \
		if (!EXPECT(cond))        \
			return;           \
	} while (0)
#define ASSERT_EQ(a, b)                   \
	do {                              \
		if (!EXPECT_EQ(a, b))     \
			return;           \
	} while (0)

/* Deterministic pseudo-random numbers for tests (xorshift64*). */
u64 unit_rand(void);
void unit_srand(u64 seed);

#endif
