/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* parsing.h - bounds-checked header parsing with a cursor, shared by the
 * XDP program and the tc hand-off so that both see the same packet. Every
 * helper checks that the whole header lies before data_end before it
 * reads, and returns PARSE_* so the caller counts why a packet was passed
 * or refused.
 * The rule is that of the kernel behind us: whatever it would deliver to a
 * listener as a new connection comes out PARSE_OK, fragments included;
 * what we cannot judge but the kernel could deliver comes out *_REFUSED.
 */
#ifndef SHEDD_PARSING_H
#define SHEDD_PARSING_H

#define ETH_ALEN 6
#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_P_8021Q 0x8100
#define ETH_P_8021AD 0x88A8
#define IP_MF 0x2000
#define IP_OFFSET 0x1FFF

#define IPPROTO_HOPOPTS_ 0
#define IPPROTO_ROUTING_ 43
#define IPPROTO_FRAGMENT_ 44
#define IPPROTO_AH_ 51
#define IPPROTO_DSTOPTS_ 60

enum parse_result {
	PARSE_OK = 0,
	PARSE_MALFORMED,
	PARSE_NON_IP,
	PARSE_NON_TCP,
	PARSE_FRAGMENT,     /* not the first fragment: passed, the first is judged */
	PARSE_FRAG_REFUSED, /* a TCP fragment we must not pass: dropped */
	PARSE_TOO_DEEP,     /* IPv6 chain or VLAN stack longer than the walk: dropped */
};

#define TCP_MIN_HLEN 20 /* a TCP header without options */

/* Masks above the longest l2_len (Ethernet and MAX_VLAN_TAGS tags) and
 * l3_len (IPv6 and MAX_IPV6_EXT_HDRS headers of 2048 bytes at most) a
 * parse gives, to bound offsets for the verifier after a helper call. */
#define PARSE_MAX_L2_MASK 63
#define PARSE_MAX_L3_MASK 0x3fff
_Static_assert(14 + 4 * MAX_VLAN_TAGS <= PARSE_MAX_L2_MASK, "l2_len within its mask");
_Static_assert(40 + 2048 * MAX_IPV6_EXT_HDRS <= PARSE_MAX_L3_MASK, "l3_len within its mask");

struct cursor {
	void *pos;
	void *end;
};

/* 802.1Q / 802.1ad tag, as it follows the two MAC addresses (after the
 * first one, which a NIC or the kernel may have taken out of the frame
 * into the descriptor or skb->vlan_tci: XDP and tc see what is left). */
struct vlan_tag {
	__be16 tci;
	__be16 proto; /* the ethertype of what follows */
};

/* What the parser learnt of a packet, in wire order. */
struct pkt {
	struct ethhdr *eth;
	void *l3;           /* struct iphdr or struct ipv6hdr */
	struct tcphdr *tcp;
	__u16 l3_proto;     /* ETH_P_IP or ETH_P_IPV6, host order */
	__u16 l2_len;       /* Ethernet header and VLAN tags */
	__u16 l3_len;       /* IP header, options and extension headers */
	__u16 nr_vlans;
	__u16 l4_len;       /* TCP header and data, from the IP length fields */
	__u8 first_frag;    /* an IP first fragment: judged, never answered */
	__u8 l4_proto;      /* PARSE_NON_TCP only: the protocol after l3 */
};

/*
 * verifier_bound() - AND the 64-bit @v with @mask in the register that
 * holds it. For values already known (to the code) to fit, so it changes
 * nothing but what the verifier knows: clang drops a plain AND it can
 * prove redundant, never an asm one. The verifiers of Debian 12's kernels
 * (6.1, 6.12) lose bounds the 6.18 one keeps: a byte swap (bpf_ntohs) is
 * an unknown 64-bit scalar to them, and a bound learned on a copy of a
 * spilled value does not reach the value filled again.
 */
#define verifier_bound(v, mask) asm volatile("%[x] &= %[m]" : [x] "+r"(v) : [m] "i"(mask))

/* bpf_ntohs() of a header field, bounded to 16 bits for every verifier. */
static __always_inline __u32 ntohs_bounded(__be16 field)
{
	__u64 v = bpf_ntohs(field);

	verifier_bound(v, 0xffff);
	return v;
}

/* An IP packet that is not TCP: where its payload lies and what it is,
 * for the tunnel hook (bpf/tunnel.h), then PARSE_NON_TCP. */
static __always_inline int parse_other(struct pkt *p, void *l3, __u32 l3_len, __u32 l4_len,
				       __u8 proto)
{
	p->l3 = l3;
	p->l3_len = (__u16)l3_len;
	p->l4_len = (__u16)l4_len;
	p->l4_proto = proto;
	return PARSE_NON_TCP;
}

static __always_inline int parse_eth(struct cursor *c, struct pkt *p)
{
	struct ethhdr *eth = c->pos;
	__u16 proto;
	int i;

	if ((void *)(eth + 1) > c->end)
		return PARSE_MALFORMED;
	p->eth = eth;
	c->pos = eth + 1;
	proto = bpf_ntohs(eth->h_proto);

#pragma unroll
	for (i = 0; i < MAX_VLAN_TAGS; i++) {
		struct vlan_tag *tag = c->pos;

		if (proto != ETH_P_8021Q && proto != ETH_P_8021AD)
			break;
		if ((void *)(tag + 1) > c->end)
			return PARSE_MALFORMED;
		proto = bpf_ntohs(tag->proto);
		c->pos = tag + 1;
		p->nr_vlans++;
	}
	/* Still tagged after the walk: the kernel strips priority (VID 0)
	 * tags without end and follows VLAN devices (__netif_receive_skb_core,
	 * check_vlan_id), so a SYN may be behind. Refuse, never pass. */
	if (proto == ETH_P_8021Q || proto == ETH_P_8021AD)
		return PARSE_TOO_DEEP;
	if (proto != ETH_P_IP && proto != ETH_P_IPV6)
		return PARSE_NON_IP;
	p->l3_proto = proto;
	p->l2_len = (__u16)(c->pos - (void *)eth);
	return PARSE_OK;
}

/* IPv4, with the datagram length checked against the frame and the
 * headers (the kernel drops a datagram longer than its frame, and trims
 * one shorter, so a TCP header past tot_len is never delivered).
 * Fragments (RFC 791 offsets in 8-byte units): a first fragment (offset 0,
 * MF) that holds the whole fixed TCP header is parsed on like a datagram,
 * since the kernel reassembles it and delivers its SYN; a TCP first
 * fragment too short for the flags and data offset (RFC 1858 tiny
 * fragment) and a TCP fragment at offset 1, which could rewrite them, are
 * refused; later fragments pass, their first one having been judged. */
static __always_inline int parse_ipv4(struct cursor *c, struct pkt *p)
{
	struct iphdr *ip = c->pos;
	__u32 hlen, tot_len, off;

	if ((void *)(ip + 1) > c->end)
		return PARSE_MALFORMED;
	if (ip->version != 4 || ip->ihl < 5)
		return PARSE_MALFORMED;
	hlen = ip->ihl * 4;
	/* Re-check the variable length: options must be there too. */
	if (c->pos + hlen > c->end)
		return PARSE_MALFORMED;
	tot_len = ntohs_bounded(ip->tot_len);
	/* first_frag already set: a datagram inside the first fragment of
	 * a tunnel's packet (bpf/tunnel.h), which goes on in the next ones. */
	if (tot_len < hlen || (!p->first_frag && c->pos + tot_len > c->end))
		return PARSE_MALFORMED;
	off = bpf_ntohs(ip->frag_off) & IP_OFFSET;
	if (ip->frag_off & bpf_htons(IP_MF | IP_OFFSET)) {
		if (ip->protocol != IPPROTO_TCP || off > 1) {
			/* A first fragment of another protocol may be a
			 * tunnel's: noted for the tunnel hook. */
			if (off == 0) {
				p->first_frag = 1;
				parse_other(p, ip, hlen, tot_len - hlen, ip->protocol);
			}
			return PARSE_FRAGMENT;
		}
		if (off == 1 || tot_len - hlen < TCP_MIN_HLEN)
			return PARSE_FRAG_REFUSED;
		p->first_frag = 1;
	}
	if (ip->protocol != IPPROTO_TCP)
		return parse_other(p, ip, hlen, tot_len - hlen, ip->protocol);
	p->l3 = ip;
	p->l3_len = hlen;
	p->l4_len = tot_len - hlen;
	c->pos += hlen;
	return PARSE_OK;
}

static __always_inline int ipv6_is_ext(__u8 next)
{
	return next == IPPROTO_HOPOPTS_ || next == IPPROTO_ROUTING_ ||
	       next == IPPROTO_DSTOPTS_ || next == IPPROTO_AH_ ||
	       next == IPPROTO_FRAGMENT_;
}

/* A Fragment header (RFC 8200 4.5): offset in 8-byte units, then M. */
struct frag6_hdr {
	__u8 nexthdr;
	__u8 reserved;
	__be16 frag_off;
	__be32 id;
};

/* IPv6: a bounded walk over the extension headers. A Fragment header with
 * offset 0 and M set starts a first fragment: RFC 7112 puts the whole
 * chain and the TCP header in it, so the walk goes on and the SYN is
 * judged; a first fragment without them is refused. Offset 0 without M
 * is an atomic fragment (RFC 6946), an ordinary datagram. A TCP (or
 * extension) fragment at offset 1 is refused, later fragments pass. A
 * chain the walk cannot finish is refused, never passed unjudged. */
static __always_inline int parse_ipv6(struct cursor *c, struct pkt *p)
{
	struct ipv6hdr *ip6 = c->pos;
	__u32 end_off, l3_len;
	__u8 next;
	int i;

	if ((void *)(ip6 + 1) > c->end)
		return PARSE_MALFORMED;
	if (ip6->version != 6)
		return PARSE_MALFORMED;
	/* The kernel drops a datagram longer than its frame. */
	end_off = sizeof(*ip6) + ntohs_bounded(ip6->payload_len);
	if (!p->first_frag && c->pos + end_off > c->end)
		return PARSE_MALFORMED;
	next = ip6->nexthdr;
	c->pos = ip6 + 1;

#pragma unroll
	for (i = 0; i < MAX_IPV6_EXT_HDRS; i++) {
		struct ipv6_opt_hdr *opt = c->pos;
		__u32 len;

		if (next == IPPROTO_FRAGMENT_) {
			struct frag6_hdr *fh = c->pos;
			__u16 fo;

			/* The header must end inside the datagram, not
			 * only the frame: what it says decides the verdict. */
			if ((void *)(fh + 1) > c->end ||
			    (__u32)((void *)(fh + 1) - (void *)ip6) > end_off)
				goto short_chain;
			fo = bpf_ntohs(fh->frag_off);
			if (fo >> 3) {
				if (fo >> 3 == 1 && (fh->nexthdr == IPPROTO_TCP ||
						     ipv6_is_ext(fh->nexthdr)))
					return PARSE_FRAG_REFUSED;
				return PARSE_FRAGMENT;
			}
			if (fo & 1)
				p->first_frag = 1;
			next = fh->nexthdr;
			c->pos = fh + 1;
			continue;
		}
		if (!ipv6_is_ext(next))
			break;
		if ((void *)(opt + 1) > c->end)
			goto short_chain;
		/* AH counts its length in 4-byte units minus 2, the others
		 * in 8-byte units not counting the first 8 bytes. */
		if (next == IPPROTO_AH_)
			len = ((__u32)opt->hdrlen + 2) * 4;
		else
			len = ((__u32)opt->hdrlen + 1) * 8;
		if (c->pos + len > c->end)
			goto short_chain;
		next = opt->nexthdr;
		c->pos += len;
	}
	/* The headers walked must end inside the datagram (payload_len),
	 * which may be shorter than the frame. */
	l3_len = c->pos - (void *)ip6;
	if (l3_len > end_off)
		goto short_chain;
	/* Still an extension header after the walk: we cannot see what it
	 * leads to, and the kernel walks on. Refuse rather than pass. */
	if (ipv6_is_ext(next))
		return PARSE_TOO_DEEP;
	if (next != IPPROTO_TCP)
		return parse_other(p, ip6, l3_len, end_off - l3_len, next);
	if (p->first_frag && end_off - l3_len < TCP_MIN_HLEN)
		return PARSE_FRAG_REFUSED;
	p->l3 = ip6;
	p->l3_len = (__u16)l3_len;
	p->l4_len = (__u16)(end_off - l3_len);
	return PARSE_OK;
short_chain:
	/* A datagram cut inside its chain is dropped by the kernel; a first
	 * fragment whose chain goes on in the next one is what RFC 7112
	 * forbids, and reassembly could still deliver it: refuse. */
	return p->first_frag ? PARSE_FRAG_REFUSED : PARSE_MALFORMED;
}

/* TCP: the fixed header must be in the frame and, with its options,
 * inside the datagram. In a first fragment the options may go on in the
 * next fragment: only the fixed header is needed to judge. */
static __always_inline int parse_tcp(struct cursor *c, struct pkt *p)
{
	struct tcphdr *tcp = c->pos;
	__u32 hlen;

	if ((void *)(tcp + 1) > c->end)
		return PARSE_MALFORMED;
	if (tcp->doff < 5)
		return PARSE_MALFORMED;
	hlen = tcp->doff * 4;
	if (!p->first_frag && hlen > p->l4_len)
		return PARSE_MALFORMED;
	p->tcp = tcp;
	return PARSE_OK;
}

/* An ACK that may end a handshake: no SYN, no RST. A first fragment too:
 * the kernel reassembles it, and the fixed TCP header it holds is all a
 * cookie check reads. The XDP program and the tc hand-off ask the same
 * question of the same parse (the tc hand-off then leaves a fragment to
 * the kernel: it meets it before reassembly). */
static __always_inline int pkt_handshake_ack(const struct pkt *p)
{
	return p->tcp->ack && !p->tcp->syn && !p->tcp->rst;
}

/*
 * The parse packed into 64 bits, for a parser split into global functions
 * (shedd_parse() and shedd_parse_ip() at XDP, shedd_parse_skb() and
 * shedd_parse_skb_ip() at tc). The verifier then walks the
 * parser's paths (every depth of VLAN stack and IPv6 chain) once, and what
 * judges the packet once, with the offsets as bounded unknowns, instead of
 * once for every path of the parser that reaches it: inlined, the two
 * multiply past the verifier's budget.
 *
 * bits 0-3 enum parse_result; 4 IPv6; 5 first fragment; 8-15 the VLAN
 * tags (PARSE_OK) or the protocol after the IP header (PARSE_NON_TCP, and
 * PARSE_FRAGMENT for a first fragment: for the tunnel hook); 16-31 l2_len;
 * 32-47 l3_len; 48-63 l4_len.
 */
#define PM_V6 (1ULL << 4)
#define PM_FIRST_FRAG (1ULL << 5)
#define PM_RESULT(m) ((int)((m) & 0xf))
#define PM_BYTE(m) ((__u8)((m) >> 8))
#define PM_L2(m) (((m) >> 16) & 0xffff)
#define PM_L3(m) (((m) >> 32) & 0xffff)
#define PM_L4(m) ((m) >> 48)

/*
 * The IP half of the parse: the IP header at @l3 and what follows, up to
 * and including the TCP header, packed as above but with bits 8-15 the
 * protocol after the IP header (0 for TCP), bit 6 (PM_L3_SEEN) set when
 * the parser found the IP header's lengths, and bits 16-31 left to the
 * caller, which knows where @l3 lies. It is the part of the parse that
 * multiplies (the IPv6 chain), so it is verified once, at an offset the
 * verifier does not know, whatever VLAN stack or tunnel header leads to
 * it. @how: PARSE_IP_V6 for IPv6, PARSE_IP_FRAG inside an outer first
 * fragment (the tunnel hook).
 */
#define PARSE_IP_V6 1U
#define PARSE_IP_FRAG 2U
#define PM_L3_SEEN (1ULL << 6)
/* The offsets of an IP header the split parser takes: behind the longest
 * outer headers and tunnel header (tunnel.h), its own chain and TCP header
 * still end below 64 KiB, the verifier's bound on a packet offset. */
#define PARSE_IP_OFF_MASK 0x7fff
_Static_assert(PARSE_IP_OFF_MASK + PARSE_MAX_L3_MASK + 60 < 0xffff,
	       "the TCP header behind any IP header the parser takes within 64 KiB");

static __always_inline __u64 parse_ip_packed(void *l3, void *data_end, __u64 how)
{
	struct cursor c = { .pos = l3, .end = data_end };
	struct pkt p = {};
	int ret;

	p.first_frag = (how & PARSE_IP_FRAG) != 0;
	if (how & PARSE_IP_V6) {
		p.l3_proto = ETH_P_IPV6;
		ret = parse_ipv6(&c, &p);
	} else {
		p.l3_proto = ETH_P_IP;
		ret = parse_ipv4(&c, &p);
	}
	if (ret == PARSE_OK)
		ret = parse_tcp(&c, &p);
	return (__u64)ret | ((how & PARSE_IP_V6) ? PM_V6 : 0) | (p.first_frag ? PM_FIRST_FRAG : 0) |
	       (p.l3 ? PM_L3_SEEN : 0) | (__u64)p.l4_proto << 8 | ((__u64)p.l3_len << 32) |
	       ((__u64)p.l4_len << 48);
}

/* A frame's parse packed: @m what parse_ip_packed() found behind the
 * Ethernet header and @nr_vlans tags, @l2_len bytes long. */
static __always_inline __u64 parse_frame_packed(__u64 m, __u64 l2_len, __u32 nr_vlans)
{
	int ret = PM_RESULT(m);
	__u64 byte;

	if (ret == PARSE_OK)
		byte = nr_vlans & 15;
	else if (ret == PARSE_NON_TCP || (ret == PARSE_FRAGMENT && (m & PM_FIRST_FRAG)))
		byte = PM_BYTE(m);
	else
		return (__u64)ret;
	return (m & (0xfULL | PM_V6 | PM_FIRST_FRAG | 0xffffffff00000000ULL)) | byte << 8 |
	       (l2_len & 0xffff) << 16;
}

/* The headers of a packed parse @m, found again in the frame. Return: 0,
 * or -1 if they do not lie in it (never, for a parse of this frame). */
static __always_inline int pkt_unpack(__u64 m, void *data, void *data_end, struct pkt *p)
{
	__u64 l2 = PM_L2(m), l3 = PM_L3(m);
	struct tcphdr *tcp;

	if (l2 > PARSE_MAX_L2_MASK || l3 > PARSE_MAX_L3_MASK)
		return -1;
	verifier_bound(l2, PARSE_MAX_L2_MASK);
	verifier_bound(l3, PARSE_MAX_L3_MASK);
	p->eth = data;
	if ((void *)(p->eth + 1) > data_end)
		return -1;
	p->l3 = data + l2;
	if (m & PM_V6) {
		if (p->l3 + sizeof(struct ipv6hdr) > data_end)
			return -1;
		p->l3_proto = ETH_P_IPV6;
	} else {
		if (p->l3 + sizeof(struct iphdr) > data_end)
			return -1;
		p->l3_proto = ETH_P_IP;
	}
	tcp = p->l3 + l3;
	if ((void *)(tcp + 1) > data_end)
		return -1;
	p->tcp = tcp;
	p->l2_len = (__u16)l2;
	p->l3_len = (__u16)l3;
	p->l4_len = (__u16)PM_L4(m);
	p->nr_vlans = PM_BYTE(m) & 15;
	p->first_frag = (m & PM_FIRST_FRAG) != 0;
	return 0;
}

#endif /* SHEDD_PARSING_H */
