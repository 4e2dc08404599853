// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* recall.c - see recall.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "log.h"
#include "options.h"
#include "recall.h"
#include "recall_pick.h"
#include "sockdiag.h"

#define TCP_ESTABLISHED_ 1
/* Tokens kept at most: a fifth of a second of the rate, at least one. */
#define RECALL_BURST_SEC 0.2

int recall_open(struct recall *r, int notes_fd, double rate)
{
	memset(r, 0, sizeof(*r));
	r->nl = -1;
	r->notes_fd = notes_fd;
	r->rate = rate;
	r->nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (r->nl < 0)
		return -errno;
	return 0;
}

/* The candidates' arrays, the first time there is something to end (a
 * reload may turn --recall on: not at start). */
static int recall_alloc(struct recall *r)
{
	if (r->cand)
		return 0;
	r->cand = calloc(RECALL_MAX_CAND, sizeof(*r->cand));
	r->msgs = calloc(RECALL_MAX_CAND, sizeof(struct inet_diag_msg));
	if (r->cand && r->msgs)
		return 0;
	free(r->cand);
	free(r->msgs);
	r->cand = NULL;
	r->msgs = NULL;
	return -ENOMEM;
}

void recall_close(struct recall *r)
{
	if (r->nl >= 0)
		close(r->nl);
	r->nl = -1;
	free(r->cand);
	free(r->msgs);
	r->cand = NULL;
	r->msgs = NULL;
}

/* One socket of the dump: kept if it is a counted connection to a
 * protected port, and idle. */
static void seen(const struct inet_diag_msg *m, size_t len, void *arg)
{
	struct recall *r = arg;
	const struct shedd_conn_note *note;
	const struct tcp_info *ti;
	struct recall_seen s;
	size_t n = 0, vn = 0;
	__u32 cls;

	if (r->nr_cand >= RECALL_MAX_CAND || m->idiag_state != TCP_ESTABLISHED_ ||
	    !options_port_protected(r->ports, r->nr_ports, ntohs(m->id.idiag_sport)))
		return;
	note = sockdiag_storage(m, len, &vn);
	ti = sockdiag_attr(m, len, INET_DIAG_INFO, &n);
	if (!note || vn < sizeof(*note) || !note->counted || !ti ||
	    n < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti->tcpi_bytes_received))
		return;
	s = (struct recall_seen){
		.rqueue = m->idiag_rqueue,
		.wqueue = m->idiag_wqueue,
		.unacked = ti->tcpi_unacked,
		.last_data_sent_ms = ti->tcpi_last_data_sent,
		.last_data_recv_ms = ti->tcpi_last_data_recv,
		.bytes_received = ti->tcpi_bytes_received,
		.bytes_acked = ti->tcpi_bytes_acked,
	};
	if (!recall_idle(&s))
		return;
	cls = note->slot < SHEDD_NR_CLASSES ? note->slot : (__u32)r->default_class;
	r->cand[r->nr_cand] = (struct recall_cand){
		.opened_ns = note->opened_ns,
		.cls = cls,
		.idx = (__u32)r->nr_cand,
	};
	((struct inet_diag_msg *)r->msgs)[r->nr_cand] = *m;
	r->nr_cand++;
}

int recall_tick(struct recall *r, const double *want, double dt_sec)
{
	static const __u8 families[] = { AF_INET, AF_INET6 };
	double total = 0, burst;
	int c, i, k, ended = 0, err;

	if (r->rate <= 0 || r->unsupported || r->nl < 0 || r->notes_fd < 0)
		return 0;
	burst = r->rate * RECALL_BURST_SEC > 1 ? r->rate * RECALL_BURST_SEC : 1;
	r->tokens += r->rate * (dt_sec > 0 ? dt_sec : 0);
	if (r->tokens > burst)
		r->tokens = burst;
	for (c = 0; want && c < SHEDD_NR_CLASSES; c++)
		total += want[c] >= 1 ? want[c] : 0;
	if (total < 1 || r->tokens < 1)
		return 0;
	if ((err = recall_alloc(r))) {
		if (err != r->last_err)
			log_warn("recall: %s", strerror(-err));
		r->last_err = err;
		return 0;
	}

	r->nr_cand = 0;
	r->dumps++;
	for (i = 0; i < (int)sizeof(families); i++) {
		err = sockdiag_dump_storage(r->nl, families[i], 1U << TCP_ESTABLISHED_,
					    1U << (INET_DIAG_INFO - 1), r->notes_fd, seen, r);
		if (err) {
			if (err != r->last_err)
				log_warn("recall: the dump of established connections failed: %s",
					 strerror(-err));
			r->last_err = err;
			return 0;
		}
	}
	k = recall_pick(r->cand, r->nr_cand, want, (int)r->tokens);
	for (i = 0; i < k; i++) {
		const struct inet_diag_msg *m = &((struct inet_diag_msg *)r->msgs)[r->cand[i].idx];

		err = sockdiag_destroy(r->nl, m);
		if (err == -EOPNOTSUPP || err == -EPERM || err == -EACCES) {
			r->unsupported = true;
			r->failed++;
			log_warn("recall: the kernel refused to end a connection (%s: "
				 "SOCK_DESTROY needs CONFIG_INET_DIAG_DESTROY and CAP_NET_ADMIN); "
				 "idle connections are not ended", strerror(-err));
			return ended;
		}
		if (err) {
			/* Gone meanwhile (-ENOENT), or another error: said once. */
			if (err != -ENOENT) {
				r->failed++;
				if (err != r->last_err)
					log_warn("recall: ending a connection failed: %s",
						 strerror(-err));
				r->last_err = err;
			}
			continue;
		}
		r->tokens -= 1;
		r->ended[r->cand[i].cls]++;
		ended++;
	}
	return ended;
}
