/* SPDX-License-Identifier: MIT */
/* memaccept: the ACPI PM timer's port and width, read from a FADT that the ACPI walk has checked. */
#include "arch/x86/acpi.h"
#include "lib/string.h"

/* The FADT's layout: ACPI specification 6.5 section 5.2.9, table 5.9. */
#define FADT_OFF_PM_TMR_BLK 76
#define FADT_OFF_PM_TMR_LEN 91
#define FADT_OFF_FLAGS 112
#define FADT_FLAG_TMR_VAL_EXT (1u << 8)
#define FADT_OFF_X_PM_TMR_BLK 208	/* a 12-byte Generic Address Structure (5.2.3.2) */
#define GAS_LEN 12
#define GAS_SPACE_SYSTEM_IO 1
#define PM_TMR_LEN 4			/* PM_TMR_LEN must be 4 when a timer is present */

static u32 rd32(const u8 *p)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static u64 rd64(const u8 *p)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

enum acpi_pm_status acpi_fadt_pm_timer(const u8 *f, u32 len, struct acpi_pm_timer *out)
{
	u64 port = 0;

	memset(out, 0, sizeof(*out));
	if (len < FADT_OFF_FLAGS + 4)
		return ACPI_PM_NO_TIMER;
	/* ACPI 6.5 table 5.9: X_PM_TMR_BLK wins when it is present and non-zero. */
	if (len >= FADT_OFF_X_PM_TMR_BLK + GAS_LEN) {
		const u8 *gas = f + FADT_OFF_X_PM_TMR_BLK;
		u64 addr = rd64(gas + 4);

		if (addr && gas[0] == GAS_SPACE_SYSTEM_IO) {
			port = addr;
			out->from_x_field = 1;
		}
	}
	if (!port) {
		port = rd32(f + FADT_OFF_PM_TMR_BLK);
		out->from_x_field = 0;
		if (port && f[FADT_OFF_PM_TMR_LEN] != PM_TMR_LEN)
			return ACPI_PM_NO_TIMER;
	}
	/* Zero means no timer (hardware-reduced ACPI); an I/O port has 16 bits. */
	if (!port || port > 0xfffc)
		return ACPI_PM_NO_TIMER;
	out->port = (u16)port;
	out->bits = rd32(f + FADT_OFF_FLAGS) & FADT_FLAG_TMR_VAL_EXT ? 32 : 24;
	return ACPI_PM_OK;
}

const char *acpi_pm_status_name(enum acpi_pm_status s)
{
	static const char *const names[ACPI_PM_STATUS_COUNT] = {
		[ACPI_PM_OK] = "ok",
		[ACPI_PM_NO_RSDP] = "no valid RSDP",
		[ACPI_PM_BAD_ROOT] = "no valid XSDT/RSDT",
		[ACPI_PM_NO_FADT] = "no valid FADT",
		[ACPI_PM_NO_TIMER] = "the FADT declares no PM timer",
		[ACPI_PM_STUCK] = "the PM timer does not count",
		[ACPI_PM_NOT_READ] = "not read",
	};

	return s < ACPI_PM_STATUS_COUNT ? names[s] : "?";
}
