/* SPDX-License-Identifier: MIT */
/* memaccept (test image): emulator core: trap dispatch, page model, counters, fault injection. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu/decode.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu/tdvf.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/platform.h"
#include "arch/x86/sev/snp.h"
#include "arch/x86/smp.h"
#include "arch/x86/tdx/tdx.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "drivers/exit.h"
#include "include/panic.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "mm/early.h"

struct emu_state emu;

static void emu_count_locked(const char *name);

#define MAX_COUNTERS 48

static struct {
	const char *name;
	u64 count;
} counters[MAX_COUNTERS];
static unsigned ncounters;
/* Several vCPUs run the emulator at once (they accept memory in parallel). */
static struct spinlock counters_lock, state_lock;

unsigned emu_cpu(void)
{
	unsigned c = smp_cpu_index();

	return c < MAX_CPUS ? c : 0;
}

void emu_lock(void)
{
	spin_lock(&state_lock);
}

void emu_unlock(void)
{
	spin_unlock(&state_lock);
}

void emu_count(const char *name)
{
	spin_lock(&counters_lock);
	emu_count_locked(name);
	spin_unlock(&counters_lock);
}

static void emu_count_locked(const char *name)
{
	for (unsigned i = 0; i < ncounters; i++) {
		/* Names are string literals: comparing pointers first is the common case. */
		if (counters[i].name == name || strcmp(counters[i].name, name) == 0) {
			counters[i].count++;
			return;
		}
	}
	if (ncounters < MAX_COUNTERS) {
		counters[ncounters].name = name;
		counters[ncounters++].count = 1;
	}
}

struct emu_vcpu *emu_self(void)
{
	struct cpuid_regs r;

	/* CPUID leaf 1 EBX[31:24]: the initial APIC ID (Intel SDM vol. 2A CPUID; AMD APM vol. 3 E.3.2). */
	cpuid_raw(1, 0, &r);
	return &emu.vcpu[r.ebx >> 24];
}

/*
 * SNP: one lock around every emulated instruction (the RMP and page model, faults, AP
 * Creation). Recursive for its holder: the emulator's own console output (kprintf before it stops
 * the guest) goes through the guest's console and GHCB, so back into the emulator.
 */
static struct spinlock big_lock;
static u32 big_lock_owner;	/* APIC ID + 1 of the holder, 0 = free */
static u32 big_lock_depth;

void emu_snp_lock(void)
{
	struct cpuid_regs r;
	u32 me;

	cpuid_raw(1, 0, &r);
	me = (r.ebx >> 24) + 1;
	if (__atomic_load_n(&big_lock_owner, __ATOMIC_RELAXED) == me) {
		big_lock_depth++;
		return;
	}
	spin_lock(&big_lock);
	__atomic_store_n(&big_lock_owner, me, __ATOMIC_RELAXED);
	big_lock_depth = 1;
}

void emu_snp_unlock(void)
{
	if (--big_lock_depth)
		return;
	__atomic_store_n(&big_lock_owner, 0, __ATOMIC_RELAXED);
	spin_unlock(&big_lock);
}

/* Release the lock if this vCPU holds it (the host is about to stop the guest). */
void emu_unlock_if_mine(void)
{
	struct cpuid_regs r;

	cpuid_raw(1, 0, &r);
	if (__atomic_load_n(&big_lock_owner, __ATOMIC_RELAXED) == (r.ebx >> 24) + 1) {
		big_lock_depth = 1;
		emu_snp_unlock();
	}
}

u32 emu_mode(void)
{
	return emu.mode;
}

/* ------------------------------------------------------------------ before ExitBootServices */

void boot_emulator_select(struct boot_info *bi)
{
	char err[160];

	/* Parsed once, here: the SNP opt-in stand-in uses the faults before ExitBootServices. */
	if (!emu_faults_parse(bi->config.emu_fault, &emu.faults, err, sizeof(err)))
		kprintf("%s; no faults injected\n", err);
	emu.host = bi->config.emu_host;
	emu.bi = bi;
	if (bi->config.platform == PLAT_TDX_EMU)
		emu.mode = EMU_TDX;
	else if (bi->config.platform == PLAT_SNP_EMU)
		emu.mode = EMU_SNP;
	else
		emu.mode = EMU_OBSERVE;
	if (emu.mode == EMU_SNP)
		emu.svsm = bi->config.emu_svsm;
	emu.guest_vmpl = emu.svsm == EMU_SVSM_NONE ? 0 : bi->config.emu_svsm_vmpl == 2 ? 2 : 1;
}

bool emu_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	if (emu.mode == EMU_TDX)
		return emu_tdx_cpuid(leaf, subleaf, r);
	/*
	 * On SNP hardware CPUID raises #VC, which the kernel can serve only through its GHCB:
	 * after ExitBootServices, guest code must not run it (the #VC path asks the emulated
	 * hypervisor directly). The trap cannot happen under QEMU, so the emulator says so.
	 */
	if (emu.mode == EMU_SNP && emu.installed && emu.host_side[emu_cpu()])
		return false;	/* the emulated host's own code (AP start-up): the real CPU's answer */
	if (emu.mode == EMU_SNP && emu.installed)
		emu_host_stops_guest(leaf, "CPUID after ExitBootServices on SNP: real "
				     "hardware raises #VC here; read CPU facts in boot/");
	if (emu.mode == EMU_SNP)
		return emu_snp_cpuid(leaf, subleaf, r);
	return false;
}

/* The values an emulated VMM returns for CPUID (TDVMCALL or GHCB exit), any time. */
void emu_cpuid_values(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	bool done = emu.mode == EMU_TDX ? emu_tdx_cpuid(leaf, subleaf, r)
		  : emu.mode == EMU_SNP ? emu_snp_cpuid(leaf, subleaf, r) : false;

	if (!done)
		cpuid_raw(leaf, subleaf, r);
}

/* The SEV MSRs as an SNP guest sees them (see emu_hooks.h for why they do not trap). */
bool emu_rdmsr(u32 msr, u64 *val)
{
	if (emu.mode != EMU_SNP || (msr != MSR_SEV_GHCB && msr != MSR_SEV_STATUS))
		return false;
	emu_count("rdmsr");
	/* SEV_STATUS (AMD APM vol. 2, 15.34.10): SEV, SEV-ES and SEV-SNP active. */
	*val = msr == MSR_SEV_STATUS ? EMU_SEV_STATUS : emu_self()->ghcb_msr;
	return true;
}

bool emu_wrmsr(u32 msr, u64 val)
{
	if (emu.mode != EMU_SNP || (msr != MSR_SEV_GHCB && msr != MSR_SEV_STATUS))
		return false;
	emu_count("wrmsr");
	if (msr == MSR_SEV_GHCB)
		emu_self()->ghcb_msr = val;
	return true;	/* SEV_STATUS is read-only: the write changes nothing */
}

/* ------------------------------------------------------------------ trap dispatch */

static struct emu_decoded decode_at(u64 rip)
{
	/* Our own code: mapped, and at least 4 bytes follow any instruction we emit. */
	return emu_decode((const u8 *)(uintptr_t)rip, 4);
}

static bool on_ud(struct trap_frame *f)
{
	struct emu_decoded d = decode_at(f->rip);
	bool snp = emu.mode == EMU_SNP;

	/* SNP: one emulated instruction at a time, whichever vCPU it comes from. */
	if (snp)
		emu_snp_lock();
	emu_count("ud_traps");
	/* From here until the return, port I/O is the emulated host's, not the guest's. */
	emu.host_side[emu_cpu()]++;
	if (d.insn == INSN_TDCALL && emu.mode == EMU_TDX)
		emu_tdx_tdcall(f);
	else if (d.insn == INSN_PVALIDATE && emu.mode == EMU_SNP)
		emu_snp_pvalidate(f);
	else if (d.insn == INSN_VMGEXIT && emu.mode == EMU_SNP)
		emu_snp_vmgexit(f);
	else if (d.insn == INSN_RMPADJUST && emu.mode == EMU_SNP)
		emu_snp_rmpadjust(f);
	else
		d.len = 0;
	emu.host_side[emu_cpu()]--;
	if (snp)
		emu_snp_unlock();
	if (!d.len)
		return false;	/* a real #UD: the fatal exception report takes it */
	f->rip += d.len;
	return true;
}

/*
 * IN/OUT in a TD raise #VE, which the guest must turn into TDVMCALL<Instruction.IO>
 * (Linux arch/x86/coco/tdx/tdx.c handle_io); in an SEV-ES/SNP guest they raise #VC with
 * error code IOIO, 0x7B (AMD APM vol. 2, "#VC Exception"; Linux sev vc_handle_ioio).
 * Under TCG they simply run, so the emulator
 * delivers the exception itself, once the kernel's IDT is loaded (before that, the
 * firmware's own #VE/#VC handlers serve the boot loader's console). With no handler
 * registered, a real guest would take the exception, try to report it on the console,
 * take it again, and die without a word reaching the host: the emulated host says so
 * and stops the VM.
 */
static const u8 in_out_bytes[2][3] = {
	/* what a handler decoding the instruction at RIP finds: OUT DX,AL/AX/EAX; IN the same */
	[0] = { 0xee, 0x66, 0xef }, [1] = { 0xec, 0x66, 0xed },
};

bool emu_guest_port_io(u16 port, int size, bool in, u32 *val)
{
	unsigned vector = emu.mode == EMU_TDX ? VEC_VE : VEC_VC;

	if ((emu.mode != EMU_TDX && emu.mode != EMU_SNP) || emu.host_side[emu_cpu()] || !idt_loaded())
		return false;
	emu_count(emu.mode == EMU_TDX ? "port_io_ve" : "port_io_vc");
	if (!trap_has_handler(vector))
		emu_host_stops_guest(port, emu.mode == EMU_TDX
			? "port I/O raised #VE with no #VE handler in the kernel's IDT: a real TD dies "
			  "here without a word reaching the host"
			: "port I/O raised #VC with no #VC handler in the kernel's IDT: a real SNP guest "
			  "dies here without a word reaching the host");
	u64 mask = size == 4 ? 0xffffffffULL : (1ULL << (8 * size)) - 1;

	if (emu.mode == EMU_TDX) {
		/* The #VE information TDG.VP.VEINFO.GET returns for an I/O exit (Intel SDM vol.
		 * 3C, table 28-5); length 0 because INT 20 already points past itself. */
		u64 rax = in ? 0 : (*val & mask);
		u64 qual = (u64)(size - 1) | (in ? IO_QUAL_IN : 0) | ((u64)port << 16);

		emu_stage_ve(EXIT_REASON_IO, qual, 0, 0, 0);
		__asm__ volatile("int $20" : "+a"(rax) : : "memory");
		if (in)
			*val = (u32)(rax & mask);
		return true;
	}
	/* SNP: the frame a #VC for this IN/OUT would push, handed to the handlers. */
	struct trap_frame f;

	memset(&f, 0, sizeof(f));
	f.vector = VEC_VC;
	f.error_code = SVM_EXIT_IOIO;
	f.rax = in ? 0 : (*val & mask);
	f.rdx = port;
	f.rip = (u64)(uintptr_t)&in_out_bytes[in][size == 1 ? 0 : 1];
	if (size == 4)
		f.rip++;	/* no operand-size prefix: EAX */
	trap_dispatch(&f);
	if (in)
		*val = (u32)(f.rax & mask);
	return true;
}

/*
 * INIT and STARTUP IPIs to an
 * SNP guest's vCPU: the host cannot load a start address into a vCPU whose state is
 * encrypted, so a real SNP guest starts its APs with AP Creation and a VMSA (GHCB spec
 * 4.1.8); what an INIT-SIPI does to an SNP vCPU under KVM is not modelled. The emulator
 * stops the VM rather than let QEMU start the vCPU in real mode at the guest's
 * trampoline, which no SNP host would do. The emulator's own INIT-SIPI (its VMRUN
 * stand-in, host side) is allowed.
 */
void emu_snp_guest_ipi(u32 dest, bool init_or_startup)
{
	if (emu.mode != EMU_SNP || emu.host_side[emu_cpu()] || !init_or_startup)
		return;
	emu_count("guest_init_sipi");
	emu_host_stops_guest(dest, "INIT or STARTUP IPI to a vCPU of an SNP guest: its APs start "
			     "with AP Creation and a VMSA");
}

static const char *host_name(void)
{
	return emu.host == EMU_HOST_HUGE ? "huge" : "kvm";
}

static const char *mode_name(void)
{
	static const char *const names[] = { "off", "observe", "tdx", "snp" };

	return names[emu.mode];
}

void emu_install(void)
{
	trap_register(VEC_UD, on_ud);
	emu.installed = true;
}

void emu_announce(void)
{
	kprintf("emu: platform emulator in %s mode, host %s, %u fault(s) armed\n", mode_name(),
		host_name(), emu.faults.n);
}

/* ------------------------------------------------------------------ page model */

void emu_setup_model(const struct memmap *m)
{
	u64 end = 0;

	for (unsigned i = 0; i < m->nranges; i++)
		if (emu_model_ram_kind(m->ranges[i].kind))
			end = MAX(end, m->ranges[i].end);
	end = MIN(end, EMU_MODEL_LIMIT);
	/*
	 * emu_host=kvm: today's KVM maps TDX private memory in 4 KiB pages and gives SNP
	 * private memory 4 KiB RMP entries; emu_host=huge backs wholly pending units with
	 * 2 MiB pages.
	 */
	emu_model_init(&emu.model, m, (u8 *)(uintptr_t)early_alloc(end >> PAGE_SHIFT, PAGE_SIZE), end,
		       &emu.faults, emu.host == EMU_HOST_HUGE);
	kprintf("emu: page model covers %llu MiB (%llu KiB of state)\n", end >> 20,
		end >> PAGE_SHIFT >> 10);
	/* A TD's APs wait in the firmware's mailbox loop before the OS runs. */
	if (emu.mode == EMU_TDX)
		emu_tdvf_start_aps();
	if (emu.mode == EMU_SNP)
		emu_snp_reserve_vmrun_stacks();
}

/*
 * The emulated host ends the VM. A real one does not hand the guest's reason to its own
 * exit status (QEMU: a guest panic or a system-event exit ends or pauses the VM, and
 * QEMU's status is its own), so neither does the emulator: the VM always ends with
 * EXIT_HOST_STOPPED, and a test reads memaccept's verdict from the `exit` event the
 * guest printed before it asked to be stopped. host_code is what the host was told
 * (R12, a GHCB reason code, a port), printed for the log.
 */
__noreturn void emu_host_stops_guest(u64 host_code, const char *why)
{
	/* Another vCPU may wait for the emulator while it holds the console. */
	emu_unlock_if_mine();
	/* The host's own console: whatever the guest kept back is printed too. */
	emu.host_side[emu_cpu()]++;
	platform_use_plain_io();
	console_flush_held();
	kprintf("emu: the host stops the guest: %s\n", why);
	ev_begin("emu_stop");
	ev_str("why", why);
	ev_u64("host_code", host_code);
	ev_u64("code", EXIT_HOST_STOPPED);
	ev_end();
	machine_exit(EXIT_HOST_STOPPED);
}

/*
 * Observe mode: the sim platform's accept, checked as a TDX module would check it. A
 * page accepted twice means the allocator lost track of a unit; on real hardware that
 * is the double accept that loses data.
 */
static struct spinlock observe_lock;

void emu_observe_accept(u64 start, u64 end)
{
	u64 bad;

	if (emu.mode != EMU_OBSERVE || !emu.model.pages)
		return;
	/* Several CPUs accept at once on sim: the model and its counters are shared. */
	spin_lock(&observe_lock);
	emu_count("observed_accepts");
	bool ok = emu_model_observe_accept(&emu.model, start, end, &bad);

	spin_unlock(&observe_lock);
	if (!ok)
		panic("emu_observe_accept: sim accepted %llx, which is %s", bad,
		      *emu_model_page(&emu.model, bad) & EMU_PG_RAM ? "already accepted (double accept)"
								   : "not RAM");
}

/*
 * SNP: what is a VMSA at the end, so a test can tell that a VMSA the guest did not run
 * was undone: pages with the VMSA attribute in the RMP model (RMPADJUST or the SVSM's
 * Create vCPU set it), and vCPUs with a VMSA the SVSM registered.
 */
static void report_vmsas(void)
{
	u64 pages = 0, vcpus = 0;

	for (u64 i = 0; emu.model.pages && i < emu.model.end / PAGE_SIZE; i++)
		pages += !!(emu.model.pages[i] & EMU_PG_VMSA);
	for (unsigned i = 0; i < EMU_MAX_VCPUS; i++)
		vcpus += !!emu.vcpu[i].svsm_vmsa;
	ev_u64("vmsa_pages", pages);
	ev_u64("svsm_vcpus", vcpus);
}

void emu_report(void)
{
	ev_obj_begin("emulator");
	ev_str("mode", mode_name());
	ev_str("host", host_name());
	for (unsigned i = 0; i < ncounters; i++)
		ev_u64(counters[i].name, counters[i].count);
	if (emu.mode == EMU_SNP)
		report_vmsas();
	if (emu.mode == EMU_TDX)
		emu_tdvf_report();
	/* How often each injected fault fired: a test can tell that it took effect. */
	ev_arr_begin("faults");
	for (unsigned i = 0; i < emu.faults.n; i++) {
		const struct emu_fault *f = &emu.faults.f[i];

		ev_obj_begin(NULL);
		ev_str("kind", emu_fault_name(f->kind));
		if (f->addr != FAULT_ANY_ADDR)
			ev_u64("addr", f->addr);
		ev_u64("fired", f->fired);
		ev_obj_end();
	}
	ev_arr_end();
	ev_obj_end();
}

void emu_stage_ve(u32 reason, u64 qual, u64 gla, u64 gpa, u32 len)
{
	unsigned c = emu_cpu();

	emu.ve[c].staged = true;
	emu.ve[c].reason = reason, emu.ve[c].qual = qual, emu.ve[c].gla = gla, emu.ve[c].gpa = gpa;
	emu.ve[c].len = len;
}
