# SPDX-License-Identifier: MIT
# memaccept: tests of tools/report.py --probe: the probe table, the side-by-side comparison, the plot.
"""The fixtures logs/probe-*.log are the consoles of the QEMU cases probe-sim,
probe-tdx-emu, probe-tdx-emu-huge, probe-snp-emu and probe-snp-emu-svsm (test image,
2G, fake_unaccepted_start=1G, workload=probe) from before clock_read was added, OVMF's
lines left out. Expected numbers
are read off the fixtures by hand, not recomputed with the code under test."""
import contextlib
import io
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import report  # noqa: E402

LOGS = os.path.join(HERE, "logs")


def log(name):
    return os.path.join(LOGS, name + ".log")


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = report.main(argv)
    return code, out.getvalue(), err.getvalue()


def have_matplotlib():
    try:
        import matplotlib  # noqa: F401
        return True
    except ImportError:
        return False


class ProbeLoad(unittest.TestCase):
    def test_tdx_kvm_host(self):
        p, _, why = report.load_probe(log("probe-tdx-emu"))
        self.assertIsNone(why)
        self.assertEqual(p.prims["tdx_accept_4k"]["count"], 58368)
        self.assertEqual(p.prims["tdx_accept_4k"]["p50"], 16170)
        self.assertNotIn("tdx_accept_2m", p.prims)
        self.assertIn("4 KiB pages", p.absent["tdx_accept_2m"])
        self.assertEqual(p.unit["p50"], 20503860)
        self.assertEqual(p.model["predicted_ns"], 20913544)
        self.assertEqual(p.label, "probe-tdx-emu")

    def test_every_platform_has_its_primitives(self):
        want = {"probe-sim": "sim_zero_2m", "probe-snp-emu": "snp_psc_253",
                "probe-snp-emu-svsm": "svsm_pvalidate_many", "probe-tdx-emu-huge": "tdx_accept_2m"}
        for name, prim in want.items():
            p, _, why = report.load_probe(log(name))
            self.assertIsNone(why, name)
            self.assertGreaterEqual(p.prims[prim]["count"], 100, name)

    def test_us_text(self):
        self.assertEqual(report.us_text(2170), "2.17")
        self.assertEqual(report.us_text(16170), "16.2")
        self.assertEqual(report.us_text(20503860), "20504")
        self.assertEqual(report.us_text(None), "-")


class ProbeCli(unittest.TestCase):
    def test_one_log_table_and_model(self):
        code, out, err = run(["--probe", log("probe-tdx-emu")])
        self.assertEqual(code, 0, err)
        self.assertIn("platform tdx, host pages 4K, 114 probe units + 100 measured, 428 MiB consumed", out)
        # tdx_accept_4k: 58368 samples, p10 15.23 us, p50 16.17 us, p90 19.51 us.
        self.assertRegex(out, r"tdx_accept_4k\s+58368\s+15\.2\s+16\.2\s+19\.5\s")
        self.assertIn("no tdx_accept_2m: the host refused every 2 MiB try", out)
        # predicted 20913544 ns, measured mean 20785490 ns, 6 permille above.
        self.assertIn("model 20914 us per unit, measured 20785 us: +0.6%; the measured median is within", out)
        self.assertNotIn("side by side", out)

    def test_two_logs_side_by_side(self):
        code, out, err = run(["--probe", "kvm=" + log("probe-tdx-emu"), "huge=" + log("probe-tdx-emu-huge")])
        self.assertEqual(code, 0, err)
        self.assertIn("== medians side by side (us; ratio to kvm)", out)
        # unit medians: 20503860 ns (kvm) and 13225158 ns (huge): x0.645008, shown x0.65.
        self.assertRegex(out, r"unit \(accepted as usual\)\s+20504\s+13225 \(x0\.65\)")
        # Primitives one host has and the other not: a dash.
        self.assertRegex(out, r"tdx_accept_2m_refused\s+12\.9\s+-\n")

    def test_log_without_probe(self):
        code, _, err = run(["--probe", log("lazy-4g")])
        self.assertEqual(code, 1)
        self.assertIn("no probe event (boot with workload=probe)", err)
        code, out, err = run(["--probe", log("lazy-4g"), log("probe-sim")])
        self.assertEqual(code, 0)
        self.assertIn("lazy-4g.log: no probe event", err)
        self.assertIn("platform sim", out)

    def test_without_flag_every_section(self):
        # report.py LOG: a probe log shows its probe section without --probe, beside its
        # boot table; a log the observer counted shows its instructions per phase.
        code, out, err = run([log("probe-tdx-emu"), log("instructions-1g")])
        self.assertEqual(code, 0, err)
        self.assertIn("platform tdx, host pages 4K, 114 probe units + 100 measured, 428 MiB consumed", out)
        self.assertIn("== Boot phases (ms)", out)
        self.assertIn("instructions per boot phase", out)
        # instructions-1g: to_ready 610513, page_tables 149200 (read off the log).
        self.assertRegex(out, r"instructions-1g\.log\s+266034\s+6319\s+86674\s+149200\s+1731\s+2229\s+98326\s+610513")
        # A log with none of them: one line on stderr, and exit 1 when it is the only one.
        code, _, err = run([log("empty")])
        self.assertEqual(code, 1)

    def test_malformed_primitive_reported(self):
        with open(log("probe-sim")) as f:
            text = f.read()
        bad = text.replace('"sim_zero_4k":{"count":', '"sim_zero_4k":{"count":"x","was":', 1)
        self.assertNotEqual(bad, text)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.log")
            with open(path, "w") as f:
                f.write(bad)
            code, out, err = run(["--probe", path])
        self.assertEqual(code, 0)
        self.assertIn("primitive sim_zero_4k is malformed", err)
        self.assertNotRegex(out, r"\nsim_zero_4k ")

    def test_markdown(self):
        with tempfile.TemporaryDirectory() as d:
            md = os.path.join(d, "probe.md")
            code, _, err = run(["--probe", "--markdown", md, log("probe-snp-emu"), log("probe-snp-emu-svsm")])
            self.assertEqual(code, 0, err)
            with open(md) as f:
                text = f.read()
        self.assertIn("## Side by side", text)
        self.assertIn("| snp_psc_253 |", text)
        self.assertIn("no `snp_pvalidate`: below VMPL0", text)

    @unittest.skipUnless(have_matplotlib(), "matplotlib is not installed for this Python")
    def test_plot(self):
        with tempfile.TemporaryDirectory() as d:
            code, out, err = run(["--probe", "--plots", d, log("probe-tdx-emu"), log("probe-snp-emu")])
            self.assertEqual(code, 0, err)
            path = os.path.join(d, "probe.png")
            self.assertIn("plot: acceptance primitives: %s" % path, out)
            with open(path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")


if __name__ == "__main__":
    unittest.main()
