/* SPDX-License-Identifier: MIT */
/* memaccept: boot/ internals (EFI-aware code only). */
#ifndef BOOT_BOOT_H
#define BOOT_BOOT_H

#include <efi.h>
#include "include/boot_info.h"

/*
 * OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL (gOvmfSevMemoryAcceptanceProtocolGuid), edk2
 * OvmfPkg/Include/Protocol/SevMemoryAcceptance.h: GUID
 * c5a010fe-38a7-4531-8a4a-0500d2fd1649, one member AllowUnacceptedMemory(This). OVMF
 * installs it only when SEV-SNP is active (OvmfPkg/AmdSevDxe/AmdSevDxe.c,
 * AmdSevDxeEntryPoint); AllowUnacceptedMemory there clears a flag and always returns
 * EFI_SUCCESS. Without the call OVMF accepts all memory in a handler of the
 * before-ExitBootServices event group (ResolveUnacceptedMemory), which is slow and
 * changes the memory map inside ExitBootServices (hence the retry there).
 */
#define OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL_GUID \
	{ 0xc5a010fe, 0x38a7, 0x4531, { 0x8a, 0x4a, 0x05, 0x00, 0xd2, 0xfd, 0x16, 0x49 } }

/*
 * EFI_CC_BLOB_GUID (Linux include/linux/efi.h; edk2 OvmfPkg/Include/Guid/
 * ConfidentialComputingSevSnpBlob.h): the SEV-SNP CC blob configuration table.
 */
#define EFI_CC_BLOB_GUID \
	{ 0x067b1f5f, 0xcf26, 0x44c5, { 0x85, 0x54, 0x93, 0xd7, 0x77, 0x91, 0x2d, 0x42 } }

struct ovmf_sev_memory_acceptance_protocol {
	EFI_STATUS (EFIAPI *allow_unaccepted_memory)(struct ovmf_sev_memory_acceptance_protocol *self);
};

/* Read the command line into buf; returns enum cmdline_source. */
u32 boot_read_cmdline(EFI_SYSTEM_TABLE *st, EFI_LOADED_IMAGE *li, char *buf, size_t size);
/* OVMF SEV memory acceptance protocol; returns enum snp_protocol_status. */
u32 boot_snp_opt_in(EFI_SYSTEM_TABLE *st);
/* SEV-SNP: the CC blob table and the SVSM fields of its secrets page (boot_info.svsm_*). */
void boot_snp_read_svsm(EFI_SYSTEM_TABLE *st, struct boot_info *bi);
/* Configuration tables, firmware vendor, RSDP: what the conformance report judges. */
void boot_conformance_capture(EFI_SYSTEM_TABLE *st, struct boot_info *bi);
/*
 * The clock (boot/clock_efi.c), chosen once the platform is known: a declared frequency,
 * else the ACPI PM timer when there are ACPI tables (the kernel finds and measures it
 * after `ready`), else EFI Stall(), whose time is left out of every figure.
 */
void boot_clock_choose(EFI_SYSTEM_TABLE *st, struct boot_info *bi);
/* Test image: switch the platform emulator on for platform=tdx-emu/snp-emu. */
#ifdef CONFIG_EMULATOR
void boot_emulator_select(struct boot_info *bi);
/* Test image: the emulated host learns its vCPUs' APIC IDs (once the RSDP is known). */
void boot_emulator_host_vcpus(const struct boot_info *bi);
/* Test image, platform=snp-emu: a stand-in for OVMF's SNP opt-in protocol. */
void boot_test_snp_standin(EFI_SYSTEM_TABLE *st, const struct boot_info *bi);
/* ... and its map change before ExitBootServices when the guest did not opt in. */
void boot_test_before_ebs(u32 attempt);
/* Test image, platform=tdx-emu: TDVF's MADT wakeup structure and mailbox. */
void boot_test_tdx_standin(EFI_SYSTEM_TABLE *st, const struct boot_info *bi);
/* Test image, platform=snp-emu: the host's MADT with emu_fault=madt_add/madt_drop applied. */
void boot_test_snp_madt(EFI_SYSTEM_TABLE *st, const struct boot_info *bi);
/*
 * boot/test/madt_standin.c: install a copy of f's MADT in place of it, the host's
 * madt_add/madt_drop faults applied and extra appended; its address, 0 if none.
 */
struct acpi_facts;
u64 boot_test_madt_install(EFI_SYSTEM_TABLE *st, const struct acpi_facts *f, const u8 *extra,
			   u32 extra_len);
bool boot_test_alloc(EFI_SYSTEM_TABLE *st, EFI_MEMORY_TYPE type, u64 max, u64 pages, u64 *out);
void boot_test_fix_checksum(u8 *table, u32 len);
/* Test image: ExitBootServices succeeded (the emulator and its observer take note). */
void boot_test_after_ebs(void);
#else
static inline void boot_test_after_ebs(void)
{
}
static inline void boot_test_before_ebs(u32 attempt)
{
	(void)attempt;
}
static inline void boot_emulator_select(struct boot_info *bi)
{
	(void)bi;
}
static inline void boot_emulator_host_vcpus(const struct boot_info *bi)
{
	(void)bi;
}
static inline void boot_test_snp_standin(EFI_SYSTEM_TABLE *st, const struct boot_info *bi)
{
	(void)st, (void)bi;
}
static inline void boot_test_tdx_standin(EFI_SYSTEM_TABLE *st, const struct boot_info *bi)
{
	(void)st, (void)bi;
}
static inline void boot_test_snp_madt(EFI_SYSTEM_TABLE *st, const struct boot_info *bi)
{
	(void)st, (void)bi;
}
#endif

void boot_enter_kernel(struct boot_info *bi, void *stack_top, void (*fn)(struct boot_info *));

#endif
