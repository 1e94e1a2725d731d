/* SPDX-License-Identifier: MIT */
/* memaccept: the firmware memory map, validated and turned into sorted, disjoint ranges. */
#ifndef MM_MEMMAP_H
#define MM_MEMMAP_H

#include "include/types.h"

/*
 * UEFI 2.9 section 7.2 (GetMemoryMap): EFI_MEMORY_DESCRIPTOR. The firmware's descriptor
 * stride (desc_size) may be larger than this; fields beyond it are ignored.
 */
struct efi_mem_desc {
	u32 type;
	u32 pad;
	u64 phys_start;
	u64 virt_start;
	u64 num_pages;
	u64 attribute;
};
#define EFI_MEM_DESC_SIZE 40		/* sizeof(struct efi_mem_desc) */
#define EFI_MEM_DESC_VERSION 1		/* EFI_MEMORY_DESCRIPTOR_VERSION */
#define EFI_PAGE_SHIFT 12

/* EFI_MEMORY_TYPE values (UEFI 2.9 table 7-6); 15 was added by UEFI 2.9. */
enum efi_memory_type {
	EFI_RESERVED_MEMORY = 0,
	EFI_LOADER_CODE = 1,
	EFI_LOADER_DATA = 2,
	EFI_BOOT_SERVICES_CODE = 3,
	EFI_BOOT_SERVICES_DATA = 4,
	EFI_RUNTIME_SERVICES_CODE = 5,
	EFI_RUNTIME_SERVICES_DATA = 6,
	EFI_CONVENTIONAL_MEMORY = 7,
	EFI_UNUSABLE_MEMORY = 8,
	EFI_ACPI_RECLAIM_MEMORY = 9,
	EFI_ACPI_MEMORY_NVS = 10,
	EFI_MEMORY_MAPPED_IO = 11,
	EFI_MEMORY_MAPPED_IO_PORT_SPACE = 12,
	EFI_PAL_CODE = 13,
	EFI_PERSISTENT_MEMORY = 14,
	EFI_UNACCEPTED_MEMORY = 15,
	EFI_MEMORY_TYPE_COUNT = 16,
	/* 0x70000000..0x7fffffff OEM, 0x80000000..0xffffffff OS loader: reserved to us. */
	EFI_OEM_TYPE_FIRST = 0x70000000,
};

/* What the kernel may do with a range. */
enum range_kind {
	RANGE_USABLE,		/* accepted free RAM (conventional) */
	RANGE_UNACCEPTED,	/* RAM the guest must accept before use */
	RANGE_RECLAIMABLE,	/* boot-services and loader data: free once the kernel stops using it */
	RANGE_IMAGE,		/* loader code: memaccept itself */
	RANGE_RUNTIME,		/* EFI runtime services: keep mapped, never touch */
	RANGE_ACPI,		/* ACPI tables and NVS: keep */
	RANGE_MMIO,
	RANGE_RESERVED,
	RANGE_SUSPECT,		/* state in doubt (an anomaly): never used, never accepted */
	RANGE_KIND_COUNT,
};

struct mem_range {
	u64 start, end;		/* [start, end), 4 KiB aligned */
	u32 kind;		/* enum range_kind */
	u32 efi_type;		/* firmware type of the first descriptor; 0xffffffff if mixed */
};

/* Every kind of anomaly the validator reports, with the reaction in memmap.c. */
enum map_anomaly {
	ANOM_DESC_SIZE_SMALL,	/* desc_size < 40: the map cannot be read at all */
	ANOM_DESC_SIZE_ODD,	/* desc_size not a multiple of 8 */
	ANOM_DESC_VERSION,	/* descriptor version is not 1 */
	ANOM_MAP_SIZE,		/* map size not a multiple of desc_size: tail ignored */
	ANOM_UNALIGNED,		/* physical start not 4 KiB aligned */
	ANOM_ZERO_PAGES,	/* NumberOfPages == 0 */
	ANOM_OVERFLOW,		/* start + pages * 4 KiB wraps around */
	ANOM_BEYOND_PHYS,	/* ends above the CPU's physical address width */
	ANOM_UNSORTED,		/* descriptors not in ascending address order */
	ANOM_OVERLAP,		/* two descriptors describe the same address, same type */
	ANOM_OVERLAP_CONFLICT,	/* ... with different types */
	ANOM_UNKNOWN_TYPE,	/* type 16..0x6fffffff */
	ANOM_UNACCEPTED_TOUCHES,/* unaccepted memory shares a 2 MiB unit with non-RAM */
	ANOM_TOO_MANY,		/* more descriptors than the kernel can hold */
	ANOM_UNACCEPTED_NO_PLATFORM, /* unaccepted memory, but nothing can accept it */
	ANOM_KIND_COUNT,
};

#define MEMMAP_ANOMALY_LOG 16

struct map_anomaly_entry {
	u32 kind;		/* enum map_anomaly */
	u32 desc;		/* descriptor index, or 0xffffffff for the whole map */
	u64 start, end;		/* the addresses concerned */
};

struct memmap {
	/* Output ranges (caller-provided storage). */
	struct mem_range *ranges;
	unsigned nranges, cap;

	/* What the firmware reported, for the `firmware` event. */
	u32 descriptors;
	u32 desc_version;
	u64 desc_size;
	u64 bytes_by_type[EFI_MEMORY_TYPE_COUNT + 1];	/* last slot: all other types */
	u64 conventional_bytes;		/* type 7, before fake_unaccepted_start */
	u64 unaccepted_bytes;		/* type 15, plus what fake_unaccepted_start turned */
	u32 unaccepted_ranges;		/* disjoint unaccepted ranges after normalisation */
	u64 fake_unaccepted_bytes;	/* of unaccepted_bytes, made so by the option */
	u64 suspect_bytes;		/* memory never used because of an anomaly */
	u64 held_bytes;			/* usable memory memmap_hold kept out of use */

	u32 anomalies;			/* total count */
	u32 anomaly_count[ANOM_KIND_COUNT];
	struct map_anomaly_entry log[MEMMAP_ANOMALY_LOG];	/* the first few, with addresses */
	bool unusable;			/* the map cannot be trusted at all */
};

struct memmap_input {
	const void *buf;
	u64 size;			/* bytes of descriptors */
	u64 desc_size;
	u32 desc_version;
	unsigned phys_bits;		/* CPU physical address width */
	bool fake_set;			/* fake_unaccepted_start= given (and allowed) */
	u64 fake_start;
	bool can_accept;		/* false: unaccepted memory becomes RANGE_SUSPECT */
};

/*
 * Validate the raw map and build sorted, disjoint, merged ranges into `ranges` (capacity
 * `cap`). `scratch` must hold 3 * (number of descriptors) u64 values plus one per
 * descriptor of struct memmap_scratch_desc; memmap_scratch_bytes() says how much.
 * Returns 0, or -1 when the map is unusable (out->unusable, with the reason logged).
 * Pure logic: also built into the host tests and the fuzzer.
 */
size_t memmap_scratch_bytes(u64 ndesc);
int memmap_parse(const struct memmap_input *in, struct memmap *out, struct mem_range *ranges,
		 unsigned cap, void *scratch, size_t scratch_size);

const char *memmap_anomaly_name(u32 kind);
const char *memmap_kind_name(u32 kind);
const char *efi_type_name(u32 type);

/* The range containing addr, or NULL. Binary search. */
/*
 * Keep the usable and reclaimable memory in [start, end) out of use: those parts become
 * RANGE_RESERVED (splitting ranges as needed) and are added to held_bytes. For memory a
 * firmware is known to still use although its map calls it free (or boot-services data,
 * free once the kernel runs). Returns the bytes held; a part that
 * would need more ranges than the storage has is left as it is.
 */
u64 memmap_hold(struct memmap *m, u64 start, u64 end);
const struct mem_range *memmap_find(const struct memmap *m, u64 addr);

#endif
