/* SPDX-License-Identifier: MIT */
/* memaccept: bringing up memory from the boot information: map, identity map, bitmap, allocator. */
#ifndef KERNEL_MEMORY_H
#define KERNEL_MEMORY_H

#include "include/boot_info.h"
#include "mm/memmap.h"

/* Validate and normalise the firmware's final map; stops the guest if it is unusable. */
void memory_parse_map(const struct boot_info *bi, bool can_accept, bool fake_allowed);
/* Build and load the kernel's identity map: every range except unaccepted and suspect ones. */
void memory_build_page_tables(u64 private_bits, bool use_1g);
/*
 * The `firmware` and `range` events and one line per anomaly; with verbose=1 also the raw
 * descriptors (`memdesc` events) and one line per range.
 */
void memory_report_firmware(const struct boot_info *bi);
/* Build the unaccepted bitmap (storage from accepted memory); `bitmap` event. */
void memory_build_bitmap(void);
/* The `bitmap` event (after `ready`: formatting it is not the window's work). */
void memory_report_bitmap(void);
/* The allocator's state at `ready` (printed after it, like the rest of the boot report). */
void memory_report_allocator(void);
/*
 * Bring up the page allocator: boot-services memory becomes free, the partial units at
 * the edges of unaccepted ranges go to its table (accepted on demand), the policy is
 * installed and its boot part runs (eager accepts everything here).
 */
void memory_init_allocator(const struct boot_info *bi);
/* The `summary` event: what acceptance cost. */
void memory_report_summary(void);

/*
 * Something touched memory inside the bitmap's span that is not mapped: report the
 * address, its unit and the unit's state, RIP and a backtrace, then terminate with
 * EXIT_UNACCEPTED_ACCESS. `source` names how it was caught ("page fault", "#VE", "#VC").
 */
struct trap_frame;
__noreturn void memory_report_unaccepted_access(const struct trap_frame *f, u64 addr,
						const char *source);
/* Catch touches of unaccepted memory (a not-present #PF inside the span). */
void memory_trap_init(void);
/*
 * Is addr inside a unit the bitmap tracks (unaccepted now or accepted since), or in a
 * partial unit's piece that is not accepted yet?
 */
bool memory_in_unaccepted_span(u64 addr);
/* The first unit at or above from that is still unaccepted (its bit set); false if none. */
bool memory_next_unaccepted(u64 from, u64 *unit);

extern struct memmap kernel_memmap;

/* accept_memory=background: hand the remaining units to the APs (after `ready`). */
void memory_start_background(u32 policy);
/* Wait for them and print the `background` event (nothing for other policies). */
void memory_report_background(void);
/*
 * workload=probe: from now on this CPU's accepts of whole units go to fn (after the
 * mapping, inside the allocator's bookkeeping) instead of the platform's accept; NULL
 * restores it. memory_last_map_ns: how long this CPU's last accept spent mapping.
 */
void memory_set_probe_accept(int (*fn)(void *ctx, u64 start, u64 end), void *ctx);
u64 memory_last_map_ns(void);
/* Times recorded so far were converted at hz `was`; the clock runs at `now`: correct them. */
void memory_rescale_time(u64 was, u64 now);

#endif
