/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the AP start-up decisions and encodings: the CPU family, the wait after INIT, APIC IDs, the ICR, the TD wakeup mailbox and its protocol. */
#include "arch/x86/apic.h"
#include "arch/x86/mp_mailbox.h"
#include "arch/x86/smp.h"
#include "lib/string.h"
#include "tests/unit/unit.h"

/* CPUID leaf 1 EAX with a base family, an extended family and a model. */
static u32 leaf1(u32 base, u32 ext, u32 model)
{
	return (ext << 20) | (base << 8) | (model << 4);
}

TEST(family_adds_extended_only_for_base_0xf)
{
	EXPECT_EQ(cpu_family(leaf1(6, 0, 0xf)), 6);
	/* An extended family on a base below 0xF is ignored (SDM: only for 0xF). */
	EXPECT_EQ(cpu_family(leaf1(6, 3, 0)), 6);
	EXPECT_EQ(cpu_family(leaf1(0xf, 0, 0)), 0xf);
	EXPECT_EQ(cpu_family(leaf1(0xf, 0xa, 1)), 0x19);	/* AMD Zen 3/4 */
	EXPECT_EQ(cpu_family(leaf1(0xf, 0x9, 0)), 0x18);	/* Hygon Dhyana */
}

TEST(init_wait_left_out_where_linux_leaves_it_out)
{
	EXPECT(!smp_init_wait_needed("GenuineIntel", 6));
	EXPECT(!smp_init_wait_needed("AuthenticAMD", 0xf));
	EXPECT(!smp_init_wait_needed("AuthenticAMD", 0x19));
	EXPECT(!smp_init_wait_needed("HygonGenuine", 0x18));
}

TEST(init_wait_kept_for_everything_else)
{
	EXPECT(smp_init_wait_needed("GenuineIntel", 0xf));	/* Pentium 4 */
	EXPECT(smp_init_wait_needed("GenuineIntel", 5));
	EXPECT(smp_init_wait_needed("AuthenticAMD", 6));
	EXPECT(smp_init_wait_needed("HygonGenuine", 0xf));
	EXPECT(smp_init_wait_needed("CentaurHauls", 6));
	EXPECT(smp_init_wait_needed("\0\0\0\0\0\0\0\0\0\0\0\0", 6));
}

/*
 * The ICR's low word (Intel SDM vol. 3A, 11.6.1): INIT = delivery mode 101b in 10:8 with
 * level assert (bit 14), edge, physical, no shorthand: 0x4500; STARTUP = 110b with the
 * vector (the trampoline's page number) in 7:0: 0x46VV.
 */
TEST(icr_low_words)
{
	EXPECT_EQ(apic_icr_init(), 0x4500);
	EXPECT_EQ(apic_icr_startup(0x9a), 0x469a);
	EXPECT_EQ(apic_icr_startup(0x01), 0x4601);
	EXPECT_EQ(apic_icr_startup(0xff) & APIC_ICR_DELIVERY_MASK, APIC_ICR_DELIVERY_STARTUP);
}

/* x2APIC (SDM vol. 3A, 11.12.9): one 64-bit write to MSR 830H, destination in 63:32. */
TEST(x2apic_icr_carries_32_bit_destinations)
{
	u64 icr = 0;

	EXPECT(apic_x2apic_icr(0x12345678, apic_icr_init(), &icr));
	EXPECT_EQ(icr, 0x1234567800004500ULL);
	EXPECT(apic_x2apic_icr(255, apic_icr_startup(0x9a), &icr));
	EXPECT_EQ(icr, 0x000000ff0000469aULL);
	EXPECT(apic_x2apic_icr(0, apic_icr_init(), &icr));
	EXPECT_EQ(icr, 0x4500ULL);
	EXPECT(apic_x2apic_icr(0xfffffffe, apic_icr_init(), &icr));
	EXPECT_EQ(icr >> 32, 0xfffffffeULL);
	/* FFFF_FFFFH broadcasts: never an INIT or STARTUP meant for one CPU. */
	icr = 7;
	EXPECT(!apic_x2apic_icr(0xffffffff, apic_icr_init(), &icr));
	EXPECT_EQ(icr, 7);
}

/* xAPIC (SDM vol. 3A, 11.6.1): ICR high 31:24, 8 bits; FFH broadcasts. */
TEST(xapic_icr_high_takes_8_bit_destinations_only)
{
	u32 high = 0;

	EXPECT(apic_xapic_icr_high(0, &high));
	EXPECT_EQ(high, 0);
	EXPECT(apic_xapic_icr_high(0xfe, &high));
	EXPECT_EQ(high, 0xfe000000u);
	EXPECT(apic_xapic_icr_high(0x0f, &high));
	EXPECT_EQ(high, 0x0f000000u);
	/* 0x100 would be truncated to APIC ID 0 (another CPU), 0xff to every CPU. */
	high = 7;
	EXPECT(!apic_xapic_icr_high(0xff, &high));
	EXPECT(!apic_xapic_icr_high(0x100, &high));
	EXPECT(!apic_xapic_icr_high(0x12345678, &high));
	EXPECT_EQ(high, 7);
}

/*
 * The trampoline's APIC ID (SDM vol. 2A, CPUID): leaf 0BH's EDX when leaf 0BH exists
 * (highest basic leaf >= 0BH and EBX[15:0] != 0), else leaf 01H's EBX[31:24].
 */
TEST(apic_id_from_cpuid_prefers_the_32_bit_x2apic_id)
{
	/* EBX of leaf 0BH subleaf 0: logical processors at this level (here 2). */
	EXPECT_EQ(apic_id_from_cpuid(0x1f, 2, 0x1234, 0x34000800), 0x1234);
	EXPECT_EQ(apic_id_from_cpuid(0xb, 1, 300, 0x2c000800), 300);
	/* Leaf 0BH beyond the highest basic leaf: its contents mean nothing. */
	EXPECT_EQ(apic_id_from_cpuid(0xa, 2, 0x1234, 0x34000800), 0x34);
	/* Leaf 0BH present but EBX[15:0] = 0: not supported, leaf 01H. */
	EXPECT_EQ(apic_id_from_cpuid(0xd, 0x10000, 0x1234, 0xfe000800), 0xfe);
	EXPECT_EQ(apic_id_from_cpuid(0x1, 0, 0, 0x05000800), 5);
}

/*
 * The TD wakeup mailbox (ACPI 6.5 5.2.12.19, table "Multiprocessor Wakeup Mailbox
 * Structure"): Command u16 at 0, Reserved u16 at 2, ApicId u32 at 4 (all 32 bits of an
 * x2APIC ID), WakeupVector u64 at 8; nothing else is written.
 */
TEST(mailbox_post_writes_a_32_bit_apic_id)
{
	u8 mb[MP_MAILBOX_SIZE], want[MP_MAILBOX_SIZE];

	memset(mb, 0xa5, sizeof(mb));
	memset(want, 0xa5, sizeof(want));
	mb[0] = mb[1] = 0;
	smp_mailbox_post(mb, 0x12345678, 0x9a000ULL + 0x48 + 3 * 10);
	want[0] = 1, want[1] = 0;			/* Command: wakeup */
	want[4] = 0x78, want[5] = 0x56, want[6] = 0x34, want[7] = 0x12;
	want[8] = 0x66, want[9] = 0xa0, want[10] = 0x09;
	memset(want + 11, 0, 5);
	EXPECT(!memcmp(mb, want, sizeof(mb)));
	EXPECT_EQ(MP_MAILBOX_OFF_COMMAND, 0);
	EXPECT_EQ(MP_MAILBOX_OFF_APIC_ID, 4);
	EXPECT_EQ(MP_MAILBOX_OFF_VECTOR, 8);
}

/* A scripted firmware for mp_mailbox_wake: Command as it reads at each read, a clock. */
static struct {
	u16 script[16];		/* Command at reads 0, 1, ...; the last one repeats */
	unsigned nscript, reads;
	u64 clock, step;
	u32 posted_id[8];
	u64 posted_vector[8];
	unsigned posts;
} fw;

static u16 fw_command(void *ctx)
{
	unsigned i = fw.reads < fw.nscript ? fw.reads : fw.nscript - 1;

	fw.reads++;
	return fw.script[i];
}

static void fw_post(void *ctx, u32 apic_id, u64 vector)
{
	fw.posted_id[fw.posts] = apic_id;
	fw.posted_vector[fw.posts++] = vector;
}

static u64 fw_now(void *ctx)
{
	return fw.clock += fw.step;
}

static void fw_relax(void *ctx)
{
}

static const struct mp_mailbox_ops fw_ops = { NULL, fw_command, fw_post, fw_now, fw_relax };
static const u32 three_ids[] = { 1, 2, 3 };

static void fw_script(const u16 *cmds, unsigned n, u64 step)
{
	memset(&fw, 0, sizeof(fw));
	memcpy(fw.script, cmds, n * sizeof(cmds[0]));
	fw.nscript = n;
	fw.step = step;
}

TEST(mailbox_posts_each_command_after_the_last_was_taken)
{
	/* First look 0; then each wait reads "1" twice and then 0. */
	static const u16 cmds[] = { 0, 1, 1, 0, 1, 1, 0, 1, 1, 0 };
	bool asked[3];
	struct mp_mailbox_run run = { .asked = asked };
	u64 take_max = 0;

	fw_script(cmds, 10, 10);
	mp_mailbox_wake(&fw_ops, three_ids, 3, 0x9a048, 10, 1000, &run, &take_max);
	EXPECT(fw.posts == 3 && !run.stopped && run.last == 2 && run.last_taken);
	EXPECT(asked[0] && asked[1] && asked[2]);
	EXPECT(fw.posted_id[2] == 3 && fw.posted_vector[2] == 0x9a048 + 20);
	EXPECT_EQ(take_max, 30);	/* posted at t, clock read after two busy reads and the take */
	EXPECT(mp_mailbox_why(&run, 1, true, true) == NULL);
	EXPECT(!strcmp(mp_mailbox_why(&run, 2, false, false), MP_MAILBOX_WHY_NOT_ARRIVED));
	EXPECT(!strcmp(mp_mailbox_why(&run, 0, false, true), MP_MAILBOX_WHY_NO_CHECKIN));
}

TEST(mailbox_garbage_is_not_taken_and_the_wait_is_bounded)
{
	/* First look 0, then the firmware writes 2 (reserved) and never takes the command. */
	static const u16 cmds[] = { 0, 2 };
	bool asked[3];
	struct mp_mailbox_run run = { .asked = asked };

	fw_script(cmds, 2, 10);
	mp_mailbox_wake(&fw_ops, three_ids, 3, 0x9a048, 10, 25, &run, NULL);
	EXPECT(fw.posts == 1 && asked[0] && !asked[1] && !asked[2]);
	EXPECT(run.stopped && !strcmp(run.stopped, MP_MAILBOX_WHY_OUTSTANDING) && !run.last_taken);
	/* Posted at 10; given up at the first clock read past 35: 40, and one more look. */
	EXPECT(fw.clock == 50 && fw.reads == 5);
	EXPECT(!strcmp(mp_mailbox_why(&run, 0, false, false), MP_MAILBOX_WHY_NOT_TAKEN));
	EXPECT(!strcmp(mp_mailbox_why(&run, 1, false, false), MP_MAILBOX_WHY_OUTSTANDING));
}

TEST(mailbox_holding_a_command_is_never_written)
{
	static const u16 cmds[] = { 1, 0 };
	bool asked[3];
	struct mp_mailbox_run run = { .asked = asked };

	fw_script(cmds, 2, 10);
	mp_mailbox_wake(&fw_ops, three_ids, 3, 0x9a048, 10, 25, &run, NULL);
	EXPECT(fw.posts == 0 && !asked[0] && fw.reads == 1);
	EXPECT(run.stopped && !strcmp(run.stopped, MP_MAILBOX_WHY_HELD));
	EXPECT(!strcmp(mp_mailbox_why(&run, 2, false, false), MP_MAILBOX_WHY_HELD));
}

