/* SPDX-License-Identifier: MIT */
/* memaccept: SEV-SNP AP Creation test cases (platform=snp-emu), and below VMPL0 Create vCPU: requests a host or SVSM must refuse or stop on. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/msr.h"
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/svsm.h"
#include "arch/x86/sev/vmsa.h"
#include "arch/x86/smp.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "include/exit_codes.h"
#include "kernel/testcase.h"
#include "lib/string.h"
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
		.efer = msr_read(MSR_EFER), .xcr0 = 1, .pat = msr_read(MSR_PAT),
		.sev_status = msr_read(MSR_SEV_STATUS),
		.rip = (u64)(uintptr_t)vmsa_page, .rsp = p + PAGE_SIZE - 8,
		.vmpl = snp_guest_vmpl(),
	};

	snp_vmsa_fill((struct sev_vmsa *)(uintptr_t)p, &st);
	return p;
}

static bool refused(u32 apic_id, u64 gpa, u64 features)
{
	u64 i1, i2;

	snp_ap_create_exit(apic_id, gpa, features, &i1, &i2, NULL);
	kprintf("test: AP Creation for APIC ID %u, VMSA %#llx, features %#llx: SW_EXITINFO1 %#llx, "
		"SW_EXITINFO2 %#llx\n", apic_id, gpa, features, i1, i2);
	return i1 == GHCB_HV_RESP_ISSUE && i2 == GHCB_ERR_INVALID_INPUT;
}

/* KVM sev_snp_ap_creation: each of these is invalid input, and the guest goes on. */
TESTCASE(snp_ap_create_refusals, "AP Creation requests KVM refuses are refused, not acted on")
{
	u64 p = vmsa_page(), features = msr_read(MSR_SEV_STATUS) >> SEV_STATUS_FEATURES_SHIFT;

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
	snp_ap_create_exit(1, p, msr_read(MSR_SEV_STATUS) >> SEV_STATUS_FEATURES_SHIFT, &i1, &i2, NULL);
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
	snp_ap_create_exit(1, p, msr_read(MSR_SEV_STATUS) >> SEV_STATUS_FEATURES_SHIFT, &i1, &i2, NULL);
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

/*
 * Below VMPL0 each vCPU calls its SVSM through its own calling area; the SVSM on a vCPU
 * looks only at the one Create vCPU registered for it (COCONUT update_guest_vmsa_caa).
 * Here an AP created with its own calling area makes a call through the boot CPU's
 * instead: the emulated SVSM must not take it (call_pending stays set) and counts
 * svsm_call_through_other_caa. The AP runs only the few instructions below (no GHCB,
 * no console), with a per-CPU block of its own so that the trap path finds its index.
 */
enum { WRONG_CAA_WAITING, WRONG_CAA_TAKEN, WRONG_CAA_NOT_TAKEN };
static u32 wrong_caa_result;
static struct percpu wrong_caa_cpu;
static struct svsm_pval_req wrong_caa_empty_request;

static __noreturn void ap_calls_through_boot_caa(void)
{
	u8 *boot = (u8 *)(uintptr_t)emu.svsm_caa;
	u8 pending;

	__atomic_store_n(&boot[SVSM_CAA_CALL_PENDING], 1, __ATOMIC_SEQ_CST);
	msr_write(MSR_SEV_GHCB, GHCB_MSR_VMPL_REQ_LEVEL(0));
	/* An empty request: if an SVSM took it, it would only answer INVALID_PARAMETER. */
	(void)snp_svsm_vmgexit(SVSM_CALL(SVSM_CORE_PROTOCOL, SVSM_CORE_PVALIDATE),
			       (u64)(uintptr_t)&wrong_caa_empty_request, 0, 0);
	pending = __atomic_exchange_n(&boot[SVSM_CAA_CALL_PENDING], 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&wrong_caa_result, pending ? WRONG_CAA_NOT_TAKEN : WRONG_CAA_TAKEN, __ATOMIC_RELEASE);
	cpu_halt();
}

#define WRONG_CAA_TIMEOUT_NS (2000 * 1000 * 1000ULL)

TESTCASE(snp_svsm_ap_boot_caa, "an AP's SVSM call through the boot CPU's calling area is not taken")
{
	u64 p = vmsa_page(), caa = palloc_alloc(0), stack = palloc_alloc(2), i1, i2, t0;
	struct sev_vmsa *v = (struct sev_vmsa *)(uintptr_t)p;

	CHECK(emu_mode() == EMU_SNP && snp_below_vmpl0() && p && caa && stack && emu.svsm_caa);
	struct {
		u16 limit;
		u64 base;
	} __attribute__((packed)) gdtr, idtr;

	/* The AP traps (#UD for VMGEXIT into the emulator): it needs the kernel's GDT and IDT. */
	__asm__ volatile("sgdt %0" : "=m"(gdtr));
	__asm__ volatile("sidt %0" : "=m"(idtr));
	v->gdtr.base = gdtr.base, v->gdtr.limit = gdtr.limit;
	v->idtr.base = idtr.base, v->idtr.limit = idtr.limit;
	memset((void *)(uintptr_t)caa, 0, PAGE_SIZE);
	wrong_caa_cpu.self = &wrong_caa_cpu;
	wrong_caa_cpu.index = 1;	/* slot 1 is free: the test runs with cpus=1 */
	v->rip = (u64)(uintptr_t)ap_calls_through_boot_caa;
	v->rsp = stack + 4 * PAGE_SIZE - 8;
	v->gs.base = (u64)(uintptr_t)&wrong_caa_cpu;
	CHECK(snp_svsm_create_vcpu(p, caa, 1) == SVSM_SUCCESS);
	snp_ap_create_exit(1, p, msr_read(MSR_SEV_STATUS) >> SEV_STATUS_FEATURES_SHIFT, &i1, &i2, NULL);
	CHECK(i1 == 0);
	for (t0 = tsc_now_ns(); !__atomic_load_n(&wrong_caa_result, __ATOMIC_ACQUIRE);)
		CHECK(tsc_now_ns() - t0 < WRONG_CAA_TIMEOUT_NS);
	kprintf("test: the AP's call through the boot CPU's calling area was %s\n",
		wrong_caa_result == WRONG_CAA_NOT_TAKEN ? "not taken" : "taken");
	CHECK(wrong_caa_result == WRONG_CAA_NOT_TAKEN);
	return EXIT_OK;
}

static bool svsm_refuses(u64 vmsa, u64 caa, u32 apic_id, u64 want)
{
	u64 rc = snp_svsm_create_vcpu(vmsa, caa, apic_id);

	kprintf("test: Create vCPU of %#llx, calling area %#llx, APIC ID %u: %#llx\n", vmsa, caa, apic_id, rc);
	return rc == want;
}

/*
 * COCONUT core_create_vcpu's checks, each refused with its error code and the guest going
 * on; then AP Creation from VMPL1 naming VMPL0, and naming VMPL 4 (no such level): both
 * refused by the host (invalid input; the KVM planes series). No vCPU starts.
 */
TESTCASE(snp_svsm_create_vcpu_refusals, "Create vCPU and VMPL1 AP Creation requests that must be refused")
{
	u64 p = vmsa_page(), caa = palloc_alloc(0), features = msr_read(MSR_SEV_STATUS) >> SEV_STATUS_FEATURES_SHIFT;
	struct sev_vmsa *v = (struct sev_vmsa *)(uintptr_t)p;
	u64 i1, i2;

	CHECK(emu_mode() == EMU_SNP && snp_below_vmpl0() && p && caa);
	CHECK(v->vmpl == snp_guest_vmpl() && v->vmpl != 0);
	CHECK(svsm_refuses(p + 8, caa, 1, SVSM_ERR_INVALID_ADDRESS));	/* VMSA not page aligned */
	CHECK(svsm_refuses(p, caa + 8, 1, SVSM_ERR_INVALID_ADDRESS));	/* calling area not aligned */
	CHECK(svsm_refuses(p, p, 1, SVSM_ERR_INVALID_ADDRESS));		/* the same page for both */
	CHECK(svsm_refuses(p, caa, 0xfe, SVSM_ERR_INVALID_PARAMETER));	/* no such APIC ID */
	v->vmpl = 0;							/* not the guest's VMPL */
	CHECK(svsm_refuses(p, caa, 1, SVSM_ERR_INVALID_PARAMETER));
	v->vmpl = snp_guest_vmpl();
	v->efer &= ~EFER_SVME;						/* check_vmsa: SVME */
	CHECK(svsm_refuses(p, caa, 1, SVSM_ERR_INVALID_PARAMETER));
	v->efer |= EFER_SVME;
	v->sev_features ^= 0x4;						/* not the caller's features */
	CHECK(svsm_refuses(p, caa, 1, SVSM_ERR_INVALID_PARAMETER));
	v->sev_features ^= 0x4;
	/* VMPL0 named by a VMPL1 guest. */
	snp_ap_create_exit_raw(SNP_AP_CREATE_INFO1_VMPL(SNP_AP_CREATE, 0, 1), p, features, &i1, &i2, NULL);
	kprintf("test: AP Creation naming VMPL0: SW_EXITINFO1 %#llx, SW_EXITINFO2 %#llx\n", i1, i2);
	CHECK(i1 == GHCB_HV_RESP_ISSUE && i2 == GHCB_ERR_INVALID_INPUT);
	/* VMPL 4: the VMPL field has room for it, SEV-SNP has no such level. */
	snp_ap_create_exit_raw(SNP_AP_CREATE_INFO1_VMPL(SNP_AP_CREATE, 4, 1), p, features, &i1, &i2, NULL);
	kprintf("test: AP Creation naming VMPL 4: SW_EXITINFO1 %#llx, SW_EXITINFO2 %#llx\n", i1, i2);
	CHECK(i1 == GHCB_HV_RESP_ISSUE && i2 == GHCB_ERR_INVALID_INPUT);
	return EXIT_OK;
}

/*
 * Delete vCPU as COCONUT core_delete_vcpu checks it: a page the SVSM never made a VMSA,
 * and one it made but no longer holds, are INVALID_PARAMETER (PERCPU_VMSAS.unregister
 * finds no entry in use); a VMSA it made is deleted, with EFER.SVME cleared in the page
 * (VMSA::disable). No vCPU starts (an AP Creation naming a page that is no VMSA stops
 * the VM at VMRUN: snp-svsm-ap-create-not-a-vmsa-caught).
 */
TESTCASE(snp_svsm_delete_vcpu, "Delete vCPU of pages that are and are not the SVSM's VMSAs")
{
	u64 p = vmsa_page(), caa = palloc_alloc(0);
	const struct sev_vmsa *v = (const struct sev_vmsa *)(uintptr_t)p;
	u64 rc;

	CHECK(emu_mode() == EMU_SNP && snp_below_vmpl0() && p && caa);
	memset((void *)(uintptr_t)caa, 0, PAGE_SIZE);
	rc = snp_svsm_delete_vcpu(p);
	kprintf("test: Delete vCPU of a page that is no VMSA: %#llx\n", rc);
	CHECK(rc == SVSM_ERR_INVALID_PARAMETER);
	CHECK(snp_svsm_create_vcpu(p, caa, 1) == SVSM_SUCCESS);
	rc = snp_svsm_delete_vcpu(p + 8);
	kprintf("test: Delete vCPU of an address inside the VMSA page: %#llx\n", rc);
	CHECK(rc == SVSM_ERR_INVALID_PARAMETER);
	rc = snp_svsm_delete_vcpu(p);
	kprintf("test: Delete vCPU of the VMSA: %#llx, EFER %#llx\n", rc, v->efer);
	CHECK(rc == SVSM_SUCCESS && !(v->efer & EFER_SVME));
	rc = snp_svsm_delete_vcpu(p);
	kprintf("test: Delete vCPU of the same page again: %#llx\n", rc);
	CHECK(rc == SVSM_ERR_INVALID_PARAMETER);
	return EXIT_OK;
}
