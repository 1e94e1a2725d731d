/* SPDX-License-Identifier: MIT */
/* memaccept: what boot/ hands to kernel_main: plain types only, no EFI types. */
#ifndef INCLUDE_BOOT_INFO_H
#define INCLUDE_BOOT_INFO_H

#include "include/smp.h"
#include "include/types.h"
#include "kernel/cmdline.h"

/* boot/ keeps the raw map in a static buffer of this size: 4096 descriptors of 40 bytes. */
#define BOOT_MAP_BUFFER (4096 * 40)

/* Bump the version whenever a field changes; kernel_main refuses any other version. */
#define BOOT_INFO_VERSION 4

enum cmdline_source {
	CMDLINE_NONE,		/* defaults only */
	CMDLINE_LOAD_OPTIONS,	/* EFI_LOADED_IMAGE_PROTOCOL.LoadOptions */
	CMDLINE_FILE,		/* \memaccept.cfg on the ESP the image came from */
};

enum snp_protocol_status {
	SNP_PROTOCOL_NOT_APPLICABLE,	/* not an SNP guest */
	SNP_PROTOCOL_ABSENT,		/* SNP, but the firmware has no opt-in protocol */
	SNP_PROTOCOL_CALLED,		/* AllowUnacceptedMemory returned success */
	SNP_PROTOCOL_FAILED,		/* AllowUnacceptedMemory returned an error */
};

/* What boot/acpi.c made of the ACPI tables (madt_status_name() has the text). */
enum madt_status {
	MADT_OK,
	MADT_NO_RSDP,
	MADT_BAD_RSDP,
	MADT_BAD_ROOT,
	MADT_NOT_FOUND,
	MADT_BAD_TABLE,
};

/* Pages below 1 MiB reserved before ExitBootServices for the AP start-up trampoline. */
#define TRAMPOLINE_PAGES 4

/* The CPUs the firmware reports, from the ACPI MADT (boot/acpi.c). */
struct boot_smp {
	u64 rsdp;			/* from the EFI configuration table, 0 if none */
	u64 lapic_base;			/* MADT local APIC address (or its override) */
	u64 mp_wakeup_mailbox;		/* MADT multiprocessor wakeup structure (TDX), 0 if none */
	u64 trampoline;			/* TRAMPOLINE_PAGES below 1 MiB, 0 if none could be had */
	u32 madt_status;		/* enum madt_status */
	u32 cpus_reported;		/* enabled local APIC and x2APIC entries */
	u32 cpus_listed;		/* how many of them are in apic_ids (at most MAX_CPUS) */
	u32 reserved;
	u32 apic_ids[MAX_CPUS];
};

enum detected_platform {
	DETECTED_NONE,
	DETECTED_TDX,
	DETECTED_SNP,
};

struct boot_info {
	u32 version;
	u32 size;			/* sizeof(struct boot_info), checked too */

	/* Time: TSC at efi_main entry and its frequency, calibrated against BS->Stall(). */
	u64 tsc_at_entry;
	u64 tsc_hz;
	u64 tsc_hz_cpuid;		/* from CPUID 0x15, 0 when not reported */
	u64 tsc_cal_spread_ppm;		/* spread between repeated calibrations */
	u64 tsc_at_ebs;			/* TSC right after ExitBootServices returned */

	/* Where the firmware loaded us; never reclaimed. */
	u64 image_base;
	u64 image_size;

	/* The command line as read, and what it parsed to. */
	u32 cmdline_source;		/* enum cmdline_source */
	u32 ebs_attempts;		/* ExitBootServices calls, 1 unless the map changed inside */
	char cmdline[CMDLINE_MAX];
	struct config config;

	/*
	 * The final UEFI memory map, raw: descriptors of desc_size bytes (UEFI 2.9 section
	 * 7.2, EFI_MEMORY_DESCRIPTOR), validated by mm/memmap.c, not here.
	 */
	u64 map_addr;
	u64 map_size;
	u64 desc_size;
	u32 desc_version;

	/* Platform facts read before ExitBootServices (CPUID raises #VC on SNP after it). */
	u32 detected;			/* enum detected_platform */
	u32 snp_protocol;		/* enum snp_protocol_status */
	u32 snp_cbit;			/* CPUID 0x8000001F EBX[5:0] */
	u64 sev_status;			/* MSR 0xC0010131 */
	/*
	 * CPU facts the kernel needs, read with CPUID here: after ExitBootServices an SNP
	 * guest cannot execute CPUID until its own GHCB exists (it raises #VC).
	 */
	u32 phys_bits;			/* physical address width (checked, 36..52) */
	u32 has_1g_pages;		/* 1 GiB pages can be used in page tables */

	/* EFI runtime ResetSystem(), callable after ExitBootServices with the identity map. */
	u64 efi_reset_system;

	struct boot_smp smp;
};

_Static_assert(sizeof(struct boot_info) == 1472 + 8 + 48 + 4 * MAX_CPUS, "struct boot_info changed: bump BOOT_INFO_VERSION");

#endif
