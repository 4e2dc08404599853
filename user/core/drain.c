// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* drain.c - the drain of a latency overload (aimd_params.drain_ns in
 * aimd_types.h): arithmetic on the controller's state.
 */
#include "drain.h"
#include "req_per_conn.h"

/* The fraction of the served rate that drains the queue behind the excess
 * latency within drain_ns (aimd_types.h), between drain_min and 1. */
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
	s->drain_ref = aimd_served_now(s);
	s->drain_excess0_ns = s->lat_excess_ns;
	s->drain_excess_peak_ns = s->lat_excess_ns;
	s->drain_samples = 0;
	s->drain_served = 0;
	s->drain_completed = 0;
	s->drain_conns_known = true;
}

/* @excess_ns is above the excess the drain began with by a quarter and
 * AIMD_DRAIN_GREW_NS. */
static bool grew(const struct aimd_state *s, __u64 excess_ns)
{
	return (double)excess_ns > 1.25 * (double)s->drain_excess0_ns + (double)AIMD_DRAIN_GREW_NS;
}

double drain_step(const struct aimd_params *p, struct aimd_state *s,
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
		if (s->lat_excess_ns > s->drain_excess_peak_ns)
			s->drain_excess_peak_ns = s->lat_excess_ns;
		if (now_ns < s->drain_end_ns)
			return d;
		/* The excess grew: a queue grows under the drain, which
		 * was too shallow (the served peak it began with, a peak of
		 * noisy rates, stood above what is served). Begin again from
		 * the excess and the peak of now. */
		if (d < 1 && grew(s, s->lat_excess_ns)) {
			drain_begin(p, s, d, now_ns);
			return d;
		}
		/* It grew, then fell from its peak: the latency lags the
		 * queue by the queue's length, and a drain begun just above
		 * the target saw the queue it began with at its height only
		 * in mid-drain. What fell since went with the drain. Again,
		 * from the excess and the peak of now. */
		if (d < 1 && grew(s, s->drain_excess_peak_ns) &&
		    (double)s->lat_excess_ns <= AIMD_DRAIN_FELL * (double)s->drain_excess_peak_ns) {
			drain_begin(p, s, d, now_ns);
			return d;
		}
		/* The excess fell, but not away: the queue goes with the
		 * drain, which was too short. Again, from the excess and the
		 * peak of now. */
		if (d < 1 && (double)s->lat_excess_ns <= AIMD_DRAIN_FELL * (double)s->drain_excess0_ns) {
			drain_begin(p, s, d, now_ns);
			return d;
		}
		/* The latency did not go with the queue. If the service
		 * answered nearly all it was asked, it is slower, not
		 * queued: back to what is served, in connections (the
		 * served peak counts requests, and on keep-alive connections
		 * one SYN brings many): times the drain's handshakes per
		 * request answered (at most 1), and at most 1 / the
		 * requests per connection of req_per_conn.h. The first
		 * follows what the drain admitted, so it raises little; the
		 * second is measured apart from the overload, and only
		 * lowers it (a raise to the request rate on keep-alive
		 * connections lets many times the work in). With no
		 * measure of the handshakes, 1 / rpc where it is known,
		 * else no raise. If clients gave up, it is a queue the SYN
		 * limit does not reach at this rate: no raise. */
		s->drain = AIMD_DRAIN_SPENT;
		per_conn = 0;
		if (s->drain_served > 0 && s->drain_served >= p->drain_answered * s->drain_samples) {
			enum aimd_rpc_src src;
			double rpc = rpc_get(s, &src);

			if (s->drain_conns_known)
				per_conn = s->drain_completed / s->drain_served;
			else if (src != AIMD_RPC_NONE)
				per_conn = 1;
			if (per_conn > 1 / rpc)
				per_conn = 1 / rpc;
		}
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
