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
#include <string.h>
#include <netinet/in.h>
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
		cmocka_unit_test(test_describe),
	};

	return cmocka_run_group_tests_name("tunnels", tests, NULL, NULL);
}
