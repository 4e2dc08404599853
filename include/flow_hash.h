/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* flow_hash.h - the hash of a TCP flow's addresses and ports, compiled by
 * the BPF programs (mss_cache, proven) and by the tests, which must agree
 * with them on every bit.
 *
 * Keyed: SipHash-1-3 (Aumasson and Bernstein; one compression round per
 * 64-bit word, three to finish) under the key in the flow_key map, which
 * the daemon draws at random once per boot. Without the key a sender
 * cannot choose sources that collide with another flow (and inherit the
 * verdict kept for it), nor invert the hash.
 *
 * The message is the flow's 32-bit words as they lie in the packet
 * (network order), read as host-order __u32 and taken two at a time, low
 * word first: the source address, the destination address, then the
 * ports (source << 16 | destination, each the two bytes as they lie in
 * the packet, read as a __u16). On a little-endian host that is SipHash
 * of the bytes of those words in memory order (12 bytes for IPv4, 36 for
 * IPv6).
 */
#ifndef SHEDD_FLOW_HASH_H
#define SHEDD_FLOW_HASH_H

/* Each word is read where it is absorbed: a BPF program has ten
 * registers, and words read ahead would spill to the stack. */
#ifdef __bpf__
#define FLOW_HASH_BARRIER(p) asm volatile("" : : "r"(p) : "memory")
#else
#define FLOW_HASH_BARRIER(p) do { } while (0)
#endif

#define SIP_ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))

struct sip_state {
	__u64 v0, v1, v2, v3;
};

static inline __attribute__((always_inline)) void sip_round(struct sip_state *s)
{
	s->v0 += s->v1;
	s->v1 = SIP_ROTL(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = SIP_ROTL(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = SIP_ROTL(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = SIP_ROTL(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = SIP_ROTL(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = SIP_ROTL(s->v2, 32);
}

static inline __attribute__((always_inline)) void sip_init(struct sip_state *s, __u64 k0,
							    __u64 k1)
{
	s->v0 = k0 ^ 0x736f6d6570736575ULL;
	s->v1 = k1 ^ 0x646f72616e646f6dULL;
	s->v2 = k0 ^ 0x6c7967656e657261ULL;
	s->v3 = k1 ^ 0x7465646279746573ULL;
}

/* Absorb the 64-bit message word @m with @c rounds. */
static inline __attribute__((always_inline)) void sip_word(struct sip_state *s, __u64 m, int c)
{
	int i;

	s->v3 ^= m;
#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < c; i++)
		sip_round(s);
	s->v0 ^= m;
}

/* Finish with @d rounds: the 64-bit hash. */
static inline __attribute__((always_inline)) __u64 sip_final(struct sip_state *s, int d)
{
	int i;

	s->v2 ^= 0xff;
#ifdef __clang__
#pragma unroll
#endif
	for (i = 0; i < d; i++)
		sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

/* The hash from the state @init that sip_init() made of the key (the BPF
 * programs are given that state, not the key). */
static inline __attribute__((always_inline)) __u32
flow_hash_from(const struct sip_state *init, const __u32 *saddr, const __u32 *daddr, int words,
	       __u16 sport, __u16 dport)
{
	/* The last word carries the message length in its top byte: 36
	 * bytes for IPv6, 12 for IPv4. */
	__u64 last = (__u64)(words == 4 ? 36 : 12) << 56 | (__u32)sport << 16 | dport, h;
	struct sip_state s = *init;

	if (words == 4) {
		sip_word(&s, saddr[0] | (__u64)saddr[1] << 32, 1);
		FLOW_HASH_BARRIER(saddr);
		sip_word(&s, saddr[2] | (__u64)saddr[3] << 32, 1);
		FLOW_HASH_BARRIER(daddr);
		sip_word(&s, daddr[0] | (__u64)daddr[1] << 32, 1);
		FLOW_HASH_BARRIER(daddr);
		sip_word(&s, daddr[2] | (__u64)daddr[3] << 32, 1);
	} else {
		sip_word(&s, saddr[0] | (__u64)daddr[0] << 32, 1);
	}
	sip_word(&s, last, 1);
	h = sip_final(&s, 3);
	return (__u32)(h ^ (h >> 32));
}

/* @words: 1 for IPv4, 4 for IPv6. The 64-bit SipHash-1-3 under the key
 * (@k0, @k1), folded to 32 bits. */
static inline __attribute__((always_inline)) __u32
flow_hash_keyed(__u64 k0, __u64 k1, const __u32 *saddr, const __u32 *daddr, int words,
		__u16 sport, __u16 dport)
{
	struct sip_state init;

	sip_init(&init, k0, k1);
	return flow_hash_from(&init, saddr, daddr, words, sport, dport);
}

#ifndef __bpf__
/* Give a program's .rodata (its flow_sip[4]) the hash state of the key
 * @k (struct shedd_flow_key): the programs hash with the key as constants
 * of theirs (bpf/config_maps.h). For the daemon and the tests. */
#define SET_FLOW_SIP(rodata, k)                                              \
	do {                                                                 \
		struct sip_state st_;                                        \
									     \
		sip_init(&st_, (k).k0, (k).k1);                              \
		(rodata)->flow_sip[0] = st_.v0;                              \
		(rodata)->flow_sip[1] = st_.v1;                              \
		(rodata)->flow_sip[2] = st_.v2;                              \
		(rodata)->flow_sip[3] = st_.v3;                              \
	} while (0)
#endif

#endif
