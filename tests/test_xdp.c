// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_xdp.c - the XDP program under BPF_PROG_TEST_RUN: crafted frames in,
 * verdict, counters and reply bytes out, table by table. Loads the program
 * with the test clock and attaches it nowhere; needs root (CAP_BPF and
 * CAP_NET_ADMIN). One cmocka group, so `prove` reads it as TAP.
 */
#include <errno.h>
#include <pthread.h>
#include <net/if.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <bpf/btf.h>

#include "shedd.h"
#include "lease.h"
#include "shedd.skel.h"
#include "handoff.skel.h"
#include "xdp_harness.h"
#include "packets.h"
#include "settings.h"
#include "tun_packets.h"
#include "fair.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MS(n) ((__s64)(n) * 1000000LL)

#define PROTECTED_PORT PKT_DPORT
#define OTHER_PORT 9090
#define NOLISTEN_PORT 8081 /* protected; nobody listens on it */
#define FULLQ_PORT 8082    /* protected; a listener of backlog 0 (test_ack_to_full_queue) */
#define QUIET_PORT 8083    /* protected; a listener of its own test (test_ack_without_cookies) */
#define MD5_PORT 8084      /* protected; a listener with a TCP-MD5 key for the client */
#define MPTCP_PORT 8085    /* protected; an MPTCP listener (test_signed_syn) */
/* Far from 0, so scripts can also step back in time. A fresh bucket
 * (last_ns 0) holds exactly its burst at any non-zero time. */
#define T0_NS (10000ULL * SHEDD_NSEC_PER_SEC)

/* Sources and the class the prefixes of group_setup() give them. */
#define V4_CP "198.18.1.10"      /* 198.18.1.0/24 -> CRITICAL_PLUS */
#define V4_SP "198.18.1.200"     /* 198.18.1.128/25 -> SHEDDABLE_PLUS */
#define V4_OTHER PKT_V4_CLIENT   /* no prefix -> default class */
#define V6_CRIT "2001:db8:1::10" /* 2001:db8:1::/48 -> CRITICAL */
#define V6_OTHER PKT_V6_CLIENT   /* no prefix -> default class */
/* The source check's routes (netns_setup()): CRITICAL_PLUS and CRITICAL
 * sources routed through another device than the one the frames come in
 * on, and an address of this host in the CRITICAL_PLUS prefix. */
#define V4_CP_ELSEWHERE "198.18.1.100"      /* 198.18.1.64/26 via DUMMY_DEV[1] */
#define V4_CP_LOCAL "198.18.1.20"           /* on DUMMY_DEV[0] */
#define V6_CRIT_ELSEWHERE "2001:db8:1:1::10" /* 2001:db8:1:1::/64 via DUMMY_DEV[1] */
/* A subnet broadcast address of this host (the server's /24). */
#define BRD4 "198.19.0.255"
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define BE32(x) __builtin_bswap32(x)
#else
#define BE32(x) (x)
#endif
#define BRD4_BE BE32(0xc61300ffU)

/* Devices of the test's namespace the frames can come in on (0: lo):
 * [0] forwards (so bpf_fib_lookup() answers), [1] does not. Veth: the
 * machine may have no dummy driver. */
static const char *const DUMMY_DEV[2] = { "shd0", "shd1" };
static int dummy_ifindex[2];

static int test_cpu; /* the CPU this process is pinned to */

/* Stop the current case with its name and what went wrong. */
#define expect(cond, name, fmt, ...)                                         \
	do {                                                                 \
		if (!(cond))                                                 \
			fail_msg("%s: " fmt, (name), ##__VA_ARGS__);         \
	} while (0)

/* ---- environment ------------------------------------------------------ */

static const struct shedd_config cfg_base = {
	.default_class = SHEDD_SHEDDABLE,
	/* reject: every class SHEDD_REJECT_DROP */
};
static const struct shedd_config cfg_all_ports = {
	.all_ports = 1,
	.default_class = SHEDD_SHEDDABLE,
};
/* RST settings name the server's MAC (the SYNs' destination) and a
 * budget the single-frame cases never exhaust. */
#define SERVER_MAC { 0x02, 0x00, 0x00, 0x00, 0x00, 0x05 } /* pkt_server_mac */
static const struct shedd_config cfg_rst = {
	.default_class = SHEDD_SHEDDABLE,
	.reject = { SHEDD_REJECT_RST, SHEDD_REJECT_RST, SHEDD_REJECT_RST,
		    SHEDD_REJECT_RST },
	.mac = SERVER_MAC, .rst_rate_per_sec = 1000, .rst_burst = 100,
};
static const struct shedd_config cfg_rst_cp = {
	.default_class = SHEDD_SHEDDABLE,
	.reject = { [SHEDD_CRITICAL_PLUS] = SHEDD_REJECT_RST },
	.mac = SERVER_MAC, .rst_rate_per_sec = 1000, .rst_burst = 100,
};
/* No MAC known: no SYN can be shown to be addressed to this host. */
static const struct shedd_config cfg_rst_no_mac = {
	.default_class = SHEDD_SHEDDABLE,
	.reject = { SHEDD_REJECT_RST, SHEDD_REJECT_RST, SHEDD_REJECT_RST,
		    SHEDD_REJECT_RST },
	.rst_rate_per_sec = 1000, .rst_burst = 100,
};
static const struct shedd_config cfg_default_critical = {
	.default_class = SHEDD_CRITICAL,
};
static const struct shedd_config cfg_default_invalid = {
	.default_class = SHEDD_NR_CLASSES + 3,
};

/* Verified admission. The default class (SHEDDABLE) is always verified,
 * SHEDDABLE_PLUS (V4_SP) while it sheds, CRITICAL_PLUS (V4_CP) and CRITICAL
 * (V6_CRIT) are not. The SYN-ACK's window scale is not the clients' 7, so
 * the two cannot be mistaken for each other. */
#define VERIFY_WSCALE 9
#define VERIFY_HOLD_NS MS(1000)
#define VERIFY_CFG(handoff_, ecn_)                                           \
	.default_class = SHEDD_SHEDDABLE,                                    \
	.verify = { [SHEDD_SHEDDABLE_PLUS] = SHEDD_VERIFY_SHEDDING,          \
		    [SHEDD_SHEDDABLE] = SHEDD_VERIFY_ALWAYS },               \
	.handoff = (handoff_), .wscale = VERIFY_WSCALE, .ecn = (ecn_),       \
	.cookie_rate_per_sec = 1000, .cookie_burst = 100,                    \
	.verify_hold_ns = VERIFY_HOLD_NS,                                    \
	.mac = SERVER_MAC, .rst_rate_per_sec = 1000, .rst_burst = 100
static const struct shedd_config cfg_vtc = { VERIFY_CFG(SHEDD_HANDOFF_TC, 1) };
static const struct shedd_config cfg_vkernel = { VERIFY_CFG(SHEDD_HANDOFF_KERNEL, 1) };
static const struct shedd_config cfg_vtc_noecn = { VERIFY_CFG(SHEDD_HANDOFF_TC, 0) };
/* XDP_TX does not reach the wire (the daemon found a veth peer without
 * XDP or GRO): cookies and RSTs are off, whatever the classes ask. */
static const struct shedd_config cfg_vtc_blocked = { VERIFY_CFG(SHEDD_HANDOFF_TC, 1),
						     .tx_blocked = 1 };
static const struct shedd_config cfg_rst_blocked = {
	.default_class = SHEDD_SHEDDABLE,
	.reject = { SHEDD_REJECT_RST, SHEDD_REJECT_RST, SHEDD_REJECT_RST,
		    SHEDD_REJECT_RST },
	.mac = SERVER_MAC, .rst_rate_per_sec = 1000, .rst_burst = 100,
	.tx_blocked = 1,
};
/* No RST may be sent: the RST budget is empty. */
static const struct shedd_config cfg_vtc_norst = {
	.default_class = SHEDD_SHEDDABLE,
	.verify = { [SHEDD_SHEDDABLE] = SHEDD_VERIFY_ALWAYS },
	.handoff = SHEDD_HANDOFF_TC, .wscale = VERIFY_WSCALE, .ecn = 1,
	.cookie_rate_per_sec = 1000, .cookie_burst = 100, .verify_hold_ns = VERIFY_HOLD_NS,
	.mac = SERVER_MAC,
};
/* The reverse-path check on. */
static const struct shedd_config cfg_src = {
	.default_class = SHEDD_SHEDDABLE,
	.source_check = SHEDD_SRC_STRICT,
};
/* --source-check verify: a tunnel's inner SYN is never answered. */
static const struct shedd_config cfg_src_verify = {
	.default_class = SHEDD_SHEDDABLE,
	.source_check = SHEDD_SRC_VERIFY,
};
static const struct shedd_config cfg_vtc_src = { VERIFY_CFG(SHEDD_HANDOFF_TC, 1),
						 .source_check = SHEDD_SRC_STRICT };
/* An interface of MTU 1280: the SYN-ACK offers at most 1240 / 1220. */
static const struct shedd_config cfg_vtc_mtu = { VERIFY_CFG(SHEDD_HANDOFF_TC, 1), .mtu = 1280 };
/* MTU 1500: the kernel's advmss is 1460 / 1440, whatever the client sent. */
static const struct shedd_config cfg_vtc_1500 = { VERIFY_CFG(SHEDD_HANDOFF_TC, 1), .mtu = 1500 };
/* A sysctl of the namespace at 0: tcp_timestamps, tcp_sack, tcp_window_scaling. */
static const struct shedd_config cfg_vtc_nots = { VERIFY_CFG(SHEDD_HANDOFF_TC, 1),
						  .syn_opts_off = SHEDD_SYNOPT_NO_TS };
static const struct shedd_config cfg_vtc_nosack = { VERIFY_CFG(SHEDD_HANDOFF_TC, 1),
						    .syn_opts_off = SHEDD_SYNOPT_NO_SACK };
static const struct shedd_config cfg_vkernel_nosack = { VERIFY_CFG(SHEDD_HANDOFF_KERNEL, 1),
							.syn_opts_off = SHEDD_SYNOPT_NO_SACK };
static const struct shedd_config cfg_vtc_nows = { VERIFY_CFG(SHEDD_HANDOFF_TC, 1),
						  .syn_opts_off = SHEDD_SYNOPT_NO_WS };

static const struct shedd_class_rate rate_plenty = { .rate_per_sec = 1000, .burst = 100 };
/* At rate 0 a fresh bucket gets nothing: every SYN is shed. */
static const struct shedd_class_rate rate_empty = { .rate_per_sec = 0, .burst = 5 };

static const char *class_name(unsigned int cls)
{
	static const char *const names[SHEDD_NR_CLASSES] = {
		"CRITICAL_PLUS", "CRITICAL", "SHEDDABLE_PLUS", "SHEDDABLE",
	};

	return cls < SHEDD_NR_CLASSES ? names[cls] : "?";
}

static const char *verdict_name(__u32 v)
{
	switch (v) {
	case XDP_ABORTED:
		return "XDP_ABORTED";
	case XDP_DROP:
		return "XDP_DROP";
	case XDP_PASS:
		return "XDP_PASS";
	case XDP_TX:
		return "XDP_TX";
	case XDP_REDIRECT:
		return "XDP_REDIRECT";
	}
	return "unknown verdict";
}

/* Publish @rate for every class. A record without a batch borrows one
 * token at a time and keeps none, so the reserve alone decides: the cases
 * below then read as one plain token bucket per class. */
/* @rate on class @cls, as the daemon writes it. */
static int set_class_rate(__u32 cls, const struct shedd_class_rate *rate)
{
	struct shedd_rate v = { .r = *rate };

	v.r.flags |= SHEDD_RATE_SET;
	if (!v.r.batch)
		v.r.batch = 1;
	return bpf_map__update_elem(skel->maps.rates, &cls, sizeof(cls), &v, sizeof(v),
				    BPF_F_LOCK);
}

static int set_rates(const struct shedd_class_rate *rate)
{
	__u32 cls;
	int err;

	for (cls = 0; cls < SHEDD_NR_CLASSES; cls++)
		if ((err = set_class_rate(cls, rate)))
			return err;
	return 0;
}

/* Every case starts from the same state: @cfg, @rate on every class and
 * CPU, fresh buckets, zero counters, the clock at T0. */
/* Forget every verdict on proven flows: each case starts with none, at the
 * same test clock. One batch update of the whole array. */
static int clear_proven(void)
{
	static __u32 keys[PROVEN_SLOTS];
	static const struct shedd_proven none[PROVEN_SLOTS];
	__u32 i, count = PROVEN_SLOTS;

	for (i = 0; i < PROVEN_SLOTS; i++)
		keys[i] = i;
	if (bpf_map_update_batch(bpf_map__fd(skel->maps.proven), keys, none, &count, NULL))
		return -errno;
	return 0;
}

/* A map of the program by name: NULL where it has none (the tests of the
 * tunnel checks also run against a build from before them, to be seen
 * failing there). */
static struct bpf_map *map_named(const char *name)
{
	return bpf_object__find_map_by_name(skel->obj, name);
}

static int reset_maps(const struct shedd_config *cfg,
		      const struct shedd_class_rate *rate)
{
	const struct shedd_bucket fresh = {};
	const struct shedd_rst_budget fresh_rst = {};
	const struct shedd_stats zero_stats = {};
	__u32 zero = 0, cls, slot, port;
	int err;

	err = bpf_map__update_elem(skel->maps.settings, &zero, sizeof(zero),
				   cfg ? cfg : &cfg_base, sizeof(*cfg), BPF_ANY);
	if (!err) {
		const struct shedd_broadcast none = { { 0 } };

		err = bpf_map__update_elem(skel->maps.broadcast, &zero, sizeof(zero), &none,
					   sizeof(none), BPF_ANY);
	}
	if (!err)
		err = set_rates(rate ? rate : &rate_plenty);
	for (cls = 0; !err && cls < SHEDD_NR_CLASSES; cls++) {
		const struct shedd_reserve empty = {};

		err = update_percpu(skel->maps.buckets, cls, &fresh,
				    sizeof(fresh));
		if (!err)
			err = bpf_map__update_elem(skel->maps.reserve, &cls, sizeof(cls),
						   &empty, sizeof(empty), BPF_ANY);
		/* The tunnel class space, fresh too. */
		if (!err && map_named("tun_buckets"))
			err = update_percpu(map_named("tun_buckets"), cls, &fresh, sizeof(fresh));
		if (!err && map_named("tun_reserve"))
			err = bpf_map__update_elem(map_named("tun_reserve"), &cls, sizeof(cls),
						   &empty, sizeof(empty), BPF_ANY);
	}
	if (!err)
		err = update_percpu(skel->maps.stats, 0, &zero_stats,
				    sizeof(zero_stats));
	if (!err)
		err = update_percpu(skel->maps.rst_budget, 0, &fresh_rst,
				    sizeof(fresh_rst));
	if (!err)
		err = update_percpu(skel->maps.cookie_budget, 0, &fresh_rst,
				    sizeof(fresh_rst));
	for (slot = 0; !err && slot < REFRESH_SLOTS; slot++) {
		const struct shedd_refresh never = {};

		err = update_percpu(skel->maps.refresh, slot, &never, sizeof(never));
	}
	if (!err)
		err = clear_proven();
	for (port = PROTECTED_PORT; !err && port <= QUIET_PORT; port++) {
		const __u32 never = 0;

		err = bpf_map__update_elem(skel->maps.cookie_sent, &port, sizeof(port), &never,
					   sizeof(never), BPF_ANY);
	}
	/* No lease unless a case writes one. */
	if (!err) {
		const struct shedd_lease none = {};

		err = bpf_map__update_elem(skel->maps.lease, &zero, sizeof(zero), &none,
					   sizeof(none), BPF_F_LOCK);
	}
	/* No tunnel ends here unless a case says so. */
	if (!err) {
		const struct shedd_tun_config none = { 0 };

		err = bpf_map__update_elem(skel->maps.tun_config, &zero, sizeof(zero), &none,
					   sizeof(none), BPF_ANY);
	}
	if (err) {
		print_error("reset maps: %s\n", strerror(-err));
		return -1;
	}
	skel->bss->test_clock_ns = T0_NS;
	return 0;
}

static struct shedd_bucket read_bucket(__u32 cls)
{
	struct shedd_bucket *vals = calloc(nr_cpus, sizeof(*vals));
	struct shedd_bucket b;
	int err;

	assert_non_null(vals);
	err = bpf_map__lookup_elem(skel->maps.buckets, &cls, sizeof(cls), vals,
				   nr_cpus * sizeof(*vals), 0);
	b = vals[test_cpu];
	free(vals);
	if (err)
		fail_msg("read bucket %s: %s", class_name(cls), strerror(-err));
	return b;
}

static struct shedd_reserve_state read_reserve(__u32 cls)
{
	struct shedd_reserve v;
	int err;

	err = bpf_map__lookup_elem(skel->maps.reserve, &cls, sizeof(cls), &v, sizeof(v),
				   BPF_F_LOCK);
	if (err)
		fail_msg("read reserve %s: %s", class_name(cls), strerror(-err));
	return v.s;
}

/* ---- running a frame ---------------------------------------------------- */

struct xdp_run {
	__u32 verdict;
	__u8 out[PKT_MAX];
	size_t out_len;
};

/* Run the program once on @len bytes of @data; fail @name if the kernel
 * refuses the run. */
static void run_xdp_on(const char *name, const void *data, size_t len, int ifindex,
		       struct xdp_run *r)
{
	struct xdp_md ctx = { .data_end = (__u32)len, .ingress_ifindex = (__u32)ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = data,
		.data_size_in = len,
		.data_out = r->out,
		.data_size_out = sizeof(r->out),
		.ctx_in = ifindex ? &ctx : NULL,
		.ctx_size_in = ifindex ? sizeof(ctx) : 0,
		.repeat = 1,
	);
	int err;

	err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.shedd_xdp),
				     &opts);
	expect(err == 0, name, "BPF_PROG_TEST_RUN on %zu bytes: %s", len,
	       strerror(-err));
	r->verdict = opts.retval;
	r->out_len = opts.data_size_out;
}

/* Run the program once, the frame come in on lo. */
static void run_xdp(const char *name, const void *data, size_t len, struct xdp_run *r)
{
	run_xdp_on(name, data, len, 0, r);
}

/* Names of the counters, for messages. */
#define CLS_FIELD(c, f) { "cls[" #c "]." #f, offsetof(struct shedd_stats, cls[c].f) }
#define CLS_FIELDS(c)                                                        \
	CLS_FIELD(c, syn), CLS_FIELD(c, admitted), CLS_FIELD(c, dropped),    \
	CLS_FIELD(c, rst_sent), CLS_FIELD(c, charged),                       \
	CLS_FIELD(c, cookie_sent), CLS_FIELD(c, cookie_limited),             \
	CLS_FIELD(c, ack_valid), CLS_FIELD(c, ack_invalid),                  \
	CLS_FIELD(c, ack_admitted), CLS_FIELD(c, ack_refused)
#define FIELD(f) { #f, offsetof(struct shedd_stats, f) }

static const struct {
	const char *name;
	size_t off;
} stat_fields[] = {
	CLS_FIELDS(SHEDD_CRITICAL_PLUS), CLS_FIELDS(SHEDD_CRITICAL),
	CLS_FIELDS(SHEDD_SHEDDABLE_PLUS), CLS_FIELDS(SHEDD_SHEDDABLE),
	FIELD(packets), FIELD(non_syn), FIELD(unprotected), FIELD(non_ip),
	FIELD(non_tcp), FIELD(fragment), FIELD(malformed), FIELD(frag_judged),
	FIELD(frag_refused), FIELD(deep_refused), FIELD(bad_syn),
	FIELD(rst_refused), FIELD(rst_limited), FIELD(cookie_failed),
	FIELD(ack_probed), FIELD(refreshed), FIELD(ack_queue_full),
	FIELD(ack_after_rst), FIELD(ack_repeat), FIELD(syn_tuple_busy),
	FIELD(syn_no_listener), FIELD(syn_not_local), FIELD(ack_to_kernel),
	FIELD(syn_martian), FIELD(syn_bad_csum), FIELD(src_failed), FIELD(src_unchecked),
};
_Static_assert(ARRAY_SIZE(stat_fields) * sizeof(__u64) ==
	       sizeof(struct shedd_stats), "every counter is named");

static __u64 stat_word(const struct shedd_stats *st, size_t off)
{
	__u64 v;

	memcpy(&v, (const char *)st + off, sizeof(v));
	return v;
}

/* Every counter moved by exactly @want between @before and @after, but
 * those that are non-zero in @any (NULL: none), which the specification
 * leaves open. */
static void expect_delta_but(const char *name, const struct shedd_stats *before,
			     const struct shedd_stats *after,
			     const struct shedd_stats *want,
			     const struct shedd_stats *any)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(stat_fields); i++) {
		size_t off = stat_fields[i].off;
		__u64 got = stat_word(after, off) - stat_word(before, off);
		__u64 exp = stat_word(want, off);

		if (any && stat_word(any, off))
			continue;

		expect(got == exp, name, "counter %s moved by %llu, expected %llu",
		       stat_fields[i].name, (unsigned long long)got,
		       (unsigned long long)exp);
	}
}

static void expect_delta(const char *name, const struct shedd_stats *before,
			 const struct shedd_stats *after,
			 const struct shedd_stats *want)
{
	expect_delta_but(name, before, after, want, NULL);
}

static void expect_verdict(const char *name, __u32 got, __u32 want)
{
	expect(got == want, name, "verdict %s, expected %s", verdict_name(got),
	       verdict_name(want));
}

/* ---- the RST reply -------------------------------------------------------- */

/* Check @r, the reply to the SYN @in, byte by byte against RFC 793's
 * <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>. */
static void expect_rst(const char *name, const struct pkt *in,
		       const struct xdp_run *r, size_t want_len)
{
	const struct pkt_eth *ie = (const void *)in->data;
	const struct pkt_eth *oe = (const void *)r->out;
	const struct pkt_tcp *ot;
	int v6 = in->l3_proto == ETH_P_IPV6;
	size_t l2 = in->l3_off;
	size_t l3 = v6 ? sizeof(struct pkt_ipv6) : sizeof(struct pkt_ipv4);
	/* SEG.LEN: the payload, plus one for the SYN. */
	__u32 want_ack = in->seq + (__u32)in->payload_len + 1;
	__u16 sum;

	expect(r->out_len == want_len, name, "reply is %zu bytes, expected %zu",
	       r->out_len, want_len);
	expect(want_len == l2 + l3 + sizeof(struct pkt_tcp), name,
	       "test table: reply length %zu does not fit the frame", want_len);

	expect(memcmp(oe->dst, ie->src, ETH_ALEN) == 0, name,
	       "destination MAC is not the SYN's source");
	expect(memcmp(oe->src, ie->dst, ETH_ALEN) == 0, name,
	       "source MAC is not the SYN's destination");
	expect(oe->proto == ie->proto, name, "ethertype 0x%04x, expected 0x%04x",
	       ntohs(oe->proto), ntohs(ie->proto));
	expect(memcmp(r->out + sizeof(*oe), in->data + sizeof(*ie),
		      l2 - sizeof(*ie)) == 0, name, "VLAN tags were not kept");

	if (!v6) {
		const struct pkt_ipv4 *ip = (const void *)(r->out + l2);

		expect(ip->ver_ihl == 0x45, name, "IPv4 version/ihl 0x%02x, expected 0x45",
		       ip->ver_ihl);
		expect(ntohs(ip->tot_len) == 40, name, "IPv4 tot_len %u, expected 40",
		       ntohs(ip->tot_len));
		/* The kernel's RST keeps the TOS, less the ECN bits. */
		expect(ip->tos == (in->data[l2 + 1] & 0xfc), name, "TOS 0x%02x, expected 0x%02x",
		       ip->tos, in->data[l2 + 1] & 0xfc);
		expect((ntohs(ip->frag_off) & (PKT_IP_MF | 0x1fff)) == 0, name,
		       "reply is a fragment (frag_off 0x%04x)", ntohs(ip->frag_off));
		expect(ip->ttl == 64, name, "TTL %u, expected 64", ip->ttl);
		expect(ip->protocol == IPPROTO_TCP, name, "IPv4 protocol %u, expected 6",
		       ip->protocol);
		expect(memcmp(ip->saddr, in->daddr, 4) == 0, name,
		       "IPv4 source is not the SYN's destination");
		expect(memcmp(ip->daddr, in->saddr, 4) == 0, name,
		       "IPv4 destination is not the SYN's source");
		sum = pkt_ipv4_csum(ip, sizeof(*ip));
		expect(ntohs(ip->check) == sum, name,
		       "IPv4 header checksum 0x%04x, expected 0x%04x",
		       ntohs(ip->check), sum);
	} else {
		const struct pkt_ipv6 *ip6 = (const void *)(r->out + l2);

		expect(ntohl(ip6->ver_tc_flow) >> 28 == 6, name, "IPv6 version %u",
		       ntohl(ip6->ver_tc_flow) >> 28);
		expect(ntohs(ip6->payload_len) == 20, name,
		       "IPv6 payload_len %u, expected 20", ntohs(ip6->payload_len));
		expect(ip6->nexthdr == IPPROTO_TCP, name,
		       "IPv6 nexthdr %u, expected 6", ip6->nexthdr);
		expect(ip6->hop_limit == 64, name, "hop limit %u, expected 64",
		       ip6->hop_limit);
		{
			const struct pkt_ipv6 *in6 = (const void *)(in->data + l2);
			__u32 tc = (ntohl(ip6->ver_tc_flow) >> 20) & 0xff;
			__u32 want = (ntohl(in6->ver_tc_flow) >> 20) & 0xfc;

			expect(tc == want, name, "traffic class 0x%02x, expected 0x%02x", tc, want);
		}
		expect(memcmp(ip6->saddr, in->daddr, 16) == 0, name,
		       "IPv6 source is not the SYN's destination");
		expect(memcmp(ip6->daddr, in->saddr, 16) == 0, name,
		       "IPv6 destination is not the SYN's source");
	}

	ot = (const void *)(r->out + l2 + l3);
	expect(ntohs(ot->sport) == in->dport, name, "TCP source port %u, expected %u",
	       ntohs(ot->sport), in->dport);
	expect(ntohs(ot->dport) == in->sport, name, "TCP destination port %u, expected %u",
	       ntohs(ot->dport), in->sport);
	expect(ntohl(ot->seq) == 0, name, "seq %u, expected 0", ntohl(ot->seq));
	expect(ntohl(ot->ack_seq) == want_ack, name, "ack %u, expected %u",
	       ntohl(ot->ack_seq), want_ack);
	expect(ot->doff_res == 0x50, name,
	       "data offset/reserved byte 0x%02x, expected 0x50", ot->doff_res);
	expect(ot->flags == (TCP_RST | TCP_ACK), name,
	       "TCP flags 0x%02x, expected RST|ACK (0x14)", ot->flags);
	sum = pkt_l4_csum(v6, in->daddr, in->saddr, IPPROTO_TCP, ot, sizeof(*ot),
			  offsetof(struct pkt_tcp, check));
	expect(ntohs(ot->check) == sum, name, "TCP checksum 0x%04x, expected 0x%04x",
	       ntohs(ot->check), sum);
}

/* ---- table 1: one frame, one verdict ------------------------------------ */

struct xdp_case {
	const char *name;
	struct pkt_spec pkt;
	void (*mangle)(struct pkt *p);   /* break a header after the build */
	const struct shedd_config *cfg;  /* NULL: cfg_base */
	const struct shedd_class_rate *rate;   /* NULL: rate_plenty */
	__u32 verdict;
	struct shedd_stats delta;        /* besides packets, which is always +1 */
	struct shedd_stats any;          /* non-zero: counters left open */
	size_t reply_len;                /* XDP_TX: length of the RST */
	int on_dummy;                    /* 1, 2: came in on DUMMY_DEV[0], [1]; 0: lo */
	int brd;                         /* BRD4 in the map broadcast */
};

#define ADMITTED(c) .delta = { .cls[c] = { .syn = 1, .charged = 1, .admitted = 1 } }
#define DROPPED(c) .delta = { .cls[c] = { .syn = 1, .charged = 1, .dropped = 1 } }
#define RST_SENT(c) .delta = { .cls[c] = { .syn = 1, .charged = 1, .rst_sent = 1 } }
#define COUNTED(f) .delta = { .f = 1 }

#define V4 .l3 = ETH_P_IP
#define V6 .l3 = ETH_P_IPV6
#define EXT3 .nr_ext = 3, .ext = { IPPROTO_HOPOPTS, IPPROTO_ROUTING, IPPROTO_DSTOPTS }

static void mangle_ipv4_version(struct pkt *p)
{
	p->data[p->l3_off] = 0x65; /* version 6 under the IPv4 ethertype */
}

/* ihl 4 puts a would-be TCP header 4 bytes early; ack_seq is set so that
 * it reads as a SYN with doff 5, so trusting ihl 4 shows in the counters. */
static void mangle_ipv4_ihl4(struct pkt *p)
{
	p->data[p->l3_off] = 0x44;
	p->data[p->l4_off + 8] = 0x50;
	p->data[p->l4_off + 9] = TCP_SYN;
}

static void mangle_ipv4_ihl15(struct pkt *p)
{
	p->data[p->l3_off] = 0x4f; /* 60 bytes of header, 40 in the frame */
}

static void mangle_ipv4_tot_len(struct pkt *p)
{
	struct pkt_ipv4 *ip = (void *)(p->data + p->l3_off);

	ip->tot_len = htons(19); /* shorter than its own header */
}

static void mangle_tcp_doff4(struct pkt *p)
{
	p->data[p->l4_off + offsetof(struct pkt_tcp, doff_res)] = 4 << 4;
}

static void mangle_tcp_doff15(struct pkt *p)
{
	p->data[p->l4_off + offsetof(struct pkt_tcp, doff_res)] = 15 << 4;
}

static void mangle_ipv6_version(struct pkt *p)
{
	p->data[p->l3_off] = 0x40; /* version 4 under the IPv6 ethertype */
}

static void mangle_ipv6_ext_len(struct pkt *p)
{
	/* hdrlen 255: 2048 bytes of hop-by-hop options in a short frame */
	p->data[p->l3_off + sizeof(struct pkt_ipv6) + 1] = 255;
}

/* Make the IPv4 datagram @n bytes long (tot_len and checksum), and the
 * frame end with it. */
static void ipv4_cut_to(struct pkt *p, size_t n)
{
	struct pkt_ipv4 *ip = (void *)(p->data + p->l3_off);

	ip->tot_len = htons(n);
	ip->check = htons(pkt_ipv4_csum(ip, (ip->ver_ihl & 0xf) * 4));
	p->len = p->l3_off + n;
}

/* The same for IPv6: @n bytes of payload after the fixed header. */
static void ipv6_cut_to(struct pkt *p, size_t n)
{
	struct pkt_ipv6 *ip6 = (void *)(p->data + p->l3_off);

	ip6->payload_len = htons(n);
	p->len = p->l3_off + sizeof(*ip6) + n;
}

/* A first fragment with @n bytes of the TCP header. */
static void frag_tcp_bytes(struct pkt *p, size_t n)
{
	if (p->l3_proto == ETH_P_IP)
		ipv4_cut_to(p, p->l4_off - p->l3_off + n);
	else
		ipv6_cut_to(p, p->l4_off - p->l3_off - sizeof(struct pkt_ipv6) + n);
}

static void mangle_tcp_8(struct pkt *p) { frag_tcp_bytes(p, 8); }
static void mangle_tcp_16(struct pkt *p) { frag_tcp_bytes(p, 16); }
/* 24 bytes: the fixed header and 4 of the 20 option bytes. */
static void mangle_tcp_24(struct pkt *p) { frag_tcp_bytes(p, 24); }

/* The chain goes on past the fragment: fragment header, then only 8 of
 * the 16 bytes of the destination options header. */
static void mangle_ipv6_chain_split(struct pkt *p)
{
	ipv6_cut_to(p, 8 + 8);
}

/* tot_len 100 bytes beyond the frame: a truncated datagram. */
static void mangle_ipv4_tot_len_long(struct pkt *p)
{
	struct pkt_ipv4 *ip = (void *)(p->data + p->l3_off);

	ip->tot_len = htons(p->len - p->l3_off + 100);
	ip->check = htons(pkt_ipv4_csum(ip, sizeof(*ip)));
}

/* tot_len ends 10 bytes into the TCP header: the rest of the frame is
 * trailer the kernel trims, so no TCP header is delivered. */
static void mangle_ipv4_tot_len_tcp10(struct pkt *p)
{
	struct pkt_ipv4 *ip = (void *)(p->data + p->l3_off);

	ip->tot_len = htons(p->l4_off - p->l3_off + 10);
	ip->check = htons(pkt_ipv4_csum(ip, sizeof(*ip)));
}

/* tot_len holds the fixed TCP header but not the options doff announces. */
static void mangle_ipv4_tot_len_no_opts(struct pkt *p)
{
	struct pkt_ipv4 *ip = (void *)(p->data + p->l3_off);

	ip->tot_len = htons(p->l4_off - p->l3_off + 20);
	ip->check = htons(pkt_ipv4_csum(ip, sizeof(*ip)));
}

static void mangle_ipv6_plen_long(struct pkt *p)
{
	struct pkt_ipv6 *ip6 = (void *)(p->data + p->l3_off);

	ip6->payload_len = htons(ntohs(ip6->payload_len) + 8);
}

/* Payload length 0 (no jumbo option): the kernel trims to the header. */
static void mangle_ipv6_plen_zero(struct pkt *p)
{
	struct pkt_ipv6 *ip6 = (void *)(p->data + p->l3_off);

	ip6->payload_len = 0;
}

static void set_mac(__u8 *mac, __u8 a, __u8 b, __u8 c, __u8 d, __u8 e, __u8 f)
{
	const __u8 m[ETH_ALEN] = { a, b, c, d, e, f };

	memcpy(mac, m, ETH_ALEN);
}

static void mangle_dst_mac_bcast(struct pkt *p)
{
	set_mac(p->data, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
}

static void mangle_dst_mac_mcast4(struct pkt *p)
{
	set_mac(p->data, 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb);
}

static void mangle_dst_mac_mcast6(struct pkt *p)
{
	set_mac(p->data, 0x33, 0x33, 0x00, 0x00, 0x00, 0x01);
}

static void mangle_dst_mac_other(struct pkt *p)
{
	set_mac(p->data, 0x02, 0x00, 0x00, 0x00, 0x00, 0x06);
}

static void mangle_dst_mac_zero(struct pkt *p)
{
	set_mac(p->data, 0, 0, 0, 0, 0, 0);
}

/* TOS (traffic class) 0x2b: DSCP 10, ECN 3. The IPv4 header checksum is
 * made again. */
static void mangle_tos(struct pkt *p)
{
	struct pkt_ipv4 *ip = (void *)(p->data + p->l3_off);
	__u16 sum;

	if (p->l3_proto == ETH_P_IPV6) {
		p->data[p->l3_off] = (__u8)(0x60 | (0x2b >> 4));
		p->data[p->l3_off + 1] = (__u8)((0x2b & 0xf) << 4 | (p->data[p->l3_off + 1] & 0xf));
		return;
	}
	ip->tos = 0x2b;
	sum = pkt_ipv4_csum(ip, (ip->ver_ihl & 0xf) * 4u);
	ip->check = htons(sum);
}

/* A TCP checksum that is wrong. */
static void mangle_tcp_csum(struct pkt *p)
{
	p->data[p->l4_off + offsetof(struct pkt_tcp, check)] ^= 0x5a;
}

/* The check field a stack leaves to offload (CHECKSUM_PARTIAL): the
 * pseudo-header's sum, folded, not complemented. */
static void mangle_tcp_csum_partial(struct pkt *p)
{
	size_t alen = p->l3_proto == ETH_P_IPV6 ? 16 : 4, len = p->len - p->l4_off;
	__u64 sum = pkt_csum_add(pkt_csum_add(0, p->saddr, alen), p->daddr, alen);
	__u16 v;

	sum += IPPROTO_TCP + (__u32)len;
	v = (__u16)~pkt_csum_fold(sum);
	p->data[p->l4_off + offsetof(struct pkt_tcp, check)] = (__u8)(v >> 8);
	p->data[p->l4_off + offsetof(struct pkt_tcp, check) + 1] = (__u8)v;
}

static void mangle_src_mac_bcast(struct pkt *p)
{
	set_mac(p->data + ETH_ALEN, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff);
}

static void mangle_src_mac_mcast(struct pkt *p)
{
	set_mac(p->data + ETH_ALEN, 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01);
}

#define FRAG_ADMITTED(c) .delta = { .cls[c] = { .syn = 1, .charged = 1, .admitted = 1 }, .frag_judged = 1 }
#define FRAG_DROPPED(c) .delta = { .cls[c] = { .syn = 1, .charged = 1, .dropped = 1 }, .frag_judged = 1 }
#define RST_REFUSED(c) .delta = { .cls[c] = { .syn = 1, .charged = 1, .dropped = 1 }, .rst_refused = 1 }
#define MARTIAN .delta = { .syn_martian = 1 }
/* Chains Linux walks and skips (ipv6_rthdr_rcv(), ipv6_destopt_rcv()): a
 * routing header of an unknown type with Segments Left 0, then skippable
 * destination options. 512 bytes of them (an IPv6 header of 552 bytes
 * with its chain), past the 472 the functions behind the parser once
 * took; and 2568, past 2 KiB. */
#define CHAIN_552 .nr_ext = 2, .ext = { IPPROTO_ROUTING, IPPROTO_DSTOPTS }, \
	.ext_len = { 264, 248 }
#define CHAIN_2608 .nr_ext = 2, .ext = { IPPROTO_ROUTING, IPPROTO_DSTOPTS }, \
	.ext_len = { 2048, 520 }
#define EXT7_DST .nr_ext = 7, .ext = { IPPROTO_DSTOPTS, IPPROTO_DSTOPTS, \
	IPPROTO_DSTOPTS, IPPROTO_DSTOPTS, IPPROTO_DSTOPTS, IPPROTO_DSTOPTS, \
	IPPROTO_DSTOPTS }

static const struct xdp_case cases[] = {
	/* Classification and the verdict of a judged SYN. */
	{ "IPv4 SYN from 198.18.1.0/24 is CRITICAL_PLUS, admitted",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_CP },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "IPv4 SYN from 198.18.1.128/25 is SHEDDABLE_PLUS (longest prefix)",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_SP },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE_PLUS) },
	{ "IPv4 SYN from no prefix gets the default class, admitted",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_OTHER },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "IPv4 SYN from no prefix follows settings.default_class",
	  .pkt = { V4, .flags = TCP_SYN }, .cfg = &cfg_default_critical,
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL) },
	{ "IPv4 SYN with an out-of-range default_class is SHEDDABLE",
	  .pkt = { V4, .flags = TCP_SYN }, .cfg = &cfg_default_invalid,
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "IPv4 SYN with ECE and CWR (ECN setup) is a pure SYN",
	  .pkt = { V4, .flags = TCP_SYN | TCP_ECE | TCP_CWR },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "IPv6 SYN from 2001:db8:1::/48 is CRITICAL, admitted",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = V6_CRIT },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL) },
	{ "IPv6 SYN from no prefix gets the default class, admitted",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = V6_OTHER },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "IPv4 SYN CRITICAL_PLUS, rate 0 and empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_CP }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_CRITICAL_PLUS) },
	{ "IPv4 SYN default class, empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "IPv6 SYN CRITICAL, empty bucket: dropped",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = V6_CRIT }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_CRITICAL) },
	{ "IPv6 SYN default class, empty bucket: dropped",
	  .pkt = { V6, .flags = TCP_SYN }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },

	/* Protected ports. */
	{ "IPv4 SYN to an unprotected port passes",
	  .pkt = { V4, .flags = TCP_SYN, .dport = OTHER_PORT }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(unprotected) },
	{ "IPv6 SYN to an unprotected port passes",
	  .pkt = { V6, .flags = TCP_SYN, .dport = OTHER_PORT }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(unprotected) },
	{ "all_ports=1: IPv4 SYN to port 9090 is judged, admitted",
	  .pkt = { V4, .flags = TCP_SYN, .dport = OTHER_PORT, .saddr = V4_CP },
	  .cfg = &cfg_all_ports,
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "all_ports=1: IPv6 SYN to port 9090 is judged, dropped when empty",
	  .pkt = { V6, .flags = TCP_SYN, .dport = OTHER_PORT },
	  .cfg = &cfg_all_ports, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },

	/* Not a pure SYN: passes even with an empty bucket. */
	{ "IPv4 SYN-ACK passes as non-SYN",
	  .pkt = { V4, .flags = TCP_SYN | TCP_ACK }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "IPv4 ACK passes as non-SYN",
	  .pkt = { V4, .flags = TCP_ACK }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "IPv4 RST passes as non-SYN",
	  .pkt = { V4, .flags = TCP_RST }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "IPv4 FIN-ACK passes as non-SYN",
	  .pkt = { V4, .flags = TCP_FIN | TCP_ACK }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "IPv4 data ACK (PSH, 100 bytes) passes as non-SYN",
	  .pkt = { V4, .flags = TCP_PSH | TCP_ACK, .payload_len = 100 },
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "IPv6 SYN-ACK passes as non-SYN",
	  .pkt = { V6, .flags = TCP_SYN | TCP_ACK }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "IPv6 ACK passes as non-SYN",
	  .pkt = { V6, .flags = TCP_ACK }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "IPv6 RST passes as non-SYN",
	  .pkt = { V6, .flags = TCP_RST }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "IPv6 FIN-ACK passes as non-SYN",
	  .pkt = { V6, .flags = TCP_FIN | TCP_ACK }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "IPv6 data ACK (PSH, 100 bytes) passes as non-SYN",
	  .pkt = { V6, .flags = TCP_PSH | TCP_ACK, .payload_len = 100 },
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(non_syn) },

	/* Not TCP, not IP. */
	{ "IPv4 UDP to the protected port passes as non-TCP",
	  .pkt = { V4, .l4 = IPPROTO_UDP, .payload_len = 32 }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_tcp) },
	{ "IPv4 ICMP passes as non-TCP",
	  .pkt = { V4, .l4 = IPPROTO_ICMP }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_tcp) },
	{ "IPv6 nexthdr=UDP passes as non-TCP",
	  .pkt = { V6, .l4 = IPPROTO_UDP, .payload_len = 32 }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_tcp) },
	{ "IPv6 hop-by-hop then UDP passes as non-TCP",
	  .pkt = { V6, .l4 = IPPROTO_UDP, .nr_ext = 1, .ext = { IPPROTO_HOPOPTS } },
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(non_tcp) },
	{ "ARP request passes as non-IP",
	  .pkt = { .l3 = ETH_P_ARP }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_ip) },
	{ "802.1Q ARP request passes as non-IP",
	  .pkt = { .l3 = ETH_P_ARP, .vlans = 1 }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_ip) },
	{ "LLDP frame passes as non-IP",
	  .pkt = { .l3 = 0x88cc }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_ip) },
	/* Priority tags (VID 0): the kernel strips any number of them and
	 * delivers the SYN (net/core/dev.c, check_vlan_id), so it is judged
	 * behind as many as the walk takes (MAX_VLAN_TAGS, 8) and refused
	 * behind more, even with tokens to spare, never passed unjudged. */
	{ "1 priority tag, IPv4 SYN, empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 1, .vid0 = 1 }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "2 priority tags, IPv4 SYN, empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 2, .vid0 = 1 }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "3 priority tags, IPv4 SYN, empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 3, .vid0 = 1 }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "3 priority tags, IPv4 SYN from 198.18.1.0/24: CRITICAL_PLUS, admitted",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 3, .vid0 = 1, .saddr = V4_CP },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "4 priority tags, IPv4 SYN, empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 4, .vid0 = 1 }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "4 priority tags, IPv6 SYN, empty bucket: dropped",
	  .pkt = { V6, .flags = TCP_SYN, .vlans = 4, .vid0 = 1 }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "8 priority tags (the walk's bound), IPv4 SYN, empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 8, .vid0 = 1 }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "8 priority tags, IPv6 SYN from 2001:db8:1::/48: CRITICAL, admitted",
	  .pkt = { V6, .flags = TCP_SYN, .vlans = 8, .vid0 = 1, .saddr = V6_CRIT },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL) },
	{ "8 VLAN tags of VIDs 100-107, IPv4 SYN, empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 8 }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "9 priority tags, IPv4 SYN, tokens left: refused as too deep",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 9, .vid0 = 1, .saddr = V4_CP },
	  .verdict = XDP_DROP, COUNTED(deep_refused) },
	{ "9 priority tags, IPv6 SYN, RST set, empty bucket: refused, no RST",
	  .pkt = { V6, .flags = TCP_SYN, .vlans = 9, .vid0 = 1 }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, COUNTED(deep_refused) },
	{ "12 VLAN tags, ARP: refused (what follows cannot be seen)",
	  .pkt = { .l3 = ETH_P_ARP, .vlans = 12 }, .rate = &rate_empty,
	  .verdict = XDP_DROP, COUNTED(deep_refused) },

	/* VLAN tags: judged like untagged. */
	{ "802.1Q IPv4 SYN from 198.18.1.0/24: CRITICAL_PLUS, admitted",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 1, .saddr = V4_CP },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "802.1Q IPv4 SYN, empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 1 }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "802.1ad+802.1Q IPv4 SYN from 198.18.1.128/25: admitted",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 2, .saddr = V4_SP },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE_PLUS) },
	{ "802.1ad+802.1Q IPv4 SYN, empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 2 }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "802.1Q IPv6 SYN from 2001:db8:1::/48: CRITICAL, admitted",
	  .pkt = { V6, .flags = TCP_SYN, .vlans = 1, .saddr = V6_CRIT },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL) },
	{ "802.1ad+802.1Q IPv6 SYN from 2001:db8:1::/48: CRITICAL, admitted",
	  .pkt = { V6, .flags = TCP_SYN, .vlans = 2, .saddr = V6_CRIT },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL) },
	{ "802.1ad+802.1Q IPv6 SYN, empty bucket: dropped",
	  .pkt = { V6, .flags = TCP_SYN, .vlans = 2 }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },

	/* IP options and IPv6 extension headers: still judged. */
	{ "IPv4 SYN with 8 bytes of IP options (ihl 7): admitted",
	  .pkt = { V4, .flags = TCP_SYN, .ip_opt_len = 8, .saddr = V4_CP },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "IPv4 SYN with 40 bytes of IP options (ihl 15), empty: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .ip_opt_len = 40, .saddr = V4_CP },
	  .rate = &rate_empty, .verdict = XDP_DROP, DROPPED(SHEDD_CRITICAL_PLUS) },
	{ "IPv4 SYN padded to 60 bytes (Ethernet minimum): admitted",
	  .pkt = { V4, .flags = TCP_SYN, .pad_to = 60 },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "IPv4 SYN with DF set (not a fragment): admitted",
	  .pkt = { V4, .flags = TCP_SYN, .frag = PKT_IP_DF },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "IPv6 SYN after hop-by-hop, routing, dest-options: admitted",
	  .pkt = { V6, .flags = TCP_SYN, EXT3, .saddr = V6_CRIT, .tcp_opts = 1 },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL) },
	{ "IPv6 SYN after hop-by-hop, routing, dest-options, empty: dropped",
	  .pkt = { V6, .flags = TCP_SYN, EXT3 }, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "IPv6 SYN after an authentication header: admitted",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 1, .ext = { IPPROTO_AH },
		   .saddr = V6_CRIT },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL) },
	{ "IPv6 SYN after six extension headers (the walk's bound): admitted",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 6,
		   .ext = { IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING,
			    IPPROTO_AH, IPPROTO_DSTOPTS, IPPROTO_DSTOPTS } },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	/* Deeper than the walk: Linux delivers it, so it is refused, even
	 * with tokens to spare, never passed unjudged. */
	{ "IPv6 SYN after seven extension headers is too deep: refused",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 7,
		   .ext = { IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING,
			    IPPROTO_AH, IPPROTO_DSTOPTS, IPPROTO_DSTOPTS,
			    IPPROTO_DSTOPTS } },
	  .verdict = XDP_DROP, COUNTED(deep_refused) },
	{ "IPv6 SYN after seven destination options headers: refused",
	  .pkt = { V6, .flags = TCP_SYN, EXT7_DST },
	  .verdict = XDP_DROP, COUNTED(deep_refused) },
	{ "IPv6 SYN after seven destination options headers, RST set: refused",
	  .pkt = { V6, .flags = TCP_SYN, EXT7_DST }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, COUNTED(deep_refused) },
	{ "IPv6 six extension headers then a fragment header: refused",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 7, .frag = PKT_IP6_MF,
		   .ext = { IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING,
			    IPPROTO_AH, IPPROTO_DSTOPTS, IPPROTO_DSTOPTS,
			    IPPROTO_FRAGMENT } },
	  .verdict = XDP_DROP, COUNTED(deep_refused) },
	{ "IPv6 UDP after seven extension headers: refused (cannot tell)",
	  .pkt = { V6, .l4 = IPPROTO_UDP, EXT7_DST },
	  .verdict = XDP_DROP, COUNTED(deep_refused) },
	{ "IPv6 UDP after six extension headers passes as non-TCP",
	  .pkt = { V6, .l4 = IPPROTO_UDP, .nr_ext = 6,
		   .ext = { IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING,
			    IPPROTO_AH, IPPROTO_DSTOPTS, IPPROTO_DSTOPTS } },
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(non_tcp) },

	/* IPv4 fragments: the kernel reassembles them and delivers the SYN,
	 * so a first fragment that holds the TCP header is judged (and never
	 * answered); one too short for it, or a TCP fragment at offset 1, is
	 * refused (RFC 1858); later fragments pass. */
	{ "IPv4 first fragment (MF, offset 0) of a SYN is judged, admitted",
	  .pkt = { V4, .flags = TCP_SYN, .frag = PKT_IP_MF, .payload_len = 16,
		   .saddr = V4_CP },
	  .verdict = XDP_PASS, FRAG_ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "IPv4 first fragment of a SYN, empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .frag = PKT_IP_MF, .payload_len = 16 },
	  .rate = &rate_empty, .verdict = XDP_DROP, FRAG_DROPPED(SHEDD_SHEDDABLE) },
	{ "IPv4 first fragment of a SYN with IP options, empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .frag = PKT_IP_MF, .ip_opt_len = 8,
		   .saddr = V4_SP },
	  .rate = &rate_empty, .verdict = XDP_DROP,
	  FRAG_DROPPED(SHEDD_SHEDDABLE_PLUS) },
	{ "IPv4 first fragment of a SYN, RST configured: dropped, never answered",
	  .pkt = { V4, .flags = TCP_SYN, .frag = PKT_IP_MF, .payload_len = 16 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_DROP, FRAG_DROPPED(SHEDD_SHEDDABLE) },
	{ "IPv4 first fragment: 24 bytes of a SYN with options, judged",
	  .pkt = { V4, .flags = TCP_SYN, .frag = PKT_IP_MF, .tcp_opts = 1 },
	  .mangle = mangle_tcp_24, .rate = &rate_empty,
	  .verdict = XDP_DROP, FRAG_DROPPED(SHEDD_SHEDDABLE) },
	{ "IPv4 first fragment of a SYN to an unprotected port passes",
	  .pkt = { V4, .flags = TCP_SYN, .frag = PKT_IP_MF, .dport = OTHER_PORT },
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(unprotected) },
	{ "IPv4 first fragment of an ACK passes as non-SYN",
	  .pkt = { V4, .flags = TCP_ACK, .frag = PKT_IP_MF, .payload_len = 64 },
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "IPv4 tiny first fragment, 8 bytes of TCP: refused",
	  .pkt = { V4, .flags = TCP_SYN, .frag = PKT_IP_MF },
	  .mangle = mangle_tcp_8, .verdict = XDP_DROP, COUNTED(frag_refused) },
	{ "IPv4 tiny first fragment, 16 bytes of TCP: refused",
	  .pkt = { V4, .flags = TCP_SYN, .frag = PKT_IP_MF },
	  .mangle = mangle_tcp_16, .verdict = XDP_DROP, COUNTED(frag_refused) },
	{ "IPv4 TCP fragment at offset 1 (MF): refused",
	  .pkt = { V4, .flags = TCP_SYN, .frag = PKT_IP_MF | 1 },
	  .verdict = XDP_DROP, COUNTED(frag_refused) },
	{ "IPv4 TCP last fragment at offset 1: refused",
	  .pkt = { V4, .flags = TCP_ACK, .frag = 1 },
	  .verdict = XDP_DROP, COUNTED(frag_refused) },
	{ "IPv4 TCP fragment at offset 2 passes as fragment",
	  .pkt = { V4, .flags = TCP_SYN, .frag = PKT_IP_MF | 2 },
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(fragment) },
	{ "IPv4 last fragment (offset 185) passes as fragment",
	  .pkt = { V4, .flags = TCP_SYN, .frag = 185 }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(fragment) },
	{ "IPv4 UDP first fragment passes as fragment",
	  .pkt = { V4, .l4 = IPPROTO_UDP, .frag = PKT_IP_MF, .payload_len = 16 },
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(fragment) },
	{ "IPv4 UDP fragment at offset 1 passes as fragment",
	  .pkt = { V4, .l4 = IPPROTO_UDP, .frag = PKT_IP_MF | 1 },
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(fragment) },

	/* IPv6 Fragment header: the same rules, and RFC 7112's whole chain
	 * in the first fragment. */
	{ "IPv6 first fragment (M, offset 0) of a SYN is judged, admitted",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 1, .ext = { IPPROTO_FRAGMENT },
		   .frag = PKT_IP6_MF, .payload_len = 16, .saddr = V6_CRIT },
	  .verdict = XDP_PASS, FRAG_ADMITTED(SHEDD_CRITICAL) },
	{ "IPv6 first fragment of a SYN, empty bucket: dropped",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 1, .ext = { IPPROTO_FRAGMENT },
		   .frag = PKT_IP6_MF },
	  .rate = &rate_empty, .verdict = XDP_DROP, FRAG_DROPPED(SHEDD_SHEDDABLE) },
	{ "IPv6 hop-by-hop, first fragment, dest-options, SYN: judged, dropped",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 3, .frag = PKT_IP6_MF,
		   .ext = { IPPROTO_HOPOPTS, IPPROTO_FRAGMENT, IPPROTO_DSTOPTS } },
	  .rate = &rate_empty, .verdict = XDP_DROP, FRAG_DROPPED(SHEDD_SHEDDABLE) },
	{ "IPv6 first fragment of a SYN, RST configured: dropped, never answered",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 1, .ext = { IPPROTO_FRAGMENT },
		   .frag = PKT_IP6_MF },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_DROP, FRAG_DROPPED(SHEDD_SHEDDABLE) },
	{ "IPv6 atomic fragment (offset 0, no M) of a SYN: judged as a datagram",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 1, .ext = { IPPROTO_FRAGMENT } },
	  .rate = &rate_empty, .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "IPv6 first fragment, 8 bytes of TCP: refused",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 1, .ext = { IPPROTO_FRAGMENT },
		   .frag = PKT_IP6_MF },
	  .mangle = mangle_tcp_8, .verdict = XDP_DROP, COUNTED(frag_refused) },
	{ "IPv6 first fragment whose header chain goes on: refused (RFC 7112)",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 2, .frag = PKT_IP6_MF,
		   .ext = { IPPROTO_FRAGMENT, IPPROTO_DSTOPTS } },
	  .mangle = mangle_ipv6_chain_split, .verdict = XDP_DROP,
	  COUNTED(frag_refused) },
	{ "IPv6 TCP fragment at offset 1: refused",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 1, .ext = { IPPROTO_FRAGMENT },
		   .frag = 1 << 3 | PKT_IP6_MF },
	  .verdict = XDP_DROP, COUNTED(frag_refused) },
	{ "IPv6 UDP fragment at offset 1 passes as fragment",
	  .pkt = { V6, .l4 = IPPROTO_UDP, .nr_ext = 1, .ext = { IPPROTO_FRAGMENT },
		   .frag = 1 << 3 | PKT_IP6_MF },
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(fragment) },
	{ "IPv6 hop-by-hop then TCP fragment at offset 8 passes as fragment",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 2,
		   .ext = { IPPROTO_HOPOPTS, IPPROTO_FRAGMENT }, .frag = 8 << 3 },
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(fragment) },

	/* A listener discards a SYN with RST or FIN: no token, no answer. */
	{ "IPv4 SYN+FIN passes uncharged, even with RST configured",
	  .pkt = { V4, .flags = TCP_SYN | TCP_FIN }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(bad_syn) },
	{ "IPv4 SYN+RST passes uncharged, even with RST configured",
	  .pkt = { V4, .flags = TCP_SYN | TCP_RST }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(bad_syn) },
	{ "IPv4 SYN+FIN+PSH+URG (Xmas-like) passes uncharged",
	  .pkt = { V4, .flags = TCP_SYN | TCP_FIN | TCP_PSH | TCP_URG },
	  .verdict = XDP_PASS, COUNTED(bad_syn) },
	{ "IPv6 SYN+FIN passes uncharged, even with RST configured",
	  .pkt = { V6, .flags = TCP_SYN | TCP_FIN }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(bad_syn) },
	{ "IPv6 SYN+RST passes uncharged",
	  .pkt = { V6, .flags = TCP_SYN | TCP_RST }, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(bad_syn) },
	{ "IPv4 first fragment of a SYN+FIN passes uncharged",
	  .pkt = { V4, .flags = TCP_SYN | TCP_FIN, .frag = PKT_IP_MF },
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(bad_syn) },

	/* Invalid headers pass, counted. */
	{ "IPv4 header with version 6 is malformed",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_ipv4_version,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv4 header with ihl 4 is malformed",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_ipv4_ihl4,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv4 header with ihl 15 beyond the frame is malformed",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_ipv4_ihl15,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv4 tot_len shorter than the header is malformed",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_ipv4_tot_len,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv4 TCP doff 4 is malformed",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_tcp_doff4,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv4 TCP doff 15 beyond the frame is malformed",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_tcp_doff15,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv6 TCP doff 4 is malformed",
	  .pkt = { V6, .flags = TCP_SYN }, .mangle = mangle_tcp_doff4,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv6 header with version 4 is malformed",
	  .pkt = { V6, .flags = TCP_SYN }, .mangle = mangle_ipv6_version,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv4 tot_len beyond the frame is malformed",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_ipv4_tot_len_long,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv4 tot_len ending inside the TCP header is malformed",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_ipv4_tot_len_tcp10,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv4 tot_len without the TCP options doff announces is malformed",
	  .pkt = { V4, .flags = TCP_SYN, .tcp_opts = 1 },
	  .mangle = mangle_ipv4_tot_len_no_opts,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv6 payload_len beyond the frame is malformed",
	  .pkt = { V6, .flags = TCP_SYN }, .mangle = mangle_ipv6_plen_long,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv6 payload_len 0 without a jumbo option is malformed",
	  .pkt = { V6, .flags = TCP_SYN }, .mangle = mangle_ipv6_plen_zero,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },
	{ "IPv6 hop-by-hop header longer than the frame is malformed",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 1, .ext = { IPPROTO_HOPOPTS } },
	  .mangle = mangle_ipv6_ext_len,
	  .rate = &rate_empty, .verdict = XDP_PASS, COUNTED(malformed) },

	/* Refusal by RST. */
	{ "RST: IPv4 SYN, empty bucket: 54-byte RST+ACK",
	  .pkt = { V4, .flags = TCP_SYN, .seq = 0x01020304 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 54 },
	{ "RST: IPv4 SYN padded to 60 bytes: padding is not data, ack = seq + 1",
	  .pkt = { V4, .flags = TCP_SYN, .pad_to = 60 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 54 },
	{ "RST: IPv4 SYN with IP options and TCP options: 54-byte reply",
	  .pkt = { V4, .flags = TCP_SYN, .ip_opt_len = 8, .tcp_opts = 1,
		   .saddr = V4_CP },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_CRITICAL_PLUS), .reply_len = 54 },
	{ "RST: IPv4 SYN with 40 bytes of IP options: 54-byte reply",
	  .pkt = { V4, .flags = TCP_SYN, .ip_opt_len = 40, .tcp_opts = 1 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 54 },
	{ "RST: IPv4 SYN with 12 bytes of data: ack = seq + 13",
	  .pkt = { V4, .flags = TCP_SYN, .tcp_opts = 1, .payload_len = 12 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 54 },
	{ "RST: IPv4 SYN with seq 0xffffffff: ack wraps to 0",
	  .pkt = { V4, .flags = TCP_SYN, .seq = 0xffffffffu },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 54 },
	{ "RST: IPv6 SYN: 74-byte RST+ACK",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = V6_CRIT },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_CRITICAL), .reply_len = 74 },
	{ "RST: IPv6 SYN with extension headers and TCP options: 74 bytes",
	  .pkt = { V6, .flags = TCP_SYN, EXT3, .tcp_opts = 1 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 74 },
	{ "RST: IPv6 SYN after AH with 5 bytes of data: ack = seq + 6",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 1, .ext = { IPPROTO_AH },
		   .payload_len = 5 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 74 },
	{ "RST: 802.1Q IPv4 SYN with options: 58 bytes, tag kept",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 1, .ip_opt_len = 4,
		   .tcp_opts = 1, .saddr = V4_CP },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_CRITICAL_PLUS), .reply_len = 58 },
	{ "RST: 802.1ad+802.1Q IPv6 SYN with extension headers: 82 bytes",
	  .pkt = { V6, .flags = TCP_SYN, .vlans = 2, EXT3, .tcp_opts = 1,
		   .saddr = V6_CRIT },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_CRITICAL), .reply_len = 82 },
	{ "RST: 802.1ad+802.1Q IPv4 SYN: 62 bytes, tags kept",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 2 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 62 },
	{ "RST: 3 priority tags, IPv4 SYN: 66 bytes, tags kept",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 3, .vid0 = 1 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 66 },
	{ "RST: 8 priority tags, IPv6 SYN with extension headers: 106 bytes, tags kept",
	  .pkt = { V6, .flags = TCP_SYN, .vlans = 8, .vid0 = 1, EXT3, .tcp_opts = 1 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 106 },
	{ "RST: 8 VLAN tags, IPv4 SYN with options: 86 bytes, tags kept",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 8, .ip_opt_len = 8, .tcp_opts = 1 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 86 },
	{ "RST: IPv6 SYN behind a 552-byte chain: 74 bytes, chain gone",
	  .pkt = { V6, .flags = TCP_SYN, CHAIN_552, .tcp_opts = 1 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 74 },
	{ "RST: IPv6 SYN behind a 2608-byte chain: 74 bytes, chain gone",
	  .pkt = { V6, .flags = TCP_SYN, CHAIN_2608 },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 74 },
	{ "RST configured, tokens left: admitted and untouched",
	  .pkt = { V4, .flags = TCP_SYN, .tcp_opts = 1 }, .cfg = &cfg_rst,
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "RST for CRITICAL_PLUS only: its SYN gets a RST",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_CP },
	  .cfg = &cfg_rst_cp, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_CRITICAL_PLUS), .reply_len = 54 },
	{ "RST for CRITICAL_PLUS only: a default-class SYN is dropped",
	  .pkt = { V4, .flags = TCP_SYN }, .cfg = &cfg_rst_cp, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "RST: IPv6 atomic fragment SYN: 74 bytes, fragment header gone",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 1, .ext = { IPPROTO_FRAGMENT } },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 74 },

	/* A RST only where the kernel would answer: never to a multicast,
	 * broadcast, unspecified or loopback address, never from a group
	 * MAC, only to a SYN sent to this host's MAC. Such SYNs are dropped. */
	{ "kernel drops: IPv4 source 224.0.0.1 (multicast): no token, no RST",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = "224.0.0.1" }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 source 239.255.255.250 (multicast): no token, no RST",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = "239.255.255.250" },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 source 255.255.255.255 (broadcast): no token, no RST",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = "255.255.255.255" },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 source 0.0.0.0 (unspecified): no token, no RST",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = "0.0.0.0" }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 source 127.0.0.1 (loopback): no token, no RST",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = "127.0.0.1" }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 destination 224.0.0.251 (multicast): no token, no RST",
	  .pkt = { V4, .flags = TCP_SYN, .daddr = "224.0.0.251" }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 destination 255.255.255.255 (broadcast): no token, no RST",
	  .pkt = { V4, .flags = TCP_SYN, .daddr = "255.255.255.255" },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv6 source ff02::1 (multicast): no token, no RST",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = "ff02::1" }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, MARTIAN },
	{ "RST refused: IPv6 source :: (unspecified)",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = "::" }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, RST_REFUSED(SHEDD_SHEDDABLE) },
	{ "kernel drops: IPv6 source ::1 from a device other than lo: no token, no RST",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = "::1" }, .cfg = &cfg_rst, .on_dummy = 1,
	  .rate = &rate_empty, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv6 destination ::1 from a device other than lo: no token, no RST",
	  .pkt = { V6, .flags = TCP_SYN, .daddr = "::1" }, .cfg = &cfg_rst, .on_dummy = 1,
	  .rate = &rate_empty, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv6 destination ::1 from a device other than lo, verified class: no cookie",
	  .pkt = { V6, .flags = TCP_SYN, .daddr = "::1", .tcp_opts = 1 }, .cfg = &cfg_vtc,
	  .on_dummy = 1, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 LAND (source = destination): no token, no RST",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = PKT_V4_SERVER }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 LAND, source port = destination port: no token",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = PKT_V4_SERVER, .sport = PROTECTED_PORT },
	  .cfg = &cfg_rst, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 destination 0.0.0.0: no token, no RST",
	  .pkt = { V4, .flags = TCP_SYN, .daddr = "0.0.0.0" }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 destination 127.0.0.1: no token, no RST",
	  .pkt = { V4, .flags = TCP_SYN, .daddr = "127.0.0.1" }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 subnet broadcast destination: no token, no RST",
	  .pkt = { V4, .flags = TCP_SYN, .daddr = BRD4 }, .cfg = &cfg_rst, .brd = 1,
	  .rate = &rate_empty, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 subnet broadcast destination, verified class: no cookie",
	  .pkt = { V4, .flags = TCP_SYN, .daddr = BRD4, .tcp_opts = 1 }, .cfg = &cfg_vtc,
	  .brd = 1, .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv4 SYN with a wrong TCP checksum: no token, no RST",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_tcp_csum, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, COUNTED(syn_bad_csum) },
	{ "kernel drops: IPv6 SYN with options and a wrong TCP checksum: no token",
	  .pkt = { V6, .flags = TCP_SYN, .tcp_opts = 1 }, .mangle = mangle_tcp_csum,
	  .verdict = XDP_DROP, COUNTED(syn_bad_csum) },
	{ "kernel drops: IPv4 SYN with data and a wrong TCP checksum, verified class: no cookie",
	  .pkt = { V4, .flags = TCP_SYN, .tcp_opts = 1, .payload_len = 7 },
	  .mangle = mangle_tcp_csum, .cfg = &cfg_vtc, .verdict = XDP_DROP,
	  COUNTED(syn_bad_csum) },
	{ "kernel drops: IPv6 SYN behind a 552-byte chain with a wrong TCP checksum: no token",
	  .pkt = { V6, .flags = TCP_SYN, CHAIN_552, .tcp_opts = 1 }, .mangle = mangle_tcp_csum,
	  .verdict = XDP_DROP, COUNTED(syn_bad_csum) },
	{ "IPv6 SYN behind a 552-byte chain, right checksum: judged",
	  .pkt = { V6, .flags = TCP_SYN, CHAIN_552, .tcp_opts = 1 },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "IPv4 SYN with 7 bytes of data, right checksum: judged",
	  .pkt = { V4, .flags = TCP_SYN, .tcp_opts = 1, .payload_len = 7 },
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "IPv4 SYN whose checksum is left to offload (a local sender): judged",
	  .pkt = { V4, .flags = TCP_SYN, .tcp_opts = 1 }, .mangle = mangle_tcp_csum_partial,
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "IPv6 SYN whose checksum is left to offload (a local sender): judged",
	  .pkt = { V6, .flags = TCP_SYN }, .mangle = mangle_tcp_csum_partial,
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "RST sent: IPv4 SYN with TOS 0x2b: the RST's TOS 0x28, the kernel's",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_tos, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 54 },
	{ "RST sent: IPv6 SYN with traffic class 0x2b: the RST's 0x28, the kernel's",
	  .pkt = { V6, .flags = TCP_SYN }, .mangle = mangle_tos, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 74 },
	{ "RST sent: IPv4 class E source 240.0.0.1, unicast to Linux",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = "240.0.0.1" }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 54 },
	{ "RST sent: IPv6 source ::1 on lo, where the kernel takes it",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = "::1" }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_TX, RST_SENT(SHEDD_SHEDDABLE), .reply_len = 74 },
	/* The reverse-path check (shedd_src_route()): 198.18.1.0/25 and
	 * 2001:db8:1::/64 are routed through the dummy device the frames
	 * come in on, 198.18.1.64/26 and 2001:db8:1:1::/64 through another. */
	{ "source check: CRITICAL_PLUS client routed back where it came from: its class",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_CP }, .cfg = &cfg_src, .on_dummy = 1,
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "source check: spoofed CRITICAL_PLUS source routed elsewhere: the default class",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_CP_ELSEWHERE }, .cfg = &cfg_src,
	  .on_dummy = 1, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .src_failed = 1 } },
	{ "source check: spoofed CRITICAL_PLUS source, empty buckets: shed as the default class",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_CP_ELSEWHERE }, .cfg = &cfg_src,
	  .on_dummy = 1, .rate = &rate_empty, .verdict = XDP_DROP,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .dropped = 1 },
		     .src_failed = 1 } },
	{ "source check: spoofed source in a verified default class: charged, no cookie",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_CP_ELSEWHERE, .tcp_opts = 1 },
	  .cfg = &cfg_vtc_src, .on_dummy = 1, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .src_failed = 1 } },
	{ "source check: IPv6 CRITICAL client routed back where it came from: its class",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = V6_CRIT }, .cfg = &cfg_src, .on_dummy = 1,
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL) },
	{ "source check: spoofed IPv6 CRITICAL source routed elsewhere: the default class",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = V6_CRIT_ELSEWHERE }, .cfg = &cfg_src,
	  .on_dummy = 1, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .src_failed = 1 } },
	{ "source check: CRITICAL_PLUS source with a local address: the default class",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_CP_LOCAL }, .cfg = &cfg_src,
	  .on_dummy = 1, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .src_failed = 1 } },
	{ "source check: the default class is not looked up",
	  .pkt = { V4, .flags = TCP_SYN }, .cfg = &cfg_src, .on_dummy = 1,
	  .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "source check off: spoofed CRITICAL_PLUS source keeps its class",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_CP_ELSEWHERE }, .on_dummy = 1,
	  .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "source check: spoofed IPv6 CRITICAL source behind a 552-byte chain: the default class",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = V6_CRIT_ELSEWHERE, CHAIN_552 }, .cfg = &cfg_src,
	  .on_dummy = 1, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .src_failed = 1 } },
	{ "source check: spoofed IPv6 CRITICAL source behind a 2608-byte chain: the default class",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = V6_CRIT_ELSEWHERE, CHAIN_2608 },
	  .cfg = &cfg_src, .on_dummy = 1, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .src_failed = 1 } },
	{ "source check: IPv6 CRITICAL client behind a 552-byte chain routed back: its class",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = V6_CRIT, CHAIN_552 }, .cfg = &cfg_src,
	  .on_dummy = 1, .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL) },
	{ "source check: forwarding off on the device: not checked, its class",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_CP_ELSEWHERE }, .cfg = &cfg_src,
	  .on_dummy = 2, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_CRITICAL_PLUS] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .src_unchecked = 1 } },
	{ "kernel drops: IPv6 source ::ffff:198.18.0.10 (v4-mapped): no token, no RST",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = "::ffff:198.18.0.10" },
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_DROP, MARTIAN },
	{ "kernel drops: IPv6 destination ff02::1 (multicast): no token, no RST",
	  .pkt = { V6, .flags = TCP_SYN, .daddr = "ff02::1" }, .cfg = &cfg_rst,
	  .rate = &rate_empty, .verdict = XDP_DROP, MARTIAN },
	{ "RST refused: destination MAC ff:ff:ff:ff:ff:ff",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_dst_mac_bcast,
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_DROP, RST_REFUSED(SHEDD_SHEDDABLE) },
	{ "RST refused: destination MAC 01:00:5e:00:00:fb (IPv4 multicast)",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_dst_mac_mcast4,
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_DROP, RST_REFUSED(SHEDD_SHEDDABLE) },
	{ "RST refused: IPv6 SYN to MAC 33:33:00:00:00:01 (IPv6 multicast)",
	  .pkt = { V6, .flags = TCP_SYN }, .mangle = mangle_dst_mac_mcast6,
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_DROP, RST_REFUSED(SHEDD_SHEDDABLE) },
	{ "RST refused: destination MAC of another host",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_dst_mac_other,
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_DROP, RST_REFUSED(SHEDD_SHEDDABLE) },
	{ "RST refused: source MAC ff:ff:ff:ff:ff:ff",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_src_mac_bcast,
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_DROP, RST_REFUSED(SHEDD_SHEDDABLE) },
	{ "RST refused: source MAC 01:00:5e:00:00:01 (multicast)",
	  .pkt = { V6, .flags = TCP_SYN }, .mangle = mangle_src_mac_mcast,
	  .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_DROP, RST_REFUSED(SHEDD_SHEDDABLE) },
	{ "RST refused: no MAC configured, a SYN to MAC 00:00:00:00:00:00",
	  .pkt = { V4, .flags = TCP_SYN }, .mangle = mangle_dst_mac_zero,
	  .cfg = &cfg_rst_no_mac, .rate = &rate_empty,
	  .verdict = XDP_DROP, RST_REFUSED(SHEDD_SHEDDABLE) },
	{ "RST refused: no MAC configured for this host",
	  .pkt = { V4, .flags = TCP_SYN }, .cfg = &cfg_rst_no_mac,
	  .rate = &rate_empty, .verdict = XDP_DROP, RST_REFUSED(SHEDD_SHEDDABLE) },
	{ "RST, XDP_TX blocked: an IPv4 SYN of an empty bucket is dropped, unanswered",
	  .pkt = { V4, .flags = TCP_SYN }, .cfg = &cfg_rst_blocked,
	  .rate = &rate_empty, .verdict = XDP_DROP, RST_REFUSED(SHEDD_SHEDDABLE) },
	{ "RST, XDP_TX blocked: an IPv6 SYN of an empty bucket is dropped, unanswered",
	  .pkt = { V6, .flags = TCP_SYN }, .cfg = &cfg_rst_blocked,
	  .rate = &rate_empty, .verdict = XDP_DROP, RST_REFUSED(SHEDD_SHEDDABLE) },
	{ "RST configured: an ACK still passes untouched",
	  .pkt = { V4, .flags = TCP_ACK }, .cfg = &cfg_rst, .rate = &rate_empty,
	  .verdict = XDP_PASS, COUNTED(non_syn) },

	/* Verified admission: a class without it is judged as before, and
	 * only a plain ACK to a protected port of a verified class is looked
	 * up in the socket table. */
	{ "verify on elsewhere: CRITICAL_PLUS SYN charged and admitted as before",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_CP, .tcp_opts = 1 },
	  .cfg = &cfg_vtc, .verdict = XDP_PASS, ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "verify on elsewhere: CRITICAL_PLUS SYN, empty bucket: dropped as before",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_CP, .tcp_opts = 1 },
	  .cfg = &cfg_vtc, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_CRITICAL_PLUS) },
	{ "verify on elsewhere: IPv6 CRITICAL SYN, empty bucket: dropped as before",
	  .pkt = { V6, .flags = TCP_SYN, .saddr = V6_CRIT, .tcp_opts = 1 },
	  .cfg = &cfg_vkernel, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_CRITICAL) },
	{ "verify always, XDP_TX blocked: SHEDDABLE SYN charged and admitted, no cookie",
	  .pkt = { V4, .flags = TCP_SYN, .tcp_opts = 1 },
	  .cfg = &cfg_vtc_blocked, .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE) },
	{ "verify always, XDP_TX blocked: SHEDDABLE SYN, empty bucket: dropped, no cookie",
	  .pkt = { V4, .flags = TCP_SYN, .tcp_opts = 1 },
	  .cfg = &cfg_vtc_blocked, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE) },
	{ "verify shedding, XDP_TX blocked: SHEDDABLE_PLUS SYN, empty bucket: dropped",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_SP, .tcp_opts = 1 },
	  .cfg = &cfg_vtc_blocked, .rate = &rate_empty,
	  .verdict = XDP_DROP, DROPPED(SHEDD_SHEDDABLE_PLUS) },
	{ "verify, XDP_TX blocked: an ACK of a verified class is not looked up",
	  .pkt = { V4, .flags = TCP_ACK }, .cfg = &cfg_vtc_blocked,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "verify shedding, not shedding: SHEDDABLE_PLUS SYN charged and admitted",
	  .pkt = { V4, .flags = TCP_SYN, .saddr = V4_SP, .tcp_opts = 1 },
	  .cfg = &cfg_vtc, .verdict = XDP_PASS, ADMITTED(SHEDD_SHEDDABLE_PLUS) },
	{ "verify: SYN+FIN in a verified class passes uncharged, unanswered",
	  .pkt = { V4, .flags = TCP_SYN | TCP_FIN }, .cfg = &cfg_vtc,
	  .verdict = XDP_PASS, COUNTED(bad_syn) },
	{ "verify: ACK to an unprotected port is not looked up",
	  .pkt = { V4, .flags = TCP_ACK, .dport = OTHER_PORT }, .cfg = &cfg_vtc,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "verify: IPv6 ACK to an unprotected port is not looked up",
	  .pkt = { V6, .flags = TCP_ACK, .dport = OTHER_PORT }, .cfg = &cfg_vtc,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "verify: ACK from a class without verification is not looked up",
	  .pkt = { V4, .flags = TCP_ACK, .saddr = V4_CP }, .cfg = &cfg_vtc,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "verify: IPv6 ACK from a class without verification is not looked up",
	  .pkt = { V6, .flags = TCP_ACK, .saddr = V6_CRIT }, .cfg = &cfg_vkernel,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "verify: RST+ACK is not looked up",
	  .pkt = { V4, .flags = TCP_RST | TCP_ACK }, .cfg = &cfg_vtc,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "verify: SYN+ACK is not looked up",
	  .pkt = { V4, .flags = TCP_SYN | TCP_ACK }, .cfg = &cfg_vtc,
	  .verdict = XDP_PASS, COUNTED(non_syn) },
	{ "verify: IPv4 ACK to a protected port nobody listens on: passed",
	  .pkt = { V4, .flags = TCP_ACK, .dport = NOLISTEN_PORT }, .cfg = &cfg_vtc,
	  .verdict = XDP_PASS, .delta = { .ack_probed = 1 }, .any = { .non_syn = 1 } },
	{ "verify: IPv6 ACK to a protected port nobody listens on: passed",
	  .pkt = { V6, .flags = TCP_ACK, .dport = NOLISTEN_PORT, .tcp_opts = 1 },
	  .cfg = &cfg_vtc,
	  .verdict = XDP_PASS, .delta = { .ack_probed = 1 }, .any = { .non_syn = 1 } },
	/* The lookup of a SYN as it arrives misses the socket that a NAT
	 * redirect, TPROXY or IPVS gives it after XDP, just as it misses on a
	 * closed port: either way the SYN is judged as in an unverified
	 * class, never passed uncharged nor dropped for want of a listener. */
	{ "verify: IPv4 SYN of a verified class, no listener found: no cookie, charged",
	  .pkt = { V4, .flags = TCP_SYN, .dport = NOLISTEN_PORT, .tcp_opts = 1 },
	  .cfg = &cfg_vtc, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .syn_no_listener = 1 } },
	{ "verify: IPv6 SYN of a verified class, no listener found: no cookie, charged",
	  .pkt = { V6, .flags = TCP_SYN, .dport = NOLISTEN_PORT, .tcp_opts = 1 },
	  .cfg = &cfg_vkernel, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .syn_no_listener = 1 } },
	{ "verify: SYN of a verified class, no listener found, no token: shed",
	  .pkt = { V4, .flags = TCP_SYN, .dport = NOLISTEN_PORT, .tcp_opts = 1 },
	  .cfg = &cfg_vtc, .rate = &rate_empty, .verdict = XDP_DROP,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .dropped = 1 },
		     .syn_no_listener = 1 } },
	{ "verify: IPv6 SYN of a verified class, no listener found, no token: shed",
	  .pkt = { V6, .flags = TCP_SYN, .dport = NOLISTEN_PORT, .tcp_opts = 1 },
	  .cfg = &cfg_vtc, .rate = &rate_empty, .verdict = XDP_DROP,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .dropped = 1 },
		     .syn_no_listener = 1 } },
	{ "verify: SYN of a verified class, no listener found, RST budget spent: its token admits it",
	  .pkt = { V4, .flags = TCP_SYN, .dport = NOLISTEN_PORT, .tcp_opts = 1 },
	  .cfg = &cfg_vtc_norst, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .syn_no_listener = 1 } },
	{ "verify: 802.1Q IPv4 data ACK to a protected port nobody listens on: passed",
	  .pkt = { V4, .flags = TCP_ACK | TCP_PSH, .vlans = 1, .payload_len = 100,
		   .dport = NOLISTEN_PORT },
	  .cfg = &cfg_vtc, .rate = &rate_empty,
	  .verdict = XDP_PASS, .delta = { .ack_probed = 1 }, .any = { .non_syn = 1 } },
};

static int case_setup(void **state)
{
	const struct xdp_case *c = *state;
	struct shedd_broadcast b = { .addr = { BRD4_BE } };
	__u32 zero = 0;

	if (reset_maps(c->cfg, c->rate))
		return -1;
	if (c->brd && bpf_map__update_elem(skel->maps.broadcast, &zero, sizeof(zero), &b,
					   sizeof(b), BPF_ANY))
		return -1;
	return 0;
}

static void run_case(void **state)
{
	const struct xdp_case *c = *state;
	struct shedd_stats before, after, want = c->delta;
	struct xdp_run r;
	struct pkt p;

	pkt_build(&p, &c->pkt);
	if (c->mangle)
		c->mangle(&p);
	read_stats(&before);
	run_xdp_on(c->name, p.data, p.len, c->on_dummy ? dummy_ifindex[c->on_dummy - 1] : 0, &r);
	read_stats(&after);

	expect_verdict(c->name, r.verdict, c->verdict);
	want.packets = 1;
	expect_delta_but(c->name, &before, &after, &want, &c->any);
	if (c->verdict == XDP_TX)
		expect_rst(c->name, &p, &r, c->reply_len);
	else
		expect(r.out_len == p.len && memcmp(r.out, p.data, p.len) == 0,
		       c->name, "a frame that is not answered must be left as it was");
}

/* ---- table 2: every frame cut short --------------------------------------- */

/* Cut @pkt at every length from the Ethernet header up: every cut frame
 * is malformed, as its headers are cut or its IP datagram is longer than
 * the frame (the kernel drops it: a TCP header there is never delivered);
 * only the whole frame gets @full. */
struct cut_case {
	const char *name;
	struct pkt_spec pkt;
	struct shedd_stats full;
};

static const struct cut_case cut_cases[] = {
	{ "cuts: IPv4 SYN", .pkt = { V4, .flags = TCP_SYN },
	  .full = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 } } },
	{ "cuts: IPv4 SYN with IP options, TCP options and data",
	  .pkt = { V4, .flags = TCP_SYN, .ip_opt_len = 12, .tcp_opts = 1,
		   .payload_len = 4, .saddr = V4_CP },
	  .full = { .cls[SHEDD_CRITICAL_PLUS] = { .syn = 1, .charged = 1, .admitted = 1 } } },
	{ "cuts: 802.1ad+802.1Q IPv4 SYN with TCP options",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 2, .tcp_opts = 1 },
	  .full = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 } } },
	{ "cuts: IPv4 ACK", .pkt = { V4, .flags = TCP_ACK },
	  .full = { .non_syn = 1 } },
	{ "cuts: IPv6 SYN", .pkt = { V6, .flags = TCP_SYN },
	  .full = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 } } },
	{ "cuts: IPv6 SYN with extension headers and TCP options",
	  .pkt = { V6, .flags = TCP_SYN, EXT3, .tcp_opts = 1, .saddr = V6_CRIT },
	  .full = { .cls[SHEDD_CRITICAL] = { .syn = 1, .charged = 1, .admitted = 1 } } },
	{ "cuts: IPv4 UDP with IP options",
	  .pkt = { V4, .l4 = IPPROTO_UDP, .ip_opt_len = 8, .payload_len = 8 },
	  .full = { .non_tcp = 1 } },
	{ "cuts: IPv4 first fragment of a SYN with IP options",
	  .pkt = { V4, .flags = TCP_SYN, .ip_opt_len = 8, .frag = PKT_IP_MF },
	  .full = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		    .frag_judged = 1 } },
	{ "cuts: IPv4 TCP fragment at offset 3",
	  .pkt = { V4, .flags = TCP_ACK, .frag = PKT_IP_MF | 3 },
	  .full = { .fragment = 1 } },
	{ "cuts: IPv6 UDP after hop-by-hop",
	  .pkt = { V6, .l4 = IPPROTO_UDP, .nr_ext = 1, .ext = { IPPROTO_HOPOPTS } },
	  .full = { .non_tcp = 1 } },
	{ "cuts: IPv6 first fragment of a SYN after hop-by-hop and routing",
	  .pkt = { V6, .flags = TCP_SYN, .nr_ext = 3, .frag = PKT_IP6_MF,
		   .ext = { IPPROTO_HOPOPTS, IPPROTO_ROUTING, IPPROTO_FRAGMENT } },
	  .full = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		    .frag_judged = 1 } },
	{ "cuts: IPv6 TCP fragment at offset 8 after hop-by-hop",
	  .pkt = { V6, .flags = TCP_ACK, .nr_ext = 2, .frag = 8 << 3,
		   .ext = { IPPROTO_HOPOPTS, IPPROTO_FRAGMENT } },
	  .full = { .fragment = 1 } },
	{ "cuts: 802.1Q IPv6 SYN after AH",
	  .pkt = { V6, .flags = TCP_SYN, .vlans = 1, .nr_ext = 1,
		   .ext = { IPPROTO_AH } },
	  .full = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 } } },
};

static int base_setup(void **state)
{
	(void)state;
	return reset_maps(NULL, NULL);
}

static void run_cuts(void **state)
{
	const struct cut_case *c = *state;
	struct shedd_stats before, after, want;
	char name[256], where[96];
	struct xdp_run r;
	size_t len;
	struct pkt p;

	pkt_build(&p, &c->pkt);
	for (len = ETH_HLEN; len <= p.len; len++) {
		pkt_describe_cut(&p, len, where, sizeof(where));
		snprintf(name, sizeof(name), "%s cut to %zu bytes (%s)", c->name,
			 len, where);
		if (len < p.len)
			want = (struct shedd_stats){ .malformed = 1 };
		else
			want = c->full;
		want.packets = 1;

		read_stats(&before);
		run_xdp(name, p.data, len, &r);
		read_stats(&after);
		expect_verdict(name, r.verdict, XDP_PASS);
		expect_delta(name, &before, &after, &want);
	}
}

/* ---- table 3: tunnels that end here --------------------------------------- */

/* Every kind ends here, VXLAN and Geneve on their IANA ports; tun_local
 * holds PKT_V4_SERVER and PKT_V6_SERVER (group_setup()). */
static const struct shedd_tun_config tunc_all = {
	.kinds = SHEDD_TUN_IPIP | SHEDD_TUN_SIT | SHEDD_TUN_4IN6 | SHEDD_TUN_6IN6 |
		 SHEDD_TUN_GRE | SHEDD_TUN_GRETAP | SHEDD_TUN_GRE6 | SHEDD_TUN_GRETAP6,
	.udp_port = { TUNP_VXLAN_PORT, TUNP_GENEVE_PORT, TUNP_FOU4_PORT, TUNP_FOU41_PORT,
		      TUNP_FOU6_PORT, TUNP_FOU47_PORT, TUNP_GUE_PORT },
	.udp_kind = { SHEDD_UDP_VXLAN, SHEDD_UDP_GENEVE, SHEDD_UDP_FOU, SHEDD_UDP_FOU,
		      SHEDD_UDP_FOU, SHEDD_UDP_FOU, SHEDD_UDP_GUE },
	.udp_proto = { 0, 0, IPPROTO_IPIP, IPPROTO_IPV6, IPPROTO_TCP, IPPROTO_GRE, 0 },
	/* ip fou add port 5555 ipproto 4: an IPv4 socket only. */
	.udp_family = { 0, 0, 4, 0, 0, 0, 0 },
};
/* Only gre devices: GRE-TAP frames are not decapsulated here. */
static const struct shedd_tun_config tunc_gre_only = { .kinds = SHEDD_TUN_GRE };
/* No tunnel ends here. */
static const struct shedd_tun_config tunc_none = { 0 };
/* Verified classes and RSTs: an inner SYN is still judged by rate only. */
static const struct shedd_config cfg_tun_verify = { VERIFY_CFG(SHEDD_HANDOFF_TC, 1),
	.reject = { SHEDD_REJECT_RST, SHEDD_REJECT_RST, SHEDD_REJECT_RST, SHEDD_REJECT_RST } };
#define TUN_NOT_LOCAL_V4 "198.19.0.99"

/* A tunnel device the daemon read, as tun_devs holds it. */
struct tun_dev_spec {
	__u8 kind;          /* enum shedd_tdev_kind; 0 ends a list */
	__u8 flags;         /* TUN_KEY_* */
	__u16 port;
	__u32 id;           /* VNI, or the GRE key as on the wire */
	const char *local;  /* NULL: any */
	const char *remote; /* NULL: any */
	int dev;            /* the device: 1 DUMMY_DEV[0], 2 DUMMY_DEV[1]; 0 lo */
};

struct tun_case {
	const char *name;
	struct tun_pkt_spec tun;
	struct pkt_spec in;
	const struct shedd_config *cfg;      /* NULL: cfg_base */
	const struct shedd_tun_config *tc;   /* NULL: tunc_all */
	const struct shedd_class_rate *rate; /* NULL: rate_plenty */
	__u32 verdict;
	struct shedd_stats delta;            /* besides packets */
	struct shedd_tun_stats tdelta;       /* tun_stats */
	size_t cut_l4;   /* keep only this many bytes after the outer IP
			  * header(s), the outer lengths set to match */
	void (*mangle)(struct pkt *p); /* after the build */
	/* The devices read (NULL: none), and the kinds matched against
	 * them (SHEDD_TUN_MATCH bits of tun_config.match; the shapes are
	 * those of the devices). */
	const struct tun_dev_spec *devs;
	__u32 match;
	__u64 no_device;                     /* tun_checks.no_device */
};

/* The inner TCP header's checksum made wrong (a header without options,
 * ending at hdr_end), the outer UDP checksum then made right again. */
static void mangle_inner_tcp_csum(struct pkt *p)
{
	p->data[p->hdr_end - sizeof(struct pkt_tcp) + offsetof(struct pkt_tcp, check)] ^= 0x5a;
	pkt_finish(p);
}

/* The inner IPv4 datagram of an IPIP packet says its TCP segment is 10
 * bytes long; the frame holds all 20 of the header. */
static void mangle_inner_tcp10(struct pkt *p)
{
	struct pkt_ipv4 *ip = (void *)(p->data + p->l4_off);

	ip->tot_len = htons(20 + 10);
	ip->check = htons(pkt_ipv4_csum(ip, sizeof(*ip)));
}

/* The outer IPv4 datagram ends 4 bytes before the frame, inside the
 * inner TCP header: the kernel trims the frame to it. */
static void mangle_outer_short(struct pkt *p)
{
	struct pkt_ipv4 *ip = (void *)(p->data + p->l3_off);

	ip->tot_len = htons(ntohs(ip->tot_len) - 4);
	ip->check = htons(pkt_ipv4_csum(ip, sizeof(*ip)));
}

#define TUN_ADMITTED(c) .verdict = XDP_PASS, .delta = { .cls[c] = { .syn = 1, .charged = 1, \
	.admitted = 1 } }, .tdelta = { .decap = 1, .judged = 1 }
#define TUN_DROPPED(c) .verdict = XDP_DROP, .delta = { .cls[c] = { .syn = 1, .charged = 1, \
	.dropped = 1 } }, .tdelta = { .decap = 1, .judged = 1 }
#define TUN_NOT_OURS .verdict = XDP_PASS, .delta = { .non_tcp = 1 }
#define TUN_NO_DEVICE .verdict = XDP_PASS, .delta = { .non_tcp = 1 }, .no_device = 1
#define MATCH_VXLAN SHEDD_TUN_MATCH(SHEDD_TDEV_VXLAN)
#define MATCH_GENEVE SHEDD_TUN_MATCH(SHEDD_TDEV_GENEVE)
#define MATCH_GRE SHEDD_TUN_MATCH(SHEDD_TDEV_GRE)
#define MATCH_GRETAP SHEDD_TUN_MATCH(SHEDD_TDEV_GRETAP)
#define MATCH_IPIP SHEDD_TUN_MATCH(SHEDD_TDEV_IPIP)
#define MATCH_SIT SHEDD_TUN_MATCH(SHEDD_TDEV_SIT)
#define MATCH_IP6TNL SHEDD_TUN_MATCH(SHEDD_TDEV_IP6TNL)
#define TUN_OTHER_REMOTE "198.18.0.99"
/* The VNI of the test's VXLAN and Geneve headers is 42; its GRE key
 * 07 07 07 07 (tun_packets.h). The devices take the frames in on
 * DUMMY_DEV[0], which routes 198.18.1.0/25 and 2001:db8:1::/64. */
static const struct tun_dev_spec devs_vxlan42[] = {
	{ SHEDD_TDEV_VXLAN, 0, TUNP_VXLAN_PORT, 42, NULL, NULL, 1 }, { 0 } };
static const struct tun_dev_spec devs_vxlan7[] = {
	{ SHEDD_TDEV_VXLAN, 0, TUNP_VXLAN_PORT, 7, NULL, NULL, 1 }, { 0 } };
static const struct tun_dev_spec devs_vxlan42_8472[] = {
	{ SHEDD_TDEV_VXLAN, 0, 8472, 42, NULL, NULL, 1 }, { 0 } };
static const struct tun_dev_spec devs_vxlan_md[] = {
	{ SHEDD_TDEV_VXLAN, TUN_KEY_ANY, TUNP_VXLAN_PORT, 0, NULL, NULL, 1 }, { 0 } };
static const struct tun_dev_spec devs_geneve_client[] = {
	{ SHEDD_TDEV_GENEVE, 0, TUNP_GENEVE_PORT, 42, NULL, PKT_V4_CLIENT, 1 }, { 0 } };
static const struct tun_dev_spec devs_geneve_other[] = {
	{ SHEDD_TDEV_GENEVE, 0, TUNP_GENEVE_PORT, 42, NULL, TUN_OTHER_REMOTE, 1 }, { 0 } };
static const struct tun_dev_spec devs_gre_key[] = {
	{ SHEDD_TDEV_GRE, TUN_KEY_KEYED, 0, 0x07070707, PKT_V4_SERVER, PKT_V4_CLIENT, 1 }, { 0 } };
static const struct tun_dev_spec devs_gre_key5[] = {
	{ SHEDD_TDEV_GRE, TUN_KEY_KEYED, 0, 5, NULL, NULL, 1 }, { 0 } };
static const struct tun_dev_spec devs_gre_local[] = {
	{ SHEDD_TDEV_GRE, 0, 0, 0, PKT_V4_SERVER, NULL, 1 }, { 0 } };
static const struct tun_dev_spec devs_gre_other_remote[] = {
	{ SHEDD_TDEV_GRE, 0, 0, 0, NULL, TUN_OTHER_REMOTE, 1 }, { 0 } };
static const struct tun_dev_spec devs_ipip_client[] = {
	{ SHEDD_TDEV_IPIP, 0, 0, 0, PKT_V4_SERVER, PKT_V4_CLIENT, 1 }, { 0 } };
static const struct tun_dev_spec devs_ipip_other[] = {
	{ SHEDD_TDEV_IPIP, 0, 0, 0, PKT_V4_SERVER, TUN_OTHER_REMOTE, 1 }, { 0 } };
/* tunl0 up, as Calico leaves it: every IPv4-in-IPv4 packet. */
static const struct tun_dev_spec devs_ipip_fallback[] = {
	{ SHEDD_TDEV_IPIP, TUN_KEY_ANY, 0, 0, NULL, NULL, 1 },
	{ SHEDD_TDEV_IPIP, 0, 0, 0, PKT_V4_SERVER, TUN_OTHER_REMOTE, 1 }, { 0 } };
static const struct tun_dev_spec devs_sit_other[] = {
	{ SHEDD_TDEV_SIT, 0, 0, 0, NULL, TUN_OTHER_REMOTE, 1 }, { 0 } };
static const struct tun_dev_spec devs_ip6tnl_client[] = {
	{ SHEDD_TDEV_IP6TNL, 0, 0, 0, NULL, PKT_V6_CLIENT, 1 }, { 0 } };
static const struct tun_dev_spec devs_ip6tnl_other[] = {
	{ SHEDD_TDEV_IP6TNL, 0, 0, 0, PKT_V6_SERVER, "2001:db8::99", 1 }, { 0 } };
#define TUN_SYN4 { V4, .flags = TCP_SYN }
#define TUN_SYN6 { V6, .flags = TCP_SYN }
#define GRE_CKS (TUNP_GRE_C | TUNP_GRE_K | TUNP_GRE_S)

static const struct tun_case tun_cases[] = {
	/* Each kind, its inner SYN judged. */
	{ "tunnel: IPIP SYN is judged", .tun = { .kind = TUNP_IPIP }, .in = TUN_SYN4,
	  TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel: IPIP SYN is classified by its inner source",
	  .tun = { .kind = TUNP_IPIP }, .in = { V4, .flags = TCP_SYN, .saddr = V4_CP },
	  TUN_ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "tunnel: IPIP SYN, no token: the outer packet is dropped", .tun = { .kind = TUNP_IPIP }, .in = TUN_SYN4,
	  .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: SIT (IPv6 in IPv4) SYN is judged", .tun = { .kind = TUNP_SIT },
	  .in = { V6, .flags = TCP_SYN, .saddr = V6_CRIT }, TUN_ADMITTED(SHEDD_CRITICAL) },
	{ "tunnel: IPv4 in IPv6 SYN is judged", .tun = { .kind = TUNP_4IN6 }, .in = TUN_SYN4,
	  TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel: IP6IP6 SYN is judged", .tun = { .kind = TUNP_6IN6 }, .in = TUN_SYN6,
	  .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	/* Behind an outer chain Linux walks and skips: a routing header of
	 * an unknown type with Segments Left 0, destination options. */
	{ "tunnel: IPv4 in IPv6 behind a 552-byte outer chain: SYN is judged",
	  .tun = { .kind = TUNP_4IN6, .outer_rh_len = 264, .outer_do_len = 248 },
	  .in = TUN_SYN4, .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: VXLAN over IPv6 behind a 552-byte outer chain: SYN is judged",
	  .tun = { .kind = TUNP_VXLAN6, .outer_rh_len = 264, .outer_do_len = 248 },
	  .in = { V4, .flags = TCP_SYN, .saddr = V4_CP }, TUN_ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "tunnel: IP6IP6 behind a 2608-byte outer chain: SYN is judged",
	  .tun = { .kind = TUNP_6IN6, .outer_rh_len = 2048, .outer_do_len = 520 },
	  .in = TUN_SYN6, .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: Geneve over IPv6 with 252 bytes of options behind a 1584-byte chain: judged",
	  .tun = { .kind = TUNP_GENEVE6, .geneve_opt = 252, .outer_rh_len = 1024,
		   .outer_do_len = 520 },
	  .in = { V6, .flags = TCP_SYN, .vlans = 2, CHAIN_552 }, .rate = &rate_empty,
	  TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: GRE SYN is judged", .tun = { .kind = TUNP_GRE }, .in = TUN_SYN4, .rate = &rate_empty,
	  TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: GRE with checksum, key and sequence number: SYN is judged",
	  .tun = { .kind = TUNP_GRE, .gre_flags = GRE_CKS }, .in = { V4, .flags = TCP_SYN, .saddr = V4_CP },
	  TUN_ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "tunnel: GRE with a key only: SYN is judged", .tun = { .kind = TUNP_GRE, .gre_flags = TUNP_GRE_K },
	  .in = TUN_SYN6, .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: GRE-TAP SYN (inner Ethernet, 802.1Q tag) is judged", .tun = { .kind = TUNP_GRETAP },
	  .in = { V4, .flags = TCP_SYN, .vlans = 1 }, .rate = &rate_empty,
	  TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: ip6gre SYN is judged", .tun = { .kind = TUNP_GRE6, .gre_flags = TUNP_GRE_K }, .in = TUN_SYN4,
	  .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: ip6gretap SYN is judged", .tun = { .kind = TUNP_GRETAP6 }, .in = TUN_SYN6,
	  TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel: VXLAN SYN is judged", .tun = { .kind = TUNP_VXLAN }, .in = TUN_SYN4, .rate = &rate_empty,
	  TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: VXLAN SYN with an inner 802.1Q tag is judged", .tun = { .kind = TUNP_VXLAN },
	  .in = { V4, .flags = TCP_SYN, .vlans = 1, .saddr = V4_CP },
	  TUN_ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "tunnel: VXLAN over IPv6, inner IPv6 SYN is judged", .tun = { .kind = TUNP_VXLAN6 }, .in = TUN_SYN6,
	  .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: Geneve SYN is judged", .tun = { .kind = TUNP_GENEVE }, .in = TUN_SYN4, .rate = &rate_empty,
	  TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: Geneve with 8 bytes of options: SYN is judged",
	  .tun = { .kind = TUNP_GENEVE, .geneve_opt = 8 }, .in = TUN_SYN4, .rate = &rate_empty,
	  TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: Geneve with 252 bytes of options (the most): SYN is judged",
	  .tun = { .kind = TUNP_GENEVE6, .geneve_opt = 252 }, .in = TUN_SYN6, .rate = &rate_empty,
	  TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: Geneve carrying IPv4 itself: SYN is judged",
	  .tun = { .kind = TUNP_GENEVE, .geneve_proto = ETH_P_IP }, .in = TUN_SYN4, .rate = &rate_empty,
	  TUN_DROPPED(SHEDD_SHEDDABLE) },
	/* FOU and GUE (net/ipv4/fou_core.c): the payload goes to the
	 * protocol the port or the GUE header names. */
	{ "tunnel: FOU ipproto 4 SYN is judged", .tun = { .kind = TUNP_FOU }, .in = TUN_SYN4,
	  .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: FOU ipproto 4 SYN is classified by its inner source", .tun = { .kind = TUNP_FOU },
	  .in = { V4, .flags = TCP_SYN, .saddr = V4_CP }, TUN_ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "tunnel: FOU ipproto 41 SYN is judged", .tun = { .kind = TUNP_FOU }, .in = TUN_SYN6,
	  .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: FOU ipproto 41 over IPv6 SYN is judged", .tun = { .kind = TUNP_FOU6 },
	  .in = { V6, .flags = TCP_SYN, .saddr = V6_CRIT }, TUN_ADMITTED(SHEDD_CRITICAL) },
	{ "tunnel: FOU ipproto 47 (GRE) SYN is judged",
	  .tun = { .kind = TUNP_FOU, .fou_proto = IPPROTO_GRE }, .in = TUN_SYN4,
	  .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: FOU ipproto 6: the TCP SYN itself is judged, by the outer source",
	  .tun = { .kind = TUNP_FOU, .fou_proto = IPPROTO_TCP },
	  .in = { V4, .flags = TCP_SYN, .saddr = V4_CP }, .rate = &rate_empty,
	  TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: FOU ipproto 6 ACK passes", .tun = { .kind = TUNP_FOU, .fou_proto = IPPROTO_TCP },
	  .in = { V4, .flags = TCP_ACK }, .verdict = XDP_PASS, .delta = { .non_syn = 1 },
	  .tdelta = { .decap = 1 } },
	{ "tunnel: GUE version 0 SYN is judged", .tun = { .kind = TUNP_GUE }, .in = TUN_SYN4,
	  .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: GUE version 0 with 12 bytes of fields: SYN is judged",
	  .tun = { .kind = TUNP_GUE, .gue_opt = 12 }, .in = { V4, .flags = TCP_SYN, .saddr = V4_CP },
	  TUN_ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "tunnel: GUE version 0 with 124 bytes of fields (the most), over IPv6: SYN is judged",
	  .tun = { .kind = TUNP_GUE6, .gue_opt = 124 }, .in = TUN_SYN6, .rate = &rate_empty,
	  TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: GUE version 0 of protocol 6: the TCP SYN itself is judged",
	  .tun = { .kind = TUNP_GUE6, .fou_proto = IPPROTO_TCP }, .in = TUN_SYN6,
	  .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: GUE version 1 (IPv4 directly) SYN is judged", .tun = { .kind = TUNP_GUE, .gue_ver = 1 },
	  .in = TUN_SYN4, .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: GUE version 1 (IPv6 directly) SYN is judged", .tun = { .kind = TUNP_GUE6, .gue_ver = 1 },
	  .in = TUN_SYN6, .rate = &rate_empty, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel: GUE control message (C bit) is not data: passes",
	  .tun = { .kind = TUNP_GUE, .gue_control = 1 }, .in = TUN_SYN4, TUN_NOT_OURS },
	{ "tunnel: GUE version 2 (undefined) passes", .tun = { .kind = TUNP_GUE, .gue_ver = 2 },
	  .in = TUN_SYN4, TUN_NOT_OURS },
	{ "tunnel: GUE header on another UDP port passes",
	  .tun = { .kind = TUNP_GUE, .udp_port = 5560 }, .in = TUN_SYN4, TUN_NOT_OURS },
	{ "tunnel: FOU ipproto 4 port over IPv6 passes (its socket is IPv4 only)",
	  .tun = { .kind = TUNP_FOU6, .udp_port = TUNP_FOU4_PORT }, .in = TUN_SYN4, TUN_NOT_OURS },
	{ "tunnel: GUE with no fou port passes", .tun = { .kind = TUNP_GUE }, .in = TUN_SYN4,
	  .tc = &tunc_gre_only, TUN_NOT_OURS },
	{ "tunnel: GUE cut inside its header passes (the kernel drops it)",
	  .tun = { .kind = TUNP_GUE, .gue_opt = 8 }, .in = TUN_SYN4, .cut_l4 = 8 + 4 + 4,
	  .verdict = XDP_PASS, .delta = { .malformed = 1 } },
	{ "tunnel: GUE first fragment cut inside its fields is refused",
	  .tun = { .kind = TUNP_GUE, .gue_opt = 8, .outer_frag = PKT_IP_MF }, .in = TUN_SYN4,
	  .cut_l4 = 8 + 4 + 4, .verdict = XDP_DROP, .tdelta = { .refused = 1 } },
	{ "tunnel: FOU ipproto 6 cut inside the TCP header passes (the kernel drops it)",
	  .tun = { .kind = TUNP_FOU, .fou_proto = IPPROTO_TCP }, .in = TUN_SYN4, .cut_l4 = 8 + 12,
	  .verdict = XDP_PASS, .delta = { .malformed = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel: FOU ipproto 6 first fragment cut inside the TCP header is refused",
	  .tun = { .kind = TUNP_FOU, .fou_proto = IPPROTO_TCP, .outer_frag = PKT_IP_MF },
	  .in = TUN_SYN4, .cut_l4 = 8 + 12, .verdict = XDP_DROP,
	  .tdelta = { .decap = 1, .refused = 1 } },
	{ "tunnel: GUE of protocol 17 to a VXLAN port is refused (one level)",
	  .tun = { .kind = TUNP_GUE, .fou_proto = IPPROTO_UDP },
	  .in = { V4, .l4 = IPPROTO_UDP, .dport = TUNP_VXLAN_PORT },
	  .verdict = XDP_DROP, .tdelta = { .decap = 1, .refused = 1 } },
	{ "tunnel: GUE of protocol 17 to another port passes",
	  .tun = { .kind = TUNP_GUE, .fou_proto = IPPROTO_UDP }, .in = { V4, .l4 = IPPROTO_UDP },
	  TUN_NOT_OURS },
	/* Rate only: no cookie, no RST inside a tunnel. */
	{ "tunnel: a verified class's inner SYN is charged, no cookie", .tun = { .kind = TUNP_IPIP },
	  .in = TUN_SYN4, .cfg = &cfg_tun_verify, TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel: with --reject rst a shed inner SYN is dropped, never answered",
	  .tun = { .kind = TUNP_IPIP }, .in = TUN_SYN4, .cfg = &cfg_tun_verify, .rate = &rate_empty,
	  TUN_DROPPED(SHEDD_SHEDDABLE) },
	/* Not a tunnel that ends here: passed as before. */
	{ "tunnel: IPIP to an address not this host's passes",
	  .tun = { .kind = TUNP_IPIP, .outer_daddr = TUN_NOT_LOCAL_V4 }, .in = TUN_SYN4, TUN_NOT_OURS },
	{ "tunnel: IPIP with no ipip device passes", .tun = { .kind = TUNP_IPIP }, .in = TUN_SYN4,
	  .tc = &tunc_none, TUN_NOT_OURS },
	{ "tunnel: GRE-TAP with only gre devices passes", .tun = { .kind = TUNP_GRETAP }, .in = TUN_SYN4,
	  .tc = &tunc_gre_only, TUN_NOT_OURS },
	{ "tunnel: ip6gre with only IPv4 gre devices passes", .tun = { .kind = TUNP_GRE6 }, .in = TUN_SYN4,
	  .tc = &tunc_gre_only, TUN_NOT_OURS },
	{ "tunnel: GRE version 1 (PPTP) passes", .tun = { .kind = TUNP_GRE, .gre_flags = 1 }, .in = TUN_SYN4,
	  TUN_NOT_OURS },
	{ "tunnel: GRE with the routing bit passes", .tun = { .kind = TUNP_GRE, .gre_flags = TUNP_GRE_R },
	  .in = TUN_SYN4, TUN_NOT_OURS },
	{ "tunnel: GRE of another protocol passes", .tun = { .kind = TUNP_GRE, .gre_proto = 0x880b },
	  .in = TUN_SYN4, TUN_NOT_OURS },
	{ "tunnel: VXLAN header on another UDP port passes", .tun = { .kind = TUNP_VXLAN, .udp_port = 4790 },
	  .in = TUN_SYN4, TUN_NOT_OURS },
	{ "tunnel: VXLAN without the VNI flag passes", .tun = { .kind = TUNP_VXLAN, .vxlan_no_i = 1 },
	  .in = TUN_SYN4, TUN_NOT_OURS },
	{ "tunnel: Geneve version 1 passes", .tun = { .kind = TUNP_GENEVE, .geneve_ver = 1 }, .in = TUN_SYN4,
	  TUN_NOT_OURS },
	/* Inside: what is not a new connection passes, counted. */
	{ "tunnel: inner ACK passes", .tun = { .kind = TUNP_GRE }, .in = { V4, .flags = TCP_ACK },
	  .verdict = XDP_PASS, .delta = { .non_syn = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel: inner SYN to an unprotected port passes", .tun = { .kind = TUNP_VXLAN },
	  .in = { V4, .flags = TCP_SYN, .dport = OTHER_PORT },
	  .verdict = XDP_PASS, .delta = { .unprotected = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel: inner SYN+RST passes, no token", .tun = { .kind = TUNP_IPIP },
	  .in = { V4, .flags = TCP_SYN | TCP_RST }, .rate = &rate_empty,
	  .verdict = XDP_PASS, .delta = { .bad_syn = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel: inner UDP passes", .tun = { .kind = TUNP_6IN6 }, .in = { V6, .l4 = IPPROTO_UDP },
	  .verdict = XDP_PASS, .delta = { .non_tcp = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel: inner ARP passes", .tun = { .kind = TUNP_VXLAN }, .in = { .l3 = ETH_P_ARP },
	  .verdict = XDP_PASS, .delta = { .non_ip = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel: inner first fragment of a SYN is judged", .tun = { .kind = TUNP_IPIP },
	  .in = { V4, .flags = TCP_SYN, .frag = PKT_IP_MF }, .rate = &rate_empty,
	  .verdict = XDP_DROP, .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1,
	  .dropped = 1 }, .frag_judged = 1 }, .tdelta = { .decap = 1, .judged = 1 } },
	/* What cannot be judged inside is refused, as outside. */
	{ "tunnel: inner TCP fragment at offset 1 is refused", .tun = { .kind = TUNP_GRE },
	  .in = { V4, .flags = TCP_ACK, .frag = PKT_IP_MF | 1 },
	  .verdict = XDP_DROP, .tdelta = { .decap = 1, .refused = 1 } },
	{ "tunnel: inner IPv6 chain deeper than the walk is refused", .tun = { .kind = TUNP_SIT },
	  .in = { V6, .flags = TCP_SYN, EXT7_DST },
	  .verdict = XDP_DROP, .tdelta = { .decap = 1, .refused = 1 } },
	/* Outer fragments: the kernel reassembles, then opens the tunnel. */
	{ "tunnel: IPIP in an outer IPv4 first fragment: the inner SYN is judged",
	  .tun = { .kind = TUNP_IPIP, .outer_frag = PKT_IP_MF }, .in = TUN_SYN4,
	  .rate = &rate_empty, .verdict = XDP_DROP,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .dropped = 1 }, .frag_judged = 1 },
	  .tdelta = { .decap = 1, .judged = 1 } },
	{ "tunnel: GRE first fragment with the inner datagram going on: SYN is judged",
	  .tun = { .kind = TUNP_GRE, .outer_frag = PKT_IP_MF },
	  .in = { V4, .flags = TCP_SYN, .payload_len = 64 }, .cut_l4 = 4 + 20 + 20 + 8,
	  .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 }, .frag_judged = 1 },
	  .tdelta = { .decap = 1, .judged = 1 } },
	{ "tunnel: VXLAN in an outer IPv6 first fragment: the inner SYN is judged",
	  .tun = { .kind = TUNP_VXLAN6, .outer_frag = PKT_IP6_MF }, .in = TUN_SYN6,
	  .rate = &rate_empty, .verdict = XDP_DROP,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .dropped = 1 }, .frag_judged = 1 },
	  .tdelta = { .decap = 1, .judged = 1 } },
	{ "tunnel: GRE first fragment cut inside the GRE header is refused",
	  .tun = { .kind = TUNP_GRE, .gre_flags = GRE_CKS, .outer_frag = PKT_IP_MF },
	  .in = TUN_SYN4, .cut_l4 = 8, .verdict = XDP_DROP, .tdelta = { .refused = 1 } },
	{ "tunnel: IPIP first fragment cut inside the inner TCP header is refused",
	  .tun = { .kind = TUNP_IPIP, .outer_frag = PKT_IP_MF }, .in = TUN_SYN4,
	  .cut_l4 = 20 + 8, .verdict = XDP_DROP, .tdelta = { .decap = 1, .refused = 1 } },
	{ "tunnel: VXLAN IPv6 first fragment cut inside the inner IPv4 header is refused",
	  .tun = { .kind = TUNP_VXLAN6, .outer_frag = PKT_IP6_MF }, .in = TUN_SYN4,
	  .cut_l4 = 8 + 8 + 8 + 8, .verdict = XDP_DROP,
	  .tdelta = { .decap = 1, .refused = 1 } },
	{ "tunnel: an outer IPv4 fragment past the first passes (the first was judged)",
	  .tun = { .kind = TUNP_IPIP, .outer_frag = 5 }, .in = TUN_SYN4,
	  .verdict = XDP_PASS, .delta = { .fragment = 1 } },
	{ "tunnel: an inner SYN past the end of the outer datagram passes (the kernel drops it)",
	  .tun = { .kind = TUNP_GRE }, .in = TUN_SYN4, .mangle = mangle_outer_short,
	  .verdict = XDP_PASS, .delta = { .malformed = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel: IPIP first fragment whose inner TCP segment is shorter than its header is refused",
	  .tun = { .kind = TUNP_IPIP, .outer_frag = PKT_IP_MF }, .in = TUN_SYN4,
	  .mangle = mangle_inner_tcp10, .verdict = XDP_DROP,
	  .tdelta = { .decap = 1, .refused = 1 } },
	{ "tunnel: IPIP whose inner TCP segment is shorter than its header passes",
	  .tun = { .kind = TUNP_IPIP }, .in = TUN_SYN4, .mangle = mangle_inner_tcp10,
	  .verdict = XDP_PASS, .delta = { .malformed = 1 }, .tdelta = { .decap = 1 } },
	/* One level: a tunnel in a tunnel is refused. */
	{ "tunnel: the first fragment of an IPIP packet inside GRE is refused",
	  .tun = { .kind = TUNP_GRE }, .in = { V4, .l4 = IPPROTO_IPIP, .frag = PKT_IP_MF },
	  .verdict = XDP_DROP, .tdelta = { .decap = 1, .refused = 1 } },
	{ "tunnel: a later fragment of an IPIP packet inside GRE passes",
	  .tun = { .kind = TUNP_GRE }, .in = { V4, .l4 = IPPROTO_IPIP, .frag = 3 },
	  .verdict = XDP_PASS, .delta = { .fragment = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel: IPIP in IPIP is refused", .tun = { .kind = TUNP_IPIP }, .in = { V4, .l4 = IPPROTO_IPIP },
	  .verdict = XDP_DROP, .tdelta = { .decap = 1, .refused = 1 } },
	{ "tunnel: GRE in VXLAN is refused", .tun = { .kind = TUNP_VXLAN }, .in = { V4, .l4 = IPPROTO_GRE },
	  .verdict = XDP_DROP, .tdelta = { .decap = 1, .refused = 1 } },
	{ "tunnel: IPIP inside GRE passes where no ipip device ends here",
	  .tun = { .kind = TUNP_GRE }, .in = { V4, .l4 = IPPROTO_IPIP }, .tc = &tunc_gre_only,
	  .verdict = XDP_PASS, .delta = { .non_tcp = 1 }, .tdelta = { .decap = 1 } },

	/* The device the kernel gives a packet to, by what it looks it up
	 * by: VXLAN by port and VNI, Geneve by port, VNI and remote, GRE by
	 * key and endpoints. None: the kernel drops it, nothing is charged. */
	{ "tunnel checks: VXLAN SYN with a VNI no device has: passed, not charged",
	  .tun = { .kind = TUNP_VXLAN }, .in = { V4, .flags = TCP_SYN, .saddr = V4_CP },
	  .devs = devs_vxlan7, .match = MATCH_VXLAN, TUN_NO_DEVICE },
	{ "tunnel checks: VXLAN SYN with the device's VNI: judged",
	  .tun = { .kind = TUNP_VXLAN }, .in = { V4, .flags = TCP_SYN, .saddr = V4_CP },
	  .devs = devs_vxlan42, .match = MATCH_VXLAN, TUN_ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "tunnel checks: VXLAN over IPv6 SYN with the device's VNI: judged",
	  .tun = { .kind = TUNP_VXLAN6 }, .in = TUN_SYN6, .rate = &rate_empty,
	  .devs = devs_vxlan42, .match = MATCH_VXLAN, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel checks: VXLAN SYN with the VNI of a device on another port: passed",
	  .tun = { .kind = TUNP_VXLAN }, .in = TUN_SYN4, .devs = devs_vxlan42_8472,
	  .match = MATCH_VXLAN, TUN_NO_DEVICE },
	{ "tunnel checks: VXLAN SYN to a collect_md device: any VNI is judged",
	  .tun = { .kind = TUNP_VXLAN }, .in = TUN_SYN4, .devs = devs_vxlan_md,
	  .match = MATCH_VXLAN, TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel checks: Geneve SYN from the device's remote: judged",
	  .tun = { .kind = TUNP_GENEVE }, .in = TUN_SYN4, .rate = &rate_empty,
	  .devs = devs_geneve_client, .match = MATCH_GENEVE, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel checks: Geneve SYN from another remote than the device's: passed",
	  .tun = { .kind = TUNP_GENEVE }, .in = TUN_SYN4, .devs = devs_geneve_other,
	  .match = MATCH_GENEVE, TUN_NO_DEVICE },
	{ "tunnel checks: GRE SYN with the device's key and endpoints: judged",
	  .tun = { .kind = TUNP_GRE, .gre_flags = TUNP_GRE_K }, .in = TUN_SYN4,
	  .devs = devs_gre_key, .match = MATCH_GRE, TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel checks: GRE SYN with checksum, key and sequence number: the key is found",
	  .tun = { .kind = TUNP_GRE, .gre_flags = GRE_CKS }, .in = TUN_SYN4,
	  .devs = devs_gre_key, .match = MATCH_GRE, TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel checks: GRE SYN with a key no device has: passed",
	  .tun = { .kind = TUNP_GRE, .gre_flags = TUNP_GRE_K }, .in = TUN_SYN4,
	  .devs = devs_gre_key5, .match = MATCH_GRE, TUN_NO_DEVICE },
	{ "tunnel checks: GRE SYN without a key, the device keyed: passed",
	  .tun = { .kind = TUNP_GRE }, .in = TUN_SYN4, .devs = devs_gre_key,
	  .match = MATCH_GRE, TUN_NO_DEVICE },
	{ "tunnel checks: GRE SYN with a key, the device not keyed: passed",
	  .tun = { .kind = TUNP_GRE, .gre_flags = TUNP_GRE_K }, .in = TUN_SYN4,
	  .devs = devs_gre_local, .match = MATCH_GRE, TUN_NO_DEVICE },
	{ "tunnel checks: GRE SYN to a device of this local address and any remote: judged",
	  .tun = { .kind = TUNP_GRE }, .in = TUN_SYN4, .devs = devs_gre_local,
	  .match = MATCH_GRE, TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel checks: GRE SYN from another remote than the device's: passed",
	  .tun = { .kind = TUNP_GRE }, .in = TUN_SYN4, .devs = devs_gre_other_remote,
	  .match = MATCH_GRE, TUN_NO_DEVICE },
	{ "tunnel checks: GRE-TAP SYN whose key only a gre device has: passed",
	  .tun = { .kind = TUNP_GRETAP, .gre_flags = TUNP_GRE_K }, .in = TUN_SYN4,
	  .devs = devs_gre_key, .match = MATCH_GRE | MATCH_GRETAP, TUN_NO_DEVICE },
	{ "tunnel checks: FOU carrying GRE to a device of this local address: judged",
	  .tun = { .kind = TUNP_FOU, .fou_proto = IPPROTO_GRE }, .in = TUN_SYN4,
	  .devs = devs_gre_local, .match = MATCH_GRE, TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel checks: IPIP SYN from the device's remote to its local address: judged",
	  .tun = { .kind = TUNP_IPIP }, .in = TUN_SYN4, .rate = &rate_empty,
	  .devs = devs_ipip_client, .match = MATCH_IPIP, TUN_DROPPED(SHEDD_SHEDDABLE) },
	{ "tunnel checks: IPIP SYN from another remote than the device's: passed",
	  .tun = { .kind = TUNP_IPIP }, .in = { V4, .flags = TCP_SYN, .saddr = V4_CP },
	  .devs = devs_ipip_other, .match = MATCH_IPIP, TUN_NO_DEVICE },
	{ "tunnel checks: IPIP SYN from any remote where the fallback device is up: judged",
	  .tun = { .kind = TUNP_IPIP }, .in = TUN_SYN4, .devs = devs_ipip_fallback,
	  .match = MATCH_IPIP, TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel checks: SIT SYN from another remote than the device's: passed",
	  .tun = { .kind = TUNP_SIT }, .in = TUN_SYN6, .devs = devs_sit_other,
	  .match = MATCH_SIT, TUN_NO_DEVICE },
	{ "tunnel checks: IPv4 in IPv6 SYN from the ip6tnl device's remote: judged",
	  .tun = { .kind = TUNP_4IN6 }, .in = TUN_SYN4, .devs = devs_ip6tnl_client,
	  .match = MATCH_IP6TNL, TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel checks: IP6IP6 SYN from another remote than the ip6tnl device's: passed",
	  .tun = { .kind = TUNP_6IN6 }, .in = TUN_SYN6, .devs = devs_ip6tnl_other,
	  .match = MATCH_IP6TNL, TUN_NO_DEVICE },
	{ "tunnel checks: FOU ipproto 4 SYN from another remote than the ipip device's: passed",
	  .tun = { .kind = TUNP_FOU }, .in = TUN_SYN4, .devs = devs_ipip_other,
	  .match = MATCH_IPIP, TUN_NO_DEVICE },
	{ "tunnel checks: GUE version 1 SYN from the ipip device's remote: judged",
	  .tun = { .kind = TUNP_GUE, .gue_ver = 1 }, .in = TUN_SYN4, .devs = devs_ipip_client,
	  .match = MATCH_IPIP, TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel checks: a kind whose devices were not read is judged as before",
	  .tun = { .kind = TUNP_GENEVE }, .in = TUN_SYN4, .devs = devs_vxlan7,
	  .match = MATCH_VXLAN, TUN_ADMITTED(SHEDD_SHEDDABLE) },
	/* What the kernel drops once it opened the tunnel costs no token. */
	{ "tunnel checks: VXLAN SYN with a wrong inner TCP checksum: dropped, no token",
	  .tun = { .kind = TUNP_VXLAN }, .in = { V4, .flags = TCP_SYN, .saddr = V4_CP },
	  .mangle = mangle_inner_tcp_csum, .verdict = XDP_DROP,
	  .delta = { .syn_bad_csum = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel checks: ip6gretap inner IPv6 SYN with options, wrong checksum: dropped",
	  .tun = { .kind = TUNP_GRETAP6 }, .in = { V6, .flags = TCP_SYN, .payload_len = 3 },
	  .mangle = mangle_inner_tcp_csum, .verdict = XDP_DROP,
	  .delta = { .syn_bad_csum = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel checks: IPIP SYN with the right checksum and data: judged",
	  .tun = { .kind = TUNP_IPIP }, .in = { V4, .flags = TCP_SYN, .payload_len = 7 },
	  TUN_ADMITTED(SHEDD_SHEDDABLE) },
	{ "tunnel checks: IPIP SYN from 127.0.0.1: martian, dropped",
	  .tun = { .kind = TUNP_IPIP }, .in = { V4, .flags = TCP_SYN, .saddr = "127.0.0.1" },
	  .verdict = XDP_DROP, .delta = { .syn_martian = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel checks: VXLAN SYN to 224.0.0.1: martian, dropped",
	  .tun = { .kind = TUNP_VXLAN }, .in = { V4, .flags = TCP_SYN, .daddr = "224.0.0.1" },
	  .verdict = XDP_DROP, .delta = { .syn_martian = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel checks: SIT SYN from a multicast IPv6 source: martian, dropped",
	  .tun = { .kind = TUNP_SIT }, .in = { V6, .flags = TCP_SYN, .saddr = "ff02::1" },
	  .verdict = XDP_DROP, .delta = { .syn_martian = 1 }, .tdelta = { .decap = 1 } },
	{ "tunnel checks: GRE SYN whose inner source is its destination (LAND): martian",
	  .tun = { .kind = TUNP_GRE }, .in = { V4, .flags = TCP_SYN, .saddr = PKT_V4_SERVER },
	  .verdict = XDP_DROP, .delta = { .syn_martian = 1 }, .tdelta = { .decap = 1 } },
	/* The source check, against the tunnel's device: a CRITICAL_PLUS
	 * source must be routed back through it. */
	{ "tunnel checks: CRITICAL_PLUS inner source routed back through the tunnel's device: its class",
	  .tun = { .kind = TUNP_VXLAN }, .in = { V4, .flags = TCP_SYN, .saddr = V4_CP },
	  .cfg = &cfg_src, .devs = devs_vxlan42, .match = MATCH_VXLAN,
	  TUN_ADMITTED(SHEDD_CRITICAL_PLUS) },
	{ "tunnel checks: spoofed CRITICAL_PLUS inner source routed elsewhere: the default class",
	  .tun = { .kind = TUNP_VXLAN }, .in = { V4, .flags = TCP_SYN, .saddr = V4_CP_ELSEWHERE },
	  .cfg = &cfg_src, .devs = devs_vxlan42, .match = MATCH_VXLAN, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .src_failed = 1 }, .tdelta = { .decap = 1, .judged = 1 } },
	{ "tunnel checks: --source-check verify, spoofed CRITICAL_PLUS inner source routed elsewhere: the default class",
	  .tun = { .kind = TUNP_VXLAN }, .in = { V4, .flags = TCP_SYN, .saddr = V4_CP_ELSEWHERE },
	  .cfg = &cfg_src_verify, .devs = devs_vxlan42, .match = MATCH_VXLAN, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .src_failed = 1 }, .tdelta = { .decap = 1, .judged = 1 } },
	{ "tunnel checks: spoofed IPv6 CRITICAL inner source in GRE routed elsewhere: the default class",
	  .tun = { .kind = TUNP_GRE, .gre_flags = TUNP_GRE_K },
	  .in = { V6, .flags = TCP_SYN, .saddr = V6_CRIT_ELSEWHERE }, .cfg = &cfg_src,
	  .devs = devs_gre_key, .match = MATCH_GRE, .verdict = XDP_PASS,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .admitted = 1 },
		     .src_failed = 1 }, .tdelta = { .decap = 1, .judged = 1 } },
	{ "tunnel checks: spoofed CRITICAL_PLUS source, empty buckets: shed as the default class",
	  .tun = { .kind = TUNP_GENEVE }, .in = { V4, .flags = TCP_SYN, .saddr = V4_CP_ELSEWHERE },
	  .cfg = &cfg_src, .rate = &rate_empty, .devs = devs_geneve_client, .match = MATCH_GENEVE,
	  .verdict = XDP_DROP,
	  .delta = { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .dropped = 1 },
		     .src_failed = 1 }, .tdelta = { .decap = 1, .judged = 1 } },
};

/* The tun_stats map, summed over the CPUs. */
static void read_tun_stats(struct shedd_tun_stats *sum)
{
	struct shedd_tun_stats *vals = calloc((size_t)nr_cpus, sizeof(*vals));
	__u32 zero = 0;
	int i, err;

	assert_non_null(vals);
	err = bpf_map__lookup_elem(skel->maps.tun_stats, &zero, sizeof(zero), vals,
				   (size_t)nr_cpus * sizeof(*vals), 0);
	memset(sum, 0, sizeof(*sum));
	for (i = 0; !err && i < nr_cpus; i++) {
		sum->decap += vals[i].decap;
		sum->judged += vals[i].judged;
		sum->refused += vals[i].refused;
	}
	free(vals);
	if (err)
		fail_msg("read tun_stats: %s", strerror(-err));
}

static void expect_tun_delta(const char *name, const struct shedd_tun_stats *before,
			     const struct shedd_tun_stats *after,
			     const struct shedd_tun_stats *want)
{
	expect(after->decap - before->decap == want->decap, name,
	       "tun_stats.decap moved by %llu, expected %llu",
	       (unsigned long long)(after->decap - before->decap),
	       (unsigned long long)want->decap);
	expect(after->judged - before->judged == want->judged, name,
	       "tun_stats.judged moved by %llu, expected %llu",
	       (unsigned long long)(after->judged - before->judged),
	       (unsigned long long)want->judged);
	expect(after->refused - before->refused == want->refused, name,
	       "tun_stats.refused moved by %llu, expected %llu",
	       (unsigned long long)(after->refused - before->refused),
	       (unsigned long long)want->refused);
}

/* @addr as tun_devs keeps it: IPv4 as ::ffff:a.b.c.d. */
static void tun_addr16(const char *addr, __u8 *out)
{
	memset(out, 0, 16);
	if (inet_pton(AF_INET, addr, out + 12) == 1) {
		out[10] = out[11] = 0xff;
		return;
	}
	assert_int_equal(inet_pton(AF_INET6, addr, out), 1);
}

/* tun_devs holds @devs alone; their TUN_SHAPE_* bits into @shapes. */
static int tun_devs_write(const struct tun_dev_spec *devs, __u32 *shapes)
{
	struct bpf_map *m = map_named("tun_devs");
	struct shedd_tun_key key;
	int err = 0;

	*shapes = 0;
	if (!m)
		return 0;
	while (!err && !bpf_map__get_next_key(m, NULL, &key, sizeof(key)))
		err = bpf_map__delete_elem(m, &key, sizeof(key), 0);
	for (; !err && devs && devs->kind; devs++) {
		struct shedd_tun_dev v = { .ifindex = 1 };

		if (devs->dev)
			v.ifindex = (__u32)dummy_ifindex[devs->dev - 1];
		memset(&key, 0, sizeof(key));
		key.kind = devs->kind;
		key.flags = devs->flags;
		key.port = devs->port;
		key.id = devs->id;
		if (devs->local)
			tun_addr16(devs->local, key.local);
		if (devs->remote)
			tun_addr16(devs->remote, key.remote);
		*shapes |= 1U << shedd_tun_key_shape(&key);
		err = bpf_map__update_elem(m, &key, sizeof(key), &v, sizeof(v), BPF_ANY);
	}
	return err;
}

/* tun_checks.no_device, summed over the CPUs (0 where the map is not). */
static __u64 read_no_device(void)
{
	struct bpf_map *m = map_named("tun_checks");
	struct shedd_tun_checks *vals;
	__u64 sum = 0;
	__u32 zero = 0;
	int i, err;

	if (!m)
		return 0;
	vals = calloc((size_t)nr_cpus, sizeof(*vals));
	assert_non_null(vals);
	err = bpf_map__lookup_elem(m, &zero, sizeof(zero), vals, (size_t)nr_cpus * sizeof(*vals),
				   0);
	for (i = 0; !err && i < nr_cpus; i++)
		sum += vals[i].no_device;
	free(vals);
	if (err)
		fail_msg("read tun_checks: %s", strerror(-err));
	return sum;
}

static int tun_case_setup(void **state)
{
	const struct tun_case *c = *state;
	struct shedd_tun_config tc = *(c->tc ? c->tc : &tunc_all);
	__u32 zero = 0, shapes;

	if (reset_maps(c->cfg, c->rate))
		return -1;
	if (tun_devs_write(c->devs, &shapes)) {
		print_error("write tun_devs: %s\n", strerror(errno));
		return -1;
	}
	tc.match = c->match ? c->match | shapes << SHEDD_TUN_SHAPES_SHIFT : 0;
	if (bpf_map__update_elem(skel->maps.tun_config, &zero, sizeof(zero), &tc, sizeof(tc),
				 BPF_ANY)) {
		print_error("write tun_config: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static void run_tun(void **state)
{
	const struct tun_case *c = *state;
	struct shedd_stats before, after, want = c->delta;
	struct shedd_tun_stats tbefore, tafter;
	struct xdp_run r;
	__u64 nodev;
	struct pkt p;

	tun_pkt_build(&p, &c->tun, &c->in);
	if (c->cut_l4) {
		assert_true(p.l4_off + c->cut_l4 <= p.len);
		p.len = p.l4_off + c->cut_l4;
		pkt_finish(&p);
	}
	if (c->mangle)
		c->mangle(&p);
	read_stats(&before);
	read_tun_stats(&tbefore);
	nodev = read_no_device();
	run_xdp(c->name, p.data, p.len, &r);
	read_stats(&after);
	read_tun_stats(&tafter);
	nodev = read_no_device() - nodev;
	expect_verdict(c->name, r.verdict, c->verdict);
	want.packets = 1;
	expect_delta(c->name, &before, &after, &want);
	expect_tun_delta(c->name, &tbefore, &tafter, &c->tdelta);
	expect(nodev == c->no_device, c->name, "tun_checks.no_device moved by %llu, expected %llu",
	       (unsigned long long)nodev, (unsigned long long)c->no_device);
	expect(r.out_len == p.len && memcmp(r.out, p.data, p.len) == 0, c->name,
	       "an encapsulated frame is never rewritten");
}

/* Cut an encapsulated SYN at every length: the outer datagram is then
 * longer than its frame, which the kernel drops: passed as malformed. */
static void run_tun_cuts(void **state)
{
	const struct tun_case *c = *state;
	struct shedd_stats before, after, want;
	struct shedd_tun_stats tbefore, tafter;
	char name[256], where[96];
	struct xdp_run r;
	size_t len;
	struct pkt p;

	tun_pkt_build(&p, &c->tun, &c->in);
	for (len = ETH_HLEN; len < p.len; len++) {
		pkt_describe_cut(&p, len, where, sizeof(where));
		snprintf(name, sizeof(name), "%s cut to %zu bytes (%s)", c->name, len, where);
		want = (struct shedd_stats){ .malformed = 1, .packets = 1 };
		read_stats(&before);
		read_tun_stats(&tbefore);
		run_xdp(name, p.data, len, &r);
		read_stats(&after);
		read_tun_stats(&tafter);
		expect_verdict(name, r.verdict, XDP_PASS);
		expect_delta(name, &before, &after, &want);
		expect_tun_delta(name, &tbefore, &tafter, &(struct shedd_tun_stats){ 0 });
	}
}

/* Short tunnel headers inside a whole outer datagram: the outer length
 * ends inside the tunnel header (the kernel drops them): passed as
 * malformed, never judged. */
static void run_tun_short(void **state)
{
	const struct tun_case *c = *state;
	struct shedd_stats before, after, want;
	struct shedd_tun_stats tbefore, tafter, twant;
	char name[256];
	struct xdp_run r;
	size_t len, hdr, inner;
	struct pkt p;
	int i;

	tun_pkt_build(&p, &c->tun, &c->in);
	/* From the tunnel header's first byte to the inner frame's (IPIP and
	 * SIT have none: their inner header is cut instead, once opened). */
	hdr = p.l4_off + (p.l4_proto == IPPROTO_UDP ? 8 : 0);
	for (i = 0, inner = hdr + 4; i < p.nr_marks; i++)
		if (p.marks[i].off > hdr && strncmp(p.marks[i].what, "GRE", 3) &&
		    strncmp(p.marks[i].what, "Geneve", 6)) {
			inner = p.marks[i].off;
			break;
		}
	for (len = hdr; len < inner; len++) {
		struct pkt q = p;

		q.len = len;
		pkt_finish(&q);
		snprintf(name, sizeof(name), "%s: tunnel header cut to %zu bytes", c->name,
			 len - hdr);
		want = (struct shedd_stats){ .malformed = 1, .packets = 1 };
		twant = (struct shedd_tun_stats){
			.decap = p.l4_proto == IPPROTO_IPIP || p.l4_proto == IPPROTO_IPV6 };
		read_stats(&before);
		read_tun_stats(&tbefore);
		run_xdp(name, q.data, q.len, &r);
		read_stats(&after);
		read_tun_stats(&tafter);
		expect_verdict(name, r.verdict, XDP_PASS);
		expect_delta(name, &before, &after, &want);
		expect_tun_delta(name, &tbefore, &tafter, &twant);
	}
}

static const struct tun_case tun_cut_cases[] = {
	{ "tunnel cuts: GRE with checksum, key and sequence number",
	  .tun = { .kind = TUNP_GRE, .gre_flags = GRE_CKS }, .in = TUN_SYN4 },
	{ "tunnel cuts: VXLAN with an inner 802.1Q tag", .tun = { .kind = TUNP_VXLAN },
	  .in = { V4, .flags = TCP_SYN, .vlans = 1 } },
	{ "tunnel cuts: Geneve over IPv6 with options", .tun = { .kind = TUNP_GENEVE6, .geneve_opt = 12 },
	  .in = TUN_SYN6 },
	{ "tunnel cuts: SIT", .tun = { .kind = TUNP_SIT }, .in = TUN_SYN6 },
	{ "tunnel cuts: GRE-TAP over IPv6 with a key", .tun = { .kind = TUNP_GRETAP6, .gre_flags = TUNP_GRE_K },
	  .in = TUN_SYN4 },
};

/* test_run itself refuses a frame shorter than an Ethernet header
 * (bpf_test_init: EINVAL), so the program never sees one. */
static void run_short_frames(void **state)
{
	struct shedd_stats before, after;
	struct pkt p;
	size_t len;

	(void)state;
	pkt_build(&p, &(struct pkt_spec){ V4, .flags = TCP_SYN });
	read_stats(&before);
	for (len = 0; len < ETH_HLEN; len++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts,
			.data_in = p.data,
			.data_size_in = len,
		);
		int err = bpf_prog_test_run_opts(
			bpf_program__fd(skel->progs.shedd_xdp), &opts);

		expect(err == -EINVAL, "frame shorter than Ethernet",
		       "test_run of %zu bytes returned %d, expected -EINVAL",
		       len, err);
	}
	read_stats(&after);
	expect(after.packets == before.packets, "frame shorter than Ethernet",
	       "the program ran on a refused frame");
}

/* ---- table 3: the token bucket on the test clock -------------------------- */

struct tb_step {
	__s64 at_ns;          /* clock, relative to T0 */
	unsigned int syns;    /* SYNs sent at that time (0 ends the script) */
	unsigned int admitted;
};

struct tb_case {
	const char *name;
	struct shedd_class_rate rate;   /* every class, every CPU */
	struct tb_step steps[8];
};

static const struct tb_case tb_cases[] = {
	{ "bucket: rate 10/s burst 5 starts full, refills 1 per 100 ms, caps at 5",
	  .rate = { .rate_per_sec = 10, .burst = 5 },
	  .steps = {
		  { MS(0), 6, 5 },       /* fresh bucket: exactly 5 tokens */
		  { MS(100), 2, 1 },     /* 100 ms is one token */
		  { MS(150), 1, 0 },     /* half a token is not enough */
		  { MS(200), 2, 1 },     /* two halves make one */
		  { MS(200), 1, 0 },     /* same instant: nothing new */
		  { MS(1200), 7, 5 },    /* 1 s is 10 tokens, capped at 5 */
		  /* The cap keeps 0.999999999 of a sixth token, so 50 ms
		   * more completes one: exactly rate_per_sec when saturated. */
		  { MS(1250), 2, 1 },
	  } },
	{ "bucket: rate 0 admits nothing, ever",
	  .rate = { .rate_per_sec = 0, .burst = 5 },
	  .steps = { { MS(0), 3, 0 }, { MS(2000000), 3, 0 } } },
	{ "bucket: burst 0 holds one token",
	  .rate = { .rate_per_sec = 10, .burst = 0 },
	  .steps = {
		  { MS(0), 3, 1 },
		  { MS(50), 1, 0 },
		  { MS(100), 2, 1 },
		  { MS(10000), 3, 1 },
	  } },
	{ "bucket: rate 1000/s burst 100, 1 ms per token",
	  .rate = { .rate_per_sec = 1000, .burst = 100 },
	  .steps = {
		  { MS(0), 101, 100 },
		  { MS(1), 2, 1 },
		  { MS(21), 25, 20 },
		  { MS(21) + 999999, 1, 0 }, /* one nanosecond short */
		  { MS(22), 1, 1 },
	  } },
	{ "bucket: rate above MAX_RATE_PER_SEC is clamped to it",
	  .rate = { .rate_per_sec = 1000000000, .burst = 5 },
	  .steps = {
		  { MS(0), 6, 5 },
		  { 100, 10, 1 },    /* 100 ns at 1e7/s: one token, not five */
	  } },
	{ "bucket: time running backwards refills nothing and keeps last_ns",
	  .rate = { .rate_per_sec = 10, .burst = 5 },
	  .steps = {
		  { MS(0), 5, 5 },
		  { MS(-1000), 2, 0 },
		  { MS(100), 2, 1 }, /* 100 ms after T0, not 1.1 s */
	  } },
	{ "bucket: idle for MAX_REFILL_NS refills to exactly burst",
	  .rate = { .rate_per_sec = 1, .burst = 5 },
	  .steps = {
		  { MS(0), 6, 5 },
		  /* 999 s: capped at 5 tokens and 0.999999999 of a sixth */
		  { MS(999000), 6, 5 },
		  { MS(999500), 1, 1 },  /* 0.5 s completes the sixth */
		  /* 1000 s idle: exactly 5 tokens, the fraction is gone */
		  { MS(1999500), 6, 5 },
		  { MS(2000000), 1, 0 }, /* so 0.5 s more is not a token */
	  } },
};

static int tb_setup(void **state)
{
	const struct tb_case *c = *state;

	return reset_maps(NULL, &c->rate);
}

/* Send @n SYNs from @saddr at the current clock; return how many passed. */
static unsigned int send_syns(const char *name, const char *saddr,
			      unsigned int n)
{
	struct pkt_spec spec = { V4, .flags = TCP_SYN, .saddr = saddr };
	unsigned int i, passed = 0;
	struct xdp_run r;
	struct pkt p;

	pkt_build(&p, &spec);
	for (i = 0; i < n; i++) {
		run_xdp(name, p.data, p.len, &r);
		expect(r.verdict == XDP_PASS || r.verdict == XDP_DROP, name,
		       "SYN %u of %u: verdict %s", i + 1, n,
		       verdict_name(r.verdict));
		passed += r.verdict == XDP_PASS;
	}
	return passed;
}

static void run_tb(void **state)
{
	const struct tb_case *c = *state;
	const struct tb_step *s;
	char name[256];

	for (s = c->steps; s < c->steps + ARRAY_SIZE(c->steps) && s->syns; s++) {
		struct shedd_stats before, after, want = {};
		unsigned int passed;

		snprintf(name, sizeof(name), "%s, at T0%+.6f s", c->name,
			 s->at_ns / 1e9);
		skel->bss->test_clock_ns = T0_NS + s->at_ns;
		read_stats(&before);
		passed = send_syns(name, V4_OTHER, s->syns);
		read_stats(&after);
		expect(passed == s->admitted, name, "%u of %u SYNs admitted, expected %u",
		       passed, s->syns, s->admitted);
		want.packets = s->syns;
		want.cls[SHEDD_SHEDDABLE].syn = s->syns;
		want.cls[SHEDD_SHEDDABLE].charged = s->syns;
		want.cls[SHEDD_SHEDDABLE].admitted = s->admitted;
		want.cls[SHEDD_SHEDDABLE].dropped = s->syns - s->admitted;
		expect_delta(name, &before, &after, &want);
	}
}

/* A rate update rewrites the rates map only: the tokens a class has left
 * and its last refill time stay, so an update never hands out a burst. */
static void test_rate_update_keeps_tokens(void **state)
{
	const char *name = "rate update keeps bucket tokens";
	struct shedd_class_rate slow = { .rate_per_sec = 10, .burst = 5 };
	struct shedd_class_rate fast = { .rate_per_sec = 20, .burst = 5 };
	struct shedd_class_rate shallow = { .rate_per_sec = 20, .burst = 1 };
	struct shedd_reserve_state b;

	(void)state;
	assert_int_equal(set_rates(&slow), 0);
	expect(send_syns(name, V4_OTHER, 3) == 3, name, "3 of a full bucket of 5");
	b = read_reserve(SHEDD_SHEDDABLE);
	expect(b.tokens == 2 * SHEDD_NSEC_PER_SEC && b.last_ns == T0_NS, name,
	       "bucket before the update: %llu units at %llu ns",
	       (unsigned long long)b.tokens, (unsigned long long)b.last_ns);

	assert_int_equal(set_rates(&fast), 0);
	b = read_reserve(SHEDD_SHEDDABLE);
	expect(b.tokens == 2 * SHEDD_NSEC_PER_SEC && b.last_ns == T0_NS, name,
	       "bucket after the update: %llu units at %llu ns",
	       (unsigned long long)b.tokens, (unsigned long long)b.last_ns);
	expect(send_syns(name, V4_OTHER, 3) == 2, name,
	       "after the update only the 2 tokens left are admitted");

	/* The new rate applies from the last refill: 100 ms at 20/s. */
	skel->bss->test_clock_ns = T0_NS + MS(100);
	expect(send_syns(name, V4_OTHER, 3) == 2, name,
	       "100 ms at the new rate 20/s is 2 tokens");

	/* A shallower bucket caps what is there at the next refill. */
	assert_int_equal(set_rates(&shallow), 0);
	skel->bss->test_clock_ns = T0_NS + MS(10000);
	expect(send_syns(name, V4_OTHER, 3) == 1, name,
	       "burst lowered to 1: 1 token after 10 s");
}

/* Each class has its own bucket: draining one leaves the others full. */
static void test_buckets_per_class(void **state)
{
	const char *name = "buckets are per class";
	struct shedd_class_rate r = { .rate_per_sec = 10, .burst = 5 };
	struct shedd_stats st;

	(void)state;
	assert_int_equal(set_rates(&r), 0);
	expect(send_syns(name, V4_OTHER, 8) == 5, name, "default class: 5 of 8");
	expect(send_syns(name, V4_CP, 8) == 5, name, "CRITICAL_PLUS: 5 of 8");
	expect(send_syns(name, V4_SP, 8) == 5, name, "SHEDDABLE_PLUS: 5 of 8");
	expect(send_syns(name, V4_OTHER, 1) == 0, name, "default class stays empty");
	read_stats(&st);
	expect(st.cls[SHEDD_SHEDDABLE].admitted == 5 &&
	       st.cls[SHEDD_SHEDDABLE].dropped == 4 &&
	       st.cls[SHEDD_CRITICAL_PLUS].admitted == 5 &&
	       st.cls[SHEDD_CRITICAL_PLUS].dropped == 3 &&
	       st.cls[SHEDD_SHEDDABLE_PLUS].admitted == 5 &&
	       st.cls[SHEDD_SHEDDABLE_PLUS].dropped == 3 &&
	       st.cls[SHEDD_CRITICAL].syn == 0, name,
	       "per-class counters do not add up");
}

/* A class whose rate record was never written is not configured yet: the
 * program fails open and admits (start-up must not drop anything). */
static void test_unwritten_rate_admits(void **state)
{
	const char *name = "unwritten rate admits";
	const struct shedd_rate unset = {};
	__u32 cls = SHEDD_SHEDDABLE;

	(void)state;
	assert_int_equal(bpf_map__update_elem(skel->maps.rates, &cls, sizeof(cls), &unset,
					      sizeof(unset), BPF_F_LOCK), 0);
	expect(send_syns(name, V4_OTHER, 50) == 50, name, "an unset class admits every SYN");
	expect(read_reserve(cls).last_ns == 0, name, "an unset class does not touch its reserve");
}

/* A CPU borrows into its cache, doubling the batch while it spends it
 * within the lease (1, 2, 4, 8, then the class's 10), and spends it without
 * the reserve; a stale cache is dropped and the next batch is halved. */
static void test_batch_and_lease(void **state)
{
	const char *name = "batch borrowed into the CPU cache, dropped when stale";
	const struct shedd_class_rate r = { .rate_per_sec = 1000, .burst = 100,
					    .batch = 10, .lease_ns = MS(1) };
	struct shedd_reserve_state res;
	struct shedd_bucket b;

	(void)state;
	assert_int_equal(set_rates(&r), 0);
	expect(send_syns(name, V4_OTHER, 16) == 16, name, "16 SYNs");
	b = read_bucket(SHEDD_SHEDDABLE);
	res = read_reserve(SHEDD_SHEDDABLE);
	expect(b.tokens == 9 && b.batch == 10 && b.until_ns == T0_NS + MS(1), name,
	       "cache: %llu tokens, batch %u, until %llu", (unsigned long long)b.tokens,
	       b.batch, (unsigned long long)b.until_ns);
	expect(res.tokens == 75 * SHEDD_NSEC_PER_SEC, name, "reserve: %llu units",
	       (unsigned long long)res.tokens);

	/* Five more come from the cache: the reserve is not touched. */
	expect(send_syns(name, V4_OTHER, 5) == 5, name, "five from the cache");
	expect(read_reserve(SHEDD_SHEDDABLE).tokens == 75 * SHEDD_NSEC_PER_SEC &&
	       read_bucket(SHEDD_SHEDDABLE).tokens == 4, name,
	       "the cache spent without the reserve");

	/* 2 ms later the 4 left are stale: dropped; 2 tokens refilled, a
	 * batch of 10 / 2 = 5 taken. */
	skel->bss->test_clock_ns = T0_NS + MS(2);
	expect(send_syns(name, V4_OTHER, 1) == 1, name, "SYN after the lease");
	res = read_reserve(SHEDD_SHEDDABLE);
	b = read_bucket(SHEDD_SHEDDABLE);
	expect(res.tokens == 72 * SHEDD_NSEC_PER_SEC && b.tokens == 4 && b.batch == 5, name,
	       "reserve %llu units, cache %llu, batch %u", (unsigned long long)res.tokens,
	       (unsigned long long)b.tokens, b.batch);
}

/* A CPU that found the reserve empty sheds from its cache state alone
 * until the lease ends: a flood does not lock the reserve per SYN. */
static void test_empty_reserve_backs_off(void **state)
{
	const char *name = "empty reserve: shed without asking again for a lease";
	const struct shedd_class_rate r = { .rate_per_sec = 10, .burst = 2, .batch = 1,
					    .lease_ns = MS(50) };

	(void)state;
	assert_int_equal(set_rates(&r), 0);
	expect(send_syns(name, V4_OTHER, 3) == 2, name, "burst of 2");
	skel->bss->test_clock_ns = T0_NS + MS(40);
	expect(send_syns(name, V4_OTHER, 5) == 0, name, "inside the lease: shed");
	expect(read_reserve(SHEDD_SHEDDABLE).last_ns == T0_NS, name,
	       "the reserve was not touched inside the lease");
	skel->bss->test_clock_ns = T0_NS + MS(100);
	expect(send_syns(name, V4_OTHER, 2) == 1, name, "100 ms at 10/s: one token");
}

/* The reserve refills piecewise across a rate change: prev_rate up to
 * changed_ns, the new rate after it. */
static void test_piecewise_refill(void **state)
{
	const char *name = "refill is piecewise across a rate change";
	struct shedd_class_rate r = { .rate_per_sec = 10, .burst = 1000, .batch = 1 };

	(void)state;
	assert_int_equal(set_rates(&r), 0);
	expect(send_syns(name, V4_OTHER, 1001) == 1000, name, "drain a full reserve");
	r.prev_rate_per_sec = 10;
	r.rate_per_sec = 1000;
	r.changed_ns = T0_NS + MS(500);
	assert_int_equal(set_rates(&r), 0);
	/* 500 ms at 10/s + 500 ms at 1000/s = 505 tokens. */
	skel->bss->test_clock_ns = T0_NS + MS(1000);
	expect(send_syns(name, V4_OTHER, 600) == 505, name, "505 tokens after the change");
}

/* ---- the daemon's lease (include/lease.h) -------------------------------- */

/* A climb of 8192 units of 2^20 ns: half way is a whole number of units. */
#define LEASE_RELAX_NS (8192ULL << LEASE_UNIT_SHIFT)
#define LEASE_HALF_NS (4096ULL << LEASE_UNIT_SHIFT)

/* Stamp the heartbeat at @hb_ns with a lease of @lease_ns, each class
 * climbing to @fail_rate (burst @fail_burst) over LEASE_RELAX_NS. */
static int set_lease(__u64 hb_ns, __u64 lease_ns, __u64 fail_rate, __u64 fail_burst,
		     __u32 flags)
{
	struct shedd_lease v = { .flags = flags, .heartbeat_ns = hb_ns, .lease_ns = lease_ns,
				 .relax_ns = LEASE_RELAX_NS };
	__u32 zero = 0, c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		v.fail_rate_per_sec[c] = fail_rate;
		v.fail_burst[c] = fail_burst;
	}
	return bpf_map__update_elem(skel->maps.lease, &zero, sizeof(zero), &v, sizeof(v),
				    BPF_F_LOCK);
}

/* The last rate holds exactly until the lease runs out; then the class
 * climbs to the fail-static rate, half way at half the climb, all the way
 * after it, and holds there; a fresh heartbeat gives the last rate back. */
static void test_lease_relaxes(void **state)
{
	const char *name = "lease: the last rate, then a climb to the fail-static rate";
	const struct shedd_class_rate r = { .rate_per_sec = 10, .burst = 10, .batch = 1 };
	const __u64 lease = MS(10000), end = T0_NS + MS(10000);

	(void)state;
	assert_int_equal(set_rates(&r), 0);
	assert_int_equal(set_lease(T0_NS, lease, 1000, 1000, 0), 0);
	expect(send_syns(name, V4_OTHER, 20) == 10, name, "a full reserve: the burst of 10");
	skel->bss->test_clock_ns = end - MS(1000);
	expect(send_syns(name, V4_OTHER, 200) == 10, name, "9 s on: the burst of 10, no more");
	/* To the last nanosecond of the lease: 1 s at the last 10/s. */
	skel->bss->test_clock_ns = end;
	expect(send_syns(name, V4_OTHER, 200) == 10, name,
	       "the lease's last second: exactly the last rate, 10");
	/* Half the climb after it ran out: 10 + (1000 - 10) / 2 = 505/s
	 * and a burst of 505, which caps what 4.3 s refilled. */
	skel->bss->test_clock_ns = end + LEASE_HALF_NS;
	expect(send_syns(name, V4_OTHER, 1000) == 505, name,
	       "half the climb: 505, the burst half way to 1000");
	/* The whole climb and 1 s more: the fail-static rate and burst. */
	skel->bss->test_clock_ns = end + LEASE_RELAX_NS + MS(1000);
	expect(send_syns(name, V4_OTHER, 3000) == 1000, name,
	       "after the climb: the fail-static burst of 1000");
	skel->bss->test_clock_ns += MS(1000);
	expect(send_syns(name, V4_OTHER, 3000) == 1000, name,
	       "and 1000 a second from then on");
	skel->bss->test_clock_ns += MS(100000);
	expect(send_syns(name, V4_OTHER, 3000) == 1000, name, "100 s on: still 1000");
	/* A daemon is back: its heartbeat restores the rate it wrote. */
	assert_int_equal(set_lease(skel->bss->test_clock_ns, lease, 1000, 1000, 0), 0);
	skel->bss->test_clock_ns += MS(1000);
	expect(send_syns(name, V4_OTHER, 3000) == 10, name,
	       "a fresh heartbeat: the last rate and burst, 10, again");
	skel->bss->test_clock_ns += MS(1000);
	expect(send_syns(name, V4_OTHER, 3000) == 10, name, "and 10 a second");
}

/* The lease never lowers a rate, never sheds everything, and holds no
 * sway over a rate an operator pinned or without a lease. */
static void test_lease_bounds(void **state)
{
	const char *name = "lease: never lower, never zero, not over a pin";
	const struct shedd_class_rate r = { .rate_per_sec = 10, .burst = 10, .batch = 1 };
	const struct shedd_class_rate none = { .rate_per_sec = 0, .burst = 1, .batch = 1 };
	const __u64 lease = MS(10000), late = T0_NS + lease + LEASE_RELAX_NS + MS(1000);

	(void)state;
	/* A fail-static rate under the last one: the last one holds. */
	assert_int_equal(set_rates(&r), 0);
	assert_int_equal(set_lease(T0_NS, lease, 5, 5, 0), 0);
	expect(send_syns(name, V4_OTHER, 20) == 10, name, "the burst of 10");
	skel->bss->test_clock_ns = late;
	expect(send_syns(name, V4_OTHER, 200) == 10, name, "run out, fail-static 5: still 10");
	skel->bss->test_clock_ns += MS(1000);
	expect(send_syns(name, V4_OTHER, 200) == 10, name, "and 10 a second");
	/* A pinned rate holds. */
	assert_int_equal(set_lease(T0_NS, lease, 1000, 1000, SHEDD_LEASE_PINNED), 0);
	skel->bss->test_clock_ns += MS(1000);
	expect(send_syns(name, V4_OTHER, 200) == 10, name, "pinned: 10 a second");
	/* No lease (0): the heartbeat's age says nothing, fail static. */
	assert_int_equal(set_lease(T0_NS, 0, 1000, 1000, 0), 0);
	skel->bss->test_clock_ns += MS(1000);
	expect(send_syns(name, V4_OTHER, 200) == 10, name, "no lease: 10 a second");
	/* A class left at 0 by its last rate comes back to its fail-static
	 * rate once the lease runs out. */
	assert_int_equal(set_rates(&none), 0);
	assert_int_equal(set_lease(skel->bss->test_clock_ns, lease, 1, 1, 0), 0);
	skel->bss->test_clock_ns += MS(5000);
	expect(send_syns(name, V4_OTHER, 200) == 0, name, "rate 0 inside the lease: all shed");
	skel->bss->test_clock_ns += lease + LEASE_RELAX_NS;
	expect(send_syns(name, V4_OTHER, 200) == 1, name, "run out: the fail-static 1");
	skel->bss->test_clock_ns += MS(1000);
	expect(send_syns(name, V4_OTHER, 200) == 1, name, "1 a second, never 0");
}

/* ---- the RST budget ------------------------------------------------------ */

/* Send @n SYNs (every one shed) and return how many were answered; the
 * others must be dropped. */
static unsigned int send_shed_syns(const char *name, unsigned int n)
{
	struct pkt_spec spec = { V4, .flags = TCP_SYN };
	unsigned int i, answered = 0;
	struct xdp_run r;
	struct pkt p;

	pkt_build(&p, &spec);
	for (i = 0; i < n; i++) {
		run_xdp(name, p.data, p.len, &r);
		expect(r.verdict == XDP_TX || r.verdict == XDP_DROP, name,
		       "SYN %u of %u: verdict %s", i + 1, n,
		       verdict_name(r.verdict));
		answered += r.verdict == XDP_TX;
	}
	return answered;
}

struct rst_step {
	__s64 at_ns;          /* clock, relative to T0 */
	unsigned int syns;    /* shed SYNs sent then (0 ends the script) */
	unsigned int answered;
};

struct rst_budget_case {
	const char *name;
	__u32 rate_per_sec, burst; /* the budget of each CPU */
	struct rst_step steps[6];
};

static const struct rst_budget_case rst_budget_cases[] = {
	{ "RST budget 10/s depth 3: a flood gets 3, then 1 per 100 ms",
	  .rate_per_sec = 10, .burst = 3,
	  .steps = {
		  { MS(0), 1000, 3 },  /* a fresh budget starts full */
		  { MS(100), 5, 1 },
		  { MS(150), 5, 0 },   /* half a RST is not one */
		  { MS(200), 5, 1 },
		  { MS(1000000), 50, 3 }, /* a long idle refills to the depth only */
	  } },
	{ "RST budget 0/s: never a RST, whatever the depth",
	  .rate_per_sec = 0, .burst = 3,
	  .steps = { { MS(0), 20, 0 }, { MS(1000000), 20, 0 } } },
	{ "RST budget depth 0 holds one RST",
	  .rate_per_sec = 1, .burst = 0,
	  .steps = { { MS(0), 5, 1 }, { MS(500), 5, 0 }, { MS(1000), 5, 1 } } },
};

static void run_rst_budget(void **state)
{
	const struct rst_budget_case *c = *state;
	struct shedd_config cfg = cfg_rst;
	const struct rst_step *s;
	char name[256];

	cfg.rst_rate_per_sec = c->rate_per_sec;
	cfg.rst_burst = c->burst;
	if (reset_maps(&cfg, &rate_empty))
		fail_msg("%s: reset maps", c->name);
	for (s = c->steps; s < c->steps + ARRAY_SIZE(c->steps) && s->syns; s++) {
		struct shedd_stats before, after, want = {};
		unsigned int answered;

		snprintf(name, sizeof(name), "%s, at T0%+.6f s", c->name,
			 s->at_ns / 1e9);
		skel->bss->test_clock_ns = T0_NS + s->at_ns;
		read_stats(&before);
		answered = send_shed_syns(name, s->syns);
		read_stats(&after);
		expect(answered == s->answered, name,
		       "%u of %u shed SYNs answered, expected %u", answered,
		       s->syns, s->answered);
		want.packets = s->syns;
		want.cls[SHEDD_SHEDDABLE].syn = s->syns;
		want.cls[SHEDD_SHEDDABLE].charged = s->syns;
		want.cls[SHEDD_SHEDDABLE].rst_sent = s->answered;
		want.cls[SHEDD_SHEDDABLE].dropped = s->syns - s->answered;
		want.rst_limited = s->syns - s->answered;
		expect_delta(name, &before, &after, &want);
	}
}

/* A SYN with FIN or RST is not charged: the bucket is not even touched. */
static void test_bad_syn_spends_no_token(void **state)
{
	const char *name = "SYN+FIN and SYN+RST spend no token";
	const __u8 flags[] = { TCP_SYN | TCP_FIN, TCP_SYN | TCP_RST };
	struct shedd_reserve_state b;
	struct xdp_run r;
	struct pkt p;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		pkt_build(&p, &(struct pkt_spec){ V4, .flags = flags[i] });
		run_xdp(name, p.data, p.len, &r);
		expect_verdict(name, r.verdict, XDP_PASS);
	}
	b = read_reserve(SHEDD_SHEDDABLE);
	expect(b.tokens == 0 && b.last_ns == 0, name,
	       "the bucket was charged: %llu units at %llu ns",
	       (unsigned long long)b.tokens, (unsigned long long)b.last_ns);
	expect(send_syns(name, V4_OTHER, 1) == 1, name, "a pure SYN is admitted");
	b = read_reserve(SHEDD_SHEDDABLE);
	expect(b.last_ns == T0_NS, name, "a pure SYN refills the bucket at T0");
}

/* A class that sheds with a plain drop, on a CPU backed off from its empty
 * reserve: a SYN with a wrong checksum is dropped unchecked, counted as
 * shed (the kernel would drop it too, and nothing is charged or answered).
 * Where the class answers what it sheds (a RST), the checksum is checked
 * first, backed off or not. */
static void test_bad_csum_backed_off(void **state)
{
	static const struct {
		const char *name;
		const struct shedd_config *cfg;
		struct shedd_stats want; /* the mangled SYN's counters */
	} steps[] = {
		{ "backed off, shed by drop: a wrong checksum is not checked", &cfg_base,
		  { .cls[SHEDD_SHEDDABLE] = { .syn = 1, .charged = 1, .dropped = 1 } } },
		{ "backed off, shed with a RST: a wrong checksum is checked", &cfg_rst,
		  { .syn_bad_csum = 1 } },
	};
	/* Empty, and a CPU that finds it so asks again a lease later. */
	static const struct shedd_class_rate backoff = { .rate_per_sec = 0, .burst = 5,
							 .lease_ns = 1000000 };
	struct shedd_stats before, after, want;
	struct xdp_run r;
	struct pkt p;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		const char *name = steps[i].name;

		expect(reset_maps(steps[i].cfg, &backoff) == 0, name, "reset the maps");
		/* The first SYN finds the reserve empty: the CPU backs off. */
		pkt_build(&p, &(struct pkt_spec){ V4, .flags = TCP_SYN });
		run_xdp(name, p.data, p.len, &r);
		pkt_build(&p, &(struct pkt_spec){ V4, .flags = TCP_SYN, .sport = PKT_SPORT + 1 });
		mangle_tcp_csum(&p);
		read_stats(&before);
		run_xdp(name, p.data, p.len, &r);
		read_stats(&after);
		expect_verdict(name, r.verdict, XDP_DROP);
		want = steps[i].want;
		want.packets = 1;
		expect_delta_but(name, &before, &after, &want, &(struct shedd_stats){});
	}
}

/* ---- a network namespace of the test's own ------------------------------- */

/* Listeners on PROTECTED_PORT, IPv4 and IPv6, in the namespace of the test
 * process; the client and server addresses of packets.h are on its lo. */
static int listen_fds[2] = { -1, -1 };
/* A listener with a TCP-MD5 key for the client, an MPTCP listener (-1
 * where the kernel has no MPTCP), per family (run_signed()). */
static int md5_fds[2] = { -1, -1 }, mptcp_fds[2] = { -1, -1 };
static int listen_md5(int v6, __u16 port);
static int listen_mptcp(int v6, __u16 port);

/* struct in6_ifreq of <linux/ipv6.h>, which clashes with <netinet/in.h>. */
struct lo_in6_ifreq {
	struct in6_addr addr;
	__u32 prefixlen;
	int ifindex;
};

union sockaddr_inx {
	struct sockaddr sa;
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

static int lo_addr4(int fd, const char *label, const char *text)
{
	struct ifreq ifr = {};
	struct sockaddr_in sin = { .sin_family = AF_INET };

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", label);
	pkt_addr(AF_INET, text, (__u8 *)&sin.sin_addr);
	memcpy(&ifr.ifr_addr, &sin, sizeof(sin));
	return ioctl(fd, SIOCSIFADDR, &ifr);
}

static int lo_addr6(int fd, const char *text)
{
	struct lo_in6_ifreq r = { .prefixlen = 128, .ifindex = (int)if_nametoindex("lo") };

	pkt_addr(AF_INET6, text, (__u8 *)&r.addr);
	return ioctl(fd, SIOCSIFADDR, &r);
}

/* @addr (NULL: any) and @port of family @v6 into @a; its length. */
static socklen_t sockaddr_of(union sockaddr_inx *a, int v6, const char *addr, __u16 port)
{
	memset(a, 0, sizeof(*a));
	if (v6) {
		a->v6.sin6_family = AF_INET6;
		a->v6.sin6_port = htons(port);
		if (addr)
			pkt_addr(AF_INET6, addr, (__u8 *)&a->v6.sin6_addr);
		return sizeof(a->v6);
	}
	a->v4.sin_family = AF_INET;
	a->v4.sin_port = htons(port);
	if (addr)
		pkt_addr(AF_INET, addr, (__u8 *)&a->v4.sin_addr);
	return sizeof(a->v4);
}

static int listen_on(int v6, __u16 port, int backlog)
{
	union sockaddr_inx a;
	socklen_t len = sockaddr_of(&a, v6, NULL, port);
	int one = 1, fd;

	fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if ((v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    bind(fd, &a.sa, len) || listen(fd, backlog)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Two veth devices of the test's namespace (their peers too) for frames that come in on a
 * device other than lo, with the routes of the source check: what the
 * frames' sources are routed through, and forwarding on the first only
 * (bpf_fib_lookup() looks up nothing on a device that does not forward).
 * The commands act in this process's namespace only. */
static int dummy_setup(void)
{
	static const char *const cmds[] = {
		"ip link add shd0 type veth peer name shd0p",
		"ip link add shd1 type veth peer name shd1p",
		"ip link set shd0 up",
		"ip link set shd0p up",
		"ip link set shd1 up",
		"ip link set shd1p up",
		"ip addr add " V4_CP_LOCAL "/32 dev shd0",
		"ip route add 198.18.1.0/26 dev shd0",
		"ip route add 198.18.1.64/26 dev shd1",
		"ip -6 route add 2001:db8:1::/64 dev shd0",
		"ip -6 route add 2001:db8:1:1::/64 dev shd1",
		"sysctl -qw net.ipv4.conf.shd0.forwarding=1",
		"sysctl -qw net.ipv6.conf.shd0.forwarding=1",
		"sysctl -qw net.ipv4.conf.shd1.forwarding=0",
		"sysctl -qw net.ipv6.conf.shd1.forwarding=0",
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		if (system(cmds[i]) != 0) {
			print_error("test namespace: '%s' failed\n", cmds[i]);
			return -1;
		}
	}
	for (i = 0; i < 2; i++) {
		dummy_ifindex[i] = (int)if_nametoindex(DUMMY_DEV[i]);
		if (!dummy_ifindex[i]) {
			print_error("test namespace: no %s: %s\n", DUMMY_DEV[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* A namespace of this process's own: BPF_PROG_TEST_RUN hands the program
 * the loopback device of the caller's namespace, so the socket lookups of
 * the verified path see what is made here, and nothing of the host's. */
static int netns_setup(void)
{
	struct ifreq ifr = {};
	int fd4 = -1, fd6 = -1, err = -1;

	if (unshare(CLONE_NEWNET)) {
		print_error("unshare(CLONE_NEWNET): %s\n", strerror(errno));
		return -1;
	}
	fd4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (fd4 < 0 || fd6 < 0 || ioctl(fd4, SIOCGIFFLAGS, &ifr))
		goto out;
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(fd4, SIOCSIFFLAGS, &ifr) || lo_addr4(fd4, "lo:1", PKT_V4_SERVER) ||
	    lo_addr4(fd4, "lo:2", PKT_V4_CLIENT) || lo_addr6(fd6, PKT_V6_SERVER) ||
	    lo_addr6(fd6, PKT_V6_CLIENT))
		goto out;
	if (dummy_setup())
		goto out;
	listen_fds[0] = listen_on(0, PROTECTED_PORT, 16);
	listen_fds[1] = listen_on(1, PROTECTED_PORT, 16);
	md5_fds[0] = listen_md5(0, MD5_PORT);
	md5_fds[1] = listen_md5(1, MD5_PORT);
	mptcp_fds[0] = listen_mptcp(0, MPTCP_PORT);
	mptcp_fds[1] = listen_mptcp(1, MPTCP_PORT);
	if (listen_fds[0] >= 0 && listen_fds[1] >= 0 && md5_fds[0] >= 0 && md5_fds[1] >= 0 &&
	    mptcp_fds[0] != -1 && mptcp_fds[1] != -1)
		err = 0;
out:
	if (err)
		print_error("set up the test's network namespace: %s\n", strerror(errno));
	if (fd4 >= 0)
		close(fd4);
	if (fd6 >= 0)
		close(fd6);
	return err;
}

/* A real connection from the client address and @sport to @dport; the
 * client's socket. */
static int connect_to(const char *name, int v6, __u16 sport, __u16 dport)
{
	union sockaddr_inx src, dst;
	socklen_t len = sockaddr_of(&src, v6, v6 ? PKT_V6_CLIENT : PKT_V4_CLIENT, sport);
	int one = 1, fd;

	sockaddr_of(&dst, v6, v6 ? PKT_V6_SERVER : PKT_V4_SERVER, dport);
	fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	expect(fd >= 0, name, "socket: %s", strerror(errno));
	expect(setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0, name,
	       "SO_REUSEADDR: %s", strerror(errno));
	expect(bind(fd, &src.sa, len) == 0, name, "bind the client: %s", strerror(errno));
	expect(connect(fd, &dst.sa, len) == 0, name, "connect: %s", strerror(errno));
	return fd;
}

/* A real connection from the client address and @sport to the listener;
 * returns the client's socket, the server's in @sfd. */
static int connect_from_client(const char *name, int v6, __u16 sport, int *sfd)
{
	int fd = connect_to(name, v6, sport, PROTECTED_PORT);

	*sfd = accept4(listen_fds[v6], NULL, NULL, SOCK_CLOEXEC);
	expect(*sfd >= 0, name, "accept: %s", strerror(errno));
	return fd;
}

/* ---- verified admission: SYN cookies ------------------------------------- */

/* Runs in a network namespace of its own (netns_setup()): BPF_PROG_TEST_RUN
 * gives the program the loopback device of the caller's namespace, so
 * bpf_skc_lookup_tcp() sees the listeners and connections made here. */

#define TSVAL 0xa1b2c3d4u /* the timestamp value of every client below */
#define TS_OPT(val, ecr) 8, 10, (__u8)((val) >> 24), (__u8)((val) >> 16),      \
	(__u8)((val) >> 8), (__u8)(val), (__u8)((ecr) >> 24),                  \
	(__u8)((ecr) >> 16), (__u8)((ecr) >> 8), (__u8)(ecr)
#define OPTS(a) .opt_bytes = (a), .opt_len = sizeof(a)

/* TCP options of SYNs, as stacks send them. */
/* Linux: MSS 1460, SACK permitted, timestamps, NOP, window scale 7. */
static const __u8 opt_linux[] = { 2, 4, 0x05, 0xb4, 4, 2, TS_OPT(TSVAL, 0), 1, 3, 3, 7 };
/* The same with the MSS of an IPv6 path, 1440. */
static const __u8 opt_linux6[] = { 2, 4, 0x05, 0xa0, 4, 2, TS_OPT(TSVAL, 0), 1, 3, 3, 7 };
/* BSD and macOS order: MSS, NOP, WS 6, NOP, NOP, TS, SACK permitted, EOL. */
static const __u8 opt_bsd[] = { 2, 4, 0x05, 0xb4, 1, 3, 3, 6, 1, 1, TS_OPT(TSVAL, 0),
				4, 2, 0, 0 };
static const __u8 opt_mss1400[] = { 2, 4, 0x05, 0x78 };
static const __u8 opt_mss500[] = { 2, 4, 0x01, 0xf4 };
/* A jumbo path: MSS 9000 with the Linux set. */
static const __u8 opt_jumbo[] = { 2, 4, 0x23, 0x28, 4, 2, TS_OPT(TSVAL, 0), 1, 3, 3, 7 };
/* Timestamps without SACK or window scaling. */
static const __u8 opt_mss_ts[] = { 2, 4, 0x05, 0xb4, 1, 1, TS_OPT(TSVAL, 0) };
/* SACK and timestamps, no window scaling. */
static const __u8 opt_sack_ts[] = { 2, 4, 0x05, 0xa0, 4, 2, TS_OPT(TSVAL, 0) };
/* Timestamps and window scale 0, no SACK; MSS 1300. */
static const __u8 opt_ts_ws0[] = { 2, 4, 0x05, 0x14, 1, 1, TS_OPT(TSVAL, 0), 1, 3, 3, 0 };
/* Window scale and SACK permitted, but no timestamps to carry them. */
static const __u8 opt_no_ts[] = { 2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2, 1, 1 };
/* Window scale 15, above RFC 7323's limit of 14. */
static const __u8 opt_ws15[] = { 2, 4, 0x05, 0xb4, 4, 2, TS_OPT(TSVAL, 0), 1, 3, 3, 15 };

/* What the SYN-ACK must carry. */
struct synack_want {
	__u16 mss;      /* MSS option: the cookie helper's, from its table */
	__u8 mss_idx;   /* its index in SHEDD_MSS4 / SHEDD_MSS6 */
	__u8 ts;        /* timestamps (the SYN had them), echoing TSVAL */
	__u8 sack;      /* SACK permitted */
	__u8 ws;        /* a window scale option, VERIFY_WSCALE */
	__u8 client_ws; /* timestamp bits 0-3: the client's scale, 0xf none */
	__u8 ecn;       /* ECE in the SYN-ACK and SHEDD_TS_ECN */
	__u16 adv_mss;  /* the MSS option when the interface caps it (0: mss) */
};

#define FULL4 { .mss = 1460, .mss_idx = 3, .ts = 1, .sack = 1, .ws = 1, .client_ws = 7 }
#define FULL6 { .mss = 1440, .mss_idx = 2, .ts = 1, .sack = 1, .ws = 1, .client_ws = 7 }

/* What a test keeps of a SYN-ACK to answer it. */
struct synack_info {
	__u32 cookie; /* its seq */
	__u32 tsval;  /* its timestamp value (0: none) */
	int ts;
};

/* Check @r, the answer to the SYN @in, byte by byte; the SYN's options are
 * described by @w. The options are those the kernel's tcp_options_write()
 * puts in a SYN-ACK, in its order; the timestamp value is checked in the
 * bits that carry the client's options, the rest is the sender's clock. */
static void expect_synack(const char *name, const struct pkt *in,
			  const struct xdp_run *r, const struct shedd_config *cfg,
			  const struct synack_want *w, struct synack_info *info)
{
	const struct pkt_eth *ie = (const void *)in->data;
	const struct pkt_eth *oe = (const void *)r->out;
	int v6 = in->l3_proto == ETH_P_IPV6;
	size_t l2 = in->l3_off;
	size_t l3 = v6 ? sizeof(struct pkt_ipv6) : sizeof(struct pkt_ipv4);
	size_t olen = 0, ts_off = 0, tcp_len, i;
	int tc = cfg->handoff == SHEDD_HANDOFF_TC;
	__u32 tsval, bits, mask;
	const struct pkt_tcp *ot;
	const __u8 *oo;
	__u8 opts[40];
	__u16 sum;

	expect(w->mss == (v6 ? SHEDD_MSS6(w->mss_idx) : SHEDD_MSS4(w->mss_idx)), name,
	       "test table: MSS %u is not entry %u of the table", w->mss, w->mss_idx);
	opts[olen++] = 2;
	opts[olen++] = 4;
	opts[olen++] = (__u8)((w->adv_mss ? w->adv_mss : w->mss) >> 8);
	opts[olen++] = (__u8)(w->adv_mss ? w->adv_mss : w->mss);
	if (w->ts) {
		opts[olen++] = w->sack ? 4 : 1; /* SACK permitted, or NOP NOP */
		opts[olen++] = w->sack ? 2 : 1;
		opts[olen++] = 8;
		opts[olen++] = 10;
		ts_off = olen;
		memset(opts + olen, 0, 4); /* the value: checked below */
		olen += 4;
		opts[olen++] = (__u8)(TSVAL >> 24);
		opts[olen++] = (__u8)(TSVAL >> 16);
		opts[olen++] = (__u8)(TSVAL >> 8);
		opts[olen++] = (__u8)TSVAL;
	}
	if (w->ws) {
		opts[olen++] = 1;
		opts[olen++] = 3;
		opts[olen++] = 3;
		opts[olen++] = cfg->wscale;
	}
	tcp_len = sizeof(struct pkt_tcp) + olen;

	expect(r->out_len == l2 + l3 + tcp_len, name,
	       "SYN-ACK is %zu bytes, expected %zu (%zu of TCP header)", r->out_len,
	       l2 + l3 + tcp_len, tcp_len);
	expect(memcmp(oe->dst, ie->src, ETH_ALEN) == 0, name,
	       "destination MAC is not the SYN's source");
	expect(memcmp(oe->src, ie->dst, ETH_ALEN) == 0, name,
	       "source MAC is not the SYN's destination");
	expect(oe->proto == ie->proto, name, "ethertype 0x%04x, expected 0x%04x",
	       ntohs(oe->proto), ntohs(ie->proto));
	expect(memcmp(r->out + sizeof(*oe), in->data + sizeof(*ie),
		      l2 - sizeof(*ie)) == 0, name, "VLAN tags were not kept");

	if (!v6) {
		const struct pkt_ipv4 *ip = (const void *)(r->out + l2);

		expect(ip->ver_ihl == 0x45, name, "IPv4 version/ihl 0x%02x, expected 0x45",
		       ip->ver_ihl);
		expect(ntohs(ip->tot_len) == l3 + tcp_len, name,
		       "IPv4 tot_len %u, expected %zu", ntohs(ip->tot_len), l3 + tcp_len);
		expect(ntohs(ip->frag_off) == PKT_IP_DF, name,
		       "IPv4 frag_off 0x%04x, expected DF alone (0x4000)",
		       ntohs(ip->frag_off));
		expect(ip->ttl == 64, name, "TTL %u, expected 64", ip->ttl);
		expect(ip->protocol == IPPROTO_TCP, name, "IPv4 protocol %u, expected 6",
		       ip->protocol);
		expect(memcmp(ip->saddr, in->daddr, 4) == 0, name,
		       "IPv4 source is not the SYN's destination");
		expect(memcmp(ip->daddr, in->saddr, 4) == 0, name,
		       "IPv4 destination is not the SYN's source");
		sum = pkt_ipv4_csum(ip, sizeof(*ip));
		expect(ntohs(ip->check) == sum, name,
		       "IPv4 header checksum 0x%04x, expected 0x%04x",
		       ntohs(ip->check), sum);
	} else {
		const struct pkt_ipv6 *ip6 = (const void *)(r->out + l2);

		expect(ntohl(ip6->ver_tc_flow) >> 28 == 6, name, "IPv6 version %u",
		       ntohl(ip6->ver_tc_flow) >> 28);
		expect(ntohs(ip6->payload_len) == tcp_len, name,
		       "IPv6 payload_len %u, expected %zu", ntohs(ip6->payload_len),
		       tcp_len);
		expect(ip6->nexthdr == IPPROTO_TCP, name,
		       "IPv6 nexthdr %u, expected 6", ip6->nexthdr);
		expect(ip6->hop_limit == 64, name, "hop limit %u, expected 64",
		       ip6->hop_limit);
		expect(memcmp(ip6->saddr, in->daddr, 16) == 0, name,
		       "IPv6 source is not the SYN's destination");
		expect(memcmp(ip6->daddr, in->saddr, 16) == 0, name,
		       "IPv6 destination is not the SYN's source");
	}

	ot = (const void *)(r->out + l2 + l3);
	oo = (const __u8 *)(ot + 1);
	expect(ntohs(ot->sport) == in->dport, name, "TCP source port %u, expected %u",
	       ntohs(ot->sport), in->dport);
	expect(ntohs(ot->dport) == in->sport, name,
	       "TCP destination port %u, expected %u", ntohs(ot->dport), in->sport);
	expect(ntohl(ot->ack_seq) == in->seq + 1, name, "ack %u, expected ISN + 1 = %u",
	       ntohl(ot->ack_seq), in->seq + 1);
	expect(ot->doff_res == (__u8)(tcp_len / 4 << 4), name,
	       "data offset/reserved byte 0x%02x, expected 0x%02x", ot->doff_res,
	       (unsigned int)(tcp_len / 4 << 4));
	expect(ot->flags == (TCP_SYN | TCP_ACK | (w->ecn ? TCP_ECE : 0)), name,
	       "TCP flags 0x%02x, expected 0x%02x", ot->flags,
	       TCP_SYN | TCP_ACK | (w->ecn ? TCP_ECE : 0));
	/* tcp_select_initial_window(): 64 KiB of space in whole segments of
	 * the offered MSS less the timestamp, at most 65535. */
	{
		__u32 seg = (w->adv_mss ? w->adv_mss : w->mss) - (w->ts ? 12 : 0);
		__u32 win = 65536 - 65536 % seg;

		if (win > 65535)
			win = 65535;
		expect(ntohs(ot->window) == win, name, "window %u, expected %u",
		       ntohs(ot->window), win);
	}
	expect(ot->urg_ptr == 0, name, "urgent pointer %u", ntohs(ot->urg_ptr));
	sum = pkt_l4_csum(v6, in->daddr, in->saddr, IPPROTO_TCP, ot, tcp_len,
			  offsetof(struct pkt_tcp, check));
	expect(ntohs(ot->check) == sum, name, "TCP checksum 0x%04x, expected 0x%04x",
	       ntohs(ot->check), sum);
	for (i = 0; i < olen; i++) {
		if (w->ts && i >= ts_off && i < ts_off + 4)
			continue;
		expect(oo[i] == opts[i], name,
		       "TCP option byte %zu is %u, expected %u (options %02x %02x %02x %02x ...)",
		       i, oo[i], opts[i], oo[0], oo[1], oo[2], oo[3]);
	}

	info->cookie = ntohl(ot->seq);
	info->ts = w->ts;
	info->tsval = 0;
	if (!w->ts)
		return;
	memcpy(&tsval, oo + ts_off, 4);
	tsval = ntohl(tsval);
	info->tsval = tsval;
	bits = (w->client_ws & SHEDD_TS_WSCALE_MASK) | (w->sack ? SHEDD_TS_SACK : 0) |
	       (w->ecn ? SHEDD_TS_ECN : 0);
	mask = (1U << SHEDD_TS_KERNEL_BITS) - 1;
	if (tc) {
		bits |= (__u32)w->mss_idx << SHEDD_TS_MSS_SHIFT;
		mask = (1U << SHEDD_TS_TC_BITS) - 1;
	}
	expect((tsval & mask) == bits, name,
	       "timestamp value 0x%08x: low bits 0x%02x, expected 0x%02x (%s hand-off)",
	       tsval, tsval & mask, bits, tc ? "tc" : "kernel");
	/* For the tc hand-off the rest is shedd's tag of the cookie, under
	 * its own key: what tells its cookies from the kernel's. */
	if (tc) {
		__u32 tag = shedd_ts_tag(flow_hash_of(in->saddr, in->daddr, v6 ? 4 : 1, in->sport,
						      in->dport), info->cookie);

		expect((tsval & SHEDD_TS_TAG_MASK) == tag, name,
		       "timestamp value 0x%08x: tag 0x%08x, expected 0x%08x", tsval,
		       tsval & SHEDD_TS_TAG_MASK, tag);
	}
}

/* Send the SYN of @spec, expect a SYN-ACK as @w says, return what the ACK
 * needs. */
static void get_synack(const char *name, const struct pkt_spec *spec,
		       const struct shedd_config *cfg, const struct synack_want *w,
		       struct synack_info *info)
{
	struct xdp_run r;
	struct pkt syn;

	pkt_build(&syn, spec);
	run_xdp(name, syn.data, syn.len, &r);
	expect_verdict(name, r.verdict, XDP_TX);
	expect_synack(name, &syn, &r, cfg, w, info);
}

/* The ACK a client sends for the SYN-ACK @info to the SYN of @syn: seq
 * ISN + 1, ack cookie + 1, a timestamp echo if there were timestamps. */
static void build_cookie_ack(struct pkt *ack, const struct pkt_spec *syn,
			     const struct synack_info *info)
{
	const __u8 ts[12] = { 1, 1, TS_OPT(TSVAL + 1, info->tsval) };
	struct pkt_spec s = *syn;

	s.flags = TCP_ACK;
	s.seq = (syn->seq ? syn->seq : PKT_SEQ) + 1;
	s.ack_seq = info->cookie + 1;
	s.payload_len = 0;
	s.tcp_opts = 0;
	s.opt_bytes = info->ts ? ts : NULL;
	s.opt_len = info->ts ? sizeof(ts) : 0;
	pkt_build(ack, &s);
}

struct synack_case {
	const char *name;
	struct pkt_spec pkt;
	const struct shedd_config *cfg; /* NULL: cfg_vtc */
	struct synack_want want;
};

static const struct synack_case synack_cases[] = {
	{ "cookie: IPv4 Linux SYN, tc hand-off: MSS, SACK, TS, WS",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_linux) }, .want = FULL4 },
	{ "cookie: IPv4 Linux SYN, kernel hand-off: MSS, SACK, TS, WS",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_linux) }, .cfg = &cfg_vkernel,
	  .want = FULL4 },
	{ "cookie: IPv4 Linux SYN on an MTU 1280 interface: MSS option 1240, cookie 1460",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_linux) }, .cfg = &cfg_vtc_mtu,
	  .want = { .mss = 1460, .mss_idx = 3, .ts = 1, .sack = 1, .ws = 1, .client_ws = 7,
		    .adv_mss = 1240 } },
	{ "cookie: IPv6 Linux SYN on an MTU 1280 interface: MSS option 1220, cookie 1440",
	  .pkt = { V6, .flags = TCP_SYN, OPTS(opt_linux6) }, .cfg = &cfg_vtc_mtu,
	  .want = { .mss = 1440, .mss_idx = 2, .ts = 1, .sack = 1, .ws = 1, .client_ws = 7,
		    .adv_mss = 1220 } },
	{ "cookie: IPv6 Linux SYN, tc hand-off",
	  .pkt = { V6, .flags = TCP_SYN, OPTS(opt_linux6) }, .want = FULL6 },
	{ "cookie: IPv6 Linux SYN, kernel hand-off",
	  .pkt = { V6, .flags = TCP_SYN, OPTS(opt_linux6) }, .cfg = &cfg_vkernel,
	  .want = FULL6 },
	{ "cookie: 802.1Q IPv4 SYN: tag kept",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 1, OPTS(opt_linux) }, .want = FULL4 },
	{ "cookie: 802.1ad+802.1Q IPv4 SYN: both tags kept",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 2, OPTS(opt_linux) }, .want = FULL4 },
	{ "cookie: 802.1ad+802.1Q IPv6 SYN, kernel hand-off: both tags kept",
	  .pkt = { V6, .flags = TCP_SYN, .vlans = 2, OPTS(opt_linux6) },
	  .cfg = &cfg_vkernel, .want = FULL6 },
	{ "cookie: 3 priority tags, IPv4 SYN: tags kept",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 3, .vid0 = 1, OPTS(opt_linux) },
	  .want = FULL4 },
	{ "cookie: 8 priority tags, IPv6 SYN, kernel hand-off: tags kept",
	  .pkt = { V6, .flags = TCP_SYN, .vlans = 8, .vid0 = 1, OPTS(opt_linux6) },
	  .cfg = &cfg_vkernel, .want = FULL6 },
	{ "cookie: 8 VLAN tags, IPv4 SYN with IP options, without TCP options",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 8, .ip_opt_len = 12 },
	  .want = { .mss = 536, .mss_idx = 0 } },
	{ "cookie: IPv4 SYN with 12 bytes of IP options: ihl 5 in the SYN-ACK",
	  .pkt = { V4, .flags = TCP_SYN, .ip_opt_len = 12, OPTS(opt_linux) },
	  .want = FULL4 },
	{ "cookie: IPv6 SYN after hop-by-hop, routing, dest-options: headers dropped",
	  .pkt = { V6, .flags = TCP_SYN, EXT3, OPTS(opt_linux6) }, .want = FULL6 },
	{ "cookie: IPv6 SYN behind a 552-byte chain (routing type 253, options): chain dropped",
	  .pkt = { V6, .flags = TCP_SYN, CHAIN_552, OPTS(opt_linux6) }, .want = FULL6 },
	{ "cookie: IPv6 SYN behind a 2608-byte chain, kernel hand-off: chain dropped",
	  .pkt = { V6, .flags = TCP_SYN, CHAIN_2608, OPTS(opt_linux6) }, .cfg = &cfg_vkernel,
	  .want = FULL6 },
	{ "cookie: IPv4 SYN with 10 bytes of data: none in the SYN-ACK, not acked",
	  .pkt = { V4, .flags = TCP_SYN, .payload_len = 10, OPTS(opt_linux) },
	  .want = FULL4 },
	{ "cookie: IPv4 SYN without options, MTU 1500: MSS option 1460 (advmss), cookie 536",
	  .pkt = { V4, .flags = TCP_SYN }, .cfg = &cfg_vtc_1500,
	  .want = { .mss = 536, .mss_idx = 0, .adv_mss = 1460 } },
	{ "cookie: IPv6 SYN without options, MTU 1500: MSS option 1440 (advmss), cookie 1220",
	  .pkt = { V6, .flags = TCP_SYN }, .cfg = &cfg_vtc_1500,
	  .want = { .mss = 1220, .mss_idx = 0, .adv_mss = 1440 } },
	{ "cookie: IPv4 SYN with MSS 1400, MTU 1500: MSS option 1460, cookie 1300",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_mss1400) }, .cfg = &cfg_vtc_1500,
	  .want = { .mss = 1300, .mss_idx = 1, .adv_mss = 1460 } },
	{ "cookie: IPv4 Linux SYN, tcp_timestamps=0: MSS alone",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_linux) }, .cfg = &cfg_vtc_nots,
	  .want = { .mss = 1460, .mss_idx = 3 } },
	{ "cookie: IPv6 ECN SYN, tcp_timestamps=0: MSS alone, no ECE",
	  .pkt = { V6, .flags = TCP_SYN | TCP_ECE | TCP_CWR, OPTS(opt_linux6) },
	  .cfg = &cfg_vtc_nots, .want = { .mss = 1440, .mss_idx = 2 } },
	{ "cookie: IPv4 Linux SYN, tcp_sack=0: NOP NOP TS WS, no SACK in the timestamp",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_linux) }, .cfg = &cfg_vtc_nosack,
	  .want = { .mss = 1460, .mss_idx = 3, .ts = 1, .ws = 1, .client_ws = 7 } },
	{ "cookie: IPv6 Linux SYN, tcp_sack=0, kernel hand-off: no SACK",
	  .pkt = { V6, .flags = TCP_SYN, OPTS(opt_linux6) }, .cfg = &cfg_vkernel_nosack,
	  .want = { .mss = 1440, .mss_idx = 2, .ts = 1, .ws = 1, .client_ws = 7 } },
	{ "cookie: IPv4 Linux SYN, tcp_window_scaling=0: SACK TS, no WS, none in the timestamp",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_linux) }, .cfg = &cfg_vtc_nows,
	  .want = { .mss = 1460, .mss_idx = 3, .ts = 1, .sack = 1, .client_ws = 0xf } },
	{ "cookie: IPv4 SYN without options grows to a 24-byte TCP header, MSS 536",
	  .pkt = { V4, .flags = TCP_SYN }, .want = { .mss = 536, .mss_idx = 0 } },
	{ "cookie: IPv6 SYN without options: MSS 1220",
	  .pkt = { V6, .flags = TCP_SYN }, .want = { .mss = 1220, .mss_idx = 0 } },
	{ "cookie: 802.1ad+802.1Q IPv4 SYN without options, kernel hand-off",
	  .pkt = { V4, .flags = TCP_SYN, .vlans = 2 }, .cfg = &cfg_vkernel,
	  .want = { .mss = 536, .mss_idx = 0 } },
	{ "cookie: IPv4 SYN with only MSS 1400: MSS 1300",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_mss1400) },
	  .want = { .mss = 1300, .mss_idx = 1 } },
	{ "cookie: IPv6 SYN with only MSS 1400: MSS 1220",
	  .pkt = { V6, .flags = TCP_SYN, OPTS(opt_mss1400) },
	  .want = { .mss = 1220, .mss_idx = 0 } },
	{ "cookie: IPv4 SYN with MSS 500, below the table: MSS 536",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_mss500) },
	  .want = { .mss = 536, .mss_idx = 0 } },
	{ "cookie: IPv6 SYN with MSS 9000: MSS 8940",
	  .pkt = { V6, .flags = TCP_SYN, OPTS(opt_jumbo) },
	  .want = { .mss = 8940, .mss_idx = 3, .ts = 1, .sack = 1, .ws = 1, .client_ws = 7 } },
	{ "cookie: IPv4 SYN with timestamps only: NOP NOP TS, no SACK, no WS",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_mss_ts) },
	  .want = { .mss = 1460, .mss_idx = 3, .ts = 1, .client_ws = 0xf } },
	{ "cookie: IPv6 SYN with SACK and timestamps, no window scaling",
	  .pkt = { V6, .flags = TCP_SYN, OPTS(opt_sack_ts) },
	  .want = { .mss = 1440, .mss_idx = 2, .ts = 1, .sack = 1, .client_ws = 0xf } },
	{ "cookie: IPv4 SYN with timestamps and window scale 0, no SACK, MSS 1300",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_ts_ws0) },
	  .want = { .mss = 1300, .mss_idx = 1, .ts = 1, .ws = 1, .client_ws = 0 } },
	{ "cookie: IPv4 SYN with SACK and WS but no timestamps: MSS only",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_no_ts) },
	  .want = { .mss = 1460, .mss_idx = 3 } },
	{ "cookie: IPv4 SYN in BSD option order: the kernel's order back",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_bsd) },
	  .want = { .mss = 1460, .mss_idx = 3, .ts = 1, .sack = 1, .ws = 1, .client_ws = 6 } },
	/* RFC 7323: a shift above 14 is used as 14 (the kernel's
	 * tcp_parse_options); 15 would read as "no window scaling". */
	{ "cookie: IPv4 SYN with window scale 15: carried as 14",
	  .pkt = { V4, .flags = TCP_SYN, OPTS(opt_ws15) },
	  .want = { .mss = 1460, .mss_idx = 3, .ts = 1, .sack = 1, .ws = 1, .client_ws = 14 } },
	{ "cookie: IPv4 ECN SYN (ECE, CWR), ECN on: ECE and the ECN bit",
	  .pkt = { V4, .flags = TCP_SYN | TCP_ECE | TCP_CWR, OPTS(opt_linux) },
	  .want = { .mss = 1460, .mss_idx = 3, .ts = 1, .sack = 1, .ws = 1, .client_ws = 7,
		    .ecn = 1 } },
	{ "cookie: IPv6 ECN SYN, ECN on, kernel hand-off",
	  .pkt = { V6, .flags = TCP_SYN | TCP_ECE | TCP_CWR, OPTS(opt_linux6) },
	  .cfg = &cfg_vkernel,
	  .want = { .mss = 1440, .mss_idx = 2, .ts = 1, .sack = 1, .ws = 1, .client_ws = 7,
		    .ecn = 1 } },
	{ "cookie: IPv4 ECN SYN, ECN off: no ECE",
	  .pkt = { V4, .flags = TCP_SYN | TCP_ECE | TCP_CWR, OPTS(opt_linux) },
	  .cfg = &cfg_vtc_noecn, .want = FULL4 },
	{ "cookie: IPv4 SYN with ECE alone is no ECN setup: no ECE",
	  .pkt = { V4, .flags = TCP_SYN | TCP_ECE, OPTS(opt_linux) }, .want = FULL4 },
	/* Without a timestamp the ACK cannot carry ECN back: the kernel's
	 * cookie SYN-ACK then offers none (tcp_conn_request clears ecn_ok). */
	{ "cookie: IPv4 ECN SYN without timestamps: no ECE",
	  .pkt = { V4, .flags = TCP_SYN | TCP_ECE | TCP_CWR, OPTS(opt_mss1400) },
	  .want = { .mss = 1300, .mss_idx = 1 } },
};

static int synack_setup(void **state)
{
	const struct synack_case *c = *state;

	return reset_maps(c->cfg ? c->cfg : &cfg_vtc, NULL);
}

/* A SYN answered with a cookie: the SYN-ACK byte by byte, no token spent;
 * the same SYN again gets the same cookie; the client's ACK back proves it
 * and is charged and admitted. */
static void run_synack(void **state)
{
	const struct synack_case *c = *state;
	const struct shedd_config *cfg = c->cfg ? c->cfg : &cfg_vtc;
	const __u32 cls = SHEDD_SHEDDABLE;
	struct shedd_stats before, after, want = {}, any = {};
	struct synack_info info, again, third;
	char name[256];
	struct xdp_run r;
	struct pkt syn, ack;

	/* The kernel hand-off's stamp refresh is left open. */
	any.refreshed = cfg->handoff == SHEDD_HANDOFF_KERNEL;

	pkt_build(&syn, &c->pkt);
	read_stats(&before);
	run_xdp(c->name, syn.data, syn.len, &r);
	read_stats(&after);
	expect_verdict(c->name, r.verdict, XDP_TX);
	want.packets = 1;
	want.cls[cls].syn = 1;
	want.cls[cls].cookie_sent = 1;
	expect_delta_but(c->name, &before, &after, &want, &any);
	expect_synack(c->name, &syn, &r, cfg, &c->want, &info);

	/* The cookie's counter moves once a minute (tcp_cookie_time()): if
	 * two answers straddle the tick, a third must match the second. */
	snprintf(name, sizeof(name), "%s, sent again", c->name);
	get_synack(name, &c->pkt, cfg, &c->want, &again);
	if (again.cookie != info.cookie) {
		get_synack(name, &c->pkt, cfg, &c->want, &third);
		expect(third.cookie == again.cookie, name,
		       "the same SYN got cookies 0x%08x, 0x%08x, 0x%08x", info.cookie,
		       again.cookie, third.cookie);
		info = third;
	}

	snprintf(name, sizeof(name), "%s, then the client's ACK", c->name);
	build_cookie_ack(&ack, &c->pkt, &info);
	read_stats(&before);
	run_xdp(name, ack.data, ack.len, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, XDP_PASS);
	expect(r.out_len == ack.len && memcmp(r.out, ack.data, ack.len) == 0, name,
	       "an admitted ACK must be left as it was");
	memset(&want, 0, sizeof(want));
	want.packets = 1;
	want.ack_probed = 1;
	want.cls[cls].ack_valid = 1;
	want.cls[cls].charged = 1;
	want.cls[cls].ack_admitted = 1;
	any.non_syn = 1;
	expect_delta_but(name, &before, &after, &want, &any);
}

/* The cookie is a function of the flow: another source port, another
 * cookie. */
static void test_cookie_per_flow(void **state)
{
	const char *name = "cookie: another flow gets another cookie";
	const struct synack_want w = FULL4;
	struct pkt_spec spec = { V4, .flags = TCP_SYN, OPTS(opt_linux) };
	struct synack_info a, b;

	(void)state;
	get_synack(name, &spec, &cfg_vtc, &w, &a);
	spec.sport = PKT_SPORT + 1;
	get_synack(name, &spec, &cfg_vtc, &w, &b);
	expect(a.cookie != b.cookie, name, "ports %u and %u got the same cookie 0x%08x",
	       PKT_SPORT, PKT_SPORT + 1, a.cookie);
}

/* An ACK that does not return this host's cookie for its flow is dropped
 * at the door and counted; the genuine one still passes afterwards. */
static void test_forged_cookies(void **state)
{
	static const struct {
		const char *what;
		__u32 seq_add, ack_xor;
		__u16 sport_add;
		const char *saddr;
	} forged[] = {
		/* The sequence number is added into the cookie: seq + 1 only
		 * moves the MSS index down by one, and is still a valid
		 * cookie (for every index but 0); seq + 256 is not. */
		{ "seq + 256", .seq_add = 256 },
		/* Bits below the counter's (24-31): the MSS index and hash. */
		{ "cookie bit 8 flipped", .ack_xor = 1U << 8 },
		{ "cookie bit 16 flipped", .ack_xor = 1U << 16 },
		{ "cookie bit 2 flipped", .ack_xor = 1U << 2 },
		{ "another source port", .sport_add = 1 },
		{ "another source address", .saddr = "" },
	};
	const __u32 cls = SHEDD_SHEDDABLE;
	int v6;

	(void)state;
	for (v6 = 0; v6 <= 1; v6++) {
		const struct synack_want w4 = FULL4, w6 = FULL6;
		struct pkt_spec spec = { .l3 = v6 ? ETH_P_IPV6 : ETH_P_IP, .flags = TCP_SYN };
		struct shedd_stats before, after, want = {}, any = { .non_syn = 1 };
		struct synack_info info;
		struct xdp_run r;
		char name[256];
		struct pkt ack;
		size_t i;

		if (v6) {
			spec.opt_bytes = opt_linux6;
			spec.opt_len = sizeof(opt_linux6);
		} else {
			spec.opt_bytes = opt_linux;
			spec.opt_len = sizeof(opt_linux);
		}
		get_synack("forged cookies: the SYN", &spec, &cfg_vtc, v6 ? &w6 : &w4, &info);
		for (i = 0; i < ARRAY_SIZE(forged); i++) {
			struct pkt_spec as = spec;
			struct synack_info fi = info;

			snprintf(name, sizeof(name), "forged cookie, IPv%d: %s", v6 ? 6 : 4,
				 forged[i].what);
			as.seq = (spec.seq ? spec.seq : PKT_SEQ) + forged[i].seq_add;
			fi.cookie ^= forged[i].ack_xor;
			as.sport = (__u16)((spec.sport ? spec.sport : PKT_SPORT) +
					   forged[i].sport_add);
			if (forged[i].saddr)
				as.saddr = v6 ? "2001:db8:ffff::11" : "198.18.0.11";
			build_cookie_ack(&ack, &as, &fi);
			read_stats(&before);
			run_xdp(name, ack.data, ack.len, &r);
			read_stats(&after);
			expect_verdict(name, r.verdict, XDP_DROP);
			want.packets = 1;
			want.ack_probed = 1;
			want.cls[cls].ack_invalid = 1;
			expect_delta_but(name, &before, &after, &want, &any);
		}

		snprintf(name, sizeof(name), "forged cookies, IPv%d: the genuine ACK after them",
			 v6 ? 6 : 4);
		build_cookie_ack(&ack, &spec, &info);
		run_xdp(name, ack.data, ack.len, &r);
		expect_verdict(name, r.verdict, XDP_PASS);
	}
}

/* Check @r, the RST that refuses the proven ACK @ack: RFC 793's
 * <SEQ=SEG.ACK><CTL=RST> for an ACK that reaches no connection. */
static void expect_ack_rst(const char *name, const struct pkt *ack, __u32 ack_seq,
			   const struct xdp_run *r)
{
	const struct pkt_eth *ie = (const void *)ack->data;
	const struct pkt_eth *oe = (const void *)r->out;
	int v6 = ack->l3_proto == ETH_P_IPV6;
	size_t l2 = ack->l3_off;
	size_t l3 = v6 ? sizeof(struct pkt_ipv6) : sizeof(struct pkt_ipv4);
	const struct pkt_tcp *ot;
	__u16 sum;

	expect(r->out_len == l2 + l3 + sizeof(*ot), name, "RST is %zu bytes, expected %zu",
	       r->out_len, l2 + l3 + sizeof(*ot));
	expect(memcmp(oe->dst, ie->src, ETH_ALEN) == 0 &&
	       memcmp(oe->src, ie->dst, ETH_ALEN) == 0, name, "MACs not swapped");
	expect(memcmp(r->out + sizeof(*oe), ack->data + sizeof(*ie),
		      l2 - sizeof(*ie)) == 0 && oe->proto == ie->proto, name,
	       "ethertype or VLAN tags were not kept");
	if (!v6) {
		const struct pkt_ipv4 *ip = (const void *)(r->out + l2);

		expect(ip->ver_ihl == 0x45 && ntohs(ip->tot_len) == 40 &&
		       ip->protocol == IPPROTO_TCP && ip->ttl == 64 &&
		       (ntohs(ip->frag_off) & (PKT_IP_MF | 0x1fff)) == 0, name,
		       "IPv4 header: ver_ihl 0x%02x tot_len %u protocol %u ttl %u frag_off 0x%04x",
		       ip->ver_ihl, ntohs(ip->tot_len), ip->protocol, ip->ttl,
		       ntohs(ip->frag_off));
		expect(memcmp(ip->saddr, ack->daddr, 4) == 0 &&
		       memcmp(ip->daddr, ack->saddr, 4) == 0, name,
		       "IPv4 addresses not swapped");
		sum = pkt_ipv4_csum(ip, sizeof(*ip));
		expect(ntohs(ip->check) == sum, name,
		       "IPv4 header checksum 0x%04x, expected 0x%04x", ntohs(ip->check), sum);
	} else {
		const struct pkt_ipv6 *ip6 = (const void *)(r->out + l2);

		expect(ntohl(ip6->ver_tc_flow) >> 28 == 6 && ntohs(ip6->payload_len) == 20 &&
		       ip6->nexthdr == IPPROTO_TCP && ip6->hop_limit == 64, name,
		       "IPv6 header: payload_len %u nexthdr %u hop limit %u",
		       ntohs(ip6->payload_len), ip6->nexthdr, ip6->hop_limit);
		expect(memcmp(ip6->saddr, ack->daddr, 16) == 0 &&
		       memcmp(ip6->daddr, ack->saddr, 16) == 0, name,
		       "IPv6 addresses not swapped");
	}
	ot = (const void *)(r->out + l2 + l3);
	expect(ntohs(ot->sport) == ack->dport && ntohs(ot->dport) == ack->sport, name,
	       "ports %u -> %u, expected %u -> %u", ntohs(ot->sport), ntohs(ot->dport),
	       ack->dport, ack->sport);
	expect(ntohl(ot->seq) == ack_seq, name, "seq 0x%08x, expected the ACK's ack 0x%08x",
	       ntohl(ot->seq), ack_seq);
	expect(ot->flags == TCP_RST, name, "TCP flags 0x%02x, expected RST alone (0x04)",
	       ot->flags);
	expect(ot->doff_res == 0x50, name, "data offset/reserved byte 0x%02x, expected 0x50",
	       ot->doff_res);
	sum = pkt_l4_csum(v6, ack->daddr, ack->saddr, IPPROTO_TCP, ot, sizeof(*ot),
			  offsetof(struct pkt_tcp, check));
	expect(ntohs(ot->check) == sum, name, "TCP checksum 0x%04x, expected 0x%04x",
	       ntohs(ot->check), sum);
}

/* A proven ACK takes a token: with one, it passes; without, it is
 * refused with a RST, or dropped when the RST budget is spent. */
static void test_ack_needs_a_token(void **state)
{
	const struct shedd_class_rate one = { .rate_per_sec = 1, .burst = 1 };
	const __u32 cls = SHEDD_SHEDDABLE;
	int v6;

	(void)state;
	for (v6 = 0; v6 <= 1; v6++) {
		const struct synack_want w4 = FULL4, w6 = FULL6;
		/* IPv6 behind two VLAN tags: the RST keeps them. */
		struct pkt_spec spec = { .l3 = v6 ? ETH_P_IPV6 : ETH_P_IP, .flags = TCP_SYN,
					 .vlans = v6 ? 2 : 0 };
		struct shedd_stats before, after, want = {};
		struct shedd_stats any = { .non_syn = 1, .cls[cls].rst_sent = 1,
					   .cls[cls].dropped = 1 };
		struct shedd_config no_rst = cfg_vtc;
		struct synack_info info;
		struct xdp_run r;
		char name[256];
		struct pkt ack;

		if (v6) {
			spec.opt_bytes = opt_linux6;
			spec.opt_len = sizeof(opt_linux6);
		} else {
			spec.opt_bytes = opt_linux;
			spec.opt_len = sizeof(opt_linux);
		}
		if (reset_maps(&cfg_vtc, &one))
			fail_msg("reset maps");
		snprintf(name, sizeof(name), "proven ACK, IPv%d, one token: admitted", v6 ? 6 : 4);
		get_synack(name, &spec, &cfg_vtc, v6 ? &w6 : &w4, &info);
		build_cookie_ack(&ack, &spec, &info);
		read_stats(&before);
		run_xdp(name, ack.data, ack.len, &r);
		read_stats(&after);
		expect_verdict(name, r.verdict, XDP_PASS);
		want.packets = 1;
		want.ack_probed = 1;
		want.cls[cls].ack_valid = 1;
		want.cls[cls].charged = 1;
		want.cls[cls].ack_admitted = 1;
		expect_delta_but(name, &before, &after, &want, &any);

		/* The same ACK again (the client's next segment looks alike
		 * to the program) before the kernel made the connection: it
		 * follows the admission, with no second token. */
		snprintf(name, sizeof(name), "proven ACK, IPv%d, again: passed, no token",
			 v6 ? 6 : 4);
		{
			struct shedd_stats rep = { .packets = 1, .ack_probed = 1, .ack_repeat = 1 };

			read_stats(&before);
			run_xdp(name, ack.data, ack.len, &r);
			read_stats(&after);
			expect_verdict(name, r.verdict, XDP_PASS);
			expect_delta_but(name, &before, &after, &rep, &any);
		}

		/* A fresh start, no token: refused with a RST. */
		snprintf(name, sizeof(name), "proven ACK, IPv%d, no token: RST", v6 ? 6 : 4);
		if (reset_maps(&cfg_vtc, &rate_empty))
			fail_msg("reset maps");
		read_stats(&before);
		run_xdp(name, ack.data, ack.len, &r);
		read_stats(&after);
		expect_verdict(name, r.verdict, XDP_TX);
		want.cls[cls].ack_admitted = 0;
		want.cls[cls].ack_refused = 1;
		expect_delta_but(name, &before, &after, &want, &any);
		expect_ack_rst(name, &ack, info.cookie + 1, &r);

		/* Its next segment, sent before the RST arrived: dropped,
		 * never charged nor answered again. */
		snprintf(name, sizeof(name), "proven ACK, IPv%d, after its RST: dropped",
			 v6 ? 6 : 4);
		{
			struct shedd_stats gone = { .packets = 1, .ack_probed = 1,
						    .ack_after_rst = 1 };

			read_stats(&before);
			run_xdp(name, ack.data, ack.len, &r);
			read_stats(&after);
			expect_verdict(name, r.verdict, XDP_DROP);
			expect_delta_but(name, &before, &after, &gone, &any);
		}

		/* No RST budget left: dropped, counted. */
		snprintf(name, sizeof(name), "proven ACK, IPv%d, no token, no RST budget: dropped",
			 v6 ? 6 : 4);
		no_rst.rst_rate_per_sec = 0;
		if (reset_maps(&no_rst, &rate_empty))
			fail_msg("reset maps");
		read_stats(&before);
		run_xdp(name, ack.data, ack.len, &r);
		read_stats(&after);
		expect_verdict(name, r.verdict, XDP_DROP);
		want.rst_limited = 1;
		expect_delta_but(name, &before, &after, &want, &any);
		want.rst_limited = 0;
	}
}

/* A connection that exists is never judged again: the lookup finds it, no
 * cookie is checked, whatever the ACK's numbers. */
static void test_established_flow(void **state)
{
	int v6;

	(void)state;
	for (v6 = 0; v6 <= 1; v6++) {
		struct pkt_spec spec = { .l3 = v6 ? ETH_P_IPV6 : ETH_P_IP,
					 .flags = TCP_ACK | TCP_PSH, .payload_len = 20,
					 .sport = PKT_SPORT + 7 };
		struct shedd_stats before, after, want = {}, any = { .non_syn = 1 };
		char name[128];
		struct xdp_run r;
		struct pkt ack;
		int cfd, sfd;

		snprintf(name, sizeof(name), "verify: IPv%d established flow passes unchecked",
			 v6 ? 6 : 4);
		cfd = connect_from_client(name, v6, spec.sport, &sfd);
		pkt_build(&ack, &spec);
		read_stats(&before);
		run_xdp(name, ack.data, ack.len, &r);
		read_stats(&after);
		close(cfd);
		close(sfd);
		expect_verdict(name, r.verdict, XDP_PASS);
		expect(r.out_len == ack.len && memcmp(r.out, ack.data, ack.len) == 0, name,
		       "the frame was changed");
		want.packets = 1;
		want.ack_probed = 1;
		expect_delta_but(name, &before, &after, &want, &any);
	}
}

/* An ACK that returns no valid cookie to a listener of a port that sent no
 * cookie within a cookie's life (two minutes) cannot be forged: it is the
 * ACK of a connection the server lost (a restart) or a stray one, and the
 * kernel resets it. Once a cookie went out, the same ACK is dropped, until
 * that cookie is too old to be returned. */
static void test_ack_without_cookies(void **state)
{
	const __u32 cls = SHEDD_SHEDDABLE;
	static const struct {
		const char *what;
		__u64 at_ns;  /* the program's clock, after T0_NS */
		int syn;      /* a SYN to the port first: a cookie goes out */
		__u32 verdict;
	} steps[] = {
		{ "no cookie ever sent: to the kernel", 0, 0, XDP_PASS },
		{ "a cookie just sent: dropped", MS(1000), 1, XDP_DROP },
		{ "110 s after the cookie: dropped", MS(111000), 0, XDP_DROP },
		{ "125 s after the cookie: to the kernel", MS(126000), 0, XDP_PASS },
	};
	int v6;

	(void)state;
	for (v6 = 0; v6 <= 1; v6++) {
		int lfd = listen_on(v6, QUIET_PORT, 16);
		size_t i;

		expect(lfd >= 0, "ack without cookies", "listen on port %u: %s", QUIET_PORT,
		       strerror(errno));
		expect(reset_maps(&cfg_vtc, NULL) == 0, "ack without cookies", "reset the maps");
		for (i = 0; i < ARRAY_SIZE(steps); i++) {
			struct pkt_spec ack = { .l3 = v6 ? ETH_P_IPV6 : ETH_P_IP,
						.flags = TCP_ACK | TCP_PSH, .payload_len = 20,
						.dport = QUIET_PORT, .sport = PKT_SPORT + 60,
						.ack_seq = 0x12345678 };
			struct shedd_stats before, after, want = {}, any = { .non_syn = 1 };
			char name[160];
			struct xdp_run r;
			struct pkt p;

			snprintf(name, sizeof(name), "IPv%d ACK with no valid cookie, %s",
				 v6 ? 6 : 4, steps[i].what);
			skel->bss->test_clock_ns = T0_NS + steps[i].at_ns;
			if (steps[i].syn) {
				struct pkt_spec syn = { .l3 = ack.l3, .flags = TCP_SYN,
							.dport = QUIET_PORT, .sport = PKT_SPORT + 61,
							.tcp_opts = 1 };

				pkt_build(&p, &syn);
				run_xdp(name, p.data, p.len, &r);
				expect_verdict(name, r.verdict, XDP_TX);
			}
			pkt_build(&p, &ack);
			read_stats(&before);
			run_xdp(name, p.data, p.len, &r);
			read_stats(&after);
			expect_verdict(name, r.verdict, steps[i].verdict);
			want.packets = 1;
			want.ack_probed = 1;
			if (steps[i].verdict == XDP_PASS)
				want.ack_to_kernel = 1;
			else
				want.cls[cls].ack_invalid = 1;
			expect_delta_but(name, &before, &after, &want, &any);
		}
		close(lfd);
	}
}

/* The 4-tuple of a connection the server closed first is in TIME_WAIT on
 * the server: a SYN of it is the kernel's to answer (it recycles the
 * TIME_WAIT socket), charged as unverified, never a cookie. No FIN of the
 * connection went through the program: the socket lookup of the SYN finds
 * the TIME_WAIT socket by itself. */
static void test_syn_into_time_wait(void **state)
{
	const __u32 cls = SHEDD_SHEDDABLE;
	int v6;

	(void)state;
	for (v6 = 0; v6 <= 1; v6++) {
		struct pkt_spec syn = { .l3 = v6 ? ETH_P_IPV6 : ETH_P_IP, .flags = TCP_SYN,
					.sport = PKT_SPORT + 1070 + v6, .tcp_opts = 1 };
		struct shedd_stats before, after, want = {};
		char name[128], buf[1];
		struct xdp_run r;
		struct pkt p;
		int cfd, sfd;

		snprintf(name, sizeof(name), "IPv%d SYN of a flow in TIME_WAIT", v6 ? 6 : 4);
		cfd = connect_from_client(name, v6, syn.sport, &sfd);
		/* The server closes first; the client reads its FIN, closes. */
		close(sfd);
		expect(read(cfd, buf, sizeof(buf)) == 0, name, "the server's FIN: %s",
		       strerror(errno));
		close(cfd);
		/* The client's FIN is delivered on lo as close() sends it. */
		pkt_build(&p, &syn);
		read_stats(&before);
		run_xdp(name, p.data, p.len, &r);
		read_stats(&after);
		expect_verdict(name, r.verdict, XDP_PASS);
		want.packets = 1;
		want.syn_tuple_busy = 1;
		want.cls[cls].syn = 1;
		want.cls[cls].charged = 1;
		want.cls[cls].admitted = 1;
		expect_delta(name, &before, &after, &want);
	}
}

static int write_sysctl(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -1;
	err = fputs(val, f) < 0;
	return fclose(f) || err ? -1 : 0;
}

/* On a host that forwards (a router, a Kubernetes node, a DNAT host), a
 * SYN to an address of another host reaches the wildcard listener's port
 * in the socket lookup: it is the kernel's to forward, or a DNAT rule's to
 * give to a local port, never a cookie from the remote server's address;
 * it is charged as in an unverified class, and the ACKs of its flow pass
 * as the kernel's. A SYN to this host's own address still gets its
 * cookie. */
static void test_syn_not_local(void **state)
{
	static const char *const fwd[] = { "/proc/sys/net/ipv4/conf/all/forwarding",
					   "/proc/sys/net/ipv6/conf/all/forwarding" };
	/* Turned off again, routes removed: not_local_teardown(). */
	const __u32 cls = SHEDD_SHEDDABLE;
	int v6;

	(void)state;
	for (v6 = 0; v6 <= 1; v6++)
		expect(write_sysctl(fwd[v6], "1\n") == 0, "not local", "forwarding on: %s",
		       strerror(errno));
	expect(system("ip route add 198.19.200.0/24 dev lo && "
		      "ip -6 route add 2001:db8:200::/64 dev lo") == 0, "not local",
	       "routes to another host");
	for (v6 = 0; v6 <= 1; v6++) {
		struct pkt_spec spec = { .l3 = v6 ? ETH_P_IPV6 : ETH_P_IP, .flags = TCP_SYN,
					 .tcp_opts = 1, .sport = PKT_SPORT + 90,
					 .daddr = v6 ? "2001:db8:200::1" : "198.19.200.1" };
		struct shedd_stats before, after, want = {};
		char name[128];
		struct xdp_run r;
		struct pkt p;

		snprintf(name, sizeof(name), "IPv%d SYN forwarded to another host", v6 ? 6 : 4);
		pkt_build(&p, &spec);
		read_stats(&before);
		run_xdp(name, p.data, p.len, &r);
		read_stats(&after);
		expect_verdict(name, r.verdict, XDP_PASS);
		want.packets = 1;
		want.syn_not_local = 1;
		want.cls[cls].syn = 1;
		want.cls[cls].charged = 1;
		want.cls[cls].admitted = 1;
		expect_delta(name, &before, &after, &want);

		snprintf(name, sizeof(name), "IPv%d SYN to this host, forwarding on", v6 ? 6 : 4);
		spec.daddr = NULL;
		pkt_build(&p, &spec);
		run_xdp(name, p.data, p.len, &r);
		expect_verdict(name, r.verdict, XDP_TX);

		/* A cookie of the port is out now: the forwarded flow's
		 * ACK finds the wildcard listener too, and carries no
		 * cookie of ours. It is the kernel's, never dropped as
		 * forged. */
		snprintf(name, sizeof(name), "IPv%d ACK forwarded to another host, a cookie out",
			 v6 ? 6 : 4);
		spec.flags = TCP_ACK;
		spec.daddr = v6 ? "2001:db8:200::1" : "198.19.200.1";
		pkt_build(&p, &spec);
		read_stats(&before);
		run_xdp(name, p.data, p.len, &r);
		read_stats(&after);
		expect_verdict(name, r.verdict, XDP_PASS);
		memset(&want, 0, sizeof(want));
		want.packets = 1;
		want.ack_probed = 1;
		want.non_syn = 1;
		expect_delta(name, &before, &after, &want);
	}
}

/* The namespace as before test_syn_not_local(), also when it failed. */
static int not_local_teardown(void **state)
{
	int err;

	(void)state;
	err = system("ip route del 198.19.200.0/24 dev lo 2>/dev/null; "
		     "ip -6 route del 2001:db8:200::/64 dev lo 2>/dev/null; "
		     "echo 0 > /proc/sys/net/ipv4/conf/all/forwarding && "
		     "echo 0 > /proc/sys/net/ipv6/conf/all/forwarding");
	if (err)
		print_error("forwarding off again in the test's namespace\n");
	return err ? -1 : 0;
}

/* A FIN, spoofed or not, writes nothing: the program has no map of
 * closing flows any more, and a FIN to a protected port of a verified
 * class is passed as any segment that is not a SYN. */
static void test_fin_marks_nothing(void **state)
{
	static const __u8 flags[] = { TCP_FIN | TCP_ACK, TCP_FIN };
	size_t i;
	int v6;

	(void)state;
	expect(bpf_object__find_map_by_name(skel->obj, "closing") == NULL, "FIN",
	       "the program still has a map of closing flows");
	for (v6 = 0; v6 <= 1; v6++) {
		for (i = 0; i < ARRAY_SIZE(flags); i++) {
			struct pkt_spec spec = { .l3 = v6 ? ETH_P_IPV6 : ETH_P_IP,
						 .flags = flags[i], .sport = PKT_SPORT + 80 };
			/* FIN|ACK is an ACK to the listener with no valid
			 * cookie, and no cookie went out: the kernel's. */
			struct shedd_stats before, after, want = {},
					   any = { .non_syn = 1, .ack_to_kernel = 1 };
			char name[96];
			struct xdp_run r;
			struct pkt p;

			snprintf(name, sizeof(name), "IPv%d %s", v6 ? 6 : 4,
				 flags[i] & TCP_ACK ? "FIN|ACK" : "FIN alone");
			pkt_build(&p, &spec);
			read_stats(&before);
			run_xdp(name, p.data, p.len, &r);
			read_stats(&after);
			expect_verdict(name, r.verdict, XDP_PASS);
			want.packets = 1;
			if (flags[i] & TCP_ACK)
				want.ack_probed = 1;
			expect_delta_but(name, &before, &after, &want, &any);
		}
	}
}

/* A proven ACK to a listener whose accept queue is full is dropped, as
 * the kernel would drop it, and spends no token; once the application has
 * taken a connection, the same ACK is admitted. */
static void test_ack_to_full_queue(void **state)
{
	const __u32 cls = SHEDD_SHEDDABLE;
	int v6;

	(void)state;
	for (v6 = 0; v6 <= 1; v6++) {
		const struct synack_want w4 = FULL4, w6 = FULL6;
		struct pkt_spec spec = { .l3 = v6 ? ETH_P_IPV6 : ETH_P_IP, .flags = TCP_SYN,
					 .dport = FULLQ_PORT };
		struct shedd_stats before, after, want = {}, any = { .non_syn = 1 };
		int lfd, cfd, sfd;
		struct synack_info info;
		struct xdp_run r;
		char name[160];
		struct pkt ack;

		snprintf(name, sizeof(name), "proven ACK, IPv%d, accept queue full: dropped, no token",
			 v6 ? 6 : 4);
		if (v6) {
			spec.opt_bytes = opt_linux6;
			spec.opt_len = sizeof(opt_linux6);
		} else {
			spec.opt_bytes = opt_linux;
			spec.opt_len = sizeof(opt_linux);
		}
		/* Backlog 0 holds one connection: the second finds it full. */
		lfd = listen_on(v6, FULLQ_PORT, 0);
		expect(lfd >= 0, name, "listen on port %u: %s", FULLQ_PORT, strerror(errno));
		cfd = connect_to(name, v6, PKT_SPORT + 40, FULLQ_PORT);
		get_synack(name, &spec, &cfg_vtc, v6 ? &w6 : &w4, &info);
		build_cookie_ack(&ack, &spec, &info);
		read_stats(&before);
		run_xdp(name, ack.data, ack.len, &r);
		read_stats(&after);
		expect_verdict(name, r.verdict, XDP_DROP);
		want.packets = 1;
		want.ack_probed = 1;
		want.ack_queue_full = 1;
		want.cls[cls].ack_valid = 1;
		expect_delta_but(name, &before, &after, &want, &any);

		snprintf(name, sizeof(name), "proven ACK, IPv%d, the queue taken: admitted",
			 v6 ? 6 : 4);
		sfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		expect(sfd >= 0, name, "accept: %s", strerror(errno));
		read_stats(&before);
		run_xdp(name, ack.data, ack.len, &r);
		read_stats(&after);
		close(sfd);
		close(cfd);
		close(lfd);
		expect_verdict(name, r.verdict, XDP_PASS);
		want.ack_queue_full = 0;
		want.cls[cls].charged = 1;
		want.cls[cls].ack_admitted = 1;
		expect_delta_but(name, &before, &after, &want, &any);
	}
}

/* The cookie budget of a CPU: a fresh one holds its depth and refills at
 * its rate; a SYN over it is shed as a class without verification would
 * shed it, with no token asked for (a flood above the budget must not
 * take the class's tokens again). */
static void test_cookie_budget(void **state)
{
	static const struct {
		__s64 at_ns;
		unsigned int syns, answered;
	} steps[] = {
		{ MS(0), 5, 3 },   /* depth 3 */
		{ MS(100), 2, 1 }, /* 10/s: one per 100 ms */
		{ MS(150), 1, 0 },
		{ MS(200), 1, 1 },
	};
	const __u32 cls = SHEDD_SHEDDABLE;
	struct shedd_config cfg = cfg_vtc;
	struct pkt_spec spec = { V4, .flags = TCP_SYN, OPTS(opt_linux) };
	const struct synack_want w = FULL4;
	char name[160];
	size_t i;
	int rst;

	(void)state;
	cfg.cookie_rate_per_sec = 10;
	cfg.cookie_burst = 3;
	for (rst = 0; rst <= 1; rst++) {
		cfg.reject[cls] = rst ? SHEDD_REJECT_RST : SHEDD_REJECT_DROP;
		if (reset_maps(&cfg, NULL))
			fail_msg("reset maps");
		for (i = 0; i < ARRAY_SIZE(steps); i++) {
			struct shedd_stats before, after, want = {};
			unsigned int n, answered = 0, refused = 0;
			struct synack_info info;
			struct xdp_run r;
			struct pkt syn;

			snprintf(name, sizeof(name), "cookie budget 10/s depth 3, %s over it, at T0%+.3f s",
				 rst ? "RST" : "drop", steps[i].at_ns / 1e9);
			skel->bss->test_clock_ns = T0_NS + steps[i].at_ns;
			pkt_build(&syn, &spec);
			read_stats(&before);
			for (n = 0; n < steps[i].syns; n++) {
				run_xdp(name, syn.data, syn.len, &r);
				if (r.verdict == XDP_TX && r.out_len > syn.l4_off + 13 &&
				    (r.out[syn.l4_off + 13] & TCP_SYN)) {
					expect_synack(name, &syn, &r, &cfg, &w, &info);
					answered++;
				} else if (rst) {
					expect_verdict(name, r.verdict, XDP_TX);
					expect_rst(name, &syn, &r, syn.l3_off + 20 + 20);
					refused++;
				} else {
					expect_verdict(name, r.verdict, XDP_DROP);
					refused++;
				}
			}
			read_stats(&after);
			expect(answered == steps[i].answered, name,
			       "%u of %u SYNs answered with a cookie, expected %u", answered,
			       steps[i].syns, steps[i].answered);
			want.packets = steps[i].syns;
			want.cls[cls].syn = steps[i].syns;
			want.cls[cls].cookie_sent = answered;
			want.cls[cls].cookie_limited = refused;
			if (rst)
				want.cls[cls].rst_sent = refused;
			else
				want.cls[cls].dropped = refused;
			expect_delta(name, &before, &after, &want);
		}
	}
}

/* SHEDDING: a class is answered with cookies on a CPU only from the SYN
 * its bucket could not pay for, and for verify_hold_ns after it. That SYN
 * asked for a token (charged, the class's demand) and got none; the SYNs
 * in the hold ask for nothing. */
static void test_verify_while_shedding(void **state)
{
	static const struct {
		__s64 at_ns;
		__u32 verdict;
		__u64 charged;
		const char *why;
	} steps[] = {
		{ MS(0), XDP_PASS, 1, "a token: charged and admitted" },
		{ MS(0), XDP_TX, 1, "no token: a cookie, the hold starts" },
		{ MS(500), XDP_TX, 0, "in the hold, a token refilled: still a cookie" },
		{ VERIFY_HOLD_NS + MS(1), XDP_PASS, 1, "the hold is over: charged and admitted" },
	};
	const struct shedd_class_rate r10 = { .rate_per_sec = 10, .burst = 1 };
	const __u32 cls = SHEDD_SHEDDABLE_PLUS;
	struct pkt_spec spec = { V4, .flags = TCP_SYN, .saddr = V4_SP, OPTS(opt_linux) };
	const struct synack_want w = FULL4;
	struct shedd_bucket b;
	char name[160];
	size_t i;

	(void)state;
	if (reset_maps(&cfg_vtc, &r10))
		fail_msg("reset maps");
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		struct shedd_stats before, after, want = {};
		struct synack_info info;
		struct xdp_run r;
		struct pkt syn;

		snprintf(name, sizeof(name), "verify while shedding, at T0%+.3f s: %s",
			 steps[i].at_ns / 1e9, steps[i].why);
		skel->bss->test_clock_ns = T0_NS + steps[i].at_ns;
		pkt_build(&syn, &spec);
		read_stats(&before);
		run_xdp(name, syn.data, syn.len, &r);
		read_stats(&after);
		expect_verdict(name, r.verdict, steps[i].verdict);
		want.packets = 1;
		want.cls[cls].syn = 1;
		want.cls[cls].charged = steps[i].charged;
		if (steps[i].verdict == XDP_TX) {
			expect_synack(name, &syn, &r, &cfg_vtc, &w, &info);
			want.cls[cls].cookie_sent = 1;
		} else {
			want.cls[cls].admitted = 1;
		}
		expect_delta(name, &before, &after, &want);
		if (i == 1) {
			b = read_bucket(cls);
			expect(b.verify_until_ns == T0_NS + VERIFY_HOLD_NS, name,
			       "verify_until_ns %llu, expected T0 + hold = %llu",
			       (unsigned long long)b.verify_until_ns,
			       (unsigned long long)(T0_NS + VERIFY_HOLD_NS));
		}
	}
}

static int vtc_setup(void **state)
{
	(void)state;
	return reset_maps(&cfg_vtc, NULL);
}

/* ---- listeners a cookie cannot answer -------------------------------------- */

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

/* A listener on @port of family @v6 holding a TCP-MD5 key for the client
 * address (struct tcp_md5sig, TCP_MD5SIG), as a BGP daemon's. */
static int listen_md5(int v6, __u16 port)
{
	struct tcp_md5sig md5 = { .tcpm_keylen = 6 };
	union sockaddr_inx peer;
	int fd = listen_on(v6, port, 16);

	if (fd < 0)
		return -1;
	sockaddr_of(&peer, v6, v6 ? PKT_V6_CLIENT : PKT_V4_CLIENT, 0);
	memcpy(&md5.tcpm_addr, &peer, v6 ? sizeof(peer.v6) : sizeof(peer.v4));
	memcpy(md5.tcpm_key, "secret", 6);
	if (setsockopt(fd, IPPROTO_TCP, TCP_MD5SIG, &md5, sizeof(md5))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* An MPTCP listener on @port of family @v6: its TCP listener has the
 * ULP "mptcp". -2 where the kernel has no MPTCP. */
static int listen_mptcp(int v6, __u16 port)
{
	union sockaddr_inx a;
	socklen_t len = sockaddr_of(&a, v6, NULL, port);
	int one = 1, fd;

	fd = socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_MPTCP);
	if (fd < 0)
		return errno == EPROTONOSUPPORT || errno == ENOPROTOOPT ? -2 : -1;
	if ((v6 && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) ||
	    bind(fd, &a.sa, len) || listen(fd, 16)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* syn_checks, summed over the CPUs. */
static void read_syn_checks(struct shedd_syn_checks *sum)
{
	struct shedd_syn_checks *vals = calloc((size_t)nr_cpus, sizeof(*vals));
	__u32 zero = 0;
	int i;

	memset(sum, 0, sizeof(*sum));
	if (!vals)
		fail_msg("read syn_checks: out of memory");
	if (bpf_map__lookup_elem(skel->maps.syn_checks, &zero, sizeof(zero), vals,
				 (size_t)nr_cpus * sizeof(*vals), 0)) {
		free(vals);
		fail_msg("read syn_checks: %s", strerror(errno));
	}
	for (i = 0; i < nr_cpus; i++)
		sum->syn_signed += vals[i].syn_signed;
	free(vals);
}

/* The TCP-MD5 option (kind 19, 18 bytes: a digest, of no matter here),
 * then NOP NOP, as Linux sends it (no timestamps beside MD5). */
static const __u8 opt_md5[] = { 2, 4, 0x05, 0xb4, 1, 1, 19, 18, 0xde, 0xad, 0xbe, 0xef, 0, 1,
				 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
/* A TCP-AO option (kind 29: key ids 1 and 1, a 12-byte MAC), NOP NOP. */
static const __u8 opt_ao[] = { 2, 4, 0x05, 0xb4, 1, 1, 29, 16, 1, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
			       10, 11, 1, 1 };
/* MP_CAPABLE of a SYN (kind 30, subtype 0, version 1, flags 0x81). */
static const __u8 opt_mpc[] = { 2, 4, 0x05, 0xb4, 30, 4, 0x01, 0x81 };

/*
 * A SYN of a verified class that only the kernel can answer right: signed
 * (TCP-MD5, TCP-AO) to a listener with keys of that kind, which signs its
 * SYN-ACK (a cookie one too) and whose peer drops an unsigned one; any SYN
 * to an MPTCP listener, which the tc hand-off cannot take. It is judged as
 * in an unverified class: charged, passed with a token, shed without one,
 * and counted in syn_checks.syn_signed. An unsigned SYN to the same
 * listener, which the kernel answers unsigned or drops, and a signed one
 * to a listener without keys, which the kernel drops, still get cookies:
 * a flood of plain SYNs to a BGP port spends no token. The listeners are
 * netns_setup()'s.
 */
struct signed_case {
	const char *name;
	int v6;
	__u16 dport;
	const __u8 *opt_bytes;
	unsigned int opt_len;
	int empty; /* the class's bucket empty */
	__u32 verdict;
};

#define SIGNED_CASES(v6_, ip_)                                                                   \
	{ ip_ " MD5-signed SYN to an MD5 listener: charged, admitted, no cookie", v6_, MD5_PORT, \
	  OPTS(opt_md5), 0, XDP_PASS },                                                          \
	{ ip_ " MD5-signed SYN to an MD5 listener, no token: shed, no cookie", v6_, MD5_PORT,    \
	  OPTS(opt_md5), 1, XDP_DROP },                                                          \
	{ ip_ " unsigned SYN to an MD5 listener: a cookie", v6_, MD5_PORT, OPTS(opt_linux), 0,   \
	  XDP_TX },                                                                              \
	{ ip_ " AO-signed SYN to an MD5 listener: a cookie", v6_, MD5_PORT, OPTS(opt_ao), 0,     \
	  XDP_TX },                                                                              \
	{ ip_ " MD5-signed SYN to a listener without keys: a cookie", v6_, PROTECTED_PORT,       \
	  OPTS(opt_md5), 0, XDP_TX },                                                            \
	{ ip_ " plain SYN to an MPTCP listener: charged, admitted, no cookie", v6_, MPTCP_PORT,  \
	  OPTS(opt_linux), 0, XDP_PASS },                                                        \
	{ ip_ " MP_CAPABLE SYN to an MPTCP listener, no token: shed, no cookie", v6_,           \
	  MPTCP_PORT, OPTS(opt_mpc), 1, XDP_DROP },                                              \
	{ ip_ " MP_CAPABLE SYN to a plain listener: a cookie", v6_, PROTECTED_PORT,              \
	  OPTS(opt_mpc), 0, XDP_TX }

static const struct signed_case signed_cases[] = {
	SIGNED_CASES(0, "IPv4"),
	SIGNED_CASES(1, "IPv6"),
};

static int signed_setup(void **state)
{
	const struct signed_case *c = *state;

	return reset_maps(&cfg_vtc, c->empty ? &rate_empty : NULL);
}

static void run_signed(void **state)
{
	const struct signed_case *c = *state;
	const __u32 cls = SHEDD_SHEDDABLE;
	struct pkt_spec syn = { .l3 = c->v6 ? ETH_P_IPV6 : ETH_P_IP, .flags = TCP_SYN,
				.dport = c->dport, .sport = PKT_SPORT + 1100,
				.opt_bytes = c->opt_bytes, .opt_len = c->opt_len };
	struct shedd_stats before, after, want = {};
	struct shedd_syn_checks sc0, sc1;
	struct xdp_run r;
	struct pkt p;

	if (c->dport == MPTCP_PORT && mptcp_fds[c->v6] < 0)
		skip(); /* a kernel without MPTCP */
	pkt_build(&p, &syn);
	read_stats(&before);
	read_syn_checks(&sc0);
	run_xdp(c->name, p.data, p.len, &r);
	read_stats(&after);
	read_syn_checks(&sc1);
	expect_verdict(c->name, r.verdict, c->verdict);
	want.packets = 1;
	want.cls[cls].syn = 1;
	if (c->verdict == XDP_TX) {
		want.cls[cls].cookie_sent = 1;
	} else {
		want.cls[cls].charged = 1;
		if (c->verdict == XDP_PASS)
			want.cls[cls].admitted = 1;
		else
			want.cls[cls].dropped = 1;
	}
	expect_delta(c->name, &before, &after, &want);
	expect(sc1.syn_signed - sc0.syn_signed == (c->verdict != XDP_TX), c->name,
	       "syn_checks.syn_signed moved by %llu",
	       (unsigned long long)(sc1.syn_signed - sc0.syn_signed));
}

/* ---- the tc hand-off ------------------------------------------------------ */

/* The tc program under BPF_PROG_TEST_RUN, sharing settings, ports,
 * prefixes and the MSS cache with the XDP program as the daemon makes it. NULL when it did
 * not load (a kernel without bpf_sk_assign_tcp_reqsk): its tests skip. */
static struct handoff_bpf *hskel;

static int handoff_load(void)
{
	struct {
		struct bpf_map *mine, *xdp;
	} shared[] = {
		{ NULL, skel->maps.settings }, { NULL, skel->maps.ports },
		{ NULL, skel->maps.prefix_v4 }, { NULL, skel->maps.prefix_v6 },
		{ NULL, skel->maps.mss_cache },
		{ NULL, skel->maps.proven }, { NULL, skel->maps.settings_cur },
		{ NULL, skel->maps.flow_key },
	};
	size_t i;
	int err;

	hskel = handoff_bpf__open();
	if (!hskel)
		return -errno;
	/* On the XDP program's test clock (set_clocks()). */
	hskel->rodata->use_test_clock = 1;
	SET_FLOW_SIP(hskel->rodata, harness_key);
	shared[0].mine = hskel->maps.settings;
	shared[1].mine = hskel->maps.ports;
	shared[2].mine = hskel->maps.prefix_v4;
	shared[3].mine = hskel->maps.prefix_v6;
	shared[4].mine = hskel->maps.mss_cache;
	shared[5].mine = hskel->maps.proven;
	shared[6].mine = hskel->maps.settings_cur;
	shared[7].mine = hskel->maps.flow_key;
	for (i = 0; i < ARRAY_SIZE(shared); i++) {
		err = bpf_map__reuse_fd(shared[i].mine, bpf_map__fd(shared[i].xdp));
		if (err)
			goto fail;
	}
	err = handoff_bpf__load(hskel);
	if (!err)
		return 0;
fail:
	handoff_bpf__destroy(hskel);
	hskel = NULL;
	return err;
}

/* The hand-off counters, in the order of struct shedd_handoff_stats. */
enum { H_ACKS, H_ASSIGNED, H_NOT_LISTENER, H_NO_SOCKET, H_INVALID, H_FAILED, H_MALFORMED,
       H_MSS_MISSED, H_REPEAT };
#define HFIELD(f) { #f, offsetof(struct shedd_handoff_stats, f) }
static const struct {
	const char *name;
	size_t off;
} hstat_fields[] = {
	HFIELD(acks), HFIELD(assigned), HFIELD(not_listener), HFIELD(no_socket),
	HFIELD(invalid), HFIELD(failed), HFIELD(malformed), HFIELD(mss_missed),
	HFIELD(repeat),
};
_Static_assert(ARRAY_SIZE(hstat_fields) * sizeof(__u64) ==
	       sizeof(struct shedd_handoff_stats), "every hand-off counter is named");
_Static_assert(H_REPEAT + 1 == ARRAY_SIZE(hstat_fields), "one index per counter");

/* handoff_stats summed over the CPUs, into @sum (as __u64 words). */
static void read_hstats(__u64 *sum)
{
	struct shedd_handoff_stats *vals = calloc(nr_cpus, sizeof(*vals));
	__u32 zero = 0;
	size_t f;
	int i, err;

	assert_non_null(vals);
	err = bpf_map__lookup_elem(hskel->maps.handoff_stats, &zero, sizeof(zero), vals,
				   nr_cpus * sizeof(*vals), 0);
	memset(sum, 0, sizeof(*vals));
	for (i = 0; !err && i < nr_cpus; i++)
		for (f = 0; f < ARRAY_SIZE(hstat_fields); f++) {
			__u64 v;

			memcpy(&v, (const char *)&vals[i] + hstat_fields[f].off, sizeof(v));
			sum[f] += v;
		}
	free(vals);
	if (err)
		fail_msg("read handoff_stats: %s", strerror(-err));
}

/* Run the tc program on @ack, which it must let go on untouched; @delta
 * gets how far each counter moved, in the order of hstat_fields. */
static void run_tc(const char *name, const struct pkt *ack, __u64 *delta)
{
	__u64 before[ARRAY_SIZE(hstat_fields)], after[ARRAY_SIZE(hstat_fields)];
	__u8 out[PKT_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = ack->data,
		.data_size_in = ack->len,
		.data_out = out,
		.data_size_out = sizeof(out),
		.repeat = 1,
	);
	size_t f;
	int err;

	read_hstats(before);
	err = bpf_prog_test_run_opts(bpf_program__fd(hskel->progs.shedd_handoff), &opts);
	expect(err == 0, name, "BPF_PROG_TEST_RUN of the tc program: %s", strerror(-err));
	expect(opts.retval == 0, name, "tc verdict %u, expected TC_ACT_OK (0)", opts.retval);
	expect(opts.data_size_out == ack->len && memcmp(out, ack->data, ack->len) == 0, name,
	       "the tc program changed the frame");
	read_hstats(after);
	for (f = 0; f < ARRAY_SIZE(hstat_fields); f++)
		delta[f] = after[f] - before[f];
}

/* CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns(), in ns. */
static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* Set the clock of both programs to @ns: in production both read
 * bpf_ktime_get_coarse_ns() (bpf/clock.h). */
static void set_clocks(__u64 ns)
{
	skel->bss->test_clock_ns = ns;
	if (hskel)
		hskel->bss->test_clock_ns = ns;
}

/* Keep @verdict (a FLOW_* of bpf/config_maps.h) for the flow @spec just now,
 * for its segment of @seq and @ack (host order), as the programs do (the
 * same hash and slot, the time of their clock). */
static void mark_flow(const char *name, const struct pkt_spec *spec, int v6, __u32 verdict,
		      __u32 seq, __u32 ack)
{
	__u8 sa[16] = { 0 }, da[16] = { 0 };
	struct shedd_proven v;
	__u32 h, slot;

	inet_pton(v6 ? AF_INET6 : AF_INET,
		  spec->saddr ? spec->saddr : v6 ? PKT_V6_CLIENT : PKT_V4_CLIENT, sa);
	inet_pton(v6 ? AF_INET6 : AF_INET,
		  spec->daddr ? spec->daddr : v6 ? PKT_V6_SERVER : PKT_V4_SERVER, da);
	h = flow_hash_of(sa, da, v6 ? 4 : 1, spec->sport ? spec->sport : PKT_SPORT,
			 spec->dport ? spec->dport : PKT_DPORT);
	v.stamp = ((__u32)(skel->bss->test_clock_ns >> 20) & PROVEN_TIME_MASK) << 3 | verdict;
	v.hash = h;
	v.seq = htonl(seq);
	v.ack = htonl(ack);
	slot = h % PROVEN_SLOTS;
	expect(bpf_map__update_elem(skel->maps.proven, &slot, sizeof(slot), &v, sizeof(v),
				    BPF_ANY) == 0, name, "keep the flow's verdict");
}

/* The tc program hands off only what the XDP program admitted, in this
 * ACK's own pass, as a cookie of shedd's, and sorts the ACKs of verified
 * classes: genuine (with timestamps, or without: the MSS from the cache
 * the XDP program filled, else the smallest), not shedd's to hand off
 * (forged, never judged at XDP, the kernel's own cookie: its answer to a
 * SYN XDP charged, or its timestamp without shedd's tag), established, no
 * listener; others it does not count, nor anything while XDP_TX is
 * blocked (XDP then verifies nobody). A genuine one passes the check, but
 * bpf_sk_assign_tcp_reqsk() takes only a frame at tc ingress, which
 * BPF_PROG_TEST_RUN does not make: here it is assigned or failed, and
 * verified.bats sees it assigned for real. Both programs read one clock,
 * set as each step begins, so that the verdicts kept for a flow are as old
 * to both as they are. */
static void test_handoff_sorts_acks(void **state)
{
	/* Counters by name; "handed" is assigned + failed. */
	static const struct {
		const char *what;
		int syn_no_ts;   /* the SYN without timestamps: MSS 1400 only */
		int ack_no_ts;   /* the ACK without a timestamp */
		__u32 ack_xor;
		__u16 dport;
		int other_class, established, assigned;
		int no_xdp;      /* the ACK reaches tc without XDP's judgment */
		int syn_charged; /* XDP charged and passed the SYN: the kernel answered */
		int kernel_ts;   /* the echo is a kernel cookie's: options + its offset */
		int tx_blocked;  /* XDP_TX found blocked after XDP's judgment */
		__u64 acks, handed, invalid, not_listener, no_socket, mss_missed, repeat;
	} steps[] = {
		{ "genuine cookie, timestamps: handed to the listener", .acks = 1, .handed = 1 },
		{ "genuine cookie, the flow just given its request socket: no second one",
		  .assigned = 1, .acks = 1, .repeat = 1 },
		{ "genuine cookie, no timestamps: the MSS from the cache", .syn_no_ts = 1,
		  .ack_no_ts = 1, .acks = 1, .handed = 1 },
		{ "genuine cookie, no timestamp in the ACK alone: not cached, smallest MSS",
		  .ack_no_ts = 1, .acks = 1, .handed = 1, .mss_missed = 1 },
		{ "forged cookie: invalid", .ack_xor = 1U << 8, .acks = 1, .invalid = 1 },
		{ "genuine cookie XDP never judged: left to the kernel", .no_xdp = 1, .acks = 1,
		  .invalid = 1 },
		{ "the kernel's cookie (its offset in the echo, no tag of shedd's): left to it",
		  .kernel_ts = 1, .acks = 1, .invalid = 1 },
		{ "the kernel's answer to a SYN XDP charged, timestamps: left to the kernel",
		  .syn_charged = 1, .kernel_ts = 1, .acks = 1, .invalid = 1 },
		{ "the kernel's answer to a SYN XDP charged, no timestamps: left to the kernel",
		  .syn_no_ts = 1, .ack_no_ts = 1, .syn_charged = 1, .acks = 1, .invalid = 1 },
		{ "genuine cookie, XDP_TX blocked since: not counted, not handed",
		  .tx_blocked = 1 },
		{ "established flow: not a listener's", .established = 1, .acks = 1,
		  .not_listener = 1 },
		{ "nobody listens: no socket", .dport = NOLISTEN_PORT, .acks = 1, .no_socket = 1 },
		{ "class without verification: not counted", .other_class = 1 },
		{ "unprotected port: not counted", .dport = OTHER_PORT },
	};
	size_t i;
	int v6;

	(void)state;
	if (!hskel)
		skip();
	for (v6 = 0; v6 <= 1; v6++) {
		for (i = 0; i < ARRAY_SIZE(steps); i++) {
			const struct synack_want full = FULL4, full6 = FULL6;
			const struct synack_want mss_only = { .mss = v6 ? 1220 : 1300,
							      .mss_idx = v6 ? 0 : 1 };
			struct pkt_spec spec = { .l3 = v6 ? ETH_P_IPV6 : ETH_P_IP,
						 .flags = TCP_SYN,
						 .sport = (__u16)(PKT_SPORT + 20 + i) };
			__u64 d[ARRAY_SIZE(hstat_fields)], handed;
			int cfd = -1, sfd = -1, judged;
			struct synack_info info;
			struct xdp_run r;
			char name[200];
			struct pkt ack;

			snprintf(name, sizeof(name), "tc hand-off, IPv%d: %s", v6 ? 6 : 4,
				 steps[i].what);
			if (steps[i].syn_no_ts) {
				spec.opt_bytes = opt_mss1400;
				spec.opt_len = sizeof(opt_mss1400);
			} else if (v6) {
				spec.opt_bytes = opt_linux6;
				spec.opt_len = sizeof(opt_linux6);
			} else {
				spec.opt_bytes = opt_linux;
				spec.opt_len = sizeof(opt_linux);
			}
			if (steps[i].other_class)
				spec.saddr = v6 ? V6_CRIT : V4_CP;
			judged = !steps[i].other_class && steps[i].dport != OTHER_PORT;
			if (judged)
				get_synack(name, &spec, &cfg_vtc,
					   steps[i].syn_no_ts ? &mss_only : v6 ? &full6 : &full,
					   &info);
			else
				info = (struct synack_info){ .cookie = 0x1234567, .ts = 1 };
			info.cookie ^= steps[i].ack_xor;
			if (steps[i].ack_no_ts)
				info.ts = 0;
			/* The kernel's echo: its clock with the options in the
			 * low 6 bits, plus the flow's offset (cookie_v4_check()
			 * takes it off before it decodes them). */
			if (steps[i].kernel_ts)
				info.tsval = ((0x5a5a5a00U & ~63U) | (info.tsval & 63U)) + 0x3c1e0f00U;
			if (steps[i].dport)
				spec.dport = steps[i].dport;
			if (steps[i].established)
				cfd = connect_from_client(name, v6, spec.sport, &sfd);
			build_cookie_ack(&ack, &spec, &info);
			set_clocks(mono_ns());
			if (steps[i].syn_charged)
				mark_flow(name, &spec, v6, 4 /* FLOW_SYN_CHARGED */, PKT_SEQ + 1, 0);
			/* Each ACK the way it comes: XDP first, at the time
			 * the tc program then reads. */
			if (!steps[i].no_xdp)
				run_xdp(name, ack.data, ack.len, &r);
			if (steps[i].assigned)
				mark_flow(name, &spec, v6, 3 /* FLOW_ASSIGNED */, PKT_SEQ + 1,
					  info.cookie + 1);
			if (steps[i].tx_blocked) {
				struct shedd_config blocked = cfg_vtc;
				__u32 zero = 0;

				blocked.tx_blocked = 1;
				expect(bpf_map__update_elem(skel->maps.settings, &zero, sizeof(zero),
							    &blocked, sizeof(blocked), BPF_ANY) == 0,
				       name, "write settings with tx_blocked");
			}
			run_tc(name, &ack, d);
			if (steps[i].tx_blocked) {
				__u32 zero = 0;

				expect(bpf_map__update_elem(skel->maps.settings, &zero, sizeof(zero),
							    &cfg_vtc, sizeof(cfg_vtc), BPF_ANY) == 0,
				       name, "write the settings back");
			}
			if (cfd >= 0) {
				close(cfd);
				close(sfd);
			}
			handed = d[H_ASSIGNED] + d[H_FAILED];
			expect(d[H_ACKS] == steps[i].acks && handed == steps[i].handed &&
			       d[H_NOT_LISTENER] == steps[i].not_listener &&
			       d[H_NO_SOCKET] == steps[i].no_socket &&
			       d[H_INVALID] == steps[i].invalid && d[H_MALFORMED] == 0 &&
			       d[H_MSS_MISSED] == steps[i].mss_missed &&
			       d[H_REPEAT] == steps[i].repeat, name,
			       "acks %llu, assigned + failed %llu, not_listener %llu, no_socket "
			       "%llu, invalid %llu, malformed %llu, mss_missed %llu, repeat %llu",
			       (unsigned long long)d[H_ACKS], (unsigned long long)handed,
			       (unsigned long long)d[H_NOT_LISTENER],
			       (unsigned long long)d[H_NO_SOCKET], (unsigned long long)d[H_INVALID],
			       (unsigned long long)d[H_MALFORMED],
			       (unsigned long long)d[H_MSS_MISSED],
			       (unsigned long long)d[H_REPEAT]);
		}
	}
}


/*
 * --source-check verify: a CRITICAL_PLUS SYN that fails the check (its
 * source routed back by another device) keeps its class by proving its
 * address: a cookie SYN-ACK, nothing charged, an empty bucket too; the
 * ACK that returns the cookie is charged to CRITICAL_PLUS, though the
 * class does not verify, and the tc hand-off takes it. A SYN that passes
 * is charged as under strict; with XDP_TX blocked, or a SYN with no
 * listener to answer it, the failing one is judged as the default class.
 */
static void test_source_verify(void **state)
{
	const struct synack_want w = FULL4;
	const __u32 cp = SHEDD_CRITICAL_PLUS, def = SHEDD_SHEDDABLE;
	struct pkt_spec spec = { V4, .flags = TCP_SYN, .saddr = V4_CP_ELSEWHERE,
				 .sport = PKT_SPORT + 7, OPTS(opt_linux) };
	struct shedd_config cfg = cfg_vtc;
	int fwd = dummy_ifindex[0];
	struct shedd_stats before, after, want;
	struct synack_info info;
	struct xdp_run r;
	struct pkt syn, ack;
	const char *name;
	char path[96];

	(void)state;
	memset(cfg.verify, 0, sizeof(cfg.verify));
	cfg.source_check = SHEDD_SRC_VERIFY;
	/* As dummy_setup() left it: a test that turned forwarding off for
	 * the namespace (conf/all) turned it off on every device. */
	snprintf(path, sizeof(path), "/proc/sys/net/ipv4/conf/%s/forwarding", DUMMY_DEV[0]);
	expect(write_sysctl(path, "1\n") == 0, "source verify", "forwarding on: %s",
	       strerror(errno));

	name = "source verify: failing CRITICAL_PLUS SYN, empty bucket: a cookie, no charge";
	if (reset_maps(&cfg, &rate_empty))
		fail_msg("reset maps");
	pkt_build(&syn, &spec);
	read_stats(&before);
	run_xdp_on(name, syn.data, syn.len, fwd, &r);
	read_stats(&after);
	want = (struct shedd_stats){ .packets = 1, .src_failed = 1,
				     .cls[cp] = { .syn = 1, .cookie_sent = 1 } };
	expect_delta(name, &before, &after, &want);
	expect_verdict(name, r.verdict, XDP_TX);
	expect_synack(name, &syn, &r, &cfg, &w, &info);

	name = "source verify: failing CRITICAL_PLUS SYN: a cookie, no charge";
	if (reset_maps(&cfg, &rate_plenty))
		fail_msg("reset maps");
	set_clocks(mono_ns());
	read_stats(&before);
	run_xdp_on(name, syn.data, syn.len, fwd, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, XDP_TX);
	expect_synack(name, &syn, &r, &cfg, &w, &info);
	expect_delta(name, &before, &after, &want);

	name = "source verify: its cookie ACK: admitted in CRITICAL_PLUS, which does not verify";
	build_cookie_ack(&ack, &spec, &info);
	read_stats(&before);
	run_xdp_on(name, ack.data, ack.len, fwd, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, XDP_PASS);
	want = (struct shedd_stats){ .packets = 1, .ack_probed = 1,
				     .cls[cp] = { .ack_valid = 1, .charged = 1, .ack_admitted = 1 } };
	expect_delta(name, &before, &after, &want);
	if (hskel) {
		__u64 d[ARRAY_SIZE(hstat_fields)];

		name = "source verify: its cookie ACK: the tc hand-off takes it";
		run_tc(name, &ack, d);
		expect(d[H_ACKS] == 1 && d[H_ASSIGNED] + d[H_FAILED] == 1 && d[H_INVALID] == 0,
		       name, "acks %llu, assigned + failed %llu, invalid %llu",
		       (unsigned long long)d[H_ACKS],
		       (unsigned long long)(d[H_ASSIGNED] + d[H_FAILED]),
		       (unsigned long long)d[H_INVALID]);
	}

	name = "source verify: passing CRITICAL_PLUS SYN: charged and admitted, as today";
	spec.saddr = V4_CP;
	pkt_build(&syn, &spec);
	read_stats(&before);
	run_xdp_on(name, syn.data, syn.len, fwd, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, XDP_PASS);
	want = (struct shedd_stats){ .packets = 1,
				     .cls[cp] = { .syn = 1, .charged = 1, .admitted = 1 } };
	expect_delta(name, &before, &after, &want);

	name = "source verify: failing SYN to a port nobody listens on: the default class";
	spec.saddr = V4_CP_ELSEWHERE;
	spec.dport = NOLISTEN_PORT;
	if (reset_maps(&cfg, &rate_plenty))
		fail_msg("reset maps");
	pkt_build(&syn, &spec);
	read_stats(&before);
	run_xdp_on(name, syn.data, syn.len, fwd, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, XDP_PASS);
	want = (struct shedd_stats){ .packets = 1, .src_failed = 1,
				     .cls[def] = { .syn = 1, .charged = 1, .admitted = 1 } };
	expect_delta(name, &before, &after, &want);

	name = "source verify: XDP_TX blocked: the failing SYN is judged as the default class";
	spec.dport = 0;
	cfg.tx_blocked = 1;
	if (reset_maps(&cfg, &rate_plenty))
		fail_msg("reset maps");
	pkt_build(&syn, &spec);
	read_stats(&before);
	run_xdp_on(name, syn.data, syn.len, fwd, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, XDP_PASS);
	expect_delta(name, &before, &after, &want);

	/* Sent to another host's MAC: no answer may go back (rst_answerable()),
	 * shed in its class as a verified class sheds it, uncharged. */
	name = "source verify: failing SYN to another host's MAC: shed, no charge";
	cfg.tx_blocked = 0;
	if (reset_maps(&cfg, &rate_plenty))
		fail_msg("reset maps");
	mangle_dst_mac_other(&syn);
	read_stats(&before);
	run_xdp_on(name, syn.data, syn.len, fwd, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, XDP_DROP);
	want = (struct shedd_stats){ .packets = 1, .src_failed = 1,
				     .cls[cp] = { .syn = 1, .dropped = 1 } };
	expect_delta(name, &before, &after, &want);

	{
		const struct synack_want w6 = FULL6;
		const __u32 crit = SHEDD_CRITICAL;
		struct pkt_spec s6 = { V6, .flags = TCP_SYN, .saddr = V6_CRIT_ELSEWHERE,
				       .sport = PKT_SPORT + 8, OPTS(opt_linux6) };

		name = "source verify: failing IPv6 CRITICAL SYN: a cookie, no charge";
		snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/forwarding",
			 DUMMY_DEV[0]);
		expect(write_sysctl(path, "1\n") == 0, name, "forwarding on: %s",
		       strerror(errno));
		if (reset_maps(&cfg, &rate_plenty))
			fail_msg("reset maps");
		set_clocks(mono_ns());
		pkt_build(&syn, &s6);
		read_stats(&before);
		run_xdp_on(name, syn.data, syn.len, fwd, &r);
		read_stats(&after);
		expect_verdict(name, r.verdict, XDP_TX);
		expect_synack(name, &syn, &r, &cfg, &w6, &info);
		want = (struct shedd_stats){ .packets = 1, .src_failed = 1,
					     .cls[crit] = { .syn = 1, .cookie_sent = 1 } };
		expect_delta(name, &before, &after, &want);

		name = "source verify: its IPv6 cookie ACK: admitted in CRITICAL";
		build_cookie_ack(&ack, &s6, &info);
		read_stats(&before);
		run_xdp_on(name, ack.data, ack.len, fwd, &r);
		read_stats(&after);
		expect_verdict(name, r.verdict, XDP_PASS);
		want = (struct shedd_stats){ .packets = 1, .ack_probed = 1,
					     .cls[crit] = { .ack_valid = 1, .charged = 1,
							    .ack_admitted = 1 } };
		expect_delta(name, &before, &after, &want);
	}
}

/* The tc hand-off judges how old XDP's verdict on an ACK is on the clock
 * XDP stamped it with: a cookie XDP admitted is handed off within
 * PROVEN_REPEAT_UNITS of XDP's stamp, and left to the kernel after. The
 * clock starts at a unit's boundary, so the age is exact. */
static void test_handoff_same_clock(void **state)
{
	static const struct {
		const char *what;
		__u64 later; /* how long after XDP's verdict tc sees the ACK */
		int handed;
	} steps[] = {
		{ "at once", 0, 1 },
		{ "a unit before the verdict's end", (__u64)(PROVEN_REPEAT_UNITS - 1) << 20, 1 },
		{ "at the verdict's end", (__u64)PROVEN_REPEAT_UNITS << 20, 0 },
	};
	size_t i;

	(void)state;
	if (!hskel)
		skip();
	for (i = 0; i < ARRAY_SIZE(steps); i++) {
		const struct synack_want full = FULL4;
		struct pkt_spec spec = { .l3 = ETH_P_IP, .flags = TCP_SYN,
					 .sport = (__u16)(PKT_SPORT + 60 + i), OPTS(opt_linux) };
		__u64 d[ARRAY_SIZE(hstat_fields)], t0 = mono_ns() >> 20 << 20;
		struct synack_info info;
		struct xdp_run r;
		char name[160];
		struct pkt ack;

		snprintf(name, sizeof(name), "tc hand-off, the ACK %s", steps[i].what);
		set_clocks(t0);
		get_synack(name, &spec, &cfg_vtc, &full, &info);
		build_cookie_ack(&ack, &spec, &info);
		run_xdp(name, ack.data, ack.len, &r);
		expect_verdict(name, r.verdict, XDP_PASS);
		set_clocks(t0 + steps[i].later);
		run_tc(name, &ack, d);
		expect(d[H_ASSIGNED] + d[H_FAILED] == (__u64)steps[i].handed &&
		       d[H_INVALID] == (__u64)!steps[i].handed, name,
		       "assigned + failed %llu, invalid %llu; expected %s",
		       (unsigned long long)(d[H_ASSIGNED] + d[H_FAILED]),
		       (unsigned long long)d[H_INVALID],
		       steps[i].handed ? "handed off" : "left to the kernel");
	}
	set_clocks(mono_ns());
}

/* One parser for both programs: every shape of segment, through the XDP
 * program and the tc hand-off, must be a protected ACK to both or to
 * neither (XDP's ack_probed, tc's acks), and is one exactly when it is an
 * ACK (no SYN, no RST, FIN allowed) that the walks reach: up to eight VLAN
 * tags of any VID, IPv4 options, IPv6 chains of six headers; no later
 * fragment, no cut. A first fragment is the one difference: XDP judges
 * it, tc leaves it to the kernel, which meets it before reassembly. */
static void test_parsers_agree(void **state)
{
	static const struct {
		const char *what;
		int vlans, vid0;
	} tags[] = {
		{ "untagged", 0, 0 }, { "802.1Q", 1, 0 }, { "802.1ad+802.1Q", 2, 0 },
		{ "3 priority tags", 3, 1 }, { "8 priority tags", 8, 1 },
		{ "8 VLAN tags", 8, 0 }, { "9 priority tags", 9, 1 },
	};
	static const struct {
		const char *what;
		int v6;
		unsigned int ip_opt_len;
		int nr_ext;
		__u8 ext[PKT_MAX_EXT];
		unsigned int ext_len[PKT_MAX_EXT];
		__u16 frag;
		int unjudged; /* a later fragment or a chain past the walk */
		int first_frag; /* judged at XDP, left to the kernel at tc */
	} l3s[] = {
		{ "IPv4", .v6 = 0 },
		{ "IPv4, 8 option bytes", .ip_opt_len = 8 },
		{ "IPv4, 40 option bytes", .ip_opt_len = 40 },
		{ "IPv4, DF", 0, .frag = PKT_IP_DF },
		{ "IPv4 first fragment", 0, .frag = PKT_IP_MF, .first_frag = 1 },
		{ "IPv4 fragment at offset 2", 0, .frag = 2, .unjudged = 1 },
		{ "IPv6", .v6 = 1 },
		{ "IPv6, hop-by-hop, routing, dest-options", 1, .nr_ext = 3,
		  .ext = { IPPROTO_HOPOPTS, IPPROTO_ROUTING, IPPROTO_DSTOPTS } },
		{ "IPv6, AH", 1, .nr_ext = 1, .ext = { IPPROTO_AH } },
		{ "IPv6, six headers", 1, .nr_ext = 6,
		  .ext = { IPPROTO_HOPOPTS, IPPROTO_DSTOPTS, IPPROTO_ROUTING, IPPROTO_AH,
			   IPPROTO_DSTOPTS, IPPROTO_DSTOPTS } },
		{ "IPv6, seven headers", 1, .nr_ext = 7,
		  .ext = { 60, 60, 60, 60, 60, 60, 60 }, .unjudged = 1 },
		{ "IPv6, 552-byte chain", 1, CHAIN_552 },
		{ "IPv6, 2608-byte chain", 1, CHAIN_2608 },
		{ "IPv6 atomic fragment", 1, .nr_ext = 1, .ext = { IPPROTO_FRAGMENT } },
		{ "IPv6 first fragment", 1, .nr_ext = 1, .ext = { IPPROTO_FRAGMENT },
		  .frag = PKT_IP6_MF, .first_frag = 1 },
		{ "IPv6 fragment at offset 2", 1, .nr_ext = 1, .ext = { IPPROTO_FRAGMENT },
		  .frag = 2 << 3, .unjudged = 1 },
	};
	static const struct {
		const char *what;
		__u8 flags;
		unsigned int payload_len;
		int cut; /* the frame ends inside the TCP header */
		int ack;
	} segs[] = {
		{ "ACK", TCP_ACK, 0, 0, 1 },
		{ "ACK with 20 bytes", TCP_ACK | TCP_PSH, 20, 0, 1 },
		{ "FIN+ACK", TCP_ACK | TCP_FIN, 0, 0, 1 },
		{ "ACK cut in its header", TCP_ACK, 0, 1, 0 },
		{ "SYN", TCP_SYN, 0, 0, 0 },
		{ "RST+ACK", TCP_ACK | TCP_RST, 0, 0, 0 },
	};
	size_t t, l, g;
	unsigned int shapes = 0, protected = 0, wrong = 0;

	(void)state;
	if (!hskel)
		skip();
	for (t = 0; t < ARRAY_SIZE(tags); t++)
		for (l = 0; l < ARRAY_SIZE(l3s); l++)
			for (g = 0; g < ARRAY_SIZE(segs); g++) {
				struct pkt_spec spec = {
					.l3 = l3s[l].v6 ? ETH_P_IPV6 : ETH_P_IP,
					.vlans = tags[t].vlans, .vid0 = tags[t].vid0,
					.ip_opt_len = l3s[l].ip_opt_len, .nr_ext = l3s[l].nr_ext,
					.frag = l3s[l].frag, .flags = segs[g].flags,
					.payload_len = segs[g].payload_len,
					.sport = (__u16)(PKT_SPORT + 100 + shapes),
					.ack_seq = 0x1234567,
				};
				__u64 d[ARRAY_SIZE(hstat_fields)];
				struct shedd_stats before, after;
				struct xdp_run r;
				char name[200];
				struct pkt p;
				int want, want_tc, xdp;

				memcpy(spec.ext, l3s[l].ext, sizeof(spec.ext));
				memcpy(spec.ext_len, l3s[l].ext_len, sizeof(spec.ext_len));
				snprintf(name, sizeof(name), "%s %s %s", tags[t].what, l3s[l].what,
					 segs[g].what);
				pkt_build(&p, &spec);
				if (segs[g].cut)
					p.len = p.l4_off + 12;
				want = segs[g].ack && !l3s[l].unjudged &&
				       tags[t].vlans <= MAX_VLAN_TAGS;
				want_tc = want && !l3s[l].first_frag;
				read_stats(&before);
				run_xdp(name, p.data, p.len, &r);
				read_stats(&after);
				xdp = after.ack_probed != before.ack_probed;
				run_tc(name, &p, d);
				if (xdp != want || d[H_ACKS] != (__u64)want_tc) {
					print_error("%s: a protected ACK to XDP %d, to tc %llu, "
						    "expected %d and %d\n", name, xdp,
						    (unsigned long long)d[H_ACKS], want, want_tc);
					wrong++;
				}
				shapes++;
				protected += want;
			}
	print_message("%u shapes, %u of them protected ACKs\n", shapes, protected);
	if (wrong)
		fail_msg("%u of %u shapes judged wrong by one program or both", wrong, shapes);
}

/* ---- the kernel hand-off: one token per connection ---------------------- */

/* Run @len bytes of @data, which may be longer than PKT_MAX; the frame
 * that comes out is not kept. */
static __u32 run_xdp_long(const char *name, const void *data, size_t len)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = data, .data_size_in = len, .repeat = 1);
	int err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.shedd_xdp), &opts);

	expect(err == 0, name, "BPF_PROG_TEST_RUN on %zu bytes: %s", len, strerror(-err));
	return opts.retval;
}

/* Run @p and expect @verdict and exactly the counters @want (packets 1
 * is added). */
static void expect_run(const char *name, const struct pkt *p, __u32 verdict,
		       struct shedd_stats want)
{
	struct shedd_stats before, after;
	struct xdp_run r;

	want.packets = 1;
	read_stats(&before);
	run_xdp(name, p->data, p->len, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, verdict);
	expect_delta(name, &before, &after, &want);
}

static const struct shedd_class_rate rate_one = { .rate_per_sec = 1, .burst = 1 };

/* The SYN of @spec to a class that verifies always: its cookie. */
static void cookie_of(const char *name, const struct pkt_spec *spec, struct synack_info *info)
{
	const struct synack_want w4 = FULL4, w6 = FULL6;

	get_synack(name, spec, &cfg_vkernel, spec->l3 == ETH_P_IPV6 ? &w6 : &w4, info);
}

static struct pkt_spec linux_syn(int v6, __u16 sport)
{
	struct pkt_spec s = { .l3 = v6 ? ETH_P_IPV6 : ETH_P_IP, .flags = TCP_SYN, .sport = sport };

	s.opt_bytes = v6 ? opt_linux6 : opt_linux;
	s.opt_len = v6 ? sizeof(opt_linux6) : sizeof(opt_linux);
	return s;
}

/* The kernel reassembles a first fragment that carries the cookie ACK and
 * takes the connection; the cookie check reads only the fixed TCP header,
 * which a first fragment the parser accepts holds. Judged, never passed
 * uncharged; refused by a drop (a fragment is never answered). */
static void test_fragment_ack_judged(void **state)
{
	const __u32 cls = SHEDD_SHEDDABLE;
	int v6;

	(void)state;
	for (v6 = 0; v6 <= 1; v6++) {
		struct pkt_spec syn = linux_syn(v6, PKT_SPORT + 60), frag;
		struct shedd_stats want = {};
		struct synack_info info;
		char name[160];
		struct pkt ack;

		if (reset_maps(&cfg_vkernel, &rate_empty))
			fail_msg("reset maps");
		snprintf(name, sizeof(name), "IPv%d first fragment with the cookie ACK, no token: "
			 "refused", v6 ? 6 : 4);
		cookie_of(name, &syn, &info);
		frag = syn;
		if (v6) {
			frag.nr_ext = 1;
			frag.ext[0] = IPPROTO_FRAGMENT;
			frag.frag = PKT_IP6_MF;
		} else {
			frag.frag = PKT_IP_MF;
		}
		build_cookie_ack(&ack, &frag, &info);
		want.ack_probed = 1;
		want.frag_judged = 1;
		want.cls[cls].ack_valid = 1;
		want.cls[cls].charged = 1;
		want.cls[cls].ack_refused = 1;
		expect_run(name, &ack, XDP_DROP, want);

		snprintf(name, sizeof(name), "IPv%d first fragment with a forged cookie: dropped",
			 v6 ? 6 : 4);
		info.cookie ^= 1U << 9;
		build_cookie_ack(&ack, &frag, &info);
		memset(&want, 0, sizeof(want));
		want.ack_probed = 1;
		want.frag_judged = 1;
		want.cls[cls].ack_invalid = 1;
		expect_run(name, &ack, XDP_DROP, want);
	}
}

/* An IPv6 ACK behind 520 bytes of destination options: the kernel walks
 * any chain, so its cookie is checked here too, forged or not. */
static void test_deep_chain_ack_judged(void **state)
{
	const __u32 cls = SHEDD_SHEDDABLE;
	static __u8 frame[PKT_MAX + 600];
	const size_t opt_len = 520, l3 = sizeof(struct pkt_eth) + 40;
	int forged;

	(void)state;
	for (forged = 0; forged <= 1; forged++) {
		struct pkt_spec syn = linux_syn(1, PKT_SPORT + 61);
		struct shedd_stats before, after, want = {};
		struct synack_info info;
		char name[160];
		struct pkt ack;
		__u16 plen;
		__u8 *opt;
		size_t len;

		if (reset_maps(&cfg_vkernel, forged ? &rate_plenty : &rate_empty))
			fail_msg("reset maps");
		snprintf(name, sizeof(name), "IPv6 ACK behind 520 bytes of options, %s",
			 forged ? "forged cookie: dropped" : "no token: refused");
		cookie_of(name, &syn, &info);
		if (forged)
			info.cookie ^= 1U << 9;
		build_cookie_ack(&ack, &syn, &info);
		/* The options header between the IPv6 and the TCP header. */
		memcpy(frame, ack.data, l3);
		opt = frame + l3;
		memset(opt, 0, opt_len);
		opt[0] = ack.data[sizeof(struct pkt_eth) + 6]; /* TCP */
		opt[1] = opt_len / 8 - 1;
		opt[2] = 1; /* PadN over the first 257 bytes, Pad1 after */
		opt[3] = 255;
		memcpy(frame + l3 + opt_len, ack.data + l3, ack.len - l3);
		len = ack.len + opt_len;
		frame[sizeof(struct pkt_eth) + 6] = 60; /* IPPROTO_DSTOPTS */
		memcpy(&plen, frame + sizeof(struct pkt_eth) + 4, 2);
		plen = htons((__u16)(ntohs(plen) + opt_len));
		memcpy(frame + sizeof(struct pkt_eth) + 4, &plen, 2);

		read_stats(&before);
		expect_verdict(name, run_xdp_long(name, frame, len), forged ? XDP_DROP : XDP_TX);
		read_stats(&after);
		want.packets = 1;
		want.ack_probed = 1;
		if (forged) {
			want.cls[cls].ack_invalid = 1;
		} else {
			want.cls[cls].ack_valid = 1;
			want.cls[cls].charged = 1;
			want.cls[cls].ack_refused = 1;
			/* Refused with a RST, the chain dropped, as behind
			 * a short chain. */
		}
		expect_delta(name, &before, &after, &want);
	}
}

/* One token, one connection: a copy of the cookie ACK passes as a repeat
 * only as a segment of the connection not made yet (its acknowledgment
 * number, shortly after, before a RST of the flow). Its data segments
 * after the first carry a sequence number the cookie was not made from
 * (the cookie hashes the client's ISN): they reach XDP in the same NAPI
 * poll, before the kernel made the connection from the ACK (GRO delivers
 * the poll's segments at its end), and follow the ACK too, not counted
 * forged; a segment with another acknowledgment number does not. */
static void test_repeat_bound_to_its_segment(void **state)
{
	enum { AFTER_RST, AFTER_WINDOW, NEW_COOKIE, DATA_BEHIND };
	static const char *const what[] = {
		"after a RST of the flow: charged, refused",
		"100 ms later: charged, refused",
		"the ACK of another cookie of the flow: charged, refused",
		"its data right behind it: passed, no token",
	};
	const __u32 cls = SHEDD_SHEDDABLE;
	int v6, step;

	(void)state;
	for (v6 = 0; v6 <= 1; v6++) {
		for (step = AFTER_RST; step <= DATA_BEHIND; step++) {
			struct pkt_spec syn = linux_syn(v6, (__u16)(PKT_SPORT + 70 + step));
			struct shedd_stats want = {}, refused = {};
			struct synack_info info, info2;
			char name[200];
			struct pkt ack, seg;

			if (reset_maps(&cfg_vkernel, &rate_one))
				fail_msg("reset maps");
			snprintf(name, sizeof(name), "IPv%d cookie ACK, one token: admitted",
				 v6 ? 6 : 4);
			cookie_of(name, &syn, &info);
			build_cookie_ack(&ack, &syn, &info);
			want.ack_probed = 1;
			want.cls[cls].ack_valid = 1;
			want.cls[cls].charged = 1;
			want.cls[cls].ack_admitted = 1;
			expect_run(name, &ack, XDP_PASS, want);

			snprintf(name, sizeof(name), "IPv%d the same ACK again, %s", v6 ? 6 : 4,
				 what[step]);
			refused.ack_probed = 1;
			refused.cls[cls].ack_valid = 1;
			refused.cls[cls].charged = 1;
			refused.cls[cls].ack_refused = 1;
			refused.cls[cls].rst_sent = 0;
			switch (step) {
			case AFTER_RST: {
				struct pkt_spec rs = syn;
				struct shedd_stats none = { .non_syn = 1 };

				rs.flags = TCP_RST;
				rs.seq = PKT_SEQ + 1;
				rs.tcp_opts = 0;
				rs.opt_bytes = NULL;
				rs.opt_len = 0;
				pkt_build(&seg, &rs);
				expect_run(name, &seg, XDP_PASS, none);
				expect_run(name, &ack, XDP_TX, refused);
				break;
			}
			case AFTER_WINDOW:
				skel->bss->test_clock_ns += MS(100);
				expect_run(name, &ack, XDP_TX, refused);
				break;
			case NEW_COOKIE:
				/* The client tries again from the same port,
				 * another ISN: another cookie. */
				syn.seq = PKT_SEQ + 1000;
				cookie_of(name, &syn, &info2);
				build_cookie_ack(&seg, &syn, &info2);
				expect_run(name, &seg, XDP_TX, refused);
				break;
			case DATA_BEHIND: {
				struct shedd_stats rep = { .ack_probed = 1, .ack_repeat = 1 };
				struct pkt_spec ds = syn;

				skel->bss->test_clock_ns += MS(10);
				ds.flags = TCP_ACK | TCP_PSH;
				ds.seq = PKT_SEQ + 1;
				ds.ack_seq = info.cookie + 1;
				ds.opt_bytes = NULL;
				ds.opt_len = 0;
				ds.payload_len = 100;
				pkt_build(&seg, &ds);
				expect_run(name, &seg, XDP_PASS, rep);
				/* The next segment: its seq is past the first's
				 * payload, so the cookie check fails on it. */
				snprintf(name, sizeof(name),
					 "IPv%d its second data segment, seq past the first's payload: "
					 "passed, no token, not forged", v6 ? 6 : 4);
				ds.seq = PKT_SEQ + 1 + 100;
				pkt_build(&seg, &ds);
				expect_run(name, &seg, XDP_PASS, rep);
				/* The same with another acknowledgment number:
				 * not of this flow's handshake, forged. */
				{
					struct shedd_stats forged = { .ack_probed = 1,
								      .cls[cls].ack_invalid = 1 };

					snprintf(name, sizeof(name),
						 "IPv%d a segment past the first, another ack: forged",
						 v6 ? 6 : 4);
					ds.ack_seq = info.cookie + 2;
					pkt_build(&seg, &ds);
					expect_run(name, &seg, XDP_DROP, forged);
				}
				break;
			}
			}
		}
	}
}

/* The proven flows' hash was unkeyed and invertible: a host of the same
 * /64 can pick a source that hashes as an admitted flow, and its own
 * cookie ACK then passed as that flow's repeat. This is the unkeyed hash
 * shedd used, to make such a pair. */
static __u32 unkeyed_mix(__u32 h, __u32 v)
{
	h ^= v;
	h *= 0x9e3779b1U;
	return h ^ (h >> 15);
}

static void test_colliding_source_charged(void **state)
{
	const __u32 cls = SHEDD_SHEDDABLE;
	struct pkt_spec a = linux_syn(1, PKT_SPORT + 80), b;
	__u32 sa[4], sb[4], da[4], ha = 0x5edd, hb = 0x5edd;
	struct shedd_stats want = {};
	struct synack_info ia, ib;
	char src_b[INET6_ADDRSTRLEN];
	struct pkt ack;
	int i;

	(void)state;
	inet_pton(AF_INET6, PKT_V6_CLIENT, sa);
	inet_pton(AF_INET6, PKT_V6_SERVER, da);
	/* B: the same /64, another third word; its fourth word makes the
	 * unkeyed state after the addresses equal to A's. */
	memcpy(sb, sa, sizeof(sb));
	sb[2] ^= htonl(0x00010000);
	for (i = 0; i < 3; i++) {
		ha = unkeyed_mix(unkeyed_mix(ha, sa[i]), da[i]);
		hb = unkeyed_mix(unkeyed_mix(hb, sb[i]), da[i]);
	}
	sb[3] = sa[3] ^ ha ^ hb;
	expect(unkeyed_mix(unkeyed_mix(ha, sa[3]), da[3]) ==
	       unkeyed_mix(unkeyed_mix(hb, sb[3]), da[3]), "collision", "the pair does not collide");
	inet_ntop(AF_INET6, sb, src_b, sizeof(src_b));
	b = a;
	b.saddr = src_b;

	if (reset_maps(&cfg_vkernel, &rate_one))
		fail_msg("reset maps");
	cookie_of("flow A", &a, &ia);
	cookie_of("flow B", &b, &ib);
	build_cookie_ack(&ack, &a, &ia);
	want.ack_probed = 1;
	want.cls[cls].ack_valid = 1;
	want.cls[cls].charged = 1;
	want.cls[cls].ack_admitted = 1;
	expect_run("flow A, one token: admitted", &ack, XDP_PASS, want);
	build_cookie_ack(&ack, &b, &ib);
	want.cls[cls].ack_admitted = 0;
	want.cls[cls].ack_refused = 1;
	expect_run("flow B, a source colliding with A under the unkeyed hash, no token: charged, "
		   "refused", &ack, XDP_TX, want);
}

/* SipHash as flow_hash.h computes it, with two compression and four final
 * rounds, against the reference vectors of its paper (key 00..0f, message
 * 00..len-1): the rounds, the word order and the length byte are right. */
static void test_siphash_vectors(void **state)
{
	static const struct {
		unsigned int len;
		__u64 want;
	} v[] = { { 8, 0x93f5f5799a932462ULL }, { 12, 0x751e8fbc860ee5fbULL },
		  { 16, 0x3f2acc7f57c29bdbULL } };
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(v); i++) {
		__u8 msg[24] = { 0 };
		struct sip_state s;
		unsigned int j, n;
		__u64 m;

		for (j = 0; j < v[i].len; j++)
			msg[j] = (__u8)j;
		sip_init(&s, 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL);
		for (n = 0; n + 8 <= v[i].len; n += 8) {
			memcpy(&m, msg + n, 8);
			sip_word(&s, m, 2);
		}
		m = 0;
		memcpy(&m, msg + n, v[i].len - n);
		sip_word(&s, m | (__u64)v[i].len << 56, 2);
		m = sip_final(&s, 4);
		expect(m == v[i].want, "siphash", "SipHash-2-4 of %u bytes: %016llx, expected %016llx",
		       v[i].len, (unsigned long long)m, (unsigned long long)v[i].want);
	}
}

/* --source-check strict: a SYN of a class whose ACKs are probed that fails
 * the check is judged as the default class and, admitted there, answered
 * by the kernel, under tcp_syncookies=2 with a cookie of its own. Its ACK
 * comes back in the class its source claims: it passes as paid, not
 * charged there a second time (a client on an asymmetric route was charged
 * twice, and refused with a RST where its class had no token). */
static void test_strict_demoted_charged_once(void **state)
{
	const __u32 cp = SHEDD_CRITICAL_PLUS, def = SHEDD_SHEDDABLE;
	struct pkt_spec spec = { V4, .flags = TCP_SYN, .saddr = V4_CP_ELSEWHERE,
				 .sport = PKT_SPORT + 8, OPTS(opt_linux) };
	struct shedd_config cfg = cfg_vkernel;
	int fwd = dummy_ifindex[0];
	struct shedd_stats before, after, want;
	struct synack_info info;
	struct xdp_run r;
	struct pkt syn, ack;
	const char *name;
	char path[96];

	(void)state;
	memset(cfg.verify, 0, sizeof(cfg.verify));
	cfg.verify[cp] = SHEDD_VERIFY_ALWAYS;
	cfg.source_check = SHEDD_SRC_STRICT;
	cfg.default_class = def;
	snprintf(path, sizeof(path), "/proc/sys/net/ipv4/conf/%s/forwarding", DUMMY_DEV[0]);
	expect(write_sysctl(path, "1\n") == 0, "strict demoted", "forwarding on: %s",
	       strerror(errno));
	/* The kernel's cookie for this SYN: the same function, where its
	 * class answers (no check). */
	{
		const struct synack_want w4 = FULL4;
		struct shedd_config answers = cfg;

		name = "strict demoted: the kernel's cookie";
		answers.source_check = SHEDD_SRC_OFF;
		if (reset_maps(&answers, &rate_plenty))
			fail_msg("reset maps");
		set_clocks(mono_ns());
		pkt_build(&syn, &spec);
		run_xdp_on(name, syn.data, syn.len, fwd, &r);
		expect_verdict(name, r.verdict, XDP_TX);
		expect_synack(name, &syn, &r, &answers, &w4, &info);
	}

	name = "strict: a failing CRITICAL_PLUS SYN: charged to the default class";
	if (reset_maps(&cfg, &rate_plenty))
		fail_msg("reset maps");
	set_clocks(mono_ns());
	pkt_build(&syn, &spec);
	read_stats(&before);
	run_xdp_on(name, syn.data, syn.len, fwd, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, XDP_PASS);
	want = (struct shedd_stats){ .packets = 1, .src_failed = 1,
				     .cls[def] = { .syn = 1, .charged = 1, .admitted = 1 } };
	expect_delta(name, &before, &after, &want);

	name = "strict: its ACK with the kernel's cookie: passed as paid, CRITICAL_PLUS not charged";
	build_cookie_ack(&ack, &spec, &info);
	read_stats(&before);
	run_xdp_on(name, ack.data, ack.len, fwd, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, XDP_PASS);
	want = (struct shedd_stats){ .packets = 1, .ack_probed = 1, .ack_repeat = 1,
				     .cls[cp] = { .ack_valid = 1 } };
	expect_delta(name, &before, &after, &want);

	/* Shed in the default class, it was answered by nobody: nothing is
	 * noted of it (a spoofed flood that fails the check writes no note
	 * per SYN), so an ACK with that cookie is charged where it comes. */
	name = "strict: a failing CRITICAL_PLUS SYN, the default class empty: shed";
	if (reset_maps(&cfg, &rate_plenty))
		fail_msg("reset maps");
	if (set_class_rate(def, &rate_empty))
		fail_msg("empty the default class: %s", strerror(errno));
	set_clocks(mono_ns());
	read_stats(&before);
	run_xdp_on(name, syn.data, syn.len, fwd, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, XDP_DROP);
	want = (struct shedd_stats){ .packets = 1, .src_failed = 1,
				     .cls[def] = { .syn = 1, .charged = 1, .dropped = 1 } };
	expect_delta(name, &before, &after, &want);

	name = "strict: an ACK with the cookie of that shed SYN: not paid, charged to CRITICAL_PLUS";
	read_stats(&before);
	run_xdp_on(name, ack.data, ack.len, fwd, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, XDP_PASS);
	want = (struct shedd_stats){ .packets = 1, .ack_probed = 1,
				     .cls[cp] = { .charged = 1, .ack_valid = 1, .ack_admitted = 1 } };
	expect_delta(name, &before, &after, &want);
}

/* A SYN of a verified class admitted directly (not shedding) is answered
 * by the kernel, under tcp_syncookies=2 with a cookie of its own
 * (tcp_conn_request()); its ACK, of sequence number ISN + 1, reaches the
 * listener with a valid cookie and must not be charged again. */
static void test_direct_syn_charged_once(void **state)
{
	const __u32 cls = SHEDD_SHEDDABLE;
	struct shedd_config shedding = cfg_vkernel;
	int v6;

	(void)state;
	shedding.verify[SHEDD_SHEDDABLE] = SHEDD_VERIFY_SHEDDING;
	for (v6 = 0; v6 <= 1; v6++) {
		struct pkt_spec syn = linux_syn(v6, PKT_SPORT + 90);
		struct shedd_stats want = {};
		struct synack_info info;
		char name[160];
		struct pkt p;

		/* The kernel's cookie for this SYN: the same function. */
		if (reset_maps(&cfg_vkernel, NULL))
			fail_msg("reset maps");
		cookie_of("the kernel's cookie", &syn, &info);

		if (reset_maps(&shedding, &rate_one))
			fail_msg("reset maps");
		snprintf(name, sizeof(name), "IPv%d SYN, verify while shedding, one token: "
			 "admitted", v6 ? 6 : 4);
		pkt_build(&p, &syn);
		want.cls[cls].syn = 1;
		want.cls[cls].charged = 1;
		want.cls[cls].admitted = 1;
		expect_run(name, &p, XDP_PASS, want);

		snprintf(name, sizeof(name), "IPv%d its ACK with the kernel's cookie: passed, no "
			 "second token", v6 ? 6 : 4);
		build_cookie_ack(&p, &syn, &info);
		memset(&want, 0, sizeof(want));
		want.ack_probed = 1;
		want.ack_repeat = 1;
		want.cls[cls].ack_valid = 1;
		expect_run(name, &p, XDP_PASS, want);

		snprintf(name, sizeof(name), "IPv%d an ACK of another ISN: charged, refused",
			 v6 ? 6 : 4);
		syn.seq = PKT_SEQ + 5000;
		if (reset_maps(&cfg_vkernel, NULL))
			fail_msg("reset maps");
		cookie_of(name, &syn, &info);
		if (reset_maps(&shedding, &rate_one))
			fail_msg("reset maps");
		syn.seq = PKT_SEQ;
		pkt_build(&p, &syn);
		run_xdp_long(name, p.data, p.len); /* the SYN of ISN PKT_SEQ, charged */
		syn.seq = PKT_SEQ + 5000;
		build_cookie_ack(&p, &syn, &info);
		memset(&want, 0, sizeof(want));
		want.ack_probed = 1;
		want.cls[cls].ack_valid = 1;
		want.cls[cls].charged = 1;
		want.cls[cls].ack_refused = 1;
		expect_run(name, &p, XDP_TX, want);
	}
}

/* The Linux set with a TCP-MD5 option after it: 40 bytes, the most a
 * header holds. */
#define OPT_MD5_TAIL 1, 1, 19, 18, 0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11
static const __u8 opt_linux_md5[] = { 2, 4, 0x05, 0xb4, 4, 2, TS_OPT(TSVAL, 0), 1, 3, 3, 7,
				      OPT_MD5_TAIL };
static const __u8 opt_linux6_md5[] = { 2, 4, 0x05, 0xa0, 4, 2, TS_OPT(TSVAL, 0), 1, 3, 3, 7,
				       OPT_MD5_TAIL };

/* A signed SYN to a listener with keys is charged and goes to the kernel,
 * which with tcp_syncookies=2 (the kernel hand-off) answers it with a
 * cookie of its own: the ACK back is not charged a second time. */
static void test_signed_syn_charged_once(void **state)
{
	const __u32 cls = SHEDD_SHEDDABLE;
	int v6;

	(void)state;
	for (v6 = 0; v6 <= 1; v6++) {
		struct pkt_spec syn = linux_syn(v6, PKT_SPORT + 95), md5 = syn;
		struct shedd_stats want = {};
		struct synack_info info;
		char name[160];
		struct pkt p;

		/* The kernel's cookie for this flow, ISN and MSS: an unsigned
		 * SYN of it is answered with one. */
		syn.dport = md5.dport = MD5_PORT;
		if (reset_maps(&cfg_vkernel, NULL))
			fail_msg("reset maps");
		cookie_of("the kernel's cookie", &syn, &info);

		if (reset_maps(&cfg_vkernel, &rate_one))
			fail_msg("reset maps");
		snprintf(name, sizeof(name), "IPv%d signed SYN to an MD5 listener, one token: "
			 "admitted", v6 ? 6 : 4);
		md5.opt_bytes = v6 ? opt_linux6_md5 : opt_linux_md5;
		md5.opt_len = v6 ? sizeof(opt_linux6_md5) : sizeof(opt_linux_md5);
		pkt_build(&p, &md5);
		want.cls[cls].syn = 1;
		want.cls[cls].charged = 1;
		want.cls[cls].admitted = 1;
		expect_run(name, &p, XDP_PASS, want);

		snprintf(name, sizeof(name), "IPv%d its ACK with the kernel's cookie: passed, no "
			 "second token", v6 ? 6 : 4);
		build_cookie_ack(&p, &syn, &info);
		memset(&want, 0, sizeof(want));
		want.ack_probed = 1;
		want.ack_repeat = 1;
		want.cls[cls].ack_valid = 1;
		expect_run(name, &p, XDP_PASS, want);
	}
}

/* The listener stamps of the kernel hand-off, per port and CPU: ports a
 * service pairs (80 and 8080, 443 and 8443) keep a slot each, so a SYN to
 * one does not refresh the other's listener again within the second. */
static void test_refresh_slots_apart(void **state)
{
	static const __u16 pairs[][2] = { { 80, 8080 }, { 443, 8443 } };
	struct shedd_config all = cfg_vkernel;
	int fds[3] = { -1, -1, -1 };
	size_t i;

	(void)state;
	all.all_ports = 1;
	/* The kernel hand-off's setting (probe_apply_sysctls()): with it the
	 * kernel stamps a listener for bpf_tcp_gen_syncookie() at any time
	 * (tcp_get_syncookie_mss()). The test's own namespace. */
	expect(write_sysctl("/proc/sys/net/ipv4/tcp_syncookies", "2") == 0, "refresh",
	       "set tcp_syncookies=2: %s", strerror(errno));
	fds[0] = listen_on(0, 80, 16);
	fds[1] = listen_on(0, 443, 16);
	fds[2] = listen_on(0, 8443, 16);
	if (fds[0] < 0 || fds[1] < 0 || fds[2] < 0) {
		int err = errno;

		for (i = 0; i < ARRAY_SIZE(fds); i++)
			if (fds[i] >= 0)
				close(fds[i]);
		fail_msg("listen on 80, 443, 8443: %s", strerror(err));
	}
	for (i = 0; i < ARRAY_SIZE(pairs); i++) {
		struct shedd_stats before, after;
		char name[160];
		int k;

		snprintf(name, sizeof(name), "SYNs to %u, %u, %u, %u in one second: two refreshes",
			 pairs[i][0], pairs[i][1], pairs[i][0], pairs[i][1]);
		if (reset_maps(&all, NULL))
			fail_msg("reset maps");
		read_stats(&before);
		for (k = 0; k < 4; k++) {
			struct pkt_spec syn = linux_syn(0, (__u16)(PKT_SPORT + 100 + k));
			struct xdp_run r;
			struct pkt p;

			syn.dport = pairs[i][k % 2];
			pkt_build(&p, &syn);
			run_xdp(name, p.data, p.len, &r);
			expect_verdict(name, r.verdict, XDP_TX);
		}
		read_stats(&after);
		expect(after.refreshed - before.refreshed == 2, name, "%llu refreshes",
		       (unsigned long long)(after.refreshed - before.refreshed));
	}
	for (i = 0; i < ARRAY_SIZE(fds); i++)
		close(fds[i]);
	write_sysctl("/proc/sys/net/ipv4/tcp_syncookies", "1");
}

/* ---- the settings record, switched whole ------------------------------ */

/* Two records that differ in what a SYN reads first (all_ports) and what
 * it reads later (default_class): A judges the SYN in SHEDDABLE and drops
 * it (no token); B passes it (port unprotected). A SYN that read A's
 * all_ports and B's default_class is counted in CRITICAL: only a mix does
 * that. */
static const struct shedd_config cfg_mix_a = { .all_ports = 1, .default_class = SHEDD_SHEDDABLE };
static const struct shedd_config cfg_mix_b = { .all_ports = 0, .default_class = SHEDD_CRITICAL };

struct flipper {
	volatile int stop;
	int cpu;
	unsigned long flips;
	int err;
};

static void *flip_settings(void *arg)
{
	struct flipper *f = arg;
	int slots = bpf_map__fd(skel->maps.settings), cur = bpf_map__fd(skel->maps.settings_cur);
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(f->cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	while (!f->stop && !f->err) {
		f->err = settings_publish(slots, cur, f->flips % 2 ? &cfg_mix_a : &cfg_mix_b);
		f->flips++;
		/* Each record stays a while, 1 to 12 ms, never in step with the
		 * reader: a run of BPF_PROG_TEST_RUN for XDP waits for a grace
		 * period itself, as the switch does, and the two fall into
		 * step on a busy machine (the reader then saw one record). */
		usleep(1000 + (useconds_t)(f->flips * 7919 % 12) * 1000);
	}
	return NULL;
}

static void test_settings_switch_whole(void **state)
{
	struct pkt_spec spec = { V4, .flags = TCP_SYN, .dport = OTHER_PORT };
	struct flipper f = { .cpu = -1 };
	struct shedd_stats before, after;
	struct timespec t0, t1;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	__u64 mixed, seen_a, seen_b;
	pthread_t th;
	struct pkt p;
	double sec;

	(void)state;
	if (ncpu < 2)
		skip();
	f.cpu = (int)((test_cpu + 1) % ncpu);
	if (reset_maps(&cfg_mix_a, &rate_empty))
		fail_msg("reset maps");
	pkt_build(&p, &spec);
	read_stats(&before);
	assert_int_equal(pthread_create(&th, NULL, flip_settings, &f), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		/* Short runs: a run holds the RCU read lock from its first
		 * packet to its last, so a long one sees one record, and on a
		 * busy machine the writer's two flips can both fall inside it. */
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = p.data, .data_size_in = p.len,
			    .repeat = 20);

		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.shedd_xdp), &opts))
			break;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		sec = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	} while (sec < 2.0);
	f.stop = 1;
	pthread_join(th, NULL);
	read_stats(&after);
	/* The next case starts from record 0 again. */
	settings_publish(bpf_map__fd(skel->maps.settings), bpf_map__fd(skel->maps.settings_cur),
			 &cfg_base);
	{
		__u32 zero = 0;

		bpf_map__update_elem(skel->maps.settings_cur, &zero, sizeof(zero), &zero,
				     sizeof(zero), BPF_ANY);
	}
	mixed = after.cls[SHEDD_CRITICAL].syn - before.cls[SHEDD_CRITICAL].syn;
	seen_a = after.cls[SHEDD_SHEDDABLE].syn - before.cls[SHEDD_SHEDDABLE].syn;
	seen_b = after.unprotected - before.unprotected;
	print_message("settings: %lu switches; SYNs judged by A %llu, passed by B %llu, by a mix "
		      "%llu\n", f.flips, (unsigned long long)seen_a, (unsigned long long)seen_b,
		      (unsigned long long)mixed);
	expect(f.err == 0, "settings switch", "settings_publish: %s", strerror(-f.err));
	expect(f.flips >= 10 && seen_a > 0 && seen_b > 0, "settings switch",
	       "the records did not alternate under the reader");
	expect(mixed == 0, "settings switch", "%llu SYNs read a mix of the two records",
	       (unsigned long long)mixed);
}

/* ---- group ---------------------------------------------------------------- */

static int add_prefix_v4(const char *addr, __u32 len, __u32 cls)
{
	struct shedd_lpm_v4 key = { .prefixlen = len };

	pkt_addr(AF_INET, addr, key.addr);
	return bpf_map__update_elem(skel->maps.prefix_v4, &key, sizeof(key),
				    &cls, sizeof(cls), BPF_ANY);
}

static int add_prefix_v6(const char *addr, __u32 len, __u32 cls)
{
	struct shedd_lpm_v6 key = { .prefixlen = len };

	pkt_addr(AF_INET6, addr, key.addr);
	return bpf_map__update_elem(skel->maps.prefix_v6, &key, sizeof(key),
				    &cls, sizeof(cls), BPF_ANY);
}

/* A local address in tun_local: IPv4 as ::ffff:a.b.c.d. */
static int add_tun_local(int family, const char *addr)
{
	struct shedd_tun_addr key = { 0 };
	__u8 one = 1;

	if (family == AF_INET) {
		key.addr[10] = 0xff;
		key.addr[11] = 0xff;
		pkt_addr(AF_INET, addr, key.addr + 12);
	} else {
		pkt_addr(AF_INET6, addr, key.addr);
	}
	return bpf_map__update_elem(skel->maps.tun_local, &key, sizeof(key), &one, sizeof(one),
				    BPF_ANY);
}

static int group_setup(void **state)
{
	__u16 port = PROTECTED_PORT, nolisten = NOLISTEN_PORT, fullq = FULLQ_PORT;
	__u16 quiet = QUIET_PORT;
	int err;

	(void)state;
	libbpf_set_print(libbpf_print_warn);
	if (harness_pin_cpu(&test_cpu))
		return -1;
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus <= 0 || test_cpu >= nr_cpus) {
		print_error("possible CPUs: %d (pinned to %d)\n", nr_cpus, test_cpu);
		return -1;
	}

	if (netns_setup() || harness_load())
		return -1;

	/* What does not change between cases: one protected port, and
	 * prefixes that nest so the longest match is seen to win. */
	err = protect_port(port);
	if (!err)
		err = protect_port(nolisten);
	if (!err)
		err = protect_port(fullq);
	if (!err)
		err = protect_port(quiet);
	if (!err)
		err = protect_port(MD5_PORT);
	if (!err)
		err = protect_port(MPTCP_PORT);
	if (!err)
		err = add_prefix_v4("198.18.1.0", 24, SHEDD_CRITICAL_PLUS);
	if (!err)
		err = add_prefix_v4("198.18.1.128", 25, SHEDD_SHEDDABLE_PLUS);
	if (!err)
		err = add_prefix_v6("2001:db8:1::", 48, SHEDD_CRITICAL);
	if (err) {
		print_error("fill ports and prefixes: %s\n", strerror(-err));
		goto fail;
	}
	if (!err)
		err = add_tun_local(AF_INET, PKT_V4_SERVER);
	if (!err)
		err = add_tun_local(AF_INET6, PKT_V6_SERVER);
	if (err) {
		print_error("fill tun_local: %s\n", strerror(-err));
		goto fail;
	}
	err = handoff_load();
	if (err)
		print_message("tc hand-off program not loaded (%s): its tests skip\n",
			      strerror(-err));
	return 0;
fail:
	shedd_bpf__destroy(skel);
	skel = NULL;
	return -1;
}

/* Stack headroom: the verifier allows 512 bytes over a call chain, with
 * each frame rounded up to 32 bytes on the kernels before 6.9 (Debian 12's
 * 6.1 at least). The program's entry calls global functions; they call
 * flow_hash_at() (all but shedd_refuse(), which is handed the hash), one
 * bpf_loop()'s callback, one shedd_borrow() and the IP half of the parse
 * (shedd_parse_ip(), under shedd_parse() and, one level deeper, under
 * shedd_tunnel()'s shedd_parse_inner()), whose frames are counted on top.
 * The deepest chain must leave STACK_HEADROOM free on every kernel, so one more
 * local does not turn into a program that loads nowhere. The depths are
 * the verifier's own (its statistics, log level 4), of a load with every
 * function in (verify_enabled), each named by the program's function info
 * (in the verifier's order). */
#define STACK_LIMIT 512
#define STACK_HEADROOM 64

static __u32 frame_round(__u32 d)
{
	return (d + 31) / 32 * 32;
}

/* The names of the functions of the loaded program @fd, in its order. */
static __u32 func_names(int fd, const struct btf *btf, const char **names, __u32 max)
{
	struct bpf_func_info fi[32];
	struct bpf_prog_info info;
	__u32 len = sizeof(info), i, n;

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.nr_func_info)
		return 0;
	n = info.nr_func_info < max ? info.nr_func_info : max;
	memset(&info, 0, sizeof(info));
	info.nr_func_info = n;
	info.func_info_rec_size = sizeof(fi[0]);
	info.func_info = (__u64)(unsigned long)fi;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	for (i = 0; i < n; i++)
		names[i] = btf__name_by_offset(btf, btf__type_by_id(btf, fi[i].type_id)->name_off);
	return n;
}

static void test_stack_headroom(void **state)
{
	static char log[1 << 16];
	struct shedd_bpf *s;
	__u32 depth[32], n = 0, i, deepest = 0, nested = 0, borrow = 0, tun = 0, parse_ip = 0;
	__u32 chain, nn;
	const char *names[32] = { 0 };
	const char *p;
	char *end;
	int err;

	(void)state;
	s = shedd_bpf__open();
	assert_non_null(s);
	s->rodata->use_test_clock = 1;
	s->rodata->verify_enabled = 1;
	SET_FLOW_SIP(s->rodata, harness_key);
	bpf_program__set_log_buf(s->progs.shedd_xdp, log, sizeof(log));
	bpf_program__set_log_level(s->progs.shedd_xdp, 4);
	err = shedd_bpf__load(s);
	if (err) {
		shedd_bpf__destroy(s);
		fail_msg("load: %s", strerror(-err));
	}
	nn = func_names(bpf_program__fd(s->progs.shedd_xdp), bpf_object__btf(s->obj), names, 32);
	p = strstr(log, "stack depth ");
	if (!p) {
		shedd_bpf__destroy(s);
		fail_msg("no stack depth in the verifier's statistics: %.300s", log);
	}
	p += strlen("stack depth ");
	do {
		depth[n++] = (__u32)strtoul(p, &end, 10);
		assert_true(end != p);
		p = end + 1;
	} while (*end == '+' && n < 32);
	assert_true(n >= 2);
	if (nn != n) {
		shedd_bpf__destroy(s);
		fail_msg("%u functions named, %u stack depths", nn, n);
	}
	/* What the global functions call: the hash or the callback,
	 * shedd_cookie_ack() shedd_borrow() (charge()), shedd_parse() the
	 * IP half of the parse, and shedd_tunnel() the device lookup and the
	 * inner parse, which calls the IP half too. */
	for (i = 1; i < n; i++)
		if (!strcmp(names[i], "flow_hash_at") || !strcmp(names[i], "opt_step"))
			if (frame_round(depth[i]) > nested)
				nested = frame_round(depth[i]);
	for (i = 1; i < n; i++) {
		if (!strcmp(names[i], "shedd_borrow"))
			borrow = frame_round(depth[i]);
		if (!strcmp(names[i], "shedd_parse_ip"))
			parse_ip = frame_round(depth[i]);
	}
	for (i = 1; i < n; i++)
		if (!strcmp(names[i], "shedd_parse_inner"))
			tun = frame_round(depth[i]) + parse_ip;
	for (i = 1; i < n; i++)
		if (!strcmp(names[i], "shedd_tun_dev") && frame_round(depth[i]) > tun)
			tun = frame_round(depth[i]);
	for (i = 1; i < n; i++) {
		__u32 d = frame_round(depth[i]), below = 0;

		if (!strcmp(names[i], "flow_hash_at") || !strcmp(names[i], "opt_step") ||
		    !strcmp(names[i], "shedd_parse_ip") || !strcmp(names[i], "shedd_parse_inner"))
			continue;
		if (strcmp(names[i], "shedd_refuse") && strcmp(names[i], "shedd_borrow"))
			below = nested;
		if (!strcmp(names[i], "shedd_cookie_ack") && borrow > below)
			below = borrow;
		if (!strcmp(names[i], "shedd_parse") && parse_ip > below)
			below = parse_ip;
		if (!strcmp(names[i], "shedd_tunnel") && tun > below)
			below = tun;
		if (d + below > deepest)
			deepest = d + below;
	}
	chain = frame_round(depth[0]) + deepest;
	print_message("stack: entry %u, deepest callee with what it calls %u: %u of %u bytes\n",
		      depth[0], deepest, chain, STACK_LIMIT);
	/* The verifier's work on this kernel, for headroom on older ones. */
	p = strstr(log, "processed ");
	if (p)
		print_message("verifier: %.*s\n", (int)strcspn(p, "\n"), p);
	for (i = 0; i < n; i++)
		print_message("  %s %u\n", names[i] ? names[i] : "?", depth[i]);
	shedd_bpf__destroy(s);
	if (chain > STACK_LIMIT - STACK_HEADROOM)
		fail_msg("the deepest call chain takes %u bytes of the verifier's %u: less "
			 "than %u left", chain, STACK_LIMIT, STACK_HEADROOM);
}

/* Per-source fairness (bpf/fair.h). The sketch is mapped, as the daemon
 * maps it, to clear it and to read estimates with the same arithmetic. */
#include "fair_sketch.h"

static struct shedd_fair_cell *fair_cells;

static int fair_reset(__u32 cls, __u32 levels, __u32 active, const __u32 *limit)
{
	const struct shedd_fair_heavy empty_slot = {};
	const struct shedd_fair_stats zero = {};
	struct shedd_fair_class fc = { .levels = levels, .active = active };
	__u32 c, i;
	int err = 0;

	if (!fair_cells) {
		void *m = mmap(NULL, (size_t)FAIR_CELLS * sizeof(*fair_cells), PROT_READ | PROT_WRITE,
			       MAP_SHARED, bpf_map__fd(skel->maps.fair_cells), 0);

		if (m == MAP_FAILED)
			return -errno;
		fair_cells = m;
	}
	memset(fair_cells, 0, (size_t)FAIR_CELLS * sizeof(*fair_cells));
	if (limit)
		memcpy(fc.limit, limit, sizeof(fc.limit));
	for (c = 0; !err && c < SHEDD_NR_CLASSES; c++) {
		const struct shedd_fair_class off = {};

		err = bpf_map__update_elem(skel->maps.fair_config, &c, sizeof(c),
					   c == cls ? &fc : &off, sizeof(fc), BPF_ANY);
		if (!err)
			err = update_percpu(skel->maps.fair_stats, c, &zero, sizeof(zero));
	}
	for (i = 0; !err && i < SHEDD_NR_CLASSES * FAIR_HEAVY_SLOTS; i++) {
		const struct shedd_fair_heavy_cpu none = {};

		err = bpf_map__update_elem(skel->maps.fair_heavy, &i, sizeof(i), &empty_slot,
					   sizeof(empty_slot), BPF_ANY);
		if (!err)
			err = update_percpu(skel->maps.fair_heavy_cpu, i, &none, sizeof(none));
	}
	return err;
}

/* The slots of class @cls as a reader sees them: fair_heavy, with the
 * sheds each CPU still holds in fair_heavy_cpu added (fair_maps_read()). */
static void fair_slots_of(__u32 cls, struct shedd_fair_heavy *slots)
{
	int ncpus = libbpf_num_possible_cpus();
	struct shedd_fair_heavy_cpu *pending = calloc((size_t)FAIR_HEAVY_SLOTS * (size_t)ncpus,
						    sizeof(*pending));
	__u32 i;

	assert_non_null(pending);
	for (i = 0; i < FAIR_HEAVY_SLOTS; i++) {
		__u32 key = cls * FAIR_HEAVY_SLOTS + i;

		assert_int_equal(bpf_map__lookup_elem(skel->maps.fair_heavy, &key, sizeof(key),
						      &slots[i], sizeof(slots[i]), 0), 0);
		assert_int_equal(bpf_map__lookup_elem(skel->maps.fair_heavy_cpu, &key, sizeof(key),
						      &pending[(size_t)i * (size_t)ncpus],
						      (size_t)ncpus * sizeof(*pending), 0), 0);
	}
	fair_heavy_add_pending(slots, pending, FAIR_HEAVY_SLOTS, ncpus);
	free(pending);
}

static struct shedd_fair_stats fair_stats_of(__u32 cls)
{
	struct shedd_fair_stats sum = {}, *percpu;
	int i, n = libbpf_num_possible_cpus();

	percpu = calloc((size_t)n, sizeof(*percpu));
	assert_non_null(percpu);
	assert_int_equal(bpf_map__lookup_elem(skel->maps.fair_stats, &cls, sizeof(cls), percpu,
					      (size_t)n * sizeof(*percpu), 0), 0);
	for (i = 0; i < n; i++) {
		sum.counted += percpu[i].counted;
		sum.checked += percpu[i].checked;
		sum.shed += percpu[i].shed;
		sum.over += percpu[i].over;
	}
	free(percpu);
	return sum;
}

/* The estimate of the source @addr (text) at @level, as the daemon reads it. */
static __u32 fair_est(__u32 cls, const char *addr, __u32 level)
{
	const struct sip_state init = { skel->rodata->flow_sip[0], skel->rodata->flow_sip[1],
					skel->rodata->flow_sip[2], skel->rodata->flow_sip[3] };
	__u32 a[4] = {};
	int family = strchr(addr, ':') ? 6 : 4;

	assert_int_equal(inet_pton(family == 4 ? AF_INET : AF_INET6, addr, a), 1);
	return fair_estimate(fair_cells, cls, level, fair_hash(&init, a, family, level),
			     skel->bss->test_clock_ns);
}

/* Send @n SYNs, from @saddr or from @n addresses @fmt with %u from @first;
 * return how many passed. */
static unsigned int fair_syns_chain(const char *name, const char *fmt, unsigned int first,
				    unsigned int n, int vlans, int chain)
{
	const struct pkt_spec long_chain = { CHAIN_552 };
	unsigned int i, passed = 0;

	for (i = 0; i < n; i++) {
		char addr[64];
		struct pkt_spec spec = { .l3 = strchr(fmt, ':') ? ETH_P_IPV6 : ETH_P_IP,
					 .flags = TCP_SYN, .saddr = addr, .vlans = vlans,
					 .sport = (__u16)(40000 + i) };
		struct xdp_run r;
		struct pkt p;

		if (chain && spec.l3 == ETH_P_IPV6) {
			spec.nr_ext = long_chain.nr_ext;
			memcpy(spec.ext, long_chain.ext, sizeof(spec.ext));
			memcpy(spec.ext_len, long_chain.ext_len, sizeof(spec.ext_len));
		}
		snprintf(addr, sizeof(addr), fmt, first + (strchr(fmt, '%') ? i : 0));
		pkt_build(&p, &spec);
		run_xdp(name, p.data, p.len, &r);
		expect(r.verdict == XDP_PASS || r.verdict == XDP_DROP, name, "SYN %u from %s: %s",
		       i + 1, addr, verdict_name(r.verdict));
		passed += r.verdict == XDP_PASS;
	}
	return passed;
}

static unsigned int fair_syns(const char *name, const char *fmt, unsigned int first,
			      unsigned int n, int vlans)
{
	return fair_syns_chain(name, fmt, first, n, vlans, 0);
}

/* Admissions are counted at every level of the source, tagged or not;
 * IPv4 has no /48; nothing is checked while the class does not shed. */
static void test_fair_counts_levels(void **state)
{
	const char *name = "fairness: admissions counted at each level";
	const __u32 cls = SHEDD_SHEDDABLE;
	struct shedd_fair_stats fs;

	(void)state;
	assert_int_equal(reset_maps(NULL, NULL), 0);
	assert_int_equal(fair_reset(cls, FAIR_ALL_LEVELS, 0, NULL), 0);
	expect(fair_syns(name, "198.18.7.9", 0, 4, 0) == 4, name, "4 untagged SYNs admitted");
	expect(fair_syns(name, "198.18.7.9", 0, 3, 1) == 3, name, "3 tagged SYNs admitted");
	expect(fair_est(cls, "198.18.7.9", 0) == 7 && fair_est(cls, "198.18.7.0", 1) == 7 &&
	       fair_est(cls, "198.18.7.200", 1) == 7, name,
	       "address %u, /24 %u (7 each)", fair_est(cls, "198.18.7.9", 0),
	       fair_est(cls, "198.18.7.0", 1));
	expect(fair_est(cls, "198.18.7.10", 0) == 0 && fair_est(cls, "198.18.8.9", 1) == 0,
	       name, "another address, another /24: 0 (%u, %u)",
	       fair_est(cls, "198.18.7.10", 0), fair_est(cls, "198.18.8.9", 1));
	expect(fair_syns(name, "2001:db8:5:2::%u", 1, 5, 2) == 5, name, "5 IPv6 SYNs");
	expect(fair_est(cls, "2001:db8:5:2::1", 0) == 1 && fair_est(cls, "2001:db8:5:2::", 1) == 5 &&
	       fair_est(cls, "2001:db8:5:ffff::", 2) == 5 && fair_est(cls, "2001:db8:6::", 2) == 0,
	       name, "IPv6: address 1, /64 5, /48 5, another /48 0 (%u %u %u %u)",
	       fair_est(cls, "2001:db8:5:2::1", 0), fair_est(cls, "2001:db8:5:2::", 1),
	       fair_est(cls, "2001:db8:5:ffff::", 2), fair_est(cls, "2001:db8:6::", 2));
	fs = fair_stats_of(cls);
	expect(fs.counted == 12 && fs.checked == 0 && fs.shed == 0, name,
	       "counted %llu, checked %llu, shed %llu", (unsigned long long)fs.counted,
	       (unsigned long long)fs.checked, (unsigned long long)fs.shed);

	/* Levels off: nothing counted. */
	assert_int_equal(fair_reset(cls, 0, 1, (const __u32[FAIR_LEVELS]){ 1, 1, 1 }), 0);
	expect(fair_syns(name, "198.18.7.9", 0, 5, 0) == 5, name, "fairness off: all admitted");
	fs = fair_stats_of(cls);
	expect(fs.counted == 0 && fs.checked == 0 && fair_est(cls, "198.18.7.9", 0) == 0, name,
	       "fairness off: nothing counted or checked");
}

struct fair_case {
	const char *name;
	__u32 levels;
	__u32 limit[FAIR_LEVELS];
	__u32 active;
	const char *heavy;  /* a format with %u, or one address */
	unsigned int n, admitted; /* SYNs of the heavy source, and admitted */
	const char *light;  /* another source: all its 3 SYNs admitted */
	const char *slot;   /* the heavy hitter noted, as fair_hitter_source() */
	__u32 slot_level;
	int chain;          /* IPv6 SYNs behind CHAIN_552 */
};

static const struct fair_case fair_cases[] = {
	{ "fairness: shedding, an address over its limit is shed first", FAIR_ALL_LEVELS,
	  { 5, 0, 0 }, 1, "198.18.7.9", 10, 5, "198.18.7.10", "198.18.7.9", 0, 0 },
	{ "fairness: not shedding, a heavy address is admitted", FAIR_ALL_LEVELS,
	  { 5, 0, 0 }, 0, "198.18.7.9", 10, 10, "198.18.7.10", "198.18.7.9", 0, 0 },
	{ "fairness: a /24 of many addresses is one source", FAIR_ALL_LEVELS,
	  { 5, 5, 0 }, 1, "198.18.7.%u", 10, 5, "198.18.8.1", "198.18.7.0/24", 1, 0 },
	{ "fairness: levels: without 24, a /24 of light addresses passes", FAIR_ADDR,
	  { 5, 5, 0 }, 1, "198.18.7.%u", 10, 10, "198.18.8.1", NULL, 0, 0 },
	{ "fairness: an IPv6 /64 of many addresses is one source", FAIR_ALL_LEVELS,
	  { 5, 5, 0 }, 1, "2001:db8:5:2::%u", 10, 5, "2001:db8:5:3::1", "2001:db8:5:2::/64", 1, 0 },
	{ "fairness: an IPv6 /48 of many /64s is one source", FAIR_ALL_LEVELS,
	  { 5, 5, 5 }, 1, "2001:db8:5:%x::1", 10, 5, "2001:db8:6::1", "2001:db8:5::/48", 2, 0 },
	{ "fairness: shedding, an IPv6 address behind a 552-byte chain over its limit is shed",
	  FAIR_ALL_LEVELS, { 5, 0, 0 }, 1, "2001:db8:5:2::9", 10, 5, "2001:db8:5:3::1",
	  "2001:db8:5:2::9", 0, 1 },
	{ "fairness: an IPv6 /64 behind a 552-byte chain is one source", FAIR_ALL_LEVELS,
	  { 5, 5, 0 }, 1, "2001:db8:5:2::%u", 10, 5, "2001:db8:5:3::1", "2001:db8:5:2::/64", 1,
	  1 },
};

static void run_fair(void **state)
{
	const struct fair_case *c = *state;
	const __u32 cls = SHEDD_SHEDDABLE;
	struct shedd_fair_heavy slots[FAIR_HEAVY_SLOTS];
	struct shedd_stats before, after, want = {};
	struct fair_hitter top[4];
	struct shedd_fair_stats fs;
	unsigned int passed;
	int n;

	assert_int_equal(reset_maps(NULL, NULL), 0);
	assert_int_equal(fair_reset(cls, c->levels, c->active, c->limit), 0);
	read_stats(&before);
	passed = fair_syns_chain(c->name, c->heavy, 1, c->n, 0, c->chain);
	read_stats(&after);
	expect(passed == c->admitted, c->name, "heavy source: %u of %u admitted, expected %u",
	       passed, c->n, c->admitted);
	want.packets = c->n;
	want.cls[cls].syn = c->n;
	want.cls[cls].charged = c->n; /* a SYN shed for fairness is demand all the same */
	want.cls[cls].admitted = c->admitted;
	want.cls[cls].dropped = c->n - c->admitted;
	expect_delta(c->name, &before, &after, &want);
	expect(fair_syns_chain(c->name, c->light, 0, 3, 0, c->chain) == 3, c->name,
	       "light source %s admitted",
	       c->light);
	fs = fair_stats_of(cls);
	expect(fs.shed == c->n - c->admitted && fs.counted == c->admitted + 3 &&
	       fs.checked == (c->active ? c->n + 3 : 0), c->name,
	       "fair_stats: shed %llu counted %llu checked %llu",
	       (unsigned long long)fs.shed, (unsigned long long)fs.counted,
	       (unsigned long long)fs.checked);
	fair_slots_of(cls, slots);
	n = fair_top(slots, cls, skel->bss->test_clock_ns, top, 4);
	if (!c->slot) {
		expect(n == 0, c->name, "no heavy hitter noted (%d)", n);
		return;
	}
	expect(n >= 1, c->name, "a heavy hitter noted");
	if (n >= 1) {
		char src[64];

		fair_hitter_source(&top[0], src, sizeof(src));
		expect(!strcmp(src, c->slot) && top[0].level == c->slot_level &&
		       top[0].shed == c->n - c->admitted, c->name,
		       "heavy hitter %s level %u shed %llu, expected %s level %u", src,
		       top[0].level, (unsigned long long)top[0].shed, c->slot, c->slot_level);
	}
}

/* A heavy source's shed SYNs do not write its slot, which every CPU
 * shares, one by one: the slot is written when the source takes it, then
 * at most once per FAIR_NOTE_NS, with the sheds counted meanwhile in this
 * CPU's fair_heavy_cpu; a reader that adds those sees every shed at once. */
static void test_fair_note_batched(void **state)
{
	const char *name = "fairness: a shed SYN rewrites its shared slot at most once per interval";
	const __u32 cls = SHEDD_SHEDDABLE, limit[FAIR_LEVELS] = { 5, 0, 0 };
	struct shedd_fair_heavy first, now_slot, slots[FAIR_HEAVY_SLOTS];
	struct fair_hitter top[1];
	__u32 key = ~0U, i;
	int n;

	(void)state;
	assert_int_equal(reset_maps(NULL, NULL), 0);
	assert_int_equal(fair_reset(cls, FAIR_ADDR, 1, limit), 0);
	expect(fair_syns(name, "198.18.7.9", 0, 6, 0) == 5, name, "5 admitted, the 6th shed");
	for (i = 0; i < FAIR_HEAVY_SLOTS; i++) {
		__u32 k = cls * FAIR_HEAVY_SLOTS + i;
		struct shedd_fair_heavy s;

		assert_int_equal(bpf_map__lookup_elem(skel->maps.fair_heavy, &k, sizeof(k), &s,
						      sizeof(s), 0), 0);
		if (s.family)
			key = k;
	}
	assert_true(key != ~0U);
	assert_int_equal(bpf_map__lookup_elem(skel->maps.fair_heavy, &key, sizeof(key), &first,
					      sizeof(first), 0), 0);
	expect(first.shed == 1, name, "the slot taken with its first shed (%llu)",
	       (unsigned long long)first.shed);

	/* 100 more shed within the interval: the slot is not written. */
	skel->bss->test_clock_ns += FAIR_NOTE_NS - 1;
	expect(fair_syns(name, "198.18.7.9", 0, 100, 0) == 0, name, "100 more shed");
	assert_int_equal(bpf_map__lookup_elem(skel->maps.fair_heavy, &key, sizeof(key), &now_slot,
					      sizeof(now_slot), 0), 0);
	expect(!memcmp(&first, &now_slot, sizeof(first)), name,
	       "the slot unwritten: shed %llu, last_ns %llu (was %llu, %llu)",
	       (unsigned long long)now_slot.shed, (unsigned long long)now_slot.last_ns,
	       (unsigned long long)first.shed, (unsigned long long)first.last_ns);
	fair_slots_of(cls, slots);
	n = fair_top(slots, cls, skel->bss->test_clock_ns, top, 1);
	expect(n == 1 && top[0].shed == 101, name, "a reader sees 101 shed (%llu)",
	       n == 1 ? (unsigned long long)top[0].shed : 0ULL);

	/* The interval over: the next shed writes the slot, with all. */
	skel->bss->test_clock_ns += 1;
	expect(fair_syns(name, "198.18.7.9", 0, 1, 0) == 0, name, "one more shed");
	assert_int_equal(bpf_map__lookup_elem(skel->maps.fair_heavy, &key, sizeof(key), &now_slot,
					      sizeof(now_slot), 0), 0);
	expect(now_slot.shed == 102 && now_slot.last_ns == skel->bss->test_clock_ns, name,
	       "the slot written: shed %llu, last_ns now", (unsigned long long)now_slot.shed);
	fair_slots_of(cls, slots);
	n = fair_top(slots, cls, skel->bss->test_clock_ns, top, 1);
	expect(n == 1 && top[0].shed == 102, name, "a reader sees 102 shed (%llu)",
	       n == 1 ? (unsigned long long)top[0].shed : 0ULL);
}

/* The estimate slides: half a window after the window of its admissions
 * a source holds half of them, two windows after, none. */
static void test_fair_window_slides(void **state)
{
	const char *name = "fairness: the count slides out of the window";
	const __u32 cls = SHEDD_SHEDDABLE, limit[FAIR_LEVELS] = { 6, 0, 0 };
	const __u64 start = (T0_NS | FAIR_WINDOW_MASK) + 1; /* a window's start */

	(void)state;
	assert_int_equal(reset_maps(NULL, NULL), 0);
	assert_int_equal(fair_reset(cls, FAIR_ADDR, 1, limit), 0);
	skel->bss->test_clock_ns = start;
	expect(fair_syns(name, "198.18.7.9", 0, 8, 0) == 6, name, "6 of 8 admitted");
	skel->bss->test_clock_ns = start + FAIR_WINDOW_NS + FAIR_WINDOW_NS / 2;
	expect(fair_est(cls, "198.18.7.9", 0) == 3, name, "half a window on: 3 (%u)",
	       fair_est(cls, "198.18.7.9", 0));
	expect(fair_syns(name, "198.18.7.9", 0, 4, 0) == 3, name, "3 more admitted, then shed");
	skel->bss->test_clock_ns = start + 4 * FAIR_WINDOW_NS;
	expect(fair_est(cls, "198.18.7.9", 0) == 0, name, "two windows on: 0");
	expect(fair_syns(name, "198.18.7.9", 0, 6, 0) == 6, name, "6 admitted again");
}

/* A verified class counts the ACKs that proved their address, never the
 * SYNs answered with a cookie; over its limit, a source's SYN is shed
 * without a cookie, another's answered. */
static void test_fair_verified_counts_acks(void **state)
{
	const char *name = "fairness: a verified class counts proven ACKs";
	const struct synack_want w4 = FULL4;
	const __u32 cls = SHEDD_SHEDDABLE, limit[FAIR_LEVELS] = { 1, 0, 0 };
	struct pkt_spec spec = { .l3 = ETH_P_IP, .flags = TCP_SYN, OPTS(opt_linux) };
	struct synack_info info;
	struct shedd_fair_stats fs;
	struct xdp_run r;
	struct pkt ack, syn;
	unsigned int i;

	(void)state;
	assert_int_equal(reset_maps(&cfg_vtc, NULL), 0);
	assert_int_equal(fair_reset(cls, FAIR_ALL_LEVELS, 0, limit), 0);
	for (i = 0; i < 5; i++) {
		spec.sport = (__u16)(41000 + i);
		get_synack(name, &spec, &cfg_vtc, &w4, &info);
	}
	expect(fair_est(cls, PKT_V4_CLIENT, 0) == 0, name, "5 cookies sent: nothing counted");
	build_cookie_ack(&ack, &spec, &info);
	run_xdp(name, ack.data, ack.len, &r);
	expect_verdict(name, r.verdict, XDP_PASS);
	expect(fair_est(cls, PKT_V4_CLIENT, 0) == 1, name, "its proven ACK: counted (%u)",
	       fair_est(cls, PKT_V4_CLIENT, 0));
	/* Now shedding: over the limit of 1, the source's SYN is shed. */
	assert_int_equal(bpf_map__update_elem(skel->maps.fair_config, &cls, sizeof(cls),
					      &(struct shedd_fair_class){ .levels = FAIR_ALL_LEVELS,
						.active = 1, .limit = { 1, 0, 0 } },
					      sizeof(struct shedd_fair_class), BPF_ANY), 0);
	spec.sport = 42000;
	pkt_build(&syn, &spec);
	run_xdp(name, syn.data, syn.len, &r);
	expect_verdict(name, r.verdict, XDP_DROP);
	spec.saddr = "198.18.9.9";
	pkt_build(&syn, &spec);
	run_xdp(name, syn.data, syn.len, &r);
	expect_verdict(name, r.verdict, XDP_TX);
	fs = fair_stats_of(cls);
	expect(fs.counted == 1 && fs.shed == 1 && fs.checked == 2, name,
	       "counted %llu shed %llu checked %llu", (unsigned long long)fs.counted,
	       (unsigned long long)fs.shed, (unsigned long long)fs.checked);
}

/* @n SYNs, one from each address from 198.@net.0.0 + @first on, @step_ns
 * apart from the test clock on; return how many passed. */
static unsigned int fair_crowd_syns(const char *name, unsigned int net, unsigned int first,
				    unsigned int n, __u64 step_ns)
{
	unsigned int i, passed = 0;

	for (i = 0; i < n; i++) {
		unsigned int k = first + i;
		char addr[32];
		struct pkt_spec spec = { .l3 = ETH_P_IP, .flags = TCP_SYN, .saddr = addr,
					 .sport = (__u16)(40000 + i % 20000) };
		struct xdp_run r;
		struct pkt p;

		snprintf(addr, sizeof(addr), "198.%u.%u.%u", net, (k >> 8) & 255, k & 255);
		pkt_build(&p, &spec);
		run_xdp(name, p.data, p.len, &r);
		passed += r.verdict == XDP_PASS;
		skel->bss->test_clock_ns += step_ns;
	}
	return passed;
}

/* A crowd of 20 000 sources, one admission each, at 10 000 SYN/s, counted
 * by the program; the daemon's limits from that sketch (fair_class_config()
 * at a class rate of 10 000/s); then 1 000 never-seen sources, each one
 * SYN, while the class sheds: shed for fairness at most as often as the
 * noise floor allows (FAIR_NOISE_EPS a level, two levels). Without the
 * floor every crowd cell was over the limit: all were shed. The bucket
 * admits every SYN: only fairness judges. */
/* The conservative update: an admission raises only those of the
 * source's cells whose count of the window is the least, as the program
 * writes them. */
static void test_fair_conservative(void **state)
{
	const char *name = "fairness: only the least of a source's cells is raised";
	const struct sip_state init = { skel->rodata->flow_sip[0], skel->rodata->flow_sip[1],
					skel->rodata->flow_sip[2], skel->rodata->flow_sip[3] };
	const __u32 cls = SHEDD_SHEDDABLE;
	struct shedd_fair_cell *row0, *row1;
	__u32 a;
	__u64 h;

	(void)state;
	assert_int_equal(reset_maps(NULL, NULL), 0);
	assert_int_equal(fair_reset(cls, FAIR_ADDR, 0, NULL), 0);
	assert_int_equal(inet_pton(AF_INET, "198.18.7.9", &a), 1);
	h = fair_hash(&init, &a, 4, 0);
	row0 = &fair_cells[fair_cell_index(cls, 0, 0, fair_col(h, 0))];
	row1 = &fair_cells[fair_cell_index(cls, 0, 1, fair_col(h, 1))];
	/* Row 0's cell holds 5 of another source this window. */
	row0->epoch = (__u32)(skel->bss->test_clock_ns >> FAIR_WINDOW_SHIFT);
	row0->cur = 5;
	expect(fair_syns(name, "198.18.7.9", 0, 3, 0) == 3, name, "3 SYNs admitted");
	expect(row0->cur == 5 && row1->cur == 3 && fair_est(cls, "198.18.7.9", 0) == 3, name,
	       "3 counted into row 1 alone: rows %u and %u", row0->cur, row1->cur);
	expect(fair_syns(name, "198.18.7.9", 0, 3, 0) == 3, name, "3 SYNs more admitted");
	expect(row0->cur == 6 && row1->cur == 6, name,
	       "row 1 up to row 0, then both: rows %u and %u, expected 6 and 6", row0->cur,
	       row1->cur);
}

static void test_fair_crowd(void **state)
{
	const char *name = "fairness: a crowd of 20 000 sources leaves a fresh source admitted";
	const struct shedd_class_rate plenty = { .rate_per_sec = 100000000, .burst = 1000000 };
	const struct fair_class_opts o = { FAIR_DEFAULT_SLACK, FAIR_ALL_LEVELS };
	const __u32 cls = SHEDD_SHEDDABLE;
	struct shedd_fair_class fc;
	struct shedd_fair_stats fs;
	unsigned int passed;

	(void)state;
	assert_int_equal(reset_maps(NULL, &plenty), 0);
	assert_int_equal(fair_reset(cls, FAIR_ALL_LEVELS, 0, NULL), 0);
	skel->bss->test_clock_ns = (T0_NS | FAIR_WINDOW_MASK) + 1; /* a window's start */
	/* From 198.18.2.0 on: the nested prefixes of other classes are in
	 * 198.18.1.0/24, the server's address in 198.19.0.0/24. */
	passed = fair_crowd_syns(name, 18, 2 << 8, 20000, 100000);
	expect(passed == 20000, name, "the crowd: %u of 20000 admitted", passed);
	fair_class_config(&o, fair_cells, cls, 10000, true, skel->bss->test_clock_ns, &fc);
	assert_int_equal(bpf_map__update_elem(skel->maps.fair_config, &cls, sizeof(cls), &fc,
					      sizeof(fc), BPF_ANY), 0);
	passed = fair_crowd_syns(name, 19, 100 << 8, 1000, 100000);
	fs = fair_stats_of(cls);
	print_message("# %s: %u of 1000 fresh sources admitted, %llu shed for fairness; limit "
		      "%u (addr), %u (/24) a window, %u and %u sources counted\n", name, passed,
		      (unsigned long long)fs.shed, fc.limit[0], fc.limit[1], fc.sources[0],
		      fc.sources[1]);
	expect(fs.shed <= 1000 * 2 * FAIR_NOISE_EPS + 5 && passed + fs.shed == 1000, name,
	       "%llu of 1000 fresh sources shed for fairness (%u admitted)",
	       (unsigned long long)fs.shed, passed);
}

/* The shares fairness holds sources to are the daemon's, of the rates it
 * wrote: once its lease ran out, no source is shed for them (it is still
 * counted). */
static void test_fair_lease_run_out(void **state)
{
	const char *name = "fairness: the daemon's lease ran out: no source is shed for its share";
	const __u32 cls = SHEDD_SHEDDABLE, limit[FAIR_LEVELS] = { 5, 0, 0 };
	struct shedd_fair_stats fs;

	(void)state;
	assert_int_equal(reset_maps(NULL, NULL), 0);
	assert_int_equal(fair_reset(cls, FAIR_ALL_LEVELS, 1, limit), 0);
	/* The lease runs out at T0. */
	assert_int_equal(set_lease(T0_NS - MS(1000), MS(1000), 1000, 1000, 0), 0);
	expect(fair_syns(name, "198.18.7.9", 1, 10, 0) == 5, name,
	       "to the end of the lease: 5 of 10, the source's limit");
	skel->bss->test_clock_ns = T0_NS + MS(1);
	expect(fair_syns(name, "198.18.7.9", 1, 10, 0) == 10, name,
	       "the lease run out: 10 of 10");
	fs = fair_stats_of(cls);
	expect(fs.shed == 5 && fs.counted == 15, name, "fair_stats: shed %llu counted %llu",
	       (unsigned long long)fs.shed, (unsigned long long)fs.counted);
	/* A heartbeat: the shares hold again. */
	assert_int_equal(set_lease(skel->bss->test_clock_ns, MS(1000), 1000, 1000, 0), 0);
	expect(fair_syns(name, "198.18.7.9", 1, 10, 0) == 0, name,
	       "a fresh heartbeat: over its limit, 0 of 10");
	/* Leave no fairness and no lease to the cases after it. */
	assert_int_equal(fair_reset(cls, 0, 0, NULL), 0);
	assert_int_equal(reset_maps(NULL, NULL), 0);
}

/* ---- tunnels: the direct path's checks and a class space of their own --- */

/* Tunnels end here as tunc_all says, with @devs read for the kinds @match. */
static void tun_setup(const char *name, const struct shedd_config *cfg,
		      const struct shedd_class_rate *rate, const struct tun_dev_spec *devs,
		      __u32 match)
{
	const struct tun_case c = { .cfg = cfg, .rate = rate, .devs = devs, .match = match };
	void *st = (void *)&c;

	expect(tun_case_setup(&st) == 0, name, "set up the tunnels");
}

/* Run the encapsulated @inner; return the verdict. */
static __u32 tun_run(const char *name, const struct tun_pkt_spec *t, const struct pkt_spec *inner,
		     void (*mangle)(struct pkt *p))
{
	struct xdp_run r;
	struct pkt p;

	tun_pkt_build(&p, t, inner);
	if (mangle)
		mangle(&p);
	run_xdp(name, p.data, p.len, &r);
	return r.verdict;
}

/* A VNI no device has: 43 in place of the test's 42. */
static void mangle_vni43(struct pkt *p)
{
	p->data[p->l4_off + sizeof(struct pkt_udp) + 6] = 43;
	pkt_finish(p);
}

static void mangle_vni43_bad_csum(struct pkt *p)
{
	mangle_vni43(p);
	mangle_inner_tcp_csum(p);
}

/* The adversarial review's flood: four spoofed VXLAN SYNs claiming
 * CRITICAL_PLUS, with a VNI no device has and wrong checksums, then the
 * real client, direct, in a class of four tokens; then four valid
 * tunnelled SYNs (the device's VNI, right checksums): they take the
 * tunnel class space's four, and the direct client still has its own. */
static void test_tun_flood_spares_direct(void **state)
{
	const struct shedd_class_rate four = { .rate_per_sec = 1, .burst = 4 };
	const struct tun_pkt_spec vx = { .kind = TUNP_VXLAN };
	struct pkt_spec in = { V4, .flags = TCP_SYN, .saddr = V4_CP };
	struct pkt_spec direct = { V4, .flags = TCP_SYN, .saddr = V4_CP, .sport = 40000 };
	const char *name;
	struct xdp_run r;
	struct pkt d;
	unsigned int i;
	__u32 v;

	(void)state;
	name = "tunnel flood: 4 VXLAN SYNs of a bogus VNI and checksum spend no direct token";
	tun_setup(name, NULL, &four, devs_vxlan42, MATCH_VXLAN);
	for (i = 0; i < 4; i++) {
		in.sport = (__u16)(50000 + i);
		v = tun_run(name, &vx, &in, mangle_vni43_bad_csum);
		expect(v == XDP_PASS, name, "flood SYN %u: %s, expected XDP_PASS (the kernel's to drop)",
		       i, verdict_name(v));
	}
	pkt_build(&d, &direct);
	run_xdp(name, d.data, d.len, &r);
	expect_verdict(name, r.verdict, XDP_PASS);

	name = "tunnel flood: 4 valid VXLAN SYNs take the tunnel space's tokens, not the direct client's";
	tun_setup(name, NULL, &four, devs_vxlan42, MATCH_VXLAN);
	for (i = 0; i < 5; i++) {
		in.sport = (__u16)(51000 + i);
		v = tun_run(name, &vx, &in, NULL);
		expect(v == (i < 4 ? XDP_PASS : XDP_DROP), name, "tunnelled SYN %u: %s", i,
		       verdict_name(v));
	}
	for (i = 0; i < 4; i++) {
		direct.sport = (__u16)(40100 + i);
		pkt_build(&d, &direct);
		run_xdp(name, d.data, d.len, &r);
		expect_verdict(name, r.verdict, XDP_PASS);
	}
	direct.sport = 40200;
	pkt_build(&d, &direct);
	run_xdp(name, d.data, d.len, &r);
	expect_verdict(name, r.verdict, XDP_DROP);
}

/* A verified class drained from a tunnel: the real client's cookie ACK
 * needs a token of the class; tunnelled SYNs of the class took theirs in
 * the tunnel space, so it is admitted, not refused with a RST. */
static void test_tun_flood_spares_cookie_ack(void **state)
{
	const char *name = "tunnel flood: a direct client's cookie ACK keeps its token";
	const struct tun_pkt_spec vx = { .kind = TUNP_VXLAN };
	struct pkt_spec syn = linux_syn(0, PKT_SPORT + 70);
	struct pkt_spec in = { V4, .flags = TCP_SYN, .saddr = "198.18.7.1" };
	struct shedd_stats want = {};
	struct synack_info info;
	unsigned int i;
	struct pkt ack;

	(void)state;
	tun_setup(name, &cfg_vkernel, &rate_one, devs_vxlan42, MATCH_VXLAN);
	cookie_of(name, &syn, &info);
	for (i = 0; i < 4; i++) {
		in.sport = (__u16)(52000 + i);
		tun_run(name, &vx, &in, NULL);
	}
	build_cookie_ack(&ack, &syn, &info);
	want.ack_probed = 1;
	want.cls[SHEDD_SHEDDABLE].ack_valid = 1;
	want.cls[SHEDD_SHEDDABLE].charged = 1;
	want.cls[SHEDD_SHEDDABLE].ack_admitted = 1;
	expect_run(name, &ack, XDP_PASS, want);
}

/* The ACK of build_cookie_ack() as a spec, to be encapsulated; @ts holds
 * its timestamp option. */
static struct pkt_spec cookie_ack_spec(const struct pkt_spec *syn, const struct synack_info *info,
				       __u8 ts[12])
{
	const __u8 t[12] = { 1, 1, TS_OPT(TSVAL + 1, info->tsval) };
	struct pkt_spec s = *syn;

	memcpy(ts, t, sizeof(t));
	s.flags = TCP_ACK;
	s.seq = (syn->seq ? syn->seq : PKT_SEQ) + 1;
	s.ack_seq = info->cookie + 1;
	s.payload_len = 0;
	s.tcp_opts = 0;
	s.opt_bytes = info->ts ? ts : NULL;
	s.opt_len = info->ts ? 12 : 0;
	return s;
}

/* An inner ACK that may end a cookie handshake is judged as a direct one:
 * a valid cookie is charged (in the tunnel class space), a forged one
 * dropped, one without a token refused by a drop (never answered). */
static void test_tun_inner_cookie_ack(void **state)
{
	const struct tun_pkt_spec vx = { .kind = TUNP_VXLAN };
	struct pkt_spec syn = linux_syn(0, PKT_SPORT + 71), ack;
	struct shedd_stats before, after, want;
	struct synack_info info;
	const char *name;
	struct xdp_run r;
	__u8 ts[12];
	struct pkt p;

	(void)state;
	name = "tunnel: inner cookie ACK, valid: charged in the tunnel space";
	tun_setup(name, &cfg_vkernel, &rate_one, devs_vxlan42, MATCH_VXLAN);
	cookie_of(name, &syn, &info);
	ack = cookie_ack_spec(&syn, &info, ts);
	tun_pkt_build(&p, &vx, &ack);
	memset(&want, 0, sizeof(want));
	want.ack_probed = 1;
	want.cls[SHEDD_SHEDDABLE].ack_valid = 1;
	want.cls[SHEDD_SHEDDABLE].charged = 1;
	want.cls[SHEDD_SHEDDABLE].ack_admitted = 1;
	expect_run(name, &p, XDP_PASS, want);
	/* Again before the kernel made the connection: it follows the
	 * admission, no second token. */
	expect_run(name, &p, XDP_PASS, (struct shedd_stats){ .ack_probed = 1, .ack_repeat = 1 });
	/* A RST of the flow, inside the tunnel too, ends that: the same ACK
	 * is judged afresh, and the tunnel space's one token is spent. */
	{
		struct pkt_spec rst = ack;
		struct pkt rp, again = p;

		rst.flags = TCP_RST;
		rst.opt_bytes = NULL;
		rst.opt_len = 0;
		tun_pkt_build(&rp, &vx, &rst);
		expect_run(name, &rp, XDP_PASS, (struct shedd_stats){ .non_syn = 1 });
		memset(&want, 0, sizeof(want));
		want.ack_probed = 1;
		want.cls[SHEDD_SHEDDABLE].ack_valid = 1;
		want.cls[SHEDD_SHEDDABLE].charged = 1;
		want.cls[SHEDD_SHEDDABLE].ack_refused = 1;
		expect_run(name, &again, XDP_DROP, want);
		want.cls[SHEDD_SHEDDABLE].ack_refused = 0;
		want.cls[SHEDD_SHEDDABLE].ack_admitted = 1;
	}
	/* The class's own token is still there: a direct ACK takes it. */
	{
		struct pkt_spec syn2 = linux_syn(0, PKT_SPORT + 72);
		struct synack_info info2;
		struct pkt dack;

		cookie_of(name, &syn2, &info2);
		build_cookie_ack(&dack, &syn2, &info2);
		expect_run(name, &dack, XDP_PASS, want);
	}

	name = "tunnel: inner cookie ACK, forged while cookies are out: dropped";
	ack.sport = PKT_SPORT + 73;
	tun_pkt_build(&p, &vx, &ack);
	memset(&want, 0, sizeof(want));
	want.ack_probed = 1;
	want.cls[SHEDD_SHEDDABLE].ack_invalid = 1;
	expect_run(name, &p, XDP_DROP, want);

	name = "tunnel: inner cookie ACK, valid, no token: dropped, never answered";
	syn = linux_syn(0, PKT_SPORT + 74);
	tun_setup(name, &cfg_vkernel, &rate_empty, devs_vxlan42, MATCH_VXLAN);
	cookie_of(name, &syn, &info);
	ack = cookie_ack_spec(&syn, &info, ts);
	tun_pkt_build(&p, &vx, &ack);
	memset(&want, 0, sizeof(want));
	want.packets = 1;
	want.ack_probed = 1;
	want.cls[SHEDD_SHEDDABLE].ack_valid = 1;
	want.cls[SHEDD_SHEDDABLE].charged = 1;
	want.cls[SHEDD_SHEDDABLE].ack_refused = 1;
	read_stats(&before);
	run_xdp(name, p.data, p.len, &r);
	read_stats(&after);
	expect_verdict(name, r.verdict, XDP_DROP);
	expect_delta(name, &before, &after, &want);
	expect(r.out_len == p.len && memcmp(r.out, p.data, p.len) == 0, name,
	       "an encapsulated frame is never rewritten");
}

/* Fairness inside a tunnel: while the class sheds, an inner source over
 * its share is shed before it takes a token, as a direct one. */
static void test_tun_fairness(void **state)
{
	const char *name = "tunnel: an inner source over its share is shed while its class sheds";
	const struct tun_pkt_spec vx = { .kind = TUNP_VXLAN };
	const __u32 cls = SHEDD_SHEDDABLE, limit[FAIR_LEVELS] = { 1, 0, 0 };
	struct pkt_spec in = { V4, .flags = TCP_SYN, .saddr = "198.18.7.7", .sport = 53000 };
	struct shedd_fair_stats fs;
	__u32 v;

	(void)state;
	tun_setup(name, NULL, NULL, devs_vxlan42, MATCH_VXLAN);
	assert_int_equal(fair_reset(cls, FAIR_ALL_LEVELS, 1, limit), 0);
	v = tun_run(name, &vx, &in, NULL);
	expect(v == XDP_PASS, name, "first SYN: %s, expected XDP_PASS", verdict_name(v));
	in.sport++;
	v = tun_run(name, &vx, &in, NULL);
	expect(v == XDP_DROP, name, "second SYN, over its share: %s, expected XDP_DROP",
	       verdict_name(v));
	in.saddr = "198.18.7.8";
	v = tun_run(name, &vx, &in, NULL);
	expect(v == XDP_PASS, name, "another source: %s, expected XDP_PASS", verdict_name(v));
	fs = fair_stats_of(cls);
	expect(fs.counted == 2 && fs.shed == 1 && fs.checked == 3, name,
	       "counted %llu shed %llu checked %llu", (unsigned long long)fs.counted,
	       (unsigned long long)fs.shed, (unsigned long long)fs.checked);
	assert_int_equal(fair_reset(cls, 0, 0, NULL), 0);
	assert_int_equal(reset_maps(NULL, NULL), 0);
}

static const struct CMUnitTest fixed_tests[] = {
	{ "stack: the deepest call chain leaves 64 bytes of the verifier's 512",
	  test_stack_headroom, NULL, NULL, NULL },
	{ "frames shorter than 14 bytes are refused by test_run",
	  run_short_frames, base_setup, NULL, NULL },
	{ "rate update keeps bucket tokens", test_rate_update_keeps_tokens,
	  base_setup, NULL, NULL },
	{ "buckets are per class", test_buckets_per_class, base_setup, NULL, NULL },
	{ "unwritten rate admits", test_unwritten_rate_admits, base_setup, NULL, NULL },
	{ "batch borrowed into the CPU cache, dropped when stale", test_batch_and_lease,
	  base_setup, NULL, NULL },
	{ "empty reserve: shed without asking again for a lease", test_empty_reserve_backs_off,
	  base_setup, NULL, NULL },
	{ "refill is piecewise across a rate change", test_piecewise_refill, base_setup, NULL,
	  NULL },
	{ "lease: the last rate, then a climb to the fail-static rate", test_lease_relaxes,
	  base_setup, NULL, NULL },
	{ "lease: never lower, never zero, not over a pin", test_lease_bounds, base_setup,
	  NULL, NULL },
	{ "fairness: the daemon's lease ran out: no source is shed for its share",
	  test_fair_lease_run_out, NULL, NULL, NULL },
	{ "SYN+FIN and SYN+RST spend no token", test_bad_syn_spends_no_token,
	  base_setup, NULL, NULL },
	{ "a SYN shed by drop from a backed-off CPU is not checksummed",
	  test_bad_csum_backed_off, base_setup, NULL, NULL },
	{ "cookie: another flow gets another cookie", test_cookie_per_flow, vtc_setup,
	  NULL, NULL },
	{ "forged cookies are dropped and counted", test_forged_cookies, vtc_setup,
	  NULL, NULL },
	{ "a proven ACK takes a token, or is refused with a RST", test_ack_needs_a_token,
	  NULL, NULL, NULL },
	{ "an established flow passes unchecked", test_established_flow, vtc_setup,
	  NULL, NULL },
	{ "a proven ACK to a full accept queue spends no token", test_ack_to_full_queue,
	  vtc_setup, NULL, NULL },
	{ "an ACK without a valid cookie where none was sent goes to the kernel",
	  test_ack_without_cookies, vtc_setup, NULL, NULL },
	{ "a SYN of a flow in TIME_WAIT is the kernel's, no FIN seen",
	  test_syn_into_time_wait, vtc_setup, NULL, NULL },
	{ "a FIN marks nothing", test_fin_marks_nothing, vtc_setup, NULL, NULL },
	{ "a forwarded SYN is the kernel's, no cookie, charged", test_syn_not_local, vtc_setup,
	  not_local_teardown, NULL },
	{ "cookie budget per CPU", test_cookie_budget, NULL, NULL, NULL },
	{ "verify while shedding, for the hold", test_verify_while_shedding, NULL, NULL,
	  NULL },
	{ "--source-check verify: a failing SYN proves its address in its class",
	  test_source_verify, NULL, NULL, NULL },
	{ "--source-check strict: a demoted SYN's kernel cookie ACK is not charged again",
	  test_strict_demoted_charged_once, NULL, NULL, NULL },
	{ "tc hand-off sorts the ACKs of verified classes", test_handoff_sorts_acks,
	  vtc_setup, NULL, NULL },
	{ "tc hand-off judges XDP's verdict on XDP's clock", test_handoff_same_clock,
	  vtc_setup, NULL, NULL },
	{ "XDP and the tc hand-off agree on every shape of ACK", test_parsers_agree,
	  vtc_setup, NULL, NULL },
	{ "a first fragment with the cookie ACK is judged", test_fragment_ack_judged, NULL,
	  NULL, NULL },
	{ "an IPv6 ACK behind more than 512 bytes of options is judged",
	  test_deep_chain_ack_judged, NULL, NULL, NULL },
	{ "a repeat of a proven ACK is a segment of its connection, not made yet",
	  test_repeat_bound_to_its_segment, vtc_setup, NULL, NULL },
	{ "a source colliding under the unkeyed hash is charged",
	  test_colliding_source_charged, NULL, NULL, NULL },
	{ "SipHash against its reference vectors", test_siphash_vectors, NULL, NULL, NULL },
	{ "a SYN admitted directly is charged once, not again at its ACK",
	  test_direct_syn_charged_once, NULL, NULL, NULL },
	{ "a signed SYN admitted to the kernel is charged once, not again at its ACK",
	  test_signed_syn_charged_once, NULL, NULL, NULL },
	{ "refresh slots: 80/8080 and 443/8443 do not share one", test_refresh_slots_apart,
	  NULL, NULL, NULL },
	{ "settings: a reader sees the old record or the new one, never a mix",
	  test_settings_switch_whole, NULL, NULL, NULL },
	{ "fairness: admissions counted at each level", test_fair_counts_levels, NULL, NULL,
	  NULL },
	{ "fairness: the count slides out of the window", test_fair_window_slides, NULL, NULL,
	  NULL },
	{ "fairness: a shed SYN rewrites its shared slot at most once per interval",
	  test_fair_note_batched, NULL, NULL, NULL },
	{ "fairness: a verified class counts proven ACKs", test_fair_verified_counts_acks, NULL,
	  NULL, NULL },
	{ "fairness: a crowd of 20 000 sources leaves a fresh source admitted", test_fair_crowd,
	  NULL, NULL, NULL },
	{ "fairness: only the least of a source's cells is raised", test_fair_conservative, NULL,
	  NULL, NULL },
	{ "tunnel flood: neither a bogus nor a valid one spends a direct client's tokens",
	  test_tun_flood_spares_direct, NULL, NULL, NULL },
	{ "tunnel flood: a direct client's cookie ACK keeps its token",
	  test_tun_flood_spares_cookie_ack, NULL, NULL, NULL },
	{ "tunnel: an inner cookie ACK is judged as a direct one", test_tun_inner_cookie_ack, NULL,
	  NULL, NULL },
	{ "tunnel: fairness judges inner sources", test_tun_fairness, NULL, NULL, NULL },
};

static int xdp_group_teardown(void **state)
{
	int i;

	for (i = 0; i < 2; i++) {
		if (listen_fds[i] >= 0)
			close(listen_fds[i]);
		if (md5_fds[i] >= 0)
			close(md5_fds[i]);
		if (mptcp_fds[i] >= 0)
			close(mptcp_fds[i]);
	}
	handoff_bpf__destroy(hskel);
	hskel = NULL;
	return group_teardown(state);
}

static struct CMUnitTest tests[ARRAY_SIZE(cases) + ARRAY_SIZE(cut_cases) +
			       ARRAY_SIZE(tb_cases) + ARRAY_SIZE(rst_budget_cases) +
			       ARRAY_SIZE(synack_cases) + ARRAY_SIZE(tun_cases) +
			       2 * ARRAY_SIZE(tun_cut_cases) + ARRAY_SIZE(fixed_tests) +
			       ARRAY_SIZE(fair_cases) + ARRAY_SIZE(signed_cases)];

static char tun_short_names[ARRAY_SIZE(tun_cut_cases)][128];

int main(void)
{
	size_t i, n = 0;

	/* One cmocka test per table row, so TAP names every case. The
	 * tables are const; cmocka only hands the pointer back. */
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		tests[n++] = (struct CMUnitTest){ cases[i].name, run_case,
			case_setup, NULL, (void *)&cases[i] };
	for (i = 0; i < ARRAY_SIZE(cut_cases); i++)
		tests[n++] = (struct CMUnitTest){ cut_cases[i].name, run_cuts,
			base_setup, NULL, (void *)&cut_cases[i] };
	for (i = 0; i < ARRAY_SIZE(tb_cases); i++)
		tests[n++] = (struct CMUnitTest){ tb_cases[i].name, run_tb,
			tb_setup, NULL, (void *)&tb_cases[i] };
	for (i = 0; i < ARRAY_SIZE(rst_budget_cases); i++)
		tests[n++] = (struct CMUnitTest){ rst_budget_cases[i].name,
			run_rst_budget, NULL, NULL, (void *)&rst_budget_cases[i] };
	for (i = 0; i < ARRAY_SIZE(synack_cases); i++)
		tests[n++] = (struct CMUnitTest){ synack_cases[i].name, run_synack,
			synack_setup, NULL, (void *)&synack_cases[i] };
	for (i = 0; i < ARRAY_SIZE(signed_cases); i++)
		tests[n++] = (struct CMUnitTest){ signed_cases[i].name, run_signed,
			signed_setup, NULL, (void *)&signed_cases[i] };
	for (i = 0; i < ARRAY_SIZE(tun_cases); i++)
		tests[n++] = (struct CMUnitTest){ tun_cases[i].name, run_tun,
			tun_case_setup, NULL, (void *)&tun_cases[i] };
	for (i = 0; i < ARRAY_SIZE(tun_cut_cases); i++) {
		tests[n++] = (struct CMUnitTest){ tun_cut_cases[i].name, run_tun_cuts,
			tun_case_setup, NULL, (void *)&tun_cut_cases[i] };
		snprintf(tun_short_names[i], sizeof(tun_short_names[i]),
			 "%s: the tunnel header cut short", tun_cut_cases[i].name);
		tests[n++] = (struct CMUnitTest){ tun_short_names[i], run_tun_short,
			tun_case_setup, NULL, (void *)&tun_cut_cases[i] };
	}
	for (i = 0; i < ARRAY_SIZE(fixed_tests); i++)
		tests[n++] = fixed_tests[i];
	for (i = 0; i < ARRAY_SIZE(fair_cases); i++)
		tests[n++] = (struct CMUnitTest){ fair_cases[i].name, run_fair, NULL, NULL,
			(void *)&fair_cases[i] };

	return cmocka_run_group_tests_name("xdp", tests, group_setup,
					   xdp_group_teardown);
}
