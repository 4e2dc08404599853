// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_auto_target.c - the derived latency target (user/core/latency_target.c) in
 * simulated time, in front of a service that accepts every connection at
 * once (nginx, HAProxy): the accept queue stays empty, requests queue inside
 * it, and only their latency tells. SHEDD_AUTO_TRACE=N in the environment
 * prints the controller every N ticks. Each tick draws real samples into the
 * daemon's own aggregate (sample_agg.c), so the statistic the controller
 * gets is the one the daemon computes. Deterministic (splitmix64).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>

#include "aimd.h"
#include "sample_agg.h"
#include "splitmix.h"

#define MS 1000000ULL
#define SEC 1000000000ULL
#define TICK (100 * MS)

/*
 * A service of @capacity requests/s that takes every connection at once:
 * what it cannot serve in a tick waits inside it (@queue), and every request
 * served waits queue / capacity on top of its own time. Its own time is
 * @fast_ms, or @slow_ms for a share @slow_frac (cache misses), each within
 * +-@noise of itself. A share @logged of the requests sends a sample.
 * With @patience_ms, clients give up rather than wait longer: the queue
 * holds at most that much work, and latency stops growing there. With
 * @quits_logged, each request given up sends a sample too (a share
 * @logged of them), not answered, of @patience_ms: nginx logs it 499,
 * HAProxy with a status of -1; without, they leave no trace. With @exp,
 * its own time is exponential of mean @fast_ms instead.
 */
struct svc {
	double capacity;
	double queue;
	double fast_ms, slow_ms, slow_frac;
	double noise;
	double logged;
	double patience_ms;
	bool quits_logged;
	bool exp;
	double answered; /* requests answered since it began, logged or not */
	uint64_t rng;
};

/* What a run saw. */
struct run {
	__u64 now_ns;
	int latency_ticks;   /* ticks judged overloaded on latency */
	int probe_ticks;     /* ticks a calm probe held the limit, or ended */
	int first_latency;   /* the first of them (tick index in the run), -1 */
	double max_wait_ms;  /* the longest queueing delay */
	double min_rate;
	double rate_sum;     /* to average the limit */
	int ticks;
};

static struct svc service(double capacity, double fast_ms)
{
	return (struct svc){ .capacity = capacity, .fast_ms = fast_ms, .slow_ms = fast_ms,
			     .noise = 0.2, .logged = 1, .rng = 0x5eed };
}

/* One tick of @v under @demand with the limit @rate: the controller's
 * signals, samples drawn into @agg. */
static struct aimd_signals svc_tick(struct svc *v, double demand, double rate)
{
	static struct sample_agg agg;
	double dt = (double)TICK / SEC, adm = demand < rate ? demand : rate;
	double work = v->queue + adm * dt, can = v->capacity * dt;
	double served = work < can ? work : can, wait_ms, quit = 0;
	__u64 i, n = 0, answered;

	v->queue = work - served;
	v->answered += served;
	if (v->patience_ms > 0 && v->queue > v->patience_ms / 1000 * v->capacity) {
		quit = v->queue - v->patience_ms / 1000 * v->capacity;
		v->queue = v->patience_ms / 1000 * v->capacity;
	}
	wait_ms = v->queue / v->capacity * 1000;
	memset(&agg, 0, sizeof(agg));
	for (i = 0; i < (__u64)(served + 0.5); i++) {
		double ms;

		if (rng_unit(&v->rng) >= v->logged)
			continue;
		ms = rng_unit(&v->rng) < v->slow_frac ? v->slow_ms : v->fast_ms;
		ms *= 1 + v->noise * (2 * rng_unit(&v->rng) - 1);
		if (v->exp)
			ms = -v->fast_ms * log1p(-rng_unit(&v->rng));
		agg_add(&agg, (__u64)((ms + wait_ms) * 1e6));
		n++;
	}
	answered = n;
	for (i = 0; v->quits_logged && i < (__u64)(quit + 0.5); i++) {
		if (rng_unit(&v->rng) >= v->logged)
			continue;
		agg_add(&agg, (__u64)(v->patience_ms * 1e6));
		n++;
	}
	return (struct aimd_signals){
		/* Accepted at once: the sojourn is tiny, the queue empty. */
		.have_sojourn = true, .sojourn_count = (__u64)(adm * dt + 0.5),
		.sojourn_min_ns = 10000, .have_depth = true, .depth = 0, .backlog = 511,
		.have_latency = n > 0, .latency_p99_ns = agg_quantile(&agg, 0.99),
		.latency_count = n, .latency_mid_ns = agg_mid_mean(&agg),
		.latency_min_ns = n ? agg.min_ns : 0, .latency_agg = &agg,
		.latency_served = answered, .demand = demand, .dt_ns = TICK, .have_completed = true,
		.completed = (__u64)(adm * dt + 0.5), .admitted_per_sec = adm,
	};
}

/* @secs of @demand against @v, the controller in the loop. */
static void run_for(const struct aimd_params *p, struct aimd_state *s, struct svc *v,
		    struct run *r, double demand, double secs)
{
	int i, n = (int)(secs * SEC / TICK + 0.5);
	const char *env = getenv("SHEDD_AUTO_TRACE");
	long trace = env ? strtol(env, NULL, 10) : 0;

	r->latency_ticks = 0;
	r->probe_ticks = 0;
	r->first_latency = -1;
	r->max_wait_ms = 0;
	r->min_rate = s->rate;
	r->rate_sum = 0;
	r->ticks = n;
	for (i = 0; i < n; i++) {
		struct aimd_signals sig = svc_tick(v, demand, s->rate);
		double wait_ms = v->queue / v->capacity * 1000;
		bool probing = s->lat.probing;

		r->now_ns += TICK;
		aimd_update(p, s, &sig, r->now_ns);
		if (s->why & AIMD_WHY_LATENCY) {
			if (r->first_latency < 0)
				r->first_latency = i;
			r->latency_ticks++;
		}
		if (probing || s->lat.probing) /* its first tick to the one that ends it */
			r->probe_ticks++;
		if (wait_ms > r->max_wait_ms)
			r->max_wait_ms = wait_ms;
		if (s->rate < r->min_rate)
			r->min_rate = s->rate;
		r->rate_sum += s->rate;
		if (trace && (r->now_ns / TICK) % trace == 0)
			fprintf(stderr, "t=%6.1fs demand=%5.0f limit=%6.0f mode=%-10s why=%2u "
					"wait=%7.1fms mid=%7.1fms n=%3llu target=%5.1fms\n",
				(double)r->now_ns / SEC, demand, s->rate, aimd_mode_name(s->mode),
				s->why, wait_ms, sig.latency_mid_ns / 1e6,
				(unsigned long long)sig.latency_count, s->lat.target_ns / 1e6);
	}
}

static struct aimd_params params(void)
{
	struct aimd_params p;

	aimd_defaults(&p);
	p.max_rate = 100000;
	return p;
}

static __u64 target(const struct aimd_params *p, const struct aimd_state *s)
{
	bool derived;
	__u64 t = aimd_latency_target(p, s, &derived);

	assert_true(derived);
	return t;
}

/* On a calm service (20 ms, half its capacity) the target settles at
 * k x baseline + margin = 45 ms (the baseline is a minimum of noisy points,
 * so a little lower), and nothing is cut. Before the first point there is
 * no target. */
static void converges_to_k_times_baseline(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v = service(1000, 20);
	struct run r = { 0 };
	double want = p.auto_k * 20e6 + (double)p.auto_margin_ns;

	aimd_init(&s, &p, 2000);
	run_for(&p, &s, &v, &r, 500, 0.1);
	assert_int_equal(target(&p, &s), 0);
	run_for(&p, &s, &v, &r, 500, 60);
	assert_in_range(target(&p, &s), (__u64)(0.9 * want), (__u64)want);
	assert_in_range(s.lat.baseline_ns, 18 * MS, 20 * MS);
	assert_int_equal(r.latency_ticks, 0);
	assert_float_equal(r.min_rate, 2000, 1e-9);
	assert_int_equal(s.mode, AIMD_STEADY);
}

/* Demand jumps to twice the capacity: requests queue inside the service,
 * latency climbs, and the limit is cut until the queue stops growing; the
 * baseline holds the calm level through the overload; when it is over, the
 * limit climbs back and latency is calm. */
static void overload_is_cut_and_the_limit_recovers(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v = service(1000, 20);
	struct run r = { 0 };
	__u64 calm_target;

	aimd_init(&s, &p, 3000);
	run_for(&p, &s, &v, &r, 500, 30);
	calm_target = target(&p, &s);
	assert_int_equal(r.latency_ticks, 0);

	run_for(&p, &s, &v, &r, 2000, 10);
	/* Seen at once: the first tick queues 100 ms of work, a verdict
	 * above auto_jump x target (90 ms), which is no burst and waits no
	 * auto_interval_ns. */
	assert_int_equal(r.first_latency, 0);
	/* The limit was 3000/s and not binding: by beta (0.95 per 100 ms) it
	 * takes 2 s to come under the capacity, and the queue grows
	 * meanwhile. Without shedd it would grow by 1000 requests a second
	 * for as long as the surge lasts. */
	assert_true(r.max_wait_ms < 2500);
	run_for(&p, &s, &v, &r, 2000, 50);
	/* Then the queue stays within a few targets... */
	assert_true(r.latency_ticks > 0);
	assert_true(r.max_wait_ms < 200);
	/* ... and the limit hovers around the capacity. */
	assert_in_range((__u64)(r.rate_sum / r.ticks), 800, 1200);
	assert_true(s.rate < 1500);
	/* The baseline did not creep up with the overload. */
	assert_in_range(target(&p, &s), calm_target * 9 / 10, calm_target * 11 / 10);

	/* Over: demand just under capacity. The limit comes back above it,
	 * and nothing is cut any more. */
	run_for(&p, &s, &v, &r, 900, 10);
	run_for(&p, &s, &v, &r, 900, 20);
	assert_int_equal(r.latency_ticks, 0);
	assert_true(s.rate >= 900);
	assert_true(r.max_wait_ms < 1);
	assert_int_equal(s.mode, AIMD_STEADY);
}

/* shedd starts while the service is already overloaded (twice its
 * capacity from the first sample): it has no calm reference, and the first
 * samples show pressure (the statistic doubles through the first point,
 * which waits its second as handshakes outrun the answers), so the
 * overloaded level is not learned: a calm probe holds the limit at half
 * the served rate until the queue is gone, and learns the calm level from
 * what is left. The limit then holds the service at its capacity with the
 * latency near that target (the queue peaks near auto_jump x target before
 * a verdict cuts it). Clients that give up after 200 ms, a queue that does
 * not grow, are caught by the requests given up (499, -1), not by the
 * latency. Given up without a trace, they would be a feed that covers half
 * the connections of a calm service: see "Coverage" in latency_target.h. */
static void started_into_an_overload(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v = service(1000, 20);
	struct run r = { 0 };
	int patient;

	for (patient = 0; patient < 2; patient++) {
		v = service(1000, 20);
		v.patience_ms = patient ? 200 : 0;
		v.quits_logged = true;
		r = (struct run){ 0 };
		aimd_init(&s, &p, 3000);
		run_for(&p, &s, &v, &r, 2000, 10);
		assert_int_equal(s.lat.probes, 1);
		assert_false(s.lat.probing);
		assert_in_range(s.lat.baseline_ns, 18 * MS, 22 * MS);
		run_for(&p, &s, &v, &r, 2000, 60);
		assert_true(r.max_wait_ms < p.auto_jump * (double)s.lat.target_ns / 1e6 + 10);
		assert_in_range((__u64)(r.rate_sum / r.ticks), 900, 1100);
		assert_in_range(s.lat.baseline_ns, 18 * MS, 22 * MS);
	}
}

/* An overload shedd cannot end (its --min-rate is above the capacity) and
 * whose latency does not grow (clients give up after 1 s): the baseline
 * keeps the calm level for the whole window, so latency goes on saying
 * overload. Past the window the overload is the baseline (the limit of a
 * windowed minimum, documented), but the target stays at auto_max_ns. */
static void baseline_does_not_creep_within_the_window(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v = service(1000, 20);
	struct run r = { 0 };
	__u64 calm_target;

	p.min_rate = 1500;
	v.patience_ms = 1000;
	aimd_init(&s, &p, 3000);
	run_for(&p, &s, &v, &r, 500, 60);
	calm_target = target(&p, &s);
	run_for(&p, &s, &v, &r, 2000, (double)p.auto_window_ns / SEC - 70);
	run_for(&p, &s, &v, &r, 2000, 10);
	assert_in_range(r.max_wait_ms, 990, 1000);
	assert_int_equal(r.latency_ticks, r.ticks);
	/* (The oldest calm points have expired: the minimum of the others.) */
	assert_in_range(target(&p, &s), calm_target * 9 / 10, calm_target * 11 / 10);
	/* Past the window the calm points have expired, and the probes
	 * that renewed them could not drain a service held above its
	 * capacity: the overloaded level is all there is. But the target
	 * never exceeds auto_max_ns (a quarter of the clients' patience),
	 * and latency goes on saying overload. */
	run_for(&p, &s, &v, &r, 2000, 60);
	assert_true(s.lat.baseline_ns > 900 * MS);
	assert_int_equal(target(&p, &s), p.auto_max_ns);
	run_for(&p, &s, &v, &r, 2000, 20);
	/* A probe renewing the calm point (every 150 s while the limit
	 * binds) holds the limit instead of latency, once at most in 20 s;
	 * every other tick says overload. */
	assert_in_range(r.probe_ticks, 0, 30);
	assert_int_equal(r.latency_ticks, r.ticks - r.probe_ticks);
}

/* Cache hits of 1 ms and misses of 50 ms, in any mix from 5 to 95 %
 * misses, several draws each, 5 min: a calm bimodal service is never cut.
 * The middle 80 %'s mean moves with the mix; a quantile jumps from one
 * mode to the other when the mix sits near it, and the baseline (a
 * minimum) learns the fast mode while verdicts see the slow one. */
static void bimodal_service_is_not_cut_in_calm(void **state)
{
	static const double share[] = { 0.05, 0.15, 0.3, 0.5, 0.7, 0.85, 0.95 };
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v;
	struct run r = { 0 };
	size_t i;
	int seed;

	for (i = 0; i < sizeof(share) / sizeof(share[0]); i++) {
		for (seed = 0; seed < 4; seed++) {
			v = service(2000, 1);
			v.rng += (uint64_t)seed;
			v.slow_ms = 50;
			v.slow_frac = share[i];
			aimd_init(&s, &p, 2000);
			run_for(&p, &s, &v, &r, 500, 300);
			if (r.latency_ticks || s.rate < 2000)
				fail_msg("%.0f %% misses, draw %d: %d ticks cut on latency, limit "
					 "%.0f, target %.1f ms", 100 * share[i], seed,
					 r.latency_ticks, s.rate, target(&p, &s) / 1e6);
		}
	}
}

/* Overloaded on latency, then the samples stop (the log feed died): the
 * verdict must not stick; with the other signals calm the episode ends. */
static void samples_stopping_drop_latency_as_a_signal(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v = service(1000, 20);
	struct run r = { 0 };
	int i;

	aimd_init(&s, &p, 3000);
	run_for(&p, &s, &v, &r, 500, 10);
	/* One tick at twice the capacity queues 100 ms: overload at once
	 * (auto_jump); a few more and the cut has ended it. */
	run_for(&p, &s, &v, &r, 2000, 0.1);
	assert_true(s.why & AIMD_WHY_LATENCY);
	v.logged = 0;
	for (i = 0; i < 20; i++) {
		struct aimd_signals sig = svc_tick(&v, 2000, s.rate);

		r.now_ns += TICK;
		aimd_update(&p, &s, &sig, r.now_ns);
		assert_false(sig.have_latency);
		/* Held at most auto_stale_ns, then dropped. */
		if ((__u64)(i + 1) * TICK > p.auto_stale_ns)
			assert_false(s.why & AIMD_WHY_LATENCY);
	}
	assert_int_not_equal(s.mode, AIMD_OVERLOAD);
}

/* A trickle of samples too thin for a verdict (fewer than 10 a second)
 * says nothing, however slow; 20 a second do. */
static void too_few_samples_say_nothing(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v = service(1000, 20);
	struct run r = { 0 };

	aimd_init(&s, &p, 3000);
	run_for(&p, &s, &v, &r, 500, 10);
	v.fast_ms = 400;
	v.logged = 0.01; /* 5 samples/s */
	run_for(&p, &s, &v, &r, 500, 10);
	assert_int_equal(r.latency_ticks, 0);
	v.logged = 0.04; /* 20 samples/s */
	run_for(&p, &s, &v, &r, 500, 10);
	assert_true(r.latency_ticks > 0);
}

/* A service that got slower for good (a deploy: 20 -> 60 ms, no queue) is
 * cut while the old baseline lasts, and relearned within the window. */
static void slower_for_good_is_relearned_within_the_window(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v = service(1000, 20);
	struct run r = { 0 };

	aimd_init(&s, &p, 3000);
	run_for(&p, &s, &v, &r, 500, 30);
	v.fast_ms = 60;
	run_for(&p, &s, &v, &r, 500, 10);
	assert_true(r.latency_ticks > 0);
	/* Judged overloaded, yet it serves all it gets, without a queue: the
	 * drain is tried once, and the limit is back at what is served. */
	run_for(&p, &s, &v, &r, 500, 60);
	assert_int_equal(r.latency_ticks, r.ticks);
	assert_true(r.min_rate >= 500 * 0.99);
	run_for(&p, &s, &v, &r, 500, (double)p.auto_window_ns / SEC);
	assert_in_range(s.lat.baseline_ns, 54 * MS, 60 * MS);
	run_for(&p, &s, &v, &r, 500, 30);
	assert_int_equal(r.latency_ticks, 0);
}

/* An explicit target wins: it judges p99 against itself, whatever was
 * learned; off means latency is no signal at all. */
static void explicit_target_wins(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v = service(1000, 20);
	struct run r = { 0 };
	bool derived = true;

	p.latency_target_ns = 500 * MS;
	aimd_init(&s, &p, 3000);
	run_for(&p, &s, &v, &r, 500, 10);
	assert_int_equal(aimd_latency_target(&p, &s, &derived), 500 * MS);
	assert_false(derived);
	v.fast_ms = 200; /* 10x the calm level, p99 240 ms: under 500 ms */
	run_for(&p, &s, &v, &r, 500, 10);
	assert_int_equal(r.latency_ticks, 0);
	v.fast_ms = 500;
	run_for(&p, &s, &v, &r, 500, 1);
	assert_true(r.latency_ticks > 0);

	p.latency_target_ns = 0;
	p.latency_auto = false;
	aimd_init(&s, &p, 3000);
	v = service(1000, 20);
	run_for(&p, &s, &v, &r, 500, 10);
	v.fast_ms = 2000;
	run_for(&p, &s, &v, &r, 500, 10);
	assert_int_equal(r.latency_ticks, 0);
	assert_int_equal(aimd_latency_target(&p, &s, &derived), 0);
	assert_false(derived);
}

/* The calm probe's knobs, as the defaults have them. */
static struct aimd_params probe_params(void)
{
	struct aimd_params p = params();

	p.probe_frac = 0.5;
	p.probe_min_ns = 300 * MS;
	p.probe_max_ns = 3 * SEC;
	p.probe_every_ns = 150 * SEC;
	p.auto_max_ns = 500 * MS;
	return p;
}

/* What a cold start saw over @secs: ticks with a probe running, probes,
 * the limit the first probe resumed at, and from the third second on the
 * requests answered and the limit. */
struct cold {
	int probe_ticks;
	double resumed;
	double wait_after_ms; /* the longest queueing delay after it */
	double served3, rate3;
	int ticks3;
};

static void cold_run(const struct aimd_params *p, struct aimd_state *s, struct svc *v,
		     double demand, double secs, struct cold *c)
{
	int i, n = (int)(secs * SEC / TICK + 0.5);
	__u64 now = 0;

	*c = (struct cold){ 0 };
	for (i = 0; i < n; i++) {
		struct aimd_signals sig = svc_tick(v, demand, s->rate);

		now += TICK;
		aimd_update(p, s, &sig, now);
		/* Nothing is learned before the probe has run. */
		if (!s->lat.probes && demand > v->capacity)
			assert_int_equal(s->lat.baseline_ns, 0);
		if (s->lat.probing)
			c->probe_ticks++;
		else if (c->probe_ticks && !c->resumed)
			c->resumed = s->rate;
		if (c->resumed && v->queue / v->capacity * 1000 > c->wait_after_ms)
			c->wait_after_ms = v->queue / v->capacity * 1000;
		if (now > 3 * SEC) {
			c->served3 += (double)sig.latency_served;
			c->rate3 += s->rate;
			c->ticks3++;
		}
	}
}

/* shedd (re)started straight into 3 x and 10 x the capacity (1000/s, 20 ms
 * a request), clients of 0.5 s patience (their give-ups logged), the limit
 * far above: the
 * overloaded latency is not learned; one calm probe runs, no longer than
 * probe_max_ns, and ends with a baseline within 15 % of the calm 20 ms and
 * the limit within 10 % of the capacity (what the service served while it
 * drained its queue, one request a connection), and the climb from there
 * is in scale with the capacity, not with the offered load (a proxy
 * accepts all it is offered): the queue stays within auto_jump x the
 * target (+ a tick's noise); from the third second on the service answers
 * at least 90 % of its capacity and the limit averages within 15 % of it. A calm cold start
 * runs no probe, and its first point (100 samples, two ticks) is the
 * baseline. */
static void cold_start_probes_only_into_an_overload(void **state)
{
	static const double load[] = { 3, 10 };
	struct aimd_params p = probe_params();
	struct aimd_state s;
	struct svc v;
	struct cold c;
	size_t i;

	for (i = 0; i < sizeof(load) / sizeof(load[0]); i++) {
		v = service(1000, 20);
		v.patience_ms = 500;
		v.quits_logged = true;
		aimd_init(&s, &p, 20000);
		cold_run(&p, &s, &v, load[i] * v.capacity, 30, &c);
		if (s.lat.probes != 1 || s.lat.probing || !c.probe_ticks ||
		    (__u64)c.probe_ticks * TICK > p.probe_max_ns ||
		    s.lat.baseline_ns < 17 * MS || s.lat.baseline_ns > 23 * MS ||
		    c.resumed < 0.9 * v.capacity || c.resumed > 1.1 * v.capacity ||
		    c.wait_after_ms > p.auto_jump * (double)s.lat.target_ns / 1e6 + 10 ||
		    c.served3 / (c.ticks3 * 0.1) < 0.9 * v.capacity ||
		    c.rate3 / c.ticks3 < 0.85 * v.capacity || c.rate3 / c.ticks3 > 1.15 * v.capacity)
			fail_msg("%.0f x C: %llu probes (%d ticks), baseline %.1f ms, resumed at "
				 "%.0f/s, queue up to %.0f ms after, answered %.0f/s and limit "
				 "%.0f/s from the third second",
				 load[i], (unsigned long long)s.lat.probes, c.probe_ticks,
				 s.lat.baseline_ns / 1e6, c.resumed, c.wait_after_ms,
				 c.served3 / (c.ticks3 * 0.1),
				 c.rate3 / c.ticks3);
	}

	v = service(1000, 20);
	aimd_init(&s, &p, 20000);
	cold_run(&p, &s, &v, 500, 0.2, &c);
	assert_in_range(s.lat.baseline_ns, 18 * MS, 22 * MS);
	cold_run(&p, &s, &v, 500, 30, &c);
	assert_int_equal(s.lat.probes, 0);
	assert_int_equal(c.probe_ticks, 0);
	assert_in_range(s.lat.baseline_ns, 18 * MS, 22 * MS);
}

/* The same cold start at a service of 20 requests/s: two samples a tick,
 * too few for a tick's statistic. The probe judges steps of as many ticks
 * as 3 samples take; otherwise it ends without a level, and probes again
 * and again (13 probes in 60 s, two thirds of the time at half the served
 * rate). Its level is the probe's, not the overload's (520 ms), but within
 * twice the calm one, not 15 %: the first step judged flat, of two ticks,
 * still holds the end of the drain. */
static void cold_start_of_a_few_requests_a_tick(void **state)
{
	struct aimd_params p = probe_params();
	struct aimd_state s;
	struct svc v = service(20, 20);
	struct cold c;

	v.patience_ms = 500;
	v.quits_logged = true;
	aimd_init(&s, &p, 20000);
	cold_run(&p, &s, &v, 3 * v.capacity, 60, &c);
	assert_int_equal(s.lat.probes, 1);
	assert_true((__u64)c.probe_ticks * TICK <= p.probe_max_ns);
	assert_in_range(s.lat.baseline_ns, 17 * MS, 40 * MS);
}

/* Calm for 10 s, then twice the capacity for longer than a window, the
 * limit binding all along: the points of the controlled overload are
 * higher than the calm one, and would be the baseline once it expired
 * (and the next ones higher still). A probe renews the calm point every
 * probe_every_ns: the baseline stays the calm level, each probe no longer
 * than probe_max_ns, and the service still answers near its capacity. */
static void a_long_overload_renews_the_calm_point(void **state)
{
	struct aimd_params p = probe_params();
	struct aimd_state s;
	struct svc v = service(1000, 20);
	struct run r = { 0 };
	__u64 calm_target, probes = 0, since = 0, longest = 0;
	double secs = (double)(p.auto_window_ns + p.probe_every_ns) / SEC;
	int i;

	aimd_init(&s, &p, 3000);
	run_for(&p, &s, &v, &r, 500, 10);
	calm_target = target(&p, &s);
	for (i = 0; i < (int)(secs * 10); i++) {
		run_for(&p, &s, &v, &r, 2000, 0.1);
		if (s.lat.probing && !since)
			since = r.now_ns;
		if (!s.lat.probing && since) {
			if (r.now_ns - since > longest)
				longest = r.now_ns - since;
			since = 0;
		}
		probes = s.lat.probes;
	}
	assert_in_range(target(&p, &s), calm_target * 9 / 10, calm_target * 11 / 10);
	assert_true(probes >= 2);
	assert_true(longest <= p.probe_max_ns);
	assert_true(r.now_ns - s.lat.calm_at_ns <= p.probe_every_ns + p.probe_max_ns + SEC);
	run_for(&p, &s, &v, &r, 2000, 20);
	assert_in_range((__u64)(r.rate_sum / r.ticks), 850, 1150);
}

/* What a start in front of a partial log feed saw: SYNs shed (offered
 * beyond the limit), the lowest limit, and from @from_s on the mean limit
 * and the requests the service answered per second, logged or not. */
struct feed {
	double offered, shed, min_rate;
	double rate_sum, answered, max_wait_ms;
	int ticks;
};

/* A fresh start as the daemon's: open at max_rate. */
static void feed_run(const struct aimd_params *p, struct aimd_state *s, struct svc *v,
		     double demand, double secs, double from_s, struct feed *f)
{
	int i, n = (int)(secs * SEC / TICK + 0.5);
	__u64 now = 0;

	*f = (struct feed){ .min_rate = s->rate };
	for (i = 0; i < n; i++) {
		double limit = s->rate, before = v->answered;
		struct aimd_signals sig = svc_tick(v, demand, limit);

		now += TICK;
		f->offered += demand * TICK / SEC;
		f->shed += demand > limit ? (demand - limit) * TICK / SEC : 0;
		aimd_update(p, s, &sig, now);
		if (s->rate < f->min_rate)
			f->min_rate = s->rate;
		if (now > from_s * SEC) {
			f->rate_sum += s->rate;
			f->answered += v->answered - before;
			if (v->queue / v->capacity * 1000 > f->max_wait_ms)
				f->max_wait_ms = v->queue / v->capacity * 1000;
			f->ticks++;
		}
	}
}

/* A feed that covers a share of the connections (one vhost of several
 * logs, health checks and preconnects send no request, a sampled log): a
 * calm service (1000/s, 20 ms a request) at 500 new connections/s, 1 of
 * them in 2, 10 or 100 logged, from a fresh start. The handshakes outrun
 * the answers by the share the feed does not cover, for good: that is no
 * queue, as the latency does not grow. Nothing is shed over the first
 * minute and the limit never goes below the demand. Without the feed's
 * coverage, the gap read as requests waiting inside the service started a
 * calm probe at the first tick, at half the served rate *logged* (50/s at
 * 10 %), and the limit resumed at what the feed showed served: 100/s, then
 * 13/s at 1 %. */
static void a_partial_feed_is_not_read_as_overload(void **state)
{
	static const double logged[] = { 1, 0.5, 0.1, 0.01 };
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v;
	struct feed f;
	size_t i;

	printf("# calm service, C = 1000/s, demand 500 conn/s, fresh start, 60 s\n");
	printf("# %8s %6s %8s %9s %9s %6s\n", "coverage", "load", "shed %", "min limit",
	       "coverage~", "probes");
	for (i = 0; i < sizeof(logged) / sizeof(logged[0]); i++) {
		v = service(1000, 20);
		v.logged = logged[i];
		aimd_init(&s, &p, p.max_rate);
		aimd_open(&s);
		feed_run(&p, &s, &v, 500, 60, 0, &f);
		printf("# %7.0f%% %5.1fC %8.2f %9.0f %8.1f%% %6llu\n", 100 * logged[i], 0.5,
		       100 * f.shed / f.offered, f.min_rate, 100 * s.lat.cover,
		       (unsigned long long)s.lat.probes);
		if (f.shed > 0 || f.min_rate < 500)
			fail_msg("%.0f %% of the requests logged: %.0f SYNs shed of %.0f, the "
				 "limit down to %.0f/s, %llu probes",
				 100 * logged[i], f.shed, f.offered, f.min_rate,
				 (unsigned long long)s.lat.probes);
	}
}

/* The same calm service, bimodal (hits of 1 ms, misses of 50 or 100 ms:
 * 30, 50 or 70 % of them), on a feed of a half, a tenth or a twentieth of
 * the connections, four draws each: before the coverage is known, the
 * handshakes outrun the answers and the statistic of a few samples jumps
 * between the modes, but the fast answers stay where they were and it does
 * not climb at the pace a queue of that gap would make it ("Coverage" in
 * latency_target.h). Nothing is shed. */
static void a_partial_feed_of_a_bimodal_service_is_not_read_as_overload(void **state)
{
	static const double logged[] = { 0.5, 0.1, 0.05 };
	static const double slow[] = { 50, 100 };
	static const double misses[] = { 0.3, 0.5, 0.7 };
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v;
	struct feed f;
	size_t i, j, k;
	int seed, bad = 0;

	printf("# calm bimodal service (hits of 1 ms), C = 1000/s, demand 500 conn/s, fresh "
	       "start, 60 s, 4 draws\n");
	printf("# %8s %6s %6s %8s %9s %6s\n", "coverage", "misses", "of", "shed %", "min limit",
	       "probes");
	for (k = 0; k < sizeof(slow) / sizeof(slow[0]); k++) {
		for (i = 0; i < sizeof(logged) / sizeof(logged[0]); i++) {
			for (j = 0; j < sizeof(misses) / sizeof(misses[0]); j++) {
				double shed = 0, offered = 0, min_rate = p.max_rate;
				__u64 probes = 0;

				for (seed = 0; seed < 4; seed++) {
					v = service(1000, 1);
					v.rng += (uint64_t)seed;
					v.slow_ms = slow[k];
					v.slow_frac = misses[j];
					v.logged = logged[i];
					aimd_init(&s, &p, p.max_rate);
					aimd_open(&s);
					feed_run(&p, &s, &v, 500, 60, 0, &f);
					shed += f.shed;
					offered += f.offered;
					probes += s.lat.probes;
					if (f.min_rate < min_rate)
						min_rate = f.min_rate;
				}
				printf("# %7.0f%% %5.0f%% %4.0fms %8.2f %9.0f %6llu\n", 100 * logged[i],
				       100 * misses[j], slow[k], 100 * shed / offered, min_rate,
				       (unsigned long long)probes);
				if (shed > 0 || min_rate < 500)
					bad++;
			}
		}
	}
	if (bad)
		fail_msg("%d of the rows above shed a calm service", bad);
}

/* A real overload on a partial feed is still cut, in connections: 3 x the
 * capacity (1000/s) from a fresh start, 1 request in 10 logged; clients
 * that wait without limit (a queue that grows), or give up after 0.5 s and
 * are logged as the proxies log them (499, -1); and the same overload
 * after a calm minute, the coverage learned by then, with clients that
 * wait, or give up after 0.5 s without a trace. From the tenth second on,
 * the service answers at least 90 % of its capacity and the limit averages
 * within 0.8-1.25 x C: the requests the feed shows are a tenth of those
 * answered, and a limit held at what it shows would be a tenth of the
 * capacity. */
static void an_overload_on_a_partial_feed_is_cut_to_capacity(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v;
	struct feed f;
	int k;

	printf("# overloaded service, C = 1000/s, 3 x C offered, 60 s\n");
	static const char *const how[] = { "fresh start, no patience",
					   "fresh start, give-ups logged",
					   "after a calm minute, no patience",
					   "after a calm minute, silent give-ups" };

	printf("# %8s %6s %8s %11s %9s %9s %6s  %s\n", "coverage", "load", "shed %",
	       "mean limit", "answered", "max wait", "probes", "from the 10th second");
	for (k = 0; k < 4; k++) {
		v = service(1000, 20);
		v.logged = 0.1;
		if (k == 1 || k == 3) {
			v.patience_ms = 500;
			v.quits_logged = k == 1;
		}
		aimd_init(&s, &p, p.max_rate);
		aimd_open(&s);
		if (k >= 2)
			feed_run(&p, &s, &v, 500, 60, 0, &f);
		feed_run(&p, &s, &v, 3 * v.capacity, 60, 10, &f);
		printf("# %7.0f%% %5.1fC %8.2f %11.0f %9.0f %7.0fms %6llu  %s\n", 100 * v.logged,
		       3.0, 100 * f.shed / f.offered, f.rate_sum / f.ticks,
		       f.answered / (f.ticks * 0.1), f.max_wait_ms,
		       (unsigned long long)s.lat.probes, how[k]);
		if (f.answered / (f.ticks * 0.1) < 0.9 * v.capacity ||
		    f.rate_sum / f.ticks < 0.8 * v.capacity || f.rate_sum / f.ticks > 1.25 * v.capacity)
			fail_msg("case %d: answered %.0f/s, limit %.0f/s from the 10th second", k,
				 f.answered / (f.ticks * 0.1), f.rate_sum / f.ticks);
	}
}

/* @n samples of a service time of mean @mean_ms drawn by @draw into @a,
 * read in steps of @res_ms when not 0 (nginx's $request_time: 1 ms). */
enum draw { FIXED, UNIFORM, EXPONENTIAL, BIMODAL_HALF, BIMODAL_TAIL };

static void draw_into(struct sample_agg *a, enum draw draw, double mean_ms, double res_ms,
		      int n, uint64_t *rng)
{
	int i;

	memset(a, 0, sizeof(*a));
	for (i = 0; i < n; i++) {
		double u = rng_unit(rng), ms = mean_ms;

		switch (draw) {
		case FIXED:
			break;
		case UNIFORM: /* +-20 % */
			ms *= 0.8 + 0.4 * u;
			break;
		case EXPONENTIAL:
			ms = -mean_ms * log1p(-u);
			break;
		case BIMODAL_HALF: /* half at a tenth of the slow mode */
			ms = u < 0.5 ? mean_ms / 10 : mean_ms;
			break;
		case BIMODAL_TAIL: /* 15 % at ten times the fast mode */
			ms = u < 0.15 ? 10 * mean_ms : mean_ms;
			break;
		}
		/* nginx logs a fixed time of 5 ms as 5 or 6 ms */
		if (res_ms > 0)
			ms = floor(ms / res_ms + 0.5) * res_ms +
			     (draw == FIXED && u < 0.5 ? res_ms : 0);
		agg_add(a, (__u64)(ms * 1e6));
	}
}

/* The spread (agg_spread()) is 1 + cs^2 read robustly: a fixed service
 * time reads 1, also logged at nginx's 1 ms (5 or 6 ms) or within +-20 %;
 * an exponential one reads 2 (20 000 samples within 0.15, the histogram's
 * quantiles being within 6.25 %; a point of 200 between 1.5 and 3, also
 * in 1 ms steps); two modes read more than a fixed time and,
 * with a heavy tail (15 % at ten times), far more than an exponential: the
 * clamp's job. Fewer than AGG_SPREAD_SAMPLES samples tell none. */
static void spread_of_fixed_exponential_and_bimodal_samples(void **state)
{
	struct sample_agg a;
	uint64_t rng = 0x5b7ead;
	double sp;
	int i;

	(void)state;
	draw_into(&a, FIXED, 5, 1, 200, &rng);
	assert_true(agg_spread(&a) >= 1 && agg_spread(&a) < 1.05);
	draw_into(&a, FIXED, 20, 0, 200, &rng);
	assert_true(agg_spread(&a) >= 1 && agg_spread(&a) < 1.01);
	draw_into(&a, UNIFORM, 20, 0, 200, &rng);
	assert_true(agg_spread(&a) >= 1 && agg_spread(&a) < 1.05);
	for (i = 0; i < 20; i++) {
		draw_into(&a, EXPONENTIAL, 5, 0, 200, &rng);
		sp = agg_spread(&a);
		if (sp < 1.5 || sp > 3)
			fail_msg("exponential, 200 samples, draw %d: spread %.2f", i, sp);
		draw_into(&a, EXPONENTIAL, 5, 1, 200, &rng);
		sp = agg_spread(&a);
		if (sp < 1.5 || sp > 3)
			fail_msg("exponential in 1 ms steps, draw %d: spread %.2f", i, sp);
	}
	draw_into(&a, EXPONENTIAL, 40, 0, 20000, &rng);
	assert_true(fabs(agg_spread(&a) - 2) < 0.15);
	draw_into(&a, BIMODAL_HALF, 50, 0, 200, &rng);
	sp = agg_spread(&a);
	assert_true(sp > 1.3 && sp < AIMD_SPREAD_MAX);
	draw_into(&a, BIMODAL_TAIL, 2, 0, 200, &rng);
	assert_true(agg_spread(&a) > 2 * AIMD_SPREAD_MAX);
	draw_into(&a, EXPONENTIAL, 5, 0, AGG_SPREAD_SAMPLES - 1, &rng);
	assert_true(agg_spread(&a) == 0);
	draw_into(&a, EXPONENTIAL, 5, 0, AGG_SPREAD_SAMPLES, &rng);
	assert_true(agg_spread(&a) > 1);
}

/* The target knows the service's spread: target = baseline + spread x
 * ((auto_k - 1) x baseline + margin). Calm at half the capacity for a
 * minute: a fixed time (+-20 %) keeps 2 x baseline + 5 ms; an
 * exponential one doubles the part above the baseline (Kingman: the wait
 * at a given utilisation doubles); cache misses at ten times the hits
 * (15 %) spread far more, and are held at AIMD_SPREAD_MAX. Nothing is cut
 * in calm. */
static void the_target_scales_with_the_spread(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct svc v;
	struct run r = { 0 };
	double b, want;
	int kind;

	(void)state;
	for (kind = 0; kind < 3; kind++) {
		v = service(1000, 20);
		v.exp = kind == 1;
		if (kind == 2) {
			v = service(1000, 4);
			v.slow_ms = 40;
			v.slow_frac = 0.15;
		}
		aimd_init(&s, &p, 2000);
		run_for(&p, &s, &v, &r, 500, 60);
		b = (double)s.lat.baseline_ns;
		want = b + s.lat.spread * ((p.auto_k - 1) * b + (double)p.auto_margin_ns);
		if ((kind == 0 && (s.lat.spread < 1 || s.lat.spread > 1.05)) ||
		    (kind == 1 && (s.lat.spread < 1.7 || s.lat.spread > AIMD_SPREAD_MAX)) ||
		    (kind == 2 && s.lat.spread != AIMD_SPREAD_MAX) ||
		    fabs((double)target(&p, &s) - want) > 1e3 || r.latency_ticks || s.rate < 2000)
			fail_msg("service %d: baseline %.1f ms, spread %.2f, target %.1f ms "
				 "(want %.1f), %d ticks cut, limit %.0f", kind, b / 1e6,
				 s.lat.spread, target(&p, &s) / 1e6, want / 1e6, r.latency_ticks,
				 s.rate);
	}
}

/* Started into an overload (3 x C) of an exponential service: the calm
 * probe's point carries the spread of its own samples (its flat run, or
 * the pool it ended with), so the target knows it from the probe on. */
static void a_probe_measures_the_spread(void **state)
{
	struct aimd_params p = probe_params();
	struct aimd_state s;
	struct svc v;
	struct cold c;
	int seed;

	(void)state;
	for (seed = 0; seed < 5; seed++) {
		v = service(1000, 20);
		v.exp = true;
		v.rng += (uint64_t)seed;
		v.patience_ms = 500;
		v.quits_logged = true;
		aimd_init(&s, &p, 20000);
		cold_run(&p, &s, &v, 3 * v.capacity, 5, &c);
		if (s.lat.probes != 1 || s.lat.probing || s.lat.spread < 1.5)
			fail_msg("draw %d: %llu probes, baseline %.1f ms, spread %.2f", seed,
				 (unsigned long long)s.lat.probes, s.lat.baseline_ns / 1e6,
				 s.lat.spread);
	}
}

/* Started into 10 x the capacity of one server of exponential times (5 ms,
 * 200/s): the probe holds half the served rate once the queue from before
 * it is gone, and ends once two pools of its levels agree within their
 * noise. Three flat steps of 3 samples in a row rarely come from such a
 * service: with them alone, 6 of these 20 probes ran over 2 s, up to
 * probe_max_ns (3 s at half the rate); with the pools, 1.4 s at most.
 * 20 draws: each probe ends within 2 s, and its point within [0.6, 1.6] x
 * the calm statistic (its samples are read at half the capacity, where an
 * exponential server still queues). */
static void an_exponential_service_ends_its_probe_in_two_pools(void **state)
{
	struct aimd_params p = probe_params();
	struct aimd_state s;
	struct svc v;
	struct cold c;
	int seed, over = 0, longest = 0;

	(void)state;
	for (seed = 0; seed < 20; seed++) {
		v = service(200, 5);
		v.exp = true;
		v.rng += (uint64_t)seed * 7919;
		v.patience_ms = 500;
		v.quits_logged = true;
		aimd_init(&s, &p, 20000);
		cold_run(&p, &s, &v, 10 * v.capacity, 8, &c);
		if (c.probe_ticks > longest)
			longest = c.probe_ticks;
		if (getenv("SHEDD_AUTO_TRACE"))
			fprintf(stderr, "draw %d: probe %d ticks, baseline %.1f ms spread %.2f\n", seed,
				c.probe_ticks, s.lat.baseline_ns / 1e6, s.lat.spread);
		if (s.lat.probes != 1 || s.lat.probing ||
		    s.lat.baseline_ns < 0.6 * 0.83 * 5 * MS || s.lat.baseline_ns > 1.6 * 0.83 * 5 * MS)
			fail_msg("draw %d: %llu probes, baseline %.1f ms", seed,
				 (unsigned long long)s.lat.probes, s.lat.baseline_ns / 1e6);
		over += (__u64)c.probe_ticks * TICK > 2 * SEC;
	}
	if (over)
		fail_msg("%d of 20 probes ran over 2 s (longest %d ticks)", over, longest);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(converges_to_k_times_baseline),
		cmocka_unit_test(overload_is_cut_and_the_limit_recovers),
		cmocka_unit_test(started_into_an_overload),
		cmocka_unit_test(baseline_does_not_creep_within_the_window),
		cmocka_unit_test(bimodal_service_is_not_cut_in_calm),
		cmocka_unit_test(samples_stopping_drop_latency_as_a_signal),
		cmocka_unit_test(too_few_samples_say_nothing),
		cmocka_unit_test(slower_for_good_is_relearned_within_the_window),
		cmocka_unit_test(explicit_target_wins),
		cmocka_unit_test(cold_start_probes_only_into_an_overload),
		cmocka_unit_test(cold_start_of_a_few_requests_a_tick),
		cmocka_unit_test(a_long_overload_renews_the_calm_point),
		cmocka_unit_test(a_partial_feed_is_not_read_as_overload),
		cmocka_unit_test(a_partial_feed_of_a_bimodal_service_is_not_read_as_overload),
		cmocka_unit_test(an_overload_on_a_partial_feed_is_cut_to_capacity),
		cmocka_unit_test(spread_of_fixed_exponential_and_bimodal_samples),
		cmocka_unit_test(the_target_scales_with_the_spread),
		cmocka_unit_test(a_probe_measures_the_spread),
		cmocka_unit_test(an_exponential_service_ends_its_probe_in_two_pools),
	};

	return cmocka_run_group_tests_name("auto_target", tests, NULL, NULL);
}
