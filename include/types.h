/* SPDX-License-Identifier: MIT */
/* memaccept: fixed-width types and compiler helpers shared by every layer and the host tests. */
#ifndef INCLUDE_TYPES_H
#define INCLUDE_TYPES_H

/* These three headers are part of freestanding C: no libc is pulled in. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned long long u64;	/* as in Linux: printf with %llu on every 64-bit target */
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef long long s64;

#define __noreturn __attribute__((noreturn))
#define __packed __attribute__((packed))
#define __aligned(x) __attribute__((aligned(x)))
#define __unused __attribute__((unused))
#define __printf(a, b) __attribute__((format(printf, a, b)))
#define __section(s) __attribute__((section(s)))
#define __used __attribute__((used))
#define __noinline __attribute__((noinline))
#ifndef __always_inline	/* glibc's sys/cdefs.h has the same one (host builds) */
#define __always_inline inline __attribute__((always_inline))
#endif
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define ALIGN_DOWN(x, a) ((x) & ~((u64)(a) - 1))
#define ALIGN_UP(x, a) ALIGN_DOWN((x) + (u64)(a) - 1, (a))
#define IS_ALIGNED(x, a) (((x) & ((u64)(a) - 1)) == 0)

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define TiB (1ULL << 40)

#define PAGE_SHIFT 12
#define PAGE_SIZE (1ULL << PAGE_SHIFT)
/* The acceptance unit: one bitmap bit covers 2 MiB (docs/design.md, the acceptance contract). */
#define UNIT_SHIFT 21
#define UNIT_SIZE (1ULL << UNIT_SHIFT)

#endif
