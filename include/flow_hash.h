/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* flow_hash.h - the hash of a TCP flow's addresses and ports, compiled by
 * the BPF programs (mss_cache, proven) and by the tests, which must
 * agree with them on every bit. Not keyed: a
 * collision, made on purpose or not, costs a flow its MSS
 * or a verdict kept for it.
 *
 * The addresses are words as they lie in the packet (network order), the
 * ports the two bytes as they lie in the packet, read as a __u16.
 */
#ifndef SHEDD_FLOW_HASH_H
#define SHEDD_FLOW_HASH_H

static inline __attribute__((always_inline)) __u32 flow_mix(__u32 h, __u32 v)
{
	h ^= v;
	h *= 0x9e3779b1U;
	return h ^ (h >> 15);
}

/* @words: 1 for IPv4, 4 for IPv6. */
static inline __attribute__((always_inline)) __u32
flow_hash(const __u32 *saddr, const __u32 *daddr, int words,
	  __u16 sport, __u16 dport)
{
	__u32 h = 0x5edd;
	int i;

#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < 4; i++) {
		if (i >= words)
			break;
		h = flow_mix(h, saddr[i]);
		h = flow_mix(h, daddr[i]);
	}
	return flow_mix(h, ((__u32)sport << 16) | dport);
}

#endif
