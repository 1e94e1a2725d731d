/* SPDX-License-Identifier: MIT */
/* memaccept: the one bounded walk of the ACPI tables; clock, SMP and conformance all use it. */
#ifndef ARCH_X86_ACPI_WALK_H
#define ARCH_X86_ACPI_WALK_H

#include "arch/x86/acpi.h"
#include "include/smp.h"
#include "include/types.h"

/* What went wrong with one table, or that nothing did. */
enum acpi_status {
	ACPI_OK,
	ACPI_ABSENT,		/* no pointer to it at all */
	ACPI_UNREADABLE,	/* the pointer leads outside memory the firmware reserved for it */
	ACPI_BAD_SIGNATURE,
	ACPI_BAD_LENGTH,	/* shorter than its header, or absurdly long */
	ACPI_BAD_CHECKSUM,
	ACPI_OLD_REVISION,	/* RSDP revision 0: no XSDT (ACPI 1.0) */
	ACPI_BAD_ENTRY,		/* a MADT entry with length 0 or past the table's end */
	ACPI_STATUS_COUNT,
};

#define ACPI_MAX_TABLES 32

struct acpi_facts {
	u64 rsdp_addr;
	u32 rsdp;			/* enum acpi_status */
	u32 rsdp_revision;
	u64 xsdt_addr;
	u32 xsdt;			/* enum acpi_status */
	u32 ntables;			/* XSDT entries */
	char signatures[ACPI_MAX_TABLES][5];	/* of the first ACPI_MAX_TABLES entries, "" if unreadable */
	u64 madt_addr;
	u32 madt;			/* enum acpi_status */
	u32 madt_entries;
	u32 madt_lapics;		/* processor local APIC and x2APIC entries */
	u32 mp_wakeup;			/* multiprocessor wakeup entries (type 0x10) */
	u64 mp_wakeup_mailbox;		/* the first one's mailbox address */
	u32 mp_wakeup_version;
	/* The CPUs, for starting them (kernel/smp.c). */
	u64 lapic_addr;			/* MADT local APIC address, or its 64-bit override */
	u32 cpus_enabled;		/* local APIC / x2APIC entries with the enabled flag */
	u32 cpus_listed;		/* how many of them are in apic_ids (at most MAX_CPUS) */
	u32 apic_ids[MAX_CPUS];		/* in MADT order */
	/* The ACPI PM timer (kernel/clock.c), from the first FADT. */
	u64 fadt_addr;
	u32 fadt;			/* enum acpi_status */
	u32 pm_status;			/* enum acpi_pm_status: ACPI_PM_OK when pm is valid */
	struct acpi_pm_timer pm;
};

/*
 * Copies len bytes at physical address addr into dst. Returns false, touching nothing, if
 * the range is not memory the firmware may keep ACPI tables in: a hostile or broken
 * pointer must lead to a verdict, never to a fault.
 */
struct acpi_reader {
	bool (*read)(void *ctx, u64 addr, void *dst, u64 len);
	void *ctx;
};

/* Walk RSDP -> XSDT -> MADT and FADT. Never trusts a length or pointer before checking it. */
void acpi_scan(const struct acpi_reader *r, u64 rsdp_addr, struct acpi_facts *out);

const char *acpi_status_name(u32 status);

/* ACPI 6.4 section 5.2.12: MADT entry types this walk counts. */
#define MADT_TYPE_LOCAL_APIC 0x00
#define MADT_TYPE_LAPIC_OVERRIDE 0x05
#define MADT_TYPE_LOCAL_X2APIC 0x09
#define MADT_TYPE_MP_WAKEUP 0x10

#endif
