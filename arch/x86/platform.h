/* SPDX-License-Identifier: MIT */
/* memaccept: the one interface between mm/ and the confidential-computing platform. */
#ifndef ARCH_X86_PLATFORM_H
#define ARCH_X86_PLATFORM_H

#include "include/types.h"

/*
 * Why a guest stops, reported to the host along with the exit code (include/exit_codes.h)
 * so that the host's log says more than "terminated": TDX ReportFatalError carries
 * (condition << 8) | code in R12; the SNP termination request carries reason set 1 and
 * reason code (condition << 4) | code (arch/x86/sev/snp.h).
 */
enum fatal_condition {
	FC_NONE = 0,			/* a plain exit code: panic, exception, test failure */
	FC_ACCEPT_STATUS = 1,		/* the platform answered an accept with an unexpected status */
	FC_ACCEPT_RETRIES = 2,		/* the platform stayed busy beyond the retry bound */
	FC_PSC_ERROR = 3,		/* SNP: the hypervisor reported a Page State Change error */
	FC_PSC_PROTOCOL = 4,		/* SNP: the hypervisor broke the PSC protocol */
	FC_PVALIDATE_NOUPDATE = 5,	/* SNP: PVALIDATE found memory already validated */
	FC_PVALIDATE_FAIL = 6,		/* SNP: PVALIDATE failed */
	FC_GHCB = 7,			/* SNP: GHCB negotiation or registration failed */
	FC_UNACCEPTED_ACCESS = 8,	/* something touched unaccepted memory */
	FC_UNEXPECTED_EXCEPTION = 9,	/* a #VE or #VC the guest cannot handle */
	FC_TD_ATTRIBUTES = 10,		/* TDX: the TD was built without SEPT_VE_DISABLE */
	FC_NOT_VMPL0 = 11,		/* SNP: below VMPL0 (PVALIDATE impossible) and no SVSM */
	FC_SVSM = 12,			/* SNP: the SVSM failed a call or broke its protocol */
	FC_MSR = 13,			/* the host refused an MSR access memaccept needs */
	FC_SNP_FEATURES = 14,		/* SNP: SEV features or hypervisor features memaccept cannot run with */
	/*
	 * The host gave what no honest host gives: a #VC or #VE the instruction at RIP cannot
	 * raise, an intercept the hardware never makes, a reply out of range. The last
	 * condition the SNP termination reason's 4 bits can carry (sev/snp.h SNP_TERM_CODE).
	 */
	FC_HOST_INPUT = 15,
};
#define FATAL_REASON(condition, code) (((u32)(condition) << 8) | ((u32)(code) & 0xff))
#define FATAL_REASON_CODE(reason) ((int)((reason) & 0xff))
#define FATAL_REASON_CONDITION(reason) ((reason) >> 8)
const char *fatal_condition_name(u32 condition);

/* One named count per kind of platform call, reported in the `summary` event. */
struct platform_counter {
	const char *name;
	u64 count;
};

/*
 * Add n to counters[which] (atomically: several CPUs call the platform at once), and to
 * what the calling CPU records, if it records (platform_record): so a caller learns what
 * one call of its own cost, whatever other CPUs do meanwhile.
 */
void platform_count(struct platform_counter *counters, unsigned which, u64 n);
/* Record this CPU's counts into into[0..n) (indexed like the counters); NULL stops. */
void platform_record(u64 *into, unsigned n);

struct cpuid_regs;
struct platform_probe;
struct unaccepted_probe;

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
	/* Report FATAL_REASON(condition, code) to the host (if the platform can) and stop. */
	void (*terminate)(u32 reason) __noreturn;
	/*
	 * Optional (SNP): eager acceptance is about to accept every unit in address order
	 * (next(from, &unit) finds the next one left), or is done (NULL). The platform may
	 * prepare the next units in the same host call (SNP: Page State Change batches).
	 */
	void (*accept_ahead)(bool (*next)(u64 from, u64 *unit));
	/* Halt the CPU for good (TDX: TDVMCALL Instruction.HLT); NULL: the HLT instruction. */
	void (*halt)(void);
	/*
	 * MSRs (arch/x86/msr.h): msr_native(msr, write) says whether the platform lets the
	 * access through without a trap (NULL: every MSR); the rest go to rdmsr/wrmsr
	 * (TDX: TDVMCALL Instruction.RDMSR/WRMSR; SNP: the GHCB MSR exit), which return false
	 * where the host refuses the access.
	 */
	bool (*msr_native)(u32 msr, bool write);
	bool (*rdmsr)(u32 msr, u64 *val);
	bool (*wrmsr)(u32 msr, u64 val);
	/*
	 * CPUID the platform answers without the instruction (SNP: the GHCB CPUID exit);
	 * NULL or false: the CPUID instruction (which a TD's module answers or turns into #VE).
	 */
	bool (*cpuid)(u32 leaf, u32 subleaf, struct cpuid_regs *r);
	/*
	 * Optional (TDX, SNP at VMPL0), for the conformance report: is the 4 KiB page at pa,
	 * which the firmware's map calls accepted RAM, really accepted? enum accept_probe. A
	 * page that was not is accepted by the probe (it was unusable before).
	 */
	int (*probe_accepted)(u64 pa);
	/*
	 * Optional (TDX, SNP), for the conformance report: accept the unaccepted 2 MiB unit
	 * at unit (mapped, claimed from the allocator, which does its bookkeeping) page by
	 * page, asking the platform first whether each page is still unaccepted, as memory
	 * the map calls type 15 must be; the answers go to *pr. Returns 0, or a negative
	 * error as accept (the unit then stays unused).
	 */
	int (*probe_unaccepted)(u64 unit, struct unaccepted_probe *pr);
	/* Bits to OR into every private (encrypted) mapping: the C-bit on SNP, else 0. */
	u64 private_pte_bits;
	/*
	 * Memory the platform's firmware may still be using although its map may call it
	 * free, kept out of use if the map does ([start, end); empty when start == end).
	 */
	u64 firmware_hold_start, firmware_hold_end;
	const char *firmware_hold_why;
	struct platform_counter *counters;
	unsigned ncounters;
	/* workload=probe: the backend's primitives, timed one by one (arch/x86/probe.h); NULL: none. */
	const struct platform_probe *probe;
};

enum accept_probe {
	PROBE_ACCEPTED,		/* TDX: PAGE_ALREADY_ACCEPTED; SNP: PVALIDATE changed nothing */
	PROBE_NOT_ACCEPTED,	/* the probe's accept succeeded, or the page is not private */
	PROBE_UNKNOWN,		/* the answer does not tell (a 2 MiB mapping, another status) */
	PROBE_ANSWERS,
};

/*
 * What the unaccepted-memory probe learnt of one unit (cc_platform.probe_unaccepted):
 * pages per answer. For type 15 memory PROBE_NOT_ACCEPTED is the expected answer (the
 * probe accepted the page); PROBE_ACCEPTED means the firmware or host accepted it before.
 */
struct unaccepted_probe {
	u32 pages[PROBE_ANSWERS];
	u64 first_accepted;	/* the first page found accepted (if pages[PROBE_ACCEPTED]) */
};

/* A page of the unit answered "accepted before": counted, and remembered if the first. */
static inline void unaccepted_probe_found_accepted(struct unaccepted_probe *pr, u64 page)
{
	if (!pr->pages[PROBE_ACCEPTED]++)
		pr->first_accepted = page;
}

enum platform_kind {
	PLATFORM_NONE,
	PLATFORM_SIM,
	PLATFORM_TDX,
	PLATFORM_SNP,
};

struct config;
/* Which backend to run, from what boot/ detected (enum detected_platform) and the options. */
u32 platform_resolve(u32 detected, const struct config *cfg);
struct boot_info;
/* Switch to that backend's operations (port I/O, accept, terminate). */
void platform_set(u32 kind, const struct boot_info *bi);
/*
 * Before the kernel's IDT is loaded: the #VE handler on TDX, the #VC handler (and a
 * console kept in memory until the GHCB exists) on SNP, so that no exception the
 * platform raises for port I/O ever meets an IDT without its handler.
 */
void platform_traps_init(u32 kind);
/* What the backend needs before anything else runs: TD info on TDX, the SEV features on SNP. */
void platform_setup_early(u32 kind);
/* Once the kernel's page tables are live: the SNP GHCB. */
void platform_setup_late(u32 kind);

/* The platform in use; the plain-VM ops until platform_set() runs. */
extern const struct cc_platform *platform;

#ifdef CONFIG_EMULATOR
void platform_use_plain_io(void);
#endif

/*
 * Plain port I/O, used by "none" and "sim" and before a CC platform is set up. In the
 * test image it goes past the emulator first: in an emulated TD or SNP guest an IN/OUT
 * raises #VE or #VC, as on the real platform (arch/x86/emu_hooks.h).
 */
void plain_io_out(u16 port, u32 val, int size);
u32 plain_io_in(u16 port, int size);
/* The IN/OUT instructions themselves, for the emulated host's own I/O. */
void raw_io_out(u16 port, u32 val, int size);
u32 raw_io_in(u16 port, int size);
/* Nobody to report to but QEMU's debug-exit device (or EFI ResetSystem). */
__noreturn void plain_terminate(u32 reason);

static inline void io_out8(u16 port, u8 v)
{
	platform->io_out(port, v, 1);
}

static inline u8 io_in8(u16 port)
{
	return (u8)platform->io_in(port, 1);
}

#endif
