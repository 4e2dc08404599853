// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* prefix_maps.h - the source prefixes' classes (userspace writes them): the
 * XDP program classifies SYNs with them, and the sojourn probes the peers
 * of the connections they count, on the same maps (the daemon hands the
 * XDP program's fds to the probes before their load, so both definitions
 * must be this one).
 */
#ifndef SHEDD_PREFIX_MAPS_H
#define SHEDD_PREFIX_MAPS_H

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

#endif /* SHEDD_PREFIX_MAPS_H */
