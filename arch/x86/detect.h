/* SPDX-License-Identifier: MIT */
/* memaccept: is this a TDX or SEV-SNP guest? Asked in efi_main, while CPUID is still safe. */
#ifndef ARCH_X86_DETECT_H
#define ARCH_X86_DETECT_H

#include "include/boot_info.h"

/* Fills bi->detected, phys_bits and has_1g_pages, and for SNP sev_status and snp_cpuid_ebx. */
void detect_platform(struct boot_info *bi);

#endif
