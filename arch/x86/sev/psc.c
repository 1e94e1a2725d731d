/* SPDX-License-Identifier: MIT */
/* memaccept: SNP Page State Change batching and PVALIDATE fallback (pure logic, host-tested). */
#include "arch/x86/sev/snp.h"
#include "kernel/panic.h"

/* How many exits may pass without the hypervisor processing an entry before we give up. */
#define PSC_STALL_LIMIT 16

/*
 * One request: entries [0, n) of desc. The hypervisor may stop early and return with
 * cur_entry <= end_entry; the guest re-issues until cur_entry passes end_entry. Anything
 * else means the hypervisor is not following the protocol, and since the guest is about
 * to use this memory as private, it stops rather than guess which pages changed:
 *   - an error in SW_EXITINFO2 (the hypervisor says it failed),
 *   - end_entry changed, or cur_entry moved backwards or past end_entry + 1,
 *   - the reserved header field is not zero,
 *   - no progress for PSC_STALL_LIMIT exits in a row.
 */
static void psc_request(struct psc_desc *desc, unsigned n, const struct snp_psc_ops *ops,
			struct snp_psc_stats *st)
{
	u16 end = (u16)(n - 1), cur = 0;
	unsigned stalls = 0;

	desc->hdr = (struct psc_header){ 0, end, 0 };
	for (;;) {
		u64 err = ops->exit(desc, n);

		st->exits++;
		if (err) {
			ops->fatal(FC_PSC_ERROR, "the hypervisor failed a Page State Change", err,
				   cur);
			return;
		}
		if (desc->hdr.end_entry != end || desc->hdr.cur_entry < cur ||
		    desc->hdr.cur_entry > end + 1 || desc->hdr.reserved) {
			ops->fatal(FC_PSC_PROTOCOL, "the hypervisor broke the Page State Change protocol "
				   "(cur_entry moved back or out of range, end_entry changed, or "
				   "reserved set)",
				   ((u64)desc->hdr.cur_entry << 32) | desc->hdr.end_entry,
				   ((u64)cur << 32) | end);
			return;
		}
		if (desc->hdr.cur_entry > end)
			return;
		stalls = desc->hdr.cur_entry == cur ? stalls + 1 : 0;
		if (stalls == PSC_STALL_LIMIT) {
			ops->fatal(FC_PSC_PROTOCOL, "the hypervisor made no Page State Change progress",
				   cur, end);
			return;
		}
		cur = desc->hdr.cur_entry;
		st->reissues++;
	}
}

void snp_psc_range(u64 start, u64 end, u64 op, const struct snp_psc_ops *ops, struct snp_psc_stats *st)
{
	struct psc_desc desc;
	unsigned n = 0;

	if (!IS_ALIGNED(start, PAGE_SIZE) || !IS_ALIGNED(end, PAGE_SIZE) || start >= end)
		panic("snp_psc_range: bad range [%llx, %llx)", start, end);
	while (start < end) {
		/* 2 MiB entries wherever a whole aligned 2 MiB fits: 3 exits per GiB instead of 1,036. */
		bool big = IS_ALIGNED(start, UNIT_SIZE) && end - start >= UNIT_SIZE;

		desc.entries[n++] = PSC_ENTRY(start >> PAGE_SHIFT, op, big);
		st->entries++;
		start += big ? UNIT_SIZE : PAGE_SIZE;
		if (n == PSC_MAX_ENTRIES || start >= end) {
			psc_request(&desc, n, ops, st);
			n = 0;
		}
	}
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
	if (no_update && validate)
		ops->fatal(FC_PVALIDATE_NOUPDATE, "PVALIDATE found memory the guest never validated "
			   "already validated: a possible aliasing attack", va, size);
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
