/* SPDX-License-Identifier: MIT */
/* memaccept: the kernel's memory bring-up steps, in the order kernel_main runs them. */
#include "arch/x86/cpu.h"
#include "arch/x86/desc.h"
#include "arch/x86/paging.h"
#include "arch/x86/platform.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "include/panic.h"
#include "kernel/main.h"
#include "kernel/memory.h"
#include "kernel/smp.h"
#include "lib/muldiv.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "mm/bitmap.h"
#include "mm/early.h"
#include "mm/page_alloc.h"
#include "mm/policy.h"
#ifdef CONFIG_EMULATOR
#include "arch/x86/emu/emu.h"
#endif

/* Sized for the largest map boot/ accepts (BOOT_MAP_BUFFER / 40 descriptors). */
#define MAX_DESC 4096
#define MAX_RANGES (2 * MAX_DESC + 4)

/* Accepts timed individually; beyond this many, a uniform sample (mm/latency.h). */
#define ACCEPT_SAMPLES (128 * 1024)
/* Page-table pages kept aside for mapping a newly accepted unit when nothing is free. */
#define PT_POOL 8

struct memmap kernel_memmap;
static struct mem_range ranges[MAX_RANGES];
static u64 scratch[(MAX_DESC * 64 + 64) / sizeof(u64) + 1];
static struct unaccepted_bitmap bitmap;
static struct palloc_reserved edges[2 * MAX_DESC];
static unsigned nedges;
/* The bitmap as built, for its report after `ready` (eager has cleared it by then). */
static u64 bitmap_bytes, bitmap_unaccepted_at_build;
static u32 accept_samples[ACCEPT_SAMPLES];
static u64 pt_pool[PT_POOL];
static unsigned pt_pool_n;
static bool palloc_ready;
static u64 map_ns_total;	/* time spent mapping accepted memory, inside the accept times */
/*
 * The page tables are shared by every CPU: one lock for changing them (and the pool).
 * Taken inside no other lock; pt_alloc takes the allocator's lock inside it.
 */
static struct spinlock paging_lock;
/*
 * Platform calls made for partial units (accepted 4 KiB at a time), left out of the
 * per-GiB figures of whole units. Taken as the counters' change around each edge's
 * accept: exact while no other CPU accepts at the same time (at boot, lazy, eager,
 * which takes the edges after the APs finished); background APs may add a few of their
 * own unit calls to it.
 */
#define MAX_PLATFORM_COUNTERS 32
static u64 edge_counters[MAX_PLATFORM_COUNTERS];
/* Partial units as found, and the bytes accepted by `ready`, for the bitmap event. */
static u64 edge_bytes_at_ready, edges_at_boot;

void memory_parse_map(const struct boot_info *bi, bool can_accept, bool fake_allowed)
{
	struct memmap_input in = {
		.buf = (const void *)(uintptr_t)bi->map_addr,
		.size = bi->map_size,
		.desc_size = bi->desc_size,
		.desc_version = bi->desc_version,
		.phys_bits = bi->phys_bits,
		.fake_set = fake_allowed,
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
 * Page-table pages: from the boot-time allocator until the page allocator is up, then
 * from the page allocator without acceptance, and from a small pool when nothing is
 * free: mapping a unit that is being accepted because memory ran out must not need
 * memory that only that unit could provide.
 */
static u64 pt_page_from_palloc(void)
{
	u64 pa = palloc_alloc_accepted(0);

	if (pa)
		memset((void *)(uintptr_t)pa, 0, PAGE_SIZE);
	return pa;
}

static u64 pt_alloc(void)
{
	u64 pa;

	if (!palloc_ready)
		return early_alloc_page();
	pa = pt_page_from_palloc();
	if (pa)
		return pa;
	return pt_pool_n ? pt_pool[--pt_pool_n] : 0;
}

static void pt_pool_top_up(void)
{
	spin_lock(&paging_lock);
	while (pt_pool_n < PT_POOL) {
		u64 pa = pt_page_from_palloc();

		if (!pa)
			break;
		pt_pool[pt_pool_n++] = pa;
	}
	spin_unlock(&paging_lock);
}

/*
 * Page tables map everything the kernel may touch and nothing it must not: unaccepted
 * units stay unmapped until they are accepted (a stray access faults, and is reported,
 * instead of reaching the host), and so do suspect ranges. Below 4 GiB, holes between
 * ranges are MMIO (local APIC, flash, PCI windows) and mapped shared.
 */
void memory_build_page_tables(u64 private_bits, bool use_1g)
{
	const struct memmap *m = &kernel_memmap;
	u64 gap = 0;
	/* Merge neighbouring ranges that get the same mapping, so large pages fit. */
	u64 run_start = 0, run_end = 0;
	int run_kind = -1;

	paging_init(pt_alloc, private_bits, use_1g);

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

static void record_edge(void *ctx, u64 start, u64 end)
{
	(void)ctx;
	if (nedges == ARRAY_SIZE(edges))
		panic("record_edge: more than %zu partial units", ARRAY_SIZE(edges));
	edges[nedges++] = (struct palloc_reserved){ start, end };
}

void memory_build_bitmap(void)
{
	struct bitmap_layout l = bitmap_layout(&kernel_memmap);
	u64 bytes = bitmap_storage_bytes(l);
	/* Storage from memory the firmware has accepted (early_alloc takes only usable RAM). */
	void *storage = bytes ? (void *)(uintptr_t)early_alloc(bytes, 8) : (void *)scratch;

	bitmap_build(&bitmap, &kernel_memmap, storage, record_edge, NULL);
	if (bitmap_recount(&bitmap) != bitmap_count(&bitmap))
		panic("memory_build_bitmap: %llu bits set, counter says %llu", bitmap_recount(&bitmap),
		      bitmap_count(&bitmap));
	bitmap_bytes = bytes;
	bitmap_unaccepted_at_build = bitmap_count(&bitmap) * UNIT_SIZE;
}

void memory_report_bitmap(void)
{
	u64 bytes = bitmap_bytes;

	kprintf("bitmap: %llu units of 2 MiB in %u segment(s), %llu bytes, %llu MiB unaccepted, "
		"%llu KiB in %u partial units (%llu KiB accepted by ready)\n", bitmap.units,
		bitmap.nsegs, bytes, bitmap_unaccepted_at_build >> 20, bitmap.edge_bytes >> 10, nedges,
		edge_bytes_at_ready >> 10);
	if (edges_at_boot)
		kprintf("bitmap: %llu partial units did not fit the allocator's table of %d; "
			"accepted at boot\n", edges_at_boot, PALLOC_MAX_EDGES);
	ev_begin("bitmap");
	ev_u64("base", bitmap.nsegs ? bitmap.segs[0].base : 0);
	ev_u64("units", bitmap.units);
	ev_u64("bytes", bytes);
	ev_u64("unaccepted_bytes", bitmap_unaccepted_at_build);
	/* Partial units: all of them, and what was accepted by `ready` (eager, a full table). */
	ev_u64("edge_bytes", bitmap.edge_bytes);
	ev_u64("edge_ranges", nedges);
	ev_u64("edge_accepted_bytes", edge_bytes_at_ready);
	ev_u64("segments", bitmap.nsegs);
	ev_arr_begin("segment_bases");
	for (unsigned i = 0; i < bitmap.nsegs; i++)
		ev_arr_u64(bitmap.segs[i].base);
	ev_arr_end();
	ev_arr_begin("segment_units");
	for (unsigned i = 0; i < bitmap.nsegs; i++)
		ev_arr_u64(bitmap.segs[i].units);
	ev_arr_end();
	ev_end();
}

/* palloc's accept: map the range (unaccepted memory is never mapped), then accept it. */
static int accept_backend(void *ctx, u64 start, u64 end)
{
	u64 t0 = tsc_now_ns();
	int rc;

	(void)ctx;
	spin_lock(&paging_lock);
	rc = paging_map(start, end, MAP_RAM);
	spin_unlock(&paging_lock);
	if (rc)
		fatal(EXIT_OUT_OF_MEMORY, "accept: no memory left for the page tables that map "
		      "[%llx, %llx)", start, end);
	atomic_add64(&map_ns_total, tsc_now_ns() - t0);
	/* A partial unit never has both ends on a unit boundary. */
	bool edge = !IS_ALIGNED(start, UNIT_SIZE) || !IS_ALIGNED(end, UNIT_SIZE);
	u64 before[MAX_PLATFORM_COUNTERS];
	unsigned nc = MIN(platform->ncounters, MAX_PLATFORM_COUNTERS);

	for (unsigned i = 0; edge && i < nc; i++)
		before[i] = platform->counters[i].count;
	/* The platform call runs with no lock held: other CPUs accept at the same time. */
	rc = platform->accept(start, end);
	for (unsigned i = 0; edge && i < nc; i++)
		atomic_add64(&edge_counters[i], platform->counters[i].count - before[i]);
	if (rc) {
		kprintf("accept: the platform refused [%llx, %llx) (%d); that memory stays unused\n",
			start, end, rc);
		spin_lock(&paging_lock);
		paging_unmap(start, end);
		spin_unlock(&paging_lock);
	}
	return rc;
}

static void *meta_alloc(u64 bytes)
{
	return (void *)(uintptr_t)early_alloc(bytes, 8);
}

static bool kernel_refill(unsigned order)
{
	bool ok = policy_refill(order);

	pt_pool_top_up();
	return ok;
}

static void eager_progress(u64 done, u64 total)
{
	kprintf("eager: accepted %llu of %llu MiB (%llu%%) at %llu ms\n", done >> 20, total >> 20,
		total ? done * 100 / total : 100, tsc_now_us() / 1000);
}

void memory_init_allocator(const struct boot_info *bi)
{
	static const struct palloc_env env = {
		.accept = accept_backend,
		.meta_alloc = meta_alloc,
		.now_ns = tsc_now_ns,
		.cpu_id = smp_this_cpu,
	};
	const struct early_reserved *er;
	struct palloc_reserved res[EARLY_MAX_RESERVED + 1];
	unsigned n;

	palloc_init(&kernel_memmap, &bitmap, &env, accept_samples, ARRAY_SIZE(accept_samples));
	for (unsigned i = 0; i < PT_POOL; i++)
		pt_pool[pt_pool_n++] = early_alloc_page();
	/* From here on early_alloc refuses: what it handed out is excluded below. */
	early_finish();
	n = early_reserved(&er);
	for (unsigned i = 0; i < n; i++)
		res[i] = (struct palloc_reserved){ er[i].start, er[i].end };
	/* The APs' start-up page: a late AP may still run through it. */
	if (bi->smp_trampoline)
		res[n++] = (struct palloc_reserved){ bi->smp_trampoline,
			bi->smp_trampoline + TRAMPOLINE_PAGES * PAGE_SIZE };
	/*
	 * Boot-services memory is free from here: the kernel runs on its own stack, GDT,
	 * IDT and page tables, and keeps nothing the firmware allocated.
	 */
	palloc_populate(&kernel_memmap, res, n);
	palloc_ready = true;

	/*
	 * Round inward: the partial units at range edges have no bit. They wait, unmapped,
	 * until the policy needs them (after every whole unit; eager takes them at once).
	 * Only what the allocator's table cannot hold is accepted now.
	 */
	for (unsigned i = 0; i < nedges; i++)
		if (!palloc_add_edge(edges[i].start, edges[i].end)) {
			palloc_accept_edge(edges[i].start, edges[i].end);
			edges_at_boot++;
		}

	policy_init(bi->config.policy, bi->config.accept_ahead);
	/* Eager acceptance is split across every started vCPU. */
	struct policy_cpus cpus = {
		.n = smp_cpus_started(), .slots = smp_cpu_slots(), .online = smp_cpu_online,
		.run_all = smp_run, .start_long = smp_start_long, .wait_long = smp_wait_long,
		.yield = smp_yield,
	};

	policy_set_cpus(&cpus);
	/* Only accept-ahead has work after an allocation: the others keep the fast path bare. */
	palloc_set_hooks(kernel_refill,
			 bi->config.policy == POLICY_AHEAD ? policy_after_alloc : NULL);
	/* Eager takes every unit in address order: the platform may batch ahead (SNP PSC). */
	bool ahead = bi->config.policy == POLICY_EAGER && platform->accept_ahead;

	if (ahead)
		platform->accept_ahead(memory_next_unaccepted);
	policy_boot(eager_progress);
	if (ahead)
		platform->accept_ahead(NULL);
	policy_boot_edges();
	edge_bytes_at_ready = palloc_stats()->edge_accepted_bytes;
}

void memory_report_allocator(void)
{
	kprintf("palloc: %llu MiB free, %llu MiB unaccepted in whole units, %llu KiB in partial "
		"units, %llu boot-time bytes reserved\n", palloc_stats()->free_bytes >> 20,
		palloc_stats()->unaccepted_bytes >> 20, palloc_stats()->edge_unaccepted_bytes >> 10,
		early_bytes());
}

void memory_start_background(u32 policy)
{
	if (policy != POLICY_BACKGROUND)
		return;
	if (!policy_background_start(tsc_now_ns))
		kprintf("background: no other vCPU to accept in the background; behaving as lazy\n");
	else
		kprintf("background: %u vCPU(s) accept the remaining %llu MiB\n",
			smp_cpus_started() - 1, palloc_unaccepted_bytes() >> 20);
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

void memory_rescale_time(u64 was, u64 now)
{
	struct palloc_stats *s = palloc_stats_mut();

	/* ns = cycles / hz: a time taken at `was` is ns_was * was / now in truth. */
	latency_rescale(&s->accept_lat, was, now);
	series_rescale_t(&s->accepted_over_time, was, now);
	map_ns_total = mul_div_u64(map_ns_total, was, now);
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
	ev_u64("accept_mib_s", l->total_ns ? s->accepted_bytes * 1000000000ULL / l->total_ns >> 20 : 0);
	ev_bool("accept_percentiles_exact", latency_exact(l));
	ev_u64("map_ns_total", map_ns_total);
	/* What keeping unaccepted memory unmapped costs: mapping time per accept call. */
	ev_u64("map_ns_per_accept", s->accept_calls ? map_ns_total / s->accept_calls : 0);
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
	/*
	 * Calls per GiB accepted in whole units, the figure to compare across policies
	 * (rounded; the partial units, accepted page by page, are left out of both sides).
	 */
	u64 unit_bytes = s->accepted_bytes - s->edge_accepted_bytes;

	ev_obj_begin("platform_calls_per_gib");
	for (unsigned i = 0; i < platform->ncounters && i < MAX_PLATFORM_COUNTERS && unit_bytes; i++)
		ev_u64(platform->counters[i].name,
		       ((platform->counters[i].count - edge_counters[i]) * GiB + unit_bytes / 2) /
			       unit_bytes);
	ev_obj_end();
	/* The same per TiB (1024 GiB): three more digits for figures like 2.02 exits per GiB. */
	ev_obj_begin("platform_calls_per_tib");
	for (unsigned i = 0; i < platform->ncounters && i < MAX_PLATFORM_COUNTERS && unit_bytes; i++)
		ev_u64(platform->counters[i].name,
		       ((platform->counters[i].count - edge_counters[i]) * (1ULL << 20) +
			(unit_bytes >> 21)) / (unit_bytes >> 20));
	ev_obj_end();
#ifdef CONFIG_EMULATOR
	emu_report();
#endif
	ev_end();
}

bool memory_in_unaccepted_span(u64 addr)
{
	return bitmap_covers(&bitmap, addr) || palloc_edge_unaccepted(addr);
}

bool memory_next_unaccepted(u64 from, u64 *unit)
{
	return bitmap_next(&bitmap, from, unit);
}

__noreturn void memory_report_unaccepted_access(const struct trap_frame *f, u64 addr,
						const char *source)
{
	u64 unit = ALIGN_DOWN(addr, UNIT_SIZE), bt[8];
	unsigned nbt = backtrace(f->rbp, bt, ARRAY_SIZE(bt));
	/* Still unaccepted, or accepted and then lost because the platform refused it. */
	const char *state = bitmap_test(&bitmap, addr) ? "unaccepted"
			  : palloc_edge_unaccepted(addr) ? "unaccepted partial unit"
			  : paging_lookup(addr) ? "accepted" : "not mapped (lost or not RAM)";

	kprintf("\n*** access to unaccepted memory at %016llx (2 MiB unit %016llx, %s), caught by %s\n",
		addr, unit, state, source);
	kprintf("  RIP %016llx (image base %016llx), backtrace:", f->rip, kernel_image_base());
	for (unsigned i = 0; i < nbt; i++)
		kprintf(" %016llx", bt[i]);
	kprintf("\n");
	trap_dump(f);
	ev_begin("unaccepted_access");
	ev_u64("addr", addr);
	ev_u64("unit", unit);
	ev_str("state", state);
	ev_str("source", source);
	ev_u64("rip", f->rip);
	ev_u64("image_base", kernel_image_base());
	ev_u64_array("backtrace", bt, nbt);
	ev_end();
	kernel_exit_reason(EXIT_UNACCEPTED_ACCESS, FC_UNACCEPTED_ACCESS);
}

#define PF_PRESENT (1ULL << 0)	/* error code bit 0: 0 = the page was not present */

/*
 * Unaccepted units are never mapped (memory_build_page_tables leaves them out; the
 * accept path maps a unit just before accepting it), so any touch of one is a
 * not-present page fault here, on every platform, before the access can reach the
 * host: TDX would kill the guest silently, SNP would raise a #VC it cannot handle.
 */
static bool pf_handler(struct trap_frame *f)
{
	u64 addr = read_cr2();

	if (f->error_code & PF_PRESENT || !memory_in_unaccepted_span(addr))
		return false;	/* a plain bug: the generic exception report says so */
	memory_report_unaccepted_access(f, addr, "page fault");
}

void memory_trap_init(void)
{
	trap_register(VEC_PF, pf_handler);
}
