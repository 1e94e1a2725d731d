/* SPDX-License-Identifier: MIT */
/* memaccept: kernel_main, read top to bottom as the table of contents of a boot. */
#include "arch/x86/cpu.h"
#include "arch/x86/desc.h"
#include "arch/x86/platform.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/exit.h"
#include "kernel/main.h"
#include "kernel/memory.h"
#include "kernel/panic.h"
#include "kernel/report.h"
#include "kernel/smp.h"
#include "kernel/testcase.h"
#include "kernel/workload.h"
#ifdef CONFIG_EMULATOR
#include "arch/x86/emu/emu.h"
#endif
#include "mm/early.h"

u8 kernel_stack[KERNEL_STACK_SIZE] __aligned(16);

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

static void check_boot_info(struct boot_info *bi)
{
	/* boot/ and kernel/ are linked together, so this only trips on a build mix-up. */
	if (bi->version != BOOT_INFO_VERSION || bi->size != sizeof(*bi))
		panic("kernel_main: boot_info version %u size %u, expected %u and %zu", bi->version,
		      bi->size, BOOT_INFO_VERSION, sizeof(*bi));
	boot = bi;
}

/*
 * Where the time to `ready` goes: each boot step's end, in microseconds since efi_main.
 * Printed as the `boot_phases` event just before `ready`.
 */
static struct {
	const char *name;
	u64 us;
} phases[12];
static unsigned nphases;

static void phase_at(const char *name, u64 us)
{
	if (nphases < ARRAY_SIZE(phases))
		phases[nphases++] = (typeof(phases[0])){ name, us };
}

static u64 phase_done(const char *name)
{
	u64 us = tsc_now_us();

	phase_at(name, us);
	return us;
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

static void report_phases(void)
{
	ev_begin("boot_phases");
	for (unsigned i = 0; i < nphases; i++)
		ev_u64(phases[i].name, phases[i].us - (i ? phases[i - 1].us : 0));
	ev_end();
}

/* The clock every figure depends on: TSC frequency and how well it was calibrated. */
static void report_timing(const struct boot_info *bi)
{
	kprintf("timing: TSC %llu kHz (calibrated against EFI Stall, spread %llu ppm)%s\n",
		bi->tsc_hz / 1000, bi->tsc_cal_spread_ppm,
		bi->tsc_hz_cpuid ? "" : "; CPUID 0x15 does not report it");
	ev_begin("timing");
	ev_u64("tsc_hz", bi->tsc_hz);
	ev_u64("calibration_spread_ppm", bi->tsc_cal_spread_ppm);
	ev_u64("tsc_hz_cpuid", bi->tsc_hz_cpuid);
	if (bi->tsc_hz_cpuid) {
		u64 d = bi->tsc_hz > bi->tsc_hz_cpuid ? bi->tsc_hz - bi->tsc_hz_cpuid
						      : bi->tsc_hz_cpuid - bi->tsc_hz;

		ev_u64("cpuid_difference_ppm", d * 1000000 / bi->tsc_hz_cpuid);
	}
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
	 * The boot report waits in memory until the allocator is ready: time to ready is the
	 * kernel's work, not the serial line's (cheap under QEMU's TCG, but an exit to the
	 * host per character on TDX and SNP). console=sync prints at once, for debugging.
	 */
	if (!bi->config.console_sync)
		console_hold();
	/* Every time in the report counts from efi_main's first instruction. */
	tsc_set(bi->tsc_hz, bi->tsc_at_entry);

	/*
	 * The platform before our IDT: from the instruction that loads it, #VE (TDX) and #VC
	 * (SNP) have their handlers and the console goes through the platform's port I/O
	 * (TDVMCALL on TDX; held in memory on SNP until the GHCB exists), so even a panic
	 * while the tables are set up reaches the console and the host. (Until idt_init()
	 * the firmware's IDT, with its own #VE/#VC handlers, is still the one loaded.)
	 */
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
#endif
	memory_trap_init();
#ifdef CONFIG_EMULATOR
	emu_announce();
#endif
	/* TD info (and the TD attribute check) on TDX. */
	platform_setup_early(kind);
	u64 ebs_us = tsc_cycles_to_ns(bi->tsc_at_ebs - bi->tsc_at_entry) / 1000;

	phase_at("efi_main_to_ebs", ebs_us);
	phase_done("descriptor_tables");
	kprintf("kernel: boot services exited after %u attempt(s), %llu us after efi_main\n",
		bi->ebs_attempts, ebs_us);
	report_timing(bi);
	struct workload_spec workload;

	choose_workload(bi, &workload);

	/* Only the final map counts: the firmware may change it inside ExitBootServices. */
	memory_parse_map(bi, kind != PLATFORM_NONE, fake_allowed(bi));
	phase_done("memory_map");
	memory_report_firmware(bi);
	phase_done("firmware_report");

	/* Boot-time allocations come from memory the firmware already accepted. */
	early_init(&kernel_memmap);
#ifdef CONFIG_EMULATOR
	emu_setup_model(&kernel_memmap);
#endif
	/* Our identity map: OVMF's page tables live in boot-services memory. Unaccepted
	 * units stay unmapped. */
	memory_build_page_tables(platform->private_pte_bits, bi->has_1g_pages);
	/* SNP: the kernel's own GHCB, which needs our page tables (and makes port I/O work). */
	platform_setup_late(kind);
	phase_done("page_tables");
	/* The other vCPUs: they need our page tables and IDT, and stacks from early_alloc. */
	smp_init(bi, kind);
	phase_done("smp");
	/* One bit per unaccepted 2 MiB unit, from the final map. */
	memory_build_bitmap();
	phase_done("bitmap");
	/* Boot-services memory becomes free, edges are accepted, the policy runs. */
	memory_init_allocator(bi);
	/* Ready is the end of the last phase: the phases add up to it exactly. */
	u64 ready_us = phase_done("allocator");

	if (!bi->config.console_sync)
		console_release();
	report_phases();
	report_ready(bi->config.policy, ready_us);
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
