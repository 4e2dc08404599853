/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* floodgen.h - the frames the flood generator's XDP programs write and its
 * loader hands to BPF_PROG_TEST_RUN: Ethernet, IPv4 without options (or
 * IPv6 without extension headers), TCP with one MSS option. The includer provides the kernel's header structs
 * (vmlinux.h on the BPF side, <linux/...> headers in userspace). */
#ifndef SHEDD_FLOODGEN_H
#define SHEDD_FLOODGEN_H

struct floodgen_frame {
	struct ethhdr eth;
	struct iphdr ip;
	struct tcphdr tcp;
	__u8 mss[4];
} __attribute__((packed));

struct floodgen_frame6 {
	struct ethhdr eth;
	struct ipv6hdr ip6;
	struct tcphdr tcp;
	__u8 mss[4];
} __attribute__((packed));

#endif /* SHEDD_FLOODGEN_H */
