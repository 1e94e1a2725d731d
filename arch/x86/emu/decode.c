/* SPDX-License-Identifier: MIT */
/* memaccept (test image): instruction decoder for the emulator (pure logic, host-tested). */
#include "arch/x86/emu/decode.h"
#include "lib/string.h"

static const struct {
	u8 bytes[4];
	u32 len;
	u32 insn;
} table[] = {
	{ { 0x66, 0x0f, 0x01, 0xcc }, 4, INSN_TDCALL },
	{ { 0xf2, 0x0f, 0x01, 0xff }, 4, INSN_PVALIDATE },
	{ { 0xf3, 0x0f, 0x01, 0xd9 }, 4, INSN_VMGEXIT },
	{ { 0xf3, 0x0f, 0x01, 0xfe }, 4, INSN_RMPADJUST },
	{ { 0x0f, 0x32 }, 2, INSN_RDMSR },
	{ { 0x0f, 0x30 }, 2, INSN_WRMSR },
};

struct emu_decoded emu_decode(const u8 *bytes, size_t avail)
{
	for (size_t i = 0; i < ARRAY_SIZE(table); i++)
		if (avail >= table[i].len && memcmp(bytes, table[i].bytes, table[i].len) == 0)
			return (struct emu_decoded){ table[i].insn, table[i].len };
	return (struct emu_decoded){ INSN_UNKNOWN, 0 };
}

