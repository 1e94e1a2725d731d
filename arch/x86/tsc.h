/* SPDX-License-Identifier: MIT */
/* memaccept: time from the TSC: conversions, and the samples and Stall() runs it is calibrated from. */
#ifndef ARCH_X86_TSC_H
#define ARCH_X86_TSC_H

#include "arch/x86/tsc_cal.h"
#include "include/types.h"

struct tsc_calibration {
	u64 hz;			/* from the difference of two stall lengths (see tsc.c) */
	u64 spread_ppm;		/* spread of the fastest runs, parts per million */
	u32 runs;
	u32 stall_us;		/* the difference between the two lengths */
};

/* stall(ctx, us) busy-waits `us` microseconds (EFI BS->Stall in boot/). */
void tsc_calibrate(void (*stall)(void *ctx, u32 us), void *ctx, struct tsc_calibration *out);

/*
 * One PM timer sample: the port read `tries` times, each between two TSC reads; the
 * read with the narrowest bracket counts (a vCPU descheduled mid-read only widens one).
 */
void tsc_pm_sample(u32 (*read_pm)(u16 port), u16 port, unsigned tries, struct pm_sample *out);

/* After this, the conversions below work; `origin` is the TSC that counts as time 0. */
void tsc_set(u64 hz, u64 origin);
u64 tsc_hz(void);
u64 tsc_origin(void);
u64 tsc_cycles_to_ns(u64 cycles);
u64 tsc_now_ns(void);		/* since origin */
u64 tsc_now_us(void);

#endif
