/* SPDX-License-Identifier: MIT */
/* memaccept: four-level identity map; 1 GiB, 2 MiB and 4 KiB leaves. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/observer.h"
#include "arch/x86/paging.h"
#include "include/panic.h"
#include "lib/string.h"

#define LEVELS 4
#define ENTRIES 512

static pt_alloc_fn alloc_page;
static u64 private_bits;
static bool allow_1g;
static u64 *root;		/* PML4 */
static u64 table_pages;

static inline u64 *table_at(u64 entry)
{
	return (u64 *)(uintptr_t)(entry & PTE_ADDR_MASK & ~private_bits);
}

static inline u64 level_size(int level)
{
	return 1ULL << (PAGE_SHIFT + 9 * (level - 1));
}

static inline unsigned index_of(u64 addr, int level)
{
	return (addr >> (PAGE_SHIFT + 9 * (level - 1))) & (ENTRIES - 1);
}

static u64 *new_table(void)
{
	u64 pa = alloc_page();

	if (!pa)
		return NULL;
	table_pages++;
	/* alloc_page() hands out zeroed pages: every entry starts not present. */
	return (u64 *)(uintptr_t)pa;
}

static u64 table_entry(u64 *t)
{
	/* Writable, present; the leaves decide what is really allowed. */
	return (u64)(uintptr_t)t | private_bits | PTE_W | PTE_P;
}

void paging_init(pt_alloc_fn alloc, u64 cbits, bool use_1g)
{
	alloc_page = alloc;
	private_bits = cbits;
	allow_1g = use_1g;
	table_pages = 0;
	root = new_table();
	if (!root)
		panic("paging_init: no memory for the top-level table");
}

/* Next-level table under *e, created if absent; a large leaf there is split first. */
static u64 *next_table(u64 *e, int level)
{
	if (!(*e & PTE_P)) {
		u64 *t = new_table();

		if (!t)
			return NULL;
		*e = table_entry(t);
		return t;
	}
	if (!(*e & PTE_PS) || level == 1)
		return table_at(*e);

	/* Split a 1 GiB or 2 MiB leaf into 512 leaves of the next size, same attributes. */
	u64 *t = new_table();

	if (!t)
		return NULL;
	u64 base = *e & PTE_ADDR_MASK & ~private_bits & ~(level_size(level) - 1);
	u64 attrs = *e & ~(PTE_ADDR_MASK & ~private_bits);
	u64 child = level_size(level - 1);

	if (level - 1 == 1)
		attrs &= ~PTE_PS;	/* 4 KiB leaves have no PS bit (bit 7 is PAT there) */
	for (unsigned i = 0; i < ENTRIES; i++)
		t[i] = (base + i * child) | attrs;
	*e = table_entry(t);
	return t;
}

/* Walk [start, end) at `level`: install leaves with the attribute bits `leaf`, or clear them (unmap). */
static int walk(u64 *t, int level, u64 start, u64 end, u64 leaf, bool unmap)
{
	u64 size = level_size(level);

	for (u64 a = start; a < end;) {
		u64 next = ALIGN_DOWN(a, size) + size;
		u64 stop = next < end && next != 0 ? next : end;
		u64 *e = &t[index_of(a, level)];
		bool whole = IS_ALIGNED(a, size) && stop - a == size;
		bool leaf_ok = level == 1 || level == 2 || (level == 3 && allow_1g);

		if (whole && leaf_ok && (leaf || unmap) && level != 4) {
			*e = unmap ? 0 : (a | leaf | (level > 1 ? PTE_PS : 0));
		} else if (unmap && !(*e & PTE_P)) {
			/* nothing mapped here */
		} else {
			u64 *sub = next_table(e, level);

			if (!sub || walk(sub, level - 1, a, stop, leaf, unmap))
				return -1;
		}
		a = stop;
		if (a == 0)
			break;	/* wrapped at the top of the address space */
	}
	return 0;
}

int paging_map(u64 start, u64 end, enum map_kind kind)
{
	u64 leaf = PTE_P | PTE_W | (kind == MAP_RAM ? private_bits : 0);

	if (!IS_ALIGNED(start, PAGE_SIZE) || !IS_ALIGNED(end, PAGE_SIZE) || start >= end)
		panic("paging_map: bad range [%llx, %llx)", (unsigned long long)start,
		      (unsigned long long)end);
	if (walk(root, LEVELS, start, end, leaf, false))
		return -1;
	/* Test image: what the leaves say, private (encrypted) or shared, for the sanitizer. */
	emu_note_mapping(start, end, private_bits && kind == MAP_SHARED ? OBS_MAP_SHARED
									 : OBS_MAP_PRIVATE);
	return 0;
}

static bool shared;

void paging_shared(void)
{
	shared = true;
}

bool paging_is_shared(void)
{
	return shared;
}

int paging_unmap(u64 start, u64 end)
{
	if (!IS_ALIGNED(start, PAGE_SIZE) || !IS_ALIGNED(end, PAGE_SIZE) || start >= end)
		panic("paging_unmap: bad range [%llx, %llx)", (unsigned long long)start,
		      (unsigned long long)end);
	/* Other CPUs could keep using the old translations: no silent stale TLBs. */
	if (shared)
		panic("paging_unmap: [%llx, %llx) while other CPUs run; they cannot be made to "
		      "flush their TLBs", (unsigned long long)start, (unsigned long long)end);
	if (walk(root, LEVELS, start, end, 0, true))
		return -1;
	emu_note_mapping(start, end, OBS_MAP_NONE);
	/* A reload of CR3 is simpler than invlpg per page and happens rarely. */
	write_cr3(read_cr3());
	return 0;
}

void paging_activate(void)
{
	u64 top = (u64)(uintptr_t)root;

	if (read_cr4() & CR4_LA57) {
		/* The firmware runs with five-level paging: put our PML4 under entry 0 of a PML5. */
		u64 *pml5 = new_table();

		if (!pml5)
			panic("paging_activate: no memory for a PML5");
		pml5[0] = table_entry(root);
		top = (u64)(uintptr_t)pml5;
	}
	/*
	 * CR3 takes the encryption bit too (the top table is private memory), but only where
	 * CR3 has address bits: the emulator's C-bit sits in the PTEs' ignored bits 52-58,
	 * which CR3 reserves.
	 */
	write_cr3(top | (private_bits & PTE_ADDR_MASK));
}

u64 paging_lookup(u64 addr)
{
	u64 *t = root;

	for (int level = LEVELS; level >= 1; level--) {
		u64 e = t[index_of(addr, level)];

		if (!(e & PTE_P))
			return 0;
		if (level == 1 || (e & PTE_PS))
			return level_size(level);
		t = table_at(e);
	}
	return 0;
}

u64 paging_table_pages(void)
{
	return table_pages;
}
