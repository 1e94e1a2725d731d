/* SPDX-License-Identifier: MIT */
/* memaccept: the command line: space-separated key=value options (docs/reference.md, The command line). */
#ifndef KERNEL_CMDLINE_H
#define KERNEL_CMDLINE_H

#include "include/types.h"
#include "mm/policy.h"

#define CMDLINE_MAX 1024

enum platform_choice {
	PLAT_AUTO,	/* detect TDX / SEV-SNP; sim if fake_unaccepted_start is set; else none */
	PLAT_NONE,
	PLAT_SIM,
	PLAT_TDX_EMU,	/* test image only: TDX backend on the platform emulator */
	PLAT_SNP_EMU,	/* test image only: SEV-SNP backend on the platform emulator */
};

/* Test image: which host the platform emulator plays (emu_host=). */
enum emu_host_kind {
	EMU_HOST_KVM,	/* today's KVM + QEMU: private memory mapped with 4 KiB pages (default) */
	EMU_HOST_HUGE,	/* a host that backs private memory with 2 MiB pages where it can */
};

/* Test image, platform=snp-emu: the VMPL and SVSM the emulator plays (emu_svsm=). */
enum emu_svsm_kind {
	EMU_SVSM_NONE,		/* VMPL0, no SVSM (default) */
	EMU_SVSM_PRESENT,	/* emu_svsm=1 (2): VMPL1 (VMPL2) under an SVSM that validates */
	EMU_SVSM_ABSENT,	/* emu_svsm=absent: VMPL1 without an SVSM */
};

struct config {
	u32 policy;			/* enum accept_policy */
	u32 platform;			/* enum platform_choice */
	u64 accept_ahead;		/* bytes kept spare under accept_memory=ahead */
	u64 fake_unaccepted_start;	/* valid when fake_set */
	bool fake_set;
	bool verbose;			/* print every memory map descriptor */
	bool console_sync;		/* console=sync: print at once, do not hold the boot report */
	bool clock_stall;		/* clock=stall: calibrate against EFI Stall() even if a
					   better source exists (for tests) */
	u8 emu_svsm;			/* test image: enum emu_svsm_kind */
	u8 emu_svsm_vmpl;		/* test image: the guest's VMPL below VMPL0 (1, or 2 with emu_svsm=2) */
	u8 conformance_probe;		/* workload=conformance: enum conformance_probe_mode */
	u8 reserved[1];
	u32 bad_options;		/* how many options were rejected */
	u32 emu_host;			/* test image: enum emu_host_kind, the host the emulator plays */
	u32 cpus;			/* cpus=N: use at most N CPUs; 0 = all the firmware reports */
	u32 smp_phantom;		/* test image: APIC IDs no CPU has, added to the MADT's list */
	char workload[96];		/* checked by workload_parse() */
	char test[48];			/* test image: in-guest test case to run */
	char emu_fault[128];		/* test image: emulator fault injection */
};

/* conformance_probe=: which pages of accepted RAM the conformance report asks about. */
enum conformance_probe_mode {
	CONFORMANCE_PROBE_EDGES,	/* the first and last page of each descriptor (default) */
	CONFORMANCE_PROBE_FULL,		/* every page */
};

#define ACCEPT_AHEAD_DEFAULT (64 * MiB)

/*
 * Parse `line` into `cfg` (which is first reset to the defaults). Every unknown key or
 * malformed value is reported in one line through `report` and leaves that setting at its
 * default. `test_image` enables the options that only the test image understands; the
 * production image reports and ignores them. Never fails.
 */
void cmdline_parse(const char *line, struct config *cfg, bool test_image,
		   void (*report)(const char *msg));


const char *policy_name(u32 policy);
const char *platform_choice_name(u32 choice);

#endif
