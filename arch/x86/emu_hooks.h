/* SPDX-License-Identifier: MIT */
/* memaccept: the few places where the test image's platform emulator can answer instead of the CPU. */
#ifndef ARCH_X86_EMU_HOOKS_H
#define ARCH_X86_EMU_HOOKS_H

#include "arch/x86/cpu.h"

/*
 * CPUID does not trap under plain QEMU, so the emulator cannot catch it the way it catches
 * TDCALL, PVALIDATE or VMGEXIT (#UD). Neither do the SEV MSRs: QEMU 7.2's TCG reads
 * unknown MSRs as 0 and drops writes to them without a #GP (measured with MSR
 * 0xC0010130). So detection and the SNP backend go through cpu_cpuid(), cpu_rdmsr() and
 * cpu_wrmsr(), which ask the emulator first. In the production image these hooks are
 * constant false and the compiler drops the calls: no emulator code is linked (checked
 * by tools/check-image.sh). The sim platform also tells the emulator what it accepted,
 * so that the page model catches a double accept (observe mode).
 */
#ifdef CONFIG_EMULATOR
bool emu_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r);
bool emu_rdmsr(u32 msr, u64 *val);
bool emu_wrmsr(u32 msr, u64 val);
void emu_observe_accept(u64 start, u64 end);
/*
 * An IN or OUT the guest executes: in an emulated TD (SNP guest) the real CPU raises #VE
 * (#VC) instead, so the emulator delivers that exception and returns true (*val holds
 * what an IN read); false: let the instruction run.
 */
bool emu_guest_port_io(u16 port, int size, bool in, u32 *val);
/* The guest sends an IPI (INIT or STARTUP: init_or_startup); in an emulated TD this ends the VM. */
void emu_guest_ipi(u32 dest, bool init_or_startup);
#else
static inline bool emu_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	(void)leaf, (void)subleaf, (void)r;
	return false;
}
static inline bool emu_rdmsr(u32 msr, u64 *val)
{
	(void)msr, (void)val;
	return false;
}
static inline bool emu_wrmsr(u32 msr, u64 val)
{
	(void)msr, (void)val;
	return false;
}
static inline void emu_observe_accept(u64 start, u64 end)
{
	(void)start, (void)end;
}
static inline bool emu_guest_port_io(u16 port, int size, bool in, u32 *val)
{
	(void)port, (void)size, (void)in, (void)val;
	return false;
}
static inline void emu_guest_ipi(u32 dest, bool init_or_startup)
{
	(void)dest, (void)init_or_startup;
}
#endif

static inline u64 cpu_rdmsr(u32 msr)
{
	u64 v;

	return emu_rdmsr(msr, &v) ? v : rdmsr(msr);
}

static inline void cpu_wrmsr(u32 msr, u64 val)
{
	if (!emu_wrmsr(msr, val))
		wrmsr(msr, val);
}

#endif
