/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the AP start-up decisions: the CPU family, and which CPUs need the wait after INIT. */
#include "arch/x86/smp.h"
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
