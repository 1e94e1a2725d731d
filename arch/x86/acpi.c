/* SPDX-License-Identifier: MIT */
/* memaccept: find the ACPI PM timer through the firmware's ACPI tables, checking every length and checksum. */
#include "arch/x86/acpi.h"
#include "lib/string.h"

/*
 * Layouts from the ACPI specification 6.5: RSDP section 5.2.5.3 (checksum over the first
 * 20 bytes, extended checksum over `length` bytes from revision 2 on), the common
 * description header section 5.2.6 (36 bytes), XSDT 5.2.8 (64-bit entries) and RSDT
 * 5.2.7 (32-bit entries), FADT 5.2.9 (table 5.9).
 */
#define RSDP_V1_LEN 20
#define RSDP_V2_LEN 36
#define RSDP_OFF_REVISION 15
#define RSDP_OFF_RSDT 16
#define RSDP_OFF_LENGTH 20
#define RSDP_OFF_XSDT 24
#define SDT_HEADER_LEN 36
#define SDT_OFF_LENGTH 4
#define FADT_OFF_PM_TMR_BLK 76
#define FADT_OFF_PM_TMR_LEN 91
#define FADT_OFF_FLAGS 112
#define FADT_FLAG_TMR_VAL_EXT (1u << 8)
#define FADT_OFF_X_PM_TMR_BLK 208	/* a 12-byte Generic Address Structure (5.2.3.2) */
#define GAS_LEN 12
#define GAS_SPACE_SYSTEM_IO 1
#define PM_TMR_LEN 4			/* PM_TMR_LEN must be 4 when a timer is present */
/* Longer than any real root table or FADT; a larger length is a corrupt or hostile table. */
#define MAX_TABLE_LEN (64 * 1024)
#define MAX_ROOT_ENTRIES 256

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

static bool checksum_ok(const u8 *p, u32 len)
{
	u8 sum = 0;

	for (u32 i = 0; i < len; i++)
		sum = (u8)(sum + p[i]);
	return sum == 0;
}

/* A description table at `addr` with signature `sig`: its length, or 0 when it is not one. */
static u32 table_len(u64 addr, const char *sig)
{
	const u8 *t = (const u8 *)(uintptr_t)addr;
	u32 len;

	if (!addr || memcmp(t, sig, 4))
		return 0;
	len = rd32(t + SDT_OFF_LENGTH);
	if (len < SDT_HEADER_LEN || len > MAX_TABLE_LEN || !checksum_ok(t, len))
		return 0;
	return len;
}

static enum acpi_pm_status fadt_pm_timer(const u8 *f, u32 len, struct acpi_pm_timer *out)
{
	u64 port = 0;

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

enum acpi_pm_status acpi_find_pm_timer(u64 rsdp_addr, struct acpi_pm_timer *out)
{
	const u8 *rsdp = (const u8 *)(uintptr_t)rsdp_addr;
	u64 root;
	u32 entry_size, root_len;

	memset(out, 0, sizeof(*out));
	if (!rsdp_addr || memcmp(rsdp, "RSD PTR ", 8) || !checksum_ok(rsdp, RSDP_V1_LEN))
		return ACPI_PM_NO_RSDP;
	root = rd32(rsdp + RSDP_OFF_RSDT);
	entry_size = 4;
	if (rsdp[RSDP_OFF_REVISION] >= 2) {
		u32 len = rd32(rsdp + RSDP_OFF_LENGTH);

		if (len < RSDP_V2_LEN || len > MAX_TABLE_LEN || !checksum_ok(rsdp, len))
			return ACPI_PM_NO_RSDP;
		if (rd64(rsdp + RSDP_OFF_XSDT)) {
			root = rd64(rsdp + RSDP_OFF_XSDT);
			entry_size = 8;
		}
	}
	root_len = table_len(root, entry_size == 8 ? "XSDT" : "RSDT");
	if (!root_len)
		return ACPI_PM_BAD_ROOT;

	const u8 *r = (const u8 *)(uintptr_t)root;
	u32 n = (root_len - SDT_HEADER_LEN) / entry_size;

	if (n > MAX_ROOT_ENTRIES)
		return ACPI_PM_BAD_ROOT;
	for (u32 i = 0; i < n; i++) {
		const u8 *e = r + SDT_HEADER_LEN + i * entry_size;
		u64 addr = entry_size == 8 ? rd64(e) : rd32(e);
		u32 len = table_len(addr, "FACP");

		if (len)
			return fadt_pm_timer((const u8 *)(uintptr_t)addr, len, out);
	}
	return ACPI_PM_NO_FADT;
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
