/* SPDX-License-Identifier: MIT */
/* memaccept: the harness: runs every registered test, prints "ok NAME" or "FAIL NAME", then a count. */
#include <setjmp.h>
#include <stdarg.h>
#include <string.h>
#include "arch/x86/cpu.h"
#include "include/panic.h"
#include "tests/unit/unit.h"

#define MAX_TESTS 256

static struct {
	const char *name;
	unit_fn fn;
} tests[MAX_TESTS];
static int ntests;
static int failures_in_test;
static const char *current;
static u64 rng = 0x9e3779b97f4a7c15ULL;

/* panic() and fatal() from kernel code land here: the test fails, the run goes on. */
static jmp_buf panic_jmp;
static bool panic_armed;
char unit_last_panic[512];

void unit_register(const char *name, unit_fn fn)
{
	if (ntests == MAX_TESTS) {
		fprintf(stderr, "unit: too many tests\n");
		exit(2);
	}
	tests[ntests].name = name;
	tests[ntests].fn = fn;
	ntests++;
}

bool unit_check(bool cond, const char *file, int line, const char *expr)
{
	if (!cond) {
		failures_in_test++;
		printf("  check failed in %s at %s:%d: %s\n", current, file, line, expr);
	}
	return cond;
}

bool unit_check_eq(u64 a, u64 b, const char *file, int line, const char *ea, const char *eb)
{
	if (a != b) {
		failures_in_test++;
		printf("  check failed in %s at %s:%d: %s == %s (0x%llx != 0x%llx, %llu != %llu)\n",
		       current, file, line, ea, eb, a, b, a, b);
	}
	return a == b;
}

/* The emulator model's named counters (arch/x86/emu/model.h), kept for the tests to read. */
static struct {
	const char *name;
	u64 count;
} emu_counters[64];

void emu_count(const char *name)
{
	for (unsigned i = 0; i < ARRAY_SIZE(emu_counters); i++) {
		if (!emu_counters[i].name)
			emu_counters[i].name = name;
		if (strcmp(emu_counters[i].name, name) == 0) {
			emu_counters[i].count++;
			return;
		}
	}
}

u64 unit_emu_count(const char *name)
{
	for (unsigned i = 0; i < ARRAY_SIZE(emu_counters) && emu_counters[i].name; i++)
		if (strcmp(emu_counters[i].name, name) == 0)
			return emu_counters[i].count;
	return 0;
}

/* emu_model_changed (arch/x86/emu/model.h): the ranges the model reported, kept for the tests. */
static struct {
	u64 start, end;
} model_changes[1 << 14];
static unsigned nmodel_changes;
static bool model_changes_overflowed;

void emu_model_changed(struct emu_model *m, u64 start, u64 end)
{
	(void)m;
	if (nmodel_changes == ARRAY_SIZE(model_changes)) {
		model_changes_overflowed = true;
		return;
	}
	model_changes[nmodel_changes].start = start;
	model_changes[nmodel_changes++].end = end;
}

void unit_model_changes_reset(void)
{
	nmodel_changes = 0;
	model_changes_overflowed = false;
}

bool unit_model_change_reported(u64 pa)
{
	if (model_changes_overflowed)
		return true;	/* cannot tell: the caller asked too much between resets */
	for (unsigned i = 0; i < nmodel_changes; i++)
		if (pa >= model_changes[i].start && pa < model_changes[i].end)
			return true;
	return false;
}

/* The control registers of arch/x86/cpu.h in a host build: plain memory the tests read and set. */
u64 unit_cr3, unit_cr4;
unsigned unit_cr3_writes;

u64 read_cr3(void)
{
	return unit_cr3;
}

u64 read_cr4(void)
{
	return unit_cr4;
}

void write_cr3(u64 v)
{
	unit_cr3 = v;
	unit_cr3_writes++;
}

u64 unit_rand(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dULL;
}

void unit_srand(u64 seed)
{
	rng = seed ? seed : 1;
}

/* CHECK_PANICS's landing place, armed for one statement at a time. */
static jmp_buf catch_jmp;
static bool catch_armed;

jmp_buf *unit_catch_jmp(void)
{
	return &catch_jmp;
}

void unit_catch_arm(void)
{
	unit_last_panic[0] = 0;
	catch_armed = true;
}

void unit_catch_no_panic(const char *stmt, const char *file, int line)
{
	catch_armed = false;
	unit_check(false, file, line, stmt);
	printf("  (expected a panic from the statement above)\n");
}

void unit_catch_check(const char *needle, const char *file, int line)
{
	catch_armed = false;
	if (!strstr(unit_last_panic, needle)) {
		unit_check(false, file, line, "panic message contains the expected text");
		printf("  panic message: \"%s\", expected it to contain \"%s\"\n", unit_last_panic, needle);
	}
}

static __noreturn void unit_die(const char *kind, int code, const char *fmt, va_list ap)
{
	vsnprintf(unit_last_panic, sizeof(unit_last_panic), fmt, ap);
	if (catch_armed) {
		catch_armed = false;
		longjmp(catch_jmp, 1);
	}
	if (!panic_armed) {
		fprintf(stderr, "%s outside a test: %s\n", kind, unit_last_panic);
		abort();
	}
	printf("  unexpected %s (code %d) in %s: %s\n", kind, code, current, unit_last_panic);
	longjmp(panic_jmp, code ? code : -1);
}

__noreturn void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	unit_die("panic", EXIT_PANIC, fmt, ap);
}

__noreturn void fatal(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	unit_die("fatal", code, fmt, ap);
}

__noreturn void fatal_reason(int code, u32 condition, const char *fmt, ...)
{
	va_list ap;

	(void)condition;
	va_start(ap, fmt);
	unit_die("fatal", code, fmt, ap);
}

__noreturn void kernel_exit_reason(int code, u32 condition)
{
	fprintf(stderr, "kernel_exit_reason(%d, %u) called in a host test\n", code, condition);
	abort();
}

__noreturn void kernel_exit(int code)
{
	fprintf(stderr, "kernel_exit(%d) called in a host test\n", code);
	abort();
}

/* One test, with panics caught; separate so that setjmp does not clobber main's locals. */
static void run_one(int i)
{
	catch_armed = false;
	current = tests[i].name;
	failures_in_test = 0;
	panic_armed = true;
	if (setjmp(panic_jmp) == 0)
		tests[i].fn();
	else
		failures_in_test++;
	panic_armed = false;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;
	const char *only = argc > 1 ? argv[1] : NULL;

	for (int i = 0; i < ntests; i++) {
		if (only && strcmp(only, tests[i].name))
			continue;
		run_one(i);
		if (failures_in_test) {
			printf("FAIL %s\n", tests[i].name);
			failed++;
		} else {
			printf("ok %s\n", tests[i].name);
			passed++;
		}
		fflush(stdout);
	}
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
