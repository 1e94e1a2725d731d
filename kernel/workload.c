/* SPDX-License-Identifier: MIT */
/* memaccept: the workloads and their `workload` events. */
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "kernel/cmdline.h"
#include "kernel/panic.h"
#include "kernel/report.h"
#include "kernel/workload.h"
#include "lib/format.h"
#include "lib/string.h"
#include "mm/page_alloc.h"

#define ALLOC_SAMPLES (128 * 1024)
/*
 * touch:auto touches 90% of the free memory plus this much (or all unaccepted memory,
 * if less): enough to show acceptance latencies, and never more than the guest has
 * (splitting units costs a page each for metadata, so "all free memory" would not fit).
 */
#define AUTO_EXTRA (512 * MiB)

static u32 fast_samples[ALLOC_SAMPLES], slow_samples[ALLOC_SAMPLES];

bool workload_parse(const char *s, struct workload_spec *w, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	if (strcmp(s, "none") == 0) {
		w->kind = WL_NONE;
		return true;
	}
	if (str_starts(s, "touch:")) {
		const char *arg = s + 6;

		w->kind = WL_TOUCH;
		if (strcmp(arg, "auto") == 0) {
			w->size_auto = true;
			return true;
		}
		if (parse_size(arg, strlen(arg), &w->size) && w->size)
			return true;
		format_buf(err, errlen, "workload=%s: touch needs a size like 512M, or auto", s);
		return false;
	}
	format_buf(err, errlen, "workload=%s is not none or touch:SIZE", s);
	return false;
}

/* Allocation latencies, split by whether the allocation had to accept memory. */
struct alloc_timing {
	struct latency fast, slow;
};

static void timing_init(struct alloc_timing *t)
{
	latency_init(&t->fast, fast_samples, ALLOC_SAMPLES);
	latency_init(&t->slow, slow_samples, ALLOC_SAMPLES);
}

static void ev_latency(const char *key, struct latency *l)
{
	ev_obj_begin(key);
	ev_u64("count", l->count);
	ev_u64("total_ns", l->total_ns);
	ev_u64("p50_ns", latency_percentile(l, 500));
	ev_u64("p90_ns", latency_percentile(l, 900));
	ev_u64("p99_ns", latency_percentile(l, 990));
	ev_u64("p999_ns", latency_percentile(l, 999));
	ev_u64("max_ns", l->max_ns);
	ev_bool("exact", latency_exact(l));
	ev_obj_end();
}

static int touch(const struct workload_spec *w)
{
	const struct palloc_stats *st = palloc_stats();
	u64 size = w->size;
	struct alloc_timing t;

	if (w->size_auto)
		size = st->free_bytes / 10 * 9 + MIN(AUTO_EXTRA, st->unaccepted_bytes);
	size = ALIGN_UP(size, PAGE_SIZE);

	u64 free_before = st->free_bytes, accepted_before = st->accepted_bytes;
	u64 calls_before = st->accept_calls, meta_before = st->meta_bytes;
	u64 allocs_before = st->allocs;
	u64 pages = size >> PAGE_SHIFT, done = 0, t0 = tsc_now_ns();
	int code = EXIT_OK;

	timing_init(&t);
	kprintf("workload: touch %llu MiB in 4 KiB pages (%llu MiB free, %llu MiB unaccepted)\n",
		size >> 20, free_before >> 20, st->unaccepted_bytes >> 20);
	for (; done < pages; done++) {
		u64 calls = st->accept_calls, a = tsc_now_ns();
		u64 pa = palloc_alloc(0);
		u64 ns = tsc_now_ns() - a;

		if (!pa) {
			code = EXIT_OUT_OF_MEMORY;
			break;
		}
		latency_add(st->accept_calls != calls ? &t.slow : &t.fast, ns);
		/* Write the whole page: accepted memory gets used, as a real workload would. */
		memset((void *)(uintptr_t)pa, 0x5a, PAGE_SIZE);
	}
	u64 us = (tsc_now_ns() - t0) / 1000;

	if (code == EXIT_OUT_OF_MEMORY)
		kprintf("workload: out of memory after %llu of %llu pages (%llu MiB): nothing left to "
			"accept\n", done, pages, (done << PAGE_SHIFT) >> 20);
	kprintf("workload: touched %llu MiB in %llu us, accepted %llu MiB on the way\n",
		(done << PAGE_SHIFT) >> 20, us, (st->accepted_bytes - accepted_before) >> 20);
	ev_begin("workload");
	ev_str("name", "touch");
	ev_str("result", code == EXIT_OK ? "ok" : "out_of_memory");
	ev_u64("bytes", size);
	ev_u64("done_bytes", done << PAGE_SHIFT);
	ev_u64("us", us);
	ev_u64("free_before", free_before);
	ev_u64("accepted_bytes", st->accepted_bytes - accepted_before);
	ev_u64("accept_calls", st->accept_calls - calls_before);
	ev_u64("meta_bytes_added", st->meta_bytes - meta_before);
	/* Pages the kernel took for itself meanwhile (page tables for newly accepted memory). */
	ev_u64("kernel_pages_added", st->allocs - allocs_before - done);
	ev_u64("free_after", st->free_bytes);
	ev_latency("alloc_fast", &t.fast);
	ev_latency("alloc_accepting", &t.slow);
	ev_end();
	return code;
}

int workload_run(const struct workload_spec *w)
{
	switch (w->kind) {
	case WL_NONE:
		return EXIT_OK;
	case WL_TOUCH:
		return touch(w);
	default:
		panic("workload_run: unknown workload kind %u", w->kind);
	}
}
