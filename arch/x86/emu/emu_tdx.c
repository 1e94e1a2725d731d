/* SPDX-License-Identifier: MIT */
/* memaccept (test image): a model of the TDX module and the VMM as a TD guest sees them. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/tdx/tdx.h"
#include "drivers/console.h"
#include "kernel/report.h"
#include "lib/string.h"

/* What the model tells the guest about itself. */
#define EMU_TDX_GPAW 48
#define EMU_TDX_VCPUS 1
/* TDG.VP.VMCALL status for a sub-function the VMM does not support (GHCI). */
#define TDVMCALL_STATUS_INVALID_OPERAND 0x8000000000000000ULL

/* CPUID 0x21 and the maximum basic leaf that makes it visible ("IntelTDX    "). */
bool emu_tdx_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	if (leaf == 0) {
		cpuid_raw(0, 0, r);
		r->eax = MAX(r->eax, 0x21u);
		return true;
	}
	if (leaf == 0x21 && subleaf == 0) {
		memcpy(&r->ebx, "Inte", 4);
		memcpy(&r->edx, "lTDX", 4);
		memcpy(&r->ecx, "    ", 4);
		r->eax = 0;
		return true;
	}
	return false;
}

/* The module zeroes what it accepts: the guest's allocator contract relies on it. */
static u64 page_accept(u64 rcx)
{
	u64 st = emu_model_tdx_accept(&emu.model, rcx);

	if (st == 0)
		memset((void *)(uintptr_t)(rcx & TDX_ACCEPT_GPA_MASK), 0,
		       TDX_LEVEL_SIZE(rcx & TDX_ACCEPT_LEVEL_MASK));
	return st;
}

static void plain_io(struct trap_frame *f)
{
	int size = (int)f->r12;
	u16 port = (u16)f->r14;

	if (size != 1 && size != 2 && size != 4) {
		f->r10 = TDVMCALL_STATUS_INVALID_OPERAND;
		return;
	}
	if (f->r13 == TDVMCALL_IO_OUT)
		plain_io_out(port, (u32)f->r15, size);
	else
		f->r11 = plain_io_in(port, size);
	f->r10 = 0;
}

/* The VMM's side of TDG.VP.VMCALL (GHCI specification). */
static void vmcall(struct trap_frame *f)
{
	f->rax = 0;	/* the TDCALL itself succeeded; R10 carries the VMM's answer */
	if (f->r10 != TDVMCALL_STANDARD) {
		f->r10 = TDVMCALL_STATUS_INVALID_OPERAND;
		return;
	}
	switch (f->r11) {
	case TDVMCALL_IO:
		emu_count("tdvmcall_io");
		plain_io(f);
		return;
	case TDVMCALL_CPUID: {
		struct cpuid_regs r;

		emu_count("tdvmcall_cpuid");
		emu_cpuid_values((u32)f->r12, (u32)f->r13, &r);
		f->r12 = r.eax, f->r13 = r.ebx, f->r14 = r.ecx, f->r15 = r.edx;
		f->r10 = 0;
		return;
	}
	case TDVMCALL_HLT:
		emu_count("tdvmcall_hlt");
		/* Halted with interrupts blocked: nothing will ever wake it, so the VMM stops it. */
		if (f->r12)
			emu_host_stops_guest(0, "TDVMCALL<Instruction.HLT> with interrupts blocked");
		f->r10 = 0;
		return;
	case TDVMCALL_REPORT_FATAL_ERROR: {
		u32 reason = (u32)f->r12;

		emu_count("tdvmcall_report_fatal_error");
		kprintf("emu: the TD reported a fatal error: code %#x (condition %s, exit code %d)\n",
			reason, fatal_condition_name(FATAL_REASON_CONDITION(reason)),
			FATAL_REASON_CODE(reason));
		ev_begin("emu_fatal_report");
		ev_u64("reason", reason);
		ev_str("condition", fatal_condition_name(FATAL_REASON_CONDITION(reason)));
		ev_u64("code", (u64)FATAL_REASON_CODE(reason));
		ev_end();
		emu_host_stops_guest(FATAL_REASON_CODE(reason), "TDVMCALL<ReportFatalError>");
	}
	default:
		emu_count("tdvmcall_unsupported");
		f->r10 = TDVMCALL_STATUS_INVALID_OPERAND;
		return;
	}
}

void emu_tdx_tdcall(struct trap_frame *f)
{
	switch (f->rax) {
	case TDG_VP_VMCALL:
		vmcall(f);
		return;
	case TDG_VP_INFO:
		emu_count("tdcall_vp_info");
		f->rax = 0;
		f->rcx = EMU_TDX_GPAW;
		f->rdx = emu_fault_find(&emu.faults, FAULT_NO_SEPT_VE_DISABLE, 0, 0) ? 0
										: TDX_ATTR_SEPT_VE_DISABLE;
		f->r8 = ((u64)EMU_TDX_VCPUS << 32) | EMU_TDX_VCPUS;
		f->r9 = 0;
		return;
	case TDG_VP_VEINFO_GET:
		emu_count("tdcall_veinfo_get");
		if (!emu.ve_staged) {
			/* No #VE is pending: the module answers with an error, like for a bad call. */
			f->rax = TDX_STATUS(TDX_OPERAND_INVALID, 0);
			return;
		}
		emu.ve_staged = false;
		f->rax = 0;
		f->rcx = emu.ve_reason, f->rdx = emu.ve_qual, f->r8 = emu.ve_gla;
		f->r9 = emu.ve_gpa, f->r10 = emu.ve_len;
		return;
	case TDG_MEM_PAGE_ACCEPT:
		emu_count("tdcall_accept");
		f->rax = page_accept(f->rcx);
		return;
	default:
		emu_count("tdcall_unsupported");
		f->rax = TDX_STATUS(TDX_OPERAND_INVALID, 0);
		return;
	}
}
