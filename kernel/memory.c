/* SPDX-License-Identifier: MIT */
/* memaccept: the kernel's memory bring-up steps, in the order kernel_main runs them (their reports: memory_report.c). */
#include "arch/x86/cpu.h"
#include "arch/x86/desc.h"
#include "arch/x86/observer.h"
#include "arch/x86/paging.h"
#include "arch/x86/platform.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "include/panic.h"
#include "kernel/main.h"
#include "kernel/memory.h"
#include "kernel/memory_facts.h"
#include "kernel/smp.h"
#include "lib/muldiv.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "mm/bitmap.h"
#include "mm/early.h"
#include "mm/accept.h"
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
/*
 * Page-table pages one accept may need (the allocator keeps this many per CPU, env.pt_reserve):
 * an accept maps one run inside one 1 GiB region (mm/accept.c, MAX_RUN) or a partial
 * unit, so at most a page-directory-pointer page (a new 512 GiB region), a
 * page-directory page (a new 1 GiB region) and a page table (4 KiB pages: a partial unit).
 */
#define PT_PER_ACCEPT 3

struct memmap kernel_memmap;
static struct mem_range ranges[MAX_RANGES];
static u64 scratch[(MAX_DESC * 64 + 64) / sizeof(u64) + 1];
static struct unaccepted_bitmap bitmap;
static struct palloc_reserved edges[2 * MAX_DESC];
static unsigned nedges;
static u32 accept_samples[ACCEPT_SAMPLES];
static bool palloc_ready;
/*
 * The page tables are shared by every CPU: one lock for changing them.
 * Taken inside no other lock; pt_alloc takes the allocator's lock inside it.
 */
static struct spinlock paging_lock;
struct memory_facts memory_facts;
/*
 * workload=probe: on probe_cpu, whole units are accepted by probe_fn instead of the
 * platform's accept (everything else of the accept path stays: the allocator's claim
 * and counts, the mapping). map_ns_last: each CPU's last mapping time.
 */
static int (*probe_fn)(void *ctx, u64 start, u64 end);
static void *probe_ctx;
static unsigned probe_cpu;
static u64 map_ns_last[MAX_CPUS];

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
	if (memmap_hold(&kernel_memmap, platform->firmware_hold_start, platform->firmware_hold_end))
		kprintf("memory: [%#llx, %#llx) is usable in the map, but %s: kept out of use\n",
			platform->firmware_hold_start, platform->firmware_hold_end, platform->firmware_hold_why);
}

/*
 * Page-table pages: from the boot-time allocator until the page allocator is up, then
 * from the page allocator: inside an accept from the accepting CPU's own reserve
 * (palloc_pt_page), so that mapping a unit that is being accepted because memory ran
 * out never needs memory that only that unit could provide, however many CPUs accept
 * at once; elsewhere from free memory without acceptance.
 */
static u64 pt_alloc(void)
{
	u64 pa;

	if (!palloc_ready)
		return early_alloc_page();
	pa = palloc_pt_page();
	if (pa)
		memset((void *)(uintptr_t)pa, 0, PAGE_SIZE);
	return pa;
}

/*
 * Page tables map everything the kernel may touch and nothing it must not: unaccepted
 * units stay unmapped until they are accepted (a stray access faults, and is reported,
 * instead of reaching the host), and so do suspect ranges. Below 4 GiB, holes between
 * ranges are MMIO (local APIC, flash, PCI windows) and mapped shared, as are ranges
 * the map calls MMIO. Reserved ranges are private, like RAM: on SNP the firmware's
 * reserved pages (the secrets and CPUID pages, its own work areas) are guest memory
 * the launch or the firmware validated, and a shared access to one makes KVM convert
 * it and lose its contents. Linux maps them encrypted too (arch/x86/mm/ioremap.c,
 * memremap_should_map_decrypted: "For SEV, these areas are encrypted").
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
		ADD(s, m->ranges[i].end, kind == RANGE_MMIO ? MAP_SHARED : MAP_RAM);
	}
	FLUSH();
#undef ADD
#undef FLUSH

	/* Page 0 stays unmapped so that a NULL dereference faults. */
	if (paging_unmap(0, PAGE_SIZE))
		fatal(EXIT_OUT_OF_MEMORY, "paging: out of memory for page tables");
	paging_activate();
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
	/*
	 * Storage from memory the firmware has accepted (early_alloc takes only usable RAM),
	 * not zeroed: the bitmap writes its words only when it first clears a bit of theirs.
	 */
	void *storage = bytes ? (void *)(uintptr_t)early_reserve_uninit(bytes, 8) : (void *)scratch;

	bitmap_build(&bitmap, &kernel_memmap, storage, record_edge, NULL);
	memory_facts.bitmap = &bitmap;
	memory_facts.edges = nedges;
	memory_facts.bitmap_bytes = bytes;
	memory_facts.unaccepted_at_build = bitmap_count(&bitmap) * UNIT_SIZE;
}

/* palloc's accept: map the range (unaccepted memory is never mapped), then accept it. */
static int accept_backend(void *ctx, u64 start, u64 end)
{
	/* For the instruction observer: mm/accept.c marks the whole accept, this the platform call. */
	u64 t0 = tsc_now_ns();
	int rc;

	(void)ctx;
	spin_lock(&paging_lock);
	rc = paging_map(start, end, MAP_RAM);
	spin_unlock(&paging_lock);
	if (rc)
		fatal(EXIT_OUT_OF_MEMORY, "accept: no memory left for the page tables that map "
		      "[%llx, %llx)", start, end);
	map_ns_last[smp_this_cpu()] = tsc_now_ns() - t0;
	atomic_add64(&memory_facts.map_ns_total, map_ns_last[smp_this_cpu()]);
	/*
	 * A partial unit never has both ends on a unit boundary. Its platform calls are
	 * this CPU's own (platform_record): other CPUs accept at the same time, with no lock
	 * held, and their calls must not count as the partial unit's.
	 */
	bool edge = !IS_ALIGNED(start, UNIT_SIZE) || !IS_ALIGNED(end, UNIT_SIZE);
	u64 mine[MAX_PLATFORM_COUNTERS] = { 0 };
	unsigned nc = MIN(platform->ncounters, MAX_PLATFORM_COUNTERS);

	if (edge)
		platform_record(mine, nc);
	OBS_MARK(OBS_KIND_ACCEPT, OBS_ACCEPT_PLATFORM);
	if (probe_fn && !edge && end - start == UNIT_SIZE && smp_this_cpu() == probe_cpu)
		rc = probe_fn(probe_ctx, start, end);
	else
		rc = platform->accept(start, end);
	OBS_MARK(OBS_KIND_ACCEPT, OBS_ACCEPT_PLATFORM_DONE);
	if (edge)
		platform_record(NULL, 0);
	for (unsigned i = 0; edge && i < nc; i++)
		atomic_add64(&memory_facts.edge_counters[i], mine[i]);
	if (rc) {
		/*
		 * The allocator marks the range lost: it is never handed out. Unmapped too
		 * while this CPU is alone; once others run it stays mapped, as unmapping
		 * would leave their TLBs stale (paging_unmap refuses), and nothing uses it.
		 */
		bool alone = !paging_is_shared();

		kprintf("accept: the platform refused [%llx, %llx) (%d); that memory stays unused%s\n",
			start, end, rc, alone ? "" : " (still mapped: other CPUs run)");
		if (alone) {
			spin_lock(&paging_lock);
			paging_unmap(start, end);
			spin_unlock(&paging_lock);
		}
	}
	return rc;
}

void memory_set_probe_accept(int (*fn)(void *ctx, u64 start, u64 end), void *ctx)
{
	probe_ctx = ctx;
	probe_cpu = smp_this_cpu();
	__atomic_store_n(&probe_fn, fn, __ATOMIC_RELEASE);
}

u64 memory_last_map_ns(void)
{
	return map_ns_last[smp_this_cpu()];
}

static void *meta_alloc(u64 bytes)
{
	return (void *)(uintptr_t)early_alloc(bytes, 8);
}

/* Not zeroed: a page of it the allocator never initialises is never touched. */
static void *meta_alloc_uninit(u64 bytes)
{
	return (void *)(uintptr_t)early_reserve_uninit(bytes, 8);
}

static void eager_progress(u64 done, u64 total)
{
	kprintf("eager: accepted %llu of %llu MiB (%llu%%) at %llu ms\n", done >> 20, total >> 20,
		total ? done * 100 / total : 100, tsc_now_us() / 1000);
}

void memory_init_allocator(const struct boot_info *bi)
{
	const struct palloc_env env = {
		.accept = accept_backend,
		.meta_alloc = meta_alloc,
		.meta_alloc_uninit = meta_alloc_uninit,
		.now_ns = tsc_now_ns,
		.cpu_id = smp_this_cpu,
		/* smp_init ran: the CPU slots are known (a slot that never started costs 2 KiB). */
		.ncpus = smp_cpu_slots(),
		.cpu_cache_high = PALLOC_CPU_CACHE_MAX,
		.pt_reserve = PT_PER_ACCEPT,
	};
	const struct early_reserved *er;
	struct palloc_reserved res[EARLY_MAX_RESERVED + 1];
	unsigned n;

	palloc_init(&kernel_memmap, &bitmap, &env, accept_samples, ARRAY_SIZE(accept_samples));
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
			memory_facts.edges_at_boot++;
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
	palloc_set_hooks(policy_refill,
			 bi->config.policy == POLICY_AHEAD ? policy_after_alloc : NULL);
	/* Eager takes every unit in address order: the platform may batch ahead (SNP PSC). */
	bool ahead = bi->config.policy == POLICY_EAGER && platform->accept_ahead;

	if (ahead)
		platform->accept_ahead(memory_next_unaccepted);
	policy_boot(eager_progress);
	if (ahead)
		platform->accept_ahead(NULL);
	policy_boot_edges();
	memory_facts.edge_bytes_at_ready = palloc_stats()->edge_accepted_bytes;
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

void memory_rescale_time(u64 was, u64 now)
{
	struct palloc_stats *s = palloc_stats_mut();

	/* ns = cycles / hz: a time taken at `was` is ns_was * was / now in truth. */
	latency_rescale(&s->accept_lat, was, now);
	series_rescale_t(&s->accepted_over_time, was, now);
	memory_facts.map_ns_total = mul_div_u64(memory_facts.map_ns_total, was, now);
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
