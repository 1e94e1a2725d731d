/* SPDX-License-Identifier: MIT */
/* memaccept: formatted output on the serial console. */
#ifndef DRIVERS_CONSOLE_H
#define DRIVERS_CONSOLE_H

#include <stdarg.h>
#include "include/types.h"

void console_init(void);
/*
 * Hold output in memory (64 KiB; beyond that it is cut) instead of writing it, until
 * every console_hold() has its console_release(). Two users: kernel_main holds the boot
 * report until the allocator is ready, so that time-to-ready measures the kernel and
 * not the serial line (console=sync turns that off); SEV-SNP holds it between
 * ExitBootServices and its GHCB, when the guest cannot do port I/O at all.
 */
void console_hold(void);
void console_release(void);
/* Write everything held now, whoever held it (the ways out of the kernel call this). */
void console_flush_held(void);
/*
 * Lines that are only formatted once the boot is ready (the boot report): if a way out
 * flushes the held output before that, fn prints them first, once. NULL clears it.
 */
void console_set_flush_hook(void (*fn)(void));

void console_write(const char *s, size_t len);
int kprintf(const char *fmt, ...) __printf(1, 2);
int kvprintf(const char *fmt, va_list ap);

#endif
