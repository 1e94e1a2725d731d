/* SPDX-License-Identifier: MIT */
/* memaccept: firmware conformance rules (pure logic: host-tested with crafted maps). */
#include "kernel/conformance.h"
#include "lib/format.h"
#include "lib/hash.h"
#include "lib/sort.h"
#include "lib/string.h"
#include "mm/memmap.h"
#include "arch/x86/tdx/tdx.h"

/* UEFI 2.9 section 7.2, EFI_MEMORY_DESCRIPTOR.Attribute (EFI_MEMORY_SP since UEFI 2.8). */
#define EFI_MEMORY_WB (1ULL << 3)
#define EFI_MEMORY_SP (1ULL << 18)
#define EFI_MEMORY_RUNTIME (1ULL << 63)

#define LOW_1M (1 * MiB)
#define LOW_4G (4 * GiB)
/* Sorting keys carry the descriptor index in the low bits of a page-aligned start. */
#define INDEX_MASK (PAGE_SIZE - 1)
_Static_assert(CONFORMANCE_MAX_DESC <= PAGE_SIZE,
	       "the descriptor index must fit below the page offset");

/*
 * An ExitBootServices call longer than this did real work inside the call: OVMF on SNP
 * accepts all memory in a before-EBS event when the guest did not opt in (edk2
 * OvmfPkg/AmdSevDxe/AmdSevDxe.c ResolveUnacceptedMemory), which takes seconds for large
 * guests. Plain OVMF under QEMU's TCG needs well under 10 ms here.
 */
#define EBS_SLOW_US (100 * 1000)
/*
 * Linux's EFI stub calls ExitBootServices at most twice: on EFI_INVALID_PARAMETER it
 * reads the map again into the buffer it already has and retries once
 * (drivers/firmware/efi/libstub/efi-stub-helper.c efi_exit_boot_services). That buffer
 * has room for EFI_MMAP_NR_SLACK_SLOTS more descriptors than the map it was sized for
 * (drivers/firmware/efi/libstub/efistub.h): 8 until v6.13, 32 from v6.14 (commit
 * ec4696925da6, "efi/libstub: Bump up EFI_MMAP_NR_SLACK_SLOTS to 32").
 */
#define LINUX_EBS_CALLS 2
#define LINUX_MMAP_SLACK_OLD 8
#define LINUX_MMAP_SLACK 32
/*
 * The TSC at efi_main over its frequency is the time since reset only if the TSC started
 * at zero then (KVM and QEMU's TCG start it at zero; a TDX module or a host with a TSC
 * offset may not). More than this many seconds of firmware is taken as a TSC that did not
 * start at reset.
 */
#define RESET_PLAUSIBLE_S 300
/* The Linux unaccepted memory table's header (include/linux/efi.h struct efi_unaccepted_memory). */
#define LUT_HEADER 24
#define LUT_VERSION 1
/*
 * Linux's EFI stub tracks type 15 in units of this size unless the firmware installed the
 * table with another (drivers/firmware/efi/libstub/unaccepted_memory.c: process_unaccepted_memory
 * takes the unit from whichever table it uses; include/linux/efi.h EFI_UNACCEPTED_UNIT_SIZE).
 */
#define LINUX_UNIT (2 * MiB)
/* Units of the Linux table judged one by one (512 GiB in 2 MiB units); the rest are counted. */
#define LUT_UNITS_MAX (1u << 18)

/* ---------------------------------------------------------------- the registry */

/* Pinned sources, named once. */
#define UEFI_MAP "UEFI 2.9 section 7.2 (GetMemoryMap, EFI_MEMORY_DESCRIPTOR)"
#define UEFI_TYPE15 "UEFI 2.9 section 7.2, Table 7-6 (EfiUnacceptedMemoryType)"
#define LINUX_STUB_UNACC \
	"Linux drivers/firmware/efi/libstub/unaccepted_memory.c process_unaccepted_memory " \
	"(v6.5 and later)"
#define EDK2_AMDSEVDXE \
	"edk2 OvmfPkg/AmdSevDxe/AmdSevDxe.c AmdSevDxeEntryPoint, AllowUnacceptedMemory, " \
	"ResolveUnacceptedMemory (edk2 since 2023, pull requests 3889 and 3954)"
#define ACPI_64 "ACPI 6.4 "
#define LINUX_SETUP_E820 \
	"Linux drivers/firmware/efi/libstub/x86-stub.c setup_e820 " \
	"(each type 15 descriptor passed on its own to process_unaccepted_memory)"
#define LINUX_SNP_STUB_ACCEPT \
	"Linux d54d610243a4 (v6.15-rc3: the EFI stub on SEV-SNP could not accept memory " \
	"before it) and 8ed12ab1319b (v6.15-rc5: the same under an SVSM)"
#define LINUX_LUT_RESERVE \
	"Linux drivers/firmware/efi/efi.c reserve_unaccepted: 0862438c9048 (February 2026, " \
	"\"efi: Fix reservation of unaccepted memory table\") reserves a table that starts " \
	"inside a page to its true end; kernels before it may reserve one page short"

enum rule_index {
	R_MAP_DESC_SIZE, R_MAP_DESC_ALIGN, R_MAP_DESC_VERSION, R_MAP_ALIGNMENT, R_MAP_SORTED,
	R_MAP_OVERLAP, R_MAP_SIZE, R_MAP_SIZE_HANDSHAKE, R_MAP_ALLOC15,
	R_UNACC_PLATFORM, R_UNACC_RUNTIME, R_UNACC_WB, R_UNACC_SP, R_UNACC_ADDR_WIDTH,
	R_UNACC_ALIGNMENT, R_UNACC_STABLE, R_UNACC_BELOW_1M, R_UNACC_BELOW_4G,
	R_ACCEPTED_PROBE, R_UNACCEPTED_PROBE,
	R_SNP_OPTIN_PRESENT, R_SNP_OPTIN_HONOURED, R_SNP_CC_PAGES, R_SNP_SVSM_PAGES,
	R_SNP_GHCB_RESERVED,
	R_TDX_AP_MEMORY, R_EBS_ATTEMPTS, R_EBS_DURATION, R_BOOT_RESET,
	R_ACPI_RSDP, R_ACPI_XSDT, R_ACPI_MADT, R_ACPI_MP_WAKEUP,
	R_EFI_ACPI_TABLE, R_EFI_SMBIOS, R_EFI_LINUX_UNACC, R_EFI_LINUX_UNACC_TABLE, R_EFI_CC_BLOB,
	R_EFI_CC_FINAL_EVENTS, R_EFI_LINUX_UNACC_PLACEMENT,
	R_LINUX_NONE, R_LINUX_6_5, R_LINUX_6_14, R_LINUX_6_15, R_LINUX_2026,
	R_COUNT,
};
_Static_assert(R_COUNT <= CONFORMANCE_MAX_CHECKS, "every rule fits in one report");

#define MUST(id, src, act) { id, LEVEL_MUST, false, src, act }
#define SHOULD(id, src, act) { id, LEVEL_SHOULD, false, src, act }
#define OWN_MUST(id, src, act) { id, LEVEL_MUST, true, src, act }
#define OWN_SHOULD(id, src, act) { id, LEVEL_SHOULD, true, src, act }
#define INFO(id, src) { id, LEVEL_INFO, false, src, NULL }
#define OWN_INFO(id, src) { id, LEVEL_INFO, true, src, NULL }

static const struct conformance_rule rules[R_COUNT] = {
	[R_MAP_DESC_SIZE] = MUST("map.desc_size",
		UEFI_MAP " DescriptorSize: the size of one element, at least the 40 bytes of a "
		"version 1 descriptor",
		"return DescriptorSize >= 40 and a map size that is a whole number of descriptors"),
	[R_MAP_DESC_ALIGN] = OWN_SHOULD("map.desc_align",
		"memaccept mm/memmap.c (anomaly desc_size_not_multiple_of_8); UEFI 2.9 does not "
		"require it",
		"use a DescriptorSize that is a multiple of 8 (edk2 uses 48), so that every "
		"descriptor's 64-bit fields are aligned"),
	[R_MAP_DESC_VERSION] = MUST("map.desc_version",
		UEFI_MAP " EFI_MEMORY_DESCRIPTOR_VERSION 1",
		"return DescriptorVersion 1"),
	[R_MAP_ALIGNMENT] = MUST("map.alignment",
		UEFI_MAP " PhysicalStart on a 4 KiB boundary, NumberOfPages of 4 KiB",
		"give every descriptor a 4 KiB aligned start, at least one page, and an end "
		"below 2^64"),
	[R_MAP_SORTED] = OWN_INFO("map.sorted",
		"UEFI 2.9 section 7.2 (GetMemoryMap promises no order); edk2 "
		"MdeModulePkg/Core/Dxe/Mem/Page.c CoreGetMemoryMap (returns its list as it is "
		"kept); Linux sorts (arch/x86/kernel/e820.c e820__update_table), as memaccept does "
		"(mm/memmap.c)"),
	[R_MAP_OVERLAP] = MUST("map.overlap",
		UEFI_MAP " (each address has one type)",
		"describe every address at most once"),
	[R_MAP_SIZE] = OWN_INFO("map.size",
		"memaccept kernel/conformance.c (judges the first 4096 descriptors)"),
	[R_MAP_SIZE_HANDSHAKE] = MUST("map.size_handshake",
		UEFI_MAP " (MemoryMapSize on output: the size needed when the buffer is too small); "
		"edk2 MdeModulePkg/Core/Dxe/Mem/Page.c CoreGetMemoryMap left type 15 entries out of "
		"that size until f80a406aa9 (pull request 11609, 2025, \"Account for Unaccepted Entries\")",
		"return from GetMemoryMap a needed size that holds every descriptor you then write, "
		"type 15 ones included"),
	[R_MAP_ALLOC15] = SHOULD("map.alloc_type15",
		"UEFI 2.9 section 7.2 (type 15 is memory the firmware reports, not a type to "
		"allocate); a grant breaks no loader that does not ask (Linux's stub allocates from "
		"conventional memory only), but accepted memory kept as type 15 shows in the map as "
		"type 15 a guest would accept again, and AllocateAddress into type 15 hands out "
		"memory no one accepted",
		"refuse AllocatePages and AllocatePool of type 15, and AllocateAddress into a type 15 "
		"range (or accept what you hand out)"),
	[R_UNACC_PLATFORM] = MUST("unaccepted.platform",
		UEFI_TYPE15 ": memory the guest must accept through its platform before use",
		"report type 15 only on a TDX or SEV-SNP guest"),
	[R_UNACC_RUNTIME] = OWN_MUST("unaccepted.runtime",
		UEFI_TYPE15 "; UEFI 2.9 section 7.2 EFI_MEMORY_RUNTIME (runtime services would use "
		"memory no one has accepted)",
		"never set EFI_MEMORY_RUNTIME on type 15; accept what runtime services need"),
	[R_UNACC_WB] = OWN_INFO("unaccepted.wb",
		UEFI_MAP " Attribute; " LINUX_SETUP_E820 " (type 15 becomes E820 RAM whatever its "
		"attributes); TDVF builds type 15 from TD HOB resource descriptors, which carry no "
		"cacheability (edk2 MdePkg/Include/Pi/PiHob.h EFI_RESOURCE_MEMORY_UNACCEPTED)"),
	[R_UNACC_SP] = MUST("unaccepted.sp",
		"Linux drivers/firmware/efi/libstub/x86-stub.c setup_e820 (EFI_MEMORY_SP is "
		"honoured on conventional memory only; type 15 becomes E820_TYPE_RAM); edk2 "
		"OvmfPkg/PlatformPei AmdSevSnpInitialize validates special-purpose RAM in place "
		"(pull request 12774, 2026)",
		"accept special-purpose (EFI_MEMORY_SP) memory and report it as conventional with "
		"the attribute, never as type 15"),
	[R_UNACC_ADDR_WIDTH] = MUST("unaccepted.addr_width",
		"Intel SDM vol. 2A and AMD APM vol. 3 CPUID 0x80000008 EAX[7:0] (MAXPHYADDR); TDX "
		"module 1.5 ABI, TDG.VP.INFO GPAW (bit GPAW-1 selects shared memory); intel/tdx-module "
		"tdg_mem_page_accept.c (check_gpa_validity: private GPAs only)",
		"report type 15 only below MAXPHYADDR and, on TDX, below the shared bit"),
	[R_UNACC_ALIGNMENT] = SHOULD("unaccepted.alignment",
		LINUX_SETUP_E820 "; " LINUX_STUB_UNACC " (a descriptor shorter than 2 units is "
		"accepted whole at boot, the partial units at either end of a longer one too; the "
		"unit is the installed table's, else 2 MiB); " LINUX_SNP_STUB_ACCEPT,
		"start and end every type 15 descriptor on a unit boundary (2 MiB) and make it at "
		"least 2 units long: Linux accepts every other piece at boot, and on SEV-SNP kernels "
		"before v6.15 cannot"),
	[R_UNACC_STABLE] = SHOULD("unaccepted.stable",
		"Linux drivers/firmware/efi/libstub/unaccepted_memory.c allocate_unaccepted_bitmap "
		"sizes the bitmap from the map read before ExitBootServices, process_unaccepted_memory "
		"fills it from the final map and accepts at boot what falls outside it; "
		EDK2_AMDSEVDXE,
		"after the loader read the map (and opted in), change no type 15 range: what "
		"disappears was accepted inside ExitBootServices, what appears Linux accepts at boot"),
	[R_UNACC_BELOW_1M] = OWN_SHOULD("unaccepted.below_1m",
		"memaccept boot/efi_main.c (AP start-up pages below 1 MiB come from the firmware's "
		"allocator, which hands out accepted memory only); Linux accepts low memory when it "
		"allocates it",
		"accept all memory below 1 MiB, as both OVMF flavours do"),
	[R_UNACC_BELOW_4G] = INFO("unaccepted.below_4g",
		"edk2 OvmfPkg/Library/PlatformInitLib/IntelTdx.c "
		"BuildResourceDescriptorHobForUnacceptedMemory and OvmfPkg/PlatformPei/AmdSev.c "
		"AmdSevSnpInitialize (OVMF's policy: memory below 4 GiB accepted)"),
	[R_ACCEPTED_PROBE] = MUST("accepted.probe",
		UEFI_TYPE15 " (only type 15 needs accepting); TDX module 1.5 ABI "
		"TDG.MEM.PAGE.ACCEPT (TDX_PAGE_ALREADY_ACCEPTED); AMD APM vol. 3 PVALIDATE (rFLAGS.CF: "
		"no change)",
		"accept everything the map calls RAM except type 15 before handing over: a page "
		"reported as accepted must be accepted (TDX) or validated (SNP)"),
	[R_UNACCEPTED_PROBE] = MUST("unaccepted.probe",
		UEFI_TYPE15 " (memory the guest must accept); TDX module 1.5 ABI "
		"TDG.MEM.PAGE.ACCEPT (a pending page is accepted; TDX_PAGE_ALREADY_ACCEPTED "
		"otherwise); AMD APM vol. 3 PVALIDATE (rFLAGS.CF: no change); Linux "
		"arch/x86/include/asm/unaccepted_memory.h arch_accept_memory (TDX: panics when "
		"tdx_accept_memory fails); arch/x86/coco/sev/core.c snp_accept_memory, pvalidate_pages "
		"(SNP: __pval_terminate on PVALIDATE_FAIL_NOUPDATE, or the SVSM's FAIL_UNCHANGED)",
		"report as type 15 only memory that is still unaccepted: pending on TDX, not "
		"validated on SEV-SNP"),
	[R_SNP_OPTIN_PRESENT] = SHOULD("snp.optin_present",
		"edk2 OvmfPkg/Include/Protocol/SevMemoryAcceptance.h "
		"(OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL, GUID c5a010fe-38a7-4531-8a4a-0500d2fd1649); "
		EDK2_AMDSEVDXE "; Linux c0461bd16666 (the stub calls it; handing over type 15 "
		"unconditionally is the intended end state)",
		"install OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL under SEV-SNP, with an "
		"AllowUnacceptedMemory that succeeds, or hand over type 15 without being asked"),
	[R_SNP_OPTIN_HONOURED] = SHOULD("snp.optin_honoured",
		EDK2_AMDSEVDXE "; OvmfPkg/PlatformPei/AmdSev.c AmdSevSnpInitialize (RAM from 4 GiB "
		"up, special-purpose RAM excepted, is left unaccepted)",
		"after AllowUnacceptedMemory succeeds, leave the memory you did not need "
		"unaccepted (type 15) instead of accepting it all: no guest breaks, but it boots "
		"as slowly as without the opt-in"),
	[R_SNP_CC_PAGES] = MUST("snp.cc_pages",
		"edk2 OvmfPkg reserves the SNP secrets and CPUID pages as EfiReservedMemoryType "
		"(pull request 2269); Linux arch/x86/boot/compressed/sev.c find_cc_blob (the OS "
		"keeps using both pages)",
		"put the CC blob's secrets and CPUID pages in reserved (or ACPI NVS) memory, never "
		"in memory the OS may allocate"),
	[R_SNP_SVSM_PAGES] = MUST("snp.svsm_pages",
		"SVSM specification (AMD pub. 58019), the secrets page's SVSM_BASE, SVSM_SIZE and "
		"SVSM_CAA; Linux arch/x86/boot/startup/sev-shared.c svsm_setup_ca (the guest calls "
		"the SVSM through the calling area the secrets page names until it sets up its own)",
		"put the SVSM's memory and its boot calling area in reserved memory, never in "
		"memory the OS may allocate"),
	[R_SNP_GHCB_RESERVED] = MUST("snp.ghcb_reserved",
		"GHCB specification (AMD pub. 56421), GHCB GPA registration (the GHCB MSR names the "
		"page); edk2 OvmfPkg/PlatformPei/AmdSev.c AmdSevEsInitialize (GHCB pages allocated "
		"reserved: they must survive the hand-over) and 3e3f5bb21c (pull request 3774: the "
		"SEC GHCB page handed over as conventional memory crashed the OS)",
		"report every GHCB page (shared memory) as reserved, never as memory the OS may "
		"allocate"),
	[R_TDX_AP_MEMORY] = SHOULD("tdx.ap_memory",
		"edk2 OvmfPkg/PlatformInitLib (commit 383f729a, pull request 6112, in "
		"edk2-stable202411: TDVF reserves the SEC page tables its waiting APs run on, "
		"PcdOvmfSecPageTablesBase 0x800000, 0x6000 bytes); Asterinas issue 1628; judged "
		"only for TDVF (FirmwareVendor \"EDK II\"): another firmware's AP memory is not known",
		"report all the memory your waiting APs use (their page tables and loop) as reserved "
		"or ACPI NVS, as TDVF does since edk2-stable202411"),
	[R_EBS_ATTEMPTS] = MUST("ebs.attempts",
		"Linux drivers/firmware/efi/libstub/efi-stub-helper.c efi_exit_boot_services (one "
		"retry, the map re-read into a buffer with EFI_MMAP_NR_SLACK_SLOTS spare "
		"descriptors until v6.13, 32 from v6.14, commit ec4696925da6; the linux.* rules judge "
		"each); UEFI 2.9 section 7.4 (ExitBootServices)",
		"let ExitBootServices succeed on the first call, or on the second with at most 8 "
		"more descriptors: do no allocation in its events"),
	[R_EBS_DURATION] = OWN_SHOULD("ebs.duration",
		"memaccept boot/efi_main.c (TSC from the first GetMemoryMap of the ExitBootServices "
		"loop to its success: a first call that failed included, where OVMF on SNP accepts "
		"everything, " EDK2_AMDSEVDXE ")",
		"do no long work, such as accepting memory, inside ExitBootServices"),
	[R_BOOT_RESET] = OWN_INFO("boot.reset_to_efi_main",
		"memaccept boot/efi_main.c (TSC at efi_main / TSC frequency)"),
	[R_ACPI_RSDP] = MUST("acpi.rsdp",
		ACPI_64 "section 5.2.5.3 (RSDP); UEFI 2.9 section 4.6 (ACPI 2.0 table GUID)",
		"install an RSDP of revision 2 or later with both checksums valid"),
	[R_ACPI_XSDT] = MUST("acpi.xsdt", ACPI_64 "section 5.2.8 (XSDT)",
		"give the XSDT a valid signature, length and checksum"),
	[R_ACPI_MADT] = MUST("acpi.madt", ACPI_64 "section 5.2.12 (MADT, signature APIC)",
		"list a valid MADT in the XSDT, every entry with a length that fits"),
	[R_ACPI_MP_WAKEUP] = MUST("acpi.mp_wakeup",
		ACPI_64 "section 5.2.12.19 (multiprocessor wakeup, MADT type 0x10); Linux "
		"arch/x86/kernel/acpi/madt_wakeup.c",
		"on TDX, add a multiprocessor wakeup structure whose mailbox is one 4 KiB page of "
		"ACPI NVS memory"),
	[R_EFI_ACPI_TABLE] = MUST("efi.acpi_table",
		"UEFI 2.9 section 4.6 (EFI_ACPI_20_TABLE_GUID); Linux include/linux/efi.h",
		"install the ACPI 2.0 table in the EFI configuration table"),
	[R_EFI_SMBIOS] = SHOULD("efi.smbios",
		"UEFI 2.9 section 4.6 (SMBIOS and SMBIOS3 table GUIDs); Linux include/linux/efi.h",
		"install an SMBIOS3 (or SMBIOS) table: OS tools read it"),
	[R_EFI_LINUX_UNACC] = INFO("efi.linux_unaccepted",
		"Linux include/linux/efi.h LINUX_EFI_UNACCEPTED_MEM_TABLE_GUID "
		"(d5d1de3c-105c-44f9-9ea9-bcef98120031); the Linux EFI stub installs it, or uses one "
		"that is there (allocate_unaccepted_bitmap)"),
	[R_EFI_LINUX_UNACC_TABLE] = MUST("efi.linux_unaccepted_table",
		"Linux include/linux/efi.h struct efi_unaccepted_memory; "
		"drivers/firmware/efi/libstub/unaccepted_memory.c allocate_unaccepted_bitmap "
		"(version 1 only, else the stub fails) and process_unaccepted_memory (sets the bits "
		"of the final map's type 15 in whichever table it uses); drivers/firmware/efi/efi.c "
		"reserve_unaccepted (reserves the table wherever it is)",
		"when you install the Linux unaccepted memory table: version 1, a power-of-two "
		"unit, in memory the loader cannot allocate (ACPI reclaim, as Linux uses), and no bit "
		"for memory that is not type 15"),
	[R_EFI_CC_BLOB] = MUST("efi.cc_blob",
		"Linux arch/x86/boot/compressed/sev.c find_cc_blob_efi (SEV-SNP needs the CC blob: "
		"secrets and CPUID pages); Linux include/linux/efi.h EFI_CC_BLOB_GUID",
		"on SEV-SNP, install the CC blob configuration table"),
	[R_EFI_CC_FINAL_EVENTS] = SHOULD("efi.cc_final_events",
		"Linux drivers/firmware/efi/libstub/tpm.c (CC event log for attestation)",
		"on TDX, install the CC final events table"),
	[R_EFI_LINUX_UNACC_PLACEMENT] = SHOULD("efi.linux_unaccepted_placement",
		LINUX_LUT_RESERVE "; include/linux/efi.h EFI_UNACCEPTED_UNIT_SIZE (2 MiB)",
		"start the Linux unaccepted memory table on a page boundary and use 2 MiB units"),
	[R_LINUX_NONE] = INFO("linux.no_unaccepted",
		"Linux before v6.5, or built without CONFIG_UNACCEPTED_MEMORY: the stub skips type "
		"15 (x86-stub.c setup_e820), older kernels map unknown types to reserved"),
	[R_LINUX_6_5] = MUST("linux.v6_5",
		"Linux v6.5 to v6.13 (745e3ed85f71 unaccepted memory in the stub): " LINUX_STUB_UNACC
		"; 8 spare map slots; " LINUX_SNP_STUB_ACCEPT "; " LINUX_LUT_RESERVE,
		"hand over a map this kernel boots with: see what it would do in the detail"),
	[R_LINUX_6_14] = MUST("linux.v6_14",
		"Linux v6.14 (ec4696925da6: 32 spare map slots); " LINUX_SNP_STUB_ACCEPT "; "
		LINUX_LUT_RESERVE,
		"hand over a map this kernel boots with: see what it would do in the detail"),
	[R_LINUX_6_15] = MUST("linux.v6_15",
		"Linux v6.15 and later without 0862438c9048: " LINUX_SNP_STUB_ACCEPT "; "
		LINUX_LUT_RESERVE,
		"hand over a map this kernel boots with: see what it would do in the detail"),
	[R_LINUX_2026] = MUST("linux.2026",
		"Linux with 0862438c9048 (February 2026): " LINUX_STUB_UNACC,
		"hand over a map this kernel boots with: see what it would do in the detail"),
};

const struct conformance_rule *conformance_rules(unsigned *count)
{
	*count = R_COUNT;
	return rules;
}

/* ---------------------------------------------------------------- the raw map */

/* [s, e): a range a verdict names. */
struct span {
	u64 s, e;
};

/* What one pass over the raw map found. */
struct map_facts {
	bool readable;
	u32 ndesc, examined;
	u32 unaligned, zero_pages, wraps;
	s64 first_bad;			/* index of the first descriptor with a bad extent */
	u64 bad_start, bad_pages;	/* ... its start and its page count */
	s64 first_unsorted;
	u64 unsorted_start, unsorted_prev;	/* its start, and its predecessor's */
	u64 unsorted_end, unsorted_prev_end;
	s64 overlap_a, overlap_b;	/* the first two descriptors found overlapping */
	struct span overlap_sa, overlap_sb;	/* ... their ranges */
	u32 overlaps;
	u32 unacc_desc;
	u64 unacc_bytes, unacc_below_1m, unacc_below_4g;
	u32 unacc_runtime, unacc_no_wb, unacc_sp;
	/* The first type 15 descriptor of each kind, so that a verdict names where it is. */
	struct span unacc_first, runtime_first, no_wb_first, sp_first, below_1m_first, top;
	struct span unaligned_first;	/* the first type 15 range off 2 MiB boundaries */
	u64 unacc_end;			/* the highest end of any type 15 descriptor */
	u64 unacc_hash;			/* lib/hash.h hash_range summed over them */
	u32 unacc_ranges, unacc_unaligned_ranges;
	u64 unacc_partial_bytes;	/* in 2 MiB units only partly unaccepted */
	bool ram_above_4g;		/* general-purpose RAM (not EFI_MEMORY_SP) at or above 4 GiB */
};

struct ctx {
	const struct conformance_input *in;
	struct conformance_check *out;
	unsigned n, cap;
};

static void get_desc(const struct conformance_input *in, u32 i, struct efi_mem_desc *d)
{
	memcpy(d, (const u8 *)in->map + (u64)i * in->desc_size, sizeof(*d));
}

static bool is_ram(u32 type)
{
	return type == EFI_LOADER_CODE || type == EFI_LOADER_DATA ||
	       type == EFI_BOOT_SERVICES_CODE || type == EFI_BOOT_SERVICES_DATA ||
	       type == EFI_CONVENTIONAL_MEMORY || type == EFI_UNACCEPTED_MEMORY;
}

/* Memory the OS may allocate once boot services are gone (type 15 once accepted). */
static bool is_usable(u32 type)
{
	return is_ram(type);
}

/* Bytes of [s, e) below limit. */
static u64 below(u64 s, u64 e, u64 limit)
{
	return s >= limit ? 0 : MIN(e, limit) - s;
}

static bool map_readable(const struct conformance_input *in)
{
	return in->map && in->desc_size >= EFI_MEM_DESC_SIZE;
}

/*
 * The type of the one descriptor that holds all of [addr, addr + len): an address
 * described twice, or a span across descriptors, answers EFI_MEMORY_TYPE_COUNT, as does
 * an address no descriptor holds.
 */
static u32 type_of_span(const struct conformance_input *in, u64 addr, u64 len)
{
	u32 n, type = EFI_MEMORY_TYPE_COUNT, found = 0;

	if (!map_readable(in) || !len || addr + len < addr)
		return EFI_MEMORY_TYPE_COUNT;
	n = (u32)MIN(in->map_size / in->desc_size, (u64)CONFORMANCE_MAX_DESC);
	for (u32 i = 0; i < n; i++) {
		struct efi_mem_desc d;
		u64 e;

		get_desc(in, i, &d);
		if (d.num_pages > (~0ULL - d.phys_start) >> EFI_PAGE_SHIFT)
			continue;
		e = d.phys_start + (d.num_pages << EFI_PAGE_SHIFT);
		if (addr < e && d.phys_start < addr + len) {
			found++;
			type = addr >= d.phys_start && addr + len <= e ? d.type : EFI_MEMORY_TYPE_COUNT;
		}
	}
	return found == 1 ? type : EFI_MEMORY_TYPE_COUNT;
}

/*
 * Bytes of [addr, addr + len) that descriptors of a type `want` accepts hold; descriptors
 * may be adjacent (a span across two type 15 descriptors counts whole). want NULL: any type.
 */
static u64 span_cover(const struct conformance_input *in, u64 addr, u64 len, bool (*want)(u32))
{
	u64 n, got = 0, end = addr + len;

	if (!map_readable(in) || !len || end < addr)
		return 0;
	n = MIN(in->map_size / in->desc_size, (u64)CONFORMANCE_MAX_DESC);
	for (u64 i = 0; i < n; i++) {
		struct efi_mem_desc d;
		u64 e;

		get_desc(in, (u32)i, &d);
		if (d.num_pages > (~0ULL - d.phys_start) >> EFI_PAGE_SHIFT)
			continue;
		e = d.phys_start + (d.num_pages << EFI_PAGE_SHIFT);
		if ((!want || want(d.type)) && addr < e && d.phys_start < end)
			got += MIN(e, end) - MAX(addr, d.phys_start);
	}
	return MIN(got, len);
}

static bool is_type15(u32 type)
{
	return type == EFI_UNACCEPTED_MEMORY;
}

/* Memory a loader may still allocate before ExitBootServices. */
static bool is_free(u32 type)
{
	return type == EFI_CONVENTIONAL_MEMORY || type == EFI_UNACCEPTED_MEMORY;
}

/* The Linux table as Linux's stub would take it: present, readable and version 1. */
static bool lut_usable(const struct linux_unaccepted_facts *t)
{
	return t->present && t->readable && t->version == LUT_VERSION &&
	       t->unit_size >= PAGE_SIZE && !(t->unit_size & (t->unit_size - 1));
}

/*
 * What Linux's EFI stub does with the final map's type 15 (x86-stub.c setup_e820 ->
 * process_unaccepted_memory, one call per descriptor): a descriptor shorter than two units
 * is accepted whole at boot; of a longer one the partial units at either end are, and so
 * is whatever the bitmap does not cover. The bitmap is the firmware's table when one is
 * installed (its unit, its base, its size), else one the stub allocates over the span of
 * type 15 in 2 MiB units: the span of the map it read before ExitBootServices
 * (allocate_unaccepted_bitmap, from allocate_e820 in exit_boot), while the bits come from
 * the final map. memaccept records that map's span (the first map of its ExitBootServices
 * loop, read after the SNP opt-in as Linux reads its own); where it is not known (a
 * capture), the final map's span stands for it.
 */
struct linux_view {
	u64 unit;
	bool fw_table;
	bool sized_before_ebs;		/* the bitmap's span is the pre-ExitBootServices map's */
	bool no_table;			/* that map had no type 15: the stub made no table */
	bool span_moved;		/* ... and its type 15 span is not the final map's */
	u32 desc, short_desc, partial_desc, uncovered_desc;
	u64 boot_bytes;			/* accepted at boot by the stub */
	u64 first_boot;			/* the lowest address of such a piece */
	u64 bitmap_bytes;		/* the stub's own bitmap (0 with a firmware table) */
	u64 lazy_bytes;			/* left for the kernel to accept later */
};

static void boot_piece(struct linux_view *v, u64 s, u64 e)
{
	if (s >= e)
		return;
	if (!v->boot_bytes || s < v->first_boot)
		v->first_boot = s;
	v->boot_bytes += e - s;
}

static void linux_view(const struct conformance_input *in, struct linux_view *v)
{
	const struct linux_unaccepted_facts *t = &in->lut;
	u64 n, lo = ~0ULL, hi = 0, base, cover;

	memset(v, 0, sizeof(*v));
	v->fw_table = lut_usable(t);
	v->unit = v->fw_table ? t->unit_size : LINUX_UNIT;
	if (!map_readable(in))
		return;
	n = MIN(in->map_size / in->desc_size, (u64)CONFORMANCE_MAX_DESC);
	for (u64 i = 0; i < n; i++) {
		struct efi_mem_desc d;

		get_desc(in, (u32)i, &d);
		if (d.type != EFI_UNACCEPTED_MEMORY || !d.num_pages ||
		    d.num_pages > (~0ULL - d.phys_start) >> EFI_PAGE_SHIFT)
			continue;
		lo = MIN(lo, d.phys_start);
		hi = MAX(hi, d.phys_start + (d.num_pages << EFI_PAGE_SHIFT));
	}
	if (lo >= hi)
		return;
	if (!v->fw_table && in->ebs_first_desc) {
		/* Sized before ExitBootServices: allocate_unaccepted_bitmap's map. */
		v->sized_before_ebs = true;
		if (!in->ebs_first_unacc_desc || in->ebs_first_unacc_lo >= in->ebs_first_unacc_hi) {
			v->no_table = true;
			return;
		}
		v->span_moved = lo != in->ebs_first_unacc_lo || hi != in->ebs_first_unacc_hi;
		lo = in->ebs_first_unacc_lo;
		hi = in->ebs_first_unacc_hi;
	}
	if (v->fw_table) {
		base = t->phys_base;
		cover = t->size * 8 > ~0ULL / v->unit ? ~0ULL : t->size * 8 * v->unit;
	} else {
		base = ALIGN_DOWN(lo, LINUX_UNIT);
		cover = ALIGN_UP(hi, LINUX_UNIT) - base;
		v->bitmap_bytes = (cover / LINUX_UNIT + 7) / 8;
	}
	u64 cover_end = base + cover < base ? ~0ULL : base + cover;

	for (u64 i = 0; i < n; i++) {
		struct efi_mem_desc d;
		u64 s, e, as, ae;

		get_desc(in, (u32)i, &d);
		if (d.type != EFI_UNACCEPTED_MEMORY || !d.num_pages ||
		    d.num_pages > (~0ULL - d.phys_start) >> EFI_PAGE_SHIFT)
			continue;
		s = d.phys_start;
		e = s + (d.num_pages << EFI_PAGE_SHIFT);
		v->desc++;
		if (e - s < 2 * v->unit) {
			v->short_desc++;
			boot_piece(v, s, e);
			continue;
		}
		as = ALIGN_UP(s, v->unit);
		ae = ALIGN_DOWN(e, v->unit);
		if (as != s || ae != e)
			v->partial_desc++;
		boot_piece(v, s, as);
		boot_piece(v, ae, e);
		/* Whole units the bitmap cannot hold are accepted at boot too. */
		if (as < base || ae > cover_end)
			v->uncovered_desc++;
		boot_piece(v, as, MIN(ae, base));
		boot_piece(v, MAX(as, cover_end), ae);
		if (MAX(as, base) < MIN(ae, cover_end))
			v->lazy_bytes += MIN(ae, cover_end) - MAX(as, base);
	}
}

/*
 * Kernels before Linux 0862438c9048 reserve the table from the page it starts in for its
 * size rounded up to pages, not to its true end: a table that starts inside a page and
 * crosses one more boundary than its size needs loses its last page (reserve_unaccepted).
 * Returns the bytes left unreserved.
 */
static u64 lut_short_reserve(const struct linux_unaccepted_facts *t)
{
	u64 len, old_end, end;

	if (!t->present || !t->readable)
		return 0;
	len = LUT_HEADER + t->size;
	old_end = ALIGN_DOWN(t->addr, PAGE_SIZE) + ALIGN_UP(len, PAGE_SIZE);
	end = t->addr + len;
	return end > old_end ? end - old_end : 0;
}

static void scan_map(const struct conformance_input *in, u64 *scratch, struct map_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->first_bad = f->first_unsorted = f->overlap_a = f->overlap_b = -1;
	f->readable = map_readable(in);
	if (!f->readable)
		return;
	f->ndesc = (u32)MIN(in->map_size / in->desc_size, (u64)UINT32_MAX);
	f->examined = MIN(f->ndesc, (u32)CONFORMANCE_MAX_DESC);

	u64 prev_start = 0, prev_end = 0;
	u32 nkeys = 0;

	for (u32 i = 0; i < f->examined; i++) {
		struct efi_mem_desc d;
		u64 s, e;

		get_desc(in, i, &d);
		s = d.phys_start;
		if (i && s < prev_start && f->first_unsorted < 0) {
			f->first_unsorted = i;
			f->unsorted_start = s;
			f->unsorted_end = s + (d.num_pages << EFI_PAGE_SHIFT);
			f->unsorted_prev = prev_start;
			f->unsorted_prev_end = prev_end;
		}
		prev_start = s;
		prev_end = s + (d.num_pages << EFI_PAGE_SHIFT);
		if (!IS_ALIGNED(s, PAGE_SIZE))
			f->unaligned++;
		if (!d.num_pages)
			f->zero_pages++;
		if (d.num_pages > (~0ULL - s) >> EFI_PAGE_SHIFT)
			f->wraps++;
		if (!IS_ALIGNED(s, PAGE_SIZE) || !d.num_pages ||
		    d.num_pages > (~0ULL - s) >> EFI_PAGE_SHIFT) {
			if (f->first_bad < 0) {
				f->first_bad = i;
				f->bad_start = s;
				f->bad_pages = d.num_pages;
			}
			continue;	/* no extent to judge the rest by */
		}
		e = s + (d.num_pages << EFI_PAGE_SHIFT);
		if (is_ram(d.type) && e > LOW_4G && !(d.attribute & EFI_MEMORY_SP))
			f->ram_above_4g = true;
		if (d.type == EFI_UNACCEPTED_MEMORY) {
			struct span sp = { s, e };

			if (!f->unacc_desc)
				f->unacc_first = sp;
			if (e > f->top.e)
				f->top = sp;
			if (s < LOW_1M && !f->unacc_below_1m)
				f->below_1m_first = (struct span){ s, MIN(e, (u64)LOW_1M) };
			if ((d.attribute & EFI_MEMORY_RUNTIME) && !f->unacc_runtime)
				f->runtime_first = sp;
			if (!(d.attribute & EFI_MEMORY_WB) && !f->unacc_no_wb)
				f->no_wb_first = sp;
			if ((d.attribute & EFI_MEMORY_SP) && !f->unacc_sp)
				f->sp_first = sp;
			f->unacc_desc++;
			f->unacc_bytes += e - s;
			f->unacc_below_1m += below(s, e, LOW_1M);
			f->unacc_below_4g += below(s, e, LOW_4G);
			f->unacc_end = MAX(f->unacc_end, e);
			f->unacc_hash += hash_range(s, d.num_pages, d.attribute);
			if (d.attribute & EFI_MEMORY_RUNTIME)
				f->unacc_runtime++;
			if (!(d.attribute & EFI_MEMORY_WB))
				f->unacc_no_wb++;
			if (d.attribute & EFI_MEMORY_SP)
				f->unacc_sp++;
		}
		scratch[nkeys++] = s | i;
	}

	/* Overlaps and unaccepted ranges, in address order. */
	sort_u64(scratch, nkeys);
	u64 max_end = 0, max_start = 0, ustart = 0, uend = 0;
	s64 max_idx = -1;
	bool in_range = false;

	for (u32 k = 0; k <= nkeys; k++) {
		struct efi_mem_desc d = { 0 };
		u32 i = 0;
		u64 s = ~0ULL, e = ~0ULL;

		if (k < nkeys) {
			i = (u32)(scratch[k] & INDEX_MASK);
			get_desc(in, i, &d);
			s = d.phys_start;
			e = s + (d.num_pages << EFI_PAGE_SHIFT);
			if (max_idx >= 0 && s < max_end) {
				if (!f->overlaps++) {
					f->overlap_a = max_idx;
					f->overlap_b = i;
					f->overlap_sa = (struct span){ max_start, max_end };
					f->overlap_sb = (struct span){ s, e };
				}
			}
			if (e > max_end) {
				max_end = e;
				max_start = s;
				max_idx = i;
			}
		}
		/* Adjacent type 15 descriptors form one range. */
		if (in_range && (k == nkeys || d.type != EFI_UNACCEPTED_MEMORY || s > uend)) {
			f->unacc_ranges++;
			if (!IS_ALIGNED(ustart, UNIT_SIZE) || !IS_ALIGNED(uend, UNIT_SIZE)) {
				u64 lo = MIN(ALIGN_UP(ustart, UNIT_SIZE), uend);
				u64 hi = MAX(ALIGN_DOWN(uend, UNIT_SIZE), lo);

				if (!f->unacc_unaligned_ranges)
					f->unaligned_first = (struct span){ ustart, uend };
				f->unacc_unaligned_ranges++;
				f->unacc_partial_bytes += (lo - ustart) + (uend - hi);
			}
			in_range = false;
		}
		if (k < nkeys && d.type == EFI_UNACCEPTED_MEMORY) {
			if (!in_range) {
				ustart = s;
				in_range = true;
			}
			uend = MAX(uend, e);
		}
	}
}

/* ---------------------------------------------------------------- verdicts */

static __printf(4, 0) void add_v(struct ctx *c, enum rule_index r, u32 verdict, const char *fmt,
				  va_list ap)
{
	struct conformance_check *k;

	if (c->n == c->cap)
		return;
	k = &c->out[c->n++];
	k->r = &rules[r];
	k->rule = rules[r].id;
	k->level = rules[r].level;
	k->source = rules[r].source;
	k->verdict = verdict;
	format_buf_v(k->detail, sizeof(k->detail), fmt, ap);
}

/*
 * The verdict follows from the rule's level, so that a report can never call a SHOULD
 * a failure: met is pass; not met is fail for a MUST rule, warn for a SHOULD rule.
 */
static __printf(4, 5) void judge(struct ctx *c, enum rule_index r, bool met, const char *fmt, ...)
{
	va_list ap;
	u32 v = met ? VERDICT_PASS : rules[r].level == LEVEL_MUST ? VERDICT_FAIL : VERDICT_WARN;

	va_start(ap, fmt);
	add_v(c, r, rules[r].level == LEVEL_INFO ? VERDICT_INFO : v, fmt, ap);
	va_end(ap);
}

static __printf(3, 4) void na(struct ctx *c, enum rule_index r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_v(c, r, VERDICT_NA, fmt, ap);
	va_end(ap);
}

/* An INFO rule: a fact, never a pass. */
static __printf(3, 4) void info(struct ctx *c, enum rule_index r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_v(c, r, VERDICT_INFO, fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------- the rules */

/* Allocations of type 15 (boot/efi_main.c boot_alloc15_checks, before the final map). */
static void rule_alloc15(struct ctx *c)
{
	u32 h = c->in->map_handshake;

	if (!(h & FW_ALLOC15_CHECKED)) {
		na(c, R_MAP_ALLOC15, "not checked");
		return;
	}
	judge(c, R_MAP_ALLOC15, !(h & (FW_ALLOC15_PAGES | FW_ALLOC15_POOL | FW_ALLOC15_ADDR)),
	      "AllocatePages of type 15 %s, AllocatePool of type 15 %s, AllocateAddress into type "
	      "15 %s", h & FW_ALLOC15_PAGES ? "granted" : "refused",
	      h & FW_ALLOC15_POOL ? "granted" : "refused", !(h & FW_ALLOC15_ADDR_TRIED) ?
	      "not tried (no type 15)" : h & FW_ALLOC15_ADDR ? "granted: unaccepted memory handed "
	      "to the loader" : "refused");
}

/* The GetMemoryMap() size handshake, made by boot/efi_main.c before the final map. */
static void rule_map_handshake(struct ctx *c)
{
	const struct conformance_input *in = c->in;

	switch (in->map_handshake & 0xff) {
	case MAP_HANDSHAKE_OK:
		judge(c, R_MAP_SIZE_HANDSHAKE, true, "the map fit the size GetMemoryMap asked for");
		break;
	case MAP_HANDSHAKE_OVERFLOW:
		judge(c, R_MAP_SIZE_HANDSHAKE, false, "given the size it asked for, GetMemoryMap wrote "
		      "%u bytes more: a loader that allocates exactly that (or with less slack) has "
		      "its memory overwritten", in->map_handshake >> 16);
		break;
	case MAP_HANDSHAKE_TOO_SMALL:
		judge(c, R_MAP_SIZE_HANDSHAKE, false, "GetMemoryMap refused the size it had asked "
		      "for, with nothing allocated in between");
		break;
	default:
		na(c, R_MAP_SIZE_HANDSHAKE, "not checked");
		break;
	}
}

static void rules_map(struct ctx *c, const struct map_facts *f)
{
	const struct conformance_input *in = c->in;

	if (!f->readable)
		judge(c, R_MAP_DESC_SIZE, false,
		      "desc_size %llu: shorter than the 40 bytes of EFI_MEMORY_DESCRIPTOR; the map "
		      "cannot be read", in->desc_size);
	else if (in->map_size % in->desc_size)
		judge(c, R_MAP_DESC_SIZE, false, "map size %llu is not a multiple of desc_size %llu",
		      in->map_size, in->desc_size);
	else
		judge(c, R_MAP_DESC_SIZE, true,
		      "%u descriptors of %llu bytes (a loader must step by desc_size, not 40)",
		      f->ndesc, in->desc_size);
	if (!f->readable)
		na(c, R_MAP_DESC_ALIGN, "map unreadable");
	else
		judge(c, R_MAP_DESC_ALIGN, in->desc_size % 8 == 0, "desc_size %llu%s", in->desc_size,
		      in->desc_size % 8 ? ": the 64-bit fields of every other descriptor are "
		      "misaligned" : "");
	judge(c, R_MAP_DESC_VERSION, in->desc_version == EFI_MEM_DESC_VERSION,
	      "version %u (EFI_MEMORY_DESCRIPTOR_VERSION is 1)", in->desc_version);
	if (!f->readable) {
		na(c, R_MAP_ALIGNMENT, "map unreadable");
		na(c, R_MAP_SORTED, "map unreadable");
		na(c, R_MAP_OVERLAP, "map unreadable");
		na(c, R_MAP_SIZE, "map unreadable");
		rule_map_handshake(c);
	rule_alloc15(c);
		return;
	}
	if (f->first_bad >= 0)
		judge(c, R_MAP_ALIGNMENT, false,
		      "%u unaligned start(s), %u with 0 pages, %u wrapping; first: descriptor %lld "
		      "(start %#llx, %llu pages)", f->unaligned, f->zero_pages, f->wraps,
		      (long long)f->first_bad, f->bad_start, f->bad_pages);
	else
		judge(c, R_MAP_ALIGNMENT, true, "every descriptor starts on 4 KiB and has pages");
	if (f->first_unsorted >= 0)
		info(c, R_MAP_SORTED,
		     "descriptor %lld [%#llx, %#llx) starts below its predecessor [%#llx, %#llx): "
		     "allowed, and Linux and memaccept sort; a loader that assumes order misreads "
		     "the map", (long long)f->first_unsorted, f->unsorted_start, f->unsorted_end,
		     f->unsorted_prev, f->unsorted_prev_end);
	else
		info(c, R_MAP_SORTED, "ascending physical addresses");
	if (f->overlaps)
		judge(c, R_MAP_OVERLAP, false,
		      "%u overlap(s), first: descriptors %lld and %lld, [%#llx, %#llx) and [%#llx, "
		      "%#llx); the guest cannot tell which type is true (memaccept uses neither)",
		      f->overlaps, (long long)f->overlap_a, (long long)f->overlap_b,
		      f->overlap_sa.s, f->overlap_sa.e, f->overlap_sb.s, f->overlap_sb.e);
	else
		judge(c, R_MAP_OVERLAP, true, "no two descriptors share an address");
	info(c, R_MAP_SIZE, "%u descriptors, %u judged", f->ndesc, f->examined);
	rule_map_handshake(c);
	rule_alloc15(c);
}

/* ", first [s, e)" when n things were found, "" otherwise: where a failing rule points. */
static const char *first_span(char *buf, size_t len, u64 n, struct span sp)
{
	if (!n)
		return "";
	format_buf(buf, len, ", first [%#llx, %#llx)", sp.s, sp.e);
	return buf;
}

static void rules_unaccepted(struct ctx *c, const struct map_facts *f)
{
	const struct conformance_input *in = c->in;
	char first[48];
	bool cc = in->platform == DETECTED_TDX || in->platform == DETECTED_SNP;
	static const enum rule_index all[] = {
		R_UNACC_PLATFORM, R_UNACC_RUNTIME, R_UNACC_WB, R_UNACC_SP, R_UNACC_ADDR_WIDTH,
		R_UNACC_ALIGNMENT, R_UNACC_STABLE, R_UNACC_BELOW_1M, R_UNACC_BELOW_4G,
	};

	if (!f->readable || !f->unacc_desc) {
		const char *why = !f->readable ? "map unreadable" :
				  "the firmware reported no unaccepted memory (type 15)";

		for (unsigned i = 0; i < ARRAY_SIZE(all); i++)
			na(c, all[i], "%s", why);
		return;
	}
	if (cc)
		judge(c, R_UNACC_PLATFORM, true, "%llu MiB in %u range(s) on a %s guest",
		      f->unacc_bytes >> 20, f->unacc_ranges,
		      in->platform == DETECTED_TDX ? "TDX" : "SEV-SNP");
	else
		judge(c, R_UNACC_PLATFORM, false,
		      "%llu MiB unaccepted on a guest with neither TDX nor SEV-SNP, first [%#llx, "
		      "%#llx): nothing can accept it", f->unacc_bytes >> 20, f->unacc_first.s,
		      f->unacc_first.e);

	judge(c, R_UNACC_RUNTIME, !f->unacc_runtime,
	      "%u of %u type 15 descriptor(s) carry EFI_MEMORY_RUNTIME%s", f->unacc_runtime,
	      f->unacc_desc, first_span(first, sizeof(first), f->unacc_runtime, f->runtime_first));
	info(c, R_UNACC_WB, "%u of %u type 15 descriptor(s) lack EFI_MEMORY_WB%s%s", f->unacc_no_wb,
	     f->unacc_desc, first_span(first, sizeof(first), f->unacc_no_wb, f->no_wb_first),
	     f->unacc_no_wb ? " (Linux and memaccept use type 15 as write-back RAM whatever its "
	     "attributes)" : "");
	judge(c, R_UNACC_SP, !f->unacc_sp,
	      "%u of %u type 15 descriptor(s) carry EFI_MEMORY_SP%s%s", f->unacc_sp, f->unacc_desc,
	      first_span(first, sizeof(first), f->unacc_sp, f->sp_first),
	      f->unacc_sp ? ": an OS that accepts it uses special-purpose memory as general RAM" :
	      "");

	/* The highest type 15 address against the address width and the TDX shared bit. */
	u64 limit = in->phys_bits >= 12 && in->phys_bits < 64 ? 1ULL << in->phys_bits : 0;

	if (!limit && !in->tdx_shared_bit)
		na(c, R_UNACC_ADDR_WIDTH, "address width not known");
	else if (in->tdx_shared_bit && f->unacc_end > in->tdx_shared_bit)
		judge(c, R_UNACC_ADDR_WIDTH, false,
		      "type 15 [%#llx, %#llx) reaches above the TDX shared bit (%#llx): the guest "
		      "cannot accept shared memory", f->top.s, f->top.e, in->tdx_shared_bit);
	else if (limit && f->unacc_end > limit)
		judge(c, R_UNACC_ADDR_WIDTH, false,
		      "type 15 [%#llx, %#llx) reaches beyond the %u-bit physical address width",
		      f->top.s, f->top.e, in->phys_bits);
	else
		judge(c, R_UNACC_ADDR_WIDTH, true, "type 15 ends at %#llx, below %#llx",
		      f->unacc_end, in->tdx_shared_bit ? in->tdx_shared_bit : limit);

	struct linux_view v;

	linux_view(in, &v);
	if (v.short_desc || v.partial_desc || v.uncovered_desc)
		judge(c, R_UNACC_ALIGNMENT, false,
		      "%u of %u descriptor(s) leave %llu KiB from %#llx that Linux accepts at boot: %u "
		      "shorter than 2 units of %llu KiB, %u with partial units, %u outside the table",
		      v.short_desc + v.partial_desc + v.uncovered_desc, v.desc, v.boot_bytes >> 10,
		      v.first_boot, v.short_desc, v.unit >> 10, v.partial_desc, v.uncovered_desc);
	else
		judge(c, R_UNACC_ALIGNMENT, true, "%u descriptor(s), all whole units of %llu KiB, "
		      "none shorter than 2 units", v.desc, v.unit >> 10);

	if (!in->ebs_first_desc)
		na(c, R_UNACC_STABLE, "the first map of the ExitBootServices loop was not recorded");
	else if (in->ebs_attempts <= 1)
		judge(c, R_UNACC_STABLE, true,
		      "ExitBootServices took the map the loader read: nothing changed after it");
	else
		judge(c, R_UNACC_STABLE, in->ebs_first_unacc_desc == f->unacc_desc &&
		      in->ebs_first_unacc_bytes == f->unacc_bytes &&
		      in->ebs_first_unacc_hash == f->unacc_hash,
		      "before ExitBootServices %u descriptor(s), %llu MiB of type 15; after it %u, "
		      "%llu MiB%s%s", in->ebs_first_unacc_desc, in->ebs_first_unacc_bytes >> 20,
		      f->unacc_desc, f->unacc_bytes >> 20,
		      in->ebs_first_unacc_hash == f->unacc_hash ? "" : " (the ranges differ)",
		      f->unacc_bytes < in->ebs_first_unacc_bytes ? ": accepted inside the call" :
		      f->unacc_bytes > in->ebs_first_unacc_bytes ? ": Linux accepts the new part at "
		      "boot if it lies outside its bitmap" : "");

	judge(c, R_UNACC_BELOW_1M, !f->unacc_below_1m,
	      "%llu KiB below 1 MiB unaccepted%s%s", f->unacc_below_1m >> 10,
	      first_span(first, sizeof(first), f->unacc_below_1m != 0, f->below_1m_first),
	      f->unacc_below_1m ? ": memaccept cannot reserve its AP start-up pages there" : "");

	if (!cc)
		na(c, R_UNACC_BELOW_4G, "no TDX or SEV-SNP: no firmware policy applies");
	else
		info(c, R_UNACC_BELOW_4G, "%llu MiB below 4 GiB unaccepted (OVMF leaves none)",
		     f->unacc_below_4g >> 20);
}

static void rule_probe(struct ctx *c)
{
	const struct conformance_input *in = c->in;
	char early[96] = "";

	if (in->probe_early_descs)
		format_buf(early, sizeof(early), "; %u of them before the early allocator used "
			   "them, %u page(s) kept out of use", in->probe_early_descs, in->probe_kept_out);
	if (in->probe_none)
		na(c, R_ACCEPTED_PROBE, "%s", in->probe_none);
	else if (!in->probed || in->probe_unknown == in->probed)
		na(c, R_ACCEPTED_PROBE, "%u page(s) probed, no answer told (%u unknown)", in->probed,
		   in->probe_unknown);
	else if (!in->probe_not_accepted)
		judge(c, R_ACCEPTED_PROBE, true, "%u page(s) of accepted memory probed (%s of %u "
		      "descriptors): all accepted, %u unknown%s", in->probed, in->probe_full ?
		      "every free page; the first and last page" :
		      "the first and last page", in->probe_descs, in->probe_unknown, early);
	else
		judge(c, R_ACCEPTED_PROBE, false,
		      "%u page(s) of accepted memory probed (%s of %u descriptors): %u were not "
		      "accepted (first %#llx; the probe accepted them), %u unknown%s", in->probed,
		      in->probe_full ? "every free page; the first and last page" :
		      "the first and last page", in->probe_descs,
		      in->probe_not_accepted, in->probe_first_bad, in->probe_unknown, early);
}

/*
 * The reverse of accepted.probe: memory the map calls unaccepted must be. The lowest unit
 * still unaccepted of each unaccepted range, accepted page by page with the answers
 * counted (TDX: each accept succeeds; SNP: each PVALIDATE changes the RMP).
 */
static void rule_unaccepted_probe(struct ctx *c)
{
	const struct conformance_input *in = c->in;
	char fake[64] = "";

	if (in->unacc_ranges_fake)
		format_buf(fake, sizeof(fake), " (%u from fake_unaccepted_start)",
			   in->unacc_ranges_fake);
	if (in->unacc_probe_none)
		na(c, R_UNACCEPTED_PROBE, "%s", in->unacc_probe_none);
	else if (!in->unacc_ranges)
		na(c, R_UNACCEPTED_PROBE, "no unaccepted memory to probe");
	else if (!in->unacc_ranges_probed)
		na(c, R_UNACCEPTED_PROBE, "%u unaccepted range(s), none with a whole 2 MiB unit still "
		   "unaccepted (accepted before the report ran, or only partial units)", in->unacc_ranges);
	else if (in->unacc_pages_unknown == in->unacc_pages)
		na(c, R_UNACCEPTED_PROBE, "%u page(s) probed, no answer told (%u unknown)", in->unacc_pages,
		   in->unacc_pages_unknown);
	else if (!in->unacc_pages_accepted)
		judge(c, R_UNACCEPTED_PROBE, true, "%u page(s) probed, %s %u of %u "
		      "unaccepted range(s)%s: all still unaccepted, %u unknown", in->unacc_pages,
		      in->unacc_full ? "every whole unit of" : "the lowest unit of",
		      in->unacc_ranges_probed, in->unacc_ranges, fake, in->unacc_pages_unknown);
	else
		judge(c, R_UNACCEPTED_PROBE, false, "%u page(s) probed, %s %u of %u "
		      "unaccepted range(s)%s: %u were already accepted (first %#llx), %u unknown",
		      in->unacc_pages, in->unacc_full ? "every whole unit of" : "the lowest unit of",
		      in->unacc_ranges_probed, in->unacc_ranges, fake,
		      in->unacc_pages_accepted, in->unacc_first_accepted, in->unacc_pages_unknown);
}

static void rule_svsm_pages(struct ctx *c);
static void rule_cc_pages(struct ctx *c);
static void rule_ghcb_reserved(struct ctx *c);

static void rules_snp(struct ctx *c, const struct map_facts *f)
{
	const struct conformance_input *in = c->in;

	if (in->platform != DETECTED_SNP) {
		na(c, R_SNP_OPTIN_PRESENT, "not an SEV-SNP guest");
		na(c, R_SNP_OPTIN_HONOURED, "not an SEV-SNP guest");
		na(c, R_SNP_CC_PAGES, "not an SEV-SNP guest");
		na(c, R_SNP_SVSM_PAGES, "not an SEV-SNP guest");
		na(c, R_SNP_GHCB_RESERVED, "not an SEV-SNP guest");
		return;
	}
	switch (in->snp_protocol) {
	case SNP_PROTOCOL_CALLED:
		judge(c, R_SNP_OPTIN_PRESENT, true, "located and AllowUnacceptedMemory returned success");
		break;
	default:
		/* Without the opt-in, what the firmware did shows in the final map. */
		if (f->unacc_desc)
			judge(c, R_SNP_OPTIN_PRESENT, true,
			      "%s, yet the final map has %llu MiB of type 15: handed over unaccepted "
			      "without being asked (kernels without unaccepted memory support lose it: "
			      "linux.no_unaccepted)", in->snp_protocol == SNP_PROTOCOL_ABSENT ?
			      "no such protocol" : "AllowUnacceptedMemory returned an error",
			      f->unacc_bytes >> 20);
		else
			judge(c, R_SNP_OPTIN_PRESENT, false,
			      "%s, and the final map has no type 15: the firmware accepted all memory "
			      "before handing over, which is slow for large guests",
			      in->snp_protocol == SNP_PROTOCOL_ABSENT ? "no such protocol" :
			      "AllowUnacceptedMemory returned an error (OVMF's never does)");
		break;
	}
	if (in->snp_protocol != SNP_PROTOCOL_CALLED)
		na(c, R_SNP_OPTIN_HONOURED, "the opt-in was not made");
	else if (f->unacc_desc)
		judge(c, R_SNP_OPTIN_HONOURED, true, "the final map still has %llu MiB of type 15",
		      f->unacc_bytes >> 20);
	else if (!f->ram_above_4g)
		na(c, R_SNP_OPTIN_HONOURED,
		   "no general-purpose RAM at or above 4 GiB, which is all OVMF leaves unaccepted");
	else
		judge(c, R_SNP_OPTIN_HONOURED, false,
		      "opted in, yet the final map has no unaccepted memory: the firmware accepted "
		      "it all anyway");

	if (!in->cc_secrets && !in->cc_cpuid)
		na(c, R_SNP_CC_PAGES, "no CC blob, or it names no pages");
	else
		rule_cc_pages(c);
	rule_svsm_pages(c);
	rule_ghcb_reserved(c);
}

/*
 * The GHCB the firmware registered, as the GHCB MSR names it at hand-over: a shared page.
 * Memory the OS may allocate there is handed to a kernel that uses it as private memory:
 * the access is an RMP fault, the page is converted and loses what the firmware or the
 * host put in it, and Linux stops (#VC 0x404, "not validated"; edk2 3e3f5bb21c fixed the
 * same for the SEC GHCB). The firmware's other GHCBs (one per vCPU in OVMF) are not
 * published anywhere the guest can read: only the boot vCPU's is checked.
 */
static void rule_ghcb_reserved(struct ctx *c)
{
	const struct conformance_input *in = c->in;
	u64 g = in->fw_ghcb_msr;

	if (!in->fw_ghcb_known) {
		na(c, R_SNP_GHCB_RESERVED, "the GHCB MSR was not read (not in this capture)");
		return;
	}
	if (!g || g & 0xfff) {
		na(c, R_SNP_GHCB_RESERVED, "the GHCB MSR held %#llx at hand-over: %s", g,
		   g ? "an MSR protocol value, no GHCB address" : "no GHCB registered");
		return;
	}
	u64 usable = span_cover(in, g, PAGE_SIZE, is_usable), known = span_cover(in, g, PAGE_SIZE, NULL);
	u32 t = type_of_span(in, g, PAGE_SIZE);

	judge(c, R_SNP_GHCB_RESERVED, !usable && known == PAGE_SIZE,
	      "the boot vCPU's GHCB at %#llx (GHCB MSR) is in %s memory (type %d); the other "
	      "vCPUs' GHCBs are not published and not checked", g, usable ? "usable" :
	      known == PAGE_SIZE ? "reserved" : "undescribed", t == EFI_MEMORY_TYPE_COUNT ? -1 : (int)t);
}

/* The SVSM's own memory and the calling area the guest starts with. */
static void rule_svsm_pages(struct ctx *c)
{
	const struct conformance_input *in = c->in;

	if (!in->svsm || !in->svsm_size) {
		na(c, R_SNP_SVSM_PAGES, "no SVSM");
		return;
	}
	u64 caa_usable = span_cover(in, in->svsm_caa, PAGE_SIZE, is_usable);
	u64 caa_known = span_cover(in, in->svsm_caa, PAGE_SIZE, NULL);
	u64 svsm_usable = span_cover(in, in->svsm_base, in->svsm_size, is_usable);

	judge(c, R_SNP_SVSM_PAGES, !caa_usable && !svsm_usable,
	      "calling area %#llx %s; SVSM memory [%#llx, %#llx): %llu KiB usable", in->svsm_caa,
	      caa_usable ? "in usable memory" : caa_known ? "reserved" : "not in the map",
	      in->svsm_base, in->svsm_base + in->svsm_size, svsm_usable >> 10);
}

static void rule_cc_pages(struct ctx *c)
{
	const struct conformance_input *in = c->in;

	u32 ts = type_of_span(in, in->cc_secrets, MAX(in->cc_secrets_len, 1u));
	u32 tc = type_of_span(in, in->cc_cpuid, MAX(in->cc_cpuid_len, 1u));
	bool ok_s = ts != EFI_MEMORY_TYPE_COUNT && !is_usable(ts);
	bool ok_c = tc != EFI_MEMORY_TYPE_COUNT && !is_usable(tc);

	judge(c, R_SNP_CC_PAGES, ok_s && ok_c,
	      "secrets page %#llx in memory of type %d%s, CPUID page %#llx in type %d%s",
	      in->cc_secrets, ts == EFI_MEMORY_TYPE_COUNT ? -1 : (int)ts,
	      ok_s ? "" : " (usable or undescribed)", in->cc_cpuid,
	      tc == EFI_MEMORY_TYPE_COUNT ? -1 : (int)tc, ok_c ? "" : " (usable or undescribed)");
}

static bool contains(const char *s, const char *w)
{
	size_t n = strlen(w);

	for (; *s; s++)
		if (!strncmp(s, w, n))
			return true;
	return false;
}

/*
 * A TD's APs wait in the firmware's loop until the OS wakes them through the mailbox
 * (acpi.mp_wakeup checks that page). What else they use the firmware does not say; for
 * TDVF it is known: before edk2-stable202411 its SEC page tables, reported usable.
 */
static void rule_tdx_ap_memory(struct ctx *c)
{
	const struct conformance_input *in = c->in;
	u32 t;

	if (in->platform != DETECTED_TDX) {
		na(c, R_TDX_AP_MEMORY, "not a TDX guest");
		return;
	}
	if (!in->fw_vendor || !contains(in->fw_vendor, "EDK II")) {
		na(c, R_TDX_AP_MEMORY, "firmware %s is not TDVF: where its waiting APs run is not "
		   "known", in->fw_vendor && in->fw_vendor[0] ? in->fw_vendor : "(unnamed)");
		return;
	}
	u64 usable = span_cover(in, TDVF_SEC_PAGE_TABLES, TDVF_SEC_PAGE_TABLES_SIZE, is_usable);

	t = type_of_span(in, TDVF_SEC_PAGE_TABLES, TDVF_SEC_PAGE_TABLES_SIZE);
	judge(c, R_TDX_AP_MEMORY, !usable,
	      "TDVF's AP page tables [%#llx, %#llx): %s%s", TDVF_SEC_PAGE_TABLES,
	      TDVF_SEC_PAGE_TABLES + TDVF_SEC_PAGE_TABLES_SIZE,
	      t != EFI_MEMORY_TYPE_COUNT ? (is_usable(t) ? "all usable memory" : "reserved") :
	      usable ? "partly usable memory" : "not usable", usable ? ": an OS that reuses it "
	      "pulls the tables from under APs still waiting (TDVF before edk2-stable202411; "
	      "memaccept keeps it out of use)" : "");
}

static u64 tsc_to_us(u64 cycles, u64 hz)
{
	/* Split so that cycles * 10^6 cannot overflow. */
	return hz ? cycles / hz * 1000000 + cycles % hz * 1000000 / hz : 0;
}

static void rules_boot(struct ctx *c, const struct map_facts *f)
{
	const struct conformance_input *in = c->in;
	u32 grew = f->ndesc > in->ebs_first_desc ? f->ndesc - in->ebs_first_desc : 0;

	if (in->ebs_attempts <= 1)
		judge(c, R_EBS_ATTEMPTS, true, "succeeded on the first call");
	else if (in->ebs_attempts > LINUX_EBS_CALLS)
		judge(c, R_EBS_ATTEMPTS, false,
		      "%u calls: Linux's EFI stub gives up after %u (memaccept allows 8)",
		      in->ebs_attempts, LINUX_EBS_CALLS);
	else if (in->ebs_first_desc && grew > LINUX_MMAP_SLACK_OLD)
		judge(c, R_EBS_ATTEMPTS, false,
		      "2 calls, and the map grew by %u descriptors (%u to %u) between them: more "
		      "than the %u spare slots of Linux's retry before v6.14 (%u from v6.14)", grew,
		      in->ebs_first_desc, f->ndesc, LINUX_MMAP_SLACK_OLD, LINUX_MMAP_SLACK);
	else
		judge(c, R_EBS_ATTEMPTS, true,
		      "2 calls: the map changed inside ExitBootServices (an event allocated or freed "
		      "memory); within Linux's one retry (%u descriptor(s) more, of %u spare)", grew,
		      LINUX_MMAP_SLACK_OLD);
	u64 ebs_us = MAX(in->ebs_last_call_us, in->ebs_total_us);

	judge(c, R_EBS_DURATION, ebs_us <= EBS_SLOW_US,
	      "%llu us over %u call(s) from the first GetMemoryMap, %llu us in the successful one "
	      "(more than %u ms means work such as accepting memory inside a call)", ebs_us,
	      MAX(in->ebs_attempts, 1u), in->ebs_last_call_us, EBS_SLOW_US / 1000);

	u64 s = in->tsc_hz ? in->tsc_at_entry / in->tsc_hz : 0;

	if (!in->tsc_hz)
		na(c, R_BOOT_RESET, "TSC frequency unknown");
	else if (s > RESET_PLAUSIBLE_S)
		na(c, R_BOOT_RESET, "TSC at efi_main is %llu s: it did not start at reset here, so "
		   "firmware time is unknown", s);
	else
		info(c, R_BOOT_RESET, "%llu ms from reset to efi_main, if the TSC started at reset (it "
		     "does under KVM and QEMU)", tsc_to_us(in->tsc_at_entry, in->tsc_hz) / 1000);
}

static void rules_acpi(struct ctx *c)
{
	const struct acpi_facts *a = &c->in->acpi;
	bool tdx = c->in->platform == DETECTED_TDX;

	if (a->rsdp == ACPI_OK)
		judge(c, R_ACPI_RSDP, true, "revision %u at %#llx, checksums valid", a->rsdp_revision,
		      a->rsdp_addr);
	else
		judge(c, R_ACPI_RSDP, false, "RSDP %s%s", acpi_status_name(a->rsdp),
		      a->rsdp == ACPI_ABSENT ? " (no ACPI table in the EFI configuration table)" : "");
	if (a->rsdp != ACPI_OK)
		na(c, R_ACPI_XSDT, "no usable RSDP");
	else if (a->xsdt == ACPI_OK)
		judge(c, R_ACPI_XSDT, true, "%u tables", a->ntables);
	else
		judge(c, R_ACPI_XSDT, false, "XSDT at %#llx: %s", a->xsdt_addr,
		      acpi_status_name(a->xsdt));
	if (a->xsdt != ACPI_OK)
		judge(c, R_ACPI_MADT, false, "no usable XSDT, so no MADT");
	else if (a->madt == ACPI_OK)
		judge(c, R_ACPI_MADT, true, "%u entries, %u local APIC(s)", a->madt_entries,
		      a->madt_lapics);
	else
		judge(c, R_ACPI_MADT, false, "MADT %s: the guest cannot find its CPUs",
		      acpi_status_name(a->madt));
	if (!tdx)
		na(c, R_ACPI_MP_WAKEUP, "not a TDX guest (INIT/SIPI starts the other vCPUs); %s",
		   !a->mp_wakeup ? "no entry" : c->in->mp_wakeup_problem ? c->in->mp_wakeup_problem :
		   "an entry the guest could use");
	else if (a->madt != ACPI_OK)
		judge(c, R_ACPI_MP_WAKEUP, false, "no usable MADT");
	else if (a->mp_wakeup && !c->in->mp_wakeup_problem)
		judge(c, R_ACPI_MP_WAKEUP, true, "mailbox at %#llx, version %u", a->mp_wakeup_mailbox,
		      a->mp_wakeup_version);
	else if (a->mp_wakeup)
		/* The same checks the kernel makes before it writes to the mailbox. */
		judge(c, R_ACPI_MP_WAKEUP, false, "mailbox at %#llx, version %u: %s, so the guest "
		      "does not use it", a->mp_wakeup_mailbox, a->mp_wakeup_version,
		      c->in->mp_wakeup_problem);
	else
		judge(c, R_ACPI_MP_WAKEUP, false, "no multiprocessor wakeup entry: a TD has no "
		      "INIT/SIPI, so its other vCPUs cannot be started");
}

static bool has(const struct conformance_input *in, u32 table)
{
	return in->efi_tables & (1u << table);
}

static bool bit(const u8 *bitmap, u64 i)
{
	return bitmap[i / 8] & (1u << (i % 8));
}

/*
 * The Linux unaccepted memory table against the final map: bit i says that the unit at
 * phys_base + i * unit_size is unaccepted (include/linux/efi.h struct
 * efi_unaccepted_memory; drivers/firmware/efi/unaccepted_memory.c accept_memory).
 */
static void rule_linux_table(struct ctx *c)
{
	const struct conformance_input *in = c->in;
	const struct linux_unaccepted_facts *t = &in->lut;

	if (!t->present) {
		na(c, R_EFI_LINUX_UNACC_TABLE, "no table");
		return;
	}
	u64 len = LUT_HEADER + (t->readable ? t->size : 0);
	u64 described = span_cover(in, t->addr, len, NULL), free = span_cover(in, t->addr, len, is_free);

	if (!t->readable || described < len || free) {
		judge(c, R_EFI_LINUX_UNACC_TABLE, false,
		      "at %#llx: %s (a loader may allocate over it before ExitBootServices; Linux "
		      "puts its own in ACPI reclaim memory)", t->addr, !t->readable ? "not readable" :
		      free ? "partly or wholly in free memory (type 7 or 15)" :
		      "partly outside the map");
		return;
	}
	if (t->version != LUT_VERSION) {
		judge(c, R_EFI_LINUX_UNACC_TABLE, false,
		      "version %u: Linux accepts only version 1 and otherwise refuses to boot", t->version);
		return;
	}
	if (t->unit_size < PAGE_SIZE || (t->unit_size & (t->unit_size - 1)) ||
	    !IS_ALIGNED(t->phys_base, t->unit_size)) {
		judge(c, R_EFI_LINUX_UNACC_TABLE, false,
		      "unit_size %u, phys_base %#llx: the unit must be a power of two of at least "
		      "4 KiB and the base aligned to it", t->unit_size, t->phys_base);
		return;
	}

	/*
	 * A set bit must lie wholly in type 15 (one descriptor or several adjacent ones):
	 * otherwise Linux accepts accepted memory again. A missing bit breaks nothing: the stub
	 * sets the bits of the final map's type 15 itself and accepts at boot what the bitmap
	 * cannot hold (linux.* and unaccepted.alignment count it).
	 */
	u64 units = t->size * 8, unit = t->unit_size, wrong = 0, first_wrong = 0, missing = 0;

	for (u64 i = 0; i < MIN(units, (u64)LUT_UNITS_MAX); i++) {
		u64 s = t->phys_base + i * unit;

		if (s < t->phys_base || s + unit < s)
			break;	/* wraps past 2^64 */
		bool whole15 = span_cover(in, s, unit, is_type15) == unit;

		if (bit(t->bitmap, i) && !whole15 && !wrong++)
			first_wrong = s;
		if (!bit(t->bitmap, i) && whole15)
			missing++;
	}
	judge(c, R_EFI_LINUX_UNACC_TABLE, !wrong,
	      "version 1, unit %u KiB from %#llx, %llu units: %llu set for memory that is not type "
	      "15 (first %#llx); %llu whole type 15 unit(s) without a bit (the stub sets them)",
	      t->unit_size >> 10, t->phys_base, units, wrong, first_wrong, missing);
}

/* Where the table lies and its unit: what kernels before the February 2026 fix trip on. */
static void rule_linux_table_placement(struct ctx *c)
{
	const struct linux_unaccepted_facts *t = &c->in->lut;
	u64 short_by = lut_short_reserve(t);

	if (!t->present || !t->readable) {
		na(c, R_EFI_LINUX_UNACC_PLACEMENT, "%s", !t->present ? "no table" : "table unreadable");
		return;
	}
	judge(c, R_EFI_LINUX_UNACC_PLACEMENT, IS_ALIGNED(t->addr, PAGE_SIZE) &&
	      t->unit_size == LINUX_UNIT,
	      "at %#llx (%s), %llu bytes, unit %u KiB%s", t->addr,
	      IS_ALIGNED(t->addr, PAGE_SIZE) ? "page aligned" : "inside a page",
	      LUT_HEADER + t->size, t->unit_size >> 10, short_by ? ": kernels before Linux "
	      "0862438c9048 leave its last bytes unreserved (linux.v6_5 to linux.v6_15)" : "");
}

static void rules_tables(struct ctx *c)
{
	const struct conformance_input *in = c->in;
	u32 p = in->platform;

	judge(c, R_EFI_ACPI_TABLE, has(in, EFI_TABLE_ACPI20),
	      "ACPI 2.0 table %s, ACPI 1.0 table %s (%u configuration tables in all)",
	      has(in, EFI_TABLE_ACPI20) ? "present" : "absent",
	      has(in, EFI_TABLE_ACPI10) ? "present" : "absent", in->efi_table_count);
	judge(c, R_EFI_SMBIOS, has(in, EFI_TABLE_SMBIOS3) || has(in, EFI_TABLE_SMBIOS),
	      "SMBIOS3 %s, SMBIOS %s", has(in, EFI_TABLE_SMBIOS3) ? "present" : "absent",
	      has(in, EFI_TABLE_SMBIOS) ? "present" : "absent");
	info(c, R_EFI_LINUX_UNACC, "%s", has(in, EFI_TABLE_LINUX_UNACCEPTED) ?
	     "present before any OS loader ran: Linux will use it as it is" :
	     "absent (the Linux EFI stub installs its own)");
	rule_linux_table(c);
	if (p == DETECTED_SNP)
		judge(c, R_EFI_CC_BLOB, has(in, EFI_TABLE_CC_BLOB), "%s",
		      has(in, EFI_TABLE_CC_BLOB) ? "present" :
		      "absent: the guest cannot find the SNP secrets and CPUID pages");
	else
		na(c, R_EFI_CC_BLOB, "not an SEV-SNP guest (table %s)",
		   has(in, EFI_TABLE_CC_BLOB) ? "present" : "absent");
	if (p == DETECTED_TDX)
		judge(c, R_EFI_CC_FINAL_EVENTS, has(in, EFI_TABLE_CC_FINAL_EVENTS), "%s",
		      has(in, EFI_TABLE_CC_FINAL_EVENTS) ? "present" :
		      "absent: the OS cannot complete the measured-boot event log");
	else
		na(c, R_EFI_CC_FINAL_EVENTS, "not a TDX guest (table %s)",
		   has(in, EFI_TABLE_CC_FINAL_EVENTS) ? "present" : "absent");
	rule_linux_table_placement(c);
}

/* ---------------------------------------------------------------- Linux, per version */

enum linux_profile { LP_NONE, LP_6_5, LP_6_14, LP_6_15, LP_2026, LP_COUNT };

static const struct {
	enum rule_index rule;
	u32 slack;		/* EFI_MMAP_NR_SLACK_SLOTS */
	bool snp_stub_accept;	/* the stub can accept memory on SEV-SNP (d54d610243a4) */
	bool svsm_stub_accept;	/* ... and under an SVSM (8ed12ab1319b) */
	bool lut_reserve_fixed;	/* 0862438c9048 */
} profiles[LP_COUNT] = {
	[LP_NONE] = { R_LINUX_NONE, LINUX_MMAP_SLACK_OLD, false, false, false },
	[LP_6_5] = { R_LINUX_6_5, LINUX_MMAP_SLACK_OLD, false, false, false },
	[LP_6_14] = { R_LINUX_6_14, LINUX_MMAP_SLACK, false, false, false },
	[LP_6_15] = { R_LINUX_6_15, LINUX_MMAP_SLACK, true, true, false },
	[LP_2026] = { R_LINUX_2026, LINUX_MMAP_SLACK, true, true, true },
};

/*
 * Where a kernel of this profile stops with what the firmware handed over, or NULL if it
 * boots. Only what follows from the facts the report has: the map, the ExitBootServices
 * loop, the Linux table and the probes.
 */
static const char *linux_stop(const struct conformance_input *in, const struct map_facts *f,
			      const struct linux_view *v, enum linux_profile p, char *buf,
			      unsigned cap)
{
	bool tdx = in->platform == DETECTED_TDX, snp = in->platform == DETECTED_SNP;
	u32 grew = f->ndesc > in->ebs_first_desc ? f->ndesc - in->ebs_first_desc : 0;

	if (in->ebs_attempts > LINUX_EBS_CALLS)
		return "ExitBootServices fails: the stub calls it at most twice";
	if (in->ebs_attempts == LINUX_EBS_CALLS && in->ebs_first_desc && grew > profiles[p].slack) {
		format_buf(buf, cap, "ExitBootServices fails: the map grew by %u, the retry has %u "
			   "spare slots", grew, profiles[p].slack);
		return buf;
	}
	if (in->probe_not_accepted && !in->probe_none) {
		format_buf(buf, cap, "stops at the first touch of %#llx, memory not accepted (%s)",
			   in->probe_first_bad, snp ? "#VC: terminates" : "the TD cannot go on");
		return buf;
	}
	if (p == LP_NONE)
		return NULL;
	if (f->unacc_desc && in->lut.present && in->lut.readable && in->lut.version != LUT_VERSION)
		return "the stub refuses the firmware's table (not version 1): no boot";
	/* process_unaccepted_memory uses the table without checking that there is one. */
	if (v->no_table)
		return "no type 15 in the map read before ExitBootServices, so no table; the final "
		       "map's type 15 then meets none (process_unaccepted_memory): no boot";
	if (snp && v->boot_bytes && (!profiles[p].snp_stub_accept ||
				     (in->svsm && !profiles[p].svsm_stub_accept))) {
		format_buf(buf, cap, "the stub cannot accept the %llu KiB it must at boot on SEV-SNP%s: "
			   "no boot", v->boot_bytes >> 10, in->svsm ? " under an SVSM" : "");
		return buf;
	}
	/* Only where the map says type 15: a fake_unaccepted_start range is RAM to Linux. */
	if (in->unacc_pages_accepted && !in->unacc_probe_none &&
	    span_cover(in, in->unacc_first_accepted, PAGE_SIZE, is_type15)) {
		format_buf(buf, cap, "%s accepting %#llx, already accepted", tdx ? "panics" :
			   "terminates (PVALIDATE: no change)", in->unacc_first_accepted);
		return buf;
	}
	if (v->fw_table && lut_short_reserve(&in->lut) && !profiles[p].lut_reserve_fixed) {
		format_buf(buf, cap, "may panic in accept_memory: %llu bytes of the table at %#llx "
			   "unreserved", lut_short_reserve(&in->lut), in->lut.addr);
		return buf;
	}
	return NULL;
}

static void rules_linux(struct ctx *c, const struct map_facts *f)
{
	const struct conformance_input *in = c->in;
	struct linux_view v;
	char why[96];

	linux_view(in, &v);
	for (u32 p = 0; p < LP_COUNT; p++) {
		enum rule_index r = profiles[p].rule;
		const char *stop;

		if (!f->readable) {
			na(c, r, "map unreadable");
			continue;
		}
		stop = linux_stop(in, f, &v, p, why, sizeof(why));
		if (p == LP_NONE)
			info(c, r, "%llu MiB of type 15 not used as RAM; %s", f->unacc_bytes >> 20,
			     stop ? stop : "boots");
		else if (!f->unacc_desc)
			judge(c, r, !stop, "no type 15: nothing to accept, no bitmap; %s",
			      stop ? stop : "boots");
		else
			judge(c, r, !stop, "accepts %llu MiB at boot, %llu MiB later; bitmap %llu bytes%s; "
			      "%s", v.boot_bytes >> 20, v.lazy_bytes >> 20, v.fw_table ?
			      (u64)in->lut.size : v.bitmap_bytes, v.fw_table ? " (the firmware's)" :
			      v.span_moved ? " (sized by the map before ExitBootServices)" : "",
			      stop ? stop : "boots");
	}
}

unsigned conformance_evaluate(const struct conformance_input *in, struct conformance_check *out,
			      unsigned cap, u64 *scratch)
{
	struct ctx c = { in, out, 0, cap };
	struct map_facts f;

	scan_map(in, scratch, &f);
	rules_map(&c, &f);
	rules_unaccepted(&c, &f);
	rule_probe(&c);
	rule_unaccepted_probe(&c);
	rules_snp(&c, &f);
	rule_tdx_ap_memory(&c);
	rules_boot(&c, &f);
	rules_acpi(&c);
	rules_tables(&c);
	rules_linux(&c, &f);
	return c.n;
}

unsigned conformance_evaluate_map(const struct conformance_input *in,
				  struct conformance_check *out, unsigned cap, u64 *scratch)
{
	struct ctx c = { in, out, 0, cap };
	struct map_facts f;

	scan_map(in, scratch, &f);
	rules_map(&c, &f);
	rules_unaccepted(&c, &f);
	return c.n;
}

const char *verdict_name(u32 v)
{
	static const char *const names[] = { "pass", "warn", "fail", "n/a", "info" };

	return v < ARRAY_SIZE(names) ? names[v] : "?";
}

const char *level_name(u32 l)
{
	static const char *const names[] = { "MUST", "SHOULD", "INFO" };

	return l < ARRAY_SIZE(names) ? names[l] : "?";
}

const char *efi_table_name(u32 t)
{
	static const char *const names[] = {
		[EFI_TABLE_ACPI20] = "acpi20",
		[EFI_TABLE_ACPI10] = "acpi10",
		[EFI_TABLE_SMBIOS] = "smbios",
		[EFI_TABLE_SMBIOS3] = "smbios3",
		[EFI_TABLE_LINUX_UNACCEPTED] = "linux_unaccepted",
		[EFI_TABLE_CC_BLOB] = "cc_blob",
		[EFI_TABLE_CC_FINAL_EVENTS] = "cc_final_events",
		[EFI_TABLE_MEMORY_ATTRIBUTES] = "memory_attributes",
	};

	return t < ARRAY_SIZE(names) ? names[t] : "?";
}

struct unacc_summary conformance_unacc_summary(const u8 *map, u64 ndesc, u64 desc_size)
{
	struct unacc_summary u = { .lo = ~0ULL };

	for (u64 i = 0; i < ndesc; i++) {
		struct efi_mem_desc d;

		memcpy(&d, map + i * desc_size, sizeof(d));
		if (d.type != EFI_UNACCEPTED_MEMORY)
			continue;
		u.desc++;
		u.bytes += d.num_pages << EFI_PAGE_SHIFT;
		u.hash += hash_range(d.phys_start, d.num_pages, d.attribute);
		if (!d.num_pages || d.num_pages > (~0ULL - d.phys_start) >> EFI_PAGE_SHIFT)
			continue;
		u.lo = MIN(u.lo, d.phys_start);
		u.hi = MAX(u.hi, d.phys_start + (d.num_pages << EFI_PAGE_SHIFT));
	}
	return u;
}
