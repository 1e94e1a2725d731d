/* SPDX-License-Identifier: MIT */
/* memaccept: x86-64 instructions as inline functions (CPUID, MSRs, TSC, control registers). */
#ifndef ARCH_X86_CPU_H
#define ARCH_X86_CPU_H

#include "include/types.h"

struct cpuid_regs {
	u32 eax, ebx, ecx, edx;
};

/*
 * The instructions a TD or SNP guest cannot always run plainly (CPUID, RDMSR, WRMSR, HLT,
 * IN, OUT) have one accessor each, which picks native execution or the platform's own
 * path: cpu_cpuid() and cpu_halt() here, msr_read() and msr_write() in arch/x86/msr.h,
 * the port I/O of struct cc_platform. The raw_* forms below are the instructions
 * themselves, for those accessors, the AP start-up code and the test image's emulator
 * only (tools/check-image.sh checks where they appear).
 */
void cpu_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r);
/* Stop this CPU for good (interrupts off): TDVMCALL<Instruction.HLT> in a TD. */
__noreturn void cpu_halt(void);

static inline void raw_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	__asm__ volatile("cpuid"
			 : "=a"(r->eax), "=b"(r->ebx), "=c"(r->ecx), "=d"(r->edx)
			 : "a"(leaf), "c"(subleaf));
}

static inline u64 raw_rdmsr(u32 msr)
{
	u32 lo, hi;

	__asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((u64)hi << 32) | lo;
}

static inline void raw_wrmsr(u32 msr, u64 val)
{
	__asm__ volatile("wrmsr" : : "c"(msr), "a"((u32)val), "d"((u32)(val >> 32)) : "memory");
}

static inline void raw_halt(void)
{
	__asm__ volatile("cli; hlt" : : : "memory");
}

/* lfence keeps earlier instructions from moving across the timestamp read. */
static inline u64 rdtsc_ordered(void)
{
	u32 lo, hi;

	__asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((u64)hi << 32) | lo;
}

#define DEFINE_READ_CR(n)                                              \
	static inline u64 read_cr##n(void)                             \
	{                                                              \
		u64 v;                                                 \
		__asm__ volatile("mov %%cr" #n ", %0" : "=r"(v));      \
		return v;                                              \
	}
DEFINE_READ_CR(0)
DEFINE_READ_CR(2)
#ifdef HOSTED
/* Host unit tests run in user mode: tests/unit/unit.c keeps CR3 and CR4 in memory. */
u64 read_cr3(void);
u64 read_cr4(void);
void write_cr3(u64 v);
#else
DEFINE_READ_CR(3)
DEFINE_READ_CR(4)

static inline void write_cr3(u64 v)
{
	__asm__ volatile("mov %0, %%cr3" : : "r"(v) : "memory");
}
#endif

static inline void write_cr4(u64 v)
{
	__asm__ volatile("mov %0, %%cr4" : : "r"(v) : "memory");
}

static inline void invlpg(u64 addr)
{
	__asm__ volatile("invlpg (%0)" : : "r"(addr) : "memory");
}

static inline void cpu_relax(void)
{
	__asm__ volatile("pause");
}

static inline void irq_disable(void)
{
	__asm__ volatile("cli" : : : "memory");
}

static inline u64 read_rflags(void)
{
	u64 f;

	__asm__ volatile("pushfq; popq %0" : "=r"(f));
	return f;
}

/* Raw port I/O: only the platform code and early boot use these (see platform.h). */
static inline void outb(u16 port, u8 v)
{
	__asm__ volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}
static inline void outw(u16 port, u16 v)
{
	__asm__ volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}
static inline void outl(u16 port, u32 v)
{
	__asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}
static inline u8 inb(u16 port)
{
	u8 v;

	__asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}
static inline u16 inw(u16 port)
{
	u16 v;

	__asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}
static inline u32 inl(u16 port)
{
	u32 v;

	__asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

/* CPUID facts the kernel checks (Intel SDM vol. 2A, CPUID; AMD APM vol. 3, appendix E). */
#define CPUID_80000001_EDX_PDPE1GB (1u << 26)
#define CPUID_80000001_EDX_NX (1u << 20)
#define CPUID_1_ECX_HYPERVISOR (1u << 31)


/* Physical address width (CPUID 0x80000008 EAX[7:0]); 36 when the leaf is missing. */
unsigned cpu_phys_bits(void);
bool cpu_has_1g_pages(void);

#endif
