/* SPDX-License-Identifier: MIT */
/* memaccept (test image): TDVF's AP mailbox loop, run by QEMU's other vCPUs under platform=tdx-emu. */
#include "arch/x86/cpu.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu/tdvf.h"
#include "arch/x86/emu_hooks.h"
#include "arch/x86/paging.h"
#include "arch/x86/smp.h"
#include "arch/x86/tdx/tdx.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "include/mp_wakeup.h"
#include "lib/string.h"

struct emu_tdvf emu_tdvf;

/* TDVF's broadcast APIC ID (OvmfPkg TdxCommondefs.inc MailboxApicidBroadcast). */
#define MB_APIC_ID_BROADCAST 0xfffffffeu

/* TDVF's mailbox GDT (TdxAcpiTable.c mGdtEntries): its 64-bit code is 0x10, data 0x18. */
#define TDVF_CS64 0x10
#define TDVF_DS 0x18

/* Intel SDM vol. 3A, "Typical AP Initialization Sequence" (as arch/x86/smp.c). */
#define INIT_WAIT_NS (10 * 1000 * 1000ULL)
#define SIPI_WAIT_NS (200 * 1000ULL)
/* How long the emulated firmware waits for its APs to reach the mailbox loop. */
#define TDVF_LOOP_WAIT_NS (10 * 1000 * 1000 * 1000ULL)

/*
 * The TD's vCPUs are QEMU's (each one TDH.VP.INIT), whatever the firmware does with them:
 * the emulated host's list, read from QEMU's MADT before any stand-in changes it; the
 * firmware's own count only if the host has none.
 */
u32 emu_tdvf_vcpus(void)
{
	return emu.host_nvcpus ? emu.host_nvcpus : 1 + emu_tdvf.naps;
}

/*
 * TDVF's MailBoxWakeUp: the vector, then the acknowledgement (a 64-bit store of 0 at the
 * command, which also clears ApicId), then `jmp rax` with RBX = the mailbox and R8 = its
 * APIC ID, in 64-bit mode on the firmware's page tables and GDT, interrupts off, and RSP
 * the same on every AP (tdvf.h, TDVF_AP_RSP): the emulator's own stack is left last.
 */
static __noreturn void jump_to_os(u64 vector, u64 mailbox, u32 apic_id, u64 rsp)
{
	const u8 *gdtr = (const u8 *)(uintptr_t)(emu_tdvf.area + TDVF_PAGE_GDT * PAGE_SIZE);

	/* From the jump on, the vCPU runs the guest's code (for the instruction observer). */
	emu_obs_hand_over();
	__asm__ volatile("lgdt (%0)\n\t"
			 "pushq %1\n\t"
			 "leaq 1f(%%rip), %%rax\n\t"
			 "pushq %%rax\n\t"
			 "lretq\n"
			 "1:\n\t"
			 "movl %2, %%eax\n\t"
			 "movl %%eax, %%ds\n\t"
			 "movl %%eax, %%es\n\t"
			 "movl %%eax, %%ss\n\t"
			 "movl %%eax, %%fs\n\t"
			 "movl %%eax, %%gs\n\t"
			 "movq %3, %%rax\n\t"
			 "movq %4, %%rbx\n\t"
			 "movl %5, %%r8d\n\t"
			 "movq %6, %%rsp\n\t"
			 "jmp *%%rax"
			 :
			 : "r"(gdtr), "i"(TDVF_CS64), "i"(TDVF_DS), "m"(vector), "m"(mailbox),
			   "m"(apic_id), "m"(rsp)
			 : "rax", "rbx", "r8", "memory");
	__builtin_unreachable();
}

/* A fault of this kind for this AP: counted as fired, so a test sees it took effect. */
static bool fault_for(u32 kind, u32 apic_id)
{
	bool hit = false;

	emu_lock();
	for (unsigned i = 0; i < emu.faults.n; i++) {
		struct emu_fault *f = &emu.faults.f[i];

		if (f->kind == kind && f->addr == apic_id) {
			f->fired++;
			hit = true;
		}
	}
	emu_unlock();
	return hit;
}

static void delay_ns(u64 ns);

/*
 * mailbox_late@ID:MS: how long this AP's run is put off after its wakeup;
 * mailbox_slow_ack@ID:MS: before it takes the command (0: not).
 */
static u64 late_for(u32 kind, u32 apic_id)
{
	u64 ms = 0;

	emu_lock();
	for (unsigned i = 0; i < emu.faults.n; i++) {
		struct emu_fault *f = &emu.faults.f[i];

		if (f->kind == kind && f->addr == apic_id && !f->fired) {
			f->fired++;
			ms = f->count;
		}
	}
	emu_unlock();
	return ms;
}

/*
 * An AP of the emulated firmware, from the trampoline (slot: its APIC ID first). It runs
 * TDVF's AsmRelocateApMailBoxLoop: spin while the command is noop; skip a command for
 * another APIC ID (unless broadcast); on wakeup acknowledge and jump; ignore commands it
 * does not know (TDVF also has test and sleep, which memaccept never sends).
 */
static __noreturn void tdvf_ap_loop(const u32 *slot)
{
	const u32 me = slot[0];
	u8 *mb = (u8 *)(uintptr_t)emu_tdvf.mailbox;

	__atomic_add_fetch(&emu_tdvf.in_loop, 1, __ATOMIC_RELEASE);
	for (;;) {
		/* TDVF compares 32 bits at the command (cmp dword [rbx + CommandOffset]). */
		u32 cmd = __atomic_load_n((u32 *)(mb + MP_MAILBOX_OFF_COMMAND), __ATOMIC_ACQUIRE);
		u32 id;

		if (cmd == MP_MAILBOX_CMD_NOOP) {
			cpu_relax();
			continue;
		}
		id = __atomic_load_n((u32 *)(mb + MP_MAILBOX_OFF_APIC_ID), __ATOMIC_ACQUIRE);
		if ((id != me && id != MB_APIC_ID_BROADCAST) || cmd != MP_MAILBOX_CMD_WAKEUP) {
			cpu_relax();
			continue;
		}
		/*
		 * emu_fault=mailbox_ignore@ID: the host never runs this vCPU again (a VMM may
		 * postpone a vCPU indefinitely: Linux madt_wakeup.c acpi_wakeup_cpu). It never
		 * acknowledges.
		 */
		if (fault_for(FAULT_MAILBOX_IGNORE, me))
			for (;;)
				raw_halt();
		/*
		 * emu_fault=mailbox_slow_ack@ID:MS: the host runs this vCPU MS ms late, before
		 * it takes the command (a descheduled vCPU on an overcommitted host).
		 */
		u64 slow_ms = late_for(FAULT_MAILBOX_SLOW_ACK, me);

		if (slow_ms)
			delay_ns(slow_ms * 1000000ULL);
		u64 vector = __atomic_load_n((u64 *)(mb + MP_MAILBOX_OFF_VECTOR), __ATOMIC_ACQUIRE);

		emu_count("tdvf_mailbox_wakeups");
		__atomic_store_n((u64 *)(mb + MP_MAILBOX_OFF_COMMAND), 0, __ATOMIC_RELEASE);
		/* emu_fault=mailbox_ack_only@ID: acknowledged, then the host stops running it. */
		if (fault_for(FAULT_MAILBOX_ACK_ONLY, me))
			for (;;)
				raw_halt();
		/* emu_fault=mailbox_late@ID:MS: the host runs the woken vCPU MS ms late. */
		u64 late_ms = late_for(FAULT_MAILBOX_LATE, me);

		if (late_ms)
			delay_ns(late_ms * 1000000ULL);
		jump_to_os(vector, emu_tdvf.mailbox, me, emu_tdvf.ap_rsp);
	}
}

static void delay_ns(u64 ns)
{
	for (u64 t0 = tsc_now_ns(); tsc_now_ns() - t0 < ns;)
		cpu_relax();
}

/*
 * emu_fault=tdvf_old_ap_tables: TDVF before edk2-stable202411 ran its waiting APs on its
 * SEC page tables, PcdOvmfSecPageTablesBase 0x800000, 0x6000 bytes, in memory its map
 * reported usable (arch/x86/tdx/tdx.h). Here: the same identity map as the loop area's
 * (PML4, PDPT, four PDs: six pages) built there, after ExitBootServices, where OVMF's map
 * also calls it usable; a checksum taken now tells at the end whether the OS left it alone.
 */
#define OLD_TABLES TDVF_SEC_PAGE_TABLES
#define OLD_TABLES_SIZE TDVF_SEC_PAGE_TABLES_SIZE

static u64 old_tables_sum(void)
{
	const u64 *p = (const u64 *)(uintptr_t)OLD_TABLES;
	u64 h = 14695981039346656037ULL;	/* FNV-1a over the words */

	/* Without the accessed and dirty bits, which the APs' own walks set. */
	for (u64 i = 0; i < OLD_TABLES_SIZE / 8; i++)
		h = (h ^ (p[i] & ~(PTE_A | PTE_D))) * 1099511628211ULL;
	return h | 1;
}

void emu_tdvf_identity_tables(u64 base)
{
	u64 *pml4 = (u64 *)(uintptr_t)base, *pdpt = pml4 + 512;

	memset(pml4, 0, 6 * PAGE_SIZE);
	pml4[0] = (u64)(uintptr_t)pdpt | PTE_P | PTE_W;
	for (u64 g = 0; g < 4; g++) {
		u64 *pd = pml4 + (2 + g) * 512;

		pdpt[g] = (u64)(uintptr_t)pd | PTE_P | PTE_W;
		for (u64 j = 0; j < 512; j++)
			pd[j] = (g * GiB + j * 2 * MiB) | PTE_P | PTE_W | PTE_PS;
	}
}

static u32 build_old_tables(void)
{
	emu_tdvf_identity_tables(OLD_TABLES);
	emu_tdvf.old_tables_sum = old_tables_sum();
	return (u32)OLD_TABLES;
}

/* Bytes of the checked top of the APs' shared stack that no longer hold the pattern. */
static u64 ap_stack_written(void)
{
	const u8 *p = (const u8 *)(uintptr_t)(emu_tdvf.ap_rsp - TDVF_AP_STACK_CHECK);
	u64 n = 0;

	for (u64 i = 0; i < TDVF_AP_STACK_CHECK; i++)
		n += p[i] != TDVF_AP_STACK_PATTERN;
	return n;
}

void emu_tdvf_report(void)
{
	if (emu_tdvf.ap_rsp)
		ev_u64("tdvf_ap_stack_written", ap_stack_written());
	if (emu_tdvf.old_tables_sum)
		ev_u64("tdvf_old_tables_intact", old_tables_sum() == emu_tdvf.old_tables_sum);
}

/*
 * On a real TD the APs are in TDVF's loop before the OS runs. Under QEMU they sit in
 * OVMF's own AP loop (OVMF parks them again at ExitBootServices), so the emulator, in the
 * role of the firmware, starts them with INIT-SIPI-SIPI into the trampoline copied to
 * its own ACPI NVS page below 1 MiB, under its own identity tables in the loop area: all
 * memory the kernel never hands out.
 */
void emu_tdvf_start_aps(void)
{
	u64 stacks[MAX_CPUS], args[MAX_CPUS];
	u32 root = (u32)(emu_tdvf.area + TDVF_PAGE_PML4 * PAGE_SIZE);

	if (!emu_tdvf.area || !emu_tdvf.sipi_page || !emu_tdvf.naps)
		return;
	/* The loop runs in this image, under tables that map the first 4 GiB only. */
	if ((u64)(uintptr_t)tdvf_ap_loop >= 4 * GiB || (u64)(uintptr_t)&emu_tdvf >= 4 * GiB ||
	    (u64)(uintptr_t)&emu >= 4 * GiB) {
		kprintf("emu: the test image lies above 4 GiB; the emulated firmware's APs stay where "
			"they are\n");
		return;
	}
	if (emu_fault_take(&emu.faults, FAULT_TDVF_OLD_AP_TABLES, 0, 0))
		root = build_old_tables();
	/* A firmware in five-level paging runs its APs in it too (emu_fault=la57). */
	if (read_cr4() & CR4_LA57) {
		u64 *pml5 = (u64 *)(uintptr_t)(emu_tdvf.area + TDVF_PAGE_PML5 * PAGE_SIZE);

		memset(pml5, 0, PAGE_SIZE);
		pml5[0] = root | PTE_P | PTE_W;
		root = (u32)(uintptr_t)pml5;
	}
	for (unsigned i = 0; i < emu_tdvf.naps; i++) {
		stacks[i] = emu_tdvf.area + (TDVF_PAGE_STACKS + i + 1) * PAGE_SIZE;
		args[i] = 0;
	}
	smp_arch_tramp_install(emu_tdvf.sipi_page, root, (u64)(uintptr_t)tdvf_ap_loop, emu_tdvf.ap_ids,
			       stacks, args, emu_tdvf.naps);
	for (unsigned i = 0; i < emu_tdvf.naps; i++)
		emu_send_init(emu_tdvf.ap_ids[i]);
	delay_ns(INIT_WAIT_NS);
	for (unsigned i = 0; i < emu_tdvf.naps; i++)
		emu_send_startup(emu_tdvf.ap_ids[i], (u8)(emu_tdvf.sipi_page >> PAGE_SHIFT));
	delay_ns(SIPI_WAIT_NS);
	for (unsigned i = 0; i < emu_tdvf.naps; i++)
		emu_send_startup(emu_tdvf.ap_ids[i], (u8)(emu_tdvf.sipi_page >> PAGE_SHIFT));
	/*
	 * In a real TD the APs wait in TDVF's loop before the OS runs: the OS's deadline must
	 * not pay for QEMU starting them here (16 vCPUs under TCG on a busy two-core host
	 * took over a second).
	 */
	for (u64 t0 = tsc_now_ns(); __atomic_load_n(&emu_tdvf.in_loop, __ATOMIC_ACQUIRE) < emu_tdvf.naps &&
				    tsc_now_ns() - t0 < TDVF_LOOP_WAIT_NS;)
		cpu_relax();
	kprintf("emu: %u of %u AP(s) of the emulated TD firmware in its mailbox loop (mailbox %#llx)\n",
		__atomic_load_n(&emu_tdvf.in_loop, __ATOMIC_ACQUIRE), emu_tdvf.naps, emu_tdvf.mailbox);
}

/*
 * The guest sends INIT or STARTUP. KVM blocks both for a TD vCPU
 * (arch/x86/kvm/vmx/main.c vt_apic_init_signal_blocked: "INIT and SIPI are always
 * blocked for TDX"; vt_vcpu_reset), so on a real TD the AP would never start and the
 * guest would wait in vain. The emulator makes that mistake loud: it ends the VM.
 */
void emu_guest_ipi(u32 dest, bool init_or_startup)
{
	if (emu.mode == EMU_SNP) {
		emu_snp_guest_ipi(dest, init_or_startup);	/* emu.c */
		return;
	}
	if (emu.mode != EMU_TDX || !init_or_startup)
		return;
	emu_count("guest_init_sipi");
	emu_host_stops_guest(dest, "the TD sent INIT or STARTUP to another vCPU: KVM blocks INIT and "
				   "SIPI for TD vCPUs, a real TD never starts one this way");
}
