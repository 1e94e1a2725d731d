# SPDX-License-Identifier: MIT
# memaccept: whole-log checks for QEMU cases (named in tests/qemu/manifest.toml as checks = [...]).
"""Each check takes (case, events, console_text) and returns a list of problems; an
empty list means the check passed. They recompute what the guest reports from other
evidence in the same log (the raw firmware map, counters of other events) instead of
comparing against stored numbers.

tests/run.py imports this module with tools/ on sys.path: the event, size and option
readers are tools/memaccept_log.py's."""
import json
import os
import re

import memaccept_log as ml

MIB = 1 << 20
GIB = 1 << 30
UNIT = 2 * MIB
PAGE = 4096

EFI_CONVENTIONAL = 7
EFI_UNACCEPTED = 15


def _option(case, key):
    """The value of key= in the case's command line (the last one: later options win)."""
    return ml.parse_options(case.get("args", "")).get(key)


def _size_option(case, key, default=None):
    """key= as a number of bytes (default if absent, None if no default); a value that
    is not a size is a broken case, not a failed check."""
    text = _option(case, key) or default
    if text is None:
        return None
    size = ml.parse_size(text)
    if size is None:
        raise ValueError("%s=%s in the case's args is not a size" % (key, text))
    return size


def expected_unaccepted(events, fake):
    """Unaccepted ranges from the raw descriptors (memdesc events), merged.

    An independent reading of the firmware map: type 15 is unaccepted; with
    fake_unaccepted_start, conventional memory at and above it is too. QEMU's maps
    have no overlaps or anomalies, which the test checks first.
    """
    descs = sorted((d["start"], d["start"] + d["pages"] * PAGE, d["type"]) for d in ml.all_of(events, "memdesc"))
    for (s1, e1, _), (s2, _e2, _) in zip(descs, descs[1:]):
        if s2 < e1:
            raise ValueError("overlapping descriptors at %#x: this check assumes a clean map" % s2)
    pieces = []
    for s, e, t in descs:
        if t == EFI_UNACCEPTED:
            pieces.append((s, e))
        elif t == EFI_CONVENTIONAL and fake is not None and e > fake:
            pieces.append((max(s, (fake + PAGE - 1) // PAGE * PAGE), e))
    merged = []
    for s, e in pieces:
        if s >= e:
            continue
        if merged and merged[-1][1] == s:
            merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


def ceil_div(a, b):
    return -(-a // b)


def bitmap_matches_map(case, events, text):
    """The bitmap event agrees to the byte with the firmware's map (needs verbose=1)."""
    problems = []
    if not ml.all_of(events, "memdesc"):
        return ["no memdesc events: run the case with verbose=1"]
    ranges = expected_unaccepted(events, _size_option(case, "fake_unaccepted_start"))
    bm = ml.first(events, "bitmap")
    if bm is None:
        return ["no bitmap event"]

    # Full units (round inward) and edges, per range.
    runs, edge = [], 0
    for s, e in ranges:
        lo, hi = -(-s // UNIT) * UNIT, e // UNIT * UNIT
        if lo >= hi:
            edge += e - s
            continue
        edge += (lo - s) + (e - hi)
        runs.append((lo, hi))
    # Segments: one per run of whole units (runs that touch are one).
    segs = []
    for lo, hi in runs:
        if segs and lo == segs[-1][1]:
            segs[-1][1] = hi
        else:
            segs.append([lo, hi])
    unaccepted = sum(hi - lo for lo, hi in runs)
    units = sum((hi - lo) // UNIT for lo, hi in segs)
    words = sum(ceil_div((hi - lo) // UNIT, 64) for lo, hi in segs)
    want = {
        "unaccepted_bytes": unaccepted,
        "edge_bytes": edge,
        "units": units,
        "segments": len(segs),
        "base": segs[0][0] if segs else 0,
        # The words, a bit per chunk of 64 words (mm/bitmap.h), the segments.
        "bytes": (words + ceil_div(ceil_div(words, 64), 64)) * 8 + len(segs) * 24,
        "segment_bases": [lo for lo, _ in segs],
        "segment_units": [(hi - lo) // UNIT for lo, hi in segs],
    }
    for k, v in want.items():
        if bm.get(k) != v:
            problems.append("bitmap %s = %s, the map implies %s" % (k, bm.get(k), v))
    fw = ml.first(events, "firmware")
    total = sum(e - s for s, e in ranges)
    if fw is None:
        problems.append("no firmware event")
    elif fw.get("unaccepted_bytes") != total:
        problems.append("firmware unaccepted_bytes = %s, the map implies %s" % (fw.get("unaccepted_bytes"), total))
    got = [(r["start"], r["end"]) for r in ml.all_of(events, "range") if r.get("kind") == "unaccepted"]
    if got != ranges:
        problems.append("range events %s differ from the map's %s" % (got[:4], ranges[:4]))
    limit = case.get("bitmap_max_bytes")
    if limit is not None and bm.get("bytes", 1 << 62) > limit:
        problems.append("bitmap takes %s bytes, more than %s" % (bm.get("bytes"), limit))
    return problems


def summary_consistent(case, events, text):
    """The summary's counters add up."""
    s = ml.first(events, "summary")
    if s is None:
        return ["no summary event"]
    bm = ml.first(events, "bitmap")
    if bm is None:
        return ["no bitmap event"]  # every boot that reaches the summary emits one
    problems = []
    by_path = sum(s["accepted_by_path"].values())
    if by_path != s["accepted_bytes"]:
        problems.append("accepted_by_path sums to %d, accepted_bytes is %d" % (by_path, s["accepted_bytes"]))
    lost = s["accept_failures"]
    # Every unit that was unaccepted at the bitmap is now accepted, still unaccepted, or lost.
    units_accepted = (s["accepted_bytes"] - s["edge_accepted_bytes"]) // UNIT
    if bm["unaccepted_bytes"] != s["unaccepted_bytes"] + units_accepted * UNIT + lost * UNIT:
        problems.append("bitmap had %d unaccepted bytes; now %d unaccepted + %d accepted + %d lost"
                        % (bm["unaccepted_bytes"], s["unaccepted_bytes"], units_accepted * UNIT, lost * UNIT))
    # Partial units: each one accepted, still pending, or (when the platform refused it) lost.
    edges = s["edge_accepted_bytes"] + s["edge_unaccepted_bytes"]
    if edges > bm["edge_bytes"] or (not lost and edges != bm["edge_bytes"]):
        problems.append("partial units: %d accepted + %d pending, the bitmap had %d"
                        % (s["edge_accepted_bytes"], s["edge_unaccepted_bytes"], bm["edge_bytes"]))
    if not bm["edge_accepted_bytes"] <= s["edge_accepted_bytes"]:
        problems.append("bitmap edge_accepted_bytes %d (by ready) above the summary's %d"
                        % (bm["edge_accepted_bytes"], s["edge_accepted_bytes"]))
    # The partial units' platform calls (each counted on the CPU that accepted it, whatever
    # the others did meanwhile): one 4 KiB page accepted per page of partial units.
    pc, pe = s.get("platform_calls", {}), s.get("platform_calls_edges")
    if pe is not None:
        if pe.get("svsm_pvalidate_entries"):
            key = "svsm_pvalidate_entries"
        else:
            key = next((k for k in ("sim_accept_4k_pages", "accepted_4k", "pvalidate_4k") if k in pe), None)
        pages = pe.get(key, 0) + pe.get("already_accepted_4k_pages", 0) if key else None
        if pages is not None and not lost and pages != s["edge_accepted_bytes"] // PAGE:
            problems.append("partial units: %d pages accepted, platform_calls_edges says %s=%d"
                            % (s["edge_accepted_bytes"] // PAGE, key, pages))
        for k, v in pe.items():
            if v > pc.get(k, 0):
                problems.append("platform_calls_edges %s=%d above the total %d" % (k, v, pc.get(k, 0)))
    hist = sum(s["accept_ns_log2_histogram"])
    if hist != s["accept_calls"]:
        problems.append("histogram counts %d accepts, accept_calls is %d" % (hist, s["accept_calls"]))
    if s["accept_calls"] and not (s["accept_ns_p50"] <= s["accept_ns_p99"] <= s["accept_ns_max"]):
        problems.append("percentiles out of order: p50 %d p99 %d max %d"
                        % (s["accept_ns_p50"], s["accept_ns_p99"], s["accept_ns_max"]))
    return problems


def _conservation(w):
    """Memory in = memory out for a touch workload; returns a problem string or None."""
    used = w["done_bytes"] + w["kernel_pages_added"] * PAGE + w["meta_bytes_added"]
    if w["free_before"] + w["accepted_bytes"] != used + w["free_after"]:
        return ("free_before %d + accepted %d != touched %d + kernel pages %d + meta %d + free_after %d"
                % (w["free_before"], w["accepted_bytes"], w["done_bytes"], w["kernel_pages_added"] * PAGE,
                   w["meta_bytes_added"], w["free_after"]))
    return None


def lazy_accepts_only_what_is_needed(case, events, text):
    """Lazy: the workload accepts exactly its shortfall, rounded up to one unit.

    Conservation: free_before + accepted = touched + metadata + kernel pages + free_after.
    Lazy acceptance only accepts when nothing is free, one unit at a time, so afterwards
    less than one unit (2 MiB) is free: accepted - (touched + overhead - free_before)
    lies in [0, 2 MiB).
    """
    w = ml.first(events, "workload")
    if w is None:
        return ["no workload event"]
    problems = [p for p in [_conservation(w)] if p]
    if w["accepted_bytes"] and not (0 <= w["free_after"] < UNIT):
        problems.append("lazy left %d bytes free after accepting: more than one unit" % w["free_after"])
    if w["accepted_bytes"] == 0:
        problems.append("the workload accepted nothing: make it larger than the free memory")
    return problems


def ahead_keeps_spare(case, events, text):
    """Ahead: after the workload, at least the spare is free (and less than spare + 2 MiB)."""
    w, s = ml.first(events, "workload"), ml.first(events, "summary")
    if w is None or s is None:
        return ["no workload or summary event"]
    spare = _size_option(case, "accept_ahead", "64M")
    problems = [p for p in [_conservation(w)] if p]
    if s["unaccepted_bytes"] >= UNIT and not (spare <= w["free_after"] < spare + UNIT):
        problems.append("free after the workload is %d, expected [%d, %d)" % (w["free_after"], spare, spare + UNIT))
    if s["accepted_by_path"]["ahead"] == 0:
        problems.append("nothing was accepted on the ahead path")
    return problems


def eager_accepts_everything(case, events, text):
    """Eager: everything accepted before ready, in >= 10 progress steps, nothing afterwards."""
    s, bm = ml.first(events, "summary"), ml.first(events, "bitmap")
    if s is None or bm is None:
        return ["no summary or bitmap event"]
    problems = []
    if s["unaccepted_bytes"] != 0 or s["edge_unaccepted_bytes"] != 0:
        problems.append("%d bytes still unaccepted, %d in partial units"
                        % (s["unaccepted_bytes"], s["edge_unaccepted_bytes"]))
    if s["accepted_by_path"]["eager"] != bm["unaccepted_bytes"] + bm["edge_bytes"]:
        problems.append("eager accepted %d, the bitmap had %d and %d in partial units"
                        % (s["accepted_by_path"]["eager"], bm["unaccepted_bytes"], bm["edge_bytes"]))
    if bm["edge_accepted_bytes"] != bm["edge_bytes"]:
        problems.append("only %d of %d bytes in partial units accepted by ready"
                        % (bm["edge_accepted_bytes"], bm["edge_bytes"]))
    if s["accepted_by_path"]["lazy"]:
        problems.append("lazy acceptance happened after eager: %d bytes" % s["accepted_by_path"]["lazy"])
    steps = len(re.findall(r"^eager: accepted", text, re.M))
    if bm["unaccepted_bytes"] >= 10 * GIB // 8 and steps < 10:
        problems.append("only %d progress lines" % steps)
    # Progress lines come before ready.
    ready_at = text.find('{"event":"ready"')
    last_progress = text.rfind("eager: accepted")
    if ready_at < 0:
        problems.append("no ready event on the console")
    elif last_progress > ready_at:
        problems.append("eager progress after ready")
    return problems


def stray_access_matches_target(case, events, text):
    """The reported unaccepted access is exactly the address the test case announced."""
    target, got = ml.first(events, "stray_target"), ml.first(events, "unaccepted_access")
    if target is None or got is None:
        return ["missing stray_target or unaccepted_access event"]
    problems = []
    for k in ("addr", "unit"):
        if target[k] != got[k]:
            problems.append("%s: touched %#x, reported %#x" % (k, target[k], got[k]))
    if not got.get("backtrace"):
        problems.append("no backtrace in the report")
    return problems


def _summary_obj(events, key):
    """The summary's object `key` ({} when absent) and the summary (None when absent)."""
    s = ml.first(events, "summary")
    return (s or {}).get(key, {}), s


def _calls(events):
    return _summary_obj(events, "platform_calls")


def tdx_calls_match_host(case, events, text):
    """TDX accept calls as the host the emulator plays (emu_host=, default kvm) implies.

    Every whole unit is first tried at 2 MiB (never 1 GiB: the TDX 1.5 module rejects
    level 2). kvm maps private memory in 4 KiB pages, so each of those answers
    PAGE_SIZE_MISMATCH and the unit takes 512 4 KiB accepts; huge backs a wholly
    unaccepted unit with one 2 MiB page, so one call does it. Partial units are 4 KiB pages
    on either host. Recomputed from the summary's byte counts, not stored numbers."""
    calls, s = _calls(events)
    if s is None:
        return ["no summary"]
    host = _option(case, "emu_host") or "kvm"
    edge_pages = s["edge_accepted_bytes"] // PAGE
    units = (s["accepted_bytes"] - s["edge_accepted_bytes"]) // UNIT
    if host == "kvm":
        want = {"accepted_2m": 0, "size_mismatch": units, "accepted_4k": edge_pages + 512 * units,
                "tdcall_accept": edge_pages + 513 * units}
    else:
        want = {"accepted_2m": units, "size_mismatch": 0, "accepted_4k": edge_pages,
                "tdcall_accept": edge_pages + units}
    problems = []
    if units == 0:
        problems.append("no whole unit was accepted: the check proves nothing")
    for k, v in want.items():
        if calls.get(k, 0) != v:
            problems.append("%s = %s, emu_host=%s with %d units and %d edge pages implies %d"
                            % (k, calls.get(k), host, units, edge_pages, v))
    if "accepted_1g" in calls:
        problems.append("a 1 GiB accept counter exists: the module has no 1 GiB accept")
    if calls.get("tdcall_accept") and s.get("platform_calls_per_gib", {}).get("tdcall_accept") is None:
        problems.append("summary lacks platform_calls_per_gib.tdcall_accept")
    return problems


def tdx_size_mismatch_path(case, events, text):
    """size_mismatch@unit: the 2 MiB accept fails once and the unit is accepted as 512 pages."""
    calls, s = _calls(events)
    if s is None:
        return ["no summary"]
    lazy_units = s["accepted_by_path"]["lazy"] // UNIT
    edge_pages = s["edge_accepted_bytes"] // PAGE
    problems = []
    if calls.get("accepted_4k") != edge_pages + 512:
        problems.append("accepted_4k = %s, expected edges %d + 512" % (calls.get("accepted_4k"), edge_pages))
    if calls.get("accepted_2m") != lazy_units - 1:
        problems.append("accepted_2m = %s, expected %d" % (calls.get("accepted_2m"), lazy_units - 1))
    return problems


def _per_gib(events):
    return _summary_obj(events, "platform_calls_per_gib")


def _snp_host(case):
    """The host the emulator played: emu_host= from the case's args (kvm by default)."""
    return _option(case, "emu_host") or "kvm"


def _snp_pvalidate_problems(case, per):
    """PVALIDATEs per GiB accepted in units: 512 2 MiB ones, each of which falls back to
    512 4 KiB ones on a kvm host (4 KiB RMP entries), and none on a huge host."""
    problems = []
    small = _snp_host(case) == "kvm"
    want = {"pvalidate_2m": 512, "pvalidate_size_mismatch": 512 if small else 0,
            "pvalidate_4k": 512 * 512 if small else 0, "evicted_pages": 512 * 512}
    for k, v in want.items():
        if per.get(k, 0) != v:
            problems.append("%s per GiB = %s, expected %d on a %s host" % (k, per.get(k), v, _snp_host(case)))
    return problems


def snp_calls_per_gib_lazy(case, events, text):
    """Lazy on SNP: per GiB accepted in units, 512 PSC exits, 512 2 MiB PVALIDATEs (and
    on a kvm host 512 x 512 4 KiB ones after the size mismatch), every page evicted."""
    per, s = _per_gib(events)
    if s is None:
        return ["no summary"]
    problems = []
    if per.get("vmgexit_psc") != 512:
        problems.append("vmgexit_psc per GiB = %s, expected 512 (one per 2 MiB unit)" % per.get("vmgexit_psc"))
    if per.get("psc_ahead_units"):
        problems.append("lazy converted units ahead of their accept: %s per GiB" % per["psc_ahead_units"])
    return problems + _snp_pvalidate_problems(case, per)


def snp_calls_per_gib_eager(case, events, text):
    """Eager on SNP: at most 2.2 PSC exits per GiB (full 253-entry requests across runs),
    512 2 MiB PVALIDATEs (plus the 4 KiB fallback on a kvm host). With N vCPUs, each of
    the N - 1 boundaries between their shares may cost one exit more: a vCPU fills its
    last request with the units after its share, and when its neighbour has claimed the
    first of those already, the neighbour converts them itself (which of the two gets
    there first is timing: snp-smp4-eager gave 3 exits in 8 of 10 boots, 4 in 2)."""
    per, s = _per_gib(events)
    per_tib = _summary_obj(events, "platform_calls_per_tib")[0]
    if s is None:
        return ["no summary"]
    problems = []
    psc = per_tib.get("vmgexit_psc")
    accepted = s.get("accepted_bytes") or 1
    limit = 2.2 * 1024 + (case.get("smp", 1) - 1) * (1 << 40) / accepted
    if psc is None or not 1024 <= psc <= limit:
        problems.append("vmgexit_psc per TiB = %s, expected at most %d (2.2 per GiB, plus one "
                        "exit per boundary between vCPU shares)" % (psc, limit))
    return problems + _snp_pvalidate_problems(case, per)


def _latency_problems(where, lat):
    problems = []
    keys = ("p50_ns", "p90_ns", "p99_ns", "p999_ns", "max_ns")
    vals = [lat.get(k) for k in keys]
    if None in vals:
        return ["%s: missing one of %s" % (where, keys)]
    if lat["count"] and vals != sorted(vals):
        problems.append("%s: percentiles out of order %s" % (where, vals))
    q = lat.get("quantiles_ns", [])
    if q != sorted(q) or (lat["count"] and q and q[-1] > lat["max_ns"]):
        problems.append("%s: quantiles not increasing or above max: %s" % (where, q))
    if len(q) != len(lat.get("quantiles_permille", [])):
        problems.append("%s: %d quantiles for %d levels" % (where, len(q), len(lat.get("quantiles_permille", []))))
    return problems


def workloads_consistent(case, events, text):
    """Every workload step's event is complete and adds up with the others and the summary."""
    ws, s = ml.all_of(events, "workload"), ml.first(events, "summary")
    want = [step.split(":")[0] for step in (_option(case, "workload") or "").split(",")]
    problems = []
    if [w.get("name") for w in ws] != want:
        return ["workload events %s, expected %s" % ([w.get("name") for w in ws], want)]
    if s is None or ml.first(events, "timing") is None or ml.first(events, "accept_series") is None:
        return ["summary, timing or accept_series missing"]
    calls = 0
    for w in ws:
        n = w["name"]
        for key in ("alloc_all", "alloc_fast", "alloc_accepting"):
            problems += _latency_problems("%s.%s" % (n, key), w[key])
        if w["alloc_all"]["count"] != w["alloc_fast"]["count"] + w["alloc_accepting"]["count"]:
            problems.append("%s: all %d != fast %d + accepting %d" % (
                n, w["alloc_all"]["count"], w["alloc_fast"]["count"], w["alloc_accepting"]["count"]))
        if w["alloc_accepting"]["count"] > w["accept_calls"]:
            problems.append("%s: more accepting allocations than accept calls" % n)
        if w["accepted_bytes"] and not w["accept_mib_s"]:
            problems.append("%s: accepted memory but no acceptance rate" % n)
        if n == "touch":
            c = _conservation(w)
            if c:
                problems.append("touch: " + c)
        if n == "mix":
            problems += _latency_problems("mix.free", w["free"])
        if n == "bandwidth" and not w.get("write_mib_s"):
            problems.append("bandwidth: no write rate")
        calls += w["accept_calls"]
    # What was accepted by ready (partial units only, in the cases that run workloads).
    after_boot = s["accepted_bytes"] - ml.first(events, "bitmap")["edge_accepted_bytes"]
    if sum(w["accepted_bytes"] for w in ws) != after_boot:
        problems.append("workloads accepted %d, the summary says %d after boot"
                        % (sum(w["accepted_bytes"] for w in ws), after_boot))
    if calls > s["accept_calls"]:
        problems.append("workload accept calls %d exceed the summary's %d" % (calls, s["accept_calls"]))
    series = ml.first(events, "accept_series")
    t, v = series["t_us"], series["accepted_bytes"]
    if t != sorted(t) or v != sorted(v) or (v and v[-1] != s["accepted_bytes"]):
        problems.append("accept_series not increasing or not ending at the summary's total")
    return problems


# ---------------------------------------------------------------- more than one vCPU

def smp_started_all(case, events, text):
    """The smp event comes before ready; every vCPU QEMU has (or cpus= allows) started."""
    smp, problems = ml.first(events, "smp"), []
    if smp is None:
        return ["no smp event"]
    order = [e["event"] for e in events]
    if "ready" in order and order.index("smp") > order.index("ready"):
        problems.append("smp event after ready")
    want = min(int(case.get("smp", 1)), int(_option(case, "cpus") or 1 << 20))
    if smp["cpus_reported"] != int(case.get("smp", 1)):
        problems.append("cpus_reported %d, QEMU has %s vCPUs" % (smp["cpus_reported"], case.get("smp", 1)))
    if smp["cpus_started"] != want:
        problems.append("cpus_started %d, expected %d" % (smp["cpus_started"], want))
    if len(smp.get("apic_ids", [])) != smp["cpus_started"] or len(set(smp.get("apic_ids", []))) != smp["cpus_started"]:
        problems.append("apic_ids %r do not name %d distinct vCPUs" % (smp.get("apic_ids"), smp["cpus_started"]))
    return problems


def _by_cpu_sum(s, key="accepted_by_cpu"):
    v = s.get(key)
    return None if v is None else sum(v)


def eager_split_across_cpus(case, events, text):
    """Parallel eager: every started vCPU accepted an equal share (within one unit of
    the shares' rounding), the per-vCPU bytes add up to the total, nothing is left."""
    s, bm, smp = ml.first(events, "summary"), ml.first(events, "bitmap"), ml.first(events, "smp")
    if s is None or bm is None or smp is None:
        return ["no summary, bitmap or smp event"]
    by_cpu, problems = s.get("accepted_by_cpu") or [], []
    if sum(by_cpu) != s["accepted_bytes"]:
        problems.append("accepted_by_cpu %r sums to %d, accepted_bytes is %d" % (by_cpu, sum(by_cpu), s["accepted_bytes"]))
    n = smp["cpus_started"]
    # The boot CPU also accepted the partial units, after the shares: leave them out of its share.
    shares = [b - (s["edge_accepted_bytes"] if i == 0 else 0) for i, b in enumerate(by_cpu)]
    shares = [b for b in shares if b]
    if len(shares) != n:
        problems.append("%d vCPUs accepted units, %d started: %r" % (len(shares), n, by_cpu))
    elif max(shares) - min(shares) > n * UNIT:
        problems.append("shares differ by more than %d units: %r" % (n, shares))
    if s["unaccepted_bytes"] != 0 or s["edge_unaccepted_bytes"] != 0:
        problems.append("%d bytes still unaccepted, %d in partial units"
                        % (s["unaccepted_bytes"], s["edge_unaccepted_bytes"]))
    # Few, large calls: at most one per GiB of each share plus one per share and segment.
    # (sim only: other platforms count their own calls, checked by their own checks)
    if "sim_accept" in s["platform_calls"] and s["accept_calls"] - s["platform_calls"]["sim_accept"] > 0:
        problems.append("accept_calls %d differs from the platform's sim_accept %d"
                        % (s["accept_calls"], s["platform_calls"].get("sim_accept", 0)))
    return problems


def ptouch_consistent(case, events, text):
    """ptouch: the vCPUs together touched exactly SIZE, each its share, and what they
    accepted adds up to the workload's accepted bytes."""
    w = next((w for w in ml.all_of(events, "workload") if w.get("name") == "ptouch"), None)
    smp = ml.first(events, "smp")
    if w is None or smp is None:
        return ["no ptouch workload or smp event"]
    problems = [p for p in [_conservation(w)] if p]
    size = ml.parse_size(_option(case, "workload").split("ptouch:")[1].split(",")[0])
    if w["done_bytes"] != size or sum(w["bytes_by_cpu"]) != size:
        problems.append("touched %d (by cpu %r), asked %d" % (w["done_bytes"], w["bytes_by_cpu"], size))
    busy = [b for b in w["bytes_by_cpu"] if b]
    if len(busy) != smp["cpus_started"] or w["cpus"] != smp["cpus_started"]:
        problems.append("%d vCPUs touched memory, %d started" % (len(busy), smp["cpus_started"]))
    if sum(w["accepted_by_cpu"]) != w["accepted_bytes"]:
        problems.append("accepted_by_cpu %r sums to %d, workload accepted %d"
                        % (w["accepted_by_cpu"], sum(w["accepted_by_cpu"]), w["accepted_bytes"]))
    if w["accepted_bytes"] == 0:
        problems.append("nothing was accepted: make SIZE larger than the free memory")
    return problems


def ptouch_every_cpu_accepted(case, events, text):
    """ptouch past the free memory: every started vCPU accepted at least one unit itself,
    so that all of them were accepting at the same time."""
    w = next((w for w in ml.all_of(events, "workload") if w.get("name") == "ptouch"), None)
    smp = ml.first(events, "smp")
    if w is None or smp is None:
        return ["no ptouch workload or smp event"]
    by_cpu = w.get("accepted_by_cpu") or []
    idle = [i for i, b in enumerate(by_cpu[:smp["cpus_started"]]) if not b]
    if len(by_cpu) < smp["cpus_started"] or idle:
        return ["%d of %d started vCPUs accepted nothing (CPU indices %s)"
                % (len(idle), smp["cpus_started"], idle[:16])]
    return []


BOOT_INSTRUCTIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "boot-instructions.json")


def boot_instructions_within_record(case, events, text):
    """The boot vCPU's instructions from efi_main to ready (the observer's `instructions`
    event) at most `grow` over the figure recorded in tests/qemu/boot-instructions.json,
    and not more than `shrink` under it either: a boot that got much cheaper records its
    new figure, with the reason, so that the guard keeps its edge."""
    with open(BOOT_INSTRUCTIONS) as f:
        rec = json.load(f)
    if rec.get("case") != case["name"]:
        return ["%s records case %r, not %r" % (os.path.basename(BOOT_INSTRUCTIONS), rec.get("case"), case["name"])]
    ins = ml.first(events, "instructions")
    if ins is None or ins.get("to_ready") is None:
        return ["no instruction count to ready (is the observer loaded? the phase markers intact?)"]
    n, want = ins["to_ready"], rec["to_ready"]
    if n > want * (1 + rec["grow"]):
        return ["%d instructions to ready, %.1f%% over the recorded %d (at most %.0f%%): find what "
                "grew (phases: %s), or record the new figure with its reason in %s"
                % (n, (n / want - 1) * 100, want, rec["grow"] * 100, ins.get("phases"),
                   os.path.basename(BOOT_INSTRUCTIONS))]
    if n < want * (1 - rec["shrink"]):
        return ["%d instructions to ready, %.1f%% under the recorded %d: record the new figure, "
                "with its reason, in %s" % (n, (1 - n / want) * 100, want, os.path.basename(BOOT_INSTRUCTIONS))]
    return []


# ---------------------------------------------------------------- conformance
VERDICTS = ("pass", "warn", "fail", "n/a", "info")
# snp.optin_present is a SHOULD (docs/firmware.md): a missing or failing opt-in warns,
# unless the final map has type 15 anyway (handed over without being asked: a pass).
SNP_VERDICT = {"called": "pass", "absent": "warn", "failed": "warn", "not-applicable": "n/a"}
RULE_SET = 4
# Which verdicts each level may give (kernel/conformance.c judge(), na(), info()).
LEVEL_VERDICTS = {"MUST": ("pass", "fail", "n/a"), "SHOULD": ("pass", "warn", "n/a"),
                  "INFO": ("info", "n/a")}


def conformance_consistent(case, events, text):
    """The conformance event against the rest of the log: its counts against its checks,
    the map verdicts against the raw descriptors (verbose=1), the ExitBootServices and SNP
    verdicts against the firmware event, the table verdicts against the lists it names;
    then the verdicts the case expects (verdicts = { rule = "fail", ... })."""
    problems = []
    conf = ml.all_of(events, "conformance")
    if len(conf) != 1:
        return ["%d conformance events, expected 1" % len(conf)]
    ev = conf[0]
    checks = ev.get("checks") if isinstance(ev.get("checks"), list) else []
    verdict = {}
    for c in checks:
        if not isinstance(c, dict) or any(not isinstance(c.get(k), str) or not c.get(k)
                                          for k in ("rule", "verdict", "source", "detail")):
            problems.append("malformed check %r" % (c,))
            continue
        if c["verdict"] not in VERDICTS:
            problems.append("%s: unknown verdict %r" % (c["rule"], c["verdict"]))
        if c["rule"] in verdict:
            problems.append("%s reported twice" % c["rule"])
        verdict[c["rule"]] = c["verdict"]
        if c["verdict"] not in LEVEL_VERDICTS.get(c.get("level"), ()):
            problems.append("%s: verdict %r for level %r" % (c["rule"], c["verdict"], c.get("level")))
        if not isinstance(c.get("own"), bool):
            problems.append("%s: no own flag" % c["rule"])
        if (c["verdict"] in ("fail", "warn")) != isinstance(c.get("action"), str):
            problems.append("%s: an action belongs to failed and warned rules only" % c["rule"])
    if ev.get("rule_set") != RULE_SET:
        problems.append("rule_set %r, expected %d" % (ev.get("rule_set"), RULE_SET))
    if len(verdict) < 30:
        problems.append("only %d rules reported" % len(verdict))
    for v, field in (("pass", "pass"), ("warn", "warn"), ("fail", "fail"), ("n/a", "na"),
                     ("info", "info")):
        n = sum(1 for x in verdict.values() if x == v)
        if ev.get(field) != n:
            problems.append("event counts %r %s, checks hold %d" % (ev.get(field), v, n))

    fw = ml.first(events, "firmware") or {}
    descs = ml.all_of(events, "memdesc")
    if not descs:
        problems.append("no memdesc events: the case needs verbose=1")
    starts = [d["start"] for d in descs]
    spans = sorted((d["start"], d["start"] + d["pages"] * PAGE) for d in descs)
    overlap = any(b[0] < a[1] for a, b in zip(spans, spans[1:]))
    want = {
        "map.sorted": "info",
        "map.overlap": "fail" if overlap else "pass",
        # Linux's stub calls ExitBootServices at most twice (docs/firmware.md, ebs.attempts);
        # whether a second call fits its spare descriptors the case's verdicts say.
        "ebs.attempts": {1: "pass", 2: verdict.get("ebs.attempts")}.get(fw.get("ebs_attempts"),
                                                                         "fail"),
        "snp.optin_present": SNP_VERDICT.get(fw.get("snp_protocol"), "?")
        if not any(d["type"] == EFI_UNACCEPTED for d in descs) else
        {"not-applicable": "n/a"}.get(fw.get("snp_protocol"), "pass"),
        "efi.acpi_table": "pass" if "acpi20" in ev.get("efi_tables", []) else "fail",
        "acpi.madt": "pass" if "APIC" in ev.get("acpi_tables", []) else "fail",
    }
    if not any(d["type"] == EFI_UNACCEPTED for d in descs):
        want["unaccepted.platform"] = "n/a"
    for rule, v in want.items():
        if verdict.get(rule) != v:
            problems.append("%s is %r, the rest of the log says %r" % (rule, verdict.get(rule), v))
    m = re.search(r"(\d+) descriptors of (\d+) bytes",
                  next((c.get("detail", "") for c in checks if isinstance(c, dict)
                        and c.get("rule") == "map.desc_size"), ""))
    if not m or (int(m.group(1)), int(m.group(2))) != (fw.get("descriptors"), fw.get("desc_size")):
        problems.append("map.desc_size detail does not match the firmware event (%s vs %s, %s)" %
                        (m.group(0) if m else None, fw.get("descriptors"), fw.get("desc_size")))

    for rule, v in case.get("verdicts", {}).items():
        if verdict.get(rule) != v:
            problems.append("%s is %r, the case expects %r" % (rule, verdict.get(rule), v))
    # The case's memory layout must be what the verdicts were judged on.
    above = case.get("ram_above_4g")
    if above is not None:
        has = any(d["type"] == EFI_CONVENTIONAL and d["start"] + d["pages"] * PAGE > 4 * GIB
                  for d in descs)
        if has != above:
            problems.append("conventional memory above 4 GiB: %s, the case expects %s" % (has, above))
    low = case.get("max_ram_below_4g")
    if low is not None:
        top = max((d["start"] + d["pages"] * PAGE for d in descs
                   if d["type"] == EFI_CONVENTIONAL and d["start"] < 4 * GIB), default=0)
        if top > ml.parse_size(low):
            problems.append("RAM below 4 GiB ends at %#x, above max-ram-below-4g=%s" % (top, low))
    return problems


def background_consistent(case, events, text):
    """Background: after ready the APs accepted everything the boot CPU did not take on
    demand; the background event agrees with the summary and comes after ready."""
    s, bg, ready = ml.first(events, "summary"), ml.first(events, "background"), ml.first(events, "ready")
    if s is None or bg is None or ready is None:
        return ["no summary, background or ready event"]
    problems = []
    if s["unaccepted_bytes"] != 0 or s["edge_unaccepted_bytes"] != 0:
        problems.append("%d bytes still unaccepted (%d in partial units) after the background pass"
                        % (s["unaccepted_bytes"], s["edge_unaccepted_bytes"]))
    if bg["bytes"] != s["accepted_by_path"].get("background"):
        problems.append("background event says %d bytes, summary's background path %r"
                        % (bg["bytes"], s["accepted_by_path"].get("background")))
    if bg["bytes"] == 0:
        problems.append("the APs accepted nothing")
    if bg["done_us"] < ready["us"]:
        problems.append("last unit accepted at %d us, before ready at %d us" % (bg["done_us"], ready["us"]))
    # The boot CPU accepted nothing but its own on-demand units; the APs accepted the
    # background bytes (partial units included), and under ptouch their own on-demand units.
    by_cpu = s.get("accepted_by_cpu") or []
    aps = sum(by_cpu[1:])
    ptouch = any(w.get("name") == "ptouch" for w in ml.all_of(events, "workload"))
    if len(by_cpu) < 2 or aps < bg["bytes"] or (not ptouch and aps != bg["bytes"]):
        problems.append("accepted_by_cpu %r: the APs' part is not the background bytes %d%s"
                        % (by_cpu, bg["bytes"], " or more (ptouch)" if ptouch else ""))
    return problems


def ptouch_during_background(case, events, text):
    """ptouch under background: the APs take their share of the touch while their
    background pass is still running (between its runs), so the workload ends before the
    last unit is accepted; an AP that finished its background share first would not."""
    w = next((w for w in ml.all_of(events, "workload") if w.get("name") == "ptouch"), None)
    bg = ml.first(events, "background")
    if w is None or bg is None:
        return ["no ptouch workload or background event"]
    problems = []
    if w["end_us"] >= bg["done_us"]:
        problems.append("ptouch ended at %d us, after the background pass (%d us): the APs "
                        "waited for it" % (w["end_us"], bg["done_us"]))
    if not all(w["bytes_by_cpu"]):
        problems.append("a vCPU touched nothing: %r" % (w["bytes_by_cpu"],))
    return problems


# How far the guest's clock may be from the host's over a wait:MS step. A TSC frequency
# off by more than this fails; the serial path adds well under a millisecond per line.
WALL_CLOCK_TOLERANCE = 0.05


def wall_clock_matches(case, events, text, res):
    """The guest's wait:MS, as its TSC clock measured it (clock_mark guest_us), against
    the time between the two clock_mark lines' arrival on the host."""
    marks = [(t, ml.parse_events(line)[0]) for t, line in res.line_times
             if line.startswith('{"event":"clock_mark"')]
    marks = [(t, ev[0]) for t, ev in marks if ev]
    start = [t for t, e in marks if e.get("mark") == "start"]
    end = [(t, e) for t, e in marks if e.get("mark") == "end"]
    if len(start) != 1 or len(end) != 1:
        return ["expected one clock_mark start and one end line, got %d and %d" %
                (len(start), len(end))]
    host = end[0][0] - start[0]
    guest = end[0][1].get("guest_us", 0) / 1e6
    if guest <= 0:
        return ["clock_mark end has no guest_us"]
    if abs(host / guest - 1) > WALL_CLOCK_TOLERANCE:
        return ["the guest measured %.3f s, the host %.3f s (ratio %.3f, tolerance %.0f%%): "
                "the TSC frequency is wrong" % (guest, host, host / guest,
                                               WALL_CLOCK_TOLERANCE * 100)]
    return []


wall_clock_matches.wants_result = True


# ---------------------------------------------------------------- acceptance against first write

UNIT = 2 << 20


def _spread_problems(where, sp, count):
    if sp is None:
        return ["%s missing" % where]
    if sp.get("count") != count:
        return ["%s.count %s, expected %d" % (where, sp.get("count"), count)]
    if count and not 0 < sp["p10"] <= sp["p50"] <= sp["p90"]:
        return ["%s: p10 %d, p50 %d, p90 %d not increasing" % (where, sp["p10"], sp["p50"], sp["p90"])]
    # Nearest rank: all but the ceil(count / 10) - 1 smallest samples are at least p10.
    if count and sp["total"] < (count - (count + 9) // 10 + 1) * sp["p10"]:
        return ["%s.total %d is less than its quantiles allow" % (where, sp["total"])]
    return []


def bandwidth_paired(case, events, text):
    """The bandwidth step paired one accept with each first write while whole units were
    left to accept (SIZE / 2 MiB pairs when the case leaves enough), and its series agree
    with the step's own counters: the accepts are the step's, the platform's share of them
    (accept_ns) fits inside their timed total, the first writes add up to first_write_mib_s."""
    w = next((e for e in ml.all_of(events, "workload") if e.get("name") == "bandwidth"), None)
    if w is None:
        return ["no bandwidth workload event"]
    p, fw = w.get("paired") or {}, w.get("first_write_unit_ns")
    nfresh = w.get("first_write_bytes", 0) // UNIT
    problems = _spread_problems("first_write_unit_ns", fw, nfresh)
    pairs = p.get("pairs")
    if pairs is None:
        return problems + ["no paired object"]
    for key in ("accept_ns", "first_write_ns", "ratio_permille"):
        problems += _spread_problems("paired." + key, p.get(key), pairs)
    policy = ml.first(events, "ready")["policy"]
    if policy == "eager" and pairs:
        problems.append("eager left nothing to accept, yet %d pairs" % pairs)
    if policy != "eager" and pairs != nfresh:
        problems.append("%d pairs for %d first writes with units left to accept" % (pairs, nfresh))
    if pairs and w["accepted_bytes"] != pairs * UNIT:
        problems.append("the step accepted %d bytes, its %d pairs %d" % (w["accepted_bytes"], pairs, pairs * UNIT))
    if pairs and not 0 < w["accept_ns"] <= p["accept_ns"]["total"]:
        problems.append("platform accept time %d ns outside the pairs' timed %d ns" % (w["accept_ns"], p["accept_ns"]["total"]))
    if fw and fw["total"] and nfresh * UNIT * 10**9 // fw["total"] >> 20 != w["first_write_mib_s"]:
        problems.append("first_write_unit_ns.total %d ns does not give first_write_mib_s %d" % (fw["total"], w["first_write_mib_s"]))
    # The pair's ratio is its first write's time over its accept's, in thousandths.
    if pairs and not (p["ratio_permille"]["p10"] <= 1000 * p["first_write_ns"]["p90"] // p["accept_ns"]["p10"]):
        problems.append("ratio_permille p10 %d is above what the series allow" % p["ratio_permille"]["p10"])
    return problems


def one_verdict(case, events, text):
    """One panic report, one panic event and one exit event, however many CPUs failed."""
    problems = []
    for name in ("panic", "exit"):
        n = sum(1 for e in events if e.get("event") == name)
        if n != 1:
            problems.append("%d %s events" % (n, name))
    n = len(re.findall(r"^PANIC: ", text, re.M))
    if n != 1:
        problems.append("%d 'PANIC:' reports" % n)
    return problems


# ---------------------------------------------------------------- workload=probe

# The distributions each platform's probe must fill (tools/report.py names them the same).
_PROBE_GENERIC = ["map_unit", "first_write_4k", "first_write_2m", "rewrite_4k", "rewrite_2m", "clock_read"]
_PROBE_PLATFORM = {
    "sim": ["sim_zero_4k", "sim_zero_2m"],
    "tdx": ["tdx_accept_4k", "tdx_vp_info", "tdx_tdvmcall_noop"],
    "snp": ["snp_vmgexit_noop", "snp_psc_1", "snp_psc_16", "snp_psc_253", "snp_psc_2m", "snp_evict_4k"],
}
_PROBE_DIRECT = ["snp_pvalidate_4k"]
_PROBE_SVSM = ["svsm_noop", "svsm_pvalidate_1", "svsm_pvalidate_many"]
# The 2 MiB try of each: taken on a host with 2 MiB pages, refused (then 4 KiB) on kvm.
_PROBE_2M = {"tdx": "tdx_accept_2m", "snp": "snp_pvalidate_2m", "svsm": "svsm_pvalidate_2m"}


def _probe_pages_accepted(kind, calls, emu):
    """Pages the platform accepted, from its own counters: each accepted exactly once
    adds up to the allocator's accepted bytes; one accepted twice would count twice."""
    if kind == "sim":
        return calls.get("sim_accept_4k_pages")
    if kind == "tdx":
        return calls.get("accepted_4k", 0) + 512 * calls.get("accepted_2m", 0) + \
            calls.get("already_accepted_4k_pages", 0)
    if kind == "snp":
        return calls.get("pvalidate_4k", 0) + 512 * (calls.get("pvalidate_2m", 0) - calls.get("pvalidate_size_mismatch", 0))
    # Below VMPL0: the pages the SVSM validated for the guest (each evicted once after its
    # request succeeded; the SVSM's own counts also hold the GHCB page's rescind).
    if emu.get("svsm_errors", 0) != calls.get("svsm_size_mismatch", 0):
        return -1
    return calls.get("evicted_pages")


def probe_consistent(case, events, text):
    """workload=probe: one probe event with every distribution the platform and the host
    the emulator plays (emu_host=, kvm by default) offer, each >= min_samples and ordered;
    the probe accepted nothing twice: what it consumed is whole units, the allocator's
    counts moved by exactly that, and the platform's own counters (every page accepted
    once, none the host called already accepted) add up to the allocator's accepted bytes;
    the model's terms add up to its prediction and its difference to the measured units."""
    p, s, ready = ml.first(events, "probe"), ml.first(events, "summary"), ml.first(events, "ready")
    if p is None or s is None or ready is None:
        return ["no probe, summary or ready event"]
    problems = []
    kind = ready["platform"]
    svsm = kind == "snp" and _option(case, "emu_svsm") == "1"
    want = _PROBE_GENERIC + _PROBE_PLATFORM.get(kind, []) + (_PROBE_SVSM if svsm else _PROBE_DIRECT if kind == "snp" else [])
    if kind in _PROBE_2M:
        big = _PROBE_2M["svsm" if svsm else kind]
        want.append(big if (_option(case, "emu_host") or "kvm") == "huge" else big + "_refused")
    prims = p.get("primitives", {})
    if not p.get("complete"):
        problems.append("the probe says it is not complete")
    for name in want:
        d = prims.get(name)
        if d is None:
            problems.append("no %s distribution (absent: %s)" % (name, p.get("absent", {}).get(name)))
            continue
        if d["count"] < p["min_samples"]:
            problems.append("%s has %d samples, fewer than %d" % (name, d["count"], p["min_samples"]))
        if not d["p10"] <= d["p50"] <= d["p90"] <= d["p99"] <= d["max"]:
            problems.append("%s quantiles out of order: %s" % (name, d))
    for name in set(prims) & set(p.get("absent", {})):
        problems.append("%s is both measured and absent" % name)
    # Nothing twice: whole units only, and every counter moved by exactly what it consumed.
    units = p["probe_units"] + p["measured_units"]
    consumed = p["consumed_bytes"]
    if consumed != units * UNIT:
        problems.append("consumed %d bytes for %d units" % (consumed, units))
    if p["accepted_after"] - p["accepted_before"] != consumed:
        problems.append("accepted bytes moved by %d, the probe consumed %d" % (p["accepted_after"] - p["accepted_before"], consumed))
    if p["unaccepted_before"] - p["unaccepted_after"] != consumed:
        problems.append("unaccepted bytes fell by %d, the probe consumed %d" % (p["unaccepted_before"] - p["unaccepted_after"], consumed))
    if s["accepted_bytes"] != p["accepted_after"] or s["unaccepted_bytes"] != p["unaccepted_after"]:
        problems.append("summary accepted %d / unaccepted %d, the probe ended at %d / %d"
                        % (s["accepted_bytes"], s["unaccepted_bytes"], p["accepted_after"], p["unaccepted_after"]))
    calls, emu = s.get("platform_calls", {}), s.get("emulator", {})
    pages = _probe_pages_accepted("svsm" if svsm else kind, calls, emu)
    if pages is not None and pages != s["accepted_bytes"] // PAGE:
        problems.append("the platform accepted %d pages, the allocator counts %d" % (pages, s["accepted_bytes"] // PAGE))
    if calls.get("already_accepted_4k_pages"):
        problems.append("the host reported %d pages already accepted" % calls["already_accepted_4k_pages"])
    # The model: its terms add up (each rounded down) and so does its verdict.
    m = p.get("model", {})
    terms = sum(t["ns"] for t in m.get("terms", {}).values())
    if not m.get("units") or not 0 <= m["predicted_ns"] - terms < len(m.get("terms", {})) + 1 or terms == 0:
        problems.append("model terms add up to %d ns, predicted_ns %s (%s units)" % (terms, m.get("predicted_ns"), m.get("units")))
    meas = m.get("measured_ns", 0)
    if meas != p["unit"]["mean"] or p["unit"]["count"] < p["min_samples"]:
        problems.append("measured_ns %s is not the mean of %d measured units" % (meas, p["unit"]["count"]))
    if meas and abs(abs(meas - m["predicted_ns"]) * 1000 // meas - m["diff_permille"]) > 1:
        problems.append("diff_permille %d, but measured %d against predicted %d" % (m["diff_permille"], meas, m["predicted_ns"]))
    spread = m.get("probe_unit", {})
    inside = spread.get("p10", 1) <= p["unit"]["p50"] <= spread.get("p90", 0)
    if inside != m.get("within_spread"):
        problems.append("within_spread %s, but the median %d against the probe units' p10-p90 %s-%s"
                        % (m.get("within_spread"), p["unit"]["p50"], spread.get("p10"), spread.get("p90")))
    return problems


_PLANTED_ADDRESS = re.compile(r"^(?:window: one-byte read of|planted: the allocator handed out) "
                              r"([0-9a-f]+)", re.M)


def _planted_address(case, text):
    """Where the guest planted its access: the address it printed, or, where the console
    was still held in memory when the boot stopped (SNP before its GHCB exists), where
    the test case puts it: fake_unaccepted_start + 16 MiB for window_read_early, the
    lowest unaccepted range's start for window_read, which is fake_unaccepted_start
    when the firmware left that address conventional (OVMF does at 512 MiB)."""
    planted = _PLANTED_ADDRESS.findall(text)
    if planted:
        return int(planted[-1], 16)
    fake = _size_option(case, "fake_unaccepted_start")
    test = _option(case, "test")
    if fake is not None and test == "window_read_early":
        return fake + 16 * MIB
    if fake is not None and test == "window_read":
        return fake
    return None


def sanitizer_names_planted_access(case, events, text):
    """The page-state sanitizer stopped the boot at the access the guest planted: the
    same physical address (identity map), in a page the access may not touch (not
    accepted, or private through a shared mapping)."""
    want = _planted_address(case, text)
    stop = ml.first(events, "observer_stop")
    if want is None:
        return ["the guest never printed the planted access's address"]
    if not stop or stop.get("sanitizer") != "page_state":
        return ["no page-state sanitizer stop"]
    problems = []
    if stop.get("address") != want:
        problems.append("the stop names address %s, the guest planted %#x" % (stop.get("address"), want))
    usable = stop.get("state") == "accepted" and stop.get("mapping") != "shared"
    if stop.get("state") in (None, "untracked") or usable:
        problems.append("the stop names a page in state %r, mapped %r" % (stop.get("state"),
                                                                         stop.get("mapping")))
    return problems


def secure_tsc_factor_applied(case, events, text):
    """Secure TSC: the clock is GUEST_TSC_FREQ lowered by the secrets page's TSC_FACTOR
    (SNP firmware ABI: freq - freq * factor / 100000), with the factor the case put there."""
    m = re.search(r"snp: Secure TSC: GUEST_TSC_FREQ (\d+) MHz, TSC_FACTOR (\d+) \(0\.001 %\): (\d+) Hz",
                  text)
    t = ml.first(events, "timing")
    if not m or t is None:
        return ["no Secure TSC line or no timing event"]
    mhz, factor, hz = (int(g) for g in m.groups())
    want = mhz * 1000000 - mhz * 1000000 * factor // 100000
    problems = []
    f = re.search(r"tsc_factor=(\d+)", case.get("args", ""))
    if f and int(f.group(1)) != factor:
        problems.append("TSC_FACTOR %d, the case set %s" % (factor, f.group(1)))
    if hz != want:
        problems.append("%d MHz with TSC_FACTOR %d gave %d Hz, not %d" % (mhz, factor, hz, want))
    if t.get("source") != "snp-secure-tsc" or t.get("tsc_hz") != want:
        problems.append("timing: %s at %s Hz, expected snp-secure-tsc at %d" % (
            t.get("source"), t.get("tsc_hz"), want))
    return problems


def offline_judge_agrees(case, events, text):
    """The offline judge (tools/judge.py: kernel/conformance.c's map rules built for the
    host) on the raw map this log dumped (verbose=1) gives every map rule it can decide
    the same verdict and detail as the guest's own conformance event."""
    import judge  # tools/judge.py
    try:
        c = judge.parse_memaccept(text)
        verdicts = judge.judge(c)
    except judge.CaptureError as e:
        return ["offline judge: %s" % e]
    if not c.guest:
        return ["no conformance event to compare the offline judge with"]
    lines, diffs = judge.compare(c, verdicts)
    decided = sum(1 for ln in lines if not ln.startswith("skip"))
    problems = [ln for ln in lines if ln.startswith("DIFF")]
    if decided < 14:
        problems.append("the offline judge decided only %d map rules" % decided)
    return problems
