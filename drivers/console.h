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

/*
 * With more than one CPU: output is serialised by one lock, taken per kprintf and per
 * event (drivers/event.c holds it from ev_begin to ev_end). It is recursive for the
 * CPU that holds it, so a panic in the middle of an event still prints. cpu_id names
 * the calling CPU; until it is set (one CPU) nothing is locked.
 */
void console_set_cpu_id(unsigned (*cpu_id)(void));
void console_lock(void);
void console_unlock(void);

void console_write(const char *s, size_t len);
int kprintf(const char *fmt, ...) __printf(1, 2);
int kvprintf(const char *fmt, va_list ap);

#endif
