/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* listener_sim.h - what the tests of listeners judged one by one
 * (test_listeners.c, test_ports.c) share: the controller's verdict on a
 * tick of judged listeners, and the service their simulations stand in
 * front of the daemon's own tick: MAX_L listeners of W
 * workers each, exponential service of mean SVC_NS, an accept queue of
 * BACKLOG with the kernel's overflow check; the program's bucket of every
 * class at the daemon's defaults; what the probes, sock_diag and netstat
 * read each tick; and the event loop, one listener group stopping at
 * STOP_NS if asked. Each simulation keeps how its clients arrive, what it
 * counts as served and how it judges the listeners (struct qsim_ops).
 * Deterministic (splitmix64 streams seeded with SEED, no wall clock).
 * The includer defines MS, SEC and NCLS (SHEDD_NR_CLASSES).
 */
#ifndef SHEDD_LISTENER_SIM_H
#define SHEDD_LISTENER_SIM_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "aimd.h"
#include "alloc.h"
#include "listeners.h"
#include "signal_parse.h"
#include "sim_daemon.h"
#include "splitmix.h"
#include "tick.h"
#include "token_bucket.h"

/* The controller's verdict (aimd_overloaded()'s reasons, 0: none) on a
 * tick with the listeners of @v judged in @ngroups groups, the sojourn
 * calm (the listeners that accept do so at once). */
static unsigned int verdict(const struct listener_verdict *v, int ngroups)
{
	struct signal_report r = {
		.have_sojourn = true,
		.sojourn = { .count = 50, .min_ns = 100000 },
		.have_depth = true,
		.have_netstat = true,
		.overflows = v->drops,
		.have_listen_drops = true,
		.have_queue_left = true,
		.queue_left = 50,
		.have_completed = true,
		.completed = 50,
	};
	struct tick_input in = { .now_ns = 10 * SEC, .dt_ns = 100 * MS, .sig = &r };
	struct aimd_params p;
	struct aimd_state s;
	struct aimd_signals sig;

	listeners_report(&r, v, ngroups);
	aimd_defaults(&p);
	aimd_init(&s, &p, 1000);
	tick_controller_signals(&in, 100, &sig);
	return aimd_overloaded(&p, &s, &sig, in.now_ns);
}

#define W 2                    /* workers a listener */
#define SVC_NS (10 * MS)       /* mean service time: 200 req/s a listener */
#define BACKLOG 128
#define PATIENCE_NS (1 * SEC)
#define TICK_NS (100 * MS)
#define STOP_NS (10 * SEC)
#define WIN_START_NS (15 * SEC)
#define WIN_END_NS (40 * SEC)
#define RUN_NS (WIN_END_NS + 2 * PATIENCE_NS)
#define MAX_L 64
#define SEED 0x5eedd5eeddULL

struct conn {
	__u64 syn_ns;
};

struct lsn {
	struct conn q[BACKLOG];
	unsigned int head, len;
	bool busy[W];
	__u64 done_ns[W];
	struct conn serving[W];
	__u64 drops;     /* sk_drops: overflows */
	bool stopped;
};

/* The first member of each simulation's own state. */
struct qsim {
	int nl;
	double capacity;      /* requests/s of every listener together */
	double arrival_rate;  /* the clients' SYNs a second, Poisson */
	int stop_stride;      /* 0: nobody stops; else at STOP_NS listeners
			       * 0, stride, 2 x stride... stop accepting */
	uint64_t arr_rng, svc_rng, hash_rng;
	__u64 now_ns, next_arrival_ns;
	struct lsn l[MAX_L];
	__u16 port[MAX_L];    /* each listener's port, as sock_diag gives it */
	struct tick_params tp;
	struct tick_state ts;
	double demand[NCLS], instant[NCLS];
	struct shedd_class_rate next[NCLS];
	struct shedd_rate rates[NCLS];
	struct shedd_reserve reserve[NCLS];
	struct shedd_bucket buckets[NCLS];
	/* in the tick: what the probes, the program and netstat count */
	__u64 t_syn[NCLS], t_accepts, t_min_ns, t_overflows, t_admitted, t_completed;
	__u64 t_l_accepts[MAX_L];
	__u64 last_depth, last_tick_ns;
	struct listener_table lt[2];
	int lt_cur;
	bool have_prev, ovf_before;
	/* the window's arrivals the simulation counts, and those served
	 * within the clients' patience */
	__u64 offered, good;
	double rate_sum;
	unsigned int rate_ticks;
};

/* What a simulation does at its events. */
struct qsim_ops {
	void (*arrive)(struct qsim *q);                           /* a SYN, now */
	void (*served)(struct qsim *q, int li, struct conn c);    /* a request done */
	void (*tick)(struct qsim *q);                             /* the daemon's tick */
};

static void qsim_publish(struct qsim *q)
{
	int c;

	for (c = 0; c < NCLS; c++)
		alloc_publish(&q->rates[c].r, &q->next[c], q->reserve[c].s.last_ns, q->now_ns);
}

/* @q zeroed by the caller; @nl listeners, every one on @port. The daemon's
 * defaults; the start is the default --rate, far above the group's
 * capacity below 64 listeners. */
static void qsim_init(struct qsim *q, int nl, __u16 port)
{
	int i;

	q->nl = nl;
	q->capacity = (double)nl * W * SEC / (double)SVC_NS;
	for (i = 0; i < nl; i++)
		q->port[i] = port;
	q->arr_rng = SEED;
	q->svc_rng = SEED ^ 0xa5a5a5a5a5a5a5a5ULL;
	q->hash_rng = SEED ^ 0x5a5a5a5a5a5a5a5aULL;
	sim_daemon_defaults(&q->tp, &q->ts, 1, q->demand, q->instant);
	tick_init(&q->tp, &q->ts, 10000);
	tick_allocate(&q->tp, &q->ts, q->next);
	qsim_publish(q);
}

static void qsim_start(struct qsim *q, int li, int w, struct conn c)
{
	__u64 soj = q->now_ns - c.syn_ns;
	struct lsn *l = &q->l[li];

	l->busy[w] = true;
	l->serving[w] = c;
	l->done_ns[w] = q->now_ns + rng_exp_ns(&q->svc_rng, (double)SVC_NS);
	if (!q->t_accepts || soj < q->t_min_ns)
		q->t_min_ns = soj;
	q->t_accepts++;
	q->t_l_accepts[li]++;
}

/* The class's bucket: true if the SYN is admitted (@shedding false: no
 * shedd, every SYN is). */
static bool qsim_charge(struct qsim *q, bool shedding)
{
	q->t_syn[SHEDD_SHEDDABLE]++;
	return !shedding || tb_charge(&q->buckets[SHEDD_SHEDDABLE], &q->rates[SHEDD_SHEDDABLE],
				      &q->reserve[SHEDD_SHEDDABLE], q->now_ns);
}

/* An admitted SYN at listener @li: a free worker takes it, else its queue,
 * unless full (the kernel's check: a queue past its backlog takes no
 * more). */
static void qsim_admit(struct qsim *q, int li, struct conn c)
{
	struct lsn *l = &q->l[li];
	int w;

	q->t_admitted++;
	if (!l->stopped)
		for (w = 0; w < W; w++)
			if (!l->busy[w]) {
				q->t_completed++;
				qsim_start(q, li, w, c);
				return;
			}
	if (l->len >= BACKLOG) {
		l->drops++;
		q->t_overflows++;
		return;
	}
	q->t_completed++;
	l->q[(l->head + l->len) % BACKLOG] = c;
	l->len++;
}

/* Worker @w of listener @li finishes; it accepts the next one unless its
 * process is stopped. */
static void qsim_complete(struct qsim *q, const struct qsim_ops *ops, int li, int w)
{
	struct lsn *l = &q->l[li];

	l->busy[w] = false;
	ops->served(q, li, l->serving[w]);
	if (l->len && !l->stopped) {
		struct conn nx = l->q[l->head];

		l->head = (l->head + 1) % BACKLOG;
		l->len--;
		qsim_start(q, li, w, nx);
	}
}

/* The tick's signals as the daemon reads them: @r and @in filled, the
 * listeners' table (an accept queue of BACKLOG shows BACKLOG + 1 when
 * full, the kernel's >; the model's last slot stands for that one) in
 * q->lt[q->lt_cur]. Return: the connections queued. */
static __u64 qsim_read(struct qsim *q, struct signal_report *r, struct tick_input *in)
{
	struct listener_table *cur = &q->lt[q->lt_cur], *prev = &q->lt[!q->lt_cur];
	__u64 depth = 0;
	int i;

	*r = (struct signal_report){
		.have_sojourn = true,
		.sojourn = { .count = q->t_accepts, .min_ns = q->t_accepts ? q->t_min_ns : 0 },
		.have_depth = true,
		.have_netstat = true,
		.overflows = q->t_overflows,
		.drops = q->t_overflows,
		.have_completed = true,
		.completed = q->t_completed,
	};
	*in = (struct tick_input){
		.now_ns = q->now_ns,
		.dt_ns = q->now_ns - q->last_tick_ns,
		.sig = r,
		.syn = q->t_syn,
		.admitted = q->t_admitted,
	};
	cur->n = q->nl;
	for (i = 0; i < q->nl; i++) {
		cur->l[i] = (struct listener_sample){
			.id = { .ino = 100 + (__u64)i, .family = AF_INET, .port = q->port[i] },
			.depth = q->l[i].len + (q->l[i].len == BACKLOG),
			.backlog = BACKLOG,
			.have_drops = true,
			.drops = (__u32)q->l[i].drops,
		};
		depth += q->l[i].len;
	}
	if (!q->have_prev)
		prev->n = 0;
	return depth;
}

/* After the listeners are judged into @r: the rest of the report, and
 * this tick's table becomes the last. */
static void qsim_judged(struct qsim *q, struct signal_report *r, __u64 depth)
{
	r->have_listen_drops = q->have_prev;
	r->have_queue_left = true;
	r->queue_left = q->last_depth + q->t_completed > depth ?
				q->last_depth + q->t_completed - depth : 0;
	q->ovf_before = q->t_overflows > 0;
	q->have_prev = true;
	q->lt_cur = !q->lt_cur;
}

/* The tick's counts begin again. */
static void qsim_tick_done(struct qsim *q, __u64 depth)
{
	memset(q->t_syn, 0, sizeof(q->t_syn));
	memset(q->t_l_accepts, 0, sizeof(q->t_l_accepts));
	q->t_accepts = q->t_min_ns = q->t_overflows = q->t_admitted = q->t_completed = 0;
	q->last_depth = depth;
	q->last_tick_ns = q->now_ns;
}

static bool qsim_in_window(__u64 ns)
{
	return ns >= WIN_START_NS && ns < WIN_END_NS;
}

/* Every event in time order until RUN_NS: the stop, a worker done, the
 * tick, an arrival. */
static void qsim_run(struct qsim *q, const struct qsim_ops *ops)
{
	__u64 next_tick_ns = TICK_NS;
	bool stopped = false;

	q->next_arrival_ns = rng_exp_ns(&q->arr_rng, SEC / q->arrival_rate);
	for (;;) {
		__u64 t = q->next_arrival_ns;
		int li, w, fl = -1, fw = -1;

		for (li = 0; li < q->nl; li++)
			for (w = 0; w < W; w++)
				if (q->l[li].busy[w] && (fl < 0 || q->l[li].done_ns[w] <
								   q->l[fl].done_ns[fw])) {
					fl = li;
					fw = w;
				}
		if (fl >= 0 && q->l[fl].done_ns[fw] < t)
			t = q->l[fl].done_ns[fw];
		if (next_tick_ns <= t)
			t = next_tick_ns;
		if (STOP_NS <= t && !stopped && q->stop_stride)
			t = STOP_NS;
		if (t >= RUN_NS)
			break;
		q->now_ns = t;
		if (t == STOP_NS && !stopped && q->stop_stride) {
			stopped = true;
			for (li = 0; li < q->nl; li += q->stop_stride)
				q->l[li].stopped = true;
		} else if (fl >= 0 && t == q->l[fl].done_ns[fw]) {
			qsim_complete(q, ops, fl, fw);
		} else if (t == next_tick_ns) {
			ops->tick(q);
			next_tick_ns += TICK_NS;
		} else {
			ops->arrive(q);
			q->next_arrival_ns = q->now_ns + rng_exp_ns(&q->arr_rng, SEC / q->arrival_rate);
		}
	}
}

#endif /* SHEDD_LISTENER_SIM_H */
