/* SPDX-License-Identifier: MIT */
/* memaccept: acceptance policies: lazy, eager, accept-ahead. */
#ifndef MM_POLICY_H
#define MM_POLICY_H

#include "include/types.h"

/*
 * lazy  - accept one unit when an allocation finds no free memory (Linux's default).
 * eager - accept every unit before `ready` (accept_memory=eager in Linux).
 * ahead - lazy, plus: keep at least `ahead` bytes accepted and free, topping up after
 *         each allocation (Linux accepts up to a watermark in the same spirit).
 */
void policy_init(u32 policy, u64 ahead_bytes);
/*
 * More than one CPU: run_all(fn, arg) runs fn(cpu, arg) on each of `ncpus` CPUs (indices
 * 0..slots-1, some possibly absent) at once and returns when all are done. Eager then
 * splits the unaccepted units into one contiguous share per CPU.
 */
void policy_set_cpus(unsigned ncpus, unsigned slots,
		     void (*run_all)(void (*fn)(unsigned cpu, void *arg), void *arg),
		     bool (*online)(unsigned cpu));
/* Run the policy's boot-time part; progress(done, total) is called at least every 10%. */
void policy_boot(void (*progress)(u64 done, u64 total));
/* palloc's refill hook: accept more because nothing of `order` is free. */
bool policy_refill(unsigned order);
/* palloc's after-allocation hook, installed for accept-ahead only: tops up. */
void policy_after_alloc(void);

#endif
