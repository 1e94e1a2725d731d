/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of which MADT APIC IDs name a vCPU to start (kernel/smp_ids.c). */
#include "kernel/smp_ids.h"
#include "tests/unit/unit.h"

static struct smp_ids out;

TEST(honest_madt_boot_cpu_first_then_madt_order)
{
	const u32 madt[] = { 0, 1, 2, 3 };

	smp_ids_pick(madt, 4, 2, MAX_CPUS, &out);
	EXPECT_EQ(out.n, 4);
	EXPECT_EQ(out.ids[0], 2);
	EXPECT_EQ(out.ids[1], 0);
	EXPECT_EQ(out.ids[2], 1);
	EXPECT_EQ(out.ids[3], 3);
	EXPECT_EQ(out.distinct, 4);
	EXPECT_EQ(out.nduplicate, 0);
	EXPECT_EQ(out.nno_cpu, 0);
}

TEST(duplicates_started_once_and_named)
{
	/* An AP listed twice, the boot CPU listed twice (once is its own entry). */
	const u32 madt[] = { 1, 0, 1, 0, 2 };

	smp_ids_pick(madt, 5, 0, MAX_CPUS, &out);
	EXPECT_EQ(out.n, 3);
	EXPECT_EQ(out.ids[0], 0);
	EXPECT_EQ(out.ids[1], 1);
	EXPECT_EQ(out.ids[2], 2);
	EXPECT_EQ(out.distinct, 3);
	EXPECT_EQ(out.nduplicate, 2);
	EXPECT_EQ(out.duplicate[0], 1);
	EXPECT_EQ(out.duplicate[1], 0);
}

TEST(boot_cpu_not_listed_is_still_first_and_no_duplicate)
{
	const u32 madt[] = { 1 };

	smp_ids_pick(madt, 1, 0, MAX_CPUS, &out);
	EXPECT_EQ(out.n, 2);
	EXPECT_EQ(out.distinct, 2);
	EXPECT_EQ(out.nduplicate, 0);
}

TEST(broadcast_and_out_of_range_ids_never_started)
{
	const u32 madt[] = { 0xfffffffe, 0xffffffff, SMP_APIC_ID_LIMIT, SMP_APIC_ID_LIMIT - 1, 0, 1 };

	smp_ids_pick(madt, 6, 0, MAX_CPUS, &out);
	EXPECT_EQ(out.n, 3);
	EXPECT_EQ(out.ids[1], SMP_APIC_ID_LIMIT - 1);
	EXPECT_EQ(out.ids[2], 1);
	EXPECT_EQ(out.nno_cpu, 3);
	EXPECT_EQ(out.no_cpu[0], 0xfffffffe);
	EXPECT_EQ(out.no_cpu[1], 0xffffffff);
	EXPECT_EQ(out.no_cpu[2], SMP_APIC_ID_LIMIT);
	EXPECT_EQ(out.distinct, 3);
}

TEST(limit_bounds_ids_not_the_distinct_count)
{
	const u32 madt[] = { 0, 1, 2, 3, 1 };

	smp_ids_pick(madt, 5, 0, 2, &out);
	EXPECT_EQ(out.n, 2);
	EXPECT_EQ(out.ids[1], 1);
	EXPECT_EQ(out.distinct, 4);
	EXPECT_EQ(out.nduplicate, 1);
	/* A limit of 0 still keeps the boot CPU. */
	smp_ids_pick(madt, 5, 0, 0, &out);
	EXPECT_EQ(out.n, 1);
}

TEST(full_madt_of_distinct_aps_plus_unlisted_boot_cpu_fits)
{
	static u32 madt[MAX_CPUS];

	for (u32 i = 0; i < MAX_CPUS; i++)
		madt[i] = i + 1;
	smp_ids_pick(madt, MAX_CPUS, 0, MAX_CPUS, &out);
	EXPECT_EQ(out.distinct, MAX_CPUS + 1);
	EXPECT_EQ(out.n, MAX_CPUS);
	/* More entries than MAX_CPUS are not read. */
	smp_ids_pick(madt, MAX_CPUS + 5, 1, MAX_CPUS, &out);
	EXPECT_EQ(out.distinct, MAX_CPUS);
}
