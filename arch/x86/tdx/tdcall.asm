; SPDX-License-Identifier: MIT
; memaccept: the TDCALL instruction with every register it may use (Intel TDX Module ABI).
bits 64
default rel
section .text

; struct tdx_regs { u64 rax, rcx, rdx, r8, r9, r10, r11, r12, r13, r14, r15; } (arch/x86/tdx/tdx.h)
%define R_RAX 0
%define R_RCX 8
%define R_RDX 16
%define R_R8 24
%define R_R9 32
%define R_R10 40
%define R_R11 48
%define R_R12 56
%define R_R13 64
%define R_R14 72
%define R_R15 80

; u64 tdx_tdcall(struct tdx_regs *r): load, TDCALL, store back; returns RAX (the status).
; R12-R15 and RBX/RBP are callee-saved in the SysV ABI and TDVMCALL may change them.
global tdx_tdcall
tdx_tdcall:
	push rbx
	push rbp
	push r12
	push r13
	push r14
	push r15
	push rdi
	mov rax, [rdi + R_RAX]
	mov rcx, [rdi + R_RCX]
	mov rdx, [rdi + R_RDX]
	mov r8, [rdi + R_R8]
	mov r9, [rdi + R_R9]
	mov r10, [rdi + R_R10]
	mov r11, [rdi + R_R11]
	mov r12, [rdi + R_R12]
	mov r13, [rdi + R_R13]
	mov r14, [rdi + R_R14]
	mov r15, [rdi + R_R15]
	db 0x66, 0x0f, 0x01, 0xcc	; TDCALL
	pop rdi
	mov [rdi + R_RAX], rax
	mov [rdi + R_RCX], rcx
	mov [rdi + R_RDX], rdx
	mov [rdi + R_R8], r8
	mov [rdi + R_R9], r9
	mov [rdi + R_R10], r10
	mov [rdi + R_R11], r11
	mov [rdi + R_R12], r12
	mov [rdi + R_R13], r13
	mov [rdi + R_R14], r14
	mov [rdi + R_R15], r15
	pop r15
	pop r14
	pop r13
	pop r12
	pop rbp
	pop rbx
	ret
