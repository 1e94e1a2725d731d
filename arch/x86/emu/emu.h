/* SPDX-License-Identifier: MIT */
/* memaccept (test image): the platform emulator: TDX module, RMP and hypervisor models under plain QEMU. */
#ifndef ARCH_X86_EMU_EMU_H
#define ARCH_X86_EMU_EMU_H

#include "arch/x86/cpu.h"
#include "arch/x86/desc.h"
#include "arch/x86/emu/faults.h"
#include "arch/x86/emu/model.h"
#include "include/boot_info.h"
#include "mm/memmap.h"

/*
 * Under plain QEMU the confidential-computing instructions fault: TDCALL, PVALIDATE
 * and VMGEXIT raise #UD, RDMSR/WRMSR of the SEV MSRs raise #GP. The emulator catches
 * those faults, recognises the instruction by its bytes, does what the TDX module or
 * the SNP hardware and hypervisor would do to a per-4 KiB model of guest memory, and
 * resumes after the instruction. The real backends (arch/x86/tdx, arch/x86/sev) run
 * unchanged on top. CPUID cannot be caught this way, so detection asks cpu_cpuid(),
 * which consults the emulator first (arch/x86/emu_hooks.h).
 *
 * Modes: tdx (platform=tdx-emu), snp (platform=snp-emu), observe (any other platform
 * in the test image: no instruction is emulated, but every accept is checked against
 * the page model, which catches a double accept on the sim platform too).
 */
enum emu_mode {
	EMU_OFF,
	EMU_OBSERVE,
	EMU_TDX,
	EMU_SNP,
};

/* The model covers RAM below this; larger guests are not emulated (host memory). */
#define EMU_MODEL_LIMIT (64 * GiB)

struct emu_state {
	u32 mode;
	bool installed;		/* after ExitBootServices: the trap handlers are in place */
	struct emu_faults faults;
	struct emu_model model;	/* the page model (arch/x86/emu/model.h) */
	/* TDX: a #VE staged by a test case, returned by TDG.VP.VEINFO.GET. */
	bool ve_staged;
	u32 ve_reason, ve_len;
	u64 ve_qual, ve_gla, ve_gpa;
	/* SNP: the GHCB MSR's current value and the registered GHCB. */
	u64 ghcb_msr;
	u64 ghcb_gpa;
	u64 last_psc_cur;
};

extern struct emu_state emu;

/* Called from efi_main before detection: choose the mode from the command line (boot/boot.h). */
void boot_emulator_select(struct boot_info *bi);
/* Called from kernel_main: trap handlers and fault injection, after idt_init(). */
void emu_install(const struct boot_info *bi);
/* The page model, once the final map is known and boot-time allocation works. */
void emu_setup_model(const struct memmap *m);
/* Observe mode: the sim platform accepted [start, end). */
void emu_observe_accept(u64 start, u64 end);
/* Add an "emulator" object with the mode and counters to the event being built. */
void emu_report(void);
u32 emu_mode(void);

__noreturn void emu_host_stops_guest(int code, const char *why);

/* The models (one per mode). */
void emu_tdx_tdcall(struct trap_frame *f);
void emu_snp_pvalidate(struct trap_frame *f);
void emu_snp_vmgexit(struct trap_frame *f);
void emu_snp_msr(struct trap_frame *f, bool write);
bool emu_snp_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r);
bool emu_tdx_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r);

/* CPUID as the emulated VMM answers it (for TDVMCALL<CPUID> and the GHCB CPUID exit). */
void emu_cpuid_values(u32 leaf, u32 subleaf, struct cpuid_regs *r);

/* Test hook: the next TDG.VP.VEINFO.GET returns this #VE. */
void emu_stage_ve(u32 reason, u64 qual, u64 gla, u64 gpa, u32 len);

#endif
