// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tunnels.c - see tunnels.h. */
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <linux/if_tunnel.h>
#include <linux/if_addr.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "tunnels.h"

#define TUN_NL_BUF 65536

__u32 tun_kind_bits(const char *kind, int proto)
{
	/* IFLA_IPTUN_PROTO 0 is mode "any": both inner families. */
	if (!strcmp(kind, "ipip"))
		return SHEDD_TUN_IPIP;
	if (!strcmp(kind, "sit"))
		return proto == IPPROTO_IPIP ? SHEDD_TUN_IPIP :
		       proto == 0 ? SHEDD_TUN_SIT | SHEDD_TUN_IPIP : SHEDD_TUN_SIT;
	if (!strcmp(kind, "ip6tnl"))
		return proto == IPPROTO_IPIP ? SHEDD_TUN_4IN6 :
		       proto == 0 ? SHEDD_TUN_4IN6 | SHEDD_TUN_6IN6 : SHEDD_TUN_6IN6;
	if (!strcmp(kind, "gre"))
		return SHEDD_TUN_GRE;
	if (!strcmp(kind, "gretap"))
		return SHEDD_TUN_GRETAP;
	if (!strcmp(kind, "ip6gre"))
		return SHEDD_TUN_GRE6;
	if (!strcmp(kind, "ip6gretap"))
		return SHEDD_TUN_GRETAP6;
	return 0;
}

void tun_add_port(struct tun_found *f, __u16 port, __u8 kind)
{
	unsigned int i;

	if (!port)
		return;
	for (i = 0; i < f->nr_ports; i++)
		if (f->udp_port[i] == port && f->udp_kind[i] == kind)
			return;
	if (f->nr_ports == MAX_TUN_UDP_PORTS) {
		f->ports_over++;
		return;
	}
	f->udp_port[f->nr_ports] = port;
	f->udp_kind[f->nr_ports] = kind;
	f->nr_ports++;
}

void tun_add_local(struct tun_found *f, const void *addr, size_t len)
{
	struct shedd_tun_addr a = { { 0 } };
	unsigned int i;

	if (len == 4) {
		a.addr[10] = 0xff;
		a.addr[11] = 0xff;
		memcpy(&a.addr[12], addr, 4);
	} else if (len == 16) {
		memcpy(a.addr, addr, 16);
	} else {
		return;
	}
	for (i = 0; i < f->nr_local; i++)
		if (!memcmp(&f->local[i], &a, sizeof(a)))
			return;
	if (f->nr_local == MAX_TUN_LOCAL) {
		f->local_over++;
		return;
	}
	f->local[f->nr_local++] = a;
}

/* The attributes of @len bytes at @rta into @tb, by type up to @max. */
static void rta_parse(struct rtattr **tb, int max, struct rtattr *rta, int len)
{
	memset(tb, 0, sizeof(*tb) * (size_t)(max + 1));
	for (; RTA_OK(rta, len); rta = RTA_NEXT(rta, len)) {
		unsigned short type = rta->rta_type & ~NLA_F_NESTED;

		if (type <= max && !tb[type])
			tb[type] = rta;
	}
}

static void scan_link(struct tun_found *f, struct nlmsghdr *h)
{
	struct ifinfomsg *ifi = NLMSG_DATA(h);
	struct rtattr *tb[IFLA_MAX + 1], *li[IFLA_INFO_MAX + 1];
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*ifi));
	char kind[32];
	size_t klen;

	if (len < 0 || !(ifi->ifi_flags & IFF_UP))
		return;
	rta_parse(tb, IFLA_MAX, IFLA_RTA(ifi), len);
	if (!tb[IFLA_LINKINFO])
		return;
	rta_parse(li, IFLA_INFO_MAX, RTA_DATA(tb[IFLA_LINKINFO]),
		  (int)RTA_PAYLOAD(tb[IFLA_LINKINFO]));
	if (!li[IFLA_INFO_KIND])
		return;
	klen = RTA_PAYLOAD(li[IFLA_INFO_KIND]);
	if (klen >= sizeof(kind))
		klen = sizeof(kind) - 1;
	memcpy(kind, RTA_DATA(li[IFLA_INFO_KIND]), klen);
	kind[klen] = 0;

	if (!strcmp(kind, "vxlan")) {
		struct rtattr *vx[IFLA_VXLAN_MAX + 1];

		if (!li[IFLA_INFO_DATA])
			return;
		rta_parse(vx, IFLA_VXLAN_MAX, RTA_DATA(li[IFLA_INFO_DATA]),
			  (int)RTA_PAYLOAD(li[IFLA_INFO_DATA]));
		/* VXLAN-GPE carries no Ethernet header: not parsed here. */
		if (vx[IFLA_VXLAN_GPE]) {
			f->gpe++;
			return;
		}
		if (vx[IFLA_VXLAN_PORT] && RTA_PAYLOAD(vx[IFLA_VXLAN_PORT]) == 2)
			tun_add_port(f, ntohs(*(__be16 *)RTA_DATA(vx[IFLA_VXLAN_PORT])),
				     SHEDD_UDP_VXLAN);
		/* A multicast group is an address its packets are sent to. */
		if (vx[IFLA_VXLAN_GROUP] && RTA_PAYLOAD(vx[IFLA_VXLAN_GROUP]) == 4)
			tun_add_local(f, RTA_DATA(vx[IFLA_VXLAN_GROUP]), 4);
		if (vx[IFLA_VXLAN_GROUP6] && RTA_PAYLOAD(vx[IFLA_VXLAN_GROUP6]) == 16)
			tun_add_local(f, RTA_DATA(vx[IFLA_VXLAN_GROUP6]), 16);
		return;
	}
	if (!strcmp(kind, "geneve")) {
		struct rtattr *gn[IFLA_GENEVE_MAX + 1];

		if (!li[IFLA_INFO_DATA])
			return;
		rta_parse(gn, IFLA_GENEVE_MAX, RTA_DATA(li[IFLA_INFO_DATA]),
			  (int)RTA_PAYLOAD(li[IFLA_INFO_DATA]));
		if (gn[IFLA_GENEVE_PORT] && RTA_PAYLOAD(gn[IFLA_GENEVE_PORT]) == 2)
			tun_add_port(f, ntohs(*(__be16 *)RTA_DATA(gn[IFLA_GENEVE_PORT])),
				     SHEDD_UDP_GENEVE);
		return;
	}
	{
		struct rtattr *ip[IFLA_IPTUN_MAX + 1];
		int proto = -1;

		if (li[IFLA_INFO_DATA] && (!strcmp(kind, "sit") || !strcmp(kind, "ip6tnl"))) {
			rta_parse(ip, IFLA_IPTUN_MAX, RTA_DATA(li[IFLA_INFO_DATA]),
				  (int)RTA_PAYLOAD(li[IFLA_INFO_DATA]));
			if (ip[IFLA_IPTUN_PROTO] && RTA_PAYLOAD(ip[IFLA_IPTUN_PROTO]) == 1)
				proto = *(__u8 *)RTA_DATA(ip[IFLA_IPTUN_PROTO]);
		}
		f->kinds |= tun_kind_bits(kind, proto);
	}
}

static void scan_addr(struct tun_found *f, struct nlmsghdr *h)
{
	struct ifaddrmsg *ifa = NLMSG_DATA(h);
	struct rtattr *tb[IFA_MAX + 1];
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(sizeof(*ifa));
	size_t alen = ifa->ifa_family == AF_INET ? 4 : 16;
	struct rtattr *a;

	if (len < 0 || (ifa->ifa_family != AF_INET && ifa->ifa_family != AF_INET6))
		return;
	rta_parse(tb, IFA_MAX, IFA_RTA(ifa), len);
	/* IPv4: IFA_LOCAL is the address (IFA_ADDRESS the peer's on a
	 * point-to-point link); IPv6 gives IFA_ADDRESS only. */
	a = tb[IFA_LOCAL] ? tb[IFA_LOCAL] : tb[IFA_ADDRESS];
	if (a && RTA_PAYLOAD(a) == alen)
		tun_add_local(f, RTA_DATA(a), alen);
	if (tb[IFA_BROADCAST] && RTA_PAYLOAD(tb[IFA_BROADCAST]) == 4)
		tun_add_local(f, RTA_DATA(tb[IFA_BROADCAST]), 4);
}

/* Dump @type (RTM_GETLINK or RTM_GETADDR) of every family on @fd. */
static int nl_dump(int fd, __u16 type, struct tun_found *f)
{
	static char buf[TUN_NL_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct {
		struct nlmsghdr nlh;
		struct rtgenmsg g;
	} req = {
		.nlh = {
			.nlmsg_len = NLMSG_LENGTH(sizeof(struct rtgenmsg)),
			.nlmsg_type = type,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = type,
		},
		.g = { .rtgen_family = AF_UNSPEC },
	};

	if (send(fd, &req, req.nlh.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (len < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error ? e->error : -EIO;
			}
			if (h->nlmsg_type == RTM_NEWLINK)
				scan_link(f, h);
			else if (h->nlmsg_type == RTM_NEWADDR)
				scan_addr(f, h);
		}
	}
}

int tun_scan(struct tun_found *f)
{
	static const __u8 bcast[4] = { 255, 255, 255, 255 };
	int fd, err;

	memset(f, 0, sizeof(*f));
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	err = nl_dump(fd, RTM_GETLINK, f);
	if (!err)
		err = nl_dump(fd, RTM_GETADDR, f);
	close(fd);
	/* The limited broadcast reaches a UDP tunnel's socket too. */
	tun_add_local(f, bcast, 4);
	return err;
}

int tun_watch_open(void)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR,
	};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);

	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

bool tun_watch_changed(int fd)
{
	static char buf[TUN_NL_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));
	bool changed = false;
	int i;

	/* Bounded: a storm of changes is read again next tick. */
	for (i = 0; i < 64; i++) {
		ssize_t len = recv(fd, buf, sizeof(buf), 0);

		if (len > 0) {
			changed = true;
			continue;
		}
		if (len < 0 && errno == EINTR)
			continue;
		/* ENOBUFS: messages were lost, read everything again. */
		if (len < 0 && errno == ENOBUFS)
			changed = true;
		break;
	}
	return changed || i == 64;
}

void tun_describe(const struct tun_found *f, char *buf, size_t len)
{
	static const struct {
		__u32 bit;
		const char *name;
	} names[] = {
		{ SHEDD_TUN_IPIP, "ipip" }, { SHEDD_TUN_SIT, "sit" },
		{ SHEDD_TUN_4IN6, "ip4ip6" }, { SHEDD_TUN_6IN6, "ip6ip6" },
		{ SHEDD_TUN_GRE, "gre" }, { SHEDD_TUN_GRETAP, "gretap" },
		{ SHEDD_TUN_GRE6, "ip6gre" }, { SHEDD_TUN_GRETAP6, "ip6gretap" },
	};
	size_t n = 0, i;
	int w;

	if (!len)
		return;
	buf[0] = 0;
	for (i = 0; i < sizeof(names) / sizeof(names[0]) && n < len; i++) {
		if (!(f->kinds & names[i].bit))
			continue;
		w = snprintf(buf + n, len - n, "%s%s", n ? " " : "", names[i].name);
		n += w > 0 ? (size_t)w : 0;
	}
	for (i = 0; i < f->nr_ports && n < len; i++) {
		w = snprintf(buf + n, len - n, "%s%s:%u", n ? " " : "",
			     f->udp_kind[i] == SHEDD_UDP_VXLAN ? "vxlan" : "geneve",
			     f->udp_port[i]);
		n += w > 0 ? (size_t)w : 0;
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}
