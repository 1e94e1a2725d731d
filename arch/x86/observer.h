/* SPDX-License-Identifier: MIT */
/* memaccept: markers for the instruction observer (tools/observer): NOPs that tell it who runs and what a native instruction touches. */
#ifndef ARCH_X86_OBSERVER_H
#define ARCH_X86_OBSERVER_H

/*
 * The test image boots under QEMU's TCG with a plugin (tools/observer/observer.c) that
 * sees every instruction executed. It cannot read registers (QEMU 7.2's plugin API has
 * no such call), so the guest tells it what it needs with marker instructions: the
 * 8-byte NOP 0F 1F 84 <kind> <imm32>, "NOP r/m32" with a SIB byte and a 32-bit
 * displacement (Intel SDM vol. 2B, NOP; AMD APM vol. 3, NOP). The CPU does nothing with
 * it; the observer reads <kind> (the SIB byte) and <imm32> (the displacement).
 * Compilers pad with the same opcode but a SIB byte of 0, never one of these kinds.
 *
 * Plain constants: included by C, by the plugin (host code) and mirrored in
 * arch/x86/trampoline.asm.
 */
#define OBS_MARK_LEN 8

/*
 * The emulated platform is in place (after ExitBootServices): check from here. imm =
 * mode in 7:0; for SNP, bits 15:8 name the SEV features that take an intercept away
 * (KVM drops the GUEST_TSC_FREQ read intercept under Secure TSC, the DR7 intercepts
 * under DebugSwap: sev.c sev_es_recalc_msr_intercepts, sev_es_init_vmcb).
 */
#define OBS_KIND_ARM 0xa1
#define OBS_ARM_TDX 1
#define OBS_ARM_SNP 2
#define OBS_ARM_MODE_MASK 0xff
#define OBS_ARM_SNP_SECURE_TSC (1 << 8)
#define OBS_ARM_SNP_DEBUG_SWAP (1 << 9)
/*
 * SNP: the guest's CPUID lacks RDTSCP / INVPCID, so KVM intercepts the instruction
 * (svm.c svm_recalc_instruction_intercepts) and an SEV-ES guest takes #VC.
 */
#define OBS_ARM_SNP_NO_RDTSCP (1 << 10)
#define OBS_ARM_SNP_NO_INVPCID (1 << 11)
/* A normal VM with software-accepted memory (platform sim, fake_unaccepted_start): memory is checked, instructions are not. */
#define OBS_ARM_SIM 3
/* This vCPU enters / leaves the emulated host (emulator code, playing firmware, KVM, CPU). */
#define OBS_KIND_HOST_ENTER 0xa2
#define OBS_KIND_HOST_LEAVE 0xa3
/*
 * The emulated host is about to (re)start the vCPU whose QEMU index is imm (INIT-SIPI):
 * that vCPU runs host code until it leaves with OBS_KIND_HOST_LEAVE.
 */
#define OBS_KIND_HOST_ADOPT 0xa4
/*
 * The next instruction is RDMSR / WRMSR of MSR imm, run natively on purpose: the
 * observer checks that the platform really lets it through. A native MSR access
 * without this declaration cannot be judged and stops an emulated boot.
 */
#define OBS_KIND_DECL_RDMSR 0xa5
#define OBS_KIND_DECL_WRMSR 0xa6

/*
 * The page-state sanitizer's channel. A marker's immediate is fixed when the image is
 * built, so a run-time value (an address, a length) travels as eight OBS_KIND_ARG
 * markers, most significant byte first, each with one byte as its immediate: the
 * emulator jumps into a table with one marker per byte value (emu/observer.asm). The
 * observer collects up to OBS_MAX_ARGS values per vCPU; the next command takes them.
 */
#define OBS_KIND_ARG 0xa7
#define OBS_MAX_ARGS 3
/*
 * args (start, end, state): the platform (the emulated host) set every 4 KiB page in
 * [start, end) to state (OBS_PS_*). Only the emulated host may send it.
 */
#define OBS_KIND_PAGES 0xa8
/*
 * args (start, end, shared): the kernel's own page tables map [start, end) (identity)
 * shared (1: without the C-bit) or private (0), or no longer map it (2).
 */
#define OBS_KIND_MAPPED 0xa9
/*
 * The emulated host has sent the state it started the guest's kernel with: the
 * accesses made since the arm, held until now, are judged.
 */
#define OBS_KIND_SHADOW_READY 0xaa
/*
 * A boot phase ends here (imm = OBS_PHASE_*): the observer counts the instructions each
 * vCPU runs and cuts the boot CPU's count at these markers. Both images carry them (an
 * 8-byte NOP each, eight per boot), so `make bench` counts the production image too.
 */
#define OBS_KIND_PHASE 0xab
/*
 * The kernel's accept path for one range, imm = OBS_ACCEPT_*: BEGIN and END in
 * mm/accept.c around the claim, the accept and the memory's way to the free lists;
 * PLATFORM and PLATFORM_DONE in kernel/memory.c accept_backend around the platform's call
 * (mapping the range comes before it). The observer counts the instructions outside and
 * inside the platform's call, per vCPU.
 */
#define OBS_KIND_ACCEPT 0xac
#define OBS_KIND_LAST OBS_KIND_ACCEPT

#define OBS_ACCEPT_BEGIN 0
#define OBS_ACCEPT_PLATFORM 1
#define OBS_ACCEPT_PLATFORM_DONE 2
#define OBS_ACCEPT_END 3

/* The phases of kernel/main.c's `boot_phases` event, in order; ENTRY is efi_main's start. */
#define OBS_PHASE_ENTRY 0
#define OBS_PHASE_EBS 1
#define OBS_PHASE_DESC 2
#define OBS_PHASE_MAP 3
#define OBS_PHASE_PT 4
#define OBS_PHASE_SMP 5
#define OBS_PHASE_BITMAP 6
#define OBS_PHASE_ALLOC 7
#define OBS_PHASE_COUNT 8

#define OBS_MAP_PRIVATE 0
#define OBS_MAP_SHARED 1
#define OBS_MAP_NONE 2

/*
 * A 4 KiB page's state as the platform holds it (the sanitizer's shadow). UNTRACKED is
 * memory the platform does not manage as guest RAM (MMIO, holes, reserved ranges).
 */
#define OBS_PS_UNTRACKED 0
#define OBS_PS_OK 1		/* TDX accepted, SNP private and validated, sim accepted */
#define OBS_PS_PENDING 2	/* TDX: private, not yet accepted (TDX module: PENDING) */
#define OBS_PS_UNACCEPTED 3	/* sim: unaccepted (fake_unaccepted_start) */
#define OBS_PS_NOT_VALIDATED 4	/* SNP: assigned to the guest in the RMP, not validated */
#define OBS_PS_SHARED 5		/* SNP: owned by the hypervisor (shared) */
#define OBS_PS_VMPL_DENIED 6	/* SNP under an SVSM: private, validated, no permission for the guest's VMPL */
#define OBS_PS_COUNT 7

#define OBS_MAGIC 0x4d410000	/* imm of the markers without an argument: "MA" */

#define OBS_STR_(x) #x
#define OBS_STR(x) OBS_STR_(x)
/* The marker as assembler text, for inline asm: kind and imm must be constants. */
#define OBS_MARK_ASM(kind, imm) ".byte 0x0f, 0x1f, 0x84, " OBS_STR(kind) "\n\t.long " OBS_STR(imm) "\n\t"

/* Mark a place for the observer, from C: kind and imm must be literal constants. */
#define OBS_MARK(kind, imm) __asm__ volatile(OBS_MARK_ASM(kind, imm) : : : "memory")

/*
 * What the guest's exit status means when the observer stopped the VM (QEMU exits with
 * (code << 1) | 1, as for isa-debug-exit; include/exit_codes.h has the guest's codes).
 */
#define OBS_EXIT_STOPPED 101

#endif
