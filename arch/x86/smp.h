/* SPDX-License-Identifier: MIT */
/* memaccept: starting the other CPUs (INIT-SIPI-SIPI, or the MADT wakeup mailbox in a TD), and per-CPU data. */
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
	/*
	 * A short item handed over while a long one that yields (background acceptance)
	 * runs: the long one runs it at its next yield point, an idle CPU at once.
	 */
	void (*nested)(unsigned cpu, void *arg);
	void *nested_arg;
	u64 nested_seq;
	u64 nested_done;
	u64 ist_top[3];		/* double fault, NMI, machine check stacks */
} __aligned(64);

/* The calling CPU's index (0 on the boot CPU, also before smp_arch_init_bsp()). */
static inline unsigned smp_cpu_index(void)
{
	u64 i;

	__asm__ volatile("mov %%gs:8, %0" : "=r"(i));
	return (unsigned)i;
}

/*
 * The CPU family from CPUID leaf 1 EAX: the base family (bits 11:8), plus the extended
 * family (bits 27:20) when the base is 0xF (Intel SDM vol. 2A, CPUID, "Family ID").
 */
static inline u32 cpu_family(u32 leaf1_eax)
{
	u32 base = (leaf1_eax >> 8) & 0xf;

	return base == 0xf ? base + ((leaf1_eax >> 20) & 0xff) : base;
}

/*
 * Does a processor of this vendor (CPUID leaf 0's 12 characters) and family need the
 * 10 ms wait between INIT and STARTUP? The MultiProcessor Specification 1.4's sequence
 * has it; Linux leaves it out on Intel family 6, AMD family 0xF and later and Hygon
 * family 0x18 and later (arch/x86/kernel/smpboot.c, smp_quirk_init_udelay), which
 * covers every x86 CPU a confidential VM or a current hypervisor presents. Anything
 * else keeps the wait.
 */
static inline bool smp_init_wait_needed(const char vendor[12], u32 family)
{
	if (!__builtin_memcmp(vendor, "GenuineIntel", 12))
		return family != 6;
	if (!__builtin_memcmp(vendor, "AuthenticAMD", 12))
		return family < 0xf;
	if (!__builtin_memcmp(vendor, "HygonGenuine", 12))
		return family < 0x18;
	return true;
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
	const char **ap_why;		/* mailbox and SNP start: per AP, NULL or why not */
	u8 *ap_vmsa;			/* SNP: per AP, SMP_VMSA_*: its VMSA if it did not run it */
};

/* What became of the VMSA of an SNP AP that does not run (arch/x86/sev/snp_ap.c). */
#define SMP_VMSA_NONE 0		/* none was made, or the AP runs it */
#define SMP_VMSA_REMOVED 1	/* made, then undone: the page is no VMSA any more */
#define SMP_VMSA_LEFT 2		/* made, and the undo was refused: it stays a VMSA */

/*
 * Start the APs with INIT-SIPI-SIPI: all INITs, the 10 ms wait where the CPU needs it,
 * all STARTUPs. Returns how many checked in before their timeout; an AP that did not is
 * abandoned (it parks itself if it ever arrives). NULL or an error text in *why when none could be tried.
 */
unsigned smp_arch_start(const struct smp_start *s, const char **why);
/*
 * Start the APs through the ACPI multiprocessor wakeup mailbox at `mailbox` (checked by
 * the caller: 4 KiB of ACPI NVS memory), one at a time, each with s->timeout_ns for the
 * firmware's acknowledgement and its check-in. After the first AP that fails, no other
 * is woken (a command that was never acknowledged cannot be withdrawn). Returns how many
 * started; s->ap_why says why each other one did not.
 */
unsigned smp_arch_start_mailbox(const struct smp_start *s, u64 mailbox, const char **why);
/*
 * Test image (the emulated TD firmware): fill a copy of the trampoline at tramp (below
 * 1 MiB) so that the CPUs in apic_ids, started with INIT-SIPI-SIPI, run entry(slot) in
 * long mode under cr3 (below 4 GiB), on stack_tops[i]; slot points at a u32 APIC ID, and
 * at offset 16 the u64 args[i]. Returns tramp.
 */
u64 smp_arch_tramp_install(u64 tramp, u32 cr3, u64 entry, const u32 *apic_ids, const u64 *stack_tops,
			   const u64 *args, unsigned n);
/* Read this CPU's APIC ID (after smp_arch_start found the APIC); -1 without an APIC. */
u32 smp_arch_bsp_apic_id(u64 lapic_base);

#endif
