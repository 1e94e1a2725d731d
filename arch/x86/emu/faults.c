/* SPDX-License-Identifier: MIT */
/* memaccept (test image): parsing and consuming emu_fault= (pure logic, host-tested). */
#include "arch/x86/emu/faults.h"
#include "lib/format.h"
#include "lib/string.h"

static const struct {
	const char *name;
	bool has_addr, needs_addr, has_count, has_value;
} kinds[FAULT_KIND_COUNT] = {
	[FAULT_BUSY] = { "busy", true, false, true, false },
	[FAULT_SIZE_MISMATCH] = { "size_mismatch", true, true, false, false },
	[FAULT_ALREADY] = { "already", true, true, false, false },
	[FAULT_STATUS] = { "status", true, true, false, true },
	[FAULT_PVALIDATE_INPUT] = { "pvalidate_input", true, true, false, false },
	[FAULT_PSC_PARTIAL] = { "psc_partial", false, false, true, false },
	[FAULT_PSC_ERROR] = { "psc_error", false, false, false, false },
	[FAULT_PSC_BACKWARDS] = { "psc_backwards", false, false, false, false },
	[FAULT_NO_SEPT_VE_DISABLE] = { "no_sept_ve_disable", false, false, false, false },
	[FAULT_OPTIN_ABSENT] = { "optin_absent", false, false, false, false },
	[FAULT_OPTIN_FAIL] = { "optin_fail", false, false, false, false },
	[FAULT_DEBUG_TD] = { "debug_td", false, false, false, false },
	[FAULT_PSC_PARTIAL_PAGES] = { "psc_partial_pages", false, false, true, false },
	[FAULT_CPUID_NOVALID] = { "cpuid_novalid", true, false, false, false },
	[FAULT_SVSM_BUSY] = { "svsm_busy", false, false, true, false },
	[FAULT_SVSM_NOT_RUN] = { "svsm_not_run", false, false, false, false },
	[FAULT_AP_CREATE_REFUSED] = { "ap_create_refused", false, false, true, false },
	[FAULT_AP_CREATE_MALFORMED] = { "ap_create_malformed", false, false, false, false },
	[FAULT_MAILBOX_IGNORE] = { "mailbox_ignore", true, true, false, false },
	[FAULT_NO_MP_WAKEUP] = { "no_mp_wakeup", false, false, false, false },
	[FAULT_MP_WAKEUP_BAD_MAILBOX] = { "mp_wakeup_bad_mailbox", false, false, false, false },
	[FAULT_MAILBOX_ACK_ONLY] = { "mailbox_ack_only", true, true, false, false },
	[FAULT_SVSM_CREATE_VCPU_REFUSED] = { "svsm_create_vcpu_refused", false, false, true, false },
	[FAULT_SVSM_CREATE_VCPU_MALFORMED] = { "svsm_create_vcpu_malformed", false, false, false, false },
	[FAULT_SVSM_DELETE_VCPU_REFUSED] = { "svsm_delete_vcpu_refused", false, false, true, false },
	[FAULT_SVSM_DELETE_VCPU_MALFORMED] = { "svsm_delete_vcpu_malformed", false, false, false, false },
	[FAULT_AP_CREATE_LOST] = { "ap_create_lost", false, false, true, false },
	[FAULT_AP_CREATE_LATE] = { "ap_create_late", false, false, true, false },
	[FAULT_TDVF_OLD_AP_TABLES] = { "tdvf_old_ap_tables", false, false, false, false },
	[FAULT_FLEXIBLE_PENDING_VE] = { "flexible_pending_ve", false, false, false, false },
	[FAULT_SVSM_INCOMPLETE] = { "svsm_incomplete", false, false, true, false },
	[FAULT_AP_DESTROY_REFUSED] = { "ap_destroy_refused", false, false, true, false },
	[FAULT_AP_DESTROY_MALFORMED] = { "ap_destroy_malformed", false, false, false, false },
	[FAULT_RMPADJUST_VMSA_FAIL] = { "rmpadjust_vmsa_fail", false, false, true, false },
	[FAULT_RMPADJUST_UNVMSA_FAIL] = { "rmpadjust_unvmsa_fail", false, false, true, false },
	[FAULT_BUSY_MS] = { "busy_ms", true, false, true, false },
	[FAULT_SEV_STATUS] = { "sev_status", false, false, false, true },
	[FAULT_NO_MULTI_VMPL] = { "no_multi_vmpl", false, false, false, false },
	[FAULT_MAILBOX_LATE] = { "mailbox_late", true, true, true, false },
	[FAULT_PSC_REFUSED] = { "psc_refused", false, false, false, false },
	[FAULT_EBS_RETRIES] = { "ebs_retries", false, false, true, false },
	[FAULT_EBS_MAP_GROWTH] = { "ebs_map_growth", false, false, true, false },
	[FAULT_CC_PAGES_USABLE] = { "cc_pages_usable", false, false, false, false },
	[FAULT_HANDOVER_UNACCEPTED] = { "handover_unaccepted", true, true, false, false },
	[FAULT_GPAW52] = { "gpaw52", false, false, false, false },
	[FAULT_LA57] = { "la57", false, false, false, false },
	[FAULT_CBIT] = { "cbit", false, false, false, true },
	[FAULT_AP_CREATE_NOVALID] = { "ap_create_novalid", false, false, false, false },
	[FAULT_VC_FORGE_PVALIDATE] = { "vc_forge_pvalidate", false, false, false, true },
	[FAULT_VC_FORGE_VMGEXIT] = { "vc_forge_vmgexit", false, false, false, true },
	[FAULT_VC_NESTED] = { "vc_nested", false, false, false, false },
	[FAULT_MSR_INTERCEPT] = { "msr_intercept", false, false, false, true },
	[FAULT_TSC_FREQ_INTERCEPT] = { "tsc_freq_intercept", false, false, false, true },
	[FAULT_SEV_ONLY] = { "sev_only", false, false, false, true },
	[FAULT_PSC_STALL] = { "psc_stall", false, false, false, false },
	[FAULT_PSC_RANGE] = { "psc_range", false, false, false, false },
	[FAULT_PSC_LIE] = { "psc_lie", false, false, false, false },
	[FAULT_SVSM_LIE] = { "svsm_lie", false, false, false, false },
	[FAULT_IO_GARBAGE] = { "io_garbage", false, false, false, false },
	[FAULT_PORT_LIE] = { "port_lie", true, true, false, true },
	[FAULT_CPUID_TSC_LIE] = { "cpuid_tsc_lie", false, false, false, true },
	[FAULT_VE_LEN_LIE] = { "ve_len_lie", false, false, false, false },
	[FAULT_VE_REASON_LIE] = { "ve_reason_lie", false, false, false, false },
	[FAULT_TSC_FACTOR] = { "tsc_factor", false, false, false, true },
	[FAULT_GHCB_VERSION_LIE] = { "ghcb_version_lie", false, false, false, false },
	[FAULT_GHCB_REGISTER_LIE] = { "ghcb_register_lie", false, false, false, false },
	[FAULT_VC_NMI] = { "vc_nmi", false, false, false, false },
	[FAULT_EBS_ACCEPT_MS] = { "ebs_accept_ms", false, false, false, true },
	[FAULT_MAP_SIZE_SHORT] = { "map_size_short", false, false, false, true },
	[FAULT_ALLOC_TYPE15] = { "alloc_type15", false, false, false, false },
	[FAULT_MAILBOX_SLOW_ACK] = { "mailbox_slow_ack", true, true, true, false },
	[FAULT_MADT_ADD] = { "madt_add", true, true, false, false },
	[FAULT_MADT_DROP] = { "madt_drop", true, true, false, false },
	[FAULT_MAILBOX_AT] = { "mailbox_at", false, false, false, true },
	[FAULT_MAILBOX_SHARED] = { "mailbox_shared", false, false, false, false },
	[FAULT_MAILBOX_IN_IMAGE] = { "mailbox_in_image", false, false, false, false },
	[FAULT_RMPADJUST_UNVALIDATED] = { "rmpadjust_unvalidated", false, false, true, false },
	[FAULT_GHCB_USABLE] = { "ghcb_usable", false, false, false, false },
};

const char *emu_fault_name(u32 kind)
{
	return kind < FAULT_KIND_COUNT ? kinds[kind].name : "?";
}

/* Hex with 0x, or a size (decimal with K/M/G/T). */
static bool parse_number(const char *s, size_t len, u64 *out)
{
	u64 v = 0;

	if (len > 2 && s[0] == '0' && (s[1] | 0x20) == 'x') {
		if (len > 18)
			return false;
		for (size_t i = 2; i < len; i++) {
			char c = (char)(s[i] | 0x20);

			if (c >= '0' && c <= '9')
				v = v * 16 + (u64)(c - '0');
			else if (c >= 'a' && c <= 'f')
				v = v * 16 + (u64)(c - 'a' + 10);
			else
				return false;
		}
		*out = v;
		return true;
	}
	return parse_size(s, len, out);
}

static bool parse_item(const char *s, size_t len, struct emu_fault *f, char *err, size_t errlen)
{
	size_t name_len = 0;

	while (name_len < len && s[name_len] != '@' && s[name_len] != ':' && s[name_len] != '=')
		name_len++;
	memset(f, 0, sizeof(*f));
	f->kind = FAULT_KIND_COUNT;
	for (u32 k = 0; k < FAULT_KIND_COUNT; k++)
		if (strlen(kinds[k].name) == name_len && strncmp(s, kinds[k].name, name_len) == 0)
			f->kind = k;
	if (f->kind == FAULT_KIND_COUNT) {
		format_buf(err, errlen, "emu_fault: unknown fault '%.*s'", (int)name_len, s);
		return false;
	}
	f->addr = FAULT_ANY_ADDR;
	f->count = 1;
	size_t i = name_len;
	bool got_value = false;

	if (i < len && s[i] == '@') {
		size_t a = ++i;

		while (i < len && s[i] != ':' && s[i] != '=')
			i++;
		if (!kinds[f->kind].has_addr || !parse_number(s + a, i - a, &f->addr)) {
			format_buf(err, errlen, "emu_fault: bad address in '%.*s'", (int)len, s);
			return false;
		}
	}
	if (i < len && s[i] == ':') {
		size_t a = ++i;

		while (i < len && s[i] != '=')
			i++;
		u64 n;

		if (!kinds[f->kind].has_count || !parse_number(s + a, i - a, &n) || !n) {
			format_buf(err, errlen, "emu_fault: bad count in '%.*s'", (int)len, s);
			return false;
		}
		if (f->kind == FAULT_PSC_PARTIAL || f->kind == FAULT_PSC_PARTIAL_PAGES) {
			f->value = n;
			f->count = UINT64_MAX;	/* for every request */
		} else if (f->kind == FAULT_EBS_MAP_GROWTH) {
			f->value = n;		/* allocations, all at once */
		} else {
			f->count = n;
		}
	}
	if (i < len && s[i] == '=') {
		if (!kinds[f->kind].has_value || !parse_number(s + i + 1, len - i - 1, &f->value)) {
			format_buf(err, errlen, "emu_fault: bad value in '%.*s'", (int)len, s);
			return false;
		}
		i = len;
		got_value = true;
	}
	if (i != len || (kinds[f->kind].needs_addr && f->addr == FAULT_ANY_ADDR) ||
	    (kinds[f->kind].has_value && !got_value) ||
	    ((f->kind == FAULT_PSC_PARTIAL || f->kind == FAULT_PSC_PARTIAL_PAGES ||
	      f->kind == FAULT_EBS_MAP_GROWTH) && !f->value)) {
		format_buf(err, errlen, "emu_fault: '%.*s' is incomplete or has extra parts", (int)len, s);
		return false;
	}
	return true;
}

bool emu_faults_parse(const char *spec, struct emu_faults *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (!spec || !*spec)
		return true;
	for (const char *p = spec;;) {
		const char *comma = p;

		while (*comma && *comma != ',')
			comma++;
		if (out->n == EMU_MAX_FAULTS) {
			format_buf(err, errlen, "emu_fault: more than %d faults", EMU_MAX_FAULTS);
			out->n = 0;
			return false;
		}
		if (!parse_item(p, (size_t)(comma - p), &out->f[out->n], err, errlen)) {
			out->n = 0;
			return false;
		}
		out->n++;
		if (!*comma)
			return true;
		p = comma + 1;
	}
}

struct emu_fault *emu_fault_find(struct emu_faults *fs, u32 kind, u64 start, u64 end)
{
	for (unsigned i = 0; i < fs->n; i++) {
		struct emu_fault *f = &fs->f[i];

		if (f->kind == kind && f->count && (f->addr == FAULT_ANY_ADDR || (f->addr >= start && f->addr < end)))
			return f;
	}
	return NULL;
}

struct emu_fault *emu_fault_take(struct emu_faults *fs, u32 kind, u64 start, u64 end)
{
	struct emu_fault *f = emu_fault_find(fs, kind, start, end);

	if (f) {
		if (f->count != UINT64_MAX)
			f->count--;
		f->fired++;
	}
	return f;
}
