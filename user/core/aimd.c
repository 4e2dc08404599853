// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* aimd.c - the overload verdict and the AIMD control law with ramped
 * recovery. See aimd.h for the law; everything here is arithmetic on its
 * arguments.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include "aimd.h"
#include "drain.h"
#include "req_per_conn.h"
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
		.open_gain = 2,
		.open_floor = 10000,
		.open_strikes = 3,
		.beta = 0.95,
		.min_rate = 10,
		/* A ceiling, not a guess at the service: the program's own
		 * for a class. A healthy service above it is shed by it
		 * alone, and the daemon says so (aimd_state.at_max). */
		.max_rate = (double)MAX_RATE_PER_SEC,
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

void aimd_open(struct aimd_state *s)
{
	s->open = true;
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
		if (latency_explicit(p, s, sig, now_ns)) {
			why |= AIMD_WHY_LATENCY;
			s->lat_excess_ns = s->vval_ns > p->latency_target_ns ?
						   s->vval_ns - p->latency_target_ns : 0;
		}
	} else if (p->latency_auto && latency_derived(p, s, sig, now_ns, why)) {
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
	/* A feed that covers part of the connections shows that part of
	 * what is served (latency_answered()). */
	s->served_n[s->served_i] =
		sig->have_latency ? latency_answered(&s->lat, (double)sig->latency_served) : 0;
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

/* The recent peak of what the service took: its accept rate; without one
 * (no sojourn probes, or nothing accepted yet), the handshakes completed,
 * which a full accept queue holds to the accept rate. A start open at
 * max_rate is then cut from it too, not by beta from max_rate. */
static double accept_peak(const struct aimd_state *s)
{
	return s->peak_accept > 0 ? s->peak_accept : s->peak_completed;
}

/* What the service has recently shown it takes: its peak accept rate; after
 * a latency episode, the peak of requests it served, in connections, where
 * that is lower (a proxy's accept rate is only what it was offered). */
static double shown_peak(const struct aimd_state *s)
{
	double served = s->peak_served / rpc_get(s, NULL);

	if (s->episode_latency && served > 0 && served < accept_peak(s))
		return served;
	return accept_peak(s);
}

/* A calm tick for the requests per connection (req_per_conn.h): the
 * limit sheds nothing, no signal says overload, and latency has a
 * target and its last verdict is below it. Then the handshakes are the
 * clients' own and the service keeps up with their requests. */
static bool rpc_calm(const struct aimd_params *p, const struct aimd_state *s,
		     const struct aimd_signals *sig)
{
	bool verdict_ok;

	if (s->why || s->mode != AIMD_STEADY || s->lat.probing || sig->demand >= s->rate ||
	    !aimd_latency_target(p, s, NULL))
		return false;
	/* The last verdict below the target: not one above it whose
	 * interval has yet to pass. */
	if (p->latency_target_ns)
		verdict_ok = s->vlast_ns && !s->vover && !s->vabove_ns;
	else
		verdict_ok = s->lat.last_verdict_ns && !s->lat.over && !s->lat.above_since_ns;
	return verdict_ok;
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
	if (latency_headroom(p, &s->lat))
		a *= p->headroom_gain;
	return a < 1 ? 1 : a;
}

static double stage_rate(const struct aimd_params *p, const struct aimd_state *s)
{
	double r = p->ramp[s->stage] * s->last_good;

	return clamp(p, r > s->floor_rate ? r : s->floor_rate);
}

/* Never aim far above what the service has recently shown it takes.
 * Returns whether the aim was lowered to that. */
static bool end_episode(const struct aimd_params *p, struct aimd_state *s)
{
	if (accept_peak(s) <= 0 || p->ramp_cap <= 0)
		return false;
	if (s->last_good <= p->ramp_cap * shown_peak(s))
		return false;
	s->last_good = p->ramp_cap * shown_peak(s);
	return true;
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

/* Open, is what it admits a flood? SYNs admitted above open_floor of which
 * less than complete_frac complete, open_strikes ticks in a row: nothing
 * says the service is overloaded, and nothing that it needs them. Hold the
 * limit to the larger of open_floor and open_gain x the recent peak of
 * completed handshakes (what a fresh start admitted at most before it was
 * open, or twice what real clients finish). Returns true while it holds. */
static bool open_flood(const struct aimd_params *p, struct aimd_state *s,
		       const struct aimd_signals *sig, double dt_sec)
{
	double cap = p->open_gain * s->peak_completed;

	if (cap < p->open_floor)
		cap = p->open_floor;
	if (p->open_floor <= 0 || !sig->have_completed || dt_sec <= 0 ||
	    sig->admitted_per_sec <= cap ||
	    (double)sig->completed / dt_sec >= p->complete_frac * sig->admitted_per_sec) {
		s->unfinished = 0;
		return false;
	}
	if (++s->unfinished < (p->open_strikes ? p->open_strikes : 1))
		return false;
	if (s->rate > cap)
		s->rate = clamp(p, cap);
	return true;
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
	bool calm, shown;

	s->at_max = false;
	/* Blind: without any delay signal the law would be an open-loop
	 * ramp to max_rate. Hold the rate. */
	if (!sig->have_sojourn && !sig->have_depth && !sig->have_latency) {
		s->why = 0;
		return s->rate;
	}
	if (sig->have_sojourn && dt_ns)
		peak_track(p, &s->peak_accept, (double)sig->sojourn_count / dt_sec, dt_sec);
	if (sig->have_completed && dt_ns)
		peak_track(p, &s->peak_completed, (double)sig->completed / dt_sec, dt_sec);
	if (dt_ns) {
		served_track(s, sig, dt_ns);
		peak_track(p, &s->peak_served, s->served_rate, dt_sec);
	}
	s->why = aimd_overloaded(p, s, sig, now_ns);
	calm = rpc_calm(p, s, sig);
	rpc_track(p, s, sig, dt_sec, calm);

	/* A calm probe holds its rate; when it ends, the limit resumes at
	 * what the service served while it drained its queue (its
	 * capacity), in connections, and the law goes on from there. */
	if (s->lat.probing) {
		s->open = false;
		s->why &= ~(unsigned int)AIMD_WHY_LATENCY;
		s->mode = AIMD_OVERLOAD;
		s->rate = clamp(p, s->lat.probe_rate);
		return s->rate;
	}
	if (s->lat.probe_done) {
		double r = s->lat.probe_served * s->lat.probe_per_conn;

		s->lat.probe_done = false;
		s->open = false;
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
		if (s->mode == AIMD_STEADY) {
			s->last_good = s->rate;
			s->from_calm = sig->demand < s->rate;
		} else if (s->mode == AIMD_RECOVERING) {
			s->last_good = s->held_rate;
			s->from_calm = false;
		}
		s->open = false;
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
		 * less what drains the queue behind the excess latency. The
		 * served rate counts requests, the limit connections: on
		 * keep-alive connections one SYN brings rpc of them
		 * (req_per_conn.h), so the floor and the cap are the served
		 * rate over rpc. */
		drain = (s->why & AIMD_WHY_LATENCY) ? drain_step(p, s, sig, now_ns) : 1;
		served = s->drain == AIMD_DRAINING && s->drain_ref > aimd_served_now(s) ?
				 s->drain_ref : aimd_served_now(s);
		served /= rpc_get(s, NULL);
		lo = p->served_floor * drain * served;
		if ((s->why & AIMD_WHY_LATENCY) && p->served_floor > 0 && s->rate < lo)
			s->rate = before < lo ? before : lo;
		/* Far above what the service takes, one step brings it close. */
		if (p->good_cap > 0 && accept_peak(s) > 0 && s->rate > p->good_cap * accept_peak(s))
			s->rate = p->good_cap * accept_peak(s);
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
		shown = end_episode(p, s);
		s->mode = AIMD_RECOVERING;
		s->floor_rate = s->rate;
		s->held_rate = s->rate;
		s->stage = 0;
		enter_stage(p, s, now_ns, true);
		/* A latency episode that began from calm (the limit did not
		 * bind: demand jumped), with only the last stage left and its
		 * aim lowered to the requests the service was seen to serve
		 * in it: that served peak is the calm's, less than it can
		 * take, and a second held there proves nothing. The climb
		 * goes on from it at once. (Where the limit bound as the
		 * episode began, the served peak is the service's own; where
		 * the aim is the peak accept rate, a saturated service's
		 * capacity: the stage holds.) */
		if (shown && s->from_calm && s->episode_latency && s->mode == AIMD_RECOVERING &&
		    s->stage == p->nr_stages - 1)
			s->mode = AIMD_STEADY;
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
		 * and what it admits completes. At max_rate, a service that
		 * is healthy by every signal is shed by the ceiling alone:
		 * say so. Before any evidence of overload (open), grow
		 * multiplicatively: a service of 1 M conn/s is reached in
		 * well under a second from 10 000. */
		if (s->open && open_flood(p, s, sig, dt_sec))
			break;
		if (sig->demand >= s->rate && completing(p, s, sig, dt_sec)) {
			if (s->rate >= p->max_rate)
				s->at_max = true;
			else if (s->open && p->open_gain > 1)
				s->rate = clamp(p, s->rate * pow(p->open_gain, steps));
			else
				s->rate = clamp(p, s->rate + alpha(p, s) * steps);
		}
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
		.spread_milli = s->lat.calm_at_ns && s->lat.spread_ns ?
					(__u32)(s->lat.spread * 1000 + 0.5) : 0,
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
		/* An overload of then is no evidence of one now. */
		r.open = true;
	}
	/* The calm latency, while its point is inside the window. */
	if (in->version >= 3 && in->baseline_ns && in->calm_at_ns && in->calm_at_ns <= now_ns &&
	    now_ns - in->calm_at_ns < p->auto_window_ns) {
		latency_resume(p, &r.lat, in->baseline_ns, (double)in->spread_milli / 1000,
			       in->calm_at_ns, now_ns);
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
