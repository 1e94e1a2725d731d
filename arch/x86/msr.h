/* SPDX-License-Identifier: MIT */
/* memaccept: RDMSR and WRMSR, natively where the platform lets them through, else through the platform (TDVMCALL, GHCB). */
#ifndef ARCH_X86_MSR_H
#define ARCH_X86_MSR_H

#include "include/types.h"

/* MSR numbers (Intel SDM vol. 4, "Model-Specific Registers"; AMD APM vol. 2, appendix A). */
#define MSR_TSC 0x10
#define MSR_APIC_BASE 0x1b
#define MSR_PAT 0x277
#define MSR_X2APIC_ID 0x802
#define MSR_X2APIC_ICR 0x830
#define MSR_EFER 0xc0000080
#define MSR_FS_BASE 0xc0000100
#define MSR_GS_BASE 0xc0000101

#define EFER_LME (1ULL << 8)
#define EFER_NXE (1ULL << 11)

/*
 * In a TD most MSRs raise #VE (the TDX module lets a short list through); in an SNP guest
 * KVM intercepts all but a short list, which raises #VC. Every MSR access in memaccept
 * comes here: the platform's msr_native() picks the instruction for the MSRs it lets
 * through and its own path for the others (struct cc_platform). The #VE and #VC handlers
 * still serve an access that traps, as on real hardware.
 *
 * msr_read/msr_write: a platform that refuses the access (KVM answers a TDVMCALL with
 * INVALID_OPERAND, or asks for a #GP through the GHCB) ends the guest, naming the MSR.
 */
u64 msr_read(u32 msr);
void msr_write(u32 msr, u64 val);
/* The same, returning false where the platform refuses. */
bool msr_read_safe(u32 msr, u64 *val);
bool msr_write_safe(u32 msr, u64 val);

#endif
