/* SPDX-License-Identifier: MIT */
/* memaccept: where the TSC frequency comes from: declared by the platform or measured against the PM timer (pure logic, host-tested). */
#ifndef ARCH_X86_TSC_CAL_H
#define ARCH_X86_TSC_CAL_H

#include "include/types.h"

enum clock_source {
	CLOCK_NONE,		/* nothing usable: the 6 GHz guess (kernel/clock.c), reported as such */
	CLOCK_CPUID_15,		/* CPUID 0x15 crystal x ratio (the TDX module virtualizes it) */
	CLOCK_HV_LEAF,		/* hypervisor leaf 0x40000010 EAX, kHz */
	CLOCK_SNP_SECURE_TSC,	/* MSR GUEST_TSC_FREQ, MHz, with SNP Secure TSC */
	CLOCK_PM_TIMER,		/* measured against the ACPI PM timer over the boot */
	CLOCK_EFI_STALL,	/* measured against EFI Stall(), outside the measured window */
	CLOCK_SOURCE_COUNT,
};

const char *clock_source_name(u32 source);
/*
 * Whether the host can skew a TSC frequency from this source, and with it every time
 * memaccept reports (docs/threat-model.md): only Secure TSC's GUEST_TSC_FREQ and, in a
 * TD, CPUID 0x15 (the TDX module answers it) are out of its reach. The PM timer is a
 * device the host emulates and reads through it; the hypervisor leaf is its word; EFI
 * Stall() counts on its timers; CPUID 0x15 elsewhere is what the host put there.
 */
bool clock_host_skewable(u32 source, bool in_td);

/* The raw values the declared sources are read from (boot/ gathers them with CPUID/RDMSR). */
struct clock_raw {
	u32 max_leaf;		/* CPUID 0 EAX */
	u32 l15_eax, l15_ebx, l15_ecx;	/* CPUID 0x15: denominator, numerator, crystal Hz */
	u32 hv_max_leaf;	/* CPUID 0x40000000 EAX (0 when no hypervisor leaves) */
	u32 hv_tsc_khz;		/* CPUID 0x40000010 EAX */
	u64 sev_status;		/* MSR 0xC0010131, 0 when not SEV */
	u64 guest_tsc_freq;	/* MSR 0xC0010134, read only when SEV_STATUS says Secure TSC */
	u32 tsc_factor;		/* the SNP secrets page's TSC_FACTOR (0.001 %), with Secure TSC */
};

/*
 * Secure TSC: the mean TSC frequency from GUEST_TSC_FREQ (MHz) and the secrets page's
 * TSC_FACTOR, as the SNP firmware ABI defines it (Linux SNP_SCALE_TSC_FREQ). 0 for a
 * factor of 100 % or more, which leaves no frequency.
 */
u64 clock_snp_secure_hz(u64 mhz, u32 tsc_factor);

struct clock_declared {
	u32 source;		/* enum clock_source; CLOCK_NONE when nothing declares it */
	u64 hz;
	u32 error_ppm;		/* the declaration's own resolution */
};

/* CPUID leaves and MSRs of the declared sources (see tsc_cal.c for the references). */
#define CPUID_TSC_LEAF 0x15
#define CPUID_HV_BASE 0x40000000
#define CPUID_HV_TIMING 0x40000010
#define MSR_GUEST_TSC_FREQ 0xC0010134
#define SEV_STATUS_SECURE_TSC (1ULL << 11)

/* The most trusted declaration among the raw values (SNP Secure TSC, CPUID 0x15, hypervisor). */
void clock_declared_pick(const struct clock_raw *raw, struct clock_declared *out);

/* One PM timer reading, bracketed by two TSC reads. */
struct pm_sample {
	u64 tsc;		/* midpoint of the bracket */
	u64 window;		/* TSC cycles between the two reads around the port read */
	u32 pm;			/* the counter (24 or 32 bits) */
};

/*
 * TSC frequency between two samples (b later than a) of a `bits`-wide PM timer, with
 * the error bound in ppm: half of each bracket plus one timer tick at each end. The
 * span must be shorter than one wrap of the counter (4.69 s at 24 bits). Returns false
 * when the samples cannot give a frequency (no tick or no cycle passed).
 */
bool clock_pm_hz(const struct pm_sample *a, const struct pm_sample *b, u32 bits, u64 *hz,
		 u64 *error_ppm);

/* |a - b| / b in ppm, saturated. */
u64 clock_diff_ppm(u64 a, u64 b);

#endif
