/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* aimd_types.h - the controller's knobs (struct aimd_params), what one tick
 * measured (struct aimd_signals) and the controller's state (struct
 * aimd_state), shared by its parts: aimd.c (the verdict and the law),
 * latency_target.c (the latency verdicts, the derived target) and drain.c
 * (the drain of a latency overload). Pure: no I/O, no clock.
 */
#ifndef SHEDD_AIMD_TYPES_H
#define SHEDD_AIMD_TYPES_H

#include <stdbool.h>
#include <linux/types.h>
#include "sample_agg.h"

#define AIMD_MAX_STAGES 8
/* alpha and beta are gains per this much time (100 ms, the default tick):
 * a tick of length dt applies them dt / 100 ms times, so --tick-ms changes
 * how often the law runs, not how fast it moves. */
#define AIMD_GAIN_PERIOD_NS 100000000.0
/* The derived latency target's window is kept as this many slots, each the
 * minimum of the baseline points that ended in it. */
#define AIMD_AUTO_SLOTS 10
/* A drain whose excess latency grew past 1.25 x its start plus this was
 * too shallow, and begins again (aimd_params.drain_ns). */
#define AIMD_DRAIN_GREW_NS 10000000ULL
/* A drain whose excess fell to this fraction of its start or below, but
 * not under the target, works but was too short (the served peak it began
 * with stood above what is served): it begins again from the excess and
 * peak of then, rather than read the rest as a slower service. */
#define AIMD_DRAIN_FELL 0.75
/* The served rate is the requests answered over the last this many ticks
 * (aimd_state.served_rate): a peak of single-tick rates is a peak of noise. */
#define AIMD_SERVED_SLOTS 10
/* ... and over the last this many (aimd_state.served_recent). */
#define AIMD_RECENT_SLOTS 3
/* A log feed that answers at least this share of the handshakes covers
 * every connection (aimd_auto.cover): the same tolerance as the test of
 * handshakes outrunning answers (1.25 x). */
#define AIMD_COVER_WHOLE 0.8
/* A calm probe whose last step still shows the queue from before it (no
 * level of the service yet, or one still draining) goes on past
 * probe_max_ns, up to this many times it ("Calm probe" in
 * latency_target.h). */
#define AIMD_PROBE_NO_LEVEL 4
/* A calm probe lets in this share of its rate until its first level: what
 * comes in while the service is busy with the queue from before it waits
 * behind that queue ("Calm probe" in latency_target.h). */
#ifndef AIMD_PROBE_TRICKLE
#define AIMD_PROBE_TRICKLE 0.2
#endif
/* A calm probe that ends without a flat run takes the lowest mean of
 * consecutive levels pooled to this many samples, not the lowest step of
 * 3: the lowest of many small steps of a service whose times spread (an
 * exponential one) is luck, a third of its calm latency ("Calm probe" in
 * latency_target.h). */
#ifndef AIMD_PROBE_POOL
#define AIMD_PROBE_POOL 30
#endif
/* The derived target's spread factor (agg_spread(): 1 for a fixed service
 * time, 2 for an exponential one) is held within [1, this]: a noisy
 * estimate or a heavy tail does not carry the target away ("The derived
 * latency target" in latency_target.h). */
#ifndef AIMD_SPREAD_MAX
#define AIMD_SPREAD_MAX 2.0
#endif

/**
 * struct aimd_params - the controller's knobs, with their units. Those that
 * are options (--target-delay, --interval, --depth-frac, --min-rate,
 * --max-rate, --ramp, --ramp-hold, --tick-ms) show their default in
 * options_table[] too, for --help and the config file; test_options checks
 * that the two agree.
 * @target_delay_ns: standing-queue target for the minimum accept-queue
 *                   sojourn (CoDel's target; default 5 ms)
 * @interval_ns:     how long the minimum must stay above target before it is
 *                   overload (CoDel's interval; default 100 ms)
 * @depth_frac:      accept-queue depth over backlog that is overload (0.7)
 * @latency_target_ns: service p99 above this is overload; 0 = no explicit
 *                   target (then @latency_auto decides)
 * @latency_auto:    without @latency_target_ns, derive a target from the
 *                   latency the service shows when calm (the law is under
 *                   "The derived latency target" in latency_target.h); false: latency is not a
 *                   signal
 * @auto_k:          the derived target is baseline + spread x ((@auto_k -
 *                   1) x baseline ... (2; a fixed service time's spread is
 *                   1: @auto_k x baseline)
 * @auto_margin_ns:  ... + this) (5 ms) ...
 * @auto_min_ns:     ... but at least this (10 ms) ...
 * @auto_max_ns:     ... and at most this (5 s)
 * @auto_window_ns:  the baseline is the minimum of the points of this much
 *                   time (5 min), kept in AIMD_AUTO_SLOTS slots, so a point
 *                   expires 4.5 to 5 min after it was taken
 * @auto_point_ns:   a baseline point spans at least this long (1 s) ...
 * @auto_point_samples: ... and at least this many samples (100)
 * @auto_verdict_samples: a verdict on the derived target needs this many
 *                   samples (10), gathered over ticks if need be ...
 * @auto_stale_ns:   ... within this long (1 s); and without a verdict for
 *                   this long, latency drops out as a signal
 * @auto_interval_ns: the tick statistic must stay above the derived target
 *                   this long (500 ms) before it is overload
 * @alpha_per_sec:   additive increase per 100 ms while the limit binds (SYN/s);
 *                   0 = 1 % of the larger of the last good rate and the
 *                   recent peak accept rate, at least 1
 * @open_gain:       while the controller is open (aimd_state.open: no
 *                   evidence of overload since it started), a limit that
 *                   binds while what it admits completes is multiplied by
 *                   this per 100 ms (2: 10 000 to 1 M SYN/s in 0.7 s), not
 *                   raised by alpha: nothing says the service cannot take
 *                   it, and the completions still bound a flood of SYNs
 *                   that never complete (it stops within open_gain x what
 *                   completes over complete_frac). 1 = additive as after
 *                   an overload
 * @open_floor:      while open, SYNs admitted above this rate (--rate; 10 000)
 *                   that do not complete (less than complete_frac of them
 *                   for @open_strikes ticks in a row, 3: a client's
 *                   handshake may take a tick or two) are a flood, not a
 *                   service's demand: the limit falls to the larger of
 *                   this and open_gain x the recent peak of completed
 *                   handshakes, and stays open (no overload was seen), so
 *                   it climbs again as soon as what it admits completes.
 *                   0 = no such guard
 * @beta:            multiplicative decrease per 100 ms of overload (0.95)
 * @min_rate:        the limit never goes below this (SYN/s)
 * @max_rate:        ... nor above this (SYN/s)
 * @ramp:            recovery stages, fractions of the last good rate, the
 *                   last one 1.0 (default 0.1, 0.5, 1.0)
 * @nr_stages:       entries used in @ramp; 0 = no ramp
 * @stage_hold_ns:   how long each stage is held (default 1 s)
 * @tick_ns:         the nominal tick (--tick-ms); a tick whose measured
 *                   length (aimd_signals.dt_ns) is unknown is taken as this
 * @good_cap:        an overload far above the service's recent peak accept
 *                   rate cuts the limit to this many times that peak in one
 *                   step (1.5)
 * @ramp_cap:        an episode's last good rate, which the ramp's last stage
 *                   aims at, is at most this many times that peak (1.0):
 *                   the peak accept rate of a saturated service is its
 *                   capacity, and the additive climb probes above it
 * @served_floor:    an overload with latency among its reasons cuts no
 *                   lower than this fraction of the recent peak of requests
 *                   answered per second (1.0; 0 = no floor): the samples
 *                   lag the queue by its length, so the latency stays high
 *                   for a while after the cut that ends the overload, and
 *                   cutting all along would empty the service; and a
 *                   service that answers everything it gets, slowly, is
 *                   not helped by refusing some of it. The peak decays
 *                   (@peak_decay), so a service that really got slower
 *                   is followed down, by half every 7 s. The floor is
 *                   lowered by the drain factor (below), and taken in
 *                   connections: divided by the requests per connection
 *                   (req_per_conn.h)
 * @drain_ns:        the drain horizon (1 s; 0 = no drain): while latency is
 *                   above target by E, the requests queued behind that
 *                   excess are about E x the served rate (Little), and
 *                   admitting d = 1 - E / @drain_ns of the served rate
 *                   drains them in @drain_ns. During a latency overload the
 *                   floor above and the one-step cap (@good_cap) are both
 *                   scaled by d: a latency just above target cuts to what
 *                   is served; a queue of the clients' whole patience is
 *                   cut below it at once, and drains, where a limit held
 *                   at the served rate keeps it standing (measured in
 *                   docs/control-loop.md).
 *                   The drain runs once an episode, from the served peak
 *                   it began with, for twice the time it needs (E / (1 -
 *                   d), at least @drain_ns; E and d as it began): a queue
 *                   is gone by then. Then:
 *                   - the excess grew by a quarter and
 *                     AIMD_DRAIN_GREW_NS: the drain was too shallow (its
 *                     served peak stood above what the service serves);
 *                     it begins again from the excess and peak of then;
 *                   - the excess fell to AIMD_DRAIN_FELL of its start or
 *                     below: the queue goes with the drain, which was too
 *                     short; it begins again likewise (a queue the drain
 *                     only halved, read as a slower service, stood at
 *                     the served rate for the rest of the episode);
 *                   - the excess grew under the drain as above and fell
 *                     from that peak to AIMD_DRAIN_FELL of it or below:
 *                     the latency lags the queue by the queue's length,
 *                     so a drain begun just above the target sees the
 *                     queue it began with at its height in mid-drain,
 *                     and what fell after went with the drain; it begins
 *                     again likewise (read as a slower service, the
 *                     limit returned to the served peak and held the
 *                     queue standing at the clients' patience);
 *                   - otherwise it is spent. A latency that stayed while
 *                     the service answered what it was asked
 *                     (@drain_answered) is a service that got slower for
 *                     good: the rate returns to the served peak it began
 *                     with, in connections (times the handshakes completed
 *                     per request answered, at most 1 and at most 1 / the
 *                     requests per connection of req_per_conn.h; none
 *                     known, no return), where the drain would have followed the
 *                     served rate, which follows what is admitted, down to
 *                     @min_rate. On keep-alive connections one SYN brings
 *                     many requests: a SYN limit at the request rate
 *                     would let many times the work in.
 * @drain_min:       d is at least this (0.5): the excess is measured on
 *                   requests that entered a queue length ago, so the drain
 *                   runs that much too long, and never empties the service
 * @drain_answered:  a spent drain returns the rate only if at least this
 *                   fraction (0.95) of its samples were answered: a
 *                   latency that stayed while clients gave up is a queue
 *                   the SYN limit does not reach (requests on keep-alive
 *                   connections, which reconnect as their requests time
 *                   out), not a slower service
 * @shallow_frac:    an episode that ends with only the ramp's last stage
 *                   above it, and at least this fraction of that stage's
 *                   rate (0.9), was a shallow cut: the additive climb takes
 *                   over; a deeper one holds the last stage
 * @peak_decay:      decay of that peak per 100 ms of measured time (0.99: a
 *                   half-life of ~7 s whatever the tick)
 * @stall_ns:        how long the queue must hold connections with none
 *                   leaving before it is a stall (300 ms): a slow service
 *                   may take nothing in one tick and still be working
 * @complete_frac:   the limit grows only while at least this fraction of
 *                   the admitted SYNs complete their handshake (0.8): a limit
 *                   that binds on SYNs that never complete (a spoofed flood)
 *                   must not climb, even while real clients complete part
 *                   of it (a flood on a class with real clients at half
 *                   its limit, before the class verified); real clients
 *                   complete nearly all their admitted SYNs
 * @probe_frac:      a calm probe ("Calm probe" in latency_target.h) admits
 *                   this fraction of the served rate (0.5) ...
 * @probe_min_ns:    ... for at least this long (300 ms) ...
 * @probe_max_ns:    ... and at most this long (3 s)
 * @probe_every_ns:  while the limit binds, a calm point older than this
 *                   (150 s, half of @auto_window_ns) is renewed by a probe,
 *                   so the window never fills with points of a controlled
 *                   overload
 * @fresh_ns:        a resumed state written longer ago than this (3 s) is
 *                   history, not the present: its mode, verdicts and peaks
 *                   are not resumed (aimd_import())
 * @headroom_gain:   the additive step is this many times larger (4) while
 *                   the derived target's last verdict is within a quarter
 *                   of the way from the baseline to the target: nothing
 *                   waits inside the service, and a limit cut below its
 *                   capacity climbs back in a second rather than in five
 * @auto_jump:       a verdict above this many times the derived target (2)
 *                   is overload at once, without auto_interval_ns: a queue
 *                   that grew this far within a verdict is no burst, and
 *                   waiting the interval let it reach the clients' patience;
 *                   only a verdict of one tick's samples: one gathered over
 *                   ticks is a trickle (a few slow samples a second), which
 *                   waits the interval
 */
struct aimd_params {
	__u64 target_delay_ns;
	__u64 interval_ns;
	double depth_frac;
	__u64 latency_target_ns;
	bool latency_auto;
	double auto_k;
	__u64 auto_margin_ns;
	__u64 auto_min_ns;
	__u64 auto_max_ns;
	__u64 auto_window_ns;
	__u64 auto_point_ns;
	__u64 auto_point_samples;
	__u64 auto_verdict_samples;
	__u64 auto_stale_ns;
	__u64 auto_interval_ns;
	double alpha_per_sec;
	double open_gain;
	double open_floor;
	unsigned int open_strikes;
	double beta;
	double min_rate;
	double max_rate;
	double ramp[AIMD_MAX_STAGES];
	int nr_stages;
	__u64 stage_hold_ns;
	__u64 tick_ns;
	double good_cap;
	double ramp_cap;
	double served_floor;
	__u64 drain_ns;
	double drain_min;
	double drain_answered;
	double shallow_frac;
	double peak_decay;
	double complete_frac;
	__u64 stall_ns;
	double probe_frac;
	__u64 probe_min_ns;
	__u64 probe_max_ns;
	__u64 probe_every_ns;
	__u64 fresh_ns;
	double headroom_gain;
	double auto_jump;
};

/**
 * struct aimd_signals - what one tick measured. A signal whose source is not
 * available has its have_* flag false and is ignored.
 * @have_sojourn:   accept-queue sojourn samples are collected
 * @sojourn_count:  connections accepted in the tick (with a sojourn sample)
 * @sojourn_min_ns: the smallest sojourn of the tick (valid if count > 0)
 * @have_depth:     accept-queue depth is read
 * @depth:          connections waiting in the accept queue(s)
 * @backlog:        the accept-queue limit(s)
 * @overflows:      ListenOverflows + ListenDrops added in the tick
 * @have_latency:   service-latency samples arrived in the tick
 * @latency_p99_ns: their 99th percentile
 * @latency_count:  how many samples arrived in the tick
 * @latency_mid_ns: the mean of their middle 80 % (a trimmed mean), the
 *                  statistic of the derived target
 * @latency_min_ns: the smallest of them (0: not measured)
 * @latency_agg:    the samples themselves (NULL: not given; then the
 *                  derived target measures no spread)
 * @latency_served: of the samples, requests the service answered (not
 *                  given up by the client, not failed at the upstream)
 * @have_conn_seq:  the samples say which request of its connection each
 *                  was (nginx $connection_requests in the log, `cr=`)
 * @latency_next:   of the samples, requests that followed another on their
 *                  connection (cr > 1), answered or not (req_per_conn.h)
 * @demand:         SYNs offered per second, all classes
 * @dt_ns:          the measured length of the tick; 0 = params->tick_ns
 * @have_queue_left: @queue_left is measured
 * @queue_left:     connections that left the accept queue in the tick by
 *                  any path (accept(), io_uring, a reset): queued minus the
 *                  growth of the depth. A stall is judged only with it,
 *                  and only while it is zero.
 * @have_completed: @completed is measured
 * @completed:      handshakes completed (SYN_RECV -> ESTABLISHED) in the tick
 * @admitted_per_sec: SYNs the buckets admitted per second, all classes
 */
struct aimd_signals {
	bool have_sojourn;
	__u64 sojourn_count;
	__u64 sojourn_min_ns;
	bool have_depth;
	__u64 depth;
	__u64 backlog;
	__u64 overflows;
	bool have_latency;
	__u64 latency_p99_ns;
	__u64 latency_count;
	__u64 latency_mid_ns;
	__u64 latency_min_ns;
	const struct sample_agg *latency_agg;
	__u64 latency_served;
	bool have_conn_seq;
	__u64 latency_next;
	double demand;
	__u64 dt_ns;
	bool have_queue_left;
	__u64 queue_left;
	bool have_completed;
	__u64 completed;
	double admitted_per_sec;
};

/* The drain of an overload episode (aimd_params.drain_ns). */
enum aimd_drain {
	AIMD_DRAIN_NONE = 0, /* not begun in this episode */
	AIMD_DRAINING = 1,   /* below the served rate, until drain_end_ns */
	AIMD_DRAIN_SPENT = 2, /* over for this episode */
};

enum aimd_mode {
	AIMD_STEADY = 0,     /* no overload; additive increase while binding */
	AIMD_OVERLOAD = 1,   /* multiplicative decrease every tick */
	AIMD_RECOVERING = 2, /* ramp stages after an overload episode */
};

/* Where the requests per connection come from (req_per_conn.h). */
enum aimd_rpc_src {
	AIMD_RPC_NONE = 0,  /* not known: 1 */
	AIMD_RPC_SHAPE = 1, /* the log's session shape (`cr=`) */
	AIMD_RPC_CALM = 2,  /* requests over handshakes on calm ticks */
};

/* Why the last tick was judged overloaded (bit mask), for the status line. */
enum aimd_reason {
	AIMD_WHY_SOJOURN = 1 << 0,
	AIMD_WHY_DEPTH = 1 << 1,
	AIMD_WHY_OVERFLOW = 1 << 2,
	AIMD_WHY_LATENCY = 1 << 3,
	AIMD_WHY_STALL = 1 << 4,
};

/**
 * struct aimd_auto - the state of the derived latency target.
 * @point_sum:      sum of mid x count over the baseline point being taken
 * @point_n:        samples in it
 * @point_start_ns: when it began
 * @point_agg:      its samples (the spread of the point)
 * @slot_min_ns:    per slot, the smallest point that ended in it
 * @slot_spread:    per slot, the spread (agg_spread()) of the smallest
 *                  point that ended in it and measured one ...
 * @slot_spread_ns: ... and that point (0 = none)
 * @slot_epoch:     per slot, 1 + its index in time (now / slot length);
 *                  0 = empty
 * @verdict_sum:    sum of mid x count over the verdict being gathered
 * @verdict_n:      samples in it
 * @verdict_start_ns: when it began
 * @last_verdict_ns: when the last verdict was made (0 = none)
 * @last_mid_ns:    the statistic of that verdict
 * @above_since_ns: when verdicts above target began, plus auto_interval_ns;
 *                  0 while they are below
 * @over:           the last verdict found overload
 * @baseline_ns:    the baseline in force (0 = none yet)
 * @spread:         the spread factor in force, within [1, AIMD_SPREAD_MAX]
 *                  (0 = no baseline yet) ...
 * @spread_ns:      ... and the point it was measured on (0 = none was: 1)
 * @target_ns:      the derived target in force (0 = none: still learning)
 * @point_last_mid_ns: the statistic of the point's last tick of 5 samples
 *                  or more (the level a probe begun then starts from)
 * @point_step_sum: sum of mid x count over the step being gathered (ticks
 *                  until half auto_point_samples) ...
 * @point_step_n:   ... and its samples
 * @point_first_step_ns: the statistic of the point's first step ...
 * @point_last_step_ns: ... and of its last: a statistic of a few samples
 *                  doubles by chance (a bimodal service)
 * @point_short_sum: sum of mid x count over the short step being gathered
 *                  (ticks until 3 samples) ...
 * @point_short_n:  ... its samples ...
 * @point_short_min_ns: ... and their smallest (0: none measured)
 * @point_first_short_ns: the statistic of the point's first short step,
 * @point_first_short_at_ns: ... when it ended ...
 * @point_last_short_ns: ... and of its last ...
 * @point_last_short_min_ns: ... its smallest sample ...
 * @point_last_short_at_ns: ... when it ended: the latency climbing with
 *                  the gap, before the coverage is known ("Coverage" in
 *                  latency_target.h)
 * @point_completed: handshakes completed ...
 * @point_answered: ... and requests answered during the point
 * @point_pressure: evidence of pressure during the point ("Calm probe" in
 *                  latency_target.h)
 * @point_binding:  the limit bound (demand >= limit) during the point
 * @point_gap:      handshakes outran the answers during the point by more
 *                  than the feed's coverage says ("Coverage" in
 *                  latency_target.h)
 * @point_over:     a verdict during the point found latency above target
 * @calm_at_ns:     when the newest calm point was taken (0 = none)
 * @probing:        a calm probe runs
 * @probe_done:     it ended on this tick (aimd_update() applies its rate)
 * @probe_start_ns: when it began
 * @probe_rate:     the limit it holds: AIMD_PROBE_TRICKLE x @probe_hold
 *                  until its first level, @probe_hold from then on
 * @probe_hold:     probe_frac x the highest served rate seen since it began
 *                  (@probe_served), in connections, at most @probe_hold_cap
 * @probe_hold_cap: the limit as it began
 * @probe_served0:  the served rate as it began (requests/s)
 * @probe_min_ns:   the lowest level seen during it (0 = none): a step's
 *                  statistic of requests sent during the probe and
 *                  answered
 * @probe_lag_ns:   the level it began at: answers that come sooner than
 *                  this after its start arrived before it
 * @probe_flat:     ticks in a row that no longer fall
 * @probe_flat_sum: sum of mid x count over them ...
 * @probe_flat_n:   ... and their samples
 * @probe_pool_sum: sum of mid x count over the levels in a row being
 *                  pooled (up to AIMD_PROBE_POOL samples) ...
 * @probe_pool_n:   ... and their samples
 * @probe_pool_min_ns: the lowest mean of such a pool (0 = none yet)
 * @probe_pool_spread: its spread (0 = not measured)
 * @probe_pool_last_ns: the mean of the last pool of the levels in a row
 *                  (0 = none yet) ...
 * @probe_pool_last_n: ... its samples ...
 * @probe_pool_last_spread: ... and spread
 * @probe_pool_alike: the last two pools in a row told apart by no more
 *                  than their noise (the queue is gone: it ends the probe)
 * @probe_step_agg: the samples of the step being gathered, of the pool
 *                  being gathered (@probe_pool_agg) and of the flat run
 *                  (@probe_flat_agg): the spread of the point the probe
 *                  ends with
 * @probe_step_sum: sum of mid x count over the step being gathered (ticks
 *                  until 3 samples) ...
 * @probe_step_n:   ... its samples ...
 * @probe_step_ns:  ... and its length
 * @probe_served:   the highest served rate seen during it (requests/s)
 * @probe_per_conn: handshakes per request answered as it began (at most 1),
 *                  to resume in connections
 * @probe_step_completed: handshakes completed ...
 * @probe_step_answered: ... and requests answered over the step being
 *                  gathered, and over the flat steps (@probe_flat_completed,
 *                  @probe_flat_answered): the feed's coverage once the
 *                  queue is gone
 * @probe_wait:     its last step still showed the queue from before it:
 *                  no level, or a level still falling faster than flat
 * @probe_busy_min_ns: the lowest statistic of a step that was no level only
 *                  because the service was busy (it ends with it if no
 *                  level came at all)
 * @probes:         probes run since start
 * @cover:          the feed's coverage: requests answered per handshake
 *                  completed over the newest calm point or the flat end of
 *                  a probe, taken as 1 from AIMD_COVER_WHOLE up; 0 = not
 *                  known yet ("Coverage" in latency_target.h)
 */
struct aimd_auto {
	double point_sum;
	__u64 point_n;
	__u64 point_start_ns;
	struct sample_agg point_agg;
	__u64 slot_min_ns[AIMD_AUTO_SLOTS];
	__u64 slot_epoch[AIMD_AUTO_SLOTS];
	double slot_spread[AIMD_AUTO_SLOTS];
	__u64 slot_spread_ns[AIMD_AUTO_SLOTS];
	double verdict_sum;
	__u64 verdict_n;
	__u64 verdict_start_ns;
	__u64 last_verdict_ns;
	__u64 last_mid_ns;
	__u64 above_since_ns;
	bool over;
	__u64 baseline_ns;
	double spread;
	__u64 spread_ns;
	__u64 target_ns;
	__u64 point_last_mid_ns;
	double point_step_sum;
	__u64 point_step_n;
	__u64 point_first_step_ns;
	__u64 point_last_step_ns;
	double point_short_sum;
	__u64 point_short_n;
	__u64 point_first_short_ns;
	__u64 point_first_short_at_ns;
	__u64 point_last_short_ns;
	__u64 point_last_short_at_ns;
	__u64 point_short_min_ns;
	__u64 point_last_short_min_ns;
	double point_completed;
	double point_answered;
	bool point_pressure;
	bool point_binding;
	bool point_gap;
	bool point_over;
	__u64 calm_at_ns;
	bool probing;
	bool probe_done;
	__u64 probe_start_ns;
	double probe_rate;
	double probe_hold;
	double probe_hold_cap;
	double probe_served0;
	__u64 probe_min_ns;
	__u64 probe_lag_ns;
	int probe_flat;
	double probe_flat_sum;
	__u64 probe_flat_n;
	double probe_pool_sum;
	__u64 probe_pool_n;
	__u64 probe_pool_min_ns;
	double probe_pool_spread;
	__u64 probe_pool_last_ns;
	__u64 probe_pool_last_n;
	double probe_pool_last_spread;
	bool probe_pool_alike;
	struct sample_agg probe_step_agg;
	struct sample_agg probe_pool_agg;
	struct sample_agg probe_flat_agg;
	double probe_step_sum;
	__u64 probe_step_n;
	__u64 probe_step_ns;
	double probe_served;
	double probe_per_conn;
	double probe_step_completed;
	double probe_step_answered;
	double probe_flat_completed;
	double probe_flat_answered;
	bool probe_wait;
	__u64 probe_busy_min_ns;
	__u64 probes;
	double cover;
};

/**
 * struct aimd_state - the controller's memory between ticks.
 * @rate:          the current limit (SYN/s)
 * @mode:          enum aimd_mode
 * @why:           enum aimd_reason bits of the last overload verdict
 * @last_good:     the limit before the current overload episode began; the
 *                 ramp climbs back towards it
 * @from_calm:     the episode began while the limit did not bind (demand
 *                 below it): from calm, not from a limit at capacity
 * @floor_rate:    the limit when the episode ended (the ramp never goes
 *                 below it)
 * @held_rate:     the rate of the last ramp stage that held its time without
 *                 overload (floor_rate before the first has)
 * @stage:         index into params->ramp while recovering
 * @stage_end_ns:  when the current stage is done
 * @above_since_ns: CoDel's first_above_time: when the minimum sojourn went
 *                 above target, plus interval; 0 while it is below
 * @prev_min_ns:   the last tick's minimum sojourn, to see a queue draining
 *                 (unknown, UINT64_MAX, after a tick with no accepts)
 * @peak_accept:   the recent peak of the accept rate (conn/s), decaying:
 *                 what the service has shown it can take
 * @peak_completed: the recent peak of handshakes completed per second
 *                 (aimd_signals.completed), decaying like @peak_accept:
 *                 what the service took where no accept rate is measured
 *                 (no sojourn probes); not pinned, a restart relearns it
 *                 in a tick
 * @peak_served:   the recent peak of the requests answered per second
 *                 (aimd_signals.latency_served), decaying like @peak_accept:
 *                 what a service that accepts every connection at once (a
 *                 proxy) has shown it can serve, where its accept rate
 *                 shows only what it was offered
 * @episode_latency: the current overload episode had latency among its
 *                 reasons, or a calm probe that measured a served rate
 *                 ended it (what the service showed it takes is then
 *                 @peak_served, see shown_peak())
 * @lat_excess_ns: how far latency was above its target on the last tick
 *                 judged overloaded on latency (0 on the others): the
 *                 drain factor (aimd_params.drain_ns)
 * @drain:         enum aimd_drain: where the episode's drain is
 * @drain_end_ns:  when it ends
 * @drain_ref:     the served peak when it began: while it lasts, the floor
 *                 and the cap are taken from it if the peak fell below it
 *                 (the peak follows what is admitted when there is no
 *                 queue, and d x a falling peak would spiral down)
 * @drain_excess0_ns: the excess latency it began with
 * @drain_excess_peak_ns: the highest excess latency since it began
 * @drain_samples: latency samples ...
 * @drain_served:  ... requests answered (aimd_signals.latency_served) ...
 * @drain_completed: ... and handshakes completed since the drain began:
 *                 requests per connection, to turn the served peak into
 *                 connections when the drain is spent
 * @drain_conns_known: every tick of the drain measured the handshakes
 * @stuck:         inside a run of ticks in which connections waited and
 *                 none left the queue
 * @stuck_since_ns: the start of that run
 * @served_n:      requests answered in each of the last AIMD_SERVED_SLOTS
 *                 ticks ...
 * @served_dt:     ... and the ticks' lengths
 * @served_i:      the slot of the next tick
 * @served_ticks:  ticks since the first latency sample (at most
 *                 AIMD_SERVED_SLOTS): the ticks before it do not count
 * @served_rate:   their sum over their time: the served rate (requests/s)
 * @served_recent: the same over the last AIMD_RECENT_SLOTS ticks
 * @conn_n:        handshakes completed in the same ticks (-1: not known)
 * @rpc_answered:  requests answered ...
 * @rpc_followers: ... and requests that followed another on their
 *                 connection, of the samples that say so, decaying every
 *                 tick: the session shape (req_per_conn.h) ...
 * @rpc_time:      ... the time they span ...
 * @rpc_wait:      ... and the latency of their samples (seconds, summed)
 * @rpc_wait_n:    ... over this many samples
 * @rpc_calm_served: requests answered ...
 * @rpc_calm_conns: ... and handshakes completed on calm ticks, decaying
 *                 over those ticks only ...
 * @rpc_calm_ns:   ... and the calm time they were measured over; none of
 *                 the five is pinned: a restart relearns them
 * @lat:           the derived latency target (its baseline pinned, see
 *                 aimd_export())
 * @open:          no evidence of overload since the controller started
 *                 (aimd_open()): until the first overload verdict or calm
 *                 probe, growth is multiplicative (aimd_params.open_gain)
 * @unfinished:    while open, the ticks in a row whose admitted SYNs above
 *                 aimd_params.open_floor did not complete
 * @at_max:        the last tick found the limit binding at max_rate while
 *                 what it admitted completed: a service that is healthy
 *                 by every signal is shed by the ceiling alone (the
 *                 daemon warns, and exports it)
 * @vsum, @vn, @vstart_ns, @vabove_ns, @vover: the explicit target's
 *                 verdict: p99 weighted by samples over at least
 *                 auto_verdict_samples within auto_stale_ns, above the
 *                 target for auto_interval_ns before it is overload
 */
struct aimd_state {
	double rate;
	enum aimd_mode mode;
	unsigned int why;
	double last_good;
	bool from_calm;
	double floor_rate;
	double held_rate;
	int stage;
	__u64 stage_end_ns;
	__u64 above_since_ns;
	__u64 prev_min_ns;
	double peak_accept;
	double peak_completed;
	double peak_served;
	bool episode_latency;
	__u64 lat_excess_ns;
	enum aimd_drain drain;
	__u64 drain_end_ns;
	double drain_ref;
	__u64 drain_excess0_ns;
	__u64 drain_excess_peak_ns;
	double drain_samples;
	double drain_served;
	double drain_completed;
	bool drain_conns_known;
	bool stuck;
	__u64 stuck_since_ns;
	double served_n[AIMD_SERVED_SLOTS];
	__u64 served_dt[AIMD_SERVED_SLOTS];
	int served_i;
	int served_ticks;
	double served_rate;
	double served_recent;
	double conn_n[AIMD_SERVED_SLOTS];
	double rpc_answered;
	double rpc_followers;
	double rpc_time;
	double rpc_wait;
	double rpc_wait_n;
	double rpc_calm_served;
	double rpc_calm_conns;
	__u64 rpc_calm_ns;
	struct aimd_auto lat;
	bool open;
	unsigned int unfinished;
	bool at_max;
	double vsum;
	__u64 vn;
	__u64 vstart_ns;
	__u64 vabove_ns;
	__u64 vlast_ns;
	__u64 vval_ns;
	bool vover;
};

/* What the service serves, for a cut: the decaying peak of the served
 * rate, or the rate of the last few ticks where that is higher (an
 * overload that began within the second: the second's rate still holds
 * the calm before it, which asked less of the service). */
static inline double aimd_served_now(const struct aimd_state *s)
{
	return s->served_recent > s->peak_served ? s->served_recent : s->peak_served;
}

#endif /* SHEDD_AIMD_TYPES_H */
