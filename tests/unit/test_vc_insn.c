/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the #VC check: the exit code against the instruction bytes at RIP. */
#include <string.h>
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/vc_insn.h"
#include "tests/unit/unit.h"

static bool check(u64 code, const u8 *b, size_t n, struct vc_insn *d)
{
	return vc_insn_check(code, b, n, d);
}

TEST(vc_insn_accepts_each_served_instruction)
{
	struct vc_insn d;
	static const u8 cpuid[] = { 0x0f, 0xa2 }, rdtsc[] = { 0x0f, 0x31 }, rdtscp[] = { 0x0f, 0x01, 0xf9 };
	static const u8 rdmsr[] = { 0x0f, 0x32 }, wrmsr[] = { 0x0f, 0x30 };

	EXPECT(check(SVM_EXIT_CPUID, cpuid, 2, &d) && d.kind == VC_INSN_CPUID && d.len == 2);
	EXPECT(check(SVM_EXIT_RDTSC, rdtsc, 2, &d) && d.kind == VC_INSN_RDTSC && d.len == 2);
	EXPECT(check(SVM_EXIT_RDTSCP, rdtscp, 3, &d) && d.kind == VC_INSN_RDTSCP && d.len == 3);
	EXPECT(check(SVM_EXIT_MSR, rdmsr, 2, &d) && d.kind == VC_INSN_RDMSR && d.len == 2);
	EXPECT(check(SVM_EXIT_MSR, wrmsr, 2, &d) && d.kind == VC_INSN_WRMSR && d.len == 2);
}

TEST(vc_insn_port_io_forms)
{
	struct vc_insn d;
	static const u8 inb_dx[] = { 0xec }, inw_dx[] = { 0x66, 0xed }, inl_dx[] = { 0xed };
	static const u8 outb_dx[] = { 0xee }, outw_dx[] = { 0x66, 0xef }, outl_dx[] = { 0xef };
	static const u8 inb_imm[] = { 0xe4, 0x71 }, outl_imm[] = { 0xe7, 0xf4 }, outw_imm[] = { 0x66, 0xe7, 0x80 };
	static const u8 rep_outsb[] = { 0xf3, 0x6e }, insw[] = { 0x66, 0x6d };

	EXPECT(check(SVM_EXIT_IOIO, inb_dx, 1, &d) && d.kind == VC_INSN_IN && d.size == 1 && d.len == 1 && !d.port_imm);
	EXPECT(check(SVM_EXIT_IOIO, inw_dx, 2, &d) && d.kind == VC_INSN_IN && d.size == 2 && d.len == 2);
	EXPECT(check(SVM_EXIT_IOIO, inl_dx, 1, &d) && d.kind == VC_INSN_IN && d.size == 4 && d.len == 1);
	EXPECT(check(SVM_EXIT_IOIO, outb_dx, 1, &d) && d.kind == VC_INSN_OUT && d.size == 1);
	EXPECT(check(SVM_EXIT_IOIO, outw_dx, 2, &d) && d.kind == VC_INSN_OUT && d.size == 2 && d.len == 2);
	EXPECT(check(SVM_EXIT_IOIO, outl_dx, 1, &d) && d.kind == VC_INSN_OUT && d.size == 4);
	EXPECT(check(SVM_EXIT_IOIO, inb_imm, 2, &d) && d.kind == VC_INSN_IN && d.port_imm && d.port == 0x71 && d.len == 2);
	EXPECT(check(SVM_EXIT_IOIO, outl_imm, 2, &d) && d.kind == VC_INSN_OUT && d.port == 0xf4 && d.size == 4);
	EXPECT(check(SVM_EXIT_IOIO, outw_imm, 3, &d) && d.size == 2 && d.port == 0x80 && d.len == 3);
	/* String forms are recognised (they do raise IOIO) but are not IN/OUT. */
	EXPECT(check(SVM_EXIT_IOIO, rep_outsb, 2, &d) && d.kind == VC_INSN_STRING_IO && d.len == 2);
	EXPECT(check(SVM_EXIT_IOIO, insw, 2, &d) && d.kind == VC_INSN_STRING_IO && d.size == 2);
}

/* The WeSee shapes: an exit code at an instruction that cannot raise it. */
TEST(vc_insn_refuses_forged_exit_codes)
{
	struct vc_insn d;
	static const u8 pvalidate[] = { 0xf2, 0x0f, 0x01, 0xff }, ret[] = { 0xc3, 0x90, 0x90 };
	static const u8 cpuid[] = { 0x0f, 0xa2 }, rdtsc[] = { 0x0f, 0x31 }, outb[] = { 0xee };
	static const u64 served[] = { SVM_EXIT_CPUID, SVM_EXIT_RDTSC, SVM_EXIT_RDTSCP, SVM_EXIT_MSR, SVM_EXIT_IOIO };

	for (unsigned i = 0; i < sizeof(served) / sizeof(served[0]); i++) {
		EXPECT(!check(served[i], pvalidate, 4, &d));
		EXPECT(!check(served[i], ret, 3, &d));
	}
	EXPECT(!check(SVM_EXIT_RDTSC, cpuid, 2, &d));
	EXPECT(!check(SVM_EXIT_CPUID, rdtsc, 2, &d));
	EXPECT(!check(SVM_EXIT_MSR, cpuid, 2, &d));
	EXPECT(!check(SVM_EXIT_IOIO, cpuid, 2, &d));
	EXPECT(!check(SVM_EXIT_CPUID, outb, 1, &d));
	/* Exit codes memaccept does not serve have no instruction here. */
	EXPECT(!check(SVM_EXIT_NPF, outb, 1, &d));
	EXPECT(!check(SVM_EXIT_WBINVD, cpuid, 2, &d));
	EXPECT(!check(SVM_EXIT_PAGE_NOT_VALIDATED, cpuid, 2, &d));
}

TEST(vc_insn_prefixes_and_truncation)
{
	struct vc_insn d;
	static const u8 rex_cpuid[] = { 0x48, 0x0f, 0xa2 }, inb_66[] = { 0x66, 0xec };
	static const u8 rep_in[] = { 0xf3, 0xec }, double_66[] = { 0x66, 0x66, 0xed }, imm[] = { 0xe4 };
	static const u8 cpuid[] = { 0x0f, 0xa2 };

	EXPECT(!check(SVM_EXIT_CPUID, rex_cpuid, 3, &d));	/* memaccept never writes a prefix */
	EXPECT(!check(SVM_EXIT_IOIO, inb_66, 2, &d));
	EXPECT(!check(SVM_EXIT_IOIO, rep_in, 2, &d));
	EXPECT(!check(SVM_EXIT_IOIO, double_66, 3, &d));
	EXPECT(!check(SVM_EXIT_IOIO, imm, 1, &d));		/* the imm8 is missing */
	EXPECT(!check(SVM_EXIT_CPUID, cpuid, 1, &d));
	EXPECT(!check(SVM_EXIT_CPUID, NULL, 2, &d));
	EXPECT(!check(SVM_EXIT_CPUID, cpuid, 0, &d));
}
