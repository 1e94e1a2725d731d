/* SPDX-License-Identifier: MIT */
/* memaccept: TDX accept splitting and status handling (pure logic, host-tested with a mock TDCALL). */
#include "arch/x86/tdx/tdx.h"
#include "include/panic.h"

/*
 * One piece at one level, with the reaction to every status the TDX module can give
 * (TDX Module ABI, TDG.MEM.PAGE.ACCEPT "Completion Status Codes"):
 *
 * SUCCESS               accepted; the module has zeroed it.
 * PAGE_SIZE_MISMATCH    the host mapped this range with smaller pages in the secure EPT
 *                       (or part was accepted at a smaller size): accept the 512 pieces
 *                       one level down. At 4 KiB there is nothing smaller: fatal. Today's
 *                       KVM maps private memory in 4 KiB pages only, so on KVM every
 *                       2 MiB attempt ends here (one wasted TDCALL per 512 accepts).
 * PAGE_ALREADY_ACCEPTED the guest's bitmap said unaccepted, so firmware or host state
 *                       disagrees with ours. The page is usable, but its contents are
 *                       not the zeroes the allocator promises: zero it, count it, warn.
 * OPERAND_BUSY          another vCPU's TDCALL or the host holds the SEPT entry's lock: the
 *                       module answers busy at once (tdx_locks.h, sept_lock_acquire_guest).
 *                       Where the host holds priority on the entry, the guest keeps getting
 *                       busy until the TD's HP_LOCK_TIMEOUT (1 s by default, 10 ms to 100 s:
 *                       td_control_structures.h) has passed since this vCPU's first such
 *                       answer; then the module exits to the host instead
 *                       (TDX_HOST_PRIORITY_BUSY_TIMEOUT, tdx_td_dispatcher.c td_call). KVM
 *                       takes that exit as an internal error and QEMU stops the VM
 *                       (tdx_handle_exit), so on KVM the guest never sees busy for longer.
 *                       A host that resumes the TD gets busy answered again: retry for
 *                       TDX_BUSY_TIMEOUT_NS, ten times the default timeout, then fatal.
 * anything else         the guest cannot reason about it: fatal.
 */
static void accept_piece(u64 gpa, unsigned level, const struct tdx_accept_ops *ops,
			 struct tdx_accept_stats *st)
{
	u64 busy_since = 0;
	bool busy = false;

	for (;;) {
		u64 status = ops->page_accept(gpa | level);
		u32 code = TDX_STATUS_CODE(status);

		st->tdcalls++;
		if (status == TDX_SUCCESS) {
			st->accepted[level]++;
			return;
		}
		if (code == TDX_PAGE_SIZE_MISMATCH && level > TDX_LEVEL_4K) {
			st->size_mismatch++;
			for (u64 i = 0; i < 512; i++)
				accept_piece(gpa + i * TDX_LEVEL_SIZE(level - 1), level - 1, ops, st);
			return;
		}
		if (code == TDX_PAGE_ALREADY_ACCEPTED) {
			st->already_accepted += TDX_LEVEL_SIZE(level) >> PAGE_SHIFT;
			ops->warn("the TDX module says this was already accepted, but the guest never "
				  "accepted it (firmware/host inconsistency); zeroing it", gpa, level);
			ops->zero(gpa, TDX_LEVEL_SIZE(level));
			return;
		}
		if (code == TDX_OPERAND_BUSY) {
			u64 now = ops->now_ns();

			if (!busy)
				busy_since = now, busy = true;
			if (now - busy_since < TDX_BUSY_TIMEOUT_NS) {
				st->busy_retries++;
				ops->relax();
				continue;
			}
		}
		ops->fatal(code == TDX_OPERAND_BUSY ? FC_ACCEPT_RETRIES : FC_ACCEPT_STATUS,
			   code == TDX_OPERAND_BUSY ? "TDG.MEM.PAGE.ACCEPT stayed busy"
						    : "TDG.MEM.PAGE.ACCEPT failed",
			   status, gpa, level);
		return;
	}
}

void tdx_accept_range(u64 start, u64 end, const struct tdx_accept_ops *ops,
		      struct tdx_accept_stats *st)
{
	if (!IS_ALIGNED(start, PAGE_SIZE) || !IS_ALIGNED(end, PAGE_SIZE) || start >= end)
		panic("tdx_accept_range: bad range [%llx, %llx)", start, end);
	while (start < end) {
		unsigned level = TDX_ACCEPT_MAX_LEVEL;

		/* The largest page the module accepts that is aligned here and fits. */
		while (level > TDX_LEVEL_4K &&
		       (!IS_ALIGNED(start, TDX_LEVEL_SIZE(level)) || end - start < TDX_LEVEL_SIZE(level)))
			level--;
		accept_piece(start, level, ops, st);
		start += TDX_LEVEL_SIZE(level);
	}
}

/*
 * The conformance report's unaccepted.probe: the unit at `unit`, which the map calls
 * unaccepted, accepted one 4 KiB page at a time so that every page answers for itself.
 * Type 15 memory is pending, so each accept must succeed. PAGE_ALREADY_ACCEPTED says the
 * firmware or host accepted the page before: it gets accept_piece's reaction (zeroed,
 * counted, a warning) and is recorded. Any other answer tells nothing: accept_piece
 * handles that page as it handles any (busy: retry; the rest: fatal). Under today's KVM
 * this costs what the normal path does (a refused 2 MiB accept, then 512 4 KiB ones).
 */
void tdx_probe_unaccepted_unit(u64 unit, const struct tdx_accept_ops *ops,
			       struct tdx_accept_stats *st, struct unaccepted_probe *pr)
{
	if (!IS_ALIGNED(unit, UNIT_SIZE))
		panic("tdx_probe_unaccepted_unit: unit %llx not 2 MiB aligned", unit);
	for (u64 a = unit; a < unit + UNIT_SIZE; a += PAGE_SIZE) {
		u64 status = ops->page_accept(a | TDX_LEVEL_4K);
		u32 code = TDX_STATUS_CODE(status);

		st->tdcalls++;
		if (status == TDX_SUCCESS) {
			st->accepted[TDX_LEVEL_4K]++;
			pr->pages[PROBE_NOT_ACCEPTED]++;
		} else if (code == TDX_PAGE_ALREADY_ACCEPTED) {
			unaccepted_probe_found_accepted(pr, a);
			st->already_accepted++;
			ops->warn("type 15 memory the TDX module says was already accepted (firmware/host "
				  "inconsistency); zeroing it", a, TDX_LEVEL_4K);
			ops->zero(a, PAGE_SIZE);
		} else {
			/* accept_piece asks again: for busy, that is the first retry. */
			st->busy_retries += code == TDX_OPERAND_BUSY;
			pr->pages[PROBE_UNKNOWN]++;
			accept_piece(a, TDX_LEVEL_4K, ops, st);
		}
	}
}
