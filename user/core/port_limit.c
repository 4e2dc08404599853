// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* port_limit.c - the limits of ports in trouble of their own (port_limit.h). */
#include <math.h>
#include <string.h>

#include "port_limit.h"

void port_limit_defaults(struct port_limit_params *p)
{
	*p = (struct port_limit_params){
		.enter_ticks = 2,
		.beta = 0.9,
		.growth = 2.0,
		.min_rate = 1.0,
		.release_ticks = 50,
		.reuse_ticks = 2,
		.smooth = 0.3,
	};
}

void port_limit_init(struct port_limit_state *s)
{
	memset(s, 0, sizeof(*s));
}

static struct port_limit_entry *find(struct port_limit_state *s, __u16 port)
{
	int i;

	for (i = 0; i < s->n; i++)
		if (s->e[i].port == port)
			return &s->e[i];
	return NULL;
}

static const struct port_trouble *trouble_of(const struct listener_verdict *v, __u16 port)
{
	int i;

	for (i = 0; i < v->nr_ports && i < PORTS_JUDGED; i++)
		if (v->ports[i].port == port)
			return &v->ports[i];
	return NULL;
}

static double accepts_of(const struct port_limit_input *in, __u16 port, double dt_s)
{
	int i;

	for (i = 0; i < in->nr_accepts; i++)
		if (in->accepts[i].port == port)
			return dt_s > 0 ? (double)in->accepts[i].accepts / dt_s : 0;
	return 0;
}

static void event(struct port_limit_state *s, __u16 port, enum port_limit_event ev)
{
	if (s->nr_events < PORT_LIMIT_FOLLOWED) {
		s->ev_port[s->nr_events] = port;
		s->ev[s->nr_events++] = ev;
	}
}

/* A free slot, freed at least reuse_ticks ago, the longest free first; -1:
 * none. */
static int slot_take(const struct port_limit_params *p, struct port_limit_state *s)
{
	int i, best = -1;

	for (i = 0; i < MAX_PORT_LIMITS; i++) {
		if (s->slot_used[i] || s->tick - s->slot_freed[i] < p->reuse_ticks)
			continue;
		if (best < 0 || s->slot_freed[i] < s->slot_freed[best])
			best = i;
	}
	if (best >= 0)
		s->slot_used[best] = true;
	return best;
}

static void set_rate(struct port_limit_entry *e, double rate)
{
	if (rate != e->rate) {
		e->prev_rate = e->rate;
		e->rate = rate;
		e->changed = true;
	}
}

static void forget(struct port_limit_state *s, int i)
{
	s->e[i] = s->e[--s->n];
}

void port_limit_update(const struct port_limit_params *p, struct port_limit_state *s,
		       const struct port_limit_input *in)
{
	const struct listener_verdict *v = in->v;
	double dt_s = (double)in->dt_ns / 1e9;
	int i;

	s->nr_events = 0;
	s->nr_removed = 0;
	s->tick++;
	for (i = 0; i < s->n; i++)
		s->e[i].changed = false;
	if (!v)
		return;
	/* New candidates: the ports in trouble of their own not followed. */
	for (i = 0; i < v->nr_ports && i < PORTS_JUDGED; i++) {
		if (!v->ports[i].own || find(s, v->ports[i].port) || s->n >= PORT_LIMIT_FOLLOWED)
			continue;
		s->e[s->n++] = (struct port_limit_entry){ .port = v->ports[i].port };
	}
	for (i = 0; i < s->n;) {
		struct port_limit_entry *e = &s->e[i];
		const struct port_trouble *t = trouble_of(v, e->port);
		double acc = accepts_of(in, e->port, dt_s);

		e->accept_rate = e->trouble_ticks || e->active ?
					 p->smooth * acc + (1 - p->smooth) * e->accept_rate : acc;
		if (!e->active) {
			/* A candidate: in trouble of its own, or forgotten. */
			if (!t || !t->own) {
				forget(s, i);
				continue;
			}
			if (++e->trouble_ticks >= p->enter_ticks) {
				int slot = s->nr_active < MAX_PORT_LIMITS ? slot_take(p, s) : -1;

				if (slot < 0) {
					/* Said once: the counter stays past it. */
					if (e->trouble_ticks == p->enter_ticks)
						event(s, e->port, PORT_LIMIT_FULL);
					i++;
					continue;
				}
				e->active = true;
				e->slot = (__u32)slot;
				e->rate = 0;
				set_rate(e, fmax(p->min_rate, p->beta * e->accept_rate));
				e->prev_rate = e->rate;
				e->calm_ticks = 0;
				s->nr_active++;
				event(s, e->port, PORT_LIMIT_ADDED);
			}
			i++;
			continue;
		}
		if (t) {
			/* Limited and in trouble: cut below what it takes. */
			e->trouble_ticks++;
			e->calm_ticks = 0;
			set_rate(e, fmax(p->min_rate, p->beta * fmin(e->rate, e->accept_rate)));
			i++;
			continue;
		}
		e->trouble_ticks = 0;
		e->calm_ticks++;
		set_rate(e, e->rate * p->growth);
		if (e->rate >= in->service_limit || e->calm_ticks >= p->release_ticks) {
			s->slot_used[e->slot] = false;
			s->slot_freed[e->slot] = s->tick;
			s->nr_active--;
			event(s, e->port, PORT_LIMIT_REMOVED);
			if (s->nr_removed < PORT_LIMIT_FOLLOWED)
				s->removed[s->nr_removed++] = e->port;
			forget(s, i);
			continue;
		}
		i++;
	}
}

void port_limit_record(const struct port_limit_entry *e, __u64 lease_ns, __u64 now_ns,
		       struct shedd_port_limit *out)
{
	double burst = e->rate / 10;
	double batch = burst / 10;

	memset(out, 0, sizeof(*out));
	out->slot = e->slot;
	out->r.rate_per_sec = (__u64)llround(fmin(e->rate, (double)MAX_RATE_PER_SEC));
	out->r.prev_rate_per_sec = (__u64)llround(fmin(e->prev_rate, (double)MAX_RATE_PER_SEC));
	out->r.changed_ns = now_ns;
	out->r.burst = burst < 1 ? 1 : (__u64)fmin(burst, (double)MAX_BURST);
	out->r.lease_ns = lease_ns;
	out->r.batch = batch < 1 ? 1 : (__u32)fmin(batch, (double)MAX_BATCH);
	out->r.flags = SHEDD_RATE_SET;
}
