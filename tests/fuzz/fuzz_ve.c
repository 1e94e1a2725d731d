/* SPDX-License-Identifier: MIT */
/*
 * memaccept fuzz target: the TDX #VE handler's pure part (arch/x86/tdx/ve_emul.c
 * tdx_ve_emulate): the #VE information against the instruction at RIP, the TDVMCALL it
 * makes, and how the VMM's answers reach the guest's registers.
 *
 * Input, read in order (zeros once used up):
 *   reason   1 byte: below 0xf0 one of `reasons`, else 4 bytes of any exit reason
 *   qual     1 byte: below 0xc0 built from the next 3 bytes (size code, IN, string,
 *            port), else 8 bytes of any qualification
 *   len      1 byte: below 0xf0 that byte % 18, else 4 bytes of any length
 *   bytes    1 byte: below 0x80 the bytes at RIP start with one of `starts` (the
 *            served encodings and two string forms; the rest from the input), else all
 *            from the input; there are exactly
 *            min(len, 16) of them, in a buffer of that size, so ASan sees any read past
 *            the length
 *   regs     RAX, RBX, RCX, RDX (8 bytes each), with a choice that puts a hypervisor
 *            CPUID leaf in EAX
 *   replies  for each TDCALL the emulation makes: 1 byte picks TDCALL's own status
 *            (0 or any) and R10 (0 or any), then 8 bytes each for R11-R15; every other
 *            register comes back as garbage
 *
 * The model is written from the GHCI and the SDM, not from the code: which exit reasons
 * are served, the encodings of each (listed, not decoded), the TDVMCALL each must make
 * (leaf 0, R10 = 0, the sub-function in R11, its operands in R12-R15 and nothing else
 * exposed, RCX the R10-R15 mask), that a TDVMCALL succeeded only when both TDCALL and R10
 * say 0, and what the instruction leaves in RAX-RDX and RIP.
 */
#include <stdlib.h>
#include <string.h>
#include "arch/x86/tdx/tdx.h"
#include "arch/x86/tdx/ve_emul.h"
#include "tests/fuzz/fuzz.h"

static const u32 reasons[] = { EXIT_REASON_HLT, EXIT_REASON_CPUID, EXIT_REASON_MSR_READ,
			       EXIT_REASON_MSR_WRITE, EXIT_REASON_IO, EXIT_REASON_IO,
			       EXIT_REASON_EPT_VIOLATION, EXIT_REASON_WBINVD, EXIT_REASON_VMCALL,
			       EXIT_REASON_INVD, EXIT_REASON_MONITOR, EXIT_REASON_MWAIT };

/* ---------------------------------------------------------------- the model's encodings */

/* Port I/O that is not a string instruction (Intel SDM vol. 2, IN and OUT). */
struct io_enc {
	u8 b[3];
	u8 len;
	bool in, imm;
	u8 size;
};

static const struct io_enc io_encs[] = {
	{ { 0xe4 }, 2, true, true, 1 },		/* in al, imm8 */
	{ { 0xe5 }, 2, true, true, 4 },		/* in eax, imm8 */
	{ { 0x66, 0xe5 }, 3, true, true, 2 },	/* in ax, imm8 */
	{ { 0xe6 }, 2, false, true, 1 },	/* out imm8, al */
	{ { 0xe7 }, 2, false, true, 4 },
	{ { 0x66, 0xe7 }, 3, false, true, 2 },
	{ { 0xec }, 1, true, false, 1 },	/* in al, dx */
	{ { 0xed }, 1, true, false, 4 },
	{ { 0x66, 0xed }, 2, true, false, 2 },
	{ { 0xee }, 1, false, false, 1 },	/* out dx, al */
	{ { 0xef }, 1, false, false, 4 },
	{ { 0x66, 0xef }, 2, false, false, 2 },
};

/* Starts for the bytes at RIP: every served encoding (the imm8 comes from the input). */
static const u8 starts[][3] = { { 0xf4 }, { 0x0f, 0xa2 }, { 0x0f, 0x32 }, { 0x0f, 0x30 }, { 0xe4 },
				{ 0xe5 }, { 0x66, 0xe5 }, { 0xe6 }, { 0xe7 }, { 0x66, 0xe7 }, { 0xec },
				{ 0xed }, { 0x66, 0xed }, { 0xee }, { 0xef }, { 0x66, 0xef }, { 0x6c },
				{ 0xf3, 0x6e } };
static const u8 start_len[] = { 1, 2, 2, 2, 1, 1, 2, 1, 1, 2, 1, 1, 2, 1, 1, 2, 1, 2 };

static bool same(const u8 *b, u32 len, const u8 *enc, u32 enc_len)
{
	return len == enc_len && memcmp(b, enc, enc_len) == 0;
}

/* Do the len bytes b hold exactly the instruction the #VE describes? */
static bool model_match(u32 reason, u64 qual, const u8 *b, u32 len)
{
	static const u8 hlt[] = { 0xf4 }, cpuid[] = { 0x0f, 0xa2 }, rdmsr[] = { 0x0f, 0x32 },
			wrmsr[] = { 0x0f, 0x30 };

	switch (reason) {
	case EXIT_REASON_HLT:
		return same(b, len, hlt, 1);
	case EXIT_REASON_CPUID:
		return same(b, len, cpuid, 2);
	case EXIT_REASON_MSR_READ:
		return same(b, len, rdmsr, 2);
	case EXIT_REASON_MSR_WRITE:
		return same(b, len, wrmsr, 2);
	case EXIT_REASON_IO:
		/* Intel SDM vol. 3C, table 28-5: size - 1 in bits 2:0, IN in bit 3, port in 31:16. */
		for (unsigned i = 0; i < sizeof(io_encs) / sizeof(io_encs[0]); i++) {
			const struct io_enc *e = &io_encs[i];
			u32 op_len = e->len - e->imm;

			if (len != e->len || memcmp(b, e->b, op_len) != 0)
				continue;
			if (e->in != !!(qual & (1u << 3)) || e->size != (qual & 7) + 1)
				return false;
			return !e->imm || b[op_len] == ((qual >> 16) & 0xffff);
		}
		return false;
	default:
		return false;
	}
}

/* ---------------------------------------------------------------- the VMM */

struct call {
	struct tdx_regs req;	/* what the guest asked */
	bool ok;		/* TDCALL and R10 both 0 */
	struct tdx_regs ans;	/* what came back */
};

static struct call calls[4];
static unsigned ncalls;

static u64 vmm_tdcall(struct tdx_regs *r)
{
	CHECK(ncalls < 4);
	struct call *c = &calls[ncalls++];
	u8 pick = fuzz_byte();
	u64 status = pick & 0x80 ? (fuzz_bytes(8) | 1) : 0;

	c->req = *r;
	/* Everything comes back as the VMM and the module leave it: garbage where unused. */
	r->rax = fuzz_bytes(8);
	r->rcx = ~r->rcx;
	r->rdx = fuzz_bytes(8), r->r8 = fuzz_bytes(8), r->r9 = fuzz_bytes(8);
	r->r10 = pick & 0x40 ? (fuzz_bytes(8) | (pick & 1 ? 1ULL << 63 : 1)) : 0;
	r->r11 = fuzz_bytes(8), r->r12 = fuzz_bytes(8), r->r13 = fuzz_bytes(8), r->r14 = fuzz_bytes(8), r->r15 = fuzz_bytes(8);
	r->rbx = fuzz_bytes(8), r->rsi = fuzz_bytes(8), r->rdi = fuzz_bytes(8);
	c->ok = status == 0 && r->r10 == 0;
	c->ans = *r;
	return status;
}

/* One TDVMCALL of sub-function subfn with operands r12-r15 (those not used are 0). */
static void check_request(const struct call *c, u64 subfn, u64 r12, u64 r13, u64 r14, u64 r15)
{
	CHECK(c->req.rax == TDG_VP_VMCALL);
	CHECK(c->req.rcx == 0xfc00);		/* R10-R15 exposed, nothing else (GHCI) */
	CHECK(c->req.r10 == 0 && c->req.r11 == subfn);
	CHECK(c->req.r12 == r12 && c->req.r13 == r13 && c->req.r14 == r14 && c->req.r15 == r15);
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct tdx_ve_info ve;
	struct tdx_ve_regs g, before;
	u8 pick;

	fuzz_input_start(data, size);
	ncalls = 0;
	memset(calls, 0, sizeof(calls));

	pick = fuzz_byte();
	ve.reason = pick < 0xf0 ? reasons[pick % (sizeof(reasons) / sizeof(reasons[0]))] : (u32)fuzz_bytes(4);
	pick = fuzz_byte();
	if (pick < 0xc0) {
		u8 q = fuzz_byte();

		ve.qual = (q & 0x1f) | (fuzz_bytes(2) << 16);
	} else {
		ve.qual = fuzz_bytes(8);
	}
	pick = fuzz_byte();
	ve.len = pick < 0xf0 ? pick % 18 : (u32)fuzz_bytes(4);

	size_t n = ve.len < 16 ? ve.len : 16;
	u8 *ip = malloc(n ? n : 1);

	CHECK(ip);
	pick = fuzz_byte();
	for (size_t i = 0; i < n; i++)
		ip[i] = fuzz_byte();
	if (pick < 0x80) {
		unsigned s = pick % (sizeof(starts) / sizeof(starts[0]));

		memcpy(ip, starts[s], MIN((size_t)start_len[s], n));
	}
	pick = fuzz_byte();
	g.rip = 0xffffffff80001000ULL + (pick & 0xf0);
	g.rax = fuzz_bytes(8), g.rbx = fuzz_bytes(8), g.rcx = fuzz_bytes(8), g.rdx = fuzz_bytes(8);
	if (pick & 1)
		g.rax = (g.rax & ~0xffffffffULL) | 0x40000000 | (g.rax & 0xff);
	before = g;

	enum tdx_ve_verdict v = tdx_ve_emulate(&ve, &g, ip, ve.len, vmm_tdcall);

	/* ------------------------------------------------------------ the model */
	bool string = ve.reason == EXIT_REASON_IO && (ve.qual & (1u << 4));
	bool served = ve.reason == EXIT_REASON_HLT || ve.reason == EXIT_REASON_CPUID ||
		      ve.reason == EXIT_REASON_MSR_READ || ve.reason == EXIT_REASON_MSR_WRITE ||
		      (ve.reason == EXIT_REASON_IO && !string);
	struct tdx_ve_regs want = before;
	enum tdx_ve_verdict want_v;
	const struct call *c = &calls[0];
	unsigned want_calls = 0;	/* nothing reaches the VMM before the check passed */

	if (!served) {
		want_v = TDX_VE_NOT_SERVED;
	} else if (ve.len == 0 || ve.len > 15) {
		want_v = TDX_VE_BAD_LENGTH;
	} else if (!model_match(ve.reason, ve.qual, ip, ve.len)) {
		want_v = TDX_VE_MISMATCH;
	} else {
		want_v = TDX_VE_DONE;
		switch (ve.reason) {
		case EXIT_REASON_HLT:
			want_calls = 1;
			check_request(c, TDVMCALL_HLT, 1, 0, 0, 0);
			break;
		case EXIT_REASON_IO: {
			u32 sz = (ve.qual & 7) + 1;
			u64 mask = sz == 4 ? 0xffffffffULL : sz == 2 ? 0xffff : 0xff;
			bool is_in = ve.qual & (1u << 3);
			u16 port = (u16)(ve.qual >> 16);

			want_calls = 1;
			check_request(c, TDVMCALL_IO, sz, is_in ? 0 : 1, port, is_in ? 0 : before.rax & mask);
			if (is_in) {
				u64 val = c->ok ? c->ans.r11 & mask : mask;

				want.rax = sz == 4 ? val : (before.rax & ~mask) | val;
			}
			break;
		}
		case EXIT_REASON_CPUID: {
			u32 leaf = (u32)before.rax;

			if (leaf < 0x40000000 || leaf >= 0x50000000) {
				want.rax = want.rbx = want.rcx = want.rdx = 0;
				break;
			}
			want_calls = 1;
			check_request(c, TDVMCALL_CPUID, leaf, (u32)before.rcx, 0, 0);
			if (!c->ok) {
				want_v = TDX_VE_NOT_SERVED;
				break;
			}
			want.rax = (u32)c->ans.r12, want.rbx = (u32)c->ans.r13;
			want.rcx = (u32)c->ans.r14, want.rdx = (u32)c->ans.r15;
			break;
		}
		case EXIT_REASON_MSR_READ:
			want_calls = 1;
			check_request(c, TDVMCALL_RDMSR, (u32)before.rcx, 0, 0, 0);
			if (!c->ok) {
				want_v = TDX_VE_MSR_REFUSED;
				break;
			}
			want.rax = c->ans.r11 & 0xffffffff, want.rdx = c->ans.r11 >> 32;
			break;
		case EXIT_REASON_MSR_WRITE:
			want_calls = 1;
			check_request(c, TDVMCALL_WRMSR, (u32)before.rcx,
				      (before.rdx & 0xffffffff) << 32 | (before.rax & 0xffffffff), 0, 0);
			if (!c->ok)
				want_v = TDX_VE_MSR_REFUSED;
			break;
		}
		if (want_v == TDX_VE_DONE)
			want.rip = before.rip + ve.len;
	}
	CHECK(v == want_v);
	CHECK(ncalls == want_calls);
	/* Registers: exactly what the instruction writes, RIP moved only when served. */
	CHECK(g.rip == want.rip && g.rax == want.rax && g.rbx == want.rbx && g.rcx == want.rcx &&
	      g.rdx == want.rdx);
	free(ip);
	return 0;
}
