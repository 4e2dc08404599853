/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tunnels.h - the tunnels that end on this host, as the XDP program needs
 * them (bpf/tunnel.h): the kinds of tunnel device present and up, the UDP
 * ports of the VXLAN and Geneve devices, and the addresses an encapsulated
 * packet may be sent to (the host's own, their broadcasts, the VXLAN
 * groups). Read over rtnetlink in the network namespace shedd runs in;
 * changes are watched on a netlink socket and read again on the next tick.
 */
#ifndef SHEDD_TUNNELS_H
#define SHEDD_TUNNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "shedd.h"

struct tun_found {
	__u32 kinds;                          /* SHEDD_TUN_* */
	__u16 udp_port[MAX_TUN_UDP_PORTS];    /* host order */
	__u8 udp_kind[MAX_TUN_UDP_PORTS];     /* enum shedd_tun_udp */
	unsigned int nr_ports;
	unsigned int ports_over;              /* UDP tunnels past MAX_TUN_UDP_PORTS */
	unsigned int gpe;                     /* VXLAN-GPE devices: not judged */
	struct shedd_tun_addr local[MAX_TUN_LOCAL];
	unsigned int nr_local;
	unsigned int local_over;              /* addresses past MAX_TUN_LOCAL */
};

/* The SHEDD_TUN_* bits of a device of rtnetlink kind @kind ("ipip", "sit",
 * "ip6tnl", "gre", "gretap", "ip6gre", "ip6gretap"), whose IFLA_IPTUN_PROTO
 * is @proto (-1: not given): 0 for another kind. Pure. */
__u32 tun_kind_bits(const char *kind, int proto);

/* Add UDP port @port of @kind (enum shedd_tun_udp) once; counted in
 * ports_over when the table is full. Pure. */
void tun_add_port(struct tun_found *f, __u16 port, __u8 kind);

/* Add a local address (@len 4 or 16 bytes, network order) once. Pure. */
void tun_add_local(struct tun_found *f, const void *addr, size_t len);

/* Fill @f from the links and addresses of this network namespace.
 * 0 or a negative errno. */
int tun_scan(struct tun_found *f);

/* A netlink socket that hears of link and address changes, non-blocking:
 * its fd, or a negative errno. */
int tun_watch_open(void);

/* Drain @fd: true when a link or an address changed since the last call
 * (or messages were lost), so tun_scan() is due. */
bool tun_watch_changed(int fd);

/* "ipip gre vxlan:4789" into @buf: what @f judges. */
void tun_describe(const struct tun_found *f, char *buf, size_t len);

#endif /* SHEDD_TUNNELS_H */
