/* SPDX-License-Identifier: MIT */
/* memaccept: the kernel's GDTs and TSSs, one per CPU; the firmware's live in memory the kernel reclaims. */
#include "arch/x86/desc.h"
#include "include/smp.h"
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

/*
 * The boot CPU's IST stacks, each with a page below it that becomes an unmapped guard
 * once the kernel's page tables exist (smp_arch_guard_boot_stacks).
 */
static struct {
	u8 guard[PAGE_SIZE];
	u8 stack[IST_STACK_SIZE];
} ist_stacks[3] __aligned(PAGE_SIZE);
/*
 * One TSS per CPU (each has its own IST stacks), hence one GDT per CPU: LTR marks the
 * TSS descriptor busy, so two CPUs cannot load the same one (SDM vol. 3A, "Task Register").
 */
static struct tss tss[MAX_CPUS];
/*
 * null, code (L=1, P, DPL 0, execute/read), data (P, read/write), and the 16-byte TSS
 * descriptor filled in below (Intel SDM vol. 3A, 3.4.5 and 8.2.3).
 */
static u64 gdt[MAX_CPUS][5];

void gdt_init_cpu(unsigned cpu, const u64 ist_top[3])
{
	struct tss *t = &tss[cpu];
	u64 *g = gdt[cpu];
	u64 base = (u64)(uintptr_t)t;
	u64 limit = sizeof(*t) - 1;

	memset(t, 0, sizeof(*t));
	/* Separate stacks for the faults that can arrive on a broken stack. */
	t->ist[IST_DF - 1] = ist_top[0];
	t->ist[IST_NMI - 1] = ist_top[1];
	t->ist[IST_MC - 1] = ist_top[2];
	t->iomap_base = sizeof(*t);	/* no I/O permission bitmap */

	g[0] = 0;
	g[1] = 0x00af9a000000ffffULL;
	g[2] = 0x00cf92000000ffffULL;
	/* Available 64-bit TSS, type 9, present. */
	g[3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ULL << 40) |
	       (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
	g[4] = base >> 32;

	struct gdtr gdtr = { sizeof(gdt[0]) - 1, (u64)(uintptr_t)g };

	gdt_load(&gdtr, KERNEL_CS, KERNEL_DS);
	__asm__ volatile("ltr %w0" : : "r"((u16)KERNEL_TSS));
}

void gdt_init(void)
{
	const u64 ist_top[3] = {
		(u64)(uintptr_t)(ist_stacks[0].stack + IST_STACK_SIZE),
		(u64)(uintptr_t)(ist_stacks[1].stack + IST_STACK_SIZE),
		(u64)(uintptr_t)(ist_stacks[2].stack + IST_STACK_SIZE),
	};

	gdt_init_cpu(0, ist_top);
}

u64 gdt_boot_ist_guard(unsigned k)
{
	return k < 3 ? (u64)(uintptr_t)ist_stacks[k].guard : 0;
}
