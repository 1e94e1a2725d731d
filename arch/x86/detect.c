/* SPDX-License-Identifier: MIT */
/* memaccept: TDX and SEV-SNP detection. */
#include "arch/x86/cpu.h"
#include "arch/x86/detect.h"
#include "arch/x86/msr.h"
#include "arch/x86/sev/snp.h"
#include "lib/string.h"

/* CPUID leaf 0x21, subleaf 0: "IntelTDX    " in EBX, EDX, ECX (Intel TDX GHCI spec; Linux asm/shared/tdx.h). */
#define CPUID_TDX_LEAF 0x21
/* CPUID 0x8000001F (sev/snp.h): EAX bit 1 SEV, bit 4 SEV-SNP (AMD APM vol. 3, E.4.17). */
#define CPUID_SEV_EAX_SEV (1u << 1)
/*
 * SEV_STATUS MSR (sev/snp.h; AMD APM vol. 2, 15.34.10): bit 0 SEV, bit 1 SEV-ES, bit 2
 * SEV-SNP active in this guest.
 */
#define SEV_STATUS_SEV (1ULL << 0)
#define SEV_STATUS_ES (1ULL << 1)
#define SEV_STATUS_SNP (1ULL << 2)

static bool is_tdx(void)
{
	struct cpuid_regs r;
	char sig[12];

	cpu_cpuid(0, 0, &r);
	if (r.eax < CPUID_TDX_LEAF)
		return false;
	cpu_cpuid(CPUID_TDX_LEAF, 0, &r);
	memcpy(sig + 0, &r.ebx, 4);
	memcpy(sig + 4, &r.edx, 4);
	memcpy(sig + 8, &r.ecx, 4);
	return memcmp(sig, "IntelTDX    ", 12) == 0;
}

static bool is_snp(struct boot_info *bi)
{
	struct cpuid_regs r;
	u64 status;

	cpu_cpuid(0x80000000, 0, &r);
	if (r.eax < CPUID_SEV_LEAF)
		return false;
	cpu_cpuid(CPUID_SEV_LEAF, 0, &r);
	/*
	 * The MSR exists only where SEV does: reading it elsewhere raises #GP (and in a TD a
	 * #VE: the TDX module traps every MSR outside its two ranges, which is why TDX is
	 * detected first, by CPUID alone). Before ExitBootServices, through the accessor.
	 */
	if (!(r.eax & CPUID_SEV_EAX_SEV))
		return false;
	status = msr_read(MSR_SEV_STATUS);
	bi->sev_status = status;
	bi->snp_cpuid_ebx = r.ebx;
	return status & SEV_STATUS_SNP;
}

void detect_platform(struct boot_info *bi)
{
	bi->phys_bits = cpu_phys_bits();
	bi->has_1g_pages = cpu_has_1g_pages();
	bi->detected = DETECTED_NONE;
	if (is_tdx())
		bi->detected = DETECTED_TDX;
	else if (is_snp(bi))
		bi->detected = DETECTED_SNP;
}

const char *detect_sev_without_snp(const struct boot_info *bi)
{
	if (bi->detected != DETECTED_NONE || !(bi->sev_status & SEV_STATUS_SEV))
		return NULL;
	return bi->sev_status & SEV_STATUS_ES ? "an SEV-ES guest (SEV_STATUS bits 0 and 1, not SNP)"
					      : "an SEV guest (SEV_STATUS bit 0, not SEV-ES or SNP)";
}
