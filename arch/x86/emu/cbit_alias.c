/* SPDX-License-Identifier: MIT */
/* memaccept (test image): the SNP C-bit inside the address field (emu_fault=cbit=N, N < 52), made to work under TCG. */
#include "arch/x86/emu/emu.h"
#include "arch/x86/platform.h"
#include "drivers/console.h"

/*
 * Real EPYC parts put the C-bit at 51, inside the page-table entries' address field,
 * and take that bit out of the physical address width (AMD APM vol. 2, 15.34.1; CPUID
 * 0x8000001F EBX). TCG knows no C-bit: with QEMU's phys-bits=52 a guest access through a
 * PTE with bit 51 set goes to guest-physical address + 2^51, where nothing is. So the
 * test setup (tools/runqemu.py `c_bit_alias`) backs guest RAM with files and gives QEMU
 * an ivshmem device on each; here the emulated host moves each device's memory BAR to
 * 2^N + the guest-physical address of the RAM it shows. Private accesses then reach the
 * same bytes through the alias, shared ones directly, as on the real part. Where such a
 * device is there, the emulated CPU reports the C-bit at 51 unless emu_fault=cbit=N says
 * otherwise; where it is not, at 56.
 *
 * One file is one piece of guest RAM, a power of two aligned to its size (a PCI BAR,
 * PCI 3.0 6.2.5.1); with more than one, each is a NUMA node's memory, and QEMU puts the
 * nodes one after the other in its RAM, of which q35 maps the first below_4g bytes at 0
 * and the rest at 4 GiB. The devices come in the same order on bus 0 (QEMU gives each
 * the next free slot), so a device's offset in RAM is the sum of the BARs before it.
 */
/* PCI configuration mechanism #1 (PCI Local Bus Specification 3.0, 3.2.2.3.2), bus 0. */
#define PCI_CONFIG_ADDRESS 0xcf8
#define PCI_CONFIG_DATA 0xcfc
#define PCI_COMMAND 0x04
#define PCI_COMMAND_MEMORY (1u << 1)
#define PCI_BAR2 0x18
#define PCI_BAR_64BIT (2u << 1)
/* QEMU's ivshmem-plain (docs/specs/ivshmem-spec.rst): Red Hat's vendor ID, BAR2 the memory. */
#define IVSHMEM_ID 0x11101af4u
/*
 * QEMU's CMOS: RAM between 16 MiB and 4 GiB in 64 KiB units at 0x34/0x35 and above it (hw/i386/pc.c
 * pc_cmos_init, which firmware reads too); index port 0x70, data 0x71.
 */
#define CMOS_INDEX 0x70
#define CMOS_DATA 0x71
#define CMOS_RAM_16M_4G_LO 0x34
#define CMOS_RAM_16M_4G_HI 0x35
#define CMOS_RAM_ABOVE_4G 0x5b	/* 0x5b-0x5d: RAM above 4 GiB in 64 KiB units */
#define SIZE_16M (16ULL << 20)
#define SIZE_4G (4ULL << 30)

static u32 pci_read(u32 dev, u32 off)
{
	raw_io_out(PCI_CONFIG_ADDRESS, 0x80000000u | dev << 11 | off, 4);
	return raw_io_in(PCI_CONFIG_DATA, 4);
}

static void pci_write(u32 dev, u32 off, u32 val)
{
	raw_io_out(PCI_CONFIG_ADDRESS, 0x80000000u | dev << 11 | off, 4);
	raw_io_out(PCI_CONFIG_DATA, val, 4);
}

/* The first ivshmem device's slot on bus 0 from slot `from` on, or 32 if there is none. */
static u32 find_ivshmem(u32 from)
{
	u32 dev;

	for (dev = from; dev < 32 && pci_read(dev, 0) != IVSHMEM_ID; dev++)
		;
	return dev;
}

static u8 cmos_read(u8 index)
{
	raw_io_out(CMOS_INDEX, index, 1);
	return (u8)raw_io_in(CMOS_DATA, 1);
}

/* Guest RAM below 4 GiB as QEMU's machine has it (more than 16 MiB on every q35 here). */
static u64 ram_below_4g(void)
{
	return SIZE_16M + (((u64)cmos_read(CMOS_RAM_16M_4G_HI) << 8 | cmos_read(CMOS_RAM_16M_4G_LO)) << 16);
}

static u64 ram_above_4g(void)
{
	u64 units = 0;

	for (int i = 2; i >= 0; i--)
		units = units << 8 | cmos_read((u8)(CMOS_RAM_ABOVE_4G + i));
	return units << 16;
}

/* The size of a 64-bit memory BAR: write all ones, read back (PCI 3.0, 6.2.5.1), decoding off. */
static u64 bar_size(u32 dev)
{
	pci_write(dev, PCI_BAR2, 0xffffffffu);
	pci_write(dev, PCI_BAR2 + 4, 0xffffffffu);
	return ~(((u64)pci_read(dev, PCI_BAR2 + 4) << 32) | (pci_read(dev, PCI_BAR2) & ~0xfu)) + 1;
}

unsigned emu_snp_cbit(void)
{
	static int alias = -1;	/* is the second view there? Looked up once, before ExitBootServices */
	struct emu_fault *f = emu_fault_find(&emu.faults, FAULT_CBIT, 0, 0);

	/* An address bit from 32 up, or one of the bits 52-58 the CPU ignores in a PTE. */
	if (f && f->value >= 32 && f->value <= 58)
		return (unsigned)f->value;
	if (alias < 0) {
		/* The emulated host's own look at its machine: port I/O the observer lets through. */
		emu_host_enter();
		alias = find_ivshmem(0) < 32;
		emu_host_leave();
	}
	/* Where the second view of RAM exists, the position of current EPYC parts. */
	return alias ? EMU_SNP_CBIT_REAL : EMU_SNP_CBIT_DEFAULT;
}

void emu_snp_cbit_alias(void)
{
	unsigned cbit;
	u64 at, size, low, off = 0, gpa;
	u32 dev, cmd, n = 0;

	if (emu.mode != EMU_SNP)
		return;
	cbit = emu_snp_cbit();
	at = 1ULL << cbit;
	if (cbit >= 52)
		return;
	emu_host_enter();
	dev = find_ivshmem(0);
	if (dev == 32)
		emu_host_stops_guest(cbit, "cbit below 52 needs guest RAM mapped again at 2^cbit (an "
					   "ivshmem device on the same memory: tests/run.py c_bit_alias)");
	low = ram_below_4g();
	for (; dev < 32; dev = find_ivshmem(dev + 1), n++) {
		if (!(pci_read(dev, PCI_BAR2) & PCI_BAR_64BIT))
			emu_host_stops_guest(dev, "the ivshmem device for the C-bit alias has no 64-bit BAR");
		cmd = pci_read(dev, PCI_COMMAND);
		pci_write(dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MEMORY);
		size = bar_size(dev);
		gpa = off < low ? off : off - low + SIZE_4G;
		/* A BAR sits at a multiple of its size; a piece across 4 GiB has no single place. */
		if ((gpa & (size - 1)) || (off < low && off + size > low) || gpa + size > at) {
			kprintf("emu: ivshmem at 00:%02x.0: %llu MiB of RAM at %#llx (%llu MiB below 4 GiB) "
				"cannot be mapped at 2^%u + its address\n", dev, size >> 20, gpa, low >> 20, cbit);
			emu_host_stops_guest(dev, "a C-bit alias piece that is not naturally aligned, "
					     "straddles the end of RAM below 4 GiB or reaches 2^cbit");
		}
		pci_write(dev, PCI_BAR2, (u32)(at + gpa));
		pci_write(dev, PCI_BAR2 + 4, (u32)((at + gpa) >> 32));
		pci_write(dev, PCI_COMMAND, cmd | PCI_COMMAND_MEMORY);
		off += size;
	}
	/* Guest RAM the devices do not cover would be lost to every private access. */
	if (off != low + ram_above_4g()) {
		kprintf("emu: the ivshmem devices show %llu MiB, guest RAM is %llu MiB\n", off >> 20,
			(low + ram_above_4g()) >> 20);
		emu_host_stops_guest(off, "the C-bit alias does not cover all of guest RAM");
	}
	kprintf("emu: C-bit %u: guest RAM mapped again at %#llx (%llu MiB, %u ivshmem device%s)\n",
		cbit, at, off >> 20, n, n == 1 ? "" : "s");
	emu_host_leave();
}
