# SPDX-License-Identifier: MIT
# memaccept: conformance in CI: the exit gate, waivers, JUnit XML, SARIF 2.1.0, provenance and --diff.
"""Fixtures in logs/ (see test_conformance_report.py and test_judge.py):
  conformance-snp-emu-rules2  rule set 2: 1 MUST failure (ebs.attempts), no warning
  conformance-ovmf-verbose    rule set 2, Debian's OVMF: 1 SHOULD warning (map.sorted)
  conformance-tdx-emu         rule set 1 (no levels): acpi.mp_wakeup fail, efi.cc_final_events warn

No JUnit or SARIF schema file is available offline here, so the outputs are checked
against the structure the formats define: JUnit as Jenkins, GitLab and pytest read it
(testsuites > testsuite[tests, failures, errors, skipped] > testcase[name, classname] with
failure / skipped / system-out), parsed with Python's XML parser and xmllint; SARIF
against the OASIS SARIF 2.1.0 specification's required properties and value sets (sections
3.13 sarifLog, 3.14 run, 3.19 toolComponent, 3.49 reportingDescriptor, 3.27 result, 3.28
location, 3.35 suppression).
"""
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, HERE)

import conformance_ci as cci  # noqa: E402
import report  # noqa: E402
from test_report import log, run_report  # noqa: E402

SARIF_LEVELS = {"none", "note", "warning", "error"}
SARIF_KINDS = {"notApplicable", "pass", "fail", "review", "open", "informational"}


def sarif_problems(doc):
    """Departures from SARIF 2.1.0's required structure and value sets."""
    p = []
    if doc.get("version") != "2.1.0":
        p.append("version %r" % doc.get("version"))
    if not isinstance(doc.get("$schema"), str) or "sarif" not in doc["$schema"]:
        p.append("$schema %r" % doc.get("$schema"))
    if not isinstance(doc.get("runs"), list) or not doc["runs"]:
        return p + ["no runs"]
    for run in doc["runs"]:
        driver = (run.get("tool") or {}).get("driver") or {}
        if not isinstance(driver.get("name"), str):
            p.append("driver without a name")
        rules = driver.get("rules")
        if not isinstance(rules, list):
            p.append("driver without rules")
            rules = []
        ids = [r.get("id") for r in rules]
        if len(set(ids)) != len(ids) or not all(isinstance(i, str) for i in ids):
            p.append("rule ids not unique strings")
        for r in rules:
            lv = (r.get("defaultConfiguration") or {}).get("level")
            if lv is not None and lv not in SARIF_LEVELS:
                p.append("rule %s: defaultConfiguration.level %r" % (r.get("id"), lv))
            for k in ("shortDescription", "fullDescription", "help"):
                if k in r and not isinstance(r[k].get("text"), str):
                    p.append("rule %s: %s without text" % (r.get("id"), k))
        for res in run.get("results", []):
            rid, idx = res.get("ruleId"), res.get("ruleIndex")
            if not isinstance((res.get("message") or {}).get("text"), str):
                p.append("result %s: message without text" % rid)
            if idx is not None and (not isinstance(idx, int) or idx >= len(rules) or
                                    rules[idx].get("id") != rid):
                p.append("result %s: ruleIndex %r names another rule" % (rid, idx))
            if res.get("level", "warning") not in SARIF_LEVELS:
                p.append("result %s: level %r" % (rid, res.get("level")))
            if res.get("kind", "fail") not in SARIF_KINDS:
                p.append("result %s: kind %r" % (rid, res.get("kind")))
            if res.get("kind", "fail") != "fail" and res.get("level", "none") != "none":
                p.append("result %s: kind %s with level %s (3.27.9: must be none)" %
                         (rid, res.get("kind"), res.get("level")))
            for loc in res.get("locations", []):
                phys = loc.get("physicalLocation")
                if phys is not None:
                    if not isinstance((phys.get("artifactLocation") or {}).get("uri"), str):
                        p.append("result %s: artifactLocation without uri" % rid)
                    line = (phys.get("region") or {}).get("startLine", 1)
                    if not isinstance(line, int) or line < 1:
                        p.append("result %s: startLine %r" % (rid, line))
                for ll in loc.get("logicalLocations", []):
                    if not isinstance(ll.get("name"), str):
                        p.append("result %s: logical location without name" % rid)
            for s in res.get("suppressions", []):
                if s.get("kind") not in ("inSource", "external"):
                    p.append("result %s: suppression kind %r" % (rid, s.get("kind")))
    return p


def junit_problems(text):
    p = []
    root = ET.fromstring(text)
    if root.tag != "testsuites":
        return ["root %s" % root.tag]
    total = 0
    for suite in root:
        if suite.tag != "testsuite":
            p.append("child %s" % suite.tag)
            continue
        cases = suite.findall("testcase")
        counts = {"tests": len(cases),
                  "failures": sum(1 for c in cases if c.find("failure") is not None),
                  "skipped": sum(1 for c in cases if c.find("skipped") is not None),
                  "errors": 0}
        for k, v in counts.items():
            if suite.get(k) != str(v):
                p.append("testsuite %s=%r, children say %d" % (k, suite.get(k), v))
        for c in cases:
            if not c.get("name") or not c.get("classname"):
                p.append("testcase without name or classname")
            if len([x for x in c if x.tag in ("failure", "skipped", "error")]) > 1:
                p.append("testcase %s with more than one outcome" % c.get("name"))
        total += len(cases)
    if root.get("tests") != str(total):
        p.append("testsuites tests=%r, %d cases" % (root.get("tests"), total))
    return p


class ConformanceCI(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="memaccept-ci-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def path(self, name):
        return os.path.join(self.tmp, name)

    def outputs(self, *args):
        junit, sarif = self.path("junit.xml"), self.path("r.sarif")
        rc, out, err = run_report("--conformance", "--junit", junit, "--sarif", sarif, *args)
        with open(junit) as f:
            j = f.read()
        with open(sarif) as f:
            s = json.load(f)
        return rc, out, err, j, s

    # ------------------------------------------------ the gate
    def test_gate_levels(self):
        must_fail = log("conformance-snp-emu-rules2")
        should_warn = log("conformance-ovmf-verbose")
        self.assertEqual(run_report("--conformance", must_fail)[0], 1)
        self.assertEqual(run_report("--conformance", must_fail, "--fail-on", "never")[0], 0)
        rc, out, _ = run_report("--conformance", should_warn)
        self.assertEqual(rc, 0)
        self.assertIn("conformance: gate must passed", out)
        rc, out, _ = run_report("--conformance", should_warn, "--fail-on", "should")
        self.assertEqual(rc, 1)
        self.assertIn("gate should failed: map.sorted (SHOULD warn)", out)

    # ------------------------------------------------ JUnit XML
    def test_junit_one_case_per_rule(self):
        rc, out, err, j, _ = self.outputs(log("conformance-snp-emu-rules2"))
        self.assertEqual(rc, 1, err)
        self.assertEqual(junit_problems(j), [])
        root = ET.fromstring(j)
        cases = root.findall("testsuite/testcase")
        self.assertEqual(len(cases), 34)   # rule set 2's rules in that log
        self.assertEqual(len({c.get("name") for c in cases}), 34)
        failed = [c.get("name") for c in cases if c.find("failure") is not None]
        self.assertEqual(failed, ["ebs.attempts"])
        f = root.find("testsuite/testcase[@name='ebs.attempts']/failure")
        self.assertEqual(f.get("type"), "MUST fail")
        self.assertIn("3 calls", f.get("message"))
        self.assertEqual(root.find("testsuite").get("skipped"), "14")   # the n/a rules
        if shutil.which("xmllint"):
            r = subprocess.run(["xmllint", "--noout", self.path("junit.xml")],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_junit_warnings_follow_the_gate(self):
        for gate, failures in (("must", "0"), ("should", "1")):
            _, _, _, j, _ = self.outputs(log("conformance-ovmf-verbose"), "--fail-on", gate)
            self.assertEqual(junit_problems(j), [])
            root = ET.fromstring(j)
            self.assertEqual(root.get("failures"), failures, gate)
            case = root.find("testsuite/testcase[@name='map.sorted']")
            if gate == "must":
                self.assertIn("warn SHOULD", case.find("system-out").text)
            else:
                self.assertIsNotNone(case.find("failure"))

    # ------------------------------------------------ SARIF 2.1.0
    def test_sarif_structure_rules_and_locations(self):
        _, _, err, _, s = self.outputs(log("conformance-ovmf-verbose"))
        self.assertEqual(sarif_problems(s), [])
        run = s["runs"][0]
        rules = run["tool"]["driver"]["rules"]
        self.assertEqual(len(rules), 35)
        self.assertEqual(len(run["results"]), 35)
        by_id = {r["ruleId"]: r for r in run["results"]}
        sorted_ = by_id["map.sorted"]
        self.assertEqual((sorted_["kind"], sorted_["level"]), ("fail", "warning"))
        loc = sorted_["locations"][0]
        self.assertTrue(loc["physicalLocation"]["artifactLocation"]["uri"].endswith(
            "conformance-ovmf-verbose.log"))
        # The region is the verdict's line in the console.
        with open(log("conformance-ovmf-verbose")) as f:
            line = f.read().split("\n")[loc["physicalLocation"]["region"]["startLine"] - 1]
        self.assertRegex(line, r"^conformance: warn +SHOULD map.sorted ")
        self.assertEqual([x["name"] for x in loc["logicalLocations"]],
                         ["[0xb0000000, 0xc0000000)", "[0x100000000, 0x180000000)"])
        self.assertEqual((by_id["acpi.madt"]["kind"], by_id["acpi.madt"]["level"]),
                         ("pass", "none"))
        self.assertEqual(by_id["efi.cc_blob"]["kind"], "notApplicable")
        self.assertEqual(rules[by_id["map.sorted"]["ruleIndex"]]["defaultConfiguration"]["level"],
                         "warning")
        self.assertIn("ascending address order", rules[by_id["map.sorted"]["ruleIndex"]]["help"]["text"])
        self.assertEqual(run["tool"]["driver"]["version"], "853f31f-dirty")

    def test_sarif_checker_catches_what_it_should(self):
        _, _, _, _, s = self.outputs(log("conformance-ovmf-verbose"))
        s["runs"][0]["results"][0]["level"] = "error"    # a pass with level error
        s["runs"][0]["results"][1]["ruleIndex"] = 0       # pointing at another rule
        self.assertEqual(len(sarif_problems(s)), 2)

    # ------------------------------------------------ waivers
    def test_waivers(self):
        wf = self.path("waivers")
        with open(wf, "w") as f:
            f.write("# our firmware's known issues\n"
                    "ebs.attempts  fixed in 2027.02 (ticket FW-12)  firmware=EDK\n"
                    "map.*         never expires the other way  expires=2020-01-01\n"
                    "acpi.rsdt     nothing to waive here\n")
        rc, out, err, j, s = self.outputs(log("conformance-snp-emu-rules2"), "--waivers", wf)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("waived: fixed in 2027.02 (ticket FW-12)", out)
        self.assertIn("waiver line 4 (acpi.rsdt) matches no rule of this report", err)
        case = ET.fromstring(j).find("testsuite/testcase[@name='ebs.attempts']")
        self.assertTrue(case.find("skipped").text.startswith("waived: fixed in 2027.02 (ticket FW-12)\n"))
        res = [r for r in s["runs"][0]["results"] if r["ruleId"] == "ebs.attempts"][0]
        self.assertEqual(res["suppressions"], [{"kind": "external", "status": "accepted",
                                                "justification": "fixed in 2027.02 (ticket FW-12)"}])
        self.assertEqual(sarif_problems(s), [])
        # A firmware match that does not hold, and an expired waiver, do not apply.
        with open(wf, "w") as f:
            f.write("ebs.attempts  only for another vendor  firmware=Acme\n")
        self.assertEqual(run_report("--conformance", log("conformance-snp-emu-rules2"),
                                    "--waivers", wf)[0], 1)
        with open(wf, "w") as f:
            f.write("map.sorted  until the next release  expires=2020-01-01\n")
        rc, out, err = run_report("--conformance", log("conformance-ovmf-verbose"), "--waivers",
                                  wf, "--fail-on", "should")
        self.assertEqual(rc, 1)
        self.assertIn("expired on 2020-01-01: not applied", err)

    def test_waiver_file_errors(self):
        for text, want in (("map.sorted\n", "w:1: waiver of map.sorted has no reason"),
                           ("Map Sorted because\n", "w:1: 'Map' is not a rule ID"),
                           ("map.sorted x expires=soon\n", "expires= wants YYYY-MM-DD")):
            with self.assertRaises(cci.WaiverError) as e:
                cci.parse_waivers(text, "w")
            self.assertIn(want, str(e.exception))
        wf = self.path("bad")
        with open(wf, "w") as f:
            f.write("map.sorted\n")
        rc, _, err = run_report("--conformance", log("conformance-ovmf-verbose"), "--waivers", wf)
        self.assertEqual(rc, 2)
        self.assertIn("has no reason", err)
        w = cci.parse_waivers("map.sorted r expires=2030-01-01\n")[0]
        self.assertFalse(w.expired(datetime.date(2029, 12, 31)))
        self.assertTrue(w.expired(datetime.date(2030, 1, 1)))

    # ------------------------------------------------ provenance and the header
    def test_markdown_provenance_and_what_tcg_judges(self):
        prov = self.path("provenance.json")
        with open(prov, "w") as f:
            json.dump({"images": {"firmware": {"path": "/fw/OVMF.fd", "sha256": "ab" * 32,
                                               "bytes": 4194304}},
                       "qemu": "QEMU emulator version 7.2.22", "command": ["qemu", "-bios", "x"],
                       "vm": {"mem": "4G", "smp": 1, "accel": "tcg", "host": "none (QEMU TCG)",
                              "firmware_load": "bios", "args": "workload=conformance"}}, f)
        md = self.path("r.md")
        rc, out, err = run_report("--conformance", "--markdown", md, "--provenance", prov,
                                  log("conformance-ovmf-verbose"))
        self.assertEqual(rc, 0, err)
        with open(md) as f:
            text = f.read()
        self.assertIn("- memaccept: 853f31f-dirty (rule set 2)", text)
        self.assertIn("- firmware (as it reports itself): EDK II revision 0x10000", text)
        self.assertIn("- firmware: `/fw/OVMF.fd`, SHA-256 `%s`, 4194304 bytes" % ("ab" * 32), text)
        self.assertIn("accelerator tcg (none (QEMU TCG) host), firmware loaded with bios", text)
        self.assertIn("This run booted under QEMU's TCG, a plain virtual machine", text)
        self.assertIn("Not judged here (n/a): whether accepted memory is really accepted", text)
        self.assertIn("Gate `must`: passed.", text)
        # Without provenance the report says so rather than guessing.
        rc, _, _ = run_report("--conformance", "--markdown", md, log("conformance-ovmf-verbose"))
        with open(md) as f:
            self.assertIn("no host provenance given", f.read())

    # ------------------------------------------------ --diff
    def test_diff(self):
        rc, out, err = run_report("--conformance", "--diff", log("conformance-tdx-emu"),
                                  log("conformance-snp-emu-rules2"))
        self.assertEqual(rc, 0, err)
        self.assertIn("rule sets differ (1, not recorded, 2)", out)
        self.assertIn("1 rule(s) worse, 2 better, ", out)
        self.assertRegex(out, r"Worse in B:\n  ebs.attempts +pass -> fail: 3 calls")
        self.assertRegex(out, r"Better in B:\n(  .*\n)*  acpi.mp_wakeup +fail -> n/a")
        self.assertRegex(out, r"Better in B:\n(  .*\n)*  efi.cc_final_events +warn -> n/a")
        self.assertRegex(out, r"Changed:\n(.*\n)*  snp.optin_present +n/a -> pass")
        self.assertRegex(out, r"\+ unaccepted.stable +\S+ \(new in B\)")
        rc, out, _ = run_report("--diff", log("conformance-ovmf-verbose"),
                                log("conformance-ovmf-verbose"))
        self.assertIn("0 rule(s) worse, 0 better, 0 otherwise changed, 35 the same", out)
        self.assertEqual(run_report("--conformance", "--diff", log("conformance-ovmf-verbose"))[0], 2)
        self.assertEqual(run_report("--conformance", "--diff", log("conformance-ovmf-verbose"),
                                    log("empty"))[0], 1)


if __name__ == "__main__":
    unittest.main()


class MakeConformance(unittest.TestCase):
    """`make conformance` end to end under QEMU (three boots of the production image, about
    10 s each): Debian's OVMF passes with every output written, a MUST failure makes the
    exit status non-zero, and a single-file image is judged through -bios."""

    def make(self, *args):
        d = tempfile.mkdtemp(prefix="memaccept-makeconf-")
        self.addCleanup(shutil.rmtree, d, True)
        r = subprocess.run(["make", "-s", "-C", ROOT, "conformance", "MEM=2G",
                            "CONFORMANCE_DIR=%s" % d] + list(args),
                           capture_output=True, text=True, timeout=900)
        return r, d

    def read(self, d, name):
        with open(os.path.join(d, name)) as f:
            return f.read()

    def test_debian_ovmf_passes_with_every_output(self):
        r, d = self.make()
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr)
        self.assertIn("conformance: gate must passed", r.stdout)
        self.assertEqual(junit_problems(self.read(d, "junit.xml")), [])
        self.assertEqual(ET.fromstring(self.read(d, "junit.xml")).get("failures"), "0")
        sarif = json.loads(self.read(d, "report.sarif"))
        self.assertEqual(sarif_problems(sarif), [])
        self.assertGreaterEqual(len(sarif["runs"][0]["tool"]["driver"]["rules"]), 30)
        prov = json.loads(self.read(d, "provenance.json"))
        self.assertEqual(prov["vm"]["firmware_load"], "pflash")
        self.assertRegex(prov["images"]["firmware_code"]["sha256"], r"^[0-9a-f]{64}$")
        self.assertRegex(prov["images"]["image"]["sha256"], r"^[0-9a-f]{64}$")
        md = self.read(d, "report.md")
        self.assertIn("### What this run can judge", md)
        self.assertRegex(md, r"- memaccept: \S+ \(rule set \d+\)")

    def test_a_must_failure_fails_the_run(self):
        # QEMU without ACPI: OVMF installs no MADT, acpi.madt (MUST) fails.
        r, d = self.make("MACHINE=acpi=off")
        self.assertNotEqual(r.returncode, 0, r.stdout[-3000:])
        self.assertRegex(r.stdout, r"conformance: gate must failed: .*acpi.madt \(MUST fail\)")
        junit = ET.fromstring(self.read(d, "junit.xml"))
        self.assertIsNotNone(junit.find("testsuite/testcase[@name='acpi.madt']/failure"))
        # The same run with the gate off reports and passes.
        r, _ = self.make("MACHINE=acpi=off", "CONFORMANCE_FAIL_ON=never")
        self.assertEqual(r.returncode, 0, r.stdout[-3000:])

    def test_a_single_file_image_through_bios(self):
        fw = "/usr/share/ovmf/OVMF.fd"
        if not os.path.exists(fw):
            self.fail("%s missing (Debian package ovmf)" % fw)
        r, d = self.make("BIOS=%s" % fw)
        self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr)
        prov = json.loads(self.read(d, "provenance.json"))
        self.assertEqual(prov["vm"]["firmware_load"], "bios")
        cmd = prov["command"]
        self.assertEqual(cmd[cmd.index("-bios") + 1], fw)
        self.assertFalse(any("pflash" in a for a in cmd))
        self.assertEqual(prov["images"]["firmware"]["bytes"], os.path.getsize(fw))
        self.assertIn("acpi.madt", self.read(d, "console.log"))
