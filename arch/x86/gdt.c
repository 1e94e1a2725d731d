/* SPDX-License-Identifier: MIT */
/* memaccept: the kernel's GDT and TSS; the firmware's live in memory the kernel reclaims. */
#include "arch/x86/desc.h"
#include "lib/string.h"

/* 64-bit TSS (Intel SDM vol. 3A, figure 8-11). */
struct tss {
	u32 reserved0;
	u64 rsp[3];
	u64 reserved1;
	u64 ist[7];
	u64 reserved2;
	u16 reserved3;
	u16 iomap_base;
} __packed;

struct gdtr {
	u16 limit;
	u64 base;
} __packed;

#define IST_STACK_SIZE (16 * KiB)

static u8 ist_stacks[3][IST_STACK_SIZE] __aligned(16);
static struct tss tss;
/*
 * null, code (L=1, P, DPL 0, execute/read), data (P, read/write), and the 16-byte TSS
 * descriptor filled in below (Intel SDM vol. 3A, 3.4.5 and 8.2.3).
 */
static u64 gdt[5] = {
	0,
	0x00af9a000000ffffULL,
	0x00cf92000000ffffULL,
};

void gdt_init(void)
{
	u64 base = (u64)(uintptr_t)&tss;
	u64 limit = sizeof(tss) - 1;

	memset(&tss, 0, sizeof(tss));
	/* Separate stacks for the faults that can arrive on a broken stack. */
	tss.ist[IST_DF - 1] = (u64)(uintptr_t)(ist_stacks[0] + IST_STACK_SIZE);
	tss.ist[IST_NMI - 1] = (u64)(uintptr_t)(ist_stacks[1] + IST_STACK_SIZE);
	tss.ist[IST_MC - 1] = (u64)(uintptr_t)(ist_stacks[2] + IST_STACK_SIZE);
	tss.iomap_base = sizeof(tss);	/* no I/O permission bitmap */

	/* Available 64-bit TSS, type 9, present. */
	gdt[3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ULL << 40) |
		 (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
	gdt[4] = base >> 32;

	struct gdtr gdtr = { sizeof(gdt) - 1, (u64)(uintptr_t)gdt };

	gdt_load(&gdtr, KERNEL_CS, KERNEL_DS);
	__asm__ volatile("ltr %w0" : : "r"((u16)KERNEL_TSS));
}
