/* SPDX-License-Identifier: MIT */
/* memaccept: plain port I/O and the default platform used until one is selected. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/platform.h"
#include "drivers/exit.h"

__noinline void raw_io_out(u16 port, u32 val, int size)
{
	if (size == 1)
		outb(port, (u8)val);
	else if (size == 2)
		outw(port, (u16)val);
	else
		outl(port, val);
}

__noinline u32 raw_io_in(u16 port, int size)
{
	if (size == 1)
		return inb(port);
	if (size == 2)
		return inw(port);
	return inl(port);
}

void plain_io_out(u16 port, u32 val, int size)
{
	if (!emu_guest_port_io(port, size, false, &val))
		raw_io_out(port, val, size);
}

u32 plain_io_in(u16 port, int size)
{
	u32 val = 0;

	if (emu_guest_port_io(port, size, true, &val))
		return val;
	return raw_io_in(port, size);
}

static int early_accept(u64 start, u64 end)
{
	(void)start, (void)end;
	return -1; /* nothing can be accepted before a platform is chosen */
}

__noreturn void plain_terminate(u32 reason)
{
	machine_exit(FATAL_REASON_CODE(reason));
}

/* Until platform_set(): plain port I/O, nothing to accept. */
static const struct cc_platform early_platform = {
	.name = "early",
	.accept = early_accept,
	.io_out = plain_io_out,
	.io_in = plain_io_in,
	.terminate = plain_terminate,
};

const struct cc_platform *platform = &early_platform;

#ifdef CONFIG_EMULATOR
/*
 * Test image: when the emulated host stops the guest, what it prints must reach the
 * console whatever state the guest's platform was in (an SNP guest without a GHCB
 * cannot do port I/O at all), so the emulator switches back to plain port I/O.
 */
void platform_use_plain_io(void)
{
	platform = &early_platform;
}
#endif
