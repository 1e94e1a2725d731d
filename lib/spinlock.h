/* SPDX-License-Identifier: MIT */
/* memaccept: the spinlock (test-and-test-and-set) and the atomics the SMP code uses (kernel and host tests). */
#ifndef LIB_SPINLOCK_H
#define LIB_SPINLOCK_H

#include "include/types.h"

/*
 * A test-and-test-and-set lock with GCC's __atomic builtins: acquire on lock, release on
 * unlock, so everything written under it is visible to its next holder (C11 memory
 * model; on x86 the acquire is a locked instruction and the release a plain store, Intel
 * SDM vol. 3A 9.2.3.1). The host tests build the same code with ThreadSanitizer, which
 * understands these builtins. Interrupts are always off in memaccept, so there is no
 * irqsave variant.
 *
 * Whichever CPU's exchange lands first wins: not fair, but a waiter that is not running
 * (a vCPU the host descheduled) delays nobody. A fair lock (ticket or queued) hands the
 * lock to the next CPU in line even when the host is not running that vCPU, and every
 * CPU behind it waits too: measured here under QEMU TCG, where vCPUs outnumber host
 * cores, a ticket lock for the page allocator made 16 vCPUs on 2 cores take 21.1 s for
 * workload=ptouch:72M against 0.93 s with this lock, and ticket locks everywhere made a
 * 4-vCPU eager TDX boot take 24-36 s instead of 10-12 s. Linux's queued spinlock needs
 * paravirtual halting and kicking for the same reason. Starvation is kept small by
 * taking the lock rarely: the page allocator's per-CPU caches keep most allocations off
 * it.
 *
 * A busy lock should sit on a cache line of its own (declare it __aligned(64)): CPUs
 * waiting for it read it over and over, and would slow down whoever writes next to it.
 */
struct spinlock {
	u32 locked;
	u64 acquired;		/* how many times it was taken: written only by the holder */
};

#define SPINLOCK_INIT { 0, 0 }

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

/* Times a lock was taken so far (exact once its users are quiet). */
static inline u64 spin_acquired(const struct spinlock *l)
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
