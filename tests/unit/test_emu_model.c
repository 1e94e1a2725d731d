/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the emulator's page model (TDX module, RMP and hypervisor sides). */
#include <string.h>
#include "arch/x86/emu/model.h"
#include "arch/x86/tdx/tdx.h"
#include "tests/unit/unit.h"

/*
 * 32 MiB of model: usable [0, 4M), unaccepted [4M, 12M), reserved [12M, 14M),
 * unaccepted [14M, 32M).
 */
#define END (32 * MiB)

static struct emu_model m;
static u8 storage[END >> PAGE_SHIFT];
static struct mem_range ranges[8];
static struct memmap map;
static struct emu_faults faults;

static void setup_host(const char *fault_spec, bool host_huge)
{
	char err[128];

	memset(&map, 0, sizeof(map));
	map.ranges = ranges;
	ranges[0] = (struct mem_range){ 0, 4 * MiB, RANGE_USABLE, 7 };
	ranges[1] = (struct mem_range){ 4 * MiB, 12 * MiB, RANGE_UNACCEPTED, 15 };
	ranges[2] = (struct mem_range){ 12 * MiB, 14 * MiB, RANGE_RESERVED, 0 };
	ranges[3] = (struct mem_range){ 14 * MiB, END, RANGE_UNACCEPTED, 15 };
	map.nranges = 4;
	if (!emu_faults_parse(fault_spec, &faults, err, sizeof(err)))
		printf("  bad fault spec in the test: %s\n", err);
	emu_model_init(&m, &map, storage, END, &faults, host_huge);
}

/* Most tests play the huge host: 2 MiB pages for every wholly unaccepted unit. */
static void setup(const char *fault_spec)
{
	setup_host(fault_spec, true);
}

static u8 st(u64 pa)
{
	return *emu_model_page(&m, pa);
}

TEST(model_initial_state_follows_the_map_and_state_faults)
{
	setup("size_mismatch@0x600000,already@0xe01000");
	/* Accepted (or non-RAM) units are 4 KiB-mapped; wholly pending ones are 2 MiB pages. */
	EXPECT_EQ(st(0x1000), EMU_PG_RAM | EMU_PG_ACCEPTED | EMU_PG_PRIVATE | EMU_PG_HOST_SMALL);
	EXPECT_EQ(st(4 * MiB), EMU_PG_RAM);
	EXPECT_EQ(st(12 * MiB), EMU_PG_HOST_SMALL);
	/* size_mismatch marks the whole 2 MiB unit; already marks one page (and its unit small). */
	EXPECT_EQ(st(6 * MiB), EMU_PG_RAM | EMU_PG_HOST_SMALL);
	EXPECT_EQ(st(8 * MiB - PAGE_SIZE), EMU_PG_RAM | EMU_PG_HOST_SMALL);
	EXPECT_EQ(st(8 * MiB), EMU_PG_RAM);
	EXPECT_EQ(st(14 * MiB + PAGE_SIZE), EMU_PG_RAM | EMU_PG_ACCEPTED | EMU_PG_PRIVATE | EMU_PG_HOST_SMALL);
	EXPECT_EQ(st(14 * MiB), EMU_PG_RAM | EMU_PG_HOST_SMALL);
	EXPECT(emu_model_page(&m, END) == NULL);
	EXPECT(emu_model_is_ram(&m, 4 * MiB, 12 * MiB));
	EXPECT(!emu_model_is_ram(&m, 10 * MiB, 14 * MiB));
	EXPECT(!emu_model_is_ram(&m, 30 * MiB, END + PAGE_SIZE));
}

static u64 code(u64 status)
{
	return status >> 32;
}

TEST(model_tdx_accept_statuses)
{
	u64 counted = unit_emu_count("tdx_accepted_2m");

	setup("size_mismatch@0x600000");
	/* A pending 2 MiB range: accepted at level 2M, and counted. */
	EXPECT_EQ(emu_model_tdx_accept(&m, 4 * MiB | TDX_LEVEL_2M), 0);
	EXPECT_EQ(unit_emu_count("tdx_accepted_2m"), counted + 1);
	EXPECT_EQ(st(5 * MiB), EMU_PG_RAM | EMU_PG_ACCEPTED | EMU_PG_PRIVATE | (1 << EMU_PG_LEVEL_SHIFT));
	/* Again: a warning, not an error. */
	EXPECT_EQ(code(emu_model_tdx_accept(&m, 4 * MiB | TDX_LEVEL_2M)), TDX_PAGE_ALREADY_ACCEPTED);
	/* The host mapped [6M, 8M) in 4 KiB pages: 2M fails, 4K works, then 2M still fails. */
	EXPECT_EQ(code(emu_model_tdx_accept(&m, 6 * MiB | TDX_LEVEL_2M)), TDX_PAGE_SIZE_MISMATCH);
	EXPECT_EQ(emu_model_tdx_accept(&m, 6 * MiB | TDX_LEVEL_4K), 0);
	EXPECT_EQ(code(emu_model_tdx_accept(&m, 6 * MiB | TDX_LEVEL_2M)), TDX_PAGE_SIZE_MISMATCH);
	/*
	 * A 4 KiB accept inside a pending 2 MiB page: the host demotes the page (after the
	 * module's EPT-violation exit) and the accept succeeds; the unit is 4 KiB-mapped now,
	 * so a 2 MiB accept of it is a mismatch.
	 */
	u64 demoted = unit_emu_count("host_demoted_2m");

	EXPECT_EQ(emu_model_tdx_accept(&m, (9 * MiB) | TDX_LEVEL_4K), 0);
	EXPECT_EQ(unit_emu_count("host_demoted_2m"), demoted + 1);
	EXPECT_EQ(code(emu_model_tdx_accept(&m, 8 * MiB | TDX_LEVEL_2M)), TDX_PAGE_SIZE_MISMATCH);
	/* A 4 KiB accept inside an accepted 2 MiB page: already accepted, at level 2M. */
	EXPECT_EQ(emu_model_tdx_accept(&m, (5 * MiB) | TDX_LEVEL_4K),
		  TDX_STATUS(TDX_PAGE_ALREADY_ACCEPTED, TDX_LEVEL_2M));
	/* Invalid operands on RCX: misaligned, level 2 (1 GiB) and above, reserved bits. */
	EXPECT_EQ(emu_model_tdx_accept(&m, (4 * MiB + PAGE_SIZE) | TDX_LEVEL_2M),
		  TDX_STATUS(TDX_OPERAND_INVALID, TDX_OPERAND_ID_RCX));
	EXPECT_EQ(code(emu_model_tdx_accept(&m, 4 * MiB | 3)), TDX_OPERAND_INVALID);
	EXPECT_EQ(code(emu_model_tdx_accept(&m, 10 * MiB | 0x10 | TDX_LEVEL_4K)), TDX_OPERAND_INVALID);
	EXPECT_EQ(emu_model_tdx_accept(&m, 0 | TDX_LEVEL_1G), TDX_STATUS(TDX_OPERAND_INVALID, TDX_OPERAND_ID_RCX));
	/* Bits 63:52 reserved; the shared bit (47 for GPAW 48) or above: not a private GPA. */
	EXPECT_EQ(emu_model_tdx_accept(&m, (1ULL << 52) | 4 * MiB | TDX_LEVEL_4K),
		  TDX_STATUS(TDX_OPERAND_INVALID, TDX_OPERAND_ID_RCX));
	EXPECT_EQ(emu_model_tdx_accept(&m, (1ULL << 63) | 4 * MiB | TDX_LEVEL_4K),
		  TDX_STATUS(TDX_OPERAND_INVALID, TDX_OPERAND_ID_RCX));
	EXPECT_EQ(emu_model_tdx_accept(&m, (1ULL << 47) | 4 * MiB | TDX_LEVEL_4K),
		  TDX_STATUS(TDX_OPERAND_INVALID, TDX_OPERAND_ID_RCX));
	EXPECT_EQ(emu_model_tdx_accept(&m, (1ULL << 50) | TDX_LEVEL_2M),
		  TDX_STATUS(TDX_OPERAND_INVALID, TDX_OPERAND_ID_RCX));
	/* Not RAM, or beyond the model: no SEPT entry, an EPT-violation exit, no status. */
	EXPECT_EQ(emu_model_tdx_accept(&m, 12 * MiB | TDX_LEVEL_4K), EMU_TDX_EPT_VIOLATION_EXIT);
	EXPECT_EQ(emu_model_tdx_accept(&m, END | TDX_LEVEL_4K), EMU_TDX_EPT_VIOLATION_EXIT);
}

TEST(model_tdx_gpaw52_moves_the_shared_bit_to_51)
{
	/* GPAW 52 (tdg_mem_page_accept.c check_gpa_validity): bit 51 is shared, bit 47 is not. */
	setup("gpaw52");
	EXPECT_EQ(m.tdx_gpaw, 52);
	EXPECT_EQ(emu_model_tdx_accept(&m, (1ULL << 51) | 4 * MiB | TDX_LEVEL_4K),
		  TDX_STATUS(TDX_OPERAND_INVALID, TDX_OPERAND_ID_RCX));
	/* Bit 47 is an ordinary private GPA now: no RAM there, so the EPT-violation exit. */
	EXPECT_EQ(emu_model_tdx_accept(&m, (1ULL << 47) | 4 * MiB | TDX_LEVEL_4K), EMU_TDX_EPT_VIOLATION_EXIT);
	EXPECT_EQ(emu_model_tdx_accept(&m, 4 * MiB | TDX_LEVEL_4K), 0);
	setup(NULL);
	EXPECT_EQ(m.tdx_gpaw, 48);
}

TEST(model_tdx_kvm_host_maps_4k_only)
{
	setup_host(NULL, false);
	/* Today's KVM: every unit is 4 KiB-mapped, so every 2 MiB accept is a size mismatch. */
	for (u64 a = 4 * MiB; a < 12 * MiB; a += UNIT_SIZE)
		EXPECT_EQ(emu_model_tdx_accept(&m, a | TDX_LEVEL_2M),
			  TDX_STATUS(TDX_PAGE_SIZE_MISMATCH, TDX_LEVEL_2M));
	EXPECT_EQ(st(4 * MiB), EMU_PG_RAM | EMU_PG_HOST_SMALL);
	/* 4 KiB works, once; the second time it is already accepted at level 4K. */
	EXPECT_EQ(emu_model_tdx_accept(&m, 4 * MiB | TDX_LEVEL_4K), 0);
	EXPECT_EQ(emu_model_tdx_accept(&m, 4 * MiB | TDX_LEVEL_4K),
		  TDX_STATUS(TDX_PAGE_ALREADY_ACCEPTED, TDX_LEVEL_4K));
	/* Still a mismatch at 2 MiB, now partly accepted. */
	EXPECT_EQ(code(emu_model_tdx_accept(&m, 4 * MiB | TDX_LEVEL_2M)), TDX_PAGE_SIZE_MISMATCH);
	EXPECT_EQ(code(emu_model_tdx_accept(&m, 0 | TDX_LEVEL_1G)), TDX_OPERAND_INVALID);
}

TEST(model_tdx_injected_busy_and_status)
{
	setup("busy@0x400000:2,status@0x1000000=0xC000000100000000");
	EXPECT_EQ(code(emu_model_tdx_accept(&m, 4 * MiB | TDX_LEVEL_2M)), TDX_OPERAND_BUSY);
	EXPECT_EQ(code(emu_model_tdx_accept(&m, 4 * MiB | TDX_LEVEL_2M)), TDX_OPERAND_BUSY);
	/* Busy did not change state: nothing was accepted while it answered busy. */
	EXPECT_EQ(st(4 * MiB), EMU_PG_RAM);
	EXPECT_EQ(emu_model_tdx_accept(&m, 4 * MiB | TDX_LEVEL_2M), 0);
	EXPECT_EQ(faults.f[0].fired, 2);
	EXPECT_EQ(emu_model_tdx_accept(&m, 16 * MiB | TDX_LEVEL_2M), 0xC000000100000000ULL);
	EXPECT_EQ(st(16 * MiB), EMU_PG_RAM);
}

TEST(model_snp_pvalidate)
{
	bool nu;

	setup("size_mismatch@0x600000,already@0xe01000,pvalidate_input@0x1200000");
	/* Shared (not assigned) memory cannot be validated. */
	EXPECT_EQ(emu_model_pvalidate(&m, 4 * MiB, PVALIDATE_2M, 1, &nu), PVALIDATE_FAIL_INPUT);
	emu_model_rmp_set(&m, 4 * MiB, 8 * MiB, true);
	EXPECT_EQ(emu_model_pvalidate(&m, 4 * MiB, PVALIDATE_2M, 1, &nu), PVALIDATE_OK);
	EXPECT(!nu);
	/* Validating again changes nothing: CF. */
	EXPECT_EQ(emu_model_pvalidate(&m, 4 * MiB, PVALIDATE_2M, 1, &nu), PVALIDATE_OK);
	EXPECT(nu);
	/* 4 KiB RMP entries: 2M fails with FAIL_SIZEMISMATCH, 4K works. */
	EXPECT_EQ(emu_model_pvalidate(&m, 6 * MiB, PVALIDATE_2M, 1, &nu), PVALIDATE_FAIL_SIZEMISMATCH);
	EXPECT_EQ(emu_model_pvalidate(&m, 6 * MiB, PVALIDATE_4K, 1, &nu), PVALIDATE_OK);
	EXPECT(!nu);
	/* Rescind, then rescind again (CF). */
	EXPECT_EQ(emu_model_pvalidate(&m, 6 * MiB, PVALIDATE_4K, 0, &nu), PVALIDATE_OK);
	EXPECT(!nu);
	EXPECT_EQ(emu_model_pvalidate(&m, 6 * MiB, PVALIDATE_4K, 0, &nu), PVALIDATE_OK);
	EXPECT(nu);
	/*
	 * A page validated behind the guest's back sits in a unit of 4 KiB RMP entries: 2M
	 * is a size mismatch, and validating that page again sets CF.
	 */
	emu_model_rmp_set(&m, 14 * MiB, 16 * MiB, true);
	EXPECT_EQ(emu_model_pvalidate(&m, 14 * MiB, PVALIDATE_2M, 1, &nu), PVALIDATE_FAIL_SIZEMISMATCH);
	EXPECT_EQ(emu_model_pvalidate(&m, 14 * MiB + PAGE_SIZE, PVALIDATE_4K, 1, &nu), PVALIDATE_OK);
	EXPECT(nu);
	/* Injected FAIL_INPUT, misalignment, bad size, non-RAM. */
	emu_model_rmp_set(&m, 18 * MiB, 20 * MiB, true);
	EXPECT_EQ(emu_model_pvalidate(&m, 18 * MiB, PVALIDATE_2M, 1, &nu), PVALIDATE_FAIL_INPUT);
	EXPECT_EQ(emu_model_pvalidate(&m, 18 * MiB + PAGE_SIZE, PVALIDATE_2M, 1, &nu), PVALIDATE_FAIL_INPUT);
	EXPECT_EQ(emu_model_pvalidate(&m, 18 * MiB, 2, 1, &nu), PVALIDATE_FAIL_INPUT);
	EXPECT_EQ(emu_model_pvalidate(&m, 12 * MiB, PVALIDATE_4K, 1, &nu), PVALIDATE_FAIL_INPUT);
	/* Making a validated page shared takes its validation away. */
	emu_model_rmp_set(&m, 4 * MiB, 4 * MiB + PAGE_SIZE, false);
	EXPECT_EQ(st(4 * MiB), EMU_PG_RAM);
}

TEST(model_snp_kvm_host_has_only_4k_rmp_entries)
{
	bool nu;

	setup_host("", false);	/* emu_host=kvm, the default */
	EXPECT(!m.host_huge);
	emu_model_rmp_set(&m, 4 * MiB, 6 * MiB, true);
	/* Today's KVM: every 2 MiB PVALIDATE is a size mismatch; the 512 pages validate. */
	EXPECT_EQ(emu_model_pvalidate(&m, 4 * MiB, PVALIDATE_2M, 1, &nu), PVALIDATE_FAIL_SIZEMISMATCH);
	EXPECT_EQ(st(4 * MiB), EMU_PG_RAM | EMU_PG_PRIVATE | EMU_PG_HOST_SMALL);
	for (u64 a = 4 * MiB; a < 6 * MiB; a += PAGE_SIZE)
		EXPECT_EQ(emu_model_pvalidate(&m, a, PVALIDATE_4K, 1, &nu), PVALIDATE_OK);
	EXPECT_EQ(st(6 * MiB - PAGE_SIZE), EMU_PG_RAM | EMU_PG_PRIVATE | EMU_PG_ACCEPTED | EMU_PG_HOST_SMALL);
	/* Rescinding at 2 MiB is a mismatch too. */
	EXPECT_EQ(emu_model_pvalidate(&m, 4 * MiB, PVALIDATE_2M, 0, &nu), PVALIDATE_FAIL_SIZEMISMATCH);
}

static void psc_desc(struct psc_desc *d, u16 n, u64 first, bool big)
{
	memset(d, 0, sizeof(*d));
	d->hdr.end_entry = (u16)(n - 1);
	for (u16 i = 0; i < n; i++)
		d->entries[i] = PSC_ENTRY((first >> 12) + i * (big ? 512 : 1), PSC_OP_PRIVATE, big);
}

TEST(model_snp_psc)
{
	static struct psc_desc d;

	setup("");
	psc_desc(&d, 4, 4 * MiB, true);
	EXPECT_EQ(emu_model_psc(&m, &d), 0);
	EXPECT_EQ(d.hdr.cur_entry, 4);
	EXPECT(st(11 * MiB) & EMU_PG_PRIVATE);
	EXPECT(!(st(11 * MiB) & EMU_PG_ACCEPTED));
	/* As KVM snp_begin_psc: end_entry >= 253 is a bad header; cur_entry past end_entry
	 * is nothing to do; a misaligned 2M entry is a bad entry. */
	psc_desc(&d, 1, 16 * MiB, false);
	d.hdr.end_entry = PSC_MAX_ENTRIES;
	EXPECT_EQ(emu_model_psc(&m, &d), PSC_ERROR_INVALID_HDR);
	psc_desc(&d, 2, 16 * MiB, false);
	d.hdr.cur_entry = 2;
	EXPECT_EQ(emu_model_psc(&m, &d), 0);
	EXPECT(!(st(16 * MiB) & EMU_PG_PRIVATE));
	psc_desc(&d, 1, 16 * MiB + PAGE_SIZE, true);
	EXPECT_EQ(emu_model_psc(&m, &d), PSC_ERROR_INVALID_ENTRY);
	/* Reserved bits 63:57 are not looked at: the entry is converted. */
	psc_desc(&d, 1, 16 * MiB, false);
	d.entries[0] |= 1ULL << 60;
	EXPECT_EQ(emu_model_psc(&m, &d), 0);
	EXPECT(st(16 * MiB) & EMU_PG_PRIVATE);
	/* Another operation (3, SMASH): done, nothing changed. */
	psc_desc(&d, 1, 17 * MiB, false);
	d.entries[0] = (d.entries[0] & ~(0xfULL << 52)) | (3ULL << 52);
	EXPECT_EQ(emu_model_psc(&m, &d), 0);
	EXPECT_EQ(d.hdr.cur_entry, 1);
	EXPECT(!(st(17 * MiB) & EMU_PG_PRIVATE));
	/* Not RAM: QEMU has nothing to make private (GENERIC), making it shared is no error. */
	psc_desc(&d, 1, 12 * MiB, false);
	EXPECT_EQ(emu_model_psc(&m, &d), PSC_ERROR_GENERIC);
	psc_desc(&d, 1, 12 * MiB, false);
	d.entries[0] = (d.entries[0] & ~(0xfULL << 52)) | (PSC_OP_SHARED << 52);
	EXPECT_EQ(emu_model_psc(&m, &d), 0);
}

TEST(model_snp_psc_faults)
{
	static struct psc_desc d;

	setup("psc_partial:3,psc_backwards,psc_error");
	/* The first request meets psc_error. */
	psc_desc(&d, 8, 14 * MiB, false);
	EXPECT_EQ(emu_model_psc(&m, &d), PSC_ERROR_GENERIC);
	/* Then three entries per exit; on the re-issue cur_entry goes back behind 3. */
	psc_desc(&d, 8, 14 * MiB, false);
	EXPECT_EQ(emu_model_psc(&m, &d), 0);
	EXPECT_EQ(d.hdr.cur_entry, 3);
	EXPECT_EQ(emu_model_psc(&m, &d), 0);
	EXPECT_EQ(d.hdr.cur_entry, 2);
	/* The backwards fault fires once; from here on, progress. */
	EXPECT_EQ(emu_model_psc(&m, &d), 0);
	EXPECT_EQ(d.hdr.cur_entry, 5);
	EXPECT_EQ(emu_model_psc(&m, &d), 0);
	EXPECT_EQ(d.hdr.cur_entry, 8);
}

TEST(model_observe_catches_double_accept)
{
	u64 bad = 0;

	setup("");
	EXPECT(emu_model_observe_accept(&m, 4 * MiB, 6 * MiB, &bad));
	EXPECT(!emu_model_observe_accept(&m, 5 * MiB, 7 * MiB, &bad));
	EXPECT_EQ(bad, 5 * MiB);
	EXPECT(!emu_model_observe_accept(&m, 0, PAGE_SIZE, &bad));	/* firmware-accepted */
	EXPECT_EQ(bad, 0);
	EXPECT(!emu_model_observe_accept(&m, 12 * MiB, 13 * MiB, &bad));	/* not RAM */
	EXPECT_EQ(bad, 12 * MiB);
}

/*
 * The page-state sanitizer (tools/observer) holds what the model reports through
 * emu_model_changed, and nothing else: every page whose RAM, accepted or private bit
 * an operation changes must lie in a range the operation reported.
 */
static u8 before[END >> PAGE_SHIFT];

static void snapshot(void)
{
	memcpy(before, storage, sizeof(before));
	unit_model_changes_reset();
}

static unsigned unreported_changes(void)
{
	const u8 bits = EMU_PG_RAM | EMU_PG_ACCEPTED | EMU_PG_PRIVATE;
	unsigned n = 0;

	for (u64 i = 0; i < END >> PAGE_SHIFT; i++)
		if (((before[i] ^ storage[i]) & bits) && !unit_model_change_reported(i << PAGE_SHIFT))
			n++;
	return n;
}

TEST(model_reports_every_state_change)
{
	static struct psc_desc d;
	bool no_update;
	u64 bad;

	unit_srand(34);
	for (int host = 0; host < 2; host++) {
		unit_model_changes_reset();
		setup_host("already@0xe01000", host);
		/* The starting state: all of the model. */
		for (u64 a = 0; a < END; a += PAGE_SIZE)
			EXPECT(unit_model_change_reported(a));
		for (int i = 0; i < 2000; i++) {
			u64 pa = (unit_rand() % (END >> PAGE_SHIFT)) << PAGE_SHIFT;
			u64 unit = ALIGN_DOWN(pa, UNIT_SIZE);
			bool big = unit_rand() & 1;

			snapshot();
			switch (unit_rand() % 5) {
			case 0:
				emu_model_tdx_accept(&m, big ? unit | TDX_LEVEL_2M : pa);
				break;
			case 1:
				emu_model_pvalidate(&m, big ? unit : pa, big, unit_rand() & 1, &no_update);
				break;
			case 2:
				emu_model_rmp_set(&m, pa, MIN(pa + (unit_rand() % 600) * PAGE_SIZE, END),
						  unit_rand() & 1);
				break;
			case 3:
				psc_desc(&d, 1 + (unsigned)(unit_rand() % 3),
					 MIN(unit, END - 3 * UNIT_SIZE), unit_rand() & 1);
				emu_model_psc(&m, &d);
				break;
			case 4:
				emu_model_observe_accept(&m, pa, MIN(pa + 4 * PAGE_SIZE, END), &bad);
				break;
			}
			EXPECT_EQ(unreported_changes(), 0);
		}
	}
}

TEST(model_snp_psc_resumes_at_cur_page)
{
	static struct psc_desc d;
	u64 unchanged = unit_emu_count("psc_pages_unchanged");

	setup("psc_partial_pages:100");
	psc_desc(&d, 2, 4 * MiB, true);
	/* 100 pages per exit: the first exit stops inside entry 0 and says so in cur_page. */
	EXPECT_EQ(emu_model_psc(&m, &d), 0);
	EXPECT_EQ(d.hdr.cur_entry, 0);
	EXPECT_EQ(PSC_ENTRY_CUR_PAGE(d.entries[0]), 100);
	EXPECT(st(4 * MiB + 99 * PAGE_SIZE) & EMU_PG_PRIVATE);
	EXPECT(!(st(4 * MiB + 100 * PAGE_SIZE) & EMU_PG_PRIVATE));
	/* Re-issued as left: pages 100..511, then entry 1 from its start. */
	for (int i = 0; i < 20 && d.hdr.cur_entry <= d.hdr.end_entry; i++)
		EXPECT_EQ(emu_model_psc(&m, &d), 0);
	EXPECT_EQ(d.hdr.cur_entry, 2);
	EXPECT_EQ(PSC_ENTRY_CUR_PAGE(d.entries[0]), 512);
	EXPECT_EQ(PSC_ENTRY_CUR_PAGE(d.entries[1]), 512);
	EXPECT(st(8 * MiB - PAGE_SIZE) & EMU_PG_PRIVATE);
	EXPECT_EQ(unit_emu_count("psc_pages_unchanged"), unchanged);
	/* A guest that loses cur_page makes the host redo pages: counted. */
	psc_desc(&d, 1, 4 * MiB, true);
	EXPECT_EQ(emu_model_psc(&m, &d), 0);
	EXPECT_EQ(unit_emu_count("psc_pages_unchanged"), unchanged + 100);
	/* cur_page beyond the entry: INVALID_ENTRY, as KVM answers. */
	psc_desc(&d, 1, 16 * MiB, false);
	d.entries[0] |= 2;
	EXPECT_EQ(emu_model_psc(&m, &d), PSC_ERROR_INVALID_ENTRY);
}

/* A tiny page-table tree in host memory: "physical" addresses index pt[]. */
static u64 pt[6][512];

static u64 read_pt(u64 pa)
{
	return pt[pa >> 12][(pa & 0xfff) / 8];
}

#define CBIT (1ULL << 56)

TEST(model_walk_finds_leaves_and_their_c_bit)
{
	struct emu_walk w;

	memset(pt, 0, sizeof(pt));
	/* PML4 at 0 -> PDPT at 1 -> PD at 2 -> PT at 3; tables carry the C-bit as the kernel's do. */
	pt[0][0] = (1 << 12) | CBIT | 3;
	pt[1][0] = (2 << 12) | CBIT | 3;
	pt[1][1] = (1ULL << 30) | CBIT | 0x83;			/* 1 GiB leaf, private */
	pt[2][0] = (3 << 12) | CBIT | 3;
	pt[2][1] = (2 * MiB) | 0x83 | (1 << 12);		/* 2 MiB leaf, shared, PAT bit */
	pt[3][5] = (0x5000) | CBIT | 3;				/* 4 KiB leaf, private */
	ASSERT(emu_walk_va(0, false, 0x5123, CBIT, read_pt, &w));
	EXPECT_EQ(w.pa, 0x5123);
	EXPECT_EQ(w.size, PAGE_SIZE);
	EXPECT(w.leaf & CBIT);
	ASSERT(emu_walk_va(0, false, 3 * MiB + 8, CBIT, read_pt, &w));
	EXPECT_EQ(w.pa, 3 * MiB + 8);
	EXPECT_EQ(w.size, UNIT_SIZE);
	EXPECT(!(w.leaf & CBIT));
	ASSERT(emu_walk_va(0, false, GiB + 7 * MiB, CBIT, read_pt, &w));
	EXPECT_EQ(w.pa, GiB + 7 * MiB);
	EXPECT_EQ(w.size, GiB);
	/* Not mapped: no PTE, no PDPTE. */
	EXPECT(!emu_walk_va(0, false, 0x6000, CBIT, read_pt, &w));
	EXPECT(!emu_walk_va(0, false, 5 * GiB, CBIT, read_pt, &w));
	/* Five levels: a PML5 at 4 whose entry 0 holds the PML4. */
	pt[4][0] = CBIT | 3;
	ASSERT(emu_walk_va(4 << 12, true, 0x5123, CBIT, read_pt, &w));
	EXPECT_EQ(w.pa, 0x5123);
	/* The C-bit in a table pointer is not an address bit. */
	pt[0][0] = (1 << 12) | CBIT | 3;
	EXPECT(emu_walk_va(0, false, 0x5000, CBIT, read_pt, &w));
}
