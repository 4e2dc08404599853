// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdp_pass.bpf.c - passes every packet. The testbed attaches it to the
 * client's veth: veth hands XDP_TX frames (shedd's RSTs) only to a peer that
 * runs an XDP program of its own. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
