/* SPDX-License-Identifier: MIT */
/* memaccept: panic, fatal and the final exit. */
#include <stdarg.h>
#include "arch/x86/platform.h"
#include "drivers/console.h"
#include "drivers/exit.h"
#include "kernel/panic.h"
#include "kernel/report.h"
#include "lib/format.h"

static bool exiting;

__noreturn void kernel_exit(int code)
{
	/* A fault while reporting must not loop back here. */
	if (!exiting) {
		exiting = true;
		ev_begin("exit");
		ev_u64("code", (u64)code);
		ev_end();
	}
	/* On TDX and SNP a failure is also reported to the host, which then stops the guest. */
	if (code != EXIT_OK && code != EXIT_TEST_FAILED && code != EXIT_OUT_OF_MEMORY)
		platform->terminate((u32)code);
	machine_exit(code);
}

static __noreturn void die(int code, const char *event, const char *fmt, va_list ap)
{
	char msg[256];

	format_buf_v(msg, sizeof(msg), fmt, ap);
	kprintf("%s: %s\n", code == EXIT_PANIC ? "PANIC" : "FATAL", msg);
	ev_begin(event);
	ev_str("msg", msg);
	ev_u64("code", (u64)code);
	ev_end();
	kernel_exit(code);
}

__noreturn void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	die(EXIT_PANIC, "panic", fmt, ap);
}

__noreturn void fatal(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	die(code, "fatal", fmt, ap);
}
