; SPDX-License-Identifier: MIT
; memaccept: leave the firmware's stack for the kernel's own and never come back.
bits 64
default rel
section .text

; void boot_enter_kernel(struct boot_info *bi, void *stack_top, void (*kernel_main)(struct boot_info *))
; The firmware's stack is boot-services memory, which the kernel reclaims. RBP = 0 ends
; every backtrace here.
global boot_enter_kernel
boot_enter_kernel:
	mov rsp, rsi
	xor ebp, ebp
	call rdx
.hang:
	; Not reached: kernel_main never returns. No HLT here, which a TD would trap.
	pause
	jmp .hang
