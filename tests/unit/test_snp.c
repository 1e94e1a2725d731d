/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of SNP Page State Change batching and the PVALIDATE fallback, with a mock hypervisor. */
#include <setjmp.h>
#include <string.h>
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/vmsa.h"
#include "tests/unit/unit.h"

/* ------------------------------------------------------------------ PSC */

#define MAX_REQ 64

static struct {
	struct psc_desc req[MAX_REQ];	/* each request as the guest sent it (first exit) */
	unsigned nreq, exits, nentries[MAX_REQ];
	unsigned per_exit;		/* entries the hypervisor processes per exit (0: all) */
	unsigned pages_per_exit;	/* 4 KiB pages per exit, stopping inside entries (0: no limit) */
	u64 pages_done;			/* pages the hypervisor converted, redone ones included */
	bool tamper;			/* changes an entry's GFN on the second exit of a request */
	u64 error_at_exit;		/* 1-based exit that returns an error in SW_EXITINFO2 */
	bool backwards, grow, reserved;	/* protocol violations on the second exit of a request */
	bool stall;			/* never make progress */
} hv;
static u32 fatal_cond;
static jmp_buf fatal_jmp;

static u64 mock_exit(struct psc_desc *d, unsigned n)
{
	hv.exits++;
	if (d->hdr.cur_entry == 0 && hv.nreq < MAX_REQ) {
		hv.req[hv.nreq] = *d;
		hv.nentries[hv.nreq++] = n;
	}
	if (hv.error_at_exit == hv.exits)
		return PSC_ERROR_INVALID_ENTRY;
	if (d->hdr.cur_entry > 0 && (hv.backwards || hv.grow || hv.reserved)) {
		if (hv.backwards)
			d->hdr.cur_entry--;
		if (hv.grow)
			d->hdr.end_entry++;
		if (hv.reserved)
			d->hdr.reserved = 1;
		return 0;
	}
	if (hv.stall)
		return 0;
	if (d->hdr.cur_entry > 0 && hv.tamper) {
		d->entries[d->hdr.cur_entry] += 1ULL << 12;
		return 0;
	}
	if (hv.pages_per_exit) {
		/* As the GHCB spec allows: stop inside a 2 MiB entry, progress in its cur_page. */
		u64 budget = hv.pages_per_exit;

		while (d->hdr.cur_entry <= d->hdr.end_entry && budget) {
			u64 *e = &d->entries[d->hdr.cur_entry];
			u64 done = PSC_ENTRY_CUR_PAGE(*e), todo = PSC_ENTRY_PAGES(*e) - done;

			todo = todo < budget ? todo : budget;
			budget -= todo;
			hv.pages_done += todo;
			*e = (*e & ~0xfffULL) | (done + todo);
			if (done + todo < PSC_ENTRY_PAGES(*e))
				break;
			d->hdr.cur_entry++;
		}
		return 0;
	}
	unsigned left = d->hdr.end_entry + 1u - d->hdr.cur_entry;
	unsigned step = hv.per_exit && hv.per_exit < left ? hv.per_exit : left;

	d->hdr.cur_entry = (u16)(d->hdr.cur_entry + step);
	return 0;
}

static void mock_fatal(u32 condition, const char *what, u64 a, u64 b)
{
	(void)what, (void)a, (void)b;
	fatal_cond = condition;
	longjmp(fatal_jmp, 1);
}

static const struct snp_psc_ops psc_ops = { mock_exit, mock_fatal, NULL };

static bool psc(u64 start, u64 end, u64 op, struct snp_psc_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (setjmp(fatal_jmp))
		return false;
	snp_psc_range(start, end, op, &psc_ops, st, NULL);
	return true;
}

static void hv_reset(void)
{
	memset(&hv, 0, sizeof(hv));
	fatal_cond = 0;
}

TEST(psc_entry_encoding)
{
	u64 e = PSC_ENTRY(0x12345678ULL, PSC_OP_PRIVATE, 1);

	/* GHCB spec 4.1.6: cur_page 11:0, GFN 51:12, operation 55:52, page size 56. */
	EXPECT_EQ(e, (0x12345678ULL << 12) | (1ULL << 52) | (1ULL << 56));
	EXPECT_EQ(PSC_ENTRY_GFN(e), 0x12345678ULL);
	EXPECT_EQ(PSC_ENTRY_OP(e), PSC_OP_PRIVATE);
	EXPECT_EQ(PSC_ENTRY_2M(e), 1);
	EXPECT_EQ(PSC_ENTRY_RESERVED(e), 0);
	EXPECT_EQ(PSC_ENTRY(0xffffffffffULL, PSC_OP_SHARED, 0) >> 52, PSC_OP_SHARED);
	EXPECT_EQ(sizeof(struct psc_desc), 2032);
}

TEST(psc_one_gib_takes_three_requests_of_at_most_253)
{
	struct snp_psc_stats st;

	hv_reset();
	ASSERT(psc(GiB, 2 * GiB, PSC_OP_PRIVATE, &st));
	EXPECT_EQ(hv.nreq, 3);
	EXPECT_EQ(hv.nentries[0], 253);
	EXPECT_EQ(hv.nentries[1], 253);
	EXPECT_EQ(hv.nentries[2], 512 - 506);
	EXPECT_EQ(st.entries, 512);
	EXPECT_EQ(st.exits, 3);
	EXPECT_EQ(st.reissues, 0);
	/* Headers as the guest sent them, and the entries in order. */
	EXPECT_EQ(hv.req[0].hdr.cur_entry, 0);
	EXPECT_EQ(hv.req[0].hdr.end_entry, 252);
	EXPECT_EQ(hv.req[2].hdr.end_entry, 5);
	EXPECT_EQ(hv.req[1].entries[0], PSC_ENTRY((GiB + 253 * UNIT_SIZE) >> 12, PSC_OP_PRIVATE, 1));
	for (unsigned i = 0; i < 253; i++)
		EXPECT_EQ(PSC_ENTRY_2M(hv.req[0].entries[i]), 1);
}

TEST(psc_unaligned_edges_use_4k_entries)
{
	struct snp_psc_stats st;

	hv_reset();
	/* 3 pages up to a unit boundary, one whole unit, then 2 pages. */
	ASSERT(psc(UNIT_SIZE - 3 * PAGE_SIZE, 2 * UNIT_SIZE + 2 * PAGE_SIZE, PSC_OP_SHARED, &st));
	ASSERT_EQ(hv.nreq, 1);
	EXPECT_EQ(hv.nentries[0], 3 + 1 + 2);
	EXPECT_EQ(hv.req[0].entries[0], PSC_ENTRY((UNIT_SIZE - 3 * PAGE_SIZE) >> 12, PSC_OP_SHARED, 0));
	EXPECT_EQ(hv.req[0].entries[3], PSC_ENTRY(UNIT_SIZE >> 12, PSC_OP_SHARED, 1));
	EXPECT_EQ(hv.req[0].entries[5], PSC_ENTRY((2 * UNIT_SIZE + PAGE_SIZE) >> 12, PSC_OP_SHARED, 0));
}

TEST(psc_partial_processing_is_resumed)
{
	struct snp_psc_stats st;

	hv_reset();
	hv.per_exit = 100;
	ASSERT(psc(GiB, 2 * GiB, PSC_OP_PRIVATE, &st));
	/* 253 -> 3 exits, 253 -> 3, 6 -> 1. */
	EXPECT_EQ(st.exits, 7);
	EXPECT_EQ(st.reissues, 4);
	EXPECT_EQ(st.entries, 512);
}

TEST(psc_hypervisor_errors_are_fatal)
{
	struct snp_psc_stats st;

	hv_reset();
	hv.error_at_exit = 2;
	EXPECT(!psc(GiB, 2 * GiB, PSC_OP_PRIVATE, &st));
	EXPECT_EQ(fatal_cond, FC_PSC_ERROR);

	hv_reset();
	hv.per_exit = 10;
	hv.backwards = true;
	EXPECT(!psc(GiB, GiB + 64 * UNIT_SIZE, PSC_OP_PRIVATE, &st));
	EXPECT_EQ(fatal_cond, FC_PSC_PROTOCOL);

	hv_reset();
	hv.per_exit = 10;
	hv.grow = true;
	EXPECT(!psc(GiB, GiB + 64 * UNIT_SIZE, PSC_OP_PRIVATE, &st));
	EXPECT_EQ(fatal_cond, FC_PSC_PROTOCOL);

	hv_reset();
	hv.per_exit = 10;
	hv.reserved = true;
	EXPECT(!psc(GiB, GiB + 64 * UNIT_SIZE, PSC_OP_PRIVATE, &st));
	EXPECT_EQ(fatal_cond, FC_PSC_PROTOCOL);

	hv_reset();
	hv.stall = true;
	EXPECT(!psc(GiB, GiB + UNIT_SIZE, PSC_OP_PRIVATE, &st));
	EXPECT_EQ(fatal_cond, FC_PSC_PROTOCOL);
	EXPECT(hv.exits > 2 && hv.exits < 100);
}

TEST(psc_resumes_inside_2m_entries_with_cur_page)
{
	struct snp_psc_stats st;

	hv_reset();
	/* 100 pages per exit: every 2 MiB entry is split over several exits. */
	hv.pages_per_exit = 100;
	ASSERT(psc(GiB, GiB + 8 * UNIT_SIZE, PSC_OP_PRIVATE, &st));
	EXPECT_EQ(st.exits, (8 * 512 + 99) / 100);
	/* The guest re-sent each entry with the cur_page the hypervisor left: nothing redone. */
	EXPECT_EQ(hv.pages_done, 8 * 512);
	EXPECT_EQ(hv.req[0].entries[0] & 0xfff, 0);	/* the guest sends cur_page 0 */
}

TEST(psc_entry_changed_by_the_hypervisor_is_fatal)
{
	struct snp_psc_stats st;

	hv_reset();
	hv.per_exit = 10;
	hv.tamper = true;
	EXPECT(!psc(GiB, GiB + 64 * UNIT_SIZE, PSC_OP_PRIVATE, &st));
	EXPECT_EQ(fatal_cond, FC_PSC_PROTOCOL);
}

/* The units an eager policy has left: [ahead_lo, ahead_hi) except the hole [hole_lo, hole_hi). */
static u64 ahead_lo, ahead_hi, hole_lo, hole_hi;

static bool mock_ahead(u64 from, u64 *unit)
{
	u64 u = from > ahead_lo ? ALIGN_UP(from, UNIT_SIZE) : ahead_lo;

	if (u >= hole_lo && u < hole_hi)
		u = hole_hi;
	*unit = u;
	return u < ahead_hi;
}

static const struct snp_psc_ops psc_ahead_ops = { mock_exit, mock_fatal, mock_ahead };

TEST(psc_requests_stay_full_across_runs)
{
	struct snp_psc_stats st = { 0 };
	struct snp_psc_ahead ahead = { 0, 0 };
	u64 total = 3 * GiB, run = 64 * MiB;

	hv_reset();
	/*
	 * Eager over 3 GiB in 64 MiB runs (32 entries each), as policy_boot cuts it, with a
	 * 128 MiB hole in the map (two bitmap segments).
	 */
	ahead_lo = GiB;
	ahead_hi = GiB + total + 128 * MiB;
	hole_lo = 2 * GiB;
	hole_hi = 2 * GiB + 128 * MiB;
	ASSERT(!setjmp(fatal_jmp));
	for (u64 a = GiB; a < ahead_hi; a += run) {
		if (a >= hole_lo && a < hole_hi)
			continue;
		snp_psc_range(a, a + run, PSC_OP_PRIVATE, &psc_ahead_ops, &st, &ahead);
		ahead_lo = a + run;	/* accepted: no longer unaccepted */
	}
	/* 1536 entries: ceil(1536 / 253) = 7 requests, each full but the last. */
	EXPECT_EQ(hv.nreq, 7);
	EXPECT_EQ(st.entries, 1536);
	for (unsigned i = 0; i + 1 < hv.nreq; i++)
		EXPECT_EQ(hv.nentries[i], 253);
	/* Every unit converted exactly once, in address order, none in the hole. */
	u64 next = GiB;

	for (unsigned i = 0; i < hv.nreq; i++)
		for (unsigned j = 0; j < hv.nentries[i]; j++) {
			if (next == hole_lo)
				next = hole_hi;
			EXPECT_EQ(PSC_ENTRY_GFN(hv.req[i].entries[j]) << 12, next);
			next += UNIT_SIZE;
		}
	EXPECT_EQ(next, ahead_hi);
	hole_lo = hole_hi = 0;
	/* Without the hook, each run ends its own request. */
	hv_reset();
	memset(&st, 0, sizeof(st));
	if (setjmp(fatal_jmp))
		return;
	for (u64 a = GiB; a < GiB + total; a += run)
		snp_psc_range(a, a + run, PSC_OP_PRIVATE, &psc_ops, &st, NULL);
	EXPECT_EQ(st.exits, total / run);
}

TEST(psc_ahead_stops_where_the_caller_has_nothing_left)
{
	struct snp_psc_stats st = { 0 };
	struct snp_psc_ahead ahead = { 0, 0 };

	hv_reset();
	/* Only two units after the run are still unaccepted: the fill takes those, no more. */
	ahead_lo = GiB + 4 * UNIT_SIZE;
	ahead_hi = GiB + 6 * UNIT_SIZE;
	ASSERT(!setjmp(fatal_jmp));
	snp_psc_range(GiB, GiB + 4 * UNIT_SIZE, PSC_OP_PRIVATE, &psc_ahead_ops, &st, &ahead);
	EXPECT_EQ(hv.nentries[0], 6);
	EXPECT_EQ(st.ahead_units, 2);
	EXPECT_EQ(ahead.start, GiB + 4 * UNIT_SIZE);
	EXPECT_EQ(ahead.end, GiB + 6 * UNIT_SIZE);
	/* Their own accept later sends nothing; a range beyond them sends only the rest. */
	snp_psc_range(GiB + 4 * UNIT_SIZE, GiB + 6 * UNIT_SIZE, PSC_OP_PRIVATE, &psc_ahead_ops, &st, &ahead);
	EXPECT_EQ(hv.exits, 1);
	snp_psc_range(GiB + 4 * UNIT_SIZE, GiB + 8 * UNIT_SIZE, PSC_OP_PRIVATE, &psc_ahead_ops, &st, &ahead);
	EXPECT_EQ(hv.nentries[1], 2);
	EXPECT_EQ(PSC_ENTRY_GFN(hv.req[1].entries[0]) << 12, GiB + 6 * UNIT_SIZE);
}

TEST(psc_bad_range_panics)
{
	struct snp_psc_stats st;

	hv_reset();
	CHECK_PANICS(psc(GiB + 8, GiB + PAGE_SIZE, PSC_OP_PRIVATE, &st), "snp_psc_range: bad range");
	EXPECT_EQ(hv.exits, 0);
}

/* ------------------------------------------------------------------ PVALIDATE */

static struct {
	unsigned calls;
	u64 va[1100];
	u32 size[1100];
	u64 mismatch_unit;	/* 2M validates of this unit answer FAIL_SIZEMISMATCH */
	u64 noupdate_va;	/* this page (at any size) reports CF=1 */
	u64 input_va;		/* FAIL_INPUT */
	u64 mismatch_4k_va;	/* 4K validates of this page answer FAIL_SIZEMISMATCH (a 2M RMP entry) */
} pv;

static u32 mock_pvalidate(u64 va, u32 size, u32 validate, bool *no_update)
{
	(void)validate;
	if (pv.calls < 1100) {
		pv.va[pv.calls] = va;
		pv.size[pv.calls] = size;
	}
	pv.calls++;
	if (size == PVALIDATE_2M && va == pv.mismatch_unit)
		return PVALIDATE_FAIL_SIZEMISMATCH;
	if (size == PVALIDATE_4K && pv.mismatch_4k_va && va == pv.mismatch_4k_va)
		return PVALIDATE_FAIL_SIZEMISMATCH;
	if (va == pv.input_va)
		return PVALIDATE_FAIL_INPUT;
	*no_update = pv.noupdate_va && pv.noupdate_va >= va &&
		     pv.noupdate_va < va + (size ? UNIT_SIZE : PAGE_SIZE);
	return PVALIDATE_OK;
}

static struct {
	u64 pages, first_va, last_va;
} ev;

static void mock_evict(u64 va, u64 pages)
{
	if (!ev.pages)
		ev.first_va = va;
	ev.last_va = va + (pages - 1) * PAGE_SIZE;
	ev.pages += pages;
}

static struct snp_pvalidate_ops pv_ops = { mock_pvalidate, mock_fatal, mock_evict };

static bool pvalidate(u64 start, u64 end, struct snp_pvalidate_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (setjmp(fatal_jmp))
		return false;
	snp_pvalidate_range(start, end, true, &pv_ops, st);
	return true;
}

TEST(pvalidate_2m_where_aligned_4k_elsewhere)
{
	struct snp_pvalidate_stats st;

	memset(&pv, 0, sizeof(pv));
	ASSERT(pvalidate(UNIT_SIZE - PAGE_SIZE, 3 * UNIT_SIZE, &st));
	EXPECT_EQ(st.calls_4k, 1);
	EXPECT_EQ(st.calls_2m, 2);
	EXPECT_EQ(pv.va[1], UNIT_SIZE);
	EXPECT_EQ(pv.size[1], PVALIDATE_2M);
}

TEST(pvalidate_size_mismatch_falls_back_to_512_pages)
{
	struct snp_pvalidate_stats st;

	memset(&pv, 0, sizeof(pv));
	pv.mismatch_unit = GiB + UNIT_SIZE;
	ASSERT(pvalidate(GiB, GiB + 3 * UNIT_SIZE, &st));
	EXPECT_EQ(st.size_mismatch, 1);
	EXPECT_EQ(st.calls_2m, 3);
	EXPECT_EQ(st.calls_4k, 512);
	EXPECT_EQ(pv.va[2], GiB + UNIT_SIZE);	/* the first 4K piece right after the failed 2M */
	EXPECT_EQ(pv.size[2], PVALIDATE_4K);
	EXPECT_EQ(pv.va[513], GiB + 2 * UNIT_SIZE - PAGE_SIZE);
}

TEST(pvalidate_no_update_and_failures_are_fatal)
{
	struct snp_pvalidate_stats st;

	memset(&pv, 0, sizeof(pv));
	pv.noupdate_va = GiB + UNIT_SIZE + 5 * PAGE_SIZE;
	EXPECT(!pvalidate(GiB, GiB + 4 * UNIT_SIZE, &st));
	EXPECT_EQ(fatal_cond, FC_PVALIDATE_NOUPDATE);
	EXPECT_EQ(st.calls_2m, 2);

	/* No-update found inside the 4 KiB fallback is just as fatal. */
	memset(&pv, 0, sizeof(pv));
	pv.mismatch_unit = GiB;
	pv.noupdate_va = GiB + 7 * PAGE_SIZE;
	EXPECT(!pvalidate(GiB, GiB + UNIT_SIZE, &st));
	EXPECT_EQ(fatal_cond, FC_PVALIDATE_NOUPDATE);
	EXPECT_EQ(st.calls_4k, 8);

	memset(&pv, 0, sizeof(pv));
	pv.input_va = GiB;
	EXPECT(!pvalidate(GiB, GiB + UNIT_SIZE, &st));
	EXPECT_EQ(fatal_cond, FC_PVALIDATE_FAIL);
}

/*
 * The result codes the backend compares against, as public code reads them from the
 * hardware. The emulator answers with the backend's own constants, so a wrong value
 * here passes every QEMU case; this test is what catches it (FAIL_PERMISSION was once 3).
 */
TEST(pvalidate_and_rmpadjust_result_codes_are_the_published_ones)
{
	/* COCONUT-SVSM kernel/src/sev/utils.rs pvalidate and rmp_adjust. */
	EXPECT_EQ(PVALIDATE_OK, 0);
	EXPECT_EQ(PVALIDATE_FAIL_INPUT, 1);
	EXPECT_EQ(PVALIDATE_FAIL_SIZEMISMATCH, 6);
	EXPECT_EQ(RMPADJUST_OK, 0);
	EXPECT_EQ(RMPADJUST_FAIL_INPUT, 1);
	EXPECT_EQ(RMPADJUST_FAIL_PERMISSION, 2);
	EXPECT_EQ(RMPADJUST_FAIL_SIZEMISMATCH, 6);
	/* RDX: target VMPL in 7:0, VMSA in bit 16 (utils.rs RMPFlags). */
	EXPECT_EQ(RMPADJUST_TARGET_VMPL1, 1);
	EXPECT_EQ(RMPADJUST_VMSA, 1ULL << 16);
}

TEST(pvalidate_evicts_every_validated_page_once)
{
	struct snp_pvalidate_stats st;

	memset(&pv, 0, sizeof(pv));
	memset(&ev, 0, sizeof(ev));
	/* One 4K edge page, a unit that falls back to 4K, a 2M unit. */
	pv.mismatch_unit = GiB;
	ASSERT(pvalidate(GiB - PAGE_SIZE, GiB + 2 * UNIT_SIZE, &st));
	EXPECT_EQ(ev.pages, 1 + 512 + 512);
	EXPECT_EQ(st.evicted_pages, ev.pages);
	EXPECT_EQ(ev.first_va, GiB - PAGE_SIZE);
	EXPECT_EQ(ev.last_va, GiB + 2 * UNIT_SIZE - PAGE_SIZE);
	/* A part with COHERENCY_SFW_NO: no eviction op, nothing evicted. */
	memset(&ev, 0, sizeof(ev));
	pv_ops.evict = NULL;
	ASSERT(pvalidate(GiB, GiB + UNIT_SIZE, &st));
	pv_ops.evict = mock_evict;
	EXPECT_EQ(ev.pages, 0);
	EXPECT_EQ(st.evicted_pages, 0);
}

/* Run the unaccepted-memory probe of one unit; returns false if it ended in the fatal hook. */
static bool probe_unit(u64 unit, struct snp_pvalidate_stats *st, struct unaccepted_probe *pr)
{
	memset(st, 0, sizeof(*st));
	memset(pr, 0, sizeof(*pr));
	fatal_cond = 0;
	if (setjmp(fatal_jmp))
		return false;
	snp_probe_validate_unit(unit, &pv_ops, st, pr);
	return true;
}

/*
 * unaccepted.probe at VMPL0: each page validated alone; no update (CF) is recorded, not
 * fatal; a 2 MiB RMP entry tells nothing and the unit is validated at 2 MiB; a failure
 * stays fatal.
 */
TEST(pvalidate_probe_unaccepted_unit_answers_per_page)
{
	struct snp_pvalidate_stats st;
	struct unaccepted_probe pr;

	memset(&pv, 0, sizeof(pv));
	memset(&ev, 0, sizeof(ev));
	pv.noupdate_va = GiB + 3 * PAGE_SIZE;
	ASSERT(probe_unit(GiB, &st, &pr));
	EXPECT_EQ(fatal_cond, 0);
	EXPECT_EQ(pr.pages[PROBE_NOT_ACCEPTED], 511);
	EXPECT_EQ(pr.pages[PROBE_ACCEPTED], 1);
	EXPECT_EQ(pr.pages[PROBE_UNKNOWN], 0);
	EXPECT_EQ(pr.first_accepted, GiB + 3 * PAGE_SIZE);
	EXPECT_EQ(st.calls_4k, 512);
	EXPECT_EQ(st.calls_2m, 0);
	EXPECT_EQ(pv.va[511], GiB + 511 * PAGE_SIZE);
	/* Only the pages this probe validated are evicted. */
	EXPECT_EQ(ev.pages, 511);
	EXPECT_EQ(st.evicted_pages, 511);

	memset(&pv, 0, sizeof(pv));
	pv.mismatch_4k_va = GiB;
	ASSERT(probe_unit(GiB, &st, &pr));
	EXPECT_EQ(pr.pages[PROBE_UNKNOWN], 512);
	EXPECT_EQ(pr.pages[PROBE_NOT_ACCEPTED] + pr.pages[PROBE_ACCEPTED], 0);
	EXPECT_EQ(pv.calls, 2);
	EXPECT_EQ(pv.size[1], PVALIDATE_2M);

	memset(&pv, 0, sizeof(pv));
	pv.input_va = GiB + 2 * PAGE_SIZE;
	EXPECT(!probe_unit(GiB, &st, &pr));
	EXPECT_EQ(fatal_cond, FC_PVALIDATE_FAIL);
	CHECK_PANICS(probe_unit(GiB + PAGE_SIZE, &st, &pr), "not 2 MiB aligned");
}

TEST(snp_unsupported_features_follow_linux)
{
	/* SNP, SEV-ES, SEV: nothing more to support. */
	EXPECT_EQ(snp_unsupported_features(0x7), 0);
	/* DebugSwap (7) and Secure TSC (11) are handled; IBS (8), BTB (9), IBS virt (14),
	 * SMT protection (17) and IBPB on entry (23) ask nothing of the guest. */
	EXPECT_EQ(snp_unsupported_features(0x7 | 1u << 7 | 1u << 11 | 1u << 8 | 1u << 9 | 1u << 14 |
					   1u << 17 | 1u << 23), 0);
	/* Linux SNP_FEATURES_IMPL_REQ without PRESENT: vTOM, ReflectVC, restricted and
	 * alternate injection, VMPL SSS, the VMGEXIT parameter, VMSA register protection,
	 * Secure AVIC and the reserved bits. */
	EXPECT_EQ(snp_unsupported_features(0x7 | 1u << 3), 1u << 3);
	EXPECT_EQ(snp_unsupported_features(1u << 4 | 1u << 5 | 1u << 6), 1u << 4 | 1u << 5 | 1u << 6);
	EXPECT_EQ(snp_unsupported_features(1u << 10 | 1u << 12 | 1u << 16), 1u << 10 | 1u << 12 | 1u << 16);
	EXPECT_EQ(snp_unsupported_features(1u << 13 | 1u << 15 | 1u << 18), 1u << 13 | 1u << 15 | 1u << 18);
	EXPECT_EQ(snp_unsupported_features(0xfULL << 19), 0xfULL << 19);
	EXPECT_EQ(snp_unsupported_features(1ULL << 24 | 1ULL << 63), 1ULL << 24 | 1ULL << 63);
}

