// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* conc.c - concurrency at the door; the law is in conc.h. */
#include <string.h>

#include "conc.h"

#define GAIN_PERIOD_NS 100000000.0 /* growth is per 100 ms, as aimd's gains */
#define CLOSE_RATE_NS 1000000000.0 /* the close rate's smoothing */
#define BINDING 0.9		   /* live at this share of the cap: it binds */

void conc_defaults(struct conc_params *p)
{
	*p = (struct conc_params){
		.on = true,
		.min_rpc = 2,
		.min_cap = 8,
		.growth = 0.05,
		.release = 2,
		.release_ns = 10000000000ULL,
		.tau_sec = 0.5,
		.hold_min_ns = 500000000ULL,
		.hold_max_ns = 5000000000ULL,
		.think_smooth_ns = 5000000000ULL,
		.think_min_served = 10,
	};
}

void conc_init(struct conc_state *s)
{
	int c;

	memset(s, 0, sizeof(*s));
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		s->rate_cap[c] = -1;
}

double conc_live(const struct conc_state *s)
{
	double n = 0;
	int c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		n += s->live[c];
	return n;
}

/* The live connections and the close rate of each class, from the
 * cumulative counts. */
static void count(struct conc_state *s, const struct conc_input *in)
{
	double dt = (double)in->dt_ns;
	double w = dt > 0 ? (dt < CLOSE_RATE_NS ? dt / CLOSE_RATE_NS : 1) : 0;
	int c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		__u64 opened = in->conns[c].opened, closed = in->conns[c].closed;
		double rate;

		if (c == in->default_class) {
			opened += in->conns[SHEDD_NR_CLASSES].opened;
			closed += in->conns[SHEDD_NR_CLASSES].closed;
		}
		/* A close may be counted on one CPU before its open, read
		 * from another, is: never below zero. */
		s->live[c] = opened > closed ? (double)(opened - closed) : 0;
		rate = s->have_prev && dt > 0 && closed >= s->prev_closed[c] ?
			       (double)(closed - s->prev_closed[c]) * 1e9 / dt :
			       0;
		s->close_rate[c] += (rate - s->close_rate[c]) * w;
		s->prev_closed[c] = closed;
	}
	s->have_prev = true;
}

static void lift(struct conc_state *s)
{
	int c;

	s->engaged = false;
	s->cap = 0;
	s->slack_ns = 0;
	s->enforced_ns = 0;
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		s->class_cap[c] = 0;
		s->rate_cap[c] = -1;
	}
}

/* How long a cut holds once enforced: the latency it was made at, within
 * the bounds. */
static __u64 hold(const struct conc_params *p, const struct conc_state *s)
{
	double h = s->cut_latency_ns;

	if (h < (double)p->hold_min_ns)
		h = (double)p->hold_min_ns;
	if (h > (double)p->hold_max_ns)
		h = (double)p->hold_max_ns;
	return (__u64)h;
}

void conc_step(const struct conc_params *p, const struct alloc_params *ap,
	       struct conc_state *s, const struct conc_input *in)
{
	double want[SHEDD_NR_CLASSES], live;
	int c;

	if (!p->on || !in->have_conns || !in->conns) {
		s->have_prev = false;
		memset(s->live, 0, sizeof(s->live));
		lift(s);
		return;
	}
	count(s, in);
	live = conc_live(s);

	/* Calm, on connections of several requests: what a connection spends
	 * outside the service, Z = live / X - R. Calm is within the target,
	 * not only without a verdict yet: a latency above it for less than
	 * the verdict's time is a queue already, whose Z is not the clients'. */
	if (!in->latency_overload && !s->engaged && in->rpc >= p->min_rpc &&
	    in->served >= p->think_min_served && in->latency_ns > 0 && in->target_ns > 0 &&
	    in->latency_ns <= in->target_ns && live >= p->min_cap) {
		double z = live / in->served - in->latency_ns / 1e9;
		double w = (double)in->dt_ns / (double)p->think_smooth_ns;

		if (z < 0)
			z = 0;
		if (!s->have_think || w >= 1)
			s->think_sec = z;
		else
			s->think_sec += (z - s->think_sec) * w;
		s->have_think = true;
	}

	if (in->latency_overload && in->rpc >= p->min_rpc && in->served > 0 &&
	    in->target_ns > 0 && in->latency_ns > in->target_ns) {
		s->slack_ns = 0;
		/* A cut holds until the live connections are down to it and
		 * then for the latency it was made at, while the queue it
		 * found drains: the latency measured until then is of
		 * requests queued before it. */
		if (!s->engaged || (s->enforced_ns && in->now_ns >= s->enforced_ns + hold(p, s))) {
			double n = live - in->served * (in->latency_ns - in->target_ns) / 1e9;

			/* An episode's first cut: at least what the calm Z
			 * gives, within the live connections. */
			if (!s->engaged && s->have_think) {
				double m = in->served * (in->target_ns / 1e9 + s->think_sec);

				if (m > live)
					m = live;
				if (m > n)
					n = m;
			}
			s->cap = n > p->min_cap ? n : p->min_cap;
			s->engaged = true;
			s->cut_latency_ns = in->latency_ns;
			s->enforced_ns = 0;
		}
	} else if (s->engaged) {
		/* Grows while calm: the latency within its target, not only
		 * a tick without a verdict (a verdict's statistic spans
		 * ticks; between two the overload is still there). */
		if (live >= BINDING * s->cap &&
		    (in->target_ns <= 0 || in->latency_ns <= in->target_ns)) {
			double step = s->cap * p->growth * (double)in->dt_ns / GAIN_PERIOD_NS;

			s->cap += step > 1 ? step : 1;
		}
		if (live * p->release < s->cap) {
			if (!s->slack_ns)
				s->slack_ns = in->now_ns ? in->now_ns : 1;
			else if (in->now_ns - s->slack_ns >= p->release_ns)
				lift(s);
		} else {
			s->slack_ns = 0;
		}
	}
	if (!s->engaged)
		return;
	if (!s->enforced_ns && live <= s->cap)
		s->enforced_ns = in->now_ns ? in->now_ns : 1;

	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		want[c] = s->live[c] + (in->syn_demand ? in->syn_demand[c] : 0) * p->tau_sec;
	alloc_classes(ap, s->cap, want, s->class_cap);
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		double r = s->close_rate[c] + (s->class_cap[c] - s->live[c]) / p->tau_sec;

		s->rate_cap[c] = r > 0 ? r : 0;
	}
}
