/* SPDX-License-Identifier: MIT */
/* memaccept: can the MADT multiprocessor wakeup mailbox be used (pure logic, host-tested)? */
#ifndef KERNEL_MP_WAKEUP_H
#define KERNEL_MP_WAKEUP_H

#include "include/mp_wakeup.h"
#include "include/types.h"
#include "arch/x86/acpi_walk.h"
#include "mm/memmap.h"

/*
 * NULL if the MADT's first multiprocessor wakeup structure gives a mailbox the kernel may
 * write to, else a one-line reason: no usable MADT, no such structure, a mailbox version
 * this code does not know, an address of 0 or not 4 KiB aligned, or a page that is not
 * wholly ACPI NVS memory in the final memory map (ACPI 6.4 requires ACPI NVS; TDVF
 * allocates it as EfiACPIMemoryNVS, edk2 OvmfPkg/TdxDxe/TdxAcpiTable.c RelocateMailbox).
 * Anything else could be memory the kernel hands out, or a page the host shares.
 */
const char *mp_wakeup_problem(const struct acpi_facts *a, const struct memmap *m);

#endif
