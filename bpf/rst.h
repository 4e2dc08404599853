/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* rst.h - turn a SYN into the RST+ACK that refuses it, or the ACK of a
 * cookie handshake into the RST that refuses it, in place, for XDP_TX.
 * The reply keeps the VLAN tags, drops IP options, IPv6 extension headers,
 * TCP options and payload, keeps the TOS or traffic class less its ECN
 * bits as the kernel's own RST does (tcp_v4_send_reset(),
 * tcp_v6_send_reset()), and carries correct IPv4 and TCP checksums
 * (RFC 793: <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK> for a SYN,
 * <SEQ=SEG.ACK><CTL=RST> for an ACK). A RST is sent only where the kernel
 * would answer one, and within a per-CPU budget.
 */
#ifndef SHEDD_RST_H
#define SHEDD_RST_H

#define RST_TTL 64
#define TCP_HLEN 20
#define IPV4_HLEN 20
#define IPV6_HLEN 40

/* What the reply needs from the SYN, saved before the packet is reshaped. */
struct rst_src {
	__u8 mac_dst[ETH_ALEN];
	__u8 mac_src[ETH_ALEN];
	__be16 eth_proto;
	struct vlan_tag tags[MAX_VLAN_TAGS];
	__u32 saddr[4]; /* IPv4 uses word 0 */
	__u32 daddr[4];
	__be16 sport;
	__be16 dport;
	__u32 ack_seq;  /* host order: SEG.SEQ + SEG.LEN */
	__u32 seq;      /* host order: SEG.ACK */
	__u8 tos;       /* the segment's TOS or traffic class, ECN bits clear */
};

/* Per CPU, off the stack: with MAX_VLAN_TAGS tags it is too big for the
 * verifier's 512 bytes beside the program's entry and its callees. XDP
 * handles one packet at a time per CPU; nothing is kept between them. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct rst_src);
} rst_scratch SEC(".maps");

static __always_inline __u16 csum_fold(__u64 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* One's-complement sum of @len bytes (even, constant) at @buf. */
static __always_inline __u64 csum_add_words(__u64 sum, const void *buf, int len)
{
	const __u16 *w = buf;
	int i;

#pragma unroll
	for (i = 0; i < len / 2; i++)
		sum += w[i];
	return sum;
}

/* Re-read the packet bounds after an adjust helper. The empty asm keeps
 * clang from folding ctx + offsetof(data_end) into one pointer, which the
 * verifier rejects as a modified ctx pointer. */
static __always_inline void reload_bounds(struct xdp_md *ctx, void **data,
					  void **data_end)
{
	asm volatile("" : "+r"(ctx));
	*data = (void *)(long)ctx->data;
	asm volatile("" : "+r"(ctx));
	*data_end = (void *)(long)ctx->data_end;
}

static __always_inline int rst_save(const struct pkt *p, void *data_end,
				    struct rst_src *s)
{
	struct tcphdr *tcp = p->tcp;
	__u32 payload = 0, hdrs;
	int i;

	__builtin_memcpy(s->mac_dst, p->eth->h_dest, ETH_ALEN);
	__builtin_memcpy(s->mac_src, p->eth->h_source, ETH_ALEN);
	s->eth_proto = p->eth->h_proto;
#pragma unroll
	for (i = 0; i < MAX_VLAN_TAGS; i++) {
		struct vlan_tag *tag = (void *)(p->eth + 1) + i * sizeof(*tag);

		if (i >= p->nr_vlans)
			break;
		if ((void *)(tag + 1) > data_end)
			return -1;
		s->tags[i] = *tag;
	}

	if (p->l3_proto == ETH_P_IP) {
		struct iphdr *ip = p->l3;

		if ((void *)(ip + 1) > data_end)
			return -1;
		s->saddr[0] = ip->saddr;
		s->daddr[0] = ip->daddr;
		s->tos = ip->tos & ~3;
	} else {
		struct ipv6hdr *ip6 = p->l3;

		if ((void *)(ip6 + 1) > data_end)
			return -1;
		__builtin_memcpy(s->saddr, &ip6->saddr, 16);
		__builtin_memcpy(s->daddr, &ip6->daddr, 16);
		s->tos = ((ip6->priority << 4) | (ip6->flow_lbl[0] >> 4)) & ~3;
	}
	if ((void *)(tcp + 1) > data_end)
		return -1;
	/* l4_len comes from the IP length fields, so Ethernet padding is
	 * not taken for data; the parser saw doff * 4 <= l4_len. */
	hdrs = tcp->doff * 4;
	if (p->l4_len > hdrs)
		payload = p->l4_len - hdrs;
	s->sport = tcp->source;
	s->dport = tcp->dest;
	/* The SYN occupies one sequence number (a SYN with FIN is never
	 * answered: the listener discards it). */
	s->ack_seq = bpf_ntohl(tcp->seq) + payload + 1;
	s->seq = bpf_ntohl(tcp->ack_seq);
	return 0;
}

#define LOOPBACK_IFINDEX 1 /* lo, in every network namespace */

/*
 * addr_kernel_drops() - would the kernel drop the segment @p described by
 * its addresses, on its way to a listener? Taken from its input path:
 * - IPv4, ip_route_input_slow(): a multicast, limited broadcast, 0/8 or
 *   127/8 source is a martian, so is a 0/8 or 127/8 destination (127/8
 *   both ways unless route_localnet, which shedd takes as off); a limited
 *   or subnet broadcast destination (the map broadcast: the namespace's
 *   RTN_BROADCAST addresses) or a multicast one is not a local unicast
 *   route, which tcp_v4_conn_request() and tcp_v4_send_reset() require;
 *   fib_validate_source() takes a local source address as a martian
 *   unless accept_local (off by default): a source equal to the
 *   destination (LAND, whatever the ports) is one.
 * - IPv6, ip6_rcv_core(): ::1 as source or destination from a device
 *   other than lo, a multicast source; tcp_v6_conn_request() drops a
 *   v4-mapped source and a destination that is not unicast (multicast).
 * Class E sources (240/4 but the limited broadcast) are unicast to Linux
 * and are answered.
 * Return: 1 if the kernel drops it (no token, no answer), else 0.
 */
static __always_inline int addr_kernel_drops(const struct pkt *p, void *data_end, __u32 ifindex)
{
	struct shedd_broadcast *brd;
	__u32 zero = 0;
	int i;

	if (p->l3_proto == ETH_P_IP) {
		struct iphdr *ip = p->l3;
		__u32 sa, da;

		if ((void *)(ip + 1) > data_end)
			return 0;
		sa = bpf_ntohl(ip->saddr);
		da = bpf_ntohl(ip->daddr);
		if ((sa >> 24) == 0 || (sa >> 24) == 127 || (sa >> 28) == 0xe ||
		    sa == 0xffffffffU)
			return 1;
		if ((da >> 24) == 0 || (da >> 24) == 127 || (da >> 28) == 0xe ||
		    da == 0xffffffffU || sa == da)
			return 1;
		brd = bpf_map_lookup_elem(&broadcast, &zero);
		if (!brd)
			return 0;
#pragma unroll
		for (i = 0; i < SHEDD_MAX_BRD4; i++) {
			if (brd->addr[i] && brd->addr[i] == ip->daddr)
				return 1;
		}
	} else {
		struct ipv6hdr *ip6 = p->l3;
		__u32 s0, s1, s2, s3, d0, d1, d2, d3;

		if ((void *)(ip6 + 1) > data_end)
			return 0;
		if (ip6->saddr.in6_u.u6_addr8[0] == 0xff || ip6->daddr.in6_u.u6_addr8[0] == 0xff)
			return 1;
		s0 = ip6->saddr.in6_u.u6_addr32[0];
		s1 = ip6->saddr.in6_u.u6_addr32[1];
		s2 = ip6->saddr.in6_u.u6_addr32[2];
		s3 = ip6->saddr.in6_u.u6_addr32[3];
		d0 = ip6->daddr.in6_u.u6_addr32[0];
		d1 = ip6->daddr.in6_u.u6_addr32[1];
		d2 = ip6->daddr.in6_u.u6_addr32[2];
		d3 = ip6->daddr.in6_u.u6_addr32[3];
		/* v4-mapped ::ffff:0:0/96 source. */
		if ((s0 | s1) == 0 && s2 == bpf_htonl(0xffff))
			return 1;
		if (ifindex != LOOPBACK_IFINDEX &&
		    (((s0 | s1 | s2) == 0 && s3 == bpf_htonl(1)) ||
		     ((d0 | d1 | d2) == 0 && d3 == bpf_htonl(1))))
			return 1;
	}
	return 0;
}

/* Would the kernel answer this SYN? Not if it drops it for its addresses
 * (addr_kernel_drops()), nor if it came from or went to the unspecified
 * address (nobody to answer, or not a local destination), nor if the
 * frame came from a group MAC or was not sent to this host's unicast MAC
 * (the kernel discards frames not of PACKET_HOST). @ifindex: the device
 * it came in on. */
static __always_inline int rst_answerable(const struct pkt *p, void *data_end,
					  const struct shedd_config *cfg, __u32 ifindex)
{
	const __u8 *dst = p->eth->h_dest, *src = p->eth->h_source;
	__u8 any = 0;
	int i;

	if ((src[0] & 1) || (dst[0] & 1))
		return 0;
#pragma unroll
	for (i = 0; i < ETH_ALEN; i++) {
		if (dst[i] != cfg->mac[i])
			return 0;
		any |= dst[i];
	}
	/* An all-zero MAC in settings means none is known. */
	if (!any)
		return 0;
	if (addr_kernel_drops(p, data_end, ifindex))
		return 0;
	if (p->l3_proto == ETH_P_IPV6) {
		struct ipv6hdr *ip6 = p->l3;

		if ((void *)(ip6 + 1) > data_end)
			return 0;
		if ((ip6->saddr.in6_u.u6_addr32[0] | ip6->saddr.in6_u.u6_addr32[1] |
		     ip6->saddr.in6_u.u6_addr32[2] | ip6->saddr.in6_u.u6_addr32[3]) == 0 ||
		    (ip6->daddr.in6_u.u6_addr32[0] | ip6->daddr.in6_u.u6_addr32[1] |
		     ip6->daddr.in6_u.u6_addr32[2] | ip6->daddr.in6_u.u6_addr32[3]) == 0)
			return 0;
	}
	return 1;
}

/* Take one from a per-CPU transmit budget @b: a token bucket of @rate
 * per second and depth @burst (at least one), in 1/NSEC_PER_SEC units as
 * the class buckets. A fresh budget (last_ns 0) starts full: 1000 s of
 * refill, at most 1e7/s, is 1e19 units and fits in 64 bits.
 * Return: 1 if one may be sent. */
static __always_inline int tx_budget_take(struct shedd_rst_budget *b, __u64 rate,
					  __u64 burst, __u64 now)
{
	__u64 cap, elapsed;

	if (burst == 0)
		burst = 1;
	cap = burst * SHEDD_NSEC_PER_SEC;
	if (now > b->last_ns) {
		elapsed = now - b->last_ns;
		if (elapsed > MAX_REFILL_NS)
			elapsed = MAX_REFILL_NS;
		b->tokens += elapsed * rate;
		if (b->tokens > cap)
			b->tokens = cap;
		b->last_ns = now;
	}
	if (b->tokens < SHEDD_NSEC_PER_SEC)
		return 0;
	b->tokens -= SHEDD_NSEC_PER_SEC;
	return 1;
}

/* Take one RST from this CPU's budget (rate cfg->rst_rate_per_sec, depth
 * cfg->rst_burst). Without its map entry the program cannot count: no RST.
 * Return: 1 if the RST may be sent. */
static __always_inline int rst_budget_take(const struct shedd_config *cfg, __u64 now)
{
	__u32 zero = 0;
	struct shedd_rst_budget *b = bpf_map_lookup_elem(&rst_budget, &zero);
	__u64 rate = cfg->rst_rate_per_sec, burst = cfg->rst_burst;

	if (!b)
		return 0;
	if (rate > MAX_RST_RATE_PER_SEC)
		rate = MAX_RST_RATE_PER_SEC;
	if (burst > MAX_RST_BURST)
		burst = MAX_RST_BURST;
	return tx_budget_take(b, rate, burst, now);
}

/* Rewrite the packet in @ctx, described by @p, into the RST that refuses
 * it: RST+ACK for a SYN, a bare RST for an ACK (@for_ack).
 * Return: 0 when the packet is ready for XDP_TX, -1 if it could not be
 * reshaped (the caller then drops it instead). */
static __always_inline int rst_reply(struct xdp_md *ctx, const struct pkt *p, int for_ack)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct tcphdr th = {};
	__u32 l2_len = p->l2_len, l3_len, new_l3, new_len, zero = 0;
	int is_v4 = p->l3_proto == ETH_P_IP;
	struct rst_src *s;
	__u64 sum = 0;
	void *pos;
	int delta, i;

	s = bpf_map_lookup_elem(&rst_scratch, &zero);
	if (!s)
		return -1;
	__builtin_memset(s, 0, sizeof(*s));
	if (rst_save(p, data_end, s))
		return -1;
	new_l3 = is_v4 ? IPV4_HLEN : IPV6_HLEN;
	l3_len = p->l3_len;
	if (l3_len < new_l3 || l2_len > sizeof(struct ethhdr) + sizeof(s->tags))
		return -1;

	/* Drop IP options / extension headers from the front, so the TCP
	 * header stays where it is, then TCP options and payload at the end. */
	delta = l3_len - new_l3;
	if (delta && bpf_xdp_adjust_head(ctx, delta))
		return -1;
	reload_bounds(ctx, &data, &data_end);
	new_len = l2_len + new_l3 + TCP_HLEN;
	delta = (int)new_len - (int)(data_end - data);
	if (delta < 0 && bpf_xdp_adjust_tail(ctx, delta))
		return -1;
	reload_bounds(ctx, &data, &data_end);

	/* Ethernet and VLAN tags, with the MAC addresses swapped. */
	{
		struct ethhdr *eth = data;

		if ((void *)(eth + 1) > data_end)
			return -1;
		__builtin_memcpy(eth->h_dest, s->mac_src, ETH_ALEN);
		__builtin_memcpy(eth->h_source, s->mac_dst, ETH_ALEN);
		eth->h_proto = s->eth_proto;
		pos = eth + 1;
	}
#pragma unroll
	for (i = 0; i < MAX_VLAN_TAGS; i++) {
		struct vlan_tag *tag = pos;

		if (i >= p->nr_vlans)
			break;
		if ((void *)(tag + 1) > data_end)
			return -1;
		*tag = s->tags[i];
		pos = tag + 1;
	}

	th.source = s->dport;
	th.dest = s->sport;
	if (for_ack) {
		th.seq = bpf_htonl(s->seq);
	} else {
		th.ack_seq = bpf_htonl(s->ack_seq);
		th.ack = 1;
	}
	th.doff = TCP_HLEN / 4;
	th.rst = 1;

	if (is_v4) {
		struct iphdr ih = {};
		struct iphdr *ip = pos;
		struct tcphdr *tcp = (void *)(ip + 1);

		if ((void *)(tcp + 1) > data_end)
			return -1;
		ih.version = 4;
		ih.ihl = IPV4_HLEN / 4;
		ih.tot_len = bpf_htons(IPV4_HLEN + TCP_HLEN);
		ih.frag_off = bpf_htons(0x4000); /* DF */
		ih.tos = s->tos;
		ih.ttl = RST_TTL;
		ih.protocol = IPPROTO_TCP;
		ih.saddr = s->daddr[0];
		ih.daddr = s->saddr[0];
		ih.check = csum_fold(csum_add_words(0, &ih, IPV4_HLEN));

		/* Pseudo-header: addresses, protocol, TCP length. */
		sum = csum_add_words(0, &ih.saddr, 8);
		sum += bpf_htons(IPPROTO_TCP) + bpf_htons(TCP_HLEN);
		sum = csum_add_words(sum, &th, TCP_HLEN);
		th.check = csum_fold(sum);

		__builtin_memcpy(ip, &ih, IPV4_HLEN);
		__builtin_memcpy(tcp, &th, TCP_HLEN);
	} else {
		struct ipv6hdr ih = {};
		struct ipv6hdr *ip6 = pos;
		struct tcphdr *tcp = (void *)(ip6 + 1);

		if ((void *)(tcp + 1) > data_end)
			return -1;
		ih.version = 6;
		ih.priority = s->tos >> 4;
		ih.flow_lbl[0] = (__u8)(s->tos << 4);
		ih.payload_len = bpf_htons(TCP_HLEN);
		ih.nexthdr = IPPROTO_TCP;
		ih.hop_limit = RST_TTL;
		__builtin_memcpy(&ih.saddr, s->daddr, 16);
		__builtin_memcpy(&ih.daddr, s->saddr, 16);

		sum = csum_add_words(0, &ih.saddr, 32);
		sum += bpf_htons(TCP_HLEN) + bpf_htons(IPPROTO_TCP);
		sum = csum_add_words(sum, &th, TCP_HLEN);
		th.check = csum_fold(sum);

		__builtin_memcpy(ip6, &ih, IPV6_HLEN);
		__builtin_memcpy(tcp, &th, TCP_HLEN);
	}
	return 0;
}

#endif /* SHEDD_RST_H */
