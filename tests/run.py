#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# memaccept: run every test (host unit tests, QEMU cases, host tool tests); last line "N passed, N failed".
"""The test runner behind `make test`.

QEMU cases come from tests/qemu/manifest.toml. A case passes only if QEMU ran to the
guest's own verdict (not a timeout, not QEMU exiting 0, which means the guest powered
off without writing one), the guest's exit code is the expected one, an `exit` event is
present and agrees with it, and every expected event and text is found. A case whose
harness breaks (bad manifest entry, missing image) is reported as an ERROR, which counts
as a failure but says that the test, not the code, is broken.
"""
import argparse
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(HERE, "qemu"))

import runqemu  # noqa: E402
import memaccept_log  # noqa: E402

IMAGES = {"prod": "build/memaccept.efi", "test": "build/memaccept-test.efi"}


class Outcome:
    def __init__(self, name, ok, detail="", error=False, seconds=0.0, log=None):
        self.name, self.ok, self.detail, self.error = name, ok, detail, error
        self.seconds, self.log = seconds, log


def match_value(want, got):
    """Expected values: exact, "~regex" for strings, {min=, max=} for numbers, and any
    other table for a nested object (each of its fields must match)."""
    if isinstance(want, dict) and set(want) <= {"min", "max"}:
        if not isinstance(got, (int, float)) or isinstance(got, bool):
            return False
        return want.get("min", got) <= got <= want.get("max", got)
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and match_value(v, got[k]) for k, v in want.items())
    if isinstance(want, str) and want.startswith("~"):
        return isinstance(got, str) and re.search(want[1:], got) is not None
    return want == got


def event_matches(want, ev):
    return all(k in ev and match_value(v, ev[k]) for k, v in want.items())


# Verdicts memaccept keeps to itself (include/exit_codes.h; kernel/panic.c
# kernel_exit_reason): every other one is also reported to the host, which stops the VM.
NOT_REPORTED_TO_HOST = {0, 1, 5}


# Every event field is a lower_case identifier (docs/reference.md, "Events"): a name
# like "f->map_ns_total" is a slip of the C source into the output.
FIELD_NAME = re.compile(r"[a-z][a-z0-9_]*")


def expects_host_stop(case):
    """Does the emulated host end this case's VM (with EXIT_HOST_STOPPED)? On tdx-emu and
    snp-emu, every verdict memaccept reports to the host does; `host_stops` overrides."""
    if "host_stops" in case:
        return case["host_stops"]
    platform = memaccept_log.parse_options(case.get("args", "")).get("platform")
    return platform in ("tdx-emu", "snp-emu") and case.get("exit", 0) not in NOT_REPORTED_TO_HOST


def check_case(case, res, events):
    """Returns a list of problems (empty: the case passed)."""
    problems = []
    if res.timed_out:
        return ["timed out after %.0f s" % res.seconds]
    exits = [e for e in events if e.get("event") == "exit"]
    if len(exits) > 1:
        # One verdict per boot, however many CPUs fail at once.
        problems.append("%d exit events" % len(exits))
    if case.get("poweroff"):
        # The one case that checks the fallback when isa-debug-exit is absent: the guest
        # must power off through EFI ResetSystem (QEMU exits 0) after its exit event.
        if res.qemu_rc != 0:
            problems.append("QEMU exited %s, expected 0 (ResetSystem power-off)" % res.qemu_rc)
        if not exits or exits[-1].get("code") != case.get("exit", 0):
            problems.append("no exit event with code %s" % case.get("exit", 0))
    else:
        if res.qemu_rc == 0:
            return ["QEMU exited 0: the guest never wrote a verdict to isa-debug-exit"]
        if res.guest_code is None:
            return ["QEMU failed (status %s)" % res.qemu_rc]
        if res.guest_code == memaccept_log.EXIT_OBSERVER_STOPPED:
            # No verdict: the observer ended the VM (check_observer judges that). The
            # expected events and texts still count.
            return problems + check_events(case, res, events)
        want_code = case.get("exit", 0)
        stopped = res.guest_code == memaccept_log.EXIT_HOST_STOPPED
        want_stop = expects_host_stop(case)
        if stopped != want_stop:
            problems.append("the emulated host %s the VM, the case expects it %s" %
                            ("stopped" if stopped else "did not stop",
                             "to" if want_stop else "not to"))
        if stopped:
            # The host's exit status is not the guest's: memaccept's verdict is the exit
            # event it printed before it asked the host to stop it.
            if not exits:
                if not case.get("allow_no_exit_event"):
                    problems.append("the host stopped the VM before the guest printed an exit event")
            elif exits[-1].get("code") != want_code:
                problems.append("exit event says %s, expected %d" % (exits[-1].get("code"), want_code))
        else:
            if res.guest_code != want_code:
                problems.append("guest exit code %d, expected %d" % (res.guest_code, want_code))
            if not exits:
                if not case.get("allow_no_exit_event"):
                    problems.append("no exit event")
            elif exits[-1].get("code") != res.guest_code:
                problems.append("exit event says %s, debug-exit said %d" % (exits[-1].get("code"),
                                                                           res.guest_code))
    return problems + check_events(case, res, events)


def check_events(case, res, events):
    """The expected and forbidden events and console text, and the named log checks."""
    problems = []
    for want in case.get("expect", []):
        if not any(event_matches(want, e) for e in events):
            problems.append("no event matching %s" % json.dumps(want))
    for want in case.get("absent", []):
        if any(event_matches(want, e) for e in events):
            problems.append("unexpected event matching %s" % json.dumps(want))
    for pattern in case.get("text", []):
        if not re.search(pattern, res.output, re.M):
            problems.append("console lacks /%s/" % pattern)
    for pattern in case.get("absent_text", []):
        m = re.search(pattern, res.output, re.M)
        if m:
            problems.append("console has /%s/: %r" % (pattern, m.group(0)))
    for name in case.get("checks", []):
        import checks  # tests/qemu/checks.py: named whole-log checks
        fn = getattr(checks, name, None)
        if fn is None:
            raise KeyError("unknown check %r" % name)
        # A check that needs more than the text (line arrival times) says so.
        args = (case, events, res.output) + ((res,) if getattr(fn, "wants_result", False) else ())
        problems += ["%s: %s" % (name, p) for p in fn(*args)]
    return problems


def observer_for(case, opts):
    """Every test-image boot runs under the instruction observer, unless the case says not;
    a production-image boot only when the case asks for it (observer = true: to count its
    instructions, arch/x86/observer.h OBS_KIND_PHASE)."""
    if case.get("image", "test") != "test":
        return opts.observer if case.get("observer") is True else None
    if not case.get("observer", True):
        return None
    return opts.observer


def emulated_platform(case):
    platform = memaccept_log.parse_options(case.get("args", "")).get("platform")
    return platform if platform in ("tdx-emu", "snp-emu") else None


def sanitized(case):
    """Test-image boots whose memory the page-state sanitizer checks: the emulated
    platforms, and sim (platform=sim or fake_unaccepted_start on a normal VM)."""
    opts = memaccept_log.parse_options(case.get("args", ""))
    return case.get("image", "test") == "test" and case.get("observer", True) and (
        emulated_platform(case) is not None or opts.get("platform") == "sim" or
        "fake_unaccepted_start" in opts)


def check_observer(case, res, events, pages=True):
    """An emulated TD or SNP boot must have run under an armed observer, and the observer
    stops it only where the case expects it to."""
    problems = []
    stops = [e for e in events if e.get("event") == "observer_stop"]
    want_stop = case.get("observer_stops", False)
    if stops and not want_stop:
        s = stops[0]
        problems.append("the instruction observer stopped the VM: %s (%s) at %s: %s" % (
            s.get("insn"), s.get("trap"), s.get("function", s.get("rip")), s.get("why")))
    if want_stop and not stops:
        problems.append("the case expects the instruction observer to stop the VM; it did not")
    # A boot that reached `ready` ran under the sanitizer from ExitBootServices on.
    sane = [e for e in events if e.get("event") == "sanitizer"]
    if pages and sanitized(case) and not stops and any(e.get("event") == "ready" for e in events):
        if not sane or not sane[-1].get("on") or not sane[-1].get("ready"):
            problems.append("no page-state sanitizer: every emulated and sim boot runs under it")
        elif not sane[-1].get("pages_tracked") or not sane[-1].get("accesses_checked"):
            problems.append("the page-state sanitizer tracked no page or checked no access")
    if not emulated_platform(case) or not case.get("observer", True) or \
            case.get("image", "test") != "test":
        return problems
    summary = [e for e in events if e.get("event") == "observer"]
    if not stops and not any(e.get("armed") for e in summary):
        problems.append("no armed instruction observer: every %s case runs under it" %
                        emulated_platform(case))
    return problems


def c_bit_alias(case):
    """SNP boots see guest RAM a second time, for a C-bit inside the address field (51,
    as on current parts: arch/x86/emu/cbit_alias.c), wherever that fits: RAM a multiple
    of 2 MiB (tools/runqemu.py c_bit_alias_pieces) and no CPU model of the case's own.
    c_bit_alias in a case decides."""
    if "c_bit_alias" in case:
        return case["c_bit_alias"]
    size = memaccept_log.parse_size(case.get("mem", "1G")) or 0
    return emulated_platform(case) == "snp-emu" and bool(runqemu.c_bit_alias_pieces(size)) and \
        "-cpu" not in case.get("qemu", [])


def run_qemu_case(case, opts):
    name = case["name"]
    start = time.monotonic()
    try:
        efi = os.path.join(ROOT, IMAGES[case.get("image", "test")])
        disk = os.path.join(ROOT, case["disk"]) if "disk" in case else None
        firmware = [case[k] for k in ("ovmf_code", "ovmf_vars") if k in case]
        for f in [efi] + ([disk] if disk else []) + firmware:
            if not os.path.exists(f):
                return Outcome(name, False, "%s missing: run make (firmware: Debian package ovmf)" % f,
                               error=True)
        res = runqemu.run(efi, case.get("args", ""), case.get("mem", "1G"), case.get("smp", 1),
                          case.get("timeout", 120), None, opts.qemu,
                          case.get("ovmf_code", opts.ovmf_code),
                          case.get("ovmf_vars", opts.ovmf_vars), case.get("qemu", []), debug_exit=case.get("debug_exit", True),
                          disk=disk, observer=observer_for(case, opts),
                          observer_args=opts.observer_args,
                          c_bit_alias=c_bit_alias(case))
        events, bad = memaccept_log.parse_events(res.output)
        pages = "pages=off" not in opts.observer_args
        problems = check_case(case, res, events) + check_observer(case, res, events, pages)
        if bad and not case.get("allow_bad_json"):
            problems.append("%d malformed event line(s), first: %s" % (len(bad), bad[0][:120]))
        odd = sorted({"%s.%s" % (e.get("event"), k) for e in events for k in e
                      if not FIELD_NAME.fullmatch(k)})
        if odd:
            problems.append("event field names that are not lower_case identifiers: %s" %
                            ", ".join(odd[:5]))
        log = os.path.join(opts.logdir, name + ".log")
        with open(log, "w") as f:
            f.write("# %s\n%s" % (" ".join(res.command), res.output))
        return Outcome(name, not problems, "; ".join(problems), seconds=time.monotonic() - start,
                       log=log)
    except Exception as e:  # a broken case, not a failure of the code under test
        return Outcome(name, False, "%s: %s" % (type(e).__name__, e), error=True,
                       seconds=time.monotonic() - start)


def run_unit(binary):
    out = []
    try:
        p = subprocess.run([binary], capture_output=True, text=True, timeout=600)
    except Exception as e:
        return [Outcome(os.path.basename(binary), False, str(e), error=True)]
    text = p.stdout + p.stderr
    name = os.path.basename(binary)
    for line in p.stdout.splitlines():
        if line.startswith("ok "):
            out.append(Outcome("%s/%s" % (name, line[3:]), True))
        elif line.startswith("FAIL "):
            out.append(Outcome("%s/%s" % (name, line[5:]), False, "see output above"))
    if p.returncode != 0 and all(o.ok for o in out):
        # Crashed (sanitizer report, abort) before it could say which test failed.
        out.append(Outcome(name, False, "exited %d:\n%s" % (p.returncode, text[-3000:])))
    elif not out:
        # Exited 0 without running a test: nothing passed, so nothing may count as passed.
        out.append(Outcome(name, False, "exited 0 but printed no ok/FAIL lines:\n%s" %
                           text[-3000:]))
    for o in out:
        if not o.ok and "see output" in o.detail:
            o.detail = "\n" + "\n".join(l for l in text.splitlines() if l.startswith("  "))[-3000:]
    return out


# Each libFuzzer target's seeds, max_len and options (tests/fuzz/fuzz.mk says why).
FUZZ_TARGETS = {
    "fuzz_memmap": ("seeds", 4096, []),
    "fuzz_accept": ("seeds-accept", 1024, ["-entropic=0"]),
    "fuzz_vc_insn": ("seeds-vc", 32, []),
    "fuzz_acpi": ("seeds-acpi", 16384, []),
    "fuzz_psc": ("seeds-psc", 512, []),
    "fuzz_ve": ("seeds-ve", 256, []),
    "fuzz_mailbox": ("seeds-mailbox", 1024, []),
}


def run_fuzz_smoke(binaries, seconds=10):
    """A short libFuzzer run of each target from its committed seeds."""
    out = []
    for binary in binaries or []:
        out += fuzz_one(binary, seconds)
    return out


def fuzz_one(binary, seconds):
    import shutil
    import tempfile
    target = os.path.basename(binary)
    name = "fuzz/" + target.replace("fuzz_", "")
    if target not in FUZZ_TARGETS:
        return [Outcome(name, False, "unknown fuzz target %s" % binary, error=True)]
    seeds, max_len, extra = FUZZ_TARGETS[target]
    corpus = tempfile.mkdtemp(prefix="memaccept-fuzz-")
    try:
        for f in os.listdir(os.path.join(HERE, "fuzz", seeds)):
            shutil.copy(os.path.join(HERE, "fuzz", seeds, f), corpus)
        start = time.monotonic()
        p = subprocess.run([binary, "-max_len=%d" % max_len, "-max_total_time=%d" % seconds,
                            "-print_final_stats=1", "-artifact_prefix=%s/" % corpus] + extra + [corpus],
                           capture_output=True, text=True, timeout=seconds + 120)
        execs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", p.stderr)
        detail = "%s executions" % (execs[0] if execs else "?")
        if p.returncode:
            detail = "finding after %s:\n%s" % (detail, p.stderr[-2000:])
        return [Outcome("%s (%d s, %s)" % (name, seconds, execs[0] if execs else "?"),
                        p.returncode == 0, detail, seconds=time.monotonic() - start)]
    except Exception as e:
        return [Outcome(name, False, str(e), error=True)]
    finally:
        shutil.rmtree(corpus, ignore_errors=True)


def run_tool_tests():
    """Python unittest modules in tests/tools/ (the host tools)."""
    tdir = os.path.join(HERE, "tools")
    if not os.path.isdir(tdir):
        return []
    import unittest
    outcomes = []
    suite = unittest.defaultTestLoader.discover(tdir, top_level_dir=tdir)

    class Collect(unittest.TestResult):
        def addSuccess(self, test):
            outcomes.append(Outcome("tools/" + test.id(), True))

        def addFailure(self, test, err):
            outcomes.append(Outcome("tools/" + test.id(), False, self._exc_info_to_string(err, test)))

        def addError(self, test, err):
            outcomes.append(Outcome("tools/" + test.id(), False, self._exc_info_to_string(err, test),
                                    error=True))

        def addSubTest(self, test, subtest, err):
            # A passing subTest adds nothing: its test reports once, through addSuccess.
            if err is None:
                return
            error = not issubclass(err[0], test.failureException)
            outcomes.append(Outcome("tools/" + subtest.id(), False,
                                    self._exc_info_to_string(err, test), error=error))

        def addSkip(self, test, reason):
            # Under make test every dependency is installed (tools/deps.sh test image report
            # fuzz) and the images are built: a skip means something is missing.
            outcomes.append(Outcome("tools/" + test.id(), False, "skipped: %s" % reason))

    suite.run(Collect())
    return outcomes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--qemu", default=runqemu.DEFAULT_QEMU)
    ap.add_argument("--ovmf-code", default=runqemu.DEFAULT_CODE)
    ap.add_argument("--ovmf-vars", default=runqemu.DEFAULT_VARS)
    ap.add_argument("--manifest", default=os.path.join(HERE, "qemu", "manifest.toml"))
    ap.add_argument("--only", help="regex: run only matching QEMU cases (and no unit tests)")
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("MEMACCEPT_JOBS", "2")))
    ap.add_argument("--logdir", default=os.path.join(ROOT, "build", "test-logs"))
    ap.add_argument("--unit", nargs="*", default=[])
    ap.add_argument("--fuzz", nargs="*", default=[], help="libFuzzer binaries for a short smoke run each")
    ap.add_argument("--long", action="store_true",
                    help="run only the cases marked long = true (make test-long), and no unit tests; "
                         "without it those cases are skipped")
    ap.add_argument("--observer", help="the instruction observer plugin for test-image boots")
    ap.add_argument("--observer-args", default="",
                    help="more arguments for it, e.g. pages=off to measure the page-state sanitizer's cost")
    opts = ap.parse_args()
    os.makedirs(opts.logdir, exist_ok=True)

    results = []

    def report(o):
        tag = "PASS" if o.ok else ("ERROR" if o.error else "FAIL")
        extra = "" if o.ok else ": " + o.detail
        secs = " (%.1fs)" % o.seconds if o.seconds else ""
        print("%-5s %s%s%s" % (tag, o.name, secs, extra), flush=True)
        if not o.ok and o.log:
            print("      log: %s" % o.log, flush=True)
        results.append(o)

    if not opts.only and not opts.long:
        for b in opts.unit:
            for o in run_unit(b):
                report(o)
        for o in run_tool_tests():
            report(o)
        for o in run_fuzz_smoke(opts.fuzz):
            report(o)

    with open(opts.manifest, "rb") as f:
        manifest = tomllib.load(f)
    defaults = manifest.get("defaults", {})
    cases = [dict(defaults, **c) for c in manifest.get("case", [])]
    # long = true: minutes each under TCG, past make test's budget; make test-long runs them.
    cases = [c for c in cases if bool(c.get("long", False)) == opts.long]
    if opts.only:
        cases = [c for c in cases if re.search(opts.only, c["name"])]
    names = [c["name"] for c in cases]
    if len(set(names)) != len(names):
        report(Outcome("manifest", False, "duplicate case names", error=True))
    # Longest first, so that two workers finish together.
    cases.sort(key=lambda c: -c.get("timeout", 120))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        futures = [pool.submit(run_qemu_case, c, opts) for c in cases]
        for fut in concurrent.futures.as_completed(futures):
            report(fut.result())

    passed = sum(1 for o in results if o.ok)
    failed = len(results) - passed
    print("%d passed, %d failed" % (passed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
