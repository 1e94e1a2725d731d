/* SPDX-License-Identifier: MIT */
/* memaccept (test image): bugs planted where only the page-state sanitizer (tools/observer) can see them. */
#include "drivers/console.h"
#include "arch/x86/cpu.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/paging.h"
#include "include/boot_info.h"
#include "include/panic.h"
#include "kernel/main.h"
#include "kernel/memory.h"
#include "kernel/testcase.h"
#include "lib/string.h"
#include "mm/memmap.h"
#include "mm/page_alloc.h"

/*
 * Under TCG unaccepted memory is ordinary RAM, and from ExitBootServices until
 * memory_build_page_tables the kernel runs on the firmware's identity map, which maps
 * it: a stray load there passes unseen unless the sanitizer checks it against the page
 * state the platform holds. On a real TD that load ends the TD; on SNP it is a #VC
 * 0x404 that no handler serves yet.
 *
 * window_read_early reads before the kernel has parsed the memory map (the sanitizer
 * holds the access until the emulated host tells it the starting state), at
 * fake_unaccepted_start + 16 MiB; window_read reads the first byte of the lowest
 * unaccepted range of the final map, after the page model exists and before the
 * kernel's page tables replace the firmware's.
 */
#define WINDOW_EARLY_OFFSET (16 * MiB)

static u64 window_read_at;

static void window_read(u64 addr)
{
	kprintf("window: one-byte read of %llx, unaccepted memory, before the kernel's page tables\n",
		addr);
	(void)*(volatile u8 *)(uintptr_t)addr;
	window_read_at = addr;
}

void testcase_window(const struct boot_info *bi, bool map_known)
{
	const char *name = bi->config.test;

	if (!map_known && strcmp(name, "window_read_early") == 0 && bi->config.fake_set) {
		window_read(bi->config.fake_unaccepted_start + WINDOW_EARLY_OFFSET);
	} else if (map_known && strcmp(name, "window_read") == 0) {
		for (unsigned i = 0; i < kernel_memmap.nranges; i++)
			if (kernel_memmap.ranges[i].kind == RANGE_UNACCEPTED) {
				window_read(kernel_memmap.ranges[i].start);
				break;
			}
	}
}

TESTCASE(window_read_early, "a one-byte read of unaccepted memory right after ExitBootServices stops the emulated boot (early part in kernel_main; needs fake_unaccepted_start)")
{
	CHECK(window_read_at != 0);
	return EXIT_TEST_FAILED;	/* the read went through unseen */
}

TESTCASE(window_read, "a one-byte read of unaccepted memory before the kernel's page tables stops the emulated boot (early part in kernel_main)")
{
	CHECK(window_read_at != 0);
	return EXIT_TEST_FAILED;
}

/*
 * An accept path that reports success without the platform's accept: the allocator
 * clears the unit's bit, maps it and hands its pages out, and under TCG the memory
 * works. The first use of a page from it must stop the emulated boot.
 */
static u64 skipped_unit;

static int accept_skipped(void *ctx, u64 start, u64 end)
{
	(void)ctx, (void)end;
	if (!skipped_unit)
		skipped_unit = start;
	return 0;	/* the planted bug: success, and the platform never heard of it */
}

TESTCASE(planted_skip_accept, "a unit whose platform accept is skipped while the allocator hands out its pages stops the emulated boot at the first use")
{
	u64 pa = 0;

	memory_set_probe_accept(accept_skipped, NULL);
	/* Take 2 MiB blocks (never freed) until one comes from the skipped unit. */
	for (unsigned i = 0; i < 1u << 16; i++) {
		pa = palloc_alloc(PALLOC_MAX_ORDER);
		if (!pa || (skipped_unit && pa >= skipped_unit && pa < skipped_unit + UNIT_SIZE))
			break;
	}
	memory_set_probe_accept(NULL, NULL);
	CHECK(skipped_unit != 0);
	CHECK(pa >= skipped_unit && pa < skipped_unit + UNIT_SIZE);
	kprintf("planted: the allocator handed out %llx from unit %llx, whose accept was skipped\n", pa,
		skipped_unit);
	*(volatile u8 *)(uintptr_t)pa = 1;
	return EXIT_TEST_FAILED;	/* the store went through unseen */
}

/*
 * SNP: a page's C-bit is the guest's choice, made in its page tables; a shared access
 * (C-bit clear) to a private page makes KVM convert the page to shared, and the guest
 * loses what it held. Planted: a validated private page mapped shared and read.
 */
TESTCASE(planted_shared_access, "SNP: a read of a private page through a mapping without the C-bit stops the emulated boot")
{
	u64 page = palloc_alloc(0);

	CHECK(emu_mode() == EMU_SNP && page);
	CHECK(paging_map(page, page + PAGE_SIZE, MAP_SHARED) == 0);
	invlpg(page);
	kprintf("planted: the allocator handed out %llx; read through a mapping without the C-bit\n",
		page);
	(void)*(volatile u8 *)(uintptr_t)page;
	return EXIT_TEST_FAILED;
}

/*
 * SNP: the secrets page is EfiReservedMemoryType (OVMF, AllocateConfidentialComputingBlob)
 * and private. The kernel's own map must let it be read as private memory.
 */
TESTCASE(snp_reserved_page_private, "SNP: the firmware's reserved secrets page reads through the kernel's map as private memory")
{
	const struct boot_info *bi = kernel_boot_info();

	CHECK(emu_mode() == EMU_SNP && bi->cc_secrets);
	CHECK(paging_lookup(bi->cc_secrets) != 0);
	kprintf("test: reading the secrets page at %llx through the kernel's map\n", bi->cc_secrets);
	(void)*(volatile u8 *)(uintptr_t)bi->cc_secrets;
	return EXIT_OK;
}

/*
 * SNP under an SVSM: once the SVSM made a page a vCPU's VMSA, the guest's VMPL has no
 * permission on it (COCONUT-SVSM revokes it) until the SVSM deletes the vCPU. Planted:
 * a store into a running AP's VMSA.
 */
TESTCASE(planted_vmsa_write, "SNP under an SVSM: a store into an AP's VMSA stops the emulated boot")
{
	u64 vmsa = 0;

	CHECK(emu_mode() == EMU_SNP);
	for (unsigned i = 0; i < EMU_MAX_VCPUS && !vmsa; i++)
		vmsa = __atomic_load_n(&emu.vcpu[i].svsm_vmsa, __ATOMIC_ACQUIRE);
	CHECK(vmsa != 0);
	kprintf("planted: the allocator handed out %llx; the SVSM made it an AP's VMSA; storing into it\n",
		vmsa);
	*(volatile u8 *)(uintptr_t)(vmsa + 0x800) = 0;
	return EXIT_TEST_FAILED;
}
