/* SPDX-License-Identifier: MIT */
/* memaccept (test image): an SVSM at VMPL0 that validates for the guest (emu_svsm=1). */
#include "arch/x86/emu/emu.h"
#include "arch/x86/sev/svsm.h"
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
 * is the result, `next` is written back either way. Not modelled: COCONUT zeroes each
 * page it validates (the page model has no contents), per-CPU calling areas, and the
 * other core protocol calls (they answer UNSUPPORTED_CALL).
 */

/* A Run VMPL response with a non-zero value in 63:32: the host did not run that VMPL. */
#define VMPL_RESP_REFUSED (1ULL << 32)

/* The request lies in the calling area or in guest RAM (COCONUT: valid_phys_region). */
static bool readable(u64 pa, u64 len)
{
	bool in_caa = pa >= emu.svsm_caa && pa + len <= emu.svsm_caa + PAGE_SIZE;

	return in_caa || emu_model_is_ram(&emu.model, pa & ~(PAGE_SIZE - 1),
					  (pa + len + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1));
}

static u64 pvalidate_one(u64 e)
{
	u32 size = (u32)SVSM_PVAL_ENTRY_SIZE(e), rc;
	u64 pa = SVSM_PVAL_ENTRY_PA(e);
	bool no_update = false;

	if (size > PVALIDATE_2M || !IS_ALIGNED(pa, size == PVALIDATE_2M ? UNIT_SIZE : PAGE_SIZE))
		return SVSM_ERR_INVALID_PARAMETER;
	if (!emu_model_is_ram(&emu.model, pa, pa + (size == PVALIDATE_2M ? UNIT_SIZE : PAGE_SIZE)))
		return SVSM_ERR_INVALID_ADDRESS;
	emu_count(size == PVALIDATE_2M ? "svsm_pvalidate_2m" : "svsm_pvalidate_4k");
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
	while (req->cur_index < req->num_entries) {
		rc = pvalidate_one(req->entries[req->cur_index]);
		if (rc != SVSM_SUCCESS)
			break;
		req->cur_index++;
	}
	return rc;
}

void emu_svsm_call(struct trap_frame *f)
{
	u32 vmpl = (u32)((emu_self()->ghcb_msr >> 32) & 0xff);
	u8 *caa = (u8 *)(uintptr_t)emu.svsm_caa;
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
		emu_count("svsm_nothing_pending");
		return;
	}
	emu_count("svsm_calls");
	if (f->rax >> 32 != SVSM_CORE_PROTOCOL)
		rc = SVSM_ERR_UNSUPPORTED_PROTOCOL;
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
