/* SPDX-License-Identifier: MIT */
/* memaccept: the UEFI entry point; the only code that sees EFI types. */
#include <efi.h>

#include "arch/x86/cpu.h"
#include "arch/x86/detect.h"
#include "arch/x86/observer.h"
#include "arch/x86/platform.h"
#include "arch/x86/tsc.h"
#include "boot/boot.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "drivers/exit.h"
#include "include/boot_info.h"
#include "include/exit_codes.h"
#include "kernel/conformance.h"
#include "kernel/main.h"
#include "lib/string.h"

/* How often ExitBootServices may fail with EFI_INVALID_PARAMETER before we give up. */
#define EBS_MAX_ATTEMPTS 8

static struct boot_info bi;
/*
 * A static buffer: allocating one from the firmware between GetMemoryMap() and
 * ExitBootServices() would itself change the map key.
 */
static u8 map_buf[BOOT_MAP_BUFFER] __aligned(8);

static EFI_SYSTEM_TABLE *st;

/* Before ExitBootServices: report, leave QEMU if it is there, else return to the firmware. */
static EFI_STATUS boot_fail(const char *msg, EFI_STATUS status)
{
	console_flush_held();
	kprintf("boot: FATAL: %s (EFI status %#llx)\n", msg, (unsigned long long)status);
	ev_begin("fatal");
	ev_str("msg", msg);
	ev_u64("code", EXIT_BOOT_FAILED);
	ev_end();
	ev_begin("exit");
	ev_u64("code", EXIT_BOOT_FAILED);
	ev_end();
	plain_io_out(DEBUG_EXIT_PORT, EXIT_BOOT_FAILED, 1);
	return EFI_ERROR(status) ? status : EFI_LOAD_ERROR;
}

/*
 * A guest memaccept refuses to run in, found before ExitBootServices: the firmware's
 * console and its #VC handler still work, so the reason reaches the log, the exit code
 * the harness (isa-debug-exit), and the firmware gets the error back.
 */
static EFI_STATUS boot_refuse(const char *what)
{
	console_flush_held();
	kprintf("boot: FATAL: this is %s: memaccept supports SEV-SNP, not SEV or SEV-ES, and "
		"stops before ExitBootServices\n", what);
	ev_begin("fatal");
	ev_str("msg", what);
	ev_str("condition", fatal_condition_name(FC_SNP_FEATURES));
	ev_u64("code", EXIT_PLATFORM_FATAL);
	ev_end();
	ev_begin("exit");
	ev_u64("code", EXIT_PLATFORM_FATAL);
	ev_end();
	plain_io_out(DEBUG_EXIT_PORT, EXIT_PLATFORM_FATAL, 1);
	return EFI_UNSUPPORTED;
}

static void report_boot_lines(void)
{
	kernel_report_boot(&bi);
}

static void report_option(const char *msg)
{
	kprintf("%s\n", msg);
}

/* UEFI 2.9 section 7.2, Table 7-6 (GNU-EFI 3.0 predates it). */
#define EFI_UNACCEPTED_MEMORY_TYPE 15

/*
 * The first map of the ExitBootServices loop, summarised for the conformance report: how
 * many descriptors (a retry must fit Linux's slack) and what its type 15 ranges are (they
 * must be the same in the final map).
 */
static void boot_first_map_summary(const u8 *map, UINTN size, UINTN desc_size)
{
	UINTN n = desc_size >= sizeof(EFI_MEMORY_DESCRIPTOR) ? size / desc_size : 0;

	bi.ebs_first_desc = (u32)MIN(n, (UINTN)UINT32_MAX);

	struct unacc_summary u = conformance_unacc_summary(map, n, desc_size);

	bi.ebs_first_unacc_desc = u.desc;
	bi.ebs_first_unacc_bytes = u.bytes;
	bi.ebs_first_unacc_hash = u.hash;
	bi.ebs_first_unacc_lo = u.lo;
	bi.ebs_first_unacc_hi = u.hi;
}

/*
 * The GetMemoryMap() handshake as a loader without slack does it (UEFI 2.9 section 7.2):
 * ask with no buffer for the size needed, then read the map into exactly that size, with
 * a guard pattern after it. Nothing is allocated in between, so the map cannot have grown.
 * A firmware that counts fewer descriptors than it writes (edk2 before pull request 11609
 * left type 15 entries out of the count) writes past the end; memaccept's own 160 KiB
 * buffer would hide that. For the conformance report; memaccept itself reads the map with
 * all of map_buf.
 */
#define HANDSHAKE_GUARD 4096
static void boot_map_handshake(void)
{
	EFI_BOOT_SERVICES *bs = st->BootServices;
	UINTN size = 0, key = 0, desc_size = 0, asked, over = 0;
	UINT32 version = 0;
	EFI_STATUS status = bs->GetMemoryMap(&size, NULL, &key, &desc_size, &version);

	if (status != EFI_BUFFER_TOO_SMALL || !size || size + HANDSHAKE_GUARD > sizeof(map_buf))
		return;
	asked = size;
	memset(map_buf + asked, 0xa5, HANDSHAKE_GUARD);
	status = bs->GetMemoryMap(&size, (EFI_MEMORY_DESCRIPTOR *)map_buf, &key, &desc_size, &version);
	for (UINTN i = HANDSHAKE_GUARD; i-- > 0;)
		if (map_buf[asked + i] != 0xa5) {
			over = i + 1;
			break;
		}
	if (status == EFI_SUCCESS && !over && size <= asked)
		bi.map_handshake = MAP_HANDSHAKE_OK;
	else if (over || (status == EFI_SUCCESS && size > asked))
		bi.map_handshake = MAP_HANDSHAKE_OVERFLOW |
				   (u32)MIN(MAX((u64)over, size > asked ? (u64)(size - asked) : 0),
					    0xffffULL) << 16;
	else
		bi.map_handshake = MAP_HANDSHAKE_TOO_SMALL;
}

/*
 * Type 15 is no memory a loader can allocate (UEFI 2.9 section 7.2: AllocatePages and
 * AllocatePool refuse EfiUnacceptedMemoryType with EFI_INVALID_PARAMETER), and
 * AllocateAddress into a type 15 range would hand the loader memory no one has accepted.
 * Asked once each before the final map; whatever the firmware grants is freed at once.
 */
static void boot_alloc15_checks(void)
{
	EFI_BOOT_SERVICES *bs = st->BootServices;
	UINTN size = sizeof(map_buf), key = 0, desc_size = 0;
	UINT32 version = 0;
	EFI_PHYSICAL_ADDRESS pa = 0;
	void *pool = NULL;

	bi.map_handshake |= FW_ALLOC15_CHECKED;
	if (bs->AllocatePages(AllocateAnyPages, EFI_UNACCEPTED_MEMORY_TYPE, 1, &pa) == EFI_SUCCESS) {
		bi.map_handshake |= FW_ALLOC15_PAGES;
		bs->FreePages(pa, 1);
	}
	if (bs->AllocatePool(EFI_UNACCEPTED_MEMORY_TYPE, 64, &pool) == EFI_SUCCESS) {
		bi.map_handshake |= FW_ALLOC15_POOL;
		bs->FreePool(pool);
	}
	if (bs->GetMemoryMap(&size, (EFI_MEMORY_DESCRIPTOR *)map_buf, &key, &desc_size, &version) ||
	    desc_size < sizeof(EFI_MEMORY_DESCRIPTOR))
		return;
	for (UINTN off = 0; off + desc_size <= size; off += desc_size) {
		EFI_MEMORY_DESCRIPTOR d;

		memcpy(&d, map_buf + off, sizeof(d));
		if (d.Type != EFI_UNACCEPTED_MEMORY_TYPE || !d.NumberOfPages)
			continue;
		bi.map_handshake |= FW_ALLOC15_ADDR_TRIED;
		pa = d.PhysicalStart;
		if (bs->AllocatePages(AllocateAddress, EfiLoaderData, 1, &pa) == EFI_SUCCESS) {
			bi.map_handshake |= FW_ALLOC15_ADDR;
			bs->FreePages(pa, 1);
		}
		return;
	}
}

/*
 * The map as it is right before the final ExitBootServices() call. The map key changes
 * whenever the firmware allocates or frees memory, which it may do inside
 * ExitBootServices itself (OVMF on SNP accepts memory in a before-EBS event when the
 * opt-in protocol was not called): then EBS returns EFI_INVALID_PARAMETER and we must
 * fetch a fresh map and try again. UEFI 2.9 section 7.4 allows only GetMemoryMap() and
 * ExitBootServices() between such attempts.
 */
static EFI_STATUS exit_boot_services(EFI_HANDLE image)
{
	EFI_BOOT_SERVICES *bs = st->BootServices;
	EFI_STATUS status = EFI_SUCCESS;

	bi.tsc_ebs_start = rdtsc_ordered();
	for (u32 attempt = 1; attempt <= EBS_MAX_ATTEMPTS; attempt++) {
		UINTN size = sizeof(map_buf), key = 0, desc_size = 0;
		UINT32 desc_version = 0;

		status = bs->GetMemoryMap(&size, (EFI_MEMORY_DESCRIPTOR *)map_buf, &key, &desc_size,
					  &desc_version);
		if (status == EFI_BUFFER_TOO_SMALL)
			return boot_fail("memory map is larger than the 160 KiB buffer", status);
		if (EFI_ERROR(status))
			return boot_fail("GetMemoryMap failed", status);

		if (attempt == 1)
			boot_first_map_summary(map_buf, size, desc_size);
		/* Test image only (compiled out otherwise): firmware that changes the map here. */
		boot_test_before_ebs(attempt);
		bi.tsc_ebs_call = rdtsc_ordered();
		status = bs->ExitBootServices(image, key);
		if (status == EFI_SUCCESS) {
			bi.tsc_at_ebs = rdtsc_ordered();
			OBS_MARK(OBS_KIND_PHASE, OBS_PHASE_EBS);
			/* Test image: from here no firmware handler serves a #VE or #VC. */
			boot_test_after_ebs();
			bi.ebs_attempts = attempt;
			bi.map_addr = (u64)(uintptr_t)map_buf;
			bi.map_size = size;
			bi.desc_size = desc_size;
			bi.desc_version = desc_version;
			return EFI_SUCCESS;
		}
		if (status != EFI_INVALID_PARAMETER)
			break;
	}
	/* Boot services may be half shut down now: there is no way back to the firmware. */
	console_flush_held();
	kprintf("boot: FATAL: ExitBootServices failed (status %#llx)\n", (unsigned long long)status);
	ev_begin("exit");
	ev_u64("code", EXIT_BOOT_FAILED);
	ev_end();
	machine_exit(EXIT_BOOT_FAILED);
}

/* Real mode reaches only the first MiB: the STARTUP IPI's vector is a page number there. */
#define TRAMPOLINE_MAX_ADDRESS 0x9ffff

/*
 * Pages below 1 MiB for the real-mode start-up code of the other vCPUs (kernel/smp.c),
 * which nothing can provide once the memory map is final.
 */
static void reserve_trampoline(void)
{
	EFI_PHYSICAL_ADDRESS tramp = TRAMPOLINE_MAX_ADDRESS;

	if (st->BootServices->AllocatePages(AllocateMaxAddress, EfiLoaderData, TRAMPOLINE_PAGES,
					    &tramp) == EFI_SUCCESS)
		bi.smp_trampoline = tramp;
}

/*
 * EFI_MP_SERVICES_PROTOCOL (UEFI PI specification 1.8, vol. 2, section 13.4;
 * edk2 MdePkg/Include/Protocol/MpService.h): its first member is
 * GetNumberOfProcessors(This, *NumberOfProcessors, *NumberOfEnabledProcessors). The PI
 * specification requires it on any system with more than one logical processor.
 */
#define EFI_MP_SERVICES_GUID \
	{ 0x3fdda605, 0xa76e, 0x4f46, { 0xad, 0x29, 0x12, 0xf4, 0x53, 0x1b, 0x3d, 0x08 } }

struct efi_mp_services {
	EFI_STATUS (EFIAPI *get_number_of_processors)(struct efi_mp_services *self, UINTN *total,
						       UINTN *enabled);
};

/*
 * How many vCPUs the firmware runs, from its own count: on a normal VM, 1 spares the
 * kernel the ACPI walk inside the window. Anything odd leaves 0 (walk the MADT).
 */
static void read_cpu_count(void)
{
	EFI_GUID guid = EFI_MP_SERVICES_GUID;
	struct efi_mp_services *mp = NULL;
	UINTN total = 0, enabled = 0;

	if (st->BootServices->LocateProtocol(&guid, NULL, (void **)&mp) != EFI_SUCCESS || !mp)
		return;
	if (mp->get_number_of_processors(mp, &total, &enabled) == EFI_SUCCESS && enabled &&
	    enabled <= total && total <= UINT32_MAX)
		bi.efi_cpus = (u32)enabled;
}

EFI_STATUS EFIAPI efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab);
EFI_STATUS EFIAPI efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
	EFI_LOADED_IMAGE *li = NULL;
	EFI_GUID li_guid = LOADED_IMAGE_PROTOCOL;
	EFI_STATUS status;

	/* Time zero of every figure in the report. */
	bi.tsc_at_entry = rdtsc_ordered();
	OBS_MARK(OBS_KIND_PHASE, OBS_PHASE_ENTRY);
	bi.version = BOOT_INFO_VERSION;
	bi.size = sizeof(bi);
	st = systab;

	/*
	 * 1. Console first, so that everything after it can explain itself. Its output
	 * waits in memory until `ready` (kernel_main releases it), unless console=sync.
	 */
	console_init();
	console_hold();
	exit_set_reset_system((u64)(uintptr_t)st->RuntimeServices->ResetSystem);
	bi.efi_reset_system = (u64)(uintptr_t)st->RuntimeServices->ResetSystem;

	status = st->BootServices->HandleProtocol(image, &li_guid, (void **)&li);
	if (EFI_ERROR(status) || !li)
		return boot_fail("no EFI_LOADED_IMAGE_PROTOCOL on our own image handle", status);
	bi.image_base = (u64)(uintptr_t)li->ImageBase;
	bi.image_size = li->ImageSize;

	bi.step_tsc[BOOT_STEP_CONSOLE] = rdtsc_ordered();

	/* 2. The command line: load options, else \memaccept.cfg on our ESP. */
	bi.cmdline_source = boot_read_cmdline(st, li, bi.cmdline, sizeof(bi.cmdline));
	bi.step_tsc[BOOT_STEP_CMDLINE] = rdtsc_ordered();
	cmdline_parse(bi.cmdline, &bi.config, kernel_is_test_image, report_option);
	/*
	 * The boot's own lines: at once with console=sync, else after `ready` (kernel_main),
	 * or before any report that flushes the console on the way out.
	 */
	if (bi.config.console_sync) {
		console_release();
		kernel_report_boot(&bi);
	} else {
		console_set_flush_hook(report_boot_lines);
	}

	/* 3. TDX or SNP? CPUID is safe only now (after EBS it raises #VC on SNP). */
	boot_emulator_select(&bi);
	detect_platform(&bi);
	if (detect_sev_without_snp(&bi))
		return boot_refuse(detect_sev_without_snp(&bi));

	/* Test image, snp-emu: the stand-in plays OVMF's SNP parts (CC blob, opt-in protocol). */
	if (bi.detected == DETECTED_SNP)
		boot_test_snp_standin(st, &bi);
	/* What the firmware handed over, for workload=conformance, and the RSDP (no map walk). */
	boot_conformance_capture(st, &bi);
	/* Test image: the emulated host's vCPUs, from the firmware's MADT (needs the RSDP). */
	boot_emulator_host_vcpus(&bi);
	/*
	 * 4. The TSC frequency, if the platform declares it (which needs the platform and
	 * CPUID); else the kernel measures it against the PM timer after `ready`.
	 */
	/* SNP: the secrets page (SVSM, TSC_FACTOR) first: the clock needs TSC_FACTOR. */
	if (bi.detected == DETECTED_SNP)
		boot_snp_read_svsm(st, &bi);
	boot_clock_choose(st, &bi);
	tsc_set(bi.tsc_hz, bi.tsc_at_entry);

	/* 5. SNP: ask OVMF to leave memory unaccepted, before ExitBootServices. */
	bi.snp_protocol = SNP_PROTOCOL_NOT_APPLICABLE;
	if (bi.detected == DETECTED_SNP) {
		bi.snp_protocol = boot_snp_opt_in(st);
	}

	/* Test image, tdx-emu: what TDVF adds for the TD's APs (it needs the RSDP). */
	boot_test_tdx_standin(st, &bi);
	/* Test image, snp-emu: the MADT a hostile host hands the guest (emu_fault=madt_*). */
	boot_test_snp_madt(st, &bi);
	bi.step_tsc[BOOT_STEP_PLATFORM] = rdtsc_ordered();
	read_cpu_count();
	bi.step_tsc[BOOT_STEP_CPU_COUNT] = rdtsc_ordered();

	/*
	 * 6. Memory to start the other vCPUs from (the kernel reads the MADT itself), unless
	 * the firmware runs this one alone on a normal VM: then there is nothing to start,
	 * and the allocation is one firmware call less inside the window. A TD's firmware
	 * always counts one processor (TDVF's MP Services are the uniprocessor ones) while
	 * its other vCPUs wait in the MADT wakeup mailbox loop, so on TDX (and SNP, whose
	 * vCPUs the kernel starts itself) only the MADT can tell.
	 */
	if (!boot_one_cpu(&bi) || bi.detected != DETECTED_NONE)
		reserve_trampoline();

	/* workload=conformance: does the map fit the size GetMemoryMap() asks for? */
	if (str_starts(bi.config.workload, "conformance")) {
		boot_map_handshake();
		boot_alloc15_checks();
	}

	/* 7. Leave the firmware. No boot service may be called after this. */
	status = exit_boot_services(image);
	if (EFI_ERROR(status))
		return status;

	/* 8. The kernel's own stack; boot-services memory is about to be reused. */
	boot_enter_kernel(&bi, kernel_stack + KERNEL_STACK_SIZE, kernel_main);
	return EFI_LOAD_ERROR;	/* not reached */
}
