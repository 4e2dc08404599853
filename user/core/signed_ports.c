// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* signed_ports.c - see signed_ports.h. */
#include <stdio.h>
#include <string.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "signed_ports.h"

/* Is the nested INET_DIAG_ULP_INFO attribute @a that of the MPTCP ULP? */
static bool ulp_is_mptcp(const struct rtattr *a)
{
	const struct rtattr *n = RTA_DATA(a);
	size_t left = RTA_PAYLOAD(a);
	static const char name[] = "mptcp";

	for (; RTA_OK(n, left); n = RTA_NEXT(n, left)) {
		if (n->rta_type != INET_ULP_INFO_NAME)
			continue;
		/* A NUL-terminated string, as tcp_diag_put_ulp() writes it. */
		return RTA_PAYLOAD(n) >= sizeof(name) &&
		       !memcmp(RTA_DATA(n), name, sizeof(name));
	}
	return false;
}

__u32 signed_listener_kinds(const struct inet_diag_msg *m, size_t len)
{
	const struct rtattr *a;
	__u32 kinds = 0;
	size_t left;

	if (len < NLMSG_ALIGN(sizeof(*m)))
		return 0;
	a = (const struct rtattr *)((const char *)m + NLMSG_ALIGN(sizeof(*m)));
	left = len - NLMSG_ALIGN(sizeof(*m));
	for (; RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		/* One key at least: the kernel leaves the attribute out when
		 * the listener has none (tcp_diag_put_md5sig()). */
		if (a->rta_type == INET_DIAG_MD5SIG && RTA_PAYLOAD(a) > 0)
			kinds |= SIGNED_MD5;
		else if (a->rta_type == INET_DIAG_ULP_INFO && ulp_is_mptcp(a))
			kinds |= SIGNED_MPTCP;
	}
	return kinds;
}

void signed_ports_add(struct signed_ports *s, __u16 port, __u32 kinds)
{
	unsigned int i;

	if (!kinds)
		return;
	for (i = 0; i < s->n && s->port[i] < port; i++)
		;
	if (i < s->n && s->port[i] == port) {
		s->kinds[i] |= (__u8)kinds;
		return;
	}
	if (s->n == MAX_SIGNED_PORTS) {
		/* Kept are the lowest ports: what the operator sees first. */
		if (i == s->n) {
			s->over++;
			return;
		}
		s->n--;
		s->over++;
	}
	memmove(&s->port[i + 1], &s->port[i], (s->n - i) * sizeof(s->port[0]));
	memmove(&s->kinds[i + 1], &s->kinds[i], (s->n - i) * sizeof(s->kinds[0]));
	s->port[i] = port;
	s->kinds[i] = (__u8)kinds;
	s->n++;
}

bool signed_ports_equal(const struct signed_ports *a, const struct signed_ports *b)
{
	return a->n == b->n && a->over == b->over &&
	       !memcmp(a->port, b->port, a->n * sizeof(a->port[0])) &&
	       !memcmp(a->kinds, b->kinds, a->n * sizeof(a->kinds[0]));
}

void signed_ports_describe(const struct signed_ports *s, char *buf, size_t len)
{
	size_t used = 0;
	unsigned int i;
	int w;

	if (!len)
		return;
	buf[0] = '\0';
	if (!s->n) {
		snprintf(buf, len, "none");
		return;
	}
	for (i = 0; i < s->n && used < len; i++) {
		__u8 k = s->kinds[i];

		w = snprintf(buf + used, len - used, "%s%u (%s)", i ? ", " : "", s->port[i],
			     k == (SIGNED_MD5 | SIGNED_MPTCP) ? "TCP-MD5, MPTCP" :
			     k == SIGNED_MD5 ? "TCP-MD5" : "MPTCP");
		if (w < 0)
			return;
		used += (size_t)w;
	}
	if (s->over && used < len)
		snprintf(buf + used, len - used, " and %u more", s->over);
}

unsigned int signed_ports_count(const struct signed_ports *s, __u32 kind)
{
	unsigned int i, n = 0;

	for (i = 0; i < s->n; i++)
		n += (s->kinds[i] & kind) != 0;
	return n;
}
