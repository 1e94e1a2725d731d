# SPDX-License-Identifier: MIT
# memaccept: the documentation stays true: tests/README.md lists every test, links resolve, nothing points outside the repository.
import glob
import os
import re
import subprocess
import tomllib
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Markdown links [text](target) and bare mentions of a docs/ document.
LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
DOC_MENTION_RE = re.compile(r"(?<![\w/.])(docs/[\w-]+\.md)")
# A mention of a Markdown document by path, or of a capitalised one by name (README.md
# and the like): it must be in the repository. Lower-case names without a path that climbs
# are what the tools write (report.md) and are left alone.
MD_MENTION_RE = re.compile(r"(?<![\w.-])((?:\.{1,2}/|/)?(?:[\w.-]+/)*[\w-]+\.md)\b")


def tracked_files():
    """Files of the repository: git's list when there is one, else a walk without build/."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                             check=True).stdout
        files = [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
    # Files added but not yet committed count too.
    for d, dirs, names in os.walk(ROOT):
        dirs[:] = [x for x in dirs if x not in (".git", "build")]
        files += [os.path.relpath(os.path.join(d, n), ROOT) for n in names]
    return sorted(set(files))


def markdown_files():
    return ["README.md", "tests/README.md"] + sorted(
        os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def broken_links(rel, text, exists=os.path.exists):
    """Relative link targets in text (a Markdown file at rel) that do not exist."""
    bad = []
    targets = [(m.group(1), True) for m in LINK_RE.finditer(text)]
    targets += [(m.group(1), False) for m in DOC_MENTION_RE.finditer(text)]
    for target, relative in targets:
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # URLs and anchors
        path = target.split("#")[0]
        full = os.path.normpath(os.path.join(ROOT, os.path.dirname(rel) if relative else "",
                                             path))
        repo_rel = os.path.relpath(full, ROOT)
        if repo_rel.startswith("..") or not exists(full):
            bad.append("%s -> %s" % (rel, target))
    return bad


class TestsReadme(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(ROOT, "tests", "README.md")) as f:
            self.text = f.read()

    def test_every_qemu_case_is_listed(self):
        with open(os.path.join(ROOT, "tests", "qemu", "manifest.toml"), "rb") as f:
            cases = [c["name"] for c in tomllib.load(f)["case"]]
        missing = [c for c in cases if "`%s`" % c not in self.text]
        self.assertEqual(missing, [], "cases missing from tests/README.md")

    def test_every_test_file_is_listed(self):
        files = [os.path.basename(p) for p in
                 glob.glob(os.path.join(ROOT, "tests", "unit", "test_*.c")) +
                 glob.glob(os.path.join(ROOT, "tests", "tools", "test_*.py"))]
        missing = [f for f in files if "`%s`" % f not in self.text]
        self.assertEqual(missing, [], "test files missing from tests/README.md")


class Docs(unittest.TestCase):
    def test_readme_links_the_docs(self):
        with open(os.path.join(ROOT, "README.md")) as f:
            text = f.read()
        for doc in ("docs/design.md", "docs/firmware.md", "docs/tdx.md", "docs/snp.md"):
            self.assertIn("](%s)" % doc, text, "README.md does not link %s" % doc)

    def test_links_resolve(self):
        bad = []
        for rel in markdown_files():
            with open(os.path.join(ROOT, rel)) as f:
                bad += broken_links(rel, f.read())
        self.assertEqual(bad, [], "links to files that do not exist")

    def test_link_checker_catches_a_broken_link(self):
        # The checker itself: a missing file, a path out of the repository and a link that
        # is wrong relative to its own file are all reported.
        text = "[a](nope.md) [b](../../etc/passwd) [c](docs/design.md) docs/missing.md"
        self.assertEqual(broken_links("README.md", text),
                         ["README.md -> nope.md", "README.md -> ../../etc/passwd",
                          "README.md -> docs/missing.md"])
        self.assertEqual(broken_links("docs/firmware.md", "[x](tdx.md)"), [])
        self.assertEqual(broken_links("docs/firmware.md", "[x](docs/tdx.md)"),
                         ["docs/firmware.md -> docs/tdx.md"])
        self.assertEqual(broken_links("docs/firmware.md", "[x](design.md)", lambda p: False),
                         ["docs/firmware.md -> design.md"])

    def test_nothing_points_outside_the_repository(self):
        files = tracked_files()
        hits = []
        for rel in files:
            try:
                with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue  # binary files
            for n, line in enumerate(text.splitlines(), 1):
                for doc in outside_documents(rel, line, files):
                    hits.append("%s:%d: %s" % (rel, n, doc))
        self.assertEqual(hits, [], "documents that are not in the repository")

    def test_outside_pattern(self):
        files = ["README.md", "docs/design.md", "tests/README.md"]
        for bad in ("see NOTES" + ".md", "(../notes/PLAN" + ".md)", "/srv/x/PLAN" + ".md",
                    "../../README" + ".md", "../../notes/plan" + ".md"):
            self.assertTrue(outside_documents("docs/x.md", bad, files), bad)
        for good in ("docs/design" + ".md", "design" + ".md", "README" + ".md",
                     "../tests/README" + ".md", "build/bench/report" + ".md",
                     "the whole design avoids"):
            self.assertFalse(outside_documents("docs/x.md", good, files), good)


class DocsMatchCode(unittest.TestCase):
    """The names and GUIDs the documents give for firmware interfaces are the code's."""

    def test_protocol_names_match_the_code(self):
        code = read_code()
        docs = read_docs()
        self.assertEqual(protocol_name_problems(code, docs), [])

    def test_guids_in_the_docs_are_the_codes(self):
        code_guids = guids_in_code(read_code())
        self.assertIn("c5a010fe-38a7-4531-8a4a-0500d2fd1649", code_guids)
        bad = []
        for rel, text in read_docs().items():
            for g in GUID_RE.findall(text):
                if g.lower() not in code_guids:
                    bad.append("%s: %s" % (rel, g))
        self.assertEqual(bad, [], "GUIDs in the documents that no code defines")

    def test_checker_catches_a_wrong_name_and_guid(self):
        code = {"boot/boot.h": "#define OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL_GUID \\\n"
                "\t{ 0xc5a010fe, 0x38a7, 0x4531, { 0x8a, 0x4a, 0x05, 0x00, 0xd2, 0xfd, 0x16, 0x49 } }\n"}
        self.assertEqual(guids_in_code(code), {"c5a010fe-38a7-4531-8a4a-0500d2fd1649"})
        self.assertEqual(protocol_name_problems(code, {"docs/x.md": "OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL, "
                                                       "gOvmfSevMemoryAcceptanceProtocolGuid"}), [])
        self.assertEqual(protocol_name_problems(code, {"docs/x.md": "EDKII_SEV_MEMORY_ACCEPTANCE_PROTOCOL"}),
                         ["docs/x.md: EDKII_SEV_MEMORY_ACCEPTANCE_PROTOCOL"])
        self.assertEqual(protocol_name_problems(code, {"docs/x.md": "gEdkiiSevMemoryAcceptanceProtocolGuid"}),
                         ["docs/x.md: gEdkiiSevMemoryAcceptanceProtocolGuid"])


class RulesMatchDocs(unittest.TestCase):
    """Every conformance rule the kernel can report is documented in docs/firmware.md
    with its level, and the checklist links each MUST/SHOULD rule; nothing documented
    is a rule the kernel does not have."""

    def test_every_rule_is_documented(self):
        rules = rules_in_code(read_code()["kernel/conformance.c"])
        self.assertGreaterEqual(len(rules), 30)
        docs = read_docs()
        self.assertEqual(rule_doc_problems(rules, docs["docs/firmware.md"],
                                           docs["docs/firmware-checklist.md"]), [])

    def test_checker_catches_a_missing_and_an_unknown_rule(self):
        rules = {"map.overlap": "MUST", "map.size": "INFO"}
        doc = "| `map.overlap` | MUST | x |\n| `map.size` | INFO, memaccept's own | y |\n"
        checklist = "- MUST x ([`map.overlap`](firmware.md#the-memory-map)).\n"
        self.assertEqual(rule_doc_problems(rules, doc, checklist), [])
        self.assertEqual(rule_doc_problems(rules, doc.replace("| MUST |", "| SHOULD |"), checklist),
                         ["docs/firmware.md: map.overlap is not documented as MUST"])
        self.assertEqual(rule_doc_problems(rules, doc, ""),
                         ["checklist: map.overlap (MUST) not linked"])
        self.assertEqual(rule_doc_problems(rules, doc, checklist + "[`map.gone`](firmware.md)"),
                         ["checklist: map.gone is no rule"])


# MUST("map.desc_size", ...), OWN_SHOULD(...), INFO(...) in kernel/conformance.c's registry.
RULE_RE = re.compile(r"\b(?:OWN_)?(MUST|SHOULD|INFO)\(\"([a-z0-9_]+\.[a-z0-9_]+)\"")


def rules_in_code(text):
    return {m.group(2): m.group(1) for m in RULE_RE.finditer(text)}


def rule_doc_problems(rules, firmware_md, checklist):
    bad = []
    for rule, level in sorted(rules.items()):
        if not re.search(r"^\| `%s` \| %s\b" % (re.escape(rule), level), firmware_md, re.M):
            bad.append("docs/firmware.md: %s is not documented as %s" % (rule, level))
        if level != "INFO" and "[`%s`](firmware.md" % rule not in checklist:
            bad.append("checklist: %s (%s) not linked" % (rule, level))
    for rule in re.findall(r"\[`([a-z0-9_]+\.[a-z0-9_]+)`\]\(firmware\.md", checklist):
        if rule not in rules:
            bad.append("checklist: %s is no rule" % rule)
    return bad


GUID_RE = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
# A C GUID initializer: { 0xAAAAAAAA, 0xBBBB, 0xCCCC, { 0xDD, ... 8 bytes } }
C_GUID_RE = re.compile(r"\{\s*0x([0-9a-fA-F]{1,8}),\s*0x([0-9a-fA-F]{1,4}),\s*0x([0-9a-fA-F]{1,4}),\s*"
                       r"\{((?:\s*0x[0-9a-fA-F]{1,2}\s*,){7}\s*0x[0-9a-fA-F]{1,2})\s*\}\s*\}")
# edk2's names for the SEV-SNP opt-in protocol, in any spelling a document might use.
PROTOCOL_RE = re.compile(r"\b[A-Z][A-Z0-9]*_SEV_MEMORY_ACCEPTANCE_PROTOCOL\b|\bg\w*SevMemoryAcceptance\w*Guid\b")
# What edk2 calls it (OvmfPkg/Include/Protocol/SevMemoryAcceptance.h, OvmfPkg/OvmfPkg.dec).
PROTOCOL_NAMES = {"OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL", "gOvmfSevMemoryAcceptanceProtocolGuid"}


def read_code():
    out = {}
    for pattern in ("boot/*.[ch]", "boot/test/*.[ch]", "kernel/*.[ch]", "arch/x86/*.[ch]"):
        for p in glob.glob(os.path.join(ROOT, pattern)):
            with open(p) as f:
                out[os.path.relpath(p, ROOT)] = f.read()
    return out


def read_docs():
    out = {}
    for rel in markdown_files():
        with open(os.path.join(ROOT, rel)) as f:
            out[rel] = f.read()
    return out


def guids_in_code(code):
    guids = set()
    for text in code.values():
        for m in C_GUID_RE.finditer(text):
            b = [int(x, 16) for x in m.group(4).replace(" ", "").split(",")]
            guids.add("%08x-%04x-%04x-%02x%02x-%s" % (int(m.group(1), 16), int(m.group(2), 16),
                                                       int(m.group(3), 16), b[0], b[1],
                                                       "".join("%02x" % x for x in b[2:])))
    return guids


def protocol_name_problems(code, docs):
    """Spellings of the opt-in protocol's name that are not edk2's, in the code or the docs;
    and the code must define the GUID under edk2's name."""
    bad = []
    if not any("OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL_GUID" in t for t in code.values()):
        bad.append("code: no OVMF_SEV_MEMORY_ACCEPTANCE_PROTOCOL_GUID")
    for rel, text in list(code.items()) + list(docs.items()):
        for name in PROTOCOL_RE.findall(text):
            if name not in PROTOCOL_NAMES:
                bad.append("%s: %s" % (rel, name))
    return bad


def outside_documents(rel, line, files):
    """Markdown documents a line of file rel mentions that the repository does not have:
    a path that climbs out of the repository, or a capitalised document that is neither
    a path from rel's folder or the root nor the name of a document here."""
    names = {os.path.basename(f) for f in files if f.endswith(".md")}
    bad = []
    for doc in MD_MENTION_RE.findall(line):
        base = os.path.basename(doc)
        here = os.path.normpath(os.path.join(os.path.dirname(rel), doc))
        if doc.startswith("../") and here.startswith(".."):
            bad.append(doc)
        elif base[:1].isupper() and here not in files and os.path.normpath(doc) not in files \
                and ("/" in doc or doc not in names):
            bad.append(doc)
    return bad


if __name__ == "__main__":
    unittest.main()
