// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* aimd.c - the overload verdict and the AIMD control law with ramped
 * recovery. See aimd.h for the law; everything here is arithmetic on its
 * arguments.
 */
#include <math.h>
#include <stdint.h>
#include "aimd.h"
#include "shedd.h"

#define MS 1000000ULL

void aimd_defaults(struct aimd_params *p)
{
	*p = (struct aimd_params){
		.target_delay_ns = 5 * MS,
		.interval_ns = 100 * MS,
		.depth_frac = 0.7,
		.latency_target_ns = 0,
		.latency_auto = true,
		.auto_k = 2.0,
		.auto_margin_ns = 5 * MS,
		.auto_min_ns = 10 * MS,
		.auto_max_ns = 500 * MS, /* a quarter of the default --patience */
		.auto_window_ns = 300000 * MS,
		.auto_point_ns = 1000 * MS,
		.auto_point_samples = 100,
		.auto_verdict_samples = 10,
		.auto_stale_ns = 1000 * MS,
		.auto_interval_ns = 500 * MS,
		.alpha_per_sec = 0, /* 0: 1 % of the last good rate, see alpha() */
		.beta = 0.95,
		.min_rate = 10,
		.max_rate = 100000,
		.ramp = { 0.1, 0.5, 1.0 },
		.nr_stages = 3,
		.stage_hold_ns = 1000 * MS,
		.tick_ns = 100 * MS,
		.good_cap = 1.5,
		.ramp_cap = 1.0,
		.served_floor = 1.0,
		.drain_ns = 1000 * MS,
		.drain_min = 0.5,
		.drain_answered = 0.95,
		.shallow_frac = 0.9,
		.peak_decay = 0.99,
		.complete_frac = 0.8,
		.stall_ns = 300 * MS,
		.probe_frac = 0.5,
		.probe_min_ns = 300 * MS,
		.probe_max_ns = 3000 * MS,
		.probe_every_ns = 150000 * MS,
		.fresh_ns = 3000 * MS,
		.headroom_gain = 4,
		.auto_jump = 2,
	};
}

void aimd_init(struct aimd_state *s, const struct aimd_params *p, double start_rate)
{
	*s = (struct aimd_state){ .mode = AIMD_STEADY };
	if (start_rate < p->min_rate)
		start_rate = p->min_rate;
	if (start_rate > p->max_rate)
		start_rate = p->max_rate;
	s->rate = start_rate;
	s->last_good = start_rate;
}

/* The window slot that @now_ns falls in, counted from 1 (0 = empty). */
static __u64 auto_epoch(const struct aimd_params *p, __u64 now_ns)
{
	__u64 slot_ns = p->auto_window_ns / AIMD_AUTO_SLOTS;

	return 1 + now_ns / (slot_ns ? slot_ns : 1);
}

/* The baseline: the smallest point of the slots still inside the window
 * (0 = none), and the target derived from it (0 = none). */
static void auto_refresh(const struct aimd_params *p, struct aimd_auto *a, __u64 now_ns)
{
	__u64 epoch = auto_epoch(p, now_ns), base = 0;
	double t;
	int i;

	for (i = 0; i < AIMD_AUTO_SLOTS; i++) {
		if (!a->slot_epoch[i] || epoch - a->slot_epoch[i] >= AIMD_AUTO_SLOTS)
			continue;
		if (!base || a->slot_min_ns[i] < base)
			base = a->slot_min_ns[i];
	}
	a->baseline_ns = base;
	a->target_ns = 0;
	if (!base)
		return;
	t = p->auto_k * (double)base + (double)p->auto_margin_ns;
	if (t < (double)p->auto_min_ns)
		t = (double)p->auto_min_ns;
	if (t > (double)p->auto_max_ns)
		t = (double)p->auto_max_ns;
	a->target_ns = (__u64)t;
}

static void auto_add_point(const struct aimd_params *p, struct aimd_auto *a, __u64 now_ns,
			   __u64 point_ns)
{
	__u64 epoch = auto_epoch(p, now_ns);
	int i = (int)(epoch % AIMD_AUTO_SLOTS);

	if (!point_ns)
		point_ns = 1; /* 0 means empty */
	if (a->slot_epoch[i] != epoch) {
		a->slot_epoch[i] = epoch;
		a->slot_min_ns[i] = point_ns;
	} else if (point_ns < a->slot_min_ns[i]) {
		a->slot_min_ns[i] = point_ns;
	}
}

/* Handshakes completed per request answered over the served window, at
 * most 1; 1 when not known (every request on its own connection). */
static double per_conn(const struct aimd_state *s)
{
	double conns = 0, served = 0;
	int i;

	for (i = 0; i < AIMD_SERVED_SLOTS; i++) {
		if (s->conn_n[i] < 0)
			return 1;
		conns += s->conn_n[i];
		served += s->served_n[i];
	}
	if (served <= 0 || conns >= served)
		return 1;
	return conns / served;
}

static void point_reset(struct aimd_auto *a)
{
	a->point_sum = 0;
	a->point_n = 0;
	a->point_first_mid_ns = 0;
	a->point_last_mid_ns = 0;
	a->point_completed = 0;
	a->point_answered = 0;
	a->point_pressure = false;
	a->point_binding = false;
}

/* Begin a calm probe (see "Calm probe" in aimd.h): hold the limit at
 * probe_frac of the served rate, in connections, never above the limit. */
static void probe_begin(const struct aimd_params *p, struct aimd_state *s, __u64 now_ns)
{
	struct aimd_auto *a = &s->lat;
	double r;

	/* Requests per connection as the probe begins: during it the
	 * service answers requests queued before it on connections it cut,
	 * and its handshakes per request say how deep it cut. */
	a->probe_per_conn = per_conn(s);
	r = p->probe_frac * s->served_rate * a->probe_per_conn;
	a->probing = true;
	a->probe_done = false;
	a->probe_start_ns = now_ns;
	a->probe_rate = r < s->rate ? r : s->rate;
	a->probe_min_ns = 0;
	a->probe_flat = 0;
	a->probe_flat_sum = 0;
	a->probe_flat_n = 0;
	a->probe_step_sum = 0;
	a->probe_step_n = 0;
	a->probe_step_ns = 0;
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
	__u64 point = a->probe_flat >= 3 && a->probe_flat_n ?
			      (__u64)(a->probe_flat_sum / (double)a->probe_flat_n) :
			      a->probe_min_ns;

	a->probing = false;
	a->probe_done = true;
	if (point) {
		auto_add_point(p, a, now_ns, point);
		a->calm_at_ns = now_ns;
	}
	auto_refresh(p, a, now_ns);
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

	if (s->served_rate > a->probe_served)
		a->probe_served = s->served_rate;
	/* A step is a tick, or as many as it takes to gather 3 samples: a
	 * service of a few requests a tick must end its probe with a level
	 * too, or it probes again and again. */
	if (sig->have_latency && sig->latency_count) {
		a->probe_step_sum += (double)sig->latency_mid_ns * (double)sig->latency_count;
		a->probe_step_n += sig->latency_count;
	}
	a->probe_step_ns += dt;
	if (a->probe_step_n >= 3) {
		__u64 mid = (__u64)(a->probe_step_sum / (double)a->probe_step_n);
		__u64 prev = a->probe_min_ns, n = a->probe_step_n;
		__u64 near = prev / 5 > 2 * MS ? prev / 5 : 2 * MS;

		fall = 0.5 * (1 - f) / f * (double)a->probe_step_ns;
		a->probe_step_sum = 0;
		a->probe_step_n = 0;
		a->probe_step_ns = 0;
		if (!prev || mid < prev)
			a->probe_min_ns = mid;
		if (elapsed >= lag && prev && (double)mid + fall >= (double)prev &&
		    mid <= prev + near) {
			a->probe_flat++;
			a->probe_flat_sum += (double)mid * (double)n;
			a->probe_flat_n += n;
		} else {
			a->probe_flat = 0;
			a->probe_flat_sum = 0;
			a->probe_flat_n = 0;
		}
	}
	if ((a->probe_flat >= 3 && elapsed >= p->probe_min_ns) || elapsed >= p->probe_max_ns)
		probe_end(p, a, now_ns);
}

/* Evidence of pressure over the point gathered so far (see "Calm probe"). */
static bool pressured(const struct aimd_auto *a, bool conns_known)
{
	if (a->point_n >= 10 && a->point_answered < 0.9 * (double)a->point_n)
		return true;
	if (conns_known && a->point_completed > 1.25 * a->point_answered + 5 &&
	    a->point_answered > 0)
		return true;
	return a->point_first_mid_ns &&
	       a->point_last_mid_ns > 2 * a->point_first_mid_ns + 5 * MS;
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

/* The derived latency target (see aimd.h): learn the baseline from the
 * tick's samples, then judge them. Returns true while latency says
 * overload. @other: the other signals' verdict of the tick. */
static bool auto_latency(const struct aimd_params *p, struct aimd_state *s,
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
	if (!a->point_first_mid_ns && sig->latency_count >= 5)
		a->point_first_mid_ns = sig->latency_mid_ns;
	if (sig->latency_count >= 5)
		a->point_last_mid_ns = sig->latency_mid_ns;
	a->point_sum += w * v;
	a->point_n += sig->latency_count;
	a->point_completed += sig->have_completed ? (double)sig->completed : 0;
	a->point_answered += (double)sig->latency_served;
	if (other || pressured(a, sig->have_completed))
		a->point_pressure = true;
	if (sig->demand >= s->rate)
		a->point_binding = true;
	/* Started into an overload: no calm reference, so make one. */
	if (!a->baseline_ns && a->point_pressure && a->point_n >= p->auto_verdict_samples) {
		probe_begin(p, s, now_ns);
		return false;
	}
	if (a->point_n >= p->auto_point_samples &&
	    (now_ns - a->point_start_ns >= p->auto_point_ns || !a->baseline_ns)) {
		bool renew = a->point_binding && a->calm_at_ns &&
			     now_ns - a->calm_at_ns >= p->probe_every_ns;

		if (!a->point_pressure) {
			auto_add_point(p, a, now_ns, (__u64)(a->point_sum / (double)a->point_n));
			if (!a->point_binding)
				a->calm_at_ns = now_ns;
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

/* The explicit target's verdict: the tick's p99, weighted by its samples,
 * over at least auto_verdict_samples gathered within auto_stale_ns, above
 * the target for auto_interval_ns: one slow request is not an overload. */
static bool explicit_latency(const struct aimd_params *p, struct aimd_state *s,
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

unsigned int aimd_overloaded(const struct aimd_params *p, struct aimd_state *s,
			     const struct aimd_signals *sig, __u64 now_ns)
{
	unsigned int why = 0;

	/* CoDel's test on the minimum sojourn: a queue that never drains
	 * below target for a whole interval is a standing queue. A tick with
	 * no accepts says nothing about the minimum: the timer stays. */
	if (sig->have_sojourn && sig->sojourn_count > 0) {
		if (sig->sojourn_min_ns < p->target_delay_ns) {
			s->above_since_ns = 0;
		} else if (!s->above_since_ns) {
			s->above_since_ns = now_ns + p->interval_ns;
		} else if (now_ns >= s->above_since_ns) {
			why |= AIMD_WHY_SOJOURN;
		}
	}
	if (sig->have_depth && sig->backlog > 0 &&
	    (double)sig->depth > p->depth_frac * (double)sig->backlog)
		why |= AIMD_WHY_DEPTH;
	if (sig->overflows > 0)
		why |= AIMD_WHY_OVERFLOW;
	/* An explicit target is the operator's word on p99; without one, the
	 * derived target judges the middle of the distribution. */
	if (p->latency_target_ns) {
		if (explicit_latency(p, s, sig, now_ns)) {
			why |= AIMD_WHY_LATENCY;
			s->lat_excess_ns = s->vval_ns > p->latency_target_ns ?
						   s->vval_ns - p->latency_target_ns : 0;
		}
	} else if (p->latency_auto && auto_latency(p, s, sig, now_ns, why)) {
		why |= AIMD_WHY_LATENCY;
		s->lat_excess_ns = s->lat.last_mid_ns > s->lat.target_ns ?
					   s->lat.last_mid_ns - s->lat.target_ns : 0;
	}
	if (!(why & AIMD_WHY_LATENCY))
		s->lat_excess_ns = 0;
	/* Stall guard: a queue that holds connections while nobody takes
	 * any means the application stopped: overload, not calm. The accept
	 * probes miss io_uring and connections queued before they attached:
	 * when connections left the queue anyway, it is not a stall; and
	 * without a measure of what left, there is no verdict. */
	if (sig->have_depth && sig->depth > 0 && sig->have_sojourn &&
	    sig->sojourn_count == 0 && sig->have_queue_left && sig->queue_left == 0) {
		__u64 dt = sig->dt_ns ? sig->dt_ns : p->tick_ns;

		/* The run starts with the window of its first tick. */
		if (!s->stuck) {
			s->stuck = true;
			s->stuck_since_ns = now_ns > dt ? now_ns - dt : 0;
		}
		if (now_ns - s->stuck_since_ns >= p->stall_ns)
			why |= AIMD_WHY_STALL;
	} else {
		s->stuck = false;
	}
	return why;
}

static double clamp(const struct aimd_params *p, double r)
{
	if (r < p->min_rate)
		r = p->min_rate;
	if (r > p->max_rate)
		r = p->max_rate;
	return r;
}

/* A decaying peak of @rate: the decay is per 100 ms of measured time,
 * whatever the tick. */
static void peak_track(const struct aimd_params *p, double *peak, double rate, double dt_sec)
{
	*peak *= pow(p->peak_decay, dt_sec / 0.1);
	if (rate > *peak)
		*peak = rate;
}

/* The requests answered over the last AIMD_SERVED_SLOTS ticks. */
static void served_track(struct aimd_state *s, const struct aimd_signals *sig, __u64 dt_ns)
{
	double n = 0;
	__u64 t = 0;
	int i, k, recent;

	if (!s->served_ticks && !(sig->have_latency && sig->latency_count))
		return; /* no sample yet: nothing was asked of the service */
	s->served_n[s->served_i] = sig->have_latency ? (double)sig->latency_served : 0;
	s->conn_n[s->served_i] = sig->have_completed ? (double)sig->completed : -1;
	s->served_dt[s->served_i] = dt_ns;
	s->served_i = (s->served_i + 1) % AIMD_SERVED_SLOTS;
	if (s->served_ticks < AIMD_SERVED_SLOTS)
		s->served_ticks++;
	recent = s->served_ticks < AIMD_RECENT_SLOTS ? s->served_ticks : AIMD_RECENT_SLOTS;
	for (k = 0; k < s->served_ticks; k++) {
		i = (s->served_i + AIMD_SERVED_SLOTS - 1 - k) % AIMD_SERVED_SLOTS;
		n += s->served_n[i];
		t += s->served_dt[i];
		if (k == recent - 1)
			s->served_recent = t ? n / ((double)t / 1e9) : 0;
	}
	s->served_rate = t ? n / ((double)t / 1e9) : 0;
}

/* What the service serves, for a cut: the decaying peak of the served
 * rate, or the rate of the last few ticks where that is higher (an
 * overload that began within the second: the second's rate still holds
 * the calm before it, which asked less of the service). */
static double served_now(const struct aimd_state *s)
{
	return s->served_recent > s->peak_served ? s->served_recent : s->peak_served;
}

/* What the service has recently shown it takes: its peak accept rate; after
 * a latency episode, the peak of requests it served where that is lower (a
 * proxy's accept rate is only what it was offered). */
static double shown_peak(const struct aimd_state *s)
{
	if (s->episode_latency && s->peak_served > 0 && s->peak_served < s->peak_accept)
		return s->peak_served;
	return s->peak_accept;
}

/* The fraction of the served rate that drains the queue behind the excess
 * latency within drain_ns (see aimd.h), between drain_min and 1. */
static double drain_frac(const struct aimd_params *p, const struct aimd_state *s)
{
	double d;

	if (!p->drain_ns)
		return 1;
	d = 1 - (double)s->lat_excess_ns / (double)p->drain_ns;
	if (d < p->drain_min)
		d = p->drain_min;
	return d > 1 ? 1 : d;
}

/* Begin a drain at factor @d < 1: for twice the time E / (1 - d) it
 * needs (at least drain_ns), from the served peak of now. */
static void drain_begin(const struct aimd_params *p, struct aimd_state *s, double d,
			__u64 now_ns)
{
	double need_ns = (double)s->lat_excess_ns / (1 - d);

	if (need_ns < (double)p->drain_ns)
		need_ns = (double)p->drain_ns;
	s->drain = AIMD_DRAINING;
	s->drain_end_ns = now_ns + (__u64)(2 * need_ns);
	s->drain_ref = served_now(s);
	s->drain_excess0_ns = s->lat_excess_ns;
	s->drain_samples = 0;
	s->drain_served = 0;
	s->drain_completed = 0;
	s->drain_conns_known = true;
}

/* The drain factor of a latency-overloaded tick, and the drain's course
 * through the episode (see aimd.h, @drain_ns): it begins on the first
 * tick with an excess; at its end it begins again if the excess grew, or
 * is spent, and the rate returns to the served floor in connections if
 * the service answered what it was asked. */
static double drain_step(const struct aimd_params *p, struct aimd_state *s,
			 const struct aimd_signals *sig, __u64 now_ns)
{
	double d = drain_frac(p, s), per_conn;

	switch (s->drain) {
	case AIMD_DRAIN_NONE:
		if (d >= 1)
			return 1;
		drain_begin(p, s, d, now_ns);
		return d;
	case AIMD_DRAINING:
		s->drain_samples += (double)sig->latency_count;
		s->drain_served += (double)sig->latency_served;
		s->drain_completed += (double)sig->completed;
		s->drain_conns_known &= sig->have_completed;
		if (now_ns < s->drain_end_ns)
			return d;
		/* The excess grew: a queue grows under the drain, which
		 * was too shallow (the served peak it began with, a peak of
		 * noisy rates, stood above what is served). Begin again from
		 * the excess and the peak of now. */
		if (d < 1 && (double)s->lat_excess_ns >
				     1.25 * (double)s->drain_excess0_ns + (double)AIMD_DRAIN_GREW_NS) {
			drain_begin(p, s, d, now_ns);
			return d;
		}
		/* The latency did not go with the queue. If the service
		 * answered nearly all it was asked, it is slower, not
		 * queued: back to what is served, in connections (the
		 * served peak counts requests, and on keep-alive connections
		 * one SYN brings many; none known without a measure of the
		 * connections: no raise). If clients gave up, it is a queue
		 * the SYN limit does not reach (keep-alive): no raise. */
		s->drain = AIMD_DRAIN_SPENT;
		per_conn = s->drain_conns_known && s->drain_served > 0 &&
				   s->drain_served >= p->drain_answered * s->drain_samples ?
				   s->drain_completed / s->drain_served : 0;
		if (per_conn > 1)
			per_conn = 1;
		if (s->rate < p->served_floor * per_conn * s->drain_ref) {
			s->rate = p->served_floor * per_conn * s->drain_ref;
			/* The served rate of the drain's ticks is what the
			 * drain admitted: the floor starts again from the
			 * rate returned to, or the next tick cuts back to
			 * the drained rate and holds there. */
			if (s->peak_served < per_conn * s->drain_ref)
				s->peak_served = per_conn * s->drain_ref;
			s->served_ticks = 0;
		}
		return 1;
	case AIMD_DRAIN_SPENT:
		break;
	}
	return 1;
}

/* The last verdict of the derived target was within a quarter of the way
 * from the baseline to the target: nothing waits inside the service. */
static bool headroom(const struct aimd_params *p, const struct aimd_auto *a)
{
	if (p->latency_target_ns || !p->latency_auto || !a->target_ns || !a->last_verdict_ns ||
	    a->over || a->probing)
		return false;
	return a->last_mid_ns <= a->baseline_ns + (a->target_ns - a->baseline_ns) / 4;
}

/* The additive step. Unset, it is 1 % of the larger of the last good rate
 * and the recent peak accept rate: constant while the limit climbs
 * (additive), yet in scale with the service, so 10 % is regained in ten
 * ticks at any rate. */
static double alpha(const struct aimd_params *p, const struct aimd_state *s)
{
	double peak = shown_peak(s);
	double base = s->last_good > peak ? s->last_good : peak;
	double a = p->alpha_per_sec > 0 ? p->alpha_per_sec : base / 100;

	/* No queue at all (the derived target's last verdict near the calm
	 * latency, and recent): the service has room, climb faster. */
	if (headroom(p, &s->lat))
		a *= p->headroom_gain;
	return a < 1 ? 1 : a;
}

static double stage_rate(const struct aimd_params *p, const struct aimd_state *s)
{
	double r = p->ramp[s->stage] * s->last_good;

	return clamp(p, r > s->floor_rate ? r : s->floor_rate);
}

/* Never aim far above what the service has recently shown it takes. */
static void end_episode(const struct aimd_params *p, struct aimd_state *s)
{
	if (s->peak_accept <= 0 || p->ramp_cap <= 0)
		return;
	if (s->last_good > p->ramp_cap * shown_peak(s))
		s->last_good = p->ramp_cap * shown_peak(s);
}

/* Enter stage s->stage, skipping stages at or below the floor. When the
 * ramp @starts with only the last stage left and the floor within
 * shallow_frac of it, the cut was shallow: steady, the additive climb takes
 * over. A deeper one holds the last stage: climbing a third of the rate back
 * at 1 % a tick would take seconds below what the service took. */
static void enter_stage(const struct aimd_params *p, struct aimd_state *s, __u64 now_ns,
			bool starts)
{
	while (s->stage < p->nr_stages - 1 && p->ramp[s->stage] * s->last_good <= s->floor_rate)
		s->stage++;
	if (s->stage >= p->nr_stages ||
	    (starts && s->stage == p->nr_stages - 1 &&
	     s->floor_rate >= p->shallow_frac * p->ramp[s->stage] * s->last_good)) {
		s->mode = AIMD_STEADY;
		return;
	}
	s->stage_end_ns = now_ns + p->stage_hold_ns;
	s->rate = stage_rate(p, s);
}

/* Do the admitted SYNs turn into connections? Without a measure of
 * completed handshakes there is no evidence, and no growth. */
static bool completing(const struct aimd_params *p, const struct aimd_state *s,
		       const struct aimd_signals *sig, double dt_sec)
{
	double admitted = sig->admitted_per_sec > 0 && sig->admitted_per_sec < s->rate ?
			  sig->admitted_per_sec : s->rate;

	if (!sig->have_completed || dt_sec <= 0)
		return false;
	return (double)sig->completed / dt_sec >= p->complete_frac * admitted;
}

double aimd_update(const struct aimd_params *p, struct aimd_state *s,
		   const struct aimd_signals *sig, __u64 now_ns)
{
	__u64 dt_ns = sig->dt_ns ? sig->dt_ns : p->tick_ns;
	double dt_sec = (double)dt_ns / 1e9;
	/* The gains are per 100 ms of time, whatever the tick. A long tick
	 * (the daemon stalled, or was slow to be scheduled) counts at most as
	 * two nominal ticks for the increase, and as one for the decrease:
	 * one reading of overload is one decision, not a long history. */
	double cap_ns = 2.0 * (double)(p->tick_ns ? p->tick_ns : dt_ns);
	double steps = ((double)dt_ns < cap_ns ? (double)dt_ns : cap_ns) / AIMD_GAIN_PERIOD_NS;
	double nominal = (double)(p->tick_ns ? p->tick_ns : dt_ns) / AIMD_GAIN_PERIOD_NS;
	double cut_steps = steps < nominal ? steps : nominal;
	double before, drain, served, lo;

	/* Blind: without any delay signal the law would be an open-loop
	 * ramp to max_rate. Hold the rate. */
	if (!sig->have_sojourn && !sig->have_depth && !sig->have_latency) {
		s->why = 0;
		return s->rate;
	}
	if (sig->have_sojourn && dt_ns)
		peak_track(p, &s->peak_accept, (double)sig->sojourn_count / dt_sec, dt_sec);
	if (dt_ns) {
		served_track(s, sig, dt_ns);
		peak_track(p, &s->peak_served, s->served_rate, dt_sec);
	}
	s->why = aimd_overloaded(p, s, sig, now_ns);

	/* A calm probe holds its rate; when it ends, the limit resumes at
	 * what the service served while it drained its queue (its
	 * capacity), in connections, and the law goes on from there. */
	if (s->lat.probing) {
		s->why &= ~(unsigned int)AIMD_WHY_LATENCY;
		s->mode = AIMD_OVERLOAD;
		s->rate = clamp(p, s->lat.probe_rate);
		return s->rate;
	}
	if (s->lat.probe_done) {
		double r = s->lat.probe_served * s->lat.probe_per_conn;

		s->lat.probe_done = false;
		s->mode = AIMD_STEADY;
		s->why = 0;
		s->drain = AIMD_DRAIN_NONE;
		/* What the service showed it takes is what it served: a
		 * proxy's accept rate is what it was offered (see
		 * shown_peak()), and the climb from here is in scale with
		 * the capacity, not with the overload it started into. */
		s->episode_latency = s->lat.probe_served > 0;
		if (s->lat.probe_served > 0) {
			s->peak_served = s->lat.probe_served;
			s->rate = clamp(p, r > s->lat.probe_rate ? r : s->lat.probe_rate);
		}
		s->last_good = s->rate;
		return s->rate;
	}

	/* A queue that is already draining (the minimum sojourn falls) is
	 * answering the last decrease, or the end of a stall: while that is
	 * the only signal, hold the rate and the ramp stage rather than cut
	 * again or abandon the ramp (CoDel does not drop again while the
	 * queue drains). */
	if (s->why == AIMD_WHY_SOJOURN && s->mode != AIMD_STEADY &&
	    sig->sojourn_count && sig->sojourn_min_ns < s->prev_min_ns) {
		s->prev_min_ns = sig->sojourn_min_ns;
		return s->rate;
	}
	if (sig->have_sojourn && sig->sojourn_count)
		s->prev_min_ns = sig->sojourn_min_ns;
	/* A tick in which nobody was accepted (a stall) leaves no minimum to
	 * compare with: the first connections taken after it waited through
	 * it, and their sojourn starts the drain rather than a new overload. */
	else if (sig->have_sojourn)
		s->prev_min_ns = UINT64_MAX;

	if (s->why) {
		/* The first overloaded tick of an episode remembers where it
		 * began. A ramp overloaded again is abandoned at once; what
		 * was good is then the last stage that held its time. */
		if (s->mode == AIMD_STEADY)
			s->last_good = s->rate;
		else if (s->mode == AIMD_RECOVERING)
			s->last_good = s->held_rate;
		if (s->mode != AIMD_OVERLOAD) {
			s->episode_latency = false;
			s->drain = AIMD_DRAIN_NONE;
		}
		if (s->why & AIMD_WHY_LATENCY)
			s->episode_latency = true;
		s->mode = AIMD_OVERLOAD;
		before = s->rate;
		s->rate = s->rate * pow(p->beta, cut_steps);
		/* Latency lags the queue: stop cutting near what is served,
		 * less what drains the queue behind the excess latency. */
		drain = (s->why & AIMD_WHY_LATENCY) ? drain_step(p, s, sig, now_ns) : 1;
		served = s->drain == AIMD_DRAINING && s->drain_ref > served_now(s) ?
				 s->drain_ref : served_now(s);
		lo = p->served_floor * drain * served;
		if ((s->why & AIMD_WHY_LATENCY) && p->served_floor > 0 && s->rate < lo)
			s->rate = before < lo ? before : lo;
		/* Far above what the service takes, one step brings it close. */
		if (p->good_cap > 0 && s->peak_accept > 0 && s->rate > p->good_cap * s->peak_accept)
			s->rate = p->good_cap * s->peak_accept;
		if ((s->why & AIMD_WHY_LATENCY) && p->good_cap > 0 && served > 0 &&
		    s->rate > p->good_cap * drain * served)
			s->rate = p->good_cap * drain * served;
		s->rate = clamp(p, s->rate);
		return s->rate;
	}

	/* With the sojourn probes, an episode ends only on a tick whose
	 * accepts were seen, all below target: the samples come a tick late,
	 * so after a stall an empty queue or a tick without accepts would end
	 * it while the connections that waited through the stall are still
	 * to be counted, and the ramp that followed would be abandoned. */
	if (s->mode == AIMD_OVERLOAD && sig->have_sojourn &&
	    (!sig->sojourn_count || sig->sojourn_min_ns >= p->target_delay_ns))
		return s->rate;

	switch (s->mode) {
	case AIMD_OVERLOAD:
		end_episode(p, s);
		s->mode = AIMD_RECOVERING;
		s->floor_rate = s->rate;
		s->held_rate = s->rate;
		s->stage = 0;
		enter_stage(p, s, now_ns, true);
		break;
	case AIMD_RECOVERING:
		if (now_ns < s->stage_end_ns)
			break;
		s->held_rate = s->rate;
		s->stage++;
		enter_stage(p, s, now_ns, false);
		break;
	case AIMD_STEADY:
		/* Grow only while the limit binds (demand at or above it)
		 * and what it admits completes. */
		if (sig->demand >= s->rate && completing(p, s, sig, dt_sec))
			s->rate = clamp(p, s->rate + alpha(p, s) * steps);
		break;
	}
	return s->rate;
}

const char *aimd_mode_name(enum aimd_mode m)
{
	switch (m) {
	case AIMD_STEADY:
		return "steady";
	case AIMD_OVERLOAD:
		return "overload";
	case AIMD_RECOVERING:
		return "recovering";
	}
	return "?";
}

static __u64 to_mrate(double r)
{
	return r > 0 ? (__u64)(r * 1000 + 0.5) : 0;
}

void aimd_export(const struct aimd_state *s, __u64 now_ns, struct shedd_ctl_state *out)
{
	*out = (struct shedd_ctl_state){
		.version = SHEDD_CTL_STATE_VERSION,
		.mode = (__u32)s->mode,
		.stage = s->stage > 0 ? (__u32)s->stage : 0,
		.why = s->why,
		.limit_mrate = to_mrate(s->rate),
		.last_good_mrate = to_mrate(s->last_good),
		.floor_mrate = to_mrate(s->floor_rate),
		.held_mrate = to_mrate(s->held_rate),
		.peak_accept_mrate = to_mrate(s->peak_accept),
		.stage_end_ns = s->stage_end_ns,
		.written_ns = now_ns,
		.peak_served_mrate = to_mrate(s->peak_served),
		.applied_mrate = to_mrate(s->rate),
		.controller = SHEDD_CTL_AIMD,
		.baseline_ns = s->lat.calm_at_ns ? s->lat.baseline_ns : 0,
		.calm_at_ns = s->lat.baseline_ns ? s->lat.calm_at_ns : 0,
	};
}

int aimd_import(const struct aimd_params *p, struct aimd_state *s,
		const struct shedd_ctl_state *in, __u64 now_ns)
{
	struct aimd_state r;

	/* Version 1 is version 2 without its appended fields (0 in a record
	 * converted from it): no peak served, the aimd controller. */
	__u64 age = now_ns > in->written_ns ? now_ns - in->written_ns : 0;

	if (in->version < 1 || in->version > SHEDD_CTL_STATE_VERSION ||
	    in->controller != SHEDD_CTL_AIMD || in->mode > AIMD_RECOVERING ||
	    !in->limit_mrate || in->stage >= AIMD_MAX_STAGES)
		return -1;
	aimd_init(&r, p, (double)in->limit_mrate / 1000);
	r.mode = (enum aimd_mode)in->mode;
	r.why = in->why;
	r.last_good = clamp(p, (double)in->last_good_mrate / 1000);
	r.floor_rate = (double)in->floor_mrate / 1000;
	r.held_rate = (double)in->held_mrate / 1000;
	r.peak_accept = (double)in->peak_accept_mrate / 1000;
	r.peak_served = (double)in->peak_served_mrate / 1000;
	r.stage = (int)in->stage;
	r.stage_end_ns = in->stage_end_ns;
	/* History, not the present: the limit is the best start there is,
	 * but an overload or a ramp of then is over, and the peaks have
	 * decayed as they would have. */
	if (age > p->fresh_ns) {
		double decay = pow(p->peak_decay, (double)age / AIMD_GAIN_PERIOD_NS);

		r.mode = AIMD_STEADY;
		r.why = 0;
		r.stage = 0;
		r.stage_end_ns = 0;
		r.last_good = r.rate;
		r.floor_rate = 0;
		r.held_rate = 0;
		r.peak_accept *= decay;
		r.peak_served *= decay;
	}
	/* The calm latency, while its point is inside the window. */
	if (in->version >= 3 && in->baseline_ns && in->calm_at_ns && in->calm_at_ns <= now_ns &&
	    now_ns - in->calm_at_ns < p->auto_window_ns) {
		auto_add_point(p, &r.lat, in->calm_at_ns, in->baseline_ns);
		r.lat.calm_at_ns = in->calm_at_ns;
		auto_refresh(p, &r.lat, now_ns);
	}
	if (r.mode == AIMD_RECOVERING) {
		if (r.stage >= p->nr_stages) {
			r.mode = AIMD_STEADY;
			r.stage = 0;
		} else if (r.stage_end_ns > now_ns + p->stage_hold_ns) {
			r.stage_end_ns = now_ns + p->stage_hold_ns;
		}
	}
	*s = r;
	return 0;
}
