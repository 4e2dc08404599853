/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* syncheck.h - checks of a protected SYN before its class is charged: the
 * TCP checksum the kernel would verify (a SYN it drops costs no token and
 * gets no answer), and the reverse-path check of a source that claims a
 * class above the default class (a spoofed source must not spend the
 * tokens of the class it claims). Both are global functions, verified
 * once, that read the packet again from offsets the parser found.
 */
#ifndef SHEDD_SYNCHECK_H
#define SHEDD_SYNCHECK_H

/* Longest TCP segment whose checksum is checked: bpf_csum_diff() sums at
 * most 512 bytes, and the sum is taken over whole 32-bit words. A SYN
 * with more data (TCP Fast Open) is judged unchecked. */
#define CSUM_MAX_SEG 508

/* Room for the longest length the verifiers see (a 511 mask on what
 * follows the 20-byte header, and the zeros after it): Debian 12's do not
 * learn the tighter bound the code checks. */
struct csum_scratch {
	__u8 b[512 + 20 + 4 + 8];
};

/* Per CPU, off the stack; nothing is kept between packets. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct csum_scratch);
} csum_scratch SEC(".maps");

/* Verdicts of shedd_syn_csum(). */
enum csum_verdict {
	CSUM_OK = 0,        /* the checksum is right */
	CSUM_BAD = 1,       /* wrong: the kernel drops the SYN */
	CSUM_UNCHECKED = 2, /* not checked: a fragment, a long segment, or
			     * a checksum left to offload (see below) */
};

/* @sum: the pseudo-header and the segment; @pseudo: the pseudo-header
 * alone; @check: the segment's check field. */
static __always_inline int csum_verdict(__u64 sum, __u64 pseudo, __u16 check)
{
	if (csum_fold(sum) == 0)
		return CSUM_OK;
	/* Left to offload: the field is the folded pseudo-header sum. */
	if (check == (__u16)~csum_fold(pseudo))
		return CSUM_UNCHECKED;
	return CSUM_BAD;
}

/**
 * shedd_syn_csum() - check the TCP checksum of the SYN in @ctx.
 * @ctx, @l2_len, @l3_len, @flags: as for shedd_syncookie_reply()
 * @l4_len: the TCP segment's length, from the IP length fields
 * (@l2_len may be an inner packet's IP header offset: lens_bound_inner())
 *
 * A frame sent by a stack on this host (a veth peer: a container) may
 * carry a checksum left to offload (CHECKSUM_PARTIAL): its check field
 * holds the pseudo-header's sum, and the kernel trusts it. XDP cannot see
 * skb->ip_summed, so such a field is taken as unchecked, not as wrong: a
 * sender forging it gets its SYN judged as before, never a free pass.
 *
 * Return: an enum csum_verdict.
 */
__noinline int shedd_syn_csum(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len, __u64 l4_len,
			      __u64 flags)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct csum_scratch *sc;
	struct tcphdr *tcp;
	__u32 zero = 0, len = (__u32)l4_len, extra, words, i;
	__u64 pseudo = 0;
	__s64 sum;
	__u16 check;

	lens_bound_inner(&l2_len, &l3_len);
	if (l4_len < sizeof(struct tcphdr) || l4_len > CSUM_MAX_SEG)
		return CSUM_UNCHECKED;
	sc = bpf_map_lookup_elem(&csum_scratch, &zero);
	if (!sc)
		return CSUM_UNCHECKED;
	tcp = data + l2_len + l3_len;
	if ((void *)(tcp + 1) > data_end)
		return CSUM_UNCHECKED;
	check = tcp->check;
	if (flags & CK_V6) {
		struct ipv6hdr *ip6 = data + l2_len;

		if ((void *)(ip6 + 1) > data_end)
			return CSUM_UNCHECKED;
		pseudo = csum_add_words(0, &ip6->saddr, 32);
	} else {
		struct iphdr *ip = data + l2_len;

		if ((void *)(ip + 1) > data_end)
			return CSUM_UNCHECKED;
		pseudo = csum_add_words(0, &ip->saddr, 8);
	}
	pseudo += bpf_htons(IPPROTO_TCP) + bpf_htons((__u16)len);

	/* A SYN of a header and no data (a Linux SYN's 40 bytes, a flood's
	 * 20 or 24), summed in place a word at a time: 32-bit words add up
	 * to the same one's-complement sum as 16-bit ones. Others are copied
	 * and summed by the helper. */
	if (len <= TCP_MAX_HLEN && !(len & 3)) {
		const __u32 *w = (const void *)tcp;
		__u64 seg = pseudo;
		int cut = 0;

#pragma unroll
		for (i = 0; i < TCP_MAX_HLEN / 4; i++) {
			if (i * 4 < len) {
				if ((void *)(w + i + 1) > data_end)
					cut = 1;
				else
					seg += w[i];
			}
		}
		if (cut)
			return CSUM_UNCHECKED;
		return csum_verdict(seg, pseudo, check);
	}

	/* len in [20, CSUM_MAX_SEG] for every verifier: a bounded excess
	 * over the TCP header. */
	extra = len - sizeof(struct tcphdr);
	verifier_bound(extra, 511);
	if (extra > CSUM_MAX_SEG - sizeof(struct tcphdr))
		return CSUM_UNCHECKED;
	len = extra + sizeof(struct tcphdr);
	if (bpf_xdp_load_bytes(ctx, l2_len + l3_len, sc->b, len))
		return CSUM_UNCHECKED;
	/* Zeros after an odd tail add nothing to the sum. */
#pragma unroll
	for (i = 0; i < 3; i++) {
		__u32 j = len + i;

		verifier_bound(j, 1023);
		if (j < sizeof(sc->b))
			sc->b[j] = 0;
	}
	/* Whole words: extra rounded up, and the header's 20 bytes. */
	words = ((extra + 3) & ~3U);
	verifier_bound(words, 511);
	if (words > CSUM_MAX_SEG - sizeof(struct tcphdr))
		return CSUM_UNCHECKED;
	words += sizeof(struct tcphdr);
	sum = bpf_csum_diff(NULL, 0, (__be32 *)sc->b, words, 0);
	if (sum < 0)
		return CSUM_UNCHECKED;
	return csum_verdict(pseudo + (__u32)sum, pseudo, check);
}

/* Verdicts of shedd_src_route(). */
#define SRC_IFINDEX_SHIFT 32
enum src_verdict {
	SRC_OK = 0,        /* routed back through the interface it came in on */
	SRC_FAILED = 1,    /* no route back, a local or broadcast source, one
			    * through another interface, or headers it
			    * cannot read */
	SRC_UNCHECKED = 2, /* the kernel could not look it up (forwarding off
			    * on the interface, or an error) */
};

/**
 * shedd_src_route() - the reverse-path check of the SYN in @ctx: would the
 * reply leave by the interface the SYN came in on? As rp_filter=1
 * (fib_validate_source()), with the reversed flow looked up in the
 * kernel's FIB (bpf_fib_lookup()). Unlike rp_filter, of a multipath route
 * only the nexthop the flow hashes to is seen.
 * @ctx, @l2_len, @l3_len, @flags: as for shedd_syncookie_reply(); @l2_len
 *	may be an inner packet's IP header offset (lens_bound_inner()), and
 *	@flags >> SRC_IFINDEX_SHIFT the device it comes in on, a tunnel's
 *	(0: the frame's)
 *
 * Return: an enum src_verdict.
 */
__noinline int shedd_src_route(struct xdp_md *ctx, __u64 l2_len, __u64 l3_len, __u64 flags)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct bpf_fib_lookup fl = {};
	struct tcphdr *tcp;
	__u32 ifindex = (__u32)(flags >> SRC_IFINDEX_SHIFT);
	long rc;

	if (!ifindex)
		ifindex = ctx->ingress_ifindex;
	/* Headers it cannot read are no check: the SYN is judged as the
	 * default class (SRC_FAILED), never left the class it claims. */
	lens_bound_inner(&l2_len, &l3_len);
	if (flags & CK_V6) {
		struct ipv6hdr *ip6 = data + l2_len;

		if ((void *)(ip6 + 1) > data_end)
			return SRC_FAILED;
		tcp = (void *)ip6 + l3_len;
		if ((void *)(tcp + 1) > data_end)
			return SRC_FAILED;
		fl.family = 10; /* AF_INET6 */
		__builtin_memcpy(fl.ipv6_src, &ip6->daddr, 16);
		__builtin_memcpy(fl.ipv6_dst, &ip6->saddr, 16);
		fl.sport = tcp->dest;
		fl.dport = tcp->source;
	} else {
		struct iphdr *ip = data + l2_len;

		if ((void *)(ip + 1) > data_end)
			return SRC_FAILED;
		tcp = (void *)ip + l3_len;
		if ((void *)(tcp + 1) > data_end)
			return SRC_FAILED;
		fl.family = 2; /* AF_INET */
		fl.ipv4_src = ip->daddr;
		fl.ipv4_dst = ip->saddr;
		fl.sport = tcp->dest;
		fl.dport = tcp->source;
	}
	fl.l4_protocol = IPPROTO_TCP;
	fl.ifindex = ifindex;
	rc = bpf_fib_lookup(ctx, &fl, sizeof(fl), 0);
	switch (rc) {
	case BPF_FIB_LKUP_RET_SUCCESS:
	case BPF_FIB_LKUP_RET_NO_NEIGH:
		return fl.ifindex == ifindex ? SRC_OK : SRC_FAILED;
	case BPF_FIB_LKUP_RET_BLACKHOLE:
	case BPF_FIB_LKUP_RET_UNREACHABLE:
	case BPF_FIB_LKUP_RET_PROHIBIT:
	case BPF_FIB_LKUP_RET_NOT_FWDED: /* local, broadcast: a martian */
		return SRC_FAILED;
	}
	return SRC_UNCHECKED;
}

#endif /* SHEDD_SYNCHECK_H */
