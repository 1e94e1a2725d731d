/* SPDX-License-Identifier: MIT */
/* memaccept: TSC sampling, the EFI Stall() calibration, and conversion to nanoseconds. */
#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "lib/sort.h"

/*
 * The fallback when neither the platform nor the PM timer gives the frequency
 * (boot/clock_efi.c runs it outside the measured window). Five 2 ms stalls, and the fastest one counts. A stall is timed by the firmware's
 * timer, so its length is right; the TSC can only see too many cycles, when the vCPU is
 * descheduled between a TSC read and the start or end of the stall (measured under QEMU:
 * outliers were always high, up to +22%, the rest within 0.5%). The spread of the three
 * fastest runs is reported as the calibration error.
 */
#define CAL_RUNS 5
#define CAL_STALL_US 2000

static u64 hz = 1000000000ULL;	/* a guess until calibrated: at least keeps numbers sane */
static u64 origin;

void tsc_calibrate(void (*stall)(void *ctx, u32 us), void *ctx, struct tsc_calibration *out)
{
	u64 v[CAL_RUNS];

	for (int i = 0; i < CAL_RUNS; i++) {
		u64 t0 = rdtsc_ordered();

		stall(ctx, CAL_STALL_US);
		v[i] = (rdtsc_ordered() - t0) * (1000000ULL / CAL_STALL_US);
	}
	sort_u64(v, CAL_RUNS);
	/* The fastest run is the least disturbed; the spread is its distance to the median. */
	out->hz = v[0];
	out->spread_ppm = out->hz ? (v[2] - v[0]) * 1000000ULL / out->hz : 0;
	out->runs = CAL_RUNS;
	out->stall_us = CAL_STALL_US;
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
