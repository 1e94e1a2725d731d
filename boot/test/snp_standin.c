/* SPDX-License-Identifier: MIT */
/* memaccept (test image): a stand-in for OVMF's SEV memory acceptance protocol under platform=snp-emu. */
#include "arch/x86/emu/emu.h"
#include "arch/x86/sev/svsm.h"
#include "boot/boot.h"
#include "drivers/console.h"
#include "lib/string.h"

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

/*
 * emu_svsm=1 / absent: the CC blob configuration table a firmware under an SVSM
 * installs, and the secrets page it names (layouts in arch/x86/sev/svsm.h). Four pages
 * of reserved memory: the blob, the secrets page, the SVSM's calling area and one page
 * standing for the SVSM's own memory (svsm_base/svsm_size; the emulated SVSM runs in
 * the emulator, not there). emu_svsm=absent: the same blob, with svsm_size 0.
 * boot/snp_svsm.c then reads it exactly as it reads real firmware's.
 */
enum { CC_PAGE_BLOB, CC_PAGE_SECRETS, CC_PAGE_CAA, CC_PAGE_SVSM, CC_PAGES };
#define EMU_SVSM_CORE_VERSION 1	/* COCONUT core.rs CORE_PROTOCOL_VERSION_MAX */

static void install_cc_blob(EFI_SYSTEM_TABLE *st)
{
	EFI_GUID guid = EFI_CC_BLOB_GUID;
	EFI_PHYSICAL_ADDRESS base = 0;
	u8 *blob, *secrets;
	u32 magic = CC_BLOB_MAGIC, len = SECRETS_PAGE_SIZE, max_version = EMU_SVSM_CORE_VERSION;
	u64 secrets_pa, caa, svsm_base, svsm_size = PAGE_SIZE;

	if (emu.svsm == EMU_SVSM_NONE)
		return;
	if (EFI_ERROR(st->BootServices->AllocatePages(AllocateAnyPages, EfiReservedMemoryType, CC_PAGES,
						      &base))) {
		kprintf("boot: (test) no memory for the stand-in CC blob\n");
		return;
	}
	memset((void *)(uintptr_t)base, 0, CC_PAGES * PAGE_SIZE);
	blob = (u8 *)(uintptr_t)(base + CC_PAGE_BLOB * PAGE_SIZE);
	secrets_pa = base + CC_PAGE_SECRETS * PAGE_SIZE;
	secrets = (u8 *)(uintptr_t)secrets_pa;
	caa = base + CC_PAGE_CAA * PAGE_SIZE;
	svsm_base = base + CC_PAGE_SVSM * PAGE_SIZE;
	memcpy(blob + CC_BLOB_OFF_MAGIC, &magic, sizeof(magic));
	memcpy(blob + CC_BLOB_OFF_SECRETS_PHYS, &secrets_pa, sizeof(secrets_pa));
	memcpy(blob + CC_BLOB_OFF_SECRETS_LEN, &len, sizeof(len));
	if (emu.svsm == EMU_SVSM_PRESENT) {
		memcpy(secrets + SECRETS_OFF_SVSM_BASE, &svsm_base, sizeof(svsm_base));
		memcpy(secrets + SECRETS_OFF_SVSM_SIZE, &svsm_size, sizeof(svsm_size));
		memcpy(secrets + SECRETS_OFF_SVSM_CAA, &caa, sizeof(caa));
		memcpy(secrets + SECRETS_OFF_SVSM_MAX_VERSION, &max_version, sizeof(max_version));
		secrets[SECRETS_OFF_SVSM_GUEST_VMPL] = (u8)emu.guest_vmpl;
		emu.svsm_caa = caa;
	}
	if (EFI_ERROR(st->BootServices->InstallConfigurationTable(&guid, blob)))
		kprintf("boot: (test) could not install the stand-in CC blob\n");
}

void boot_test_snp_standin(EFI_SYSTEM_TABLE *st, const struct boot_info *bi)
{
	EFI_GUID guid = SEV_MEMORY_ACCEPTANCE_GUID;
	EFI_HANDLE handle = NULL;

	if (bi->config.platform != PLAT_SNP_EMU)
		return;
	sys = st;
	install_cc_blob(st);
	/* boot_emulator_select parsed emu_fault=; taking a fault counts it as fired. */
	fail = emu_fault_take(&emu.faults, FAULT_OPTIN_FAIL, 0, 0) != NULL;
	active = true;
	if (emu_fault_take(&emu.faults, FAULT_OPTIN_ABSENT, 0, 0))
		return;
	if (EFI_ERROR(st->BootServices->InstallProtocolInterface(&handle, &guid, EFI_NATIVE_INTERFACE,
								 &standin)))
		kprintf("boot: (test) could not install the stand-in SNP opt-in protocol\n");
}
