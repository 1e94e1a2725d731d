/* SPDX-License-Identifier: MIT */
/* memaccept: the clock's choice in efi_main: a declared frequency, else the PM timer (measured by the kernel after ready), else Stall(). */
#include <efi.h>

#include "arch/x86/cpu.h"
#include "arch/x86/msr.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/platform.h"
#include "arch/x86/tsc.h"
#include "boot/boot.h"
#include "lib/string.h"

/* CPUID 1 ECX bit 31: running under a hypervisor (leaves 0x40000000+ mean something). */
#define CPUID_1_ECX_HYPERVISOR (1u << 31)
#define CPUID_HV_LEAF_LIMIT 0x400000ff

static void read_declared(const struct boot_info *bi, struct clock_raw *raw)
{
	struct cpuid_regs r;

	memset(raw, 0, sizeof(*raw));
	cpu_cpuid(0, 0, &r);
	raw->max_leaf = r.eax;
	if (raw->max_leaf >= CPUID_TSC_LEAF) {
		cpu_cpuid(CPUID_TSC_LEAF, 0, &r);
		raw->l15_eax = r.eax;
		raw->l15_ebx = r.ebx;
		raw->l15_ecx = r.ecx;
	}
	cpu_cpuid(1, 0, &r);
	if (r.ecx & CPUID_1_ECX_HYPERVISOR) {
		cpu_cpuid(CPUID_HV_BASE, 0, &r);
		if (r.eax >= CPUID_HV_TIMING && r.eax <= CPUID_HV_LEAF_LIMIT) {
			raw->hv_max_leaf = r.eax;
			cpu_cpuid(CPUID_HV_TIMING, 0, &r);
			raw->hv_tsc_khz = r.eax;
		}
	}
	/* GUEST_TSC_FREQ exists only with Secure TSC; elsewhere reading it would trap. */
	if (bi->detected == DETECTED_SNP && (bi->sev_status & SEV_STATUS_SECURE_TSC)) {
		raw->sev_status = bi->sev_status;
		raw->guest_tsc_freq = msr_read(MSR_GUEST_TSC_FREQ);
		raw->tsc_factor = bi->snp_tsc_factor;
	}
}

static EFI_SYSTEM_TABLE *stall_st;

static void stall(void *ctx, u32 us)
{
	(void)ctx;
	stall_st->BootServices->Stall(us);
}

void boot_clock_choose(EFI_SYSTEM_TABLE *st, struct boot_info *bi)
{
	struct clock_raw raw;
	struct clock_declared d;
	struct tsc_calibration cal;

	read_declared(bi, &raw);
	clock_declared_pick(&raw, &d);
	bi->declared_hz = d.hz;
	bi->declared_source = d.source;
	bi->declared_error_ppm = d.error_ppm;
	if (!bi->config.clock_stall) {
		if (d.source != CLOCK_NONE) {
			bi->clock_source = d.source;
			bi->tsc_hz = d.hz;
			bi->clock_error_ppm = d.error_ppm;
			return;
		}
		/*
		 * The kernel finds the PM timer through the FADT and measures tsc_hz after
		 * `ready`: none of it inside the window. Without a PM timer (hardware-reduced
		 * ACPI) it says so, and clock=stall is the way to calibrate such a platform.
		 */
		if (bi->acpi_rsdp) {
			bi->clock_source = CLOCK_PM_TIMER;
			return;
		}
	}
	/* Nothing else: calibrate now, and start the clock again once it is done. */
	u64 t0 = rdtsc_ordered();

	stall_st = st;
	tsc_calibrate(stall, NULL, &cal);
	bi->clock_excluded_cycles = rdtsc_ordered() - t0;
	bi->tsc_at_entry += bi->clock_excluded_cycles;
	bi->clock_source = CLOCK_EFI_STALL;
	bi->tsc_hz = cal.hz;
	bi->clock_error_ppm = (u32)MIN(cal.spread_ppm, (u64)UINT32_MAX);
}
