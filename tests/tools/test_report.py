# SPDX-License-Identifier: MIT
# memaccept: tests of the log parser (tools/memaccept_log.py), tools/report.py and the bench matrix.
"""The fixtures in logs/ are real consoles of the production and test images under
QEMU + OVMF (OVMF's own lines trimmed), plus damaged copies of them:

  lazy-4g, eager-4g, ahead-4g   4G guest, fake_unaccepted_start=1G,
                                workload=bandwidth:128M,touch:auto (ahead: accept_ahead=64M)
  lazy-1g-none, lazy-256g-none  workload=none: time to ready only
  failed-exception              test image, test=ud: #UD, exit code 3
  truncated                     lazy-4g cut in the middle of the touch workload event
  garbled                       lazy-4g with serial noise: a line of random bytes, a half
                                range line, bytes lost inside boot_phases, invalid UTF-8
                                inside bitmap, a broken summary line, noise before timing
  empty                         nothing at all
  lazy-1g-paired, eager-4g-paired  1G lazy and 4G eager, fake_unaccepted_start=512M,
                                workload=bandwidth:128M,touch:auto: the bandwidth step with
                                its accepts paired with first writes (lazy: 64 pairs; eager:
                                none, nothing left to accept); first-write units taken from
                                any free memory (the kernel before it skipped boot-services
                                units)
  eager-1g-paired               the same at 1G eager with today's kernel: the eager runs are
                                32 MiB, so the last 148 MiB are five of them;
                                first_write_skipped_bytes

Expected numbers are read off the fixtures by hand, not recomputed with the code under test.
"""
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import statistics
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import memaccept_log as ml  # noqa: E402
import report  # noqa: E402

LOGS = os.path.join(HERE, "logs")
REPORT = os.path.join(ROOT, "tools", "report.py")
GOOD = ["lazy-4g", "eager-4g", "ahead-4g", "lazy-1g-none", "lazy-256g-none"]
GIB = 1 << 30
MIB = 1 << 20


def log(name):
    return os.path.join(LOGS, name + ".log")


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


def run_report(*args):
    """tools/report.py as a user runs it: (exit status, stdout, stderr)."""
    p = subprocess.run([sys.executable, REPORT] + list(args), capture_output=True, text=True,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr


class ParserNumbers(unittest.TestCase):
    def test_parse_events_keeps_its_contract(self):
        with open(log("lazy-4g")) as f:
            events, bad = ml.parse_events(f.read())
        self.assertEqual(bad, [])
        self.assertEqual([e["event"] for e in events][:3], ["timing", "firmware", "range"])
        self.assertEqual(events[-1], {"event": "exit", "code": 0})
        with open(log("garbled"), encoding="utf-8", errors="replace") as f:
            _, bad = ml.parse_events(f.read())
        self.assertEqual(len(bad), 4)

    def test_lazy_4g(self):
        b = ml.read_boot(log("lazy-4g"))
        self.assertIsNone(b.fatal)
        self.assertEqual(b.messages, [])
        self.assertEqual(b.cmdline, "fake_unaccepted_start=1G workload=bandwidth:128M,touch:auto")
        self.assertEqual(b.cmdline_source, "\\memaccept.cfg")
        self.assertEqual(b.options, {"fake_unaccepted_start": "1G",
                                     "workload": "bandwidth:128M,touch:auto"})
        self.assertEqual((b.policy, b.platform, b.ready_us), ("lazy", "sim", 38423))
        self.assertEqual(b.ram(), (4 * GIB, "firmware"))
        self.assertEqual(b.boot_phases["efi_main_to_ebs"], 19351)
        self.assertEqual(b.boot_phases["allocator"], 11200)
        self.assertEqual(b.timing["tsc_hz"], 4176338400)
        self.assertEqual(b.firmware["unaccepted_ranges"], 6)
        self.assertEqual(b.bitmap["units"], 1517)
        self.assertEqual(b.summary["accepted_bytes"], 433553408)
        self.assertEqual(b.summary["accept_calls"], 211)
        self.assertEqual([w["name"] for w in b.workloads], ["bandwidth", "touch"])
        touch = b.workloads[1]
        self.assertEqual(touch["alloc_accepting"]["count"], 205)
        self.assertEqual(touch["alloc_all"]["count"], 373898)
        self.assertEqual(len(touch["alloc_all"]["quantiles_ns"]), 14)
        self.assertEqual(b.workloads[0]["write_mib_s"], 3451)
        self.assertEqual(len(b.accept_series["t_us"]), len(b.accept_series["accepted_bytes"]))
        self.assertEqual(b.exit_code, 0)
        self.assertFalse(b.failed or b.truncated)

    def test_ram_from_firmware_map(self):
        self.assertEqual(ml.read_boot(log("lazy-1g-none")).ram_bytes, 1 * GIB)
        self.assertEqual(ml.read_boot(log("lazy-256g-none")).ram_bytes, 256 * GIB)
        self.assertEqual(ml.read_boot(log("eager-4g")).ram_bytes, 4 * GIB)

    def test_ram_from_sidecar(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        path = os.path.join(d, "x.log")
        shutil.copy(log("lazy-4g"), path)
        with open(ml.sidecar_path(path), "w") as f:
            json.dump({"mem": "8G"}, f)
        self.assertEqual(ml.read_boot(path).ram(), (8 * GIB, "sidecar"))
        with open(ml.sidecar_path(path), "w") as f:
            f.write("{not json")
        b = ml.read_boot(path)
        self.assertEqual(b.ram(), (4 * GIB, "firmware"))
        self.assertTrue(any("sidecar" in m for m in b.messages), b.messages)

    def test_bench_lines(self):
        res, bad = ml.parse_bench_lines('make: noise\n{"bench":"a","ns":5}\n  {"bench":"b"}\n'
                                        '{"bench":"c",\n{"event":"ready"}\n{"bench":[1]}\n')
        self.assertEqual(res, [{"bench": "a", "ns": 5}, {"bench": "b"}])
        self.assertEqual(len(bad), 2)

    def test_sizes(self):
        self.assertEqual(ml.parse_size("256G"), 256 * GIB)
        self.assertEqual(ml.parse_size("64m"), 64 * MIB)
        self.assertIsNone(ml.parse_size("4Q"))
        self.assertEqual(ml.format_size(4 * GIB), "4G")
        self.assertEqual(ml.format_size(1536 * MIB), "1536M")


class ParserBadInput(unittest.TestCase):
    def test_truncated(self):
        b = ml.read_boot(log("truncated"))
        self.assertIsNone(b.fatal)
        self.assertTrue(b.truncated and b.ends_mid_event)
        self.assertFalse(b.failed)
        self.assertEqual(b.ready_us, 38423)
        self.assertEqual([w["name"] for w in b.workloads], ["bandwidth"])
        self.assertIsNone(b.summary)
        self.assertTrue(any("middle of an event line" in m for m in b.messages), b.messages)
        self.assertTrue(any("no exit event" in m for m in b.messages), b.messages)

    def test_garbled(self):
        b = ml.read_boot(log("garbled"))
        self.assertIsNone(b.fatal)
        self.assertEqual(len(b.bad), 4)
        self.assertFalse(b.ends_mid_event)
        self.assertEqual(len(b.messages), 1, b.messages)
        self.assertIn("4 garbled event line(s)", b.messages[0])
        self.assertIsNone(b.boot_phases)   # bytes lost inside it
        self.assertIsNone(b.bitmap)        # invalid UTF-8 inside a number
        self.assertEqual(b.timing["tsc_hz"], 4176338400)  # noise before it, still readable
        self.assertEqual(b.ready_us, 38423)
        # The broken extra summary line is dropped; the real one stands.
        self.assertEqual(b.summary["accepted_bytes"], 433553408)

    def test_empty(self):
        self.assertEqual(ml.read_boot(log("empty")).fatal, "empty file")

    def test_missing_and_directory(self):
        self.assertEqual(ml.read_boot(os.path.join(LOGS, "no-such.log")).fatal, "no such file")
        self.assertIn("directory", ml.read_boot(LOGS).fatal)

    def test_not_a_memaccept_log(self):
        b = ml.parse_boot("BdsDxe: loading Boot0001\nShell> \n\x00\xff")
        self.assertIn("no memaccept events", b.fatal)

    def test_failed_boot(self):
        b = ml.read_boot(log("failed-exception"))
        self.assertIsNone(b.fatal)
        self.assertTrue(b.failed)
        self.assertEqual(b.exit_code, 3)
        self.assertEqual(b.failure["vector"], 6)
        self.assertIn("exit code 3 (exception)", b.failure_text())
        self.assertIn("#UD", b.failure_text())

    def test_wrong_and_missing_fields(self):
        with open(log("lazy-4g")) as f:
            lines = f.read().split("\n")
        out = []
        for line in lines:
            if line.startswith('{"event":'):
                ev = json.loads(line)
                if ev["event"] == "ready":
                    ev["us"] = "fast"
                elif ev["event"] == "summary":
                    ev["accepted_bytes"] = 1.5
                    del ev["accept_calls"]
                elif ev["event"] == "workload" and ev["name"] == "touch":
                    ev["alloc_all"]["quantiles_ns"].pop()
                    ev["alloc_fast"]["p50_ns"] = True
                    ev["us"] = None
                line = json.dumps(ev)
            out.append(line)
        b = ml.parse_boot("\n".join(out), "edited.log")
        self.assertIsNone(b.fatal)
        self.assertIsNone(b.ready_us)
        self.assertEqual(b.policy, "lazy")
        self.assertNotIn("accepted_bytes", b.summary)
        touch = b.workloads[1]
        self.assertNotIn("quantiles_ns", touch["alloc_all"])
        self.assertNotIn("p50_ns", touch["alloc_fast"])
        self.assertNotIn("us", touch)
        text = "\n".join(b.messages)
        self.assertIn("ready.us is a string", text)
        self.assertIn("more field problems", text)  # six problems, summarised after three
        self.assertTrue(all("\n" not in m for m in b.messages))
        # ... and the report still renders, with "-" where the values were.
        run = report.Run(b)
        report.assign_labels([run])
        rendered = report.render_text(report.tables([run]))
        self.assertIn("lazy 4G", rendered)


class Report(unittest.TestCase):
    def test_table_from_good_logs(self):
        runs, msgs = report.load_runs([log(n) for n in GOOD])
        self.assertEqual(msgs, [])
        self.assertEqual([r.label for r in runs],
                         ["lazy 1G", "lazy 4G", "ahead 4G", "eager 4G", "lazy 256G"])
        t = report.tables(runs)[0]
        rows = {r[0]: dict(zip(t.headers, r)) for r in t.rows}
        self.assertEqual(rows["lazy 4G"]["ready ms"], "38.4")
        self.assertEqual(rows["eager 4G"]["ready ms"], "7660.5")
        self.assertEqual(rows["lazy 4G"]["rewrite MiB/s"], "3451")
        # Logs from before the first-write measurement: no limit to compare with.
        self.assertEqual(rows["lazy 4G"]["first write MiB/s"], "-")
        self.assertEqual(rows["lazy 4G"]["accept / first write, totals"], "-")
        self.assertEqual(rows["lazy 4G"]["accept / first write, same time"], "-")
        self.assertEqual(rows["lazy 4G"]["accept MiB/s"], "183")
        self.assertEqual(rows["lazy 1G"]["accept MiB/s"], "-")  # nothing accepted
        self.assertEqual(rows["lazy 256G"]["rewrite MiB/s"], "-")  # no bandwidth step
        # Eager accepts everything before ready: 3182919680 bytes.
        self.assertEqual(rows["eager 4G"]["accepted at ready MiB"], "3035")
        # Lazy accepts only the partial units at the edges before ready: 3637248 bytes.
        self.assertEqual(rows["lazy 4G"]["accepted at ready MiB"], "3")
        self.assertEqual(rows["lazy 4G"]["touch ms"], "6037.3")
        lat = report.tables(runs)[1]
        touch = [dict(zip(lat.headers, r)) for r in lat.rows if r[:2] == ["lazy 4G", "touch"]][0]
        self.assertEqual(touch["acc n"], "205")
        self.assertEqual(touch["all n"], "373898")
        self.assertEqual(touch["all p50"], "0.20")

    def test_host_skewable_clock_marked(self):
        # A timing event that says the host can skew the clock marks the run's clock.
        with tempfile.TemporaryDirectory() as d:
            for name, skew in (("skew", True), ("safe", False)):
                text = open(log("lazy-4g")).read().replace(
                    '{"event":"timing","tsc_hz":4176338400,',
                    '{"event":"timing","tsc_hz":4176338400,"source":"acpi-pm-timer",'
                    '"host_skewable":%s,' % ("true" if skew else "false"))
                with open(os.path.join(d, name + ".log"), "w") as f:
                    f.write(text)
            runs, _ = report.load_runs([n + "=" + os.path.join(d, n + ".log") for n in ("skew", "safe")])
            t = report.tables(runs)[2]
            rows = {r[0]: dict(zip(t.headers, r)) for r in t.rows}
            self.assertEqual(rows["skew"]["clock"], "acpi-pm-timer (host-skewable)")
            self.assertEqual(rows["safe"]["clock"], "acpi-pm-timer")

    def test_labels(self):
        runs, _ = report.load_runs(["mine=" + log("lazy-4g"), log("lazy-4g"), log("lazy-4g")])
        self.assertEqual(sorted(r.label for r in runs), ["lazy 4G", "lazy 4G #2", "mine"])

    def test_failed_left_out_or_marked(self):
        runs, msgs = report.load_runs([log("failed-exception"), log("lazy-4g")])
        self.assertEqual(len(runs), 1)
        self.assertIn("left out", msgs[-1][1])
        runs, _ = report.load_runs([log("failed-exception")], include_failed=True)
        self.assertEqual(len(runs), 1)
        self.assertIn("FAILED", report.render_text(report.tables(runs)))

    def test_markdown(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        md = os.path.join(d, "sub", "r.md")
        rc, out, err = run_report("--markdown", md, log("lazy-4g"), log("empty"))
        self.assertEqual(rc, 0, err)
        with open(md) as f:
            text = f.read()
        self.assertIn("| run | policy | RAM |", text)
        self.assertIn("| lazy 4G | lazy | 4G |", text)
        self.assertIn("## Log problems", text)
        self.assertIn("empty file", text)


class CommandLine(unittest.TestCase):
    def check_one_line(self, err, path):
        lines = [l for l in err.splitlines() if l]
        self.assertNotIn("Traceback", err)
        self.assertTrue(lines, "nothing on stderr")
        for l in lines:
            self.assertTrue(l.startswith("report: "), l)
        self.assertTrue(any(path in l for l in lines), err)

    def test_each_bad_kind(self):
        cases = [  # file, expected exit status, words in the message
            (os.path.join(LOGS, "no-such.log"), 1, "no such file"),
            (log("empty"), 1, "empty file"),
            (log("failed-exception"), 1, "exit code 3 (exception)"),
            (log("truncated"), 0, "truncated"),
            (log("garbled"), 0, "garbled event line"),
        ]
        for path, status, words in cases:
            with self.subTest(path=os.path.basename(path)):
                rc, out, err = run_report(path)
                self.assertEqual(rc, status, err)
                self.check_one_line(err, path)
                self.assertIn(words, err)
                if status == 0:
                    self.assertIn("== Runs", out)

    def test_mixed_good_and_bad(self):
        bad = [os.path.join(LOGS, "no-such.log"), log("empty"), log("failed-exception"),
               log("truncated"), log("garbled")]
        rc, out, err = run_report(*([log(n) for n in GOOD] + bad))
        self.assertEqual(rc, 0, err)
        self.assertNotIn("Traceback", err)
        for l in err.splitlines():
            self.assertTrue(l.startswith("report: "), l)
        for p in bad:
            self.assertIn(p, err)
        for label in ("lazy 1G", "ahead 4G", "eager 4G", "lazy 256G"):
            self.assertIn(label, out)

    def test_in_process_never_raises_on_noise(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        junk = os.path.join(d, "junk.log")
        with open(junk, "wb") as f:
            f.write(b'{"event":\n{"event":"ready","us":[1]}\n{"event":"ready"}\x00\xff'
                    b'{"event":"workload"}\n{"event": 5}\n[1,2]\n{"event":"exit","code":"0"}')
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = report.main([junk])
        self.assertEqual(rc, 1)
        self.assertIn("junk.log", err.getvalue())

    def test_usage_errors(self):
        self.assertEqual(run_report()[0], 2)
        self.assertEqual(run_report("--no-such-option", log("lazy-4g"))[0], 2)


@unittest.skipUnless(have_matplotlib(), "matplotlib is not installed for this Python")
class Plots(unittest.TestCase):
    def test_plots_written(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        rc, out, err = run_report("--plots", d, *[log(n) for n in GOOD])
        self.assertEqual(rc, 0, err)
        self.assertNotIn("plots:", err)
        for name in ("latency_cdf.png", "accept_series.png", "ready_vs_ram.png"):
            path = os.path.join(d, name)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", name)
            self.assertGreater(os.path.getsize(path), 10000, name)

    def test_what_is_drawn(self):
        runs, _ = report.load_runs([log(n) for n in GOOD])
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        plt, why = report.matplotlib_or_reason()
        self.assertIsNone(why)
        # Lines, per panel: only the 3 runs with workload steps (lazy, eager, ahead 4G; the
        # two workload=none runs have none) draw: all 3, fast 3, accepting 2 (lazy, ahead).
        self.assertEqual(report.plot_latency_cdf(plt, runs, os.path.join(d, "a.png")),
                         3 + 3 + 2)
        self.assertEqual(report.plot_series(plt, runs, os.path.join(d, "b.png")), 4)
        self.assertEqual(report.plot_ready(plt, runs, os.path.join(d, "c.png")), 3)


class FirstWrite(unittest.TestCase):
    def edited(self, name, *subs):
        """A copy of fixture `name` with each (old, new) substitution made once."""
        with open(log(name)) as f:
            text = f.read()
        for old, new in subs:
            self.assertIn(old, text)
            text = text.replace(old, new, 1)
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        path = os.path.join(d, name + ".log")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_accept_next_to_first_write(self):
        # lazy-4g accepted at 183 MiB/s; give its bandwidth step a first write of 366 MiB/s.
        # It has no pairs (a log from before them): the totals show, nothing is judged.
        path = self.edited("lazy-4g", ('"first_pass_mib_s":', '"first_write_bytes":134217728,'
                                       '"first_write_mib_s":366,"first_pass_mib_s":'))
        runs, msgs = report.load_runs([path])
        self.assertEqual(msgs, [])
        t = report.tables(runs)[0]
        row = dict(zip(t.headers, t.rows[0]))
        self.assertEqual(row["accept MiB/s"], "183")
        self.assertEqual(row["first write MiB/s"], "366")
        self.assertEqual(row["accept / first write, totals"], "0.50")
        self.assertEqual(row["accept / first write, same time"], "-")
        import bench
        self.assertIn("lazy: not measured", bench.first_write_goal_text(runs))

    def test_paired_fields_parsed(self):
        runs, msgs = report.load_runs([log("lazy-1g-paired"), log("eager-4g-paired")])
        self.assertEqual(msgs, [])
        lazy, eager = runs
        self.assertEqual((lazy.label, eager.label), ("lazy 1G", "eager 4G"))
        # lazy: the median over 64 pairs (ratio_permille p10 619, p50 938, p90 1084).
        st = lazy.same_time()
        self.assertEqual((st["ratio"], st["lo"], st["hi"], st["basis"]),
                         (0.938, 0.619, 1.084, "64 pairs"))
        # Median accept 1796541 ns, first write 1580878 ns per 2 MiB unit.
        self.assertEqual((st["accept_mib_s"], st["first_write_mib_s"]), (1113, 1265))
        # The totals of the same boot: 1032 / 1172.
        self.assertEqual(lazy.accept_vs_first_write(), 0.88)
        # eager: its last run before ready, 3447717888 -> 3716153344 bytes (256 MiB) from
        # 7622211 to 8730447 us (231.0 MiB/s), against the first write right after ready,
        # 256 MiB/s; one run, so no spread.
        st = eager.same_time()
        self.assertEqual(st["basis"], "last 256 MiB of eager")
        self.assertAlmostEqual(st["ratio"], 268435456 / 1.108236 / MIB / 256, places=6)
        self.assertEqual((st["lo"], st["hi"]), (None, None))
        self.assertEqual(eager.accept_vs_first_write(), 1.59)  # 406 / 256
        t = report.tables(runs)[0]
        rows = {r[0]: dict(zip(t.headers, r)) for r in t.rows}
        self.assertEqual(rows["lazy 1G"]["accept / first write, same time"], "0.94 (0.62-1.08)")
        self.assertEqual(rows["lazy 1G"]["same time from"], "64 pairs")
        self.assertEqual(rows["eager 4G"]["accept / first write, same time"], "0.90")

    def test_eager_runs_spread(self):
        runs, msgs = report.load_runs([log("eager-1g-paired")])
        self.assertEqual(msgs, [])
        st = runs[0].same_time()
        # The last runs of at least 16 MiB before ready (706891 us), newest first:
        # 662187-704000 (26 MiB), 614702-655109 (26), 563288-614702, 517390-563288,
        # 470331-517390 (32 each): 148 MiB in 226591 us, against a first write of 684 MiB/s.
        # The 4 MiB step 655109-662187 is no eager run.
        self.assertEqual(st["basis"], "last 148 MiB of eager")
        self.assertAlmostEqual(st["ratio"], 148 / 0.226591 / 684, places=6)
        self.assertAlmostEqual(st["lo"], 26 / 0.041813 / 684, places=6)
        self.assertAlmostEqual(st["hi"], 32 / 0.045898 / 684, places=6)
        self.assertEqual(report.same_time_text(st), "0.95 (0.91-1.02)")
        self.assertEqual(runs[0].bandwidth_step()["first_write_skipped_bytes"], 12 * MIB)

    def test_verdict_met(self):
        import bench
        runs, _ = report.load_runs([log("lazy-1g-paired"), log("eager-4g-paired")])
        text = bench.first_write_goal_text(runs)
        self.assertIn("lazy 1G 0.94 (0.62-1.08) [64 pairs; totals 0.88]: MET", text)
        self.assertIn("eager 4G 0.90 [last 256 MiB of eager; totals 1.59]: MET", text)

    def test_verdict_not_met(self):
        import bench
        # The pairs' median ratio 0.700: not met, although the totals (0.88) would pass.
        lazy = self.edited("lazy-1g-paired", ('"p10":619,"p50":938', '"p10":619,"p50":700'))
        # Eager's first write twice as fast (512 MiB/s): 0.45.
        eager = self.edited("eager-4g-paired", ('"first_write_mib_s":256',
                                                '"first_write_mib_s":512'))
        runs, msgs = report.load_runs([lazy, eager])
        self.assertEqual(msgs, [])
        text = bench.first_write_goal_text(runs)
        self.assertIn("lazy 1G 0.70 (0.62-1.08) [64 pairs; totals 0.88]: NOT MET", text)
        self.assertIn("eager 4G 0.45 [last 256 MiB of eager; totals 0.79]: NOT MET", text)

    def test_totals_alone_do_not_decide(self):
        import bench
        # A host stall in the touch step takes the totals to 0.26; the pairs still say 0.94.
        path = self.edited("lazy-1g-paired", ('"accept_mib_s":1032', '"accept_mib_s":305'))
        runs, _ = report.load_runs([path])
        self.assertIn("lazy 1G 0.94 (0.62-1.08) [64 pairs; totals 0.26]: MET",
                      bench.first_write_goal_text(runs))

    def with_sidecar(self, path, **meta):
        with open(ml.sidecar_path(path), "w") as f:
            json.dump(meta, f)
        return path

    def test_eager_judged_on_backed_boots(self):
        import bench
        # The same eager boot twice: backed (sidecar prealloc) at 0.90, and on first-touch
        # RAM with a first write four times faster (0.23). Only the backed one is judged.
        backed = self.with_sidecar(self.edited("eager-4g-paired"), prealloc=True,
                                   mem="4G")
        touch = self.edited("eager-4g-paired", ('"first_write_mib_s":256',
                                                '"first_write_mib_s":1024'))
        runs, msgs = report.load_runs([backed, touch])
        self.assertEqual(msgs, [])
        self.assertEqual(sorted(r.label for r in runs), ["eager 4G", "eager 4G backed"])
        text = bench.first_write_goal_text(runs)
        self.assertIn("eager 4G backed 0.90 [last 256 MiB of eager; totals 1.59]: MET", text)
        self.assertIn("eager on RAM backed on first touch, not judged: eager 4G 0.23", text)
        # A backed boot that misses is a miss, whatever the first-touch boots say.
        slow = self.with_sidecar(self.edited("eager-4g-paired", (
            '"first_write_mib_s":256', '"first_write_mib_s":1024')), prealloc=True)
        fine = self.edited("eager-4g-paired")
        runs, _ = report.load_runs([slow, fine])
        text = bench.first_write_goal_text(runs)
        self.assertIn("eager 4G backed 0.23 [last 256 MiB of eager; totals 0.40]: NOT MET",
                      text)
        # Without backed boots, the first-touch ones are judged as before.
        runs, _ = report.load_runs([touch])
        self.assertIn("eager 4G 0.23 [last 256 MiB of eager; totals 0.40]: NOT MET",
                      bench.first_write_goal_text(runs))

    def test_too_few_or_malformed_pairs_not_judged(self):
        import bench
        few = self.edited("lazy-1g-paired", ('"paired":{"pairs":64', '"paired":{"pairs":7'))
        bad = self.edited("lazy-1g-paired", ('"paired":{"pairs":64', '"paired":{"pairs":"64"'))
        runs, msgs = report.load_runs(["few=" + few, "bad=" + bad])
        self.assertEqual([r.same_time() for r in runs], [None, None])
        self.assertEqual(len(msgs), 1)
        self.assertIn("workload.paired.pairs is a string", msgs[0][1])
        self.assertIn("lazy: not measured", bench.first_write_goal_text(runs))


class BenchMatrix(unittest.TestCase):
    def test_cells(self):
        import bench
        cells, skipped = bench.matrix_cells(quick=False)
        a = [c for c in cells if c.matrix == "a"]
        b = [c for c in cells if c.matrix == "b"]
        self.assertEqual(len(a), 7 * 11)   # seven cells, eleven boots each
        self.assertIn(("lazy", "8T"), {(c.policy, c.mem) for c in a})
        # Only 8T needs a wider physical address space.
        self.assertTrue(all(c.qemu_extra == (["-cpu", "max,phys-bits=46"] if c.mem == "8T" else [])
                            for c in a))
        # Four sizes of lazy and ahead, three of eager, and eager again backed.
        self.assertEqual(len(b), 14)
        self.assertEqual(sorted(c.mem for c in b if c.prealloc), ["16G", "1G", "4G"])
        self.assertTrue(all(c.policy == "eager" for c in b if c.prealloc))
        self.assertEqual([(c.policy, c.mem) for c in skipped], [("eager", "64G")])
        self.assertEqual(len({c.name for c in cells}), len(cells))
        for c in cells:
            # Every size has unaccepted memory, 1G included.
            self.assertIn("fake_unaccepted_start=512M", c.args)
            # The host rule: eager never above 16G.
            self.assertFalse(c.policy == "eager" and c.mem_bytes > 16 * GIB, c.name)

    def test_instruction_cells(self):
        import bench
        cells, _ = bench.matrix_cells(quick=False)
        e = [c for c in cells if c.matrix == "e"]
        # 1G and 8T under the observer, on the same CPU model: only the RAM differs; three
        # rounds, the goal judged on medians.
        self.assertEqual([(c.policy, c.mem, c.observer) for c in e],
                         [("lazy", "1G", True), ("lazy", "8T", True)] * bench.INSN_RUNS)
        self.assertEqual(bench.INSN_RUNS, 3)
        self.assertTrue(all(c.qemu_extra == ["-cpu", "max,phys-bits=46"] for c in e))
        self.assertFalse(any(c.observer for c in cells if c.matrix != "e"))

    def test_instruction_goal(self):
        import bench

        def res(small, large):
            cells = []
            for mem, n in (("1G", small), ("8T", large)):
                c = bench.Cell("e", "lazy", mem, "workload=none", observer=True)
                c.status = "ok" if n else "failed"
                c.instructions = {"to_ready": n, "phases": {"smp": 1},
                                  "accept": {"calls": 4, "outside_platform": 2800,
                                             "in_platform": 40000}} if n else None

                class B:
                    summary = {"accepted_bytes": 4 * (2 << 20)}
                    fatal = None
                c.boot = B()
                cells.append(c)
            return bench.insn_results(cells, [])

        self.assertIn("MET", bench.insn_goal_text(res(1000, 1020)))
        self.assertNotIn("NOT MET", bench.insn_goal_text(res(1000, 1020)))
        self.assertIn("NOT MET", bench.insn_goal_text(res(1000, 1021)))
        self.assertIn("not measured", bench.insn_goal_text(res(1000, None)))
        self.assertIn("8T instructions", bench.report.render_text([bench.insn_table(res(1000, 1010))]))
        # Four units accepted: 2800 / 4 outside the platform's call, 40000 / 4 inside.
        self.assertEqual(res(1000, 1010)["sizes"][0]["accept_outside_per_unit"], 700)
        self.assertEqual(res(1000, 1010)["sizes"][0]["accept_platform_per_unit"], 10000)

    def test_instruction_goal_on_medians(self):
        import bench

        cells = []
        for mem, counts in (("1G", (1000, 990, 1003)), ("8T", (1030, 1015, 1012))):
            for r, n in enumerate(counts, 1):
                c = bench.Cell("e", "lazy", mem, "workload=none", r, 3, observer=True)
                c.status = "ok"
                c.instructions = {"to_ready": n, "phases": {"smp": n // 10}}
                c.boot = None
                cells.append(c)
        res = bench.insn_results(cells, [])
        # One boot of 8T at 1030 would fail the goal against 1000; the medians pass it.
        self.assertEqual([x["to_ready"] for x in res["sizes"]], [1000, 1015])
        self.assertEqual(res["sizes"][1]["phases"]["smp"], 101)
        text = bench.insn_goal_text(res)
        self.assertIn("1015 (1012-1030 over 3 boot(s))", text)
        self.assertNotIn("NOT MET", text)

    def test_smp_cells(self):
        import bench
        cells, _ = bench.matrix_cells(quick=False)
        c = [x for x in cells if x.matrix == "c"]
        d = [x for x in cells if x.matrix == "d"]
        # Eager 8G: 5 backed boots on each of 1 and 2 vCPUs, the order swapped every round,
        # then one of each on first touch; background against lazy on 2 vCPUs, 9 each.
        self.assertEqual([(x.smp, x.prealloc) for x in c],
                         [(1, True), (2, True), (2, True), (1, True)] * 2 + [(1, True), (2, True)] +
                         [(1, False), (2, False)])
        self.assertEqual(sorted((x.policy, x.smp) for x in d),
                         [("background", 2)] * 9 + [("lazy", 2)] * 9)
        self.assertTrue(all("accept_memory=background" in x.args for x in d
                            if x.policy == "background"))

    def test_smp_goals(self):
        import bench

        class FakeBoot:
            def __init__(self, ready, p99=None, left=0, done=None):
                self.ready_us, self.summary = ready, {"unaccepted_bytes": left,
                                                      "accepted_by_cpu": [1, 1]}
                self.workloads = [{"name": n, "alloc_all": {"p99_ns": p99, "p999_ns": p99},
                                   "alloc_fast": {"p99_ns": p99 // 2}}
                                  for n in ("touch", "alloc2m")] if p99 else []
                self.events = [{"event": "background", "done_us": done}] if done else []

        def cells(eager2, bg_p99, bg_left):
            out = []
            for smp, ready in ((1, 3000000), (2, eager2)):
                for r in (1, 2, 3):
                    c = bench.Cell("c", "eager", "8G", "workload=none", r, 3, smp, prealloc=True)
                    c.status, c.boot = "ok", FakeBoot(ready)
                    out.append(c)
            for policy, p99, left in (("lazy", 900000, 0), ("background", bg_p99, bg_left)):
                c = bench.Cell("d", policy, "4G", "workload=touch:auto", smp=2)
                c.status, c.boot = "ok", FakeBoot(20000, p99, left, 900000 if policy != "lazy" else None)
                out.append(c)
            return out

        texts = bench.smp_goal_texts(bench.smp_results(cells(1800000, 100000, 0)))
        self.assertIn("0.600 of the 1-vCPU time, 1.67x; goal at most 0.625: MET", texts[0])
        self.assertIn("first touch): not measured", texts[1])
        self.assertIn(": MET; everything accepted in the end: yes.", texts[2])
        self.assertIn("touch p99 100.0 against 900.0 us (lower)", texts[3])
        self.assertIn("background 100.0-100.0 us, lazy 900.0-900.0 us (ranges do not overlap)",
                      texts[4])
        self.assertIn("accepted nothing) p99 50.0 against 450.0 us", texts[4])
        texts = bench.smp_goal_texts(bench.smp_results(cells(1900000, 100000, 4096)))
        self.assertIn("0.633 of the 1-vCPU time", texts[0])
        self.assertIn("NOT MET", texts[0])
        self.assertIn("everything accepted in the end: no", texts[2])
        texts = bench.smp_goal_texts(bench.smp_results(cells(1800000, 950000, 0)))
        self.assertIn("alloc2m p99 950.0 against 900.0 us (NOT lower)", texts[3])

    def test_ready_order_rounds_shuffled(self):
        import bench
        cells, _ = bench.matrix_cells(quick=False)
        order = bench.ready_order(cells)
        a = [c for c in cells if c.matrix == "a"]
        self.assertEqual(sorted(c.name for c in order), sorted(c.name for c in a))
        kinds = len({(c.policy, c.mem) for c in a})
        rounds = [order[i:i + kinds] for i in range(0, len(order), kinds)]
        # Every round boots each cell once, and the rounds are in order.
        for i, r in enumerate(rounds, 1):
            self.assertEqual({c.run for c in r}, {i})
            self.assertEqual(len({(c.policy, c.mem) for c in r}), kinds)
        # Not one fixed order: the cell after eager 4G is not always the same one.
        after = {order[i + 1].name.rsplit("-r", 1)[0] for i, c in enumerate(order[:-1])
                 if c.policy == "eager" and c.mem == "4G"}
        self.assertGreater(len(after), 1)
        self.assertEqual([c.name for c in order], [c.name for c in bench.ready_order(cells)])

    def test_ready_matrix_ratio(self):
        import bench
        cells = []
        for mem, name in (("1G", "lazy-1g-none"), ("256G", "lazy-256g-none")):
            c = bench.Cell("a", "lazy", mem, "workload=none")
            c.status, c.boot = "ok", ml.read_boot(log(name))
            cells.append(c)
        rows, goal = bench.ready_matrix(cells)
        self.assertEqual([r["median_us"] for r in rows], [81166, 45012])
        self.assertAlmostEqual(goal["ratio"], 45012 / 81166)
        self.assertTrue(goal["met"])
        self.assertIn("MET", bench.goal_text(goal))
        # The 256G boot accepted only boot edges: its whole accept time is edge time.
        self.assertEqual(rows[1]["edge_accept_median_us"], 3379091 / 1000.0)
        self.assertEqual(goal["edge_accept_median_us"], 3379091 / 1000.0)

    def test_slowed_host_boots_are_named_and_left_out_of_the_steady_figure(self):
        import bench
        import types

        def cell(mem, run, pre_us, ready_us):
            c = bench.Cell("a", "lazy", mem, "workload=none", run=run, runs=9)
            c.status = "ok"
            c.boot = types.SimpleNamespace(ready_us=ready_us, summary=None, boot_steps=None,
                                           boot_phases={"efi_main_to_ebs": pre_us})
            return c
        # 1G: four boots at 8.0-8.3 ms and three on a slowed host (every phase slower);
        # 8T: four boots at 8.8-9.1 ms and one slowed.
        cells = [cell("1G", i, 3000, 8000 + 100 * i) for i in range(4)] + \
            [cell("1G", 4 + i, 6000, 13000) for i in range(3)] + \
            [cell("8T", i, 3100, 8800 + 100 * i) for i in range(4)] + [cell("8T", 4, 4500, 12000)]
        slow, limit = bench.slowed_host(cells)
        self.assertEqual(limit, bench.SLOWED_HOST * 3100)
        self.assertEqual(sorted(slow), ["a-lazy-1G-r4", "a-lazy-1G-r5", "a-lazy-1G-r6",
                                        "a-lazy-8T-r4"])
        _, goal = bench.ready_matrix(cells)
        # The goal is judged on every boot (8.9 against 8.3 ms) ...
        self.assertEqual(goal["lazy_1g_median_us"], 8300)
        self.assertTrue(goal["met"])
        # ... and the steady figure beside it uses only the others: 8.95 against 8.15 ms.
        st = goal["steady"]
        self.assertEqual((st["lazy_1g_runs"], st["lazy_runs"]), (4, 4))
        self.assertAlmostEqual(st["ratio"], 8950 / 8150)
        text = bench.goal_text(goal)
        self.assertIn("lazy 8T 8.9 ms (4 boots) against lazy 1G 8.2 ms (4 boots), +9.8%", text)
        # No boot slowed: no second figure.
        for c in cells:
            c.boot.boot_phases["efi_main_to_ebs"] = 3000
        _, goal = bench.ready_matrix(cells)
        self.assertNotIn("host was slower", bench.goal_text(goal))

    def test_ready_goal(self):
        import bench
        cells = []
        for mem, name in (("1G", "lazy-1g-none"), ("256G", "lazy-256g-none")):
            c = bench.Cell("a", "lazy", mem, "workload=none")
            c.status, c.boot = "ok", ml.read_boot(log(name))
            cells.append(c)
        rows, _ = bench.ready_matrix(cells)
        # 81.2 ms and 45.0 ms: far above 11 ms.
        text = bench.ready_goal_text(rows)
        self.assertIn("lazy 1G 81.2 ms", text)
        self.assertIn("lazy 256G 45.0 ms", text)
        self.assertIn("NOT MET", text)
        for r in rows:
            r["median_us"] = 10500
        self.assertTrue(bench.ready_goal_text(rows).endswith(": MET."))
        rows[1]["median_us"] = 11001
        self.assertIn("NOT MET", bench.ready_goal_text(rows))

    def test_edge_accept_only_when_every_accept_was_an_edge(self):
        import bench
        self.assertEqual(bench.edge_accept_us(ml.read_boot(log("lazy-256g-none"))), 3379.091)
        # A workload accepted units lazily too: the edges' share is not known.
        self.assertIsNone(bench.edge_accept_us(ml.read_boot(log("lazy-4g"))))

    def test_ratio_interval(self):
        import bench
        # Identical boots: every resample gives the same ratio.
        self.assertEqual(bench.ratio_interval([22.0] * 5, [20.0] * 5), [1.1, 1.1])
        # Spread boots: the interval holds the ratio of medians and is not a point.
        num, den = [20, 21, 22, 26, 30, 31], [18, 19, 20, 21, 24, 25]
        lo, hi = bench.ratio_interval(num, den)
        self.assertLess(lo, statistics.median(num) / statistics.median(den))
        self.assertGreater(hi, statistics.median(num) / statistics.median(den))
        self.assertIsNone(bench.ratio_interval([1.0], den))

    def test_goal_text_says_when_a_run_cannot_tell(self):
        import bench
        goal = {"size": "256G", "lazy_1g_median_us": 20000, "lazy_median_us": 21000,
                "ratio": 1.05, "ratio_interval": [0.97, 1.25], "met": True}
        self.assertIn("0.97-1.25; it straddles 1.10, so this run alone cannot tell",
                      bench.goal_text(goal))
        goal.update(ratio=1.3, ratio_interval=[1.2, 1.4], met=False)
        self.assertIn("1.20-1.40; it lies above 1.10", bench.goal_text(goal))

    def test_goal_text_names_the_edge_share(self):
        import bench
        goal = {"size": "256G", "lazy_1g_median_us": 20000, "lazy_1g_min_us": 19000,
                "lazy_1g_max_us": 21000, "lazy_1g_runs": 11, "lazy_4g_median_us": 25000,
                "lazy_median_us": 26000, "ratio": 1.3, "kernel_ratio": None,
                "edge_accept_median_us": 3500, "met": False}
        text = bench.goal_text(goal)
        self.assertIn("NOT MET", text)
        self.assertIn("Lazy 256G spends 3.5 ms (median) of its time to ready accepting the "
                      "partial units", text)
        self.assertIn("the 10% allowance is 2.0 ms", text)


if __name__ == "__main__":
    unittest.main()
