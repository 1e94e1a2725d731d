/* SPDX-License-Identifier: MIT */
/* memaccept: TDX guest ABI encodings the host tests check: the fatal report's registers, the TD attribute policy. */
#include "arch/x86/tdx/tdx.h"
#include "lib/string.h"

/* The message registers in the order QEMU reads them (tdx_handle_report_fatal_error). */
static u64 *msg_reg(struct tdx_regs *r, unsigned i)
{
	u64 *const regs[] = { &r->r14, &r->r15, &r->rbx, &r->rdi, &r->rsi, &r->r8, &r->r9, &r->rdx };

	return regs[i];
}

static const unsigned msg_gpr[] = { GPR_R14, GPR_R15, GPR_RBX, GPR_RDI, GPR_RSI, GPR_R8, GPR_R9,
				    GPR_RDX };

void tdx_fatal_regs(struct tdx_regs *r, u32 reason, const char *msg)
{
	char buf[TDX_FATAL_MSG_LEN];
	size_t n = msg ? strlen(msg) : 0;

	memset(r, 0, sizeof(*r));
	memset(buf, 0, sizeof(buf));
	memcpy(buf, msg, MIN(n, sizeof(buf)));
	r->rax = TDG_VP_VMCALL;
	r->rcx = TDVMCALL_EXPOSE_R10_R15 | TDX_FATAL_MSG_REGS;
	r->r10 = TDVMCALL_STANDARD;
	r->r11 = TDVMCALL_REPORT_FATAL_ERROR;
	/* Bits 15:0 stay zero (QEMU rejects anything else); bit 63 clear: R13 is no GPA. */
	r->r12 = ((u64)(reason & 0xffff)) << TDX_FATAL_CODE_SHIFT;
	r->r13 = 0;
	/* x86 is little-endian: byte 0 of the message is the low byte of R14. */
	for (unsigned i = 0; i < 8; i++)
		memcpy(msg_reg(r, i), buf + 8 * i, 8);
}

void tdx_fatal_message(const struct tdx_regs *r, char out[TDX_FATAL_MSG_LEN + 1])
{
	struct tdx_regs copy = *r;
	size_t n = 0;

	memset(out, 0, TDX_FATAL_MSG_LEN + 1);
	/* QEMU packs only the registers present in the mask, one after the other. */
	for (unsigned i = 0; i < 8; i++) {
		if (!(r->rcx & TDVMCALL_REG(msg_gpr[i])))
			continue;
		memcpy(out + n, msg_reg(&copy, i), 8);
		n += 8;
	}
}

/*
 * SEPT_VE_DISABLE clear means the host can turn an access to a private page it removed
 * into a #VE the guest must survive, instead of an exit it handles itself; Linux refuses
 * to run such a TD unless it is a debug TD, whose state the host can read anyway (Linux
 * arch/x86/coco/tdx/tdx.c, disable_sept_ve). memaccept does the same: it has no way to
 * tell such a #VE from an attack.
 */
/*
 * As Linux disable_sept_ve: without FLEXIBLE_PENDING_VE (TDX 1.0, or a VMM that does not
 * set it: KVM sets only NO_RBP_MOD and MAX_GPAW in setup_tdparams) the attribute decides;
 * with it, TD_CTLS does, and the TD turns the #VEs off itself, except in a debug TD,
 * which keeps them as Linux does.
 */
enum tdx_ve_action tdx_pending_ve_action(u64 attributes, u64 config_flags, u64 td_ctls)
{
	bool debug = attributes & TDX_ATTR_DEBUG;

	if (!(config_flags & TDCS_CONFIG_FLEXIBLE_PENDING_VE))
		return attributes & TDX_ATTR_SEPT_VE_DISABLE ? TDX_VE_OFF : debug ? TDX_VE_WARN : TDX_VE_FATAL;
	if (td_ctls & TD_CTLS_PENDING_VE_DISABLE)
		return TDX_VE_OFF;
	return debug ? TDX_VE_WARN : TDX_VE_TURN_OFF;
}

const char *tdx_attributes_problem(u64 attributes, bool *warn_only)
{
	*warn_only = false;
	if (attributes & TDX_ATTR_SEPT_VE_DISABLE)
		return NULL;
	*warn_only = attributes & TDX_ATTR_DEBUG;
	return "TD attribute SEPT_VE_DISABLE is clear: the host could inject #VE on private memory";
}
