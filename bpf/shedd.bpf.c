// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* shedd.bpf.c - the XDP data path: parse -> classify -> charge -> verdict.
 * Only pure TCP SYNs to protected ports are judged, first fragments that
 * carry one included; fragments and header chains that could hide one from
 * us are refused; every other packet passes, counted by kind. A shed SYN is
 * dropped, or answered with a RST where the kernel itself would answer.
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

/* Set before load by the daemon when the kernel has the SYN cookie helpers
 * (bpf_tcp_raw_gen_syncookie_ipv4/ipv6, kernel >= 6.0), so that the program
 * still loads on older kernels. */
const volatile __u8 verify_enabled = 0;

static __always_inline __u64 clock_ns(void)
{
	if (use_test_clock)
		return test_clock_ns;
	return bpf_ktime_get_ns();
}

static __always_inline __u32 classify(const struct pkt *p, void *data_end,
				      const struct shedd_config *cfg)
{
	__u32 *cls = NULL;

	if (p->l3_proto == ETH_P_IP) {
		struct iphdr *ip = p->l3;
		struct shedd_lpm_v4 key = { .prefixlen = 32 };

		if ((void *)(ip + 1) > data_end)
			return cfg->default_class;
		__builtin_memcpy(key.addr, &ip->saddr, 4);
		cls = bpf_map_lookup_elem(&prefix_v4, &key);
	} else {
		struct ipv6hdr *ip6 = p->l3;
		struct shedd_lpm_v6 key = { .prefixlen = 128 };

		if ((void *)(ip6 + 1) > data_end)
			return cfg->default_class;
		__builtin_memcpy(key.addr, &ip6->saddr, 16);
		cls = bpf_map_lookup_elem(&prefix_v6, &key);
	}
	if (cls && *cls < SHEDD_NR_CLASSES)
		return *cls;
	return cfg->default_class;
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

/* Return 1 to admit, 0 to shed. The CPU's cache answers most SYNs; the
 * shared rate record and reserve are looked up only to borrow. */
static __always_inline int charge(__u32 cls)
{
	struct shedd_bucket *b = bpf_map_lookup_elem(&buckets, &cls);
	__u64 now;
	int v;

	if (!b)
		return 1;
	now = clock_ns();
	v = tb_cached(b, now);
	if (v >= 0)
		return v;
	return shedd_borrow(b, cls, now);
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

/* Drop what could carry a SYN past us but cannot be judged. */
static __always_inline int refuse_counted(struct shedd_stats *st, int reason)
{
	if (reason == PARSE_FRAG_REFUSED)
		st->frag_refused++;
	else
		st->deep_refused++;
	return XDP_DROP;
}

SEC("xdp")
int shedd_xdp(struct xdp_md *ctx)
{
	void *data_end = (void *)(long)ctx->data_end;
	struct cursor c = { .pos = (void *)(long)ctx->data, .end = data_end };
	struct shedd_class_stats *cs;
	struct shedd_config *cfg;
	struct shedd_stats *st;
	struct pkt p = {};
	__u32 zero = 0, cls;
	__u16 dport;
	int ret;

	/* Without its counters the program fails open: pass everything. */
	st = bpf_map_lookup_elem(&stats, &zero);
	if (!st)
		return XDP_PASS;
	st->packets++;

	ret = parse_packet(&c, &p);
	if (ret == PARSE_FRAG_REFUSED || ret == PARSE_TOO_DEEP)
		return refuse_counted(st, ret);
	if (ret != PARSE_OK)
		return pass_counted(st, ret);

	/* Established traffic always passes: only a pure SYN opens work. */
	if (!p.tcp->syn || p.tcp->ack) {
		st->non_syn++;
		return XDP_PASS;
	}
	/* A listener discards a SYN with RST or FIN (RFC 793 and Linux's
	 * tcp_rcv_state_process): no token for it, and no answer. */
	if (p.tcp->rst || p.tcp->fin) {
		st->bad_syn++;
		return XDP_PASS;
	}

	cfg = bpf_map_lookup_elem(&settings, &zero);
	if (!cfg)
		return XDP_PASS; /* not configured yet: fail open */
	dport = bpf_ntohs(p.tcp->dest);
	if (!cfg->all_ports && !bpf_map_lookup_elem(&ports, &dport)) {
		st->unprotected++;
		return XDP_PASS;
	}

	cls = classify(&p, data_end, cfg);
	if (cls >= SHEDD_NR_CLASSES)
		cls = SHEDD_SHEDDABLE;
	cs = &st->cls[cls];
	cs->syn++;
	cs->charged++; /* no verified admission yet: every SYN is charged */
	st->frag_judged += p.first_frag;

	if (charge(cls)) {
		cs->admitted++;
		return XDP_PASS;
	}
	/* A fragment is never answered: its SYN is only whole after
	 * reassembly, and the RST would be built from a part of it. */
	if (cfg->reject[cls] == SHEDD_REJECT_RST && !p.first_frag) {
		if (!rst_answerable(&p, data_end, cfg))
			st->rst_refused++;
		else if (!rst_budget_take(cfg, clock_ns()))
			st->rst_limited++;
		else if (rst_reply(ctx, &p) == 0) {
			cs->rst_sent++;
			return XDP_TX;
		}
	}
	cs->dropped++;
	return XDP_DROP;
}
