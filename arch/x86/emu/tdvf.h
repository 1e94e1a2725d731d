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
	TDVF_PAGE_STACKS = TDVF_PAGE_PD + 4,	/* one 4 KiB stack per AP: TDVF_PAGES(naps) in all */
};
#define TDVF_PAGES(naps) (TDVF_PAGE_STACKS + (naps))

struct emu_tdvf {
	u64 area;		/* the loop area; 0: no wakeup structure was installed */
	u64 mailbox;		/* the real mailbox (area + TDVF_PAGE_MAILBOX) */
	u64 sipi_page;		/* below 1 MiB, ACPI NVS: where the emulator's INIT-SIPI lands */
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
/* The emulator's summary: whether tdvf_old_ap_tables's page tables are as it built them. */
void emu_tdvf_report(void);
/* TDG.VP.INFO R8: the TD's vCPUs (1 + the APs the firmware knows of). */
u32 emu_tdvf_vcpus(void);

#endif
