/* SPDX-License-Identifier: MIT */
/* memaccept: host tests of the clock's pure logic: ACPI PM timer discovery (through the ACPI walk), declared frequencies, PM timer calibration, rescaling. */
#include <string.h>
#include <sys/mman.h>
#include "arch/x86/acpi.h"
#include "arch/x86/tsc_cal.h"
#include "arch/x86/acpi_walk.h"
#include "lib/muldiv.h"
#include "mm/latency.h"
#include "mm/series.h"
#include "tests/unit/unit.h"

/* ---------------------------------------------------------------- ACPI tables */

/*
 * One set of tables, laid out as the ACPI 6.5 offsets in arch/x86/acpi.c say. Below
 * 4 GiB (MAP_32BIT), because the RSDT holds 32-bit addresses.
 */
struct tables {
	u8 rsdp[36];
	u8 xsdt[36 + 8 * 2];
	u8 rsdt[36 + 4 * 2];
	u8 other[36];
	u8 fadt[276];
};
static struct tables *tp;
#define t (*tp)

static void put32(u8 *p, u32 v) { memcpy(p, &v, 4); }
static void put64(u8 *p, u64 v) { memcpy(p, &v, 8); }

static void fix_sum(u8 *p, u32 len, u32 sum_off)
{
	u8 s = 0;

	p[sum_off] = 0;
	for (u32 i = 0; i < len; i++)
		s = (u8)(s + p[i]);
	p[sum_off] = (u8)(0x100 - s);
}

static void header(u8 *p, const char *sig, u32 len)
{
	memcpy(p, sig, 4);
	put32(p + 4, len);
}

/* Checksums over everything, after any change a test made. */
static void seal(void)
{
	fix_sum(t.rsdp, 20, 8);
	fix_sum(t.rsdp, 36, 32);
	fix_sum(t.xsdt, sizeof(t.xsdt), 9);
	fix_sum(t.rsdt, sizeof(t.rsdt), 9);
	fix_sum(t.other, sizeof(t.other), 9);
	fix_sum(t.fadt, sizeof(t.fadt), 9);
}

/* q35-like: XSDT lists another table, then the FADT; PM_TMR_BLK 0x608, 24-bit, no X field. */
static void build(void)
{
	if (!tp) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap MAP_32BIT");
			exit(2);
		}
		tp = p;
	}
	memset(&t, 0, sizeof(t));
	memcpy(t.rsdp, "RSD PTR ", 8);
	t.rsdp[15] = 2;
	put32(t.rsdp + 16, (u32)(uintptr_t)t.rsdt);
	put32(t.rsdp + 20, 36);
	put64(t.rsdp + 24, (u64)(uintptr_t)t.xsdt);
	header(t.xsdt, "XSDT", sizeof(t.xsdt));
	put64(t.xsdt + 36, (u64)(uintptr_t)t.other);
	put64(t.xsdt + 44, (u64)(uintptr_t)t.fadt);
	header(t.rsdt, "RSDT", sizeof(t.rsdt));
	put32(t.rsdt + 36, (u32)(uintptr_t)t.other);
	put32(t.rsdt + 40, (u32)(uintptr_t)t.fadt);
	header(t.other, "APIC", sizeof(t.other));
	header(t.fadt, "FACP", sizeof(t.fadt));
	put32(t.fadt + 76, 0x608);
	t.fadt[91] = 4;
	seal();
}

static u64 rsdp(void)
{
	return (u64)(uintptr_t)t.rsdp;
}

/* The tables are this process's memory: any non-zero address reads. */
static bool read_host(void *ctx, u64 addr, void *dst, u64 len)
{
	(void)ctx;
	if (!addr)
		return false;
	memcpy(dst, (const void *)(uintptr_t)addr, len);
	return true;
}

/* The kernel's way to the PM timer: the ACPI walk, then the FADT's fields. */
static u32 find_pm(u64 rsdp_addr, struct acpi_pm_timer *pm)
{
	static struct acpi_facts f;
	struct acpi_reader r = { read_host, NULL };

	acpi_scan(&r, rsdp_addr, &f);
	*pm = f.pm;
	return f.pm_status;
}

TEST(acpi_finds_legacy_pm_timer_through_xsdt)
{
	struct acpi_pm_timer pm;

	build();
	ASSERT_EQ(find_pm(rsdp(), &pm), ACPI_PM_OK);
	EXPECT_EQ(pm.port, 0x608);
	EXPECT_EQ(pm.bits, 24);
	EXPECT_EQ(pm.from_x_field, 0);
}

TEST(acpi_tmr_val_ext_means_32_bits)
{
	struct acpi_pm_timer pm;

	build();
	put32(t.fadt + 112, 1u << 8);
	seal();
	ASSERT_EQ(find_pm(rsdp(), &pm), ACPI_PM_OK);
	EXPECT_EQ(pm.bits, 32);
}

TEST(acpi_x_pm_tmr_blk_wins_when_system_io)
{
	struct acpi_pm_timer pm;

	build();
	t.fadt[208] = 1;	/* system I/O */
	t.fadt[209] = 32;
	put64(t.fadt + 212, 0xb008);
	seal();
	ASSERT_EQ(find_pm(rsdp(), &pm), ACPI_PM_OK);
	EXPECT_EQ(pm.port, 0xb008);
	EXPECT_EQ(pm.from_x_field, 1);
	/* A memory-space X field is not a port: the legacy block is used instead. */
	t.fadt[208] = 0;
	seal();
	ASSERT_EQ(find_pm(rsdp(), &pm), ACPI_PM_OK);
	EXPECT_EQ(pm.port, 0x608);
}

/* ACPI 1.0 (revision 0, an RSDT only): the walk reads XSDTs only, and says so. */
TEST(acpi_revision_0_is_refused)
{
	struct acpi_pm_timer pm;

	build();
	t.rsdp[15] = 0;
	seal();
	EXPECT_EQ(find_pm(rsdp(), &pm), ACPI_PM_NO_RSDP);
	EXPECT_EQ(pm.port, 0);
}

TEST(acpi_bad_checksums_and_lengths_are_refused)
{
	struct acpi_pm_timer pm;

	build();
	t.rsdp[19] ^= 1;	/* covered by the first checksum only */
	EXPECT_EQ(find_pm(rsdp(), &pm), ACPI_PM_NO_RSDP);
	EXPECT_EQ(pm.port, 0);
	build();
	t.rsdp[30] ^= 1;	/* inside the extended checksum */
	EXPECT_EQ(find_pm(rsdp(), &pm), ACPI_PM_NO_RSDP);
	build();
	memcpy(t.rsdp, "RSD PTX ", 8);
	EXPECT_EQ(find_pm(rsdp(), &pm), ACPI_PM_NO_RSDP);
	EXPECT_EQ(find_pm(0, &pm), ACPI_PM_NO_RSDP);
	build();
	t.xsdt[40] ^= 1;
	EXPECT_EQ(find_pm(rsdp(), &pm), ACPI_PM_BAD_ROOT);
	build();
	put32(t.xsdt + 4, 1u << 30);	/* a length far beyond any table: never summed */
	EXPECT_EQ(find_pm(rsdp(), &pm), ACPI_PM_BAD_ROOT);
	build();
	t.fadt[100] ^= 1;	/* a FADT with a bad checksum is no FADT */
	EXPECT_EQ(find_pm(rsdp(), &pm), ACPI_PM_NO_FADT);
}

TEST(acpi_missing_or_malformed_timer)
{
	struct acpi_pm_timer pm;

	build();
	put32(t.fadt + 76, 0);	/* hardware-reduced: no timer */
	seal();
	EXPECT_EQ(find_pm(rsdp(), &pm), ACPI_PM_NO_TIMER);
	build();
	t.fadt[91] = 2;		/* PM_TMR_LEN must be 4 */
	seal();
	EXPECT_EQ(find_pm(rsdp(), &pm), ACPI_PM_NO_TIMER);
	build();
	t.fadt[208] = 1;
	put64(t.fadt + 212, 0x12345);	/* not a 16-bit port */
	seal();
	EXPECT_EQ(find_pm(rsdp(), &pm), ACPI_PM_NO_TIMER);
	build();
	header(t.fadt, "FACP", 100);	/* too short to hold the flags */
	fix_sum(t.fadt, 100, 9);
	EXPECT_EQ(find_pm(rsdp(), &pm), ACPI_PM_NO_TIMER);
	build();
	memcpy(t.fadt, "FACQ", 4);
	seal();
	EXPECT_EQ(find_pm(rsdp(), &pm), ACPI_PM_NO_FADT);
}

/* ---------------------------------------------------------------- declared sources */

TEST(declared_cpuid_15)
{
	struct clock_raw raw = { .max_leaf = 0x20, .l15_eax = 2, .l15_ebx = 188, .l15_ecx = 25000000 };
	struct clock_declared d;

	clock_declared_pick(&raw, &d);
	EXPECT_EQ(d.source, CLOCK_CPUID_15);
	EXPECT_EQ(d.hz, 2350000000ULL);
	/* No crystal enumerated (ECX = 0), or a max leaf below 0x15: not declared. */
	raw.l15_ecx = 0;
	clock_declared_pick(&raw, &d);
	EXPECT_EQ(d.source, CLOCK_NONE);
	EXPECT_EQ(d.hz, 0);
	raw.l15_ecx = 25000000;
	raw.max_leaf = 0x14;
	clock_declared_pick(&raw, &d);
	EXPECT_EQ(d.source, CLOCK_NONE);
}

TEST(declared_hypervisor_leaf_only_when_listed)
{
	struct clock_raw raw = { .max_leaf = 0xd, .hv_max_leaf = 0x40000010, .hv_tsc_khz = 2299998 };
	struct clock_declared d;

	clock_declared_pick(&raw, &d);
	EXPECT_EQ(d.source, CLOCK_HV_LEAF);
	EXPECT_EQ(d.hz, 2299998000ULL);
	EXPECT(d.error_ppm >= 1 && d.error_ppm <= 2);	/* half a kHz of 2.3 GHz, rounded up */
	raw.hv_max_leaf = 0x4000000f;
	clock_declared_pick(&raw, &d);
	EXPECT_EQ(d.source, CLOCK_NONE);
}

TEST(declared_priority_snp_then_cpuid_then_hypervisor)
{
	struct clock_raw raw = { .max_leaf = 0x20, .l15_eax = 1, .l15_ebx = 100, .l15_ecx = 20000000,
				 .hv_max_leaf = 0x40000010, .hv_tsc_khz = 1000000,
				 .sev_status = SEV_STATUS_SECURE_TSC | 4,
				 .guest_tsc_freq = (0xabcULL << 18) | 2500 };
	struct clock_declared d;

	clock_declared_pick(&raw, &d);
	EXPECT_EQ(d.source, CLOCK_SNP_SECURE_TSC);
	EXPECT_EQ(d.hz, 2500000000ULL);	/* bits 17:0 only */
	raw.sev_status = 4;		/* SNP without Secure TSC */
	clock_declared_pick(&raw, &d);
	EXPECT_EQ(d.source, CLOCK_CPUID_15);
	EXPECT_EQ(d.hz, 2000000000ULL);
	raw.l15_ebx = 0;
	clock_declared_pick(&raw, &d);
	EXPECT_EQ(d.source, CLOCK_HV_LEAF);
	EXPECT_EQ(d.hz, 1000000000ULL);
}

/* ---------------------------------------------------------------- PM timer calibration */

TEST(pm_hz_exact_and_error_bound)
{
	/* 3,579,545 ticks = 1 s; 2.3e9 cycles in it. */
	struct pm_sample a = { .tsc = 1000, .window = 2000, .pm = 100 };
	struct pm_sample b = { .tsc = 1000 + 2300000000ULL, .window = 2000, .pm = 100 + 3579545 };
	u64 hz = 0, err = 0;

	ASSERT(clock_pm_hz(&a, &b, 32, &hz, &err));
	EXPECT_EQ(hz, 2300000000ULL);
	/* (2000 + 2000) / 2 + 2 ticks of 642 cycles: 3286 cycles of 2.3e9, about 1.4 ppm. */
	EXPECT(err >= 1 && err <= 3);
	/* A 20 ms span with 2 us brackets: about 100 ppm. */
	b.tsc = 1000 + 46000000;
	b.pm = 100 + 71591;
	b.window = a.window = 4600;
	ASSERT(clock_pm_hz(&a, &b, 32, &hz, &err));
	EXPECT(hz > 2299990000ULL && hz < 2300040000ULL);
	EXPECT(err >= 100 && err <= 200);
}

TEST(pm_hz_24_bit_wrap)
{
	struct pm_sample a = { .tsc = 0, .window = 0, .pm = 0xfff000 };
	struct pm_sample b = { .tsc = 2300000000ULL, .window = 0, .pm = (0xfff000 + 3579545) & 0xffffff };
	u64 hz = 0, err = 0;

	/* Upper byte garbage must not matter either (a 24-bit timer's bits 31:24 are reserved). */
	b.pm |= 0x5a000000;
	ASSERT(clock_pm_hz(&a, &b, 24, &hz, &err));
	EXPECT_EQ(hz, 2300000000ULL);
	/* The same samples read as 32 bits would be a very different (wrong) answer. */
	ASSERT(clock_pm_hz(&a, &b, 32, &hz, &err));
	EXPECT(hz != 2300000000ULL);
}

TEST(pm_hz_refuses_no_progress)
{
	struct pm_sample a = { .tsc = 5, .window = 0, .pm = 7 };
	struct pm_sample b = a;
	u64 hz = 0, err = 0;

	EXPECT(!clock_pm_hz(&a, &b, 24, &hz, &err));	/* the timer did not move */
	b.pm = 8;
	EXPECT(!clock_pm_hz(&a, &b, 24, &hz, &err));	/* the TSC did not move */
	b.tsc = 4;
	EXPECT(!clock_pm_hz(&a, &b, 24, &hz, &err));	/* the TSC went backwards */
}

TEST(diff_ppm)
{
	EXPECT_EQ(clock_diff_ppm(1001000, 1000000), 1000);
	EXPECT_EQ(clock_diff_ppm(999000, 1000000), 1000);
	EXPECT_EQ(clock_diff_ppm(5, 0), UINT64_MAX);
}

TEST(mul_div_saturates)
{
	EXPECT_EQ(mul_div_u64(3000000000ULL, 3000000000ULL, 1000000000ULL), 9000000000ULL);
	EXPECT_EQ(mul_div_u64(UINT64_MAX, 2, 3), UINT64_MAX / 3 * 2);
	EXPECT_EQ(mul_div_u64(UINT64_MAX, 2, 1), UINT64_MAX);
	EXPECT_EQ(mul_div_u64(1, 1, 0), UINT64_MAX);
}

/* MiB/s of an accept of more than 18.4 GB: the 64-bit product bytes * 10^9 would wrap. */
TEST(rate_mib_s_past_the_64_bit_product)
{
	u64 bytes = 20ULL << 30;	/* 20 GiB in 10 s: 2048 MiB/s */

	EXPECT_EQ(rate_mib_s(bytes, 10000000000ULL), 2048);
	EXPECT_EQ(rate_mib_s(8ULL << 40, 1000000000ULL), 8ULL << 20);
	EXPECT_EQ(rate_mib_s(1ULL << 20, 1000000000ULL), 1);
	EXPECT_EQ(rate_mib_s(bytes, 0), 0);
}

/* ---------------------------------------------------------------- rescaling */

TEST(latency_rescale_corrects_everything)
{
	static u32 samples[8];
	struct latency l;
	u64 v[] = { 1000, 3000, 100000, 7 };

	latency_init(&l, samples, 8);
	for (unsigned i = 0; i < 4; i++)
		latency_add(&l, v[i]);
	/* Recorded at a clock that was 2x too slow: every value doubles. */
	latency_rescale(&l, 2000000000ULL, 1000000000ULL);
	EXPECT_EQ(l.total_ns, 2 * (1000 + 3000 + 100000 + 7));
	EXPECT_EQ(l.max_ns, 200000);
	EXPECT_EQ(l.min_ns, 14);
	EXPECT_EQ(latency_percentile(&l, 500), 2000);
	/* The histogram follows: 14 in bucket 3, 2000 in 10, 6000 in 12, 200000 in 17. */
	EXPECT_EQ(l.buckets[3], 1);
	EXPECT_EQ(l.buckets[2], 0);
	EXPECT_EQ(l.buckets[10], 1);
	EXPECT_EQ(l.buckets[12], 1);
	EXPECT_EQ(l.buckets[17], 1);
	EXPECT_EQ(l.buckets[16], 0);
}

TEST(series_rescale_times_only)
{
	struct series s;
	u64 tt[SERIES_MAX + 1], vv[SERIES_MAX + 1];

	series_init(&s);
	series_add(&s, 1000, 5);
	series_add(&s, 3000, 9);
	series_rescale_t(&s, 1, 2);
	ASSERT_EQ(series_points(&s, tt, vv), 2);
	EXPECT_EQ(tt[0], 500);
	EXPECT_EQ(tt[1], 1500);
	EXPECT_EQ(vv[1], 9);
}

/* Which clocks the host can skew (docs/threat-model.md): all but Secure TSC and CPUID 0x15 in a TD. */
TEST(clock_host_skewable_sources)
{
	EXPECT(!clock_host_skewable(CLOCK_SNP_SECURE_TSC, false));
	EXPECT(!clock_host_skewable(CLOCK_CPUID_15, true));
	EXPECT(clock_host_skewable(CLOCK_CPUID_15, false));
	EXPECT(clock_host_skewable(CLOCK_HV_LEAF, true));
	EXPECT(clock_host_skewable(CLOCK_PM_TIMER, true));
	EXPECT(clock_host_skewable(CLOCK_EFI_STALL, false));
	EXPECT(clock_host_skewable(CLOCK_NONE, false));
}

/* Secure TSC: GUEST_TSC_FREQ lowered by TSC_FACTOR (0.001 %), as the SNP firmware ABI defines it. */
TEST(clock_snp_secure_tsc_factor)
{
	struct clock_raw raw = { .sev_status = SEV_STATUS_SECURE_TSC, .guest_tsc_freq = 2600, .tsc_factor = 2000 };
	struct clock_declared d;

	EXPECT_EQ(clock_snp_secure_hz(2600, 0), 2600000000ULL);
	EXPECT_EQ(clock_snp_secure_hz(2600, 2000), 2548000000ULL);	/* 2 % lower */
	EXPECT_EQ(clock_snp_secure_hz(1, 1), 999990);
	EXPECT_EQ(clock_snp_secure_hz(0x3ffff, 99999), 2621430);	/* no overflow at the largest MHz */
	EXPECT_EQ(clock_snp_secure_hz(2600, 100000), 0);
	clock_declared_pick(&raw, &d);
	EXPECT_EQ(d.source, CLOCK_SNP_SECURE_TSC);
	EXPECT_EQ(d.hz, 2548000000ULL);
	/* A factor of 100 % leaves no frequency: Secure TSC declares nothing. */
	raw.tsc_factor = 100000;
	clock_declared_pick(&raw, &d);
	EXPECT(d.source != CLOCK_SNP_SECURE_TSC);
}
