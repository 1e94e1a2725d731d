/* SPDX-License-Identifier: MIT */
/* memaccept: SEV-SNP #VC test cases (platform=snp-emu): a #VC cannot be raised under plain
 * QEMU, so each case builds the frame the CPU would push and runs the handlers on it. */
#include "arch/x86/cpu.h"
#include "arch/x86/desc.h"
#include "arch/x86/msr.h"
#include "arch/x86/emu/emu.h"
#include "arch/x86/paging.h"
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/svsm.h"
#include "drivers/console.h"
#include "include/panic.h"
#include "kernel/testcase.h"
#include "mm/accept.h"
#include "mm/page_alloc.h"

static void vc_frame(struct trap_frame *f, u64 exit_code, const void *insn)
{
	*f = (struct trap_frame){ .vector = VEC_VC, .error_code = exit_code };
	f->rip = (u64)(uintptr_t)insn;
	f->cs = KERNEL_CS;
	f->ss = KERNEL_DS;
	/* As if the fault happened here: the report's backtrace starts from this frame. */
	f->rbp = (u64)(uintptr_t)__builtin_frame_address(0);
}

static void write_cr2(u64 v)
{
	__asm__ volatile("mov %0, %%cr2" : : "r"(v) : "memory");
}

TESTCASE(snp_vc_unvalidated, "a #VC PAGE_NOT_VALIDATED inside the unaccepted span is reported and terminates")
{
	struct trap_frame f;
	static const u8 load[] = { 0x48, 0x8b, 0x00 };	/* mov (%rax), %rax */
	u64 unit;

	CHECK(emu_mode() == EMU_SNP);
	CHECK(bitmap_next(palloc_bitmap(), 0, &unit));
	testcase_announce_stray(unit + 0x80);
	vc_frame(&f, SVM_EXIT_PAGE_NOT_VALIDATED, load);
	f.rax = unit + 0x80;
	write_cr2(unit + 0x80);
	trap_dispatch(&f);
	return EXIT_TEST_FAILED;
}

TESTCASE(snp_vc_ioio, "a #VC for OUT and IN goes to the hypervisor through the GHCB")
{
	static const u8 out_dx_al[] = { 0xee }, in_al_dx[] = { 0xec };
	struct trap_frame f;

	CHECK(emu_mode() == EMU_SNP);
	vc_frame(&f, SVM_EXIT_IOIO, out_dx_al);
	f.rdx = 0x3f8;
	f.rax = '#';
	trap_dispatch(&f);
	CHECK(f.rip == (u64)(uintptr_t)out_dx_al + 1);

	/* COM1's line status register: the transmitter is idle, so THRE (bit 5) is set. */
	vc_frame(&f, SVM_EXIT_IOIO, in_al_dx);
	f.rdx = 0x3fd;
	f.rax = 0xabcdef00;
	trap_dispatch(&f);
	CHECK(f.rip == (u64)(uintptr_t)in_al_dx + 1);
	CHECK((f.rax & 0xffffff00) == 0xabcdef00);	/* only AL changes */
	CHECK(f.rax & 0x20);

	/*
	 * IN EAX: a 32-bit destination zero-extends into RAX (Intel SDM vol. 1, 3.4.1.1). The
	 * ACPI PM timer of q35 (port 0x608) is read 32 bits wide.
	 */
	static const u8 in_eax_dx[] = { 0xed };

	vc_frame(&f, SVM_EXIT_IOIO, in_eax_dx);
	f.rdx = 0x608;
	f.rax = 0xffffffff00000000ULL;
	trap_dispatch(&f);
	CHECK(f.rip == (u64)(uintptr_t)in_eax_dx + 1);
	CHECK((f.rax >> 32) == 0);
	return EXIT_OK;
}

TESTCASE(snp_vc_cpuid, "a #VC for CPUID goes to the hypervisor through the GHCB")
{
	static const u8 cpuid[] = { 0x0f, 0xa2 };
	struct trap_frame f;

	CHECK(emu_mode() == EMU_SNP);
	vc_frame(&f, SVM_EXIT_CPUID, cpuid);
	f.rax = 0x8000001f;
	trap_dispatch(&f);
	CHECK(f.rip == (u64)(uintptr_t)cpuid + 2);
	CHECK((f.rax & (1u << 4)) != 0);	/* SEV-SNP */
	CHECK((f.rbx & 0x3f) == (u64)__builtin_ctzll(platform->private_pte_bits));
	return EXIT_OK;
}

/*
 * The answer to an exit comes back with SW_EXITINFO1 and SW_EXITINFO2 marked valid in
 * the GHCB's bitmap, as KVM writes them (ghcb_set_sw_exit_info_1/2). Read before any
 * console output, which is an exit of its own.
 */
TESTCASE(snp_ghcb_answer_valid, "the hypervisor marks SW_EXITINFO1 and SW_EXITINFO2 valid in its answer")
{
	static const u8 cpuid[] = { 0x0f, 0xa2 };
	struct trap_frame f;
	bool info1, info2;
	u8 *g;

	CHECK(emu_mode() == EMU_SNP);
	emu_host_enter();
	g = (u8 *)(uintptr_t)emu_self()->ghcb_gpa;
	emu_host_leave();
	CHECK(g);
	vc_frame(&f, SVM_EXIT_CPUID, cpuid);
	f.rax = 0x8000001f;
	trap_dispatch(&f);
	info1 = ghcb_field_valid(g, GHCB_SW_EXIT_INFO_1);
	info2 = ghcb_field_valid(g, GHCB_SW_EXIT_INFO_2);
	kprintf("test: SW_EXITINFO1 valid %d, SW_EXITINFO2 valid %d\n", info1, info2);
	CHECK(info1 && info2);
	return EXIT_OK;
}

TESTCASE(snp_vc_rdtsc, "a #VC for RDTSC (a hypervisor that intercepts it) goes through the GHCB")
{
	static const u8 rdtsc[] = { 0x0f, 0x31 };
	struct trap_frame f;
	u64 before = rdtsc_ordered();

	CHECK(emu_mode() == EMU_SNP);
	vc_frame(&f, SVM_EXIT_RDTSC, rdtsc);
	trap_dispatch(&f);
	CHECK(f.rip == (u64)(uintptr_t)rdtsc + 2);
	CHECK(((f.rdx << 32) | f.rax) >= before);
	return EXIT_OK;
}

TESTCASE(snp_vc_unexpected, "a #VC the guest cannot handle (WBINVD) is reported and terminates")
{
	static const u8 wbinvd[] = { 0x0f, 0x09 };
	struct trap_frame f;

	CHECK(emu_mode() == EMU_SNP);
	vc_frame(&f, SVM_EXIT_WBINVD, wbinvd);
	trap_dispatch(&f);
	return EXIT_TEST_FAILED;
}

TESTCASE(snp_vc_msr, "a #VC for RDMSR and WRMSR goes to the hypervisor through the GHCB")
{
	static const u8 rdmsr[] = { 0x0f, 0x32 }, wrmsr[] = { 0x0f, 0x30 };
	struct trap_frame f;

	CHECK(emu_mode() == EMU_SNP);
	/* IA32_APIC_BASE: intercepted for every SEV-ES/SNP guest; KVM answers it. */
	vc_frame(&f, SVM_EXIT_MSR, rdmsr);
	f.rcx = MSR_APIC_BASE;
	f.rax = f.rdx = 0xdeadbeefcafef00dULL;
	trap_dispatch(&f);
	CHECK(f.rip == (u64)(uintptr_t)rdmsr + 2);
	CHECK((f.rax & 0xfffff000) == 0xfee00000 && (f.rax & (1u << 11)));	/* base, enabled */
	CHECK(f.rdx == 0);
	/* A write KVM refuses (it asks for a #GP): memaccept has no use for it and stops. */
	vc_frame(&f, SVM_EXIT_MSR, wrmsr);
	f.rcx = MSR_APIC_BASE;
	f.rax = 0xfee00900;
	trap_dispatch(&f);
	return EXIT_TEST_FAILED;
}

TESTCASE(snp_vc_cpuid_xsave, "a #VC for CPUID leaf 0xD carries XCR0, which KVM requires")
{
	static const u8 cpuid[] = { 0x0f, 0xa2 };
	struct trap_frame f;
	struct cpuid_regs want;

	CHECK(emu_mode() == EMU_SNP);
	vc_frame(&f, SVM_EXIT_CPUID, cpuid);
	f.rax = CPUID_XSAVE_LEAF;
	f.rcx = 0;
	trap_dispatch(&f);
	CHECK(f.rip == (u64)(uintptr_t)cpuid + 2);
	/* The emulated VMM answers leaf 0xD with what the (TCG) CPU says. */
	emu_host_enter();
	raw_cpuid(CPUID_XSAVE_LEAF, 0, &want);
	emu_host_leave();
	CHECK(f.rax == want.eax && f.rbx == want.ebx && f.rcx == want.ecx && f.rdx == want.edx);
	return EXIT_OK;
}

/*
 * Mapping mistakes the SNP model must catch. Each case makes one on purpose and would
 * go on to report a failure if the emulated platform let it through.
 */
TESTCASE(snp_pvalidate_shared_mapping, "PVALIDATE through a mapping without the C-bit is caught")
{
	u64 page = palloc_alloc(0);
	bool no_update = false;

	CHECK(emu_mode() == EMU_SNP && page);
	/* The page is validated and private; map it as if it were shared (no C-bit). */
	CHECK(paging_map(page, page + PAGE_SIZE, MAP_SHARED) == 0);
	invlpg(page);
	kprintf("test: PVALIDATE (rescind) of %#llx through a mapping without the C-bit\n", page);
	u32 rc = snp_pvalidate(page, PVALIDATE_4K, 0, &no_update);

	kprintf("test: the platform let it through (rc %u)\n", rc);
	return EXIT_TEST_FAILED;
}

TESTCASE(snp_ghcb_mapped_private, "a GHCB mapped with the C-bit is caught at the next exit")
{
	u64 ghcb;

	CHECK(emu_mode() == EMU_SNP);
	emu_host_enter();
	ghcb = emu_self()->ghcb_gpa;
	emu_host_leave();
	CHECK(ghcb);
	kprintf("test: mapping the GHCB at %#llx with the C-bit\n", ghcb);
	CHECK(paging_map(ghcb, ghcb + PAGE_SIZE, MAP_RAM) == 0);
	invlpg(ghcb);
	/* Console output is an IOIO exit through the GHCB. */
	kprintf("test: the platform let an exit through a private GHCB\n");
	return EXIT_TEST_FAILED;
}

TESTCASE(snp_pvalidate_unmapped, "PVALIDATE of an address the page tables do not map is caught")
{
	bool no_update = false;
	u64 unit;

	/* Unaccepted units are not mapped until they are accepted. */
	CHECK(emu_mode() == EMU_SNP);
	CHECK(bitmap_next(palloc_bitmap(), 0, &unit));
	CHECK(paging_lookup(unit) == 0);
	kprintf("test: PVALIDATE of %#llx, which is not mapped\n", unit);
	u32 rc = snp_pvalidate(unit, PVALIDATE_4K, 1, &no_update);

	kprintf("test: the platform let it through (rc %u)\n", rc);
	return EXIT_TEST_FAILED;
}

/*
 * Reserved bits 11:4 of an SVSM PVALIDATE entry: COCONUT-SVSM's core_pvalidate_one
 * answers INVALID_PARAMETER for an entry with any of them set and stops there, cur_index
 * on that entry. The entry names a page that is already validated, with ignore_cf, so
 * an SVSM that let it through would change nothing and answer success.
 */
TESTCASE(snp_svsm_pvalidate_reserved, "an SVSM PVALIDATE entry with a reserved bit set is refused")
{
	struct svsm_pval_req *req = (struct svsm_pval_req *)(uintptr_t)palloc_alloc(0);
	u64 page = palloc_alloc(0), entry, rc;

	CHECK(emu_mode() == EMU_SNP && snp_guest_vmpl() != 0 && req && page);
	entry = SVSM_PVAL_ENTRY(page, 0, 1) | 1ULL << 3;	/* 4 KiB, validate, ignore_cf */
	for (unsigned bit = 4; bit < 12; bit++) {
		*req = (struct svsm_pval_req){ .num_entries = 2, .cur_index = 0 };
		req->entries[0] = entry;
		req->entries[1] = entry | 1ULL << bit;
		rc = snp_svsm_pvalidate_call(req);
		kprintf("test: reserved bit %u: RAX %#llx, cur_index %u\n", bit, rc, req->cur_index);
		CHECK(rc == SVSM_ERR_INVALID_PARAMETER && req->cur_index == 1);
	}
	/* The same entry without the bit is taken. */
	*req = (struct svsm_pval_req){ .num_entries = 1, .cur_index = 0 };
	req->entries[0] = entry;
	rc = snp_svsm_pvalidate_call(req);
	CHECK(rc == SVSM_SUCCESS && req->cur_index == 1);
	return EXIT_OK;
}
