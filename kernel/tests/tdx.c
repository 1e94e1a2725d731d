/* SPDX-License-Identifier: MIT */
/* memaccept: TDX test cases on the emulator (platform=tdx-emu): staged #VEs, raw port I/O, a level-2 accept, a guest INIT. */
#include "arch/x86/apic.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/emu/tdvf.h"
#include "arch/x86/msr.h"
#include "arch/x86/platform.h"
#include "arch/x86/tdx/tdx.h"
#include "drivers/exit.h"
#include "drivers/console.h"
#include "include/panic.h"
#include "include/smp.h"
#include "kernel/smp.h"
#include "kernel/testcase.h"
#include "mm/accept.h"
#include "mm/page_alloc.h"

/* Deliver vector 20 the way the CPU would (no error code), after staging its info. */
static void raise_ve(void)
{
	__asm__ volatile("int $20" : : : "memory");
}

TESTCASE(tdx_ve_unaccepted, "a #VE for an EPT violation on an unaccepted GPA is reported and terminates")
{
	u64 unit;

	CHECK(emu_mode() == EMU_TDX);
	CHECK(bitmap_next(palloc_bitmap(), 0, &unit));
	testcase_announce_stray(unit + 0x40);
	emu_stage_ve(EXIT_REASON_EPT_VIOLATION, 0x181, unit + 0x40, unit + 0x40, 0);
	raise_ve();
	return EXIT_TEST_FAILED;
}

TESTCASE(tdx_ve_unexpected, "a #VE the guest cannot handle (WBINVD) is reported and terminates")
{
	CHECK(emu_mode() == EMU_TDX);
	emu_stage_ve(EXIT_REASON_WBINVD, 0, 0, 0, 2);
	raise_ve();
	return EXIT_TEST_FAILED;
}

TESTCASE(tdx_ve_cpuid, "a #VE for a hypervisor CPUID leaf is emulated through TDVMCALL<Instruction.CPUID>")
{
	struct cpuid_regs got, want;

	CHECK(emu_mode() == EMU_TDX);
	/* The #VE as the module raises it: RIP at a CPUID, length 2 reported. */
	emu_ve_cpuid(0x40000000, 0, &got);
	/* What the emulated VMM answers for the leaf (QEMU's own CPUID). */
	emu_host_enter();
	raw_cpuid(0x40000000, 0, &want);
	emu_host_leave();
	CHECK(got.eax == want.eax && got.ebx == want.ebx && got.ecx == want.ecx && got.edx == want.edx);
	return EXIT_OK;
}

TESTCASE(tdx_ve_cpuid_zeros, "a #VE for a CPUID leaf outside the hypervisor range reads as zeros, as in Linux")
{
	struct cpuid_regs r;

	CHECK(emu_mode() == EMU_TDX);
	/* The brand string: the TDX module raises #VE for it (not in its CPUID table). */
	emu_ve_cpuid(0x80000002, 0, &r);
	CHECK(r.eax == 0 && r.ebx == 0 && r.ecx == 0 && r.edx == 0);
	return EXIT_OK;
}

TESTCASE(tdx_ve_msr, "a #VE for RDMSR and WRMSR goes to the VMM through TDVMCALL<Instruction.RDMSR/WRMSR>")
{
	u64 v = 0xcafedeadbeefULL;

	CHECK(emu_mode() == EMU_TDX);
	/* IA32_APIC_BASE: not among the TDX module's own MSRs; KVM answers it (x2APIC, enabled). */
	emu_ve_msr(false, MSR_APIC_BASE, &v);
	CHECK(v == 0xfee00d00);
	/* KVM refuses writes to it (tdx_is_read_only_msr): memaccept stops and says so. */
	v = 0xfee00c00;
	emu_ve_msr(true, MSR_APIC_BASE, &v);
	return EXIT_TEST_FAILED;
}

/*
 * Every instruction #VE resumes right after its instruction: the emulator puts the
 * instruction at the #VE's RIP and reports its length (1 for IN/OUT of a byte or a
 * doubleword, 2 for a word with its 0x66 prefix, 2 for CPUID), and the handler must skip
 * exactly that. Port 0x80 (POST codes) takes any size. A CPUID the handler did not skip
 * would run natively and give the brand string, not zeros.
 */
TESTCASE(tdx_ve_instruction_length, "instruction #VEs report the instruction's length and the handler skips exactly that")
{
	struct cpuid_regs r;

	CHECK(emu_mode() == EMU_TDX);
	for (int size = 1; size <= 4; size *= 2) {
		plain_io_out(0x80, 0x5a, size);
		(void)plain_io_in(0x80, size);
	}
	cpu_cpuid(0x80000002, 0, &r);
	CHECK(r.eax == 0 && r.ebx == 0 && r.ecx == 0 && r.edx == 0);
	return EXIT_OK;
}

TESTCASE(tdx_halt, "machine_halt() goes through TDVMCALL<Instruction.HLT>")
{
	CHECK(emu_mode() == EMU_TDX);
	machine_halt();	/* the model's VMM stops a TD halted with interrupts blocked */
}

TESTCASE(tdx_halt_interrupts_allowed, "TDVMCALL<Instruction.HLT> with R12 = 0 blocks until an interrupt, as KVM does; none comes")
{
	struct tdx_regs r = { .rax = TDG_VP_VMCALL, .rcx = TDVMCALL_EXPOSE_R10_R15, .r11 = TDVMCALL_HLT, .r12 = 0 };

	CHECK(emu_mode() == EMU_TDX);
	tdx_tdcall(&r);
	return EXIT_TEST_FAILED;	/* KVM would not have resumed the vCPU */
}

TESTCASE(tdx_ve_nothing_pending, "vector 20 with no #VE pending: VEINFO.GET answers TDX_NO_VALID_VE_INFO, fatal")
{
	CHECK(emu_mode() == EMU_TDX);
	raise_ve();	/* nothing staged: the handler must stop the guest */
	return EXIT_TEST_FAILED;
}

TESTCASE(tdx_accept_level_1g, "TDG.MEM.PAGE.ACCEPT at level 2 (1 GiB) answers OPERAND_INVALID on RCX")
{
	u64 unit, status;
	struct tdx_regs r = { .rax = TDG_MEM_PAGE_ACCEPT };

	CHECK(emu_mode() == EMU_TDX);
	CHECK(bitmap_next(palloc_bitmap(), 0, &unit));
	r.rcx = ALIGN_DOWN(unit, TDX_LEVEL_SIZE(TDX_LEVEL_1G)) | TDX_LEVEL_1G;
	status = tdx_tdcall(&r);
	CHECK(status == TDX_STATUS(TDX_OPERAND_INVALID, TDX_OPERAND_ID_RCX));
	/* The unit is still unaccepted: a 2 MiB accept of it is still possible. */
	return EXIT_OK;
}

TESTCASE(tdx_get_tdvmcall_info, "TDVMCALL<GetTdVmCallInfo>: R12 = 0 and 1 answer success, as KVM and QEMU; 2 INVALID_OPERAND")
{
	struct tdx_regs r = { .rax = TDG_VP_VMCALL, .rcx = TDVMCALL_EXPOSE_R10_R15, .r11 = TDVMCALL_GET_TD_VM_CALL_INFO,
			      .r12 = 0, .r13 = 13, .r14 = 14 };

	CHECK(emu_mode() == EMU_TDX);
	CHECK(tdx_tdcall(&r) == 0);
	CHECK(r.r10 == 0 && r.r11 == 0 && r.r12 == 0 && r.r13 == 0 && r.r14 == 0);
	/* Leaf 1: KVM hands it to QEMU, which lists SetupEventNotifyInterrupt (R11 bit 1). */
	r = (struct tdx_regs){ .rax = TDG_VP_VMCALL, .rcx = TDVMCALL_EXPOSE_R10_R15,
			       .r11 = TDVMCALL_GET_TD_VM_CALL_INFO, .r12 = 1, .r13 = 13, .r14 = 14 };
	CHECK(tdx_tdcall(&r) == 0);
	CHECK(r.r10 == 0 && r.r11 == 2 && r.r12 == 0 && r.r13 == 0 && r.r14 == 0);
	/* A leaf neither knows: KVM answers INVALID_OPERAND in R10. */
	r = (struct tdx_regs){ .rax = TDG_VP_VMCALL, .rcx = TDVMCALL_EXPOSE_R10_R15,
			       .r11 = TDVMCALL_GET_TD_VM_CALL_INFO, .r12 = 2 };
	CHECK(tdx_tdcall(&r) == 0);
	CHECK(r.r10 == 0x8000000000000000ULL);
	return EXIT_OK;
}

/*
 * The module copies back from the VMM only the registers the guest selected in RCX
 * (tdh_vp_enter.c save_regs_after_tdvmcall): Instruction.CPUID answers in R12-R15, and
 * with only R10-R13 selected R14 and R15 keep what the guest had in them.
 */
TESTCASE(tdx_tdvmcall_unexposed_kept, "TDVMCALL: registers the guest did not select in RCX keep their values, whatever the VMM answers")
{
	struct tdx_regs r = { .rax = TDG_VP_VMCALL, .rcx = TDVMCALL_REG(10) | TDVMCALL_REG(11) |
			      TDVMCALL_REG(12) | TDVMCALL_REG(13), .r11 = TDVMCALL_CPUID, .r12 = 0x40000000,
			      .r14 = 0x1414, .r15 = 0x1515, .rbx = 0xbb, .rdx = 0xdd };
	struct cpuid_regs want;

	CHECK(emu_mode() == EMU_TDX);
	CHECK(tdx_tdcall(&r) == 0);
	CHECK(r.r10 == 0);
	emu_host_enter();
	raw_cpuid(0x40000000, 0, &want);
	emu_host_leave();
	CHECK(r.r12 == want.eax && r.r13 == want.ebx);
	CHECK(r.r14 == 0x1414 && r.r15 == 0x1515 && r.rbx == 0xbb && r.rdx == 0xdd);
	/* RCX keeps the guest's mask. */
	CHECK(r.rcx == (TDVMCALL_REG(10) | TDVMCALL_REG(11) | TDVMCALL_REG(12) | TDVMCALL_REG(13)));
	return EXIT_OK;
}

/* Per started CPU: its APIC ID, TDG.VP.INFO R9, CPUID leaf 1 EBX[31:24]. */
static struct {
	u32 apic, r9, cpuid_id;
} seen[MAX_CPUS];

static void vcpu_index_probe(unsigned cpu, void *arg)
{
	struct tdx_regs r = { .rax = TDG_VP_INFO };
	struct cpuid_regs c;

	(void)arg;
	seen[cpu].apic = apic_id();
	seen[cpu].r9 = tdx_tdcall(&r) ? ~0u : (u32)r.r9;
	cpu_cpuid(1, 0, &c);
	seen[cpu].cpuid_id = c.ebx >> 24;
}

/*
 * The module's VCPU_INDEX (the order of TDH.VP.INIT, which QEMU issues in ascending APIC
 * ID) is what TDG.VP.INFO returns in R9 and CPUID leaf 1 in EBX[31:24] (tdg_vp_info.c;
 * td_cpuid.c): the rank of the vCPU's APIC ID, which differs from the ID itself where
 * the topology leaves gaps.
 */
TESTCASE(tdx_vcpu_index, "TDG.VP.INFO R9 and CPUID.1 EBX[31:24] give the vCPU index, not the APIC ID")
{
	unsigned slots = smp_cpu_slots();

	CHECK(emu_mode() == EMU_TDX);
	CHECK(smp_cpus_started() == emu_tdvf_vcpus());
	smp_run(vcpu_index_probe, NULL);
	for (unsigned i = 0; i < slots; i++) {
		u32 rank = 0;

		if (!smp_cpu_online(i))
			continue;
		for (unsigned j = 0; j < slots; j++)
			rank += smp_cpu_online(j) && seen[j].apic < seen[i].apic;
		kprintf("test: APIC ID %u: TDG.VP.INFO R9 %u, CPUID.1 EBX[31:24] %u, vCPU index %u\n",
			seen[i].apic, seen[i].r9, seen[i].cpuid_id, rank);
		CHECK(seen[i].r9 == rank && seen[i].cpuid_id == rank);
	}
	return EXIT_OK;
}

TESTCASE(tdx_init_sipi, "INIT to another vCPU of a TD: KVM blocks it, the emulated host ends the VM")
{
	CHECK(emu_mode() == EMU_TDX);
	/* APIC ID 1: the second vCPU QEMU creates. Reaching the next line is the failure. */
	apic_send_init(1);
	return EXIT_TEST_FAILED;
}
