/* SPDX-License-Identifier: MIT */
/* memaccept: the Intel TDX backend: accept, paravirtual port I/O and HLT, #VE, fatal reports. */
#include "arch/x86/cpu.h"
#include "arch/x86/desc.h"
#include "arch/x86/hooks.h"
#include "arch/x86/msr.h"
#include "arch/x86/probe.h"
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/vc_insn.h"
#include "arch/x86/tdx/tdx.h"
#include "arch/x86/tdx/ve_emul.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "drivers/exit.h"
#include "include/panic.h"
#include "lib/format.h"
#include "lib/string.h"

enum {
	C_ACCEPT,		/* TDG.MEM.PAGE.ACCEPT executions */
	C_ACCEPT_2M,
	C_ACCEPT_4K,
	C_BUSY_RETRIES,
	C_SIZE_MISMATCH,
	C_ALREADY_ACCEPTED,
	C_VMCALL_IO,
	C_VMCALL_HLT,
	C_VMCALL_CPUID,
	C_VMCALL_MSR,
	C_VMCALL_FATAL,
	C_VP_INFO,
	C_VMCALL_INFO,
	C_VM_RD,
	C_VM_WR,
	C_VE,
	C_COUNT,
};

static struct platform_counter counters[C_COUNT] = {
	[C_ACCEPT] = { "tdcall_accept", 0 },
	[C_ACCEPT_2M] = { "accepted_2m", 0 },
	[C_ACCEPT_4K] = { "accepted_4k", 0 },
	[C_BUSY_RETRIES] = { "busy_retries", 0 },
	[C_SIZE_MISMATCH] = { "size_mismatch", 0 },
	[C_ALREADY_ACCEPTED] = { "already_accepted_4k_pages", 0 },
	[C_VMCALL_IO] = { "tdvmcall_io", 0 },
	[C_VMCALL_HLT] = { "tdvmcall_hlt", 0 },
	[C_VMCALL_CPUID] = { "tdvmcall_cpuid", 0 },
	[C_VMCALL_MSR] = { "tdvmcall_msr", 0 },
	[C_VMCALL_FATAL] = { "tdvmcall_report_fatal_error", 0 },
	[C_VP_INFO] = { "tdcall_vp_info", 0 },
	[C_VMCALL_INFO] = { "tdvmcall_get_info", 0 },
	[C_VM_RD] = { "tdcall_vm_rd", 0 },
	[C_VM_WR] = { "tdcall_vm_wr", 0 },
	[C_VE] = { "ve_exceptions", 0 },
};

static u64 shared_bit;
static u32 num_vcpus;

u64 tdx_shared_bit(void)
{
	return shared_bit;
}

u32 tdx_num_vcpus(void)
{
	return num_vcpus;
}

static u32 warnings;

/* The APs call into the TDX backend too (they accept in parallel): see platform_count. */
static void count(unsigned which, u64 n)
{
	platform_count(counters, which, n);
}

/* ------------------------------------------------------------------ TDVMCALL */

/* The VMM's status (R10), or all ones when the TDCALL failed (ve_emul.c tdx_vmcall). */
static u64 tdvmcall(struct tdx_regs *r, u64 subfn)
{
	return tdx_vmcall(tdx_tdcall, r, subfn);
}

static void tdx_io_out(u16 port, u32 val, int size)
{
	struct tdx_regs r = { .r12 = (u64)size, .r13 = TDVMCALL_IO_OUT, .r14 = port, .r15 = val };

	count(C_VMCALL_IO, 1);
	tdvmcall(&r, TDVMCALL_IO);
}

static u32 tdx_io_in(u16 port, int size)
{
	struct tdx_regs r = { .r12 = (u64)size, .r13 = TDVMCALL_IO_IN, .r14 = port };
	u64 status;

	count(C_VMCALL_IO, 1);
	status = tdvmcall(&r, TDVMCALL_IO);
	/* Refused: all ones; answered: only the operand's bytes (tdx_io_in_value). */
	return tdx_io_in_value(status, r.r11, size);
}

/*
 * Instruction.RDMSR / WRMSR (GHCI; Linux arch/x86/coco/tdx/tdx.c read_msr, write_msr):
 * R12 the MSR, R13 the value to write, R11 the value read. KVM answers what it emulates
 * for a TD (arch/x86/kvm/vmx/tdx.c tdx_has_emulated_msr: APIC_BASE, the x2APIC registers
 * the CPU does not virtualise, ...) and INVALID_OPERAND for the rest and for writes to
 * APIC_BASE and EFER (tdx_is_read_only_msr): false here.
 */
static bool tdx_rdmsr(u32 msr, u64 *val)
{
	struct tdx_regs r = { .r12 = msr };

	count(C_VMCALL_MSR, 1);
	if (tdvmcall(&r, TDVMCALL_RDMSR))
		return false;
	*val = r.r11;
	return true;
}

static bool tdx_wrmsr(u32 msr, u64 val)
{
	struct tdx_regs r = { .r12 = msr, .r13 = val };

	count(C_VMCALL_MSR, 1);
	return tdvmcall(&r, TDVMCALL_WRMSR) == 0;
}

/*
 * The MSRs memaccept touches that the TDX module lets through without a #VE (module 1.5,
 * include/auto_gen/msr_config_lookup.c): PAT, the FS and GS bases, and EFER for reading
 * (every EFER write exits, and any change but SCE is a #VE: td_msr_access.c
 * wrmsr_ia32_efer). IA32_APIC_BASE and the x2APIC ID (0x802, native only under
 * TD_CTLS.ENUM_TOPOLOGY) are not: they go to the VMM.
 */
static bool tdx_msr_native(u32 msr, bool write)
{
	switch (msr) {
	case MSR_PAT:
	case MSR_FS_BASE:
	case MSR_GS_BASE:
		return true;
	case MSR_EFER:
		return !write;
	default:
		return false;
	}
}

static void tdx_halt(void)
{
	/* R12 = 1: interrupts are blocked, so the VMM must not wake us for one. */
	struct tdx_regs r = { .r12 = 1 };

	count(C_VMCALL_HLT, 1);
	tdvmcall(&r, TDVMCALL_HLT);
}

/*
 * ReportFatalError: the host learns why, and stops the TD right here (QEMU raises a
 * guest-panic event and ends the VM: target/i386/kvm/tdx.c tdx_handle_report_fatal_error).
 * The reason goes in R12 bits 31:16 and as text in the message registers, so that
 * QEMU's log and its GUEST_PANICKED event say why (the encoding: tdx_fatal_regs).
 */
static __noreturn void tdx_terminate(u32 reason)
{
	char msg[TDX_FATAL_MSG_LEN + 1];
	struct tdx_regs r;

	format_buf(msg, sizeof(msg), "memaccept %s/%d: %s",
		   fatal_condition_name(FATAL_REASON_CONDITION(reason)), FATAL_REASON_CODE(reason),
		   kernel_exit_message());
	tdx_fatal_regs(&r, reason, msg);
	count(C_VMCALL_FATAL, 1);
	tdx_tdcall(&r);
	/* A VMM that resumes a TD after its fatal report gets nothing more from it. */
	for (;;)
		tdx_halt();
}

/* ------------------------------------------------------------------ accept */

static u64 page_accept(u64 gpa_level)
{
	struct tdx_regs r = { .rax = TDG_MEM_PAGE_ACCEPT, .rcx = gpa_level };

	return tdx_tdcall(&r);
}

static void zero(u64 start, u64 len)
{
	memset((void *)(uintptr_t)start, 0, len);
}

static const char *const level_names[TDX_ACCEPT_MAX_LEVEL + 1] = { "4K", "2M" };

static void accept_fatal(u32 condition, const char *what, u64 status, u64 gpa, unsigned level)
{
	fatal_reason(EXIT_PLATFORM_FATAL, condition, "%s: status %#llx for GPA %#llx at level %s",
		     what, status, gpa, level_names[level]);
}

static void accept_warn(const char *what, u64 gpa, unsigned level)
{
	/* Say it a few times, then only count it. */
	if (__atomic_fetch_add(&warnings, 1, __ATOMIC_RELAXED) < 8)
		kprintf("tdx: %s: GPA %#llx (%s)\n", what, gpa, level_names[level]);
}

static const struct tdx_accept_ops accept_ops = {
	.page_accept = page_accept,
	.zero = zero,
	.fatal = accept_fatal,
	.warn = accept_warn,
	.now_ns = tsc_now_ns,
	.relax = cpu_relax,
};

static void count_accept(const struct tdx_accept_stats *st_)
{
	const struct tdx_accept_stats st = *st_;

	count(C_ACCEPT, st.tdcalls);
	count(C_ACCEPT_2M, st.accepted[TDX_LEVEL_2M]);
	count(C_ACCEPT_4K, st.accepted[TDX_LEVEL_4K]);
	count(C_BUSY_RETRIES, st.busy_retries);
	count(C_SIZE_MISMATCH, st.size_mismatch);
	count(C_ALREADY_ACCEPTED, st.already_accepted);
}

static int tdx_accept(u64 start, u64 end)
{
	struct tdx_accept_stats st = { 0 };

	tdx_accept_range(start, end, &accept_ops, &st);
	count_accept(&st);
	return 0;
}

/* ------------------------------------------------------------------ workload=probe */

/* Where the probe's timed accepts report (one CPU probes, the others do not use it). */
static struct probe_sink *probe_sink;

/* TDG.MEM.PAGE.ACCEPT timed, filed by level and answer; the status goes on unchanged. */
static u64 timed_page_accept(u64 gpa_level)
{
	u64 t = tsc_now_ns(), status = page_accept(gpa_level);
	u32 code = TDX_STATUS_CODE(status);

	t = tsc_now_ns() - t;
	if ((gpa_level & TDX_ACCEPT_LEVEL_MASK) == TDX_LEVEL_4K) {
		if (status == TDX_SUCCESS)
			probe_sink->add(probe_sink, PR_TDX_ACCEPT_4K, t, 1);
	} else if (status == TDX_SUCCESS) {
		probe_sink->add(probe_sink, PR_TDX_ACCEPT_2M, t, 1);
	} else if (code == TDX_PAGE_SIZE_MISMATCH) {
		probe_sink->add(probe_sink, PR_TDX_ACCEPT_2M_REFUSED, t, 1);
	}
	return status;
}

static const struct tdx_accept_ops probe_ops = {
	.page_accept = timed_page_accept,
	.zero = zero,
	.fatal = accept_fatal,
	.warn = accept_warn,
	.now_ns = tsc_now_ns,
	.relax = cpu_relax,
};

/* Every 8th probe unit is accepted page by page: 4 KiB samples on a host that maps 2 MiB. */
#define PROBE_PAGEWISE(k) ((k) % 8 == 7)

static int tdx_probe_unit(u64 unit, struct probe_sink *s, unsigned k, bool *backend)
{
	struct tdx_accept_stats st = { 0 };

	probe_sink = s;
	*backend = !PROBE_PAGEWISE(k);
	if (*backend) {
		tdx_accept_range(unit, unit + UNIT_SIZE, &probe_ops, &st);
	} else {
		for (u64 a = unit; a < unit + UNIT_SIZE; a += PAGE_SIZE)
			tdx_accept_range(a, a + PAGE_SIZE, &probe_ops, &st);
	}
	probe_sink = NULL;
	count_accept(&st);
	return 0;
}

static void tdx_probe_calls(struct probe_sink *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct tdx_regs r = { .rax = TDG_VP_INFO };
		u64 t = tsc_now_ns(), status = tdx_tdcall(&r);

		t = tsc_now_ns() - t;
		count(C_VP_INFO, 1);
		if (!status)
			s->add(s, PR_TDX_VP_INFO, t, 1);
	}
	for (unsigned i = 0; i < n; i++) {
		struct tdx_regs r = { .r12 = 0 };
		u64 t = tsc_now_ns(), status = tdvmcall(&r, TDVMCALL_GET_TD_VM_CALL_INFO);

		t = tsc_now_ns() - t;
		count(C_VMCALL_INFO, 1);
		if (!status)
			s->add(s, PR_TDX_VMCALL_NOOP, t, 1);
	}
}

/* Either 2 MiB answer (the host's page size decides which) and 4 KiB accepts. */
static bool tdx_probe_satisfied(struct probe_sink *s, u64 min)
{
	return s->count(s, PR_TDX_ACCEPT_2M) + s->count(s, PR_TDX_ACCEPT_2M_REFUSED) >= min &&
	       s->count(s, PR_TDX_ACCEPT_4K) >= min;
}

static const struct platform_probe tdx_probe = {
	.calls = tdx_probe_calls,
	.accept_unit = tdx_probe_unit,
	.satisfied = tdx_probe_satisfied,
	.prims = (1ULL << PR_TDX_ACCEPT_4K) | (1ULL << PR_TDX_ACCEPT_2M) |
		 (1ULL << PR_TDX_ACCEPT_2M_REFUSED) | (1ULL << PR_TDX_VP_INFO) | (1ULL << PR_TDX_VMCALL_NOOP),
};

/* ------------------------------------------------------------------ #VE */

static const char *ve_reason_name(u32 reason)
{
	switch (reason) {
	case EXIT_REASON_CPUID: return "CPUID";
	case EXIT_REASON_HLT: return "HLT";
	case EXIT_REASON_INVD: return "INVD";
	case EXIT_REASON_VMCALL: return "VMCALL";
	case EXIT_REASON_CR_ACCESS: return "a control register write";
	case EXIT_REASON_WBINVD: return "WBINVD";
	case EXIT_REASON_MONITOR: return "MONITOR";
	case EXIT_REASON_MWAIT: return "MWAIT";
	case EXIT_REASON_EPT_VIOLATION: return "an access to shared memory (MMIO)";
	case EXIT_REASON_IO: return "string port I/O";
	case EXIT_REASON_MSR_READ: return "RDMSR";
	case EXIT_REASON_MSR_WRITE: return "WRMSR";
	default: return "an exit memaccept does not emulate";
	}
}

/* The #VE emulation's TDCALLs (ve_emul.c), counted by the TDVMCALL they make. */
static u64 ve_tdcall(struct tdx_regs *r)
{
	switch (r->r11) {
	case TDVMCALL_IO: count(C_VMCALL_IO, 1); break;
	case TDVMCALL_HLT: count(C_VMCALL_HLT, 1); break;
	case TDVMCALL_CPUID: count(C_VMCALL_CPUID, 1); break;
	case TDVMCALL_RDMSR: case TDVMCALL_WRMSR: count(C_VMCALL_MSR, 1); break;
	}
	return tdx_tdcall(r);
}

/*
 * A #VE reports what the TDX module would otherwise have turned into a VM exit (module
 * 1.5, tdx_td_dispatcher.c): HLT, port I/O, CPUID and MSRs outside the module's own
 * sets, VMCALL, WBINVD, INVD, MONITOR and MWAIT (where the TD's CPUID lacks MONITOR),
 * some CR writes, and EPT violations on shared memory (MMIO). memaccept routes HLT, port
 * I/O and its MSRs to the VMM itself (struct cc_platform), but the handler emulates each
 * of those classes as Linux virt_exception_kernel does, so an instruction that traps
 * anyway is served, not fatal. What memaccept never does (MMIO, string I/O, WBINVD,
 * INVD, VMCALL, MONITOR, MWAIT, CR writes the module refuses) ends the guest with its
 * name. The instruction length comes from the module (VEINFO R10; skip). An EPT
 * violation on private memory inside the bitmap's span is a touch of memory that was
 * never accepted (possible only when pending-page #VEs are on).
 */
static bool tdx_ve(struct trap_frame *f)
{
	struct tdx_regs r = { .rax = TDG_VP_VEINFO_GET };
	u64 status = tdx_tdcall(&r);

	count(C_VE, 1);
	/*
	 * NO_VALID_VE_INFO: vector 20 arrived without a #VE behind it (the module marks its
	 * #VE information invalid once the guest read it: Linux arch/x86/coco/tdx/tdx.c
	 * tdx_get_ve_info). Nothing the guest did explains it: stop.
	 */
	if (TDX_STATUS_CODE(status) == TDX_NO_VALID_VE_INFO)
		fatal_reason(EXIT_PLATFORM_FATAL, FC_UNEXPECTED_EXCEPTION,
			     "vector 20 at RIP %#llx, but TDG.VP.VEINFO.GET says no #VE is pending "
			     "(TDX_NO_VALID_VE_INFO, status %#llx)", f->rip, status);
	if (status)
		fatal_reason(EXIT_PLATFORM_FATAL, FC_UNEXPECTED_EXCEPTION,
			     "#VE at RIP %#llx, but TDG.VP.VEINFO.GET failed (status %#llx)", f->rip, status);
	u32 reason = (u32)r.rcx, len = (u32)r.r10;
	u64 qual = r.rdx, gla = r.r8, gpa = r.r9;
	const char *what = ve_reason_name(reason);
	const struct tdx_ve_info ve = { reason, qual, len };
	struct tdx_ve_regs g = { f->rip, f->rax, f->rbx, f->rcx, f->rdx };
	const u8 *ip = (const u8 *)(uintptr_t)f->rip;

	/* The served classes are checked against the bytes at RIP before anything is emulated. */
	switch (tdx_ve_emulate(&ve, &g, ip, len, ve_tdcall)) {
	case TDX_VE_DONE:
		f->rip = g.rip, f->rax = g.rax, f->rbx = g.rbx, f->rcx = g.rcx, f->rdx = g.rdx;
		return true;
	case TDX_VE_BAD_LENGTH:
		fatal_reason(EXIT_PLATFORM_FATAL, FC_UNEXPECTED_EXCEPTION,
			     "#VE for exit reason %u at RIP %#llx reports instruction length %u: it "
			     "cannot be skipped", reason, f->rip, len);
	case TDX_VE_MISMATCH:
		fatal_reason(EXIT_HOST_HOSTILE, FC_HOST_INPUT, "#VE for exit reason %u (%s), length "
			     "%u, qualification %#llx at RIP %#llx (bytes %02x %02x %02x): not the "
			     "instruction there", reason, what, len, qual, f->rip, ip[0], ip[1], ip[2]);
	case TDX_VE_MSR_REFUSED:
		fatal_reason(EXIT_PLATFORM_FATAL, FC_MSR, "%s %#x at RIP %#llx raised #VE and the "
			     "VMM refused it", reason == EXIT_REASON_MSR_READ ? "RDMSR" : "WRMSR",
			     (u32)f->rcx, f->rip);
	case TDX_VE_NOT_SERVED:
		break;
	}
	/* Shared: MMIO, which memaccept does not do. Private: a page not accepted. */
	if (reason == EXIT_REASON_EPT_VIOLATION && !(gpa & shared_bit)) {
		arch_check_unaccepted(f, gpa, "#VE (EPT violation)");
		what = "an access to a private page that is not accepted";
	}
	kprintf("tdx: unexpected #VE for %s: exit reason %u, qualification %#llx, GLA %#llx, GPA "
		"%#llx, RIP %#llx\n", what, reason, qual, gla, gpa, f->rip);
	trap_dump(f);
	ev_begin("unexpected_ve");
	ev_u64("exit_reason", reason);
	ev_str("what", what);
	ev_u64("qualification", qual);
	ev_u64("gla", gla);
	ev_u64("gpa", gpa);
	ev_u64("rip", f->rip);
	ev_end();
	kernel_exit_reason(EXIT_PLATFORM_FATAL, FC_UNEXPECTED_EXCEPTION);
}

/* ------------------------------------------------------------------ setup */

void tdx_register_traps(void)
{
	trap_register(VEC_VE, tdx_ve);
}

/* TD-scope metadata: the value, or 0 where the module has no such field (its R8 then). */
static u64 vm_rd(u64 field)
{
	struct tdx_regs r = { .rax = TDG_VM_RD, .rdx = field };

	count(C_VM_RD, 1);
	return tdx_tdcall(&r) ? 0 : r.r8;
}

static u64 vm_wr(u64 field, u64 value, u64 mask)
{
	struct tdx_regs r = { .rax = TDG_VM_WR, .rdx = field, .r8 = value, .r9 = mask };

	count(C_VM_WR, 1);
	return tdx_tdcall(&r);
}

void tdx_setup(void)
{
	struct tdx_regs r = { .rax = TDG_VP_INFO };
	u64 status = tdx_tdcall(&r);
	bool warn_only;
	const char *problem;

	count(C_VP_INFO, 1);
	if (status)
		fatal_reason(EXIT_PLATFORM_FATAL, FC_ACCEPT_STATUS, "TDG.VP.INFO failed (status %#llx)",
			     status);
	unsigned gpaw = r.rcx & TDX_INFO_GPAW_MASK;
	bool sept_ve_disable = r.rdx & TDX_ATTR_SEPT_VE_DISABLE;

	/* GPA bit (width - 1) selects shared memory (GHCI: "GPA.SHARED"). */
	shared_bit = gpaw ? 1ULL << (gpaw - 1) : 0;
	num_vcpus = (u32)r.r8;
	kprintf("tdx: GPA width %u (shared bit %u), attributes %#llx, %u of %u vCPUs\n", gpaw,
		gpaw - 1, r.rdx, (u32)r.r8, (u32)(r.r8 >> 32));
	ev_begin("tdx");
	ev_u64("gpa_width", gpaw);
	ev_u64("shared_bit", gpaw ? gpaw - 1 : 0);
	ev_u64("attributes", r.rdx);
	ev_bool("sept_ve_disable", sept_ve_disable);
	ev_bool("debug", r.rdx & TDX_ATTR_DEBUG);
	ev_u64("num_vcpus", (u32)r.r8);
	ev_u64("max_vcpus", (u32)(r.r8 >> 32));

	/* Pending-page #VEs: off, or turned off here, or (debug TD) a warning. */
	u64 config = vm_rd(TDCS_CONFIG_FLAGS), attributes = r.rdx;
	bool flexible = config & TDCS_CONFIG_FLEXIBLE_PENDING_VE;
	u64 ctls = flexible ? vm_rd(TDCS_TD_CTLS) : 0;
	enum tdx_ve_action act = tdx_pending_ve_action(attributes, config, ctls);

	status = 0;
	if (act == TDX_VE_TURN_OFF) {
		status = vm_wr(TDCS_TD_CTLS, TD_CTLS_PENDING_VE_DISABLE, TD_CTLS_PENDING_VE_DISABLE);
		ctls = vm_rd(TDCS_TD_CTLS);
	}
	ev_u64("config_flags", config);
	ev_bool("flexible_pending_ve", flexible);
	ev_u64("td_ctls", ctls);
	ev_bool("pending_ve_turned_off", act == TDX_VE_TURN_OFF);
	ev_end();
	problem = tdx_attributes_problem(attributes, &warn_only);
	switch (act) {
	case TDX_VE_OFF:
		break;
	case TDX_VE_TURN_OFF:
		if (status || !(ctls & TD_CTLS_PENDING_VE_DISABLE))
			fatal_reason(EXIT_PLATFORM_FATAL, FC_TD_ATTRIBUTES, "TDG.VM.WR did not turn "
				     "pending-page #VEs off (status %#llx, TD_CTLS %#llx)", status, ctls);
		kprintf("tdx: pending-page #VEs turned off (TD_CTLS.PENDING_VE_DISABLE)\n");
		break;
	case TDX_VE_WARN:
		kprintf("tdx: WARNING: %s; allowed because this is a debug TD\n",
			flexible ? "pending-page #VEs are on (TD_CTLS); left on" : problem);
		break;
	case TDX_VE_FATAL:
		fatal_reason(EXIT_HOST_HOSTILE, FC_TD_ATTRIBUTES, "%s (attributes %#llx)", problem, attributes);
	}
}

/*
 * TDG.MEM.PAGE.ACCEPT of one 4 KiB page the firmware called accepted: the module answers
 * TDX_PAGE_ALREADY_ACCEPTED (a warning: nothing changes) for a mapped page, and accepts
 * (zeroes) a pending one (TDX module ABI, TDG.MEM.PAGE.ACCEPT; tdg_mem_page_accept.c).
 */
static int tdx_probe_accepted(u64 pa)
{
	u64 status = page_accept(pa | TDX_LEVEL_4K);

	if (TDX_STATUS_CODE(status) == TDX_PAGE_ALREADY_ACCEPTED)
		return PROBE_ACCEPTED;
	return TDX_STATUS_CODE(status) == TDX_SUCCESS ? PROBE_NOT_ACCEPTED : PROBE_UNKNOWN;
}

/* Type 15 memory page by page: each page must still be pending (tdx_probe_unaccepted_unit). */
static int tdx_probe_unaccepted(u64 unit, struct unaccepted_probe *pr)
{
	struct tdx_accept_stats st = { 0 };

	tdx_probe_unaccepted_unit(unit, &accept_ops, &st, pr);
	count_accept(&st);
	return 0;
}

static const struct cc_platform tdx = {
	.name = "tdx",
	.accept = tdx_accept,
	.probe_accepted = tdx_probe_accepted,
	.probe_unaccepted = tdx_probe_unaccepted,
	.io_out = tdx_io_out,
	.io_in = tdx_io_in,
	.terminate = tdx_terminate,
	.halt = tdx_halt,
	.msr_native = tdx_msr_native,
	.rdmsr = tdx_rdmsr,
	.wrmsr = tdx_wrmsr,
	.firmware_hold_start = TDVF_SEC_PAGE_TABLES,
	.firmware_hold_end = TDVF_SEC_PAGE_TABLES + TDVF_SEC_PAGE_TABLES_SIZE,
	.firmware_hold_why = "TDVF before edk2-stable202411 runs its waiting APs on page tables there",
	.counters = counters,
	.ncounters = C_COUNT,
	.probe = &tdx_probe,
};

const struct cc_platform *tdx_platform(void)
{
	return &tdx;
}
