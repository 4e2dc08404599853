/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* conc.h - concurrency at the door: a limit on the live connections to the
 * protected service, per class, beside the SYN rate. Pure, as aimd.h.
 *
 * On keep-alive connections (HTTP/1.1, HTTP/2) a client that is in stays
 * in, and sends request after request without a SYN: a crowd of such
 * clients that arrives while the door is open overloads the service, and
 * the SYN limit the overload brings no longer reaches it. What the door
 * can still do is not let more in while there are too many: hold the
 * live connections at the number the service serves within its latency
 * target, and let a new one in as an old one leaves.
 *
 * The number, from Little's law. A closed loop of N connections, each
 * sending its next request when the previous is answered and its client
 * has thought Z, through a service that answers X requests/s in R each:
 * N = X (R + Z). At the latency target T it would be X (T + Z), so
 *
 *   cap = live - X (R - T)
 *
 * (live, X and R measured in the tick): the connections too many are the
 * requests queued beyond what the target allows. For connections of one
 * request each it is X T plus what a connection lives beyond its request,
 * the same law. R and T are the statistic the controller's latency
 * verdict judges: the trimmed mean with the derived target, the p99 with
 * --latency-target.
 *
 * That takes Z as it is under the overload, live / X - R. Clients that
 * pace their requests (a browser's poll, h2load --rps, a service mesh's
 * health and RPC cadence) send the next one as soon as a late answer
 * comes: their Z shrinks to nothing under the overload and the law cuts
 * as if every connection were a request queued, to a tenth of what the
 * service serves in time (measured through nginx: 20-28 connections
 * where about 110 fit). So Z is also measured while calm (no cap in
 * force, the latency within its target, the connections of several
 * requests),
 * smoothed over @think_smooth_ns, and the first cut of an episode is
 * at least X (T + Z_calm), never above the live connections. A crowd
 * that thinks less than the clients measured calm is cut again, from
 * what is live, once the hold below has passed.
 *
 * When: the limit is off until an overload the latency says
 * (AIMD_WHY_LATENCY) on connections that carry more than one request
 * (req_per_conn.h at least @min_rpc): on connections of one request the
 * SYN limit already reaches every request, and a second law on the same
 * arrivals would only cut twice. On such a tick the cap is the law's, and
 * it holds until the live connections are down to it, then for the
 * latency it was measured at (within @hold_min_ns and @hold_max_ns): the
 * latency measured until then is of requests that queued before the cut,
 * and cutting on it again, from a live count the cut (or --recall)
 * already lowered, ratchets the cap down to its floor (measured through
 * nginx: 28 connections, then 8, where the service takes about 110).
 * After the hold, an overload's tick cuts again from what is live then. On other ticks it
 * grows by @growth per 100 ms (at least one connection)
 * while the latency is within its target (a verdict's statistic spans
 * ticks: a tick between two overloaded verdicts is no calm one) and the
 * live connections fill at least 90 % of it, and it is lifted
 * once they have stayed under 1 / @release of it for @release_ns. Never
 * below @min_cap.
 *
 * By class: the cap is split as the SYN limit is (alloc_classes(): the
 * reserved floors, then priority order, then what nobody wants), each
 * class wanting its live connections and the SYNs it offers over @tau_sec.
 * A class's SYN rate is then at most the rate its connections close plus
 * its room (cap - live) over @tau_sec, 0 when it holds more than its
 * share and none close (the door is shut to it until some do); and never
 * more than the SYN limit's share.
 *
 * Live connections are those opened since the daemon's probe loaded
 * (bpf/sojourn.bpf.c): the ones open before it are not counted, and the
 * law runs on what it counts.
 */
#ifndef SHEDD_CONC_H
#define SHEDD_CONC_H

#include <stdbool.h>
#include <linux/types.h>
#include "shedd.h"
#include "alloc.h"

/**
 * struct conc_params - the door's concurrency limit.
 * @on:         false: never a limit (--conn-limit off)
 * @min_rpc:    engage only on connections of at least this many requests
 *              (2)
 * @min_cap:    the cap is never below this many connections (8)
 * @growth:     calm, a binding cap grows by this fraction per 100 ms (0.05)
 * @release:    lifted when the live connections stay under 1 / this of
 *              the cap (2) ...
 * @release_ns: ... this long (10 s)
 * @tau_sec:    a class's room is offered over this long (0.5 s), and its
 *              SYN demand counts as connections over it
 * @hold_min_ns, @hold_max_ns: a cut holds for the latency it was made at,
 *              within these (0.5 s, 5 s)
 * @think_smooth_ns: the calm Z is smoothed over this long (5 s)
 * @think_min_served: ... from ticks that answered at least this many
 *              requests/s (10)
 */
struct conc_params {
	bool on;
	double min_rpc;
	double min_cap;
	double growth;
	double release;
	__u64 release_ns;
	double tau_sec;
	__u64 hold_min_ns;
	__u64 hold_max_ns;
	__u64 think_smooth_ns;
	double think_min_served;
};

/**
 * struct conc_state - between ticks.
 * @engaged:     a cap is in force
 * @cap:         the total cap (connections)
 * @slack_ns:    since when the live connections stay under cap / release
 *               (0: not now)
 * @enforced_ns: when the live connections came down to the cap after its
 *               cut (0: not yet)
 * @cut_latency_ns: the latency the cut was made at
 * @have_prev:   @prev_closed holds the last tick's counts
 * @prev_closed: closed connections per class, cumulative, last tick
 * @live:        live connections per class, this tick
 * @close_rate:  connections closed per second per class, smoothed over 1 s
 * @class_cap:   each class's share of @cap (connections)
 * @rate_cap:    each class's SYN rate at most (SYN/s); < 0: none
 * @have_think:  @think_sec holds a calm measure
 * @think_sec:   Z while calm, smoothed: live / served - latency (s)
 */
struct conc_state {
	bool engaged;
	double cap;
	__u64 slack_ns;
	__u64 enforced_ns;
	double cut_latency_ns;
	bool have_prev;
	__u64 prev_closed[SHEDD_NR_CLASSES];
	double live[SHEDD_NR_CLASSES];
	double close_rate[SHEDD_NR_CLASSES];
	double class_cap[SHEDD_NR_CLASSES];
	double rate_cap[SHEDD_NR_CLASSES];
	bool have_think;
	double think_sec;
};

/**
 * struct conc_input - one tick's measures.
 * @have_conns:    the live connections are counted (@conns valid)
 * @conns:         opened and closed per slot, cumulative; slot
 *                 SHEDD_NR_CLASSES is the peers no prefix names
 * @default_class: the class those belong to
 * @latency_overload: the controller's verdict of this tick is overload,
 *                 latency among its reasons
 * @rpc:           requests per connection (req_per_conn.h)
 * @served:        requests answered per second
 * @latency_ns:    the tick's latency, in the verdict's statistic (0: none)
 * @target_ns:     the target in force for it (0: none)
 * @syn_demand:    SYNs offered per second, per class
 * @now_ns, @dt_ns: the tick's time and length
 */
struct conc_input {
	bool have_conns;
	const struct shedd_conn_count *conns;
	int default_class;
	bool latency_overload;
	double rpc;
	double served;
	double latency_ns;
	double target_ns;
	const double *syn_demand;
	__u64 now_ns;
	__u64 dt_ns;
};

void conc_defaults(struct conc_params *p);
void conc_init(struct conc_state *s);

/* One tick: the cap and each class's rate cap into @s. */
void conc_step(const struct conc_params *p, const struct alloc_params *ap,
	       struct conc_state *s, const struct conc_input *in);

/* The live connections of all classes. */
double conc_live(const struct conc_state *s);

#endif /* SHEDD_CONC_H */
