/* SPDX-License-Identifier: MIT */
/* memaccept: test cases that touch unaccepted memory on purpose, to check that it is caught. */
#include "arch/x86/paging.h"
#include "arch/x86/platform.h"
#include "include/panic.h"
#include "kernel/smp.h"
#include "kernel/testcase.h"
#include "mm/accept.h"
#include "mm/page_alloc.h"

static u64 read_u64(u64 addr)
{
	u64 v;

	__asm__ volatile("mov (%1), %0" : "=r"(v) : "r"(addr) : "memory");
	return v;
}

TESTCASE(stray_read, "a read inside an unaccepted unit is reported with its address and unit")
{
	u64 unit;

	CHECK(bitmap_next(palloc_bitmap(), 0, &unit));
	testcase_announce_stray(unit + 0x123);
	read_u64(unit + 0x123);
	return EXIT_TEST_FAILED;	/* not reached: the #PF handler terminates */
}

/*
 * The load_unaligned_zeropad() case Linux met: an 8-byte read that starts in the last
 * accepted page and runs 5 bytes into the next, unaccepted unit. memaccept has no such
 * reads; if one appeared, it would be caught here instead of reaching the host.
 */
TESTCASE(stray_cross, "an unaligned read across the end of accepted memory into an unaccepted unit is caught")
{
	u64 unit;

	/* The lowest unaccepted unit; with fake_unaccepted_start=1G the page below it is RAM. */
	CHECK(bitmap_next(palloc_bitmap(), 0, &unit));
	CHECK(paging_lookup(unit - PAGE_SIZE) != 0);
	testcase_announce_stray(unit);
	read_u64(unit - 3);
	return EXIT_TEST_FAILED;
}

/*
 * Unmapping while the APs run would leave their TLBs stale (nothing can make them flush:
 * memaccept takes no interrupts), so paging_unmap() stops the guest instead.
 */
TESTCASE(unmap_while_aps_run, "unmapping a page while other CPUs run stops the guest")
{
	u64 page = palloc_alloc(0);

	CHECK(smp_cpus_started() > 1);
	CHECK(page != 0);
	paging_unmap(page, page + PAGE_SIZE);
	return EXIT_TEST_FAILED;	/* not reached: paging_unmap panics */
}

/* The platform's accept, refusing once: what a backend that reports a failure would do. */
static const struct cc_platform *real_platform;

static int refuse_accept(u64 start, u64 end)
{
	(void)start, (void)end;
	return -1;
}

/*
 * A unit the platform refuses while the APs run is lost, not unmapped (which would stop
 * the guest, as above): the guest goes on, and the allocator never hands it out.
 */
TESTCASE(refused_accept_while_aps_run, "a unit the platform refuses while other CPUs run is "
	 "lost: never handed out, and the guest goes on")
{
	static struct cc_platform refusing;
	u64 unit, failures = palloc_stats()->accept_failures;

	CHECK(smp_cpus_started() > 1);
	CHECK(bitmap_next(palloc_bitmap(), 0, &unit));
	real_platform = platform;
	refusing = *platform;
	refusing.accept = refuse_accept;
	platform = &refusing;
	CHECK(palloc_accept_range(unit, unit + UNIT_SIZE, ACCEPT_EXPLICIT) == 0);
	platform = real_platform;
	CHECK(palloc_stats()->accept_failures == failures + 1);
	CHECK(!bitmap_test(palloc_bitmap(), unit));
	/* Every 2 MiB block there is, none of them the lost unit. */
	for (u64 b; (b = palloc_alloc(PALLOC_MAX_ORDER));)
		CHECK(b != unit);
	return EXIT_OK;
}
