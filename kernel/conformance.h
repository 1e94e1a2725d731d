/* SPDX-License-Identifier: MIT */
/* memaccept: firmware conformance rules: what the firmware handed over, judged rule by rule. */
#ifndef KERNEL_CONFORMANCE_H
#define KERNEL_CONFORMANCE_H

#include "include/boot_info.h"
#include "arch/x86/acpi_walk.h"

/*
 * The version of the rule set: bumped whenever a rule is added or removed, or changes its
 * level, its meaning or what it is checked against (docs/firmware.md, "Rule set versions").
 * A rule keeps its ID for as long as its meaning holds; a new meaning gets a new ID.
 */
#define CONFORMANCE_RULE_SET 4

enum verdict {
	VERDICT_PASS,
	VERDICT_WARN,	/* a SHOULD rule is not met */
	VERDICT_FAIL,	/* a MUST rule is not met */
	VERDICT_NA,	/* the rule does not apply to this platform or this map */
	VERDICT_INFO,	/* an INFO rule: a fact reported, never judged */
	VERDICT_COUNT,
};

enum rule_level {
	LEVEL_MUST,	/* a guest like memaccept or Linux breaks, or is put at risk, without it */
	LEVEL_SHOULD,	/* survivable, but slower or fragile for some guest */
	LEVEL_INFO,	/* a fact about the firmware, not a requirement */
	LEVEL_COUNT,
};

/* One rule, independent of any boot: the registry (kernel/conformance.c) holds them all. */
struct conformance_rule {
	const char *id;		/* stable, e.g. "map.overlap" */
	u32 level;		/* enum rule_level */
	bool own;		/* memaccept's own rule: no specification or reference OS requires it */
	const char *source;	/* pinned: document and revision, or file and function */
	const char *action;	/* what the firmware should do when the rule is not met */
};

/* The Linux unaccepted memory table (Linux include/linux/efi.h, struct efi_unaccepted_memory). */
struct linux_unaccepted_facts {
	bool present;
	bool readable;		/* header and bitmap in memory the guest may read (ACPI, runtime) */
	u64 addr;
	u32 version;
	u32 unit_size;
	u64 phys_base;
	u64 size;		/* bitmap bytes */
	const u8 *bitmap;	/* readable: size bytes */
};

/* Everything the rules look at; filled from struct boot_info and the ACPI walk. */
struct conformance_input {
	/* The final memory map, raw (UEFI 2.9 section 7.2). */
	const void *map;
	u64 map_size;
	u64 desc_size;
	u32 desc_version;
	u32 map_handshake;		/* enum map_handshake | bytes over << 8 (boot_info.h) */

	u32 platform;			/* enum detected_platform */
	u32 snp_protocol;		/* enum snp_protocol_status */
	const char *fw_vendor;		/* EFI FirmwareVendor (NULL: not known) */
	bool svsm;			/* SEV-SNP under an SVSM */
	u64 svsm_caa, svsm_base, svsm_size;	/* from the secrets page (0: none) */
	/* SEV-SNP: the GHCB MSR at hand-over (the firmware's GHCB GPA, or a protocol value). */
	bool fw_ghcb_known;
	u64 fw_ghcb_msr;

	u32 ebs_attempts;
	u64 ebs_last_call_us;		/* the ExitBootServices call that succeeded */
	u64 ebs_total_us;		/* first GetMemoryMap of the EBS loop to success: every call */
	/* The first map of the EBS loop (0 descriptors: not known). */
	u32 ebs_first_desc;
	u32 ebs_first_unacc_desc;
	u64 ebs_first_unacc_bytes;
	u64 ebs_first_unacc_hash;	/* lib/hash.h hash_range summed over its type 15 ranges */
	u64 ebs_first_unacc_lo, ebs_first_unacc_hi;	/* its type 15 span (lo >= hi: none) */

	u64 tsc_at_entry;		/* TSC at efi_main */
	u64 tsc_hz;

	u32 phys_bits;			/* CPUID 0x80000008 EAX[7:0] (0: not known) */
	u64 tdx_shared_bit;		/* TDX: 1 << (GPAW - 1) (0: not known) */

	/* SEV-SNP: the pages the CC blob names (0: none). */
	u64 cc_secrets, cc_cpuid;
	u32 cc_secrets_len, cc_cpuid_len;

	/*
	 * The accepted-memory probe (kernel/conformance_run.c): the first and last page of
	 * each RAM descriptor other than type 15 (every page with probe_full), asked of the
	 * platform. probe_none: why there was
	 * no probe (NULL if there was).
	 */
	const char *probe_none;
	bool probe_full;		/* conformance_probe=full: every page, not the edges */
	u32 probe_descs;		/* descriptors with an edge page probed */
	u32 probe_early_descs;		/* ... of them before the early allocator used them */
	u32 probe_kept_out;		/* pages found not accepted there, kept out of use */
	u32 probed, probe_not_accepted, probe_unknown;
	u64 probe_first_bad;

	/*
	 * The unaccepted-memory probe (kernel/conformance_run.c): the lowest unit still
	 * unaccepted of each unaccepted range, accepted page by page, each page asked of the
	 * platform. unacc_probe_none: why there was no probe (NULL if there was).
	 */
	const char *unacc_probe_none;
	u32 unacc_ranges;		/* unaccepted ranges of the kernel's map */
	u32 unacc_ranges_probed;	/* ... with a unit probed */
	u32 unacc_ranges_fake;		/* ... of those, made unaccepted by fake_unaccepted_start */
	bool unacc_full;		/* conformance_probe=full: every whole unit, not the lowest */
	u32 unacc_units;		/* units probed */
	u32 unacc_pages, unacc_pages_accepted, unacc_pages_unknown;
	u64 unacc_first_accepted;

	u32 efi_tables;			/* bit (1 << enum efi_known_table) per table found */
	u32 efi_table_count;		/* all configuration table entries */
	struct linux_unaccepted_facts lut;

	struct acpi_facts acpi;
	/* Why the kernel would not use the wakeup mailbox (kernel/mp_wakeup.c), NULL if it would. */
	const char *mp_wakeup_problem;
};

#define CONFORMANCE_DETAIL_MAX 256
#define CONFORMANCE_MAX_CHECKS 48
/* Descriptors looked at for ordering and overlaps; boot/ holds at most this many. */
#define CONFORMANCE_MAX_DESC 4096

struct conformance_check {
	const struct conformance_rule *r;
	const char *rule;		/* r->id */
	u32 level;			/* r->level */
	u32 verdict;			/* enum verdict */
	const char *source;		/* r->source */
	char detail[CONFORMANCE_DETAIL_MAX];	/* what was seen, and what it means */
};

/*
 * Judge the input. Writes at most `cap` checks into `out` and returns how many it wrote.
 * `scratch` holds CONFORMANCE_MAX_DESC u64 values (for sorting descriptor starts).
 * Pure logic: the host tests feed it crafted maps and ACPI facts.
 */
unsigned conformance_evaluate(const struct conformance_input *in, struct conformance_check *out,
			      unsigned cap, u64 *scratch);

/*
 * The map rules alone (map.* and unaccepted.*), in the order conformance_evaluate emits
 * them, with the same verdicts: what the host's offline judge (tools/judge/) can decide
 * from a memory map captured elsewhere. Inputs other than the map, the platform, the
 * address width and the ExitBootServices record are not read.
 */
unsigned conformance_evaluate_map(const struct conformance_input *in,
				  struct conformance_check *out, unsigned cap, u64 *scratch);

/* The registry: every rule the report can emit, in report order. */
const struct conformance_rule *conformance_rules(unsigned *count);

/* workload=conformance (kernel/conformance_run.c): judge, print, emit the event. */
int conformance_run(void);
/*
 * workload=conformance, before the kernel's first boot-time allocation: every descriptor
 * the early allocator takes memory from is probed (accepted.probe) before it hands any out.
 */
void conformance_probe_early(const struct boot_info *bi);
/* The guest's ACPI walk from rsdp, reading only ACPI and runtime memory of the final map. */
void conformance_scan_acpi(u64 rsdp, struct acpi_facts *out);

const char *verdict_name(u32 verdict);
const char *level_name(u32 level);
const char *efi_table_name(u32 table);

/*
 * A memory map's type 15 descriptors summed up (how the first map of the ExitBootServices
 * loop is recorded): their count, bytes and lib/hash.h hash_range sum, and their span
 * (lo >= hi: none; a descriptor that wraps is counted but spans nothing).
 */
struct unacc_summary {
	u32 desc;
	u64 bytes, hash, lo, hi;
};
struct unacc_summary conformance_unacc_summary(const u8 *map, u64 ndesc, u64 desc_size);

#endif
