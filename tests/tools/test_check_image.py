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


    def tiny_elf(self, tmp, fn, insn):
        """A one-function ELF with `insn` in function `fn`, built with the host's as/ld."""
        src, obj, elf = (os.path.join(tmp, n) for n in ("t.s", "t.o", "t.elf"))
        with open(src, "w") as f:
            f.write(".text\n.globl _start\n_start:\n ret\n.globl %s\n.type %s,@function\n%s:\n %s\n ret\n"
                    % (fn, fn, fn, insn))
        subprocess.run(["as", "-o", obj, src], check=True)
        subprocess.run(["ld", "-o", elf, obj], check=True)
        return elf

    def test_trapped_instructions_only_in_their_accessors(self):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            for insn in ("rdmsr", "wrmsr", "cpuid", "hlt", "out %al,(%dx)", "in (%dx),%al", "wbinvd"):
                bad = self.run_check(self.tiny_elf(tmp, "kernel_thing", insn), "prod")
                self.assertNotEqual(bad.returncode, 0, insn)
                self.assertIn("outside their accessors: kernel_thing", bad.stderr)
            ok = self.run_check(self.tiny_elf(tmp, "cpu_cpuid", "cpuid"), "prod")
            self.assertEqual(ok.returncode, 0, ok.stderr)

    def test_allocator_fast_path_takes_no_lock(self):
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            for fn, insn in (("palloc_alloc", "lock xadd %eax,(%rdi)"),
                             ("palloc_free", "xchg %eax,(%rdi)"),
                             ("palloc_free", "call _start")):
                bad = self.run_check(self.tiny_elf(tmp, fn, insn), "prod")
                self.assertNotEqual(bad.returncode, 0, insn)
                self.assertIn("fast path locks or calls out: " + fn, bad.stderr)
            ok = self.run_check(self.tiny_elf(tmp, "palloc_alloc", "mov (%rdi),%eax"), "prod")
            self.assertEqual(ok.returncode, 0, ok.stderr)

    def test_allocator_free_has_one_compare_exchange(self):
        # palloc_free's one LOCK CMPXCHG (the page byte: a double free on two CPUs at once
        # panics); a second one, or one in palloc_alloc, is refused.
        import tempfile
        cas = "lock cmpxchg %cl,(%rdi)"
        with tempfile.TemporaryDirectory() as tmp:
            ok = self.run_check(self.tiny_elf(tmp, "palloc_free", cas), "prod")
            self.assertEqual(ok.returncode, 0, ok.stderr)
            for fn, insn in (("palloc_free", cas + "\n " + cas), ("palloc_alloc", cas)):
                bad = self.run_check(self.tiny_elf(tmp, fn, insn), "prod")
                self.assertNotEqual(bad.returncode, 0, (fn, insn))
                self.assertIn("fast path locks or calls out: " + fn, bad.stderr)


if __name__ == "__main__":
    unittest.main()
