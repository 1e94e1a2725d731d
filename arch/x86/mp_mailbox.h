/* SPDX-License-Identifier: MIT */
/* memaccept: waking APs through the ACPI multiprocessor wakeup mailbox, the decisions (pure logic). */
#ifndef ARCH_X86_MP_MAILBOX_H
#define ARCH_X86_MP_MAILBOX_H

#include "include/types.h"

/*
 * The mailbox is the firmware's to write: a broken firmware writes what it likes, and
 * the host decides when (or whether) the vCPUs that answer it run. The kernel only ever
 * reads Command back; it never reads ApicId or WakeupVector, so what the firmware writes
 * there cannot change what the kernel does. These ops are the kernel's only contact with
 * the mailbox and the clock (arch/x86/smp.c; a fake in the fuzzer).
 */
struct mp_mailbox_ops {
	void *ctx;
	u16 (*command)(void *ctx);			/* Command, read with acquire */
	void (*post)(void *ctx, u32 apic_id, u64 vector);	/* smp_mailbox_post */
	u64 (*now_ns)(void *ctx);
	void (*relax)(void *ctx);
};

/* What the wakeups did: read by mp_mailbox_why once the check-ins are over. */
struct mp_mailbox_run {
	bool *asked;		/* per AP: a wakeup command was posted for it */
	unsigned last;		/* the last AP one was posted for */
	bool last_taken;	/* the firmware took that last command */
	const char *stopped;	/* why the APs not asked were not, or NULL */
};

/*
 * Post a wakeup command for each of apic_ids[0 .. count), AP i sent to vectors + i *
 * stride, one at a time (ACPI 6.4, 5.2.12.19: the OS waits for Command to read 0
 * before it posts the next). Stops without writing when Command is not 0 to begin with,
 * or when one command is not taken within bound_ns of being posted. *take_max_ns (if
 * not NULL) grows to the longest a taken command took. run->asked must hold count flags.
 */
void mp_mailbox_wake(const struct mp_mailbox_ops *ops, const u32 *apic_ids, unsigned count, u64 vectors,
		     u64 stride, u64 bound_ns, struct mp_mailbox_run *run, u64 *take_max_ns);

/*
 * Why AP i is not running after the check-ins, or NULL if it is: checked_in, its
 * check-in came; arrived, it took its slot in the trampoline.
 */
const char *mp_mailbox_why(const struct mp_mailbox_run *run, unsigned i, bool checked_in, bool arrived);

#define MP_MAILBOX_WHY_HELD "not woken: the mailbox holds a command the firmware has not taken"
#define MP_MAILBOX_WHY_OUTSTANDING "not woken: an earlier wakeup is still outstanding"
#define MP_MAILBOX_WHY_NO_CHECKIN "arrived but did not check in"
#define MP_MAILBOX_WHY_NOT_ARRIVED "acknowledged the wakeup command but never arrived"
#define MP_MAILBOX_WHY_NOT_TAKEN "did not acknowledge the wakeup command"

#endif
