/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* aimd.h - the controller: finds the admitted SYN rate from what the service
 * experiences (accept-queue sojourn, depth, overflows, service latency).
 * Pure: no I/O, no clock; time comes in as an argument, so it is tested in
 * simulated time. Its types are aimd_types.h's, its latency verdicts
 * latency_target.h's, the drain of a latency overload drain.h's.
 */
#ifndef SHEDD_AIMD_H
#define SHEDD_AIMD_H

#include <stdbool.h>
#include <linux/types.h>
#include "aimd_types.h"
#include "latency_target.h"

void aimd_defaults(struct aimd_params *p);
void aimd_init(struct aimd_state *s, const struct aimd_params *p, double start_rate);

/*
 * aimd_open() - mark @s as a fresh start: no evidence of overload yet.
 * Until the first overload verdict (or calm probe), a limit that binds
 * while what it admits completes grows by open_gain per 100 ms instead of
 * alpha. The daemon opens a fresh start (at max_rate unless --rate gives
 * one); aimd_init() alone is a controller whose history is unknown.
 */
void aimd_open(struct aimd_state *s);

/*
 * aimd_overloaded() - the overload verdict for one tick (bits of enum
 * aimd_reason, 0 = not overloaded). Updates the CoDel timer in @s.
 */
unsigned int aimd_overloaded(const struct aimd_params *p, struct aimd_state *s,
			     const struct aimd_signals *sig, __u64 now_ns);

/*
 * aimd_update() - one tick of the control law; returns the new limit.
 *   overload:   rate = max(min_rate, min(rate * beta, good_cap * peak_accept)):
 *               a limit far above what the service takes comes down in one
 *               step, a near one by beta. Where no accept rate is measured
 *               (no sojourn probes), the peak of completed handshakes
 *               stands for peak_accept, here and at the episode's end. When latency is among the
 *               reasons, good_cap * d * peak_served caps it too, and the
 *               cuts stop at served_floor * d * peak_served (d: the drain
 *               factor, see @drain_ns of struct aimd_params): a proxy
 *               accepts at the rate it is offered, so its accept rate says
 *               nothing of what its upstream serves; the requests answered
 *               per second do, in connections: divided by the requests per
 *               connection (req_per_conn.h; 1 when not known), which are
 *               never measured during an overload. An episode that starts in
 *               steady state remembers last_good = rate, one that interrupts
 *               a ramp takes last_good = held_rate.
 *   draining:   out of steady state, while the only signal is the sojourn
 *               and its minimum is falling, the queue is answering the last
 *               decrease or draining after a stall: the rate and the ramp
 *               stage are held, neither cut nor abandoned.
 *   episode end: last_good = min(last_good, ramp_cap * peak_accept), and,
 *               after an episode with latency among its reasons, at most
 *               ramp_cap * peak_served: never aim above what the
 *               service has recently shown it takes (a start far above
 *               capacity, a stall of the application).
 *   after one:  rate = max(floor_rate, ramp[k] * last_good) for stage k,
 *               each held stage_hold_ns, abandoned at once on overload.
 *               Stages at or below where the episode ended are skipped; if
 *               only the last is left and the episode ended within
 *               shallow_frac of it, the cut was shallow, and the additive
 *               climb takes over (the ramp is for a service that went down).
 *   otherwise:  rate = min(max_rate, rate + alpha) only while the limit
 *               binds (demand >= rate) and the admitted SYNs turn into
 *               connections (completed/s >= complete_frac x min(admitted/s,
 *               rate)); unchanged otherwise, so the limit cannot creep up
 *               while nobody needs it, nor on a flood of SYNs that never
 *               complete. While open (aimd_open(): no overload since the
 *               start), rate = min(max_rate, rate x open_gain) instead.
 *               Binding at max_rate so sets at_max: the ceiling alone
 *               sheds a service that completes what it is given.
 *   blind:      a tick with no delay signal at all (no sojourn, no depth, no
 *               latency) holds the rate: no verdict, no growth.
 */
double aimd_update(const struct aimd_params *p, struct aimd_state *s,
		   const struct aimd_signals *sig, __u64 now_ns);

const char *aimd_mode_name(enum aimd_mode m);

struct shedd_ctl_state;

/*
 * aimd_export() - @s as the pinned ctl_state record (rates rounded to
 * 1/1000 SYN/s), stamped @now_ns.
 */
void aimd_export(const struct aimd_state *s, __u64 now_ns, struct shedd_ctl_state *out);

/*
 * aimd_import() - restore @s from a record a previous daemon wrote, under
 * today's @p: the limit is clamped to [min_rate, max_rate], a ramp stage
 * that today's ramp no longer has ends the ramp (steady), and a stage end
 * further away than one stage_hold_ns from @now_ns is brought back to it.
 * The CoDel timer starts afresh. A record older than fresh_ns is history:
 * only its limit is resumed, in steady state, open (aimd_open()), with its
 * peaks decayed by its age. The derived target's baseline is resumed if its
 * point is still inside the window (version 3), with its spread where the
 * record has one (spread_milli). Returns 0, or -1 (and leaves @s alone) if
 * the record was never written, has another version (1 to 3 are read), was
 * written by a fixed-rate shedd or makes no sense.
 */
int aimd_import(const struct aimd_params *p, struct aimd_state *s,
		const struct shedd_ctl_state *in, __u64 now_ns);

#endif /* SHEDD_AIMD_H */
