/* SPDX-License-Identifier: MIT */
/* memaccept: workload=conformance: judge what the firmware handed over and print the verdicts. */
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "include/exit_codes.h"
#include "kernel/conformance.h"
#include "kernel/mp_wakeup.h"
#include "kernel/main.h"
#include "kernel/memory.h"
#include "lib/string.h"
#include "mm/memmap.h"

static u64 scratch[CONFORMANCE_MAX_DESC];
static struct conformance_check checks[CONFORMANCE_MAX_CHECKS];

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
	for (u64 a = addr, end = addr + len; a < end;) {
		const struct mem_range *r = memmap_find(&kernel_memmap, a);

		if (!r || (r->kind != RANGE_ACPI && r->kind != RANGE_RUNTIME))
			return false;
		a = r->end;
	}
	memcpy(dst, (const void *)(uintptr_t)addr, len);
	return true;
}

void conformance_scan_acpi(u64 rsdp, struct acpi_facts *out)
{
	struct acpi_reader reader = { acpi_read, NULL };

	acpi_scan(&reader, rsdp, out);
}

int conformance_run(void)
{
	const struct boot_info *bi = kernel_boot_info();
	struct conformance_input in = {
		.map = (const void *)(uintptr_t)bi->map_addr,
		.map_size = bi->map_size,
		.desc_size = bi->desc_size,
		.desc_version = bi->desc_version,
		.platform = bi->detected,
		.snp_protocol = bi->snp_protocol,
		.ebs_attempts = bi->ebs_attempts,
		.ebs_last_call_us = tsc_cycles_to_ns(bi->tsc_at_ebs - bi->tsc_ebs_call) / 1000,
		.ebs_total_us = tsc_cycles_to_ns(bi->tsc_at_ebs - bi->tsc_ebs_start) / 1000,
		.tsc_at_entry = bi->tsc_at_entry,
		.tsc_hz = tsc_hz(),	/* final: the clock is settled before any workload runs */
		.efi_tables = bi->efi_tables,
		.efi_table_count = bi->efi_table_count,
	};
	static const char *const platforms[] = { "none", "tdx", "snp" };
	const char *platform = bi->detected < ARRAY_SIZE(platforms) ? platforms[bi->detected] : "?";
	u32 count[VERDICT_COUNT] = { 0 };
	unsigned n;

	conformance_scan_acpi(bi->acpi_rsdp, &in.acpi);
	if (in.acpi.mp_wakeup)
		in.mp_wakeup_problem = mp_wakeup_problem(&in.acpi, &kernel_memmap);
	n = conformance_evaluate(&in, checks, ARRAY_SIZE(checks), scratch);
	for (unsigned i = 0; i < n; i++)
		count[checks[i].verdict < VERDICT_COUNT ? checks[i].verdict : VERDICT_NA]++;

	kprintf("conformance: firmware %s (revision %#x), platform %s: %u pass, %u warn, %u fail, "
		"%u n/a\n", bi->fw_vendor[0] ? bi->fw_vendor : "?", bi->fw_revision, platform,
		count[VERDICT_PASS], count[VERDICT_WARN], count[VERDICT_FAIL], count[VERDICT_NA]);
	for (unsigned i = 0; i < n; i++)
		kprintf("conformance: %-4s %-22s %s\n", verdict_name(checks[i].verdict), checks[i].rule,
			checks[i].detail);

	ev_begin("conformance");
	ev_str("firmware", bi->fw_vendor);
	ev_u64("firmware_revision", bi->fw_revision);
	ev_u64("uefi_revision", bi->uefi_revision);
	ev_str("platform", platform);
	ev_u64("pass", count[VERDICT_PASS]);
	ev_u64("warn", count[VERDICT_WARN]);
	ev_u64("fail", count[VERDICT_FAIL]);
	ev_u64("na", count[VERDICT_NA]);
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
		ev_str("verdict", verdict_name(checks[i].verdict));
		ev_str("source", checks[i].source);
		ev_str("detail", checks[i].detail);
		ev_obj_end();
	}
	ev_arr_end();
	ev_end();
	return EXIT_OK;
}
