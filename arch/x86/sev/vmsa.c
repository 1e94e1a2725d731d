/* SPDX-License-Identifier: MIT */
/* memaccept: filling an SEV-SNP VMSA for a new vCPU, and judging the host's AP Creation answer (pure logic). */
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/vmsa.h"

#define VMSA_UNIT (2ULL << 20)	/* the large-page size the VMSA erratum is about */
#define VMSA_PAGE 4096ULL

static void seg(struct vmsa_seg *s, u16 selector, u16 attrib, u32 limit, u64 base)
{
	s->selector = selector;
	s->attrib = attrib;
	s->limit = limit;
	s->base = base;
}

/*
 * The AP starts where the boot CPU is: long mode with the kernel's page tables, GDT and
 * IDT, flat 64-bit code and data segments (the kernel GDT's own), its own stack and
 * per-CPU data (GS base). LDTR is empty and TR a placeholder: the AP loads its own TSS
 * before it can take a fault that needs one. What is left zero (general registers,
 * debug addresses, FS base) needs no value.
 */
void snp_vmsa_fill(struct sev_vmsa *v, const struct snp_ap_state *s)
{
	seg(&v->cs, s->cs, VMSA_CODE64_ATTR, 0xffffffff, 0);
	seg(&v->ds, s->ds, VMSA_DATA_ATTR, 0xffffffff, 0);
	seg(&v->es, s->ds, VMSA_DATA_ATTR, 0xffffffff, 0);
	seg(&v->ss, s->ds, VMSA_DATA_ATTR, 0xffffffff, 0);
	seg(&v->fs, s->ds, VMSA_DATA_ATTR, 0xffffffff, 0);
	seg(&v->gs, s->ds, VMSA_DATA_ATTR, 0xffffffff, s->gs_base);
	seg(&v->gdtr, 0, 0, s->gdt_limit, s->gdt_base);
	seg(&v->idtr, 0, 0, s->idt_limit, s->idt_base);
	seg(&v->ldtr, 0, VMSA_ATTR_P | VMSA_ATTR_TYPE_LDT, 0xffff, 0);
	seg(&v->tr, 0, VMSA_ATTR_P | VMSA_ATTR_TYPE_TSS_BUSY, 0xffff, 0);
	v->vmpl = s->vmpl;
	v->cpl = 0;
	/* Long mode active, and SVME, without which VMRUN refuses the state (APM vol. 2 15.5.1). */
	v->efer = s->efer | EFER_LME_BIT | EFER_LMA_BIT | EFER_SVME;
	v->cr0 = s->cr0;
	v->cr3 = s->cr3;
	v->cr4 = s->cr4;
	v->dr6 = VMSA_DR6_RESET;
	v->dr7 = VMSA_DR7_RESET;
	v->rflags = VMSA_RFLAGS_RESET;	/* interrupts off, as memaccept runs */
	v->rip = s->rip;
	v->rsp = s->rsp;
	v->g_pat = s->pat;
	v->sev_features = s->sev_status >> SEV_STATUS_FEATURES_SHIFT;
	v->xcr0 = s->xcr0;
	v->mxcsr = VMSA_MXCSR_RESET;
	v->x87_fcw = VMSA_X87_FCW_INIT;
	v->x87_ftw = VMSA_X87_FTW_INIT;
}

u64 snp_vmsa_pick(u64 base)
{
	return base % VMSA_UNIT ? base : base + VMSA_PAGE;
}

enum snp_ap_answer snp_ap_answer(u64 info1, u64 info2, bool valid)
{
	if (!valid)
		return SNP_AP_ANSWER_MALFORMED;
	if (info1 == 0)
		return SNP_AP_ANSWER_OK;
	if (info1 == GHCB_HV_RESP_ISSUE && info2 >= GHCB_ERR_NOT_REGISTERED && info2 <= GHCB_ERR_INVALID_EVENT)
		return SNP_AP_ANSWER_REFUSED;
	/* A #GP or #UD to raise instead: the request failed (Linux's AP start fails on it too). */
	if (info1 == GHCB_HV_RESP_EXCEPTION && (info2 & EVTINJ_VALID) &&
	    EVTINJ_TYPE(info2) == EVTINJ_TYPE_EXCEPTION &&
	    (EVTINJ_VECTOR(info2) == 13 || EVTINJ_VECTOR(info2) == 6))
		return SNP_AP_ANSWER_REFUSED;
	return SNP_AP_ANSWER_MALFORMED;
}
