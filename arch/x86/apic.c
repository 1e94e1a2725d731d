/* SPDX-License-Identifier: MIT */
/* memaccept: local APIC interprocessor interrupts (Intel SDM vol. 3A, chapter "Advanced Programmable Interrupt Controller"). */
#include "arch/x86/apic.h"
#include "arch/x86/cpu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/msr.h"
#include "arch/x86/tsc.h"

/* IA32_APIC_BASE: bit 11 APIC global enable, bit 10 x2APIC mode (SDM vol. 3A, "Local APIC Status and Location", "x2APIC"). */
#define APIC_BASE_ENABLE (1ULL << 11)
#define APIC_BASE_X2APIC (1ULL << 10)

/* xAPIC registers (SDM vol. 3A, table "Local APIC Register Address Map"). */
#define XAPIC_ICR_LOW 0x300
#define XAPIC_ICR_HIGH 0x310	/* destination in bits 31:24 */
/* x2APIC: the same registers as MSRs 0x800 + offset / 16 (arch/x86/msr.h); the ICR is one 64-bit MSR. */

/* How long the ICR may stay busy; a real or emulated APIC clears it within microseconds. */
#define ICR_TIMEOUT_NS (10 * 1000 * 1000ULL)

static volatile u32 *xapic;
static bool x2apic;

static u32 xapic_read(u32 reg)
{
	return xapic[reg / 4];
}

static void xapic_write(u32 reg, u32 v)
{
	xapic[reg / 4] = v;
}

/*
 * Both MSRs are trapped on TD and SNP guests (a #VE; an intercept KVM serves through the
 * GHCB): msr_read() takes the platform's path. A host that refuses IA32_APIC_BASE leaves
 * the APIC unknown: false, and memaccept runs on the boot CPU.
 */
bool apic_init(u64 mmio_base)
{
	u64 base;

	if (!msr_read_safe(MSR_APIC_BASE, &base) || !(base & APIC_BASE_ENABLE))
		return false;
	x2apic = (base & APIC_BASE_X2APIC) != 0;
	/* The MSR is authoritative; the MADT's address is what the firmware says it set. */
	xapic = (volatile u32 *)(uintptr_t)(mmio_base ? mmio_base : (base & ~0xfffULL));
	return true;
}

bool apic_is_x2apic(void)
{
	return x2apic;
}

/*
 * x2APIC: the 32-bit ID MSR (through the platform: a TD gets it from the VMM unless the
 * module enumerates topology). xAPIC: the initial APIC ID of CPUID leaf 1, EBX[31:24],
 * which the APIC ID register holds until software changes it (SDM vol. 3A, "Local APIC
 * ID"; memaccept never does): no MMIO, which a confidential guest would have to emulate.
 */
u32 apic_id(void)
{
	struct cpuid_regs r;

	if (x2apic)
		return (u32)msr_read(MSR_X2APIC_ID);
	cpu_cpuid(1, 0, &r);
	return r.ebx >> 24;
}

/* False when dest cannot be addressed in this APIC mode, or the xAPIC never sent it. */
static bool send_ipi(u32 dest, u32 low)
{
	u32 mode = low & APIC_ICR_DELIVERY_MASK, high;
	u64 icr;

	/* Test image: a TD has no INIT-SIPI; the emulated host says so (emu_tdvf.c). */
	emu_guest_ipi(dest, mode == APIC_ICR_DELIVERY_INIT || mode == APIC_ICR_DELIVERY_STARTUP);
	if (x2apic) {
		if (!apic_x2apic_icr(dest, low, &icr))
			return false;
		/* x2APIC ICR writes are not queued: there is no delivery status to wait for. */
		msr_write(MSR_X2APIC_ICR, icr);
		return true;
	}
	if (!apic_xapic_icr_high(dest, &high))
		return false;
	xapic_write(XAPIC_ICR_HIGH, high);
	xapic_write(XAPIC_ICR_LOW, low);	/* this write sends it */
	for (u64 t0 = tsc_now_ns(); xapic_read(XAPIC_ICR_LOW) & APIC_ICR_DELIVERY_PENDING;) {
		if (tsc_now_ns() - t0 > ICR_TIMEOUT_NS)
			return false;
		cpu_relax();
	}
	return true;
}

bool apic_send_init(u32 dest)
{
	return send_ipi(dest, apic_icr_init());
}

bool apic_send_startup(u32 dest, u8 vector)
{
	return send_ipi(dest, apic_icr_startup(vector));
}
