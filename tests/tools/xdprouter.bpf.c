// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdprouter.bpf.c - the router of the flood testbed, all in XDP: frames from
 * the clients are redirected into the server-facing veth, where the flood
 * generator injects its SYNs, so both reach the server through one ring;
 * replies to the clients go back, replies to spoofed sources (IPv4, and
 * IPv6 when given a prefix for them) are counted and dropped. Anything else (ARP, traffic for the router itself) passes. */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "xdprouter.h"

#define ETH_P_IP_ 0x0800
#define ETH_P_IPV6_ 0x86DD
#define IPPROTO_TCP_ 6
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_RST 0x04
#define TCP_FLAG_ACK 0x10

/* Set by the loader before load. Addresses and masks in network order. */
const volatile __u32 cli_ifindex;
const volatile __u32 srv_ifindex;
const volatile __u8 cli_if_mac[6], srv_if_mac[6]; /* the router's own */
const volatile __u8 cli_mac[6], srv_mac[6];       /* the hosts' */
const volatile __be32 cli_net, cli_mask;
const volatile __be32 srv_net, srv_mask;
const volatile __be32 spoof_net, spoof_mask;
/* The IPv6 spoofed sources; none unless spoof6_on. */
const volatile __u8 spoof6_on;
const volatile __be32 spoof6_net[4], spoof6_mask[4];

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xdprouter_stats);
} rtr_stats SEC(".maps");

static __always_inline struct xdprouter_stats *stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&rtr_stats, &zero);
}

static __always_inline void set_macs(struct ethhdr *eth, const volatile __u8 *dst,
				     const volatile __u8 *src)
{
	for (int i = 0; i < 6; i++) {
		eth->h_dest[i] = dst[i];
		eth->h_source[i] = src[i];
	}
}

/* The IPv4 header after a plain Ethernet header, or NULL. */
static __always_inline struct iphdr *ipv4_of(struct xdp_md *ctx, struct ethhdr **ethp)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);

	if ((void *)(ip + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP_))
		return NULL;
	*ethp = eth;
	return ip;
}

/* Counts and drops a reply to a spoofed source by its TCP flags. */
static __always_inline int drop_spoof_reply(struct xdprouter_stats *st, struct tcphdr *tcp,
					    void *end)
{
	__u8 flags;

	if ((void *)(tcp + 1) > end) {
		st->spoof_other++;
		return XDP_DROP;
	}
	flags = ((__u8 *)tcp)[13];
	if ((flags & (TCP_FLAG_SYN | TCP_FLAG_ACK)) == (TCP_FLAG_SYN | TCP_FLAG_ACK))
		st->spoof_synack++;
	else if (flags & TCP_FLAG_RST)
		st->spoof_rst++;
	else
		st->spoof_other++;
	return XDP_DROP;
}

/* IPv6 on the server-facing veth: to a spoofed source, counted and dropped
 * (the answers carry no extension headers); anything else passes. */
static __always_inline int from_srv6(struct xdp_md *ctx, struct xdprouter_stats *st)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);
	int i;

	if (!spoof6_on || (void *)(ip6 + 1) > end) {
		st->passed++;
		return XDP_PASS;
	}
	for (i = 0; i < 4; i++) {
		if ((ip6->daddr.in6_u.u6_addr32[i] & spoof6_mask[i]) != spoof6_net[i]) {
			st->passed++;
			return XDP_PASS;
		}
	}
	if (ip6->nexthdr != IPPROTO_TCP_) {
		st->spoof_other++;
		return XDP_DROP;
	}
	return drop_spoof_reply(st, (void *)(ip6 + 1), end);
}

/* On the client-facing veth: frames for the server's subnet go out of the
 * server-facing veth. */
SEC("xdp")
int xdprouter_from_cli(struct xdp_md *ctx)
{
	struct xdprouter_stats *st = stats();
	struct ethhdr *eth;
	struct iphdr *ip = ipv4_of(ctx, &eth);

	if (!st)
		return XDP_PASS; /* cannot happen: a one-entry array */
	if (!ip || (ip->daddr & srv_mask) != srv_net) {
		st->passed++;
		return XDP_PASS;
	}
	set_macs(eth, srv_mac, srv_if_mac);
	st->to_srv++;
	return bpf_redirect(srv_ifindex, 0);
}

/* On the server-facing veth: replies to the clients go back out of the
 * client-facing veth; replies to spoofed sources end here, counted by kind. */
SEC("xdp")
int xdprouter_from_srv(struct xdp_md *ctx)
{
	void *end = (void *)(long)ctx->data_end;
	struct xdprouter_stats *st = stats();
	struct ethhdr *eth = (void *)(long)ctx->data;
	struct iphdr *ip = ipv4_of(ctx, &eth);

	if (!st)
		return XDP_PASS;
	if (!ip && (void *)(eth + 1) <= end && eth->h_proto == bpf_htons(ETH_P_IPV6_))
		return from_srv6(ctx, st);
	if (!ip) {
		st->passed++;
		return XDP_PASS;
	}
	if ((ip->daddr & cli_mask) == cli_net) {
		set_macs(eth, cli_mac, cli_if_mac);
		st->to_cli++;
		return bpf_redirect(cli_ifindex, 0);
	}
	if ((ip->daddr & spoof_mask) != spoof_net) {
		st->passed++;
		return XDP_PASS;
	}
	/* The flood's SYNs carry no IP options, nor do the kernel's answers. */
	if (ip->protocol != IPPROTO_TCP_ || ip->ihl != 5) {
		st->spoof_other++;
		return XDP_DROP;
	}
	return drop_spoof_reply(st, (void *)(ip + 1), end);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
