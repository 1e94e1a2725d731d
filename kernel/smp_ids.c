/* SPDX-License-Identifier: MIT */
/* memaccept: which APIC IDs of the MADT name a vCPU to start (pure logic, host-tested). */
#include "kernel/smp_ids.h"
#include "lib/string.h"

static bool listed(const u32 *ids, unsigned n, u32 id)
{
	for (unsigned i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

void smp_ids_pick(const u32 *madt, unsigned count, u32 bsp, unsigned limit, struct smp_ids *out)
{
	/* Every usable ID once; MAX_CPUS + 1 with the boot CPU's when the MADT lacks it. */
	u32 seen[MAX_CPUS + 1];
	unsigned nseen = 0;

	memset(out, 0, sizeof(*out));
	count = MIN(count, (unsigned)MAX_CPUS);
	limit = MAX(1u, MIN(limit, (unsigned)MAX_CPUS));
	seen[nseen++] = bsp;
	for (unsigned i = 0; i < count; i++) {
		u32 id = madt[i];

		if (id >= SMP_APIC_ID_LIMIT)
			out->no_cpu[out->nno_cpu++] = id;
		/* The boot CPU is in seen from the start: its first mention is no duplicate. */
		else if (id == bsp ? listed(madt, i, bsp) : listed(seen, nseen, id))
			out->duplicate[out->nduplicate++] = id;
		else if (id != bsp)
			seen[nseen++] = id;
	}
	out->distinct = nseen;
	out->n = MIN(nseen, limit);
	memcpy(out->ids, seen, out->n * sizeof(u32));
}
