/* SPDX-License-Identifier: MIT */
/* memaccept (test image): fault injection for the platform emulator, chosen with emu_fault=. */
#ifndef ARCH_X86_EMU_FAULTS_H
#define ARCH_X86_EMU_FAULTS_H

#include "include/types.h"

/*
 * emu_fault= is a comma-separated list of:
 *   busy:N                  the next N accept calls answer "busy" (TDX OPERAND_BUSY)
 *   busy@ADDR:N             accepts that touch ADDR answer "busy" N times
 *   sev_status=BITS         SNP: SEV_STATUS has these bits too (other SEV features: 0x800
 *                           Secure TSC, 0x8 vTOM, ...), in the VMSA features KVM expects
 *   mailbox_late@ID:MS      TDX: the AP with APIC ID ID acknowledges its wakeup and runs the
 *                           OS's code MS ms later (the host scheduled it late)
 *   psc_refused             SNP: the next Page State Change exit is refused as malformed
 *                           (SW_EXITINFO1 = 2, invalid input), as KVM refuses a bad exit
 *   no_multi_vmpl           SNP under an SVSM: the host does not advertise multiple VMPLs
 *                           (hypervisor feature bit 5), as upstream KVM does not
 *   busy_ms[@ADDR]:MS       TDX: the host holds priority on the SEPT entry for MS ms from
 *                           the first accept (at ADDR): every accept in that time answers
 *                           "busy"; one still busy 1 s (the module's host-priority timeout)
 *                           after the vCPU's first busy answer makes the module exit to KVM,
 *                           which stops the VM (KVM internal error)
 *   size_mismatch@ADDR      the host mapped the 2 MiB unit at ADDR with 4 KiB pages
 *                           (TDX PAGE_SIZE_MISMATCH; SNP 4 KiB RMP entries: FAIL_SIZEMISMATCH)
 *   already@ADDR            the 4 KiB page at ADDR was accepted or validated behind the
 *                           guest's back (TDX ALREADY_ACCEPTED; SNP PVALIDATE no-update):
 *                           in unaccepted memory, what the unaccepted.probe rule must find
 *   status@ADDR=VALUE       TDX: accepting ADDR returns status VALUE
 *   pvalidate_input@ADDR    SNP: PVALIDATE of ADDR fails with FAIL_INPUT
 *   psc_partial:N           SNP: the hypervisor processes at most N PSC entries per exit
 *   psc_partial_pages:N     SNP: ... at most N 4 KiB pages per exit, stopping inside 2 MiB
 *                           entries (their cur_page says how far it got)
 *   cpuid_novalid           SNP: the hypervisor answers GHCB CPUID exits without marking
 *                           RBX valid
 *   psc_error               SNP: the next Page State Change fails (SW_EXITINFO2 != 0)
 *   psc_backwards           SNP: the next partial PSC answer moves cur_entry backwards
 *   no_sept_ve_disable      TDX: TD attributes without SEPT_VE_DISABLE
 *   debug_td                TDX: TD attributes with DEBUG (bit 0) set
 *   gpaw52                  TDX: a TD with a 52-bit GPA width (the host's CPUID 0x80000008
 *                           gives 52 guest physical address bits: KVM picks 5-level EPT
 *                           and sets CONFIG_FLAGS.MAX_GPAW): TDG.VP.INFO reports GPAW 52,
 *                           the shared bit is GPA bit 51
 *   flexible_pending_ve     TDX: the VMM set CONFIG_FLAGS.FLEXIBLE_PENDING_VE (TDX module
 *                           1.5; KVM does not), so the TD may turn pending #VEs off itself
 *   optin_absent            SNP: the firmware has no memory acceptance protocol
 *   optin_fail              SNP: AllowUnacceptedMemory returns an error
 *   svsm_busy:N             SNP, emu_svsm=1: the SVSM answers the next N calls BUSY
 *   svsm_incomplete:N       SNP, emu_svsm=1: the next N PVALIDATE calls stop after 3
 *                           entries (when more remain) and answer INCOMPLETE, as the SVSM
 *                           spec allows (COCONUT itself never does)
 *   svsm_not_run            SNP, emu_svsm=1: the host refuses the next Run VMPL request
 *                           (the SVSM never sees the call; call_pending stays set)
 *   ap_create_refused:N     SNP: the host refuses the next N AP Creation create requests
 *                           as KVM refuses a bad one (SW_EXITINFO1 = 2, invalid input)
 *   ap_create_malformed     SNP: the host answers the next create request with
 *                           SW_EXITINFO1 = 2 and a reason no GHCB spec defines (0x99)
 *   ap_create_novalid       SNP: the host carries out the next AP Creation create request
 *                           but leaves SW_EXITINFO1 and SW_EXITINFO2 unmarked in the GHCB
 *                           valid bitmap (KVM marks them: ghcb_set_sw_exit_info_1/2)
 *   ap_destroy_refused:N    SNP: the host refuses the next N AP Destroy requests (as
 *                           ap_create_refused; KVM refuses one only for an unknown APIC ID)
 *   ap_destroy_malformed    SNP: the next AP Destroy gets ap_create_malformed's answer
 *   rmpadjust_vmsa_fail:N   SNP: the next N RMPADJUST calls that set the VMSA attribute
 *                           fail with FAIL_SIZEMISMATCH and change nothing
 *   rmpadjust_unvmsa_fail:N SNP: ... the next N that clear it from a VMSA page
 *   svsm_create_vcpu_refused:N  SNP, emu_svsm=1: the SVSM refuses the next N Create vCPU
 *                           calls with INVALID_PARAMETER, as COCONUT refuses a VMSA it
 *                           does not accept
 *   svsm_create_vcpu_malformed  SNP, emu_svsm=1: the SVSM answers the next Create vCPU
 *                           with a result no SVSM spec defines (0x80000099)
 *   svsm_delete_vcpu_refused:N  SNP, emu_svsm=1: the SVSM refuses the next N Delete vCPU
 *                           calls with INVALID_PARAMETER and keeps the VMSA
 *   svsm_delete_vcpu_malformed  SNP, emu_svsm=1: the SVSM answers the next Delete vCPU
 *                           with a result no SVSM spec defines (0x80000099)
 *   ap_create_lost:N        SNP: the host accepts the next N AP Creation requests
 *                           (SW_EXITINFO1 = 0) and keeps the VMSA, but never runs the vCPU
 *   ap_create_late:N        SNP: as ap_create_lost, but the host runs the vCPU when the
 *                           guest's AP Destroy for it arrives (the latest a slow host
 *                           could), lets it run 50 ms, then carries out the destroy
 *   mailbox_ignore@ID       TDX: the AP with APIC ID ID never acknowledges a wakeup
 *                           command (the host never runs it again)
 *   mailbox_ack_only@ID     TDX: the AP with APIC ID ID acknowledges its wakeup, then
 *                           the host never runs it again (it never reaches the vector)
 *   tdvf_old_ap_tables      TDX: the firmware runs its waiting APs on page tables at
 *                           0x800000-0x806000 in memory its map calls usable, as TDVF did
 *                           before edk2-stable202411; the summary says whether they are
 *                           intact at the end (tdvf_old_tables_intact)
 *   no_mp_wakeup            TDX: the firmware adds no multiprocessor wakeup structure
 *   mp_wakeup_bad_mailbox   TDX: the structure's mailbox is ordinary loader memory,
 *                           not ACPI NVS
 *   ebs_retries:N           SNP: the stand-in firmware changes the memory map before each of
 *                           the first N ExitBootServices calls (N + 1 calls in all)
 *   ebs_map_growth:N        SNP: before the first ExitBootServices call it adds N one-page
 *                           allocations of alternating types (the map grows by about N)
 *   handover_unaccepted@ADDR  the firmware's map calls the 4 KiB page at ADDR accepted RAM,
 *                           but it was never accepted (TDX: pending; SNP: private, not
 *                           validated)
 *   ghcb_usable             SNP: the GHCB the stand-in firmware registered (the GHCB MSR
 *                           names it at hand-over) is boot-services data, not reserved
 *   cc_pages_usable         SNP: the CC blob's secrets and CPUID pages are boot-services
 *                           data, memory the OS may allocate after ExitBootServices
 *   cbit=N                  SNP: the C-bit is bit N (without it: 51, as on real parts,
 *                           where guest RAM can be seen a second time, else 56, a PTE bit
 *                           TCG ignores). Below 52 it is an address bit for TCG: the boot
 *                           needs guest RAM mapped a second time at 2^N (tests/run.py
 *                           `c_bit_alias`: an ivshmem device on the same memory, whose BAR
 *                           the emulated host moves there), else the host refuses it
 *   la57                    the firmware hands over with five-level paging (CR4.LA57):
 *                           the boot vCPU from ExitBootServices on and, in a TD, the
 *                           APs waiting in the firmware's mailbox loop (a TDVF built
 *                           with 5-level paging); needs a CPU with LA57 (-cpu ...,+la57)
 *   ebs_accept_ms=N         SNP, without the opt-in: the stand-in firmware spends N ms
 *                           accepting memory in the first ExitBootServices call (the one that
 *                           fails), as OVMF's ResolveUnacceptedMemory does
 *   map_size_short=N        SNP: GetMemoryMap() reports a needed size N descriptors short and,
 *                           given a buffer of that size, writes the whole map past its end
 *                           (edk2 before pull request 11609 did so for type 15 entries)
 *   alloc_type15            SNP: the stand-in firmware's AllocatePages and AllocatePool grant
 *                           type 15 (as boot-services data) instead of refusing it
 * The hostile host (docs/threat-model.md; cases hostile-*), each one attack:
 *   vc_forge_pvalidate=CODE SNP: at the next PVALIDATE once the guest's GHCB is registered,
 *                           the host injects #VC with error code CODE, RIP at the PVALIDATE
 *                           (WeSee: after PVALIDATE's nested page fault)
 *   vc_forge_vmgexit=CODE   SNP: after the next exit through the guest's GHCB the host
 *                           injects #VC CODE at the instruction after the VMGEXIT
 *   vc_nested               SNP: during the next exit the guest's #VC handler makes, the
 *                           host injects a second #VC (CPUID, RIP at a real CPUID, so that
 *                           only the handler's nesting guard can tell)
 *   msr_intercept=MSR       SNP: the host intercepts MSR MSR once after ExitBootServices,
 *                           one the hardware passes through (#VC 0x7C at the guest's access)
 *   tsc_freq_intercept=MHZ  SNP, Secure TSC: the host intercepts GUEST_TSC_FREQ: before
 *                           ExitBootServices the firmware's #VC handler forwards the read
 *                           and the host answers MHZ; after it the read raises #VC
 *   sev_only=VALUE          SEV_STATUS reads VALUE exactly: 0x1 an SEV guest, 0x3 SEV-ES,
 *                           neither with SNP
 *   psc_stall               SNP: the host answers every Page State Change with success and
 *                           no progress (cur_entry and the entries unchanged)
 *   psc_range               SNP: the next Page State Change answer has cur_entry beyond
 *                           end_entry + 1
 *   psc_lie                 SNP: the host answers every Page State Change as done and
 *                           converts nothing (pages stay shared)
 *   svsm_lie                SNP, emu_svsm=1: the SVSM answers PVALIDATE requests with
 *                           success and validates nothing
 *   io_garbage              TDX, SNP: the host answers every port read with all ones above
 *                           the operand size (TDVMCALL R11, GHCB RAX)
 *   port_lie@PORT=VALUE     TDX, SNP: reads of port PORT through the host answer VALUE (the
 *                           ACPI PM timer at 0x608 on q35: a timer that never advances)
 *   ve_len_lie              TDX: the next instruction #VE reports a length one byte longer
 *                           than the instruction's
 *   ve_reason_lie           TDX: the next CPUID #VE reports exit reason RDMSR instead
 *                           (neither can come from a real TDX module: a stand-in for a
 *                           broken one, for the handler's check of the #VE information)
 *   ghcb_version_lie        SNP: the host answers the GHCB MSR protocol's SEV information
 *                           request with protocol versions 1..1 (no SNP)
 *   ghcb_register_lie       SNP: the host answers the GHCB registration with another GFN
 *   vc_nmi                  SNP: during the next exit the guest's #VC handler makes, the
 *                           host injects an NMI (AMD APM vol. 2: without Restricted
 *                           Injection the hypervisor may inject one at any time)
 *   tsc_factor=N            SNP: the secrets page's TSC_FACTOR is N (0.001 %; not an attack:
 *                           the PSP writes it)
 *   cpuid_tsc_lie=KHZ       the host's CPUID hypervisor leaves go up to 0x40000010 and
 *                           declare a TSC of KHZ kHz there (leaf 1 says "hypervisor")
 *   madt_add@ID             TDX, SNP: the MADT the guest reads lists one more enabled CPU,
 *                           a local x2APIC entry with APIC ID ID, ahead of every other
 *                           processor entry (a vCPU's ID: a duplicate; 0xffffffff,
 *                           0xfffffffe: broadcast IDs; any other: a CPU that does not exist)
 *   madt_drop@ID            TDX, SNP: the MADT the guest reads leaves out the vCPU with APIC
 *                           ID ID (the vCPU exists and waits as every other does)
 *   mailbox_at=ADDR         TDX: the wakeup structure names ADDR as the mailbox (memory
 *                           made unaccepted, the kernel's allocator memory, ...)
 *   mailbox_shared          TDX: the wakeup structure names the real mailbox's shared alias
 *                           (its GPA with the shared bit set: memory the host reads and writes)
 *   mailbox_in_image        TDX: the wakeup structure names a page of the loaded memaccept
 *                           image (the kernel's own data)
 * (Without a successful opt-in the stand-in firmware changes the memory map inside
 * ExitBootServices, as OVMF does when it accepts everything there.)
 * ADDR and VALUE are hex (0x...) or sizes (1G, 1025M).
 */
enum emu_fault_kind {
	FAULT_BUSY,
	FAULT_SIZE_MISMATCH,
	FAULT_ALREADY,
	FAULT_STATUS,
	FAULT_PVALIDATE_INPUT,
	FAULT_PSC_PARTIAL,
	FAULT_PSC_ERROR,
	FAULT_PSC_BACKWARDS,
	FAULT_NO_SEPT_VE_DISABLE,
	FAULT_OPTIN_ABSENT,
	FAULT_OPTIN_FAIL,
	FAULT_DEBUG_TD,
	FAULT_PSC_PARTIAL_PAGES,
	FAULT_CPUID_NOVALID,
	FAULT_SVSM_BUSY,
	FAULT_SVSM_NOT_RUN,
	FAULT_AP_CREATE_REFUSED,
	FAULT_AP_CREATE_MALFORMED,
	FAULT_MAILBOX_IGNORE,
	FAULT_NO_MP_WAKEUP,
	FAULT_MP_WAKEUP_BAD_MAILBOX,
	FAULT_MAILBOX_ACK_ONLY,
	FAULT_SVSM_CREATE_VCPU_REFUSED,
	FAULT_SVSM_CREATE_VCPU_MALFORMED,
	FAULT_SVSM_DELETE_VCPU_REFUSED,
	FAULT_SVSM_DELETE_VCPU_MALFORMED,
	FAULT_AP_CREATE_LOST,
	FAULT_AP_CREATE_LATE,
	FAULT_TDVF_OLD_AP_TABLES,
	FAULT_FLEXIBLE_PENDING_VE,
	FAULT_SVSM_INCOMPLETE,
	FAULT_AP_DESTROY_REFUSED,
	FAULT_AP_DESTROY_MALFORMED,
	FAULT_RMPADJUST_VMSA_FAIL,
	FAULT_RMPADJUST_UNVMSA_FAIL,
	FAULT_BUSY_MS,
	FAULT_SEV_STATUS,
	FAULT_NO_MULTI_VMPL,
	FAULT_MAILBOX_LATE,
	FAULT_PSC_REFUSED,
	FAULT_EBS_RETRIES,
	FAULT_EBS_MAP_GROWTH,
	FAULT_CC_PAGES_USABLE,
	FAULT_HANDOVER_UNACCEPTED,
	FAULT_GPAW52,
	FAULT_LA57,
	FAULT_CBIT,
	FAULT_AP_CREATE_NOVALID,
	FAULT_VC_FORGE_PVALIDATE,
	FAULT_VC_FORGE_VMGEXIT,
	FAULT_VC_NESTED,
	FAULT_MSR_INTERCEPT,
	FAULT_TSC_FREQ_INTERCEPT,
	FAULT_SEV_ONLY,
	FAULT_PSC_STALL,
	FAULT_PSC_RANGE,
	FAULT_PSC_LIE,
	FAULT_SVSM_LIE,
	FAULT_IO_GARBAGE,
	FAULT_PORT_LIE,
	FAULT_CPUID_TSC_LIE,
	FAULT_VE_LEN_LIE,
	FAULT_VE_REASON_LIE,
	FAULT_TSC_FACTOR,
	FAULT_GHCB_VERSION_LIE,
	FAULT_GHCB_REGISTER_LIE,
	FAULT_VC_NMI,
	FAULT_EBS_ACCEPT_MS,
	FAULT_MAP_SIZE_SHORT,
	FAULT_ALLOC_TYPE15,
	FAULT_MAILBOX_SLOW_ACK,
	FAULT_MADT_ADD,
	FAULT_MADT_DROP,
	FAULT_MAILBOX_AT,
	FAULT_MAILBOX_SHARED,
	FAULT_MAILBOX_IN_IMAGE,
	FAULT_RMPADJUST_UNVALIDATED,
	FAULT_GHCB_USABLE,
	FAULT_KIND_COUNT,
};

#define EMU_MAX_FAULTS 16
#define FAULT_ANY_ADDR UINT64_MAX

struct emu_fault {
	u32 kind;
	u64 addr;	/* FAULT_ANY_ADDR when not tied to an address */
	u64 count;	/* how many more times it fires (busy, psc_*); 1 otherwise */
	u64 value;	/* status for FAULT_STATUS, entries for FAULT_PSC_PARTIAL */
	u64 fired;
};

struct emu_faults {
	unsigned n;
	struct emu_fault f[EMU_MAX_FAULTS];
};

/* Parse; on error writes a reason to err and returns false (nothing is injected then). */
bool emu_faults_parse(const char *spec, struct emu_faults *out, char *err, size_t errlen);
/*
 * The first armed fault of `kind` whose address lies in [start, end) (or that has no
 * address): consumes one firing and returns it, or NULL.
 */
struct emu_fault *emu_fault_take(struct emu_faults *fs, u32 kind, u64 start, u64 end);
/* Same, without consuming (for faults that describe state, like size_mismatch). */
struct emu_fault *emu_fault_find(struct emu_faults *fs, u32 kind, u64 start, u64 end);
const char *emu_fault_name(u32 kind);

#endif
