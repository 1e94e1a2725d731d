/* SPDX-License-Identifier: MIT */
/* memaccept: the kernel's own GDT, TSS and IDT, and the trap frame the stubs build. */
#ifndef ARCH_X86_DESC_H
#define ARCH_X86_DESC_H

#include "include/types.h"

#define KERNEL_CS 0x08
#define KERNEL_DS 0x10
#define KERNEL_TSS 0x18

/* Interrupt stack table slots (1-based, as in the IDT gate's IST field). */
#define IST_DF 1
#define IST_NMI 2
#define IST_MC 3

/* Exception vectors (Intel SDM vol. 3A, table 6-1; AMD APM vol. 2, table 8-1). */
#define VEC_DE 0
#define VEC_DB 1
#define VEC_NMI 2
#define VEC_BP 3
#define VEC_UD 6
#define VEC_DF 8
#define VEC_GP 13
#define VEC_PF 14
#define VEC_MC 18
#define VEC_VE 20	/* TDX virtualization exception */
#define VEC_VC 29	/* SEV-ES/SNP VMM communication exception */
#define NUM_EXCEPTIONS 32

/* Saved by arch/x86/isr.asm, in this order from the lowest address. */
struct trap_frame {
	u64 r15, r14, r13, r12, r11, r10, r9, r8;
	u64 rbp, rdi, rsi, rdx, rcx, rbx, rax;
	u64 vector, error_code;
	u64 rip, cs, rflags, rsp, ss;	/* pushed by the CPU */
};

/*
 * A handler returns true when it dealt with the trap; the stub then resumes at
 * frame->rip with the (possibly modified) registers. false: the next handler, and
 * finally the fatal exception report.
 */
typedef bool (*trap_handler_fn)(struct trap_frame *f);

/* The boot CPU's GDT and TSS. */
void gdt_init(void);
/* CPU `cpu`'s own GDT and TSS (IST stacks at ist_top: #DF, NMI, #MC). */
void gdt_init_cpu(unsigned cpu, const u64 ist_top[3]);
/* The page right below the boot CPU's IST stack k (0 #DF, 1 NMI, 2 #MC): its guard. */
u64 gdt_boot_ist_guard(unsigned k);
void idt_init(void);
/* Load the IDT idt_init() built, on another CPU. */
void idt_load(void);
/* Is the kernel's IDT the one the CPU uses (not the firmware's)? */
bool idt_loaded(void);
/* Registering is allowed before idt_init(): handlers are in place the moment it loads. */
void trap_register(unsigned vector, trap_handler_fn fn);
bool trap_has_handler(unsigned vector);
/* Run the handlers for a frame, as the entry stub does (test cases use it for #VC). */
void trap_dispatch(struct trap_frame *f);
__noreturn void trap_report_fatal(const struct trap_frame *f, const char *why, int code);
void trap_dump(const struct trap_frame *f);
/* Return addresses of the frame chain starting at rbp (needs -fno-omit-frame-pointer). */
unsigned backtrace(u64 rbp, u64 *out, unsigned max);

const char *exception_name(unsigned vector);

/* From isr.asm. */
void gdt_load(const void *gdtr, u16 cs, u16 ds);
extern const u8 isr_stubs[];
#define ISR_STUB_SIZE 16

#endif
