/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tun_packets.h - encapsulated frames for the XDP tests and the fuzzer: an
 * inner frame built by packets.h, wrapped in one tunnel header (IPIP, SIT,
 * IP6IP6, GRE, GRE-TAP, VXLAN, Geneve, FOU, GUE) and an outer IPv4 or IPv6 header
 * from pkt_client_mac to pkt_server_mac. Included after packets.h.
 */
#ifndef SHEDD_TUN_PACKETS_H
#define SHEDD_TUN_PACKETS_H

enum tun_pkt_kind {
	TUNP_IPIP = 1, /* IPv4 in IPv4 */
	TUNP_SIT,      /* IPv6 in IPv4 */
	TUNP_4IN6,     /* IPv4 in IPv6 */
	TUNP_6IN6,     /* IPv6 in IPv6 */
	TUNP_GRE,      /* IP in GRE in IPv4 */
	TUNP_GRETAP,   /* Ethernet in GRE in IPv4 */
	TUNP_GRE6,     /* IP in GRE in IPv6 */
	TUNP_GRETAP6,  /* Ethernet in GRE in IPv6 */
	TUNP_VXLAN,    /* Ethernet in VXLAN in UDP in IPv4 */
	TUNP_VXLAN6,   /* ... in IPv6 */
	TUNP_GENEVE,   /* Ethernet (or IP, geneve_proto) in Geneve in UDP in IPv4 */
	TUNP_GENEVE6,
	TUNP_FOU,      /* IP (or TCP, GRE: fou_proto) in FOU in UDP in IPv4 */
	TUNP_FOU6,
	TUNP_GUE,      /* IP (or what fou_proto says) in GUE in UDP in IPv4 */
	TUNP_GUE6,
};

#define TUNP_VXLAN_PORT 4789
#define TUNP_GENEVE_PORT 6081
/* FOU ports by the protocol they carry, and the GUE port. */
#define TUNP_FOU4_PORT 5555   /* ipproto 4, IPv4 only */
#define TUNP_FOU41_PORT 5557  /* ipproto 41 */
#define TUNP_FOU6_PORT 5558   /* ipproto 6: TCP itself */
#define TUNP_FOU47_PORT 5559  /* ipproto 47: GRE */
#define TUNP_GUE_PORT 5556
#define TUNP_GRE_C 0x8000
#define TUNP_GRE_R 0x4000
#define TUNP_GRE_K 0x2000
#define TUNP_GRE_S 0x1000

/* What to wrap the inner frame in. A zero field takes the default. */
struct tun_pkt_spec {
	enum tun_pkt_kind kind;
	const char *outer_daddr;  /* PKT_V4_SERVER / PKT_V6_SERVER */
	__u16 gre_flags;          /* C, K, S (each adds its 4 bytes), R, version */
	__u32 gre_key;            /* K: the key (0: 07 07 07 07) */
	__u32 vni;                /* VXLAN, Geneve (0: 42) */
	__u16 gre_proto;          /* the inner's ethertype, or 0x6558 for GRE-TAP */
	__u16 udp_port;           /* TUNP_VXLAN_PORT / TUNP_GENEVE_PORT */
	int vxlan_no_i;           /* 1: the VNI-valid flag cleared */
	unsigned int geneve_opt;  /* option bytes: a multiple of 4, <= 252 */
	__u8 geneve_ver;          /* the version bits (0) */
	__u16 geneve_proto;       /* 0x6558 (Ethernet), or ETH_P_IP/_IPV6 */
	__u16 outer_frag;         /* the outer IPv4 frag_off, or (IPv6) a
				   * Fragment header's offset and M */
	__u8 fou_proto;           /* FOU: what the port carries, GUE version 0:
				   * proto_ctype; 0: 4 or 41 by the inner. 6:
				   * the inner TCP header itself, 47: in GRE */
	__u8 gue_ver;             /* GUE version (0 or 1; 2, 3 undefined) */
	int gue_control;          /* 1: the C bit (a control message) */
	unsigned int gue_opt;     /* bytes of optional fields: a multiple of 4, <= 124 */
	/* IPv6 outer: a routing header of an unknown type (Segments Left 0)
	 * and destination options of these many bytes each (packets.h's
	 * ext_len) before the tunnel header, after a Fragment header. */
	unsigned int outer_rh_len, outer_do_len;
};

static inline int tun_pkt_fou(enum tun_pkt_kind k)
{
	return k == TUNP_FOU || k == TUNP_FOU6;
}

static inline int tun_pkt_gue(enum tun_pkt_kind k)
{
	return k == TUNP_GUE || k == TUNP_GUE6;
}

/* The protocol a FOU or GUE header hands the payload to. */
static inline __u8 tun_pkt_fou_proto(const struct tun_pkt_spec *t, __u16 inner_l3)
{
	if (t->fou_proto)
		return t->fou_proto;
	return inner_l3 == ETH_P_IPV6 ? IPPROTO_IPV6 : IPPROTO_IPIP;
}

/* The port of a FOU tunnel of this protocol. */
static inline __u16 tun_pkt_fou_port(__u8 proto)
{
	return proto == IPPROTO_IPV6 ? TUNP_FOU41_PORT : proto == IPPROTO_TCP ? TUNP_FOU6_PORT :
	       proto == IPPROTO_GRE ? TUNP_FOU47_PORT : TUNP_FOU4_PORT;
}

static inline int tun_pkt_outer_v6(enum tun_pkt_kind k)
{
	return k == TUNP_4IN6 || k == TUNP_6IN6 || k == TUNP_GRE6 || k == TUNP_GRETAP6 ||
	       k == TUNP_VXLAN6 || k == TUNP_GENEVE6 || k == TUNP_FOU6 || k == TUNP_GUE6;
}

/* Does the tunnel carry the inner frame's Ethernet header? */
static inline int tun_pkt_carries_eth(const struct tun_pkt_spec *t)
{
	switch (t->kind) {
	case TUNP_GRETAP:
	case TUNP_GRETAP6:
	case TUNP_VXLAN:
	case TUNP_VXLAN6:
		return 1;
	case TUNP_GENEVE:
	case TUNP_GENEVE6:
		return !t->geneve_proto || t->geneve_proto == 0x6558;
	default:
		return 0;
	}
}

/* Build into @p the frame @t wraps around the frame @inner describes. The
 * marks name the outer headers, the tunnel header and the inner headers;
 * hdr_end is the end of the inner TCP header. */
static inline void tun_pkt_build(struct pkt *p, const struct tun_pkt_spec *t,
				 const struct pkt_spec *inner)
{
	struct pkt in;
	struct pkt_spec outer = { 0 };
	int v6 = tun_pkt_outer_v6(t->kind), eth = tun_pkt_carries_eth(t), i;
	size_t from, base;
	__u8 proto;

	pkt_build(&in, inner);
	memset(p, 0, sizeof(*p));
	switch (t->kind) {
	case TUNP_IPIP:
	case TUNP_4IN6:
		proto = IPPROTO_IPIP;
		break;
	case TUNP_SIT:
	case TUNP_6IN6:
		proto = IPPROTO_IPV6;
		break;
	case TUNP_GRE:
	case TUNP_GRETAP:
	case TUNP_GRE6:
	case TUNP_GRETAP6:
		proto = IPPROTO_GRE;
		break;
	default:
		proto = IPPROTO_UDP;
		break;
	}
	p->l3_proto = v6 ? ETH_P_IPV6 : ETH_P_IP;
	p->l4_proto = proto;
	outer.daddr = t->outer_daddr;
	outer.frag = t->outer_frag;
	if (v6 && t->outer_frag)
		outer.ext[outer.nr_ext++] = IPPROTO_FRAGMENT;
	if (v6 && t->outer_rh_len) {
		outer.ext_len[outer.nr_ext] = t->outer_rh_len;
		outer.ext[outer.nr_ext++] = IPPROTO_ROUTING;
	}
	if (v6 && t->outer_do_len) {
		outer.ext_len[outer.nr_ext] = t->outer_do_len;
		outer.ext[outer.nr_ext++] = IPPROTO_DSTOPTS;
	}
	pkt_put_eth(p, p->l3_proto);
	p->l3_off = p->len;
	if (v6) {
		pkt_addr(AF_INET6, PKT_V6_CLIENT, p->saddr);
		pkt_addr(AF_INET6, t->outer_daddr ? t->outer_daddr : PKT_V6_SERVER, p->daddr);
		pkt_put_ipv6(p, &outer, proto);
	} else {
		pkt_addr(AF_INET, PKT_V4_CLIENT, p->saddr);
		pkt_addr(AF_INET, t->outer_daddr ? t->outer_daddr : PKT_V4_SERVER, p->daddr);
		pkt_put_ipv4(p, &outer, proto);
	}
	p->l4_off = p->len;
	if (proto == IPPROTO_GRE) {
		__u8 *g = pkt_put(p, 4, "GRE header");
		__u16 ptype = t->gre_proto ? t->gre_proto : eth ? 0x6558 : in.l3_proto;

		g[0] = t->gre_flags >> 8;
		g[1] = t->gre_flags & 0xff;
		g[2] = ptype >> 8;
		g[3] = ptype & 0xff;
		if (t->gre_flags & TUNP_GRE_C)
			pkt_put(p, 4, "GRE checksum");
		if (t->gre_flags & TUNP_GRE_K) {
			__u32 key = htonl(t->gre_key ? t->gre_key : 0x07070707U);

			memcpy(pkt_put(p, 4, "GRE key"), &key, 4);
		}
		if (t->gre_flags & TUNP_GRE_S)
			memset(pkt_put(p, 4, "GRE sequence number"), 0x01, 4);
	} else if (proto == IPPROTO_UDP) {
		struct pkt_udp *udp = pkt_put(p, sizeof(*udp), "UDP header");
		int geneve = t->kind == TUNP_GENEVE || t->kind == TUNP_GENEVE6;
		__u8 fp = tun_pkt_fou_proto(t, in.l3_proto);
		__u16 port = t->udp_port ? t->udp_port :
			     tun_pkt_fou(t->kind) ? tun_pkt_fou_port(fp) :
			     tun_pkt_gue(t->kind) ? TUNP_GUE_PORT :
			     geneve ? TUNP_GENEVE_PORT : TUNP_VXLAN_PORT;
		__u8 *h;

		udp->sport = htons(49152);
		udp->dport = htons(port);
		if (tun_pkt_fou(t->kind) || tun_pkt_gue(t->kind)) {
			if (tun_pkt_gue(t->kind) && t->gue_ver != 1) {
				if (t->gue_opt % 4 || t->gue_opt > 124)
					pkt_bug("GUE fields: a multiple of 4, at most 124 bytes");
				h = pkt_put(p, 4, "GUE header");
				h[0] = (__u8)(t->gue_ver << 6 | (t->gue_control ? 0x20 : 0) |
					      t->gue_opt / 4);
				h[1] = fp;
				if (t->gue_opt)
					pkt_put(p, t->gue_opt, "GUE fields");
			}
			if (fp == IPPROTO_GRE && !(tun_pkt_gue(t->kind) && t->gue_ver == 1)) {
				h = pkt_put(p, 4, "GRE header");
				h[2] = in.l3_proto >> 8;
				h[3] = in.l3_proto & 0xff;
			}
		} else if (!geneve) {
			__u32 vni = t->vni ? t->vni : 42;

			h = pkt_put(p, 8, "VXLAN header");
			h[0] = t->vxlan_no_i ? 0 : 0x08;
			h[4] = (__u8)(vni >> 16);
			h[5] = (__u8)(vni >> 8);
			h[6] = (__u8)vni;
		} else {
			__u16 gp = t->geneve_proto ? t->geneve_proto : 0x6558;

			if (t->geneve_opt % 4 || t->geneve_opt > 252)
				pkt_bug("Geneve options: a multiple of 4, at most 252 bytes");
			__u32 vni = t->vni ? t->vni : 42;

			h = pkt_put(p, 8, "Geneve header");
			h[0] = (__u8)(t->geneve_ver << 6 | t->geneve_opt / 4);
			h[2] = gp >> 8;
			h[3] = gp & 0xff;
			h[4] = (__u8)(vni >> 16);
			h[5] = (__u8)(vni >> 8);
			h[6] = (__u8)vni;
			if (t->geneve_opt) {
				h = pkt_put(p, t->geneve_opt, "Geneve options");
				/* One option per 128 bytes at most: class 0xffff. */
				for (i = 0; i < (int)t->geneve_opt; i += 128) {
					unsigned int n = t->geneve_opt - i < 128 ? t->geneve_opt - i : 128;

					h[i] = 0xff;
					h[i + 1] = 0xff;
					h[i + 3] = n / 4 - 1;
				}
			}
		}
	}
	/* The inner frame, with or without its Ethernet header; for FOU or
	 * GUE of protocol 6 or 17, its TCP or UDP header only. */
	from = eth ? 0 : in.l3_off;
	if ((tun_pkt_fou(t->kind) || (tun_pkt_gue(t->kind) && t->gue_ver != 1)) &&
	    (tun_pkt_fou_proto(t, in.l3_proto) == IPPROTO_TCP ||
	     tun_pkt_fou_proto(t, in.l3_proto) == IPPROTO_UDP))
		from = in.l4_off;
	base = p->len;
	if (p->len + (in.len - from) > PKT_MAX)
		pkt_bug("encapsulated frame longer than PKT_MAX");
	memcpy(p->data + p->len, in.data + from, in.len - from);
	p->len += in.len - from;
	for (i = 0; i < in.nr_marks; i++) {
		if (in.marks[i].off < from)
			continue;
		if (p->nr_marks >= PKT_MAX_MARKS)
			pkt_bug("too many headers");
		p->marks[p->nr_marks].off = base + in.marks[i].off - from;
		p->marks[p->nr_marks].what = in.marks[i].what;
		p->nr_marks++;
	}
	p->hdr_end = base + in.hdr_end - from;
	p->nr_vlans = in.nr_vlans;
	/* A TCP segment carried by FOU or GUE itself is summed over the
	 * outer addresses, as its sender sums it: they are its IP header's. */
	if (from == in.l4_off && in.l4_proto == IPPROTO_TCP && from != in.l3_off) {
		struct pkt_tcp *tcp = (void *)(p->data + base);

		tcp->check = htons(pkt_l4_csum(v6, p->saddr, p->daddr, IPPROTO_TCP, tcp,
					       p->len - base, offsetof(struct pkt_tcp, check)));
	}
	pkt_finish(p);
}

#endif /* SHEDD_TUN_PACKETS_H */
