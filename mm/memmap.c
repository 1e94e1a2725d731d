/* SPDX-License-Identifier: MIT */
/* memaccept: memory map validation and normalisation (pure logic, host-tested and fuzzed). */
#include "mm/memmap.h"
#include "lib/sort.h"
#include "lib/string.h"

/*
 * How the map becomes ranges, and why:
 *
 * 1. Each descriptor is checked on its own. One whose extent cannot be trusted (unaligned
 *    start, a page count that wraps, an end past the CPU's address width) is kept as a
 *    RANGE_SUSPECT range over everything it claims, rounded outward: the kernel will
 *    neither use nor accept any of it. Descriptors with zero pages describe nothing.
 * 2. The address space is cut at every descriptor edge into elementary intervals, and each
 *    interval takes the kind of the descriptor(s) covering it. Two descriptors covering
 *    the same bytes with different types make that interval suspect: if we believed
 *    "unaccepted" we could accept memory that already holds data (a double accept loses
 *    its contents); if we believed "conventional" we could touch memory that is not
 *    accepted. The descriptors need not be sorted.
 * 3. Neighbouring intervals of the same kind are merged, so adjacent unaccepted
 *    descriptors become one range and can fill a 2 MiB unit together.
 * 4. fake_unaccepted_start turns usable memory at and above the given address into
 *    unaccepted memory (the sim platform accepts it in software).
 */

struct sdesc {
	u64 start, end;
	u32 type, kind;
};

struct einfo {
	u32 kind, type, count;
};

#define KIND_HOLE 0xffffffffu
#define TYPE_MIXED 0xffffffffu

size_t memmap_scratch_bytes(u64 ndesc)
{
	return (size_t)ndesc * (sizeof(struct sdesc) + 2 * sizeof(u64) + 2 * sizeof(struct einfo)) + 64;
}

static void anomaly(struct memmap *m, u32 kind, u32 desc, u64 start, u64 end)
{
	if (m->anomalies < MEMMAP_ANOMALY_LOG)
		m->log[m->anomalies] = (struct map_anomaly_entry){ kind, desc, start, end };
	m->anomalies++;
	m->anomaly_count[kind]++;
}

static u32 kind_of_type(u32 type)
{
	switch (type) {
	case EFI_CONVENTIONAL_MEMORY:
		return RANGE_USABLE;
	case EFI_UNACCEPTED_MEMORY:
		return RANGE_UNACCEPTED;
	case EFI_LOADER_DATA:
	case EFI_BOOT_SERVICES_CODE:
	case EFI_BOOT_SERVICES_DATA:
		return RANGE_RECLAIMABLE;
	case EFI_LOADER_CODE:
		return RANGE_IMAGE;
	case EFI_RUNTIME_SERVICES_CODE:
	case EFI_RUNTIME_SERVICES_DATA:
		return RANGE_RUNTIME;
	case EFI_ACPI_RECLAIM_MEMORY:
	case EFI_ACPI_MEMORY_NVS:
		return RANGE_ACPI;
	case EFI_MEMORY_MAPPED_IO:
	case EFI_MEMORY_MAPPED_IO_PORT_SPACE:
		return RANGE_MMIO;
	default:
		return RANGE_RESERVED;
	}
}

static bool kind_is_ram(u32 kind)
{
	return kind == RANGE_USABLE || kind == RANGE_UNACCEPTED || kind == RANGE_RECLAIMABLE ||
	       kind == RANGE_IMAGE;
}

/* First index i with a[i] >= key. */
static size_t lower_bound(const u64 *a, size_t n, u64 key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Append [start, end) of `kind`, merging with the previous range when they touch. */
static int emit(struct memmap *m, u64 start, u64 end, u32 kind, u32 type)
{
	if (start >= end)
		return 0;
	if (m->nranges) {
		struct mem_range *last = &m->ranges[m->nranges - 1];

		if (last->end == start && last->kind == kind) {
			last->end = end;
			if (last->efi_type != type)
				last->efi_type = TYPE_MIXED;
			return 0;
		}
	}
	if (m->nranges == m->cap)
		return -1;
	m->ranges[m->nranges++] = (struct mem_range){ start, end, kind, type };
	return 0;
}

/* Step 1: check one descriptor; returns false if it describes nothing at all. */
static bool read_desc(const struct memmap_input *in, struct memmap *m, u32 i,
		      const struct efi_mem_desc *d, u64 limit, struct sdesc *out)
{
	u64 start = d->phys_start, pages = d->num_pages;

	if (pages == 0) {
		anomaly(m, ANOM_ZERO_PAGES, i, start, start);
		return false;
	}
	out->type = d->type;
	out->kind = kind_of_type(d->type);
	if (d->type >= EFI_MEMORY_TYPE_COUNT && d->type < EFI_OEM_TYPE_FIRST)
		anomaly(m, ANOM_UNKNOWN_TYPE, i, start, start);

	/* Overflow first: every later check needs a well-defined end. */
	if (pages > (UINT64_MAX - start) >> EFI_PAGE_SHIFT) {
		anomaly(m, ANOM_OVERFLOW, i, start, UINT64_MAX);
		out->start = ALIGN_DOWN(start, PAGE_SIZE);
		out->end = ALIGN_DOWN(limit, PAGE_SIZE);
		out->kind = RANGE_SUSPECT;
		return out->start < out->end;
	}
	u64 end = start + (pages << EFI_PAGE_SHIFT);

	out->start = start;
	out->end = end;
	if (!IS_ALIGNED(start, PAGE_SIZE)) {
		anomaly(m, ANOM_UNALIGNED, i, start, end);
		out->start = ALIGN_DOWN(start, PAGE_SIZE);
		out->end = end > ALIGN_DOWN(UINT64_MAX, PAGE_SIZE) ? ALIGN_DOWN(UINT64_MAX, PAGE_SIZE)
								   : ALIGN_UP(end, PAGE_SIZE);
		out->kind = RANGE_SUSPECT;
	}
	if (out->end > limit) {
		anomaly(m, ANOM_BEYOND_PHYS, i, start, end);
		if (out->start >= limit)
			return false;	/* no such memory can exist: nothing to avoid either */
		out->end = limit;
		out->kind = RANGE_SUSPECT;
	}
	if (out->kind != RANGE_SUSPECT && d->type < EFI_MEMORY_TYPE_COUNT)
		m->bytes_by_type[d->type] += end - start;
	else if (out->kind != RANGE_SUSPECT)
		m->bytes_by_type[EFI_MEMORY_TYPE_COUNT] += end - start;
	if (out->kind != RANGE_SUSPECT && d->type == EFI_CONVENTIONAL_MEMORY)
		m->conventional_bytes += end - start;
	return true;
}

/* Does any non-RAM range share the 2 MiB unit(s) at the edges of unaccepted range r? */
static bool touches_non_ram(const struct memmap *m, unsigned r)
{
	const struct mem_range *u = &m->ranges[r];
	u64 lo = ALIGN_DOWN(u->start, UNIT_SIZE);
	u64 hi = u->end > ALIGN_DOWN(UINT64_MAX, UNIT_SIZE) ? UINT64_MAX : ALIGN_UP(u->end, UNIT_SIZE);

	for (unsigned j = r; j-- > 0 && m->ranges[j].end > lo;)
		if (!kind_is_ram(m->ranges[j].kind))
			return true;
	for (unsigned j = r + 1; j < m->nranges && m->ranges[j].start < hi; j++)
		if (!kind_is_ram(m->ranges[j].kind))
			return true;
	return false;
}

int memmap_parse(const struct memmap_input *in, struct memmap *m, struct mem_range *ranges,
		 unsigned cap, void *scratch, size_t scratch_size)
{
	memset(m, 0, sizeof(*m));
	m->ranges = ranges;
	m->cap = cap;
	m->desc_size = in->desc_size;
	m->desc_version = in->desc_version;

	if (in->desc_size < EFI_MEM_DESC_SIZE) {
		/* Descriptors would overlap each other's fields: nothing in the map is readable. */
		anomaly(m, ANOM_DESC_SIZE_SMALL, UINT32_MAX, in->desc_size, 0);
		m->unusable = true;
		return -1;
	}
	if (in->desc_size % 8)
		anomaly(m, ANOM_DESC_SIZE_ODD, UINT32_MAX, in->desc_size, 0);
	if (in->desc_version != EFI_MEM_DESC_VERSION)
		anomaly(m, ANOM_DESC_VERSION, UINT32_MAX, in->desc_version, 0);
	if (in->size % in->desc_size)
		anomaly(m, ANOM_MAP_SIZE, UINT32_MAX, in->size, in->desc_size);

	u64 n = in->size / in->desc_size;

	m->descriptors = (u32)MIN(n, (u64)UINT32_MAX);
	if (memmap_scratch_bytes(n) > scratch_size || 2 * n + 4 > cap) {
		/* Dropping descriptors could drop a reserved range: refuse the whole map. */
		anomaly(m, ANOM_TOO_MANY, UINT32_MAX, n, 0);
		m->unusable = true;
		return -1;
	}

	struct sdesc *sd = scratch;
	u64 *bounds = (u64 *)(sd + n);
	struct einfo *ei = (struct einfo *)(bounds + 2 * n);
	/* Page-aligned, so that clipping keeps ranges aligned even for a width under 12 bits. */
	u64 limit = ALIGN_DOWN(in->phys_bits >= 64 ? UINT64_MAX : 1ULL << in->phys_bits, PAGE_SIZE);
	size_t nsd = 0;
	bool unsorted = false;
	u64 prev_start = 0;

	for (u64 i = 0; i < n; i++) {
		struct efi_mem_desc d;

		memcpy(&d, (const u8 *)in->buf + i * in->desc_size, sizeof(d));
		if (i && d.phys_start < prev_start && !unsorted) {
			unsorted = true;
			anomaly(m, ANOM_UNSORTED, (u32)i, d.phys_start, prev_start);
		}
		prev_start = d.phys_start;
		if (read_desc(in, m, (u32)i, &d, limit, &sd[nsd]))
			nsd++;
	}

	/* Step 2: elementary intervals between all descriptor edges. */
	size_t nb = 0;

	for (size_t i = 0; i < nsd; i++) {
		bounds[nb++] = sd[i].start;
		bounds[nb++] = sd[i].end;
	}
	sort_u64(bounds, nb);
	size_t nu = 0;

	for (size_t i = 0; i < nb; i++)
		if (nu == 0 || bounds[nu - 1] != bounds[i])
			bounds[nu++] = bounds[i];
	for (size_t k = 0; k + 1 < nu; k++)
		ei[k] = (struct einfo){ KIND_HOLE, 0, 0 };

	for (size_t i = 0; i < nsd; i++) {
		size_t k0 = lower_bound(bounds, nu, sd[i].start);
		size_t k1 = lower_bound(bounds, nu, sd[i].end);
		bool same = false, conflict = false;

		for (size_t k = k0; k < k1; k++) {
			struct einfo *e = &ei[k];

			if (e->count++ == 0) {
				e->kind = sd[i].kind;
				e->type = sd[i].type;
				continue;
			}
			if (e->type != sd[i].type || e->kind == RANGE_SUSPECT || sd[i].kind == RANGE_SUSPECT) {
				conflict |= e->type != sd[i].type;
				e->kind = RANGE_SUSPECT;
			} else {
				same = true;
			}
		}
		if (conflict)
			anomaly(m, ANOM_OVERLAP_CONFLICT, (u32)i, sd[i].start, sd[i].end);
		else if (same)
			anomaly(m, ANOM_OVERLAP, (u32)i, sd[i].start, sd[i].end);
	}

	/* Steps 3 and 4: merge, turning usable memory above fake_start into unaccepted. */
	bool reported_no_platform = false;

	for (size_t k = 0; k + 1 < nu; k++) {
		u64 s = bounds[k], e = bounds[k + 1];
		u32 kind = ei[k].kind;

		if (kind == KIND_HOLE)
			continue;
		/* Checked per interval: once merged with a neighbour, its type may read as mixed. */
		if (ei[k].type == EFI_UNACCEPTED_MEMORY && !in->can_accept) {
			if (kind == RANGE_UNACCEPTED)
				kind = RANGE_SUSPECT;
			if (!reported_no_platform) {
				reported_no_platform = true;
				anomaly(m, ANOM_UNACCEPTED_NO_PLATFORM, UINT32_MAX, s, e);
			}
		}
		if (kind == RANGE_USABLE && in->fake_set && e > in->fake_start) {
			u64 cut = MAX(s, ALIGN_UP(in->fake_start, PAGE_SIZE));

			if (emit(m, s, MIN(cut, e), RANGE_USABLE, ei[k].type) ||
			    emit(m, MIN(cut, e), e, RANGE_UNACCEPTED, ei[k].type))
				return -1;
			m->fake_unaccepted_bytes += e - MIN(cut, e);
			continue;
		}
		if (emit(m, s, e, kind, ei[k].type))
			return -1;
	}

	for (unsigned r = 0; r < m->nranges; r++) {
		struct mem_range *x = &m->ranges[r];

		if (x->kind == RANGE_SUSPECT)
			m->suspect_bytes += x->end - x->start;
		if (x->kind != RANGE_UNACCEPTED)
			continue;
		m->unaccepted_bytes += x->end - x->start;
		m->unaccepted_ranges++;
		if (touches_non_ram(m, r))
			anomaly(m, ANOM_UNACCEPTED_TOUCHES, UINT32_MAX, x->start, x->end);
	}
	return 0;
}

u64 memmap_hold(struct memmap *m, u64 start, u64 end)
{
	u64 held = 0;

	start = ALIGN_DOWN(start, PAGE_SIZE);
	end = ALIGN_UP(end, PAGE_SIZE);
	for (unsigned r = 0; r < m->nranges; r++) {
		struct mem_range x = m->ranges[r];
		u64 s = MAX(x.start, start), e = MIN(x.end, end);
		unsigned pieces = 1 + (x.start < s) + (e < x.end), k = r;

		if ((x.kind != RANGE_USABLE && x.kind != RANGE_RECLAIMABLE) || s >= e ||
		    m->nranges + pieces - 1 > m->cap)
			continue;
		memmove(&m->ranges[r + pieces], &m->ranges[r + 1], (m->nranges - r - 1) * sizeof(x));
		if (x.start < s)
			m->ranges[k++] = (struct mem_range){ x.start, s, x.kind, x.efi_type };
		m->ranges[k++] = (struct mem_range){ s, e, RANGE_RESERVED, x.efi_type };
		if (e < x.end)
			m->ranges[k++] = (struct mem_range){ e, x.end, x.kind, x.efi_type };
		m->nranges += pieces - 1;
		held += e - s;
		r = k - 1;
	}
	m->held_bytes += held;
	return held;
}

const struct mem_range *memmap_find(const struct memmap *m, u64 addr)
{
	unsigned lo = 0, hi = m->nranges;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (m->ranges[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->nranges && m->ranges[lo].start <= addr)
		return &m->ranges[lo];
	return NULL;
}

const char *memmap_anomaly_name(u32 kind)
{
	static const char *const names[ANOM_KIND_COUNT] = {
		[ANOM_DESC_SIZE_SMALL] = "desc_size_too_small",
		[ANOM_DESC_SIZE_ODD] = "desc_size_not_multiple_of_8",
		[ANOM_DESC_VERSION] = "unknown_desc_version",
		[ANOM_MAP_SIZE] = "map_size_not_multiple_of_desc_size",
		[ANOM_UNALIGNED] = "unaligned_start",
		[ANOM_ZERO_PAGES] = "zero_pages",
		[ANOM_OVERFLOW] = "page_count_overflows",
		[ANOM_BEYOND_PHYS] = "beyond_phys_address_width",
		[ANOM_UNSORTED] = "unsorted",
		[ANOM_OVERLAP] = "overlap_same_type",
		[ANOM_OVERLAP_CONFLICT] = "overlap_conflicting_types",
		[ANOM_UNKNOWN_TYPE] = "unknown_type",
		[ANOM_UNACCEPTED_TOUCHES] = "unaccepted_touches_non_ram",
		[ANOM_TOO_MANY] = "too_many_descriptors",
		[ANOM_UNACCEPTED_NO_PLATFORM] = "unaccepted_but_no_platform",
	};
	return kind < ANOM_KIND_COUNT ? names[kind] : "?";
}

const char *memmap_kind_name(u32 kind)
{
	static const char *const names[RANGE_KIND_COUNT] = {
		[RANGE_USABLE] = "usable", [RANGE_UNACCEPTED] = "unaccepted",
		[RANGE_RECLAIMABLE] = "reclaimable", [RANGE_IMAGE] = "image",
		[RANGE_RUNTIME] = "runtime", [RANGE_ACPI] = "acpi", [RANGE_MMIO] = "mmio",
		[RANGE_RESERVED] = "reserved", [RANGE_SUSPECT] = "suspect",
	};
	return kind < RANGE_KIND_COUNT ? names[kind] : "?";
}

const char *efi_type_name(u32 type)
{
	static const char *const names[EFI_MEMORY_TYPE_COUNT] = {
		"reserved", "loader_code", "loader_data", "bs_code", "bs_data", "rt_code",
		"rt_data", "conventional", "unusable", "acpi_reclaim", "acpi_nvs", "mmio",
		"mmio_port", "pal_code", "persistent", "unaccepted",
	};
	return type < EFI_MEMORY_TYPE_COUNT ? names[type] : "other";
}
