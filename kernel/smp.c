/* SPDX-License-Identifier: MIT */
/* memaccept: which vCPUs memaccept uses, how they were started, and the work loop they run. */
#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"
#include "arch/x86/platform.h"
#include "arch/x86/sev/snp.h"
#include "arch/x86/tdx/tdx.h"
#include "arch/x86/smp.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "include/exit_codes.h"
#include "include/panic.h"
#include "kernel/conformance.h"
#include "kernel/main.h"
#include "kernel/memory.h"
#include "kernel/mp_wakeup.h"
#include "kernel/smp.h"
#include "kernel/smp_ids.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "mm/early.h"
#include "mm/page_alloc.h"

/*
 * The APs still waiting when none of them checked in for this long (after the last start
 * request: STARTUP IPIs, wakeup command, AP Creation) are given up on: 1 s plus 25 ms per
 * AP. It runs from the latest check-in, so a slow AP costs only itself, never the APs
 * after it. Under QEMU's TCG on two busy host cores 16 vCPUs checked in within
 * 110-780 ms, 64 within 1.48 s.
 */
#define AP_START_TIMEOUT_NS (1000 * 1000 * 1000ULL)
#define AP_START_TIMEOUT_PER_AP_NS (25 * 1000 * 1000ULL)
/* smp_phantom=N (test image): APIC IDs from here, which no QEMU vCPU has. */
#define PHANTOM_APIC_BASE 0xf0

static struct percpu cpus[MAX_CPUS];
static struct acpi_facts acpi;
/* The MADT's CPUs sorted out (static: three MAX_CPUS arrays); smp_report() lists them. */
static struct smp_ids madt_ids;
static unsigned nslots = 1;	/* cpus[0 .. nslots) were tried; 0 is the boot CPU */
static bool madt_skipped;	/* the firmware counted one vCPU: the MADT was not read */

void smp_init_bsp(void)
{
	smp_arch_init_bsp(&cpus[0]);
}

unsigned smp_this_cpu(void)
{
	return smp_cpu_index();
}

bool smp_cpu_online(unsigned cpu)
{
	return cpu < nslots && __atomic_load_n(&cpus[cpu].started, __ATOMIC_ACQUIRE);
}

unsigned smp_cpus_started(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < nslots; i++)
		n += smp_cpu_online(i);
	return n;
}

unsigned smp_cpu_slots(void)
{
	return nslots;
}

/*
 * Every wait here is also where a CPU gives its page allocator cache back when a CPU
 * that ran out of memory asks for it (palloc_poll, mm/page_alloc.c).
 */
static void wait_relax(void)
{
	palloc_poll();
	cpu_relax();
}

/* Run the short item handed over while this CPU was busy (or just finished), if any. */
static void run_nested(struct percpu *self)
{
	u64 seq = atomic_load64(&self->nested_seq);

	if (seq == self->nested_done)
		return;
	self->nested((unsigned)self->index, self->nested_arg);
	atomic_store64(&self->nested_done, seq);
}

/* An AP's life after start-up: wait for work, do it, say so. Interrupts stay off. */
static __noreturn void ap_main(struct percpu *self)
{
	u64 seen = 0;

	for (;;) {
		u64 seq;

		/* An item may be handed over as nested just as a long one ends: run it too. */
		while ((seq = atomic_load64(&self->work_seq)) == seen) {
			run_nested(self);
			wait_relax();
		}
		self->work((unsigned)self->index, self->work_arg);
		seen = seq;
		atomic_store64(&self->done_seq, seq);
	}
}

void smp_yield(void)
{
	run_nested(&cpus[smp_this_cpu()]);
}

/* Which kind of item smp_start_work() last gave each AP: smp_wait() waits for that one. */
static bool long_running[MAX_CPUS], gave_nested[MAX_CPUS];

static bool item_done(unsigned i)
{
	return atomic_load64(&cpus[i].done_seq) == atomic_load64(&cpus[i].work_seq);
}

static bool nested_done(unsigned i)
{
	return atomic_load64(&cpus[i].nested_done) == atomic_load64(&cpus[i].nested_seq);
}

static void post(void (*fn)(unsigned cpu, void *arg), void *arg, bool is_long)
{
	for (unsigned i = 1; i < nslots; i++) {
		if (!smp_cpu_online(i))
			continue;
		gave_nested[i] = long_running[i] && !item_done(i);
		if (gave_nested[i]) {
			/* The long item (or, once it ends, the idle loop) runs it. */
			while (!nested_done(i))
				wait_relax();
			cpus[i].nested = fn;
			cpus[i].nested_arg = arg;
			atomic_add64(&cpus[i].nested_seq, 1);
			continue;
		}
		while (!item_done(i))
			wait_relax();
		long_running[i] = is_long;
		cpus[i].work = fn;
		cpus[i].work_arg = arg;
		/* Release: the AP sees fn and arg once it sees the new sequence number. */
		atomic_add64(&cpus[i].work_seq, 1);
	}
}

void smp_start_work(void (*fn)(unsigned cpu, void *arg), void *arg)
{
	post(fn, arg, false);
}

void smp_start_long(void (*fn)(unsigned cpu, void *arg), void *arg)
{
	post(fn, arg, true);
}

bool smp_work_done(void)
{
	for (unsigned i = 1; i < nslots; i++)
		if (smp_cpu_online(i) && !(gave_nested[i] ? nested_done(i) : item_done(i)))
			return false;
	return true;
}

void smp_wait(void)
{
	while (!smp_work_done())
		wait_relax();
}

void smp_wait_long(void)
{
	for (unsigned i = 1; i < nslots; i++)
		while (smp_cpu_online(i) && (!item_done(i) || !nested_done(i)))
			wait_relax();
}

void smp_run(void (*fn)(unsigned cpu, void *arg), void *arg)
{
	smp_start_work(fn, arg);
	fn(0, arg);
	smp_wait();
}

static u64 alloc_stacks(u64 size)
{
	return early_alloc(size, PAGE_SIZE);
}


/* What smp_init() did, for smp_report() after the measured window. */
static struct {
	const char *method;
	u64 cycles;		/* TSC cycles: the frequency is final only after ready */
	u32 ids[MAX_CPUS];
	unsigned nids;
	u8 vmsa[MAX_CPUS];	/* SNP: SMP_VMSA_* per AP (index i - 1 for ids[i]) */
	u64 take_max_ns;	/* TDX: the slowest wakeup command to be taken */
} result;

static void record(const char *method, u64 cycles, const u32 *ids, unsigned nids)
{
	result.method = method;
	result.cycles = cycles;
	result.nids = nids;
	for (unsigned i = 0; i < nids; i++)
		result.ids[i] = ids[i];
}

void smp_report(const struct boot_info *bi)
{
	u64 started[MAX_CPUS], missing[MAX_CPUS];
	unsigned ns = 0, nm = 0;
	u64 us = tsc_cycles_to_ns(result.cycles) / 1000;

	for (unsigned i = 0; i < result.nids; i++) {
		if (smp_cpu_online(i))
			started[ns++] = result.ids[i];
		else
			missing[nm++] = result.ids[i];
	}
	kprintf("smp: %u of %u vCPUs started (%s) in %llu us\n", ns, acpi.cpus_enabled,
		result.method, us);
	ev_begin("smp");
	ev_u64("cpus_reported", acpi.cpus_enabled);
	ev_u64("cpus_started", ns);
	ev_str("method", result.method);
	ev_u64("us", us);
	ev_u64("cpus_limit", bi->config.cpus);
	/* What the firmware's EFI MP Services counted (0: no such protocol); a TD's says 1. */
	ev_u64("firmware_cpus", bi->efi_cpus);
	ev_str("madt", madt_skipped ? "not-read" : acpi_status_name(acpi.madt));
	ev_u64_array("apic_ids", started, ns);
	ev_u64_array("not_started", missing, nm);
	/* The MADT's IDs that were not started: listed again, or no vCPU's (kernel/smp_ids.h). */
	for (unsigned i = 0; i < madt_ids.nduplicate; i++)
		started[i] = madt_ids.duplicate[i];
	ev_u64_array("madt_duplicates", started, madt_ids.nduplicate);
	for (unsigned i = 0; i < madt_ids.nno_cpu; i++)
		started[i] = madt_ids.no_cpu[i];
	ev_u64_array("madt_no_cpu", started, madt_ids.nno_cpu);
	if (tdx_num_vcpus())
		ev_u64("td_vcpus", tdx_num_vcpus());
	/* SNP: the APs whose VMSA was made but is not run: undone, or left a VMSA. */
	nm = ns = 0;
	for (unsigned i = 1; i < result.nids; i++) {
		if (result.vmsa[i - 1] == SMP_VMSA_REMOVED)
			started[ns++] = result.ids[i];
		else if (result.vmsa[i - 1] == SMP_VMSA_LEFT)
			missing[nm++] = result.ids[i];
	}
	ev_u64_array("vmsa_undone", started, ns);
	ev_u64_array("vmsa_left", missing, nm);
	/* TDX: how long the slowest wakeup command waited to be taken (bound: 30 s). */
	if (result.method && !strcmp(result.method, "madt-wakeup"))
		ev_u64("wakeup_take_max_us", result.take_max_ns / 1000);
	ev_end();
}

/* How the APs are started: INIT-SIPI, the TDX mailbox, SNP AP Creation (arch/x86/sev/snp_ap.c). */
enum { START_INIT_SIPI, START_MAILBOX, START_SNP };

/* Start ids[1 .. n) the way `how` says and record the outcome. ids[0] is the boot CPU. */
static void start_aps(const struct boot_info *bi, const u32 *ids, unsigned n, unsigned how, u64 t0)
{
	static const char *ap_why[MAX_CPUS];
	struct percpu *aps[MAX_CPUS];
	static const char *const methods[] = {
		[START_INIT_SIPI] = "init-sipi", [START_MAILBOX] = "madt-wakeup",
		[START_SNP] = "snp-ap-create",
	};
	const char *why = NULL;
	u64 timeout_ns = AP_START_TIMEOUT_NS + (u64)(n - 1) * AP_START_TIMEOUT_PER_AP_NS;

	if (n == 1) {
		record("none", 0, ids, 1);
		return;
	}
	if (ids[0] == (u32)-1) {
		kprintf("smp: the local APIC is disabled; running on the boot CPU\n");
		record("none", 0, ids, 1);
		return;
	}
	if (how == START_MAILBOX) {
		const char *bad = mp_wakeup_problem(&acpi, &kernel_memmap);

		/* Without a usable mailbox a TD cannot start its APs at all: one CPU. */
		if (bad) {
			kprintf("smp: cannot start the APs of this TD: %s; running on the boot CPU\n",
				bad);
			record("none", 0, ids, 1);
			return;
		}
		kprintf("smp: MADT wakeup mailbox at %#llx (version %u)\n", acpi.mp_wakeup_mailbox,
			acpi.mp_wakeup_version);
	}
	for (unsigned i = 1; i < n; i++) {
		cpus[i].self = &cpus[i];
		cpus[i].index = i;
		cpus[i].apic_id = ids[i];
		aps[i - 1] = &cpus[i];
		ap_why[i - 1] = NULL;
	}
	nslots = n;
	/* Their stacks, with guard pages: unmapped while no other CPU runs. */
	smp_arch_alloc_stacks(aps, n - 1, alloc_stacks);
	/* From here on the page tables may only grow (arch/x86/paging.h). */
	paging_shared();
	/* From here on the console serialises its users. */
	console_set_cpu_id(smp_this_cpu);
	struct smp_start s = {
		.trampoline = bi->smp_trampoline,
		.lapic_base = acpi.lapic_addr,
		.apic_ids = ids + 1,
		.count = n - 1,
		.cpus = aps,
		.alloc = alloc_stacks,
		.timeout_ns = timeout_ns,
		.ap_main = ap_main,
		.ap_why = ap_why,
		.ap_vmsa = result.vmsa,
		.take_max_ns = &result.take_max_ns,
	};

	if (how == START_MAILBOX)
		smp_arch_start_mailbox(&s, acpi.mp_wakeup_mailbox, &why);
	else if (how == START_SNP)
		snp_smp_start(&s, &why);
	else
		smp_arch_start(&s, &why);
	if (why) {
		kprintf("smp: cannot start the APs: %s; running on the boot CPU\n", why);
		nslots = 1;
	}
	for (unsigned i = 1; i < nslots; i++) {
		if (smp_cpu_online(i))
			continue;
		if (ap_why[i - 1])
			kprintf("smp: vCPU with APIC ID %u %s; going on without it\n", ids[i],
				ap_why[i - 1]);
		else
			kprintf("smp: vCPU with APIC ID %u did not start (no vCPU checked in for "
				"%llu ms); going on without it\n", ids[i], timeout_ns / 1000000);
	}
	record(methods[how], rdtsc_ordered() - t0, ids, nslots);
}

/*
 * In a TD the TDX module counts the vCPUs (tdx_num_vcpus, trusted), the MADT is the host's
 * word. More distinct CPUs than the module counts: the MADT names CPUs this TD does not
 * have, which no honest host does (QEMU lists each vCPU once, enabled, and a TD has no CPU
 * hotplug), and a wakeup command for one of them is never taken, which stops every wakeup
 * after it: terminate. Fewer: vCPUs the MADT leaves out stay in the firmware's loop,
 * unused, which is safe; say so. Not judged when the MADT lists more than MAX_CPUS (only
 * that many IDs are kept).
 */
static void td_vcpus_check(const struct smp_ids *m)
{
	u32 td = tdx_num_vcpus();

	if (!td || acpi.madt != ACPI_OK || acpi.cpus_listed < acpi.cpus_enabled)
		return;
	if (m->distinct > td)
		fatal_reason(EXIT_HOST_HOSTILE, FC_HOST_INPUT, "the MADT lists %u vCPUs, the TDX module "
			     "counts %u: it names CPUs this TD does not have", m->distinct, td);
	if (m->distinct < td)
		kprintf("smp: the TDX module counts %u vCPUs, the MADT lists %u; the ones it leaves "
			"out are not started\n", td, m->distinct);
}

void smp_init(const struct boot_info *bi, u32 platform_kind)
{
	u32 ids[MAX_CPUS];
	unsigned n = 0, limit = bi->config.cpus ? MIN(bi->config.cpus, MAX_CPUS) : MAX_CPUS;
	u64 t0 = rdtsc_ordered();
	u32 bsp;

	/* The boot CPU's stacks get their guard pages whether or not other CPUs start. */
	smp_arch_guard_boot_stacks((u64)(uintptr_t)kernel_stack);
	/*
	 * A normal VM whose firmware counts one enabled vCPU (EFI MP Services, before
	 * ExitBootServices) has nothing to start: no MADT walk inside the window (under TCG
	 * its first run alone costs about a millisecond). The boot CPU's APIC ID comes
	 * from its own APIC, at the address IA32_APIC_BASE gives.
	 */
	if (boot_one_cpu(bi) && platform_kind != PLATFORM_TDX &&
	    platform_kind != PLATFORM_SNP) {
		madt_skipped = true;
		acpi.cpus_enabled = acpi.cpus_listed = 1;
		ids[0] = cpus[0].apic_id = smp_arch_bsp_apic_id(0);
		record("none", 0, ids, 1);
		return;
	}
	/*
	 * The MADT lists the CPUs (ACPI 6.4 section 5.2.12), read with the same defensive
	 * walk as the conformance report: only ACPI and runtime memory, every length and
	 * checksum checked. A broken MADT means one CPU, never a guess.
	 */
	conformance_scan_acpi(bi->acpi_rsdp, &acpi);
	if (acpi.madt != ACPI_OK) {
		kprintf("smp: ACPI MADT %s; running on the boot CPU\n", acpi_status_name(acpi.madt));
		acpi.cpus_enabled = acpi.cpus_listed = 0;
	}
	bsp = smp_arch_bsp_apic_id(acpi.lapic_addr);

	/*
	 * The boot CPU first, then the MADT's other CPUs in its order, up to the limit. A
	 * CPU listed twice (as a local APIC and as a local x2APIC entry, or by a hostile
	 * host) is started once; an ID no vCPU can have is not started at all: a wakeup
	 * command for a broadcast ID would start whichever vCPUs take it (kernel/smp_ids.h).
	 */
	smp_ids_pick(acpi.apic_ids, acpi.cpus_listed, bsp, limit, &madt_ids);
	for (unsigned i = 0; i < madt_ids.nduplicate; i++)
		kprintf("smp: the MADT lists APIC ID %u more than once; it is started once\n",
			madt_ids.duplicate[i]);
	for (unsigned i = 0; i < madt_ids.nno_cpu; i++)
		kprintf("smp: the MADT lists APIC ID %#x, which no vCPU can have (at or above %#x); "
			"not started\n", madt_ids.no_cpu[i], SMP_APIC_ID_LIMIT);
	if (platform_kind == PLATFORM_TDX)
		td_vcpus_check(&madt_ids);
	n = madt_ids.n;
	memcpy(ids, madt_ids.ids, n * sizeof(ids[0]));
	for (unsigned i = 0; i < bi->config.smp_phantom && n < limit; i++)
		ids[n++] = PHANTOM_APIC_BASE + i;
	cpus[0].apic_id = bsp;
	if (acpi.cpus_enabled > MAX_CPUS && limit == MAX_CPUS)
		kprintf("smp: the firmware reports %u vCPUs; memaccept uses at most %d\n",
			acpi.cpus_enabled, MAX_CPUS);
	if (platform_kind == PLATFORM_TDX) {
		/* A TD has no INIT-SIPI: the MADT multiprocessor wakeup mailbox instead. */
		start_aps(bi, ids, n, START_MAILBOX, t0);
		return;
	}
	if (platform_kind == PLATFORM_SNP) {
		/* SNP: the GHCB AP Creation event with a VMSA per AP, where it can be had. */
		const char *why = n > 1 && ids[0] != (u32)-1 ? snp_ap_start_unavailable() : NULL;

		if (why) {
			kprintf("smp: cannot start the APs on snp: %s; %u vCPU(s) stay parked, memaccept "
				"runs on the boot CPU\n", why, n - 1);
			record("none", 0, ids, 1);
			return;
		}
		start_aps(bi, ids, n, START_SNP, t0);
		return;
	}
	start_aps(bi, ids, n, START_INIT_SIPI, t0);
}
