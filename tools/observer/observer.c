/* SPDX-License-Identifier: MIT */
/* memaccept: the instruction observer, a QEMU TCG plugin that stops an emulated TD or SNP boot at the first instruction a real host would trap and no emulator saw. */

/*
 * Under TCG, RDMSR, CPUID, HLT, port I/O and MMIO simply run: QEMU answers them, and the
 * test image's platform emulator (arch/x86/emu) never hears of them, although on a real
 * TD or SNP guest each is a #VE or #VC that the kernel must handle. This plugin sees
 * every instruction QEMU translates, picks out the classes a real platform can trap
 * (arch/x86/emu/traps.h says which, with sources), and at run time stops the VM when
 * the guest's own code runs one natively that the platform it plays would trap.
 *
 * What "the guest's own code" is comes from marker instructions (arch/x86/observer.h):
 * the emulator marks where the emulated host (firmware, TDX module, KVM) takes over a
 * vCPU and where it hands the vCPU back; the kernel marks the few native MSR accesses it
 * makes on purpose, with the MSR number. Nothing is checked before the emulator arms the
 * observer, after ExitBootServices: until then the firmware's own #VE/#VC handlers
 * serve the boot loader. From the arm on, every load and store is also checked for MMIO.
 *
 * The page-state sanitizer: from the arm on, every load and store the guest's own code
 * makes is also checked against a shadow of each 4 KiB page's state as the real platform
 * holds it (TDX: pending or accepted; SNP: shared or private, validated or not; sim:
 * unaccepted or accepted), which only the emulated host changes (OBS_KIND_PAGES, sent
 * from its page model), and against the private/shared choice of the kernel's own
 * mapping of the page (OBS_KIND_MAPPED, sent by its page-table code). The emulated host
 * sends the state the kernel started with once it knows the final memory map
 * (OBS_KIND_SHADOW_READY); the accesses made before that are held, one per page, and
 * judged then, so the window from ExitBootServices on is covered. A violation stops the
 * VM, naming the access, its address, the page's state and the real platform's reaction.
 *
 * Output (one JSON object per line, to the file named by out=, else stderr):
 * {"event":"observer_stop",...} at a violation, after which QEMU exits with status
 * (OBS_EXIT_STOPPED << 1) | 1; {"event":"observer",...} with counts when QEMU exits.
 *
 * Arguments: out=FILE, mmio=off (skip the MMIO check and the page-state sanitizer),
 * pages=off (skip the page-state sanitizer only: to measure what it costs).
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arch/x86/emu/traps.h"
#include "arch/x86/observer.h"

/*
 * The QEMU plugin API, version 1 (QEMU 7.2; include/qemu/qemu-plugin.h there): the types
 * and functions this file calls, declared here because Debian ships no header for it.
 */
typedef uint64_t qemu_plugin_id_t;
typedef struct {
	const char *target_name;
	struct {
		int min, cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus, max_vcpus;
		} system;
	};
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_plugin_hwaddr;
typedef uint32_t qemu_plugin_meminfo_t;
unsigned int qemu_plugin_mem_size_shift(qemu_plugin_meminfo_t info);
bool qemu_plugin_mem_is_store(qemu_plugin_meminfo_t info);
enum { QEMU_PLUGIN_CB_NO_REGS = 0 };
enum { QEMU_PLUGIN_MEM_RW = 3 };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void *),
				    void *userdata);
void qemu_plugin_reset(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t));
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, void (*cb)(unsigned int, void *),
					  int flags, void *userdata);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    void (*cb)(unsigned int, void *), int flags,
					    void *userdata);
void qemu_plugin_register_vcpu_mem_cb(struct qemu_plugin_insn *insn,
				      void (*cb)(unsigned int, qemu_plugin_meminfo_t, uint64_t, void *),
				      int flags, int rw, void *userdata);
struct qemu_plugin_hwaddr *qemu_plugin_get_hwaddr(qemu_plugin_meminfo_t info, uint64_t vaddr);
bool qemu_plugin_hwaddr_is_io(const struct qemu_plugin_hwaddr *haddr);
uint64_t qemu_plugin_hwaddr_phys_addr(const struct qemu_plugin_hwaddr *haddr);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;

/* ------------------------------------------------------------------ state */

#define SITE_MARKER (-1)

/* One instruction the plugin watches: where it is, what it is. */
struct site {
	uint64_t vaddr;
	int cls;		/* enum trap_class, or SITE_MARKER */
	unsigned kind;		/* marker kind (OBS_KIND_*) */
	uint32_t imm;		/* marker argument */
	unsigned len;
	uint8_t bytes[16];
	unsigned idx, tb_n;	/* its place in its translation block, and the block's length */
};

/*
 * Per vCPU: inside the emulated host (depth > 0)? A declared MSR for the next
 * instruction? The sanitizer's arguments being received, and its count of checked
 * accesses (each vCPU thread writes only its own).
 */
struct vcpu {
	int depth;
	unsigned decl_kind;
	uint32_t decl_msr;
	uint64_t decl_next;
	uint64_t acc;
	unsigned acc_bytes, nargs;
	uint64_t args[OBS_MAX_ARGS];
	uint64_t checked;
	uint64_t insns;		/* instructions run (whole blocks, counted at block entry) */
	/* The kernel's accept path (OBS_KIND_ACCEPT): where the current one began, totals. */
	uint64_t acc_at, plat_at, acc_calls, acc_outside, acc_platform;
	int acc_state;		/* OBS_ACCEPT_* of the last marker, -1 before any */
};

/* The shadow: one byte per 4 KiB page, in 1 GiB chunks made when first set. */
#define SH_CHUNK_SHIFT 30
#define SH_CHUNK_PAGES (1u << (SH_CHUNK_SHIFT - 12))
#define SH_CHUNKS (1u << 16)		/* 64 TiB of guest-physical address space */
#define SH_STATE_MASK 0x0f
#define SH_MAPPED_SHARED 0x10		/* the kernel's own mapping has no C-bit */

static uint8_t *shadow[SH_CHUNKS];
static volatile int shadow_ready;	/* the emulated host sent the starting state */

/* Before shadow_ready: the first access to each page, judged when the state arrives. */
struct held {
	uint64_t pfn1;			/* page frame number + 1; 0 = free slot */
	uint64_t rip, vaddr, pa;
	unsigned vcpu;
	bool store;
};
#define HELD_SLOTS 65536
static struct held *held;
static uint64_t held_pages, held_dropped;
static volatile int held_lock;

static uint64_t page_commands, map_commands;

/*
 * Instructions per boot phase: the boot CPU's count where each OBS_KIND_PHASE marker ran
 * (the first time), and which vCPU ran it. Phase p's instructions are cut[p] - cut[p - 1].
 */
static uint64_t phase_cut[OBS_PHASE_COUNT];
static int phase_vcpu[OBS_PHASE_COUNT];
static const char *const phase_names[OBS_PHASE_COUNT] = {
	[OBS_PHASE_ENTRY] = "entry", [OBS_PHASE_EBS] = "efi_main_to_ebs",
	[OBS_PHASE_DESC] = "descriptor_tables", [OBS_PHASE_MAP] = "memory_map",
	[OBS_PHASE_PT] = "page_tables", [OBS_PHASE_SMP] = "smp", [OBS_PHASE_BITMAP] = "bitmap",
	[OBS_PHASE_ALLOC] = "allocator",
};

static qemu_plugin_id_t self_id;
static struct vcpu *vcpus;
static unsigned nvcpus;
static int out_fd = 2;
static bool watch_mmio = true;
static bool watch_pages = true;

static volatile int armed;	/* the emulator armed the observer: check from now on */
static int mode;		/* OBS_ARM_TDX or OBS_ARM_SNP */
static uint32_t arm_features;	/* SNP: OBS_ARM_SNP_* (the SEV features that drop an intercept) */
static uint64_t arm_vaddr;	/* where the arm marker ran: runqemu finds the image base by it */
static bool mmio_on;		/* TBs translated from now on get memory callbacks */
static volatile int stopping;

/* Counts for the summary: per class, run by the guest's code and by the emulated host. */
static uint64_t guest_runs[TC_COUNT], host_runs[TC_COUNT];
static uint64_t markers, declared;

static void add(uint64_t *p)
{
	__atomic_add_fetch(p, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ output */

static void emit(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* One write: the line arrives whole even if QEMU writes to the same file. */
	if (write(out_fd, line, (size_t)n) < 0)
		return;
}

static const char *mode_name(void)
{
	return mode == OBS_ARM_TDX ? "tdx" : mode == OBS_ARM_SNP ? "snp" : mode == OBS_ARM_SIM ? "sim"
											 : "none";
}

static const char *bytes_hex(const struct site *s, char *buf)
{
	char *p = buf;

	for (unsigned i = 0; i < s->len && i < sizeof(s->bytes); i++)
		p += sprintf(p, "%s%02x", i ? " " : "", s->bytes[i]);
	*p = 0;
	return buf;
}

/*
 * Stop the VM: the guest ran, natively, something the platform it plays would have
 * trapped. The first vCPU to get here reports; any other waits for the exit.
 */
static __attribute__((noreturn)) void stop_raw(unsigned vcpu, uint64_t rip, const char *insn,
					       const char *trap, const char *why, const char *extra)
{
	if (__atomic_exchange_n(&stopping, 1, __ATOMIC_ACQ_REL)) {
		for (;;)
			pause();
	}
	emit("{\"event\":\"observer_stop\",\"platform\":\"%s\",\"insn\":\"%s\",\"rip\":%llu,"
	     "\"vcpu\":%u,\"trap\":\"%s\",\"arm_rip\":%llu,\"arm_features\":%u%s,\"why\":\"%s\"}",
	     mode_name(), insn, (unsigned long long)rip, vcpu, trap, (unsigned long long)arm_vaddr,
	     arm_features, extra ? extra : "", why);
	_exit((OBS_EXIT_STOPPED << 1) | 1);
}

static __attribute__((noreturn)) void stop(unsigned vcpu, const struct site *s, uint64_t rip,
					   const char *insn, int trap, const char *why,
					   const char *extra)
{
	char hex[64] = "", more[256];

	snprintf(more, sizeof(more), ",\"bytes\":\"%s\"%s", s ? bytes_hex(s, hex) : "",
		 extra ? extra : "");
	stop_raw(vcpu, rip, insn, trap_kind_name(trap), why, more);
}

/* ------------------------------------------------------------------ decoding */

/*
 * Which class of platform-trapped instruction this is, or a marker (SITE_MARKER, with
 * s->kind and s->imm), or -2 for anything else. Opcodes: Intel SDM vol. 2 and AMD APM
 * vol. 3. QEMU hands over exactly one instruction, so bytes that would be REX prefixes
 * in 64-bit mode cannot be mistaken for another instruction in 16- or 32-bit code.
 */
static int classify(const uint8_t *b, size_t n, struct site *s)
{
	size_t i = 0;
	bool rep = false, prefixed = false;

	for (; i < n; i++) {
		uint8_t c = b[i];

		if (c == 0xf3)
			rep = true;
		else if (c != 0xf2 && c != 0x66 && c != 0x67 && c != 0xf0 && c != 0x2e && c != 0x36 &&
			 c != 0x3e && c != 0x26 && c != 0x64 && c != 0x65)
			break;
		prefixed = true;
	}
	if (i < n && (b[i] & 0xf0) == 0x40)
		i++;
	if (i >= n)
		return -2;
	switch (b[i++]) {
	case 0xf4:
		return TC_HLT;
	case 0xe4: case 0xe5: case 0xe6: case 0xe7: case 0xec: case 0xed: case 0xee: case 0xef:
		return TC_IO;
	case 0x6c: case 0x6d: case 0x6e: case 0x6f:
		return TC_STRING_IO;
	case 0x0f:
		break;
	default:
		return -2;
	}
	if (i >= n)
		return -2;
	switch (b[i++]) {
	case 0x32:
		return TC_RDMSR;
	case 0x30:
		return TC_WRMSR;
	case 0xa2:
		return TC_CPUID;
	case 0x09:
		return TC_WBINVD;
	case 0x08:
		return TC_INVD;
	case 0x33:
		return TC_RDPMC;
	case 0x31:
		return TC_RDTSC;
	case 0x21: case 0x23:
		/* MOV from/to DRn: the ModRM reg field names the debug register. */
		return i < n && ((b[i] >> 3) & 7) == 7 ? TC_DR7 : -2;
	case 0x1f:
		/* The marker: 0F 1F 84 <kind> <imm32>, nothing before it. */
		if (!prefixed && i == 2 && n == OBS_MARK_LEN && b[2] == 0x84 && b[3] >= OBS_KIND_ARM &&
		    b[3] <= OBS_KIND_LAST) {
			s->kind = b[3];
			s->imm = (uint32_t)b[4] | (uint32_t)b[5] << 8 | (uint32_t)b[6] << 16 |
				 (uint32_t)b[7] << 24;
			return SITE_MARKER;
		}
		return -2;
	case 0x38:
		/* 66 0F 38 82 /r is INVPCID (the 66 prefix is part of its opcode). */
		return i < n && b[i] == 0x82 ? TC_INVPCID : -2;
	case 0x01:
		break;
	default:
		return -2;
	}
	if (i >= n)
		return -2;
	switch (b[i]) {
	case 0xc8: case 0xfa:
		return TC_MONITOR;
	case 0xc9: case 0xfb:
		return TC_MWAIT;
	case 0xc1:
		return TC_VMCALL;
	case 0xd9:
		/* F3 0F 01 D9 is VMGEXIT: a platform call, #UD under TCG, the emulator's. */
		return rep ? -2 : TC_VMMCALL;
	case 0xf9:
		return TC_RDTSCP;
	case 0xfd:
		return TC_RDPRU;
	case 0xc5:
		return TC_PCONFIG;
	case 0xd1:
		return TC_XSETBV;
	case 0xd8: case 0xda: case 0xdb: case 0xdc: case 0xdd: case 0xde: case 0xdf:
		return TC_SVM;
	default:
		return -2;
	}
}

/* ------------------------------------------------------------------ page-state sanitizer */

static const char *const state_names[OBS_PS_COUNT] = {
	[OBS_PS_UNTRACKED] = "untracked", [OBS_PS_OK] = "accepted",
	[OBS_PS_PENDING] = "pending", [OBS_PS_UNACCEPTED] = "unaccepted",
	[OBS_PS_NOT_VALIDATED] = "private, not validated", [OBS_PS_SHARED] = "shared",
	[OBS_PS_VMPL_DENIED] = "not for this VMPL",
};

static uint8_t shadow_get(uint64_t pa)
{
	uint64_t c = pa >> SH_CHUNK_SHIFT;
	uint8_t *chunk;

	if (c >= SH_CHUNKS)
		return 0;
	chunk = __atomic_load_n(&shadow[c], __ATOMIC_ACQUIRE);
	return chunk ? chunk[(pa >> 12) & (SH_CHUNK_PAGES - 1)] : 0;
}

/* The chunk holding pa; made (all untracked, mapped private) when make is set. */
static uint8_t *shadow_chunk(uint64_t pa, bool make)
{
	uint64_t c = pa >> SH_CHUNK_SHIFT;
	uint8_t *chunk, *none = NULL;

	if (c >= SH_CHUNKS)
		return NULL;
	chunk = __atomic_load_n(&shadow[c], __ATOMIC_ACQUIRE);
	if (chunk || !make)
		return chunk;
	chunk = calloc(SH_CHUNK_PAGES, 1);
	if (!chunk) {
		fprintf(stderr, "observer: out of memory for the page-state shadow\n");
		_exit((OBS_EXIT_STOPPED << 1) | 1);
	}
	if (!__atomic_compare_exchange_n(&shadow[c], &none, chunk, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		free(chunk);
		chunk = none;
	}
	return chunk;
}

/*
 * Set [start, end) to a state (mask SH_STATE_MASK) or a mapping (SH_MAPPED_SHARED):
 * bits under mask become val. A chunk is made only for a value other than the default.
 */
static void shadow_set(uint64_t start, uint64_t end, uint8_t mask, uint8_t val)
{
	for (uint64_t pa = start & ~0xfffULL; pa < end;) {
		uint64_t next = ((pa >> SH_CHUNK_SHIFT) + 1) << SH_CHUNK_SHIFT;
		uint8_t *chunk = shadow_chunk(pa, val != 0);

		if (next > end || next == 0)
			next = end;
		if (chunk)
			for (uint64_t a = pa; a < next; a += 4096) {
				uint8_t *b = &chunk[(a >> 12) & (SH_CHUNK_PAGES - 1)];

				__atomic_store_n(b, (uint8_t)((*b & ~mask) | val), __ATOMIC_RELAXED);
			}
		if (next == end || pa >= (uint64_t)SH_CHUNKS << SH_CHUNK_SHIFT)
			break;
		pa = next;
	}
}

/*
 * What the real platform does to this access, or NULL if it lets it through. io: the
 * address is not RAM. Sources: TDX, the TDX module's secure EPT (a PENDING page is an
 * EPT violation; KVM's TDX support ends the TD, Linux arch/x86/kvm/vmx/tdx.c "Guest
 * access before accepting"); SNP, AMD APM vol. 2, 15.36.10 (a private access to a page
 * not validated is #VC with error code 0x404, VMM_PAGE_NOT_VALIDATED) and KVM's
 * implicit conversion (a private access to a shared page, or a shared access to a
 * private one, exits to QEMU with KVM_EXIT_MEMORY_FAULT and QEMU converts the page,
 * discarding its contents: QEMU accel/kvm/kvm-all.c kvm_convert_memory).
 */
static const char *judge(uint8_t sh, bool io, const char **trap)
{
	unsigned st = sh & SH_STATE_MASK;
	bool shared = sh & SH_MAPPED_SHARED;

	switch (mode) {
	case OBS_ARM_TDX:
		*trap = "ept-violation";
		return st == OBS_PS_PENDING ? "a load or store to a private page the TD has not "
					      "accepted (PENDING): the TDX module exits to KVM, which "
					      "ends the TD" : NULL;
	case OBS_ARM_SIM:
		*trap = "unaccepted";
		return st == OBS_PS_UNACCEPTED ? "a load or store to memory not yet accepted: on "
						 "a TD that ends the TD, on SNP it is a #VC 0x404"
					       : NULL;
	case OBS_ARM_SNP:
		if (st == OBS_PS_VMPL_DENIED) {
			*trap = "npf";
			return "an access to a page the SVSM took from the guest's VMPL (a VMSA): the "
			       "RMP's VMPL permission check fails, a nested page fault the host cannot "
			       "resolve";
		}
		if (shared) {
			*trap = "conversion";
			if (st == OBS_PS_OK || st == OBS_PS_NOT_VALIDATED ||
			    (st == OBS_PS_UNTRACKED && !io))
				return "a shared access (mapping without the C-bit) to a private page: "
				       "KVM converts the page to shared and its contents are lost";
			return NULL;
		}
		if (st == OBS_PS_NOT_VALIDATED) {
			*trap = "#VC 0x404";
			return "a private access to a page that is not validated: #VC with error "
			       "code 0x404, which no handler serves";
		}
		if (st == OBS_PS_SHARED) {
			*trap = "conversion";
			return "a private access to a page the hypervisor owns (shared): KVM converts "
			       "it to private, not validated, and the access then takes #VC 0x404";
		}
		return NULL;
	}
	return NULL;
}

static __attribute__((noreturn)) void stop_access(unsigned vcpu, uint64_t rip, uint64_t vaddr,
						   uint64_t pa, bool store, uint8_t sh,
						   const char *trap, const char *why, bool held_access)
{
	char extra[384];

	snprintf(extra, sizeof(extra),
		 ",\"address\":%llu,\"vaddr\":%llu,\"state\":\"%s\",\"mapping\":\"%s\","
		 "\"sanitizer\":\"page_state\",\"held\":%s",
		 (unsigned long long)pa, (unsigned long long)vaddr,
		 state_names[sh & SH_STATE_MASK], sh & SH_MAPPED_SHARED ? "shared" : "private",
		 held_access ? "true" : "false");
	stop_raw(vcpu, rip, store ? "store" : "load", trap, why, extra);
}

static void spin_acquire(volatile int *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		;
}

static void spin_release(volatile int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* Before the starting state is known: keep the first access to this page. */
static void hold(unsigned vcpu, uint64_t rip, uint64_t vaddr, uint64_t pa, bool store)
{
	uint64_t pfn1 = (pa >> 12) + 1;

	spin_acquire(&held_lock);
	for (uint64_t i = 0, h = (pfn1 * 0x9e3779b97f4a7c15ULL) >> 48; i < HELD_SLOTS; i++) {
		struct held *e = &held[(h + i) & (HELD_SLOTS - 1)];

		if (e->pfn1 == pfn1)
			break;
		if (!e->pfn1) {
			*e = (struct held){ pfn1, rip, vaddr, pa, vcpu, store };
			held_pages++;
			break;
		}
		if (i + 1 == HELD_SLOTS)
			held_dropped++;
	}
	spin_release(&held_lock);
}

/* The starting state is here: judge what was held, in no particular order. */
static void judge_held(void)
{
	spin_acquire(&held_lock);
	for (unsigned i = 0; i < HELD_SLOTS; i++) {
		struct held *e = &held[i];
		const char *trap = "", *why;
		uint8_t sh;

		if (!e->pfn1)
			continue;
		sh = shadow_get(e->pa);
		why = judge(sh, false, &trap);
		if (why)
			stop_access(e->vcpu, e->rip, e->vaddr, e->pa, e->store, sh, trap, why, true);
	}
	__atomic_store_n(&shadow_ready, 1, __ATOMIC_RELEASE);
	spin_release(&held_lock);
}

/* One value of a command, a byte at a time (arch/x86/observer.h, OBS_KIND_ARG). */
static void take_arg(struct vcpu *v, uint32_t byte)
{
	v->acc = v->acc << 8 | (byte & 0xff);
	if (++v->acc_bytes < 8)
		return;
	if (v->nargs < OBS_MAX_ARGS)
		v->args[v->nargs] = v->acc;
	v->nargs++;
	v->acc = 0;
	v->acc_bytes = 0;
}

static void command(unsigned vcpu, struct vcpu *v, const struct site *s)
{
	uint64_t start = v->args[0], end = v->args[1], val = v->args[2];
	bool ok = v->nargs == 3 && v->acc_bytes == 0 && start <= end;

	v->nargs = 0;
	if (!ok)
		stop(vcpu, s, s->vaddr, "marker", TRAP_NONE,
		     "a page-state command without its three values", NULL);
	if (s->kind == OBS_KIND_PAGES) {
		/* Page states are the platform's: only the emulated host changes them. */
		if (v->depth == 0 || val >= OBS_PS_COUNT)
			stop(vcpu, s, s->vaddr, "marker", TRAP_NONE,
			     "a page-state change from the guest's own code, or an unknown state", NULL);
		add(&page_commands);
		shadow_set(start, end, SH_STATE_MASK, (uint8_t)val);
	} else {
		if (val > OBS_MAP_NONE)
			stop(vcpu, s, s->vaddr, "marker", TRAP_NONE, "an unknown mapping", NULL);
		add(&map_commands);
		shadow_set(start, end, SH_MAPPED_SHARED, val == OBS_MAP_SHARED ? SH_MAPPED_SHARED : 0);
	}
}

/* ------------------------------------------------------------------ run time */

static struct vcpu *vc(unsigned i)
{
	return i < nvcpus ? &vcpus[i] : NULL;
}

static void after_reset(qemu_plugin_id_t id);

/*
 * One accept, BEGIN .. PLATFORM .. PLATFORM_DONE .. END, on one vCPU (the kernel's path
 * does not nest; a marker out of that order, say after a fault, drops the accept).
 */
static void on_accept(struct vcpu *v, const struct site *s)
{
	uint64_t at = v->insns - (s->tb_n - s->idx);

	switch (s->imm) {
	case OBS_ACCEPT_BEGIN:
		v->acc_at = at;
		break;
	case OBS_ACCEPT_PLATFORM:
		if (v->acc_state != OBS_ACCEPT_BEGIN)
			return (void)(v->acc_state = -1);
		v->plat_at = at;
		break;
	case OBS_ACCEPT_PLATFORM_DONE:
		if (v->acc_state != OBS_ACCEPT_PLATFORM)
			return (void)(v->acc_state = -1);
		v->plat_at = at - v->plat_at;
		break;
	case OBS_ACCEPT_END:
		if (v->acc_state != OBS_ACCEPT_PLATFORM_DONE)
			return (void)(v->acc_state = -1);
		v->acc_calls++;
		v->acc_platform += v->plat_at;
		v->acc_outside += at - v->acc_at - v->plat_at;
		break;
	default:
		return (void)(v->acc_state = -1);
	}
	v->acc_state = (int)s->imm;
}

static void on_marker(unsigned int vcpu, void *udata)
{
	const struct site *s = udata;
	struct vcpu *v = vc(vcpu), *t;

	add(&markers);
	if (!v)
		return;
	switch (s->kind) {
	case OBS_KIND_ARM:
		if (__atomic_exchange_n(&armed, 1, __ATOMIC_ACQ_REL))
			return;
		mode = (int)(s->imm & OBS_ARM_MODE_MASK);
		arm_features = s->imm & ~(uint32_t)OBS_ARM_MODE_MASK;
		arm_vaddr = s->vaddr;
		/*
		 * Retranslate everything, with a memory callback on each instruction (on a
		 * normal VM only for the sanitizer: MMIO does not trap there).
		 */
		if (watch_mmio && (mode != OBS_ARM_SIM || watch_pages))
			qemu_plugin_reset(self_id, after_reset);
		break;
	case OBS_KIND_HOST_ENTER:
		v->depth++;
		break;
	case OBS_KIND_HOST_LEAVE:
		if (v->depth == 0)
			stop(vcpu, s, s->vaddr, "marker", TRAP_NONE,
			     "the emulator left the host on a vCPU that was not in it", NULL);
		v->depth--;
		break;
	case OBS_KIND_HOST_ADOPT:
		t = vc(s->imm);
		if (t)
			__atomic_store_n(&t->depth, 1, __ATOMIC_RELEASE);
		break;
	case OBS_KIND_DECL_RDMSR:
	case OBS_KIND_DECL_WRMSR:
		v->decl_kind = s->kind;
		v->decl_msr = s->imm;
		v->decl_next = s->vaddr + OBS_MARK_LEN;
		break;
	case OBS_KIND_ARG:
		take_arg(v, s->imm);
		break;
	case OBS_KIND_PAGES:
	case OBS_KIND_MAPPED:
		command(vcpu, v, s);
		break;
	case OBS_KIND_PHASE:
		/*
		 * The block's count was added whole at its entry: the instructions from the
		 * marker to the block's end belong to the next phase.
		 */
		if (s->imm < OBS_PHASE_COUNT && !phase_vcpu[s->imm]) {
			phase_cut[s->imm] = v->insns - (s->tb_n - s->idx);
			phase_vcpu[s->imm] = (int)vcpu + 1;
		}
		break;
	case OBS_KIND_ACCEPT:
		on_accept(v, s);
		break;
	case OBS_KIND_SHADOW_READY:
		if (armed && watch_mmio && watch_pages)
			judge_held();
		else
			__atomic_store_n(&shadow_ready, 1, __ATOMIC_RELEASE);
		break;
	}
}

static int platform_trap(int cls)
{
	return mode == OBS_ARM_TDX ? tdx_insn_trap(cls)
				   : snp_insn_trap(cls, !!(arm_features & OBS_ARM_SNP_DEBUG_SWAP),
						   !!(arm_features & OBS_ARM_SNP_NO_RDTSCP),
						   !!(arm_features & OBS_ARM_SNP_NO_INVPCID));
}

static void on_sensitive(unsigned int vcpu, void *udata)
{
	const struct site *s = udata;
	struct vcpu *v = vc(vcpu);
	bool declared_here = v && v->decl_next == s->vaddr &&
			     v->decl_kind == (s->cls == TC_RDMSR ? OBS_KIND_DECL_RDMSR : OBS_KIND_DECL_WRMSR);
	char extra[96] = "";
	int trap;

	if (v)
		v->decl_next = 0;
	if (!armed || !v || v->depth > 0) {
		add(&host_runs[s->cls]);
		return;
	}
	add(&guest_runs[s->cls]);
	/* A normal VM (sim): nothing traps; only memory is checked. */
	if (mode == OBS_ARM_SIM)
		return;
	trap = platform_trap(s->cls);
	if (trap == TRAP_OPERAND && (s->cls == TC_RDMSR || s->cls == TC_WRMSR)) {
		if (!declared_here)
			stop(vcpu, s, s->vaddr, trap_class_name(s->cls), TRAP_OPERAND,
			     "native MSR access without a declared MSR: a real host traps most MSRs; "
			     "go through msr_read()/msr_write() (arch/x86/msr.h)", NULL);
		add(&declared);
		snprintf(extra, sizeof(extra), ",\"msr\":%u", v->decl_msr);
		trap = mode == OBS_ARM_TDX ? tdx_msr_trap(v->decl_msr, s->cls == TC_WRMSR)
					   : snp_msr_trap(v->decl_msr, s->cls == TC_WRMSR,
							  !!(arm_features & OBS_ARM_SNP_SECURE_TSC));
		if (trap != TRAP_NONE)
			stop(vcpu, s, s->vaddr, trap_class_name(s->cls), trap,
			     "the kernel declared this MSR native, but the platform traps it", extra);
		return;
	}
	if (trap == TRAP_OPERAND)
		stop(vcpu, s, s->vaddr, trap_class_name(s->cls), TRAP_OPERAND,
		     "CPUID run natively: a real host answers or traps it by leaf, and only "
		     "cpu_cpuid() lets the emulator play that", NULL);
	if (trap != TRAP_NONE)
		stop(vcpu, s, s->vaddr, trap_class_name(s->cls), trap,
		     "run natively, where the real platform traps it: no #VE/#VC handler and no "
		     "emulator saw it", NULL);
}

/*
 * Every load and store, once armed: MMIO (a real TD or SNP guest traps it), then the
 * page-state sanitizer. Kept short: it runs for every access the guest makes. Only the
 * page of an access's first byte is judged.
 *
 * The guest-physical address is the virtual one: memaccept runs on identity maps only
 * (the firmware's until its own, arch/x86/paging.c). QEMU's own answer cannot be used
 * for RAM: qemu_plugin_hwaddr_phys_addr gives the offset in the RAM block (QEMU 7.2
 * plugins/api.c), and q35 maps the RAM above its low part at 4 GiB through an alias
 * (hw/i386/pc_q35.c, pc_memory_init), so above 4 GiB the two differ. That offset is
 * never above the guest-physical address: an access where it is came through a
 * mapping that is not the identity, which the sanitizer could not judge. Except
 * through the second view of guest RAM that plays an SNP C-bit inside the address
 * field (arch/x86/emu/cbit_alias.c): there QEMU gives the alias's own address, 2^N
 * and up for a C-bit at N (47 to 51 are used), above any RAM offset of a tested guest.
 */
#define SH_ALIAS_FLOOR (1ULL << 46)
static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	struct vcpu *v = vc(vcpu);
	struct qemu_plugin_hwaddr *h;
	const char *trap = "", *why;
	uint64_t pa;
	bool io;
	uint8_t sh;

	if (!armed || !v || v->depth > 0)
		return;
	h = qemu_plugin_get_hwaddr(info, vaddr);
	if (!h)
		return;
	io = qemu_plugin_hwaddr_is_io(h);
	pa = qemu_plugin_hwaddr_phys_addr(h);
	if (io && mode != OBS_ARM_SIM) {
		char extra[96];

		snprintf(extra, sizeof(extra), ",\"address\":%llu", (unsigned long long)pa);
		stop(vcpu, NULL, (uint64_t)(uintptr_t)udata, "mmio", platform_trap(TC_MMIO),
		     "a load or store reached a device: on a real TD or SNP guest MMIO traps, and "
		     "memaccept has no MMIO path there", extra);
	}
	if (!watch_pages)
		return;
	v->checked++;
	if (!io && pa > vaddr && pa < SH_ALIAS_FLOOR) {
		char extra[96];

		snprintf(extra, sizeof(extra), ",\"address\":%llu,\"vaddr\":%llu",
			 (unsigned long long)pa, (unsigned long long)vaddr);
		stop_raw(vcpu, (uint64_t)(uintptr_t)udata, qemu_plugin_mem_is_store(info) ? "store" : "load",
			 "none", "an access through a mapping that is not the identity: the "
			 "page-state sanitizer cannot tell which guest-physical page it reached", extra);
	}
	pa = vaddr;
	if (!__atomic_load_n(&shadow_ready, __ATOMIC_ACQUIRE)) {
		hold(vcpu, (uint64_t)(uintptr_t)udata, vaddr, pa, qemu_plugin_mem_is_store(info));
		return;
	}
	sh = shadow_get(pa);
	if (sh == 0 && mode != OBS_ARM_SNP)
		return;
	why = judge(sh, io, &trap);
	if (why)
		stop_access(vcpu, (uint64_t)(uintptr_t)udata, vaddr, pa, qemu_plugin_mem_is_store(info),
			    sh, trap, why, false);
}

/*
 * Every block's instructions, per vCPU, at the block's entry: one call per block, not per
 * instruction. QEMU 7.2's inline counters (qemu_plugin_register_vcpu_tb_exec_inline) add
 * to one address for all vCPUs, without atomicity, and cannot tell the boot CPU's
 * instructions from those of the APs spinning in firmware meanwhile. A block left early
 * by an exception is counted whole.
 */
static void on_tb_exec(unsigned int vcpu, void *udata)
{
	struct vcpu *v = vc(vcpu);

	if (v)
		v->insns += (uintptr_t)udata;
}

/* ------------------------------------------------------------------ translation */

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)n);
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *b = qemu_plugin_insn_data(insn);
		size_t len = qemu_plugin_insn_size(insn);
		uint64_t va = qemu_plugin_insn_vaddr(insn);
		struct site tmp = { 0 };
		int cls = classify(b, len, &tmp);

		if (mmio_on)
			qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW, (void *)(uintptr_t)va);
		if (cls == -2)
			continue;
		/* Kept for the life of the translation (QEMU may run a block many times). */
		struct site *s = malloc(sizeof(*s));

		if (!s)
			continue;
		*s = tmp;
		s->idx = (unsigned)i;
		s->tb_n = (unsigned)n;
		s->vaddr = va;
		s->cls = cls;
		s->len = (unsigned)(len < sizeof(s->bytes) ? len : sizeof(s->bytes));
		memcpy(s->bytes, b, s->len);
		qemu_plugin_register_vcpu_insn_exec_cb(insn, cls == SITE_MARKER ? on_marker : on_sensitive,
						       QEMU_PLUGIN_CB_NO_REGS, s);
	}
}

/*
 * The sanitizer's summary: pages whose state the platform reported (by state), the
 * loads and stores checked, the pages held until the starting state was known.
 */
static void report_sanitizer(void)
{
	uint64_t by_state[OBS_PS_COUNT] = { 0 }, tracked = 0, checked = 0, mapped_shared = 0;
	char states[256];
	size_t n = 0;

	for (unsigned c = 0; c < SH_CHUNKS; c++) {
		const uint8_t *chunk = shadow[c];

		for (unsigned i = 0; chunk && i < SH_CHUNK_PAGES; i++) {
			unsigned st = chunk[i] & SH_STATE_MASK;

			by_state[st < OBS_PS_COUNT ? st : 0]++;
			tracked += st != OBS_PS_UNTRACKED;
			mapped_shared += !!(chunk[i] & SH_MAPPED_SHARED);
		}
	}
	for (unsigned i = 0; i < nvcpus; i++)
		checked += vcpus[i].checked;
	for (unsigned st = 1; st < OBS_PS_COUNT; st++)
		n += (size_t)snprintf(states + n, sizeof(states) - n, "%s\"%s\":%llu", st > 1 ? "," : "",
				      state_names[st], (unsigned long long)by_state[st]);
	emit("{\"event\":\"sanitizer\",\"on\":%s,\"platform\":\"%s\",\"ready\":%s,"
	     "\"pages_tracked\":%llu,\"accesses_checked\":%llu,\"pages_held\":%llu,"
	     "\"held_dropped\":%llu,\"page_commands\":%llu,\"map_commands\":%llu,"
	     "\"pages_mapped_shared\":%llu,\"final\":{%s}}",
	     armed && mmio_on && watch_pages ? "true" : "false", mode_name(),
	     shadow_ready ? "true" : "false",
	     (unsigned long long)tracked, (unsigned long long)checked,
	     (unsigned long long)held_pages, (unsigned long long)held_dropped,
	     (unsigned long long)page_commands, (unsigned long long)map_commands,
	     (unsigned long long)mapped_shared, states);
}

/*
 * Instructions per boot phase (up to the last phase marker that ran), to `ready` (the end
 * of the allocator phase), and per vCPU in all.
 */
static void report_instructions(void)
{
	char phases[512] = "", ready[32] = "null";
	size_t n = 0;
	uint64_t all = 0;
	unsigned last = 0;

	/* Only a chain of phases the same vCPU ran from efi_main on. */
	for (unsigned p = 1; p < OBS_PHASE_COUNT && phase_vcpu[0]; p++) {
		if (phase_vcpu[p] != phase_vcpu[0])
			break;
		n += (size_t)snprintf(phases + n, sizeof(phases) - n, "%s\"%s\":%llu", p > 1 ? "," : "",
				      phase_names[p], (unsigned long long)(phase_cut[p] - phase_cut[p - 1]));
		last = p;
	}
	if (last == OBS_PHASE_ALLOC)
		snprintf(ready, sizeof(ready), "%llu", (unsigned long long)(phase_cut[last] - phase_cut[0]));
	uint64_t calls = 0, outside = 0, inside = 0;

	for (unsigned i = 0; i < nvcpus; i++) {
		all += vcpus[i].insns;
		calls += vcpus[i].acc_calls;
		outside += vcpus[i].acc_outside;
		inside += vcpus[i].acc_platform;
	}
	emit("{\"event\":\"instructions\",\"phases\":{%s},\"to_ready\":%s,\"boot_vcpu\":%d,"
	     "\"boot_vcpu_total\":%llu,\"all_vcpus\":%llu,\"vcpus\":%u,"
	     "\"accept\":{\"calls\":%llu,\"outside_platform\":%llu,\"in_platform\":%llu}}",
	     phases, ready, phase_vcpu[0] - 1,
	     (unsigned long long)(phase_vcpu[0] ? vcpus[phase_vcpu[0] - 1].insns : 0),
	     (unsigned long long)all, nvcpus, (unsigned long long)calls,
	     (unsigned long long)outside, (unsigned long long)inside);
}

static void report(qemu_plugin_id_t id, void *udata)
{
	char guest[512], host[512];
	size_t g = 0, h = 0;

	(void)id, (void)udata;
	for (int c = 0; c < TC_COUNT; c++) {
		if (c == TC_MMIO)
			continue;
		g += (size_t)snprintf(guest + g, sizeof(guest) - g, "%s\"%s\":%llu", c ? "," : "",
				      trap_class_name(c), (unsigned long long)guest_runs[c]);
		h += (size_t)snprintf(host + h, sizeof(host) - h, "%s\"%s\":%llu", c ? "," : "",
				      trap_class_name(c), (unsigned long long)host_runs[c]);
	}
	emit("{\"event\":\"observer\",\"armed\":%s,\"platform\":\"%s\",\"mmio_checked\":%s,"
	     "\"markers\":%llu,\"declared_msr\":%llu,\"guest\":{%s},\"host\":{%s}}",
	     armed ? "true" : "false", mode_name(), mmio_on ? "true" : "false",
	     (unsigned long long)markers, (unsigned long long)declared, guest, host);
	report_sanitizer();
	report_instructions();
}

/* After the arm: every block is translated again, now with memory callbacks. */
static void after_reset(qemu_plugin_id_t id)
{
	mmio_on = true;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
	qemu_plugin_register_atexit_cb(id, report, NULL);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv)
{
	if (!info->system_emulation || strcmp(info->target_name, "x86_64") != 0) {
		fprintf(stderr, "observer: only for qemu-system-x86_64\n");
		return -1;
	}
	for (int i = 0; i < argc; i++) {
		if (strncmp(argv[i], "out=", 4) == 0) {
			out_fd = open(argv[i] + 4, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
			if (out_fd < 0) {
				perror("observer: out=");
				return -1;
			}
		} else if (strcmp(argv[i], "mmio=off") == 0) {
			watch_mmio = false;
		} else if (strcmp(argv[i], "pages=off") == 0) {
			watch_pages = false;
		} else {
			fprintf(stderr, "observer: unknown argument %s\n", argv[i]);
			return -1;
		}
	}
	self_id = id;
	nvcpus = (unsigned)(info->system.max_vcpus > 0 ? info->system.max_vcpus : 1);
	vcpus = calloc(nvcpus, sizeof(*vcpus));
	held = calloc(HELD_SLOTS, sizeof(*held));
	if (!vcpus || !held)
		return -1;
	/* The boot vCPU runs the guest from the start; the others run firmware until the
	 * emulated host hands them over (OBS_KIND_HOST_LEAVE). */
	for (unsigned i = 1; i < nvcpus; i++)
		vcpus[i].depth = 1;
	for (unsigned i = 0; i < nvcpus; i++)
		vcpus[i].acc_state = -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
	qemu_plugin_register_atexit_cb(id, report, NULL);
	return 0;
}
