/* SPDX-License-Identifier: MIT */
/* memaccept: CPU feature queries. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu_hooks.h"

void cpu_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	/* The test image's platform emulator answers the leaves a TD or SNP guest would see. */
	if (emu_cpuid(leaf, subleaf, r))
		return;
	cpuid_raw(leaf, subleaf, r);
}

unsigned cpu_phys_bits(void)
{
	struct cpuid_regs r;

	cpu_cpuid(0x80000000, 0, &r);
	if (r.eax < 0x80000008)
		return 36;
	cpu_cpuid(0x80000008, 0, &r);
	return r.eax & 0xff;
}

bool cpu_has_1g_pages(void)
{
	struct cpuid_regs r;

	cpu_cpuid(0x80000000, 0, &r);
	if (r.eax < 0x80000001)
		return false;
	cpu_cpuid(0x80000001, 0, &r);
	return r.edx & CPUID_80000001_EDX_PDPE1GB;
}
