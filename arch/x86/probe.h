/* SPDX-License-Identifier: MIT */
/* memaccept: what a platform backend offers the probe (workload=probe): its primitives, timed one by one. */
#ifndef ARCH_X86_PROBE_H
#define ARCH_X86_PROBE_H

#include "include/types.h"

/* Samples every distribution of the `probe` event should reach (at least 100). */
#define PROBE_MIN_SAMPLES 100

/*
 * Every primitive any platform's acceptance is made of. Their names (kernel/probe.c) are
 * the keys of the `probe` event. A platform times only its own; the generic ones (mapping,
 * writes) are the kernel's (kernel/probe.c).
 */
enum probe_prim {
	PR_MAP_UNIT,		/* page tables for one newly accepted unit (kernel/memory.c) */
	PR_FIRST_WRITE_4K,	/* first write of a 4 KiB page of a freshly accepted unit */
	PR_FIRST_WRITE_2M,	/* first write of a freshly accepted unit, whole */
	PR_REWRITE_4K,		/* the same page written again */
	PR_REWRITE_2M,		/* the same unit written again */
	PR_CLOCK,		/* two clock reads back to back: what timing adds to every sample */
	PR_SIM_ZERO_4K,		/* sim: the software accept of one page (memset) */
	PR_SIM_ZERO_2M,		/* sim: ... of one unit */
	PR_TDX_ACCEPT_4K,	/* TDG.MEM.PAGE.ACCEPT of a 4 KiB page */
	PR_TDX_ACCEPT_2M,	/* ... of a 2 MiB page, accepted */
	PR_TDX_ACCEPT_2M_REFUSED,	/* ... answered PAGE_SIZE_MISMATCH (the 4 KiB fallback follows) */
	PR_TDX_VP_INFO,		/* TDG.VP.INFO: a TDCALL the module answers without the host */
	PR_TDX_VMCALL_NOOP,	/* TDG.VP.VMCALL<GetTdVmCallInfo>: a host round trip, no work */
	PR_SNP_VMGEXIT_NOOP,	/* GHCB MSR protocol SEV information request: a host round trip */
	PR_SNP_PSC_1,		/* Page State Change exit, one 4 KiB entry */
	PR_SNP_PSC_16,		/* ... 16 entries */
	PR_SNP_PSC_253,		/* ... 253 entries (a full request) */
	PR_SNP_PSC_2M,		/* ... one 2 MiB entry (how the backend converts a unit) */
	PR_SNP_PSC_OTHER,	/* ... any other count (re-issues of partial requests) */
	PR_SNP_PVALIDATE_4K,
	PR_SNP_PVALIDATE_2M,
	PR_SNP_PVALIDATE_2M_REFUSED,	/* FAIL_SIZEMISMATCH: 4 KiB RMP entries */
	PR_SNP_EVICT_4K,	/* reading a validated page's first and last line (per page) */
	PR_SVSM_NOOP,		/* SVSM core QUERY_PROTOCOL: the call round trip, no work */
	PR_SVSM_PVAL_1,		/* SVSM PVALIDATE request of one 4 KiB entry */
	PR_SVSM_PVAL_MANY,	/* ... of a full request (SVSM_PVAL_MAX_ENTRIES 4 KiB entries) */
	PR_SVSM_PVAL_OTHER,	/* ... any other count of 4 KiB entries */
	PR_SVSM_PVAL_2M,
	PR_SVSM_PVAL_2M_REFUSED,
	PR_COUNT,
};

/* Where a backend reports what each primitive took (kernel/probe.c owns it). */
struct probe_sink {
	/* One sample: ns for one call of prim that handled `entries` pages or entries. */
	void (*add)(struct probe_sink *s, unsigned prim, u64 ns, u64 entries);
	/* Samples of prim so far. */
	u64 (*count)(struct probe_sink *s, unsigned prim);
};

struct platform_probe {
	/*
	 * The round trips that need no memory (TDG.VP.INFO, a no-work TDVMCALL, a no-work
	 * VMGEXIT, an SVSM call that does nothing), each n times.
	 */
	void (*calls)(struct probe_sink *s, unsigned n);
	/*
	 * Accept the unaccepted 2 MiB unit at `unit` (mapped, claimed by the caller from the
	 * allocator, which does its bookkeeping), timing every primitive. The k-th probe unit
	 * chooses its schedule from k and from what the sink still lacks; *backend says
	 * whether it was accepted exactly as the backend's accept would have (those units
	 * feed the model). 0, or a negative error as cc_platform.accept.
	 */
	int (*accept_unit)(u64 unit, struct probe_sink *s, unsigned k, bool *backend);
	/* Has every memory primitive this host offers min samples? */
	bool (*satisfied)(struct probe_sink *s, u64 min);
	/* Primitives of this platform, as a mask of 1 << enum probe_prim. */
	u64 prims;
};

#endif
