/* SPDX-License-Identifier: MIT */
/* memaccept (test image): raw instructions planted where no accessor guards them, which a real TD or SNP guest traps; the instruction observer must stop the emulated boot at each. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/msr.h"
#include "arch/x86/platform.h"
#include "arch/x86/tdx/tdx.h"
#include "include/panic.h"
#include "kernel/testcase.h"

/*
 * Each case runs one instruction the way a careless change to memaccept would: the raw
 * instruction, not its accessor. On a real TD (SNP guest) each is a #VE (#VC) that only
 * the accessor's path, or the kernel's handler, serves; under TCG it simply runs, so
 * only the instruction observer can catch it. Reaching the return means the observer
 * let it through. The LAPIC's version register (offset 0x30) stands for any MMIO.
 */
#define LAPIC_VERSION 0xfee00030ULL

TESTCASE(planted_rdmsr, "a raw RDMSR of IA32_APIC_BASE stops the emulated boot")
{
	(void)raw_rdmsr(MSR_APIC_BASE);
	return EXIT_TEST_FAILED;
}

TESTCASE(planted_wrmsr, "a raw WRMSR of the x2APIC ICR stops the emulated boot")
{
	raw_wrmsr(MSR_X2APIC_ICR, 0);
	return EXIT_TEST_FAILED;
}

TESTCASE(planted_cpuid, "a raw CPUID stops the emulated boot")
{
	struct cpuid_regs r;

	raw_cpuid(1, 0, &r);
	return EXIT_TEST_FAILED;
}

TESTCASE(planted_hlt, "a raw HLT stops the emulated TD (in a TD it is a #VE)")
{
	raw_halt();
	return EXIT_TEST_FAILED;
}

TESTCASE(planted_out, "a raw OUT stops the emulated boot")
{
	outb(0x80, 0);
	return EXIT_TEST_FAILED;
}

TESTCASE(planted_in, "a raw IN stops the emulated boot")
{
	(void)inb(0x80);
	return EXIT_TEST_FAILED;
}

TESTCASE(planted_wbinvd, "a raw WBINVD stops the emulated boot")
{
	__asm__ volatile("wbinvd" : : : "memory");
	return EXIT_TEST_FAILED;
}

TESTCASE(planted_monitor, "a raw MONITOR stops the emulated TD (in a TD without CPUID MONITOR it is a #VE)")
{
	static u64 line;

	__asm__ volatile("monitor" : : "a"(&line), "c"(0), "d"(0) : "memory");
	return EXIT_TEST_FAILED;
}

/* RDPRU (AMD) and PCONFIG (Intel): each traps on one platform and is #UD on the other. */
TESTCASE(planted_rdpru, "a raw RDPRU stops the emulated boot")
{
	u32 lo, hi;

	__asm__ volatile(".byte 0x0f, 0x01, 0xfd" : "=a"(lo), "=d"(hi) : "c"(0));
	(void)lo, (void)hi;
	return EXIT_TEST_FAILED;
}

TESTCASE(planted_pconfig, "a raw PCONFIG stops the emulated boot")
{
	__asm__ volatile(".byte 0x0f, 0x01, 0xc5" : : "a"(0) : "rbx", "rcx", "rdx", "memory");
	return EXIT_TEST_FAILED;
}

TESTCASE(planted_mmio, "a load from the local APIC's MMIO page stops the emulated boot")
{
	(void)*(volatile u32 *)(uintptr_t)LAPIC_VERSION;
	return EXIT_TEST_FAILED;
}

/*
 * CPUID through its accessor in a TD: the accessor runs the instruction, which the TDX
 * module answers or turns into a #VE for the kernel's handler (as Linux's CPUID does).
 * A hypervisor leaf goes to the VMM; the brand string, which the module does not know,
 * reads as zeros. Both are counted as #VEs (platform_calls.ve_exceptions).
 */
TESTCASE(tdx_cpuid_native_ve, "CPUID leaves the TDX module does not answer reach the #VE handler")
{
	struct cpuid_regs r = { 1, 1, 1, 1 };

	CHECK(emu_mode() == EMU_TDX);
	cpu_cpuid(0x80000002, 0, &r);
	CHECK(r.eax == 0 && r.ebx == 0 && r.ecx == 0 && r.edx == 0);
	cpu_cpuid(0x40000000, 0, &r);
	/* The module answers leaf 0x21 itself: no #VE. */
	cpu_cpuid(0x21, 0, &r);
	CHECK(r.ebx == 0x65746e49);	/* "Inte" */
	return EXIT_OK;
}

/*
 * Native on SNP only with a SEV feature that KVM honours by dropping an intercept: a
 * declared read of GUEST_TSC_FREQ (read-intercepted unless Secure TSC: KVM
 * sev_es_recalc_msr_intercepts) and a read of DR7 (intercepted unless DebugSwap: KVM
 * sev_es_init_vmcb). With the feature the observer lets each through and the case
 * passes; without it the observer stops the boot there. The value read does not matter
 * (TCG has no GUEST_TSC_FREQ).
 */
TESTCASE(snp_declared_guest_tsc_freq, "a declared native read of GUEST_TSC_FREQ: allowed only under Secure TSC")
{
	u32 lo, hi;

	CHECK(emu_mode() == EMU_SNP);
	/* OBS_KIND_DECL_RDMSR (arch/x86/observer.h) for MSR 0xC0010134, then the RDMSR. */
	__asm__ volatile(".byte 0x0f, 0x1f, 0x84, 0xa5\n\t.long 0xc0010134\n\trdmsr"
			 : "=a"(lo), "=d"(hi) : "c"(0xc0010134u));
	(void)lo, (void)hi;
	return EXIT_OK;
}

TESTCASE(snp_native_dr7, "a native read of DR7: allowed only under DebugSwap")
{
	u64 dr7;

	CHECK(emu_mode() == EMU_SNP);
	__asm__ volatile("mov %%dr7, %0" : "=r"(dr7));
	(void)dr7;
	return EXIT_OK;
}

/*
 * RDTSCP and INVPCID on SNP: KVM intercepts each only where the guest's CPUID lacks it
 * (QEMU's default CPU model lacks both), and an SEV-ES guest then takes #VC.
 */
TESTCASE(planted_rdtscp, "a raw RDTSCP stops the emulated SNP boot where the guest's CPUID lacks it")
{
	u32 lo, hi, aux;

	__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	(void)lo, (void)hi, (void)aux;
	return EXIT_TEST_FAILED;
}

TESTCASE(rdtscp_native, "RDTSCP runs natively in an SNP guest whose CPUID reports it")
{
	u32 lo, hi, aux;

	__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	CHECK(lo || hi);
	return EXIT_OK;
}

TESTCASE(planted_invpcid, "a raw INVPCID stops the emulated SNP boot where the guest's CPUID lacks it")
{
	struct {
		u64 pcid, addr;
	} desc = { 0, 0 };

	/* Type 2: all contexts, globals included (Intel SDM vol. 2A, INVPCID). */
	__asm__ volatile("invpcid %0, %1" : : "m"(desc), "r"(2ULL) : "memory");
	return EXIT_TEST_FAILED;
}
