; SPDX-License-Identifier: MIT
; memaccept: exception entry stubs and GDT reload (the parts C cannot express).
bits 64
default rel
section .text

extern trap_dispatch

; Vectors whose exceptions push an error code (Intel SDM vol. 3A, table 6-1; #VC too).
%define HAS_ERR(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || (v) == 21 || (v) == 29 || (v) == 30)

; One 16-byte stub per vector 0..255, so the IDT needs no table of addresses (and the
; image no relocations for it): stub address = isr_stubs + vector * 16.
global isr_stubs
align 16
isr_stubs:
%assign v 0
%rep 256
	%if HAS_ERR(v) == 0
	push qword 0			; uniform frame: a dummy error code
	%endif
	push qword v
	jmp isr_common
	align 16
%assign v v + 1
%endrep

; The CPU aligned RSP to 16 before pushing SS..RIP (64-bit mode); with the error code, the
; vector and 15 registers the frame is 176 bytes, so RSP stays 16-aligned for the call.
isr_common:
	push rax
	push rbx
	push rcx
	push rdx
	push rsi
	push rdi
	push rbp
	push r8
	push r9
	push r10
	push r11
	push r12
	push r13
	push r14
	push r15
	cld
	mov rdi, rsp
	call trap_dispatch
	pop r15
	pop r14
	pop r13
	pop r12
	pop r11
	pop r10
	pop r9
	pop r8
	pop rbp
	pop rdi
	pop rsi
	pop rdx
	pop rcx
	pop rbx
	pop rax
	add rsp, 16			; vector and error code
	iretq

; void gdt_load(const void *gdtr, u16 cs, u16 ds): CS can only change by a far transfer.
global gdt_load
gdt_load:
	lgdt [rdi]
	mov ds, dx
	mov es, dx
	mov ss, dx
	xor eax, eax
	mov fs, ax
	mov gs, ax
	pop rax				; our return address
	push rsi
	push rax
	o64 retf
