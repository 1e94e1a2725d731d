/* SPDX-License-Identifier: MIT */
/* memaccept: test cases that fault on purpose, to check the exception report. */
#include "arch/x86/cpu.h"
#include "include/panic.h"
#include "kernel/smp.h"
#include "kernel/testcase.h"

/* Each case must not return: the exception handler reports and exits with EXIT_EXCEPTION. */

TESTCASE(ud, "ud2 raises #UD (vector 6) and is reported with its RIP")
{
	__asm__ volatile("ud2");
	return EXIT_TEST_FAILED;
}

TESTCASE(pf, "a read near NULL (page 0 is unmapped) raises #PF with CR2 = 0x18")
{
	u64 v;

	/* Page 0 is left unmapped by memory_build_page_tables(). */
	__asm__ volatile("mov (%1), %0" : "=r"(v) : "r"(0x18ULL) : "memory");
	return v ? EXIT_TEST_FAILED : EXIT_TEST_FAILED;
}

TESTCASE(gp, "a non-canonical address raises #GP (vector 13)")
{
	u64 v;

	__asm__ volatile("mov (%1), %0" : "=r"(v) : "r"(0x8000000000000000ULL) : "memory");
	return v ? EXIT_TEST_FAILED : EXIT_TEST_FAILED;
}

TESTCASE(panic, "panic() reports the message and exits with EXIT_PANIC")
{
	panic("testcase_panic: deliberate panic, value %d", 42);
}

TESTCASE(pass, "does nothing and passes (checks the runner's success path)")
{
	return EXIT_OK;
}

/* Both CPUs leave the barrier together and panic: one verdict, one `exit` event. */
static u32 at_barrier;

static void panic_together(unsigned cpu, void *arg)
{
	(void)arg;
	__atomic_add_fetch(&at_barrier, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&at_barrier, __ATOMIC_ACQUIRE) < 2)
		cpu_relax();
	panic("testcase_panic_two_cpus: CPU %u panics on purpose", cpu);
}

TESTCASE(panic_two_cpus, "two CPUs that panic at the same moment give one exit event")
{
	CHECK(smp_cpus_started() >= 2);
	smp_run(panic_together, NULL);
	return EXIT_TEST_FAILED;	/* not reached */
}
