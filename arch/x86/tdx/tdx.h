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
/*
 * Until edk2-stable202411 (commit 383f729a, PR #6112 "OvmfPkg/PlatformInitLib: Reserve
 * Sec Page Tables in TDVF"), TDVF ran the APs waiting in its mailbox loop on its SEC page
 * tables, PcdOvmfSecPageTablesBase 0x800000 with PcdOvmfSecPageTablesSize 0x6000
 * (OvmfPkg/IntelTdx/IntelTdxX64.fdf), and reported that memory as usable. An OS that
 * reuses it while an AP still waits there (one it has not woken yet, or never wakes:
 * cpus=) pulls the page tables from under that AP (Asterinas issue #1628).
 */
#define TDVF_SEC_PAGE_TABLES 0x800000ULL
#define TDVF_SEC_PAGE_TABLES_SIZE 0x6000ULL

/* The GPA shared bit, 1 << (GPAW - 1) from TDG.VP.INFO; 0 before that or outside a TD. */
u64 tdx_shared_bit(void);
/*
 * The TD's vCPUs, NUM_VCPUS from TDG.VP.INFO (R8 bits 31:0); 0 before that or outside a
 * TD. Trusted: the TDX module counts each TDH.VP.INIT, which it allows only before
 * TDH.MR.FINALIZE (intel/tdx-module tdx_1.5 tdh_vp_init.c, op_state_lookup.c), so the
 * count is final before the TD runs.
 */
u32 tdx_num_vcpus(void);

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
#define TDX_NO_VALID_VE_INFO 0xC0000704u	/* VEINFO.GET with no #VE pending */
/* Operand ids in bits 31:0 of an error (TDX Module ABI; tdx-module OPERAND_ID_RCX). */
#define TDX_OPERAND_ID_RCX 1

/*
 * TDG.MEM.PAGE.ACCEPT: RCX = GPA (bits 51:12) | level (bits 2:0); the GPA is aligned to
 * the level. The TDX 1.5 module accepts levels 0 (4 KiB) and 1 (2 MiB) only: level 2
 * (1 GiB) answers OPERAND_INVALID on RCX (intel/tdx-module
 * src/td_dispatcher/vm_exits/tdg_mem_page_accept.c, verify_page_info_input(.., LVL_PT,
 * LVL_PD)), so memaccept never asks for it. TDX_LEVEL_1G names it for the emulator.
 */
#define TDX_ACCEPT_GPA_MASK 0x000ffffffffff000ULL
#define TDX_ACCEPT_LEVEL_MASK 7
#define TDX_ACCEPT_RESERVED_MASK 0xff8ULL
#define TDX_LEVEL_4K 0
#define TDX_LEVEL_2M 1
#define TDX_LEVEL_1G 2
#define TDX_ACCEPT_MAX_LEVEL TDX_LEVEL_2M
#define TDX_LEVEL_SHIFT(l) (12 + 9 * (l))
#define TDX_LEVEL_SIZE(l) (1ULL << TDX_LEVEL_SHIFT(l))

/*
 * TDG.VP.INFO outputs: RCX[5:0] GPA width, RDX TD attributes, R8 vCPU counts
 * (intel/tdx-module src/td_dispatcher/vm_exits/tdg_vp_info.c). Attributes: bit 0 DEBUG
 * (the host can read and write the TD's state: no confidentiality anyway), bit 28
 * SEPT_VE_DISABLE (an EPT violation on a pending private page exits to the VMM instead
 * of raising #VE in the guest) (Linux arch/x86/include/asm/shared/tdx.h).
 */
#define TDX_INFO_GPAW_MASK 0x3f
#define TDX_ATTR_DEBUG (1ULL << 0)
#define TDX_ATTR_SEPT_VE_DISABLE (1ULL << 28)

/*
 * TD-scope metadata, TDG.VM.RD (RDX = field ID; the value in R8, 0 on failure) and
 * TDG.VM.WR (R8 = value, R9 = mask of the bits to write; the old value in R8)
 * (intel/tdx-module tdg_vm_rd_wr.c). Field IDs and bits as Linux
 * arch/x86/include/asm/shared/tdx.h has them. From TDX module 1.5 a TD whose
 * CONFIG_FLAGS has FLEXIBLE_PENDING_VE may turn pending-page #VEs off itself, through
 * TD_CTLS.PENDING_VE_DISABLE, which the module starts from the SEPT_VE_DISABLE
 * attribute (tdh_mng_init.c); then the attribute tells only how it started.
 */
#define TDG_VM_RD 7
#define TDG_VM_WR 8
#define TDCS_CONFIG_FLAGS 0x1110000300000016ULL
#define TDCS_TD_CTLS 0x1110000300000017ULL
#define TDCS_CONFIG_FLEXIBLE_PENDING_VE (1ULL << 1)
#define TD_CTLS_PENDING_VE_DISABLE (1ULL << 0)

/*
 * TDG.VP.VMCALL (GHCI specification): R10 = 0 selects the standard TDVMCALLs, R11 the
 * sub-function; RCX is the mask of registers passed to the VMM (bit n = GPR n). The
 * VMM's status comes back in R10 (0 = success), outputs from R11 on.
 */
#define TDVMCALL_EXPOSE_R10_R15 0xfc00ULL
/*
 * RCX bits that must be 0 (RAX, RCX, RSP) and bits 63:32 (tdx-module tdg_vp_vmcall.c),
 * and RBP (bit 5) in a TD with CONFIG_FLAGS.NO_RBP_MOD, which KVM always sets
 * (setup_tdparams: TDX_CONFIG_FLAGS_NO_RBP_MOD).
 */
#define TDVMCALL_MASK_FORBIDDEN 0xffffffff00000033ULL
#define TDVMCALL_REG(n) (1ULL << (n))	/* GPR numbers: RAX 0, RCX 1, RDX 2, RBX 3, ... R15 15 */
#define GPR_RDX 2
#define GPR_RBX 3
#define GPR_RSI 6
#define GPR_RDI 7
#define GPR_R8 8
#define GPR_R9 9
#define GPR_R14 14
#define GPR_R15 15
#define TDVMCALL_STANDARD 0
#define TDVMCALL_CPUID 10		/* Instruction.CPUID: R12 leaf, R13 subleaf -> R12-R15 */
#define TDVMCALL_HLT 12			/* Instruction.HLT: R12 = interrupts blocked */
#define TDVMCALL_IO 30			/* Instruction.IO: R12 size, R13 0 in/1 out, R14 port, R15 data */
#define TDVMCALL_RDMSR 31		/* Instruction.RDMSR: R12 MSR -> R11 value */
#define TDVMCALL_WRMSR 32		/* Instruction.WRMSR: R12 MSR, R13 value */
#define TDVMCALL_REPORT_FATAL_ERROR 0x10003 /* R12 error code, R13 GPA, message in 8 GPRs */
/*
 * GetTdVmCallInfo (GHCI): with R12 = 0 the VMM answers success and R11-R14 = 0 (no
 * TDVMCALLs beyond the base set). KVM answers it in the kernel, without an exit to QEMU
 * (Linux arch/x86/kvm/vmx/tdx.c tdx_get_td_vm_call_info, called from handle_tdvmcall;
 * from Linux 6.16 R12 = 1 goes to QEMU): the round trip to the host that does no work,
 * which workload=probe times.
 */
#define TDVMCALL_GET_TD_VM_CALL_INFO 0x10000
#define TDVMCALL_IO_IN 0
#define TDVMCALL_IO_OUT 1

/* #VE: TDG.VP.VEINFO.GET returns the VMX exit reason (RCX), qualification (RDX), GLA (R8),
 * GPA (R9) and instruction length (R10[31:0]) (TDX Module ABI; Intel SDM vol. 3C app. C). */
#define EXIT_REASON_CPUID 10
#define EXIT_REASON_HLT 12
#define EXIT_REASON_INVD 13
#define EXIT_REASON_VMCALL 18
#define EXIT_REASON_CR_ACCESS 28
#define EXIT_REASON_IO 30
#define EXIT_REASON_MWAIT 36
#define EXIT_REASON_MONITOR 39
#define EXIT_REASON_MSR_READ 31
#define EXIT_REASON_MSR_WRITE 32
#define EXIT_REASON_EPT_VIOLATION 48
#define EXIT_REASON_WBINVD 54
/* I/O exit qualification (Intel SDM vol. 3C, table 28-5). */
#define IO_QUAL_SIZE(q) (((q) & 7) + 1)
#define IO_QUAL_IN (1ULL << 3)
#define IO_QUAL_STRING (1ULL << 4)
#define IO_QUAL_PORT(q) ((u16)((q) >> 16))

/*
 * How long an accept that answers OPERAND_BUSY is retried (tdx/accept.c): ten times the
 * module's default host-priority lock timeout (intel/tdx-module td_control_structures.h,
 * DEFAULT_HP_LOCK_TIMEOUT_USEC 1 s; 10 ms to 100 s), past which the module exits to the
 * host rather than let the guest spin (tdx_td_dispatcher.c td_call).
 */
#define TDX_BUSY_TIMEOUT_NS (10ULL * 1000 * 1000 * 1000)

/*
 * TDVMCALL<ReportFatalError> (GHCI specification; QEMU target/i386/kvm/tdx.c
 * tdx_handle_report_fatal_error): R12 is the error code. QEMU refuses any non-zero bit
 * in 15:0 ("invalid error code": the VM stops as an internal error and the reason is
 * lost), shows bits 31:0, and reads R13 as a GPA only when bit 63 is set. The message is
 * up to 64 ASCII bytes in R14, R15, RBX, RDI, RSI, R8, R9, RDX (8 bytes each, low byte
 * first), each present only if its bit is set in RCX. memaccept puts its reason
 * (FATAL_REASON: condition << 8 | exit code, 16 bits) in bits 31:16.
 */
#define TDX_FATAL_CODE_SHIFT 16
#define TDX_FATAL_CODE_RESERVED 0xffffULL	/* must be zero for QEMU */
#define TDX_FATAL_GPA_VALID (1ULL << 63)
#define TDX_FATAL_MSG_LEN 64
#define TDX_FATAL_MSG_REGS                                                                  \
	(TDVMCALL_REG(GPR_R14) | TDVMCALL_REG(GPR_R15) | TDVMCALL_REG(GPR_RBX) |            \
	 TDVMCALL_REG(GPR_RDI) | TDVMCALL_REG(GPR_RSI) | TDVMCALL_REG(GPR_R8) |              \
	 TDVMCALL_REG(GPR_R9) | TDVMCALL_REG(GPR_RDX))

struct tdx_regs {
	u64 rax, rcx, rdx, r8, r9, r10, r11, r12, r13, r14, r15, rbx, rsi, rdi;
};

/*
 * Fill r for ReportFatalError (leaf, sub-function, mask, R12, message): pure, so the
 * host tests check the encoding QEMU expects. msg is cut at 64 bytes.
 */
void tdx_fatal_regs(struct tdx_regs *r, u32 reason, const char *msg);
/* The message as the VMM reads it from the exposed registers (QEMU's order); 65 bytes. */
void tdx_fatal_message(const struct tdx_regs *r, char out[TDX_FATAL_MSG_LEN + 1]);

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
	/* A monotonic clock and a pause between busy retries. */
	u64 (*now_ns)(void);
	void (*relax)(void);
};

struct tdx_accept_stats {
	u64 tdcalls;		/* TDG.MEM.PAGE.ACCEPT executions */
	u64 accepted[TDX_ACCEPT_MAX_LEVEL + 1];	/* successful accepts per level: 4K, 2M */
	u64 busy_retries;
	u64 size_mismatch;
	u64 already_accepted;	/* pages (4 KiB units) the host claimed were accepted */
};

/*
 * Accept [start, end) (4 KiB aligned) with 2 MiB pages where alignment and length allow,
 * 4 KiB elsewhere; on PAGE_SIZE_MISMATCH a 2 MiB piece is accepted as 512 4 KiB pages.
 */
void tdx_accept_range(u64 start, u64 end, const struct tdx_accept_ops *ops,
		      struct tdx_accept_stats *st);

/*
 * The unaccepted-memory probe (cc_platform.probe_unaccepted): accept the 2 MiB unit at
 * `unit` in 4 KiB pages, each page's answer counted in *pr (accept.c says how).
 */
void tdx_probe_unaccepted_unit(u64 unit, const struct tdx_accept_ops *ops,
			       struct tdx_accept_stats *st, struct unaccepted_probe *pr);

/* The platform, after boot/ found the TDX signature. */
const struct cc_platform *tdx_platform(void);
/* The #VE handler: registered before the kernel's IDT is loaded (platform_traps_init). */
void tdx_register_traps(void);
/* TD info (GPA width, attributes): SEPT_VE_DISABLE clear terminates a non-debug TD. */
void tdx_setup(void);
/* The reaction to the TD attributes: NULL if fine, else why the TD must not run. */
const char *tdx_attributes_problem(u64 attributes, bool *warn_only);
/* What to do about pending-page #VEs, from the attributes, CONFIG_FLAGS and TD_CTLS. */
enum tdx_ve_action {
	TDX_VE_OFF,		/* already off: go on */
	TDX_VE_TURN_OFF,	/* allowed to turn them off: TDG.VM.WR of TD_CTLS */
	TDX_VE_WARN,		/* on, in a debug TD: go on with a warning */
	TDX_VE_FATAL,		/* on, and the TD may not turn them off: terminate */
};
enum tdx_ve_action tdx_pending_ve_action(u64 attributes, u64 config_flags, u64 td_ctls);

#endif
