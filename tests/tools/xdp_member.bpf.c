// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp_member.bpf.c - what XDP can tell of the listener a SYN will reach:
 * for each IPv4 SYN, bpf_sk_lookup_tcp() on its 4-tuple (the stack's own
 * listener lookup, SO_REUSEPORT selection included) and, through
 * bpf_skc_to_tcp_sock(), that listener's accept queue. Recorded by source
 * port in `member`: the listener's SO_PRIORITY (which tells the members of
 * a test's group apart) << 24 | its queue full (sk_ack_backlog >
 * sk_max_ack_backlog, the kernel's test) << 16 | sk_ack_backlog; ~0 when
 * no listener was found. Passes every packet. For listeners.bats. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define ETH_P_IP 0x0800
#define MEMBER_NONE 0xffffffffU

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, __u32);
} member SEC(".maps");

SEC("xdp")
int xdp_member(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct bpf_sock_tuple t = {};
	struct ethhdr *eth = data;
	struct bpf_sock *sk;
	struct tcp_sock *tp;
	struct tcphdr *th;
	struct iphdr *ip;
	__u32 key, val = MEMBER_NONE;

	if ((void *)(eth + 1) > end || eth->h_proto != bpf_htons(ETH_P_IP))
		return XDP_PASS;
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > end || ip->protocol != IPPROTO_TCP || ip->ihl != 5)
		return XDP_PASS;
	th = (void *)(ip + 1);
	if ((void *)(th + 1) > end || !th->syn || th->ack)
		return XDP_PASS;
	t.ipv4.saddr = ip->saddr;
	t.ipv4.daddr = ip->daddr;
	t.ipv4.sport = th->source;
	t.ipv4.dport = th->dest;
	sk = bpf_sk_lookup_tcp(ctx, &t, sizeof(t.ipv4), BPF_F_CURRENT_NETNS, 0);
	if (sk) {
		val = (__u32)(sk->priority & 0xff) << 24;
		tp = bpf_skc_to_tcp_sock(sk);
		if (tp) {
			struct sock *s = (struct sock *)tp;

			val |= (__u32)(s->sk_ack_backlog > s->sk_max_ack_backlog) << 16 |
			       (s->sk_ack_backlog & 0xffff);
		}
		bpf_sk_release(sk);
	}
	key = bpf_ntohs(th->source);
	bpf_map_update_elem(&member, &key, &val, BPF_ANY);
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "GPL";
