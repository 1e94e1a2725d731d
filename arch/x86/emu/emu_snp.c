/* SPDX-License-Identifier: MIT */
/* memaccept (test image): a model of the SEV-SNP RMP and of the hypervisor behind the GHCB. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/vmsa.h"
#include "arch/x86/smp.h"
#include "arch/x86/tsc.h"
#include "mm/early.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "include/exit_codes.h"
#include "lib/string.h"

/*
 * The C-bit the model reports in CPUID 0x8000001F EBX[5:0] (emu_snp_cbit). A real part
 * uses bit 51 (or 47). Under TCG a page-table bit between the guest's physical-address
 * width and bit 51 is reserved (#PF with RSVD: QEMU target/i386/tcg/sysemu/excp_helper.c)
 * and one below it is an address bit, so such a position only works where guest RAM is
 * mapped a second time at 2^N (emu_fault=cbit=N, emu/cbit_alias.c). The default, bit 56,
 * is one of the bits 52-58 the CPU's walk ignores (AMD APM vol. 2, 5.4): TCG walks a
 * mapping with it exactly as without it, while the emulator's own walk (emu_walk_va)
 * reads it as the C-bit and checks it where the hardware would: PVALIDATE's operand must
 * be mapped private, the GHCB shared. Loads and stores are checked against the page's
 * state by the page-state sanitizer (tools/observer); CR3 cannot carry bit 56.
 */
#define EMU_SNP_CBIT (emu_snp_cbit())
#define EMU_CBIT_MASK (1ULL << EMU_SNP_CBIT)

/* KVM's lowest GHCB protocol version (Linux arch/x86/kvm/svm/sev.c GHCB_VERSION_MIN). */
#define KVM_GHCB_VERSION_MIN 1

/* CPUID 0x8000001F (AMD APM vol. 3, E.4.17): SME, SEV, SEV-ES, SEV-SNP; C-bit position. */
bool emu_snp_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	(void)subleaf;
	if (leaf == 0x80000000) {
		raw_cpuid(leaf, 0, r);
		r->eax = MAX(r->eax, 0x8000001Fu);
		return true;
	}
	if (leaf == 0x8000001F) {
		r->eax = (1u << 0) | (1u << 1) | (1u << 3) | (1u << 4);
		/*
		 * One physical-address bit lost to the C-bit (EBX[11:6]); EBX[31]
		 * (COHERENCY_SFW_NO) clear, as on parts that need the eviction after PVALIDATE.
		 */
		r->ebx = EMU_SNP_CBIT | (1u << 6);
		r->ecx = 1;
		r->edx = 1;
		return true;
	}
	return false;
}

static u64 read_phys(u64 pa)
{
	/* The kernel identity-maps RAM, page tables included. */
	return *(const volatile u64 *)(uintptr_t)pa;
}

/* The guest's current translation of va, as the CPU would walk it. */
static bool walk(u64 va, struct emu_walk *w)
{
	return emu_walk_va(read_cr3(), read_cr4() & CR4_LA57, va, EMU_CBIT_MASK, read_phys, w);
}

/*
 * PVALIDATE takes a virtual address (AMD APM vol. 3): the CPU translates it through the
 * guest's page tables and validates the page it finds. Two guest mistakes end here: an
 * address that is not mapped (the CPU raises #PF) and one mapped without the C-bit,
 * i.e. the shared view of the page, which is not the page the guest means to make
 * private. The emulator stops the guest on both, naming the mistake.
 */
void emu_snp_pvalidate(struct trap_frame *f)
{
	u32 size = (u32)f->rcx, rc;
	bool no_update;
	struct emu_walk w;

	emu_count(size == PVALIDATE_2M ? "pvalidate_2m" : "pvalidate_4k");
	/*
	 * Below VMPL0 the guest must not PVALIDATE itself: PVALIDATE is a VMPL0 operation,
	 * which is why the SVSM specification (AMD pub. 58019) offers it as a core protocol
	 * call. The emulator stops a guest that tries, so that a validation bypassing the
	 * SVSM cannot pass unnoticed.
	 */
	if (emu.svsm != EMU_SVSM_NONE) {
		emu_unlock_if_mine();
		kprintf("emu: PVALIDATE of %#llx at VMPL%u\n", f->rax, emu.guest_vmpl);
		emu_host_stops_guest(0, "PVALIDATE below VMPL0 (the guest must ask its SVSM)");
	}
	if (!walk(f->rax, &w)) {
		emu_unlock_if_mine();
		kprintf("emu: PVALIDATE of %#llx, which the guest's page tables do not map\n", f->rax);
		emu_host_stops_guest(0, "PVALIDATE of an unmapped address (#PF on hardware)");
	}
	if (!(w.leaf & EMU_CBIT_MASK) && read_cr3() != emu.fw_cr3) {
		emu_unlock_if_mine();
		kprintf("emu: PVALIDATE of %#llx through a mapping without the C-bit (entry %#llx)\n",
			f->rax, w.leaf);
		emu_host_stops_guest(0, "PVALIDATE through a mapping without the C-bit");
	}
	emu_count("pvalidate_walked");
	rc = emu_model_pvalidate(&emu.model, w.pa, size, (u32)f->rdx, &no_update);
	if (rc)
		emu_count(rc == PVALIDATE_FAIL_SIZEMISMATCH ? "pvalidate_sizemismatch" : "pvalidate_fail_input");
	if (no_update)
		emu_count("pvalidate_no_update");
	f->rax = rc;
	f->rflags = no_update ? f->rflags | 1 : f->rflags & ~1ULL;	/* CF is bit 0 */
}

/*
 * RMPADJUST (AMD APM vol. 3): the guest plays VMPL0 unless emu_svsm= says VMPL1 or 2,
 * and a guest below VMPL0 may not change the permissions of its own or a lower-numbered
 * (more privileged) level: FAIL_PERMISSION. At VMPL0 the model does not track VMPL permissions (nothing in
 * memaccept runs at another VMPL), so the change itself is not recorded. The operand
 * is walked as for PVALIDATE: an unmapped or shared VA is a guest bug.
 */
void emu_snp_rmpadjust(struct trap_frame *f)
{
	struct emu_walk w;
	u32 target = (u32)(f->rdx & 0xff);
	u64 va = f->rax;

	emu_count("rmpadjust");
	if (!walk(f->rax, &w) || !(w.leaf & EMU_CBIT_MASK)) {
		emu_unlock_if_mine();
		kprintf("emu: RMPADJUST of %#llx, not mapped private\n", f->rax);
		emu_host_stops_guest(0, "RMPADJUST of an address not mapped private");
	}
	bool may = target > emu.guest_vmpl;

	f->rax = may ? RMPADJUST_OK : RMPADJUST_FAIL_PERMISSION;
	/*
	 * The VMSA attribute (RDX bit 16) is recorded for 4 KiB pages: AP Creation's VMRUN
	 * checks it (see ap_vmrun_check). A 2 MiB RMPADJUST with it is refused: the model
	 * keeps VMSAs at 4 KiB, as the VMSA erratum asks guests to (Linux snp_alloc_vmsa_page).
	 */
	if (may) {
		u8 *p = emu_model_page(&emu.model, w.pa);
		bool set = f->rdx & RMPADJUST_VMSA, clear = !set && p && (*p & EMU_PG_VMSA);

		/*
		 * rmpadjust_unvalidated: the host reassigns the page just before (RMPUPDATE to
		 * shared and back): private again, its Validated bit cleared by the change.
		 */
		if (set && p && (*p & EMU_PG_PRIVATE) &&
		    emu_fault_take(&emu.faults, FAULT_RMPADJUST_UNVALIDATED, 0, 0)) {
			*p &= (u8)~(EMU_PG_ACCEPTED | EMU_PG_LEVEL_MASK | EMU_PG_VMSA);
			emu_model_changed(&emu.model, w.pa & ~(PAGE_SIZE - 1),
					  (w.pa & ~(PAGE_SIZE - 1)) + PAGE_SIZE);
			emu_count("host_unvalidated");
		}
		/*
		 * A page that is not validated: the instruction does not complete, the CPU raises
		 * #VC PAGE_NOT_VALIDATED (after the VMPL check, before the size check: RMPADJUST's
		 * order in the APM, as the VeriSMo model has it). A VMSA is thus always validated
		 * when it gets the attribute.
		 */
		if (p && (*p & EMU_PG_PRIVATE) && !(*p & EMU_PG_ACCEPTED)) {
			emu_count("rmpadjust_not_validated");
			emu_self()->vc_raise = SVM_EXIT_PAGE_NOT_VALIDATED;
			emu_self()->vc_raise_cr2 = va;
			f->rax = va;	/* the instruction did not complete */
			return;
		}
		if (set && (u32)f->rcx != PVALIDATE_4K) {
			f->rax = RMPADJUST_FAIL_INPUT;
		} else if ((set && emu_fault_take(&emu.faults, FAULT_RMPADJUST_VMSA_FAIL, 0, 0)) ||
			   (clear && emu_fault_take(&emu.faults, FAULT_RMPADJUST_UNVMSA_FAIL, 0, 0))) {
			/* Injected: a failure the model cannot produce by itself; nothing changes. */
			f->rax = RMPADJUST_FAIL_SIZEMISMATCH;
			emu_count("rmpadjust_fault");
		} else if (p) {
			if (set)
				*p |= EMU_PG_VMSA;
			else
				*p &= (u8)~EMU_PG_VMSA;
			emu_model_changed(&emu.model, w.pa & ~(PAGE_SIZE - 1),
					  (w.pa & ~(PAGE_SIZE - 1)) + PAGE_SIZE);
			emu_count(set ? "rmpadjust_vmsa" : "rmpadjust_plain");
		}
	}
}

/* ------------------------------------------------------------------ the hypervisor */

/*
 * A termination request ends the VM the way KVM and QEMU end it: KVM exits to QEMU with
 * KVM_SYSTEM_EVENT_SEV_TERM (Linux arch/x86/kvm/svm/sev.c), which QEMU handles as a
 * guest panic (accel/kvm/kvm-all.c) and, with the default -action panic=shutdown, quits.
 * The host logs the reason and nothing of the guest's runs after it: the guest's verdict
 * is what it printed before. So the emulator stops with its one fixed code, never with
 * one it decoded from the reason; the reason is only logged (and decoded for memaccept's
 * own set, as a host that knows it would).
 */
static __noreturn void terminate(u64 v)
{
	u32 set = (v >> 12) & 0xf, code = (v >> 16) & 0xff;
	bool ours = set == GHCB_TERM_SET_MEMACCEPT;

	/*
	 * From here the emulated host prints, with plain port I/O. (What the guest held back
	 * before it had a GHCB is lost: kernel_exit_reason flushed it through snp_io_out,
	 * which has nowhere to send it, as on real hardware.)
	 */
	emu_unlock_if_mine();
	platform_use_plain_io();
	emu_count("msr_terminate");
	kprintf("emu: the guest requested termination: reason set %#x, code %#x", set, code);
	if (ours)
		kprintf(" (memaccept: condition %s, exit code %u)", fatal_condition_name(code >> 4),
			code & 0xf);
	kprintf("\n");
	ev_begin("emu_snp_terminate");
	ev_u64("reason_set", set);
	ev_u64("reason_code", code);
	if (ours) {
		ev_str("condition", fatal_condition_name(code >> 4));
		ev_u64("code", code & 0xf);
	}
	ev_end();
	/* KVM hands QEMU the GHCB MSR value (system_event.data[0]): the request itself. */
	emu_host_stops_guest(v, "GHCB termination request");
}

/*
 * The hypervisor features (GHCB spec 2.3.1, request 0x080): upstream KVM advertises SNP
 * and AP Creation only (sev.c GHCB_HV_FT_SUPPORTED). A guest below VMPL0 needs
 * multiple VMPLs (bit 5) as well, which upstream KVM has no Run VMPL exit for; a host
 * that runs an SVSM under the guest (emu_svsm=) offers it, unless emu_fault=no_multi_vmpl
 * plays one that does not.
 */
static u64 hv_features(void)
{
	u64 f = GHCB_HV_FT_SNP | GHCB_HV_FT_SNP_AP_CREATION;

	if (emu.svsm == EMU_SVSM_PRESENT && !emu_fault_find(&emu.faults, FAULT_NO_MULTI_VMPL, 0, 0))
		f |= GHCB_HV_FT_SNP_MULTI_VMPL;
	return f;
}

/*
 * The GHCB MSR protocol (GHCB spec 2.3.1), as KVM answers it (Linux
 * arch/x86/kvm/svm/sev.c sev_handle_vmgexit_msr_protocol): SEV information with
 * versions GHCB_VERSION_MIN (1) to 2 and the C-bit; hypervisor features; GHCB GPA
 * registration, which KVM records and echoes whatever page it names (whether that page
 * can serve as a GHCB shows at its first use: check_ghcb_page); Page State Change of
 * one page, which KVM forwards to QEMU (KVM_HC_MAP_GPA_RANGE); termination. An unknown
 * request leaves the MSR as it was.
 */
static void msr_protocol(u64 v)
{
	u64 info = v & GHCB_INFO_MASK, gfn = (v >> 12) & 0xffffffffffULL;

	emu_count("vmgexit_msr_protocol");
	switch (info) {
	case GHCB_MSR_SEV_INFO_REQ:
		emu_self()->ghcb_msr = GHCB_MSR_SEV_INFO_RESP | ((u64)GHCB_PROTOCOL_MAX << 48) |
			       ((u64)KVM_GHCB_VERSION_MIN << 32) | ((u64)EMU_SNP_CBIT << 24);
		/* ghcb_version_lie: a host that speaks only GHCB protocol 1 (SEV-ES, no SNP). */
		if (emu_fault_take(&emu.faults, FAULT_GHCB_VERSION_LIE, 0, 0))
			emu_self()->ghcb_msr = GHCB_MSR_SEV_INFO_RESP | (1ULL << 48) | (1ULL << 32) |
					       ((u64)EMU_SNP_CBIT << 24);
		return;
	case GHCB_MSR_HV_FT_REQ:
		emu_self()->ghcb_msr = GHCB_MSR_HV_FT_RESP | (hv_features() << 12);
		return;
	case GHCB_MSR_PSC_REQ: {
		u64 op = (v >> 52) & 0xf, pa = gfn << PAGE_SHIFT;
		u64 err = !emu_model_is_ram(&emu.model, pa, pa + PAGE_SIZE) ||
			  (op != PSC_OP_PRIVATE && op != PSC_OP_SHARED);

		if (!err)
			emu_model_rmp_set(&emu.model, pa, pa + PAGE_SIZE, op == PSC_OP_PRIVATE);
		/* KVM snp_complete_psc_msr: a failure sets bit 63 (GHCB_MSR_PSC_RESP_ERROR). */
		emu_self()->ghcb_msr = GHCB_MSR_PSC_RESP | (err << 63);
		return;
	}
	case GHCB_MSR_REG_GPA_REQ:
		emu_count("msr_ghcb_register");
		emu_self()->ghcb_gpa = gfn << PAGE_SHIFT;
		emu_self()->ghcb_msr = GHCB_MSR_REG_GPA_RESP | emu_self()->ghcb_gpa;
		/* ghcb_register_lie: the answer names another page than the one registered. */
		if (emu_fault_take(&emu.faults, FAULT_GHCB_REGISTER_LIE, 0, 0))
			emu_self()->ghcb_msr += PAGE_SIZE;
		return;
	case GHCB_MSR_TERM_REQ:
		terminate(v);
	default:
		emu_count("msr_protocol_unknown");
		return;
	}
}

/*
 * The registers an exit carries, as KVM takes them from the GHCB (sev_es_sync_from_ghcb:
 * a field counts only if marked valid, and the valid bitmap is cleared) and puts them
 * back (sev_es_sync_to_ghcb: RAX, RBX, RCX and RDX, always, marked valid).
 */
struct exit_regs {
	u64 code, info1, info2;	/* SW_EXITCODE, SW_EXITINFO1/2 as the guest wrote them */
	u64 rax, rbx, rcx, rdx, xcr0, scratch;
	u8 valid[16];
	bool rbx_not_valid;	/* cpuid_novalid: RBX goes back without its valid bit */
	bool info_not_valid;	/* ap_create_novalid: SW_EXITINFO1/2 go back without theirs */
};

static bool was_valid(const struct exit_regs *r, u32 off)
{
	return r->valid[off / 64] & (1u << ((off / 8) % 8));
}

static u64 if_valid(u8 *g, u32 off)
{
	return ghcb_field_valid(g, off) ? *ghcb_field(g, off) : 0;
}

static void sync_from_ghcb(u8 *g, struct exit_regs *r)
{
	memcpy(r->valid, g + GHCB_VALID_BITMAP, sizeof(r->valid));
	r->rbx_not_valid = false;
	r->info_not_valid = false;
	r->code = *ghcb_field(g, GHCB_SW_EXIT_CODE);
	r->info1 = *ghcb_field(g, GHCB_SW_EXIT_INFO_1);
	r->info2 = *ghcb_field(g, GHCB_SW_EXIT_INFO_2);
	r->rax = if_valid(g, GHCB_RAX), r->rbx = if_valid(g, GHCB_RBX);
	r->rcx = if_valid(g, GHCB_RCX), r->rdx = if_valid(g, GHCB_RDX);
	r->xcr0 = if_valid(g, GHCB_XCR0), r->scratch = if_valid(g, GHCB_SW_SCRATCH);
	memset(g + GHCB_VALID_BITMAP, 0, sizeof(r->valid));
}

static void sync_to_ghcb(u8 *g, const struct exit_regs *r)
{
	ghcb_field_set(g, GHCB_RAX, r->rax);
	if (r->rbx_not_valid)
		*ghcb_field(g, GHCB_RBX) = r->rbx;
	else
		ghcb_field_set(g, GHCB_RBX, r->rbx);
	ghcb_field_set(g, GHCB_RCX, r->rcx);
	ghcb_field_set(g, GHCB_RDX, r->rdx);
	if (r->info_not_valid)
		for (u32 off = GHCB_SW_EXIT_INFO_1; off <= GHCB_SW_EXIT_INFO_2; off += 8)
			g[GHCB_VALID_BITMAP + off / 64] &= (u8)~(1u << ((off / 8) % 8));
}

/*
 * The answer in SW_EXITINFO1 and SW_EXITINFO2, both marked valid: KVM writes them with
 * ghcb_set_sw_exit_info_1/2 (asm/svm.h DEFINE_GHCB_ACCESSORS sets the valid bit), 0 and
 * 0 before it handles any exit (sev_handle_vmgexit: svm_vmgexit_success(svm, 0)), 2 and
 * the reason for one it refuses (sev_es_validate_vmgexit).
 */
static void exit_result(u8 *g, u64 info1, u64 info2)
{
	ghcb_field_set(g, GHCB_SW_EXIT_INFO_1, info1);
	ghcb_field_set(g, GHCB_SW_EXIT_INFO_2, info2);
}

/*
 * The AP Creation request as this host reads it: all of SW_EXITINFO1 31:0 at VMPL0 (upstream
 * KVM), 31:0 without the VMPL field below it (the KVM planes series; see ap_creation).
 */
static u32 ap_request(u64 info1)
{
	return emu.svsm == EMU_SVSM_PRESENT ? SNP_AP_INFO1_REQUEST_LOW(info1) : SNP_AP_INFO1_REQUEST(info1);
}

/*
 * KVM's input checks for the exits memaccept uses (sev_es_validate_vmgexit): usage 0;
 * SW_EXITCODE, SW_EXITINFO1 and SW_EXITINFO2 valid; CPUID needs RAX and RCX, and XCR0
 * for leaf 0xD; OUT needs RAX, string I/O SW_SCRATCH; PSC needs SW_SCRATCH; an exit code
 * KVM does not know is an invalid event. A failed check answers SW_EXITINFO1 = 2 with
 * the reason in SW_EXITINFO2 and resumes the guest. Returns the reason, or 0.
 */
static u64 validate(const u8 *g, const struct exit_regs *r)
{
	if (*(const u32 *)(g + GHCB_USAGE))
		return GHCB_ERR_INVALID_USAGE;
	if (!was_valid(r, GHCB_SW_EXIT_CODE) || !was_valid(r, GHCB_SW_EXIT_INFO_1) ||
	    !was_valid(r, GHCB_SW_EXIT_INFO_2))
		return GHCB_ERR_MISSING_INPUT;
	switch (r->code) {
	case SVM_EXIT_CPUID:
		if (!was_valid(r, GHCB_RAX) || !was_valid(r, GHCB_RCX) ||
		    ((u32)r->rax == CPUID_XSAVE_LEAF && !was_valid(r, GHCB_XCR0)))
			return GHCB_ERR_MISSING_INPUT;
		return 0;
	case SVM_EXIT_IOIO:
		if (r->info1 & IOIO_STR ? !was_valid(r, GHCB_SW_SCRATCH)
					: !(r->info1 & IOIO_TYPE_IN) && !was_valid(r, GHCB_RAX))
			return GHCB_ERR_MISSING_INPUT;
		return 0;
	case SVM_VMGEXIT_PSC:
		return was_valid(r, GHCB_SW_SCRATCH) ? 0 : GHCB_ERR_MISSING_INPUT;
	case SVM_EXIT_RDTSC:
		return 0;
	case SVM_EXIT_MSR:
		/* RCX; a write (any non-zero SW_EXITINFO1) also RAX and RDX. */
		if (!was_valid(r, GHCB_RCX) || (r->info1 && (!was_valid(r, GHCB_RAX) ||
							     !was_valid(r, GHCB_RDX))))
			return GHCB_ERR_MISSING_INPUT;
		return 0;
	case SVM_VMGEXIT_AP_CREATION:
		/* KVM: RAX (the SEV features) unless the request is a destroy. */
		if (ap_request(r->info1) != SNP_AP_DESTROY && !was_valid(r, GHCB_RAX))
			return GHCB_ERR_MISSING_INPUT;
		return 0;
	default:
		return GHCB_ERR_INVALID_EVENT;
	}
}

/*
 * Page State Change (GHCB spec 4.1.6): the descriptor sits in the GHCB's shared buffer
 * (KVM also takes one elsewhere in guest memory; memaccept never sends one there, so
 * the model refuses it). The answer is SW_EXITINFO1 = 0 and the PSC status in
 * SW_EXITINFO2 (KVM snp_complete_psc).
 */
static void psc(u8 *g, const struct exit_regs *r)
{
	emu_count("vmgexit_psc");
	if (r->scratch != emu_self()->ghcb_gpa + GHCB_SHARED_BUFFER ||
	    emu_fault_take(&emu.faults, FAULT_PSC_REFUSED, 0, 0)) {
		exit_result(g, GHCB_HV_RESP_ISSUE, GHCB_ERR_INVALID_SCRATCH_AREA);
		return;
	}
	exit_result(g, 0, emu_model_psc(&emu.model, (struct psc_desc *)(g + GHCB_SHARED_BUFFER)));
}

/* Port I/O to the real devices; string I/O is not modelled (memaccept does not use it). */
static void ioio(u8 *g, struct exit_regs *r)
{
	u64 info = r->info1;
	u16 port = (u16)(info >> IOIO_PORT_SHIFT);
	int size = info & IOIO_SZ8 ? 1 : info & IOIO_SZ16 ? 2 : 4;

	emu_count("vmgexit_ioio");
	if (info & (IOIO_STR | IOIO_REP)) {
		exit_result(g, GHCB_HV_RESP_ISSUE, GHCB_ERR_INVALID_INPUT);
		return;
	}
	if (info & IOIO_TYPE_IN)
		r->rax = emu_host_port_read(port, size, plain_io_in(port, size));
	else
		plain_io_out(port, (u32)r->rax, size);
}

/*
 * The MSRs KVM serves an SNP guest through the MSR exit (its usual MSR emulation, reached
 * from sev_handle_vmgexit), as far as memaccept can meet them: IA32_APIC_BASE, as QEMU's
 * vCPU holds it (writes are not modelled: refused); the TSC; the x2APIC registers only
 * where the local APIC is in x2APIC mode (KVM's local APIC refuses them otherwise, and
 * QEMU's TCG has no x2APIC). Anything else KVM would also answer is not modelled and is
 * refused, as KVM refuses an MSR it does not know: with a #GP to raise.
 */
#define APIC_BASE_X2APIC (1ULL << 10)

bool emu_snp_hv_msr(bool write, u32 msr, u64 *val)
{
	emu_count(write ? "hv_wrmsr" : "hv_rdmsr");
	if (write)
		return false;
	if (msr == MSR_APIC_BASE || (msr >= 0x800 && msr <= 0x8ff &&
				     (raw_rdmsr(MSR_APIC_BASE) & APIC_BASE_X2APIC))) {
		*val = raw_rdmsr(msr);
		return true;
	}
	if (msr == MSR_TSC) {
		*val = rdtsc_ordered();
		return true;
	}
	return false;
}

/* The MSR exit: RCX the MSR, SW_EXITINFO1 0 read / else write; a refusal asks for #GP. */
static void msr_exit(u8 *g, struct exit_regs *r)
{
	u64 v = (r->rdx << 32) | (u32)r->rax;

	emu_count("vmgexit_msr");
	if (!emu_snp_hv_msr(r->info1 != 0, (u32)r->rcx, &v)) {
		exit_result(g, GHCB_HV_RESP_EXCEPTION, EVTINJ_VALID | (EVTINJ_TYPE_EXCEPTION << 8) | 13);
		return;
	}
	if (!r->info1)
		r->rax = (u32)v, r->rdx = v >> 32;
}

static void cpuid(struct exit_regs *r)
{
	struct cpuid_regs c;

	emu_count("vmgexit_cpuid");
	/* cpuid_novalid[@LEAF] plays a host that writes RBX but does not mark it valid. */
	r->rbx_not_valid = emu_fault_take(&emu.faults, FAULT_CPUID_NOVALID, (u32)r->rax,
					  (u64)(u32)r->rax + 1) != NULL;
	emu_cpuid_values((u32)r->rax, (u32)r->rcx, &c);
	r->rax = c.eax, r->rbx = c.ebx, r->rcx = c.ecx, r->rdx = c.edx;
}

/* ------------------------------------------------------------------ AP Creation */

/* The reason the ap_create_malformed fault answers with: no GHCB_ERR_* has this value. */
#define AP_MALFORMED_REASON 0x99
/* The start-up code's stacks, and how long the emulator waits for QEMU's vCPU to run it. */
#define VMRUN_STACK (16 * KiB)
#define VMRUN_TIMEOUT_NS (1000 * 1000 * 1000ULL)

/*
 * The checks VMRUN makes of the state it loads that a guest-built VMSA can fail (AMD APM
 * vol. 2 15.5.1, "illegal state combinations"; the SVME one is why a VMSA needs it), and
 * what the emulator cannot play (it starts vCPUs in 64-bit mode only).
 */
static const char *vmsa_invalid(const struct sev_vmsa *v)
{
	bool lm = (v->efer & EFER_LME_BIT) && (v->cr0 & CR0_PG_BIT);

	if (!(v->efer & EFER_SVME))
		return "EFER.SVME is clear";
	if (lm && !(v->cr4 & CR4_PAE_BIT))
		return "EFER.LME and CR0.PG without CR4.PAE";
	if (lm && !(v->cr0 & CR0_PE_BIT))
		return "CR0.PG without CR0.PE";
	if (lm && (v->cs.attrib & VMSA_ATTR_L) && (v->cs.attrib & VMSA_ATTR_DB))
		return "CS.L and CS.D both set";
	if (!lm || !(v->cs.attrib & VMSA_ATTR_L) || !v->cr3)
		return "not a 64-bit start state (the emulator starts vCPUs in 64-bit mode only)";
	if (v->sev_features != emu_sev_status() >> SEV_STATUS_FEATURES_SHIFT)
		return "SEV features other than the guest's";
	/* The VMPL it runs at: the guest's (0, or its VMPL under the SVSM). */
	if (v->vmpl != emu.guest_vmpl)
		return "VMSA.VMPL is not the guest's VMPL";
	return NULL;
}

struct dtr {
	u16 limit;
	u64 base;
} __attribute__((packed));

/*
 * On the new vCPU, from the start-up code (arch/x86/smp.c smp_arch_tramp_install): what
 * the hardware's VMRUN of the VMSA does, loading the state the guest put there: CR4,
 * CR3, EFER (without SVME, which only the hypervisor's view has), PAT, XCR0, GDTR,
 * IDTR, the data segments and FS/GS bases, then SS:RSP, RFLAGS and CS:RIP through IRETQ.
 * Not loaded: the general registers (zero in memaccept's VMSA), debug registers, x87/SSE
 * state beyond its reset values, TR and LDTR (the guest loads its own), CR0 (checked).
 */
static __noreturn void vmrun_entry(void *slot)
{
	struct emu_vcpu *v = emu_self();
	const struct sev_vmsa *m = (const struct sev_vmsa *)(uintptr_t)v->vmsa_gpa;
	struct dtr gdtr = { (u16)m->gdtr.limit, m->gdtr.base }, idtr = { (u16)m->idtr.limit, m->idtr.base };

	write_cr4(m->cr4);
	write_cr3(m->cr3);
	raw_wrmsr(MSR_EFER, m->efer & ~EFER_SVME);
	raw_wrmsr(MSR_PAT, m->g_pat);
	if (m->cr4 & CR4_OSXSAVE)
		__asm__ volatile("xsetbv" : : "a"((u32)m->xcr0), "d"((u32)(m->xcr0 >> 32)), "c"(0));
	__asm__ volatile("lgdt %0" : : "m"(gdtr));
	__asm__ volatile("lidt %0" : : "m"(idtr));
	__asm__ volatile("mov %0, %%ds; mov %1, %%es; mov %2, %%fs; mov %3, %%gs"
			 : : "r"(m->ds.selector), "r"(m->es.selector), "r"(m->fs.selector),
			   "r"(m->gs.selector));
	raw_wrmsr(MSR_FS_BASE, m->fs.base);
	raw_wrmsr(MSR_GS_BASE, m->gs.base);
	/*
	 * The last reads of the VMSA, before the hand-over: from there on the vCPU is the
	 * guest's, whose VMPL may have no permission on its own VMSA (under an SVSM), and
	 * the page-state sanitizer judges every access it makes.
	 */
	u64 ss = m->ss.selector, rsp = m->rsp, rflags = m->rflags, cs = m->cs.selector, rip = m->rip;

	(void)slot;
	__atomic_store_n(&v->running, true, __ATOMIC_RELEASE);
	/* From the IRETQ on, the vCPU runs the guest's code (for the instruction observer). */
	emu_obs_hand_over();
	__asm__ volatile("pushq %0; pushq %1; pushq %2; pushq %3; pushq %4; iretq"
			 : : "r"(ss), "r"(rsp), "r"(rflags), "r"(cs), "r"(rip)
			 : "memory");
	__builtin_unreachable();
}

/* Intel SDM vol. 3A "Typical AP Initialization Sequence", as arch/x86/smp.c. */
#define VMRUN_INIT_WAIT_NS (10 * 1000 * 1000ULL)
#define VMRUN_SIPI_WAIT_NS (200 * 1000ULL)

static void vmrun_delay(u64 ns)
{
	for (u64 t0 = tsc_now_ns(); tsc_now_ns() - t0 < ns;)
		cpu_relax();
}

/*
 * The start-up code's stacks, one per vCPU QEMU made (by its CPU index), taken while
 * boot-time allocation works (an AP Creation may come later, from a test case, after the
 * page allocator took over).
 */
static u64 vmrun_stacks;
static u32 vmrun_nstacks;

void emu_snp_reserve_vmrun_stacks(void)
{
	vmrun_nstacks = emu.host_nvcpus;
	vmrun_stacks = early_alloc((u64)vmrun_nstacks * VMRUN_STACK, PAGE_SIZE);
}

/* Start QEMU's vCPU apic_id in the start-up code at vmrun_entry; true once it loaded the VMSA. */
static bool vmrun_start(u32 apic_id, struct emu_vcpu *t)
{
	u64 tramp = emu.bi ? emu.bi->smp_trampoline : 0;
	int idx = emu_host_vcpu_index(apic_id);
	u64 stack = vmrun_stacks + (u64)(idx < 0 ? 0 : idx) * VMRUN_STACK, top = stack + VMRUN_STACK, arg = 0;
	/*
	 * The start-up code loads CR3 in real mode, 32 bits of it: the kernel's tables
	 * through their shared view (the C-bit is an address bit only when it is below 52,
	 * emu_fault=cbit=N); their entries still carry it.
	 */
	u64 cr3 = read_cr3() & ~(EMU_CBIT_MASK & PTE_ADDR_MASK);

	if (!tramp || !vmrun_stacks || idx < 0 || (u32)idx >= vmrun_nstacks || cr3 >> 32)
		return false;
	smp_arch_tramp_install(tramp, (u32)cr3, (u64)(uintptr_t)vmrun_entry, &apic_id, &top, &arg, 1);
	emu_send_init(apic_id);
	vmrun_delay(VMRUN_INIT_WAIT_NS);
	emu_send_startup(apic_id, (u8)(tramp >> PAGE_SHIFT));
	vmrun_delay(VMRUN_SIPI_WAIT_NS);
	if (!__atomic_load_n(&t->running, __ATOMIC_ACQUIRE))
		emu_send_startup(apic_id, (u8)(tramp >> PAGE_SHIFT));
	for (u64 t0 = tsc_now_ns(); !__atomic_load_n(&t->running, __ATOMIC_ACQUIRE);) {
		if (tsc_now_ns() - t0 > VMRUN_TIMEOUT_NS)
			return false;
		cpu_relax();
	}
	return true;
}

/*
 * KVM sets the target's VMSA and kicks it (sev_snp_ap_creation); the target's next entry
 * takes the new VMSA (__sev_snp_update_protected_guest_state: a guest_memfd page, so
 * guest-private) and VMRUN loads it, which fails for a page the RMP does not mark as a
 * VMSA: KVM_EXIT_FAIL_ENTRY, which QEMU reports as "entry failed, hardware error" and
 * stops the VM on (target/i386/kvm/kvm.c kvm_arch_handle_exit). Here the real QEMU vCPU
 * is started with INIT-SIPI into the start-up code, at vmrun_entry, which plays VMRUN.
 */
static void ap_run(u32 apic_id, struct emu_vcpu *t)
{
	const u8 *p = emu_model_page(&emu.model, t->vmsa_gpa);
	const char *why;

	if (t == emu_self())
		emu_host_stops_guest(apic_id, "AP Creation for the vCPU that asks: replacing a running "
				     "vCPU's VMSA is not modelled");
	if (t->running)
		emu_host_stops_guest(apic_id, "AP Creation for a vCPU that already runs: not modelled");
	if (!p || !(*p & EMU_PG_PRIVATE) || !(*p & EMU_PG_VMSA))
		emu_host_stops_guest(t->vmsa_gpa, "VMRUN of a VMSA page that is not private with the "
				     "VMSA attribute in the RMP: KVM_EXIT_FAIL_ENTRY, QEMU stops the VM");
	why = vmsa_invalid((const struct sev_vmsa *)(uintptr_t)t->vmsa_gpa);
	if (why) {
		emu_unlock_if_mine();
		kprintf("emu: VMSA %#llx for APIC ID %u: %s\n", t->vmsa_gpa, apic_id, why);
		emu_host_stops_guest(t->vmsa_gpa, "VMRUN refused the VMSA's state: KVM_EXIT_FAIL_ENTRY, "
				     "QEMU stops the VM");
	}
	if (!vmrun_start(apic_id, t))
		emu_host_stops_guest(apic_id, "the emulator could not start QEMU's vCPU for the VMSA");
	emu_count("ap_started");
}

/* How long a vCPU that ap_create_late starts at its AP Destroy runs before the destroy. */
#define LATE_AP_RUN_NS (50 * 1000 * 1000ULL)

/*
 * AP Destroy as KVM carries it out (sev_snp_ap_creation, request 2): it forgets the
 * target's VMSA and kicks the target with KVM_REQ_UPDATE_PROTECTED_GUEST_STATE; at its
 * next entry the target takes the update (sev_snp_init_protected_guest_state), is marked
 * KVM_MP_STATE_HALTED, "offline and not runnable", and without a new VMSA stays so. Here
 * QEMU's vCPU gets an INIT, which leaves it waiting for a SIPI: it runs nothing more
 * until an AP Creation starts it again (vmrun_start). Like KVM's kick, the INIT is not
 * waited for. Not modelled: a vCPU destroying itself.
 */
static void ap_destroy(u32 apic_id, struct emu_vcpu *t)
{
	if (t->start_at_destroy) {
		t->start_at_destroy = false;
		ap_run(apic_id, t);
		/* Without the emulator's lock, so that the AP's own exits are served meanwhile. */
		emu_snp_unlock();
		vmrun_delay(LATE_AP_RUN_NS);
		emu_snp_lock();
	}
	if (t->running) {
		if (t == emu_self())
			emu_host_stops_guest(apic_id, "AP Destroy of the vCPU that asks: not modelled");
		emu_send_init(apic_id);
		__atomic_store_n(&t->running, false, __ATOMIC_RELEASE);
		emu_count("ap_destroy_halted");
	}
	t->vmsa_gpa = 0;
	emu_count("ap_destroy");
}

/* KVM's refusal (sev_handle_vmgexit: SW_EXITINFO1 = 2, SW_EXITINFO2 = invalid input). */
static void ap_refuse(u8 *g, const char *counter)
{
	emu_count(counter);
	exit_result(g, GHCB_HV_RESP_ISSUE, GHCB_ERR_INVALID_INPUT);
}

/*
 * AP Creation (GHCB spec 4.1.8) as KVM handles it (Linux arch/x86/kvm/svm/sev.c
 * sev_snp_ap_creation): the APIC ID must name a vCPU; create (now or on INIT) needs RAX
 * equal to the VM's SEV features, a page-aligned, legal GPA that is not 2 MiB aligned
 * (the VMSA erratum); destroy forgets the VMSA; any other request is refused.
 *
 * Under the SVSM (emu_svsm=1 or 2) the guest at VMPL1 or 2 names the VMPL in SW_EXITINFO1 19:16
 * (Linux vmgexit_ap_control: snp_vmpl << 16). Upstream KVM reads all of 31:0 as the
 * request and so refuses such a request; this host follows the VMPL-aware KVM posted as
 * "KVM planes" (patch 57/60 of the series of June 2026, "kvm: sev: Allow for VMPL level
 * specification in AP create": SVM_VMGEXIT_AP_VMPL_MASK = GENMASK(19, 16), the request
 * is 31:0 without those bits): a VMPL of 4 or more is invalid input, and VMPL0 may only
 * be named from VMPL0. That series then runs the VMSA the request names on the target
 * vCPU's plane for that VMPL and checks no more; a page that is no VMSA fails at VMRUN
 * (ap_vmrun_check). Only the guest's own plane is modelled: any other VMPL from 1 to 3
 * is refused here (the series asks user space to create that plane).
 */
static void ap_creation(u8 *g, struct exit_regs *r)
{
	bool svsm = emu.svsm == EMU_SVSM_PRESENT;
	u32 req = ap_request(r->info1);
	bool destroy = req == SNP_AP_DESTROY;
	u32 apic_id = SNP_AP_INFO1_APIC_ID(r->info1), vmpl = SNP_AP_INFO1_VMPL(r->info1);
	u64 gpa = r->info2;
	const char *refused = NULL;
	struct cpuid_regs c;
	struct emu_vcpu *t = NULL;

	emu_count("vmgexit_ap_creation");
	if (emu_fault_take(&emu.faults, destroy ? FAULT_AP_DESTROY_MALFORMED : FAULT_AP_CREATE_MALFORMED,
			   0, 0)) {
		exit_result(g, GHCB_HV_RESP_ISSUE, AP_MALFORMED_REASON);
		return;
	}
	/* page_address_valid: page aligned and below MAXPHYADDR (CPUID 0x80000008 EAX[7:0]). */
	raw_cpuid(0x80000008, 0, &c);
	if (emu_fault_take(&emu.faults, destroy ? FAULT_AP_DESTROY_REFUSED : FAULT_AP_CREATE_REFUSED,
			   0, 0))
		refused = destroy ? "ap_destroy_refused_fault" : "ap_create_refused_fault";
	else if (emu_host_vcpu_index(apic_id) < 0 || apic_id >= EMU_MAX_VCPUS)
		refused = "ap_create_unknown_apic_id";
	else if (req != SNP_AP_CREATE_ON_INIT && req != SNP_AP_CREATE && req != SNP_AP_DESTROY)
		refused = "ap_create_bad_request";
	else if (req != SNP_AP_DESTROY && r->rax != emu_sev_status() >> SEV_STATUS_FEATURES_SHIFT)
		refused = "ap_create_bad_features";
	else if (req != SNP_AP_DESTROY && (gpa % PAGE_SIZE || gpa >> (c.eax & 0xff)))
		refused = "ap_create_bad_vmsa_gpa";
	else if (req != SNP_AP_DESTROY && IS_ALIGNED(gpa, UNIT_SIZE))
		refused = "ap_create_vmsa_2m_aligned";
	else if (svsm && vmpl == 0)
		refused = "ap_create_vmpl0_from_below";
	else if (svsm && vmpl >= 4)
		refused = "ap_create_bad_vmpl";
	else if (svsm && vmpl != emu.guest_vmpl)
		refused = "ap_create_no_such_plane";
	if (refused) {
		ap_refuse(g, refused);
		return;
	}
	t = &emu.vcpu[apic_id];
	if (req == SNP_AP_DESTROY) {
		ap_destroy(apic_id, t);
		return;
	}
	t->vmsa_gpa = gpa;
	t->start_at_destroy = false;
	/* ap_create_novalid: carried out, the answer's SW_EXITINFO1/2 left unmarked. */
	if (emu_fault_take(&emu.faults, FAULT_AP_CREATE_NOVALID, 0, 0)) {
		emu_count("ap_create_novalid_fault");
		r->info_not_valid = true;
	}
	/* Create on INIT waits for an INIT, which the emulator does not deliver (emu_guest_ipi). */
	if (req == SNP_AP_CREATE_ON_INIT) {
		emu_count("ap_create_on_init");
		return;
	}
	/* ap_create_lost: accepted and recorded, but this host never runs the vCPU. */
	if (emu_fault_take(&emu.faults, FAULT_AP_CREATE_LOST, 0, 0)) {
		emu_count("ap_create_lost_fault");
		return;
	}
	/* ap_create_late: ... and runs it only when its AP Destroy arrives. */
	if (emu_fault_take(&emu.faults, FAULT_AP_CREATE_LATE, 0, 0)) {
		emu_count("ap_create_late_fault");
		t->start_at_destroy = true;
		return;
	}
	ap_run(apic_id, t);
}

/*
 * What the host would see of the GHCB: it reads the page's shared view. Mapped with
 * the C-bit, the guest's writes land encrypted (the host reads ciphertext); private in
 * the RMP, the host reads the shared backing, not what the guest wrote (GHCB spec 2.2:
 * the GHCB is a shared page). The guest uses its GHCB through its identity map, so that
 * mapping is walked.
 */
static void check_ghcb_page(void)
{
	struct emu_walk w;
	u8 *p = emu_model_page(&emu.model, emu_self()->ghcb_gpa);

	if (!walk(emu_self()->ghcb_gpa, &w) || w.pa != emu_self()->ghcb_gpa)
		emu_host_stops_guest(0, "VMGEXIT with a GHCB the guest does not map");
	if (w.leaf & EMU_CBIT_MASK)
		emu_host_stops_guest(0, "GHCB mapped with the C-bit: the host would read "
				     "ciphertext");
	if (!p || !(*p & EMU_PG_RAM) || (*p & EMU_PG_PRIVATE))
		emu_host_stops_guest(0, "GHCB page is not shared RAM in the RMP: the host "
				     "cannot see what the guest wrote");
}

/*
 * One VMGEXIT, as KVM handles it (sev_handle_vmgexit). A GHCB MSR value with GHCBInfo
 * set is an MSR protocol request; a GPA of 0 returns at once; an SNP guest's GHCB must
 * be the registered one, otherwise KVM fails KVM_RUN and QEMU stops the VM (here: the
 * host stops the guest).
 */
void emu_snp_vmgexit(struct trap_frame *f)
{
	struct exit_regs r;
	u64 reason;

	emu_count("vmgexit");
	if ((emu_self()->ghcb_msr & GHCB_INFO_MASK) == GHCB_MSR_VMPL_REQ) {
		emu_svsm_call(f);
		return;
	}
	if (emu_self()->ghcb_msr & GHCB_INFO_MASK) {
		msr_protocol(emu_self()->ghcb_msr);
		return;
	}
	if (!emu_self()->ghcb_msr) {
		emu_count("vmgexit_no_ghcb");
		return;
	}
	if (!emu_self()->ghcb_gpa || emu_self()->ghcb_msr != emu_self()->ghcb_gpa)
		emu_host_stops_guest(0, "VMGEXIT with a GHCB that was never registered");
	u8 *g = (u8 *)(uintptr_t)emu_self()->ghcb_gpa;

	check_ghcb_page();
	sync_from_ghcb(g, &r);
	reason = validate(g, &r);
	if (reason) {
		emu_count("vmgexit_bad_input");
		exit_result(g, GHCB_HV_RESP_ISSUE, reason);
		sync_to_ghcb(g, &r);
		return;
	}
	exit_result(g, 0, 0);
	switch (r.code) {
	case SVM_EXIT_IOIO:
		ioio(g, &r);
		break;
	case SVM_EXIT_CPUID:
		cpuid(&r);
		break;
	case SVM_EXIT_MSR:
		msr_exit(g, &r);
		break;
	case SVM_EXIT_RDTSC: {
		u64 t = rdtsc_ordered();

		emu_count("vmgexit_rdtsc");
		r.rax = (u32)t, r.rdx = t >> 32;
		break;
	}
	case SVM_VMGEXIT_PSC:
		psc(g, &r);
		break;
	case SVM_VMGEXIT_AP_CREATION:
		ap_creation(g, &r);
		break;
	}
	sync_to_ghcb(g, &r);
}
