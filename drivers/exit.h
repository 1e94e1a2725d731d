/* SPDX-License-Identifier: MIT */
/* memaccept: leaving the guest: isa-debug-exit, then EFI ResetSystem, then halt. */
#ifndef DRIVERS_EXIT_H
#define DRIVERS_EXIT_H

#include "include/types.h"

/* QEMU's isa-debug-exit device: writing v makes QEMU exit with status (v << 1) | 1. */
#define DEBUG_EXIT_PORT 0xf4

/* Remember EFI runtime ResetSystem (an address, 0 if none) for machine_exit(). */
void exit_set_reset_system(u64 reset_system);

/* Write the code to the debug-exit port; if still running, power off; else halt. */
__noreturn void machine_exit(int code);
__noreturn void machine_halt(void);

#endif
