/* SPDX-License-Identifier: MIT */
/* memaccept: SNP Page State Change batching and PVALIDATE fallback (pure logic, host-tested). */
#include "arch/x86/sev/snp.h"
#include "include/panic.h"
#include "lib/string.h"

/* How many exits may pass without the hypervisor processing an entry before we give up. */
#define PSC_STALL_LIMIT 16

/* The protocol check after each exit; returns what is wrong, or NULL. */
static const char *psc_check(const struct psc_desc *desc, unsigned n, u64 *sent, u16 cur, bool *moved)
{
	u16 end = (u16)(n - 1);

	if (desc->hdr.end_entry != end || desc->hdr.cur_entry < cur || desc->hdr.cur_entry > end + 1 ||
	    desc->hdr.reserved)
		return "cur_entry moved back or out of range, end_entry changed, or reserved set";
	*moved = desc->hdr.cur_entry != cur;
	for (unsigned i = 0; i < n; i++) {
		u64 e = desc->entries[i];

		/* Only cur_page is the hypervisor's to change, and only forwards. */
		if ((e & ~0xfffULL) != (sent[i] & ~0xfffULL) || PSC_ENTRY_CUR_PAGE(e) > PSC_ENTRY_PAGES(e) ||
		    PSC_ENTRY_CUR_PAGE(e) < PSC_ENTRY_CUR_PAGE(sent[i]))
			return "an entry changed, or its cur_page moved back or past the entry";
		*moved |= e != sent[i];
		sent[i] = e;
	}
	return NULL;
}

/*
 * One request: entries [0, n) of desc. The hypervisor may stop early and return with
 * cur_entry <= end_entry, possibly in the middle of a 2 MiB entry whose cur_page then
 * says how far it got; the guest re-issues the request as the hypervisor left it (entries
 * included, so that cur_page survives) until cur_entry passes end_entry. Anything else
 * means the hypervisor is not following the protocol, and since the guest is about to
 * use this memory as private, it stops rather than guess which pages changed:
 *   - an error in SW_EXITINFO2 (the hypervisor says it failed),
 *   - end_entry changed, or cur_entry moved backwards or past end_entry + 1,
 *   - the reserved header field is not zero,
 *   - an entry changed other than by moving its cur_page forward (at most to its end),
 *   - no progress for PSC_STALL_LIMIT exits in a row.
 */
static void psc_request(struct psc_desc *desc, unsigned n, const struct snp_psc_ops *ops,
			struct snp_psc_stats *st)
{
	u64 sent[PSC_MAX_ENTRIES];
	u16 end = (u16)(n - 1), cur = 0;
	unsigned stalls = 0;

	desc->hdr = (struct psc_header){ 0, end, 0 };
	memcpy(sent, desc->entries, n * sizeof(u64));
	for (;;) {
		u64 err = ops->exit(desc, n);
		const char *bad;
		bool moved = false;

		st->exits++;
		if (err) {
			ops->fatal(FC_PSC_ERROR, "the hypervisor failed a Page State Change", err,
				   cur);
			return;
		}
		bad = psc_check(desc, n, sent, cur, &moved);
		if (bad) {
			ops->fatal(FC_PSC_PROTOCOL, "the hypervisor broke the Page State Change protocol "
				   "(cur_entry moved back or out of range, end_entry changed, reserved "
				   "set, or an entry changed)",
				   ((u64)desc->hdr.cur_entry << 32) | desc->hdr.end_entry,
				   ((u64)cur << 32) | end);
			return;
		}
		if (desc->hdr.cur_entry > end)
			return;
		stalls = moved ? 0 : stalls + 1;
		if (stalls == PSC_STALL_LIMIT) {
			ops->fatal(FC_PSC_PROTOCOL, "the hypervisor made no Page State Change progress",
				   cur, end);
			return;
		}
		cur = desc->hdr.cur_entry;
		st->reissues++;
	}
}

static void psc_add(struct psc_desc *desc, unsigned *n, u64 addr, u64 op, bool big,
		    const struct snp_psc_ops *ops, struct snp_psc_stats *st)
{
	desc->entries[(*n)++] = PSC_ENTRY(addr >> PAGE_SHIFT, op, big);
	st->entries++;
	if (*n == PSC_MAX_ENTRIES) {
		psc_request(desc, *n, ops, st);
		*n = 0;
	}
}

void snp_psc_range(u64 start, u64 end, u64 op, const struct snp_psc_ops *ops, struct snp_psc_stats *st,
		   struct snp_psc_ahead *ahead)
{
	struct psc_desc desc;
	unsigned n = 0;

	if (!IS_ALIGNED(start, PAGE_SIZE) || !IS_ALIGNED(end, PAGE_SIZE) || start >= end)
		panic("snp_psc_range: bad range [%llx, %llx)", start, end);
	while (start < end) {
		/* Made private ahead of time by an earlier call: nothing to send. */
		if (ahead && op == PSC_OP_PRIVATE && start >= ahead->start && start < ahead->end) {
			start = MIN(end, ahead->end);
			continue;
		}
		/* 2 MiB entries wherever a whole aligned 2 MiB fits: 3 exits per GiB instead of 1,036. */
		bool big = IS_ALIGNED(start, UNIT_SIZE) && end - start >= UNIT_SIZE;

		psc_add(&desc, &n, start, op, big, ops, st);
		start += big ? UNIT_SIZE : PAGE_SIZE;
	}
	if (!n)
		return;
	/*
	 * The last request has room: fill it with the units the caller will accept next,
	 * so that eager acceptance sends full requests (2.02 exits per GiB) however its runs
	 * are cut. Converting a unit to private early is what its accept would do anyway;
	 * it is validated only when its own accept comes.
	 */
	if (ahead && ops->ahead && op == PSC_OP_PRIVATE && IS_ALIGNED(end, UNIT_SIZE)) {
		bool extend = ahead->start < ahead->end && ahead->start <= end && end <= ahead->end;
		u64 u = extend ? ahead->end : end, next, first = 0;

		while (n < PSC_MAX_ENTRIES && ops->ahead(u, &next) && next >= u && next + UNIT_SIZE > next) {
			desc.entries[n++] = PSC_ENTRY(next >> PAGE_SHIFT, op, 1);
			st->entries++;
			st->ahead_units++;
			first = first ? first : next;
			u = next + UNIT_SIZE;
		}
		if (first) {
			if (!extend)
				ahead->start = first;
			ahead->end = u;
		}
	}
	psc_request(&desc, n, ops, st);
}

/*
 * PVALIDATE results (AMD APM vol. 3, PVALIDATE):
 *   0, CF clear        validated (or rescinded) as asked.
 *   CF set             the RMP entry already was in that state. For memory the guest
 *                      never validated this means someone validated it before, a
 *                      possible aliasing of a page already in use: stop.
 *   FAIL_SIZEMISMATCH  a 2 MiB validate over 4 KiB RMP entries: validate the 512 pages.
 *   FAIL_INPUT, other  the guest cannot go on.
 */
static void pvalidate_one(u64 va, u32 size, bool validate, const struct snp_pvalidate_ops *ops,
			  struct snp_pvalidate_stats *st)
{
	bool no_update = false;
	u32 rc = ops->pvalidate(va, size, validate, &no_update);

	if (size == PVALIDATE_2M)
		st->calls_2m++;
	else
		st->calls_4k++;
	if (rc == PVALIDATE_FAIL_SIZEMISMATCH && size == PVALIDATE_2M) {
		st->size_mismatch++;
		for (u64 i = 0; i < UNIT_SIZE / PAGE_SIZE; i++)
			pvalidate_one(va + i * PAGE_SIZE, PVALIDATE_4K, validate, ops, st);
		return;
	}
	if (rc != PVALIDATE_OK) {
		ops->fatal(FC_PVALIDATE_FAIL, "PVALIDATE failed", va, rc);
		return;
	}
	if (no_update && validate) {
		ops->fatal(FC_PVALIDATE_NOUPDATE, "PVALIDATE found memory the guest never validated "
			   "already validated: a possible aliasing attack", va, size);
		return;
	}
	if (validate && ops->evict) {
		u64 pages = size == PVALIDATE_2M ? UNIT_SIZE / PAGE_SIZE : 1;

		ops->evict(va, pages);
		st->evicted_pages += pages;
	}
}

void snp_pvalidate_range(u64 start, u64 end, bool validate, const struct snp_pvalidate_ops *ops,
			 struct snp_pvalidate_stats *st)
{
	if (!IS_ALIGNED(start, PAGE_SIZE) || !IS_ALIGNED(end, PAGE_SIZE) || start >= end)
		panic("snp_pvalidate_range: bad range [%llx, %llx)", start, end);
	while (start < end) {
		bool big = IS_ALIGNED(start, UNIT_SIZE) && end - start >= UNIT_SIZE;

		pvalidate_one(start, big ? PVALIDATE_2M : PVALIDATE_4K, validate, ops, st);
		start += big ? UNIT_SIZE : PAGE_SIZE;
	}
}

/*
 * The conformance report's unaccepted.probe at VMPL0: the unit at `unit`, already made
 * private (Page State Change, as accept does), validated one 4 KiB page at a time so that
 * every page answers for itself. Type 15 memory is not validated, so each PVALIDATE must
 * change the RMP. rFLAGS.CF set (no update) says the page was validated before: recorded,
 * and the caller keeps the unit out of use (the normal path stops the guest instead, as
 * Linux does). FAIL_SIZEMISMATCH on the first page (a 2 MiB RMP entry) tells nothing:
 * the unit is validated as pvalidate_one validates it. Anything else: pvalidate_one's
 * reaction for that page (fatal). Under today's KVM (4 KiB RMP entries) this costs what
 * the normal path does: a refused 2 MiB PVALIDATE, then 512 4 KiB ones.
 */
void snp_probe_validate_unit(u64 unit, const struct snp_pvalidate_ops *ops,
			     struct snp_pvalidate_stats *st, struct unaccepted_probe *pr)
{
	if (!IS_ALIGNED(unit, UNIT_SIZE))
		panic("snp_probe_validate_unit: unit %llx not 2 MiB aligned", unit);
	for (u64 a = unit; a < unit + UNIT_SIZE; a += PAGE_SIZE) {
		bool no_update = false;
		u32 rc = ops->pvalidate(a, PVALIDATE_4K, 1, &no_update);

		st->calls_4k++;
		if (rc == PVALIDATE_OK && !no_update) {
			pr->pages[PROBE_NOT_ACCEPTED]++;
			if (ops->evict) {
				ops->evict(a, 1);
				st->evicted_pages++;
			}
		} else if (rc == PVALIDATE_OK) {
			unaccepted_probe_found_accepted(pr, a);
		} else if (rc == PVALIDATE_FAIL_SIZEMISMATCH && a == unit) {
			pr->pages[PROBE_UNKNOWN] += UNIT_SIZE / PAGE_SIZE;
			pvalidate_one(unit, PVALIDATE_2M, true, ops, st);
			return;
		} else {
			pr->pages[PROBE_UNKNOWN]++;
			pvalidate_one(a, PVALIDATE_4K, true, ops, st);
		}
	}
}
