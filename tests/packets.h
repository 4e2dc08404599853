/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* packets.h - crafted frames for the XDP tests. Every header is a packed
 * struct laid out as on the wire; pkt_build() stacks them from a pkt_spec,
 * fills in lengths and checksums (computed here, independently of the BPF
 * side), and records where each header starts so a test can cut a frame
 * anywhere and say where the cut fell. Addresses stay inside 198.18.0.0/15
 * and 2001:db8::/32.
 */
#ifndef SHEDD_TEST_PACKETS_H
#define SHEDD_TEST_PACKETS_H

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/types.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PKT_MAX 3072      /* bytes in a crafted frame: BPF_PROG_TEST_RUN takes 3520 */
#define PKT_MAX_MARKS 40  /* headers recorded per frame */
#define PKT_MAX_VLANS 12  /* more than the program walks (8) */
#define PKT_MAX_EXT 8     /* IPv6 extension headers per frame */

/* Client (sender of the SYN) and server, unless a spec names others. */
#define PKT_V4_CLIENT "198.18.0.10"
#define PKT_V4_SERVER "198.19.0.1"
#define PKT_V6_CLIENT "2001:db8:ffff::10"
#define PKT_V6_SERVER "2001:db8::1"
#define PKT_SPORT 40000
#define PKT_DPORT 8080
#define PKT_SEQ 0x12345678u    /* initial sequence number of the client */
#define PKT_ACK_SEQ 0x0badf00du /* acknowledgement number when ACK is set */

static const __u8 pkt_client_mac[ETH_ALEN] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0c };
static const __u8 pkt_server_mac[ETH_ALEN] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x05 };

/* TCP flags, as in the 14th byte of the header. */
#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10
#define TCP_URG 0x20
#define TCP_ECE 0x40
#define TCP_CWR 0x80

#define PKT_IP_DF 0x4000  /* IPv4 frag_off: don't fragment */
#define PKT_IP_MF 0x2000  /* IPv4 frag_off: more fragments */
#define PKT_IP6_MF 0x0001 /* IPv6 fragment header: more fragments */

#define PKT_PACKED __attribute__((packed))

struct pkt_eth {
	__u8 dst[ETH_ALEN];
	__u8 src[ETH_ALEN];
	__be16 proto;
} PKT_PACKED;

struct pkt_vlan {
	__be16 tci;
	__be16 proto; /* ethertype of what follows */
} PKT_PACKED;

struct pkt_ipv4 {
	__u8 ver_ihl;     /* version << 4 | header length in 4-byte words */
	__u8 tos;
	__be16 tot_len;
	__be16 id;
	__be16 frag_off;  /* flags | offset in 8-byte units */
	__u8 ttl;
	__u8 protocol;
	__be16 check;
	__u8 saddr[4];
	__u8 daddr[4];
} PKT_PACKED;

struct pkt_ipv6 {
	__be32 ver_tc_flow; /* version << 28 | traffic class << 20 | flow label */
	__be16 payload_len;
	__u8 nexthdr;
	__u8 hop_limit;
	__u8 saddr[16];
	__u8 daddr[16];
} PKT_PACKED;

/* Hop-by-hop, routing and destination options: this head, then
 * (hdrlen + 1) * 8 - 2 bytes of options or routing data. */
struct pkt_ipv6_ext {
	__u8 nexthdr;
	__u8 hdrlen;
} PKT_PACKED;

struct pkt_ipv6_frag {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off; /* offset << 3 | M */
	__be32 id;
} PKT_PACKED;

/* Authentication header: its length is counted in 4-byte units minus 2. */
struct pkt_ipv6_ah {
	__u8 nexthdr;
	__u8 hdrlen;
	__be16 reserved;
	__be32 spi;
	__be32 seq;
	__u8 icv[12]; /* HMAC-SHA1-96 */
} PKT_PACKED;

struct pkt_tcp {
	__be16 sport;
	__be16 dport;
	__be32 seq;
	__be32 ack_seq;
	__u8 doff_res; /* data offset in 4-byte words << 4 */
	__u8 flags;
	__be16 window;
	__be16 check;
	__be16 urg_ptr;
} PKT_PACKED;

struct pkt_udp {
	__be16 sport;
	__be16 dport;
	__be16 len;
	__be16 check;
} PKT_PACKED;

struct pkt_arp {
	__be16 htype;
	__be16 ptype;
	__u8 hlen;
	__u8 plen;
	__be16 oper;
	__u8 sha[ETH_ALEN];
	__u8 spa[4];
	__u8 tha[ETH_ALEN];
	__u8 tpa[4];
} PKT_PACKED;

_Static_assert(sizeof(struct pkt_eth) == 14, "Ethernet header");
_Static_assert(sizeof(struct pkt_vlan) == 4, "VLAN tag");
_Static_assert(sizeof(struct pkt_ipv4) == 20, "IPv4 header");
_Static_assert(sizeof(struct pkt_ipv6) == 40, "IPv6 header");
_Static_assert(sizeof(struct pkt_ipv6_frag) == 8, "IPv6 fragment header");
_Static_assert(sizeof(struct pkt_ipv6_ah) == 24, "IPv6 AH");
_Static_assert(sizeof(struct pkt_tcp) == 20, "TCP header");
_Static_assert(sizeof(struct pkt_udp) == 8, "UDP header");
_Static_assert(sizeof(struct pkt_arp) == 28, "ARP for IPv4 over Ethernet");

/* What to build. A zero field takes the default named beside it, so a spec
 * names only what makes its case special. */
struct pkt_spec {
	__u16 l3;          /* ethertype: ETH_P_IP (0), ETH_P_IPV6, ETH_P_ARP, other */
	int vlans;         /* 0, 1 (802.1Q), 2+ (802.1ad, then 802.1Q tags) */
	int vid0;          /* 1: every tag a priority tag (VID 0, PCP 5);
			    * else VIDs 100, 101, ... */
	const char *saddr; /* PKT_V4_CLIENT / PKT_V6_CLIENT */
	const char *daddr; /* PKT_V4_SERVER / PKT_V6_SERVER */
	unsigned int ip_opt_len; /* IPv4 option bytes: multiple of 4, <= 40 */
	__u16 frag;        /* IPv4 frag_off, or the IPv6 fragment header's */
	int nr_ext;        /* IPv6 extension headers, in wire order: */
	__u8 ext[PKT_MAX_EXT]; /* IPPROTO_HOPOPTS, _ROUTING, _DSTOPTS, _AH, _FRAGMENT */
	/* Bytes of each options or routing header (a multiple of 8, 8 to
	 * 2048; 0: the default size below). Options given a length are
	 * skippable ones (type 0x1e); a routing header given a length
	 * is of an unknown type (253, RFC 4727's experiment) with Segments
	 * Left 0, which Linux skips (ipv6_rthdr_rcv()). */
	unsigned int ext_len[PKT_MAX_EXT];
	__u8 l4;           /* IPPROTO_TCP (0), IPPROTO_UDP, other: 8 opaque bytes */
	__u8 flags;        /* TCP flags; always given */
	__u16 sport;       /* PKT_SPORT */
	__u16 dport;       /* PKT_DPORT */
	__u32 seq;         /* PKT_SEQ */
	int tcp_opts;      /* 1: the 20 option bytes of a Linux SYN (doff 10) */
	unsigned int payload_len; /* bytes after the L4 header */
	unsigned int pad_to; /* zero-pad the frame to this length, outside the
			      * IP lengths, as Ethernet pads below 60 bytes */
	/* TCP options given byte by byte (a multiple of 4, at most 40), in
	 * place of tcp_opts; ack_seq replaces PKT_ACK_SEQ when ACK is set. */
	const __u8 *opt_bytes;
	unsigned int opt_len;
	__u32 ack_seq;
};

/* Where one header starts, to name a cut. */
struct pkt_mark {
	size_t off;
	const char *what;
};

/* A built frame and what the checks need to know about it. */
struct pkt {
	__u8 data[PKT_MAX];
	size_t len;
	struct pkt_mark marks[PKT_MAX_MARKS];
	int nr_marks;
	int nr_vlans;
	__u16 l3_proto;      /* host order */
	__u8 l4_proto;
	size_t l3_off;       /* after the Ethernet header and VLAN tags */
	size_t l4_off;       /* after IP options / IPv6 extension headers */
	size_t hdr_end;      /* end of the last header the program must read */
	__u8 saddr[16];      /* IPv4 uses the first 4 bytes */
	__u8 daddr[16];
	__u16 sport, dport;
	__u32 seq;
	__u8 flags;
	size_t payload_len;
};

/* A spec the builder cannot honour is a bug in the test table: stop. */
static inline void pkt_bug(const char *what)
{
	fprintf(stderr, "packets.h: %s\n", what);
	abort();
}

/* Append @n zeroed bytes for the header @what (NULL: no mark). */
static inline void *pkt_put(struct pkt *p, size_t n, const char *what)
{
	void *h;

	if (p->len + n > PKT_MAX)
		pkt_bug("frame longer than PKT_MAX");
	h = p->data + p->len;
	memset(h, 0, n);
	if (what && n) {
		if (p->nr_marks >= PKT_MAX_MARKS)
			pkt_bug("too many headers");
		p->marks[p->nr_marks].off = p->len;
		p->marks[p->nr_marks].what = what;
		p->nr_marks++;
	}
	p->len += n;
	return h;
}

/* One's-complement sum of big-endian 16-bit words; an odd last byte is
 * padded with zero (RFC 1071). Byte by byte, so it shares nothing with the
 * word-wise sum of bpf/rst.h. */
static inline __u64 pkt_csum_add(__u64 sum, const void *buf, size_t len)
{
	const __u8 *b = buf;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (__u32)b[i] << 8 | b[i + 1];
	if (len & 1)
		sum += (__u32)b[len - 1] << 8;
	return sum;
}

/* Fold to 16 bits and complement: the value to store, in host order. */
static inline __u16 pkt_csum_fold(__u64 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* Checksum of the IPv4 header at @ip, @hlen bytes, as if its check field
 * were zero. Host order. */
static inline __u16 pkt_ipv4_csum(const void *ip, size_t hlen)
{
	__u8 h[60];

	if (hlen > sizeof(h))
		pkt_bug("IPv4 header longer than 60 bytes");
	memcpy(h, ip, hlen);
	h[offsetof(struct pkt_ipv4, check)] = 0;
	h[offsetof(struct pkt_ipv4, check) + 1] = 0;
	return pkt_csum_fold(pkt_csum_add(0, h, hlen));
}

/* TCP or UDP checksum of the @len-byte segment at @seg, whose check field
 * is at @check_off and is taken as zero, over the IPv4 (@v6 = 0) or IPv6
 * pseudo header. Host order. */
static inline __u16 pkt_l4_csum(int v6, const __u8 *saddr, const __u8 *daddr,
				__u8 proto, const void *seg, size_t len,
				size_t check_off)
{
	size_t alen = v6 ? 16 : 4;
	__u8 buf[PKT_MAX];
	__u64 sum;

	if (len > sizeof(buf))
		pkt_bug("segment longer than PKT_MAX");
	memcpy(buf, seg, len);
	buf[check_off] = 0;
	buf[check_off + 1] = 0;
	sum = pkt_csum_add(0, saddr, alen);
	sum = pkt_csum_add(sum, daddr, alen);
	/* IPv4: zero, protocol, 16-bit length. IPv6: 32-bit length, three
	 * zero bytes, next header. Both add up to proto + len here. */
	sum += proto;
	sum += (__u32)len;
	sum = pkt_csum_add(sum, buf, len);
	return pkt_csum_fold(sum);
}

static inline void pkt_addr(int family, const char *text, __u8 *addr)
{
	if (inet_pton(family, text, addr) != 1)
		pkt_bug(text);
}

static inline void pkt_put_eth(struct pkt *p, __u16 proto)
{
	struct pkt_eth *eth = pkt_put(p, sizeof(*eth), "Ethernet header");

	memcpy(eth->dst, pkt_server_mac, ETH_ALEN);
	memcpy(eth->src, pkt_client_mac, ETH_ALEN);
	eth->proto = htons(proto);
}

static inline void pkt_put_vlan(struct pkt *p, __u16 tpid, __u16 vid,
				__u16 proto)
{
	struct pkt_vlan *tag = pkt_put(p, sizeof(*tag), tpid == ETH_P_8021AD ?
				       "802.1ad tag" : "802.1Q tag");

	tag->tci = htons(vid);
	tag->proto = htons(proto);
}

/* Options: a router alert (RFC 2113), NOPs, and an end-of-list last. */
static inline void pkt_put_ipv4(struct pkt *p, const struct pkt_spec *s,
				__u8 proto)
{
	struct pkt_ipv4 *ip = pkt_put(p, sizeof(*ip), "IPv4 header");
	unsigned int n = s->ip_opt_len;

	if (n % 4 || n > 40)
		pkt_bug("IPv4 options must be a multiple of 4, at most 40 bytes");
	ip->ver_ihl = 0x40 | (sizeof(*ip) + n) / 4;
	ip->id = htons(0x5eed);
	ip->frag_off = htons(s->frag);
	ip->ttl = 64;
	ip->protocol = proto;
	memcpy(ip->saddr, p->saddr, 4);
	memcpy(ip->daddr, p->daddr, 4);
	if (n) {
		__u8 *opt = pkt_put(p, n, "IPv4 options");

		memset(opt, 1, n); /* NOP */
		opt[0] = 0x94;     /* router alert, copied on fragmentation */
		opt[1] = 4;
		opt[2] = 0;
		opt[3] = 0;
		if (n > 4)
			opt[n - 1] = 0; /* end of options list */
	}
}

/* Sizes: hop-by-hop 8 bytes, destination options 16 (so hdrlen is not
 * always 0), routing 24 (type 2, one address), AH 24, fragment 8; or @len
 * bytes of skippable options or of a routing header of type 253 (0: the
 * default). */
static inline void pkt_put_ipv6_ext(struct pkt *p, __u8 type, __u8 next,
				    __u16 frag, unsigned int len)
{
	if (len && (len % 8 || len > 2048 ||
		    (type != IPPROTO_HOPOPTS && type != IPPROTO_DSTOPTS &&
		     type != IPPROTO_ROUTING)))
		pkt_bug("IPv6 extension header length");
	switch (type) {
	case IPPROTO_HOPOPTS:
	case IPPROTO_DSTOPTS: {
		size_t n = len ? len : type == IPPROTO_HOPOPTS ? 8 : 16, i, d;
		__u8 *h = pkt_put(p, n, type == IPPROTO_HOPOPTS ?
				  "hop-by-hop options header" :
				  "destination options header");

		h[0] = next;
		h[1] = (__u8)(n / 8 - 1);
		if (!len) {
			h[2] = 1; /* PadN over the rest */
			h[3] = (__u8)(n - 4);
			break;
		}
		/* Options of type 0x1e (RFC 3692's experiment; action 00:
		 * skip it), 255 bytes of data at most each, and Pad1 for a
		 * last byte: Linux refuses PadN over 7 bytes (ip6_parse_tlv()). */
		for (i = 2; i < n; i += 2 + d) {
			if (n - i == 1) {
				h[i] = 0; /* Pad1 */
				break;
			}
			d = n - i - 2 > 255 ? 255 : n - i - 2;
			if (n - i - 2 - d == 1)
				d--;
			h[i] = 0x1e;
			h[i + 1] = (__u8)d;
			memset(h + i + 2, 0x5a, d);
		}
		break;
	}
	case IPPROTO_ROUTING: {
		__u8 *h = pkt_put(p, len ? len : 24, "routing header");

		h[0] = next;
		if (len) {
			h[1] = (__u8)(len / 8 - 1);
			h[2] = 253; /* a type this host does not know */
			h[3] = 0;   /* segments left: skipped */
			memset(h + 4, 0, len - 4);
			break;
		}
		h[1] = 2;
		h[2] = 2; /* type 2: one home address */
		h[3] = 0; /* segments left: this is the final destination */
		pkt_addr(AF_INET6, "2001:db8:2::1", h + 8);
		break;
	}
	case IPPROTO_AH: {
		struct pkt_ipv6_ah *ah = pkt_put(p, sizeof(*ah),
						 "authentication header");

		ah->nexthdr = next;
		ah->hdrlen = sizeof(*ah) / 4 - 2;
		ah->spi = htonl(0x100);
		ah->seq = htonl(1);
		memset(ah->icv, 0xa5, sizeof(ah->icv));
		break;
	}
	case IPPROTO_FRAGMENT: {
		struct pkt_ipv6_frag *fh = pkt_put(p, sizeof(*fh),
						   "fragment header");

		fh->nexthdr = next;
		fh->frag_off = htons(frag);
		fh->id = htonl(0xf00d);
		break;
	}
	default:
		pkt_bug("unknown IPv6 extension header");
	}
}

static inline void pkt_put_ipv6(struct pkt *p, const struct pkt_spec *s,
				__u8 proto)
{
	struct pkt_ipv6 *ip6 = pkt_put(p, sizeof(*ip6), "IPv6 header");
	int i;

	if (s->nr_ext < 0 || s->nr_ext > PKT_MAX_EXT)
		pkt_bug("too many IPv6 extension headers");
	ip6->ver_tc_flow = htonl(6u << 28);
	ip6->nexthdr = s->nr_ext ? s->ext[0] : proto;
	ip6->hop_limit = 64;
	memcpy(ip6->saddr, p->saddr, 16);
	memcpy(ip6->daddr, p->daddr, 16);
	for (i = 0; i < s->nr_ext; i++)
		pkt_put_ipv6_ext(p, s->ext[i],
				 i + 1 < s->nr_ext ? s->ext[i + 1] : proto,
				 s->frag, s->ext_len[i]);
}

/* With options: what Linux puts in a SYN - MSS 1460, SACK permitted,
 * timestamps, NOP, window scale 7. */
static inline void pkt_put_tcp(struct pkt *p, const struct pkt_spec *s)
{
	struct pkt_tcp *tcp = pkt_put(p, sizeof(*tcp), "TCP header");
	size_t opt_len = s->opt_len ? s->opt_len : s->tcp_opts ? 20 : 0;

	if (opt_len % 4 || opt_len > 40)
		pkt_bug("TCP options must be a multiple of 4, at most 40 bytes");
	tcp->sport = htons(p->sport);
	tcp->dport = htons(p->dport);
	tcp->seq = htonl(p->seq);
	tcp->ack_seq = htonl(!(s->flags & TCP_ACK) ? 0 :
			     s->ack_seq ? s->ack_seq : PKT_ACK_SEQ);
	tcp->doff_res = (__u8)((sizeof(*tcp) + opt_len) / 4 << 4);
	tcp->flags = s->flags;
	tcp->window = htons(64240);
	if (s->opt_len) {
		memcpy(pkt_put(p, opt_len, "TCP options"), s->opt_bytes, opt_len);
	} else if (opt_len) {
		static const __u8 opts[20] = {
			2, 4, 0x05, 0xb4,             /* MSS 1460 */
			4, 2,                         /* SACK permitted */
			8, 10, 0, 0, 0x12, 0x34, 0, 0, 0, 0, /* timestamps */
			1,                            /* NOP */
			3, 3, 7,                      /* window scale 7 */
		};

		memcpy(pkt_put(p, opt_len, "TCP options"), opts, opt_len);
	}
}

static inline void pkt_put_arp(struct pkt *p, const struct pkt_spec *s)
{
	struct pkt_arp *arp = pkt_put(p, sizeof(*arp), "ARP header");

	arp->htype = htons(1);
	arp->ptype = htons(ETH_P_IP);
	arp->hlen = ETH_ALEN;
	arp->plen = 4;
	arp->oper = htons(1); /* request */
	memcpy(arp->sha, pkt_client_mac, ETH_ALEN);
	pkt_addr(AF_INET, s->saddr ? s->saddr : PKT_V4_CLIENT, arp->spa);
	pkt_addr(AF_INET, s->daddr ? s->daddr : PKT_V4_SERVER, arp->tpa);
}

/* Lengths and checksums, once every byte is in place. */
static inline void pkt_finish(struct pkt *p)
{
	int v6 = p->l3_proto == ETH_P_IPV6;
	size_t l4_len = p->len - p->l4_off;

	if (p->l3_proto == ETH_P_IP) {
		struct pkt_ipv4 *ip = (void *)(p->data + p->l3_off);
		size_t hlen = (ip->ver_ihl & 0xf) * 4;

		ip->tot_len = htons(p->len - p->l3_off);
		ip->check = htons(pkt_ipv4_csum(ip, hlen));
	} else if (v6) {
		struct pkt_ipv6 *ip6 = (void *)(p->data + p->l3_off);

		ip6->payload_len = htons(p->len - p->l3_off - sizeof(*ip6));
	} else {
		return;
	}

	if (p->l4_proto == IPPROTO_TCP) {
		struct pkt_tcp *tcp = (void *)(p->data + p->l4_off);

		tcp->check = htons(pkt_l4_csum(v6, p->saddr, p->daddr,
					       IPPROTO_TCP, tcp, l4_len,
					       offsetof(struct pkt_tcp, check)));
	} else if (p->l4_proto == IPPROTO_UDP) {
		struct pkt_udp *udp = (void *)(p->data + p->l4_off);
		__u16 sum;

		udp->len = htons(l4_len);
		sum = pkt_l4_csum(v6, p->saddr, p->daddr, IPPROTO_UDP, udp,
				  l4_len, offsetof(struct pkt_udp, check));
		udp->check = htons(sum ? sum : 0xffff);
	}
}

/* Build the frame @s describes into @p. */
static inline void pkt_build(struct pkt *p, const struct pkt_spec *s)
{
	__u16 chain[PKT_MAX_VLANS + 1]; /* ethertype after eth and each tag */
	__u8 *payload;
	size_t i;

	memset(p, 0, sizeof(*p));
	p->l3_proto = s->l3 ? s->l3 : ETH_P_IP;
	p->l4_proto = s->l4 ? s->l4 : IPPROTO_TCP;
	p->nr_vlans = s->vlans;
	p->sport = s->sport ? s->sport : PKT_SPORT;
	p->dport = s->dport ? s->dport : PKT_DPORT;
	p->seq = s->seq ? s->seq : PKT_SEQ;
	p->flags = s->flags;
	p->payload_len = s->payload_len;
	if (s->vlans < 0 || s->vlans > PKT_MAX_VLANS)
		pkt_bug("too many VLAN tags");

	/* 802.1ad outside when there is more than one tag, 802.1Q inside. */
	for (i = 0; i < (size_t)s->vlans; i++)
		chain[i] = i == 0 && s->vlans > 1 ? ETH_P_8021AD : ETH_P_8021Q;
	chain[s->vlans] = p->l3_proto;
	pkt_put_eth(p, chain[0]);
	for (i = 0; i < (size_t)s->vlans; i++)
		pkt_put_vlan(p, chain[i], s->vid0 ? 5 << 13 : 100 + i, chain[i + 1]);
	p->l3_off = p->len;

	switch (p->l3_proto) {
	case ETH_P_IP:
		pkt_addr(AF_INET, s->saddr ? s->saddr : PKT_V4_CLIENT, p->saddr);
		pkt_addr(AF_INET, s->daddr ? s->daddr : PKT_V4_SERVER, p->daddr);
		pkt_put_ipv4(p, s, p->l4_proto);
		break;
	case ETH_P_IPV6:
		pkt_addr(AF_INET6, s->saddr ? s->saddr : PKT_V6_CLIENT, p->saddr);
		pkt_addr(AF_INET6, s->daddr ? s->daddr : PKT_V6_SERVER, p->daddr);
		pkt_put_ipv6(p, s, p->l4_proto);
		break;
	case ETH_P_ARP:
		pkt_put_arp(p, s);
		p->l4_off = p->hdr_end = p->len;
		return;
	default: /* LLDP and the like: opaque bytes up to the minimum frame */
		pkt_put(p, 46, "payload");
		p->l4_off = p->hdr_end = p->len;
		return;
	}

	p->l4_off = p->len;
	switch (p->l4_proto) {
	case IPPROTO_TCP:
		pkt_put_tcp(p, s);
		break;
	case IPPROTO_UDP: {
		struct pkt_udp *udp = pkt_put(p, sizeof(*udp), "UDP header");

		udp->sport = htons(p->sport);
		udp->dport = htons(p->dport);
		break;
	}
	default:
		pkt_put(p, 8, "L4 header");
	}
	p->hdr_end = p->len;

	payload = pkt_put(p, s->payload_len, "payload");
	for (i = 0; i < s->payload_len; i++)
		payload[i] = (__u8)('a' + i % 26);
	pkt_finish(p);
	if (p->len < s->pad_to)
		pkt_put(p, s->pad_to - p->len, "Ethernet padding");
}

/* Offset of the first header named @what, or the frame length if none. */
static inline size_t pkt_mark_off(const struct pkt *p, const char *what)
{
	int i;

	for (i = 0; i < p->nr_marks; i++)
		if (strcmp(p->marks[i].what, what) == 0)
			return p->marks[i].off;
	pkt_bug(what);
	return p->len;
}

/* Say where a frame cut to @len bytes ends, e.g. "3 of 8 bytes into the
 * IPv4 options" or "at the start of the TCP header". */
static inline void pkt_describe_cut(const struct pkt *p, size_t len,
				    char *buf, size_t size)
{
	int i;

	if (len >= p->len) {
		snprintf(buf, size, "the whole frame");
		return;
	}
	for (i = p->nr_marks - 1; i >= 0; i--) {
		const struct pkt_mark *m = &p->marks[i];
		size_t end = i + 1 < p->nr_marks ? p->marks[i + 1].off : p->len;

		if (m->off > len)
			continue;
		if (m->off == len)
			snprintf(buf, size, "at the start of the %s", m->what);
		else
			snprintf(buf, size, "%zu of %zu bytes into the %s",
				 len - m->off, end - m->off, m->what);
		return;
	}
	snprintf(buf, size, "before any header");
}

#endif /* SHEDD_TEST_PACKETS_H */
