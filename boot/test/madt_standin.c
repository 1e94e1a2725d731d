/* SPDX-License-Identifier: MIT */
/* memaccept (test image): the MADT a hostile host hands the guest (emu_fault=madt_add, madt_drop), installed by the stand-in firmware. */
#include "arch/x86/acpi_walk.h"
#include "arch/x86/emu/emu.h"
#include "boot/boot.h"
#include "drivers/console.h"
#include "lib/string.h"

/*
 * The host builds the ACPI tables (QEMU's hw/i386/acpi-common.c build_madt; the firmware
 * copies them from fw_cfg), so the CPU list in the MADT is the host's word. The stand-in
 * installs a copy, as TDVF's AlterAcpiTable installs its own (boot/test/tdx_standin.c),
 * with the attack applied: madt_add@ID puts a local x2APIC entry for ID ahead of every
 * other processor entry (the guest meets it first), madt_drop@ID leaves out the entries
 * that name ID. The emulated host's own vCPUs are read from the MADT before this
 * (boot_emulator_host_vcpus), so they stay the vCPUs QEMU runs.
 */
#define SDT_OFF_LENGTH 4
#define SDT_OFF_CHECKSUM 9
#define SDT_HEADER_LEN 36
#define MADT_OFF_ENTRIES 44
#define BELOW_4G 0xffffffffULL
/* ACPI 6.4 section 5.2.12.12, Processor Local x2APIC Structure: 16 bytes. */
#define X2APIC_LEN 16
#define X2APIC_OFF_ID 4
#define X2APIC_OFF_FLAGS 8
#define X2APIC_OFF_UID 12
#define LAPIC_FLAG_ENABLED 1u
/* The ACPI processor UIDs of added entries: far from QEMU's (0 .. vCPUs - 1). */
#define ADDED_UID_BASE 0x1000u

void boot_test_fix_checksum(u8 *table, u32 len)
{
	u8 sum = 0;

	table[SDT_OFF_CHECKSUM] = 0;
	for (u32 i = 0; i < len; i++)
		sum = (u8)(sum + table[i]);
	table[SDT_OFF_CHECKSUM] = (u8)-sum;
}

bool boot_test_alloc(EFI_SYSTEM_TABLE *st, EFI_MEMORY_TYPE type, u64 max, u64 pages, u64 *out)
{
	EFI_PHYSICAL_ADDRESS a = max;

	if (EFI_ERROR(st->BootServices->AllocatePages(AllocateMaxAddress, type, pages, &a)))
		return false;
	memset((void *)(uintptr_t)a, 0, pages * PAGE_SIZE);
	*out = a;
	return true;
}

/* Point the XSDT entry that names old_madt at new_madt. */
static bool replace_in_xsdt(const struct acpi_facts *f, u64 old_madt, u64 new_madt)
{
	u8 *xsdt = (u8 *)(uintptr_t)f->xsdt_addr;
	u32 len;

	memcpy(&len, xsdt + SDT_OFF_LENGTH, sizeof(len));
	for (u32 off = SDT_HEADER_LEN; off + 8 <= len; off += 8) {
		u64 p;

		memcpy(&p, xsdt + off, sizeof(p));
		if (p != old_madt)
			continue;
		memcpy(xsdt + off, &new_madt, sizeof(new_madt));
		boot_test_fix_checksum(xsdt, len);
		return true;
	}
	return false;
}

/* Every fault of this kind in emu_fault=, one by one from *i (NULL after the last). */
static struct emu_fault *next_fault(u32 kind, unsigned *i)
{
	for (; *i < emu.faults.n; (*i)++)
		if (emu.faults.f[*i].kind == kind)
			return &emu.faults.f[(*i)++];
	return NULL;
}

static bool dropped(const u8 *e)
{
	u32 id;
	unsigned i = 0;
	struct emu_fault *d;

	if (e[0] == MADT_TYPE_LOCAL_APIC && e[1] >= 8)
		id = e[3];
	else if (e[0] == MADT_TYPE_LOCAL_X2APIC && e[1] >= X2APIC_LEN)
		memcpy(&id, e + X2APIC_OFF_ID, sizeof(id));
	else
		return false;
	while ((d = next_fault(FAULT_MADT_DROP, &i)))
		if (d->addr == id) {
			d->fired++;
			return true;
		}
	return false;
}

u64 boot_test_madt_install(EFI_SYSTEM_TABLE *st, const struct acpi_facts *f, const u8 *extra,
			   u32 extra_len)
{
	const u8 *old = (const u8 *)(uintptr_t)f->madt_addr;
	struct emu_fault *a;
	unsigned i = 0, adds = 0;
	u32 len, out;
	u64 madt;
	u8 *m;

	memcpy(&len, old + SDT_OFF_LENGTH, sizeof(len));
	while (next_fault(FAULT_MADT_ADD, &i))
		adds++;
	if (len < MADT_OFF_ENTRIES ||
	    !boot_test_alloc(st, EfiACPIReclaimMemory, BELOW_4G,
			     (len + adds * X2APIC_LEN + extra_len + PAGE_SIZE - 1) / PAGE_SIZE, &madt))
		return 0;
	m = (u8 *)(uintptr_t)madt;
	memcpy(m, old, MADT_OFF_ENTRIES);
	out = MADT_OFF_ENTRIES;
	for (i = 0, adds = 0; (a = next_fault(FAULT_MADT_ADD, &i)); adds++) {
		u32 id = (u32)a->addr, flags = LAPIC_FLAG_ENABLED, uid = ADDED_UID_BASE + adds;

		m[out] = MADT_TYPE_LOCAL_X2APIC;
		m[out + 1] = X2APIC_LEN;
		memcpy(m + out + X2APIC_OFF_ID, &id, sizeof(id));
		memcpy(m + out + X2APIC_OFF_FLAGS, &flags, sizeof(flags));
		memcpy(m + out + X2APIC_OFF_UID, &uid, sizeof(uid));
		out += X2APIC_LEN;
		a->fired++;
	}
	/* The firmware's entries, checked by the walk that found this MADT. */
	for (u32 off = MADT_OFF_ENTRIES; off + 2 <= len && old[off + 1] >= 2;) {
		u32 elen = MIN((u32)old[off + 1], len - off);

		if (!dropped(old + off)) {
			memcpy(m + out, old + off, elen);
			out += elen;
		}
		off += elen;
	}
	if (extra_len)
		memcpy(m + out, extra, extra_len);
	out += extra_len;
	memcpy(m + SDT_OFF_LENGTH, &out, sizeof(out));
	boot_test_fix_checksum(m, out);
	if (!replace_in_xsdt(f, f->madt_addr, madt)) {
		kprintf("boot: (test) the XSDT does not name the MADT; it stays as it is\n");
		return 0;
	}
	return madt;
}

/* The firmware reads its own tables: no bounds but the tables' own. */
static bool fw_read(void *ctx, u64 addr, void *dst, u64 len)
{
	(void)ctx;
	memcpy(dst, (const void *)(uintptr_t)addr, len);
	return true;
}

void boot_test_snp_madt(EFI_SYSTEM_TABLE *st, const struct boot_info *bi)
{
	struct acpi_reader r = { fw_read, NULL };
	struct acpi_facts f;
	unsigned i = 0, j = 0;
	u64 madt;

	if (bi->config.platform != PLAT_SNP_EMU ||
	    (!next_fault(FAULT_MADT_ADD, &i) && !next_fault(FAULT_MADT_DROP, &j)))
		return;
	acpi_scan(&r, bi->acpi_rsdp, &f);
	if (f.madt != ACPI_OK || f.xsdt != ACPI_OK) {
		kprintf("boot: (test) no MADT to change (%s)\n", acpi_status_name(f.madt));
		return;
	}
	madt = boot_test_madt_install(st, &f, NULL, 0);
	if (madt)
		kprintf("boot: (test) the host's MADT, changed, at %#llx\n", madt);
}
