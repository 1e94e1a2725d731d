/* SPDX-License-Identifier: MIT */
/* memaccept: the ACPI multiprocessor wakeup structure and mailbox (constants only: kernel, boot/ and the emulator). */
#ifndef INCLUDE_MP_WAKEUP_H
#define INCLUDE_MP_WAKEUP_H

/*
 * MADT entry type 0x10 (ACPI 6.4 section 5.2.12.19): type u8, length u8, MailBoxVersion
 * u16 at 2, reserved u32, MailBoxAddress u64 at 8; 16 bytes, version 0. ACPI 6.6 appends
 * ResetVector u64 at 16: 24 bytes, version 1 (what TDVF builds, edk2
 * OvmfPkg/TdxDxe/TdxAcpiTable.c AlterAcpiTable).
 */
#define MP_WAKEUP_OFF_VERSION 2
#define MP_WAKEUP_OFF_MAILBOX 8
#define MP_WAKEUP_LEN_V0 16
#define MP_WAKEUP_LEN_V1 24
#define MP_WAKEUP_VERSION_MAX 1

/*
 * The mailbox: 4 KiB aligned, in ACPI NVS. Command u16 at 0 (0 noop, 1 wakeup; the
 * firmware writes 0 back to acknowledge), ApicId u32 at 4, WakeupVector u64 at 8.
 */
#define MP_MAILBOX_SIZE 4096
#define MP_MAILBOX_OFF_COMMAND 0
#define MP_MAILBOX_OFF_APIC_ID 4
#define MP_MAILBOX_OFF_VECTOR 8
#define MP_MAILBOX_CMD_NOOP 0
#define MP_MAILBOX_CMD_WAKEUP 1

#endif
