/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* maps.h - the maps of the XDP program. Layouts come from include/shedd.h.
 * Userspace writes settings, broadcast, ports, prefix_v4, prefix_v6, rates, lease,
 * port_limit, ctl_state, ctl_cmd, manual_v4, manual_v6, daemon_stats and layout; the
 * program writes reserve, buckets, tun_reserve, tun_buckets, port_reserve,
 * port_buckets, stats, syn_checks, rst_budget, cookie_budget and refresh. The daemon
 * pins every map by name.
 */
#ifndef SHEDD_MAPS_H
#define SHEDD_MAPS_H

#include "config_maps.h"

/* Written by userspace only (struct shedd_broadcast). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_port_set);
} port_set SEC(".maps");

/* Is destination port @port (host order) protected? Without the map's
 * entry the program cannot tell: it protects nothing, as before the
 * daemon configures it. */
static __always_inline int port_protected(const struct shedd_config *cfg, __u16 port)
{
	__u32 zero = 0;
	struct shedd_port_set *ps;

	if (cfg->all_ports)
		return 1;
	ps = bpf_map_lookup_elem(&port_set, &zero);
	return ps && shedd_port_set_has(ps, port);
}

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_broadcast);
} broadcast SEC(".maps");

/* One rate record and one reserve per class, shared by every CPU and each
 * guarded by its own spin lock; a CPU takes them only to borrow a batch of
 * tokens (token_bucket.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SHEDD_NR_CLASSES);
	__type(key, __u32);
	__type(value, struct shedd_rate);
} rates SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SHEDD_NR_CLASSES);
	__type(key, __u32);
	__type(value, struct shedd_reserve);
} reserve SEC(".maps");

/* The daemon's lease on the rates (include/lease.h): its heartbeat, and
 * where each class climbs once the heartbeat is older than the lease. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_lease);
} lease SEC(".maps");

/* The ports with a limit of their own (include/shedd.h, "Port limits"):
 * the daemon's rate record of each, the shared bucket of its slot and each
 * CPU's cache of it, as a class has. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PORT_LIMITS);
	__type(key, __u16);
	__type(value, struct shedd_port_limit);
} port_limit SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_PORT_LIMITS);
	__type(key, __u32);
	__type(value, struct shedd_reserve);
} port_reserve SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MAX_PORT_LIMITS);
	__type(key, __u32);
	__type(value, struct shedd_port_bucket);
} port_buckets SEC(".maps");

/* The tunnel class space (include/shedd.h): the same per-class reserve
 * and per-CPU caches again, for inner SYNs and ACKs, refilled at the
 * class's own rate record. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SHEDD_NR_CLASSES);
	__type(key, __u32);
	__type(value, struct shedd_reserve);
} tun_reserve SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SHEDD_NR_CLASSES);
	__type(key, __u32);
	__type(value, struct shedd_bucket);
} tun_buckets SEC(".maps");

/* Per-CPU: XDP runs in softirq on one CPU at a time, so these need no
 * atomics and no locks. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SHEDD_NR_CLASSES);
	__type(key, __u32);
	__type(value, struct shedd_bucket);
} buckets SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_stats);
} stats SEC(".maps");

/* What verified admission found of a SYN's listener (syncookie.h). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_syn_checks);
} syn_checks SEC(".maps");

/* The RST replies' own budget, per CPU, so a spoofed flood is not
 * reflected one for one. Rate and depth come from settings. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_rst_budget);
} rst_budget SEC(".maps");

/* The cookie SYN-ACKs' own budget, per CPU (verified admission): a
 * spoofed flood is reflected at most this fast. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_rst_budget);
} cookie_budget SEC(".maps");

/* When this CPU last refreshed a listener's cookie stamp, by port. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, REFRESH_SLOTS);
	__type(key, __u32);
	__type(value, struct shedd_refresh);
} refresh SEC(".maps");


/* The controller's state, for a restarted daemon; the program never reads
 * it, it lives here to be pinned with the rest and with BTF. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_ctl_state);
} ctl_state SEC(".maps");

/* What an operator asks of the daemon (shedctl rate pin), and the prefixes
 * an operator added (shedctl prefix add): read by the daemon, never by the
 * program; here to be pinned with the rest, with BTF. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_ctl_cmd);
} ctl_cmd SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_MANUAL_PREFIXES);
	__type(key, struct shedd_lpm_v4);
	__type(value, struct shedd_manual_prefix);
} manual_v4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_MANUAL_PREFIXES);
	__type(key, struct shedd_lpm_v6);
	__type(value, struct shedd_manual_prefix);
} manual_v6 SEC(".maps");

/* The daemon's own counters (Prometheus metrics that must survive a
 * restart); like ctl_state, pinned here with BTF, never read by the program. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_daemon_stats);
} daemon_stats SEC(".maps");

/* The sysctls the daemon changed and what it found (struct shedd_sysctls),
 * for the shedd that stops shedding to put back; never read by the program. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_sysctls);
} sysctls SEC(".maps");

/* The oldest layout version that may adopt these pins as they are
 * (SHEDD_LAYOUT_COMPAT), for the readers of older builds; never read by the
 * program. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_layout_compat);
} layout_compat SEC(".maps");

/* The version of the pinned layouts (SHEDD_LAYOUT_VERSION), for readers
 * and upgrades; never read by the program. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_layout);
} layout SEC(".maps");

#endif /* SHEDD_MAPS_H */
