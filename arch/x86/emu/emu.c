/* SPDX-License-Identifier: MIT */
/* memaccept (test image): emulator core: trap dispatch, page model, counters, fault injection. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu/decode.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/platform.h"
#include "drivers/console.h"
#include "drivers/exit.h"
#include "kernel/panic.h"
#include "kernel/report.h"
#include "lib/string.h"
#include "mm/early.h"

struct emu_state emu;

#define MAX_COUNTERS 48

static struct {
	const char *name;
	u64 count;
} counters[MAX_COUNTERS];
static unsigned ncounters;

void emu_count(const char *name)
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
	if (bi->config.platform == PLAT_TDX_EMU)
		emu.mode = EMU_TDX;
	else if (bi->config.platform == PLAT_SNP_EMU)
		emu.mode = EMU_SNP;
	else
		emu.mode = EMU_OBSERVE;
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
	if (emu.mode == EMU_SNP && emu.installed)
		emu_host_stops_guest(EXIT_PLATFORM_FATAL, "CPUID after ExitBootServices on SNP: real "
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
	*val = msr == MSR_SEV_STATUS ? 0x7 : emu.ghcb_msr;
	return true;
}

bool emu_wrmsr(u32 msr, u64 val)
{
	if (emu.mode != EMU_SNP || (msr != MSR_SEV_GHCB && msr != MSR_SEV_STATUS))
		return false;
	emu_count("wrmsr");
	if (msr == MSR_SEV_GHCB)
		emu.ghcb_msr = val;
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

	emu_count("ud_traps");
	if (d.insn == INSN_TDCALL && emu.mode == EMU_TDX)
		emu_tdx_tdcall(f);
	else if (d.insn == INSN_PVALIDATE && emu.mode == EMU_SNP)
		emu_snp_pvalidate(f);
	else if (d.insn == INSN_VMGEXIT && emu.mode == EMU_SNP)
		emu_snp_vmgexit(f);
	else
		return false;	/* a real #UD: the fatal exception report takes it */
	f->rip += d.len;
	return true;
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
	emu_model_init(&emu.model, m, (u8 *)(uintptr_t)early_alloc(end >> PAGE_SHIFT, PAGE_SIZE), end,
		       &emu.faults);
	emu.model.host_huge = emu.host == EMU_HOST_HUGE;
	kprintf("emu: page model covers %llu MiB (%llu KiB of state)\n", end >> 20,
		end >> PAGE_SHIFT >> 10);
}

__noreturn void emu_host_stops_guest(u64 host_code, const char *why)
{
	/* The host's own console: whatever the guest kept back is printed too. */
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
void emu_observe_accept(u64 start, u64 end)
{
	u64 bad;

	if (emu.mode != EMU_OBSERVE || !emu.model.pages)
		return;
	emu_count("observed_accepts");
	if (!emu_model_observe_accept(&emu.model, start, end, &bad))
		panic("emu_observe_accept: sim accepted %llx, which is %s", bad,
		      *emu_model_page(&emu.model, bad) & EMU_PG_RAM ? "already accepted (double accept)"
								   : "not RAM");
}

void emu_report(void)
{
	ev_obj_begin("emulator");
	ev_str("mode", mode_name());
	ev_str("host", host_name());
	for (unsigned i = 0; i < ncounters; i++)
		ev_u64(counters[i].name, counters[i].count);
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
	emu.ve_staged = true;
	emu.ve_reason = reason, emu.ve_qual = qual, emu.ve_gla = gla, emu.ve_gpa = gpa;
	emu.ve_len = len;
}
