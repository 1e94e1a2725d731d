/* SPDX-License-Identifier: MIT */
/* memaccept (test image): an SVSM at VMPL0 that validates for the guest and creates and deletes its vCPUs (emu_svsm=1). */
#include "arch/x86/emu/emu.h"
#include "arch/x86/sev/svsm.h"
#include "arch/x86/sev/vmsa.h"
#include "drivers/console.h"
#include "lib/string.h"

/*
 * The guest enters its SVSM with the GHCB MSR's Run VMPL request (GHCB spec 2.3.1): the
 * hypervisor runs VMPL0, the SVSM handles the call the calling area marks pending and
 * answers in RAX, and the hypervisor resumes the guest with the VMPL response in the
 * MSR. This plays that round trip in one step, with COCONUT-SVSM's behaviour
 * (kernel/src/protocols/core.rs core_pvalidate, core_pvalidate_one; result codes from
 * errors.rs): the request header is checked (entries 1..max, entries > next), entries
 * run from `next`, each success advances `next`, the first failure stops the loop and
 * is the result, `next` is written back either way. Create vCPU as core_create_vcpu,
 * Delete vCPU as core_delete_vcpu (below). Each vCPU's calls are served from its own calling area: the boot vCPU's is
 * the secrets page's, an AP's the one Create vCPU registered for it (COCONUT
 * update_guest_vmsa_caa; the SVSM instance on each vCPU looks only at that vCPU's
 * calling area). Not modelled: COCONUT zeroes each page it validates (the page model
 * has no contents), REMAP_CA and the other core protocol calls but Query Protocol (they answer
 * UNSUPPORTED_CALL), the SVSM's own VMPL0 permission changes (the guest keeps write
 * access to a VMSA page here).
 */

/* A Run VMPL response with a non-zero value in 63:32: the host did not run that VMPL. */
#define VMPL_RESP_REFUSED (1ULL << 32)

/* The result the svsm_{create,delete}_vcpu_malformed faults answer with: no SVSM spec defines it. */
#define CREATE_VCPU_MALFORMED 0x80000099ULL

/* The calling vCPU's calling area: registered by Create vCPU, else (the boot vCPU) the secrets page's. */
static u64 caller_caa(void)
{
	return emu_self()->svsm_vmsa ? emu_self()->svsm_caa : emu.svsm_caa;
}

/* The request lies in the calling area or in guest RAM (COCONUT: valid_phys_region). */
static bool readable(u64 pa, u64 len)
{
	u64 caa = caller_caa();
	bool in_caa = pa >= caa && pa + len <= caa + PAGE_SIZE;

	return in_caa || emu_model_is_ram(&emu.model, pa & ~(PAGE_SIZE - 1),
					  (pa + len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1));
}

/*
 * One entry, in COCONUT core_pvalidate_one's order: a reserved bit (11:4) set, then a
 * page size other than 4 KiB / 2 MiB or a misaligned address, answer INVALID_PARAMETER;
 * an address outside guest RAM INVALID_ADDRESS.
 */
static u64 pvalidate_one(u64 e)
{
	u32 size = (u32)SVSM_PVAL_ENTRY_SIZE(e), rc;
	u64 pa = SVSM_PVAL_ENTRY_PA(e);
	bool no_update = false;

	if (SVSM_PVAL_ENTRY_RESERVED(e))
		return SVSM_ERR_INVALID_PARAMETER;
	if (size > PVALIDATE_2M || !IS_ALIGNED(pa, size == PVALIDATE_2M ? UNIT_SIZE : PAGE_SIZE))
		return SVSM_ERR_INVALID_PARAMETER;
	if (!emu_model_is_ram(&emu.model, pa, pa + (size == PVALIDATE_2M ? UNIT_SIZE : PAGE_SIZE)))
		return SVSM_ERR_INVALID_ADDRESS;
	emu_count(size == PVALIDATE_2M ? "svsm_pvalidate_2m" : "svsm_pvalidate_4k");
	/* svsm_lie: "done", and the RMP unchanged. */
	struct emu_fault *lie = emu_fault_find(&emu.faults, FAULT_SVSM_LIE, 0, 0);

	if (lie && SVSM_PVAL_ENTRY_VALIDATE(e)) {
		lie->fired++;
		return SVSM_SUCCESS;
	}
	rc = emu_model_pvalidate(&emu.model, pa, size, (u32)SVSM_PVAL_ENTRY_VALIDATE(e), &no_update);
	if (rc)
		return SVSM_ERR_PROTOCOL_BASE + rc;
	if (no_update && !SVSM_PVAL_ENTRY_IGNORE_CF(e))
		return SVSM_PVALIDATE_FAIL_UNCHANGED;
	return SVSM_SUCCESS;
}

static u64 core_pvalidate(u64 gpa)
{
	struct svsm_pval_req *req = (struct svsm_pval_req *)(uintptr_t)gpa;
	u64 rc = SVSM_SUCCESS, max;

	if (!IS_ALIGNED(gpa, 8) || !readable(gpa, SVSM_PVAL_HDR))
		return SVSM_ERR_INVALID_PARAMETER;
	max = (PAGE_SIZE - (gpa & (PAGE_SIZE - 1)) - SVSM_PVAL_HDR) / 8;
	if (!req->num_entries || req->num_entries > max || req->num_entries <= req->cur_index)
		return SVSM_ERR_INVALID_PARAMETER;
	if (!readable(gpa, SVSM_PVAL_HDR + 8ULL * req->num_entries))
		return SVSM_ERR_INVALID_PARAMETER;
	for (unsigned done = 0; req->cur_index < req->num_entries; done++) {
		/* svsm_incomplete: an SVSM that stops part-way; cur_index says how far it got. */
		if (done == 3 && emu_fault_take(&emu.faults, FAULT_SVSM_INCOMPLETE, 0, 0)) {
			emu_count("svsm_incomplete_fault");
			return SVSM_ERR_INCOMPLETE;
		}
		rc = pvalidate_one(req->entries[req->cur_index]);
		if (rc != SVSM_SUCCESS)
			break;
		req->cur_index++;
	}
	return rc;
}

/* A guest page the SVSM accepts as an address (COCONUT valid_phys_address: guest RAM), page aligned. */
static bool guest_page(u64 pa)
{
	return IS_ALIGNED(pa, PAGE_SIZE) && emu_model_is_ram(&emu.model, pa, pa + PAGE_SIZE);
}

/*
 * Create vCPU as COCONUT core.rs core_create_vcpu checks it, in its order: RCX (VMSA)
 * and RDX (calling area) page-aligned guest addresses, not the same page, else
 * INVALID_ADDRESS; R8[31:0] an APIC ID the SVSM has a vCPU for (PERCPU_AREAS
 * get_by_apic_id; here the APIC IDs of QEMU's vCPUs), else INVALID_PARAMETER; the VMSA's
 * VMPL the guest's, EFER.SVME set and SEV_FEATURES the caller's (check_vmsa), else
 * INVALID_PARAMETER. Then the page becomes a VMSA in the RMP (rmp_set_guest_vmsa; here
 * it must be private and validated, as the guest's own page would be) and the target
 * vCPU's guest VMSA and calling area are recorded (update_guest_vmsa_caa). Not
 * modelled: PERCPU_VMSAS.register's refusal of a page already registered.
 */
static u64 core_create_vcpu(const struct trap_frame *f)
{
	u64 vmsa = f->rcx, caa = f->rdx;
	u32 apic_id = (u32)f->r8;
	const struct sev_vmsa *v = (const struct sev_vmsa *)(uintptr_t)vmsa;
	struct emu_vcpu *t;
	u8 *p;

	emu_count("svsm_create_vcpu");
	if (emu_fault_take(&emu.faults, FAULT_SVSM_CREATE_VCPU_MALFORMED, 0, 0))
		return CREATE_VCPU_MALFORMED;
	if (emu_fault_take(&emu.faults, FAULT_SVSM_CREATE_VCPU_REFUSED, 0, 0)) {
		emu_count("svsm_create_vcpu_refused_fault");
		return SVSM_ERR_INVALID_PARAMETER;
	}
	if (!guest_page(vmsa) || !guest_page(caa) || vmsa == caa) {
		emu_count("svsm_create_vcpu_bad_address");
		return SVSM_ERR_INVALID_ADDRESS;
	}
	if (emu_host_vcpu_index(apic_id) < 0 || apic_id >= EMU_MAX_VCPUS) {
		emu_count("svsm_create_vcpu_unknown_apic_id");
		return SVSM_ERR_INVALID_PARAMETER;
	}
	if (v->vmpl != emu.guest_vmpl || !(v->efer & EFER_SVME) ||
	    v->sev_features != emu_sev_status() >> SEV_STATUS_FEATURES_SHIFT) {
		emu_count("svsm_create_vcpu_bad_vmsa");
		return SVSM_ERR_INVALID_PARAMETER;
	}
	p = emu_model_page(&emu.model, vmsa);
	if (!p || !(*p & EMU_PG_PRIVATE) || !(*p & EMU_PG_ACCEPTED)) {
		emu_count("svsm_create_vcpu_bad_address");
		return SVSM_ERR_INVALID_ADDRESS;
	}
	*p |= EMU_PG_VMSA;
	emu_model_changed(&emu.model, vmsa, vmsa + PAGE_SIZE);
	t = &emu.vcpu[apic_id];
	t->svsm_vmsa = vmsa;
	t->svsm_caa = caa;
	return SVSM_SUCCESS;
}

/*
 * Delete vCPU as COCONUT core.rs core_delete_vcpu does it, in its order: RCX must be a
 * VMSA that Create vCPU registered and that is in use (PERCPU_VMSAS.unregister(paddr,
 * true), which also refuses the boot vCPU's), else INVALID_PARAMETER; the registry entry
 * goes and the target vCPU forgets it as its guest VMSA (clear_guest_vmsa_if_match);
 * EFER.SVME is cleared in the page (VMSA::disable); the VMSA attribute is taken away in
 * the RMP (rmp_clear_guest_vmsa; its failure would be INVALID_ADDRESS, which the page
 * model cannot produce). Not modelled: disable() waiting while the vCPU still runs that
 * VMSA; the emulator stops the VM instead (memaccept deletes only VMSAs not run).
 */
static u64 core_delete_vcpu(const struct trap_frame *f)
{
	u64 vmsa = f->rcx;
	struct emu_vcpu *t = NULL;
	u8 *p;

	emu_count("svsm_delete_vcpu");
	if (emu_fault_take(&emu.faults, FAULT_SVSM_DELETE_VCPU_MALFORMED, 0, 0))
		return CREATE_VCPU_MALFORMED;
	if (emu_fault_take(&emu.faults, FAULT_SVSM_DELETE_VCPU_REFUSED, 0, 0)) {
		emu_count("svsm_delete_vcpu_refused_fault");
		return SVSM_ERR_INVALID_PARAMETER;
	}
	for (u32 i = 1; vmsa && i < EMU_MAX_VCPUS && !t; i++)
		if (emu.vcpu[i].svsm_vmsa == vmsa)
			t = &emu.vcpu[i];
	if (!t) {
		emu_count("svsm_delete_vcpu_not_registered");
		return SVSM_ERR_INVALID_PARAMETER;
	}
	if (t->running && t->vmsa_gpa == vmsa)
		emu_host_stops_guest(vmsa, "SVSM Delete vCPU of a VMSA a vCPU is running: not modelled");
	t->svsm_vmsa = 0;
	((struct sev_vmsa *)(uintptr_t)vmsa)->efer &= ~EFER_SVME;
	p = emu_model_page(&emu.model, vmsa);
	if (p)
		*p &= (u8)~EMU_PG_VMSA;
	emu_model_changed(&emu.model, vmsa, vmsa + PAGE_SIZE);
	return SVSM_SUCCESS;
}

/*
 * Nothing pending in the caller's own calling area. If it is an AP while call_pending
 * is set in the boot vCPU's calling area, the AP most likely used that one: the SVSM on
 * this vCPU never looks there, so the call is lost and the guest finds call_pending
 * still set. Counted (no print: the emulator lock is held, and another vCPU may hold
 * the console while it waits for the emulator).
 */
static void nothing_pending(void)
{
	const u8 *boot = (const u8 *)(uintptr_t)emu.svsm_caa;

	emu_count("svsm_nothing_pending");
	if (emu_self()->svsm_vmsa && boot && boot[SVSM_CAA_CALL_PENDING])
		emu_count("svsm_call_through_other_caa");
}

/*
 * Query Protocol as COCONUT core.rs core_query_protocol answers it: RCX = protocol 63:32,
 * version 31:0; for the core protocol (0) at a version in CORE_PROTOCOL_VERSION_MIN..MAX
 * (1..1) RCX = min | max << 32, for anything else RCX = 0; the call itself succeeds.
 */
static u64 core_query_protocol(struct trap_frame *f)
{
	u32 protocol = (u32)(f->rcx >> 32), version = (u32)f->rcx;

	emu_count("svsm_query_protocol");
	f->rcx = protocol == SVSM_CORE_PROTOCOL && version == SVSM_CORE_VERSION
		 ? SVSM_CORE_VERSION | ((u64)SVSM_CORE_VERSION << 32) : 0;
	return SVSM_SUCCESS;
}

void emu_svsm_call(struct trap_frame *f)
{
	u32 vmpl = (u32)((emu_self()->ghcb_msr >> 32) & 0xff);
	u8 *caa = (u8 *)(uintptr_t)caller_caa();
	u64 rc;

	emu_count("vmgexit_run_vmpl");
	if (emu.svsm != EMU_SVSM_PRESENT || !caa) {
		/* No SVSM to run: the request is unknown to the host and the MSR stays as it was. */
		emu_count("msr_protocol_unknown");
		return;
	}
	/*
	 * Only VMPL0 runs an SVSM; anything else is refused in the response (63:32 != 0).
	 * svsm_not_run plays a host that refuses to run VMPL0 at all.
	 */
	if (vmpl != 0 || emu_fault_take(&emu.faults, FAULT_SVSM_NOT_RUN, 0, 0)) {
		emu_self()->ghcb_msr = GHCB_MSR_VMPL_RESP | VMPL_RESP_REFUSED;
		return;
	}
	emu_self()->ghcb_msr = GHCB_MSR_VMPL_RESP;
	if (!caa[SVSM_CAA_CALL_PENDING]) {
		/* Nothing pending: the SVSM returns to the guest without a result. */
		nothing_pending();
		return;
	}
	emu_count("svsm_calls");
	if (emu_self()->svsm_vmsa)
		emu_count("svsm_calls_from_aps");	/* through the AP's own calling area */
	if (f->rax >> 32 != SVSM_CORE_PROTOCOL)
		rc = SVSM_ERR_UNSUPPORTED_PROTOCOL;
	else if ((u32)f->rax == SVSM_CORE_CREATE_VCPU)
		rc = core_create_vcpu(f);
	else if ((u32)f->rax == SVSM_CORE_DELETE_VCPU)
		rc = core_delete_vcpu(f);
	else if ((u32)f->rax == SVSM_CORE_QUERY_PROTOCOL)
		rc = core_query_protocol(f);
	else if ((u32)f->rax != SVSM_CORE_PVALIDATE)
		rc = SVSM_ERR_UNSUPPORTED_CALL;
	else if (emu_fault_take(&emu.faults, FAULT_SVSM_BUSY, 0, 0))
		rc = SVSM_ERR_BUSY;
	else
		rc = core_pvalidate(f->rcx);
	if (rc != SVSM_SUCCESS)
		emu_count("svsm_errors");
	caa[SVSM_CAA_CALL_PENDING] = 0;
	f->rax = rc;
}
