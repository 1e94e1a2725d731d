/* SPDX-License-Identifier: MIT */
/* memaccept (test image): the emulator's page model: what the TDX module and the RMP know of each 4 KiB page. */
#ifndef ARCH_X86_EMU_MODEL_H
#define ARCH_X86_EMU_MODEL_H

#include "arch/x86/emu/faults.h"
#include "arch/x86/sev/snp.h"
#include "include/types.h"
#include "mm/memmap.h"

/* One byte per 4 KiB page. */
#define EMU_PG_RAM (1u << 0)		/* guest RAM in the firmware map */
#define EMU_PG_ACCEPTED (1u << 1)	/* TDX: accepted; SNP: validated */
#define EMU_PG_PRIVATE (1u << 2)	/* SNP: assigned to the guest in the RMP */
#define EMU_PG_LEVEL_SHIFT 3		/* accepted/validated at 0 = 4K, 1 = 2M, 2 = 1G */
#define EMU_PG_LEVEL_MASK (3u << EMU_PG_LEVEL_SHIFT)
#define EMU_PG_HOST_SMALL (1u << 5)	/* the host maps/tracks this 2 MiB unit in 4 KiB pages */
#define EMU_PG_VMSA (1u << 6)		/* SNP: RMPADJUST made this page a VMSA (APM vol. 3 RMPADJUST) */

struct emu_model {
	u8 *pages;		/* one byte per 4 KiB page below end */
	u64 end;
	struct emu_faults *faults;
	/*
	 * The host's page size. false (emu_host=kvm, the default): every page is mapped in
	 * 4 KiB pages, as today's KVM maps TDX private memory, and every SNP RMP entry is
	 * 4 KiB (KVM's guest_memfd hands out 4 KiB pages that sev_gmem_prepare() makes
	 * private one by one, Linux arch/x86/kvm/svm/sev.c). true (emu_host=huge): a 2 MiB
	 * unit that is wholly unaccepted RAM is backed by one 2 MiB page or RMP entry,
	 * everything else by 4 KiB pages.
	 */
	bool host_huge;
	/* TDX: the TD's GPA width, 48 or 52 (gpaw52); GPA bit (gpaw - 1) is the shared bit. */
	unsigned tdx_gpaw;
};

/* Not a TDX status: the module would exit to the VMM with an EPT violation instead of
 * returning (tdg_mem_page_accept.c TDACCEPT_VIOLATION); the emulated VMM stops the VM. */
#define EMU_TDX_EPT_VIOLATION_EXIT UINT64_MAX
/*
 * The TD's GPA width, as TDG.VP.INFO reports it (tdg_vp_info.c: 52 where the TD was
 * built with TDCS GPAW set, else 48): 48 by default, as KVM builds a TD whose CPUID
 * 0x80000008 gives 48 guest physical address bits (setup_tdparams_eptp_controls).
 */
#define EMU_TDX_GPAW 48
#define EMU_TDX_GPAW_WIDE 52

/*
 * The state the firmware leaves: every RAM page the firmware used or handed over is
 * accepted (TDX) or assigned and validated (SNP); unaccepted memory is pending (TDX) or
 * still shared with the hypervisor (SNP). Then the faults that describe how the host set
 * things up (size_mismatch, already) are applied. storage holds end / 4 KiB bytes.
 */
void emu_model_init(struct emu_model *m, const struct memmap *map, u8 *storage, u64 end,
		    struct emu_faults *faults, bool host_huge);
u8 *emu_model_page(struct emu_model *m, u64 pa);	/* NULL outside the model */
bool emu_model_is_ram(struct emu_model *m, u64 start, u64 end);
/* Is memory of this map kind (mm/memmap.h) RAM the model tracks? */
bool emu_model_ram_kind(u32 kind);

/*
 * TDG.MEM.PAGE.ACCEPT (TDX Module ABI): rcx = GPA | level. Returns the completion status
 * (or EMU_TDX_EPT_VIOLATION_EXIT); on success the caller zeroes the page, as the module
 * does.
 */
u64 emu_model_tdx_accept(struct emu_model *m, u64 rcx);

/*
 * PVALIDATE (AMD APM vol. 3) of the physical address the guest's page walk gave
 * (emu_walk): returns EAX; *no_update is the carry flag.
 */
u32 emu_model_pvalidate(struct emu_model *m, u64 pa, u32 size, u32 validate, bool *no_update);
/* Page State Change of [start, end) to private (assigned) or shared. */
void emu_model_rmp_set(struct emu_model *m, u64 start, u64 end, bool private);
/*
 * The hypervisor's side of one Page State Change exit on the descriptor in the shared
 * buffer: processes entries from cur_entry on, each from its cur_page on (all, or
 * psc_partial:N entries, or psc_partial_pages:N pages of them), and returns SW_EXITINFO2
 * (0, or an error for a bad header or entry, or psc_error).
 */
u64 emu_model_psc(struct emu_model *m, struct psc_desc *d);

/*
 * The CPU's walk of the guest's page tables for a linear address (AMD APM vol. 2, 5.3:
 * 4 or 5 levels, 1 GiB and 2 MiB leaves). cbit is the C-bit mask: it is not part of any
 * address. read(pa) returns the 8-byte entry at pa. False if not mapped (the CPU's #PF).
 */
struct emu_walk {
	u64 pa;		/* the translated address, C-bit removed */
	u64 leaf;	/* the leaf entry (its C-bit says private or shared) */
	u64 size;	/* 4 KiB, 2 MiB or 1 GiB */
};
bool emu_walk_va(u64 cr3, bool la57, u64 va, u64 cbit, u64 (*read)(u64 pa), struct emu_walk *w);

/* Observe mode: mark [start, end) accepted; false (with *bad) on a double accept or non-RAM. */
bool emu_model_observe_accept(struct emu_model *m, u64 start, u64 end, u64 *bad);

/* Provided by the emulator (and by the host tests): count a named event. */
void emu_count(const char *name);
/*
 * Provided by the emulator (and by the host tests): the pages in [start, end) may have
 * changed state. Every change the model makes is reported through it, so that the
 * instruction observer's page-state sanitizer holds what the model holds.
 */
void emu_model_changed(struct emu_model *m, u64 start, u64 end);

#endif
