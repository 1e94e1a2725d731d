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

/* ---- acceptance, for the allocator */

/*
 * palloc_init's part for acceptance: the bitmap, the platform call (env->ncpus set), the
 * statistics. `was`: the CPUs an earlier init was told of, whose counts are cleared too.
 */
void accept_init(struct unaccepted_bitmap *bm, const struct palloc_env *env, unsigned was,
		 struct palloc_stats *stats);
/* Times acceptance's locks were taken. */
u64 accept_lock_acquisitions(void);
/* Is any CPU accepting now? *generation: what accept_wait() waits on. */
bool accept_in_flight(u64 *generation);
/* Wait (spinning, serving cache drains) until some accept in flight at `generation` has finished. */
void accept_wait(u64 generation);

#endif
