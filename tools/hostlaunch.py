#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# memaccept: boot on a real TDX or SEV-SNP host (QEMU/KVM): check the host, build the command line.
"""The real-host launcher: HOST=tdx|snp|snp-svsm for make run, make conformance, make bench.

Not yet run on TDX or SEV-SNP hardware: the command lines follow QEMU's and KVM's
documentation (cited below) and are unit-tested against it (tests/tools/test_hostlaunch.py),
and the host checks refuse on a host without the platform, which is all this project has.

What each host choice needs, and where that comes from:

  tdx       KVM with TDX enabled: /sys/module/kvm_intel/parameters/tdx is Y (Linux
            arch/x86/kvm/vmx/tdx.c: module_param_named(tdx, enable_tdx, ...), v6.16 on).
            QEMU with the tdx-guest object (QEMU 10.1 and later). The firmware: a TDVF
            image (edk2 OvmfPkg/IntelTdx/IntelTdxX64.dsc, or OvmfPkgX64 with TDX), one file
            loaded with -bios: "Since TDX doesn't support readonly memslot, TDVF cannot be
            mapped as pflash device" (QEMU docs/system/i386/tdx.rst, "Trust Domain Virtual
            Firmware"). Command line from the same file, "Launching a TD": -accel kvm
            -cpu host -object tdx-guest,id=tdx0 -machine ...,confidential-guest-support=tdx0
            -bios; kernel-irqchip split (QEMU sets it by default, given explicitly here).
  snp       KVM with SEV-SNP: /sys/module/kvm_amd/parameters/sev_snp is Y (Linux
            arch/x86/kvm/svm/sev.c: module_param_named(sev_snp, sev_snp_enabled, ...)). QEMU with the sev-snp-guest
            object (QEMU 9.1 and later). The firmware: an SEV-SNP OVMF (edk2
            OvmfPkg/AmdSev/AmdSevX64.dsc), one file with -bios (SNP does not use flash).
            Command line from QEMU docs/system/i386/amd-memory-encryption.rst ("To launch a
            SEV-SNP guest"): -machine ...,confidential-guest-support=sev0 -object
            sev-snp-guest,id=sev0,cbitpos=51,reduced-phys-bits=1. cbitpos is the host's
            C-bit (CPUID 0x8000001F EBX[5:0], read from /dev/cpu/0/cpuid when it can be:
            runqemu.py --cbitpos overrides; 51, as on Milan and Genoa, otherwise).
  snp-svsm  as snp, the guest at VMPL2 under COCONUT-SVSM at VMPL0: QEMU with igvm-cfg
            (QEMU 10.1 and later, docs/system/igvm.rst); the firmware is the IGVM file the
            SVSM build produces (coconut-qemu.igvm: SVSM and OVMF together), given with
            -object igvm-cfg,id=igvm0,file=... and -machine ...,igvm-cfg=igvm0, never with
            -bios. Memory as coconut-svsm/svsm scripts/launch_guest.sh gives it (QEMU 9 and
            later): memory-backend-memfd, share=true (used for snp as well: the
            shared pages the guest converts stay backed by the file).

The console, the debug-exit device and the command line file on a throw-away ESP are
runqemu.py's; the ESP is a virtio-scsi disk with iommu_platform=on, as the SNP and TDX
examples attach disks (the device must use the DMA API in a confidential guest).
"""
import argparse
import os
import shutil
import subprocess
import sys

HOSTS = ("tdx", "snp", "snp-svsm")
DEFAULT_CBITPOS = 51
DEFAULT_REDUCED_PHYS_BITS = 1
REFUSED = 3  # the exit status when the host cannot run the guest

# What each host needs: the KVM module parameter, the QEMU objects, what the firmware is.
NEEDS = {
    "tdx": {"param": "sys/module/kvm_intel/parameters/tdx", "module": "kvm_intel",
            "objects": ("tdx-guest",), "firmware": "a TDVF image (OVMF built with TDX, one file)"},
    "snp": {"param": "sys/module/kvm_amd/parameters/sev_snp", "module": "kvm_amd",
            "objects": ("sev-snp-guest",), "firmware": "an SEV-SNP OVMF (AmdSevX64, one file)"},
    "snp-svsm": {"param": "sys/module/kvm_amd/parameters/sev_snp", "module": "kvm_amd",
                 "objects": ("sev-snp-guest", "igvm-cfg"),
                 "firmware": "an IGVM file with COCONUT-SVSM and OVMF (coconut-qemu.igvm)"},
}


def object_types(qemu):
    """The user-creatable object types of this QEMU (`-object help`), or None if it does not run."""
    try:
        out = subprocess.run([qemu, "-object", "help"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_object_help(out.stdout)


def parse_object_help(text):
    """`-object help` prints a header line and then one type per indented line."""
    return {ln.strip() for ln in text.splitlines() if ln.startswith(" ") and ln.strip()}


def host_cbitpos(root="/"):
    """The host's C-bit position, CPUID 0x8000001F EBX[5:0] (AMD APM vol. 3, "Function
    8000_001Fh"), read through the cpuid driver (/dev/cpu/0/cpuid: the file offset is the
    leaf, 16 bytes EAX EBX ECX EDX); None when that file cannot be read (no driver, no root)."""
    try:
        with open(os.path.join(root, "dev/cpu/0/cpuid"), "rb") as f:
            f.seek(0x8000001F)
            regs = f.read(16)
    except OSError:
        return None
    if len(regs) != 16:
        return None
    return int.from_bytes(regs[4:8], "little") & 0x3F or None


def param_enabled(path):
    """A boolean module parameter: Y or 1 (KVM prints bools as Y/N)."""
    try:
        with open(path) as f:
            return f.read().strip() in ("Y", "y", "1")
    except OSError:
        return None


def host_problems(host, qemu, firmware, root="/", objects=None):
    """Everything missing for host on this machine, one plain sentence each ([] if none).
    root: where /dev and /sys are (tests point it at a fake tree); objects: the QEMU object
    types if already known (tests), else asked of qemu."""
    if host not in NEEDS:
        return ["unknown host %r: choose one of %s" % (host, ", ".join(HOSTS))]
    need = NEEDS[host]
    problems = []
    kvm = os.path.join(root, "dev/kvm")
    if not os.path.exists(kvm):
        problems.append("no /dev/kvm: KVM is not available (no hardware virtualization, or the "
                        "kvm module is not loaded)")
    elif not os.access(kvm, os.R_OK | os.W_OK):
        problems.append("/dev/kvm is not readable and writable by this user (add it to group kvm)")
    param = os.path.join(root, need["param"])
    state = param_enabled(param)
    if state is None:
        problems.append("no /%s: the %s module is not loaded, so KVM cannot run a %s guest here"
                        % (need["param"], need["module"], "TDX" if host == "tdx" else "SEV-SNP"))
    elif not state:
        problems.append("/%s is not Y: KVM has %s disabled (module parameter, or the BIOS or "
                        "firmware of the host does not enable it)"
                        % (need["param"], "TDX" if host == "tdx" else "SEV-SNP"))
    if objects is None:
        path = shutil.which(qemu) or (qemu if os.path.exists(qemu) else None)
        objects = object_types(path) if path else None
        if objects is None:
            problems.append("QEMU %s not found or does not run" % qemu)
    if objects is not None:
        for obj in need["objects"]:
            if obj not in objects:
                problems.append("QEMU %s has no %s object (`%s -object help`): %s" % (
                    qemu, obj, qemu, {"tdx-guest": "TDX needs QEMU 10.1 or later",
                                      "sev-snp-guest": "SEV-SNP needs QEMU 9.1 or later",
                                      "igvm-cfg": "IGVM needs QEMU 10.1 built with igvm"}[obj]))
    if not firmware:
        problems.append("no firmware given: BIOS=path (runqemu.py --bios) to %s" % need["firmware"])
    elif not os.path.isfile(firmware):
        problems.append("firmware %s does not exist (%s)" % (firmware, need["firmware"]))
    return problems


def command(host, esp, mem, smp, firmware, qemu="qemu-system-x86_64", cpu=None,
            cbitpos=DEFAULT_CBITPOS, reduced_phys_bits=DEFAULT_REDUCED_PHYS_BITS,
            debug_exit=True, mem_bytes=None):
    """The QEMU/KVM command line for host (the module docstring says where each option
    comes from). esp: the directory runqemu.make_esp built; mem: e.g. "4G"; mem_bytes:
    its size in bytes (for the memory backend)."""
    if host not in NEEDS:
        raise ValueError("unknown host %r" % host)
    size_mib = (mem_bytes >> 20) if mem_bytes else None
    m = "%dM" % size_mib if size_mib else mem
    cmd = [qemu, "-accel", "kvm"]
    if host == "tdx":
        cmd += ["-cpu", cpu or "host",
                "-machine", "q35,kernel-irqchip=split,confidential-guest-support=tdx0",
                "-object", "tdx-guest,id=tdx0",
                "-bios", firmware]
    else:
        svsm = host == "snp-svsm"
        cmd += ["-cpu", cpu or "EPYC-v4",
                "-machine", "q35,confidential-guest-support=sev0,memory-backend=ram0" +
                (",igvm-cfg=igvm0" if svsm else ""),
                "-object", "memory-backend-memfd,id=ram0,size=%s,share=true,prealloc=false,"
                "reserve=false" % m,
                "-object", "sev-snp-guest,id=sev0,cbitpos=%d,reduced-phys-bits=%d"
                % (cbitpos, reduced_phys_bits)]
        cmd += ["-object", "igvm-cfg,id=igvm0,file=%s" % firmware] if svsm else \
            ["-bios", firmware]
    cmd += ["-m", m, "-smp", str(smp),
            "-display", "none", "-vga", "none", "-serial", "stdio", "-monitor", "none",
            "-no-reboot", "-nic", "none",
            "-drive", "if=none,id=esp,format=raw,file=fat:rw:%s" % esp,
            "-device", "virtio-scsi-pci,id=scsi0,disable-legacy=on,iommu_platform=on",
            "-device", "scsi-hd,drive=esp"]
    if debug_exit:
        cmd += ["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
    return cmd


def refuse_message(host, problems):
    return ("hostlaunch: cannot boot on a %s host here:\n%s\n(the launcher has not yet been run "
            "on TDX or SEV-SNP hardware; docs/firmware.md, \"On a real host\")"
            % (host, "\n".join("  - " + p for p in problems)))


def main(argv=None):
    ap = argparse.ArgumentParser(description="Check this host for a TDX or SEV-SNP guest and "
                                 "print the QEMU/KVM command line (runqemu.py --host boots it).")
    ap.add_argument("--host", required=True, choices=HOSTS)
    ap.add_argument("--qemu", default="qemu-system-x86_64")
    ap.add_argument("--firmware")
    ap.add_argument("--mem", default="4G")
    ap.add_argument("--smp", type=int, default=1)
    ap.add_argument("--cbitpos", type=int, default=DEFAULT_CBITPOS)
    ap.add_argument("--root", default="/", help=argparse.SUPPRESS)
    o = ap.parse_args(argv)
    problems = host_problems(o.host, o.qemu, o.firmware, o.root)
    if problems:
        print(refuse_message(o.host, problems), file=sys.stderr)
        return REFUSED
    print(" ".join(command(o.host, "ESP", o.mem, o.smp, o.firmware, o.qemu, cbitpos=o.cbitpos)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
