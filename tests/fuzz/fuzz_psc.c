/* SPDX-License-Identifier: MIT */
/*
 * memaccept fuzz target: the SNP guest's side of the Page State Change protocol and of
 * PVALIDATE (arch/x86/sev/psc.c) against a hypervisor that the input drives.
 *
 * Each input is one accept: a range (4 KiB edges, 2 MiB entries inside, up to about 303
 * entries, so more than one request), the operation, and the units the caller will accept
 * next (which fill the last request). Then, for every PSC exit, two bytes choose the
 * hypervisor's reply: honest (all, or some pages, stopping inside 2 MiB entries as GHCB
 * specification 4.1.6 allows), an error in SW_EXITINFO2, no progress, or one of the
 * violations the guest must catch (cur_entry backwards or past end_entry + 1, end_entry or
 * the reserved field changed, an entry's GFN, operation or size changed, a cur_page moved
 * backwards or past its entry). Last, bytes choose PVALIDATE's answers (validated, size
 * mismatch, failure, no update) for the private range.
 *
 * The checks are the protocol itself, written from the GHCB specification: every entry
 * the guest sends is well formed and the entries cover the range exactly once; the guest
 * stops (a named fatal) exactly at the exit where the hypervisor reported an error, broke
 * the protocol or made no progress for PSC_STALL_LIMIT (16) exits in a row, and never
 * otherwise; a request ends only when the hypervisor says all of it is done; after a
 * normal return every page of the range was validated exactly once, and a stop came from a
 * PVALIDATE answer that must stop the guest.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "arch/x86/platform.h"
#include "arch/x86/sev/snp.h"
#include "tests/fuzz/fuzz.h"

#define STALL_LIMIT 16			/* psc.c PSC_STALL_LIMIT: part of the contract tested */
#define UNIT_PAGES (UNIT_SIZE / PAGE_SIZE)
#define MAX_UNITS 128
#define MAX_PAGES (MAX_UNITS * UNIT_PAGES)

static const u8 *in;
static size_t in_len, in_at;

/* The next choice; once the input is used up, the hypervisor and PVALIDATE are honest. */
static u8 next(void)
{
	return in_at < in_len ? in[in_at++] : 0xff;
}

/*
 * Which pages were named (by a PSC entry) or validated, at the granularity they were
 * named in: a 2 MiB mark is one byte for its unit, a 4 KiB mark one byte for its page.
 * A page may be marked once, whichever way: a second mark is a failure at once, so the
 * range is covered exactly once when the marks inside it add up to its size, and no loop
 * over every page of the range is needed (it cost more than the code under test).
 */
struct marks {
	u8 unit[MAX_UNITS];		/* the unit was marked whole */
	u16 pages_in_unit[MAX_UNITS];	/* 4 KiB marks inside the unit */
	u8 page[MAX_PAGES];		/* 4 KiB marks */
	u64 total, in_range;		/* pages marked; those inside [start, end) */
	u64 out_lo, out_hi;		/* the marks outside the range lie in [out_lo, out_hi) */
};

static struct {
	u64 base;			/* first page of the model */
	u64 start, end;			/* the range accepted */
	struct marks sent, valid;
	u64 op;
	unsigned exits, stalls;		/* stalls: exits in a row without progress */
	u32 expect_fatal;		/* the condition this exit must stop with, or 0 */
	bool fatal_expected_now;
	bool last_done;			/* the last reply said the whole request was done */
	u64 ahead_units;		/* what the ahead callback handed out */
	unsigned ahead_left;
	u32 fatal;			/* what stopped the guest */
	u64 evicted;
} m;
static jmp_buf stop;

/*
 * The model's own bookkeeping is left out of libFuzzer's coverage and comparison tracing:
 * its branches say nothing about the code under test, and tracing them cost a third of
 * the run (callgrind).
 */
#define MODEL_ONLY __attribute__((no_sanitize("coverage")))

static MODEL_ONLY void marks_clear(struct marks *k)
{
	/* Only the units that hold 4 KiB marks have pages to clear. */
	for (unsigned u = 0; u < MAX_UNITS; u++)
		if (k->pages_in_unit[u])
			memset(k->page + u * UNIT_PAGES, 0, UNIT_PAGES);
	memset(k->unit, 0, sizeof(k->unit));
	memset(k->pages_in_unit, 0, sizeof(k->pages_in_unit));
	k->total = k->in_range = 0;
	k->out_lo = ~0ULL;
	k->out_hi = 0;
}

static MODEL_ONLY void mark(struct marks *k, u64 addr, u64 pages)
{
	u64 p = (addr - m.base) / PAGE_SIZE, u = p / UNIT_PAGES, len = pages * PAGE_SIZE;
	u64 s = MAX(addr, m.start), e = MIN(addr + len, m.end);

	CHECK(addr >= m.base && IS_ALIGNED(addr, PAGE_SIZE) && u < MAX_UNITS);
	CHECK(!k->unit[u]);		/* inside a unit marked whole: a page marked twice */
	if (pages == UNIT_PAGES) {
		CHECK(p % UNIT_PAGES == 0 && !k->pages_in_unit[u]);
		k->unit[u] = 1;
	} else {
		CHECK(pages == 1 && !k->page[p]);
		k->page[p] = 1;
		k->pages_in_unit[u]++;
	}
	k->total += pages;
	if (s < e)
		k->in_range += (e - s) / PAGE_SIZE;
	if (addr < m.start || addr + len > m.end) {
		k->out_lo = MIN(k->out_lo, addr);
		k->out_hi = MAX(k->out_hi, addr + len);
	}
}

/* The entries as sent on a request's first exit: well formed, each page once. */
static MODEL_ONLY void check_sent(const struct psc_desc *d, unsigned n)
{
	CHECK(n >= 1 && n <= PSC_MAX_ENTRIES);
	CHECK(d->hdr.cur_entry == 0 && d->hdr.end_entry == n - 1 && d->hdr.reserved == 0);
	for (unsigned i = 0; i < n; i++) {
		u64 e = d->entries[i];

		CHECK(PSC_ENTRY_RESERVED(e) == 0 && PSC_ENTRY_CUR_PAGE(e) == 0);
		CHECK(PSC_ENTRY_OP(e) == m.op);
		if (PSC_ENTRY_2M(e))
			CHECK(IS_ALIGNED(PSC_ENTRY_GFN(e) << PAGE_SHIFT, UNIT_SIZE));
		mark(&m.sent, PSC_ENTRY_GFN(e) << PAGE_SHIFT, PSC_ENTRY_PAGES(e));
	}
}

/* Honest progress over at most budget pages (0: all of it), stopping inside entries. */
static bool advance(struct psc_desc *d, u64 budget)
{
	bool all = !budget, moved = false;

	while (d->hdr.cur_entry <= d->hdr.end_entry && (all || budget)) {
		u64 *e = &d->entries[d->hdr.cur_entry];
		u64 done = PSC_ENTRY_CUR_PAGE(*e), todo = PSC_ENTRY_PAGES(*e) - done;

		if (!all && todo > budget)
			todo = budget;
		*e = (*e & ~0xfffULL) | (done + todo);
		moved |= todo != 0;
		if (!all)
			budget -= todo;
		if (done + todo < PSC_ENTRY_PAGES(*e))
			break;
		d->hdr.cur_entry++;
		moved = true;
	}
	return moved;
}

static u64 hv_exit(struct psc_desc *d, unsigned n)
{
	u8 a = next(), p = next();
	u16 end = (u16)(n - 1), cur = d->hdr.cur_entry;
	bool moved = false, broken = false;

	CHECK(!m.fatal_expected_now);	/* the guest went on after it should have stopped */
	m.exits++;
	if (m.last_done && cur == 0 && d->hdr.end_entry == end) {
		bool fresh = true;

		for (unsigned i = 0; i < n && fresh; i++)
			fresh = PSC_ENTRY_CUR_PAGE(d->entries[i]) == 0;
		if (fresh)
			check_sent(d, n);
	}
	m.last_done = false;
	switch (a % 16) {
	case 0:
		m.expect_fatal = FC_PSC_ERROR;
		m.fatal_expected_now = true;
		return (u64)(p | 1) << (p & 1 ? 32 : 0);
	case 2: case 3: case 4: case 5:
		moved = advance(d, (u64)p % 600 + 1);
		break;
	case 6:
		break;			/* no progress */
	case 7: {			/* cur_entry set anywhere */
		u16 to = (u16)(p % (n + 3));

		broken = to < cur || to > end + 1;
		moved = to != cur;
		d->hdr.cur_entry = to;
		break;
	}
	case 8:
		d->hdr.end_entry = (u16)(end + 1 + p % 4);
		broken = true;
		break;
	case 9:
		d->hdr.reserved = p | 1;
		broken = true;
		break;
	case 10: {			/* an entry's GFN, operation, size or reserved bits changed */
		static const u64 bits[] = { 1ULL << 12, 1ULL << 52, 1ULL << 56, 1ULL << 60, 1ULL << 40 };

		d->entries[p % n] ^= bits[(a >> 4) % ARRAY_SIZE(bits)];
		broken = true;
		break;
	}
	case 11: {			/* a cur_page moved backwards */
		u64 *e = &d->entries[cur <= end ? cur : end];

		if (PSC_ENTRY_CUR_PAGE(*e)) {
			*e -= 1;
			broken = true;
		}
		break;
	}
	case 12: {			/* a cur_page past its entry's end */
		u64 *e = &d->entries[p % n];

		*e = (*e & ~0xfffULL) | (PSC_ENTRY_PAGES(*e) + 1 + (p >> 4));
		broken = true;
		break;
	}
	case 13:			/* says it is done without touching the entries */
		moved = d->hdr.cur_entry != end + 1;
		d->hdr.cur_entry = (u16)(end + 1);
		break;
	default:
		moved = advance(d, 0);
		break;
	}
	if (broken) {
		m.expect_fatal = FC_PSC_PROTOCOL;
		m.fatal_expected_now = true;
		return 0;
	}
	if (d->hdr.cur_entry > end) {
		m.last_done = true;
		m.stalls = 0;
		return 0;
	}
	m.stalls = moved ? 0 : m.stalls + 1;
	if (m.stalls == STALL_LIMIT) {
		m.expect_fatal = FC_PSC_PROTOCOL;
		m.fatal_expected_now = true;
	}
	return 0;
}

/* The units after the range, as an eager caller would name them: some with gaps. */
static bool hv_ahead(u64 from, u64 *unit)
{
	if (!m.ahead_left)
		return false;
	m.ahead_left--;
	*unit = ALIGN_UP(from, UNIT_SIZE) + (m.ahead_left & 1 ? UNIT_SIZE : 0);
	if (*unit + UNIT_SIZE > m.base + MAX_UNITS * UNIT_SIZE)
		return false;
	m.ahead_units++;
	return true;
}

static u32 pv(u64 va, u32 size, u32 validate, bool *no_update)
{
	u8 a = next();
	u64 pages = size == PVALIDATE_2M ? UNIT_PAGES : 1;

	CHECK(!m.fatal_expected_now);
	CHECK(validate == 1);
	CHECK(IS_ALIGNED(va, size == PVALIDATE_2M ? UNIT_SIZE : PAGE_SIZE));
	*no_update = false;
	switch (a % 32) {
	case 0:
		m.expect_fatal = FC_PVALIDATE_FAIL;
		m.fatal_expected_now = true;
		return PVALIDATE_FAIL_INPUT;
	case 1:
		if (size == PVALIDATE_2M)
			return PVALIDATE_FAIL_SIZEMISMATCH;
		m.expect_fatal = FC_PVALIDATE_FAIL;
		m.fatal_expected_now = true;
		return PVALIDATE_FAIL_SIZEMISMATCH;
	case 2:
		*no_update = true;
		m.expect_fatal = FC_PVALIDATE_NOUPDATE;
		m.fatal_expected_now = true;
		return PVALIDATE_OK;
	case 3:
		m.expect_fatal = FC_PVALIDATE_FAIL;
		m.fatal_expected_now = true;
		return 0x10 + a;
	default:
		mark(&m.valid, va, pages);
		return PVALIDATE_OK;
	}
}

static void evict(u64 va, u64 pages)
{
	m.evicted += pages;
}

static void guest_fatal(u32 condition, const char *what, u64 a, u64 b)
{
	CHECK(what && *what);
	CHECK(m.fatal_expected_now);
	CHECK(condition == m.expect_fatal);
	m.fatal = condition;
	longjmp(stop, 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct snp_psc_ops ops = { hv_exit, guest_fatal, hv_ahead };
	static const struct snp_pvalidate_ops pv_ops = { pv, guest_fatal, evict };
	struct snp_psc_stats st;
	struct snp_pvalidate_stats pst;
	struct snp_psc_ahead ahead = { 0, 0 };
	u64 pages;
	u8 flags;

	if (size < 5)
		return 0;
	/* Only what the last input marked needs clearing: a full clear costs more than a run. */
	marks_clear(&m.sent);
	marks_clear(&m.valid);
	memset((u8 *)&m + offsetof(typeof(m), op), 0, sizeof(m) - offsetof(typeof(m), op));
	memset(&st, 0, sizeof(st));
	memset(&pst, 0, sizeof(pst));
	in = data;
	in_len = size;
	in_at = 5;
	flags = data[0];
	m.base = 4 * GiB;
	m.start = m.base + ((u64)(data[1] | data[2] << 8) % 1024) * PAGE_SIZE;
	m.end = m.start + (u64)(data[3] % 48) * UNIT_SIZE + (u64)data[4] * PAGE_SIZE + PAGE_SIZE;
	pages = (m.end - m.start) / PAGE_SIZE;
	m.op = flags & 1 ? PSC_OP_SHARED : PSC_OP_PRIVATE;
	m.ahead_left = flags & 2 ? (flags >> 2) % 64 : 0;
	m.last_done = true;

	if (setjmp(stop)) {
		CHECK(m.fatal != 0);
		return 0;
	}
	snp_psc_range(m.start, m.end, m.op, &ops, &st, flags & 2 ? &ahead : NULL);
	/* Returned normally: no stop was due, the last request was done, the range covered once. */
	CHECK(!m.fatal_expected_now && m.last_done);
	CHECK(st.exits == m.exits);
	CHECK(st.ahead_units == m.ahead_units);
	CHECK(m.sent.in_range == pages);
	if (m.sent.total != pages) {
		/* More was named: only units handed out ahead, each once, for a private change. */
		CHECK(m.op == PSC_OP_PRIVATE && ahead.start < ahead.end);
		CHECK(ahead.start >= m.end || ahead.end <= m.start);
		CHECK(m.sent.out_lo >= ahead.start && m.sent.out_hi <= ahead.end);
	}
	if (m.op != PSC_OP_PRIVATE)
		return 0;
	snp_pvalidate_range(m.start, m.end, true, &pv_ops, &pst);
	CHECK(!m.fatal_expected_now);
	CHECK(m.valid.in_range == pages && m.valid.total == pages);
	CHECK(m.evicted == pages);
	return 0;
}
