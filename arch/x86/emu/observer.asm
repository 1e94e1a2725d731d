; SPDX-License-Identifier: MIT
; memaccept (test image): the instruction observer's markers that need a fixed address or a run-time argument (arch/x86/observer.h).
;
; A marker is the 8-byte NOP 0F 1F 84 <kind> <imm32>; the constants mirror
; arch/x86/observer.h. The observer (tools/observer) reports where the arm marker ran,
; which with this file's symbols gives the image's load address (tools/runqemu.py).
bits 64
default rel
section .text

%define OBS_KIND_ARM 0xa1
%define OBS_KIND_HOST_LEAVE 0xa3
%define OBS_KIND_HOST_ADOPT 0xa4
%define OBS_ARM_TDX 1
%define OBS_ARM_SNP 2
%define OBS_ARM_SIM 3
%define OBS_ARM_SNP_SECURE_TSC 0x100
%define OBS_ARM_SNP_DEBUG_SWAP 0x200
%define ARM_SNP_ENTRY 9			; marker and RET
%define OBS_KIND_ARG 0xa7
%define OBS_MAGIC 0x4d410000
%define ADOPT_ENTRY 9			; marker and RET
%define ADOPT_ENTRIES 256		; EMU_MAX_VCPUS

%macro MARK 2
	db 0x0f, 0x1f, 0x84, %1
	dd %2
%endmacro

global emu_obs_arm_tdx, emu_obs_arm_snp, emu_obs_arm_sim, emu_obs_adopt, emu_obs_hand_over
global emu_obs_arg

; void emu_obs_arm_tdx(void): check from here, as a TD.
emu_obs_arm_tdx:
	MARK OBS_KIND_ARM, OBS_ARM_TDX
	ret

; void emu_obs_arm_snp(u32 features): check from here, as an SNP guest with these of
; OBS_ARM_SNP_SECURE_TSC, OBS_ARM_SNP_DEBUG_SWAP, OBS_ARM_SNP_NO_RDTSCP and
; OBS_ARM_SNP_NO_INVPCID (bits 11:8): the entry of a table with one marker per
; combination.
emu_obs_arm_snp:
	mov eax, edi
	shr eax, 8
	and eax, 15
	imul eax, eax, ARM_SNP_ENTRY
	lea rcx, [arm_snp_table]
	add rax, rcx
	jmp rax

; Each entry is labelled emu_obs_arm_snp_<features >> 8>: tools/runqemu.py finds the
; image's load address from the one that ran.
arm_snp_table:
%assign i 0
%rep 16
emu_obs_arm_snp_ %+ i:
	MARK OBS_KIND_ARM, OBS_ARM_SNP | (i << 8)
	ret
%assign i i + 1
%endrep

emu_obs_arm_sim:
	MARK OBS_KIND_ARM, OBS_ARM_SIM
	ret

; void emu_obs_hand_over(void): this vCPU leaves the emulated host for the guest's code.
emu_obs_hand_over:
	MARK OBS_KIND_HOST_LEAVE, OBS_MAGIC
	ret

; void emu_obs_adopt(u32 vcpu): the vCPU with this QEMU index is about to be restarted by
; the emulated host. The index is a marker's immediate, so it is the entry of a table
; with one marker per index.
emu_obs_adopt:
	cmp edi, ADOPT_ENTRIES
	jae .out
	imul eax, edi, ADOPT_ENTRY
	lea rcx, [adopt_table]
	add rax, rcx
	jmp rax
.out:
	ret

adopt_table:
%assign i 0
%rep ADOPT_ENTRIES
	MARK OBS_KIND_HOST_ADOPT, i
	ret
%assign i i + 1
%endrep

; void emu_obs_arg(u64 value): one value for the page-state sanitizer's next command, as
; eight markers, most significant byte first, each the entry of a table with one marker
; per byte value. Uses only RAX, RCX, RDX and RDI (the entries touch nothing).
%define ARG_ENTRY 9			; marker and RET
emu_obs_arg:
	mov ecx, 8
	lea rdx, [arg_table]
.byte:
	rol rdi, 8
	movzx eax, dil
	imul eax, eax, ARG_ENTRY
	add rax, rdx
	call rax
	dec ecx
	jnz .byte
	ret

arg_table:
%assign i 0
%rep 256
	MARK OBS_KIND_ARG, i
	ret
%assign i i + 1
%endrep
