; SPDX-License-Identifier: MIT
; memaccept: where an application processor starts: after INIT-SIPI-SIPI (real mode), or from the firmware's MADT wakeup mailbox (long mode).
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
;
; In a TD there is no INIT-SIPI: the firmware's AP loop jumps to tramp_wakeup64 when the
; boot CPU posts a wakeup command in the ACPI multiprocessor wakeup mailbox (ACPI 6.4
; section 5.2.12.19). The AP then is in 64-bit mode on the firmware's identity-mapped
; page tables and GDT (edk2 OvmfPkg/TdxDxe/X64/ApRunLoop.nasm, MailBoxWakeUp: a plain
; `jmp rax`), with no stack of its own. It finds its slot through D_WAKE_SLOT, which the
; boot CPU sets before each command because it wakes one AP at a time: CPUID leaf 1 is
; not needed. Like Linux's trampoline_start64 (arch/x86/realmode/rm/trampoline_64.S) it
; first loads an empty IDT, so that a fault before the kernel's IDT shuts the CPU down
; instead of entering firmware code, and its own GDT.

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
%define D_GDTR64 480		; u16 limit, u64 base: LGDT's operand in 64-bit mode
%define D_IDTR0 496		; u16 limit 0, u64 base 0: the empty IDT
%define D_WAKE_SLOT 512		; u32: 1 + the slot the next woken AP takes; 0 = none
%define D_SIZE 520

%define MSR_EFER 0xc0000080
%define CR4_PAE (1 << 5)
%define CR4_LA57 (1 << 12)
%define CODE64 0x08
%define DATA64 0x10

; Our data segments (DS, ES, SS from our GDT; FS and GS null: GS base is set in C).
%macro LOAD_DATA_SEGMENTS 0
	mov ax, DATA64
	mov ds, ax
	mov es, ax
	mov ss, ax
	xor eax, eax
	mov fs, ax
	mov gs, ax
%endmacro

section .text
global tramp_start, tramp_end, tramp_data, tramp_long_mode, tramp_wakeup64

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
	LOAD_DATA_SEGMENTS
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

tramp_wakeup64:
	cli
	cld
	lidt [rel tramp_data + D_IDTR0]
	lgdt [rel tramp_data + D_GDTR64]
	; Four- and five-level paging cannot be switched in long mode: the kernel's tables
	; must match what the firmware runs.
	mov rax, cr4
	xor rax, [rel tramp_data + D_CR4]
	test eax, CR4_LA57
	jnz .park
	; Take the slot the boot CPU published; nobody else can take it after us.
	xor eax, eax
	xchg eax, [rel tramp_data + D_WAKE_SLOT]
	test eax, eax
	jz .park
	dec eax
	imul eax, eax, SLOT_SIZE
	lea rsi, [rel tramp_data + D_SLOTS]
	add rsi, rax
	; EFER as the kernel needs it (NXE for its page tables). Written only if a bit is
	; missing, as Linux does for TDX guests (arch/x86/kernel/head_64.S, "Avoid writing
	; EFER if no change was made (for TDX guest)"): a TD may not change EFER freely.
	mov ecx, MSR_EFER
	rdmsr
	mov ebx, [rel tramp_data + D_EFER]
	mov edi, eax
	or edi, ebx
	cmp edi, eax
	je .efer_ok
	mov eax, edi
	wrmsr
.efer_ok:
	mov rax, [rel tramp_data + D_CR4]
	mov rbx, cr4
	cmp rax, rbx
	je .cr4_ok
	mov cr4, rax
.cr4_ok:
	mov rax, [rel tramp_data + D_KERNEL_CR3]
	mov cr3, rax
	mov rsp, [rsi + 8]
	; Our code segment from our GDT (the firmware's selectors may differ: TDVF's mailbox
	; GDT has its 64-bit code at 0x10, and an AP woken from its loop may still run on
	; its SEC-phase selectors), then our data segments.
	push qword CODE64
	lea rax, [rel .cs_loaded]
	push rax
	o64 retf
.cs_loaded:
	LOAD_DATA_SEGMENTS
	mov rdi, rsi
	mov rax, [rel tramp_data + D_ENTRY]
	push qword 0
	jmp rax
.park:
	; Not woken for a slot (or a paging mode we cannot run): stay out of the way.
	cli
	hlt
	jmp .park

align 64
tramp_data:
	times D_SIZE db 0		; filled in by smp.c (16 slots = MAX_CPUS, include/smp.h)
tramp_end:
