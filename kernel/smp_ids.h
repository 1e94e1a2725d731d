/* SPDX-License-Identifier: MIT */
/* memaccept: which APIC IDs of the MADT name a vCPU to start (pure logic, host-tested). */
#ifndef KERNEL_SMP_IDS_H
#define KERNEL_SMP_IDS_H

#include "include/smp.h"
#include "include/types.h"

/*
 * APIC IDs from here on are no vCPU's: 0xFFFFFFFF is the x2APIC broadcast (Intel SDM vol.
 * 3A, 11.12.9), 0xFFFFFFFE what TDVF's mailbox loop takes as "every AP" (edk2
 * OvmfPkg/Include/TdxCommondefs.inc MailboxApicidBroadcast): a wakeup command for either
 * would start whichever vCPUs take it. Linux draws its line at the same place
 * (arch/x86/include/asm/apicdef.h MAX_LOCAL_APIC; arch/x86/kernel/cpu/topology.c
 * topology_register_apic rejects larger IDs); KVM's vCPU IDs, which are the x2APIC IDs it
 * gives, stay below KVM_MAX_VCPU_IDS (16,384 on x86).
 */
#define SMP_APIC_ID_LIMIT 0x8000u

/* The MADT's CPUs sorted out: the ones to start, and the ones that are not started and why. */
struct smp_ids {
	u32 ids[MAX_CPUS];		/* the boot CPU first, then the MADT's others in its order */
	unsigned n;			/* at most the limit asked for */
	unsigned distinct;		/* the boot CPU and every other usable ID listed, before the limit */
	u32 duplicate[MAX_CPUS];	/* listed again (the boot CPU's, or an earlier entry's) */
	unsigned nduplicate;
	u32 no_cpu[MAX_CPUS];		/* at or above SMP_APIC_ID_LIMIT */
	unsigned nno_cpu;
};

/*
 * Sort count MADT IDs (enabled entries, in MADT order) given the boot CPU's ID: every
 * usable ID once, the boot CPU's first, at most limit (>= 1) of them in ids.
 */
void smp_ids_pick(const u32 *madt, unsigned count, u32 bsp, unsigned limit, struct smp_ids *out);

#endif
