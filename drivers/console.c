/* SPDX-License-Identifier: MIT */
/* memaccept: the console: lines of text and JSON events on the serial port. */
#include "drivers/console.h"
#include "drivers/serial.h"
#include "lib/format.h"
#include "lib/spinlock.h"

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

static unsigned (*lock_cpu_id)(void);
static struct spinlock lock;
static u32 lock_owner;	/* CPU index + 1 of the holder, 0 = free */
static u32 lock_depth;

void console_set_cpu_id(unsigned (*cpu_id)(void))
{
	lock_cpu_id = cpu_id;
}

void console_lock(void)
{
	if (!lock_cpu_id)
		return;
	u32 me = lock_cpu_id() + 1;

	if (__atomic_load_n(&lock_owner, __ATOMIC_RELAXED) == me) {
		lock_depth++;
		return;
	}
	spin_lock(&lock);
	__atomic_store_n(&lock_owner, me, __ATOMIC_RELAXED);
	lock_depth = 1;
}

void console_unlock(void)
{
	if (!lock_cpu_id || !lock_depth)
		return;
	if (--lock_depth == 0) {
		__atomic_store_n(&lock_owner, 0, __ATOMIC_RELAXED);
		spin_unlock(&lock);
	}
}

void console_write(const char *s, size_t len)
{
	console_lock();
	for (size_t i = 0; i < len; i++)
		put(NULL, s[i]);
	console_unlock();
}

int kvprintf(const char *fmt, va_list ap)
{
	console_lock();
	int n = format_v(put, NULL, fmt, ap);

	console_unlock();
	return n;
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
