// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tick.c - the tick pipeline: signals -> controller -> allocator. Pure: no
 * I/O, no clock; the daemon and the simulation both call tick_step().
 */
#include <string.h>

#include "tick.h"
#include "latency_target.h"
#include "req_per_conn.h"

void tick_init(const struct tick_params *p, struct tick_state *s, double start_rate)
{
	aimd_init(&s->cs, &p->cp, start_rate);
	s->limit = p->aimd ? s->cs.rate : p->fixed_rate;
	conc_init(&s->conc);
}

void tick_allocate(const struct tick_params *p, const struct tick_state *s,
		   struct shedd_class_rate out[SHEDD_NR_CLASSES])
{
	double burst = s->limit * (p->burst_per_rate > 0 ? p->burst_per_rate : 0.1);

	alloc_rates_capped(&p->ap, s->limit, burst < 1 ? 1 : burst, s->demand, p->ncpus,
			   s->conc.engaged ? s->conc.rate_cap : NULL, out);
}

/* The concurrency limit's tick (conc.h), after the controller's: its
 * verdict, served rate, target and requests per connection. */
static void tick_conc(const struct tick_params *p, struct tick_state *s,
		      const struct tick_input *in)
{
	double syn[SHEDD_NR_CLASSES] = { 0 };
	bool derived = false;
	__u64 target = p->aimd ? aimd_latency_target(&p->cp, &s->cs, &derived) : 0;
	struct conc_input ci;
	int c, i;

	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		for (i = 0; i < p->ncpus; i++)
			syn[c] += s->instant[c * p->ncpus + i];
	ci = (struct conc_input){
		.have_conns = p->aimd && in->sig->have_conns,
		.conns = in->sig->conns,
		.default_class = p->default_class,
		.latency_overload = p->aimd && (s->cs.why & AIMD_WHY_LATENCY),
		.rpc = rpc_get(&s->cs, NULL),
		.served = s->cs.served_rate,
		.latency_ns = derived ? (double)s->cs.lat.last_mid_ns : (double)s->cs.vval_ns,
		.target_ns = (double)target,
		.syn_demand = syn,
		.now_ns = in->now_ns,
		.dt_ns = in->dt_ns,
	};
	conc_step(&p->conc, &p->ap, &s->conc, &ci);
}

void tick_start(const struct tick_params *p, struct tick_state *s, double start_rate)
{
	tick_init(p, s, p->aimd && start_rate <= 0 ? p->cp.max_rate : start_rate);
	if (p->aimd)
		aimd_open(&s->cs);
}

bool tick_blind_fallback(struct tick_params *p, bool have_delay_source, double start_rate)
{
	if (!p->aimd || have_delay_source)
		return false;
	p->aimd = false;
	p->fixed_rate = start_rate;
	return true;
}

bool tick_has_delay_signal(const struct signal_report *r)
{
	return r->have_sojourn || r->have_depth || r->have_latency;
}

void tick_controller_signals(const struct tick_input *in, double demand,
			     struct aimd_signals *out)
{
	const struct signal_report *r = in->sig;
	double dt_sec = (double)in->dt_ns / 1e9;
	/* SYNs the kernel hashed to a stuck listener, or sent to a port in
	 * trouble of its own, and dropped there were admitted and could not
	 * complete, whatever the service does: they are no evidence against
	 * growth (aimd.h, "completed/s"). */
	__u64 lost = r->have_listen_drops ?
			     r->listeners.stuck_overflows + r->listeners.port_overflows : 0;
	__u64 admitted = in->admitted > lost ? in->admitted - lost : 0;

	*out = (struct aimd_signals){
		/* The protected and backend listeners are judged group by
		 * group, the worst one counts: an eager front-end's empty
		 * queue must not hide its backend's full one. */
		.have_sojourn = r->have_sojourn,
		.sojourn_count = r->sojourn.count + r->backend_sojourn.count,
		.sojourn_min_ns = agg_worst_min(&r->sojourn, &r->backend_sojourn),
		.have_depth = r->have_depth,
		.depth = r->depth,
		.backlog = r->backlog,
		/* The protected and backend listeners' own drops and
		 * overflows: the namespace's TcpExt counters also move for
		 * any other listener, and must not cut the protected
		 * service; and of those, only the drops that are
		 * overflows (overflow_drops()). */
		.overflows = r->have_listen_drops ? r->listen_overflows : 0,
		.have_latency = r->have_latency && r->latency.count > 0,
		.latency_p99_ns = agg_quantile(&r->latency, 0.99),
		.latency_count = r->latency.count,
		.latency_mid_ns = agg_mid_mean(&r->latency),
		.latency_min_ns = r->latency.count ? r->latency.min_ns : 0,
		.latency_agg = r->latency.count ? &r->latency : NULL,
		.latency_served = r->latency_served,
		.have_conn_seq = r->have_conn_seq,
		.latency_next = r->latency_next,
		.demand = demand,
		.dt_ns = in->dt_ns,
		.have_queue_left = r->have_queue_left,
		.queue_left = r->queue_left,
		.have_completed = r->have_completed,
		.completed = r->completed,
		.admitted_per_sec = dt_sec > 0 ? (double)admitted / dt_sec : 0,
	};
}

double tick_step(const struct tick_params *p, struct tick_state *s,
		 const struct tick_input *in, struct shedd_class_rate out[SHEDD_NR_CLASSES])
{
	double dt_sec = (double)in->dt_ns / 1e9, total = 0;
	int i, n = SHEDD_NR_CLASSES * p->ncpus;

	for (i = 0; i < n; i++) {
		s->instant[i] = dt_sec > 0 ? (double)in->syn[i] / dt_sec : 0;
		s->demand[i] = alloc_demand(s->demand[i], s->instant[i]);
		total += s->instant[i];
	}
	if (p->aimd) {
		struct aimd_signals sig;

		tick_controller_signals(in, total, &sig);
		s->limit = aimd_update(&p->cp, &s->cs, &sig, in->now_ns);
	}
	tick_conc(p, s, in);
	tick_allocate(p, s, out);
	return s->limit;
}

__u64 tick_next_deadline(__u64 *deadline_ns, __u64 now_ns, __u64 tick_ns)
{
	__u64 skipped = 0;

	*deadline_ns += tick_ns;
	if (now_ns > *deadline_ns && tick_ns) {
		skipped = (now_ns - *deadline_ns) / tick_ns + 1;
		*deadline_ns = now_ns + tick_ns;
	}
	return skipped;
}

void tick_lease(const struct tick_params *p, const struct tick_state *s, double fail_rate,
		__u64 lease_ns, bool pinned, __u64 now_ns, struct shedd_lease *out)
{
	struct shedd_class_rate fr[SHEDD_NR_CLASSES];
	double demand[SHEDD_NR_CLASSES];
	double burst = fail_rate * (p->burst_per_rate > 0 ? p->burst_per_rate : 0.1);
	int c;

	memset(out, 0, sizeof(*out));
	out->heartbeat_ns = now_ns;
	if (!lease_ns)
		return;
	out->lease_ns = lease_ns;
	out->relax_ns = lease_ns;
	out->flags = pinned ? SHEDD_LEASE_PINNED : 0;
	/* The demand the tick measured, each class's floor of the total
	 * counted as demanded: nobody measures once the daemon is gone, and
	 * a class idle at its last tick must not be left without its share
	 * when its clients come. */
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		double floor_rate = p->ap.floor[c] * fail_rate;
		int i;

		demand[c] = 0;
		for (i = 0; s->demand && i < p->ncpus; i++)
			demand[c] += s->demand[c * p->ncpus + i];
		if (demand[c] < floor_rate)
			demand[c] = floor_rate;
	}
	alloc_rates(&p->ap, fail_rate, burst < 1 ? 1 : burst, demand, 1, fr);
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		/* Never to zero: a class the split leaves without a share
		 * keeps one SYN a second. */
		out->fail_rate_per_sec[c] = fr[c].rate_per_sec ? fr[c].rate_per_sec : 1;
		out->fail_burst[c] = fr[c].burst ? fr[c].burst : 1;
	}
}
