/* SPDX-License-Identifier: MIT */
/* memaccept: the AMD SEV-SNP backend: GHCB, accept = Page State Change + PVALIDATE, #VC, termination. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/hooks.h"
#include "arch/x86/msr.h"
#include "arch/x86/paging.h"
#include "arch/x86/probe.h"
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/svsm.h"
#include "arch/x86/sev/vc_insn.h"
#include "arch/x86/sev/vmsa.h"
#include "arch/x86/smp.h"
#include "arch/x86/tsc.h"
#include "arch/x86/tsc_cal.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "drivers/exit.h"
#include "include/boot_info.h"
#include "include/panic.h"
#include "lib/spinlock.h"
#include "lib/string.h"

enum {
	C_VMGEXIT,		/* every VMGEXIT, MSR protocol included */
	C_MSR_PROTOCOL,
	C_PSC_EXITS,
	C_PSC_ENTRIES,
	C_PSC_REISSUES,
	C_PVALIDATE_2M,
	C_PVALIDATE_4K,
	C_PVALIDATE_SIZE_MISMATCH,
	C_EVICTED_PAGES,
	C_PSC_AHEAD_UNITS,
	C_IOIO,
	C_CPUID,
	C_MSR,
	C_VC,
	C_SVSM_CALLS,
	C_SVSM_ENTRIES,
	C_SVSM_SIZE_MISMATCH,
	C_SVSM_CREATE_VCPU,
	C_SVSM_DELETE_VCPU,
	C_COUNT,
};

static struct platform_counter counters[C_COUNT] = {
	[C_VMGEXIT] = { "vmgexit", 0 },
	[C_MSR_PROTOCOL] = { "vmgexit_msr_protocol", 0 },
	[C_PSC_EXITS] = { "vmgexit_psc", 0 },
	[C_PSC_ENTRIES] = { "psc_entries", 0 },
	[C_PSC_REISSUES] = { "psc_reissues", 0 },
	[C_PVALIDATE_2M] = { "pvalidate_2m", 0 },
	[C_PVALIDATE_4K] = { "pvalidate_4k", 0 },
	[C_PVALIDATE_SIZE_MISMATCH] = { "pvalidate_size_mismatch", 0 },
	[C_EVICTED_PAGES] = { "evicted_pages", 0 },
	[C_PSC_AHEAD_UNITS] = { "psc_ahead_units", 0 },
	[C_IOIO] = { "vmgexit_ioio", 0 },
	[C_CPUID] = { "vmgexit_cpuid", 0 },
	[C_MSR] = { "vmgexit_msr", 0 },
	[C_VC] = { "vc_exceptions", 0 },
	[C_SVSM_CALLS] = { "svsm_calls", 0 },
	[C_SVSM_ENTRIES] = { "svsm_pvalidate_entries", 0 },
	[C_SVSM_SIZE_MISMATCH] = { "svsm_size_mismatch", 0 },
	[C_SVSM_CREATE_VCPU] = { "svsm_create_vcpu", 0 },
	[C_SVSM_DELETE_VCPU] = { "svsm_delete_vcpu", 0 },
};

/*
 * Each CPU's own GHCB (mapped without the C-bit) and its registered GPA: KVM keeps the
 * registration per vCPU (sev_handle_vmgexit_msr_protocol GHCB_MSR_REG_GPA_REQ stores it
 * in the vCPU; sev_handle_vmgexit checks it), so every CPU registers its own page and
 * uses only that one. NULL / 0 until the CPU registered it: port I/O is dropped then.
 * Indexed by the per-CPU index (arch/x86/smp.h smp_cpu_index, GS-relative).
 */
static u8 *ghcbs[MAX_CPUS];
static u64 ghcb_gpas[MAX_CPUS];
static bool (*psc_ahead_fn)(u64 from, u64 *unit);
/* Hypervisor features (GHCB MSR protocol 0x081, 63:12). */
static u64 hv_features;

/* Several CPUs count at once once the APs run. */
static void count_add(unsigned c, u64 n)
{
	platform_count(counters, c, n);
}

static void count(unsigned c)
{
	count_add(c, 1);
}

/* Each kind of statistics a Page State Change or a validation left, into the counters. */
static void count_psc(const struct snp_psc_stats *ps)
{
	count_add(C_PSC_EXITS, ps->exits);
	count_add(C_PSC_ENTRIES, ps->entries);
	count_add(C_PSC_REISSUES, ps->reissues);
	count_add(C_PSC_AHEAD_UNITS, ps->ahead_units);
}

static void count_pvalidate(const struct snp_pvalidate_stats *vs)
{
	count_add(C_PVALIDATE_2M, vs->calls_2m);
	count_add(C_PVALIDATE_4K, vs->calls_4k);
	count_add(C_PVALIDATE_SIZE_MISMATCH, vs->size_mismatch);
	count_add(C_EVICTED_PAGES, vs->evicted_pages);
}

static void count_svsm(const struct svsm_pval_stats *ss)
{
	count_add(C_SVSM_ENTRIES, ss->entries);
	count_add(C_SVSM_SIZE_MISMATCH, ss->size_mismatch);
	count_add(C_EVICTED_PAGES, ss->evicted_pages);
}

static u8 *this_ghcb(void)
{
	return ghcbs[smp_cpu_index()];
}

static u64 this_ghcb_gpa(void)
{
	return ghcb_gpas[smp_cpu_index()];
}

/*
 * Below VMPL0: what boot/ read from the secrets page, whether RMPADJUST
 * found us at VMPL0, and, when not, each CPU's SVSM calling area, through which all its
 * validation goes. The boot CPU uses the one the secrets page names; each AP the page
 * the boot CPU gave the SVSM for it in Create vCPU (snp_ap.c): the SVSM serves a vCPU's
 * call from that vCPU's own calling area (COCONUT core.rs core_create_vcpu records it
 * per vCPU, update_guest_vmsa_caa; Linux keeps one per CPU, per_cpu(svsm_caa)).
 * Indexed like ghcbs[]; identity-mapped, private.
 */
static const struct boot_info *snp_bi;
static bool at_vmpl0 = true;
static bool via_svsm;		/* false: validate with PVALIDATE */
static u8 *svsm_caas[MAX_CPUS];
/* A page of our own image to probe with RMPADJUST (private and validated, like any). */
static u8 vmpl_probe[PAGE_SIZE] __aligned(PAGE_SIZE);

static u8 *this_caa(void)
{
	u8 *caa = svsm_caas[smp_cpu_index()];

	if (!caa)
		fatal_reason(EXIT_PLATFORM_FATAL, FC_SVSM, "CPU %u has no SVSM calling area",
			     smp_cpu_index());
	return caa;
}

/* ------------------------------------------------------------------ MSR protocol */

static u64 msr_protocol(u64 request)
{
	u64 resp;

	count(C_VMGEXIT);
	count(C_MSR_PROTOCOL);
	msr_write(MSR_SEV_GHCB, request);
	snp_vmgexit();
	resp = msr_read(MSR_SEV_GHCB);
	/* Once the GHCB is registered, the MSR holds its address between exits. */
	if (this_ghcb_gpa())
		msr_write(MSR_SEV_GHCB, this_ghcb_gpa());
	return resp;
}

/*
 * Termination request (GHCB spec 2.3.1): works without a GHCB, so it is the one way out
 * at any time. The reason says what happened: memaccept's own set (GHCB_TERM_SET_MEMACCEPT),
 * code (condition << 4) | exit code. KVM turns it into KVM_EXIT_SYSTEM_EVENT
 * (KVM_SYSTEM_EVENT_SEV_TERM, Linux arch/x86/kvm/svm/sev.c sev_handle_vmgexit_msr_protocol)
 * and QEMU handles that as a guest panic (accel/kvm/kvm-all.c): nothing the guest does
 * afterwards reaches isa-debug-exit, which is why kernel_exit_reason() prints its exit
 * event, the verdict a harness reads, before it calls this.
 */
static __noreturn void snp_terminate(u32 reason)
{
	u64 req = GHCB_MSR_TERM_REQ | ((u64)GHCB_TERM_SET_MEMACCEPT << 12) |
		  ((u64)SNP_TERM_CODE(reason) << 16);

	for (;;) {
		msr_write(MSR_SEV_GHCB, req);
		snp_vmgexit();
		/*
		 * A hypervisor that resumes us after a termination request gets nothing more. HLT
		 * is an automatic exit for an SEV-ES/SNP guest (no #VC: Linux's #VC handler has no
		 * case for it and Linux halts the same way after its own termination request).
		 */
		raw_halt();
	}
}

static __noreturn void ghcb_fail(const char *what, u64 value)
{
	fatal_reason(EXIT_PLATFORM_FATAL, FC_GHCB, "GHCB: %s (%#llx)", what, value);
}

/* ------------------------------------------------------------------ GHCB exits */

/* One exit through the GHCB. Returns SW_EXITINFO1's low 32 bits (0 = success). */
static u32 ghcb_exit(u64 code, u64 info1, u64 info2)
{
	u8 *ghcb = this_ghcb();

	if (!ghcb)
		ghcb_fail("an exit before the GHCB was set up", code);
	ghcb_field_set(ghcb, GHCB_SW_EXIT_CODE, code);
	ghcb_field_set(ghcb, GHCB_SW_EXIT_INFO_1, info1);
	ghcb_field_set(ghcb, GHCB_SW_EXIT_INFO_2, info2);
	*(u16 *)(ghcb + GHCB_PROTOCOL_VERSION) = GHCB_PROTOCOL_MAX;
	*(u32 *)(ghcb + GHCB_USAGE) = 0;
	count(C_VMGEXIT);
	snp_vmgexit();
	return (u32)*ghcb_field(ghcb, GHCB_SW_EXIT_INFO_1);
}

static void ghcb_clear(void)
{
	memset(this_ghcb() + GHCB_VALID_BITMAP, 0, 16);
}

/*
 * One IN or OUT through the GHCB (IOIO exit, SW_EXITINFO1 as the APM's IOIO intercept
 * information: type, size, and the address size, 64 bits in long mode as Linux
 * vc_ioio_exitinfo sets it from the instruction's address size).
 */
static u32 ioio(u16 port, int size, bool in, u32 out_value, bool *ok)
{
	u8 *ghcb = this_ghcb();
	u64 info = ((u64)port << IOIO_PORT_SHIFT) | IOIO_A64 | (in ? IOIO_TYPE_IN : 0) |
		   (size == 1 ? IOIO_SZ8 : size == 2 ? IOIO_SZ16 : IOIO_SZ32);

	ghcb_clear();
	if (!in)
		ghcb_field_set(ghcb, GHCB_RAX, out_value);
	count(C_IOIO);
	*ok = ghcb_exit(SVM_EXIT_IOIO, info, 0) == 0 && (!in || ghcb_field_valid(ghcb, GHCB_RAX));
	/* Only the operand's bytes are an answer: whatever the host put above them is dropped. */
	return in ? (u32)(*ghcb_field(ghcb, GHCB_RAX) & (size == 4 ? 0xffffffffULL : (1ULL << (8 * size)) - 1)) : 0;
}

static void snp_io_out(u16 port, u32 val, int size)
{
	bool ok;

	/* Before the GHCB exists the console waits in memory (console_hold) and nothing else
	 * does port I/O: drop the write rather than fault. */
	if (this_ghcb())
		ioio(port, size, false, val, &ok);
}

static u32 snp_io_in(u16 port, int size)
{
	bool ok = false;
	u32 v = this_ghcb() ? ioio(port, size, true, 0, &ok) : 0;

	return ok ? v : ~0u;
}

static u64 xcr0(void)
{
	u32 lo, hi;

	/* XGETBV raises #UD unless CR4.OSXSAVE is set; without it only x87 state (bit 0) is on. */
	if (!(read_cr4() & CR4_OSXSAVE))
		return 1;
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((u64)hi << 32) | lo;
}

/*
 * CPUID through the GHCB (GHCB spec 4.1, exit 0x72): RAX = leaf, RCX = subleaf, and for
 * leaf 0xD also XCR0, which KVM requires (sev_es_validate_vmgexit rejects the exit
 * without it: the answer depends on the enabled XSAVE features). The answer counts only
 * if the hypervisor marked all four registers valid; anything else is not an answer.
 */
static bool cpuid_exit(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	u8 *ghcb = this_ghcb();

	ghcb_clear();
	ghcb_field_set(ghcb, GHCB_RAX, leaf);
	ghcb_field_set(ghcb, GHCB_RCX, subleaf);
	if (leaf == CPUID_XSAVE_LEAF)
		ghcb_field_set(ghcb, GHCB_XCR0, xcr0());
	count(C_CPUID);
	if (ghcb_exit(SVM_EXIT_CPUID, 0, 0))
		return false;
	if (!ghcb_field_valid(ghcb, GHCB_RAX) || !ghcb_field_valid(ghcb, GHCB_RBX) ||
	    !ghcb_field_valid(ghcb, GHCB_RCX) || !ghcb_field_valid(ghcb, GHCB_RDX)) {
		kprintf("snp: the hypervisor answered CPUID %#x without marking RAX, RBX, RCX and RDX "
			"valid\n", leaf);
		return false;
	}
	r->eax = (u32)*ghcb_field(ghcb, GHCB_RAX), r->ebx = (u32)*ghcb_field(ghcb, GHCB_RBX);
	r->ecx = (u32)*ghcb_field(ghcb, GHCB_RCX), r->edx = (u32)*ghcb_field(ghcb, GHCB_RDX);
	return true;
}

/* CPUID with this CPU's GHCB; before it exists, the instruction (and its #VC). */
static bool snp_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	if (!this_ghcb())
		return false;
	if (!cpuid_exit(leaf, subleaf, r))
		fatal_reason(EXIT_PLATFORM_FATAL, FC_GHCB, "the hypervisor gave no answer to CPUID %#x",
			     leaf);
	return true;
}

/* Secure TSC (SEV_STATUS bit 11): GUEST_TSC_FREQ then reads without an intercept. */
static bool secure_tsc;

/*
 * The MSRs KVM lets an SEV-ES/SNP guest access without an intercept (Linux
 * arch/x86/kvm/svm/svm.c direct_access_msrs with .always, sev.c
 * sev_es_recalc_msr_intercepts): the GHCB MSR, EFER, PAT, the FS and GS bases, and
 * GUEST_TSC_FREQ reads under Secure TSC. SEV_STATUS reads do not trap either: Linux reads
 * it natively before it has a #VC handler that serves MSRs (boot/compressed/sev.c
 * sev_enable). Every other MSR is a #VC 0x7C, served through the GHCB (msr_exit).
 */
static bool snp_msr_native(u32 msr, bool write)
{
	switch (msr) {
	case MSR_SEV_GHCB:
	case MSR_EFER:
	case MSR_PAT:
	case MSR_FS_BASE:
	case MSR_GS_BASE:
		return true;
	case MSR_SEV_STATUS:
		return !write;
	case MSR_GUEST_TSC_FREQ:
		return !write && secure_tsc;
	default:
		return false;
	}
}

/*
 * The MSR exit (GHCB spec 4.1, SW_EXITCODE 0x7C; Linux vc_handle_msr): RCX = the MSR,
 * SW_EXITINFO1 = 0 to read, 1 to write with EDX:EAX in RDX and RAX. KVM answers in RAX
 * and RDX, or asks for a #GP (SW_EXITINFO1 = 1) where it refuses the MSR: false.
 */
static bool msr_exit(u32 msr, bool write, u64 *val)
{
	u8 *ghcb = this_ghcb();
	u32 info1;

	if (!ghcb)
		fatal_reason(EXIT_PLATFORM_FATAL, FC_GHCB, "%s %#x before this CPU has a GHCB: the "
			     "hypervisor serves it, through the GHCB", write ? "WRMSR" : "RDMSR", msr);
	ghcb_clear();
	ghcb_field_set(ghcb, GHCB_RCX, msr);
	if (write) {
		ghcb_field_set(ghcb, GHCB_RAX, (u32)*val);
		ghcb_field_set(ghcb, GHCB_RDX, *val >> 32);
	}
	count(C_MSR);
	info1 = ghcb_exit(SVM_EXIT_MSR, write, 0);
	if (info1 == GHCB_HV_RESP_EXCEPTION)
		return false;
	if (info1)
		ghcb_fail("the hypervisor refused an MSR exit", ((u64)info1 << 32) | msr);
	if (!write)
		*val = (u32)*ghcb_field(ghcb, GHCB_RAX) | (*ghcb_field(ghcb, GHCB_RDX) << 32);
	return true;
}

static bool snp_rdmsr(u32 msr, u64 *val)
{
	return msr_exit(msr, false, val);
}

static bool snp_wrmsr(u32 msr, u64 val)
{
	return msr_exit(msr, true, &val);
}

/* ------------------------------------------------------------------ accept */

static void snp_fatal(u32 condition, const char *what, u64 a, u64 b)
{
	int code = condition == FC_PSC_PROTOCOL || condition == FC_PVALIDATE_NOUPDATE
			   ? EXIT_HOST_HOSTILE : EXIT_PLATFORM_FATAL;

	fatal_reason(code, condition, "%s (%#llx, %#llx)", what, a, b);
}

static u64 psc_exit(struct psc_desc *desc, unsigned n)
{
	u8 *ghcb = this_ghcb();
	struct psc_desc *buf = (struct psc_desc *)(ghcb + GHCB_SHARED_BUFFER);
	u64 info1, info2;

	/* The descriptor lives in the shared buffer: the hypervisor reads and updates it there. */
	memcpy(buf, desc, sizeof(desc->hdr) + n * sizeof(u64));
	ghcb_clear();
	ghcb_field_set(ghcb, GHCB_SW_SCRATCH, this_ghcb_gpa() + GHCB_SHARED_BUFFER);
	info1 = ghcb_exit(SVM_VMGEXIT_PSC, 0, 0);
	info2 = *ghcb_field(ghcb, GHCB_SW_EXIT_INFO_2);
	/*
	 * KVM answers every PSC it takes with SW_EXITINFO1 = 0 and puts the outcome in
	 * SW_EXITINFO2 (sev.c snp_complete_psc); a non-zero SW_EXITINFO1 is an exit it
	 * refused (2: malformed input) or an exception to raise (1), which Linux's
	 * vmgexit_psc counts as a failure as well.
	 */
	if (info1)
		snp_fatal(FC_PSC_ERROR, "the hypervisor refused the Page State Change exit "
			  "(SW_EXITINFO1, SW_EXITINFO2)", info1, info2);
	/* Entries too: a re-issue must carry the cur_page the hypervisor left in them. */
	memcpy(desc, buf, sizeof(desc->hdr) + n * sizeof(u64));
	return info2;
}

/* One read of the first and of the last cache line of each 4 KiB page (see snp.h). */
static void evict(u64 va, u64 pages)
{
	for (u64 i = 0; i < pages; i++) {
		const volatile u8 *p = (const volatile u8 *)(uintptr_t)(va + i * PAGE_SIZE);

		(void)p[0];
		(void)p[PAGE_SIZE - 1];
	}
}

/*
 * Eager acceptance sends full 253-entry Page State Change requests (2.02 exits per GiB),
 * also when several CPUs accept at once, each its own share: the requests are made in
 * ascending address order over all the units eager still has to accept. A CPU whose
 * units are not private yet takes, under psc_lock, the lowest units nobody converted or
 * is converting (its own among them, or others' first), at most 253, marks them
 * `converting`, and sends the request without the lock, so that other CPUs send theirs
 * meanwhile; it goes on until its own units are done, waiting for those that another
 * CPU's request holds. A unit's bit in `converted` is set once the request that
 * converted it has completed, so a set bit means private. Without the order, CPUs with
 * equal shares each end their share with a half-full request (one extra exit per CPU).
 * Units above CONVERTED_LIMIT are not tracked: they are converted with their accept, as
 * lazily.
 */
static bool psc_ahead_unit(u64 from, u64 *unit);
static const struct snp_psc_ops psc_ops_eager = { psc_exit, snp_fatal, psc_ahead_unit };
#define CONVERTED_LIMIT (1ULL << 40)
#define UNIT_WORDS (CONVERTED_LIMIT / UNIT_SIZE / 64)
static u64 converted[UNIT_WORDS], converting[UNIT_WORDS];
static struct spinlock psc_lock;
/*
 * Each CPU's claimed range while it waits for its units to be converted (end 0: none),
 * written by that CPU, read by the one taking a batch.
 */
static u64 want_start[MAX_CPUS], want_end[MAX_CPUS];

/* One request's units, ascending; the first is sent as the range, the rest as `ahead`. */
struct psc_batch {
	u64 unit[PSC_MAX_ENTRIES];
	unsigned n, next;
};
static struct psc_batch *batch_of[MAX_CPUS];	/* the batch each CPU is sending */

static bool unit_bit(const u64 *bits, u64 unit)
{
	u64 i = unit / UNIT_SIZE;

	return unit < CONVERTED_LIMIT &&
	       (__atomic_load_n(&bits[i / 64], __ATOMIC_ACQUIRE) & (1ULL << (i % 64)));
}

static void unit_bit_set(u64 *bits, u64 unit, bool on)
{
	u64 i = unit / UNIT_SIZE;

	if (unit >= CONVERTED_LIMIT)
		return;
	if (on)
		__atomic_fetch_or(&bits[i / 64], 1ULL << (i % 64), __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(&bits[i / 64], ~(1ULL << (i % 64)), __ATOMIC_RELEASE);
}

/* Neither converted nor in a request some CPU is sending. */
static bool unit_free_to_take(u64 unit)
{
	return !unit_bit(converted, unit) && !unit_bit(converting, unit);
}

/*
 * Under psc_lock: the lowest unit at or above `from` that nobody converted or is
 * converting and that is either still unaccepted (no CPU claimed it: still in the
 * bitmap) or in the range a CPU claimed and waits to have converted (no longer in the
 * bitmap).
 */
static bool next_to_convert(u64 from, u64 *unit)
{
	u64 f = from, cand = 0;
	bool found = false;

	while (psc_ahead_fn && psc_ahead_fn(f, &cand) && cand >= f && cand < CONVERTED_LIMIT) {
		if (unit_free_to_take(cand)) {
			found = true;
			break;
		}
		f = cand + UNIT_SIZE;
	}
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
		u64 e = __atomic_load_n(&want_end[cpu], __ATOMIC_ACQUIRE);
		u64 o = MAX(from, __atomic_load_n(&want_start[cpu], __ATOMIC_RELAXED));

		while (o < e && !unit_free_to_take(o))
			o += UNIT_SIZE;
		if (o < e && (!found || o < cand)) {
			cand = o;
			found = true;
		}
	}
	if (found)
		*unit = cand;
	return found;
}

/* psc.c fills a request's free entries with these: the rest of this CPU's batch. */
static bool psc_ahead_unit(u64 from, u64 *unit)
{
	struct psc_batch *b = batch_of[smp_cpu_index()];

	if (!b || b->next >= b->n || b->unit[b->next] < from)
		return false;
	*unit = b->unit[b->next++];
	return true;
}

static bool range_converted(u64 start, u64 end)
{
	for (u64 u = start; u < end; u += UNIT_SIZE)
		if (!unit_bit(converted, u))
			return false;
	return true;
}

/* Eager: make the units [start, end) this CPU claimed private (see `converted`). */
static void psc_eager(u64 start, u64 end, struct snp_psc_stats *ps)
{
	unsigned me = smp_cpu_index();

	/* Published before taking a batch, so that a CPU taking one now may take them too. */
	__atomic_store_n(&want_start[me], start, __ATOMIC_RELAXED);
	__atomic_store_n(&want_end[me], end, __ATOMIC_RELEASE);
	while (!range_converted(start, end)) {
		struct psc_batch b = { .n = 0, .next = 1 };
		struct snp_psc_ahead fresh = { 0, 0 };
		u64 c, from = 0;

		spin_lock(&psc_lock);
		while (b.n < PSC_MAX_ENTRIES && next_to_convert(from, &c)) {
			b.unit[b.n++] = c;
			unit_bit_set(converting, c, true);
			from = c + UNIT_SIZE;
		}
		spin_unlock(&psc_lock);
		if (!b.n) {
			cpu_relax();	/* what is left of ours is in another CPU's request */
			continue;
		}
		batch_of[me] = &b;
		snp_psc_range(b.unit[0], b.unit[0] + UNIT_SIZE, PSC_OP_PRIVATE, &psc_ops_eager, ps, &fresh);
		batch_of[me] = NULL;
		/* Units the request had no room for (none: it holds 253) go back. */
		for (unsigned i = 0; i < b.n; i++) {
			if (i < b.next)
				unit_bit_set(converted, b.unit[i], true);
			unit_bit_set(converting, b.unit[i], false);
		}
	}
	__atomic_store_n(&want_end[me], 0, __ATOMIC_RELEASE);
}

static const struct snp_psc_ops psc_ops = { psc_exit, snp_fatal, NULL };
static struct snp_pvalidate_ops pvalidate_ops = { snp_pvalidate, snp_fatal, evict };

/*
 * One SVSM core protocol call (SVSM spec, AMD pub. 58019, "Calling Convention"): RAX =
 * protocol 0 << 32 | call; RCX, RDX, R8 its arguments (for PVALIDATE, RCX = GPA of the
 * request in the calling area's buffer). The calling CPU uses its own calling area: it
 * sets the call_pending byte, asks the
 * hypervisor to run VMPL0 (GHCB MSR protocol, SNP Run VMPL request; usable before and
 * after our GHCB exists, so the GHCB page itself can be rescinded this way), and after
 * the VMGEXIT takes call_pending back: still 1 means the SVSM never saw the call.
 * The MSR's previous value (our GHCB's address) is restored, as Linux
 * svsm_perform_msr_protocol does.
 */
static u64 svsm_core_call(u32 call, u64 rcx, u64 rdx, u64 r8)
{
	u64 saved = msr_read(MSR_SEV_GHCB), resp, rax;
	u8 *caa = this_caa(), pending;

	count(C_VMGEXIT);
	count(C_MSR_PROTOCOL);
	count(C_SVSM_CALLS);
	msr_write(MSR_SEV_GHCB, GHCB_MSR_VMPL_REQ_LEVEL(0));
	__atomic_store_n(&caa[SVSM_CAA_CALL_PENDING], 1, __ATOMIC_SEQ_CST);
	rax = snp_svsm_vmgexit(SVSM_CALL(SVSM_CORE_PROTOCOL, call), rcx, rdx, r8);
	pending = __atomic_exchange_n(&caa[SVSM_CAA_CALL_PENDING], 0, __ATOMIC_SEQ_CST);
	resp = msr_read(MSR_SEV_GHCB);
	msr_write(MSR_SEV_GHCB, saved);
	if ((resp & GHCB_INFO_MASK) != GHCB_MSR_VMPL_RESP || (resp >> 32))
		fatal_reason(EXIT_PLATFORM_FATAL, FC_SVSM, "the hypervisor did not run the SVSM (VMPL "
			     "request answered %#llx)", resp);
	if (pending)
		fatal_reason(EXIT_PLATFORM_FATAL, FC_SVSM, "the SVSM did not take the call (call_pending "
			     "still set, RAX %#llx)", rax);
	return rax;
}

static u64 svsm_call(struct svsm_pval_req *req)
{
	return svsm_core_call(SVSM_CORE_PVALIDATE, (u64)(uintptr_t)req, 0, 0);
}

u64 snp_svsm_pvalidate_call(struct svsm_pval_req *req)
{
	return svsm_call(req);
}

/*
 * Create vCPU (core protocol call 2, see svsm.h) through the calling CPU's calling area:
 * RCX = the VMSA page, RDX = the new vCPU's calling area, R8 = its APIC ID (as Linux
 * snp_set_vmsa does below VMPL0). Returns the SVSM's RAX.
 */
u64 snp_svsm_create_vcpu(u64 vmsa, u64 caa, u32 apic_id)
{
	count(C_SVSM_CREATE_VCPU);
	return svsm_core_call(SVSM_CORE_CREATE_VCPU, vmsa, caa, apic_id);
}

/* Delete vCPU (core protocol call 3, see svsm.h): RCX = the VMSA page, as Linux snp_set_vmsa. */
u64 snp_svsm_delete_vcpu(u64 vmsa)
{
	count(C_SVSM_DELETE_VCPU);
	return svsm_core_call(SVSM_CORE_DELETE_VCPU, vmsa, 0, 0);
}

/*
 * The calling area CPU `cpu` (per-CPU index) will use, set by the boot CPU before that
 * CPU runs: a page the SVSM was told about in Create vCPU.
 */
void snp_svsm_set_caa(unsigned cpu, u64 caa)
{
	__atomic_store_n(&svsm_caas[cpu], (u8 *)(uintptr_t)caa, __ATOMIC_RELEASE);
}

u8 snp_guest_vmpl(void)
{
	return via_svsm ? snp_bi->svsm_guest_vmpl : 0;
}

static struct svsm_pval_ops svsm_ops = { svsm_call, snp_fatal, evict };

/* PVALIDATE [start, end), directly at VMPL0 or through the SVSM below it. */
static void validate_range(u64 start, u64 end, bool validate)
{
	if (via_svsm) {
		struct svsm_pval_stats ss = { 0 };

		svsm_pvalidate_range(start, end, validate, (struct svsm_pval_req *)(this_caa() + SVSM_CAA_BUFFER),
				     &svsm_ops, &ss);
		count_svsm(&ss);
		return;
	}
	struct snp_pvalidate_stats vs = { 0 };

	snp_pvalidate_range(start, end, validate, &pvalidate_ops, &vs);
	count_pvalidate(&vs);
}

/*
 * Accept = make the range private in the RMP (Page State Change, batched, 2 MiB
 * entries), then PVALIDATE it (2 MiB pages, 4 KiB where the RMP has 4 KiB entries),
 * itself at VMPL0 or through the SVSM below it. This order matters: PVALIDATE only
 * works on pages assigned to the guest.
 */
static int snp_accept(u64 start, u64 end)
{
	struct snp_psc_stats ps = { 0 };

	if (psc_ahead_fn && IS_ALIGNED(start, UNIT_SIZE) && IS_ALIGNED(end, UNIT_SIZE) && end <= CONVERTED_LIMIT)
		psc_eager(start, end, &ps);
	else
		snp_psc_range(start, end, PSC_OP_PRIVATE, &psc_ops, &ps, NULL);
	count_psc(&ps);
	validate_range(start, end, true);
	return 0;
}

/* ------------------------------------------------------------------ workload=probe */

static struct probe_sink *probe_sink;

/* The Page State Change exit timed, filed by the entries it still had to do. */
static u64 timed_psc_exit(struct psc_desc *desc, unsigned n)
{
	unsigned left = n - desc->hdr.cur_entry, prim;
	bool big = n == 1 && PSC_ENTRY_2M(desc->entries[0]);
	u64 t = tsc_now_ns(), err = psc_exit(desc, n);

	t = tsc_now_ns() - t;
	prim = big ? PR_SNP_PSC_2M : left == 1 ? PR_SNP_PSC_1 : left == 16 ? PR_SNP_PSC_16 :
	       left == PSC_MAX_ENTRIES ? PR_SNP_PSC_253 : PR_SNP_PSC_OTHER;
	if (!err)
		probe_sink->add(probe_sink, prim, t, left);
	return err;
}

static u32 timed_pvalidate(u64 va, u32 size, u32 validate, bool *no_update)
{
	u64 t = tsc_now_ns();
	u32 rc = snp_pvalidate(va, size, validate, no_update);

	t = tsc_now_ns() - t;
	if (rc == PVALIDATE_OK)
		probe_sink->add(probe_sink, size == PVALIDATE_2M ? PR_SNP_PVALIDATE_2M : PR_SNP_PVALIDATE_4K, t, 1);
	else if (rc == PVALIDATE_FAIL_SIZEMISMATCH && size == PVALIDATE_2M)
		probe_sink->add(probe_sink, PR_SNP_PVALIDATE_2M_REFUSED, t, 1);
	return rc;
}

/* One sample per call, in ns per page: a 2 MiB page's eviction is 512 pages' worth. */
static void timed_evict(u64 va, u64 pages)
{
	u64 t = tsc_now_ns();

	evict(va, pages);
	probe_sink->add(probe_sink, PR_SNP_EVICT_4K, (tsc_now_ns() - t) / pages, pages);
}

static u64 timed_svsm_call(struct svsm_pval_req *req)
{
	unsigned left = req->num_entries - req->cur_index, prim = PR_COUNT;
	bool big = left == 1 && SVSM_PVAL_ENTRY_2M(req->entries[req->cur_index]);
	u64 t = tsc_now_ns(), rc = svsm_call(req);

	t = tsc_now_ns() - t;
	if (big && rc == SVSM_SUCCESS)
		prim = PR_SVSM_PVAL_2M;
	else if (big && rc == SVSM_PVALIDATE_FAIL_SIZEMISMATCH)
		prim = PR_SVSM_PVAL_2M_REFUSED;
	else if (!big && rc == SVSM_SUCCESS)
		prim = left == 1 ? PR_SVSM_PVAL_1 : left == SVSM_PVAL_MAX_ENTRIES ? PR_SVSM_PVAL_MANY
								    : PR_SVSM_PVAL_OTHER;
	if (prim != PR_COUNT)
		probe_sink->add(probe_sink, prim, t, left);
	return rc;
}

static const struct snp_psc_ops probe_psc_ops = { timed_psc_exit, snp_fatal, NULL };
static const struct snp_pvalidate_ops probe_pvalidate_ops = { timed_pvalidate, snp_fatal, timed_evict };
static const struct svsm_pval_ops probe_svsm_ops = { timed_svsm_call, snp_fatal, timed_evict };

static void probe_psc(u64 start, u64 end, struct snp_psc_stats *ps)
{
	snp_psc_range(start, end, PSC_OP_PRIVATE, &probe_psc_ops, ps, NULL);
}

/*
 * Validation as validate_range does it (backend), or in a shape that gives the samples
 * the backend's does not on every host: every 8th unit page by page (PVALIDATE 4 KiB, or
 * one-entry SVSM requests), and below VMPL0 every 8th from the 4th a full request of
 * 4 KiB entries (a host with 2 MiB RMP entries never makes the backend send one).
 */
static bool probe_validate(u64 unit, unsigned k, struct snp_pvalidate_stats *vs, struct svsm_pval_stats *ss)
{
	struct svsm_pval_req *req = via_svsm ? (struct svsm_pval_req *)(this_caa() + SVSM_CAA_BUFFER) : NULL;
	u64 end = unit + UNIT_SIZE;

	if (k % 8 == 7) {
		for (u64 a = unit; a < end; a += PAGE_SIZE) {
			if (via_svsm)
				svsm_pvalidate_range(a, a + PAGE_SIZE, true, req, &probe_svsm_ops, ss);
			else
				snp_pvalidate_range(a, a + PAGE_SIZE, true, &probe_pvalidate_ops, vs);
		}
		return false;
	}
	if (via_svsm && k % 8 == 3) {
		u64 mid = unit + SVSM_PVAL_MAX_ENTRIES * PAGE_SIZE;

		svsm_pvalidate_range(unit, mid, true, req, &probe_svsm_ops, ss);
		svsm_pvalidate_range(mid, end, true, req, &probe_svsm_ops, ss);
		return false;
	}
	if (via_svsm)
		svsm_pvalidate_range(unit, end, true, req, &probe_svsm_ops, ss);
	else
		snp_pvalidate_range(unit, end, true, &probe_pvalidate_ops, vs);
	return true;
}

/*
 * A unit: made private as the backend does (one 2 MiB entry) or, on odd units while the
 * samples lack them, in requests of 253 4 KiB entries (two, then six of one entry) or of
 * 16; then validated (probe_validate). The counters count what was done, as for snp_accept.
 */
static int snp_probe_unit(u64 unit, struct probe_sink *s, unsigned k, bool *backend)
{
	struct snp_psc_stats ps = { 0 };
	struct snp_pvalidate_stats vs = { 0 };
	struct svsm_pval_stats ss = { 0 };
	u64 end = unit + UNIT_SIZE, a = unit;
	unsigned per = 0;

	if (k % 2 && s->count(s, PR_SNP_PSC_253) < PROBE_MIN_SAMPLES)
		per = PSC_MAX_ENTRIES;
	else if (k % 2 && s->count(s, PR_SNP_PSC_16) < PROBE_MIN_SAMPLES)
		per = 16;
	probe_sink = s;
	if (!per) {
		probe_psc(unit, end, &ps);
	} else if (per == 16) {
		for (; a < end; a += 16 * PAGE_SIZE)
			probe_psc(a, a + 16 * PAGE_SIZE, &ps);
	} else {
		for (unsigned i = 0; i < 2; i++, a += PSC_MAX_ENTRIES * PAGE_SIZE)
			probe_psc(a, a + PSC_MAX_ENTRIES * PAGE_SIZE, &ps);
		for (; a < end; a += PAGE_SIZE)
			probe_psc(a, a + PAGE_SIZE, &ps);
	}
	*backend = probe_validate(unit, k, &vs, &ss) && !per;
	probe_sink = NULL;
	count_psc(&ps);
	count_pvalidate(&vs);
	count_svsm(&ss);
	return 0;
}

#define SNP_PROBE_PRIMS                                                                     \
	((1ULL << PR_SNP_VMGEXIT_NOOP) | (1ULL << PR_SNP_PSC_1) | (1ULL << PR_SNP_PSC_16) |  \
	 (1ULL << PR_SNP_PSC_253) | (1ULL << PR_SNP_PSC_2M) | (1ULL << PR_SNP_PSC_OTHER) |       \
	 (1ULL << PR_SNP_EVICT_4K))
#define SNP_PROBE_DIRECT                                                                    \
	((1ULL << PR_SNP_PVALIDATE_4K) | (1ULL << PR_SNP_PVALIDATE_2M) | (1ULL << PR_SNP_PVALIDATE_2M_REFUSED))
#define SNP_PROBE_SVSM                                                                      \
	((1ULL << PR_SVSM_NOOP) | (1ULL << PR_SVSM_PVAL_1) | (1ULL << PR_SVSM_PVAL_MANY) |    \
	 (1ULL << PR_SVSM_PVAL_OTHER) | (1ULL << PR_SVSM_PVAL_2M) | (1ULL << PR_SVSM_PVAL_2M_REFUSED))
static struct platform_probe snp_probe;

/*
 * The no-work round trips: the GHCB MSR protocol's SEV information request, which KVM
 * answers in the kernel without an exit to QEMU (arch/x86/kvm/svm/sev.c
 * sev_handle_vmgexit_msr_protocol, GHCB_MSR_SEV_INFO_REQ); below VMPL0 also the SVSM's
 * Query Protocol call (svsm.h).
 */
static void snp_probe_calls(struct probe_sink *s, unsigned n)
{
	snp_probe.prims = SNP_PROBE_PRIMS | (via_svsm ? SNP_PROBE_SVSM : SNP_PROBE_DIRECT);
	for (unsigned i = 0; i < n; i++) {
		u64 t = tsc_now_ns(), resp = msr_protocol(GHCB_MSR_SEV_INFO_REQ);

		t = tsc_now_ns() - t;
		if ((resp & GHCB_INFO_MASK) == GHCB_MSR_SEV_INFO_RESP)
			s->add(s, PR_SNP_VMGEXIT_NOOP, t, 1);
	}
	for (unsigned i = 0; via_svsm && i < n; i++) {
		u64 t = tsc_now_ns();
		u64 rax = svsm_core_call(SVSM_CORE_QUERY_PROTOCOL,
					 ((u64)SVSM_CORE_PROTOCOL << 32) | SVSM_CORE_VERSION, 0, 0);

		t = tsc_now_ns() - t;
		if (rax == SVSM_SUCCESS)
			s->add(s, PR_SVSM_NOOP, t, 1);
	}
}

static bool snp_probe_satisfied(struct probe_sink *s, u64 min)
{
	static const unsigned need[] = { PR_SNP_PSC_1, PR_SNP_PSC_16, PR_SNP_PSC_253, PR_SNP_PSC_2M };

	for (unsigned i = 0; i < ARRAY_SIZE(need); i++)
		if (s->count(s, need[i]) < min)
			return false;
	if (via_svsm)
		return s->count(s, PR_SVSM_PVAL_2M) + s->count(s, PR_SVSM_PVAL_2M_REFUSED) >= min &&
		       s->count(s, PR_SVSM_PVAL_1) >= min && s->count(s, PR_SVSM_PVAL_MANY) >= min;
	return s->count(s, PR_SNP_PVALIDATE_2M) + s->count(s, PR_SNP_PVALIDATE_2M_REFUSED) >= min &&
	       s->count(s, PR_SNP_PVALIDATE_4K) >= min;
}

static struct platform_probe snp_probe = {
	.calls = snp_probe_calls,
	.accept_unit = snp_probe_unit,
	.satisfied = snp_probe_satisfied,
	.prims = SNP_PROBE_PRIMS,
};

/* Eager acceptance starts (fn set) or ends (NULL): see snp_psc_range. */
static void snp_accept_ahead(bool (*fn)(u64 from, u64 *unit))
{
	psc_ahead_fn = fn;
}

/* ------------------------------------------------------------------ #VC */

/*
 * IN/OUT as vc_insn_check decoded them: the port from the instruction's imm8 or DX.
 * String I/O (INS/OUTS) is recognised there but not served: memaccept never runs it.
 */
static bool emulate_io(struct trap_frame *f, const struct vc_insn *d)
{
	unsigned size = d->size;
	u16 port = d->port_imm ? d->port : (u16)f->rdx;
	bool in = d->kind == VC_INSN_IN, ok;

	if (d->kind != VC_INSN_IN && d->kind != VC_INSN_OUT)
		return false;
	u64 mask = size == 4 ? 0xffffffffULL : (1ULL << (8 * size)) - 1;
	u32 v = ioio(port, (int)size, in, (u32)(f->rax & mask), &ok);

	if (!ok)
		return false;
	/*
	 * IN writes AL, AX or EAX as the instruction would: a 32-bit destination zero-extends
	 * into RAX, AL and AX leave the rest of RAX alone (Intel SDM vol. 1, 3.4.1.1; AMD APM
	 * vol. 1, 3.1.2.3). Linux's vc_handle_ioio clears all upper bits for every size.
	 */
	if (in && size == 4)
		f->rax = v;
	else if (in)
		f->rax = (f->rax & ~mask) | (v & mask);
	return true;
}

/* What an exit code stands for (AMD APM vol. 2, appendix C), for the fatal report. */
static const char *vc_exit_name(u64 code)
{
	switch (code) {
	case SVM_EXIT_IOIO: return "port I/O";
	case SVM_EXIT_CPUID: return "CPUID";
	case SVM_EXIT_MSR: return "an MSR access";
	case SVM_EXIT_RDTSC: return "RDTSC";
	case SVM_EXIT_RDTSCP: return "RDTSCP";
	case SVM_EXIT_WBINVD: return "WBINVD";
	case SVM_EXIT_NPF: return "MMIO (a nested page fault)";
	case SVM_EXIT_PAGE_NOT_VALIDATED: return "a page that is not validated";
	default: return "an exit memaccept does not emulate";
	}
}

/*
 * Each CPU's #VC nesting depth. Nothing the handler runs raises #VC (its exits are
 * VMGEXITs, automatic exits; its MSR accesses are the GHCB MSR, which never traps; its
 * console output goes through the GHCB), so a #VC while the handler runs was injected
 * by the host: the GHCB holds the outer exit's request and a nested handler would
 * overwrite it. Refused. NMIs are not handled at all (no NMI handler: the fatal
 * exception report takes one), so an NMI cannot re-enter the handler either.
 */
static u8 vc_depth[MAX_CPUS];

static __noreturn void vc_hostile(struct trap_frame *f, const char *why)
{
	const u8 *ip = (const u8 *)(uintptr_t)f->rip;

	fatal_reason(EXIT_HOST_HOSTILE, FC_HOST_INPUT, "#VC for %s (exit code %#llx) at RIP %#llx "
		     "(bytes %02x %02x %02x): %s", vc_exit_name(f->error_code), f->error_code, f->rip,
		     ip[0], ip[1], ip[2], why);
}

/*
 * RDTSC or RDTSCP through the GHCB (exits 0x6E, 0x87): only if the hypervisor intercepts
 * them (KVM intercepts RDTSCP only where the guest's CPUID lacks it). Under Secure TSC
 * the host must not intercept them and its answer would be the host's TSC, not the
 * guest's: refused, as Linux vc_handle_rdtsc refuses it.
 */
static bool vc_rdtsc(struct trap_frame *f, bool rdtscp)
{
	u8 *ghcb = this_ghcb();

	if (secure_tsc)
		fatal_reason(EXIT_HOST_HOSTILE, FC_UNEXPECTED_EXCEPTION, "%s at RIP %#llx raised #VC "
			     "under Secure TSC: the host intercepts what it must not",
			     rdtscp ? "RDTSCP" : "RDTSC", f->rip);
	if (!ghcb)
		return false;
	ghcb_clear();
	if (ghcb_exit(rdtscp ? SVM_EXIT_RDTSCP : SVM_EXIT_RDTSC, 0, 0) ||
	    !ghcb_field_valid(ghcb, GHCB_RAX) || !ghcb_field_valid(ghcb, GHCB_RDX) ||
	    (rdtscp && !ghcb_field_valid(ghcb, GHCB_RCX)))
		return false;
	f->rax = (u32)*ghcb_field(ghcb, GHCB_RAX);
	f->rdx = (u32)*ghcb_field(ghcb, GHCB_RDX);
	if (rdtscp)
		f->rcx = (u32)*ghcb_field(ghcb, GHCB_RCX);
	return true;
}

/* RDMSR/WRMSR (0F 32, 0F 30): EDX:EAX, MSR in ECX (Linux vc_handle_msr). */
static void vc_msr(struct trap_frame *f, bool write)
{
	u32 msr = (u32)f->rcx;
	u64 v = (f->rdx << 32) | (u32)f->rax;

	if (!msr_exit(msr, write, &v))
		fatal_reason(EXIT_PLATFORM_FATAL, FC_MSR, "%s %#x at RIP %#llx raised #VC and the "
			     "hypervisor refused it", write ? "WRMSR" : "RDMSR", msr, f->rip);
	if (!write)
		f->rax = (u32)v, f->rdx = v >> 32;
}

/* A #VC for an MSR access: refused for the MSRs that never trap, whether or not a GHCB exists. */
static void vc_msr_check(const struct trap_frame *f, bool write)
{
	u32 msr = (u32)f->rcx;

	/*
	 * An MSR the accessor runs natively (snp_msr_native: the GHCB MSR, EFER, PAT, the FS
	 * and GS bases, SEV_STATUS reads, GUEST_TSC_FREQ under Secure TSC) never traps: KVM
	 * passes them through (arch/x86/kvm/svm/svm.c direct_access_msrs, sev.c
	 * sev_es_recalc_msr_intercepts), and SEV_STATUS and GUEST_TSC_FREQ are the
	 * hardware's. A #VC for one is a host that intercepts what it must not (and under
	 * Secure TSC would choose the guest's clock: Linux refuses GUEST_TSC_FREQ there too,
	 * __vc_handle_secure_tsc_msrs), or a forged #VC.
	 */
	if (snp_msr_native(msr, write))
		fatal_reason(EXIT_HOST_HOSTILE, FC_HOST_INPUT, "%s %#x at RIP %#llx raised #VC: the "
			     "hardware passes this MSR through, so the host intercepts what it must "
			     "not or forged the #VC", write ? "WRMSR" : "RDMSR", msr, f->rip);
}

/* Serve one checked exit; false: not served (reported as an unexpected #VC). */
static bool vc_serve(struct trap_frame *f, const struct vc_insn *d)
{
	struct cpuid_regs r;
	u8 *ghcb = this_ghcb();

	switch (d->kind) {
	case VC_INSN_IN:
	case VC_INSN_OUT:
		return ghcb && emulate_io(f, d);
	case VC_INSN_CPUID:
		if (!ghcb || !cpuid_exit((u32)f->rax, (u32)f->rcx, &r))
			return false;
		f->rax = r.eax, f->rbx = r.ebx, f->rcx = r.ecx, f->rdx = r.edx;
		return true;
	case VC_INSN_RDMSR:
	case VC_INSN_WRMSR:
		vc_msr_check(f, d->kind == VC_INSN_WRMSR);
		if (!ghcb)
			return false;
		vc_msr(f, d->kind == VC_INSN_WRMSR);
		return true;
	case VC_INSN_RDTSC:
	case VC_INSN_RDTSCP:
		return vc_rdtsc(f, d->kind == VC_INSN_RDTSCP);
	default:
		return false;	/* string I/O: not supported */
	}
}

/*
 * #VC: the CPU tells the guest what it would have exited for (error code = exit code).
 * Port I/O, CPUID, MSRs and RDTSC(P) go to the hypervisor through the GHCB, each only
 * after the bytes at RIP proved to be an instruction that raises that exit code
 * (vc_insn.h: a host can inject any error code anywhere). A page that is not validated
 * is memory nobody accepted: a stray access, reported and fatal. Anything else is
 * reported and fatal.
 */
bool snp_vc(struct trap_frame *f)
{
	unsigned cpu = smp_cpu_index();
	struct vc_insn d;

	count(C_VC);
	if (vc_depth[cpu])
		vc_hostile(f, "a #VC inside the #VC handler, which runs nothing that raises one: "
			      "injected by the host");
	vc_depth[cpu]++;
	switch (f->error_code) {
	case SVM_EXIT_IOIO:
	case SVM_EXIT_CPUID:
	case SVM_EXIT_MSR:
	case SVM_EXIT_RDTSC:
	case SVM_EXIT_RDTSCP:
		if (!vc_insn_check(f->error_code, (const u8 *)(uintptr_t)f->rip, VC_INSN_MAX_LEN, &d))
			vc_hostile(f, "the instruction at RIP does not raise this exit code: the host "
				      "injected a forged #VC");
		if (vc_serve(f, &d)) {
			f->rip += d.len;
			vc_depth[cpu]--;
			return true;
		}
		break;
	case SVM_EXIT_PAGE_NOT_VALIDATED: {
		u64 addr = read_cr2();

		arch_check_unaccepted(f, addr, "#VC (page not validated)");
		break;
	}
	default:
		break;
	}
	kprintf("snp: unexpected #VC for %s: exit code %#llx at RIP %#llx (CR2 %#llx)\n",
		vc_exit_name(f->error_code), f->error_code, f->rip, read_cr2());
	trap_dump(f);
	ev_begin("unexpected_vc");
	ev_u64("exit_code", f->error_code);
	ev_u64("rip", f->rip);
	ev_end();
	kernel_exit_reason(EXIT_PLATFORM_FATAL, FC_UNEXPECTED_EXCEPTION);
}

/* ------------------------------------------------------------------ setup */

/*
 * Before the first validation: at VMPL0 or not? RMPADJUST of a page of ours for VMPL1
 * succeeds only at VMPL0 (see snp.h). Below VMPL0 PVALIDATE cannot work, so every
 * validation goes to the SVSM the secrets page names; without one there is no way to
 * accept memory, and memaccept stops with its own reason (Linux stops likewise, with
 * GHCB_TERM_NOT_VMPL0 / GHCB_TERM_NO_SVSM). An SVSM that claims to run us at VMPL0
 * contradicts RMPADJUST: Linux terminates on it (GHCB_TERM_SVSM_VMPL0), and so do we;
 * likewise a secrets page that names an SVSM and a VMPL above 0 while RMPADJUST says 0.
 */
static void snp_find_vmpl(void)
{
	const struct boot_info *bi = snp_bi;
	u64 va = (u64)(uintptr_t)vmpl_probe, unit = va & ~(UNIT_SIZE - 1);
	u32 rc = snp_rmpadjust(va, PVALIDATE_4K, RMPADJUST_TARGET_VMPL1);

	/*
	 * Firmware may have validated the page as part of a 2 MiB RMP entry: RMPADJUST
	 * must then name the whole 2 MiB page (APM vol. 3: FAIL_SIZEMISMATCH otherwise).
	 */
	if (rc == RMPADJUST_FAIL_SIZEMISMATCH && paging_lookup(unit))
		rc = snp_rmpadjust(unit, PVALIDATE_2M, RMPADJUST_TARGET_VMPL1);
	if (rc != RMPADJUST_OK && rc != RMPADJUST_FAIL_PERMISSION)
		fatal_reason(EXIT_PLATFORM_FATAL, FC_NOT_VMPL0, "RMPADJUST answered %u: cannot tell "
			     "whether this guest runs at VMPL0", rc);
	at_vmpl0 = rc == RMPADJUST_OK;
	if (at_vmpl0 && bi && bi->snp_cc_blob == CC_BLOB_FOUND && bi->svsm_size && bi->svsm_guest_vmpl)
		fatal_reason(EXIT_HOST_HOSTILE, FC_SVSM, "the secrets page puts this guest at VMPL%u "
			     "under an SVSM, RMPADJUST says VMPL0", bi->svsm_guest_vmpl);
	if (at_vmpl0)
		return;
	if (!bi || bi->snp_cc_blob != CC_BLOB_FOUND || !bi->svsm_size)
		fatal_reason(EXIT_PLATFORM_FATAL, FC_NOT_VMPL0, "not running at VMPL0 and no SVSM "
			     "found (CC blob %u): PVALIDATE is impossible", bi ? bi->snp_cc_blob : 0);
	if (!bi->svsm_guest_vmpl)
		fatal_reason(EXIT_HOST_HOSTILE, FC_SVSM, "the SVSM says this guest runs at VMPL0, "
			     "RMPADJUST says it does not");
	/*
	 * Running below VMPL0 needs a hypervisor that runs several VMPLs (the Run VMPL
	 * request that enters the SVSM): feature bit 5. Linux stops without it
	 * (boot/compressed/sev.c sev_enable: GHCB_TERM_NOT_VMPL0); so does memaccept.
	 */
	if (!(hv_features & GHCB_HV_FT_SNP_MULTI_VMPL))
		fatal_reason(EXIT_PLATFORM_FATAL, FC_NOT_VMPL0, "below VMPL0 under an SVSM, but the "
			     "hypervisor does not offer multiple VMPLs (features %#llx, bit 5 clear)",
			     hv_features);
	/* The calling area is private memory of ours: map it so (firmware maps reserve it). */
	if (paging_map(bi->svsm_caa, bi->svsm_caa + PAGE_SIZE, MAP_RAM))
		fatal_reason(EXIT_PLATFORM_FATAL, FC_SVSM, "no memory to map the SVSM calling area");
	invlpg(bi->svsm_caa);
	svsm_caas[0] = (u8 *)(uintptr_t)bi->svsm_caa;
	via_svsm = true;
}

static void report_platform(void)
{
	static const char *const blob[] = { "not-read", "absent", "bad", "found" };
	const struct boot_info *bi = snp_bi;

	ev_begin("platform");
	ev_str("name", "snp");
	ev_bool("vmpl0", at_vmpl0);
	ev_str("validation", via_svsm ? "svsm" : "pvalidate");
	if (bi) {
		ev_str("cc_blob", bi->snp_cc_blob < ARRAY_SIZE(blob) ? blob[bi->snp_cc_blob] : "?");
		ev_bool("svsm", bi->svsm_size != 0);
		if (bi->svsm_size) {
			ev_u64("svsm_guest_vmpl", bi->svsm_guest_vmpl);
			ev_u64("svsm_base", bi->svsm_base);
			ev_u64("svsm_size", bi->svsm_size);
			ev_u64("svsm_caa", bi->svsm_caa);
			ev_u64("svsm_max_version", bi->svsm_max_version);
		}
	}
	ev_end();
}

void snp_setup_early(void)
{
	/* No console until the GHCB exists: keep the output until snp_setup_ghcb(). */
	console_hold();
	trap_register(VEC_VC, snp_vc);
}

/*
 * Features this guest would have to implement something for (snp.h): end it before it
 * relies on anything they change, as Linux does (snp_check_features, reason
 * GHCB_SNP_UNSUPPORTED), with the kernel's IDT in place. The termination request needs
 * no GHCB.
 */
/*
 * The firmware's GHCB: at handover the GHCB MSR still holds what the firmware left there,
 * the GPA of the GHCB page it registered (GHCB specification, "GHCB GPA Registration";
 * OVMF registers its BSP's, edk2 OvmfPkg/PlatformPei/AmdSev.c AmdSevEsInitialize) or an
 * MSR protocol value (bits 11:0 not zero). That page is shared: a private access to it
 * is an RMP fault, so it is kept out of use whatever the map says (memory_parse_map
 * holds firmware_hold). Read before the kernel's first MSR protocol request replaces it.
 */
static u64 fw_ghcb_msr;
static struct cc_platform snp;

u64 snp_firmware_ghcb_msr(void)
{
	return fw_ghcb_msr;
}

static void find_firmware_ghcb(void)
{
	fw_ghcb_msr = msr_read(MSR_SEV_GHCB);
	if (!fw_ghcb_msr || fw_ghcb_msr & GHCB_INFO_MASK)
		return;
	snp.firmware_hold_start = fw_ghcb_msr;
	snp.firmware_hold_end = fw_ghcb_msr + PAGE_SIZE;
	snp.firmware_hold_why = "it is the GHCB the firmware registered (a shared page)";
}

void snp_check_features(void)
{
	u64 status = snp_bi ? snp_bi->sev_status : 0, bad = snp_unsupported_features(status);

	find_firmware_ghcb();

	if (bad)
		fatal_reason(EXIT_PLATFORM_FATAL, FC_SNP_FEATURES, "SEV features %#llx in SEV_STATUS "
			     "%#llx need support memaccept does not have", bad, status);
}

/*
 * Make a page of accepted memory a GHCB page (steps 3-6 of docs/snp.md section 2):
 * write back and drop its cache lines while it is still mapped private (lines written
 * with the C-bit must not be written back over the page after the host owns it; Linux
 * does the same before it changes a page's encryption, set_clr_page_flags), rescind its
 * validation, Page State Change to shared (in that order: a validated page must not
 * become shared), map it without the C-bit and clear it. Any CPU may do this for any
 * page; only the CPU that uses it registers it (snp_ghcb_register).
 */
static void ghcb_make_shared(u64 page)
{
	u64 resp;

	for (u64 a = page; a < page + PAGE_SIZE; a += CACHE_LINE)
		__asm__ volatile("clflush (%0)" : : "r"(a) : "memory");
	__asm__ volatile("mfence" : : : "memory");
	if (via_svsm) {
		/* Below VMPL0: the SVSM rescinds it (failures end in validate_range). */
		validate_range(page, page + PAGE_SIZE, false);
	} else {
		bool no_update = false;

		if (snp_pvalidate(page, PVALIDATE_4K, 0, &no_update) || no_update)
			ghcb_fail("could not rescind validation of the GHCB page", page);
	}
	resp = msr_protocol(GHCB_MSR_PSC_REQ | (PSC_OP_SHARED << 52) | (page & ~GHCB_INFO_MASK));
	if ((resp & GHCB_INFO_MASK) != GHCB_MSR_PSC_RESP || (resp >> 32))
		ghcb_fail("Page State Change of the GHCB page to shared failed", resp);
	if (paging_map(page, page + PAGE_SIZE, MAP_SHARED))
		ghcb_fail("no memory to map the GHCB page", page);
	invlpg(page);
	memset((void *)(uintptr_t)page, 0, PAGE_SIZE);
}

/*
 * Steps 7-8 on the calling CPU: register the page (GHCB MSR protocol 0x012; the answer
 * must echo the GFN) and point the GHCB MSR at it. From here this CPU's exits use it.
 */
void snp_ghcb_register(u64 page)
{
	unsigned cpu = smp_cpu_index();
	u64 resp = msr_protocol(GHCB_MSR_REG_GPA_REQ | (page & ~GHCB_INFO_MASK));

	if ((resp & GHCB_INFO_MASK) != GHCB_MSR_REG_GPA_RESP || (resp & ~GHCB_INFO_MASK) != page)
		ghcb_fail("the hypervisor did not register the GHCB", resp);
	ghcb_gpas[cpu] = page;
	msr_write(MSR_SEV_GHCB, page);
	__atomic_store_n(&ghcbs[cpu], (u8 *)(uintptr_t)page, __ATOMIC_RELEASE);
}

void snp_ghcb_prepare(u64 page)
{
	ghcb_make_shared(page);
}

bool snp_ap_creation_offered(void)
{
	return hv_features & GHCB_HV_FT_SNP_AP_CREATION;
}

bool snp_secure_tsc(void)
{
	return secure_tsc;
}

bool snp_below_vmpl0(void)
{
	return !at_vmpl0;
}

/*
 * One AP Creation exit (GHCB spec 4.1.8; see vmsa.h): RAX = the VMSA's SEV features,
 * SW_EXITINFO1 = request | VMPL << 16 | APIC ID << 32 (the VMPL the VMSA is for: 0, or
 * below VMPL0 ours, as Linux vmgexit_ap_control), SW_EXITINFO2 = the VMSA's GPA. The
 * answer (SW_EXITINFO1 and SW_EXITINFO2 as the hypervisor left them) goes to the caller.
 */
void snp_ap_create_exit_raw(u64 request_info1, u64 vmsa_gpa, u64 features, u64 *info1, u64 *info2,
			    bool *valid)
{
	u8 *ghcb = this_ghcb();

	ghcb_clear();
	ghcb_field_set(ghcb, GHCB_RAX, features);
	ghcb_exit(SVM_VMGEXIT_AP_CREATION, request_info1, vmsa_gpa);
	*info1 = *ghcb_field(ghcb, GHCB_SW_EXIT_INFO_1);
	*info2 = *ghcb_field(ghcb, GHCB_SW_EXIT_INFO_2);
	if (valid)
		*valid = ghcb_field_valid(ghcb, GHCB_SW_EXIT_INFO_1) &&
			 (!*info1 || ghcb_field_valid(ghcb, GHCB_SW_EXIT_INFO_2));
}

void snp_ap_create_exit(u32 apic_id, u64 vmsa_gpa, u64 features, u64 *info1, u64 *info2, bool *valid)
{
	snp_ap_create_exit_raw(SNP_AP_CREATE_INFO1_VMPL(SNP_AP_CREATE, snp_guest_vmpl(), apic_id), vmsa_gpa,
			       features, info1, info2, valid);
}

/*
 * AP Destroy (request 2): KVM sev_snp_ap_creation forgets the target's VMSA and kicks
 * it; on its next entry the vCPU has no VMSA and is not run. Linux vmgexit_ap_control
 * sends the VMSA's GPA and SEV features with it as with create; KVM reads neither.
 */
void snp_ap_destroy_exit(u32 apic_id, u64 vmsa_gpa, u64 features, u64 *info1, u64 *info2, bool *valid)
{
	snp_ap_create_exit_raw(SNP_AP_CREATE_INFO1_VMPL(SNP_AP_DESTROY, snp_guest_vmpl(), apic_id), vmsa_gpa,
			       features, info1, info2, valid);
}

/*
 * Under Secure TSC, GUEST_TSC_FREQ is the hardware's and never traps (AMD APM vol. 2,
 * 15.36.18). boot/ read it before ExitBootServices, when an intercepting host's answer
 * would have come back through the firmware's #VC handler looking like the hardware's.
 * Read again now, with memaccept's own #VC handler in place: an intercept raises #VC,
 * which snp_vc refuses (vc_msr_check), and a value that differs from boot/'s is a host
 * that answered the firmware. Either way the clock the report uses is the host's choice:
 * terminate.
 */
static void snp_check_tsc_freq(void)
{
	const struct boot_info *bi = snp_bi;
	u64 mhz;

	if (!secure_tsc || !bi)
		return;
	mhz = msr_read(MSR_GUEST_TSC_FREQ) & 0x3ffff;	/* bits 17:0, MHz (tsc_cal.c) */
	kprintf("snp: Secure TSC: GUEST_TSC_FREQ %llu MHz, TSC_FACTOR %u (0.001 %%): %llu Hz\n", mhz,
		bi->snp_tsc_factor, clock_snp_secure_hz(mhz, bi->snp_tsc_factor));
	if (bi->declared_source == CLOCK_SNP_SECURE_TSC &&
	    bi->declared_hz != clock_snp_secure_hz(mhz, bi->snp_tsc_factor))
		fatal_reason(EXIT_HOST_HOSTILE, FC_HOST_INPUT, "GUEST_TSC_FREQ gave %llu Hz before "
			     "ExitBootServices (through the firmware) and %llu MHz now: the host "
			     "intercepted it", bi->declared_hz, mhz);
}

/*
 * After ExitBootServices the firmware's GHCB is no longer ours: set up our own.
 * 1. Check the hypervisor speaks GHCB protocol 2 and supports SNP (MSR protocol); note
 *    whether it offers AP Creation (feature bit 1), which starting the APs needs.
 * 2. Make the page shared (ghcb_make_shared).
 * 3. Register its address, and use it from then on.
 */
void snp_setup_ghcb(u64 page)
{
	u64 resp = msr_protocol(GHCB_MSR_SEV_INFO_REQ);
	u32 max = (u32)(resp >> 48), min = (u32)((resp >> 32) & 0xffff);

	if ((resp & GHCB_INFO_MASK) != GHCB_MSR_SEV_INFO_RESP || min > GHCB_PROTOCOL_MAX ||
	    max < GHCB_PROTOCOL_MIN)
		ghcb_fail("the hypervisor does not speak GHCB protocol version 2", resp);
	resp = msr_protocol(GHCB_MSR_HV_FT_REQ);
	if ((resp & GHCB_INFO_MASK) != GHCB_MSR_HV_FT_RESP || !((resp >> 12) & GHCB_HV_FT_SNP))
		ghcb_fail("the hypervisor does not support SEV-SNP", resp);
	hv_features = resp >> 12;

	/* Before the first validation (the GHCB page's below): which way validation goes. */
	snp_find_vmpl();

	ghcb_make_shared(page);
	snp_ghcb_register(page);
	console_release();
	kprintf("snp: GHCB at %#llx (protocol %u..%u), C-bit %u, cache eviction after PVALIDATE %s\n",
		page, min, max, (unsigned)__builtin_ctzll(platform->private_pte_bits),
		pvalidate_ops.evict ? "on" : "off (COHERENCY_SFW_NO)");
	if (via_svsm)
		kprintf("snp: below VMPL0 (guest VMPL %u): validating through the SVSM, calling area "
			"%#llx\n", snp_bi->svsm_guest_vmpl, snp_bi->svsm_caa);
	snp_check_tsc_freq();
	report_platform();
}

/*
 * PVALIDATE of one 4 KiB page the firmware called accepted (AMD APM vol. 3, PVALIDATE):
 * rFLAGS.CF set (no_update) means it was validated already; success without it means the
 * probe validated it now. FAIL_INPUT: the page is not private (the RMP has it shared).
 * A page in a 2 MiB RMP entry answers FAIL_SIZEMISMATCH, which does not tell. Below
 * VMPL0 PVALIDATE is not the guest's: no probe.
 */
static int snp_probe_accepted(u64 pa)
{
	bool no_update = false;
	u32 rc;

	if (via_svsm)
		return PROBE_UNKNOWN;
	rc = snp_pvalidate(pa, PVALIDATE_4K, 1, &no_update);
	if (rc == PVALIDATE_OK)
		return no_update ? PROBE_ACCEPTED : PROBE_NOT_ACCEPTED;
	return rc == PVALIDATE_FAIL_INPUT ? PROBE_NOT_ACCEPTED : PROBE_UNKNOWN;
}

/*
 * Type 15 memory page by page (psc.c snp_probe_validate_unit; below VMPL0 svsm.c
 * svsm_probe_validate_unit): the unit is made private as accept makes it, then each page
 * must be validated by this PVALIDATE, not before. A unit with a page someone validated
 * before is kept out of use (-1: the allocator marks it lost): its contents may alias
 * memory in use (the normal path stops the guest here).
 */
static int snp_probe_unaccepted(u64 unit, struct unaccepted_probe *pr)
{
	struct snp_psc_stats ps = { 0 };

	snp_psc_range(unit, unit + UNIT_SIZE, PSC_OP_PRIVATE, &psc_ops, &ps, NULL);
	count_psc(&ps);
	if (via_svsm) {
		struct svsm_pval_stats ss = { 0 };

		svsm_probe_validate_unit(unit, (struct svsm_pval_req *)(this_caa() + SVSM_CAA_BUFFER),
					 &svsm_ops, &ss, pr);
		count_svsm(&ss);
	} else {
		struct snp_pvalidate_stats vs = { 0 };

		snp_probe_validate_unit(unit, &pvalidate_ops, &vs, pr);
		count_pvalidate(&vs);
	}
	if (!pr->pages[PROBE_ACCEPTED])
		return 0;
	kprintf("snp: type 15 memory already validated (%u page(s), first %#llx): a possible "
		"aliasing; the unit at %#llx stays unused\n", pr->pages[PROBE_ACCEPTED],
		pr->first_accepted, unit);
	return -1;
}

static struct cc_platform snp = {
	.name = "snp",
	.accept = snp_accept,
	.probe_accepted = snp_probe_accepted,
	.probe_unaccepted = snp_probe_unaccepted,
	.accept_ahead = snp_accept_ahead,
	.io_out = snp_io_out,
	.io_in = snp_io_in,
	.terminate = snp_terminate,
	.msr_native = snp_msr_native,
	.rdmsr = snp_rdmsr,
	.wrmsr = snp_wrmsr,
	.cpuid = snp_cpuid,
	.counters = counters,
	.ncounters = C_COUNT,
	.probe = &snp_probe,
};

/*
 * bi->snp_cpuid_ebx: CPUID 0x8000001F EBX as boot/ read it before ExitBootServices,
 * through the firmware (which on SNP answers from the CPUID page the PSP checked, not
 * from the host); bi->svsm_*: the SVSM, if the secrets page names one.
 */
const struct cc_platform *snp_platform(const struct boot_info *bi)
{
	u32 ebx = bi->snp_cpuid_ebx;

	snp_bi = bi;
	secure_tsc = bi->sev_status & SEV_STATUS_SNP_SECURE_TSC;
	snp.private_pte_bits = 1ULL << (ebx & CPUID_SEV_EBX_CBIT_MASK);
	pvalidate_ops.evict = ebx & CPUID_SEV_EBX_COHERENCY_SFW_NO ? NULL : evict;
	svsm_ops.evict = pvalidate_ops.evict;
	return &snp;
}
