/* SPDX-License-Identifier: MIT */
/* memaccept: test cases that run a CPU off the bottom of its stack, to check the guard page and its report. */
#include "include/exit_codes.h"
#include "kernel/smp.h"
#include "kernel/testcase.h"

/*
 * Push until the stack ends: the push into the guard page is a #PF whose frame the CPU
 * cannot push either, hence a #DF on its own IST stack, reported as a stack overflow.
 */
static __noreturn void run_off_the_stack(void)
{
	__asm__ volatile("1: pushq $0\n\t"
			 "jmp 1b" ::: "memory");
	__builtin_unreachable();
}

static void overflow_on_cpu1(unsigned cpu, void *arg)
{
	(void)arg;
	if (cpu == 1)
		run_off_the_stack();
}

TESTCASE(stack_overflow_ap, "an AP that runs off its kernel stack hits the guard page: a reported stack overflow")
{
	CHECK(smp_cpu_online(1));
	smp_start_work(overflow_on_cpu1, NULL);
	smp_wait();
	return EXIT_TEST_FAILED;	/* the AP came back: no guard page stopped it */
}

TESTCASE(stack_overflow_boot, "the boot CPU runs off its stack and hits the guard page: a reported stack overflow")
{
	run_off_the_stack();
}
