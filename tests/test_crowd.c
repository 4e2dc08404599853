// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_crowd.c - a crowd of keep-alive clients that come and stay, in
 * simulated time, with the daemon's own tick (tick_step(): aimd.c,
 * drain.c, latency_target.c, req_per_conn.c, conc.c, alloc.c) and the
 * program's own buckets (token_bucket.h): the door's concurrency limit
 * (conc.h) against the SYN limit alone and against no shedding.
 *
 * Model, and what it leaves out:
 * - Upstream: W workers serving requests FIFO, exponential service times
 *   of mean SERVICE_NS: C = W / mean requests/s.
 * - Clients, closed loop (wrk, a browser's pool): each connects once and
 *   stays to the run's end; on its connection it sends a request, waits
 *   for the answer however long it takes, thinks (exponential, mean
 *   THINK_NS), sends the next. A shed SYN is retransmitted as Linux does
 *   (1 s, doubling, at most 16 s apart), never given up.
 * - A pool of POOL clients connects in the first second; then the crowd
 *   of CROWD clients arrives, evenly over CROWD_SPREAD_NS from
 *   CROWD_AT_NS. At the end POOL + CROWD clients offer about
 *   (POOL + CROWD) / (THINK + service) requests/s: 2.2 x C.
 * - Log feed: one line per answer, with its latency and which request of
 *   its connection it was (`cr=`); the live connections counted as the
 *   kernel does (opened when admitted, never closed: nobody leaves).
 * - Goodput: answers within GOOD_NS per second over the window, % of C;
 *   the pool's latency: the p99 of its answers in the window.
 * Deterministic (splitmix64, no clock).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "aimd.h"
#include "tick.h"
#include "conc.h"
#include "splitmix.h"
#include "sim_daemon.h"
#include "alloc.h"
#include "sample_agg.h"
#include "token_bucket.h"

#define NCLS SHEDD_NR_CLASSES
#define CLS SHEDD_SHEDDABLE
#define MS 1000000ULL
#define SEC 1000000000ULL

#define WORKERS 4
#define SERVICE_NS (20 * MS)
#define CAPACITY ((double)WORKERS * SEC / SERVICE_NS) /* 200 req/s */
#define THINK_NS (1 * SEC)
#define POOL 50
#define CROWD 400
#define CROWD_AT_NS (10 * SEC)
#define GOOD_NS (500 * MS)
#define TICK_NS (100 * MS)
#define RUN_NS (90 * SEC)
#define WIN_START_NS (40 * SEC)
#define WIN_END_NS (90 * SEC)
#define SYN_RTO_NS (1 * SEC)
#define SYN_RTO_MAX_NS (16 * SEC)
#define NCLIENT (POOL + CROWD)
#define SEED 0x63726f7764ULL
#define LAT_BINS 4096 /* 1 ms bins of the pool's latency, the last is "more" */

enum cstate { C_IDLE, C_SYN, C_THINK, C_WAIT };

struct client {
	enum cstate st;
	__u64 due_ns;   /* C_SYN: the next SYN; C_THINK: the next request */
	__u64 rto_ns;   /* the next retransmission's wait */
	__u64 sent_ns;  /* C_WAIT: when the request left */
	__u32 k;        /* requests sent on the connection */
};

enum mode { NONE, SYN_ONLY, CONN_LIMIT };
static const char *const MODE_NAME[] = { "none", "SYN limit alone", "with --conn-limit" };

struct run {
	enum mode mode;
	__u64 spread_ns;
	uint64_t rng;
	__u64 now_ns;
	struct client cl[NCLIENT];
	/* the upstream's FIFO of waiting clients */
	__u32 fifo[NCLIENT];
	__u32 fifo_head, fifo_n;
	bool busy[WORKERS];
	__u64 done_ns[WORKERS];
	__u32 serving[WORKERS];

	struct tick_params tp;
	struct tick_state ts;
	double demand[NCLS], instant[NCLS];
	struct shedd_class_rate next[NCLS];
	struct shedd_rate rates[NCLS];
	struct shedd_reserve reserve[NCLS];
	struct shedd_bucket buckets[NCLS];
	struct shedd_conn_count conns[SHEDD_CONN_SLOTS];

	__u64 t_syn[NCLS], t_admitted, t_served, t_next;
	struct sample_agg t_lat;
	__u64 last_tick_ns;

	__u64 good, live;
	__u64 pool_lat[LAT_BINS], pool_n;
	double cap_sum, live_sum;
	unsigned int win_ticks;
};

struct result {
	double goodput;     /* % of C */
	double pool_p99_ms; /* the pool's answers in the window */
	double live;        /* mean live connections in the window */
	double cap;         /* mean concurrency cap in the window (0: none) */
};

static void publish(struct run *r)
{
	int c;

	for (c = 0; c < NCLS; c++)
		alloc_publish(&r->rates[c].r, &r->next[c], r->reserve[c].s.last_ns, r->now_ns);
}

static bool in_window(__u64 t)
{
	return t >= WIN_START_NS && t < WIN_END_NS;
}

static void start_work(struct run *r)
{
	int w;

	for (w = 0; w < WORKERS && r->fifo_n; w++) {
		if (r->busy[w])
			continue;
		r->busy[w] = true;
		r->serving[w] = r->fifo[r->fifo_head];
		r->fifo_head = (r->fifo_head + 1) % NCLIENT;
		r->fifo_n--;
		r->done_ns[w] = r->now_ns + rng_exp_ns(&r->rng, (double)SERVICE_NS);
	}
}

static void send_req(struct run *r, __u32 id)
{
	struct client *c = &r->cl[id];

	c->st = C_WAIT;
	c->sent_ns = r->now_ns;
	c->k++;
	r->fifo[(r->fifo_head + r->fifo_n++) % NCLIENT] = id;
	start_work(r);
}

static void syn(struct run *r, __u32 id)
{
	struct client *c = &r->cl[id];

	r->t_syn[CLS]++;
	if (r->mode != NONE &&
	    !tb_charge(&r->buckets[CLS], &r->rates[CLS], &r->reserve[CLS], r->now_ns)) {
		c->due_ns = r->now_ns + c->rto_ns;
		c->rto_ns = c->rto_ns * 2 < SYN_RTO_MAX_NS ? c->rto_ns * 2 : SYN_RTO_MAX_NS;
		return;
	}
	r->t_admitted++;
	r->conns[CLS].opened++;
	r->live++;
	send_req(r, id);
}

static void answer(struct run *r, int w)
{
	__u32 id = r->serving[w];
	struct client *c = &r->cl[id];
	__u64 lat = r->now_ns - c->sent_ns;

	r->busy[w] = false;
	agg_add(&r->t_lat, lat);
	r->t_served++;
	if (c->k > 1)
		r->t_next++;
	if (in_window(r->now_ns)) {
		if (lat <= GOOD_NS)
			r->good++;
		if (id < POOL) {
			__u64 b = lat / MS;

			r->pool_lat[b < LAT_BINS ? b : LAT_BINS - 1]++;
			r->pool_n++;
		}
	}
	c->st = C_THINK;
	c->due_ns = r->now_ns + rng_exp_ns(&r->rng, (double)THINK_NS);
	start_work(r);
}

static void tick(struct run *r)
{
	struct signal_report sr = {
		.have_sojourn = true,
		.sojourn = { .count = r->t_admitted, .min_ns = r->t_admitted ? 20000 : 0,
			     .max_ns = r->t_admitted ? 20000 : 0 },
		.have_depth = true,
		.backlog = 511,
		.have_netstat = true,
		.have_listen_drops = true,
		.have_latency = r->t_lat.count > 0,
		.latency = r->t_lat,
		.latency_log = r->t_lat.count,
		.latency_served = r->t_served,
		.have_completed = true,
		.completed = r->t_admitted,
		.have_queue_left = true,
		.queue_left = r->t_admitted,
		.have_conn_seq = true,
		.latency_next = r->t_next,
		.have_conns = true,
	};
	struct tick_input in = {
		.now_ns = r->now_ns,
		.dt_ns = r->now_ns - r->last_tick_ns,
		.sig = &sr,
		.syn = r->t_syn,
		.admitted = r->t_admitted,
	};

	memcpy(sr.conns, r->conns, sizeof(sr.conns));
	if (r->mode != NONE) {
		tick_step(&r->tp, &r->ts, &in, r->next);
		publish(r);
	}
	if (in_window(r->now_ns)) {
		r->live_sum += (double)r->live;
		r->cap_sum += r->ts.conc.engaged ? r->ts.conc.cap : 0;
		r->win_ticks++;
	}
	memset(r->t_syn, 0, sizeof(r->t_syn));
	memset(&r->t_lat, 0, sizeof(r->t_lat));
	r->t_admitted = r->t_served = r->t_next = 0;
	r->last_tick_ns = r->now_ns;
}

static void simulate(enum mode mode, __u64 spread_ns, struct result *out)
{
	struct run *r = calloc(1, sizeof(*r));
	__u64 next_tick = TICK_NS, n, acc = 0;
	__u32 i;

	assert_non_null(r);
	r->mode = mode;
	r->spread_ns = spread_ns;
	r->rng = SEED ^ spread_ns;
	for (i = 0; i < NCLIENT; i++) {
		struct client *c = &r->cl[i];

		c->st = C_SYN;
		c->rto_ns = SYN_RTO_NS;
		c->due_ns = i < POOL ? rng_next(&r->rng) % SEC :
				       CROWD_AT_NS + (__u64)(i - POOL) * spread_ns / CROWD;
	}
	/* The daemon's fresh start with its defaults: open at --max-rate. */
	sim_daemon_defaults(&r->tp, &r->ts, 1, r->demand, r->instant);
	conc_defaults(&r->tp.conc);
	r->tp.conc.on = mode == CONN_LIMIT;
	r->tp.default_class = CLS;
	tick_start(&r->tp, &r->ts, 0);
	tick_allocate(&r->tp, &r->ts, r->next);
	publish(r);

	for (;;) {
		__u64 t = next_tick;
		int what = -1, w;
		__u32 who = 0;

		/* The earliest event: a worker's answer, a client's SYN or
		 * request, or the tick (linear scans: 450 clients). */
		for (w = 0; w < WORKERS; w++)
			if (r->busy[w] && r->done_ns[w] < t) {
				t = r->done_ns[w];
				what = w;
			}
		for (i = 0; i < NCLIENT; i++) {
			const struct client *c = &r->cl[i];

			if ((c->st == C_SYN || c->st == C_THINK) && c->due_ns < t) {
				t = c->due_ns;
				what = WORKERS;
				who = i;
			}
		}
		if (t >= RUN_NS)
			break;
		r->now_ns = t;
		if (what < 0) {
			tick(r);
			next_tick += TICK_NS;
		} else if (what < WORKERS) {
			answer(r, what);
		} else if (r->cl[who].st == C_SYN) {
			syn(r, who);
		} else {
			send_req(r, who);
		}
	}
	for (n = 0; n < LAT_BINS && acc * 100 < r->pool_n * 99; n++)
		acc += r->pool_lat[n];
	*out = (struct result){
		.goodput = 100.0 * (double)r->good / ((double)(WIN_END_NS - WIN_START_NS) / SEC) /
			   CAPACITY,
		.pool_p99_ms = (double)n,
		.live = r->win_ticks ? r->live_sum / r->win_ticks : 0,
		.cap = r->win_ticks ? r->cap_sum / r->win_ticks : 0,
	};
	free(r);
}

/* The crowd arrives within a second, or over ten. */
#define NR_SPREAD 2
static const __u64 SPREADS[NR_SPREAD] = { 1 * SEC, 10 * SEC };
static struct result res[NR_SPREAD][3];

static int run_all(void **state)
{
	int i, m;

	(void)state;
	printf("# a crowd that stays: %d workers, exponential service of mean %llu ms: C = "
	       "%.0f req/s; %d clients, then %d more, each thinking %llu ms between "
	       "answers; window %llu-%llu s\n", WORKERS, SERVICE_NS / MS, CAPACITY, POOL, CROWD,
	       THINK_NS / MS, WIN_START_NS / SEC, WIN_END_NS / SEC);
	printf("# crowd over | shedding | goodput (answers within %llu ms) | pool p99 | live "
	       "connections | cap\n", GOOD_NS / MS);
	for (i = 0; i < NR_SPREAD; i++) {
		for (m = NONE; m <= CONN_LIMIT; m++) {
			struct result *a = &res[i][m];

			simulate((enum mode)m, SPREADS[i], a);
			printf("# %4.1f s | %-17s | %5.1f %% of C | %7.0f ms | %6.1f | %6.1f\n",
			       SPREADS[i] / 1e9, MODE_NAME[m], a->goodput, a->pool_p99_ms, a->live,
			       a->cap);
		}
	}
	fflush(stdout);
	return 0;
}

/* A crowd that comes within a second or over ten is held at the door:
 * the goodput stays at 80 % of C or more and the pool's p99 within
 * GOOD_NS, where without shedding the crowd gets in and the latency goes
 * past the clients' patience; and over ten seconds the SYN limit alone
 * lets it in too (each ramp after a cut admits some, and none leave). */
static void a_crowd_that_stays_is_held_at_the_door(void **state)
{
	struct failures f = { 0 };
	int i;

	(void)state;
	for (i = 0; i < NR_SPREAD; i++) {
		const struct result *lim = &res[i][CONN_LIMIT], *none = &res[i][NONE];
		double s = SPREADS[i] / 1e9;

		if (lim->goodput < 80)
			failed(&f, "--conn-limit, crowd over %.0f s: goodput %.1f %% of C < 80 %%",
			       s, lim->goodput);
		if (lim->pool_p99_ms > GOOD_NS / MS)
			failed(&f, "--conn-limit, crowd over %.0f s: the pool's p99 %.0f ms > "
			       "%llu ms", s, lim->pool_p99_ms, GOOD_NS / MS);
		if (lim->live >= POOL + CROWD)
			failed(&f, "--conn-limit, crowd over %.0f s: %.0f live: the whole crowd "
			       "got in", s, lim->live);
		if (none->goodput >= 50)
			failed(&f, "no shedding, crowd over %.0f s: goodput %.1f %%: the model "
			       "needs none", s, none->goodput);
	}
	if (res[1][SYN_ONLY].goodput >= 50)
		failed(&f, "the SYN limit alone, crowd over 10 s: goodput %.1f %%: the model "
		       "does not need the concurrency limit", res[1][SYN_ONLY].goodput);
	if (f.n)
		fail_msg("%d case(s) failed, figures above", f.n);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_crowd_that_stays_is_held_at_the_door),
	};

	return cmocka_run_group_tests_name("crowd", tests, run_all, NULL);
}
