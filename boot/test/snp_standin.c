/* SPDX-License-Identifier: MIT */
/* memaccept (test image): a stand-in for OVMF's SEV memory acceptance protocol under platform=snp-emu. */
#include "arch/x86/emu/emu.h"
#include "boot/boot.h"
#include "drivers/console.h"

/*
 * Plain QEMU's OVMF has no SNP, so the test image installs the protocol itself and
 * behaves like OVMF: with the opt-in, memory stays unaccepted; without it (or when it
 * fails, chosen with emu_fault=optin_absent / optin_fail), the firmware accepts
 * everything in a before-ExitBootServices event, which changes the memory map after the
 * guest read it, so the first ExitBootServices call fails. OVMF 2022.11 (Debian 12)
 * does not signal that event group yet (measured: the map did not change), so the
 * stand-in changes the map right before the first ExitBootServices call instead
 * (boot_test_before_ebs): the same stale map key, the same retry.
 */
static EFI_SYSTEM_TABLE *sys;
static bool fail, opted_in, active;

static EFI_STATUS EFIAPI allow(struct sev_memory_acceptance_protocol *self)
{
	(void)self;
	if (fail)
		return EFI_UNSUPPORTED;
	opted_in = true;
	return EFI_SUCCESS;
}

static struct sev_memory_acceptance_protocol standin = { allow };

/* OVMF's before-EBS acceptance, reduced to what the guest can see: a changed map. */
void boot_test_before_ebs(u32 attempt)
{
	EFI_PHYSICAL_ADDRESS page = 0;

	if (!active || opted_in || attempt != 1)
		return;
	sys->BootServices->AllocatePages(AllocateAnyPages, EfiBootServicesData, 1, &page);
}

void boot_test_snp_standin(EFI_SYSTEM_TABLE *st, const struct boot_info *bi)
{
	EFI_GUID guid = SEV_MEMORY_ACCEPTANCE_GUID;
	EFI_HANDLE handle = NULL;

	if (bi->config.platform != PLAT_SNP_EMU)
		return;
	sys = st;
	/* boot_emulator_select parsed emu_fault=; taking a fault counts it as fired. */
	fail = emu_fault_take(&emu.faults, FAULT_OPTIN_FAIL, 0, 0) != NULL;
	active = true;
	if (emu_fault_take(&emu.faults, FAULT_OPTIN_ABSENT, 0, 0))
		return;
	if (EFI_ERROR(st->BootServices->InstallProtocolInterface(&handle, &guid, EFI_NATIVE_INTERFACE,
								 &standin)))
		kprintf("boot: (test) could not install the stand-in SNP opt-in protocol\n");
}
