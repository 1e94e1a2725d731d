/* SPDX-License-Identifier: MIT */
/* memaccept: boot/ internals (EFI-aware code only). */
#ifndef BOOT_BOOT_H
#define BOOT_BOOT_H

#include <efi.h>
#include "include/boot_info.h"

/* Read the command line into buf; returns enum cmdline_source. */
u32 boot_read_cmdline(EFI_SYSTEM_TABLE *st, EFI_LOADED_IMAGE *li, char *buf, size_t size);
/* OVMF SEV memory acceptance protocol; returns enum snp_protocol_status. */
u32 boot_snp_opt_in(EFI_SYSTEM_TABLE *st);
/* Test image: switch the platform emulator on for platform=tdx-emu/snp-emu. */
#ifdef CONFIG_EMULATOR
void boot_emulator_select(struct boot_info *bi);
#else
static inline void boot_emulator_select(struct boot_info *bi)
{
	(void)bi;
}
#endif

void boot_enter_kernel(struct boot_info *bi, void *stack_top, void (*fn)(struct boot_info *));

#endif
