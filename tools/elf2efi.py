#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# memaccept: turn the static-PIE ELF linked with linker.ld into a PE32+ EFI application.
"""Usage: elf2efi.py IN.elf OUT.efi

The ELF is linked at address 0, so an ELF virtual address is a PE RVA. We copy
.text, .rodata and .data(+.bss) into three PE sections at their RVAs (4 KiB
section alignment, 512-byte file alignment, so .bss costs no file space), and
turn every dynamic
relocation into a PE base relocation. Only R_X86_64_RELATIVE is accepted: any
other dynamic relocation (a symbolic R_X86_64_64, a GOT or PLT slot, a 32-bit
absolute) cannot be expressed as a PE base relocation and would leave a wrong
address in the image, so the build fails instead (the post-link check).

References: Microsoft PE/COFF specification (optional header, section table,
.reloc section, IMAGE_REL_BASED_DIR64 = 10); ELF x86-64 psABI (R_X86_64_RELATIVE
= 8, Elf64_Rela layout); UEFI 2.9 section 2.1.1 (subsystem 10 = EFI application).
"""
import struct
import sys

R_X86_64_RELATIVE = 8
SHT_NOBITS = 8
SHF_ALLOC = 0x2

PAGE = 0x1000
FILE_ALIGN = 0x200
IMAGE_FILE_MACHINE_AMD64 = 0x8664
IMAGE_FILE_EXECUTABLE_IMAGE = 0x0002
IMAGE_FILE_LARGE_ADDRESS_AWARE = 0x0020
IMAGE_SUBSYSTEM_EFI_APPLICATION = 10
IMAGE_DLLCHARACTERISTICS_DYNAMIC_BASE = 0x0040
IMAGE_DLLCHARACTERISTICS_NX_COMPAT = 0x0100
IMAGE_REL_BASED_DIR64 = 10
IMAGE_DIRECTORY_ENTRY_BASERELOC = 5
SCN_CNT_CODE = 0x00000020
SCN_CNT_INITIALIZED_DATA = 0x00000040
SCN_MEM_DISCARDABLE = 0x02000000
SCN_MEM_EXECUTE = 0x20000000
SCN_MEM_READ = 0x40000000
SCN_MEM_WRITE = 0x80000000

# ELF output section -> (PE name, characteristics). .bss is folded into .data.
PE_SECTIONS = [
    (".text", b".text", SCN_CNT_CODE | SCN_MEM_EXECUTE | SCN_MEM_READ),
    (".rodata", b".rdata", SCN_CNT_INITIALIZED_DATA | SCN_MEM_READ),
    (".data", b".data", SCN_CNT_INITIALIZED_DATA | SCN_MEM_READ | SCN_MEM_WRITE),
]


def fail(msg):
    sys.stderr.write("elf2efi: error: %s\n" % msg)
    sys.exit(1)


def align(x, a=PAGE):
    return (x + a - 1) & ~(a - 1)


class Elf:
    def __init__(self, data):
        self.data = data
        if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
            fail("not a little-endian ELF64 file")
        (e_type, e_machine, _, self.entry, _, e_shoff, _, _, _, _,
         e_shentsize, e_shnum, e_shstrndx) = struct.unpack_from("<HHIQQQIHHHHHH", data, 16)
        if e_machine != 62:
            fail("not an x86-64 ELF (e_machine %d)" % e_machine)
        if e_type != 3:
            fail("expected a static PIE (ET_DYN), got e_type %d" % e_type)
        self.sections = {}
        raw = []
        for i in range(e_shnum):
            raw.append(struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize))
        strtab = raw[e_shstrndx]
        for (name, stype, flags, addr, off, size, link, info, _, entsize) in raw:
            n = data[strtab[4] + name:data.index(b"\0", strtab[4] + name)].decode()
            self.sections[n] = dict(type=stype, flags=flags, addr=addr, off=off,
                                    size=size, link=link, entsize=entsize)
        self.symbols = self._symbols(raw)

    def _symbols(self, raw):
        sym = self.sections.get(".symtab")
        if not sym:
            return {}
        strs = raw[sym["link"]]
        out = {}
        for i in range(sym["size"] // 24):
            name, _, _, _, value, _ = struct.unpack_from("<IBBHQQ", self.data, sym["off"] + 24 * i)
            if name:
                s = strs[4] + name
                out[self.data[s:self.data.index(b"\0", s)].decode()] = value
        return out

    def bytes_of(self, name):
        s = self.sections[name]
        if s["type"] == SHT_NOBITS:
            return b""
        return self.data[s["off"]:s["off"] + s["size"]]


def relocations(elf, image_end):
    """RVAs of the 64-bit slots the loader must adjust. Fails on anything else."""
    sites = []
    for name, s in elf.sections.items():
        if not name.startswith(".rela"):
            continue
        if s["type"] != 4:  # SHT_RELA
            continue
        for i in range(s["size"] // 24):
            off, info, addend = struct.unpack_from("<QQq", elf.data, s["off"] + 24 * i)
            rtype, rsym = info & 0xffffffff, info >> 32
            if rtype != R_X86_64_RELATIVE or rsym != 0:
                fail("unexpected dynamic relocation type %d (symbol %d) at 0x%x in %s: only "
                     "R_X86_64_RELATIVE can become a PE base relocation; build with "
                     "-fpie -fvisibility=hidden and avoid absolute 32-bit addresses"
                     % (rtype, rsym, off, name))
            if not (0 <= addend < image_end):
                fail("relocation at 0x%x points outside the image (0x%x)" % (off, addend))
            sites.append((off, addend))
    text = elf.sections[".text"]
    for off, _ in sites:
        if text["addr"] <= off < text["addr"] + text["size"]:
            fail("relocation at 0x%x would patch code in .text" % off)
    return sorted(sites)


def base_reloc_table(sites):
    """PE .reloc: one block per 4 KiB page, entries (type << 12 | offset), 4-byte padded."""
    out = b""
    i = 0
    while i < len(sites):
        page = sites[i] & ~(PAGE - 1)
        entries = []
        while i < len(sites) and sites[i] & ~(PAGE - 1) == page:
            entries.append((IMAGE_REL_BASED_DIR64 << 12) | (sites[i] & (PAGE - 1)))
            i += 1
        if len(entries) % 2:
            entries.append(0)  # IMAGE_REL_BASED_ABSOLUTE: padding
        out += struct.pack("<II", page, 8 + 2 * len(entries))
        out += struct.pack("<%dH" % len(entries), *entries)
    if not out:
        # Some loaders dislike an empty directory: one block with one padding entry.
        out = struct.pack("<IIHH", 0, 12, 0, 0)
    return out


def main():
    if len(sys.argv) != 3:
        fail("usage: elf2efi.py IN.elf OUT.efi")
    elf = Elf(open(sys.argv[1], "rb").read())
    for name in (".text", ".rodata", ".data", ".bss"):
        if name not in elf.sections:
            fail("section %s missing: is this linked with linker.ld?" % name)
    image_end = elf.symbols.get("__image_end")
    if image_end is None:
        fail("symbol __image_end missing: link with linker.ld and keep symbols")

    # Every allocated section that carries image content must lie in [0x1000, image_end).
    for name, s in elf.sections.items():
        if not (s["flags"] & SHF_ALLOC) or s["size"] == 0:
            continue
        inside = PAGE <= s["addr"] and s["addr"] + s["size"] <= image_end
        bookkeeping = name in (".dynamic", ".rela.dyn", ".dynsym", ".dynstr", ".hash", ".gnu.hash")
        if not inside and not bookkeeping:
            fail("section %s at 0x%x is outside the image: add it to linker.ld" % (name, s["addr"]))
        if inside and name not in (".text", ".rodata", ".data", ".bss"):
            fail("unexpected section %s inside the image: add it to linker.ld" % name)

    # The loaded image as the linker laid it out, with every relocated slot holding the
    # address it should have at ImageBase 0. ld.lld leaves RELA slots zero (the addend
    # lives only in the relocation entry); a PE loader adds the load offset to what the
    # slot already holds, so the addend has to be written into the slot here.
    img = bytearray(image_end)
    for name in (".text", ".rodata", ".data"):
        s = elf.sections[name]
        img[s["addr"]:s["addr"] + s["size"]] = elf.bytes_of(name)
    relocs = relocations(elf, image_end)
    for off, addend in relocs:
        struct.pack_into("<Q", img, off, addend)
    sites = [off for off, _ in relocs]
    reloc = base_reloc_table(sites)

    layout = []  # (pe name, rva, virtual size, raw bytes, characteristics)
    for ename, pname, chars in PE_SECTIONS:
        s = elf.sections[ename]
        body = bytes(img[s["addr"]:s["addr"] + len(elf.bytes_of(ename))])
        vsize = s["size"]
        if ename == ".data":
            bss = elf.sections[".bss"]
            vsize = bss["addr"] + bss["size"] - s["addr"]
        if vsize == 0:
            continue
        if s["addr"] % PAGE:
            fail("section %s is not page aligned" % ename)
        layout.append((pname, s["addr"], vsize, body, chars))
    reloc_rva = image_end
    layout.append((b".reloc", reloc_rva, len(reloc), reloc,
                   SCN_CNT_INITIALIZED_DATA | SCN_MEM_READ | SCN_MEM_DISCARDABLE))
    size_of_image = align(reloc_rva + len(reloc))

    nsec = len(layout)
    opt_size = 112 + 16 * 8
    headers = bytearray(FILE_ALIGN)
    struct.pack_into("<2s58xI", headers, 0, b"MZ", 0x40)  # e_lfanew at 0x3c
    struct.pack_into("<4sHHIIIHH", headers, 0x40, b"PE\0\0", IMAGE_FILE_MACHINE_AMD64, nsec,
                     0, 0, 0, opt_size, IMAGE_FILE_EXECUTABLE_IMAGE | IMAGE_FILE_LARGE_ADDRESS_AWARE)
    text = layout[0]
    if text[0] != b".text":
        fail("the image has no code")
    code_size = align(len(text[3]), FILE_ALIGN)
    init_size = sum(align(len(b), FILE_ALIGN) for (_, _, _, b, _) in layout[1:])
    bss_size = elf.sections[".bss"]["size"]
    opt = 0x40 + 24
    struct.pack_into("<HBBIIIIIQIIHHHHHHIIIIHHQQQQII", headers, opt,
                     0x20B, 14, 0, code_size, init_size, bss_size, elf.entry, text[1],
                     0, PAGE, FILE_ALIGN, 0, 0, 0, 0, 0, 0, 0, size_of_image, FILE_ALIGN, 0,
                     IMAGE_SUBSYSTEM_EFI_APPLICATION,
                     IMAGE_DLLCHARACTERISTICS_DYNAMIC_BASE | IMAGE_DLLCHARACTERISTICS_NX_COMPAT,
                     0x10000, 0x10000, 0, 0, 0, 16)
    struct.pack_into("<II", headers, opt + 112 + 8 * IMAGE_DIRECTORY_ENTRY_BASERELOC,
                     reloc_rva, len(reloc))
    sh = opt + opt_size
    body = bytearray()
    last_end = 0
    for (pname, rva, vsize, raw, chars) in layout:
        raw_size = align(len(raw), FILE_ALIGN)
        if rva < last_end:
            fail("section %s overlaps the one before it" % pname.decode())
        last_end = rva + vsize
        struct.pack_into("<8sIIIIIIHHI", headers, sh, pname, vsize, rva,
                         raw_size, FILE_ALIGN + len(body) if raw_size else 0, 0, 0, 0, 0, chars)
        sh += 40
        body += raw + b"\0" * (raw_size - len(raw))
    if sh > FILE_ALIGN:
        fail("PE headers do not fit in %d bytes" % FILE_ALIGN)
    with open(sys.argv[2], "wb") as f:
        f.write(bytes(headers) + bytes(body))
    print("elf2efi: %s: %d bytes, %d base relocations"
          % (sys.argv[2], FILE_ALIGN + len(body), len(sites)))


if __name__ == "__main__":
    main()
