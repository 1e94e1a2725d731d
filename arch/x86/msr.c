/* SPDX-License-Identifier: MIT */
/* memaccept: the one way to RDMSR and WRMSR (arch/x86/msr.h). */
#include "arch/x86/cpu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/msr.h"
#include "arch/x86/platform.h"
#include "include/panic.h"

/*
 * The raw instructions live only in msr_read_safe and msr_write_safe (never inlined:
 * tools/check-image.sh finds them by name).
 */
static bool native(u32 msr, bool write)
{
	return !platform->msr_native || platform->msr_native(msr, write);
}

__noinline bool msr_read_safe(u32 msr, u64 *val)
{
	if (!native(msr, false))
		return platform->rdmsr(msr, val);
	/* Test image: the emulator plays the CPU (and raises the #VE or #VC a host would). */
	if (!emu_play_rdmsr(msr, val))
		*val = raw_rdmsr(msr);
	return true;
}

__noinline bool msr_write_safe(u32 msr, u64 val)
{
	if (!native(msr, true))
		return platform->wrmsr(msr, val);
	if (!emu_play_wrmsr(msr, val))
		raw_wrmsr(msr, val);
	return true;
}

u64 msr_read(u32 msr)
{
	u64 v;

	if (!msr_read_safe(msr, &v))
		fatal_reason(EXIT_PLATFORM_FATAL, FC_MSR, "the %s host refused RDMSR %#x", platform->name,
			     msr);
	return v;
}

void msr_write(u32 msr, u64 val)
{
	if (!msr_write_safe(msr, val))
		fatal_reason(EXIT_PLATFORM_FATAL, FC_MSR, "the %s host refused WRMSR %#x (value %#llx)",
			     platform->name, msr, val);
}
