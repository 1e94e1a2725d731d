/* SPDX-License-Identifier: MIT */
/* memaccept: RSDP -> XSDT -> MADT: the local APIC IDs of the CPUs (ACPI 6.5 sections 5.2.5-5.2.12). */
#include "boot/acpi.h"
#include "lib/string.h"

/* No table memaccept reads is anywhere near this; a larger length is a corrupt header. */
#define ACPI_TABLE_MAX (1 * MiB)

/* ACPI 6.5 section 5.2.5.3, Root System Description Pointer structure. */
#define RSDP_SIGNATURE "RSD PTR "
#define RSDP_V1_LENGTH 20	/* the part the first checksum covers (ACPI 1.0) */
#define RSDP_OFF_REVISION 15
#define RSDP_OFF_RSDT 16
#define RSDP_OFF_LENGTH 20
#define RSDP_OFF_XSDT 24
#define RSDP_V2_MIN_LENGTH 36

/* ACPI 6.5 section 5.2.6, System Description Table Header: 36 bytes. */
#define SDT_HEADER_LENGTH 36
#define SDT_OFF_LENGTH 4

/* ACPI 6.5 section 5.2.12, MADT: header, then local APIC address (u32) and flags (u32). */
#define MADT_SIGNATURE "APIC"
#define MADT_OFF_LAPIC 36
#define MADT_OFF_ENTRIES 44

/* ACPI 6.5 table 5.45, interrupt controller structure types, and their minimum lengths. */
#define MADT_LOCAL_APIC 0		/* 5.2.12.2: uid u8 @2, APIC ID u8 @3, flags u32 @4 */
#define MADT_LOCAL_APIC_LEN 8
#define MADT_LAPIC_OVERRIDE 5		/* 5.2.12.8: 64-bit local APIC address u64 @4 */
#define MADT_LAPIC_OVERRIDE_LEN 12
#define MADT_LOCAL_X2APIC 9		/* 5.2.12.12: x2APIC ID u32 @4, flags u32 @8 */
#define MADT_LOCAL_X2APIC_LEN 16
#define MADT_MP_WAKEUP 0x10		/* 5.2.12.19: mailbox version u16 @2, address u64 @8 */
#define MADT_MP_WAKEUP_LEN 16
/* Local APIC flags (ACPI 6.5 table 5.47): bit 0 enabled, bit 1 online capable. */
#define LAPIC_ENABLED (1u << 0)

static const char *const status_names[] = {
	[MADT_OK] = "ok",
	[MADT_NO_RSDP] = "no ACPI 2.0 RSDP in the EFI configuration table",
	[MADT_BAD_RSDP] = "RSDP signature, checksum or length is wrong",
	[MADT_BAD_ROOT] = "XSDT/RSDT header, length or checksum is wrong",
	[MADT_NOT_FOUND] = "no MADT in the XSDT/RSDT",
	[MADT_BAD_TABLE] = "MADT length, checksum or an entry length is wrong",
};

const char *madt_status_name(u32 status)
{
	return status < ARRAY_SIZE(status_names) ? status_names[status] : "?";
}

static const u8 *ptr(u64 pa)
{
	return (const u8 *)(uintptr_t)pa;
}

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

/* ACPI checksums: all bytes of the structure add up to zero (mod 256). */
static bool sums_to_zero(const u8 *p, u64 len)
{
	u8 sum = 0;

	for (u64 i = 0; i < len; i++)
		sum = (u8)(sum + p[i]);
	return sum == 0;
}

/* A table header at pa that is sane, of `sig` (NULL: any), with a valid checksum; its length. */
static u32 table_ok(u64 pa, const char *sig)
{
	if (!pa)
		return 0;
	const u8 *t = ptr(pa);
	u32 len = rd32(t + SDT_OFF_LENGTH);

	if (len < SDT_HEADER_LENGTH || len > ACPI_TABLE_MAX || pa + len < pa)
		return 0;
	if (sig && memcmp(t, sig, 4) != 0)
		return 0;
	return sums_to_zero(t, len) ? len : 0;
}

static void add_cpu(struct boot_info *bi, u32 apic_id)
{
	if (bi->smp.cpus_listed < MAX_CPUS)
		bi->smp.apic_ids[bi->smp.cpus_listed++] = apic_id;
	bi->smp.cpus_reported++;
}

static u32 parse_madt(u64 pa, struct boot_info *bi)
{
	u32 len = table_ok(pa, MADT_SIGNATURE);
	const u8 *t = ptr(pa);

	if (len < MADT_OFF_ENTRIES)
		return MADT_BAD_TABLE;
	/* First pass: every entry fits and has at least the length its type needs. */
	for (u32 off = MADT_OFF_ENTRIES; off < len;) {
		u8 type, elen;

		if (len - off < 2)
			return MADT_BAD_TABLE;
		type = t[off];
		elen = t[off + 1];
		if (elen < 2 || elen > len - off)
			return MADT_BAD_TABLE;
		if ((type == MADT_LOCAL_APIC && elen < MADT_LOCAL_APIC_LEN) ||
		    (type == MADT_LAPIC_OVERRIDE && elen < MADT_LAPIC_OVERRIDE_LEN) ||
		    (type == MADT_LOCAL_X2APIC && elen < MADT_LOCAL_X2APIC_LEN) ||
		    (type == MADT_MP_WAKEUP && elen < MADT_MP_WAKEUP_LEN))
			return MADT_BAD_TABLE;
		off += elen;
	}
	bi->smp.lapic_base = rd32(t + MADT_OFF_LAPIC);
	for (u32 off = MADT_OFF_ENTRIES; off < len; off += t[off + 1]) {
		const u8 *e = t + off;

		switch (e[0]) {
		case MADT_LOCAL_APIC:
			if (rd32(e + 4) & LAPIC_ENABLED)
				add_cpu(bi, e[3]);
			break;
		case MADT_LOCAL_X2APIC:
			if (rd32(e + 8) & LAPIC_ENABLED)
				add_cpu(bi, rd32(e + 4));
			break;
		case MADT_LAPIC_OVERRIDE:
			bi->smp.lapic_base = rd64(e + 4);
			break;
		case MADT_MP_WAKEUP:
			bi->smp.mp_wakeup_mailbox = rd64(e + 8);
			break;
		default:
			break;
		}
	}
	return MADT_OK;
}

static u32 read_madt(u64 rsdp, struct boot_info *bi)
{
	const u8 *r = ptr(rsdp);

	if (!rsdp)
		return MADT_NO_RSDP;
	if (memcmp(r, RSDP_SIGNATURE, 8) != 0 || !sums_to_zero(r, RSDP_V1_LENGTH))
		return MADT_BAD_RSDP;
	/* Revision 2 and later carry the XSDT, with its own length and extended checksum. */
	bool xsdt = r[RSDP_OFF_REVISION] >= 2;
	u64 root = rd32(r + RSDP_OFF_RSDT);
	u32 entry = 4;

	if (xsdt) {
		u32 rlen = rd32(r + RSDP_OFF_LENGTH);

		if (rlen < RSDP_V2_MIN_LENGTH || rlen > ACPI_TABLE_MAX || !sums_to_zero(r, rlen))
			return MADT_BAD_RSDP;
		root = rd64(r + RSDP_OFF_XSDT);
		entry = 8;
	}
	u32 len = table_ok(root, xsdt ? "XSDT" : "RSDT");

	if (!len)
		return MADT_BAD_ROOT;
	for (u32 off = SDT_HEADER_LENGTH; off + entry <= len; off += entry) {
		u64 pa = entry == 8 ? rd64(ptr(root) + off) : rd32(ptr(root) + off);

		/* Only the header's signature first: other tables are not ours to validate. */
		if (pa && memcmp(ptr(pa), MADT_SIGNATURE, 4) == 0)
			return parse_madt(pa, bi);
	}
	return MADT_NOT_FOUND;
}

void acpi_read_madt(u64 rsdp, struct boot_info *bi)
{
	bi->smp.rsdp = rsdp;
	bi->smp.madt_status = read_madt(rsdp, bi);
	if (bi->smp.madt_status != MADT_OK) {
		/* Half a list is worse than none: the kernel then runs on the boot CPU alone. */
		bi->smp.cpus_reported = bi->smp.cpus_listed = 0;
		bi->smp.lapic_base = bi->smp.mp_wakeup_mailbox = 0;
	}
}
