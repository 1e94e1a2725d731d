/* SPDX-License-Identifier: MIT */
/* memaccept: the ACPI PM timer's port and width from the FADT (pure logic, host-tested). */
#ifndef ARCH_X86_ACPI_H
#define ARCH_X86_ACPI_H

#include "include/types.h"

/* The PM timer counts at 3.579545 MHz on every platform (ACPI 6.5 section 4.8.3.3). */
#define ACPI_PM_TIMER_HZ 3579545ULL

enum acpi_pm_status {
	ACPI_PM_OK,
	ACPI_PM_NO_RSDP,	/* no RSDP address, or one the ACPI walk refused */
	ACPI_PM_BAD_ROOT,	/* no XSDT the ACPI walk accepted */
	ACPI_PM_NO_FADT,	/* no FACP entry with a valid header and checksum */
	ACPI_PM_NO_TIMER,	/* the FADT declares no usable PM timer block */
	ACPI_PM_STUCK,		/* found, but it did not count (kernel/clock.c checks) */
	ACPI_PM_NOT_READ,	/* not looked for (the platform declares the frequency) */
	ACPI_PM_STATUS_COUNT,
};

struct acpi_pm_timer {
	u16 port;		/* system I/O port of the 32-bit PM_TMR register */
	u8 bits;		/* 24 or 32 (FADT flag TMR_VAL_EXT) */
	u8 from_x_field;	/* 1: X_PM_TMR_BLK, 0: the 32-bit PM_TMR_BLK */
};

/*
 * The PM timer block of a FADT of len bytes (its header, length and checksum already
 * checked by the ACPI walk, arch/x86/acpi_walk.c): ACPI_PM_OK and *out, or
 * ACPI_PM_NO_TIMER when the table declares none that memaccept can read (hardware-reduced
 * ACPI has none; only a system I/O port of PM_TMR_LEN 4 is used).
 */
enum acpi_pm_status acpi_fadt_pm_timer(const u8 *fadt, u32 len, struct acpi_pm_timer *out);
const char *acpi_pm_status_name(enum acpi_pm_status s);

#endif
