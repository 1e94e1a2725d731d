/* SPDX-License-Identifier: MIT */
/* memaccept (test image): the TDX module 1.5, KVM and QEMU as a TD guest sees them, each behaviour with its source. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu/tdvf.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/msr.h"
#include "arch/x86/tdx/tdx.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "lib/bits.h"
#include "lib/string.h"

/* What the model tells the guest about itself. */
/* TDG.VP.VMCALL statuses in R10 (GHCI; Linux arch/x86/include/asm/shared/tdx.h). */
#define TDVMCALL_STATUS_INVALID_OPERAND 0x8000000000000000ULL
#define TDVMCALL_STATUS_SUBFUNC_UNSUPPORTED 0x8000000000000003ULL
/* GetTdVmCallInfo leaf 1, R11 (GHCI; Linux KVM TDVMCALLINFO_SETUP_EVENT_NOTIFY_INTERRUPT). */
#define TDVMCALLINFO_SETUP_EVENT_NOTIFY_INTERRUPT (1ULL << 1)

#define TDX_CRYSTAL_HZ 25000000u

/*
 * The module's VCPU_INDEX for this vCPU: the order of its TDH.VP.INIT (tdh_vp_init.c
 * takes num_vcpus++). QEMU initialises the vCPUs in CPU index order
 * (target/i386/kvm/tdx.c tdx_post_init_vcpus: CPU_FOREACH, KVM_TDX_INIT_VCPU) and numbers
 * them in ascending APIC ID, so it is the rank of this vCPU's APIC ID among the TD's: its
 * APIC ID only where the topology leaves no gaps (two sockets of three cores: APIC IDs
 * 0, 1, 2, 4 are vCPUs 0, 1, 2, 3).
 */
static u32 vcpu_index(void)
{
	u32 me = emu_cpu(), n = emu_tdvf.bsp_apic_id < me;

	for (u32 i = 0; i < emu_tdvf.naps; i++)
		n += emu_tdvf.ap_ids[i] < me;
	return n;
}

/*
 * CPUID as the TDX module answers the leaves it handles itself (td_cpuid.c: the values
 * set at TDH.MNG.INIT from the TD's configuration and the CPU, with fix-ups): the
 * maximum basic leaf is 0x23 (cpuid_configurations.c), leaf 0x21 carries the
 * "IntelTDX    " signature; the rest is what the CPU (QEMU's model, the "native"
 * values a TD's configuration starts from) answers.
 */
void emu_tdx_module_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	if (leaf == 0x21) {
		memset(r, 0, sizeof(*r));
		if (subleaf == 0) {
			memcpy(&r->ebx, "Inte", 4);
			memcpy(&r->edx, "lTDX", 4);
			memcpy(&r->ecx, "    ", 4);
		}
		return;
	}
	/*
	 * Leaf 0x15 (td_cpuid.c, cpuid_configurations.c): a 25 MHz crystal (EAX 1, ECX
	 * 25 000 000) and EBX the ratio the TD's TSC frequency gives, which TDH.MNG.INIT takes
	 * in units of 25 MHz: so a TD computes its TSC frequency without calibrating.
	 */
	if (leaf == 0x15) {
		r->eax = 1;
		r->ecx = TDX_CRYSTAL_HZ;
		r->ebx = (u32)((emu_host_tsc_hz() + TDX_CRYSTAL_HZ / 2) / TDX_CRYSTAL_HZ);
		r->edx = 0;
		return;
	}
	raw_cpuid(leaf, subleaf, r);
	if (leaf == 0)
		r->eax = 0x23;
	/* Leaf 1 EBX[31:24], the initial APIC ID: VCPU_INDEX (td_cpuid.c td_cpuid_exit). */
	if (leaf == 1)
		r->ebx = (r->ebx & 0x00ffffffu) | (vcpu_index() << 24);
}

/*
 * The MSRs KVM serves a TD through TDVMCALL<Instruction.RDMSR/WRMSR> (Linux
 * arch/x86/kvm/vmx/tdx.c tdx_has_emulated_msr, tdx_is_read_only_msr; completion
 * tdx_complete_emulated_msr), as far as memaccept can meet them: IA32_APIC_BASE, which
 * KVM_TDX_INIT_VCPU sets to 0xFEE00000 with the enable and x2APIC bits (and BSP on the
 * boot vCPU), read-only; the x2APIC registers the CPU does not virtualise, from KVM's
 * local APIC (here: the ID register, the vCPU's APIC ID; the ICR, whose INIT and
 * STARTUP KVM blocks for a TD); EFER, read-only. Any other MSR: refused
 * (INVALID_OPERAND), as KVM refuses what it does not list.
 */
#define KVM_TD_APIC_BASE (0xfee00000ULL | (1ULL << 11) | (1ULL << 10))
#define KVM_APIC_BASE_BSP (1ULL << 8)
#define X2APIC_ICR_DELIVERY(v) (((v) >> 8) & 7)

bool emu_tdx_vmm_msr(bool write, u32 msr, u64 *val)
{
	emu_count(write ? "vmm_wrmsr" : "vmm_rdmsr");
	switch (msr) {
	case MSR_APIC_BASE:
		if (write)
			return false;
		*val = KVM_TD_APIC_BASE | (emu_cpu() == 0 ? KVM_APIC_BASE_BSP : 0);
		return true;
	case MSR_X2APIC_ID:
		if (write)
			return false;
		*val = emu_cpu();
		return true;
	case MSR_X2APIC_ICR:
		if (!write)
			return false;
		/* INIT (5) or STARTUP (6): KVM blocks both for a TD vCPU (emu_guest_ipi). */
		if (X2APIC_ICR_DELIVERY(*val) == 5 || X2APIC_ICR_DELIVERY(*val) == 6)
			emu_guest_ipi((u32)(*val >> 32), true);
		emu_count("vmm_ipi");
		return true;
	case MSR_EFER:
		if (write)
			return false;
		*val = raw_rdmsr(MSR_EFER);
		return true;
	default:
		return false;
	}
}

/*
 * emu_fault=busy_ms[@ADDR]:MS: the host holds priority on the SEPT entry (its own
 * sept_lock_acquire_host failed and set the entry's host-priority bit) for MS ms from the
 * first accept that meets it; every guest accept of the entry meanwhile finds the bit
 * (tdx_locks.h sept_lock_acquire_guest: OPERAND_BUSY_HOST_PRIORITY).
 */
static bool host_priority_busy(u64 gpa, u64 end)
{
	struct emu_fault *f;
	u64 now = tsc_now_ns();
	bool busy;

	emu_lock();
	f = emu_fault_find(&emu.faults, FAULT_BUSY_MS, gpa, end);
	if (f && !f->fired)
		f->value = now;	/* when the host took priority */
	busy = f && now - f->value < f->count * 1000000ULL;
	if (busy)
		f->fired++;
	else if (f)
		f->count = 0;	/* the host let go */
	emu_unlock();
	if (busy)
		emu_count("tdx_answered_busy");
	return busy;
}

/* TDX module status (include/auto_gen/tdx_error_codes_defs.h). */
#define TDX_HOST_PRIORITY_BUSY_TIMEOUT 0x9000020500000000ULL
/* td_control_structures.h DEFAULT_HP_LOCK_TIMEOUT_USEC, set by tdh_mng_init; KVM keeps it. */
#define HP_LOCK_TIMEOUT_NS (1000ULL * 1000 * 1000)
/* Linux include/uapi/linux/kvm.h */
#define KVM_INTERNAL_ERROR_UNEXPECTED_EXIT_REASON 4

/*
 * The end of every TDCALL that returns to the guest (tdx_td_dispatcher.c td_call): a
 * leaf that ended on host priority answers the guest plain OPERAND_BUSY, and the first
 * such answer starts this vCPU's clock; any other completion stops it. One that comes
 * HP_LOCK_TIMEOUT or more after the first makes the module exit to the host with
 * TDX_HOST_PRIORITY_BUSY_TIMEOUT (the guest's RAX already OPERAND_BUSY). KVM's
 * tdx_handle_exit takes any TDH.VP.ENTER status with the error bit as an unhandled exit:
 * KVM_EXIT_INTERNAL_ERROR, suberror UNEXPECTED_EXIT_REASON, the status as data[0]; QEMU
 * prints it and stops the VM (accel/kvm/kvm-all.c kvm_handle_internal_error, then
 * vm_stop with RUN_STATE_INTERNAL_ERROR). The guest never sees the timeout.
 */
static u64 td_call_end(u64 status, bool host_priority)
{
	struct emu_vcpu *v = emu_self();
	u64 now = tsc_now_ns();

	if (!host_priority) {
		v->hp_busy = false;
		return status;
	}
	if (!v->hp_busy) {
		v->hp_busy = true;
		v->hp_busy_since_ns = now;
	} else if (now - v->hp_busy_since_ns >= HP_LOCK_TIMEOUT_NS) {
		v->hp_busy = false;
		emu_count("tdx_host_priority_busy_timeout");
		kprintf("emu: host (KVM): TD vp_enter_ret %#llx\n", TDX_HOST_PRIORITY_BUSY_TIMEOUT);
		kprintf("emu: host (QEMU): KVM internal error. Suberror: %d\nemu: host (QEMU): extra "
			"data[0]: 0x%016llx\n", KVM_INTERNAL_ERROR_UNEXPECTED_EXIT_REASON,
			TDX_HOST_PRIORITY_BUSY_TIMEOUT);
		emu_host_stops_guest(TDX_HOST_PRIORITY_BUSY_TIMEOUT,
				     "TDX_HOST_PRIORITY_BUSY_TIMEOUT: the module exits to KVM, which "
				     "takes it as an unhandled exit (KVM internal error); QEMU stops the VM");
	}
	return TDX_STATUS(TDX_OPERAND_BUSY, TDX_OPERAND_ID_RCX);
}

/* The module zeroes what it accepts: the guest's allocator contract relies on it. */
static u64 page_accept(u64 rcx)
{
	u64 gpa = rcx & TDX_ACCEPT_GPA_MASK;

	if (host_priority_busy(gpa, gpa + TDX_LEVEL_SIZE(rcx & TDX_ACCEPT_LEVEL_MASK)))
		return td_call_end(0, true);

	/* The model and the faults it consumes are shared by all vCPUs. */
	emu_lock();
	u64 st = emu_model_tdx_accept(&emu.model, rcx);

	emu_unlock();

	if (st == EMU_TDX_EPT_VIOLATION_EXIT)
		emu_host_stops_guest(rcx, "TDG.MEM.PAGE.ACCEPT of a GPA that is not guest RAM: the module "
				     "exits with an EPT violation and KVM has no memory to map there");
	if (st == 0)
		memset((void *)(uintptr_t)(rcx & TDX_ACCEPT_GPA_MASK), 0,
		       TDX_LEVEL_SIZE(rcx & TDX_ACCEPT_LEVEL_MASK));
	return td_call_end(st, false);
}

/*
 * What the VMM receives: the TDX module copies only the GPRs selected in RCX and clears
 * the others (intel/tdx-module tdg_vp_vmcall.c, copy_gprs_data_from_td_to_vmm).
 */
static struct tdx_regs vmm_view(const struct trap_frame *f)
{
	u64 m = f->rcx;
	struct tdx_regs r = {
		.rcx = m,
		.rdx = m & TDVMCALL_REG(GPR_RDX) ? f->rdx : 0,
		.rbx = m & TDVMCALL_REG(GPR_RBX) ? f->rbx : 0,
		.rsi = m & TDVMCALL_REG(GPR_RSI) ? f->rsi : 0,
		.rdi = m & TDVMCALL_REG(GPR_RDI) ? f->rdi : 0,
		.r8 = m & TDVMCALL_REG(GPR_R8) ? f->r8 : 0,
		.r9 = m & TDVMCALL_REG(GPR_R9) ? f->r9 : 0,
		.r10 = m & TDVMCALL_REG(10) ? f->r10 : 0,
		.r11 = m & TDVMCALL_REG(11) ? f->r11 : 0,
		.r12 = m & TDVMCALL_REG(12) ? f->r12 : 0,
		.r13 = m & TDVMCALL_REG(13) ? f->r13 : 0,
		.r14 = m & TDVMCALL_REG(GPR_R14) ? f->r14 : 0,
		.r15 = m & TDVMCALL_REG(GPR_R15) ? f->r15 : 0,
	};
	return r;
}

/* KVM tdx_emulate_io (Linux arch/x86/kvm/vmx/tdx.c): R13 (direction) 0 or 1 and sizes
 * 1, 2, 4, else INVALID_OPERAND; 1 is a write. */
static void vmm_io(struct tdx_regs *v)
{
	int size = (int)v->r12;
	u16 port = (u16)v->r14;

	if ((v->r13 != 0 && v->r13 != 1) || (size != 1 && size != 2 && size != 4)) {
		v->r10 = TDVMCALL_STATUS_INVALID_OPERAND;
		return;
	}
	if (v->r13)
		raw_io_out(port, (u32)v->r15, size);
	else
		v->r11 = emu_host_port_read(port, size, raw_io_in(port, size));
	v->r10 = 0;
}

/*
 * ReportFatalError. KVM passes the registers to QEMU as a KVM_SYSTEM_EVENT_TDX_FATAL exit
 * without checking them (Linux arch/x86/kvm/vmx/tdx.c tdx_report_fatal_error); QEMU
 * (target/i386/kvm/tdx.c tdx_handle_report_fatal_error) then
 * - rejects an error code with any of bits 15:0 set: "invalid error code", the handler
 *   fails and the VM stops as an internal error, the guest's reason lost;
 * - otherwise packs the message from the registers present in RCX (R14, R15, RBX, RDI,
 *   RSI, R8, R9, RDX), takes R13 as a GPA only if R12 bit 63 is set, and raises a
 *   guest panic (GUEST_PANICKED with error code bits 31:0 and the message); with the
 *   default -action panic=shutdown QEMU then ends the VM (system/runstate.c).
 * Either way the TD never runs again. The emulator prints what QEMU reports, adds an
 * emu_fatal_report event a test can check, and stops the VM.
 */
static __noreturn void vmm_fatal(const struct tdx_regs *v)
{
	char msg[TDX_FATAL_MSG_LEN + 1];
	bool valid = !(v->r12 & TDX_FATAL_CODE_RESERVED);
	u32 reason = (u32)(v->r12 >> TDX_FATAL_CODE_SHIFT) & 0xffff;
	unsigned regs = (unsigned)popcount64(v->rcx & TDX_FATAL_MSG_REGS);

	emu_count("tdvmcall_report_fatal_error");
	tdx_fatal_message(v, msg);
	for (char *c = msg; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			*c = '?';	/* QEMU refuses to print a message with such bytes */
	if (valid)
		kprintf("emu: host (QEMU): TD guest reports fatal error. error code: %#x error message: "
			"\"%s\"%s\n", (u32)v->r12, msg,
			v->r12 & TDX_FATAL_GPA_VALID ? " (additional information at a GPA)" : "");
	else
		kprintf("emu: host (QEMU): TDX: REPORT_FATAL_ERROR: invalid error code: %#llx\n", v->r12);
	ev_begin("emu_fatal_report");
	ev_bool("qemu_accepts", valid);
	ev_u64("error_code", v->r12);
	ev_u64("message_regs", regs);
	ev_str("message", msg);
	ev_u64("reason", reason);
	ev_str("condition", fatal_condition_name(FATAL_REASON_CONDITION(reason)));
	ev_u64("code", (u64)FATAL_REASON_CODE(reason));
	ev_end();
	emu_host_stops_guest(v->r12, valid ? "TDVMCALL<ReportFatalError>: QEMU raises a guest panic "
					     "and ends the VM"
					   : "TDVMCALL<ReportFatalError> with an invalid error code: "
					     "QEMU stops the VM as an internal error, the reason is lost");
}

/*
 * The VMM's side of TDG.VP.VMCALL (GHCI specification; KVM handle_tdvmcall), on its own
 * copy of the registers (KVM's vp_enter_args): inputs read from it, answers written to it.
 */
static void vmm_call(struct tdx_regs *v)
{
	/*
	 * R10 != 0: KVM takes it for one of its own hypercalls (tdx_to_vmx_exit_reason ->
	 * EXIT_REASON_VMCALL). The emulated VMM offers none and refuses it; memaccept never
	 * makes one.
	 */
	if (v->r10 != TDVMCALL_STANDARD) {
		emu_count("tdvmcall_vendor");
		v->r10 = TDVMCALL_STATUS_INVALID_OPERAND;
		return;
	}
	switch (v->r11) {
	case TDVMCALL_IO:
		emu_count("tdvmcall_io");
		vmm_io(v);
		return;
	case TDVMCALL_RDMSR:
	case TDVMCALL_WRMSR: {
		u64 val = v->r13;
		bool write = v->r11 == TDVMCALL_WRMSR;

		emu_count(write ? "tdvmcall_wrmsr" : "tdvmcall_rdmsr");
		if (!emu_tdx_vmm_msr(write, (u32)v->r12, &val)) {
			v->r10 = TDVMCALL_STATUS_INVALID_OPERAND;
			return;
		}
		if (!write)
			v->r11 = val;
		v->r10 = 0;
		return;
	}
	case TDVMCALL_CPUID: {
		struct cpuid_regs r;

		emu_count("tdvmcall_cpuid");
		emu_cpuid_values((u32)v->r12, (u32)v->r13, &r);
		v->r12 = r.eax, v->r13 = r.ebx, v->r14 = r.ecx, v->r15 = r.edx;
		v->r10 = 0;
		return;
	}
	case TDVMCALL_HLT:
		emu_count("tdvmcall_hlt");
		/*
		 * KVM (kvm_emulate_halt_noskip from tdx_handle_exit) blocks the vCPU until it has
		 * an event: with R12 = 1 (interrupts blocked: tdx_interrupt_allowed) only an NMI;
		 * with R12 = 0 also an interrupt posted to it (tdx_protected_apic_has_interrupt).
		 * The emulated machine posts a TD vCPU no interrupt and no NMI (memaccept arms no
		 * timer and sends no fixed IPI; INIT and SIPI KVM blocks), so either way the vCPU
		 * never runs again, and the others go on. The boot vCPU halts for good only at the
		 * end of memaccept's life, where nothing else would ever run and QEMU would wait
		 * forever: the emulator ends the VM there.
		 */
		if (emu_cpu() != 0) {
			emu_count("vcpu_blocked");
			for (;;)
				raw_halt();
		}
		emu_host_stops_guest(v->r12, v->r12 ? "TDVMCALL<Instruction.HLT> with interrupts blocked: "
						      "KVM blocks the vCPU for good"
						    : "TDVMCALL<Instruction.HLT> with interrupts allowed: KVM "
						      "blocks the vCPU until an interrupt, and nothing sends one");
	case TDVMCALL_GET_TD_VM_CALL_INFO:
		/*
		 * KVM tdx_get_td_vm_call_info (Linux 6.16): R12 = 0 in the kernel, success with
		 * R11-R14 = 0; R12 = 1 to userspace (KVM_EXIT_TDX), where QEMU 10.1
		 * (target/i386/kvm/tdx.c tdx_handle_get_tdvmcall_info) answers success with R11
		 * the optional TDVMCALLs both it and KVM support (SetupEventNotifyInterrupt, bit
		 * 1: KVM's user_tdvmcallinfo_1_r11) and R12-R14 = 0; any other R12
		 * INVALID_OPERAND. The emulated VMM itself does not serve SetupEventNotifyInterrupt
		 * (memaccept never asks for it).
		 */
		emu_count("tdvmcall_get_info");
		if (v->r12 > 1) {
			v->r10 = TDVMCALL_STATUS_INVALID_OPERAND;
			return;
		}
		v->r10 = 0;
		v->r11 = v->r12 ? TDVMCALLINFO_SETUP_EVENT_NOTIFY_INTERRUPT : 0;
		v->r12 = v->r13 = v->r14 = 0;
		return;
	case TDVMCALL_REPORT_FATAL_ERROR:
		vmm_fatal(v);
	default:
		/* KVM handle_tdvmcall: a sub-function it does not implement. */
		emu_count("tdvmcall_unsupported");
		v->r10 = TDVMCALL_STATUS_SUBFUNC_UNSUPPORTED;
		return;
	}
}

static void copy_back(u64 *guest, u64 vmm, u64 mask, unsigned gpr)
{
	if (mask & TDVMCALL_REG(gpr))
		*guest = vmm;
}

/*
 * TDG.VP.VMCALL: the module hands the VMM the registers the guest selected in RCX (the
 * others as 0) and, on the next TDH.VP.ENTER, copies back into the guest only those same
 * registers from the VMM's; RAX becomes TDX_SUCCESS and RCX keeps the guest's mask
 * (tdg_vp_vmcall.c copy_gprs_data_from_td_to_vmm; tdh_vp_enter.c
 * save_regs_after_tdvmcall). An answer the VMM writes into a register the guest did not
 * select never reaches the guest, which keeps its own value there.
 */
static void vmcall(struct trap_frame *f)
{
	/* RCX bits 0, 1, 4, 5 (NO_RBP_MOD) and 63:32 must be 0, or the module refuses the call. */
	if (f->rcx & TDVMCALL_MASK_FORBIDDEN) {
		emu_count("tdvmcall_bad_mask");
		f->rax = TDX_STATUS(TDX_OPERAND_INVALID, TDX_OPERAND_ID_RCX);
		return;
	}
	struct tdx_regs v = vmm_view(f);
	u64 m = f->rcx;

	vmm_call(&v);
	f->rax = 0;	/* the TDCALL itself succeeded; R10 carries the VMM's answer */
	copy_back(&f->rdx, v.rdx, m, GPR_RDX);
	copy_back(&f->rbx, v.rbx, m, GPR_RBX);
	copy_back(&f->rsi, v.rsi, m, GPR_RSI);
	copy_back(&f->rdi, v.rdi, m, GPR_RDI);
	copy_back(&f->r8, v.r8, m, GPR_R8);
	copy_back(&f->r9, v.r9, m, GPR_R9);
	copy_back(&f->r10, v.r10, m, 10);
	copy_back(&f->r11, v.r11, m, 11);
	copy_back(&f->r12, v.r12, m, 12);
	copy_back(&f->r13, v.r13, m, 13);
	copy_back(&f->r14, v.r14, m, GPR_R14);
	copy_back(&f->r15, v.r15, m, GPR_R15);
}

/* The TD's GPA width (model.h), from the start: TDG.VP.INFO may come before the model. */
static unsigned td_gpaw(void)
{
	return emu_fault_find(&emu.faults, FAULT_GPAW52, 0, 0) ? EMU_TDX_GPAW_WIDE : EMU_TDX_GPAW;
}

u64 emu_tdx_shared_bit(void)
{
	return 1ULL << (td_gpaw() - 1);
}

/* The TD's attributes as TDG.VP.INFO reports them. */
static u64 td_attributes(void)
{
	return (emu_fault_find(&emu.faults, FAULT_NO_SEPT_VE_DISABLE, 0, 0) ? 0 : TDX_ATTR_SEPT_VE_DISABLE) |
	       (emu_fault_find(&emu.faults, FAULT_DEBUG_TD, 0, 0) ? TDX_ATTR_DEBUG : 0);
}

/* Metadata status codes (tdx-module include/auto_gen/tdx_error_codes_defs.h). */
#define TDX_METADATA_FIELD_ID_INCORRECT 0xC0000C00u
#define TDX_METADATA_FIELD_NOT_WRITABLE 0xC0000C01u
/*
 * KVM's setup_tdparams sets NO_RBP_MOD (bit 2), and MAX_GPAW (bit 0) only for a 52-bit
 * GPA width (setup_tdparams_eptp_controls; Linux asm/tdx.h TDX_CONFIG_FLAGS_*).
 */
#define CONFIG_NO_RBP_MOD (1ULL << 2)
#define CONFIG_MAX_GPAW (1ULL << 0)

/*
 * TDG.VM.RD / TDG.VM.WR of the two fields memaccept uses (tdx-module tdg_vm_rd_wr.c):
 * R8 is 0 on any failure; RCX (the VM ID) must be 0; bit 63 of the field ID is ignored
 * (Linux uses 0x1110..., the 1.5 ABI tables 0x9110...: both are valid). CONFIG_FLAGS:
 * NO_RBP_MOD as KVM sets it, FLEXIBLE_PENDING_VE with emu_fault=flexible_pending_ve;
 * read-only. TD_CTLS starts as the SEPT_VE_DISABLE attribute (tdh_mng_init.c); the guest
 * may write PENDING_VE_DISABLE only under FLEXIBLE_PENDING_VE (a write that changes no
 * writable bit is FIELD_NOT_WRITABLE, as md_write_element answers a zero combined mask);
 * the old value comes back in R8. Other fields: FIELD_ID_INCORRECT.
 */
static u64 td_ctls;
static bool td_ctls_set;

static void vm_rd_wr(struct trap_frame *f, bool write)
{
	u64 field = f->rdx & ~(1ULL << 63), wr_mask = 0, *value = NULL, cfg;
	bool flexible = emu_fault_find(&emu.faults, FAULT_FLEXIBLE_PENDING_VE, 0, 0);

	emu_count(write ? "tdcall_vm_wr" : "tdcall_vm_rd");
	cfg = CONFIG_NO_RBP_MOD | (flexible ? TDCS_CONFIG_FLEXIBLE_PENDING_VE : 0) |
	      (td_gpaw() == EMU_TDX_GPAW_WIDE ? CONFIG_MAX_GPAW : 0);
	if (!td_ctls_set) {
		td_ctls = td_attributes() & TDX_ATTR_SEPT_VE_DISABLE ? TD_CTLS_PENDING_VE_DISABLE : 0;
		td_ctls_set = true;
	}
	if (f->rcx) {
		f->r8 = 0;
		f->rax = TDX_STATUS(TDX_OPERAND_INVALID, TDX_OPERAND_ID_RCX);
		return;
	}
	if (field == (TDCS_CONFIG_FLAGS & ~(1ULL << 63))) {
		value = &cfg;
	} else if (field == (TDCS_TD_CTLS & ~(1ULL << 63))) {
		value = &td_ctls;
		wr_mask = flexible ? TD_CTLS_PENDING_VE_DISABLE : 0;
	}
	if (!value) {
		f->r8 = 0;
		f->rax = TDX_STATUS(TDX_METADATA_FIELD_ID_INCORRECT, 0);
		return;
	}
	if (write && !(wr_mask & f->r9)) {
		f->r8 = 0;
		f->rax = TDX_STATUS(TDX_METADATA_FIELD_NOT_WRITABLE, 0);
		return;
	}
	u64 old = *value;

	if (write)
		*value = (old & ~(wr_mask & f->r9)) | (f->r8 & wr_mask & f->r9);
	f->r8 = old;
	f->rax = 0;
}

void emu_tdx_tdcall(struct trap_frame *f)
{
	/* Every other leaf returns through td_call's end too (TDG.VP.VMCALL exits instead). */
	if (f->rax != TDG_VP_VMCALL && f->rax != TDG_MEM_PAGE_ACCEPT)
		td_call_end(0, false);
	switch (f->rax) {
	case TDG_VP_VMCALL:
		vmcall(f);
		return;
	case TDG_VP_INFO:
		/* intel/tdx-module tdg_vp_info.c: RCX GPA width, RDX attributes, R8 vCPUs. */
		emu_count("tdcall_vp_info");
		f->rax = 0;
		f->rcx = td_gpaw();
		f->rdx = td_attributes();
		/*
		 * R8: NUM_VCPUS (31:0), the vCPUs initialised, and MAX_VCPUS (63:32), which QEMU
		 * sets to its vCPU count (KVM_CAP_MAX_VCPUS, tdx_pre_create_vcpu); R9 VCPU_INDEX.
		 */
		f->r8 = ((u64)emu_tdvf_vcpus() << 32) | emu_tdvf_vcpus();
		f->r9 = vcpu_index();
		/* R10 bit 0: TDG.SYS.RD is available (tdg_vp_info.c, TDX module 1.5). */
		f->r10 = 1;
		f->r11 = 0;
		return;
	case TDG_VP_VEINFO_GET:
		emu_count("tdcall_veinfo_get");
		/* tdg_vp_veinfo_get.c: nothing valid to return -> TDX_NO_VALID_VE_INFO. */
	{
		unsigned c = emu_cpu();

		if (!emu.ve[c].staged) {
			/* The module clears the output registers first (tdg_vp_veinfo_get.c). */
			f->rcx = f->rdx = f->r8 = f->r9 = f->r10 = 0;
			f->rax = TDX_STATUS(TDX_NO_VALID_VE_INFO, 0);
			return;
		}
		/* Read once: the module marks the information invalid again. */
		emu.ve[c].staged = false;
		f->rax = 0;
		f->rcx = emu.ve[c].reason, f->rdx = emu.ve[c].qual, f->r8 = emu.ve[c].gla;
		f->r9 = emu.ve[c].gpa, f->r10 = emu.ve[c].len;
		return;
	}
	case TDG_VM_RD:
	case TDG_VM_WR:
		vm_rd_wr(f, f->rax == TDG_VM_WR);
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
