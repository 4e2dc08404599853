/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* signed_scan.h - the ports whose listeners a SYN cookie cannot answer
 * (signed_ports.h: TCP-MD5 keys, MPTCP), read over sock_diag at start and
 * once a second, and told when they change. The XDP program finds them on
 * its own, per SYN, in the listener's socket: this is for the operator
 * (a line on stderr, and the metric shedd_signed_listener_ports).
 */
#ifndef SHEDD_SIGNED_SCAN_H
#define SHEDD_SIGNED_SCAN_H

#include <stdbool.h>
#include <linux/types.h>

#include "options.h"
#include "signed_ports.h"

#define SIGNED_RESCAN_NS 1000000000ULL

struct signed_watch {
	struct signed_ports cur; /* what was last told */
	__u64 last_ns;           /* when last read */
	bool read;               /* read once at least */
	bool failed;             /* the last read failed (said once) */
};

/* Read the listeners of the protected ports (all of them without --port)
 * on the NETLINK_SOCK_DIAG socket @diag_fd, if @now_ns is a second past
 * the last read (or it is the first), and tell @iface's operator what
 * changed. */
void signed_watch_tick(struct signed_watch *w, int diag_fd, const struct shedd_options *o,
		       const char *iface, __u64 now_ns);

#endif /* SHEDD_SIGNED_SCAN_H */
