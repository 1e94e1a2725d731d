/* SPDX-License-Identifier: MIT */
/* memaccept: kernel_main, read top to bottom as the table of contents of a boot. */
#include "arch/x86/cpu.h"
#include "arch/x86/desc.h"
#include "arch/x86/hooks.h"
#include "arch/x86/observer.h"
#include "arch/x86/platform.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "drivers/exit.h"
#include "include/panic.h"
#include "kernel/clock.h"
#include "kernel/conformance.h"
#include "kernel/main.h"
#include "kernel/memory.h"
#include "kernel/smp.h"
#include "kernel/testcase.h"
#include "kernel/workload.h"
#ifdef CONFIG_EMULATOR
#include "arch/x86/emu/emu.h"
#endif
#include "mm/early.h"

struct kernel_stack_area kernel_stack_area __aligned(PAGE_SIZE);

#ifdef CONFIG_TEST_IMAGE
const bool kernel_is_test_image = true;
#else
const bool kernel_is_test_image = false;
#endif

static struct boot_info *boot;

bool kernel_stack_contains(u64 addr, u64 len)
{
	u64 lo = (u64)(uintptr_t)kernel_stack;

	return addr >= lo && addr + len <= lo + KERNEL_STACK_SIZE && addr + len > addr;
}

const struct boot_info *kernel_boot_info(void)
{
	return boot;
}

u64 kernel_image_base(void)
{
	return boot ? boot->image_base : 0;
}

void kernel_report_boot(const struct boot_info *bi)
{
	kprintf("\nmemaccept%s: efi_main\n", kernel_is_test_image ? " (test image)" : "");
	kprintf("boot: image at %#llx, %llu KiB\n", (unsigned long long)bi->image_base,
		(unsigned long long)(bi->image_size >> 10));
	kprintf("boot: command line (%s): %s\n",
		bi->cmdline_source == CMDLINE_LOAD_OPTIONS ? "load options" :
		bi->cmdline_source == CMDLINE_FILE ? "\\memaccept.cfg" : "none, defaults",
		bi->cmdline);
}

/* What efi_main found (formatted after `ready`: no formatting inside the window). */
static void report_handover(const struct boot_info *bi)
{
	kprintf("boot: firmware %s (revision %#x, UEFI %u.%u), %u configuration tables\n",
		bi->fw_vendor[0] ? bi->fw_vendor : "?", bi->fw_revision, bi->uefi_revision >> 16,
		(bi->uefi_revision & 0xffff) / 10, bi->efi_table_count);
	if (bi->smp_trampoline)
		kprintf("boot: AP trampoline at %#llx\n", (unsigned long long)bi->smp_trampoline);
	else
		kprintf("boot: no AP trampoline (%s)\n", boot_one_cpu(bi) ?
			"the firmware runs one vCPU" : "no free page below 1 MiB");
}

static void check_boot_info(struct boot_info *bi)
{
	/* boot/ and kernel/ are linked together, so this only trips on a build mix-up. */
	if (bi->version != BOOT_INFO_VERSION || bi->size != sizeof(*bi))
		panic("kernel_main: boot_info version %u size %u, expected %u and %zu", bi->version,
		      bi->size, BOOT_INFO_VERSION, sizeof(*bi));
	boot = bi;
}

/*
 * Where the time to `ready` goes: the TSC at each boot step's end. Kept in cycles, since
 * the frequency may only be known after `ready` (kernel/clock.c); printed as the
 * `boot_phases` event, in microseconds, just before `ready`.
 */
static struct {
	const char *name;
	u64 tsc;
} phases[12];
static unsigned nphases;

static void phase_at(const char *name, u64 tsc)
{
	if (nphases < ARRAY_SIZE(phases))
		phases[nphases++] = (typeof(phases[0])){ name, tsc };
}

static u64 phase_end(const char *name)
{
	u64 tsc = rdtsc_ordered();

	phase_at(name, tsc);
	return tsc;
}

/* The phase's end for the instruction observer too (arch/x86/observer.h): id is literal. */
#define phase_done(name, id) ({ OBS_MARK(OBS_KIND_PHASE, id); phase_end(name); })

static u64 since_entry_us(u64 tsc)
{
	return tsc_cycles_to_ns(tsc - tsc_origin()) / 1000;
}

/* A bad workload= falls back to the default, like any other bad option. */
static void choose_workload(struct boot_info *bi, struct workload_spec *w)
{
	char err[160];

	if (workload_parse(bi->config.workload[0] ? bi->config.workload : WORKLOAD_DEFAULT, w, err,
			   sizeof(err)))
		return;
	bi->config.bad_options++;
	kprintf("cmdline: %s; using %s\n", err, WORKLOAD_DEFAULT);
	workload_parse(WORKLOAD_DEFAULT, w, err, sizeof(err));
}

/*
 * efi_main_to_ebs split: memaccept's own steps, and the firmware's (reading the command
 * line file, the vCPU count, GetMemoryMap and ExitBootServices), which it cannot make
 * faster.
 */
static void report_boot_steps(const struct boot_info *bi)
{
	static const char *const names[BOOT_STEP_COUNT] = {
		[BOOT_STEP_CONSOLE] = "console", [BOOT_STEP_CMDLINE] = "cmdline_read",
		[BOOT_STEP_PLATFORM] = "platform_clock", [BOOT_STEP_CPU_COUNT] = "cpu_count",
	};
	u64 prev = bi->tsc_at_entry;

	ev_begin("boot_steps");
	for (unsigned i = 0; i < BOOT_STEP_COUNT; i++) {
		ev_u64(names[i], since_entry_us(bi->step_tsc[i]) - since_entry_us(prev));
		prev = bi->step_tsc[i];
	}
	ev_u64("exit_boot_services", since_entry_us(bi->tsc_at_ebs) - since_entry_us(prev));
	ev_u64("firmware_us", since_entry_us(bi->step_tsc[BOOT_STEP_CMDLINE]) -
		since_entry_us(bi->step_tsc[BOOT_STEP_CONSOLE]) + since_entry_us(bi->tsc_at_ebs) -
		since_entry_us(bi->step_tsc[BOOT_STEP_PLATFORM]));
	ev_end();
}

static void report_phases(void)
{
	ev_begin("boot_phases");
	/* Rounded ends, so that the phases add up to `ready` exactly. */
	for (unsigned i = 0; i < nphases; i++)
		ev_u64(phases[i].name, since_entry_us(phases[i].tsc) -
				       (i ? since_entry_us(phases[i - 1].tsc) : 0));
	ev_end();
}

/*
 * fake_unaccepted_start is for normal VMs (and the test image's emulated platforms): on a
 * real TDX or SNP guest, conventional memory is accepted, and accepting it again would be
 * the double accept the whole design avoids.
 */
static bool fake_allowed(const struct boot_info *bi)
{
	bool emulated = bi->config.platform == PLAT_TDX_EMU || bi->config.platform == PLAT_SNP_EMU;

	if (!bi->config.fake_set || bi->detected == DETECTED_NONE || emulated)
		return bi->config.fake_set;
	kprintf("cmdline: fake_unaccepted_start is ignored on a real confidential VM\n");
	return false;
}

static void report_ready(u32 policy, u64 us)
{
	kprintf("ready: %llu us after efi_main, platform %s, policy %s\n", (unsigned long long)us,
		platform->name, policy_name(policy));
	ev_begin("ready");
	ev_u64("us", us);
	ev_str("platform", platform->name);
	ev_str("policy", policy_name(policy));
	ev_end();
}

__noreturn void kernel_main(struct boot_info *bi)
{
	/* memaccept polls the console and takes no interrupts, ever. */
	irq_disable();
	check_boot_info(bi);
	/*
	 * The boot report waits in memory until the allocator is ready (efi_main started
	 * holding it): time to ready is the kernel's work, not the serial line's (cheap
	 * under QEMU's TCG, but an exit to the host per character on TDX and SNP).
	 * console=sync prints at once, for debugging.
	 */
	/*
	 * The platform before our IDT: from the instruction that loads it, #VE (TDX) and #VC
	 * (SNP) have their handlers and the console goes through the platform's port I/O
	 * (TDVMCALL on TDX; held in memory on SNP until the GHCB exists), so even a panic
	 * while the tables are set up reaches the console and the host. (Until idt_init()
	 * the firmware's IDT, with its own #VE/#VC handlers, is still the one loaded.)
	 */
	/* What arch/'s trap handlers ask of the kernel (arch/x86/hooks.h). */
	arch_hooks = (struct arch_hooks){
		.stack_contains = kernel_stack_contains,
		.image_base = kernel_image_base,
		.in_unaccepted_span = memory_in_unaccepted_span,
		.unaccepted_access = memory_report_unaccepted_access,
	};
	u32 kind = platform_resolve(bi->detected, &bi->config);

	platform_set(kind, bi);
	platform_traps_init(kind);
#ifdef CONFIG_EMULATOR
	/* Test image: catch TDCALL/PVALIDATE/VMGEXIT (#UD) from the same moment. */
	emu_install();
#endif
	/* Our own descriptor tables: the firmware's sit in memory we will reuse. */
	gdt_init();
	idt_init();
	/* This CPU's per-CPU data (GS base, which loading the GDT cleared). */
	smp_init_bsp();
#ifdef CONFIG_TEST_IMAGE
	/* test=early_*: console output or a panic right after the IDT is loaded. */
	testcase_early(bi->config.test);
	testcase_window(bi, false);
#endif
	memory_trap_init();
#ifdef CONFIG_EMULATOR
	emu_announce();
#endif
	/* TD info (and the TD attribute check) on TDX. */
	platform_setup_early(kind);
	phase_at("efi_main_to_ebs", bi->tsc_at_ebs);
	phase_done("descriptor_tables", OBS_PHASE_DESC);

	/* Only the final map counts: the firmware may change it inside ExitBootServices. */
	memory_parse_map(bi, kind != PLATFORM_NONE, fake_allowed(bi));
	phase_done("memory_map", OBS_PHASE_MAP);

	/* Boot-time allocations come from memory the firmware already accepted. */
	early_init(&kernel_memmap);
#ifdef CONFIG_EMULATOR
	emu_setup_model(&kernel_memmap);
#endif
	/* workload=conformance: a descriptor is probed before the early allocator uses it. */
	conformance_probe_early(bi);
#ifdef CONFIG_TEST_IMAGE
	testcase_window(bi, true);
#endif
	/* Our identity map: OVMF's page tables live in boot-services memory. Unaccepted
	 * units stay unmapped. */
	memory_build_page_tables(platform->private_pte_bits, bi->has_1g_pages);
	/* SNP: the kernel's own GHCB, which needs our page tables (and makes port I/O work). */
	platform_setup_late(kind);
	/*
	 * Every time counts from efi_main's first instruction (kernel/clock.c). Not earlier:
	 * the PM timer needs port I/O, which on SNP needs the GHCB.
	 */
	clock_kernel_start(bi);
	phase_done("page_tables", OBS_PHASE_PT);
	/* The other vCPUs: they need our page tables and IDT, and stacks from early_alloc. */
	smp_init(bi, kind);
	phase_done("smp", OBS_PHASE_SMP);
	/* One bit per unaccepted 2 MiB unit, from the final map. */
	memory_build_bitmap();
	phase_done("bitmap", OBS_PHASE_BITMAP);
	/* Boot-services memory becomes free, the policy runs (partial units wait for it). */
	memory_init_allocator(bi);
	/* Ready is the end of the last phase: the phases add up to it exactly. */
	u64 ready_tsc = phase_done("allocator", OBS_PHASE_ALLOC);

	/*
	 * The boot report is formatted now, outside the window: under QEMU's TCG the
	 * formatting code's first run alone is a few hundred microseconds.
	 */
	console_set_flush_hook(NULL);
	if (!bi->config.console_sync)
		kernel_report_boot(bi);
	report_handover(bi);
	kprintf("kernel: boot services exited after %u attempt(s)\n", bi->ebs_attempts);
	/* Only the workload needs it: parsed outside the window. */
	struct workload_spec workload;

	choose_workload(bi, &workload);
	/* Outside the window too: the clock's final frequency, then every time can be printed. */
	clock_finish(bi);
	memory_report_firmware(bi);
	smp_report(bi);
	memory_report_bitmap();
	memory_report_allocator();
	if (!bi->config.console_sync)
		console_release();
	report_boot_steps(bi);
	report_phases();
	report_ready(bi->config.policy, since_entry_us(ready_tsc));
	/* accept_memory=background: the other vCPUs accept the rest while the workload runs. */
	memory_start_background(bi->config.policy);

#ifdef CONFIG_TEST_IMAGE
	if (bi->config.test[0]) {
		int code = testcase_run(bi->config.test);

		memory_report_summary();
		kernel_exit(code);
	}
#endif
	int code = workload_run(&workload);

	memory_report_background();
	memory_report_summary();
	kernel_exit(code);
}
