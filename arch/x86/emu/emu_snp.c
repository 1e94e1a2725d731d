/* SPDX-License-Identifier: MIT */
/* memaccept (test image): a model of the SEV-SNP RMP and of the hypervisor behind the GHCB. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/sev/snp.h"
#include "drivers/console.h"
#include "include/exit_codes.h"
#include "kernel/report.h"
#include "lib/string.h"

/*
 * The C-bit the model reports. A real part uses bit 51 (or 47), but under plain QEMU
 * that is a reserved physical-address bit and every private mapping would fault.
 * Bit 56 lies in the page-table bits the CPU ignores, so the backend can set it on
 * every private mapping, exactly as it would on hardware, and nothing changes.
 */
#define EMU_SNP_CBIT 56

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
		r->ebx = EMU_SNP_CBIT | (1u << 6);	/* one physical-address bit lost to the C-bit */
		r->ecx = 1;
		r->edx = 1;
		return true;
	}
	return false;
}

/* PVALIDATE: the model decides (arch/x86/emu/model.c); here the result goes into EAX and CF. */
void emu_snp_pvalidate(struct trap_frame *f)
{
	u32 size = (u32)f->rcx, rc;
	bool no_update;

	emu_count(size == PVALIDATE_2M ? "pvalidate_2m" : "pvalidate_4k");
	rc = emu_model_pvalidate(&emu.model, f->rax, size, (u32)f->rdx, &no_update);
	if (rc)
		emu_count(rc == PVALIDATE_FAIL_SIZEMISMATCH ? "pvalidate_sizemismatch" : "pvalidate_fail_input");
	if (no_update)
		emu_count("pvalidate_no_update");
	f->rax = rc;
	f->rflags = no_update ? f->rflags | 1 : f->rflags & ~1ULL;	/* CF is bit 0 */
}

/* ------------------------------------------------------------------ the hypervisor */

static __noreturn void terminate(u64 v)
{
	u32 set = (v >> 12) & 0xf, code = (v >> 16) & 0xff;
	u32 condition = set == GHCB_TERM_SET_MEMACCEPT ? code >> 4 : 0;
	int exit_code = set == GHCB_TERM_SET_MEMACCEPT ? (int)(code & 0xf) : EXIT_PLATFORM_FATAL;

	/*
	 * From here the emulated host prints, with plain port I/O. (What the guest held back
	 * before it had a GHCB is lost: kernel_exit_reason flushed it through snp_io_out,
	 * which has nowhere to send it, as on real hardware.)
	 */
	platform_use_plain_io();
	emu_count("msr_terminate");
	kprintf("emu: the guest requested termination: reason set %u, code %#x (condition %s, "
		"exit code %d)\n", set, code, fatal_condition_name(condition), exit_code);
	ev_begin("emu_snp_terminate");
	ev_u64("reason_set", set);
	ev_u64("reason_code", code);
	ev_str("condition", fatal_condition_name(condition));
	ev_u64("code", (u64)exit_code);
	ev_end();
	emu_host_stops_guest(exit_code, "GHCB termination request");
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

static void cpuid(u8 *g)
{
	struct cpuid_regs r;

	emu_count("vmgexit_cpuid");
	if (!ghcb_field_valid(g, GHCB_RAX) || !ghcb_field_valid(g, GHCB_RCX)) {
		*ghcb_field(g, GHCB_SW_EXIT_INFO_1) = 1;
		return;
	}
	emu_cpuid_values((u32)*ghcb_field(g, GHCB_RAX), (u32)*ghcb_field(g, GHCB_RCX), &r);
	ghcb_field_set(g, GHCB_RAX, r.eax);
	ghcb_field_set(g, GHCB_RBX, r.ebx);
	ghcb_field_set(g, GHCB_RCX, r.ecx);
	ghcb_field_set(g, GHCB_RDX, r.edx);
	*ghcb_field(g, GHCB_SW_EXIT_INFO_1) = 0;
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
