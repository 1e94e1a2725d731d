/* SPDX-License-Identifier: MIT */
/* memaccept: finishing the TSC calibration after `ready`, and the `timing` event. */
#include "arch/x86/acpi.h"
#include "arch/x86/cpu.h"
#include "arch/x86/platform.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "kernel/clock.h"
#include "kernel/conformance.h"
#include "kernel/memory.h"

/*
 * The PM timer calibration runs after `ready` over this many timer ticks (20 ms at
 * 3.579545 MHz): with a bracket of about 1 us per sample under QEMU TCG and 279 ns per
 * tick, the error bound is near 100 ppm.
 */
#define CLOCK_SPAN_TICKS (ACPI_PM_TIMER_HZ / 50)
#define PM_SAMPLE_TRIES 4
/* Reads of the PM timer allowed to show the same value before it counts as stuck. */
#define PM_STUCK_READS 4096
/* A TSC outside this range is no TSC: the samples or the timer are wrong. */
#define TSC_HZ_MIN 50000000ULL
#define TSC_HZ_MAX 50000000000ULL
/* Disagreement with a declared frequency beyond both error bounds plus this is reported. */
#define CLOCK_AGREE_MARGIN_PPM 1000
/*
 * The frequency assumed until the PM timer has been measured after `ready`: above any
 * TSC that x86 parts run at today, so that a wait in the window (an AP's start-up
 * delays) lasts at least as long as asked and a timeout no less. Everything recorded with
 * it is corrected once the frequency is known.
 */
#define TSC_HZ_GUESS 6000000000ULL

static struct {
	u32 source;		/* enum clock_source in use */
	u64 hz;			/* the frequency in use */
	u64 error_ppm;
	u64 provisional_hz;	/* what the window's times were converted with */
	bool measured;		/* the PM timer gave calib_hz */
	u64 calib_hz, calib_error_ppm, calib_span_ns;
	const char *problem;	/* why the PM timer result was not used */
	u32 pm_status;		/* enum acpi_pm_status */
	struct acpi_pm_timer pm;
} clk;

static u32 pm_read(u16 port)
{
	return platform->io_in(port, 4);
}

static bool plausible(u64 hz)
{
	return hz >= TSC_HZ_MIN && hz <= TSC_HZ_MAX;
}

void clock_kernel_start(const struct boot_info *bi)
{
	clk.source = bi->clock_source;
	clk.hz = bi->tsc_hz;
	clk.error_ppm = bi->clock_error_ppm;
	clk.provisional_hz = bi->tsc_hz ? bi->tsc_hz : TSC_HZ_GUESS;
	tsc_set(clk.provisional_hz, bi->tsc_at_entry);
}

/* The PM timer through the FADT, read with the defensive ACPI walk; false if unusable. */
static bool find_pm_timer(const struct boot_info *bi)
{
	struct acpi_facts acpi;
	u32 first;

	conformance_scan_acpi(bi->acpi_rsdp, &acpi);
	clk.pm_status = acpi.pm_status;
	if (acpi.pm_status != ACPI_PM_OK)
		return false;
	clk.pm = acpi.pm;
	/* A timer that never changes would give a division by zero later, or nonsense. */
	first = pm_read(clk.pm.port);
	for (u32 i = 0; i < PM_STUCK_READS; i++)
		if (pm_read(clk.pm.port) != first)
			return true;
	clk.pm_status = ACPI_PM_STUCK;
	return false;
}

/*
 * TSC cycles over CLOCK_SPAN_TICKS of the PM timer (20 ms). A timer that has not counted
 * them after TSC_HZ_GUESS cycles (at least a second at any real TSC) is no timer to trust.
 */
static void measure(void)
{
	u32 mask = clk.pm.bits >= 32 ? 0xffffffffu : (1u << clk.pm.bits) - 1;
	struct pm_sample from, end;

	tsc_pm_sample(pm_read, clk.pm.port, PM_SAMPLE_TRIES, &from);
	end = from;
	while (((end.pm - from.pm) & mask) < CLOCK_SPAN_TICKS) {
		if (end.tsc - from.tsc > TSC_HZ_GUESS) {
			clk.problem = "the PM timer counts too slowly";
			return;
		}
		for (int i = 0; i < 1000; i++)
			cpu_relax();
		tsc_pm_sample(pm_read, clk.pm.port, PM_SAMPLE_TRIES, &end);
	}
	if (!clock_pm_hz(&from, &end, clk.pm.bits, &clk.calib_hz, &clk.calib_error_ppm)) {
		clk.problem = "the PM timer did not advance";
		return;
	}
	if (!plausible(clk.calib_hz)) {
		clk.problem = "the PM timer gives an implausible TSC frequency";
		return;
	}
	clk.measured = true;
	clk.calib_span_ns = (end.tsc - from.tsc) / (clk.calib_hz / 1000000) * 1000;
}

static void report(const struct boot_info *bi)
{
	bool compare = clk.measured && clk.source != CLOCK_PM_TIMER;
	u64 diff = compare ? clock_diff_ppm(clk.calib_hz, clk.hz) : 0;
	bool disagrees = compare && diff > clk.calib_error_ppm + clk.error_ppm + CLOCK_AGREE_MARGIN_PPM;

	kprintf("timing: TSC %llu kHz from %s (error %llu ppm)", clk.hz / 1000,
		clock_source_name(clk.source), clk.error_ppm);
	if (bi->clock_excluded_cycles)
		kprintf(", calibration took %llu us outside the measured window",
			tsc_cycles_to_ns(bi->clock_excluded_cycles) / 1000);
	if (compare)
		kprintf("; PM timer says %llu kHz (%llu ppm apart)", clk.calib_hz / 1000, diff);
	kprintf("\n");
	if (disagrees)
		kprintf("timing: WARNING: the PM timer disagrees with %s by %llu ppm (beyond both "
			"error bounds); %s is used\n", clock_source_name(clk.source), diff,
			clock_source_name(clk.source));
	if (clk.problem)
		kprintf("timing: WARNING: %s; %s\n", clk.problem,
			clk.source == CLOCK_NONE ? "times assume a 6 GHz TSC and are not trustworthy "
						   "(clock=stall calibrates against EFI Stall() instead)"
						 : "it is not used");

	ev_begin("timing");
	ev_u64("tsc_hz", clk.hz);
	ev_str("source", clock_source_name(clk.source));
	ev_u64("error_ppm", clk.error_ppm);
	/* Every time in the report is only as good as this: say whether the host can skew it. */
	ev_bool("host_skewable", clock_host_skewable(clk.source, bi->detected == DETECTED_TDX));
	if (bi->declared_source != CLOCK_NONE) {
		ev_str("declared_source", clock_source_name(bi->declared_source));
		ev_u64("declared_hz", bi->declared_hz);
	}
	ev_str("pm_timer", acpi_pm_status_name(clk.pm_status));
	if (clk.pm.port) {
		ev_u64("pm_timer_port", clk.pm.port);
		ev_u64("pm_timer_bits", clk.pm.bits);
	}
	if (clk.measured) {
		ev_u64("pm_timer_hz", clk.calib_hz);
		ev_u64("pm_timer_error_ppm", clk.calib_error_ppm);
		ev_u64("pm_timer_span_us", clk.calib_span_ns / 1000);
	}
	if (compare) {
		ev_u64("disagreement_ppm", diff);
		ev_bool("disagrees", disagrees);
	}
	if (clk.source == CLOCK_PM_TIMER)
		ev_u64("provisional_hz", clk.provisional_hz);
	if (bi->clock_excluded_cycles)
		ev_u64("excluded_us", tsc_cycles_to_ns(bi->clock_excluded_cycles) / 1000);
	if (clk.problem)
		ev_str("problem", clk.problem);
	ev_end();
}

void clock_finish(const struct boot_info *bi)
{
	/* Looked for only now, outside the window; with a declared frequency, as a cross-check. */
	clk.pm_status = ACPI_PM_NOT_READ;
	if (bi->acpi_rsdp && find_pm_timer(bi))
		measure();
	else if (clk.source == CLOCK_PM_TIMER)
		clk.problem = acpi_pm_status_name(clk.pm_status);
	if (clk.source == CLOCK_PM_TIMER) {
		if (clk.measured) {
			clk.hz = clk.calib_hz;
			clk.error_ppm = clk.calib_error_ppm;
		} else {
			/* Defined reaction: keep what the window used, and say so loudly. */
			clk.source = CLOCK_NONE;
			clk.hz = clk.provisional_hz;
			clk.error_ppm = UINT32_MAX;
		}
		/* Everything timed with the provisional frequency, now in true nanoseconds. */
		memory_rescale_time(clk.provisional_hz, clk.hz);
		tsc_set(clk.hz, bi->tsc_at_entry);
	}
	report(bi);
}
