/* SPDX-License-Identifier: MIT */
/* memaccept: how many CPUs memaccept can use (boot/, kernel and mm/ size their tables by it). */
#ifndef INCLUDE_SMP_H
#define INCLUDE_SMP_H

/*
 * Per-CPU state is in static arrays of this many entries; more CPUs are reported, not used.
 * 256: every APIC ID an xAPIC can address (0-254) plus the boot CPU's, and the largest TDX
 * and SNP instances offered today; x2APIC IDs beyond it work (IDs are 32-bit throughout),
 * only the count is bounded. What it costs in static memory: docs/design.md, "SMP".
 */
#define MAX_CPUS 256

#endif
