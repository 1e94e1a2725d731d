/* SPDX-License-Identifier: MIT */
/* memaccept (test image): emulator core: trap dispatch, page model, counters, fault injection. */
#include "arch/x86/acpi_walk.h"
#include "arch/x86/cpu.h"
#include "arch/x86/emu/decode.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu/tdvf.h"
#include "arch/x86/emu/traps.h"
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
	struct cpuid_regs r;

	/* CPUID leaf 1 EBX[31:24]: the initial APIC ID (Intel SDM vol. 2A CPUID; AMD APM vol. 3 E.3.2). */
	raw_cpuid(1, 0, &r);
	return r.ebx >> 24;
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
	return &emu.vcpu[emu_cpu()];
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
	u32 me = emu_cpu() + 1;

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
	if (__atomic_load_n(&big_lock_owner, __ATOMIC_RELAXED) == emu_cpu() + 1) {
		big_lock_depth = 1;
		emu_snp_unlock();
	}
}

u32 emu_mode(void)
{
	return emu.mode;
}

/*
 * The TSC frequency the emulated host gives its guest. Under TCG the guest's TSC is the
 * host CPU's, so it is measured once, on the emulated host's side, against the ACPI PM
 * timer of QEMU's q35 machine (port 0x608, 3.579545 MHz, 24 bits: ACPI spec, FADT
 * PM_TMR_BLK; QEMU hw/isa/lpc_ich9.c), over 10 ms.
 */
#define PM_TIMER_PORT 0x608
#define PM_TIMER_HZ 3579545ULL
#define PM_TIMER_MASK 0xffffffULL

u64 emu_host_tsc_hz(void)
{
	static u64 hz;
	u64 t0, p0, dp = 0;

	if (hz)
		return hz;
	p0 = raw_io_in(PM_TIMER_PORT, 4) & PM_TIMER_MASK;
	t0 = rdtsc_ordered();
	while (dp < PM_TIMER_HZ / 100)
		dp = ((raw_io_in(PM_TIMER_PORT, 4) & PM_TIMER_MASK) - p0) & PM_TIMER_MASK;
	hz = (rdtsc_ordered() - t0) * PM_TIMER_HZ / dp;
	return hz;
}

u64 emu_sev_status(void)
{
	struct emu_fault *f = emu_fault_find(&emu.faults, FAULT_SEV_STATUS, 0, 0);
	struct emu_fault *only = emu_fault_find(&emu.faults, FAULT_SEV_ONLY, 0, 0);

	/* sev_only: an SEV or SEV-ES guest, which memaccept must refuse before EBS. */
	if (only)
		return only->value;
	return EMU_SEV_STATUS_BASE | (f ? f->value : 0);
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

/*
 * How many vCPUs QEMU made: fw_cfg item FW_CFG_NB_CPUS (0x05, a little-endian u16; QEMU
 * hw/i386/fw_cfg.c; selector port 0x510, data port 0x511: QEMU docs/specs/fw_cfg.rst).
 */
#define FW_CFG_PORT_SEL 0x510
#define FW_CFG_PORT_DATA 0x511
#define FW_CFG_NB_CPUS 0x05

static u32 fw_cfg_nb_cpus(void)
{
	u32 n;

	plain_io_out(FW_CFG_PORT_SEL, FW_CFG_NB_CPUS, 2);
	n = plain_io_in(FW_CFG_PORT_DATA, 1);
	n |= plain_io_in(FW_CFG_PORT_DATA, 1) << 8;
	return MAX(n, 1u);
}

/* Boot services are alive: the firmware's tables are where its pointers say. */
static bool host_read(void *ctx, u64 addr, void *dst, u64 len)
{
	(void)ctx;
	memcpy(dst, (const void *)(uintptr_t)addr, len);
	return true;
}

/*
 * The host knows its vCPUs by the APIC IDs QEMU gave them (KVM's vcpu_id: QEMU
 * target/i386/kvm/kvm.c kvm_arch_vcpu_id). QEMU derives them from the topology, which
 * leaves holes (x86_apicid_from_cpu_idx: each level's field is a power of two wide, so
 * -smp 6,sockets=2,cores=3 gives 0, 1, 2, 4, 5, 6), and writes one MADT entry per vCPU
 * in its CPU-index order (hw/i386/acpi-common.c build_madt walks possible_cpus). The
 * emulated host reads them back from there; without a usable MADT, QEMU's vCPU count
 * (fw_cfg) with IDs 0 .. n-1, what QEMU's default topology gives.
 */
void boot_emulator_host_vcpus(const struct boot_info *bi)
{
	struct acpi_reader r = { host_read, NULL };
	static struct acpi_facts f;

	if (emu.mode != EMU_SNP && emu.mode != EMU_TDX)
		return;
	if (bi->acpi_rsdp)
		acpi_scan(&r, bi->acpi_rsdp, &f);
	emu.host_nvcpus = 0;
	if (bi->acpi_rsdp && f.madt == ACPI_OK) {
		for (u32 i = 0; i < f.cpus_listed && emu.host_nvcpus < EMU_MAX_VCPUS; i++) {
			bool dup = false;

			for (u32 j = 0; j < emu.host_nvcpus && !dup; j++)
				dup = emu.host_apic_ids[j] == f.apic_ids[i];
			if (!dup)
				emu.host_apic_ids[emu.host_nvcpus++] = f.apic_ids[i];
		}
	}
	if (!emu.host_nvcpus) {
		emu.host_nvcpus = MIN(fw_cfg_nb_cpus(), (u32)EMU_MAX_VCPUS);
		for (u32 i = 0; i < emu.host_nvcpus; i++)
			emu.host_apic_ids[i] = i;
	}
}

int emu_host_vcpu_index(u32 apic_id)
{
	for (u32 i = 0; i < emu.host_nvcpus; i++)
		if (emu.host_apic_ids[i] == apic_id)
			return (int)i;
	return -1;
}

/* The values an emulated VMM returns for CPUID (TDVMCALL or GHCB exit), any time. */
void emu_cpuid_values(u32 leaf, u32 subleaf, struct cpuid_regs *r)
{
	struct emu_fault *lie = emu_fault_find(&emu.faults, FAULT_CPUID_TSC_LIE, 0, 0);

	if (emu.mode == EMU_TDX && tdx_cpuid_trap(leaf, subleaf) == TRAP_NONE) {
		/* The TDX module's own leaves: no host can change them. */
		emu_tdx_module_cpuid(leaf, subleaf, r);
		return;
	}
	if (emu.mode != EMU_SNP || !emu_snp_cpuid(leaf, subleaf, r))
		raw_cpuid(leaf, subleaf, r);
	/* cpuid_tsc_lie: the host's hypervisor leaves declare the TSC it chose. */
	if (lie && leaf == 1)
		r->ecx |= 1u << 31;
	if (lie && leaf == 0x40000000 && r->eax < 0x40000010)
		r->eax = 0x40000010;
	if (lie && leaf == 0x40000010) {
		lie->fired++;
		r->eax = (u32)lie->value;
	}
}

/* io_garbage and port_lie: what a hostile host answers a port read with. */
u64 emu_host_port_read(u16 port, int size, u64 value)
{
	struct emu_fault *lie = emu_fault_find(&emu.faults, FAULT_PORT_LIE, port, (u64)port + 1);

	if (lie) {
		lie->fired++;
		value = lie->value;
	}
	if (emu_fault_find(&emu.faults, FAULT_IO_GARBAGE, 0, 0)) {
		emu_fault_find(&emu.faults, FAULT_IO_GARBAGE, 0, 0)->fired++;
		value |= size == 4 ? 0xffffffff00000000ULL : ~0ULL << (8 * size);
	}
	return value;
}

/* ------------------------------------------------------------------ trap dispatch */

static struct emu_decoded decode_at(u64 rip)
{
	/* Our own code: mapped, and at least 4 bytes follow any instruction we emit. */
	return emu_decode((const u8 *)(uintptr_t)rip, 4);
}

static bool on_ud(struct trap_frame *f)
{
	struct emu_decoded d;
	bool snp = emu.mode == EMU_SNP, nested = false, nmi = false;
	struct emu_fault *forged = NULL;

	/* From here until the return the vCPU runs the emulated host's code, not the guest's. */
	emu_host_enter();
	d = decode_at(f->rip);
	/* SNP: one emulated instruction at a time, whichever vCPU it comes from. */
	if (snp)
		emu_snp_lock();
	emu_count("ud_traps");
	/* vc_forge_pvalidate: the host injects #VC instead of completing the PVALIDATE. */
	if (snp && d.insn == INSN_PVALIDATE && emu_self()->ghcb_gpa &&
	    (forged = emu_fault_take(&emu.faults, FAULT_VC_FORGE_PVALIDATE, 0, 0))) {
		emu_snp_unlock();
		emu_forge_vc(f, forged->value, f->rip, "PVALIDATE");
	}
	/* Taken before the exit: the guest's own termination request may follow it. */
	if (snp && d.insn == INSN_VMGEXIT && emu_self()->ghcb_gpa &&
	    emu_self()->ghcb_msr == emu_self()->ghcb_gpa)
		forged = emu_fault_take(&emu.faults, FAULT_VC_FORGE_VMGEXIT, 0, 0);
	if (snp && d.insn == INSN_VMGEXIT && emu_self()->vc_depth && !forged &&
	    emu_fault_take(&emu.faults, FAULT_VC_NESTED, 0, 0))
		nested = true;
	if (snp && d.insn == INSN_VMGEXIT && emu_self()->vc_depth && !forged && !nested &&
	    emu_fault_take(&emu.faults, FAULT_VC_NMI, 0, 0))
		nmi = true;
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
	if (snp)
		emu_snp_unlock();
	if (snp && emu_self()->vc_raise) {
		u64 code = emu_self()->vc_raise;

		emu_self()->vc_raise = 0;
		emu_raise_vc(f, code, emu_self()->vc_raise_cr2, d.insn == INSN_RMPADJUST ? "RMPADJUST" : "the instruction");
	}
	if (forged && d.len)
		emu_forge_vc(f, forged->value, f->rip + d.len, "the instruction after a VMGEXIT");
	if (nested && d.len)
		emu_forge_nested_vc();
	if (nmi && d.len)
		emu_inject_nmi(f);
	emu_host_leave();
	if (!d.len)
		return false;	/* a real #UD: the fatal exception report takes it */
	f->rip += d.len;
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
	if (emu.mode != EMU_SNP || !init_or_startup)
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
	emu.fw_cr3 = read_cr3();
}

void emu_announce(void)
{
	kprintf("emu: platform emulator in %s mode, host %s, %u fault(s) armed\n", mode_name(),
		host_name(), emu.faults.n);
}

/* ------------------------------------------------------------------ page model */

/*
 * What a load or store by the guest's kernel meets on the real platform (the
 * sanitizer's OBS_PS_* states): TDX, a page still PENDING ends the TD; SNP, a page the
 * hypervisor owns or one not validated; sim, a page not yet accepted in software.
 */
u32 emu_obs_page_state(u32 mode, u8 page)
{
	if (!(page & EMU_PG_RAM))
		return OBS_PS_UNTRACKED;
	/*
	 * Under an SVSM a VMSA is the SVSM's alone: COCONUT-SVSM takes every permission
	 * from the guest's VMPL when it makes a page one (kernel/src/sev/utils.rs
	 * rmp_set_guest_vmsa: rmp_revoke_guest_access, then the VMSA bit only) and gives
	 * them back when it clears it (rmp_clear_guest_vmsa).
	 */
	if (mode == EMU_SNP && (page & EMU_PG_VMSA) && emu.svsm != EMU_SVSM_NONE)
		return OBS_PS_VMPL_DENIED;
	if (mode == EMU_SNP)
		return !(page & EMU_PG_PRIVATE) ? OBS_PS_SHARED
		       : page & EMU_PG_ACCEPTED ? OBS_PS_OK : OBS_PS_NOT_VALIDATED;
	if (page & EMU_PG_ACCEPTED)
		return OBS_PS_OK;
	return mode == EMU_TDX ? OBS_PS_PENDING : OBS_PS_UNACCEPTED;
}

void emu_note_mapping(u64 start, u64 end, u32 how)
{
	emu_obs_arg(start);
	emu_obs_arg(end);
	emu_obs_arg(how);
	__asm__ volatile(OBS_MARK_ASM(OBS_KIND_MAPPED, OBS_MAGIC) : : : "memory");
}

/*
 * Observe mode: the kernel started this AP itself (INIT-SIPI on a normal VM), so no
 * emulated host hands it over; from here the observer checks its accesses too. In an
 * emulated TD or SNP guest the emulated host has already handed the vCPU over.
 */
void emu_note_ap_entry(void)
{
	if (emu.mode == EMU_OBSERVE)
		emu_obs_hand_over();
}

/* The model changed [start, end): tell the sanitizer, one command per run of equal state. */
void emu_model_changed(struct emu_model *m, u64 start, u64 end)
{
	u64 run = start;
	u32 state = 0;

	end = MIN(end, m->end);
	for (u64 a = start; a < end; a += PAGE_SIZE) {
		u32 st = emu_obs_page_state(emu.mode, *emu_model_page(m, a));

		if (a != run && st != state) {
			emu_obs_pages(run, a, state);
			run = a;
		}
		state = st;
	}
	if (run < end)
		emu_obs_pages(run, end, state);
}

void emu_setup_model(const struct memmap *m)
{
	u64 end = 0;

	/* The emulated host's work (its own port I/O and IPIs included). */
	emu_host_enter();

	for (unsigned i = 0; i < m->nranges; i++)
		if (emu_model_ram_kind(m->ranges[i].kind))
			end = MAX(end, m->ranges[i].end);
	end = MIN(end, EMU_MODEL_LIMIT);
	/*
	 * emu_host=kvm: today's KVM maps TDX private memory in 4 KiB pages and gives SNP
	 * private memory 4 KiB RMP entries; emu_host=huge backs wholly pending units with
	 * 2 MiB pages.
	 */
	/*
	 * The model's storage is the emulated host's, not guest memory: it must not land on a
	 * page a planted firmware fault is about, where it would hide what the kernel does there.
	 */
	u64 planted[EMU_MAX_FAULTS];
	unsigned nplanted = 0;

	for (unsigned i = 0; i < emu.faults.n; i++)
		if (emu.faults.f[i].kind == FAULT_HANDOVER_UNACCEPTED)
			planted[nplanted++] = emu.faults.f[i].addr;
	early_avoid(planted, nplanted);
	u8 *storage = (u8 *)(uintptr_t)early_alloc(end >> PAGE_SHIFT, PAGE_SIZE);

	early_avoid(NULL, 0);
	emu_model_init(&emu.model, m, storage, end, &emu.faults, emu.host == EMU_HOST_HUGE);
	/* The firmware's GHCB (boot/test/snp_standin.c) is shared: the host owns it. */
	if (emu.mode == EMU_SNP && emu.fw_ghcb)
		emu_model_rmp_set(&emu.model, emu.fw_ghcb, emu.fw_ghcb + PAGE_SIZE, false);
	kprintf("emu: page model covers %llu MiB (%llu KiB of state)\n", end >> 20,
		end >> PAGE_SHIFT >> 10);
	/* The sanitizer now knows the state the kernel started with (emu_model_init told it). */
	emu_obs_shadow_ready();
	/* A TD's APs wait in the firmware's mailbox loop before the OS runs. */
	if (emu.mode == EMU_TDX)
		emu_tdvf_start_aps();
	if (emu.mode == EMU_SNP)
		emu_snp_reserve_vmrun_stacks();
	emu_host_leave();
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
	/* The host's own code from here: its console output is plain port I/O. */
	emu_host_enter();
	/* Another vCPU may wait for the emulator while it holds the console. */
	emu_unlock_if_mine();
	platform_use_plain_io();
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
	emu_host_enter();
	spin_lock(&observe_lock);
	emu_count("observed_accepts");
	bool ok = emu_model_observe_accept(&emu.model, start, end, &bad);

	spin_unlock(&observe_lock);
	emu_host_leave();
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
	bool guest = emu_host_enter();
	unsigned c = emu_cpu();

	(void)guest;

	/* ve_len_lie, ve_reason_lie: #VE information that does not describe the instruction. */
	if (len && emu_fault_take(&emu.faults, FAULT_VE_LEN_LIE, 0, 0))
		len++;
	if (reason == EXIT_REASON_CPUID && emu_fault_take(&emu.faults, FAULT_VE_REASON_LIE, 0, 0))
		reason = EXIT_REASON_MSR_READ;
	emu.ve[c].staged = true;
	emu.ve[c].reason = reason, emu.ve[c].qual = qual, emu.ve[c].gla = gla, emu.ve[c].gpa = gpa;
	emu.ve[c].len = len;
	emu_host_leave();
}
