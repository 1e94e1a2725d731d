/* SPDX-License-Identifier: MIT */
/* memaccept: the #VE information against the instruction at RIP, and the TDVMCALL emulation of it (pure logic). */
#ifndef ARCH_X86_TDX_VE_EMUL_H
#define ARCH_X86_TDX_VE_EMUL_H

#include "arch/x86/tdx/tdx.h"
#include "include/types.h"

/*
 * An instruction #VE is a fault: RIP is at the instruction and VEINFO R10 bits 31:0 give
 * its length, which the handler skips. An x86 instruction is 1 to 15 bytes (Intel SDM
 * vol. 2, 2.3.11).
 */
#define X86_MAX_INSN_LEN 15

/* The #VE information the handler acts on (TDG.VP.VEINFO.GET: RCX, RDX, R10[31:0]). */
struct tdx_ve_info {
	u32 reason;		/* VMX exit reason */
	u64 qual;		/* exit qualification */
	u32 len;		/* instruction length */
};

/* The guest registers an emulation reads and writes (the trap frame's). */
struct tdx_ve_regs {
	u64 rip, rax, rbx, rcx, rdx;
};

/* What the handler must do after tdx_ve_emulate. */
enum tdx_ve_verdict {
	TDX_VE_DONE,		/* emulated: registers written back, RIP past the instruction */
	TDX_VE_NOT_SERVED,	/* not an instruction served here, or the VMM refused CPUID */
	TDX_VE_BAD_LENGTH,	/* a served class with a length of 0 or above 15 */
	TDX_VE_MISMATCH,	/* the bytes at RIP are not the instruction the #VE describes */
	TDX_VE_MSR_REFUSED,	/* the VMM refused the RDMSR or WRMSR */
};

/* TDCALL: loads the registers, runs it, stores them back; returns RAX (tdx_tdcall). */
typedef u64 (*tdx_tdcall_fn)(struct tdx_regs *r);

/*
 * TDVMCALL sub-function subfn (GHCI: TDCALL leaf 0, R10 = 0 standard, R11 the
 * sub-function, RCX the registers exposed to the VMM) with the arguments already in
 * R12-R15. Returns the VMM's status in R10, or all ones when the TDCALL itself failed.
 */
u64 tdx_vmcall(tdx_tdcall_fn tdcall, struct tdx_regs *r, u64 subfn);

/*
 * An Instruction.IO read's result: the operand's low `size` bytes of R11 when the
 * VMM answered (status 0), all ones (a port with nothing behind it) when it refused.
 */
u32 tdx_io_in_value(u64 status, u64 r11, int size);

/*
 * Do bytes ip[0 .. min(len, avail)) hold the instruction the #VE names: of the exit
 * reason's class, exactly len bytes long, and for port I/O of the qualification's
 * direction, size and (imm8 forms) port? Reads no byte past either bound.
 */
bool tdx_ve_insn_check(u32 reason, u64 qual, u32 len, const u8 *ip, size_t avail);

/*
 * Serve the instruction #VE ve at g->rip, whose bytes are ip[0 .. avail): HLT, port I/O
 * (not the string forms), CPUID, RDMSR, WRMSR. The #VE is checked against the bytes
 * before anything is asked of the VMM; then the request goes out through tdcall and the
 * VMM's answer is written back as the instruction would have: IN keeps the bytes above
 * its operand (EAX zero-extends into RAX), CPUID outside 0x40000000-0x4FFFFFFF reads as
 * zeros without asking, RDMSR splits R11 into EDX:EAX. Any other reason: NOT_SERVED,
 * nothing asked, nothing written.
 */
enum tdx_ve_verdict tdx_ve_emulate(const struct tdx_ve_info *ve, struct tdx_ve_regs *g, const u8 *ip,
				   size_t avail, tdx_tdcall_fn tdcall);

#endif
