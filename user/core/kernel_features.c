// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* kernel_features.c - the pure half of verified admission's setup: from
 * what the kernel offers and what the command line asks, whether to verify
 * and through which hand-off; the sysctls each hand-off needs; the window scale
 * and ECN a SYN-ACK must offer to look like the kernel's own.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_features.h"

#define HELPERS_NAME "the SYN cookie helpers (bpf_tcp_raw_gen_syncookie_ipv4/ipv6)"
#define KFUNC_NAME "bpf_sk_assign_tcp_reqsk"

static void msgf(char *msg, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, len, fmt, ap);
	va_end(ap);
}

/* " classes: critical_plus=off ..." after a report line. */
static void append_classes(char *msg, size_t len, const struct shedd_options *o)
{
	size_t off = strlen(msg);
	__u32 c;

	for (c = 0; c < SHEDD_NR_CLASSES && off < len; c++) {
		int n = snprintf(msg + off, len - off, "%s%s=%s", c ? " " : "; ",
				 class_name(c), verify_name(o->verify[c]));

		if (n < 0)
			return;
		off += (size_t)n;
	}
}

int kernel_baseline(const struct shedd_features *f, char *msg, size_t len)
{
	const struct {
		bool have;
		const char *what;
	} needs[] = {
		{ f->vmlinux_btf, "BTF of the kernel (/sys/kernel/btf/vmlinux, CONFIG_DEBUG_INFO_BTF)" },
		{ f->sk_lookup, "bpf_skc_lookup_tcp in XDP (5.2)" },
		{ f->gen_syncookie, "bpf_tcp_gen_syncookie in XDP (5.3)" },
		{ f->loop, "bpf_loop (5.17)" },
		{ f->xdp_load_bytes, "bpf_xdp_load_bytes (5.18)" },
		{ f->cookie_helpers, HELPERS_NAME " (6.0)" },
	};
	size_t i, off;
	int n, missing = 0;

	n = snprintf(msg, len, "kernel %s lacks", f->release);
	off = n > 0 ? (size_t)n : 0;
	for (i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		if (needs[i].have)
			continue;
		n = snprintf(msg + (off < len ? off : len), off < len ? len - off : 0, "%s %s",
			     missing ? ";" : "", needs[i].what);
		off += n > 0 ? (size_t)n : 0;
		missing++;
	}
	if (!missing) {
		msgf(msg, len, "kernel %s has what shedd needs", f->release);
		return 0;
	}
	if (off < len)
		snprintf(msg + off, len - off, ": shedd needs Linux " SHEDD_MIN_KERNEL
			 " or later (Debian 12's 6.1, Ubuntu 22.04's HWE 6.5/6.8, or newer)");
	return -1;
}

int verify_decide(const struct shedd_features *f, const struct shedd_options *o,
		  struct verify_plan *plan, char *msg, size_t len)
{
	bool any = false;
	__u32 c;

	memset(plan, 0, sizeof(*plan));
	/* An explicit hand-off the kernel cannot do is a mistake even with
	 * every class off: say so now, not on the day a class is turned on. */
	if (o->handoff == HANDOFF_TC && (!f->reqsk_kfunc || !f->cookie_helpers)) {
		msgf(msg, len, "--handoff tc: kernel %s lacks %s%s%s; the tc hand-off needs "
		     "kernel >= 6.9 (--handoff kernel works from 6.0)", f->release,
		     f->cookie_helpers ? "" : HELPERS_NAME,
		     f->cookie_helpers || f->reqsk_kfunc ? "" : " and ",
		     f->reqsk_kfunc ? "" : "the kfunc " KFUNC_NAME);
		return -1;
	}
	if (o->handoff == HANDOFF_KERNEL && !f->cookie_helpers) {
		msgf(msg, len, "--handoff kernel: kernel %s lacks %s; verified admission "
		     "needs kernel >= 6.0", f->release, HELPERS_NAME);
		return -1;
	}
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		any |= o->verify[c] != SHEDD_VERIFY_OFF;
	/* --source-check verify answers with cookies too: the SYNs of the
	 * classes above the default class that fail the check. */
	any |= o->source_check == SHEDD_SRC_VERIFY && o->default_class > 0;
	if (!any) {
		msgf(msg, len, "verified admission: off (--verify off for every class)");
		return 0;
	}
	if (o->handoff == HANDOFF_KERNEL) {
		plan->enabled = true;
		plan->handoff = SHEDD_HANDOFF_KERNEL;
		msgf(msg, len, "verified admission: kernel hand-off (tcp_syncookies=2)");
		append_classes(msg, len, o);
		return 0;
	}
	if (f->cookie_helpers && f->reqsk_kfunc) {
		plan->enabled = true;
		plan->handoff = SHEDD_HANDOFF_TC;
		msgf(msg, len, "verified admission: tc hand-off (" KFUNC_NAME ")");
		append_classes(msg, len, o);
		return 0;
	}
	/* auto on a kernel without the tc hand-off. The kernel hand-off
	 * changes the namespace's sysctls: only when asked for. */
	if (f->cookie_helpers) {
		if (o->verify_explicit) {
			msgf(msg, len, "--verify: kernel %s lacks the kfunc " KFUNC_NAME
			     " (tc hand-off, kernel >= 6.9); add --handoff kernel to verify "
			     "through the kernel's own cookie check (it sets tcp_syncookies=2 "
			     "and tcp_timestamps=2 in this network namespace), or --verify off",
			     f->release);
			return -1;
		}
		msgf(msg, len, "verified admission: off: kernel %s lacks the kfunc " KFUNC_NAME
		     " (tc hand-off, kernel >= 6.9); --handoff kernel enables it (it sets "
		     "tcp_syncookies=2 and tcp_timestamps=2 in this network namespace)",
		     f->release);
		return 0;
	}
	if (o->verify_explicit) {
		msgf(msg, len, "--verify: kernel %s lacks %s; verified admission needs "
		     "kernel >= 6.0: use --verify off", f->release, HELPERS_NAME);
		return -1;
	}
	msgf(msg, len, "verified admission: off: kernel %s lacks %s (kernel >= 6.0)",
	     f->release, HELPERS_NAME);
	return 0;
}

/* tc: the kernel's own cookie code must be on for a request socket made
 * by the kfunc to be accepted (1 or 2 both work). kernel: the listener
 * checks every cookie ACK itself, which it does only with tcp_syncookies=2
 * (or after an overflow of its own), and decodes the options from the
 * timestamp, which tcp_timestamps=2 keeps free of a random offset. */
static const struct sysctl_need tc_needs[] = {
	{ "net.ipv4.tcp_syncookies", 1, 2, 1 },
};
static const struct sysctl_need kernel_needs[] = {
	{ "net.ipv4.tcp_syncookies", 2, 2, 2 },
	{ "net.ipv4.tcp_timestamps", 2, 2, 2 },
};

int verify_sysctl_needs(__u8 handoff, const struct sysctl_need **needs)
{
	if (handoff == SHEDD_HANDOFF_KERNEL) {
		*needs = kernel_needs;
		return (int)(sizeof(kernel_needs) / sizeof(kernel_needs[0]));
	}
	*needs = tc_needs;
	return (int)(sizeof(tc_needs) / sizeof(tc_needs[0]));
}

int sysctl_path(const char *name, char *path, size_t len)
{
	static const char root[] = "/proc/sys/";
	size_t i, n = strlen(name);
	char prev = '.';

	if (!n || len < sizeof(root) + n)
		return -1;
	/* Letters, digits, '_' and '-', in dot-separated words: nothing that
	 * could walk out of /proc/sys. */
	for (i = 0; i < n; i++) {
		char ch = name[i];

		if (ch == '.' ? prev == '.' : !(isalnum((unsigned char)ch) || ch == '_' || ch == '-'))
			return -1;
		prev = ch;
	}
	if (prev == '.')
		return -1;
	memcpy(path, root, sizeof(root) - 1);
	for (i = 0; i <= n; i++)
		path[sizeof(root) - 1 + i] = name[i] == '.' ? '/' : name[i];
	return 0;
}

/* A whole number at *s, skipping blanks before it; moves *s past it. */
static int next_u64(const char **s, __u64 *v)
{
	unsigned long long x;
	char *end;

	while (**s == ' ' || **s == '\t')
		(*s)++;
	if (!isdigit((unsigned char)**s))
		return -1;
	errno = 0;
	x = strtoull(*s, &end, 10);
	if (errno)
		return -1;
	*s = end;
	*v = x;
	return 0;
}

/* Nothing but blanks and at most one newline left. */
static bool at_end(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return !*s || (*s == '\n' && !s[1]);
}

int parse_tcp_rmem_max(const char *text, __u64 *max)
{
	__u64 v[3];
	int i;

	for (i = 0; i < 3; i++) {
		if (next_u64(&text, &v[i]) || (i < 2 && *text != ' ' && *text != '\t'))
			return -1;
	}
	if (!at_end(text))
		return -1;
	*max = v[2];
	return 0;
}

int parse_sysctl_u64(const char *text, __u64 *v)
{
	if (next_u64(&text, v) || !at_end(text))
		return -1;
	return 0;
}

__u8 syn_wscale(__u64 tcp_rmem_max, __u64 rmem_max)
{
	__u64 space = tcp_rmem_max > rmem_max ? tcp_rmem_max : rmem_max;
	int log = -1;

	while (space) {
		space >>= 1;
		log++;
	}
	/* The kernel: clamp_t(int, ilog2(space) - 15, 0, TCP_MAX_WSCALE). */
	if (log <= 15)
		return 0;
	return log - 15 > 14 ? 14 : (__u8)(log - 15);
}

__u8 syn_ecn(__u64 tcp_ecn)
{
	return tcp_ecn == 1 || tcp_ecn == 2;
}

__u32 cookie_rate_per_cpu(__u64 total_per_sec, int ncpus)
{
	__u64 share;

	if (ncpus < 1)
		ncpus = 1;
	share = (total_per_sec + (__u64)ncpus - 1) / (__u64)ncpus;
	return share > MAX_COOKIE_RATE_PER_SEC ? MAX_COOKIE_RATE_PER_SEC : (__u32)share;
}

__u8 syn_opts_off(__u64 tcp_timestamps, __u64 tcp_sack, __u64 tcp_window_scaling)
{
	return (tcp_timestamps ? 0 : SHEDD_SYNOPT_NO_TS) | (tcp_sack ? 0 : SHEDD_SYNOPT_NO_SACK) |
	       (tcp_window_scaling ? 0 : SHEDD_SYNOPT_NO_WS);
}

__u32 cookie_burst_for(__u64 rate_per_sec)
{
	__u64 burst = rate_per_sec / 100;

	if (!rate_per_sec)
		return 0;
	if (burst < 1)
		burst = 1;
	return burst > MAX_COOKIE_BURST ? MAX_COOKIE_BURST : (__u32)burst;
}
