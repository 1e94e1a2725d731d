/* SPDX-License-Identifier: MIT */
/* memaccept: what every libFuzzer target shares: a failed check and a panic in mm/ are findings. */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stdarg.h>
#include <stdio.h>
#include "include/panic.h"

/* The fuzzer's own check: trap, so that libFuzzer saves the input. */
#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			__builtin_trap();                                         \
		}                                                                 \
	} while (0)

/* The code under test panics only on a broken invariant or misuse: a finding either way. */
__noreturn void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	__builtin_trap();
}

#endif
