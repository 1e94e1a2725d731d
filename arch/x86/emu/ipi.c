/* SPDX-License-Identifier: MIT */
/* memaccept (test image): the INIT and STARTUP IPIs the emulated host sends to start QEMU's vCPUs, through QEMU's own xAPIC. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/msr.h"
#include "arch/x86/tsc.h"

/*
 * The emulated host (its firmware stand-in, its VMRUN stand-in) starts vCPUs the way
 * QEMU's machine allows: INIT-SIPI-SIPI through the xAPIC QEMU's TCG implements (it has
 * no x2APIC). This is host code: it runs the instructions itself, whatever the guest's
 * platform would trap, and marks each target for the instruction observer, which then
 * treats the target's code as the host's until the hand-over (emu_obs_hand_over).
 * Intel SDM vol. 3A, "Interrupt Command Register", "Typical AP Initialization Sequence".
 */
#define XAPIC_ICR_LOW 0x300
#define XAPIC_ICR_HIGH 0x310
#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)
#define ICR_PENDING (1u << 12)
#define ICR_ASSERT (1u << 14)
#define ICR_TIMEOUT_NS (10 * 1000 * 1000ULL)

static bool send(u32 apic_id, u32 low)
{
	volatile u32 *apic = (volatile u32 *)(uintptr_t)(raw_rdmsr(MSR_APIC_BASE) & ~0xfffULL);

	apic[XAPIC_ICR_HIGH / 4] = apic_id << 24;
	apic[XAPIC_ICR_LOW / 4] = low;
	for (u64 t0 = tsc_now_ns(); apic[XAPIC_ICR_LOW / 4] & ICR_PENDING;) {
		if (tsc_now_ns() - t0 > ICR_TIMEOUT_NS)
			return false;
		cpu_relax();
	}
	return true;
}

bool emu_send_init(u32 apic_id)
{
	int idx = emu_host_vcpu_index(apic_id);

	/* The observer knows vCPUs by QEMU's CPU index, which differs from the APIC ID where QEMU's topology leaves holes. */
	if (idx >= 0)
		emu_obs_adopt((u32)idx);
	return send(apic_id, ICR_INIT | ICR_ASSERT);
}

bool emu_send_startup(u32 apic_id, u8 vector)
{
	return send(apic_id, ICR_STARTUP | ICR_ASSERT | vector);
}
