# SPDX-License-Identifier: MIT
# memaccept: conformance verdicts for CI: waivers, the exit gate, JUnit XML, SARIF 2.1.0, provenance, diffs.
"""Used by tools/report.py --conformance (docs/firmware.md, "In CI").

Waiver file: one waiver per line, `#` starts a comment:

    RULE  REASON...  [expires=YYYY-MM-DD] [firmware=TEXT]

RULE is a rule ID (map.sorted) or a prefix ending in `*` (unaccepted.*); REASON is free
text (required: a waiver says why); expires= stops the waiver from that day on (it is then
reported as expired and no longer applies); firmware= limits it to boots whose firmware
("VENDOR revision 0xREV") contains TEXT. A waived rule keeps its verdict in every output,
marked waived with the reason; it does not count against the gate.

The gate (--fail-on, CONFORMANCE_FAIL_ON): must (default) fails the run on any MUST rule
failed and not waived; should also on any SHOULD rule not met; never only reports.
"""
import datetime
import json
import re
import xml.etree.ElementTree as ET

GATES = ("must", "should", "never")
SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
TOOL_NAME = "memaccept-conformance"
RANGE_RE = re.compile(r"\[(0x[0-9a-f]+), (0x[0-9a-f]+)\)")


class WaiverError(ValueError):
    pass


class Waiver:
    def __init__(self, rule, reason, expires=None, firmware=None, line=0):
        self.rule, self.reason, self.expires, self.firmware, self.line = \
            rule, reason, expires, firmware, line
        self.used = False

    def matches_rule(self, rule):
        if self.rule.endswith("*"):
            return rule.startswith(self.rule[:-1])
        return rule == self.rule

    def expired(self, today):
        return self.expires is not None and today >= self.expires


def parse_waivers(text, where="waivers"):
    """[Waiver] from a waiver file's text; WaiverError names the line of the first problem."""
    out = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        rule, rest = words[0], words[1:]
        if not re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_]+)*(\.\*|\*)?", rule):
            raise WaiverError("%s:%d: %r is not a rule ID" % (where, n, rule))
        expires = firmware = None
        reason = []
        for w in rest:
            if w.startswith("expires="):
                try:
                    expires = datetime.date.fromisoformat(w[len("expires="):])
                except ValueError:
                    raise WaiverError("%s:%d: expires= wants YYYY-MM-DD, not %r" % (where, n, w))
            elif w.startswith("firmware="):
                firmware = w[len("firmware="):]
                if not firmware:
                    raise WaiverError("%s:%d: firmware= is empty" % (where, n))
            else:
                reason.append(w)
        if not reason:
            raise WaiverError("%s:%d: waiver of %s has no reason" % (where, n, rule))
        out.append(Waiver(rule, " ".join(reason), expires, firmware, n))
    return out


def firmware_id(event):
    fw = event.get("firmware") if isinstance(event.get("firmware"), str) else "?"
    rev = event.get("firmware_revision")
    return "%s revision %#x" % (fw, rev) if isinstance(rev, int) else fw


def apply_waivers(c, waivers, today=None):
    """Mark the checks of Conformance c that a waiver covers (check["waived"] = reason).
    Returns messages: expired waivers that would have applied, waivers that matched nothing."""
    today = today or datetime.date.today()
    fw = firmware_id(c.event)
    messages = []
    for check in c.checks:
        for w in waivers:
            if not w.matches_rule(check["rule"]):
                continue
            if w.firmware and w.firmware not in fw:
                continue
            if w.expired(today):
                if check["verdict"] in ("fail", "warn"):
                    messages.append("waiver line %d for %s expired on %s: not applied" %
                                    (w.line, check["rule"], w.expires))
                w.used = True
                continue
            w.used = True
            if check["verdict"] in ("fail", "warn"):
                check["waived"] = w.reason
            break
    for w in waivers:
        if not w.used:
            messages.append("waiver line %d (%s) matches no rule of this report" % (w.line, w.rule))
    return messages


def blocking(check, gate):
    """Does this check fail the run under gate?"""
    if check.get("waived") or gate == "never":
        return False
    if check["verdict"] == "fail":
        return True
    return gate == "should" and check["verdict"] == "warn"


def gate_failures(cs, gate):
    return [(c, x) for c in cs for x in c.checks if blocking(x, gate)]


# ---------------------------------------------------------------- provenance
def provenance_lines(c, prov):
    """Markdown bullet lines: what judged what."""
    e = c.event
    out = ["- memaccept: %s (rule set %s)" % (e.get("memaccept") or "version not reported "
                                               "(an image older than this field)",
                                               e.get("rule_set", "?")),
           "- firmware (as it reports itself): %s" % firmware_id(e)]
    if prov:
        for role, img in sorted((prov.get("images") or {}).items()):
            out.append("- %s: `%s`, SHA-256 `%s`, %s bytes" % (
                role.replace("_", " "), img.get("path"), img.get("sha256"), img.get("bytes")))
        vm = prov.get("vm") or {}
        out.append("- VM: %s RAM, %s vCPU, accelerator %s (%s host), firmware loaded with %s, "
                   "options `%s`" % (vm.get("mem"), vm.get("smp"), vm.get("accel"),
                                     vm.get("host"), vm.get("firmware_load"), vm.get("args")))
        out.append("- QEMU: %s" % (prov.get("qemu") or "?"))
        if prov.get("command"):
            out.append("- command: `%s`" % " ".join(prov["command"]))
    else:
        out.append("- no host provenance given (--provenance): image hash and VM configuration "
                   "unknown")
    if isinstance(e.get("efi_cpus"), int):
        out.append("- the guest saw: %d CPU(s) from the firmware, %d MiB conventional memory" %
                   (e["efi_cpus"], (e.get("conventional_bytes") or 0) >> 20))
    return out


def scope_lines(c, prov):
    """What this run could and could not judge, plainly (TCG versus a real host)."""
    accel = ((prov or {}).get("vm") or {}).get("accel")
    platform = c.event.get("platform")
    if accel == "kvm" and platform in ("tdx", "snp"):
        return ["This run booted under KVM on a real %s host: every rule was judged against the "
                "platform itself." % platform.upper()]
    out = ["This run booted under QEMU's TCG%s, a plain virtual machine "
           "with no TDX module and no SEV-SNP firmware." % (
               "" if accel == "tcg" else " (or a host not recorded: no --provenance)")]
    if platform in ("tdx", "snp"):
        out.append("The platform (%s) was memaccept's emulator in the test image, not hardware: "
                   "the platform rules judge the stand-in firmware the emulator plays, not your "
                   "image." % platform)
    out += ["- Judged for real: the memory map the firmware built (map.*, and unaccepted.* on "
            "any type 15 it reports), its ExitBootServices behaviour (ebs.*), its ACPI tables "
            "(acpi.*) and its EFI configuration tables (efi.*).",
            "- Not judged here (n/a): whether accepted memory is really accepted and unaccepted "
            "memory really unaccepted (accepted.probe, unaccepted.probe), the SEV-SNP opt-in "
            "and CC blob (snp.*, efi.cc_blob), TDX's AP memory and wakeup mailbox in a TD "
            "(tdx.*, acpi.mp_wakeup), and everything a TDX- or SNP-only image does only on its "
            "platform. Those need a TDX or SEV-SNP host: HOST=tdx|snp|snp-svsm "
            "(docs/firmware.md, \"On a real host\")."]
    return out


# ---------------------------------------------------------------- JUnit XML
def junit_xml(cs, gate, log_names=None):
    """One <testsuite> per report, one <testcase> per rule. Verdicts that fail the gate are
    <failure>; n/a and waived rules are <skipped>; a warning under the must gate passes
    with the warning in <system-out>, so red and green match the exit status. Valid
    against Jenkins' junit-4.xsd (the strictest of the JUnit schemas CI tools use)."""
    root = ET.Element("testsuites", name="memaccept firmware conformance")
    total = fails = 0
    for i, c in enumerate(cs):
        suite = ET.SubElement(root, "testsuite", name="conformance: %s" % c.title())
        n = f = s = 0
        props = ET.SubElement(suite, "properties")
        for k, v in (("firmware", firmware_id(c.event)), ("memaccept", c.event.get("memaccept")),
                     ("rule_set", c.event.get("rule_set")), ("platform", c.event.get("platform")),
                     ("gate", gate), ("log", c.path)):
            if v is not None:
                ET.SubElement(props, "property", name=k, value=str(v))
        for x in c.checks:
            n += 1
            tc = ET.SubElement(suite, "testcase", name=x["rule"],
                               classname="conformance.%s" % (x.get("level") or "-"))
            text = "%s %s: %s\nsource: %s" % (x["verdict"], x.get("level") or "-", x["detail"],
                                              x["source"])
            if x.get("action"):
                text += "\naction: %s" % x["action"]
            if x.get("waived"):
                s += 1
                # Jenkins' junit-4.xsd gives <skipped> no attributes: the reason is its text.
                ET.SubElement(tc, "skipped").text = "waived: %s\n%s" % (x["waived"], text)
            elif blocking(x, gate):
                f += 1
                ET.SubElement(tc, "failure", message=x["detail"],
                              type="%s %s" % (x.get("level") or "-", x["verdict"])).text = text
            elif x["verdict"] == "n/a":
                s += 1
                ET.SubElement(tc, "skipped").text = "n/a: %s" % x["detail"]
            else:
                ET.SubElement(tc, "system-out").text = text
        suite.set("tests", str(n))
        suite.set("failures", str(f))
        suite.set("errors", "0")
        suite.set("skipped", str(s))
        total, fails = total + n, fails + f
    root.set("tests", str(total))
    root.set("failures", str(fails))
    root.set("errors", "0")
    # junit-4.xsd (Jenkins) has no skipped attribute on <testsuites>: the suites carry it.
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------- SARIF 2.1.0
# SARIF 2.1.0 section 3.27.9: a result whose kind is not "fail" has level "none".
SARIF_LEVEL = {"fail": "error", "warn": "warning", "info": "none", "pass": "none", "n/a": "none"}
SARIF_KIND = {"fail": "fail", "warn": "fail", "info": "informational", "pass": "pass",
              "n/a": "notApplicable"}
DEFAULT_LEVEL = {"MUST": "error", "SHOULD": "warning", "INFO": "note"}


def console_lines(path):
    """rule -> 1-based line of its verdict line in the console log (the SARIF region)."""
    out = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = re.match(r"conformance: (?:pass|warn|fail|n/a|info) +\S+ +(\S+) ", line)
                if m and m.group(1) not in out:
                    out[m.group(1)] = n
    except OSError:
        pass
    return out


def sarif(cs, version=None):
    """A SARIF 2.1.0 log (OASIS SARIF 2.1.0, sections 3.13 sarifLog, 3.14 run, 3.19
    toolComponent, 3.27 result): one run per report, one reportingDescriptor per rule, one
    result per verdict (kind pass/fail/notApplicable/informational), located at the
    verdict's line in the console log and, for map rules, at the address range (a logical
    location). A waived result carries an external suppression with the reason."""
    runs = []
    for c in cs:
        rules, index = [], {}
        for x in c.checks:
            if x["rule"] in index:
                continue
            index[x["rule"]] = len(rules)
            level = x.get("level") or "-"
            rd = {"id": x["rule"],
                  "shortDescription": {"text": "%s rule %s" % (level, x["rule"])},
                  "fullDescription": {"text": x["source"]},
                  "defaultConfiguration": {"level": DEFAULT_LEVEL.get(level, "warning")},
                  "properties": {"level": level, "own": x.get("own") is True,
                                 "source": x["source"]}}
            if x.get("action"):
                rd["help"] = {"text": x["action"]}
            rules.append(rd)
        where = console_lines(c.path)
        results = []
        for x in c.checks:
            loc = {"physicalLocation": {"artifactLocation": {"uri": c.path.replace("\\", "/")}}}
            if x["rule"] in where:
                loc["physicalLocation"]["region"] = {"startLine": where[x["rule"]]}
            ranges = RANGE_RE.findall(x["detail"])
            if ranges:
                loc["logicalLocations"] = [{"name": "[%s, %s)" % r, "kind": "memoryRange",
                                            "fullyQualifiedName": "memory map [%s, %s)" % r}
                                           for r in ranges]
            text = x["detail"]
            if x.get("action"):
                text = "%s. Action: %s" % (text.rstrip("."), x["action"])
            r = {"ruleId": x["rule"], "ruleIndex": index[x["rule"]],
                 "kind": SARIF_KIND[x["verdict"]], "level": SARIF_LEVEL[x["verdict"]],
                 "message": {"text": text}, "locations": [loc]}
            if x.get("waived"):
                r["suppressions"] = [{"kind": "external", "status": "accepted",
                                      "justification": x["waived"]}]
            results.append(r)
        runs.append({
            "tool": {"driver": {"name": TOOL_NAME,
                                "version": str(c.event.get("memaccept") or version or "unknown"),
                                "rules": rules}},
            "properties": {"firmware": firmware_id(c.event), "platform": c.event.get("platform"),
                           "rule_set": c.event.get("rule_set")},
            "results": results})
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": runs}


def sarif_text(cs):
    return json.dumps(sarif(cs), indent=1) + "\n"


# ---------------------------------------------------------------- diff
def diff(a, b):
    """Lines that say how report b differs from report a, rule by rule."""
    va = {x["rule"]: x for x in a.checks}
    vb = {x["rule"]: x for x in b.checks}
    order = list(va) + [r for r in vb if r not in va]
    # Worse means a rule now not met (or failing where it warned); between pass, info and
    # n/a (a rule that applies differently) the verdict only changed.
    rank = {"fail": 0, "warn": 1, "pass": 2, "info": 2, "n/a": 2}
    worse, better, changed, same = [], [], [], 0
    for r in order:
        x, y = va.get(r), vb.get(r)
        if x is None:
            changed.append("+ %-28s %s (new in B): %s" % (r, y["verdict"], y["detail"]))
        elif y is None:
            changed.append("- %-28s %s (not in B)" % (r, x["verdict"]))
        elif x["verdict"] != y["verdict"]:
            line = "  %-28s %s -> %s: %s" % (r, x["verdict"], y["verdict"], y["detail"])
            if rank[y["verdict"]] < rank[x["verdict"]]:
                worse.append(line)
            elif rank[y["verdict"]] > rank[x["verdict"]]:
                better.append(line)
            else:
                changed.append(line)
        elif x["detail"] != y["detail"]:
            changed.append("  %-28s %s, detail: %s -> %s" % (r, y["verdict"], x["detail"],
                                                            y["detail"]))
        else:
            same += 1
    out = ["A: %s (%s)" % (a.path, a.title()), "B: %s (%s)" % (b.path, b.title()),
           "%d rule(s) worse, %d better, %d otherwise changed, %d the same" % (
               len(worse), len(better), len(changed), same)]
    if a.event.get("rule_set") != b.event.get("rule_set"):
        out.append("rule sets differ (%s, %s): a rule's meaning may have changed "
                   "(docs/firmware.md, \"Rule set versions\")" % (
                       a.event.get("rule_set", "1, not recorded"),
                       b.event.get("rule_set", "1, not recorded")))
    for title, lines in (("Worse in B", worse), ("Better in B", better), ("Changed", changed)):
        if lines:
            out += ["", title + ":"] + lines
    return out, len(worse)
