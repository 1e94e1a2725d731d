/* SPDX-License-Identifier: MIT */
/* memaccept: in-guest test cases, built into the test image only and run with test=NAME. */
#ifndef KERNEL_TESTCASE_H
#define KERNEL_TESTCASE_H

#include "include/types.h"

struct testcase {
	const char *name;
	const char *what;
	int (*run)(void);	/* returns an exit code (include/exit_codes.h) */
};

/*
 * TESTCASE(name, "what it checks") { ... return EXIT_OK; }
 * The linker collects pointers to the descriptors between __testcases_start and
 * __testcases_end. Pointers, not the structs: the compiler may pad each struct to a
 * larger alignment, which would break walking them as an array.
 */
#define TESTCASE(id, description)                                                    \
	static int testcase_fn_##id(void);                                           \
	static const struct testcase testcase_##id = { #id, description, testcase_fn_##id }; \
	static const struct testcase *const testcase_ptr_##id __section(".testcases") \
		__used = &testcase_##id;                                             \
	static int testcase_fn_##id(void)

/* Run the named case; unknown names list the cases and fail. */
int testcase_run(const char *name);
/*
 * Called by kernel_main right after the kernel's IDT is loaded, before the rest of the
 * platform set-up: runs the early part of test=early_console and test=early_panic.
 */
void testcase_early(const char *name);
struct boot_info;
/*
 * Called by kernel_main between ExitBootServices and memory_build_page_tables, before
 * the memory map is parsed (map_known false) and after the page model exists (true):
 * the planted reads of test=window_read_early and test=window_read.
 */
void testcase_window(const struct boot_info *bi, bool map_known);

/* Inside a test case: report a failed check with its location and return. */
#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			testcase_fail(__FILE__, __LINE__, #cond);                     \
			return EXIT_TEST_FAILED;                                      \
		}                                                                     \
	} while (0)
void testcase_fail(const char *file, int line, const char *cond);
/* Before touching unaccepted memory on purpose: a stray_target event the runner compares with the report. */
void testcase_announce_stray(u64 addr);

#endif
