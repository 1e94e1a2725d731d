# SPDX-License-Identifier: MIT
# memaccept: tools/judge.py, the offline judge: its three capture parsers and agreement with the guest.
"""Fixture logs/conformance-ovmf-verbose.log: `make conformance CONFORMANCE_ARGS=verbose=1`
(production image, Debian's OVMF 4 MiB flash, 4 GiB): 124 raw descriptors, the guest's
map.sorted warning (descriptor 122, 0xb0000000, after RAM at 4 GiB).

The memmap and efi=debug texts below are written in the formats of edk2's ShellPkg
(UefiShellDebug1CommandsLib.uni STR_MEMMAP_LIST_ITEM "% -10s %016LX-%016LX %016LX
%016LX", STR_MEMMAP_LIST_ITEM_SFO) and Linux (efi_print_memmap "mem%02u: %s
range=[0x%016llx-0x%016llx] (%lluMB)", efi_md_typeattr_format), not captured from a real
machine; the expected verdicts are read off the crafted maps by hand.
"""
import os
import re
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "tests", "qemu"))

import judge  # noqa: E402
import checks  # noqa: E402

FIXTURE = os.path.join(HERE, "logs", "conformance-ovmf-judge.log")
WB, RUN = 0x8, 1 << 63
SHELL_NAMES = {0: "Reserved", 1: "LoaderCode", 2: "LoaderData", 3: "BS_Code", 4: "BS_Data",
               5: "RT_Code", 6: "RT_Data", 7: "Available", 9: "ACPI_Recl", 10: "ACPI_NVS",
               11: "MMIO", 15: "Unaccepted"}
LINUX_NAMES = {0: "Reserved", 1: "Loader Code", 2: "Loader Data", 3: "Boot Code", 4: "Boot Data",
               5: "Runtime Code", 6: "Runtime Data", 7: "Conventional", 9: "ACPI Reclaim",
               10: "ACPI Mem NVS", 11: "MMIO", 15: "Unaccepted"}


def shell_memmap(descs):
    """A `memmap` listing of descs as the UEFI shell prints it."""
    out = ["Type       Start            End              # Pages          Attributes"]
    for t, s, p, a in descs:
        name = SHELL_NAMES[t] if t in SHELL_NAMES else "%08x" % t
        out.append("%-10s %016X-%016X %016X %016X" % (name, s, s + p * 4096 - 1, p, a))
    out += [" ", "  Reserved  :              1 Pages (4,096 Bytes)"]
    return "\r\n".join(out) + "\r\n"


def linux_flags(a):
    names = [("RUN", 1 << 63), ("HP", 1 << 20), ("MR", 1 << 16), ("CC", 1 << 19),
             ("SP", 1 << 18), ("NV", 1 << 15), ("XP", 1 << 14), ("RP", 1 << 13), ("WP", 1 << 12),
             ("RO", 1 << 17), ("UCE", 1 << 4), ("WB", 1 << 3), ("WT", 1 << 2), ("WC", 1 << 1),
             ("UC", 1 << 0)]
    return "|".join("%*s" % (len(n), n if a & bit else "") for n, bit in names)


def linux_log(descs, features=None):
    """efi=debug lines of descs as Linux prints them (with a dmesg time stamp)."""
    out = ["[    0.000000] efi: EFI v2.7 by EDK II"]
    if features:
        out.append("[    0.000000] Memory Encryption Features active: %s" % features)
    for i, (t, s, p, a) in enumerate(descs):
        out.append("[    0.000000] efi: mem%02u: [%-12s|%s] range=[0x%016x-0x%016x] (%dMB)" % (
            i, LINUX_NAMES.get(t, "type=%d" % t) if t in LINUX_NAMES else "type=%d" % t,
            linux_flags(a), s, s + p * 4096 - 1, p >> 8))
    return "\n".join(out) + "\n"


def verdict_map(verdicts):
    return {r: (v, d) for r, _, v, d in verdicts}


class OfflineJudge(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        r = subprocess.run(["make", "-s", "-C", ROOT, "build/memaccept-judge"],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError("make build/memaccept-judge: %s" % r.stderr)
        with open(FIXTURE) as f:
            cls.text = f.read()

    def write(self, text):
        fd, path = tempfile.mkstemp(prefix="memaccept-judge-", suffix=".log")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        return path

    def run_judge(self, *args):
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "judge.py")] + list(args),
                           capture_output=True, text=True)
        return r.returncode, r.stdout, r.stderr

    # ------------------------------------------------ the done-when: same verdicts as the guest
    def test_same_verdicts_as_the_guest(self):
        rc, out, err = self.run_judge("--compare", FIXTURE)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("0 rule(s) differ", out)
        self.assertEqual(len(re.findall(r"^same ", out, re.M)), 16)
        self.assertIn("map.size_handshake", out)
        self.assertRegex(out, r"skip +map.alloc_type15 +not in this capture")
        self.assertRegex(out, r"info +INFO +map.sorted +descriptor 122 \[0xb0000000, 0xc0000000\) "
                         r"starts below its predecessor \[0x100000000, 0x180000000\)")

    def test_a_changed_map_is_told_apart(self):
        # Planted fault: the dump's descriptor 122 moved up to where it would be in order;
        # the guest judged the real map, so map.sorted must differ.
        text = self.text.replace('"i":122,"type":0,"start":2952790016',
                                 '"i":122,"type":0,"start":9663676416')
        rc, out, _ = self.run_judge("--compare", self.write(text))
        self.assertEqual(rc, 1, out)
        self.assertRegex(out, r"DIFF +map.sorted +offline info, guest info: offline "
                         r"'descriptor 123 \[0xffc00000, ")
        # The QEMU check built on the same comparison fails the same way.
        self.assertTrue(any("map.sorted" in p for p in
                            checks.offline_judge_agrees({}, [], text)))
        self.assertEqual(checks.offline_judge_agrees({}, [], self.text), [])

    def test_log_without_map_dump(self):
        text = "\n".join(l for l in self.text.split("\n") if '"memdesc"' not in l)
        rc, out, err = self.run_judge("--format", "memaccept", self.write(text))
        self.assertEqual(rc, 2)
        self.assertIn("no memdesc events: boot with verbose=1", err)
        rc, out, err = self.run_judge(self.write("hello\n"))
        self.assertEqual(rc, 2)
        self.assertIn("not a memaccept console", err)

    # ------------------------------------------------ three formats, one map, one judgement
    def test_formats_agree_on_the_same_map(self):
        c = judge.parse_memaccept(self.text)
        want = verdict_map(judge.judge(c))
        for fmt, text in (("memmap", shell_memmap(c.descs)), ("linux", linux_log(c.descs))):
            got = judge.parse_memmap(text) if fmt == "memmap" else judge.parse_linux(text)
            self.assertEqual(got.descs, c.descs, fmt)
            got.platform, got.ebs_attempts = "none", 1
            v = verdict_map(judge.judge(got))
            for rule, (verdict, detail) in want.items():
                if rule in judge.DESC_RULES:
                    self.assertEqual(v[rule][0], "n/a", (fmt, rule))
                    self.assertIn("gives no descriptor size", v[rule][1])
                elif rule != "map.size":
                    self.assertEqual(v[rule], (verdict, detail), (fmt, rule))

    # ------------------------------------------------ the UEFI shell's memmap
    def test_memmap_with_type_15_on_a_plain_vm(self):
        descs = [(7, 0, 0xa0, 0xf), (15, 0x100000000, 0x40000, 0xf),
                 (7, 0x13ff00000, 0x100, 0xf),          # inside the type 15 range
                 (15, 0x200001000, 0x100, WB | RUN), (0x80000001, 0xfe000000, 16, 1)]
        path = self.write(shell_memmap(descs))
        rc, out, err = self.run_judge("--platform", "none", path)
        self.assertEqual(rc, 0, err)
        self.assertIn("(memmap capture, 5 descriptors, platform none)", out)
        self.assertRegex(out, r"FAIL +MUST +map.overlap .*\[0x100000000, 0x140000000\) and "
                         r"\[0x13ff00000, 0x140000000\)")
        self.assertRegex(out, r"FAIL +MUST +unaccepted.platform .*first \[0x100000000, 0x140000000\)")
        self.assertRegex(out, r"FAIL +MUST +unaccepted.runtime .*first \[0x200001000, 0x200101000\)")
        self.assertRegex(out, r"WARN +SHOULD +unaccepted.alignment .*1024 KiB from 0x200001000")
        self.assertRegex(out, r"n/a +MUST +map.desc_size +not in this capture")
        self.assertRegex(out, r"n/a +SHOULD +unaccepted.stable +not in this capture")
        # Without --platform the platform rules are not judged.
        rc, out, _ = self.run_judge(path)
        self.assertRegex(out, r"n/a +MUST +unaccepted.platform +not in this capture: the platform")

    def test_memmap_sfo(self):
        text = ('ShellCommand,"memmap"\r\n'
                'MemoryMap,"Available","0","9FFFF","A0","F"\r\n'
                'MemoryMap,"Unaccepted","100000000","13FFFFFFF","40000","F"\r\n'
                'MemoryMapSummary,"1","2","3","4","5","6","7","8","9","10","11","12","13","14",'
                '"15","16", "17"\r\n')
        c = judge.parse_memmap(text)
        self.assertEqual(c.descs, [(7, 0, 0xa0, 0xf), (15, 0x100000000, 0x40000, 0xf)])
        with self.assertRaises(judge.CaptureError):
            judge.parse_memmap("Frobnicated 0000000000000000-0000000000000FFF "
                               "0000000000000001 000000000000000F\n")

    # ------------------------------------------------ Linux efi=debug
    def test_linux_efi_debug(self):
        descs = [(7, 0, 0xa0, 0xf), (0, 0xa0000, 0x60, 0x1),
                 (15, 0x100000000, 0x40000, 0xf), (15, 0x140000000, 0x80, 0xf | RUN)]
        text = linux_log(descs, "Intel TDX")
        c = judge.parse_linux(text)
        self.assertEqual(c.descs, descs)
        self.assertEqual(c.platform, "tdx")
        v = verdict_map(judge.judge(c))
        self.assertEqual(v["unaccepted.platform"][0], "pass")
        self.assertEqual(v["unaccepted.runtime"][0], "fail")
        self.assertIn("first [0x140000000, 0x140080000)", v["unaccepted.runtime"][1])
        # Judged per descriptor, as Linux's EFI stub takes them: the 512 KiB one is accepted
        # whole at boot although it touches the 1 GiB one.
        self.assertEqual(v["unaccepted.alignment"][0], "warn")
        self.assertIn("512 KiB from 0x140000000", v["unaccepted.alignment"][1])
        self.assertEqual(judge.parse_linux(linux_log(descs, "AMD SEV SEV-ES SEV-SNP")).platform,
                         "snp")
        self.assertIsNone(judge.parse_linux(linux_log(descs)).platform)

    def test_linux_old_names_raw_attributes_and_invalid_entries(self):
        text = ("efi: mem00: [Conventional Memory|   |  |  |  |  |  |   |WB|WT|WC|UC] "
                "range=[0x0000000000000000-0x000000000009ffff] (0MB)\n"
                "efi: mem01: [type=99            |attr=0x0000000001000001] "
                "range=[0x00000000fe000000-0x00000000fe00ffff] (0MB)\n")
        c = judge.parse_linux(text)
        self.assertEqual(c.descs, [(7, 0, 0xa0, 0xf), (99, 0xfe000000, 16, 0x1000001)])
        # efi_clean_memmap dropped mem01 (it printed it first, as invalid); the listing
        # renumbered the rest.
        text = ("efi: mem01: [Conventional|   |  |  |  |  |  |  |  |  |   |WB|WT|WC|UC] "
                "range=[0x0000000000100000-0x00000000000fffff] (invalid)\n"
                "efi: mem00: [Conventional|   |  |  |  |  |  |  |  |  |   |WB|WT|WC|UC] "
                "range=[0x0000000000000000-0x000000000009ffff] (0MB)\n"
                "efi: mem01: [Reserved    |   |  |  |  |  |  |  |  |  |   |  |  |  |UC] "
                "range=[0x00000000000a0000-0x00000000000fffff] (0MB)\n")
        c = judge.parse_linux(text)
        self.assertEqual(c.descs, [(7, 0, 0xa0, 0xf), (7, 0x100000, 0, 0xf), (0, 0xa0000, 0x60, 1)])
        v = verdict_map(judge.judge(c))
        self.assertEqual(v["map.alignment"][0], "fail")
        self.assertIn("descriptor 1 (start 0x100000, 0 pages)", v["map.alignment"][1])


if __name__ == "__main__":
    unittest.main()
