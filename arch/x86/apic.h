/* SPDX-License-Identifier: MIT */
/* memaccept: the local APIC, for the one thing memaccept needs it for: start-up IPIs. */
#ifndef ARCH_X86_APIC_H
#define ARCH_X86_APIC_H

#include "include/types.h"

/*
 * The encodings, kept pure so that the host tests check them (tests/unit/test_apic.c):
 * QEMU's TCG has no x2APIC, so the x2APIC path never runs under `make test`'s QEMU.
 *
 * ICR low word (Intel SDM vol. 3A, 11.6.1 "Interrupt Command Register (ICR)"; the same
 * in x2APIC mode without bit 12, 11.12.9 "ICR Operation in x2APIC Mode"): vector 7:0,
 * delivery mode 10:8 (101b INIT, 110b STARTUP), destination mode 11 (0 physical),
 * delivery status 12 (xAPIC only), level 14 (1 assert), trigger mode 15 (0 edge),
 * destination shorthand 19:18 (00 none).
 */
#define APIC_ICR_VECTOR_MASK 0xffu
#define APIC_ICR_DELIVERY_INIT (5u << 8)
#define APIC_ICR_DELIVERY_STARTUP (6u << 8)
#define APIC_ICR_DELIVERY_MASK (7u << 8)
#define APIC_ICR_DELIVERY_PENDING (1u << 12)
#define APIC_ICR_LEVEL_ASSERT (1u << 14)
/* x2APIC: destination FFFF_FFFFH is a broadcast in both destination modes (11.12.9). */
#define APIC_X2APIC_BROADCAST 0xffffffffu
/* xAPIC: physical destination FFH is a broadcast (11.6.1, "Destination Field"). */
#define APIC_XAPIC_BROADCAST 0xffu

static inline u32 apic_icr_init(void)
{
	return APIC_ICR_DELIVERY_INIT | APIC_ICR_LEVEL_ASSERT;
}

static inline u32 apic_icr_startup(u8 vector)
{
	return APIC_ICR_DELIVERY_STARTUP | APIC_ICR_LEVEL_ASSERT | vector;
}

/*
 * x2APIC: one 64-bit WRMSR to the ICR (MSR 830H), the 32-bit destination in bits 63:32.
 * False for the broadcast ID: an INIT meant for one CPU must never reach them all.
 */
static inline bool apic_x2apic_icr(u32 dest, u32 low, u64 *icr)
{
	if (dest == APIC_X2APIC_BROADCAST)
		return false;
	*icr = ((u64)dest << 32) | low;
	return true;
}

/*
 * xAPIC: the destination in bits 31:24 of ICR high (offset 310H), 8 bits only. False for
 * an ID that does not fit (it would reach another CPU) and for the broadcast ID.
 */
static inline bool apic_xapic_icr_high(u32 dest, u32 *high)
{
	if (dest >= APIC_XAPIC_BROADCAST)
		return false;
	*high = dest << 24;
	return true;
}

/*
 * This CPU's APIC ID from CPUID, the way the AP trampoline finds it: the 32-bit x2APIC
 * ID in CPUID.(EAX=0BH,ECX=0):EDX where leaf 0BH exists (the highest basic leaf is at
 * least 0BH and that leaf's EBX[15:0] is not 0: SDM vol. 2A, CPUID, "INPUT EAX = 0BH"),
 * else the 8-bit initial APIC ID in CPUID.01H:EBX[31:24].
 */
static inline u32 apic_id_from_cpuid(u32 max_basic_leaf, u32 leafb_ebx, u32 leafb_edx, u32 leaf1_ebx)
{
	if (max_basic_leaf >= 0xb && (leafb_ebx & 0xffff))
		return leafb_edx;
	return leaf1_ebx >> 24;
}

/* Find the boot CPU's local APIC (xAPIC at `mmio_base`, or x2APIC); false if it is off. */
bool apic_init(u64 mmio_base);
bool apic_is_x2apic(void);
/* This CPU's local APIC ID. */
u32 apic_id(void);
/* INIT, then STARTUP with `vector` (the trampoline's page number), to one APIC ID. */
bool apic_send_init(u32 dest);
bool apic_send_startup(u32 dest, u8 vector);

#endif
