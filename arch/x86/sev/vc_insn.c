/* SPDX-License-Identifier: MIT */
/* memaccept: the #VC exit code against the instruction bytes at RIP (pure logic, host-tested, fuzzed). */
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/vc_insn.h"
#include "lib/string.h"

/* Two-byte 0F xx opcodes: CPUID, RDTSC, RDMSR, WRMSR. */
static bool two_byte(const u8 *b, size_t avail, u8 second, u32 kind, struct vc_insn *d)
{
	if (avail < 2 || b[0] != 0x0f || b[1] != second)
		return false;
	d->kind = kind;
	d->len = 2;
	return true;
}

static bool port_io(const u8 *b, size_t avail, struct vc_insn *d)
{
	size_t i = 0;
	bool opsize = false, rep = false;

	/* 0x66 (operand size) and, for the string forms, 0xF3 (REP), once each. */
	while (i < avail && i < 2 && ((b[i] == 0x66 && !opsize) || (b[i] == 0xf3 && !rep))) {
		opsize |= b[i] == 0x66;
		rep |= b[i] == 0xf3;
		i++;
	}
	if (i >= avail)
		return false;
	u8 op = b[i++];

	if (op >= 0x6c && op <= 0x6f) {
		d->kind = VC_INSN_STRING_IO;
		d->size = !(op & 1) ? 1 : opsize ? 2 : 4;
		d->len = (u32)i;
		return true;
	}
	if (rep)
		return false;
	switch (op) {
	case 0xe4: case 0xe5: case 0xe6: case 0xe7:
		if (i >= avail)
			return false;
		d->port_imm = true;
		d->port = b[i++];
		break;
	case 0xec: case 0xed: case 0xee: case 0xef:
		break;
	default:
		return false;
	}
	/* The byte forms (even opcodes) ignore 0x66; memaccept never writes it there. */
	if (!(op & 1) && opsize)
		return false;
	d->size = !(op & 1) ? 1 : opsize ? 2 : 4;
	d->kind = op & 2 ? VC_INSN_OUT : VC_INSN_IN;
	d->len = (u32)i;
	return true;
}

bool vc_insn_check(u64 exit_code, const u8 *bytes, size_t avail, struct vc_insn *d)
{
	memset(d, 0, sizeof(*d));
	if (!bytes)
		return false;
	if (avail > VC_INSN_MAX_LEN)
		avail = VC_INSN_MAX_LEN;
	switch (exit_code) {
	case SVM_EXIT_CPUID:
		return two_byte(bytes, avail, 0xa2, VC_INSN_CPUID, d);
	case SVM_EXIT_RDTSC:
		return two_byte(bytes, avail, 0x31, VC_INSN_RDTSC, d);
	case SVM_EXIT_MSR:
		return two_byte(bytes, avail, 0x32, VC_INSN_RDMSR, d) ||
		       two_byte(bytes, avail, 0x30, VC_INSN_WRMSR, d);
	case SVM_EXIT_RDTSCP:
		if (avail < 3 || bytes[0] != 0x0f || bytes[1] != 0x01 || bytes[2] != 0xf9)
			return false;
		d->kind = VC_INSN_RDTSCP;
		d->len = 3;
		return true;
	case SVM_EXIT_IOIO:
		return port_io(bytes, avail, d);
	default:
		/* MMIO (NPF), WBINVD and the rest: memaccept serves none, so none is checked. */
		return false;
	}
}
