/* SPDX-License-Identifier: MIT */
/* memaccept (test image): the SEV-SNP side of the emulator (RMP and hypervisor models). */
#include "arch/x86/emu/emu.h"
#include "include/exit_codes.h"

/* The SNP model is not written yet: the SNP emulation mode is refused at boot. */
bool emu_snp_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	(void)leaf, (void)subleaf, (void)r;
	return false;
}

void emu_snp_pvalidate(struct trap_frame *f)
{
	(void)f;
	emu_host_stops_guest(EXIT_PLATFORM_FATAL, "PVALIDATE: the SNP model is not built yet");
}

void emu_snp_vmgexit(struct trap_frame *f)
{
	(void)f;
	emu_host_stops_guest(EXIT_PLATFORM_FATAL, "VMGEXIT: the SNP model is not built yet");
}

void emu_snp_msr(struct trap_frame *f, bool write)
{
	(void)f, (void)write;
	emu_host_stops_guest(EXIT_PLATFORM_FATAL, "SEV MSR: the SNP model is not built yet");
}
