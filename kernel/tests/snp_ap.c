/* SPDX-License-Identifier: MIT */
/* memaccept: SEV-SNP AP Creation test cases (platform=snp-emu): requests a host must refuse or stop on. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/vmsa.h"
#include "drivers/console.h"
#include "include/exit_codes.h"
#include "kernel/testcase.h"
#include "mm/page_alloc.h"

/* A VMSA for APIC ID 1: a private page, not 2 MiB aligned, filled like the kernel's. */
static u64 vmsa_page(void)
{
	u64 p = palloc_alloc(1);	/* two pages: one of them is not 2 MiB aligned */

	if (!p)
		return 0;
	p = snp_vmsa_pick(p);
	struct snp_ap_state st = {
		.cs = KERNEL_CS, .ds = KERNEL_DS,
		.cr0 = read_cr0(), .cr3 = read_cr3(), .cr4 = read_cr4(),
		.efer = rdmsr(MSR_EFER), .xcr0 = 1, .pat = rdmsr(0x277),
		.sev_status = cpu_rdmsr(MSR_SEV_STATUS),
		.rip = (u64)(uintptr_t)vmsa_page, .rsp = p + PAGE_SIZE - 8,
	};

	snp_vmsa_fill((struct sev_vmsa *)(uintptr_t)p, &st);
	return p;
}

static bool refused(u32 apic_id, u64 gpa, u64 features)
{
	u64 i1, i2;

	snp_ap_create_exit(apic_id, gpa, features, &i1, &i2);
	kprintf("test: AP Creation for APIC ID %u, VMSA %#llx, features %#llx: SW_EXITINFO1 %#llx, "
		"SW_EXITINFO2 %#llx\n", apic_id, gpa, features, i1, i2);
	return i1 == GHCB_HV_RESP_ISSUE && i2 == GHCB_ERR_INVALID_INPUT;
}

/* KVM sev_snp_ap_creation: each of these is invalid input, and the guest goes on. */
TESTCASE(snp_ap_create_refusals, "AP Creation requests KVM refuses are refused, not acted on")
{
	u64 p = vmsa_page(), features = cpu_rdmsr(MSR_SEV_STATUS) >> SEV_STATUS_FEATURES_SHIFT;

	CHECK(emu_mode() == EMU_SNP && p);
	CHECK(refused(1, p, features | 0x4));		/* SEV features not the VM's */
	CHECK(refused(0xfe, p, features));		/* no vCPU has this APIC ID */
	CHECK(refused(1, p + 8, features));		/* not page aligned */
	CHECK(refused(1, ALIGN_DOWN(p, UNIT_SIZE), features));	/* 2 MiB aligned: the VMSA erratum */
	CHECK(refused(1, 1ULL << 60, features));	/* beyond MAXPHYADDR */
	return EXIT_OK;
}

/* The page was never RMPADJUSTed to a VMSA: VMRUN fails (KVM_EXIT_FAIL_ENTRY), QEMU stops. */
TESTCASE(snp_ap_create_not_a_vmsa, "AP Creation with a page that is not a VMSA in the RMP stops the VM")
{
	u64 p = vmsa_page(), i1, i2;

	CHECK(emu_mode() == EMU_SNP && p);
	kprintf("test: AP Creation for APIC ID 1 with %#llx, never made a VMSA\n", p);
	snp_ap_create_exit(1, p, cpu_rdmsr(MSR_SEV_STATUS) >> SEV_STATUS_FEATURES_SHIFT, &i1, &i2);
	kprintf("test: the platform started a vCPU from it (SW_EXITINFO1 %#llx)\n", i1);
	return EXIT_TEST_FAILED;
}

/* A VMSA without EFER.SVME: an illegal state for VMRUN (APM vol. 2 15.5.1). */
TESTCASE(snp_ap_create_vmsa_without_svme, "a VMSA without EFER.SVME is refused by VMRUN and stops the VM")
{
	u64 p = vmsa_page(), i1, i2;

	CHECK(emu_mode() == EMU_SNP && p);
	((struct sev_vmsa *)(uintptr_t)p)->efer &= ~EFER_SVME;
	CHECK(snp_rmpadjust(p, PVALIDATE_4K, RMPADJUST_TARGET_VMPL1 | RMPADJUST_VMSA) == RMPADJUST_OK);
	kprintf("test: AP Creation for APIC ID 1 with a VMSA without EFER.SVME\n");
	snp_ap_create_exit(1, p, cpu_rdmsr(MSR_SEV_STATUS) >> SEV_STATUS_FEATURES_SHIFT, &i1, &i2);
	kprintf("test: the platform started a vCPU from it (SW_EXITINFO1 %#llx)\n", i1);
	return EXIT_TEST_FAILED;
}

/* INIT-SIPI is how a normal VM starts its APs, never an SNP guest. */
TESTCASE(snp_init_ipi, "an INIT IPI from an SNP guest stops the VM")
{
	CHECK(emu_mode() == EMU_SNP);
	kprintf("test: sending INIT to APIC ID 1\n");
	apic_send_init(1);
	kprintf("test: the platform let the INIT through\n");
	return EXIT_TEST_FAILED;
}
