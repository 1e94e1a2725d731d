/* SPDX-License-Identifier: MIT */
/* memaccept: formatted output on the serial console. */
#ifndef DRIVERS_CONSOLE_H
#define DRIVERS_CONSOLE_H

#include <stdarg.h>
#include "include/types.h"

void console_init(void);
void console_write(const char *s, size_t len);
int kprintf(const char *fmt, ...) __printf(1, 2);
int kvprintf(const char *fmt, va_list ap);

#endif
