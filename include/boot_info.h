/* SPDX-License-Identifier: MIT */
/* memaccept: what boot/ hands to kernel_main: plain types only, no EFI types. */
#ifndef INCLUDE_BOOT_INFO_H
#define INCLUDE_BOOT_INFO_H

#include "include/types.h"
#include "arch/x86/tsc_cal.h"
#include "kernel/cmdline.h"

/* boot/ keeps the raw map in a static buffer of this size: 4096 descriptors of 40 bytes. */
#define BOOT_MAP_BUFFER (4096 * 40)

/* Bump the version whenever a field changes; kernel_main refuses any other version. */
#define BOOT_INFO_VERSION 11

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

/*
 * Pages below 1 MiB reserved before ExitBootServices for the AP start-up trampoline
 * (arch/x86/trampoline.asm): its code and data, three pages of temporary page tables, and
 * the stack a parked TD AP takes exceptions on.
 */
#define TRAMPOLINE_PAGES 6

/*
 * EFI configuration tables the conformance report looks for (boot/conformance_efi.c holds
 * their GUIDs and where each is defined); bit (1 << n) in boot_info.efi_tables.
 */
enum efi_known_table {
	EFI_TABLE_ACPI20,
	EFI_TABLE_ACPI10,
	EFI_TABLE_SMBIOS,
	EFI_TABLE_SMBIOS3,
	EFI_TABLE_LINUX_UNACCEPTED,
	EFI_TABLE_CC_BLOB,
	EFI_TABLE_CC_FINAL_EVENTS,
	EFI_TABLE_MEMORY_ATTRIBUTES,
	EFI_TABLE_COUNT,
};

#define BOOT_FW_VENDOR_MAX 48

/* Where efi_main's time goes: the TSC at the end of each step (see boot/efi_main.c). */
enum boot_step {
	BOOT_STEP_CONSOLE,	/* console, our own image's protocol */
	BOOT_STEP_CMDLINE,	/* load options or \memaccept.cfg read through the firmware */
	BOOT_STEP_PLATFORM,	/* detection, clock, SNP opt-in */
	BOOT_STEP_CPU_COUNT,	/* the firmware's vCPU count (EFI MP Services) */
	BOOT_STEP_COUNT,	/* then GetMemoryMap and ExitBootServices, ending at tsc_at_ebs */
};

/* SEV-SNP: the CC blob configuration table and the SVSM fields of its secrets page. */
enum snp_cc_blob_status {
	CC_BLOB_NOT_READ,	/* not an SNP guest */
	CC_BLOB_ABSENT,		/* no CC blob configuration table */
	CC_BLOB_BAD,		/* a table, but a wrong magic or secrets page */
	CC_BLOB_FOUND,		/* read: the svsm_* fields are the secrets page's */
};

enum detected_platform {
	DETECTED_NONE,
	DETECTED_TDX,
	DETECTED_SNP,
};

struct boot_info {
	u32 version;
	u32 size;			/* sizeof(struct boot_info), checked too */

	/*
	 * Time. Every figure counts TSC cycles from tsc_at_entry (efi_main's first
	 * instruction, moved later by any EFI Stall() calibration, which the clock does not
	 * count). tsc_hz is known here when the platform declares it or Stall() measured
	 * it; with the PM timer it is 0 and the kernel finds the timer and measures it after
	 * `ready` (kernel/clock.c).
	 */
	u64 tsc_at_entry;
	u64 tsc_hz;
	u64 tsc_at_ebs;			/* TSC right after ExitBootServices returned */
	u64 step_tsc[BOOT_STEP_COUNT];	/* enum boot_step */
	u32 clock_source;		/* enum clock_source */
	u32 clock_error_ppm;		/* of tsc_hz when boot/ set it */
	u64 clock_excluded_cycles;	/* the Stall() calibration, left out of the window */
	u64 declared_hz;		/* what the platform declares, 0 if nothing */
	u32 declared_source;		/* enum clock_source of declared_hz */
	u32 declared_error_ppm;

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
	u32 snp_cpuid_ebx;		/* CPUID 0x8000001F EBX: C-bit in 5:0, COHERENCY_SFW_NO 31 */
	u64 sev_status;			/* MSR 0xC0010131 */
	/*
	 * CPU facts the kernel needs, read with CPUID here: after ExitBootServices an SNP
	 * guest cannot execute CPUID until its own GHCB exists (it raises #VC).
	 */
	u32 phys_bits;			/* physical address width (checked, 36..52) */
	u32 has_1g_pages;		/* 1 GiB pages can be used in page tables */

	/* EFI runtime ResetSystem(), callable after ExitBootServices with the identity map. */
	u64 efi_reset_system;

	/*
	 * What the firmware handed over, for the conformance report (boot/conformance_efi.c):
	 * configuration tables found, the ACPI RSDP, and how ExitBootServices went.
	 */
	u64 tsc_ebs_start;		/* TSC before the first GetMemoryMap of the EBS loop */
	u64 tsc_ebs_call;		/* TSC right before the ExitBootServices call that succeeded */
	u64 acpi_rsdp;			/* ACPI 2.0 table, else ACPI 1.0 table, else 0 */
	u32 efi_tables;			/* bit (1 << enum efi_known_table) per table present */
	u32 efi_table_count;		/* all entries of the configuration table */
	u32 uefi_revision;		/* EFI_SYSTEM_TABLE.Hdr.Revision */
	u32 fw_revision;		/* EFI_SYSTEM_TABLE.FirmwareRevision */
	char fw_vendor[BOOT_FW_VENDOR_MAX];	/* FirmwareVendor, printable ASCII only */

	/* TRAMPOLINE_PAGES below 1 MiB for starting the other vCPUs, 0 if none could be had. */
	u64 smp_trampoline;

	/*
	 * SEV-SNP under an SVSM (boot/snp_svsm.c): the secrets page's SVSM fields, read
	 * through the CC blob before ExitBootServices. svsm_size 0: no SVSM.
	 */
	u32 snp_cc_blob;		/* enum snp_cc_blob_status */
	u32 svsm_guest_vmpl;		/* the VMPL the SVSM runs this guest at */
	u64 svsm_base;
	u64 svsm_size;
	u64 svsm_caa;			/* GPA of the calling area, page aligned (checked) */
	u32 svsm_max_version;		/* highest SVSM core protocol version */
	u32 snp_tsc_factor;		/* the secrets page's TSC_FACTOR (0.001 %), 0 if none */

	/*
	 * Enabled processors by the firmware's EFI MP Services protocol, 0 if it has none
	 * (boot/efi_main.c): 1 lets a normal VM skip the MADT walk inside the window.
	 */
	u32 efi_cpus;
	/*
	 * For the conformance report (boot/efi_main.c, workload=conformance only): the
	 * GetMemoryMap() size handshake, enum map_handshake in bits 7:0 and the bytes the map
	 * exceeded the size the firmware had asked for in bits 31:16 (capped); the type 15
	 * allocation checks, FW_ALLOC15_* in bits 15:8.
	 */
	u32 map_handshake;

	/*
	 * For the conformance report: the first map of the ExitBootServices loop (read after
	 * the SNP opt-in), to judge the retry against Linux's slack and to see whether the
	 * type 15 ranges changed by the final map (boot/efi_main.c, boot_unaccepted_summary).
	 */
	u32 ebs_first_desc;		/* descriptors in the first map */
	u32 ebs_first_unacc_desc;	/* its type 15 descriptors */
	u64 ebs_first_unacc_bytes;
	u64 ebs_first_unacc_hash;	/* order-independent hash of (start, pages, attribute) */
	/* Its type 15 span, [lo, hi) (lo >= hi: none): what Linux's stub sizes its bitmap by. */
	u64 ebs_first_unacc_lo, ebs_first_unacc_hi;
	/* SEV-SNP: the secrets and CPUID pages the CC blob names (boot/snp_svsm.c), 0 if none. */
	u64 cc_secrets;
	u64 cc_cpuid;
	u32 cc_secrets_len;
	u32 cc_cpuid_len;
	/* The Linux unaccepted memory table (LINUX_EFI_UNACCEPTED_MEM_TABLE_GUID), 0 if absent. */
	u64 linux_unaccepted_table;
};

_Static_assert(sizeof(struct boot_info) == 1744, "struct boot_info changed: bump BOOT_INFO_VERSION");

/* Boot services asked for type 15 memory (UEFI 2.9 section 7.2 AllocatePages, AllocatePool). */
#define FW_ALLOC15_CHECKED	(1u << 8)	/* the checks ran */
#define FW_ALLOC15_PAGES	(1u << 9)	/* AllocatePages(AllocateAnyPages, type 15) succeeded */
#define FW_ALLOC15_POOL		(1u << 10)	/* AllocatePool(type 15) succeeded */
#define FW_ALLOC15_ADDR_TRIED	(1u << 11)	/* the map had type 15 to aim AllocateAddress at */
#define FW_ALLOC15_ADDR		(1u << 12)	/* AllocateAddress into type 15 succeeded */

enum map_handshake {
	MAP_HANDSHAKE_NOT_RUN,
	MAP_HANDSHAKE_OK,		/* the map fit the size GetMemoryMap() asked for */
	MAP_HANDSHAKE_TOO_SMALL,	/* the asked-for size was refused as too small again */
	MAP_HANDSHAKE_OVERFLOW,		/* the firmware wrote more than the size it asked for */
};

/*
 * The firmware runs this vCPU alone and no test asked for phantom APs: no trampoline
 * page is reserved (boot/efi_main.c) and, on a normal VM, no MADT is read (kernel/smp.c).
 */
static inline bool boot_one_cpu(const struct boot_info *bi)
{
	return bi->efi_cpus == 1 && !bi->config.smp_phantom;
}

#endif
