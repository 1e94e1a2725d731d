/* SPDX-License-Identifier: MIT */
/* memaccept: PVALIDATE through an SVSM (SVSM Core protocol call 1) and Create/Delete vCPU answers, pure logic, host-tested. */
#include "arch/x86/sev/svsm.h"
#include "include/panic.h"

/* UNIT_SIZE and PAGE_SIZE come with types.h: 2 MiB and 4 KiB. */
#define PAGES_PER_UNIT (UNIT_SIZE / PAGE_SIZE)

static void evict_done(const struct svsm_pval_req *req, unsigned from, unsigned to, bool validate,
		       const struct svsm_pval_ops *ops, struct svsm_pval_stats *st)
{
	if (!validate || !ops->evict)
		return;
	for (unsigned i = from; i < to; i++) {
		u64 pages = SVSM_PVAL_ENTRY_2M(req->entries[i]) ? PAGES_PER_UNIT : 1;

		ops->evict(SVSM_PVAL_ENTRY_PA(req->entries[i]), pages);
		st->evicted_pages += pages;
	}
}

/*
 * Send the n entries already in req until the SVSM has done them all. The SVSM works
 * through the entries from cur_index and, on a failure, leaves cur_index at the entry
 * that failed (COCONUT core.rs core_pvalidate: `next` counts the entries done). A 2 MiB
 * entry over 4 KiB RMP entries comes back as FAIL_SIZEMISMATCH: its address goes to
 * fb[] for the caller to redo in 4 KiB entries, and the request resumes after it (as
 * Linux arch/x86/coco/sev svsm_pval_pages does). Returns how many went to fb[].
 */
static unsigned issue(struct svsm_pval_req *req, unsigned n, bool validate, const struct svsm_pval_ops *ops,
		      struct svsm_pval_stats *st, u64 *fb)
{
	unsigned nfb = 0, busy = 0;

	req->num_entries = (u16)n;
	req->cur_index = 0;
	req->reserved = 0;
	st->entries += n;
	for (;;) {
		unsigned before = req->cur_index;
		u64 rc = ops->call(req);
		unsigned idx = req->cur_index;

		st->calls++;
		if (rc == SVSM_SUCCESS) {
			evict_done(req, before, n, validate, ops, st);
			return nfb;
		}
		/* Progress only moves forward and stays inside the request. */
		if (idx < before || idx > n || (idx == n && rc != SVSM_ERR_INCOMPLETE)) {
			ops->fatal(FC_SVSM, "the SVSM reported a failing entry outside the request", idx, rc);
			return nfb;
		}
		evict_done(req, before, idx, validate, ops, st);
		/*
		 * BUSY and INCOMPLETE both mean "call again" (Linux svsm_process_result_codes
		 * answers -EAGAIN to both); INCOMPLETE may come after some entries were done, and
		 * cur_index says how many. Only calls that made no progress count against the bound.
		 */
		if (rc == SVSM_ERR_BUSY || rc == SVSM_ERR_INCOMPLETE) {
			if (idx == n)
				return nfb;
			busy = idx > before ? 0 : busy + 1;
			if (busy > SVSM_BUSY_RETRIES) {
				ops->fatal(FC_ACCEPT_RETRIES, "the SVSM stayed busy", SVSM_BUSY_RETRIES, rc);
				return nfb;
			}
			continue;
		}
		u64 e = req->entries[idx];

		if (rc == SVSM_PVALIDATE_FAIL_SIZEMISMATCH && SVSM_PVAL_ENTRY_2M(e)) {
			fb[nfb++] = SVSM_PVAL_ENTRY_PA(e);
			st->size_mismatch++;
			req->cur_index = (u16)(idx + 1);
			if (idx + 1 == n)
				return nfb;
			continue;
		}
		if (rc == SVSM_PVALIDATE_FAIL_UNCHANGED && validate) {
			ops->fatal(FC_PVALIDATE_NOUPDATE, "the SVSM found memory the guest never validated "
				   "already validated: a possible aliasing attack", SVSM_PVAL_ENTRY_PA(e), rc);
			return nfb;
		}
		if (rc >= SVSM_ERR_PROTOCOL_BASE && rc < SVSM_ERR_PROTOCOL_BASE + 0x1000) {
			ops->fatal(FC_PVALIDATE_FAIL, "PVALIDATE through the SVSM failed", SVSM_PVAL_ENTRY_PA(e), rc);
			return nfb;
		}
		ops->fatal(FC_SVSM, "the SVSM refused the PVALIDATE request", SVSM_PVAL_ENTRY_PA(e), rc);
		return nfb;
	}
}

/* Entries for [start, end): 2 MiB where aligned and allowed, else 4 KiB. */
static u64 fill(struct svsm_pval_req *req, unsigned *n, u64 a, u64 end, bool allow_2m, bool validate)
{
	while (a < end && *n < SVSM_PVAL_MAX_ENTRIES) {
		bool big = allow_2m && IS_ALIGNED(a, UNIT_SIZE) && end - a >= UNIT_SIZE;

		req->entries[(*n)++] = SVSM_PVAL_ENTRY(a, big, validate);
		a += big ? UNIT_SIZE : PAGE_SIZE;
	}
	return a;
}

void svsm_pvalidate_range(u64 start, u64 end, bool validate, struct svsm_pval_req *req,
			  const struct svsm_pval_ops *ops, struct svsm_pval_stats *st)
{
	u64 fb[SVSM_PVAL_MAX_ENTRIES], none[1];

	if (!IS_ALIGNED(start, PAGE_SIZE) || !IS_ALIGNED(end, PAGE_SIZE) || start >= end)
		panic("svsm_pvalidate_range: bad range [%llx, %llx)", start, end);
	while (start < end) {
		unsigned n = 0, nfb;

		start = fill(req, &n, start, end, true, validate);
		nfb = issue(req, n, validate, ops, st, fb);
		/*
		 * The 4 KiB redo of the refused 2 MiB entries, 512 entries each, packed into
		 * full requests across units: one call per 510 pages, not two per unit.
		 */
		u64 a = nfb ? fb[0] : 0;

		for (unsigned k = 0; k < nfb;) {
			n = 0;
			while (k < nfb && n < SVSM_PVAL_MAX_ENTRIES) {
				a = fill(req, &n, a, fb[k] + UNIT_SIZE, false, validate);
				if (a == fb[k] + UNIT_SIZE && ++k < nfb)
					a = fb[k];
			}
			/* a carries over when a unit's pages span two requests. */
			if (issue(req, n, validate, ops, st, none))
				ops->fatal(FC_SVSM, "the SVSM refused a 4 KiB entry for its size", a, 0);
		}
	}
}

enum svsm_create_answer svsm_create_vcpu_answer(u64 rax)
{
	if (rax == SVSM_SUCCESS)
		return SVSM_CREATE_OK;
	/* Both "call again", as Linux svsm_process_result_codes takes them. */
	if (rax == SVSM_ERR_BUSY || rax == SVSM_ERR_INCOMPLETE)
		return SVSM_CREATE_BUSY;
	if (rax >= SVSM_ERR_INCOMPLETE && rax <= SVSM_ERR_INVALID_REQUEST)
		return SVSM_CREATE_REFUSED;
	/* An RMPADJUST the SVSM made for the call failed; it passes the result on. */
	if (rax == SVSM_ERR_PROTOCOL_BASE + RMPADJUST_FAIL_INPUT ||
	    rax == SVSM_ERR_PROTOCOL_BASE + RMPADJUST_FAIL_PERMISSION ||
	    rax == SVSM_ERR_PROTOCOL_BASE + RMPADJUST_FAIL_SIZEMISMATCH)
		return SVSM_CREATE_REFUSED;
	return SVSM_CREATE_MALFORMED;
}

enum svsm_create_answer svsm_delete_vcpu_answer(u64 rax)
{
	/* Same result codes (SVSM spec "Result codes"), none specific to the call. */
	return svsm_create_vcpu_answer(rax);
}

/*
 * The conformance report's unaccepted.probe below VMPL0: the same page-by-page question
 * as snp_probe_validate_unit (psc.c), asked through the SVSM. Each request holds one
 * 4 KiB entry with ignore_cf clear, so that a page the RMP already has validated comes
 * back as FAIL_UNCHANGED (SVSM spec, PVALIDATE call; COCONUT core.rs core_pvalidate)
 * instead of being taken as done: recorded, and the caller keeps the unit out of use.
 * Any other answer (BUSY included) tells nothing: the page goes through
 * svsm_pvalidate_range, which retries or stops as it does for every accept.
 */
void svsm_probe_validate_unit(u64 unit, struct svsm_pval_req *req, const struct svsm_pval_ops *ops,
			      struct svsm_pval_stats *st, struct unaccepted_probe *pr)
{
	if (!IS_ALIGNED(unit, UNIT_SIZE))
		panic("svsm_probe_validate_unit: unit %llx not 2 MiB aligned", unit);
	for (u64 a = unit; a < unit + UNIT_SIZE; a += PAGE_SIZE) {
		u64 rc;

		req->num_entries = 1;
		req->cur_index = 0;
		req->reserved = 0;
		req->entries[0] = SVSM_PVAL_ENTRY(a, 0, 1);
		st->entries++;
		st->calls++;
		rc = ops->call(req);
		if (rc == SVSM_SUCCESS) {
			pr->pages[PROBE_NOT_ACCEPTED]++;
			evict_done(req, 0, 1, true, ops, st);
		} else if (rc == SVSM_PVALIDATE_FAIL_UNCHANGED && req->cur_index == 0) {
			unaccepted_probe_found_accepted(pr, a);
		} else {
			pr->pages[PROBE_UNKNOWN]++;
			svsm_pvalidate_range(a, a + PAGE_SIZE, true, req, ops, st);
		}
	}
}
