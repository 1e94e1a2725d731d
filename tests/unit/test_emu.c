/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the emulator's instruction decoder and fault-injection parser. */
#include <string.h>
#include "arch/x86/emu/decode.h"
#include "arch/x86/emu/faults.h"
#include "tests/unit/unit.h"

TEST(decode_known_encodings)
{
	static const u8 tdcall[] = { 0x66, 0x0f, 0x01, 0xcc, 0x90 };
	static const u8 pvalidate[] = { 0xf2, 0x0f, 0x01, 0xff };
	static const u8 vmgexit[] = { 0xf3, 0x0f, 0x01, 0xd9 };
	static const u8 rdmsr[] = { 0x0f, 0x32, 0x00, 0x00 };
	static const u8 wrmsr[] = { 0x0f, 0x30, 0x00, 0x00 };
	struct emu_decoded d;

	d = emu_decode(tdcall, sizeof(tdcall));
	EXPECT_EQ(d.insn, INSN_TDCALL);
	EXPECT_EQ(d.len, 4);
	d = emu_decode(pvalidate, sizeof(pvalidate));
	EXPECT_EQ(d.insn, INSN_PVALIDATE);
	d = emu_decode(vmgexit, sizeof(vmgexit));
	EXPECT_EQ(d.insn, INSN_VMGEXIT);
	EXPECT_EQ(d.len, 4);
	d = emu_decode(rdmsr, sizeof(rdmsr));
	EXPECT_EQ(d.insn, INSN_RDMSR);
	EXPECT_EQ(d.len, 2);
	d = emu_decode(wrmsr, sizeof(wrmsr));
	EXPECT_EQ(d.insn, INSN_WRMSR);
}

TEST(decode_rmpadjust)
{
	/* RMPADJUST: F3 0F 01 FE (AMD APM vol. 3); F2 0F 01 FE would be another instruction. */
	static const u8 rmpadjust[] = { 0xf3, 0x0f, 0x01, 0xfe };
	static const u8 near[] = { 0xf2, 0x0f, 0x01, 0xfe };
	struct emu_decoded d;

	d = emu_decode(rmpadjust, sizeof(rmpadjust));
	EXPECT_EQ(d.insn, INSN_RMPADJUST);
	EXPECT_EQ(d.len, 4);
	d = emu_decode(near, sizeof(near));
	EXPECT_EQ(d.insn, INSN_UNKNOWN);
}

TEST(decode_rejects_near_misses)
{
	static const u8 cases[][4] = {
		{ 0x0f, 0x01, 0xcc, 0x90 },	/* TDCALL without its 66 prefix */
		{ 0x0f, 0x01, 0xd9, 0x90 },	/* plain VMMCALL */
		{ 0xf3, 0x0f, 0x01, 0xd8 },	/* VMRUN-ish neighbour */
		{ 0x66, 0x0f, 0x01, 0xcf },	/* SEAMCALL */
		{ 0x0f, 0x0b, 0x00, 0x00 },	/* UD2 */
		{ 0x0f, 0x31, 0x00, 0x00 },	/* RDTSC */
	};

	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++)
		EXPECT_EQ(emu_decode(cases[i], 4).insn, INSN_UNKNOWN);
	/* Truncated input never matches a longer encoding. */
	EXPECT_EQ(emu_decode((const u8 *)"\x66\x0f\x01", 3).insn, INSN_UNKNOWN);
	EXPECT_EQ(emu_decode((const u8 *)"\x0f", 1).insn, INSN_UNKNOWN);
	EXPECT_EQ(emu_decode(NULL, 0).insn, INSN_UNKNOWN);
}

TEST(faults_parse_all_kinds)
{
	struct emu_faults fs;
	char err[128] = "";

	EXPECT(emu_faults_parse("busy:3,size_mismatch@0x40000000,already@1G,status@1025M=0xC000000100000000,"
				"pvalidate_input@0x1000,psc_partial:7,psc_error,psc_backwards,no_sept_ve_disable",
				&fs, err, sizeof(err)));
	EXPECT_EQ(fs.n, 9);
	EXPECT_EQ(fs.f[0].kind, FAULT_BUSY);
	EXPECT_EQ(fs.f[0].count, 3);
	EXPECT_EQ(fs.f[0].addr, FAULT_ANY_ADDR);
	EXPECT_EQ(fs.f[1].addr, 0x40000000);
	EXPECT_EQ(fs.f[2].kind, FAULT_ALREADY);
	EXPECT_EQ(fs.f[2].addr, GiB);
	EXPECT_EQ(fs.f[3].addr, 1025 * MiB);
	EXPECT_EQ(fs.f[3].value, 0xC000000100000000ULL);
	EXPECT_EQ(fs.f[5].kind, FAULT_PSC_PARTIAL);
	EXPECT_EQ(fs.f[5].value, 7);
	EXPECT_EQ(fs.f[8].kind, FAULT_NO_SEPT_VE_DISABLE);
	EXPECT(emu_faults_parse("svsm_busy:4,svsm_not_run", &fs, err, sizeof(err)));
	EXPECT_EQ(fs.n, 2);
	EXPECT_EQ(fs.f[0].kind, FAULT_SVSM_BUSY);
	EXPECT_EQ(fs.f[0].count, 4);
	EXPECT_EQ(fs.f[1].kind, FAULT_SVSM_NOT_RUN);
	EXPECT(emu_faults_parse("svsm_create_vcpu_refused:2,svsm_create_vcpu_malformed", &fs, err, sizeof(err)));
	EXPECT_EQ(fs.n, 2);
	EXPECT_EQ(fs.f[0].kind, FAULT_SVSM_CREATE_VCPU_REFUSED);
	EXPECT_EQ(fs.f[0].count, 2);
	EXPECT_EQ(fs.f[1].kind, FAULT_SVSM_CREATE_VCPU_MALFORMED);
	EXPECT(emu_faults_parse("svsm_delete_vcpu_refused:3,svsm_delete_vcpu_malformed,ap_create_lost", &fs, err,
				sizeof(err)));
	EXPECT_EQ(fs.n, 3);
	EXPECT_EQ(fs.f[0].kind, FAULT_SVSM_DELETE_VCPU_REFUSED);
	EXPECT_EQ(fs.f[0].count, 3);
	EXPECT_EQ(fs.f[1].kind, FAULT_SVSM_DELETE_VCPU_MALFORMED);
	EXPECT_EQ(fs.f[2].kind, FAULT_AP_CREATE_LOST);
	EXPECT_EQ(fs.f[2].count, 1);
	EXPECT(emu_faults_parse("ap_destroy_refused:2,ap_destroy_malformed,rmpadjust_vmsa_fail,"
				"rmpadjust_unvmsa_fail:3,ap_create_late:2", &fs, err, sizeof(err)));
	EXPECT_EQ(fs.n, 5);
	EXPECT_EQ(fs.f[0].kind, FAULT_AP_DESTROY_REFUSED);
	EXPECT_EQ(fs.f[0].count, 2);
	EXPECT_EQ(fs.f[1].kind, FAULT_AP_DESTROY_MALFORMED);
	EXPECT_EQ(fs.f[2].kind, FAULT_RMPADJUST_VMSA_FAIL);
	EXPECT_EQ(fs.f[2].count, 1);
	EXPECT_EQ(fs.f[3].kind, FAULT_RMPADJUST_UNVMSA_FAIL);
	EXPECT_EQ(fs.f[3].count, 3);
	EXPECT_EQ(fs.f[4].kind, FAULT_AP_CREATE_LATE);
	EXPECT_EQ(fs.f[4].count, 2);
	EXPECT(!emu_faults_parse("ap_destroy_malformed:2", &fs, err, sizeof(err)));
	EXPECT(emu_faults_parse("mailbox_ignore@2,no_mp_wakeup,mp_wakeup_bad_mailbox", &fs, err, sizeof(err)));
	EXPECT_EQ(fs.n, 3);
	EXPECT_EQ(fs.f[0].kind, FAULT_MAILBOX_IGNORE);
	EXPECT_EQ(fs.f[0].addr, 2);
	EXPECT_EQ(fs.f[1].kind, FAULT_NO_MP_WAKEUP);
	EXPECT_EQ(fs.f[2].kind, FAULT_MP_WAKEUP_BAD_MAILBOX);
	EXPECT(!emu_faults_parse("mailbox_ignore", &fs, err, sizeof(err)));
	EXPECT(emu_faults_parse("gpaw52", &fs, err, sizeof(err)));
	EXPECT_EQ(fs.f[0].kind, FAULT_GPAW52);
	EXPECT(!emu_faults_parse("gpaw52:2", &fs, err, sizeof(err)));
	EXPECT(emu_faults_parse("mailbox_ack_only@0x3", &fs, err, sizeof(err)));
	EXPECT_EQ(fs.f[0].kind, FAULT_MAILBOX_ACK_ONLY);
	EXPECT_EQ(fs.f[0].addr, 3);
	EXPECT(emu_faults_parse("", &fs, err, sizeof(err)));
	EXPECT_EQ(fs.n, 0);
}

TEST(faults_parse_rejects_bad_specs)
{
	static const char *const bad[] = {
		"bogus", "busy:", "busy:0", "busy:x", "size_mismatch", "already@", "already@0xZZ",
		"status@1G", "status=5", "psc_partial", "psc_error@1G", "busy@1G:2:3", "busy,,busy",
		"no_sept_ve_disable:1", "already@0x12345678901234567",
	};
	struct emu_faults fs;
	char err[128];

	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = 0;
		if (!EXPECT(!emu_faults_parse(bad[i], &fs, err, sizeof(err))))
			printf("  accepted: %s\n", bad[i]);
		EXPECT_EQ(fs.n, 0);
		EXPECT(strstr(err, "emu_fault") != NULL);
	}
}

TEST(faults_take_counts_down_and_matches_addresses)
{
	struct emu_faults fs;
	char err[64];

	EXPECT(emu_faults_parse("busy@2G:2,busy:1", &fs, err, sizeof(err)));
	/* Address-bound first for a range containing it. */
	EXPECT(emu_fault_take(&fs, FAULT_BUSY, 2 * GiB, 2 * GiB + UNIT_SIZE) == &fs.f[0]);
	EXPECT(emu_fault_take(&fs, FAULT_BUSY, 2 * GiB, 2 * GiB + UNIT_SIZE) == &fs.f[0]);
	/* Exhausted: the address-free one answers next, once. */
	EXPECT(emu_fault_take(&fs, FAULT_BUSY, 2 * GiB, 2 * GiB + UNIT_SIZE) == &fs.f[1]);
	EXPECT(emu_fault_take(&fs, FAULT_BUSY, 2 * GiB, 2 * GiB + UNIT_SIZE) == NULL);
	EXPECT_EQ(fs.f[0].fired, 2);
	EXPECT_EQ(fs.f[1].fired, 1);

	EXPECT(emu_faults_parse("size_mismatch@0x40200000", &fs, err, sizeof(err)));
	EXPECT(emu_fault_find(&fs, FAULT_SIZE_MISMATCH, GiB, GiB + UNIT_SIZE) == NULL);
	EXPECT(emu_fault_find(&fs, FAULT_SIZE_MISMATCH, GiB + UNIT_SIZE, GiB + 2 * UNIT_SIZE) != NULL);
	/* find does not consume. */
	EXPECT(emu_fault_find(&fs, FAULT_SIZE_MISMATCH, GiB, 2 * GiB) != NULL);
}

/* The hostile-host faults (docs/threat-model.md): values where an attack needs one. */
TEST(faults_parse_hostile_kinds)
{
	struct emu_faults fs;
	char err[128];

	ASSERT(emu_faults_parse("vc_forge_pvalidate=0x72,vc_forge_vmgexit=0x7b,vc_nested,msr_intercept=0xc0010130,"
				"tsc_freq_intercept=5000,psc_stall,psc_range,psc_lie,svsm_lie", &fs, err, sizeof(err)));
	ASSERT_EQ(fs.n, 9);
	EXPECT_EQ(fs.f[0].kind, FAULT_VC_FORGE_PVALIDATE);
	EXPECT_EQ(fs.f[0].value, 0x72);
	EXPECT_EQ(fs.f[1].kind, FAULT_VC_FORGE_VMGEXIT);
	EXPECT_EQ(fs.f[1].value, 0x7b);
	EXPECT_EQ(fs.f[2].kind, FAULT_VC_NESTED);
	EXPECT_EQ(fs.f[3].value, 0xc0010130);
	EXPECT_EQ(fs.f[4].kind, FAULT_TSC_FREQ_INTERCEPT);
	EXPECT_EQ(fs.f[4].value, 5000);
	EXPECT_EQ(fs.f[8].kind, FAULT_SVSM_LIE);
	ASSERT(emu_faults_parse("sev_only=0x3", &fs, err, sizeof(err)));
	EXPECT_EQ(fs.f[0].kind, FAULT_SEV_ONLY);
	EXPECT_EQ(fs.f[0].value, 3);
	/* The forged exit code and the intercepted MSR are required. */
	EXPECT(!emu_faults_parse("vc_forge_pvalidate", &fs, err, sizeof(err)));
	EXPECT(!emu_faults_parse("msr_intercept", &fs, err, sizeof(err)));
	EXPECT(!emu_faults_parse("psc_stall=1", &fs, err, sizeof(err)));
	/* The host's MADT and wakeup mailbox: an APIC ID up to 0xffffffff, an address. */
	ASSERT(emu_faults_parse("madt_add@0xffffffff,madt_add@1,madt_drop@2,mailbox_at=0x30000000,"
				"mailbox_shared,mailbox_in_image", &fs, err, sizeof(err)));
	ASSERT_EQ(fs.n, 6);
	EXPECT_EQ(fs.f[0].kind, FAULT_MADT_ADD);
	EXPECT_EQ(fs.f[0].addr, 0xffffffffu);
	EXPECT_EQ(fs.f[1].addr, 1);
	EXPECT_EQ(fs.f[2].kind, FAULT_MADT_DROP);
	EXPECT_EQ(fs.f[2].addr, 2);
	EXPECT_EQ(fs.f[3].kind, FAULT_MAILBOX_AT);
	EXPECT_EQ(fs.f[3].value, 0x30000000);
	EXPECT_EQ(fs.f[5].kind, FAULT_MAILBOX_IN_IMAGE);
	EXPECT(!emu_faults_parse("madt_add", &fs, err, sizeof(err)));
	EXPECT(!emu_faults_parse("madt_drop", &fs, err, sizeof(err)));
	EXPECT(!emu_faults_parse("mailbox_at", &fs, err, sizeof(err)));
}
