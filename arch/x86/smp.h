/* SPDX-License-Identifier: MIT */
/* memaccept: starting the other CPUs of a normal VM (INIT-SIPI-SIPI), and per-CPU data. */
#ifndef ARCH_X86_SMP_H
#define ARCH_X86_SMP_H

#include "include/smp.h"
#include "include/types.h"

/* Per-CPU data; GS base points at it, so a CPU finds its own in one instruction. */
struct percpu {
	struct percpu *self;	/* %gs:0 */
	u64 index;		/* %gs:8: 0 = the boot CPU, then in start-up order */
	u32 apic_id;
	u32 started;		/* 1 once the CPU runs kernel code (written by the CPU itself) */
	u64 start_ns;		/* when it checked in, ns since efi_main */
	/* Work handed out by the kernel (kernel/smp.c). */
	void (*work)(unsigned cpu, void *arg);
	void *work_arg;
	u64 work_seq;		/* bumped by the boot CPU for each new work item */
	u64 done_seq;		/* set to work_seq by this CPU when the item is done */
	u64 ist_top[3];		/* double fault, NMI, machine check stacks */
} __aligned(64);

/* The calling CPU's index (0 on the boot CPU, also before smp_arch_init_bsp()). */
static inline unsigned smp_cpu_index(void)
{
	u64 i;

	__asm__ volatile("mov %%gs:8, %0" : "=r"(i));
	return (unsigned)i;
}

/* The boot CPU's per-CPU data; GS base set (after gdt_init, which clears it). */
void smp_arch_init_bsp(struct percpu *bsp);

struct smp_start {
	u64 trampoline;			/* TRAMPOLINE_PAGES below 1 MiB */
	u64 lapic_base;
	const u32 *apic_ids;		/* the APs to start (not the boot CPU) */
	unsigned count;
	struct percpu *const *cpus;	/* their per-CPU data, index 1.. */
	u64 stack_size;
	u64 (*alloc)(u64 size);		/* zeroed, 16-byte aligned, never freed */
	u64 timeout_ns;			/* per AP, from its STARTUP IPI */
	void (*ap_main)(struct percpu *self) __noreturn;
	/*
	 * Test image only: ap_main runs straight from the start-up code, on its GDT and
	 * stack, before any per-CPU setup, and sets self->started itself (the SNP
	 * emulator's VMRUN of a VMSA, arch/x86/emu/emu_snp.c).
	 */
	bool raw;
};

/*
 * Start the APs with INIT-SIPI-SIPI: all INITs, one 10 ms wait, all STARTUPs. Returns
 * how many checked in before their timeout; an AP that did not is abandoned (it parks
 * itself if it ever arrives). NULL or an error text in *why when none could be tried.
 */
unsigned smp_arch_start(const struct smp_start *s, const char **why);
/* Read this CPU's APIC ID (after smp_arch_start found the APIC); -1 without an APIC. */
u32 smp_arch_bsp_apic_id(u64 lapic_base);

#endif
