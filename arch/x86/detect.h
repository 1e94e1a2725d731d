/* SPDX-License-Identifier: MIT */
/* memaccept: is this a TDX or SEV-SNP guest? Asked in efi_main, while CPUID is still safe. */
#ifndef ARCH_X86_DETECT_H
#define ARCH_X86_DETECT_H

#include "include/boot_info.h"

/* Fills bi->detected, phys_bits and has_1g_pages, and for SNP sev_status and snp_cpuid_ebx. */
void detect_platform(struct boot_info *bi);

/*
 * SEV or SEV-ES without SNP (SEV_STATUS bit 0, without bit 2): memaccept has no backend
 * for them and must not run as a plain VM there (its page tables would lack the C-bit,
 * and on SEV-ES it has no #VC handler after ExitBootServices: a triple fault with the
 * console still held). NULL if not; else what the guest is, for the refusal message.
 */
const char *detect_sev_without_snp(const struct boot_info *bi);

#endif
