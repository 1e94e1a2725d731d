/* SPDX-License-Identifier: MIT */
/* memaccept: the local APIC, for the one thing memaccept needs it for: start-up IPIs. */
#ifndef ARCH_X86_APIC_H
#define ARCH_X86_APIC_H

#include "include/types.h"

/* Find the boot CPU's local APIC (xAPIC at `mmio_base`, or x2APIC); false if it is off. */
bool apic_init(u64 mmio_base);
bool apic_is_x2apic(void);
/* This CPU's local APIC ID. */
u32 apic_id(void);
/* INIT, then STARTUP with `vector` (the trampoline's page number), to one APIC ID. */
bool apic_send_init(u32 dest);
bool apic_send_startup(u32 dest, u8 vector);

#endif
