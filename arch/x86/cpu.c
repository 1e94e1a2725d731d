/* SPDX-License-Identifier: MIT */
/* memaccept: CPUID and HLT, each through the platform where it needs to, and CPU feature queries. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/platform.h"
#include "drivers/console.h"

/*
 * CPUID: the platform's own answer where it has one (SNP: the GHCB CPUID exit, once this
 * CPU has a GHCB), else the instruction, which in a TD the TDX module answers or turns
 * into a #VE for the kernel's handler. In the test image the emulator plays the
 * instruction as the platform would: a module's answer, a #VE or #VC, or the CPU's.
 */
__noinline void cpu_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	if (platform->cpuid && platform->cpuid(leaf, subleaf, r))
		return;
	if (emu_play_cpuid(leaf, subleaf, r))
		return;
	raw_cpuid(leaf, subleaf, r);
}

/* HLT is a #VE in a TD: TDVMCALL<Instruction.HLT> there (platform->halt). */
__noinline __noreturn void cpu_halt(void)
{
	for (;;) {
		if (platform->halt)
			platform->halt();
		else if (!emu_play_halt())
			raw_halt();
	}
}

/*
 * CPUID comes from the host on a virtual machine, so the width is checked: x86-64
 * physical addresses have 36 to 52 bits (Intel SDM vol. 3A, 4.1.4). Outside that, the
 * architectural maximum is used, which makes the memory map check the least strict
 * rather than dropping memory, and the reason is printed.
 */
unsigned cpu_phys_bits(void)
{
	struct cpuid_regs r;
	unsigned bits;

	cpu_cpuid(0x80000000, 0, &r);
	if (r.eax < 0x80000008)
		return 36;
	cpu_cpuid(0x80000008, 0, &r);
	bits = r.eax & 0xff;
	if (bits < 36 || bits > 52) {
		kprintf("cpu: CPUID reports a %u-bit physical address width; using 52\n", bits);
		bits = 52;
	}
	return bits;
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
