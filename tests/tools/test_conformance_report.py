# SPDX-License-Identifier: MIT
# memaccept: tools/report.py --conformance on recorded consoles: verdict tables, damaged and unusable logs.
"""Fixtures in logs/ (real consoles of `make conformance` and a QEMU case):

  conformance-ovmf-4g    production image, Debian's OVMF (4 MiB flash), 4 GiB guest:
                         13 pass, 1 warn (map.sorted: descriptor 122 at 0xb0000000 after
                         RAM at 4 GiB), 0 fail, 10 n/a
  conformance-tdx-emu    test image, platform=tdx-emu on the same OVMF (memdesc lines
                         dropped): 14 pass, 1 warn (efi.cc_final_events), 1 fail
                         (acpi.mp_wakeup), 8 n/a
  conformance-snp-emu-rules2  rule set 2, test image, platform=snp-emu with
                         emu_fault=ebs_retries:2 (memdesc lines dropped): 16 pass, 0 warn,
                         1 fail (ebs.attempts, MUST: 3 calls), 14 n/a, 3 info

Expected text is read off the fixtures by hand, not produced by the code under test.
"""
import os
import re
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, HERE)

import report  # noqa: E402
from test_report import log, run_report  # noqa: E402


def rows(text):
    """(verdict, rule) of each table row, in order."""
    return re.findall(r"^(FAIL|WARN|pass|info|n/a) +(?:MUST|SHOULD|INFO|-) +(\S+) ", text, re.M)


class ConformanceReport(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memaccept-conf-")

    def damaged(self, name, fn):
        """A copy of fixture name with the conformance line passed through fn."""
        with open(log(name)) as f:
            lines = f.read().split("\n")
        out = [fn(l) if l.startswith('{"event":"conformance"') else l for l in lines]
        path = os.path.join(self.tmp, name + "-damaged.log")
        with open(path, "w") as f:
            f.write("\n".join(out))
        return path

    def test_debian_ovmf(self):
        rc, out, err = run_report("--conformance", log("conformance-ovmf-4g"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(err, "")
        self.assertIn("firmware EDK II (revision 0x10000, UEFI 2.7), platform none: "
                      "13 pass, 1 warn, 0 fail, 10 n/a", out)
        r = rows(out)
        self.assertEqual(len(r), 24)
        self.assertEqual(r[0], ("WARN", "map.sorted"))
        self.assertEqual(r[-1], ("n/a", "efi.cc_final_events"))
        self.assertIn("descriptor 122 (0xb0000000) starts below its predecessor (0x100000000)", out)
        self.assertIn("source: ACPI 6.4 section 5.2.12 (MADT, signature APIC)", out)

    def test_failures_come_first(self):
        # A MUST rule failed: the gate (must, the default) makes the exit status 1.
        rc, out, err = run_report("--conformance", log("conformance-tdx-emu"))
        self.assertEqual(rc, 1, err)
        self.assertIn("conformance: gate must failed: acpi.mp_wakeup (- fail)", out)
        self.assertIn("platform tdx: 14 pass, 1 warn, 1 fail, 8 n/a", out)
        r = rows(out)
        self.assertEqual(r[:2], [("FAIL", "acpi.mp_wakeup"), ("WARN", "efi.cc_final_events")])
        self.assertIn("a TD has no INIT/SIPI", out)

    def test_markdown(self):
        md = os.path.join(self.tmp, "sub", "conf.md")
        rc, out, err = run_report("--conformance", "--markdown", md, log("conformance-ovmf-4g"),
                                  log("conformance-tdx-emu"), "--fail-on", "never")
        self.assertEqual(rc, 0, err)
        with open(md) as f:
            text = f.read()
        self.assertEqual(text.count("| verdict | level | rule | detail | source |"), 2)
        self.assertIn("## EDK II (revision 0x10000, UEFI 2.7), platform tdx", text)
        self.assertRegex(text, r"\| fail \| - \| `acpi.mp_wakeup` \| no multiprocessor wakeup entry")
        # Rule set 1 logs carry no action: the to-do list still names the rule.
        self.assertIn("- **MUST** `acpi.mp_wakeup`: see the detail above", text)

    def test_rule_set_2_levels_and_actions(self):
        rc, out, err = run_report("--conformance", log("conformance-snp-emu-rules2"))
        self.assertEqual(rc, 1, err)
        self.assertEqual(err, "")
        self.assertIn("platform snp, rule set 2: 16 pass, 0 warn, 1 fail, 14 n/a, 3 info", out)
        r = rows(out)
        self.assertEqual(len(r), 34)
        self.assertEqual(r[0], ("FAIL", "ebs.attempts"))
        self.assertIn(("info", "boot.reset_to_efi_main"), r)
        self.assertRegex(out, r"FAIL +MUST +ebs.attempts +3 calls")
        self.assertIn("source: memaccept boot/efi_main.c (TSC before and after the call) "
                      "(memaccept's own rule)", out)
        # After the table: what to do, one line per rule not met.
        todo = out.split("What the firmware should do (1 rule(s) not met")[1].strip().split("\n")
        self.assertEqual(todo[-1], "conformance: gate must failed: ebs.attempts (MUST fail)")
        self.assertEqual(todo[1:-1], ["- MUST ebs.attempts: let ExitBootServices succeed on the first "
                                    "call, or on the second with at most 8 more descriptors: do "
                                    "no allocation in its events"])
        md = os.path.join(self.tmp, "r2.md")
        rc, out, err = run_report("--conformance", "--markdown", md, log("conformance-snp-emu-rules2"))
        with open(md) as f:
            text = f.read()
        self.assertIn("### What the firmware should do", text)
        self.assertIn("- **MUST** `ebs.attempts`: let ExitBootServices succeed", text)
        self.assertRegex(text, r"\| info \| INFO \| `map.size` \|")

    def test_nothing_to_do(self):
        path = self.damaged("conformance-snp-emu-rules2",
                            lambda l: l.replace('"verdict":"fail"', '"verdict":"pass"')
                            .replace('"pass":16', '"pass":17').replace('"fail":1', '"fail":0'))
        rc, out, err = run_report("--conformance", path)
        self.assertEqual(rc, 0, err)
        self.assertIn("Nothing to do: every rule that applies is met.", out)

    def test_log_without_conformance(self):
        rc, out, err = run_report("--conformance", log("lazy-4g"), log("empty"),
                                  os.path.join(self.tmp, "missing.log"))
        self.assertEqual(rc, 1)
        self.assertEqual(out, "")
        self.assertIn("lazy-4g.log: no conformance event", err)
        self.assertIn("missing.log: cannot read", err)
        self.assertIn("no conformance report among 3 log(s)", err)

    def test_one_good_log_is_enough(self):
        rc, out, err = run_report("--conformance", log("lazy-4g"), log("conformance-tdx-emu"),
                                  "--fail-on", "never")
        self.assertEqual(rc, 0)
        self.assertIn("no conformance event", err)
        self.assertIn("platform tdx", out)

    def test_malformed_checks_are_named_and_skipped(self):
        def damage(line):
            line = line.replace('"verdict":"fail"', '"verdict":"maybe"', 1)
            return line.replace('"source":"ACPI 6.4 section 5.2.8 (XSDT)",', "", 1)
        path = self.damaged("conformance-tdx-emu", damage)
        rc, out, err = run_report("--conformance", path)
        self.assertEqual(rc, 0)
        self.assertIn("(acpi.mp_wakeup) has unknown verdict 'maybe'", err)
        self.assertIn("is malformed (needs string rule, verdict, source, detail)", err)
        self.assertNotIn("acpi.mp_wakeup", out)
        self.assertNotIn("acpi.xsdt", out)
        self.assertIn("13 pass, 1 warn, 0 fail, 8 n/a", out)

    def test_counts_that_disagree_with_the_checks(self):
        path = self.damaged("conformance-ovmf-4g", lambda l: l.replace('"pass":13', '"pass":14'))
        rc, out, err = run_report("--conformance", path)
        self.assertEqual(rc, 0)
        self.assertIn("the event counts 14 pass but lists 13", err)

    def test_truncated_event_line(self):
        path = self.damaged("conformance-ovmf-4g", lambda l: l[:len(l) // 2])
        rc, out, err = run_report("--conformance", path)
        self.assertEqual(rc, 1)
        self.assertIn("no conformance event", err)

    def test_title_without_revisions(self):
        c = report.Conformance("x.log", {"event": "conformance", "firmware": "Acme",
                                         "checks": "nope"})
        self.assertEqual(c.title(), "Acme (?), platform ?")
        self.assertEqual(c.messages, ["conformance event has no checks array"])
        self.assertEqual(c.totals(), "0 pass, 0 warn, 0 fail, 0 n/a")


if __name__ == "__main__":
    unittest.main()
