/* SPDX-License-Identifier: MIT */
/* memaccept: choosing the platform from what boot/ detected and what the command line asked for. */
#include "arch/x86/platform.h"
#include "arch/x86/sev/snp.h"
#include "arch/x86/sim.h"
#include "arch/x86/smp.h"
#include "arch/x86/tdx/tdx.h"
#include "drivers/console.h"
#include "drivers/exit.h"
#include "include/boot_info.h"
#include "include/panic.h"
#include "mm/early.h"

const char *fatal_condition_name(u32 condition)
{
	static const char *const names[] = {
		[FC_NONE] = "none", [FC_ACCEPT_STATUS] = "accept_status",
		[FC_ACCEPT_RETRIES] = "accept_retries", [FC_PSC_ERROR] = "psc_error",
		[FC_PSC_PROTOCOL] = "psc_protocol", [FC_PVALIDATE_NOUPDATE] = "pvalidate_noupdate",
		[FC_PVALIDATE_FAIL] = "pvalidate_fail", [FC_GHCB] = "ghcb",
		[FC_UNACCEPTED_ACCESS] = "unaccepted_access",
		[FC_UNEXPECTED_EXCEPTION] = "unexpected_exception",
		[FC_TD_ATTRIBUTES] = "td_attributes",
		[FC_NOT_VMPL0] = "not_vmpl0", [FC_SVSM] = "svsm", [FC_MSR] = "msr",
		[FC_SNP_FEATURES] = "snp_features", [FC_HOST_INPUT] = "host_input",
	};
	return condition < ARRAY_SIZE(names) ? names[condition] : "?";
}

/* Per CPU: where platform_count() adds that CPU's counts too (NULL: nowhere). */
static struct {
	u64 *into;
	unsigned n;
} recording[MAX_CPUS];

void platform_count(struct platform_counter *counters, unsigned which, u64 n)
{
	unsigned cpu = smp_cpu_index();

	__atomic_add_fetch(&counters[which].count, n, __ATOMIC_RELAXED);
	if (cpu < MAX_CPUS && recording[cpu].into && which < recording[cpu].n)
		recording[cpu].into[which] += n;
}

void platform_record(u64 *into, unsigned n)
{
	recording[smp_cpu_index()].into = into;
	recording[smp_cpu_index()].n = into ? n : 0;
}

static int none_accept(u64 start, u64 end)
{
	/* Only reached if mm/ has a bug: "none" never has unaccepted memory to accept. */
	panic("none_accept: asked to accept [%llx, %llx) on a platform without unaccepted memory",
	      (unsigned long long)start, (unsigned long long)end);
}

static const struct cc_platform none_platform = {
	.name = "none",
	.accept = none_accept,
	.io_out = plain_io_out,
	.io_in = plain_io_in,
	.terminate = plain_terminate,
};

u32 platform_resolve(u32 detected, const struct config *cfg)
{
	/*
	 * On real TDX or SNP hardware only the real backend works: "none" or "sim" would do
	 * plain port I/O and touch memory that is not accepted.
	 */
	if (detected == DETECTED_TDX || detected == DETECTED_SNP) {
		if (cfg->platform == PLAT_NONE || cfg->platform == PLAT_SIM)
			kprintf("platform: %s requested, but this is a %s guest; using %s\n",
				platform_choice_name(cfg->platform),
				detected == DETECTED_TDX ? "TDX" : "SEV-SNP",
				detected == DETECTED_TDX ? "tdx" : "snp");
		return detected == DETECTED_TDX ? PLATFORM_TDX : PLATFORM_SNP;
	}
	switch (cfg->platform) {
	case PLAT_SIM:
		return PLATFORM_SIM;
	case PLAT_NONE:
		return PLATFORM_NONE;
	case PLAT_TDX_EMU:
		return PLATFORM_TDX;
	case PLAT_SNP_EMU:
		return PLATFORM_SNP;
	default:
		return cfg->fake_set ? PLATFORM_SIM : PLATFORM_NONE;
	}
}

void platform_set(u32 kind, const struct boot_info *bi)
{
	switch (kind) {
	case PLATFORM_SIM:
		platform = sim_platform();
		break;
	case PLATFORM_NONE:
		platform = &none_platform;
		break;
	case PLATFORM_TDX:
		platform = tdx_platform();
		break;
	case PLATFORM_SNP:
		platform = snp_platform(bi);
		break;
	default:
		fatal(EXIT_BAD_CONFIG, "platform: backend %u is not built into this image", kind);
	}
}

void platform_traps_init(u32 kind)
{
	if (kind == PLATFORM_TDX)
		tdx_register_traps();
	else if (kind == PLATFORM_SNP)
		snp_setup_early();	/* the #VC handler; the console waits for the GHCB */
}

void platform_setup_early(u32 kind)
{
	if (kind == PLATFORM_TDX)
		tdx_setup();
	else if (kind == PLATFORM_SNP)
		snp_check_features();
}

void platform_setup_late(u32 kind)
{
	/* The GHCB page: accepted memory, made shared by snp_setup_ghcb(). */
	if (kind == PLATFORM_SNP)
		snp_setup_ghcb(early_alloc_page());
}
