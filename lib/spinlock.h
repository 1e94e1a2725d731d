/* SPDX-License-Identifier: MIT */
/* memaccept: a test-and-test-and-set spinlock and the atomics the SMP code uses (kernel and host tests). */
#ifndef LIB_SPINLOCK_H
#define LIB_SPINLOCK_H

#include "include/types.h"

/*
 * GCC's __atomic builtins: acquire on lock, release on unlock, so everything written
 * under the lock is visible to the next holder (C11 memory model; on x86 the acquire is
 * the locked XCHG and the release a plain store, Intel SDM vol. 3A 9.2.3.1). The host
 * tests build the same code with ThreadSanitizer, which understands these builtins.
 * Interrupts are always off in memaccept, so there is no irqsave variant.
 */
struct spinlock {
	u32 locked;
};

#define SPINLOCK_INIT { 0 }

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
}

static inline bool spin_trylock(struct spinlock *l)
{
	return !__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
}

static inline void spin_unlock(struct spinlock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
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
