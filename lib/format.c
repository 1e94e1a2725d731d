/* SPDX-License-Identifier: MIT */
/* memaccept: printf-style formatting without libc. */
#include "lib/format.h"

struct spec {
	bool left, zero, alt;	/* '-', '0', '#' (0x prefix for %x) */
	int width, precision;
	int size; /* 0 int, 1 long, 2 long long, 3 size_t */
};

static int emit_padded(format_put_fn put, void *ctx, const char *s, int len, const struct spec *sp,
		       bool numeric)
{
	int pad = sp->width > len ? sp->width - len : 0, n = 0;
	char fill = (sp->zero && numeric && !sp->left) ? '0' : ' ';

	/* Zero padding goes after the sign. */
	if (fill == '0' && len && s[0] == '-') {
		put(ctx, '-');
		s++, len--, n++;
	}
	if (!sp->left)
		for (; pad; pad--, n++)
			put(ctx, fill);
	for (int i = 0; i < len; i++, n++)
		put(ctx, s[i]);
	for (; pad; pad--, n++)
		put(ctx, ' ');
	return n;
}

static int utoa(char *out, u64 v, unsigned base, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0, len = 0;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	while (n)
		out[len++] = tmp[--n];
	return len;
}

int format_v(format_put_fn put, void *ctx, const char *fmt, va_list ap)
{
	int total = 0;

	for (const char *p = fmt; *p; p++) {
		if (*p != '%') {
			put(ctx, *p);
			total++;
			continue;
		}
		const char *start = p++;
		struct spec sp = { .precision = -1 };

		for (;; p++) {
			if (*p == '-')
				sp.left = true;
			else if (*p == '#')
				sp.alt = true;
			else if (*p == '0')
				sp.zero = true;
			else
				break;
		}
		for (; *p >= '0' && *p <= '9'; p++)
			sp.width = sp.width * 10 + (*p - '0');
		if (*p == '.') {
			p++;
			sp.precision = 0;
			if (*p == '*') {
				sp.precision = va_arg(ap, int);
				p++;
			}
			for (; *p >= '0' && *p <= '9'; p++)
				sp.precision = sp.precision * 10 + (*p - '0');
		}
		if (*p == 'l') {
			sp.size = 1;
			if (*++p == 'l') {
				sp.size = 2;
				p++;
			}
		} else if (*p == 'z') {
			sp.size = 3;
			p++;
		}

		char buf[24];
		int len = 0;
		u64 u = 0;
		s64 s = 0;

		switch (*p) {
		case '%':
			put(ctx, '%');
			total++;
			break;
		case 'c':
			buf[0] = (char)va_arg(ap, int);
			total += emit_padded(put, ctx, buf, 1, &sp, false);
			break;
		case 's': {
			const char *str = va_arg(ap, const char *);

			if (!str)
				str = "(null)";
			for (len = 0; str[len] && (sp.precision < 0 || len < sp.precision); len++)
				;
			total += emit_padded(put, ctx, str, len, &sp, false);
			break;
		}
		case 'd':
		case 'i':
			s = sp.size == 0 ? va_arg(ap, int) : sp.size == 3 ? (s64)va_arg(ap, size_t)
									: va_arg(ap, long long);
			if (s < 0) {
				buf[len++] = '-';
				u = (u64)0 - (u64)s;
			} else {
				u = (u64)s;
			}
			len += utoa(buf + len, u, 10, false);
			total += emit_padded(put, ctx, buf, len, &sp, true);
			break;
		case 'u':
		case 'x':
		case 'X':
			u = sp.size == 0 ? va_arg(ap, unsigned) : sp.size == 3 ? va_arg(ap, size_t)
									: va_arg(ap, unsigned long long);
			if (sp.alt && *p != 'u') {
				buf[len++] = '0';
				buf[len++] = 'x';
			}
			len += utoa(buf + len, u, *p == 'u' ? 10 : 16, *p == 'X');
			total += emit_padded(put, ctx, buf, len, &sp, true);
			break;
		case 'p':
			buf[0] = '0', buf[1] = 'x';
			len = 2 + utoa(buf + 2, (u64)(uintptr_t)va_arg(ap, void *), 16, false);
			total += emit_padded(put, ctx, buf, len, &sp, true);
			break;
		default:
			/* Unknown conversion (or the string ended): print it literally. */
			for (const char *q = start; q <= p && *q; q++, total++)
				put(ctx, *q);
			if (!*p)
				return total;
			break;
		}
	}
	return total;
}

struct buf_ctx {
	char *buf;
	size_t size, pos;
};

static void buf_put(void *ctx, char c)
{
	struct buf_ctx *b = ctx;

	if (b->pos + 1 < b->size)
		b->buf[b->pos] = c;
	b->pos++;
}

int format_buf_v(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct buf_ctx b = { buf, size, 0 };
	int n = format_v(buf_put, &b, fmt, ap);

	if (size)
		buf[b.pos < size ? b.pos : size - 1] = 0;
	return n;
}

int format_buf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = format_buf_v(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
