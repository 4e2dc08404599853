// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* floodgen.bpf.c - the flood generator's XDP programs (floodgen_syn for
 * IPv4, floodgen_syn6 for IPv6), run by BPF_PROG_TEST_RUN in live-frames
 * mode: when a SYN is due, one writes the frame into a TCP SYN to the server
 * from the next spoofed (address, port) and sends it with XDP_TX out of the
 * ingress device; otherwise it drops the frame. Frames are recycled with
 * what an earlier run left in them, so every field is written every time. */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "floodgen.h"

/* Set by the loader before load. Addresses in network order. */
const volatile __u8 dst_mac[6], src_mac[6];
const volatile __be32 dst_addr;
const volatile __be16 dst_port;
const volatile __be32 spoof_net;
const volatile __u32 spoof_host_mask; /* host order: the host bits */
/* IPv6: the host bits are those of spoof_host_mask in the last 32 bits. */
const volatile __u8 dst_addr6[16], spoof_net6[16];
const volatile __u32 sport_base, sport_count;

/* Written by the loader before each run, read by it after: one generator
 * runs on one CPU, so no atomics. The program paces itself: every call
 * before a SYN is due costs only a drop, so a long BPF_PROG_TEST_RUN spins
 * at the rate given, with no burst per call (each call costs the kernel
 * milliseconds of set-up, so calls must be few and long). */
__u64 interval_ns;   /* between two SYNs; 0: send on every call */
__u64 next_ns;       /* when the next SYN is due */
__u64 late_ns;       /* a SYN later than this is skipped, not caught up */
__u64 end_ns;        /* from then on, nothing is sent */
__u64 max_sent;      /* nor after this many */
__u64 sent, skipped; /* SYNs sent; SYNs skipped while descheduled */

static __always_inline __u16 csum_fold(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* Whether a SYN is due now (the pacing, the deadline, the count). */
static __always_inline int syn_due(void)
{
	__u64 now = bpf_ktime_get_ns();

	if (now >= end_ns || sent >= max_sent)
		return 0;
	if (interval_ns) {
		if (now < next_ns)
			return 0;
		if (now - next_ns > late_ns) {
			skipped += (now - next_ns) / interval_ns;
			next_ns = now;
		}
		next_ns += interval_ns;
	}
	return 1;
}

/* The Ethernet header of frame F (a struct floodgen_frame or _frame6). */
#define WRITE_ETH(f, proto)						\
	do {								\
		for (int j_ = 0; j_ < 6; j_++) {			\
			(f)->eth.h_dest[j_] = dst_mac[j_];		\
			(f)->eth.h_source[j_] = src_mac[j_];		\
		}							\
		(f)->eth.h_proto = bpf_htons(proto);			\
	} while (0)

/* F's TCP header and MSS option for SYN number N; the checksum is left 0. */
#define WRITE_SYN(f, n)							\
	do {								\
		__builtin_memset(&(f)->tcp, 0, sizeof((f)->tcp));	\
		(f)->tcp.source = bpf_htons((__u16)(sport_base +	\
			(__u32)((n) / (spoof_host_mask + 1ULL)) % sport_count)); \
		(f)->tcp.dest = dst_port;				\
		(f)->tcp.seq = bpf_htonl((__u32)((n) * 2654435761ULL));	\
		(f)->tcp.doff = (sizeof((f)->tcp) + sizeof((f)->mss)) / 4; \
		(f)->tcp.syn = 1;					\
		(f)->tcp.window = bpf_htons(64240);			\
		(f)->mss[0] = 2; /* kind MSS, length 4, 1460 */		\
		(f)->mss[1] = 4;					\
		(f)->mss[2] = 1460 >> 8;				\
		(f)->mss[3] = 1460 & 0xff;				\
	} while (0)

SEC("xdp")
int floodgen_syn(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct floodgen_frame *f = data;
	__u32 host, sum = 0;
	__u16 *w;
	__u64 n;
	int i;

	if (!syn_due())
		return XDP_DROP;
	if ((void *)(f + 1) > end)
		return XDP_ABORTED; /* the loader hands frames of this size */
	n = sent++;
	host = (__u32)n & spoof_host_mask;
	WRITE_ETH(f, 0x0800);

	f->ip.version = 4;
	f->ip.ihl = 5;
	f->ip.tos = 0;
	f->ip.tot_len = bpf_htons(sizeof(f->ip) + sizeof(f->tcp) + sizeof(f->mss));
	f->ip.id = bpf_htons((__u16)n);
	f->ip.frag_off = bpf_htons(0x4000); /* DF */
	f->ip.ttl = 64;
	f->ip.protocol = 6;
	f->ip.check = 0;
	/* Host 0 of the range is skipped: it is the network's own address. */
	f->ip.saddr = spoof_net | bpf_htonl(host ? host : 1);
	f->ip.daddr = dst_addr;
	w = (__u16 *)((__u8 *)f + sizeof(f->eth));
	for (i = 0; i < (int)(sizeof(f->ip) / 2); i++)
		sum += w[i];
	f->ip.check = csum_fold(sum);

	WRITE_SYN(f, n);

	/* Pseudo-header (addresses, protocol, TCP length), then the segment. */
	sum = (f->ip.saddr & 0xffff) + (f->ip.saddr >> 16) +
	      (f->ip.daddr & 0xffff) + (f->ip.daddr >> 16) +
	      bpf_htons(6) + bpf_htons(sizeof(f->tcp) + sizeof(f->mss));
	w = (__u16 *)((__u8 *)f + sizeof(f->eth) + sizeof(f->ip));
	for (i = 0; i < (int)((sizeof(f->tcp) + sizeof(f->mss)) / 2); i++)
		sum += w[i];
	f->tcp.check = csum_fold(sum);
	return XDP_TX;
}

SEC("xdp")
int floodgen_syn6(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	struct floodgen_frame6 *f = data;
	__u32 host, sum = 0;
	__u8 *src, *dst;
	__u16 *w;
	__u64 n;
	int i;

	if (!syn_due())
		return XDP_DROP;
	if ((void *)(f + 1) > end)
		return XDP_ABORTED; /* the loader hands frames of this size */
	n = sent++;
	host = (__u32)n & spoof_host_mask;
	/* Host 0 of the range is skipped, as in IPv4. */
	host = host ? host : 1;
	WRITE_ETH(f, 0x86DD);

	f->ip6.version = 6;
	f->ip6.priority = 0;
	f->ip6.flow_lbl[0] = 0;
	f->ip6.flow_lbl[1] = 0;
	f->ip6.flow_lbl[2] = 0;
	f->ip6.payload_len = bpf_htons(sizeof(f->tcp) + sizeof(f->mss));
	f->ip6.nexthdr = 6;
	f->ip6.hop_limit = 64;
	src = f->ip6.saddr.in6_u.u6_addr8;
	dst = f->ip6.daddr.in6_u.u6_addr8;
	for (i = 0; i < 12; i++)
		src[i] = spoof_net6[i];
	src[12] = spoof_net6[12] | (__u8)(host >> 24);
	src[13] = spoof_net6[13] | (__u8)(host >> 16);
	src[14] = spoof_net6[14] | (__u8)(host >> 8);
	src[15] = spoof_net6[15] | (__u8)host;
	for (i = 0; i < 16; i++)
		dst[i] = dst_addr6[i];

	WRITE_SYN(f, n);
	/* Pseudo-header (addresses, TCP length, next header), then the segment. */
	w = (__u16 *)src;
	for (i = 0; i < 16; i++) /* both addresses: 32 bytes */
		sum += w[i];
	sum += bpf_htons(sizeof(f->tcp) + sizeof(f->mss)) + bpf_htons(6);
	w = (__u16 *)((__u8 *)f + sizeof(f->eth) + sizeof(f->ip6));
	for (i = 0; i < (int)((sizeof(f->tcp) + sizeof(f->mss)) / 2); i++)
		sum += w[i];
	f->tcp.check = csum_fold(sum);
	return XDP_TX;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
