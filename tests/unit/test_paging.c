/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the identity map (arch/x86/paging.c), private bit in and out of the address field. */
#include <string.h>
#include "arch/x86/paging.h"
#include "tests/unit/unit.h"

/*
 * Where the private bit can sit. The emulator puts the SNP C-bit at 56, in the PTEs'
 * ignored bits 52-58. Real EPYC parts report it at 51 (CPUID 0x8000001F EBX[5:0], AMD APM
 * vol. 2, 15.34.1 and 7.10.1) and shrink the physical address width, so the bit lies in
 * the address field (bits 12-51) and must be told apart from address bits. 47 is the C-bit
 * of a part with 48 address bits, which leaves 47: nothing is mapped at or above 2^47
 * then. TDX gives
 * paging.c no bits at all (its cc_platform leaves private_pte_bits 0): the TD's shared bit,
 * GPAW-1 from TDG.VP.INFO, would be set on shared mappings, the opposite sense, but
 * paging.c never sees it, so the 0 case is the TDX one.
 */
static const u64 private_cases[] = { 0, 1ULL << 56, 1ULL << 51, 1ULL << 47 };

#define KiB4 PAGE_SIZE
#define MiB2 (2 * MiB)
#define NO_LIMIT (~0u)
#define MAX_PAGES 256

/* The tree under test: its private bits, whether 1 GiB leaves are allowed. */
static u64 cur_bits;
static bool cur_1g;

/*
 * Page-table pages are host memory whose address serves as the physical address, as in
 * the kernel's identity map. Linux gives user space addresses below 2^47 (with five-level
 * paging too, unless a mapping asks for more), so bits 47 and 51 of a table's address are
 * clear and a private bit there cannot be mistaken for an address bit; host_alloc checks.
 */
static void *pages[MAX_PAGES];
static unsigned npages, page_limit;

static u64 host_alloc(void)
{
	if (npages >= page_limit)
		return 0;
	if (npages == MAX_PAGES) {
		fprintf(stderr, "test_paging: more than %d page-table pages: a broken test\n", MAX_PAGES);
		abort();
	}
	void *p = aligned_alloc(PAGE_SIZE, PAGE_SIZE);

	if (!p || (uintptr_t)p >> 47) {
		fprintf(stderr, "test_paging: aligned_alloc gave %p: no usable host page\n", p);
		abort();
	}
	memset(p, 0, PAGE_SIZE);
	pages[npages++] = p;
	return (u64)(uintptr_t)p;
}

static bool ours(u64 pa)
{
	for (unsigned i = 0; i < npages; i++)
		if ((u64)(uintptr_t)pages[i] == pa)
			return true;
	return false;
}

/*
 * What the test expects to be mapped: the map and unmap calls made on the tree, in order.
 * The last one covering an address decides its kind; every call's edges bound the leaves
 * (paging.c never merges leaves, and the tests never map a whole block over a split one).
 */
enum kind { K_NONE, K_RAM, K_SHARED };
static struct op {
	u64 start, end;
	enum kind kind;
} ops[16];
static unsigned nops;

static void reset(u64 bits, bool use_1g, unsigned limit)
{
	for (unsigned i = 0; i < npages; i++)
		free(pages[i]);
	npages = 0;
	page_limit = limit;
	nops = 0;
	cur_bits = bits;
	cur_1g = use_1g;
	unit_cr3 = unit_cr4 = 0;
	unit_cr3_writes = 0;
	paging_init(host_alloc, bits, use_1g);
}

static void record(u64 start, u64 end, enum kind k)
{
	if (nops == ARRAY_SIZE(ops)) {
		fprintf(stderr, "test_paging: more than %zu operations: a broken test\n", ARRAY_SIZE(ops));
		abort();
	}
	ops[nops++] = (struct op){ start, end, k };
}

static int map(u64 start, u64 end, enum map_kind kind)
{
	record(start, end, kind == MAP_RAM ? K_RAM : K_SHARED);
	return paging_map(start, end, kind);
}

static int unmap(u64 start, u64 end)
{
	record(start, end, K_NONE);
	return paging_unmap(start, end);
}

static enum kind kind_at(u64 a)
{
	enum kind k = K_NONE;

	for (unsigned i = 0; i < nops; i++)
		if (a >= ops[i].start && a < ops[i].end)
			k = ops[i].kind;
	return k;
}

/* The first edge of any call above a, or limit. */
static u64 next_edge(u64 a, u64 limit)
{
	u64 n = limit;

	for (unsigned i = 0; i < nops; i++) {
		if (ops[i].start > a && ops[i].start < n)
			n = ops[i].start;
		if (ops[i].end > a && ops[i].end < n)
			n = ops[i].end;
	}
	return n;
}

/* The largest leaf allowed at a mapped address: no call's edge falls inside it. */
static u64 expected_size(u64 a)
{
	const u64 sizes[] = { GiB, MiB2, KiB4 };

	for (unsigned s = cur_1g ? 0 : 1; s < ARRAY_SIZE(sizes); s++) {
		u64 base = ALIGN_DOWN(a, sizes[s]);

		if (next_edge(base, base + sizes[s]) == base + sizes[s])
			return sizes[s];
	}
	return KiB4;
}

/* The entry a leaf must hold, written from the entry formats (Intel SDM vol. 3A, 4.5). */
static u64 leaf_entry(u64 base, u64 size, enum kind k)
{
	return base | PTE_P | PTE_W | (k == K_RAM ? cur_bits : 0) | (size > KiB4 ? PTE_PS : 0);
}

/* Print which tree and address a failed check was about (the harness prints the line). */
static bool at(bool ok, u64 addr)
{
	if (!ok)
		printf("    at %#llx, private bits %#llx, %s\n", (unsigned long long)addr,
		       (unsigned long long)cur_bits, cur_1g ? "1 GiB leaves" : "no 1 GiB leaves");
	return ok;
}

static u64 table_ptr_entry(u64 table)
{
	return table | cur_bits | PTE_W | PTE_P;
}

/*
 * The test's own page walk (AMD APM vol. 2, 5.3): the leaf that maps va, its size 0 when
 * none does. Every table entry on the way must be exactly a pointer to one of the pages
 * host_alloc handed out, with the private bits, W and P; false (and a failed check) if not,
 * before anything is read through it. paging.c's first page is the PML4.
 */
struct leaf {
	u64 entry, size;
};

static bool find_leaf(u64 va, struct leaf *l)
{
	u64 *t = npages ? pages[0] : NULL;

	l->entry = l->size = 0;
	if (!at(EXPECT(t != NULL), va))
		return false;
	for (int level = 4; level >= 1; level--) {
		u64 size = 1ULL << (PAGE_SHIFT + 9 * (level - 1));
		u64 e = t[(va >> (PAGE_SHIFT + 9 * (level - 1))) & 511];

		if (!(e & PTE_P))
			return true;
		if (level == 1 || (level < 4 && (e & PTE_PS))) {
			l->entry = e;
			l->size = size;
			return true;
		}
		u64 next = e & PTE_ADDR_MASK & ~cur_bits;

		if (!at(EXPECT_EQ(e, table_ptr_entry(next)), va) || !at(EXPECT(ours(next)), va))
			return false;
		t = (u64 *)(uintptr_t)next;
	}
	return false;	/* not reached */
}

/* Where va leads, or ~0 when it is not mapped (or the walk failed a check). */
static u64 translate(u64 va)
{
	struct leaf l;

	if (!find_leaf(va, &l) || !l.size)
		return ~0ULL;
	return (l.entry & PTE_ADDR_MASK & ~cur_bits & ~(l.size - 1)) | (va & (l.size - 1));
}

/*
 * Every leaf in [lo, hi) against the calls made: where something is mapped, the entry is
 * exactly the identity at the expected size with its kind's bits, and paging_lookup
 * agrees; where nothing is, the walk and paging_lookup find nothing (checked at both ends
 * of each unmapped stretch). With allow_missing, a mapped leaf may be absent (a map that
 * ran out of memory), but one that is there must still be right.
 */
static bool check_tree(u64 lo, u64 hi, bool allow_missing)
{
	for (u64 a = lo; a < hi;) {
		enum kind k = kind_at(a);
		struct leaf l;

		if (k == K_NONE) {
			u64 stop = next_edge(a, hi);

			for (u64 p = a;; p = stop - KiB4) {
				if (!find_leaf(p, &l) || !at(EXPECT_EQ(l.size, 0), p) ||
				    !at(EXPECT_EQ(paging_lookup(p), 0), p))
					return false;
				if (p == stop - KiB4)
					break;
			}
			a = stop;
			continue;
		}
		u64 size = expected_size(a), base = ALIGN_DOWN(a, size);

		if (!find_leaf(a, &l))
			return false;
		if (!(allow_missing && !l.size) &&
		    (!at(EXPECT_EQ(l.size, size), a) || !at(EXPECT_EQ(l.entry, leaf_entry(base, size, k)), a) ||
		     !at(EXPECT_EQ(paging_lookup(a), size), a)))
			return false;
		a = base + size;
	}
	return true;
}

/* The whole range the calls touched, with a page of margin on each side. */
static bool check_all(bool allow_missing)
{
	u64 lo = ~0ULL, hi = 0;

	for (unsigned i = 0; i < nops; i++) {
		lo = MIN(lo, ops[i].start);
		hi = MAX(hi, ops[i].end);
	}
	return check_tree(lo ? lo - KiB4 : 0, hi + KiB4, allow_missing);
}

/*
 * The tables reachable from t (the table at level that maps from va), t counted: each
 * present entry is a leaf or exactly a pointer to one of ours with the private bits, W, P.
 */
static unsigned check_tables(u64 *t, int level, u64 va)
{
	unsigned n = 1;

	for (unsigned i = 0; i < 512; i++) {
		u64 e = t[i], sub = va + ((u64)i << (PAGE_SHIFT + 9 * (level - 1)));

		if (!(e & PTE_P) || level == 1 || (level < 4 && (e & PTE_PS)))
			continue;
		u64 next = e & PTE_ADDR_MASK & ~cur_bits;

		if (!at(EXPECT_EQ(e, table_ptr_entry(next)), sub) || !at(EXPECT(ours(next)), sub))
			continue;
		n += check_tables((u64 *)(uintptr_t)next, level - 1, sub);
	}
	return n;
}

/*
 * The address where the high ranges go: 2^47, a real address bit when the C-bit is at 51
 * (or 56, or absent); 2^46 when the C-bit itself is at 47 and the address space ends there.
 */
static u64 high(void)
{
	return cur_bits == 1ULL << 47 ? 1ULL << 46 : 1ULL << 47;
}

/*
 * RAM from 12 KiB to just past 2 GiB + 2 MiB (4 KiB, 2 MiB, a 1 GiB-aligned GiB, 2 MiB and
 * 4 KiB again); shared memory across 3 GiB and 4 GiB; RAM across high() from one page below
 * its 2 MiB to one page past 1 GiB + 2 MiB above it (a PML4 boundary at 2^47 and 2^46).
 */
static const u64 ram_lo_start = 0x3000, ram_lo_end = 2 * GiB + MiB2 + 0x5000;
static const u64 shared_start = 3 * GiB - KiB4, shared_end = 4 * GiB + 2 * MiB2 + KiB4;
#define RAM_HI_START (high() - MiB2 - KiB4)
#define RAM_HI_END (high() + GiB + MiB2 + KiB4)

static int map_layout(void)
{
	if (map(ram_lo_start, ram_lo_end, MAP_RAM) || map(shared_start, shared_end, MAP_SHARED) ||
	    map(RAM_HI_START, RAM_HI_END, MAP_RAM))
		return -1;
	return 0;
}

#define FOR_EACH_TREE(i, g)                                    \
	for (unsigned i = 0; i < ARRAY_SIZE(private_cases); i++) \
		for (int g = 0; g < 2; g++)

TEST(ram_leaves_carry_the_private_bits_shared_leaves_none)
{
	FOR_EACH_TREE(i, g) {
		reset(private_cases[i], g, NO_LIMIT);
		ASSERT_EQ(map_layout(), 0);
		EXPECT(check_all(false));
		/* The same, spelled out at one leaf of each kind. */
		struct leaf l;

		ASSERT(find_leaf(GiB + 0x1234, &l) && l.size);
		at(EXPECT_EQ(l.entry & cur_bits, cur_bits), GiB);
		ASSERT(find_leaf(3 * GiB + 0x1234, &l) && l.size);
		at(EXPECT_EQ(l.entry & cur_bits, 0), 3 * GiB);
		at(EXPECT_EQ(l.entry & ~PTE_ADDR_MASK & ~0xfffULL, 0), 3 * GiB);	/* nothing at 52-63 */
		at(EXPECT_EQ(l.entry & PTE_ADDR_MASK, 3 * GiB), 3 * GiB);
	}
}

TEST(every_table_pointer_carries_the_private_bits)
{
	FOR_EACH_TREE(i, g) {
		reset(private_cases[i], g, NO_LIMIT);
		ASSERT_EQ(map_layout(), 0);
		/* Every table reached from the PML4, and no page handed out that is not one of them. */
		at(EXPECT_EQ(check_tables(pages[0], 4, 0), npages), 0);
		EXPECT_EQ(paging_table_pages(), npages);
	}
}

/* Byte addresses at and beside each range's edges walk back to themselves. */
TEST(identity_at_range_edges)
{
	FOR_EACH_TREE(i, g) {
		reset(private_cases[i], g, NO_LIMIT);
		ASSERT_EQ(map_layout(), 0);
		const u64 edges[][2] = {
			{ ram_lo_start, ram_lo_end }, { shared_start, shared_end }, { RAM_HI_START, RAM_HI_END },
		};

		for (unsigned r = 0; r < ARRAY_SIZE(edges); r++) {
			u64 s = edges[r][0], e = edges[r][1];
			const u64 inside[] = { s, s + 1, s + KiB4 - 1, s + KiB4, e - KiB4, e - 8, e - 1 };

			for (unsigned k = 0; k < ARRAY_SIZE(inside); k++)
				at(EXPECT_EQ(translate(inside[k]), inside[k]), inside[k]);
			at(EXPECT_EQ(translate(s - 1), ~0ULL), s - 1);
			at(EXPECT_EQ(translate(e), ~0ULL), e);
		}
		/* Around high() itself: 2^47 is an address bit below a C-bit at 51. */
		const u64 hi[] = { high() - 1, high(), high() + 0x123, high() + GiB - 1, high() + GiB };

		for (unsigned k = 0; k < ARRAY_SIZE(hi); k++)
			at(EXPECT_EQ(translate(hi[k]), hi[k]), hi[k]);
		at(EXPECT_EQ(paging_lookup(high()), cur_1g ? GiB : MiB2), high());
	}
}

TEST(leaf_sizes_1g_only_with_use_1g_smaller_at_unaligned_edges)
{
	FOR_EACH_TREE(i, g) {
		reset(private_cases[i], g, NO_LIMIT);
		ASSERT_EQ(map_layout(), 0);
		/* Aligned to 2 MiB at both ends but to no GiB: 2 MiB leaves only, even with use_1g. */
		ASSERT_EQ(map(8 * GiB + MiB2, 9 * GiB + MiB2, MAP_RAM), 0);
		/* Less than 2 MiB, inside one 2 MiB block: 4 KiB leaves only. */
		ASSERT_EQ(map(10 * GiB + KiB4, 10 * GiB + MiB2, MAP_SHARED), 0);
		/* Aligned start, one page short of a GiB: no 1 GiB leaf, and 4 KiB in the last 2 MiB. */
		ASSERT_EQ(map(12 * GiB, 13 * GiB - KiB4, MAP_RAM), 0);
		EXPECT(check_all(false));
		const struct {
			u64 addr, size;
		} want[] = {
			{ 0x3000, KiB4 }, { MiB2 - KiB4, KiB4 }, { MiB2, MiB2 }, { GiB - MiB2, MiB2 },
			{ GiB, cur_1g ? GiB : MiB2 }, { 2 * GiB - 1, cur_1g ? GiB : MiB2 },
			{ 2 * GiB, MiB2 }, { 2 * GiB + MiB2, KiB4 }, { 2 * GiB + MiB2 + 0x4000, KiB4 },
			{ 3 * GiB - KiB4, KiB4 }, { 3 * GiB, cur_1g ? GiB : MiB2 }, { 4 * GiB, MiB2 },
			{ 4 * GiB + 2 * MiB2, KiB4 }, { 8 * GiB + MiB2, MiB2 }, { 9 * GiB, MiB2 },
			{ 9 * GiB - MiB2, MiB2 }, { 10 * GiB + KiB4, KiB4 }, { 10 * GiB + MiB2 - KiB4, KiB4 },
			{ 12 * GiB, MiB2 }, { 13 * GiB - 2 * MiB2, MiB2 }, { 13 * GiB - MiB2, KiB4 },
			{ 13 * GiB - 2 * KiB4, KiB4 }, { 13 * GiB - KiB4, 0 }, { RAM_HI_START, KiB4 },
			{ high() - MiB2, MiB2 }, { high(), cur_1g ? GiB : MiB2 }, { high() + GiB, MiB2 },
			{ high() + GiB + MiB2, KiB4 },
		};

		for (unsigned k = 0; k < ARRAY_SIZE(want); k++)
			at(EXPECT_EQ(paging_lookup(want[k].addr), want[k].size), want[k].addr);
	}
}

TEST(lookup_is_zero_where_nothing_is_mapped)
{
	FOR_EACH_TREE(i, g) {
		reset(private_cases[i], g, NO_LIMIT);
		/* An empty tree: not even a PDPT. */
		const u64 empty[] = { 0, KiB4, GiB, high(), (1ULL << 46) - KiB4 };

		for (unsigned k = 0; k < ARRAY_SIZE(empty); k++)
			at(EXPECT_EQ(paging_lookup(empty[k]), 0), empty[k]);
		ASSERT_EQ(map_layout(), 0);
		/* Below, between and above the ranges; in a table that exists and in one that does not. */
		const u64 holes[] = {
			0, 0x2000, ram_lo_end, 2 * GiB + 2 * MiB2, 3 * GiB - 2 * KiB4, shared_end,
			5 * GiB, RAM_HI_START - KiB4, RAM_HI_END, high() + 2 * GiB, high() - GiB,
			high() + 512 * GiB,
		};

		for (unsigned k = 0; k < ARRAY_SIZE(holes); k++)
			at(EXPECT_EQ(paging_lookup(holes[k]), 0), holes[k]);
	}
}

/*
 * A shared page inside a RAM leaf (the SNP GHCB inside the RAM around it): the leaf is
 * split down to 4 KiB, every neighbour keeps its address and the RAM's bits, 4 KiB leaves
 * lose PS (bit 7 is PAT there), and no child's address carries the C-bit.
 */
static void split_for_shared_page(u64 block, u64 block_size, u64 page)
{
	struct leaf l;

	ASSERT_EQ(map(block, block + block_size, MAP_RAM), 0);
	at(EXPECT_EQ(paging_lookup(page), block_size), page);
	unsigned pages_before = npages;

	ASSERT_EQ(map(page, page + KiB4, MAP_SHARED), 0);
	at(EXPECT_EQ(paging_lookup(page), KiB4), page);
	/* One new table per level split: 1 GiB -> 2 MiB -> 4 KiB, or 2 MiB -> 4 KiB. */
	at(EXPECT_EQ(npages - pages_before, block_size == GiB ? 2 : 1), page);
	ASSERT(find_leaf(page, &l));
	at(EXPECT_EQ(l.entry, page | PTE_P | PTE_W), page);
	/* The neighbours in the block: RAM's bits, no PS, their own address and no C-bit in it. */
	const u64 near[] = {
		page - KiB4, page + KiB4, ALIGN_DOWN(page, MiB2), ALIGN_DOWN(page, MiB2) + MiB2 - KiB4,
	};

	for (unsigned k = 0; k < ARRAY_SIZE(near); k++) {
		if (near[k] < block || near[k] >= block + block_size || near[k] == page)
			continue;
		ASSERT(find_leaf(near[k], &l));
		at(EXPECT_EQ(l.entry, near[k] | cur_bits | PTE_P | PTE_W), near[k]);
	}
	/* Another 2 MiB of a split GiB: a 2 MiB leaf, PS kept. */
	if (block_size == GiB) {
		u64 other = ALIGN_DOWN(page, MiB2) == block ? block + MiB2 : block;

		ASSERT(find_leaf(other, &l));
		at(EXPECT_EQ(l.entry, other | cur_bits | PTE_PS | PTE_P | PTE_W), other);
	}
	EXPECT(check_tree(block - KiB4, block + block_size + KiB4, false));
}

TEST(shared_page_inside_a_1g_leaf_splits_it)
{
	for (unsigned i = 0; i < ARRAY_SIZE(private_cases); i++) {
		reset(private_cases[i], true, NO_LIMIT);
		split_for_shared_page(GiB, GiB, GiB + 5 * MiB2 + 3 * KiB4);
		split_for_shared_page(high(), GiB, high() + 7 * MiB2 + 9 * KiB4);
		/* The last page of the GiB: its neighbour above is in the next, unmapped, GiB. */
		split_for_shared_page(4 * GiB, GiB, 5 * GiB - KiB4);
	}
}

TEST(shared_page_inside_a_2m_leaf_splits_it)
{
	for (unsigned i = 0; i < ARRAY_SIZE(private_cases); i++) {
		reset(private_cases[i], false, NO_LIMIT);
		split_for_shared_page(GiB + MiB2, MiB2, GiB + MiB2 + KiB4);
		split_for_shared_page(high() + 4 * MiB2, MiB2, high() + 5 * MiB2 - 2 * KiB4);
	}
}

/* Unmapping one page inside a leaf: the rest of it stays as it was, and CR3 is reloaded. */
TEST(unmap_inside_a_leaf_keeps_its_neighbours)
{
	FOR_EACH_TREE(i, g) {
		reset(private_cases[i], g, NO_LIMIT);
		ASSERT_EQ(map(GiB, 2 * GiB, MAP_RAM), 0);
		ASSERT_EQ(map(high(), high() + 4 * MiB2, MAP_RAM), 0);
		ASSERT_EQ(map(3 * GiB, 3 * GiB + MiB2, MAP_SHARED), 0);
		unit_cr3 = 0x1234000;
		const u64 gone[] = { GiB + 3 * MiB2 + 5 * KiB4, high() + MiB2, 3 * GiB + MiB2 - KiB4 };

		for (unsigned k = 0; k < ARRAY_SIZE(gone); k++) {
			unsigned writes = unit_cr3_writes;

			ASSERT_EQ(unmap(gone[k], gone[k] + KiB4), 0);
			at(EXPECT_EQ(paging_lookup(gone[k]), 0), gone[k]);
			at(EXPECT_EQ(translate(gone[k] - 1), gone[k] - 1), gone[k]);
			/* The TLB flush: CR3 written back with what it held. */
			at(EXPECT_EQ(unit_cr3_writes, writes + 1), gone[k]);
			at(EXPECT_EQ(unit_cr3, 0x1234000), gone[k]);
		}
		struct leaf l;

		ASSERT(find_leaf(gone[0] + KiB4, &l));
		at(EXPECT_EQ(l.entry, (gone[0] + KiB4) | cur_bits | PTE_P | PTE_W), gone[0] + KiB4);
		ASSERT(find_leaf(gone[2] - KiB4, &l));
		at(EXPECT_EQ(l.entry, (gone[2] - KiB4) | PTE_P | PTE_W), gone[2] - KiB4);
		EXPECT(check_all(false));
	}
}

/*
 * CR3 holds the top table's address and the private bits where CR3 has address bits
 * there (the top table is private memory too). At 56 it has none: CR3 bits 52-63 are
 * reserved, and a C-bit there would make the load of CR3 fault (#GP).
 */
TEST(activate_puts_private_bits_in_cr3_only_where_they_are_address_bits)
{
	const u64 in_cr3[] = { 0, 0, 1ULL << 51, 1ULL << 47 };

	for (unsigned i = 0; i < ARRAY_SIZE(private_cases); i++) {
		reset(private_cases[i], true, NO_LIMIT);
		ASSERT_EQ(map_layout(), 0);
		u64 root = (u64)(uintptr_t)pages[0];

		paging_activate();
		at(EXPECT_EQ(unit_cr3, root | in_cr3[i]), root);
		EXPECT_EQ(unit_cr3_writes, 1);

		/* With LA57 on, the PML4 hangs under entry 0 of a new PML5, a table like the others. */
		unit_cr4 = CR4_LA57;
		unsigned before = npages;

		paging_activate();
		ASSERT_EQ(npages, before + 1);
		u64 *pml5 = pages[before];

		at(EXPECT_EQ(unit_cr3, (u64)(uintptr_t)pml5 | in_cr3[i]), root);
		at(EXPECT_EQ(pml5[0], table_ptr_entry(root)), root);
		for (unsigned k = 1; k < 512; k++)
			if (!EXPECT_EQ(pml5[k], 0))
				break;
	}
}

/*
 * A pt_alloc that runs dry after n pages, for every n the layout needs: paging_map returns
 * -1, and what it wrote is still a tree of exact table pointers and right leaves.
 */
TEST(out_of_memory_makes_map_fail_cleanly)
{
	FOR_EACH_TREE(i, g) {
		reset(private_cases[i], g, NO_LIMIT);
		ASSERT_EQ(map_layout(), 0);
		unsigned needed = npages;

		for (unsigned n = 1; n < needed; n++) {
			reset(private_cases[i], g, n);
			bool ok = EXPECT_EQ(map_layout(), -1) && EXPECT_EQ(npages, n) &&
				  EXPECT_EQ(check_tables(pages[0], 4, 0), n) && EXPECT(check_all(true));

			if (!ok)
				printf("    pt_alloc ran dry after %u of the %u pages, private bits %#llx, %s\n",
				       n, needed, (unsigned long long)cur_bits, g ? "1 GiB leaves" : "no 1 GiB leaves");
		}
	}
}

/* Running out while splitting: the leaf stays whole, or splits only as far as memory went. */
TEST(out_of_memory_while_splitting_keeps_the_leaf)
{
	for (unsigned i = 0; i < ARRAY_SIZE(private_cases); i++) {
		reset(private_cases[i], true, NO_LIMIT);
		u64 page = high() + 5 * MiB2 + 3 * KiB4;
		struct leaf l;

		ASSERT_EQ(map(high(), high() + GiB, MAP_RAM), 0);
		page_limit = npages;
		at(EXPECT_EQ(paging_map(page, page + KiB4, MAP_SHARED), -1), page);
		ASSERT(find_leaf(page, &l));
		at(EXPECT_EQ(l.entry, leaf_entry(high(), GiB, K_RAM)), page);
		at(EXPECT_EQ(paging_unmap(page, page + KiB4), -1), page);
		ASSERT(find_leaf(page, &l));
		at(EXPECT_EQ(l.entry, leaf_entry(high(), GiB, K_RAM)), page);

		/* Room for the 2 MiB table but not the 4 KiB one: 2 MiB leaves, all still RAM. */
		page_limit = npages + 1;
		at(EXPECT_EQ(paging_map(page, page + KiB4, MAP_SHARED), -1), page);
		at(EXPECT_EQ(paging_lookup(page), MiB2), page);
		for (u64 a = high(); a < high() + GiB; a += MiB2) {
			ASSERT(find_leaf(a, &l));
			if (!at(EXPECT_EQ(l.entry, leaf_entry(a, MiB2, K_RAM)), a))
				break;
		}
		EXPECT_EQ(check_tables(pages[0], 4, 0), npages);
	}
}

TEST(bad_ranges_and_no_root_panic)
{
	reset(1ULL << 51, true, NO_LIMIT);
	CHECK_PANICS(paging_map(0x1000, 0x1800, MAP_RAM), "paging_map: bad range");
	CHECK_PANICS(paging_map(0x1800, 0x3000, MAP_RAM), "paging_map: bad range");
	CHECK_PANICS(paging_map(0x2000, 0x2000, MAP_RAM), "paging_map: bad range");
	CHECK_PANICS(paging_unmap(0x3000, 0x2000), "paging_unmap: bad range");
	CHECK_PANICS(reset(1ULL << 51, true, 0), "paging_init: no memory");
}
