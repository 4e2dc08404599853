/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* signed_ports.h - the ports whose listeners a SYN cookie cannot answer
 * for every client: a listener with TCP-MD5 keys (its signed SYNs) or an
 * MPTCP listener, as a sock_diag dump with INET_DIAG_INFO shows them. The
 * XDP program finds them on its own, in the listener's socket
 * (bpf/syncookie.h); this is what the daemon tells the operator. Pure: no
 * I/O.
 */
#ifndef SHEDD_SIGNED_PORTS_H
#define SHEDD_SIGNED_PORTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/inet_diag.h>

#define SIGNED_MD5 1U   /* a listener holds TCP-MD5 keys (INET_DIAG_MD5SIG) */
#define SIGNED_MPTCP 2U /* an MPTCP listener (ULP "mptcp", INET_DIAG_ULP_INFO) */

#ifndef MAX_SIGNED_PORTS
#define MAX_SIGNED_PORTS 32 /* ports named; more are counted */
#endif

/* The ports found in one dump, in ascending order, each with its kinds. */
struct signed_ports {
	__u16 port[MAX_SIGNED_PORTS];
	__u8 kinds[MAX_SIGNED_PORTS];
	unsigned int n;
	unsigned int over; /* ports past MAX_SIGNED_PORTS */
};

/* The SIGNED_* kinds of the listener in the sock_diag message @m of @len
 * bytes: 0 without them, or when the message is cut short. The kernel
 * shows a listener's MD5 keys and ULP only to CAP_NET_ADMIN. */
__u32 signed_listener_kinds(const struct inet_diag_msg *m, size_t len);

/* Add @kinds (non-zero) of a listener on @port (host order) to @s. */
void signed_ports_add(struct signed_ports *s, __u16 port, __u32 kinds);

bool signed_ports_equal(const struct signed_ports *a, const struct signed_ports *b);

/* "179 (TCP-MD5), 8443 (MPTCP)" into @buf, "none" for none, "and N more"
 * past those named. */
void signed_ports_describe(const struct signed_ports *s, char *buf, size_t len);

/* Ports of @s of kind @kind (SIGNED_*). */
unsigned int signed_ports_count(const struct signed_ports *s, __u32 kind);

#endif /* SHEDD_SIGNED_PORTS_H */
