// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ctl_state.c - the rate pin around a tick, and the ctl_state record.
 * Pure: the daemon does the map I/O (ctl.c).
 */
#include <string.h>

#include "ctl_state.h"

double ctl_pinned_rate(const struct shedd_ctl_cmd *cmd)
{
	if (!(cmd->flags & SHEDD_CMD_RATE_PINNED) || !cmd->pinned_mrate)
		return 0;
	if (cmd->pinned_mrate > CTL_MAX_PINNED_MRATE)
		return (double)MAX_TOTAL_RATE_PER_SEC;
	return (double)cmd->pinned_mrate / 1000;
}

void ctl_pin_before(const struct tick_params *p, struct tick_state *s,
		    const struct shedd_ctl_cmd *cmd)
{
	double pin = ctl_pinned_rate(cmd);

	if (!p->aimd) {
		s->limit = pin > 0 ? pin : p->fixed_rate;
		return;
	}
	/* The controller's rate is what it decides from: with the pin it
	 * decides from the rate the service really gets. */
	if (pin > 0)
		s->cs.rate = pin;
}

void ctl_pin_start(const struct tick_params *p, struct tick_state *s,
		   const struct shedd_ctl_cmd *cmd)
{
	double pin = ctl_pinned_rate(cmd);

	ctl_pin_before(p, s, cmd);
	if (pin > 0)
		s->limit = pin;
}

void ctl_pin_after(const struct tick_params *p, struct tick_state *s,
		   const struct shedd_ctl_cmd *cmd, struct shedd_class_rate out[SHEDD_NR_CLASSES])
{
	double pin = ctl_pinned_rate(cmd);

	if (pin <= 0)
		return;
	s->limit = pin;
	tick_allocate(p, s, out);
}

static __u64 to_mrate(double r)
{
	return r > 0 ? (__u64)(r * 1000 + 0.5) : 0;
}

void ctl_note_signals(struct ctl *c, const struct tick_params *p, const struct tick_state *s,
		      const struct tick_input *in)
{
	struct aimd_signals sig;
	struct shedd_ctl_state *o = &c->signals;
	double dt_sec = (double)in->dt_ns / 1e9, demand = 0;
	int i;

	for (i = 0; i < SHEDD_NR_CLASSES * p->ncpus; i++)
		demand += s->instant[i];

	tick_controller_signals(in, demand, &sig);
	memset(o, 0, sizeof(*o));
	o->have = (sig.have_sojourn ? SHEDD_CTL_HAVE_SOJOURN : 0) |
		  (sig.have_depth ? SHEDD_CTL_HAVE_DEPTH : 0) |
		  (sig.have_latency ? SHEDD_CTL_HAVE_LATENCY : 0);
	o->sojourn_min_ns = sig.have_sojourn ? sig.sojourn_min_ns : 0;
	o->sojourn_count = sig.have_sojourn ? sig.sojourn_count : 0;
	o->depth = sig.have_depth ? sig.depth : 0;
	o->backlog = sig.have_depth ? sig.backlog : 0;
	o->latency_p99_ns = sig.have_latency ? sig.latency_p99_ns : 0;
	o->demand_mrate = to_mrate(demand);
	o->admitted_mrate = to_mrate(dt_sec > 0 ? (double)in->admitted / dt_sec : 0);
}

void ctl_state_fill(const struct ctl *c, const struct tick_params *p, const struct tick_state *s,
		    __u64 now_ns, struct shedd_ctl_state *out)
{
	const struct shedd_ctl_state *g = &c->signals;
	double pin = ctl_pinned_rate(&c->cmd);

	memset(out, 0, sizeof(*out));
	if (p->aimd) {
		aimd_export(&s->cs, now_ns, out);
		out->nr_stages = p->cp.nr_stages > 0 ? (__u32)p->cp.nr_stages : 0;
		out->latency_target_ns = aimd_latency_target(&p->cp, &s->cs, NULL);
	} else {
		/* A fixed rate leaves no controller state to resume: a
		 * later adoption starts from the program's rate. */
		out->version = SHEDD_CTL_STATE_VERSION;
		out->controller = SHEDD_CTL_FIXED;
		out->written_ns = now_ns;
	}
	out->applied_mrate = to_mrate(s->limit);
	if (pin > 0) {
		out->flags |= SHEDD_CTL_PINNED;
		out->pinned_mrate = to_mrate(pin);
	}
	out->tick_ms = (__u32)(p->cp.tick_ns / 1000000ULL);
	out->have = g->have;
	out->sojourn_min_ns = g->sojourn_min_ns;
	out->sojourn_count = g->sojourn_count;
	out->depth = g->depth;
	out->backlog = g->backlog;
	out->latency_p99_ns = g->latency_p99_ns;
	out->demand_mrate = g->demand_mrate;
	out->admitted_mrate = g->admitted_mrate;
}
