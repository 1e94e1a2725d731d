/* SPDX-License-Identifier: MIT */
/* memaccept: the kernel's side of the clock: a provisional frequency in the window, the final one after `ready`. */
#ifndef KERNEL_CLOCK_H
#define KERNEL_CLOCK_H

#include "include/boot_info.h"

/* After platform_set (port I/O works): the frequency to use until clock_finish. */
void clock_kernel_start(const struct boot_info *bi);
/*
 * After `ready`'s TSC was taken: the PM timer's second sample (waiting, outside the
 * window, until the span is long enough), the final frequency, and the times recorded
 * with the provisional one corrected. With a declared frequency: the PM timer
 * cross-check. Then the `timing` event.
 */
void clock_finish(const struct boot_info *bi);

#endif
