/* SPDX-License-Identifier: MIT */
/* memaccept: firmware conformance rules: what the firmware handed over, judged rule by rule. */
#ifndef KERNEL_CONFORMANCE_H
#define KERNEL_CONFORMANCE_H

#include "include/boot_info.h"
#include "arch/x86/acpi_walk.h"

enum verdict {
	VERDICT_PASS,
	VERDICT_WARN,	/* allowed, or survivable, but not what a CVM guest expects */
	VERDICT_FAIL,	/* breaks a rule a guest relies on */
	VERDICT_NA,	/* the rule does not apply to this platform or this map */
	VERDICT_COUNT,
};

/* Everything the rules look at; filled from struct boot_info and the ACPI walk. */
struct conformance_input {
	/* The final memory map, raw (UEFI 2.9 section 7.2). */
	const void *map;
	u64 map_size;
	u64 desc_size;
	u32 desc_version;

	u32 platform;			/* enum detected_platform */
	u32 snp_protocol;		/* enum snp_protocol_status */

	u32 ebs_attempts;
	u64 ebs_last_call_us;		/* the ExitBootServices call that succeeded */
	u64 ebs_total_us;		/* first GetMemoryMap of the EBS loop to success */

	u64 tsc_at_entry;		/* TSC at efi_main */
	u64 tsc_hz;

	u32 efi_tables;			/* bit (1 << enum efi_known_table) per table found */
	u32 efi_table_count;		/* all configuration table entries */

	struct acpi_facts acpi;
	/* Why the kernel would not use the wakeup mailbox (kernel/mp_wakeup.c), NULL if it would. */
	const char *mp_wakeup_problem;
};

#define CONFORMANCE_DETAIL_MAX 160
#define CONFORMANCE_MAX_CHECKS 32
/* Descriptors looked at for ordering and overlaps; boot/ holds at most this many. */
#define CONFORMANCE_MAX_DESC 4096

struct conformance_check {
	const char *rule;		/* e.g. "map.overlap" */
	u32 verdict;			/* enum verdict */
	const char *source;		/* where the rule comes from: document or file */
	char detail[CONFORMANCE_DETAIL_MAX];	/* what was seen, and what it means */
};

/*
 * Judge the input. Writes at most `cap` checks into `out` and returns how many it wrote.
 * `scratch` holds CONFORMANCE_MAX_DESC u64 values (for sorting descriptor starts).
 * Pure logic: the host tests feed it crafted maps and ACPI facts.
 */
unsigned conformance_evaluate(const struct conformance_input *in, struct conformance_check *out,
			      unsigned cap, u64 *scratch);

/* workload=conformance (kernel/conformance_run.c): judge, print, emit the event. */
int conformance_run(void);
/* The guest's ACPI walk from rsdp, reading only ACPI and runtime memory of the final map. */
void conformance_scan_acpi(u64 rsdp, struct acpi_facts *out);

const char *verdict_name(u32 verdict);
const char *efi_table_name(u32 table);

#endif
