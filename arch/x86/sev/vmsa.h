/* SPDX-License-Identifier: MIT */
/* memaccept: the SEV-SNP VM save area (VMSA) and the GHCB AP Creation event that starts a vCPU with it. */
#ifndef ARCH_X86_SEV_VMSA_H
#define ARCH_X86_SEV_VMSA_H

#include "include/types.h"

/*
 * AP Creation (GHCB spec, AMD pub. 56421, 4.1.8 "SNP AP Creation"; values as KVM uses them,
 * Linux arch/x86/include/uapi/asm/svm.h SVM_VMGEXIT_AP_*): SW_EXITCODE 0x80000013,
 * SW_EXITINFO1 = request in 31:0 (0 create on INIT, 1 create now, 2 destroy) and the
 * target's APIC ID in 63:32, SW_EXITINFO2 = the VMSA's GPA, RAX = the VMSA's SEV
 * features (KVM: must equal the VM's, sev_snp_ap_creation). Needs hypervisor feature
 * bit 1 (GHCB spec 2.3.1 "Hypervisor Feature Support"; KVM GHCB_HV_FT_SNP_AP_CREATION).
 */
#define SVM_VMGEXIT_AP_CREATION 0x80000013ULL
#define SNP_AP_CREATE_ON_INIT 0
#define SNP_AP_CREATE 1
#define SNP_AP_DESTROY 2
#define GHCB_HV_FT_SNP_AP_CREATION (1ULL << 1)
#define SNP_AP_CREATE_INFO1(request, apic_id) SNP_AP_CREATE_INFO1_VMPL(request, 0, apic_id)
#define SNP_AP_INFO1_REQUEST(info1) ((u32)(info1))
#define SNP_AP_INFO1_APIC_ID(info1) ((u32)((info1) >> 32))
/*
 * A guest below VMPL0 names the VMPL the new VMSA is for in SW_EXITINFO1 from bit 16
 * (Linux arch/x86/coco/sev/core.c vmgexit_ap_control: apic_id << 32 | snp_vmpl << 16 |
 * event). At VMPL0 those bits are 0, so the encoding is the one above. Upstream KVM
 * reads all of 31:0 as the request; the VMPL-aware KVM posted as "KVM planes" (2026,
 * SVM_VMGEXIT_AP_VMPL_MASK) reads the VMPL from 19:16 and the request from 31:0 without
 * them.
 */
#define SNP_AP_INFO1_VMPL_MASK 0xf0000u
#define SNP_AP_CREATE_INFO1_VMPL(request, vmpl, apic_id) \
	(((u64)(apic_id) << 32) | ((u64)((vmpl) & 0xf) << 16) | (u16)(request))
#define SNP_AP_INFO1_VMPL(info1) (((u32)(info1) & SNP_AP_INFO1_VMPL_MASK) >> 16)
#define SNP_AP_INFO1_REQUEST_LOW(info1) ((u32)(info1) & ~SNP_AP_INFO1_VMPL_MASK)

/* RMPADJUST attributes (AMD APM vol. 3 RMPADJUST): bit 16 makes the page a VMSA. */
#define RMPADJUST_VMSA (1ULL << 16)

/*
 * SEV_STATUS (MSR 0xC0010131, APM vol. 2 15.34.10) bits 2 and up are the SEV_FEATURES a
 * VMSA carries (bit 0 SNPActive, 1 vTOM, 2 ReflectVC, ...): a new vCPU must run with the
 * features the guest was launched with (Linux wakeup_cpu_via_vmgexit uses
 * sev_status >> 2; KVM refuses any other value).
 */
#define SEV_STATUS_FEATURES_SHIFT 2

/* A segment in the save area (APM vol. 2 appendix B, "VMCB Layout, State Save Area"). */
struct vmsa_seg {
	u16 selector;
	u16 attrib;	/* packed: type 3:0, S 4, DPL 6:5, P 7, AVL 8, L 9, D/B 10, G 11 */
	u32 limit;
	u64 base;
};

/* Segment attributes (APM vol. 2, 15.5.1 and appendix B; Linux asm/svm.h SVM_SELECTOR_*). */
#define VMSA_ATTR_TYPE_RW_DATA 0x3	/* read/write, accessed */
#define VMSA_ATTR_TYPE_RX_CODE 0xb	/* execute/read, accessed */
#define VMSA_ATTR_TYPE_LDT 0x2
#define VMSA_ATTR_TYPE_TSS_BUSY 0xb	/* 64-bit TSS, busy */
#define VMSA_ATTR_S (1u << 4)
#define VMSA_ATTR_P (1u << 7)
#define VMSA_ATTR_L (1u << 9)
#define VMSA_ATTR_DB (1u << 10)
#define VMSA_ATTR_G (1u << 11)
#define VMSA_CODE64_ATTR (VMSA_ATTR_TYPE_RX_CODE | VMSA_ATTR_S | VMSA_ATTR_P | VMSA_ATTR_L | VMSA_ATTR_G)
#define VMSA_DATA_ATTR (VMSA_ATTR_TYPE_RW_DATA | VMSA_ATTR_S | VMSA_ATTR_P | VMSA_ATTR_DB | VMSA_ATTR_G)

#define EFER_SVME (1ULL << 12)	/* a VMSA must have it: APM vol. 2 15.5.1, "EFER.SVME is zero" is illegal */
#define EFER_LME_BIT (1ULL << 8)
#define EFER_LMA_BIT (1ULL << 10)
#define CR0_PE_BIT (1ULL << 0)
#define CR0_PG_BIT (1ULL << 31)
#define CR4_PAE_BIT (1ULL << 5)

/*
 * Reset and INIT values (APM vol. 2 14.1.3, "Processor Initialization State"), as Linux
 * (arch/x86/coco/sev/core.c AP_INIT_*) and edk2 (SevSnpCreateSaveArea) put them in an
 * AP's VMSA: x87 control word 0x40 and tag word 0x5555 (the value both write; read as
 * two bits per register it tags each one 01, "zero"), not FNINIT's 0x37F and 0xFFFF.
 */
#define VMSA_RFLAGS_RESET 0x2ULL
#define VMSA_DR6_RESET 0xffff0ff0ULL
#define VMSA_DR7_RESET 0x400ULL
#define VMSA_X87_FCW_INIT 0x40
#define VMSA_X87_FTW_INIT 0x5555
#define VMSA_MXCSR_RESET 0x1f80

/*
 * The save area of an SEV-ES/SNP guest, the first 0x420 bytes that memaccept sets (APM
 * vol. 2 appendix B, table B-4 "VMSA Layout, State Save Area for SEV-ES"; the same
 * offsets as Linux arch/x86/include/asm/svm.h struct sev_es_save_area, checked below).
 * Everything not named is zero. Every field is naturally aligned, so no packing is needed.
 */
struct sev_vmsa {
	struct vmsa_seg es, cs, ss, ds, fs, gs, gdtr, ldtr, idtr, tr;	/* 0x000 */
	u8 pad_0a0[0x2a];
	u8 vmpl;			/* 0x0ca */
	u8 cpl;				/* 0x0cb */
	u8 pad_0cc[4];
	u64 efer;			/* 0x0d0 */
	u8 pad_0d8[0x70];
	u64 cr4;			/* 0x148 */
	u64 cr3;
	u64 cr0;
	u64 dr7;
	u64 dr6;
	u64 rflags;
	u64 rip;			/* 0x178 */
	u8 pad_180[0x58];
	u64 rsp;			/* 0x1d8 */
	u8 pad_1e0[0x88];
	u64 g_pat;			/* 0x268 */
	u8 pad_270[0x140];
	u64 sev_features;		/* 0x3b0 */
	u8 pad_3b8[0x30];
	u64 xcr0;			/* 0x3e8 */
	u8 pad_3f0[0x18];
	u32 mxcsr;			/* 0x408 */
	u16 x87_ftw;
	u16 x87_fsw;
	u16 x87_fcw;			/* 0x410 */
	u8 pad_412[0xbee];
};

_Static_assert(__builtin_offsetof(struct sev_vmsa, tr) == 0x90, "VMSA tr");
_Static_assert(__builtin_offsetof(struct sev_vmsa, cpl) == 0xcb, "VMSA cpl");
_Static_assert(__builtin_offsetof(struct sev_vmsa, efer) == 0xd0, "VMSA efer");
_Static_assert(__builtin_offsetof(struct sev_vmsa, cr4) == 0x148, "VMSA cr4");
_Static_assert(__builtin_offsetof(struct sev_vmsa, rip) == 0x178, "VMSA rip");
_Static_assert(__builtin_offsetof(struct sev_vmsa, rsp) == 0x1d8, "VMSA rsp");
_Static_assert(__builtin_offsetof(struct sev_vmsa, g_pat) == 0x268, "VMSA g_pat");
_Static_assert(__builtin_offsetof(struct sev_vmsa, sev_features) == 0x3b0, "VMSA sev_features");
_Static_assert(__builtin_offsetof(struct sev_vmsa, xcr0) == 0x3e8, "VMSA xcr0");
_Static_assert(__builtin_offsetof(struct sev_vmsa, mxcsr) == 0x408, "VMSA mxcsr");
_Static_assert(__builtin_offsetof(struct sev_vmsa, x87_ftw) == 0x40c, "VMSA x87_ftw");
_Static_assert(__builtin_offsetof(struct sev_vmsa, x87_fcw) == 0x410, "VMSA x87_fcw");
_Static_assert(sizeof(struct sev_vmsa) == 4096, "VMSA is one page");

/* The 64-bit state an AP starts in: the boot CPU's, with its own entry, stack and GS base. */
struct snp_ap_state {
	u16 cs, ds;			/* selectors in the GDT below */
	u64 gdt_base, idt_base;
	u16 gdt_limit, idt_limit;
	u64 cr0, cr3, cr4, efer, xcr0, pat;
	u64 sev_status;			/* the boot CPU's SEV_STATUS */
	u64 rip, rsp, gs_base;
	/*
	 * The VMPL the vCPU runs at: 0, or below VMPL0 the guest's own VMPL (Linux
	 * wakeup_cpu_via_vmgexit sets vmsa->vmpl = snp_vmpl; COCONUT core.rs check_vmsa
	 * refuses a VMSA whose VMPL is not the guest's).
	 */
	u8 vmpl;
};

/* Fill a zeroed VMSA page: long mode, CPL 0, VMPL s->vmpl, EFER.SVME set, reset values elsewhere. */
void snp_vmsa_fill(struct sev_vmsa *v, const struct snp_ap_state *s);

/*
 * Which of two consecutive 4 KiB pages at base (8 KiB allocated) to use as a VMSA: one
 * that is not 2 MiB aligned. An SNP erratum makes the CPU raise a spurious RMP #PF when
 * a 2 MiB or 1 GiB page overlaps the RMP entry of a VMSA page, and KVM refuses a 2 MiB
 * aligned VMSA for that reason (Linux snp_alloc_vmsa_page; KVM sev_snp_ap_creation).
 */
u64 snp_vmsa_pick(u64 base);

/*
 * The hypervisor's answer to an AP Creation exit, judged (GHCB spec 4.1; KVM
 * sev_handle_vmgexit). valid: the hypervisor marked SW_EXITINFO1 valid in the GHCB, and
 * SW_EXITINFO2 too if SW_EXITINFO1 is not 0. KVM always does (ghcb_set_sw_exit_info_1/2);
 * Linux vmgexit_ap_control counts an AP Creation whose SW_EXITINFO1 is not marked valid
 * as failed.
 */
enum snp_ap_answer {
	SNP_AP_ANSWER_OK,	/* SW_EXITINFO1 = 0 */
	SNP_AP_ANSWER_REFUSED,	/* SW_EXITINFO1 = 2 with a GHCB_ERR_* reason, or 1 with a #GP
				 * or #UD to raise: the host said no */
	SNP_AP_ANSWER_MALFORMED,	/* anything else, or not marked valid: not an answer the
					 * protocol allows */
};
enum snp_ap_answer snp_ap_answer(u64 info1, u64 info2, bool valid);

#endif
