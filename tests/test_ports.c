// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_ports.c - ports judged one by one (listeners_judge_ports()) and the
 * limits of ports in trouble of their own (port_limit.h): the verdict with
 * 1 to 64 listeners over 1 to 8 ports, one port's listeners all stopped,
 * through the controller's own verdict (aimd_overloaded()); the limiter's
 * law tick by tick; then a simulation of those listeners and ports in front
 * of the daemon's own tick pipeline (tick_step()), the real token buckets
 * (token_bucket.h) standing for the XDP program, judged as the daemon did
 * before (a port whole in trouble is overload) and port by port.
 * Deterministic (splitmix64, no wall clock).
 *
 * The simulation's model: L listeners over P ports (listener i on port
 * i % P), W workers each, exponential service of mean SVC_NS, an accept
 * queue of BACKLOG each. Poisson clients at LOAD x the capacity, each to a
 * port chosen uniformly, then hashed to one of the port's listeners;
 * patience PATIENCE_NS from the SYN; a SYN shed or overflowed is not
 * served (no retransmits). From STOP_NS every listener of port 0 accepts
 * nothing more (its server SIGSTOPped). With SHEDD_SIM_CSV=DIR the table is
 * also written as DIR/ports_stopped.csv; SHEDD_SIM_QUICK=1 leaves out 64
 * listeners (tests/sim_table.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "aimd.h"
#include "alloc.h"
#include "listeners.h"
#include "port_limit.h"
#include "signal_parse.h"
#include "splitmix.h"
#include "sim_daemon.h"
#include "sim_table.h"
#include "tick.h"
#include "token_bucket.h"

#define MS 1000000ULL
#define SEC 1000000000ULL
#define NCLS SHEDD_NR_CLASSES
#define PORT0 8080

#include "listener_sim.h" /* needs MS, SEC and NCLS */

/* ---- the verdict ---- */

#define V_BACKLOG 128

/* @n listeners over @np ports (listener i on PORT0 + i % np), group 0,
 * after one dump with every drop counter at 0: @prev, then @cur to fill. */
static void dumps(struct listener_table *prev, struct listener_table *cur, int n, int np)
{
	int i;

	prev->n = cur->n = n;
	for (i = 0; i < n; i++) {
		prev->l[i] = (struct listener_sample){
			.id = { .ino = 1000 + (__u64)i, .family = AF_INET,
				.port = (__u16)(PORT0 + i % np) },
			.backlog = V_BACKLOG,
			.have_drops = true,
		};
		cur->l[i] = prev->l[i];
	}
}

/* The listeners of port @port stopped: queues full, @ovf dropped each. */
static void stop_port(struct listener_table *cur, __u16 port, __u32 ovf)
{
	int i;

	for (i = 0; i < cur->n; i++)
		if (cur->l[i].id.port == port) {
			cur->l[i].depth = V_BACKLOG + 1;
			cur->l[i].drops += ovf;
		}
}

/* Ports PORT0 .. PORT0 + np - 1 but @but accepted lately. */
static void accepting(struct port_accepts *acc, int np, int but)
{
	int p;

	acc->n = 0;
	for (p = 0; p < np; p++)
		if (p != but)
			acc->port[acc->n++] = (__u16)(PORT0 + p);
}

static const int L_SIZES[] = { 1, 2, 3, 4, 8, 16, 32, 64 };
static const int P_SIZES[] = { 1, 2, 3, 4, 8 };
#define NR(a) (int)(sizeof(a) / sizeof((a)[0]))

/* One port of P stopped whole (every listener of it), the others accept:
 * its trouble is its own, named, and no overload; with P = 1 it is the
 * service's, as before. */
static void one_port_stopped_of_p(void **state)
{
	static struct listener_table prev, cur;
	struct port_accepts acc;
	struct listener_verdict v;
	int a, b;

	(void)state;
	for (a = 0; a < NR(L_SIZES); a++)
		for (b = 0; b < NR(P_SIZES); b++) {
			int n = L_SIZES[a], np = P_SIZES[b], per = 0, i;
			unsigned int why;

			if (n < np)
				continue;
			for (i = 0; i < n; i++)
				per += i % np == 0;
			dumps(&prev, &cur, n, np);
			stop_port(&cur, PORT0, 40);
			accepting(&acc, np, 0);
			listeners_judge_ports(&prev, &cur, 1, 0.7, true, &acc, &v);
			why = verdict(&v, 1);
			assert_int_equal(v.judged, n);
			assert_int_equal(v.nr_ports, 1);
			assert_int_equal(v.ports[0].port, PORT0);
			assert_int_equal(v.ports[0].listeners, per);
			if (np == 1) {
				if (v.ports_own || !(why & AIMD_WHY_OVERFLOW) || v.ports[0].own)
					fail_msg("%d listeners, the only port stopped: why=%#x own=%d",
						 n, why, v.ports_own);
				continue;
			}
			if (why || !v.ports[0].own || v.ports_own != 1 || v.overflows ||
			    v.port_overflows != (__u64)40 * (__u64)per || v.stuck)
				fail_msg("%d listeners over %d ports, one stopped: why=%#x own=%d "
					 "overflows=%llu port_overflows=%llu", n, np, why, v.ports_own,
					 (unsigned long long)v.overflows,
					 (unsigned long long)v.port_overflows);
			/* The group's depth is the healthy ports'. */
			assert_int_equal(v.groups[0].backlog, (__u64)(n - per) * V_BACKLOG);
			assert_int_equal(v.groups[0].depth, 0);
			assert_int_equal(v.ports[0].depth, (__u64)per * (V_BACKLOG + 1));
		}
}

/* The other ports idle (no accepts lately), or nothing counting accepts
 * port by port: no evidence anything is served, the port's trouble is the
 * service's, as before. */
static void beside_idle_ports_is_overload(void **state)
{
	static struct listener_table prev, cur;
	struct port_accepts none = { 0 };
	struct listener_verdict v;
	unsigned int why;

	(void)state;
	dumps(&prev, &cur, 8, 4);
	stop_port(&cur, PORT0, 10);
	listeners_judge_ports(&prev, &cur, 1, 0.7, true, &none, &v);
	why = verdict(&v, 1);
	assert_int_equal(v.ports_own, 0);
	assert_true(why & AIMD_WHY_OVERFLOW);
	listeners_judge_ports(&prev, &cur, 1, 0.7, true, NULL, &v);
	assert_int_equal(v.ports_own, 0);
	assert_int_equal(v.overflows, 20);
	/* A port that accepted lately but whose listeners are in trouble
	 * too is no evidence either: every port in trouble is overload. */
	dumps(&prev, &cur, 8, 4);
	stop_port(&cur, PORT0, 10);
	stop_port(&cur, PORT0 + 1, 10);
	stop_port(&cur, PORT0 + 2, 10);
	stop_port(&cur, PORT0 + 3, 10);
	accepting(&none, 4, -1);
	listeners_judge_ports(&prev, &cur, 1, 0.7, true, &none, &v);
	why = verdict(&v, 1);
	assert_int_equal(v.ports_own, 0);
	assert_int_equal(v.nr_ports, 4);
	assert_true(why & AIMD_WHY_OVERFLOW);
	assert_true(why & AIMD_WHY_DEPTH);
}

/* One listener of a port stuck among calm siblings stays a stuck
 * listener (listeners.h), not a port in trouble; a backend port (its own
 * group) whole in trouble is the backend's overload whatever the
 * protected ports do. */
static void listeners_and_groups_as_before(void **state)
{
	static struct listener_table prev, cur;
	struct port_accepts acc;
	struct listener_verdict v;

	(void)state;
	dumps(&prev, &cur, 8, 2);
	cur.l[0].depth = V_BACKLOG + 1;
	cur.l[0].drops += 5;
	accepting(&acc, 2, -1);
	listeners_judge_ports(&prev, &cur, 1, 0.7, true, &acc, &v);
	assert_int_equal(v.stuck, 1);
	assert_int_equal(v.nr_ports, 0);
	assert_int_equal(verdict(&v, 1), 0);

	dumps(&prev, &cur, 5, 1);
	cur.l[4].group = 1;
	cur.l[4].id.port = 9000;
	cur.l[4].depth = V_BACKLOG + 1;
	cur.l[4].drops += 3;
	acc.n = 1;
	acc.port[0] = PORT0;
	listeners_judge_ports(&prev, &cur, 2, 0.7, true, &acc, &v);
	assert_int_equal(v.ports_own, 0);
	assert_int_equal(v.overflows, 3);
	assert_int_equal(v.groups[1].depth, V_BACKLOG + 1);
}

/* ---- the limiter's law ---- */

static struct listener_verdict one_port(__u16 port, bool own)
{
	struct listener_verdict v = { .nr_ports = 1, .ports_own = own };

	v.ports[0] = (struct port_trouble){ .port = port, .own = own, .listeners = 1 };
	return v;
}

/* Two ticks of its own trouble and a port gets a limit at beta x what it
 * accepts (the floor when it accepts nothing); cut while in trouble; once
 * out of it, doubled each tick and removed when it reaches the service's
 * limit; its slot reused only two ticks later. */
static void limiter_law(void **state)
{
	struct port_limit_params p;
	struct port_limit_state s;
	struct listener_verdict calm = { 0 }, own = one_port(PORT0, true);
	struct port_count acc = { PORT0, 10 }; /* 100/s at a tick of 100 ms */
	struct port_limit_input in = { .v = &own, .accepts = &acc, .nr_accepts = 1,
				       .dt_ns = 100 * MS, .service_limit = 1000 };
	int t;

	(void)state;
	port_limit_defaults(&p);
	port_limit_init(&s);
	port_limit_update(&p, &s, &in);
	assert_int_equal(s.nr_active, 0);
	assert_int_equal(s.n, 1);
	port_limit_update(&p, &s, &in);
	assert_int_equal(s.nr_active, 1);
	assert_int_equal(s.nr_events, 1);
	assert_int_equal(s.ev[0], PORT_LIMIT_ADDED);
	assert_true(s.e[0].active);
	assert_float_equal(s.e[0].rate, 90, 1e-9); /* 0.9 x 100/s */
	/* It stops accepting: cut to the floor. */
	in.nr_accepts = 0;
	for (t = 0; t < 100; t++)
		port_limit_update(&p, &s, &in);
	assert_float_equal(s.e[0].rate, p.min_rate, 1e-9);
	assert_true(s.e[0].changed == false);
	/* Out of trouble: doubled a tick, removed once at the service's. */
	in.v = &calm;
	for (t = 0; t < 9; t++) {
		port_limit_update(&p, &s, &in);
		assert_int_equal(s.nr_active, 1);
		assert_float_equal(s.e[0].rate, pow(2, t + 1), 1e-9);
	}
	port_limit_update(&p, &s, &in); /* 1024 >= 1000 */
	assert_int_equal(s.nr_active, 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(s.nr_removed, 1);
	assert_int_equal(s.removed[0], PORT0);
	assert_int_equal(s.ev[0], PORT_LIMIT_REMOVED);
	/* A candidate out of trouble before its second tick is forgotten. */
	in.v = &own;
	port_limit_update(&p, &s, &in);
	in.v = &calm;
	port_limit_update(&p, &s, &in);
	assert_int_equal(s.n, 0);
	/* Trouble that became the service's (not own) keeps a limit cut,
	 * and adds none. */
	{
		struct listener_verdict shared = one_port(PORT0 + 1, false);

		in.v = &shared;
		port_limit_update(&p, &s, &in);
		port_limit_update(&p, &s, &in);
		assert_int_equal(s.n, 0);
	}
}

/* More ports in trouble of their own than slots: MAX_PORT_LIMITS are
 * limited, the next is said once and left to its class. */
static void limiter_slots(void **state)
{
	struct port_limit_params p;
	struct port_limit_state s;
	static struct listener_verdict v;
	struct port_limit_input in = { .v = &v, .dt_ns = 100 * MS, .service_limit = 1000 };
	int i, full = 0, t;
	bool used[MAX_PORT_LIMITS] = { false };

	(void)state;
	port_limit_defaults(&p);
	port_limit_init(&s);
	memset(&v, 0, sizeof(v));
	v.nr_ports = MAX_PORT_LIMITS + 1;
	for (i = 0; i < v.nr_ports; i++)
		v.ports[i] = (struct port_trouble){ .port = (__u16)(PORT0 + i), .own = true };
	for (t = 0; t < 4; t++) {
		port_limit_update(&p, &s, &in);
		for (i = 0; i < s.nr_events; i++)
			full += s.ev[i] == PORT_LIMIT_FULL;
	}
	assert_int_equal(s.nr_active, MAX_PORT_LIMITS);
	assert_int_equal(full, 1);
	for (i = 0; i < s.n; i++)
		if (s.e[i].active) {
			assert_false(used[s.e[i].slot]);
			used[s.e[i].slot] = true;
		}
}

/* ---- the simulation ---- */

#define MAX_P 8

enum judge { NO_SHEDD, BEFORE, PORTS };

struct psim {
	struct qsim q; /* first */
	enum judge judge;
	int np;
	double hot;          /* 0: port 0 stops at STOP_NS; else its clients
			      * come at hot x its capacity, and it runs */
	double rate0;        /* arrivals/s at port 0 */
	/* the XDP program's port limits: by port index */
	struct port_limit_params plp;
	struct port_limit_state pls;
	bool limited[MAX_P];
	struct shedd_rate prate[MAX_P];
	struct shedd_reserve preserve[MAX_P];
	struct shedd_bucket pbucket[MAX_P];
	__u64 port_shed, port_syn;
	__u64 last_accept_tick[MAX_P]; /* the tick of a port's last accept */
	__u64 ticks;
	/* the window's arrivals at port 0, and those served (q.offered and
	 * q.good: at the healthy ports 1..np-1) */
	__u64 offered0, good0;
	unsigned int own_ticks, limited_ticks;
};

static int port_of(const struct psim *s, int li)
{
	return li % s->np;
}

static bool counted(const struct psim *s, int li, __u64 syn_ns)
{
	return (s->np == 1 || port_of(s, li) != 0) && qsim_in_window(syn_ns);
}

static void served(struct qsim *q, int li, struct conn c)
{
	struct psim *s = (struct psim *)q;

	if (counted(s, li, c.syn_ns) && q->now_ns - c.syn_ns <= PATIENCE_NS)
		q->good++;
	if (port_of(s, li) == 0 && qsim_in_window(c.syn_ns) && q->now_ns - c.syn_ns <= PATIENCE_NS)
		s->good0++;
}

/* A SYN: to a port chosen uniformly, hashed to one of its listeners; the
 * port's own limit first, then the class's bucket, as the program. */
static void arrive(struct qsim *q)
{
	struct psim *s = (struct psim *)q;
	struct conn c = { .syn_ns = q->now_ns };
	int port = rng_unit(&q->hash_rng) * q->arrival_rate < s->rate0 ?
			   0 : 1 + (int)(rng_next(&q->hash_rng) % (__u64)(s->np > 1 ? s->np - 1 : 1));
	int per = (q->nl - port + s->np - 1) / s->np; /* listeners of the port */
	int li = port + s->np * (int)(rng_next(&q->hash_rng) % (__u64)per);

	if (counted(s, li, c.syn_ns))
		q->offered++;
	if (port == 0 && qsim_in_window(c.syn_ns))
		s->offered0++;
	if (s->judge == PORTS && s->limited[port]) {
		s->port_syn++;
		if (!tb_charge(&s->pbucket[port], &s->prate[port], &s->preserve[port], q->now_ns)) {
			s->port_shed++;
			return;
		}
	}
	if (qsim_charge(q, s->judge != NO_SHEDD))
		qsim_admit(q, li, c);
}

/* What the daemon's port_tick() writes, into the simulated program. */
static void ports_publish(struct psim *s)
{
	bool now[MAX_P] = { false };
	int i, p;

	for (i = 0; i < s->pls.n; i++) {
		const struct port_limit_entry *e = &s->pls.e[i];
		struct shedd_port_limit rec;

		if (!e->active)
			continue;
		p = e->port - PORT0;
		now[p] = true;
		port_limit_record(e, ALLOC_MAX_LEASE_NS, s->q.now_ns, &rec);
		if (!s->limited[p]) {
			memset(&s->preserve[p], 0, sizeof(s->preserve[p]));
			memset(&s->pbucket[p], 0, sizeof(s->pbucket[p]));
			s->prate[p].r = rec.r;
		} else {
			alloc_publish(&s->prate[p].r, &rec.r, s->preserve[p].s.last_ns, s->q.now_ns);
		}
	}
	for (p = 0; p < s->np; p++)
		s->limited[p] = now[p];
}

static void tick(struct qsim *q)
{
	struct psim *s = (struct psim *)q;
	struct listener_table *cur = &q->lt[q->lt_cur], *prev = &q->lt[!q->lt_cur];
	struct port_accepts acc = { 0 };
	struct port_count counts[MAX_P];
	struct listener_verdict v;
	struct signal_report r;
	struct tick_input in;
	__u64 depth, port_accepts[MAX_P] = { 0 };
	int i, nc = 0;

	s->ticks++;
	depth = qsim_read(q, &r, &in);
	for (i = 0; i < q->nl; i++)
		port_accepts[port_of(s, i)] += q->t_l_accepts[i];
	for (i = 0; i < s->np; i++) {
		if (port_accepts[i]) {
			s->last_accept_tick[i] = s->ticks;
			counts[nc++] = (struct port_count){ (__u16)(PORT0 + i), port_accepts[i] };
		}
		if (s->last_accept_tick[i] && s->ticks - s->last_accept_tick[i] < 10)
			acc.port[acc.n++] = (__u16)(PORT0 + i);
	}
	listeners_judge_ports(prev, cur, 1, q->tp.cp.depth_frac,
			      overflow_drops(1, true, q->t_overflows, q->ovf_before) > 0,
			      s->judge == PORTS ? &acc : NULL, &v);
	listeners_report(&r, &v, 1);
	qsim_judged(q, &r, depth);
	if (s->judge != NO_SHEDD) {
		double rate = tick_step(&q->tp, &q->ts, &in, q->next);

		qsim_publish(q);
		if (s->judge == PORTS) {
			struct port_limit_input pin = {
				.v = r.have_listen_drops ? &r.listeners : NULL,
				.accepts = counts,
				.nr_accepts = nc,
				.dt_ns = in.dt_ns,
				.service_limit = q->ts.limit,
			};

			port_limit_update(&s->plp, &s->pls, &pin);
			ports_publish(s);
		}
		if (qsim_in_window(q->now_ns)) {
			q->rate_sum += rate;
			q->rate_ticks++;
			s->own_ticks += v.ports_own > 0;
			s->limited_ticks += s->limited[0];
		}
	}
	qsim_tick_done(q, depth);
}

static const struct qsim_ops psim_ops = { arrive, served, tick };

static void psim_init(struct psim *s, enum judge judge, int nl, int np, double load,
		      double hot)
{
	double per_listener = (double)W * SEC / (double)SVC_NS;
	int l0 = (nl + np - 1) / np; /* port 0's listeners */
	int i;

	memset(s, 0, sizeof(*s));
	s->judge = judge;
	s->np = np;
	s->hot = hot;
	qsim_init(&s->q, nl, PORT0);
	for (i = 0; i < nl; i++)
		s->q.port[i] = (__u16)(PORT0 + port_of(s, i));
	/* Port 0 gets its share of the load, or hot x its own capacity. */
	s->rate0 = hot > 0 ? hot * l0 * per_listener : load * s->q.capacity / np;
	s->q.arrival_rate = s->rate0 + (np > 1 ? load * s->q.capacity * (np - 1) / np : 0);
	/* Every listener of port 0 stops, unless it is the hot one. */
	s->q.stop_stride = hot > 0 ? 0 : np;
	port_limit_defaults(&s->plp);
	port_limit_init(&s->pls);
}

struct prow {
	double offered_ps, good_ps, mean_rate, offered0_ps, good0_ps;
	unsigned int own_ticks, limited_ticks, ticks;
	__u64 port_syn, port_shed;
};

static struct prow psim(enum judge judge, int nl, int np, double load, double hot)
{
	static struct psim s;
	double win = (double)(WIN_END_NS - WIN_START_NS) / SEC;

	psim_init(&s, judge, nl, np, load, hot);
	qsim_run(&s.q, &psim_ops);
	return (struct prow){
		.offered_ps = (double)s.q.offered / win,
		.good_ps = (double)s.q.good / win,
		.offered0_ps = (double)s.offered0 / win,
		.good0_ps = (double)s.good0 / win,
		.mean_rate = s.q.rate_ticks ? s.q.rate_sum / s.q.rate_ticks : 0,
		.own_ticks = s.own_ticks,
		.limited_ticks = s.limited_ticks,
		.ticks = s.q.rate_ticks,
		.port_syn = s.port_syn,
		.port_shed = s.port_shed,
	};
}

static const struct {
	int nl, np;
} SIM[] = { { 1, 1 }, { 2, 2 }, { 4, 2 }, { 4, 4 }, { 8, 2 }, { 8, 8 }, { 16, 4 },
	    { 16, 8 }, { 64, 2 }, { 64, 8 } };

static struct sim_table csv_ports = {
	.name = "ports_stopped",
	.header = "listeners,ports,offered_per_sec,no_shedd_per_sec,before_per_sec,before_pct,"
		  "ports_per_sec,ports_pct,limit_per_sec,own_ticks,limited_ticks,ticks,"
		  "port_syn,port_shed",
};

/* Every listener of port 0 of P stops at 10 s, Poisson clients at 75 % of
 * the capacity spread evenly over the ports: the goodput of the healthy
 * ports' clients (seconds 15-40) without shedd, with a port whole in
 * trouble taken for overload (the daemon before) and judged port by port.
 * Port by port keeps >= 95 % of the goodput without shedd for every P > 1,
 * names the port and sheds its SYNs at its own limit; with P = 1 the
 * service itself has stopped. */
static void one_port_stopped_sim(void **state)
{
	struct failures f = { 0 };
	int k;

	(void)state;
	printf("# every listener of one port of P stopped at 10 s; clients at 75 %% of the "
	       "capacity;\n# goodput of the healthy ports, seconds 15-40, requests/s\n");
	printf("# %4s %5s %9s %9s %9s %7s %9s %7s %8s %8s %9s\n", "L", "ports", "offered",
	       "no shedd", "before", "%", "by port", "%", "limit/s", "limited", "port shed");
	for (k = 0; k < NR(SIM); k++) {
		int nl = SIM[k].nl, np = SIM[k].np;
		struct prow off, bef, one;
		double pb, po;

		if (sim_quick() && nl == 64)
			continue;
		off = psim(NO_SHEDD, nl, np, 0.75, 0);
		bef = psim(BEFORE, nl, np, 0.75, 0);
		one = psim(PORTS, nl, np, 0.75, 0);
		pb = off.good_ps > 0 ? 100 * bef.good_ps / off.good_ps : 0;
		po = off.good_ps > 0 ? 100 * one.good_ps / off.good_ps : 0;
		printf("# %4d %5d %9.1f %9.1f %9.1f %6.1f%% %9.1f %6.1f%% %8.0f %4u/%-3u %4llu/%llu\n",
		       nl, np, off.offered_ps, off.good_ps, bef.good_ps, pb, one.good_ps, po,
		       one.mean_rate, one.limited_ticks, one.ticks,
		       (unsigned long long)one.port_shed, (unsigned long long)one.port_syn);
		sim_table_row(&csv_ports, "%d,%d,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.0f,%u,%u,%u,%llu,%llu",
			      nl, np, off.offered_ps, off.good_ps, bef.good_ps, pb, one.good_ps, po,
			      one.mean_rate, one.own_ticks, one.limited_ticks, one.ticks,
			      (unsigned long long)one.port_syn, (unsigned long long)one.port_shed);
		if (np == 1)
			continue;
		if (one.good_ps < 0.95 * off.good_ps)
			failed(&f, "%d listeners over %d ports, one port stopped: goodput %.1f/s "
			       "port by port, %.1f/s without shedd", nl, np, one.good_ps, off.good_ps);
		if (one.own_ticks < one.ticks || one.limited_ticks + 5 < one.ticks)
			failed(&f, "%d over %d: the port in trouble of its own %u of %u ticks, "
			       "limited %u", nl, np, one.own_ticks, one.ticks, one.limited_ticks);
		if (!one.port_shed || one.port_shed * 10 < one.port_syn * 9)
			failed(&f, "%d over %d: %llu of %llu SYNs to the stopped port shed by its "
			       "limit", nl, np, (unsigned long long)one.port_shed,
			       (unsigned long long)one.port_syn);
	}
	if (f.n)
		fail_msg("%d failed, told above", f.n);
}

static const struct {
	int nl, np;
} HOT[] = { { 2, 2 }, { 4, 2 }, { 8, 4 }, { 16, 8 }, { 64, 8 } };

static struct sim_table csv_hot = {
	.name = "ports_overloaded",
	.header = "listeners,ports,offered_per_sec,no_shedd_per_sec,before_per_sec,ports_per_sec,"
		  "hot_capacity_per_sec,hot_offered_per_sec,hot_no_shedd_per_sec,"
		  "hot_before_per_sec,hot_ports_per_sec,limited_ticks,ticks",
};

/* Port 0 of P offered 3 x its capacity (its server slower than what is
 * sent to it), the others 50 % of theirs: port 0 is in trouble of its
 * own, limited at what it accepts. The healthy ports keep >= 95 % of their
 * goodput without shedd, and port 0 serves >= 75 % of its capacity within
 * the clients' patience. */
static void one_port_overloaded_sim(void **state)
{
	struct failures f = { 0 };
	int k;

	(void)state;
	printf("# port 0 of P offered 3 x its capacity, the others 50 %% of theirs;\n"
	       "# goodput, seconds 15-40, requests/s: the other ports, then port 0\n");
	printf("# %4s %5s %9s %9s %9s %9s | %8s %9s %9s %9s %9s %8s\n", "L", "ports", "offered",
	       "no shedd", "before", "by port", "capacity", "offered", "no shedd", "before",
	       "by port", "limited");
	for (k = 0; k < NR(HOT); k++) {
		int nl = HOT[k].nl, np = HOT[k].np;
		double cap0 = (double)((nl + np - 1) / np) * W * SEC / (double)SVC_NS;
		struct prow off, bef, one;

		if (sim_quick() && nl == 64)
			continue;
		off = psim(NO_SHEDD, nl, np, 0.5, 3);
		bef = psim(BEFORE, nl, np, 0.5, 3);
		one = psim(PORTS, nl, np, 0.5, 3);
		printf("# %4d %5d %9.1f %9.1f %9.1f %9.1f | %8.0f %9.1f %9.1f %9.1f %9.1f %4u/%-3u\n",
		       nl, np, off.offered_ps, off.good_ps, bef.good_ps, one.good_ps, cap0,
		       off.offered0_ps, off.good0_ps, bef.good0_ps, one.good0_ps, one.limited_ticks,
		       one.ticks);
		sim_table_row(&csv_hot, "%d,%d,%.1f,%.1f,%.1f,%.1f,%.0f,%.1f,%.1f,%.1f,%.1f,%u,%u",
			      nl, np, off.offered_ps, off.good_ps, bef.good_ps, one.good_ps, cap0,
			      off.offered0_ps, off.good0_ps, bef.good0_ps, one.good0_ps,
			      one.limited_ticks, one.ticks);
		if (one.good_ps < 0.95 * off.good_ps)
			failed(&f, "%d over %d, port 0 at 3x: the others' goodput %.1f/s by port, "
			       "%.1f/s without shedd", nl, np, one.good_ps, off.good_ps);
		if (one.good0_ps < 0.75 * cap0)
			failed(&f, "%d over %d, port 0 at 3x: its goodput %.1f/s by port, capacity "
			       "%.0f/s", nl, np, one.good0_ps, cap0);
		if (!one.limited_ticks)
			failed(&f, "%d over %d: port 0 at 3x never limited", nl, np);
	}
	if (f.n)
		fail_msg("%d failed, told above", f.n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(one_port_stopped_of_p),
		cmocka_unit_test(beside_idle_ports_is_overload),
		cmocka_unit_test(listeners_and_groups_as_before),
		cmocka_unit_test(limiter_law),
		cmocka_unit_test(limiter_slots),
		cmocka_unit_test(one_port_stopped_sim),
		cmocka_unit_test(one_port_overloaded_sim),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	sim_table_close(&csv_ports);
	sim_table_close(&csv_hot);
	return rc;
}
