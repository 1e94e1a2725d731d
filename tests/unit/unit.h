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

/*
 * CHECK_PANICS(stmt, "text"): stmt must panic (or call fatal) with a message containing
 * text; the test then goes on. setjmp has to live in the test's own frame, hence a macro.
 */
#include <setjmp.h>
extern jmp_buf *unit_catch_jmp(void);
void unit_catch_arm(void);
void unit_catch_no_panic(const char *stmt, const char *file, int line);
void unit_catch_check(const char *needle, const char *file, int line);
#define CHECK_PANICS(stmt, needle)                                         \
	do {                                                               \
		if (setjmp(*unit_catch_jmp()) == 0) {                      \
			unit_catch_arm();                                  \
			stmt;                                              \
			unit_catch_no_panic(#stmt, __FILE__, __LINE__);    \
		} else {                                                   \
			unit_catch_check(needle, __FILE__, __LINE__);      \
		}                                                          \
	} while (0)

/* How often the emulator model counted `name` (arch/x86/emu/model.h) in this binary. */
u64 unit_emu_count(const char *name);

/*
 * What the emulator model reported through emu_model_changed since the last reset: is
 * pa inside one of the reported ranges?
 */
struct emu_model;
void emu_model_changed(struct emu_model *m, u64 start, u64 end);
void unit_model_changes_reset(void);
bool unit_model_change_reported(u64 pa);

/* CR3 and CR4 as read_cr3(), read_cr4() and write_cr3() see them in a host build; writes counted. */
extern u64 unit_cr3, unit_cr4;
extern unsigned unit_cr3_writes;

/* Deterministic pseudo-random numbers for tests (xorshift64*). */
u64 unit_rand(void);
void unit_srand(u64 seed);

#endif
