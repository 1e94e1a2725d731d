/* SPDX-License-Identifier: MIT */
/* memaccept: the SVSM Core protocol's PVALIDATE, Create vCPU and Delete vCPU calls, for SEV-SNP guests below VMPL0. */
#ifndef ARCH_X86_SEV_SVSM_H
#define ARCH_X86_SEV_SVSM_H

#include "arch/x86/sev/snp.h"
#include "include/types.h"

/*
 * Secure VM Service Module for SEV-SNP Guests (AMD pub. 58019); layouts as Linux
 * arch/x86/include/asm/sev.h declares them and COCONUT-SVSM kernel/src/protocols/core.rs
 * and errors.rs implement them.
 *
 * The CC blob (EFI configuration table 067b1f5f-cf26-44c5-8554-93d777912d42, edk2
 * OvmfPkg/Include/Guid/ConfidentialComputingSevSnpBlob.h; Linux struct cc_blob_sev_info):
 * magic "AMDE", version, the secrets page and the CPUID page.
 */
#define CC_BLOB_MAGIC 0x45444d41u
#define CC_BLOB_OFF_MAGIC 0x00		/* u32 */
#define CC_BLOB_OFF_VERSION 0x04	/* u16 */
#define CC_BLOB_OFF_SECRETS_PHYS 0x08	/* u64 */
#define CC_BLOB_OFF_SECRETS_LEN 0x10	/* u32 */
#define CC_BLOB_OFF_CPUID_PHYS 0x18	/* u64 */
#define CC_BLOB_OFF_CPUID_LEN 0x20	/* u32 */
#define CC_BLOB_SIZE 0x28

/*
 * The SVSM fields of the SNP secrets page (Linux struct snp_secrets_page; COCONUT
 * kernel/src/sev/secrets_page.rs SecretsPage): after the VMSA tweak bitmap at 0x100.
 * svsm_size 0 means no SVSM.
 */
#define SECRETS_PAGE_SIZE PAGE_SIZE
#define SECRETS_OFF_SVSM_BASE 0x140		/* u64 */
#define SECRETS_OFF_SVSM_SIZE 0x148		/* u64 */
#define SECRETS_OFF_SVSM_CAA 0x150		/* u64: the calling area's GPA */
#define SECRETS_OFF_SVSM_MAX_VERSION 0x158	/* u32 */
#define SECRETS_OFF_SVSM_GUEST_VMPL 0x15c	/* u8 */
/*
 * TSC_FACTOR (u32, after svsm_guest_vmpl and 3 reserved bytes: Linux struct
 * snp_secrets_page tsc_factor): the decrease from the nominal GUEST_TSC_FREQ to the mean
 * TSC frequency, in units of 0.001 % (SNP firmware ABI; Linux SNP_SCALE_TSC_FREQ:
 * freq - freq * factor / 100000).
 */
#define SECRETS_OFF_TSC_FACTOR 0x160

/* Calling area (Linux struct svsm_ca): call_pending, mem_available, 6 reserved, buffer. */
#define SVSM_CAA_CALL_PENDING 0
#define SVSM_CAA_BUFFER 8
#define SVSM_CAA_BUFFER_SIZE (PAGE_SIZE - SVSM_CAA_BUFFER)

/* RAX on entry: protocol in 63:32, call in 31:0. The core protocol is 0. */
#define SVSM_CALL(protocol, call) (((u64)(protocol) << 32) | (u32)(call))
#define SVSM_CORE_PROTOCOL 0
#define SVSM_CORE_REMAP_CA 0
#define SVSM_CORE_PVALIDATE 1
/*
 * Create vCPU (SVSM spec, core protocol call 2; Linux asm/sev.h SVSM_CORE_CREATE_VCPU,
 * COCONUT core.rs core_create_vcpu): RCX = the GPA of the new vCPU's VMSA page (filled
 * by the guest, with VMSA.VMPL = the guest's VMPL), RDX = the GPA of the new vCPU's own
 * calling area, R8[31:0] = its APIC ID. The SVSM checks the page, makes it a VMSA in the
 * RMP (the guest cannot: RMPADJUST of the VMSA attribute needs VMPL0) and records the
 * calling area for that vCPU's later calls.
 */
#define SVSM_CORE_CREATE_VCPU 2
/*
 * Delete vCPU (SVSM spec, core protocol call 3; Linux asm/sev.h SVSM_CORE_DELETE_VCPU,
 * used by snp_set_vmsa's SVSM branch when snp_cleanup_vmsa undoes a VMSA; COCONUT
 * core.rs core_delete_vcpu): RCX = the GPA of a VMSA page Create vCPU made. The SVSM
 * forgets it as that vCPU's VMSA, clears EFER.SVME in it and takes the VMSA attribute
 * away in the RMP, so the page is ordinary guest memory again.
 */
#define SVSM_CORE_DELETE_VCPU 3
/*
 * Query Protocol (core protocol call 6; COCONUT core.rs core_query_protocol): RCX =
 * protocol 63:32 | version 31:0; the SVSM answers in RCX min version 31:0 | max version
 * 63:32 if it supports that version, else 0, and RAX = 0. It touches nothing: the SVSM
 * call round trip workload=probe times.
 */
#define SVSM_CORE_QUERY_PROTOCOL 6
#define SVSM_CORE_VERSION 1

/* RAX on return (SVSM spec, "Result codes"; COCONUT errors.rs SvsmResultCode). */
#define SVSM_SUCCESS 0x00000000ULL
#define SVSM_ERR_INCOMPLETE 0x80000000ULL
#define SVSM_ERR_UNSUPPORTED_PROTOCOL 0x80000001ULL
#define SVSM_ERR_UNSUPPORTED_CALL 0x80000002ULL
#define SVSM_ERR_INVALID_ADDRESS 0x80000003ULL
#define SVSM_ERR_INVALID_FORMAT 0x80000004ULL
#define SVSM_ERR_INVALID_PARAMETER 0x80000005ULL
#define SVSM_ERR_INVALID_REQUEST 0x80000006ULL
#define SVSM_ERR_BUSY 0x80000007ULL
/*
 * SVSM_ERR_BUSY: the SVSM could not take the request now (SVSM spec, "Result codes").
 * Re-sending is the documented reaction; an SVSM that stays busy this often is stuck.
 */
#define SVSM_BUSY_RETRIES 64
/*
 * Protocol-specific results start at 0x80001000; for PVALIDATE the SVSM adds the
 * instruction's own return code (COCONUT errors.rs: SevSnp errors map to
 * PROTOCOL_BASE + code), and 0x10 when PVALIDATE left the RMP unchanged (CF set).
 */
#define SVSM_ERR_PROTOCOL_BASE 0x80001000ULL
#define SVSM_PVALIDATE_FAIL_INPUT (SVSM_ERR_PROTOCOL_BASE + PVALIDATE_FAIL_INPUT)
#define SVSM_PVALIDATE_FAIL_SIZEMISMATCH (SVSM_ERR_PROTOCOL_BASE + PVALIDATE_FAIL_SIZEMISMATCH)
#define SVSM_PVALIDATE_FAIL_UNCHANGED (SVSM_ERR_PROTOCOL_BASE + 0x10)

/*
 * The PVALIDATE request (Linux struct svsm_pvalidate_call / svsm_pvalidate_entry;
 * COCONUT core.rs PValidateRequest): u16 num_entries, u16 cur_index (the SVSM's
 * progress, "next" in COCONUT), 4 reserved bytes, then 8-byte entries: page size 1:0
 * (0 = 4K, 1 = 2M), action 2 (1 = validate), ignore_cf 3, reserved 11:4, GFN 63:12.
 */
#define SVSM_PVAL_HDR 8
#define SVSM_PVAL_MAX_ENTRIES ((SVSM_CAA_BUFFER_SIZE - SVSM_PVAL_HDR) / 8)
#define SVSM_PVAL_ENTRY(pa, size2m, validate) \
	(((u64)(pa) & ~0xfffULL) | ((u64)(validate) << 2) | (u64)(size2m))
#define SVSM_PVAL_ENTRY_2M(e) (((e) & 3) == 1)
#define SVSM_PVAL_ENTRY_SIZE(e) ((e) & 3)
#define SVSM_PVAL_ENTRY_VALIDATE(e) (((e) >> 2) & 1)
#define SVSM_PVAL_ENTRY_IGNORE_CF(e) (((e) >> 3) & 1)
#define SVSM_PVAL_ENTRY_RESERVED(e) (((e) >> 4) & 0xff)
#define SVSM_PVAL_ENTRY_PA(e) ((e) & ~0xfffULL)

struct svsm_pval_req {
	u16 num_entries;
	u16 cur_index;
	u32 reserved;
	u64 entries[SVSM_PVAL_MAX_ENTRIES];
};
_Static_assert(sizeof(struct svsm_pval_req) <= SVSM_CAA_BUFFER_SIZE, "request fits the calling area");

/*
 * PVALIDATE [start, end) through the SVSM: requests of up to SVSM_PVAL_MAX_ENTRIES
 * entries (2 MiB where aligned), built in req (the calling area's buffer, where the
 * SVSM reads them) and each sent with call(req), which makes the call and returns RAX. A 2 MiB
 * entry the SVSM refuses with FAIL_SIZEMISMATCH is redone as 512 4 KiB entries;
 * everything else that is not success is fatal.
 */
struct svsm_pval_ops {
	u64 (*call)(struct svsm_pval_req *req);
	void (*fatal)(u32 condition, const char *what, u64 a, u64 b);
	void (*evict)(u64 va, u64 pages);	/* as for direct PVALIDATE (snp.h) */
};

struct svsm_pval_stats {
	u64 calls;		/* SVSM calls, re-sends included */
	u64 entries;		/* entries sent (counting each once) */
	u64 size_mismatch;	/* 2 MiB entries redone as 4 KiB ones */
	u64 evicted_pages;
};

void svsm_pvalidate_range(u64 start, u64 end, bool validate, struct svsm_pval_req *req,
			  const struct svsm_pval_ops *ops, struct svsm_pval_stats *st);
/* The unaccepted-memory probe below VMPL0: the unit at `unit` validated page by page (svsm.c). */
void svsm_probe_validate_unit(u64 unit, struct svsm_pval_req *req, const struct svsm_pval_ops *ops,
			      struct svsm_pval_stats *st, struct unaccepted_probe *pr);

/*
 * The SVSM's answer (RAX) to Create vCPU, judged. The SVSM spec defines no
 * protocol-specific results for it; COCONUT core_create_vcpu answers with the generic
 * codes (INVALID_ADDRESS for a bad VMSA or calling-area address, INVALID_PARAMETER for an
 * unknown APIC ID or a VMSA it refuses) and, when one of its RMPADJUSTs of the page fails,
 * with that RMPADJUST's result above the protocol base (kernel/src/protocols/errors.rs:
 * SevSnp errors become PROTOCOL_BASE + code): 0x80001001, 0x80001002 or 0x80001006.
 */
enum svsm_create_answer {
	SVSM_CREATE_OK,		/* 0: the page is a VMSA for that APIC ID */
	SVSM_CREATE_BUSY,	/* BUSY or INCOMPLETE: send again (at most SVSM_BUSY_RETRIES times) */
	SVSM_CREATE_REFUSED,	/* 0x80000001-0x80000006, or an RMPADJUST failure: the SVSM
				 * said no; the AP stays stopped */
	SVSM_CREATE_MALFORMED,	/* anything else: no answer the spec allows */
};
enum svsm_create_answer svsm_create_vcpu_answer(u64 rax);

/*
 * The SVSM's answer to Delete vCPU, judged with the same classes. The SVSM spec defines
 * no protocol-specific results for it either; COCONUT core_delete_vcpu answers
 * INVALID_PARAMETER for a page that is not a VMSA Create vCPU registered and in use
 * (PERCPU_VMSAS.unregister) and INVALID_ADDRESS when the RMP change fails; an SVSM
 * without the call answers UNSUPPORTED_CALL. Any of those is a refusal: the page stays
 * a VMSA the guest reports and never reuses.
 */
enum svsm_create_answer svsm_delete_vcpu_answer(u64 rax);

#endif
