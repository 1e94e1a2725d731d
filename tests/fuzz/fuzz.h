/* SPDX-License-Identifier: MIT */
/* memaccept: what every libFuzzer target shares: a failed check and a panic in mm/ are findings. */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stdarg.h>
#include <stdio.h>
#include "include/panic.h"
#include "include/types.h"

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

/* The input, read front to back one byte at a time; past its end every byte reads 0.
 * fuzz_input_start sets it at the top of LLVMFuzzerTestOneInput. */
static const u8 *fuzz_in;
static size_t fuzz_in_len, fuzz_in_at;

static inline void fuzz_input_start(const u8 *data, size_t size)
{
	fuzz_in = data, fuzz_in_len = size, fuzz_in_at = 0;
}

static inline bool fuzz_more(void)
{
	return fuzz_in_at < fuzz_in_len;
}

static inline u8 fuzz_byte(void)
{
	return fuzz_more() ? fuzz_in[fuzz_in_at++] : 0;
}

/* n bytes (at most 8), little-endian. */
static inline u64 fuzz_bytes(unsigned n)
{
	u64 v = 0;

	for (unsigned i = 0; i < n; i++)
		v |= (u64)fuzz_byte() << (8 * i);
	return v;
}

#endif
