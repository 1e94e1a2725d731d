#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# memaccept: read the JSON Lines events out of a serial console log.
"""Events are lines that start with {"event": (docs/reference.md, Events). Everything else on
the console (firmware output, human-readable lines) is ignored. A line that starts like
an event but is not valid JSON (a truncated log, a garbled serial line) is returned in
`bad` so that callers can say so instead of crashing.

parse_events() is the raw reader (tests/run.py). read_boot()/parse_boot(), for the host
tools (tools/report.py, tools/bench.py), decode event lines the same way (_decode) and
make one Boot per log, with the events checked against the field types the kernel
emits, and every problem found written down as a one-line message instead of an
exception. A serial log comes from a machine that may have crashed, from a cable that
may have dropped bytes, or from a file cut short; none of that may stop a report over
the other logs."""
import json
import os
import re

EVENT_PREFIX = '{"event":'
BENCH_PREFIX = '{"bench":'

# Mirrors include/exit_codes.h.
EXIT_CODES = {
    0: "ok", 1: "test failed", 2: "panic", 3: "exception", 4: "unaccepted memory access",
    5: "out of memory", 6: "boot failed", 7: "platform fatal", 8: "host hostile",
    9: "bad configuration", 100: "stopped by the emulated host",
    101: "stopped by the instruction observer",
}
# include/exit_codes.h EXIT_HOST_STOPPED: the emulated host ended the VM; the guest's
# own verdict is the last `exit` event on the console.
EXIT_HOST_STOPPED = 100
# arch/x86/observer.h OBS_EXIT_STOPPED: the instruction observer (tools/observer) stopped
# the VM at an instruction the real platform would trap; its observer_stop event says which.
EXIT_OBSERVER_STOPPED = 101

MIB = 1 << 20
GIB = 1 << 30

_NOT_THERE = object()  # _decode: the line holds no object of that kind


def _decode(line, prefix, key, anywhere=True):
    """The JSON object that starts at prefix in line (at its very start unless anywhere),
    if it is one with a string field key; None if the line starts such an object but it is
    broken (not JSON, not an object, key missing or not a string); _NOT_THERE if the line
    has no prefix."""
    i = line.find(prefix) if anywhere else (0 if line.startswith(prefix) else -1)
    if i < 0:
        return _NOT_THERE
    try:
        obj = json.loads(line[i:])
    except ValueError:
        return None
    return obj if isinstance(obj, dict) and isinstance(obj.get(key), str) else None


def _parse_lines(text, strip, prefix, key, anywhere):
    good, bad = [], []
    for line in text.splitlines():
        line = line.strip(strip)
        obj = _decode(line, prefix, key, anywhere)
        if obj is None:
            bad.append(line)
        elif obj is not _NOT_THERE:
            good.append(obj)
    return good, bad


def parse_events(text):
    """Returns (events, bad_lines)."""
    return _parse_lines(text, "\r\n\x00 ", EVENT_PREFIX, "event", True)


def parse_bench_lines(text):
    """The host benchmarks' results (tests/bench/*.mk print one {"bench": ...} object a
    line, at its start): returns (results, bad_lines), like parse_events."""
    return _parse_lines(text, None, BENCH_PREFIX, "bench", False)


def first(events, name):
    """The first event called name, or None."""
    return next((e for e in events if e.get("event") == name), None)


def all_of(events, name):
    return [e for e in events if e.get("event") == name]


# ---------------------------------------------------------------- field types
# What the kernel emits (kernel/main.c, kernel/memory.c, kernel/workload.c). Only the
# fields the tools read are listed: others are the kernel's to add (docs/reference.md, Events).
INT, STR, BOOL, INTS, INTMAP, LATENCY = "integer", "string", "boolean", "list of integers", \
    "object of integers", "latency object"
PAIRED = "paired-samples object"
OBJ = "object"    # any object: its fields are the reader's to check (the probe's distributions)


def _is_int(v):
    # JSON true/false arrive as bool, a subclass of int: not a number here.
    return isinstance(v, int) and not isinstance(v, bool)


_LATENCY_FIELDS = {"count": INT, "total_ns": INT, "p50_ns": INT, "p90_ns": INT, "p99_ns": INT,
                   "p999_ns": INT, "max_ns": INT, "exact": BOOL, "quantiles_permille": INTS,
                   "quantiles_ns": INTS}

# The bandwidth step's accepts paired with first writes (kernel/workload.c paired_first_writes):
# each series is {"count", "p10", "p50", "p90", "total"}.
_PAIRED_FIELDS = {"pairs": INT, "accept_ns": INTMAP, "first_write_ns": INTMAP,
                  "ratio_permille": INTMAP}

# event -> (required fields, optional fields); "*" in required: every field has that type.
SCHEMA = {
    "timing": ({"tsc_hz": INT},
               {"source": STR, "error_ppm": INT, "declared_source": STR, "declared_hz": INT,
                "pm_timer": STR, "pm_timer_port": INT, "pm_timer_bits": INT,
                "pm_timer_hz": INT, "pm_timer_error_ppm": INT, "pm_timer_span_us": INT,
                "disagreement_ppm": INT, "disagrees": BOOL, "provisional_hz": INT,
                "excluded_us": INT, "problem": STR,
                # older logs: Stall() calibration inside the window
                "calibration_spread_ppm": INT, "tsc_hz_cpuid": INT, "cpuid_difference_ppm": INT}),
    "firmware": ({"descriptors": INT, "conventional_bytes": INT, "unaccepted_bytes": INT,
                  "unaccepted_ranges": INT, "anomalies": INT, "snp_protocol": STR},
                 {"fake_unaccepted_bytes": INT, "suspect_bytes": INT, "ebs_attempts": INT,
                  "bytes_by_type": INTMAP, "anomaly_counts": INTMAP}),
    "bitmap": ({"base": INT, "units": INT, "bytes": INT, "unaccepted_bytes": INT,
                "edge_accepted_bytes": INT},
               {"segments": INT, "segment_bases": INTS, "segment_units": INTS,
                "edge_bytes": INT, "edge_ranges": INT}),
    "boot_phases": ({"*": INT}, {}),
    "boot_steps": ({"*": INT}, {}),
    "ready": ({"us": INT, "platform": STR, "policy": STR}, {}),
    "workload": ({"name": STR, "result": STR, "us": INT},
                 {"free_before": INT, "free_after": INT, "accepted_bytes": INT,
                  "accept_calls": INT, "accept_ns": INT, "accept_mib_s": INT,
                  "meta_bytes_added": INT, "kernel_pages_added": INT, "alloc_all": LATENCY,
                  "alloc_fast": LATENCY, "alloc_accepting": LATENCY, "free": LATENCY,
                  "bytes": INT, "done_bytes": INT, "write_mib_s": INT, "first_pass_mib_s": INT,
                  "first_write_bytes": INT, "first_write_mib_s": INT,
                  "first_write_unit_ns": INTMAP, "paired": PAIRED,
                  "first_write_skipped_bytes": INT,
                  "passes": INT, "ops": INT, "seed": INT, "alloc_failures": INT,
                  "peak_live_bytes": INT, "cpus": INT, "bytes_by_cpu": INTS,
                  "us_by_cpu": INTS, "accepted_by_cpu": INTS}),
    "smp": ({"cpus_reported": INT, "cpus_started": INT, "method": STR, "us": INT},
            {"cpus_limit": INT, "madt": STR, "apic_ids": INTS, "not_started": INTS}),
    "accept_series": ({"t_us": INTS, "accepted_bytes": INTS}, {}),
    "summary": ({"unaccepted_bytes": INT, "accepted_bytes": INT, "accept_calls": INT,
                 "accept_ns_total": INT, "accept_ns_p50": INT, "accept_ns_p99": INT,
                 "accept_ns_max": INT, "platform_calls": INTMAP},
                {"free_bytes": INT, "managed_bytes": INT, "initial_free_bytes": INT,
                 "meta_bytes": INT, "accept_failures": INT, "accept_ns_min": INT,
                 "accept_mib_s": INT, "accept_percentiles_exact": BOOL, "map_ns_total": INT,
                 "page_table_pages": INT, "allocs": INT, "frees": INT, "alloc_failures": INT,
                 "accepted_by_path": INTMAP, "accept_ns_log2_histogram": INTS,
                 "accepted_by_cpu": INTS, "edge_unaccepted_bytes": INT,
                 "edge_accepted_bytes": INT}),
    "exit": ({"code": INT}, {}),
    # workload=probe (kernel/probe.c): report.py --probe and checks.probe_consistent read these.
    "probe": ({"platform": STR, "complete": BOOL},
              {"host_pages": STR, "min_samples": INT, "budget_bytes": INT, "probe_units": INT,
               "measured_units": INT, "consumed_bytes": INT, "accepted_before": INT,
               "accepted_after": INT, "unaccepted_before": INT, "unaccepted_after": INT,
               "primitives": OBJ, "absent": OBJ, "unit": OBJ, "model": OBJ, "why": STR}),
    "exception": ({}, {"vector": INT, "name": STR, "why": STR, "error_code": INT, "rip": INT}),
    "panic": ({}, {"msg": STR, "code": INT}),
    "fatal": ({}, {"msg": STR, "code": INT}),
}
# Events a boot has at most one of; a second one means two boots in one log.
SINGLE = ("timing", "firmware", "bitmap", "boot_phases", "boot_steps", "ready", "accept_series",
          "summary", "exit")


def _type_ok(kind, v):
    if kind == INT:
        return _is_int(v)
    if kind == STR:
        return isinstance(v, str)
    if kind == BOOL:
        return isinstance(v, bool)
    if kind == INTS:
        return isinstance(v, list) and all(_is_int(x) for x in v)
    if kind == INTMAP:
        return isinstance(v, dict) and all(_is_int(x) for x in v.values())
    return isinstance(v, dict)  # LATENCY, PAIRED: their fields are checked one by one


def _describe(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number (%r)" % v if isinstance(v, float) else "an integer"
    if isinstance(v, str):
        return "a string (%s)" % json.dumps(v[:20])
    if isinstance(v, list):
        return "a list with a non-integer in it" if v else "a list"
    return "an object"


def _check_fields(ev, fields, where, out, required):
    """Drops fields of the wrong type from ev (so later code sees them as missing, never
    as a wrong type) and notes each one; notes required fields that are absent."""
    if "*" in fields:
        kind = fields["*"]
        for k in [k for k in ev if k != "event"]:
            if not _type_ok(kind, ev[k]):
                out.append("%s.%s is %s, expected an %s" % (where, k, _describe(ev[k]), kind))
                del ev[k]
        return
    for k, kind in fields.items():
        if k not in ev:
            if required:
                out.append("%s lacks %s" % (where, k))
            continue
        if not _type_ok(kind, ev[k]):
            out.append("%s.%s is %s, expected %s %s" % (where, k, _describe(ev[k]),
                                                        "an" if kind[0] in "aeio" else "a", kind))
            del ev[k]
        elif kind == LATENCY:
            lat = dict(ev[k])
            _check_fields(lat, _LATENCY_FIELDS, "%s.%s" % (where, k), out, False)
            q, n = lat.get("quantiles_permille"), lat.get("quantiles_ns")
            if q is not None and n is not None and len(q) != len(n):
                out.append("%s.%s: %d quantiles but %d values" % (where, k, len(q), len(n)))
                del lat["quantiles_permille"], lat["quantiles_ns"]
            ev[k] = lat
        elif kind == PAIRED:
            sub = dict(ev[k])
            _check_fields(sub, _PAIRED_FIELDS, "%s.%s" % (where, k), out, True)
            ev[k] = sub


def check_event(ev):
    """A checked copy of ev and the list of problems found (empty: as the kernel emits it)."""
    ev = dict(ev)
    problems = []
    name = ev.get("event")
    if name in SCHEMA:
        req, opt = SCHEMA[name]
        _check_fields(ev, req, name, problems, True)
        _check_fields(ev, opt, name, problems, False)
    if name == "accept_series":
        t, v = ev.get("t_us"), ev.get("accepted_bytes")
        if t is not None and v is not None and len(t) != len(v):
            problems.append("accept_series has %d times but %d values" % (len(t), len(v)))
            ev.pop("t_us"), ev.pop("accepted_bytes")
    return ev, problems


# ---------------------------------------------------------------- sizes and options
_SIZE_RE = re.compile(r"(\d+)([KMGT]?)")
_SHIFT = {"": 0, "K": 10, "M": 20, "G": 30, "T": 40}


def parse_size(text):
    """'4G' -> 4 << 30; None if text is not a size."""
    m = _SIZE_RE.fullmatch(str(text).strip().upper())
    return int(m.group(1)) << _SHIFT[m.group(2)] if m else None


def format_size(n):
    """4 << 30 -> '4G'; 1536 << 20 -> '1536M'; the largest unit that divides n."""
    if n is None:
        return "?"
    for unit, shift in (("T", 40), ("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d%s" % (n >> shift, unit)
    return str(n)


# EFI memory types that are guest RAM (UEFI 2.9 section 7.2, as named by mm/memmap.c
# efi_type_name). Reserved is left out: on q35 it is mostly the PCIe ECAM window.
RAM_TYPES = ("loader_code", "loader_data", "bs_code", "bs_data", "rt_code", "rt_data",
             "conventional", "unusable", "acpi_reclaim", "acpi_nvs", "persistent", "unaccepted")
# The map lacks the legacy VGA hole and a few reserved pages, so the sum falls just
# short of the configured size: round up to this.
RAM_ROUND = 64 * MIB


def ram_from_firmware(firmware):
    """Guest RAM estimated from the firmware event's bytes_by_type, or None."""
    by_type = (firmware or {}).get("bytes_by_type")
    if not isinstance(by_type, dict):
        return None
    total = sum(v for k, v in by_type.items() if k in RAM_TYPES and _is_int(v) and v > 0)
    if total <= 0:
        return None
    return (total + RAM_ROUND - 1) // RAM_ROUND * RAM_ROUND


_CMDLINE_RE = re.compile(r"boot: command line \(([^)]*)\): ?(.*)$")


def parse_options(cmdline):
    """'a=1 b=2' -> {'a': '1', 'b': '2'}; tokens without '=' are left out (as the kernel
    reports and ignores them)."""
    opts = {}
    for tok in cmdline.split():
        k, eq, v = tok.partition("=")
        if eq and k:
            opts[k] = v
    return opts


def sidecar_path(path):
    """Where tools/bench.py writes what it knows about a log: NAME.meta.json beside NAME.log."""
    base = path[:-4] if path.endswith(".log") else path
    return base + ".meta.json"


# ---------------------------------------------------------------- one boot
class Boot:
    """What one console log says about one boot. Fields are None when the log lacks them;
    messages holds one line per problem found; fatal says why nothing can be used."""

    def __init__(self, path):
        self.path = path
        self.fatal = None          # why the log is unusable (None: usable)
        self.messages = []         # one-line problems that do not make it unusable
        self.cmdline = None
        self.cmdline_source = None
        self.options = {}
        self.meta = {}             # the bench's sidecar, if any
        self.events = []           # checked events, in order
        self.bad = []              # (line number, text) of lines that were not valid events
        self.timing = self.firmware = self.bitmap = self.boot_phases = self.boot_steps = None
        self.ready = self.accept_series = self.summary = None
        self.workloads = []
        self.exit_code = None
        self.failure = None        # the exception, panic or fatal event, if any
        self.ends_mid_event = False

    # ---- derived
    @property
    def truncated(self):
        """No exit event: the boot did not finish or the log was cut."""
        return self.exit_code is None

    @property
    def failed(self):
        return (self.exit_code is not None and self.exit_code != 0) or self.failure is not None

    @property
    def policy(self):
        return (self.ready or {}).get("policy") or self.options.get("accept_memory")

    @property
    def platform(self):
        return (self.ready or {}).get("platform")

    @property
    def ready_us(self):
        return (self.ready or {}).get("us")

    @property
    def ram_bytes(self):
        return self.ram()[0]

    @property
    def backed(self):
        """The host backed all guest RAM before the boot (the bench's sidecar says
        prealloc): first writes then cost no host page faults."""
        return self.meta.get("prealloc") is True

    def ram(self):
        """(bytes, where it came from): the bench's sidecar, else the firmware map."""
        m = self.meta.get("mem_bytes")
        if _is_int(m) and m > 0:
            return m, "sidecar"
        m = parse_size(self.meta.get("mem", "")) if isinstance(self.meta.get("mem"), str) else None
        if m:
            return m, "sidecar"
        m = ram_from_firmware(self.firmware)
        return (m, "firmware") if m else (None, None)

    def exit_text(self):
        if self.exit_code is None:
            return "no exit"
        return "%d (%s)" % (self.exit_code, EXIT_CODES.get(self.exit_code, "unknown"))

    def failure_text(self):
        """One line: how the boot failed."""
        parts = []
        if self.exit_code is not None and self.exit_code != 0:
            parts.append("exit code %s" % self.exit_text())
        f = self.failure
        if f:
            what = f.get("name") or f.get("msg") or ""
            parts.append("%s %s" % (f["event"], json.dumps(str(what)[:80])) if what else f["event"])
        return "; ".join(parts) or "no failure"


def _snippet(line, n=60):
    s = "".join(c if c.isprintable() else "?" for c in line)
    return json.dumps(s[:n] + ("..." if len(s) > n else ""))


def parse_boot(text, path="<log>"):
    """A Boot from the text of one console log. Never raises on bad content."""
    b = Boot(path)
    notes = []
    lines = text.replace("\r", "").split("\n")
    last_nonempty = max((i for i, l in enumerate(lines) if l.strip("\x00 ")), default=-1)
    counts = {}
    for i, raw in enumerate(lines):
        line = raw.strip("\x00 ")
        if b.cmdline is None:
            m = _CMDLINE_RE.search(line)
            if m:
                b.cmdline_source, b.cmdline = m.group(1), m.group(2).strip()
                b.options = parse_options(b.cmdline)
        ev = _decode(line, EVENT_PREFIX, "event")
        if ev is _NOT_THERE:
            continue
        if ev is None:
            b.bad.append((i + 1, line))
            if i == last_nonempty:
                b.ends_mid_event = True
            continue
        ev, problems = check_event(ev)
        notes += ["line %d: %s" % (i + 1, p) for p in problems]
        name = ev["event"]
        counts[name] = counts.get(name, 0) + 1
        if name in SINGLE and counts[name] > 1:
            continue  # reported below; the first boot's values stand
        b.events.append(ev)
        if name == "workload":
            if "name" in ev:
                b.workloads.append(ev)
        elif name == "exit":
            b.exit_code = ev.get("code")
        elif name in ("exception", "panic", "fatal"):
            b.failure = b.failure or ev
        elif name in SINGLE:
            setattr(b, name, ev)

    if b.ready is not None and b.ready.get("us") is None and b.ready.get("policy") is None:
        b.ready = None  # nothing in it survived the checks

    # The messages, most telling first, each one line.
    if not b.events:
        if b.bad:
            b.fatal = "%d event line(s), none of them valid JSON (first at line %d: %s)" % (
                len(b.bad), b.bad[0][0], _snippet(b.bad[0][1]))
        elif "memaccept" in text:
            b.fatal = "no events: the boot stopped before its first event"
        else:
            b.fatal = "no memaccept events: not a memaccept console log"
        return b
    multi = sorted(n for n in SINGLE if counts.get(n, 0) > 1)
    if multi:
        b.messages.append("more than one %s event (two boots in one log?): using the first" %
                          "/".join(multi))
    garbled = [x for x in b.bad if not (b.ends_mid_event and x is b.bad[-1])]
    if garbled:
        b.messages.append("%d garbled event line(s) skipped (first at line %d: %s)" % (
            len(garbled), garbled[0][0], _snippet(garbled[0][1])))
    if b.ends_mid_event:
        b.messages.append("log ends in the middle of an event line (line %d): truncated" %
                          b.bad[-1][0])
    if b.exit_code is None:
        b.messages.append("no exit event: the boot did not finish or the log was cut; using "
                          "the %d events before the end" % len(b.events))
    if len(notes) > 4:
        notes = notes[:3] + ["%d more field problems" % (len(notes) - 3)]
    b.messages += ["%s (ignored)" % n for n in notes]
    if b.ready is None:
        b.fatal = "no usable ready event: the boot never got its allocator up" if \
            counts.get("ready", 0) == 0 else "the ready event has neither us nor policy"
    return b


def read_boot(path):
    """A Boot from a log file; problems reading it end up in .fatal, never as exceptions."""
    b = Boot(path)
    try:
        if os.path.isdir(path):
            b.fatal = "is a directory, not a log"
            return b
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        b.fatal = "no such file"
        return b
    except OSError as e:
        b.fatal = "cannot read: %s" % (e.strerror or e)
        return b
    if not data.strip(b"\x00 \r\n\t"):
        b.fatal = "empty file" if not data else "holds only whitespace"
        return b
    # Serial noise is not UTF-8: replace it, the JSON checks catch what it broke.
    b2 = parse_boot(data.decode("utf-8", "replace"), path)
    meta = sidecar_path(path)
    if os.path.exists(meta):
        try:
            with open(meta) as f:
                m = json.load(f)
            if not isinstance(m, dict):
                raise ValueError("not a JSON object")
            b2.meta = m
        except (OSError, ValueError) as e:
            b2.messages.append("sidecar %s unreadable (%s): ignored" % (meta, e))
    return b2
