/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* config_maps.h - the maps userspace configures, shared by the XDP program
 * and the tc hand-off program (the daemon gives both the same maps), and
 * the classification of a source address by them.
 */
#ifndef SHEDD_CONFIG_MAPS_H
#define SHEDD_CONFIG_MAPS_H

/* Two records: the daemon writes the one not in use, then flips
 * settings_cur (user/maps/settings.c). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SETTINGS_SLOTS);
	__type(key, __u32);
	__type(value, struct shedd_config);
} settings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} settings_cur SEC(".maps");

/* The record this CPU's packet reads: chosen once per packet by
 * settings_begin(), so that the global functions it calls read the same
 * one. Holds nothing between packets: unpinned, each program its own. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} settings_pkt SEC(".maps");

/* settings_cur whole: the entry in use (SHEDD_CUR_SLOT) and the flags
 * beside it (SHEDD_CUR_PORT_LIMITS). */
static __always_inline __u32 settings_cur_word(void)
{
	__u32 zero = 0, *cur = bpf_map_lookup_elem(&settings_cur, &zero);

	return cur ? *cur : 0;
}

/* The entry of settings in use now. */
static __always_inline __u32 settings_slot(void)
{
	return settings_cur_word() & SHEDD_CUR_SLOT;
}

/* The settings record in use, for the packet now starting; NULL before the
 * daemon wrote one. *@flags: the flags of settings_cur read with it. */
static __always_inline struct shedd_config *settings_begin_flags(__u32 *flags)
{
	__u32 zero = 0, word = settings_cur_word(), slot = word & SHEDD_CUR_SLOT;
	__u32 *pin = bpf_map_lookup_elem(&settings_pkt, &zero);

	if (pin)
		*pin = slot;
	*flags = word & ~SHEDD_CUR_SLOT;
	return bpf_map_lookup_elem(&settings, &slot);
}

static __always_inline struct shedd_config *settings_begin(void)
{
	__u32 flags;

	return settings_begin_flags(&flags);
}

/* The same record for a path that calls no global function, which would
 * read it again with settings_again(): nothing is pinned for the packet. */
static __always_inline struct shedd_config *settings_peek(void)
{
	__u32 slot = settings_slot();

	return bpf_map_lookup_elem(&settings, &slot);
}

/* The record settings_begin() chose for this packet. */
static __always_inline struct shedd_config *settings_again(void)
{
	__u32 zero = 0, slot = 0, *pin = bpf_map_lookup_elem(&settings_pkt, &zero);

	if (pin)
		slot = *pin & 1;
	return bpf_map_lookup_elem(&settings, &slot);
}

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u16);
	__type(value, __u8);
} ports SEC(".maps");

#include "prefix_maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MSS_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} mss_cache SEC(".maps");

#include "flow_hash.h"

/* The key of the flow hash, as the SipHash state sip_init() makes of it:
 * set before load by the daemon from the pinned flow_key map (the program
 * never reads the map: a constant of the program costs no lookup per
 * packet). The same in every program of a boot: an adopting, restarted or
 * upgraded daemon loads the key it finds. */
const volatile __u64 flow_sip[4] = {}; /* v0, v1, v2, v3 */

/* The key's home between programs: written by the daemon, pinned. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_flow_key);
} flow_key SEC(".maps");

/* The keyed hash of a flow (include/flow_hash.h): @addrs holds the source
 * address, then the destination address (as IP headers and struct
 * bpf_sock_tuple do), @words 32-bit words each; @ports the source port
 * << 16 | the destination port, as they lie in the packet. A function of
 * its own (a frame of 32 bytes): the hash needs most registers, and its
 * callers, the global functions, would spill theirs around it inline,
 * each frame deeper by as much; shedd_refuse(), the deepest, is handed the
 * hash instead. */
static __noinline __u32 flow_hash_at(const __u32 *addrs, int words, __u32 ports)
{
	/* Read as volatile: the values are the daemon's, not the zeros
	 * the object holds. */
	const struct sip_state init = { flow_sip[0], flow_sip[1], flow_sip[2], flow_sip[3] };

	if (words == 4)
		return flow_hash_from(&init, addrs, addrs + 4, 4, ports >> 16, (__u16)ports);
	return flow_hash_from(&init, addrs, addrs + 1, 1, ports >> 16, (__u16)ports);
}

/* The last verdict on each flow that proved its address: written by the
 * XDP program (admitted, refused, charged at its SYN) and the tc hand-off
 * (assigned), both on one clock, clock_coarse_ns() (clock.h). It is also how XDP tells the tc hand-off what it decided on
 * the very ACK the hand-off sees next: XDP metadata would say it per
 * packet, but many drivers carry none (bpf_xdp_adjust_meta() fails on
 * sfc, qede, vmxnet3, gve, netvsc, xen-netfront in 6.18). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROVEN_SLOTS);
	__type(key, __u32);
	__type(value, struct shedd_proven);
} proven SEC(".maps");

/* The flow hash of the IPv4 or IPv6 segment in the tuple @t. */
static __always_inline __u32 tuple_hash(const struct bpf_sock_tuple *t, int v6)
{
	if (v6)
		return flow_hash_at(t->ipv6.saddr, 4,
				    (__u32)t->ipv6.sport << 16 | t->ipv6.dport);
	return flow_hash_at(&t->ipv4.saddr, 1, (__u32)t->ipv4.sport << 16 | t->ipv4.dport);
}

/* Verdicts on a proven flow (the stamp's low 3 bits). */
#define FLOW_ADMITTED 1U    /* charged and passed by XDP: the kernel's own
			     * answer (its SYN was charged), or a tunnel's */
#define FLOW_REFUSED 2U     /* refused with a RST by XDP */
#define FLOW_ASSIGNED 3U    /* given its request socket by the tc hand-off */
#define FLOW_SYN_CHARGED 4U /* its SYN charged and passed by XDP: the
			     * kernel answers it, with a cookie of its own
			     * under tcp_syncookies=2 */
#define FLOW_COOKIE 5U      /* a cookie ACK charged and passed by XDP, its
			     * SYN not passed to the kernel: the one verdict
			     * the tc hand-off gives a request socket to */
#define FLOW_VERDICT_MASK 7U

/* The verdict kept for the flow hashed @h that the segment with sequence and
 * acknowledgment numbers @seq and @ack (network order) follows at @now_ns,
 * or 0. An ACK's verdict binds the segments that carry its
 * acknowledgment number and a sequence number up to PROVEN_SEQ_SPAN past
 * its own: admitted or assigned for PROVEN_REPEAT_UNITS, refused for
 * PROVEN_HOLD_UNITS. A SYN's binds the one ACK of sequence number ISN + 1
 * for PROVEN_HOLD_UNITS. The time is kept in 29 bits: its age is taken
 * modulo 2^29. */
static __always_inline __u32 proven_get(__u32 h, __u64 now_ns, __u32 seq, __u32 ack)
{
	__u32 slot = h % PROVEN_SLOTS;
	__u32 now = (__u32)(now_ns >> 20), v, age;
	struct shedd_proven *e = bpf_map_lookup_elem(&proven, &slot);

	if (!e || !e->stamp || e->hash != h)
		return 0;
	v = e->stamp & FLOW_VERDICT_MASK;
	age = (now - (e->stamp >> 3)) & PROVEN_TIME_MASK;
	if (v == FLOW_SYN_CHARGED)
		return age < PROVEN_HOLD_UNITS && seq == e->seq ? v : 0;
	if (ack != e->ack || bpf_ntohl(seq) - bpf_ntohl(e->seq) >= PROVEN_SEQ_SPAN)
		return 0;
	if (age >= (v == FLOW_REFUSED ? PROVEN_HOLD_UNITS : PROVEN_REPEAT_UNITS))
		return 0;
	return v;
}

static __always_inline void proven_put(__u32 h, __u32 verdict, __u64 now_ns, __u32 seq,
				       __u32 ack)
{
	__u32 slot = h % PROVEN_SLOTS;
	__u32 now = (__u32)(now_ns >> 20);
	struct shedd_proven *e = bpf_map_lookup_elem(&proven, &slot);

	if (!e)
		return;
	e->hash = h;
	e->seq = seq;
	e->ack = ack;
	e->stamp = ((now & PROVEN_TIME_MASK) << 3) | verdict;
}

/* An inbound RST or FIN of the flow hashed @h: no later segment follows the
 * verdict kept for it (a connection made and closed leaves nothing for a
 * copy of its ACK to repeat). */
static __always_inline void proven_end(__u32 h)
{
	__u32 slot = h % PROVEN_SLOTS;
	struct shedd_proven *e = bpf_map_lookup_elem(&proven, &slot);

	if (e && e->hash == h && (e->stamp & FLOW_VERDICT_MASK) != FLOW_REFUSED)
		e->stamp = 0;
}

/* The class of an IPv4 source (network order) or of an IPv6 source (16
 * bytes): the longest matching prefix, else the default class. */
static __always_inline __u32 class_of(const struct shedd_config *cfg, __u32 *found)
{
	if (found && *found < SHEDD_NR_CLASSES)
		return *found;
	if (cfg->default_class < SHEDD_NR_CLASSES)
		return cfg->default_class;
	return SHEDD_SHEDDABLE;
}

static __always_inline __u32 class_v4(const struct shedd_config *cfg, __be32 saddr)
{
	struct shedd_lpm_v4 key = { .prefixlen = 32 };

	__builtin_memcpy(key.addr, &saddr, 4);
	return class_of(cfg, bpf_map_lookup_elem(&prefix_v4, &key));
}

static __always_inline __u32 class_v6(const struct shedd_config *cfg, const void *saddr)
{
	struct shedd_lpm_v6 key = { .prefixlen = 128 };

	__builtin_memcpy(key.addr, saddr, 16);
	return class_of(cfg, bpf_map_lookup_elem(&prefix_v6, &key));
}

#endif /* SHEDD_CONFIG_MAPS_H */
