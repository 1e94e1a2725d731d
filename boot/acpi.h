/* SPDX-License-Identifier: MIT */
/* memaccept: the CPUs the ACPI MADT lists, read and validated before ExitBootServices (no EFI types). */
#ifndef BOOT_ACPI_H
#define BOOT_ACPI_H

#include "include/boot_info.h"

/*
 * Walk RSDP -> XSDT (or RSDT) -> MADT at physical address `rsdp` (identity-mapped) and
 * fill bi->smp: every enabled local APIC / x2APIC entry (up to MAX_CPUS IDs; the rest
 * are counted), the local APIC address and the multiprocessor wakeup mailbox. Every
 * length and checksum is checked first; on any failure bi->smp.madt_status says which
 * and no CPU is listed. Never reads outside the lengths the tables declare, and never
 * more than ACPI_TABLE_MAX bytes of one table.
 */
void acpi_read_madt(u64 rsdp, struct boot_info *bi);
const char *madt_status_name(u32 status);

#endif
