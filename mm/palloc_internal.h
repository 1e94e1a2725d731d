/* SPDX-License-Identifier: MIT */
/* memaccept: what the page allocator (page_alloc.c) and acceptance (accept.c) share; private to mm/. */
#ifndef MM_PALLOC_INTERNAL_H
#define MM_PALLOC_INTERNAL_H

#include "lib/spinlock.h"
#include "mm/bitmap.h"
#include "mm/page_alloc.h"

/*
 * The free lists' lock (page_alloc.c). Acceptance has its own (accept.c); where a unit
 * passes from one to the other (accepted, it becomes free) acceptance takes this one for
 * the hand-over. Neither is held across a platform accept call.
 */
extern struct spinlock palloc_lock;

/* A 2 MiB unit's state in the allocator (page_alloc.c has the full picture). */
enum unit_state {
	U_OUTSIDE = 0,		/* not RAM, used by the firmware or the kernel, or unaccepted */
	U_FREE = 1,		/* a whole free unit */
	U_USED = 2,		/* handed out whole */
	U_SPLIT = 3,		/* carved into smaller blocks */
	U_LOST = 4,		/* the platform refused to accept it */
	U_ACCEPTING = 5,	/* claimed by a CPU that is accepting it right now */
};

/* ---- the allocator, for acceptance */

/* The unit's state, or -1 if no zone holds it. */
int palloc_unit_state(u64 unit);
/* Under acceptance's lock: units [start, end), each in a zone and U_OUTSIDE, become U_ACCEPTING. */
void palloc_units_claim(u64 start, u64 end);
/* Under palloc_lock: claimed units were accepted (free from now on) or refused (lost). */
void palloc_units_done_locked(u64 start, u64 end, bool accepted);
/* Is a unit of [start, end) claimed and not done yet? (No lock: each unit's state is read once.) */
bool palloc_units_claimed(u64 start, u64 end);
/* Under palloc_lock: the accepted pages [start, end) become free memory. */
void palloc_add_free_locked(u64 start, u64 end);
/* Under palloc_lock: a block for acceptance's own use, counted as this CPU's allocation; 0 if none. */
u64 palloc_alloc_locked(unsigned order);

/* ---- acceptance, for the allocator */

/*
 * palloc_init's part for acceptance: the bitmap, the platform call (env->ncpus set), the
 * statistics. `was`: the CPUs an earlier init was told of, whose counts are cleared too.
 */
void accept_init(struct unaccepted_bitmap *bm, const struct palloc_env *env, unsigned was,
		 struct palloc_stats *stats);
/*
 * Under palloc_lock, at palloc_populate: every CPU's page-table reserve (env.pt_reserve
 * pages each) from the free memory just added, as far as it goes.
 */
void accept_reserve_fill_all_locked(void);
/* Is this CPU inside its platform accept call (the env.accept callback) right now? */
bool accept_this_cpu_accepting(void);
/* Times acceptance's locks were taken. */
u64 accept_lock_acquisitions(void);
/* Is any CPU accepting now? *generation: what accept_wait() waits on. */
bool accept_in_flight(u64 *generation);
/* Wait (spinning, serving cache drains) until some accept in flight at `generation` has finished. */
void accept_wait(u64 generation);

/* Where a host test may stop a thread (PALLOC_TEST_POINT). */
enum palloc_point {
	PALLOC_POINT_REFILLED,		/* pcp_refill released the lock */
	PALLOC_POINT_ACCEPT_TIMED,	/* an accept returned and was timed; statistics not yet added */
	PALLOC_POINT_FREE_CHECKED,	/* palloc_free's fast path read the block's page byte */
	PALLOC_POINT_DRAIN_ASKED,	/* drain_all asked a CPU for its cache and waits for it */
};

/*
 * Host unit tests only (built with PALLOC_TEST_POINTS): points where a test may stop one
 * thread to force an interleaving (NULL: nothing happens). The kernel and the benchmarks have none.
 */
#ifdef PALLOC_TEST_POINTS
extern void (*palloc_test_point)(enum palloc_point point);
/* Back to the state before the first palloc_init (no CPU may be using the allocator). */
void palloc_test_forget(void);
#define PALLOC_TEST_POINT(p)              \
	do {                              \
		if (palloc_test_point)    \
			palloc_test_point(p); \
	} while (0)
#else
#define PALLOC_TEST_POINT(p) do { } while (0)
#endif

#endif
