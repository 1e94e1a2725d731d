/* SPDX-License-Identifier: MIT */
/* memaccept (test image): a model of the SEV-SNP RMP and of the hypervisor behind the GHCB. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/paging.h"
#include "arch/x86/sev/snp.h"
#include "drivers/console.h"
#include "include/exit_codes.h"
#include "kernel/report.h"
#include "lib/string.h"

/*
 * The C-bit the model reports in CPUID 0x8000001F EBX[5:0]. A real part uses bit 51 (or
 * 47), but under TCG a page-table bit between the guest's physical-address width and
 * bit 51 is reserved (#PF with RSVD: QEMU target/i386/tcg/sysemu/excp_helper.c) and one
 * below it is an address bit, so no such position would let TCG walk the kernel's
 * mappings. Bits 52-58 are ignored by the CPU's walk (AMD APM vol. 2, 5.4): TCG walks a
 * mapping with bit 56 exactly as without it, while the emulator's own walk (emu_walk_va)
 * reads it as the C-bit and checks it where the hardware would: PVALIDATE's operand must
 * be mapped private, the GHCB shared. Limit: memory accesses themselves are not
 * checked (TCG neither encrypts nor checks the RMP), and CR3 cannot carry bit 56.
 */
#define EMU_SNP_CBIT 56
#define EMU_CBIT_MASK (1ULL << EMU_SNP_CBIT)

/* GHCB spec 4.1 (table "SW_EXITINFO1 error codes"): 2 = error, reason in SW_EXITINFO2. */
#define GHCB_HV_RESP_ISSUE 2
#define GHCB_ERR_MISSING_INPUT 4	/* Linux asm/sev-common.h; KVM sev_es_validate_vmgexit */

/* CPUID 0x8000001F (AMD APM vol. 3, E.4.17): SME, SEV, SEV-ES, SEV-SNP; C-bit position. */
bool emu_snp_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	(void)subleaf;
	if (leaf == 0x80000000) {
		cpuid_raw(leaf, 0, r);
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
	if (!walk(f->rax, &w)) {
		kprintf("emu: PVALIDATE of %#llx, which the guest's page tables do not map\n", f->rax);
		emu_host_stops_guest(EXIT_EXCEPTION, "PVALIDATE of an unmapped address (#PF on hardware)");
	}
	if (!(w.leaf & EMU_CBIT_MASK)) {
		kprintf("emu: PVALIDATE of %#llx through a mapping without the C-bit (entry %#llx)\n",
			f->rax, w.leaf);
		emu_host_stops_guest(EXIT_PLATFORM_FATAL, "PVALIDATE through a mapping without the C-bit");
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
	emu_host_stops_guest(EXIT_HOST_STOPPED, "GHCB termination request");
}

/* The GHCB MSR protocol (GHCB spec 2.3.1). */
static void msr_protocol(u64 v)
{
	u64 info = v & GHCB_INFO_MASK, gfn = (v >> 12) & 0xffffffffffULL;

	emu_count("vmgexit_msr_protocol");
	switch (info) {
	case GHCB_MSR_SEV_INFO_REQ:
		emu.ghcb_msr = GHCB_MSR_SEV_INFO_RESP | ((u64)GHCB_PROTOCOL_MAX << 48) |
			       ((u64)GHCB_PROTOCOL_MIN << 32) | ((u64)EMU_SNP_CBIT << 24);
		return;
	case GHCB_MSR_HV_FT_REQ:
		emu.ghcb_msr = GHCB_MSR_HV_FT_RESP | (GHCB_HV_FT_SNP << 12);
		return;
	case GHCB_MSR_PSC_REQ: {
		u64 op = (v >> 52) & 0xf, pa = gfn << PAGE_SHIFT;
		u64 err = !emu_model_is_ram(&emu.model, pa, pa + PAGE_SIZE) ||
			  (op != PSC_OP_PRIVATE && op != PSC_OP_SHARED);

		if (!err)
			emu_model_rmp_set(&emu.model, pa, pa + PAGE_SIZE, op == PSC_OP_PRIVATE);
		emu.ghcb_msr = GHCB_MSR_PSC_RESP | (err << 32);
		return;
	}
	case GHCB_MSR_REG_GPA_REQ: {
		u64 pa = gfn << PAGE_SHIFT;
		u8 *p = emu_model_page(&emu.model, pa);

		/* Only a shared page can be a GHCB: answer with another GFN to refuse. */
		if (p && (*p & EMU_PG_RAM) && !(*p & EMU_PG_PRIVATE)) {
			emu.ghcb_gpa = pa;
			emu.ghcb_msr = GHCB_MSR_REG_GPA_RESP | pa;
		} else {
			emu.ghcb_msr = GHCB_MSR_REG_GPA_RESP | ~GHCB_INFO_MASK;
		}
		return;
	}
	case GHCB_MSR_TERM_REQ:
		terminate(v);
	default:
		emu_count("msr_protocol_unknown");
		emu.ghcb_msr = 0;
		return;
	}
}

/* Page State Change (GHCB spec 4.1.6): the descriptor must sit in the GHCB's shared buffer. */
static void psc(u8 *g)
{
	struct psc_desc *d = (struct psc_desc *)(g + GHCB_SHARED_BUFFER);

	emu_count("vmgexit_psc");
	*ghcb_field(g, GHCB_SW_EXIT_INFO_1) = 0;
	*ghcb_field(g, GHCB_SW_EXIT_INFO_2) = *ghcb_field(g, GHCB_SW_SCRATCH) == emu.ghcb_gpa + GHCB_SHARED_BUFFER
					       ? emu_model_psc(&emu.model, d) : PSC_ERROR_INVALID_HDR;
}

static void ioio(u8 *g)
{
	u64 info = *ghcb_field(g, GHCB_SW_EXIT_INFO_1);
	u16 port = (u16)(info >> IOIO_PORT_SHIFT);
	int size = info & IOIO_SZ8 ? 1 : info & IOIO_SZ16 ? 2 : 4;

	emu_count("vmgexit_ioio");
	if (info & (IOIO_STR | IOIO_REP) || (!(info & IOIO_TYPE_IN) && !ghcb_field_valid(g, GHCB_RAX))) {
		*ghcb_field(g, GHCB_SW_EXIT_INFO_1) = 1;
		return;
	}
	if (info & IOIO_TYPE_IN)
		ghcb_field_set(g, GHCB_RAX, plain_io_in(port, size));
	else
		plain_io_out(port, (u32)*ghcb_field(g, GHCB_RAX), size);
	*ghcb_field(g, GHCB_SW_EXIT_INFO_1) = 0;
}

/* KVM's answer to a GHCB it rejects: SW_EXITINFO1 = 2, the reason in SW_EXITINFO2. */
static void bad_input(u8 *g, const char *what)
{
	emu_count(what);
	*ghcb_field(g, GHCB_SW_EXIT_INFO_1) = GHCB_HV_RESP_ISSUE;
	*ghcb_field(g, GHCB_SW_EXIT_INFO_2) = GHCB_ERR_MISSING_INPUT;
}

/*
 * As KVM (sev_es_validate_vmgexit, SVM_EXIT_CPUID): RAX and RCX must be valid, and for
 * leaf 0xD also XCR0; otherwise the exit fails with MISSING_INPUT. The answer marks the
 * four registers valid (unless cpuid_novalid plays a host that does not).
 */
static void cpuid(u8 *g)
{
	struct cpuid_regs r;
	u32 leaf = (u32)*ghcb_field(g, GHCB_RAX);

	emu_count("vmgexit_cpuid");
	if (!ghcb_field_valid(g, GHCB_RAX) || !ghcb_field_valid(g, GHCB_RCX) ||
	    (leaf == CPUID_XSAVE_LEAF && !ghcb_field_valid(g, GHCB_XCR0))) {
		bad_input(g, "cpuid_missing_input");
		return;
	}
	emu_cpuid_values(leaf, (u32)*ghcb_field(g, GHCB_RCX), &r);
	memset(g + GHCB_VALID_BITMAP, 0, 16);
	ghcb_field_set(g, GHCB_RAX, r.eax);
	if (emu_fault_take(&emu.faults, FAULT_CPUID_NOVALID, 0, 0))
		*ghcb_field(g, GHCB_RBX) = r.ebx;	/* written, but not marked valid */
	else
		ghcb_field_set(g, GHCB_RBX, r.ebx);
	ghcb_field_set(g, GHCB_RCX, r.ecx);
	ghcb_field_set(g, GHCB_RDX, r.edx);
	*ghcb_field(g, GHCB_SW_EXIT_INFO_1) = 0;
}

/*
 * What the host would see of the GHCB: it reads the page's shared view. Mapped with
 * the C-bit, the guest's writes land encrypted (the host reads ciphertext); private in
 * the RMP, the host cannot use the page at all (GHCB spec 2.2: the GHCB is a shared
 * page). The guest uses its GHCB through its identity map, so that mapping is walked.
 */
static void check_ghcb_page(void)
{
	struct emu_walk w;
	u8 *p = emu_model_page(&emu.model, emu.ghcb_gpa);

	if (!walk(emu.ghcb_gpa, &w) || w.pa != emu.ghcb_gpa)
		emu_host_stops_guest(EXIT_PLATFORM_FATAL, "VMGEXIT with a GHCB the guest does not map");
	if (w.leaf & EMU_CBIT_MASK)
		emu_host_stops_guest(EXIT_PLATFORM_FATAL, "GHCB mapped with the C-bit: the host would read "
				     "ciphertext");
	if (p && (*p & EMU_PG_PRIVATE))
		emu_host_stops_guest(EXIT_PLATFORM_FATAL, "GHCB page is private in the RMP: the host cannot "
				     "read it");
}

void emu_snp_vmgexit(struct trap_frame *f)
{
	(void)f;
	emu_count("vmgexit");
	if (emu.ghcb_msr & GHCB_INFO_MASK) {
		msr_protocol(emu.ghcb_msr);
		return;
	}
	if (!emu.ghcb_gpa || emu.ghcb_msr != emu.ghcb_gpa)
		emu_host_stops_guest(EXIT_PLATFORM_FATAL, "VMGEXIT with a GHCB that was never registered");
	u8 *g = (u8 *)(uintptr_t)emu.ghcb_gpa;

	check_ghcb_page();
	if (!ghcb_field_valid(g, GHCB_SW_EXIT_CODE) || !ghcb_field_valid(g, GHCB_SW_EXIT_INFO_1) ||
	    !ghcb_field_valid(g, GHCB_SW_EXIT_INFO_2))
		emu_host_stops_guest(EXIT_PLATFORM_FATAL, "VMGEXIT without valid exit fields in the GHCB");
	switch (*ghcb_field(g, GHCB_SW_EXIT_CODE)) {
	case SVM_EXIT_IOIO:
		ioio(g);
		return;
	case SVM_EXIT_CPUID:
		cpuid(g);
		return;
	case SVM_EXIT_RDTSC: {
		u64 t = rdtsc_ordered();

		emu_count("vmgexit_rdtsc");
		ghcb_field_set(g, GHCB_RAX, (u32)t);
		ghcb_field_set(g, GHCB_RDX, t >> 32);
		*ghcb_field(g, GHCB_SW_EXIT_INFO_1) = 0;
		return;
	}
	case SVM_VMGEXIT_PSC:
		psc(g);
		return;
	default:
		emu_count("vmgexit_unsupported");
		*ghcb_field(g, GHCB_SW_EXIT_INFO_1) = 1;
		return;
	}
}
