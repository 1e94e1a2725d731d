/* SPDX-License-Identifier: MIT */
/*
 * memaccept fuzz target: waking APs through the ACPI multiprocessor wakeup mailbox
 * (arch/x86/mp_mailbox.c) against a firmware and a clock that the input drives.
 *
 * Input, read in order (once used up: the firmware never answers and the clock jumps
 * past every bound, so every run ends):
 *   header  the number of APs (1-256), the bound (1-4096 ns), the clock's start (any
 *           64-bit value, so that it may wrap), the initial Command (0, or any), the
 *           initial longest take
 *   then, each time the kernel reads Command, 1 byte: leave it, take the command
 *           (write 0), write any 16-bit value, write 1 (a command of its own), or
 *           scribble over ApicId and WakeupVector; each time it reads the clock, 1 byte:
 *           the clock moves 0-63 ns, or about a quarter, a half or twice the bound
 *   last    per AP: whether it checked in and whether it took its slot
 *
 * The checks are the rules of ACPI 6.4 section 5.2.12.19 (Multiprocessor Wakeup
 * Structure: the mailbox's Command is 0 Noop or 1 Wakeup; the OS writes ApicId and
 * WakeupVector, then Command; the firmware writes Command back to 0 once it took the
 * command; the OS waits for that before the next one) and the kernel's own promises
 * (every wait bounded, the mailbox never written again once a command was given up on),
 * checked on the trace of what the kernel read and wrote, not by running a second copy of
 * its loop:
 *   - a command is posted only when the last read of Command, after the previous post,
 *     gave 0 (Noop): never over a command the firmware has not taken, nor over garbage;
 *   - the posts are for AP 0, 1, 2, ... in order, each once, with the kernel's own APIC
 *     ID and vector (nothing the firmware wrote into the mailbox changes them);
 *   - a wait for a command ends within one read of the clock passing the bound (counted
 *     from the clock read right after the post) and never before: the last clock read of
 *     a wait that gave up is past the bound; once given up, nothing is posted again;
 *   - the results: which APs were asked, why the others were not (a command already
 *     there / one given up on), whether the last command was taken, the longest take,
 *     and the reason given for each AP (checked in, arrived without checking in, took its
 *     command but never arrived, never took it).
 */
#include <string.h>
#include "arch/x86/mp_mailbox.h"
#include "include/mp_wakeup.h"
#include "tests/fuzz/fuzz.h"

#define MAX_APS 256
#define MAX_READS 100000	/* far more than any bounded run needs */

/* The fake mailbox and clock, and the protocol monitor's state. */
static struct {
	u16 command;			/* what the firmware holds in Command now */
	u32 apic_id;			/* ApicId and WakeupVector as they stand */
	u64 vector;
	u64 clock, bound;
	unsigned count;
	u32 apic_ids[MAX_APS];
	u64 vectors, stride;

	/* monitor */
	unsigned reads, posts;		/* Command reads; commands posted */
	bool read_since_post;		/* Command was read since the last post (or the start) */
	u16 last_read;			/* the value of that read */
	bool first_read_done;
	u16 first_read;			/* the first read (before any post) */
	bool await_posted_time;		/* the next clock read is the post's time */
	u64 posted;			/* clock at the last post */
	bool taken[MAX_APS];		/* the command for AP i was read back as 0 */
	bool await_took;		/* the next clock read ends a take */
	u64 took_max;
	bool expired;			/* a clock read past the bound for the outstanding command */
	unsigned reads_after_expiry;	/* Command reads after it, without a 0 between */
	bool ever_expired;
} f;

static u16 fw_command(void *ctx)
{
	CHECK(ctx == &f);
	CHECK(++f.reads < MAX_READS);
	/* What the firmware does before this read. */
	if (fuzz_more()) {
		u8 b = fuzz_byte();

		if (b < 0x60) {
			/* busy: leaves it */
		} else if (b < 0xb0) {
			f.command = MP_MAILBOX_CMD_NOOP;	/* took it */
		} else if (b < 0xd0) {
			f.command = (u16)fuzz_bytes(2);		/* garbage */
		} else if (b < 0xe8) {
			f.command = MP_MAILBOX_CMD_WAKEUP;	/* a command of its own */
		} else {
			f.apic_id = (u32)fuzz_bytes(4);		/* scribbles over the rest */
			f.vector = fuzz_bytes(8);
		}
	}
	u16 v = f.command;

	if (!f.first_read_done) {
		f.first_read_done = true;
		f.first_read = v;
	}
	if (f.expired && v != MP_MAILBOX_CMD_NOOP)
		f.reads_after_expiry++;
	/* The wait ends within one read of the bound passing (the kernel's second look). */
	CHECK(f.reads_after_expiry <= 1);
	/* Taken: the command's first 0 (after a give-up too: the kernel looks once more). */
	if (v == MP_MAILBOX_CMD_NOOP && f.posts && !f.taken[f.posts - 1]) {
		f.taken[f.posts - 1] = true;
		f.await_took = true;
	}
	f.read_since_post = true;
	f.last_read = v;
	return v;
}

static void fw_post(void *ctx, u32 apic_id, u64 vector)
{
	unsigned i = f.posts;

	CHECK(ctx == &f);
	/* ACPI 6.4 5.2.12.19: only over a Command the firmware set back to Noop. */
	CHECK(f.read_since_post && f.last_read == MP_MAILBOX_CMD_NOOP);
	CHECK(!f.ever_expired);			/* never written again once given up on */
	CHECK(i < f.count);
	CHECK(apic_id == f.apic_ids[i] && vector == f.vectors + (u64)i * f.stride);
	f.apic_id = apic_id;
	f.vector = vector;
	f.command = MP_MAILBOX_CMD_WAKEUP;
	f.posts++;
	f.read_since_post = false;
	f.await_posted_time = true;
	f.await_took = false;
	f.expired = false;
	f.reads_after_expiry = 0;
}

static u64 fw_now(void *ctx)
{
	CHECK(ctx == &f);
	if (fuzz_more()) {
		u8 b = fuzz_byte();

		switch (b >> 6) {
		case 0:
			f.clock += b & 63;
			break;
		case 1:
			f.clock += f.bound / 4 + (b & 15);
			break;
		case 2:
			f.clock += f.bound / 2 + (b & 15);
			break;
		default:
			f.clock += 2 * f.bound + (b & 15);
			break;
		}
	} else {
		f.clock += f.bound + 1;
	}
	if (f.await_posted_time) {
		f.await_posted_time = false;
		f.posted = f.clock;
	} else if (f.await_took) {
		f.await_took = false;
		if (f.clock - f.posted > f.took_max)
			f.took_max = f.clock - f.posted;
	} else if (f.posts && !f.taken[f.posts - 1] && f.clock - f.posted > f.bound) {
		f.expired = f.ever_expired = true;
	}
	return f.clock;
}

static void fw_relax(void *ctx)
{
	CHECK(ctx == &f);
	/* A relax follows a clock read within the bound: the kernel waits on. */
	CHECK(!f.expired);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	static const struct mp_mailbox_ops ops = { &f, fw_command, fw_post, fw_now, fw_relax };
	bool asked[MAX_APS], checked_in[MAX_APS], arrived[MAX_APS];
	struct mp_mailbox_run run = { .asked = asked };
	u64 take_max, take_max0;
	u8 b;

	memset(&f, 0, sizeof(f));
	fuzz_input_start(data, size);
	b = fuzz_byte();
	f.count = b < 0xf0 ? b % 16 + 1 : (unsigned)(fuzz_bytes(1) % MAX_APS) + 1;
	f.bound = fuzz_bytes(2) % 4096 + 1;
	f.clock = fuzz_byte() & 1 ? fuzz_bytes(8) : 0;
	b = fuzz_byte();
	f.command = b < 0xc0 ? MP_MAILBOX_CMD_NOOP : (u16)fuzz_bytes(2);
	take_max = take_max0 = fuzz_byte() & 0x80 ? fuzz_bytes(2) : 0;
	for (unsigned i = 0; i < f.count; i++)
		f.apic_ids[i] = i * 2 + 1;
	f.vectors = 0x9a000 + 0x48;
	f.stride = 10;
	memset(asked, 0xa5, sizeof(asked));

	mp_mailbox_wake(&ops, f.apic_ids, f.count, f.vectors, f.stride, f.bound, &run, &take_max);

	/* What the trace says happened. */
	CHECK(f.first_read_done);
	bool held = f.first_read != MP_MAILBOX_CMD_NOOP;
	unsigned want_posts = held ? 0 : f.posts;

	CHECK(f.posts == want_posts);
	for (unsigned i = 0; i < f.count; i++)
		CHECK(asked[i] == (i < f.posts));
	if (held)
		CHECK(run.stopped && !strcmp(run.stopped, MP_MAILBOX_WHY_HELD));
	else if (f.posts < f.count)
		CHECK(run.stopped && !strcmp(run.stopped, MP_MAILBOX_WHY_OUTSTANDING) && f.ever_expired);
	else
		CHECK(!run.stopped);
	/* Given up only on a command whose bound the clock had passed. */
	if (f.posts)
		CHECK(run.last == f.posts - 1 && run.last_taken == f.taken[f.posts - 1]);
	if (f.posts && !run.last_taken)
		CHECK(f.expired);
	CHECK(f.await_took == false);
	CHECK(take_max == (f.took_max > take_max0 ? f.took_max : take_max0));

	/* The reason given for each AP, for any check-in and arrival the APs produce. */
	for (unsigned i = 0; i < f.count; i++) {
		b = fuzz_byte();
		checked_in[i] = b & 1;
		arrived[i] = b & 2;
		const char *why = mp_mailbox_why(&run, i, checked_in[i], arrived[i]);
		const char *want;

		if (i >= f.posts)
			want = held ? MP_MAILBOX_WHY_HELD : MP_MAILBOX_WHY_OUTSTANDING;
		else if (checked_in[i])
			want = NULL;
		else if (arrived[i])
			want = MP_MAILBOX_WHY_NO_CHECKIN;
		else
			want = f.taken[i] ? MP_MAILBOX_WHY_NOT_ARRIVED : MP_MAILBOX_WHY_NOT_TAKEN;
		CHECK(why == want || (why && want && !strcmp(why, want)));
	}
	return 0;
}
