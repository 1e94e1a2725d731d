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
 * test setup (tests/run.py `c_bit_alias`) backs guest RAM with a file and gives QEMU an
 * ivshmem device on the same file; here the emulated host moves the device's memory BAR
 * to 2^N. Private accesses then reach the same bytes through the alias, shared ones
 * directly, as on the real part. Where that device is there, the emulated CPU reports
 * the C-bit at 51 unless emu_fault=cbit=N says otherwise; where it is not, at 56.
 * Guest RAM must lie below 4 GiB (q35 puts what is above at 4 GiB, not at its offset in
 * the file) and fit in the BAR.
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

/* The ivshmem device's slot on bus 0, or 32 if there is none. */
static u32 find_ivshmem(void)
{
	u32 dev;

	for (dev = 0; dev < 32 && pci_read(dev, 0) != IVSHMEM_ID; dev++)
		;
	return dev;
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
		alias = find_ivshmem() < 32;
		emu_host_leave();
	}
	/* Where the second view of RAM exists, the position of current EPYC parts. */
	return alias ? EMU_SNP_CBIT_REAL : EMU_SNP_CBIT_DEFAULT;
}

void emu_snp_cbit_alias(void)
{
	unsigned cbit;
	u64 at, size;
	u32 dev, cmd;

	if (emu.mode != EMU_SNP)
		return;
	cbit = emu_snp_cbit();
	at = 1ULL << cbit;
	if (cbit >= 52)
		return;
	emu_host_enter();
	dev = find_ivshmem();
	if (dev == 32 || !(pci_read(dev, PCI_BAR2) & PCI_BAR_64BIT))
		emu_host_stops_guest(cbit, "cbit below 52 needs guest RAM mapped again at 2^cbit (an "
					   "ivshmem device on the same memory: tests/run.py c_bit_alias)");
	/* The BAR's size: write all ones, read back (PCI 3.0, 6.2.5.1), with decoding off. */
	cmd = pci_read(dev, PCI_COMMAND);
	pci_write(dev, PCI_COMMAND, cmd & ~PCI_COMMAND_MEMORY);
	pci_write(dev, PCI_BAR2, 0xffffffffu);
	pci_write(dev, PCI_BAR2 + 4, 0xffffffffu);
	size = ~(((u64)pci_read(dev, PCI_BAR2 + 4) << 32) | (pci_read(dev, PCI_BAR2) & ~0xfu)) + 1;
	pci_write(dev, PCI_BAR2, (u32)at);
	pci_write(dev, PCI_BAR2 + 4, (u32)(at >> 32));
	pci_write(dev, PCI_COMMAND, cmd | PCI_COMMAND_MEMORY);
	kprintf("emu: C-bit %u: guest RAM mapped again at %#llx (%llu MiB, ivshmem at 00:%02x.0)\n",
		cbit, at, size >> 20, dev);
	emu_host_leave();
}
