/* SPDX-License-Identifier: MIT */
/* memaccept: finishing the TSC calibration after `ready`, and the `timing` event. */
#include "arch/x86/acpi.h"
#include "arch/x86/cpu.h"
#include "arch/x86/platform.h"
#include "arch/x86/tsc.h"
#include "drivers/console.h"
#include "drivers/event.h"
#include "kernel/clock.h"
#include "kernel/memory.h"

/*
 * The PM timer calibration spans efi_main entry to at least this long after it: with
 * a bracket of about 1 us per sample under QEMU TCG and 279 ns per timer tick, 20 ms
 * gives an error bound near 100 ppm. The part after `ready` is waited for there.
 */
#define CLOCK_MIN_SPAN_NS 20000000ULL
#define PM_SAMPLE_TRIES 4
/* A TSC outside this range is no TSC: the samples or the timer are wrong. */
#define TSC_HZ_MIN 50000000ULL
#define TSC_HZ_MAX 50000000000ULL
/* Disagreement with a declared frequency beyond both error bounds plus this is reported. */
#define CLOCK_AGREE_MARGIN_PPM 1000
/* tsc.c's guess until a frequency is known. */
#define TSC_HZ_GUESS 1000000000ULL

static struct {
	u32 source;		/* enum clock_source in use */
	u64 hz;			/* the frequency in use */
	u64 error_ppm;
	u64 provisional_hz;	/* what the window's times were converted with */
	bool measured;		/* the PM timer gave calib_hz */
	u64 calib_hz, calib_error_ppm, calib_span_ns;
	bool fresh_span;	/* calibrated after ready, not since efi_main (wrap) */
	const char *problem;	/* why the PM timer result was not used */
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
	struct pm_sample now;
	u64 hz, err;

	clk.source = bi->clock_source;
	clk.hz = bi->tsc_hz;
	clk.error_ppm = bi->clock_error_ppm;
	clk.provisional_hz = bi->tsc_hz ? bi->tsc_hz : TSC_HZ_GUESS;
	if (bi->clock_source == CLOCK_PM_TIMER) {
		/*
		 * Until `ready`, times are converted with the frequency over the firmware's
		 * part of the window (efi_main to here, a few ms): close, not final.
		 * clock_finish corrects everything recorded with it.
		 */
		tsc_pm_sample(pm_read, bi->pm_port, PM_SAMPLE_TRIES, &now);
		if (clock_pm_hz(&bi->pm_entry, &now, bi->pm_bits, &hz, &err) && plausible(hz))
			clk.provisional_hz = hz;
	}
	tsc_set(clk.provisional_hz, bi->tsc_at_entry);
}

static void measure(const struct boot_info *bi, bool wait)
{
	struct pm_sample from = bi->pm_entry, end;
	u64 min_cycles = CLOCK_MIN_SPAN_NS / 1000 * (clk.provisional_hz / 1000000);

	tsc_pm_sample(pm_read, bi->pm_port, PM_SAMPLE_TRIES, &end);
	/*
	 * A 24-bit PM timer wraps every 4.69 s, and an eager boot of a large guest takes
	 * longer than that: the ticks since efi_main would be short by whole wraps and the
	 * frequency several times too high. Such a window gets a fresh span instead.
	 */
	if (clock_pm_span_may_wrap(end.tsc - from.tsc, clk.provisional_hz, bi->pm_bits)) {
		from = end;
		clk.fresh_span = true;
		wait = true;
	}
	while (wait && end.tsc - from.tsc < min_cycles) {
		for (int i = 0; i < 1000; i++)
			cpu_relax();
		tsc_pm_sample(pm_read, bi->pm_port, PM_SAMPLE_TRIES, &end);
	}
	if (!clock_pm_hz(&from, &end, bi->pm_bits, &clk.calib_hz, &clk.calib_error_ppm)) {
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
			clk.source == CLOCK_NONE ? "times assume a 1 GHz TSC and are not trustworthy"
						 : "it is not used");

	ev_begin("timing");
	ev_u64("tsc_hz", clk.hz);
	ev_str("source", clock_source_name(clk.source));
	ev_u64("error_ppm", clk.error_ppm);
	if (bi->declared_source != CLOCK_NONE) {
		ev_str("declared_source", clock_source_name(bi->declared_source));
		ev_u64("declared_hz", bi->declared_hz);
	}
	ev_str("pm_timer", acpi_pm_status_name(bi->pm_status));
	if (bi->pm_port) {
		ev_u64("pm_timer_port", bi->pm_port);
		ev_u64("pm_timer_bits", bi->pm_bits);
	}
	if (clk.measured) {
		ev_u64("pm_timer_hz", clk.calib_hz);
		ev_u64("pm_timer_error_ppm", clk.calib_error_ppm);
		ev_u64("pm_timer_span_us", clk.calib_span_ns / 1000);
		ev_bool("pm_timer_fresh_span", clk.fresh_span);
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
	if (bi->pm_port)
		measure(bi, clk.source == CLOCK_PM_TIMER);
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
