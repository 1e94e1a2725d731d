/* SPDX-License-Identifier: MIT */
/* memaccept: TSC calibration and conversion to nanoseconds. */
#include "arch/x86/cpu.h"
#include "arch/x86/tsc.h"
#include "lib/sort.h"

/*
 * Five 2 ms stalls, and the fastest one counts. A stall is timed by the firmware's
 * timer, so its length is right; the TSC can only see too many cycles, when the vCPU is
 * descheduled between a TSC read and the start or end of the stall (measured under QEMU:
 * outliers were always high, up to +22%, the rest within 0.5%). The spread of the three
 * fastest runs is reported as the calibration error.
 */
#define CAL_RUNS 5
#define CAL_STALL_US 2000

static u64 hz = 1000000000ULL;	/* a guess until calibrated: at least keeps numbers sane */
static u64 origin;

static u64 cpuid_tsc_hz(void)
{
	struct cpuid_regs r;

	/* CPUID 0x15: TSC/crystal ratio EBX/EAX and the crystal in ECX (Intel SDM vol. 2A). */
	cpu_cpuid(0, 0, &r);
	if (r.eax < 0x15)
		return 0;
	cpu_cpuid(0x15, 0, &r);
	if (!r.eax || !r.ebx || !r.ecx)
		return 0;
	return (u64)r.ecx * r.ebx / r.eax;
}

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
	out->cpuid_hz = cpuid_tsc_hz();
	out->runs = CAL_RUNS;
	out->stall_us = CAL_STALL_US;
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
