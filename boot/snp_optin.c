/* SPDX-License-Identifier: MIT */
/* memaccept: opting in to unaccepted memory on SEV-SNP (OVMF's SEV memory acceptance protocol). */
#include "boot/boot.h"
#include "drivers/console.h"

/*
 * edk2 OvmfPkg/Include/Protocol/SevMemoryAcceptance.h (stable202302): GUID
 * c5a010fe-38a7-4531-8a4a-0500d2fd1649, one member AllowUnacceptedMemory(This). Without
 * this call OVMF accepts all memory in a before-ExitBootServices event, which is slow
 * and changes the memory map inside ExitBootServices (hence the retry there).
 */
#define SEV_MEMORY_ACCEPTANCE_GUID \
	{ 0xc5a010fe, 0x38a7, 0x4531, { 0x8a, 0x4a, 0x05, 0x00, 0xd2, 0xfd, 0x16, 0x49 } }

struct sev_memory_acceptance_protocol {
	EFI_STATUS (EFIAPI *allow_unaccepted_memory)(struct sev_memory_acceptance_protocol *self);
};

u32 boot_snp_opt_in(EFI_SYSTEM_TABLE *st)
{
	EFI_GUID guid = SEV_MEMORY_ACCEPTANCE_GUID;
	struct sev_memory_acceptance_protocol *proto = NULL;
	EFI_STATUS status;

	status = st->BootServices->LocateProtocol(&guid, NULL, (void **)&proto);
	if (EFI_ERROR(status) || !proto) {
		kprintf("boot: SEV-SNP guest, but the firmware has no memory acceptance protocol: "
			"it will accept all memory during ExitBootServices\n");
		return SNP_PROTOCOL_ABSENT;
	}
	status = proto->allow_unaccepted_memory(proto);
	if (EFI_ERROR(status)) {
		kprintf("boot: AllowUnacceptedMemory failed (status %#llx): the firmware will accept "
			"all memory itself\n", (unsigned long long)status);
		return SNP_PROTOCOL_FAILED;
	}
	kprintf("boot: AllowUnacceptedMemory called: memory above what OVMF needs stays unaccepted\n");
	return SNP_PROTOCOL_CALLED;
}
