// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* latency_target.c - the latency verdicts of the controller: the derived
 * target (its baseline points, the calm probe, the verdicts) and the
 * explicit one. See latency_target.h for the law; everything here is
 * arithmetic on its arguments.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "latency_target.h"
#include "req_per_conn.h"

#define MS 1000000ULL
/* A short step: a tick, or as many as it takes to gather this many
 * samples (as a probe's steps). */
#define SHORT_STEP_SAMPLES 3

/* The window slot that @now_ns falls in, counted from 1 (0 = empty). */
static __u64 auto_epoch(const struct aimd_params *p, __u64 now_ns)
{
	__u64 slot_ns = p->auto_window_ns / AIMD_AUTO_SLOTS;

	return 1 + now_ns / (slot_ns ? slot_ns : 1);
}

/* A point's spread (agg_spread()) as the target uses it: within [1,
 * AIMD_SPREAD_MAX], 1 when not measured. */
static double spread_in_force(double spread)
{
	if (spread < 1)
		return 1;
	return spread > AIMD_SPREAD_MAX ? AIMD_SPREAD_MAX : spread;
}

/* The baseline: the smallest point of the slots still inside the window
 * (0 = none); the spread of the smallest of them that measured one (1:
 * none did); and the target derived from both (0 = none). */
static void auto_refresh(const struct aimd_params *p, struct aimd_auto *a, __u64 now_ns)
{
	__u64 epoch = auto_epoch(p, now_ns), base = 0, at = 0;
	double t, spread = 0;
	int i;

	for (i = 0; i < AIMD_AUTO_SLOTS; i++) {
		if (!a->slot_epoch[i] || epoch - a->slot_epoch[i] >= AIMD_AUTO_SLOTS)
			continue;
		if (!base || a->slot_min_ns[i] < base)
			base = a->slot_min_ns[i];
		if (a->slot_spread_ns[i] && (!at || a->slot_spread_ns[i] < at)) {
			at = a->slot_spread_ns[i];
			spread = a->slot_spread[i];
		}
	}
	a->baseline_ns = base;
	a->target_ns = 0;
	a->spread = 0;
	a->spread_ns = at;
	if (!base)
		return;
	/* Kingman: the wait at a given utilisation scales with the spread,
	 * the service's own time does not. */
	a->spread = spread_in_force(spread);
	t = (double)base + a->spread * ((p->auto_k - 1) * (double)base + (double)p->auto_margin_ns);
	if (t < (double)p->auto_min_ns)
		t = (double)p->auto_min_ns;
	if (t > (double)p->auto_max_ns)
		t = (double)p->auto_max_ns;
	a->target_ns = (__u64)t;
}

/* A calm point @point_ns whose samples spread @spread (0: not measured). */
static void auto_add_point(const struct aimd_params *p, struct aimd_auto *a, __u64 now_ns,
			   __u64 point_ns, double spread)
{
	__u64 epoch = auto_epoch(p, now_ns);
	int i = (int)(epoch % AIMD_AUTO_SLOTS);

	if (!point_ns)
		point_ns = 1; /* 0 means empty */
	if (a->slot_epoch[i] != epoch) {
		a->slot_epoch[i] = epoch;
		a->slot_min_ns[i] = point_ns;
		a->slot_spread_ns[i] = 0;
	} else if (point_ns < a->slot_min_ns[i]) {
		a->slot_min_ns[i] = point_ns;
	}
	if (spread > 0 && (!a->slot_spread_ns[i] || point_ns < a->slot_spread_ns[i])) {
		a->slot_spread_ns[i] = point_ns;
		a->slot_spread[i] = spread;
	}
}

/* Connections per request answered: the handshakes completed per request
 * answered over the served window, at most 1 (1 when not known: every
 * request on its own connection), which say how much of what is served
 * came on the connections admitted now; and at most 1 / the requests per
 * connection of req_per_conn.h, measured apart from the overload the probe
 * drains: during a keep-alive overload the handshakes are what shedd
 * admits, and a probe at half of that admits still too much. */
static double per_conn(const struct aimd_state *s)
{
	double conns = 0, served = 0, most = 1 / rpc_get(s, NULL);
	int i;

	for (i = 0; i < AIMD_SERVED_SLOTS; i++) {
		if (s->conn_n[i] < 0)
			return most;
		conns += s->conn_n[i];
		served += s->served_n[i];
	}
	if (served <= 0 || conns >= served)
		return most;
	return conns / served < most ? conns / served : most;
}

/* The share of the connections a feed covers, from the requests it showed
 * answered and the handshakes completed meanwhile, with no queue between
 * them: 1 (the whole feed) from AIMD_COVER_WHOLE up, and above 1 (several
 * requests a connection); 0 when nothing completed (not known). */
static double cover_of(double answered, double completed)
{
	double c;

	if (completed <= 0)
		return 0;
	c = answered / completed;
	return c >= AIMD_COVER_WHOLE ? 1 : c;
}

/* A measure @c of the feed's coverage (cover_of()): the first is taken as
 * it is, the next ones weigh a quarter (a point of 100 samples on a tenth
 * of the connections is 10 % off by itself). */
static void cover_learn(struct aimd_auto *a, double c)
{
	if (c <= 0)
		return;
	a->cover = a->cover > 0 ? 0.75 * a->cover + 0.25 * c : c;
	if (a->cover >= AIMD_COVER_WHOLE)
		a->cover = 1;
}

/* The feed's share in force: what is answered is divided by it. */
static double cover_in_force(const struct aimd_auto *a)
{
	return a->cover > 0 && a->cover < 1 ? a->cover : 1;
}

double latency_answered(const struct aimd_auto *a, double answered)
{
	return answered / cover_in_force(a);
}

static void point_reset(struct aimd_auto *a)
{
	a->point_sum = 0;
	a->point_n = 0;
	memset(&a->point_agg, 0, sizeof(a->point_agg));
	a->point_last_mid_ns = 0;
	a->point_step_sum = 0;
	a->point_step_n = 0;
	a->point_first_step_ns = 0;
	a->point_last_step_ns = 0;
	a->point_short_sum = 0;
	a->point_short_n = 0;
	a->point_first_short_ns = 0;
	a->point_first_short_at_ns = 0;
	a->point_last_short_ns = 0;
	a->point_last_short_at_ns = 0;
	a->point_short_min_ns = 0;
	a->point_last_short_min_ns = 0;
	a->point_completed = 0;
	a->point_answered = 0;
	a->point_pressure = false;
	a->point_binding = false;
	a->point_gap = false;
	a->point_over = false;
}

/* No pool of levels in a row before the next. */
static void pool_forget(struct aimd_auto *a)
{
	a->probe_pool_last_ns = 0;
	a->probe_pool_last_n = 0;
	a->probe_pool_last_spread = 0;
	a->probe_pool_alike = false;
}

/* Two pools of levels in a row, of means @m1 and @m2 over @n1 and @n2
 * samples of spreads @s1 and @s2 (1 + cs^2, 0: not measured), differ by no
 * more than their noise, twice the standard error of the difference
 * (each mean's cs x mean / sqrt(n), cs the service's), or than @near: the level neither
 * falls (a queue from before the probe drains by (1 - f) / f ms per ms,
 * far more over a pool) nor climbs. Steps of 3 samples of a service of
 * exponential times jump by their mean, so three flat ones in a row rarely
 * come; pools of AIMD_PROBE_POOL tell its level in two pools' time. */
static bool pools_alike(double m1, double n1, double s1, double m2, double n2, double s2,
			__u64 near)
{
	double c1 = s1 > 1 ? s1 - 1 : 0, c2 = s2 > 1 ? s2 - 1 : 0;
	/* The service's cs^2 is the smaller: a pool that still holds the
	 * end of a draining queue spreads as far as the queue was long. */
	double c = c1 < c2 ? c1 : c2;
	double tol = 2 * sqrt(c * (m1 * m1 / n1 + m2 * m2 / n2));

	if (tol < (double)near)
		tol = (double)near;
	return fabs(m1 - m2) <= tol;
}

/* What a probe holds for a served rate of @served requests/s: probe_frac of
 * it, in connections, never above the limit the probe began under. */
static double probe_hold_of(const struct aimd_params *p, const struct aimd_auto *a,
			    double served)
{
	double r = p->probe_frac * served * a->probe_per_conn;

	return r < a->probe_hold_cap ? r : a->probe_hold_cap;
}

/* Begin a calm probe (see "Calm probe" in latency_target.h): hold the limit at
 * probe_frac of the served rate, in connections, never above the limit. */
static void probe_begin(const struct aimd_params *p, struct aimd_state *s, __u64 now_ns)
{
	struct aimd_auto *a = &s->lat;

	/* Requests per connection as the probe begins: during it the
	 * service answers requests queued before it on connections it cut,
	 * and its handshakes per request say how deep it cut. */
	a->probe_per_conn = per_conn(s);
	a->probing = true;
	a->probe_done = false;
	a->probe_start_ns = now_ns;
	a->probe_hold_cap = s->rate;
	a->probe_hold = probe_hold_of(p, a, s->served_rate);
	a->probe_rate = AIMD_PROBE_TRICKLE * a->probe_hold;
	a->probe_served0 = s->served_rate;
	a->probe_busy_min_ns = 0;
	a->probe_min_ns = 0;
	a->probe_pool_sum = 0;
	a->probe_pool_n = 0;
	a->probe_pool_min_ns = 0;
	a->probe_pool_spread = 0;
	pool_forget(a);
	memset(&a->probe_step_agg, 0, sizeof(a->probe_step_agg));
	memset(&a->probe_pool_agg, 0, sizeof(a->probe_pool_agg));
	memset(&a->probe_flat_agg, 0, sizeof(a->probe_flat_agg));
	a->probe_flat = 0;
	a->probe_flat_sum = 0;
	a->probe_flat_n = 0;
	a->probe_step_sum = 0;
	a->probe_step_n = 0;
	a->probe_step_ns = 0;
	a->probe_step_completed = 0;
	a->probe_step_answered = 0;
	a->probe_flat_completed = 0;
	a->probe_flat_answered = 0;
	a->probe_wait = false;
	a->probe_served = s->served_rate;
	a->probes++;
	a->probe_lag_ns = a->point_last_mid_ns;
	point_reset(a);
	a->verdict_sum = 0;
	a->verdict_n = 0;
	a->above_since_ns = 0;
	a->over = false;
}

static void probe_end(const struct aimd_params *p, struct aimd_auto *a, __u64 now_ns)
{
	bool flat = a->probe_flat >= 3 && a->probe_flat_n;
	__u64 point = flat ? (__u64)(a->probe_flat_sum / (double)a->probe_flat_n) :
		      a->probe_pool_min_ns ? a->probe_pool_min_ns : a->probe_min_ns;
	/* The spread of the samples the point is made of; the lowest
	 * single step has too few to tell. */
	double spread = flat ? agg_spread(&a->probe_flat_agg) :
			a->probe_pool_min_ns ? a->probe_pool_spread : 0;

	/* Busy to the end (requests on connections it cannot cut): the
	 * lowest it saw, as before the probe knew busy. */
	if (!point) {
		point = a->probe_busy_min_ns;
		spread = 0;
	}
	a->probing = false;
	a->probe_done = true;
	if (point) {
		auto_add_point(p, a, now_ns, point, spread);
		a->calm_at_ns = now_ns;
	}
	/* The flat steps answered what they took: the feed's coverage, if
	 * they showed a verdict's worth of answers. The served peak was
	 * counted with the coverage in force before. */
	if (a->probe_flat > 1 && a->probe_flat_answered >= (double)p->auto_verdict_samples) {
		double before = cover_in_force(a);

		cover_learn(a, cover_of(a->probe_flat_answered, a->probe_flat_completed));
		a->probe_served *= before / cover_in_force(a);
	}
	auto_refresh(p, a, now_ns);
}

/* Busy: the service answers (over its last ticks) more than midway between
 * what it answered as the probe began and what the probe lets in, in
 * requests (aimd_update() holds min_rate at least). It works off a queue
 * from before the probe, whether one that drains (first in first out) or
 * one held at its level (a proxy's connections waiting outside a full
 * backlog, keep-alive clients' next requests). */
static bool probe_busy(const struct aimd_params *p, const struct aimd_state *s)
{
	const struct aimd_auto *a = &s->lat;
	double in;

	if (a->probe_per_conn <= 0)
		return false;
	in = (a->probe_rate > p->min_rate ? a->probe_rate : p->min_rate) / a->probe_per_conn;
	return in < a->probe_served0 && s->served_recent > (in + a->probe_served0) / 2;
}

/* One tick of a probe. The requests answered in its first E (the level it
 * began at) arrived before it; after that the level falls by (1 - f) / f
 * per unit of time while the queue drains. A tick that falls by less than
 * half that and stays near the lowest seen is flat; three in a row end it. */
static void probe_step(const struct aimd_params *p, struct aimd_state *s,
		       const struct aimd_signals *sig, __u64 now_ns)
{
	struct aimd_auto *a = &s->lat;
	__u64 dt = sig->dt_ns ? sig->dt_ns : p->tick_ns;
	__u64 elapsed = now_ns - a->probe_start_ns, lag = a->probe_lag_ns;
	double f = p->probe_frac > 0.05 ? p->probe_frac : 0.05;
	double fall;

	/* A cold start's probe begins on the service's first answers,
	 * before it has shown its rate: the hold follows the highest rate
	 * it serves while it drains, never above the limit the probe began
	 * under. */
	if (s->served_rate > a->probe_served) {
		a->probe_served = s->served_rate;
		a->probe_hold = probe_hold_of(p, a, a->probe_served);
	}
	/* A step is a tick, or as many as it takes to gather 3 samples: a
	 * service of a few requests a tick must end its probe with a level
	 * too, or it probes again and again. */
	if (sig->have_latency && sig->latency_count) {
		a->probe_step_sum += (double)sig->latency_mid_ns * (double)sig->latency_count;
		a->probe_step_n += sig->latency_count;
		a->probe_step_answered += (double)sig->latency_served;
		if (sig->latency_agg)
			agg_merge(&a->probe_step_agg, sig->latency_agg);
	}
	a->probe_step_completed += sig->have_completed ? (double)sig->completed : 0;
	a->probe_step_ns += dt;
	if (a->probe_step_n >= 3) {
		__u64 mid = (__u64)(a->probe_step_sum / (double)a->probe_step_n);
		__u64 prev = a->probe_min_ns, n = a->probe_step_n;
		__u64 near = prev / 5 > 2 * MS ? prev / 5 : 2 * MS;

		/* A level of the service: answers to requests sent during
		 * the probe (it has run longer than they took), and answered.
		 * Earlier answers show the queue as it grew before the probe
		 * took hold, and a give-up (499) shows the clients' patience,
		 * not the service. */
		bool level = elapsed >= mid && a->probe_step_answered >= 0.9 * (double)n;

		/* ... and only once the service is no longer busy with the
		 * queue from before the probe: a queue held at its level is
		 * as flat as the service's own time. */
		if (level && probe_busy(p, s)) {
			if (!a->probe_busy_min_ns || mid < a->probe_busy_min_ns)
				a->probe_busy_min_ns = mid;
			level = false;
		}
		/* The first level: the queue is gone, hold probe_frac. */
		if (level)
			a->probe_rate = a->probe_hold;

		fall = 0.5 * (1 - f) / f * (double)a->probe_step_ns;
		/* The queue from before the probe is still there: no level
		 * yet, or one still falling faster than flat (draining). */
		a->probe_wait = !level || !prev || (double)mid + fall < (double)prev;
		if (level && (!prev || mid < prev))
			a->probe_min_ns = mid;
		/* Levels in a row, pooled to AIMD_PROBE_POOL samples: the
		 * lowest pool is the end without a flat run. */
		if (level) {
			a->probe_pool_sum += (double)mid * (double)n;
			a->probe_pool_n += n;
			if (a->probe_pool_n >= AIMD_PROBE_POOL) {
				__u64 pm = (__u64)(a->probe_pool_sum / (double)a->probe_pool_n);
				double ps;

				agg_merge(&a->probe_pool_agg, &a->probe_step_agg);
				ps = agg_spread(&a->probe_pool_agg);
				if (!a->probe_pool_min_ns || pm < a->probe_pool_min_ns) {
					a->probe_pool_min_ns = pm;
					a->probe_pool_spread = ps;
				}
				if (a->probe_pool_last_ns && elapsed >= lag &&
				    pools_alike((double)a->probe_pool_last_ns,
						(double)a->probe_pool_last_n,
						a->probe_pool_last_spread, (double)pm,
						(double)a->probe_pool_n, ps, near))
					a->probe_pool_alike = true;
				a->probe_pool_last_ns = pm;
				a->probe_pool_last_n = a->probe_pool_n;
				a->probe_pool_last_spread = ps;
				a->probe_pool_sum = 0;
				a->probe_pool_n = 0;
				memset(&a->probe_pool_agg, 0, sizeof(a->probe_pool_agg));
			} else {
				agg_merge(&a->probe_pool_agg, &a->probe_step_agg);
			}
		} else {
			a->probe_pool_sum = 0;
			a->probe_pool_n = 0;
			memset(&a->probe_pool_agg, 0, sizeof(a->probe_pool_agg));
			pool_forget(a);
		}
		if (level && elapsed >= lag && prev && (double)mid + fall >= (double)prev &&
		    mid <= prev + near) {
			a->probe_flat++;
			a->probe_flat_sum += (double)mid * (double)n;
			a->probe_flat_n += n;
			agg_merge(&a->probe_flat_agg, &a->probe_step_agg);
			/* The first flat step may still hold the answers
			 * of the queue's last requests. */
			if (a->probe_flat > 1) {
				a->probe_flat_completed += a->probe_step_completed;
				a->probe_flat_answered += a->probe_step_answered;
			}
		} else {
			a->probe_flat = 0;
			a->probe_flat_sum = 0;
			a->probe_flat_n = 0;
			a->probe_flat_completed = 0;
			a->probe_flat_answered = 0;
			memset(&a->probe_flat_agg, 0, sizeof(a->probe_flat_agg));
		}
		memset(&a->probe_step_agg, 0, sizeof(a->probe_step_agg));
		a->probe_step_sum = 0;
		a->probe_step_n = 0;
		a->probe_step_ns = 0;
		a->probe_step_completed = 0;
		a->probe_step_answered = 0;
	}
	/* At probe_max_ns with the lowest level seen, unless the last step
	 * still showed the queue from before the probe: a cold start into
	 * many times the capacity leaves seconds of work its clients gave
	 * up on, and a probe that ended in it took the level of the queue's
	 * growth for calm. Then at the first step that does not, or at
	 * AIMD_PROBE_NO_LEVEL x probe_max_ns. */
	if (((a->probe_flat >= 3 || a->probe_pool_alike) && elapsed >= p->probe_min_ns) ||
	    (elapsed >= p->probe_max_ns && !a->probe_wait) ||
	    elapsed >= AIMD_PROBE_NO_LEVEL * p->probe_max_ns)
		probe_end(p, a, now_ns);
}

/* Handshakes outran the answers over the point gathered so far, by more
 * than the share of the connections the feed does not cover (@cover; 1:
 * all of them covered). */
static bool outran(const struct aimd_auto *a, double cover)
{
	return a->point_completed * cover > 1.25 * a->point_answered + 5 && a->point_answered > 0;
}

/* While the coverage is not known, handshakes outrunning answers by a
 * ratio g are requests waiting inside the service only if the latency
 * rises with them: first in first out, the answers' latency then grows by
 * (1 - 1/g) ms per ms, all of them. Judged on short steps from the point's
 * first to its last: the statistic doubled (+ 5 ms) and grew at least half
 * that pace, and the last step's fastest answer is above the first step's
 * statistic (+ 5 ms). A feed that covers part of the connections shows
 * the same gap with a flat latency; a bimodal service's steps jump between
 * its modes by chance, but its fast answers stay where they were, and the
 * mix does not climb at that pace for long (1 - 1/g is 0.9 ms per ms on a
 * tenth of the connections). */
static bool rising(const struct aimd_auto *a)
{
	double g, dt;

	if (!a->point_first_short_ns || a->point_answered <= 0 ||
	    a->point_last_short_at_ns <= a->point_first_short_at_ns ||
	    a->point_last_short_ns <= 2 * a->point_first_short_ns + 5 * MS)
		return false;
	/* The whole last step above the first: a bimodal service's fast
	 * answers stay where they were. */
	if (a->point_last_short_min_ns && a->point_last_short_min_ns <= a->point_first_short_ns + 5 * MS)
		return false;
	g = a->point_completed / a->point_answered;
	dt = (double)(a->point_last_short_at_ns - a->point_first_short_at_ns);
	return (double)(a->point_last_short_ns - a->point_first_short_ns) >= 0.5 * (1 - 1 / g) * dt;
}

/* Evidence of pressure over the point gathered so far (see "Calm probe"),
 * handshakes outrunning answers aside (point_gap). */
static bool pressured(const struct aimd_auto *a)
{
	if (a->point_n >= 10 && a->point_answered < 0.9 * (double)a->point_n)
		return true;
	return a->point_first_step_ns &&
	       a->point_last_step_ns > 2 * a->point_first_step_ns + 5 * MS;
}

/* A verdict's samples (the derived and the explicit target alike): @v
 * weighted by @w is added to *@sum / *@n, begun at *@begun_ns; a
 * gathering older than auto_stale_ns starts over (a trickle too thin for
 * a verdict). Returns true with the verdict's statistic in *@out once it
 * has auto_verdict_samples, and starts the next one. */
static bool verdict_gather(const struct aimd_params *p, double *sum, __u64 *n,
			   __u64 *begun_ns, __u64 tick_start_ns, __u64 now_ns, __u64 w, double v,
			   double *out)
{
	if (*n && now_ns - *begun_ns > p->auto_stale_ns) {
		*sum = 0;
		*n = 0;
	}
	if (!*n)
		*begun_ns = tick_start_ns;
	*sum += (double)w * v;
	*n += w;
	if (*n < p->auto_verdict_samples)
		return false;
	*out = *sum / (double)*n;
	*sum = 0;
	*n = 0;
	return true;
}

/* A verdict's statistic @v against @target: below it ends the run of
 * verdicts above; above it for auto_interval_ns is overload (CoDel's
 * first_above_time), or at once with @jump. Returns *@over. */
static bool verdict_judge(const struct aimd_params *p, double v, __u64 target, bool jump,
			  __u64 now_ns, __u64 *above_since_ns, bool *over)
{
	if (!target || v <= (double)target) {
		*above_since_ns = 0;
		*over = false;
	} else if (jump) {
		*above_since_ns = now_ns;
		*over = true;
	} else if (!*above_since_ns) {
		*above_since_ns = now_ns + p->auto_interval_ns;
	} else if (now_ns >= *above_since_ns) {
		*over = true;
	}
	return *over;
}

bool latency_derived(const struct aimd_params *p, struct aimd_state *s,
		     const struct aimd_signals *sig, __u64 now_ns, unsigned int other)
{
	struct aimd_auto *a = &s->lat;
	__u64 dt = sig->dt_ns ? sig->dt_ns : p->tick_ns;
	__u64 start = now_ns > dt ? now_ns - dt : 0;
	double w, v;

	if (a->probing) {
		probe_step(p, s, sig, now_ns);
		return false;
	}
	/* Samples stopped (or never came): no verdict for a while means no
	 * signal, not the last one stuck. */
	if (a->last_verdict_ns && now_ns - a->last_verdict_ns > p->auto_stale_ns) {
		a->over = false;
		a->above_since_ns = 0;
		a->last_verdict_ns = 0;
	}
	if (!sig->have_latency || !sig->latency_count) {
		/* A thin feed leaves ticks without a sample: the handshakes
		 * of a point's ticks count all the same. */
		if (a->point_n && sig->have_completed)
			a->point_completed += (double)sig->completed;
		auto_refresh(p, a, now_ns);
		return a->over;
	}
	w = (double)sig->latency_count;
	v = (double)sig->latency_mid_ns;

	/* A baseline point: enough samples, and enough time to average out
	 * a tick's noise; but the first point as soon as it has the samples:
	 * shedd started into a growing queue must not average a second of
	 * growth into its baseline. Only a point without pressure is calm. */
	if (!a->point_n)
		a->point_start_ns = start;
	if (sig->latency_count >= 5)
		a->point_last_mid_ns = sig->latency_mid_ns;
	/* Whether the statistic doubles is judged on steps of half a
	 * point's samples (a tick, or as many as it takes). */
	a->point_step_sum += w * v;
	a->point_step_n += sig->latency_count;
	if (a->point_step_n >= (p->auto_point_samples + 1) / 2) {
		a->point_last_step_ns = (__u64)(a->point_step_sum / (double)a->point_step_n);
		if (!a->point_first_step_ns)
			a->point_first_step_ns = a->point_last_step_ns;
		a->point_step_sum = 0;
		a->point_step_n = 0;
	}
	a->point_short_sum += w * v;
	a->point_short_n += sig->latency_count;
	if (sig->latency_min_ns && (!a->point_short_min_ns || sig->latency_min_ns < a->point_short_min_ns))
		a->point_short_min_ns = sig->latency_min_ns;
	if (a->point_short_n >= SHORT_STEP_SAMPLES) {
		a->point_last_short_ns = (__u64)(a->point_short_sum / (double)a->point_short_n);
		a->point_last_short_min_ns = a->point_short_min_ns;
		a->point_last_short_at_ns = now_ns;
		if (!a->point_first_short_ns) {
			a->point_first_short_ns = a->point_last_short_ns;
			a->point_first_short_at_ns = now_ns;
		}
		a->point_short_sum = 0;
		a->point_short_n = 0;
		a->point_short_min_ns = 0;
	}
	a->point_sum += w * v;
	a->point_n += sig->latency_count;
	if (sig->latency_agg)
		agg_merge(&a->point_agg, sig->latency_agg);
	a->point_completed += sig->have_completed ? (double)sig->completed : 0;
	a->point_answered += (double)sig->latency_served;
	if (other || pressured(a))
		a->point_pressure = true;
	/* Before the coverage is known, the gap with the latency climbing
	 * along is a queue ("Coverage" in latency_target.h). */
	if (sig->have_completed && a->cover <= 0 && outran(a, 1) && rising(a))
		a->point_pressure = true;
	/* Handshakes outrunning answers are evidence only once the feed's
	 * coverage is known ("Coverage" in latency_target.h). */
	if (sig->have_completed && a->cover > 0 && outran(a, cover_in_force(a)))
		a->point_gap = true;
	if (a->over)
		a->point_over = true;
	if (sig->demand >= s->rate)
		a->point_binding = true;
	/* Started into an overload: no calm reference, so make one. */
	if (!a->baseline_ns && (a->point_pressure || a->point_gap) &&
	    a->point_n >= p->auto_verdict_samples) {
		probe_begin(p, s, now_ns);
		return false;
	}
	/* The first point as soon as it has the samples, unless handshakes
	 * outran the answers while the feed's coverage is not known: a
	 * partial feed, or a queue, whose latency the whole point shows. */
	if (a->point_n >= p->auto_point_samples &&
	    (now_ns - a->point_start_ns >= p->auto_point_ns ||
	     (!a->baseline_ns && !(a->cover <= 0 && outran(a, 1))))) {
		bool renew = a->point_binding && a->calm_at_ns &&
			     now_ns - a->calm_at_ns >= p->probe_every_ns;

		if (!a->point_pressure && !a->point_gap) {
			auto_add_point(p, a, now_ns, (__u64)(a->point_sum / (double)a->point_n),
				       agg_spread(&a->point_agg));
			if (!a->point_binding)
				a->calm_at_ns = now_ns;
			cover_learn(a, cover_of(a->point_answered, a->point_completed));
		} else if (!a->point_pressure && !a->point_over) {
			/* The answers fell behind the handshakes while the
			 * latency stayed under its target: no queue, the feed
			 * covers less than it did (a vhost stopped logging, a
			 * coverage taken from a probe's few samples). */
			a->cover = 0;
			cover_learn(a, cover_of(a->point_answered, a->point_completed));
		}
		point_reset(a);
		if (renew) {
			auto_refresh(p, a, now_ns);
			probe_begin(p, s, now_ns);
			return false;
		}
	}
	auto_refresh(p, a, now_ns);

	/* A verdict: enough samples, all recent. */
	if (!verdict_gather(p, &a->verdict_sum, &a->verdict_n, &a->verdict_start_ns, start, now_ns,
			    sig->latency_count, v, &v))
		return a->over;
	a->last_verdict_ns = now_ns;
	a->last_mid_ns = (__u64)v;
	/* Far above, within one tick: a queue growing this fast is no
	 * burst. A verdict gathered over ticks is a trickle of samples,
	 * which waits the interval like any other. */
	return verdict_judge(p, v, a->target_ns,
			     v > p->auto_jump * (double)a->target_ns &&
				     now_ns - a->verdict_start_ns <= dt,
			     now_ns, &a->above_since_ns, &a->over);
}

bool latency_explicit(const struct aimd_params *p, struct aimd_state *s,
		      const struct aimd_signals *sig, __u64 now_ns)
{
	__u64 dt = sig->dt_ns ? sig->dt_ns : p->tick_ns;
	__u64 start = now_ns > dt ? now_ns - dt : 0;
	double v;

	if (s->vlast_ns && now_ns - s->vlast_ns > p->auto_stale_ns) {
		s->vover = false;
		s->vabove_ns = 0;
		s->vlast_ns = 0;
	}
	if (!sig->have_latency || !sig->latency_count)
		return s->vover;
	if (!verdict_gather(p, &s->vsum, &s->vn, &s->vstart_ns, start, now_ns, sig->latency_count,
			    (double)sig->latency_p99_ns, &v))
		return s->vover;
	s->vlast_ns = now_ns;
	s->vval_ns = (__u64)v;
	return verdict_judge(p, v, p->latency_target_ns, false, now_ns, &s->vabove_ns, &s->vover);
}

__u64 aimd_latency_target(const struct aimd_params *p, const struct aimd_state *s,
			  bool *derived)
{
	if (derived)
		*derived = !p->latency_target_ns && p->latency_auto;
	if (p->latency_target_ns)
		return p->latency_target_ns;
	return p->latency_auto ? s->lat.target_ns : 0;
}

bool latency_headroom(const struct aimd_params *p, const struct aimd_auto *a)
{
	if (p->latency_target_ns || !p->latency_auto || !a->target_ns || !a->last_verdict_ns ||
	    a->over || a->probing)
		return false;
	return a->last_mid_ns <= a->baseline_ns + (a->target_ns - a->baseline_ns) / 4;
}

void latency_resume(const struct aimd_params *p, struct aimd_auto *a, __u64 baseline_ns,
		    double spread, __u64 calm_at_ns, __u64 now_ns)
{
	auto_add_point(p, a, calm_at_ns, baseline_ns, spread);
	a->calm_at_ns = calm_at_ns;
	auto_refresh(p, a, now_ns);
}
