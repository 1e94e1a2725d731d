/* SPDX-License-Identifier: MIT */
/*
 * memaccept fuzz target: the ACPI tables a host hands the guest (RSDP, XSDT, MADT, FADT)
 * through the walk the kernel runs before it starts a CPU (arch/x86/acpi_walk.c), the PM
 * timer block (arch/x86/acpi.c) and the wakeup-mailbox checks before the kernel writes to
 * the mailbox (kernel/mp_wakeup.c).
 *
 * On a TD the host builds the MADT (QEMU, then TDVF copies it); on SNP the firmware is
 * measured but the host still supplies the tables it copies. Every table is hostile input.
 *
 * Two kinds of input, chosen by bit 0 of the first byte:
 * - raw: the rest is 64 KiB of "ACPI memory" at MEM_BASE, the RSDP at an offset the input
 *   gives. Only the walk's refusals are reached this way (checksums rarely hold).
 * - built: the input gives the MADT's body, the FADT's body and some flags; the harness
 *   wraps them in an RSDP and an XSDT with correct signatures, lengths and checksums (then
 *   optionally flips one byte), so every MADT entry layout is reached. An independent
 *   reading of the MADT, written from the ACPI specification (6.5 section 5.2.12), must
 *   agree with the walk on every count, ID, address and verdict.
 * Then a memory map built around the mailbox address: the mailbox checks must accept a
 * mailbox exactly when its whole page is ACPI NVS memory (ACPI 6.5 section 5.2.12.19).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "arch/x86/acpi.h"
#include "kernel/smp_ids.h"
#include "arch/x86/acpi_walk.h"
#include "include/mp_wakeup.h"
#include "kernel/mp_wakeup.h"
#include "tests/fuzz/fuzz.h"

#define MEM_BASE 0x7ff00000ULL
#define MEM_SIZE (64u * 1024)
#define RSDP_AT (MEM_BASE + 0x0)
#define XSDT_AT (MEM_BASE + 0x100)
#define FADT_AT (MEM_BASE + 0x1000)
#define MADT_AT (MEM_BASE + 0x2000)
#define MADT_MAX (MEM_SIZE - 0x2000)
#define FADT_MAX 276			/* ACPI 6.5 table 5.9: the whole revision 6 FADT */
#define EFI_TYPE_MIXED 0xffffffffu

static u8 mem[MEM_SIZE];
static unsigned long reads;

static bool mem_read(void *ctx, u64 addr, void *dst, u64 len)
{
	(void)ctx;
	reads++;
	if (addr < MEM_BASE || addr - MEM_BASE > MEM_SIZE || len > MEM_SIZE - (addr - MEM_BASE))
		return false;
	memcpy(dst, mem + (addr - MEM_BASE), len);
	return true;
}

static const struct acpi_reader reader = { mem_read, NULL };

static u32 get32(const u8 *p)
{
	return (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 | (u32)p[3] << 24;
}

static u64 get64(const u8 *p)
{
	return get32(p) | (u64)get32(p + 4) << 32;
}

static void put32(u8 *p, u32 v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (u8)(v >> (8 * i));
}

static void put64(u8 *p, u64 v)
{
	put32(p, (u32)v);
	put32(p + 4, (u32)(v >> 32));
}

/* Make the len bytes at p sum to zero through the byte at off. */
static void seal(u8 *p, u32 len, u32 off)
{
	u8 s = 0;

	p[off] = 0;
	for (u32 i = 0; i < len; i++)
		s = (u8)(s + p[i]);
	p[off] = (u8)-s;
}

static void header(u8 *p, const char *sig, u32 len)
{
	memcpy(p, sig, 4);
	put32(p + 4, len);
	p[8] = 6;
	memcpy(p + 10, "FUZZER", 6);
}

/* What the MADT says, read straight from its bytes as the specification lays them out. */
struct madt_model {
	u32 status;			/* ACPI_OK, ACPI_BAD_LENGTH or ACPI_BAD_ENTRY */
	u32 entries, lapics, enabled, listed;
	u32 ids[MAX_CPUS];
	u64 lapic_addr;
	u32 wakeups, wake_version;
	u64 mailbox;
};

static void read_madt(const u8 *t, u32 len, struct madt_model *m)
{
	memset(m, 0, sizeof(*m));
	/* The header, the local APIC address and the flags come before any entry. */
	if (len < 44) {
		m->status = ACPI_BAD_LENGTH;
		return;
	}
	m->status = ACPI_OK;
	m->lapic_addr = get32(t + 36);
	for (u32 at = 44; at != len;) {
		u32 left = len - at, type, size;

		if (left < 2 || t[at + 1] < 2 || t[at + 1] > left) {
			m->status = ACPI_BAD_ENTRY;
			return;
		}
		type = t[at];
		size = t[at + 1];
		m->entries++;
		switch (type) {
		case 0x00:	/* Processor Local APIC, 5.2.12.2: 8 bytes */
		case 0x09:	/* Processor Local x2APIC, 5.2.12.12: 16 bytes */
			m->lapics++;
			if (size < (type ? 16u : 8u)) {
				m->status = ACPI_BAD_ENTRY;
				return;
			}
			if ((type ? t[at + 8] : t[at + 4]) & 1) {
				if (m->listed < MAX_CPUS)
					/* 0xFF in a local APIC entry: the xAPIC broadcast, kept as the x2APIC one. */
					m->ids[m->listed++] = type ? get32(t + at + 4) :
							      t[at + 3] == 0xff ? 0xffffffffu : t[at + 3];
				m->enabled++;
			}
			break;
		case 0x05:	/* Local APIC Address Override, 5.2.12.8: 12 bytes */
			if (size < 12) {
				m->status = ACPI_BAD_ENTRY;
				return;
			}
			m->lapic_addr = get64(t + at + 4);
			break;
		case 0x10:	/* Multiprocessor Wakeup, 5.2.12.19: 16 bytes (version 0) */
			if (size < 16) {
				m->status = ACPI_BAD_ENTRY;
				return;
			}
			if (m->wakeups++ == 0) {
				m->wake_version = t[at + 2] | (u32)t[at + 3] << 8;
				m->mailbox = get64(t + at + 8);
			}
			break;
		}
		at += size;
	}
}

/*
 * The CPUs the kernel would start from this MADT (kernel/smp_ids.c), with the boot CPU's
 * ID taken from the table itself: each at most once, the boot CPU first, none at or above
 * SMP_APIC_ID_LIMIT, and every MADT entry either started, a duplicate, or no vCPU's.
 */
static void check_pick(const struct acpi_facts *f)
{
	static struct smp_ids p;
	u32 bsp = f->cpus_listed ? f->apic_ids[0] % SMP_APIC_ID_LIMIT : 0;
	unsigned bsp_listed = 0;

	smp_ids_pick(f->apic_ids, f->cpus_listed, bsp, MAX_CPUS, &p);
	CHECK(p.n >= 1 && p.n <= MAX_CPUS && p.ids[0] == bsp);
	CHECK(p.n == MIN(p.distinct, (unsigned)MAX_CPUS));
	for (unsigned i = 0; i < p.n; i++) {
		CHECK(p.ids[i] < SMP_APIC_ID_LIMIT);
		for (unsigned j = 0; j < i; j++)
			CHECK(p.ids[i] != p.ids[j]);
	}
	/* Each entry is no vCPU's, a duplicate, or the first of an ID (the boot CPU's too). */
	for (unsigned i = 0; i < f->cpus_listed; i++)
		bsp_listed |= f->apic_ids[i] == bsp;
	CHECK(p.nno_cpu + p.nduplicate + p.distinct - 1 + bsp_listed == f->cpus_listed);
}

static void check_against_model(const struct acpi_facts *f, const struct madt_model *m)
{
	CHECK(f->madt == m->status);
	if (m->status != ACPI_OK)
		return;
	CHECK(f->madt_entries == m->entries);
	CHECK(f->madt_lapics == m->lapics);
	CHECK(f->cpus_enabled == m->enabled);
	CHECK(f->cpus_listed == m->listed);
	CHECK(memcmp(f->apic_ids, m->ids, m->listed * sizeof(u32)) == 0);
	check_pick(f);
	CHECK(f->lapic_addr == m->lapic_addr);
	CHECK(f->mp_wakeup == m->wakeups);
	if (m->wakeups) {
		CHECK(f->mp_wakeup_version == m->wake_version);
		CHECK(f->mp_wakeup_mailbox == m->mailbox);
	}
}

/* What holds for any input at all. */
static void check_always(const struct acpi_facts *f)
{
	CHECK(f->rsdp < ACPI_STATUS_COUNT && f->xsdt < ACPI_STATUS_COUNT);
	CHECK(f->madt < ACPI_STATUS_COUNT && f->fadt < ACPI_STATUS_COUNT);
	CHECK(f->pm_status < ACPI_PM_STATUS_COUNT);
	CHECK(f->cpus_listed <= MAX_CPUS && f->cpus_listed <= f->cpus_enabled);
	CHECK(f->madt_lapics <= f->madt_entries);
	if (f->rsdp != ACPI_OK)
		CHECK(f->xsdt == ACPI_ABSENT && f->madt == ACPI_ABSENT && f->fadt == ACPI_ABSENT);
	if (f->pm_status == ACPI_PM_OK) {
		CHECK(f->fadt == ACPI_OK);
		CHECK(f->pm.port != 0 && f->pm.port <= 0xfffc);
		CHECK(f->pm.bits == 24 || f->pm.bits == 32);
	}
	/* A table the walk calls good has its checksum and signature where it says. */
	if (f->madt == ACPI_OK && f->madt_addr >= MEM_BASE && f->madt_addr < MEM_BASE + MEM_SIZE) {
		const u8 *t = mem + (f->madt_addr - MEM_BASE);
		u32 len = get32(t + 4);
		u8 s = 0;

		CHECK(memcmp(t, "APIC", 4) == 0);
		CHECK(len >= 44 && len <= MEM_SIZE - (f->madt_addr - MEM_BASE));
		for (u32 i = 0; i < len; i++)
			s = (u8)(s + t[i]);
		CHECK(s == 0);
	}
}

/*
 * A memory map of up to four ranges around the mailbox, from the input's last bytes: the
 * mailbox checks must say yes exactly when one ACPI NVS range holds the whole page.
 */
static void check_mailbox(const struct acpi_facts *f, const u8 *in, size_t n)
{
	static const u32 kinds[] = { RANGE_ACPI, RANGE_ACPI, RANGE_USABLE, RANGE_RESERVED,
				     RANGE_RUNTIME, RANGE_UNACCEPTED };
	static const u32 types[] = { EFI_ACPI_MEMORY_NVS, EFI_ACPI_MEMORY_NVS, EFI_TYPE_MIXED,
				     EFI_ACPI_RECLAIM_MEMORY, EFI_RESERVED_MEMORY };
	struct mem_range r[4];
	struct memmap m;
	u64 mb = f->mp_wakeup_mailbox, cursor;
	const char *why;
	bool whole_nvs = false;
	unsigned k = 0;

	memset(&m, 0, sizeof(m));
	/* Ranges start from a page-aligned point near the mailbox, each after the last. */
	cursor = (mb & ~0xfffULL) - (n ? (u64)(in[0] & 3) * 4096 : 0);
	for (size_t i = 1; i + 3 <= n && k < 4; i += 3) {
		u64 gap = (u64)(in[i] & 1) * 4096, len = ((u64)in[i + 1] % 4 + (in[i] & 2 ? 0 : 1)) * 4096;

		if (!len || cursor + gap + len < cursor)
			break;
		r[k].start = cursor + gap;
		r[k].end = r[k].start + len;
		r[k].kind = kinds[in[i + 2] % ARRAY_SIZE(kinds)];
		r[k].efi_type = types[(in[i + 2] >> 4) % ARRAY_SIZE(types)];
		cursor = r[k++].end;
	}
	m.ranges = r;
	m.nranges = m.cap = k;
	why = mp_wakeup_problem(f, &m);
	for (unsigned i = 0; i < k; i++) {
		if (mb < r[i].start || mb >= r[i].end)
			continue;
		whole_nvs = r[i].kind == RANGE_ACPI && mb + MP_MAILBOX_SIZE <= r[i].end &&
			    (r[i].efi_type == EFI_ACPI_MEMORY_NVS || r[i].efi_type == EFI_TYPE_MIXED);
	}
	if (!why) {
		/* Yes: a usable MADT names a known version and a whole, aligned NVS page. */
		CHECK(f->madt == ACPI_OK && f->mp_wakeup >= 1);
		CHECK(f->mp_wakeup_version <= MP_WAKEUP_VERSION_MAX);
		CHECK(mb != 0 && (mb & (MP_MAILBOX_SIZE - 1)) == 0);
		CHECK(whole_nvs);
	} else {
		CHECK(strlen(why) > 0);
		CHECK(!(f->madt == ACPI_OK && f->mp_wakeup >= 1 &&
			f->mp_wakeup_version <= MP_WAKEUP_VERSION_MAX && mb &&
			(mb & (MP_MAILBOX_SIZE - 1)) == 0 && whole_nvs));
	}
}

/*
 * Built input: flags, corrupt offset (2 bytes), FADT body length, the FADT body, the MADT
 * length (2 bytes), the MADT body; the rest shapes the memory map.
 */
static void built(const u8 *in, size_t n)
{
	u8 flags = in[0];
	u32 flip = (u32)in[1] | (u32)in[2] << 8, fbody, mlen, xlen;
	size_t at = 3;
	struct madt_model model;
	struct acpi_facts f;
	u8 *rsdp = mem + (RSDP_AT - MEM_BASE), *xsdt = mem + (XSDT_AT - MEM_BASE);
	u8 *fadt = mem + (FADT_AT - MEM_BASE), *madt = mem + (MADT_AT - MEM_BASE);
	unsigned nt = 0;

	memset(mem, 0, sizeof(mem));
	fbody = in[at++] % (FADT_MAX - 36 + 1);
	fbody = MIN(fbody, (u32)(n - at));
	header(fadt, "FACP", 36 + fbody);
	memcpy(fadt + 36, in + at, fbody);
	at += fbody;
	seal(fadt, 36 + fbody, 9);

	mlen = at + 2 <= n ? (u32)in[at] | (u32)in[at + 1] << 8 : 0;
	at = MIN(at + 2, n);
	mlen = MIN(mlen, (u32)(n - at));
	mlen = MIN(mlen, (u32)MADT_MAX - 36);
	header(madt, "APIC", 36 + mlen);
	memcpy(madt + 36, in + at, mlen);
	at += mlen;
	mlen += 36;
	seal(madt, mlen, 9);

	/* XSDT: the FADT and the MADT in the order flag bit 1 says, and a pointer outside. */
	if (flags & 2) {
		put64(xsdt + 36 + 8 * nt++, MADT_AT);
		put64(xsdt + 36 + 8 * nt++, FADT_AT);
	} else {
		put64(xsdt + 36 + 8 * nt++, FADT_AT);
		put64(xsdt + 36 + 8 * nt++, MADT_AT);
	}
	if (flags & 4)
		put64(xsdt + 36 + 8 * nt++, 0x1000);
	xlen = 36 + 8 * nt;
	header(xsdt, "XSDT", xlen);
	seal(xsdt, xlen, 9);

	memcpy(rsdp, "RSD PTR ", 8);
	memcpy(rsdp + 9, "FUZZER", 6);
	rsdp[15] = 2;
	put32(rsdp + 20, 36);
	put64(rsdp + 24, XSDT_AT);
	seal(rsdp, 20, 8);
	seal(rsdp, 36, 32);

	/* One byte changed after sealing: only a checksum, or a refusal, may follow. */
	if (flags & 8)
		mem[flip % (0x2000 + mlen)] ^= (u8)(flags | 1);

	read_madt(madt, mlen, &model);
	reads = 0;
	acpi_scan(&reader, RSDP_AT, &f);
	check_always(&f);
	if (!(flags & 8)) {
		CHECK(f.rsdp == ACPI_OK && f.xsdt == ACPI_OK && f.fadt == ACPI_OK);
		CHECK(f.madt_addr == MADT_AT && f.fadt_addr == FADT_AT);
		CHECK(f.ntables == nt);
		check_against_model(&f, &model);
		/* The PM timer the walk found is the one the FADT body declares. */
		struct acpi_pm_timer pm;

		CHECK(acpi_fadt_pm_timer(fadt, 36 + fbody, &pm) == f.pm_status);
		CHECK(memcmp(&pm, &f.pm, sizeof(pm)) == 0);
	}
	check_mailbox(&f, in + at, n - at);
}

static void raw(const u8 *in, size_t n)
{
	struct acpi_facts f;
	u32 off = (u32)in[1] | (u32)in[2] << 8;
	size_t body = MIN(n - 3, (size_t)MEM_SIZE);

	memset(mem, 0, sizeof(mem));
	memcpy(mem, in + 3, body);
	reads = 0;
	acpi_scan(&reader, MEM_BASE + off, &f);
	check_always(&f);
	/* Bounded work: at most two reads per XSDT entry and a few per table or entry. */
	CHECK(reads < 4 * (1u << 20));
	check_mailbox(&f, in + 3 + body, n - 3 - body);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The smallest input of either kind: its header. */
	if (size < 4)
		return 0;
	if (data[0] & 1)
		built(data, size);
	else
		raw(data, size);
	return 0;
}
