/* SPDX-License-Identifier: MIT */
/* memaccept: the handful of string and memory routines the kernel needs (libc's on the host). */
#ifndef LIB_STRING_H
#define LIB_STRING_H

#include "include/types.h"

#ifdef HOSTED
#include <string.h>
#else
void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
#endif

/* Copy at most size-1 bytes and always terminate (when size > 0); returns strlen(src). */
size_t str_copy(char *dst, const char *src, size_t size);
/* Does s begin with prefix? */
bool str_starts(const char *s, const char *prefix);

/* "1G", "512M", "4096K", "12345": bytes, no overflow. Returns false on anything else. */
bool parse_size(const char *s, size_t len, u64 *out);

#endif
