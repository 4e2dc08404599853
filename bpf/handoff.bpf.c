// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* handoff.bpf.c - the tc ingress half of verified admission (kernel 6.9).
 * The XDP program has checked the cookie of an ACK and charged its class;
 * the kernel's listener would still refuse it, since it sent no cookie of
 * its own. Here the listener is given a request socket built from the
 * options the timestamp carries, with the bpf_sk_assign_tcp_reqsk()
 * kfunc; the kernel then completes the handshake as for one of its own
 * cookies. Only an ACK that XDP admitted, in its own pass, as the answer
 * to a cookie XDP sent (FLOW_COOKIE in proven), whose cookie is valid and
 * whose timestamp carries shedd's tag: the kernel's own cookies (a
 * listener's overflow, tcp_syncookies=2) are the kernel's to decode, with
 * the per-flow timestamp offset only it knows, and nothing is handed off
 * while XDP_TX is blocked (XDP verifies nobody then). An ACK without a
 * timestamp carries no options: its MSS comes from the cache the XDP
 * program fills when it answers such a SYN (mss_cache). Everything else
 * passes untouched. It shares settings, ports, prefixes, proven flows
 * and that cache with the XDP program, and stamps and judges the verdicts
 * of proven on the XDP program's clock (clock_coarse_ns(), clock.h): on
 * bpf_ktime_get_ns(), up to a tick ahead of it, a verdict XDP stamped
 * looked older than it was, and one stamped here looked to XDP as if from
 * the future, which proven_get() reads as long expired.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "shedd.h"
#include "config_maps.h"
#include "parsing.h"
#include "tcpopt.h"
#include "clock.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TC_ACT_OK 0

extern int bpf_sk_assign_tcp_reqsk(struct __sk_buff *skb, struct sock *sk,
				   struct bpf_tcp_req_attrs *attrs, int attrs__sz) __ksym;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_handoff_stats);
} handoff_stats SEC(".maps");

/* The request socket's attributes from the options the ACK echoes in its
 * timestamp (SHEDD_TS_* in shedd.h). */
static __always_inline void attrs_from_ts(struct bpf_tcp_req_attrs *a, const struct syn_opts *o,
					  const struct shedd_config *cfg, int v6)
{
	__u32 opts = o->tsecr, ws = opts & SHEDD_TS_WSCALE_MASK;
	__u32 idx = (opts >> SHEDD_TS_MSS_SHIFT) & 3;

	a->rcv_tsval = o->tsval;
	a->rcv_tsecr = o->tsecr;
	a->tstamp_ok = 1;
	a->mss = v6 ? SHEDD_MSS6(idx) : SHEDD_MSS4(idx);
	if (ws != SHEDD_TS_WSCALE_MASK) {
		a->wscale_ok = 1;
		a->snd_wscale = ws > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : ws;
		a->rcv_wscale = cfg->wscale > TCP_MAX_WSCALE ? TCP_MAX_WSCALE : cfg->wscale;
	}
	a->sack_ok = (opts & SHEDD_TS_SACK) ? 1 : 0;
	a->ecn_ok = (cfg->ecn && (opts & SHEDD_TS_ECN)) ? 1 : 0;
}

/* The parse split as the XDP program splits it (shedd_parse(),
 * shedd_parse_ip()): global functions, each verified once, so what follows
 * the parse is verified once too, with the offsets as bounded unknowns,
 * not once for every VLAN depth and IPv6 chain. At tc the kernel has taken
 * the outer VLAN tag into skb->vlan_tci: the walk sees the tags left, one
 * fewer, which keeps a frame XDP let through within the bound. */
__noinline __u64 shedd_parse_skb_ip(struct __sk_buff *skb, __u64 off, __u64 how)
{
	if (off > PARSE_IP_OFF_MASK)
		return PARSE_TOO_DEEP;
	verifier_bound(off, PARSE_IP_OFF_MASK);
	return parse_ip_packed((void *)(long)skb->data + off, (void *)(long)skb->data_end, how);
}

__noinline __u64 shedd_parse_skb(struct __sk_buff *skb)
{
	struct cursor c = { .pos = (void *)(long)skb->data, .end = (void *)(long)skb->data_end };
	struct pkt p = {};
	int ret = parse_eth(&c, &p);

	if (ret != PARSE_OK)
		return (__u64)ret;
	return parse_frame_packed(shedd_parse_skb_ip(skb, p.l2_len,
						     p.l3_proto == ETH_P_IPV6 ? PARSE_IP_V6 : 0),
				  p.l2_len, p.nr_vlans);
}

SEC("tc")
int shedd_handoff(struct __sk_buff *skb)
{
	void *data, *data_end;
	struct bpf_tcp_req_attrs attrs = {};
	struct shedd_handoff_stats *hs;
	struct bpf_sock_tuple t = {};
	struct opt_walk w = {};
	struct shedd_config *cfg;
	struct bpf_sock *sk;
	struct tcp_sock *tp;
	struct tcphdr *tcp;
	struct pkt p = {};
	__u32 zero = 0, cls, tlen, th_len, seq, ack, h, seen;
	__u64 l2_len, l3_len, m;
	__u16 dport;
	int v6 = 0, ok;

	hs = bpf_map_lookup_elem(&handoff_stats, &zero);
	cfg = settings_begin();
	if (!hs || !cfg)
		return TC_ACT_OK;
	/* The XDP program's parse and its question: what it charged as the
	 * end of a handshake is what is handed off here, nothing else. */
	m = shedd_parse_skb(skb);
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	if (PM_RESULT(m) != PARSE_OK || pkt_unpack(m, data, data_end, &p) ||
	    !pkt_handshake_ack(&p))
		return TC_ACT_OK;
	/* A first fragment, judged at XDP, cannot be given a request socket
	 * before reassembly: the listener meets it as it is. */
	if (p.first_frag)
		return TC_ACT_OK;
	tcp = p.tcp;
	l2_len = p.l2_len;
	l3_len = p.l3_len;
	if (p.l3_proto == ETH_P_IP) {
		struct iphdr *ip = p.l3;

		t.ipv4.saddr = ip->saddr;
		t.ipv4.daddr = ip->daddr;
		t.ipv4.sport = tcp->source;
		t.ipv4.dport = tcp->dest;
		tlen = sizeof(t.ipv4);
		cls = class_v4(cfg, ip->saddr);
	} else {
		struct ipv6hdr *ip6 = p.l3;

		__builtin_memcpy(t.ipv6.saddr, &ip6->saddr, 16);
		__builtin_memcpy(t.ipv6.daddr, &ip6->daddr, 16);
		t.ipv6.sport = tcp->source;
		t.ipv6.dport = tcp->dest;
		tlen = sizeof(t.ipv6);
		cls = class_v6(cfg, &ip6->saddr);
		v6 = 1;
	}

	dport = bpf_ntohs(tcp->dest);
	seq = tcp->seq;
	ack = tcp->ack_seq;
	if (!cfg->all_ports && !bpf_map_lookup_elem(&ports, &dport))
		return TC_ACT_OK;
	/* As the XDP program: while XDP_TX is blocked no class verifies,
	 * and no ACK was judged (class_mode()); a class above the default
	 * class is judged under --source-check verify whatever its mode
	 * (src_proves()). */
	if ((cfg->verify[cls] == SHEDD_VERIFY_OFF &&
	     !(cfg->source_check == SHEDD_SRC_VERIFY && cls < cfg->default_class)) ||
	    cfg->tx_blocked)
		return TC_ACT_OK;
	hs->acks++;

	th_len = tcp->doff * 4;
	if (th_len < sizeof(*tcp) || th_len > TCP_MAX_HLEN) {
		hs->malformed++;
		return TC_ACT_OK;
	}
	if (bpf_skb_load_bytes(skb, (void *)tcp - data, w.th, th_len)) {
		hs->malformed++;
		return TC_ACT_OK;
	}
	w.len = th_len;
	opt_walk(&w);

	sk = bpf_skc_lookup_tcp(skb, &t, tlen, BPF_F_CURRENT_NETNS, 0);
	if (!sk) {
		hs->no_socket++;
		return TC_ACT_OK;
	}
	if (sk->state != BPF_TCP_LISTEN) {
		hs->not_listener++;
		goto release;
	}

	/* The packet again: bounds are lost across the helper calls. The
	 * offsets are the parse's: L2 within its tags, L3 within the frame. */
	data = (void *)(long)skb->data;
	data_end = (void *)(long)skb->data_end;
	verifier_bound(l2_len, PARSE_MAX_L2_MASK);
	verifier_bound(l3_len, PARSE_MAX_L3_MASK);
	if (v6) {
		struct ipv6hdr *ip6 = data + l2_len;
		struct tcphdr *th = (void *)ip6 + l3_len;

		if ((void *)(ip6 + 1) > data_end || (void *)(th + 1) > data_end)
			goto bad;
		ok = bpf_tcp_raw_check_syncookie_ipv6(ip6, th) == 0;
	} else {
		struct iphdr *ip = data + l2_len;
		struct tcphdr *th = (void *)ip + l3_len;

		if ((void *)(ip + 1) > data_end || (void *)(th + 1) > data_end)
			goto bad;
		ok = bpf_tcp_raw_check_syncookie_ipv4(ip, th) == 0;
	}
	if (!ok) {
		hs->invalid++;
		goto release;
	}
	/* A segment right behind the ACK that got the flow its request
	 * socket (the request, in the same batch) reaches us before the
	 * kernel made the connection: a second request socket would lose it.
	 * It follows the first one to the connection instead. */
	h = tuple_hash(&t, v6);
	seen = proven_get(h, clock_coarse_ns(), seq, ack);
	if (seen == FLOW_ASSIGNED) {
		hs->repeat++;
		goto release;
	}
	/* XDP's verdict on this ACK, given in its pass a moment ago: only a
	 * cookie it answered and admitted is handed off. The ACK of a SYN
	 * XDP passed to the kernel, one XDP did not judge, one whose echo
	 * lacks shedd's tag (the kernel's cookie, from a SYN whose record
	 * was lost): the kernel's own, left to its cookie check, which takes
	 * off its timestamp offset and decodes the options it encoded. An
	 * ACK without a timestamp carries no tag: the kernel's cookie of
	 * such a flow is handed off if XDP's record of its SYN was lost,
	 * with the MSS of the cache. */
	if (seen != FLOW_COOKIE ||
	    (w.o.ts && shedd_ts_tag(h, bpf_ntohl(ack) - 1) != (w.o.tsecr & SHEDD_TS_TAG_MASK))) {
		hs->invalid++;
		goto release;
	}
	tp = bpf_skc_to_tcp_sock(sk);
	if (!tp) {
		hs->failed++;
		goto release;
	}
	if (w.o.ts) {
		attrs_from_ts(&attrs, &w.o, cfg, v6);
	} else {
		/* No timestamp: the cookie kept only the MSS, which the XDP
		 * program left in the cache; no window scaling, no SACK. */
		__u32 slot, *e, idx = 0;

		slot = h % MSS_CACHE_SLOTS;
		e = bpf_map_lookup_elem(&mss_cache, &slot);
		if (e && (*e & 0xffffff00U) == (h & 0xffffff00U))
			idx = *e & 3;
		else
			hs->mss_missed++;
		attrs.mss = v6 ? SHEDD_MSS6(idx) : SHEDD_MSS4(idx);
	}
	if (bpf_sk_assign_tcp_reqsk(skb, (struct sock *)tp, &attrs, sizeof(attrs)) < 0) {
		hs->failed++;
	} else {
		hs->assigned++;
		proven_put(h, FLOW_ASSIGNED, clock_coarse_ns(), seq, ack);
	}
release:
	bpf_sk_release(sk);
	return TC_ACT_OK;
bad:
	hs->malformed++;
	goto release;
}
