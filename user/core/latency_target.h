/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* latency_target.h - the controller's latency verdicts: against the
 * operator's target (--latency-target DUR) or a target derived from the
 * service's calm latency (the default). Pure, as aimd.h.
 */
#ifndef SHEDD_LATENCY_TARGET_H
#define SHEDD_LATENCY_TARGET_H

#include <stdbool.h>
#include <linux/types.h>
#include "aimd_types.h"

/*
 * The derived latency target (params->latency_auto, no latency_target_ns): the
 * service's calm latency is learned, and a latency well above it is
 * overload. docs/control-loop.md ("Latency target") gives the reasons for
 * each choice and what it cannot see.
 *
 *   mid(tick)   = mean of the middle 80 % of the tick's samples (signals)
 *   point       = the sample-weighted mean of mid over >= auto_point_samples
 *                 samples and >= auto_point_ns (the first point as soon as
 *                 it has the samples); kept only if calm (below)
 *   spread      = 1 + cs^2 of a point's samples (agg_spread(): cs read as
 *                 their interdecile range over their mid-mean, scaled so
 *                 an exponential reads 1): 1 for a fixed service time,
 *                 2 for an exponential one
 *   baseline    = min(points of the last auto_window_ns)
 *   s           = the spread of the lowest of those points that measured
 *                 one (20 samples or more), within [1, AIMD_SPREAD_MAX];
 *                 1 if none did
 *   target      = clamp(baseline + s x ((auto_k - 1) x baseline +
 *                       auto_margin_ns), auto_min_ns, auto_max_ns); none
 *                 (latency is silent) until the first point
 *
 *   verdict     = the weighted mean of mid over >= auto_verdict_samples
 *                 samples, taken within auto_stale_ns, above target
 *   overload    = verdicts above target for auto_interval_ns (CoDel's
 *                 first_above_time), held until the next verdict; a
 *                 one-tick verdict above auto_jump x target at once
 *
 * The spread is Kingman's: the wait at a given utilisation scales with
 * (ca^2 + cs^2) / 2, with Poisson arrivals (1 + cs^2) / 2, so the part of
 * the target above the baseline (the wait it allows) is scaled by
 * 1 + cs^2, and the service's own time is not. Without it, one server of
 * exponential times held at 2 x its calm statistic + 5 ms served 80-87 %
 * of its capacity (on real sockets, behind nginx and HAProxy). The clamp
 * keeps a noisy point or a heavy tail from carrying the target away. A
 * probe's point carries the spread of its flat run, or of the pool it
 * ended with; a resumed baseline (aimd_import()) the spread in force when
 * it was written.
 *
 * A point is calm only without evidence of pressure while it was gathered:
 *   - handshakes completed faster than requests were answered (by more
 *     than a quarter, and than the feed's coverage says: below);
 *   - a tenth of the samples not answered;
 *   - mid of its last step above 2 x that of its first + 5 ms (a step: a
 *     tick, or as many as it takes to gather half auto_point_samples: a
 *     statistic of a few samples of a bimodal service doubles by chance);
 *   - another signal's overload verdict (sojourn, depth, overflows).
 * Calm probe: without a baseline, pressure starts a probe at once; with
 * one, a binding limit whose calm point is older than probe_every_ns does.
 * The probe holds the limit at probe_frac x the served rate (in
 * connections; the highest seen since it began: a cold start's probe
 * begins on the first answers, before the service has shown its rate),
 * never above the limit it began under; until its first level, at
 * AIMD_PROBE_TRICKLE x what it began with:
 * what comes in while the service works off the queue from before the
 * probe waits behind it, and is one more queue to drain after it. Its
 * levels are the statistics of ticks (a "tick" here gathers at least 3
 * samples) whose requests were sent during it (it has run longer than they
 * took) and answered (nine in ten), while the service is not busy: busy,
 * it answers (over the last AIMD_RECENT_SLOTS ticks) more than midway
 * between what it answered as the probe began and what the probe lets in,
 * in requests, and works off a queue from before the probe, one that
 * drains or one held at its level (a proxy's connections waiting outside a
 * full backlog, keep-alive clients' next requests), as flat as the
 * service's own time. Answers that came sooner show the queue as it grew
 * before the probe took hold, and a give-up shows the clients' patience.
 * It ends once three levels in a row,
 * later than the level it began at (probe_lag_ns) after its start, fell by
 * less than half of (1 - f) / f ms per ms (f = probe_frac) and stay near
 * the lowest level seen, or two pools of levels in a row (AIMD_PROBE_POOL
 * samples each) differ by no more than twice the standard error of their
 * difference (cs x mean / sqrt(n) each, cs the smaller pool's) or than
 * "near" (a fifth of the lowest level, 2 ms at least), after probe_min_ns;
 * or at probe_max_ns with the
 * lowest level, unless its last tick gave no level or a level still
 * falling faster than that (the queue from before it drains): then at the
 * first tick that does neither, or at AIMD_PROBE_NO_LEVEL x probe_max_ns
 * (with the lowest tick that was a level but for busy, if no level came).
 * That level is the calm point (at probe_max_ns, or when two pools agree:
 * the lowest mean of
 * levels in a row pooled to AIMD_PROBE_POOL samples, where there is one:
 * the lowest of many steps of 3 samples of a service whose times spread is
 * a draw's luck); the limit resumes at the highest served
 * rate seen during the probe. The baseline and when its point was taken go out with
 * aimd_export(), so a restart resumes it.
 *
 * Coverage: a feed may log part of the connections only (one vhost of
 * several, health checks and preconnects that send no request, a sampled
 * log). Then handshakes outrun answers for good, and that gap is no queue:
 *   cover       = answered / completed over a calm point (a quarter's
 *                 weight after the first), or over the flat steps of a
 *                 probe but the first (the queue is gone there) if they
 *                 hold auto_verdict_samples answers; 1 from
 *                 AIMD_COVER_WHOLE up (and for keep-alive, above 1); not
 *                 known before the first
 *   gap         = completed x cover > 1.25 x answered + 5 (pressure, above);
 *                 while cover is not known, a gap alone is no evidence: a
 *                 feed that covers half the connections of a calm service
 *                 and a service that answers half of what it takes, its
 *                 clients leaving without a trace, look the same, and only
 *                 the latency can tell: the first point then waits
 *                 auto_point_ns, not the first auto_point_samples. A gap of
 *                 g = completed / answered (cover 1) is pressure at once
 *                 when the latency climbs with it as such a queue makes
 *                 it, first in first out: from the point's first short
 *                 step to its last (a short step: a tick, or as many as it
 *                 takes to gather 3 samples), a doubling (+ 5 ms), at
 *                 least half of (1 - 1/g) ms per ms, and the last step's
 *                 fastest answer above the first step's statistic (+ 5
 *                 ms). A partial feed's latency does not climb with its
 *                 gap, and a bimodal service's short steps jump, but its
 *                 fast answers stay, and not at that pace for long.
 *                 A point whose only evidence is the gap, while no verdict
 *                 found latency above target, is the feed covering less
 *                 than it did: cover is taken from it afresh
 *   served      = answered / cover (latency_answered()): the served rate
 *                 (floors, caps, drain, probe) counts the requests of the
 *                 connections the feed does not show
 * The verdicts themselves need auto_verdict_samples within auto_stale_ns
 * whatever the coverage: a feed thinner than that is no signal, and the
 * queue's own signals (sojourn, depth, overflows, stall) judge alone.
 */

/* latency_derived() - one tick of the derived target: learn the baseline
 * from the tick's samples (or run the calm probe), then judge them. True
 * while latency says overload. @other: the other signals' verdict of the
 * tick (evidence of pressure). */
bool latency_derived(const struct aimd_params *p, struct aimd_state *s,
		     const struct aimd_signals *sig, __u64 now_ns, unsigned int other);

/* The explicit target's verdict: the tick's p99, weighted by its samples,
 * over at least auto_verdict_samples gathered within auto_stale_ns, above
 * the target for auto_interval_ns: one slow request is not an overload. */
bool latency_explicit(const struct aimd_params *p, struct aimd_state *s,
		      const struct aimd_signals *sig, __u64 now_ns);

/* latency_answered() - @answered requests seen on the feed, as many as the
 * service answered on every connection: divided by the feed's coverage
 * (@a->cover), when it is known and partial. */
double latency_answered(const struct aimd_auto *a, double answered);

/* The last verdict of the derived target was within a quarter of the way
 * from the baseline to the target: nothing waits inside the service. */
bool latency_headroom(const struct aimd_params *p, const struct aimd_auto *a);

/* latency_resume() - a baseline point @baseline_ns of spread @spread (0:
 * not measured) taken at @calm_at_ns (a previous daemon's, aimd_import())
 * into @a, and the target derived from it at @now_ns. The caller checks
 * the point is inside the window. */
void latency_resume(const struct aimd_params *p, struct aimd_auto *a, __u64 baseline_ns,
		    double spread, __u64 calm_at_ns, __u64 now_ns);

/*
 * aimd_latency_target() - the latency target in force: the explicit one, or
 * the derived one; 0 when latency is not a signal (off, or still learning).
 * *@derived tells which (may be NULL).
 */
__u64 aimd_latency_target(const struct aimd_params *p, const struct aimd_state *s,
			  bool *derived);

#endif /* SHEDD_LATENCY_TARGET_H */
