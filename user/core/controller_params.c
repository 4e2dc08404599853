// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* controller_params.c - the controller's parameters from the options. */
#include "controller_params.h"

void controller_params(const struct shedd_options *o, struct aimd_params *p)
{
	int i;

	aimd_defaults(p);
	if (o->target_delay_ns)
		p->target_delay_ns = o->target_delay_ns;
	if (o->interval_ns)
		p->interval_ns = o->interval_ns;
	if (o->min_rate)
		p->min_rate = (double)o->min_rate;
	if (o->max_rate)
		p->max_rate = (double)o->max_rate;
	if (p->min_rate > p->max_rate)
		p->min_rate = p->max_rate;
	/* At a fresh start (open), SYNs that do not complete get at most
	 * --rate, the start of old. */
	if (o->rate_per_sec)
		p->open_floor = (double)o->rate_per_sec;
	p->tick_ns = (__u64)o->tick_ms * 1000000ULL;
	if (o->step)
		p->alpha_per_sec = (double)o->step;
	if (o->depth_frac > 0)
		p->depth_frac = o->depth_frac;
	if (o->ramp_hold_ns)
		p->stage_hold_ns = o->ramp_hold_ns;
	if (o->patience_ns)
		p->auto_max_ns = o->patience_ns / 4;
	/* Given, the clients' patience also sets how much queueing the
	 * derived target allows: a request answered within it is goodput. */
	if (o->patience_set && o->patience_ns / 8 > p->auto_min_ns)
		p->auto_min_ns = o->patience_ns / 8;
	p->latency_target_ns = o->latency_target_ns;
	p->latency_auto = !o->latency_target_off;
	if (o->nr_ramp >= 0) {
		p->nr_stages = o->nr_ramp;
		for (i = 0; i < o->nr_ramp; i++)
			p->ramp[i] = o->ramp[i];
	}
}
