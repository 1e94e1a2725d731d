/* SPDX-License-Identifier: MIT */
/* memaccept: a small printf-style formatter shared by the console and the tests. */
#ifndef LIB_FORMAT_H
#define LIB_FORMAT_H

#include <stdarg.h>
#include "include/types.h"

typedef void (*format_put_fn)(void *ctx, char c);

/*
 * Conversions: %% %c %s %d %i %u %x %X %p, length modifiers l, ll, z, flags '0', '-', '#',
 * a field width and, for %s, a precision (also as ".*"). Returns the characters produced.
 * Anything else is printed as-is, so a bad format string cannot crash the caller.
 */
int format_v(format_put_fn put, void *ctx, const char *fmt, va_list ap);

/* snprintf semantics: always terminates when size > 0, returns the untruncated length. */
int format_buf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);
int format_buf_v(char *buf, size_t size, const char *fmt, va_list ap);

#endif
