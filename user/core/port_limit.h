/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* port_limit.h - the limits of ports in trouble of their own: which port
 * gets a token bucket of its own in the XDP program (include/shedd.h,
 * "Port limits"), at what rate, and when it is removed. A small AIMD per
 * port on the port's own signals, apart from the service's limit. Pure: no
 * I/O; the daemon writes what it decides.
 */
#ifndef SHEDD_PORT_LIMIT_H
#define SHEDD_PORT_LIMIT_H

#include <stdbool.h>
#include <linux/types.h>
#include "listeners.h"
#include "shedd.h"

/**
 * struct port_limit_params - fixed for the daemon's life.
 * @enter_ticks:  ticks in a row a port is in trouble of its own before it
 *                gets a limit (its signals are left out from the first)
 * @beta:         while the port is in trouble, its rate becomes beta x the
 *                lower of its rate and what it accepts: admitted below its
 *                accept rate, its queue drains
 * @growth:       while it is not, its rate is multiplied by this a tick
 * @min_rate:     never below (SYN/s): a port that accepts nothing still
 *                gets a trickle, which finds it when it comes back
 * @release_ticks: a limit that has not bound for this many ticks in a row
 *                (the port out of trouble) is removed, as is one whose
 *                rate reached the service's limit
 * @reuse_ticks:  a slot freed is given to another port only this many
 *                ticks later, once every CPU's cached tokens of it expired
 *                (a lease is a few ms)
 * @smooth:       weight of a tick's accept rate in the port's mean
 */
struct port_limit_params {
	__u32 enter_ticks;
	double beta;
	double growth;
	double min_rate;
	__u32 release_ticks;
	__u32 reuse_ticks;
	double smooth;
};

/* The defaults: 2 ticks, 0.9, x 2, 1 SYN/s, 50 ticks, 2 ticks, 0.3. */
void port_limit_defaults(struct port_limit_params *p);

/**
 * struct port_limit_entry - one port followed.
 * @port:          host order
 * @active:        it has a limit (and @slot); else a candidate
 * @slot:          its entry of port_reserve and port_buckets
 * @rate:          its limit (SYN/s)
 * @prev_rate:     its limit before the last change (the refill is
 *                 piecewise across a change, as a class's)
 * @accept_rate:   its accepts a second, smoothed
 * @trouble_ticks: ticks in a row it was in trouble (of its own, or, once
 *                 limited, any)
 * @calm_ticks:    ticks in a row it was not, while limited
 * @changed:       the rate or the entry changed this tick: write it
 */
struct port_limit_entry {
	__u16 port;
	bool active;
	__u32 slot;
	double rate;
	double prev_rate;
	double accept_rate;
	__u32 trouble_ticks;
	__u32 calm_ticks;
	bool changed;
};

/* What a tick did to one port, for the log. */
enum port_limit_event {
	PORT_LIMIT_NONE = 0,
	PORT_LIMIT_ADDED,   /* limited from this tick */
	PORT_LIMIT_REMOVED, /* its limit removed: it accepts again */
	PORT_LIMIT_FULL,    /* no slot free: left to its class's bucket */
};

#define PORT_LIMIT_FOLLOWED (2 * MAX_PORT_LIMITS) /* limited and candidates */

/**
 * struct port_limit_state - every port followed, and the slots.
 * @n:          entries used in @e
 * @e:          the ports
 * @slot_used:  a port holds the slot
 * @slot_freed: the tick the slot was freed at
 * @tick:       ticks run
 * @nr_active:  ports limited
 * @nr_events:  entries used in @ev_port, @ev
 * @ev_port:    the ports something happened to this tick ...
 * @ev:         ... and what
 */
struct port_limit_state {
	int n;
	struct port_limit_entry e[PORT_LIMIT_FOLLOWED];
	bool slot_used[MAX_PORT_LIMITS];
	__u64 slot_freed[MAX_PORT_LIMITS];
	__u64 tick;
	int nr_active;
	int nr_events;
	__u16 ev_port[PORT_LIMIT_FOLLOWED];
	enum port_limit_event ev[PORT_LIMIT_FOLLOWED];
	/* Removed this tick (their entries gone from @e): the daemon deletes
	 * them from port_limit. */
	int nr_removed;
	__u16 removed[PORT_LIMIT_FOLLOWED];
};

/**
 * struct port_limit_input - one tick.
 * @v:             the listeners' verdict (listeners_judge_ports()); NULL:
 *                 no dump this tick, nothing changes
 * @accepts:       the accepts of each port that accepted in the tick ...
 * @nr_accepts:    ... entries
 * @dt_ns:         the tick's length
 * @service_limit: the service's limit (SYN/s): a port's limit at or above
 *                 it no longer binds
 */
struct port_limit_input {
	const struct listener_verdict *v;
	const struct port_count *accepts;
	int nr_accepts;
	__u64 dt_ns;
	double service_limit;
};

void port_limit_init(struct port_limit_state *s);

/*
 * port_limit_update() - one tick of every port's limit. The control law,
 * port by port:
 *   in trouble of its own (v->ports, own) enter_ticks ticks in a row, a
 *     port gets a limit, in a free slot, of max(min_rate, beta x its
 *     accept rate): what it still takes, less, so its queue drains;
 *   limited and in trouble (own or not: a port whose trouble became the
 *     service's keeps cutting its own), rate = max(min_rate, beta x
 *     min(rate, accept rate));
 *   limited and out of trouble, rate = rate x growth, and the limit is
 *     removed once the rate reaches the service's limit or after
 *     release_ticks ticks out of trouble.
 * A port no longer in trouble of its own before it got a limit is
 * forgotten. Sets s->ev* and s->removed for the daemon.
 */
void port_limit_update(const struct port_limit_params *p, struct port_limit_state *s,
		       const struct port_limit_input *in);

/* The rate record of @e for port_limit: a class's, at its rate (and its
 * previous rate until @now_ns), a tenth of a second of it as burst (at
 * least 1), batches of at most a tenth of the burst, a lease of
 * @lease_ns. */
void port_limit_record(const struct port_limit_entry *e, __u64 lease_ns, __u64 now_ns,
		       struct shedd_port_limit *out);

#endif /* SHEDD_PORT_LIMIT_H */
