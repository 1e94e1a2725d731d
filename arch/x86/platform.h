/* SPDX-License-Identifier: MIT */
/* memaccept: the one interface between mm/ and the confidential-computing platform. */
#ifndef ARCH_X86_PLATFORM_H
#define ARCH_X86_PLATFORM_H

#include "include/types.h"

/* One named count per kind of platform call, reported in the `summary` event. */
struct platform_counter {
	const char *name;
	u64 count;
};

struct cc_platform {
	const char *name;	/* "tdx", "snp", "sim", "none" */
	/*
	 * Accept [start, end): both 4 KiB aligned, start < end, identity-mapped by the
	 * caller. Returns 0, or a negative error after the platform has already reported
	 * why. Fatal conditions do not return (terminate()).
	 */
	int (*accept)(u64 start, u64 end);
	/* Port I/O the way this platform needs it (plain, TDVMCALL, GHCB IOIO exit). */
	void (*io_out)(u16 port, u32 val, int size);
	u32 (*io_in)(u16 port, int size);
	/* Report a fatal error to the host (if the platform can) and stop. */
	void (*terminate)(u32 reason) __noreturn;
	/* Bits to OR into every private (encrypted) mapping: the C-bit on SNP, else 0. */
	u64 private_pte_bits;
	struct platform_counter *counters;
	unsigned ncounters;
};

enum platform_kind {
	PLATFORM_NONE,
	PLATFORM_SIM,
	PLATFORM_TDX,
	PLATFORM_SNP,
};

struct config;
/* Which backend to run, from what boot/ detected (enum detected_platform) and the options. */
u32 platform_resolve(u32 detected, const struct config *cfg);
/* Switch to that backend's operations (port I/O, accept, terminate). */
void platform_set(u32 kind);

/* The platform in use; the plain-VM ops until platform_select() runs. */
extern const struct cc_platform *platform;

/* Plain port I/O, used by "none" and "sim" and before a CC platform is set up. */
void plain_io_out(u16 port, u32 val, int size);
u32 plain_io_in(u16 port, int size);

static inline void io_out8(u16 port, u8 v)
{
	platform->io_out(port, v, 1);
}

static inline u8 io_in8(u16 port)
{
	return (u8)platform->io_in(port, 1);
}

#endif
