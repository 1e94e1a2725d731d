/* SPDX-License-Identifier: MIT */
/* memaccept (test image): which instructions, MSRs and CPUID leaves a real TD or SNP guest traps, each with its source. */
#ifndef ARCH_X86_EMU_TRAPS_H
#define ARCH_X86_EMU_TRAPS_H

/*
 * The platform model shared by the emulator (which plays each trap for the kernel) and
 * the instruction observer (tools/observer, which stops a boot where the kernel ran one
 * natively that a real host would have trapped). Plain C with no kernel types: the
 * observer is host code.
 *
 * Sources, as read for this table:
 * - TDX: intel/tdx-module 1.5 (TDX_Module_1.5.05): src/td_dispatcher/tdx_td_dispatcher.c
 *   (the VM-exit switch), vm_exits/td_msr_access.c and include/auto_gen/msr_config_lookup.c
 *   (MSRs), vm_exits/td_cpuid.c and include/auto_gen/cpuid_configurations.c (CPUID),
 *   src/common/data_structures/td_vmcs_init.c (which exits are enabled at all).
 * - SNP: Linux arch/x86/kvm/svm/svm.c init_vmcb and sev.c sev_es_init_vmcb and
 *   sev_es_recalc_msr_intercepts (what KVM intercepts for an SEV-ES/SNP guest: an
 *   intercepted instruction is a non-automatic exit, #VC); Linux arch/x86/coco/sev
 *   vc-handle.c (which #VC exit codes a guest must serve).
 */

enum trap_class {
	TC_RDMSR,
	TC_WRMSR,
	TC_CPUID,
	TC_HLT,
	TC_IO,		/* IN, OUT */
	TC_STRING_IO,	/* INS, OUTS */
	TC_WBINVD,
	TC_INVD,
	TC_MONITOR,	/* MONITOR, MONITORX */
	TC_MWAIT,	/* MWAIT, MWAITX */
	TC_VMCALL,
	TC_VMMCALL,
	TC_RDPMC,
	TC_RDTSC,
	TC_RDTSCP,
	TC_XSETBV,
	TC_DR7,		/* MOV to or from DR7 */
	TC_SVM,		/* VMRUN, VMLOAD, VMSAVE, STGI, CLGI, SKINIT, INVLPGA */
	TC_MMIO,	/* a load or store that reaches a device, not RAM */
	TC_RDPRU,	/* 0F 01 FD, AMD only */
	TC_PCONFIG,	/* 0F 01 C5, Intel only */
	TC_INVPCID,	/* 66 0F 38 82 */
	TC_COUNT,
};

/* What the platform does when the guest runs an instruction of a class. */
enum trap_kind {
	TRAP_NONE,	/* runs natively (or exits automatically, invisible to the guest) */
	TRAP_VE,	/* TDX: #VE, the guest must emulate it through TDVMCALL */
	TRAP_VC,	/* SNP: #VC, the guest must emulate it through the GHCB */
	TRAP_GP,	/* #GP(0) */
	TRAP_UD,	/* #UD */
	TRAP_OPERAND,	/* depends on the operand (the MSR, the CPUID leaf): see below */
};

static inline const char *trap_class_name(int c)
{
	static const char *const names[TC_COUNT] = {
		"rdmsr", "wrmsr", "cpuid", "hlt", "io", "string_io", "wbinvd", "invd", "monitor",
		"mwait", "vmcall", "vmmcall", "rdpmc", "rdtsc", "rdtscp", "xsetbv", "dr7", "svm",
		"mmio", "rdpru", "pconfig", "invpcid",
	};
	return c >= 0 && c < TC_COUNT ? names[c] : "?";
}

static inline const char *trap_kind_name(int k)
{
	static const char *const names[] = { "none", "#VE", "#VC", "#GP", "#UD", "operand" };

	return k >= 0 && k <= TRAP_OPERAND ? names[k] : "?";
}

/*
 * A TD (tdx_td_dispatcher.c; td_vmcs_init.c init_td_vmcs_exec_control_field):
 * HLT (exit reason 12), I/O and string I/O (30), VMCALL (18), WBINVD (54) and INVD (13)
 * are #VE. MONITOR (39) and MWAIT (36) exit only where the TD's CPUID does not report
 * MONITOR (MONITOR and MWAIT exiting = !CPUID.1:ECX[3], set at TDH.MNG.INIT), and the
 * dispatcher turns those exits into #VE (td_generic_ve_exit) like HLT's; where CPUID
 * reports MONITOR they run natively. QEMU's default CPU model (qemu64) does not
 * report it: #VE.
 * RDPMC raises #GP(0) unless ATTRIBUTES.PERFMON (td_rdpmc_exit). RDTSC(P),
 * XGETBV and DR accesses do not exit; XSETBV exits and the module emulates it
 * (td_xsetbv_instruction_exit). MMIO in a TD is an EPT violation on a shared GPA: #VE
 * (a private GPA with nothing behind it never completes). SVM instructions and RDPRU
 * do not exist on Intel: #UD. PCONFIG is #UD unless the TD's CPUID reports it
 * (td_vmcs_init.c: en_pconfig = cpuid_flags.mktme_supported), and then every leaf exits
 * (the PCONFIG-exiting bitmap is all ones) to a #VE (td_generic_ve_exit): a trap either
 * way; memaccept's TD model reports no PCONFIG, so #UD.
 *
 * Not classes, because whether they trap depends on an operand the observer cannot read
 * (QEMU's plugin API reads no registers): MOV to CR0/CR4, LMSW and CLTS exit only where
 * they change a bit of the module's CR0/CR4 guest/host masks (td_vmcs_init.c: CR0 PE,
 * NE, NW, CD and the VMX fixed bits; CR4 MCE, VMXE, SMXE, and PKE/CET/UINTR/KL/PKS as the
 * TD's XFAM and attributes leave them to the module), then td_cr_access_exit decides
 * (#GP or #VE); a write that keeps those bits as the read shadow has them runs natively,
 * as memaccept's AP trampoline does. RDTSCP and INVPCID run natively: the module
 * enables both among its fixed secondary controls (vmcs_defs.h PROCBASED_CTLS2_INIT
 * 0x133CB3FA: enable RDTSCP, bit 3; enable INVPCID, bit 12) and never lets them exit
 * (tdx_td_dispatcher.c treats both exit reasons as fatal).
 */
static inline int tdx_insn_trap(int c)
{
	switch (c) {
	case TC_RDMSR: case TC_WRMSR: case TC_CPUID:
		return TRAP_OPERAND;
	case TC_HLT: case TC_IO: case TC_STRING_IO: case TC_VMCALL: case TC_WBINVD: case TC_INVD:
	case TC_MONITOR: case TC_MWAIT: case TC_MMIO:
		return TRAP_VE;
	case TC_VMMCALL: case TC_SVM: case TC_RDPRU: case TC_PCONFIG:
		return TRAP_UD;
	case TC_RDPMC:
		return TRAP_GP;
	default:
		return TRAP_NONE;
	}
}

/*
 * An SNP guest under KVM (svm.c init_vmcb sets the intercepts, sev.c sev_es_init_vmcb
 * clears those an SEV-ES guest keeps for itself): CPUID (#VC 0x72), IN/OUT (0x7B: the
 * I/O permission map intercepts every port), WBINVD (0x89), INVD (0x76), MONITOR/MWAIT
 * (0x8A/0x8B unless mwait-in-guest), VMMCALL (0x81), RDPMC (0x6F), DR7 (0x27/0x37) and
 * the SVM instructions are intercepted: #VC. DR7 only without DebugSwap (SEV_FEATURES
 * bit 5): sev_es_init_vmcb sets INTERCEPT_DR7_READ/WRITE only if
 * !sev_vcpu_has_debug_swap; with it the hardware swaps DR7 itself. HLT and PAUSE are automatic
 * exits (no #VC: Linux has no #VC case for them and runs HLT itself). RDTSC is not
 * intercepted, RDTSCP only where the guest's CPUID lacks it, XSETBV not for SEV-ES
 * (sev_es_init_vmcb clears it). MMIO is a nested page fault: #VC 0x400. VMCALL is Intel's:
 * #UD on AMD. RDPRU is intercepted (init_vmcb sets INTERCEPT_RDPRU; sev_es_init_vmcb
 * leaves it): #VC 0x8E, which Linux's #VC handler does not serve. PCONFIG is Intel's:
 * #UD on AMD.
 *
 * Not classes: MOV to CR0/CR4 (LMSW, CLTS) are trap-style intercepts for an SEV-ES
 * guest (sev_es_init_vmcb clears the CR read/write and selective CR0 intercepts and sets
 * TRAP_CR0_WRITE and TRAP_CR4_WRITE, exit codes 0x90-0x9F), which the hardware takes as
 * automatic exits after the write completes: no #VC. INVPCID and RDTSCP are intercepted
 * only where the guest's CPUID lacks them (svm.c svm_recalc_instruction_intercepts):
 * #VC then (exit codes 0xA2 and 0x87); the emulator tells the observer which, with the
 * arm (OBS_ARM_SNP_NO_RDTSCP, OBS_ARM_SNP_NO_INVPCID).
 */
static inline int snp_insn_trap(int c, int debug_swap, int no_rdtscp, int no_invpcid)
{
	switch (c) {
	case TC_DR7:
		return debug_swap ? TRAP_NONE : TRAP_VC;
	case TC_RDTSCP:
		return no_rdtscp ? TRAP_VC : TRAP_NONE;
	case TC_INVPCID:
		return no_invpcid ? TRAP_VC : TRAP_NONE;
	case TC_RDMSR: case TC_WRMSR:
		return TRAP_OPERAND;
	case TC_CPUID: case TC_IO: case TC_STRING_IO: case TC_WBINVD: case TC_INVD: case TC_MONITOR:
	case TC_MWAIT: case TC_VMMCALL: case TC_RDPMC: case TC_SVM: case TC_MMIO: case TC_RDPRU:
		return TRAP_VC;
	case TC_VMCALL: case TC_PCONFIG:
		return TRAP_UD;
	default:
		return TRAP_NONE;
	}
}

/*
 * RDMSR/WRMSR in a TD (MOD-1.5 msr_config_lookup.c and td_msr_access.c): the MSRs the
 * module lets through without an exit; anything else exits, and what it does not emulate
 * itself becomes #VE (exit reason 31/32). Among those: IA32_APIC_BASE, the x2APIC ICR,
 * LVT, timer, SVR and ID (0x802: native only with TD_CTLS.ENUM_TOPOLOGY, which memaccept
 * does not turn on), TSC_DEADLINE, MISC_ENABLE writes, TSC writes, PLATFORM_INFO and
 * every MSR outside 0-0x1FFF and 0xC0000000-0xC0001FFF (the SEV MSRs). EFER: reads are
 * native; every write exits and any change but SCE is #VE (wrmsr_ia32_efer), so a
 * native write counts as trapped here.
 */
static inline int tdx_msr_trap(unsigned msr, int write)
{
	switch (msr) {
	case 0x10:				/* IA32_TSC: read native, write #VE */
		return write ? TRAP_VE : TRAP_NONE;
	case 0x48: case 0x49: case 0x10b:	/* SPEC_CTRL, PRED_CMD, FLUSH_CMD */
	case 0x174: case 0x175: case 0x176:	/* SYSENTER_CS/ESP/EIP */
	case 0x277:				/* PAT */
	case 0x808: case 0x80a: case 0x80b:	/* x2APIC TPR, PPR, EOI: virtual APIC */
	case 0x83f:				/* x2APIC SELF_IPI */
	case 0xc0000081: case 0xc0000082: case 0xc0000084:	/* STAR, LSTAR, FMASK */
	case 0xc0000100: case 0xc0000101: case 0xc0000102:	/* FS, GS, KERNEL_GS base */
	case 0xc0000103:			/* TSC_AUX */
		return TRAP_NONE;
	case 0xc0000080:			/* EFER */
		return write ? TRAP_VE : TRAP_NONE;
	default:
		if (msr >= 0x810 && msr <= 0x827)	/* x2APIC ISR, TMR, IRR */
			return TRAP_NONE;
		if ((msr >= 0x800 && msr <= 0x801) || (msr >= 0x804 && msr <= 0x807) ||
		    (msr >= 0x829 && msr <= 0x82e) || msr == 0x831 || (msr >= 0x840 && msr <= 0x8ff))
			return TRAP_GP;		/* "reserved for xAPIC MSRs" */
		return TRAP_VE;
	}
}

/*
 * RDMSR/WRMSR in an SNP guest under KVM: every MSR is intercepted (svm.c allocates the
 * permission map full) except the pass-through set (svm.c direct_access_msrs with
 * .always; sev.c sev_es_recalc_msr_intercepts: the GHCB MSR, EFER and PAT; GUEST_TSC_FREQ
 * reads only under Secure TSC). An intercepted access is #VC 0x7C. SEV_STATUS reads
 * do not #VC: Linux reads it natively before it has any #VC handler that serves MSRs
 * (arch/x86/boot/compressed/sev.c sev_enable), which works on KVM.
 */
static inline int snp_msr_trap(unsigned msr, int write, int secure_tsc)
{
	switch (msr) {
	case 0xc0010130:			/* GHCB MSR */
	case 0xc0000080:			/* EFER (writes are trap-after exits, automatic) */
	case 0x277:				/* PAT */
	case 0x174:				/* SYSENTER_CS */
	case 0xc0000081: case 0xc0000082: case 0xc0000083: case 0xc0000084:	/* STAR.. FMASK */
	case 0xc0000100: case 0xc0000101: case 0xc0000102:	/* FS, GS, KERNEL_GS base */
		return TRAP_NONE;
	case 0xc0010131:			/* SEV_STATUS: read-only */
		return write ? TRAP_GP : TRAP_NONE;
	case 0xc0010134:			/* GUEST_TSC_FREQ */
		return !write && secure_tsc ? TRAP_NONE : TRAP_VC;
	default:
		return TRAP_VC;
	}
}

/*
 * CPUID in a TD (MOD-1.5 td_cpuid.c td_cpuid_exit, cpuid_configurations.c): the module
 * answers the leaves in its table and raises #VE (exit reason 10) for the rest: 0x2, 0x6,
 * 0x9, 0xC, 0xF, 0x10, 0x16, 0x17, 0x18, 0x1B, 0x80000002-0x80000006, every hypervisor
 * leaf 0x40000000-0x4FFFFFFF, and 0xB and 0x1F unless TD_CTLS.ENUM_TOPOLOGY (off here).
 * Subleaves: 0x4 has 0-4, 0x7 0-2, 0xD 0-0x12, 0x14 0-1, 0x1D 0-1, 0x23 0-3; others
 * #VE. Leaves above the maximum are answered as the highest basic leaf, which does not
 * matter here: the model's maximum basic leaf is 0x23 and memaccept asks for no other.
 */
static inline int tdx_cpuid_trap(unsigned leaf, unsigned subleaf)
{
	if (leaf >= 0x40000000 && leaf <= 0x4fffffff)
		return TRAP_VE;
	switch (leaf) {
	case 0x0: case 0x1: case 0x3: case 0x5: case 0x8: case 0xa: case 0xe: case 0x11:
	case 0x12: case 0x13: case 0x15: case 0x19: case 0x1a: case 0x1c: case 0x1e: case 0x20:
	case 0x22:
	case 0x80000000: case 0x80000001: case 0x80000007: case 0x80000008:
		return TRAP_NONE;
	case 0x4:
		return subleaf <= 4 ? TRAP_NONE : TRAP_VE;
	case 0x7:
		return subleaf <= 2 ? TRAP_NONE : TRAP_VE;
	case 0xd:
		return subleaf <= 0x12 ? TRAP_NONE : TRAP_VE;
	case 0x14: case 0x1d:
		return subleaf <= 1 ? TRAP_NONE : TRAP_VE;
	case 0x23:
		return subleaf <= 3 ? TRAP_NONE : TRAP_VE;
	case 0x21:				/* "IntelTDX    " */
		return subleaf == 0 ? TRAP_NONE : TRAP_VE;
	default:
		return TRAP_VE;
	}
}

#endif
