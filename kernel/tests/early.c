/* SPDX-License-Identifier: MIT */
/* memaccept: test cases for the moment the kernel's IDT is loaded, before the rest of the platform set-up. */
#include "drivers/console.h"
#include "include/panic.h"
#include "kernel/testcase.h"
#include "lib/string.h"

static bool early_console_done;

/*
 * Runs right after idt_init() (kernel_main). In a TD, port I/O there raises #VE and in an
 * SNP guest #VC, so output at this point only works if the platform's console path and
 * its handlers were in place when the IDT was loaded. Run with console=sync, so that the
 * line really goes out here instead of waiting in memory.
 */
void testcase_early(const char *name)
{
	if (strcmp(name, "early_console") == 0) {
		kprintf("early: console output right after the kernel's IDT was loaded\n");
		early_console_done = true;
	} else if (strcmp(name, "early_panic") == 0) {
		panic("early_panic: a panic right after the kernel's IDT was loaded");
	}
}

TESTCASE(early_console, "console output right after the IDT is loaded reaches the console (early part in kernel_main)")
{
	CHECK(early_console_done);
	return EXIT_OK;
}

TESTCASE(early_panic, "a panic right after the IDT is loaded is reported (early part in kernel_main)")
{
	/* testcase_early() panicked long before this could run. */
	return EXIT_TEST_FAILED;
}
