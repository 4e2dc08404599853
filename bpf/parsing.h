/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* parsing.h - bounds-checked header parsing with a cursor. Every helper
 * checks that the whole header lies before data_end before it reads, and
 * returns PARSE_* so the caller counts why a packet was passed.
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
	PARSE_FRAGMENT,
};

struct cursor {
	void *pos;
	void *end;
};

/* 802.1Q / 802.1ad tag, as it follows the two MAC addresses. */
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
};

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
	/* A third tag is more than we walk: not ours to judge, pass it. */
	if (proto == ETH_P_8021Q || proto == ETH_P_8021AD)
		return PARSE_NON_IP;
	if (proto != ETH_P_IP && proto != ETH_P_IPV6)
		return PARSE_NON_IP;
	p->l3_proto = proto;
	p->l2_len = (__u16)(c->pos - (void *)eth);
	return PARSE_OK;
}

static __always_inline int parse_ipv4(struct cursor *c, struct pkt *p)
{
	struct iphdr *ip = c->pos;
	__u32 hlen;

	if ((void *)(ip + 1) > c->end)
		return PARSE_MALFORMED;
	if (ip->version != 4 || ip->ihl < 5)
		return PARSE_MALFORMED;
	hlen = ip->ihl * 4;
	/* Re-check the variable length: options must be there too. */
	if (c->pos + hlen > c->end)
		return PARSE_MALFORMED;
	if (bpf_ntohs(ip->tot_len) < hlen)
		return PARSE_MALFORMED;
	if (ip->frag_off & bpf_htons(IP_MF | IP_OFFSET))
		return PARSE_FRAGMENT;
	if (ip->protocol != IPPROTO_TCP)
		return PARSE_NON_TCP;
	p->l3 = ip;
	p->l3_len = hlen;
	c->pos += hlen;
	return PARSE_OK;
}

static __always_inline int parse_ipv6(struct cursor *c, struct pkt *p)
{
	struct ipv6hdr *ip6 = c->pos;
	__u8 next;
	int i;

	if ((void *)(ip6 + 1) > c->end)
		return PARSE_MALFORMED;
	if (ip6->version != 6)
		return PARSE_MALFORMED;
	next = ip6->nexthdr;
	c->pos = ip6 + 1;

	/* Bounded walk over the extension headers that may stand before TCP. */
#pragma unroll
	for (i = 0; i < MAX_IPV6_EXT_HDRS; i++) {
		struct ipv6_opt_hdr *opt = c->pos;
		__u32 len;

		if (next == IPPROTO_FRAGMENT_)
			return PARSE_FRAGMENT;
		if (next != IPPROTO_HOPOPTS_ && next != IPPROTO_ROUTING_ &&
		    next != IPPROTO_DSTOPTS_ && next != IPPROTO_AH_)
			break;
		if ((void *)(opt + 1) > c->end)
			return PARSE_MALFORMED;
		/* AH counts its length in 4-byte units minus 2, the others
		 * in 8-byte units not counting the first 8 bytes. */
		if (next == IPPROTO_AH_)
			len = ((__u32)opt->hdrlen + 2) * 4;
		else
			len = ((__u32)opt->hdrlen + 1) * 8;
		if (c->pos + len > c->end)
			return PARSE_MALFORMED;
		next = opt->nexthdr;
		c->pos += len;
	}
	if (next == IPPROTO_FRAGMENT_)
		return PARSE_FRAGMENT;
	if (next != IPPROTO_TCP) {
		/* Still an extension header after the walk: too deep to judge. */
		if (next == IPPROTO_HOPOPTS_ || next == IPPROTO_ROUTING_ ||
		    next == IPPROTO_DSTOPTS_ || next == IPPROTO_AH_)
			return PARSE_MALFORMED;
		return PARSE_NON_TCP;
	}
	p->l3 = ip6;
	p->l3_len = (__u16)(c->pos - (void *)ip6);
	return PARSE_OK;
}

static __always_inline int parse_tcp(struct cursor *c, struct pkt *p)
{
	struct tcphdr *tcp = c->pos;
	__u32 hlen;

	if ((void *)(tcp + 1) > c->end)
		return PARSE_MALFORMED;
	if (tcp->doff < 5)
		return PARSE_MALFORMED;
	hlen = tcp->doff * 4;
	if (c->pos + hlen > c->end)
		return PARSE_MALFORMED;
	p->tcp = tcp;
	c->pos += hlen;
	return PARSE_OK;
}

/* Parse up to and including the TCP header. */
static __always_inline int parse_packet(struct cursor *c, struct pkt *p)
{
	int ret = parse_eth(c, p);

	if (ret != PARSE_OK)
		return ret;
	if (p->l3_proto == ETH_P_IP)
		ret = parse_ipv4(c, p);
	else
		ret = parse_ipv6(c, p);
	if (ret != PARSE_OK)
		return ret;
	return parse_tcp(c, p);
}

#endif /* SHEDD_PARSING_H */
