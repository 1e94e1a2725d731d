/* SPDX-License-Identifier: MIT */
/* memaccept: starting the application processors (INIT-SIPI-SIPI on a normal VM, the MADT wakeup mailbox in a TD) and their first steps. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/desc.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/mp_mailbox.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/smp.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "include/boot_info.h"
#include "include/exit_codes.h"
#include "include/mp_wakeup.h"
#include "include/panic.h"
#include "lib/spinlock.h"
#include "lib/string.h"

/*
 * Intel SDM vol. 3A, "Typical AP Initialization Sequence": INIT, a 10 ms wait, STARTUP,
 * 200 us, a second STARTUP (the first may be lost on older CPUs; a CPU that is already
 * running ignores it). Current CPUs need no wait after INIT (smp_init_wait_needed()).
 */
#define INIT_WAIT_NS (10 * 1000 * 1000ULL)
#define SIPI_WAIT_NS (200 * 1000ULL)
/*
 * How long the firmware may take to take one wakeup command from the mailbox: long
 * enough for a vCPU the host has descheduled (normal on an overcommitted host, not
 * hostile; under TCG on two busy host cores, 128 vCPUs spinning in the firmware's loop,
 * the slowest of 127 commands took 4 s), short enough that a host that never runs it
 * ends the wakeups in a defined way.
 */
#define MAILBOX_TAKE_TIMEOUT_NS (30 * 1000 * 1000 * 1000ULL)

/*
 * An AP's slot: the trampoline finds it by APIC ID (INIT-SIPI) or by the wakeup vector
 * the AP was sent to (mailbox: one vector per slot), takes it (`taken`, so that no two
 * CPUs ever share a stack) and jumps to D_ENTRY with it. Outside the trampoline's page:
 * D_SLOTS holds their address, read under the kernel's page tables.
 */
struct ap_slot {
	u32 apic_id;
	u32 unused;
	u64 stack_top;
	u64 percpu;
	u32 taken;		/* set by the first CPU that arrives for this slot */
	u32 pad;
};

/* The data block of trampoline.asm; the offsets there (D_*) must match. */
struct tramp_data {
	u16 gdt_limit;		/* LGDT's operand: limit, then a 32-bit base in two halves */
	u16 gdt_base_lo;
	u16 gdt_base_hi;
	u16 pad0;
	u32 cr3_temp;
	u32 cr0;
	u32 efer;
	u32 ljmp_offset;
	u16 ljmp_selector;
	u8 pad1[6];
	u64 cr4;
	u64 kernel_cr3;
	u64 entry;
	u32 nslots;
	u32 pad2;
	u64 gdt[3];
	u32 wake_ljmp_offset;	/* tramp_wakeup64's far jump (m16:32) to its own code segment */
	u16 wake_ljmp_selector;
	u16 pad3;
	u64 slots;		/* struct ap_slot[nslots], mapped by kernel_cr3 */
	u64 pad4;
	u8 gdtr64[16];		/* u16 limit, u64 base: for LGDT in 64-bit mode */
	u8 idtr0[16];		/* limit 0, base 0 */
	u8 idtr_kernel[16];	/* u16 limit, u64 base: the kernel's IDT (SIDT's form) */
	u32 park_lock;		/* bit 0: a parked AP uses the park stack (page 5) */
	u32 pad5;
};

_Static_assert(__builtin_offsetof(struct tramp_data, cr3_temp) == 8, "D_CR3_TEMP");
_Static_assert(__builtin_offsetof(struct tramp_data, ljmp_offset) == 20, "D_LJMP");
_Static_assert(__builtin_offsetof(struct tramp_data, cr4) == 32, "D_CR4");
_Static_assert(__builtin_offsetof(struct tramp_data, entry) == 48, "D_ENTRY");
_Static_assert(__builtin_offsetof(struct tramp_data, nslots) == 56, "D_NSLOTS");
_Static_assert(__builtin_offsetof(struct tramp_data, gdt) == 64, "D_GDT");
_Static_assert(__builtin_offsetof(struct tramp_data, wake_ljmp_offset) == 88, "D_WAKE_LJMP");
_Static_assert(__builtin_offsetof(struct tramp_data, slots) == 96, "D_SLOTS");
_Static_assert(sizeof(struct ap_slot) == 32, "SLOT_SIZE");
_Static_assert(__builtin_offsetof(struct ap_slot, taken) == 24, "SLOT_TAKEN");
_Static_assert(__builtin_offsetof(struct tramp_data, gdtr64) == 112, "D_GDTR64");
_Static_assert(__builtin_offsetof(struct tramp_data, idtr0) == 128, "D_IDTR0");
_Static_assert(__builtin_offsetof(struct tramp_data, idtr_kernel) == 144, "D_IDTR_KERNEL");
_Static_assert(__builtin_offsetof(struct tramp_data, park_lock) == 160, "D_PARK_LOCK");
_Static_assert(sizeof(struct tramp_data) == 168, "D_SIZE");

/* trampoline.asm's wakeup vectors: slot i's at tramp_wake_stubs + i * WAKE_STUB_SIZE. */
#define WAKE_STUB_SIZE 10

/* The kernel's slots, and the emulated firmware's (smp_arch_tramp_install). */
static struct ap_slot kernel_slots[MAX_CPUS], install_slots[MAX_CPUS];

extern const u8 tramp_start[], tramp_end[], tramp_data[], tramp_long_mode[], tramp_wake_stubs[],
	tramp_wake_stubs_end[], tramp_wakeup64_cs[];

static void (*ap_main_fn)(struct percpu *self) __noreturn;
static void (*ap_platform_fn)(struct percpu *self);

/*
 * The stack guard pages: the APs' areas (one per AP, in the order smp_arch_alloc_stacks
 * got them), and the boot CPU's (its stack and three IST stacks).
 */
static struct {
	u64 base;			/* the APs' areas, AP_AREA_SIZE each */
	unsigned count;
	u16 cpu[MAX_CPUS];		/* area i belongs to CPU index cpu[i] */
	u64 boot[4];			/* the boot CPU's guard pages (0: none) */
} guards;

static const char *const stack_names[4] = { "kernel", "#DF (IST)", "NMI (IST)", "#MC (IST)" };

/* Offset of stack k (0 kernel, 1-3 IST) in an AP's area, its guard page right below. */
static u64 area_stack_lo(unsigned k)
{
	return k == 0 ? AP_GUARD_SIZE : 2 * AP_GUARD_SIZE + AP_STACK_SIZE + (k - 1) * (AP_GUARD_SIZE + AP_IST_SIZE);
}

static u64 area_stack_size(unsigned k)
{
	return k == 0 ? AP_STACK_SIZE : AP_IST_SIZE;
}

bool smp_arch_stack_guard(u64 addr, unsigned *cpu, const char **which)
{
	for (unsigned k = 0; k < ARRAY_SIZE(guards.boot); k++)
		if (guards.boot[k] && addr - guards.boot[k] < AP_GUARD_SIZE) {
			*cpu = 0;
			*which = stack_names[k];
			return true;
		}
	if (!guards.count || addr < guards.base || addr - guards.base >= (u64)guards.count * AP_AREA_SIZE)
		return false;
	u64 off = (addr - guards.base) % AP_AREA_SIZE;

	for (unsigned k = 0; k < 4; k++)
		if (off - (area_stack_lo(k) - AP_GUARD_SIZE) < AP_GUARD_SIZE) {
			*cpu = guards.cpu[(addr - guards.base) / AP_AREA_SIZE];
			*which = stack_names[k];
			return true;
		}
	return false;
}

/*
 * A guard page touched: the fault the stack overflow caused. A #PF when the CPU could
 * still push its frame (a far access below the stack), else the #DF the failed push
 * became (Intel SDM vol. 3A, "Interrupt 8 - Double Fault Exception": a page fault while
 * delivering a page fault), on its own IST stack; CR2 names the guard page either way.
 */
static bool guard_fault(struct trap_frame *f)
{
	u64 cr2 = read_cr2();
	const char *which;
	unsigned cpu;

	if (!smp_arch_stack_guard(cr2, &cpu, &which))
		return false;
	/* Another CPU's guard page: a stray pointer rather than an overflow; say so. */
	if (cpu != smp_cpu_index())
		kprintf("\n*** CPU %u touched the guard page below CPU %u's %s stack at %#llx\n",
			smp_cpu_index(), cpu, which, (unsigned long long)cr2);
	else
		kprintf("\n*** stack overflow: CPU %u ran off the bottom of its %s stack (guard page "
			"at %#llx, RSP %#llx)\n", cpu, which, (unsigned long long)ALIGN_DOWN(cr2, PAGE_SIZE),
			(unsigned long long)f->rsp);
	trap_report_fatal(f, cpu != smp_cpu_index() ? "stack guard page touched" : "stack overflow",
			  EXIT_EXCEPTION);
}

static void unmap_guard(u64 page)
{
	if (paging_unmap(page, page + PAGE_SIZE))
		fatal(EXIT_OUT_OF_MEMORY, "smp: out of memory for page tables (stack guard at %#llx)",
		      (unsigned long long)page);
}

void smp_arch_alloc_stacks(struct percpu *const *cpus, unsigned count, u64 (*alloc)(u64 size))
{
	u64 base;

	if (!count)
		return;
	if (count > MAX_CPUS || guards.count)
		panic("smp_arch_alloc_stacks: %u APs (at most %d, once)", count, MAX_CPUS);
	base = alloc((u64)count * AP_AREA_SIZE);
	if (!IS_ALIGNED(base, PAGE_SIZE))
		panic("smp_arch_alloc_stacks: %#llx is not page aligned", (unsigned long long)base);
	for (unsigned i = 0; i < count; i++) {
		u64 a = base + (u64)i * AP_AREA_SIZE;

		for (unsigned k = 0; k < 4; k++)
			unmap_guard(a + area_stack_lo(k) - AP_GUARD_SIZE);
		cpus[i]->stack_top = a + area_stack_lo(0) + area_stack_size(0);
		for (unsigned k = 1; k < 4; k++)
			cpus[i]->ist_top[k - 1] = a + area_stack_lo(k) + area_stack_size(k);
		guards.cpu[i] = (u16)cpus[i]->index;
	}
	guards.base = base;
	guards.count = count;
}

void smp_arch_guard_boot_stacks(u64 stack_lo)
{
	if (guards.boot[0])
		return;
	guards.boot[0] = stack_lo - PAGE_SIZE;
	for (unsigned k = 0; k < 3; k++)
		guards.boot[k + 1] = gdt_boot_ist_guard(k);
	for (unsigned k = 0; k < ARRAY_SIZE(guards.boot); k++)
		if (!IS_ALIGNED(guards.boot[k], PAGE_SIZE))
			panic("smp_arch_guard_boot_stacks: guard %#llx is not a page", guards.boot[k]);
	for (unsigned k = 0; k < ARRAY_SIZE(guards.boot); k++)
		unmap_guard(guards.boot[k]);
}

void smp_arch_init_bsp(struct percpu *bsp)
{
	bsp->self = bsp;
	bsp->index = 0;
	bsp->started = 1;
	bsp->checkin = SMP_CHECKIN_RUNNING;
	msr_write(MSR_GS_BASE, (u64)(uintptr_t)bsp);
	/* Before any handler that could touch the stack: the guard's report comes first. */
	trap_register(VEC_PF, guard_fault);
	trap_register(VEC_DF, guard_fault);
}

u32 smp_arch_bsp_apic_id(u64 lapic_base)
{
	return apic_init(lapic_base) ? apic_id() : (u32)-1;
}

void smp_arch_checkin_setup(void (*ap_main)(struct percpu *self) __noreturn,
			    void (*platform_step)(struct percpu *self))
{
	ap_main_fn = ap_main;
	ap_platform_fn = platform_step;
}

__noreturn void smp_arch_ap_checkin(struct percpu *self)
{
	u32 expected = SMP_CHECKIN_WAITING;

	/*
	 * Its own GDT and TSS (IST stacks), GS base and IDT before anything else, even on a
	 * CPU that arrives too late: its halt may trap (a TD's TDVMCALL is a #UD to the test
	 * image's emulator), and a handler reads the per-CPU data through GS; without a TSS
	 * a fault there would be a triple fault. Nobody else uses this index's tables.
	 */
	gdt_init_cpu((unsigned)self->index, self->ist_top);	/* clears GS base */
	msr_write(MSR_GS_BASE, (u64)(uintptr_t)self);
	idt_load();
	/* Too late: the boot CPU went on without this CPU (on SNP it stops it: AP Destroy). */
	if (!__atomic_compare_exchange_n(&self->checkin, &expected, SMP_CHECKIN_RUNNING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		cpu_halt();
	if (ap_platform_fn)
		ap_platform_fn(self);
	self->start_ns = tsc_now_ns();
	__atomic_store_n(&self->started, 1, __ATOMIC_RELEASE);
	ap_main_fn(self);
}

/* Give up on an AP; false if it checked in at the same moment (it wins). */
static bool abandon(struct percpu *pc)
{
	u32 expected = SMP_CHECKIN_WAITING;

	return __atomic_compare_exchange_n(&pc->checkin, &expected, SMP_CHECKIN_ABANDONED, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

unsigned smp_arch_wait_checkins(const struct smp_start *s, const bool *asked, bool *ok, u64 stall_ns)
{
	unsigned started = 0, waiting = 0;
	bool in[MAX_CPUS];
	u64 last = tsc_now_ns();

	/*
	 * All of them at once, not one after the other: a slow AP costs only itself. The
	 * bound runs from the last check-in of any of them, so it only ends a wait in which
	 * none of the APs still asked for arrives.
	 */
	for (unsigned i = 0; i < s->count; i++) {
		in[i] = !asked[i];
		waiting += asked[i];
	}
	while (waiting) {
		bool progress = false;

		for (unsigned i = 0; i < s->count; i++)
			if (!in[i] && __atomic_load_n(&s->cpus[i]->checkin, __ATOMIC_ACQUIRE) !=
					      SMP_CHECKIN_WAITING) {
				in[i] = progress = true;
				waiting--;
			}
		if (progress)
			last = tsc_now_ns();
		else if (tsc_now_ns() - last > stall_ns)
			break;
		cpu_relax();
	}
	for (unsigned i = 0; i < s->count; i++) {
		struct percpu *pc = s->cpus[i];

		ok[i] = !abandon(pc);
		if (!ok[i])
			continue;
		/* Checked in: wait until it runs on its own GDT and per-CPU data. */
		while (!__atomic_load_n(&pc->started, __ATOMIC_ACQUIRE))
			cpu_relax();
		started++;
	}
	return started;
}

/* The trampoline's first C code for an AP: on its own stack, still with the trampoline's GDT. */
static __noreturn void ap_entry(struct ap_slot *slot)
{
	emu_note_ap_entry();
	smp_arch_ap_checkin((struct percpu *)(uintptr_t)slot->percpu);
}

/*
 * Temporary page tables in the trampoline's pages 1-4: the first 2 MiB, identity; with
 * a PML5 over them when the boot CPU runs five-level paging (the AP turns LA57 on with
 * PAE, before IA-32e mode, and must then start on a PML5).
 */
static u64 build_temp_tables(u64 tramp)
{
	u64 *pml4 = (u64 *)(uintptr_t)(tramp + PAGE_SIZE);
	u64 *pdpt = (u64 *)(uintptr_t)(tramp + 2 * PAGE_SIZE);
	u64 *pd = (u64 *)(uintptr_t)(tramp + 3 * PAGE_SIZE);
	u64 *pml5 = (u64 *)(uintptr_t)(tramp + 4 * PAGE_SIZE);

	memset(pml4, 0, 4 * PAGE_SIZE);
	pml4[0] = (u64)(uintptr_t)pdpt | PTE_P | PTE_W;
	pdpt[0] = (u64)(uintptr_t)pd | PTE_P | PTE_W;
	pd[0] = PTE_P | PTE_W | PTE_PS;
	if (!(read_cr4() & CR4_LA57))
		return (u64)(uintptr_t)pml4;
	pml5[0] = (u64)(uintptr_t)pml4 | PTE_P | PTE_W;
	return (u64)(uintptr_t)pml5;
}

/* The 10 ms after INIT, on the processors that need it. */
static u64 init_wait_ns(void)
{
	struct cpuid_regs r0, r1;
	char vendor[12];

	cpu_cpuid(0, 0, &r0);
	cpu_cpuid(1, 0, &r1);
	memcpy(vendor, &r0.ebx, 4);
	memcpy(vendor + 4, &r0.edx, 4);
	memcpy(vendor + 8, &r0.ecx, 4);
	return smp_init_wait_needed(vendor, cpu_family(r1.eax)) ? INIT_WAIT_NS : 0;
}

static void delay_ns(u64 ns)
{
	for (u64 t0 = tsc_now_ns(); tsc_now_ns() - t0 < ns;)
		cpu_relax();
}

static bool tramp_usable(u64 tramp, const char **why)
{
	u64 size = (u64)(tramp_end - tramp_start);

	/* The wakeup vectors must be what the mailbox path computes (trampoline.asm). */
	if ((u64)(tramp_wake_stubs_end - tramp_wake_stubs) != MAX_CPUS * WAKE_STUB_SIZE)
		panic("tramp_usable: %lld bytes of wakeup vectors, expected %d x %d",
		      (long long)(tramp_wake_stubs_end - tramp_wake_stubs), MAX_CPUS, WAKE_STUB_SIZE);
	if (!tramp || tramp < PAGE_SIZE || tramp + TRAMPOLINE_PAGES * PAGE_SIZE > 1 * MiB ||
	    !IS_ALIGNED(tramp, PAGE_SIZE) || size > PAGE_SIZE) {
		*why = "no trampoline page below 1 MiB";
		return false;
	}
	return true;
}

/* Copy the trampoline to tramp and fill its data block (slots not yet published). */
static struct tramp_data *tramp_fill(u64 tramp, u32 cr3_temp, u64 cr3, u64 entry, struct ap_slot *slots)
{
	u64 size = (u64)(tramp_end - tramp_start);
	struct tramp_data *d = (struct tramp_data *)(uintptr_t)(tramp + (u64)(tramp_data - tramp_start));
	u64 gdt = (u64)(uintptr_t)d->gdt;
	u16 limit = sizeof(d->gdt) - 1;

	memcpy((void *)(uintptr_t)tramp, tramp_start, size);
	memset(d, 0, sizeof(*d));
	d->gdt[1] = 0x00af9a000000ffffULL;	/* 64-bit code, as the kernel's GDT */
	d->gdt[2] = 0x00cf92000000ffffULL;
	d->gdt_limit = limit;
	d->gdt_base_lo = (u16)gdt;
	d->gdt_base_hi = (u16)(gdt >> 16);
	memcpy(d->gdtr64, &limit, sizeof(limit));
	memcpy(d->gdtr64 + 2, &gdt, sizeof(gdt));
	d->cr3_temp = cr3_temp;
	d->cr0 = (u32)read_cr0();
	d->efer = (u32)(EFER_LME | (msr_read(MSR_EFER) & EFER_NXE));
	d->ljmp_offset = (u32)(tramp + (u64)(tramp_long_mode - tramp_start));
	d->ljmp_selector = KERNEL_CS;
	d->wake_ljmp_offset = (u32)(tramp + (u64)(tramp_wakeup64_cs - tramp_start));
	d->wake_ljmp_selector = KERNEL_CS;
	d->cr4 = read_cr4();
	d->kernel_cr3 = cr3;
	d->entry = entry;
	d->slots = (u64)(uintptr_t)slots;
	memset(slots, 0, MAX_CPUS * sizeof(*slots));
	/* The IDT this CPU runs on, the kernel's: a TD's AP loads it before anything can trap. */
	__asm__ volatile("sidt %0" : "=m"(d->idtr_kernel));
	return d;
}

/* The APs' slots (their stacks come from smp_arch_alloc_stacks); published with d->nslots. */
static void fill_slots(struct tramp_data *d, const struct smp_start *s)
{
	for (unsigned i = 0; i < s->count; i++) {
		struct percpu *pc = s->cpus[i];

		if (!pc->stack_top)
			panic("fill_slots: CPU %llu has no stack", (unsigned long long)pc->index);
		pc->checkin = SMP_CHECKIN_WAITING;
		kernel_slots[i].apic_id = s->apic_ids[i];
		kernel_slots[i].stack_top = pc->stack_top;
		kernel_slots[i].percpu = (u64)(uintptr_t)pc;
	}
	/* The slots are complete before any AP can read them (release). */
	__atomic_store_n(&d->nslots, s->count, __ATOMIC_RELEASE);
}

static struct tramp_data *tramp_setup(const struct smp_start *s)
{
	struct tramp_data *d = tramp_fill(s->trampoline, (u32)build_temp_tables(s->trampoline),
					  read_cr3(), (u64)(uintptr_t)ap_entry, kernel_slots);

	if (s->count > MAX_CPUS)
		panic("tramp_setup: %u APs, at most %d", s->count, MAX_CPUS);
	smp_arch_checkin_setup(s->ap_main, NULL);
	fill_slots(d, s);
	return d;
}

unsigned smp_arch_start(const struct smp_start *s, const char **why)
{
	u64 tramp = s->trampoline;
	bool asked[MAX_CPUS], ok[MAX_CPUS];

	*why = NULL;
	if (!s->count || !tramp_usable(tramp, why))
		return 0;
	/* The trampoline finds its slot by the 32-bit x2APIC ID (CPUID leaf 0xB) where it can. */
	tramp_setup(s);

	for (unsigned i = 0; i < s->count; i++) {
		asked[i] = apic_send_init(s->apic_ids[i]);
		/* An xAPIC cannot address an ID above 0xFE (the ICR has 8 bits for it). */
		if (!asked[i] && s->ap_why)
			s->ap_why[i] = "was not sent INIT: its APIC ID does not fit the xAPIC ICR, or the "
				       "ICR stayed busy";
	}
	delay_ns(init_wait_ns());
	for (unsigned i = 0; i < s->count; i++)
		if (asked[i])
			apic_send_startup(s->apic_ids[i], (u8)(tramp >> PAGE_SHIFT));
	delay_ns(SIPI_WAIT_NS);
	for (unsigned i = 0; i < s->count; i++)
		if (asked[i] && __atomic_load_n(&s->cpus[i]->checkin, __ATOMIC_ACQUIRE) == SMP_CHECKIN_WAITING)
			apic_send_startup(s->apic_ids[i], (u8)(tramp >> PAGE_SHIFT));
	return smp_arch_wait_checkins(s, asked, ok, s->timeout_ns);
}

static u16 mailbox_command(void *mb)
{
	return __atomic_load_n((const u16 *)((u8 *)mb + MP_MAILBOX_OFF_COMMAND), __ATOMIC_ACQUIRE);
}

static void mailbox_post(void *mb, u32 apic_id, u64 vector)
{
	smp_mailbox_post(mb, apic_id, vector);
}

static u64 mailbox_now_ns(void *unused)
{
	return tsc_now_ns();
}

static void mailbox_relax(void *unused)
{
	cpu_relax();
}

/* The protocol's decisions are arch/x86/mp_mailbox.c's (fuzzed against ACPI's rules). */
unsigned smp_arch_start_mailbox(const struct smp_start *s, u64 mailbox, const char **why)
{
	const struct mp_mailbox_ops ops = { (void *)(uintptr_t)mailbox, mailbox_command, mailbox_post,
					    mailbox_now_ns, mailbox_relax };
	u64 vectors = s->trampoline + (u64)(tramp_wake_stubs - tramp_start);
	bool asked[MAX_CPUS] = { false }, ok[MAX_CPUS];
	struct mp_mailbox_run run = { .asked = asked };
	unsigned started;

	*why = NULL;
	if (!s->count || !tramp_usable(s->trampoline, why))
		return 0;
	tramp_setup(s);
	mp_mailbox_wake(&ops, s->apic_ids, s->count, vectors, WAKE_STUB_SIZE, MAILBOX_TAKE_TIMEOUT_NS, &run,
			s->take_max_ns);
	started = smp_arch_wait_checkins(s, asked, ok, s->timeout_ns);
	/*
	 * An AP given up on parks if it ever comes: on its own stack with the kernel's IDT,
	 * it finds its check-in abandoned and halts in smp_arch_ap_checkin (in a TD its halt
	 * is a TDVMCALL, which needs no handler, but anything before it may trap).
	 */
	for (unsigned i = 0; s->ap_why && i < s->count; i++)
		s->ap_why[i] = mp_mailbox_why(&run, i, ok[i],
					      __atomic_load_n(&kernel_slots[i].taken, __ATOMIC_ACQUIRE));
	return started;
}

/* Test image: the emulated firmware starts its own vCPUs through the same trampoline. */
u64 smp_arch_tramp_install(u64 tramp, u32 cr3, u64 entry, const u32 *apic_ids, const u64 *stack_tops,
			   const u64 *args, unsigned n)
{
	struct tramp_data *d = tramp_fill(tramp, cr3, cr3, entry, install_slots);

	for (unsigned i = 0; i < n && i < MAX_CPUS; i++) {
		install_slots[i].apic_id = apic_ids[i];
		install_slots[i].stack_top = stack_tops[i];
		install_slots[i].percpu = args[i];
	}
	__atomic_store_n(&d->nslots, MIN(n, (unsigned)MAX_CPUS), __ATOMIC_RELEASE);
	return tramp;
}
