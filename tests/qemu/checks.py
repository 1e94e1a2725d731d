# SPDX-License-Identifier: MIT
# memaccept: whole-log checks for QEMU cases (named in tests/qemu/manifest.toml as checks = [...]).
"""Each check takes (case, events, console_text) and returns a list of problems; an
empty list means the check passed. They recompute what the guest reports from other
evidence in the same log (the raw firmware map, counters of other events) instead of
comparing against stored numbers.

tests/run.py imports this module with tools/ on sys.path: the event, size and option
readers are tools/memaccept_log.py's."""
import re

import memaccept_log as ml

MIB = 1 << 20
GIB = 1 << 30
UNIT = 2 * MIB
PAGE = 4096
SEGMENT_GAP = GIB   # mm/bitmap.h BITMAP_SEGMENT_GAP

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
    # Segments: a gap of SEGMENT_GAP or more starts a new one.
    segs = []
    for lo, hi in runs:
        if segs and lo - segs[-1][1] < SEGMENT_GAP:
            segs[-1][1] = hi
        else:
            segs.append([lo, hi])
    unaccepted = sum(hi - lo for lo, hi in runs)
    units = sum((hi - lo) // UNIT for lo, hi in segs)
    words = sum(-(-((hi - lo) // UNIT) // 64) for lo, hi in segs)
    want = {
        "unaccepted_bytes": unaccepted,
        "edge_accepted_bytes": edge,
        "units": units,
        "segments": len(segs),
        "base": segs[0][0] if segs else 0,
        "bytes": words * 8 + len(segs) * 24,
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
    units_accepted = (s["accepted_bytes"] - s["accepted_by_path"]["boot_edge"]) // UNIT
    if bm["unaccepted_bytes"] != s["unaccepted_bytes"] + units_accepted * UNIT + lost * UNIT:
        problems.append("bitmap had %d unaccepted bytes; now %d unaccepted + %d accepted + %d lost"
                        % (bm["unaccepted_bytes"], s["unaccepted_bytes"], units_accepted * UNIT, lost * UNIT))
    if s["accepted_by_path"]["boot_edge"] != bm["edge_accepted_bytes"]:
        problems.append("boot_edge %d != bitmap edge_accepted_bytes %d"
                        % (s["accepted_by_path"]["boot_edge"], bm["edge_accepted_bytes"]))
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
    if s["unaccepted_bytes"] != 0:
        problems.append("%d bytes still unaccepted" % s["unaccepted_bytes"])
    if s["accepted_by_path"]["eager"] != bm["unaccepted_bytes"]:
        problems.append("eager accepted %d, the bitmap had %d" % (s["accepted_by_path"]["eager"], bm["unaccepted_bytes"]))
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


def tdx_lazy_one_call_per_unit(case, events, text):
    """Lazy on TDX: each lazily accepted 2 MiB unit took exactly one TDCALL at level 2M."""
    calls, s = _calls(events)
    if s is None:
        return ["no summary"]
    lazy_units = s["accepted_by_path"]["lazy"] // UNIT
    problems = []
    if lazy_units == 0:
        problems.append("nothing accepted lazily")
    if calls.get("accepted_2m") != lazy_units:
        problems.append("accepted_2m = %s, lazily accepted units = %d" % (calls.get("accepted_2m"), lazy_units))
    if calls.get("accepted_1g"):
        problems.append("1 GiB accepts in a lazy run: %d" % calls["accepted_1g"])
    edge_pages = s["accepted_by_path"]["boot_edge"] // PAGE
    if calls.get("accepted_4k") != edge_pages:
        problems.append("accepted_4k = %s, boot edge pages = %d" % (calls.get("accepted_4k"), edge_pages))
    if calls.get("tdcall_accept") != lazy_units + edge_pages:
        problems.append("tdcall_accept = %s, expected %d (one per unit and per edge page)"
                        % (calls.get("tdcall_accept"), lazy_units + edge_pages))
    return problems


def tdx_eager_one_call_per_gib(case, events, text):
    """Eager on TDX: every naturally aligned GiB of unaccepted memory took one 1 GiB TDCALL."""
    calls, s = _calls(events)
    bm = ml.first(events, "bitmap")
    if s is None or bm is None:
        return ["no summary or bitmap"]
    full_gibs = 0
    for base, units in zip(bm["segment_bases"], bm["segment_units"]):
        lo, hi = base, base + units * UNIT
        full_gibs += max(0, hi // GIB - -(-lo // GIB))
    problems = []
    if full_gibs == 0:
        problems.append("no whole GiB to accept: make the guest larger")
    if calls.get("accepted_1g") != full_gibs:
        problems.append("accepted_1g = %s, whole GiBs in the bitmap = %d" % (calls.get("accepted_1g"), full_gibs))
    per_gib = s.get("platform_calls_per_gib", {}).get("tdcall_accept")
    eager_units = s["accepted_by_path"]["eager"] // UNIT
    expected_2m = eager_units - full_gibs * 512
    if calls.get("accepted_2m") != expected_2m:
        problems.append("accepted_2m = %s, units outside whole GiBs = %d" % (calls.get("accepted_2m"), expected_2m))
    if per_gib is None:
        problems.append("summary lacks platform_calls_per_gib.tdcall_accept")
    elif per_gib > 512:
        problems.append("%d TDCALLs per GiB accepted" % per_gib)
    return problems


def tdx_size_mismatch_path(case, events, text):
    """size_mismatch@unit: the 2 MiB accept fails once and the unit is accepted as 512 pages."""
    calls, s = _calls(events)
    if s is None:
        return ["no summary"]
    lazy_units = s["accepted_by_path"]["lazy"] // UNIT
    edge_pages = s["accepted_by_path"]["boot_edge"] // PAGE
    problems = []
    if calls.get("accepted_4k") != edge_pages + 512:
        problems.append("accepted_4k = %s, expected edges %d + 512" % (calls.get("accepted_4k"), edge_pages))
    if calls.get("accepted_2m") != lazy_units - 1:
        problems.append("accepted_2m = %s, expected %d" % (calls.get("accepted_2m"), lazy_units - 1))
    return problems


def _per_gib(events):
    return _summary_obj(events, "platform_calls_per_gib")


def snp_calls_per_gib_lazy(case, events, text):
    """Lazy on SNP: per GiB accepted in units, 512 PSC exits and 512 2 MiB PVALIDATEs."""
    per, s = _per_gib(events)
    if s is None:
        return ["no summary"]
    problems = []
    for k in ("vmgexit_psc", "pvalidate_2m"):
        if per.get(k) != 512:
            problems.append("%s per GiB = %s, expected 512 (one per 2 MiB unit)" % (k, per.get(k)))
    if per.get("pvalidate_4k"):
        problems.append("4 KiB PVALIDATEs outside the boot edges: %s per GiB" % per["pvalidate_4k"])
    return problems


def snp_calls_per_gib_eager(case, events, text):
    """Eager on SNP: at most 3 PSC exits and 512 PVALIDATEs per GiB (253 entries per exit)."""
    per, s = _per_gib(events)
    if s is None:
        return ["no summary"]
    problems = []
    if not 1 <= per.get("vmgexit_psc", 0) <= 3:
        problems.append("vmgexit_psc per GiB = %s, expected at most 3" % per.get("vmgexit_psc"))
    if per.get("pvalidate_2m") != 512:
        problems.append("pvalidate_2m per GiB = %s, expected 512" % per.get("pvalidate_2m"))
    return problems


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
    after_boot = s["accepted_bytes"] - s["accepted_by_path"]["boot_edge"]
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
