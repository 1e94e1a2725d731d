/* SPDX-License-Identifier: MIT */
/* memaccept: the few places where the test image's platform emulator can answer instead of the CPU. */
#ifndef ARCH_X86_EMU_HOOKS_H
#define ARCH_X86_EMU_HOOKS_H

#include "arch/x86/cpu.h"

/*
 * CPUID does not trap under plain QEMU, so the emulator cannot catch it the way it catches
 * TDCALL or PVALIDATE (#UD) or the SEV MSRs (#GP). Detection code calls cpu_cpuid(), which
 * asks the emulator first. In the production image this is a constant false and the
 * compiler drops the call: no emulator code is linked (checked by the Makefile).
 */
#ifdef CONFIG_EMULATOR
bool emu_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r);
/* Before ExitBootServices the firmware's IDT is live, so a #GP cannot be caught yet. */
bool emu_rdmsr_early(u32 msr, u64 *val);
#else
static inline bool emu_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	(void)leaf, (void)subleaf, (void)r;
	return false;
}
static inline bool emu_rdmsr_early(u32 msr, u64 *val)
{
	(void)msr, (void)val;
	return false;
}
#endif

#endif
