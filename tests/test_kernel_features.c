// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_kernel_features.c - verified admission's decisions, table-driven:
 * which hand-off each kernel and command line gets (or why shedd refuses),
 * the sysctls each hand-off needs, the SYN-ACK's window scale and ECN from
 * the sysctls' text, the cookie budget's depth.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "kernel_features.h"

static int parse(struct shedd_options *o, int argc, const char **argv)
{
	char out[4096], err[512];

	return options_parse(argc, (char **)argv, o, out, sizeof(out), err, sizeof(err));
}

enum kernel { K_5_15, K_6_1, K_6_18 }; /* no helpers; helpers only; both */

static const struct shedd_features kernels[] = {
	[K_5_15] = { .cookie_helpers = false, .reqsk_kfunc = false, .release = "5.15.0" },
	[K_6_1] = { .cookie_helpers = true, .reqsk_kfunc = false, .release = "6.1.0" },
	[K_6_18] = { .cookie_helpers = true, .reqsk_kfunc = true, .release = "6.18.0" },
};

#define REFUSED (-1)
#define OFF 9 /* started, verification off */

/* Kernel, command line (after -i e), and the outcome: REFUSED, OFF or the
 * hand-off; the message must contain @says. */
static const struct {
	enum kernel k;
	const char *args[4];
	int want;
	const char *says;
} cases[] = {
	/* Defaults (sheddable classes while shedding), hand-off auto. */
	{ K_6_18, { NULL }, SHEDD_HANDOFF_TC, "tc hand-off (bpf_sk_assign_tcp_reqsk)" },
	{ K_6_18, { NULL }, SHEDD_HANDOFF_TC, "sheddable=shedding" },
	{ K_6_1, { NULL }, OFF, "--handoff kernel enables it" },
	{ K_6_1, { NULL }, OFF, "kernel 6.1.0 lacks the kfunc bpf_sk_assign_tcp_reqsk" },
	{ K_5_15, { NULL }, OFF, "off: kernel 5.15.0 lacks the SYN cookie helpers" },
	/* Asked for explicitly. */
	{ K_6_18, { "--handoff", "tc" }, SHEDD_HANDOFF_TC, "tc hand-off" },
	{ K_6_18, { "--handoff", "kernel" }, SHEDD_HANDOFF_KERNEL,
	  "kernel hand-off (tcp_syncookies=2)" },
	{ K_6_1, { "--handoff", "kernel" }, SHEDD_HANDOFF_KERNEL, "kernel hand-off" },
	{ K_6_1, { "--handoff", "tc" }, REFUSED,
	  "--handoff tc: kernel 6.1.0 lacks the kfunc bpf_sk_assign_tcp_reqsk" },
	{ K_5_15, { "--handoff", "tc" }, REFUSED, "lacks the SYN cookie helpers" },
	{ K_5_15, { "--handoff", "kernel" }, REFUSED, "--handoff kernel: kernel 5.15.0 lacks" },
	{ K_6_1, { "--verify", "critical=always" }, REFUSED, "add --handoff kernel" },
	{ K_6_1, { "--verify", "always" }, REFUSED, "--verify: kernel 6.1.0 lacks the kfunc" },
	{ K_5_15, { "--verify", "sheddable=shedding" }, REFUSED, "needs kernel >= 6.0" },
	{ K_6_1, { "--verify", "always", "--handoff", "kernel" }, SHEDD_HANDOFF_KERNEL,
	  "critical_plus=always" },
	/* An explicit off is not a request to verify: the defaults stay. */
	{ K_6_1, { "--verify", "critical=off" }, OFF, "--handoff kernel enables it" },
	{ K_6_18, { "--verify", "off" }, OFF, "--verify off for every class" },
	{ K_5_15, { "--verify", "off" }, OFF, "--verify off for every class" },
	/* --source-check verify answers failing SYNs with cookies: a
	 * hand-off, though no class verifies; where auto finds none, off
	 * (the daemon then checks as strict and says so). */
	{ K_6_18, { "--verify", "off", "--source-check", "verify" }, SHEDD_HANDOFF_TC,
	  "tc hand-off" },
	{ K_6_1, { "--verify", "off", "--source-check", "verify" }, OFF,
	  "--handoff kernel enables it" },
	/* A hand-off the kernel cannot do is refused even with nothing to verify. */
	{ K_6_1, { "--verify", "off", "--handoff", "tc" }, REFUSED, "needs kernel >= 6.9" },
};

static void handoff_decisions(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[8] = { "shedd", "-i", "e" };
		struct shedd_options o;
		struct verify_plan plan;
		char msg[512];
		int argc = 3, ret, got;

		while (argc - 3 < 4 && cases[i].args[argc - 3])
			argv[argc] = cases[i].args[argc - 3], argc++;
		assert_int_equal(parse(&o, argc, argv), OPTIONS_RUN);
		ret = verify_decide(&kernels[cases[i].k], &o, &plan, msg, sizeof(msg));
		got = ret ? REFUSED : plan.enabled ? plan.handoff : OFF;
		if (got != cases[i].want || !strstr(msg, cases[i].says))
			fail_msg("case %zu (kernel %s, %s %s): got %d '%s'; wanted %d with '%s'", i,
				 kernels[cases[i].k].release, argv[3] ? argv[3] : "",
				 argv[4] ? argv[4] : "", got, msg, cases[i].want, cases[i].says);
		if (got == OFF && plan.handoff != 0)
			fail_msg("case %zu: off with a hand-off", i);
		options_free(&o);
	}
}

/* What each hand-off needs of tcp_syncookies and tcp_timestamps: the
 * values it accepts as they are, and what it sets otherwise. */
/* The oldest kernels of the distributions, as probe_features() finds them:
 * Ubuntu 22.04's 5.15 and RHEL 9's 5.14 (upstream helper sets) are
 * refused by name; Debian 12's 6.1 loads. */
/* The release as uname -r gives it, Debian's and others. */
static void release_order(void **state)
{
	(void)state;
	assert_false(kernel_at_least("6.12.118+deb12-amd64", 6, 18));
	assert_true(kernel_at_least("6.18.44-fc-v1272", 6, 18));
	assert_true(kernel_at_least("7.0.1", 6, 18));
	assert_false(kernel_at_least("6.1.0-57-amd64", 6, 18));
	assert_true(kernel_at_least("6.18", 6, 18));
	assert_false(kernel_at_least("5.99.1", 6, 18));
	assert_false(kernel_at_least("?", 6, 18));
	assert_false(kernel_at_least("", 6, 18));
	assert_false(kernel_at_least(NULL, 6, 18));
}

static void baseline(void **state)
{
	const struct shedd_features base = {
		.cookie_helpers = true, .vmlinux_btf = true, .xdp_load_bytes = true,
		.loop = true, .sk_lookup = true, .gen_syncookie = true,
	};
	struct shedd_features f = base;
	char msg[512], tiny[24];

	(void)state;
	snprintf(f.release, sizeof(f.release), "6.1.0-57-amd64");
	assert_int_equal(kernel_baseline(&f, msg, sizeof(msg)), 0);

	f.cookie_helpers = f.xdp_load_bytes = f.loop = false;
	snprintf(f.release, sizeof(f.release), "5.15.0-91-generic");
	assert_int_equal(kernel_baseline(&f, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "kernel 5.15.0-91-generic lacks bpf_loop (5.17); "
				    "bpf_xdp_load_bytes (5.18); the SYN cookie helpers"));
	assert_non_null(strstr(msg, "(6.0): shedd needs Linux " SHEDD_MIN_KERNEL " or later"));
	assert_null(strstr(msg, "BTF"));
	assert_null(strstr(msg, "bpf_skc_lookup_tcp"));

	f = base;
	f.vmlinux_btf = false;
	assert_int_equal(kernel_baseline(&f, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "lacks BTF of the kernel (/sys/kernel/btf/vmlinux"));

	f = base;
	f.sk_lookup = f.gen_syncookie = false;
	assert_int_equal(kernel_baseline(&f, msg, sizeof(msg)), -1);
	assert_non_null(strstr(msg, "bpf_skc_lookup_tcp in XDP (5.2); bpf_tcp_gen_syncookie"));
	/* A short buffer is cut, never overrun. */
	assert_int_equal(kernel_baseline(&f, tiny, sizeof(tiny)), -1);
	assert_int_equal(strlen(tiny), sizeof(tiny) - 1);
}

static void sysctl_needs(void **state)
{
	const struct sysctl_need *n;
	int count;

	count = verify_sysctl_needs(SHEDD_HANDOFF_TC, &n);
	assert_int_equal(count, 1);
	assert_string_equal(n[0].name, "net.ipv4.tcp_syncookies");
	assert_int_equal(n[0].min, 1); /* 1 and 2 both work: left alone */
	assert_int_equal(n[0].max, 2);
	assert_int_equal(n[0].set, 1); /* 0 becomes 1 */

	count = verify_sysctl_needs(SHEDD_HANDOFF_KERNEL, &n);
	assert_int_equal(count, 2);
	assert_string_equal(n[0].name, "net.ipv4.tcp_syncookies");
	assert_int_equal(n[0].min, 2);
	assert_int_equal(n[0].max, 2);
	assert_int_equal(n[0].set, 2);
	assert_string_equal(n[1].name, "net.ipv4.tcp_timestamps");
	assert_int_equal(n[1].min, 2);
	assert_int_equal(n[1].max, 2);
	assert_int_equal(n[1].set, 2);
}

static void sysctl_paths(void **state)
{
	static const struct {
		const char *name, *path; /* path NULL: refused */
	} t[] = {
		{ "net.ipv4.tcp_syncookies", "/proc/sys/net/ipv4/tcp_syncookies" },
		{ "net.core.rmem_max", "/proc/sys/net/core/rmem_max" },
		{ "net.ipv4.conf.veth-0.rp_filter", "/proc/sys/net/ipv4/conf/veth-0/rp_filter" },
		{ "", NULL },
		{ "net..ipv4", NULL },
		{ ".net", NULL },
		{ "net.", NULL },
		{ "net/../../etc", NULL },
		{ "net.ipv4.a b", NULL },
	};
	char path[64];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int ret = sysctl_path(t[i].name, path, sizeof(path));

		if (t[i].path ? ret || strcmp(path, t[i].path) : !ret)
			fail_msg("case %zu '%s': got %d '%s'", i, t[i].name, ret, ret ? "" : path);
	}
	/* Too long for the buffer: refused, not cut. */
	assert_int_equal(sysctl_path("net.ipv4.tcp_syncookies", path, 20), -1);
}

/* /proc/sys text -> window scale and ECN, as the kernel would offer them. */
static void syn_options(void **state)
{
	static const struct {
		const char *tcp_rmem; /* net.ipv4.tcp_rmem as /proc/sys prints it */
		__u64 rmem_max;
		int wscale;           /* -1: tcp_rmem refused */
	} t[] = {
		{ "4096\t131072\t6291456\n", 212992, 7 },    /* Linux default: 6 MB */
		{ "4096\t131072\t33554432\n", 4194304, 10 }, /* this VM: 32 MB */
		{ "4096\t131072\t6291456\n", 67108864, 11 }, /* rmem_max wins: 64 MB */
		{ "4096 87380 65535\n", 0, 0 },              /* 64 KB - 1: no scale */
		{ "4096 87380 65536\n", 0, 1 },              /* ilog2 16 */
		{ "4096 87380 131071\n", 0, 1 },
		{ "4096 87380 2147483647\n", 0, 14 },        /* ilog2 30: 15, clamped */
		{ "4096 87380 0\n", 0, 0 },
		{ "4096 87380\n", 0, -1 },
		{ "4096 87380 6291456 1\n", 0, -1 },
		{ "4096 87380 6291456x\n", 0, -1 },
		{ "4096 -1 6291456\n", 0, -1 },
		{ "", 0, -1 },
		{ "4096 87380 99999999999999999999999\n", 0, -1 },
	};
	size_t i;
	__u64 max;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int ret = parse_tcp_rmem_max(t[i].tcp_rmem, &max);
		int got = ret ? -1 : syn_wscale(max, t[i].rmem_max);

		if (got != t[i].wscale)
			fail_msg("case %zu '%s' rmem_max %llu: wscale %d, wanted %d", i,
				 t[i].tcp_rmem, (unsigned long long)t[i].rmem_max, got, t[i].wscale);
	}
	assert_int_equal(syn_wscale(1ULL << 40, 0), 14); /* clamped */
	assert_int_equal(syn_ecn(0), 0);
	assert_int_equal(syn_ecn(1), 1);
	assert_int_equal(syn_ecn(2), 1); /* the default: accept, do not ask */
	assert_int_equal(syn_ecn(3), 0);
	/* tcp_timestamps, tcp_sack, tcp_window_scaling: 0 turns one off;
	 * tcp_timestamps 2 (no random offset) is on. */
	assert_int_equal(syn_opts_off(1, 1, 1), 0);
	assert_int_equal(syn_opts_off(2, 1, 1), 0);
	assert_int_equal(syn_opts_off(0, 1, 1), SHEDD_SYNOPT_NO_TS);
	assert_int_equal(syn_opts_off(1, 0, 1), SHEDD_SYNOPT_NO_SACK);
	assert_int_equal(syn_opts_off(1, 1, 0), SHEDD_SYNOPT_NO_WS);
	assert_int_equal(syn_opts_off(0, 0, 0),
			 SHEDD_SYNOPT_NO_TS | SHEDD_SYNOPT_NO_SACK | SHEDD_SYNOPT_NO_WS);
}

static void sysctl_numbers(void **state)
{
	__u64 v = 7;

	assert_int_equal(parse_sysctl_u64("2\n", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(parse_sysctl_u64("4194304", &v), 0);
	assert_int_equal(v, 4194304);
	assert_int_equal(parse_sysctl_u64("", &v), -1);
	assert_int_equal(parse_sysctl_u64("1 2\n", &v), -1);
	assert_int_equal(parse_sysctl_u64("-1\n", &v), -1);
	assert_int_equal(parse_sysctl_u64("2\n\n", &v), -1);
}

static void cookie_burst(void **state)
{
	static const struct {
		__u64 rate;
		__u32 burst;
	} t[] = {
		{ 0, 0 },             /* no cookies at all */
		{ 1, 1 },             /* at least one */
		{ 99, 1 },
		{ 4000000, 40000 },   /* 10 ms */
		{ 500000, 5000 },     /* the default's share on two CPUs */
		{ MAX_COOKIE_RATE_PER_SEC, 100000 },
		{ 200000000, MAX_COOKIE_BURST },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (cookie_burst_for(t[i].rate) != t[i].burst)
			fail_msg("rate %llu: burst %u, wanted %u", (unsigned long long)t[i].rate,
				 cookie_burst_for(t[i].rate), t[i].burst);
}

/* --cookie-rate is the host's: each CPU's share, rounded up. */
static void cookie_share(void **state)
{
	static const struct {
		__u64 total;
		int ncpus;
		__u32 share;
	} t[] = {
		{ 0, 4, 0 },          /* no cookies at all */
		{ 100000, 1, 100000 },
		{ 1000000, 2, 500000 }, /* the default on two CPUs */
		{ 1001, 2, 501 },     /* rounded up */
		{ 3, 8, 1 },          /* every CPU still answers */
		{ 1000, 0, 1000 },    /* no CPU count: one */
		{ MAX_COOKIE_RATE_PER_SEC, 3, 3333334 },
		{ 4000000000ULL, 1, MAX_COOKIE_RATE_PER_SEC },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (cookie_rate_per_cpu(t[i].total, t[i].ncpus) != t[i].share)
			fail_msg("%llu over %d CPUs: %u each, wanted %u",
				 (unsigned long long)t[i].total, t[i].ncpus,
				 cookie_rate_per_cpu(t[i].total, t[i].ncpus), t[i].share);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(handoff_decisions),
		cmocka_unit_test(release_order),
		cmocka_unit_test(baseline),
		cmocka_unit_test(sysctl_needs),
		cmocka_unit_test(sysctl_paths),
		cmocka_unit_test(syn_options),
		cmocka_unit_test(sysctl_numbers),
		cmocka_unit_test(cookie_burst),
		cmocka_unit_test(cookie_share),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
