/* SPDX-License-Identifier: MIT */
/* memaccept: starting the other CPUs (INIT-SIPI-SIPI, or the MADT wakeup mailbox in a TD), and per-CPU data. */
#ifndef ARCH_X86_SMP_H
#define ARCH_X86_SMP_H

#include "include/mp_wakeup.h"
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
	u64 stack_top;		/* its kernel stack (smp_arch_alloc_stacks) */
	u64 ist_top[3];		/* double fault, NMI, machine check stacks */
	u32 checkin;		/* SMP_CHECKIN_*: the AP moves WAITING -> RUNNING, the BSP -> ABANDONED */
} __aligned(64);

enum { SMP_CHECKIN_WAITING, SMP_CHECKIN_RUNNING, SMP_CHECKIN_ABANDONED };

/*
 * Every AP's stacks, in one allocation of AP_AREA_SIZE per AP, each stack with an
 * unmapped guard page below it, so that running off the bottom is a page fault the
 * kernel reports (as a #DF when the CPU cannot push the #PF's frame either):
 *   guard | kernel stack | guard | #DF stack | guard | NMI stack | guard | #MC stack
 */
#define AP_GUARD_SIZE PAGE_SIZE
#define AP_STACK_SIZE (32 * KiB)
#define AP_IST_SIZE (16 * KiB)
#define AP_AREA_SIZE (4 * AP_GUARD_SIZE + AP_STACK_SIZE + 3 * AP_IST_SIZE)

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

/*
 * Post a wakeup command in the ACPI multiprocessor wakeup mailbox mb (ACPI 6.5 5.2.12.19,
 * include/mp_wakeup.h): the 32-bit ApicId and the WakeupVector first, then Command with
 * a release store, so that the firmware that sees the command sees both (Linux
 * acpi_wakeup_cpu orders them the same way). The caller has seen Command at 0.
 */
static inline void smp_mailbox_post(u8 *mb, u32 apic_id, u64 vector)
{
	__builtin_memcpy(mb + MP_MAILBOX_OFF_APIC_ID, &apic_id, sizeof(apic_id));
	__builtin_memcpy(mb + MP_MAILBOX_OFF_VECTOR, &vector, sizeof(vector));
	__atomic_store_n((u16 *)(mb + MP_MAILBOX_OFF_COMMAND), (u16)MP_MAILBOX_CMD_WAKEUP, __ATOMIC_RELEASE);
}

/* The boot CPU's per-CPU data; GS base set (after gdt_init, which clears it). */
void smp_arch_init_bsp(struct percpu *bsp);

struct smp_start {
	u64 trampoline;			/* TRAMPOLINE_PAGES below 1 MiB */
	u64 lapic_base;
	const u32 *apic_ids;		/* the APs to start (not the boot CPU) */
	unsigned count;
	struct percpu *const *cpus;	/* their per-CPU data, index 1..; stacks allocated */
	u64 (*alloc)(u64 size);		/* zeroed, 16-byte aligned, never freed */
	u64 timeout_ns;			/* give up when no AP asked to start checked in for this long */
	void (*ap_main)(struct percpu *self) __noreturn;
	const char **ap_why;		/* mailbox and SNP start: per AP, NULL or why not */
	u8 *ap_vmsa;			/* SNP: per AP, SMP_VMSA_*: its VMSA if it did not run it */
	u64 *take_max_ns;		/* mailbox: the longest the firmware took to take a command */
};

/* What became of the VMSA of an SNP AP that does not run (arch/x86/sev/snp_ap.c). */
#define SMP_VMSA_NONE 0		/* none was made, or the AP runs it */
#define SMP_VMSA_REMOVED 1	/* made, then undone: the page is no VMSA any more */
#define SMP_VMSA_LEFT 2		/* made, and the undo was refused: it stays a VMSA */

/*
 * The stacks of the APs cpus[0 .. count): one area each (AP_AREA_SIZE, page aligned),
 * their guard pages unmapped. Before paging_shared(): unmapping needs no other CPU to
 * flush its TLB only while no other CPU runs.
 */
void smp_arch_alloc_stacks(struct percpu *const *cpus, unsigned count, u64 (*alloc)(u64 size));
/*
 * The boot CPU's stacks get guard pages too: the pages right below [stack_lo, ...) and
 * below each of its IST stacks (gdt.c). Same moment as smp_arch_alloc_stacks.
 */
void smp_arch_guard_boot_stacks(u64 stack_lo);
/* Is addr in a stack guard page? Then the CPU index and which stack it guards. */
bool smp_arch_stack_guard(u64 addr, unsigned *cpu, const char **which);

/*
 * The one way an AP starts running kernel code, whatever started it (the trampoline
 * after INIT-SIPI or a mailbox wakeup, or its VMSA on SNP): load its own GDT, TSS, GS
 * base and the IDT, take self->checkin from WAITING to RUNNING (or halt: the boot CPU
 * gave up on it), run the platform's per-CPU step (SNP: register its GHCB), then say
 * started and run ap_main. Runs on self->stack_top.
 */
__noreturn void smp_arch_ap_checkin(struct percpu *self);
/* What smp_arch_ap_checkin calls: set by each start path before its first AP runs. */
void smp_arch_checkin_setup(void (*ap_main)(struct percpu *self) __noreturn,
			    void (*platform_step)(struct percpu *self));
/*
 * Wait until every AP i with asked[i] checked in, or none of those still awaited checked
 * in for stall_ns; give up on the others (an AP that checks in at that very moment wins).
 * ok[i]: it runs. Returns how many run.
 */
unsigned smp_arch_wait_checkins(const struct smp_start *s, const bool *asked, bool *ok, u64 stall_ns);

/*
 * Start the APs with INIT-SIPI-SIPI: all INITs, the 10 ms wait where the CPU needs it,
 * all STARTUPs. Returns how many checked in before the timeout; an AP that did not is
 * abandoned (it parks itself if it ever arrives). NULL or an error text in *why when none could be tried.
 */
unsigned smp_arch_start(const struct smp_start *s, const char **why);
/*
 * Start the APs through the ACPI multiprocessor wakeup mailbox at `mailbox` (checked by
 * the caller: 4 KiB of ACPI NVS memory). One command at a time (ACPI 6.5 5.2.12.19): each
 * is posted once the firmware took the one before (Command back to 0), without waiting
 * for that AP to check in; each command may take up to MAILBOX_TAKE_TIMEOUT_NS (30 s)
 * from its own posting. Then the check-ins are awaited as smp_arch_wait_checkins does.
 * A command the firmware never takes stops the wakeups: it cannot be withdrawn, so the
 * mailbox is not written again. Returns how many started; s->ap_why says why each other one did not.
 */
unsigned smp_arch_start_mailbox(const struct smp_start *s, u64 mailbox, const char **why);
/*
 * Test image (the emulated TD firmware): fill a copy of the trampoline at tramp (below
 * 1 MiB) so that the CPUs in apic_ids, started with INIT-SIPI-SIPI, run entry(slot) in
 * long mode under cr3 (below 4 GiB), on stack_tops[i]; slot points at a u32 APIC ID, and
 * at offset 16 the u64 args[i]. The slots are in the kernel image, which must lie below
 * 4 GiB for this. Returns tramp.
 */
u64 smp_arch_tramp_install(u64 tramp, u32 cr3, u64 entry, const u32 *apic_ids, const u64 *stack_tops,
			   const u64 *args, unsigned n);
/* Read this CPU's APIC ID (after smp_arch_start found the APIC); -1 without an APIC. */
u32 smp_arch_bsp_apic_id(u64 lapic_base);

#endif
