/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the command-line parser (kernel/cmdline.c). */
#include <string.h>
#include "kernel/cmdline.h"
#include "lib/string.h"
#include "tests/unit/unit.h"

static int reports;
static char last[256];

static void report(const char *msg)
{
	reports++;
	snprintf(last, sizeof(last), "%s", msg);
}

static void parse(const char *line, struct config *c, bool test_image)
{
	reports = 0;
	last[0] = 0;
	cmdline_parse(line, c, test_image, report);
}

TEST(cmdline_defaults)
{
	struct config c;

	parse("", &c, false);
	EXPECT_EQ(c.policy, POLICY_LAZY);
	EXPECT_EQ(c.platform, PLAT_AUTO);
	EXPECT(!c.fake_set);
	EXPECT_EQ(c.accept_ahead, ACCEPT_AHEAD_DEFAULT);
	EXPECT_EQ(reports, 0);
	parse(NULL, &c, false);
	EXPECT_EQ(reports, 0);
}

TEST(cmdline_all_keys)
{
	struct config c;

	parse("  accept_memory=eager\tfake_unaccepted_start=1G platform=sim\n"
	      "workload=touch:64M accept_ahead=128M verbose=1", &c, false);
	EXPECT_EQ(reports, 0);
	EXPECT_EQ(c.policy, POLICY_EAGER);
	EXPECT(c.fake_set);
	EXPECT_EQ(c.fake_unaccepted_start, 1ULL << 30);
	EXPECT_EQ(c.platform, PLAT_SIM);
	EXPECT(strcmp(c.workload, "touch:64M") == 0);
	EXPECT_EQ(c.accept_ahead, 128ULL << 20);
	EXPECT(c.verbose);
}

/* The conformance report's probe sweep: edges by default, every page on request. */
TEST(cmdline_conformance_probe)
{
	struct config c;

	parse("workload=conformance", &c, false);
	EXPECT_EQ(c.conformance_probe, CONFORMANCE_PROBE_EDGES);
	parse("conformance_probe=full", &c, false);
	EXPECT_EQ(reports, 0);
	EXPECT_EQ(c.conformance_probe, CONFORMANCE_PROBE_FULL);
	parse("conformance_probe=everything", &c, false);
	EXPECT_EQ(reports, 1);
	EXPECT_EQ(c.conformance_probe, CONFORMANCE_PROBE_EDGES);
}

TEST(cmdline_bad_values_keep_defaults)
{
	struct config c;

	parse("accept_memory=sometimes", &c, false);
	EXPECT_EQ(reports, 1);
	EXPECT_EQ(c.policy, POLICY_LAZY);
	EXPECT(strstr(last, "accept_memory=sometimes") != NULL);

	parse("fake_unaccepted_start=12Q fake_unaccepted_start= fake_unaccepted_start=G", &c, false);
	EXPECT_EQ(reports, 3);
	EXPECT(!c.fake_set);

	parse("fake_unaccepted_start=99999999999999999999", &c, false);
	EXPECT_EQ(reports, 1);
	EXPECT(!c.fake_set);

	parse("fake_unaccepted_start=17179869184G", &c, false);	/* 2^64: overflows */
	EXPECT_EQ(reports, 1);
	EXPECT(!c.fake_set);
}

TEST(cmdline_odd_tokens)
{
	struct config c;
	char longtok[400];

	parse("hello =x novalue= = ==", &c, false);
	/* "hello", "=x", "=", "==" are not key=value; "novalue=" is an unknown key. */
	EXPECT_EQ(reports, 5);
	EXPECT_EQ(c.bad_options, 5);

	memset(longtok, 'a', sizeof(longtok) - 1);
	longtok[sizeof(longtok) - 1] = 0;
	parse(longtok, &c, false);
	EXPECT_EQ(reports, 1);
	EXPECT(strstr(last, "longer than") != NULL);

	/* Later options win; a bad one in between changes nothing. */
	parse("accept_memory=eager accept_memory=bogus", &c, false);
	EXPECT_EQ(c.policy, POLICY_EAGER);
	parse("accept_memory=eager accept_memory=lazy", &c, false);
	EXPECT_EQ(c.policy, POLICY_LAZY);
}

TEST(cmdline_test_image_options)
{
	struct config c;

	parse("platform=tdx-emu test=ud emu_fault=busy:3", &c, false);
	EXPECT_EQ(reports, 3);
	EXPECT_EQ(c.platform, PLAT_AUTO);
	EXPECT_EQ(c.test[0], 0);
	EXPECT_EQ(c.emu_fault[0], 0);

	parse("platform=snp-emu test=ud emu_fault=busy:3", &c, true);
	EXPECT_EQ(reports, 0);
	EXPECT_EQ(c.platform, PLAT_SNP_EMU);
	EXPECT(strcmp(c.test, "ud") == 0);
	EXPECT(strcmp(c.emu_fault, "busy:3") == 0);
	EXPECT_EQ(c.emu_host, EMU_HOST_KVM);
}

TEST(cmdline_emu_svsm)
{
	struct config c;

	parse("", &c, true);
	EXPECT_EQ(c.emu_svsm, EMU_SVSM_NONE);
	parse("emu_svsm=1", &c, true);
	EXPECT_EQ(reports, 0);
	EXPECT_EQ(c.emu_svsm, EMU_SVSM_PRESENT);
	parse("emu_svsm=absent", &c, true);
	EXPECT_EQ(c.emu_svsm, EMU_SVSM_ABSENT);
	EXPECT_EQ(c.emu_svsm_vmpl, 1);
	parse("emu_svsm=2", &c, true);
	EXPECT_EQ(reports, 0);
	EXPECT_EQ(c.emu_svsm, EMU_SVSM_PRESENT);
	EXPECT_EQ(c.emu_svsm_vmpl, 2);
	parse("emu_svsm=3", &c, true);
	EXPECT_EQ(reports, 1);
	EXPECT_EQ(c.emu_svsm, EMU_SVSM_NONE);
	parse("emu_svsm=1", &c, false);
	EXPECT_EQ(reports, 1);
	EXPECT_EQ(c.emu_svsm, EMU_SVSM_NONE);
}

TEST(cmdline_emu_host)
{
	struct config c;

	parse("emu_host=huge", &c, true);
	EXPECT_EQ(reports, 0);
	EXPECT_EQ(c.emu_host, EMU_HOST_HUGE);
	parse("emu_host=kvm", &c, true);
	EXPECT_EQ(c.emu_host, EMU_HOST_KVM);
	parse("emu_host=tiny", &c, true);
	EXPECT_EQ(reports, 1);
	EXPECT_EQ(c.emu_host, EMU_HOST_KVM);
	parse("emu_host=huge", &c, false);
	EXPECT_EQ(reports, 1);
	EXPECT_EQ(c.emu_host, EMU_HOST_KVM);
}

TEST(parse_size_cases)
{
	u64 v;

	EXPECT(parse_size("0", 1, &v) && v == 0);
	EXPECT(parse_size("4096", 4, &v) && v == 4096);
	EXPECT(parse_size("4k", 2, &v) && v == 4096);
	EXPECT(parse_size("3M", 2, &v) && v == 3ULL << 20);
	EXPECT(parse_size("256G", 4, &v) && v == 256ULL << 30);
	EXPECT(parse_size("2T", 2, &v) && v == 2ULL << 40);
	EXPECT(parse_size("16777215T", 9, &v) && v == 16777215ULL << 40);
	EXPECT(!parse_size("16777216T", 9, &v));
	EXPECT(!parse_size("", 0, &v));
	EXPECT(!parse_size("M", 1, &v));
	EXPECT(!parse_size("1MB", 3, &v));
	EXPECT(!parse_size("-1", 2, &v));
	EXPECT(!parse_size("0x10", 4, &v));
	EXPECT(!parse_size("18446744073709551616", 20, &v));
	EXPECT(parse_size("18446744073709551615", 20, &v) && v == UINT64_MAX);
}

TEST(cmdline_cpus)
{
	struct config c;

	parse("cpus=2", &c, false);
	EXPECT_EQ(reports, 0);
	EXPECT_EQ(c.cpus, 2);
	/* 0, suffixes, junk and absurd counts keep the default (all CPUs). */
	const char *bad[] = { "cpus=0", "cpus=4k", "cpus=-1", "cpus=", "cpus=99999", "cpus=2x" };

	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		parse(bad[i], &c, false);
		EXPECT_EQ(reports, 1);
		EXPECT_EQ(c.cpus, 0);
	}
	parse("smp_phantom=1", &c, true);
	EXPECT_EQ(c.smp_phantom, 1);
	parse("smp_phantom=1", &c, false);
	EXPECT_EQ(reports, 1);
	EXPECT_EQ(c.smp_phantom, 0);
}
