/* SPDX-License-Identifier: MIT */
/* memaccept: the few places where the test image's platform emulator can answer instead of the CPU. */
#ifndef ARCH_X86_EMU_HOOKS_H
#define ARCH_X86_EMU_HOOKS_H

#include "arch/x86/cpu.h"

/*
 * Under plain QEMU (TCG) CPUID, RDMSR, WRMSR and HLT simply run: QEMU answers them, where
 * a TD's module or an SNP guest's CPU would answer differently or raise #VE or #VC. So
 * the accessors (cpu_cpuid, cpu_halt in arch/x86/cpu.c, msr_read/msr_write in msr.c, the
 * plain port I/O in portio.c) let the test image's emulator play the instruction first:
 * it answers as the platform would, or delivers the #VE or #VC the platform would raise
 * to the kernel's own handler, or runs the instruction itself. true: played. Anything
 * that bypasses the accessors is caught by the instruction observer (tools/observer).
 * In the production image these hooks are constant false and the compiler drops the
 * calls: no emulator code is linked (checked by tools/check-image.sh). The sim platform
 * also tells the emulator what it accepted, so that the page model catches a double
 * accept (observe mode).
 */
#ifdef CONFIG_EMULATOR
bool emu_play_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r);
bool emu_play_rdmsr(u32 msr, u64 *val);
bool emu_play_wrmsr(u32 msr, u64 val);
bool emu_play_halt(void);
void emu_observe_accept(u64 start, u64 end);
/*
 * The kernel's page tables now map [start, end) as `how` (OBS_MAP_*, arch/x86/observer.h):
 * the page-state sanitizer checks each access's private/shared choice against the page.
 */
void emu_note_mapping(u64 start, u64 end, u32 how);
/* An AP the kernel started itself (INIT-SIPI on a normal VM) reached the kernel's code. */
void emu_note_ap_entry(void);
/*
 * An IN or OUT the guest executes: in an emulated TD (SNP guest) the real CPU raises #VE
 * (#VC) instead, so the emulator delivers that exception and returns true (*val holds
 * what an IN read); false: let the instruction run.
 */
bool emu_guest_port_io(u16 port, int size, bool in, u32 *val);
/* The guest sends an IPI (INIT or STARTUP: init_or_startup); in an emulated TD this ends the VM. */
void emu_guest_ipi(u32 dest, bool init_or_startup);
#else
static inline bool emu_play_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	(void)leaf, (void)subleaf, (void)r;
	return false;
}
static inline bool emu_play_rdmsr(u32 msr, u64 *val)
{
	(void)msr, (void)val;
	return false;
}
static inline bool emu_play_wrmsr(u32 msr, u64 val)
{
	(void)msr, (void)val;
	return false;
}
static inline bool emu_play_halt(void)
{
	return false;
}
static inline void emu_observe_accept(u64 start, u64 end)
{
	(void)start, (void)end;
}
static inline void emu_note_mapping(u64 start, u64 end, u32 how)
{
	(void)start, (void)end, (void)how;
}
static inline void emu_note_ap_entry(void)
{
}
static inline bool emu_guest_port_io(u16 port, int size, bool in, u32 *val)
{
	(void)port, (void)size, (void)in, (void)val;
	return false;
}
static inline void emu_guest_ipi(u32 dest, bool init_or_startup)
{
	(void)dest, (void)init_or_startup;
}
#endif

#endif
