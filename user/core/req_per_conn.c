// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* req_per_conn.c - requests per connection from the log's session shape or
 * from calm ticks (req_per_conn.h has the law and why it is not measured
 * during an overload): arithmetic on the controller's state.
 */
#include <math.h>
#include "req_per_conn.h"

void rpc_track(const struct aimd_params *p, struct aimd_state *s,
	       const struct aimd_signals *sig, double dt_sec, bool calm)
{
	double decay = pow(p->peak_decay, dt_sec / 0.1);
	double served = sig->have_latency ? (double)sig->latency_served : 0;

	/* The shape decays every tick: a log that stops saying `cr=` is
	 * forgotten within seconds. */
	s->rpc_answered *= decay;
	s->rpc_followers *= decay;
	s->rpc_time *= decay;
	s->rpc_wait *= decay;
	s->rpc_wait_n *= decay;
	if (sig->have_latency && sig->have_conn_seq) {
		s->rpc_answered += served;
		s->rpc_followers += (double)sig->latency_next;
		s->rpc_time += dt_sec;
		s->rpc_wait += (double)sig->latency_mid_ns / 1e9 * (double)sig->latency_count;
		s->rpc_wait_n += (double)sig->latency_count;
	}
	/* The calm ratio moves only on calm ticks. */
	if (calm && sig->have_latency && sig->have_completed) {
		s->rpc_calm_served = s->rpc_calm_served * decay + served;
		s->rpc_calm_conns = s->rpc_calm_conns * decay + (double)sig->completed;
		s->rpc_calm_ns += (__u64)(dt_sec * 1e9);
	}
}

double rpc_get(const struct aimd_state *s, enum aimd_rpc_src *src)
{
	double r;

	if (s->rpc_answered >= RPC_MIN_SAMPLES) {
		/* A follower is logged when it is answered (or given up),
		 * one latency after the answer it follows: that many are
		 * still to come for the answers already counted (Little:
		 * the followers' rate times their latency), and are no
		 * session's end. */
		double pending = s->rpc_time > 0 && s->rpc_wait_n > 0 ?
					 s->rpc_followers / s->rpc_time * s->rpc_wait / s->rpc_wait_n :
					 0;
		double ends = s->rpc_answered - s->rpc_followers - pending;

		r = ends * RPC_MAX > s->rpc_answered ? s->rpc_answered / ends : RPC_MAX;
		if (src)
			*src = AIMD_RPC_SHAPE;
		return r < 1 ? 1 : r;
	}
	if (s->rpc_calm_served >= RPC_MIN_SAMPLES && s->rpc_calm_conns > 0 &&
	    s->rpc_calm_ns >= RPC_MIN_CALM_NS) {
		r = s->rpc_calm_served / s->rpc_calm_conns;
		if (src)
			*src = AIMD_RPC_CALM;
		if (r > RPC_MAX)
			r = RPC_MAX;
		return r < 1 ? 1 : r;
	}
	if (src)
		*src = AIMD_RPC_NONE;
	return 1;
}
