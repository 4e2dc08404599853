// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* handoff.bpf.c - PLACEHOLDER of the tc ingress hand-off of verified
 * admission: it passes every packet and counts nothing. The real program
 * checks a returning cookie and gives the listener a request socket with
 * bpf_sk_assign_tcp_reqsk(). It shares settings, ports, prefix_v4 and
 * prefix_v6 with the XDP program (the daemon reuses those maps' fds), so
 * their definitions must stay those of maps.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "shedd.h"

#define TC_ACT_OK 0

char LICENSE[] SEC("license") = "Dual BSD/GPL";

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
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct shedd_handoff_stats);
} handoff_stats SEC(".maps");

SEC("tc")
int shedd_handoff(struct __sk_buff *skb)
{
	return TC_ACT_OK;
}
