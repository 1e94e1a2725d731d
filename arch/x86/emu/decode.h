/* SPDX-License-Identifier: MIT */
/* memaccept (test image): recognising the confidential-computing instructions by their bytes. */
#ifndef ARCH_X86_EMU_DECODE_H
#define ARCH_X86_EMU_DECODE_H

#include "include/types.h"

enum emu_insn {
	INSN_UNKNOWN,
	INSN_TDCALL,	/* 66 0F 01 CC (Intel TDX module ABI) */
	INSN_PVALIDATE,	/* F2 0F 01 FF (AMD APM vol. 3, PVALIDATE) */
	INSN_VMGEXIT,	/* F3 0F 01 D9, "rep vmmcall" (AMD APM vol. 3; GHCB spec) */
	INSN_RDMSR,	/* 0F 32 */
	INSN_WRMSR,	/* 0F 30 */
	INSN_RMPADJUST,	/* F3 0F 01 FE (AMD APM vol. 3, RMPADJUST) */
};

struct emu_decoded {
	u32 insn;	/* enum emu_insn */
	u32 len;	/* bytes to skip to resume after it */
};

/*
 * Decode the instruction in bytes[0..avail). Only the exact encodings memaccept
 * emits are recognised (no extra prefixes): anything else is INSN_UNKNOWN, so that a
 * real #UD or #GP elsewhere is still reported as one.
 */
struct emu_decoded emu_decode(const u8 *bytes, size_t avail);

#endif
