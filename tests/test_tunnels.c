// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_tunnels.c - what the daemon makes of the tunnel devices and
 * addresses it reads (user/daemon/tunnels.c): the kinds by rtnetlink kind and
 * mode, the UDP ports, local addresses and devices kept once each and
 * bounded, what the program is told to match, and the line that says
 * what is judged. The rtnetlink reads themselves
 * are tested on real devices by tests/integration/tunnels.bats.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <linux/if_tunnel.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <cmocka.h>

#include "tunnels.h"

static void test_kinds(void **state)
{
	(void)state;
	assert_int_equal(tun_kind_bits("ipip", -1), SHEDD_TUN_IPIP);
	/* sit: ip6ip by default, ipip, or any (both). */
	assert_int_equal(tun_kind_bits("sit", IPPROTO_IPV6), SHEDD_TUN_SIT);
	assert_int_equal(tun_kind_bits("sit", -1), SHEDD_TUN_SIT);
	assert_int_equal(tun_kind_bits("sit", IPPROTO_IPIP), SHEDD_TUN_IPIP);
	assert_int_equal(tun_kind_bits("sit", 0), SHEDD_TUN_SIT | SHEDD_TUN_IPIP);
	/* ip6tnl: ip6ip6 by default, ipip6, or any. */
	assert_int_equal(tun_kind_bits("ip6tnl", IPPROTO_IPV6), SHEDD_TUN_6IN6);
	assert_int_equal(tun_kind_bits("ip6tnl", IPPROTO_IPIP), SHEDD_TUN_4IN6);
	assert_int_equal(tun_kind_bits("ip6tnl", 0), SHEDD_TUN_4IN6 | SHEDD_TUN_6IN6);
	assert_int_equal(tun_kind_bits("gre", -1), SHEDD_TUN_GRE);
	assert_int_equal(tun_kind_bits("gretap", -1), SHEDD_TUN_GRETAP);
	assert_int_equal(tun_kind_bits("ip6gre", -1), SHEDD_TUN_GRE6);
	assert_int_equal(tun_kind_bits("ip6gretap", -1), SHEDD_TUN_GRETAP6);
	/* Not decapsulated into a listener's SYN, or read as UDP ports. */
	assert_int_equal(tun_kind_bits("veth", -1), 0);
	assert_int_equal(tun_kind_bits("vxlan", -1), 0);
	assert_int_equal(tun_kind_bits("erspan", -1), 0);
}

static void test_ports_once_and_bounded(void **state)
{
	static struct tun_found f;
	unsigned int i;

	(void)state;
	memset(&f, 0, sizeof(f));
	tun_add_port(&f, 4789, SHEDD_UDP_VXLAN);
	tun_add_port(&f, 4789, SHEDD_UDP_VXLAN);
	tun_add_port(&f, 0, SHEDD_UDP_VXLAN);
	tun_add_port(&f, 6081, SHEDD_UDP_GENEVE);
	assert_int_equal(f.nr_ports, 2);
	assert_int_equal(f.udp_port[0], 4789);
	assert_int_equal(f.udp_kind[1], SHEDD_UDP_GENEVE);
	/* A FOU port once per protocol and family: an IPv4 and an IPv6
	 * socket may share a port number. */
	tun_add_fou(&f, 5555, SHEDD_UDP_FOU, IPPROTO_IPIP, 4);
	tun_add_fou(&f, 5555, SHEDD_UDP_FOU, IPPROTO_IPIP, 4);
	tun_add_fou(&f, 5555, SHEDD_UDP_FOU, IPPROTO_IPV6, 6);
	assert_int_equal(f.nr_ports, 4);
	assert_int_equal(f.udp_proto[2], IPPROTO_IPIP);
	assert_int_equal(f.udp_family[3], 6);
	for (i = 0; i < MAX_TUN_UDP_PORTS + 3; i++)
		tun_add_port(&f, (__u16)(10000 + i), SHEDD_UDP_VXLAN);
	assert_int_equal(f.nr_ports, MAX_TUN_UDP_PORTS);
	assert_int_equal(f.ports_over, 7);
}

static void test_local_addresses(void **state)
{
	static const __u8 v4[4] = { 198, 18, 0, 2 };
	static const __u8 v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 2 };
	static const __u8 mapped[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 2 };
	static struct tun_found f;
	__u32 i;

	(void)state;
	memset(&f, 0, sizeof(f));
	tun_add_local(&f, v4, 4);
	tun_add_local(&f, v4, 4);
	tun_add_local(&f, v6, 16);
	tun_add_local(&f, v6, 5); /* neither family: ignored */
	assert_int_equal(f.nr_local, 2);
	assert_memory_equal(f.local[0].addr, mapped, 16);
	assert_memory_equal(f.local[1].addr, v6, 16);
	for (i = 0; i < MAX_TUN_LOCAL; i++)
		tun_add_local(&f, &i, 4);
	assert_int_equal(f.nr_local, MAX_TUN_LOCAL);
	assert_int_equal(f.local_over, 2);
}

/* Devices once each, by their whole key; tun_config.match names the kinds
 * read and the shapes of their keys, and leaves out a kind with a device
 * past the table (its packets are judged unmatched, as before). */
static void test_devices_and_match(void **state)
{
	static struct tun_found f;
	struct shedd_tun_key vx = { .kind = SHEDD_TDEV_VXLAN, .port = 4789, .id = 42 };
	struct shedd_tun_key gre = { .kind = SHEDD_TDEV_GRE, .flags = TUN_KEY_KEYED, .id = 7 };
	struct shedd_tun_key md = { .kind = SHEDD_TDEV_GENEVE, .flags = TUN_KEY_ANY, .port = 6081 };
	unsigned int i;

	(void)state;
	memset(&f, 0, sizeof(f));
	assert_int_equal(tun_match(&f), 0);
	tun_add_dev(&f, &vx, 5);
	tun_add_dev(&f, &vx, 5);
	assert_int_equal(f.nr_devs, 1);
	assert_int_equal(f.dev_ifindex[0], 5);
	assert_int_equal(tun_match(&f), SHEDD_TUN_MATCH(SHEDD_TDEV_VXLAN) |
					(1U << TUN_SHAPE_NONE) << SHEDD_TUN_SHAPES_SHIFT);
	/* GRE with both endpoints; a collect_md Geneve device. */
	gre.local[10] = gre.local[11] = 0xff;
	gre.local[15] = 1;
	gre.remote[10] = gre.remote[11] = 0xff;
	gre.remote[15] = 2;
	tun_add_dev(&f, &gre, 6);
	tun_add_dev(&f, &md, 7);
	assert_int_equal(shedd_tun_key_shape(&gre), TUN_SHAPE_BOTH);
	assert_int_equal(shedd_tun_key_shape(&md), TUN_SHAPE_ANY);
	gre.remote[15] = 0;
	gre.remote[10] = gre.remote[11] = 0;
	assert_int_equal(shedd_tun_key_shape(&gre), TUN_SHAPE_LOCAL);
	assert_int_equal(tun_match(&f),
			 SHEDD_TUN_MATCH(SHEDD_TDEV_VXLAN) | SHEDD_TUN_MATCH(SHEDD_TDEV_GRE) |
			 SHEDD_TUN_MATCH(SHEDD_TDEV_GENEVE) |
			 ((1U << TUN_SHAPE_NONE) | (1U << TUN_SHAPE_BOTH) | (1U << TUN_SHAPE_ANY))
				 << SHEDD_TUN_SHAPES_SHIFT);
	/* No kind: nothing to add. */
	tun_add_dev(&f, &(struct shedd_tun_key){ 0 }, 8);
	assert_int_equal(f.nr_devs, 3);
	/* Past the table: VXLAN is no longer matched, the others are. */
	for (i = 0; i < MAX_TUN_DEVS; i++) {
		vx.id = 1000 + i;
		tun_add_dev(&f, &vx, 9);
	}
	assert_int_equal(f.nr_devs, MAX_TUN_DEVS);
	assert_true(f.dev_unread & SHEDD_TUN_MATCH(SHEDD_TDEV_VXLAN));
	assert_false(tun_match(&f) & SHEDD_TUN_MATCH(SHEDD_TDEV_VXLAN));
	assert_true(tun_match(&f) & SHEDD_TUN_MATCH(SHEDD_TDEV_GRE));
	/* A kind whose device could not be read: not matched either. */
	f.dev_unread |= SHEDD_TUN_MATCH(SHEDD_TDEV_GRE);
	assert_false(tun_match(&f) & SHEDD_TUN_MATCH(SHEDD_TDEV_GRE));
}

static void test_multicast(void **state)
{
	const __u8 v4_group[16] = { [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 };
	const __u8 v4_host[16] = { [10] = 0xff, [11] = 0xff, 198, 18, 0, 1 };
	const __u8 v6_group[16] = { 0xff, 0x05, [15] = 1 };
	const __u8 v6_host[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	const __u8 any[16] = { 0 };

	(void)state;
	assert_true(tun_addr_multicast(v4_group));
	assert_false(tun_addr_multicast(v4_host));
	assert_true(tun_addr_multicast(v6_group));
	assert_false(tun_addr_multicast(v6_host));
	assert_false(tun_addr_multicast(any));
}

/* ---- RTM_NEWLINK messages as the kernel sends them ---- */

struct nlmsg {
	union {
		struct nlmsghdr h;
		char buf[2048];
	};
	struct rtattr *nest[2];
	int depth;
};

static void *nl_put(struct nlmsg *m, unsigned short type, const void *data, size_t len)
{
	struct rtattr *a = (void *)(m->buf + NLMSG_ALIGN(m->h.nlmsg_len));

	assert_true(NLMSG_ALIGN(m->h.nlmsg_len) + RTA_SPACE(len) <= sizeof(m->buf));
	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	m->h.nlmsg_len = NLMSG_ALIGN(m->h.nlmsg_len) + RTA_ALIGN(a->rta_len);
	return a;
}

static void nl_nest(struct nlmsg *m, unsigned short type)
{
	m->nest[m->depth++] = nl_put(m, type | NLA_F_NESTED, NULL, 0);
}

static void nl_end(struct nlmsg *m)
{
	struct rtattr *a = m->nest[--m->depth];

	a->rta_len = (unsigned short)((m->buf + m->h.nlmsg_len) - (char *)a);
}

/* A link message of device @ifindex, up, named @name, of kind @kind: its
 * IFLA_INFO_DATA opened (close with link_end()). */
static void link_start(struct nlmsg *m, int ifindex, const char *name, const char *kind)
{
	struct ifinfomsg *ifi;

	memset(m, 0, sizeof(*m));
	m->h.nlmsg_type = RTM_NEWLINK;
	m->h.nlmsg_len = NLMSG_LENGTH(sizeof(*ifi));
	ifi = NLMSG_DATA(&m->h);
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = IFF_UP;
	nl_put(m, IFLA_IFNAME, name, strlen(name) + 1);
	nl_nest(m, IFLA_LINKINFO);
	nl_put(m, IFLA_INFO_KIND, kind, strlen(kind));
	nl_nest(m, IFLA_INFO_DATA);
}

static void link_end(struct nlmsg *m)
{
	nl_end(m);
	nl_end(m);
}

static void mapped(const char *v4, __u8 out[16])
{
	memset(out, 0, 16);
	out[10] = out[11] = 0xff;
	assert_int_equal(inet_pton(AF_INET, v4, out + 12), 1);
}

static const struct shedd_tun_key *dev_of(const struct tun_found *f, __u8 kind, __u32 *ifindex)
{
	unsigned int i;

	for (i = 0; i < f->nr_devs; i++)
		if (f->dev_key[i].kind == kind) {
			*ifindex = f->dev_ifindex[i];
			return &f->dev_key[i];
		}
	fail_msg("no device of kind %u", kind);
	return NULL;
}

/* What the daemon keeps of each device, from the attributes the kernel
 * gives (vxlan_fill_info(), geneve_fill_info(), ipgre_fill_info(),
 * ipip_fill_info()): the key the program looks it up by. */
static void test_scan_links(void **state)
{
	static struct tun_found f;
	const struct shedd_tun_key *k;
	struct nlmsg m;
	__u8 addr[16], zero[16] = { 0 };
	__u32 u32, ifindex, master = 99;
	__be32 a4;
	__be16 be;
	__u8 u8;

	(void)state;
	memset(&f, 0, sizeof(f));
	/* VXLAN of VNI 42 on 4789, a port of bridge 99. */
	link_start(&m, 10, "vx0", "vxlan");
	u32 = 42;
	nl_put(&m, IFLA_VXLAN_ID, &u32, 4);
	be = htons(4789);
	nl_put(&m, IFLA_VXLAN_PORT, &be, 2);
	u8 = 0;
	nl_put(&m, IFLA_VXLAN_COLLECT_METADATA, &u8, 1);
	link_end(&m);
	nl_put(&m, IFLA_MASTER, &master, 4);
	tun_scan_link(&f, &m.h);
	k = dev_of(&f, SHEDD_TDEV_VXLAN, &ifindex);
	assert_int_equal(k->id, 42);
	assert_int_equal(k->port, 4789);
	assert_int_equal(k->flags, 0);
	assert_memory_equal(k->remote, zero, 16);
	assert_int_equal(ifindex, 99); /* the bridge: rp_filter's device */
	assert_int_equal(f.udp_port[0], 4789);
	/* Geneve of VNI 7 from 198.18.0.1. */
	link_start(&m, 11, "gn0", "geneve");
	u32 = 7;
	nl_put(&m, IFLA_GENEVE_ID, &u32, 4);
	assert_int_equal(inet_pton(AF_INET, "198.18.0.1", &a4), 1);
	nl_put(&m, IFLA_GENEVE_REMOTE, &a4, 4);
	be = htons(6081);
	nl_put(&m, IFLA_GENEVE_PORT, &be, 2);
	link_end(&m);
	tun_scan_link(&f, &m.h);
	k = dev_of(&f, SHEDD_TDEV_GENEVE, &ifindex);
	mapped("198.18.0.1", addr);
	assert_int_equal(k->id, 7);
	assert_memory_equal(k->remote, addr, 16);
	assert_int_equal(ifindex, 11);
	/* gre with key 7 (as on the wire), csum and seq, both endpoints. */
	link_start(&m, 12, "gre1", "gre");
	be = GRE_KEY | GRE_CSUM | GRE_SEQ;
	nl_put(&m, IFLA_GRE_IFLAGS, &be, 2);
	a4 = htonl(7);
	nl_put(&m, IFLA_GRE_IKEY, &a4, 4);
	assert_int_equal(inet_pton(AF_INET, "198.18.0.2", &a4), 1);
	nl_put(&m, IFLA_GRE_LOCAL, &a4, 4);
	assert_int_equal(inet_pton(AF_INET, "198.18.0.1", &a4), 1);
	nl_put(&m, IFLA_GRE_REMOTE, &a4, 4);
	link_end(&m);
	tun_scan_link(&f, &m.h);
	k = dev_of(&f, SHEDD_TDEV_GRE, &ifindex);
	assert_int_equal(k->flags, TUN_KEY_KEYED);
	assert_int_equal(k->id, htonl(7));
	mapped("198.18.0.2", addr);
	assert_memory_equal(k->local, addr, 16);
	mapped("198.18.0.1", addr);
	assert_memory_equal(k->remote, addr, 16);
	assert_true(f.kinds & SHEDD_TUN_GRE);
	/* gretap of a multicast remote: by the group, from anyone. */
	link_start(&m, 13, "gt0", "gretap");
	assert_int_equal(inet_pton(AF_INET, "239.1.1.1", &a4), 1);
	nl_put(&m, IFLA_GRE_REMOTE, &a4, 4);
	a4 = 0;
	nl_put(&m, IFLA_GRE_LOCAL, &a4, 4);
	link_end(&m);
	tun_scan_link(&f, &m.h);
	k = dev_of(&f, SHEDD_TDEV_GRETAP, &ifindex);
	mapped("239.1.1.1", addr);
	assert_memory_equal(k->local, addr, 16);
	assert_memory_equal(k->remote, zero, 16);
	assert_int_equal(f.local[f.nr_local - 1].addr[12], 239);
	/* tunl0 up (Calico): every IPv4-in-IPv4 packet. */
	link_start(&m, 14, "tunl0", "ipip");
	a4 = 0;
	nl_put(&m, IFLA_IPTUN_LOCAL, &a4, 4);
	link_end(&m);
	tun_scan_link(&f, &m.h);
	k = dev_of(&f, SHEDD_TDEV_IPIP, &ifindex);
	assert_int_equal(k->flags, TUN_KEY_ANY);
	/* sit of mode any: IPv6 in IPv4 and IPv4 in IPv4, by its remote. */
	link_start(&m, 15, "sit1", "sit");
	u8 = 0;
	nl_put(&m, IFLA_IPTUN_PROTO, &u8, 1);
	assert_int_equal(inet_pton(AF_INET, "198.18.0.1", &a4), 1);
	nl_put(&m, IFLA_IPTUN_REMOTE, &a4, 4);
	link_end(&m);
	tun_scan_link(&f, &m.h);
	k = dev_of(&f, SHEDD_TDEV_SIT, &ifindex);
	mapped("198.18.0.1", addr);
	assert_memory_equal(k->remote, addr, 16);
	assert_int_equal(ifindex, 15);
	assert_int_equal(f.nr_devs, 7); /* the sit device twice, as SIT and IPIP */
	assert_int_equal(f.dev_key[6].kind, SHEDD_TDEV_IPIP);
	assert_memory_equal(f.dev_key[6].remote, addr, 16);
	/* A collect_md Geneve device: any. */
	link_start(&m, 16, "gn1", "geneve");
	be = htons(6082);
	nl_put(&m, IFLA_GENEVE_PORT, &be, 2);
	nl_put(&m, IFLA_GENEVE_COLLECT_METADATA, NULL, 0);
	link_end(&m);
	tun_scan_link(&f, &m.h);
	assert_int_equal(f.dev_key[7].flags, TUN_KEY_ANY);
	assert_int_equal(f.dev_key[7].port, 6082);
	/* Every device read: every kind matched. */
	assert_int_equal(f.dev_unread, 0);
	assert_int_equal(tun_match(&f) & 0xff,
			 SHEDD_TUN_MATCH(SHEDD_TDEV_VXLAN) | SHEDD_TUN_MATCH(SHEDD_TDEV_GENEVE) |
			 SHEDD_TUN_MATCH(SHEDD_TDEV_GRE) | SHEDD_TUN_MATCH(SHEDD_TDEV_GRETAP) |
			 SHEDD_TUN_MATCH(SHEDD_TDEV_IPIP) | SHEDD_TUN_MATCH(SHEDD_TDEV_SIT));
	/* A VXLAN device without its VNI: VXLAN is not matched. */
	link_start(&m, 17, "vx1", "vxlan");
	be = htons(4790);
	nl_put(&m, IFLA_VXLAN_PORT, &be, 2);
	link_end(&m);
	tun_scan_link(&f, &m.h);
	assert_false(tun_match(&f) & SHEDD_TUN_MATCH(SHEDD_TDEV_VXLAN));
	/* A device that is down is not read. */
	link_start(&m, 18, "gre2", "gre");
	link_end(&m);
	((struct ifinfomsg *)NLMSG_DATA(&m.h))->ifi_flags = 0;
	tun_scan_link(&f, &m.h);
	assert_int_equal(f.nr_devs, 9);
}

/* The decapsulating devices the program does not open: each one up is
 * counted by kind and named, none is taken for a kind the program opens;
 * one that is down is not counted (the kernel opens nothing for it). */
static void test_unjudged(void **state)
{
	static const char *const kinds[] = { "bareudp", "erspan", "ip6erspan", "l2tpeth",
					     "wireguard", "xfrm", "vti", "vti6" };
	static struct tun_found f, old;
	struct nlmsg m;
	char name[IF_NAMESIZE];
	unsigned int i;
	__u8 u8 = 1;

	(void)state;
	memset(&f, 0, sizeof(f));
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		snprintf(name, sizeof(name), "t%u", i);
		link_start(&m, (int)(20 + i), name, kinds[i]);
		link_end(&m);
		tun_scan_link(&f, &m.h);
		assert_int_equal(tun_unjudged_kind(kinds[i]), (int)i);
		assert_int_equal(f.unjudged[i], 1);
		assert_int_equal(f.uj_dev[i].ifindex, 20 + i);
		assert_int_equal(f.uj_dev[i].kind, i);
		assert_string_equal(f.uj_dev[i].name, name);
		assert_string_equal(tun_unjudged_name(i), kinds[i]);
	}
	/* A VXLAN-GPE device is one; its port is not opened. */
	link_start(&m, 30, "gpe0", "vxlan");
	nl_put(&m, IFLA_VXLAN_GPE, &u8, 0);
	link_end(&m);
	tun_scan_link(&f, &m.h);
	assert_int_equal(f.unjudged[TUN_UJ_VXLAN_GPE], 1);
	assert_string_equal(f.uj_dev[8].name, "gpe0");
	assert_string_equal(tun_unjudged_name(TUN_UJ_VXLAN_GPE), "vxlan_gpe");
	assert_int_equal(f.nr_uj, 9);
	assert_int_equal(f.kinds, 0);
	assert_int_equal(f.nr_devs, 0);
	assert_int_equal(f.nr_ports, 0);
	/* Opened kinds and other devices are not among them. */
	assert_int_equal(tun_unjudged_kind("gre"), -1);
	assert_int_equal(tun_unjudged_kind("vxlan"), -1);
	assert_int_equal(tun_unjudged_kind("veth"), -1);
	/* Down: not counted. */
	link_start(&m, 31, "wg1", "wireguard");
	link_end(&m);
	((struct ifinfomsg *)NLMSG_DATA(&m.h))->ifi_flags = 0;
	tun_scan_link(&f, &m.h);
	assert_int_equal(f.unjudged[TUN_UJ_WIREGUARD], 1);
	/* New since a former read: another ifindex, name or kind. */
	old = f;
	assert_false(tun_unjudged_new(&old, &f.uj_dev[4]));
	f.uj_dev[4].ifindex = 99;
	assert_true(tun_unjudged_new(&old, &f.uj_dev[4]));
	/* Past MAX_TUN_UNJUDGED: counted, not named. */
	memset(&f, 0, sizeof(f));
	for (i = 0; i < MAX_TUN_UNJUDGED + 3; i++)
		tun_add_unjudged(&f, i + 1, "wg", TUN_UJ_WIREGUARD);
	assert_int_equal(f.unjudged[TUN_UJ_WIREGUARD], MAX_TUN_UNJUDGED + 3);
	assert_int_equal(f.nr_uj, MAX_TUN_UNJUDGED);
	tun_add_unjudged(&f, 1, "x", TUN_UJ_NR);
	assert_int_equal(f.nr_uj, MAX_TUN_UNJUDGED);
}

/* put_file DIR NAME VALUE: a sysctl file of the fixture. */
static void put_file(const char *dir, const char *name, const char *value)
{
	char path[512];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(value, fp);
	fclose(fp);
}

/* MPLS as af_mpls.c shows it under /proc/sys/net/mpls: devices named
 * when platform_labels is above 0 and their input is 1; none without
 * the table (no mpls_router module). */
static void test_mpls(void **state)
{
	static struct tun_found f;
	char root[] = "/tmp/test_tunnels.XXXXXX", dir[512];

	(void)state;
	assert_non_null(mkdtemp(root));
	memset(&f, 0, sizeof(f));
	/* No module: nothing, no error. */
	snprintf(dir, sizeof(dir), "%s/absent", root);
	assert_int_equal(tun_scan_mpls(&f, dir), 0);
	assert_int_equal(f.nr_uj, 0);
	put_file(root, "platform_labels", "0\n");
	snprintf(dir, sizeof(dir), "%s/conf", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/conf/eth1", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	put_file(dir, "input", "1\n");
	snprintf(dir, sizeof(dir), "%s/conf/eth2", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	put_file(dir, "input", "0\n");
	snprintf(dir, sizeof(dir), "%s/conf/all", root);
	assert_int_equal(mkdir(dir, 0700), 0);
	put_file(dir, "input", "1\n");
	/* No labels: the kernel takes no MPLS frame. */
	assert_int_equal(tun_scan_mpls(&f, root), 0);
	assert_int_equal(f.nr_uj, 0);
	assert_false(tun_mpls_changed(&f, root));
	/* Labels: the device with input 1, not "all", not eth2. */
	put_file(root, "platform_labels", "100\n");
	assert_true(tun_mpls_changed(&f, root));
	assert_int_equal(tun_scan_mpls(&f, root), 0);
	assert_int_equal(f.unjudged[TUN_UJ_MPLS], 1);
	assert_int_equal(f.nr_uj, 1);
	assert_string_equal(f.uj_dev[0].name, "eth1");
	assert_string_equal(tun_unjudged_name(TUN_UJ_MPLS), "mpls");
	assert_int_equal(tun_unjudged_kind("mpls"), -1);
	assert_false(tun_mpls_changed(&f, root));
	/* Junk in a file reads as not set. */
	put_file(root, "platform_labels", "x\n");
	assert_true(tun_mpls_changed(&f, root));
	snprintf(dir, sizeof(dir), "rm -rf '%s'", root);
	assert_int_equal(system(dir), 0);
}

static void test_describe(void **state)
{
	static struct tun_found f;
	char buf[128];

	(void)state;
	memset(&f, 0, sizeof(f));
	tun_describe(&f, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	f.kinds = SHEDD_TUN_IPIP | SHEDD_TUN_GRE6;
	tun_add_port(&f, 4789, SHEDD_UDP_VXLAN);
	tun_add_port(&f, 6081, SHEDD_UDP_GENEVE);
	tun_describe(&f, buf, sizeof(buf));
	assert_string_equal(buf, "ipip ip6gre vxlan:4789 geneve:6081");
	/* FOU ports with their protocol and family, GUE ports. */
	tun_add_fou(&f, 5555, SHEDD_UDP_FOU, IPPROTO_IPIP, 4);
	tun_add_fou(&f, 5556, SHEDD_UDP_GUE, 0, 6);
	tun_describe(&f, buf, sizeof(buf));
	assert_string_equal(buf, "ipip ip6gre vxlan:4789 geneve:6081 fou:5555/4/ipv4 gue:5556/ipv6");
	/* Cut to the buffer, still a string. */
	tun_describe(&f, buf, 8);
	assert_int_equal(strlen(buf), 7);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_ports_once_and_bounded),
		cmocka_unit_test(test_local_addresses),
		cmocka_unit_test(test_devices_and_match),
		cmocka_unit_test(test_multicast),
		cmocka_unit_test(test_scan_links),
		cmocka_unit_test(test_unjudged),
		cmocka_unit_test(test_mpls),
		cmocka_unit_test(test_describe),
	};

	return cmocka_run_group_tests_name("tunnels", tests, NULL, NULL);
}
