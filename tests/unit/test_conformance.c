/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the firmware conformance rules and the ACPI walk on crafted maps and tables. */
#include <stdio.h>
#include <string.h>
#include "kernel/conformance.h"
#include "kernel/mp_wakeup.h"
#include "mm/memmap.h"
#include "tests/unit/unit.h"

#define MAXD 64
#define WB (1ULL << 3)
#define SP (1ULL << 18)
#define RUNTIME (1ULL << 63)

/* ---------------------------------------------------------------- crafted maps */

static struct {
	u8 buf[MAXD * 64];
	u64 size, stride;
} rm;

static void map_new(u64 stride)
{
	memset(&rm, 0, sizeof(rm));
	rm.stride = stride;
}

static void add_attr(u32 type, u64 start, u64 bytes, u64 attr)
{
	struct efi_mem_desc d = { type, 0, start, 0, bytes >> EFI_PAGE_SHIFT, attr };
	u8 *p = rm.buf + rm.size;

	/* Bytes past the 40 the rules know are garbage, as firmware may leave them. */
	memset(p, 0xa5, rm.stride);
	memcpy(p, &d, MIN(sizeof(d), rm.stride));
	rm.size += rm.stride;
}

static void add(u32 type, u64 start, u64 bytes)
{
	add_attr(type, start, bytes, WB);
}

/*
 * A TDVF-like map of a 6 GiB TD: everything below 4 GiB accepted, RAM above 4 GiB
 * unaccepted and 2 MiB aligned; from 640 KiB to past the SEC page tables its APs wait on
 * (0x800000-0x806000) reserved, as TDVF since edk2-stable202411 reports them.
 */
#define TDVF_RESERVED_END (8 * MiB + 24 * KiB)
static void tdvf_map(void)
{
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, 640 * KiB);
	add(EFI_RESERVED_MEMORY, 640 * KiB, TDVF_RESERVED_END - 640 * KiB);
	add(EFI_CONVENTIONAL_MEMORY, TDVF_RESERVED_END, 1 * GiB + 1 * MiB - TDVF_RESERVED_END);
	add(EFI_BOOT_SERVICES_DATA, 1 * MiB + 1 * GiB, 64 * MiB);
	add(EFI_ACPI_RECLAIM_MEMORY, 1 * MiB + 1 * GiB + 64 * MiB, 1 * MiB);
	add_attr(EFI_MEMORY_MAPPED_IO, 0xffc00000, 4 * MiB, RUNTIME);
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 2 * GiB);
}

static struct conformance_input in;
static struct conformance_check out[CONFORMANCE_MAX_CHECKS];
static u64 scratch[CONFORMANCE_MAX_DESC];
static unsigned nout;

/* Every input a fully conforming TDX firmware would produce. */
static void good_tdx(void)
{
	tdvf_map();
	memset(&in, 0, sizeof(in));
	in.desc_size = rm.stride;
	in.desc_version = EFI_MEM_DESC_VERSION;
	in.platform = DETECTED_TDX;
	in.snp_protocol = SNP_PROTOCOL_NOT_APPLICABLE;
	in.ebs_attempts = 1;
	in.ebs_last_call_us = 800;
	in.ebs_total_us = 900;
	in.tsc_hz = 2000000000ULL;
	in.tsc_at_entry = 3 * in.tsc_hz;	/* 3 s of firmware */
	in.efi_tables = 1u << EFI_TABLE_ACPI20 | 1u << EFI_TABLE_SMBIOS3 | 1u << EFI_TABLE_CC_FINAL_EVENTS;
	in.efi_table_count = 9;
	in.acpi.rsdp = in.acpi.xsdt = in.acpi.madt = ACPI_OK;
	in.acpi.rsdp_revision = 2;
	in.acpi.mp_wakeup = 1;
	in.phys_bits = 46;
	in.tdx_shared_bit = 1ULL << 46;
	in.fw_vendor = "EDK II";
}

/* The first map of the ExitBootServices loop, as boot/efi_main.c summarises it: this one. */
static void first_map_is_final(void)
{
	in.ebs_first_desc = (u32)(rm.size / rm.stride);

	struct unacc_summary u = conformance_unacc_summary(rm.buf, rm.size / rm.stride, rm.stride);

	in.ebs_first_unacc_desc = u.desc;
	in.ebs_first_unacc_bytes = u.bytes;
	in.ebs_first_unacc_hash = u.hash;
	in.ebs_first_unacc_lo = u.lo;
	in.ebs_first_unacc_hi = u.hi;
}

static void good_snp(void)
{
	good_tdx();
	in.platform = DETECTED_SNP;
	in.snp_protocol = SNP_PROTOCOL_CALLED;
	in.efi_tables = 1u << EFI_TABLE_ACPI20 | 1u << EFI_TABLE_SMBIOS | 1u << EFI_TABLE_CC_BLOB;
	in.acpi.mp_wakeup = 0;
	in.tdx_shared_bit = 0;
	/* The secrets and CPUID pages, in reserved memory below 1 MiB. */
	in.cc_secrets = 0xa0000;
	in.cc_secrets_len = 4096;
	in.cc_cpuid = 0xa1000;
	in.cc_cpuid_len = 4096;
	/* The boot vCPU's GHCB, registered in the GHCB MSR, reserved as OVMF reserves it. */
	in.fw_ghcb_known = true;
	in.fw_ghcb_msr = 0xa2000;
}

static void run(void)
{
	in.map = rm.buf;
	in.map_size = rm.size;
	memset(out, 0, sizeof(out));
	nout = conformance_evaluate(&in, out, CONFORMANCE_MAX_CHECKS, scratch);
	/* Whatever the input: a verdict that matches the rule's level, and a source. */
	for (unsigned i = 0; i < nout; i++) {
		u32 v = out[i].verdict, l = out[i].level;

		EXPECT(out[i].r && out[i].rule == out[i].r->id && out[i].source == out[i].r->source);
		EXPECT(v != VERDICT_FAIL || l == LEVEL_MUST);
		EXPECT(v != VERDICT_WARN || l == LEVEL_SHOULD);
		EXPECT(v != VERDICT_INFO || l == LEVEL_INFO);
		EXPECT(v != VERDICT_PASS || l != LEVEL_INFO);
	}
}

static const struct conformance_check *find(const char *rule)
{
	for (unsigned i = 0; i < nout; i++)
		if (strcmp(out[i].rule, rule) == 0)
			return &out[i];
	return NULL;
}

/* The verdict of one rule; a rule that was not reported counts as a failed check. */
static u32 verdict(const char *rule)
{
	const struct conformance_check *c = find(rule);

	if (!EXPECT(c != NULL))
		fprintf(stderr, "  rule %s not reported\n", rule);
	return c ? c->verdict : VERDICT_COUNT;
}

static bool detail_has(const char *rule, const char *text)
{
	const struct conformance_check *c = find(rule);

	return c && strstr(c->detail, text);
}

/* Every rule passes (or does not apply) on a conforming firmware: the baseline every test breaks. */
TEST(conforming_tdx_all_pass)
{
	good_tdx();
	run();
	ASSERT(nout >= 30);
	for (unsigned i = 0; i < nout; i++) {
		EXPECT(out[i].verdict == VERDICT_PASS || out[i].verdict == VERDICT_NA ||
		       out[i].verdict == VERDICT_INFO);
		EXPECT(out[i].source && out[i].source[0]);
		EXPECT(out[i].detail[0]);
		if (out[i].verdict == VERDICT_FAIL || out[i].verdict == VERDICT_WARN)
			fprintf(stderr, "  %s: %s\n", out[i].rule, out[i].detail);
	}
	EXPECT_EQ(verdict("acpi.mp_wakeup"), VERDICT_PASS);
	EXPECT_EQ(verdict("unaccepted.below_4g"), VERDICT_INFO);
	EXPECT_EQ(verdict("unaccepted.sp"), VERDICT_PASS);
	EXPECT_EQ(verdict("unaccepted.addr_width"), VERDICT_PASS);
	EXPECT_EQ(verdict("unaccepted.stable"), VERDICT_NA);	/* first map not recorded */
	EXPECT_EQ(verdict("efi.cc_final_events"), VERDICT_PASS);
	EXPECT_EQ(verdict("snp.optin_present"), VERDICT_NA);
	EXPECT(detail_has("boot.reset_to_efi_main", "3000 ms"));
}

TEST(conforming_snp_all_pass)
{
	good_snp();
	run();
	for (unsigned i = 0; i < nout; i++)
		EXPECT(out[i].verdict == VERDICT_PASS || out[i].verdict == VERDICT_NA ||
		       out[i].verdict == VERDICT_INFO);
	EXPECT_EQ(verdict("snp.optin_present"), VERDICT_PASS);
	EXPECT_EQ(verdict("snp.cc_pages"), VERDICT_PASS);
	EXPECT_EQ(verdict("snp.optin_honoured"), VERDICT_PASS);
	EXPECT_EQ(verdict("snp.ghcb_reserved"), VERDICT_PASS);
	EXPECT_EQ(verdict("efi.cc_blob"), VERDICT_PASS);
	EXPECT_EQ(verdict("acpi.mp_wakeup"), VERDICT_NA);
}

TEST(desc_size_and_version)
{
	good_tdx();
	in.desc_size = 36;	/* shorter than EFI_MEMORY_DESCRIPTOR */
	run();
	EXPECT_EQ(verdict("map.desc_size"), VERDICT_FAIL);
	EXPECT_EQ(verdict("map.overlap"), VERDICT_NA);
	EXPECT_EQ(verdict("unaccepted.alignment"), VERDICT_NA);

	/* UEFI asks only for at least 40 bytes: 44 is a SHOULD (memaccept's own), not a MUST. */
	map_new(44);
	add(EFI_CONVENTIONAL_MEMORY, 0, 640 * KiB);
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 2 * GiB);
	good_tdx();
	map_new(44);
	add(EFI_CONVENTIONAL_MEMORY, 0, 640 * KiB);
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 2 * GiB);
	in.desc_size = 44;
	run();
	EXPECT_EQ(verdict("map.desc_size"), VERDICT_PASS);
	EXPECT_EQ(verdict("map.desc_align"), VERDICT_WARN);
	EXPECT(find("map.desc_align") && find("map.desc_align")->r->own);
	EXPECT_EQ(verdict("unaccepted.platform"), VERDICT_PASS);

	good_tdx();
	rm.size -= 8;		/* a torn last descriptor */
	run();
	EXPECT_EQ(verdict("map.desc_size"), VERDICT_FAIL);

	good_tdx();
	in.desc_version = 2;
	run();
	EXPECT_EQ(verdict("map.desc_version"), VERDICT_FAIL);
	EXPECT_EQ(verdict("map.desc_size"), VERDICT_PASS);
}

TEST(alignment_zero_pages_wrap)
{
	good_tdx();
	add(EFI_CONVENTIONAL_MEMORY, 8 * GiB + 0x800, 4 * KiB);
	run();
	EXPECT_EQ(verdict("map.alignment"), VERDICT_FAIL);
	EXPECT(detail_has("map.alignment", "descriptor 7"));

	good_tdx();
	add(EFI_CONVENTIONAL_MEMORY, 8 * GiB, 0);
	run();
	EXPECT_EQ(verdict("map.alignment"), VERDICT_FAIL);

	good_tdx();
	add(EFI_CONVENTIONAL_MEMORY, ~0ULL - 0xfff, 8 * KiB);	/* wraps past 2^64 */
	run();
	EXPECT_EQ(verdict("map.alignment"), VERDICT_FAIL);
	EXPECT(detail_has("map.alignment", "1 wrapping"));
}

TEST(sorted_and_overlap)
{
	good_tdx();
	add(EFI_CONVENTIONAL_MEMORY, 7 * GiB, 4 * KiB);
	add(EFI_CONVENTIONAL_MEMORY, 6 * GiB + 1 * MiB, 4 * KiB);	/* below its predecessor */
	run();
	EXPECT_EQ(verdict("map.sorted"), VERDICT_INFO);	/* allowed: edk2's own order */
	EXPECT(detail_has("map.sorted", "descriptor 8 [0x180100000, "));
	EXPECT_EQ(verdict("map.overlap"), VERDICT_PASS);

	/* Conventional memory inside the unaccepted range, listed after it. */
	good_tdx();
	add(EFI_CONVENTIONAL_MEMORY, 5 * GiB, 2 * MiB);
	run();
	EXPECT_EQ(verdict("map.overlap"), VERDICT_FAIL);
	EXPECT(detail_has("map.overlap", "descriptors 6 and 7"));

	/* Touching is not overlapping. */
	good_tdx();
	add(EFI_CONVENTIONAL_MEMORY, 6 * GiB, 2 * MiB);
	run();
	EXPECT_EQ(verdict("map.overlap"), VERDICT_PASS);
}

TEST(unaccepted_attributes)
{
	good_tdx();
	add_attr(EFI_UNACCEPTED_MEMORY, 8 * GiB, 2 * MiB, WB | RUNTIME);
	run();
	EXPECT_EQ(verdict("unaccepted.runtime"), VERDICT_FAIL);
	EXPECT_EQ(verdict("unaccepted.wb"), VERDICT_INFO);
	EXPECT(detail_has("unaccepted.wb", "0 of 2"));

	good_tdx();
	add_attr(EFI_UNACCEPTED_MEMORY, 8 * GiB, 2 * MiB, 0);
	run();
	/* TDVF under QEMU: type 15 from TD HOB resources, no cacheability. A fact, no warning. */
	EXPECT_EQ(verdict("unaccepted.wb"), VERDICT_INFO);
	EXPECT(detail_has("unaccepted.wb", "1 of 2"));
	EXPECT_EQ(verdict("unaccepted.runtime"), VERDICT_PASS);

	/* Special-purpose memory handed over as type 15: Linux would make it general RAM. */
	good_tdx();
	add_attr(EFI_UNACCEPTED_MEMORY, 8 * GiB, 2 * MiB, WB | SP);
	run();
	EXPECT_EQ(verdict("unaccepted.sp"), VERDICT_FAIL);
	EXPECT(detail_has("unaccepted.sp", "1 of 2 type 15"));
}

TEST(unaccepted_alignment)
{
	good_tdx();
	add(EFI_UNACCEPTED_MEMORY, 8 * GiB + 4 * KiB, 4 * MiB);
	run();
	EXPECT_EQ(verdict("unaccepted.alignment"), VERDICT_WARN);
	/* Exactly 2 units long, misaligned: 2 MiB - 4 KiB at the head, 4 KiB at the tail. */
	EXPECT(detail_has("unaccepted.alignment", "2048 KiB from 0x200001000"));
	EXPECT(detail_has("unaccepted.alignment", "1 with partial units"));
}

/*
 * Linux passes each descriptor on its own to process_unaccepted_memory: two adjacent 1 MiB
 * descriptors are two pieces shorter than 2 units, both accepted whole at boot. The old
 * verdict merged them into one aligned range and passed.
 */
TEST(alignment_per_descriptor_as_linux)
{
	good_tdx();
	add(EFI_UNACCEPTED_MEMORY, 8 * GiB, 1 * MiB);
	add(EFI_UNACCEPTED_MEMORY, 8 * GiB + 1 * MiB, 1 * MiB);
	run();
	EXPECT_EQ(verdict("unaccepted.alignment"), VERDICT_WARN);
	EXPECT(detail_has("unaccepted.alignment", "2 of 3 descriptor(s) leave 2048 KiB from 0x200000000"));
	EXPECT(detail_has("unaccepted.alignment", "2048 KiB from 0x200000000"));
	EXPECT(detail_has("unaccepted.alignment", "2 shorter than 2 units"));
	/* On TDX every kernel copes: it costs boot time only. */
	EXPECT_EQ(verdict("linux.v6_5"), VERDICT_PASS);
	EXPECT(detail_has("linux.v6_5", "accepts 2 MiB at boot"));

	/* A 2 MiB aligned descriptor of 2 MiB is still shorter than 2 units: accepted whole. */
	good_tdx();
	add(EFI_UNACCEPTED_MEMORY, 8 * GiB, 2 * MiB);
	run();
	EXPECT_EQ(verdict("unaccepted.alignment"), VERDICT_WARN);
	EXPECT(detail_has("unaccepted.alignment", "1 shorter than 2 units"));

	/* On SEV-SNP the stub had to accept and could not before v6.15 (d54d610243a4). */
	good_snp();
	add(EFI_UNACCEPTED_MEMORY, 8 * GiB, 1 * MiB);
	run();
	EXPECT_EQ(verdict("linux.v6_5"), VERDICT_FAIL);
	EXPECT_EQ(verdict("linux.v6_14"), VERDICT_FAIL);
	EXPECT(detail_has("linux.v6_14", "cannot accept the 1024 KiB"));
	EXPECT_EQ(verdict("linux.v6_15"), VERDICT_PASS);
	EXPECT_EQ(verdict("linux.2026"), VERDICT_PASS);
	in.svsm = true;	/* under an SVSM not before 8ed12ab1319b, which is in v6.15 (rc5) */
	run();
	EXPECT_EQ(verdict("linux.v6_14"), VERDICT_FAIL);
	EXPECT(detail_has("linux.v6_14", "under an SVSM"));
	EXPECT_EQ(verdict("linux.v6_15"), VERDICT_PASS);
	EXPECT_EQ(verdict("linux.2026"), VERDICT_PASS);
}

/* With a firmware-installed table Linux works in that table's unit, not 2 MiB. */
TEST(alignment_in_the_table_unit)
{
	static u8 bits[128];

	good_tdx();
	memset(bits, 0xff, sizeof(bits));
	in.efi_tables |= 1u << EFI_TABLE_LINUX_UNACCEPTED;
	in.lut = (struct linux_unaccepted_facts){
		.present = true, .readable = true, .addr = 1 * MiB + 1 * GiB + 64 * MiB,
		.version = 1, .unit_size = 4 * MiB, .phys_base = 4 * GiB, .size = 64, .bitmap = bits,
	};
	add(EFI_UNACCEPTED_MEMORY, 8 * GiB + 2 * MiB, 8 * MiB);	/* 2 MiB aligned, not 4 MiB */
	run();
	EXPECT_EQ(verdict("unaccepted.alignment"), VERDICT_WARN);
	EXPECT(detail_has("unaccepted.alignment", "units of 4096 KiB"));
	EXPECT(detail_has("unaccepted.alignment", "8192 KiB from 0x200200000"));	/* and past the table */
	EXPECT_EQ(verdict("efi.linux_unaccepted_placement"), VERDICT_WARN);	/* unit not 2 MiB */
}

TEST(unaccepted_low_memory)
{
	/* Below 4 GiB is OVMF's policy, reported, never judged. */
	good_tdx();
	add(EFI_UNACCEPTED_MEMORY, 2 * GiB, 2 * MiB);
	run();
	EXPECT_EQ(verdict("unaccepted.below_4g"), VERDICT_INFO);
	EXPECT(detail_has("unaccepted.below_4g", "2 MiB below 4 GiB"));
	EXPECT_EQ(verdict("unaccepted.below_1m"), VERDICT_PASS);

	/* Below 1 MiB: memaccept's own SHOULD (its AP start-up pages), not a MUST. */
	good_snp();
	add(EFI_UNACCEPTED_MEMORY, 512 * KiB, 64 * KiB);
	run();
	EXPECT_EQ(verdict("unaccepted.below_1m"), VERDICT_WARN);
	EXPECT(find("unaccepted.below_1m") && find("unaccepted.below_1m")->r->own);
	EXPECT(find("unaccepted.below_4g") && strstr(find("unaccepted.below_4g")->source, "AmdSev"));
}

TEST(unaccepted_without_platform)
{
	good_tdx();
	in.platform = DETECTED_NONE;
	run();
	EXPECT_EQ(verdict("unaccepted.platform"), VERDICT_FAIL);
	EXPECT_EQ(verdict("unaccepted.below_4g"), VERDICT_NA);
	EXPECT_EQ(verdict("acpi.mp_wakeup"), VERDICT_NA);	/* the wakeup rule is TDX's */

	/* No type 15 at all: the unaccepted rules do not apply. */
	good_tdx();
	rm.size -= rm.stride;
	in.platform = DETECTED_NONE;
	run();
	EXPECT_EQ(verdict("unaccepted.platform"), VERDICT_NA);
	EXPECT_EQ(verdict("unaccepted.runtime"), VERDICT_NA);
	EXPECT_EQ(verdict("unaccepted.sp"), VERDICT_NA);
}

TEST(snp_optin)
{
	/* No protocol and no type 15: OVMF's accept-everything path. */
	good_snp();
	rm.size -= rm.stride;
	add(EFI_CONVENTIONAL_MEMORY, 4 * GiB, 2 * GiB);
	in.snp_protocol = SNP_PROTOCOL_ABSENT;
	run();
	EXPECT_EQ(verdict("snp.optin_present"), VERDICT_WARN);
	EXPECT(detail_has("snp.optin_present", "no type 15"));
	EXPECT_EQ(verdict("snp.optin_honoured"), VERDICT_NA);

	/* OVMF's AllowUnacceptedMemory never fails; another firmware's may: it then accepts all. */
	good_snp();
	rm.size -= rm.stride;
	in.snp_protocol = SNP_PROTOCOL_FAILED;
	run();
	EXPECT_EQ(verdict("snp.optin_present"), VERDICT_WARN);
	EXPECT(detail_has("snp.optin_present", "returned an error"));

	/* Opted in, RAM above 4 GiB, and still no type 15: slow, but no guest breaks. */
	good_snp();
	rm.size -= rm.stride;
	add(EFI_CONVENTIONAL_MEMORY, 4 * GiB, 2 * GiB);
	run();
	EXPECT_EQ(verdict("snp.optin_honoured"), VERDICT_WARN);

	/* ... but with no RAM above 4 GiB there was nothing to leave unaccepted. */
	good_snp();
	rm.size -= rm.stride;
	run();
	EXPECT_EQ(verdict("snp.optin_honoured"), VERDICT_NA);

	/*
	 * ... nor when the only RAM above 4 GiB is special-purpose: newer edk2 validates it in
	 * place instead of leaving it unaccepted (AmdSevSnpInitialize, pull request 12774).
	 */
	good_snp();
	rm.size -= rm.stride;
	add_attr(EFI_CONVENTIONAL_MEMORY, 4 * GiB, 2 * GiB, WB | SP);
	run();
	EXPECT_EQ(verdict("snp.optin_honoured"), VERDICT_NA);
}

/*
 * No protocol, yet type 15 in the map: the firmware hands memory over unaccepted without
 * being asked, the end state Linux c0461bd16666 names. The old verdict claimed the firmware
 * "accepts all memory before handing over" without looking at the map.
 */
TEST(snp_optin_present_looks_at_the_map)
{
	good_snp();
	in.snp_protocol = SNP_PROTOCOL_ABSENT;
	run();
	EXPECT_EQ(verdict("snp.optin_present"), VERDICT_PASS);
	EXPECT(detail_has("snp.optin_present", "2048 MiB of type 15: handed over unaccepted"));
	EXPECT(!detail_has("snp.optin_present", "accepts all memory"));
	EXPECT_EQ(verdict("linux.no_unaccepted"), VERDICT_INFO);
	EXPECT(detail_has("linux.no_unaccepted", "2048 MiB of type 15 not used as RAM"));
}

/* OVMF on SNP accepts everything in the first ExitBootServices call, which then fails. */
TEST(ebs_duration_counts_the_failed_first_call)
{
	good_snp();
	first_map_is_final();
	in.ebs_attempts = 2;
	in.ebs_last_call_us = 900;			/* the retry is quick */
	in.ebs_total_us = 3 * 1000 * 1000;		/* the first call accepted for 3 s */
	run();
	EXPECT_EQ(verdict("ebs.duration"), VERDICT_WARN);
	EXPECT(detail_has("ebs.duration", "3000000 us over 2 call(s)"));
}

/* Linux's map slack: 8 spare descriptors until v6.13, 32 from v6.14 (ec4696925da6). */
TEST(ebs_slack_per_kernel_version)
{
	good_snp();
	first_map_is_final();
	for (u64 i = 0; i < 20; i++)
		add(EFI_BOOT_SERVICES_DATA, 16 * GiB + i * 8 * KiB, 4 * KiB);
	in.ebs_attempts = 2;
	run();
	EXPECT_EQ(verdict("ebs.attempts"), VERDICT_FAIL);
	EXPECT_EQ(verdict("linux.v6_5"), VERDICT_FAIL);
	EXPECT(detail_has("linux.v6_5", "grew by 20, the retry has 8"));
	EXPECT_EQ(verdict("linux.v6_14"), VERDICT_PASS);
	EXPECT_EQ(verdict("linux.2026"), VERDICT_PASS);
	for (u64 i = 20; i < 33; i++)
		add(EFI_BOOT_SERVICES_DATA, 16 * GiB + i * 8 * KiB, 4 * KiB);
	run();
	EXPECT_EQ(verdict("linux.v6_14"), VERDICT_FAIL);
	EXPECT_EQ(verdict("linux.2026"), VERDICT_FAIL);
	EXPECT(detail_has("linux.2026", "grew by 33, the retry has 32"));
}

/* Per profile: what Linux accepts at boot, the bitmap it allocates, where it stops. */
TEST(linux_profiles_say_what_the_kernel_does)
{
	good_tdx();
	run();
	/* [4 GiB, 6 GiB): 1024 units, a 128-byte bitmap, nothing at boot. */
	EXPECT_EQ(verdict("linux.2026"), VERDICT_PASS);
	EXPECT(detail_has("linux.2026", "accepts 0 MiB at boot, 2048 MiB later; bitmap 128 bytes; boots"));

	/* Type 15 the firmware had accepted: TDX Linux panics on the accept. */
	good_tdx();
	in.unacc_ranges = in.unacc_ranges_probed = 1;
	in.unacc_pages = 512;
	in.unacc_pages_accepted = 1;
	in.unacc_first_accepted = 4 * GiB;
	run();
	EXPECT_EQ(verdict("linux.v6_5"), VERDICT_FAIL);
	EXPECT(detail_has("linux.v6_5", "panics accepting 0x100000000"));

	/* RAM the firmware never accepted: every kernel stops at its first touch. */
	good_snp();
	in.probed = 4;
	in.probe_not_accepted = 1;
	in.probe_first_bad = 0x809000;
	run();
	EXPECT_EQ(verdict("linux.2026"), VERDICT_FAIL);
	EXPECT(detail_has("linux.2026", "first touch of 0x809000"));
	EXPECT(detail_has("linux.no_unaccepted", "first touch of 0x809000"));

	/* Three ExitBootServices calls: every kernel's stub gives up. */
	good_tdx();
	in.ebs_attempts = 3;
	run();
	EXPECT_EQ(verdict("linux.2026"), VERDICT_FAIL);
}

/*
 * The GetMemoryMap() size handshake: given the size it asked for, the firmware must write
 * no more (edk2 before pull request 11609 left type 15 entries out of that size).
 */
TEST(map_size_handshake)
{
	good_tdx();
	run();
	EXPECT_EQ(verdict("map.size_handshake"), VERDICT_NA);

	good_tdx();
	in.map_handshake = MAP_HANDSHAKE_OK;
	run();
	EXPECT_EQ(verdict("map.size_handshake"), VERDICT_PASS);

	good_tdx();
	in.map_handshake = MAP_HANDSHAKE_OVERFLOW | 96u << 16;	/* two 48-byte descriptors */
	run();
	EXPECT_EQ(verdict("map.size_handshake"), VERDICT_FAIL);
	EXPECT(detail_has("map.size_handshake", "wrote 96 bytes more"));

	good_tdx();
	in.map_handshake = MAP_HANDSHAKE_TOO_SMALL;
	run();
	EXPECT_EQ(verdict("map.size_handshake"), VERDICT_FAIL);

	/* Judged even when the map itself cannot be read. */
	good_tdx();
	in.map_handshake = MAP_HANDSHAKE_OK;
	in.desc_size = 24;
	run();
	EXPECT_EQ(verdict("map.size_handshake"), VERDICT_PASS);
}

/* Type 15 is no memory a loader can allocate (UEFI 2.9 section 7.2). */
TEST(map_alloc_type15_refused)
{
	good_tdx();
	run();
	EXPECT_EQ(verdict("map.alloc_type15"), VERDICT_NA);

	good_tdx();
	in.map_handshake = FW_ALLOC15_CHECKED | FW_ALLOC15_ADDR_TRIED;
	run();
	EXPECT_EQ(verdict("map.alloc_type15"), VERDICT_PASS);
	EXPECT(detail_has("map.alloc_type15", "AllocateAddress into type 15 refused"));

	good_tdx();
	in.map_handshake = FW_ALLOC15_CHECKED | FW_ALLOC15_POOL;	/* Debian's OVMF 2022.11 */
	run();
	EXPECT_EQ(verdict("map.alloc_type15"), VERDICT_WARN);
	EXPECT(detail_has("map.alloc_type15", "AllocatePool of type 15 granted"));

	good_tdx();
	in.map_handshake = FW_ALLOC15_CHECKED | FW_ALLOC15_ADDR_TRIED | FW_ALLOC15_ADDR |
			   MAP_HANDSHAKE_OK;
	run();
	EXPECT_EQ(verdict("map.alloc_type15"), VERDICT_WARN);
	EXPECT(detail_has("map.alloc_type15", "unaccepted memory handed to the loader"));
	EXPECT_EQ(verdict("map.size_handshake"), VERDICT_PASS);	/* the fields do not mix */
}

/* The accepted-memory probe says what it swept: the edges, or every free page too. */
TEST(accepted_probe_scope)
{
	good_snp();
	in.probed = 12;
	in.probe_descs = 6;
	run();
	EXPECT(detail_has("accepted.probe", "12 page(s) of accepted memory probed (the first and last page of 6 descriptors)"));
	in.probe_full = true;
	in.probed = 510914;
	run();
	EXPECT(detail_has("accepted.probe", "510914 page(s) of accepted memory probed (every free page; the first and last page of 6"));
	in.unacc_ranges = in.unacc_ranges_probed = 1;
	in.unacc_full = true;
	in.unacc_pages = 524288;
	run();
	EXPECT(detail_has("unaccepted.probe", "524288 page(s) probed, every whole unit of 1 of 1"));
}

TEST(exit_boot_services)
{
	/* A second call is what Linux's stub allows: one retry. */
	good_snp();
	first_map_is_final();
	in.ebs_attempts = 2;
	run();
	EXPECT_EQ(verdict("ebs.attempts"), VERDICT_PASS);
	EXPECT(detail_has("ebs.attempts", "2 calls"));
	EXPECT_EQ(verdict("ebs.duration"), VERDICT_PASS);

	/* A third is not: memaccept would retry, Linux gives up. */
	good_snp();
	in.ebs_attempts = 3;
	run();
	EXPECT_EQ(verdict("ebs.attempts"), VERDICT_FAIL);

	/* Two calls, but the map grew past the 8 spare descriptors of Linux's buffer. */
	good_snp();
	first_map_is_final();
	for (u64 i = 0; i < 9; i++)
		add(EFI_BOOT_SERVICES_DATA, 16 * GiB + i * 8 * KiB, 4 * KiB);
	in.ebs_attempts = 2;
	run();
	EXPECT_EQ(verdict("ebs.attempts"), VERDICT_FAIL);
	EXPECT(detail_has("ebs.attempts", "grew by 9"));
	in.ebs_first_desc += 1;	/* by 8: just fits */
	run();
	EXPECT_EQ(verdict("ebs.attempts"), VERDICT_PASS);

	good_snp();
	in.ebs_last_call_us = 4 * 1000 * 1000;	/* accepting 64 GiB inside the call */
	run();
	EXPECT_EQ(verdict("ebs.duration"), VERDICT_WARN);
}

TEST(reset_to_efi_main)
{
	good_tdx();
	in.tsc_at_entry = 3600 * in.tsc_hz;	/* an hour: the TSC did not start at reset */
	run();
	EXPECT_EQ(verdict("boot.reset_to_efi_main"), VERDICT_NA);

	good_tdx();
	in.tsc_hz = 0;
	run();
	EXPECT_EQ(verdict("boot.reset_to_efi_main"), VERDICT_NA);

	/* Large TSC values must not overflow the conversion. */
	good_tdx();
	in.tsc_hz = 4000000000ULL;
	in.tsc_at_entry = 299 * in.tsc_hz + in.tsc_hz / 2;
	run();
	EXPECT_EQ(verdict("boot.reset_to_efi_main"), VERDICT_INFO);	/* a fact, never a pass */
	EXPECT(detail_has("boot.reset_to_efi_main", "299500 ms"));
}

TEST(acpi_verdicts)
{
	good_tdx();
	in.acpi.mp_wakeup = 0;
	run();
	EXPECT_EQ(verdict("acpi.mp_wakeup"), VERDICT_FAIL);

	/* An entry the kernel would refuse (kernel/mp_wakeup.c) does not pass. */
	good_tdx();
	in.mp_wakeup_problem = "the wakeup mailbox is not 4 KiB aligned";
	run();
	EXPECT_EQ(verdict("acpi.mp_wakeup"), VERDICT_FAIL);
	EXPECT(detail_has("acpi.mp_wakeup", "not 4 KiB aligned"));
	/* Outside a TD the rule does not apply; the detail still says what the entry is. */
	good_snp();
	in.acpi.mp_wakeup = 1;
	in.mp_wakeup_problem = "the wakeup mailbox address is 0";
	run();
	EXPECT_EQ(verdict("acpi.mp_wakeup"), VERDICT_NA);
	EXPECT(detail_has("acpi.mp_wakeup", "address is 0"));

	good_snp();
	in.acpi.madt = ACPI_ABSENT;
	run();
	EXPECT_EQ(verdict("acpi.madt"), VERDICT_FAIL);
	EXPECT_EQ(verdict("acpi.mp_wakeup"), VERDICT_NA);

	good_tdx();
	in.acpi.rsdp = ACPI_BAD_CHECKSUM;
	in.acpi.xsdt = in.acpi.madt = ACPI_ABSENT;
	in.acpi.mp_wakeup = 0;
	run();
	EXPECT_EQ(verdict("acpi.rsdp"), VERDICT_FAIL);
	EXPECT_EQ(verdict("acpi.xsdt"), VERDICT_NA);
	EXPECT_EQ(verdict("acpi.madt"), VERDICT_FAIL);
	EXPECT_EQ(verdict("acpi.mp_wakeup"), VERDICT_FAIL);

	good_tdx();
	in.acpi.xsdt = ACPI_BAD_LENGTH;
	run();
	EXPECT_EQ(verdict("acpi.xsdt"), VERDICT_FAIL);
}

TEST(configuration_tables)
{
	good_tdx();
	in.efi_tables &= ~(1u << EFI_TABLE_ACPI20);
	in.efi_tables |= 1u << EFI_TABLE_ACPI10;
	run();
	EXPECT_EQ(verdict("efi.acpi_table"), VERDICT_FAIL);

	good_tdx();
	in.efi_tables &= ~(1u << EFI_TABLE_SMBIOS3);
	run();
	EXPECT_EQ(verdict("efi.smbios"), VERDICT_WARN);

	good_tdx();
	in.efi_tables |= 1u << EFI_TABLE_LINUX_UNACCEPTED;
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted"), VERDICT_INFO);

	good_tdx();
	in.efi_tables &= ~(1u << EFI_TABLE_CC_FINAL_EVENTS);
	run();
	EXPECT_EQ(verdict("efi.cc_final_events"), VERDICT_WARN);

	good_snp();
	in.efi_tables &= ~(1u << EFI_TABLE_CC_BLOB);
	run();
	EXPECT_EQ(verdict("efi.cc_blob"), VERDICT_FAIL);
}

/* Memory the map calls accepted, asked of the platform (the results kernel/conformance_run.c gathers). */
TEST(accepted_memory_probe)
{
	good_tdx();
	in.probed = 6;
	run();
	EXPECT_EQ(verdict("accepted.probe"), VERDICT_PASS);

	good_tdx();
	in.probed = 6;
	in.probe_not_accepted = 1;
	in.probe_first_bad = 0x100000;
	run();
	EXPECT_EQ(verdict("accepted.probe"), VERDICT_FAIL);
	EXPECT(detail_has("accepted.probe", "1 were not accepted (first 0x100000"));

	/* Answers that tell nothing (2 MiB mappings) are no pass. */
	good_snp();
	in.probed = in.probe_unknown = 4;
	run();
	EXPECT_EQ(verdict("accepted.probe"), VERDICT_NA);

	good_tdx();
	in.probe_none = "the platform has nothing to ask (not TDX or SEV-SNP)";
	run();
	EXPECT_EQ(verdict("accepted.probe"), VERDICT_NA);
	EXPECT(detail_has("accepted.probe", "nothing to ask"));
}

/* Memory the map calls unaccepted, asked of the platform page by page (kernel/conformance_run.c). */
TEST(unaccepted_memory_probe)
{
	good_tdx();
	in.unacc_ranges = 3;
	in.unacc_ranges_probed = 2;
	in.unacc_pages = 1024;
	run();
	EXPECT_EQ(verdict("unaccepted.probe"), VERDICT_PASS);
	EXPECT(detail_has("unaccepted.probe", "1024 page(s) probed, the lowest unit of 2 of 3 "
			  "unaccepted range(s): all still unaccepted"));

	/* One page the firmware or host accepted before: a MUST not met. */
	good_snp();
	in.unacc_ranges = in.unacc_ranges_probed = 1;
	in.unacc_ranges_fake = 1;
	in.unacc_pages = 512;
	in.unacc_pages_accepted = 1;
	in.unacc_first_accepted = 0x40000000;
	run();
	EXPECT_EQ(verdict("unaccepted.probe"), VERDICT_FAIL);
	EXPECT(detail_has("unaccepted.probe", "(1 from fake_unaccepted_start): 1 were already "
			  "accepted (first 0x40000000)"));
	EXPECT(detail_has("unaccepted.probe", "0 unknown"));

	/* Answers that tell nothing (2 MiB RMP entries) are no pass. */
	good_snp();
	in.unacc_ranges = in.unacc_ranges_probed = 1;
	in.unacc_pages = in.unacc_pages_unknown = 512;
	run();
	EXPECT_EQ(verdict("unaccepted.probe"), VERDICT_NA);

	/* Ranges, but every unit accepted before the report ran (eager), or none whole. */
	good_tdx();
	in.unacc_ranges = 2;
	run();
	EXPECT_EQ(verdict("unaccepted.probe"), VERDICT_NA);
	EXPECT(detail_has("unaccepted.probe", "2 unaccepted range(s), none with a whole 2 MiB unit"));

	good_tdx();
	run();
	EXPECT_EQ(verdict("unaccepted.probe"), VERDICT_NA);
	EXPECT(detail_has("unaccepted.probe", "no unaccepted memory"));

	good_tdx();
	in.unacc_probe_none = "the platform has nothing to ask (not TDX or SEV-SNP)";
	in.unacc_ranges = 1;
	run();
	EXPECT_EQ(verdict("unaccepted.probe"), VERDICT_NA);
	EXPECT(detail_has("unaccepted.probe", "nothing to ask"));
}

/* TDVF's waiting APs run on its SEC page tables: before edk2-stable202411 in usable memory. */
TEST(tdx_ap_memory)
{
	good_tdx();
	run();
	EXPECT_EQ(verdict("tdx.ap_memory"), VERDICT_PASS);

	/* TDVF before the fix: conventional memory from 1 MiB, the tables inside it. */
	good_tdx();
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, 640 * KiB);
	add(EFI_RESERVED_MEMORY, 640 * KiB, 384 * KiB);
	add(EFI_CONVENTIONAL_MEMORY, 1 * MiB, 1 * GiB);
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 2 * GiB);
	run();
	EXPECT_EQ(verdict("tdx.ap_memory"), VERDICT_WARN);
	EXPECT(detail_has("tdx.ap_memory", "all usable memory"));

	good_snp();
	run();
	EXPECT_EQ(verdict("tdx.ap_memory"), VERDICT_NA);
}

/*
 * Only partly reserved: the old verdict passed any range that no single descriptor held.
 * Another vendor's firmware: TDVF's address says nothing about it (old verdict: judged).
 */
TEST(tdx_ap_memory_whole_range_and_tdvf_only)
{
	good_tdx();
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, 640 * KiB);
	add(EFI_RESERVED_MEMORY, 640 * KiB, 8 * MiB + 8 * KiB - 640 * KiB);
	add(EFI_CONVENTIONAL_MEMORY, 8 * MiB + 8 * KiB, 1 * GiB);
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 2 * GiB);
	run();
	EXPECT_EQ(verdict("tdx.ap_memory"), VERDICT_WARN);
	EXPECT(detail_has("tdx.ap_memory", "partly usable memory"));

	good_tdx();
	map_new(48);
	add(EFI_CONVENTIONAL_MEMORY, 0, 1 * GiB);
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 2 * GiB);
	in.fw_vendor = "Acme Confidential UEFI";
	run();
	EXPECT_EQ(verdict("tdx.ap_memory"), VERDICT_NA);
	EXPECT(detail_has("tdx.ap_memory", "not TDVF"));
}

/* No type 15 at or above the physical address width, nor at or above the TDX shared bit. */
TEST(unaccepted_address_width)
{
	good_tdx();
	in.tdx_shared_bit = 1ULL << 36;	/* GPAW 37 */
	add(EFI_UNACCEPTED_MEMORY, (1ULL << 36) - 2 * MiB, 4 * MiB);	/* across the bit */
	run();
	EXPECT_EQ(verdict("unaccepted.addr_width"), VERDICT_FAIL);
	EXPECT(detail_has("unaccepted.addr_width", "shared bit"));

	good_snp();
	in.phys_bits = 36;
	add(EFI_UNACCEPTED_MEMORY, 1ULL << 36, 2 * MiB);	/* wholly above MAXPHYADDR */
	run();
	EXPECT_EQ(verdict("unaccepted.addr_width"), VERDICT_FAIL);
	EXPECT(detail_has("unaccepted.addr_width", "36-bit"));

	/* Ending exactly at the limit is inside it. */
	good_snp();
	in.phys_bits = 33;	/* 8 GiB */
	add(EFI_UNACCEPTED_MEMORY, 6 * GiB, 2 * GiB);
	run();
	EXPECT_EQ(verdict("unaccepted.addr_width"), VERDICT_PASS);

	good_snp();
	in.phys_bits = 0;
	run();
	EXPECT_EQ(verdict("unaccepted.addr_width"), VERDICT_NA);
}

/* The type 15 ranges of the map read before ExitBootServices are the final map's. */
TEST(unaccepted_stable_across_exit_boot_services)
{
	good_snp();
	first_map_is_final();
	in.ebs_attempts = 1;
	run();
	EXPECT_EQ(verdict("unaccepted.stable"), VERDICT_PASS);

	/* A retry whose map kept the type 15 ranges (another allocation changed it). */
	good_snp();
	first_map_is_final();
	add(EFI_BOOT_SERVICES_DATA, 16 * GiB, 4 * KiB);
	in.ebs_attempts = 2;
	run();
	EXPECT_EQ(verdict("unaccepted.stable"), VERDICT_PASS);

	/* The firmware accepted 2 MiB of type 15 inside ExitBootServices, after the opt-in. */
	good_snp();
	rm.size -= rm.stride;
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 2 * GiB);
	first_map_is_final();
	rm.size -= rm.stride;
	add(EFI_CONVENTIONAL_MEMORY, 4 * GiB, 2 * MiB);
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB + 2 * MiB, 2 * GiB - 2 * MiB);
	in.ebs_attempts = 2;
	run();
	/* A SHOULD: Linux sets its bitmap from the final map; nothing breaks, it was slow. */
	EXPECT_EQ(verdict("unaccepted.stable"), VERDICT_WARN);
	EXPECT(detail_has("unaccepted.stable", "2048 MiB of type 15; after it 1, 2046 MiB"));
	EXPECT(detail_has("unaccepted.stable", "accepted inside the call"));
	EXPECT_EQ(verdict("linux.v6_5"), VERDICT_PASS);

	/* Same count and bytes, another place: only the hash tells. */
	good_snp();
	first_map_is_final();
	rm.size -= rm.stride;
	add(EFI_UNACCEPTED_MEMORY, 8 * GiB, 2 * GiB);
	in.ebs_attempts = 2;
	run();
	EXPECT_EQ(verdict("unaccepted.stable"), VERDICT_WARN);
	EXPECT(detail_has("unaccepted.stable", "the ranges differ"));
}

/*
 * Linux's stub sizes its bitmap by the map it reads before ExitBootServices
 * (allocate_unaccepted_bitmap) and sets the bits from the final map
 * (process_unaccepted_memory): where the two differ, the profiles follow the first map.
 */
TEST(linux_bitmap_sized_by_the_map_before_exit_boot_services)
{
	/* Before: type 15 at [4 GiB, 6 GiB); final: [4 GiB, 8 GiB) (2 GiB more, after the opt-in). */
	good_tdx();
	first_map_is_final();
	rm.size -= rm.stride;
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 4 * GiB);
	in.ebs_attempts = 2;
	run();
	/* 1024 units, 128 bytes: the upper 2 GiB has no bit, and is accepted at boot. */
	EXPECT(detail_has("linux.2026", "accepts 2048 MiB at boot, 2048 MiB later; bitmap 128 bytes "
			  "(sized by the map before ExitBootServices); boots"));
	/* The final map alone would have said 256 bytes and nothing at boot. */
	in.ebs_first_desc = 0;
	run();
	EXPECT(detail_has("linux.2026", "accepts 0 MiB at boot, 4096 MiB later; bitmap 256 bytes; boots"));

	/* On SEV-SNP that 2 GiB at boot stops the kernels whose stub cannot accept. */
	good_snp();
	first_map_is_final();
	rm.size -= rm.stride;
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 4 * GiB);
	in.ebs_attempts = 2;
	run();
	EXPECT_EQ(verdict("linux.v6_5"), VERDICT_FAIL);
	EXPECT(detail_has("linux.v6_5", "cannot accept the 2097152 KiB it must at boot"));
	EXPECT_EQ(verdict("linux.2026"), VERDICT_PASS);

	/* Before: more type 15 than the final map kept: a larger bitmap, nothing at boot. */
	good_tdx();
	rm.size -= rm.stride;
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 4 * GiB);
	first_map_is_final();
	rm.size -= rm.stride;
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 2 * GiB);
	in.ebs_attempts = 2;
	run();
	EXPECT(detail_has("linux.2026", "accepts 0 MiB at boot, 2048 MiB later; bitmap 256 bytes "
			  "(sized by the map before ExitBootServices); boots"));

	/* Before: no type 15 at all: the stub installs no table, then meets type 15. */
	good_tdx();
	rm.size -= rm.stride;
	add(EFI_CONVENTIONAL_MEMORY, 4 * GiB, 2 * GiB);
	first_map_is_final();
	rm.size -= rm.stride;
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 2 * GiB);
	in.ebs_attempts = 2;
	run();
	EXPECT_EQ(verdict("linux.v6_5"), VERDICT_FAIL);
	EXPECT_EQ(verdict("linux.2026"), VERDICT_FAIL);
	EXPECT(detail_has("linux.2026", "no type 15 in the map read before ExitBootServices"));
	EXPECT_EQ(verdict("linux.no_unaccepted"), VERDICT_INFO);
}

/*
 * The GHCB the firmware registered (the GHCB MSR at hand-over) is shared memory: never
 * memory the OS may allocate (edk2 3e3f5bb21c, pull request 3774).
 */
TEST(snp_ghcb_reserved)
{
	good_snp();
	in.fw_ghcb_msr = 1 * MiB + 64 * MiB;	/* inside conventional memory */
	run();
	EXPECT_EQ(verdict("snp.ghcb_reserved"), VERDICT_FAIL);
	EXPECT(detail_has("snp.ghcb_reserved", "GHCB at 0x4100000 (GHCB MSR) is in usable memory (type 7)"));

	good_snp();
	in.fw_ghcb_msr = 1 * MiB + 1 * GiB;	/* boot-services data: free after ExitBootServices */
	run();
	EXPECT_EQ(verdict("snp.ghcb_reserved"), VERDICT_FAIL);

	good_snp();
	in.fw_ghcb_msr = 3 * GiB;	/* no descriptor: a hole */
	run();
	EXPECT_EQ(verdict("snp.ghcb_reserved"), VERDICT_FAIL);
	EXPECT(detail_has("snp.ghcb_reserved", "undescribed"));

	/* An MSR protocol value (a response code in bits 11:0), or nothing: no page to judge. */
	good_snp();
	in.fw_ghcb_msr = 0x0000000100000005ULL;
	run();
	EXPECT_EQ(verdict("snp.ghcb_reserved"), VERDICT_NA);
	in.fw_ghcb_msr = 0;
	run();
	EXPECT_EQ(verdict("snp.ghcb_reserved"), VERDICT_NA);
	EXPECT(detail_has("snp.ghcb_reserved", "no GHCB registered"));
	good_snp();
	in.fw_ghcb_known = false;
	run();
	EXPECT_EQ(verdict("snp.ghcb_reserved"), VERDICT_NA);

	good_tdx();
	run();
	EXPECT_EQ(verdict("snp.ghcb_reserved"), VERDICT_NA);
}

/* The CC blob's secrets and CPUID pages are never memory the OS may allocate. */
TEST(snp_cc_pages_outside_usable_memory)
{
	good_snp();
	in.cc_cpuid = 1 * MiB + 64 * MiB;	/* inside conventional memory */
	run();
	EXPECT_EQ(verdict("snp.cc_pages"), VERDICT_FAIL);
	EXPECT(detail_has("snp.cc_pages", "CPUID page 0x4100000 in type 7 (usable"));

	good_snp();
	in.cc_secrets = 3 * GiB;	/* no descriptor: a hole */
	run();
	EXPECT_EQ(verdict("snp.cc_pages"), VERDICT_FAIL);

	good_snp();
	in.cc_secrets = 1 * MiB + 1 * GiB + 64 * MiB;	/* ACPI reclaim: not usable before the OS frees it */
	run();
	EXPECT_EQ(verdict("snp.cc_pages"), VERDICT_PASS);

	good_snp();
	in.cc_secrets = in.cc_cpuid = 0;
	run();
	EXPECT_EQ(verdict("snp.cc_pages"), VERDICT_NA);
}

/* Under an SVSM: its memory and the boot calling area are never memory the OS may allocate. */
TEST(snp_svsm_pages_reserved)
{
	good_snp();
	run();
	EXPECT_EQ(verdict("snp.svsm_pages"), VERDICT_NA);

	good_snp();
	in.svsm = true;
	in.svsm_caa = 0xa2000;		/* reserved, beside the secrets and CPUID pages */
	in.svsm_base = 0xa3000;
	in.svsm_size = 4096;
	run();
	EXPECT_EQ(verdict("snp.svsm_pages"), VERDICT_PASS);

	in.svsm_caa = 16 * MiB;		/* conventional memory */
	run();
	EXPECT_EQ(verdict("snp.svsm_pages"), VERDICT_FAIL);
	EXPECT(detail_has("snp.svsm_pages", "calling area 0x1000000 in usable memory"));

	in.svsm_caa = 0xa2000;
	in.svsm_base = TDVF_RESERVED_END - 8 * KiB;	/* half reserved, half conventional */
	in.svsm_size = 16 * KiB;
	run();
	EXPECT_EQ(verdict("snp.svsm_pages"), VERDICT_FAIL);
	EXPECT(detail_has("snp.svsm_pages", "8 KiB usable"));
}

/* A crafted Linux unaccepted memory table (include/linux/efi.h struct efi_unaccepted_memory). */
static u8 lut_bitmap[64];

static void good_lut(void)
{
	good_tdx();
	/* The table lives in the ACPI reclaim range of tdvf_map; bitmap: 1024 units of 2 MiB. */
	memset(lut_bitmap, 0, sizeof(lut_bitmap));
	in.efi_tables |= 1u << EFI_TABLE_LINUX_UNACCEPTED;
	in.lut = (struct linux_unaccepted_facts){
		.present = true, .readable = true, .addr = 1 * MiB + 1 * GiB + 64 * MiB,
		.version = 1, .unit_size = 2 * MiB, .phys_base = 4 * GiB,
		.size = 128, .bitmap = lut_bitmap,
	};
	/* Type 15 is [4 GiB, 6 GiB): units 0..1023. */
	memset(lut_bitmap, 0xff, 128 > sizeof(lut_bitmap) ? sizeof(lut_bitmap) : 128);
}

TEST(linux_unaccepted_table)
{
	static u8 big[128];

	good_tdx();
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_table"), VERDICT_NA);

	/* 1024 units need 128 bytes: all set, the whole of [4 GiB, 6 GiB). */
	good_lut();
	memset(big, 0xff, sizeof(big));
	in.lut.bitmap = big;
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_table"), VERDICT_PASS);

	/* A bit for a unit of accepted memory: Linux would accept it twice. */
	good_lut();
	memset(big, 0xff, sizeof(big));
	in.lut.bitmap = big;
	in.lut.phys_base = 4 * GiB - 2 * MiB;	/* unit 0 is below the type 15 range */
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_table"), VERDICT_FAIL);
	EXPECT(detail_has("efi.linux_unaccepted_table", "1 set for memory that is not type 15 (first 0xffe00000)"));

	/* A whole unit of type 15 without a bit: Linux's stub sets it from the map. */
	good_lut();
	memset(big, 0xff, sizeof(big));
	big[5] &= (u8)~(1u << 3);	/* unit 43 */
	in.lut.bitmap = big;
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_table"), VERDICT_PASS);
	EXPECT(detail_has("efi.linux_unaccepted_table", "1 whole type 15 unit(s) without a bit (the stub sets them)"));

	/* A bitmap too short for the range: Linux accepts the rest at boot; breaks nothing. */
	good_lut();
	memset(big, 0xff, sizeof(big));
	in.lut.bitmap = big;
	in.lut.size = 64;
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_table"), VERDICT_PASS);
	EXPECT_EQ(verdict("unaccepted.alignment"), VERDICT_WARN);
	EXPECT(detail_has("unaccepted.alignment", "1 outside the table"));
	EXPECT(detail_has("linux.2026", "accepts 1024 MiB at boot, 1024 MiB later; bitmap 64 bytes (the firmware's)"));

	good_lut();
	in.lut.bitmap = big;
	in.lut.version = 2;
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_table"), VERDICT_FAIL);
	EXPECT(detail_has("efi.linux_unaccepted_table", "version 2"));

	good_lut();
	in.lut.bitmap = big;
	in.lut.unit_size = 3 * MiB;
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_table"), VERDICT_FAIL);
	EXPECT(detail_has("efi.linux_unaccepted_table", "power of two"));

	/* In conventional memory: a loader may allocate over it. */
	good_lut();
	in.lut.bitmap = big;
	in.lut.addr = 16 * MiB;
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_table"), VERDICT_FAIL);
	EXPECT(detail_has("efi.linux_unaccepted_table", "free memory (type 7 or 15)"));

	/* Present, but the guest could not read it (outside table memory). */
	good_lut();
	in.lut.readable = false;
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_table"), VERDICT_FAIL);
}

/*
 * What the old verdict failed and Linux takes: a table in boot services data (Linux reserves
 * it wherever it is), a set bit for a unit that two adjacent type 15 descriptors cover.
 */
TEST(linux_table_judged_as_linux_reads_it)
{
	static u8 big[128];

	good_lut();
	memset(big, 0xff, sizeof(big));
	in.lut.bitmap = big;
	in.lut.addr = 1 * MiB + 1 * GiB;	/* boot services data in tdvf_map */
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_table"), VERDICT_PASS);

	good_lut();
	memset(big, 0xff, sizeof(big));
	in.lut.bitmap = big;
	rm.size -= rm.stride;	/* [4 GiB, 6 GiB) as two descriptors split inside unit 1 */
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB, 3 * MiB);
	add(EFI_UNACCEPTED_MEMORY, 4 * GiB + 3 * MiB, 2 * GiB - 3 * MiB);
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_table"), VERDICT_PASS);
	EXPECT(detail_has("efi.linux_unaccepted_table", "0 set for memory that is not type 15"));
}

/*
 * A table that starts inside a page and crosses one more page boundary than its size
 * needs: kernels before Linux 0862438c9048 (February 2026) reserve one page short and may
 * panic in accept_memory (TDX guests above 64 GiB, where the bitmap passes a page).
 */
TEST(linux_table_placement_hazard)
{
	static u8 big[4096];

	good_lut();
	memset(big, 0, sizeof(big));
	memset(big, 0xff, 128);
	in.lut.bitmap = big;
	in.lut.size = 4096;	/* 4120 bytes with the header: two pages when aligned */
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_placement"), VERDICT_PASS);
	EXPECT_EQ(verdict("linux.v6_15"), VERDICT_PASS);

	in.lut.addr += 0xff0;	/* three pages touched, two reserved by old kernels */
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_placement"), VERDICT_WARN);
	EXPECT(detail_has("efi.linux_unaccepted_placement", "inside a page"));
	EXPECT_EQ(verdict("linux.v6_15"), VERDICT_FAIL);
	EXPECT(detail_has("linux.v6_15", "may panic in accept_memory"));
	EXPECT_EQ(verdict("linux.2026"), VERDICT_PASS);
	EXPECT_EQ(verdict("efi.linux_unaccepted_table"), VERDICT_PASS);

	/* Unaligned, but inside one page: nothing is lost. */
	in.lut.addr = 1 * MiB + 1 * GiB + 64 * MiB + 0x10;
	in.lut.size = 128;
	run();
	EXPECT_EQ(verdict("efi.linux_unaccepted_placement"), VERDICT_WARN);
	EXPECT_EQ(verdict("linux.v6_15"), VERDICT_PASS);
}

/* The registry: unique IDs, a level, a source; an action for every rule a report can fail or warn. */
TEST(rule_registry)
{
	unsigned n, seen = 0;
	const struct conformance_rule *r = conformance_rules(&n);

	ASSERT(n >= 30 && n <= CONFORMANCE_MAX_CHECKS);
	for (unsigned i = 0; i < n; i++) {
		EXPECT(r[i].id && strchr(r[i].id, '.'));
		EXPECT(r[i].level < LEVEL_COUNT);
		EXPECT(r[i].source && strlen(r[i].source) > 10);
		EXPECT((r[i].level == LEVEL_INFO) == (r[i].action == NULL));
		for (unsigned j = 0; j < i; j++)
			EXPECT(strcmp(r[i].id, r[j].id) != 0);
	}
	/* Every rule is reported exactly once, in registry order. */
	good_snp();
	run();
	EXPECT_EQ(nout, n);
	for (unsigned i = 0; i < nout && i < n; i++, seen++)
		EXPECT(out[i].r == &r[i]);
	EXPECT_EQ(seen, n);
	EXPECT(strcmp(level_name(LEVEL_SHOULD), "SHOULD") == 0);
	EXPECT(strcmp(verdict_name(VERDICT_INFO), "info") == 0);
}

/* Output capacity is respected and every name resolves. */
TEST(capacity_and_names)
{
	good_tdx();
	in.map = rm.buf;
	in.map_size = rm.size;
	EXPECT_EQ(conformance_evaluate(&in, out, 3, scratch), 3);
	EXPECT(strcmp(verdict_name(VERDICT_NA), "n/a") == 0);
	EXPECT(strcmp(verdict_name(VERDICT_COUNT), "?") == 0);
	for (u32 t = 0; t < EFI_TABLE_COUNT; t++)
		EXPECT(strcmp(efi_table_name(t), "?") != 0);
	for (u32 s = 0; s < ACPI_STATUS_COUNT; s++)
		EXPECT(strcmp(acpi_status_name(s), "?") != 0);
}

/* ---------------------------------------------------------------- the ACPI walk */

#define MEM_BASE 0x7f000000ULL
#define MEM_SIZE (64 * KiB)
#define RSDP_AT (MEM_BASE + 0x100)
#define XSDT_AT (MEM_BASE + 0x1000)
#define MADT_AT (MEM_BASE + 0x2000)
#define FACP_AT (MEM_BASE + 0x3000)

/* A walk that loops (say, on a zero-length MADT entry) runs out of reads instead of hanging. */
#define READ_BUDGET 100000

static u8 mem[MEM_SIZE];
static unsigned reads_outside, reads;

static bool mem_read(void *ctx, u64 addr, void *dst, u64 len)
{
	(void)ctx;
	if (++reads > READ_BUDGET)
		return false;
	if (addr < MEM_BASE || addr - MEM_BASE > MEM_SIZE || len > MEM_SIZE - (addr - MEM_BASE)) {
		reads_outside++;
		return false;
	}
	memcpy(dst, mem + (addr - MEM_BASE), len);
	return true;
}

static const struct acpi_reader reader = { mem_read, NULL };

static u8 *at(u64 addr)
{
	return mem + (addr - MEM_BASE);
}

static void put32(u8 *p, u32 v)
{
	memcpy(p, &v, 4);
}

static void put64(u8 *p, u64 v)
{
	memcpy(p, &v, 8);
}

static void fix_checksum(u8 *p, u32 len, u32 off)
{
	u8 s = 0;

	p[off] = 0;
	for (u32 i = 0; i < len; i++)
		s = (u8)(s + p[i]);
	p[off] = (u8)-s;
}

static void sdt(u64 addr, const char *sig, u32 len)
{
	u8 *p = at(addr);

	memcpy(p, sig, 4);
	put32(p + 4, len);
	p[8] = 1;
	memcpy(p + 10, "MEMACC", 6);
}

static u32 madt_len;

static void madt_entry(u8 type, u8 len, u8 fill)
{
	u8 *e = at(MADT_AT) + madt_len;

	memset(e, fill, len);
	e[0] = type;
	e[1] = len;
	madt_len += len;
}

static void seal(void)
{
	put32(at(MADT_AT) + 4, madt_len);
	fix_checksum(at(MADT_AT), madt_len, 9);
	fix_checksum(at(XSDT_AT), 36 + 16, 9);
	fix_checksum(at(RSDP_AT), 20, 8);
	fix_checksum(at(RSDP_AT), 36, 32);
}

/* RSDP rev 2 -> XSDT [FACP, APIC] -> MADT with two local APICs and an MP wakeup entry. */
static void good_tables(void)
{
	u8 *r = at(RSDP_AT), *w;

	memset(mem, 0, sizeof(mem));
	reads_outside = reads = 0;
	memcpy(r, "RSD PTR ", 8);
	memcpy(r + 9, "MEMACC", 6);
	r[15] = 2;
	put32(r + 20, 36);
	put64(r + 24, XSDT_AT);
	sdt(XSDT_AT, "XSDT", 36 + 16);
	put64(at(XSDT_AT) + 36, FACP_AT);
	put64(at(XSDT_AT) + 44, MADT_AT);
	sdt(FACP_AT, "FACP", 36);
	fix_checksum(at(FACP_AT), 36, 9);
	sdt(MADT_AT, "APIC", 0);
	madt_len = 44;
	madt_entry(MADT_TYPE_LOCAL_APIC, 8, 1);
	madt_entry(MADT_TYPE_LOCAL_APIC, 8, 1);
	madt_entry(MADT_TYPE_MP_WAKEUP, 16, 0);
	w = at(MADT_AT) + madt_len - 16;
	w[2] = 1;			/* mailbox version 1 */
	put64(w + 8, 0x7e000000);	/* mailbox */
	seal();
}

static struct acpi_facts af;

TEST(acpi_good_tables)
{
	good_tables();
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.rsdp, ACPI_OK);
	EXPECT_EQ(af.xsdt, ACPI_OK);
	EXPECT_EQ(af.ntables, 2);
	EXPECT(strcmp(af.signatures[0], "FACP") == 0);
	EXPECT(strcmp(af.signatures[1], "APIC") == 0);
	EXPECT_EQ(af.madt, ACPI_OK);
	EXPECT_EQ(af.madt_addr, MADT_AT);
	EXPECT_EQ(af.madt_entries, 3);
	EXPECT_EQ(af.madt_lapics, 2);
	EXPECT_EQ(af.mp_wakeup, 1);
	EXPECT_EQ(af.mp_wakeup_mailbox, 0x7e000000);
	EXPECT_EQ(af.mp_wakeup_version, 1);
	EXPECT_EQ(reads_outside, 0);
}

TEST(acpi_rsdp_broken)
{
	acpi_scan(&reader, 0, &af);
	EXPECT_EQ(af.rsdp, ACPI_ABSENT);
	EXPECT_EQ(af.madt, ACPI_ABSENT);

	good_tables();
	acpi_scan(&reader, 0x1000, &af);	/* into memory that holds no tables */
	EXPECT_EQ(af.rsdp, ACPI_UNREADABLE);

	good_tables();
	at(RSDP_AT)[0] = 'X';
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.rsdp, ACPI_BAD_SIGNATURE);

	good_tables();
	at(RSDP_AT)[9] ^= 1;			/* inside the first 20 bytes */
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.rsdp, ACPI_BAD_CHECKSUM);

	good_tables();
	at(RSDP_AT)[24] ^= 1;			/* XSDT address: extended checksum only */
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.rsdp, ACPI_BAD_CHECKSUM);

	good_tables();
	at(RSDP_AT)[15] = 0;
	fix_checksum(at(RSDP_AT), 20, 8);
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.rsdp, ACPI_OLD_REVISION);

	good_tables();
	put32(at(RSDP_AT) + 20, 0xffffffff);	/* length: would checksum 4 GiB */
	fix_checksum(at(RSDP_AT), 36, 32);
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.rsdp, ACPI_BAD_LENGTH);

	/* An RSDP at the very end of what may be read. */
	good_tables();
	acpi_scan(&reader, MEM_BASE + MEM_SIZE - 10, &af);
	EXPECT_EQ(af.rsdp, ACPI_UNREADABLE);
}

TEST(acpi_xsdt_broken)
{
	good_tables();
	put64(at(RSDP_AT) + 24, 0xfee00000);	/* the local APIC, not a table */
	fix_checksum(at(RSDP_AT), 36, 32);
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.rsdp, ACPI_OK);
	EXPECT_EQ(af.xsdt, ACPI_UNREADABLE);
	EXPECT_EQ(af.madt, ACPI_ABSENT);

	good_tables();
	put32(at(XSDT_AT) + 4, 0x40000000);	/* 1 GiB */
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.xsdt, ACPI_BAD_LENGTH);

	good_tables();
	put32(at(XSDT_AT) + 4, 20);		/* shorter than its header */
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.xsdt, ACPI_BAD_LENGTH);

	good_tables();
	at(XSDT_AT)[40] ^= 0x10;
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.xsdt, ACPI_BAD_CHECKSUM);

	/* An XSDT entry pointing nowhere is skipped; the MADT is still found. */
	good_tables();
	put64(at(XSDT_AT) + 36, 0xdead0000);
	fix_checksum(at(XSDT_AT), 36 + 16, 9);
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.xsdt, ACPI_OK);
	EXPECT_EQ(af.madt, ACPI_OK);
	EXPECT_EQ(af.signatures[0][0], 0);
}

TEST(acpi_madt_broken)
{
	/* No MADT in the XSDT. */
	good_tables();
	put64(at(XSDT_AT) + 44, FACP_AT);
	fix_checksum(at(XSDT_AT), 36 + 16, 9);
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.madt, ACPI_ABSENT);

	good_tables();
	at(MADT_AT)[50] ^= 0x40;
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.madt, ACPI_BAD_CHECKSUM);

	/* An entry of length 0 must end the walk, not loop on it. */
	good_tables();
	madt_len = 44;
	madt_entry(MADT_TYPE_LOCAL_APIC, 8, 1);
	madt_entry(MADT_TYPE_LOCAL_APIC, 8, 1);
	at(MADT_AT)[44 + 8 + 1] = 0;
	seal();
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.madt, ACPI_BAD_ENTRY);
	EXPECT_EQ(af.madt_entries, 1);
	EXPECT(reads < 100);

	/* An entry running past the end of the table. */
	good_tables();
	madt_len = 44;
	madt_entry(MADT_TYPE_LOCAL_APIC, 8, 1);
	at(MADT_AT)[44 + 1] = 200;
	seal();
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.madt, ACPI_BAD_ENTRY);

	/* A wakeup entry too short to hold its mailbox address. */
	good_tables();
	madt_len = 44;
	madt_entry(MADT_TYPE_MP_WAKEUP, 8, 0);
	seal();
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.madt, ACPI_BAD_ENTRY);
	EXPECT_EQ(af.mp_wakeup, 0);

	/* Shorter than the fixed MADT fields. */
	good_tables();
	madt_len = 40;
	seal();
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.madt, ACPI_BAD_LENGTH);
}

/* Random bytes everywhere: the walk ends, never reads outside the reader, and judges. */
TEST(acpi_random_tables)
{
	unit_srand(15);
	for (int round = 0; round < 2000; round++) {
		good_tables();
		for (int k = 0; k < 6; k++) {
			u64 off = unit_rand() % 0x2100;

			mem[off] = (u8)unit_rand();
		}
		if (round & 1)
			seal();
		reads = 0;
		acpi_scan(&reader, RSDP_AT, &af);
		EXPECT(af.rsdp < ACPI_STATUS_COUNT && af.madt < ACPI_STATUS_COUNT);
		EXPECT(af.madt_entries <= MEM_SIZE / 2);
		EXPECT(reads < READ_BUDGET);
	}
}

/* 0xFF in a local APIC entry is the xAPIC broadcast, kept as the x2APIC one; x2APIC ID 255 is a CPU. */
TEST(acpi_madt_lapic_broadcast_id)
{
	u8 *e;

	good_tables();
	madt_len = 44;
	madt_entry(MADT_TYPE_LOCAL_APIC, 8, 0);
	e = at(MADT_AT) + madt_len - 8;
	e[3] = 0xff;
	put32(e + 4, 1);
	madt_entry(MADT_TYPE_LOCAL_X2APIC, 16, 0);
	e = at(MADT_AT) + madt_len - 16;
	put32(e + 4, 0xff);
	put32(e + 8, 1);
	seal();
	acpi_scan(&reader, RSDP_AT, &af);
	ASSERT_EQ(af.cpus_listed, 2);
	EXPECT_EQ(af.apic_ids[0], 0xffffffffu);
	EXPECT_EQ(af.apic_ids[1], 0xff);
}

/* The CPU list kernel/smp.c starts the APs from (acpi_facts.apic_ids). */
TEST(acpi_madt_cpu_list)
{
	u8 *e;

	good_tables();
	madt_len = 44;
	madt_entry(MADT_TYPE_LOCAL_APIC, 8, 0);
	e = at(MADT_AT) + madt_len - 8;
	e[3] = 0;			/* APIC ID 0 */
	put32(e + 4, 1);		/* enabled */
	madt_entry(MADT_TYPE_LOCAL_APIC, 8, 0);
	e = at(MADT_AT) + madt_len - 8;
	e[3] = 5;			/* not enabled (a hot-pluggable slot): left out */
	madt_entry(MADT_TYPE_LOCAL_X2APIC, 16, 0);
	e = at(MADT_AT) + madt_len - 16;
	put32(e + 4, 300);		/* x2APIC ID */
	put32(e + 8, 1);
	madt_entry(MADT_TYPE_LAPIC_OVERRIDE, 12, 0);
	put64(at(MADT_AT) + madt_len - 8, 0xfed00000);
	put32(at(MADT_AT) + 36, 0xfee00000);
	seal();
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.madt, ACPI_OK);
	EXPECT_EQ(af.cpus_enabled, 2);
	ASSERT_EQ(af.cpus_listed, 2);
	EXPECT_EQ(af.apic_ids[0], 0);
	EXPECT_EQ(af.apic_ids[1], 300);
	EXPECT_EQ(af.lapic_addr, 0xfed00000);

	/* More enabled CPUs than MAX_CPUS: all counted, MAX_CPUS listed. */
	good_tables();
	madt_len = 44;
	for (unsigned i = 0; i < MAX_CPUS + 3; i++) {
		madt_entry(MADT_TYPE_LOCAL_APIC, 8, 0);
		e = at(MADT_AT) + madt_len - 8;
		e[3] = (u8)i;
		put32(e + 4, 1);
	}
	seal();
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.cpus_enabled, MAX_CPUS + 3);
	EXPECT_EQ(af.cpus_listed, MAX_CPUS);

	/* Processor entries shorter than their type needs are malformed, not read past. */
	static const u8 types[] = { MADT_TYPE_LOCAL_APIC, MADT_TYPE_LOCAL_X2APIC,
				    MADT_TYPE_LAPIC_OVERRIDE };
	static const u8 lens[] = { 6, 12, 8 };

	for (unsigned i = 0; i < ARRAY_SIZE(types); i++) {
		good_tables();
		madt_len = 44;
		madt_entry(types[i], lens[i], 1);
		seal();
		acpi_scan(&reader, RSDP_AT, &af);
		EXPECT_EQ(af.madt, ACPI_BAD_ENTRY);
	}
}

/* ---------------------------------------------------------------- MADT wakeup mailbox */

/* A wakeup entry of `len` bytes with mailbox version `version` at `mailbox`. */
static void wakeup_tables(u8 len, u8 version, u64 mailbox)
{
	u8 *w;

	good_tables();
	madt_len = 44;
	madt_entry(MADT_TYPE_LOCAL_APIC, 8, 1);
	madt_entry(MADT_TYPE_MP_WAKEUP, len, 0);
	w = at(MADT_AT) + madt_len - len;
	w[2] = version;
	if (len >= 16)
		put64(w + 8, mailbox);
	seal();
}

TEST(acpi_mp_wakeup_entries)
{
	/* ACPI 6.6 (TDVF): 24 bytes, version 1, a reset vector after the mailbox. */
	wakeup_tables(24, 1, 0x7f7c4000);
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.madt, ACPI_OK);
	EXPECT_EQ(af.mp_wakeup, 1);
	EXPECT_EQ(af.mp_wakeup_version, 1);
	EXPECT_EQ(af.mp_wakeup_mailbox, 0x7f7c4000);

	/* One byte short of the mailbox address: malformed, no mailbox taken. */
	wakeup_tables(15, 0, 0);
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.madt, ACPI_BAD_ENTRY);
	EXPECT_EQ(af.mp_wakeup_mailbox, 0);

	/* Longer than any version defines: the known fields are read, the rest skipped. */
	wakeup_tables(40, 0, 0x7e000000);
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.madt, ACPI_OK);
	EXPECT_EQ(af.mp_wakeup_mailbox, 0x7e000000);

	/* Two wakeup entries: the first one counts. */
	good_tables();
	madt_len = 44;
	madt_entry(MADT_TYPE_MP_WAKEUP, 16, 0);
	put64(at(MADT_AT) + 44 + 8, 0x1000);
	madt_entry(MADT_TYPE_MP_WAKEUP, 16, 0);
	put64(at(MADT_AT) + 60 + 8, 0x2000);
	seal();
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.madt, ACPI_OK);
	EXPECT_EQ(af.mp_wakeup, 2);
	EXPECT_EQ(af.mp_wakeup_mailbox, 0x1000);

	/* An entry that claims more than the table holds. */
	wakeup_tables(16, 0, 0x7e000000);
	at(MADT_AT)[44 + 8 + 1] = 32;
	seal();
	acpi_scan(&reader, RSDP_AT, &af);
	EXPECT_EQ(af.madt, ACPI_BAD_ENTRY);
}

/* The reason, or "(null)": EXPECT on strcmp, with the text in the failure message. */
static int same(const char *got, const char *want)
{
	if (got && strcmp(got, want) == 0)
		return 1;
	printf("  got \"%s\", want \"%s\"\n", got ? got : "(null)", want);
	return 0;
}
#define EXPECT_STR(got, want) EXPECT(same((got), (want)))

/* A final map: usable RAM, an ACPI NVS page at 0x7f000000, ACPI reclaim after it. */
static struct mem_range wk_ranges[4];
static struct memmap wk_map = { .ranges = wk_ranges, .cap = 4 };

static void wakeup_map(void)
{
	wk_ranges[0] = (struct mem_range){ 0x100000, 0x7f000000, RANGE_USABLE, EFI_CONVENTIONAL_MEMORY };
	wk_ranges[1] = (struct mem_range){ 0x7f000000, 0x7f002000, RANGE_ACPI, EFI_ACPI_MEMORY_NVS };
	wk_ranges[2] = (struct mem_range){ 0x7f002000, 0x7f003000, RANGE_ACPI, EFI_ACPI_RECLAIM_MEMORY };
	wk_ranges[3] = (struct mem_range){ 0x7f003000, 0x7f005000, RANGE_ACPI, 0xffffffff };
	wk_map.nranges = 4;
	memset(&af, 0, sizeof(af));
	af.madt = ACPI_OK;
	af.mp_wakeup = 1;
	af.mp_wakeup_version = 1;
	af.mp_wakeup_mailbox = 0x7f001000;
}

TEST(mp_wakeup_mailbox_checks)
{
	wakeup_map();
	EXPECT(mp_wakeup_problem(&af, &wk_map) == NULL);
	af.mp_wakeup_version = 0;		/* ACPI 6.4 */
	EXPECT(mp_wakeup_problem(&af, &wk_map) == NULL);
	af.mp_wakeup_mailbox = 0x7f003000;	/* NVS merged with reclaim: accepted */
	EXPECT(mp_wakeup_problem(&af, &wk_map) == NULL);

	wakeup_map();
	af.madt = ACPI_BAD_CHECKSUM;
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "no usable MADT");
	wakeup_map();
	af.mp_wakeup = 0;
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the MADT has no multiprocessor wakeup structure (type 0x10)");
	wakeup_map();
	af.mp_wakeup_version = 2;
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "unknown multiprocessor wakeup mailbox version");
	wakeup_map();
	af.mp_wakeup_mailbox = 0;
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the wakeup mailbox address is 0");
	af.mp_wakeup_mailbox = 0x7f000800;
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the wakeup mailbox is not 4 KiB aligned");
	af.mp_wakeup_mailbox = 0xfffffffffffff000ULL;
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the wakeup mailbox address wraps around");
	af.mp_wakeup_mailbox = 0x200000;	/* ordinary RAM the allocator hands out */
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the wakeup mailbox is not in ACPI NVS memory");
	af.mp_wakeup_mailbox = 0x7f002000;	/* ACPI reclaim: the OS may reuse it */
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the wakeup mailbox is in ACPI reclaimable memory, not ACPI NVS");
	af.mp_wakeup_mailbox = 0x80000000;	/* beyond the map */
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the wakeup mailbox is outside the memory map");
	af.mp_wakeup_mailbox = 0x7f001000 | 1ULL << 47;	/* its shared alias in a TD (GPAW 48) */
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the wakeup mailbox is outside the memory map");
	af.mp_wakeup_mailbox = 0x7f001000 | 1ULL << 51;	/* ... GPAW 52 */
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the wakeup mailbox is outside the memory map");
	/* The kernel's own memory: its image, its loader data, memory left unaccepted. */
	wk_ranges[0] = (struct mem_range){ 0x100000, 0x200000, RANGE_IMAGE, EFI_LOADER_CODE };
	af.mp_wakeup_mailbox = 0x101000;
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the wakeup mailbox is not in ACPI NVS memory");
	wk_ranges[0] = (struct mem_range){ 0x100000, 0x200000, RANGE_RECLAIMABLE, EFI_LOADER_DATA };
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the wakeup mailbox is not in ACPI NVS memory");
	wk_ranges[0] = (struct mem_range){ 0x100000, 0x200000, RANGE_UNACCEPTED, EFI_UNACCEPTED_MEMORY };
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the wakeup mailbox is not in ACPI NVS memory");
	wakeup_map();
	wk_ranges[1].end = 0x7f001800;		/* the page straddles the end of the NVS range */
	wk_ranges[1].start = 0x7f000000;
	af.mp_wakeup_mailbox = 0x7f001000;
	wk_ranges[2].start = 0x7f001800;
	EXPECT_STR(mp_wakeup_problem(&af, &wk_map), "the wakeup mailbox is not in ACPI NVS memory");
}

/*
 * Every failing map rule names where: the check's detail holds the address range, so a
 * firmware team can find the descriptor without the raw map (an INFO rule's fact too). And the map rules alone
 * (conformance_evaluate_map, the offline judge's entry) give the same verdicts and details.
 */
static void expect_range(const char *rule, const char *range)
{
	const struct conformance_check *c = find(rule);

	EXPECT(c && (c->verdict == VERDICT_FAIL || c->verdict == VERDICT_WARN ||
		     c->verdict == VERDICT_INFO));
	if (!EXPECT(c && strstr(c->detail, range)))
		fprintf(stderr, "  %s: want %s in: %s\n", rule, range, c ? c->detail : "(none)");
}

static void expect_map_rules_agree(void)
{
	struct conformance_check m[CONFORMANCE_MAX_CHECKS];
	unsigned n = conformance_evaluate_map(&in, m, CONFORMANCE_MAX_CHECKS, scratch);

	EXPECT(n >= 16);
	for (unsigned i = 0; i < n; i++) {
		const struct conformance_check *c = find(m[i].rule);

		EXPECT(strncmp(m[i].rule, "map.", 4) == 0 || strncmp(m[i].rule, "unaccepted.", 11) == 0);
		if (!EXPECT(c && c->verdict == m[i].verdict && strcmp(c->detail, m[i].detail) == 0))
			fprintf(stderr, "  %s differs: %s\n", m[i].rule, m[i].detail);
	}
}

TEST(failing_map_rules_name_the_range)
{
	good_tdx();
	add(EFI_CONVENTIONAL_MEMORY, 8 * GiB + 0x800, 4 * KiB);
	run();
	expect_range("map.alignment", "descriptor 7 (start 0x200000800, 1 pages)");
	expect_map_rules_agree();

	good_tdx();
	add(EFI_CONVENTIONAL_MEMORY, 7 * GiB, 4 * KiB);
	add(EFI_CONVENTIONAL_MEMORY, 6 * GiB + 1 * MiB, 4 * KiB);
	run();
	expect_range("map.sorted", "[0x180100000, 0x180101000) starts below its predecessor "
		     "[0x1c0000000, 0x1c0001000)");
	expect_map_rules_agree();

	good_tdx();
	add(EFI_CONVENTIONAL_MEMORY, 5 * GiB, 2 * MiB);
	run();
	expect_range("map.overlap", "[0x100000000, 0x180000000) and [0x140000000, 0x140200000)");
	expect_map_rules_agree();

	good_tdx();
	add_attr(EFI_UNACCEPTED_MEMORY, 8 * GiB, 2 * MiB, RUNTIME);
	add_attr(EFI_UNACCEPTED_MEMORY, 9 * GiB, 2 * MiB, WB | SP);
	add(EFI_UNACCEPTED_MEMORY, 10 * GiB + 4 * KiB, 4 * MiB);
	add(EFI_UNACCEPTED_MEMORY, 512 * KiB, 64 * KiB);
	in.platform = DETECTED_NONE;
	in.tdx_shared_bit = 0;
	in.phys_bits = 33;
	run();
	expect_range("unaccepted.platform", "first [0x100000000, 0x180000000)");
	expect_range("unaccepted.runtime", "first [0x200000000, 0x200200000)");
	expect_range("unaccepted.wb", "first [0x200000000, 0x200200000)");
	expect_range("unaccepted.sp", "first [0x240000000, 0x240200000)");
	expect_range("unaccepted.alignment", "from 0x80000");
	expect_range("unaccepted.below_1m", "first [0x80000, 0x90000)");
	expect_range("unaccepted.addr_width", "[0x280001000, 0x280401000)");
	expect_map_rules_agree();

	/* The TDX shared bit names the range that reaches it. */
	good_tdx();
	add(EFI_UNACCEPTED_MEMORY, (1ULL << 46) - 2 * MiB, 4 * MiB);
	run();
	expect_range("unaccepted.addr_width", "[0x3fffffe00000, 0x400000200000)");
	expect_map_rules_agree();
}
