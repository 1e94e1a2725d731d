#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# memaccept: the offline judge: the conformance map rules on a memory map captured on another machine.
"""Judge a memory map captured elsewhere with memaccept's own map rules (map.*, unaccepted.*).

The rules are kernel/conformance.c itself, built for the host (build/memaccept-judge, `make
judge`; this script builds it when it is missing); this script only reads the capture. It
reads three kinds, told apart by their lines (--format forces one):

  memaccept  a memaccept console (make run, make conformance) booted with verbose=1: its
             memdesc events are the raw final map, the firmware event gives desc_size,
             desc_version, ExitBootServices calls and the address width, the conformance,
             ready or tdx events the platform and the TDX shared bit.
  memmap     the UEFI shell's `memmap` command (edk2 ShellPkg UefiShellDebug1CommandsLib
             MemMap.c and its .uni strings: "Type Start-End Pages Attributes" lines, type
             names short or full, OEM types as 8 hex digits, and the -sfo form
             MemoryMap,"Type","Start","End","Pages","Attributes"). The map while boot
             services run, not the one handed to an OS.
  linux      a Linux boot log with efi=debug (arch/x86/platform/efi/efi.c efi_print_memmap:
             "efi: memNN: [TYPE|ATTRS] range=[0xSTART-0xEND] (NMB)", the type and attribute
             column from drivers/firmware/efi/efi.c efi_md_typeattr_format, old and new type
             names; entries Linux dropped as invalid, printed before with "(invalid)", are
             put back at their index). The platform comes from "Memory Encryption Features
             active:" (arch/x86/mm/mem_encrypt.c).

What a capture does not record is not judged: memmap and Linux logs give no descriptor
size or version (map.desc_size, map.desc_align, map.desc_version: n/a), none but
memaccept's gives the ExitBootServices record (unaccepted.stable: n/a); the platform and
address width can be given (--platform, --phys-bits) when the capture lacks them.

--compare (memaccept consoles with a conformance event): print the offline verdicts beside
the guest's own for every rule the judge decided, exit 1 if any differs.
Exit status: 0 judged (whatever the verdicts), 1 --compare found a difference, 2 unusable
input.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import memaccept_log as ml  # noqa: E402

PAGE = 4096
EFI_UNACCEPTED = 15

# EFI_MEMORY_* attribute bits (UEFI 2.10 section 7.2, EFI_MEMORY_DESCRIPTOR.Attribute) by
# the flag Linux prints for them (efi_md_typeattr_format).
LINUX_FLAGS = {"UC": 1 << 0, "WC": 1 << 1, "WT": 1 << 2, "WB": 1 << 3, "UCE": 1 << 4,
               "WP": 1 << 12, "RP": 1 << 13, "XP": 1 << 14, "NV": 1 << 15, "MR": 1 << 16,
               "RO": 1 << 17, "SP": 1 << 18, "CC": 1 << 19, "HP": 1 << 20, "RUN": 1 << 63}
# Linux's memory_type_name[], the names before and after its 2020 shortening.
LINUX_TYPES = {
    "Reserved": 0, "Loader Code": 1, "Loader Data": 2, "Boot Code": 3, "Boot Data": 4,
    "Runtime Code": 5, "Runtime Data": 6, "Conventional": 7, "Conventional Memory": 7,
    "Unusable": 8, "Unusable Memory": 8, "ACPI Reclaim": 9, "ACPI Reclaim Memory": 9,
    "ACPI Mem NVS": 10, "ACPI Memory NVS": 10, "MMIO": 11, "Memory Mapped I/O": 11,
    "MMIO Port": 12, "MMIO Port Space": 12, "PAL Code": 13, "Persistent": 14,
    "Persistent Memory": 14, "Unaccepted": 15,
}
# The shell's FullNameEfiMemory[] and ShortNameEfiMemory[].
SHELL_TYPES = {
    "Reserved": 0, "LoaderCode": 1, "LoaderData": 2, "BootServiceCode": 3, "BS_Code": 3,
    "BootServiceData": 4, "BS_Data": 4, "RuntimeCode": 5, "RT_Code": 5, "RuntimeData": 6,
    "RT_Data": 6, "Available": 7, "UnusableMemory": 8, "Unusable": 8,
    "ACPIReclaimMemory": 9, "ACPI_Recl": 9, "ACPIMemoryNVS": 10, "ACPI_NVS": 10,
    "MemoryMappedIO": 11, "MMIO": 11, "MemoryMappedIOPortSpace": 12, "MMIO_Port": 12,
    "PalCode": 13, "Persistent": 14, "Unaccepted": 15,
}

HEX16 = r"([0-9A-Fa-f]{16})"
SHELL_LINE = re.compile(r"^\s*(\S+)\s+%s-%s\s+%s\s+%s\s*$" % (HEX16, HEX16, HEX16, HEX16))
SHELL_SFO = re.compile(r'^\s*MemoryMap,"([^"]*)","([0-9A-Fa-f]+)","([0-9A-Fa-f]+)",'
                       r'"([0-9A-Fa-f]+)","([0-9A-Fa-f]+)"\s*$')
LINUX_LINE = re.compile(r"efi: mem(\d+): \[([^\]]*)\] range=\[0x([0-9a-f]+)-0x([0-9a-f]+)\]"
                        r"(?: \((\d+)MB\))?( \(invalid\))?")

# The rules a capture cannot decide, by what it lacks.
DESC_RULES = ("map.desc_size", "map.desc_align", "map.desc_version")
# Rules judged from what boot services answered before the final map, not from the map.
CALL_RULES = ("map.size_handshake", "map.alloc_type15")


class CaptureError(ValueError):
    pass


class Capture:
    def __init__(self, kind):
        self.kind = kind
        self.descs = []            # (type, start, pages, attr), in the capture's order
        self.desc_size = None
        self.desc_version = None
        self.platform = None       # "none", "tdx", "snp" or None (not known)
        self.phys_bits = None
        self.tdx_shared_bit = None
        self.ebs_attempts = None
        self.guest = None          # memaccept: the guest's own conformance event
        self.notes = []


def detect(text):
    if re.search(r'^\{"event":"memdesc"', text, re.M):
        return "memaccept"
    if LINUX_LINE.search(text):
        return "linux"
    if any(SHELL_LINE.match(l) or SHELL_SFO.match(l) for l in text.splitlines()):
        return "memmap"
    return None


def parse_memaccept(text):
    c = Capture("memaccept")
    events, _ = ml.parse_events(text)
    descs = ml.all_of(events, "memdesc")
    if not descs:
        raise CaptureError("no memdesc events: boot with verbose=1 (the raw map dump)")
    for d in sorted(descs, key=lambda d: d.get("i", 0)):
        try:
            c.descs.append((int(d["type"]), int(d["start"]), int(d["pages"]), int(d["attr"])))
        except (KeyError, TypeError, ValueError):
            raise CaptureError("memdesc event %r is malformed" % (d,))
    fw = ml.first(events, "firmware") or {}
    c.desc_size = fw.get("desc_size")
    c.desc_version = fw.get("desc_version")
    c.ebs_attempts = fw.get("ebs_attempts")
    c.phys_bits = fw.get("phys_bits") or None
    conf = ml.all_of(events, "conformance")
    c.guest = conf[-1] if conf else None
    ready = ml.first(events, "ready") or {}
    plat = (c.guest or {}).get("platform") or ready.get("platform")
    c.platform = plat if plat in ("tdx", "snp") else ("none" if plat else None)
    tdx = ml.first(events, "tdx")
    if tdx and isinstance(tdx.get("shared_bit"), int) and tdx["shared_bit"]:
        c.tdx_shared_bit = 1 << tdx["shared_bit"]
    return c


def parse_memmap(text):
    c = Capture("memmap")
    for line in text.splitlines():
        m = SHELL_LINE.match(line) or SHELL_SFO.match(line)
        if not m:
            continue
        name, start, end, pages, attr = m.groups()
        if name in SHELL_TYPES:
            t = SHELL_TYPES[name]
        elif re.fullmatch(r"[0-9a-fA-F]{8}", name):
            t = int(name, 16)       # STR_MEMMAP_LIST_ITEM_OTHER: OEM and OS types
        else:
            raise CaptureError("memmap line with unknown type %r: %s" % (name, line.strip()))
        c.descs.append((t, int(start, 16), int(pages, 16), int(attr, 16)))
    if not c.descs:
        raise CaptureError("no memmap lines")
    c.notes.append("the UEFI shell's map, taken while boot services ran: an OS gets a later one")
    return c


def linux_typeattr(field):
    """(type, attribute) from efi_md_typeattr_format's text, without its brackets."""
    parts = [p.strip() for p in field.split("|")]
    name = parts[0]
    m = re.fullmatch(r"type=(\d+)", name)
    if m:
        t = int(m.group(1))
    elif name in LINUX_TYPES:
        t = LINUX_TYPES[name]
    else:
        raise CaptureError("unknown Linux memory type name %r" % name)
    attr = 0
    for p in parts[1:]:
        if not p:
            continue
        m = re.fullmatch(r"attr=0x([0-9a-f]+)", p)
        if m:
            attr = int(m.group(1), 16)
        elif p in LINUX_FLAGS:
            attr |= LINUX_FLAGS[p]
        else:
            raise CaptureError("unknown Linux attribute flag %r" % p)
    return t, attr


def parse_linux(text):
    c = Capture("linux")
    listed, invalid = [], {}
    for line in text.splitlines():
        m = LINUX_LINE.search(line)
        if not m:
            continue
        idx, field, start, end, _mb, bad = m.groups()
        t, attr = linux_typeattr(field)
        s, e = int(start, 16), int(end, 16)
        # The inclusive end; an invalid entry may print its end's high part before it.
        pages = (e + 1 - s) // PAGE if e >= s else 0
        d = (t, s, pages, attr)
        if bad:
            invalid[int(idx)] = d
        else:
            listed.append(d)
    if not listed and not invalid:
        raise CaptureError("no efi: memNN lines (boot Linux with efi=debug)")
    # efi_clean_memmap drops invalid entries and efi_print_memmap renumbers the rest:
    # put the dropped ones back at their original index.
    out, it = [], iter(listed)
    for i in range(len(listed) + len(invalid)):
        out.append(invalid[i] if i in invalid else next(it))
    c.descs = out
    if invalid:
        c.notes.append("%d entr(ies) Linux dropped as invalid put back at their index" %
                       len(invalid))
    feat = re.search(r"Memory Encryption Features active:(.*)", text)
    if feat:
        c.platform = "tdx" if "TDX" in feat.group(1) else "snp" if "SEV-SNP" in feat.group(1) \
            else "none"
    c.notes.append("the map Linux received at ExitBootServices, as it printed it")
    return c


PARSERS = {"memaccept": parse_memaccept, "memmap": parse_memmap, "linux": parse_linux}


_BUILD_LOCK = threading.Lock()   # tests/run.py checks logs from two threads


def judge_binary(path=None):
    """The host build of the rules; built with make when missing."""
    path = path or os.path.join(ROOT, "build", "memaccept-judge")
    with _BUILD_LOCK:
        return _build(path)


def _build(path):
    if not os.path.exists(path):
        r = subprocess.run(["make", "-s", "-C", ROOT, "build/memaccept-judge"],
                           capture_output=True, text=True)
        if r.returncode or not os.path.exists(path):
            raise CaptureError("cannot build %s: %s" % (path, (r.stderr or r.stdout).strip()))
    return path


def judge(c, binary=None):
    """[(rule, level, verdict, detail)] for capture c, with what it cannot decide n/a."""
    lines = []
    if c.desc_size:
        lines.append("desc_size %d" % c.desc_size)
    if c.desc_version is not None:
        lines.append("desc_version %d" % c.desc_version)
    lines.append("platform %s" % (c.platform or "none"))
    if c.phys_bits:
        lines.append("phys_bits %d" % c.phys_bits)
    if c.tdx_shared_bit:
        lines.append("tdx_shared_bit %#x" % c.tdx_shared_bit)
    if c.ebs_attempts:
        lines.append("ebs_attempts %d" % c.ebs_attempts)
    lines += ["desc %d %#x %#x %#x" % d for d in c.descs]
    r = subprocess.run([judge_binary(binary)], input="\n".join(lines) + "\n",
                       capture_output=True, text=True)
    if r.returncode:
        raise CaptureError(r.stderr.strip() or "the judge failed (status %d)" % r.returncode)
    out = []
    for line in r.stdout.splitlines():
        rule, level, verdict, detail = line.split("\t", 3)
        why = unknown_input(c, rule)
        if why:
            verdict, detail = "n/a", "not in this capture: %s" % why
        out.append((rule, level, verdict, detail))
    return out


def unknown_input(c, rule):
    """Why capture c cannot decide rule, or None."""
    if rule in DESC_RULES and (c.desc_size is None or c.desc_version is None):
        return "a %s listing gives no descriptor size or version" % c.kind
    if rule == "unaccepted.stable" and c.ebs_attempts != 1:
        # With one call the final map is the one the loader read; after a retry only the
        # guest saw the first map.
        return "no record of the map before ExitBootServices" + (
            " (%d calls)" % c.ebs_attempts if c.ebs_attempts else "")
    if rule in CALL_RULES:
        # memaccept calls boot services for these before the final map; a map holds no trace.
        return "judged by calling the firmware's boot services, not from the map"
    if rule in ("unaccepted.platform", "unaccepted.below_4g") and c.platform is None:
        return "the platform is not known (give --platform)"
    return None


def render(c, verdicts, path):
    n = {}
    for _, _, v, _ in verdicts:
        n[v] = n.get(v, 0) + 1
    out = ["== %s (%s capture, %d descriptors, platform %s)" % (
        path, c.kind, len(c.descs), c.platform or "not known"),
        "offline map rules: " + ", ".join("%d %s" % (n.get(v, 0), v)
                                          for v in ("pass", "warn", "fail", "n/a", "info"))]
    out += ["note: %s" % x for x in c.notes]
    width = max(len(r) for r, _, _, _ in verdicts)
    for rule, level, verdict, detail in verdicts:
        out.append("%-5s %-6s %-*s %s" % (verdict.upper() if verdict in ("fail", "warn") else
                                          verdict, level, width, rule, detail))
    return "\n".join(out)


def compare(c, verdicts):
    """(lines, differences) of the offline verdicts against the guest's own."""
    guest = {x.get("rule"): x for x in (c.guest or {}).get("checks", []) if isinstance(x, dict)}
    lines, diffs = [], 0
    for rule, _, verdict, detail in verdicts:
        if detail.startswith("not in this capture"):
            lines.append("skip  %-26s %s" % (rule, detail))
            continue
        g = guest.get(rule)
        same = g is not None and g.get("verdict") == verdict and g.get("detail") == detail
        diffs += not same
        lines.append("%-5s %-26s offline %s, guest %s%s" % (
            "same" if same else "DIFF", rule, verdict, g.get("verdict") if g else "(absent)",
            "" if same or not g else ": offline %r, guest %r" % (detail, g.get("detail"))))
    return lines, diffs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("capture", help="a memaccept console (verbose=1), a UEFI shell memmap "
                    "listing, or a Linux boot log with efi=debug")
    ap.add_argument("--format", choices=sorted(PARSERS), help="the capture's kind (default: "
                    "told by its lines)")
    ap.add_argument("--platform", choices=("none", "tdx", "snp"),
                    help="the guest's platform, when the capture does not say")
    ap.add_argument("--phys-bits", type=int, help="the guest's physical address width")
    ap.add_argument("--compare", action="store_true", help="compare with the guest's own "
                    "verdicts (a memaccept console with workload=conformance)")
    ap.add_argument("--json", metavar="FILE", help="also write the verdicts as JSON")
    ap.add_argument("--judge", help=argparse.SUPPRESS)
    o = ap.parse_args(argv)
    try:
        with open(o.capture, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        print("judge: %s: %s" % (o.capture, e.strerror or e), file=sys.stderr)
        return 2
    kind = o.format or detect(text)
    if not kind:
        print("judge: %s: not a memaccept console with memdesc events, a memmap listing or "
              "an efi=debug log" % o.capture, file=sys.stderr)
        return 2
    try:
        c = PARSERS[kind](text)
        if o.platform:
            c.platform = o.platform
        if o.phys_bits:
            c.phys_bits = o.phys_bits
        verdicts = judge(c, o.judge)
    except CaptureError as e:
        print("judge: %s: %s" % (o.capture, e), file=sys.stderr)
        return 2
    print(render(c, verdicts, o.capture))
    if o.json:
        with open(o.json, "w") as f:
            json.dump({"capture": o.capture, "format": kind, "descriptors": len(c.descs),
                       "platform": c.platform, "checks": [
                           {"rule": r, "level": lv, "verdict": v, "detail": d}
                           for r, lv, v, d in verdicts]}, f, indent=1)
    if o.compare:
        if not c.guest:
            print("judge: %s: no conformance event to compare with (boot with "
                  "workload=conformance verbose=1)" % o.capture, file=sys.stderr)
            return 2
        lines, diffs = compare(c, verdicts)
        print("\ncompared with the guest's own verdicts:")
        print("\n".join(lines))
        print("%d rule(s) differ" % diffs)
        return 1 if diffs else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
