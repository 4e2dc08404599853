/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* aimd.h - the controller: finds the admitted SYN rate from what the service
 * experiences (accept-queue sojourn, depth, overflows, service latency).
 * Pure: no I/O, no clock; time comes in as an argument, so it is tested in
 * simulated time.
 */
#ifndef SHEDD_AIMD_H
#define SHEDD_AIMD_H

#include <stdbool.h>
#include <linux/types.h>

#define AIMD_MAX_STAGES 8
/* alpha and beta are gains per this much time (100 ms, the default tick):
 * a tick of length dt applies them dt / 100 ms times, so --tick-ms changes
 * how often the law runs, not how fast it moves. */
#define AIMD_GAIN_PERIOD_NS 100000000.0

/**
 * struct aimd_params - the controller's knobs, with their units.
 * @target_delay_ns: standing-queue target for the minimum accept-queue
 *                   sojourn (CoDel's target; default 5 ms)
 * @interval_ns:     how long the minimum must stay above target before it is
 *                   overload (CoDel's interval; default 100 ms)
 * @depth_frac:      accept-queue depth over backlog that is overload (0.7)
 * @latency_target_ns: service p99 above this is overload; 0 = not used
 * @alpha_per_sec:   additive increase per 100 ms while the limit binds (SYN/s);
 *                   0 = 1 % of the larger of the last good rate and the
 *                   recent peak accept rate, at least 1
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
 * @peak_decay:      decay of that peak per 100 ms of measured time (0.99: a
 *                   half-life of ~7 s whatever the tick)
 * @stall_ns:        how long the queue must hold connections with none
 *                   leaving before it is a stall (300 ms): a slow service
 *                   may take nothing in one tick and still be working
 * @complete_frac:   the limit grows only while at least this fraction of
 *                   the admitted SYNs complete their handshake (0.5): a limit
 *                   that binds only on SYNs that never complete (a spoofed
 *                   flood) must not climb
 */
struct aimd_params {
	__u64 target_delay_ns;
	__u64 interval_ns;
	double depth_frac;
	__u64 latency_target_ns;
	double alpha_per_sec;
	double beta;
	double min_rate;
	double max_rate;
	double ramp[AIMD_MAX_STAGES];
	int nr_stages;
	__u64 stage_hold_ns;
	__u64 tick_ns;
	double good_cap;
	double ramp_cap;
	double peak_decay;
	double complete_frac;
	__u64 stall_ns;
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
	double demand;
	__u64 dt_ns;
	bool have_queue_left;
	__u64 queue_left;
	bool have_completed;
	__u64 completed;
	double admitted_per_sec;
};

enum aimd_mode {
	AIMD_STEADY = 0,     /* no overload; additive increase while binding */
	AIMD_OVERLOAD = 1,   /* multiplicative decrease every tick */
	AIMD_RECOVERING = 2, /* ramp stages after an overload episode */
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
 * struct aimd_state - the controller's memory between ticks.
 * @rate:          the current limit (SYN/s)
 * @mode:          enum aimd_mode
 * @why:           enum aimd_reason bits of the last overload verdict
 * @last_good:     the limit before the current overload episode began; the
 *                 ramp climbs back towards it
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
 * @stuck:         inside a run of ticks in which connections waited and
 *                 none left the queue
 * @stuck_since_ns: the start of that run
 */
struct aimd_state {
	double rate;
	enum aimd_mode mode;
	unsigned int why;
	double last_good;
	double floor_rate;
	double held_rate;
	int stage;
	__u64 stage_end_ns;
	__u64 above_since_ns;
	__u64 prev_min_ns;
	double peak_accept;
	bool stuck;
	__u64 stuck_since_ns;
};

void aimd_defaults(struct aimd_params *p);
void aimd_init(struct aimd_state *s, const struct aimd_params *p, double start_rate);

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
 *               step, a near one by beta. An episode that starts in
 *               steady state remembers last_good = rate, one that interrupts
 *               a ramp takes last_good = held_rate.
 *   draining:   out of steady state, while the only signal is the sojourn
 *               and its minimum is falling, the queue is answering the last
 *               decrease or draining after a stall: the rate and the ramp
 *               stage are held, neither cut nor abandoned.
 *   episode end: last_good = min(last_good, ramp_cap * peak_accept): never
 *               aim above what the service has recently shown it takes (a
 *               start far above capacity, a stall of the application):
 *               a ramp aimed at 1.5x the peak overloaded the server a
 *               second time after every fresh start.
 *   after one:  rate = max(floor_rate, ramp[k] * last_good) for stage k,
 *               each held stage_hold_ns, abandoned at once on overload.
 *               Stages at or below where the episode ended are skipped; if
 *               only the last is left the cut was shallow, and the additive
 *               climb takes over (the ramp is for a service that went down).
 *   otherwise:  rate = min(max_rate, rate + alpha) only while the limit
 *               binds (demand >= rate) and the admitted SYNs turn into
 *               connections (completed/s >= complete_frac x min(admitted/s,
 *               rate)); unchanged otherwise, so the limit cannot creep up
 *               while nobody needs it, nor on a flood of SYNs that never
 *               complete.
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
 * The CoDel timer starts afresh. Returns 0, or -1 (and leaves @s alone) if
 * the record was never written, has another version or makes no sense.
 */
int aimd_import(const struct aimd_params *p, struct aimd_state *s,
		const struct shedd_ctl_state *in, __u64 now_ns);

#endif /* SHEDD_AIMD_H */
