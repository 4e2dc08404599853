// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_xdp.c - random and mutated frames through the XDP program under
 * BPF_PROG_TEST_RUN, each checked against invariants and against a small
 * reference model written apart from bpf/parsing.h and bpf/tcpopt.h: a
 * non-SYN is never dropped, every counter that moves is the one the model
 * expects, a RST only answers a judged pure SYN (or a proven ACK) that may
 * be answered, within the RST budget, and every SYN the kernel would
 * deliver to a protected port is judged.
 * Verified admission is fuzzed in phases of random settings (verify modes
 * per class, hand-off, ECN, window scale, small cookie budgets): a cookie
 * SYN-ACK only answers a judged SYN of a verifying class within the cookie
 * budget and is checked byte by byte; ACKs are checked against a listener
 * and an established connection in a network namespace of our own, forged
 * cookies dropped, the program's own cookies fed back and charged.
 * SHEDD_FUZZ_FRAMES, SHEDD_FUZZ_SECONDS and SHEDD_FUZZ_SEED set the run
 * (defaults: a short run for `make test`; `make fuzz` runs millions).
 * Needs root, as test_xdp.
 */

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "shedd.h"
#include "shedd.skel.h"
#include "xdp_harness.h"
#include "packets.h"
#include "tun_packets.h"
#include "splitmix.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define DEFAULT_FRAMES 100000ULL
#define DEFAULT_SECONDS 120.0
#define DEFAULT_SEED 0x5eedULL
#define MAX_REPORTS 8 /* violations printed in full; all are counted */
#define PHASE_FRAMES 2000 /* frames between two draws of the settings */
#define RING 8            /* cookie SYN-ACKs kept to answer */
#define RING_MAX_AGE 60.0 /* s: well inside the cookies' two minutes */

#define PORT_A PKT_DPORT /* protected, a listener behind it */
#define PORT_B 443       /* protected, no listener */
#define PORT_OPEN 9090   /* not protected */
#define T0_NS (10000ULL * SHEDD_NSEC_PER_SEC)

/* Class rates low enough, and the clock slow enough, that judged SYNs are
 * both admitted and shed; the RST budget small enough to run out. */
static const struct shedd_rate fuzz_rate = {
	.r = { .rate_per_sec = 30, .burst = 4, .batch = 4, .lease_ns = 1000000,
	       .flags = SHEDD_RATE_SET }
};
/* The first phase: nothing verified, as before verified admission. */
static const struct shedd_config fuzz_cfg = {
	.default_class = SHEDD_SHEDDABLE,
	.reject = { SHEDD_REJECT_DROP, SHEDD_REJECT_RST, SHEDD_REJECT_RST,
		    SHEDD_REJECT_RST },
	.mac = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x05 }, /* pkt_server_mac */
	.rst_rate_per_sec = 10,
	.rst_burst = 3,
	.cookie_rate_per_sec = 20,
	.cookie_burst = 3,
};
/* Tunnels that end here: every kind but ip6gretap, VXLAN and Geneve on
 * their ports, FOU ports of four protocols and a GUE port; tun_local holds
 * the server's addresses. */
static const struct shedd_tun_config fuzz_tun = {
	.kinds = SHEDD_TUN_IPIP | SHEDD_TUN_SIT | SHEDD_TUN_4IN6 | SHEDD_TUN_6IN6 |
		 SHEDD_TUN_GRE | SHEDD_TUN_GRETAP | SHEDD_TUN_GRE6,
	.udp_port = { TUNP_VXLAN_PORT, TUNP_GENEVE_PORT, TUNP_FOU4_PORT, TUNP_FOU41_PORT,
		      TUNP_FOU6_PORT, TUNP_FOU47_PORT, TUNP_GUE_PORT },
	.udp_kind = { SHEDD_UDP_VXLAN, SHEDD_UDP_GENEVE, SHEDD_UDP_FOU, SHEDD_UDP_FOU,
		      SHEDD_UDP_FOU, SHEDD_UDP_FOU, SHEDD_UDP_GUE },
	.udp_proto = { 0, 0, IPPROTO_IPIP, IPPROTO_IPV6, IPPROTO_TCP, IPPROTO_GRE, 0 },
	.udp_family = { 0, 0, 4, 0, 0, 0, 0 }, /* the ipproto 4 port: IPv4 only */
};

/* The devices the daemon read, in tun_devs, matched for VXLAN, Geneve,
 * GRE, GRE-TAP and IP in IP (the model's own rules: ref_tun_device()):
 * VXLAN of VNI 42; Geneve of VNI 42 from the client (IPv4 or IPv6); GRE of
 * key 07 07 07 07 from anywhere, GRE without a key to the server's
 * addresses; GRE-TAP, collect_md, everything; IPv4 in IPv4 from the
 * client; IPv6 in IPv4, sit0 up, everything; IP in IPv6 from the client
 * to the server. */
#define FUZZ_VNI 42
#define FUZZ_GRE_KEY 0x07070707U
static const struct {
	__u8 kind, flags;
	__u16 port;
	__u32 id;
	const char *local, *remote;
} fuzz_devs[] = {
	{ SHEDD_TDEV_VXLAN, 0, TUNP_VXLAN_PORT, FUZZ_VNI, NULL, NULL },
	{ SHEDD_TDEV_GENEVE, 0, TUNP_GENEVE_PORT, FUZZ_VNI, NULL, PKT_V4_CLIENT },
	{ SHEDD_TDEV_GENEVE, 0, TUNP_GENEVE_PORT, FUZZ_VNI, NULL, PKT_V6_CLIENT },
	{ SHEDD_TDEV_GRE, TUN_KEY_KEYED, 0, FUZZ_GRE_KEY, NULL, NULL },
	{ SHEDD_TDEV_GRE, 0, 0, 0, PKT_V4_SERVER, NULL },
	{ SHEDD_TDEV_GRE, 0, 0, 0, PKT_V6_SERVER, NULL },
	{ SHEDD_TDEV_GRETAP, TUN_KEY_ANY, 0, 0, NULL, NULL },
	{ SHEDD_TDEV_IPIP, 0, 0, 0, NULL, PKT_V4_CLIENT },
	{ SHEDD_TDEV_SIT, TUN_KEY_ANY, 0, 0, NULL, NULL },
	{ SHEDD_TDEV_IP6TNL, 0, 0, 0, PKT_V6_SERVER, PKT_V6_CLIENT },
};
#define FUZZ_MATCH (SHEDD_TUN_MATCH(SHEDD_TDEV_VXLAN) | SHEDD_TUN_MATCH(SHEDD_TDEV_GENEVE) | \
		    SHEDD_TUN_MATCH(SHEDD_TDEV_GRE) | SHEDD_TUN_MATCH(SHEDD_TDEV_GRETAP) | \
		    SHEDD_TUN_MATCH(SHEDD_TDEV_IPIP) | SHEDD_TUN_MATCH(SHEDD_TDEV_SIT) | \
		    SHEDD_TUN_MATCH(SHEDD_TDEV_IP6TNL))

/* The source prefixes; the program gets them in its tries, the reference
 * model looks them up by a linear longest match. */
static const struct {
	int family;
	const char *addr;
	__u32 len;
	__u32 cls;
} prefixes[] = {
	{ AF_INET, "198.18.1.0", 24, SHEDD_CRITICAL_PLUS },
	{ AF_INET, "198.18.1.128", 25, SHEDD_SHEDDABLE_PLUS },
	{ AF_INET, "198.18.2.0", 23, SHEDD_CRITICAL },
	{ AF_INET6, "2001:db8:1::", 48, SHEDD_CRITICAL },
	{ AF_INET6, "2001:db8:2::", 64, SHEDD_SHEDDABLE_PLUS },
	{ AF_INET6, "2001:db8:1:5::", 64, SHEDD_CRITICAL_PLUS },
};

/* The sockets of our network namespace (setup): a listener on PORT_A at
 * the server's addresses, and one established connection per family from
 * the default client to it. */
static struct {
	__u16 port4, port6; /* the clients' ports */
	int fds[6];
} sockets = { .fds = { -1, -1, -1, -1, -1, -1 } };


/* ---- the reference model ------------------------------------------------- */

/* What the program must do with a frame. */
enum ref_kind {
	REF_PASS,   /* pass it untouched, judge nothing */
	REF_REFUSE, /* drop it, judge nothing: a fragment or chain we cannot judge */
	REF_JUDGE,  /* a pure SYN to a protected port the kernel would deliver */
	REF_ACK,    /* an ACK to a protected port: a cookie handshake may end */
};

/* The options of a SYN as the kernel reads them (tcp_parse_options(), and
 * tcp_parse_mss_option() for the cookie's MSS). */
struct ref_opts {
	unsigned int mss; /* 0: none */
	int ws, sack, ts;
	unsigned int wscale;
	__u32 tsval;
};

struct ref {
	enum ref_kind kind;
	/* The kernel hands the SYN to a listener of its port, with no
	 * program in front: a whole datagram, or a first fragment once the
	 * rest has come. What the program must do (kind) follows from it,
	 * and from what it can see within its walks. */
	int delivered;
	int first_frag;
	int v6;
	size_t l2;          /* Ethernet and tags */
	__u8 saddr[16], daddr[16];
	__u16 sport, dport;
	__u32 cls;
	/* The TCP header, when the program can read it. */
	size_t tcp_off, l4_len; /* l4_len from the IP lengths */
	__u32 seq, ack_seq;
	int rst_end;        /* a RST (no SYN) to a protected port: ends its flow */
	int fin;            /* the FIN flag */
	struct ref_opts opts;
	/* Tunnels that end here (ref_tunnel()). */
	int tunnel;      /* a tunnel was opened: tun_decap */
	int tun_refused; /* refused for what the tunnel holds: tun_refused */
	int in_tunnel;   /* this ref describes an inner packet */
	int no_device;   /* a tunnel's header no device takes: tun_checks.no_device */
	int deep_tags;   /* more VLAN tags than the walk: refused on them */
	int outer_frag;  /* ... in an outer first fragment: it may go on */
	int cut;         /* a header the parser finds malformed */
	size_t ip_end;   /* where the IP datagram ends, by its header */
};

static unsigned int be16(const __u8 *b)
{
	return (unsigned int)b[0] << 8 | b[1];
}

static __u32 be32(const __u8 *b)
{
	return (__u32)b[0] << 24 | (__u32)b[1] << 16 | (__u32)b[2] << 8 | b[3];
}

static void put_be32(__u8 *b, __u32 v)
{
	b[0] = (__u8)(v >> 24);
	b[1] = (__u8)(v >> 16);
	b[2] = (__u8)(v >> 8);
	b[3] = (__u8)v;
}

static int ref_is_ext6(__u8 nh)
{
	return nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 60;
}

static int prefix_match(const __u8 *addr, const __u8 *net, __u32 len)
{
	__u32 i;

	for (i = 0; i < len; i++) {
		int bit = 7 - (int)(i % 8);

		if (((addr[i / 8] >> bit) & 1) != ((net[i / 8] >> bit) & 1))
			return 0;
	}
	return 1;
}

static __u32 ref_class(int v6, const __u8 *saddr)
{
	__u32 best_len = 0, cls = fuzz_cfg.default_class;
	int found = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(prefixes); i++) {
		__u8 net[16];

		if ((prefixes[i].family == AF_INET6) != v6)
			continue;
		pkt_addr(prefixes[i].family, prefixes[i].addr, net);
		if (prefix_match(saddr, net, prefixes[i].len) &&
		    (!found || prefixes[i].len > best_len)) {
			found = 1;
			best_len = prefixes[i].len;
			cls = prefixes[i].cls;
		}
	}
	return cls;
}

/* The options of the TCP header at @th, @hlen bytes, read as the kernel
 * does: an end-of-list, a length under 2 or past the header ends the walk;
 * a later option of a kind overrides an earlier one. */
static void ref_options(const __u8 *th, size_t hlen, struct ref_opts *o)
{
	size_t i = 20;

	memset(o, 0, sizeof(*o));
	while (i < hlen) {
		unsigned int kind = th[i], len;

		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 2 > hlen)
			break;
		len = th[i + 1];
		if (len < 2 || i + len > hlen)
			break;
		if (kind == 2 && len == 4 && be16(th + i + 2)) {
			o->mss = be16(th + i + 2);
		} else if (kind == 3 && len == 3) {
			o->ws = 1;
			o->wscale = th[i + 2] > 14 ? 14 : th[i + 2];
		} else if (kind == 4 && len == 2) {
			o->sack = 1;
		} else if (kind == 8 && len == 10) {
			o->ts = 1;
			o->tsval = be32(th + i + 2);
		}
		i += len;
	}
}

/* The TCP segment at @seg, @seglen bytes by the IP lengths. A datagram
 * must hold the whole header with options; a first fragment only the
 * fixed header (its options may be in the next fragment). */
static void ref_ipv6(const __u8 *f, size_t len, size_t off, struct ref *r);
static void ref_tunnel(const __u8 *f, size_t len, size_t l4, size_t l4_len, __u8 proto,
		       struct ref *r);

static void ref_tcp(const __u8 *f, size_t seg, size_t seglen, struct ref *r)
{
	unsigned int doff, flags;
	int protected;

	if (seglen < 20) {
		r->cut = 1;
		return; /* kernel: no TCP header, dropped */
	}
	doff = f[seg + 12] >> 4;
	if (doff < 5 || (!r->first_frag && doff * 4 > seglen)) {
		r->cut = 1;
		return;
	}
	flags = f[seg + 13];
	/* A listener takes a SYN without ACK; it discards one with RST or
	 * FIN (tcp_rcv_state_process()). */
	r->delivered = (flags & TCP_SYN) && !(flags & (TCP_ACK | TCP_RST | TCP_FIN));
	r->sport = be16(f + seg);
	r->dport = be16(f + seg + 2);
	r->seq = be32(f + seg + 4);
	r->ack_seq = be32(f + seg + 8);
	r->tcp_off = seg;
	r->l4_len = seglen;
	protected = r->dport == PORT_A || r->dport == PORT_B;
	r->cls = ref_class(r->v6, r->saddr);
	r->fin = !!(flags & TCP_FIN);
	r->rst_end = (flags & TCP_RST) && !(flags & TCP_SYN) && protected;
	/* An ACK that is no SYN or RST may end a cookie handshake, in a first
	 * fragment too (the kernel reassembles it), inside a tunnel too: no
	 * cookie is sent into one, but the kernel's own are (tunnel.h). */
	if ((flags & TCP_ACK) && !(flags & (TCP_SYN | TCP_RST)) && protected) {
		r->kind = REF_ACK;
		return;
	}
	/* A listener takes a SYN without ACK; it discards one with RST or
	 * FIN. Anything else is not a new connection. */
	if (!(flags & TCP_SYN) || (flags & (TCP_ACK | TCP_RST | TCP_FIN)) || !protected)
		return;
	if (doff * 4 <= seglen)
		ref_options(f + seg, doff * 4, &r->opts);
	r->kind = REF_JUDGE;
}

static void ref_ipv4(const __u8 *f, size_t len, size_t off, struct ref *r)
{
	size_t hl, tot;
	unsigned int fo, frag_off;

	if (off + 20 > len || f[off] >> 4 != 4 || (f[off] & 15) < 5) {
		r->cut = 1;
		return;
	}
	hl = (f[off] & 15) * 4u;
	tot = be16(f + off + 2);
	/* Linux ip_rcv: a header past the frame, tot_len below the header
	 * or past the frame: dropped. A shorter tot_len trims the frame.
	 * Inside an outer first fragment the datagram goes on after it. */
	if (off + hl > len || tot < hl || (!r->outer_frag && off + tot > len)) {
		r->cut = 1;
		return;
	}
	r->ip_end = off + tot;
	memcpy(r->saddr, f + off + 12, 4);
	memcpy(r->daddr, f + off + 16, 4);
	fo = be16(f + off + 6);
	if (f[off + 9] != IPPROTO_TCP) {
		/* A first fragment or a whole datagram may be a tunnel's. */
		if (!(fo & 0x1fff)) {
			r->first_frag |= !!(fo & PKT_IP_MF);
			ref_tunnel(f, len, off + hl, tot - hl, f[off + 9], r);
		}
		return;
	}
	frag_off = fo & 0x1fff;
	if (frag_off == 1) {
		r->kind = REF_REFUSE; /* RFC 1858: could rewrite the flags */
		return;
	}
	if (frag_off > 1)
		return; /* its first fragment is the one judged */
	/* |=: an inner datagram of an outer first fragment is one too. */
	r->first_frag |= !!(fo & PKT_IP_MF);
	if ((fo & PKT_IP_MF) && tot - hl < 20) {
		r->kind = REF_REFUSE; /* RFC 1858 tiny fragment */
		return;
	}
	/* In an outer first fragment the segment is read in the frame. */
	ref_tcp(f, off + hl, off + tot > len ? len - off - hl : tot - hl, r);
}

/* The chain walked @limit headers deep: past it, refused. */
static void ref_ipv6_walk(const __u8 *f, size_t len, size_t off, struct ref *r, int limit)
{
	size_t end, p;
	int n = 0;
	__u8 nh;

	if (off + 40 > len || f[off] >> 4 != 6) {
		r->cut = 1;
		return;
	}
	end = off + 40 + be16(f + off + 4);
	if (end > len && !r->outer_frag) {
		r->cut = 1;
		return; /* Linux ipv6_rcv: longer than the frame, dropped */
	}
	r->ip_end = end;
	/* In an outer first fragment, the headers are read in the frame. */
	if (end > len)
		end = len;
	memcpy(r->saddr, f + off + 8, 16);
	memcpy(r->daddr, f + off + 24, 16);
	nh = f[off + 6];
	p = off + 40;
	while (ref_is_ext6(nh)) {
		size_t hl;

		if (n == limit) {
			r->kind = REF_REFUSE;
			return;
		}
		if (p + 2 > end)
			goto cut;
		/* Fragment 8 bytes, AH (len + 2) * 4, the others (len + 1) * 8. */
		hl = nh == 44 ? 8 : nh == 51 ? (f[p + 1] + 2u) * 4 : (f[p + 1] + 1u) * 8;
		if (p + hl > end)
			goto cut;
		if (nh == 44) {
			unsigned int fo = be16(f + p + 2);

			if (fo >> 3) {
				/* Not the first fragment. At offset 1 it could
				 * rewrite a TCP header or chain: refused. */
				if (fo >> 3 == 1 && (f[p] == IPPROTO_TCP ||
						     ref_is_ext6(f[p])))
					r->kind = REF_REFUSE;
				return;
			}
			if (fo & 1)
				r->first_frag = 1;
		}
		nh = f[p];
		p += hl;
		n++;
	}
	if (nh != IPPROTO_TCP) {
		ref_tunnel(f, len, p, end - p, nh, r);
		return;
	}
	if (r->first_frag && end - p < 20) {
		r->kind = REF_REFUSE; /* RFC 7112: headers in the first fragment */
		return;
	}
	ref_tcp(f, p, end - p, r);
	return;
cut:
	/* A chain cut by the end of the datagram: the kernel drops it, but in
	 * a first fragment it goes on in the next one (RFC 7112): refused. */
	if (r->first_frag)
		r->kind = REF_REFUSE;
	else
		r->cut = 1;
}

/* ---- the reference model: tunnels that end here ---------------------------
 *
 * The kernel decapsulates after XDP a packet of a tunnel device that is up
 * (fuzz_tun), addressed to this host (the server's
 * addresses), and gives the inner SYN to the listener: the model opens one
 * level and judges it as a direct one (addresses, checksum; charged in the
 * tunnel class space; never answered), refuses a tunnel in the tunnel and,
 * in an outer first fragment, an inner packet whose headers it cannot see
 * whole (the kernel reassembles first). A VNI, key or endpoint no device
 * takes (fuzz_devs) is the kernel's to drop: passed. Outer checksums are
 * not matched (the program charges a SYN the kernel may then drop).
 */
enum { TUN_IN_NOT, TUN_IN_4, TUN_IN_6, TUN_IN_ETHER, TUN_IN_TCP, TUN_IN_NESTED };

/* The fuzz_cfg bits or UDP kind of a packet of @proto at @l4; 0: none. */
static unsigned int ref_tun_kind(const __u8 *f, size_t len, size_t l4, __u8 proto, int v6)
{
	__u32 k = fuzz_tun.kinds;
	unsigned int port, i;

	switch (proto) {
	case IPPROTO_IPIP:
		return k & (v6 ? SHEDD_TUN_4IN6 : SHEDD_TUN_IPIP);
	case IPPROTO_IPV6:
		return k & (v6 ? SHEDD_TUN_6IN6 : SHEDD_TUN_SIT);
	case IPPROTO_GRE:
		return k & (v6 ? SHEDD_TUN_GRE6 | SHEDD_TUN_GRETAP6 :
			    SHEDD_TUN_GRE | SHEDD_TUN_GRETAP);
	case IPPROTO_UDP:
		if (l4 + 8 > len)
			return 0;
		port = be16(f + l4 + 2);
		for (i = 0; i < MAX_TUN_UDP_PORTS; i++)
			if (port && fuzz_tun.udp_port[i] == port &&
			    (!fuzz_tun.udp_family[i] || fuzz_tun.udp_family[i] == (v6 ? 6 : 4)))
				return fuzz_tun.udp_kind[i] | (unsigned int)fuzz_tun.udp_proto[i] << 8;
		return 0;
	}
	return 0;
}

/* The tunnel header at @l4 (@l4_len bytes of datagram): what it carries
 * and where, or -1 when it is cut short. */
static int ref_tun_header(const __u8 *f, size_t len, size_t l4, size_t l4_len, __u8 proto,
			  unsigned int kind, size_t *inner, int v6)
{
	unsigned int flags, type;
	size_t hl;

	if (proto == IPPROTO_IPIP || proto == IPPROTO_IPV6) {
		*inner = l4;
		return proto == IPPROTO_IPIP ? TUN_IN_4 : TUN_IN_6;
	}
	if (proto == IPPROTO_GRE) {
		if (l4 + 4 > len)
			return -1;
		flags = be16(f + l4);
		if (flags & 0x4007) /* routing, version: not decapsulated */
			return TUN_IN_NOT;
		hl = 4 + 4 * (!!(flags & 0x8000) + !!(flags & 0x2000) + !!(flags & 0x1000));
		if (hl > l4_len || l4 + hl > len)
			return -1;
		*inner = l4 + hl;
		type = be16(f + l4 + 2);
		if (type == 0x0800 || type == 0x86dd)
			return !(kind & (SHEDD_TUN_GRE | SHEDD_TUN_GRE6)) ? TUN_IN_NOT :
			       type == 0x0800 ? TUN_IN_4 : TUN_IN_6;
		if (type == 0x6558)
			return kind & (SHEDD_TUN_GRETAP | SHEDD_TUN_GRETAP6) ? TUN_IN_ETHER :
			       TUN_IN_NOT;
		return TUN_IN_NOT;
	}
	/* UDP: VXLAN or Geneve, 8 bytes after the UDP header; FOU and GUE
	 * (fou_udp_recv(), gue_udp_recv()). */
	if (l4_len < 8)
		return -1;
	if ((kind & 0xff) == SHEDD_UDP_FOU || (kind & 0xff) == SHEDD_UDP_GUE) {
		unsigned int next = kind >> 8;

		if (l4 + 8 > len)
			return -1;
		hl = 8;
		if ((kind & 0xff) == SHEDD_UDP_GUE) {
			if (l4 + 12 > len || l4_len < 12)
				return -1;
			switch (f[l4 + 8] >> 6) {
			case 0:
				break;
			case 1: /* the IP header directly, by its version */
				*inner = l4 + 8;
				return f[l4 + 8] >> 4 == 4 ? TUN_IN_4 :
				       f[l4 + 8] >> 4 == 6 ? TUN_IN_6 : TUN_IN_NOT;
			default:
				return TUN_IN_NOT;
			}
			if (f[l4 + 8] & 0x20)
				return TUN_IN_NOT; /* a control message: dropped */
			hl = 12 + (f[l4 + 8] & 0x1f) * 4u;
			if (hl > l4_len || l4 + hl > len)
				return -1;
			next = f[l4 + 9];
		}
		*inner = l4 + hl;
		switch (next) {
		case IPPROTO_IPIP:
			return TUN_IN_4;
		case IPPROTO_IPV6:
			return TUN_IN_6;
		case IPPROTO_TCP:
			return TUN_IN_TCP;
		case IPPROTO_GRE:
			/* As GRE in the outer IP header, after the UDP one. */
			return ref_tun_header(f, len, l4 + hl, l4_len - hl, IPPROTO_GRE,
					      fuzz_tun.kinds & (v6 ? SHEDD_TUN_GRE6 | SHEDD_TUN_GRETAP6 :
								SHEDD_TUN_GRE | SHEDD_TUN_GRETAP),
					      inner, v6);
		case IPPROTO_UDP:
			/* A UDP tunnel in it is a second level. */
			return ref_tun_kind(f, len, l4 + hl, IPPROTO_UDP, v6) ? TUN_IN_NESTED :
			       TUN_IN_NOT;
		}
		return TUN_IN_NOT;
	}
	if (kind == SHEDD_UDP_VXLAN) {
		if (l4 + 16 > len || l4_len < 16)
			return -1;
		*inner = l4 + 16;
		return f[l4 + 8] & 0x08 ? TUN_IN_ETHER : TUN_IN_NOT;
	}
	if (l4 + 16 > len)
		return -1;
	if (f[l4 + 8] >> 6)
		return TUN_IN_NOT;
	hl = 8 + (f[l4 + 8] & 0x3f) * 4u;
	if (hl > l4_len - 8 || l4 + 8 + hl > len)
		return -1;
	*inner = l4 + 8 + hl;
	type = be16(f + l4 + 10);
	return type == 0x6558 ? TUN_IN_ETHER : type == 0x0800 ? TUN_IN_4 :
	       type == 0x86dd ? TUN_IN_6 : TUN_IN_NOT;
}

/* Does a device of fuzz_devs take the packet whose tunnel header is at
 * @l4 (protocol @proto, fuzz_cfg bits or UDP kind @kind, already read
 * whole by ref_tun_header(), which found @in inside)? As the kernel looks
 * one up: VXLAN by VNI, Geneve by VNI and the outer source, GRE by key
 * (the device's, or none with none) and the outer addresses, IP in IP by
 * the outer addresses; GRE or IP in FOU or GUE as without them. */
static int ref_tun_device(const __u8 *f, size_t l4, __u8 proto, unsigned int kind, int in,
			  const struct ref *r)
{
	__u8 client[16] = { 0 }, server[16] = { 0 };
	size_t g = l4, alen = r->v6 ? 16 : 4;
	unsigned int flags, vni;
	__u32 key;

	pkt_addr(r->v6 ? AF_INET6 : AF_INET, r->v6 ? PKT_V6_CLIENT : PKT_V4_CLIENT, client);
	pkt_addr(r->v6 ? AF_INET6 : AF_INET, r->v6 ? PKT_V6_SERVER : PKT_V4_SERVER, server);
	if (proto == IPPROTO_UDP) {
		vni = (unsigned int)f[l4 + 12] << 16 | (unsigned int)f[l4 + 13] << 8 | f[l4 + 14];
		if ((kind & 0xff) == SHEDD_UDP_VXLAN)
			return vni == FUZZ_VNI;
		if ((kind & 0xff) == SHEDD_UDP_GENEVE)
			return vni == FUZZ_VNI && !memcmp(r->saddr, client, alen);
		/* FOU or GUE: GRE after them, or IP in IP. */
		if ((kind & 0xff) == SHEDD_UDP_FOU && (kind >> 8) == IPPROTO_GRE)
			g = l4 + 8;
		else if ((kind & 0xff) == SHEDD_UDP_GUE && !(f[l4 + 8] >> 6) &&
			 f[l4 + 9] == IPPROTO_GRE)
			g = l4 + 12 + (f[l4 + 8] & 0x1f) * 4u;
		else
			goto ip_in_ip;
	} else if (proto != IPPROTO_GRE) {
		goto ip_in_ip;
	}
	flags = be16(f + g);
	if (be16(f + g + 2) == 0x6558)
		return 1; /* GRE-TAP: a collect_md device */
	if (flags & 0x2000) {
		key = be32(f + g + 4 + ((flags & 0x8000) ? 4 : 0));
		return key == FUZZ_GRE_KEY;
	}
	return !memcmp(r->daddr, server, alen);
ip_in_ip:
	if (r->v6)
		return !memcmp(r->saddr, client, 16) && !memcmp(r->daddr, server, 16);
	return in == TUN_IN_6 || !memcmp(r->saddr, client, 4);
}

static void ref_tunnel(const __u8 *f, size_t len, size_t l4, size_t l4_len, __u8 proto,
		       struct ref *r)
{
	__u8 local[16];
	unsigned int kind = ref_tun_kind(f, len, l4, proto, r->v6), tags = 0, type;
	int frag = r->first_frag, in, deep = 0;
	size_t p = 0;
	struct ref sub;

	if (!kind || r->deep_tags)
		return;
	if (r->in_tunnel) {
		/* One level: what the kernel would open again is refused. */
		r->kind = REF_REFUSE;
		r->tun_refused = 1;
		return;
	}
	pkt_addr(r->v6 ? AF_INET6 : AF_INET, r->v6 ? PKT_V6_SERVER : PKT_V4_SERVER, local);
	if (memcmp(r->daddr, local, r->v6 ? 16 : 4))
		return;
	in = ref_tun_header(f, len, l4, l4_len, proto, kind, &p, r->v6);
	if (in == TUN_IN_NOT)
		return;
	if (in < 0) {
		if (frag) {
			r->kind = REF_REFUSE;
			r->tun_refused = 1;
		}
		return;
	}
	/* No device takes it: the kernel drops it, the program passes it
	 * unjudged (a pass counter, as a packet that is no tunnel's). */
	if ((in == TUN_IN_4 || in == TUN_IN_6 || in == TUN_IN_ETHER) &&
	    !ref_tun_device(f, l4, proto, kind, in, r)) {
		r->no_device = 1;
		return;
	}
	r->tunnel = 1;
	if (in == TUN_IN_NESTED) {
		r->kind = REF_REFUSE;
		r->tun_refused = 1;
		return;
	}
	if (in == TUN_IN_TCP) {
		/* FOU or GUE of protocol 6: the TCP header itself, with
		 * the outer IP header's addresses (and class). */
		size_t seglen = l4_len - (p - l4);

		memset(&sub, 0, sizeof(sub));
		sub.kind = REF_PASS;
		sub.in_tunnel = 1;
		sub.outer_frag = frag;
		sub.first_frag = frag;
		sub.v6 = r->v6;
		sub.l2 = r->l2;
		memcpy(sub.saddr, r->saddr, 16);
		memcpy(sub.daddr, r->daddr, 16);
		/* In an outer first fragment the segment is read in the frame. */
		if (p + seglen > len)
			seglen = len - p;
		if (frag && l4_len - (p - l4) < 20)
			goto cut;
		ref_tcp(f, p, seglen, &sub);
		if (sub.cut)
			goto cut;
		if (sub.kind != REF_JUDGE && sub.kind != REF_ACK && !sub.rst_end)
			return;
		sub.tunnel = 1;
		sub.in_tunnel = 0;
		*r = sub;
		return;
	}
	if (in == TUN_IN_ETHER) {
		/* The inner Ethernet header and its VLAN tags, as outside a
		 * tunnel (ref_model()): the tunnel's device strips them as
		 * any device does; past MAX_VLAN_TAGS refused. */
		if (p + 14 > len)
			goto cut;
		type = be16(f + p + 12);
		p += 14;
		while (type == 0x8100 || type == 0x88a8) {
			if (tags == MAX_VLAN_TAGS)
				deep = 1;
			if (p + 4 > len)
				goto cut;
			type = be16(f + p + 2);
			p += 4;
			tags++;
		}
		if (deep) {
			r->kind = REF_REFUSE;
			r->tun_refused = 1;
			return;
		}
		if (type != 0x0800 && type != 0x86dd)
			return;
		in = type == 0x0800 ? TUN_IN_4 : TUN_IN_6;
	}
	memset(&sub, 0, sizeof(sub));
	sub.kind = REF_PASS;
	sub.in_tunnel = 1;
	sub.outer_frag = frag;
	sub.first_frag = frag;
	sub.v6 = in == TUN_IN_6;
	sub.l2 = r->l2;
	if (in == TUN_IN_4)
		ref_ipv4(f, len, p, &sub);
	else
		ref_ipv6(f, len, p, &sub);
	if (sub.kind == REF_REFUSE) {
		r->kind = REF_REFUSE;
		r->tun_refused = 1;
		return;
	}
	if (sub.cut)
		goto cut;
	if (sub.kind != REF_JUDGE && sub.kind != REF_ACK && !sub.rst_end)
		return;
	/* The inner datagram ends inside the outer one, or the kernel
	 * drops it. */
	if (!frag && sub.ip_end > l4 + l4_len)
		return;
	sub.tunnel = 1;
	sub.in_tunnel = 0;
	*r = sub;
	return;
cut:
	if (frag) {
		r->kind = REF_REFUSE;
		r->tun_refused = 1;
	}
}

/* The kernel walks the whole chain (ipv6_rcv(), then each header's
 * handler in ip6_protocol_deliver_rcu()); the program walks
 * MAX_IPV6_EXT_HDRS headers, and a longer chain, which it cannot judge,
 * must be refused. A chain it walks is judged whatever its length (the
 * generators make headers of up to 2 KiB: skippable options, routing
 * headers of an unknown type with Segments Left 0, which Linux skips):
 * nothing behind the parser gives up on a length it accepted, so the
 * model has no length rule of its own: a SYN behind 2 KiB of headers is
 * answered, charged, refused, or opened as a tunnel as a SYN behind none. */
static void ref_ipv6(const __u8 *f, size_t len, size_t off, struct ref *r)
{
	struct ref kernel = *r;

	ref_ipv6_walk(f, len, off, &kernel, (int)len);
	ref_ipv6_walk(f, len, off, r, MAX_IPV6_EXT_HDRS);
	r->delivered = kernel.delivered;
}

/* VLAN tags, as __netif_receive_skb_core() takes them: skb_vlan_untag()
 * moves the outer 802.1Q or 802.1ad tag into skb->vlan_tci; a VLAN device
 * of its VID takes the frame (vlan_do_receive()) and the next tag goes
 * the same way; a VID 0 (priority) tag without a device is dropped at
 * check_vlan_id and the next tag untagged, any number of times, so a SYN
 * behind any stack of priority tags reaches the listener (a 6.18 of 2026
 * was seen to drop the frame behind nine, RECURSION_LIMIT; the source of
 * earlier kernels has no such bound, and the model keeps that view;
 * tests/integration/groundtruth.bats checks it against the kernel). A non-zero VID
 * without a device is PACKET_OTHERHOST, dropped by ip_rcv(); the program
 * cannot see the host's VLAN devices, so the model takes every VID to
 * have one: tags of any VID are judged. The program walks MAX_VLAN_TAGS
 * tags; a frame still tagged after them must be refused, whatever
 * follows. TPIDs other than 0x8100 and 0x88a8 (0x9100) are no VLAN to
 * the kernel (eth_type_vlan()): no protocol takes them. */
static void ref_model(const __u8 *f, size_t len, struct ref *r)
{
	size_t off = 14;
	unsigned int proto;
	int tags = 0, deep = 0;

	memset(r, 0, sizeof(*r));
	r->kind = REF_PASS;
	if (len < 14)
		return;
	proto = be16(f + 12);
	while (proto == 0x8100 || proto == 0x88a8) {
		if (tags == MAX_VLAN_TAGS)
			deep = 1;
		if (off + 4 > len)
			goto out; /* skb_vlan_untag() cannot pull it: dropped */
		proto = be16(f + off + 2);
		off += 4;
		tags++;
	}
	r->l2 = off;
	/* Refused on the tags alone; what is behind them is still read, for
	 * what the kernel would deliver, but no tunnel is opened: the program
	 * never looks past the tags. */
	r->deep_tags = deep;
	if (proto == 0x0800) {
		ref_ipv4(f, len, off, r);
	} else if (proto == 0x86dd) {
		r->v6 = 1;
		ref_ipv6(f, len, off, r);
	}
out:
	if (deep)
		r->kind = REF_REFUSE;
}

/* Does the kernel drop this segment for its addresses before a listener
 * sees it? IPv4 (ip_route_input_slow(), fib_validate_source()): a
 * multicast, limited broadcast, 0/8 or 127/8 source, a 0/8, 127/8,
 * multicast or limited broadcast destination, a source equal to the
 * destination; class E is unicast. IPv6 (ip6_rcv_core(),
 * tcp_v6_conn_request()): a multicast source or destination, a v4-mapped
 * source; ::1 is taken on lo, where the frames here come in. */
static int ref_kernel_drops(const struct ref *r)
{
	static const __u8 mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const __u8 bcast[4] = { 0xff, 0xff, 0xff, 0xff };

	if (!r->v6) {
		__u8 s = r->saddr[0], d = r->daddr[0];

		return s == 0 || s == 127 || (s >= 224 && s < 240) || !memcmp(r->saddr, bcast, 4) ||
		       d == 0 || d == 127 || (d >= 224 && d < 240) || !memcmp(r->daddr, bcast, 4) ||
		       !memcmp(r->saddr, r->daddr, 4);
	}
	return r->saddr[0] == 0xff || r->daddr[0] == 0xff || !memcmp(r->saddr, mapped, 12);
}

/* Is the TCP checksum of the SYN wrong, as the kernel would find it? Not
 * checked (as the program): a first fragment, a segment longer than 508
 * bytes or past the frame, a check field left to offload (the folded
 * pseudo-header sum). */
static int ref_csum_bad(const struct pkt *p, const struct ref *r)
{
	size_t alen = r->v6 ? 16 : 4, len = r->l4_len;
	__u64 sum;
	__u16 field, partial;

	if (r->first_frag || len < 20 || len > 508 || r->tcp_off + len > p->len)
		return 0;
	sum = pkt_csum_add(pkt_csum_add(0, r->saddr, alen), r->daddr, alen);
	sum += IPPROTO_TCP + (__u32)len;
	field = (__u16)be16(p->data + r->tcp_off + 16);
	if (pkt_csum_fold(pkt_csum_add(sum, p->data + r->tcp_off, len)) == 0)
		return 0;
	partial = pkt_csum_fold(sum);
	partial ^= 0xffff;
	return field != partial;
}

/* Would the kernel answer this SYN? Group MACs and a MAC not this host's,
 * what it drops (ref_kernel_drops()) and the unspecified address: no. */
static int ref_answerable(const __u8 *f, const struct ref *r)
{
	static const __u8 zero[16];

	if (memcmp(f, fuzz_cfg.mac, ETH_ALEN) || (f[ETH_ALEN] & 1))
		return 0;
	if (ref_kernel_drops(r))
		return 0;
	if (!r->v6)
		return 1;
	return memcmp(r->saddr, zero, 16) && memcmp(r->daddr, zero, 16);
}

/* What a socket lookup of the frame's flow finds in our namespace. */
enum ref_sock { SOCK_NONE, SOCK_LISTENER, SOCK_ESTABLISHED };

/* The program's memory of the last verdict on proven flows
 * (bpf/config_maps.h), mirrored slot for slot with the same hash, so that
 * the model forgets what the program's direct-mapped cache forgets. */
#define FLOW_ADMITTED 1U
#define FLOW_REFUSED 2U
#define FLOW_SYN_CHARGED 4U
static struct shedd_proven ref_proven[PROVEN_SLOTS];

static __u32 ref_flow_hash(const struct ref *r)
{
	return flow_hash_of(r->saddr, r->daddr, r->v6 ? 4 : 1, r->sport, r->dport);
}

/* proven_get(): @seq, @ack in host order. */
static __u32 ref_proven_get(const struct ref *r, __u64 now_ns, __u32 seq, __u32 ack)
{
	__u32 h = ref_flow_hash(r), now = (__u32)(now_ns >> 20), v, age;
	const struct shedd_proven *e = &ref_proven[h % PROVEN_SLOTS];

	if (!e->stamp || e->hash != h)
		return 0;
	v = e->stamp & 7;
	age = (now - (e->stamp >> 3)) & PROVEN_TIME_MASK;
	if (v == FLOW_SYN_CHARGED)
		return age < PROVEN_HOLD_UNITS && seq == e->seq ? v : 0;
	if (ack != e->ack || seq - e->seq >= PROVEN_SEQ_SPAN)
		return 0;
	return age < (v == FLOW_REFUSED ? PROVEN_HOLD_UNITS : PROVEN_REPEAT_UNITS) ? v : 0;
}

static void ref_proven_put(const struct ref *r, __u64 now_ns, __u32 verdict, __u32 seq,
			   __u32 ack)
{
	__u32 h = ref_flow_hash(r), now = (__u32)(now_ns >> 20);
	struct shedd_proven *e = &ref_proven[h % PROVEN_SLOTS];

	e->hash = h;
	e->seq = seq;
	e->ack = ack;
	e->stamp = ((now & PROVEN_TIME_MASK) << 3) | verdict;
}

/* A RST or FIN of the flow: proven_end(). */
static void ref_proven_end(const struct ref *r)
{
	__u32 h = ref_flow_hash(r);
	struct shedd_proven *e = &ref_proven[h % PROVEN_SLOTS];

	if (e->hash == h && (e->stamp & 7) != FLOW_REFUSED)
		e->stamp = 0;
}

static enum ref_sock ref_lookup(const struct ref *r)
{
	__u8 server[16], client[16];
	int family = r->v6 ? AF_INET6 : AF_INET;
	size_t alen = r->v6 ? 16 : 4;

	pkt_addr(family, r->v6 ? PKT_V6_SERVER : PKT_V4_SERVER, server);
	pkt_addr(family, r->v6 ? PKT_V6_CLIENT : PKT_V4_CLIENT, client);
	if (memcmp(r->daddr, server, alen) || r->dport != PORT_A)
		return SOCK_NONE;
	if (!memcmp(r->saddr, client, alen) &&
	    r->sport == (r->v6 ? sockets.port6 : sockets.port4))
		return SOCK_ESTABLISHED;
	return SOCK_LISTENER;
}

/* The MSS a cookie carries (net/ipv4/syncookies.c): the largest entry of
 * the family's table at or below the client's MSS (536 without one), else
 * the smallest. */
static unsigned int ref_cookie_mss(int v6, unsigned int client_mss, unsigned int *idx)
{
	unsigned int mss = client_mss ? client_mss : 536;
	unsigned int i = 3;

	while (i > 0 && mss < (unsigned int)(v6 ? SHEDD_MSS6(i) : SHEDD_MSS4(i)))
		i--;
	*idx = i;
	return v6 ? SHEDD_MSS6(i) : SHEDD_MSS4(i);
}

/* A transmit budget as docs/usage.md (--rst-rate) and rst.h describe it: @rate a second,
 * @burst deep (at least one), full when fresh, refilled at each take for
 * the time since the last one (at most 1000 s), in 1e-9 units. */
struct ref_budget {
	__u64 units, last_ns;
};

static int ref_budget_take(struct ref_budget *b, __u64 rate, __u64 burst, __u64 now)
{
	__u64 one = SHEDD_NSEC_PER_SEC, cap = (burst ? burst : 1) * one;

	if (now > b->last_ns) {
		__u64 dt = now - b->last_ns;

		if (dt > MAX_REFILL_NS)
			dt = MAX_REFILL_NS;
		b->units += dt * rate;
		if (b->units > cap)
			b->units = cap;
		b->last_ns = now;
	}
	if (b->units < one)
		return 0;
	b->units -= one;
	return 1;
}

/* The state the program keeps between frames, as the model sees it (one
 * CPU: the process is pinned). */
struct ref_state {
	struct shedd_config cfg;
	__u64 verify_until[SHEDD_NR_CLASSES]; /* SHEDD_VERIFY_SHEDDING */
	struct ref_budget cookies, rsts;
	__u64 refreshed_ns[2]; /* PORT_A, PORT_B */
	__u32 cookie_sent[2];  /* the cookie_sent map's entries of PORT_A, PORT_B */
};

/* The program's clock in the units of its cookie_sent map. */
static __u32 ref_cookie_units(__u64 now_ns)
{
	return (__u32)(now_ns >> 30) | 1;
}

/* ---- frames ------------------------------------------------------------- */

static unsigned int rnd(uint64_t *s, unsigned int n)
{
	return (unsigned int)(rng_next(s) % n);
}

static const char *const v4_sources[] = {
	"198.18.1.10", "198.18.1.200", "198.18.2.7", "198.18.3.9", "198.18.0.10",
	"224.0.0.1", "239.1.2.3", "255.255.255.255", "0.0.0.0", "127.0.0.1",
};
static const char *const v6_sources[] = {
	"2001:db8:1::10", "2001:db8:1:5::1", "2001:db8:2::5", "2001:db8:ffff::10",
	"ff02::1", "::", "::1", "::ffff:198.18.0.10",
};
static const char *const v4_dests[] = {
	PKT_V4_SERVER, PKT_V4_SERVER, PKT_V4_SERVER, "224.0.0.251", "255.255.255.255",
};
static const char *const v6_dests[] = {
	PKT_V6_SERVER, PKT_V6_SERVER, PKT_V6_SERVER, "ff02::1",
};
static const __u8 ext_types[] = {
	IPPROTO_HOPOPTS, IPPROTO_ROUTING, IPPROTO_DSTOPTS, IPPROTO_AH,
	IPPROTO_FRAGMENT,
};

/* A random length for an options or routing header (packets.h's ext_len:
 * skippable options, a routing header of an unknown type with Segments
 * Left 0), mostly 0 (the short default), often past the 472 bytes of a
 * whole chain the functions behind the parser once took, at most 2 KiB;
 * @room: the bytes the frame has left, taken from. */
static unsigned int random_ext_len(uint64_t *s, __u8 type, unsigned int *room)
{
	unsigned int len;

	if ((type != IPPROTO_HOPOPTS && type != IPPROTO_ROUTING && type != IPPROTO_DSTOPTS) ||
	    rnd(s, 3))
		return 0;
	len = rnd(s, 4) ? 8 * (1 + rnd(s, 80)) : 8 * (1 + rnd(s, 256));
	if (len + 8 > *room)
		return 0;
	*room -= len;
	return len;
}

/* The TCP checksum again, after the segment was edited (the program does
 * not check it; the frame should still look right). */
static void fix_tcp_csum(struct pkt *p, size_t seglen)
{
	__u8 *th = p->data + p->l4_off;
	__u16 sum = pkt_l4_csum(p->l3_proto == ETH_P_IPV6, p->saddr, p->daddr,
				IPPROTO_TCP, th, seglen, 16);

	th[16] = (__u8)(sum >> 8);
	th[17] = (__u8)sum;
}

/* Random TCP options for a frame built with the 20 option bytes of a
 * Linux SYN and @extra bytes after them: a new data offset (5..15, as the
 * bytes allow) and options of every kind the SYN-ACK answers, in any
 * order, with wrong lengths, duplicates, an early end. */
static void random_options(uint64_t *s, struct pkt *p, size_t extra)
{
	static const unsigned int msses[] = { 0, 1, 88, 535, 536, 1219, 1220, 1300, 1399,
					      1440, 1460, 8940, 9000, 65535 };
	__u8 *th = p->data + p->l4_off;
	size_t max = 40 + extra > 60 ? 60 : 40 + extra, hlen, i = 20;

	hlen = 20 + 4 * rnd(s, (unsigned int)(max - 20) / 4 + 1);
	while (i < hlen) {
		size_t room = hlen - i;
		unsigned int k = rnd(s, 16), mss;

		if (k < 3 && room >= 4) { /* MSS */
			mss = rnd(s, 3) ? msses[rnd(s, ARRAY_SIZE(msses))] : rnd(s, 0x10000);
			th[i] = 2, th[i + 1] = 4, th[i + 2] = (__u8)(mss >> 8), th[i + 3] = (__u8)mss;
			i += 4;
		} else if (k < 5 && room >= 2) { /* SACK permitted */
			th[i] = 4, th[i + 1] = 2;
			i += 2;
		} else if (k < 8 && room >= 10) { /* timestamps */
			th[i] = 8, th[i + 1] = 10;
			put_be32(th + i + 2, rnd(s, 4) ? (__u32)rng_next(s) : 0);
			put_be32(th + i + 6, rnd(s, 2) ? 0 : (__u32)rng_next(s));
			i += 10;
		} else if (k < 10 && room >= 3) { /* window scale, at times > 14 */
			th[i] = 3, th[i + 1] = 3, th[i + 2] = (__u8)rnd(s, 18);
			i += 3;
		} else if (k < 13) { /* NOP */
			th[i++] = 1;
		} else if (k == 13) { /* end of list, then junk */
			th[i++] = 0;
			while (i < hlen)
				th[i++] = (__u8)rnd(s, 256);
		} else { /* a known kind with a wrong length, or any kind */
			th[i] = (__u8)(k == 14 ? 2 + rnd(s, 7) : rnd(s, 256));
			if (i + 1 < hlen)
				th[i + 1] = (__u8)rnd(s, 12);
			i += 2;
		}
	}
	th[12] = (__u8)(hlen / 4 << 4);
}

/* A frame built from a random spec: mostly IPv4/IPv6 TCP, SYNs often,
 * fragments, options, extension chains and odd addresses. */
static void random_frame(uint64_t *s, struct pkt *p)
{
	struct pkt_spec spec = { 0 };
	char v4[20], v6[48];
	unsigned int k = rnd(s, 100), i;

	spec.l3 = k < 47 ? ETH_P_IP : k < 94 ? ETH_P_IPV6 : k < 97 ? ETH_P_ARP : 0x88cc;
	k = rnd(s, 100);
	spec.vlans = k < 75 ? 0 : k < 88 ? 1 : k < 93 ? 2 : 3 + (int)rnd(s, PKT_MAX_VLANS - 2);
	spec.vid0 = rnd(s, 2);
	if (spec.l3 == ETH_P_IP) {
		if (rnd(s, 4) == 0) {
			snprintf(v4, sizeof(v4), "198.%u.%u.%u", 18 + rnd(s, 2),
				 rnd(s, 256), rnd(s, 256));
			spec.saddr = v4;
		} else {
			spec.saddr = v4_sources[rnd(s, ARRAY_SIZE(v4_sources))];
		}
		spec.daddr = v4_dests[rnd(s, ARRAY_SIZE(v4_dests))];
		if (rnd(s, 4) == 0)
			spec.ip_opt_len = 4 * rnd(s, 11);
		k = rnd(s, 100);
		spec.frag = k < 55 ? 0 : k < 65 ? PKT_IP_MF : k < 70 ? PKT_IP_MF | 1 :
			    k < 73 ? 1 : k < 78 ? PKT_IP_MF | 2 : k < 85 ? PKT_IP_DF :
			    (__u16)rnd(s, 0x10000);
	} else if (spec.l3 == ETH_P_IPV6) {
		if (rnd(s, 4) == 0) {
			snprintf(v6, sizeof(v6), "2001:db8:%x::%x", rnd(s, 4),
				 rnd(s, 0x10000));
			spec.saddr = v6;
		} else {
			spec.saddr = v6_sources[rnd(s, ARRAY_SIZE(v6_sources))];
		}
		spec.daddr = v6_dests[rnd(s, ARRAY_SIZE(v6_dests))];
		if (rnd(s, 2)) {
			/* Room for the rest of the frame (the longest TCP
			 * header and data, 8 default headers, 12 tags). */
			unsigned int room = PKT_MAX - 500;

			spec.nr_ext = 1 + rnd(s, PKT_MAX_EXT);
			for (i = 0; i < (unsigned int)spec.nr_ext; i++) {
				spec.ext[i] = ext_types[rnd(s, ARRAY_SIZE(ext_types))];
				spec.ext_len[i] = random_ext_len(s, spec.ext[i], &room);
			}
		}
		k = rnd(s, 100);
		spec.frag = k < 30 ? 0 : k < 60 ? PKT_IP6_MF : k < 70 ? 1 << 3 | PKT_IP6_MF :
			    k < 75 ? 1 << 3 : (__u16)rnd(s, 0x10000);
	}
	k = rnd(s, 100);
	spec.l4 = k < 85 ? 0 : k < 95 ? IPPROTO_UDP : IPPROTO_ICMP;
	k = rnd(s, 100);
	spec.flags = k < 50 ? TCP_SYN : k < 58 ? TCP_SYN | TCP_ECE | TCP_CWR :
		     k < 66 ? TCP_SYN | (1 << rnd(s, 8)) : (__u8)rnd(s, 256);
	k = rnd(s, 100);
	spec.dport = k < 50 ? PORT_A : k < 75 ? PORT_B : k < 90 ? PORT_OPEN :
		     (__u16)(1 + rnd(s, 65535));
	spec.sport = (__u16)(1 + rnd(s, 65535));
	spec.seq = (__u32)rng_next(s) | 1;
	spec.tcp_opts = rnd(s, 2);
	spec.payload_len = rnd(s, 3) ? 0 : rnd(s, 48);
	spec.pad_to = rnd(s, 5) ? 0 : 60 + rnd(s, 8);
	pkt_build(p, &spec);
	if (p->l4_proto == IPPROTO_TCP && spec.tcp_opts && rnd(s, 2)) {
		random_options(s, p, spec.payload_len);
		fix_tcp_csum(p, 40 + spec.payload_len);
	}
}

/* A frame of a tunnel: a kind at random (ip6gretap does not end here),
 * to the server or not, GRE flags and odd versions, Geneve options, outer
 * fragments, around an inner SYN (mostly) with VLAN tags, fragments and
 * nested tunnels. */
static void random_tunnel_frame(uint64_t *s, struct pkt *p)
{
	static const __u16 gre_flags[] = { 0, TUNP_GRE_K, TUNP_GRE_C | TUNP_GRE_K | TUNP_GRE_S,
					   TUNP_GRE_S, TUNP_GRE_R, 1 };
	static const __u8 inner_l4[] = { 0, 0, 0, 0, 0, IPPROTO_UDP, IPPROTO_IPIP, IPPROTO_GRE };
	struct tun_pkt_spec t = { 0 };
	struct pkt_spec in = { 0 };
	unsigned int k;
	int v6;

	t.kind = (enum tun_pkt_kind)(TUNP_IPIP + rnd(s, TUNP_GUE6));
	v6 = tun_pkt_outer_v6(t.kind);
	if (rnd(s, 8) == 0)
		t.outer_daddr = v6 ? "2001:db8::99" : "198.19.0.99";
	t.gre_flags = gre_flags[rnd(s, ARRAY_SIZE(gre_flags))];
	if (rnd(s, 10) == 0)
		t.gre_proto = (__u16)rnd(s, 0x10000);
	if (rnd(s, 10) == 0)
		t.udp_port = rnd(s, 2) ? 4790 : TUNP_GENEVE_PORT;
	t.vxlan_no_i = rnd(s, 10) == 0;
	/* A VNI or GRE key no device has, at times. */
	if (rnd(s, 6) == 0)
		t.vni = rnd(s, 2) ? 43 : (__u32)rnd(s, 1U << 24);
	if (rnd(s, 6) == 0)
		t.gre_key = (__u32)rng_next(s);
	/* Bounded with the inner headers below so that the frame fits in
	 * PKT_MAX: the longest Geneve options only around a short inner. */
	t.geneve_opt = rnd(s, 3) ? 0 : rnd(s, 8) ? 4 * rnd(s, 32) : 252;
	t.geneve_ver = rnd(s, 10) == 0;
	/* FOU and GUE: the protocol (mostly by the inner), GUE versions,
	 * control messages and fields. */
	k = rnd(s, 100);
	t.fou_proto = k < 60 ? 0 : k < 75 ? IPPROTO_TCP : k < 85 ? IPPROTO_GRE :
		      k < 92 ? IPPROTO_UDP : (__u8)rnd(s, 256);
	k = rnd(s, 100);
	t.gue_ver = k < 80 ? 0 : k < 95 ? 1 : (__u8)(2 + rnd(s, 2));
	t.gue_control = rnd(s, 10) == 0;
	t.gue_opt = rnd(s, 2) ? 0 : 4 * rnd(s, 32);
	if (rnd(s, 4) == 0)
		t.geneve_proto = rnd(s, 2) ? ETH_P_IP : ETH_P_IPV6;
	k = rnd(s, 100);
	t.outer_frag = k < 85 ? 0 : k < 95 ? (v6 ? PKT_IP6_MF : PKT_IP_MF) :
		       (v6 ? 3 << 3 : 3);
	/* An IPv6 outer chain Linux skips: a routing header of an unknown
	 * type with Segments Left 0, destination options, of any length up
	 * to 2 KiB each (the tunnel header and the inner frame below take
	 * at most 1150 bytes). */
	if (v6 && rnd(s, 4) == 0) {
		unsigned int room = PKT_MAX - 1300;

		t.outer_rh_len = random_ext_len(s, IPPROTO_ROUTING, &room);
		t.outer_do_len = random_ext_len(s, IPPROTO_DSTOPTS, &room);
	}
	/* SIT and IP6IP6 carry IPv6; IPIP and IPv4-in-IPv6 IPv4. */
	if (t.kind == TUNP_SIT || t.kind == TUNP_6IN6)
		in.l3 = ETH_P_IPV6;
	else if (t.kind == TUNP_IPIP || t.kind == TUNP_4IN6)
		in.l3 = ETH_P_IP;
	else if (t.geneve_proto && t.kind >= TUNP_GENEVE)
		in.l3 = t.geneve_proto;
	else
		in.l3 = rnd(s, 2) ? ETH_P_IP : ETH_P_IPV6;
	if (tun_pkt_carries_eth(&t))
		in.vlans = rnd(s, 4) ? 0 : (int)rnd(s, 4);
	in.saddr = in.l3 == ETH_P_IP ? v4_sources[rnd(s, 5)] : v6_sources[rnd(s, 4)];
	k = rnd(s, 100);
	in.frag = k < 85 ? 0 : in.l3 == ETH_P_IP ? (k < 92 ? PKT_IP_MF : PKT_IP_MF | 1) : 0;
	if (in.l3 == ETH_P_IPV6 && k >= 85 && t.geneve_opt < 252) {
		unsigned int room = 600;

		in.nr_ext = 1 + rnd(s, 4);
		for (k = 0; k < (unsigned int)in.nr_ext; k++) {
			in.ext[k] = ext_types[rnd(s, ARRAY_SIZE(ext_types))];
			in.ext_len[k] = random_ext_len(s, in.ext[k], &room);
		}
		in.frag = rnd(s, 2) ? PKT_IP6_MF : 0;
	}
	in.l4 = inner_l4[rnd(s, ARRAY_SIZE(inner_l4))];
	if ((tun_pkt_fou(t.kind) || tun_pkt_gue(t.kind)) && t.fou_proto == IPPROTO_UDP)
		in.l4 = IPPROTO_UDP;
	k = rnd(s, 100);
	in.flags = k < 70 ? TCP_SYN : k < 85 ? TCP_ACK : (__u8)rnd(s, 256);
	k = rnd(s, 100);
	in.dport = k < 60 ? PORT_A : k < 80 ? PORT_B : PORT_OPEN;
	/* Inner UDP to a tunnel's port: a tunnel in the tunnel. */
	if (in.l4 == IPPROTO_UDP && rnd(s, 2))
		in.dport = rnd(s, 3) == 0 ? TUNP_VXLAN_PORT : rnd(s, 2) ? TUNP_FOU41_PORT :
			   TUNP_GUE_PORT;
	in.sport = (__u16)(1 + rnd(s, 65535));
	in.seq = (__u32)rng_next(s) | 1;
	in.tcp_opts = rnd(s, 2);
	in.payload_len = rnd(s, 3) || t.geneve_opt == 252 ? 0 : rnd(s, 48);
	if (t.geneve_opt == 252)
		in.vlans = 0;
	tun_pkt_build(p, &t, &in);
}

/* An ACK to a protected port: a client ending a handshake with a cookie
 * it guessed (a random acknowledgement number), from anywhere, at times
 * with data or FIN. */
static void forged_ack(uint64_t *s, struct pkt *p)
{
	struct pkt_spec spec = { 0 };
	unsigned int k = rnd(s, 100);

	if (k < 50) {
		spec.l3 = ETH_P_IP;
		spec.saddr = v4_sources[rnd(s, ARRAY_SIZE(v4_sources))];
		spec.daddr = rnd(s, 4) ? PKT_V4_SERVER : v4_dests[rnd(s, ARRAY_SIZE(v4_dests))];
		if (rnd(s, 4) == 0)
			spec.ip_opt_len = 4 * rnd(s, 11);
	} else {
		spec.l3 = ETH_P_IPV6;
		spec.saddr = v6_sources[rnd(s, ARRAY_SIZE(v6_sources))];
		spec.daddr = rnd(s, 4) ? PKT_V6_SERVER : v6_dests[rnd(s, ARRAY_SIZE(v6_dests))];
		if (rnd(s, 4) == 0) {
			unsigned int room = PKT_MAX - 500;

			spec.nr_ext = 1;
			spec.ext[0] = ext_types[rnd(s, 3)];
			spec.ext_len[0] = random_ext_len(s, spec.ext[0], &room);
		}
	}
	spec.vlans = rnd(s, 4) ? 0 : 1 + (int)rnd(s, MAX_VLAN_TAGS);
	spec.vid0 = rnd(s, 2);
	k = rnd(s, 100);
	spec.flags = TCP_ACK | (k < 60 ? 0 : k < 80 ? TCP_PSH : k < 90 ? TCP_FIN :
				(__u8)(rnd(s, 256) & ~(TCP_SYN | TCP_RST)));
	spec.dport = rnd(s, 4) ? PORT_A : PORT_B;
	spec.sport = (__u16)(1 + rnd(s, 65535));
	spec.seq = (__u32)rng_next(s) | 1;
	spec.tcp_opts = rnd(s, 4) == 0;
	spec.payload_len = rnd(s, 3) ? 0 : rnd(s, 48);
	pkt_build(p, &spec);
	put_be32(p->data + p->l4_off + 8, (__u32)rng_next(s));
	fix_tcp_csum(p, (spec.tcp_opts ? 40 : 20) + spec.payload_len);
}

/* An ACK of the established connection: a socket of its own, passed. */
static void established_ack(uint64_t *s, struct pkt *p)
{
	struct pkt_spec spec = { 0 };
	int v6 = rnd(s, 2);

	spec.l3 = v6 ? ETH_P_IPV6 : ETH_P_IP;
	spec.sport = v6 ? sockets.port6 : sockets.port4;
	spec.dport = PORT_A;
	spec.flags = TCP_ACK | (rnd(s, 2) ? TCP_PSH : 0);
	spec.seq = (__u32)rng_next(s) | 1;
	spec.vlans = rnd(s, 4) ? 0 : 1;
	spec.payload_len = rnd(s, 2) ? 0 : rnd(s, 64);
	pkt_build(p, &spec);
	put_be32(p->data + p->l4_off + 8, (__u32)rng_next(s));
	fix_tcp_csum(p, 20 + spec.payload_len);
}

/* A cookie SYN-ACK the program sent to a SYN that has a listener. */
struct ring_entry {
	int v6;
	__u8 client[16], server[16];
	__u16 cport;
	__u32 seq, ack_seq; /* of the ACK that answers it */
	double sent;        /* wall clock: the kernel's cookies age in it */
};

/* The ACK that ends the handshake of @e, as its client sends it, with
 * tags, IP options or extension headers of its own. */
static void answer_cookie(uint64_t *s, const struct ring_entry *e, struct pkt *p)
{
	struct pkt_spec spec = { 0 };
	char client[INET6_ADDRSTRLEN], server[INET6_ADDRSTRLEN];
	int family = e->v6 ? AF_INET6 : AF_INET;

	inet_ntop(family, e->client, client, sizeof(client));
	inet_ntop(family, e->server, server, sizeof(server));
	spec.l3 = e->v6 ? ETH_P_IPV6 : ETH_P_IP;
	spec.saddr = client;
	spec.daddr = server;
	spec.sport = e->cport;
	spec.dport = PORT_A;
	spec.flags = TCP_ACK | (rnd(s, 4) ? 0 : rnd(s, 2) ? TCP_PSH : TCP_FIN);
	spec.vlans = rnd(s, 4) ? 0 : 1 + (int)rnd(s, MAX_VLAN_TAGS);
	spec.vid0 = rnd(s, 2);
	if (!e->v6 && rnd(s, 4) == 0)
		spec.ip_opt_len = 4 * rnd(s, 11);
	if (e->v6 && rnd(s, 4) == 0) {
		unsigned int room = PKT_MAX - 500;

		spec.nr_ext = 1;
		spec.ext[0] = ext_types[rnd(s, 3)];
		spec.ext_len[0] = random_ext_len(s, spec.ext[0], &room);
	}
	spec.payload_len = rnd(s, 2) ? 0 : rnd(s, 48);
	pkt_build(p, &spec);
	put_be32(p->data + p->l4_off + 4, e->seq);
	put_be32(p->data + p->l4_off + 8, e->ack_seq);
	fix_tcp_csum(p, 20 + spec.payload_len);
}

/* Break what the parser looks at: bits, lengths, flags, offsets, MACs,
 * the frame's end. Returns how many mutations were made. */
static int mutate(uint64_t *s, struct pkt *p)
{
	int n = rnd(s, 10) < 4 ? 0 : 1 + (int)rnd(s, 4), i;

	for (i = 0; i < n; i++) {
		size_t hdr = p->l4_off + 20 < p->len ? p->l4_off + 20 : p->len;

		switch (rnd(s, 10)) {
		case 0: /* a bit in the headers */
			p->data[rnd(s, (unsigned int)hdr)] ^= (__u8)(1 << rnd(s, 8));
			break;
		case 1: /* a byte in the headers */
			p->data[rnd(s, (unsigned int)hdr)] = (__u8)rnd(s, 256);
			break;
		case 2: /* the TCP flags */
			if (p->l4_off + 14 <= p->len)
				p->data[p->l4_off + 13] = (__u8)rnd(s, 256);
			break;
		case 3: /* the IP length field, near its value */
			if (p->l3_proto == ETH_P_IP && p->l3_off + 4 <= p->len) {
				unsigned int v = be16(p->data + p->l3_off + 2) + rnd(s, 33) - 16;

				p->data[p->l3_off + 2] = (__u8)(v >> 8);
				p->data[p->l3_off + 3] = (__u8)v;
			} else if (p->l3_proto == ETH_P_IPV6 && p->l3_off + 6 <= p->len) {
				unsigned int v = be16(p->data + p->l3_off + 4) + rnd(s, 33) - 16;

				p->data[p->l3_off + 4] = (__u8)(v >> 8);
				p->data[p->l3_off + 5] = (__u8)v;
			}
			break;
		case 4: /* the IPv4 fragment field */
			if (p->l3_proto == ETH_P_IP && p->l3_off + 8 <= p->len) {
				p->data[p->l3_off + 6] = (__u8)rnd(s, 256);
				p->data[p->l3_off + 7] = (__u8)rnd(s, 4);
			}
			break;
		case 5: /* the destination MAC */
			p->data[rnd(s, ETH_ALEN)] ^= (__u8)(1 << rnd(s, 8));
			break;
		case 6: /* the source MAC: a group bit */
			p->data[ETH_ALEN] |= 1;
			break;
		case 7: /* cut the frame */
			p->len = ETH_HLEN + rnd(s, (unsigned int)(p->len - ETH_HLEN + 1));
			break;
		case 8: /* trailing bytes past the datagram */
			while (p->len < PKT_MAX && rnd(s, 8))
				p->data[p->len++] = (__u8)rnd(s, 256);
			break;
		case 9: /* a byte in the TCP options, if any */
			if (p->l4_proto == IPPROTO_TCP && p->l4_off + 21 <= p->len) {
				size_t end = p->l4_off + (p->data[p->l4_off + 12] >> 4) * 4u;

				if (end > p->len)
					end = p->len;
				if (end > p->l4_off + 20)
					p->data[p->l4_off + 20 +
						rnd(s, (unsigned int)(end - p->l4_off - 20))] =
						(__u8)rnd(s, 256);
			}
			break;
		}
	}
	return n;
}

/* What a cookie may survive: the MACs and bytes past the datagram, which
 * the cookie does not cover. */
static int mutate_outside_cookie(uint64_t *s, struct pkt *p)
{
	switch (rnd(s, 6)) {
	case 0:
		p->data[rnd(s, ETH_ALEN)] ^= (__u8)(1 << rnd(s, 8));
		return 1;
	case 1:
		p->data[ETH_ALEN] |= 1;
		return 1;
	case 2:
		while (p->len < PKT_MAX && rnd(s, 8))
			p->data[p->len++] = (__u8)rnd(s, 256);
		return 1;
	}
	return 0;
}

/* ---- checking ----------------------------------------------------------- */

struct tally {
	uint64_t frames, mutated, judged, refused, passed, admitted, shed,
		 rst, rst_limited, rst_refused, frag_judged, violations;
	uint64_t tunnels, tun_judged, tun_refused; /* tunnels that end here */
	uint64_t tun_acks, tun_no_device; /* inner ACKs judged; no device takes it */
	/* Judged behind more than 512 bytes of IP headers (a chain past 472
	 * bytes), and of those answered with a cookie or opened as tunnels. */
	uint64_t long_judged, long_cookies, long_tunnels;
	/* Verified admission. */
	uint64_t phases, cookies, cookies_v6, cookies_vlan, cookies_ts, cookies_ws,
		 cookies_ecn, cookies_shedding, cookie_limited, refreshed,
		 acks, acks_unverified, acks_no_listener, acks_established,
		 ack_invalid, ack_valid, ack_admitted, ack_refused, ack_rst,
		 answered, /* cookie ACKs fed back */
		 syn_no_listener, syn_tuple_busy, ack_to_kernel;
};

/* The names of the counters, in the order of struct shedd_stats. */
static const char *const class_counter[] = {
	"syn", "admitted", "dropped", "rst_sent", "charged", "cookie_sent",
	"cookie_limited", "ack_valid", "ack_invalid", "ack_admitted", "ack_refused",
};
static const char *const global_counter[] = {
	"packets", "non_syn", "unprotected", "non_ip", "non_tcp", "fragment",
	"malformed", "frag_judged", "frag_refused", "deep_refused", "bad_syn",
	"rst_refused", "rst_limited", "cookie_failed", "ack_probed", "refreshed",
	"ack_queue_full", "ack_after_rst", "ack_repeat", "syn_tuple_busy",
	"syn_no_listener", "syn_not_local", "ack_to_kernel",
	"syn_martian", "syn_bad_csum", "src_failed", "src_unchecked",
};
_Static_assert(sizeof(class_counter) / sizeof(char *) * 8 ==
	       sizeof(struct shedd_class_stats), "a class counter without a name");
_Static_assert(offsetof(struct shedd_stats, packets) + sizeof(global_counter) /
	       sizeof(char *) * 8 == sizeof(struct shedd_stats),
	       "a counter without a name");

#define NR_COUNTERS (sizeof(struct shedd_stats) / 8)
/* After the stats counters, those of the tun_stats map. */
#define NR_TUN (sizeof(struct shedd_tun_stats) / 8)
#define TW(f) (NR_COUNTERS + offsetof(struct shedd_tun_stats, f) / 8)
static const char *const tun_counter[] = { "decap", "judged", "refused" };
_Static_assert(sizeof(tun_counter) / sizeof(char *) == NR_TUN, "a tunnel counter without a name");
/* And tun_checks.no_device. */
#define TW_NODEV (NR_COUNTERS + NR_TUN)
#define NR_WORDS (TW_NODEV + 1)
struct tun_counts {
	struct shedd_tun_stats s;
	__u64 no_device;
};

static void counter_name(size_t w, char *buf, size_t size)
{
	size_t per = ARRAY_SIZE(class_counter);

	if (w == TW_NODEV)
		snprintf(buf, size, "tun_checks.no_device");
	else if (w >= NR_COUNTERS)
		snprintf(buf, size, "tun_stats.%s", tun_counter[w - NR_COUNTERS]);
	else if (w < SHEDD_NR_CLASSES * per)
		snprintf(buf, size, "cls[%zu].%s", w / per, class_counter[w % per]);
	else
		snprintf(buf, size, "%s", global_counter[w - SHEDD_NR_CLASSES * per]);
}

static void stats_delta(const struct shedd_stats *before, const struct shedd_stats *after,
			__u64 *d)
{
	__u64 a[NR_COUNTERS], b[NR_COUNTERS];
	size_t w;

	memcpy(a, after, sizeof(a));
	memcpy(b, before, sizeof(b));
	for (w = 0; w < NR_COUNTERS; w++)
		d[w] = a[w] - b[w];
}

#define W(f) (offsetof(struct shedd_stats, f) / 8)

/* The counters that say why a packet passed; one of them moves for it. */
static const size_t pass_counters[] = {
	W(non_syn), W(unprotected), W(non_ip), W(non_tcp), W(fragment), W(malformed),
	W(bad_syn),
};

/* What the program must send. */
enum expect_out {
	OUT_PASS,    /* XDP_PASS, the frame untouched */
	OUT_DROP,    /* XDP_DROP, untouched */
	OUT_RST_SYN, /* XDP_TX, RST+ACK of the SYN */
	OUT_RST_ACK, /* XDP_TX, bare RST of the ACK */
	OUT_SYNACK,  /* XDP_TX, the cookie SYN-ACK */
};

/* What the model knows of one frame beyond its bytes. */
enum ack_cookie {
	COOKIE_FORGED, /* a random acknowledgement number */
	COOKIE_VALID,  /* the program's own cookie, answered */
};

struct frame_ctx {
	const struct pkt *p;
	struct tun_counts tun_before, tun_after;
	const struct ref *r;
	enum ack_cookie cookie;
	__u64 now;
	__u32 verdict;
	const __u8 *out;
	size_t out_len;
};

static char why[512];

static const char *explain(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return why;
}

/* Ethernet and IP of a reply: MACs swapped, tags and ethertype kept,
 * addresses swapped, a fresh IP header of @tcp_len TCP bytes with correct
 * checksums; and the TCP header's ports swapped. */
static const char *check_reply_headers(const struct frame_ctx *fc, size_t tcp_len)
{
	const struct ref *r = fc->r;
	const __u8 *in = fc->p->data, *out = fc->out;
	size_t l3 = r->v6 ? 40 : 20, alen = r->v6 ? 16 : 4;
	const __u8 *ip = out + r->l2, *th = ip + l3;

	if (fc->out_len != r->l2 + l3 + tcp_len)
		return explain("reply of %zu bytes, expected %zu (headers + %zu TCP bytes)",
			    fc->out_len, r->l2 + l3 + tcp_len, tcp_len);
	if (memcmp(out, in + ETH_ALEN, ETH_ALEN) || memcmp(out + ETH_ALEN, in, ETH_ALEN))
		return "reply: MAC addresses not swapped";
	if (memcmp(out + 12, in + 12, r->l2 - 12))
		return "reply: VLAN tags or ethertype not copied";
	if (r->v6) {
		if (ip[0] >> 4 != 6 || be16(ip + 4) != tcp_len || ip[6] != IPPROTO_TCP ||
		    ip[7] != 64)
			return explain("reply: IPv6 header version %u payload_len %u next %u hop %u",
				    ip[0] >> 4, be16(ip + 4), ip[6], ip[7]);
		if (memcmp(ip + 8, r->daddr, 16) || memcmp(ip + 24, r->saddr, 16))
			return "reply: IPv6 addresses not swapped";
	} else {
		if (ip[0] != 0x45 || be16(ip + 2) != 20 + tcp_len || be16(ip + 6) != 0x4000 ||
		    ip[8] != 64 || ip[9] != IPPROTO_TCP)
			return explain("reply: IPv4 header %02x tot_len %u frag_off %04x ttl %u proto %u",
				    ip[0], be16(ip + 2), be16(ip + 6), ip[8], ip[9]);
		if (pkt_ipv4_csum(ip, 20) != be16(ip + 10))
			return explain("reply: IPv4 checksum %04x, expected %04x", be16(ip + 10),
				    pkt_ipv4_csum(ip, 20));
		if (memcmp(ip + 12, r->daddr, 4) || memcmp(ip + 16, r->saddr, 4))
			return "reply: IPv4 addresses not swapped";
	}
	if (be16(th) != r->dport || be16(th + 2) != r->sport)
		return "reply: TCP ports not swapped";
	if ((th[12] >> 4) * 4u != tcp_len || (th[12] & 15))
		return explain("reply: data offset byte %02x for %zu TCP bytes", th[12], tcp_len);
	if (pkt_l4_csum(r->v6, ip + (r->v6 ? 8 : 12), ip + (r->v6 ? 8 : 12) + alen, IPPROTO_TCP,
			th, tcp_len, 16) != be16(th + 16))
		return explain("reply: TCP checksum %04x, expected %04x", be16(th + 16),
			    pkt_l4_csum(r->v6, ip + (r->v6 ? 8 : 12), ip + (r->v6 ? 8 : 12) + alen,
					IPPROTO_TCP, th, tcp_len, 16));
	return NULL;
}

static const char *check_rst(const struct frame_ctx *fc, int for_ack)
{
	const struct ref *r = fc->r;
	const __u8 *th = fc->out + r->l2 + (r->v6 ? 40 : 20);
	const char *bad = check_reply_headers(fc, 20);
	size_t doff;

	if (bad)
		return bad;
	if (for_ack) {
		/* RFC 793: <SEQ=SEG.ACK><CTL=RST> */
		if (th[13] != TCP_RST || be32(th + 4) != r->ack_seq || be32(th + 8))
			return explain("the RST of an ACK: flags %02x seq %08x ack %08x, expected"
				    " RST seq %08x", th[13], be32(th + 4), be32(th + 8), r->ack_seq);
		return NULL;
	}
	/* <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>; the SYN counts one. */
	doff = (fc->p->data[r->tcp_off + 12] >> 4) * 4u;
	if (th[13] != (TCP_RST | TCP_ACK) || be32(th + 4) ||
	    be32(th + 8) != (__u32)(r->seq + 1 + (r->l4_len - doff)))
		return explain("the RST of a SYN: flags %02x seq %08x ack %08x, expected RST+ACK"
			    " ack %08x", th[13], be32(th + 4), be32(th + 8),
			    (__u32)(r->seq + 1 + (r->l4_len - doff)));
	return NULL;
}

/* The cookie SYN-ACK, byte by byte, against the SYN's options read by
 * ref_options() and the settings. */
static const char *check_synack(const struct frame_ctx *fc, const struct shedd_config *cfg,
				struct tally *t)
{
	const struct ref *r = fc->r;
	const struct ref_opts *o = &r->opts;
	const __u8 *in_th = fc->p->data + r->tcp_off;
	/* What the namespace's sysctls leave of the client's options. */
	int ts = o->ts && !(cfg->syn_opts_off & SHEDD_SYNOPT_NO_TS);
	int sack = ts && o->sack && !(cfg->syn_opts_off & SHEDD_SYNOPT_NO_SACK);
	int ws = ts && o->ws && !(cfg->syn_opts_off & SHEDD_SYNOPT_NO_WS);
	int ecn = ts && cfg->ecn && (in_th[13] & TCP_ECE) && (in_th[13] & TCP_CWR);
	size_t tcp_len = ts ? (ws ? 40 : 36) : 24;
	const __u8 *th = fc->out + r->l2 + (r->v6 ? 40 : 20), *opt = th + 20;
	unsigned int idx, mss = ref_cookie_mss(r->v6, o->mss, &idx), seg, window;
	const char *bad = check_reply_headers(fc, tcp_len);

	if (bad)
		return bad;
	if (!ref_answerable(fc->p->data, r))
		return "a SYN-ACK answered a SYN the kernel would not answer";
	if (th[13] != (TCP_SYN | TCP_ACK | (ecn ? TCP_ECE : 0)))
		return explain("SYN-ACK flags %02x, expected %02x", th[13],
			    TCP_SYN | TCP_ACK | (ecn ? TCP_ECE : 0));
	if (be32(th + 8) != r->seq + 1)
		return explain("SYN-ACK ack_seq %08x, expected the SYN's seq + 1 = %08x",
			    be32(th + 8), r->seq + 1);
	if (be16(th + 18))
		return "SYN-ACK with an urgent pointer";
	/* The settings here know no MTU: the MSS offered is the cookie's. */
	seg = mss - (ts ? 12 : 0);
	window = 65536 - 65536 % seg;
	if (window > 65535)
		window = 65535;
	if (be16(th + 14) != window)
		return explain("SYN-ACK window %u, expected %u", be16(th + 14), window);
	if (opt[0] != 2 || opt[1] != 4 || be16(opt + 2) != mss)
		return explain("SYN-ACK MSS option %02x %02x %u, expected MSS %u (client's %u)",
			    opt[0], opt[1], be16(opt + 2), mss, o->mss);
	/* Below the table's smallest entry the cookie keeps that entry, as
	 * the kernel's own cookies do. */
	if (o->mss >= (unsigned int)(r->v6 ? SHEDD_MSS6(0) : SHEDD_MSS4(0)) && mss > o->mss)
		return explain("SYN-ACK MSS %u above the client's %u", mss, o->mss);
	if (ts) {
		unsigned int bits = cfg->handoff == SHEDD_HANDOFF_TC ? SHEDD_TS_TC_BITS :
				    SHEDD_TS_KERNEL_BITS;
		__u32 mask = (1U << bits) - 1, tsval = be32(opt + 8), want;
		__u32 now_ms = (__u32)(fc->now / 1000000);

		if (sack ? opt[4] != 4 || opt[5] != 2 : opt[4] != 1 || opt[5] != 1)
			return explain("SYN-ACK: %02x %02x before the timestamp, SACK %soffered",
				    opt[4], opt[5], sack ? "" : "not ");
		if (opt[6] != 8 || opt[7] != 10)
			return "SYN-ACK: no timestamp option where the SYN had one";
		if (be32(opt + 12) != o->tsval)
			return explain("SYN-ACK echoes %08x, the SYN's tsval is %08x",
				    be32(opt + 12), o->tsval);
		want = (ws ? o->wscale : SHEDD_TS_WSCALE_MASK) |
		       (sack ? SHEDD_TS_SACK : 0) | (ecn ? SHEDD_TS_ECN : 0);
		if (cfg->handoff == SHEDD_HANDOFF_TC)
			want |= idx << SHEDD_TS_MSS_SHIFT;
		if ((tsval & mask) != want)
			return explain("SYN-ACK tsval %08x: low %u bits %02x, expected %02x",
				    tsval, bits, tsval & mask, want);
		/* The tc hand-off's: shedd's tag of the cookie above the
		 * options; the kernel's: the clock. */
		if (cfg->handoff == SHEDD_HANDOFF_TC) {
			__u32 tag = shedd_ts_tag(ref_flow_hash(r), be32(th + 4));

			if ((tsval & SHEDD_TS_TAG_MASK) != tag)
				return explain("SYN-ACK tsval %08x: tag %08x, expected %08x", tsval,
					    tsval & SHEDD_TS_TAG_MASK, tag);
		} else if ((__s32)(now_ms - tsval) < 0 || now_ms - tsval > mask) {
			return explain("SYN-ACK tsval %08x not within %u ms before the clock %08x",
				    tsval, mask, now_ms);
		}
		if (ws && (opt[16] != 1 || opt[17] != 3 || opt[18] != 3 ||
			      opt[19] != (cfg->wscale > 14 ? 14 : cfg->wscale)))
			return explain("SYN-ACK window scale option %02x %02x %02x %02x, expected"
				    " NOP WS %u", opt[16], opt[17], opt[18], opt[19],
				    cfg->wscale > 14 ? 14 : cfg->wscale);
	}
	t->cookies++;
	t->cookies_v6 += r->v6;
	t->cookies_vlan += r->l2 > 14;
	t->cookies_ts += ts;
	t->cookies_ws += ws;
	t->cookies_ecn += ecn;
	return NULL;
}

/* A shed SYN, or an ACK refused: a RST if it may be answered within the
 * budget (a fragment is never answered), else a drop, counted. */
static enum expect_out expect_refusal(const struct frame_ctx *fc, struct ref_state *m,
				      __u64 *e, int for_ack, struct tally *t)
{
	const struct ref *r = fc->r;

	if (r->first_frag)
		return OUT_DROP;
	if (!ref_answerable(fc->p->data, r)) {
		e[W(rst_refused)] = 1;
		t->rst_refused++;
		return OUT_DROP;
	}
	if (!ref_budget_take(&m->rsts, m->cfg.rst_rate_per_sec, m->cfg.rst_burst, fc->now)) {
		e[W(rst_limited)] = 1;
		t->rst_limited++;
		return OUT_DROP;
	}
	t->rst++;
	return for_ack ? OUT_RST_ACK : OUT_RST_SYN;
}

#define C(c, f) (W(cls[0].f) + (size_t)(c) * (sizeof(struct shedd_class_stats) / 8))

/* A judged SYN: charged and admitted, shed, or answered with a cookie. */
static const char *expect_syn(const struct frame_ctx *fc, struct ref_state *m,
			      const __u64 *d, __u64 *e, enum expect_out *out,
			      struct tally *t)
{
	const struct ref *r = fc->r;
	__u32 c = r->cls, mode = m->cfg.verify[c];
	int cookie = 0, charged = 0, port = r->dport == PORT_B;

	/* Inside a tunnel: the same checks, charged in a class space of its
	 * own (not modelled: the counters say if it had a token), never
	 * answered; a charged SYN of a verifying class noted all the same. */
	if (r->tunnel)
		e[TW(decap)] = 1;
	/* What the kernel drops costs no token and gets no answer, once it
	 * opened the tunnel too. */
	if (ref_kernel_drops(r)) {
		e[W(syn_martian)] = 1;
		*out = OUT_DROP;
		return NULL;
	}
	if (ref_csum_bad(fc->p, r)) {
		/* A class that sheds by a plain drop, on a CPU backed off
		 * from an empty reserve, drops it unchecked, counted as shed
		 * (shed_by_drop()). The bucket is not modelled: the counter
		 * says if it was backed off. Never inside a tunnel. */
		if (!r->tunnel && mode == SHEDD_VERIFY_OFF &&
		    m->cfg.reject[c] == SHEDD_REJECT_DROP &&
		    !(m->cfg.source_check != SHEDD_SRC_OFF && c < m->cfg.default_class) &&
		    d[C(c, dropped)] && !d[W(syn_bad_csum)]) {
			e[C(c, syn)] = 1;
			e[C(c, charged)] = 1;
			e[C(c, dropped)] = 1;
			e[W(frag_judged)] = r->first_frag;
			t->judged++;
			t->frag_judged += r->first_frag;
			t->shed++;
			*out = OUT_DROP;
			return NULL;
		}
		e[W(syn_bad_csum)] = 1;
		*out = OUT_DROP;
		return NULL;
	}
	/* The source check: a class above the default one is routed back
	 * or not by the kernel's FIB, which answers only where the device
	 * forwards; the fuzzer's namespace forwards nowhere, so the check
	 * runs and finds nothing (src_unchecked), and the class is kept,
	 * under strict and verify alike, direct or tunnelled. */
	if (m->cfg.source_check != SHEDD_SRC_OFF && c < m->cfg.default_class)
		e[W(src_unchecked)] = 1;
	e[C(c, syn)] = 1;
	e[W(frag_judged)] = r->first_frag;
	e[TW(judged)] = r->tunnel;
	t->judged++;
	t->frag_judged += r->first_frag;
	if (!r->tunnel && (mode == SHEDD_VERIFY_ALWAYS ||
			   (mode == SHEDD_VERIFY_SHEDDING && fc->now < m->verify_until[c]))) {
		cookie = 1;
	} else {
		e[C(c, charged)] = 1;
		charged = 1;
		/* The bucket is not modelled: the counter says if it had a token. */
		if (d[C(c, admitted)]) {
			e[C(c, admitted)] = 1;
			t->admitted++;
			*out = OUT_PASS;
			/* Its ACK passes uncharged (shedd_syn_charged()). */
			if (mode != SHEDD_VERIFY_OFF)
				ref_proven_put(r, fc->now, FLOW_SYN_CHARGED, r->seq + 1, 0);
			return NULL;
		}
		if (!r->tunnel && mode == SHEDD_VERIFY_SHEDDING) {
			m->verify_until[c] = fc->now + m->cfg.verify_hold_ns;
			cookie = 1;
		}
	}
	/* The kernel answers no SYN from or to a group or martian address,
	 * nor one not sent to this host's MAC: a SYN-ACK there would be
	 * reflected to many hosts or to nobody. Such a SYN is shed. */
	if (cookie && !r->first_frag && !ref_answerable(fc->p->data, r) &&
	    d[C(c, cookie_sent)])
		return "a cookie SYN-ACK answered a SYN the kernel would not answer";
	if (cookie && !r->first_frag && ref_answerable(fc->p->data, r)) {
		/* The program's lookup ends in one of these for every
		 * chain the parser accepts; one that could not read the
		 * headers would be judged as SOCK_ESTABLISHED is, never
		 * passed as SOCK_NONE (frames here always hold them). */
		enum ref_sock sock = ref_lookup(r);

		if (sock != SOCK_LISTENER) {
			/* The kernel's: judged as unverified. A 4-tuple a
			 * socket holds, or no listener found (the
			 * fuzzer's is bound to the server's address, the
			 * namespace forwards nothing): a closed port, or
			 * one a NAT redirect would give to a listener
			 * after XDP; charged, never passed uncharged. */
			if (sock == SOCK_ESTABLISHED) {
				e[W(syn_tuple_busy)] = 1;
				t->syn_tuple_busy++;
			} else {
				e[W(syn_no_listener)] = 1;
				t->syn_no_listener++;
			}
			if (!charged) {
				e[C(c, charged)] = 1;
				if (d[C(c, admitted)]) {
					e[C(c, admitted)] = 1;
					t->admitted++;
					*out = OUT_PASS;
					return NULL;
				}
			}
		} else if (ref_budget_take(&m->cookies, m->cfg.cookie_rate_per_sec,
					   m->cfg.cookie_burst, fc->now)) {
			/* The kernel hand-off's listener stamp: once a
			 * second per port. */
			if (m->cfg.handoff == SHEDD_HANDOFF_KERNEL &&
			    (!m->refreshed_ns[port] ||
			     fc->now - m->refreshed_ns[port] >= REFRESH_NS)) {
				m->refreshed_ns[port] = fc->now;
				e[W(refreshed)] = 1;
				t->refreshed++;
			}
			m->cookie_sent[port] = ref_cookie_units(fc->now);
			e[C(c, cookie_sent)] = 1;
			t->cookies_shedding += mode == SHEDD_VERIFY_SHEDDING;
			t->shed++;
			*out = OUT_SYNACK;
			return NULL;
		} else {
			e[C(c, cookie_limited)] = 1;
			t->cookie_limited++;
		}
	}
	t->shed++;
	*out = m->cfg.reject[c] == SHEDD_REJECT_RST && !r->tunnel ?
	       expect_refusal(fc, m, e, 0, t) : OUT_DROP;
	e[*out == OUT_RST_SYN ? C(c, rst_sent) : C(c, dropped)] = 1;
	return NULL;
}

static const char *expect_ack_judged(const struct frame_ctx *fc, struct ref_state *m,
				     const __u64 *d, __u64 *e, enum expect_out *out,
				     struct tally *t);

/* An ACK to a protected port: looked up in a verifying class; at the
 * listener its cookie decides. A FIN is judged, then ends the flow. */
static const char *expect_ack(const struct frame_ctx *fc, struct ref_state *m,
			      const __u64 *d, __u64 *e, enum expect_out *out,
			      struct tally *t)
{
	const char *bad;

	t->acks++;
	*out = OUT_PASS;
	e[TW(decap)] = fc->r->tunnel;
	/* A class that does not verify still probes its ACKs where a SYN
	 * that failed the source check may have been answered with a cookie
	 * (--source-check verify, above the default class; not inside a
	 * tunnel, where nothing is answered). */
	if (m->cfg.verify[fc->r->cls] == SHEDD_VERIFY_OFF &&
	    (fc->r->tunnel || m->cfg.source_check != SHEDD_SRC_VERIFY ||
	     fc->r->cls >= m->cfg.default_class)) {
		e[W(non_syn)] = 1;
		t->acks_unverified++;
		return NULL;
	}
	bad = expect_ack_judged(fc, m, d, e, out, t);
	if (fc->r->fin)
		ref_proven_end(fc->r);
	return bad;
}

static const char *expect_ack_judged(const struct frame_ctx *fc, struct ref_state *m,
				     const __u64 *d, __u64 *e, enum expect_out *out,
				     struct tally *t)
{
	const struct ref *r = fc->r;
	__u32 c = r->cls;

	(void)m;
	e[W(ack_probed)] = 1;
	switch (ref_lookup(r)) {
	case SOCK_NONE:
		e[W(non_syn)] = 1;
		t->acks_no_listener++;
		return NULL;
	case SOCK_ESTABLISHED:
		e[W(non_syn)] = 1;
		t->acks_established++;
		return NULL;
	case SOCK_LISTENER:
		break;
	}
	e[W(frag_judged)] = r->first_frag;
	/* A random acknowledgement number is a valid cookie with a chance
	 * of about 1e-9 (a 24-bit check and two minutes of 256). */
	/* No cookie of the port can be outstanding (none sent within a
	 * cookie's life): the kernel's to reset, within the RST budget. */
	if (fc->cookie == COOKIE_FORGED &&
	    (!m->cookie_sent[r->dport == PORT_B] ||
	     ref_cookie_units(fc->now) - m->cookie_sent[r->dport == PORT_B] >
		     COOKIE_LIFE_UNITS + 1)) {
		if (ref_budget_take(&m->rsts, m->cfg.rst_rate_per_sec, m->cfg.rst_burst,
				    fc->now)) {
			e[W(ack_to_kernel)] = 1;
			t->ack_to_kernel++;
			return NULL;
		}
		e[W(rst_limited)] = 1;
	}
	if (d[C(c, ack_invalid)]) {
		if (fc->cookie == COOKIE_VALID)
			return "the program's own cookie was taken for a forged one";
		e[C(c, ack_invalid)] = 1;
		t->ack_invalid++;
		*out = OUT_DROP;
		return NULL;
	}
	if (fc->cookie == COOKIE_FORGED)
		return "a forged cookie was not counted ack_invalid";
	/* A segment of a flow just judged follows that verdict, uncharged:
	 * dropped after a RST, passed after an admission; the ACK of a SYN
	 * charged passes. */
	switch (ref_proven_get(r, fc->now, r->seq, r->ack_seq)) {
	case FLOW_REFUSED:
		e[W(ack_after_rst)] = 1;
		*out = OUT_DROP;
		return NULL;
	case FLOW_ADMITTED:
		e[W(ack_repeat)] = 1;
		return NULL;
	case FLOW_SYN_CHARGED:
		e[C(c, ack_valid)] = 1;
		e[W(ack_repeat)] = 1;
		ref_proven_put(r, fc->now, FLOW_ADMITTED, r->seq, r->ack_seq);
		return NULL;
	}
	e[C(c, ack_valid)] = 1;
	e[C(c, charged)] = 1;
	t->ack_valid++;
	if (d[C(c, ack_admitted)]) {
		e[C(c, ack_admitted)] = 1;
		t->ack_admitted++;
		ref_proven_put(r, fc->now, FLOW_ADMITTED, r->seq, r->ack_seq);
		return NULL;
	}
	e[C(c, ack_refused)] = 1;
	t->ack_refused++;
	/* Inside a tunnel a refusal is a drop: a RST would have to go back
	 * through it. */
	if (r->tunnel) {
		*out = OUT_DROP;
		return NULL;
	}
	*out = expect_refusal(fc, m, e, 1, t);
	t->ack_rst += *out == OUT_RST_ACK;
	if (*out == OUT_RST_ACK)
		ref_proven_put(r, fc->now, FLOW_REFUSED, r->seq, r->ack_seq);
	return NULL;
}

/* Every counter the frame moved against the model's; then the verdict and
 * the frame sent. */
static const char *check_frame(const struct frame_ctx *fc, struct ref_state *m,
			       const struct shedd_stats *before,
			       const struct shedd_stats *after, struct tally *t)
{
	const struct ref *r = fc->r;
	int unchanged = fc->out_len == fc->p->len && !memcmp(fc->out, fc->p->data, fc->p->len);
	__u64 d[NR_WORDS], e[NR_WORDS] = { 0 };
	enum expect_out out = OUT_PASS;
	const char *bad = NULL;
	size_t w, i;
	__u64 n;

	stats_delta(before, after, d);
	d[TW(decap)] = fc->tun_after.s.decap - fc->tun_before.s.decap;
	d[TW(judged)] = fc->tun_after.s.judged - fc->tun_before.s.judged;
	d[TW(refused)] = fc->tun_after.s.refused - fc->tun_before.s.refused;
	d[TW_NODEV] = fc->tun_after.no_device - fc->tun_before.no_device;
	e[TW_NODEV] = r->no_device;
	e[W(packets)] = 1;
	switch (r->kind) {
	case REF_PASS:
		if (r->rst_end)
			ref_proven_end(r);
		/* Passed for one reason, whichever the parser saw first. */
		for (i = 0, n = 0; i < ARRAY_SIZE(pass_counters); i++)
			n += d[pass_counters[i]];
		if (n != 1)
			return "a frame that is not a deliverable SYN or ACK moved no pass"
			       " counter, or several";
		for (i = 0; i < ARRAY_SIZE(pass_counters); i++)
			e[pass_counters[i]] = d[pass_counters[i]];
		e[TW(decap)] = r->tunnel;
		t->passed++;
		break;
	case REF_REFUSE:
		if (r->tun_refused) {
			e[TW(refused)] = 1;
			e[TW(decap)] = r->tunnel;
			t->refused++;
			t->tun_refused++;
			out = OUT_DROP;
			break;
		}
		if (d[W(frag_refused)] + d[W(deep_refused)] != 1)
			return "a refusal was not counted once";
		e[W(frag_refused)] = d[W(frag_refused)];
		e[W(deep_refused)] = d[W(deep_refused)];
		t->refused++;
		out = OUT_DROP;
		break;
	case REF_JUDGE:
		bad = expect_syn(fc, m, d, e, &out, t);
		break;
	case REF_ACK:
		bad = expect_ack(fc, m, d, e, &out, t);
		break;
	}
	if (bad)
		return bad;
	for (w = 0; w < NR_WORDS; w++) {
		if (d[w] != e[w]) {
			char name[40];

			counter_name(w, name, sizeof(name));
			return explain("counter %s moved by %llu, expected %llu", name,
				    (unsigned long long)d[w], (unsigned long long)e[w]);
		}
	}

	switch (out) {
	case OUT_PASS:
		if (fc->verdict != XDP_PASS || !unchanged)
			return explain("expected XDP_PASS untouched, got verdict %u (%s)",
				    fc->verdict, unchanged ? "untouched" : "changed");
		return NULL;
	case OUT_DROP:
		if (fc->verdict != XDP_DROP || !unchanged)
			return explain("expected XDP_DROP untouched, got verdict %u (%s)",
				    fc->verdict, unchanged ? "untouched" : "changed");
		return NULL;
	default:
		break;
	}
	if (fc->verdict != XDP_TX)
		return explain("expected XDP_TX of a %s, got verdict %u",
			    out == OUT_SYNACK ? "SYN-ACK" : "RST", fc->verdict);
	if (out == OUT_SYNACK)
		return check_synack(fc, &m->cfg, t);
	return check_rst(fc, out == OUT_RST_ACK);
}

static void hexdump(const char *what, const __u8 *b, size_t len)
{
	size_t i;

	fprintf(stderr, "  %s (%zu bytes):", what, len);
	for (i = 0; i < len; i++)
		fprintf(stderr, "%s%02x", i % 32 ? " " : "\n   ", b[i]);
	fprintf(stderr, "\n");
}

static void report(const struct tally *t, uint64_t seed, uint64_t idx,
		   const struct frame_ctx *fc, const char *fmt, ...)
{
	static const char *const kinds[] = { "pass", "refuse", "judge", "ack" };
	char cfgs[160];
	va_list ap;

	if (t->violations > MAX_REPORTS)
		return;
	fprintf(stderr, "VIOLATION seed=0x%" PRIx64 " frame=%" PRIu64 ": ", seed, idx);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	snprintf(cfgs, sizeof(cfgs), "reference %s, class %u, verdict %u",
		 kinds[fc->r->kind], fc->r->cls, fc->verdict);
	fprintf(stderr, " (%s)\n", cfgs);
	hexdump("frame", fc->p->data, fc->p->len);
	if (fc->verdict == XDP_TX)
		hexdump("sent", fc->out, fc->out_len);
}

/* ---- running ------------------------------------------------------------ */

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);
	char *end;
	unsigned long long x;

	if (!v || !*v)
		return def;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "fuzz_xdp: %s='%s' is not a whole number\n", name, v);
		exit(2);
	}
	return x;
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Fresh class buckets and reserves: each phase starts unshed. */
/* The tun_stats map and tun_checks.no_device, summed over the CPUs. */
static void read_tun(struct tun_counts *sum)
{
	struct shedd_tun_stats *vals = calloc((size_t)nr_cpus, sizeof(*vals));
	struct shedd_tun_checks *chk = calloc((size_t)nr_cpus, sizeof(*chk));
	__u32 zero = 0;
	int i;

	assert_non_null(vals);
	assert_non_null(chk);
	if (bpf_map__lookup_elem(skel->maps.tun_stats, &zero, sizeof(zero), vals,
				 (size_t)nr_cpus * sizeof(*vals), 0))
		fail_msg("read tun_stats: %s", strerror(errno));
	if (bpf_map__lookup_elem(skel->maps.tun_checks, &zero, sizeof(zero), chk,
				 (size_t)nr_cpus * sizeof(*chk), 0))
		fail_msg("read tun_checks: %s", strerror(errno));
	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < nr_cpus; i++) {
		sum->s.decap += vals[i].decap;
		sum->s.judged += vals[i].judged;
		sum->s.refused += vals[i].refused;
		sum->no_device += chk[i].no_device;
	}
	free(vals);
	free(chk);
}

static void reset_buckets(struct ref_state *m)
{
	const struct shedd_bucket fresh = { 0 };
	const struct shedd_reserve empty = { 0 };
	__u32 c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		if (bpf_map__update_elem(skel->maps.reserve, &c, sizeof(c), &empty,
					 sizeof(empty), BPF_ANY) ||
		    update_percpu(skel->maps.buckets, c, &fresh, sizeof(fresh)))
			fail_msg("reset class %u: %s", c, strerror(errno));
		m->verify_until[c] = 0;
	}
}

/* The settings of phase @k: the first verifies nothing; the others draw
 * verify modes, hand-off, ECN, window scale, the SYN-ACK options the
 * sysctls turn off and a cookie budget small
 * enough to run out at the fuzzer's SYN rate (about 200 a second). */
static void next_phase(uint64_t *s, uint64_t k, struct ref_state *m)
{
	static const __u32 rates[] = { 1, 5, 20, 100, 1000 };
	static const __u64 holds[] = { 0, 1000000, 10000000, 100000000, 1000000000 };
	struct shedd_config cfg = fuzz_cfg;
	__u32 zero = 0, c;
	int err;

	if (k) {
		for (c = 0; c < SHEDD_NR_CLASSES; c++)
			cfg.verify[c] = (__u8)rnd(s, 3);
		cfg.handoff = (__u8)rnd(s, 2);
		cfg.ecn = (__u8)rnd(s, 2);
		cfg.wscale = (__u8)rnd(s, 16);
		cfg.cookie_rate_per_sec = rates[rnd(s, ARRAY_SIZE(rates))];
		cfg.cookie_burst = rnd(s, 6);
		cfg.verify_hold_ns = holds[rnd(s, ARRAY_SIZE(holds))];
		cfg.syn_opts_off = (__u8)rnd(s, 8);
		cfg.source_check = (__u8)rnd(s, 3); /* off, strict or verify */
	}
	err = bpf_map__update_elem(skel->maps.settings, &zero, sizeof(zero), &cfg,
				   sizeof(cfg), BPF_ANY);
	if (err)
		fail_msg("settings of phase %" PRIu64 ": %s", k, strerror(-err));
	m->cfg = cfg;
	reset_buckets(m);
}

/* Cookies in one phase: at most its budget, whatever the model says. */
struct phase_count {
	__u64 start_ns, cookies, burst;
};

static int phase_within_budget(const struct phase_count *pc, const struct ref_state *m,
			       __u64 now)
{
	__u64 burst = pc->burst > m->cfg.cookie_burst ? pc->burst : m->cfg.cookie_burst;
	__u64 max = (burst ? burst : 1) +
		    (now - pc->start_ns) * m->cfg.cookie_rate_per_sec / SHEDD_NSEC_PER_SEC + 1;

	if (pc->cookies <= max)
		return 1;
	fprintf(stderr, "VIOLATION: %llu cookie SYN-ACKs in a phase of %.3f s, the budget"
		" (%u/s, %u deep) allows %llu\n", (unsigned long long)pc->cookies,
		(now - pc->start_ns) / 1e9, m->cfg.cookie_rate_per_sec, m->cfg.cookie_burst,
		(unsigned long long)max);
	return 0;
}

static void fuzz_frames(void **state)
{
	uint64_t frames = env_u64("SHEDD_FUZZ_FRAMES", DEFAULT_FRAMES);
	uint64_t seed = env_u64("SHEDD_FUZZ_SEED", DEFAULT_SEED);
	double limit = (double)env_u64("SHEDD_FUZZ_SECONDS", (uint64_t)DEFAULT_SECONDS);
	struct shedd_stats before, after, first, last;
	struct tun_counts tun_last;
	struct ring_entry ring[RING];
	struct ref_state m = { 0 };
	struct phase_count pc = { 0 };
	struct tally t = { 0 };
	uint64_t rng = seed, i;
	__u64 elapsed_ns = 0, max_rst;
	double start = now_sec(), secs;
	int fd = bpf_program__fd(skel->progs.shedd_xdp), c, nring = 0;

	(void)state;
	read_stats(&before);
	read_tun(&tun_last);
	first = before;
	for (i = 0; i < frames && (i % 1024 || now_sec() - start < limit); i++) {
		__u8 out[PKT_MAX];
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_out = out,
			    .data_size_out = sizeof(out), .repeat = 1);
		struct frame_ctx fc = { .cookie = COOKIE_FORGED };
		const char *bad;
		struct ref r;
		struct pkt p;
		__u64 step = rng_next(&rng) % 2000000; /* up to 2 ms */
		unsigned int k;
		int err, synack, long_chain;

		skel->bss->test_clock_ns += step;
		elapsed_ns += step;
		if (i % PHASE_FRAMES == 0) {
			if (i && !phase_within_budget(&pc, &m, skel->bss->test_clock_ns))
				t.violations++;
			next_phase(&rng, i / PHASE_FRAMES, &m);
			pc.start_ns = skel->bss->test_clock_ns;
			pc.burst = m.cfg.cookie_burst;
			pc.cookies = 0;
			t.phases++;
		}
		k = rnd(&rng, 100);
		if (k < 75) {
			if (k < 12)
				random_tunnel_frame(&rng, &p);
			else
				random_frame(&rng, &p);
			t.mutated += mutate(&rng, &p) > 0;
		} else if (k < 88) {
			forged_ack(&rng, &p);
			t.mutated += mutate(&rng, &p) > 0;
		} else if (k < 92) {
			established_ack(&rng, &p);
		} else if (nring && now_sec() - ring[k % nring].sent < RING_MAX_AGE) {
			answer_cookie(&rng, &ring[k % nring], &p);
			t.mutated += mutate_outside_cookie(&rng, &p);
			fc.cookie = COOKIE_VALID;
			t.answered++;
		} else {
			random_frame(&rng, &p);
		}
		ref_model(p.data, p.len, &r);
		t.tunnels += r.tunnel;
		t.tun_judged += r.tunnel && r.kind == REF_JUDGE;
		t.tun_acks += r.tunnel && r.kind == REF_ACK;
		t.tun_no_device += r.no_device;
		long_chain = r.kind == REF_JUDGE && r.tcp_off > r.l2 + 512;
		t.long_judged += long_chain;
		t.long_tunnels += long_chain && r.tunnel;
		opts.data_in = p.data;
		opts.data_size_in = p.len;
		err = bpf_prog_test_run_opts(fd, &opts);
		if (err)
			fail_msg("BPF_PROG_TEST_RUN on frame %" PRIu64 " (%zu bytes): %s",
				 i, p.len, strerror(-err));
		read_stats(&after);
		fc.tun_before = tun_last;
		read_tun(&fc.tun_after);
		tun_last = fc.tun_after;
		fc.p = &p;
		fc.r = &r;
		fc.now = skel->bss->test_clock_ns;
		fc.verdict = opts.retval;
		fc.out = out;
		fc.out_len = opts.data_size_out;
		bad = check_frame(&fc, &m, &before, &after, &t);
		if (bad) {
			t.violations++;
			report(&t, seed, i, &fc, "%s", bad);
		}
		/* Every SYN-ACK sent counts against the phase's budget. */
		synack = fc.verdict == XDP_TX && r.kind == REF_JUDGE &&
			 fc.out_len >= r.l2 + (r.v6 ? 40 : 20) + 20 &&
			 (out[r.l2 + (r.v6 ? 40 : 20) + 13] & TCP_SYN);
		pc.cookies += synack;
		t.long_cookies += synack && long_chain;
		if (synack && !bad) {
			/* Keep it to answer if a listener would take the ACK. */
			if (ref_lookup(&r) == SOCK_LISTENER) {
				struct ring_entry *e = &ring[nring < RING ? nring++ : (int)(k % RING)];

				e->v6 = r.v6;
				memcpy(e->client, r.saddr, 16);
				memcpy(e->server, r.daddr, 16);
				e->cport = r.sport;
				e->seq = r.seq + 1;
				e->ack_seq = be32(out + r.l2 + (r.v6 ? 40 : 20) + 4) + 1;
				e->sent = now_sec();
			}
		}
		before = after;
	}
	t.frames = i;
	secs = now_sec() - start;
	last = after;
	if (!phase_within_budget(&pc, &m, skel->bss->test_clock_ns))
		t.violations++;

	/* Over the whole run: every class adds up, and the RSTs (of SYNs and
	 * of ACKs) stay within the budget of the one CPU this process runs on. */
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		const struct shedd_class_stats *a = &first.cls[c], *b = &last.cls[c];

		if (b->syn - a->syn != (b->admitted - a->admitted) + (b->dropped - a->dropped) +
		    (b->rst_sent - a->rst_sent) + (b->cookie_sent - a->cookie_sent) ||
		    b->ack_valid - a->ack_valid != (b->ack_admitted - a->ack_admitted) +
		    (b->ack_refused - a->ack_refused)) {
			t.violations++;
			fprintf(stderr, "VIOLATION: class %d does not add up over the run\n", c);
		}
	}
	max_rst = fuzz_cfg.rst_burst + elapsed_ns * fuzz_cfg.rst_rate_per_sec /
		  SHEDD_NSEC_PER_SEC + 1;
	if (t.rst > max_rst) {
		t.violations++;
		fprintf(stderr, "VIOLATION: %" PRIu64 " RSTs, the budget allows %llu\n",
			t.rst, (unsigned long long)max_rst);
	}

	printf("# fuzz seed=0x%" PRIx64 ": %" PRIu64 " frames (%" PRIu64 " mutated) in %.2f s,"
	       " %.0f frames/s, %" PRIu64 " phases\n", seed, t.frames, t.mutated, secs,
	       t.frames / secs, t.phases);
	printf("# judged %" PRIu64 " (first fragments %" PRIu64 "): admitted %" PRIu64
	       ", shed %" PRIu64 " (RST %" PRIu64 ", RST over budget %" PRIu64
	       ", RST not answerable %" PRIu64 "); refused %" PRIu64 "; passed %" PRIu64 "\n",
	       t.judged, t.frag_judged, t.admitted, t.shed, t.rst, t.rst_limited,
	       t.rst_refused, t.refused, t.passed);
	printf("# cookies %" PRIu64 " (IPv6 %" PRIu64 ", VLAN %" PRIu64 ", TS %" PRIu64
	       ", WS %" PRIu64 ", ECN %" PRIu64 ", shedding %" PRIu64 "), over budget %" PRIu64
	       ", listener stamps %" PRIu64 "\n", t.cookies, t.cookies_v6, t.cookies_vlan,
	       t.cookies_ts, t.cookies_ws, t.cookies_ecn, t.cookies_shedding, t.cookie_limited,
	       t.refreshed);
	printf("# ACKs %" PRIu64 " (unverified %" PRIu64 ", no listener %" PRIu64
	       ", established %" PRIu64 "): forged %" PRIu64 ", valid %" PRIu64 " of %" PRIu64
	       " answered (admitted %" PRIu64 ", refused %" PRIu64 ", RST %" PRIu64 ")\n",
	       t.acks, t.acks_unverified, t.acks_no_listener, t.acks_established,
	       t.ack_invalid, t.ack_valid, t.answered, t.ack_admitted, t.ack_refused, t.ack_rst);
	printf("# to the kernel: SYNs without a listener %" PRIu64 ", ACKs with no cookie out %"
	       PRIu64 "; SYNs of a held 4-tuple %" PRIu64 "\n", t.syn_no_listener,
	       t.ack_to_kernel, t.syn_tuple_busy);
	printf("# tunnels opened %" PRIu64 ": inner SYNs judged %" PRIu64 ", inner ACKs %" PRIu64
	       ", refused %" PRIu64 "; no device takes it %" PRIu64 "\n",
	       t.tunnels, t.tun_judged, t.tun_acks, t.tun_refused, t.tun_no_device);
	printf("# behind more than 512 bytes of IP headers: judged %" PRIu64 ", cookies %" PRIu64
	       ", in tunnels %" PRIu64 "\n", t.long_judged, t.long_cookies, t.long_tunnels);
	printf("# invariant violations: %" PRIu64 "\n", t.violations);
	if (t.violations)
		fail_msg("%" PRIu64 " invariant violations (seed 0x%" PRIx64 ")",
			 t.violations, seed);
	/* A run that never exercised a path proves nothing about it. */
	if (t.frames >= 10000 && (!t.admitted || !t.shed || !t.rst || !t.rst_limited ||
				  !t.rst_refused || !t.refused || !t.frag_judged ||
				  !t.tun_judged || !t.tun_refused || !t.long_judged ||
				  !t.tun_acks || !t.tun_no_device))
		fail_msg("the run did not reach every verdict: widen the generator");
	if (t.frames >= 50000 && (!t.cookies || !t.cookies_v6 || !t.cookies_vlan ||
				  !t.cookies_ts || !t.cookies_ws || !t.cookies_ecn ||
				  !t.cookies_shedding || !t.cookie_limited || !t.refreshed ||
				  !t.acks_no_listener || !t.acks_established ||
				  !t.ack_invalid || !t.ack_admitted || !t.ack_refused || !t.ack_rst ||
				  !t.syn_no_listener || !t.ack_to_kernel || !t.long_cookies ||
				  !t.long_tunnels))
		fail_msg("the run did not reach every verified path: widen the generator");
}

/* ---- setup ----------------------------------------------------------------- */

static int tcp_socket(int family)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd >= 0 && family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) {
		close(fd);
		return -1;
	}
	return fd;
}

static socklen_t sockaddr_of(int family, const char *addr, __u16 port,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *sa = (void *)ss;

		sa->sin_family = AF_INET;
		sa->sin_port = htons(port);
		pkt_addr(AF_INET, addr, (__u8 *)&sa->sin_addr);
		return sizeof(*sa);
	}
	{
		struct sockaddr_in6 *sa = (void *)ss;

		sa->sin6_family = AF_INET6;
		sa->sin6_port = htons(port);
		pkt_addr(AF_INET6, addr, (__u8 *)&sa->sin6_addr);
		return sizeof(*sa);
	}
}

/* A listener at the server's address on PORT_A and a connection to it from
 * the default client, both on lo. @fds gets the three sockets. */
static int listen_and_connect(int family, const char *server, const char *client,
			      __u16 *client_port, int *fds)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int tries;

	fds[0] = tcp_socket(family);
	fds[1] = tcp_socket(family);
	if (fds[0] < 0 || fds[1] < 0)
		return -1;
	len = sockaddr_of(family, server, PORT_A, &ss);
	if (bind(fds[0], (struct sockaddr *)&ss, len) || listen(fds[0], 16))
		return -1;
	len = sockaddr_of(family, client, 0, &ss);
	if (bind(fds[1], (struct sockaddr *)&ss, len))
		return -1;
	len = sockaddr_of(family, server, PORT_A, &ss);
	/* IPv6 installs the route of a new address from a work queue, even
	 * without DAD: until then connect() fails with ENETUNREACH. Wait for
	 * it, a second at most. */
	for (tries = 0; connect(fds[1], (struct sockaddr *)&ss, len); tries++) {
		const struct timespec ms10 = { .tv_nsec = 10000000 };

		if (errno != ENETUNREACH || tries == 100)
			return -1;
		nanosleep(&ms10, NULL);
	}
	fds[2] = accept(fds[0], NULL, NULL);
	if (fds[2] < 0)
		return -1;
	len = sizeof(ss);
	if (getsockname(fds[1], (struct sockaddr *)&ss, &len))
		return -1;
	*client_port = ntohs(family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
			     ((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

/* A network namespace of our own, so the program's socket lookups see
 * our listener and connection and nothing of the host's. It vanishes
 * with the process. */
static int private_netns(void)
{
	if (unshare(CLONE_NEWNET)) {
		print_error("unshare(CLONE_NEWNET): %s\n", strerror(errno));
		return -1;
	}
	/* tcp_syncookies=2: bpf_tcp_gen_syncookie() stamps a listener only
	 * then (or with its SYN queue full), so the program's refresh of the
	 * stamp is seen to work. */
	if (system("ip link set lo up && "
		   "echo 2 > /proc/sys/net/ipv4/tcp_syncookies && "
		   "echo 0 > /proc/sys/net/ipv4/conf/all/forwarding && "
		   "echo 0 > /proc/sys/net/ipv4/conf/lo/forwarding && "
		   "echo 0 > /proc/sys/net/ipv6/conf/all/forwarding && "
		   "echo 0 > /proc/sys/net/ipv6/conf/lo/forwarding && "
		   "ip addr add " PKT_V4_SERVER "/32 dev lo && "
		   "ip addr add " PKT_V4_CLIENT "/32 dev lo && "
		   "ip -6 addr add " PKT_V6_SERVER "/128 dev lo nodad && "
		   "ip -6 addr add " PKT_V6_CLIENT "/128 dev lo nodad")) {
		print_error("addresses on lo in the fuzzer's namespace\n");
		return -1;
	}
	if (listen_and_connect(AF_INET, PKT_V4_SERVER, PKT_V4_CLIENT, &sockets.port4,
			       &sockets.fds[0])) {
		print_error("IPv4 listener and connection on lo: %s\n", strerror(errno));
		return -1;
	}
	if (listen_and_connect(AF_INET6, PKT_V6_SERVER, PKT_V6_CLIENT, &sockets.port6,
			       &sockets.fds[3])) {
		print_error("IPv6 listener and connection on lo: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* @addr (NULL: any) as tun_devs keeps it: IPv4 as ::ffff:a.b.c.d. */
static void tun_key_addr(const char *addr, __u8 *out)
{
	memset(out, 0, 16);
	if (!addr)
		return;
	if (strchr(addr, ':')) {
		pkt_addr(AF_INET6, addr, out);
		return;
	}
	out[10] = out[11] = 0xff;
	pkt_addr(AF_INET, addr, out + 12);
}

static int group_setup(void **state)
{
	const struct shedd_bucket fresh = { 0 };
	const struct shedd_rst_budget fresh_rst = { 0 };
	__u16 ports[] = { PORT_A, PORT_B };
	__u32 zero = 0, c, shapes = 0;
	__u8 one = 1;
	size_t i;
	int err;

	(void)state;
	libbpf_set_print(libbpf_print_warn);
	/* One CPU: the RST budget bound is per CPU. */
	if (harness_pin_cpu(NULL)) {
		print_error("pin to one CPU: %s\n", strerror(errno));
		return -1;
	}
	if (private_netns())
		return -1;
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus <= 0)
		return -1;
	if (harness_load())
		return -1;
	skel->bss->test_clock_ns = T0_NS;
	err = bpf_map__update_elem(skel->maps.settings, &zero, sizeof(zero), &fuzz_cfg,
				   sizeof(fuzz_cfg), BPF_ANY);
	for (i = 0; !err && i < ARRAY_SIZE(ports); i++)
		err = protect_port(ports[i]);
	for (i = 0; !err && i < ARRAY_SIZE(prefixes); i++) {
		__u32 cls = prefixes[i].cls;

		if (prefixes[i].family == AF_INET) {
			struct shedd_lpm_v4 key = { .prefixlen = prefixes[i].len };

			pkt_addr(AF_INET, prefixes[i].addr, key.addr);
			err = bpf_map__update_elem(skel->maps.prefix_v4, &key, sizeof(key),
						   &cls, sizeof(cls), BPF_ANY);
		} else {
			struct shedd_lpm_v6 key = { .prefixlen = prefixes[i].len };

			pkt_addr(AF_INET6, prefixes[i].addr, key.addr);
			err = bpf_map__update_elem(skel->maps.prefix_v6, &key, sizeof(key),
						   &cls, sizeof(cls), BPF_ANY);
		}
	}
	for (c = 0; !err && c < SHEDD_NR_CLASSES; c++) {
		const struct shedd_reserve empty = { 0 };

		err = bpf_map__update_elem(skel->maps.rates, &c, sizeof(c), &fuzz_rate,
					   sizeof(fuzz_rate), BPF_F_LOCK);
		if (!err)
			err = bpf_map__update_elem(skel->maps.reserve, &c, sizeof(c), &empty,
						   sizeof(empty), BPF_ANY);
		if (!err)
			err = update_percpu(skel->maps.buckets, c, &fresh, sizeof(fresh));
	}
	if (!err)
		err = update_percpu(skel->maps.rst_budget, 0, &fresh_rst, sizeof(fresh_rst));
	if (!err)
		err = update_percpu(skel->maps.cookie_budget, 0, &fresh_rst, sizeof(fresh_rst));
	/* The devices, and the kinds matched against them. */
	for (i = 0; !err && i < ARRAY_SIZE(fuzz_devs); i++) {
		struct shedd_tun_key k = { .kind = fuzz_devs[i].kind, .flags = fuzz_devs[i].flags,
					   .port = fuzz_devs[i].port, .id = fuzz_devs[i].id };
		const struct shedd_tun_dev dev = { .ifindex = 1 };

		if (k.kind == SHEDD_TDEV_GRE && (k.flags & TUN_KEY_KEYED))
			k.id = htonl(k.id); /* as on the wire */
		tun_key_addr(fuzz_devs[i].local, k.local);
		tun_key_addr(fuzz_devs[i].remote, k.remote);
		shapes |= 1U << shedd_tun_key_shape(&k);
		err = bpf_map__update_elem(skel->maps.tun_devs, &k, sizeof(k), &dev, sizeof(dev),
					   BPF_ANY);
	}
	if (!err) {
		struct shedd_tun_config tc = fuzz_tun;

		tc.match = FUZZ_MATCH | shapes << SHEDD_TUN_SHAPES_SHIFT;
		err = bpf_map__update_elem(skel->maps.tun_config, &zero, sizeof(zero), &tc,
					   sizeof(tc), BPF_ANY);
	}
	/* The addresses tunnels may end on: the server's. */
	for (i = 0; !err && i < 2; i++) {
		struct shedd_tun_addr a = { .addr = { [10] = 0xff, [11] = 0xff } };

		if (i == 0)
			pkt_addr(AF_INET, PKT_V4_SERVER, a.addr + 12);
		else
			pkt_addr(AF_INET6, PKT_V6_SERVER, a.addr);
		err = bpf_map__update_elem(skel->maps.tun_local, &a, sizeof(a), &one,
					   sizeof(one), BPF_ANY);
	}
	if (err) {
		print_error("configure maps: %s\n", strerror(-err));
		goto fail;
	}
	return 0;
fail:
	shedd_bpf__destroy(skel);
	skel = NULL;
	return -1;
}

static int fuzz_teardown(void **state)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sockets.fds); i++) {
		if (sockets.fds[i] >= 0)
			close(sockets.fds[i]);
		sockets.fds[i] = -1;
	}
	return group_teardown(state);
}

/* The reference model on hand-made frames, so a model that says "pass" to
 * everything cannot make the fuzz run green. */
static void reference_model_knows_the_cases(void **state)
{
	static const struct {
		const char *name;
		struct pkt_spec spec;
		enum ref_kind kind;
	} cases[] = {
		{ "IPv4 SYN", { .flags = TCP_SYN }, REF_JUDGE },
		{ "IPv4 ACK", { .flags = TCP_ACK }, REF_ACK },
		{ "IPv4 ACK to an open port", { .flags = TCP_ACK, .dport = PORT_OPEN }, REF_PASS },
		{ "IPv4 FIN+ACK", { .flags = TCP_ACK | TCP_FIN }, REF_ACK },
		{ "IPv4 RST+ACK", { .flags = TCP_ACK | TCP_RST }, REF_PASS },
		{ "IPv4 SYN+ACK", { .flags = TCP_SYN | TCP_ACK }, REF_PASS },
		{ "IPv4 first fragment ACK", { .flags = TCP_ACK, .frag = PKT_IP_MF }, REF_ACK },
		{ "IPv4 SYN+FIN", { .flags = TCP_SYN | TCP_FIN }, REF_PASS },
		{ "IPv4 SYN to an open port", { .flags = TCP_SYN, .dport = PORT_OPEN }, REF_PASS },
		{ "IPv4 first fragment SYN", { .flags = TCP_SYN, .frag = PKT_IP_MF }, REF_JUDGE },
		{ "IPv4 offset 1", { .flags = TCP_SYN, .frag = PKT_IP_MF | 1 }, REF_REFUSE },
		{ "IPv4 offset 2", { .flags = TCP_SYN, .frag = 2 }, REF_PASS },
		{ "IPv6 SYN", { .l3 = ETH_P_IPV6, .flags = TCP_SYN }, REF_JUDGE },
		{ "IPv6 ACK", { .l3 = ETH_P_IPV6, .flags = TCP_ACK }, REF_ACK },
		{ "IPv6 first fragment SYN",
		  { .l3 = ETH_P_IPV6, .flags = TCP_SYN, .nr_ext = 1,
		    .ext = { IPPROTO_FRAGMENT }, .frag = PKT_IP6_MF }, REF_JUDGE },
		{ "IPv6 seven headers",
		  { .l3 = ETH_P_IPV6, .flags = TCP_SYN, .nr_ext = 7,
		    .ext = { 60, 60, 60, 60, 60, 60, 60 } }, REF_REFUSE },
		{ "IPv6 six headers",
		  { .l3 = ETH_P_IPV6, .flags = TCP_SYN, .nr_ext = 6,
		    .ext = { 60, 60, 60, 60, 60, 60 } }, REF_JUDGE },
		{ "802.1ad+802.1Q IPv4 SYN", { .flags = TCP_SYN, .vlans = 2 }, REF_JUDGE },
		{ "three priority tags, IPv4 SYN", { .flags = TCP_SYN, .vlans = 3, .vid0 = 1 },
		  REF_JUDGE },
		{ "eight priority tags, IPv6 SYN",
		  { .l3 = ETH_P_IPV6, .flags = TCP_SYN, .vlans = 8, .vid0 = 1 }, REF_JUDGE },
		{ "nine priority tags, IPv4 SYN", { .flags = TCP_SYN, .vlans = 9, .vid0 = 1 },
		  REF_REFUSE },
		{ "nine VLAN tags, ARP", { .l3 = ETH_P_ARP, .vlans = 9 }, REF_REFUSE },
		{ "ARP", { .l3 = ETH_P_ARP }, REF_PASS },
	};
	static const struct {
		const char *name;
		struct tun_pkt_spec tun;
		struct pkt_spec in;
		enum ref_kind kind;
		int tunnel;
	} tun_cases[] = {
		{ "IPIP SYN", { .kind = TUNP_IPIP }, { .flags = TCP_SYN }, REF_JUDGE, 1 },
		{ "IPIP SYN to another host", { .kind = TUNP_IPIP, .outer_daddr = "198.19.0.99" },
		  { .flags = TCP_SYN }, REF_PASS, 0 },
		{ "IPIP ACK: judged as an ACK that may end a handshake", { .kind = TUNP_IPIP },
		  { .flags = TCP_ACK }, REF_ACK, 1 },
		{ "IPIP RST", { .kind = TUNP_IPIP }, { .flags = TCP_RST }, REF_PASS, 1 },
		{ "VXLAN SYN of a VNI no device has", { .kind = TUNP_VXLAN, .vni = 43 },
		  { .flags = TCP_SYN }, REF_PASS, 0 },
		{ "Geneve SYN of a VNI no device has", { .kind = TUNP_GENEVE, .vni = 7 },
		  { .flags = TCP_SYN }, REF_PASS, 0 },
		{ "Geneve SYN from the device's remote", { .kind = TUNP_GENEVE },
		  { .flags = TCP_SYN }, REF_JUDGE, 1 },
		{ "GRE SYN of a key no device has", { .kind = TUNP_GRE, .gre_flags = TUNP_GRE_K,
		  .gre_key = 5 }, { .flags = TCP_SYN }, REF_PASS, 0 },
		{ "GRE-TAP SYN of any key (collect_md)", { .kind = TUNP_GRETAP,
		  .gre_flags = TUNP_GRE_K, .gre_key = 5 }, { .flags = TCP_SYN }, REF_JUDGE, 1 },
		{ "GRE key+csum+seq SYN",
		  { .kind = TUNP_GRE, .gre_flags = TUNP_GRE_C | TUNP_GRE_K | TUNP_GRE_S },
		  { .flags = TCP_SYN }, REF_JUDGE, 1 },
		{ "GRE version 1", { .kind = TUNP_GRE, .gre_flags = 1 }, { .flags = TCP_SYN },
		  REF_PASS, 0 },
		{ "ip6gretap SYN (none ends here)", { .kind = TUNP_GRETAP6 }, { .flags = TCP_SYN },
		  REF_PASS, 0 },
		{ "VXLAN 802.1Q SYN", { .kind = TUNP_VXLAN }, { .flags = TCP_SYN, .vlans = 1 },
		  REF_JUDGE, 1 },
		{ "VXLAN on port 4790", { .kind = TUNP_VXLAN, .udp_port = 4790 },
		  { .flags = TCP_SYN }, REF_PASS, 0 },
		{ "Geneve options SYN over IPv6", { .kind = TUNP_GENEVE6, .geneve_opt = 20 },
		  { .l3 = ETH_P_IPV6, .flags = TCP_SYN }, REF_JUDGE, 1 },
		{ "IPIP in GRE", { .kind = TUNP_GRE }, { .l4 = IPPROTO_IPIP }, REF_REFUSE, 1 },
		{ "SIT SYN in an outer first fragment", { .kind = TUNP_SIT, .outer_frag = PKT_IP_MF },
		  { .l3 = ETH_P_IPV6, .flags = TCP_SYN }, REF_JUDGE, 1 },
		{ "FOU ipproto 4 SYN", { .kind = TUNP_FOU }, { .flags = TCP_SYN }, REF_JUDGE, 1 },
		{ "FOU ipproto 4 port over IPv6", { .kind = TUNP_FOU6, .udp_port = TUNP_FOU4_PORT },
		  { .flags = TCP_SYN }, REF_PASS, 0 },
		{ "FOU ipproto 41 SYN over IPv6", { .kind = TUNP_FOU6 },
		  { .l3 = ETH_P_IPV6, .flags = TCP_SYN }, REF_JUDGE, 1 },
		{ "FOU ipproto 6 SYN", { .kind = TUNP_FOU, .fou_proto = IPPROTO_TCP },
		  { .flags = TCP_SYN }, REF_JUDGE, 1 },
		{ "FOU ipproto 47 SYN", { .kind = TUNP_FOU, .fou_proto = IPPROTO_GRE },
		  { .flags = TCP_SYN }, REF_JUDGE, 1 },
		{ "GUE SYN with fields", { .kind = TUNP_GUE, .gue_opt = 16 }, { .flags = TCP_SYN },
		  REF_JUDGE, 1 },
		{ "GUE version 1 SYN", { .kind = TUNP_GUE6, .gue_ver = 1 },
		  { .l3 = ETH_P_IPV6, .flags = TCP_SYN }, REF_JUDGE, 1 },
		{ "GUE control message", { .kind = TUNP_GUE, .gue_control = 1 }, { .flags = TCP_SYN },
		  REF_PASS, 0 },
		{ "GUE of protocol 17 to a VXLAN port",
		  { .kind = TUNP_GUE, .fou_proto = IPPROTO_UDP },
		  { .l4 = IPPROTO_UDP, .dport = TUNP_VXLAN_PORT }, REF_REFUSE, 1 },
	};
	struct ref r;
	struct pkt p;
	unsigned int idx;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		pkt_build(&p, &cases[i].spec);
		ref_model(p.data, p.len, &r);
		if (r.kind != cases[i].kind)
			fail_msg("reference model on %s: %d, expected %d", cases[i].name,
				 r.kind, cases[i].kind);
	}
	for (i = 0; i < ARRAY_SIZE(tun_cases); i++) {
		tun_pkt_build(&p, &tun_cases[i].tun, &tun_cases[i].in);
		ref_model(p.data, p.len, &r);
		if (r.kind != tun_cases[i].kind || r.tunnel != tun_cases[i].tunnel)
			fail_msg("reference model on tunnel %s: %d (opened %d), expected %d (%d)",
				 tun_cases[i].name, r.kind, r.tunnel, tun_cases[i].kind,
				 tun_cases[i].tunnel);
	}
	/* An IPIP first fragment cut inside the inner TCP header: refused. */
	tun_pkt_build(&p, &(struct tun_pkt_spec){ .kind = TUNP_IPIP, .outer_frag = PKT_IP_MF },
		      &(struct pkt_spec){ .flags = TCP_SYN });
	p.len = p.l4_off + 20 + 10;
	pkt_finish(&p);
	ref_model(p.data, p.len, &r);
	assert_int_equal(r.kind, REF_REFUSE);
	assert_true(r.tun_refused);
	pkt_build(&p, &(struct pkt_spec){ .flags = TCP_SYN, .saddr = "198.18.1.200" });
	ref_model(p.data, p.len, &r);
	assert_int_equal(r.cls, SHEDD_SHEDDABLE_PLUS);
	pkt_build(&p, &(struct pkt_spec){ .l3 = ETH_P_IPV6, .flags = TCP_SYN,
					  .saddr = "2001:db8:1:5::9" });
	ref_model(p.data, p.len, &r);
	assert_int_equal(r.cls, SHEDD_CRITICAL_PLUS);

	/* The options of a Linux SYN, and the cookie MSS they lead to. */
	pkt_build(&p, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1 });
	ref_model(p.data, p.len, &r);
	assert_int_equal(r.opts.mss, 1460);
	assert_true(r.opts.sack && r.opts.ts && r.opts.ws);
	assert_int_equal(r.opts.wscale, 7);
	assert_int_equal(r.opts.tsval, 0x1234);
	assert_int_equal(ref_cookie_mss(0, 1460, &idx), 1460);
	assert_int_equal(idx, 3);
	assert_int_equal(ref_cookie_mss(0, 1439, &idx), 1300);
	assert_int_equal(ref_cookie_mss(0, 0, &idx), 536);
	assert_int_equal(ref_cookie_mss(1, 1460, &idx), 1440);
	assert_int_equal(ref_cookie_mss(1, 0, &idx), 1220);
	/* An option cut by the end of the header ends the walk. */
	p.data[p.l4_off + 20 + 18] = 4; /* window scale length past the header */
	ref_model(p.data, p.len, &r);
	assert_true(r.opts.ts && !r.opts.ws);

	/* The sockets of the namespace. */
	pkt_build(&p, &(struct pkt_spec){ .flags = TCP_ACK, .sport = sockets.port4 });
	ref_model(p.data, p.len, &r);
	assert_int_equal(ref_lookup(&r), SOCK_ESTABLISHED);
	pkt_build(&p, &(struct pkt_spec){ .flags = TCP_ACK, .sport = 1 });
	ref_model(p.data, p.len, &r);
	assert_int_equal(ref_lookup(&r), SOCK_LISTENER);
	pkt_build(&p, &(struct pkt_spec){ .flags = TCP_ACK, .dport = PORT_B });
	ref_model(p.data, p.len, &r);
	assert_int_equal(ref_lookup(&r), SOCK_NONE);
}

/* --model: the reference model as a filter, for the ground truth of
 * tests/integration/groundtruth.bats: a frame in hex per line on stdin,
 * "<kind> <delivered>" per line on stdout. No BPF, no root. */
static int model_filter(void)
{
	static const char *const kinds[] = { "pass", "refuse", "judge", "ack" };
	char line[2 * PKT_MAX + 2];
	__u8 frame[PKT_MAX];
	unsigned long nr = 0;
	struct ref r;

	while (fgets(line, sizeof(line), stdin)) {
		size_t n = strcspn(line, "\r\n"), i;

		nr++;
		if (n % 2 || n / 2 > PKT_MAX || line[n] != '\n') {
			fprintf(stderr, "fuzz_xdp --model: line %lu: not a frame of at most %d bytes in hex\n",
				nr, PKT_MAX);
			return 1;
		}
		for (i = 0; i < n / 2; i++) {
			unsigned int b;

			if (sscanf(line + 2 * i, "%2x", &b) != 1) {
				fprintf(stderr, "fuzz_xdp --model: line %lu: bad hex at byte %zu\n",
					nr, i);
				return 1;
			}
			frame[i] = (__u8)b;
		}
		ref_model(frame, n / 2, &r);
		printf("%s %d\n", kinds[r.kind], r.delivered);
	}
	return ferror(stdin) ? 1 : 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reference_model_knows_the_cases),
		cmocka_unit_test(fuzz_frames),
	};

	if (argc == 2 && !strcmp(argv[1], "--model"))
		return model_filter();
	if (argc > 1) {
		fprintf(stderr, "usage: fuzz_xdp [--model]\n");
		return 2;
	}
	return cmocka_run_group_tests_name("fuzz_xdp", tests, group_setup,
					   fuzz_teardown);
}
