/* SPDX-License-Identifier: MIT */
/* memaccept (test image): a stand-in for OVMF's SEV memory acceptance protocol under platform=snp-emu. */
#include "arch/x86/emu/faults.h"
#include "boot/boot.h"
#include "drivers/console.h"

/*
 * Plain QEMU's OVMF has no SNP, so the test image installs the protocol itself and
 * behaves like OVMF: with the opt-in, memory stays unaccepted; without it (or when it
 * fails, chosen with emu_fault=optin_absent / optin_fail), the firmware would accept
 * everything in a before-ExitBootServices event, which changes the memory map inside
 * ExitBootServices. The stand-in does the map change part (it allocates a page in that
 * event), so the EBS retry runs exactly where it must on SNP.
 */
#define EVENT_GROUP_BEFORE_EXIT_BOOT_SERVICES \
	{ 0x8be0e274, 0x3970, 0x4b44, { 0x80, 0xc5, 0x1a, 0xb9, 0x50, 0x2f, 0x3b, 0xfc } } /* UEFI 2.8 */

static EFI_SYSTEM_TABLE *sys;
static bool fail, opted_in;
static EFI_EVENT before_ebs;

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
static VOID EFIAPI accept_all_before_ebs(EFI_EVENT event, VOID *ctx)
{
	EFI_PHYSICAL_ADDRESS page = 0;

	(void)ctx;
	if (opted_in)
		return;
	sys->BootServices->AllocatePages(AllocateAnyPages, EfiBootServicesData, 1, &page);
	sys->BootServices->CloseEvent(event);
}

void boot_test_snp_standin(EFI_SYSTEM_TABLE *st, const struct boot_info *bi)
{
	EFI_GUID guid = SEV_MEMORY_ACCEPTANCE_GUID, group = EVENT_GROUP_BEFORE_EXIT_BOOT_SERVICES;
	EFI_HANDLE handle = NULL;
	struct emu_faults faults;
	char err[128];

	if (bi->config.platform != PLAT_SNP_EMU)
		return;
	sys = st;
	if (!emu_faults_parse(bi->config.emu_fault, &faults, err, sizeof(err)))
		faults.n = 0;
	fail = emu_fault_find(&faults, FAULT_OPTIN_FAIL, 0, 0) != NULL;
	if (EFI_ERROR(st->BootServices->CreateEventEx(EVT_NOTIFY_SIGNAL, TPL_CALLBACK, accept_all_before_ebs,
						       NULL, &group, &before_ebs)))
		kprintf("boot: (test) could not create the before-ExitBootServices event\n");
	if (emu_fault_find(&faults, FAULT_OPTIN_ABSENT, 0, 0))
		return;
	if (EFI_ERROR(st->BootServices->InstallProtocolInterface(&handle, &guid, EFI_NATIVE_INTERFACE,
								 &standin)))
		kprintf("boot: (test) could not install the stand-in SNP opt-in protocol\n");
}
