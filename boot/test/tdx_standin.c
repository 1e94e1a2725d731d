/* SPDX-License-Identifier: MIT */
/* memaccept (test image): what TDVF adds for starting a TD's APs (MADT wakeup structure, mailbox), under platform=tdx-emu. */
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu/tdvf.h"
#include "boot/boot.h"
#include "drivers/console.h"
#include "include/mp_wakeup.h"
#include "arch/x86/acpi_walk.h"
#include "kernel/memory.h"
#include "lib/string.h"

/*
 * TDVF (edk2 OvmfPkg/TdxDxe/TdxAcpiTable.c) before the OS runs:
 * - RelocateMailbox: allocates EfiACPIMemoryNVS pages, the mailbox first and the AP
 *   loop after it, sets the mailbox to noop and moves its APs into that loop;
 * - AlterAcpiTable: copies QEMU's MADT, appends a multiprocessor wakeup structure
 *   (type 0x10, length 24, MailBoxVersion 1, the mailbox address, a reset vector) and
 *   installs the copy in place of the original through the ACPI table protocol.
 * The stand-in does the same with plain OVMF's tables: the new MADT in ACPI memory, and
 * the XSDT entry that named the old one pointed at it (the table protocol's result).
 * The reset vector (ACPI 6.6, for an OS that hands its APs back) is 0: memaccept never
 * hands them back and the emulator has no loop to return to.
 */
/* Real mode reaches only the first MiB: the STARTUP IPI's vector is a page number there. */
#define SIPI_MAX_ADDRESS 0x9ffff
#define BELOW_4G 0xffffffffULL
/* TDVF's mailbox GDT (TdxAcpiTable.c mGdtEntries): null, 32-bit code, 64-bit code, data, null. */
static const u64 tdvf_gdt[] = {
	0, 0x00cf9b000000ffffULL, 0x00af9b000000ffffULL, 0x00cf93000000ffffULL, 0,
};

/*
 * EFI MP Services as TDVF offers them: in a TD TdxDxe installs the uniprocessor MP
 * dependency, so CpuDxe is linked with MpInitLibUp (edk2 OvmfPkg/TdxDxe/TdxDxe.c,
 * UefiCpuPkg/Library/MpInitLibUp/MpInitLibUp.c): one processor, the BSP, and nothing
 * to start. The stand-in puts the same answers in place of OVMF's protocol, so that
 * memaccept meets what a TD shows it: the firmware counts one vCPU, the MADT lists all.
 * The member order is the PI specification's (vol. 2, 13.4, EFI_MP_SERVICES_PROTOCOL).
 */
#define EFI_MP_SERVICES_GUID \
	{ 0x3fdda605, 0xa76e, 0x4f46, { 0xad, 0x29, 0x12, 0xf4, 0x53, 0x1b, 0x3d, 0x08 } }

struct mp_processor_info {
	u64 processor_id;
	u32 status_flag;
	u32 package, core, thread;
};

struct mp_services {
	EFI_STATUS (EFIAPI *get_number_of_processors)(struct mp_services *self, UINTN *total,
						       UINTN *enabled);
	EFI_STATUS (EFIAPI *get_processor_info)(struct mp_services *self, UINTN n,
						 struct mp_processor_info *info);
	EFI_STATUS (EFIAPI *startup_all_aps)(struct mp_services *self, void *proc, BOOLEAN single,
					      EFI_EVENT ev, UINTN timeout, void *arg, UINTN **failed);
	EFI_STATUS (EFIAPI *startup_this_ap)(struct mp_services *self, void *proc, UINTN n,
					      EFI_EVENT ev, UINTN timeout, void *arg, BOOLEAN *finished);
	EFI_STATUS (EFIAPI *switch_bsp)(struct mp_services *self, UINTN n, BOOLEAN enable_old);
	EFI_STATUS (EFIAPI *enable_disable_ap)(struct mp_services *self, UINTN n, BOOLEAN enable,
						UINT32 *health);
	EFI_STATUS (EFIAPI *who_am_i)(struct mp_services *self, UINTN *n);
};

/* PI vol. 2, 13.4: StatusFlag bits 0 BSP, 1 enabled, 2 healthy. */
#define MP_BSP_ENABLED_HEALTHY 7u

static EFI_STATUS EFIAPI up_count(struct mp_services *self, UINTN *total, UINTN *enabled)
{
	(void)self;
	*total = 1;
	*enabled = 1;
	return EFI_SUCCESS;
}

static EFI_STATUS EFIAPI up_info(struct mp_services *self, UINTN n, struct mp_processor_info *info)
{
	(void)self;
	if (!info)
		return EFI_INVALID_PARAMETER;
	if (n != 0)
		return EFI_NOT_FOUND;
	memset(info, 0, sizeof(*info));
	info->status_flag = MP_BSP_ENABLED_HEALTHY;
	return EFI_SUCCESS;
}

static EFI_STATUS EFIAPI up_all(struct mp_services *self, void *proc, BOOLEAN single, EFI_EVENT ev,
				UINTN timeout, void *arg, UINTN **failed)
{
	(void)self, (void)proc, (void)single, (void)ev, (void)timeout, (void)arg, (void)failed;
	return EFI_NOT_STARTED;
}

static EFI_STATUS EFIAPI up_this(struct mp_services *self, void *proc, UINTN n, EFI_EVENT ev,
				 UINTN timeout, void *arg, BOOLEAN *finished)
{
	(void)self, (void)proc, (void)n, (void)ev, (void)timeout, (void)arg, (void)finished;
	return EFI_INVALID_PARAMETER;
}

static EFI_STATUS EFIAPI up_switch(struct mp_services *self, UINTN n, BOOLEAN enable_old)
{
	(void)self, (void)n, (void)enable_old;
	return EFI_UNSUPPORTED;
}

static EFI_STATUS EFIAPI up_enable(struct mp_services *self, UINTN n, BOOLEAN enable, UINT32 *health)
{
	(void)self, (void)n, (void)enable, (void)health;
	return EFI_UNSUPPORTED;
}

static EFI_STATUS EFIAPI up_who(struct mp_services *self, UINTN *n)
{
	(void)self;
	if (!n)
		return EFI_INVALID_PARAMETER;
	*n = 0;
	return EFI_SUCCESS;
}

static struct mp_services tdvf_mp_services = {
	up_count, up_info, up_all, up_this, up_switch, up_enable, up_who,
};

/* Put the one-processor MP Services in place of the firmware's, on the same handle. */
static void install_up_mp_services(EFI_SYSTEM_TABLE *st)
{
	EFI_GUID guid = EFI_MP_SERVICES_GUID;
	EFI_HANDLE handles[4];
	UINTN size = sizeof(handles);
	void *old = NULL;

	if (st->BootServices->LocateHandle(ByProtocol, &guid, NULL, &size, handles) != EFI_SUCCESS ||
	    st->BootServices->HandleProtocol(handles[0], &guid, &old) != EFI_SUCCESS ||
	    st->BootServices->ReinstallProtocolInterface(handles[0], &guid, old,
							 &tdvf_mp_services) != EFI_SUCCESS) {
		kprintf("boot: (test) could not put TDVF's one-processor MP Services in place\n");
		return;
	}
	kprintf("boot: (test) stand-in TD firmware: EFI MP Services count one processor, as TDVF's\n");
}

/* The firmware reads its own tables: no bounds but the tables' own. */
static bool fw_read(void *ctx, u64 addr, void *dst, u64 len)
{
	(void)ctx;
	memcpy(dst, (const void *)(uintptr_t)addr, len);
	return true;
}

/*
 * The APs' one stack (tdvf.h, TDVF_AP_RSP): at TDVF's address, reserved as TDVF reserves
 * it, when the map leaves those pages free (QEMU's OVMF, as the tests run it, does); else
 * one ACPI NVS page elsewhere, shared all the same. Its top is filled with the pattern the
 * emulator checks at the end. Returns the stack pointer, 0 if there is no memory for it.
 */
static u64 ap_stack(EFI_SYSTEM_TABLE *st)
{
	EFI_PHYSICAL_ADDRESS at = TDVF_AP_RSP - PAGE_SIZE;
	u64 page, rsp;

	if (!EFI_ERROR(st->BootServices->AllocatePages(AllocateAddress, EfiACPIMemoryNVS,
							TDVF_AP_STACK_PAGES, &at)))
		rsp = TDVF_AP_RSP;
	else if (boot_test_alloc(st, EfiACPIMemoryNVS, BELOW_4G, 1, &page))
		rsp = page + PAGE_SIZE;
	else
		return 0;
	memset((void *)(uintptr_t)(rsp - TDVF_AP_STACK_CHECK), TDVF_AP_STACK_PATTERN,
	       TDVF_AP_STACK_CHECK);
	return rsp;
}

/* The loop area's GDT and identity tables (4 GiB in 2 MiB pages, as TDVF's SEC tables). */
static void build_loop_area(u64 area)
{
	u8 *gdt = (u8 *)(uintptr_t)(area + TDVF_PAGE_GDT * PAGE_SIZE);
	u16 limit = sizeof(tdvf_gdt) - 1;
	u64 base = (u64)(uintptr_t)(gdt + 16);

	/* GDTR (u16 limit, u64 base) at the start of the page, the GDT at offset 16. */
	memcpy(gdt, &limit, sizeof(limit));
	memcpy(gdt + 2, &base, sizeof(base));
	memcpy(gdt + 16, tdvf_gdt, sizeof(tdvf_gdt));
	emu_tdvf_identity_tables(area + TDVF_PAGE_PML4 * PAGE_SIZE);
}

/*
 * Where the wakeup structure says the mailbox is (emu_fault=mailbox_at, mailbox_shared,
 * mailbox_in_image): the host builds the MADT, so the address is its word; the
 * firmware's APs still poll the real mailbox.
 */
static u64 hostile_mailbox(u64 mailbox)
{
	struct emu_fault *at = emu_fault_take(&emu.faults, FAULT_MAILBOX_AT, 0, 0);

	if (at)
		return at->value;
	if (emu_fault_take(&emu.faults, FAULT_MAILBOX_SHARED, 0, 0))
		return mailbox | emu_tdx_shared_bit();
	/* The kernel's memory map, in the image's data: a write there corrupts it. */
	if (emu_fault_take(&emu.faults, FAULT_MAILBOX_IN_IMAGE, 0, 0))
		return ALIGN_DOWN((u64)(uintptr_t)&kernel_memmap, PAGE_SIZE);
	return mailbox;
}

void boot_test_tdx_standin(EFI_SYSTEM_TABLE *st, const struct boot_info *bi)
{
	struct acpi_reader r = { fw_read, NULL };
	struct acpi_facts f;
	struct cpuid_regs c;
	u64 area, sipi, madt, mailbox, ap_rsp;
	u8 wakeup[MP_WAKEUP_LEN_V1];

	if (bi->config.platform != PLAT_TDX_EMU)
		return;
	install_up_mp_services(st);
	if (emu_fault_take(&emu.faults, FAULT_NO_MP_WAKEUP, 0, 0)) {
		kprintf("boot: (test) the stand-in TD firmware adds no multiprocessor wakeup structure\n");
		return;
	}
	acpi_scan(&r, bi->acpi_rsdp, &f);
	if (f.madt != ACPI_OK || f.xsdt != ACPI_OK) {
		kprintf("boot: (test) no MADT to add the wakeup structure to (%s)\n",
			acpi_status_name(f.madt));
		return;
	}
	/* The APs the emulated firmware holds in its loop: every other enabled CPU. */
	raw_cpuid(1, 0, &c);
	emu_tdvf.bsp_apic_id = c.ebx >> 24;
	for (unsigned i = 0; i < f.cpus_listed; i++)
		if (f.apic_ids[i] != emu_tdvf.bsp_apic_id && emu_tdvf.naps < MAX_CPUS)
			emu_tdvf.ap_ids[emu_tdvf.naps++] = f.apic_ids[i];
	if (!boot_test_alloc(st, EfiACPIMemoryNVS, BELOW_4G, TDVF_PAGES(emu_tdvf.naps), &area) ||
	    !boot_test_alloc(st, EfiACPIMemoryNVS, SIPI_MAX_ADDRESS, 1, &sipi)) {
		kprintf("boot: (test) no memory for the stand-in TD firmware's mailbox\n");
		return;
	}
	ap_rsp = ap_stack(st);
	if (!ap_rsp) {
		kprintf("boot: (test) no memory for the stand-in TD firmware's AP stack\n");
		return;
	}
	build_loop_area(area);
	mailbox = area + TDVF_PAGE_MAILBOX * PAGE_SIZE;
	/* RelocateMailbox: Command noop, ApicId invalid, WakeUpVector 0. */
	*(u32 *)(uintptr_t)(mailbox + MP_MAILBOX_OFF_APIC_ID) = TDVF_MAILBOX_APIC_ID_INVALID;
	/* emu_fault=mp_wakeup_bad_mailbox: the structure names ordinary loader memory. */
	if (emu_fault_take(&emu.faults, FAULT_MP_WAKEUP_BAD_MAILBOX, 0, 0) &&
	    !boot_test_alloc(st, EfiLoaderData, BELOW_4G, 1, &mailbox))
		return;
	mailbox = hostile_mailbox(mailbox);
	memset(wakeup, 0, sizeof(wakeup));
	wakeup[0] = MADT_TYPE_MP_WAKEUP;
	wakeup[1] = MP_WAKEUP_LEN_V1;
	wakeup[MP_WAKEUP_OFF_VERSION] = 1;	/* u16 version 1 (ACPI 6.6), u32 reserved 0 */
	memcpy(wakeup + MP_WAKEUP_OFF_MAILBOX, &mailbox, sizeof(mailbox));
	/* The host's MADT (emu_fault=madt_add, madt_drop), the wakeup structure appended. */
	madt = boot_test_madt_install(st, &f, wakeup, sizeof(wakeup));
	if (!madt) {
		kprintf("boot: (test) no MADT with a wakeup structure installed\n");
		return;
	}
	emu_tdvf.area = area;
	emu_tdvf.mailbox = area + TDVF_PAGE_MAILBOX * PAGE_SIZE;
	emu_tdvf.sipi_page = sipi;
	emu_tdvf.ap_rsp = ap_rsp;
	kprintf("boot: (test) stand-in TD firmware: MADT with a wakeup structure at %#llx, mailbox "
		"%#llx, %u AP(s), their one stack at %#llx%s\n", madt, mailbox, emu_tdvf.naps, ap_rsp,
		ap_rsp == TDVF_AP_RSP ? " (TDVF's)" : " (not TDVF's: that memory is taken)");
}
