/* SPDX-License-Identifier: MIT */
/* memaccept: a defensive walk of the firmware's ACPI tables (pure logic, host-tested). */
#include "arch/x86/acpi_walk.h"
#include "arch/x86/acpi.h"
#include "include/mp_wakeup.h"
#include "lib/string.h"

/*
 * Layouts from the ACPI specification 6.4: RSDP section 5.2.5.3, system description table
 * header section 5.2.6, XSDT section 5.2.8, FADT section 5.2.9 (its PM timer fields:
 * arch/x86/acpi.c), MADT section 5.2.12 (multiprocessor wakeup structure 5.2.12.19).
 * Every field is read through the reader by offset, never through a pointer into
 * firmware memory.
 */
#define RSDP_SIGNATURE "RSD PTR "
#define RSDP_V1_LEN 20			/* the part the first checksum covers */
#define RSDP_V2_LEN 36
#define RSDP_OFF_CHECKSUM 8
#define RSDP_OFF_REVISION 15
#define RSDP_OFF_LENGTH 20
#define RSDP_OFF_XSDT 24

#define SDT_HEADER_LEN 36
#define SDT_OFF_LENGTH 4
#define MADT_OFF_ENTRIES 44		/* header, local APIC address, flags */
#define MADT_OFF_LAPIC_ADDR 36		/* u32 local APIC address */
/*
 * Processor entries (ACPI 6.4 sections 5.2.12.2, 5.2.12.8, 5.2.12.12): local APIC {uid u8
 * @2, APIC ID u8 @3, flags u32 @4}, address override {u64 @4}, local x2APIC {x2APIC ID
 * u32 @4, flags u32 @8}; flags bit 0 = enabled (table 5.23). Shorter is malformed.
 */
#define LOCAL_APIC_LEN 8
#define LAPIC_OVERRIDE_LEN 12
#define LOCAL_X2APIC_LEN 16
#define LAPIC_FLAG_ENABLED 1u
#define LAPIC_ID_BROADCAST 0xffu
#define X2APIC_ID_BROADCAST 0xffffffffu

/*
 * No table this walk reads is anywhere near this long (an XSDT of 1 MiB would list 131,068
 * tables): a longer length is a broken or hostile table, and bounds the time spent on it.
 */
#define ACPI_TABLE_MAX_LEN (1 * MiB)
#define CHUNK 256

static bool rd(const struct acpi_reader *r, u64 addr, void *dst, u64 len)
{
	if (addr + len < addr)
		return false;
	return r->read(r->ctx, addr, dst, len);
}

/* Sum of len bytes at addr (mod 256) into *sum; false if any of it is unreadable. */
static bool checksum(const struct acpi_reader *r, u64 addr, u64 len, u8 *sum)
{
	u8 buf[CHUNK];
	u8 s = 0;

	for (u64 off = 0; off < len; off += CHUNK) {
		u64 n = MIN((u64)CHUNK, len - off);

		if (!rd(r, addr + off, buf, n))
			return false;
		for (u64 i = 0; i < n; i++)
			s = (u8)(s + buf[i]);
	}
	*sum = s;
	return true;
}

static u32 le32(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

static u64 le64(const u8 *p)
{
	return (u64)le32(p) | (u64)le32(p + 4) << 32;
}

/* A table with a standard header: signature, sane length, checksum. Length into *len. */
static u32 check_sdt(const struct acpi_reader *r, u64 addr, const char *sig, u32 *len)
{
	u8 hdr[SDT_HEADER_LEN], sum;

	if (!addr)
		return ACPI_ABSENT;
	if (!rd(r, addr, hdr, sizeof(hdr)))
		return ACPI_UNREADABLE;
	if (sig && memcmp(hdr, sig, 4) != 0)
		return ACPI_BAD_SIGNATURE;
	*len = le32(hdr + SDT_OFF_LENGTH);
	if (*len < SDT_HEADER_LEN || *len > ACPI_TABLE_MAX_LEN)
		return ACPI_BAD_LENGTH;
	if (!checksum(r, addr, *len, &sum))
		return ACPI_UNREADABLE;
	return sum ? ACPI_BAD_CHECKSUM : ACPI_OK;
}

/* A processor or address-override entry, length already checked. */
static void add_cpu_entry(struct acpi_facts *f, const u8 *e)
{
	u32 id, flags;

	if (e[0] == MADT_TYPE_LAPIC_OVERRIDE) {
		f->lapic_addr = le64(e + 4);
		return;
	}
	id = e[0] == MADT_TYPE_LOCAL_APIC ? e[3] : le32(e + 4);
	/*
	 * 0xFF in a local APIC entry is no CPU's: the xAPIC broadcast (Intel SDM vol. 3A,
	 * 11.6.2), and IDs from 255 on need a local x2APIC entry (ACPI 6.4 section 5.2.12.12).
	 * It is kept as the x2APIC broadcast, which the kernel never starts (kernel/smp_ids.h).
	 */
	if (e[0] == MADT_TYPE_LOCAL_APIC && id == LAPIC_ID_BROADCAST)
		id = X2APIC_ID_BROADCAST;
	flags = e[0] == MADT_TYPE_LOCAL_APIC ? le32(e + 4) : le32(e + 8);
	if (!(flags & LAPIC_FLAG_ENABLED))
		return;
	if (f->cpus_listed < MAX_CPUS)
		f->apic_ids[f->cpus_listed++] = id;
	f->cpus_enabled++;
}

static void scan_madt(const struct acpi_reader *r, struct acpi_facts *f)
{
	u32 len = 0;

	f->madt = check_sdt(r, f->madt_addr, "APIC", &len);
	if (f->madt != ACPI_OK)
		return;
	if (len < MADT_OFF_ENTRIES) {
		f->madt = ACPI_BAD_LENGTH;
		return;
	}
	u8 la[4];

	if (!rd(r, f->madt_addr + MADT_OFF_LAPIC_ADDR, la, sizeof(la))) {
		f->madt = ACPI_UNREADABLE;
		return;
	}
	f->lapic_addr = le32(la);
	for (u32 off = MADT_OFF_ENTRIES; off < len;) {
		u8 e[MP_WAKEUP_LEN_V0];
		u32 elen;

		if (len - off < 2 || !rd(r, f->madt_addr + off, e, 2)) {
			f->madt = ACPI_BAD_ENTRY;
			return;
		}
		elen = e[1];
		/* A zero length would loop forever; one past the end reads another table. */
		if (elen < 2 || elen > len - off) {
			f->madt = ACPI_BAD_ENTRY;
			return;
		}
		f->madt_entries++;
		if (e[0] == MADT_TYPE_LOCAL_APIC || e[0] == MADT_TYPE_LOCAL_X2APIC)
			f->madt_lapics++;
		if (e[0] == MADT_TYPE_LOCAL_APIC || e[0] == MADT_TYPE_LOCAL_X2APIC ||
		    e[0] == MADT_TYPE_LAPIC_OVERRIDE) {
			u32 need = e[0] == MADT_TYPE_LOCAL_APIC ? LOCAL_APIC_LEN :
				   e[0] == MADT_TYPE_LOCAL_X2APIC ? LOCAL_X2APIC_LEN : LAPIC_OVERRIDE_LEN;

			if (elen < need || !rd(r, f->madt_addr + off, e, need)) {
				f->madt = ACPI_BAD_ENTRY;
				return;
			}
			add_cpu_entry(f, e);
		}
		if (e[0] == MADT_TYPE_MP_WAKEUP) {
			if (elen < MP_WAKEUP_LEN_V0 || !rd(r, f->madt_addr + off, e, sizeof(e))) {
				f->madt = ACPI_BAD_ENTRY;
				return;
			}
			if (!f->mp_wakeup++) {
				f->mp_wakeup_version = (u32)e[MP_WAKEUP_OFF_VERSION] |
						      (u32)e[MP_WAKEUP_OFF_VERSION + 1] << 8;
				f->mp_wakeup_mailbox = le64(e + MP_WAKEUP_OFF_MAILBOX);
			}
		}
		off += elen;
	}
}

/* The PM timer block; the FADT fields past FADT_READ_LEN are not needed. */
#define FADT_READ_LEN 244
static void scan_fadt(const struct acpi_reader *r, struct acpi_facts *f)
{
	u8 buf[FADT_READ_LEN];
	u32 len = 0;

	f->fadt = check_sdt(r, f->fadt_addr, "FACP", &len);
	if (f->fadt != ACPI_OK) {
		f->pm_status = ACPI_PM_NO_FADT;
		return;
	}
	len = MIN(len, (u32)sizeof(buf));
	if (!rd(r, f->fadt_addr, buf, len)) {
		f->fadt = ACPI_UNREADABLE;
		f->pm_status = ACPI_PM_NO_FADT;
		return;
	}
	f->pm_status = acpi_fadt_pm_timer(buf, len, &f->pm);
}

void acpi_scan(const struct acpi_reader *r, u64 rsdp_addr, struct acpi_facts *f)
{
	u8 rsdp[RSDP_V2_LEN], sum;
	u32 len = 0;

	memset(f, 0, sizeof(*f));
	f->rsdp_addr = rsdp_addr;
	f->rsdp = f->xsdt = f->madt = f->fadt = ACPI_ABSENT;
	f->pm_status = ACPI_PM_NO_RSDP;
	if (!rsdp_addr)
		return;
	if (!rd(r, rsdp_addr, rsdp, RSDP_V1_LEN)) {
		f->rsdp = ACPI_UNREADABLE;
		return;
	}
	if (memcmp(rsdp, RSDP_SIGNATURE, 8) != 0) {
		f->rsdp = ACPI_BAD_SIGNATURE;
		return;
	}
	if (!checksum(r, rsdp_addr, RSDP_V1_LEN, &sum) || sum) {
		f->rsdp = sum ? ACPI_BAD_CHECKSUM : ACPI_UNREADABLE;
		return;
	}
	f->rsdp_revision = rsdp[RSDP_OFF_REVISION];
	if (f->rsdp_revision < 2) {
		f->rsdp = ACPI_OLD_REVISION;
		return;
	}
	if (!rd(r, rsdp_addr, rsdp, RSDP_V2_LEN)) {
		f->rsdp = ACPI_UNREADABLE;
		return;
	}
	len = le32(rsdp + RSDP_OFF_LENGTH);
	if (len < RSDP_V2_LEN || len > CHUNK) {
		f->rsdp = ACPI_BAD_LENGTH;
		return;
	}
	if (!checksum(r, rsdp_addr, len, &sum)) {
		f->rsdp = ACPI_UNREADABLE;
		return;
	}
	if (sum) {
		f->rsdp = ACPI_BAD_CHECKSUM;
		return;
	}
	f->rsdp = ACPI_OK;
	f->xsdt_addr = le64(rsdp + RSDP_OFF_XSDT);

	f->xsdt = check_sdt(r, f->xsdt_addr, "XSDT", &len);
	f->pm_status = ACPI_PM_BAD_ROOT;	/* until scan_fadt says better */
	if (f->xsdt != ACPI_OK)
		return;
	f->ntables = (len - SDT_HEADER_LEN) / 8;
	for (u32 i = 0; i < f->ntables; i++) {
		u8 p[8], sig[4];
		u64 addr;

		if (!rd(r, f->xsdt_addr + SDT_HEADER_LEN + 8 * (u64)i, p, sizeof(p)))
			continue;
		addr = le64(p);
		if (!rd(r, addr, sig, sizeof(sig)))
			continue;
		if (i < ACPI_MAX_TABLES) {
			memcpy(f->signatures[i], sig, 4);
			f->signatures[i][4] = 0;
		}
		/* Only the first MADT and FADT are read. */
		if (!f->madt_addr && memcmp(sig, "APIC", 4) == 0)
			f->madt_addr = addr;
		if (!f->fadt_addr && memcmp(sig, "FACP", 4) == 0)
			f->fadt_addr = addr;
	}
	scan_madt(r, f);
	scan_fadt(r, f);
}

const char *acpi_status_name(u32 status)
{
	static const char *const names[] = {
		[ACPI_OK] = "ok",
		[ACPI_ABSENT] = "absent",
		[ACPI_UNREADABLE] = "outside ACPI memory",
		[ACPI_BAD_SIGNATURE] = "bad signature",
		[ACPI_BAD_LENGTH] = "bad length",
		[ACPI_BAD_CHECKSUM] = "bad checksum",
		[ACPI_OLD_REVISION] = "revision 0 (ACPI 1.0, no XSDT)",
		[ACPI_BAD_ENTRY] = "malformed entry",
	};

	return status < ARRAY_SIZE(names) ? names[status] : "?";
}
