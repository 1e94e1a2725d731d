/* SPDX-License-Identifier: MIT */
/* memaccept: TDX test cases that need the emulator to stage a #VE (platform=tdx-emu). */
#include "arch/x86/emu/emu.h"
#include "arch/x86/tdx/tdx.h"
#include "drivers/exit.h"
#include "kernel/panic.h"
#include "kernel/testcase.h"
#include "mm/page_alloc.h"

/* Deliver vector 20 the way the CPU would (no error code), after staging its info. */
static void raise_ve(void)
{
	__asm__ volatile("int $20" : : : "memory");
}

TESTCASE(tdx_ve_unaccepted, "a #VE for an EPT violation on an unaccepted GPA is reported and terminates")
{
	u64 unit;

	CHECK(emu_mode() == EMU_TDX);
	CHECK(bitmap_next(palloc_bitmap(), 0, &unit));
	testcase_announce_stray(unit + 0x40);
	emu_stage_ve(EXIT_REASON_EPT_VIOLATION, 0x181, unit + 0x40, unit + 0x40, 0);
	raise_ve();
	return EXIT_TEST_FAILED;
}

TESTCASE(tdx_ve_unexpected, "a #VE the guest cannot handle (MSR read) is reported and terminates")
{
	CHECK(emu_mode() == EMU_TDX);
	emu_stage_ve(EXIT_REASON_MSR_READ, 0, 0, 0, 2);
	raise_ve();
	return EXIT_TEST_FAILED;
}

TESTCASE(tdx_ve_cpuid, "a #VE for CPUID is emulated through TDVMCALL<Instruction.CPUID>")
{
	u64 rax = 0x80000000, rbx = 0, rcx = 0, rdx = 0;

	CHECK(emu_mode() == EMU_TDX);
	/* Staged with length 0: the handler "skips" nothing and returns into this code. */
	emu_stage_ve(EXIT_REASON_CPUID, 0, 0, 0, 0);
	__asm__ volatile("int $20" : "+a"(rax), "+b"(rbx), "+c"(rcx), "+d"(rdx) : : "memory");
	/* The maximum extended leaf came back in EAX. */
	CHECK(rax >= 0x80000008 && rax < 0x80000100);
	return EXIT_OK;
}

TESTCASE(tdx_halt, "machine_halt() goes through TDVMCALL<Instruction.HLT>")
{
	CHECK(emu_mode() == EMU_TDX);
	machine_halt();	/* the model's VMM stops a TD halted with interrupts blocked */
}
