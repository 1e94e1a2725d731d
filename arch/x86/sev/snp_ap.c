/* SPDX-License-Identifier: MIT */
/* memaccept: starting an SEV-SNP guest's other vCPUs with the GHCB AP Creation event and a VMSA each (made by the SVSM below VMPL0). */
#include "arch/x86/cpu.h"
#include "arch/x86/desc.h"
#include "arch/x86/msr.h"
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/svsm.h"
#include "arch/x86/sev/vmsa.h"
#include "arch/x86/smp.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "include/exit_codes.h"
#include "include/panic.h"
#include "lib/string.h"

/*
 * An INIT-SIPI start cannot work here: the hypervisor cannot load a start address into
 * a vCPU whose state is encrypted. The guest instead hands the hypervisor a VMSA, a page
 * of its own private memory holding the whole register state, which the hardware loads
 * when the hypervisor runs that vCPU (GHCB spec 4.1.8; Linux wakeup_cpu_via_vmgexit).
 * Per AP, on the boot CPU:
 *  1. allocate 8 KiB and take the 4 KiB page of it that is not 2 MiB aligned (vmsa.h);
 *  2. give the AP a GHCB page (shared, mapped without the C-bit; all of them before
 *     the first AP runs); the AP registers it;
 *  3. fill the VMSA with the boot CPU's 64-bit state, the AP's entry, stack and GS base;
 *  4. make it a VMSA: at VMPL0 with RMPADJUST and the VMSA attribute (naming VMPL1 as
 *     the target, as Linux snp_set_vmsa does: RMPADJUST may only change a higher VMPL's
 *     permissions); below VMPL0 (under an SVSM) the guest cannot, so it asks the SVSM
 *     with Create vCPU (svsm.h), handing it a zeroed page as the AP's own calling area
 *     (Linux snp_set_vmsa's SVSM branch; COCONUT core.rs core_create_vcpu);
 *  5. the AP Creation exit (request 1, create now, VMPL from bit 16) with RAX = the
 *     SEV features. Linux issues it below VMPL0 too (wakeup_cpu_via_vmgexit).
 * Then the boot CPU waits for them to check in, as after INIT-SIPI: the stacks, the
 * check-in and the wait are arch/x86/smp.c's, whatever started the AP.
 *
 * A VMSA that was made and is not run is undone (Linux wakeup_cpu_via_vmgexit ->
 * snp_cleanup_vmsa), so that no page stays a VMSA the hypervisor or the SVSM could run:
 * after a refused AP Creation at once; for an AP whose creation was accepted but that
 * did not check in by the deadline, after AP Destroy (request 2), which makes the
 * hypervisor stop running that VMSA first, as Linux shutdown_all_aps does before its
 * snp_cleanup_vmsa: there, destroy "ensures the AP gets kicked out of guest mode to
 * allow using RMPADJUST to remove the VMSA tag" (KVM sev_snp_ap_creation: destroy
 * forgets the target's VMSA and kicks it, so it is not entered again).
 */
static u64 ap_ghcb[MAX_CPUS];		/* by per-CPU index */

/*
 * The AP's first instruction: RIP, RSP (16-byte aligned minus 8, as after a call) and GS
 * base come from its VMSA, CS, SS, GDT, IDT and CR3 are the boot CPU's.
 */
static __noreturn void snp_ap_entry(void)
{
	struct percpu *self;

	__asm__ volatile("mov %%gs:0, %0" : "=r"(self));
	smp_arch_ap_checkin(self);
}

/* In the check-in, once the AP has its IDT: from here its #VC handler (console output included) uses its own GHCB. */
static void snp_ap_platform_step(struct percpu *self)
{
	snp_ghcb_register(ap_ghcb[self->index]);
}

static u64 xcr0_now(void)
{
	u32 lo, hi;

	if (!(read_cr4() & CR4_OSXSAVE))
		return 1;	/* x87 only: XCR0's reset value */
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((u64)hi << 32) | lo;
}

const char *snp_ap_start_unavailable(void)
{
	if (!snp_ap_creation_offered())
		return "the hypervisor does not offer AP Creation (GHCB hypervisor feature bit 1)";
	/*
	 * Under Secure TSC every VMSA needs the guest's TSC scale and offset, which the PSP
	 * hands out in an encrypted TSC_INFO guest message (Linux snp_get_tsc_info; copied
	 * into each AP's VMSA by wakeup_cpu_via_vmgexit). memaccept does not speak that
	 * protocol; an AP with zeros there would run on another clock.
	 */
	if (snp_secure_tsc())
		return "Secure TSC: each AP's VMSA needs the TSC scale and offset from the PSP's "
		       "TSC_INFO message, which memaccept does not request";
	return NULL;
}

/* Page-aligned memory from the caller's allocator (which promises 16-byte alignment only). */
static u64 alloc_pages_aligned(const struct smp_start *s, u64 pages)
{
	return ALIGN_UP(s->alloc((pages + 1) * PAGE_SIZE), PAGE_SIZE);
}

/*
 * Below VMPL0: the SVSM makes vmsa a VMSA for apic_id, with caa as that vCPU's calling
 * area. BUSY is re-sent (bounded); a refusal the SVSM spec defines leaves the AP
 * stopped (false, reported by the caller); any other answer is not one an SVSM may give:
 * terminate.
 */
static bool svsm_make_vmsa(u64 vmsa, u64 caa, u32 apic_id)
{
	for (unsigned busy = 0;; busy++) {
		u64 rax = snp_svsm_create_vcpu(vmsa, caa, apic_id);

		switch (svsm_create_vcpu_answer(rax)) {
		case SVSM_CREATE_OK:
			return true;
		case SVSM_CREATE_BUSY:
			if (busy < SVSM_BUSY_RETRIES)
				continue;
			kprintf("smp: the SVSM stayed busy for Create vCPU of APIC ID %u\n", apic_id);
			return false;
		case SVSM_CREATE_REFUSED:
			kprintf("smp: the SVSM refused to create the vCPU with APIC ID %u (Create vCPU "
				"answered %#llx)\n", apic_id, rax);
			return false;
		default:
			fatal_reason(EXIT_HOST_HOSTILE, FC_SVSM, "malformed answer %#llx to Create vCPU "
				     "for APIC ID %u", rax, apic_id);
		}
	}
}

/*
 * Below VMPL0: ask the SVSM to delete the vCPU whose VMSA is vmsa (Delete vCPU, svsm.h;
 * Linux snp_set_vmsa(..., false) in its SVSM branch). BUSY is re-sent as for Create
 * vCPU; a refusal the SVSM spec defines leaves the page a VMSA (false, reported); any
 * other answer terminates, as for Create vCPU.
 */
static bool svsm_unmake_vmsa(u64 vmsa, u32 apic_id)
{
	for (unsigned busy = 0;; busy++) {
		u64 rax = snp_svsm_delete_vcpu(vmsa);

		switch (svsm_delete_vcpu_answer(rax)) {
		case SVSM_CREATE_OK:
			return true;
		case SVSM_CREATE_BUSY:
			if (busy < SVSM_BUSY_RETRIES)
				continue;
			kprintf("smp: the SVSM stayed busy for Delete vCPU of APIC ID %u; VMSA %#llx stays\n",
				apic_id, vmsa);
			return false;
		case SVSM_CREATE_REFUSED:
			kprintf("smp: the SVSM refused to delete the vCPU with APIC ID %u (Delete vCPU "
				"answered %#llx); VMSA %#llx stays, never reused\n", apic_id, rax, vmsa);
			return false;
		default:
			fatal_reason(EXIT_HOST_HOSTILE, FC_SVSM, "malformed answer %#llx to Delete vCPU "
				     "for APIC ID %u", rax, apic_id);
		}
	}
}

/*
 * Undo step 4 for an AP that will not run vmsa (Linux snp_cleanup_vmsa): under an SVSM
 * with Delete vCPU; at VMPL0 with RMPADJUST without the VMSA attribute (Linux
 * snp_set_vmsa(..., false): the same target VMPL1, attributes without bit 16). memaccept
 * never frees the page either way (it came from the boot-time allocator).
 */
static u8 undo_vmsa(u64 vmsa, u32 apic_id, bool svsm)
{
	const char *how = "Delete vCPU";

	if (svsm) {
		if (!svsm_unmake_vmsa(vmsa, apic_id))
			return SMP_VMSA_LEFT;
	} else {
		u32 rc = snp_rmpadjust(vmsa, PVALIDATE_4K, RMPADJUST_TARGET_VMPL1);

		if (rc != RMPADJUST_OK) {
			kprintf("smp: RMPADJUST could not clear the VMSA attribute of %#llx (%u); it "
				"stays the VMSA of APIC ID %u, never reused\n", vmsa, rc, apic_id);
			return SMP_VMSA_LEFT;
		}
		how = "RMPADJUST";
	}
	kprintf("smp: VMSA %#llx of APIC ID %u undone (%s)\n", vmsa, apic_id, how);
	return SMP_VMSA_REMOVED;
}

/*
 * An AP whose creation the hypervisor accepted did not check in: AP Destroy, then undo
 * its VMSA. A refused AP Destroy leaves the VMSA as it is (the vCPU may still run it);
 * an answer the GHCB spec does not allow terminates, as for AP Creation.
 */
static u8 destroy_abandoned(u32 apic_id, u64 vmsa, u64 features, bool svsm)
{
	u64 info1, info2;
	bool valid;

	snp_ap_destroy_exit(apic_id, vmsa, features, &info1, &info2, &valid);
	switch (snp_ap_answer(info1, info2, valid)) {
	case SNP_AP_ANSWER_OK:
		return undo_vmsa(vmsa, apic_id, svsm);
	case SNP_AP_ANSWER_REFUSED:
		kprintf("smp: the hypervisor refused AP Destroy for APIC ID %u (SW_EXITINFO1 %#llx, "
			"SW_EXITINFO2 %#llx); VMSA %#llx stays\n", apic_id, info1, info2, vmsa);
		return SMP_VMSA_LEFT;
	default:
		fatal_reason(EXIT_HOST_HOSTILE, FC_GHCB, "malformed answer to AP Destroy for APIC ID "
			     "%u: SW_EXITINFO1 %#llx, SW_EXITINFO2 %#llx", apic_id, info1, info2);
	}
}

/* AP i was never asked to run: say so, rather than that it did not start in time. */
static void not_created(const struct smp_start *s, unsigned i)
{
	if (s->ap_why)
		s->ap_why[i] = "was not created";
}

unsigned snp_smp_start(const struct smp_start *s, const char **why)
{
	struct {
		u16 limit;
		u64 base;
	} __attribute__((packed)) gdtr, idtr;
	bool requested[MAX_CPUS] = { false }, ok[MAX_CPUS];
	u64 vmsas[MAX_CPUS];
	u8 fate[MAX_CPUS] = { SMP_VMSA_NONE };
	unsigned started;

	*why = snp_ap_start_unavailable();
	if (*why || !s->count)
		return 0;
	__asm__ volatile("sgdt %0" : "=m"(gdtr));
	__asm__ volatile("sidt %0" : "=m"(idtr));
	struct snp_ap_state st = {
		.cs = KERNEL_CS, .ds = KERNEL_DS,
		.gdt_base = gdtr.base, .gdt_limit = gdtr.limit,
		.idt_base = idtr.base, .idt_limit = idtr.limit,
		.cr0 = read_cr0(), .cr3 = read_cr3(), .cr4 = read_cr4(),
		.efer = msr_read(MSR_EFER), .xcr0 = xcr0_now(), .pat = msr_read(MSR_PAT),
		.sev_status = msr_read(MSR_SEV_STATUS),
		.rip = (u64)(uintptr_t)snp_ap_entry,
		.vmpl = snp_guest_vmpl(),
	};
	bool svsm = snp_below_vmpl0();
	u64 features = st.sev_status >> SEV_STATUS_FEATURES_SHIFT;

	smp_arch_checkin_setup(s->ap_main, snp_ap_platform_step);

	/*
	 * Every AP's GHCB page is made shared (its mapping changed) before the first AP
	 * runs: a changed mapping must be flushed on every CPU that may cache it, and
	 * memaccept has no IPI to make a running CPU flush (arch/x86/paging.h).
	 */
	for (unsigned i = 0; i < s->count; i++) {
		u64 ghcb = alloc_pages_aligned(s, 1);

		snp_ghcb_prepare(ghcb);
		ap_ghcb[s->cpus[i]->index] = ghcb;
	}
	for (unsigned i = 0; i < s->count; i++) {
		struct percpu *pc = s->cpus[i];
		unsigned cpu = (unsigned)pc->index;
		u64 vmsa = vmsas[i] = snp_vmsa_pick(alloc_pages_aligned(s, 2));
		u64 info1, info2;
		bool valid;
		u32 rc;

		if (!pc->stack_top)
			panic("snp_smp_start: CPU %u has no stack", cpu);
		st.rsp = pc->stack_top - 8;
		st.gs_base = (u64)(uintptr_t)pc;
		memset((void *)(uintptr_t)vmsa, 0, PAGE_SIZE);
		snp_vmsa_fill((struct sev_vmsa *)(uintptr_t)vmsa, &st);
		__atomic_store_n(&pc->checkin, SMP_CHECKIN_WAITING, __ATOMIC_RELEASE);
		if (svsm) {
			/* Its own calling area, zeroed (call_pending 0), in place before it runs. */
			u64 caa = alloc_pages_aligned(s, 1);

			memset((void *)(uintptr_t)caa, 0, PAGE_SIZE);
			snp_svsm_set_caa(cpu, caa);
			if (!svsm_make_vmsa(vmsa, caa, pc->apic_id)) {
				not_created(s, i);
				continue;
			}
		} else {
			rc = snp_rmpadjust(vmsa, PVALIDATE_4K, RMPADJUST_TARGET_VMPL1 | RMPADJUST_VMSA);
			if (rc != RMPADJUST_OK) {
				kprintf("smp: RMPADJUST could not make %#llx a VMSA (%u) for APIC ID %u\n",
					vmsa, rc, pc->apic_id);
				not_created(s, i);
				continue;
			}
		}
		snp_ap_create_exit(pc->apic_id, vmsa, features, &info1, &info2, &valid);
		switch (snp_ap_answer(info1, info2, valid)) {
		case SNP_AP_ANSWER_OK:
			requested[i] = true;
			break;
		case SNP_AP_ANSWER_REFUSED:
			kprintf("smp: the hypervisor refused to create the vCPU with APIC ID %u "
				"(SW_EXITINFO1 %#llx, SW_EXITINFO2 %#llx)\n", pc->apic_id, info1, info2);
			not_created(s, i);
			fate[i] = undo_vmsa(vmsa, pc->apic_id, svsm);
			break;
		default:
			/* Neither success nor a refusal the GHCB spec defines. */
			fatal_reason(EXIT_HOST_HOSTILE, FC_GHCB, "malformed answer to AP Creation for "
				     "APIC ID %u: SW_EXITINFO1 %#llx, SW_EXITINFO2 %#llx%s", pc->apic_id,
				     info1, info2, valid ? "" : " (not marked valid)");
		}
	}

	/* Until none of them checked in for s->timeout_ns: a slow AP costs only itself. */
	started = smp_arch_wait_checkins(s, requested, ok, s->timeout_ns);
	/* Abandoned: if it ever runs, it parks (smp_arch_ap_checkin); stop it and undo its VMSA. */
	for (unsigned i = 0; i < s->count; i++)
		if (requested[i] && !ok[i])
			fate[i] = destroy_abandoned(s->cpus[i]->apic_id, vmsas[i], features, svsm);
	if (s->ap_vmsa)
		for (unsigned i = 0; i < s->count; i++)
			s->ap_vmsa[i] = fate[i];
	return started;
}
