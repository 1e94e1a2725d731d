; SPDX-License-Identifier: MIT
; memaccept: the SEV-SNP instructions PVALIDATE and VMGEXIT (AMD APM vol. 3).
bits 64
default rel
section .text

; u32 snp_pvalidate(u64 va, u32 size, u32 validate, bool *no_update)
; PVALIDATE takes RAX = virtual address, ECX = page size (0 4K, 1 2M), EDX = 1 validate /
; 0 rescind; returns the result in EAX and sets CF when the RMP entry was not changed.
global snp_pvalidate
snp_pvalidate:
	mov r8, rcx			; no_update
	mov rax, rdi
	mov ecx, esi
	; EDX already holds `validate` (third argument)
	db 0xf2, 0x0f, 0x01, 0xff	; PVALIDATE
	setc byte [r8]
	ret

; void snp_vmgexit(void): hand control to the hypervisor through the GHCB (or the GHCB
; MSR protocol value). "rep vmmcall" is VMGEXIT inside an SEV-ES/SNP guest.
global snp_vmgexit
snp_vmgexit:
	db 0xf3, 0x0f, 0x01, 0xd9	; VMGEXIT
	ret

; u32 snp_rmpadjust(u64 va, u32 size, u64 attrs): RAX = VA, RCX = page size, RDX =
; attributes; the result comes back in EAX (AMD APM vol. 3, RMPADJUST).
global snp_rmpadjust
snp_rmpadjust:
	mov rax, rdi
	mov ecx, esi
	; RDX already holds attrs (third argument)
	db 0xf3, 0x0f, 0x01, 0xfe	; RMPADJUST
	ret

; u64 snp_svsm_vmgexit(u64 rax, u64 rcx, u64 rdx, u64 r8): an SVSM call (SVSM spec,
; AMD pub. 58019, "Calling Convention"): RAX = protocol << 32 | call, arguments in RCX,
; RDX, R8; the SVSM's result comes back in RAX. The caller sets the GHCB MSR and the
; calling area's call_pending byte around it. The VMGEXIT itself is snp_vmgexit's, which
; leaves every register as it is: the image keeps a single VMGEXIT.
global snp_svsm_vmgexit
snp_svsm_vmgexit:
	mov rax, rdi
	mov r8, rcx
	mov rcx, rsi
	; RDX already holds the third argument
	call snp_vmgexit
	ret
