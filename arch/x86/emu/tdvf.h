/* SPDX-License-Identifier: MIT */
/* memaccept (test image): the emulated TD firmware's multiprocessor wakeup mailbox and AP loop. */
#ifndef ARCH_X86_EMU_TDVF_H
#define ARCH_X86_EMU_TDVF_H

#include "include/smp.h"
#include "include/types.h"

/*
 * What TDVF leaves a TD's OS for starting its APs, played under plain QEMU
 * (platform=tdx-emu). Before ExitBootServices the stand-in (boot/test/tdx_standin.c)
 * does what edk2 OvmfPkg/TdxDxe/TdxAcpiTable.c AlterAcpiTable and RelocateMailbox do:
 * ACPI NVS pages for the mailbox and the AP loop, and a MADT with a multiprocessor
 * wakeup structure appended. After it, the emulator brings QEMU's other vCPUs into
 * that loop (emu_tdvf_start_aps); they then poll the mailbox as TDVF's
 * AsmRelocateApMailBoxLoop (OvmfPkg/TdxDxe/X64/ApRunLoop.nasm) does.
 */

/* The loop area, one EfiACPIMemoryNVS allocation below 4 GiB (RelocateMailbox: the
 * mailbox page first, then the loop): */
enum {
	TDVF_PAGE_MAILBOX,	/* the mailbox (ACPI 6.4 section 5.2.12.19) */
	TDVF_PAGE_GDT,		/* TDVF's mailbox GDT (TdxAcpiTable.c mGdtEntries) */
	TDVF_PAGE_PML4,		/* identity map of the first 4 GiB, 2 MiB pages, as TDVF's: */
	TDVF_PAGE_PDPT,		/* emu_tdvf_identity_tables lays them out in this order */
	TDVF_PAGE_PD,		/* four of them */
	/* With five-level paging (emu_fault=la57): a PML5 over that PML4. */
	TDVF_PAGE_PML5 = TDVF_PAGE_PD + 4,
	/*
	 * The emulator's loop is C and needs a stack per AP (4 KiB each): TDVF_PAGES(naps) in
	 * all. TDVF's loop uses none, and at the jump to the OS every AP gets ap_rsp.
	 */
	TDVF_PAGE_STACKS,
};
#define TDVF_PAGES(naps) (TDVF_PAGE_STACKS + (naps))

/*
 * The stack pointer every TDVF AP has when it jumps to the OS: its SEC mailbox,
 * PcdOvmfSecGhcbBackupBase 0x80C000 (OvmfPkg/IntelTdx/IntelTdxX64.fdf), which its SEC
 * loop keeps in RSP (OvmfPkg/IntelTdx/Sec/X64/SecEntry.nasm, ParkAp) and its relocated
 * loop (OvmfPkg/TdxDxe/X64/ApRunLoop.nasm) never changes: one stack, shared by all. TDVF
 * reserves the page below it (its work area, PcdOvmfWorkAreaBase) and the mailbox page
 * as EfiACPIMemoryNVS (OvmfPkg/Library/PlatformInitLib/IntelTdx.c,
 * PlatformTdxPublishRamRegions).
 */
#define TDVF_AP_RSP 0x80c000ULL
#define TDVF_AP_STACK_PAGES 2		/* [TDVF_AP_RSP - 4 KiB, TDVF_AP_RSP + 4 KiB) */
/*
 * How much of that stack the emulator fills with a pattern before the OS wakes the APs
 * and checks at the end: the OS must never write it (tdvf_ap_stack_written). The top
 * half page: the bottom of TDVF's work area holds its own data.
 */
#define TDVF_AP_STACK_CHECK 2048
#define TDVF_AP_STACK_PATTERN 0xa5

struct emu_tdvf {
	u64 area;		/* the loop area; 0: no wakeup structure was installed */
	u64 mailbox;		/* the real mailbox (area + TDVF_PAGE_MAILBOX) */
	u64 sipi_page;		/* below 1 MiB, ACPI NVS: where the emulator's INIT-SIPI lands */
	u64 ap_rsp;		/* RSP of every AP at the jump to the OS (TDVF_AP_RSP, or see the stand-in) */
	u32 bsp_apic_id;
	u32 naps;
	u32 ap_ids[MAX_CPUS];	/* the MADT's other enabled CPUs */
	u32 in_loop;		/* APs polling the mailbox */
	u64 old_tables_sum;	/* tdvf_old_ap_tables: checksum of those tables when built; 0: none */
};

/* The mailbox's ApicId as TDVF initialises it (TdxCommondefs.inc MailboxApicIdInvalid). */
#define TDVF_MAILBOX_APIC_ID_INVALID 0xffffffffu

extern struct emu_tdvf emu_tdvf;

/* After ExitBootServices (emu_setup_model): INIT-SIPI the APs into the mailbox loop. */
void emu_tdvf_start_aps(void);
/* Identity tables for the first 4 GiB in 2 MiB pages at base: PML4, PDPT, four PDs. */
void emu_tdvf_identity_tables(u64 base);
/*
 * The emulator's summary: how many bytes of the APs' shared firmware stack the OS wrote;
 * whether tdvf_old_ap_tables's page tables are as it built them.
 */
void emu_tdvf_report(void);
/* TDG.VP.INFO R8: the TD's vCPUs (QEMU's, as the emulated host knows them). */
u32 emu_tdvf_vcpus(void);

#endif
