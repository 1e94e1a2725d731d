/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the TDX accept splitter, its status handling and the #VE emulation, with a scripted TDCALL. */
#include <setjmp.h>
#include <string.h>
#include "arch/x86/tdx/tdx.h"
#include "arch/x86/tdx/ve_emul.h"
#include "tests/unit/unit.h"

/* The mock TDX module: a script of statuses, then success; every call is recorded. */
#define MAX_CALLS 4096

static struct {
	u64 gpa_level[MAX_CALLS];
	unsigned n;
	u64 script[16];		/* statuses returned by the first calls, in order */
	unsigned nscript;
	u64 mismatch_gpa;	/* accepts above 4K covering this GPA answer PAGE_SIZE_MISMATCH */
	bool mismatch;
} mock;
static u64 zeroed_start, zeroed_len, fatal_status, fatal_gpa;
static u32 fatal_condition;
static unsigned warns, fatal_calls;
static jmp_buf fatal_jmp;

static u64 mock_accept(u64 gpa_level)
{
	unsigned level = gpa_level & 7;
	u64 gpa = gpa_level & ~0xfffULL;

	if (mock.n < MAX_CALLS)
		mock.gpa_level[mock.n] = gpa_level;
	mock.n++;
	/* As the TDX 1.5 module: levels above 2 MiB are an invalid operand (RCX). */
	if (level > TDX_LEVEL_2M)
		return TDX_STATUS(TDX_OPERAND_INVALID, TDX_OPERAND_ID_RCX);
	if (mock.n <= mock.nscript)
		return mock.script[mock.n - 1];
	if (mock.mismatch && level > TDX_LEVEL_4K && mock.mismatch_gpa >= gpa &&
	    mock.mismatch_gpa < gpa + TDX_LEVEL_SIZE(level))
		return (u64)TDX_PAGE_SIZE_MISMATCH << 32 | 1;
	return 0;
}

static void mock_zero(u64 start, u64 len)
{
	zeroed_start = start;
	zeroed_len = len;
}

static void mock_fatal(u32 condition, const char *what, u64 status, u64 gpa, unsigned level)
{
	(void)what, (void)level;
	fatal_calls++;
	fatal_condition = condition;
	fatal_status = status;
	fatal_gpa = gpa;
	longjmp(fatal_jmp, 1);
}

static void mock_warn(const char *what, u64 gpa, unsigned level)
{
	(void)what, (void)gpa, (void)level;
	warns++;
}

/* A mock clock: every busy retry's pause moves it by relax_step_ns. */
static u64 mock_now, relax_step_ns;

static u64 mock_now_ns(void)
{
	return mock_now;
}

static void mock_relax(void)
{
	mock_now += relax_step_ns;
}

static const struct tdx_accept_ops ops = { mock_accept, mock_zero, mock_fatal, mock_warn, mock_now_ns,
					   mock_relax };

static void reset(void)
{
	memset(&mock, 0, sizeof(mock));
	zeroed_start = zeroed_len = fatal_status = fatal_gpa = 0;
	mock_now = 123456789;
	relax_step_ns = 1000;
	fatal_condition = 0;
	warns = fatal_calls = 0;
}

/* Run the splitter; returns true if it ended in the fatal hook. */
static bool accept(u64 start, u64 end, struct tdx_accept_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (setjmp(fatal_jmp))
		return true;
	tdx_accept_range(start, end, &ops, st);
	return false;
}

TEST(tdx_never_1g_largest_is_2m)
{
	struct tdx_accept_stats st;

	reset();
	/* [1G - 4K, 3G + 2M + 4K): 4K at 1G - 4K, 2M pages up to 3G + 2M, a last 4K. */
	EXPECT(!accept(GiB - PAGE_SIZE, 3 * GiB + UNIT_SIZE + PAGE_SIZE, &st));
	EXPECT_EQ(fatal_calls, 0);
	EXPECT_EQ(mock.n, 1 + 1024 + 1 + 1);
	EXPECT_EQ(mock.gpa_level[0], (GiB - PAGE_SIZE) | TDX_LEVEL_4K);
	EXPECT_EQ(mock.gpa_level[1], GiB | TDX_LEVEL_2M);
	EXPECT_EQ(mock.gpa_level[1025], (3 * GiB) | TDX_LEVEL_2M);
	EXPECT_EQ(mock.gpa_level[1026], (3 * GiB + UNIT_SIZE) | TDX_LEVEL_4K);
	/* The module rejects level 2: no call may ask for it, even for whole GiBs. */
	for (unsigned i = 0; i < mock.n; i++)
		EXPECT((mock.gpa_level[i] & 7) <= TDX_LEVEL_2M);
	EXPECT_EQ(st.accepted[TDX_LEVEL_2M], 1025);
	EXPECT_EQ(st.accepted[TDX_LEVEL_4K], 2);
	EXPECT_EQ(st.tdcalls, 1027);
}

TEST(tdx_unaligned_2m_runs_use_2m_pages)
{
	struct tdx_accept_stats st;

	reset();
	/* 2M-aligned but not 1G-aligned: 2M pages only, one call per unit. */
	EXPECT(!accept(GiB + UNIT_SIZE, GiB + 9 * UNIT_SIZE, &st));
	EXPECT_EQ(mock.n, 8);
	EXPECT_EQ(st.accepted[TDX_LEVEL_2M], 8);
	for (unsigned i = 0; i < 8; i++)
		EXPECT_EQ(mock.gpa_level[i] & 7, TDX_LEVEL_2M);
}

TEST(tdx_size_mismatch_falls_back_one_level)
{
	struct tdx_accept_stats st;

	reset();
	mock.mismatch = true;
	mock.mismatch_gpa = GiB + 5 * UNIT_SIZE + 0x3000;
	/* 512 2M accepts; the one covering the mismatch is redone as 512 4K accepts. */
	EXPECT(!accept(GiB, 2 * GiB, &st));
	EXPECT_EQ(st.size_mismatch, 1);
	EXPECT_EQ(st.accepted[TDX_LEVEL_2M], 511);
	EXPECT_EQ(st.accepted[TDX_LEVEL_4K], 512);
	EXPECT_EQ(st.tdcalls, 512 + 512);
	/* The 4K pieces cover exactly the failing unit, in order, right after it. */
	EXPECT_EQ(mock.gpa_level[5], (GiB + 5 * UNIT_SIZE) | TDX_LEVEL_2M);
	EXPECT_EQ(mock.gpa_level[6], (GiB + 5 * UNIT_SIZE) | TDX_LEVEL_4K);
	EXPECT_EQ(mock.gpa_level[6 + 511], (GiB + 6 * UNIT_SIZE - PAGE_SIZE) | TDX_LEVEL_4K);
	EXPECT_EQ(mock.gpa_level[6 + 512], (GiB + 6 * UNIT_SIZE) | TDX_LEVEL_2M);
}

TEST(tdx_size_mismatch_at_4k_is_fatal)
{
	struct tdx_accept_stats st;

	reset();
	mock.script[0] = (u64)TDX_PAGE_SIZE_MISMATCH << 32;
	mock.nscript = 1;
	EXPECT(accept(GiB, GiB + PAGE_SIZE, &st));
	EXPECT_EQ(fatal_condition, FC_ACCEPT_STATUS);
	EXPECT_EQ(fatal_gpa, GiB);
}

TEST(tdx_busy_is_retried_then_fatal)
{
	struct tdx_accept_stats st;

	reset();
	for (unsigned i = 0; i < 3; i++)
		mock.script[i] = (u64)TDX_OPERAND_BUSY << 32 | 1;
	mock.nscript = 3;
	EXPECT(!accept(GiB, GiB + UNIT_SIZE, &st));
	EXPECT_EQ(st.busy_retries, 3);
	EXPECT_EQ(st.accepted[TDX_LEVEL_2M], 1);

	/*
	 * Busy for 16 calls, 1 s apart: the host held priority for 15 s, past the retry
	 * time (10 s): fatal once the time is up, after 10 retries, not at a fixed count.
	 */
	reset();
	relax_step_ns = 1000ULL * 1000 * 1000;
	for (unsigned i = 0; i < 16; i++)
		mock.script[i] = (u64)TDX_OPERAND_BUSY << 32 | 1;
	mock.nscript = 16;
	EXPECT(accept(GiB, GiB + UNIT_SIZE, &st));
	EXPECT_EQ(fatal_condition, FC_ACCEPT_RETRIES);
	EXPECT_EQ(st.busy_retries, TDX_BUSY_TIMEOUT_NS / relax_step_ns);
	EXPECT_EQ(mock.n, TDX_BUSY_TIMEOUT_NS / relax_step_ns + 1);
}

TEST(tdx_busy_is_retried_by_time_not_count)
{
	struct tdx_accept_stats st;

	/*
	 * 16 busy answers 0.5 s apart (8 s, under the retry time): the module's default
	 * host-priority timeout is 1 s, so a host may keep an entry this long; the accept
	 * goes through.
	 */
	reset();
	relax_step_ns = 500ULL * 1000 * 1000;
	for (unsigned i = 0; i < 16; i++)
		mock.script[i] = (u64)TDX_OPERAND_BUSY << 32 | 1;
	mock.nscript = 16;
	EXPECT(!accept(GiB, GiB + UNIT_SIZE, &st));
	EXPECT_EQ(st.busy_retries, 16);
	EXPECT_EQ(st.accepted[TDX_LEVEL_2M], 1);
}

TEST(tdx_already_accepted_is_zeroed_and_counted)
{
	struct tdx_accept_stats st;

	reset();
	/* A warning status (bit 63 clear) with operand details in the low bits. */
	mock.script[0] = (u64)TDX_PAGE_ALREADY_ACCEPTED << 32 | 0x11;
	mock.nscript = 1;
	EXPECT(!accept(GiB, GiB + UNIT_SIZE, &st));
	EXPECT_EQ(st.already_accepted, 512);
	EXPECT_EQ(zeroed_start, GiB);
	EXPECT_EQ(zeroed_len, UNIT_SIZE);
	EXPECT_EQ(warns, 1);
	EXPECT_EQ(fatal_calls, 0);
}

TEST(tdx_unknown_status_is_fatal)
{
	struct tdx_accept_stats st;
	static const u64 bad[] = {
		0xC000000100000000ULL,	/* an error class the guest does not handle */
		0x8000020100000000ULL,	/* busy's neighbour: compared on all of bits 63:32 */
		0x0000000100000000ULL,	/* a warning other than ALREADY_ACCEPTED */
	};

	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		reset();
		mock.script[0] = bad[i];
		mock.nscript = 1;
		EXPECT(accept(2 * GiB, 2 * GiB + PAGE_SIZE, &st));
		EXPECT_EQ(fatal_status, bad[i]);
		EXPECT_EQ(fatal_condition, FC_ACCEPT_STATUS);
	}
}

/* Run the unaccepted-memory probe of one unit; returns true if it ended in the fatal hook. */
static bool probe_unit(u64 unit, struct tdx_accept_stats *st, struct unaccepted_probe *pr)
{
	memset(st, 0, sizeof(*st));
	memset(pr, 0, sizeof(*pr));
	if (setjmp(fatal_jmp))
		return true;
	tdx_probe_unaccepted_unit(unit, &ops, st, pr);
	return false;
}

/*
 * unaccepted.probe: every page of the unit asked at 4 KiB. Pending pages are accepted
 * (the expected answer), an already accepted one is recorded, zeroed and counted, a busy
 * one tells nothing and is retried as on the normal path.
 */
TEST(tdx_probe_unaccepted_unit_answers_per_page)
{
	struct tdx_accept_stats st;
	struct unaccepted_probe pr;

	reset();
	mock.script[0] = 0;
	mock.script[1] = (u64)TDX_PAGE_ALREADY_ACCEPTED << 32;
	mock.script[2] = (u64)TDX_OPERAND_BUSY << 32 | 1;
	mock.nscript = 3;
	EXPECT(!probe_unit(GiB, &st, &pr));
	EXPECT_EQ(fatal_calls, 0);
	EXPECT_EQ(pr.pages[PROBE_NOT_ACCEPTED], 510);
	EXPECT_EQ(pr.pages[PROBE_ACCEPTED], 1);
	EXPECT_EQ(pr.pages[PROBE_UNKNOWN], 1);
	EXPECT_EQ(pr.first_accepted, GiB + PAGE_SIZE);
	EXPECT_EQ(zeroed_start, GiB + PAGE_SIZE);
	EXPECT_EQ(zeroed_len, PAGE_SIZE);
	EXPECT_EQ(st.already_accepted, 1);
	EXPECT_EQ(st.busy_retries, 1);
	/* 512 asks and the busy page's retry, all at 4 KiB, one per page in order. */
	EXPECT_EQ(mock.n, 513);
	EXPECT_EQ(st.tdcalls, 513);
	EXPECT_EQ(st.accepted[TDX_LEVEL_4K], 511);
	EXPECT_EQ(st.accepted[TDX_LEVEL_2M], 0);
	for (unsigned i = 0; i < mock.n; i++)
		EXPECT_EQ(mock.gpa_level[i] & 7, TDX_LEVEL_4K);
	EXPECT_EQ(mock.gpa_level[3], (GiB + 2 * PAGE_SIZE) | TDX_LEVEL_4K);
	EXPECT_EQ(mock.gpa_level[512], (GiB + 511 * PAGE_SIZE) | TDX_LEVEL_4K);

	/* A clean unit: all 512 pending. */
	reset();
	EXPECT(!probe_unit(GiB, &st, &pr));
	EXPECT_EQ(pr.pages[PROBE_NOT_ACCEPTED], 512);
	EXPECT_EQ(pr.pages[PROBE_ACCEPTED] + pr.pages[PROBE_UNKNOWN], 0);
	EXPECT_EQ(warns, 0);

	/* A status the guest cannot reason about stays fatal, as on the normal path. */
	reset();
	mock.script[0] = 0xC000000100000000ULL;
	mock.script[1] = 0xC000000100000000ULL;
	mock.nscript = 2;
	EXPECT(probe_unit(GiB, &st, &pr));
	EXPECT_EQ(fatal_condition, FC_ACCEPT_STATUS);
	EXPECT_EQ(fatal_gpa, GiB);
	reset();
	CHECK_PANICS(probe_unit(GiB + PAGE_SIZE, &st, &pr), "not 2 MiB aligned");
}

TEST(tdx_bad_range_panics)
{
	struct tdx_accept_stats st;

	reset();
	CHECK_PANICS(accept(GiB + 1, GiB + PAGE_SIZE, &st), "tdx_accept_range: bad range");
	CHECK_PANICS(accept(GiB, GiB, &st), "bad range");
	EXPECT_EQ(mock.n, 0);
}

/* ------------------------------------------------------------------ ReportFatalError */

TEST(tdx_fatal_report_is_what_qemu_accepts)
{
	struct tdx_regs r;
	char msg[TDX_FATAL_MSG_LEN + 1];
	u32 reason = FATAL_REASON(FC_ACCEPT_RETRIES, 7);

	tdx_fatal_regs(&r, reason, "memaccept: accept_retries, exit 7: stayed busy");
	EXPECT_EQ(r.rax, TDG_VP_VMCALL);
	EXPECT_EQ(r.r10, TDVMCALL_STANDARD);
	EXPECT_EQ(r.r11, TDVMCALL_REPORT_FATAL_ERROR);
	/* QEMU: any of bits 15:0 set is an "invalid error code"; bit 63 clear: no GPA. */
	EXPECT_EQ(r.r12 & 0xffff, 0);
	EXPECT_EQ(r.r12, (u64)reason << 16);
	EXPECT_EQ(r.r12 >> 63, 0);
	/* Every message register exposed to the VMM, none of RAX, RCX, RSP (the module). */
	EXPECT_EQ(r.rcx & TDX_FATAL_MSG_REGS, TDX_FATAL_MSG_REGS);
	EXPECT_EQ(r.rcx & TDVMCALL_MASK_FORBIDDEN, 0);
	EXPECT_EQ(r.rcx & 0xfc00, 0xfc00);
	/* Byte 0 in the low byte of R14, then R15, RBX, RDI, RSI, R8, R9, RDX. */
	EXPECT_EQ(r.r14 & 0xff, 'm');
	EXPECT_EQ(r.r15 & 0xff, 't');	/* "memaccep", then "t: accep" */
	tdx_fatal_message(&r, msg);
	EXPECT(strcmp(msg, "memaccept: accept_retries, exit 7: stayed busy") == 0);
}

TEST(tdx_fatal_message_is_cut_at_64_bytes_and_packed_like_qemu)
{
	struct tdx_regs r;
	char msg[TDX_FATAL_MSG_LEN + 1];
	char longer[100];

	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = 0;
	longer[63] = 'E';
	tdx_fatal_regs(&r, 0, longer);
	tdx_fatal_message(&r, msg);
	EXPECT_EQ(strlen(msg), 64);
	EXPECT_EQ(msg[63], 'E');
	EXPECT_EQ(r.rdx >> 56, 'E');	/* byte 63: the top byte of RDX */

	/* A register missing from RCX: QEMU packs the rest, so the text shifts. */
	tdx_fatal_regs(&r, 0, "0123456789abcdefXXXXXXXX");
	r.rcx &= ~TDVMCALL_REG(GPR_R15);
	tdx_fatal_message(&r, msg);
	EXPECT(strcmp(msg, "01234567XXXXXXXX") == 0);
}

TEST(tdx_pending_ve_policy)
{
	const u64 SVD = TDX_ATTR_SEPT_VE_DISABLE, DBG = TDX_ATTR_DEBUG, FLEX = TDCS_CONFIG_FLEXIBLE_PENDING_VE;
	const u64 OFF = TD_CTLS_PENDING_VE_DISABLE;

	/* Without FLEXIBLE_PENDING_VE the attribute decides, TD_CTLS is not looked at. */
	EXPECT_EQ(tdx_pending_ve_action(SVD, 0, 0), TDX_VE_OFF);
	EXPECT_EQ(tdx_pending_ve_action(0, 0, OFF), TDX_VE_FATAL);
	EXPECT_EQ(tdx_pending_ve_action(DBG, 0, 0), TDX_VE_WARN);
	EXPECT_EQ(tdx_pending_ve_action(0, 1ULL << 2, 0), TDX_VE_FATAL);	/* NO_RBP_MOD only, as KVM */
	/* With it, TD_CTLS decides, whatever the attribute says. */
	EXPECT_EQ(tdx_pending_ve_action(SVD, FLEX, OFF), TDX_VE_OFF);
	EXPECT_EQ(tdx_pending_ve_action(0, FLEX, OFF), TDX_VE_OFF);
	EXPECT_EQ(tdx_pending_ve_action(0, FLEX, 0), TDX_VE_TURN_OFF);
	EXPECT_EQ(tdx_pending_ve_action(SVD, FLEX, 0), TDX_VE_TURN_OFF);	/* turned on before us */
	EXPECT_EQ(tdx_pending_ve_action(DBG, FLEX, 0), TDX_VE_WARN);
}

TEST(tdx_attributes_policy)
{
	bool warn;

	EXPECT(tdx_attributes_problem(TDX_ATTR_SEPT_VE_DISABLE, &warn) == NULL);
	EXPECT(tdx_attributes_problem(TDX_ATTR_SEPT_VE_DISABLE | TDX_ATTR_DEBUG, &warn) == NULL);
	/* Clear on a production TD: terminate. On a debug TD: only a warning (as Linux). */
	EXPECT(tdx_attributes_problem(0, &warn) != NULL);
	EXPECT(!warn);
	EXPECT(tdx_attributes_problem(TDX_ATTR_DEBUG, &warn) != NULL);
	EXPECT(warn);
}

/* ------------------------------------------------------------ #VE emulation (ve_emul.c) */

/* The VMM for tdx_ve_emulate: one scripted answer, every request recorded. */
static struct {
	struct tdx_regs req, ans;
	u64 status;
	unsigned calls;
} vmm;

static u64 vmm_tdcall(struct tdx_regs *r)
{
	u64 rcx = r->rcx;

	vmm.req = *r;
	vmm.calls++;
	*r = vmm.ans;
	r->rcx = rcx;
	return vmm.status;
}

static enum tdx_ve_verdict ve(u32 reason, u64 qual, const u8 *ip, u32 len, struct tdx_ve_regs *g)
{
	const struct tdx_ve_info info = { reason, qual, len };

	return tdx_ve_emulate(&info, g, ip, len, vmm_tdcall);
}

TEST(tdx_ve_in_keeps_the_bytes_above_its_operand)
{
	static const u8 inb_dx[] = { 0xec }, inl_dx[] = { 0xed };
	struct tdx_ve_regs g = { .rip = 0x1000, .rax = 0x1122334455667788 };

	memset(&vmm, 0, sizeof(vmm));
	vmm.ans.r11 = 0xfffffffffffff0a5;	/* the VMM puts garbage above the byte */
	EXPECT_EQ(ve(EXIT_REASON_IO, IO_QUAL_IN | (0x3fdULL << 16), inb_dx, 1, &g), TDX_VE_DONE);
	EXPECT_EQ(g.rax, 0x11223344556677a5);
	EXPECT_EQ(g.rip, 0x1001);
	EXPECT(vmm.req.rax == TDG_VP_VMCALL && vmm.req.r11 == TDVMCALL_IO && vmm.req.r12 == 1 &&
	       vmm.req.r13 == TDVMCALL_IO_IN && vmm.req.r14 == 0x3fd && vmm.req.r15 == 0);
	/* A 4-byte IN zero-extends EAX into RAX; a refusal (R10 != 0) reads as all ones. */
	vmm.ans.r10 = 1;
	EXPECT_EQ(ve(EXIT_REASON_IO, IO_QUAL_IN | 3 | (0x608ULL << 16), inl_dx, 1, &g), TDX_VE_DONE);
	EXPECT_EQ(g.rax, 0xffffffff);
}

TEST(tdx_ve_nothing_reaches_the_vmm_before_the_check)
{
	static const u8 hlt[] = { 0xf4 }, cpuid[] = { 0x0f, 0xa2 };
	struct tdx_ve_regs g = { .rip = 0x2000, .rax = 0x40000000 };

	memset(&vmm, 0, sizeof(vmm));
	EXPECT_EQ(ve(EXIT_REASON_CPUID, 0, hlt, 1, &g), TDX_VE_MISMATCH);	/* reason lie */
	EXPECT_EQ(ve(EXIT_REASON_HLT, 0, hlt, 0, &g), TDX_VE_BAD_LENGTH);	/* length lie */
	EXPECT_EQ(ve(EXIT_REASON_WBINVD, 0, hlt, 1, &g), TDX_VE_NOT_SERVED);
	EXPECT_EQ(vmm.calls, 0);
	EXPECT_EQ(g.rip, 0x2000);
	/* A TDCALL that fails is a refusal even with R10 = 0: a hypervisor CPUID leaf is not served. */
	vmm.status = 0xc000010000000000;
	EXPECT_EQ(ve(EXIT_REASON_CPUID, 0, cpuid, 2, &g), TDX_VE_NOT_SERVED);
	EXPECT(vmm.calls == 1 && g.rax == 0x40000000 && g.rip == 0x2000);
}

TEST(tdx_ve_msr_answers_are_split_and_refusals_reported)
{
	static const u8 rdmsr[] = { 0x0f, 0x32 }, wrmsr[] = { 0x0f, 0x30 };
	struct tdx_ve_regs g = { .rip = 0x3000, .rcx = 0xffffffff0000001b };

	memset(&vmm, 0, sizeof(vmm));
	vmm.ans.r11 = 0x12345678fee00900;
	EXPECT_EQ(ve(EXIT_REASON_MSR_READ, 0, rdmsr, 2, &g), TDX_VE_DONE);
	EXPECT(vmm.req.r12 == 0x1b && g.rax == 0xfee00900 && g.rdx == 0x12345678 && g.rip == 0x3002);
	vmm.ans.r10 = 3;
	g.rax = 5, g.rdx = 6;
	EXPECT_EQ(ve(EXIT_REASON_MSR_WRITE, 0, wrmsr, 2, &g), TDX_VE_MSR_REFUSED);
	EXPECT(vmm.req.r13 == 0x600000005 && g.rip == 0x3002);
}
