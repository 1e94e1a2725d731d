/* SPDX-License-Identifier: MIT */
/* memaccept: kernel entry and the facts about the running kernel other layers ask for. */
#ifndef KERNEL_MAIN_H
#define KERNEL_MAIN_H

#include "include/boot_info.h"

#define KERNEL_STACK_SIZE (64 * KiB)

extern u8 kernel_stack[KERNEL_STACK_SIZE];

__noreturn void kernel_main(struct boot_info *bi);
bool kernel_stack_contains(u64 addr, u64 len);
/* efi_main's lines (banner, image, command line), from what boot/ recorded in bi. */
void kernel_report_boot(const struct boot_info *bi);
u64 kernel_image_base(void);
/* What boot/ handed over (for workload=conformance). */
const struct boot_info *kernel_boot_info(void);
/* True in memaccept-test.efi. */
extern const bool kernel_is_test_image;

#endif
