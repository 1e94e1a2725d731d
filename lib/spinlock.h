/* SPDX-License-Identifier: MIT */
/* memaccept: spinlocks (test-and-set, ticket) and the atomics the SMP code uses (kernel and host tests). */
#ifndef LIB_SPINLOCK_H
#define LIB_SPINLOCK_H

#include "include/types.h"

/*
 * Two locks, both with GCC's __atomic builtins: acquire on lock, release on unlock, so
 * everything written under a lock is visible to its next holder (C11 memory model; on x86
 * the acquire is a locked instruction and the release a plain store, Intel SDM vol. 3A
 * 9.2.3.1). The host tests build the same code with ThreadSanitizer, which understands
 * these builtins. Interrupts are always off in memaccept, so there is no irqsave variant.
 *
 * struct spinlock, test-and-test-and-set: whichever CPU's exchange lands first wins. Not
 * fair, but a waiter that is not running (a vCPU the host descheduled) delays nobody.
 * For short sections taken rarely (the console, the emulator).
 *
 * struct ticket_lock: each CPU that arrives takes the next ticket (one atomic add) and
 * waits until the lock serves it, so CPUs get the lock in the order they asked and none
 * starves while others take it over and over (the page allocator's locks, which every
 * vCPU may want at once). The price: when the host deschedules the vCPU whose turn is
 * next, every vCPU behind it waits too (measured here under QEMU TCG with 4 vCPUs on 2
 * host cores: with every lock a ticket lock, an eager TDX boot took 24-36 s instead of
 * 10-12 s, and two such boots side by side did not finish in 300 s). Both count
 * acquisitions.
 *
 * A busy lock should sit on a cache line of its own (declare it __aligned(64)): CPUs
 * waiting for it read it over and over, and would slow down whoever writes next to it.
 */
struct spinlock {
	u32 locked;
	u64 acquired;		/* how many times it was taken: written only by the holder */
};

struct ticket_lock {
	u32 next;		/* the ticket the next CPU to arrive takes */
	u32 owner;		/* the ticket being served: written only by the holder */
	u64 acquired;		/* how many times it was taken: written only by the holder */
};

#define SPINLOCK_INIT { 0, 0 }
#define TICKET_LOCK_INIT { 0, 0, 0 }

/* PAUSE: tells the CPU (and a hyperthread sibling) that this is a spin-wait loop. */
static inline void spin_relax(void)
{
	__builtin_ia32_pause();
}

static inline void spin_lock(struct spinlock *l)
{
	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			spin_relax();
	__atomic_store_n(&l->acquired, l->acquired + 1, __ATOMIC_RELAXED);
}

static inline bool spin_trylock(struct spinlock *l)
{
	if (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		return false;
	__atomic_store_n(&l->acquired, l->acquired + 1, __ATOMIC_RELAXED);
	return true;
}

static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

static inline void ticket_lock(struct ticket_lock *l)
{
	u32 ticket = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);

	while (__atomic_load_n(&l->owner, __ATOMIC_ACQUIRE) != ticket)
		spin_relax();
	__atomic_store_n(&l->acquired, l->acquired + 1, __ATOMIC_RELAXED);
}

static inline void ticket_unlock(struct ticket_lock *l)
{
	__atomic_store_n(&l->owner, l->owner + 1, __ATOMIC_RELEASE);
}

/* Times a lock was taken so far (exact once its users are quiet). */
static inline u64 spin_acquired(const struct spinlock *l)
{
	return __atomic_load_n(&l->acquired, __ATOMIC_RELAXED);
}

static inline u64 ticket_acquired(const struct ticket_lock *l)
{
	return __atomic_load_n(&l->acquired, __ATOMIC_RELAXED);
}

static inline u64 atomic_load64(const u64 *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void atomic_store64(u64 *p, u64 v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline u64 atomic_add64(u64 *p, u64 v)
{
	return __atomic_add_fetch(p, v, __ATOMIC_ACQ_REL);
}

#endif
