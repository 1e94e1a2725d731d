/* SPDX-License-Identifier: MIT */
/* memaccept: the other vCPUs: starting them, the `smp` event, and handing them work. */
#ifndef KERNEL_SMP_H
#define KERNEL_SMP_H

#include "include/boot_info.h"

/* The boot CPU's per-CPU data, right after gdt_init(): smp_this_cpu() works from here. */
void smp_init_bsp(void);
/*
 * Start the APs the MADT lists (at most cpus=N in all) on a normal VM; on TDX and SNP
 * they stay parked (not implemented yet). Needs the kernel's page tables and the
 * boot-time allocator (stacks).
 */
void smp_init(const struct boot_info *bi, u32 platform_kind);
/* The `smp` event (printed after the measured window, before `ready`). */
void smp_report(const struct boot_info *bi);
/* The calling CPU's index: 0 is the boot CPU. */
unsigned smp_this_cpu(void);
/* CPUs that run kernel code (the boot CPU included), and index bounds for per-CPU arrays. */
unsigned smp_cpus_started(void);
unsigned smp_cpu_slots(void);
bool smp_cpu_online(unsigned cpu);
/* Run fn(cpu, arg) on every started CPU at once, the boot CPU included; wait for all. */
void smp_run(void (*fn)(unsigned cpu, void *arg), void *arg);
/*
 * Hand fn(cpu, arg) to every started AP and return at once; smp_wait() waits for them.
 * An AP runs one item at a time: this first waits for the previous item to finish,
 * except a long item started with smp_start_long(), which runs fn at its next
 * smp_yield() and then goes on.
 */
void smp_start_work(void (*fn)(unsigned cpu, void *arg), void *arg);
void smp_wait(void);
/* Have the APs finished the last work handed to them? */
bool smp_work_done(void);
/*
 * A long item (background acceptance): fn must call smp_yield() often; smp_wait_long()
 * waits for it to end.
 */
void smp_start_long(void (*fn)(unsigned cpu, void *arg), void *arg);
void smp_wait_long(void);
/* On an AP inside a long item: run the item smp_start_work() handed over, if any. */
void smp_yield(void);

#endif
