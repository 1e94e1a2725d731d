/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the SNP VMSA a new vCPU starts from, and of the AP Creation encoding and answers. */
#include <string.h>
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/vmsa.h"
#include "tests/unit/unit.h"

static struct sev_vmsa v;

static const struct snp_ap_state bsp = {
	.cs = 0x08, .ds = 0x10,
	.gdt_base = 0x123000, .gdt_limit = 39, .idt_base = 0x456000, .idt_limit = 4095,
	.cr0 = 0x80050033, .cr3 = 0x7f000, .cr4 = 0x406a0,
	.efer = 0xd00,			/* LME | LMA | NXE, as the boot CPU runs */
	.xcr0 = 0x7, .pat = 0x0007040600070406ULL,
	.sev_status = 0x7,		/* SEV, SEV-ES, SNP: SEV_FEATURES = SNPActive */
	.rip = 0xffff1000, .rsp = 0x200ff8, .gs_base = 0x300040,
};

static void fill(void)
{
	memset(&v, 0, sizeof(v));	/* the contract: a zeroed page */
	snp_vmsa_fill(&v, &bsp);
}

/* The fields land where APM vol. 2 table B-4 (Linux struct sev_es_save_area) has them. */
TEST(vmsa_fields_at_their_offsets)
{
	const u8 *p = (const u8 *)&v;

	fill();
	EXPECT_EQ(*(const u64 *)(p + 0x178), bsp.rip);
	EXPECT_EQ(*(const u64 *)(p + 0x1d8), bsp.rsp);
	EXPECT_EQ(*(const u64 *)(p + 0x150), bsp.cr3);
	EXPECT_EQ(*(const u64 *)(p + 0x158), bsp.cr0);
	EXPECT_EQ(*(const u64 *)(p + 0x148), bsp.cr4);
	EXPECT_EQ(*(const u64 *)(p + 0x3b0), 1);		/* sev_features = SEV_STATUS >> 2 */
	EXPECT_EQ(*(const u64 *)(p + 0x3e8), bsp.xcr0);
	EXPECT_EQ(*(const u64 *)(p + 0x268), bsp.pat);
	EXPECT_EQ(*(const u64 *)(p + 0x58), bsp.gs_base);	/* gs.base */
	EXPECT_EQ(*(const u16 *)(p + 0x10), 0x08);		/* cs.selector */
	EXPECT_EQ(*(const u64 *)(p + 0x68), bsp.gdt_base);	/* gdtr.base */
	EXPECT_EQ(*(const u32 *)(p + 0x64), bsp.gdt_limit);	/* gdtr.limit */
	EXPECT_EQ(*(const u64 *)(p + 0x88), bsp.idt_base);	/* idtr.base */
	EXPECT_EQ(p[0xcb], 0);					/* CPL 0 */
	EXPECT_EQ(p[0xca], 0);					/* VMPL 0 */
}

/* EFER: long mode as the boot CPU, plus SVME, without which VMRUN refuses the state. */
TEST(vmsa_efer_has_svme_and_long_mode)
{
	fill();
	EXPECT(v.efer & EFER_SVME);
	EXPECT(v.efer & EFER_LME_BIT);
	EXPECT(v.efer & EFER_LMA_BIT);
	EXPECT(v.efer & (1ULL << 11));	/* NXE kept from the boot CPU */
}

/* 64-bit code (L set, D clear: both set is an illegal state), flat data, interrupts off. */
TEST(vmsa_segments_are_64_bit_flat)
{
	fill();
	EXPECT(v.cs.attrib & VMSA_ATTR_L);
	EXPECT(!(v.cs.attrib & VMSA_ATTR_DB));
	EXPECT(v.cs.attrib & VMSA_ATTR_P);
	EXPECT_EQ(v.cs.attrib & 0xf, VMSA_ATTR_TYPE_RX_CODE);
	EXPECT_EQ(v.ss.selector, 0x10);
	EXPECT_EQ(v.ss.attrib, VMSA_DATA_ATTR);
	EXPECT_EQ(v.ds.attrib, VMSA_DATA_ATTR);
	EXPECT_EQ(v.rflags, 0x2);
	EXPECT_EQ(v.dr7, 0x400);
	EXPECT_EQ(v.mxcsr, 0x1f80);
	/* The INIT values Linux and edk2 give an AP (AP_INIT_X87_FCW/FTW), not FNINIT's. */
	EXPECT_EQ(v.x87_fcw, 0x40);
	EXPECT_EQ(v.x87_ftw, 0x5555);
}

/* Never a 2 MiB aligned page (KVM refuses it; the VMSA erratum). */
TEST(vmsa_pick_avoids_2m_alignment)
{
	EXPECT_EQ(snp_vmsa_pick(0x200000), 0x201000);
	EXPECT_EQ(snp_vmsa_pick(0x40000000), 0x40001000);
	EXPECT_EQ(snp_vmsa_pick(0x203000), 0x203000);
	for (u64 base = 0; base < (8ULL << 20); base += 0x1000)
		EXPECT(snp_vmsa_pick(base) % (2ULL << 20) != 0);
}

/* SW_EXITINFO1 = request in 31:0, APIC ID in 63:32 (GHCB spec; KVM lower/upper_32_bits). */
TEST(ap_create_request_encoding)
{
	u64 i1 = SNP_AP_CREATE_INFO1(SNP_AP_CREATE, 3);

	EXPECT_EQ(i1, 0x0000000300000001ULL);
	EXPECT_EQ(SNP_AP_INFO1_REQUEST(i1), 1);
	EXPECT_EQ(SNP_AP_INFO1_APIC_ID(i1), 3);
	EXPECT_EQ(SNP_AP_CREATE_INFO1(SNP_AP_DESTROY, 0xfe), 0x000000fe00000002ULL);
	/* All 32 bits of an x2APIC ID (an SNP guest's APIC IDs may pass 255). */
	EXPECT_EQ(SNP_AP_CREATE_INFO1(SNP_AP_CREATE, 0x12345), 0x0001234500000001ULL);
	EXPECT_EQ(SNP_AP_INFO1_APIC_ID(SNP_AP_CREATE_INFO1(SNP_AP_CREATE, 0xfffffffe)), 0xfffffffe);
	EXPECT_EQ(SVM_VMGEXIT_AP_CREATION, 0x80000013);
}

/*
 * Below VMPL0 the VMPL the VMSA is for goes from bit 16 (Linux vmgexit_ap_control:
 * apic_id << 32 | snp_vmpl << 16 | event), read as 19:16 with the request as 31:0
 * without them (the KVM planes series); at VMPL0 the encoding is unchanged.
 */
TEST(ap_create_request_encoding_with_vmpl)
{
	u64 i1 = SNP_AP_CREATE_INFO1_VMPL(SNP_AP_CREATE, 1, 3);

	EXPECT_EQ(i1, 0x0000000300010001ULL);
	EXPECT_EQ(SNP_AP_INFO1_VMPL(i1), 1);
	EXPECT_EQ(SNP_AP_INFO1_REQUEST_LOW(i1), SNP_AP_CREATE);
	EXPECT_EQ(SNP_AP_INFO1_APIC_ID(i1), 3);
	/* What upstream KVM reads as the request (31:0): no request it knows. */
	EXPECT_EQ(SNP_AP_INFO1_REQUEST(i1), 0x10001);
	EXPECT_EQ(SNP_AP_CREATE_INFO1_VMPL(SNP_AP_CREATE, 0, 3), SNP_AP_CREATE_INFO1(SNP_AP_CREATE, 3));
	EXPECT_EQ(SNP_AP_INFO1_VMPL(SNP_AP_CREATE_INFO1_VMPL(SNP_AP_DESTROY, 3, 7)), 3);
	EXPECT_EQ(SNP_AP_INFO1_REQUEST_LOW(SNP_AP_CREATE_INFO1_VMPL(SNP_AP_DESTROY, 3, 7)), SNP_AP_DESTROY);
	/* Bits above 19 stay part of the request: no request a host knows. */
	EXPECT_EQ(SNP_AP_INFO1_REQUEST_LOW(0x0000000100100001ULL), 0x100001);
	EXPECT_EQ(SNP_AP_INFO1_VMPL(0x0000000100100001ULL), 0);
	EXPECT_EQ(SNP_AP_INFO1_VMPL(SNP_AP_CREATE_INFO1_VMPL(SNP_AP_CREATE, 15, 1)), 15);
}

/* The VMSA carries the VMPL it runs at: 0, or the guest's below VMPL0 (COCONUT check_vmsa). */
TEST(vmsa_vmpl_is_the_callers)
{
	struct snp_ap_state st = bsp;

	fill();
	EXPECT_EQ(((const u8 *)&v)[0xca], 0);
	st.vmpl = 1;
	memset(&v, 0, sizeof(v));
	snp_vmsa_fill(&v, &st);
	EXPECT_EQ(((const u8 *)&v)[0xca], 1);
	EXPECT_EQ(v.cpl, 0);
}

/* 0 = created; 2 + a GHCB_ERR_* reason = refused; anything else is no valid answer. */
TEST(ap_create_answers)
{
	EXPECT_EQ(snp_ap_answer(0, 0, true), SNP_AP_ANSWER_OK);
	EXPECT_EQ(snp_ap_answer(0, 0x1234, true), SNP_AP_ANSWER_OK);
	EXPECT_EQ(snp_ap_answer(2, GHCB_ERR_INVALID_INPUT, true), SNP_AP_ANSWER_REFUSED);
	EXPECT_EQ(snp_ap_answer(2, GHCB_ERR_NOT_REGISTERED, true), SNP_AP_ANSWER_REFUSED);
	EXPECT_EQ(snp_ap_answer(2, GHCB_ERR_INVALID_EVENT, true), SNP_AP_ANSWER_REFUSED);
	EXPECT_EQ(snp_ap_answer(2, 0, true), SNP_AP_ANSWER_MALFORMED);
	EXPECT_EQ(snp_ap_answer(2, 0x99, true), SNP_AP_ANSWER_MALFORMED);
	EXPECT_EQ(snp_ap_answer(1, 0, true), SNP_AP_ANSWER_MALFORMED);
	/* 1: an exception to raise (EVENTINJ): a valid #GP or #UD, type exception, is a no. */
	EXPECT_EQ(snp_ap_answer(1, 0x80000b0dULL, true), SNP_AP_ANSWER_REFUSED);	/* #GP, error code valid */
	EXPECT_EQ(snp_ap_answer(1, 0x80000306ULL, true), SNP_AP_ANSWER_REFUSED);	/* #UD */
	EXPECT_EQ(snp_ap_answer(1, 0x0000030dULL, true), SNP_AP_ANSWER_MALFORMED);	/* not valid */
	EXPECT_EQ(snp_ap_answer(1, 0x8000000dULL, true), SNP_AP_ANSWER_MALFORMED);	/* type: interrupt */
	EXPECT_EQ(snp_ap_answer(1, 0x8000030eULL, true), SNP_AP_ANSWER_MALFORMED);	/* #PF */
	EXPECT_EQ(snp_ap_answer(3, GHCB_ERR_INVALID_INPUT, true), SNP_AP_ANSWER_MALFORMED);
	EXPECT_EQ(snp_ap_answer(0x100000000ULL, 0, true), SNP_AP_ANSWER_MALFORMED);
	/* Not marked valid in the GHCB: no answer, whatever the fields hold (Linux vmgexit_ap_control). */
	EXPECT_EQ(snp_ap_answer(0, 0, false), SNP_AP_ANSWER_MALFORMED);
	EXPECT_EQ(snp_ap_answer(2, GHCB_ERR_INVALID_INPUT, false), SNP_AP_ANSWER_MALFORMED);
}
