/* SPDX-License-Identifier: MIT */
/* memaccept (test image): the platform emulator: TDX module, RMP and hypervisor models under plain QEMU. */
#ifndef ARCH_X86_EMU_EMU_H
#define ARCH_X86_EMU_EMU_H

#include "arch/x86/cpu.h"
#include "arch/x86/desc.h"
#include "arch/x86/emu/faults.h"
#include "arch/x86/emu/model.h"
#include "arch/x86/observer.h"
#include "include/boot_info.h"
#include "include/smp.h"
#include "mm/memmap.h"

/*
 * Under plain QEMU the confidential-computing instructions fault: TDCALL, PVALIDATE
 * and VMGEXIT raise #UD. The emulator catches that fault, recognises the instruction
 * by its bytes, does what the TDX module or the SNP hardware and hypervisor would do to
 * a per-4 KiB model of guest memory, and resumes after the instruction. The real
 * backends (arch/x86/tdx, arch/x86/sev) run unchanged on top. CPUID, MSRs, HLT and port
 * I/O do not fault under TCG: their accessors let the emulator play them first
 * (arch/x86/emu_hooks.h, emu/play.c), and the instruction observer (tools/observer)
 * stops the boot where one runs natively that the platform would trap.
 *
 * Modes: tdx (platform=tdx-emu), snp (platform=snp-emu), observe (any other platform
 * in the test image: no instruction is emulated, but every accept is checked against
 * the page model, which catches a double accept on the sim platform too).
 */
enum emu_mode {
	EMU_OFF,
	EMU_OBSERVE,
	EMU_TDX,
	EMU_SNP,
};

/*
 * SEV_STATUS (AMD APM vol. 2, 15.34.10): SEV, SEV-ES and SEV-SNP active, and the other
 * features emu_fault=sev_status= adds. KVM's VM features (its vmsa_features) are the same.
 */
#define EMU_SEV_STATUS_BASE 0x7ULL
u64 emu_sev_status(void);
/* The guest TSC's frequency as the emulated host set it (measured once; host side only). */
u64 emu_host_tsc_hz(void);

/* The model covers RAM below this; larger guests are not emulated (host memory). */
#define EMU_MODEL_LIMIT (64 * GiB)

/*
 * What the emulated host keeps per vCPU (KVM: per struct kvm_vcpu), found by the APIC ID
 * of the CPU the emulator runs on. Each vCPU touches only its own, except AP Creation,
 * which writes the target's under the emulator lock.
 */
#define EMU_MAX_VCPUS 256
struct emu_vcpu {
	/* SNP: the GHCB MSR's current value and this vCPU's registered GHCB. */
	u64 ghcb_msr;
	u64 ghcb_gpa;
	/* SNP: how many #VCs the emulator is delivering to this vCPU right now. */
	u32 vc_depth;
	/*
	 * SNP AP Creation: the VMSA it was given (0: none), whether it runs one, and
	 * (ap_create_late) whether the host runs it only when its AP Destroy arrives.
	 */
	u64 vmsa_gpa;
	bool running;
	bool start_at_destroy;
	/*
	 * emu_svsm=1: the guest VMSA and calling area the SVSM's Create vCPU registered for
	 * this vCPU (0: none; the boot vCPU uses the secrets page's calling area).
	 */
	u64 svsm_vmsa;
	u64 svsm_caa;
	/*
	 * TDX: the module's per-vCPU watch on TDCALLs kept busy by host priority (TDVPS
	 * hp_lock_busy and hp_lock_busy_start; tdx_td_dispatcher.c td_call).
	 */
	bool hp_busy;
	u64 hp_busy_since_ns;
	/*
	 * SNP: the #VC the instruction being emulated raises instead of completing (0:
	 * none), delivered once the emulator's lock is released, and its CR2.
	 */
	u64 vc_raise;
	u64 vc_raise_cr2;
};

struct emu_state {
	u32 mode;
	u32 host;		/* enum emu_host_kind (kernel/cmdline.h): the host being played */
	bool installed;		/* the kernel's #UD handler is registered */
	bool armed;		/* after ExitBootServices: no firmware #VE/#VC handler any more */
	/*
	 * The firmware's page tables, still loaded when the kernel starts. The stand-in is a
	 * plain OVMF whose identity map has no C-bit; an SNP OVMF maps RAM with it (edk2
	 * OvmfPkg/ResetVector/Ia32/PageTables64.nasm.inc: CreatePageTables4Level with the mask
	 * of GetSevCBitMaskAbove31), so through these tables every RAM page counts as
	 * mapped private.
	 */
	u64 fw_cr3;
	/* SNP: the GHCB the stand-in firmware registered, shared in the page model (0: none). */
	u64 fw_ghcb;
	const struct boot_info *bi;	/* for the AP start-up page (SNP AP Creation) */
	/* SNP: per vCPU by APIC ID (emu_self): GHCB MSR, registered GHCB, VMSA. */
	struct emu_vcpu vcpu[EMU_MAX_VCPUS];
	/* Per vCPU (emu_cpu()): > 0 while the emulated host runs on it (emu_host_enter). */
	u32 host_side[EMU_MAX_VCPUS];
	struct emu_faults faults;
	struct emu_model model;	/* the page model (arch/x86/emu/model.h) */
	/*
	 * TDX: per vCPU, a #VE staged for TDG.VP.VEINFO.GET (the module keeps the #VE
	 * information per vCPU, in its VE_INFO area).
	 */
	struct {
		bool staged;
		u32 reason, len;
		u64 qual, gla, gpa;
	} ve[EMU_MAX_VCPUS];
	/*
	 * SNP below VMPL0 (emu_svsm=): enum emu_svsm_kind, the VMPL the guest plays (1, or 2
	 * with emu_svsm=2, as COCONUT-SVSM runs its guest: kernel/src/types.rs GUEST_VMPL;
	 * 0 without emu_svsm; the SVSM, if any, has VMPL0), the calling area.
	 */
	u32 svsm;
	u32 guest_vmpl;
	/*
	 * The vCPUs the host made, by APIC ID, in QEMU's vCPU order (its CPU index): KVM
	 * knows a vCPU by the ID QEMU created it with, the APIC ID (QEMU target/i386/kvm/kvm.c
	 * kvm_arch_vcpu_id), and QEMU's topology may leave holes between them
	 * (boot_emulator_host_vcpus).
	 */
	u32 host_apic_ids[EMU_MAX_VCPUS];
	u32 host_nvcpus;
	u64 svsm_caa;
};

extern struct emu_state emu;

/* The vCPU the emulator runs on (by its initial APIC ID, CPUID leaf 1). */
struct emu_vcpu *emu_self(void);
/*
 * SNP: one lock for the emulated host: the page model (RMP), fault injection and the
 * per-vCPU records change under it. Taken around every emulated instruction (the #UD
 * handler), recursive for its holder (the emulator's own console output re-enters it).
 */
void emu_snp_lock(void);
void emu_snp_unlock(void);
/* SNP: the guest sent INIT or STARTUP (from emu_guest_ipi): stops the VM. */
void emu_snp_guest_ipi(u32 dest, bool init_or_startup);
/*
 * On the way to stopping the guest, before the emulator prints: another vCPU may wait
 * for the emulator while it holds the console.
 */
void emu_unlock_if_mine(void);

/* Called from efi_main before detection: the mode, and the emu_fault= faults (boot/boot.h). */
void boot_emulator_select(struct boot_info *bi);
/* Called from efi_main once the RSDP is known: the vCPUs the emulated host made (by APIC ID). */
void boot_emulator_host_vcpus(const struct boot_info *bi);
/* Called from kernel_main before idt_init(): the #UD handler. */
void emu_install(void);
/* After idt_init(): say which mode, host and faults are in effect. */
void emu_announce(void);
/* The page model, once the final map is known and boot-time allocation works. */
void emu_setup_model(const struct memmap *m);
/* Add an "emulator" object with the mode and counters to the event being built. */
void emu_report(void);
u32 emu_mode(void);

/*
 * The emulated host ends the VM (fatal report, termination request, a vCPU halted for
 * good): prints why and what it was told (host_code), then exits with EXIT_HOST_STOPPED.
 */
__noreturn void emu_host_stops_guest(u64 host_code, const char *why);
/*
 * The hostile host (play.c): inject #VC `code` with the registers of f and RIP at rip
 * (host side, emulator lock not held). A guest that refuses it never returns; one that
 * serves it was fooled, and the emulated host stops it saying so.
 */
__noreturn void emu_forge_vc(const struct trap_frame *f, u64 code, u64 rip, const char *where);
/* A port read's answer as the (possibly hostile) host gives it: io_garbage, port_lie. */
u64 emu_host_port_read(u16 port, int size, u64 value);
/* vc_nmi: an NMI while the guest's #VC handler waits for an exit (f: where it is). */
void emu_inject_nmi(const struct trap_frame *f);
/* vc_nested: a second #VC (CPUID at a real CPUID) while the guest's handler runs. */
void emu_forge_nested_vc(void);
/*
 * A #VC the CPU raises at the instruction at f->rip (a fault: it has not completed), CR2
 * set to cr2; host side, emulator lock not held. A handler that returns would make the
 * CPU run the instruction again and fault again: the emulated host stops the VM instead.
 */
__noreturn void emu_raise_vc(const struct trap_frame *f, u64 code, u64 cr2, const char *where);

/* The models (one per mode). */
void emu_tdx_tdcall(struct trap_frame *f);
/* The TD's shared bit (GPA bit GPAW - 1), as TDG.VP.INFO will report the width. */
u64 emu_tdx_shared_bit(void);
void emu_snp_pvalidate(struct trap_frame *f);
void emu_snp_vmgexit(struct trap_frame *f);
void emu_snp_rmpadjust(struct trap_frame *f);
/* The emulated SVSM: one call made with the GHCB MSR's "run VMPL0" request. */
void emu_svsm_call(struct trap_frame *f);
/* QEMU's CPU index of the vCPU with this APIC ID, or -1 if the host made none. */
int emu_host_vcpu_index(u32 apic_id);
/* SNP: the stacks the emulated VMRUN starts vCPUs on, while boot-time allocation works. */
void emu_snp_reserve_vmrun_stacks(void);
bool emu_snp_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r);
/*
 * The C-bit position the emulated SNP CPU reports: emu_fault=cbit=N; else 51 where guest
 * RAM can be seen a second time at 2^51 (an ivshmem device on the same memory:
 * emu/cbit_alias.c), as TCG needs for an address bit; else 56, a page-table bit TCG
 * ignores.
 */
#define EMU_SNP_CBIT_DEFAULT 56
#define EMU_SNP_CBIT_REAL 51	/* current EPYC parts (AMD APM vol. 2, 15.34.1) */
unsigned emu_snp_cbit(void);
/* After ExitBootServices: put that second mapping in place, or stop the VM saying why. */
void emu_snp_cbit_alias(void);

/* CPUID as the emulated VMM answers it (for TDVMCALL<CPUID> and the GHCB CPUID exit). */
void emu_cpuid_values(u32 leaf, u32 subleaf, struct cpuid_regs *r);

/*
 * This vCPU's slot in the per-vCPU state: its initial APIC ID (CPUID leaf 1, which QEMU's
 * TCG answers; with QEMU's default topology also its vCPU index). Runs CPUID: the
 * emulated host's code only.
 */
unsigned emu_cpu(void);

/*
 * The emulated host takes this vCPU (true: it was running the guest's own code) and
 * hands it back. The markers tell the instruction observer (arch/x86/observer.h) whose
 * instructions follow; host_side tells the emulator.
 */
static inline bool emu_host_enter(void)
{
	__asm__ volatile(OBS_MARK_ASM(OBS_KIND_HOST_ENTER, OBS_MAGIC) : : : "memory");
	return emu.host_side[emu_cpu()]++ == 0;
}

static inline void emu_host_leave(void)
{
	emu.host_side[emu_cpu()]--;
	__asm__ volatile(OBS_MARK_ASM(OBS_KIND_HOST_LEAVE, OBS_MAGIC) : : : "memory");
}

/*
 * emu/observer.asm: the observer's markers where they need a fixed address or a run-time
 * argument. Arming (after ExitBootServices) names the platform; a vCPU the emulated host
 * is about to restart (INIT-SIPI) runs host code until its hand-over, which marks only
 * the observer (the vCPU's own state is not set up yet).
 */
void emu_obs_arm_tdx(void);
void emu_obs_arm_snp(u32 features);	/* OBS_ARM_SNP_* (arch/x86/observer.h) */
void emu_obs_adopt(u32 vcpu);
void emu_obs_hand_over(void);
void emu_obs_arm_sim(void);
/* One run-time value for the page-state sanitizer's next command (arch/x86/observer.h). */
void emu_obs_arg(u64 value);

/*
 * The page-state sanitizer (tools/observer): the emulated host tells it each page's
 * state as the platform holds it (OBS_PS_*), and when the state it started the
 * kernel with is complete.
 */
static inline void emu_obs_pages(u64 start, u64 end, u32 state)
{
	emu_obs_arg(start);
	emu_obs_arg(end);
	emu_obs_arg(state);
	__asm__ volatile(OBS_MARK_ASM(OBS_KIND_PAGES, OBS_MAGIC) : : : "memory");
}

static inline void emu_obs_shadow_ready(void)
{
	__asm__ volatile(OBS_MARK_ASM(OBS_KIND_SHADOW_READY, OBS_MAGIC) : : : "memory");
}

/* The state of one model page (EMU_PG_*) as the sanitizer tracks it in this mode (OBS_PS_*). */
u32 emu_obs_page_state(u32 mode, u8 page);
/* efi_main, after ExitBootServices: the firmware's #VE/#VC handlers are gone (emu/play.c). */
void boot_test_after_ebs(void);
/* emu/ipi.c: INIT and STARTUP to one of QEMU's vCPUs (its xAPIC), from the emulated host. */
bool emu_send_init(u32 apic_id);
bool emu_send_startup(u32 apic_id, u8 vector);

/* The emulated hosts' answers to an MSR a guest's trap handler forwards (false: refused). */
bool emu_tdx_vmm_msr(bool write, u32 msr, u64 *val);
bool emu_snp_hv_msr(bool write, u32 msr, u64 *val);
/* CPUID as the TDX module answers the leaves it handles itself (traps.h tdx_cpuid_trap). */
void emu_tdx_module_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r);
/*
 * The emulated state vCPUs share: the page model and the TDX module's view of it, and
 * fault-injection counts. Held only briefly, never across guest code.
 */
void emu_lock(void);
void emu_unlock(void);

/* Test hook: this vCPU's next TDG.VP.VEINFO.GET returns this #VE. */
void emu_stage_ve(u32 reason, u64 qual, u64 gla, u64 gpa, u32 len);
/*
 * The VM-exit instruction length the module reports for an instruction #VE: the length
 * of the instruction (Intel SDM vol. 3C, "Information for VM Exits Due to Instruction
 * Execution"; vol. 2 for the encodings): CPUID 0F A2, RDMSR 0F 32, WRMSR 0F 30, HLT F4,
 * IN/OUT with the port in DX EC-EF (one more byte, 0x66, for the 16-bit forms).
 */
#define INSN_LEN_CPUID 2
#define INSN_LEN_MSR 2
#define INSN_LEN_HLT 1
#define INSN_LEN_IO_DX 1
/*
 * Test hooks (play.c), called from the guest's code: the #VE a CPUID, RDMSR or WRMSR
 * raises in a TD, delivered to the kernel's handler with RIP at a copy of the
 * instruction and its length reported; the result is what the handler leaves in the
 * registers.
 */
void emu_ve_cpuid(u32 leaf, u32 subleaf, struct cpuid_regs *r);
void emu_ve_msr(bool write, u32 msr, u64 *val);

#endif
