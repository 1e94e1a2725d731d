/* SPDX-License-Identifier: MIT */
/* memaccept: the kernel's memory bring-up steps, in the order kernel_main runs them. */
#include "arch/x86/cpu.h"
#include "arch/x86/paging.h"
#include "drivers/console.h"
#include "kernel/main.h"
#include "kernel/memory.h"
#include "kernel/panic.h"
#include "kernel/report.h"
#include "mm/early.h"

/* Sized for the largest map boot/ accepts (BOOT_MAP_BUFFER / 40 descriptors). */
#define MAX_DESC 4096
#define MAX_RANGES (2 * MAX_DESC + 4)

struct memmap kernel_memmap;
static struct mem_range ranges[MAX_RANGES];
static u64 scratch[(MAX_DESC * 64 + 64) / sizeof(u64) + 1];

void memory_parse_map(const struct boot_info *bi, bool can_accept)
{
	struct memmap_input in = {
		.buf = (const void *)(uintptr_t)bi->map_addr,
		.size = bi->map_size,
		.desc_size = bi->desc_size,
		.desc_version = bi->desc_version,
		.phys_bits = cpu_phys_bits(),
		.fake_set = bi->config.fake_set,
		.fake_start = bi->config.fake_unaccepted_start,
		.can_accept = can_accept,
	};

	if (memmap_parse(&in, &kernel_memmap, ranges, MAX_RANGES, scratch, sizeof(scratch)) ||
	    kernel_memmap.unusable) {
		memory_report_firmware(bi);
		fatal(EXIT_HOST_HOSTILE, "memory map: %s; cannot tell which memory is safe to use",
		      kernel_memmap.anomalies ? memmap_anomaly_name(kernel_memmap.log[0].kind)
					      : "too many ranges");
	}
}

/*
 * Page tables map everything the kernel may touch and nothing it must not: unaccepted
 * units stay unmapped until they are accepted (a stray access faults, and is reported,
 * instead of reaching the host), and so do suspect ranges. Below 4 GiB, holes between
 * ranges are MMIO (local APIC, flash, PCI windows) and mapped shared.
 */
void memory_build_page_tables(u64 private_bits)
{
	const struct memmap *m = &kernel_memmap;
	u64 gap = 0;
	/* Merge neighbouring ranges that get the same mapping, so large pages fit. */
	u64 run_start = 0, run_end = 0;
	int run_kind = -1;

	paging_init(early_alloc_page, private_bits, cpu_has_1g_pages());

#define FLUSH()                                                                           \
	do {                                                                              \
		if (run_kind >= 0 && paging_map(run_start, run_end, (enum map_kind)run_kind)) \
			fatal(EXIT_OUT_OF_MEMORY, "paging: out of memory for page tables"); \
		run_kind = -1;                                                            \
	} while (0)
#define ADD(s, e, k)                                                                      \
	do {                                                                              \
		if (run_kind == (int)(k) && run_end == (s)) {                             \
			run_end = (e);                                                    \
		} else {                                                                  \
			FLUSH();                                                          \
			run_start = (s), run_end = (e), run_kind = (int)(k);              \
		}                                                                         \
	} while (0)

	for (unsigned i = 0; i <= m->nranges; i++) {
		u64 s = i < m->nranges ? m->ranges[i].start : 4 * GiB;
		u32 kind = i < m->nranges ? m->ranges[i].kind : RANGE_RESERVED;

		if (gap < s && gap < 4 * GiB)
			ADD(gap, MIN(s, 4 * GiB), MAP_SHARED);
		if (i == m->nranges)
			break;
		gap = m->ranges[i].end;
		if (kind == RANGE_UNACCEPTED || kind == RANGE_SUSPECT)
			continue;
		ADD(s, m->ranges[i].end,
		    kind == RANGE_MMIO || kind == RANGE_RESERVED ? MAP_SHARED : MAP_RAM);
	}
	FLUSH();
#undef ADD
#undef FLUSH

	/* Page 0 stays unmapped so that a NULL dereference faults. */
	if (paging_unmap(0, PAGE_SIZE))
		fatal(EXIT_OUT_OF_MEMORY, "paging: out of memory for page tables");
	paging_activate();
}

void memory_report_firmware(const struct boot_info *bi)
{
	const struct memmap *m = &kernel_memmap;

	kprintf("firmware: %u descriptors (desc_size %llu, version %u), %llu MiB conventional, "
		"%llu MiB unaccepted in %u ranges, %u anomalies\n",
		m->descriptors, (unsigned long long)m->desc_size, m->desc_version,
		(unsigned long long)(m->conventional_bytes >> 20),
		(unsigned long long)(m->unaccepted_bytes >> 20), m->unaccepted_ranges, m->anomalies);
	for (unsigned i = 0; i < m->anomalies && i < MEMMAP_ANOMALY_LOG; i++) {
		const struct map_anomaly_entry *a = &m->log[i];

		kprintf("firmware: anomaly %s (descriptor %d) [%llx, %llx)\n",
			memmap_anomaly_name(a->kind), a->desc == UINT32_MAX ? -1 : (int)a->desc,
			(unsigned long long)a->start, (unsigned long long)a->end);
	}
	if (bi->config.verbose)
		for (unsigned i = 0; i < m->nranges; i++)
			kprintf("  [%016llx, %016llx) %s\n", (unsigned long long)m->ranges[i].start,
				(unsigned long long)m->ranges[i].end,
				memmap_kind_name(m->ranges[i].kind));

	static const char *const snp_names[] = { "not-applicable", "absent", "called", "failed" };

	ev_begin("firmware");
	ev_u64("descriptors", m->descriptors);
	ev_u64("desc_size", m->desc_size);
	ev_u64("desc_version", m->desc_version);
	ev_u64("conventional_bytes", m->conventional_bytes);
	ev_u64("unaccepted_bytes", m->unaccepted_bytes);
	ev_u64("fake_unaccepted_bytes", m->fake_unaccepted_bytes);
	ev_u64("unaccepted_ranges", m->unaccepted_ranges);
	ev_u64("suspect_bytes", m->suspect_bytes);
	ev_u64("anomalies", m->anomalies);
	ev_str("snp_protocol", bi->snp_protocol < ARRAY_SIZE(snp_names) ? snp_names[bi->snp_protocol]
									  : "?");
	ev_u64("ebs_attempts", bi->ebs_attempts);
	ev_obj_begin("bytes_by_type");
	for (u32 t = 0; t <= EFI_MEMORY_TYPE_COUNT; t++)
		if (m->bytes_by_type[t])
			ev_u64(efi_type_name(t), m->bytes_by_type[t]);
	ev_obj_end();
	ev_obj_begin("anomaly_counts");
	for (u32 k = 0; k < ANOM_KIND_COUNT; k++)
		if (m->anomaly_count[k])
			ev_u64(memmap_anomaly_name(k), m->anomaly_count[k]);
	ev_obj_end();
	ev_end();

	/* The ranges themselves, one event each, so that tests can check the bitmap against them. */
	for (unsigned i = 0; i < m->nranges; i++) {
		if (m->ranges[i].kind != RANGE_UNACCEPTED && m->ranges[i].kind != RANGE_SUSPECT)
			continue;
		ev_begin("range");
		ev_str("kind", memmap_kind_name(m->ranges[i].kind));
		ev_u64("start", m->ranges[i].start);
		ev_u64("end", m->ranges[i].end);
		ev_end();
	}
}
