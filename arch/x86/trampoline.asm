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
; Which slot (stack, per-CPU data) is mine? After INIT-SIPI the AP looks its APIC ID up
; among the slots: the 32-bit x2APIC ID of CPUID leaf 0xB, EDX, where that leaf exists,
; else the 8-bit initial APIC ID of leaf 1, EBX[31:24], which is the x2APIC ID's low byte
; (Intel SDM vol. 2A, CPUID, leaf 0BH and leaf 01H; vol. 3A, "x2APIC ID"). The slots
; lie outside this page (D_SLOTS, any number of them), read under the kernel's tables.
;
; In a TD there is no INIT-SIPI: the firmware's AP loop jumps to the wakeup vector the
; boot CPU posted with the AP's APIC ID in the ACPI multiprocessor wakeup mailbox (ACPI
; 6.5 section 5.2.12.19). The AP then is in 64-bit mode on the firmware's identity-mapped
; page tables and GDT (edk2 OvmfPkg/TdxDxe/X64/ApRunLoop.nasm, MailBoxWakeUp: a plain
; `jmp rax`), interrupts off, with no IDT and no stack of its own: its RSP is the
; firmware's, the same on every AP (so tramp_wakeup64 never uses it). In a TD reading
; its own APIC ID (CPUID, the x2APIC ID MSR) may be a #VE, which nothing could handle yet.
; So each slot has its own wakeup vector (tramp_wake_stubs: slot i's sets ESI = i): the
; AP knows its slot from where it was sent, and the boot CPU can post the next wakeup
; as soon as the firmware took the last, without waiting for that AP to arrive. In a
; TD, HLT, port I/O and most MSRs raise #VE, so the AP loads the kernel's IDT (whose #VE
; handler serves them) as soon as it runs on the kernel's page tables and its own stack,
; and nothing before that can trap: LGDT, segment loads and CR reads do not. An AP with
; no slot to take halts through TDVMCALL<Instruction.HLT> (a raw HLT would be a #VE with
; no handler: #DF, then a triple fault, which KVM turns into the shutdown of the whole
; TD). A slot is taken once (SLOT_TAKEN): two CPUs never share a stack.
;
; The one native MSR access here, EFER, is declared to the test image's instruction
; observer with a marker (arch/x86/observer.h): a TD reads EFER without a trap (the
; TDX module lets it through), and writes it only when a bit the kernel needs is
; missing, which in a TD is a #VE the kernel's handler takes (and the host refuses).

%define D_GDTR 0		; u16 limit, u32 base of the GDT below (physical)
%define D_CR3_TEMP 8		; u32: temporary PML4, below 1 MiB
%define D_CR0 12		; u32: CR0 as the boot CPU has it (PE, PG, WP, NE ...)
%define D_EFER 16		; u32: EFER.LME (and NXE when the boot CPU uses it)
%define D_LJMP 20		; u32 offset, u16 selector: far pointer to long_mode
%define D_CR4 32		; u64: the boot CPU's CR4, loaded once in long mode
%define D_KERNEL_CR3 40		; u64: the kernel's page tables
%define D_ENTRY 48		; u64: ap_entry(struct ap_slot *)
%define D_NSLOTS 56		; u32: entries in the slots
%define D_GDT 64		; 3 descriptors: null, 64-bit code (0x08), data (0x10)
%define D_WAKE_LJMP 88		; u32 offset, u16 selector: far pointer to tramp_wakeup64_cs
%define D_SLOTS 96		; u64: the slots, mapped by D_KERNEL_CR3
%define SLOT_SIZE 32		; {u32 apic_id, u32, u64 stack_top, u64 percpu, u32 taken, u32}
%define SLOT_STACK 8
%define SLOT_TAKEN 24
%define D_GDTR64 112		; u16 limit, u64 base: LGDT's operand in 64-bit mode
%define D_IDTR0 128		; u16 limit 0, u64 base 0: the empty IDT
%define D_IDTR_KERNEL 144	; u16 limit, u64 base: the kernel's IDT
%define D_PARK_LOCK 160		; u32: bit 0 = the park stack is taken
%define D_SIZE 168
%define PARK_STACK_TOP (6 * 4096)	; the end of the trampoline's page 5 (TRAMPOLINE_PAGES)
; Wakeup vectors: one per slot, MAX_CPUS of them (include/smp.h; smp.c checks the size).
%define WAKE_SLOTS 256
%define WAKE_STUB_SIZE 10

%define MSR_EFER 0xc0000080
%define CR4_PAE (1 << 5)
%define CR4_LA57 (1 << 12)
%define CODE64 0x08
%define DATA64 0x10
%define CR4_MCE (1 << 6)

; Observer markers (arch/x86/observer.h): the next instruction reads / writes this MSR.
%define OBS_KIND_DECL_RDMSR 0xa5
%define OBS_KIND_DECL_WRMSR 0xa6
%macro OBS_DECLARE 2
	db 0x0f, 0x1f, 0x84, %1
	dd %2
%endmacro

; TDG.VP.VMCALL<Instruction.HLT> (GHCI; Intel TDX Module ABI: TDCALL leaf 0 in RAX, RCX
; the registers exposed to the VMM (R10, R11, R12), R10 = 0 standard, R11 = 12, R12 = 1
; "interrupts blocked": KVM never resumes the vCPU).
%define TDVMCALL_EXPOSE_R10_R12 0x1c00
%define TDVMCALL_HLT 12

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
global tramp_start, tramp_end, tramp_data, tramp_long_mode, tramp_wake_stubs, tramp_wake_stubs_end
global tramp_wakeup64_cs

bits 16
tramp_start:
	cli
	cld
	mov ax, cs
	mov ds, ax
	; A 32-bit operand size loads all 32 bits of the GDT base (SDM: LGDT).
	o32 lgdt [tramp_data - tramp_start + D_GDTR]
	; PAE, and LA57 if the boot CPU runs five-level paging: LA57 can only be set before
	; IA-32e mode is active (SDM vol. 3A, "Enabling and Changing Paging Modes"), and
	; then the temporary tables start with a PML5.
	mov eax, [tramp_data - tramp_start + D_CR4]
	and eax, CR4_LA57
	or eax, CR4_PAE
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
	; Which AP am I? The x2APIC ID where CPUID leaf 0xB exists: the highest basic leaf
	; is at least 0xB and the leaf's EBX[15:0] is not 0 (SDM vol. 2A, CPUID, leaf 0BH).
	; Raw CPUID is safe here only because INIT-SIPI starts APs on a normal VM alone: a TD's
	; APs enter through tramp_wake_stubs (their slot known without CPUID) and an SNP
	; guest's through snp_ap_entry (arch/x86/sev/snp_ap.c), where CPUID would trap; the
	; observer checks both in every emulated SMP boot.
	xor eax, eax
	xor ecx, ecx
	cpuid
	cmp eax, 0xb
	jb .initial_id
	mov eax, 0xb
	xor ecx, ecx
	cpuid
	test bx, bx
	jz .initial_id
	mov r8d, edx
	jmp .have_id
.initial_id:
	mov eax, 1
	xor ecx, ecx
	cpuid
	shr ebx, 24
	mov r8d, ebx
.have_id:
	; The kernel's page tables: they map this page, the slots, the stacks and the kernel.
	mov rax, [rel tramp_data + D_KERNEL_CR3]
	mov cr3, rax
	mov rsi, [rel tramp_data + D_SLOTS]
	mov ecx, [rel tramp_data + D_NSLOTS]
.find:
	test ecx, ecx
	jz .unknown
	cmp [rsi], r8d
	je .found
	add rsi, SLOT_SIZE
	dec ecx
	jmp .find
.unknown:
	; Not a CPU the kernel asked for (or its slot is taken): stay out of the way for good.
	cli
	hlt
	jmp .unknown
.found:
	mov eax, 1
	xchg eax, [rsi + SLOT_TAKEN]
	test eax, eax
	jnz .unknown
	mov rsp, [rsi + SLOT_STACK]
	mov rdi, rsi
	mov rax, [rel tramp_data + D_ENTRY]
	push qword 0			; no return address: RSP is 8 mod 16 at entry, as the ABI wants
	jmp rax

; The mailbox's wakeup vectors: slot i's is tramp_wake_stubs + i * WAKE_STUB_SIZE.
tramp_wake_stubs:
%assign slot 0
%rep WAKE_SLOTS
	mov esi, slot
	jmp strict near tramp_wakeup64
%assign slot slot + 1
%endrep
tramp_wake_stubs_end:

tramp_wakeup64:			; ESI = the slot
	cli
	cld
	; Nothing here touches the stack until the AP has its slot's. RSP is the firmware's,
	; and TDVF gives every AP the same one: 0x80C000, its SEC mailbox
	; (PcdOvmfSecGhcbBackupBase, edk2 OvmfPkg/IntelTdx/IntelTdxX64.fdf), whose address
	; its SEC loop keeps in RSP (OvmfPkg/IntelTdx/Sec/X64/SecEntry.nasm, ParkAp) and
	; which the relocated loop (OvmfPkg/TdxDxe/X64/ApRunLoop.nasm) leaves as it is. Two
	; APs woken back to back would write the same bytes. LGDT, segment loads, CR
	; accesses and XCHG need no stack.
	;
	; Our GDT and our code segment first (the firmware's selectors may differ: TDVF's
	; mailbox GDT has its 64-bit code at 0x10, and an AP woken from its loop may still run
	; on its SEC-phase selectors), then our data segments. The far jump takes its target
	; from the data block (a far return would need the stack). Its operand is m16:32 (FF /5
	; without REX.W; NASM needs the `dword`, or it emits REX.W): the offset is zero-extended
	; and this page is below 1 MiB. The m16:64 form is Intel's only (SDM vol. 2A, JMP; the
	; AMD APM vol. 3, JMP (Far), takes a 16- or 32-bit offset).
	lgdt [rel tramp_data + D_GDTR64]
	jmp dword far [rel tramp_data + D_WAKE_LJMP]
tramp_wakeup64_cs:
	LOAD_DATA_SEGMENTS
	; Four- and five-level paging cannot be switched in long mode: the kernel's tables
	; must match what the firmware runs.
	mov rax, cr4
	xor rax, [rel tramp_data + D_CR4]
	test eax, CR4_LA57
	jnz .park
	; ESI = my slot (from my wakeup vector); one the boot CPU did not publish: park.
	cmp esi, [rel tramp_data + D_NSLOTS]
	jae .park
	; The kernel's page tables (they map this page, the slots, the stacks and the
	; kernel), my slot if nobody took it, my own stack, then the kernel's IDT: from
	; here a #VE has its handler.
	mov rax, [rel tramp_data + D_KERNEL_CR3]
	mov cr3, rax
	imul esi, esi, SLOT_SIZE
	add rsi, [rel tramp_data + D_SLOTS]
	mov eax, 1
	xchg eax, [rsi + SLOT_TAKEN]
	test eax, eax
	jnz .park
	mov rsp, [rsi + SLOT_STACK]
	lidt [rel tramp_data + D_IDTR_KERNEL]
	; EFER as the kernel needs it (NXE for its page tables). Written only if a bit is
	; missing, as Linux does for TDX guests (arch/x86/kernel/head_64.S, "Avoid writing
	; EFER if no change was made (for TDX guest)"): a TD may not change EFER freely.
	mov ecx, MSR_EFER
	OBS_DECLARE OBS_KIND_DECL_RDMSR, MSR_EFER
	rdmsr
	mov ebx, [rel tramp_data + D_EFER]
	mov edi, eax
	or edi, ebx
	cmp edi, eax
	je .efer_ok
	mov eax, edi
	OBS_DECLARE OBS_KIND_DECL_WRMSR, MSR_EFER
	wrmsr
.efer_ok:
	; CR4 as the boot CPU has it; in a TD MCE stays set (clearing it is a #VE: the TDX
	; module owns the bit, td_vmcs_init.c; Linux keeps it for the same reason).
	mov rax, [rel tramp_data + D_CR4]
	mov rbx, cr4
	and ebx, CR4_MCE
	or rax, rbx
	mov rbx, cr4
	cmp rax, rbx
	je .cr4_ok
	mov cr4, rax
.cr4_ok:
	mov rdi, rsi
	mov rax, [rel tramp_data + D_ENTRY]
	push qword 0
	jmp rax
.park:
	; Not woken for a slot (or a paging mode we cannot run): stay out of the way for
	; good. The park stack is used only by an exception (in the test image, the #UD by
	; which the emulator sees TDCALL), one parked AP at a time.
	lock bts dword [rel tramp_data + D_PARK_LOCK], 0
	jnc .park_locked
	pause
	jmp .park
.park_locked:
	lea rsp, [rel tramp_start + PARK_STACK_TOP]
	lidt [rel tramp_data + D_IDTR_KERNEL]
.park_halt:
	xor eax, eax
	mov ecx, TDVMCALL_EXPOSE_R10_R12
	xor r10d, r10d
	mov r11d, TDVMCALL_HLT
	mov r12d, 1
	db 0x66, 0x0f, 0x01, 0xcc	; TDCALL
	jmp .park_halt

align 64
tramp_data:
	times D_SIZE db 0		; filled in by smp.c
tramp_end:
