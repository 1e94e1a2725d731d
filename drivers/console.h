/* SPDX-License-Identifier: MIT */
/* memaccept: formatted output on the serial console. */
#ifndef DRIVERS_CONSOLE_H
#define DRIVERS_CONSOLE_H

#include <stdarg.h>
#include "include/types.h"

void console_init(void);
/*
 * defer=true: keep output in memory (16 KiB, the oldest kept) instead of writing it;
 * defer=false: write what was kept, then go on normally. SEV-SNP needs this between
 * ExitBootServices and the kernel's GHCB, when the guest cannot do port I/O at all.
 */
void console_defer(bool defer);

void console_write(const char *s, size_t len);
int kprintf(const char *fmt, ...) __printf(1, 2);
int kvprintf(const char *fmt, va_list ap);

#endif
