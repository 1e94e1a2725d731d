/* SPDX-License-Identifier: MIT */
/* memaccept: workload=conformance: judge what the firmware handed over and print the verdicts. */
#include "arch/x86/platform.h"
#include "arch/x86/sev/snp.h"
#include "arch/x86/tdx/tdx.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "include/exit_codes.h"
#include "include/version.h"
#include "kernel/conformance.h"
#include "kernel/mp_wakeup.h"
#include "kernel/main.h"
#include "kernel/memory.h"
#include "lib/string.h"
#include "mm/accept.h"
#include "mm/early.h"
#include "mm/memmap.h"
#include "mm/page_alloc.h"

static u64 scratch[CONFORMANCE_MAX_DESC];
static struct conformance_check checks[CONFORMANCE_MAX_CHECKS];

/* Is all of [addr, addr + len) memory the firmware typed for tables or for itself? */
static bool table_memory(u64 addr, u64 len)
{
	if (addr + len < addr)
		return false;
	for (u64 a = addr, end = addr + len; a < end;) {
		const struct mem_range *r = memmap_find(&kernel_memmap, a);

		if (!r || (r->kind != RANGE_ACPI && r->kind != RANGE_RUNTIME))
			return false;
		a = r->end;
	}
	return true;
}

/*
 * The ACPI walk reads only memory the firmware typed for tables (ACPI reclaim and NVS:
 * "memory that holds the ACPI tables", UEFI 2.9 section 7.2) or for itself (runtime
 * services), both mapped as private RAM by the kernel's page tables. A pointer into free
 * RAM, unaccepted memory, a suspect range, a hole or reserved space (which may be MMIO:
 * on TDX a read there is a #VE) yields a verdict ("outside ACPI memory"), never a fault.
 */
static bool acpi_read(void *ctx, u64 addr, void *dst, u64 len)
{
	(void)ctx;
	if (!table_memory(addr, len))
		return false;
	memcpy(dst, (const void *)(uintptr_t)addr, len);
	return true;
}

void conformance_scan_acpi(u64 rsdp, struct acpi_facts *out)
{
	struct acpi_reader reader = { acpi_read, NULL };

	acpi_scan(&reader, rsdp, out);
}

/*
 * The Linux unaccepted memory table (include/linux/efi.h struct efi_unaccepted_memory:
 * u32 version, u32 unit_size, u64 phys_base, u64 size, then size bytes of bitmap), read
 * under the same rule as the ACPI tables: only from table or runtime memory.
 */
static void read_linux_table(u64 addr, struct linux_unaccepted_facts *t)
{
	u8 h[24];

	memset(t, 0, sizeof(*t));
	if (!addr)
		return;
	t->present = true;
	t->addr = addr;
	if (!acpi_read(NULL, addr, h, sizeof(h)))
		return;
	memcpy(&t->version, h, 4);
	memcpy(&t->unit_size, h + 4, 4);
	memcpy(&t->phys_base, h + 8, 8);
	memcpy(&t->size, h + 16, 8);
	if (t->size > (1ULL << 32) || !table_memory(addr + sizeof(h), t->size))
		return;
	t->bitmap = (const u8 *)(uintptr_t)(addr + sizeof(h));
	t->readable = true;
}

/* Is the map's type RAM the firmware hands over accepted (everything but type 15)? */
static bool accepted_ram(u32 type)
{
	return type == EFI_LOADER_CODE || type == EFI_LOADER_DATA ||
	       type == EFI_BOOT_SERVICES_CODE || type == EFI_BOOT_SERVICES_DATA ||
	       type == EFI_CONVENTIONAL_MEMORY;
}

/*
 * Only memory the kernel took as accepted free RAM (not suspect, not held, not the boot
 * services memory it still runs on, where SNP's shared GHCB pages may lie). The platform's
 * answer (enum probe_result), or -1 when the page is not asked.
 */
static int probe_page(struct conformance_input *in, u64 pa)
{
	const struct mem_range *m = memmap_find(&kernel_memmap, pa);
	int r;

	if (!m || m->kind != RANGE_USABLE)
		return -1;
	in->probed++;
	r = platform->probe_accepted(pa);
	if (r == PROBE_NOT_ACCEPTED && !in->probe_not_accepted++)
		in->probe_first_bad = pa;
	else if (r == PROBE_UNKNOWN)
		in->probe_unknown++;
	return r;
}

/* Descriptor i of the final map, if RAM the map calls accepted: its first and last page. */
static bool accepted_desc(const struct boot_info *bi, u64 i, u64 *first, u64 *last)
{
	struct efi_mem_desc d;

	memcpy(&d, (const u8 *)(uintptr_t)bi->map_addr + i * bi->desc_size, sizeof(d));
	if (!accepted_ram(d.type) || !d.num_pages || !IS_ALIGNED(d.phys_start, PAGE_SIZE) ||
	    d.num_pages > (~0ULL - d.phys_start) >> EFI_PAGE_SHIFT)
		return false;
	*first = d.phys_start;
	*last = d.phys_start + ((d.num_pages - 1) << EFI_PAGE_SHIFT);
	return true;
}

static u64 descs(const struct boot_info *bi)
{
	u64 n = bi->desc_size >= EFI_MEM_DESC_SIZE ? bi->map_size / bi->desc_size : 0;

	return MIN(n, (u64)CONFORMANCE_MAX_DESC);
}

/*
 * accepted.probe before the early allocator's first use of a descriptor: the kernel
 * writes its page tables, the bitmap and the allocator's state into what the early
 * allocator hands out, so a descriptor it takes memory from is asked (its first and last
 * page) before that memory is handed out, not after the kernel has relied on it. A page
 * found not accepted is kept out of use (early_exclude; the early allocator chooses
 * again, and the page allocator never hands it out either): on TDX the probe accepted
 * (zeroed) it, on SNP it validated it or found it shared, and in both cases the firmware's
 * word about that memory is wrong. probe_accepted leaves these descriptors out and counts
 * what was found here.
 */
static struct conformance_input early_probe;
static u64 early_probed[CONFORMANCE_MAX_DESC / 64];
static const struct boot_info *early_bi;

static bool probe_before_use(void *ctx, u64 start, u64 end)
{
	const struct boot_info *bi = early_bi;
	bool clean = true;

	(void)ctx;
	for (u64 i = 0, n = descs(bi); i < n; i++) {
		u64 first, last, pages[2];
		bool asked = false;

		if (early_probed[i / 64] & (1ULL << (i % 64)) || !accepted_desc(bi, i, &first, &last) ||
		    last + PAGE_SIZE <= start || first >= end)
			continue;
		early_probed[i / 64] |= 1ULL << (i % 64);
		pages[0] = first;
		pages[1] = last;
		for (unsigned k = 0; k < (last != first ? 2u : 1u); k++) {
			int r = probe_page(&early_probe, pages[k]);

			asked |= r >= 0;
			if (r != PROBE_NOT_ACCEPTED)
				continue;
			early_probe.probe_kept_out++;
			early_exclude(pages[k], pages[k] + PAGE_SIZE);
			kprintf("conformance: %#llx is accepted RAM in the map, but the platform says it "
				"was not accepted: kept out of use\n", pages[k]);
			clean = false;
		}
		if (asked) {
			early_probe.probe_descs++;
			early_probe.probe_early_descs++;
		}
	}
	return clean;
}

void conformance_probe_early(const struct boot_info *bi)
{
	/* Below VMPL0 PVALIDATE is the SVSM's: accepted.probe cannot ask there (n/a). */
	if (!str_starts(bi->config.workload, "conformance") || !platform->probe_accepted ||
	    bi->svsm_size)
		return;
	early_bi = bi;
	early_set_check(probe_before_use, NULL);
}

/*
 * conformance_probe=full: every page the allocator has free, asked one by one. The pages
 * the kernel holds are left out: it runs on them (and on SNP some are shared, GHCBs, which
 * PVALIDATE must not touch). The blocks are taken without acceptance, chained through
 * their first word once probed (a page the probe found unaccepted is accepted by then),
 * and given back.
 */
static void probe_free_pages(struct conformance_input *in)
{
	u64 head = 0;

	for (int order = PALLOC_MAX_ORDER; order >= 0; order--) {
		u64 b;

		while ((b = palloc_alloc_accepted((unsigned)order))) {
			for (u64 pa = b; pa < b + (PAGE_SIZE << order); pa += PAGE_SIZE)
				(void)probe_page(in, pa);
			*(volatile u64 *)(uintptr_t)b = head;
			head = b;
		}
	}
	while (head) {
		u64 b = head;

		head = *(volatile u64 *)(uintptr_t)b;
		palloc_free(b);
	}
}

/*
 * Is memory the map calls accepted really accepted? Each page asked of the platform
 * (TDX: TDG.MEM.PAGE.ACCEPT; SNP at VMPL0: PVALIDATE), both of which leave an accepted page
 * as it is. By default the edges, where firmware bugs have been: the first and last page
 * of every RAM descriptor the map calls accepted that the kernel took as free RAM, which includes the pages on both sides
 * of every type 15 boundary and of every descriptor split (edk2's SEC GHCB page, 3e3f5bb21c,
 * sat inside a descriptor; TDVF's unaccepted tail of odd-sized low RAM, b15f98e68f, at
 * its end). conformance_probe=full asks every free page as well.
 */
static void probe_accepted(const struct boot_info *bi, struct conformance_input *in)
{
	bool full = bi->config.conformance_probe == CONFORMANCE_PROBE_FULL;
	const struct conformance_input *e = &early_probe;

	in->probe_full = full;
	if (!platform->probe_accepted) {
		in->probe_none = "the platform has nothing to ask (not TDX or SEV-SNP)";
		return;
	}
	/* What probe_before_use found comes first: it asked first. */
	in->probed = e->probed;
	in->probe_not_accepted = e->probe_not_accepted;
	in->probe_first_bad = e->probe_first_bad;
	in->probe_unknown = e->probe_unknown;
	in->probe_descs = e->probe_descs;
	in->probe_early_descs = e->probe_early_descs;
	in->probe_kept_out = e->probe_kept_out;
	for (u64 i = 0, n = descs(bi); i < n; i++) {
		u64 first, last;

		if (early_probed[i / 64] & (1ULL << (i % 64)) || !accepted_desc(bi, i, &first, &last))
			continue;
		if ((probe_page(in, first) >= 0) | (last != first && probe_page(in, last) >= 0))
			in->probe_descs++;
	}
	if (full)
		probe_free_pages(in);
}

/* Unaccepted ranges probed at most (one unit, 512 pages, each). */
#define UNACC_PROBE_MAX 64

struct unit_probe {
	struct unaccepted_probe pr;
	bool ran;
};

/* The accept of the claimed unit (kernel/memory.c accept_backend calls it after mapping it). */
static int unit_probe_accept(void *ctx, u64 start, u64 end)
{
	struct unit_probe *u = ctx;

	(void)end;
	u->ran = true;
	return platform->probe_unaccepted(start, &u->pr);
}

/*
 * Is memory the map calls unaccepted really unaccepted? Accepting type 15 memory is not
 * reversible on TDX (the guest cannot make a page pending again), so the probe does not
 * ask and undo: it accepts the lowest unit still unaccepted of each unaccepted range,
 * claimed through the allocator like any accept (bitmap bit cleared, bytes counted once,
 * the unit free for use afterwards), with the platform's page-by-page variant of the
 * accept (cc_platform.probe_unaccepted), whose answers are the verdict's. A page found
 * already accepted gets the platform's reaction (TDX: zeroed, usable; SNP: the unit
 * stays unused, where the normal path would stop the guest). In the test image the
 * ranges fake_unaccepted_start made stand for type 15 (the emulator keeps them pending
 * or not validated, as firmware leaves type 15); on real hardware that option is ignored.
 */
static void probe_unaccepted(struct conformance_input *in, bool full)
{
	if (!platform->probe_unaccepted) {
		in->unacc_probe_none = "the platform has nothing to ask (not TDX or SEV-SNP)";
		return;
	}
	in->unacc_full = full;
	for (unsigned i = 0; i < kernel_memmap.nranges; i++) {
		const struct mem_range *r = &kernel_memmap.ranges[i];
		bool probed = false;
		u64 from = r->start, unit;

		if (r->kind != RANGE_UNACCEPTED)
			continue;
		in->unacc_ranges++;
		/* The lowest unit still unaccepted; with conformance_probe=full every one. */
		while ((full || in->unacc_ranges_probed < UNACC_PROBE_MAX) &&
		       memory_next_unaccepted(from, &unit) && unit + UNIT_SIZE <= r->end) {
			struct unit_probe u = { 0 };

			from = unit + UNIT_SIZE;
			memory_set_probe_accept(unit_probe_accept, &u);
			palloc_accept_range(unit, unit + UNIT_SIZE, ACCEPT_EXPLICIT);
			memory_set_probe_accept(NULL, NULL);
			/* Another CPU (accept_memory=background) took the unit first: nothing learnt. */
			if (u.ran) {
				probed = true;
				in->unacc_units++;
				in->unacc_pages += u.pr.pages[PROBE_NOT_ACCEPTED] +
						   u.pr.pages[PROBE_ACCEPTED] + u.pr.pages[PROBE_UNKNOWN];
				in->unacc_pages_unknown += u.pr.pages[PROBE_UNKNOWN];
				if (u.pr.pages[PROBE_ACCEPTED] && !in->unacc_pages_accepted)
					in->unacc_first_accepted = u.pr.first_accepted;
				in->unacc_pages_accepted += u.pr.pages[PROBE_ACCEPTED];
			}
			if (!full)
				break;
		}
		if (!probed)
			continue;
		in->unacc_ranges_probed++;
		in->unacc_ranges_fake += r->efi_type != EFI_UNACCEPTED_MEMORY;
	}
}

int conformance_run(void)
{
	const struct boot_info *bi = kernel_boot_info();
	struct conformance_input in = {
		.map = (const void *)(uintptr_t)bi->map_addr,
		.map_size = bi->map_size,
		.desc_size = bi->desc_size,
		.desc_version = bi->desc_version,
		.map_handshake = bi->map_handshake,
		.platform = bi->detected,
		.snp_protocol = bi->snp_protocol,
		.fw_vendor = bi->fw_vendor,
		.svsm = bi->svsm_size != 0,
		.svsm_caa = bi->svsm_caa,
		.svsm_base = bi->svsm_base,
		.svsm_size = bi->svsm_size,
		.fw_ghcb_known = bi->detected == DETECTED_SNP,
		.fw_ghcb_msr = bi->detected == DETECTED_SNP ? snp_firmware_ghcb_msr() : 0,
		.ebs_attempts = bi->ebs_attempts,
		.ebs_last_call_us = tsc_cycles_to_ns(bi->tsc_at_ebs - bi->tsc_ebs_call) / 1000,
		.ebs_total_us = tsc_cycles_to_ns(bi->tsc_at_ebs - bi->tsc_ebs_start) / 1000,
		.ebs_first_desc = bi->ebs_first_desc,
		.ebs_first_unacc_desc = bi->ebs_first_unacc_desc,
		.ebs_first_unacc_bytes = bi->ebs_first_unacc_bytes,
		.ebs_first_unacc_hash = bi->ebs_first_unacc_hash,
		.ebs_first_unacc_lo = bi->ebs_first_unacc_lo,
		.ebs_first_unacc_hi = bi->ebs_first_unacc_hi,
		.tsc_at_entry = bi->tsc_at_entry,
		.tsc_hz = tsc_hz(),	/* final: the clock is settled before any workload runs */
		.phys_bits = bi->phys_bits,
		.tdx_shared_bit = bi->detected == DETECTED_TDX ? tdx_shared_bit() : 0,
		.cc_secrets = bi->cc_secrets,
		.cc_cpuid = bi->cc_cpuid,
		.cc_secrets_len = bi->cc_secrets_len,
		.cc_cpuid_len = bi->cc_cpuid_len,
		.efi_tables = bi->efi_tables,
		.efi_table_count = bi->efi_table_count,
	};
	static const char *const platforms[] = { "none", "tdx", "snp" };
	const char *pname = bi->detected < ARRAY_SIZE(platforms) ? platforms[bi->detected] : "?";
	u32 count[VERDICT_COUNT] = { 0 };
	unsigned n;

	conformance_scan_acpi(bi->acpi_rsdp, &in.acpi);
	if (in.acpi.mp_wakeup)
		in.mp_wakeup_problem = mp_wakeup_problem(&in.acpi, &kernel_memmap);
	read_linux_table(bi->linux_unaccepted_table, &in.lut);
	probe_accepted(bi, &in);
	probe_unaccepted(&in, bi->config.conformance_probe == CONFORMANCE_PROBE_FULL);
	n = conformance_evaluate(&in, checks, ARRAY_SIZE(checks), scratch);
	for (unsigned i = 0; i < n; i++)
		count[checks[i].verdict < VERDICT_COUNT ? checks[i].verdict : VERDICT_NA]++;

	/* Provenance: what judged what (the host adds the image's hash and the VM's configuration). */
	kprintf("conformance: memaccept %s, firmware %s revision %#x (UEFI %u.%u), %u CPU(s) "
		"reported, %llu MiB conventional memory\n", memaccept_version,
		bi->fw_vendor[0] ? bi->fw_vendor : "?", bi->fw_revision, bi->uefi_revision >> 16,
		(bi->uefi_revision & 0xffff) / 10, bi->efi_cpus, kernel_memmap.conventional_bytes >> 20);
	kprintf("conformance: firmware %s (revision %#x), platform %s, rule set %u: %u pass, "
		"%u warn, %u fail, %u n/a, %u info\n", bi->fw_vendor[0] ? bi->fw_vendor : "?",
		bi->fw_revision, pname, CONFORMANCE_RULE_SET, count[VERDICT_PASS],
		count[VERDICT_WARN], count[VERDICT_FAIL], count[VERDICT_NA], count[VERDICT_INFO]);
	for (unsigned i = 0; i < n; i++)
		kprintf("conformance: %-4s %-6s %-26s %s\n", verdict_name(checks[i].verdict),
			level_name(checks[i].level), checks[i].rule, checks[i].detail);
	/* What the firmware team has to do: every rule not met, failures (MUST) first. */
	static const u32 todo[] = { VERDICT_FAIL, VERDICT_WARN };

	for (unsigned v = 0; v < ARRAY_SIZE(todo); v++)
		for (unsigned i = 0; i < n; i++) {
			const struct conformance_check *k = &checks[i];

			if (k->verdict != todo[v])
				continue;
			kprintf("conformance: to do: %s %s%s: %s\n", level_name(k->level), k->rule,
				k->r->own ? " (memaccept's own rule)" : "", k->r->action);
		}

	ev_begin("conformance");
	ev_u64("rule_set", CONFORMANCE_RULE_SET);
	ev_str("memaccept", memaccept_version);
	ev_str("firmware", bi->fw_vendor);
	ev_u64("firmware_revision", bi->fw_revision);
	ev_u64("uefi_revision", bi->uefi_revision);
	ev_str("platform", pname);
	ev_u64("efi_cpus", bi->efi_cpus);
	ev_u64("conventional_bytes", kernel_memmap.conventional_bytes);
	ev_u64("pass", count[VERDICT_PASS]);
	ev_u64("warn", count[VERDICT_WARN]);
	ev_u64("fail", count[VERDICT_FAIL]);
	ev_u64("na", count[VERDICT_NA]);
	ev_u64("info", count[VERDICT_INFO]);
	ev_arr_begin("efi_tables");
	for (u32 t = 0; t < EFI_TABLE_COUNT; t++)
		if (bi->efi_tables & (1u << t))
			ev_str(NULL, efi_table_name(t));
	ev_arr_end();
	ev_arr_begin("acpi_tables");
	for (u32 t = 0; t < MIN(in.acpi.ntables, (u32)ACPI_MAX_TABLES); t++)
		ev_str(NULL, in.acpi.signatures[t]);
	ev_arr_end();
	ev_arr_begin("checks");
	for (unsigned i = 0; i < n; i++) {
		ev_obj_begin(NULL);
		ev_str("rule", checks[i].rule);
		ev_str("level", level_name(checks[i].level));
		ev_bool("own", checks[i].r->own);
		ev_str("verdict", verdict_name(checks[i].verdict));
		ev_str("source", checks[i].source);
		ev_str("detail", checks[i].detail);
		if (checks[i].verdict == VERDICT_FAIL || checks[i].verdict == VERDICT_WARN)
			ev_str("action", checks[i].r->action);
		ev_obj_end();
	}
	ev_arr_end();
	ev_end();
	return EXIT_OK;
}
