/* SPDX-License-Identifier: MIT */
/* memaccept: Intel TDX guest interface: TDCALL leaves, status codes, TDVMCALL sub-functions. */
#ifndef ARCH_X86_TDX_TDX_H
#define ARCH_X86_TDX_TDX_H

#include "arch/x86/platform.h"
#include "include/types.h"

/*
 * TDCALL (66 0F 01 CC): leaf in RAX, status returned in RAX, operands in RCX, RDX,
 * R8-R15 (Intel TDX Module ABI specification, "TDCALL instruction"; Linux asm/tdx.h).
 */
#define TDG_VP_VMCALL 0
#define TDG_VP_INFO 1
#define TDG_VP_VEINFO_GET 3
#define TDG_MEM_PAGE_ACCEPT 6

/*
 * Completion status (TDX Module ABI, "Function Completion Status Codes"): bit 63 error,
 * bit 62 non-recoverable, bits 47:32 class and details; bits 31:0 carry operand details
 * (which operand was busy, for example). Statuses are compared on bits 63:32.
 */
#define TDX_STATUS_CODE(s) ((u32)((s) >> 32))
#define TDX_STATUS(code, operand) (((u64)(code) << 32) | (operand))
#define TDX_SUCCESS 0x00000000u
#define TDX_PAGE_ALREADY_ACCEPTED 0x00000B0Au	/* a warning, not an error: bit 63 clear */
#define TDX_PAGE_SIZE_MISMATCH 0xC0000B0Bu
#define TDX_OPERAND_BUSY 0x80000200u
#define TDX_OPERAND_INVALID 0xC0000100u

/* TDG.MEM.PAGE.ACCEPT: RCX = GPA (bits 51:12) | level (bits 2:0); the GPA is aligned to the level. */
#define TDX_ACCEPT_GPA_MASK 0x000ffffffffff000ULL
#define TDX_ACCEPT_LEVEL_MASK 7
#define TDX_LEVEL_4K 0
#define TDX_LEVEL_2M 1
#define TDX_LEVEL_1G 2
#define TDX_LEVEL_SHIFT(l) (12 + 9 * (l))
#define TDX_LEVEL_SIZE(l) (1ULL << TDX_LEVEL_SHIFT(l))

/* TDG.VP.INFO outputs: RCX[5:0] GPA width, RDX TD attributes, R8 vCPU counts. */
#define TDX_INFO_GPAW_MASK 0x3f
#define TDX_ATTR_SEPT_VE_DISABLE (1ULL << 28)

/*
 * TDG.VP.VMCALL (GHCI specification): R10 = 0 selects the standard TDVMCALLs, R11 the
 * sub-function; RCX is the mask of registers passed to the VMM (bit n = GPR n). The
 * VMM's status comes back in R10 (0 = success), outputs from R11 on.
 */
#define TDVMCALL_EXPOSE_R10_R15 0xfc00ULL
#define TDVMCALL_STANDARD 0
#define TDVMCALL_CPUID 10		/* Instruction.CPUID: R12 leaf, R13 subleaf -> R12-R15 */
#define TDVMCALL_HLT 12			/* Instruction.HLT: R12 = interrupts blocked */
#define TDVMCALL_IO 30			/* Instruction.IO: R12 size, R13 0 in/1 out, R14 port, R15 data */
#define TDVMCALL_REPORT_FATAL_ERROR 0x10003 /* R12 error code, R13 GPA of more data (0: none) */
#define TDVMCALL_IO_IN 0
#define TDVMCALL_IO_OUT 1

/* #VE: TDG.VP.VEINFO.GET returns the VMX exit reason (RCX), qualification (RDX), GLA (R8),
 * GPA (R9) and instruction length (R10[31:0]) (TDX Module ABI; Intel SDM vol. 3C app. C). */
#define EXIT_REASON_CPUID 10
#define EXIT_REASON_HLT 12
#define EXIT_REASON_IO 30
#define EXIT_REASON_MSR_READ 31
#define EXIT_REASON_EPT_VIOLATION 48
/* I/O exit qualification (Intel SDM vol. 3C, table 28-5). */
#define IO_QUAL_SIZE(q) (((q) & 7) + 1)
#define IO_QUAL_IN (1ULL << 3)
#define IO_QUAL_STRING (1ULL << 4)
#define IO_QUAL_PORT(q) ((u16)((q) >> 16))

/* How many times an accept that answers OPERAND_BUSY is retried (td-shim uses 5). */
#define TDX_BUSY_RETRIES 5

struct tdx_regs {
	u64 rax, rcx, rdx, r8, r9, r10, r11, r12, r13, r14, r15;
};

/* tdcall.asm: loads the registers, runs TDCALL, stores them back; returns RAX. */
u64 tdx_tdcall(struct tdx_regs *r);

/*
 * The accept splitter, separate from the instruction so host tests can mock it:
 * page_accept(gpa | level) runs TDG.MEM.PAGE.ACCEPT and returns the status.
 */
struct tdx_accept_ops {
	u64 (*page_accept)(u64 gpa_level);
	/* Zero [start, start + len): used for pages the host says were already accepted. */
	void (*zero)(u64 start, u64 len);
	/* Report and stop; does not return in the kernel (tests may longjmp out). */
	void (*fatal)(u32 condition, const char *what, u64 status, u64 gpa, unsigned level);
	/* A firmware/host inconsistency the guest can survive: say so (once per range). */
	void (*warn)(const char *what, u64 gpa, unsigned level);
};

struct tdx_accept_stats {
	u64 tdcalls;		/* TDG.MEM.PAGE.ACCEPT executions */
	u64 accepted[3];	/* successful accepts per level: 4K, 2M, 1G */
	u64 busy_retries;
	u64 size_mismatch;
	u64 already_accepted;	/* pages (4 KiB units) the host claimed were accepted */
};

/*
 * Accept [start, end) (4 KiB aligned) with the largest levels alignment and length
 * allow; on PAGE_SIZE_MISMATCH the piece is accepted at the next smaller level.
 */
void tdx_accept_range(u64 start, u64 end, const struct tdx_accept_ops *ops,
		      struct tdx_accept_stats *st);

/* The platform, after boot/ found the TDX signature. */
const struct cc_platform *tdx_platform(void);
/* TD info, #VE handler: after the IDT is up. */
void tdx_setup(void);

#endif
