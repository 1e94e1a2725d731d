/* SPDX-License-Identifier: MIT */
/* memaccept: the wakeup mailbox protocol as the kernel runs it (pure logic, host-fuzzed with a fake clock). */
#include "arch/x86/mp_mailbox.h"
#include "include/mp_wakeup.h"

/*
 * Until the firmware took the command in the mailbox (Command back to 0), or `bound_ns`
 * passed since `posted`. ACPI 6.4 section 5.2.12.19 has the OS wait for that before it
 * posts the next command and sets no limit; Linux waits without one too
 * (arch/x86/kernel/acpi/madt_wakeup.c, acpi_wakeup_cpu). Any value but 0 is "not
 * taken": 1 is ours, anything else the firmware's garbage.
 */
static bool wait_taken(const struct mp_mailbox_ops *ops, u64 posted, u64 bound_ns, u64 *take_max_ns)
{
	u64 took;

	while (ops->command(ops->ctx) != MP_MAILBOX_CMD_NOOP) {
		if (ops->now_ns(ops->ctx) - posted > bound_ns)
			return false;
		ops->relax(ops->ctx);
	}
	took = ops->now_ns(ops->ctx) - posted;
	if (take_max_ns && took > *take_max_ns)
		*take_max_ns = took;
	return true;
}

void mp_mailbox_wake(const struct mp_mailbox_ops *ops, const u32 *apic_ids, unsigned count, u64 vectors,
		     u64 stride, u64 bound_ns, struct mp_mailbox_run *run, u64 *take_max_ns)
{
	u64 posted = 0;

	run->last = 0;
	run->last_taken = true;
	run->stopped = NULL;
	for (unsigned i = 0; i < count; i++)
		run->asked[i] = false;
	if (!count)
		return;
	/*
	 * A command still posted means the firmware has not taken the last one (or wrote one
	 * itself): writing ours over it could wake the wrong AP.
	 */
	if (ops->command(ops->ctx) != MP_MAILBOX_CMD_NOOP)
		run->stopped = MP_MAILBOX_WHY_HELD;
	for (unsigned i = 0; i < count && !run->stopped; i++) {
		/*
		 * Each command gets its own bound, from when it was posted: a vCPU the host
		 * runs late delays the ones after it, it does not use up their time.
		 */
		if (i && !wait_taken(ops, posted, bound_ns, take_max_ns)) {
			/*
			 * ACPI has no way to withdraw a command, and one written over it could be
			 * read half old, half new: the mailbox is not written again. The AP that
			 * takes it late finds its slot given up and parks.
			 */
			run->stopped = MP_MAILBOX_WHY_OUTSTANDING;
			break;
		}
		/* Slot i's own vector: the AP finds its slot by where it was sent, not by its ID. */
		ops->post(ops->ctx, apic_ids[i], vectors + (u64)i * stride);
		posted = ops->now_ns(ops->ctx);
		run->asked[i] = true;
		run->last = i;
	}
	/* The last command posted: taken late still counts (its AP may yet arrive). */
	run->last_taken = !run->asked[run->last] || wait_taken(ops, posted, bound_ns, take_max_ns);
}

const char *mp_mailbox_why(const struct mp_mailbox_run *run, unsigned i, bool checked_in, bool arrived)
{
	/* Every command before the last was taken: the next was posted only after it. */
	bool taken = i < run->last || run->last_taken;

	if (!run->asked[i])
		return run->stopped;
	if (checked_in)
		return NULL;
	if (arrived)
		return MP_MAILBOX_WHY_NO_CHECKIN;
	return taken ? MP_MAILBOX_WHY_NOT_ARRIVED : MP_MAILBOX_WHY_NOT_TAKEN;
}
