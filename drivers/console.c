/* SPDX-License-Identifier: MIT */
/* memaccept: the console: lines of text and JSON events on the serial port. */
#include "drivers/console.h"
#include "drivers/serial.h"
#include "lib/format.h"

void console_init(void)
{
	serial_init();
}

/* Terminals want CR LF; log readers strip the CR. */
static void put(void *ctx, char c)
{
	(void)ctx;
	if (c == '\n')
		serial_putc('\r');
	serial_putc(c);
}

void console_write(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		put(NULL, s[i]);
}

int kvprintf(const char *fmt, va_list ap)
{
	return format_v(put, NULL, fmt, ap);
}

int kprintf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvprintf(fmt, ap);
	va_end(ap);
	return n;
}
