/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* req_per_conn.h - requests per connection: the factor that turns the
 * requests a service answers (its log) into the connections the SYN limit
 * admits. Pure, as aimd.h.
 *
 * Every law that sets the limit from the served rate (the cuts' floor and
 * cap, the drain's return, the calm probe, the ramp's aim) divides that
 * rate by it: on keep-alive connections one SYN brings many requests, and
 * a limit at the request rate lets that many times the work in.
 *
 * What it must not be: a ratio of requests answered to handshakes
 * completed measured during an overload. Then the handshakes are what
 * shedd admits and the requests what the service can finish, so the ratio
 * is served / limit, and a floor of served / ratio is the limit itself:
 * the law could never cut. Two measures that do not depend on the limit:
 *
 *   shape (preferred): the log says which request of its connection each
 *     line is (nginx $connection_requests, `cr=`). A request that follows
 *     another on its connection (cr > 1) was sent because the client got
 *     the one before; an answered request no other follows ended its
 *     session. So
 *       ends = answered - followers,  rpc = answered / ends
 *     over a decaying window (peak_decay: half of it every 7 s). Whether a
 *     client goes on after an answer is the client's choice, not the
 *     limit's. A client that gives up on a request it was not answered
 *     ends no session here: an overload that makes clients leave makes
 *     rpc larger, never smaller, so the floor it sets is lower, never
 *     stuck at the limit. With no end seen yet (sessions younger than
 *     the window, or longer than it holds) rpc is at most RPC_MAX.
 *   calm: answered / completed over the ticks in which the limit sheds
 *     nothing (demand below it), no signal says overload, and latency has
 *     a target and is below it: then the connections are the clients' own
 *     and the service keeps up, so the ratio is the clients' requests per
 *     connection. Held, not updated, through an episode and while the
 *     limit binds; decaying over the calm ticks only.
 *
 * Unknown (no `cr=` in the log, and no calm tick yet with latency
 * samples and completed handshakes; a restart relearns it, it is not
 * pinned): 1, a connection per request, the law as it was, which is right
 * for one request per connection and too high a floor on keep-alive. A
 * measure is known once RPC_MIN_SAMPLES answered requests stand in its
 * window (and, calm, RPC_MIN_CALM_NS of calm ticks).
 */
#ifndef SHEDD_REQ_PER_CONN_H
#define SHEDD_REQ_PER_CONN_H

#include <stdbool.h>
#include <linux/types.h>
#include "aimd_types.h"

/* At most this many requests per connection (nginx's keepalive_requests
 * default): with no session end seen, the shape says no more than this. */
#ifndef RPC_MAX
#define RPC_MAX 1000.0
#endif
#define RPC_MIN_SAMPLES 50.0
#define RPC_MIN_CALM_NS 1000000000ULL

/* One tick's measures into @s: the shape from the log, and, when @calm,
 * the calm ratio. */
void rpc_track(const struct aimd_params *p, struct aimd_state *s,
	       const struct aimd_signals *sig, double dt_sec, bool calm);

/* Requests per connection, at least 1: the shape's, else the calm one,
 * else 1. *@src (may be NULL) tells which. */
double rpc_get(const struct aimd_state *s, enum aimd_rpc_src *src);

#endif /* SHEDD_REQ_PER_CONN_H */
