/* SPDX-License-Identifier: MIT */
/* memaccept: does the instruction at RIP raise the #VC exit code the host delivered? (pure logic) */
#ifndef ARCH_X86_SEV_VC_INSN_H
#define ARCH_X86_SEV_VC_INSN_H

#include "include/types.h"

/*
 * Without Restricted Injection a hypervisor can inject vector 29 with any error code at
 * any instruction boundary (the WeSee attack, IEEE S&P 2024). The error code is the
 * host's word, the instruction bytes at RIP are the guest's: a #VC is served only when
 * the bytes are an instruction that raises that exit code (AMD APM vol. 2, "#VC
 * Exception": the error code is the exit code the intercept would have had). Linux
 * checks the same since commit e3ef461af35a (vc_check_opcode_bytes).
 *
 * Only the encodings memaccept's accessors emit are accepted (no segment, REX or lock
 * prefixes: nothing in memaccept writes them), plus 0x66 for 16-bit port I/O and
 * 0x66/0xF3 before the string forms, which memaccept recognises but does not serve.
 */
enum vc_insn_kind {
	VC_INSN_NONE,
	VC_INSN_CPUID,	/* 0F A2 */
	VC_INSN_RDTSC,	/* 0F 31 */
	VC_INSN_RDTSCP,	/* 0F 01 F9 */
	VC_INSN_RDMSR,	/* 0F 32 */
	VC_INSN_WRMSR,	/* 0F 30 */
	VC_INSN_IN,	/* E4/E5 imm8, EC/ED DX (Intel SDM vol. 2, IN) */
	VC_INSN_OUT,	/* E6/E7 imm8, EE/EF DX (Intel SDM vol. 2, OUT) */
	VC_INSN_STRING_IO,	/* 6C-6F INS/OUTS, with or without REP */
};

struct vc_insn {
	u32 kind;	/* enum vc_insn_kind */
	u32 len;	/* bytes from RIP to the next instruction */
	u32 size;	/* port I/O: operand bytes (1, 2, 4) */
	bool port_imm;	/* port I/O: the port is the imm8 below (else DX) */
	u8 port;
};

/* The longest x86 instruction (Intel SDM vol. 2, 2.3.11): the decoder never reads past it. */
#define VC_INSN_MAX_LEN 15

/*
 * Decode bytes[0..avail) for a #VC with error code exit_code. True if they are an
 * instruction that raises it (d describes it); false if not, or if the exit code is
 * not one memaccept knows an instruction for. Reads bytes in order and stops at the
 * first that does not fit, so it never reads past the instruction it checks.
 */
bool vc_insn_check(u64 exit_code, const u8 *bytes, size_t avail, struct vc_insn *d);

#endif
