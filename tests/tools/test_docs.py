# SPDX-License-Identifier: MIT
# memaccept: the documentation stays true: tests/README.md lists every test, links resolve, nothing points outside the repository.
import glob
import os
import re
import subprocess
import tomllib
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SELF = os.path.relpath(os.path.abspath(__file__), ROOT)

# Markdown links [text](target) and bare docs/NAME.md mentions.
LINK_RE = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
DOC_MENTION_RE = re.compile(r"(?<![\w/.])(docs/[\w-]+\.md)")
# A private design note that is not part of the repository, and anything outside it.
OUTSIDE_RE = re.compile(r"\bDESIGN(?:\.md|'s\b| section)|\.\./shared\b|/work/shared|"
                        r"\bREFERENCES\.md|\bSTYLE\.md")


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
        hits = []
        for rel in tracked_files():
            if rel == SELF:
                continue  # the patterns themselves
            try:
                with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                    text = f.read()
            except (UnicodeDecodeError, OSError):
                continue  # binary files
            for n, line in enumerate(text.splitlines(), 1):
                if OUTSIDE_RE.search(line):
                    hits.append("%s:%d: %s" % (rel, n, line.strip()[:100]))
        self.assertEqual(hits, [], "references to files outside the repository")

    def test_outside_pattern(self):
        for bad in ("see DESIGN" + ".md", "(DESIGN section 3)", "Unlike DESIGN's step 4",
                    "../" + "shared/x", "/work/" + "shared/REFERENCES.md"):
            self.assertTrue(OUTSIDE_RE.search(bad), bad)
        for good in ("the whole design avoids", "docs/design.md", "Linux asm/shared/tdx.h"):
            self.assertFalse(OUTSIDE_RE.search(good), good)


if __name__ == "__main__":
    unittest.main()
