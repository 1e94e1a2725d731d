/* SPDX-License-Identifier: MIT */
/* memaccept: acceptance policies: lazy, eager, accept-ahead. */
#ifndef MM_POLICY_H
#define MM_POLICY_H

#include "include/types.h"

/* accept_memory= */
enum accept_policy {
	POLICY_LAZY,	/* accept a unit when the allocator runs out (default, Linux's "lazy") */
	POLICY_EAGER,	/* accept everything before `ready` (Linux's "eager") */
	POLICY_AHEAD,	/* lazy, but keep accept_ahead bytes accepted and free */
	POLICY_BACKGROUND,	/* lazy, and after ready the other vCPUs accept the rest */
};


/*
 * lazy  - accept one unit when an allocation finds no free memory (Linux's default).
 * eager - accept every unit before `ready` (accept_memory=eager in Linux).
 * background - lazy until `ready`; then the other vCPUs accept everything left while
 *         the boot CPU runs the workload (on-demand acceptance still works meanwhile).
 * ahead - lazy, plus: keep at least `ahead` bytes accepted and free, topping up after
 *         each allocation (Linux accepts up to a watermark in the same spirit).
 */
void policy_init(u32 policy, u64 ahead_bytes);
/* The CPUs the policies may use, and how to hand them work (kernel/smp.c on the target). */
struct policy_cpus {
	unsigned n;		/* started CPUs, the boot CPU included */
	unsigned slots;		/* CPU indices are 0..slots-1, some possibly absent */
	bool (*online)(unsigned cpu);
	/* Run fn(cpu, arg) on every started CPU at once; return when all are done. */
	void (*run_all)(void (*fn)(unsigned cpu, void *arg), void *arg);
	/* Hand fn to the APs and return at once; fn calls yield() between steps. */
	void (*start_long)(void (*fn)(unsigned cpu, void *arg), void *arg);
	void (*wait_long)(void);
	void (*yield)(void);
};

/*
 * More than one CPU: eager splits the unaccepted units into one contiguous share per
 * CPU (run_all), background into one per AP (start_long). NULL: the boot CPU alone.
 */
void policy_set_cpus(const struct policy_cpus *cpus);
/*
 * accept_memory=background, after `ready`: the APs (not the boot CPU) start accepting
 * every unit that is left, one contiguous share each, and the call returns at once.
 * false when there is no AP to do it (the policy then behaves as lazy).
 */
bool policy_background_start(u64 (*now_ns)(void));
/* Wait for the APs; when the last unit was accepted (ns), bytes they accepted, APs used. */
bool policy_background_wait(u64 *done_ns, u64 *bytes, unsigned *cpus);
/* Run the policy's boot-time part; progress(done, total) is called at least every 10%. */
void policy_boot(void (*progress)(u64 done, u64 total));
/*
 * Eager, after policy_boot and after the platform's batching ahead over whole units
 * has ended: the partial units (SNP's record of units made private ahead is one
 * interval of whole units, which may span the hole where a partial unit lies).
 */
void policy_boot_edges(void);
/* palloc's refill hook: accept more because nothing of `order` is free. */
bool policy_refill(unsigned order);
/* palloc's after-allocation hook, installed for accept-ahead only: tops up. */
void policy_after_alloc(void);

#endif
