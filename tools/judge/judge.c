/* SPDX-License-Identifier: MIT */
/* memaccept: the offline judge: kernel/conformance.c's map rules on a memory map captured elsewhere. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kernel/conformance.h"
#include "mm/memmap.h"

/*
 * Input (stdin), one item a line, written by tools/judge.py from whatever capture it read:
 *   desc_size N | desc_version N | platform none|tdx|snp | phys_bits N | tdx_shared_bit N
 *   ebs_attempts N           (1: the final map is the one the loader read)
 *   desc TYPE START PAGES ATTR   (one per descriptor, in the capture's order)
 * Numbers in C syntax (0x... or decimal). Output (stdout), one check a line, tab-separated:
 *   rule  level  verdict  detail
 * Exit status 0, or 2 with a message on stderr for input it cannot take.
 */

#define MAX_DESC CONFORMANCE_MAX_DESC
#define DESC_BYTES 64	/* room for any desc_size the capture names, up to 64 */

static u8 map[MAX_DESC * DESC_BYTES];
static u64 scratch[CONFORMANCE_MAX_DESC];
static struct conformance_check out[CONFORMANCE_MAX_CHECKS];

static int bad(unsigned line, const char *why)
{
	fprintf(stderr, "judge: line %u: %s\n", line, why);
	return 2;
}

static int number(const char *s, u64 *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || (*end && *end != '\n') ? -1 : 0;
}

int main(void)
{
	struct conformance_input in = { 0 };
	char buf[512];
	unsigned line = 0, ndesc = 0;
	u64 desc_size = EFI_MEM_DESC_SIZE;

	in.desc_version = EFI_MEM_DESC_VERSION;
	in.platform = DETECTED_NONE;
	while (fgets(buf, sizeof(buf), stdin)) {
		char key[32], a[4][40];
		u64 v[4];
		int n = sscanf(buf, "%31s %39s %39s %39s %39s", key, a[0], a[1], a[2], a[3]);

		line++;
		if (n <= 0)
			continue;
		for (int i = 0; i < n - 1; i++)
			if (strcmp(key, "platform") && number(a[i], &v[i]))
				return bad(line, "not a number");
		if (!strcmp(key, "desc") && n == 5) {
			struct efi_mem_desc d = { (u32)v[0], 0, v[1], 0, v[2], v[3] };

			if (ndesc == MAX_DESC)
				return bad(line, "more descriptors than the rules judge (4096)");
			if (v[0] > UINT32_MAX)
				return bad(line, "type wider than 32 bits");
			memcpy(map + (u64)ndesc++ * DESC_BYTES, &d, sizeof(d));
		} else if (!strcmp(key, "desc_size") && n == 2) {
			if (v[0] < EFI_MEM_DESC_SIZE || v[0] > DESC_BYTES)
				return bad(line, "desc_size outside 40..64: the judge keeps the map itself");
			desc_size = v[0];
		} else if (!strcmp(key, "desc_version") && n == 2) {
			in.desc_version = (u32)v[0];
		} else if (!strcmp(key, "phys_bits") && n == 2) {
			in.phys_bits = (u32)v[0];
		} else if (!strcmp(key, "tdx_shared_bit") && n == 2) {
			in.tdx_shared_bit = v[0];
		} else if (!strcmp(key, "ebs_attempts") && n == 2) {
			in.ebs_attempts = (u32)v[0];
		} else if (!strcmp(key, "platform") && n == 2) {
			if (!strcmp(a[0], "tdx"))
				in.platform = DETECTED_TDX;
			else if (!strcmp(a[0], "snp"))
				in.platform = DETECTED_SNP;
			else if (!strcmp(a[0], "none"))
				in.platform = DETECTED_NONE;
			else
				return bad(line, "platform is none, tdx or snp");
		} else {
			return bad(line, "unknown item");
		}
	}

	/* The descriptors at the capture's stride, as the firmware laid them out. */
	static u8 packed[MAX_DESC * DESC_BYTES];

	for (unsigned i = 0; i < ndesc; i++)
		memcpy(packed + (u64)i * desc_size, map + (u64)i * DESC_BYTES, EFI_MEM_DESC_SIZE);
	in.map = packed;
	in.map_size = ndesc * desc_size;
	in.desc_size = desc_size;
	/*
	 * One ExitBootServices call: the final map is the map the loader read, so the first
	 * map of the loop is this one (what boot/efi_main.c records in that case).
	 */
	if (in.ebs_attempts == 1) {
		in.ebs_first_desc = ndesc;
		struct unacc_summary u = conformance_unacc_summary(packed, ndesc, desc_size);

		in.ebs_first_unacc_desc = u.desc;
		in.ebs_first_unacc_bytes = u.bytes;
		in.ebs_first_unacc_hash = u.hash;
		in.ebs_first_unacc_lo = u.lo;
		in.ebs_first_unacc_hi = u.hi;
	}

	unsigned n = conformance_evaluate_map(&in, out, CONFORMANCE_MAX_CHECKS, scratch);

	for (unsigned i = 0; i < n; i++)
		printf("%s\t%s\t%s\t%s\n", out[i].rule, level_name(out[i].level),
		       verdict_name(out[i].verdict), out[i].detail);
	return 0;
}
