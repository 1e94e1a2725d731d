/* SPDX-License-Identifier: MIT */
/* memaccept: the console: lines of text and JSON events on the serial port. */
#include "drivers/console.h"
#include "drivers/serial.h"
#include "lib/format.h"

#define HOLD_MAX (64 * KiB)

static unsigned holds;
static char held[HOLD_MAX];
static size_t nheld;
static void (*flush_hook)(void);

void console_init(void)
{
	serial_init();
}

static void out(char c)
{
	if (holds) {
		if (nheld < HOLD_MAX)
			held[nheld++] = c;
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

void console_hold(void)
{
	holds++;
}

void console_set_flush_hook(void (*fn)(void))
{
	flush_hook = fn;
}

void console_flush_held(void)
{
	void (*hook)(void) = flush_hook;

	/* Cleared first: the hook prints, and a fault inside it must not loop. */
	flush_hook = NULL;
	if (hook && holds)
		hook();

	bool cut = nheld == HOLD_MAX;

	holds = 0;
	for (size_t i = 0; i < nheld; i++)
		serial_putc(held[i]);
	nheld = 0;
	if (cut)
		kprintf("console: output was cut at %llu KiB while it was held\n", HOLD_MAX >> 10);
}

void console_release(void)
{
	if (holds && --holds == 0)
		console_flush_held();
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
