/* SPDX-License-Identifier: MIT */
/* memaccept: the fatal exception report: readable lines, one JSON event, then exit. */
#include "arch/x86/cpu.h"
#include "arch/x86/desc.h"
#include "arch/x86/hooks.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "drivers/exit.h"
#include "include/panic.h"

static const char *const names[NUM_EXCEPTIONS] = {
	"#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow",
	"#BR bound range", "#UD invalid opcode", "#NM device not available",
	"#DF double fault", "coprocessor segment overrun", "#TS invalid TSS",
	"#NP segment not present", "#SS stack fault", "#GP general protection",
	"#PF page fault", "reserved 15", "#MF x87 error", "#AC alignment check",
	"#MC machine check", "#XM SIMD error", "#VE virtualization exception",
	"#CP control protection", "reserved 22", "reserved 23", "reserved 24",
	"reserved 25", "reserved 26", "reserved 27", "#HV hypervisor injection",
	"#VC VMM communication", "#SX security exception", "reserved 31",
};

struct arch_hooks arch_hooks;

const char *exception_name(unsigned vector)
{
	return vector < NUM_EXCEPTIONS ? names[vector] : "external interrupt";
}

unsigned backtrace(u64 rbp, u64 *out, unsigned max)
{
	unsigned n = 0;

	/* Follow saved frame pointers only while they stay inside the kernel stack. */
	while (n < max && arch_stack_contains(rbp, 16) && IS_ALIGNED(rbp, 8)) {
		const u64 *fp = (const u64 *)(uintptr_t)rbp;

		if (!fp[1])
			break;
		out[n++] = fp[1];
		if (fp[0] <= rbp)
			break;	/* frames must move up the stack */
		rbp = fp[0];
	}
	return n;
}

void trap_dump(const struct trap_frame *f)
{
	kprintf("  RIP %016llx  CS %04llx  RFLAGS %016llx\n", (unsigned long long)f->rip,
		(unsigned long long)f->cs, (unsigned long long)f->rflags);
	kprintf("  RSP %016llx  SS %04llx  CR2 %016llx  CR3 %016llx\n",
		(unsigned long long)f->rsp, (unsigned long long)f->ss,
		(unsigned long long)read_cr2(), (unsigned long long)read_cr3());
	kprintf("  RAX %016llx  RBX %016llx  RCX %016llx  RDX %016llx\n",
		(unsigned long long)f->rax, (unsigned long long)f->rbx, (unsigned long long)f->rcx,
		(unsigned long long)f->rdx);
	kprintf("  RSI %016llx  RDI %016llx  RBP %016llx  R8  %016llx\n",
		(unsigned long long)f->rsi, (unsigned long long)f->rdi, (unsigned long long)f->rbp,
		(unsigned long long)f->r8);
	kprintf("  R9  %016llx  R10 %016llx  R11 %016llx  R12 %016llx\n",
		(unsigned long long)f->r9, (unsigned long long)f->r10, (unsigned long long)f->r11,
		(unsigned long long)f->r12);
	kprintf("  R13 %016llx  R14 %016llx  R15 %016llx\n", (unsigned long long)f->r13,
		(unsigned long long)f->r14, (unsigned long long)f->r15);
}

__noreturn void trap_report_fatal(const struct trap_frame *f, const char *why, int code)
{
	static int depth;
	u64 cr2 = read_cr2();
	u64 bt[8];
	unsigned nbt;

	if (depth++) {
		/* Faulted while reporting a fault: say the least possible and leave. */
		console_flush_held();
		kprintf("nested exception %llu at RIP %llx while reporting; giving up\n",
			(unsigned long long)f->vector, (unsigned long long)f->rip);
		machine_exit(code);
	}
	kprintf("\n*** %s: vector %llu (%s), error code %#llx\n", why,
		(unsigned long long)f->vector, exception_name((unsigned)f->vector),
		(unsigned long long)f->error_code);
	if (f->vector == VEC_PF)
		kprintf("  page fault at address %016llx (%s, %s%s)\n", (unsigned long long)cr2,
			f->error_code & 1 ? "protection violation" : "page not present",
			f->error_code & 2 ? "write" : "read",
			f->error_code & 16 ? ", instruction fetch" : "");
	trap_dump(f);
	nbt = backtrace(f->rbp, bt, ARRAY_SIZE(bt));
	kprintf("  backtrace: %016llx", (unsigned long long)f->rip);
	for (unsigned i = 0; i < nbt; i++)
		kprintf(" %016llx", (unsigned long long)bt[i]);
	kprintf("\n  (image base %016llx: subtract it for addresses in build/*.elf)\n",
		(unsigned long long)arch_image_base());

	ev_begin("exception");
	ev_str("why", why);
	ev_u64("vector", f->vector);
	ev_str("name", exception_name((unsigned)f->vector));
	ev_u64("error_code", f->error_code);
	ev_u64("rip", f->rip);
	ev_u64("cr2", cr2);
	ev_u64("rsp", f->rsp);
	ev_u64("image_base", arch_image_base());
	ev_u64_array("backtrace", bt, nbt);
	ev_end();
	kernel_exit(code);
}
