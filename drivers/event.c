/* SPDX-License-Identifier: MIT */
/* memaccept: the JSON event writer. */
#include "drivers/console.h"
#include "drivers/event.h"
#include "lib/format.h"
#include "lib/string.h"

/* An event is assembled here and written in one piece, so it is never split by other output. */
#define LINE_MAX 4096
#define DEPTH_MAX 8

static char line[LINE_MAX];
static size_t len;
static bool first[DEPTH_MAX];	/* no field written yet at this nesting level */
static unsigned depth;

static void put(char c)
{
	/* A line that would overflow is flushed early: still valid JSON, just in two writes. */
	if (len == LINE_MAX) {
		console_write(line, len);
		len = 0;
	}
	line[len++] = c;
}

static void puts_raw(const char *s)
{
	while (*s)
		put(*s++);
}

static void put_escaped(const char *s)
{
	put('"');
	for (; *s; s++) {
		u8 c = (u8)*s;

		if (c == '"' || c == '\\') {
			put('\\');
			put((char)c);
		} else if (c < 0x20 || c >= 0x7f) {
			char buf[8];

			format_buf(buf, sizeof(buf), "\\u%04x", c);
			puts_raw(buf);
		} else {
			put((char)c);
		}
	}
	put('"');
}

static void key(const char *k)
{
	if (!first[depth])
		put(',');
	first[depth] = false;
	if (k) {
		put_escaped(k);
		put(':');
	}
}

/* The line buffer is shared: one CPU writes an event at a time (the console lock). */
void ev_begin(const char *event)
{
	console_lock();
	len = 0;
	depth = 0;
	first[0] = true;
	put('{');
	key("event");
	put_escaped(event);
}

void ev_u64(const char *k, u64 v)
{
	char buf[24];

	key(k);
	format_buf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	puts_raw(buf);
}

void ev_str(const char *k, const char *v)
{
	key(k);
	put_escaped(v ? v : "");
}

void ev_bool(const char *k, bool v)
{
	key(k);
	puts_raw(v ? "true" : "false");
}

static void open(const char *k, char c)
{
	key(k);
	put(c);
	if (depth + 1 < DEPTH_MAX)
		depth++;
	first[depth] = true;
}

static void close(char c)
{
	put(c);
	if (depth)
		depth--;
}

void ev_obj_begin(const char *k)
{
	open(k, '{');
}

void ev_obj_end(void)
{
	close('}');
}

void ev_arr_begin(const char *k)
{
	open(k, '[');
}

void ev_arr_u64(u64 v)
{
	ev_u64(NULL, v);
}

void ev_arr_end(void)
{
	close(']');
}

void ev_u64_array(const char *k, const u64 *v, unsigned n)
{
	ev_arr_begin(k);
	for (unsigned i = 0; i < n; i++)
		ev_arr_u64(v[i]);
	ev_arr_end();
}

void ev_end(void)
{
	while (depth)
		close('}');
	put('}');
	put('\n');
	console_write(line, len);
	len = 0;
	console_unlock();
}
