; SPDX-License-Identifier: MIT
; memaccept (test image): the emulated firmware switches the boot vCPU to five-level paging (emu_fault=la57).
;
; LA57 cannot change while IA-32e mode is active (Intel SDM vol. 3A, "Enabling and Changing
; Paging Modes" / MOV to CR4: #GP if it would change LA57 in IA-32e mode), so the switch
; leaves it for a moment: compatibility mode (a 32-bit code segment), paging off, which
; deactivates IA-32e mode, CR4.LA57 on, CR3 the new PML5, paging on again with EFER.LME
; still set, which makes IA-32e mode active with five levels, then back to 64-bit code.
; Everything used meanwhile is identity-mapped below 4 GiB: this code, the stack, the GDT
; and the PML5. The upper halves of the general-purpose registers are not defined after
; compatibility mode (SDM vol. 1, 3.4.1.1), so what is needed afterwards is on the stack.
bits 64
default rel
section .text

%define CR0_PG (1 << 31)
%define CR4_LA57 (1 << 12)
%define SEL_CODE64 0x08
%define SEL_CODE32 0x10
%define SEL_DATA 0x18

global emu_la57_switch

; void emu_la57_switch(u32 pml5): interrupts off; the firmware's GDT and selectors are
; back in place on return.
emu_la57_switch:
	push rbx
	push rbp
	push r12
	push r13
	push r14
	push r15
	sub rsp, 48
	sgdt [rsp]			; the firmware's GDTR (10 bytes)
	mov ax, cs
	mov [rsp + 16], ax
	mov ax, ss
	mov [rsp + 18], ax
	mov ax, ds
	mov [rsp + 20], ax
	mov word [rsp + 32], la57_gdt_end - la57_gdt - 1
	lea rax, [la57_gdt]
	mov [rsp + 34], rax
	lgdt [rsp + 32]
	lea esi, [.long64]		; where to come back, below 4 GiB
	lea rax, [.compat]
	push qword SEL_CODE32
	push rax
	o64 retf
bits 32
.compat:
	mov eax, SEL_DATA
	mov ds, eax
	mov es, eax
	mov ss, eax
	mov eax, cr0
	and eax, ~CR0_PG
	mov cr0, eax			; IA-32e mode off
	mov eax, cr4
	or eax, CR4_LA57
	mov cr4, eax
	mov cr3, edi
	mov eax, cr0
	or eax, CR0_PG
	mov cr0, eax			; IA-32e mode on, five levels
	push dword SEL_CODE64
	push esi
	retf
bits 64
.long64:
	mov esp, esp			; the stack is below 4 GiB
	lgdt [rsp]
	movzx eax, word [rsp + 16]
	lea rcx, [.firmware_cs]
	push rax
	push rcx
	o64 retf
.firmware_cs:
	mov ax, [rsp + 18]
	mov ss, ax
	mov ax, [rsp + 20]
	mov ds, ax
	mov es, ax
	add rsp, 48
	pop r15
	pop r14
	pop r13
	pop r12
	pop rbp
	pop rbx
	ret

section .rodata
align 16
la57_gdt:
	dq 0
	dq 0x00af9a000000ffff		; 64-bit code
	dq 0x00cf9a000000ffff		; 32-bit code
	dq 0x00cf92000000ffff		; data
la57_gdt_end:
