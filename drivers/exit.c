/* SPDX-License-Identifier: MIT */
/* memaccept: power-off paths, tried in order until one takes effect. */
#include "arch/x86/cpu.h"
#include "arch/x86/platform.h"
#include "drivers/exit.h"

/* UEFI 2.9 section 8.5.1: ResetSystem(ResetType, ResetStatus, DataSize, ResetData). */
#define EFI_RESET_SHUTDOWN 2
typedef void (__attribute__((ms_abi)) *efi_reset_system_fn)(u32 type, u64 status, u64 size,
							      void *data);

static u64 reset_system;

void exit_set_reset_system(u64 fn)
{
	reset_system = fn;
}

__noreturn void machine_halt(void)
{
	cpu_halt();
}

__noreturn void machine_exit(int code)
{
	/*
	 * Absent device: the write goes nowhere and we fall through. Present: QEMU exits
	 * here. The value is 8 bits wide; memaccept's codes are all below 128.
	 */
	platform->io_out(DEBUG_EXIT_PORT, (u32)code & 0xff, 1);

	/*
	 * Runtime services remain callable after ExitBootServices at their physical
	 * addresses, because the kernel's page tables identity-map them and we never call
	 * SetVirtualAddressMap().
	 */
	if (reset_system)
		((efi_reset_system_fn)reset_system)(EFI_RESET_SHUTDOWN, (u64)code, 0, NULL);
	machine_halt();
}
