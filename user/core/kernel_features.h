/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* kernel_features.h - what verified admission needs from the kernel and
 * from the network namespace's sysctls, and the decisions taken from it:
 * whether to verify, which hand-off, which sysctls to set, the SYN-ACK's
 * window scale. The decisions are pure (kernel_features.c); reading the
 * kernel is probe.c's. (Not features.h: that name is glibc's.)
 */
#ifndef SHEDD_KERNEL_FEATURES_H
#define SHEDD_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>
#include "options.h"

/* What the running kernel offers. */
struct shedd_features {
	bool cookie_helpers; /* bpf_tcp_raw_{gen,check}_syncookie_ipv{4,6} in XDP */
	bool reqsk_kfunc;    /* bpf_sk_assign_tcp_reqsk in vmlinux BTF */
	/* The rest of what the XDP program calls, which every kernel from
	 * SHEDD_MIN_KERNEL on has: probed so an older one is refused by name. */
	bool vmlinux_btf;    /* /sys/kernel/btf/vmlinux (CO-RE, the kfunc probe) */
	bool xdp_load_bytes; /* bpf_xdp_load_bytes, 5.18 */
	bool loop;           /* bpf_loop, 5.17 */
	bool sk_lookup;      /* bpf_skc_lookup_tcp and bpf_sk_release in XDP, 5.2 */
	bool gen_syncookie;  /* bpf_tcp_gen_syncookie in XDP, 5.3 */
	char release[65];    /* uname -r, for the messages */
};

/* The oldest kernel shedd loads on. Its XDP program calls the SYN cookie
 * helpers whether or not a class verifies: kernels before 6.8 verify every
 * global function, reachable or not. Tested on Debian 12's 6.1 and 6.12
 * (make test-kernels) and on 6.18. */
#define SHEDD_MIN_KERNEL "6.0"

/* Is the kernel @release (uname -r, "6.12.118+deb12-amd64") MAJOR.MINOR or
 * later? A release that does not start with two numbers is not. Inline:
 * test_verifier asks it without linking the decisions. */
static inline bool kernel_at_least(const char *release, int major, int minor)
{
	int ma, mi;

	if (!release || sscanf(release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/* The oldest kernel on which --nic-vlan-tag auto binds the program that
 * reads the NIC's stripped VLAN tag: Debian's 6.12.118 oopses when a device
 * goes while such a program is bound to it (docs/limits.md); 6.18 is the
 * kernel it was tested on. */
#define NIC_VLAN_TAG_MIN_MAJOR 6
#define NIC_VLAN_TAG_MIN_MINOR 18

/* 0 when the kernel has everything the XDP program needs; else -1 with the
 * reason to refuse to start in @msg, naming each missing piece and the
 * kernel that brought it. */
int kernel_baseline(const struct shedd_features *f, char *msg, size_t len);

/* What the daemon does about verified admission. */
struct verify_plan {
	bool enabled;  /* verify_enabled of the XDP program; false: every
			* class is charged directly, whatever --verify says */
	__u8 handoff;  /* enum shedd_handoff, when enabled */
};

/* Decide from the kernel's features and the options. Returns 0 with the
 * report line (after "shedd: ") in @msg, or -1 with the reason to refuse
 * to start in @msg: an explicit --verify or --handoff the kernel cannot do. */
int verify_decide(const struct shedd_features *f, const struct shedd_options *o,
		  struct verify_plan *plan, char *msg, size_t len);

/* A sysctl a hand-off needs: a value at least @min and at most @max, else
 * shedd writes @set. */
struct sysctl_need {
	const char *name; /* dotted, as sysctl(8) names it */
	__u64 min, max, set;
};

/* The sysctls the hand-off @handoff needs (enum shedd_handoff); returns how
 * many, *needs points at a static table. */
int verify_sysctl_needs(__u8 handoff, const struct sysctl_need **needs);

/* /proc/sys/net/ipv4/tcp_syncookies for net.ipv4.tcp_syncookies. 0, or -1
 * if @name is not a plain dotted name or @path is too short. */
int sysctl_path(const char *name, char *path, size_t len);

/* The third field of net.ipv4.tcp_rmem ("min default max"). 0 or -1. */
int parse_tcp_rmem_max(const char *text, __u64 *max);

/* A whole number as /proc/sys prints it (one line). 0 or -1. */
int parse_sysctl_u64(const char *text, __u64 *v);

/* The window scale the kernel offers in a SYN-ACK of a listener without
 * SO_RCVBUF (tcp_select_initial_window()): the largest receive space,
 * max(tcp_rmem[2], net.core.rmem_max), as a power of two above 64 KB,
 * clamped to 0..14. */
__u8 syn_wscale(__u64 tcp_rmem_max, __u64 rmem_max);

/* 1 when the kernel accepts ECN on incoming connections (tcp_ecn 1 or 2). */
__u8 syn_ecn(__u64 tcp_ecn);

/* Each CPU's share of a host's budget of @total_per_sec cookies a second
 * over @ncpus CPUs: rounded up, so the CPUs together send at most
 * @ncpus - 1 more than the total; at most MAX_COOKIE_RATE_PER_SEC. */
__u32 cookie_rate_per_cpu(__u64 total_per_sec, int ncpus);

/* shedd_config.syn_opts_off from the sysctls tcp_timestamps, tcp_sack and
 * tcp_window_scaling: each at 0 turns its option off in the kernel's
 * SYN-ACKs (tcp_parse_options() does not see it in a SYN) and in what its
 * cookies accept (cookie_timestamp_decode()). tcp_timestamps 2 is on. */
__u8 syn_opts_off(__u64 tcp_timestamps, __u64 tcp_sack, __u64 tcp_window_scaling);

/* The depth of each CPU's cookie budget for @rate_per_sec cookies per
 * second on that CPU: 10 ms of it, at least 1, at most MAX_COOKIE_BURST;
 * 0 when the rate is 0 (no cookie at all). */
__u32 cookie_burst_for(__u64 rate_per_sec);

#endif /* SHEDD_KERNEL_FEATURES_H */
