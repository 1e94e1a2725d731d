/* SPDX-License-Identifier: MIT */
/* memaccept: the ways out of the kernel: a verdict, a panic, a fatal platform condition. */
#ifndef INCLUDE_PANIC_H
#define INCLUDE_PANIC_H

#include "include/exit_codes.h"
#include "include/types.h"

/* Print the `exit` event and leave with `code` (include/exit_codes.h). */
__noreturn void kernel_exit(int code);
/* Same, telling the host why (enum fatal_condition in arch/x86/platform.h). */
__noreturn void kernel_exit_reason(int code, u32 condition);

/* The first panic/fatal message of this boot, for the host's fatal report (never NULL). */
const char *kernel_exit_message(void);

/* A broken invariant inside memaccept: name the function and the values in the message. */
__noreturn void panic(const char *fmt, ...) __printf(1, 2);

/*
 * Stop because of something outside memaccept (platform status, firmware, host): print
 * the reason, emit a `fatal` event, report to the host through the platform, and exit.
 */
__noreturn void fatal(int code, const char *fmt, ...) __printf(2, 3);
/* fatal() with a condition for the host (enum fatal_condition). */
__noreturn void fatal_reason(int code, u32 condition, const char *fmt, ...) __printf(3, 4);

#endif
