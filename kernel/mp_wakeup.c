/* SPDX-License-Identifier: MIT */
/* memaccept: checks of the MADT multiprocessor wakeup mailbox before the kernel writes to it. */
#include "kernel/mp_wakeup.h"

/* Versions 0 and 1 (include/mp_wakeup.h) share the mailbox layout. *//* struct mem_range efi_type when merged descriptors had different types (mm/memmap.h). */
#define EFI_TYPE_MIXED 0xffffffffu

const char *mp_wakeup_problem(const struct acpi_facts *a, const struct memmap *m)
{
	u64 mb = a->mp_wakeup_mailbox;

	if (a->madt != ACPI_OK)
		return "no usable MADT";
	if (!a->mp_wakeup)
		return "the MADT has no multiprocessor wakeup structure (type 0x10)";
	if (a->mp_wakeup_version > MP_WAKEUP_VERSION_MAX)
		return "unknown multiprocessor wakeup mailbox version";
	if (!mb)
		return "the wakeup mailbox address is 0";
	if (mb & (MP_MAILBOX_SIZE - 1))
		return "the wakeup mailbox is not 4 KiB aligned";
	if (mb + MP_MAILBOX_SIZE < mb)
		return "the wakeup mailbox address wraps around";
	for (unsigned i = 0; i < m->nranges; i++) {
		const struct mem_range *r = &m->ranges[i];

		if (mb < r->start || mb >= r->end)
			continue;
		if (r->kind != RANGE_ACPI || mb + MP_MAILBOX_SIZE > r->end)
			return "the wakeup mailbox is not in ACPI NVS memory";
		if (r->efi_type != EFI_ACPI_MEMORY_NVS && r->efi_type != EFI_TYPE_MIXED)
			return "the wakeup mailbox is in ACPI reclaimable memory, not ACPI NVS";
		return NULL;
	}
	return "the wakeup mailbox is outside the memory map";
}
