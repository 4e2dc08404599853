/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tunnels.h - the tunnels that end on this host, as the XDP program needs
 * them (bpf/tunnel.h): the kinds of tunnel device present and up, the UDP
 * ports of the VXLAN and Geneve devices and of FOU and GUE (generic
 * netlink family "fou", which has no event: read again every
 * TUN_FOU_RESCAN_NS), and the addresses an encapsulated
 * packet may be sent to (the host's own, their broadcasts, the VXLAN
 * groups), and the devices that decapsulate what the program does not
 * open (tun_unjudged.h), to name them to the operator. Read over
 * rtnetlink in the network namespace shedd runs in;
 * changes are watched on a netlink socket and read again on the next tick.
 */
#ifndef SHEDD_TUNNELS_H
#define SHEDD_TUNNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <net/if.h>
#include <linux/types.h>

#include "shedd.h"
#include "tun_unjudged.h"

/* Decapsulating devices the program does not open, named one by one. */
#ifndef MAX_TUN_UNJUDGED
#define MAX_TUN_UNJUDGED 64
#endif

/* A device of a kind the program does not open (tun_unjudged.h). */
struct tun_unjudged_dev {
	__u32 ifindex;
	__u32 kind;                           /* enum tun_unjudged */
	char name[IF_NAMESIZE];
};

struct tun_found {
	__u32 kinds;                          /* SHEDD_TUN_* */
	__u16 udp_port[MAX_TUN_UDP_PORTS];    /* host order */
	__u8 udp_kind[MAX_TUN_UDP_PORTS];     /* enum shedd_tun_udp */
	__u8 udp_proto[MAX_TUN_UDP_PORTS];    /* SHEDD_UDP_FOU: its IP protocol */
	__u8 udp_family[MAX_TUN_UDP_PORTS];   /* 0: both; 4, 6: one family */
	unsigned int nr_ports;
	unsigned int ports_over;              /* UDP tunnels past MAX_TUN_UDP_PORTS */
	/* Devices up whose inner SYNs the program does not judge, by kind,
	 * and the first MAX_TUN_UNJUDGED of them by name. */
	unsigned int unjudged[TUN_UJ_NR];
	struct tun_unjudged_dev uj_dev[MAX_TUN_UNJUDGED];
	unsigned int nr_uj;
	struct shedd_tun_addr local[MAX_TUN_LOCAL];
	unsigned int nr_local;
	unsigned int local_over;              /* addresses past MAX_TUN_LOCAL */
	/* The devices by what the kernel looks them up by (tun_devs). */
	struct shedd_tun_key dev_key[MAX_TUN_DEVS];
	__u32 dev_ifindex[MAX_TUN_DEVS];
	unsigned int nr_devs;
	__u32 dev_kinds;  /* SHEDD_TUN_MATCH() of the kinds with a device read */
	__u32 dev_unread; /* ... of those with one that could not be read, or
			   * past MAX_TUN_DEVS: not matched (fail open) */
};

/* The SHEDD_TUN_* bits of a device of rtnetlink kind @kind ("ipip", "sit",
 * "ip6tnl", "gre", "gretap", "ip6gre", "ip6gretap"), whose IFLA_IPTUN_PROTO
 * is @proto (-1: not given): 0 for another kind. Pure. */
__u32 tun_kind_bits(const char *kind, int proto);

/* Add UDP port @port of @kind (enum shedd_tun_udp) once; counted in
 * ports_over when the table is full. Pure. */
void tun_add_port(struct tun_found *f, __u16 port, __u8 kind);

/* Add FOU or GUE port @port (@kind SHEDD_UDP_FOU carrying IP protocol
 * @proto, or SHEDD_UDP_GUE) of UDP over IPv4 (@family 4) or IPv6 (6)
 * once, as tun_add_port(). Pure. */
void tun_add_fou(struct tun_found *f, __u16 port, __u8 kind, __u8 proto, __u8 family);

/* Add a local address (@len 4 or 16 bytes, network order) once. Pure. */
void tun_add_local(struct tun_found *f, const void *addr, size_t len);

/* Add the device @ifindex of key @k (kind, flags, port, id, addresses as
 * tun_devs keeps them) once; a kind with a device past MAX_TUN_DEVS is
 * noted in dev_unread. Pure. */
void tun_add_dev(struct tun_found *f, const struct shedd_tun_key *k, __u32 ifindex);

/* Is @a (as tun_devs keeps addresses) an IPv4 or IPv6 multicast group? A
 * GRE device whose remote is one is looked up by it as its local address
 * (ip_tunnel_lookup(), ip6gre_tunnel_lookup()). Pure. */
bool tun_addr_multicast(const __u8 a[16]);

/* tun_config.match for @f: the kinds whose every device was read, and the
 * shapes of their keys. Pure. */
__u32 tun_match(const struct tun_found *f);

/* Count device @ifindex named @name of @kind (enum tun_unjudged), and
 * keep it by name while there is room. Pure. */
void tun_add_unjudged(struct tun_found *f, __u32 ifindex, const char *name, unsigned int kind);

/* Is device @d of @f new since @old (another ifindex, name or kind)? */
bool tun_unjudged_new(const struct tun_found *old, const struct tun_unjudged_dev *d);

struct nlmsghdr;
/* Add to @f what the RTM_NEWLINK message @h says: the kind of a tunnel
 * device that is up, its UDP port, and the device by what the kernel
 * looks it up by; a device of a kind the program does not open
 * (tun_unjudged.h) counted and named. Pure: tun_scan() feeds it the
 * dump. */
void tun_scan_link(struct tun_found *f, struct nlmsghdr *h);

/* Fill @f from the links and addresses of this network namespace.
 * 0 or a negative errno. */
int tun_scan(struct tun_found *f);

/* The devices MPLS is enabled on, under @root ("/proc/sys/net/mpls" of
 * this network namespace): when platform_labels is above 0, each device
 * whose conf/DEV/input is 1 (af_mpls.c takes MPLS frames on it and pops
 * the labels) counted and named as TUN_UJ_MPLS. 0 also without the
 * mpls_router module (no @root); a negative errno on another error. */
int tun_scan_mpls(struct tun_found *f, const char *root);

/* Do the MPLS devices under @root differ from those of @f? A failed read
 * says no. */
bool tun_mpls_changed(const struct tun_found *f, const char *root);

#define TUN_MPLS_ROOT "/proc/sys/net/mpls"

/* FOU ports, and MPLS settings, have no netlink event the daemon hears:
 * it asks again this often. */
#define TUN_FOU_RESCAN_NS 1000000000ULL

/* Add the FOU and GUE ports of this network namespace to @f. 0 (also
 * when the fou module is not loaded: no ports) or a negative errno. */
int tun_scan_fou(struct tun_found *f);

/* Do the FOU and GUE ports of this namespace differ from those of @f?
 * A failed read says no (what the program has is kept). */
bool tun_fou_changed(const struct tun_found *f);

/* A netlink socket that hears of link and address changes, non-blocking:
 * its fd, or a negative errno. */
int tun_watch_open(void);

/* Drain @fd: true when a link or an address changed since the last call
 * (or messages were lost), so tun_scan() is due. */
bool tun_watch_changed(int fd);

/* "ipip gre vxlan:4789 fou:5555/4 gue:5556" into @buf: what @f judges. */
void tun_describe(const struct tun_found *f, char *buf, size_t len);

#endif /* SHEDD_TUNNELS_H */
