/* SPDX-License-Identifier: MIT */
/* memaccept: AMD SEV-SNP guest interface: GHCB, MSR protocol, Page State Change, PVALIDATE. */
#ifndef ARCH_X86_SEV_SNP_H
#define ARCH_X86_SEV_SNP_H

#include "arch/x86/desc.h"
#include "arch/x86/platform.h"
#include "include/types.h"

/* MSRs (AMD APM vol. 2, 15.34; GHCB specification, AMD pub. 56421, 2.3). */
#define MSR_SEV_GHCB 0xC0010130
#define MSR_SEV_STATUS 0xC0010131

/*
 * GHCB MSR protocol (GHCB spec 2.3.1): GHCBInfo in bits 11:0 names the request or
 * response, the rest is its data. Used before a GHCB page exists, and for termination.
 */
#define GHCB_INFO_MASK 0xfffULL
#define GHCB_MSR_SEV_INFO_RESP 0x001	/* max version 63:48, min version 47:32, C-bit 31:24 */
#define GHCB_MSR_SEV_INFO_REQ 0x002
#define GHCB_MSR_REG_GPA_REQ 0x012	/* GFN in 63:12 */
#define GHCB_MSR_REG_GPA_RESP 0x013
#define GHCB_MSR_PSC_REQ 0x014		/* GFN 51:12, operation 55:52 */
#define GHCB_MSR_PSC_RESP 0x015		/* error code in 63:32, 0 = success */
#define GHCB_MSR_HV_FT_REQ 0x080
#define GHCB_MSR_HV_FT_RESP 0x081	/* features in 63:12 */
#define GHCB_MSR_TERM_REQ 0x100		/* reason set 15:12, reason code 23:16 */
#define GHCB_HV_FT_SNP (1ULL << 0)	/* hypervisor supports SEV-SNP (feature bit 0) */
#define GHCB_PROTOCOL_MIN 2		/* SEV-SNP needs GHCB protocol version 2 */
#define GHCB_PROTOCOL_MAX 2

/* Termination reasons: set 0 is the GHCB spec's own; memaccept uses set 1 for its own
 * codes, as Linux does for its: code = (enum fatal_condition << 4) | exit code. */
#define GHCB_TERM_SET_MEMACCEPT 1
#define SNP_TERM_CODE(reason) \
	((u32)((FATAL_REASON_CONDITION(reason) & 0xf) << 4) | (u32)(FATAL_REASON_CODE(reason) & 0xf))

/*
 * GHCB page layout (GHCB spec 2.2, table 1: offsets into the 4 KiB page). Each save-area
 * field the guest fills must also be marked in the valid bitmap: bit n = offset / 8.
 */
#define GHCB_RAX 0x1f8
#define GHCB_RCX 0x308
#define GHCB_RDX 0x310
#define GHCB_RBX 0x318
#define GHCB_SW_EXIT_CODE 0x390
#define GHCB_SW_EXIT_INFO_1 0x398
#define GHCB_SW_EXIT_INFO_2 0x3a0
#define GHCB_SW_SCRATCH 0x3a8
#define GHCB_VALID_BITMAP 0x3f0		/* 16 bytes */
#define GHCB_SHARED_BUFFER 0x800
#define GHCB_SHARED_BUFFER_SIZE 2032
#define GHCB_PROTOCOL_VERSION 0xffa	/* u16 */
#define GHCB_USAGE 0xffc		/* u32: 0 = standard */

/* A save-area field of the GHCB page g, for the guest and for the emulated hypervisor. */
static inline u64 *ghcb_field(u8 *g, u32 off)
{
	return (u64 *)(g + off);
}

static inline bool ghcb_field_valid(const u8 *g, u32 off)
{
	return g[GHCB_VALID_BITMAP + off / 64] & (1u << ((off / 8) % 8));
}

/* Set a field and mark it valid: the other side reads only marked fields. */
static inline void ghcb_field_set(u8 *g, u32 off, u64 v)
{
	*ghcb_field(g, off) = v;
	g[GHCB_VALID_BITMAP + off / 64] |= (u8)(1u << ((off / 8) % 8));
}

/* Exit codes (AMD APM vol. 2, appendix C; GHCB spec 4.1 for the 0x8000xxxx ones). */
#define SVM_EXIT_RDTSC 0x6e
#define SVM_EXIT_CPUID 0x72
#define SVM_EXIT_IOIO 0x7b
#define SVM_EXIT_MSR 0x7c
#define SVM_EXIT_PAGE_NOT_VALIDATED 0x404	/* #VC error code, address in CR2 (APM vol. 2, 15.36.10) */
#define SVM_VMGEXIT_PSC 0x80000010

/* IOIO exit information (AMD APM vol. 2, 15.10.2, figure 15-2). */
#define IOIO_TYPE_IN (1ULL << 0)
#define IOIO_STR (1ULL << 2)
#define IOIO_REP (1ULL << 3)
#define IOIO_SZ8 (1ULL << 4)
#define IOIO_SZ16 (1ULL << 5)
#define IOIO_SZ32 (1ULL << 6)
#define IOIO_A16 (1ULL << 7)
#define IOIO_PORT_SHIFT 16

/*
 * Page State Change request in the GHCB shared buffer (GHCB spec 4.1.6): an 8-byte
 * header {u16 cur_entry, u16 end_entry, u32 reserved} and up to 253 8-byte entries
 * (8 + 253 * 8 = 2032 bytes: the whole shared buffer). Entry: cur_page 11:0, GFN 51:12,
 * operation 55:52, page size 56 (0 = 4K, 1 = 2M), reserved 63:57.
 */
#define PSC_MAX_ENTRIES 253
#define PSC_OP_PRIVATE 1ULL
#define PSC_OP_SHARED 2ULL
#define PSC_ENTRY(gfn, op, size2m) \
	((((u64)(gfn) & 0xffffffffffULL) << 12) | ((u64)(op) << 52) | ((u64)(size2m) << 56))
#define PSC_ENTRY_GFN(e) (((e) >> 12) & 0xffffffffffULL)
#define PSC_ENTRY_OP(e) (((e) >> 52) & 0xf)
#define PSC_ENTRY_2M(e) (((e) >> 56) & 1)
#define PSC_ENTRY_RESERVED(e) ((e) >> 57)
/* SW_EXITINFO2 after a PSC exit: 0, or an error (GHCB spec: 63:32 error code). */
#define PSC_ERROR_INVALID_HDR (1ULL << 32)
#define PSC_ERROR_INVALID_ENTRY (2ULL << 32)

struct psc_header {
	u16 cur_entry;
	u16 end_entry;
	u32 reserved;
};

struct psc_desc {
	struct psc_header hdr;
	u64 entries[PSC_MAX_ENTRIES];
};
_Static_assert(sizeof(struct psc_desc) == GHCB_SHARED_BUFFER_SIZE, "PSC descriptor fills the shared buffer");

/* PVALIDATE (AMD APM vol. 3): return codes in EAX; CF set when the RMP did not change. */
#define PVALIDATE_OK 0
#define PVALIDATE_FAIL_INPUT 1
#define PVALIDATE_FAIL_SIZEMISMATCH 6
#define PVALIDATE_4K 0
#define PVALIDATE_2M 1

/* snp_insn.asm */
u32 snp_pvalidate(u64 va, u32 size, u32 validate, bool *no_update);
void snp_vmgexit(void);

/*
 * Page State Change batching, separate from the GHCB so host tests can mock the exit:
 * exit(desc) copies desc into the shared buffer, makes the PSC exit, copies the header
 * back, and returns SW_EXITINFO2.
 */
struct snp_psc_ops {
	u64 (*exit)(struct psc_desc *desc, unsigned nentries);
	void (*fatal)(u32 condition, const char *what, u64 a, u64 b);
};

struct snp_psc_stats {
	u64 exits;		/* PSC VMGEXITs, re-issues included */
	u64 entries;
	u64 reissues;		/* exits after the hypervisor returned early */
};

/* Change [start, end) (4 KiB aligned) to private or shared, 2 MiB entries where aligned. */
void snp_psc_range(u64 start, u64 end, u64 op, const struct snp_psc_ops *ops, struct snp_psc_stats *st);

/* PVALIDATE [start, end) with 2 MiB pages where aligned, falling back to 4 KiB on a size mismatch. */
struct snp_pvalidate_ops {
	u32 (*pvalidate)(u64 va, u32 size, u32 validate, bool *no_update);
	void (*fatal)(u32 condition, const char *what, u64 a, u64 b);
};

struct snp_pvalidate_stats {
	u64 calls_2m, calls_4k, size_mismatch;
};

void snp_pvalidate_range(u64 start, u64 end, bool validate, const struct snp_pvalidate_ops *ops,
			 struct snp_pvalidate_stats *st);

/* The platform, after boot/ found SEV_STATUS bit 2. */
const struct cc_platform *snp_platform(u32 cbit);
/* #VC handler; the console waits in memory until the GHCB is up. */
void snp_setup_early(void);
/* The kernel's own GHCB, once its page tables are live. */
void snp_setup_ghcb(u64 page);
/* The #VC handler itself (test cases call it through trap_dispatch). */
bool snp_vc(struct trap_frame *f);

#endif
