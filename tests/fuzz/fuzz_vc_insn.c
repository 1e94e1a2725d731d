/* SPDX-License-Identifier: MIT */
/* memaccept: libFuzzer target: the SNP #VC check (vc_insn_check) against an enumerated model. */
#include <stdlib.h>
#include <string.h>
#include "arch/x86/sev/snp.h"
#include "arch/x86/sev/vc_insn.h"
#include "tests/fuzz/fuzz.h"

/*
 * Input: [0] picks the exit code (below 0xf0: one of `codes`; else bytes 2-9 are any
 * 64-bit code a host could put in the error code), [1] how many bytes are readable at
 * RIP (0-16), then the bytes. They are copied to a buffer of exactly that size, so
 * ASan reports any read past it.
 *
 * The model does not decode: it lists every encoding the check may accept (memaccept's
 * own accessors and the string forms) and accepts the bytes iff one is a prefix of them.
 */
static const u64 codes[] = { SVM_EXIT_CPUID, SVM_EXIT_RDTSC, SVM_EXIT_RDTSCP, SVM_EXIT_MSR, SVM_EXIT_IOIO,
			     SVM_EXIT_NPF, SVM_EXIT_WBINVD, SVM_EXIT_PAGE_NOT_VALIDATED };

struct enc {
	u8 b[4];
	u32 len;
	u32 kind, size;
	bool imm;	/* the last byte is an imm8 port: any value */
};

static struct enc table[256];
static unsigned ntable;

static void add(const u8 *b, u32 len, u32 kind, u32 size, bool imm)
{
	struct enc *e = &table[ntable++];

	memcpy(e->b, b, len);
	e->len = len, e->kind = kind, e->size = size, e->imm = imm;
}

static void build_io(void)
{
	static const u8 prefixes[5][2] = { { 0 }, { 0x66 }, { 0xf3 }, { 0x66, 0xf3 }, { 0xf3, 0x66 } };
	static const u32 plen[5] = { 0, 1, 1, 2, 2 };

	for (unsigned p = 0; p < 5; p++) {
		bool o16 = plen[p] && (prefixes[p][0] == 0x66 || prefixes[p][1] == 0x66);
		bool rep = plen[p] && (prefixes[p][0] == 0xf3 || prefixes[p][1] == 0xf3);

		for (unsigned op = 0x6c; op <= 0x6f; op++) {
			u8 b[4] = { prefixes[p][0], prefixes[p][1], 0, 0 };

			b[plen[p]] = (u8)op;
			add(b, plen[p] + 1, VC_INSN_STRING_IO, !(op & 1) ? 1 : o16 ? 2 : 4, false);
		}
		if (rep)
			continue;
		for (unsigned op = 0xe4; op <= 0xef; op++) {
			u8 b[4] = { prefixes[p][0], 0, 0, 0 };
			bool imm = op <= 0xe7;

			if ((op >= 0xe8 && op <= 0xeb) || (o16 && !(op & 1)))
				continue;
			b[plen[p]] = (u8)op;
			add(b, plen[p] + 1 + imm, op & 2 ? VC_INSN_OUT : VC_INSN_IN, !(op & 1) ? 1 : o16 ? 2 : 4, imm);
		}
	}
}

static bool model(u64 code, const u8 *b, size_t n, const struct enc **hit)
{
	static bool built;

	if (!built) {
		build_io();
		built = true;
	}
	for (unsigned i = 0; i < ntable && code == SVM_EXIT_IOIO; i++) {
		const struct enc *e = &table[i];

		if (n >= e->len && memcmp(b, e->b, e->len - e->imm) == 0) {
			*hit = e;
			return true;
		}
	}
	static const struct enc cpuid = { { 0x0f, 0xa2 }, 2, VC_INSN_CPUID, 0, false },
				rdtsc = { { 0x0f, 0x31 }, 2, VC_INSN_RDTSC, 0, false },
				rdtscp = { { 0x0f, 0x01, 0xf9 }, 3, VC_INSN_RDTSCP, 0, false },
				rdmsr = { { 0x0f, 0x32 }, 2, VC_INSN_RDMSR, 0, false },
				wrmsr = { { 0x0f, 0x30 }, 2, VC_INSN_WRMSR, 0, false };
	const struct enc *c = code == SVM_EXIT_CPUID ? &cpuid : code == SVM_EXIT_RDTSC ? &rdtsc :
			      code == SVM_EXIT_RDTSCP ? &rdtscp : NULL;

	if (code == SVM_EXIT_MSR)
		c = n >= 2 && b[0] == 0x0f && b[1] == 0x30 ? &wrmsr : &rdmsr;
	if (c && n >= c->len && memcmp(b, c->b, c->len) == 0) {
		*hit = c;
		return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	u64 code;
	size_t n, off = 2;
	struct vc_insn d;
	const struct enc *e = NULL;

	if (size < 2)
		return 0;
	if (data[0] < 0xf0) {
		code = codes[data[0] % (sizeof(codes) / sizeof(codes[0]))];
	} else {
		if (size < 10)
			return 0;
		memcpy(&code, data + 2, 8);
		off = 10;
	}
	n = data[1] % 17;
	if (n > size - off)
		n = size - off;
	u8 *buf = malloc(n ? n : 1);

	CHECK(buf);
	memcpy(buf, data + off, n);
	bool got = vc_insn_check(code, n ? buf : NULL, n, &d);
	bool want = n && model(code, buf, n, &e);

	CHECK(got == want);
	if (got) {
		CHECK(d.len == e->len && d.len >= 1 && d.len <= n && d.len <= VC_INSN_MAX_LEN);
		CHECK(d.kind == e->kind);
		if (d.kind == VC_INSN_IN || d.kind == VC_INSN_OUT || d.kind == VC_INSN_STRING_IO)
			CHECK(d.size == e->size);
		CHECK(d.port_imm == e->imm && (!e->imm || d.port == buf[d.len - 1]));
	} else {
		CHECK(d.kind == VC_INSN_NONE && d.len == 0);
	}
	free(buf);
	return 0;
}
