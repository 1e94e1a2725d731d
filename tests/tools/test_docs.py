# SPDX-License-Identifier: MIT
# memaccept: tests/README.md lists every QEMU case and every test file, so it stays true.
import glob
import os
import tomllib
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


if __name__ == "__main__":
    unittest.main()
