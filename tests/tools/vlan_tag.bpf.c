// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* vlan_tag.bpf.c - a client on a VLAN, for the tests of a tag the server's
 * NIC strips (vlan.bats). tc programs on the client's veth:
 * - egress ("tc"): every frame gets the tag VLAN_TCI out of band
 *   (skb->vlan_tci), as a VLAN device hands it to a NIC that inserts tags:
 *   veth (NETIF_F_HW_VLAN_CTAG_TX) passes it on out of band, so the
 *   server's native XDP sees the frame without it, as behind a NIC that
 *   strips tags; with `ethtool -K IF txvlan off` the kernel puts it in the
 *   frame instead (validate_xmit_vlan());
 * - ingress ("classifier"): a SYN-ACK or RST that comes back without the
 *   tag is dropped, as the client's VLAN would never bring it (counted in
 *   the clsact qdisc's drops).
 * VID 0 with a priority: the server's kernel delivers the frame on the
 * veth itself (no VLAN device is needed, which this VM's kernel lacks).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define VLAN_TCI 0x6000 /* priority 3, VID 0 */
#define TC_ACT_OK_ 0
#define TC_ACT_SHOT_ 2
#define ETH_P_8021Q_ 0x8100
#define ETH_P_IP_ 0x0800
#define ETH_P_IPV6_ 0x86DD

SEC("tc")
int vlan_out(struct __sk_buff *skb)
{
	if (!skb->vlan_present)
		bpf_skb_vlan_push(skb, bpf_htons(ETH_P_8021Q_), VLAN_TCI);
	return TC_ACT_OK_;
}

SEC("classifier")
int vlan_in(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct tcphdr *tcp;

	if ((void *)(eth + 1) > data_end)
		return TC_ACT_OK_;
	if (eth->h_proto == bpf_htons(ETH_P_IP_)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) > data_end || ip->protocol != IPPROTO_TCP)
			return TC_ACT_OK_;
		tcp = (void *)ip + ip->ihl * 4;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6_)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) > data_end || ip6->nexthdr != IPPROTO_TCP)
			return TC_ACT_OK_;
		tcp = (void *)(ip6 + 1);
	} else {
		return TC_ACT_OK_;
	}
	if ((void *)(tcp + 1) > data_end || !((tcp->syn && tcp->ack) || tcp->rst))
		return TC_ACT_OK_;
	if (skb->vlan_present && skb->vlan_tci == VLAN_TCI)
		return TC_ACT_OK_;
	return TC_ACT_SHOT_;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
