// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_xdp.c - random and mutated frames through the XDP program under
 * BPF_PROG_TEST_RUN, each checked against invariants and against a small
 * reference model written apart from bpf/parsing.h: a non-SYN is never
 * dropped, every class sees seen = admitted + shed, a RST only answers a
 * judged pure SYN that may be answered, within the RST budget, and every
 * SYN the kernel would deliver to a protected port is judged.
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
#include <time.h>
#include <cmocka.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "shedd.h"
#include "shedd.skel.h"
#include "xdp_harness.h"
#include "packets.h"
#include "splitmix.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define DEFAULT_FRAMES 100000ULL
#define DEFAULT_SECONDS 120.0
#define DEFAULT_SEED 0x5eedULL
#define MAX_REPORTS 8 /* violations printed in full; all are counted */

#define PORT_A PKT_DPORT /* protected */
#define PORT_B 443       /* protected */
#define PORT_OPEN 9090   /* not protected */
#define T0_NS (10000ULL * SHEDD_NSEC_PER_SEC)

/* Class rates low enough, and the clock slow enough, that judged SYNs are
 * both admitted and shed; the RST budget small enough to run out. */
static const struct shedd_rate fuzz_rate = {
	.r = { .rate_per_sec = 30, .burst = 4, .batch = 4, .lease_ns = 1000000,
	       .flags = SHEDD_RATE_SET }
};
static const struct shedd_config fuzz_cfg = {
	.default_class = SHEDD_SHEDDABLE,
	.reject = { SHEDD_REJECT_DROP, SHEDD_REJECT_RST, SHEDD_REJECT_RST,
		    SHEDD_REJECT_RST },
	.mac = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x05 }, /* pkt_server_mac */
	.rst_rate_per_sec = 10,
	.rst_burst = 3,
};

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


/* ---- the reference model ------------------------------------------------- */

/* What the program must do with a frame. */
enum ref_kind {
	REF_PASS,   /* pass it untouched, judge nothing */
	REF_REFUSE, /* drop it, judge nothing: a fragment or chain we cannot judge */
	REF_JUDGE,  /* a pure SYN to a protected port the kernel would deliver */
};

struct ref {
	enum ref_kind kind;
	int first_frag;
	int v6;
	size_t l2;          /* Ethernet and tags */
	__u8 saddr[16], daddr[16];
	__u16 sport, dport;
	__u32 cls;
};

static unsigned int be16(const __u8 *b)
{
	return (unsigned int)b[0] << 8 | b[1];
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

/* The TCP segment at @seg, @seglen bytes by the IP lengths. A datagram
 * must hold the whole header with options; a first fragment only the
 * fixed header (its options may be in the next fragment). */
static void ref_tcp(const __u8 *f, size_t seg, size_t seglen, struct ref *r)
{
	unsigned int doff, flags;

	if (seglen < 20)
		return; /* kernel: no TCP header, dropped */
	doff = f[seg + 12] >> 4;
	if (doff < 5 || (!r->first_frag && doff * 4 > seglen))
		return;
	flags = f[seg + 13];
	/* A listener takes a SYN without ACK; it discards one with RST or
	 * FIN. Anything else is not a new connection. */
	if (!(flags & TCP_SYN) || (flags & (TCP_ACK | TCP_RST | TCP_FIN)))
		return;
	r->sport = be16(f + seg);
	r->dport = be16(f + seg + 2);
	if (r->dport != PORT_A && r->dport != PORT_B)
		return;
	r->cls = ref_class(r->v6, r->saddr);
	r->kind = REF_JUDGE;
}

static void ref_ipv4(const __u8 *f, size_t len, size_t off, struct ref *r)
{
	size_t hl, tot;
	unsigned int fo, frag_off;

	if (off + 20 > len || f[off] >> 4 != 4 || (f[off] & 15) < 5)
		return;
	hl = (f[off] & 15) * 4u;
	tot = be16(f + off + 2);
	/* Linux ip_rcv: a header past the frame, tot_len below the header
	 * or past the frame: dropped. A shorter tot_len trims the frame. */
	if (off + hl > len || tot < hl || off + tot > len)
		return;
	if (f[off + 9] != IPPROTO_TCP)
		return;
	memcpy(r->saddr, f + off + 12, 4);
	memcpy(r->daddr, f + off + 16, 4);
	fo = be16(f + off + 6);
	frag_off = fo & 0x1fff;
	if (frag_off == 1) {
		r->kind = REF_REFUSE; /* RFC 1858: could rewrite the flags */
		return;
	}
	if (frag_off > 1)
		return; /* its first fragment is the one judged */
	r->first_frag = !!(fo & PKT_IP_MF);
	if (r->first_frag && tot - hl < 20) {
		r->kind = REF_REFUSE; /* RFC 1858 tiny fragment */
		return;
	}
	ref_tcp(f, off + hl, tot - hl, r);
}

/* The walk of the program goes MAX_IPV6_EXT_HDRS headers deep; a longer
 * chain cannot be judged and must be refused. */
static void ref_ipv6(const __u8 *f, size_t len, size_t off, struct ref *r)
{
	size_t end, p;
	int n = 0;
	__u8 nh;

	if (off + 40 > len || f[off] >> 4 != 6)
		return;
	end = off + 40 + be16(f + off + 4);
	if (end > len)
		return; /* Linux ipv6_rcv: longer than the frame, dropped */
	memcpy(r->saddr, f + off + 8, 16);
	memcpy(r->daddr, f + off + 24, 16);
	nh = f[off + 6];
	p = off + 40;
	while (ref_is_ext6(nh)) {
		size_t hl;

		if (n == MAX_IPV6_EXT_HDRS) {
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
	if (nh != IPPROTO_TCP)
		return;
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
}

static void ref_model(const __u8 *f, size_t len, struct ref *r)
{
	size_t off = 14;
	unsigned int proto;
	int tags = 0;

	memset(r, 0, sizeof(*r));
	r->kind = REF_PASS;
	if (len < 14)
		return;
	proto = be16(f + 12);
	/* Up to two VLAN tags: the stacks shedd protects. */
	while (proto == 0x8100 || proto == 0x88a8) {
		if (tags == 2 || off + 4 > len)
			return;
		proto = be16(f + off + 2);
		off += 4;
		tags++;
	}
	r->l2 = off;
	if (proto == 0x0800) {
		ref_ipv4(f, len, off, r);
	} else if (proto == 0x86dd) {
		r->v6 = 1;
		ref_ipv6(f, len, off, r);
	}
}

/* Would the kernel answer this SYN? Group MACs and a MAC not this host's,
 * multicast, broadcast, unspecified, loopback and v4-mapped addresses: no. */
static int ref_answerable(const __u8 *f, const struct ref *r)
{
	static const __u8 zero[16];
	static const __u8 mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	__u8 loop6[16] = { 0 };

	loop6[15] = 1;
	if (memcmp(f, fuzz_cfg.mac, ETH_ALEN) || (f[ETH_ALEN] & 1))
		return 0;
	if (!r->v6) {
		__u8 s = r->saddr[0], d = r->daddr[0];

		return s != 0 && s != 127 && s < 224 && d != 0 && d != 127 && d < 224;
	}
	if (r->saddr[0] == 0xff || r->daddr[0] == 0xff)
		return 0;
	return memcmp(r->saddr, zero, 16) && memcmp(r->saddr, loop6, 16) &&
	       memcmp(r->saddr, mapped, 12);
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

/* A frame built from a random spec: mostly IPv4/IPv6 TCP, SYNs often,
 * fragments, options, extension chains and odd addresses. */
static void random_frame(uint64_t *s, struct pkt *p)
{
	struct pkt_spec spec = { 0 };
	char v4[20], v6[48];
	unsigned int k = rnd(s, 100), i;

	spec.l3 = k < 47 ? ETH_P_IP : k < 94 ? ETH_P_IPV6 : k < 97 ? ETH_P_ARP : 0x88cc;
	k = rnd(s, 100);
	spec.vlans = k < 75 ? 0 : k < 88 ? 1 : k < 96 ? 2 : 3;
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
			spec.nr_ext = 1 + rnd(s, PKT_MAX_EXT);
			for (i = 0; i < (unsigned int)spec.nr_ext; i++)
				spec.ext[i] = ext_types[rnd(s, ARRAY_SIZE(ext_types))];
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
}

/* Break what the parser looks at: bits, lengths, flags, offsets, MACs,
 * the frame's end. Returns how many mutations were made. */
static int mutate(uint64_t *s, struct pkt *p)
{
	int n = rnd(s, 10) < 4 ? 0 : 1 + (int)rnd(s, 4), i;

	for (i = 0; i < n; i++) {
		size_t hdr = p->l4_off + 20 < p->len ? p->l4_off + 20 : p->len;

		switch (rnd(s, 9)) {
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
		}
	}
	return n;
}

/* ---- running ------------------------------------------------------------ */

#define D(f) (after->f - before->f)

struct tally {
	uint64_t frames, mutated, judged, refused, passed, admitted, shed,
		 rst, rst_limited, rst_refused, frag_judged, violations;
};

static void report(const struct tally *t, uint64_t seed, uint64_t idx,
		   const struct pkt *p, const char *fmt, ...)
{
	va_list ap;
	size_t i;

	if (t->violations > MAX_REPORTS)
		return;
	fprintf(stderr, "VIOLATION seed=0x%" PRIx64 " frame=%" PRIu64 ": ", seed, idx);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n  frame (%zu bytes):", p->len);
	for (i = 0; i < p->len; i++)
		fprintf(stderr, "%s%02x", i % 32 ? " " : "\n   ", p->data[i]);
	fprintf(stderr, "\n");
}

/* The invariants on one frame; returns a description of the first one
 * broken, or NULL. */
static const char *check_frame(const struct pkt *p, const struct ref *r,
			       __u32 verdict, const __u8 *out, size_t out_len,
			       const struct shedd_stats *before,
			       const struct shedd_stats *after,
			       struct tally *t)
{
	static char why[256];
	int unchanged = out_len == p->len && !memcmp(out, p->data, p->len);
	__u64 judged = 0, refused = D(frag_refused) + D(deep_refused);
	int c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		__u64 seen = D(cls[c].syn);
		__u64 shed = D(cls[c].admitted) + D(cls[c].dropped) + D(cls[c].rst_sent);

		if (seen != shed) {
			snprintf(why, sizeof(why), "class %d: seen %llu != admitted + shed %llu",
				 c, (unsigned long long)seen, (unsigned long long)shed);
			return why;
		}
		judged += seen;
	}
	if (D(packets) != 1)
		return "packets did not move by exactly 1";

	switch (r->kind) {
	case REF_PASS:
		if (verdict != XDP_PASS)
			return "a frame that is not a deliverable SYN was not passed";
		if (!unchanged)
			return "a passed frame was changed";
		if (judged || refused || D(rst_limited) || D(rst_refused) || D(frag_judged))
			return "a frame that is not a deliverable SYN was judged or refused";
		t->passed++;
		return NULL;
	case REF_REFUSE:
		if (verdict != XDP_DROP || !unchanged)
			return "a fragment or chain that cannot be judged was not refused";
		if (judged || refused != 1)
			return "a refusal was not counted once, or was judged";
		t->refused++;
		return NULL;
	case REF_JUDGE:
		break;
	}

	if (judged != 1 || D(cls[r->cls].syn) != 1) {
		snprintf(why, sizeof(why), "a deliverable SYN (class %u) was not judged in its class",
			 r->cls);
		return why;
	}
	if (refused || D(frag_judged) != (__u64)r->first_frag)
		return "a judged SYN moved the wrong fragment counters";
	t->judged++;
	t->frag_judged += r->first_frag;
	if (D(cls[r->cls].admitted)) {
		if (verdict != XDP_PASS || !unchanged)
			return "an admitted SYN was not passed untouched";
		if (D(rst_limited) || D(rst_refused))
			return "an admitted SYN moved RST counters";
		t->admitted++;
		return NULL;
	}
	t->shed++;
	if (D(cls[r->cls].rst_sent)) {
		const struct pkt_tcp *tcp;
		size_t l3 = r->v6 ? 40 : 20;

		if (verdict != XDP_TX)
			return "rst_sent moved without XDP_TX";
		if (r->first_frag || fuzz_cfg.reject[r->cls] != SHEDD_REJECT_RST ||
		    !ref_answerable(p->data, r))
			return "a RST answered what must not be answered";
		if (out_len != r->l2 + l3 + 20)
			return "the RST has the wrong length";
		tcp = (const void *)(out + r->l2 + l3);
		if (tcp->flags != (TCP_RST | TCP_ACK) || ntohs(tcp->sport) != r->dport ||
		    ntohs(tcp->dport) != r->sport)
			return "the RST is not a RST+ACK to the SYN's ports";
		if (memcmp(out, p->data + ETH_ALEN, ETH_ALEN) ||
		    memcmp(out + r->l2 + (r->v6 ? 24 : 16), r->saddr, r->v6 ? 16 : 4))
			return "the RST does not go back to the SYN's sender";
		t->rst++;
		return NULL;
	}
	if (verdict != XDP_DROP || !unchanged)
		return "a shed SYN that was not answered was not dropped untouched";
	if (fuzz_cfg.reject[r->cls] == SHEDD_REJECT_RST && !r->first_frag) {
		int answerable = ref_answerable(p->data, r);

		if (D(rst_refused) != (__u64)!answerable ||
		    D(rst_limited) != (__u64)answerable)
			return "an unanswered SYN of a RST class was not counted as refused or limited";
		t->rst_limited += answerable;
		t->rst_refused += !answerable;
	} else if (D(rst_refused) || D(rst_limited)) {
		return "a SYN of a drop class moved RST counters";
	}
	return NULL;
}

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

static void fuzz_frames(void **state)
{
	uint64_t frames = env_u64("SHEDD_FUZZ_FRAMES", DEFAULT_FRAMES);
	uint64_t seed = env_u64("SHEDD_FUZZ_SEED", DEFAULT_SEED);
	double limit = (double)env_u64("SHEDD_FUZZ_SECONDS", (uint64_t)DEFAULT_SECONDS);
	struct shedd_stats before, after, first, last;
	struct tally t = { 0 };
	uint64_t rng = seed, i;
	__u64 elapsed_ns = 0, max_rst;
	double start = now_sec(), secs;
	int fd = bpf_program__fd(skel->progs.shedd_xdp), c;

	(void)state;
	read_stats(&before);
	first = before;
	for (i = 0; i < frames && (i % 1024 || now_sec() - start < limit); i++) {
		__u8 out[PKT_MAX];
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_out = out,
			    .data_size_out = sizeof(out), .repeat = 1);
		const char *why;
		struct ref r;
		struct pkt p;
		__u64 step = rng_next(&rng) % 2000000; /* up to 2 ms */
		int err;

		skel->bss->test_clock_ns += step;
		elapsed_ns += step;
		random_frame(&rng, &p);
		t.mutated += mutate(&rng, &p) > 0;
		ref_model(p.data, p.len, &r);
		opts.data_in = p.data;
		opts.data_size_in = p.len;
		err = bpf_prog_test_run_opts(fd, &opts);
		if (err)
			fail_msg("BPF_PROG_TEST_RUN on frame %" PRIu64 " (%zu bytes): %s",
				 i, p.len, strerror(-err));
		read_stats(&after);
		why = check_frame(&p, &r, opts.retval, out, opts.data_size_out,
				  &before, &after, &t);
		if (why) {
			t.violations++;
			report(&t, seed, i, &p, "%s (reference: %s, verdict %u)", why,
			       r.kind == REF_JUDGE ? "judge" :
			       r.kind == REF_REFUSE ? "refuse" : "pass", opts.retval);
		}
		before = after;
	}
	t.frames = i;
	secs = now_sec() - start;
	last = after;

	/* Over the whole run: every class adds up, and the RSTs stay within
	 * the budget of the one CPU this process runs on. */
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		const struct shedd_class_stats *a = &first.cls[c], *b = &last.cls[c];

		if (b->syn - a->syn != (b->admitted - a->admitted) +
		    (b->dropped - a->dropped) + (b->rst_sent - a->rst_sent)) {
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
	       " %.0f frames/s\n", seed, t.frames, t.mutated, secs, t.frames / secs);
	printf("# judged %" PRIu64 " (first fragments %" PRIu64 "): admitted %" PRIu64
	       ", shed %" PRIu64 " (RST %" PRIu64 ", RST over budget %" PRIu64
	       ", RST not answerable %" PRIu64 "); refused %" PRIu64 "; passed %" PRIu64 "\n",
	       t.judged, t.frag_judged, t.admitted, t.shed, t.rst, t.rst_limited,
	       t.rst_refused, t.refused, t.passed);
	printf("# invariant violations: %" PRIu64 "\n", t.violations);
	if (t.violations)
		fail_msg("%" PRIu64 " invariant violations (seed 0x%" PRIx64 ")",
			 t.violations, seed);
	/* A run that never exercised a path proves nothing about it. */
	if (t.frames >= 10000 && (!t.admitted || !t.shed || !t.rst || !t.rst_limited ||
				  !t.rst_refused || !t.refused || !t.frag_judged))
		fail_msg("the run did not reach every verdict: widen the generator");
}

/* ---- setup ----------------------------------------------------------------- */

static int pin_cpu(void)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++)
		;
	if (cpu == CPU_SETSIZE)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static int group_setup(void **state)
{
	const struct shedd_bucket fresh = { 0 };
	const struct shedd_rst_budget fresh_rst = { 0 };
	__u16 ports[] = { PORT_A, PORT_B };
	__u32 zero = 0, c;
	__u8 one = 1;
	size_t i;
	int err;

	(void)state;
	libbpf_set_print(libbpf_print_warn);
	/* One CPU: the RST budget bound is per CPU. */
	if (pin_cpu()) {
		print_error("pin to one CPU: %s\n", strerror(errno));
		return -1;
	}
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus <= 0)
		return -1;
	if (harness_load())
		return -1;
	skel->bss->test_clock_ns = T0_NS;
	err = bpf_map__update_elem(skel->maps.settings, &zero, sizeof(zero), &fuzz_cfg,
				   sizeof(fuzz_cfg), BPF_ANY);
	for (i = 0; !err && i < ARRAY_SIZE(ports); i++)
		err = bpf_map__update_elem(skel->maps.ports, &ports[i], sizeof(ports[i]),
					   &one, sizeof(one), BPF_ANY);
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
		{ "IPv4 ACK", { .flags = TCP_ACK }, REF_PASS },
		{ "IPv4 SYN+FIN", { .flags = TCP_SYN | TCP_FIN }, REF_PASS },
		{ "IPv4 SYN to an open port", { .flags = TCP_SYN, .dport = PORT_OPEN }, REF_PASS },
		{ "IPv4 first fragment SYN", { .flags = TCP_SYN, .frag = PKT_IP_MF }, REF_JUDGE },
		{ "IPv4 offset 1", { .flags = TCP_SYN, .frag = PKT_IP_MF | 1 }, REF_REFUSE },
		{ "IPv4 offset 2", { .flags = TCP_SYN, .frag = 2 }, REF_PASS },
		{ "IPv6 SYN", { .l3 = ETH_P_IPV6, .flags = TCP_SYN }, REF_JUDGE },
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
		{ "ARP", { .l3 = ETH_P_ARP }, REF_PASS },
	};
	struct ref r;
	struct pkt p;
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		pkt_build(&p, &cases[i].spec);
		ref_model(p.data, p.len, &r);
		if (r.kind != cases[i].kind)
			fail_msg("reference model on %s: %d, expected %d", cases[i].name,
				 r.kind, cases[i].kind);
	}
	pkt_build(&p, &(struct pkt_spec){ .flags = TCP_SYN, .saddr = "198.18.1.200" });
	ref_model(p.data, p.len, &r);
	assert_int_equal(r.cls, SHEDD_SHEDDABLE_PLUS);
	pkt_build(&p, &(struct pkt_spec){ .l3 = ETH_P_IPV6, .flags = TCP_SYN,
					  .saddr = "2001:db8:1:5::9" });
	ref_model(p.data, p.len, &r);
	assert_int_equal(r.cls, SHEDD_CRITICAL_PLUS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reference_model_knows_the_cases),
		cmocka_unit_test(fuzz_frames),
	};

	return cmocka_run_group_tests_name("fuzz_xdp", tests, group_setup,
					   group_teardown);
}
