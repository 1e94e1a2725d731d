/* SPDX-License-Identifier: MIT */
/* memaccept: the kernel's identity map (virtual address = physical address). */
#ifndef ARCH_X86_PAGING_H
#define ARCH_X86_PAGING_H

#include "include/types.h"

/* Page-table entry bits (Intel SDM vol. 3A, 4.5; AMD APM vol. 2, 5.3). */
#define PTE_P (1ULL << 0)
#define PTE_W (1ULL << 1)
#define PTE_A (1ULL << 5)	/* accessed: set by the CPU on a walk */
#define PTE_D (1ULL << 6)	/* dirty (leaves): set by the CPU on a write */
#define PTE_PS (1ULL << 7)	/* a 2 MiB or 1 GiB leaf */
#define PTE_ADDR_MASK 0x000ffffffffff000ULL
#define CR4_LA57 (1ULL << 12)	/* five-level paging (AMD APM vol. 2, 3.1.3) */

/* What a mapping is for; paging.c turns it into entry bits. */
enum map_kind {
	MAP_RAM,	/* private memory: gets the platform's encryption bit (C-bit on SNP) */
	MAP_SHARED,	/* memory shared with the host (SNP GHCB) and MMIO: no encryption bit */
};

/* Returns the physical address of a zeroed 4 KiB page, or 0. */
typedef u64 (*pt_alloc_fn)(void);

/*
 * Start an empty page-table tree. `private_bits` is OR-ed into every MAP_RAM entry and
 * every table pointer (page tables are private memory too); `use_1g` allows 1 GiB leaves.
 */
void paging_init(pt_alloc_fn alloc, u64 private_bits, bool use_1g);
/* Identity-map [start, end) (4 KiB aligned) with the largest pages that fit. 0 or -1. */
int paging_map(u64 start, u64 end, enum map_kind kind);
/*
 * Remove [start, end) from the map, splitting large pages; flushes this CPU's TLB. Only
 * while no other CPU runs: memaccept takes no interrupts, so it has no IPI to make other
 * CPUs flush; once paging_shared() was called this stops the guest instead.
 */
int paging_unmap(u64 start, u64 end);
/*
 * Other CPUs use the tree from now on. Only adding mappings stays allowed: a CPU
 * caches no translation and no paging-structure entry from a not-present entry, so
 * changing P from 0 to 1 needs no invalidation on any CPU (Intel SDM vol. 3A,
 * 4.10.4.3 "Optional Invalidation"); the map lock orders the write before any use.
 */
void paging_shared(void);
/* Whether paging_shared() was called: from then on nothing may be unmapped. */
bool paging_is_shared(void);
/* Load the new tree into CR3 (wrapped in a PML5 when the firmware runs with LA57). */
void paging_activate(void);
/* Is addr mapped? Returns the leaf size in bytes, or 0. */
u64 paging_lookup(u64 addr);
/* Page-table pages allocated so far. */
u64 paging_table_pages(void);

#endif
