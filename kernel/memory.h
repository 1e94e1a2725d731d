/* SPDX-License-Identifier: MIT */
/* memaccept: bringing up memory from the boot information: map, identity map, bitmap, allocator. */
#ifndef KERNEL_MEMORY_H
#define KERNEL_MEMORY_H

#include "include/boot_info.h"
#include "mm/memmap.h"

/* Validate and normalise the firmware's final map; stops the guest if it is unusable. */
void memory_parse_map(const struct boot_info *bi, bool can_accept);
/* Build and load the kernel's identity map: every range except unaccepted and suspect ones. */
void memory_build_page_tables(u64 private_bits);
/* The `firmware` event and, with verbose=1, one line per range. */
void memory_report_firmware(const struct boot_info *bi);

extern struct memmap kernel_memmap;

#endif
