/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the MADT reader (boot/acpi.c) on crafted ACPI tables. */
#include <string.h>
#include "boot/acpi.h"
#include "tests/unit/unit.h"

/* Tables live in this buffer; the reader takes their host addresses as "physical". */
static u8 mem[8192] __aligned(16);
static u64 at;

static u8 *alloc(u64 n)
{
	u8 *p = mem + at;

	at = ALIGN_UP(at + n, 16);
	return p;
}

static u64 pa(const void *p)
{
	return (u64)(uintptr_t)p;
}

static void fix_sum(u8 *p, u64 len, u64 sum_off)
{
	u8 s = 0;

	p[sum_off] = 0;
	for (u64 i = 0; i < len; i++)
		s = (u8)(s + p[i]);
	p[sum_off] = (u8)-s;
}

/* A table with a standard header: signature, length; checksum at offset 9. */
static u8 *table(const char *sig, u32 len)
{
	u8 *t = alloc(len);

	memset(t, 0, len);
	memcpy(t, sig, 4);
	memcpy(t + 4, &len, 4);
	return t;
}

struct madt_builder {
	u8 buf[512];
	u32 len;
};

static void entry(struct madt_builder *b, const u8 *e, u8 n)
{
	memcpy(b->buf + b->len, e, n);
	b->len += n;
}

static void lapic(struct madt_builder *b, u8 id, u32 flags)
{
	u8 e[8] = { 0, 8, id, id };

	memcpy(e + 4, &flags, 4);
	entry(b, e, 8);
}

/* RSDP rev 2 -> XSDT -> MADT with the builder's entries; returns the RSDP. */
static u8 *build(struct madt_builder *b, bool xsdt)
{
	u32 mlen = 44 + b->len;
	u8 *madt = table("APIC", mlen);
	u32 lapic_addr = 0xfee00000;
	u8 *other = table("FACP", 40);

	memcpy(madt + 36, &lapic_addr, 4);
	memcpy(madt + 44, b->buf, b->len);
	fix_sum(madt, mlen, 9);
	fix_sum(other, 40, 9);

	u8 *root = table(xsdt ? "XSDT" : "RSDT", 36 + (xsdt ? 16 : 8));

	if (xsdt) {
		u64 e[2] = { pa(other), pa(madt) };

		memcpy(root + 36, e, 16);
		fix_sum(root, 52, 9);
	} else {
		/* An RSDT holds 32-bit addresses: only usable if the buffer is below 4 GiB. */
		u32 e[2] = { (u32)pa(other), (u32)pa(madt) };

		memcpy(root + 36, e, 8);
		fix_sum(root, 44, 9);
	}
	u8 *r = alloc(36);
	u32 rlen = 36, rsdt = (u32)pa(root);
	u64 x = pa(root);

	memset(r, 0, 36);
	memcpy(r, "RSD PTR ", 8);
	r[15] = xsdt ? 2 : 0;
	memcpy(r + 16, &rsdt, 4);
	memcpy(r + 20, &rlen, 4);
	memcpy(r + 24, &x, 8);
	fix_sum(r, 20, 8);
	fix_sum(r, 36, 32);
	return r;
}

static struct boot_info bi;

static void read_it(u8 *rsdp)
{
	memset(&bi, 0, sizeof(bi));
	acpi_read_madt(pa(rsdp), &bi);
}

TEST(madt_lists_enabled_cpus)
{
	struct madt_builder b = { .len = 0 };
	u8 x2[16] = { 9, 16 }, ovr[12] = { 5, 12 }, wake[16] = { 0x10, 16 };
	u32 x2id = 300, one = 1;
	u64 lapic64 = 0xfed00000, mailbox = 0x7f000;

	at = 0;
	lapic(&b, 0, 1);
	lapic(&b, 1, 1);
	lapic(&b, 2, 0);	/* not enabled (e.g. a hot-pluggable slot): not counted */
	memcpy(x2 + 4, &x2id, 4);
	memcpy(x2 + 8, &one, 4);
	entry(&b, x2, 16);
	memcpy(ovr + 4, &lapic64, 8);
	entry(&b, ovr, 12);
	memcpy(wake + 8, &mailbox, 8);
	entry(&b, wake, 16);
	read_it(build(&b, true));
	EXPECT_EQ(bi.smp.madt_status, MADT_OK);
	EXPECT_EQ(bi.smp.cpus_reported, 3);
	ASSERT_EQ(bi.smp.cpus_listed, 3);
	EXPECT_EQ(bi.smp.apic_ids[0], 0);
	EXPECT_EQ(bi.smp.apic_ids[1], 1);
	EXPECT_EQ(bi.smp.apic_ids[2], 300);
	EXPECT_EQ(bi.smp.lapic_base, lapic64);
	EXPECT_EQ(bi.smp.mp_wakeup_mailbox, mailbox);
}

TEST(madt_more_cpus_than_slots_are_counted)
{
	struct madt_builder b = { .len = 0 };

	at = 0;
	for (unsigned i = 0; i < MAX_CPUS + 5; i++)
		lapic(&b, (u8)i, 1);
	read_it(build(&b, true));
	EXPECT_EQ(bi.smp.madt_status, MADT_OK);
	EXPECT_EQ(bi.smp.cpus_reported, MAX_CPUS + 5);
	EXPECT_EQ(bi.smp.cpus_listed, MAX_CPUS);
}

TEST(madt_via_rsdt)
{
	struct madt_builder b = { .len = 0 };

	at = 0;
	lapic(&b, 0, 1);
	lapic(&b, 3, 1);
	if (pa(mem) + sizeof(mem) > 4 * GiB)
		return;	/* the RSDT cannot point above 4 GiB; nothing to check here */
	read_it(build(&b, false));
	EXPECT_EQ(bi.smp.madt_status, MADT_OK);
	EXPECT_EQ(bi.smp.cpus_reported, 2);
}

TEST(madt_bad_tables_list_no_cpu)
{
	struct madt_builder b = { .len = 0 };
	u8 *r;

	at = 0;
	read_it(NULL);
	EXPECT_EQ(bi.smp.madt_status, MADT_NO_RSDP);

	lapic(&b, 0, 1);
	lapic(&b, 1, 1);
	r = build(&b, true);
	r[1] ^= 1;	/* signature */
	read_it(r);
	EXPECT_EQ(bi.smp.madt_status, MADT_BAD_RSDP);

	at = 0;
	r = build(&b, true);
	r[33] ^= 1;	/* covered by the extended checksum only */
	read_it(r);
	EXPECT_EQ(bi.smp.madt_status, MADT_BAD_RSDP);

	at = 0;
	r = build(&b, true);
	u64 root;

	memcpy(&root, r + 24, 8);
	((u8 *)(uintptr_t)root)[40] ^= 1;	/* an XSDT entry: checksum breaks */
	read_it(r);
	EXPECT_EQ(bi.smp.madt_status, MADT_BAD_ROOT);
	EXPECT_EQ(bi.smp.cpus_listed, 0);

	/* The MADT's own checksum. */
	at = 0;
	r = build(&b, true);
	memcpy(&root, r + 24, 8);
	u64 madt;

	memcpy(&madt, (u8 *)(uintptr_t)root + 44, 8);
	((u8 *)(uintptr_t)madt)[44 + 2] ^= 1;
	read_it(r);
	EXPECT_EQ(bi.smp.madt_status, MADT_BAD_TABLE);
	EXPECT_EQ(bi.smp.cpus_reported, 0);
}

/* Entry lengths that would loop forever or read past the table, with valid checksums. */
TEST(madt_bad_entry_lengths)
{
	static const u8 zero_len[2] = { 0, 0 }, short_lapic[6] = { 0, 6, 1, 1, 1, 0 },
			past_end[4] = { 0, 40, 1, 1 }, short_x2[8] = { 9, 8 };
	const struct {
		const u8 *e;
		u8 n;
	} cases[] = { { zero_len, 2 }, { short_lapic, 6 }, { past_end, 4 }, { short_x2, 8 } };

	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++) {
		struct madt_builder b = { .len = 0 };

		at = 0;
		lapic(&b, 0, 1);
		entry(&b, cases[i].e, cases[i].n);
		read_it(build(&b, true));
		EXPECT_EQ(bi.smp.madt_status, MADT_BAD_TABLE);
		EXPECT_EQ(bi.smp.cpus_reported, 0);
	}
}

TEST(madt_missing)
{
	struct madt_builder b = { .len = 0 };
	u8 *r;
	u64 root, madt;

	at = 0;
	lapic(&b, 0, 1);
	r = build(&b, true);
	memcpy(&root, r + 24, 8);
	memcpy(&madt, (u8 *)(uintptr_t)root + 44, 8);
	memcpy((u8 *)(uintptr_t)madt, "XXXX", 4);
	read_it(r);
	EXPECT_EQ(bi.smp.madt_status, MADT_NOT_FOUND);
}
