// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_signed_ports.c - the listeners a SYN cookie cannot answer, as a
 * sock_diag dump shows them (signed_ports.h): messages built attribute by
 * attribute as tcp_diag_get_aux() writes them (INET_DIAG_MD5SIG, a nested
 * INET_DIAG_ULP_INFO with its name), cut short and malformed; the set of
 * ports, its order, its bound and how it is told.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/tcp.h>

#include "signed_ports.h"

/* A message: the inet_diag_msg, then attributes appended by put(). */
struct diag_buf {
	union {
		struct inet_diag_msg m;
		char raw[4096];
	} u;
	size_t len;
};

static void diag_init(struct diag_buf *b)
{
	memset(b, 0, sizeof(*b));
	b->u.m.idiag_family = 2;
	b->len = NLMSG_ALIGN(sizeof(struct inet_diag_msg));
}

/* Append attribute @type with @len bytes of @data; returns it. */
static struct rtattr *put(struct diag_buf *b, unsigned short type, const void *data,
			  size_t len)
{
	struct rtattr *a = (struct rtattr *)(b->u.raw + b->len);

	a->rta_type = type;
	a->rta_len = (unsigned short)RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(a), data, len);
	b->len += RTA_ALIGN(a->rta_len);
	return a;
}

/* INET_DIAG_ULP_INFO holding INET_ULP_INFO_NAME @name (with its NUL). */
static void put_ulp(struct diag_buf *b, const char *name)
{
	char nested[64];
	struct rtattr *n = (struct rtattr *)nested;
	size_t l = strlen(name) + 1;

	n->rta_type = INET_ULP_INFO_NAME;
	n->rta_len = (unsigned short)RTA_LENGTH(l);
	memcpy(RTA_DATA(n), name, l);
	put(b, INET_DIAG_ULP_INFO, nested, RTA_ALIGN(n->rta_len));
}

static void test_kinds(void **state)
{
	struct tcp_diag_md5sig key = { .tcpm_family = 2, .tcpm_keylen = 6 };
	__u32 skmem[9] = { 0 };
	struct diag_buf b;

	(void)state;
	diag_init(&b);
	assert_int_equal(signed_listener_kinds(&b.u.m, b.len), 0);
	put(&b, INET_DIAG_SKMEMINFO, skmem, sizeof(skmem));
	assert_int_equal(signed_listener_kinds(&b.u.m, b.len), 0);
	put(&b, INET_DIAG_MD5SIG, &key, sizeof(key));
	assert_int_equal(signed_listener_kinds(&b.u.m, b.len), SIGNED_MD5);

	diag_init(&b);
	put_ulp(&b, "mptcp");
	assert_int_equal(signed_listener_kinds(&b.u.m, b.len), SIGNED_MPTCP);
	put(&b, INET_DIAG_MD5SIG, &key, sizeof(key));
	assert_int_equal(signed_listener_kinds(&b.u.m, b.len), SIGNED_MD5 | SIGNED_MPTCP);

	/* Another ULP, a name that only starts like it: not MPTCP. */
	diag_init(&b);
	put_ulp(&b, "tls");
	assert_int_equal(signed_listener_kinds(&b.u.m, b.len), 0);
	diag_init(&b);
	put_ulp(&b, "mptcpx");
	assert_int_equal(signed_listener_kinds(&b.u.m, b.len), 0);
	diag_init(&b);
	put_ulp(&b, "mptc");
	assert_int_equal(signed_listener_kinds(&b.u.m, b.len), 0);
}

/* Cut short anywhere, or with a length past the message: never read out
 * of it, never a kind it does not show whole. */
static void test_cut_short(void **state)
{
	struct tcp_diag_md5sig key = { .tcpm_family = 2, .tcpm_keylen = 6 };
	struct diag_buf b;
	struct rtattr *a;
	size_t cut;

	(void)state;
	diag_init(&b);
	put(&b, INET_DIAG_MD5SIG, &key, sizeof(key));
	for (cut = 0; cut < b.len; cut++)
		assert_int_equal(signed_listener_kinds(&b.u.m, cut), 0);
	assert_int_equal(signed_listener_kinds(&b.u.m, b.len), SIGNED_MD5);

	diag_init(&b);
	a = put(&b, INET_DIAG_MD5SIG, &key, sizeof(key));
	a->rta_len = 2; /* shorter than its own header */
	assert_int_equal(signed_listener_kinds(&b.u.m, b.len), 0);
	a->rta_len = (unsigned short)(b.len + 64); /* past the message */
	assert_int_equal(signed_listener_kinds(&b.u.m, b.len), 0);
}

static void test_ports(void **state)
{
	struct signed_ports s = { 0 }, t = { 0 };
	char buf[1024];
	unsigned int i;

	(void)state;
	signed_ports_describe(&s, buf, sizeof(buf));
	assert_string_equal(buf, "none");
	signed_ports_add(&s, 8443, SIGNED_MPTCP);
	signed_ports_add(&s, 179, SIGNED_MD5);
	signed_ports_add(&s, 179, SIGNED_MD5); /* a second listener of the port */
	signed_ports_add(&s, 80, 0);           /* nothing to tell */
	signed_ports_describe(&s, buf, sizeof(buf));
	assert_string_equal(buf, "179 (TCP-MD5), 8443 (MPTCP)");
	assert_int_equal(signed_ports_count(&s, SIGNED_MD5), 1);
	assert_int_equal(signed_ports_count(&s, SIGNED_MPTCP), 1);
	signed_ports_add(&s, 8443, SIGNED_MD5);
	signed_ports_describe(&s, buf, sizeof(buf));
	assert_string_equal(buf, "179 (TCP-MD5), 8443 (TCP-MD5, MPTCP)");

	/* The same ports found in another order: equal. */
	signed_ports_add(&t, 8443, SIGNED_MD5 | SIGNED_MPTCP);
	signed_ports_add(&t, 179, SIGNED_MD5);
	assert_true(signed_ports_equal(&s, &t));
	signed_ports_add(&t, 1790, SIGNED_MD5);
	assert_false(signed_ports_equal(&s, &t));

	/* Past the bound: the lowest ports are named, the rest counted. */
	memset(&s, 0, sizeof(s));
	for (i = 0; i < MAX_SIGNED_PORTS + 3; i++)
		signed_ports_add(&s, (__u16)(20000 - i), SIGNED_MD5);
	assert_int_equal(s.n, MAX_SIGNED_PORTS);
	assert_int_equal(s.over, 3);
	assert_int_equal(s.port[0], 20000 - (MAX_SIGNED_PORTS + 2));
	for (i = 1; i < s.n; i++)
		assert_true(s.port[i - 1] < s.port[i]);
	signed_ports_describe(&s, buf, sizeof(buf));
	assert_non_null(strstr(buf, " and 3 more"));
	/* A buffer too short is cut, terminated. */
	signed_ports_describe(&s, buf, 10);
	assert_int_equal(strlen(buf), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_cut_short),
		cmocka_unit_test(test_ports),
	};

	return cmocka_run_group_tests_name("signed_ports", tests, NULL, NULL);
}
