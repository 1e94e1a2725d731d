/* SPDX-License-Identifier: MIT */
/* memaccept: the clock's start in efi_main: PM timer through the EFI configuration table, declared frequencies, Stall() fallback. */
#include <efi.h>

#include "arch/x86/acpi.h"
#include "arch/x86/cpu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/platform.h"
#include "arch/x86/tsc.h"
#include "boot/boot.h"
#include "lib/string.h"

/* Reads of the PM timer allowed to show the same value before it counts as stuck. */
#define PM_STUCK_READS 4096
/* Port reads per sample (the narrowest bracket counts, see tsc_pm_sample). */
#define PM_SAMPLE_TRIES 3
/* CPUID 1 ECX bit 31: running under a hypervisor (leaves 0x40000000+ mean something). */
#define CPUID_1_ECX_HYPERVISOR (1u << 31)
#define CPUID_HV_LEAF_LIMIT 0x400000ff

static u32 pm_read(u16 port)
{
	/*
	 * Plain IN: before ExitBootServices the firmware handles the #VE (TDX) or #VC
	 * (SEV-SNP) it raises in a confidential guest.
	 */
	return plain_io_in(port, 4);
}

/* The RSDP from the EFI configuration table: ACPI 2.0+ first, else ACPI 1.0 (UEFI 2.9 section 4.6). */
static u64 find_rsdp(EFI_SYSTEM_TABLE *st)
{
	EFI_GUID acpi20 = ACPI_20_TABLE_GUID, acpi10 = ACPI_TABLE_GUID;
	u64 v1 = 0;

	for (UINTN i = 0; i < st->NumberOfTableEntries; i++) {
		EFI_CONFIGURATION_TABLE *t = &st->ConfigurationTable[i];

		if (!memcmp(&t->VendorGuid, &acpi20, sizeof(acpi20)))
			return (u64)(uintptr_t)t->VendorTable;
		if (!memcmp(&t->VendorGuid, &acpi10, sizeof(acpi10)))
			v1 = (u64)(uintptr_t)t->VendorTable;
	}
	return v1;
}

void boot_clock_start(EFI_SYSTEM_TABLE *st, struct boot_info *bi)
{
	struct acpi_pm_timer pm;
	u32 first;

	bi->pm_status = acpi_find_pm_timer(find_rsdp(st), &pm);
	if (bi->pm_status != ACPI_PM_OK)
		return;
	/* A timer that never changes would give a division by zero later, or nonsense. */
	first = pm_read(pm.port);
	for (u32 i = 0; i < PM_STUCK_READS; i++) {
		if (pm_read(pm.port) != first) {
			bi->pm_port = pm.port;
			bi->pm_bits = pm.bits;
			tsc_pm_sample(pm_read, pm.port, PM_SAMPLE_TRIES, &bi->pm_entry);
			return;
		}
	}
	bi->pm_status = ACPI_PM_STUCK;
}

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
		raw->guest_tsc_freq = cpu_rdmsr(MSR_GUEST_TSC_FREQ);
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
		if (bi->pm_port) {
			bi->clock_source = CLOCK_PM_TIMER;	/* the kernel measures tsc_hz */
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
