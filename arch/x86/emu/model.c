/* SPDX-License-Identifier: MIT */
/* memaccept (test image): the page model's state transitions (pure logic, host-tested). */
#include "arch/x86/emu/model.h"
#include "arch/x86/paging.h"
#include "arch/x86/tdx/tdx.h"
#include "lib/string.h"

bool emu_model_ram_kind(u32 kind)
{
	return kind != RANGE_MMIO && kind != RANGE_RESERVED && kind != RANGE_SUSPECT;
}

static void set_unit_small(struct emu_model *m, u64 addr)
{
	for (u64 a = ALIGN_DOWN(addr, UNIT_SIZE); a < ALIGN_DOWN(addr, UNIT_SIZE) + UNIT_SIZE; a += PAGE_SIZE)
		if (emu_model_page(m, a))
			*emu_model_page(m, a) |= EMU_PG_HOST_SMALL;
}

/* A unit the host can back with one 2 MiB page: all of it RAM, none of it accepted yet. */
static bool unit_all_pending(struct emu_model *m, u64 unit)
{
	if (unit + UNIT_SIZE > m->end)
		return false;
	for (u64 a = unit; a < unit + UNIT_SIZE; a += PAGE_SIZE) {
		u8 p = *emu_model_page(m, a);

		if (!(p & EMU_PG_RAM) || (p & EMU_PG_ACCEPTED))
			return false;
	}
	return true;
}

void emu_model_init(struct emu_model *m, const struct memmap *map, u8 *storage, u64 end,
		    struct emu_faults *faults, bool host_huge)
{
	m->pages = storage;
	m->end = end;
	m->faults = faults;
	m->host_huge = host_huge;
	m->tdx_gpaw = emu_fault_find(faults, FAULT_GPAW52, 0, 0) ? EMU_TDX_GPAW_WIDE : EMU_TDX_GPAW;
	memset(storage, 0, end >> PAGE_SHIFT);
	for (unsigned i = 0; i < map->nranges; i++) {
		const struct mem_range *r = &map->ranges[i];
		u8 st = EMU_PG_RAM;

		if (!emu_model_ram_kind(r->kind) || r->start >= end)
			continue;
		if (r->kind != RANGE_UNACCEPTED)
			st |= EMU_PG_ACCEPTED | EMU_PG_PRIVATE;
		memset(&storage[r->start >> PAGE_SHIFT], st, (MIN(r->end, end) - r->start) >> PAGE_SHIFT);
	}
	/* The host's page size per unit: 4 KiB unless it backs a whole pending unit with 2 MiB. */
	for (u64 unit = 0; unit < end; unit += UNIT_SIZE)
		if (!host_huge || !unit_all_pending(m, unit))
			for (u64 i = unit >> PAGE_SHIFT; i < MIN(unit + UNIT_SIZE, end) >> PAGE_SHIFT; i++)
				storage[i] |= EMU_PG_HOST_SMALL;
	for (unsigned i = 0; i < faults->n; i++) {
		struct emu_fault *f = &faults->f[i];

		if (!emu_model_page(m, f->addr))
			continue;
		if (f->kind == FAULT_SIZE_MISMATCH) {
			set_unit_small(m, f->addr);
		} else if (f->kind == FAULT_HANDOVER_UNACCEPTED) {
			/* Accepted memory by the map, never accepted on the platform. */
			*emu_model_page(m, f->addr) &= (u8)~EMU_PG_ACCEPTED;
		} else if (f->kind == FAULT_ALREADY) {
			/* One 4 KiB page accepted: its unit is mapped with 4 KiB pages. */
			*emu_model_page(m, f->addr) |= EMU_PG_ACCEPTED | EMU_PG_PRIVATE;
			set_unit_small(m, f->addr);
		}
	}
	emu_model_changed(m, 0, end);
}

u8 *emu_model_page(struct emu_model *m, u64 pa)
{
	return m->pages && pa < m->end ? &m->pages[pa >> PAGE_SHIFT] : NULL;
}

bool emu_model_is_ram(struct emu_model *m, u64 start, u64 end)
{
	if (start >= end || end > m->end)
		return false;
	for (u64 a = start; a < end; a += PAGE_SIZE)
		if (!(*emu_model_page(m, a) & EMU_PG_RAM))
			return false;
	return true;
}

/* ------------------------------------------------------------------ TDX */

/*
 * As the TDX 1.5 module does it on a secure EPT (intel/tdx-module
 * src/td_dispatcher/vm_exits/tdg_mem_page_accept.c), with the host's page size per 2 MiB
 * unit from emu_model_init:
 * - level above 2 MiB, reserved bits 11:3, a GPA not aligned to the level: OPERAND_INVALID
 *   on RCX (verify_page_info_input(.., LVL_PT, LVL_PD));
 * - 2 MiB on a unit the host mapped with 4 KiB pages: PAGE_SIZE_MISMATCH whatever their
 *   state (the walk ends at a non-leaf entry, "case 3"), operand = the level;
 * - an accepted leaf of the requested size, or a 4 KiB request inside an accepted 2 MiB
 *   leaf: PAGE_ALREADY_ACCEPTED (a warning), operand = the level where the walk ended;
 * - a 4 KiB request inside a pending 2 MiB leaf: no status, an EPT-violation exit to the
 *   VMM ("case 1.2"); the emulated huge host demotes the leaf to 4 KiB pages and lets
 *   the TDCALL run again, as a host with huge private pages has to;
 * - reserved bits, a bad level or alignment, a shared or too wide GPA: OPERAND_INVALID;
 * - a GPA that is not guest RAM: no SEPT entry, the same EPT-violation exit, and no
 *   memory for KVM to map there: EMU_TDX_EPT_VIOLATION_EXIT (the VM stops).
 * Busy and arbitrary statuses come from emu_fault=.
 */
u64 emu_model_tdx_accept(struct emu_model *m, u64 rcx)
{
	unsigned level = rcx & TDX_ACCEPT_LEVEL_MASK;
	u64 gpa = rcx & TDX_ACCEPT_GPA_MASK;

	/*
	 * tdg_mem_page_accept.c: verify_page_info_input (level, bits 11:3 and 63:52 reserved,
	 * alignment), then check_gpa_validity(.., PRIVATE_ONLY, ..): a GPA with the shared
	 * bit (GPAW - 1) set, or beyond the GPA width, is OPERAND_INVALID on RCX too.
	 */
	if (level > TDX_ACCEPT_MAX_LEVEL || (rcx & TDX_ACCEPT_RESERVED_MASK) || (rcx >> 52) ||
	    (gpa >> (m->tdx_gpaw - 1)) || !IS_ALIGNED(gpa, TDX_LEVEL_SIZE(level))) {
		emu_count("tdx_answered_operand_invalid");
		return TDX_STATUS(TDX_OPERAND_INVALID, TDX_OPERAND_ID_RCX);
	}
	u64 end = gpa + TDX_LEVEL_SIZE(level);
	struct emu_fault *f;

	if (!emu_model_is_ram(m, gpa, end))
		return EMU_TDX_EPT_VIOLATION_EXIT;
	if ((f = emu_fault_take(m->faults, FAULT_STATUS, gpa, end)))
		return f->value;
	if (emu_fault_take(m->faults, FAULT_BUSY, gpa, end)) {
		emu_count("tdx_answered_busy");
		return TDX_STATUS(TDX_OPERAND_BUSY, TDX_OPERAND_ID_RCX);
	}
	u8 first = *emu_model_page(m, gpa);
	bool unit_small = first & EMU_PG_HOST_SMALL;

	if (level == TDX_LEVEL_2M && unit_small) {
		emu_count("tdx_answered_size_mismatch");
		return TDX_STATUS(TDX_PAGE_SIZE_MISMATCH, level);
	}
	if (first & EMU_PG_ACCEPTED) {
		emu_count("tdx_answered_already_accepted");
		return TDX_STATUS(TDX_PAGE_ALREADY_ACCEPTED, unit_small ? TDX_LEVEL_4K : TDX_LEVEL_2M);
	}
	if (level == TDX_LEVEL_4K && !unit_small) {
		emu_count("host_demoted_2m");
		set_unit_small(m, gpa);
	}
	for (u64 a = gpa; a < end; a += PAGE_SIZE) {
		u8 *p = emu_model_page(m, a);

		*p = (u8)((*p & ~EMU_PG_LEVEL_MASK) | EMU_PG_ACCEPTED | EMU_PG_PRIVATE |
			  (level << EMU_PG_LEVEL_SHIFT));
	}
	emu_model_changed(m, gpa, end);
	emu_count(level == TDX_LEVEL_2M ? "tdx_accepted_2m" : "tdx_accepted_4k");
	return 0;
}

/* ------------------------------------------------------------------ SNP */

void emu_model_rmp_set(struct emu_model *m, u64 start, u64 end, bool private)
{
	for (u64 a = start; a < end; a += PAGE_SIZE) {
		u8 *p = emu_model_page(m, a);

		if (!p)
			continue;
		if (private)
			*p |= EMU_PG_PRIVATE;
		else	/* a page given back to the hypervisor loses its validation */
			*p &= (u8) ~(EMU_PG_PRIVATE | EMU_PG_ACCEPTED | EMU_PG_LEVEL_MASK | EMU_PG_VMSA);
	}
	emu_model_changed(m, start, end);
}

/*
 * Only pages assigned to the guest can be validated; a 2 MiB validate over 4 KiB RMP
 * entries fails with FAIL_SIZEMISMATCH (AMD APM vol. 3 PVALIDATE), and under
 * emu_host=kvm every RMP entry is 4 KiB (struct emu_model); a page already in the
 * requested state sets CF and changes nothing (the model treats a partly validated
 * 2 MiB range the same way).
 */
u32 emu_model_pvalidate(struct emu_model *m, u64 va, u32 size, u32 validate, bool *no_update)
{
	u64 len = size ? UNIT_SIZE : PAGE_SIZE, end = va + len;
	u64 assigned = 0, valid = 0, small = 0;

	*no_update = false;
	if (size > 1 || validate > 1 || !IS_ALIGNED(va, len) || !emu_model_is_ram(m, va, end) ||
	    emu_fault_take(m->faults, FAULT_PVALIDATE_INPUT, va, end))
		return PVALIDATE_FAIL_INPUT;
	for (u64 a = va; a < end; a += PAGE_SIZE) {
		u8 p = *emu_model_page(m, a);

		assigned += !!(p & EMU_PG_PRIVATE);
		valid += !!(p & EMU_PG_ACCEPTED);
		small += !!(p & EMU_PG_HOST_SMALL);
	}
	if (assigned != len / PAGE_SIZE) {
		emu_count("pvalidate_not_assigned");
		return PVALIDATE_FAIL_INPUT;
	}
	if (size && (small || !m->host_huge))
		return PVALIDATE_FAIL_SIZEMISMATCH;
	if (validate ? valid != 0 : valid == 0) {
		*no_update = true;
		return PVALIDATE_OK;
	}
	for (u64 a = va; a < end; a += PAGE_SIZE) {
		u8 *p = emu_model_page(m, a);

		*p = (u8)((*p & ~(EMU_PG_ACCEPTED | EMU_PG_LEVEL_MASK)) |
			  (validate ? EMU_PG_ACCEPTED | (size << EMU_PG_LEVEL_SHIFT) : 0));
	}
	emu_model_changed(m, va, end);
	return PVALIDATE_OK;
}

/*
 * Pages [from, to) of one entry to private or shared. Pages already in that state are
 * counted: a guest that re-sends a partly done 2 MiB entry without the cur_page the
 * hypervisor left in it makes the host redo them.
 */
static void psc_pages(struct emu_model *m, u64 from, u64 to, bool private)
{
	for (u64 a = from; a < to; a += PAGE_SIZE)
		if (!!(*emu_model_page(m, a) & EMU_PG_PRIVATE) == private)
			emu_count("psc_pages_unchanged");
	emu_model_rmp_set(m, from, to, private);
}

/*
 * As KVM does it (Linux arch/x86/kvm/svm/sev.c snp_begin_psc / snp_complete_psc): a
 * header with end_entry >= 253 is INVALID_HDR; cur_entry beyond end_entry is nothing
 * left to do (status 0); an entry whose GFN is not aligned to its size or whose cur_page
 * is beyond its pages is INVALID_ENTRY; the reserved bits 63:57 are not looked at; each
 * entry starts at its cur_page, and a finished entry gets cur_page = its pages; an
 * operation other than private or shared is taken as done without a change. Private
 * and shared go to QEMU (KVM_HC_MAP_GPA_RANGE), which converts RAM and has nothing to
 * convert elsewhere: to shared that is success, to private an error, which KVM returns
 * as GENERIC (QEMU accel/kvm/kvm-all.c kvm_convert_memory). KVM finishes the whole
 * request before it resumes the guest; the psc_partial faults play a host that returns
 * early, as the GHCB spec allows (4.1.6).
 */
u64 emu_model_psc(struct emu_model *m, struct psc_desc *d)
{
	struct emu_fault *partial = emu_fault_find(m->faults, FAULT_PSC_PARTIAL, 0, 0);
	struct emu_fault *partial_pages = emu_fault_find(m->faults, FAULT_PSC_PARTIAL_PAGES, 0, 0);
	u64 budget = partial ? partial->value : PSC_MAX_ENTRIES;
	u64 page_budget = partial_pages ? partial_pages->value : UINT64_MAX;
	u16 before = d->hdr.cur_entry;

	if (d->hdr.end_entry >= PSC_MAX_ENTRIES)
		return PSC_ERROR_INVALID_HDR;
	/* A host whose conversion failed (KVM: QEMU's KVM_HC_MAP_GPA_RANGE returned an error). */
	if (emu_fault_take(m->faults, FAULT_PSC_ERROR, 0, 0))
		return PSC_ERROR_GENERIC;
	/* psc_stall: "success", and nothing moved: a host that would keep the guest here. */
	struct emu_fault *forever = emu_fault_find(m->faults, FAULT_PSC_STALL, 0, 0);

	if (forever) {
		forever->fired++;
		return 0;
	}
	/* psc_lie: every entry reported done, no page converted. */
	if ((forever = emu_fault_find(m->faults, FAULT_PSC_LIE, 0, 0))) {
		forever->fired++;
		for (u16 i = d->hdr.cur_entry; i <= d->hdr.end_entry; i++)
			d->entries[i] = (d->entries[i] & ~0xfffULL) | PSC_ENTRY_PAGES(d->entries[i]);
		d->hdr.cur_entry = (u16)(d->hdr.end_entry + 1);
		return 0;
	}
	while (d->hdr.cur_entry <= d->hdr.end_entry && budget && page_budget) {
		u64 *ep = &d->entries[d->hdr.cur_entry], e = *ep;
		u64 pa = PSC_ENTRY_GFN(e) << PAGE_SHIFT, pages = PSC_ENTRY_PAGES(e);
		u64 done = PSC_ENTRY_CUR_PAGE(e), op = PSC_ENTRY_OP(e);

		if (!IS_ALIGNED(pa, pages * PAGE_SIZE) || done > pages)
			return PSC_ERROR_INVALID_ENTRY;
		bool convert = op == PSC_OP_PRIVATE || op == PSC_OP_SHARED;
		bool ram = emu_model_is_ram(m, pa, pa + pages * PAGE_SIZE);

		if (convert && !ram && op == PSC_OP_PRIVATE)
			return PSC_ERROR_GENERIC;
		u64 todo = convert ? MIN(pages - done, page_budget) : pages - done;

		if (done)
			emu_count("psc_entries_resumed");
		if (!convert)
			emu_count("psc_entries_other_op");
		if (convert && ram)
			psc_pages(m, pa + done * PAGE_SIZE, pa + (done + todo) * PAGE_SIZE,
				  op == PSC_OP_PRIVATE);
		done += todo;
		if (convert && page_budget != UINT64_MAX)
			page_budget -= todo;
		*ep = (e & ~0xfffULL) | done;
		if (done < pages) {
			emu_count("psc_entries_split");
			break;	/* out of pages in the middle of the entry: cur_page says where */
		}
		emu_count("psc_entries");
		d->hdr.cur_entry++;
		budget--;
	}
	/* On a re-issued request (the guest already saw progress), go back behind it. */
	if (d->hdr.cur_entry <= d->hdr.end_entry && before > 0 &&
	    emu_fault_take(m->faults, FAULT_PSC_BACKWARDS, 0, 0))
		d->hdr.cur_entry = (u16)(before - 1);
	/* psc_range: a cur_entry no request has (beyond end_entry + 1). */
	if (emu_fault_take(m->faults, FAULT_PSC_RANGE, 0, 0))
		d->hdr.cur_entry = (u16)(d->hdr.end_entry + 7);
	return 0;
}

/* ------------------------------------------------------------------ page walk */

bool emu_walk_va(u64 cr3, bool la57, u64 va, u64 cbit, u64 (*read)(u64 pa), struct emu_walk *w)
{
	u64 mask = PTE_ADDR_MASK & ~cbit, table = cr3 & mask;

	for (int level = la57 ? 5 : 4; level >= 1; level--) {
		unsigned shift = PAGE_SHIFT + 9 * (unsigned)(level - 1);
		u64 e = read(table + ((va >> shift) & 511) * sizeof(u64));

		if (!(e & PTE_P))
			return false;
		/* A leaf: a 4 KiB entry, or PS in a PDE (2 MiB) or PDPTE (1 GiB). */
		if (level == 1 || ((level == 2 || level == 3) && (e & PTE_PS))) {
			u64 size = 1ULL << shift;

			/* Bit 12 of a large leaf is PAT, not address: the alignment drops it. */
			w->pa = (e & mask & ~(size - 1)) | (va & (size - 1));
			w->leaf = e;
			w->size = size;
			return true;
		}
		table = e & mask;
	}
	return false;
}

/* ------------------------------------------------------------------ observe */

bool emu_model_observe_accept(struct emu_model *m, u64 start, u64 end, u64 *bad)
{
	for (u64 a = start; a < end; a += PAGE_SIZE) {
		u8 *p = emu_model_page(m, a);

		if (!p)
			continue;
		if (!(*p & EMU_PG_RAM) || (*p & EMU_PG_ACCEPTED)) {
			*bad = a;
			emu_model_changed(m, start, a);	/* the pages before it were accepted */
			return false;
		}
		*p |= EMU_PG_ACCEPTED | EMU_PG_PRIVATE;
	}
	emu_model_changed(m, start, end);
	return true;
}
