/* SPDX-License-Identifier: MIT */
/* memaccept (test image): a stand-in for OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL under platform=snp-emu. */
#include "arch/x86/emu/emu.h"
#include "arch/x86/sev/svsm.h"
#include "boot/boot.h"
#include "drivers/console.h"
#include "lib/string.h"

/*
 * Plain QEMU's OVMF has no SNP, so the test image installs the protocol itself and
 * behaves like OVMF: with the opt-in, memory stays unaccepted; without it (or when it
 * fails, chosen with emu_fault=optin_absent / optin_fail), the firmware accepts
 * everything in a before-ExitBootServices event, which changes the memory map after the
 * guest read it, so the first ExitBootServices call fails. OVMF 2022.11 (Debian 12)
 * does not signal that event group yet (measured: the map did not change), so the
 * stand-in changes the map right before the first ExitBootServices call instead
 * (boot_test_before_ebs): the same stale map key, the same retry.
 */
static EFI_SYSTEM_TABLE *sys;
static bool fail, opted_in, active;

/* OVMF's own AllowUnacceptedMemory never fails; optin_fail plays a firmware whose does. */
static EFI_STATUS EFIAPI allow(struct ovmf_sev_memory_acceptance_protocol *self)
{
	(void)self;
	if (fail)
		return EFI_UNSUPPORTED;
	opted_in = true;
	return EFI_SUCCESS;
}

static struct ovmf_sev_memory_acceptance_protocol standin = { allow };

/* OVMF's before-EBS acceptance, reduced to what the guest can see: a changed map. */
void boot_test_before_ebs(u32 attempt)
{
	EFI_PHYSICAL_ADDRESS page = 0;
	struct emu_fault *grow, *slow;

	if (!active)
		return;
	/* emu_fault=ebs_retries:N: a firmware whose events allocate at every call, N times. */
	if (emu_fault_take(&emu.faults, FAULT_EBS_RETRIES, 0, 0) ||
	    (!opted_in && attempt == 1))
		sys->BootServices->AllocatePages(AllocateAnyPages, EfiBootServicesData, 1, &page);
	/* emu_fault=ebs_accept_ms=N: the accept-everything work of that first call takes time. */
	if (!opted_in && attempt == 1 && (slow = emu_fault_take(&emu.faults, FAULT_EBS_ACCEPT_MS, 0, 0)))
		sys->BootServices->Stall(slow->value * 1000);
	/*
	 * emu_fault=ebs_map_growth:N: N allocations at once, of alternating types so that no
	 * two merge into one descriptor.
	 */
	grow = attempt == 1 ? emu_fault_take(&emu.faults, FAULT_EBS_MAP_GROWTH, 0, 0) : NULL;
	for (u64 i = 0; grow && i < grow->value; i++)
		sys->BootServices->AllocatePages(AllocateAnyPages, i % 2 ? EfiLoaderData :
						 EfiBootServicesData, 1, &page);
}

/*
 * The CC blob configuration table OVMF installs whenever SNP is active (edk2
 * OvmfPkg/AmdSevDxe/AmdSevDxe.c; layout OvmfPkg/Include/Guid/ConfidentialComputingSevSnpBlob.h
 * and arch/x86/sev/svsm.h): the 'AMDE' magic, version 1, the secrets page and the CPUID
 * page. As OVMF allocates them: the blob in EfiACPIReclaimMemory
 * (AllocateConfidentialComputingBlob), the secrets and CPUID pages EfiReservedMemoryType
 * (OvmfPkg/PlatformPei/AmdSev.c: memory-allocation HOBs that must survive kexec).
 * The CPUID page holds the table the PSP checked at launch (count, then 48-byte entries:
 * Linux arch/x86/include/asm/sev.h struct snp_cpuid_fn), here a few leaves as the
 * emulated host reports them; memaccept itself asks its CPUID questions before
 * ExitBootServices and through the GHCB afterwards.
 *
 * emu_svsm=1: the secrets page names an SVSM (svsm_base/size, its calling area, its
 * protocol version, the guest's VMPL), in two more reserved pages: the calling area and
 * one standing for the SVSM's own memory (the emulated SVSM runs in the emulator, not
 * there). emu_svsm=absent: the same blob with svsm_size 0. boot/snp_svsm.c then reads it
 * exactly as it reads real firmware's.
 */
enum { CC_PAGE_SECRETS, CC_PAGE_CPUID, CC_PAGE_CAA, CC_PAGE_SVSM, CC_PAGES };
#define EMU_SVSM_CORE_VERSION 1	/* COCONUT core.rs CORE_PROTOCOL_VERSION_MAX */
#define CC_BLOB_VERSION 1
#define CPUID_TABLE_HDR 16
#define CPUID_FN_SIZE 48

static void cpuid_table(u8 *page)
{
	static const u32 leaves[][2] = {
		{ 0, 0 }, { 1, 0 }, { 7, 0 }, { 0xd, 0 }, { 0xd, 1 },
		{ 0x80000000, 0 }, { 0x80000001, 0 }, { 0x80000008, 0 }, { 0x8000001f, 0 },
	};
	u32 n = (u32)ARRAY_SIZE(leaves);

	memcpy(page, &n, sizeof(n));
	for (u32 i = 0; i < n; i++) {
		u8 *e = page + CPUID_TABLE_HDR + i * CPUID_FN_SIZE;
		struct cpuid_regs r;
		u64 xcr0_in = leaves[i][0] == 0xd ? 1 : 0;

		emu_cpuid_values(leaves[i][0], leaves[i][1], &r);
		memcpy(e, &leaves[i][0], 4);
		memcpy(e + 4, &leaves[i][1], 4);
		memcpy(e + 8, &xcr0_in, 8);
		memcpy(e + 24, &r, sizeof(r));
	}
}

static void install_cc_blob(EFI_SYSTEM_TABLE *st)
{
	EFI_GUID guid = EFI_CC_BLOB_GUID;
	EFI_PHYSICAL_ADDRESS base = 0, blob_pa = 0;
	u8 *blob, *secrets;
	u32 magic = CC_BLOB_MAGIC, len = SECRETS_PAGE_SIZE, max_version = EMU_SVSM_CORE_VERSION;
	u32 cpuid_len = PAGE_SIZE;
	u16 version = CC_BLOB_VERSION;
	u64 secrets_pa, cpuid_pa, caa, svsm_base, svsm_size = PAGE_SIZE;
	/* emu_fault=cc_pages_usable: a firmware that forgot to reserve them. */
	EFI_MEMORY_TYPE type = emu_fault_take(&emu.faults, FAULT_CC_PAGES_USABLE, 0, 0) ?
			       EfiBootServicesData : EfiReservedMemoryType;

	if (EFI_ERROR(st->BootServices->AllocatePages(AllocateAnyPages, type, CC_PAGES, &base)) ||
	    EFI_ERROR(st->BootServices->AllocatePages(AllocateAnyPages, EfiACPIReclaimMemory, 1,
						      &blob_pa))) {
		kprintf("boot: (test) no memory for the stand-in CC blob\n");
		return;
	}
	memset((void *)(uintptr_t)base, 0, CC_PAGES * PAGE_SIZE);
	memset((void *)(uintptr_t)blob_pa, 0, PAGE_SIZE);
	blob = (u8 *)(uintptr_t)blob_pa;
	secrets_pa = base + CC_PAGE_SECRETS * PAGE_SIZE;
	cpuid_pa = base + CC_PAGE_CPUID * PAGE_SIZE;
	secrets = (u8 *)(uintptr_t)secrets_pa;
	caa = base + CC_PAGE_CAA * PAGE_SIZE;
	svsm_base = base + CC_PAGE_SVSM * PAGE_SIZE;
	memcpy(blob + CC_BLOB_OFF_MAGIC, &magic, sizeof(magic));
	memcpy(blob + CC_BLOB_OFF_VERSION, &version, sizeof(version));
	memcpy(blob + CC_BLOB_OFF_SECRETS_PHYS, &secrets_pa, sizeof(secrets_pa));
	memcpy(blob + CC_BLOB_OFF_SECRETS_LEN, &len, sizeof(len));
	memcpy(blob + CC_BLOB_OFF_CPUID_PHYS, &cpuid_pa, sizeof(cpuid_pa));
	memcpy(blob + CC_BLOB_OFF_CPUID_LEN, &cpuid_len, sizeof(cpuid_len));
	cpuid_table((u8 *)(uintptr_t)cpuid_pa);
	if (emu_fault_find(&emu.faults, FAULT_TSC_FACTOR, 0, 0)) {
		u32 factor = (u32)emu_fault_take(&emu.faults, FAULT_TSC_FACTOR, 0, 0)->value;

		memcpy(secrets + SECRETS_OFF_TSC_FACTOR, &factor, sizeof(factor));
	}
	if (emu.svsm == EMU_SVSM_PRESENT) {
		memcpy(secrets + SECRETS_OFF_SVSM_BASE, &svsm_base, sizeof(svsm_base));
		memcpy(secrets + SECRETS_OFF_SVSM_SIZE, &svsm_size, sizeof(svsm_size));
		memcpy(secrets + SECRETS_OFF_SVSM_CAA, &caa, sizeof(caa));
		memcpy(secrets + SECRETS_OFF_SVSM_MAX_VERSION, &max_version, sizeof(max_version));
		secrets[SECRETS_OFF_SVSM_GUEST_VMPL] = (u8)emu.guest_vmpl;
		emu.svsm_caa = caa;
	}
	if (EFI_ERROR(st->BootServices->InstallConfigurationTable(&guid, blob)))
		kprintf("boot: (test) could not install the stand-in CC blob\n");
}

/*
 * emu_fault=map_size_short=N: a GetMemoryMap() that leaves N descriptors out of the size it
 * says it needs, and writes them anyway when given a buffer of that size. edk2's
 * CoreGetMemoryMap did so for type 15 entries until pull request 11609 (2025): it counted
 * them in the map it wrote but not in the size it returned. A loader whose buffer has no
 * slack gets its memory overwritten; memaccept's 160 KiB buffer hid it.
 */
static EFI_GET_MEMORY_MAP real_get_memory_map;
static u64 short_descs;

static EFI_STATUS EFIAPI short_get_memory_map(UINTN *size, EFI_MEMORY_DESCRIPTOR *map, UINTN *key,
					     UINTN *desc_size, UINT32 *version)
{
	UINTN asked = *size, need = 0, short_bytes;
	EFI_STATUS st = real_get_memory_map(&need, NULL, key, desc_size, version);

	if (st != EFI_BUFFER_TOO_SMALL)
		return st;
	short_bytes = short_descs * *desc_size;
	if (asked + short_bytes < need || !map) {
		*size = need - short_bytes;
		return EFI_BUFFER_TOO_SMALL;
	}
	/* Big enough for what it said: it writes all of it, past the end if need be. */
	*size = need;
	return real_get_memory_map(size, map, key, desc_size, version);
}

/* emu_fault=alloc_type15: boot services that grant type 15 instead of refusing it. */
static EFI_ALLOCATE_PAGES real_allocate_pages;
static EFI_ALLOCATE_POOL real_allocate_pool;

static EFI_STATUS EFIAPI granting_allocate_pages(EFI_ALLOCATE_TYPE how, EFI_MEMORY_TYPE type,
						 UINTN pages, EFI_PHYSICAL_ADDRESS *pa)
{
	return real_allocate_pages(how, type == 15 ? EfiBootServicesData : type, pages, pa);
}

static EFI_STATUS EFIAPI granting_allocate_pool(EFI_MEMORY_TYPE type, UINTN size, void **p)
{
	return real_allocate_pool(type == 15 ? EfiBootServicesData : type, size, p);
}

/*
 * OVMF on SEV-SNP hands over with the GHCB MSR naming its boot vCPU's GHCB, a shared page
 * it allocated reserved (edk2 OvmfPkg/PlatformPei/AmdSev.c AmdSevEsInitialize:
 * AllocateReservedPages, then GhcbRegister), one per vCPU. The stand-in registers one
 * page the same way; the emulated host makes it shared once its page model exists.
 * emu_fault=ghcb_usable: a firmware that handed it over as boot-services data.
 */
static void register_ghcb(EFI_SYSTEM_TABLE *st)
{
	EFI_PHYSICAL_ADDRESS page = 0;
	EFI_MEMORY_TYPE type = emu_fault_take(&emu.faults, FAULT_GHCB_USABLE, 0, 0) ?
			       EfiBootServicesData : EfiReservedMemoryType;

	if (EFI_ERROR(st->BootServices->AllocatePages(AllocateAnyPages, type, 1, &page))) {
		kprintf("boot: (test) no memory for the stand-in firmware's GHCB\n");
		return;
	}
	memset((void *)(uintptr_t)page, 0, PAGE_SIZE);
	emu.fw_ghcb = page;
	emu_self()->ghcb_msr = page;
}

void boot_test_snp_standin(EFI_SYSTEM_TABLE *st, const struct boot_info *bi)
{
	EFI_GUID guid = OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL_GUID;
	EFI_HANDLE handle = NULL;

	if (bi->config.platform != PLAT_SNP_EMU)
		return;
	sys = st;
	install_cc_blob(st);
	register_ghcb(st);
	/* boot_emulator_select parsed emu_fault=; taking a fault counts it as fired. */
	fail = emu_fault_take(&emu.faults, FAULT_OPTIN_FAIL, 0, 0) != NULL;
	struct emu_fault *f = emu_fault_take(&emu.faults, FAULT_MAP_SIZE_SHORT, 0, 0);

	if (emu_fault_take(&emu.faults, FAULT_ALLOC_TYPE15, 0, 0)) {
		real_allocate_pages = st->BootServices->AllocatePages;
		real_allocate_pool = st->BootServices->AllocatePool;
		st->BootServices->AllocatePages = granting_allocate_pages;
		st->BootServices->AllocatePool = granting_allocate_pool;
	}
	if (f) {
		short_descs = f->value;
		real_get_memory_map = st->BootServices->GetMemoryMap;
		st->BootServices->GetMemoryMap = short_get_memory_map;
	}
	active = true;
	if (emu_fault_take(&emu.faults, FAULT_OPTIN_ABSENT, 0, 0))
		return;
	if (EFI_ERROR(st->BootServices->InstallProtocolInterface(&handle, &guid, EFI_NATIVE_INTERFACE,
								 &standin)))
		kprintf("boot: (test) could not install the stand-in SNP opt-in protocol\n");
}
