/* SPDX-License-Identifier: MIT */
/* memaccept: command-line parsing; pure logic, also built into the host tests. */
#include "kernel/cmdline.h"
#include "lib/format.h"
#include "lib/string.h"

#define TOKEN_MAX 160

struct parser {
	struct config *cfg;
	bool test_image;
	void (*report)(const char *msg);
};

static void complain(struct parser *p, const char *fmt, ...) __printf(2, 3);
static void complain(struct parser *p, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	format_buf_v(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->cfg->bad_options++;
	if (p->report)
		p->report(msg);
}

static int lookup(const char *const *names, size_t n, const char *val)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && strcmp(names[i], val) == 0)
			return (int)i;
	return -1;
}

static const char *const policy_names[] = {
	[POLICY_LAZY] = "lazy", [POLICY_EAGER] = "eager", [POLICY_AHEAD] = "ahead",
	[POLICY_BACKGROUND] = "background",
};

static const char *const platform_names[] = {
	[PLAT_AUTO] = "auto", [PLAT_NONE] = "none", [PLAT_SIM] = "sim",
	[PLAT_TDX_EMU] = "tdx-emu", [PLAT_SNP_EMU] = "snp-emu",
};

const char *policy_name(u32 policy)
{
	return policy < ARRAY_SIZE(policy_names) ? policy_names[policy] : "?";
}

const char *platform_choice_name(u32 choice)
{
	return choice < ARRAY_SIZE(platform_names) ? platform_names[choice] : "?";
}

/* A plain decimal count: digits only, no suffix. */
static bool parse_count(const char *val, u64 *out)
{
	for (const char *c = val; *c; c++)
		if (*c < '0' || *c > '9')
			return false;
	return parse_size(val, strlen(val), out);
}

static void set_string(struct parser *p, const char *key, char *dst, size_t size, const char *val)
{
	if (strlen(val) >= size) {
		complain(p, "cmdline: value of %s is longer than %zu characters; ignored", key, size - 1);
		return;
	}
	str_copy(dst, val, size);
}

static void apply(struct parser *p, const char *key, const char *val)
{
	struct config *c = p->cfg;
	int i;

	if (strcmp(key, "accept_memory") == 0) {
		i = lookup(policy_names, ARRAY_SIZE(policy_names), val);
		if (i < 0)
			complain(p, "cmdline: accept_memory=%s is not lazy, eager, ahead or background; using %s",
				 val, policy_name(c->policy));
		else
			c->policy = (u32)i;
	} else if (strcmp(key, "accept_ahead") == 0) {
		if (!parse_size(val, strlen(val), &c->accept_ahead))
			complain(p, "cmdline: accept_ahead=%s is not a size like 64M; using %llu bytes",
				 val, (unsigned long long)c->accept_ahead);
	} else if (strcmp(key, "fake_unaccepted_start") == 0) {
		if (parse_size(val, strlen(val), &c->fake_unaccepted_start))
			c->fake_set = true;
		else
			complain(p, "cmdline: fake_unaccepted_start=%s is not a size like 1G; ignored", val);
	} else if (strcmp(key, "platform") == 0) {
		i = lookup(platform_names, ARRAY_SIZE(platform_names), val);
		if (i < 0)
			complain(p, "cmdline: platform=%s is not auto, none, sim, tdx-emu or snp-emu; "
				    "using auto", val);
		else if ((i == PLAT_TDX_EMU || i == PLAT_SNP_EMU) && !p->test_image)
			complain(p, "cmdline: platform=%s needs the test image; using auto", val);
		else
			c->platform = (u32)i;
	} else if (strcmp(key, "workload") == 0) {
		set_string(p, key, c->workload, sizeof(c->workload), val);
	} else if (strcmp(key, "console") == 0) {
		if (strcmp(val, "sync") == 0 || strcmp(val, "held") == 0)
			c->console_sync = val[0] == 's';
		else
			complain(p, "cmdline: console=%s is not sync or held; ignored", val);
	} else if (strcmp(key, "clock") == 0) {
		if (strcmp(val, "auto") == 0 || strcmp(val, "stall") == 0)
			c->clock_stall = val[0] == 's';
		else
			complain(p, "cmdline: clock=%s is not auto or stall; ignored", val);
	} else if (strcmp(key, "conformance_probe") == 0) {
		if (strcmp(val, "edges") == 0 || strcmp(val, "full") == 0)
			c->conformance_probe = val[0] == 'f' ? CONFORMANCE_PROBE_FULL :
					       CONFORMANCE_PROBE_EDGES;
		else
			complain(p, "cmdline: conformance_probe=%s is not edges or full; ignored", val);
	} else if (strcmp(key, "verbose") == 0) {
		if (strcmp(val, "1") == 0 || strcmp(val, "0") == 0)
			c->verbose = val[0] == '1';
		else
			complain(p, "cmdline: verbose=%s is not 0 or 1; ignored", val);
	} else if (strcmp(key, "cpus") == 0) {
		u64 n;

		if (!parse_count(val, &n) || n == 0 || n > 4096)
			complain(p, "cmdline: cpus=%s is not a number from 1 to 4096; using all", val);
		else
			c->cpus = (u32)n;
	} else if (strcmp(key, "smp_phantom") == 0) {
		u64 n;

		if (!p->test_image)
			complain(p, "cmdline: %s= is only understood by the test image; ignored", key);
		else if (!parse_count(val, &n) || n > 4)
			complain(p, "cmdline: smp_phantom=%s is not 0 to 4; ignored", val);
		else
			c->smp_phantom = (u32)n;
	} else if (strcmp(key, "emu_host") == 0) {
		if (!p->test_image)
			complain(p, "cmdline: %s= is only understood by the test image; ignored", key);
		else if (strcmp(val, "kvm") == 0 || strcmp(val, "huge") == 0)
			c->emu_host = val[0] == 'h' ? EMU_HOST_HUGE : EMU_HOST_KVM;
		else
			complain(p, "cmdline: emu_host=%s is not kvm or huge; using kvm", val);
	} else if (strcmp(key, "emu_svsm") == 0) {
		if (!p->test_image)
			complain(p, "cmdline: %s= is only understood by the test image; ignored", key);
		else if (strcmp(val, "1") == 0 || strcmp(val, "2") == 0 || strcmp(val, "absent") == 0 ||
			 strcmp(val, "0") == 0) {
			c->emu_svsm = val[0] == '1' || val[0] == '2' ? EMU_SVSM_PRESENT
				      : val[0] == 'a' ? EMU_SVSM_ABSENT : EMU_SVSM_NONE;
			c->emu_svsm_vmpl = val[0] == '2' ? 2 : 1;
		} else {
			complain(p, "cmdline: emu_svsm=%s is not 0, 1, 2 or absent; using 0", val);
		}
	} else if (strcmp(key, "test") == 0 || strcmp(key, "emu_fault") == 0) {
		if (!p->test_image)
			complain(p, "cmdline: %s= is only understood by the test image; ignored", key);
		else if (key[0] == 't')
			set_string(p, key, c->test, sizeof(c->test), val);
		else
			set_string(p, key, c->emu_fault, sizeof(c->emu_fault), val);
	} else {
		complain(p, "cmdline: unknown option '%s=%s' ignored", key, val);
	}
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

void cmdline_parse(const char *line, struct config *cfg, bool test_image,
		   void (*report)(const char *msg))
{
	struct parser p = { cfg, test_image, report };
	char tok[TOKEN_MAX];

	memset(cfg, 0, sizeof(*cfg));
	cfg->policy = POLICY_LAZY;
	cfg->platform = PLAT_AUTO;
	cfg->accept_ahead = ACCEPT_AHEAD_DEFAULT;

	for (const char *s = line; s && *s;) {
		while (is_space(*s))
			s++;
		if (!*s)
			break;
		const char *start = s;

		while (*s && !is_space(*s))
			s++;
		size_t len = (size_t)(s - start);

		if (len >= sizeof(tok)) {
			complain(&p, "cmdline: option '%.20s...' is longer than %zu characters; ignored",
				 start, sizeof(tok) - 1);
			continue;
		}
		memcpy(tok, start, len);
		tok[len] = 0;

		char *eq = tok;

		while (*eq && *eq != '=')
			eq++;
		if (!*eq || eq == tok) {
			complain(&p, "cmdline: '%s' is not key=value; ignored", tok);
			continue;
		}
		*eq = 0;
		apply(&p, tok, eq + 1);
	}
}
