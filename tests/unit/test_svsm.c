/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the SVSM PVALIDATE request encoding and protocol, with a mock SVSM. */
#include <setjmp.h>
#include <string.h>
#include "arch/x86/sev/svsm.h"
#include "tests/unit/unit.h"

#define MOCK_LIMIT (4 * GiB)
#define MOCK_PAGES (MOCK_LIMIT / PAGE_SIZE)

/* A mock SVSM with COCONUT's loop (core.rs core_pvalidate), over a per-4 KiB state. */
static struct {
	u8 valid[MOCK_PAGES];
	u8 small[MOCK_LIMIT / UNIT_SIZE];	/* units with 4 KiB RMP entries */
	u64 calls, entries_seen, entries_2m, entries_4k;
	u64 fail_pa, fail_rc;			/* this entry answers fail_rc */
	unsigned busy;				/* answer BUSY this many times first */
	unsigned incomplete_every;		/* answer INCOMPLETE after this many entries of a call */
	u64 whole_rc;				/* != 0: answer this without looking */
	bool bad_index;				/* report a failure beyond num_entries */
	bool saw_bad_header;
	u64 evicted;
} svsm;
static u32 fatal_cond;
static jmp_buf fatal_jmp;

static u64 mock_call(struct svsm_pval_req *req)
{
	svsm.calls++;
	if (svsm.busy) {
		svsm.busy--;
		return SVSM_ERR_BUSY;
	}
	if (svsm.whole_rc)
		return svsm.whole_rc;
	if (!req->num_entries || req->num_entries > SVSM_PVAL_MAX_ENTRIES || req->num_entries <= req->cur_index ||
	    req->reserved) {
		svsm.saw_bad_header = true;
		return SVSM_ERR_INVALID_PARAMETER;
	}
	if (svsm.bad_index) {
		req->cur_index = req->num_entries;
		return SVSM_PVALIDATE_FAIL_INPUT;
	}
	for (unsigned done = 0; req->cur_index < req->num_entries; req->cur_index++, done++) {
		u64 e = req->entries[req->cur_index], pa = SVSM_PVAL_ENTRY_PA(e);
		bool big = SVSM_PVAL_ENTRY_2M(e);
		u64 pages = big ? UNIT_SIZE / PAGE_SIZE : 1;

		if (SVSM_PVAL_ENTRY_SIZE(e) > 1 || SVSM_PVAL_ENTRY_RESERVED(e) || pa + pages * PAGE_SIZE > MOCK_LIMIT)
			return SVSM_ERR_INVALID_PARAMETER;
		if (pa == svsm.fail_pa && svsm.fail_rc)
			return svsm.fail_rc;
		if (svsm.incomplete_every && done == svsm.incomplete_every)
			return SVSM_ERR_INCOMPLETE;
		if (big && svsm.small[pa / UNIT_SIZE])
			return SVSM_PVALIDATE_FAIL_SIZEMISMATCH;
		for (u64 i = 0; i < pages; i++)
			if (svsm.valid[pa / PAGE_SIZE + i] == SVSM_PVAL_ENTRY_VALIDATE(e) &&
			    !SVSM_PVAL_ENTRY_IGNORE_CF(e))
				return SVSM_PVALIDATE_FAIL_UNCHANGED;
		for (u64 i = 0; i < pages; i++)
			svsm.valid[pa / PAGE_SIZE + i] = (u8)SVSM_PVAL_ENTRY_VALIDATE(e);
		svsm.entries_seen++;
		if (big)
			svsm.entries_2m++;
		else
			svsm.entries_4k++;
	}
	return SVSM_SUCCESS;
}

static void mock_fatal(u32 condition, const char *what, u64 a, u64 b)
{
	(void)what, (void)a, (void)b;
	fatal_cond = condition;
	longjmp(fatal_jmp, 1);
}

static void mock_evict(u64 va, u64 pages)
{
	(void)va;
	svsm.evicted += pages;
}

static const struct svsm_pval_ops ops = { mock_call, mock_fatal, mock_evict };
static struct svsm_pval_req req_buf;

static bool run(u64 start, u64 end, bool validate, struct svsm_pval_stats *st)
{
	memset(st, 0, sizeof(*st));
	fatal_cond = 0;
	if (setjmp(fatal_jmp))
		return false;
	svsm_pvalidate_range(start, end, validate, &req_buf, &ops, st);
	return true;
}

static void reset(void)
{
	memset(&svsm, 0, sizeof(svsm));
}

static u64 valid_pages(u64 start, u64 end)
{
	u64 n = 0;

	for (u64 a = start; a < end; a += PAGE_SIZE)
		n += svsm.valid[a / PAGE_SIZE];
	return n;
}

/*
 * Create vCPU's answer: 0 made the VMSA; BUSY is re-sent; the spec's generic refusals
 * (COCONUT core_create_vcpu answers INVALID_ADDRESS / INVALID_PARAMETER) and a failed
 * RMPADJUST passed on above the protocol base (COCONUT protocols/errors.rs) leave the AP
 * stopped; anything else is malformed.
 */
TEST(svsm_create_vcpu_answers)
{
	EXPECT_EQ(SVSM_CORE_CREATE_VCPU, 2);
	EXPECT_EQ(SVSM_CALL(SVSM_CORE_PROTOCOL, SVSM_CORE_CREATE_VCPU), 2);
	EXPECT_EQ(svsm_create_vcpu_answer(SVSM_SUCCESS), SVSM_CREATE_OK);
	EXPECT_EQ(svsm_create_vcpu_answer(SVSM_ERR_BUSY), SVSM_CREATE_BUSY);
	EXPECT_EQ(svsm_create_vcpu_answer(SVSM_ERR_INVALID_ADDRESS), SVSM_CREATE_REFUSED);
	EXPECT_EQ(svsm_create_vcpu_answer(SVSM_ERR_INVALID_PARAMETER), SVSM_CREATE_REFUSED);
	EXPECT_EQ(svsm_create_vcpu_answer(SVSM_ERR_INCOMPLETE), SVSM_CREATE_BUSY);
	EXPECT_EQ(svsm_create_vcpu_answer(SVSM_ERR_INVALID_REQUEST), SVSM_CREATE_REFUSED);
	EXPECT_EQ(svsm_create_vcpu_answer(SVSM_ERR_UNSUPPORTED_CALL), SVSM_CREATE_REFUSED);
	EXPECT_EQ(svsm_create_vcpu_answer(0x80000008ULL), SVSM_CREATE_MALFORMED);
	EXPECT_EQ(svsm_create_vcpu_answer(SVSM_ERR_PROTOCOL_BASE), SVSM_CREATE_MALFORMED);
	EXPECT_EQ(svsm_create_vcpu_answer(0x80001001ULL), SVSM_CREATE_REFUSED);
	EXPECT_EQ(svsm_create_vcpu_answer(0x80001002ULL), SVSM_CREATE_REFUSED);
	EXPECT_EQ(svsm_create_vcpu_answer(0x80001006ULL), SVSM_CREATE_REFUSED);
	EXPECT_EQ(svsm_create_vcpu_answer(0x80001003ULL), SVSM_CREATE_MALFORMED);
	EXPECT_EQ(svsm_create_vcpu_answer(0x80001010ULL), SVSM_CREATE_MALFORMED);
	EXPECT_EQ(svsm_create_vcpu_answer(1), SVSM_CREATE_MALFORMED);
	EXPECT_EQ(svsm_create_vcpu_answer(0x7fffffffULL), SVSM_CREATE_MALFORMED);
	EXPECT_EQ(svsm_create_vcpu_answer(~0ULL), SVSM_CREATE_MALFORMED);
}

/*
 * Delete vCPU's answer, judged as Create vCPU's: COCONUT core_delete_vcpu answers
 * INVALID_PARAMETER (not a registered VMSA in use) or INVALID_ADDRESS (RMP change
 * failed), an SVSM without the call UNSUPPORTED_CALL; BUSY is re-sent; an RMPADJUST
 * failure passed on is a refusal as for Create vCPU; nothing else is an answer the spec
 * allows.
 */
TEST(svsm_delete_vcpu_answers)
{
	EXPECT_EQ(SVSM_CORE_DELETE_VCPU, 3);
	EXPECT_EQ(SVSM_CALL(SVSM_CORE_PROTOCOL, SVSM_CORE_DELETE_VCPU), 3);
	EXPECT_EQ(svsm_delete_vcpu_answer(SVSM_SUCCESS), SVSM_CREATE_OK);
	EXPECT_EQ(svsm_delete_vcpu_answer(SVSM_ERR_BUSY), SVSM_CREATE_BUSY);
	EXPECT_EQ(svsm_delete_vcpu_answer(SVSM_ERR_INVALID_PARAMETER), SVSM_CREATE_REFUSED);
	EXPECT_EQ(svsm_delete_vcpu_answer(SVSM_ERR_INVALID_ADDRESS), SVSM_CREATE_REFUSED);
	EXPECT_EQ(svsm_delete_vcpu_answer(SVSM_ERR_UNSUPPORTED_CALL), SVSM_CREATE_REFUSED);
	EXPECT_EQ(svsm_delete_vcpu_answer(0x80000099ULL), SVSM_CREATE_MALFORMED);
	EXPECT_EQ(svsm_delete_vcpu_answer(SVSM_ERR_PROTOCOL_BASE + 1), SVSM_CREATE_REFUSED);
	EXPECT_EQ(svsm_delete_vcpu_answer(SVSM_ERR_PROTOCOL_BASE + 4), SVSM_CREATE_MALFORMED);
	EXPECT_EQ(svsm_delete_vcpu_answer(2), SVSM_CREATE_MALFORMED);
}

TEST(svsm_request_encoding)
{
	/* Linux struct svsm_pvalidate_entry: page_size 1:0, action 2, ignore_cf 3, pfn 63:12. */
	EXPECT_EQ(SVSM_PVAL_ENTRY(0x40200000ULL, 1, 1), 0x40200005ULL);
	EXPECT_EQ(SVSM_PVAL_ENTRY(0x40201000ULL, 0, 1), 0x40201004ULL);
	EXPECT_EQ(SVSM_PVAL_ENTRY(0x40201000ULL, 0, 0), 0x40201000ULL);
	EXPECT_EQ(SVSM_PVAL_ENTRY_PA(0x40200005ULL), 0x40200000ULL);
	EXPECT(SVSM_PVAL_ENTRY_2M(0x40200005ULL));
	EXPECT(!SVSM_PVAL_ENTRY_2M(0x40200004ULL));
	EXPECT_EQ(SVSM_PVAL_ENTRY_IGNORE_CF(0x8ULL), 1);
	/* RAX = protocol << 32 | call: core protocol 0, PVALIDATE 1. */
	EXPECT_EQ(SVSM_CALL(SVSM_CORE_PROTOCOL, SVSM_CORE_PVALIDATE), 1);
	EXPECT_EQ(SVSM_CALL(1, 2), 0x100000002ULL);
	/* Header {u16 num_entries, u16 cur_index, u32 reserved} and 510 entries in the buffer. */
	EXPECT_EQ(__builtin_offsetof(struct svsm_pval_req, cur_index), 2);
	EXPECT_EQ(__builtin_offsetof(struct svsm_pval_req, entries), 8);
	EXPECT_EQ(SVSM_PVAL_MAX_ENTRIES, 510);
	EXPECT_EQ(SVSM_PVALIDATE_FAIL_SIZEMISMATCH, 0x80001006ULL);
	/* GHCB MSR Run VMPL request for VMPL0 and its response code. */
	EXPECT_EQ(GHCB_MSR_VMPL_REQ_LEVEL(0), 0x16ULL);
	EXPECT_EQ(GHCB_MSR_VMPL_REQ_LEVEL(2), 0x200000016ULL);
	/* Secrets page and CC blob offsets (Linux struct snp_secrets_page, cc_blob_sev_info). */
	EXPECT_EQ(SECRETS_OFF_SVSM_CAA, 0x150);
	EXPECT_EQ(SECRETS_OFF_SVSM_GUEST_VMPL, 0x15c);
	EXPECT_EQ(CC_BLOB_OFF_CPUID_PHYS, 0x18);
	EXPECT_EQ(CC_BLOB_MAGIC, 0x45444d41u);
}

TEST(svsm_one_gib_in_two_requests_of_2m_entries)
{
	struct svsm_pval_stats st;

	reset();
	ASSERT(run(1 * GiB, 2 * GiB, true, &st));
	EXPECT_EQ(svsm.entries_2m, 512);
	EXPECT_EQ(svsm.entries_4k, 0);
	EXPECT_EQ(st.calls, 2);		/* 510 + 2 */
	EXPECT_EQ(st.entries, 512);
	EXPECT_EQ(valid_pages(1 * GiB, 2 * GiB), GiB / PAGE_SIZE);
	EXPECT_EQ(st.evicted_pages, GiB / PAGE_SIZE);
	EXPECT(!svsm.saw_bad_header);
}

TEST(svsm_unaligned_edges_use_4k_entries)
{
	struct svsm_pval_stats st;

	reset();
	ASSERT(run(1 * GiB - 3 * PAGE_SIZE, 1 * GiB + UNIT_SIZE + PAGE_SIZE, true, &st));
	EXPECT_EQ(svsm.entries_4k, 4);
	EXPECT_EQ(svsm.entries_2m, 1);
	EXPECT_EQ(valid_pages(1 * GiB - 3 * PAGE_SIZE, 1 * GiB + UNIT_SIZE + PAGE_SIZE), 3 + 512 + 1);
}

TEST(svsm_size_mismatch_redone_in_4k_and_request_resumed)
{
	struct svsm_pval_stats st;

	reset();
	svsm.small[(1 * GiB + 4 * UNIT_SIZE) / UNIT_SIZE] = 1;
	svsm.small[(1 * GiB + 9 * UNIT_SIZE) / UNIT_SIZE] = 1;	/* the last entry */
	ASSERT(run(1 * GiB, 1 * GiB + 10 * UNIT_SIZE, true, &st));
	EXPECT_EQ(st.size_mismatch, 2);
	EXPECT_EQ(svsm.entries_2m, 8);
	EXPECT_EQ(svsm.entries_4k, 1024);
	/* Every page validated once: a redone unit is not validated twice (no UNCHANGED). */
	EXPECT_EQ(valid_pages(1 * GiB, 1 * GiB + 10 * UNIT_SIZE), 10 * 512);
	/*
	 * 1 request, resumed once after the first mismatch (the second is its last entry:
	 * nothing left to resume), then the 1024 pages of the two units in 510 + 510 + 4.
	 */
	EXPECT_EQ(st.calls, 2 + 3);
	EXPECT_EQ(st.evicted_pages, 10 * 512);
}

TEST(svsm_all_4k_host_packs_the_redo_into_full_requests)
{
	struct svsm_pval_stats st;

	reset();
	memset(svsm.small, 1, sizeof(svsm.small));	/* today's KVM: 4 KiB RMP entries only */
	ASSERT(run(1 * GiB, 2 * GiB, true, &st));
	EXPECT_EQ(st.size_mismatch, 512);
	EXPECT_EQ(svsm.entries_4k, 512 * 512);
	EXPECT_EQ(valid_pages(1 * GiB, 2 * GiB), GiB / PAGE_SIZE);
	/*
	 * One call per refused 2 MiB entry (510 + 2), then the redo in full requests:
	 * 510 units = 261120 pages = 512 calls, 2 units = 1024 pages = 3 calls.
	 */
	EXPECT_EQ(st.calls, 512 + 512 + 3);
	EXPECT(!svsm.saw_bad_header);
}

TEST(svsm_rescind_sends_action_0)
{
	struct svsm_pval_stats st;

	reset();
	ASSERT(run(1 * GiB, 1 * GiB + UNIT_SIZE, true, &st));
	ASSERT(run(1 * GiB, 1 * GiB + PAGE_SIZE, false, &st));
	EXPECT_EQ(valid_pages(1 * GiB, 1 * GiB + UNIT_SIZE), 511);
	EXPECT_EQ(SVSM_PVAL_ENTRY_VALIDATE(req_buf.entries[0]), 0);
	EXPECT_EQ(st.evicted_pages, 0);
}

TEST(svsm_already_validated_is_an_aliasing_stop)
{
	struct svsm_pval_stats st;

	reset();
	svsm.valid[(1 * GiB + UNIT_SIZE) / PAGE_SIZE + 7] = 1;
	EXPECT(!run(1 * GiB, 1 * GiB + 4 * UNIT_SIZE, true, &st));
	EXPECT_EQ(fatal_cond, FC_PVALIDATE_NOUPDATE);
}

static bool probe_unit(u64 unit, struct svsm_pval_stats *st, struct unaccepted_probe *pr)
{
	memset(st, 0, sizeof(*st));
	memset(pr, 0, sizeof(*pr));
	fatal_cond = 0;
	if (setjmp(fatal_jmp))
		return false;
	svsm_probe_validate_unit(unit, &req_buf, &ops, st, pr);
	return true;
}

/*
 * unaccepted.probe below VMPL0: one 4 KiB entry per call with ignore_cf clear, so that
 * a page validated before answers FAIL_UNCHANGED (recorded, not fatal); BUSY tells
 * nothing and the page goes the normal way; a failure stays fatal.
 */
TEST(svsm_probe_unaccepted_unit_answers_per_page)
{
	struct svsm_pval_stats st;
	struct unaccepted_probe pr;

	reset();
	svsm.valid[(1 * GiB) / PAGE_SIZE + 5] = 1;
	svsm.busy = 1;
	ASSERT(probe_unit(1 * GiB, &st, &pr));
	EXPECT_EQ(pr.pages[PROBE_NOT_ACCEPTED], 510);
	EXPECT_EQ(pr.pages[PROBE_ACCEPTED], 1);
	EXPECT_EQ(pr.pages[PROBE_UNKNOWN], 1);
	EXPECT_EQ(pr.first_accepted, 1 * GiB + 5 * PAGE_SIZE);
	EXPECT_EQ(valid_pages(1 * GiB, 1 * GiB + UNIT_SIZE), 512);
	EXPECT_EQ(svsm.entries_4k, 511);
	EXPECT_EQ(svsm.entries_2m, 0);
	EXPECT_EQ(svsm.evicted, 511);
	/* 512 one-entry calls and the busy page's second one. */
	EXPECT_EQ(st.calls, 513);

	reset();
	svsm.fail_pa = 1 * GiB + 9 * PAGE_SIZE;
	svsm.fail_rc = SVSM_PVALIDATE_FAIL_INPUT;
	EXPECT(!probe_unit(1 * GiB, &st, &pr));
	EXPECT_EQ(fatal_cond, FC_PVALIDATE_FAIL);
	CHECK_PANICS(probe_unit(1 * GiB + PAGE_SIZE, &st, &pr), "not 2 MiB aligned");
}

TEST(svsm_pvalidate_failure_is_fatal)
{
	struct svsm_pval_stats st;

	reset();
	svsm.fail_pa = 1 * GiB + 2 * UNIT_SIZE;
	svsm.fail_rc = SVSM_PVALIDATE_FAIL_INPUT;
	EXPECT(!run(1 * GiB, 1 * GiB + 4 * UNIT_SIZE, true, &st));
	EXPECT_EQ(fatal_cond, FC_PVALIDATE_FAIL);
	/* A size mismatch on a 4 KiB entry is no reason to split: fatal too. */
	reset();
	svsm.fail_pa = 1 * GiB + PAGE_SIZE;
	svsm.fail_rc = SVSM_PVALIDATE_FAIL_SIZEMISMATCH;
	EXPECT(!run(1 * GiB + PAGE_SIZE, 1 * GiB + 2 * PAGE_SIZE, true, &st));
	EXPECT_EQ(fatal_cond, FC_PVALIDATE_FAIL);
}

TEST(svsm_refusals_and_protocol_breaks_are_fatal)
{
	static const u64 refusals[] = { SVSM_ERR_UNSUPPORTED_PROTOCOL, SVSM_ERR_UNSUPPORTED_CALL,
					SVSM_ERR_INVALID_ADDRESS, SVSM_ERR_INVALID_PARAMETER,
					SVSM_ERR_INVALID_REQUEST, 0x1234 };
	struct svsm_pval_stats st;

	for (unsigned i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		reset();
		svsm.whole_rc = refusals[i];
		EXPECT(!run(1 * GiB, 1 * GiB + UNIT_SIZE, true, &st));
		EXPECT_EQ(fatal_cond, FC_SVSM);
	}
	reset();
	svsm.bad_index = true;
	EXPECT(!run(1 * GiB, 1 * GiB + UNIT_SIZE, true, &st));
	EXPECT_EQ(fatal_cond, FC_SVSM);
}

TEST(svsm_busy_is_retried_within_a_bound)
{
	struct svsm_pval_stats st;

	reset();
	svsm.busy = 5;
	ASSERT(run(1 * GiB, 1 * GiB + UNIT_SIZE, true, &st));
	EXPECT_EQ(st.calls, 6);
	EXPECT_EQ(valid_pages(1 * GiB, 1 * GiB + UNIT_SIZE), 512);
	reset();
	svsm.busy = 100000;
	EXPECT(!run(1 * GiB, 1 * GiB + UNIT_SIZE, true, &st));
	EXPECT_EQ(fatal_cond, FC_ACCEPT_RETRIES);
	/* INCOMPLETE without progress, for ever: bounded as BUSY. */
	reset();
	svsm.whole_rc = SVSM_ERR_INCOMPLETE;
	EXPECT(!run(1 * GiB, 1 * GiB + UNIT_SIZE, true, &st));
	EXPECT_EQ(fatal_cond, FC_ACCEPT_RETRIES);
}

/*
 * INCOMPLETE after some entries: call again from cur_index (Linux
 * svsm_process_result_codes: -EAGAIN). Every page ends validated and evicted once, and
 * calls that made progress do not count against the retry bound.
 */
TEST(svsm_incomplete_is_resumed_from_cur_index)
{
	struct svsm_pval_stats st;

	reset();
	svsm.incomplete_every = 3;
	ASSERT(run(1 * GiB, 1 * GiB + 200 * UNIT_SIZE + 5 * PAGE_SIZE, true, &st));
	EXPECT_EQ(valid_pages(1 * GiB, 1 * GiB + 200 * UNIT_SIZE + 5 * PAGE_SIZE), 200 * 512 + 5);
	EXPECT_EQ(svsm.evicted, 200 * 512 + 5);
	EXPECT_EQ(svsm.entries_seen, 205);
	/* 205 entries, 3 per call, so 69 calls (far more than the 64 allowed without progress). */
	EXPECT_EQ(st.calls, 69);
}
