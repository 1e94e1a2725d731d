/* SPDX-License-Identifier: MIT */
/* memaccept: time from the TSC, calibrated against the firmware's Stall() before ExitBootServices. */
#ifndef ARCH_X86_TSC_H
#define ARCH_X86_TSC_H

#include "include/types.h"

struct tsc_calibration {
	u64 hz;			/* from the fastest run (see tsc.c) */
	u64 spread_ppm;		/* spread of the three fastest runs, parts per million */
	u64 cpuid_hz;		/* CPUID 0x15 crystal * ratio, 0 when not enumerated */
	u32 runs;
	u32 stall_us;		/* length of each run */
};

/* stall(ctx, us) busy-waits `us` microseconds (EFI BS->Stall in boot/). */
void tsc_calibrate(void (*stall)(void *ctx, u32 us), void *ctx, struct tsc_calibration *out);

/* After this, the conversions below work; `origin` is the TSC that counts as time 0. */
void tsc_set(u64 hz, u64 origin);
u64 tsc_hz(void);
u64 tsc_cycles_to_ns(u64 cycles);
u64 tsc_now_ns(void);		/* since origin */
u64 tsc_now_us(void);

#endif
