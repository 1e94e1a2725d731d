/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of memory-map validation and normalisation (mm/memmap.c) on crafted maps. */
#include <string.h>
#include "mm/memmap.h"
#include "tests/unit/unit.h"

#define MAXD 256
#define PIB (1ULL << 50)
#define MIXED 0xffffffffu

/* A raw map as firmware would hand it over: descriptors at a stride of desc_size bytes. */
struct rawmap {
	u8 buf[MAXD * 128];
	u64 size, stride;
	unsigned n;
};

static struct rawmap rm;

static void map_new(u64 stride)
{
	memset(&rm, 0, sizeof(rm));
	rm.stride = stride;
}

/*
 * Append one descriptor. Every byte of the stride starts as garbage, so fields the parser
 * must ignore (padding, VirtualStart, whatever follows the 40 bytes it knows) are never
 * conveniently zero.
 */
static void add(u32 type, u64 start, u64 pages)
{
	u8 *p = rm.buf + (u64)rm.n * rm.stride;
	struct efi_mem_desc d = { type, 0xdeadbeef, start, ~start, pages, 0x800000000000000fULL };

	for (u64 i = 0; i < rm.stride; i++)
		p[i] = (u8)(0xa5 ^ (i * 37) ^ rm.n);
	memcpy(p, &d, MIN(sizeof(d), rm.stride));
	rm.n++;
	rm.size += rm.stride;
}

static u64 pages(u64 bytes)
{
	return bytes >> EFI_PAGE_SHIFT;
}

struct opts {
	unsigned phys_bits;
	u32 version;
	bool fake_set;
	u64 fake_start;
	bool can_accept;
};

static const struct opts DEF = { 48, EFI_MEM_DESC_VERSION, false, 0, true };

static struct memmap mm;
static struct mem_range ranges[2 * MAXD + 4];
static u64 scratch[(MAXD * 64 + 64) / sizeof(u64) + 1];

/* Properties every successful parse must have, whatever the map; checked after each parse. */
static void check_invariants(void)
{
	u64 unacc = 0, suspect = 0, total = 0;
	u32 nunacc = 0;

	for (unsigned i = 0; i < mm.nranges; i++) {
		const struct mem_range *r = &ranges[i];

		EXPECT(r->start < r->end);
		EXPECT(IS_ALIGNED(r->start, PAGE_SIZE) && IS_ALIGNED(r->end, PAGE_SIZE));
		EXPECT(r->kind < RANGE_KIND_COUNT);
		if (i) {
			EXPECT(ranges[i - 1].end <= r->start);
			/* Merged: touching neighbours always differ in kind. */
			EXPECT(ranges[i - 1].end < r->start || ranges[i - 1].kind != r->kind);
		}
		if (r->kind == RANGE_UNACCEPTED) {
			unacc += r->end - r->start;
			nunacc++;
		}
		if (r->kind == RANGE_SUSPECT)
			suspect += r->end - r->start;
	}
	EXPECT_EQ(mm.unaccepted_bytes, unacc);
	EXPECT_EQ(mm.unaccepted_ranges, nunacc);
	EXPECT_EQ(mm.suspect_bytes, suspect);
	EXPECT(mm.fake_unaccepted_bytes <= mm.unaccepted_bytes);
	for (unsigned k = 0; k < ANOM_KIND_COUNT; k++)
		total += mm.anomaly_count[k];
	EXPECT_EQ(mm.anomalies, total);
}

static int parse_with(struct opts o)
{
	struct memmap_input in = {
		.buf = rm.buf, .size = rm.size, .desc_size = rm.stride, .desc_version = o.version,
		.phys_bits = o.phys_bits, .fake_set = o.fake_set, .fake_start = o.fake_start,
		.can_accept = o.can_accept,
	};
	int rc = memmap_parse(&in, &mm, ranges, ARRAY_SIZE(ranges), scratch, sizeof(scratch));

	if (rc == 0)
		check_invariants();
	return rc;
}

static int parse(void)
{
	return parse_with(DEF);
}

static struct opts fake_at(u64 start)
{
	struct opts o = DEF;

	o.fake_set = true;
	o.fake_start = start;
	return o;
}

struct xr {
	u64 start, end;
	u32 kind;
};

static void check_ranges(const struct xr *x, unsigned n, int line)
{
	if (!unit_check_eq(mm.nranges, n, __FILE__, line, "nranges", "expected"))
		n = MIN(n, mm.nranges);
	for (unsigned i = 0; i < n; i++) {
		unit_check_eq(ranges[i].start, x[i].start, __FILE__, line, "start", "expected start");
		unit_check_eq(ranges[i].end, x[i].end, __FILE__, line, "end", "expected end");
		unit_check_eq(ranges[i].kind, x[i].kind, __FILE__, line, "kind", "expected kind");
	}
}

#define EXPECT_RANGES(...)                                                \
	do {                                                              \
		const struct xr x_[] = { __VA_ARGS__ };                   \
		check_ranges(x_, ARRAY_SIZE(x_), __LINE__);               \
	} while (0)

/* Exactly the given anomaly counts, e.g. EXPECT_ANOMS([ANOM_OVERLAP] = 1); none when empty. */
static void check_anoms(const u32 *want, int line)
{
	u32 total = 0;

	for (unsigned k = 0; k < ANOM_KIND_COUNT; k++) {
		total += want[k];
		if (mm.anomaly_count[k] != want[k])
			printf("  anomaly %s: %u, expected %u\n", memmap_anomaly_name(k),
			       mm.anomaly_count[k], want[k]);
		unit_check_eq(mm.anomaly_count[k], want[k], __FILE__, line, "anomaly_count", "expected");
	}
	unit_check_eq(mm.anomalies, total, __FILE__, line, "anomalies", "expected total");
}

#define EXPECT_ANOMS(...)                                                 \
	do {                                                              \
		const u32 w_[ANOM_KIND_COUNT] = { __VA_ARGS__ };          \
		check_anoms(w_, __LINE__);                                \
	} while (0)

/* A map shaped like OVMF's for a 6 GiB q35 guest with 2 GiB of unaccepted memory. */
static void ovmf_map(u64 stride)
{
	map_new(stride);
	add(EFI_BOOT_SERVICES_CODE, 0, 1);
	add(EFI_CONVENTIONAL_MEMORY, 0x1000, 0x9f);
	add(EFI_CONVENTIONAL_MEMORY, 0x100000, 0x700);
	add(EFI_ACPI_MEMORY_NVS, 0x800000, 0x8);
	add(EFI_CONVENTIONAL_MEMORY, 0x808000, 0x8);
	add(EFI_ACPI_MEMORY_NVS, 0x810000, 0xf0);
	add(EFI_BOOT_SERVICES_DATA, 0x900000, 0x100);
	add(EFI_CONVENTIONAL_MEMORY, 0xa00000, pages(0x7e000000 - 0xa00000));
	add(EFI_LOADER_DATA, 0x7e000000, 0x400);
	add(EFI_LOADER_CODE, 0x7e400000, 0x40);
	add(EFI_BOOT_SERVICES_DATA, 0x7e440000, 0x13c0);
	add(EFI_RUNTIME_SERVICES_DATA, 0x7f800000, 0x100);
	add(EFI_RUNTIME_SERVICES_CODE, 0x7f900000, 0x100);
	add(EFI_ACPI_RECLAIM_MEMORY, 0x7fa00000, 0x80);
	add(EFI_ACPI_MEMORY_NVS, 0x7fa80000, 0x80);
	add(EFI_RESERVED_MEMORY, 0x7fb00000, 0x500);
	add(EFI_MEMORY_MAPPED_IO, 0xb0000000, 0x10000);
	add(EFI_RESERVED_MEMORY, 0xfeffc000, 4);
	add(EFI_MEMORY_MAPPED_IO, 0xffc00000, 0x400);
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, pages(2 * GiB));
}

#define OVMF_RANGES                                                       \
	{ 0, 0x1000, RANGE_RECLAIMABLE },                                 \
	{ 0x1000, 0xa0000, RANGE_USABLE },                                \
	{ 0x100000, 0x800000, RANGE_USABLE },                             \
	{ 0x800000, 0x808000, RANGE_ACPI },                               \
	{ 0x808000, 0x810000, RANGE_USABLE },                             \
	{ 0x810000, 0x900000, RANGE_ACPI },                               \
	{ 0x900000, 0xa00000, RANGE_RECLAIMABLE },                        \
	{ 0xa00000, 0x7e000000, RANGE_USABLE },                           \
	{ 0x7e000000, 0x7e400000, RANGE_RECLAIMABLE },                    \
	{ 0x7e400000, 0x7e440000, RANGE_IMAGE },                          \
	{ 0x7e440000, 0x7f800000, RANGE_RECLAIMABLE },                    \
	{ 0x7f800000, 0x7fa00000, RANGE_RUNTIME },                        \
	{ 0x7fa00000, 0x7fb00000, RANGE_ACPI },                           \
	{ 0x7fb00000, 0x80000000, RANGE_RESERVED },                       \
	{ 0xb0000000, 0xc0000000, RANGE_MMIO },                           \
	{ 0xfeffc000, 0xff000000, RANGE_RESERVED },                       \
	{ 0xffc00000, 4 * GiB, RANGE_MMIO },                              \
	{ 4 * GiB, 6 * GiB, RANGE_UNACCEPTED }

TEST(memmap_ovmf_like)
{
	ovmf_map(48);
	ASSERT_EQ(parse(), 0);
	EXPECT(!mm.unusable);
	EXPECT_RANGES(OVMF_RANGES);
	EXPECT_ANOMS();
	EXPECT_EQ(mm.descriptors, 20);
	EXPECT_EQ(mm.desc_size, 48);
	EXPECT_EQ(mm.desc_version, 1);
	EXPECT_EQ(mm.conventional_bytes, 0x9f000 + 0x700000 + 0x8000 + (0x7e000000 - 0xa00000));
	EXPECT_EQ(mm.bytes_by_type[EFI_CONVENTIONAL_MEMORY], mm.conventional_bytes);
	EXPECT_EQ(mm.unaccepted_bytes, 2 * GiB);
	EXPECT_EQ(mm.bytes_by_type[EFI_UNACCEPTED_MEMORY], 2 * GiB);
	EXPECT_EQ(mm.unaccepted_ranges, 1);
	EXPECT_EQ(mm.fake_unaccepted_bytes, 0);
	EXPECT_EQ(mm.suspect_bytes, 0);
	EXPECT_EQ(mm.bytes_by_type[EFI_ACPI_MEMORY_NVS], 0x8000 + 0xf0000 + 0x80000);
	EXPECT_EQ(mm.bytes_by_type[EFI_BOOT_SERVICES_DATA], 0x100000 + 0x13c0000);
	EXPECT_EQ(mm.bytes_by_type[EFI_RESERVED_MEMORY], 0x500000 + 0x4000);
	EXPECT_EQ(mm.bytes_by_type[EFI_MEMORY_MAPPED_IO], 0x10000000 + 0x400000);
	EXPECT_EQ(mm.bytes_by_type[EFI_MEMORY_TYPE_COUNT], 0);
	/* One firmware type keeps its name; merged neighbours of different types do not. */
	EXPECT_EQ(ranges[0].efi_type, EFI_BOOT_SERVICES_CODE);
	EXPECT_EQ(ranges[11].efi_type, MIXED);
	EXPECT_EQ(ranges[17].efi_type, EFI_UNACCEPTED_MEMORY);
}

/* The parser reads 40 bytes per descriptor at any stride and ignores what follows. */
TEST(memmap_descriptor_strides)
{
	static const u64 strides[] = { 40, 48, 64, 72, 128 };

	for (unsigned i = 0; i < ARRAY_SIZE(strides); i++) {
		ovmf_map(strides[i]);
		ASSERT_EQ(parse(), 0);
		EXPECT_RANGES(OVMF_RANGES);
		EXPECT_ANOMS();
		EXPECT_EQ(mm.desc_size, strides[i]);
		EXPECT_EQ(mm.unaccepted_bytes, 2 * GiB);
	}
}

TEST(memmap_huge_hole)
{
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(2 * GiB));
	add(EFI_UNACCEPTED_MEMORY, 1 * TiB, pages(4 * GiB));
	ASSERT_EQ(parse(), 0);
	EXPECT_RANGES({ 0, 2 * GiB, RANGE_USABLE }, { 1 * TiB, 1 * TiB + 4 * GiB, RANGE_UNACCEPTED });
	EXPECT_ANOMS();
	EXPECT_EQ(mm.conventional_bytes, 2 * GiB);
	EXPECT_EQ(mm.unaccepted_bytes, 4 * GiB);
	EXPECT(memmap_find(&mm, 512 * GiB) == NULL);
	EXPECT(memmap_find(&mm, 1 * TiB) == &ranges[1]);
}

/* phys_bits 52: the address space ends at 4 PiB; an end exactly there is fine, beyond is not. */
TEST(memmap_4pib_edge)
{
	struct opts o = DEF;

	o.phys_bits = 52;
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(1 * GiB));
	add(EFI_UNACCEPTED_MEMORY, 4 * PIB - 4 * GiB, pages(4 * GiB));
	ASSERT_EQ(parse_with(o), 0);
	EXPECT_RANGES({ 0, 1 * GiB, RANGE_USABLE }, { 4 * PIB - 4 * GiB, 4 * PIB, RANGE_UNACCEPTED });
	EXPECT_ANOMS();
	EXPECT_EQ(mm.unaccepted_bytes, 4 * GiB);

	/* One descriptor crosses the limit (kept below it, as suspect), one lies above it. */
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(1 * GiB));
	add(EFI_UNACCEPTED_MEMORY, 4 * PIB - 1 * GiB, pages(1 * GiB - 2 * MiB));
	add(EFI_UNACCEPTED_MEMORY, 4 * PIB - 2 * MiB, pages(4 * MiB));
	add(EFI_CONVENTIONAL_MEMORY, 4 * PIB, 1);
	ASSERT_EQ(parse_with(o), 0);
	EXPECT_RANGES({ 0, 1 * GiB, RANGE_USABLE },
		      { 4 * PIB - 1 * GiB, 4 * PIB - 2 * MiB, RANGE_UNACCEPTED },
		      { 4 * PIB - 2 * MiB, 4 * PIB, RANGE_SUSPECT });
	EXPECT_ANOMS([ANOM_BEYOND_PHYS] = 2);
	EXPECT_EQ(mm.unaccepted_bytes, 1 * GiB - 2 * MiB);
	EXPECT_EQ(mm.suspect_bytes, 2 * MiB);
	/* Only trusted descriptors are counted. */
	EXPECT_EQ(mm.conventional_bytes, 1 * GiB);
	EXPECT_EQ(mm.bytes_by_type[EFI_UNACCEPTED_MEMORY], 1 * GiB - 2 * MiB);
	EXPECT_EQ(mm.log[0].kind, ANOM_BEYOND_PHYS);
	EXPECT_EQ(mm.log[0].desc, 2);
	EXPECT_EQ(mm.log[0].start, 4 * PIB - 2 * MiB);
	EXPECT_EQ(mm.log[0].end, 4 * PIB + 2 * MiB);
	EXPECT_EQ(mm.log[1].desc, 3);
}

TEST(memmap_beyond_phys_bits)
{
	struct opts o = DEF;

	o.phys_bits = 39;	/* 512 GiB */
	map_new(40);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(4 * GiB));
	add(EFI_UNACCEPTED_MEMORY, 256 * GiB, pages(768 * GiB));
	add(EFI_CONVENTIONAL_MEMORY, 1 * TiB, pages(1 * TiB));
	ASSERT_EQ(parse_with(o), 0);
	EXPECT_RANGES({ 0, 4 * GiB, RANGE_USABLE }, { 256 * GiB, 512 * GiB, RANGE_SUSPECT });
	EXPECT_ANOMS([ANOM_BEYOND_PHYS] = 2);
	EXPECT_EQ(mm.unaccepted_bytes, 0);
	EXPECT_EQ(mm.conventional_bytes, 4 * GiB);
	EXPECT_EQ(mm.suspect_bytes, 256 * GiB);
}

TEST(memmap_unaligned_start)
{
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0xff000, 1);
	add(EFI_CONVENTIONAL_MEMORY, 0x100123, 16);	/* claims [0x100123, 0x110123) */
	add(EFI_CONVENTIONAL_MEMORY, 0x111000, pages(0x200000 - 0x111000));
	add(EFI_UNACCEPTED_MEMORY, 2 * GiB + 0x800, 512);
	add(EFI_UNACCEPTED_MEMORY, 2 * GiB + 4 * MiB, pages(2 * MiB));
	ASSERT_EQ(parse(), 0);
	/* Rounded outward: not one byte of a doubtful descriptor is used or accepted. */
	EXPECT_RANGES({ 0xff000, 0x100000, RANGE_USABLE },
		      { 0x100000, 0x111000, RANGE_SUSPECT },
		      { 0x111000, 0x200000, RANGE_USABLE },
		      { 2 * GiB, 2 * GiB + 2 * MiB + 4 * KiB, RANGE_SUSPECT },
		      { 2 * GiB + 4 * MiB, 2 * GiB + 6 * MiB, RANGE_UNACCEPTED });
	EXPECT_ANOMS([ANOM_UNALIGNED] = 2);
	EXPECT_EQ(mm.log[0].kind, ANOM_UNALIGNED);
	EXPECT_EQ(mm.log[0].desc, 1);
	EXPECT_EQ(mm.log[0].start, 0x100123);
	EXPECT_EQ(mm.log[0].end, 0x110123);
	EXPECT_EQ(mm.conventional_bytes, 0x1000 + 0x200000 - 0x111000);
	EXPECT_EQ(mm.unaccepted_bytes, 2 * MiB);
	EXPECT_EQ(mm.suspect_bytes, 0x11000 + 2 * MiB + 4 * KiB);
	EXPECT_EQ(mm.bytes_by_type[EFI_UNACCEPTED_MEMORY], 2 * MiB);
}

TEST(memmap_zero_pages)
{
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(1 * GiB));
	add(EFI_RESERVED_MEMORY, 512 * MiB, 0);		/* inside RAM: must not split it */
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB, pages(1 * GiB));
	add(EFI_MEMORY_MAPPED_IO, UINT64_MAX, 0);	/* nonsense address, but describes nothing */
	ASSERT_EQ(parse(), 0);
	EXPECT_RANGES({ 0, 1 * GiB, RANGE_USABLE }, { 1 * GiB, 2 * GiB, RANGE_UNACCEPTED });
	EXPECT_ANOMS([ANOM_ZERO_PAGES] = 2);
	EXPECT_EQ(mm.descriptors, 4);
	EXPECT_EQ(mm.bytes_by_type[EFI_RESERVED_MEMORY], 0);
	EXPECT_EQ(mm.bytes_by_type[EFI_MEMORY_MAPPED_IO], 0);
}

TEST(memmap_page_count_overflow)
{
	struct opts o = DEF;

	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(1 * GiB));
	add(EFI_CONVENTIONAL_MEMORY, 4 * GiB, UINT64_MAX);
	add(EFI_UNACCEPTED_MEMORY, 8 * GiB, pages(8 * GiB));	/* inside the doubtful extent */
	add(EFI_RESERVED_MEMORY, 1 * GiB, 1ULL << 52);		/* wraps to exactly 1 GiB */
	ASSERT_EQ(parse(), 0);
	/* A wrapping count claims everything up to the end of the address space. */
	EXPECT_RANGES({ 0, 1 * GiB, RANGE_USABLE }, { 1 * GiB, 1ULL << 48, RANGE_SUSPECT });
	EXPECT_ANOMS([ANOM_OVERFLOW] = 2, [ANOM_OVERLAP_CONFLICT] = 2, [ANOM_UNSORTED] = 1);
	EXPECT_EQ(mm.unaccepted_bytes, 0);
	EXPECT_EQ(mm.conventional_bytes, 1 * GiB);
	EXPECT_EQ(mm.suspect_bytes, (1ULL << 48) - 1 * GiB);
	/* As the firmware reported it: the type-15 descriptor itself was well formed. */
	EXPECT_EQ(mm.bytes_by_type[EFI_UNACCEPTED_MEMORY], 8 * GiB);

	/* With a 64-bit address width: an end of exactly 2^64 does not fit in a u64. */
	o.phys_bits = 64;
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 1ULL << 63, 1ULL << 51);
	ASSERT_EQ(parse_with(o), 0);
	EXPECT_RANGES({ 1ULL << 63, ALIGN_DOWN(UINT64_MAX, PAGE_SIZE), RANGE_SUSPECT });
	EXPECT_ANOMS([ANOM_OVERFLOW] = 1);

	/* One page less is the highest map that fits, and it is fine. */
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 1ULL << 63, (1ULL << 51) - 1);
	ASSERT_EQ(parse_with(o), 0);
	EXPECT_RANGES({ 1ULL << 63, ALIGN_DOWN(UINT64_MAX, PAGE_SIZE), RANGE_USABLE });
	EXPECT_ANOMS();
	EXPECT(memmap_find(&mm, UINT64_MAX - PAGE_SIZE) == &ranges[0]);
	EXPECT(memmap_find(&mm, UINT64_MAX) == NULL);
}

/* Same input in different orders gives the same output; the anomaly is reported once. */
TEST(memmap_unsorted)
{
	static struct mem_range sorted[ARRAY_SIZE(ranges)];
	struct rawmap fwd;
	unsigned n;

	ovmf_map(64);
	ASSERT_EQ(parse(), 0);
	n = mm.nranges;
	memcpy(sorted, ranges, n * sizeof(ranges[0]));
	fwd = rm;

	map_new(64);
	for (unsigned i = fwd.n; i-- > 0;)
		memcpy(rm.buf + (u64)rm.n++ * 64, fwd.buf + (u64)i * 64, 64);
	rm.size = fwd.size;
	ASSERT_EQ(parse(), 0);
	EXPECT_ANOMS([ANOM_UNSORTED] = 1);
	ASSERT_EQ(mm.nranges, n);
	EXPECT(memcmp(sorted, ranges, n * sizeof(ranges[0])) == 0);
	EXPECT_EQ(mm.log[0].desc, 1);

	/* A random shuffle. */
	unit_srand(7);
	for (unsigned i = rm.n; i > 1; i--) {
		unsigned j = (unsigned)(unit_rand() % i);
		u8 t[64];

		memcpy(t, rm.buf + (u64)(i - 1) * 64, 64);
		memcpy(rm.buf + (u64)(i - 1) * 64, rm.buf + (u64)j * 64, 64);
		memcpy(rm.buf + (u64)j * 64, t, 64);
	}
	ASSERT_EQ(parse(), 0);
	EXPECT_ANOMS([ANOM_UNSORTED] = 1);
	ASSERT_EQ(mm.nranges, n);
	EXPECT(memcmp(sorted, ranges, n * sizeof(ranges[0])) == 0);
}

TEST(memmap_overlap_same_type)
{
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 1 * MiB, pages(2 * MiB));
	add(EFI_CONVENTIONAL_MEMORY, 2 * MiB, pages(2 * MiB));
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB, pages(1 * GiB));
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB + 4 * MiB, pages(1 * MiB));	/* fully inside */
	ASSERT_EQ(parse(), 0);
	/* The type is not in doubt, so the memory stays usable / unaccepted. */
	EXPECT_RANGES({ 1 * MiB, 4 * MiB, RANGE_USABLE }, { 1 * GiB, 2 * GiB, RANGE_UNACCEPTED });
	EXPECT_ANOMS([ANOM_OVERLAP] = 2);
	EXPECT_EQ(ranges[1].efi_type, EFI_UNACCEPTED_MEMORY);
	EXPECT_EQ(mm.unaccepted_bytes, 1 * GiB);
	/* Counted per descriptor, as the firmware reported it. */
	EXPECT_EQ(mm.conventional_bytes, 4 * MiB);
	EXPECT_EQ(mm.log[0].kind, ANOM_OVERLAP);
	EXPECT_EQ(mm.log[0].desc, 1);
}

TEST(memmap_overlap_conflict)
{
	const struct mem_range *r;

	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(4 * MiB));
	add(EFI_UNACCEPTED_MEMORY, 2 * MiB, pages(6 * MiB));
	ASSERT_EQ(parse(), 0);
	/* Believing either type could mean a double accept or touching unaccepted memory. */
	EXPECT_RANGES({ 0, 2 * MiB, RANGE_USABLE }, { 2 * MiB, 4 * MiB, RANGE_SUSPECT },
		      { 4 * MiB, 8 * MiB, RANGE_UNACCEPTED });
	EXPECT_ANOMS([ANOM_OVERLAP_CONFLICT] = 1);
	EXPECT_EQ(mm.suspect_bytes, 2 * MiB);
	EXPECT_EQ(mm.unaccepted_bytes, 4 * MiB);
	r = memmap_find(&mm, 3 * MiB);
	EXPECT(r && r->kind == RANGE_SUSPECT);

	/* Two RAM types that map to the same kind still conflict; three-way overlaps too. */
	map_new(48);
	add(EFI_BOOT_SERVICES_DATA, 0, pages(2 * MiB));
	add(EFI_LOADER_DATA, 1 * MiB, pages(2 * MiB));
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB, pages(1 * GiB));
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB + 8 * MiB, pages(4 * MiB));
	add(EFI_RUNTIME_SERVICES_DATA, 1 * GiB + 10 * MiB, pages(4 * MiB));
	ASSERT_EQ(parse(), 0);
	EXPECT_RANGES({ 0, 1 * MiB, RANGE_RECLAIMABLE }, { 1 * MiB, 2 * MiB, RANGE_SUSPECT },
		      { 2 * MiB, 3 * MiB, RANGE_RECLAIMABLE },
		      { 1 * GiB, 1 * GiB + 10 * MiB, RANGE_UNACCEPTED },
		      { 1 * GiB + 10 * MiB, 1 * GiB + 14 * MiB, RANGE_SUSPECT },
		      { 1 * GiB + 14 * MiB, 2 * GiB, RANGE_UNACCEPTED });
	/* The suspect piece fills whole 2 MiB units: the unaccepted ranges do not touch it. */
	EXPECT_ANOMS([ANOM_OVERLAP] = 1, [ANOM_OVERLAP_CONFLICT] = 2);
	EXPECT_EQ(mm.suspect_bytes, 1 * MiB + 4 * MiB);
	EXPECT_EQ(mm.unaccepted_ranges, 2);

	/* fake_unaccepted_start must not turn a conflict into unaccepted memory. */
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(1 * GiB));
	add(EFI_BOOT_SERVICES_DATA, 512 * MiB, pages(2 * MiB));
	ASSERT_EQ(parse_with(fake_at(0)), 0);
	EXPECT_RANGES({ 0, 512 * MiB, RANGE_UNACCEPTED }, { 512 * MiB, 514 * MiB, RANGE_SUSPECT },
		      { 514 * MiB, 1 * GiB, RANGE_UNACCEPTED });
	EXPECT_EQ(mm.fake_unaccepted_bytes, 1 * GiB - 2 * MiB);
}

TEST(memmap_unknown_types)
{
	map_new(48);
	add(16, 0, 1);
	add(0x6fffffff, 0x1000, 1);
	add(EFI_OEM_TYPE_FIRST, 0x2000, 1);		/* OEM and OS-loader types are legal */
	add(0x80000000, 0x3000, 2);
	add(EFI_PERSISTENT_MEMORY, 0x5000, 1);
	ASSERT_EQ(parse(), 0);
	EXPECT_RANGES({ 0, 0x6000, RANGE_RESERVED });
	EXPECT_EQ(ranges[0].efi_type, MIXED);
	EXPECT_ANOMS([ANOM_UNKNOWN_TYPE] = 2);
	EXPECT_EQ(mm.bytes_by_type[EFI_MEMORY_TYPE_COUNT], 5 * PAGE_SIZE);
	EXPECT_EQ(mm.bytes_by_type[EFI_PERSISTENT_MEMORY], PAGE_SIZE);
	EXPECT_EQ(mm.log[1].kind, ANOM_UNKNOWN_TYPE);
	EXPECT_EQ(mm.log[1].desc, 1);
}

TEST(memmap_desc_size_too_small)
{
	static const u64 sizes[] = { 0, 8, 32, 39 };

	for (unsigned i = 0; i < ARRAY_SIZE(sizes); i++) {
		map_new(48);
		add(EFI_CONVENTIONAL_MEMORY, 0, 16);
		rm.stride = sizes[i];
		EXPECT_EQ(parse(), -1);
		EXPECT(mm.unusable);
		EXPECT_EQ(mm.nranges, 0);
		EXPECT_ANOMS([ANOM_DESC_SIZE_SMALL] = 1);
		EXPECT_EQ(mm.log[0].desc, UINT32_MAX);
		EXPECT_EQ(mm.log[0].start, sizes[i]);
	}
}

TEST(memmap_desc_size_odd)
{
	map_new(44);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(1 * GiB));
	add(EFI_RESERVED_MEMORY, 1 * GiB, 1);
	add(EFI_UNACCEPTED_MEMORY, 2 * GiB, pages(1 * GiB));
	ASSERT_EQ(parse(), 0);
	EXPECT(!mm.unusable);
	EXPECT_RANGES({ 0, 1 * GiB, RANGE_USABLE }, { 1 * GiB, 1 * GiB + 4 * KiB, RANGE_RESERVED },
		      { 2 * GiB, 3 * GiB, RANGE_UNACCEPTED });
	EXPECT_ANOMS([ANOM_DESC_SIZE_ODD] = 1);
}

TEST(memmap_desc_version)
{
	static const u32 versions[] = { 0, 2, 0xffffffff };

	for (unsigned i = 0; i < ARRAY_SIZE(versions); i++) {
		struct opts o = DEF;

		o.version = versions[i];
		map_new(48);
		add(EFI_CONVENTIONAL_MEMORY, 0, pages(1 * GiB));
		ASSERT_EQ(parse_with(o), 0);
		EXPECT_RANGES({ 0, 1 * GiB, RANGE_USABLE });
		EXPECT_ANOMS([ANOM_DESC_VERSION] = 1);
		EXPECT_EQ(mm.desc_version, versions[i]);
	}
}

TEST(memmap_map_size_not_multiple)
{
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(1 * GiB));
	add(EFI_RESERVED_MEMORY, 1 * GiB, 1);
	add(EFI_UNACCEPTED_MEMORY, 2 * GiB, pages(1 * GiB));
	add(EFI_UNACCEPTED_MEMORY, 3 * GiB, pages(1 * GiB));	/* partly cut off: ignored */
	rm.size -= 28;
	ASSERT_EQ(parse(), 0);
	EXPECT_EQ(mm.descriptors, 3);
	EXPECT_RANGES({ 0, 1 * GiB, RANGE_USABLE }, { 1 * GiB, 1 * GiB + 4 * KiB, RANGE_RESERVED },
		      { 2 * GiB, 3 * GiB, RANGE_UNACCEPTED });
	EXPECT_ANOMS([ANOM_MAP_SIZE] = 1);

	/* Less than one descriptor: nothing to read, but nothing broken either. */
	rm.size = 20;
	ASSERT_EQ(parse(), 0);
	EXPECT_EQ(mm.descriptors, 0);
	EXPECT_EQ(mm.nranges, 0);
	EXPECT_ANOMS([ANOM_MAP_SIZE] = 1);

	rm.size = 0;
	ASSERT_EQ(parse(), 0);
	EXPECT_EQ(mm.nranges, 0);
	EXPECT_ANOMS();
}

/* Scratch and range storage sized exactly (heap, so the sanitizer sees any overrun). */
static int parse_sized(unsigned cap, size_t scratch_size)
{
	struct memmap_input in = {
		.buf = rm.buf, .size = rm.size, .desc_size = rm.stride,
		.desc_version = EFI_MEM_DESC_VERSION, .phys_bits = 48, .can_accept = true,
	};
	struct mem_range *r = malloc(cap * sizeof(*r));
	void *s = malloc(scratch_size);
	int rc = memmap_parse(&in, &mm, r, cap, s, scratch_size);

	/* Ranges were written to r; check them before it goes. */
	for (unsigned i = 0; i < mm.nranges; i++)
		EXPECT(r[i].start < r[i].end && (i == 0 || r[i - 1].end <= r[i].start));
	mm.ranges = ranges;
	mm.nranges = 0;
	free(r);
	free(s);
	return rc;
}

TEST(memmap_too_many_descriptors)
{
	const unsigned n = 10;

	map_new(48);
	/* Disjoint, alternating types: the worst case for the number of output ranges. */
	for (unsigned i = 0; i < n; i++)
		add(i % 2 ? EFI_RESERVED_MEMORY : EFI_UNACCEPTED_MEMORY, i * 2 * MiB + 4 * KiB, 1);

	EXPECT_EQ(parse_sized(2 * n + 4, memmap_scratch_bytes(n)), 0);
	EXPECT(!mm.unusable);
	EXPECT_EQ(mm.anomaly_count[ANOM_TOO_MANY], 0);

	EXPECT_EQ(parse_sized(2 * n + 3, memmap_scratch_bytes(n)), -1);
	EXPECT(mm.unusable);
	EXPECT_ANOMS([ANOM_TOO_MANY] = 1);
	EXPECT_EQ(mm.log[0].start, n);

	EXPECT_EQ(parse_sized(2 * n + 4, memmap_scratch_bytes(n) - 1), -1);
	EXPECT(mm.unusable);
	EXPECT_ANOMS([ANOM_TOO_MANY] = 1);

	/* Every descriptor counts, even the ones that describe nothing. */
	add(EFI_CONVENTIONAL_MEMORY, 0, 0);
	EXPECT_EQ(parse_sized(2 * n + 4, memmap_scratch_bytes(n)), -1);
	EXPECT_ANOMS([ANOM_TOO_MANY] = 1);
}

TEST(memmap_adjacent_unaccepted_merge)
{
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(1 * GiB));
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB + 1 * MiB, pages(2 * MiB));
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB, pages(1 * MiB));
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB + 3 * MiB, pages(1 * GiB - 3 * MiB));
	ASSERT_EQ(parse(), 0);
	EXPECT_RANGES({ 0, 1 * GiB, RANGE_USABLE }, { 1 * GiB, 2 * GiB, RANGE_UNACCEPTED });
	EXPECT_EQ(mm.unaccepted_ranges, 1);
	EXPECT_EQ(ranges[1].efi_type, EFI_UNACCEPTED_MEMORY);
	EXPECT_ANOMS([ANOM_UNSORTED] = 1);
}

TEST(memmap_fake_aligned)
{
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 1 * MiB, pages(3 * GiB - 1 * MiB));
	add(EFI_RESERVED_MEMORY, 3 * GiB, pages(1 * GiB));
	add(EFI_CONVENTIONAL_MEMORY, 4 * GiB, pages(2 * GiB));
	ASSERT_EQ(parse_with(fake_at(1 * GiB)), 0);
	EXPECT_RANGES({ 1 * MiB, 1 * GiB, RANGE_USABLE }, { 1 * GiB, 3 * GiB, RANGE_UNACCEPTED },
		      { 3 * GiB, 4 * GiB, RANGE_RESERVED }, { 4 * GiB, 6 * GiB, RANGE_UNACCEPTED });
	EXPECT_ANOMS();
	EXPECT_EQ(mm.conventional_bytes, 5 * GiB - 1 * MiB);
	EXPECT_EQ(mm.unaccepted_bytes, 4 * GiB);
	EXPECT_EQ(mm.fake_unaccepted_bytes, 4 * GiB);
	EXPECT_EQ(mm.unaccepted_ranges, 2);
	EXPECT_EQ(mm.bytes_by_type[EFI_UNACCEPTED_MEMORY], 0);

	/* At 0 everything conventional is unaccepted; above all RAM nothing changes. */
	ASSERT_EQ(parse_with(fake_at(0)), 0);
	EXPECT_EQ(ranges[0].kind, RANGE_UNACCEPTED);
	EXPECT_EQ(mm.fake_unaccepted_bytes, 5 * GiB - 1 * MiB);
	ASSERT_EQ(parse_with(fake_at(1 * TiB)), 0);
	EXPECT_EQ(mm.unaccepted_bytes, 0);
	EXPECT_EQ(mm.fake_unaccepted_bytes, 0);
	ASSERT_EQ(parse_with(fake_at(UINT64_MAX)), 0);
	EXPECT_EQ(mm.unaccepted_bytes, 0);
}

TEST(memmap_fake_unaligned)
{
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 1 * MiB, pages(3 * GiB - 1 * MiB));
	ASSERT_EQ(parse_with(fake_at(1 * GiB + 12345)), 0);
	/* The page holding the boundary stays accepted: never mark too much as unaccepted. */
	EXPECT_RANGES({ 1 * MiB, 1 * GiB + 16 * KiB, RANGE_USABLE },
		      { 1 * GiB + 16 * KiB, 3 * GiB, RANGE_UNACCEPTED });
	EXPECT_EQ(mm.fake_unaccepted_bytes, 2 * GiB - 16 * KiB);
	EXPECT_ANOMS();

	ASSERT_EQ(parse_with(fake_at(1 * GiB + 1)), 0);
	EXPECT_EQ(ranges[0].end, 1 * GiB + 4 * KiB);
	ASSERT_EQ(parse_with(fake_at(1 * GiB - 1)), 0);
	EXPECT_EQ(ranges[0].end, 1 * GiB);
}

TEST(memmap_fake_inside_other_types)
{
	/* The boundary falls inside boot-services data: that range keeps its kind. */
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(1 * GiB - 1 * MiB));
	add(EFI_BOOT_SERVICES_DATA, 1 * GiB - 1 * MiB, pages(2 * MiB));
	add(EFI_CONVENTIONAL_MEMORY, 1 * GiB + 1 * MiB, pages(1 * GiB - 1 * MiB));
	ASSERT_EQ(parse_with(fake_at(1 * GiB)), 0);
	EXPECT_RANGES({ 0, 1 * GiB - 1 * MiB, RANGE_USABLE },
		      { 1 * GiB - 1 * MiB, 1 * GiB + 1 * MiB, RANGE_RECLAIMABLE },
		      { 1 * GiB + 1 * MiB, 2 * GiB, RANGE_UNACCEPTED });
	EXPECT_EQ(mm.fake_unaccepted_bytes, 1 * GiB - 1 * MiB);
	ASSERT_EQ(parse_with(fake_at(1 * GiB + 12345)), 0);
	EXPECT_EQ(ranges[2].kind, RANGE_UNACCEPTED);
	EXPECT_EQ(ranges[2].start, 1 * GiB + 1 * MiB);

	/* In a hole, and next to real unaccepted memory: the two merge, typed as mixed. */
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(2 * GiB));
	add(EFI_UNACCEPTED_MEMORY, 2 * GiB, pages(1 * GiB));
	add(EFI_MEMORY_MAPPED_IO, 3 * GiB + 512 * MiB, pages(512 * MiB));
	add(EFI_CONVENTIONAL_MEMORY, 4 * GiB, pages(1 * GiB));
	ASSERT_EQ(parse_with(fake_at(1 * GiB)), 0);
	EXPECT_RANGES({ 0, 1 * GiB, RANGE_USABLE }, { 1 * GiB, 3 * GiB, RANGE_UNACCEPTED },
		      { 3 * GiB + 512 * MiB, 4 * GiB, RANGE_MMIO },
		      { 4 * GiB, 5 * GiB, RANGE_UNACCEPTED });
	EXPECT_EQ(ranges[1].efi_type, MIXED);
	EXPECT_EQ(mm.unaccepted_bytes, 3 * GiB);
	EXPECT_EQ(mm.fake_unaccepted_bytes, 2 * GiB);
	EXPECT_EQ(mm.unaccepted_ranges, 2);
	ASSERT_EQ(parse_with(fake_at(3 * GiB + 600 * MiB)), 0);	/* inside MMIO */
	EXPECT_EQ(mm.fake_unaccepted_bytes, 1 * GiB);
	EXPECT_EQ(ranges[0].kind, RANGE_USABLE);
	EXPECT_EQ(ranges[0].end, 2 * GiB);
}

TEST(memmap_no_platform)
{
	struct opts o = DEF;

	o.can_accept = false;
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(1 * GiB));
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB, pages(1 * GiB));
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, pages(4 * GiB));
	ASSERT_EQ(parse_with(o), 0);
	/* Nothing can accept it, so nothing may touch it: suspect, reported once. */
	EXPECT_RANGES({ 0, 1 * GiB, RANGE_USABLE }, { 1 * GiB, 2 * GiB, RANGE_SUSPECT },
		      { 4 * GiB, 8 * GiB, RANGE_SUSPECT });
	EXPECT_ANOMS([ANOM_UNACCEPTED_NO_PLATFORM] = 1);
	EXPECT_EQ(mm.log[0].start, 1 * GiB);
	EXPECT_EQ(mm.unaccepted_bytes, 0);
	EXPECT_EQ(mm.unaccepted_ranges, 0);
	EXPECT_EQ(mm.suspect_bytes, 5 * GiB);
	EXPECT_EQ(mm.bytes_by_type[EFI_UNACCEPTED_MEMORY], 5 * GiB);
}

/*
 * Found by the fuzzer: unaccepted memory next to another suspect range was merged into it,
 * its type read as mixed, and ANOM_UNACCEPTED_NO_PLATFORM was never reported.
 */
TEST(memmap_no_platform_next_to_suspect)
{
	struct opts o = DEF;

	o.can_accept = false;
	map_new(64);
	add(EFI_CONVENTIONAL_MEMORY, 0, pages(1 * GiB + 8 * MiB));
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB, pages(1 * GiB));
	ASSERT_EQ(parse_with(o), 0);
	EXPECT_RANGES({ 0, 1 * GiB, RANGE_USABLE }, { 1 * GiB, 2 * GiB, RANGE_SUSPECT });
	EXPECT_ANOMS([ANOM_OVERLAP_CONFLICT] = 1, [ANOM_UNACCEPTED_NO_PLATFORM] = 1);
	EXPECT_EQ(mm.suspect_bytes, 1 * GiB);

	/* The suspect neighbour after it, from an unaligned descriptor. */
	map_new(48);
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB, pages(1 * GiB));
	add(EFI_RESERVED_MEMORY, 2 * GiB + 0x10, 1);
	ASSERT_EQ(parse_with(o), 0);
	EXPECT_RANGES({ 1 * GiB, 2 * GiB + 8 * KiB, RANGE_SUSPECT });
	EXPECT_ANOMS([ANOM_UNALIGNED] = 1, [ANOM_UNACCEPTED_NO_PLATFORM] = 1);
}

/*
 * Found by the fuzzer: with a (nonsense) address width under 12 bits the limit was not
 * page aligned and a range was clipped to [0, 256). Nothing fits below such a limit.
 */
TEST(memmap_tiny_phys_bits)
{
	static const unsigned widths[] = { 0, 1, 8, 11 };

	for (unsigned i = 0; i < ARRAY_SIZE(widths); i++) {
		struct opts o = DEF;

		o.phys_bits = widths[i];
		map_new(40);
		add(EFI_CONVENTIONAL_MEMORY, 0, 16);
		add(EFI_UNACCEPTED_MEMORY, 64 * KiB, 16);
		ASSERT_EQ(parse_with(o), 0);
		EXPECT_EQ(mm.nranges, 0);
		EXPECT_ANOMS([ANOM_BEYOND_PHYS] = 2);
	}

	/* 12 bits: exactly the first page exists. */
	struct opts o = DEF;

	o.phys_bits = 12;
	map_new(40);
	add(EFI_CONVENTIONAL_MEMORY, 0, 16);
	ASSERT_EQ(parse_with(o), 0);
	EXPECT_RANGES({ 0, 4 * KiB, RANGE_SUSPECT });
	EXPECT_ANOMS([ANOM_BEYOND_PHYS] = 1);
}

TEST(memmap_unaccepted_touches_non_ram)
{
	map_new(48);
	add(EFI_RESERVED_MEMORY, 1 * GiB, 1);
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB + 4 * KiB, pages(1 * GiB - 4 * KiB));	/* touches */
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, pages(1 * GiB + 1 * MiB));
	add(EFI_MEMORY_MAPPED_IO, 5 * GiB + 1 * MiB, pages(1 * MiB));			/* touches */
	add(EFI_UNACCEPTED_MEMORY, 8 * GiB, pages(1 * GiB));
	add(EFI_BOOT_SERVICES_DATA, 9 * GiB, 1);		/* RAM: fine */
	add(EFI_CONVENTIONAL_MEMORY, 10 * GiB - 4 * KiB, 1);	/* RAM: fine */
	add(EFI_UNACCEPTED_MEMORY, 10 * GiB, pages(1 * GiB));
	add(EFI_ACPI_MEMORY_NVS, 11 * GiB + 2 * MiB, 1);	/* next unit: fine */
	ASSERT_EQ(parse(), 0);
	EXPECT_ANOMS([ANOM_UNACCEPTED_TOUCHES] = 2);
	EXPECT_EQ(mm.log[0].start, 1 * GiB + 4 * KiB);
	EXPECT_EQ(mm.log[1].start, 4 * GiB);
	EXPECT_EQ(mm.unaccepted_ranges, 4);
	EXPECT_EQ(mm.unaccepted_bytes, 1 * GiB - 4 * KiB + 1 * GiB + 1 * MiB + 2 * GiB);

	/* A suspect neighbour is not RAM either. */
	map_new(48);
	add(EFI_UNACCEPTED_MEMORY, 1 * GiB, pages(1 * GiB - 4 * KiB));
	add(EFI_CONVENTIONAL_MEMORY, 2 * GiB - 4 * KiB + 5, 1);	/* suspect [2G-4K, 2G+4K) */
	ASSERT_EQ(parse(), 0);
	EXPECT_ANOMS([ANOM_UNALIGNED] = 1, [ANOM_UNACCEPTED_TOUCHES] = 1);
}

TEST(memmap_find_cases)
{
	ovmf_map(48);
	ASSERT_EQ(parse(), 0);
	for (unsigned i = 0; i < mm.nranges; i++) {
		EXPECT(memmap_find(&mm, ranges[i].start) == &ranges[i]);
		EXPECT(memmap_find(&mm, ranges[i].end - 1) == &ranges[i]);
		EXPECT(memmap_find(&mm, ranges[i].start + (ranges[i].end - ranges[i].start) / 2) ==
		       &ranges[i]);
	}
	EXPECT(memmap_find(&mm, 0xa0000) == NULL);	/* legacy VGA hole */
	EXPECT(memmap_find(&mm, 0xfffff) == NULL);
	EXPECT(memmap_find(&mm, 0x80000000) == NULL);
	EXPECT(memmap_find(&mm, 6 * GiB) == NULL);
	EXPECT(memmap_find(&mm, UINT64_MAX) == NULL);
	EXPECT(memmap_find(&mm, 0xb0000000)->kind == RANGE_MMIO);

	map_new(48);
	ASSERT_EQ(parse(), 0);
	EXPECT(memmap_find(&mm, 0) == NULL);
	add(EFI_CONVENTIONAL_MEMORY, 1 * MiB, 1);
	ASSERT_EQ(parse(), 0);
	EXPECT(memmap_find(&mm, 0) == NULL);
	EXPECT(memmap_find(&mm, 1 * MiB) == &ranges[0]);
	EXPECT(memmap_find(&mm, 1 * MiB + 4 * KiB) == NULL);
}

/* memmap_hold: usable and reclaimable memory in the window becomes reserved; nothing else changes. */
TEST(memmap_hold_splits_usable_ranges_only)
{
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 1 * MiB, pages(15 * MiB));		/* [1 MiB, 16 MiB) */
	add(EFI_ACPI_MEMORY_NVS, 16 * MiB, 2);
	add(EFI_CONVENTIONAL_MEMORY, 16 * MiB + 8 * KiB, 4);
	ASSERT_EQ(parse(), 0);
	EXPECT_EQ(mm.nranges, 3);
	/* Inside one range: split in three. */
	EXPECT_EQ(memmap_hold(&mm, 8 * MiB, 8 * MiB + 0x6000), 0x6000);
	EXPECT_RANGES({ 1 * MiB, 8 * MiB, RANGE_USABLE }, { 8 * MiB, 8 * MiB + 0x6000, RANGE_RESERVED },
		      { 8 * MiB + 0x6000, 16 * MiB, RANGE_USABLE }, { 16 * MiB, 16 * MiB + 8 * KiB, RANGE_ACPI },
		      { 16 * MiB + 8 * KiB, 16 * MiB + 24 * KiB, RANGE_USABLE });
	EXPECT_EQ(mm.held_bytes, 0x6000);
	/* Again: already held, nothing more. */
	EXPECT_EQ(memmap_hold(&mm, 8 * MiB, 8 * MiB + 0x6000), 0);
	/* Across a non-usable range, and reaching the start and end of ranges: no empty pieces. */
	EXPECT_EQ(memmap_hold(&mm, 16 * MiB - 4 * KiB, 16 * MiB + 12 * KiB), 8 * KiB);
	EXPECT_RANGES({ 1 * MiB, 8 * MiB, RANGE_USABLE }, { 8 * MiB, 8 * MiB + 0x6000, RANGE_RESERVED },
		      { 8 * MiB + 0x6000, 16 * MiB - 4 * KiB, RANGE_USABLE },
		      { 16 * MiB - 4 * KiB, 16 * MiB, RANGE_RESERVED }, { 16 * MiB, 16 * MiB + 8 * KiB, RANGE_ACPI },
		      { 16 * MiB + 8 * KiB, 16 * MiB + 12 * KiB, RANGE_RESERVED },
		      { 16 * MiB + 12 * KiB, 16 * MiB + 24 * KiB, RANGE_USABLE });
	EXPECT_EQ(mm.held_bytes, 0x6000 + 8 * KiB);
	/* Outside all memory, or empty: nothing. */
	EXPECT_EQ(memmap_hold(&mm, 64 * MiB, 65 * MiB), 0);
	EXPECT_EQ(memmap_hold(&mm, 2 * MiB, 2 * MiB), 0);
	EXPECT_EQ(mm.nranges, 7);

	/* No room for the extra ranges: left as it is. */
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 1 * MiB, pages(15 * MiB));
	ASSERT_EQ(parse(), 0);
	mm.cap = mm.nranges + 1;
	EXPECT_EQ(memmap_hold(&mm, 8 * MiB, 9 * MiB), 0);
	EXPECT_EQ(memmap_hold(&mm, 1 * MiB, 2 * MiB), 1 * MiB);
	EXPECT_RANGES({ 1 * MiB, 2 * MiB, RANGE_RESERVED }, { 2 * MiB, 16 * MiB, RANGE_USABLE });

	/* Boot-services data is free once the kernel runs: held too, and stays reclaimable around. */
	map_new(48);
	add(EFI_BOOT_SERVICES_DATA, 1 * MiB, pages(15 * MiB));
	add(EFI_ACPI_MEMORY_NVS, 16 * MiB, 2);
	ASSERT_EQ(parse(), 0);
	EXPECT_EQ(memmap_hold(&mm, 8 * MiB, 8 * MiB + 4 * KiB), 4 * KiB);
	EXPECT_RANGES({ 1 * MiB, 8 * MiB, RANGE_RECLAIMABLE }, { 8 * MiB, 8 * MiB + 4 * KiB, RANGE_RESERVED },
		      { 8 * MiB + 4 * KiB, 16 * MiB, RANGE_RECLAIMABLE }, { 16 * MiB, 16 * MiB + 8 * KiB, RANGE_ACPI });
}

TEST(memmap_names)
{
	for (u32 k = 0; k < ANOM_KIND_COUNT; k++)
		EXPECT(memmap_anomaly_name(k) && strcmp(memmap_anomaly_name(k), "?") != 0);
	EXPECT(strcmp(memmap_anomaly_name(ANOM_KIND_COUNT), "?") == 0);
	for (u32 k = 0; k < RANGE_KIND_COUNT; k++)
		EXPECT(memmap_kind_name(k) && strcmp(memmap_kind_name(k), "?") != 0);
	EXPECT(strcmp(memmap_kind_name(RANGE_KIND_COUNT), "?") == 0);
	EXPECT(strcmp(efi_type_name(EFI_UNACCEPTED_MEMORY), "unaccepted") == 0);
	EXPECT(strcmp(efi_type_name(EFI_CONVENTIONAL_MEMORY), "conventional") == 0);
	EXPECT(strcmp(efi_type_name(16), "other") == 0);
}
