/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of lib/format.c against the C library's snprintf. */
#include <string.h>
#include "lib/format.h"
#include "tests/unit/unit.h"

static bool same(const char *fmt, ...)
{
	char a[128], b[128];
	va_list ap, aq;
	int na, nb;

	va_start(ap, fmt);
	va_copy(aq, ap);
	na = format_buf_v(a, sizeof(a), fmt, ap);
	nb = vsnprintf(b, sizeof(b), fmt, aq);
	va_end(aq);
	va_end(ap);
	if (na != nb || strcmp(a, b)) {
		printf("  format mismatch for \"%s\": ours \"%s\" (%d), libc \"%s\" (%d)\n", fmt, a, na, b, nb);
		return false;
	}
	return true;
}

TEST(format_matches_libc)
{
	EXPECT(same("plain"));
	EXPECT(same("%d %i %u", -42, 7, 3000000000u));
	EXPECT(same("%x %X %#x %#llx", 0xbeefu, 0xbeefu, 255u, 0x1234567890abcdefULL));
	EXPECT(same("%lld %llu", (long long)INT64_MIN, (unsigned long long)UINT64_MAX));
	EXPECT(same("%zu %5d|%-5d|%05d|%-3s|%3s", (size_t)99, 42, 42, -42, "ab", "ab"));
	EXPECT(same("%.3s %.*s %c %%", "abcdef", 2, "xyz", 'q'));
	EXPECT(same("%016llx", 0xabcULL));
	EXPECT(same("%s", ""));
}

TEST(format_truncates_and_terminates)
{
	char buf[8];

	EXPECT_EQ(format_buf(buf, sizeof(buf), "%s", "0123456789"), 10);
	EXPECT(strcmp(buf, "0123456") == 0);
	EXPECT_EQ(format_buf(buf, 1, "abc"), 3);
	EXPECT_EQ(buf[0], 0);
}

TEST(format_survives_bad_formats)
{
	char buf[64];

	/* Unknown conversions are printed literally; a trailing % is harmless. Formats in
	 * variables, so that the compiler's format checking lets them through. */
	const char *unknown = "a%qb", *trailing = "end%", *str = "%s";
	const char *volatile null = NULL;

	format_buf(buf, sizeof(buf), unknown);
	EXPECT(strcmp(buf, "a%qb") == 0);
	format_buf(buf, sizeof(buf), trailing);
	EXPECT(strcmp(buf, "end%") == 0);
	format_buf(buf, sizeof(buf), str, null);
	EXPECT(strcmp(buf, "(null)") == 0);
}
