// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tunnels.c - see tunnels.h. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
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
#include <linux/genetlink.h>
#include <linux/fou.h>

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

void tun_add_fou(struct tun_found *f, __u16 port, __u8 kind, __u8 proto, __u8 family)
{
	unsigned int i;

	if (!port)
		return;
	for (i = 0; i < f->nr_ports; i++)
		if (f->udp_port[i] == port && f->udp_kind[i] == kind &&
		    f->udp_proto[i] == proto && f->udp_family[i] == family)
			return;
	if (f->nr_ports == MAX_TUN_UDP_PORTS) {
		f->ports_over++;
		return;
	}
	f->udp_port[f->nr_ports] = port;
	f->udp_kind[f->nr_ports] = kind;
	f->udp_proto[f->nr_ports] = proto;
	f->udp_family[f->nr_ports] = family;
	f->nr_ports++;
}

void tun_add_port(struct tun_found *f, __u16 port, __u8 kind)
{
	tun_add_fou(f, port, kind, 0, 0);
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

void tun_add_unjudged(struct tun_found *f, __u32 ifindex, const char *name, unsigned int kind)
{
	struct tun_unjudged_dev *d;

	if (kind >= TUN_UJ_NR)
		return;
	f->unjudged[kind]++;
	if (f->nr_uj == MAX_TUN_UNJUDGED)
		return;
	d = &f->uj_dev[f->nr_uj++];
	d->ifindex = ifindex;
	d->kind = kind;
	snprintf(d->name, sizeof(d->name), "%s", name);
}

bool tun_unjudged_new(const struct tun_found *old, const struct tun_unjudged_dev *d)
{
	unsigned int i;

	for (i = 0; i < old->nr_uj; i++)
		if (old->uj_dev[i].ifindex == d->ifindex && old->uj_dev[i].kind == d->kind &&
		    !strcmp(old->uj_dev[i].name, d->name))
			return false;
	return true;
}

void tun_add_dev(struct tun_found *f, const struct shedd_tun_key *k, __u32 ifindex)
{
	unsigned int i;

	if (k->kind == SHEDD_TDEV_NONE || k->kind >= SHEDD_TUN_SHAPES_SHIFT)
		return;
	f->dev_kinds |= SHEDD_TUN_MATCH(k->kind);
	for (i = 0; i < f->nr_devs; i++)
		if (!memcmp(&f->dev_key[i], k, sizeof(*k)))
			return;
	if (f->nr_devs == MAX_TUN_DEVS) {
		f->dev_unread |= SHEDD_TUN_MATCH(k->kind);
		return;
	}
	f->dev_key[f->nr_devs] = *k;
	f->dev_ifindex[f->nr_devs] = ifindex;
	f->nr_devs++;
}

__u32 tun_match(const struct tun_found *f)
{
	__u32 kinds = f->dev_kinds & ~f->dev_unread, shapes = 0;
	unsigned int i;

	for (i = 0; i < f->nr_devs; i++)
		if (kinds & SHEDD_TUN_MATCH(f->dev_key[i].kind))
			shapes |= 1U << shedd_tun_key_shape(&f->dev_key[i]);
	return kinds ? kinds | shapes << SHEDD_TUN_SHAPES_SHIFT : 0;
}

/* The address attribute @rta (4 or 16 bytes) into @out as tun_devs keeps
 * it (IPv4 as ::ffff:a.b.c.d); absent or all zeros (any): all zeros. */
static void tun_addr_of(struct rtattr *rta, __u8 out[16])
{
	static const __u8 zero[16];
	size_t n = rta ? RTA_PAYLOAD(rta) : 0;

	memset(out, 0, 16);
	if (n == 4 && memcmp(RTA_DATA(rta), zero, 4)) {
		out[10] = out[11] = 0xff;
		memcpy(out + 12, RTA_DATA(rta), 4);
	} else if (n == 16) {
		memcpy(out, RTA_DATA(rta), 16);
	}
}

bool tun_addr_multicast(const __u8 a[16])
{
	static const __u8 mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(a, mapped, 12))
		return (a[12] & 0xf0) == 0xe0;
	return a[0] == 0xff;
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

/* The device a decapsulated packet reaches the IP layer on, which the
 * source check of its inner SYN routes back through: the bridge of a
 * device enslaved to one (a VXLAN or GRE-TAP port: rp_filter sees the
 * bridge), else the device itself. */
static __u32 tun_rx_ifindex(struct ifinfomsg *ifi, struct rtattr **tb)
{
	if (tb[IFLA_MASTER] && RTA_PAYLOAD(tb[IFLA_MASTER]) == 4)
		return *(__u32 *)RTA_DATA(tb[IFLA_MASTER]);
	return (__u32)ifi->ifi_index;
}

/* The name of the device in @tb into @name ("" when not given). */
static void tun_ifname(struct rtattr **tb, char name[IFNAMSIZ])
{
	size_t n = tb[IFLA_IFNAME] ? RTA_PAYLOAD(tb[IFLA_IFNAME]) : 0;

	if (n > IFNAMSIZ)
		n = IFNAMSIZ;
	memset(name, 0, IFNAMSIZ);
	if (n)
		memcpy(name, RTA_DATA(tb[IFLA_IFNAME]), n);
	name[IFNAMSIZ - 1] = '\0';
}

/* Is the device named in @tb a fallback device (gre0, tunl0, ...)? Once
 * up, it takes every packet of its kind no other device takes. */
static bool tun_fallback(struct rtattr **tb)
{
	static const char *const fallback[] = { "gre0", "gretap0", "ip6gre0", "tunl0", "sit0",
						"ip6tnl0" };
	char name[IFNAMSIZ];
	unsigned int i;

	if (!tb[IFLA_IFNAME] || RTA_PAYLOAD(tb[IFLA_IFNAME]) > IFNAMSIZ)
		return false;
	tun_ifname(tb, name);
	for (i = 0; i < sizeof(fallback) / sizeof(fallback[0]); i++)
		if (!strcmp(name, fallback[i]))
			return true;
	return false;
}

/* The local and remote attributes @lrta and @rrta into @k. A multicast
 * remote is a group the device receives on: the kernel takes a packet to
 * it from any source, whatever the device's own local address, and the
 * group is an address its packets are sent to. */
static void tun_endpoints(struct tun_found *f, struct shedd_tun_key *k, struct rtattr *lrta,
			  struct rtattr *rrta)
{
	tun_addr_of(lrta, k->local);
	tun_addr_of(rrta, k->remote);
	if (!tun_addr_multicast(k->remote))
		return;
	memcpy(k->local, k->remote, 16);
	memset(k->remote, 0, 16);
	if (k->local[0] == 0xff)
		tun_add_local(f, k->local, 16);
	else
		tun_add_local(f, &k->local[12], 4);
}

/* A gre, gretap, ip6gre or ip6gretap device, as ip_tunnel_lookup() and
 * ip6gre_tunnel_lookup() find it: by key (with the device's, or neither
 * with one), remote and local (either open on the device: any). A
 * collect_md device, and the fallback device (gre0, gretap0, ip6gre0,
 * once up), take whatever else comes. */
static void scan_gre(struct tun_found *f, struct ifinfomsg *ifi, struct rtattr **tb,
		     struct rtattr **li, const char *kind)
{
	struct rtattr *gr[IFLA_GRE_MAX + 1];
	struct shedd_tun_key k = { 0 };

	if (!strcmp(kind, "gre") || !strcmp(kind, "ip6gre"))
		k.kind = SHEDD_TDEV_GRE;
	else if (!strcmp(kind, "gretap") || !strcmp(kind, "ip6gretap"))
		k.kind = SHEDD_TDEV_GRETAP;
	else
		return;
	if (tun_fallback(tb))
		k.flags = TUN_KEY_ANY;
	if (!li[IFLA_INFO_DATA]) {
		if (!k.flags)
			f->dev_unread |= SHEDD_TUN_MATCH(k.kind);
		tun_add_dev(f, &k, tun_rx_ifindex(ifi, tb));
		return;
	}
	rta_parse(gr, IFLA_GRE_MAX, RTA_DATA(li[IFLA_INFO_DATA]), (int)RTA_PAYLOAD(li[IFLA_INFO_DATA]));
	if (gr[IFLA_GRE_COLLECT_METADATA])
		k.flags = TUN_KEY_ANY;
	if (!k.flags) {
		if (gr[IFLA_GRE_IFLAGS] && RTA_PAYLOAD(gr[IFLA_GRE_IFLAGS]) == 2 &&
		    (*(__be16 *)RTA_DATA(gr[IFLA_GRE_IFLAGS]) & GRE_KEY)) {
			k.flags = TUN_KEY_KEYED;
			if (gr[IFLA_GRE_IKEY] && RTA_PAYLOAD(gr[IFLA_GRE_IKEY]) == 4)
				memcpy(&k.id, RTA_DATA(gr[IFLA_GRE_IKEY]), 4);
			else
				f->dev_unread |= SHEDD_TUN_MATCH(k.kind);
		}
		tun_endpoints(f, &k, gr[IFLA_GRE_LOCAL], gr[IFLA_GRE_REMOTE]);
	}
	tun_add_dev(f, &k, tun_rx_ifindex(ifi, tb));
}

/* An ipip, sit or ip6tnl device, as ip_tunnel_lookup(),
 * ipip6_tunnel_lookup() and ip6_tnl_lookup() find it: by remote and
 * local. A sit device of mode any or ipip takes IPv4 in IPv4 too (its
 * handler comes after ipip's); an ip6tnl device is kept whatever its mode
 * (the kernel drops a packet of another mode once it found the device).
 * @proto: IFLA_IPTUN_PROTO, -1 if not given. */
static void scan_iptun(struct tun_found *f, struct ifinfomsg *ifi, struct rtattr **tb,
		       struct rtattr **ip, const char *kind, int proto)
{
	struct shedd_tun_key k = { 0 };
	__u8 kinds[2] = { 0 };
	unsigned int i;

	if (!strcmp(kind, "ipip")) {
		kinds[0] = SHEDD_TDEV_IPIP;
	} else if (!strcmp(kind, "sit")) {
		if (proto != IPPROTO_IPIP)
			kinds[0] = SHEDD_TDEV_SIT;
		if (proto == IPPROTO_IPIP || proto == 0)
			kinds[1] = SHEDD_TDEV_IPIP;
	} else if (!strcmp(kind, "ip6tnl")) {
		kinds[0] = SHEDD_TDEV_IP6TNL;
	} else {
		return;
	}
	if (tun_fallback(tb) || (ip && ip[IFLA_IPTUN_COLLECT_METADATA]))
		k.flags = TUN_KEY_ANY;
	else if (ip)
		tun_endpoints(f, &k, ip[IFLA_IPTUN_LOCAL], ip[IFLA_IPTUN_REMOTE]);
	for (i = 0; i < 2; i++) {
		if (!kinds[i])
			continue;
		k.kind = kinds[i];
		/* Without its attributes its endpoints are not known. */
		if (!ip && !k.flags)
			f->dev_unread |= SHEDD_TUN_MATCH(k.kind);
		tun_add_dev(f, &k, tun_rx_ifindex(ifi, tb));
	}
}

void tun_scan_link(struct tun_found *f, struct nlmsghdr *h)
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

	if (tun_unjudged_kind(kind) >= 0) {
		char name[IFNAMSIZ];

		tun_ifname(tb, name);
		tun_add_unjudged(f, (__u32)ifi->ifi_index, name, (unsigned int)tun_unjudged_kind(kind));
		return;
	}
	if (!strcmp(kind, "vxlan")) {
		struct rtattr *vx[IFLA_VXLAN_MAX + 1];
		struct shedd_tun_key k = { .kind = SHEDD_TDEV_VXLAN };

		if (!li[IFLA_INFO_DATA]) {
			f->dev_unread |= SHEDD_TUN_MATCH(SHEDD_TDEV_VXLAN);
			return;
		}
		rta_parse(vx, IFLA_VXLAN_MAX, RTA_DATA(li[IFLA_INFO_DATA]),
			  (int)RTA_PAYLOAD(li[IFLA_INFO_DATA]));
		/* VXLAN-GPE carries no Ethernet header: not parsed here. */
		if (vx[IFLA_VXLAN_GPE]) {
			char name[IFNAMSIZ];

			tun_ifname(tb, name);
			tun_add_unjudged(f, (__u32)ifi->ifi_index, name, TUN_UJ_VXLAN_GPE);
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
		/* vxlan_vs_find_vni(): the socket of the port, then the VNI;
		 * no address is compared. A collect_md device (a VNI filter
		 * is one's) takes every VNI. */
		if (!vx[IFLA_VXLAN_PORT] || RTA_PAYLOAD(vx[IFLA_VXLAN_PORT]) != 2) {
			f->dev_unread |= SHEDD_TUN_MATCH(SHEDD_TDEV_VXLAN);
			return;
		}
		k.port = ntohs(*(__be16 *)RTA_DATA(vx[IFLA_VXLAN_PORT]));
		if (vx[IFLA_VXLAN_COLLECT_METADATA] && RTA_PAYLOAD(vx[IFLA_VXLAN_COLLECT_METADATA]) == 1 &&
		    *(__u8 *)RTA_DATA(vx[IFLA_VXLAN_COLLECT_METADATA]))
			k.flags = TUN_KEY_ANY;
		else if (vx[IFLA_VXLAN_ID] && RTA_PAYLOAD(vx[IFLA_VXLAN_ID]) == 4)
			k.id = *(__u32 *)RTA_DATA(vx[IFLA_VXLAN_ID]);
		else
			f->dev_unread |= SHEDD_TUN_MATCH(SHEDD_TDEV_VXLAN);
		tun_add_dev(f, &k, tun_rx_ifindex(ifi, tb));
		return;
	}
	if (!strcmp(kind, "geneve")) {
		struct rtattr *gn[IFLA_GENEVE_MAX + 1];
		struct shedd_tun_key k = { .kind = SHEDD_TDEV_GENEVE };

		if (!li[IFLA_INFO_DATA]) {
			f->dev_unread |= SHEDD_TUN_MATCH(SHEDD_TDEV_GENEVE);
			return;
		}
		rta_parse(gn, IFLA_GENEVE_MAX, RTA_DATA(li[IFLA_INFO_DATA]),
			  (int)RTA_PAYLOAD(li[IFLA_INFO_DATA]));
		if (!gn[IFLA_GENEVE_PORT] || RTA_PAYLOAD(gn[IFLA_GENEVE_PORT]) != 2) {
			f->dev_unread |= SHEDD_TUN_MATCH(SHEDD_TDEV_GENEVE);
			return;
		}
		k.port = ntohs(*(__be16 *)RTA_DATA(gn[IFLA_GENEVE_PORT]));
		tun_add_port(f, k.port, SHEDD_UDP_GENEVE);
		/* geneve_lookup(): the VNI and the remote, the outer source;
		 * a collect_md device takes every packet of its port. */
		if (gn[IFLA_GENEVE_COLLECT_METADATA]) {
			k.flags = TUN_KEY_ANY;
		} else if (gn[IFLA_GENEVE_ID] && RTA_PAYLOAD(gn[IFLA_GENEVE_ID]) == 4) {
			k.id = *(__u32 *)RTA_DATA(gn[IFLA_GENEVE_ID]);
			tun_addr_of(gn[IFLA_GENEVE_REMOTE] ? gn[IFLA_GENEVE_REMOTE] :
				    gn[IFLA_GENEVE_REMOTE6], k.remote);
		} else {
			f->dev_unread |= SHEDD_TUN_MATCH(SHEDD_TDEV_GENEVE);
		}
		tun_add_dev(f, &k, tun_rx_ifindex(ifi, tb));
		return;
	}
	{
		struct rtattr *ip[IFLA_IPTUN_MAX + 1];
		bool iptun = !strcmp(kind, "ipip") || !strcmp(kind, "sit") || !strcmp(kind, "ip6tnl");
		int proto = -1;

		if (li[IFLA_INFO_DATA] && iptun) {
			rta_parse(ip, IFLA_IPTUN_MAX, RTA_DATA(li[IFLA_INFO_DATA]),
				  (int)RTA_PAYLOAD(li[IFLA_INFO_DATA]));
			if (ip[IFLA_IPTUN_PROTO] && RTA_PAYLOAD(ip[IFLA_IPTUN_PROTO]) == 1)
				proto = *(__u8 *)RTA_DATA(ip[IFLA_IPTUN_PROTO]);
		}
		f->kinds |= tun_kind_bits(kind, proto);
		if (iptun)
			scan_iptun(f, ifi, tb, li[IFLA_INFO_DATA] ? ip : NULL, kind, proto);
	}
	scan_gre(f, ifi, tb, li, kind);
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
				tun_scan_link(f, h);
			else if (h->nlmsg_type == RTM_NEWADDR)
				scan_addr(f, h);
		}
	}
}

/* ---- FOU and GUE: generic netlink family "fou" ---- */

/* One request of @len bytes on @fd, its answers handed to @cb until
 * NLMSG_DONE (a dump) or the first answer (not a dump). */
static int genl_talk(int fd, void *req, size_t len, bool dump,
		     void (*cb)(struct nlmsghdr *h, void *arg), void *arg)
{
	static char buf[TUN_NL_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));

	if (send(fd, req, len, 0) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error;
			}
			cb(h, arg);
			if (!dump)
				return 0;
		}
	}
}

/* The attributes of a generic netlink message into @tb, up to @max. */
static void genl_parse(struct nlattr **tb, int max, struct nlmsghdr *h)
{
	int len = (int)h->nlmsg_len - (int)NLMSG_LENGTH(GENL_HDRLEN);
	struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);

	memset(tb, 0, sizeof(*tb) * (size_t)(max + 1));
	while (len >= (int)sizeof(*a) && a->nla_len >= sizeof(*a) && a->nla_len <= len) {
		__u16 type = a->nla_type & NLA_TYPE_MASK;

		if (type <= max && !tb[type])
			tb[type] = a;
		len -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
}

#define NLA_DATA(a) ((void *)((char *)(a) + NLA_HDRLEN))
#define NLA_LEN(a) ((a)->nla_len - NLA_HDRLEN)

static void family_id_cb(struct nlmsghdr *h, void *arg)
{
	struct nlattr *tb[CTRL_ATTR_MAX + 1];
	struct nlattr *name;

	if (h->nlmsg_type != GENL_ID_CTRL)
		return;
	genl_parse(tb, CTRL_ATTR_MAX, h);
	name = tb[CTRL_ATTR_FAMILY_NAME];
	if (!name || NLA_LEN(name) != sizeof(FOU_GENL_NAME) ||
	    memcmp(NLA_DATA(name), FOU_GENL_NAME, sizeof(FOU_GENL_NAME)))
		return;
	if (tb[CTRL_ATTR_FAMILY_ID] && NLA_LEN(tb[CTRL_ATTR_FAMILY_ID]) == 2)
		*(__u16 *)arg = *(__u16 *)NLA_DATA(tb[CTRL_ATTR_FAMILY_ID]);
}

static void fou_cb(struct nlmsghdr *h, void *arg)
{
	struct tun_found *f = arg;
	struct nlattr *tb[FOU_ATTR_MAX + 1];
	__u8 af = AF_INET, type = FOU_ENCAP_DIRECT, proto = 0;

	genl_parse(tb, FOU_ATTR_MAX, h);
	if (!tb[FOU_ATTR_PORT] || NLA_LEN(tb[FOU_ATTR_PORT]) != 2)
		return;
	if (tb[FOU_ATTR_AF] && NLA_LEN(tb[FOU_ATTR_AF]) == 1)
		af = *(__u8 *)NLA_DATA(tb[FOU_ATTR_AF]);
	if (tb[FOU_ATTR_TYPE] && NLA_LEN(tb[FOU_ATTR_TYPE]) == 1)
		type = *(__u8 *)NLA_DATA(tb[FOU_ATTR_TYPE]);
	if (tb[FOU_ATTR_IPPROTO] && NLA_LEN(tb[FOU_ATTR_IPPROTO]) == 1)
		proto = *(__u8 *)NLA_DATA(tb[FOU_ATTR_IPPROTO]);
	/* A FOU socket is of one family (an IPv6 one is v6only). */
	tun_add_fou(f, ntohs(*(__be16 *)NLA_DATA(tb[FOU_ATTR_PORT])),
		    type == FOU_ENCAP_GUE ? SHEDD_UDP_GUE : SHEDD_UDP_FOU,
		    type == FOU_ENCAP_GUE ? 0 : proto, af == AF_INET6 ? 6 : 4);
}

int tun_scan_fou(struct tun_found *f)
{
	struct {
		struct nlmsghdr nh;
		struct genlmsghdr gh;
	} req;
	__u16 id = 0;
	int fd, err;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	/* The families by a dump: asking for "fou" by name would have the
	 * kernel load the module, every time it is asked. */
	memset(&req, 0, sizeof(req));
	req.nh.nlmsg_len = sizeof(req);
	req.nh.nlmsg_type = GENL_ID_CTRL;
	req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	req.nh.nlmsg_seq = 1;
	req.gh.cmd = CTRL_CMD_GETFAMILY;
	req.gh.version = 1;
	err = genl_talk(fd, &req, sizeof(req), true, family_id_cb, &id);
	/* No family: the fou module is not loaded, no FOU port exists. */
	if (!err && id) {
		memset(&req, 0, sizeof(req));
		req.nh.nlmsg_len = sizeof(req);
		req.nh.nlmsg_type = id;
		req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
		req.nh.nlmsg_seq = 2;
		req.gh.cmd = FOU_CMD_GET;
		req.gh.version = FOU_GENL_VERSION;
		err = genl_talk(fd, &req, sizeof(req), true, fou_cb, f);
	}
	close(fd);
	return err;
}

static bool is_fou(__u8 kind)
{
	return kind == SHEDD_UDP_FOU || kind == SHEDD_UDP_GUE;
}

bool tun_fou_changed(const struct tun_found *f)
{
	static struct tun_found now;
	unsigned int i, j = 0, room = MAX_TUN_UDP_PORTS;

	memset(&now, 0, sizeof(now));
	if (tun_scan_fou(&now))
		return false;
	for (i = 0; i < f->nr_ports; i++)
		if (!is_fou(f->udp_kind[i]))
			room--;
	/* The FOU entries of @f, in order, against those read now (as many
	 * as fit beside the ports of the devices). */
	for (i = 0; i < f->nr_ports; i++) {
		if (!is_fou(f->udp_kind[i]))
			continue;
		if (j >= now.nr_ports || f->udp_port[i] != now.udp_port[j] ||
		    f->udp_kind[i] != now.udp_kind[j] || f->udp_proto[i] != now.udp_proto[j] ||
		    f->udp_family[i] != now.udp_family[j])
			return true;
		j++;
	}
	return j != (now.nr_ports < room ? now.nr_ports : room);
}

/* A sysctl file of at most a number: its value, or -1 (absent, junk). */
static long read_sysctl(const char *root, const char *a, const char *b)
{
	char path[512], buf[32], *end;
	FILE *fp;
	long v;

	if (snprintf(path, sizeof(path), "%s/%s%s%s", root, a, b ? "/" : "", b ? b : "") >=
	    (int)sizeof(path))
		return -1;
	fp = fopen(path, "re");
	if (!fp)
		return -1;
	if (!fgets(buf, sizeof(buf), fp)) {
		fclose(fp);
		return -1;
	}
	fclose(fp);
	v = strtol(buf, &end, 10);
	return end == buf || (*end && *end != '\n') ? -1 : v;
}

/* Bound on the entries of conf/ read: past it, devices are neither named
 * nor counted. */
#define TUN_MPLS_MAX_ENTRIES 4096

int tun_scan_mpls(struct tun_found *f, const char *root)
{
	char conf[512];
	struct dirent *e;
	DIR *dir;
	int n;

	/* No table, or no labels: the kernel takes no MPLS frame. */
	if (read_sysctl(root, "platform_labels", NULL) <= 0)
		return 0;
	if (snprintf(conf, sizeof(conf), "%s/conf", root) >= (int)sizeof(conf))
		return -ENAMETOOLONG;
	dir = opendir(conf);
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	for (n = 0; n < TUN_MPLS_MAX_ENTRIES && (e = readdir(dir)); n++) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "all") ||
		    !strcmp(e->d_name, "default") || strlen(e->d_name) >= IFNAMSIZ)
			continue;
		if (read_sysctl(conf, e->d_name, "input") == 1)
			tun_add_unjudged(f, if_nametoindex(e->d_name), e->d_name, TUN_UJ_MPLS);
	}
	closedir(dir);
	return 0;
}

/* The MPLS devices of @f (the kind's count and named ones, in order). */
static bool tun_mpls_same(const struct tun_found *a, const struct tun_found *b)
{
	unsigned int i, j = 0;

	if (a->unjudged[TUN_UJ_MPLS] != b->unjudged[TUN_UJ_MPLS])
		return false;
	for (i = 0; i < a->nr_uj; i++) {
		if (a->uj_dev[i].kind != TUN_UJ_MPLS)
			continue;
		while (j < b->nr_uj && b->uj_dev[j].kind != TUN_UJ_MPLS)
			j++;
		if (j == b->nr_uj || strcmp(a->uj_dev[i].name, b->uj_dev[j].name) ||
		    a->uj_dev[i].ifindex != b->uj_dev[j].ifindex)
			return false;
		j++;
	}
	return true;
}

bool tun_mpls_changed(const struct tun_found *f, const char *root)
{
	static struct tun_found now;

	memset(&now, 0, sizeof(now));
	if (tun_scan_mpls(&now, root))
		return false;
	return !tun_mpls_same(f, &now);
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
	if (!err)
		err = tun_scan_fou(f);
	/* Only named to the operator: a failed read judges nothing less. */
	if (!err)
		(void)tun_scan_mpls(f, TUN_MPLS_ROOT);
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
		const char *k = f->udp_kind[i] == SHEDD_UDP_VXLAN ? "vxlan" :
				f->udp_kind[i] == SHEDD_UDP_GENEVE ? "geneve" :
				f->udp_kind[i] == SHEDD_UDP_GUE ? "gue" : "fou";

		w = snprintf(buf + n, len - n, "%s%s:%u", n ? " " : "", k, f->udp_port[i]);
		n += w > 0 ? (size_t)w : 0;
		if (f->udp_kind[i] == SHEDD_UDP_FOU && n < len) {
			w = snprintf(buf + n, len - n, "/%u", f->udp_proto[i]);
			n += w > 0 ? (size_t)w : 0;
		}
		if (f->udp_family[i] && n < len) {
			w = snprintf(buf + n, len - n, "/ipv%u", f->udp_family[i]);
			n += w > 0 ? (size_t)w : 0;
		}
	}
	if (!buf[0])
		snprintf(buf, len, "none");
}
