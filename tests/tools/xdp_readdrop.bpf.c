// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp_readdrop.bpf.c - the least a SYN filter can do: read the Ethernet,
 * IPv4 or IPv6 and TCP headers, drop a SYN, pass everything else. The
 * floor the benchmark holds shedd's shed path against: what it costs to
 * read the packet at all, which a trivial XDP_DROP never does. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD

SEC("xdp")
int xdp_readdrop(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct tcphdr *tcp;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > data_end || ip->protocol != IPPROTO_TCP)
			return XDP_PASS;
		tcp = (void *)ip + ip->ihl * 4;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end || ip6->nexthdr != IPPROTO_TCP)
			return XDP_PASS;
		tcp = (void *)(ip6 + 1);
	} else {
		return XDP_PASS;
	}
	if ((void *)(tcp + 1) > data_end)
		return XDP_PASS;
	return tcp->syn && !tcp->ack ? XDP_DROP : XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
