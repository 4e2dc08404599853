/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tun_packets.h - encapsulated frames for the XDP tests and the fuzzer: an
 * inner frame built by packets.h, wrapped in one tunnel header (IPIP, SIT,
 * IP6IP6, GRE, GRE-TAP, VXLAN, Geneve) and an outer IPv4 or IPv6 header
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
};

#define TUNP_VXLAN_PORT 4789
#define TUNP_GENEVE_PORT 6081
#define TUNP_GRE_C 0x8000
#define TUNP_GRE_R 0x4000
#define TUNP_GRE_K 0x2000
#define TUNP_GRE_S 0x1000

/* What to wrap the inner frame in. A zero field takes the default. */
struct tun_pkt_spec {
	enum tun_pkt_kind kind;
	const char *outer_daddr;  /* PKT_V4_SERVER / PKT_V6_SERVER */
	__u16 gre_flags;          /* C, K, S (each adds its 4 bytes), R, version */
	__u16 gre_proto;          /* the inner's ethertype, or 0x6558 for GRE-TAP */
	__u16 udp_port;           /* TUNP_VXLAN_PORT / TUNP_GENEVE_PORT */
	int vxlan_no_i;           /* 1: the VNI-valid flag cleared */
	unsigned int geneve_opt;  /* option bytes: a multiple of 4, <= 252 */
	__u8 geneve_ver;          /* the version bits (0) */
	__u16 geneve_proto;       /* 0x6558 (Ethernet), or ETH_P_IP/_IPV6 */
	__u16 outer_frag;         /* the outer IPv4 frag_off, or (IPv6) a
				   * Fragment header's offset and M */
};

static inline int tun_pkt_outer_v6(enum tun_pkt_kind k)
{
	return k == TUNP_4IN6 || k == TUNP_6IN6 || k == TUNP_GRE6 || k == TUNP_GRETAP6 ||
	       k == TUNP_VXLAN6 || k == TUNP_GENEVE6;
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
	if (v6 && t->outer_frag) {
		outer.nr_ext = 1;
		outer.ext[0] = IPPROTO_FRAGMENT;
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
		if (t->gre_flags & TUNP_GRE_K)
			memset(pkt_put(p, 4, "GRE key"), 0x07, 4);
		if (t->gre_flags & TUNP_GRE_S)
			memset(pkt_put(p, 4, "GRE sequence number"), 0x01, 4);
	} else if (proto == IPPROTO_UDP) {
		struct pkt_udp *udp = pkt_put(p, sizeof(*udp), "UDP header");
		int geneve = t->kind == TUNP_GENEVE || t->kind == TUNP_GENEVE6;
		__u16 port = t->udp_port ? t->udp_port :
			     geneve ? TUNP_GENEVE_PORT : TUNP_VXLAN_PORT;
		__u8 *h;

		udp->sport = htons(49152);
		udp->dport = htons(port);
		if (!geneve) {
			h = pkt_put(p, 8, "VXLAN header");
			h[0] = t->vxlan_no_i ? 0 : 0x08;
			h[6] = 42; /* VNI 42 */
		} else {
			__u16 gp = t->geneve_proto ? t->geneve_proto : 0x6558;

			if (t->geneve_opt % 4 || t->geneve_opt > 252)
				pkt_bug("Geneve options: a multiple of 4, at most 252 bytes");
			h = pkt_put(p, 8, "Geneve header");
			h[0] = (__u8)(t->geneve_ver << 6 | t->geneve_opt / 4);
			h[2] = gp >> 8;
			h[3] = gp & 0xff;
			h[6] = 42;
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
	/* The inner frame, with or without its Ethernet header. */
	from = eth ? 0 : in.l3_off;
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
	pkt_finish(p);
}

#endif /* SHEDD_TUN_PACKETS_H */
