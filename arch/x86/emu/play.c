/* SPDX-License-Identifier: MIT */
/* memaccept (test image): the instructions TCG runs natively, played as a real TD or SNP guest would see them. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu/traps.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/observer.h"
#include "arch/x86/paging.h"
#include "arch/x86/platform.h"
#include "arch/x86/sev/snp.h"
#include "arch/x86/tdx/tdx.h"
#include "arch/x86/tsc_cal.h"
#include "drivers/console.h"
#include "lib/format.h"
#include "lib/string.h"

/*
 * The accessors (cpu_cpuid, cpu_halt, msr_read, msr_write, plain port I/O) ask here
 * before they run the instruction. What the platform does with it comes from
 * arch/x86/emu/traps.h:
 * - it lets it through: the instruction runs (for the SEV MSRs, which TCG does not
 *   have, the emulator gives the value the CPU would);
 * - it answers it itself (the TDX module's CPUID leaves): the module's answer;
 * - it traps it: before ExitBootServices the firmware's #VE/#VC handler would ask the
 *   host, so the host's answer is given; after it, the #VE or #VC goes to the kernel's
 *   own handler, exactly as the CPU would deliver it, and what the handler leaves in the
 *   registers is the result.
 * The emulated host's own code (emu.host_side) runs every instruction natively.
 */

static bool trapping_mode(void)
{
	return emu.mode == EMU_TDX || emu.mode == EMU_SNP;
}

/* ------------------------------------------------------------------ delivering #VE and #VC */

static void need_handler(unsigned vector, const char *what)
{
	if (trap_has_handler(vector) && idt_loaded())
		return;
	emu_count(vector == VEC_VE ? "ve_without_handler" : "vc_without_handler");
	emu_host_stops_guest(vector, what);
}

/*
 * A #VE as the TDX module injects it (td_other_exits.c tdx_inject_ve): the exit reason,
 * qualification and the VM-exit instruction length from the VMCS staged for
 * TDG.VP.VEINFO.GET (R10 bits 31:0), then vector 20 as a fault, with RIP at the
 * instruction. INT 20 stands in for the injection and pushes the address after itself,
 * so a copy of the trapping instruction follows it: the handler finds it at RIP and must
 * skip exactly the length reported (Linux ve_instr_len). Skipping less runs it natively,
 * which the instruction observer stops (a TD would take the #VE again, for ever);
 * skipping more lands in the NOPs after it, with CF still set from before the #VE
 * (ve_resumed). The assembler checks that the copy has the length staged.
 */
#define VE_SITE(insn)                                                                        \
	"stc\n\t"                                                                             \
	"int $20\n"                                                                           \
	"771:\t" insn "\n"                                                                    \
	"772:\tclc\n\t"                                                                        \
	".fill 8, 1, 0x90\n\t"                                                                 \
	".if (772b - 771b) - %c[len]\n\t.error \"#VE site: staged length is not the instruction's\"\n\t.endif\n\t" \
	"setc %[over]\n\t"

static void ve_resumed(u8 over)
{
	emu_host_enter();
	if (over)
		emu_host_stops_guest(0, "the #VE handler resumed past the end of the instruction it "
				     "emulated (it skipped more than the reported instruction length)");
	emu_count("ve_resumed_after_insn");
}

static void ve_msr(bool write, u32 msr, u64 *val)
{
	u32 lo = (u32)*val, hi = (u32)(*val >> 32);
	u8 over;

	need_handler(VEC_VE, write ? "WRMSR raised #VE with no #VE handler in the kernel's IDT: a "
				     "real TD dies here" : "RDMSR raised #VE with no #VE handler in the "
				     "kernel's IDT: a real TD dies here");
	emu_count(write ? "wrmsr_ve" : "rdmsr_ve");
	emu_stage_ve(write ? EXIT_REASON_MSR_WRITE : EXIT_REASON_MSR_READ, 0, 0, 0, INSN_LEN_MSR);
	emu_host_leave();
	if (write)
		__asm__ volatile(VE_SITE("wrmsr") : [over] "=qm"(over)
				 : "a"(lo), "d"(hi), "c"(msr), [len] "i"(INSN_LEN_MSR) : "memory", "cc");
	else
		__asm__ volatile(VE_SITE("rdmsr") : "+a"(lo), "+d"(hi), [over] "=qm"(over)
				 : "c"(msr), [len] "i"(INSN_LEN_MSR) : "memory", "cc");
	ve_resumed(over);
	*val = ((u64)hi << 32) | lo;
}

static void ve_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	u32 a = leaf, b = 0, c = subleaf, d = 0;
	u8 over;

	need_handler(VEC_VE, "CPUID raised #VE with no #VE handler in the kernel's IDT: a real "
			     "TD dies here");
	emu_count("cpuid_ve");
	emu_stage_ve(EXIT_REASON_CPUID, 0, 0, 0, INSN_LEN_CPUID);
	emu_host_leave();
	__asm__ volatile(VE_SITE("cpuid") : "+a"(a), "+b"(b), "+c"(c), "+d"(d), [over] "=qm"(over)
			 : [len] "i"(INSN_LEN_CPUID) : "memory", "cc");
	ve_resumed(over);
	r->eax = a, r->ebx = b, r->ecx = c, r->edx = d;
}

/* Test hooks (emu.h): the same, from the guest's own code. */
void emu_ve_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	emu_host_enter();
	ve_cpuid(leaf, subleaf, r);
	emu_host_leave();
}

void emu_ve_msr(bool write, u32 msr, u64 *val)
{
	emu_host_enter();
	ve_msr(write, msr, val);
	emu_host_leave();
}

static void ve_halt(void)
{
	u8 over;

	need_handler(VEC_VE, "HLT raised #VE with no #VE handler in the kernel's IDT: a real TD "
			     "dies here");
	emu_count("hlt_ve");
	emu_stage_ve(EXIT_REASON_HLT, 0, 0, 0, INSN_LEN_HLT);
	emu_host_leave();
	__asm__ volatile(VE_SITE("hlt") : [over] "=qm"(over) : [len] "i"(INSN_LEN_HLT) : "memory", "cc");
	ve_resumed(over);
}

/*
 * IN and OUT with the port in DX, as the accessors (raw_io_in, raw_io_out) write them:
 * EC/ED/EE/EF, and 0x66 before the 16-bit forms (Intel SDM vol. 2).
 */
static void ve_io(u16 port, int size, bool in, u64 *rax)
{
	u64 a = *rax;
	u8 over;

	if (in && size == 1)
		__asm__ volatile(VE_SITE("inb %%dx, %%al") : "+a"(a), [over] "=qm"(over)
				 : "d"(port), [len] "i"(INSN_LEN_IO_DX) : "memory", "cc");
	else if (in && size == 2)
		__asm__ volatile(VE_SITE("inw %%dx, %%ax") : "+a"(a), [over] "=qm"(over)
				 : "d"(port), [len] "i"(INSN_LEN_IO_DX + 1) : "memory", "cc");
	else if (in)
		__asm__ volatile(VE_SITE("inl %%dx, %%eax") : "+a"(a), [over] "=qm"(over)
				 : "d"(port), [len] "i"(INSN_LEN_IO_DX) : "memory", "cc");
	else if (size == 1)
		__asm__ volatile(VE_SITE("outb %%al, %%dx") : "+a"(a), [over] "=qm"(over)
				 : "d"(port), [len] "i"(INSN_LEN_IO_DX) : "memory", "cc");
	else if (size == 2)
		__asm__ volatile(VE_SITE("outw %%ax, %%dx") : "+a"(a), [over] "=qm"(over)
				 : "d"(port), [len] "i"(INSN_LEN_IO_DX + 1) : "memory", "cc");
	else
		__asm__ volatile(VE_SITE("outl %%eax, %%dx") : "+a"(a), [over] "=qm"(over)
				 : "d"(port), [len] "i"(INSN_LEN_IO_DX) : "memory", "cc");
	ve_resumed(over);
	*rax = a;
}

/*
 * A #VC as the CPU raises it (AMD APM vol. 2, "#VC Exception"): error code = the exit
 * code, RIP at the instruction, which the handler decodes and skips. The frame is
 * handed to the kernel's handlers directly; `insn` holds the bytes they find at RIP.
 */
static void vc(u64 code, const u8 *insn, struct trap_frame *f, const char *what)
{
	need_handler(VEC_VC, what);
	f->vector = VEC_VC;
	f->error_code = code;
	f->rip = (u64)(uintptr_t)insn;
	emu_self()->vc_depth++;
	emu_host_leave();
	trap_dispatch(f);
	emu_host_enter();
	emu_self()->vc_depth--;
}

static const u8 rdmsr_bytes[] = { 0x0f, 0x32 }, wrmsr_bytes[] = { 0x0f, 0x30 };
static const u8 cpuid_bytes[] = { 0x0f, 0xa2 };

static void vc_msr(bool write, u32 msr, u64 *val)
{
	struct trap_frame f;

	memset(&f, 0, sizeof(f));
	f.rcx = msr, f.rax = (u32)*val, f.rdx = *val >> 32;
	emu_count(write ? "wrmsr_vc" : "rdmsr_vc");
	vc(SVM_EXIT_MSR, write ? wrmsr_bytes : rdmsr_bytes, &f,
	   "an MSR access raised #VC with no #VC handler in the kernel's IDT: a real SNP guest "
	   "dies here");
	*val = ((f.rdx & 0xffffffff) << 32) | (u32)f.rax;
}

/*
 * The hostile host: a #VC with an error code of its choosing, delivered where the guest
 * is (GHCB spec and AMD APM vol. 2: without Restricted Injection the hypervisor may
 * inject any exception at any instruction boundary). The guest must refuse it; if its
 * handler returns, it believed registers the host chose, and the host stops it saying so.
 */
__noreturn void emu_forge_vc(const struct trap_frame *f, u64 code, u64 rip, const char *where)
{
	struct trap_frame g = *f;
	char why[160];

	emu_count("forged_vc");
	kprintf("emu: the host injects #VC with exit code %#llx at %s (RIP %#llx)\n", code, where, rip);
	vc(code, (const u8 *)(uintptr_t)rip, &g, "a forged #VC with no #VC handler in the kernel's IDT");
	format_buf(why, sizeof(why), "the guest's #VC handler served a forged #VC (exit code %#llx at "
		   "%s): it now runs with registers the host chose", code, where);
	emu_host_stops_guest(code, why);
}

void emu_raise_vc(const struct trap_frame *f, u64 code, u64 cr2, const char *where)
{
	struct trap_frame g = *f;
	char why[160];

	emu_count("raised_vc");
	kprintf("emu: %s raises #VC with exit code %#llx (CR2 %#llx, RIP %#llx)\n", where, code, cr2, f->rip);
	__asm__ volatile("mov %0, %%cr2" : : "r"(cr2) : "memory");
	vc(code, (const u8 *)(uintptr_t)f->rip, &g, "a #VC with no #VC handler in the kernel's IDT");
	format_buf(why, sizeof(why), "the guest's #VC handler returned from exit code %#llx at %s, "
		   "which would fault again", code, where);
	emu_host_stops_guest(code, why);
}

static const u8 cpuid_insn[] = { 0x0f, 0xa2 };

void emu_inject_nmi(const struct trap_frame *f)
{
	struct trap_frame g = *f;

	emu_count("injected_nmi");
	kprintf("emu: the host injects an NMI while the guest's #VC handler runs\n");
	g.vector = VEC_NMI;
	g.error_code = 0;
	emu_host_leave();
	trap_dispatch(&g);
	emu_host_enter();
	emu_host_stops_guest(VEC_NMI, "the guest returned from an NMI injected inside its #VC handler");
}

void emu_forge_nested_vc(void)
{
	struct trap_frame g;

	memset(&g, 0, sizeof(g));
	g.rax = 0x80000000;
	emu_count("nested_vc");
	kprintf("emu: the host injects a second #VC (CPUID) while the guest's #VC handler runs\n");
	vc(SVM_EXIT_CPUID, cpuid_insn, &g, "a nested #VC with no #VC handler");
	emu_host_stops_guest(SVM_EXIT_CPUID, "the guest's #VC handler served a #VC injected while it "
			     "was serving another (the GHCB held the outer exit's answer)");
}

/*
 * msr_intercept / tsc_freq_intercept after ExitBootServices: the host intercepts an MSR
 * the hardware passes through, and the guest's access raises #VC 0x7C. A guest that
 * serves it took the host's word for it.
 */
static bool intercepted_msr(bool guest, u32 msr, bool write, u64 *val)
{
	struct emu_fault *fl = NULL;
	char why[160];

	if (emu.mode != EMU_SNP || !guest || !emu.armed)
		return false;
	if (msr == MSR_GUEST_TSC_FREQ && !write && (emu_sev_status() & SEV_STATUS_SNP_SECURE_TSC))
		fl = emu_fault_take(&emu.faults, FAULT_TSC_FREQ_INTERCEPT, 0, 0);
	if (!fl) {
		fl = emu_fault_find(&emu.faults, FAULT_MSR_INTERCEPT, 0, 0);
		fl = fl && fl->value == msr ? emu_fault_take(&emu.faults, FAULT_MSR_INTERCEPT, 0, 0) : NULL;
	}
	if (!fl)
		return false;
	vc_msr(write, msr, val);
	format_buf(why, sizeof(why), "the guest's #VC handler served an intercepted %s of MSR %#x, "
		   "which the hardware passes through", write ? "WRMSR" : "RDMSR", msr);
	emu_host_stops_guest(msr, why);
}

static void vc_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	struct trap_frame f;

	memset(&f, 0, sizeof(f));
	f.rax = leaf, f.rcx = subleaf;
	emu_count("cpuid_vc");
	vc(SVM_EXIT_CPUID, cpuid_bytes, &f,
	   "CPUID raised #VC with no #VC handler in the kernel's IDT: a real SNP guest dies here");
	r->eax = (u32)f.rax, r->ebx = (u32)f.rbx, r->ecx = (u32)f.rcx, r->edx = (u32)f.rdx;
}

/* ------------------------------------------------------------------ MSRs */

static int msr_trap(u32 msr, bool write)
{
	return emu.mode == EMU_TDX ? tdx_msr_trap(msr, write)
				   : snp_msr_trap(msr, write, !!(emu_sev_status() & SEV_STATUS_SNP_SECURE_TSC));
}

/*
 * The SEV MSRs, which QEMU's TCG does not implement (it reads 0 and drops writes).
 * GUEST_TSC_FREQ under Secure TSC (AMD APM vol. 2, 15.36.18; Linux snp_secure_tsc_init
 * reads bits 17:0 as MHz): the guest TSC's frequency, which the host set.
 */
static bool sev_msr(u32 msr, bool write, u64 *val)
{
	if (emu.mode == EMU_SNP && msr == MSR_GUEST_TSC_FREQ && !write &&
	    (emu_sev_status() & SEV_STATUS_SNP_SECURE_TSC)) {
		struct emu_fault *lie = emu_fault_find(&emu.faults, FAULT_TSC_FREQ_INTERCEPT, 0, 0);

		emu_count("rdmsr_guest_tsc_freq");
		/* Intercepted, before EBS: the firmware's #VC handler forwards it, the host answers. */
		if (lie && !emu.armed) {
			emu_count("guest_tsc_freq_forwarded");
			*val = lie->value;
			return true;
		}
		*val = (emu_host_tsc_hz() / 1000000) & 0x3ffff;
		return true;
	}
	if (emu.mode != EMU_SNP || (msr != MSR_SEV_GHCB && msr != MSR_SEV_STATUS))
		return false;
	emu_count(write ? "wrmsr" : "rdmsr");
	if (msr == MSR_SEV_GHCB && write)
		emu_self()->ghcb_msr = *val;
	else if (msr == MSR_SEV_GHCB)
		*val = emu_self()->ghcb_msr;
	else if (!write)
		*val = emu_sev_status();	/* SEV, SEV-ES and SEV-SNP active (AMD APM vol. 2, 15.34.10) */
	return true;	/* a write to SEV_STATUS: the model has no #GP to give; nothing changes */
}

static bool play_msr(bool guest, u32 msr, bool write, u64 *val)
{
	int trap;

	if (intercepted_msr(guest, msr, write, val))
		return true;
	if (sev_msr(msr, write, val))
		return true;
	if (!trapping_mode() || !guest)
		return false;
	trap = msr_trap(msr, write);
	if (trap == TRAP_NONE) {
		/* The platform lets it through: the CPU's own answer, run as the host's. */
		if (write)
			raw_wrmsr(msr, *val);
		else
			*val = raw_rdmsr(msr);
		return true;
	}
	if (trap == TRAP_GP)
		emu_host_stops_guest(msr, "a native MSR access the platform answers with #GP: the "
				     "kernel has no #GP handler and a real guest dies here");
	if (emu.armed) {
		if (emu.mode == EMU_TDX)
			ve_msr(write, msr, val);
		else
			vc_msr(write, msr, val);
		return true;
	}
	/* Before ExitBootServices the firmware's handler asks the host on the guest's behalf. */
	if (emu.mode == EMU_TDX ? emu_tdx_vmm_msr(write, msr, val) : emu_snp_hv_msr(write, msr, val))
		return true;
	emu_host_stops_guest(msr, "the host refused an MSR access the firmware's #VE/#VC handler "
			     "forwarded; the firmware stops there");
}

bool emu_play_rdmsr(u32 msr, u64 *val)
{
	bool guest = emu_host_enter(), played = play_msr(guest, msr, false, val);

	emu_host_leave();
	return played;
}

bool emu_play_wrmsr(u32 msr, u64 val)
{
	bool guest = emu_host_enter(), played = play_msr(guest, msr, true, &val);

	emu_host_leave();
	return played;
}

/* ------------------------------------------------------------------ CPUID and HLT */

static bool play_cpuid(bool guest, u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	if (emu.mode == EMU_TDX) {
		/* The module's own leaves: its answer, from the guest or the host side alike. */
		if (tdx_cpuid_trap(leaf, subleaf) == TRAP_NONE) {
			emu_tdx_module_cpuid(leaf, subleaf, r);
			return true;
		}
		if (guest && emu.armed) {
			ve_cpuid(leaf, subleaf, r);
			return true;
		}
		/* TDVF's #VE handler forwards every such leaf to the VMM (CcExitVeHandler.c). */
		emu_cpuid_values(leaf, subleaf, r);
		return true;
	}
	if (emu.mode == EMU_SNP) {
		if (guest && emu.armed) {
			vc_cpuid(leaf, subleaf, r);
			return true;
		}
		/* OVMF's #VC handler (from its CPUID page) or the host: the same values here. */
		emu_cpuid_values(leaf, subleaf, r);
		return true;
	}
	return false;
}

bool emu_play_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	bool guest = emu_host_enter(), played = play_cpuid(guest, leaf, subleaf, r);

	emu_host_leave();
	return played;
}

/*
 * HLT: a #VE in a TD (the kernel's handler halts through TDVMCALL). For an SNP guest an
 * automatic exit: the instruction runs (traps.h).
 */
bool emu_play_halt(void)
{
	bool guest = emu_host_enter(), played = emu.mode == EMU_TDX && emu.armed && guest;

	if (played)
		ve_halt();
	emu_host_leave();
	return played;
}

/* ------------------------------------------------------------------ port I/O */

/*
 * IN/OUT in a TD raise #VE, which the guest must turn into TDVMCALL<Instruction.IO>
 * (Linux arch/x86/coco/tdx/tdx.c handle_io); in an SEV-ES/SNP guest they raise #VC with
 * error code IOIO, 0x7B (AMD APM vol. 2, "#VC Exception"; Linux sev vc_handle_ioio).
 * Under TCG they simply run, so the emulator delivers that exception itself, once the
 * firmware's own #VE/#VC handlers are gone (after ExitBootServices). With no handler
 * registered, a real guest would take the exception, try to report it on the console,
 * take it again, and die without a word reaching the host: the emulated host says so
 * and stops the VM.
 */
static const u8 in_out_bytes[2][3] = {
	/* what a handler decoding the instruction at RIP finds: OUT DX,AL/AX/EAX; IN the same */
	[0] = { 0xee, 0x66, 0xef }, [1] = { 0xec, 0x66, 0xed },
};

bool emu_guest_port_io(u16 port, int size, bool in, u32 *val)
{
	u64 mask = size == 4 ? 0xffffffffULL : (1ULL << (8 * size)) - 1;

	if (!trapping_mode() || !emu.armed)
		return false;
	if (!emu_host_enter()) {
		/* The emulated host's own I/O (its console, fw_cfg): the instruction. */
		emu_host_leave();
		return false;
	}
	emu_count(emu.mode == EMU_TDX ? "port_io_ve" : "port_io_vc");
	need_handler(emu.mode == EMU_TDX ? VEC_VE : VEC_VC, emu.mode == EMU_TDX
		? "port I/O raised #VE with no #VE handler in the kernel's IDT: a real TD dies "
		  "here without a word reaching the host"
		: "port I/O raised #VC with no #VC handler in the kernel's IDT: a real SNP guest "
		  "dies here without a word reaching the host");
	if (emu.mode == EMU_TDX) {
		/* The #VE information VEINFO.GET returns for an I/O exit (SDM vol. 3C, table 28-5). */
		u64 rax = in ? 0 : (*val & mask);
		u64 qual = (u64)(size - 1) | (in ? IO_QUAL_IN : 0) | ((u64)port << 16);

		emu_stage_ve(EXIT_REASON_IO, qual, 0, 0, INSN_LEN_IO_DX + (size == 2));
		emu_host_leave();
		ve_io(port, size, in, &rax);
		emu_host_leave();
		if (in)
			*val = (u32)(rax & mask);
		return true;
	}
	/* SNP: the frame a #VC for this IN/OUT would push, handed to the handlers. */
	struct trap_frame f;

	memset(&f, 0, sizeof(f));
	f.rax = in ? 0 : (*val & mask);
	f.rdx = port;
	vc(SVM_EXIT_IOIO, &in_out_bytes[in][size == 1 ? 0 : size == 2 ? 1 : 2], &f,
	   "port I/O raised #VC with no #VC handler");
	emu_host_leave();
	if (in)
		*val = (u32)(f.rax & mask);
	return true;
}

/* ------------------------------------------------------------------ arming the observer */

/*
 * emu_fault=la57: the firmware hands over with five-level paging, as a firmware built
 * for it would (edk2's PcdUse5LevelPageTable): a PML5 whose first entry is the
 * firmware's own PML4, so every address maps as before (emu/la57.asm switches).
 */
#define CR4_PCIDE (1ULL << 17)
#define CPUID_7_ECX_LA57 (1u << 16)	/* Intel SDM vol. 2A, CPUID leaf 07H ECX bit 16 */

static u64 la57_pml5[512] __attribute__((aligned(PAGE_SIZE)));
void emu_la57_switch(u32 pml5);

static void handover_la57(void)
{
	struct cpuid_regs r;
	u64 rsp;

	__asm__ volatile("mov %%rsp, %0" : "=r"(rsp));
	raw_cpuid(7, 0, &r);
	if (read_cr4() & CR4_LA57) {
		kprintf("emu: la57: the firmware already runs five-level paging\n");
		return;
	}
	if (!(r.ecx & CPUID_7_ECX_LA57) || (read_cr4() & CR4_PCIDE) || rsp >= 4 * GiB ||
	    (u64)(uintptr_t)la57_pml5 >= 4 * GiB || (u64)(uintptr_t)emu_la57_switch >= 4 * GiB) {
		kprintf("emu: la57: no five-level paging here (a CPU with LA57, QEMU -cpu ...,+la57, "
			"and code, stack and tables below 4 GiB are needed); the firmware stays "
			"four-level\n");
		return;
	}
	la57_pml5[0] = (read_cr3() & PTE_ADDR_MASK) | PTE_P | PTE_W;
	emu_la57_switch((u32)(uintptr_t)la57_pml5);
	kprintf("emu: la57: the firmware hands over with five-level paging\n");
}

/*
 * What the SNP guest's configuration changes about trapping, for the observer: SEV
 * features that drop an intercept, and instructions its CPUID lacks, which KVM then
 * intercepts (CPUID leaf 0x80000001 EDX bit 27 RDTSCP, leaf 7 EBX bit 10 INVPCID: Intel
 * SDM vol. 2A and AMD APM vol. 3, CPUID).
 */
static u32 snp_arm_features(void)
{
	struct cpuid_regs ext, l7;
	u32 f = 0;

	emu_cpuid_values(0x80000001, 0, &ext);
	emu_cpuid_values(7, 0, &l7);
	if (emu_sev_status() & SEV_STATUS_SNP_SECURE_TSC)
		f |= OBS_ARM_SNP_SECURE_TSC;
	if (emu_sev_status() & SEV_STATUS_DEBUG_SWAP)
		f |= OBS_ARM_SNP_DEBUG_SWAP;
	if (!(ext.edx & (1u << 27)))
		f |= OBS_ARM_SNP_NO_RDTSCP;
	if (!(l7.ebx & (1u << 10)))
		f |= OBS_ARM_SNP_NO_INVPCID;
	return f;
}

void boot_test_after_ebs(void)
{
	if (emu_fault_take(&emu.faults, FAULT_LA57, 0, 0))
		handover_la57();
	emu.armed = true;
	if (emu.mode == EMU_TDX)
		emu_obs_arm_tdx();
	else if (emu.mode == EMU_SNP)
		emu_obs_arm_snp(snp_arm_features());
	else if (emu.bi->config.fake_set || emu.bi->config.platform == PLAT_SIM)
		emu_obs_arm_sim();	/* memory only: on a normal VM no instruction traps */
	/* The emulated host's own set-up, checked from the arm on like everything else. */
	emu_snp_cbit_alias();
}
