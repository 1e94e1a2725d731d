#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# memaccept: compare boots (policies, memory sizes) from their serial logs: tables, Markdown, plots.
"""Usage: report.py [--markdown FILE] [--plots DIR] [--include-failed] LOG|LABEL=LOG...
       report.py --conformance [--markdown FILE] [--junit FILE] [--sarif FILE]
                 [--waivers FILE] [--fail-on must|should|never] [--provenance JSON] LOG...
       report.py [--conformance] --diff A B
       report.py --probe [--markdown FILE] [--plots DIR] LOG|LABEL=LOG...

Each LOG is the console of one boot (tools/runqemu.py --log, build/bench/logs/*.log).
A run is labelled LABEL if given, else by its policy and guest RAM ("lazy 4G"); RAM
comes from the sidecar NAME.meta.json that tools/bench.py writes beside NAME.log, else
from the firmware event's bytes_by_type.

A log that cannot be used (missing, empty, not a memaccept log, no ready event) or a
boot that failed (exit code != 0; kept, marked, with --include-failed) gets one line on
stderr, and the report is made from the others. Exit status: 0 if at least one log
was usable, 1 if none was, 2 for a usage error.

With --conformance, each LOG is the console of a boot with workload=conformance (on any
host, any firmware): the report is that boot's firmware verdicts, one row per rule, with
the rule's source. A log without a conformance event, or with malformed checks, gets a
line on stderr; exit status 1 if no log had one. For CI (tools/conformance_ci.py):
--junit and --sarif write JUnit XML and SARIF 2.1.0 (one test case / one rule per
conformance rule); --waivers reads a waiver file; --fail-on sets the exit gate: must (the
default) exits 1 when a MUST rule failed and is not waived, should also on a SHOULD rule
not met, never only on unusable logs; --provenance adds what the host recorded (runqemu.py
--provenance: image SHA-256, QEMU, VM configuration) to the Markdown header. --diff A B
prints how B's verdicts differ from A's (exit 0; 1 when a log has no report).

With --probe, each LOG is the console of a boot with workload=probe: the report is
each boot's primitives (one row each: samples, p10, p50, p90, p99, max) and its model of
one unit beside the measured units; with two or more logs also a side-by-side table of
the medians (the same probe on two hosts, or one host under two settings), each against
the first log's; --plots draws probe.png, one bar per primitive (the median) with
whiskers from p10 to p90, the logs side by side. A log without a probe event gets a
line on stderr; exit status 1 if no log had one.

Without --conformance or --probe the report has every section its logs have data for:
the boots (above), the instructions per boot phase of the logs that ran under the
instruction observer (its `instructions` event), and the conformance verdicts and probe
results of the logs that have them, each as --conformance or --probe would show it; a
log that has none of them gets its line on stderr. Exit status 1 if no log had any.

tools/bench.py imports this module: load_runs(), tables(), render_text(),
render_markdown(), draw_plots().
"""
import argparse
import json
import os
import statistics
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memaccept_log as ml  # noqa: E402
import conformance_ci as cci  # noqa: E402

MIB = ml.MIB
POLICY_ORDER = {"lazy": 0, "ahead": 1, "eager": 2}
# The same-time comparison needs this many pairs to judge (bench: 64, bandwidth:128M).
MIN_PAIRS = 8
UNIT_BYTES = 2 * MIB
# A step of the accepted-memory series at least this big is an eager run, not a partial
# unit at a range edge (eager runs are 32 MiB to 1 GiB, mm/policy.c policy_boot).
EAGER_RUN_MIN = 16 * MIB
LAT_CLASSES = (("all", "alloc_all"), ("fast", "alloc_fast"), ("accepting", "alloc_accepting"))


class Run:
    """One usable boot and its label."""

    def __init__(self, boot, label=None):
        self.boot = boot
        self.label = label
        self.explicit_label = label is not None

    @property
    def policy(self):
        return self.boot.policy or "?"

    @property
    def ram(self):
        return self.boot.ram_bytes

    def default_label(self):
        return "%s %s%s" % (self.policy, ml.format_size(self.ram) if self.ram else "?RAM",
                            " backed" if self.boot.backed else "")

    def sort_key(self):
        return (self.ram if self.ram else float("inf"), POLICY_ORDER.get(self.policy, 9),
                self.policy, self.label or "")

    # ---- figures the tables show (None: the log does not say)
    def ready_ms(self):
        us = self.boot.ready_us
        return us / 1000.0 if us is not None else None

    def accepted_at_ready(self):
        """Bytes accepted when the allocator became ready. Exact from the summary minus
        what the workloads accepted (nothing else accepts after ready); else the accepted
        memory series up to ready, which is thinned and so only a lower bound."""
        b = self.boot
        s = b.summary or {}
        wl = [w.get("accepted_bytes") for w in b.workloads]
        if s.get("accepted_bytes") is not None and None not in wl and not b.truncated:
            return s["accepted_bytes"] - sum(wl)
        ser = b.accept_series or {}
        t, v = ser.get("t_us"), ser.get("accepted_bytes")
        if b.ready_us is None or t is None or v is None:
            return None
        before = [y for x, y in zip(t, v) if x <= b.ready_us]
        return max(before) if before else 0

    def accept_mib_s(self):
        s = self.boot.summary or {}
        ns, by = s.get("accept_ns_total"), s.get("accepted_bytes")
        if not ns or by is None:
            return None  # nothing was accepted: a rate of 0 would mislead
        return s.get("accept_mib_s", by * 10**9 // ns >> 20)

    def write_mib_s(self, field="write_mib_s"):
        for w in self.boot.workloads:
            if w.get("name") == "bandwidth" and w.get(field) is not None:
                return w[field]
        return None

    def first_write_mib_s(self):
        """First write to accepted, never-written memory: what a sim accept (itself a
        first write) is measured against."""
        return self.write_mib_s("first_write_mib_s")

    def accept_vs_first_write(self):
        """The totals estimator: all acceptance in the boot (spread over seconds) against
        the first write of FIRST_WRITE MiB early in the boot. Host stalls in either
        stretch move it; kept beside same_time(), which judges the goal."""
        a, f = self.accept_mib_s(), self.first_write_mib_s()
        return round(a / f, 2) if a and f else None

    def bandwidth_step(self):
        return next((w for w in self.boot.workloads if w.get("name") == "bandwidth"), None)

    def same_time(self):
        """Acceptance against first write under the same host conditions, or None.

        Lazy (any policy that left units to accept): the bandwidth step's pairs, one
        unit accepted and one never-written unit first-written side by side; the ratio is
        the median over the pairs of (accept rate / first-write rate), p10-p90 its spread.
        Eager (nothing left to accept after ready): the rate of its last runs before
        ready (accept_series, at least as many bytes as the first write) against the
        first write's rate right after ready, both over all their bytes, stalls included
        on both sides (the runs are 32 MiB to 1 GiB: no per-unit samples to take medians
        of); lo-hi: the slowest and fastest of those runs, when there are several.
        Returns {ratio, lo, hi, basis, accept_mib_s, first_write_mib_s}."""
        w = self.bandwidth_step()
        if not w:
            return None
        p = w.get("paired") or {}
        if (p.get("pairs") or 0) >= MIN_PAIRS:
            r, a, f = p.get("ratio_permille", {}), p.get("accept_ns", {}), \
                p.get("first_write_ns", {})
            if None in (r.get("p10"), r.get("p50"), r.get("p90")):
                return None
            return {"ratio": r["p50"] / 1000.0, "lo": r["p10"] / 1000.0,
                    "hi": r["p90"] / 1000.0, "basis": "%d pairs" % p["pairs"],
                    "accept_mib_s": unit_mib_s(a.get("p50")),
                    "first_write_mib_s": unit_mib_s(f.get("p50"))}
        if self.policy != "eager":
            return None
        tail = self.eager_tail(w.get("first_write_bytes") or UNIT_BYTES)
        f = w.get("first_write_mib_s")
        if tail is None or not f:
            return None
        rate, nbytes, rates = tail
        many = len(rates) > 1
        return {"ratio": rate / f, "lo": min(rates) / f if many else None,
                "hi": max(rates) / f if many else None,
                "basis": "last %d MiB of eager" % (nbytes // MIB),
                "accept_mib_s": int(rate), "first_write_mib_s": f}

    def eager_tail(self, want_bytes):
        """(MiB/s, bytes, [MiB/s of each run]) of the last eager runs before ready holding
        at least want_bytes, from the accepted-memory series (a point after each run);
        None without one."""
        b = self.boot
        ser = b.accept_series or {}
        t, v = ser.get("t_us"), ser.get("accepted_bytes")
        if b.ready_us is None or not t or not v:
            return None
        pts = [(x, y) for x, y in zip(t, v) if x <= b.ready_us]
        runs = [(t1 - t0, v1 - v0) for (t0, v0), (t1, v1) in zip(pts, pts[1:])
                if v1 - v0 >= EAGER_RUN_MIN and t1 > t0]
        us = nbytes = 0
        rates = []
        for dt, dv in reversed(runs):
            us, nbytes = us + dt, nbytes + dv
            rates.append(dv * 10**6 / dt / MIB)
            if nbytes >= want_bytes:
                break
        if not nbytes:
            return None
        return nbytes * 10**6 / us / MIB, nbytes, rates

    def steps(self):
        """[(column name, workload event)], a repeated step named name#2, name#3."""
        seen, out = {}, []
        for w in self.boot.workloads:
            n = w["name"]
            seen[n] = seen.get(n, 0) + 1
            out.append((n if seen[n] == 1 else "%s#%d" % (n, seen[n]), w))
        return out

    def main_step(self):
        """The workload step with the most allocations: the one whose latencies to plot."""
        best = None
        for name, w in self.steps():
            n = (w.get("alloc_all") or {}).get("count") or 0
            if n and (best is None or n > best[0]):
                best = (n, name, w)
        return best[1:] if best else (None, None)


def unit_mib_s(ns):
    """MiB/s of one 2 MiB unit written or accepted in ns; None for no sample."""
    return int(UNIT_BYTES * 10**9 // ns // MIB) if ns else None


def same_time_text(st):
    """'0.94 (0.62-1.08)' for a same_time() result."""
    if not st:
        return None
    iv = "" if st["lo"] is None or st["hi"] is None else " (%.2f-%.2f)" % (st["lo"], st["hi"])
    return "%.2f%s" % (st["ratio"], iv)


# ---------------------------------------------------------------- loading
def split_spec(spec):
    """'LABEL=path' -> (LABEL, path); a path that exists as given wins over a label."""
    if "=" in spec and not os.path.exists(spec):
        label, path = spec.split("=", 1)
        if label and path:
            return label, path
    return None, spec


def load_runs(specs, include_failed=False, boots=None):
    """specs: paths or LABEL=path. Returns (runs, messages), messages being
    (path, text) pairs, one line each. boots: already parsed Boots, keyed by path."""
    runs, messages = [], []
    for spec in specs:
        label, path = split_spec(spec)
        b = (boots or {}).get(path) or ml.read_boot(path)
        if b.fatal:
            messages.append((path, "unusable: %s" % b.fatal))
            continue
        for m in b.messages:
            messages.append((path, m))
        if b.failed:
            if not include_failed:
                messages.append((path, "boot failed: %s: left out of the comparison" %
                                 b.failure_text()))
                continue
            messages.append((path, "boot failed: %s: included, marked" % b.failure_text()))
        runs.append(Run(b, label))
    assign_labels(runs)
    runs.sort(key=Run.sort_key)
    return runs, messages


def assign_labels(runs):
    """Default labels; runs that would share one get #2, #3 in the order given."""
    for r in runs:
        if not r.explicit_label:
            r.label = r.default_label()
    count = {}
    for r in runs:
        count[r.label] = count.get(r.label, 0) + 1
    seen = {}
    for r in runs:
        if count[r.label] > 1 and not r.explicit_label:
            seen[r.label] = seen.get(r.label, 0) + 1
            if seen[r.label] > 1:
                r.label = "%s #%d" % (r.label, seen[r.label])


# ---------------------------------------------------------------- tables
class Table:
    def __init__(self, title, headers, rows, note=""):
        self.title, self.headers, self.rows, self.note = title, headers, rows, note


def fmt(v, digits=None):
    """A table cell: '-' for unknown, numbers with sensible precision."""
    if v is None:
        return "-"
    if isinstance(v, float):
        if digits is not None:
            return "%.*f" % (digits, v)
        a = abs(v)
        return "%.2f" % v if a < 10 else "%.1f" % v if a < 100 else "%.0f" % v
    return str(v)


def us_from_ns(ns):
    return None if ns is None else ns / 1000.0


def step_ms(w):
    us = (w or {}).get("us")
    return None if us is None else us / 1000.0


def mib(b):
    return None if b is None else int(round(b / MIB))


def tables(runs):
    """The comparison, as Table objects: runs, allocation latency, boot phases."""
    step_cols = []
    for r in runs:
        for name, _ in r.steps():
            if name not in step_cols:
                step_cols.append(name)
    rows = []
    for r in runs:
        b = r.boot
        s = b.summary or {}
        steps = dict(r.steps())
        st = r.same_time()
        status = "ok" if not b.failed and not b.truncated else \
            ("FAILED " + b.failure_text()) if b.failed else "truncated"
        rows.append([r.label, r.policy, ml.format_size(r.ram) if r.ram else "-",
                     b.platform, fmt(r.ready_ms(), 1), mib(r.accepted_at_ready())] +
                    [fmt(step_ms(steps.get(c)), 1) for c in step_cols] +
                    [mib(s.get("accepted_bytes")), s.get("accept_calls"), r.accept_mib_s(),
                     r.first_write_mib_s(), r.accept_vs_first_write()] +
                    [same_time_text(st), st and st["basis"], r.write_mib_s(), status])
    t1 = Table("Runs", ["run", "policy", "RAM", "platform", "ready ms", "accepted at ready MiB"] +
               ["%s ms" % c for c in step_cols] +
               ["accepted MiB", "accept calls", "accept MiB/s", "first write MiB/s",
                "accept / first write, totals", "accept / first write, same time",
                "same time from", "rewrite MiB/s", "status"],
               [[fmt(c) for c in row] for row in rows],
               "ready: efi_main to allocator ready. accepted at ready: includes the partial "
               "units at range edges. accept MiB/s: all acceptance in the boot. first write: "
               "the bandwidth workload's first write to accepted memory never written "
               "since (under QEMU it includes the host backing each page, as a sim accept "
               "does): acceptance's limit. totals: accept MiB/s over first write MiB/s, "
               "measured seconds apart. same time (judges the goal): lazy, the median over "
               "the bandwidth step's pairs (one unit accepted, one first-written, side by "
               "side) of their rate ratio, p10-p90 in brackets; eager, its last runs before "
               "ready against the first write right after ready, both over all their bytes, "
               "the slowest and fastest of those runs in brackets. rewrite: the same workload's later passes over "
               "written memory (\"-\": no bandwidth step ran).")

    lat_rows = []
    for r in runs:
        for name, w in r.steps():
            row = [r.label, name]
            counted = False
            for cls, key in LAT_CLASSES:
                lat = w.get(key) or {}
                n = lat.get("count")
                counted = counted or bool(n)
                row.append(fmt(n))
                for q in ("p50_ns", "p99_ns", "p999_ns", "max_ns"):
                    row.append(fmt(us_from_ns(lat.get(q)) if n else None))
            if counted:
                lat_rows.append(row)
    hdr = ["run", "step"]
    for cls in ("all", "fast", "acc"):
        hdr += ["%s n" % cls, "%s p50" % cls, "%s p99" % cls, "%s p99.9" % cls, "%s max" % cls]
    t2 = Table("Allocation latency (us)", hdr, lat_rows,
               "all: every allocation of the step; fast: served from free memory; acc "
               "(accepting): had to accept a 2 MiB unit first. "
               "Percentiles are over a uniform sample when a step makes more allocations "
               "than the kernel keeps. Every time here is counted in the run's TSC at the "
               "frequency in Boot phases: where that clock is host-skewable, so are they.")

    phase_cols = []
    for r in runs:
        for k in (r.boot.boot_phases or {}):
            if k != "event" and k not in phase_cols:
                phase_cols.append(k)
    ph_rows = []
    for r in runs:
        p = r.boot.boot_phases or {}
        t = r.boot.timing or {}
        ph_rows.append([r.label] + [fmt(p[k] / 1000.0 if k in p else None) for k in phase_cols] +
                       [fmt(r.ready_ms()), t.get("source", "efi-stall (old log)") +
                        (" (host-skewable)" if t.get("host_skewable") else ""),
                        fmt(t.get("error_ppm", t.get("calibration_spread_ppm")))])
    t3 = Table("Boot phases (ms)", ["run"] + phase_cols + ["ready", "clock", "clock error ppm"],
               ph_rows, "Each phase's own duration; they add up to ready. clock: where the "
               "TSC frequency came from, and its error bound; host-skewable: a source the host "
               "controls (the PM timer, a hypervisor CPUID leaf, EFI Stall, CPUID 0x15 outside "
               "a TD), so every time in this report is only as true as the host is honest "
               "(docs/threat-model.md).")
    return [t1, t2, t3]


def render_text(tabs):
    out = []
    for t in tabs:
        out.append("== %s" % t.title)
        if not t.rows:
            out.append("(nothing to show)\n")
            continue
        w = [max(len(str(h)), *(len(str(r[i])) for r in t.rows)) for i, h in enumerate(t.headers)]
        line = lambda cells: "  ".join(  # noqa: E731
            (str(c).ljust(w[i]) if i == 0 else str(c).rjust(w[i])) for i, c in enumerate(cells))
        out.append(line(t.headers).rstrip())
        out.append("  ".join("-" * x for x in w))
        out += [line(r).rstrip() for r in t.rows]
        out.append("")
    return "\n".join(out)


def md_cell(c):
    return str(c).replace("|", "\\|").replace("\n", " ")


def _numeric(text):
    try:
        float(str(text).replace("%", ""))
        return True
    except ValueError:
        return str(text) == "-"


def md_table(headers, rows):
    """Numbers right-aligned, text left-aligned."""
    num = [i > 0 and bool(rows) and all(_numeric(r[i]) for r in rows) for i in range(len(headers))]
    out = ["| " + " | ".join(md_cell(h) for h in headers) + " |",
           "|" + "|".join("---:" if n else "---" for n in num) + "|"]
    out += ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def render_markdown(tabs, level=2):
    out = []
    for t in tabs:
        out.append("%s %s\n" % ("#" * level, t.title))
        out.append(md_table(t.headers, t.rows) if t.rows else "(nothing to show)")
        if t.note:
            out.append("\n" + t.note)
        out.append("")
    return "\n".join(out)


# ---------------------------------------------------------------- plots
def matplotlib_or_reason():
    """(pyplot, None) or (None, why there will be no plots)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt, None
    except Exception as e:  # ImportError, or a broken install
        return None, "matplotlib unavailable for %s (%s): no plots (Debian: python3-matplotlib, " \
            "run with /usr/bin/python3)" % (sys.executable, e)


POLICY_COLOURS = {"lazy": "tab:blue", "ahead": "tab:green", "eager": "tab:red"}
OTHER_COLOURS = ["tab:purple", "tab:orange", "tab:brown", "tab:pink", "tab:olive", "tab:cyan"]


def _colour(policy, _cache={}):
    if policy in POLICY_COLOURS:
        return POLICY_COLOURS[policy]
    return _cache.setdefault(policy, OTHER_COLOURS[len(_cache) % len(OTHER_COLOURS)])


def _tex_safe(text):
    """Labels come from logs and the command line: a '$' would start mathtext."""
    return str(text).replace("$", r"\$")


def _styles(runs):
    """Colour by policy, line style by position among that policy's runs (RAM order)."""
    styles, n = {}, {}
    dashes = ["-", "--", "-.", ":"]
    for r in runs:
        i = n.get(r.policy, 0)
        n[r.policy] = i + 1
        styles[r.label] = dict(color=_colour(r.policy), linestyle=dashes[i % 4],
                               alpha=1.0 - 0.12 * (i // 4 % 4))
    return styles


def plot_latency_cdf(plt, runs, path):
    """(a) CDF of allocation latency, one panel per class, one line per run."""
    fig, axes = plt.subplots(1, 3, figsize=(16, 5), sharey=True)
    st = _styles(runs)
    drawn = 0
    steps = set()
    for ax, (cls, key) in zip(axes, LAT_CLASSES):
        for r in runs:
            name, w = r.main_step()
            lat = (w or {}).get(key) or {}
            q, v = lat.get("quantiles_permille"), lat.get("quantiles_ns")
            if not lat.get("count") or not q or not v:
                continue
            pts = [(ns, pm / 1000.0) for pm, ns in zip(q, v) if ns > 0]
            if lat.get("max_ns"):
                pts.append((lat["max_ns"], 1.0))
            pts.sort()
            if not pts:
                continue
            steps.add(name)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".",
                    label=_tex_safe("%s (%s, n=%d)" % (r.label, name, lat["count"])),
                    **st[r.label])
            drawn += 1
        ax.set_xscale("log")
        ax.set_title("%s allocations" % cls)
        ax.set_xlabel("latency (ns, log scale)")
        ax.grid(True, which="both", alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7, loc="lower right")
    axes[0].set_ylabel("fraction of allocations")
    fig.suptitle(_tex_safe("Allocation latency CDF per run (workload step: %s)" %
                           (", ".join(sorted(steps)) or "none")))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return drawn


def plot_series(plt, runs, path):
    """(b) Accepted memory over time, one panel per policy, one line per run."""
    policies = []
    for r in runs:
        ser = r.boot.accept_series or {}
        if ser.get("t_us") and r.policy not in policies:
            policies.append(r.policy)
    fig, axes = plt.subplots(1, max(1, len(policies)), figsize=(6 * max(1, len(policies)), 5),
                             squeeze=False)
    st = _styles(runs)
    drawn = 0
    for ax, pol in zip(axes[0], policies):
        for r in runs:
            ser = r.boot.accept_series or {}
            t, v = ser.get("t_us"), ser.get("accepted_bytes")
            if r.policy != pol or not t or not v:
                continue
            ax.step([x / 1000.0 for x in t], [y / MIB for y in v], where="post",
                    label=_tex_safe(r.label), **st[r.label])
            if r.boot.ready_us is not None:
                at = r.accepted_at_ready()
                ax.plot([r.boot.ready_us / 1000.0], [(at or 0) / MIB], "o",
                        color=st[r.label]["color"], markersize=5)
            drawn += 1
        ax.set_title(_tex_safe("policy %s" % pol))
        ax.set_xlabel("time since efi_main (ms)")
        ax.set_ylabel("accepted memory (MiB)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    if not policies:
        axes[0][0].text(0.5, 0.5, "no accept_series in these logs", ha="center")
    fig.suptitle("Accepted memory over time (dot: allocator ready)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return drawn


def ready_by_policy(runs):
    """{policy: [(RAM, [ready ms, ...]), ...]} over the runs whose RAM and ready are known."""
    by = {}
    for r in runs:
        if r.ram and r.ready_ms() is not None and r.ready_ms() > 0:  # log axes
            by.setdefault(r.policy, {}).setdefault(r.ram, []).append(r.ready_ms())
    return {p: sorted(d.items()) for p, d in by.items()}


def plot_ready(plt, runs, path):
    """(c) Time to ready against guest RAM, one line per policy (median, min-max bars)."""
    fig, ax = plt.subplots(figsize=(8, 5))
    drawn = 0
    for pol, pts in sorted(ready_by_policy(runs).items(),
                           key=lambda kv: POLICY_ORDER.get(kv[0], 9)):
        xs = [x / ml.GIB for x, _ in pts]
        med = [statistics.median(v) for _, v in pts]
        lo = [m - min(v) for m, (_, v) in zip(med, pts)]
        hi = [max(v) - m for m, (_, v) in zip(med, pts)]
        ax.errorbar(xs, med, yerr=[lo, hi], marker="o", capsize=4, color=_colour(pol),
                    label=_tex_safe("%s (n=%d)" % (pol, sum(len(v) for _, v in pts))))
        drawn += 1
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    sizes = sorted({x for pts in ready_by_policy(runs).values() for x, _ in pts})
    if sizes:
        ax.set_xticks([x / ml.GIB for x in sizes])
        ax.set_xticklabels([ml.format_size(x) for x in sizes])
    ax.set_xlabel("guest RAM (log2 scale)")
    ax.set_ylabel("time to ready (ms, log scale)")
    ax.set_title("Time from efi_main to allocator ready (median, min-max)")
    ax.grid(True, which="both", alpha=0.3)
    if drawn:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return drawn


PLOTS = (("latency_cdf.png", "Allocation latency CDF", plot_latency_cdf),
         ("accept_series.png", "Accepted memory over time", plot_series),
         ("ready_vs_ram.png", "Time to ready against guest RAM", plot_ready))


def draw_plots(runs, outdir, which=None):
    """Writes the PNGs; returns ([(title, path)], [messages]). which: a {file: runs}
    override, so that a caller can draw one plot from a different set of runs."""
    plt, why = matplotlib_or_reason()
    if plt is None:
        return [], [why]
    try:
        os.makedirs(outdir, exist_ok=True)
    except OSError as e:
        return [], ["cannot create %s: %s" % (outdir, e.strerror or e)]
    done, msgs = [], []
    for fname, title, fn in PLOTS:
        path = os.path.join(outdir, fname)
        subset = (which or {}).get(fname, runs)
        try:
            with warnings.catch_warnings():
                # Odd values in a damaged log (zeros on a log axis) are not worth a
                # screenful of matplotlib warnings: the tables show them.
                warnings.simplefilter("ignore")
                n = fn(plt, subset, path)
            if n:
                done.append((title, path))
            else:
                msgs.append("%s: nothing to draw in these logs (written empty)" % fname)
        except Exception as e:  # a plot must not cost the tables
            plt.close("all")
            msgs.append("%s: plotting failed: %s: %s" % (fname, type(e).__name__, e))
    return done, msgs


# ---------------------------------------------------------------- command line
def markdown_document(runs, messages, plots, md_path, title="memaccept report"):
    out = ["# %s\n" % title, "%d run(s) compared.\n" % len(runs)]
    out.append(render_markdown(tables(runs)))
    if plots:
        out.append("## Plots\n")
        for t, p in plots:
            rel = os.path.relpath(p, os.path.dirname(os.path.abspath(md_path)) or ".")
            out.append("### %s\n\n![%s](%s)\n" % (t, t, rel))
    if messages:
        out.append("## Log problems\n")
        out += ["- `%s`: %s" % (p, m) for p, m in messages]
        out.append("")
    out.append("## Logs\n")
    out += ["- %s: `%s` (%s)" % (r.label, r.boot.path, r.boot.cmdline or "no command line")
            for r in runs]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- conformance
# The kernel's verdicts (kernel/conformance.h enum verdict), in the order a reader wants
# them: what breaks first.
VERDICTS = ("fail", "warn", "pass", "info", "n/a")
COUNT_FIELD = {"pass": "pass", "warn": "warn", "fail": "fail", "n/a": "na", "info": "info"}
CHECK_FIELDS = ("rule", "verdict", "source", "detail")
# Rule sets from 2 on also give each check a level (MUST, SHOULD, INFO), whether the rule
# is memaccept's own, and for a failed or warned one the action to take.
LEVELS = ("MUST", "SHOULD", "INFO")


class Conformance:
    """The conformance event of one log, checked: checks holds the well-formed ones."""

    def __init__(self, path, event):
        self.path = path
        self.event = event
        self.checks = []
        self.messages = []
        raw = event.get("checks")
        if not isinstance(raw, list):
            self.messages.append("conformance event has no checks array")
            raw = []
        for i, c in enumerate(raw):
            if not isinstance(c, dict) or any(not isinstance(c.get(k), str) for k in CHECK_FIELDS):
                self.messages.append("check %d is malformed (needs string %s)" %
                                     (i, ", ".join(CHECK_FIELDS)))
            elif c["verdict"] not in VERDICTS:
                self.messages.append("check %d (%s) has unknown verdict %r" %
                                     (i, c["rule"], c["verdict"]))
            else:
                self.checks.append(c)
        # The kernel's own counts must agree with its checks: a disagreement means lost lines.
        for v in VERDICTS:
            n = sum(1 for c in self.checks if c["verdict"] == v)
            said = event.get(COUNT_FIELD[v])
            if ml._is_int(said) and said != n and not self.messages:
                self.messages.append("the event counts %d %s but lists %d" % (said, v, n))

    def count(self, verdict):
        return sum(1 for c in self.checks if c["verdict"] == verdict)

    def title(self):
        e = self.event
        fw = e.get("firmware") if isinstance(e.get("firmware"), str) else "?"
        rev = e.get("firmware_revision")
        uefi = e.get("uefi_revision")
        parts = [fw or "?"]
        if ml._is_int(rev):
            parts.append("revision %#x" % rev)
        if ml._is_int(uefi):
            parts.append("UEFI %d.%d" % (uefi >> 16, (uefi & 0xffff) // 10))
        title = "%s (%s), platform %s" % (parts[0], ", ".join(parts[1:]) or "?",
                                          e.get("platform") if isinstance(e.get("platform"), str)
                                          else "?")
        if ml._is_int(e.get("rule_set")):
            title += ", rule set %d" % e["rule_set"]
        return title

    def totals(self):
        shown = ("pass", "warn", "fail", "n/a") + (("info",) if self.count("info") or
                                                   "info" in self.event else ())
        return ", ".join("%d %s" % (self.count(v), v) for v in shown)

    def todo(self):
        """(level, rule, own, action) of every rule not met: failures first."""
        out = []
        for v in ("fail", "warn"):
            for c in self.checks:
                if c["verdict"] == v:
                    level = c.get("level") if c.get("level") in LEVELS else ("MUST" if v == "fail"
                                                                            else "SHOULD")
                    action = c.get("action") if isinstance(c.get("action"), str) else \
                        "see the detail above"
                    out.append((level, c["rule"], c.get("own") is True, action))
        return out

    def ordered(self):
        """Failures first, then warnings, passes, n/a; the kernel's order within each."""
        return sorted(self.checks, key=lambda c: VERDICTS.index(c["verdict"]))


def load_conformance(path):
    """(Conformance, None) or (None, why the log has none)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        return None, "cannot read: %s" % (e.strerror or e)
    events, _ = ml.parse_events(text)
    found = [e for e in events if e.get("event") == "conformance"]
    if not found:
        return None, "no conformance event (boot with workload=conformance)"
    c = Conformance(path, found[-1])
    if len(found) > 1:
        c.messages.append("%d conformance events: the last one is reported" % len(found))
    return c, None


def level_of(check):
    return check.get("level") if check.get("level") in LEVELS else "-"


def render_conformance_text(c, prov=None):
    out = ["== %s" % c.path, "firmware %s: %s" % (c.title(), c.totals())]
    if prov is not None:
        out.append("scope: %s" % cci.scope_lines(c, prov)[0])
    width = max([len(x["rule"]) for x in c.checks] + [4])
    out.append("%-7s %-6s %-*s %s" % ("verdict", "level", width, "rule", "detail"))
    for x in c.ordered():
        out.append("%-7s %-6s %-*s %s" % (x["verdict"].upper() if x["verdict"] in ("fail", "warn")
                                          else x["verdict"], level_of(x), width, x["rule"],
                                          x["detail"]))
        if x.get("waived"):
            out.append("%-7s %-6s %-*s waived: %s" % ("", "", width, "", x["waived"]))
        out.append("%-7s %-6s %-*s source: %s%s" % ("", "", width, "", x["source"],
                                                   " (memaccept's own rule)" if x.get("own") is True
                                                   else ""))
    todo = c.todo()
    out.append("")
    if todo:
        out.append("What the firmware should do (%d rule(s) not met; docs/firmware.md explains "
                   "each rule):" % len(todo))
        out += ["- %s %s%s: %s" % (lv, r, " (memaccept's own)" if own else "", a)
                for lv, r, own, a in todo]
    else:
        out.append("Nothing to do: every rule that applies is met.")
    return "\n".join(out)


def render_conformance_markdown(cs, prov=None, gate=None):
    out = ["# memaccept firmware conformance\n"]
    for c in cs:
        out.append("## %s\n" % c.title())
        out.append("Log `%s`: %s.\n" % (c.path, c.totals()))
        if gate:
            blocking = [x["rule"] for x in c.checks if cci.blocking(x, gate)]
            out.append("Gate `%s`: %s.\n" % (gate, "FAILED by %s" % ", ".join(
                "`%s`" % r for r in blocking) if blocking else "passed"))
        out.append("### Provenance\n")
        out += cci.provenance_lines(c, prov)
        out.append("\n### What this run can judge\n")
        out += cci.scope_lines(c, prov)
        out.append("\n### Verdicts\n")
        out.append(md_table(["verdict", "level", "rule", "detail", "source"],
                            [[x["verdict"] + (" (waived: %s)" % x["waived"] if x.get("waived")
                                              else ""), level_of(x), "`%s`" % x["rule"],
                              x["detail"],
                              x["source"] + (" (memaccept's own rule)" if x.get("own") is True
                                             else "")]
                             for x in c.ordered()]))
        todo = c.todo()
        out.append("### What the firmware should do\n")
        out += ["- **%s** `%s`%s: %s" % (lv, r, " (memaccept's own rule)" if own else "", a)
                for lv, r, own, a in todo] or ["Nothing: every rule that applies is met."]
        out.append("")
        if c.messages:
            out += ["- %s" % m for m in c.messages]
            out.append("")
    return "\n".join(out) + "\n"


def conformance_diff(o):
    if len(o.logs) != 2:
        print("report: --diff takes two logs, A and B", file=sys.stderr)
        return 2
    pair = []
    for path in o.logs:
        c, why = load_conformance(path)
        if c is None:
            print("report: %s: %s" % (path, why), file=sys.stderr)
            return 1
        pair.append(c)
    lines, _ = cci.diff(*pair)
    print("\n".join(lines))
    return 0


def conformance_main(o):
    if o.diff:
        return conformance_diff(o)
    waivers = []
    if o.waivers:
        try:
            with open(o.waivers) as f:
                waivers = cci.parse_waivers(f.read(), o.waivers)
        except OSError as e:
            print("report: cannot read waivers %s: %s" % (o.waivers, e.strerror or e),
                  file=sys.stderr)
            return 2
        except cci.WaiverError as e:
            print("report: %s" % e, file=sys.stderr)
            return 2
    prov = None
    if o.provenance:
        try:
            with open(o.provenance) as f:
                prov = json.load(f)
        except (OSError, ValueError) as e:
            print("report: provenance %s unusable (%s): left out" % (o.provenance, e),
                  file=sys.stderr)
    cs = []
    for path in o.logs:
        c, why = load_conformance(path)
        if c is None:
            print("report: %s: %s" % (path, why), file=sys.stderr)
            continue
        if waivers:
            c.messages += cci.apply_waivers(c, waivers)
        for m in c.messages:
            print("report: %s: %s" % (path, m), file=sys.stderr)
        cs.append(c)
    if not cs:
        print("report: no conformance report among %d log(s)" % len(o.logs), file=sys.stderr)
        return 1
    print("\n\n".join(render_conformance_text(c, prov) for c in cs))
    if o.markdown and not write_markdown(o.markdown, render_conformance_markdown(cs, prov,
                                                                                 o.fail_on)):
        return 1
    for path, what, text in ((o.junit, "junit", lambda: cci.junit_xml(cs, o.fail_on)),
                             (o.sarif, "sarif", lambda: cci.sarif_text(cs))):
        if path and not write_file(path, text(), what):
            return 1
    failed = cci.gate_failures(cs, o.fail_on)
    if failed:
        print("conformance: gate %s failed: %s" % (o.fail_on, ", ".join(
            "%s (%s %s)" % (x["rule"], x.get("level") or "-", x["verdict"]) for _, x in failed)))
        return 1
    print("conformance: gate %s passed" % o.fail_on)
    return 0


# ---------------------------------------------------------------- workload=probe
PROBE_QUANTILES = ("count", "p10", "p50", "p90", "p99", "max")


class Probe:
    """The probe event of one log: well-formed distributions in prims, in the kernel's order."""

    def __init__(self, path, label, event):
        self.path = path
        self.label = label or os.path.splitext(os.path.basename(path))[0]
        self.event = event
        self.messages = []
        raw = event.get("primitives")
        self.prims = {}
        for name, d in (raw.items() if isinstance(raw, dict) else []):
            if isinstance(d, dict) and all(ml._is_int(d.get(k)) for k in PROBE_QUANTILES):
                self.prims[name] = d
            else:
                self.messages.append("primitive %s is malformed (needs integers %s)" %
                                     (name, ", ".join(PROBE_QUANTILES)))
        if not isinstance(raw, dict):
            self.messages.append("probe event has no primitives object")
        absent = event.get("absent")
        self.absent = {k: v for k, v in absent.items() if isinstance(v, str)} \
            if isinstance(absent, dict) else {}
        model = event.get("model")
        self.model = model if isinstance(model, dict) else {}
        unit = event.get("unit")
        self.unit = unit if isinstance(unit, dict) and all(ml._is_int(unit.get(k)) for k in PROBE_QUANTILES) else None

    def title(self):
        e = self.event
        return "%s: platform %s, host pages %s, %s probe units + %s measured, %s MiB consumed%s" % (
            self.label, e.get("platform", "?"), e.get("host_pages", "?"), e.get("probe_units", "?"),
            e.get("measured_units", "?"),
            e["consumed_bytes"] >> 20 if ml._is_int(e.get("consumed_bytes")) else "?",
            "" if e.get("complete") else " (INCOMPLETE: some distribution has fewer samples than asked)")

    def model_line(self):
        m = self.model
        if not all(ml._is_int(m.get(k)) for k in ("predicted_ns", "measured_ns", "diff_permille")):
            return "no model"
        lo = m.get("probe_unit", {}).get("p10") if isinstance(m.get("probe_unit"), dict) else None
        hi = m.get("probe_unit", {}).get("p90") if isinstance(m.get("probe_unit"), dict) else None
        return "model %s us per unit, measured %s us: %s%.1f%%; the measured median is %s%s" % (
            us_text(m["predicted_ns"]), us_text(m["measured_ns"]),
            "-" if m.get("model_below") else "+", m["diff_permille"] / 10.0,
            "within" if m.get("within_spread") else "OUTSIDE",
            " the probe's spread (%s-%s us)" % (us_text(lo), us_text(hi)) if ml._is_int(lo) and ml._is_int(hi)
            else " the probe's spread")

    def terms(self):
        t = self.model.get("terms")
        return t if isinstance(t, dict) else {}


def us_text(ns):
    """ns as microseconds with three significant figures at least (2.15, 17.3, 25772)."""
    if not ml._is_int(ns):
        return "-"
    us = ns / 1000.0
    return "%.3g" % us if us < 100 else "%d" % round(us)


def load_probe(spec):
    """(Probe, None) or (None, why the log has none)."""
    label, path = split_spec(spec)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        return None, path, "cannot read: %s" % (e.strerror or e)
    events, _ = ml.parse_events(text)
    found = [e for e in events if e.get("event") == "probe"]
    if not found:
        return None, path, "no probe event (boot with workload=probe)"
    p = Probe(path, label, found[-1])
    if len(found) > 1:
        p.messages.append("%d probe events: the last one is reported" % len(found))
    return p, path, None


def probe_rows(p):
    rows = [[n, str(d["count"])] + [us_text(d[k]) for k in PROBE_QUANTILES[1:]] for n, d in p.prims.items()]
    if p.unit:
        rows.append(["unit (accepted as usual)", str(p.unit["count"])] +
                    [us_text(p.unit[k]) for k in PROBE_QUANTILES[1:]])
    return rows


PROBE_HEADERS = ["primitive", "samples", "p10 us", "p50 us", "p90 us", "p99 us", "max us"]


def probe_term_rows(p):
    return [[n, "%.3f" % (t.get("calls_per_unit_milli", 0) / 1000.0),
             "%.3f" % (t.get("entries_per_unit_milli", 0) / 1000.0), us_text(t.get("ns"))]
            for n, t in p.terms().items() if isinstance(t, dict)]


def probe_compare_rows(probes):
    """One row per primitive any log has: each log's median, and its ratio to the first log's."""
    names = []
    for p in probes:
        names += [n for n in p.prims if n not in names]
    rows = []
    for n in names + ["unit (accepted as usual)", "model (predicted)"]:
        vals = []
        for p in probes:
            if n == "unit (accepted as usual)":
                vals.append(p.unit["p50"] if p.unit else None)
            elif n == "model (predicted)":
                vals.append(p.model.get("predicted_ns"))
            else:
                vals.append(p.prims[n]["p50"] if n in p.prims else None)
        row = [n]
        for i, v in enumerate(vals):
            cell = us_text(v) if ml._is_int(v) else "-"
            if i and ml._is_int(v) and ml._is_int(vals[0]) and vals[0]:
                cell += " (x%.2f)" % (v / vals[0])
            row.append(cell)
        rows.append(row)
    return rows


def render_probe_text(probes):
    out = []
    for p in probes:
        out.append("== %s" % p.title())
        t = Table("primitives (%s)" % p.label, PROBE_HEADERS, probe_rows(p))
        out.append(render_text([t]))
        for n, why in p.absent.items():
            out.append("  no %s: %s" % (n, why))
        terms = probe_term_rows(p)
        if terms:
            out.append(render_text([Table("model of one unit (%s)" % p.label,
                                          ["term", "calls/unit", "entries/unit", "us/unit"], terms)]))
        out.append(p.model_line())
    if len(probes) > 1:
        out.append(render_text([Table("medians side by side (us; ratio to %s)" % probes[0].label,
                                      ["primitive"] + [p.label for p in probes], probe_compare_rows(probes))]))
    return "\n".join(out)


def render_probe_markdown(probes, plots):
    out = ["# memaccept probe\n"]
    for p in probes:
        out.append("## %s\n" % p.title())
        out.append(md_table(PROBE_HEADERS, probe_rows(p)))
        if p.absent:
            out += ["- no `%s`: %s" % (n, why) for n, why in p.absent.items()]
            out.append("")
        terms = probe_term_rows(p)
        if terms:
            out.append(md_table(["term", "calls/unit", "entries/unit", "us/unit"], terms))
        out.append(p.model_line() + ".\n")
    if len(probes) > 1:
        out.append("## Side by side\n")
        out.append("Medians in microseconds; in brackets the ratio to `%s`.\n" % probes[0].label)
        out.append(md_table(["primitive"] + [p.label for p in probes], probe_compare_rows(probes)))
    for title, path in plots:
        out.append("![%s](%s)\n" % (title, os.path.basename(path)))
    return "\n".join(out) + "\n"


def plot_probe(plt, probes, path):
    """One bar per primitive (median, log scale), whiskers p10-p90; the logs side by side."""
    names = []
    for p in probes:
        names += [n for n in p.prims if n not in names]
    if not names:
        return False
    fig, ax = plt.subplots(figsize=(min(24, max(8, 0.3 * len(names) * (1 + 0.5 * len(probes)))), 5.5))
    width = 0.8 / len(probes)
    for i, p in enumerate(probes):
        xs, mid, lo, hi = [], [], [], []
        for j, n in enumerate(names):
            d = p.prims.get(n)
            if not d or d["p50"] <= 0:
                continue
            xs.append(j + (i - (len(probes) - 1) / 2.0) * width)
            mid.append(d["p50"] / 1000.0)
            lo.append(max(0.0, (d["p50"] - d["p10"]) / 1000.0))
            hi.append(max(0.0, (d["p90"] - d["p50"]) / 1000.0))
        ax.bar(xs, mid, width=width, yerr=[lo, hi], capsize=2, label=_tex_safe(p.label),
               color=OTHER_COLOURS[i % len(OTHER_COLOURS)], alpha=0.85)
    ax.set_yscale("log")
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("microseconds (median; whiskers p10-p90)")
    ax.set_title("acceptance primitives")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def probe_main(o):
    probes = []
    for spec in o.logs:
        p, path, why = load_probe(spec)
        if p is None:
            print("report: %s: %s" % (path, why), file=sys.stderr)
            continue
        for m in p.messages:
            print("report: %s: %s" % (path, m), file=sys.stderr)
        probes.append(p)
    if not probes:
        print("report: no probe event among %d log(s)" % len(o.logs), file=sys.stderr)
        return 1
    seen = {}
    for p in probes:
        seen[p.label] = seen.get(p.label, 0) + 1
        if seen[p.label] > 1:
            p.label = "%s #%d" % (p.label, seen[p.label])
    print(render_probe_text(probes))
    plots = []
    if o.plots:
        plt, why = matplotlib_or_reason()
        if plt is None:
            print("report: plots: %s" % why, file=sys.stderr)
        else:
            os.makedirs(o.plots, exist_ok=True)
            path = os.path.join(o.plots, "probe.png")
            if plot_probe(plt, probes, path):
                plots.append(("acceptance primitives", path))
                print("plot: acceptance primitives: %s" % path)
    if o.markdown and not write_markdown(o.markdown, render_probe_markdown(probes, plots)):
        return 1
    return 0


def write_file(path, text, what="markdown"):
    """Write text to path (its folder created); say where, or why not. False on failure."""
    try:
        d = os.path.dirname(path)
        if d:
            os.makedirs(d, exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        print("%s: %s" % (what, path))
        return True
    except OSError as e:
        print("report: cannot write %s: %s" % (path, e.strerror or e), file=sys.stderr)
        return False


def write_markdown(path, text):
    """Write text to path (its folder created); say where, or why not. False on failure."""
    return write_file(path, text, "markdown")


# ---------------------------------------------------------------- instructions
INSN_PHASES = ("efi_main_to_ebs", "descriptor_tables", "memory_map", "page_tables", "smp",
               "bitmap", "allocator")


def load_instructions(specs):
    """(label, path, instructions event) of each log that has one (the observer's)."""
    out = []
    for spec in specs:
        label, path = split_spec(spec)
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                events, _ = ml.parse_events(f.read())
        except OSError:
            continue
        found = [e for e in events if e.get("event") == "instructions"]
        if found:
            e = dict(found[-1])
            summ = [x for x in events if x.get("event") == "summary"]
            acc = e.get("accept") if isinstance(e.get("accept"), dict) else {}
            units = (summ[-1].get("accepted_bytes") or 0) // UNIT_BYTES if summ and \
                ml._is_int(summ[-1].get("accepted_bytes")) else 0
            e["_outside_per_unit"] = acc["outside_platform"] / units if units and \
                ml._is_int(acc.get("outside_platform")) else None
            out.append((label or os.path.basename(path), path, e))
    return out


def instructions_table(found):
    """One row per log: the boot vCPU's instructions per phase and to ready."""
    rows = []
    for label, _path, e in found:
        ph = e.get("phases") if isinstance(e.get("phases"), dict) else {}
        per = e.get("_outside_per_unit")
        rows.append([label] + [str(ph[k]) if ml._is_int(ph.get(k)) else "-" for k in INSN_PHASES] +
                    [str(e["to_ready"]) if ml._is_int(e.get("to_ready")) else "-",
                     "-" if per is None else "%.0f" % per])
    return Table("instructions per boot phase (the boot vCPU's, instruction observer)",
                 ["log"] + list(INSN_PHASES) + ["to ready", "accept/unit outside platform"], rows,
                 "accept/unit outside platform: the kernel's accept path (kernel/memory.c "
                 "accept_backend) outside the platform's call, per 2 MiB unit the summary "
                 "counts as accepted; '-' where nothing was accepted or the observer is older.")


def all_sections_main(o):
    """Every section the logs have data for: boots, instructions, conformance, probe."""
    text, md = [], []
    runs, messages = load_runs(o.logs, o.include_failed)
    used = set()
    if runs:
        text.append(render_text(tables(runs)))
        used |= {r.boot.path for r in runs if getattr(r.boot, "path", None)}
    insn = load_instructions(o.logs)
    if insn:
        text.append(render_text([instructions_table(insn)]))
        md.append(render_markdown([instructions_table(insn)]))
        used |= {p for _, p, _ in insn}
    confs = []
    for spec in o.logs:
        c, _why = load_conformance(split_spec(spec)[1])
        if c is not None:
            confs.append(c)
            used.add(c.path)
    if confs:
        text.append("\n\n".join(render_conformance_text(c) for c in confs))
        md.append(render_conformance_markdown(confs))
    probes = []
    for spec in o.logs:
        p, path, _why = load_probe(spec)
        if p is not None:
            probes.append(p)
            used.add(path)
    if probes:
        text.append(render_probe_text(probes))
        md.append(render_probe_markdown(probes, []))
    for path, m in messages:
        # A log another section used is not "unusable": say only what is wrong with it.
        if path in used and m.startswith("unusable"):
            continue
        print("report: %s: %s" % (path, m), file=sys.stderr)
    for spec in o.logs:
        path = split_spec(spec)[1]
        if path not in used and not any(path == p for p, _ in messages):
            print("report: %s: no boot, instructions, conformance or probe data" % path, file=sys.stderr)
    if not text:
        print("report: no usable log among %d given" % len(o.logs), file=sys.stderr)
        return 1
    print("\n\n".join(text))
    plots = []
    if o.plots and runs:
        plots, pmsgs = draw_plots(runs, o.plots)
        for m in pmsgs:
            print("report: plots: %s" % m, file=sys.stderr)
        for t, p in plots:
            print("plot: %s: %s" % (t, p))
    if o.markdown:
        doc = markdown_document(runs, messages, plots, o.markdown) if runs else ""
        if not write_markdown(o.markdown, doc + "\n".join(md)):
            return 1
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 usage="%(prog)s [options] LOG|LABEL=LOG...")
    ap.add_argument("logs", nargs="+", metavar="LOG", help="console log, or LABEL=log")
    ap.add_argument("--markdown", metavar="FILE", help="also write the report as Markdown")
    ap.add_argument("--plots", metavar="DIR", help="draw PNGs into DIR (matplotlib)")
    ap.add_argument("--include-failed", action="store_true",
                    help="keep boots that failed (marked) instead of leaving them out")
    ap.add_argument("--conformance", action="store_true",
                    help="report the firmware conformance verdicts of each log instead")
    ap.add_argument("--junit", metavar="FILE", help="--conformance: also write JUnit XML")
    ap.add_argument("--sarif", metavar="FILE", help="--conformance: also write SARIF 2.1.0")
    ap.add_argument("--waivers", metavar="FILE", help="--conformance: a waiver file")
    ap.add_argument("--fail-on", choices=cci.GATES, default="must",
                    help="--conformance: the exit gate (default must)")
    ap.add_argument("--provenance", metavar="JSON",
                    help="--conformance: the host's record of the boot (runqemu.py --provenance)")
    ap.add_argument("--diff", action="store_true",
                    help="compare the conformance verdicts of two logs, A then B")
    ap.add_argument("--probe", action="store_true",
                    help="report each log's workload=probe (primitives, model) and compare them")
    o = ap.parse_args(argv)
    if o.conformance or o.diff:
        return conformance_main(o)
    if o.probe:
        return probe_main(o)

    return all_sections_main(o)


if __name__ == "__main__":
    sys.exit(main())
