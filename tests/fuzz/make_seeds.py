#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# memaccept: write the seed inputs of tests/fuzz/fuzz_memmap.c into tests/fuzz/seeds/.
"""Each seed is the fuzzer's 12-byte header followed by raw EFI memory descriptors.

The header encoding mirrors LLVMFuzzerTestOneInput in fuzz_memmap.c; the seeds start the
fuzzer on shapes worth mutating (a real OVMF map, the q35 layout, a 4 PiB address space,
overlaps, anomalies) instead of on noise. Run: python3 tests/fuzz/make_seeds.py
"""
import os
import struct

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


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seeds")
    os.makedirs(out, exist_ok=True)
    for name, data in SEEDS.items():
        assert len(data) <= 4096, name
        with open(os.path.join(out, name + ".bin"), "wb") as f:
            f.write(data)
    print("%d seeds in %s" % (len(SEEDS), out))


if __name__ == "__main__":
    main()
