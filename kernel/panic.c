/* SPDX-License-Identifier: MIT */
/* memaccept: panic, fatal and the final exit. */
#include <stdarg.h>
#include "arch/x86/cpu.h"
#include "arch/x86/platform.h"
#include "arch/x86/smp.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "drivers/exit.h"
#include "include/panic.h"
#include "lib/format.h"

static bool exiting;
static char last_message[160];
/* 1 + the index of the CPU that stops the guest; 0 while none does. */
static u32 exit_owner;

/*
 * The first CPU to stop the guest reports and exits; another that fails meanwhile
 * must not print a second `exit` (or race the first to the host): false for it.
 */
static bool own_exit(void)
{
	u32 me = smp_cpu_index() + 1, none = 0;

	return __atomic_compare_exchange_n(&exit_owner, &none, me, false, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE) || none == me;
}

const char *kernel_exit_message(void)
{
	return last_message[0] ? last_message : "see the guest console";
}

__noreturn void kernel_exit_reason(int code, u32 condition)
{
	if (!own_exit())
		cpu_halt();	/* another CPU is stopping the guest */
	/* Whatever the boot held back comes out first, in order. */
	console_flush_held();
	/* A fault while reporting must not loop back here. */
	if (!exiting) {
		exiting = true;
		ev_begin("exit");
		ev_u64("code", (u64)code);
		if (condition)
			ev_str("condition", fatal_condition_name(condition));
		ev_end();
	}
	/* On TDX and SNP a failure is also reported to the host, which then stops the guest. */
	if (code != EXIT_OK && code != EXIT_TEST_FAILED && code != EXIT_OUT_OF_MEMORY)
		platform->terminate(FATAL_REASON(condition, code));
	machine_exit(code);
}

__noreturn void kernel_exit(int code)
{
	kernel_exit_reason(code, FC_NONE);
}

static __noreturn void die(int code, u32 condition, const char *event, const char *fmt, va_list ap)
{
	char msg[256];

	format_buf_v(msg, sizeof(msg), fmt, ap);
	if (!own_exit()) {
		/* Said, but not as an event: the verdict is the first CPU's. */
		kprintf("%s on CPU %u while CPU %u stops the guest: %s\n",
			code == EXIT_PANIC ? "PANIC" : "FATAL", smp_cpu_index(),
			__atomic_load_n(&exit_owner, __ATOMIC_ACQUIRE) - 1, msg);
		cpu_halt();
	}
	if (!last_message[0])
		format_buf(last_message, sizeof(last_message), "%s", msg);
	kprintf("%s: %s\n", code == EXIT_PANIC ? "PANIC" : "FATAL", msg);
	ev_begin(event);
	ev_str("msg", msg);
	ev_u64("code", (u64)code);
	if (condition)
		ev_str("condition", fatal_condition_name(condition));
	ev_end();
	kernel_exit_reason(code, condition);
}

__noreturn void panic(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	die(EXIT_PANIC, FC_NONE, "panic", fmt, ap);
}

__noreturn void fatal(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	die(code, FC_NONE, "fatal", fmt, ap);
}

__noreturn void fatal_reason(int code, u32 condition, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	die(code, condition, "fatal", fmt, ap);
}
