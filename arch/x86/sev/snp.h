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
 * SEV_STATUS feature bits (AMD APM vol. 2, 15.34.10; the names of Linux
 * arch/x86/include/asm/msr-index.h MSR_AMD64_SNP_*); the VMSA's SEV_FEATURES are
 * SEV_STATUS >> 2. The features a guest must do something for (Linux
 * arch/x86/boot/compressed/sev.c SNP_FEATURES_IMPL_REQ) are vTOM (3), ReflectVC (4),
 * restricted (5) and alternate injection (6), DebugSwap (7), VMPL supervisor shadow
 * stacks (10), Secure TSC (11), the VMGEXIT parameter (12), VMSA register protection
 * (16), Secure AVIC (18) and every reserved bit (13, 15, 19-22, 24 and up). memaccept
 * has what DebugSwap asks (it uses no debug registers) and what Secure TSC asks of a
 * boot CPU (its clock reads GUEST_TSC_FREQ; it refuses an RDTSC #VC; without the PSP's
 * TSC_INFO message it starts no APs): any other of them ends the guest, as Linux
 * ends it (snp_check_features). PreventHostIBS (8), BTB isolation (9), IBS
 * virtualisation (14), SMT protection (17) and IBPB on entry (23) ask nothing of it.
 */
#define SEV_STATUS_DEBUG_SWAP (1ULL << 7)
#define SEV_STATUS_SNP_SECURE_TSC (1ULL << 11)
#define SNP_FEATURES_IMPL_REQ                                                              \
	((0xfULL << 3) | (1ULL << 7) | (0x7ULL << 10) | (1ULL << 13) | (1ULL << 15) |     \
	 (1ULL << 16) | (0x1fULL << 18) | ~((1ULL << 24) - 1))
#define SNP_FEATURES_PRESENT (SEV_STATUS_DEBUG_SWAP | SEV_STATUS_SNP_SECURE_TSC)
/* The SEV_STATUS bits this guest runs with that memaccept does not support (0: none). */
static inline u64 snp_unsupported_features(u64 sev_status)
{
	return sev_status & SNP_FEATURES_IMPL_REQ & ~SNP_FEATURES_PRESENT;
}

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
/*
 * Run at VMPL (GHCB spec 2.3.1, "SNP Run VMPL Request"; values from Linux
 * arch/x86/include/asm/sev-common.h GHCB_MSR_VMPL_REQ/RESP): the target VMPL in 39:32;
 * the answer carries 0 in 63:32 on success. How a guest below VMPL0 enters its SVSM.
 */
#define GHCB_MSR_VMPL_REQ 0x016
#define GHCB_MSR_VMPL_RESP 0x017
#define GHCB_MSR_VMPL_REQ_LEVEL(vmpl) (((u64)((vmpl) & 0xff) << 32) | GHCB_MSR_VMPL_REQ)
#define GHCB_MSR_HV_FT_REQ 0x080
#define GHCB_MSR_HV_FT_RESP 0x081	/* features in 63:12 */
#define GHCB_MSR_TERM_REQ 0x100		/* reason set 15:12, reason code 23:16 */
#define GHCB_HV_FT_SNP (1ULL << 0)	/* hypervisor supports SEV-SNP (feature bit 0) */
/* Multiple VMPLs (feature bit 5; Linux GHCB_HV_FT_SNP_MULTI_VMPL): what a guest below VMPL0 needs. */
#define GHCB_HV_FT_SNP_MULTI_VMPL (1ULL << 5)
#define GHCB_PROTOCOL_MIN 2		/* SEV-SNP needs GHCB protocol version 2 */
#define GHCB_PROTOCOL_MAX 2

/*
 * Termination reasons (GHCB spec 2.3.1, "Termination Request"): reason set 0 holds the
 * spec's general reasons, and Linux claims set 1 for its own codes (Linux
 * arch/x86/include/asm/sev-common.h SEV_TERM_SET_LINUX). memaccept's codes mean something
 * else, so they go in a set of their own, 0xA ("accept"): a host log that decodes set 1
 * as Linux's would otherwise misread them. Code = (enum fatal_condition << 4) | exit code.
 */
#define GHCB_TERM_SET_GEN 0
#define GHCB_TERM_SET_LINUX 1
#define GHCB_TERM_SET_MEMACCEPT 0xA
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
#define GHCB_XCR0 0x3e8		/* KVM needs it for CPUID leaf 0xD (sev_es_validate_vmgexit) */
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
#define SVM_EXIT_RDTSCP 0x87
#define SVM_EXIT_WBINVD 0x89
#define SVM_EXIT_NPF 0x400		/* nested page fault: MMIO for an SEV-ES guest (#VC 0x400) */
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
#define IOIO_A32 (1ULL << 8)
#define IOIO_A64 (1ULL << 9)
#define IOIO_PORT_SHIFT 16

/* CPUID 0x8000001F (AMD APM vol. 3, appendix E, "Encrypted Memory Capabilities"). */
#define CPUID_SEV_LEAF 0x8000001F
#define CPUID_SEV_EBX_CBIT_MASK 0x3f		/* EBX[5:0]: C-bit position */
#define CPUID_SEV_EBX_COHERENCY_SFW_NO (1u << 31)	/* no cache eviction needed after PVALIDATE */
#define CPUID_XSAVE_LEAF 0xd			/* KVM wants XCR0 in the GHCB for this leaf */
#define CR4_OSXSAVE (1ULL << 18)
#define CACHE_LINE 64

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
/*
 * cur_page (11:0): how many 4 KiB pages of the entry the hypervisor has done. The guest
 * sends 0; a hypervisor that returns in the middle of a 2 MiB entry leaves its progress
 * there and resumes from it when the guest re-issues the request (GHCB spec 4.1.6;
 * KVM snp_begin_psc checks cur_page <= pages in the entry and skips that many).
 */
#define PSC_ENTRY_CUR_PAGE(e) ((e) & 0xfffULL)
#define PSC_ENTRY_PAGES(e) (PSC_ENTRY_2M(e) ? 512ULL : 1ULL)
/*
 * SW_EXITINFO2 after a PSC exit: 0, or an error (GHCB spec 4.1.6: 63:32 set by the
 * hypervisor; values as KVM returns them, Linux asm/sev-common.h VMGEXIT_PSC_ERROR_*).
 */
#define PSC_ERROR_INVALID_HDR ((1ULL << 32) | 1)
#define PSC_ERROR_INVALID_ENTRY ((1ULL << 32) | 2)
#define PSC_ERROR_GENERIC (0x100ULL << 32)

/*
 * An exit the hypervisor refused: SW_EXITINFO1 = 2 and the reason in SW_EXITINFO2 (GHCB
 * spec 4.1; values from Linux asm/sev-common.h, which KVM returns).
 */
#define GHCB_HV_RESP_ISSUE 2
/*
 * SW_EXITINFO1 = 1: the hypervisor asks the guest to take an exception instead, given in
 * SW_EXITINFO2 in EVENTINJ form (GHCB spec 4.1; APM vol. 2 "Event injection": vector
 * 7:0, type 10:8 with 3 = exception, V bit 31). Linux verify_exception_info accepts only
 * a valid #GP or #UD of type exception.
 */
#define GHCB_HV_RESP_EXCEPTION 1
#define EVTINJ_VECTOR(x) ((x) & 0xff)
#define EVTINJ_TYPE(x) (((x) >> 8) & 7)
#define EVTINJ_TYPE_EXCEPTION 3
#define EVTINJ_VALID (1ULL << 31)
#define GHCB_ERR_NOT_REGISTERED 1
#define GHCB_ERR_INVALID_USAGE 2
#define GHCB_ERR_INVALID_SCRATCH_AREA 3
#define GHCB_ERR_MISSING_INPUT 4
#define GHCB_ERR_INVALID_INPUT 5
#define GHCB_ERR_INVALID_EVENT 6

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

/*
 * RMPADJUST (AMD APM vol. 3; bytes F3 0F 01 FE): RAX = VA, RCX = page size, RDX =
 * attributes: target VMPL 7:0, permission mask 15:8, VMSA 16. It may only change the
 * permissions of a numerically higher VMPL than the caller's, so asking for VMPL1 fails
 * with FAIL_PERMISSION unless the guest runs at VMPL0 (Linux arch/x86/boot/compressed/
 * sev.c running_at_vmpl0 uses it that way; attributes 1 = VMPL1, no permissions).
 * Results as COCONUT-SVSM kernel/src/sev/utils.rs rmp_adjust reads them: 0, FAIL_INPUT 1,
 * FAIL_PERMISSION 2, FAIL_SIZEMISMATCH 6.
 */
#define RMPADJUST_OK 0
#define RMPADJUST_FAIL_INPUT 1
#define RMPADJUST_FAIL_PERMISSION 2
#define RMPADJUST_FAIL_SIZEMISMATCH 6
#define RMPADJUST_TARGET_VMPL1 1ULL

/* snp_insn.asm */
u32 snp_pvalidate(u64 va, u32 size, u32 validate, bool *no_update);
void snp_vmgexit(void);
u32 snp_rmpadjust(u64 va, u32 size, u64 attrs);
/* VMGEXIT with RAX, RCX, RDX, R8 loaded (an SVSM call); returns RAX afterwards. */
u64 snp_svsm_vmgexit(u64 rax, u64 rcx, u64 rdx, u64 r8);

/*
 * Page State Change batching, separate from the GHCB so host tests can mock the exit:
 * exit(desc) copies desc into the shared buffer, makes the PSC exit, copies the header
 * back, and returns SW_EXITINFO2.
 */
struct snp_psc_ops {
	/* exit(desc, n) copies the header and entries back too (the hypervisor's cur_page). */
	u64 (*exit)(struct psc_desc *desc, unsigned nentries);
	void (*fatal)(u32 condition, const char *what, u64 a, u64 b);
	/*
	 * Optional: the first 2 MiB unit at or after `from` that is still unaccepted and
	 * about to be accepted (eager), false if none. Such units fill the spare entries of
	 * a range's last request, so that the requests stay full across the caller's runs
	 * and across holes in the memory map (see snp_psc_range).
	 */
	bool (*ahead)(u64 from, u64 *unit);
};

struct snp_psc_stats {
	u64 exits;		/* PSC VMGEXITs, re-issues included */
	u64 entries;
	u64 reissues;		/* exits after the hypervisor returned early */
	u64 ahead_units;	/* units converted ahead of their accept */
};

/*
 * Units already made private ahead of their accept: the unaccepted units in [start, end),
 * 2 MiB aligned (what lies between them is not unaccepted memory and is never asked for).
 * The next snp_psc_range skips what lies in it. Owned by the caller (one per accepting CPU).
 */
struct snp_psc_ahead {
	u64 start, end;
};

/*
 * Change [start, end) (4 KiB aligned) to private or shared, 2 MiB entries where aligned.
 * With ops->ahead and a private change, the last request's free entries take the units
 * that follow end while ops->ahead() says they are next; *ahead remembers them.
 */
void snp_psc_range(u64 start, u64 end, u64 op, const struct snp_psc_ops *ops, struct snp_psc_stats *st,
		   struct snp_psc_ahead *ahead);

/*
 * PVALIDATE [start, end) with 2 MiB pages where aligned, falling back to 4 KiB on a size
 * mismatch. After each successful validation, evict(va, pages) (if set) reads the first
 * and last cache line of every 4 KiB page: Linux commit 7b306dfa326f ("x86/sev: Evict
 * cache lines during SNP memory validation") does so because lines cached before the
 * page became private may otherwise stay incoherent; CPUs that set CPUID 0x8000001F
 * EBX[31] (COHERENCY_SFW_NO) do not need it.
 */
struct snp_pvalidate_ops {
	u32 (*pvalidate)(u64 va, u32 size, u32 validate, bool *no_update);
	void (*fatal)(u32 condition, const char *what, u64 a, u64 b);
	void (*evict)(u64 va, u64 pages);
};

struct snp_pvalidate_stats {
	u64 calls_2m, calls_4k, size_mismatch;
	u64 evicted_pages;
};

void snp_pvalidate_range(u64 start, u64 end, bool validate, const struct snp_pvalidate_ops *ops,
			 struct snp_pvalidate_stats *st);
/*
 * The unaccepted-memory probe at VMPL0: the unit at `unit` (already private) validated one
 * 4 KiB page at a time, each page's answer counted in *pr (psc.c says how).
 */
void snp_probe_validate_unit(u64 unit, const struct snp_pvalidate_ops *ops,
			     struct snp_pvalidate_stats *st, struct unaccepted_probe *pr);

/* The platform, after boot/ found SEV_STATUS bit 2 (CPUID 0x8000001F EBX, SVSM facts). */
struct boot_info;
const struct cc_platform *snp_platform(const struct boot_info *bi);
/* #VC handler; the console waits in memory until the GHCB is up. */
void snp_setup_early(void);
/* Terminate on SEV features memaccept does not support (SEV_STATUS, snp.h). */
void snp_check_features(void);
/* The GHCB MSR as the firmware left it at handover (read by snp_check_features), or 0. */
u64 snp_firmware_ghcb_msr(void);
/* The kernel's own GHCB, once its page tables are live. */
void snp_setup_ghcb(u64 page);
/* The #VC handler itself (test cases call it through trap_dispatch). */
bool snp_vc(struct trap_frame *f);

/* Starting the APs (arch/x86/sev/snp_ap.c). */
/* Make a page of accepted memory a GHCB page: shared, mapped without the C-bit, zeroed. */
void snp_ghcb_prepare(u64 page);
/* Register page as the calling CPU's GHCB (MSR protocol) and use it from now on. */
void snp_ghcb_register(u64 page);
/* Did the hypervisor offer AP Creation (feature bit 1)? Below VMPL0? */
bool snp_ap_creation_offered(void);
/* Does this guest run with Secure TSC (SEV_STATUS bit 11)? */
bool snp_secure_tsc(void);
bool snp_below_vmpl0(void);
/*
 * One AP Creation exit for apic_id (create, at our VMPL); the hypervisor's SW_EXITINFO1/2
 * come back, and in *valid (unless NULL) whether it marked them valid: SW_EXITINFO1, and
 * SW_EXITINFO2 as well when SW_EXITINFO1 is not 0 (then SW_EXITINFO2 says why).
 */
void snp_ap_create_exit(u32 apic_id, u64 vmsa_gpa, u64 features, u64 *info1, u64 *info2, bool *valid);
/* AP Destroy (request 2) for apic_id, at our VMPL: the hypervisor stops running that VMSA. */
void snp_ap_destroy_exit(u32 apic_id, u64 vmsa_gpa, u64 features, u64 *info1, u64 *info2, bool *valid);
/* The same with SW_EXITINFO1 as given (test cases: requests a host must refuse). */
void snp_ap_create_exit_raw(u64 request_info1, u64 vmsa_gpa, u64 features, u64 *info1, u64 *info2,
			    bool *valid);
/* The VMPL this guest runs at: 0, or below VMPL0 the one the secrets page names. */
u8 snp_guest_vmpl(void);
/*
 * Below VMPL0: the SVSM's Create vCPU call (svsm.h) from the calling CPU, its RAX back;
 * and the calling area the CPU with per-CPU index cpu uses for its own SVSM calls.
 */
u64 snp_svsm_create_vcpu(u64 vmsa, u64 caa, u32 apic_id);
/* Below VMPL0: the SVSM's Delete vCPU call for a VMSA page Create vCPU made, its RAX back. */
u64 snp_svsm_delete_vcpu(u64 vmsa);
void snp_svsm_set_caa(unsigned cpu, u64 caa);
/*
 * Below VMPL0: one core protocol PVALIDATE call with the request as the caller built it
 * (the test image sends malformed ones), the SVSM's RAX back.
 */
struct svsm_pval_req;
u64 snp_svsm_pvalidate_call(struct svsm_pval_req *req);
/* NULL if the APs can be started with AP Creation here, else why not. */
const char *snp_ap_start_unavailable(void);
struct smp_start;
/* Start s->count APs, one AP Creation each (same contract as smp_arch_start). */
unsigned snp_smp_start(const struct smp_start *s, const char **why);

#endif
