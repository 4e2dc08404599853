// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* shedd.bpf.c - the XDP data path: parse -> classify -> charge -> verdict.
 * Only pure TCP SYNs to protected ports are judged, first fragments that
 * carry one included; fragments and header chains that could hide one from
 * us are refused; every other packet passes, counted by kind. A shed SYN is
 * dropped, or answered with a RST where the kernel itself would answer.
 * In a verified class a SYN is answered with a SYN cookie instead and the
 * ACK that returns a valid one is charged (syncookie.h). The inner SYN of
 * a tunnel that ends on this host is judged too, by rate only (tunnel.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "shedd.h"
#include "token_bucket.h"
#include "maps.h"
#include "parsing.h"
#include "rst.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set before load by tests only: read the clock from test_clock_ns instead
 * of bpf_ktime_get_ns(). In production the verifier prunes the branch. */
const volatile __u8 use_test_clock = 0;
__u64 test_clock_ns = 0;

static __always_inline __u64 clock_ns(void)
{
	if (use_test_clock)
		return test_clock_ns;
	return bpf_ktime_get_ns();
}

/* Set before load by the daemon when the kernel has the SYN cookie helpers
 * (6.0): without them the verifier prunes verified admission whole, so the
 * program still loads on older kernels. */
const volatile __u8 verify_enabled = 0;

static __always_inline __u32 classify(const struct pkt *p, void *data_end,
				      const struct shedd_config *cfg)
{
	if (p->l3_proto == ETH_P_IP) {
		struct iphdr *ip = p->l3;

		if ((void *)(ip + 1) > data_end)
			return class_of(cfg, NULL);
		return class_v4(cfg, ip->saddr);
	} else {
		struct ipv6hdr *ip6 = p->l3;

		if ((void *)(ip6 + 1) > data_end)
			return class_of(cfg, NULL);
		return class_v6(cfg, &ip6->saddr);
	}
}

/* The slow half of charge(): borrow from the class's reserve. A global
 * function, so the verifier checks it once on its own instead of once for
 * every path of the parser that reaches it. Without its map entries (or
 * its cache) the program cannot judge: it fails open and admits. */
__noinline int shedd_borrow(struct shedd_bucket *b, __u32 cls, __u64 now)
{
	struct shedd_rate *rate = bpf_map_lookup_elem(&rates, &cls);
	struct shedd_reserve *res = bpf_map_lookup_elem(&reserve, &cls);

	if (!b || !rate || !res)
		return 1;
	return tb_borrow(b, rate, res, now);
}

/* Return 1 to admit, 0 to shed. The CPU's cache @b answers most SYNs; the
 * shared rate record and reserve are looked up only to borrow. */
static __always_inline int charge(struct shedd_bucket *b, __u32 cls, __u64 now)
{
	int v;

	if (!b)
		return 1;
	v = tb_cached(b, now);
	if (v >= 0)
		return v;
	return shedd_borrow(b, cls, now);
}

#include "syncookie.h"

static __always_inline __u32 cookie_flags(const struct pkt *p)
{
	return (p->l3_proto == ETH_P_IPV6 ? CK_V6 : 0) |
	       ((__u32)p->nr_vlans << CK_VLANS_SHIFT);
}

/* Count a packet that is passed untouched, by the reason it is passed. */
static __always_inline int pass_counted(struct shedd_stats *st, int reason)
{
	switch (reason) {
	case PARSE_MALFORMED:
		st->malformed++;
		break;
	case PARSE_NON_IP:
		st->non_ip++;
		break;
	case PARSE_NON_TCP:
		st->non_tcp++;
		break;
	case PARSE_FRAGMENT:
		st->fragment++;
		break;
	}
	return XDP_PASS;
}

#include "tunnel.h"

/* Drop what could carry a SYN past us but cannot be judged. */
static __always_inline int refuse_counted(struct shedd_stats *st, int reason)
{
	if (reason == PARSE_FRAG_REFUSED)
		st->frag_refused++;
	else
		st->deep_refused++;
	return XDP_DROP;
}

#define RF_FOR_ACK (1U << 3) /* refuse an ACK: a bare RST */

/* Refuse the packet the parser described: a RST sent back where the kernel
 * would answer one and the budget allows, else a drop. A global function,
 * so the reply is checked once; it finds the headers again from the
 * offsets. @flags: CK_V6, VLAN tags << CK_VLANS_SHIFT, RF_FOR_ACK.
 * Return: XDP_TX or XDP_DROP. */
__noinline int shedd_refuse(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len,
			    __u64 l4_len, __u64 flags)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct shedd_config *cfg;
	struct shedd_stats *st;
	struct pkt p = {};
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&settings, &zero);
	st = bpf_map_lookup_elem(&stats, &zero);
	if (!cfg || !st || !lens_bound(&l2_len, &l3_len) || l4_len > 0xffff)
		return XDP_DROP;
	p.eth = data;
	if ((void *)(p.eth + 1) > data_end)
		return XDP_DROP;
	p.l3 = data + l2_len;
	p.tcp = data + l2_len + l3_len;
	p.l3_proto = (flags & CK_V6) ? ETH_P_IPV6 : ETH_P_IP;
	p.l2_len = (__u16)l2_len;
	p.l3_len = (__u16)l3_len;
	p.l4_len = (__u16)l4_len;
	p.nr_vlans = (flags >> CK_VLANS_SHIFT) & 3;
	/* A RST into a black hole (tx_blocked) is a drop that says it was
	 * answered: drop it as one. */
	if (cfg->tx_blocked || !rst_answerable(&p, data_end, cfg)) {
		st->rst_refused++;
		return XDP_DROP;
	}
	if (!rst_budget_take(cfg, clock_ns())) {
		st->rst_limited++;
		return XDP_DROP;
	}
	/* A refused proven client: its next segments, already on their way,
	 * must not be admitted. Noted before the frame becomes the RST. */
	if (flags & RF_FOR_ACK) {
		struct bpf_sock_tuple t = {};
		struct tcphdr *tcp = p.tcp;

		if ((void *)(tcp + 1) > data_end)
			return XDP_DROP;
		if (flags & CK_V6) {
			struct ipv6hdr *ip6 = p.l3;

			if ((void *)(ip6 + 1) > data_end)
				return XDP_DROP;
			__builtin_memcpy(t.ipv6.saddr, &ip6->saddr, 16);
			__builtin_memcpy(t.ipv6.daddr, &ip6->daddr, 16);
			t.ipv6.sport = tcp->source;
			t.ipv6.dport = tcp->dest;
		} else {
			struct iphdr *ip = p.l3;

			if ((void *)(ip + 1) > data_end)
				return XDP_DROP;
			t.ipv4.saddr = ip->saddr;
			t.ipv4.daddr = ip->daddr;
			t.ipv4.sport = tcp->source;
			t.ipv4.dport = tcp->dest;
		}
		proven_put(&t, (flags & CK_V6) != 0, FLOW_REFUSED, clock_ns());
	}
	if (rst_reply(ctx, &p, (flags & RF_FOR_ACK) != 0))
		return XDP_DROP;
	return XDP_TX;
}

static __always_inline int refuse(struct xdp_md *ctx, const struct pkt *p, int for_ack)
{
	/* A fragment is never answered: its SYN is only whole after
	 * reassembly, and the RST would be built from a part of it. */
	if (p->first_frag)
		return XDP_DROP;
	return shedd_refuse(ctx, p->l2_len, p->l3_len, p->l4_len,
			    cookie_flags(p) | (for_ack ? RF_FOR_ACK : 0));
}

SEC("xdp")
int shedd_xdp(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct cursor c = { .pos = (void *)(long)ctx->data, .end = data_end };
	struct shedd_class_stats *cs;
	struct shedd_config *cfg;
	struct shedd_bucket *b;
	struct shedd_stats *st;
	struct pkt p = {};
	__u32 zero = 0, cls, mode, reject;
	int ret, is_ack, cookie = 0, charged = 0;
	__u64 now;
	__u16 dport;

	/* Without its counters the program fails open: pass everything. */
	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return XDP_PASS;
	st->packets++;

	ret = parse_packet(&c, &p);
	/* IP that is not TCP, or its first fragment, may be a tunnel that
	 * ends here (tunnel.h). */
	if ((ret == PARSE_NON_TCP || (ret == PARSE_FRAGMENT && p.first_frag)) &&
	    tun_proto(p.l4_proto)) {
		int v = shedd_tunnel(ctx, p.l2_len, p.l3_len, tun_meta(&p));

		if (v != TUN_NOT_OURS)
			return v;
	}
	if (ret == PARSE_FRAG_REFUSED || ret == PARSE_TOO_DEEP)
		return refuse_counted(st, ret);
	if (ret != PARSE_OK)
		return pass_counted(st, ret);
	/* A FIN: the server may hold the flow in TIME_WAIT for a minute, and
	 * a SYN of it must then meet the kernel (see shedd_tuple_busy()). */
	if (p.tcp->fin && !p.tcp->syn)
		shedd_fin_seen(ctx, p.l2_len, p.l3_len, cookie_flags(&p), clock_ns());

	/* Established traffic always passes: only a pure SYN opens work, and
	 * in a verified class the ACK that ends a cookie handshake. */
	is_ack = verify_enabled && p.tcp->ack && !p.tcp->syn && !p.tcp->rst &&
		 !p.first_frag;
	if (!is_ack && (!p.tcp->syn || p.tcp->ack)) {
		st->non_syn++;
		return XDP_PASS;
	}
	/* A listener discards a SYN with RST or FIN (RFC 793 and Linux's
	 * tcp_rcv_state_process): no token for it, and no answer. */
	if (!is_ack && (p.tcp->rst || p.tcp->fin)) {
		st->bad_syn++;
		return XDP_PASS;
	}

	cfg = bpf_map_lookup_elem(&settings, &zero);
	if (!cfg) {
		st->non_syn += is_ack;
		return XDP_PASS; /* not configured yet: fail open */
	}
	dport = bpf_ntohs(p.tcp->dest);
	if (!cfg->all_ports && !bpf_map_lookup_elem(&ports, &dport)) {
		if (is_ack)
			st->non_syn++;
		else
			st->unprotected++;
		return XDP_PASS;
	}

	cls = classify(&p, data_end, cfg);
	if (cls >= SHEDD_NR_CLASSES)
		cls = SHEDD_SHEDDABLE;
	cs = &st->cls[cls];
	/* A cookie SYN-ACK that cannot leave (tx_blocked) refuses the
	 * client it was to prove: judge the class as unverified instead. */
	mode = verify_enabled && !cfg->tx_blocked ? cfg->verify[cls] : SHEDD_VERIFY_OFF;
	/* Read while cls is known to be in range: it is spilled as 32 bits
	 * across the calls below, which Debian 12's verifiers do not track. */
	reject = cfg->reject[cls];
	if (is_ack) {
		if (mode == SHEDD_VERIFY_OFF) {
			st->non_syn++;
			return XDP_PASS;
		}
		st->ack_probed++;
		ret = shedd_cookie_ack(ctx, p.l2_len, p.l3_len, cookie_flags(&p), cls);
		switch (ret) {
		case ACK_NOT_OURS:
			st->non_syn++;
			return XDP_PASS;
		case ACK_FORGED:
			cs->ack_invalid++;
			return XDP_DROP;
		case ACK_QUEUE_FULL:
			/* The kernel would drop it: no token for it, the
			 * client sends it again. */
			cs->ack_valid++;
			st->ack_queue_full++;
			return XDP_DROP;
		case ACK_AFTER_RST:
			/* Sent before our RST reached the client: gone. */
			st->ack_after_rst++;
			return XDP_DROP;
		case ACK_REPEAT:
			/* The flow was admitted a moment ago; its socket is
			 * not made yet. Its token is spent. */
			st->ack_repeat++;
			return XDP_PASS;
		case ACK_ADMITTED:
			cs->ack_valid++;
			cs->charged++;
			cs->ack_admitted++;
			return XDP_PASS;
		}
		cs->ack_valid++;
		cs->charged++;
		cs->ack_refused++;
		/* Never a silent drop: a client that speaks second would
		 * wait for data that is not coming. */
		return refuse(ctx, &p, 1);
	}

	b = bpf_map_lookup_elem(&buckets, &cls);
	now = clock_ns();
	cs->syn++;
	st->frag_judged += p.first_frag;
	if (mode == SHEDD_VERIFY_ALWAYS ||
	    (mode == SHEDD_VERIFY_SHEDDING && b && now < b->verify_until_ns)) {
		cookie = 1;
	} else {
		charged = 1;
		cs->charged++;
		if (charge(b, cls, now)) {
			cs->admitted++;
			return XDP_PASS;
		}
		/* The class sheds on this CPU: prove addresses from now on. */
		if (mode == SHEDD_VERIFY_SHEDDING && b) {
			b->verify_until_ns = now + cfg->verify_hold_ns;
			cookie = 1;
		}
	}
	/* A first fragment cannot be answered with a cookie, nor a SYN the
	 * kernel would not answer (rst_answerable()): a SYN-ACK would be
	 * reflected to a group or martian address. Shed them. */
	if (cookie && !p.first_frag && rst_answerable(&p, data_end, cfg)) {
		if (shedd_tuple_busy(ctx, p.l2_len, p.l3_len, cookie_flags(&p), now)) {
			/* The kernel's to answer (see shedd_tuple_busy()):
			 * charged as in an unverified class. */
			st->syn_tuple_busy++;
			if (!charged) {
				cs->charged++;
				if (charge(b, cls, now)) {
					cs->admitted++;
					return XDP_PASS;
				}
			}
		} else if (!cookie_budget_take(cfg, now)) {
			cs->cookie_limited++;
		} else {
			/* The kernel hand-off needs the listener's cookie
			 * stamp; before the SYN is rewritten: it needs the SYN. */
			if (cfg->handoff == SHEDD_HANDOFF_KERNEL)
				st->refreshed += shedd_refresh(ctx, p.l2_len, p.l3_len,
							       cookie_flags(&p));
			if (shedd_syncookie_reply(ctx, p.l2_len, p.l3_len, cookie_flags(&p)) == 0) {
				cs->cookie_sent++;
				return XDP_TX;
			}
			/* The frame may be half reshaped: drop it. */
			st->cookie_failed++;
			cs->dropped++;
			return XDP_DROP;
		}
	}
	ret = XDP_DROP;
	if (reject == SHEDD_REJECT_RST)
		ret = refuse(ctx, &p, 0);
	if (ret == XDP_TX)
		cs->rst_sent++;
	else
		cs->dropped++;
	return ret;
}
