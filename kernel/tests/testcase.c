/* SPDX-License-Identifier: MIT */
/* memaccept: runs one in-guest test case and states its verdict once. */
#include "drivers/console.h"
#include "drivers/event.h"
#include "include/panic.h"
#include "kernel/testcase.h"
#include "lib/string.h"

extern const struct testcase *const __testcases_start[], *const __testcases_end[];

void testcase_fail(const char *file, int line, const char *cond)
{
	kprintf("test: check failed at %s:%d: %s\n", file, line, cond);
	ev_begin("check_failed");
	ev_str("file", file);
	ev_u64("line", (u64)line);
	ev_str("cond", cond);
	ev_end();
}

void testcase_announce_stray(u64 addr)
{
	ev_begin("stray_target");
	ev_u64("addr", addr);
	ev_u64("unit", ALIGN_DOWN(addr, UNIT_SIZE));
	ev_end();
}

int testcase_run(const char *name)
{
	for (const struct testcase *const *p = __testcases_start; p < __testcases_end; p++) {
		const struct testcase *t = *p;

		if (strcmp(t->name, name))
			continue;
		kprintf("test: running %s: %s\n", t->name, t->what);
		int code = t->run();

		kprintf("test: %s %s (code %d)\n", t->name, code == EXIT_OK ? "passed" : "FAILED", code);
		ev_begin("test");
		ev_str("name", t->name);
		ev_str("result", code == EXIT_OK ? "pass" : "fail");
		ev_u64("code", (u64)code);
		ev_end();
		return code;
	}
	kprintf("test: no test case named '%s'; this image has:", name);
	for (const struct testcase *const *p = __testcases_start; p < __testcases_end; p++)
		kprintf(" %s", (*p)->name);
	kprintf("\n");
	return EXIT_BAD_CONFIG;
}
