/* SPDX-License-Identifier: MIT */
/* memaccept: the reports of memory bring-up: the firmware's map, the bitmap, the allocator, background acceptance, the summary. */
#include "arch/x86/paging.h"
#include "arch/x86/platform.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "kernel/memory.h"
#include "kernel/memory_facts.h"
#include "kernel/smp.h"
#include "lib/muldiv.h"
#include "lib/string.h"
#include "mm/bitmap.h"
#include "mm/early.h"
#include "mm/accept.h"
#include "mm/page_alloc.h"
#include "mm/policy.h"
#ifdef CONFIG_EMULATOR
#include "arch/x86/emu/emu.h"
#endif

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
	if (bi->config.verbose) {
		/* The raw descriptors, so that a test can check the bitmap against the firmware's map. */
		for (u64 off = 0, i = 0; off + EFI_MEM_DESC_SIZE <= bi->map_size &&
		     bi->desc_size >= EFI_MEM_DESC_SIZE; off += bi->desc_size, i++) {
			struct efi_mem_desc d;

			memcpy(&d, (const u8 *)(uintptr_t)bi->map_addr + off, sizeof(d));
			ev_begin("memdesc");
			ev_u64("i", i);
			ev_u64("type", d.type);
			ev_u64("start", d.phys_start);
			ev_u64("pages", d.num_pages);
			ev_u64("attr", d.attribute);
			ev_end();
		}
		for (unsigned i = 0; i < m->nranges; i++)
			kprintf("  [%016llx, %016llx) %s\n", (unsigned long long)m->ranges[i].start,
				(unsigned long long)m->ranges[i].end,
				memmap_kind_name(m->ranges[i].kind));
	}

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
	ev_u64("held_bytes", m->held_bytes);
	ev_u64("anomalies", m->anomalies);
	ev_str("snp_protocol", bi->snp_protocol < ARRAY_SIZE(snp_names) ? snp_names[bi->snp_protocol]
									  : "?");
	ev_u64("ebs_attempts", bi->ebs_attempts);
	ev_u64("phys_bits", bi->phys_bits);	/* for judging the map offline (tools/judge.py) */
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

void memory_report_bitmap(void)
{
	const struct memory_facts *f = &memory_facts;
	const struct unaccepted_bitmap *b = f->bitmap;

	u64 bytes = f->bitmap_bytes;

	kprintf("bitmap: %llu units of 2 MiB in %u segment(s), %llu bytes, %llu MiB unaccepted, "
		"%llu KiB in %u partial units (%llu KiB accepted by ready)\n", b->units,
		b->nsegs, bytes, f->unaccepted_at_build >> 20, b->edge_bytes >> 10, f->edges,
		f->edge_bytes_at_ready >> 10);
	if (f->edges_at_boot)
		kprintf("bitmap: %llu partial units did not fit the allocator's table of %d; "
			"accepted at boot\n", f->edges_at_boot, PALLOC_MAX_EDGES);
	ev_begin("bitmap");
	ev_u64("base", b->nsegs ? b->segs[0].base : 0);
	ev_u64("units", b->units);
	ev_u64("bytes", bytes);
	ev_u64("unaccepted_bytes", f->unaccepted_at_build);
	/* Partial units: all of them, and what was accepted by `ready` (eager, a full table). */
	ev_u64("edge_bytes", b->edge_bytes);
	ev_u64("edge_ranges", f->edges);
	ev_u64("edge_accepted_bytes", f->edge_bytes_at_ready);
	ev_u64("segments", b->nsegs);
	ev_arr_begin("segment_bases");
	for (unsigned i = 0; i < b->nsegs; i++)
		ev_arr_u64(b->segs[i].base);
	ev_arr_end();
	ev_arr_begin("segment_units");
	for (unsigned i = 0; i < b->nsegs; i++)
		ev_arr_u64(b->segs[i].units);
	ev_arr_end();
	ev_end();
}

void memory_report_allocator(void)
{
	kprintf("palloc: %llu MiB free, %llu MiB unaccepted in whole units, %llu KiB in partial "
		"units, %llu boot-time bytes reserved\n", palloc_stats()->free_bytes >> 20,
		palloc_stats()->unaccepted_bytes >> 20, palloc_stats()->edge_unaccepted_bytes >> 10,
		early_bytes());
}

void memory_report_background(void)
{
	u64 done_ns, bytes;
	unsigned cpus;

	/* Waits for the APs: the report comes once every unit is accepted. */
	if (!policy_background_wait(&done_ns, &bytes, &cpus))
		return;
	kprintf("background: %u vCPU(s) accepted %llu MiB; the last unit %llu us after efi_main\n",
		cpus, bytes >> 20, done_ns / 1000);
	ev_begin("background");
	ev_u64("done_us", done_ns / 1000);
	ev_u64("bytes", bytes);
	ev_u64("cpus", cpus);
	ev_end();
}

static const char *const path_names[ACCEPT_PATH_COUNT] = {
	[ACCEPT_BOOT_EDGE] = "boot_edge", [ACCEPT_LAZY] = "lazy", [ACCEPT_EAGER] = "eager",
	[ACCEPT_AHEAD] = "ahead", [ACCEPT_EXPLICIT] = "explicit", [ACCEPT_BACKGROUND] = "background",
};

/* Accepted memory over time since efi_main, thinned to at most SERIES_MAX + 1 points. */
static void report_series(const struct series *sr)
{
	static u64 t[SERIES_MAX + 1], v[SERIES_MAX + 1];
	unsigned n = series_points(sr, t, v);

	for (unsigned i = 0; i < n; i++)
		t[i] /= 1000;
	ev_begin("accept_series");
	ev_u64_array("t_us", t, n);
	ev_u64_array("accepted_bytes", v, n);
	ev_end();
}

void memory_report_summary(void)
{
	const struct memory_facts *f = &memory_facts;
	struct palloc_stats *s = palloc_stats_mut();
	struct latency *l = &s->accept_lat;
	u64 p50 = latency_percentile(l, 500), p99 = latency_percentile(l, 990);

	kprintf("summary: %llu MiB accepted in %llu calls (%llu us in total, p50 %llu ns, p99 %llu ns, "
		"max %llu ns), %llu MiB still unaccepted, %llu MiB free\n",
		s->accepted_bytes >> 20, s->accept_calls, l->total_ns / 1000, p50, p99, l->max_ns,
		s->unaccepted_bytes >> 20, s->free_bytes >> 20);
	report_series(&s->accepted_over_time);
	ev_begin("summary");
	ev_u64("unaccepted_bytes", s->unaccepted_bytes);
	ev_u64("edge_unaccepted_bytes", s->edge_unaccepted_bytes);
	ev_u64("accepted_bytes", s->accepted_bytes);
	ev_u64("edge_accepted_bytes", s->edge_accepted_bytes);
	ev_u64("free_bytes", s->free_bytes);
	ev_u64("managed_bytes", s->managed_bytes);
	ev_u64("initial_free_bytes", s->initial_free_bytes);
	ev_u64("meta_bytes", s->meta_bytes);
	ev_u64("accept_calls", s->accept_calls);
	ev_u64("accept_failures", s->accept_failures);
	ev_u64("accept_ns_total", l->total_ns);
	ev_u64("accept_ns_p50", p50);
	ev_u64("accept_ns_p99", p99);
	ev_u64("accept_ns_max", l->max_ns);
	ev_u64("accept_ns_min", l->count ? l->min_ns : 0);
	ev_u64("accept_mib_s", rate_mib_s(s->accepted_bytes, l->total_ns));
	ev_bool("accept_percentiles_exact", latency_exact(l));
	ev_u64("map_ns_total", f->map_ns_total);
	/* What keeping unaccepted memory unmapped costs: mapping time per accept call. */
	ev_u64("map_ns_per_accept", s->accept_calls ? f->map_ns_total / s->accept_calls : 0);
	ev_u64("page_table_pages", paging_table_pages());
	ev_u64("allocs", s->allocs);
	ev_u64("frees", s->frees);
	ev_u64("alloc_failures", s->alloc_failures);
	/* Per vCPU (index 0 is the boot CPU), merged from each CPU's own counters. */
	ev_arr_begin("accepted_by_cpu");
	for (unsigned c = 0; c < smp_cpu_slots(); c++)
		ev_arr_u64(palloc_cpu_stats(c)->accepted_bytes);
	ev_arr_end();
	ev_obj_begin("accepted_by_path");
	for (unsigned i = 0; i < ACCEPT_PATH_COUNT; i++)
		ev_u64(path_names[i], s->accepted_by_path[i]);
	ev_obj_end();
	/* Bucket k: accepts that took [2^k, 2^(k+1)) ns; trailing empty buckets left out. */
	unsigned last = 0;

	for (unsigned i = 0; i < LAT_BUCKETS; i++)
		if (l->buckets[i])
			last = i + 1;
	ev_arr_begin("accept_ns_log2_histogram");
	for (unsigned i = 0; i < last; i++)
		ev_arr_u64(l->buckets[i]);
	ev_arr_end();
	ev_obj_begin("platform_calls");
	for (unsigned i = 0; i < platform->ncounters; i++)
		ev_u64(platform->counters[i].name, platform->counters[i].count);
	ev_obj_end();
	/* The partial units' share of those: the calls each one's accept made on its CPU. */
	ev_obj_begin("platform_calls_edges");
	for (unsigned i = 0; i < platform->ncounters && i < MAX_PLATFORM_COUNTERS; i++)
		ev_u64(platform->counters[i].name, f->edge_counters[i]);
	ev_obj_end();
	/*
	 * Calls per GiB accepted in whole units, the figure to compare across policies
	 * (rounded; the partial units, accepted page by page, are left out of both sides).
	 */
	u64 unit_bytes = s->accepted_bytes - s->edge_accepted_bytes;

	ev_obj_begin("platform_calls_per_gib");
	for (unsigned i = 0; i < platform->ncounters && i < MAX_PLATFORM_COUNTERS && unit_bytes; i++)
		ev_u64(platform->counters[i].name,
		       ((platform->counters[i].count - f->edge_counters[i]) * GiB + unit_bytes / 2) /
			       unit_bytes);
	ev_obj_end();
	/* The same per TiB (1024 GiB): three more digits for figures like 2.02 exits per GiB. */
	ev_obj_begin("platform_calls_per_tib");
	for (unsigned i = 0; i < platform->ncounters && i < MAX_PLATFORM_COUNTERS && unit_bytes; i++)
		ev_u64(platform->counters[i].name,
		       ((platform->counters[i].count - f->edge_counters[i]) * (1ULL << 20) +
			(unit_bytes >> 21)) / (unit_bytes >> 20));
	ev_obj_end();
#ifdef CONFIG_EMULATOR
	emu_report();
#endif
	ev_end();
}
