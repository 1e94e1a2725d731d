/* SPDX-License-Identifier: MIT */
/* memaccept: TSC frequency from the platform's declarations or from PM timer samples (pure logic). */
#include "arch/x86/acpi.h"
#include "arch/x86/tsc_cal.h"
#include "lib/muldiv.h"

const char *clock_source_name(u32 source)
{
	static const char *const names[CLOCK_SOURCE_COUNT] = {
		[CLOCK_NONE] = "none",
		[CLOCK_CPUID_15] = "cpuid-0x15",
		[CLOCK_HV_LEAF] = "hypervisor-0x40000010",
		[CLOCK_SNP_SECURE_TSC] = "snp-secure-tsc",
		[CLOCK_PM_TIMER] = "acpi-pm-timer",
		[CLOCK_EFI_STALL] = "efi-stall",
	};

	return source < CLOCK_SOURCE_COUNT ? names[source] : "?";
}

u64 clock_snp_secure_hz(u64 mhz, u32 tsc_factor)
{
	u64 hz = mhz * 1000000ULL;	/* at most 2^18 MHz: hz * factor stays below 2^55 */

	return tsc_factor >= 100000 ? 0 : hz - hz * tsc_factor / 100000;
}

bool clock_host_skewable(u32 source, bool in_td)
{
	return !(source == CLOCK_SNP_SECURE_TSC || (source == CLOCK_CPUID_15 && in_td));
}

/* Half a unit of the declared resolution, relative to hz, in ppm (rounded up). */
static u32 resolution_ppm(u64 unit_hz, u64 hz)
{
	return (u32)((unit_hz / 2 * 1000000ULL + hz - 1) / hz);
}

void clock_declared_pick(const struct clock_raw *raw, struct clock_declared *out)
{
	*out = (struct clock_declared){ CLOCK_NONE, 0, 0 };

	/*
	 * SNP Secure TSC (SEV_STATUS bit 11): GUEST_TSC_FREQ bits 17:0 are the guest TSC in
	 * MHz, a value the host cannot change (Linux arch/x86/coco/sev/core.c
	 * snp_secure_tsc_init; AMD APM vol. 2, Secure TSC), lowered by the secrets page's
	 * TSC_FACTOR to the mean frequency (clock_snp_secure_hz), as Linux does.
	 */
	if (raw->sev_status & SEV_STATUS_SECURE_TSC) {
		u64 mhz = raw->guest_tsc_freq & 0x3ffff, hz = clock_snp_secure_hz(mhz, raw->tsc_factor);

		if (hz) {
			*out = (struct clock_declared){ CLOCK_SNP_SECURE_TSC, hz, 0 };
			out->error_ppm = resolution_ppm(1000000ULL, out->hz);
			return;
		}
	}
	/*
	 * CPUID 0x15: TSC = crystal (ECX) x EBX / EAX (Intel SDM vol. 2A, CPUID leaf 15H);
	 * ECX = 0 means the crystal is not enumerated. In a TD the TDX module answers this
	 * leaf itself, so the host cannot change it (Linux arch/x86/kernel/tsc.c
	 * native_calibrate_tsc uses it the same way).
	 */
	if (raw->max_leaf >= CPUID_TSC_LEAF && raw->l15_eax && raw->l15_ebx && raw->l15_ecx) {
		out->source = CLOCK_CPUID_15;
		out->hz = (u64)raw->l15_ecx * raw->l15_ebx / raw->l15_eax;
		out->error_ppm = 0;	/* exact by definition, up to the integer division */
		if (out->hz)
			return;
	}
	/*
	 * The hypervisor timing leaf: EAX = TSC in kHz when CPUID 0x40000000 lists it
	 * (QEMU target/i386/kvm/kvm.c kvm_arch_init_vcpu, -cpu ...,vmware-cpuid-freq=on with
	 * a stable, known TSC). The host states it; on TDX and SNP that makes it untrusted,
	 * which is why it comes last.
	 */
	if (raw->hv_max_leaf >= CPUID_HV_TIMING && raw->hv_tsc_khz) {
		*out = (struct clock_declared){ CLOCK_HV_LEAF, (u64)raw->hv_tsc_khz * 1000ULL, 0 };
		out->error_ppm = resolution_ppm(1000ULL, out->hz);
		return;
	}
	*out = (struct clock_declared){ CLOCK_NONE, 0, 0 };
}

bool clock_pm_hz(const struct pm_sample *a, const struct pm_sample *b, u32 bits, u64 *hz,
		 u64 *error_ppm)
{
	u32 mask = bits >= 32 ? 0xffffffffu : (1u << bits) - 1;
	u64 ticks = (u64)((b->pm - a->pm) & mask);
	u64 cycles = b->tsc > a->tsc ? b->tsc - a->tsc : 0;

	if (!ticks || !cycles)
		return false;
	*hz = mul_div_u64(cycles, ACPI_PM_TIMER_HZ, ticks);
	if (!*hz)
		return false;
	/* Where in its bracket each reading happened, and one tick of quantization per end. */
	u64 unc = (a->window + b->window) / 2 + 2 * (*hz / ACPI_PM_TIMER_HZ + 1);

	/* Rounded up; saturated rather than wrapped. */
	*error_ppm = mul_div_u64(unc, 1000000ULL, cycles);
	if (*error_ppm != UINT64_MAX)
		(*error_ppm)++;
	return true;
}

u64 clock_diff_ppm(u64 a, u64 b)
{
	u64 d = a > b ? a - b : b - a;

	if (!b)
		return UINT64_MAX;
	return mul_div_u64(d, 1000000ULL, b);
}
