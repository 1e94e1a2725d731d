/* SPDX-License-Identifier: MIT */
/* memaccept: the TDX #VE check and its TDVMCALL emulation (pure logic, host-tested, fuzzed). */
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/vc_insn.h"
#include "arch/x86/tdx/ve_emul.h"

u64 tdx_vmcall(tdx_tdcall_fn tdcall, struct tdx_regs *r, u64 subfn)
{
	r->rax = TDG_VP_VMCALL;
	r->rcx = TDVMCALL_EXPOSE_R10_R15;
	r->r10 = TDVMCALL_STANDARD;
	r->r11 = subfn;
	if (tdcall(r))
		return ~0ULL;	/* the TDCALL itself failed: treat like a VMM error */
	return r->r10;
}

/* The bytes an operand of size 1, 2 or 4 holds. */
static u64 operand_mask(int size)
{
	return size == 4 ? 0xffffffffULL : (1ULL << (8 * size)) - 1;
}

u32 tdx_io_in_value(u64 status, u64 r11, int size)
{
	/* A port the VMM refuses reads as all ones, like a port with nothing behind it. */
	if (status)
		return ~0u;
	/* Only the operand's bytes are an answer: whatever the VMM put above them is dropped. */
	return (u32)(r11 & operand_mask(size));
}

/*
 * Defence in depth: the TDX module, not the host, writes the #VE information, and the
 * host cannot inject #VE. The SNP #VC check's decoder (sev/vc_insn.h) knows the same
 * encodings; HLT is F4. A mismatch means the handler would emulate one instruction and
 * skip another.
 */
bool tdx_ve_insn_check(u32 reason, u64 qual, u32 len, const u8 *ip, size_t avail)
{
	struct vc_insn d;

	if (avail > len)
		avail = len;
	switch (reason) {
	case EXIT_REASON_HLT:
		return len == 1 && avail == 1 && ip[0] == 0xf4;
	case EXIT_REASON_CPUID:
		return vc_insn_check(SVM_EXIT_CPUID, ip, avail, &d) && d.len == len;
	case EXIT_REASON_MSR_READ:
	case EXIT_REASON_MSR_WRITE:
		return vc_insn_check(SVM_EXIT_MSR, ip, avail, &d) && d.len == len &&
		       d.kind == (reason == EXIT_REASON_MSR_READ ? VC_INSN_RDMSR : VC_INSN_WRMSR);
	case EXIT_REASON_IO:
		return vc_insn_check(SVM_EXIT_IOIO, ip, avail, &d) && d.len == len &&
		       d.kind == ((qual & IO_QUAL_IN) ? VC_INSN_IN : VC_INSN_OUT) &&
		       d.size == IO_QUAL_SIZE(qual) && (!d.port_imm || d.port == IO_QUAL_PORT(qual));
	default:
		return false;
	}
}

static bool served(u32 reason, u64 qual)
{
	switch (reason) {
	case EXIT_REASON_HLT:
	case EXIT_REASON_CPUID:
	case EXIT_REASON_MSR_READ:
	case EXIT_REASON_MSR_WRITE:
		return true;
	case EXIT_REASON_IO:
		return !(qual & IO_QUAL_STRING);
	default:
		return false;
	}
}

/* IN writes AL, AX or EAX; EAX zero-extends into RAX (Intel SDM vol. 1, 3.4.1.1). */
static void emulate_io(u64 qual, struct tdx_ve_regs *g, tdx_tdcall_fn tdcall)
{
	int size = (int)IO_QUAL_SIZE(qual);	/* 1, 2 or 4: the instruction check saw to it */
	u64 mask = operand_mask(size);
	bool in = qual & IO_QUAL_IN;
	struct tdx_regs r = { .r12 = (u64)size, .r13 = in ? TDVMCALL_IO_IN : TDVMCALL_IO_OUT,
			      .r14 = IO_QUAL_PORT(qual), .r15 = in ? 0 : (u32)(g->rax & mask) };
	u64 status = tdx_vmcall(tdcall, &r, TDVMCALL_IO);

	if (!in)
		return;
	u32 v = tdx_io_in_value(status, r.r11, size);

	g->rax = size == 4 ? v : (g->rax & ~mask) | (v & mask);
}

/*
 * CPUID that raised #VE (the module answers most leaves itself: tdx-module td_cpuid.c):
 * as Linux handle_cpuid, only the hypervisor range 0x40000000-0x4FFFFFFF is asked of the
 * VMM; any other leaf reads as zeros, which is what the CPU gives for a leaf it does not
 * support, and keeps a host from inventing CPU features. false: the VMM refused.
 */
static bool emulate_cpuid(struct tdx_ve_regs *g, tdx_tdcall_fn tdcall)
{
	u32 leaf = (u32)g->rax;
	struct tdx_regs c = { .r12 = leaf, .r13 = (u32)g->rcx };

	if (leaf < 0x40000000 || leaf > 0x4fffffff) {
		g->rax = g->rbx = g->rcx = g->rdx = 0;
		return true;
	}
	if (tdx_vmcall(tdcall, &c, TDVMCALL_CPUID))
		return false;
	g->rax = (u32)c.r12, g->rbx = (u32)c.r13, g->rcx = (u32)c.r14, g->rdx = (u32)c.r15;
	return true;
}

enum tdx_ve_verdict tdx_ve_emulate(const struct tdx_ve_info *ve, struct tdx_ve_regs *g, const u8 *ip,
				   size_t avail, tdx_tdcall_fn tdcall)
{
	if (!served(ve->reason, ve->qual))
		return TDX_VE_NOT_SERVED;
	/* A length of 0 would take the #VE again for ever, a longer one resume inside code. */
	if (ve->len == 0 || ve->len > X86_MAX_INSN_LEN)
		return TDX_VE_BAD_LENGTH;
	if (!tdx_ve_insn_check(ve->reason, ve->qual, ve->len, ip, avail))
		return TDX_VE_MISMATCH;

	switch (ve->reason) {
	case EXIT_REASON_HLT: {
		/* R12 = 1: interrupts are blocked, so the VMM must not wake us for one. */
		struct tdx_regs r = { .r12 = 1 };

		tdx_vmcall(tdcall, &r, TDVMCALL_HLT);
		break;
	}
	case EXIT_REASON_IO:
		emulate_io(ve->qual, g, tdcall);
		break;
	case EXIT_REASON_CPUID:
		if (!emulate_cpuid(g, tdcall))
			return TDX_VE_NOT_SERVED;
		break;
	case EXIT_REASON_MSR_READ: {
		/* Instruction.RDMSR (GHCI): R12 the MSR, R11 the value read. */
		struct tdx_regs r = { .r12 = (u32)g->rcx };

		if (tdx_vmcall(tdcall, &r, TDVMCALL_RDMSR))
			return TDX_VE_MSR_REFUSED;
		g->rax = (u32)r.r11, g->rdx = r.r11 >> 32;
		break;
	}
	case EXIT_REASON_MSR_WRITE: {
		/* Instruction.WRMSR: R12 the MSR, R13 the value (EDX:EAX). */
		struct tdx_regs r = { .r12 = (u32)g->rcx, .r13 = (g->rdx << 32) | (u32)g->rax };

		if (tdx_vmcall(tdcall, &r, TDVMCALL_WRMSR))
			return TDX_VE_MSR_REFUSED;
		break;
	}
	}
	g->rip += ve->len;
	return TDX_VE_DONE;
}
