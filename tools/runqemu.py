#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# memaccept: boot an image under QEMU + OVMF, stream the serial console, return the guest's verdict.
"""Boot memaccept in QEMU (TCG, q35, OVMF) and report the guest's exit code.

The command line reaches the guest as \\memaccept.cfg on a throw-away ESP that QEMU
builds from a host directory (vvfat), so every boot can use different options without
rebuilding anything. The guest leaves through isa-debug-exit: writing v to port 0xf4
makes QEMU exit with status (v << 1) | 1. A QEMU status of 0 therefore means the guest
never wrote its verdict (it powered off some other way), which counts as a failure.

Test-image boots run under the instruction observer (tools/observer/observer.c, a QEMU
TCG plugin): on an emulated TD or SNP guest it stops the VM at the first instruction the
real platform would trap that the emulator never saw, and reports what it saw. Its
lines are added to the console output, with the function each address falls in.

Used by `make run` and by tests/run.py (as a module: see run()).
"""
import bisect
import argparse
import ctypes
import hashlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time

import memaccept_log
import elf2efi
import hostlaunch

DEFAULT_QEMU = "qemu-system-x86_64"
DEFAULT_CODE = "/usr/share/OVMF/OVMF_CODE_4M.fd"
DEFAULT_VARS = "/usr/share/OVMF/OVMF_VARS_4M.fd"
TIMEOUT_CODE = 124  # what `make run` returns when the guest never finished
PR_SET_THP_DISABLE = 41  # linux/prctl.h


def no_host_thp():
    """Run QEMU without transparent huge pages on the host side.

    QEMU asks for THP on guest RAM, so the first guest write to each 2 MiB of it makes
    the host zero (and often compact) a whole 2 MiB page: several milliseconds that land
    on whatever guest code touches that memory first, and that a guest with more fresh
    memory pays more often. With 4 KiB host pages the first-touch cost is per page and
    small, so guest timings measure the guest. --thp keeps THP on.

    The setting belongs to this process and is inherited by every child (fork and exec):
    run() calls this in the parent instead of in a preexec_fn, which is unsafe when
    threads exist (tests/run.py and tools/bench.py boot from a thread pool). It stays
    set for the rest of this process: no caller mixes THP on and off in one process.
    """
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0)
    except OSError:
        pass


class Result:
    def __init__(self):
        self.qemu_rc = None      # QEMU's own exit status (None: killed on timeout)
        self.guest_code = None   # the code the guest wrote to isa-debug-exit, if it did
        self.timed_out = False
        self.output = ""         # serial console, CR removed
        self.line_times = []     # (seconds since QEMU started, line) as each line arrived
        self.seconds = 0.0
        self.command = []

    @property
    def ok(self):
        return self.guest_code == 0

    def describe(self):
        if self.timed_out:
            return "timed out after %.0f s" % self.seconds
        if self.guest_code == memaccept_log.EXIT_OBSERVER_STOPPED:
            stop = memaccept_log.first(memaccept_log.parse_events(self.output)[0], "observer_stop")
            if stop:
                return "the instruction observer stopped the VM: %s (%s) at %s: %s" % (
                    stop.get("insn"), stop.get("trap"), stop.get("function", hex(stop.get("rip", 0))),
                    stop.get("why"))
            return "the instruction observer stopped the VM"
        if self.guest_code == memaccept_log.EXIT_HOST_STOPPED:
            return ("the emulated host stopped the VM (code %d); the guest's verdict is its last "
                    "exit event" % self.guest_code)
        if self.guest_code is not None:
            return "guest exit code %d" % self.guest_code
        return "QEMU exited with status %s without a guest verdict" % self.qemu_rc


def parse_size(text):
    size = memaccept_log.parse_size(text)
    if size is None:
        raise ValueError("bad size %r (use e.g. 512M, 4G)" % text)
    return size


def qemu_command(esp, mem, smp, qemu=DEFAULT_QEMU, ovmf_code=DEFAULT_CODE,
                 ovmf_vars=DEFAULT_VARS, extra=(), gdb=False, debug_exit=True, disk=None,
                 prealloc=False, ram_files=None, bios=None):
    """bios: a single-file firmware image (IntelTdxX64, AmdSevX64, any OVMF.fd) loaded
    with -bios instead of the split flash pair ovmf_code/ovmf_vars. ram_files: back guest
    RAM with these files, one per piece of c_bit_alias_pieces(mem), and give QEMU a second
    view of each, an ivshmem device, whose BAR the test image's emulator moves to 2^N + the
    piece's guest-physical address to play an SNP C-bit at bit N < 52
    (arch/x86/emu/cbit_alias.c); the CPU gets 52 physical address bits."""
    size = parse_size(mem)
    # reserve=off: a 256 GiB guest only costs the host what the guest touches. prealloc:
    # the host backs all of guest RAM before the guest starts, so the guest's first write
    # to a page no longer waits for the host to supply it (QEMU's memory-backend prealloc).
    backend = "prealloc=on,prealloc-threads=%d" % (os.cpu_count() or 1) if prealloc \
        else "reserve=off"
    machine = "q35,memory-backend=ram"
    if ram_files:
        ram = c_bit_alias_args(size, ram_files)
        if len(ram_files) > 1:
            machine = "q35"
    else:
        ram = ["-object", "memory-backend-ram,id=ram,size=%d,%s" % (size, backend)]
    cmd = [qemu, "-machine", machine, "-accel", "tcg"] + ram + [
           "-m", "%dM" % (size >> 20), "-smp", str(smp),
           "-display", "none", "-serial", "stdio", "-monitor", "none",
           "-no-reboot", "-nic", "none"] + firmware_args(ovmf_code, ovmf_vars, bios)
    if disk:
        cmd += ["-drive", "format=raw,snapshot=on,file=%s" % disk]
    else:
        cmd += ["-drive", "format=raw,file=fat:rw:%s" % esp]
    if debug_exit:
        cmd += ["-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
    if gdb:
        cmd += ["-s", "-S"]
    return cmd + list(extra)


# q35 keeps guest RAM below 4 GiB up to this size; from it on, 2 GiB below and the rest from
# 4 GiB (QEMU hw/i386/pc_q35.c pc_q35_init, the lowmem split).
Q35_LOWMEM_ALL_BELOW = 0xB0000000
Q35_LOWMEM = 2 << 30
ALIAS_GRAIN = 2 << 20


def c_bit_alias_pieces(size):
    """Guest RAM of this size cut for a second view at 2^N: [(guest-physical address,
    bytes)], in the order QEMU lays them out in its RAM. Each piece is one NUMA node's
    memory (QEMU puts the nodes' backends one after the other in the machine's RAM, and q35
    maps the first below_4g bytes of it at 0 and the rest at 4 GiB: hw/core/numa.c
    numa_init_memdev_container, hw/i386/pc.c pc_memory_init), so no piece may straddle
    the low part's end; and each is one ivshmem BAR, so a power of two aligned to its size
    (PCI 3.0, 6.2.5.1). None when the size is no multiple of 2 MiB."""
    if size <= 0 or size % ALIAS_GRAIN:
        return None
    low = size if size < Q35_LOWMEM_ALL_BELOW else Q35_LOWMEM
    pieces = []
    for start, length in ((0, low), (4 << 30, size - low)):
        at, end = start, start + length
        while at < end:
            piece = 1 << ((end - at).bit_length() - 1)
            if at:
                piece = min(piece, at & -at)
            pieces.append((at, piece))
            at += piece
    return pieces


def c_bit_alias_args(size, ram_files):
    """QEMU arguments for guest RAM in ram_files (one per c_bit_alias_pieces(size) piece),
    each file a NUMA node's memory and, through a second backend on the same file, an
    ivshmem-plain device's BAR. With more than one piece, without -machine memory-backend:
    the nodes' backends make up the RAM. The nodes change nothing in the guest's memory
    map; ACPI gets an SRAT."""
    pieces = c_bit_alias_pieces(size)
    if not pieces or len(pieces) != len(ram_files):
        raise ValueError("a C-bit alias needs guest RAM in multiples of 2 MiB, one file per "
                         "piece (%d bytes, %d files)" % (size, len(ram_files)))
    args = []
    for i, ((_, piece), path) in enumerate(zip(pieces, ram_files)):
        # One piece: the machine's memory backend, "ram", as without the alias (no SRAT).
        ram = "ram%d" % i if len(pieces) > 1 else "ram"
        args += ["-object", "memory-backend-file,id=%s,size=%d,mem-path=%s,share=on" % (ram, piece, path),
                 "-object", "memory-backend-file,id=calias%d,size=%d,mem-path=%s,share=on" % (i, piece, path),
                 "-device", "ivshmem-plain,memdev=calias%d" % i]
        if len(pieces) > 1:
            args += ["-numa", "node,nodeid=%d,memdev=%s" % (i, ram)]
    return args + ["-cpu", "qemu64,phys-bits=52"]


def firmware_args(ovmf_code=DEFAULT_CODE, ovmf_vars=DEFAULT_VARS, bios=None):
    """A single-file image with -bios (no flash, hence no variable store), else the split
    flash pair: code read-only, variables a throw-away copy (snapshot=on)."""
    if bios:
        return ["-bios", bios]
    return ["-drive", "if=pflash,format=raw,readonly=on,file=%s" % ovmf_code,
            "-drive", "if=pflash,format=raw,snapshot=on,file=%s" % ovmf_vars]


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def qemu_version(qemu):
    try:
        out = subprocess.run([qemu, "--version"], capture_output=True, text=True, timeout=30)
        return out.stdout.splitlines()[0].strip() if out.stdout else None
    except (OSError, subprocess.SubprocessError):
        return None


def provenance(res, efi, mem, smp, args, ovmf_code=None, ovmf_vars=None, bios=None, host=None):
    """What the host knows about a boot and the guest cannot: the images' SHA-256, the QEMU
    build and the VM's configuration (tools/report.py puts it in the conformance report)."""
    files = {"image": efi}
    if bios:
        files["firmware"] = bios
    else:
        files.update({"firmware_code": ovmf_code, "firmware_vars": ovmf_vars})
    images = {}
    for role, path in files.items():
        if path and os.path.exists(path):
            images[role] = {"path": path, "sha256": sha256_file(path),
                            "bytes": os.path.getsize(path)}
    cmd = res.command or []
    accel = cmd[cmd.index("-accel") + 1] if "-accel" in cmd[:-1] else None
    return {
        "images": images,
        "qemu": qemu_version(cmd[0]) if cmd else None,
        "command": cmd,
        "vm": {"mem": mem, "smp": smp, "accel": accel or "?", "host": host or "none (QEMU TCG)",
               "firmware_load": "bios" if bios else "pflash", "args": args},
        "seconds": round(res.seconds, 2),
        "outcome": res.describe(),
    }


class Symbols:
    """Function names for addresses in a loaded image, from the ELF kept beside the .efi
    (the .elf is linked at 0, so an image offset is an ELF address)."""

    # SNP arms at one of sixteen markers, by the features in bits 11:8 of its immediate
    # (arch/x86/emu/observer.asm), which the observer reports as arm_features.
    ARM_SITES = {"tdx": "emu_obs_arm_tdx", "snp": "emu_obs_arm_snp_%d", "sim": "emu_obs_arm_sim"}

    def __init__(self, elf_path):
        with open(elf_path, "rb") as f:
            syms = elf2efi.Elf(f.read()).symbols
        self.syms = syms
        self.sorted = sorted((v, n) for n, v in syms.items() if v)
        self.values = [v for v, _ in self.sorted]

    def base_from(self, stop):
        name = self.ARM_SITES.get(stop.get("platform"), "")
        if "%d" in name:
            name = name % ((stop.get("arm_features", 0) >> 8) & 15)
        site = self.syms.get(name)
        return stop["arm_rip"] - site if site is not None and stop.get("arm_rip") else None

    def name(self, offset):
        i = bisect.bisect_right(self.values, offset) - 1
        if i < 0:
            return None
        return "%s+%#x" % (self.sorted[i][1], offset - self.sorted[i][0])


def observer_lines(path, efi):
    """The observer's JSON lines, each observer_stop given its function and image offset."""
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    elf = os.path.splitext(efi)[0] + ".elf" if efi else None
    syms = None
    out = []
    for ln in lines:
        try:
            ev = json.loads(ln)
        except ValueError:
            out.append(ln)
            continue
        if ev.get("event") == "observer_stop" and elf and os.path.exists(elf):
            syms = syms or Symbols(elf)
            base = syms.base_from(ev)
            rip = ev.get("rip")
            if base is not None and rip is not None and base <= rip:
                ev["image_offset"] = rip - base
                where = syms.name(rip - base)
                if where:
                    ev["function"] = where
        out.append(json.dumps(ev, separators=(",", ":")))
    return out


def make_esp(efi, args):
    esp = tempfile.mkdtemp(prefix="memaccept-esp-")
    os.makedirs(os.path.join(esp, "EFI", "BOOT"))
    shutil.copyfile(efi, os.path.join(esp, "EFI", "BOOT", "BOOTX64.EFI"))
    with open(os.path.join(esp, "memaccept.cfg"), "w") as f:
        f.write(args + "\n")
    return esp


def run(efi, args="", mem="1G", smp=1, timeout=120, echo=None, qemu=DEFAULT_QEMU,
        ovmf_code=DEFAULT_CODE, ovmf_vars=DEFAULT_VARS, extra=(), gdb=False, debug_exit=True,
        disk=None, thp=False, prealloc=False, observer=None, observer_args="", c_bit_alias=False,
        bios=None, command=None):
    """Boot once. echo: a file to copy the console to as it arrives (or None).
    disk: boot this disk image (make image) instead of a fresh ESP with efi and args.
    observer: the instruction observer plugin (.so) to load, or None; observer_args: more
    of its arguments (e.g. "pages=off"). c_bit_alias: guest RAM in a file in /dev/shm,
    seen a second time through ivshmem devices (qemu_command's ram_files). bios: a
    single-file firmware image (-bios) instead of ovmf_code/ovmf_vars. command: a function
    (esp) -> QEMU command line that replaces qemu_command (tools/hostlaunch.py: KVM on a
    TDX or SEV-SNP host)."""
    res = Result()
    if c_bit_alias and not c_bit_alias_pieces(parse_size(mem)):
        raise ValueError("a C-bit alias needs guest RAM in multiples of 2 MiB, not %s" % mem)
    if not thp:
        no_host_thp()
    esp = None if disk else make_esp(efi, args)
    obs_out = None
    if observer:
        fd, obs_out = tempfile.mkstemp(prefix="memaccept-observer-")
        os.close(fd)
        extra = list(extra) + ["-plugin", "%s,out=%s%s" % (
            observer, obs_out, "," + observer_args if observer_args else "")]
    ram_files = []
    if c_bit_alias:
        for _ in c_bit_alias_pieces(parse_size(mem)):
            fd, path = tempfile.mkstemp(prefix="memaccept-ram-", dir="/dev/shm")
            os.close(fd)
            ram_files.append(path)
    if command:
        res.command = command(esp) + list(extra)
    else:
        res.command = qemu_command(esp, mem, smp, qemu, ovmf_code, ovmf_vars, extra, gdb,
                                   debug_exit, disk, prealloc, ram_files, bios)
    start = time.monotonic()
    chunks = []
    partial = b""
    try:
        proc = subprocess.Popen(res.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT)
        fd = proc.stdout.fileno()
        while True:
            left = timeout - (time.monotonic() - start) if timeout else None
            if left is not None and left <= 0:
                res.timed_out = True
                proc.kill()
                break
            ready, _, _ = select.select([fd], [], [], min(left, 1.0) if left else 1.0)
            if ready:
                data = os.read(fd, 65536)
                if not data:
                    break
                chunks.append(data)
                # A line's time is when its last byte arrived (host monotonic clock).
                now = time.monotonic() - start
                lines = (partial + data).split(b"\n")
                partial = lines.pop()
                res.line_times += [(now, ln.decode("utf-8", "replace").replace("\r", ""))
                                   for ln in lines]
                if echo:
                    echo.write(data.decode("utf-8", "replace").replace("\r", ""))
                    echo.flush()
        proc.wait()
        res.qemu_rc = None if res.timed_out else proc.returncode
    finally:
        if esp:
            shutil.rmtree(esp, ignore_errors=True)
        for path in ram_files:
            os.unlink(path)
    res.seconds = time.monotonic() - start
    res.output = b"".join(chunks).decode("utf-8", "replace").replace("\r", "")
    if obs_out:
        lines = observer_lines(obs_out, efi)
        os.unlink(obs_out)
        if lines:
            # On a line of their own, after whatever the console printed last.
            text = "\n".join(lines) + "\n"
            res.output += ("" if res.output.endswith("\n") or not res.output else "\n") + text
            if echo:
                echo.write(text)
                echo.flush()
    if res.qemu_rc is not None and res.qemu_rc % 2 == 1:
        res.guest_code = res.qemu_rc >> 1
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--efi", required=True)
    ap.add_argument("--args", default="")
    ap.add_argument("--mem", default="4G")
    ap.add_argument("--smp", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=600, help="seconds, 0 for none")
    ap.add_argument("--qemu", default=DEFAULT_QEMU)
    ap.add_argument("--ovmf-code", default=DEFAULT_CODE)
    ap.add_argument("--ovmf-vars", default=DEFAULT_VARS)
    ap.add_argument("--gdb", action="store_true", help="wait for gdb on :1234")
    ap.add_argument("--log", help="also write the console to this file")
    ap.add_argument("--thp", action="store_true",
                    help="leave transparent huge pages on for guest RAM on the host")
    ap.add_argument("--prealloc", action="store_true",
                    help="back all guest RAM on the host before the guest starts")
    ap.add_argument("--observer", help="the instruction observer plugin (build/observer.so)")
    ap.add_argument("--bios", help="a single-file firmware image, loaded with -bios instead of "
                    "the --ovmf-code/--ovmf-vars flash pair")
    ap.add_argument("--host", choices=hostlaunch.HOSTS,
                    help="boot under KVM on a real TDX or SEV-SNP host (tools/hostlaunch.py); "
                    "--bios names the firmware (for snp-svsm: the IGVM file)")
    ap.add_argument("--cbitpos", type=int,
                    help="SEV-SNP: the host's C-bit position (default: from CPUID 0x8000001F "
                    "through /dev/cpu/0/cpuid, else %d)" % hostlaunch.DEFAULT_CBITPOS)
    ap.add_argument("--provenance", help="write what the host knows about the boot (image "
                    "SHA-256, QEMU, VM configuration) to this JSON file")
    ap.add_argument("--c-bit-alias", choices=("auto", "on", "off"), default="auto",
                    help="guest RAM in files in /dev/shm seen a second time through ivshmem "
                    "devices, so that the test image's emulated SNP C-bit can be bit 51 "
                    "(arch/x86/emu/cbit_alias.c); auto: on for platform=snp-emu under TCG "
                    "without a -cpu of the caller's")
    ap.add_argument("extra", nargs="*", help="more QEMU arguments (after --)")
    o = ap.parse_args()
    if not os.path.exists(o.efi):
        sys.exit("runqemu: %s does not exist: run make first" % o.efi)
    command = None
    if o.host:
        problems = hostlaunch.host_problems(o.host, o.qemu, o.bios)
        if o.observer:
            problems.append("the instruction observer is a TCG plugin: it cannot watch a KVM "
                            "guest (boot the production image, or OBSERVER=0)")
        if problems:
            print(hostlaunch.refuse_message(o.host, problems), file=sys.stderr)
            sys.exit(hostlaunch.REFUSED)
        size = parse_size(o.mem)
        cbit = o.cbitpos or hostlaunch.host_cbitpos() or hostlaunch.DEFAULT_CBITPOS
        command = lambda esp: hostlaunch.command(o.host, esp, o.mem, o.smp, o.bios, o.qemu,  # noqa: E731
                                                 cbitpos=cbit, mem_bytes=size)
    elif o.bios:
        if not os.path.isfile(o.bios):
            sys.exit("runqemu: firmware %s not found" % o.bios)
    else:
        for f in (o.ovmf_code, o.ovmf_vars):
            if not os.path.exists(f):
                sys.exit("runqemu: firmware %s not found (Debian package ovmf)" % f)
    if o.host and o.c_bit_alias == "on":
        sys.exit("runqemu: --c-bit-alias is for the test image's emulated SNP under TCG, not --host")
    alias = o.c_bit_alias == "on" or (
        o.c_bit_alias == "auto" and not o.host and "platform=snp-emu" in o.args.split()
        and "-cpu" not in o.extra and c_bit_alias_pieces(parse_size(o.mem)) is not None)
    print("runqemu: %s, %s RAM, %d vCPU, %s, options: %s" % (
        o.efi, o.mem, o.smp, "KVM on a %s host" % o.host if o.host else "TCG",
        o.args or "(none)"), flush=True)
    res = run(o.efi, o.args, o.mem, o.smp, o.timeout, sys.stdout, o.qemu, o.ovmf_code,
              o.ovmf_vars, o.extra, o.gdb, thp=o.thp, prealloc=o.prealloc, observer=o.observer,
              bios=o.bios, command=command, c_bit_alias=alias)
    if o.log:
        with open(o.log, "w") as f:
            f.write(res.output)
    if o.provenance:
        with open(o.provenance, "w") as f:
            json.dump(provenance(res, o.efi, o.mem, o.smp, o.args, o.ovmf_code, o.ovmf_vars,
                                 o.bios, o.host), f, indent=1)
            f.write("\n")
    print("\nrunqemu: %s (%.1f s)" % (res.describe(), res.seconds))
    if res.timed_out:
        sys.exit(TIMEOUT_CODE)
    sys.exit(0 if res.ok else (res.guest_code if res.guest_code else 1))


if __name__ == "__main__":
    main()
