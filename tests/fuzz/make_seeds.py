#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# memaccept: write the seed inputs of the fuzz targets in tests/fuzz/ into tests/fuzz/seeds*/.
"""fuzz_memmap seeds (seeds/): the fuzzer's 12-byte header followed by raw EFI memory
descriptors. fuzz_acpi seeds (seeds-acpi/): MADT and FADT bodies the target wraps in valid
tables (a TDVF-like MADT, 300 CPUs, every entry type), and one raw table image. fuzz_psc
seeds (seeds-psc/): ranges with honest, partial, stalling and lying hypervisor replies. fuzz_ve
seeds (seeds-ve/): each #VE the handler serves, with honest, refusing and failing VMM replies,
and lies about the length and the reason. fuzz_mailbox seeds (seeds-mailbox/): wakeups the
firmware takes, never takes, takes late, or answers with garbage. fuzz_accept seeds (seeds-accept/): its 15-byte header, 6-byte descriptors and
operation bytes, from the real OVMF maps in maps/.

The header encodings mirror LLVMFuzzerTestOneInput in each target; the seeds start the
fuzzers on shapes worth mutating (real OVMF maps, the q35 layout, a 4 PiB address space,
overlaps, anomalies) instead of on noise. Run: python3 tests/fuzz/make_seeds.py

A map in maps/ is the firmware's map as memaccept printed it with verbose=1 (one
`memdesc` event per descriptor), turned into lines of "type start pages":
    python3 tests/fuzz/make_seeds.py --from-log CONSOLE.log maps/NAME.txt
"""
import json
import os
import struct
import sys

K, M, G, T = 1 << 10, 1 << 20, 1 << 30, 1 << 40
P = 1 << 50

CONV, UNACC = 7, 15


def header(desc_size=48, version=1, phys_bits=48, can_accept=True, fake=None, fake_mode=0):
    if 40 <= desc_size <= 72 and desc_size % 8 == 0:
        b0 = (desc_size - 40) // 8
    else:
        assert 33 <= desc_size <= 48
        b0 = 0xF0 + desc_size - 33
    b1 = 0 if version == 1 else 0xF0 + version
    b2 = phys_bits - 36 if 36 <= phys_bits <= 64 else 0xE0 + phys_bits
    flags = (1 if can_accept else 0) | (2 if fake is not None else 0) | (fake_mode << 2)
    return bytes([b0, b1, b2, flags]) + struct.pack("<Q", fake or 0)


def desc(type_, start, pages, desc_size=48):
    """One descriptor; bytes past the 40 the parser reads are garbage on purpose."""
    d = struct.pack("<IIQQQQ", type_, 0xDEADBEEF, start, 0, pages, 0xF)
    return (d + bytes((0xA5 ^ i) & 0xFF for i in range(desc_size)))[:desc_size]


def seed(descs, tail=b"", **kw):
    ds = kw.get("desc_size", 48)
    return header(**kw) + b"".join(desc(t, s, n, ds) for t, s, n in descs) + tail


def pages(n):
    return n >> 12


OVMF = [
    (3, 0, 1), (CONV, 0x1000, 0x9F), (CONV, 0x100000, 0x700), (10, 0x800000, 8),
    (CONV, 0x808000, 8), (10, 0x810000, 0xF0), (4, 0x900000, 0x100),
    (CONV, 0xA00000, pages(0x7E000000 - 0xA00000)), (2, 0x7E000000, 0x400),
    (1, 0x7E400000, 0x40), (4, 0x7E440000, 0x13C0), (6, 0x7F800000, 0x100),
    (5, 0x7F900000, 0x100), (9, 0x7FA00000, 0x80), (10, 0x7FA80000, 0x80),
    (0, 0x7FB00000, 0x500), (11, 0xB0000000, 0x10000), (11, 0xFFC00000, 0x400),
    (UNACC, 4 * G, pages(2 * G)),
]

SEEDS = {
    "ovmf-48": seed(OVMF),
    "ovmf-fake-1g": seed(OVMF, fake=1 * G),
    "q35-256g": seed([(CONV, 0, pages(1 * G)), (UNACC, 1 * G, pages(1 * G)),
                      (0, 2 * G, pages(1 * G)), (UNACC, 4 * G, pages(254 * G))]),
    "4pib-hole": seed([(CONV, 0, pages(1 * G)), (UNACC, 1 * G, pages(1 * G)),
                       (UNACC, 4 * P - 1 * G, pages(1 * G - 2 * M)),
                       (UNACC, 4 * P - 2 * M, pages(4 * M)), (CONV, 4 * P, 1)],
                      phys_bits=52, desc_size=64),
    "overlaps-unsorted": seed([(UNACC, 1 * G, pages(1 * G)), (CONV, 0, pages(4 * M)),
                               (UNACC, 2 * M, pages(6 * M)), (UNACC, 1 * G + 8 * M, pages(4 * M)),
                               (6, 1 * G + 10 * M, pages(4 * M)), (4, 512 * M, pages(2 * M)),
                               (CONV, 256 * M, pages(512 * M))], desc_size=72),
    "anomalies": seed([(CONV, 0xFF000, 1), (CONV, 0x100123, 16), (UNACC, 2 * G + 0x800, 512),
                       (0, 3 * G, 0), (CONV, 4 * G, (1 << 64) - 1), (16, 8 * G, 1),
                       (0x80000000, 9 * G, 2), (UNACC, 1 * T, pages(2 * T))],
                      desc_size=64, phys_bits=40, can_accept=False),
    "touches-fake-unaligned": seed([(0, 1 * G, 1), (UNACC, 1 * G + 4 * K, pages(1 * G - 4 * K)),
                                    (CONV, 2 * G, pages(2 * G)), (11, 4 * G - 4 * K, 1),
                                    (UNACC, 5 * G + 3 * M, pages(5 * M))],
                                   fake=2 * G + 12345, desc_size=56),
    "odd-size-version-tail": seed([(CONV, 0, pages(1 * G)), (UNACC, 1 * G, pages(1 * G + 3 * M))],
                                  tail=b"\x07\x00\x00\x00tail", desc_size=44, version=2),
    "segments": seed([(UNACC, 2 * M + 4 * K, pages(3 * M)), (CONV, 8 * M, 1),
                      (UNACC, 1 * G + 3 * M, pages(5 * M)), (UNACC, 3 * G, pages(2 * G)),
                      (UNACC, 6 * G - 2 * M, pages(2 * M)), (UNACC, 7 * G + 1 * M, pages(129 * M))],
                     desc_size=40),
}


# ---------------------------------------------------------------- fuzz_accept

HERE = os.path.dirname(os.path.abspath(__file__))
UNIT = 2 * M
# The RAM fuzz_accept models per input (MODEL_PAGES): seeds must fit in it.
MODEL_BYTES = 64 * M
RAM_TYPES = {1, 2, 3, 4, 7, 15}
# fuzz_accept.c's type_table: the first nibble that stands for each EFI type.
TYPE_NIBBLE = {7: 0, 15: 3, 4: 6, 3: 7, 2: 8, 1: 9, 6: 10, 9: 11, 10: 12, 11: 13, 0: 14, 14: 15,
               5: 10, 8: 14, 12: 13, 13: 14}


def read_map(name):
    """[(type, start, pages)] from maps/NAME.txt."""
    out = []
    with open(os.path.join(HERE, "maps", name + ".txt")) as f:
        for line in f:
            line = line.split("#")[0].split()
            if line:
                out.append((int(line[0]), int(line[1], 16), int(line[2])))
    return out


def from_log(log, path):
    """Write the memdesc events of a console log as a map file."""
    descs = []
    with open(log, errors="replace") as f:
        for line in f:
            if line.startswith('{"event":"memdesc"'):
                e = json.loads(line)
                descs.append((e["type"], e["start"], e["pages"]))
    with open(path, "w") as f:
        f.write("# EFI memory map from %s (type, start, pages)\n" % os.path.basename(log))
        for t, s, n in descs:
            f.write("%d %#x %d\n" % (t, s, n))
    print("%d descriptors in %s" % (len(descs), path))


def shrink(descs, fake=None, keep=0, fake_keep=UNIT):
    """The map with the middle of each long RAM descriptor cut out (a hole of the same
    addresses): what is kept is the unit at each end (and `keep` beyond it), and
    `fake_keep` around fake_unaccepted_start, so that every partial unit stays as the
    firmware laid it out and the RAM fits fuzz_accept's model."""
    out = []
    for t, s, n in descs:
        e = s + n * 4 * K
        if t not in RAM_TYPES or n * 4 * K <= 3 * UNIT:
            out.append((t, s, n))
            continue
        pieces = [(s, min(e, (s // UNIT + 1) * UNIT + keep)),
                  (max(s, ((e - 1) // UNIT) * UNIT - keep), e)]
        if fake is not None and s < fake < e:
            pieces.append((max(s, fake // UNIT * UNIT - fake_keep),
                           min(e, -(-fake // UNIT) * UNIT + fake_keep)))
        pieces.sort()
        merged = []
        for a, b in pieces:
            if merged and a <= merged[-1][1]:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        out += [(t, a, (b - a) // (4 * K)) for a, b in merged]
    return out


def ram_bytes(descs, phys_limit=1 << 36):
    return sum(min(s + n * 4 * K, phys_limit) - s for t, s, n in descs
               if t in RAM_TYPES and s < phys_limit)


def accept_seed(descs, cpus=1, fake=None, policy=0, refuse=None, cache=None, protect=False,
                pt_pages=4, stack_pages=4, trampoline=0, ahead_mib=0, ops=b""):
    """One fuzz_accept input (see the header layout in fuzz_accept.c)."""
    if protect:
        pt_pages |= 8
    flags = (cpus - 1) | (4 if fake is not None else 0) | (policy << 3) | \
        (0x20 if refuse is not None else 0)
    h = bytes([flags, 4]) + struct.pack("<I", (fake or 0) >> 12)[:3] + \
        bytes([pt_pages | stack_pages << 4, trampoline, ahead_mib, refuse or 0, 0, 0, 0, 0])
    c = 0 if cache is None else 0x80 | (cache & 31)
    if protect:
        c |= 0x60
    out = []
    for t, s, n in descs:
        while n > 0:
            k = min(n, 0xFFFF)
            out.append(bytes([TYPE_NIBBLE[t]]) + struct.pack("<I", s >> 12)[:3] + struct.pack("<H", k))
            s += k * 4 * K
            n -= k
    assert len(out) <= 255
    return h + bytes([c, len(out)]) + b"".join(out) + ops


def ops_mix(n, seed):
    """Allocations of every order with frees in between, on every CPU (op byte layout)."""
    x, out = seed | 1, []
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) & ((1 << 64) - 1)
        out.append((x >> 33) & 0xFF)
    return bytes(out)


def accept_seeds():
    seeds = {}
    maps = [("ovmf-2g-16cpu", 1 * G), ("ovmf-4g-1cpu", 1 * G), ("ovmf-1g-1cpu", 512 * M),
            ("ovmf-64g-1cpu", 1 * G)]
    for name, fake in maps:
        descs = shrink(read_map(name), fake)
        assert ram_bytes(descs) <= MODEL_BYTES, (name, ram_bytes(descs) >> 20)
        variants = {
            "lazy": dict(),
            "lazy-4cpu-cache": dict(cpus=4, cache=0),
            "eager-2cpu-cache": dict(cpus=2, policy=1, cache=3),
            "ahead-refuse": dict(cpus=3, policy=2, ahead_mib=8, refuse=5, cache=8, trampoline=0x10),
        }
        # One map with unaccepted memory unmapped: mprotect makes a run several times slower,
        # so the corpus should not hold many such inputs.
        if name == "ovmf-2g-16cpu":
            variants["lazy-protect"] = dict(cpus=2, cache=0, protect=True)
        for i, (v, kw) in enumerate(variants.items()):
            seeds["%s-%s" % (name, v)] = accept_seed(descs, fake=fake, ops=ops_mix(160, i + 1), **kw)
    return seeds


def acpi_madt_body(entries, lapic=0xFEE00000):
    return struct.pack("<II", lapic, 1) + b"".join(entries)


def lapic(uid, apic_id, enabled=1):
    return struct.pack("<BBBBI", 0, 8, uid, apic_id, enabled)


def x2apic(apic_id, uid, enabled=1):
    return struct.pack("<BBHIII", 9, 16, 0, apic_id, enabled, uid)


def wakeup(mailbox, version=1, length=16):
    e = struct.pack("<BBHIQ", 0x10, length, version, 0, mailbox)
    return e + bytes(length - 16)


def fadt_body(port=0x608, ext=False, x_port=0):
    b = bytearray(276 - 36)
    struct.pack_into("<I", b, 76 - 36, port)
    b[91 - 36] = 4
    struct.pack_into("<I", b, 112 - 36, 0x100 if ext else 0)
    if x_port:
        b[208 - 36] = 1  # GAS: system I/O
        struct.pack_into("<Q", b, 208 - 36 + 4, x_port)
    return bytes(b)


def acpi_built(madt_body, fadt=b"", flags=1, flip=0, mailbox_map=b"\x00" + b"\x00\x00\x00"):
    """fuzz_acpi's built input: flags, flip offset, FADT body, MADT body, then the map."""
    assert flags & 1
    return (struct.pack("<BHB", flags, flip, len(fadt)) + fadt +
            struct.pack("<H", len(madt_body)) + madt_body + mailbox_map)


def acpi_sum(b, off):
    b[off] = 0
    b[off] = (-sum(b)) & 0xFF


def acpi_raw(madt_body, fadt):
    """fuzz_acpi's raw input: RSDP offset 0, then ACPI memory at MEM_BASE with real tables."""
    base = 0x7FF00000
    mem = bytearray(0x2000 + 36 + len(madt_body))
    mem[0:8] = b"RSD PTR "
    mem[15] = 2
    struct.pack_into("<IQ", mem, 20, 36, base + 0x100)
    x = bytearray(b"XSDT" + struct.pack("<I", 52) + bytes(28) + struct.pack("<QQ", base + 0x1000, base + 0x2000))
    f = bytearray(b"FACP" + struct.pack("<I", 36 + len(fadt)) + bytes(28) + fadt)
    m = bytearray(b"APIC" + struct.pack("<I", 36 + len(madt_body)) + bytes(28) + madt_body)
    for t in (x, f, m):
        acpi_sum(t, 9)
    mem[0x100:0x100 + len(x)] = x
    mem[0x1000:0x1000 + len(f)] = f
    mem[0x2000:0x2000 + len(m)] = m
    hdr = bytearray(mem[0:20])
    acpi_sum(hdr, 8)
    mem[0:20] = hdr
    full = bytearray(mem[0:36])
    acpi_sum(full, 32)
    mem[0:36] = full
    return struct.pack("<BH", 0, 0) + bytes(mem)


def acpi_seeds():
    tdvf = acpi_madt_body([lapic(i, i) for i in range(4)] + [wakeup(0x7F000000)])
    many = acpi_madt_body([lapic(i & 0xFF, i & 0xFF) for i in range(300)])
    mixed = acpi_madt_body([struct.pack("<BBHQ", 5, 12, 0, 0xFEE00000), lapic(0, 0), lapic(1, 1, 0),
                            x2apic(0x1234, 2), x2apic(0xFFFFFFFF, 3), wakeup(0x7E000000, 0, 24),
                            wakeup(0x1000, 1), struct.pack("<BB", 1, 12) + bytes(10)])
    nvs2 = b"\x01" + b"\x00\x01\x00" + b"\x01\x02\x30"  # one page back, two ranges
    return {
        "tdvf-4cpu": acpi_built(tdvf, fadt_body()),
        "tdvf-4cpu-xsdt-madt-first": acpi_built(tdvf, fadt_body(ext=True), flags=3),
        "many-lapics": acpi_built(many, fadt_body(x_port=0xB008), flags=5),
        "mixed-entries": acpi_built(mixed, fadt_body(port=0), mailbox_map=nvs2),
        "short-fadt-flip": acpi_built(tdvf, fadt_body()[:40], flags=9, flip=0x2030),
        "raw-tdvf": acpi_raw(tdvf, fadt_body()),
    }


def psc_seed(flags, start_pages, units, pages, replies=b"", pvalidate=b""):
    """fuzz_psc's input: flags, start, size, then two bytes per PSC exit and one per PVALIDATE
    (0xff, also what an exhausted input gives, is the honest answer to both)."""
    return struct.pack("<BHBB", flags, start_pages, units, pages) + replies + pvalidate


def psc_seeds():
    honest = b"\xff\xff"
    return {
        "private-honest": psc_seed(0, 0, 100, 3),
        "shared-edges": psc_seed(1, 5, 2, 7),
        "private-partial": psc_seed(0, 0, 140, 200, honest + b"\x02\x40" * 12 + b"\x06\x00" * 3 + honest * 4),
        "private-ahead": psc_seed(2 | (20 << 2), 0, 4, 0),
        "private-mismatch": psc_seed(0, 0, 3, 0, honest * 2, b"\x01"),
        "private-lies": psc_seed(0, 0, 10, 1, b"\x0d\x00\x07\x05\x06\x00" + honest),
    }


VE_REASONS = {"hlt": 0, "cpuid": 1, "rdmsr": 2, "wrmsr": 3, "io": 4, "ept": 6, "wbinvd": 7}
VE_STARTS = {b"\xf4": 0, b"\x0f\xa2": 1, b"\x0f\x32": 2, b"\x0f\x30": 3, b"\xe4": 4, b"\xe7": 8,
             b"\xec": 10, b"\x66\xed": 12}


def ve_reply(status=None, r10=None, r11=0, r12=0, r13=0, r14=0, r15=0):
    """One TDCALL's answer in fuzz_ve: a pick byte, then the registers in vmm_tdcall's order."""
    pick = (0x80 if status is not None else 0) | (0x40 if r10 is not None else 0)
    out = bytes([pick])
    if status is not None:
        out += struct.pack("<Q", status)
    out += bytes(8 + 24)                      # RAX; RDX, R8, R9
    if r10 is not None:
        out += struct.pack("<Q", r10)
    out += struct.pack("<5Q", r11, r12, r13, r14, r15) + bytes(24)
    return out


def ve_seed(reason, insn, qual=0, port=0, length=None, rax=0, rcx=0, rdx=0, hv_leaf=False, replies=b""):
    """fuzz_ve's input: reason, qualification (size code, IN and string bits, port), length,
    the bytes at RIP (starting with a listed encoding), the registers, the VMM's replies."""
    n = len(insn) if length is None else length
    out = bytes([VE_REASONS[reason], 0, qual, port & 0xff, port >> 8, n, VE_STARTS.get(insn[:2], VE_STARTS.get(insn[:1], 0x80))])
    out += (insn + bytes(16))[:min(n, 16)]
    out += bytes([1 if hv_leaf else 0]) + struct.pack("<4Q", rax, 0, rcx, rdx)
    return out + replies


def ve_seeds():
    return {
        "hlt": ve_seed("hlt", b"\xf4", replies=ve_reply()),
        "inb-dx": ve_seed("io", b"\xec", qual=0x08, port=0x3fd, rax=0x1234567890abcdef,
                          replies=ve_reply(r11=0xffffffffffffff60)),
        "inw-dx-refused": ve_seed("io", b"\x66\xed", qual=0x09, port=0x608, replies=ve_reply(r10=1)),
        "outl-imm": ve_seed("io", b"\xe7\x80", qual=0x03, port=0x80, rax=0xdeadbeefcafef00d,
                            replies=ve_reply()),
        "inb-imm-wrong-port": ve_seed("io", b"\xe4\x71", qual=0x08, port=0x70, replies=ve_reply()),
        "cpuid-hypervisor": ve_seed("cpuid", b"\x0f\xa2", rax=0x10, hv_leaf=True,
                                    replies=ve_reply(r12=0x40000010, r13=0x4b4d564b, r14=1 << 40, r15=7)),
        "cpuid-low-leaf": ve_seed("cpuid", b"\x0f\xa2", rax=0x15),
        "cpuid-tdcall-fails": ve_seed("cpuid", b"\x0f\xa2", rax=0x3, hv_leaf=True,
                                      replies=ve_reply(status=0xc000010000000000)),
        "rdmsr": ve_seed("rdmsr", b"\x0f\x32", rcx=0x1b, replies=ve_reply(r11=0xfee00900)),
        "wrmsr-refused": ve_seed("wrmsr", b"\x0f\x30", rcx=0x802, rax=5, rdx=6,
                                 replies=ve_reply(r10=0x8000000000000000)),
        "length-lie": ve_seed("hlt", b"\xf4", length=2),
        "reason-lie": ve_seed("cpuid", b"\xf4\x90", length=2),
        "ept": ve_seed("ept", b"\x8b\x07", length=2),
    }


def mailbox_seed(aps, bound, events, clock=None, command=None, why=b""):
    """fuzz_mailbox's input: AP count, bound, clock start, first Command, then one byte per
    Command read (0x00 leave, 0x60 take, 0xb0 garbage + 2 bytes, 0xd0 write 1, 0xe8 scribble)
    and per clock read (0x00-0x3f: that many ns, 0x40 a quarter, 0x80 a half, 0xc0 twice the bound)."""
    out = bytes([aps - 1]) + struct.pack("<H", bound - 1)
    out += b"\x01" + struct.pack("<Q", clock) if clock is not None else b"\x00"
    out += b"\xc0" + struct.pack("<H", command) if command is not None else b"\x00"
    return out + b"\x00" + events + why


def mailbox_seeds():
    take = b"\x60\x05"                         # Command read as 0, then the take's clock read
    honest4 = b"\x00" + b"\x03" + (take + b"\x03") * 3 + take
    never = b"\x00" + b"\x02" + b"\x00\x40" + b"\x00\x40" + b"\x00\xc0" + b"\x00\x00"
    return {
        "honest-4": mailbox_seed(4, 1000, honest4, why=b"\x01\x01\x01\x01"),
        "never-acknowledged": mailbox_seed(3, 1000, never, why=b"\x00\x00\x00"),
        "taken-late": mailbox_seed(2, 100, b"\x00\x02\x00\x40\x00\xc0\x60\x10", why=b"\x00\x02"),
        "garbage-first": mailbox_seed(2, 100, b"", command=0x0002),
        "garbage-then-taken": mailbox_seed(3, 500, b"\x00\x02\xb0\xff\xff\x01\x00\x40\x60\x01\x01"
                                           + take, why=b"\x01\x00\x02"),
        "scribbled-clock-wraps": mailbox_seed(5, 4000, b"\x00\x3f\xe8" + bytes(12) + b"\x3f" + take * 4,
                                              clock=0xfffffffffffffff0),
        "many": mailbox_seed(200, 50, b"", why=b""),
    }


def large_seed(cpus, policy=0, extra_gib=0, boot_mib=8, ahead_mib=0, ops=b""):
    """A large-guest fuzz_accept input: descriptor count 0 (see "large guests" in fuzz_accept.c)."""
    h = bytes([policy << 3, extra_gib, (boot_mib - 8) // 2, cpus - 1, 0, 0, 0, ahead_mib, 0, 0, 0, 0,
               0, 0, 0])
    return h + ops


def large_seeds():
    """64 GiB and more on up to 256 CPUs: the claim cursors spread over 32 GiB."""
    return {
        "large-64g-256cpu-lazy": large_seed(256, ops=ops_mix(400, 11)),
        "large-100g-64cpu-ahead": large_seed(64, policy=2, extra_gib=36, ahead_mib=16,
                                             ops=ops_mix(300, 12)),
        "large-64g-9cpu-lazy": large_seed(9, boot_mib=40, ops=ops_mix(200, 13)),
        "large-64g-1cpu-eager": large_seed(1, policy=1, ops=ops_mix(100, 14)),
    }


def main():
    if sys.argv[1:2] == ["--from-log"]:
        from_log(sys.argv[2], sys.argv[3])
        return
    for d, seeds, limit in (("seeds", SEEDS, 4096), ("seeds-accept", {**accept_seeds(), **large_seeds()}, 1024),
                            ("seeds-acpi", acpi_seeds(), 16384), ("seeds-psc", psc_seeds(), 512),
                            ("seeds-ve", ve_seeds(), 256), ("seeds-mailbox", mailbox_seeds(), 1024)):
        out = os.path.join(HERE, d)
        os.makedirs(out, exist_ok=True)
        for name, data in seeds.items():
            assert len(data) <= limit, (name, len(data))
            with open(os.path.join(out, name + ".bin"), "wb") as f:
                f.write(data)
        print("%d seeds in %s" % (len(seeds), out))


if __name__ == "__main__":
    main()
