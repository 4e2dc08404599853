// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* shedd.bpf.c - the XDP data path: parse -> classify -> charge -> verdict.
 * Only pure TCP SYNs to protected ports are judged, first fragments that
 * carry one included; fragments and header chains that could hide one from
 * us are refused; every other packet passes, counted by kind. A shed SYN is
 * dropped, or answered with a RST where the kernel itself would answer.
 * In a verified class a SYN is answered with a SYN cookie instead and the
 * ACK that returns a valid one is charged (syncookie.h). The inner SYN of
 * a tunnel that ends on this host is judged too, by the same checks, in a
 * class space of its own, never answered (tunnel.h).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#include "shedd.h"
#include "token_bucket.h"
#include "maps.h"
#include "parsing.h"
#include "rst.h"
#include "clock.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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

/* The slow half of charge(): borrow from the class's reserve, refilled to
 * the fine clock, at the rate the daemon's lease allows (lease.h). @how:
 * the class, | CHARGE_TUN for the tunnel class space. A global function,
 * so the verifier checks it once on its own instead of once for every
 * path of the parser that reaches it.
 * Without its map entries (or its cache) the program cannot judge: it
 * fails open and admits.
 *
 * Two spin locks, one after the other, never nested (a program holds one
 * at a time): the rate record's, to copy it, then the reserve's, to refill
 * and borrow. They guard different writers and cannot be one. The record
 * is the daemon's, written whole under its lock (BPF_F_LOCK); the reserve
 * is the program's, and a value the daemon writes whole would overwrite
 * its tokens, so the two live apart, each with its own lock. Read without
 * its lock the record could mix two writes, a new changed_ns with the old
 * prev_rate_per_sec, and the piecewise refill would credit the time before
 * the change at the wrong rate (up to a burst of tokens invented or lost).
 * A per-CPU copy checked against a generation the daemon bumps would need
 * the generation read whole while the kernel copies the record in
 * (copy_map_value_locked(), a memcpy, in no set order): a torn one could
 * match an older copy. The record's lock costs about 15 ns a borrow on one
 * CPU and about 105 ns while a second CPU borrows from the class at the
 * same time, its cache line then moving between them as the reserve's does
 * (tests/bench_xdp.c, IPv4 SYN admitted, borrow: 112 ns with it, 97
 * without; with --also-cpu 268 and 165; without it measured only). But a
 * CPU borrows up to its batch at once and asks an empty reserve again only
 * after a lease: SYNs judged from the CPU's cache (58 ns) take no lock. */
#define CHARGE_TUN (1U << 8) /* with the class: the tunnel class space */
__noinline int shedd_borrow(struct shedd_bucket *b, __u32 how)
{
	__u32 cls = how & 0xff;
	struct shedd_rate *rate = bpf_map_lookup_elem(&rates, &cls);
	struct shedd_reserve *res;
	struct shedd_class_rate r;
	struct shedd_lease *ls;
	__u32 zero = 0;
	__u64 now;

	/* A class's inner SYNs borrow from a reserve of their own, at the
	 * class's rate (include/shedd.h, "The tunnel class space"). */
	if (how & CHARGE_TUN)
		res = bpf_map_lookup_elem(&tun_reserve, &cls);
	else
		res = bpf_map_lookup_elem(&reserve, &cls);
	if (!b || !rate || !res)
		return 1;
	bpf_spin_lock(&rate->lock);
	r = rate->r;
	bpf_spin_unlock(&rate->lock);
	now = clock_ns();
	/* The lease (lease.h), read under its lock, as the daemon writes it
	 * every tick; without one (lease_ns 0, the default) the rates hold
	 * as written and the lock is not taken. */
	ls = bpf_map_lookup_elem(&lease, &zero);
	if (ls && *(volatile __u64 *)&ls->lease_ns) {
		__u32 k = cls;

		/* Bounded where the verifier sees it (lease_relax() bounds it
		 * too, which the compiler may fold away). */
		asm volatile("" : "+r"(k));
		k &= SHEDD_NR_CLASSES - 1;
		bpf_spin_lock(&ls->lock);
		lease_relax(&r, ls, k, now);
		bpf_spin_unlock(&ls->lock);
	}
	return tb_borrow_rate(b, &r, res, now);
}

/* Has the daemon's lease run out at @now (lease.h)? Read without the
 * record's lock: two words, each read whole; a record torn by a write
 * costs one SYN's fairness at most. */
static __always_inline int lease_run_out(__u64 now)
{
	struct shedd_lease *ls;
	__u32 zero = 0;

	ls = bpf_map_lookup_elem(&lease, &zero);
	return ls && *(volatile __u64 *)&ls->lease_ns && lease_expired(ls, now);
}

/* Return 1 to admit, 0 to shed. The CPU's cache @b answers most SYNs, at
 * @now of either clock; the shared rate record and reserve are looked up
 * only to borrow. @how: as for shedd_borrow(). */
static __always_inline int charge(struct shedd_bucket *b, __u32 how, __u64 now)
{
	int v;

	if (!b)
		return 1;
	v = tb_cached(b, now);
	if (v >= 0)
		return v;
	return shedd_borrow(b, how);
}

/*
 * shedd_port_charge() - judge a SYN to @port by the port's own limit
 * (include/shedd.h, "Port limits"), as a class is judged: this CPU's cache
 * of the slot's tokens first, the slot's reserve, refilled at the port's
 * rate, only to borrow. Called only while settings_cur says some port has
 * a limit. A global function: verified once, its frame apart. The limit is
 * the daemon's judgement of the port now: once the daemon's lease ran out
 * it no longer holds, and the port's SYNs go on to their class. Without
 * its entries (a port without a limit, or maps missing) it admits: the
 * class's bucket still judges the SYN.
 * Return: 1 admit (on to the class), 0 shed.
 */
__noinline int shedd_port_charge(__u32 port)
{
	__u16 key = (__u16)port;
	struct shedd_port_limit *pl = bpf_map_lookup_elem(&port_limit, &key);
	struct shedd_port_bucket *pb;
	struct shedd_reserve *res;
	struct shedd_class_rate r;
	__u32 slot;
	__u64 now;
	int v;

	if (!pl)
		return 1;
	/* Set before the entry was added and never changed while it lives:
	 * read without the lock. */
	slot = pl->slot & (MAX_PORT_LIMITS - 1);
	pb = bpf_map_lookup_elem(&port_buckets, &slot);
	if (!pb)
		return 1;
	now = clock_coarse_ns();
	if (lease_run_out(now))
		return 1;
	pb->syn++;
	v = tb_cached(&pb->b, now);
	if (v < 0) {
		res = bpf_map_lookup_elem(&port_reserve, &slot);
		if (!res) {
			pb->admitted++;
			return 1;
		}
		bpf_spin_lock(&pl->lock);
		r = pl->r;
		bpf_spin_unlock(&pl->lock);
		v = tb_borrow_rate(&pb->b, &r, res, clock_ns());
	}
	if (v)
		pb->admitted++;
	else
		pb->shed++;
	return v;
}

#include "syncookie.h"
#include "syncheck.h"
#include "fair.h"

static __always_inline __u32 cookie_flags(const struct pkt *p)
{
	return (p->l3_proto == ETH_P_IPV6 ? CK_V6 : 0) |
	       ((__u32)p->nr_vlans << CK_VLANS_SHIFT);
}

/* How class @cls (in range) is verified: not at all while the kernel has
 * no cookie helpers or the SYN-ACK could not leave (tx_blocked). */
static __always_inline __u32 class_mode(const struct shedd_config *cfg, __u32 cls)
{
	return verify_enabled && !cfg->tx_blocked ? cfg->verify[cls] : SHEDD_VERIFY_OFF;
}

/* --source-check verify: does a SYN of class @cls (in range) that fails
 * the check prove its address with a cookie, in the class it claims,
 * rather than be judged as the default class? Only where a cookie can
 * answer (the helpers, XDP_TX not blocked) and above the default class.
 * Then the ACKs of the class are probed for cookies whatever its mode. */
static __always_inline int src_proves(const struct shedd_config *cfg, __u32 cls)
{
	return verify_enabled && !cfg->tx_blocked && cfg->source_check == SHEDD_SRC_VERIFY &&
	       cls < cfg->default_class;
}

/*
 * shed_by_drop() - is a SYN of class @cls (in range) shed with a plain
 * drop, decided by this CPU's cache at @now? Then nothing about the SYN
 * matters any more: not its checksum (the kernel would drop a wrong one
 * too; it is counted as shed, not as syn_bad_csum), not its route back. So
 * it is told before they are checked: an unverified class that drops what
 * it sheds, without the source check, on a CPU backed off from an empty
 * reserve (tb_cached() would shed it).
 */
static __always_inline int shed_by_drop(const struct shedd_config *cfg, __u32 cls, __u64 now)
{
	struct shedd_bucket *b;
	__u32 key = cls; /* its own: cls stays a register */

	if (cls >= SHEDD_NR_CLASSES || cfg->reject[cls] != SHEDD_REJECT_DROP ||
	    class_mode(cfg, cls) != SHEDD_VERIFY_OFF ||
	    (cfg->source_check != SHEDD_SRC_OFF && cls < cfg->default_class))
		return 0;
	b = bpf_map_lookup_elem(&buckets, &key);
	return b && !(b->tokens && now < b->until_ns) && now < b->retry_ns;
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

/*
 * shedd_parse_ip() - the IP half of the parse (parsing.h:
 * parse_ip_packed()) of the IP header at @off of the frame: the frame's
 * behind its Ethernet header and tags, or a tunnel's inner one. A global
 * function, so the verifier walks the IPv6 chain once, not once for every
 * VLAN stack or tunnel header that leads to it.
 */
__noinline __u64 shedd_parse_ip(struct xdp_md *ctx, __u64 off, __u64 how)
{
	/* Past the mask (never, behind headers the parser accepts): a
	 * packet we cannot follow is refused, never passed. */
	if (off > PARSE_IP_OFF_MASK)
		return PARSE_TOO_DEEP;
	verifier_bound(off, PARSE_IP_OFF_MASK);
	return parse_ip_packed((void *)(long)ctx->data + off, (void *)(long)ctx->data_end, how);
}

/* What a judged ACK counts and gets, alike for a direct ACK and a
 * tunnel's inner one: @ret is shedd_cookie_ack()'s verdict, @cs its
 * class's counters. XDP_PASS or XDP_DROP; or, counted, ACK_ACT_ADMITTED
 * (fairness is the caller's) or ACK_ACT_REFUSED (the answer is the
 * caller's: a RST direct, a drop through a tunnel). */
#define ACK_ACT_ADMITTED (-1)
#define ACK_ACT_REFUSED (-2)
static __always_inline int ack_counted(int ret, struct shedd_stats *st,
				       struct shedd_class_stats *cs,
				       const struct shedd_config *cfg, __u16 dport)
{
	switch (ret) {
	case ACK_NOT_OURS:
		st->non_syn++;
		return XDP_PASS;
	case ACK_FORGED:
		/* No cookie of this port can be outstanding: the ACK of a
		 * connection that died (a server restart) or a stray one.
		 * The kernel resets it, as without shedd, within the RST
		 * budget: a flood of them is not reflected one for one. */
		if (!cookie_sent_recent(dport, clock_coarse_ns())) {
			if (rst_budget_take(cfg, clock_coarse_ns())) {
				st->ack_to_kernel++;
				return XDP_PASS;
			}
			st->rst_limited++;
		}
		cs->ack_invalid++;
		return XDP_DROP;
	case ACK_QUEUE_FULL:
		/* The kernel would drop it: no token for it, the client
		 * sends it again. */
		cs->ack_valid++;
		st->ack_queue_full++;
		return XDP_DROP;
	case ACK_AFTER_RST:
		/* Sent before our RST reached the client: gone. */
		st->ack_after_rst++;
		return XDP_DROP;
	case ACK_REPEAT:
		/* The flow was admitted a moment ago; its socket is not
		 * made yet. Its token is spent. */
		st->ack_repeat++;
		return XDP_PASS;
	case ACK_PAID:
		/* The kernel answered the SYN, which was charged. */
		cs->ack_valid++;
		st->ack_repeat++;
		return XDP_PASS;
	case ACK_ADMITTED:
		cs->ack_valid++;
		cs->charged++;
		cs->ack_admitted++;
		return ACK_ACT_ADMITTED;
	}
	cs->ack_valid++;
	cs->charged++;
	cs->ack_refused++;
	return ACK_ACT_REFUSED;
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

#define RF_FOR_ACK (1U << 5) /* refuse an ACK: a bare RST (above the tags) */
#define RF_HASH_SHIFT 32     /* and, for an ACK, its flow hash above these bits */

/* Refuse the packet the parser described: a RST sent back where the kernel
 * would answer one and the budget allows, else a drop. A global function,
 * so the reply is checked once; it finds the headers again from the
 * offsets. @flags: CK_V6, VLAN tags << CK_VLANS_SHIFT, RF_FOR_ACK and the
 * flow hash << RF_HASH_SHIFT (shedd_cookie_ack() computed it).
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

	cfg = settings_again();
	st = bpf_map_lookup_elem(&stats, &zero);
	if (!cfg || !st || l4_len > 0xffff)
		return XDP_DROP;
	lens_bound(&l2_len, &l3_len);
	p.eth = data;
	if ((void *)(p.eth + 1) > data_end)
		return XDP_DROP;
	p.l3 = data + l2_len;
	p.tcp = data + l2_len + l3_len;
	p.l3_proto = (flags & CK_V6) ? ETH_P_IPV6 : ETH_P_IP;
	p.l2_len = (__u16)l2_len;
	p.l3_len = (__u16)l3_len;
	p.l4_len = (__u16)l4_len;
	p.nr_vlans = (flags >> CK_VLANS_SHIFT) & CK_VLANS_MASK;
	/* A RST into a black hole (tx_blocked) is a drop that says it was
	 * answered: drop it as one. */
	if (cfg->tx_blocked || !rst_answerable(&p, data_end, cfg, ctx->ingress_ifindex)) {
		st->rst_refused++;
		return XDP_DROP;
	}
	if (!rst_budget_take(cfg, clock_coarse_ns())) {
		st->rst_limited++;
		return XDP_DROP;
	}
	/* A refused proven client: its next segments, already on their way,
	 * must not be admitted. Noted before the frame becomes the RST. */
	if (flags & RF_FOR_ACK) {
		struct tcphdr *tcp = p.tcp;

		if ((void *)(tcp + 1) > data_end)
			return XDP_DROP;
		proven_put((__u32)(flags >> RF_HASH_SHIFT), FLOW_REFUSED, clock_coarse_ns(), tcp->seq,
			   tcp->ack_seq);
	}
	if (rst_reply(ctx, &p, (flags & RF_FOR_ACK) != 0))
		return XDP_DROP;
	return XDP_TX;
}

/* @ack_hash: for an ACK, RF_FOR_ACK | its flow hash << RF_HASH_SHIFT; 0 for
 * a SYN. */
static __always_inline int refuse(struct xdp_md *ctx, const struct pkt *p, __u64 ack_hash)
{
	/* A fragment is never answered: its SYN is only whole after
	 * reassembly, and the RST would be built from a part of it. */
	if (p->first_frag)
		return XDP_DROP;
	return shedd_refuse(ctx, p->l2_len, p->l3_len, p->l4_len, cookie_flags(p) | ack_hash);
}

/* Does any class verify? Then the ACKs and RSTs to protected ports are
 * verified admission's to judge (the verify modes, one byte a class, read
 * as one word). */
_Static_assert(SHEDD_NR_CLASSES == 4, "the verify modes of every class fill one word");
static __always_inline int any_class_verifies(const struct shedd_config *cfg)
{
	__u32 modes;

	__builtin_memcpy(&modes, cfg->verify, sizeof(modes));
	return modes != 0;
}

/* fast_path(): the whole way; the whole way for a pure SYN of class C to
 * a protected port, its addresses checked (addr_kernel_drops()). */
#define FAST_FURTHER (-1)
#define FAST_CLASSIFIED(c) (-2 - (int)(c))

/*
 * fast_path() - the commonest packets judged without the whole parse. A
 * frame without VLAN tags that holds an IPv4 datagram without options or
 * an IPv6 one without extension headers, unfragmented, with a TCP segment:
 * checked as parse_ipv4(), parse_ipv6() and parse_tcp() check it, so what
 * this finds is what the whole parse would find (PARSE_OK, l2_len 14).
 * - No SYN: established traffic, passed as non_syn, unless it is an ACK or
 *   RST that verified admission could judge (a class verifies, the port is
 *   protected).
 * - A pure SYN: to a port not protected, passed as unprotected; from or to
 *   an address the kernel drops, dropped as syn_martian; in a class that
 *   sheds it with a plain drop on this CPU (shed_by_drop()), shed. The
 *   cheapest way to refuse a flood, and what the whole way would decide.
 * Everything else goes the whole way, a pure SYN with its class.
 * Return: an XDP verdict (the packet counted in @st), FAST_CLASSIFIED(its
 * class) or FAST_FURTHER.
 */
static __always_inline int fast_path(struct xdp_md *ctx, struct shedd_stats *st)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct shedd_class_stats *cs;
	struct shedd_config *cfg;
	struct pkt p = {};
	struct tcphdr *tcp;
	__u32 l4_len, cls;

	if ((void *)(eth + 1) > data_end)
		return FAST_FURTHER;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > data_end || ip->version != 4 || ip->ihl != 5 ||
		    ip->protocol != IPPROTO_TCP || (ip->frag_off & bpf_htons(IP_MF | IP_OFFSET)))
			return FAST_FURTHER;
		l4_len = ntohs_bounded(ip->tot_len);
		if (l4_len < sizeof(*ip) || (void *)ip + l4_len > data_end)
			return FAST_FURTHER;
		l4_len -= sizeof(*ip);
		tcp = (void *)(ip + 1);
		p.l3 = ip;
		p.l3_proto = ETH_P_IP;
		p.l3_len = sizeof(*ip);
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end || ip6->version != 6 ||
		    ip6->nexthdr != IPPROTO_TCP)
			return FAST_FURTHER;
		l4_len = ntohs_bounded(ip6->payload_len);
		if ((void *)(ip6 + 1) + l4_len > data_end)
			return FAST_FURTHER;
		tcp = (void *)(ip6 + 1);
		p.l3 = ip6;
		p.l3_proto = ETH_P_IPV6;
		p.l3_len = sizeof(*ip6);
	} else {
		return FAST_FURTHER;
	}
	if ((void *)(tcp + 1) > data_end || tcp->doff < 5 || tcp->doff * 4U > l4_len)
		return FAST_FURTHER;
	if (!tcp->syn) {
		if (verify_enabled && (tcp->ack || tcp->rst)) {
			cfg = settings_peek();
			if (cfg &&
			    (any_class_verifies(cfg) || cfg->source_check == SHEDD_SRC_VERIFY) &&
			    port_protected(cfg, bpf_ntohs(tcp->dest)))
				return FAST_FURTHER;
		}
		st->non_syn++;
		return XDP_PASS;
	}
	if (tcp->ack || tcp->rst || tcp->fin)
		return FAST_FURTHER;
	cfg = settings_peek();
	if (!cfg)
		return FAST_FURTHER;
	if (!port_protected(cfg, bpf_ntohs(tcp->dest))) {
		st->unprotected++;
		return XDP_PASS;
	}
	p.eth = eth;
	p.tcp = tcp;
	p.l2_len = sizeof(*eth);
	p.l4_len = (__u16)l4_len;
	if (addr_kernel_drops(&p, data_end, ctx->ingress_ifindex)) {
		st->syn_martian++;
		return XDP_DROP;
	}
	cls = classify(&p, data_end, cfg);
	if (cls >= SHEDD_NR_CLASSES)
		cls = SHEDD_SHEDDABLE;
	if (!shed_by_drop(cfg, cls, clock_coarse_ns()))
		return FAST_CLASSIFIED(cls);
	cs = &st->cls[cls];
	cs->syn++;
	cs->charged++;
	cs->dropped++;
	return XDP_DROP;
}

/* The parse, packed (parsing.h: parse_frame_packed()): the Ethernet
 * header and its tags here, the rest in shedd_parse_ip(). A global
 * function, so the verifier checks it once on its own. */
__noinline __u64 shedd_parse(struct xdp_md *ctx)
{
	struct cursor c = { .pos = (void *)(long)ctx->data, .end = (void *)(long)ctx->data_end };
	struct pkt p = {};
	int ret = parse_eth(&c, &p);

	if (ret != PARSE_OK)
		return (__u64)ret;
	return parse_frame_packed(shedd_parse_ip(ctx, p.l2_len,
						 p.l3_proto == ETH_P_IPV6 ? PARSE_IP_V6 : 0),
				  p.l2_len, p.nr_vlans);
}

/* shedd_xdp()'s cookie: a SYN that failed the check was found to go to a
 * listener already (shedd_syn_sock()): not asked again. */
#define COOKIE_LISTENER 2
/* shedd_xdp()'s mode for a SYN the source check demoted to the default
 * class, judged as SHEDD_VERIFY_OFF, whose claimed class probes ACKs: if
 * admitted it is noted (shedd_syn_charged()), so that its ACK, which comes
 * back in the claimed class, is not charged there again. */
#define MODE_OFF_NOTED (SHEDD_NR_VERIFY + 1)

/* A tag the NIC took out of the frame into its receive descriptor (rx
 * VLAN offload) is not in the frame XDP sees: the parser judges the frame
 * as it is, as the kernel delivers it after the tag (the tag picks the
 * VLAN device, as one in the frame does), but a reply sent with XDP_TX
 * leaves as built, and without the tag it would go out on the untagged
 * VLAN where the client is not. Kernels from 6.8 give the tag to a
 * program bound to the device (BPF_F_XDP_DEV_BOUND_ONLY), from drivers
 * that implement it (netdev's xdp-rx-metadata-features: vlan-tag).
 * Weak: libbpf (1.1 too) loads the object where the kernel lacks the
 * kfunc, as long as shedd_xdp_vlan, its one caller, is not loaded. */
extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx, __be16 *vlan_proto,
					__u16 *vlan_tci) __ksym __weak;

/**
 * shedd_retag() - put the tag the NIC stripped from the frame in @ctx back
 * into the reply XDP_TX is about to send: the outer tag, right after the
 * MAC addresses, before any tag the frame still holds (the builders keep
 * those).
 * Return: XDP_TX; XDP_DROP if the frame cannot grow (a reply without its
 * tag would reach another VLAN, not the client).
 */
__noinline int shedd_retag(struct xdp_md *ctx)
{
	__be16 proto = 0;
	__u16 tci = 0;
	void *data, *data_end;
	__u8 macs[2 * ETH_ALEN];
	__be16 *tag;

	/* Nothing stripped (-ENODATA), or no word from the driver. */
	if (bpf_xdp_metadata_rx_vlan_tag(ctx, &proto, &tci))
		return XDP_TX;
	if (proto != bpf_htons(ETH_P_8021Q) && proto != bpf_htons(ETH_P_8021AD))
		return XDP_TX;
	if (bpf_xdp_adjust_head(ctx, -(int)sizeof(struct vlan_tag)))
		return XDP_DROP;
	data = (void *)(long)ctx->data;
	data_end = (void *)(long)ctx->data_end;
	if (data + sizeof(struct ethhdr) + sizeof(struct vlan_tag) > data_end)
		return XDP_DROP;
	__builtin_memcpy(macs, data + sizeof(struct vlan_tag), sizeof(macs));
	__builtin_memcpy(data, macs, sizeof(macs));
	tag = data + sizeof(macs);
	tag[0] = proto;
	tag[1] = bpf_htons(tci);
	return XDP_TX;
}

/* @verdict, for a reply about to leave with XDP_TX: with @retag (a
 * constant of each entry point), the stripped tag goes back in first. */
static __always_inline int tx_answer(struct xdp_md *ctx, int verdict, const int retag)
{
	if (retag && verdict == XDP_TX)
		return shedd_retag(ctx);
	return verdict;
}

/* The whole pipeline, for each of the two entry points below; @retag:
 * shedd_xdp_vlan's. */
static __always_inline int shedd_judge(struct xdp_md *ctx, const int retag)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct shedd_class_stats *cs;
	struct shedd_fair_class *fc;
	struct shedd_config *cfg;
	struct shedd_bucket *b;
	struct shedd_stats *st;
	struct pkt p = {};
	__u32 zero = 0, cls, mode, reject, cur_flags = 0;
	int ret, fast, is_ack, is_rst, sock, cookie = 0, charged = 0;
	__u64 m, now, judged, kls;
	__u16 dport;

	/* Without its counters the program fails open: pass everything. */
	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return XDP_PASS;
	st->packets++;
	fast = fast_path(ctx, st);
	if (fast >= 0)
		return fast;

	m = shedd_parse(ctx);
	ret = PM_RESULT(m);
	/* IP that is not TCP, or its first fragment, may be a tunnel that
	 * ends here (tunnel.h). */
	if ((ret == PARSE_NON_TCP || (ret == PARSE_FRAGMENT && (m & PM_FIRST_FRAG))) &&
	    tun_proto(PM_BYTE(m))) {
		__u64 v = shedd_tunnel(ctx, PM_L2(m), PM_L3(m), tun_meta_packed(m));

		if (v & TUN_JUDGE)
			return tun_judged(ctx, st, &p, v);
		if (v != TUN_NOT_OURS)
			return (int)v;
	}
	if (ret == PARSE_FRAG_REFUSED || ret == PARSE_TOO_DEEP)
		return refuse_counted(st, ret);
	if (ret != PARSE_OK)
		return pass_counted(st, ret);
	/* The one guard of the header lengths the global functions below
	 * take: a parse they could not follow is refused, never passed
	 * (none is: they take whatever the parser accepts). */
	if (pkt_unpack(m, (void *)(long)ctx->data, data_end, &p))
		return refuse_counted(st, PARSE_TOO_DEEP);
	/* Established traffic always passes: only a pure SYN opens work, and
	 * in a verified class the ACK that ends a cookie handshake (a first
	 * fragment too: the kernel reassembles it, and its fixed TCP header
	 * is all the cookie check reads). A RST ends what a proven ACK left
	 * for the segments behind it. */
	is_ack = verify_enabled && pkt_handshake_ack(&p);
	is_rst = verify_enabled && p.tcp->rst && !p.tcp->syn;
	if (!is_ack && !is_rst && (!p.tcp->syn || p.tcp->ack)) {
		st->non_syn++;
		return XDP_PASS;
	}
	/* A listener discards a SYN with RST or FIN (RFC 793 and Linux's
	 * tcp_rcv_state_process): no token for it, and no answer. */
	if (!is_ack && !is_rst && (p.tcp->rst || p.tcp->fin)) {
		st->bad_syn++;
		return XDP_PASS;
	}

	cfg = settings_begin_flags(&cur_flags);
	if (!cfg) {
		st->non_syn += is_ack | is_rst;
		return XDP_PASS; /* not configured yet: fail open */
	}
	dport = bpf_ntohs(p.tcp->dest);
	if (!port_protected(cfg, dport)) {
		if (is_ack || is_rst)
			st->non_syn++;
		else
			st->unprotected++;
		return XDP_PASS;
	}
	if (is_rst) {
		shedd_flow_end(ctx, p.l2_len, p.l3_len, cookie_flags(&p));
		st->non_syn++;
		return XDP_PASS;
	}

	/* What the kernel drops never reaches the listener: no token, no
	 * answer (addr_kernel_drops(), shedd_syn_csum()). The fast path may
	 * have classified the SYN and checked its addresses already. kls:
	 * 64 bits, so that its bound survives the calls below on every
	 * verifier (a 32-bit spill loses it on Debian 12's). */
	if (fast <= FAST_CLASSIFIED(0) && fast >= FAST_CLASSIFIED(SHEDD_NR_CLASSES - 1)) {
		kls = (__u64)(FAST_CLASSIFIED(0) - fast);
	} else {
		kls = classify(&p, data_end, cfg);
		if (!is_ack && addr_kernel_drops(&p, data_end, ctx->ingress_ifindex)) {
			st->syn_martian++;
			return XDP_DROP;
		}
	}
	if (kls >= SHEDD_NR_CLASSES)
		kls = SHEDD_SHEDDABLE;
	if (!is_ack) {
		/* A flood's path: dropped whatever its checksum says (the
		 * fast path asked already of the SYNs it classified). */
		if (fast == FAST_FURTHER && shed_by_drop(cfg, kls, clock_coarse_ns())) {
			cs = &st->cls[kls];
			cs->syn++;
			cs->charged++;
			cs->dropped++;
			st->frag_judged += p.first_frag;
			return XDP_DROP;
		}
		if (!p.first_frag &&
		    shedd_syn_csum(ctx, p.l2_len, p.l3_len, p.l4_len, cookie_flags(&p)) == CSUM_BAD) {
			st->syn_bad_csum++;
			return XDP_DROP;
		}
	}
	cls = kls;
	/* A source above the default class must be routed back where its
	 * SYN came from, or it is judged as the default class: charged to
	 * it, never answered with a cookie (the ACK would come back in the
	 * class of its source). With --source-check verify it proves its
	 * address instead where a cookie can answer it (a listener takes
	 * it, shedd_syn_sock()): a cookie, whatever the class's mode, and
	 * the class charged only by the ACK that returns it, as in a
	 * verified class; a spoofed flood then spends no token of the class,
	 * and a real client on an asymmetric route keeps its class. */
	mode = SHEDD_NR_VERIFY; /* not yet chosen */
	if (!is_ack && cfg->source_check != SHEDD_SRC_OFF && cls < cfg->default_class &&
	    cfg->default_class < SHEDD_NR_CLASSES) {
		ret = shedd_src_route(ctx, p.l2_len, p.l3_len, cookie_flags(&p));
		if (ret == SRC_FAILED) {
			st->src_failed++;
			if (src_proves(cfg, cls) && !p.first_frag &&
			    shedd_syn_sock(ctx, p.l2_len, p.l3_len, cookie_flags(&p)) ==
				    SYN_LISTENER) {
				mode = SHEDD_VERIFY_ALWAYS;
				cookie = COOKIE_LISTENER;
			} else {
				__u64 claimed = cls;

				/* Its ACK comes back in the class it claims:
				 * where that class probes ACKs, the SYN is
				 * noted if it is admitted (MODE_OFF_NOTED),
				 * so the ACK of the kernel's answer is not
				 * charged there a second time; a shed one is
				 * answered by nobody and noted nowhere. */
				verifier_bound(claimed, SHEDD_NR_CLASSES - 1);
				mode = class_mode(cfg, (__u32)claimed) != SHEDD_VERIFY_OFF ||
				       src_proves(cfg, (__u32)claimed)
				       ? MODE_OFF_NOTED : SHEDD_VERIFY_OFF;
				cls = cfg->default_class;
			}
		} else if (ret == SRC_UNCHECKED) {
			st->src_unchecked++;
		}
		if (cls >= SHEDD_NR_CLASSES)
			cls = SHEDD_SHEDDABLE;
	}
	cs = &st->cls[cls];
	/* A cookie SYN-ACK that cannot leave (tx_blocked) refuses the
	 * client it was to prove: judge the class as unverified instead. */
	if (mode == SHEDD_NR_VERIFY)
		mode = class_mode(cfg, cls);
	/* Read while cls is known to be in range: it is spilled as 32 bits
	 * across the calls below, which Debian 12's verifiers do not track. */
	reject = cfg->reject[cls];
	if (is_ack) {
		/* A class that does not verify may still have answered a SYN
		 * that failed the check with a cookie (src_proves()). */
		if (mode == SHEDD_VERIFY_OFF && !src_proves(cfg, cls)) {
			st->non_syn++;
			return XDP_PASS;
		}
		st->ack_probed++;
		judged = shedd_cookie_ack(ctx, p.l2_len, p.l3_len, cookie_flags(&p), cls);
		ret = (int)(judged & ACK_VERDICT_MASK);
		/* A FIN is judged like any segment, then ends the flow. */
		if (p.tcp->fin)
			shedd_flow_end(ctx, p.l2_len, p.l3_len, cookie_flags(&p));
		if (ret != ACK_NOT_OURS)
			st->frag_judged += p.first_frag;
		ret = ack_counted(ret, st, cs, cfg, dport);
		if (ret != ACK_ACT_ADMITTED && ret != ACK_ACT_REFUSED)
			return ret;
		/* A proven admission: what fairness counts in a verified
		 * class. */
		if (ret == ACK_ACT_ADMITTED) {
			if (fair_of(cls))
				shedd_fair(ctx, p.l2_len, p.l3_len, cookie_flags(&p),
					   cls | FAIR_COUNT);
			return XDP_PASS;
		}
		/* Never a silent drop: a client that speaks second would
		 * wait for data that is not coming. */
		return tx_answer(ctx, refuse(ctx, &p, RF_FOR_ACK | (judged & ~(__u64)ACK_VERDICT_MASK)),
				 retag);
	}

	b = bpf_map_lookup_elem(&buckets, &cls);
	now = clock_coarse_ns();
	cs->syn++;
	st->frag_judged += p.first_frag;
	/* A port in trouble of its own (its listeners stopped while the
	 * other ports accept) has a limit of its own: over it, a SYN is shed
	 * before it asks its class for a token or a cookie, and is no demand
	 * of the class (not charged): the others' admissions stay theirs.
	 * No lookup while no port has a limit. */
	if ((cur_flags & SHEDD_CUR_PORT_LIMITS) && !shedd_port_charge(dport))
		goto shed;
	/* While the class sheds, a source over its share is shed first,
	 * before it takes a token or a cookie (fair.h). The shares are the
	 * daemon's, of the rates it wrote: once its lease ran out they are
	 * of a rate no longer in force, and no source is shed for them. */
	fc = fair_of(cls);
	if (fc && fc->active && !lease_run_out(now) &&
	    shedd_fair(ctx, p.l2_len, p.l3_len, cookie_flags(&p), cls | FAIR_CHECK)) {
		/* Demand all the same where SYNs are charged: the class's
		 * share of the rate follows what its sources ask. */
		if (mode == SHEDD_VERIFY_OFF || mode == MODE_OFF_NOTED)
			cs->charged++;
		goto shed;
	}
	if (mode == SHEDD_VERIFY_ALWAYS ||
	    (mode == SHEDD_VERIFY_SHEDDING && b && now < b->verify_until_ns)) {
		cookie |= 1;
	} else {
		charged = 1;
		cs->charged++;
		if (charge(b, cls, now)) {
			cs->admitted++;
			/* Charged once: the ACK of the kernel's answer passes
			 * (probed in a class whose cookies src_proves(), or in
			 * the class a demoted SYN claimed: MODE_OFF_NOTED). */
			if (mode != SHEDD_VERIFY_OFF || src_proves(cfg, cls))
				shedd_syn_charged(ctx, p.l2_len, p.l3_len, cookie_flags(&p), now);
			/* Fairness counts unproven sources only where
			 * nothing is proven: in a verified class a proven
			 * ACK counts instead. */
			else if (fair_of(cls))
				shedd_fair(ctx, p.l2_len, p.l3_len, cookie_flags(&p),
					   cls | FAIR_COUNT);
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
	if (cookie && !p.first_frag && rst_answerable(&p, data_end, cfg, ctx->ingress_ifindex)) {
		/* Asked already of a SYN that failed the check. */
		if (cookie & COOKIE_LISTENER)
			sock = SYN_LISTENER;
		else
			sock = shedd_syn_sock(ctx, p.l2_len, p.l3_len, cookie_flags(&p));
		if (sock != SYN_LISTENER) {
			/* Not a cookie's to answer (see shedd_syn_sock()):
			 * charged as in an unverified class. A lookup that
			 * finds no listener is no proof that nobody takes
			 * the SYN: a NAT redirect, TPROXY or IPVS may give
			 * it, after XDP, to a listener the lookup of its
			 * tuple as it arrives does not find, and a DNAT
			 * may make a forwarded one local. Passed uncharged
			 * it would bypass the class; refused for want of a
			 * listener, it would lock the port's clients out.
			 * A signed SYN, or one to an MPTCP listener, is the
			 * listener's own to answer. A SYN the bucket
			 * refused already is shed as in an unverified
			 * class. */
			if (sock == SYN_BUSY)
				st->syn_tuple_busy++;
			else if (sock == SYN_SIGNED)
				syn_signed_count();
			else if (sock == SYN_NOT_LOCAL)
				st->syn_not_local++;
			else
				st->syn_no_listener++;
			if (!charged) {
				cs->charged++;
				if (charge(b, cls, now)) {
					cs->admitted++;
					/* Charged once: with tcp_syncookies=2
					 * the kernel answers with a cookie of
					 * its own, whose ACK passes. */
					shedd_syn_charged(ctx, p.l2_len, p.l3_len, cookie_flags(&p),
							  now);
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
			if (shedd_syncookie_reply(ctx, p.l2_len, p.l3_len, cookie_flags(&p)) == 0 &&
			    tx_answer(ctx, XDP_TX, retag) == XDP_TX) {
				cookie_sent_mark(dport, now);
				cs->cookie_sent++;
				return XDP_TX;
			}
			/* The frame may be half reshaped, or without the
			 * tag it came with: drop it. */
			st->cookie_failed++;
			cs->dropped++;
			return XDP_DROP;
		}
	}
shed:
	ret = XDP_DROP;
	if (reject == SHEDD_REJECT_RST)
		ret = tx_answer(ctx, refuse(ctx, &p, 0), retag);
	if (ret == XDP_TX)
		cs->rst_sent++;
	else
		cs->dropped++;
	return ret;
}

SEC("xdp")
int shedd_xdp(struct xdp_md *ctx)
{
	return shedd_judge(ctx, 0);
}

/* shedd_xdp on a device whose driver gives the stripped tag: loaded bound
 * to it by the daemon (user/daemon/loader.c), never by default ("?"). */
SEC("?xdp")
int shedd_xdp_vlan(struct xdp_md *ctx)
{
	return shedd_judge(ctx, 1);
}
