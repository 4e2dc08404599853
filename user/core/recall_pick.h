/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* recall_pick.h - which open connections to send back to the door: the
 * pure half of recall.h (the daemon's sock_diag dump and SOCK_DESTROY).
 *
 * Idle: a connection of HTTP/1.1 keep-alive between two requests. Its
 * server has answered (sent data after it last received any), and
 * nothing waits: no byte unread, none unsent, none unacknowledged; it has
 * served at least one exchange; and both directions have been quiet for
 * RECALL_IDLE_MS. A request in flight (received, not yet answered) is
 * never idle: its last receive is after its last send. A connection
 * that has not yet sent its first request is not taken either.
 *
 * Order: the lowest class first, and in a class the youngest connection
 * first: the clients that came last are those the door would have
 * refused had it known; the ones before were being served.
 */
#ifndef SHEDD_RECALL_PICK_H
#define SHEDD_RECALL_PICK_H

#include <stdbool.h>
#include <linux/types.h>
#include "shedd.h"

#define RECALL_IDLE_MS 250

/* What sock_diag tells of one connection (struct inet_diag_msg and
 * struct tcp_info). */
struct recall_seen {
	__u32 rqueue, wqueue;           /* unread, unsent bytes */
	__u32 unacked;                  /* segments in flight */
	__u32 last_data_sent_ms;        /* since the last data sent */
	__u32 last_data_recv_ms;        /* ... received */
	__u64 bytes_received, bytes_acked;
};

bool recall_idle(const struct recall_seen *s);

/* An idle connection of a class, and where the caller keeps it. */
struct recall_cand {
	__u64 opened_ns;
	__u32 cls;
	__u32 idx;
};

/* Sort @c (@n of them) into the order above and keep at most @want[cls]
 * of each class (rounded down) and @budget in all at the front.
 * Return: how many to end. */
int recall_pick(struct recall_cand *c, int n, const double want[SHEDD_NR_CLASSES], int budget);

#endif /* SHEDD_RECALL_PICK_H */
