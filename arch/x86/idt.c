/* SPDX-License-Identifier: MIT */
/* memaccept: the IDT: every vector goes to a stub in isr.asm and then to trap_dispatch(). */
#include "arch/x86/desc.h"
#include "include/panic.h"

struct idt_gate {
	u16 offset0;
	u16 selector;
	u8 ist;
	u8 type_attr;
	u16 offset1;
	u32 offset2;
	u32 reserved;
} __packed;

struct idtr {
	u16 limit;
	u64 base;
} __packed;

#define GATE_INTERRUPT 0x8e	/* present, DPL 0, 64-bit interrupt gate: IF cleared on entry */
#define MAX_HANDLERS 4

static struct idt_gate idt[256];
static trap_handler_fn handlers[NUM_EXCEPTIONS][MAX_HANDLERS];

static void set_gate(unsigned vec, u64 addr, u8 ist)
{
	idt[vec] = (struct idt_gate){
		.offset0 = (u16)addr,
		.selector = KERNEL_CS,
		.ist = ist,
		.type_attr = GATE_INTERRUPT,
		.offset1 = (u16)(addr >> 16),
		.offset2 = (u32)(addr >> 32),
	};
}

void idt_init(void)
{
	u64 stubs = (u64)(uintptr_t)isr_stubs;

	for (unsigned v = 0; v < 256; v++) {
		u8 ist = v == VEC_DF ? IST_DF : v == VEC_NMI ? IST_NMI : v == VEC_MC ? IST_MC : 0;

		set_gate(v, stubs + v * ISR_STUB_SIZE, ist);
	}
	idt_load();
}

void idt_load(void)
{
	struct idtr idtr = { sizeof(idt) - 1, (u64)(uintptr_t)idt };

	__asm__ volatile("lidt %0" : : "m"(idtr));
}

bool idt_loaded(void)
{
	struct idtr cur;

	__asm__ volatile("sidt %0" : "=m"(cur));
	return cur.base == (u64)(uintptr_t)idt;
}

bool trap_has_handler(unsigned vector)
{
	return vector < NUM_EXCEPTIONS && handlers[vector][0];
}

void trap_register(unsigned vector, trap_handler_fn fn)
{
	if (vector >= NUM_EXCEPTIONS)
		panic("trap_register: vector %u is not an exception", vector);
	for (unsigned i = 0; i < MAX_HANDLERS; i++) {
		if (!handlers[vector][i]) {
			handlers[vector][i] = fn;
			return;
		}
	}
	panic("trap_register: more than %d handlers for vector %u", MAX_HANDLERS, vector);
}

/* Called from isr_common with the frame on the interrupted stack (or an IST stack). */
void trap_dispatch(struct trap_frame *f)
{
	if (f->vector < NUM_EXCEPTIONS)
		for (unsigned i = 0; i < MAX_HANDLERS && handlers[f->vector][i]; i++)
			if (handlers[f->vector][i](f))
				return;
	/*
	 * Interrupts stay disabled in memaccept, so an external vector here means the
	 * firmware left something armed, or the host injected it.
	 */
	trap_report_fatal(f, f->vector < NUM_EXCEPTIONS ? "unhandled exception"
							: "unexpected interrupt", EXIT_EXCEPTION);
}
