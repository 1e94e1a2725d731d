/* SPDX-License-Identifier: MIT */
/* memaccept: finding an SVSM before ExitBootServices: the CC blob table and the secrets page. */
#include "arch/x86/sev/svsm.h"
#include "boot/boot.h"
#include "drivers/console.h"
#include "lib/string.h"

static const EFI_GUID cc_blob_guid = EFI_CC_BLOB_GUID;
/* As in boot/conformance_efi.c: no firmware builds a longer configuration table. */
#define CC_TABLES_MAX 256

static u64 rd64(const u8 *p, u32 off)
{
	u64 v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static u32 rd32(const u8 *p, u32 off)
{
	u32 v;

	memcpy(&v, p + off, sizeof(v));
	return v;
}

static u32 bad(const char *why, u64 value)
{
	kprintf("boot: SEV-SNP CC blob: %s (%#llx); no SVSM will be used\n", why, (unsigned long long)value);
	return CC_BLOB_BAD;
}

/*
 * The secrets page the CC blob names (as Linux arch/x86/boot/compressed/sev.c
 * find_cc_blob_efi and snp_setup_svsm_ca read it): the blob's magic must match and
 * the secrets page be one page; the calling area must be page aligned (Linux
 * terminates with GHCB_TERM_SVSM_CAA otherwise). The kernel decides what a missing or
 * bad SVSM means once it knows its VMPL (arch/x86/sev/snp.c).
 */
static u32 read_blob(const u8 *blob, struct boot_info *bi)
{
	u64 secrets = rd64(blob, CC_BLOB_OFF_SECRETS_PHYS);
	u32 len = rd32(blob, CC_BLOB_OFF_SECRETS_LEN);
	const u8 *s;

	if (rd32(blob, CC_BLOB_OFF_MAGIC) != CC_BLOB_MAGIC)
		return bad("wrong magic", rd32(blob, CC_BLOB_OFF_MAGIC));
	/* For the conformance report: where the firmware put the pages the PSP filled. */
	bi->cc_secrets = secrets;
	bi->cc_secrets_len = len;
	bi->cc_cpuid = rd64(blob, CC_BLOB_OFF_CPUID_PHYS);
	bi->cc_cpuid_len = rd32(blob, CC_BLOB_OFF_CPUID_LEN);
	if (!secrets || !IS_ALIGNED(secrets, PAGE_SIZE) || len != SECRETS_PAGE_SIZE)
		return bad("no usable secrets page", secrets);
	s = (const u8 *)(uintptr_t)secrets;
	bi->snp_tsc_factor = rd32(s, SECRETS_OFF_TSC_FACTOR);	/* for a Secure TSC clock */
	bi->svsm_size = rd64(s, SECRETS_OFF_SVSM_SIZE);
	if (!bi->svsm_size)
		return CC_BLOB_FOUND;
	bi->svsm_base = rd64(s, SECRETS_OFF_SVSM_BASE);
	bi->svsm_caa = rd64(s, SECRETS_OFF_SVSM_CAA);
	bi->svsm_max_version = rd32(s, SECRETS_OFF_SVSM_MAX_VERSION);
	bi->svsm_guest_vmpl = s[SECRETS_OFF_SVSM_GUEST_VMPL];
	if (!bi->svsm_caa || !IS_ALIGNED(bi->svsm_caa, PAGE_SIZE)) {
		bi->svsm_size = 0;
		return bad("the SVSM calling area is not page aligned", bi->svsm_caa);
	}
	kprintf("boot: SVSM at %#llx (%llu KiB), calling area %#llx, protocol version <= %u, "
		"guest VMPL %u\n", (unsigned long long)bi->svsm_base,
		(unsigned long long)(bi->svsm_size >> 10), (unsigned long long)bi->svsm_caa,
		bi->svsm_max_version, bi->svsm_guest_vmpl);
	return CC_BLOB_FOUND;
}

void boot_snp_read_svsm(EFI_SYSTEM_TABLE *st, struct boot_info *bi)
{
	const EFI_CONFIGURATION_TABLE *t = st->ConfigurationTable;
	UINTN n = t ? MIN(st->NumberOfTableEntries, (UINTN)CC_TABLES_MAX) : 0;

	bi->snp_cc_blob = CC_BLOB_ABSENT;
	for (UINTN i = 0; i < n; i++) {
		if (memcmp(&t[i].VendorGuid, &cc_blob_guid, sizeof(EFI_GUID)) != 0)
			continue;
		if (!t[i].VendorTable) {
			bi->snp_cc_blob = bad("the table points nowhere", 0);
			return;
		}
		bi->snp_cc_blob = read_blob((const u8 *)t[i].VendorTable, bi);
		return;
	}
	kprintf("boot: SEV-SNP guest without a CC blob configuration table: no SVSM\n");
}
