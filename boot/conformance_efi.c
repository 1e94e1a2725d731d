/* SPDX-License-Identifier: MIT */
/* memaccept: what the firmware handed over, captured while boot services are alive. */
#include "boot/boot.h"
#include "drivers/console.h"
#include "lib/string.h"

/*
 * EFI configuration table GUIDs, in enum efi_known_table order. Values as defined in
 * Linux include/linux/efi.h (ACPI_20_TABLE_GUID, ACPI_TABLE_GUID, SMBIOS_TABLE_GUID,
 * SMBIOS3_TABLE_GUID, LINUX_EFI_UNACCEPTED_MEM_TABLE_GUID, EFI_CC_BLOB_GUID,
 * EFI_CC_FINAL_EVENTS_TABLE_GUID, EFI_MEMORY_ATTRIBUTES_TABLE_GUID); the first four and
 * the last are also in the UEFI 2.9 specification section 4.6.
 */
static const EFI_GUID known_tables[EFI_TABLE_COUNT] = {
	[EFI_TABLE_ACPI20] = { 0x8868e871, 0xe4f1, 0x11d3,
			       { 0xbc, 0x22, 0x00, 0x80, 0xc7, 0x3c, 0x88, 0x81 } },
	[EFI_TABLE_ACPI10] = { 0xeb9d2d30, 0x2d88, 0x11d3,
			       { 0x9a, 0x16, 0x00, 0x90, 0x27, 0x3f, 0xc1, 0x4d } },
	[EFI_TABLE_SMBIOS] = { 0xeb9d2d31, 0x2d88, 0x11d3,
			       { 0x9a, 0x16, 0x00, 0x90, 0x27, 0x3f, 0xc1, 0x4d } },
	[EFI_TABLE_SMBIOS3] = { 0xf2fd1544, 0x9794, 0x4a2c,
				{ 0x99, 0x2e, 0xe5, 0xbb, 0xcf, 0x20, 0xe3, 0x94 } },
	[EFI_TABLE_LINUX_UNACCEPTED] = { 0xd5d1de3c, 0x105c, 0x44f9,
					 { 0x9e, 0xa9, 0xbc, 0xef, 0x98, 0x12, 0x00, 0x31 } },
	[EFI_TABLE_CC_BLOB] = { 0x067b1f5f, 0xcf26, 0x44c5,
				{ 0x85, 0x54, 0x93, 0xd7, 0x77, 0x91, 0x2d, 0x42 } },
	[EFI_TABLE_CC_FINAL_EVENTS] = { 0xdd4a4648, 0x2de7, 0x4665,
					{ 0x96, 0x4d, 0x21, 0xd9, 0xef, 0x5f, 0xb4, 0x46 } },
	[EFI_TABLE_MEMORY_ATTRIBUTES] = { 0xdcfa911d, 0x26eb, 0x469f,
					  { 0xa2, 0x20, 0x38, 0xb7, 0xdc, 0x46, 0x12, 0x20 } },
};

/*
 * More entries than this is not a configuration table any firmware builds (OVMF installs
 * about a dozen); stop there rather than walk wherever a broken count leads.
 */
#define EFI_TABLES_MAX 256

void boot_conformance_capture(EFI_SYSTEM_TABLE *st, struct boot_info *bi)
{
	const EFI_CONFIGURATION_TABLE *t = st->ConfigurationTable;
	UINTN n = st->NumberOfTableEntries;
	u64 acpi10 = 0, acpi20 = 0;

	bi->uefi_revision = st->Hdr.Revision;
	bi->fw_revision = st->FirmwareRevision;
	/* CHAR16 to ASCII; anything outside printable ASCII becomes '?'. */
	for (unsigned i = 0; st->FirmwareVendor && i + 1 < sizeof(bi->fw_vendor); i++) {
		CHAR16 c = st->FirmwareVendor[i];

		if (!c)
			break;
		bi->fw_vendor[i] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}

	if (!t)
		n = 0;
	bi->efi_table_count = (u32)MIN(n, (UINTN)UINT32_MAX);
	n = MIN(n, (UINTN)EFI_TABLES_MAX);
	for (UINTN i = 0; i < n; i++) {
		for (u32 k = 0; k < EFI_TABLE_COUNT; k++) {
			if (memcmp(&t[i].VendorGuid, &known_tables[k], sizeof(EFI_GUID)) != 0)
				continue;
			bi->efi_tables |= 1u << k;
			if (k == EFI_TABLE_ACPI20 && !acpi20)
				acpi20 = (u64)(uintptr_t)t[i].VendorTable;
			if (k == EFI_TABLE_ACPI10 && !acpi10)
				acpi10 = (u64)(uintptr_t)t[i].VendorTable;
			if (k == EFI_TABLE_LINUX_UNACCEPTED && !bi->linux_unaccepted_table)
				bi->linux_unaccepted_table = (u64)(uintptr_t)t[i].VendorTable;
		}
	}
	/* UEFI 2.9 section 4.6: the ACPI 2.0 table is the one to use when both exist. */
	bi->acpi_rsdp = acpi20 ? acpi20 : acpi10;
}
