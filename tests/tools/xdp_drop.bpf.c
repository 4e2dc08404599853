// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp_drop.bpf.c - drops every packet: the floor the benchmark measures
 * shedd's verified paths against. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	return XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
