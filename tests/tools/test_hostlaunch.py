# SPDX-License-Identifier: MIT
# memaccept: tools/hostlaunch.py, the real-host launcher: its host checks and its QEMU/KVM command lines.
"""The launcher has never run on TDX or SEV-SNP hardware (this project has none). What is
tested here:

- the checks, on fake /dev and /sys trees and on this host, which has neither TDX nor
  SEV-SNP: every missing piece named, and make run / make conformance / make bench refusing;
- the command lines, against the examples in QEMU's documentation, quoted below from
  docs/system/i386/tdx.rst ("Launching a TD"), docs/system/i386/amd-memory-encryption.rst
  ("To launch a SEV-SNP guest") and docs/system/igvm.rst (igvm-cfg), and against COCONUT-SVSM's
  scripts/launch_guest.sh for the memory backend;
- the part of each command line that is not the confidential guest (disk, console, exit
  device, firmware loading) by booting it under TCG with the guest object taken out.
"""
import os
import shlex
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))

import hostlaunch  # noqa: E402
import runqemu  # noqa: E402

# The documentation's examples, option by option ("..." in -machine: other properties).
DOCS = {
    "tdx": "-accel kvm -cpu host -object tdx-guest,id=tdx0 "
           "-machine ...,confidential-guest-support=tdx0 -bios OVMF.fd",
    "snp": "-machine ...,confidential-guest-support=sev0 "
           "-object sev-snp-guest,id=sev0,cbitpos=51,reduced-phys-bits=1",
    "snp-svsm": "-machine ...,confidential-guest-support=sev0,igvm-cfg=igvm0 "
                "-object sev-snp-guest,id=sev0,cbitpos=51,reduced-phys-bits=1 "
                "-object igvm-cfg,id=igvm0,file=/path/to/sev-snp.igvm",
}
FIRMWARE = {"tdx": "OVMF.fd", "snp": "OVMF.fd", "snp-svsm": "/path/to/sev-snp.igvm"}


def options(cmd):
    """{option: [values]} of a QEMU command line."""
    out = {}
    for i, a in enumerate(cmd):
        if a.startswith("-") and i + 1 < len(cmd) and not cmd[i + 1].startswith("-"):
            out.setdefault(a, []).append(cmd[i + 1])
    return out


def props(value):
    return set(value.split(","))


class FakeHost:
    """A /dev and /sys tree with what a TDX or SNP host would have."""

    def __init__(self, case, host, kvm=True, param="Y"):
        self.root = tempfile.mkdtemp(prefix="memaccept-host-")
        case.addCleanup(subprocess.run, ["rm", "-rf", self.root])
        if kvm:
            os.makedirs(os.path.join(self.root, "dev"))
            open(os.path.join(self.root, "dev", "kvm"), "w").close()
        if param is not None:
            path = os.path.join(self.root, hostlaunch.NEEDS[host]["param"])
            os.makedirs(os.path.dirname(path))
            with open(path, "w") as f:
                f.write(param + "\n")
        self.firmware = os.path.join(self.root, "fw.bin")
        open(self.firmware, "w").close()


class HostChecks(unittest.TestCase):
    def test_a_ready_host_has_no_problems(self):
        for host in hostlaunch.HOSTS:
            h = FakeHost(self, host)
            objs = set(hostlaunch.NEEDS[host]["objects"]) | {"memory-backend-ram"}
            self.assertEqual(hostlaunch.host_problems(host, "qemu", h.firmware, h.root, objs), [],
                             host)

    def test_each_missing_piece_is_named(self):
        h = FakeHost(self, "tdx", kvm=False, param="N")
        p = hostlaunch.host_problems("tdx", "qemu", None, h.root, {"sev-snp-guest"})
        self.assertEqual(len(p), 4, p)
        self.assertIn("no /dev/kvm", p[0])
        self.assertIn("kvm_intel/parameters/tdx is not Y: KVM has TDX disabled", p[1])
        self.assertIn("no tdx-guest object", p[2])
        self.assertIn("TDX needs QEMU 10.1 or later", p[2])
        self.assertIn("no firmware given: BIOS=path", p[3])

        h = FakeHost(self, "snp-svsm", param=None)
        p = hostlaunch.host_problems("snp-svsm", "qemu", h.firmware + ".missing", h.root,
                                     {"sev-snp-guest"})
        self.assertEqual(len(p), 3, p)
        self.assertIn("no /sys/module/kvm_amd/parameters/sev_snp: the kvm_amd module is not "
                      "loaded", p[0])
        self.assertIn("no igvm-cfg object", p[1])
        self.assertIn("IGVM file with COCONUT-SVSM", p[2])

    def test_cbit_from_cpuid(self):
        h = FakeHost(self, "snp")
        self.assertIsNone(hostlaunch.host_cbitpos(h.root))     # no cpuid driver
        os.makedirs(os.path.join(h.root, "dev", "cpu", "0"))
        with open(os.path.join(h.root, "dev", "cpu", "0", "cpuid"), "wb") as f:
            f.seek(0x8000001F)
            # EAX: SME, SEV, ... ; EBX[5:0] = 47 (the C-bit), EBX[11:6] = 1.
            f.write((0x1B).to_bytes(4, "little") + (47 | 1 << 6).to_bytes(4, "little") +
                    bytes(8))
        self.assertEqual(hostlaunch.host_cbitpos(h.root), 47)

    def test_object_help_parsing(self):
        text = "List of user creatable objects:\n  authz-list\n  sev-snp-guest\n  tdx-guest\n"
        self.assertEqual(hostlaunch.parse_object_help(text),
                         {"authz-list", "sev-snp-guest", "tdx-guest"})

    def test_this_host_is_refused(self):
        """This machine has neither (no kvm_intel tdx / kvm_amd sev_snp parameter, and
        Debian's QEMU 7.2 has no tdx-guest or sev-snp-guest)."""
        for host in hostlaunch.HOSTS:
            p = hostlaunch.host_problems(host, "qemu-system-x86_64", None)
            self.assertTrue(any("parameters" in x for x in p), p)
            self.assertTrue(any("object" in x for x in p), p)
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "runqemu.py"), "--efi",
                            os.path.join(ROOT, "build", "memaccept.efi"), "--host", "tdx"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, hostlaunch.REFUSED, r.stderr)
        self.assertIn("hostlaunch: cannot boot on a tdx host here:", r.stderr)
        self.assertIn("not yet been run on TDX or SEV-SNP hardware", r.stderr)
        r = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "bench.py"), "--cc-host",
                            "snp"], capture_output=True, text=True)
        self.assertEqual(r.returncode, hostlaunch.REFUSED, r.stderr)
        self.assertIn("cannot boot on a snp host here", r.stderr)

    def test_make_targets_refuse(self):
        for target in ("run", "conformance"):
            r = subprocess.run(["make", "-s", "-C", ROOT, target, "HOST=snp-svsm",
                                "CONFORMANCE_DIR=%s" % tempfile.mkdtemp(prefix="memaccept-conf-")],
                               capture_output=True, text=True, timeout=600)
            self.assertNotEqual(r.returncode, 0, target)
            self.assertIn("cannot boot on a snp-svsm host here", r.stdout + r.stderr, target)


class CommandLines(unittest.TestCase):
    def test_documented_options_are_there(self):
        for host, doc in DOCS.items():
            cmd = hostlaunch.command(host, "/esp", "2G", 2, FIRMWARE[host], mem_bytes=2 << 30)
            ours, want = options(cmd), options(shlex.split(doc))
            for opt, values in want.items():
                for v in values:
                    if opt == "-machine":
                        need = props(v) - {"..."}
                        self.assertTrue(any(need <= props(m) for m in ours["-machine"]),
                                        (host, v, ours["-machine"]))
                    else:
                        self.assertIn(v, ours.get(opt, []), (host, opt, v))

    def test_firmware_loading_and_acceleration(self):
        for host in hostlaunch.HOSTS:
            cmd = hostlaunch.command(host, "/esp", "4G", 1, "/fw", mem_bytes=4 << 30)
            o = options(cmd)
            self.assertEqual(o["-accel"], ["kvm"], host)
            self.assertFalse(any("pflash" in a for a in cmd), host)   # TDX and SNP: no flash
            self.assertNotIn("-plugin", cmd)
            self.assertEqual(o["-m"], ["4096M"])
            self.assertIn("isa-debug-exit,iobase=0xf4,iosize=0x04", o["-device"])
            if host.startswith("snp"):
                backend = [x for x in o["-object"] if x.startswith("memory-backend-memfd")]
                self.assertEqual(len(backend), 1)
                self.assertTrue({"id=ram0", "size=4096M", "share=true"} <= props(backend[0]))
                self.assertIn("memory-backend=ram0", props(o["-machine"][0]))
            if host == "snp-svsm":
                self.assertNotIn("-bios", o)   # the firmware is inside the IGVM file
            else:
                self.assertEqual(o["-bios"], ["/fw"])
        tdx = options(hostlaunch.command("tdx", "/esp", "1G", 1, "/fw"))
        self.assertIn("kernel-irqchip=split", props(tdx["-machine"][0]))
        snp = options(hostlaunch.command("snp", "/esp", "1G", 1, "/fw", cbitpos=47))
        self.assertIn("cbitpos=47", props(snp["-object"][1]))

    def test_the_rest_boots_under_tcg(self):
        """The launcher's command line without the confidential guest (its object and
        confidential-guest-support, KVM, the SNP CPU model) boots memaccept with Debian's
        single-file OVMF: the virtio-scsi ESP, -bios, console and exit device work."""
        efi = os.path.join(ROOT, "build", "memaccept.efi")
        fw = "/usr/share/ovmf/OVMF.fd"
        if not os.path.exists(efi) or not os.path.exists(fw):
            self.fail("needs build/memaccept.efi (make) and %s (Debian package ovmf)" % fw)

        def plain(esp):
            cmd = hostlaunch.command("snp", esp, "1G", 1, fw, mem_bytes=1 << 30)
            out, skip = [], False
            for i, a in enumerate(cmd):
                if skip:
                    skip = False
                    continue
                nxt = cmd[i + 1] if i + 1 < len(cmd) else ""
                if a == "-object" and nxt.startswith("sev-snp-guest"):
                    skip = True
                    continue
                if a == "-cpu":
                    out += ["-cpu", "qemu64"]
                    skip = True
                    continue
                if a == "-accel":
                    out += ["-accel", "tcg"]
                    skip = True
                    continue
                if a == "-machine":
                    out += ["-machine", "q35,memory-backend=ram0"]
                    skip = True
                    continue
                out.append(a)
            return out
        res = runqemu.run(efi, "workload=none", "1G", 1, 120, command=plain)
        self.assertTrue(res.ok, "%s\n%s" % (res.describe(), res.output[-2000:]))
        self.assertIn("-bios", res.command)
        self.assertIn("scsi-hd,drive=esp", res.command)


if __name__ == "__main__":
    unittest.main()
