/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* recall.h - bring idle keep-alive connections back to the door
 * (--recall RATE): while the concurrency limit (conc.h) leaves a class
 * with more live connections than its share, end up to that many of its
 * idle ones (recall_pick.h: the lowest class first, the youngest first),
 * at most RATE a second, so their clients reconnect and pass admission
 * again. The connections are found with one sock_diag dump of the
 * namespace's established TCP sockets to the protected ports, each with
 * its tcp_info and its note from the probe (struct shedd_conn_note: its
 * class and age), and ended with SOCK_DESTROY (the kernel's tcp_abort():
 * a RST to the client, ECONNABORTED to the server's next call on it).
 * One mechanism on every kernel shedd runs on: SOCK_DESTROY needs
 * CONFIG_INET_DIAG_DESTROY (Debian's 6.1 and 6.12 have it), reading the
 * notes CAP_BPF. A kernel without it is said once and counted; nothing
 * else changes.
 */
#ifndef SHEDD_RECALL_H
#define SHEDD_RECALL_H

#include <stdbool.h>
#include <linux/types.h>
#include "shedd.h"

#define RECALL_MAX_CAND 65536 /* idle candidates kept from one dump */

struct recall {
	int nl;                 /* NETLINK_SOCK_DIAG in the daemon's namespace */
	int notes_fd;           /* conn_notes; -1: nothing to read classes from */
	double rate;            /* connections ended per second at most; 0: off */
	double tokens;
	const __u16 *ports;     /* the protected ports; nr_ports 0: every port */
	int nr_ports;
	int default_class;
	struct recall_cand *cand;
	void *msgs;             /* the candidates' sockets (struct inet_diag_msg) */
	int nr_cand;
	/* counted since start */
	__u64 ended[SHEDD_NR_CLASSES];
	__u64 failed;           /* SOCK_DESTROY refused (the errno said once) */
	__u64 dumps;            /* dumps made */
	bool unsupported;       /* the kernel cannot: said once, off */
	int last_err;
};

/* Open with @notes_fd (the probe's conn_notes, or -1) and @rate. */
int recall_open(struct recall *r, int notes_fd, double rate);

/* One tick of @dt_sec: @want[class] idle connections of each class to end
 * (from conc.h: live - share, when the limit is in force; NULL or all 0:
 * nothing). Return: how many were ended. */
int recall_tick(struct recall *r, const double *want, double dt_sec);

void recall_close(struct recall *r);

#endif /* SHEDD_RECALL_H */
