; SPDX-License-Identifier: MIT
; memaccept: where an application processor starts after INIT-SIPI-SIPI: real mode to long mode, then the kernel.
;
; The boot CPU copies [tramp_start, tramp_end) to a page below 1 MiB and fills the data
; block (struct tramp_data in arch/x86/smp.c: the offsets below must match it). A STARTUP
; IPI with vector VV starts the AP in real mode at CS = VV00h, IP = 0 (Intel SDM vol. 3A,
; "MP Initialization Protocol Algorithm"; "Typical AP Initialization Sequence").
; The code goes from real mode straight to long mode (CR0.PE and CR0.PG set together,
; with CR4.PAE and EFER.LME set before: SDM vol. 3A, "Initializing IA-32e Mode"), under
; temporary page tables that map the first 2 MiB, then switches to the kernel's own.
; Everything here is position independent: 16-bit code addresses the block relative to
; CS, 64-bit code RIP-relative.

%define D_GDTR 0		; u16 limit, u32 base of the GDT below (physical)
%define D_CR3_TEMP 8		; u32: temporary PML4, below 1 MiB
%define D_CR0 12		; u32: CR0 as the boot CPU has it (PE, PG, WP, NE ...)
%define D_EFER 16		; u32: EFER.LME (and NXE when the boot CPU uses it)
%define D_LJMP 20		; u32 offset, u16 selector: far pointer to long_mode
%define D_CR4 32		; u64: the boot CPU's CR4, loaded once in long mode
%define D_KERNEL_CR3 40		; u64: the kernel's page tables
%define D_ENTRY 48		; u64: ap_entry(struct ap_slot *)
%define D_NSLOTS 56		; u32: entries in D_SLOTS
%define D_GDT 64		; 3 descriptors: null, 64-bit code (0x08), data (0x10)
%define D_SLOTS 96		; {u32 apic_id, u32 state, u64 stack_top, u64 percpu} each
%define SLOT_SIZE 24

%define MSR_EFER 0xc0000080
%define CR4_PAE (1 << 5)
%define CODE64 0x08
%define DATA64 0x10

section .text
global tramp_start, tramp_end, tramp_data, tramp_long_mode

bits 16
tramp_start:
	cli
	cld
	mov ax, cs
	mov ds, ax
	; A 32-bit operand size loads all 32 bits of the GDT base (SDM: LGDT).
	o32 lgdt [tramp_data - tramp_start + D_GDTR]
	mov eax, CR4_PAE
	mov cr4, eax
	mov eax, [tramp_data - tramp_start + D_CR3_TEMP]
	mov cr3, eax
	mov ecx, MSR_EFER
	mov eax, [tramp_data - tramp_start + D_EFER]
	xor edx, edx
	wrmsr
	mov eax, [tramp_data - tramp_start + D_CR0]
	mov cr0, eax
	; The far jump loads the 64-bit code segment: from here on, 64-bit mode.
	o32 jmp far [tramp_data - tramp_start + D_LJMP]

bits 64
tramp_long_mode:
	mov ax, DATA64
	mov ds, ax
	mov es, ax
	mov ss, ax
	xor eax, eax
	mov fs, ax
	mov gs, ax
	mov rax, [rel tramp_data + D_CR4]
	mov cr4, rax
	; Which AP am I? CPUID.01H:EBX[31:24] is the initial APIC ID (SDM vol. 2A, CPUID).
	mov eax, 1
	xor ecx, ecx
	cpuid
	shr ebx, 24
	lea rsi, [rel tramp_data + D_SLOTS]
	mov ecx, [rel tramp_data + D_NSLOTS]
.find:
	test ecx, ecx
	jz .unknown
	cmp [rsi], ebx
	je .found
	add rsi, SLOT_SIZE
	dec ecx
	jmp .find
.unknown:
	; Not a CPU the kernel asked for: stay out of the way for good.
	cli
	hlt
	jmp .unknown
.found:
	mov rax, [rel tramp_data + D_KERNEL_CR3]
	mov cr3, rax
	mov rsp, [rsi + 8]
	mov rdi, rsi
	mov rax, [rel tramp_data + D_ENTRY]
	push qword 0			; no return address: RSP is 8 mod 16 at entry, as the ABI wants
	jmp rax

align 64
tramp_data:
	times 96 + 24 * 16 db 0		; filled in by smp.c (16 = MAX_CPUS, include/smp.h)
tramp_end:
