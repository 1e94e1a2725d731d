/* SPDX-License-Identifier: MIT */
/* memaccept: what arch/ asks of the kernel above it, through hooks that kernel/ installs at boot. */
#ifndef ARCH_X86_HOOKS_H
#define ARCH_X86_HOOKS_H

#include "include/types.h"

struct trap_frame;

/*
 * arch/ includes no kernel/ header: where a trap handler needs the kernel's knowledge
 * (which memory is unaccepted, where the stack is), it asks through these. kernel_main
 * fills them in before it loads its IDT; until then (and for any left NULL) arch/ does
 * without: no backtrace, no unaccepted-memory report (the fault is reported as such).
 */
struct arch_hooks {
	/* Is [addr, addr + len) on the kernel stack? Backtraces follow only such frames. */
	bool (*stack_contains)(u64 addr, u64 len);
	/* Where the kernel image was loaded (reports give addresses relative to it). */
	u64 (*image_base)(void);
	/* Is addr inside a 2 MiB unit the unaccepted bitmap tracks? */
	bool (*in_unaccepted_span)(u64 addr);
	/* A touch of unaccepted memory caught by `source` ("#VE", "#VC"): report, terminate. */
	void (*unaccepted_access)(const struct trap_frame *f, u64 addr, const char *source)
		__noreturn;
};

extern struct arch_hooks arch_hooks;

static inline bool arch_stack_contains(u64 addr, u64 len)
{
	return arch_hooks.stack_contains && arch_hooks.stack_contains(addr, len);
}

static inline u64 arch_image_base(void)
{
	return arch_hooks.image_base ? arch_hooks.image_base() : 0;
}

/* Report and terminate if addr is in unaccepted memory the kernel tracks; else return. */
static inline void arch_check_unaccepted(const struct trap_frame *f, u64 addr, const char *source)
{
	if (arch_hooks.in_unaccepted_span && arch_hooks.unaccepted_access &&
	    arch_hooks.in_unaccepted_span(addr))
		arch_hooks.unaccepted_access(f, addr, source);
}

#endif
