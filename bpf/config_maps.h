/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* config_maps.h - the maps userspace configures, shared by the XDP program
 * and the tc hand-off program (the daemon gives both the same maps), and
 * the classification of a source address by them.
 */
#ifndef SHEDD_CONFIG_MAPS_H
#define SHEDD_CONFIG_MAPS_H

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_config);
} settings SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PORTS);
	__type(key, __u16);
	__type(value, __u8);
} ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MAX_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct shedd_lpm_v4);
	__type(value, __u32);
} prefix_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, MAX_PREFIXES);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct shedd_lpm_v6);
	__type(value, __u32);
} prefix_v6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MSS_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} mss_cache SEC(".maps");

#include "flow_hash.h"

/* The last verdict on each flow that proved its address: written by the
 * XDP program (admitted, refused) and the tc hand-off (assigned). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROVEN_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} proven SEC(".maps");

/* The flow hash of the IPv4 or IPv6 segment in the tuple @t. */
static __always_inline __u32 tuple_hash(const struct bpf_sock_tuple *t, int v6)
{
	if (v6)
		return flow_hash(t->ipv6.saddr, t->ipv6.daddr, 4, t->ipv6.sport, t->ipv6.dport);
	return flow_hash(&t->ipv4.saddr, &t->ipv4.daddr, 1, t->ipv4.sport, t->ipv4.dport);
}

/* Verdicts on a proven flow (the value's low 2 bits). The segments that
 * follow its ACK closely still carry a valid cookie until the kernel has
 * made the connection (or for good, after a RST). */
#define FLOW_ADMITTED 1U /* charged and passed by XDP */
#define FLOW_REFUSED 2U  /* refused with a RST by XDP */
#define FLOW_ASSIGNED 3U /* given its request socket by the tc hand-off */

/* The verdict recorded for the flow of @t in the last PROVEN_HOLD_UNITS
 * before @now_ns, or 0. The time is kept in 30 bits: its age is taken
 * modulo 2^30. */
static __always_inline __u32 proven_get(const struct bpf_sock_tuple *t, int v6, __u64 now_ns)
{
	__u32 h = tuple_hash(t, v6), slot = h % PROVEN_SLOTS;
	__u32 now = (__u32)(now_ns >> 20), v;
	__u64 *e = bpf_map_lookup_elem(&proven, &slot);

	if (!e || !*e || (__u32)(*e >> 32) != h)
		return 0;
	v = (__u32)*e;
	if (((now - (v >> 2)) & PROVEN_TIME_MASK) >= PROVEN_HOLD_UNITS)
		return 0;
	return v & 3;
}

static __always_inline void proven_put(const struct bpf_sock_tuple *t, int v6, __u32 verdict,
				       __u64 now_ns)
{
	__u32 h = tuple_hash(t, v6), slot = h % PROVEN_SLOTS;
	__u32 now = (__u32)(now_ns >> 20);
	__u64 *e = bpf_map_lookup_elem(&proven, &slot);

	if (e)
		*e = ((__u64)h << 32) | ((now & PROVEN_TIME_MASK) << 2) | verdict;
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
