# SPDX-License-Identifier: MIT
# memaccept: the post-link checks can fail: the test image's ELF must not pass as a production image.
import os
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(ROOT, "tools", "check-image.sh")
PROD = os.path.join(ROOT, "build", "memaccept.elf")
TEST = os.path.join(ROOT, "build", "memaccept-test.elf")


@unittest.skipUnless(os.path.exists(PROD) and os.path.exists(TEST), "images not built")
class CheckImage(unittest.TestCase):
    def run_check(self, elf, kind):
        return subprocess.run(["sh", CHECK, elf, kind], capture_output=True, text=True)

    def test_production_image_passes(self):
        p = self.run_check(PROD, "prod")
        self.assertEqual(p.returncode, 0, p.stderr)

    def test_emulator_symbols_fail_a_production_check(self):
        p = self.run_check(TEST, "prod")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("test-only symbols", p.stderr)

    def test_production_image_has_the_backends(self):
        # No test-only symbols: test_production_image_passes (check-image.sh owns that list).
        syms = subprocess.run(["nm", PROD], capture_output=True, text=True).stdout.split()
        self.assertIn("tdx_tdcall", syms)
        self.assertIn("snp_pvalidate", syms)

    def test_cc_instructions_only_in_their_backends(self):
        asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", PROD], capture_output=True,
                             text=True).stdout
        fn, seen = None, {}
        for line in asm.splitlines():
            if line.endswith(">:"):
                fn = line.split("<", 1)[1][:-2]
            for insn in ("tdcall", "pvalidate", "vmgexit"):
                if "\t" + insn in line:
                    seen.setdefault(insn, set()).add(fn)
        self.assertEqual(seen.get("tdcall"), {"tdx_tdcall"})
        self.assertEqual(seen.get("pvalidate"), {"snp_pvalidate"})
        self.assertEqual(seen.get("vmgexit"), {"snp_vmgexit"})


if __name__ == "__main__":
    unittest.main()
