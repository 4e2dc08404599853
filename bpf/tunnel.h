/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tunnel.h - inner SYNs of the tunnels that end on this host. The kernel
 * decapsulates IPIP, SIT, IP6IP6, GRE, VXLAN, Geneve, FOU and GUE after
 * XDP has run and gives the inner SYN to a listener, so the program opens
 * one level of encapsulation of a kind the daemon found a device or a fou
 * port of (tun_config), addressed to one of the host's own addresses
 * (tun_local), whose VNI, key and endpoints some device takes as the
 * kernel would look it up (tun_devs), and judges the inner segment as a
 * direct one: the same checks (addresses, checksum, source, fairness),
 * then its class's bucket in the tunnel class space, so a tunnelled flood
 * never spends a direct client's token; an inner cookie ACK is judged by
 * verified admission. A reply would have to be encapsulated again, so
 * nothing is answered (no cookie, no RST): a shed segment drops the whole
 * outer packet. Included by shedd.bpf.c after classify(), charge() and
 * the checks (syncheck.h, fair.h).
 */
#ifndef SHEDD_TUNNEL_H
#define SHEDD_TUNNEL_H

/* The tunnels that end here and the host's own addresses, written by the
 * daemon (user/daemon/tunnels.c). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_tun_config);
} tun_config SEC(".maps");

/* Its counters, per CPU as stats. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_tun_stats);
} tun_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_TUN_LOCAL);
	__type(key, struct shedd_tun_addr);
	__type(value, __u8);
} tun_local SEC(".maps");

/* The devices, by what the kernel looks them up by (include/shedd.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_TUN_DEVS);
	__type(key, struct shedd_tun_key);
	__type(value, struct shedd_tun_dev);
} tun_devs SEC(".maps");

/* What the checks found, per CPU. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_tun_checks);
} tun_checks SEC(".maps");

/* The packet in flight: the key its device is looked up by
 * (shedd_tun_dev(), off the stack: the frames of shedd_xdp(),
 * shedd_tunnel() and this leaf add up), and the device found, from
 * shedd_tunnel() to its judge (tun_judged()). Per CPU, nothing kept
 * between packets, not pinned. */
struct tun_pkt_scratch {
	struct shedd_tun_key key;
	__u32 ifindex;
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tun_pkt_scratch);
} tun_pkt SEC(".maps");

/* shedd_tunnel()'s answers besides a verdict. */
#define TUN_NOT_OURS 0xffULL /* no tunnel that ends here: parse on as before */
/* Judge the inner TCP segment (tun_judged()): its IP header's offset in
 * the frame << 32, the length of the IP headers before the TCP header
 * << 16, the TCP segment's length; IPv6, an outer first fragment. */
#define TUN_JUDGE (1ULL << 63)
#define TUN_J_V6 (1ULL << 62)
#define TUN_J_FRAG (1ULL << 61)

/* What the tunnel header says the kernel will look its device up by:
 * filled by tun_gre() and tun_udp(), for IP in IP by shedd_tunnel(); kind
 * SHEDD_TDEV_NONE where no device is looked up (FOU's TCP itself). */
struct tun_id {
	__u32 id;    /* VNI (host order), GRE key (as on the wire) */
	__u16 port;  /* VXLAN, Geneve: the UDP port */
	__u8 kind;   /* enum shedd_tdev_kind */
	__u8 flags;  /* TUN_KEY_KEYED: a GRE key */
};

/* What follows a tunnel header, or why it cannot be read. */
enum tun_inner {
	TUN_CUT = -1,     /* the tunnel header is cut short: the kernel drops it */
	TUN_IN_NONE = 0,  /* a header the kernel does not decapsulate here */
	TUN_IN_IP4,
	TUN_IN_IP6,
	TUN_IN_ETH,       /* VXLAN, Geneve, GRE-TAP: an Ethernet frame */
	TUN_IN_PROTO,     /* FOU, GUE: an IP protocol's header (*proto) */
};

#define TUN_ETH_P_TEB 0x6558 /* transparent Ethernet bridging (RFC 1701) */

/* GRE (RFC 2784, RFC 2890): flags, version, protocol; then the optional
 * checksum (C), key (K) and sequence number (S), 4 bytes each. The kernel
 * does not decapsulate version 1 (PPTP) or a packet with the routing bit
 * (gre_parse_header() in net/ipv4/gre_demux.c). */
struct tun_gre_hdr {
	__be16 flags;
	__be16 proto;
};
#define TUN_GRE_CSUM 0x8000
#define TUN_GRE_ROUTING 0x4000
#define TUN_GRE_KEY 0x2000
#define TUN_GRE_SEQ 0x1000
#define TUN_GRE_VERSION 0x0007

/* VXLAN (RFC 7348): flags (I = a valid VNI), reserved, VNI. */
struct tun_vxlan_hdr {
	__u8 flags;
	__u8 rsvd[3];
	__be32 vni;
};
#define TUN_VXLAN_I 0x08

/* Geneve (RFC 8926): version and options length (4-byte units), flags,
 * protocol of the payload, VNI; then the options. */
struct tun_geneve_hdr {
	__u8 ver_opt;
	__u8 flags;
	__be16 proto;
	__u8 vni[3];
	__u8 rsvd;
};
#define TUN_GENEVE_OPT_MASK 0x3f

/* GUE (draft-ietf-intarea-gue), as net/ipv4/fou_core.c reads it: the
 * version in the top two bits of the first byte. Version 0: the control
 * bit, the length of the optional fields (4-byte units), the protocol
 * (or control type), flags; then the fields. Version 1: no header, an
 * IPv4 or IPv6 header by its first nibble. A control message is dropped. */
struct tun_gue_hdr {
	__u8 ver_c_hlen;
	__u8 proto_ctype;
	__be16 flags;
};
#define TUN_GUE_C 0x20
#define TUN_GUE_HLEN_MASK 0x1f

/* The kind of UDP port @port over IPv6 (@v6) or IPv4: its enum
 * shedd_tun_udp, and for FOU the protocol it carries in bits 8-15. */
#define TUN_UDP_KIND(k) ((k) & 0xff)
#define TUN_UDP_PROTO(k) (((k) >> 8) & 0xff)
static __always_inline __u32 tun_udp_kind(const struct shedd_tun_config *tc, int v6, __u16 port)
{
	__u8 fam = v6 ? 6 : 4;
	int i;

	if (!port)
		return SHEDD_UDP_NONE;
#pragma unroll
	for (i = 0; i < MAX_TUN_UDP_PORTS; i++)
		if (tc->udp_port[i] == port && (!tc->udp_family[i] || tc->udp_family[i] == fam))
			return tc->udp_kind[i] | (__u32)tc->udp_proto[i] << 8;
	return SHEDD_UDP_NONE;
}

/* Does a tunnel of this kind end here? Non-zero for protocol @proto over
 * IPv6 (@v6) or IPv4, whose payload starts at @l4: the SHEDD_TUN_* bits
 * of the family, or the enum shedd_tun_udp of a UDP port. */
static __always_inline __u32 tun_ends_here(const struct shedd_tun_config *tc, int v6, __u8 proto,
					   void *l4, void *data_end)
{
	__u32 k = tc->kinds;
	struct udphdr *udp = l4;

	switch (proto) {
	case IPPROTO_IPIP:
		return k & (v6 ? SHEDD_TUN_4IN6 : SHEDD_TUN_IPIP);
	case IPPROTO_IPV6:
		return k & (v6 ? SHEDD_TUN_6IN6 : SHEDD_TUN_SIT);
	case IPPROTO_GRE:
		return k & (v6 ? SHEDD_TUN_GRE6 | SHEDD_TUN_GRETAP6 : SHEDD_TUN_GRE | SHEDD_TUN_GRETAP);
	case IPPROTO_UDP:
		if ((void *)(udp + 1) > data_end)
			return 0;
		return tun_udp_kind(tc, v6, bpf_ntohs(udp->dest));
	}
	return 0;
}

static __always_inline int tun_gre(struct cursor *c, __u32 kind, __u32 l4_len, struct tun_id *tid)
{
	struct tun_gre_hdr *g = c->pos;
	__u32 hlen = sizeof(*g), koff = sizeof(*g);
	__u16 flags;

	if ((void *)(g + 1) > c->end)
		return TUN_CUT;
	flags = bpf_ntohs(g->flags);
	if (flags & (TUN_GRE_ROUTING | TUN_GRE_VERSION))
		return TUN_IN_NONE;
	if (flags & TUN_GRE_CSUM) {
		hlen += 4;
		koff += 4;
	}
	if (flags & TUN_GRE_KEY)
		hlen += 4;
	if (flags & TUN_GRE_SEQ)
		hlen += 4;
	if (hlen > l4_len || c->pos + hlen > c->end)
		return TUN_CUT;
	/* The key the kernel looks the device up by (ip_tunnel_key_match()). */
	if (flags & TUN_GRE_KEY) {
		__be32 *key = c->pos + koff;

		if ((void *)(key + 1) > c->end)
			return TUN_CUT;
		tid->id = *key;
		tid->flags = TUN_KEY_KEYED;
	}
	c->pos += hlen;
	/* gre and ip6gre carry IP, gretap and ip6gretap Ethernet. */
	tid->kind = SHEDD_TDEV_GRE;
	if (g->proto == bpf_htons(ETH_P_IP))
		return kind & (SHEDD_TUN_GRE | SHEDD_TUN_GRE6) ? TUN_IN_IP4 : TUN_IN_NONE;
	if (g->proto == bpf_htons(ETH_P_IPV6))
		return kind & (SHEDD_TUN_GRE | SHEDD_TUN_GRE6) ? TUN_IN_IP6 : TUN_IN_NONE;
	tid->kind = SHEDD_TDEV_GRETAP;
	if (g->proto == bpf_htons(TUN_ETH_P_TEB))
		return kind & (SHEDD_TUN_GRETAP | SHEDD_TUN_GRETAP6) ? TUN_IN_ETH : TUN_IN_NONE;
	return TUN_IN_NONE;
}

static __always_inline int tun_udp(struct cursor *c, __u32 kind, __u32 l4_len, __u32 *proto,
				   struct tun_id *tid)
{
	struct udphdr *udp = c->pos;
	struct tun_vxlan_hdr *vx;
	struct tun_geneve_hdr *gn;
	struct tun_gue_hdr *gue;
	__u32 hlen;

	if ((void *)(udp + 1) > c->end || l4_len < sizeof(*udp))
		return TUN_CUT;
	c->pos = udp + 1;
	l4_len -= sizeof(*udp);
	if (TUN_UDP_KIND(kind) == SHEDD_UDP_FOU) {
		/* fou_udp_recv(): the payload is the configured protocol's. */
		*proto = TUN_UDP_PROTO(kind);
		return TUN_IN_PROTO;
	}
	if (TUN_UDP_KIND(kind) == SHEDD_UDP_GUE) {
		gue = c->pos;
		if ((void *)(gue + 1) > c->end || l4_len < sizeof(*gue))
			return TUN_CUT;
		switch (gue->ver_c_hlen >> 6) {
		case 0:
			break;
		case 1:
			/* Direct: the IP header's version says which. */
			if (gue->ver_c_hlen >> 4 == 4)
				return TUN_IN_IP4;
			if (gue->ver_c_hlen >> 4 == 6)
				return TUN_IN_IP6;
			return TUN_IN_NONE;
		default:
			return TUN_IN_NONE;
		}
		if (gue->ver_c_hlen & TUN_GUE_C)
			return TUN_IN_NONE; /* a control message, not data */
		hlen = sizeof(*gue) + (gue->ver_c_hlen & TUN_GUE_HLEN_MASK) * 4;
		if (hlen > l4_len || c->pos + hlen > c->end)
			return TUN_CUT;
		c->pos += hlen;
		*proto = gue->proto_ctype;
		return TUN_IN_PROTO;
	}
	if (TUN_UDP_KIND(kind) == SHEDD_UDP_VXLAN) {
		vx = c->pos;
		if ((void *)(vx + 1) > c->end || l4_len < sizeof(*vx))
			return TUN_CUT;
		if (!(vx->flags & TUN_VXLAN_I))
			return TUN_IN_NONE;
		tid->kind = SHEDD_TDEV_VXLAN;
		tid->port = bpf_ntohs(udp->dest);
		tid->id = bpf_ntohl(vx->vni) >> 8;
		c->pos = vx + 1;
		return TUN_IN_ETH;
	}
	gn = c->pos;
	if ((void *)(gn + 1) > c->end)
		return TUN_CUT;
	if (gn->ver_opt >> 6) /* only version 0 is decapsulated */
		return TUN_IN_NONE;
	hlen = sizeof(*gn) + (gn->ver_opt & TUN_GENEVE_OPT_MASK) * 4;
	if (hlen > l4_len || c->pos + hlen > c->end)
		return TUN_CUT;
	tid->kind = SHEDD_TDEV_GENEVE;
	tid->port = bpf_ntohs(udp->dest);
	tid->id = (__u32)gn->vni[0] << 16 | (__u32)gn->vni[1] << 8 | gn->vni[2];
	c->pos += hlen;
	/* Ethernet; IP itself on a device with inner_proto_inherit. */
	if (gn->proto == bpf_htons(TUN_ETH_P_TEB))
		return TUN_IN_ETH;
	if (gn->proto == bpf_htons(ETH_P_IP))
		return TUN_IN_IP4;
	if (gn->proto == bpf_htons(ETH_P_IPV6))
		return TUN_IN_IP6;
	return TUN_IN_NONE;
}

/*
 * shedd_tun_dev() - is there a device the kernel gives this tunnel's
 * packet to? Looked up by what the tunnel header said (@what: the kind,
 * TUN_KEY_* flags << 4, IPv6 outer header (TUN_DEV_V6), the UDP port << 8,
 * the VNI or key << 32) and the outer addresses of the IP header at
 * @l2_len, in the shapes tun_config says are present, the most exact
 * first. A global function: a leaf whose key stays off the frames of the
 * tunnel's judge.
 * Return: the device's ifindex, or 0 if no device takes the packet.
 */
#define TUN_DEV_V6 (1U << 6)
__noinline int shedd_tun_dev(struct xdp_md *ctx, __u64 l2_len, __u64 what)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct tun_pkt_scratch *sc;
	struct shedd_tun_config *tc;
	struct shedd_tun_dev *dev;
	struct shedd_tun_key *key;
	__u32 zero = 0, shapes, i;
	struct ipv6hdr *ip6 = NULL;
	struct iphdr *ip = NULL;

	verifier_bound(l2_len, PARSE_MAX_L2_MASK);
	tc = bpf_map_lookup_elem(&tun_config, &zero);
	sc = bpf_map_lookup_elem(&tun_pkt, &zero);
	if (!tc || !sc)
		return 0;
	key = &sc->key;
	shapes = tc->match >> SHEDD_TUN_SHAPES_SHIFT;
	if (what & TUN_DEV_V6) {
		ip6 = data + l2_len;
		if ((void *)(ip6 + 1) > data_end)
			return 0;
	} else {
		ip = data + l2_len;
		if ((void *)(ip + 1) > data_end)
			return 0;
	}
#pragma unroll
	for (i = 0; i < TUN_NR_SHAPES; i++) {
		if (!(shapes & (1U << i)))
			continue;
		__builtin_memset(key, 0, sizeof(*key));
		key->kind = what & 0xf;
		key->port = (__u16)(what >> 8);
		if (i == TUN_SHAPE_ANY) {
			/* collect_md, a fallback device: by kind and port only. */
			key->flags = TUN_KEY_ANY;
		} else {
			key->flags = (what >> 4) & TUN_KEY_KEYED;
			key->id = (__u32)(what >> 32);
			if (i == TUN_SHAPE_BOTH || i == TUN_SHAPE_REMOTE) {
				if (ip6) {
					__builtin_memcpy(key->remote, &ip6->saddr, 16);
				} else if (ip) {
					key->remote[10] = key->remote[11] = 0xff;
					__builtin_memcpy(&key->remote[12], &ip->saddr, 4);
				}
			}
			if (i == TUN_SHAPE_BOTH || i == TUN_SHAPE_LOCAL) {
				if (ip6) {
					__builtin_memcpy(key->local, &ip6->daddr, 16);
				} else if (ip) {
					key->local[10] = key->local[11] = 0xff;
					__builtin_memcpy(&key->local[12], &ip->daddr, 4);
				}
			}
		}
		dev = bpf_map_lookup_elem(&tun_devs, key);
		if (dev)
			return dev->ifindex ? (int)(dev->ifindex & 0x7fffffff) : 1;
	}
	return 0;
}

/* tun_meta_packed() - what shedd_tunnel() needs of the outer packet
 * besides its header lengths, from the packed parse (parsing.h): the
 * protocol after the IP header, the length of what follows it, and the
 * family. */
#define TUN_META_V6 (1ULL << 24)
#define TUN_META_FRAG (1ULL << 25) /* an outer first fragment */
static __always_inline __u64 tun_meta_packed(__u64 m)
{
	return (__u64)PM_BYTE(m) | (__u64)(PM_L4(m) & 0xffff) << 8 |
	       ((m & PM_V6) ? TUN_META_V6 : 0) | ((m & PM_FIRST_FRAG) ? TUN_META_FRAG : 0);
}

/* The protocols a tunnel of this host can use: the hook's cheap test. */
static __always_inline int tun_proto(__u8 proto)
{
	return proto == IPPROTO_IPIP || proto == IPPROTO_IPV6 || proto == IPPROTO_GRE ||
	       proto == IPPROTO_UDP;
}

/* The inner packet's parse, packed as shedd_parse() packs a frame's
 * (parsing.h), but with the inner IP header's offset in the frame where a
 * frame's parse has l2_len. */
#define TUN_PARSE_FRAG 0x100U /* @how: an outer first fragment */
/* The inner IP header lies within 16 KiB: behind the longest outer headers
 * the parser accepts (Ethernet and its tags, IPv6 and MAX_IPV6_EXT_HDRS
 * headers of 2 KiB), the longest tunnel header (UDP and Geneve with 252
 * bytes of options) and the inner Ethernet header and tags; its own chain
 * then ends below 64 KiB, the verifier's bound on a packet offset. */
#define TUN_L3_MASK 0x3fff
_Static_assert(PARSE_MAX_L2_MASK + 40 + 2048 * MAX_IPV6_EXT_HDRS + 8 + 8 + 252 +
	       PARSE_MAX_L2_MASK <= TUN_L3_MASK, "the inner IP header within its mask");
_Static_assert(TUN_L3_MASK + PARSE_MAX_L2_MASK <= PARSE_IP_OFF_MASK,
	       "shedd_parse_ip() takes every inner IP header");

/*
 * shedd_parse_inner() - parse the inner packet at @off of the frame, as
 * the parser parses a frame. A global function, so that the verifier walks
 * the parser's paths (every VLAN stack and IPv6 chain of the inner packet)
 * once, not once for every tunnel header that leads to them. @how:
 * TUN_IN_ETH, TUN_IN_IP4 or TUN_IN_IP6, | TUN_PARSE_FRAG.
 */
__noinline __u64 shedd_parse_inner(struct xdp_md *ctx, __u64 off, __u64 how)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 inner = how & 0xff;
	struct cursor c;
	struct pkt in = {};
	__u64 byte, l3off, m;
	int ret;

	/* Past the mask (never, behind headers the parser accepts): a
	 * packet we cannot follow is refused, never passed. */
	if (off > TUN_L3_MASK)
		return PARSE_TOO_DEEP;
	verifier_bound(off, TUN_L3_MASK);
	c.pos = data + off;
	c.end = data_end;
	if (inner == TUN_IN_ETH) {
		ret = parse_eth(&c, &in);
		if (ret != PARSE_OK)
			return (__u64)ret;
		inner = in.l3_proto == ETH_P_IPV6 ? TUN_IN_IP6 : TUN_IN_IP4;
	}
	l3off = (__u64)(c.pos - data);
	m = shedd_parse_ip(ctx, l3off, (inner == TUN_IN_IP6 ? PARSE_IP_V6 : 0) |
				       ((how & TUN_PARSE_FRAG) ? PARSE_IP_FRAG : 0));
	ret = PM_RESULT(m);
	if (ret == PARSE_OK)
		byte = 0;
	else if ((ret == PARSE_NON_TCP || ret == PARSE_FRAGMENT) && (m & PM_L3_SEEN))
		byte = PM_BYTE(m); /* the parser noted what follows (parse_other()) */
	else
		return (__u64)ret;
	if (l3off > TUN_L3_MASK)
		return PARSE_TOO_DEEP;
	return (__u64)ret | (m & (PM_V6 | PM_FIRST_FRAG)) | byte << 8 | l3off << 16 |
	       (m & 0xffffffff00000000ULL);
}

/* The inner segment of shedd_tunnel()'s TUN_JUDGE answer @v found again
 * in the frame, as pkt_unpack() finds a frame's: @in->l2_len is the inner
 * IP header's offset, l3_len what lies between it and the TCP header.
 * Return: 0, or -1 if they do not lie in it (never, for a parse of this
 * frame). */
_Static_assert(LENS_INNER_L2_MASK == TUN_L3_MASK, "the checks take every inner offset");
static __always_inline int tun_unpack(__u64 v, void *data, void *data_end, struct pkt *in)
{
	__u64 l3off = (v >> 32) & 0xffff, l3 = (v >> 16) & 0xffff;
	struct tcphdr *tcp;

	if (l3off > TUN_L3_MASK || l3 > PARSE_MAX_L3_MASK)
		return -1;
	verifier_bound(l3off, TUN_L3_MASK);
	verifier_bound(l3, PARSE_MAX_L3_MASK);
	in->eth = data;
	in->l3 = data + l3off;
	if (v & TUN_J_V6) {
		if (in->l3 + sizeof(struct ipv6hdr) > data_end)
			return -1;
		in->l3_proto = ETH_P_IPV6;
	} else {
		if (in->l3 + sizeof(struct iphdr) > data_end)
			return -1;
		in->l3_proto = ETH_P_IP;
	}
	tcp = in->l3 + l3;
	if ((void *)(tcp + 1) > data_end)
		return -1;
	in->tcp = tcp;
	in->l2_len = (__u16)l3off;
	in->l3_len = (__u16)l3;
	in->l4_len = (__u16)(v & 0xffff);
	in->nr_vlans = 0;
	in->first_frag = (v & TUN_J_FRAG) != 0;
	return 0;
}

/*
 * shedd_tunnel() - judge the inner packet of an IP packet that is not TCP,
 * if a tunnel of its kind ends here. A global function, verified once on
 * its own; it finds the headers again from the offsets (@meta: tun_meta_packed()).
 * The inner TCP segment is judged by the caller (tun_judged()), so the
 * functions that judge it run one call deep, as for a direct one: their
 * frames and this one's would not fit the stack together.
 * Return: TUN_NOT_OURS, a verdict, counted, or TUN_JUDGE and where the
 * inner segment lies (the device it comes in on in tun_pkt).
 *
 * One level only: an inner packet that is itself a tunnel of a kind that
 * ends here (the kernel would open it too) is refused; so is an inner
 * packet the parser refuses (a deep IPv6 chain, a tiny fragment). The VNI,
 * key and endpoints are matched for the kinds whose devices the daemon
 * read (tun_config.match); the outer checksums (UDP, GRE) are not: the
 * kernel may drop a SYN charged here, it never gets one that was not.
 */
__noinline __u64 shedd_tunnel(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len, __u64 meta)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 zero = 0, proto = meta & 0xff, l4_len = (meta >> 8) & 0xffff;
	struct shedd_tun_addr key = {};
	struct shedd_tun_config *tc;
	struct shedd_tun_stats *ts;
	struct shedd_config *cfg;
	struct shedd_stats *st;
	struct cursor c;
	struct pkt in = {};
	int v6 = (meta & TUN_META_V6) != 0, frag = (meta & TUN_META_FRAG) != 0, inner, ret, dev = 0;
	__u64 m, in_l3off, in_l3_len, jflags;
	__u32 kind, fou_proto = 0, rest;
	struct tun_id tid = {};
	void *l3, *l4;

	/* Without its maps the program cannot open the tunnel: it passes,
	 * as before tunnels were judged (fail open). */
	tc = bpf_map_lookup_elem(&tun_config, &zero);
	if (!tc || (!tc->kinds && !tc->udp_port[0]))
		return TUN_NOT_OURS;
	/* The record in use: the hook runs before shedd_xdp() chose one. */
	cfg = settings_begin();
	st = bpf_map_lookup_elem(&stats, &zero);
	ts = bpf_map_lookup_elem(&tun_stats, &zero);
	if (!cfg || !st || !ts)
		return TUN_NOT_OURS;
	lens_bound(&l2_len, &l3_len);
	l3 = data + l2_len;
	l4 = l3 + l3_len;
	kind = tun_ends_here(tc, v6, proto, l4, data_end);
	if (!kind)
		return TUN_NOT_OURS;
	/* The kernel decapsulates only what is addressed to this host. */
	if (v6) {
		struct ipv6hdr *ip6 = l3;

		if ((void *)(ip6 + 1) > data_end)
			return TUN_NOT_OURS;
		__builtin_memcpy(key.addr, &ip6->daddr, 16);
	} else {
		struct iphdr *ip = l3;

		if ((void *)(ip + 1) > data_end)
			return TUN_NOT_OURS;
		key.addr[10] = 0xff;
		key.addr[11] = 0xff;
		__builtin_memcpy(&key.addr[12], &ip->daddr, 4);
	}
	if (!bpf_map_lookup_elem(&tun_local, &key))
		return TUN_NOT_OURS;

	c.pos = l4;
	c.end = data_end;
	if (proto == IPPROTO_GRE)
		inner = tun_gre(&c, kind, l4_len, &tid);
	else if (proto == IPPROTO_UDP)
		inner = tun_udp(&c, kind, l4_len, &fou_proto, &tid);
	else
		inner = proto == IPPROTO_IPIP ? TUN_IN_IP4 : TUN_IN_IP6;
	if (inner == TUN_IN_PROTO) {
		/* FOU and GUE hand the payload to the protocol they name,
		 * as if the outer IP header had said it. */
		rest = l4_len - (__u32)(c.pos - l4);
		if (fou_proto == IPPROTO_IPIP) {
			inner = TUN_IN_IP4;
		} else if (fou_proto == IPPROTO_IPV6) {
			inner = TUN_IN_IP6;
		} else if (fou_proto == IPPROTO_GRE) {
			inner = tun_gre(&c, tc->kinds & (v6 ? SHEDD_TUN_GRE6 | SHEDD_TUN_GRETAP6 :
						       SHEDD_TUN_GRE | SHEDD_TUN_GRETAP),
					rest, &tid);
		} else if (fou_proto == IPPROTO_TCP) {
			/* The TCP header itself: its addresses are the
			 * outer IP header's, and so is its class; the
			 * headers before it, the IP header's and FOU's. */
			ts->decap++;
			in.first_frag = frag;
			in.l3 = l3;
			in.l3_proto = v6 ? ETH_P_IPV6 : ETH_P_IP;
			in.l3_len = (__u16)(c.pos - l3);
			in.l4_len = rest;
			/* Cut short: in an outer first fragment it goes on
			 * in the next one; else the kernel drops it. */
			if (parse_tcp(&c, &in) != PARSE_OK) {
				if (frag)
					goto refuse;
				return pass_counted(st, PARSE_MALFORMED);
			}
			if (frag && rest < TCP_MIN_HLEN)
				goto refuse;
			goto judge;
		} else if (fou_proto == IPPROTO_UDP) {
			/* A UDP tunnel in it, to a port that ends here: more
			 * than one level. */
			if (tun_ends_here(tc, v6, IPPROTO_UDP, c.pos, data_end)) {
				ts->decap++;
				goto refuse;
			}
			return TUN_NOT_OURS;
		} else {
			return TUN_NOT_OURS;
		}
	}
	if (inner == TUN_IN_NONE)
		return TUN_NOT_OURS;
	/* IP in IP, directly or handed on by FOU or GUE: the device the
	 * ipip, sit or ip6tnl handler looks up by the outer addresses. */
	if (!tid.kind && (inner == TUN_IN_IP4 || inner == TUN_IN_IP6))
		tid.kind = v6 ? SHEDD_TDEV_IP6TNL :
			   inner == TUN_IN_IP4 ? SHEDD_TDEV_IPIP : SHEDD_TDEV_SIT;
	if (inner == TUN_CUT) {
		/* An outer first fragment is reassembled by the kernel
		 * before it opens the tunnel: what the first fragment does
		 * not show, we cannot judge (RFC 1858's tiny fragment, one
		 * level down). A whole packet cut short is dropped by it. */
		if (frag)
			goto refuse;
		st->malformed++;
		return XDP_PASS;
	}
	/* The device the kernel gives it to, by the VNI or key the header
	 * carries and the outer endpoints: with none, the kernel drops it
	 * (as it does a malformed packet: passed, not judged). */
	if (tid.kind && (tc->match & SHEDD_TUN_MATCH(tid.kind))) {
		dev = shedd_tun_dev(ctx, l2_len,
				    tid.kind | (__u64)tid.flags << 4 | (v6 ? TUN_DEV_V6 : 0) |
				    (__u64)tid.port << 8 | (__u64)tid.id << 32);
		if (dev <= 0) {
			struct shedd_tun_checks *tk = bpf_map_lookup_elem(&tun_checks, &zero);

			if (tk)
				tk->no_device++;
			return pass_counted(st, PARSE_NON_TCP);
		}
	}
	ts->decap++;
	m = shedd_parse_inner(ctx, (__u64)(c.pos - data), inner | (frag ? TUN_PARSE_FRAG : 0));
	ret = PM_RESULT(m);
	/* The frame again: bounds are lost across the call. */
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	switch (ret) {
	case PARSE_OK:
		/* The inner datagram must end inside the outer one: the
		 * kernel drops it otherwise (the parser saw the frame). */
		if (!frag && PM_L2(m) + PM_L3(m) + PM_L4(m) > l2_len + l3_len + l4_len)
			return pass_counted(st, PARSE_MALFORMED);
		/* In an outer first fragment the parser did not hold the
		 * TCP header to the inner lengths: one shorter than a TCP
		 * header is junk the kernel drops; not passed unjudged. */
		if (frag && PM_L4(m) < TCP_MIN_HLEN)
			break;
		in_l3off = PM_L2(m);
		in_l3_len = PM_L3(m);
		rest = PM_L4(m);
		jflags = ((m & PM_V6) ? TUN_J_V6 : 0) | ((m & PM_FIRST_FRAG) ? TUN_J_FRAG : 0);
		goto judged;
	case PARSE_NON_TCP:
	case PARSE_FRAGMENT:
		/* A tunnel in the tunnel, or the first fragment of one: more
		 * than one level, refused. */
		in_l3off = PM_L2(m);
		in_l3_len = PM_L3(m);
		if (PM_BYTE(m)) {
			if (in_l3off > TUN_L3_MASK || in_l3_len > PARSE_MAX_L3_MASK)
				break;
			verifier_bound(in_l3off, TUN_L3_MASK);
			verifier_bound(in_l3_len, PARSE_MAX_L3_MASK);
			if (tun_ends_here(tc, (m & PM_V6) != 0, PM_BYTE(m),
					  data + in_l3off + in_l3_len, data_end))
				break;
		}
		return pass_counted(st, ret);
	case PARSE_MALFORMED:
		if (frag)
			break; /* cut by the outer fragment: see above */
		/* fallthrough */
	case PARSE_NON_IP:
		return pass_counted(st, ret);
	}
refuse:
	/* What the parser refuses outside a tunnel, it refuses inside. */
	ts->refused++;
	return XDP_DROP;
judge:
	in_l3off = l2_len;
	in_l3_len = in.l3_len;
	rest = in.l4_len;
	jflags = (v6 ? TUN_J_V6 : 0) | (frag ? TUN_J_FRAG : 0);
judged:
	{
		struct tun_pkt_scratch *sc = bpf_map_lookup_elem(&tun_pkt, &zero);

		if (sc)
			sc->ifindex = dev > 0 ? (__u32)dev : 0;
	}
	return TUN_JUDGE | jflags | (in_l3off & 0xffff) << 32 | (in_l3_len & 0xffff) << 16 |
	       (rest & 0xffff);
}

/*
 * tun_judge() - judge an inner TCP segment @in as a direct one, come in on
 * the tunnel's device @ifindex (0: not known, the frame's is taken).
 * A pure SYN to a protected port: the kernel's drops first (addresses,
 * checksum: no token), the source check of a class above the default one
 * (against the tunnel's device), fairness, then its class's bucket in the
 * tunnel class space. In a verified class, an ACK that may end a cookie
 * handshake is judged by shedd_cookie_ack() as a direct one, charged in
 * the tunnel class space. Nothing is answered: what is refused is dropped.
 * @in->l2_len: the offset of its IP header (tun_unpack()).
 */
static __always_inline int tun_judge(struct xdp_md *ctx, const struct shedd_config *cfg,
				     struct shedd_stats *st, struct shedd_tun_stats *ts,
				     const struct pkt *in, __u32 ifindex)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct tcphdr *tcp = in->tcp;
	struct shedd_class_stats *cs;
	struct shedd_fair_class *fc;
	struct shedd_bucket *b;
	__u64 l3off, flags, now, judged;
	__u32 mode, ckey;
	__u64 cls;
	int is_ack, is_rst, ret, paid_note = 0;
	__u16 dport;

	if ((void *)(tcp + 1) > data_end) {
		st->malformed++;
		return XDP_PASS;
	}
	is_ack = verify_enabled && pkt_handshake_ack(in);
	is_rst = verify_enabled && tcp->rst && !tcp->syn;
	if (!is_ack && !is_rst && (!tcp->syn || tcp->ack)) {
		st->non_syn++;
		return XDP_PASS;
	}
	if (!is_ack && !is_rst && (tcp->rst || tcp->fin)) {
		st->bad_syn++;
		return XDP_PASS;
	}
	dport = bpf_ntohs(tcp->dest);
	if (!port_protected(cfg, dport)) {
		if (is_ack || is_rst)
			st->non_syn++;
		else
			st->unprotected++;
		return XDP_PASS;
	}
	if (!ifindex)
		ifindex = ctx->ingress_ifindex;
	l3off = in->l2_len;
	flags = in->l3_proto == ETH_P_IPV6 ? CK_V6 : 0;
	/* A RST ends what a proven inner ACK left for the segments behind
	 * it, as outside. */
	if (is_rst) {
		shedd_flow_end(ctx, l3off, in->l3_len, flags);
		st->non_syn++;
		return XDP_PASS;
	}
	cls = classify(in, data_end, cfg);
	if (cls >= SHEDD_NR_CLASSES)
		cls = SHEDD_SHEDDABLE;
	if (!is_ack) {
		/* What the kernel drops after it opened the tunnel never
		 * reaches the listener: no token. */
		if (addr_kernel_drops(in, data_end, ifindex)) {
			st->syn_martian++;
			return XDP_DROP;
		}
		if (!in->first_frag &&
		    shedd_syn_csum(ctx, l3off, in->l3_len, in->l4_len, flags) == CSUM_BAD) {
			st->syn_bad_csum++;
			return XDP_DROP;
		}
	}
	/* 64 bits, and bounded again where it indexes: across the calls a
	 * 32-bit spill loses its bound on Debian 12's verifiers (shedd_xdp()'s
	 * kls). */
	verifier_bound(cls, SHEDD_NR_CLASSES - 1);
	mode = class_mode(cfg, cls);
	/* A source above the default class must be routed back through the
	 * tunnel's device, as rp_filter checks it there. An inner SYN is
	 * never answered: under --source-check verify too, one that fails
	 * is judged as the default class. */
	if (!is_ack && cfg->source_check != SHEDD_SRC_OFF && cls < cfg->default_class &&
	    cfg->default_class < SHEDD_NR_CLASSES) {
		ret = shedd_src_route(ctx, l3off, in->l3_len,
				      flags | (__u64)ifindex << SRC_IFINDEX_SHIFT);
		if (ret == SRC_FAILED) {
			st->src_failed++;
			/* Its ACK comes back in the class it claims: noted
			 * if charged, as shedd_xdp() does. */
			paid_note = mode != SHEDD_VERIFY_OFF;
			cls = cfg->default_class;
			mode = SHEDD_VERIFY_OFF;
		} else if (ret == SRC_UNCHECKED) {
			st->src_unchecked++;
		}
		if (cls >= SHEDD_NR_CLASSES)
			cls = SHEDD_SHEDDABLE;
	}
	verifier_bound(cls, SHEDD_NR_CLASSES - 1);
	ckey = (__u32)cls;
	cs = &st->cls[cls];
	now = clock_coarse_ns();
	if (is_ack) {
		struct shedd_tun_checks *tk;
		__u32 zero = 0;

		if (mode == SHEDD_VERIFY_OFF) {
			st->non_syn++;
			return XDP_PASS;
		}
		st->ack_probed++;
		tk = bpf_map_lookup_elem(&tun_checks, &zero);
		if (tk)
			tk->acks++;
		judged = shedd_cookie_ack(ctx, l3off, in->l3_len, flags, ckey | CHARGE_TUN);
		ret = (int)(judged & ACK_VERDICT_MASK);
		/* A FIN is judged like any segment, then ends the flow. */
		if (tcp->fin)
			shedd_flow_end(ctx, l3off, in->l3_len, flags);
		if (ret != ACK_NOT_OURS)
			st->frag_judged += in->first_frag;
		ret = ack_counted(ret, st, cs, cfg, dport);
		if (ret != ACK_ACT_ADMITTED && ret != ACK_ACT_REFUSED)
			return ret;
		if (ret == ACK_ACT_ADMITTED) {
			if (fair_of(ckey))
				shedd_fair(ctx, l3off, in->l3_len, flags, ckey | FAIR_COUNT);
			return XDP_PASS;
		}
		/* No token: a RST would have to go back through the tunnel. */
		return XDP_DROP;
	}
	b = bpf_map_lookup_elem(&tun_buckets, &ckey);
	cs->syn++;
	cs->charged++;
	ts->judged++;
	st->frag_judged += in->first_frag;
	fc = fair_of(ckey);
	if (fc && fc->active && !lease_run_out(now) &&
	    shedd_fair(ctx, l3off, in->l3_len, flags, ckey | FAIR_CHECK)) {
		cs->dropped++;
		return XDP_DROP;
	}
	if (charge(b, ckey | CHARGE_TUN, now)) {
		cs->admitted++;
		/* The kernel may answer it with a cookie of its own: its ACK
		 * is not charged again. */
		if (mode != SHEDD_VERIFY_OFF || paid_note)
			shedd_syn_charged(ctx, l3off, in->l3_len, flags, now);
		else if (fair_of(ckey))
			shedd_fair(ctx, l3off, in->l3_len, flags, ckey | FAIR_COUNT);
		return XDP_PASS;
	}
	cs->dropped++;
	return XDP_DROP;
}


/* Judge the inner segment shedd_tunnel() answered @v (TUN_JUDGE) for, in
 * the frame's @in. */
static __always_inline int tun_judged(struct xdp_md *ctx, struct shedd_stats *st, struct pkt *in,
				      __u64 v)
{
	struct tun_pkt_scratch *sc;
	struct shedd_tun_stats *ts;
	struct shedd_config *cfg;
	__u32 zero = 0, ifindex = 0;

	ts = bpf_map_lookup_elem(&tun_stats, &zero);
	cfg = settings_again();
	/* Found by shedd_tunnel() a moment ago: cannot be missing. */
	if (!ts || !cfg)
		return XDP_PASS;
	/* Headers the parser found and we cannot follow: refused. */
	if (tun_unpack(v, (void *)(long)ctx->data, (void *)(long)ctx->data_end, in)) {
		ts->refused++;
		return XDP_DROP;
	}
	sc = bpf_map_lookup_elem(&tun_pkt, &zero);
	if (sc)
		ifindex = sc->ifindex;
	return tun_judge(ctx, cfg, st, ts, in, ifindex);
}

#endif /* SHEDD_TUNNEL_H */
