/* SPDX-License-Identifier: MIT */
/* memaccept: the guest's ACPI walk on the real map, fed pointers a hostile firmware could pass. */
#include "include/exit_codes.h"
#include "kernel/conformance.h"
#include "kernel/main.h"
#include "kernel/memory.h"
#include "kernel/testcase.h"
#include "drivers/console.h"
#include "mm/bitmap.h"
#include "mm/accept.h"
#include "mm/page_alloc.h"

/* The local APIC's MMIO page (Intel SDM vol. 3): never ACPI memory. */
#define LAPIC_MMIO 0xfee00000ULL

static const struct mem_range *first_of(u32 kind)
{
	for (unsigned i = 0; i < kernel_memmap.nranges; i++)
		if (kernel_memmap.ranges[i].kind == kind)
			return &kernel_memmap.ranges[i];
	return NULL;
}

/* The end of an ACPI range that is followed by anything the walk may not read. */
static u64 acpi_range_edge(void)
{
	for (unsigned i = 0; i < kernel_memmap.nranges; i++) {
		const struct mem_range *r = &kernel_memmap.ranges[i], *n = r + 1;

		if (r->kind != RANGE_ACPI)
			continue;
		if (i + 1 == kernel_memmap.nranges || n->start != r->end ||
		    (n->kind != RANGE_ACPI && n->kind != RANGE_RUNTIME))
			return r->end;
	}
	return 0;
}

static u32 rsdp_status(u64 rsdp)
{
	struct acpi_facts f;

	conformance_scan_acpi(rsdp, &f);
	kprintf("test: RSDP %#llx: %s\n", rsdp, acpi_status_name(f.rsdp));
	return f.rsdp;
}

TESTCASE(conformance_acpi_hostile, "the ACPI walk refuses RSDP pointers outside ACPI memory "
	 "(free RAM, unaccepted, MMIO, holes, range edges, wrap) without a fault")
{
	const struct boot_info *bi = kernel_boot_info();
	const struct mem_range *usable = first_of(RANGE_USABLE);
	u64 edge = acpi_range_edge(), unit;

	/* The firmware's own pointer works: the checks below are refusals, not a broken reader. */
	CHECK(bi->acpi_rsdp != 0);
	CHECK(rsdp_status(bi->acpi_rsdp) == ACPI_OK);
	CHECK(rsdp_status(0) == ACPI_ABSENT);
	CHECK(usable != NULL);
	CHECK(rsdp_status(usable->start) == ACPI_UNREADABLE);
	CHECK(rsdp_status(LAPIC_MMIO) == ACPI_UNREADABLE);
	CHECK(rsdp_status(1ULL << 46) == ACPI_UNREADABLE);	/* far beyond RAM: a hole */
	CHECK(rsdp_status(~0ULL - 8) == ACPI_UNREADABLE);	/* the range would wrap */
	/* Unaccepted memory is unmapped: reading it would be an exit-4 stray access. */
	CHECK(bitmap_next(palloc_bitmap(), 0, &unit));
	CHECK(rsdp_status(unit + 0x40) == ACPI_UNREADABLE);
	/* An RSDP that starts inside ACPI memory and runs past its end. */
	CHECK(edge != 0);
	CHECK(rsdp_status(edge - 8) == ACPI_UNREADABLE);
	return EXIT_OK;
}
