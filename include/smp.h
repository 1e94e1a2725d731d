/* SPDX-License-Identifier: MIT */
/* memaccept: how many CPUs memaccept can use (boot/, kernel and mm/ size their tables by it). */
#ifndef INCLUDE_SMP_H
#define INCLUDE_SMP_H

/* Per-CPU state is in static arrays of this many entries; more CPUs are reported, not used. */
#define MAX_CPUS 16

#endif
