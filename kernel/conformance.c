/* SPDX-License-Identifier: MIT */
/* memaccept: firmware conformance rules (pure logic: host-tested with crafted maps). */
#include "kernel/conformance.h"
#include "lib/format.h"
#include "lib/sort.h"
#include "lib/string.h"
#include "mm/memmap.h"

/* UEFI 2.9 section 7.2, EFI_MEMORY_DESCRIPTOR.Attribute. */
#define EFI_MEMORY_WB (1ULL << 3)
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
 * OvmfPkg AmdSevDxe), which takes seconds for large guests. Plain OVMF under QEMU's TCG
 * needs well under 10 ms here.
 */
#define EBS_SLOW_US (100 * 1000)
/*
 * The TSC at efi_main over its frequency is the time since reset only if the TSC started
 * at zero then (KVM and QEMU's TCG start it at zero; a TDX module or a host with a TSC
 * offset may not). More than this many seconds of firmware is taken as a TSC that did not
 * start at reset.
 */
#define RESET_PLAUSIBLE_S 300

/* What one pass over the raw map found. */
struct map_facts {
	bool readable;
	u32 ndesc, examined;
	u32 unaligned, zero_pages, wraps;
	s64 first_bad;			/* index of the first descriptor with a bad extent */
	s64 first_unsorted;
	u64 unsorted_start, unsorted_prev;	/* its start, and its predecessor's */
	s64 overlap_a, overlap_b;	/* the first two descriptors found overlapping */
	u32 overlaps;
	u32 unacc_desc;
	u64 unacc_bytes, unacc_below_1m, unacc_below_4g;
	u32 unacc_runtime, unacc_no_wb;
	u32 unacc_ranges, unacc_unaligned_ranges;
	u64 unacc_partial_bytes;	/* in 2 MiB units only partly unaccepted */
	bool ram_above_4g;
};

struct ctx {
	const struct conformance_input *in;
	struct conformance_check *out;
	unsigned n, cap;
};

static __printf(5, 6) void add(struct ctx *c, const char *rule, u32 verdict, const char *source,
			      const char *fmt, ...)
{
	struct conformance_check *k;
	va_list ap;

	if (c->n == c->cap)
		return;
	k = &c->out[c->n++];
	k->rule = rule;
	k->verdict = verdict;
	k->source = source;
	va_start(ap, fmt);
	format_buf_v(k->detail, sizeof(k->detail), fmt, ap);
	va_end(ap);
}

static bool get_desc(const struct conformance_input *in, u32 i, struct efi_mem_desc *d)
{
	memcpy(d, (const u8 *)in->map + (u64)i * in->desc_size, sizeof(*d));
	return true;
}

static bool is_ram(u32 type)
{
	return type == EFI_LOADER_CODE || type == EFI_LOADER_DATA ||
	       type == EFI_BOOT_SERVICES_CODE || type == EFI_BOOT_SERVICES_DATA ||
	       type == EFI_CONVENTIONAL_MEMORY || type == EFI_UNACCEPTED_MEMORY;
}

/* Bytes of [s, e) below limit. */
static u64 below(u64 s, u64 e, u64 limit)
{
	return s >= limit ? 0 : MIN(e, limit) - s;
}

static void scan_map(const struct conformance_input *in, u64 *scratch, struct map_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->first_bad = f->first_unsorted = f->overlap_a = f->overlap_b = -1;
	f->readable = in->map && in->desc_size >= EFI_MEM_DESC_SIZE && in->desc_size % 8 == 0;
	if (!f->readable)
		return;
	f->ndesc = (u32)MIN(in->map_size / in->desc_size, (u64)UINT32_MAX);
	f->examined = MIN(f->ndesc, (u32)CONFORMANCE_MAX_DESC);

	u64 prev_start = 0;
	u32 nkeys = 0;

	for (u32 i = 0; i < f->examined; i++) {
		struct efi_mem_desc d;
		u64 s, e;

		get_desc(in, i, &d);
		s = d.phys_start;
		if (i && s < prev_start && f->first_unsorted < 0) {
			f->first_unsorted = i;
			f->unsorted_start = s;
			f->unsorted_prev = prev_start;
		}
		prev_start = s;
		if (!IS_ALIGNED(s, PAGE_SIZE))
			f->unaligned++;
		if (!d.num_pages)
			f->zero_pages++;
		if (d.num_pages > (~0ULL - s) >> EFI_PAGE_SHIFT)
			f->wraps++;
		if (!IS_ALIGNED(s, PAGE_SIZE) || !d.num_pages ||
		    d.num_pages > (~0ULL - s) >> EFI_PAGE_SHIFT) {
			if (f->first_bad < 0)
				f->first_bad = i;
			continue;	/* no extent to judge the rest by */
		}
		e = s + (d.num_pages << EFI_PAGE_SHIFT);
		if (is_ram(d.type) && e > LOW_4G)
			f->ram_above_4g = true;
		if (d.type == EFI_UNACCEPTED_MEMORY) {
			f->unacc_desc++;
			f->unacc_bytes += e - s;
			f->unacc_below_1m += below(s, e, LOW_1M);
			f->unacc_below_4g += below(s, e, LOW_4G);
			if (d.attribute & EFI_MEMORY_RUNTIME)
				f->unacc_runtime++;
			if (!(d.attribute & EFI_MEMORY_WB))
				f->unacc_no_wb++;
		}
		scratch[nkeys++] = s | i;
	}

	/* Overlaps and unaccepted ranges, in address order. */
	sort_u64(scratch, nkeys);
	u64 max_end = 0, ustart = 0, uend = 0;
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
				}
			}
			if (e > max_end) {
				max_end = e;
				max_idx = i;
			}
		}
		/* Adjacent type 15 descriptors form one range. */
		if (in_range && (k == nkeys || d.type != EFI_UNACCEPTED_MEMORY || s > uend)) {
			f->unacc_ranges++;
			if (!IS_ALIGNED(ustart, UNIT_SIZE) || !IS_ALIGNED(uend, UNIT_SIZE)) {
				u64 lo = MIN(ALIGN_UP(ustart, UNIT_SIZE), uend);
				u64 hi = MAX(ALIGN_DOWN(uend, UNIT_SIZE), lo);

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

/* ---------------------------------------------------------------- the rules */

#define SRC_MAP "UEFI 2.9 section 7.2 (GetMemoryMap, EFI_MEMORY_DESCRIPTOR)"

static void rules_map(struct ctx *c, const struct map_facts *f)
{
	const struct conformance_input *in = c->in;

	if (!f->readable) {
		add(c, "map.desc_size", VERDICT_FAIL, SRC_MAP,
		    "desc_size %llu: must be at least 40 (sizeof EFI_MEMORY_DESCRIPTOR) and a multiple "
		    "of 8; the map cannot be read", in->desc_size);
	} else if (in->map_size % in->desc_size) {
		add(c, "map.desc_size", VERDICT_FAIL, SRC_MAP,
		    "map size %llu is not a multiple of desc_size %llu", in->map_size, in->desc_size);
	} else {
		add(c, "map.desc_size", VERDICT_PASS, SRC_MAP,
		    "%u descriptors of %llu bytes (a loader must step by desc_size, not 40)", f->ndesc,
		    in->desc_size);
	}
	add(c, "map.desc_version", in->desc_version == EFI_MEM_DESC_VERSION ? VERDICT_PASS : VERDICT_FAIL,
	    SRC_MAP, "version %u (EFI_MEMORY_DESCRIPTOR_VERSION is 1)", in->desc_version);
	if (!f->readable) {
		add(c, "map.alignment", VERDICT_NA, SRC_MAP, "map unreadable");
		add(c, "map.sorted", VERDICT_NA, SRC_MAP, "map unreadable");
		add(c, "map.overlap", VERDICT_NA, SRC_MAP, "map unreadable");
		return;
	}
	if (f->first_bad >= 0)
		add(c, "map.alignment", VERDICT_FAIL, SRC_MAP,
		    "%u unaligned start(s), %u with 0 pages, %u wrapping; first: descriptor %lld",
		    f->unaligned, f->zero_pages, f->wraps, (long long)f->first_bad);
	else
		add(c, "map.alignment", VERDICT_PASS, SRC_MAP,
		    "every descriptor starts on 4 KiB and has pages");
	if (f->first_unsorted >= 0)
		add(c, "map.sorted", VERDICT_WARN, SRC_MAP "; memaccept mm/memmap.c sorts",
		    "descriptor %lld (%#llx) starts below its predecessor (%#llx): the specification "
		    "does not promise order, but a loader that assumes it misreads the map",
		    (long long)f->first_unsorted, f->unsorted_start, f->unsorted_prev);
	else
		add(c, "map.sorted", VERDICT_PASS, SRC_MAP, "ascending physical addresses");
	if (f->overlaps)
		add(c, "map.overlap", VERDICT_FAIL, SRC_MAP,
		    "%u overlap(s), first: descriptors %lld and %lld; the guest cannot tell which type "
		    "is true (memaccept uses neither)", f->overlaps, (long long)f->overlap_a,
		    (long long)f->overlap_b);
	else
		add(c, "map.overlap", VERDICT_PASS, SRC_MAP, "no two descriptors share an address");
	if (f->examined < f->ndesc)
		add(c, "map.size", VERDICT_WARN, SRC_MAP,
		    "%u descriptors; only the first %u were judged", f->ndesc, f->examined);
}

#define SRC_UNACC_ATTR \
	"UEFI 2.9 section 7.2 (type 15, EFI_MEMORY_WB, EFI_MEMORY_RUNTIME)"
#define SRC_UNACC_ALIGN \
	"Linux drivers/firmware/efi/libstub/unaccepted_memory.c process_unaccepted_memory " \
	"(2 MiB unit; Linux accepts the edges at boot); memaccept mm/bitmap.c, mm/accept.c"
#define SRC_TDX_4G \
	"edk2 OvmfPkg/Library/PlatformInitLib/IntelTdx.c " \
	"BuildResourceDescriptorHobForUnacceptedMemory (memory under 4 GiB accepted)"
#define SRC_SNP_4G \
	"edk2 OvmfPkg/PlatformPei/AmdSev.c AmdSevSnpInitialize (RAM below 4 GiB " \
	"validated, at or above left unaccepted)"
#define SRC_1M \
	"Intel SDM vol. 3 (SIPI trampolines below 1 MiB); Linux " \
	"arch/x86/realmode/init.c; both OVMF flavours accept all of low memory"

static void rules_unaccepted(struct ctx *c, const struct map_facts *f)
{
	const struct conformance_input *in = c->in;
	bool cc = in->platform == DETECTED_TDX || in->platform == DETECTED_SNP;

	if (!f->readable || !f->unacc_desc) {
		const char *why = !f->readable ? "map unreadable" :
				  "the firmware reported no unaccepted memory (type 15)";

		add(c, "unaccepted.platform", VERDICT_NA, SRC_UNACC_ATTR, "%s", why);
		add(c, "unaccepted.attributes", VERDICT_NA, SRC_UNACC_ATTR, "%s", why);
		add(c, "unaccepted.alignment", VERDICT_NA, SRC_UNACC_ALIGN, "%s", why);
		add(c, "unaccepted.below_1m", VERDICT_NA, SRC_1M, "%s", why);
		add(c, "unaccepted.below_4g", VERDICT_NA,
		    in->platform == DETECTED_SNP ? SRC_SNP_4G : SRC_TDX_4G, "%s", why);
		return;
	}
	if (cc)
		add(c, "unaccepted.platform", VERDICT_PASS, SRC_UNACC_ATTR,
		    "%llu MiB in %u range(s) on a %s guest", f->unacc_bytes >> 20, f->unacc_ranges,
		    in->platform == DETECTED_TDX ? "TDX" : "SEV-SNP");
	else
		add(c, "unaccepted.platform", VERDICT_FAIL, SRC_UNACC_ATTR,
		    "%llu MiB unaccepted on a guest with neither TDX nor SEV-SNP: nothing can accept it",
		    f->unacc_bytes >> 20);

	if (f->unacc_runtime)
		add(c, "unaccepted.attributes", VERDICT_FAIL, SRC_UNACC_ATTR,
		    "%u of %u type 15 descriptors carry EFI_MEMORY_RUNTIME: runtime services cannot "
		    "use memory the OS has not accepted", f->unacc_runtime, f->unacc_desc);
	else if (f->unacc_no_wb)
		add(c, "unaccepted.attributes", VERDICT_WARN, SRC_UNACC_ATTR,
		    "%u of %u type 15 descriptors lack EFI_MEMORY_WB: once accepted it is ordinary "
		    "write-back RAM, and an OS may map it by these attributes", f->unacc_no_wb,
		    f->unacc_desc);
	else
		add(c, "unaccepted.attributes", VERDICT_PASS, SRC_UNACC_ATTR,
		    "%u type 15 descriptor(s): write-back, not runtime", f->unacc_desc);

	if (f->unacc_unaligned_ranges)
		add(c, "unaccepted.alignment", VERDICT_WARN, SRC_UNACC_ALIGN,
		    "%u of %u range(s) not on 2 MiB boundaries: %llu KiB in partial units (Linux "
		    "accepts them at boot; memaccept on demand)", f->unacc_unaligned_ranges, f->unacc_ranges,
		    f->unacc_partial_bytes >> 10);
	else
		add(c, "unaccepted.alignment", VERDICT_PASS, SRC_UNACC_ALIGN,
		    "%u range(s), all on 2 MiB boundaries", f->unacc_ranges);

	if (f->unacc_below_1m)
		add(c, "unaccepted.below_1m", VERDICT_FAIL, SRC_1M,
		    "%llu KiB below 1 MiB unaccepted: real-mode trampolines and legacy structures "
		    "live there before any accept path exists", f->unacc_below_1m >> 10);
	else
		add(c, "unaccepted.below_1m", VERDICT_PASS, SRC_1M, "all memory below 1 MiB accepted");

	if (!cc)
		add(c, "unaccepted.below_4g", VERDICT_NA, SRC_TDX_4G,
		    "no TDX or SEV-SNP: no firmware guide applies");
	else if (f->unacc_below_4g)
		add(c, "unaccepted.below_4g", VERDICT_WARN,
		    in->platform == DETECTED_TDX ? SRC_TDX_4G : SRC_SNP_4G,
		    "%llu MiB below 4 GiB left unaccepted, where the reference firmware accepts all; "
		    "memaccept copes, a loader that expects low memory accepted may not",
		    f->unacc_below_4g >> 20);
	else
		add(c, "unaccepted.below_4g", VERDICT_PASS,
		    in->platform == DETECTED_TDX ? SRC_TDX_4G : SRC_SNP_4G,
		    "all memory below 4 GiB accepted");
}

#define SRC_OPTIN \
	"edk2 OvmfPkg/Include/Protocol/SevMemoryAcceptance.h (GUID " \
	"c5a010fe-38a7-4531-8a4a-0500d2fd1649, AllowUnacceptedMemory before " \
	"ExitBootServices)"

static void rules_snp(struct ctx *c, const struct map_facts *f)
{
	const struct conformance_input *in = c->in;

	if (in->platform != DETECTED_SNP) {
		add(c, "snp.optin_present", VERDICT_NA, SRC_OPTIN, "not an SEV-SNP guest");
		add(c, "snp.optin_honoured", VERDICT_NA, SRC_OPTIN, "not an SEV-SNP guest");
		return;
	}
	switch (in->snp_protocol) {
	case SNP_PROTOCOL_CALLED:
		add(c, "snp.optin_present", VERDICT_PASS, SRC_OPTIN,
		    "located and AllowUnacceptedMemory returned success");
		break;
	case SNP_PROTOCOL_ABSENT:
		add(c, "snp.optin_present", VERDICT_WARN, SRC_OPTIN,
		    "no such protocol: the firmware must accept all memory before handing over, "
		    "which is slow for large guests");
		break;
	default:
		add(c, "snp.optin_present", VERDICT_FAIL, SRC_OPTIN,
		    "AllowUnacceptedMemory returned an error");
		break;
	}
	if (in->snp_protocol != SNP_PROTOCOL_CALLED)
		add(c, "snp.optin_honoured", VERDICT_NA, SRC_OPTIN, "the opt-in was not made");
	else if (f->unacc_desc)
		add(c, "snp.optin_honoured", VERDICT_PASS, SRC_OPTIN,
		    "the final map still has %llu MiB of type 15", f->unacc_bytes >> 20);
	else if (!f->ram_above_4g)
		add(c, "snp.optin_honoured", VERDICT_NA, SRC_OPTIN,
		    "no RAM at or above 4 GiB, which is all the firmware would leave unaccepted");
	else
		add(c, "snp.optin_honoured", VERDICT_FAIL, SRC_OPTIN,
		    "opted in, yet the final map has no unaccepted memory: the firmware accepted it "
		    "all anyway");
}

#define SRC_EBS \
	"UEFI 2.9 section 7.4 (ExitBootServices: EFI_INVALID_PARAMETER when the map key " \
	"is stale)"

static u64 tsc_to_us(u64 cycles, u64 hz)
{
	/* Split so that cycles * 10^6 cannot overflow. */
	return hz ? cycles / hz * 1000000 + cycles % hz * 1000000 / hz : 0;
}

static void rules_boot(struct ctx *c)
{
	const struct conformance_input *in = c->in;

	if (in->ebs_attempts <= 1)
		add(c, "ebs.attempts", VERDICT_PASS, SRC_EBS, "succeeded on the first call");
	else
		add(c, "ebs.attempts", VERDICT_WARN, SRC_EBS,
		    "%u calls: the map changed inside ExitBootServices (an event allocated or freed "
		    "memory, as OVMF does on SEV-SNP without the opt-in)", in->ebs_attempts);
	add(c, "ebs.duration", in->ebs_last_call_us > EBS_SLOW_US ? VERDICT_WARN : VERDICT_PASS,
	    SRC_EBS "; memaccept boot/efi_main.c",
	    "%llu us in the successful call, %llu us from the first GetMemoryMap (more than %u ms "
	    "means work such as accepting memory inside the call)", in->ebs_last_call_us,
	    in->ebs_total_us, EBS_SLOW_US / 1000);

	u64 s = in->tsc_hz ? in->tsc_at_entry / in->tsc_hz : 0;

	if (!in->tsc_hz)
		add(c, "boot.reset_to_efi_main", VERDICT_NA, "memaccept boot/efi_main.c",
		    "TSC frequency unknown");
	else if (s > RESET_PLAUSIBLE_S)
		add(c, "boot.reset_to_efi_main", VERDICT_NA, "memaccept boot/efi_main.c",
		    "TSC at efi_main is %llu s: it did not start at reset here, so firmware time is "
		    "unknown", s);
	else
		add(c, "boot.reset_to_efi_main", VERDICT_PASS,
		    "memaccept boot/efi_main.c (TSC at efi_main / TSC frequency)",
		    "%llu ms from reset to efi_main, if the TSC started at reset (it does under KVM "
		    "and QEMU)", tsc_to_us(in->tsc_at_entry, in->tsc_hz) / 1000);
}

#define SRC_RSDP "ACPI 6.4 section 5.2.5.3 (RSDP); UEFI 2.9 section 4.6 (ACPI 2.0 table GUID)"
#define SRC_XSDT "ACPI 6.4 section 5.2.8 (XSDT)"
#define SRC_MADT "ACPI 6.4 section 5.2.12 (MADT, signature APIC)"
#define SRC_WAKEUP \
	"ACPI 6.4 section 5.2.12.19 (multiprocessor wakeup, MADT type 0x10); Linux " \
	"arch/x86/kernel/acpi/madt_wakeup.c"

static void rules_acpi(struct ctx *c)
{
	const struct acpi_facts *a = &c->in->acpi;
	bool tdx = c->in->platform == DETECTED_TDX;

	if (a->rsdp == ACPI_OK)
		add(c, "acpi.rsdp", VERDICT_PASS, SRC_RSDP, "revision %u at %#llx, checksums valid",
		    a->rsdp_revision, a->rsdp_addr);
	else
		add(c, "acpi.rsdp", VERDICT_FAIL, SRC_RSDP, "RSDP %s%s", acpi_status_name(a->rsdp),
		    a->rsdp == ACPI_ABSENT ? " (no ACPI table in the EFI configuration table)" : "");
	if (a->rsdp != ACPI_OK)
		add(c, "acpi.xsdt", VERDICT_NA, SRC_XSDT, "no usable RSDP");
	else if (a->xsdt == ACPI_OK)
		add(c, "acpi.xsdt", VERDICT_PASS, SRC_XSDT, "%u tables", a->ntables);
	else
		add(c, "acpi.xsdt", VERDICT_FAIL, SRC_XSDT, "XSDT at %#llx: %s", a->xsdt_addr,
		    acpi_status_name(a->xsdt));
	if (a->xsdt != ACPI_OK)
		add(c, "acpi.madt", VERDICT_FAIL, SRC_MADT, "no usable XSDT, so no MADT");
	else if (a->madt == ACPI_OK)
		add(c, "acpi.madt", VERDICT_PASS, SRC_MADT, "%u entries, %u local APIC(s)",
		    a->madt_entries, a->madt_lapics);
	else
		add(c, "acpi.madt", VERDICT_FAIL, SRC_MADT, "MADT %s: the guest cannot find its CPUs",
		    acpi_status_name(a->madt));
	if (a->madt != ACPI_OK)
		add(c, "acpi.mp_wakeup", tdx ? VERDICT_FAIL : VERDICT_NA, SRC_WAKEUP, "no usable MADT");
	else if (a->mp_wakeup && !c->in->mp_wakeup_problem)
		add(c, "acpi.mp_wakeup", VERDICT_PASS, SRC_WAKEUP, "mailbox at %#llx, version %u",
		    a->mp_wakeup_mailbox, a->mp_wakeup_version);
	else if (a->mp_wakeup)
		/* The same checks the kernel makes before it writes to the mailbox. */
		add(c, "acpi.mp_wakeup", tdx ? VERDICT_FAIL : VERDICT_WARN, SRC_WAKEUP,
		    "mailbox at %#llx, version %u: %s, so the guest does not use it",
		    a->mp_wakeup_mailbox, a->mp_wakeup_version, c->in->mp_wakeup_problem);
	else if (tdx)
		add(c, "acpi.mp_wakeup", VERDICT_FAIL, SRC_WAKEUP,
		    "no multiprocessor wakeup entry: a TD has no INIT/SIPI, so its other vCPUs "
		    "cannot be started");
	else
		add(c, "acpi.mp_wakeup", VERDICT_NA, SRC_WAKEUP,
		    "not a TDX guest (INIT/SIPI starts the other vCPUs); no entry");
}

#define SRC_GUIDS "Linux include/linux/efi.h (GUIDs); UEFI 2.9 section 4.6"
#define SRC_UNACC_TABLE \
	"Linux drivers/firmware/efi/libstub/unaccepted_memory.c (installed by the Linux " \
	"EFI stub, not by firmware)"
#define SRC_CC_BLOB \
	"Linux arch/x86/boot/compressed/sev.c (SEV-SNP needs the CC blob: secrets and " \
	"CPUID pages)"
#define SRC_CC_EVENTS "Linux drivers/firmware/efi/libstub/tpm.c (CC event log for attestation)"

static bool has(const struct conformance_input *in, u32 table)
{
	return in->efi_tables & (1u << table);
}

static void rules_tables(struct ctx *c)
{
	const struct conformance_input *in = c->in;
	u32 p = in->platform;

	add(c, "efi.acpi_table", has(in, EFI_TABLE_ACPI20) ? VERDICT_PASS : VERDICT_FAIL, SRC_GUIDS,
	    "ACPI 2.0 table %s, ACPI 1.0 table %s (%u configuration tables in all)",
	    has(in, EFI_TABLE_ACPI20) ? "present" : "absent",
	    has(in, EFI_TABLE_ACPI10) ? "present" : "absent", in->efi_table_count);
	if (has(in, EFI_TABLE_SMBIOS3) || has(in, EFI_TABLE_SMBIOS))
		add(c, "efi.smbios", VERDICT_PASS, SRC_GUIDS, "SMBIOS3 %s, SMBIOS %s",
		    has(in, EFI_TABLE_SMBIOS3) ? "present" : "absent",
		    has(in, EFI_TABLE_SMBIOS) ? "present" : "absent");
	else
		add(c, "efi.smbios", VERDICT_WARN, SRC_GUIDS,
		    "no SMBIOS table: not needed by memaccept, but OS tools read it");
	if (has(in, EFI_TABLE_LINUX_UNACCEPTED))
		add(c, "efi.linux_unaccepted", VERDICT_WARN, SRC_UNACC_TABLE,
		    "present before any OS loader ran: something already tracks (and may have "
		    "accepted) memory the map calls unaccepted");
	else
		add(c, "efi.linux_unaccepted", VERDICT_PASS, SRC_UNACC_TABLE,
		    "absent, as it should be from firmware");
	if (p == DETECTED_SNP)
		add(c, "efi.cc_blob", has(in, EFI_TABLE_CC_BLOB) ? VERDICT_PASS : VERDICT_FAIL,
		    SRC_CC_BLOB, "%s", has(in, EFI_TABLE_CC_BLOB) ? "present" :
		    "absent: the guest cannot find the SNP secrets and CPUID pages");
	else
		add(c, "efi.cc_blob", VERDICT_NA, SRC_CC_BLOB, "not an SEV-SNP guest (table %s)",
		    has(in, EFI_TABLE_CC_BLOB) ? "present" : "absent");
	if (p == DETECTED_TDX)
		add(c, "efi.cc_final_events", has(in, EFI_TABLE_CC_FINAL_EVENTS) ? VERDICT_PASS :
		    VERDICT_WARN, SRC_CC_EVENTS, "%s", has(in, EFI_TABLE_CC_FINAL_EVENTS) ? "present" :
		    "absent: the OS cannot complete the measured-boot event log");
	else
		add(c, "efi.cc_final_events", VERDICT_NA, SRC_CC_EVENTS, "not a TDX guest (table %s)",
		    has(in, EFI_TABLE_CC_FINAL_EVENTS) ? "present" : "absent");
}

unsigned conformance_evaluate(const struct conformance_input *in, struct conformance_check *out,
			      unsigned cap, u64 *scratch)
{
	struct ctx c = { in, out, 0, cap };
	struct map_facts f;

	scan_map(in, scratch, &f);
	rules_map(&c, &f);
	rules_unaccepted(&c, &f);
	rules_snp(&c, &f);
	rules_boot(&c);
	rules_acpi(&c);
	rules_tables(&c);
	return c.n;
}

const char *verdict_name(u32 v)
{
	static const char *const names[] = { "pass", "warn", "fail", "n/a" };

	return v < ARRAY_SIZE(names) ? names[v] : "?";
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
