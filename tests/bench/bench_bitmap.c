/* SPDX-License-Identifier: MIT */
/* memaccept: host benchmark: bitmap_any/bitmap_next (word at a time) against bitmap_test per unit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "include/panic.h"
#include "mm/bitmap.h"
#include "tests/bench/bench_host.h"

/*
 * Two questions the allocator asks, over a whole span:
 *   any:  "is anything in [start, end) unaccepted?" The only unaccepted unit is the last
 *         one, so neither implementation can stop early: the whole span is scanned.
 *   next: "list every unaccepted unit", with one unit per GiB still unaccepted (a guest
 *         that has accepted almost everything).
 * Each is timed word at a time (bitmap_any, bitmap_next) and bit at a time (bitmap_test
 * on every unit, the obvious loop). Both run in the same process, on the same bitmap,
 * interleaved sample by sample, and must return the same answer.
 */

#define SAMPLES 11
#define MIN_SAMPLE_NS 20000000ULL	/* 20 ms: well above clock and scheduler noise */
#define SPARSE_EVERY (GiB / UNIT_SIZE)	/* one unaccepted unit per GiB */
#define BASE (4 * GiB)

/* Results feed this, so the compiler must keep every call. */
static volatile u64 sink;

static struct unaccepted_bitmap bm;
static void *storage;
static u64 span_start, span_end;

/* One unaccepted range over the span, every unit set; then `keep` decides what stays set. */
static void build(u64 span, bool (*keep)(u64 unit_index, u64 units))
{
	static struct mem_range r[2];
	struct memmap m = { .ranges = r, .nranges = 2, .cap = 2 };
	struct bitmap_layout l;
	u64 units = span / UNIT_SIZE;

	r[0] = (struct mem_range){ 0, BASE, RANGE_USABLE, EFI_CONVENTIONAL_MEMORY };
	r[1] = (struct mem_range){ BASE, BASE + span, RANGE_UNACCEPTED, EFI_UNACCEPTED_MEMORY };
	l = bitmap_layout(&m);
	free(storage);
	storage = malloc(bitmap_storage_bytes(l));
	if (!storage)
		panic("bench: out of memory");
	bitmap_build(&bm, &m, storage, NULL, NULL);
	for (u64 i = 0; i < units; i++)
		if (!keep(i, units))
			bitmap_clear(&bm, BASE + i * UNIT_SIZE);
	span_start = BASE;
	span_end = BASE + span;
}

static bool keep_last(u64 i, u64 units)
{
	return i == units - 1;
}

static bool keep_sparse(u64 i, u64 units)
{
	return i % SPARSE_EVERY == SPARSE_EVERY / 2;
}

/* Each operation returns a checksum of what it found; fast and naive must agree. */
static u64 any_word(void)
{
	return bitmap_any(&bm, span_start, span_end);
}

static u64 any_naive(void)
{
	for (u64 a = span_start; a < span_end; a += UNIT_SIZE)
		if (bitmap_test(&bm, a))
			return 1;
	return 0;
}

static u64 next_word(void)
{
	u64 sum = 0, unit, from = span_start;

	while (bitmap_next(&bm, from, &unit) && unit < span_end) {
		sum += unit;
		from = unit + UNIT_SIZE;
	}
	return sum;
}

static u64 next_naive(void)
{
	u64 sum = 0;

	for (u64 a = span_start; a < span_end; a += UNIT_SIZE)
		if (bitmap_test(&bm, a))
			sum += a;
	return sum;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct result {
	double ns;	/* median ns per call */
	u64 reps;	/* calls per sample */
	u64 check;
};

/* Calls per sample so that one sample lasts at least MIN_SAMPLE_NS. */
static u64 calibrate(u64 (*op)(void))
{
	for (u64 reps = 1;; reps *= 2) {
		u64 t0 = now_ns();

		for (u64 i = 0; i < reps; i++)
			sink += op();
		if (now_ns() - t0 >= MIN_SAMPLE_NS || reps >= (1ULL << 40))
			return reps;
	}
}

/* Interleave the two methods' samples so drift (frequency, other load) hits both alike. */
static void measure(u64 (*fast)(void), u64 (*naive)(void), struct result *rf, struct result *rn)
{
	double sf[SAMPLES], sn[SAMPLES];

	rf->check = fast();
	rn->check = naive();
	if (rf->check != rn->check)
		panic("bench: word-at-a-time and naive disagree: %llx != %llx", rf->check, rn->check);
	rf->reps = calibrate(fast);
	rn->reps = calibrate(naive);
	for (int s = 0; s < SAMPLES; s++) {
		u64 t0 = now_ns();

		for (u64 i = 0; i < rf->reps; i++)
			sink += fast();
		u64 t1 = now_ns();

		for (u64 i = 0; i < rn->reps; i++)
			sink += naive();
		u64 t2 = now_ns();

		sf[s] = (double)(t1 - t0) / (double)rf->reps;
		sn[s] = (double)(t2 - t1) / (double)rn->reps;
	}
	qsort(sf, SAMPLES, sizeof(double), cmp_double);
	qsort(sn, SAMPLES, sizeof(double), cmp_double);
	rf->ns = sf[SAMPLES / 2];
	rn->ns = sn[SAMPLES / 2];
}

int main(void)
{
	static const u64 spans[] = { 256 * GiB, 4 * TiB };
	static const struct {
		const char *name;
		bool (*keep)(u64, u64);
		u64 (*fast)(void), (*naive)(void);
	} ops[] = {
		{ "bitmap_any", keep_last, any_word, any_naive },
		{ "bitmap_next", keep_sparse, next_word, next_naive },
	};
	char json[2 * ARRAY_SIZE(spans) * ARRAY_SIZE(ops)][512];
	unsigned nj = 0;

	printf("bitmap queries over a whole span, median of %d samples (ns per GiB of span)\n", SAMPLES);
	printf("%-12s %8s %10s %16s %16s %9s\n", "op", "span", "set units", "word at a time",
	       "bit at a time", "ratio");
	for (unsigned s = 0; s < ARRAY_SIZE(spans); s++) {
		for (unsigned o = 0; o < ARRAY_SIZE(ops); o++) {
			struct result f, n;
			double gib = (double)spans[s] / (double)GiB;

			build(spans[s], ops[o].keep);
			measure(ops[o].fast, ops[o].naive, &f, &n);
			printf("%-12s %4llu GiB %10llu %16.1f %16.1f %8.1fx\n", ops[o].name,
			       spans[s] / GiB, bitmap_count(&bm), f.ns / gib, n.ns / gib, n.ns / f.ns);
			snprintf(json[nj++], sizeof(json[0]),
				 "{\"bench\": \"%s\", \"span_bytes\": %llu, \"units\": %llu, "
				 "\"set_units\": %llu, \"samples\": %d, \"word_ns_per_gib\": %.2f, "
				 "\"naive_ns_per_gib\": %.2f, \"word_ns_per_call\": %.1f, "
				 "\"naive_ns_per_call\": %.1f, \"word_reps\": %llu, \"naive_reps\": %llu, "
				 "\"ratio\": %.1f}",
				 ops[o].name, spans[s], bm.units, bitmap_count(&bm), SAMPLES, f.ns / gib,
				 n.ns / gib, f.ns, n.ns, f.reps, n.reps, n.ns / f.ns);
		}
	}
	for (unsigned i = 0; i < nj; i++)
		printf("%s\n", json[i]);
	free(storage);
	return 0;
}
