/* SPDX-License-Identifier: MIT */
/* memaccept: TSC sampling, the EFI Stall() calibration, and conversion to nanoseconds. */
#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "lib/sort.h"

/*
 * The fallback when neither the platform nor the PM timer gives the frequency
 * (boot/clock_efi.c runs it outside the measured window). Stall() waits *at least* the
 * time asked (UEFI 2.9 section 7.5, Stall), and every call adds a fixed overhead: under
 * QEMU a 2 ms stall measured 0.28% long against the PM timer. So stalls of two lengths
 * are timed and only the difference counts, which cancels the fixed part. Each length
 * runs CAL_RUNS times and its fastest run counts: the TSC can only see too many cycles
 * (a vCPU descheduled around a stall; outliers under QEMU were always high). The error
 * is the spread between the two fastest runs of each length.
 */
#define CAL_RUNS 5
#define CAL_SHORT_US 1000
#define CAL_LONG_US 4000

static u64 hz = 1000000000ULL;	/* a guess until calibrated: at least keeps numbers sane */
static u64 origin;

/* The two fastest of CAL_RUNS stalls of `us`, in TSC cycles (v[0] <= v[1]). */
static void time_stalls(void (*stall)(void *ctx, u32 us), void *ctx, u32 us, u64 v[CAL_RUNS])
{
	for (int i = 0; i < CAL_RUNS; i++) {
		u64 t0 = rdtsc_ordered();

		stall(ctx, us);
		v[i] = rdtsc_ordered() - t0;
	}
	sort_u64(v, CAL_RUNS);
}

void tsc_calibrate(void (*stall)(void *ctx, u32 us), void *ctx, struct tsc_calibration *out)
{
	u64 s[CAL_RUNS], l[CAL_RUNS], d;

	time_stalls(stall, ctx, CAL_SHORT_US, s);
	time_stalls(stall, ctx, CAL_LONG_US, l);
	d = l[0] > s[0] ? l[0] - s[0] : 0;
	out->hz = d * (1000000ULL / (CAL_LONG_US - CAL_SHORT_US));
	out->spread_ppm = d ? (s[1] - s[0] + l[1] - l[0]) * 1000000ULL / d : UINT32_MAX;
	out->runs = 2 * CAL_RUNS;
	out->stall_us = CAL_LONG_US - CAL_SHORT_US;
}

void tsc_pm_sample(u32 (*read_pm)(u16 port), u16 port, unsigned tries, struct pm_sample *out)
{
	out->window = UINT64_MAX;
	for (unsigned i = 0; i < tries; i++) {
		u64 t0 = rdtsc_ordered();
		u32 pm = read_pm(port);
		u64 t1 = rdtsc_ordered();

		if (t1 - t0 < out->window) {
			out->window = t1 - t0;
			out->tsc = t0 + (t1 - t0) / 2;
			out->pm = pm;
		}
	}
}

void tsc_set(u64 new_hz, u64 new_origin)
{
	if (new_hz)
		hz = new_hz;
	origin = new_origin;
}

u64 tsc_hz(void)
{
	return hz;
}

u64 tsc_origin(void)
{
	return origin;
}

u64 tsc_cycles_to_ns(u64 cycles)
{
	/* Split to avoid overflow: exact for the whole part, rounded for the rest. */
	return cycles / hz * 1000000000ULL + (cycles % hz) * 1000000000ULL / hz;
}

u64 tsc_now_ns(void)
{
	return tsc_cycles_to_ns(rdtsc_ordered() - origin);
}

u64 tsc_now_us(void)
{
	return tsc_now_ns() / 1000;
}
