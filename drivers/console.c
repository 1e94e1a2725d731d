/* SPDX-License-Identifier: MIT */
/* memaccept: the console: lines of text and JSON events on the serial port. */
#include "drivers/console.h"
#include "drivers/serial.h"
#include "lib/format.h"

#define DEFER_MAX (16 * KiB)

static bool deferring;
static char deferred[DEFER_MAX];
static size_t ndeferred;

void console_init(void)
{
	serial_init();
}

static void out(char c)
{
	if (deferring) {
		if (ndeferred < DEFER_MAX)
			deferred[ndeferred++] = c;
		return;
	}
	serial_putc(c);
}

/* Terminals want CR LF; log readers strip the CR. */
static void put(void *ctx, char c)
{
	(void)ctx;
	if (c == '\n')
		out('\r');
	out(c);
}

void console_defer(bool defer)
{
	deferring = defer;
	if (defer)
		return;
	for (size_t i = 0; i < ndeferred; i++)
		serial_putc(deferred[i]);
	if (ndeferred == DEFER_MAX)
		kprintf("console: output was cut at %llu KiB while it could not be written\n",
			DEFER_MAX >> 10);
	ndeferred = 0;
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
