/* SPDX-License-Identifier: MIT */
/* memaccept: opting in to unaccepted memory on SEV-SNP (OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL). */
#include "boot/boot.h"
#include "drivers/console.h"

u32 boot_snp_opt_in(EFI_SYSTEM_TABLE *st)
{
	EFI_GUID guid = OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL_GUID;
	struct ovmf_sev_memory_acceptance_protocol *proto = NULL;
	EFI_STATUS status;

	status = st->BootServices->LocateProtocol(&guid, NULL, (void **)&proto);
	if (EFI_ERROR(status) || !proto) {
		kprintf("boot: SEV-SNP guest, but the firmware has no OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL: "
			"it accepts all memory itself, before or during ExitBootServices\n");
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
