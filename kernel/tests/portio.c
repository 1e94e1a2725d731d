/* SPDX-License-Identifier: MIT */
/* memaccept: raw IN/OUT on an emulated TD or SNP guest raise #VE or #VC, and the handlers finish them. */
#include "arch/x86/emu/emu.h"
#include "arch/x86/platform.h"
#include "include/panic.h"
#include "kernel/testcase.h"

/* The 16550's scratch register (COM1 + 7): a port that reads back what was written. */
#define COM1_SCRATCH 0x3ff

static int scratch_round_trip(void)
{
	plain_io_out(COM1_SCRATCH, 0xa5, 1);
	CHECK(plain_io_in(COM1_SCRATCH, 1) == 0xa5);
	plain_io_out(COM1_SCRATCH, 0x5a, 1);
	CHECK(plain_io_in(COM1_SCRATCH, 1) == 0x5a);
	return EXIT_OK;
}

TESTCASE(tdx_ve_port_io, "a raw OUT and IN in the TD raise #VE and are done through TDVMCALL<Instruction.IO>")
{
	CHECK(emu_mode() == EMU_TDX);
	return scratch_round_trip();
}

TESTCASE(snp_vc_port_io, "a raw OUT and IN in the SNP guest raise #VC and are done through the GHCB")
{
	CHECK(emu_mode() == EMU_SNP);
	return scratch_round_trip();
}

/*
 * emu_fault=io_garbage: the host sets every bit above the operand size of each port read
 * (TDVMCALL R11, GHCB RAX). The platform's io_in gives only the operand's bytes.
 */
TESTCASE(io_in_garbage_dropped, "bits a hostile host sets above a port read's operand size are dropped")
{
	CHECK(emu_mode() == EMU_TDX || emu_mode() == EMU_SNP);
	platform->io_out(COM1_SCRATCH, 0xa5, 1);
	CHECK(platform->io_in(COM1_SCRATCH, 1) == 0xa5);
	platform->io_out(COM1_SCRATCH, 0x5a, 1);
	CHECK(platform->io_in(COM1_SCRATCH, 1) == 0x5a);
	return scratch_round_trip();
}
