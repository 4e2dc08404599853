/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* syncookie.h - verified admission at XDP. A SYN of a verified class is
 * turned in place into the SYN-ACK that carries a SYN cookie, for XDP_TX;
 * an ACK to a listener is checked against the cookies. The cookies are the
 * kernel's own (bpf_tcp_raw_gen_syncookie_*), so the kernel's secret and
 * its two-minute validity apply. The client's options travel in the
 * timestamp, as in the kernel's cookies (net/ipv4/syncookies.c): window
 * scale, SACK and ECN in the low 6 bits and, for the tc hand-off, the MSS
 * index in bits 6-7 and shedd's tag of the cookie above (shedd_ts_tag()),
 * which tells its cookies from the kernel's own. Without a timestamp only
 * the MSS survives, in the cookie itself.
 *
 * Both halves are global functions: the verifier checks each once, with
 * its own packet bounds, instead of once for every path of the parser.
 * They read the packet again from offsets the parser found.
 */
#ifndef SHEDD_SYNCOOKIE_H
#define SHEDD_SYNCOOKIE_H

#include <bpf/bpf_core_read.h>

#include "tcpopt.h"

#ifndef AF_INET
#define AF_INET 2
#endif
#ifndef AF_INET6
#define AF_INET6 10
#endif

#define SYNACK_TTL 64
/* The window of a SYN-ACK is never scaled (RFC 7323 2.2): the kernel
 * offers its listener's space, 64 KiB, rounded down to whole segments,
 * at most 64 KiB less 1. */
#define SYNACK_WINDOW 65535U
#define SYNACK_SPACE 65536U
/*
 * lens_bound() - bound the header offsets a global function was given to
 * what the parser gives (PARSE_MAX_L2_MASK, PARSE_MAX_L3_MASK: Ethernet
 * and every VLAN tag walked, IPv6 and MAX_IPV6_EXT_HDRS headers of 2 KiB),
 * for the verifier. It cannot fail: every function takes every header
 * length the parser accepts. The one guard is pkt_unpack() (and
 * tun_unpack() in a tunnel), which refuses a parse outside those bounds
 * before any function is called; a function that cannot read a header it
 * was given still answers the way that charges or refuses, never "nothing
 * to see".
 *
 * A global function's arguments are unknown scalars. clang spills them at
 * entry and checks a copy; Debian 12's verifiers do not carry a bound
 * learned on the copy over to the spilled value, so data + the value that
 * is filled again is "math with an unbounded min value" there.
 * verifier_bound() bounds the value itself, and a bounded value keeps its
 * bound through a spill on every kernel.
 */
static __always_inline void lens_bound(__u64 *l2_len, __u64 *l3_len)
{
	__u64 l2 = *l2_len, l3 = *l3_len;

	verifier_bound(l2, PARSE_MAX_L2_MASK);
	verifier_bound(l3, PARSE_MAX_L3_MASK);
	*l2_len = l2;
	*l3_len = l3;
}

/* The IP header of a tunnel's inner packet lies within 16 KiB of the
 * frame's start (tunnel.h, TUN_L3_MASK): lens_bound() for the functions
 * that also judge one (shedd_syn_csum(), shedd_src_route(), shedd_fair()),
 * whose @l2_len is then that offset. */
#define LENS_INNER_L2_MASK 0x3fff
static __always_inline void lens_bound_inner(__u64 *l2_len, __u64 *l3_len)
{
	__u64 l2 = *l2_len, l3 = *l3_len;

	verifier_bound(l2, LENS_INNER_L2_MASK);
	verifier_bound(l3, PARSE_MAX_L3_MASK);
	*l2_len = l2;
	*l3_len = l3;
}

/* flags of shedd_syncookie_reply() and shedd_cookie_check(). */
#define CK_V6 1U
#define CK_VLANS_SHIFT 1 /* bits 1-4: VLAN tags before the IP header */
#define CK_VLANS_MASK 15
_Static_assert(MAX_VLAN_TAGS <= CK_VLANS_MASK, "the flags carry every tag walked");

/* The SYN-ACK's TCP header with the longest option set we send:
 * MSS, SACK_PERM + TS (or NOP NOP TS), NOP WS. */
struct synack_tcp {
	struct tcphdr th;
	__u8 opt[20];
};

/* Take one cookie SYN-ACK from this CPU's budget. */
static __always_inline int cookie_budget_take(const struct shedd_config *cfg, __u64 now)
{
	__u32 zero = 0;
	struct shedd_rst_budget *b = bpf_map_lookup_elem(&cookie_budget, &zero);
	__u64 rate = cfg->cookie_rate_per_sec, burst = cfg->cookie_burst;

	if (!b)
		return 0;
	if (rate > MAX_COOKIE_RATE_PER_SEC)
		rate = MAX_COOKIE_RATE_PER_SEC;
	if (burst > MAX_COOKIE_BURST)
		burst = MAX_COOKIE_BURST;
	return tx_budget_take(b, rate, burst, now);
}

/**
 * shedd_refresh() - keep the listener of the SYN in @ctx ready for cookies.
 * @ctx, @l2_len, @l3_len, @flags: as for shedd_syncookie_reply()
 *
 * The kernel takes a cookie only from a listener that issued cookies of
 * its own in the last two minutes (tcp_synq_no_recent_overflow()): the
 * kernel hand-off relies on that (the tc hand-off does not: it assigns the
 * request itself, and takes the MSS of an ACK without a timestamp from
 * mss_cache). Asking the kernel for a cookie with bpf_tcp_gen_syncookie()
 * stamps the listener; this does it at most once a second per port on
 * this CPU, before the SYN is rewritten.
 *
 * Return: 1 if the listener was stamped, else 0.
 */
__noinline int shedd_refresh(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len, __u64 flags)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
	} ih = {};
	struct bpf_sock_tuple t = {};
	struct shedd_refresh *r;
	struct tcphdr *pt;
	struct bpf_sock *sk;
	__u8 th[64] = {};
	__u32 slot, th_len, tlen, ih_len;
	__u16 port;
	__u64 now;
	int ok = 0;

	lens_bound(&l2_len, &l3_len);
	pt = data + l2_len + l3_len;
	if ((void *)(pt + 1) > data_end)
		return 0;
	port = bpf_ntohs(pt->dest);
	th_len = pt->doff * 4;
	slot = port % REFRESH_SLOTS;
	r = bpf_map_lookup_elem(&refresh, &slot);
	now = clock_coarse_ns();
	if (!r || (r->port == port && r->ns && now - r->ns < REFRESH_NS))
		return 0;
	r->port = port;
	r->ns = now;

	if (th_len < sizeof(struct tcphdr) || th_len > TCP_MAX_HLEN ||
	    bpf_xdp_load_bytes(ctx, l2_len + l3_len, th, th_len))
		return 0;
	if (flags & CK_V6) {
		if (bpf_xdp_load_bytes(ctx, l2_len, &ih.v6, sizeof(ih.v6)))
			return 0;
		__builtin_memcpy(t.ipv6.saddr, &ih.v6.saddr, 16);
		__builtin_memcpy(t.ipv6.daddr, &ih.v6.daddr, 16);
		t.ipv6.sport = ((struct tcphdr *)th)->source;
		t.ipv6.dport = ((struct tcphdr *)th)->dest;
		tlen = sizeof(t.ipv6);
		ih_len = sizeof(ih.v6);
	} else {
		if (bpf_xdp_load_bytes(ctx, l2_len, &ih.v4, sizeof(ih.v4)))
			return 0;
		/* The helper wants the IPv4 header without its options. */
		ih.v4.ihl = 5;
		t.ipv4.saddr = ih.v4.saddr;
		t.ipv4.daddr = ih.v4.daddr;
		t.ipv4.sport = ((struct tcphdr *)th)->source;
		t.ipv4.dport = ((struct tcphdr *)th)->dest;
		tlen = sizeof(t.ipv4);
		ih_len = sizeof(ih.v4);
	}
	sk = bpf_skc_lookup_tcp(ctx, &t, tlen, BPF_F_CURRENT_NETNS, 0);
	if (!sk)
		return 0;
	if (sk->state == BPF_TCP_LISTEN &&
	    bpf_tcp_gen_syncookie(sk, &ih, ih_len, (struct tcphdr *)th, th_len) >= 0)
		ok = 1;
	bpf_sk_release(sk);
	return ok;
}

/* The index of @mss in the cookie MSS table of the family. */
static __always_inline __u32 mss_index(__u32 mss, int v6)
{
	__u32 i;

#pragma unroll
	for (i = 0; i < 3; i++) {
		if (v6 ? mss == SHEDD_MSS6(i) : mss == SHEDD_MSS4(i))
			return i;
	}
	return 3;
}

/* The timestamp of a cookie SYN-ACK for the kernel hand-off: the clock in
 * ms with its low bits replaced by @opts, never ahead of the clock
 * (net/ipv4/syncookies.c does the same, and the kernel's later timestamps
 * must not go backwards). */
static __always_inline __u32 cookie_tsval(__u64 now_ns, __u32 opts, __u32 bits)
{
	__u32 now_ms = (__u32)(now_ns / 1000000), mask = (1U << bits) - 1, ts;

	ts = (now_ms & ~mask) | (opts & mask);
	if ((__s32)(ts - now_ms) > 0)
		ts -= mask + 1;
	return ts;
}

/* Sum of the pseudo-header and the TCP segment in @s (@tcp_len bytes, the
 * rest of @s zero). */
static __always_inline __u16 synack_csum(const void *saddr, const void *daddr,
					 int v6, const struct synack_tcp *s,
					 __u32 tcp_len)
{
	__u64 sum;

	if (v6)
		sum = csum_add_words(0, saddr, 16) + csum_add_words(0, daddr, 16);
	else
		sum = csum_add_words(0, saddr, 4) + csum_add_words(0, daddr, 4);
	sum += bpf_htons(IPPROTO_TCP) + bpf_htons((__u16)tcp_len);
	sum = csum_add_words(sum, s, sizeof(*s));
	return csum_fold(sum);
}

/* What shedd_syncookie_reply() keeps while it reshapes the frame: the
 * headers it answers, the reply's IP and TCP headers, the VLAN tags and
 * the MAC addresses. Per CPU, off the stack: the verifiers of 6.0-6.8 round
 * each frame of a call chain up to 32 bytes and allow 512 in all, and
 * on the stack the reply and the program's entry came to exactly 512.
 * XDP handles one packet at a time per CPU, and nothing is kept between
 * packets: not pinned, and a new program gets a new one. */
struct reply_scratch {
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
	} ih;
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
	} reply;
	struct synack_tcp s;
	struct vlan_tag tags[MAX_VLAN_TAGS];
	__u8 mac_dst[ETH_ALEN];
	__u8 mac_src[ETH_ALEN];
	__be16 eth_proto;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct reply_scratch);
} reply_scratch SEC(".maps");

/**
 * shedd_syncookie_reply() - rewrite the SYN in @ctx into its cookie SYN-ACK.
 * @ctx:    the frame; the parser found the IP header at @l2_len and the TCP
 *          header @l3_len bytes after it
 * @l2_len: Ethernet header and VLAN tags
 * @l3_len: IP header with options, or IPv6 header with its chain
 * @flags:  CK_V6, and the number of VLAN tags << CK_VLANS_SHIFT
 *
 * The reply keeps the MACs (swapped) and the VLAN tags, drops IP options
 * and extension headers and answers the options the SYN offered in the
 * kernel's order. For SHEDD_HANDOFF_KERNEL the listener's cookie stamp is
 * refreshed first.
 *
 * Return: 0 when the frame is ready for XDP_TX, negative if not (the
 * caller sheds the SYN).
 */
__noinline int shedd_syncookie_reply(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len,
				     __u64 flags)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 zero = 0, nr_vlans = (flags >> CK_VLANS_SHIFT) & CK_VLANS_MASK, v6 = flags & CK_V6;
	__u32 th_len, tcp_len, new_l3, new_len, cur_len, ip_len, mss, adv, opts, tag;
	__u8 off, use_ts, use_sack, use_ws;
	/* On the stack: bpf_loop() takes its context only from there. */
	struct opt_walk w = {};
	__u8 *th = w.th;
	struct reply_scratch *sc;
	struct shedd_config *cfg;
	__u32 client_isn;
	__s64 ck;
	int head, tail;
	void *pos;

	cfg = settings_again();
	sc = bpf_map_lookup_elem(&reply_scratch, &zero);
	if (!cfg || !sc || nr_vlans > MAX_VLAN_TAGS)
		return -1;
	lens_bound(&l2_len, &l3_len);
	/* What is built field by field starts from zeros; the rest is
	 * loaded or copied whole before it is read. */
	__builtin_memset(&sc->s, 0, sizeof(sc->s));
	__builtin_memset(&sc->reply, 0, sizeof(sc->reply));

	/* Copies of what the reply needs: the frame is reshaped below. */
	{
		struct ethhdr *eth = data;

		if ((void *)(eth + 1) > data_end)
			return -1;
		__builtin_memcpy(sc->mac_dst, eth->h_dest, ETH_ALEN);
		__builtin_memcpy(sc->mac_src, eth->h_source, ETH_ALEN);
		sc->eth_proto = eth->h_proto;
	}
	{
		struct vlan_tag *tag = data + sizeof(struct ethhdr);
		int i;

#pragma unroll
		for (i = 0; i < MAX_VLAN_TAGS; i++) {
			if (i >= nr_vlans)
				break;
			if ((void *)(tag + i + 1) > data_end)
				return -1;
			sc->tags[i] = tag[i];
		}
	}
	if (v6) {
		if (bpf_xdp_load_bytes(ctx, l2_len, &sc->ih.v6, sizeof(sc->ih.v6)))
			return -1;
	} else {
		if (bpf_xdp_load_bytes(ctx, l2_len, &sc->ih.v4, sizeof(sc->ih.v4)))
			return -1;
	}
	{
		struct tcphdr *pt = data + l2_len + l3_len;

		if ((void *)(pt + 1) > data_end)
			return -1;
		th_len = pt->doff * 4;
	}
	if (th_len < sizeof(struct tcphdr) || th_len > TCP_MAX_HLEN ||
	    bpf_xdp_load_bytes(ctx, l2_len + l3_len, th, th_len))
		return -1;
	w.len = th_len;
	if (!opt_linux_syn(&w))
		opt_walk(&w);

	if (v6)
		ck = bpf_tcp_raw_gen_syncookie_ipv6(&sc->ih.v6, (struct tcphdr *)th, th_len);
	else
		ck = bpf_tcp_raw_gen_syncookie_ipv4(&sc->ih.v4, (struct tcphdr *)th, th_len);
	if (ck < 0)
		return -1;
	mss = (__u32)(ck >> 32);
	/* The reply's sequence numbers go into the scratch at once (as the
	 * EtherType above, and the clock is read where it is used): a value
	 * live in a register across the calls below is spilled to the stack,
	 * whose 512 bytes Debian's 6.1 counts over the whole call chain. */
	client_isn = bpf_ntohl(((struct tcphdr *)th)->seq);
	sc->s.th.seq = bpf_htonl((__u32)ck);
	sc->s.th.ack_seq = bpf_htonl(client_isn + 1);
	/* The tc hand-off learns the MSS of a client without timestamps
	 * (none in its SYN, or tcp_timestamps=0) from the cache: its ACK
	 * carries no options. With timestamps, the flow hash makes shedd's
	 * tag of the cookie (shedd_ts_tag()). */
	tag = 0;
	if (cfg->handoff == SHEDD_HANDOFF_TC) {
		struct tcphdr *sth = (struct tcphdr *)th;
		__u32 h, slot, *e;

		if (v6)
			h = flow_hash_at((__u32 *)&sc->ih.v6.saddr, 4,
					 (__u32)sth->source << 16 | sth->dest);
		else
			h = flow_hash_at(&sc->ih.v4.saddr, 1, (__u32)sth->source << 16 | sth->dest);
		if (w.o.ts && !(cfg->syn_opts_off & SHEDD_SYNOPT_NO_TS)) {
			tag = shedd_ts_tag(h, (__u32)ck);
		} else {
			slot = h % MSS_CACHE_SLOTS;
			e = bpf_map_lookup_elem(&mss_cache, &slot);
			if (e)
				*e = (h & 0xffffff00U) | mss_index(mss, v6);
		}
	}

	/* What the kernel's own SYN-ACK would offer: an option whose sysctl
	 * is 0 is neither offered nor carried in the timestamp, whose cookie
	 * check (cookie_timestamp_decode()) refuses it then. Without
	 * timestamps the cookie keeps the MSS alone. */
	off = cfg->syn_opts_off;
	use_ts = w.o.ts && !(off & SHEDD_SYNOPT_NO_TS);
	use_sack = use_ts && w.o.sack && !(off & SHEDD_SYNOPT_NO_SACK);
	use_ws = use_ts && w.o.ws && !(off & SHEDD_SYNOPT_NO_WS);

	/* The SYN-ACK's TCP header and options (RFC 793, RFC 7323, RFC 2018,
	 * in tcp_options_write()'s order). */
	sc->s.th.source = ((struct tcphdr *)th)->dest;
	sc->s.th.dest = ((struct tcphdr *)th)->source;
	sc->s.th.syn = 1;
	sc->s.th.ack = 1;
	/* The MSS option offers what this host can receive, whatever the
	 * client offered (or did not: the cookie then holds the smallest
	 * entry, 536 or 1220): the kernel's advmss, the interface's MTU less
	 * the headers (tcp_make_synack(), ipv4_default_advmss() and
	 * ip6_default_advmss(), at least 256 and 1220). Without a known MTU,
	 * the cookie's MSS. */
	adv = mss;
	if (cfg->mtu > 60) {
		adv = cfg->mtu - (v6 ? 60 : 40);
		if (adv > 65535 - 20)
			adv = 65535 - 20;
		if (adv < (v6 ? 1220U : 256U))
			adv = v6 ? 1220 : 256;
	}
	{
		sc->s.opt[0] = TCPOPT_MSS;
		sc->s.opt[1] = 4;
		sc->s.opt[2] = (__u8)(adv >> 8);
		sc->s.opt[3] = (__u8)adv;
	}
	tcp_len = sizeof(struct tcphdr) + 4;
	if (use_ts) {
		__u32 tsval;

		/* ECN setup (RFC 3168 6.1.1) is a SYN with ECE and CWR. */
		opts = use_ws ? w.o.wscale : SHEDD_TS_WSCALE_MASK;
		if (use_sack)
			opts |= SHEDD_TS_SACK;
		if (cfg->ecn && ((struct tcphdr *)th)->ece && ((struct tcphdr *)th)->cwr) {
			opts |= SHEDD_TS_ECN;
			sc->s.th.ece = 1;
		}
		/* For the kernel hand-off, the kernel's own layout on the
		 * clock (tcp_timestamps=2: no offset). For the tc hand-off,
		 * shedd's tag and the MSS index instead of the clock: the
		 * kernel continues from the value it echoes
		 * (bpf_sk_assign_tcp_reqsk() sets the offset), as from the
		 * offset of a flow of its own. */
		if (cfg->handoff == SHEDD_HANDOFF_TC)
			tsval = tag | opts | mss_index(mss, v6) << SHEDD_TS_MSS_SHIFT;
		else
			tsval = cookie_tsval(clock_ns(), opts, SHEDD_TS_KERNEL_BITS);
		tsval = bpf_htonl(tsval);
		if (use_sack) {
			sc->s.opt[4] = TCPOPT_SACK_PERM;
			sc->s.opt[5] = 2;
		} else {
			sc->s.opt[4] = TCPOPT_NOP;
			sc->s.opt[5] = TCPOPT_NOP;
		}
		sc->s.opt[6] = TCPOPT_TIMESTAMP;
		sc->s.opt[7] = 10;
		__builtin_memcpy(&sc->s.opt[8], &tsval, 4);
		w.o.tsval = bpf_htonl(w.o.tsval);
		__builtin_memcpy(&sc->s.opt[12], &w.o.tsval, 4);
		tcp_len += 12;
		if (use_ws) {
			sc->s.opt[16] = TCPOPT_NOP;
			sc->s.opt[17] = TCPOPT_WINDOW;
			sc->s.opt[18] = 3;
			sc->s.opt[19] = cfg->wscale > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : cfg->wscale;
			tcp_len += 4;
		}
	}
	/* Without a timestamp the cookie keeps only the MSS: no window
	 * scaling, SACK or ECN, as the kernel's own cookies. */
	sc->s.th.doff = tcp_len / 4;
	/* tcp_select_initial_window(): the listener's space (64 KiB with
	 * the default tcp_rmem) rounded down to whole segments of the
	 * advertised MSS less the timestamp, at most 65535. */
	{
		__u32 seg = adv - (use_ts ? 12 : 0), win;

		if (!seg)
			seg = 1;
		win = SYNACK_SPACE - SYNACK_SPACE % seg;
		if (win > SYNACK_WINDOW)
			win = SYNACK_WINDOW;
		sc->s.th.window = bpf_htons((__u16)win);
	}

	/* Reshape: IP options and extension headers go from the front, so
	 * the headers are rewritten whole from the new start; the frame then
	 * grows at the front (headroom is always there, tailroom is not on
	 * every driver) or shrinks at the end. */
	new_l3 = v6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	if (l3_len < new_l3)
		return -1;
	new_len = l2_len + new_l3 + tcp_len;
	cur_len = (__u32)(data_end - data) - (l3_len - new_l3);
	head = (int)(l3_len - new_l3);
	tail = 0;
	if (new_len > cur_len)
		head -= (int)(new_len - cur_len);
	else
		tail = (int)new_len - (int)cur_len;
	if (head && bpf_xdp_adjust_head(ctx, head))
		return -1;
	if (tail && bpf_xdp_adjust_tail(ctx, tail))
		return -1;
	reload_bounds(ctx, &data, &data_end);
	if (data + new_len != data_end)
		return -1;

	{
		struct ethhdr *eth = data;

		if ((void *)(eth + 1) > data_end)
			return -1;
		__builtin_memcpy(eth->h_dest, sc->mac_src, ETH_ALEN);
		__builtin_memcpy(eth->h_source, sc->mac_dst, ETH_ALEN);
		eth->h_proto = sc->eth_proto;
		pos = eth + 1;
	}
	{
		int i;

#pragma unroll
		for (i = 0; i < MAX_VLAN_TAGS; i++) {
			struct vlan_tag *tag = pos;

			if (i >= nr_vlans)
				break;
			if ((void *)(tag + 1) > data_end)
				return -1;
			*tag = sc->tags[i];
			pos = tag + 1;
		}
	}
	/* The IP header follows the tags, at l2_len as the parser found it:
	 * taken from there, the pointer is the same whatever the number of
	 * tags, so the verifier checks what follows once, not once a depth. */
	pos = data + l2_len;

	if (v6) {
		struct ipv6hdr *ip6 = pos;
		struct ipv6hdr *r = &sc->reply.v6;

		if ((void *)(ip6 + 1) > data_end)
			return -1;
		r->version = 6;
		r->payload_len = bpf_htons((__u16)tcp_len);
		r->nexthdr = IPPROTO_TCP;
		r->hop_limit = SYNACK_TTL;
		r->saddr = sc->ih.v6.daddr;
		r->daddr = sc->ih.v6.saddr;
		sc->s.th.check = synack_csum(&r->saddr, &r->daddr, 1, &sc->s, tcp_len);
		*ip6 = *r;
		pos = ip6 + 1;
	} else {
		struct iphdr *ip = pos;
		struct iphdr *r = &sc->reply.v4;

		if ((void *)(ip + 1) > data_end)
			return -1;
		ip_len = sizeof(*r) + tcp_len;
		r->version = 4;
		r->ihl = 5;
		r->tot_len = bpf_htons((__u16)ip_len);
		r->frag_off = bpf_htons(0x4000); /* DF */
		r->ttl = SYNACK_TTL;
		r->protocol = IPPROTO_TCP;
		r->saddr = sc->ih.v4.daddr;
		r->daddr = sc->ih.v4.saddr;
		r->check = csum_fold(csum_add_words(0, r, sizeof(*r)));
		sc->s.th.check = synack_csum(&r->saddr, &r->daddr, 0, &sc->s, tcp_len);
		*ip = *r;
		pos = ip + 1;
	}

	/* Exactly tcp_len bytes are left: copy that many. */
	if (tcp_len == sizeof(struct tcphdr) + 20) {
		if (pos + sizeof(struct tcphdr) + 20 > data_end)
			return -1;
		__builtin_memcpy(pos, &sc->s, sizeof(struct tcphdr) + 20);
	} else if (tcp_len == sizeof(struct tcphdr) + 16) {
		if (pos + sizeof(struct tcphdr) + 16 > data_end)
			return -1;
		__builtin_memcpy(pos, &sc->s, sizeof(struct tcphdr) + 16);
	} else {
		if (pos + sizeof(struct tcphdr) + 4 > data_end)
			return -1;
		__builtin_memcpy(pos, &sc->s, sizeof(struct tcphdr) + 4);
	}
	return 0;
}

/* Would the listener @sk drop a connection now, its accept queue full
 * (sk_acceptq_is_full())? The ACK of a proven client is then dropped as
 * the kernel would drop it, and spends no token: the client sends it again
 * and is judged then. */
static __always_inline int acceptq_full(struct bpf_sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);

	if (!tp)
		return 0;
	return tp->inet_conn.icsk_inet.sk.sk_ack_backlog >
	       tp->inet_conn.icsk_inet.sk.sk_max_ack_backlog;
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, COOKIE_SENT_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} cookie_sent SEC(".maps");

/* A cookie answered a SYN to @port at @now_ns. Written once a unit at most,
 * so that the CPUs of a flood do not pass the line to each other. */
static __always_inline void cookie_sent_mark(__u16 port, __u64 now_ns)
{
	__u32 key = port, now = (__u32)(now_ns >> 30) | 1;
	__u32 *e = bpf_map_lookup_elem(&cookie_sent, &key);

	if (e && *e != now)
		*e = now;
}

/* May a cookie that a SYN to @port was answered with still be valid? */
static __always_inline int cookie_sent_recent(__u16 port, __u64 now_ns)
{
	__u32 key = port, now = (__u32)(now_ns >> 30) | 1;
	__u32 *e = bpf_map_lookup_elem(&cookie_sent, &key);

	/* Without its entry the program cannot tell: as before, drop. */
	return !e || (*e && now - *e <= COOKIE_LIFE_UNITS + 1);
}

/* The 4-tuple of the segment in @ctx; 0 if its headers
 * are not there. */
static __always_inline int ctx_tuple(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len, __u64 flags,
				     struct bpf_sock_tuple *t, __u32 *tlen)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct tcphdr *tcp;

	lens_bound(&l2_len, &l3_len);
	if (flags & CK_V6) {
		struct ipv6hdr *ip6 = data + l2_len;

		if ((void *)(ip6 + 1) > data_end)
			return 0;
		tcp = (void *)ip6 + l3_len;
		if ((void *)(tcp + 1) > data_end)
			return 0;
		__builtin_memcpy(t->ipv6.saddr, &ip6->saddr, 16);
		__builtin_memcpy(t->ipv6.daddr, &ip6->daddr, 16);
		t->ipv6.sport = tcp->source;
		t->ipv6.dport = tcp->dest;
		*tlen = sizeof(t->ipv6);
	} else {
		struct iphdr *ip = data + l2_len;

		if ((void *)(ip + 1) > data_end)
			return 0;
		tcp = (void *)ip + l3_len;
		if ((void *)(tcp + 1) > data_end)
			return 0;
		t->ipv4.saddr = ip->saddr;
		t->ipv4.daddr = ip->daddr;
		t->ipv4.sport = tcp->source;
		t->ipv4.dport = tcp->dest;
		*tlen = sizeof(t->ipv4);
	}
	return 1;
}

/* The socket of the 4-tuple @t of @tlen bytes (from ctx_tuple()), a
 * listener's if no socket of its own: to be released. */
static __always_inline struct bpf_sock *tuple_sock(struct xdp_md *ctx, struct bpf_sock_tuple *t,
						   __u32 tlen)
{
	if (tlen == sizeof(t->ipv6))
		return bpf_skc_lookup_tcp(ctx, t, sizeof(t->ipv6), BPF_F_CURRENT_NETNS, 0);
	return bpf_skc_lookup_tcp(ctx, t, sizeof(t->ipv4), BPF_F_CURRENT_NETNS, 0);
}

/* Verdicts of shedd_syn_sock(). */
enum syn_sock {
	SYN_LISTENER = 0,    /* a listener of this host, no socket of its own: a cookie may answer */
	SYN_NO_LISTENER = 1, /* no socket at all: a closed port (the kernel's RST), or a
			      * socket netfilter finds after XDP (a NAT redirect, TPROXY) */
	SYN_NOT_LOCAL = 2,   /* to an address not of this host: the kernel's to forward, drop
			      * or DNAT to a local port */
	SYN_BUSY = 3,        /* a socket of its own (TIME_WAIT, a request, a connection) */
	SYN_SIGNED = 4,      /* a signed SYN to a listener with keys, or any to an MPTCP one */
};

/* The FIB lookup's parameters of tuple_local(), per CPU; nothing is kept
 * between packets. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct bpf_fib_lookup);
} fib_scratch SEC(".maps");

/* Count a SYN_SIGNED (shedd_syn_checks.syn_signed). */
static __always_inline void syn_signed_count(void)
{
	__u32 zero = 0;
	struct shedd_syn_checks *sc = bpf_map_lookup_elem(&syn_checks, &zero);

	if (sc)
		sc->syn_signed++;
}

/* tcp_sock of a kernel built with TCP-AO (6.7 and later, CONFIG_TCP_AO),
 * for CO-RE: on a kernel without it the field does not exist and the
 * check is gone at load. */
struct tcp_ao_info;
struct tcp_sock___ao {
	struct tcp_ao_info *ao_info;
} __attribute__((preserve_access_index));

/*
 * listener_keys() - what the listener @sk needs that a cookie cannot give:
 * OPT_AUTH_MD5 if it holds TCP-MD5 keys (tcp_sock.md5sig_info, made by
 * the first TCP_MD5SIG), OPT_AUTH_AO if it holds TCP-AO keys
 * (tcp_sock.ao_info), LISTENER_MPTCP if it is the TCP listener of an
 * MPTCP socket (tcp_sock.is_mptcp, set by subflow_ulp_init()). Read from
 * the kernel's own socket, so whatever the service set, at any time, is
 * seen at once; a field the running kernel lacks (built without MD5, AO or
 * MPTCP) cannot be set, and is not read.
 */
#define LISTENER_MPTCP 4
static __always_inline __u32 listener_keys(struct bpf_sock *sk)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	struct tcp_sock___ao *ao = (void *)tp;
	__u32 keys = 0;

	if (!tp)
		return 0;
	if (bpf_core_field_exists(tp->md5sig_info) && tp->md5sig_info)
		keys |= OPT_AUTH_MD5;
	if (bpf_core_field_exists(ao->ao_info) && ao->ao_info)
		keys |= OPT_AUTH_AO;
	if (bpf_core_field_exists(tp->is_mptcp) && tp->is_mptcp)
		keys |= LISTENER_MPTCP;
	return keys;
}

/* The signatures (OPT_AUTH_*) the SYN in @ctx carries; its TCP header
 * lies @l3_len bytes after the IP header at @l2_len. One that cannot be
 * read is taken as signed: judged, never answered blind. A global
 * function, asked only for a listener with keys: the walk's copy of the
 * header lives in a frame of its own, not in shedd_syn_sock()'s. */
__noinline int shedd_syn_auth(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	/* On the stack: bpf_loop() takes its context only from there. */
	struct opt_walk w = {};
	struct tcphdr *pt;
	__u32 th_len;

	lens_bound(&l2_len, &l3_len);
	pt = data + l2_len + l3_len;
	if ((void *)(pt + 1) > data_end)
		return OPT_AUTH_MD5 | OPT_AUTH_AO;
	th_len = pt->doff * 4;
	if (th_len < sizeof(struct tcphdr) || th_len > TCP_MAX_HLEN ||
	    bpf_xdp_load_bytes(ctx, l2_len + l3_len, w.th, th_len))
		return OPT_AUTH_MD5 | OPT_AUTH_AO;
	w.len = th_len;
	opt_walk(&w);
	return w.o.auth;
}

/* Is the destination of the 4-tuple @t (from ctx_tuple()) an address of
 * this host? Asked only for a listener bound to the wildcard address,
 * which the socket lookup finds for any destination. The kernel delivers
 * locally what its routing finds of type local, and bpf_fib_lookup() says
 * BPF_FIB_LKUP_RET_NOT_FWDED for any route type but unicast (the group
 * and broadcast ones rst_answerable() has refused already); a unicast
 * route, blackhole, unreachable or prohibit means the kernel forwards or
 * drops the SYN. The helper answers BPF_FIB_LKUP_RET_FWD_DISABLED before it
 * routes when the interface does not forward: such a host delivers only
 * what is addressed to it, and the SYN is taken as local (a frame sent to
 * this host's MAC for another address, which the kernel drops, is then
 * answered; within the cookie budget). */
static __always_inline int tuple_local(struct xdp_md *ctx, const struct bpf_sock_tuple *t,
				       __u32 tlen)
{
	struct bpf_fib_lookup *fib;
	__u32 zero = 0;
	int rc;

	/* Off the stack: the ACK's check (shedd_cookie_ack()) sits on the
	 * deepest call chain. Without it the lookup cannot be asked: as a
	 * lookup that fails. */
	fib = bpf_map_lookup_elem(&fib_scratch, &zero);
	if (!fib)
		return 1;
	__builtin_memset(fib, 0, sizeof(*fib));
	fib->l4_protocol = IPPROTO_TCP;
	fib->ifindex = ctx->ingress_ifindex;
	if (tlen == sizeof(t->ipv6)) {
		fib->family = AF_INET6;
		fib->sport = t->ipv6.sport;
		fib->dport = t->ipv6.dport;
		__builtin_memcpy(fib->ipv6_src, t->ipv6.saddr, 16);
		__builtin_memcpy(fib->ipv6_dst, t->ipv6.daddr, 16);
	} else {
		fib->family = AF_INET;
		fib->sport = t->ipv4.sport;
		fib->dport = t->ipv4.dport;
		fib->ipv4_src = t->ipv4.saddr;
		fib->ipv4_dst = t->ipv4.daddr;
	}
	rc = bpf_fib_lookup(ctx, fib, sizeof(*fib), 0);
	/* A lookup that cannot finish (an error) is taken as local too: the
	 * SYN is then answered with a cookie and charged when proven, never
	 * passed uncharged. */
	return rc < 0 || rc == BPF_FIB_LKUP_RET_NOT_FWDED || rc == BPF_FIB_LKUP_RET_FWD_DISABLED;
}

/**
 * shedd_syn_sock() - may a cookie answer the SYN in @ctx?
 * @ctx, @l2_len, @l3_len, @flags: as for shedd_syncookie_reply()
 *
 * Only where the kernel itself would answer: a listener of this host, on
 * the SYN's address and port, and no other socket on its 4-tuple. One
 * socket lookup decides both. Without a socket the kernel refuses the SYN
 * with a RST (or netfilter gives it to a socket of another port after
 * XDP), and a cookie would show a port scan every port open; a
 * wildcard listener matches any destination, so a forwarded SYN (a
 * router, a Kubernetes node, a DNAT host) would be answered with the
 * remote server's address unless the destination is checked to be local
 * (tuple_local()). A socket other than a listener: an earlier connection
 * in TIME_WAIT (a client that reuses its port soon after the server
 * closed, as NAT and busy clients do), the request socket of a handshake
 * the kernel answered, or an established connection. Only the kernel
 * answers such a SYN right: it recycles the TIME_WAIT socket, repeats its
 * SYN-ACK or sends a challenge ACK. A cookie SYN-ACK instead makes a
 * handshake whose ACK and data the socket table gives to the old socket,
 * and the client hangs.
 *
 * Return: an enum syn_sock.
 */
__noinline int shedd_syn_sock(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len, __u64 flags)
{
	struct bpf_sock_tuple t = {};
	struct bpf_sock *sk;
	__u32 tlen, keys;
	int wildcard;

	/* Headers the parser found and we cannot read: not a SYN to pass
	 * uncharged, nor one to answer. */
	if (!ctx_tuple(ctx, l2_len, l3_len, flags, &t, &tlen))
		return SYN_BUSY;
	sk = tuple_sock(ctx, &t, tlen);
	if (!sk)
		return SYN_NO_LISTENER;
	if (sk->state != BPF_TCP_LISTEN) {
		bpf_sk_release(sk);
		return SYN_BUSY;
	}
	/* The lookup matched a bound address to the destination itself. */
	if (flags & CK_V6)
		wildcard = !(sk->src_ip6[0] | sk->src_ip6[1] | sk->src_ip6[2] | sk->src_ip6[3]);
	else
		wildcard = !sk->src_ip4;
	keys = listener_keys(sk);
	bpf_sk_release(sk);
	if (wildcard && !tuple_local(ctx, &t, tlen))
		return SYN_NOT_LOCAL;
	/* The kernel signs its SYN-ACK, a cookie one too (tcp_make_synack()),
	 * where the listener has a key for the peer, and the peer drops an
	 * unsigned one (TCPMD5NotFound, TCPAORequired): a signed SYN to a
	 * listener with keys of its kind is the kernel's to answer. A SYN
	 * signed where the listener has no key of its kind, the kernel drops
	 * (TCPMD5Unexpected, TCPAOKeyNotFound), and an unsigned one to a
	 * listener with keys it drops if it has a key for the peer, and
	 * answers unsigned otherwise: as a cookie answers, and a cookie ACK
	 * of a peer with a key is dropped as the SYN would have been
	 * (tcp_inbound_hash(); tcp_inbound_md5_hash() before 6.7). So a flood
	 * to a BGP port is answered with cookies, its peers' signed SYNs
	 * charged. An MPTCP listener takes no cookie hand-off
	 * (bpf_sk_assign_tcp_reqsk() refuses it), and a cookie would drop
	 * MP_CAPABLE: the kernel answers each SYN. */
	if ((keys & LISTENER_MPTCP) ||
	    ((keys & (OPT_AUTH_MD5 | OPT_AUTH_AO)) && (shedd_syn_auth(ctx, l2_len, l3_len) & keys)))
		return SYN_SIGNED;
	return SYN_LISTENER;
}

/* Copies of a segment's IP header (without options or extension
 * headers) and fixed TCP header, as the cookie check takes them. */
struct seg_hdrs {
	union {
		struct iphdr v4;
		struct ipv6hdr v6;
	} ih;
	struct tcphdr th;
};

/*
 * seg_load() - copy the headers of the segment in @ctx whose IP header is
 * at @l2_len and TCP header @l3_len bytes after it, and its 4-tuple.
 * Copied, not read in place: an IPv6 chain of any length, IPv4 options, a
 * first fragment (whose fixed TCP header the parser found in it) are all
 * judged alike, as the kernel judges them after reassembly.
 * Return: 1, or 0 if the headers are not in the frame.
 */
static __always_inline int seg_load(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len, int v6,
				    struct seg_hdrs *s, struct bpf_sock_tuple *t, __u32 *tlen)
{
	if (l2_len > 0xffff || l3_len > 0xffff)
		return 0;
	if (v6) {
		if (bpf_xdp_load_bytes(ctx, l2_len, &s->ih.v6, sizeof(s->ih.v6)))
			return 0;
	} else {
		if (bpf_xdp_load_bytes(ctx, l2_len, &s->ih.v4, sizeof(s->ih.v4)))
			return 0;
	}
	if (bpf_xdp_load_bytes(ctx, l2_len + l3_len, &s->th, sizeof(s->th)))
		return 0;
	if (v6) {
		__builtin_memcpy(t->ipv6.saddr, &s->ih.v6.saddr, 16);
		__builtin_memcpy(t->ipv6.daddr, &s->ih.v6.daddr, 16);
		t->ipv6.sport = s->th.source;
		t->ipv6.dport = s->th.dest;
		*tlen = sizeof(t->ipv6);
	} else {
		t->ipv4.saddr = s->ih.v4.saddr;
		t->ipv4.daddr = s->ih.v4.daddr;
		t->ipv4.sport = s->th.source;
		t->ipv4.dport = s->th.dest;
		*tlen = sizeof(t->ipv4);
	}
	return 1;
}

/**
 * shedd_syn_charged() - note that the SYN in @ctx was charged and passed.
 * @ctx, @l2_len, @l3_len, @flags: as for shedd_syncookie_reply()
 * @now_ns: the program's clock
 *
 * The kernel answers it, with tcp_syncookies=2 (the kernel hand-off) with
 * a cookie of its own (tcp_conn_request(), net/ipv4/tcp_input.c), and
 * the ACK then reaches the listener with a valid cookie: that ACK, of
 * sequence number ISN + 1, is not charged a second time.
 *
 * Return: 0.
 */
__noinline int shedd_syn_charged(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len, __u64 flags,
				 __u64 now_ns)
{
	struct bpf_sock_tuple t = {};
	struct seg_hdrs s;
	__u32 tlen;

	if (seg_load(ctx, l2_len, l3_len, (flags & CK_V6) != 0, &s, &t, &tlen))
		proven_put(tuple_hash(&t, (flags & CK_V6) != 0), FLOW_SYN_CHARGED, now_ns,
			   bpf_htonl(bpf_ntohl(s.th.seq) + 1), 0);
	return 0;
}

/**
 * shedd_flow_end() - an inbound RST or FIN of the flow in @ctx: forget the
 * verdict kept for it (proven_end()).
 * @ctx, @l2_len, @l3_len, @flags: as for shedd_syncookie_reply()
 *
 * Return: 0.
 */
__noinline int shedd_flow_end(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len, __u64 flags)
{
	struct bpf_sock_tuple t = {};
	struct seg_hdrs s;
	__u32 tlen;

	if (seg_load(ctx, l2_len, l3_len, (flags & CK_V6) != 0, &s, &t, &tlen))
		proven_end(tuple_hash(&t, (flags & CK_V6) != 0));
	return 0;
}

/* Verdicts of shedd_cookie_ack(). */
enum ack_verdict {
	ACK_NOT_OURS = 0,   /* a socket of its own, or no listener: pass */
	ACK_FORGED = 1,     /* to a listener, no valid cookie: drop */
	ACK_QUEUE_FULL = 2, /* proven, the accept queue is full: drop, no token */
	ACK_AFTER_RST = 3,  /* proven, the flow was just refused: drop */
	ACK_REPEAT = 4,     /* proven, the flow was just admitted: pass */
	ACK_ADMITTED = 5,   /* proven and charged: pass */
	ACK_REFUSED = 6,    /* proven, no token: refuse with a RST */
	ACK_PAID = 7,       /* proven, its SYN was charged: pass */
};
#define ACK_VERDICT_MASK 0xffU
#define ACK_HASH_SHIFT 32 /* the flow hash, above the verdict */

/**
 * shedd_cookie_ack() - judge the ACK in @ctx that may end a cookie handshake.
 * @ctx, @l2_len, @l3_len, @flags: as for shedd_syncookie_reply()
 * @cls:    the class of its source, | CHARGE_TUN for an inner ACK, charged
 *          in the tunnel class space
 *
 * A flow with a socket of its own (established, a request socket,
 * time-wait) or without a listener is not ours to judge. At a listener the
 * cookie must be valid (ours or the kernel's). A proven ACK is charged to
 * its class once: the segments right behind it (the request, sent before
 * the kernel made the connection or before our RST reached the client)
 * follow its verdict, those past its first data segment too, whose
 * sequence number no longer passes the cookie check, and the ACK of a SYN
 * charged directly is not charged again (shedd_syn_charged()).
 *
 * Return: an enum ack_verdict, with the flow hash << ACK_HASH_SHIFT once it
 * was computed (for the RST's note of the refusal).
 */
__noinline __u64 shedd_cookie_ack(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len,
				__u64 flags, __u64 cls)
{
	struct bpf_sock_tuple t = {};
	struct shedd_bucket *b;
	struct seg_hdrs s;
	struct bpf_sock *sk;
	int v6 = (flags & CK_V6) != 0, full, valid, wildcard;
	__u32 c = (__u32)cls & 0xff, tun = (__u32)cls & CHARGE_TUN, seen, tlen, h;
	__u64 now;

	if (c >= SHEDD_NR_CLASSES)
		return ACK_NOT_OURS;
	/* Headers the parser found and we cannot read: never passed. */
	if (!seg_load(ctx, l2_len, l3_len, v6, &s, &t, &tlen))
		return ACK_FORGED;
	sk = tuple_sock(ctx, &t, tlen);
	if (!sk)
		return ACK_NOT_OURS;
	if (sk->state != BPF_TCP_LISTEN) {
		bpf_sk_release(sk);
		return ACK_NOT_OURS;
	}
	full = acceptq_full(sk);
	if (v6)
		wildcard = !(sk->src_ip6[0] | sk->src_ip6[1] | sk->src_ip6[2] | sk->src_ip6[3]);
	else
		wildcard = !sk->src_ip4;
	bpf_sk_release(sk);
	/* A wildcard listener matches any destination: a segment of a flow
	 * this host forwards, or DNATs to a local port, finds it too, and no
	 * cookie of ours can be in it (its SYN was never answered with one,
	 * shedd_syn_sock()). The kernel's to forward, or to give to the
	 * socket the NAT finds, which judges it. */
	if (wildcard && !tuple_local(ctx, &t, tlen))
		return ACK_NOT_OURS;

	if (v6)
		valid = bpf_tcp_raw_check_syncookie_ipv6(&s.ih.v6, &s.th) == 0;
	else
		valid = bpf_tcp_raw_check_syncookie_ipv4(&s.ih.v4, &s.th) == 0;

	now = clock_coarse_ns();
	h = tuple_hash(&t, v6);
	seen = proven_get(h, now, s.th.seq, s.th.ack_seq);
	/* The client's segments right behind its ACK reach XDP in
	 * the same NAPI poll, before the kernel made the connection
	 * from the ACK (GRO hands the poll's segments on at its
	 * end), so the lookup still finds the listener. From the
	 * second on, their sequence number is past the ISN the
	 * cookie was made from, and the check fails. One that
	 * carries the proven ACK's acknowledgment number, a
	 * sequence number at most PROVEN_SEQ_SPAN past its own,
	 * within PROVEN_REPEAT_UNITS (proven_get()), follows its
	 * verdict: no token, and the kernel, which judges it
	 * against the connection it makes, gets it. A forged ACK
	 * must match a flow proven a moment ago, its 4-tuple and
	 * the 32 bits of its cookie, to pass. */
	if (seen == FLOW_REFUSED)
		return ACK_AFTER_RST;
	if (seen == FLOW_ADMITTED || seen == FLOW_COOKIE || seen == FLOW_ASSIGNED)
		return ACK_REPEAT;
	if (!valid)
		return ACK_FORGED;
	if (full)
		return ACK_QUEUE_FULL;
	if (seen == FLOW_SYN_CHARGED) {
		proven_put(h, FLOW_ADMITTED, now, s.th.seq, s.th.ack_seq);
		return ACK_PAID;
	}
	if (tun)
		b = bpf_map_lookup_elem(&tun_buckets, &c);
	else
		b = bpf_map_lookup_elem(&buckets, &c);
	/* Not the ACK of a SYN passed to the kernel: a cookie this program
	 * answered, the tc hand-off's to give a request socket (it still
	 * tells a kernel's cookie by the timestamp, shedd_ts_tag()). */
	if (charge(b, c | tun, now)) {
		proven_put(h, tun ? FLOW_ADMITTED : FLOW_COOKIE, now, s.th.seq, s.th.ack_seq);
		return ACK_ADMITTED;
	}
	return ACK_REFUSED | (__u64)h << ACK_HASH_SHIFT;
}

#endif /* SHEDD_SYNCOOKIE_H */
