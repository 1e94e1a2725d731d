/* SPDX-License-Identifier: MIT */
/* memaccept: kernel entry and the facts about the running kernel other layers ask for. */
#ifndef KERNEL_MAIN_H
#define KERNEL_MAIN_H

#include "include/boot_info.h"

#define KERNEL_STACK_SIZE (64 * KiB)

/*
 * The boot CPU's stack, with the page below it, which becomes an unmapped guard once the
 * kernel's page tables exist (smp_init): running off its bottom is a fault, reported.
 */
struct kernel_stack_area {
	u8 guard[PAGE_SIZE];
	u8 stack[KERNEL_STACK_SIZE];
};
extern struct kernel_stack_area kernel_stack_area;
#define kernel_stack (kernel_stack_area.stack)

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
