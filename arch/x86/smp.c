/* SPDX-License-Identifier: MIT */
/* memaccept: starting the application processors (INIT-SIPI-SIPI on a normal VM, the MADT wakeup mailbox in a TD) and their first steps. */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/desc.h"
#include "arch/x86/msr.h"
#include "arch/x86/smp.h"
#include "arch/x86/tsc.h"
#include "include/boot_info.h"
#include "include/mp_wakeup.h"
#include "lib/spinlock.h"
#include "lib/string.h"

#define CR4_LA57 (1ULL << 12)
#define PTE_P (1ULL << 0)
#define PTE_W (1ULL << 1)
#define PTE_PS (1ULL << 7)

/*
 * Intel SDM vol. 3A, "Typical AP Initialization Sequence": INIT, a 10 ms wait, STARTUP,
 * 200 us, a second STARTUP (the first may be lost on older CPUs; a CPU that is already
 * running ignores it). Current CPUs need no wait after INIT (smp_init_wait_needed()).
 */
#define INIT_WAIT_NS (10 * 1000 * 1000ULL)
#define SIPI_WAIT_NS (200 * 1000ULL)

/* An AP's slot in the trampoline's data block (trampoline.asm, D_SLOTS). */
enum { SLOT_WAITING, SLOT_RUNNING, SLOT_ABANDONED };
struct ap_slot {
	u32 apic_id;
	u32 state;		/* SLOT_*: the AP moves WAITING -> RUNNING, the BSP -> ABANDONED */
	u64 stack_top;
	u64 percpu;
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
	u64 pad3;
	struct ap_slot slots[MAX_CPUS];
	u8 gdtr64[16];		/* u16 limit, u64 base: for LGDT in 64-bit mode */
	u8 idtr0[16];		/* limit 0, base 0 */
	u32 wake_slot;		/* mailbox start: 1 + the slot the next woken AP takes, 0 none */
	u32 pad4;
	u8 idtr_kernel[16];	/* u16 limit, u64 base: the kernel's IDT (SIDT's form) */
	u32 park_lock;		/* bit 0: a parked AP uses the park stack (page 4) */
	u32 pad5;
};

_Static_assert(__builtin_offsetof(struct tramp_data, cr3_temp) == 8, "D_CR3_TEMP");
_Static_assert(__builtin_offsetof(struct tramp_data, ljmp_offset) == 20, "D_LJMP");
_Static_assert(__builtin_offsetof(struct tramp_data, cr4) == 32, "D_CR4");
_Static_assert(__builtin_offsetof(struct tramp_data, entry) == 48, "D_ENTRY");
_Static_assert(__builtin_offsetof(struct tramp_data, nslots) == 56, "D_NSLOTS");
_Static_assert(__builtin_offsetof(struct tramp_data, gdt) == 64, "D_GDT");
_Static_assert(__builtin_offsetof(struct tramp_data, slots) == 96, "D_SLOTS");
_Static_assert(sizeof(struct ap_slot) == 24, "SLOT_SIZE");
_Static_assert(__builtin_offsetof(struct tramp_data, gdtr64) == 480, "D_GDTR64");
_Static_assert(__builtin_offsetof(struct tramp_data, idtr0) == 496, "D_IDTR0");
_Static_assert(__builtin_offsetof(struct tramp_data, wake_slot) == 512, "D_WAKE_SLOT");
_Static_assert(__builtin_offsetof(struct tramp_data, idtr_kernel) == 520, "D_IDTR_KERNEL");
_Static_assert(__builtin_offsetof(struct tramp_data, park_lock) == 536, "D_PARK_LOCK");
_Static_assert(sizeof(struct tramp_data) == 544, "D_SIZE");

extern const u8 tramp_start[], tramp_end[], tramp_data[], tramp_long_mode[], tramp_wakeup64[];

static void (*ap_main_fn)(struct percpu *self) __noreturn;

void smp_arch_init_bsp(struct percpu *bsp)
{
	bsp->self = bsp;
	bsp->index = 0;
	bsp->started = 1;
	msr_write(MSR_GS_BASE, (u64)(uintptr_t)bsp);
}

u32 smp_arch_bsp_apic_id(u64 lapic_base)
{
	return apic_init(lapic_base) ? apic_id() : (u32)-1;
}

/* The AP's first C code: on its own stack, still with the trampoline's GDT. */
static __noreturn void ap_entry(struct ap_slot *slot)
{
	struct percpu *self = (struct percpu *)(uintptr_t)slot->percpu;
	u32 expected = SLOT_WAITING;

	/* Too late: the boot CPU went on without this CPU, and its index may be reused. */
	if (!__atomic_compare_exchange_n(&slot->state, &expected, SLOT_RUNNING, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		cpu_halt();
	gdt_init_cpu((unsigned)self->index, self->ist_top);
	msr_write(MSR_GS_BASE, (u64)(uintptr_t)self);
	idt_load();
	self->start_ns = tsc_now_ns();
	__atomic_store_n(&self->started, 1, __ATOMIC_RELEASE);
	ap_main_fn(self);
}

/* Temporary page tables in the trampoline's pages 1-3: the first 2 MiB, identity. */
static u64 build_temp_tables(u64 tramp)
{
	u64 *pml4 = (u64 *)(uintptr_t)(tramp + PAGE_SIZE);
	u64 *pdpt = (u64 *)(uintptr_t)(tramp + 2 * PAGE_SIZE);
	u64 *pd = (u64 *)(uintptr_t)(tramp + 3 * PAGE_SIZE);

	memset(pml4, 0, 3 * PAGE_SIZE);
	pml4[0] = (u64)(uintptr_t)pdpt | PTE_P | PTE_W;
	pdpt[0] = (u64)(uintptr_t)pd | PTE_P | PTE_W;
	pd[0] = PTE_P | PTE_W | PTE_PS;
	return (u64)(uintptr_t)pml4;
}

static bool wait_started(struct ap_slot *slot, u64 deadline)
{
	while (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == SLOT_WAITING) {
		if (tsc_now_ns() > deadline)
			return false;
		cpu_relax();
	}
	return true;
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

	if (!tramp || tramp < PAGE_SIZE || tramp + TRAMPOLINE_PAGES * PAGE_SIZE > 1 * MiB ||
	    !IS_ALIGNED(tramp, PAGE_SIZE) || size > PAGE_SIZE) {
		*why = "no trampoline page below 1 MiB";
		return false;
	}
	/* The temporary tables are four-level: LA57 cannot be switched on in long mode. */
	if (read_cr4() & CR4_LA57) {
		*why = "five-level paging is not supported for the APs";
		return false;
	}
	return true;
}

/* Copy the trampoline to tramp and fill its data block (no slots yet). */
static struct tramp_data *tramp_fill(u64 tramp, u32 cr3_temp, u64 cr3, u64 entry)
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
	d->cr4 = read_cr4();
	d->kernel_cr3 = cr3;
	d->entry = entry;
	/* The IDT this CPU runs on, the kernel's: a TD's AP loads it before anything can trap. */
	__asm__ volatile("sidt %0" : "=m"(d->idtr_kernel));
	return d;
}

/* Stacks and per-CPU data for each AP; the slots are published with d->nslots. */
static void fill_slots(struct tramp_data *d, const struct smp_start *s)
{
	/* Four stacks per AP in one allocation: its own, and #DF, NMI and #MC (IST). */
	u64 stacks = s->alloc(s->count * 4 * s->stack_size);

	for (unsigned i = 0; i < s->count; i++) {
		struct percpu *pc = s->cpus[i];
		u64 base = stacks + i * 4 * s->stack_size;

		d->slots[i].apic_id = s->apic_ids[i];
		d->slots[i].stack_top = base + s->stack_size;
		d->slots[i].percpu = (u64)(uintptr_t)pc;
		for (unsigned k = 0; k < 3; k++)
			pc->ist_top[k] = base + (k + 2) * s->stack_size;
	}
	/* The slots are complete before any AP can read them (release). */
	__atomic_store_n(&d->nslots, s->count, __ATOMIC_RELEASE);
}

static struct tramp_data *tramp_setup(const struct smp_start *s)
{
	struct tramp_data *d = tramp_fill(s->trampoline, (u32)build_temp_tables(s->trampoline),
					  read_cr3(), (u64)(uintptr_t)ap_entry);

	ap_main_fn = s->ap_main;
	fill_slots(d, s);
	return d;
}

/* The AP of slot i checked in: wait until it runs on its own GDT and per-CPU data. */
static void wait_running(const struct smp_start *s, unsigned i)
{
	while (!__atomic_load_n(&s->cpus[i]->started, __ATOMIC_ACQUIRE))
		cpu_relax();
}

/* Give up on slot i; false if it checked in at the same moment (it wins). */
static bool abandon(struct ap_slot *slot)
{
	u32 expected = SLOT_WAITING;

	return __atomic_compare_exchange_n(&slot->state, &expected, SLOT_ABANDONED, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

unsigned smp_arch_start(const struct smp_start *s, const char **why)
{
	u64 tramp = s->trampoline;
	struct tramp_data *d;
	unsigned started = 0;

	*why = NULL;
	if (!s->count || !tramp_usable(tramp, why))
		return 0;
	if (apic_is_x2apic()) {
		/* The trampoline finds its slot by the 8-bit initial APIC ID of CPUID leaf 1. */
		for (unsigned i = 0; i < s->count; i++)
			if (s->apic_ids[i] > 0xfe) {
				*why = "an x2APIC ID above 254 (the trampoline reads 8-bit IDs)";
				return 0;
			}
	}
	d = tramp_setup(s);

	for (unsigned i = 0; i < s->count; i++)
		apic_send_init(s->apic_ids[i]);
	delay_ns(init_wait_ns());
	for (unsigned i = 0; i < s->count; i++)
		apic_send_startup(s->apic_ids[i], (u8)(tramp >> PAGE_SHIFT));
	delay_ns(SIPI_WAIT_NS);
	for (unsigned i = 0; i < s->count; i++)
		if (__atomic_load_n(&d->slots[i].state, __ATOMIC_ACQUIRE) == SLOT_WAITING)
			apic_send_startup(s->apic_ids[i], (u8)(tramp >> PAGE_SHIFT));

	u64 deadline = tsc_now_ns() + s->timeout_ns;

	for (unsigned i = 0; i < s->count; i++) {
		struct ap_slot *slot = &d->slots[i];

		if (wait_started(slot, deadline) || !abandon(slot)) {
			wait_running(s, i);
			started++;
		}
	}
	return started;
}

/*
 * One AP through the mailbox: post the command, wait for the firmware's acknowledgement
 * (Command back to 0), then for the AP to take its slot. Returns NULL when it runs, else
 * why not; *stop says the mailbox must not be used again (see smp_arch_start_mailbox).
 */
static const char *wake_one(const struct smp_start *s, struct tramp_data *d, u8 *mb, u64 vector,
			    unsigned i, bool *stop)
{
	struct ap_slot *slot = &d->slots[i];
	u16 cmd = MP_MAILBOX_CMD_WAKEUP;
	u64 deadline;
	bool acked = false;

	/*
	 * A command still posted means the firmware has not taken the last one (or wrote one
	 * itself): writing ours over it could wake the wrong AP.
	 */
	if (__atomic_load_n((u16 *)(mb + MP_MAILBOX_OFF_COMMAND), __ATOMIC_ACQUIRE) !=
	    MP_MAILBOX_CMD_NOOP) {
		*stop = true;
		return "not woken: the mailbox holds a command the firmware has not taken";
	}
	/* Only slot i may be taken until this wakeup is settled. */
	__atomic_store_n(&d->wake_slot, i + 1, __ATOMIC_RELEASE);
	memcpy(mb + MP_MAILBOX_OFF_APIC_ID, &s->apic_ids[i], sizeof(u32));
	memcpy(mb + MP_MAILBOX_OFF_VECTOR, &vector, sizeof(vector));
	/* APIC ID and vector are visible before the command (Linux acpi_wakeup_cpu). */
	__atomic_store_n((u16 *)(mb + MP_MAILBOX_OFF_COMMAND), cmd, __ATOMIC_RELEASE);
	deadline = tsc_now_ns() + s->timeout_ns;
	while (tsc_now_ns() <= deadline) {
		if (!acked)
			acked = __atomic_load_n((u16 *)(mb + MP_MAILBOX_OFF_COMMAND),
						__ATOMIC_ACQUIRE) == MP_MAILBOX_CMD_NOOP;
		if (acked && __atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) != SLOT_WAITING)
			break;
		cpu_relax();
	}
	/*
	 * The slot stays published: if the AP took it, it is ours for good (it runs, or it
	 * parks in ap_entry once abandon() wins). If nobody took it, an AP may still come
	 * (ACPI 6.4 has no way to cancel a command), so the mailbox is not used again; a late
	 * AP takes this slot, finds it abandoned and halts in ap_entry, on its own stack with
	 * the kernel's IDT (in a TD its halt is a TDVMCALL, which needs no handler, but
	 * anything before it may trap).
	 */
	if (__atomic_load_n(&slot->state, __ATOMIC_ACQUIRE) == SLOT_WAITING && abandon(slot)) {
		*stop = true;
		if (__atomic_load_n(&d->wake_slot, __ATOMIC_ACQUIRE) == 0)
			return "arrived but did not check in";
		return acked ? "acknowledged the wakeup command but never arrived"
			     : "did not acknowledge the wakeup command";
	}
	wait_running(s, i);
	return NULL;
}

unsigned smp_arch_start_mailbox(const struct smp_start *s, u64 mailbox, const char **why)
{
	u64 vector = s->trampoline + (u64)(tramp_wakeup64 - tramp_start);
	struct tramp_data *d;
	unsigned started = 0;
	bool stop = false;

	*why = NULL;
	if (!s->count || !tramp_usable(s->trampoline, why))
		return 0;
	d = tramp_setup(s);
	/* One AP at a time (ACPI 6.4 5.2.12.19: one command in the mailbox at a time). */
	for (unsigned i = 0; i < s->count; i++) {
		const char *fail = stop ? "not woken: an earlier wakeup is still outstanding" :
					  wake_one(s, d, (u8 *)(uintptr_t)mailbox, vector, i, &stop);

		if (s->ap_why)
			s->ap_why[i] = fail;
		started += !fail;
	}
	return started;
}

/* Test image: the emulated firmware starts its own vCPUs through the same trampoline. */
u64 smp_arch_tramp_install(u64 tramp, u32 cr3, u64 entry, const u32 *apic_ids, const u64 *stack_tops,
			   const u64 *args, unsigned n)
{
	struct tramp_data *d = tramp_fill(tramp, cr3, cr3, entry);

	for (unsigned i = 0; i < n && i < MAX_CPUS; i++) {
		d->slots[i].apic_id = apic_ids[i];
		d->slots[i].stack_top = stack_tops[i];
		d->slots[i].percpu = args[i];
	}
	__atomic_store_n(&d->nslots, MIN(n, (unsigned)MAX_CPUS), __ATOMIC_RELEASE);
	return tramp;
}
