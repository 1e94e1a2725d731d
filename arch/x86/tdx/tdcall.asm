; SPDX-License-Identifier: MIT
; memaccept: the TDCALL instruction with every register it may use (Intel TDX Module ABI).
bits 64
default rel
section .text

; struct tdx_regs { u64 rax, rcx, rdx, r8, r9, r10, r11, r12, r13, r14, r15, rbx, rsi, rdi; }
; (arch/x86/tdx/tdx.h)
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
%define R_RBX 88
%define R_RSI 96
%define R_RDI 104

; u64 tdx_tdcall(struct tdx_regs *r): load, TDCALL, store back; returns RAX (the status).
; RBX, RBP and R12-R15 are callee-saved in the SysV ABI and TDVMCALL may change them;
; RBX, RSI and RDI carry part of the ReportFatalError message (GHCI).
global tdx_tdcall
tdx_tdcall:
	push rbx
	push rbp
	push r12
	push r13
	push r14
	push r15
	push rdi			; the struct pointer, found again after TDCALL
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
	mov rbx, [rdi + R_RBX]
	mov rsi, [rdi + R_RSI]
	mov rdi, [rdi + R_RDI]		; last: the address is read before RDI is replaced
	db 0x66, 0x0f, 0x01, 0xcc	; TDCALL
	xchg rdi, [rsp]			; RDI = the struct again; the output RDI waits on the stack
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
	mov [rdi + R_RBX], rbx
	mov [rdi + R_RSI], rsi
	pop rcx				; the output RDI
	mov [rdi + R_RDI], rcx
	pop r15
	pop r14
	pop r13
	pop r12
	pop rbp
	pop rbx
	ret
