// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_aimd.c - the controller (user/core/aimd.c) in simulated time: the overload
 * verdict of each signal, the step response, no growth while the limit does
 * not bind, the bounds, the ramp stages and their abort, the stall guard,
 * the measured tick length, no wind-up on SYNs that never complete, no
 * open-loop ramp without a delay signal; the explicit target's samples and
 * interval, the served rate over a second, auto_jump, headroom_gain, and
 * the age and version of a resumed record.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <math.h>

#include "aimd.h"
#include "shedd.h"

#define MS 1000000ULL
#define TICK (100 * MS)

static struct aimd_params params(void)
{
	struct aimd_params p;

	aimd_defaults(&p);
	p.min_rate = 10;
	p.max_rate = 10000;
	p.alpha_per_sec = 50;
	p.beta = 0.9; /* the law under test, whatever the default */
	p.interval_ns = 100 * MS;
	return p;
}

/* A calm tick: short sojourn, empty queue, demand as given, and every
 * offered SYN completes its handshake. */
static struct aimd_signals calm(double demand)
{
	return (struct aimd_signals){
		.have_sojourn = true, .sojourn_count = 100, .sojourn_min_ns = 1 * MS,
		.have_depth = true, .depth = 0, .backlog = 128, .demand = demand,
		.dt_ns = TICK, .have_completed = true,
		.completed = (__u64)(demand * (double)TICK / 1e9),
	};
}

/* A tick with a standing queue: the minimum sojourn is 50 ms. */
static struct aimd_signals standing(double demand)
{
	struct aimd_signals s = calm(demand);

	s.sojourn_min_ns = 50 * MS;
	return s;
}

static void sojourn_must_stay_above_target_for_an_interval(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig = standing(5000);

	aimd_init(&s, &p, 1000);
	/* First tick above target only starts CoDel's timer... */
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 1 * TICK), 0);
	/* ...still inside the interval... */
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 1 * TICK + 50 * MS), 0);
	/* ...a whole interval above target is a standing queue. */
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 2 * TICK), AIMD_WHY_SOJOURN);
	/* One tick below target resets the timer. */
	sig = calm(5000);
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 3 * TICK), 0);
	sig = standing(5000);
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 4 * TICK), 0);
}

static void each_signal_is_overload(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig;

	aimd_init(&s, &p, 1000);
	sig = calm(0);
	sig.depth = 90; /* 70 % of 128 is 89.6 */
	assert_int_equal(aimd_overloaded(&p, &s, &sig, TICK), AIMD_WHY_DEPTH);
	sig.depth = 89;
	assert_int_equal(aimd_overloaded(&p, &s, &sig, TICK), 0);
	sig = calm(0);
	sig.overflows = 1;
	assert_int_equal(aimd_overloaded(&p, &s, &sig, TICK), AIMD_WHY_OVERFLOW);
	/* Latency counts only with a target... */
	sig = calm(0);
	sig.have_latency = true;
	sig.latency_count = 20;
	sig.latency_served = 20;
	sig.latency_p99_ns = 900 * MS;
	assert_int_equal(aimd_overloaded(&p, &s, &sig, TICK), 0);
	/* ... and, explicit, once it stayed above it auto_interval_ns. */
	p.latency_target_ns = 200 * MS;
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 2 * TICK), 0);
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 2 * TICK + p.auto_interval_ns),
			 AIMD_WHY_LATENCY);
	/* Signals that are not there say nothing. */
	sig = (struct aimd_signals){ .depth = 1000, .backlog = 10, .demand = 1 };
	assert_int_equal(aimd_overloaded(&p, &s, &sig, TICK), 0);
}

static void stall_guard(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig = calm(100);

	aimd_init(&s, &p, 1000);
	/* Nobody accepts while connections wait, and none left the queue:
	 * the application stopped. */
	sig.sojourn_count = 0;
	sig.depth = 3;
	sig.have_queue_left = true;
	sig.queue_left = 0;
	/* ...for stall_ns (300 ms): a slow service may take nothing in one
	 * tick and still be working. */
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 1 * TICK), 0);
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 2 * TICK), 0);
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 3 * TICK), AIMD_WHY_STALL);
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 4 * TICK), AIMD_WHY_STALL);
	/* One connection leaving ends the run. */
	sig.queue_left = 1;
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 5 * TICK), 0);
	sig.queue_left = 0;
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 6 * TICK), 0);
	/* Not knowing what left the queue (the first ticks): no verdict. */
	sig.have_queue_left = false;
	for (int t = 7; t < 20; t++)
		assert_int_equal(aimd_overloaded(&p, &s, &sig, (__u64)t * TICK), 0);
	sig.have_queue_left = true;
	/* No accepts and nothing waiting is just a quiet tick. */
	sig.depth = 0;
	assert_int_equal(aimd_overloaded(&p, &s, &sig, TICK), 0);
}

static void step_response_is_multiplicative_decrease(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig = calm(5000);
	__u64 t = TICK;
	int i;

	aimd_init(&s, &p, 1000);
	sig.overflows = 10;
	for (i = 0; i < 5; i++, t += TICK)
		aimd_update(&p, &s, &sig, t);
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	/* 1000 * 0.9^5 */
	assert_float_equal(s.rate, 590.49, 1e-6);
	assert_float_equal(s.last_good, 1000, 1e-9);
	/* ...down to min_rate and no further. */
	for (i = 0; i < 100; i++, t += TICK)
		aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, p.min_rate, 1e-9);
}

static void no_growth_while_not_binding(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig = calm(300); /* demand far below the limit */
	__u64 t = TICK;
	int i;

	aimd_init(&s, &p, 1000);
	for (i = 0; i < 1000; i++, t += TICK)
		aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 1000, 1e-9);
	assert_int_equal(s.mode, AIMD_STEADY);
	/* Binding: + alpha per tick, up to max_rate. */
	sig = calm(1e9);
	aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 1050, 1e-9);
	for (i = 0; i < 1000; i++, t += TICK)
		aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, p.max_rate, 1e-9);
}

static void start_is_bounded(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;

	aimd_init(&s, &p, 1e9);
	assert_float_equal(s.rate, p.max_rate, 1e-9);
	aimd_init(&s, &p, 0);
	assert_float_equal(s.rate, p.min_rate, 1e-9);
}

static void ramp_climbs_in_stages(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals over = calm(5000), ok = calm(5000);
	__u64 t = TICK;
	int i;

	over.overflows = 1;
	over.sojourn_count = 1000; /* 10000 accepts/s: the episode cap is 15000 */
	aimd_init(&s, &p, 2000);
	for (i = 0; i < 30; i++, t += TICK) /* 2000 * 0.9^30 = 84.8 */
		aimd_update(&p, &s, &over, t);
	assert_float_equal(s.last_good, 2000, 1e-9);

	/* Overload ends: stage 1 is 10 % of the last good rate. */
	aimd_update(&p, &s, &ok, t);
	assert_int_equal(s.mode, AIMD_RECOVERING);
	assert_float_equal(s.rate, 200, 1e-9);
	/* Held for stage_hold_ns (1 s): no change for 9 more ticks. */
	for (i = 0; i < 9; i++) {
		t += TICK;
		aimd_update(&p, &s, &ok, t);
		assert_float_equal(s.rate, 200, 1e-9);
	}
	t += TICK;
	aimd_update(&p, &s, &ok, t);
	assert_float_equal(s.rate, 1000, 1e-9); /* 50 % */
	t += 10 * TICK;
	aimd_update(&p, &s, &ok, t);
	assert_float_equal(s.rate, 2000, 1e-9); /* 100 % */
	assert_int_equal(s.mode, AIMD_RECOVERING);
	t += 10 * TICK;
	aimd_update(&p, &s, &ok, t);
	assert_int_equal(s.mode, AIMD_STEADY);
	/* Steady again: additive increase while binding. */
	t += TICK;
	aimd_update(&p, &s, &ok, t);
	assert_float_equal(s.rate, 2050, 1e-9);
}

static void shallow_cut_climbs_without_a_ramp(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals over = calm(5000), ok = calm(5000);

	over.overflows = 1;
	over.sojourn_count = 1000;
	aimd_init(&s, &p, 1000);
	aimd_update(&p, &s, &over, TICK); /* 900: stages of 100 and 500 skipped */
	aimd_update(&p, &s, &ok, 2 * TICK);
	assert_int_equal(s.mode, AIMD_STEADY);
	assert_float_equal(s.rate, 900, 1e-9);
	aimd_update(&p, &s, &ok, 3 * TICK);
	assert_float_equal(s.rate, 950, 1e-9);
}

static void ramp_aims_no_higher_than_the_service_managed(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals over = calm(5000), ok = calm(5000);
	__u64 t = TICK;
	int i;

	/* Started far too high: the service accepts 400/s throughout (its
	 * peak decays by 1 % a tick, and is renewed every tick). */
	over.overflows = 1;
	over.sojourn_count = 40;
	ok.sojourn_count = 40;
	aimd_init(&s, &p, 10000);
	/* The first overloaded tick brings 10000 down to 1.5 x 400 at once,
	 * not to 9000. */
	aimd_update(&p, &s, &over, t);
	assert_float_equal(s.rate, 600, 1e-9);
	for (i = 0; i < 19; i++) { /* then by beta: 600 * 0.9^19 = 81 */
		t += TICK;
		aimd_update(&p, &s, &over, t);
	}
	t += TICK;
	aimd_update(&p, &s, &ok, t);
	/* last good = min(10000, 1.0 * 400) = 400, what the service took:
	 * stages 40 (skipped, below 81), 200, then 400; not 1000, 5000,
	 * 10000, nor 1.5 x 400 (which overloads it a second time). */
	assert_int_equal(s.mode, AIMD_RECOVERING);
	assert_float_equal(s.last_good, 400, 1e-9);
	assert_float_equal(s.rate, 200, 1e-9);
	t += 10 * TICK;
	aimd_update(&p, &s, &ok, t);
	assert_float_equal(s.rate, 400, 1e-9);
}

static void a_draining_queue_is_not_cut_again(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig = standing(0);
	__u64 t = TICK;

	aimd_init(&s, &p, 1000);
	aimd_update(&p, &s, &sig, t); /* timer starts; nothing binds */
	t += TICK;
	aimd_update(&p, &s, &sig, t); /* overload: 900 */
	assert_float_equal(s.rate, 900, 1e-9);
	/* The minimum falls (40 ms < 50 ms): the cut is working, hold. */
	sig.sojourn_min_ns = 40 * MS;
	t += TICK;
	aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 900, 1e-9);
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	/* It stops falling: cut again. */
	t += TICK;
	aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 810, 1e-9);
	/* Other signals cut whatever the sojourn does. */
	sig.sojourn_min_ns = 10 * MS;
	sig.overflows = 5;
	t += TICK;
	aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 729, 1e-9);
}

/* After a tick with no accepts (the application stalled), the first
 * connections taken waited through the stall: their sojourn starts the
 * drain. A ramp is held through it, not abandoned for a new episode. */
static void the_drain_after_a_stall_holds_the_ramp(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig = standing(0), none = calm(0);
	__u64 t = TICK;

	aimd_init(&s, &p, 1000);
	aimd_update(&p, &s, &sig, t); /* timer starts */
	t += TICK;
	aimd_update(&p, &s, &sig, t); /* overload: 900 */
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	/* The application stops: nobody is accepted for a tick, and the
	 * queue overflows: cut. */
	none.sojourn_count = 0;
	none.overflows = 3;
	t += TICK;
	aimd_update(&p, &s, &none, t);
	assert_float_equal(s.rate, 810, 1e-9);
	/* It resumes: what it takes waited 2 s, more than before the stall,
	 * and the minimum is still above target: a drain, not a new cut. */
	sig.sojourn_min_ns = 2000 * MS;
	t += TICK;
	aimd_update(&p, &s, &sig, t);
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	assert_float_equal(s.rate, 810, 1e-9);
	/* Falling further: still held. */
	sig.sojourn_min_ns = 300 * MS;
	t += TICK;
	aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 810, 1e-9);
}

/* An episode ends on evidence that the queue drained: a tick with
 * connections waiting and none taken, or one whose accepts waited above
 * target, decides nothing. */
static void no_accepts_with_a_queue_does_not_end_an_episode(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals over = calm(5000), waiting = calm(5000), ok = calm(5000);
	__u64 t = TICK;

	over.overflows = 1;
	aimd_init(&s, &p, 1000);
	aimd_update(&p, &s, &over, t);
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	waiting.sojourn_count = 0;
	waiting.depth = 40;
	t += TICK;
	aimd_update(&p, &s, &waiting, t);
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	assert_float_equal(s.rate, 900, 1e-9);
	/* Accepts seen, but above target (CoDel's timer only starts): not
	 * yet evidence of a queue that drained. */
	waiting.sojourn_count = 100;
	waiting.sojourn_min_ns = p.target_delay_ns + MS;
	t += TICK;
	aimd_update(&p, &s, &waiting, t);
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	assert_float_equal(s.rate, 900, 1e-9);
	/* Accepts seen, below target: the episode ends. */
	t += TICK;
	aimd_update(&p, &s, &ok, t);
	assert_true(s.mode != AIMD_OVERLOAD);
}

static void ramp_is_abandoned_on_overload(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals over = calm(5000), ok = calm(5000);
	__u64 t = TICK;
	int i;

	over.overflows = 1;
	over.sojourn_count = 1000;
	aimd_init(&s, &p, 2000);
	for (i = 0; i < 30; i++, t += TICK)
		aimd_update(&p, &s, &over, t);
	aimd_update(&p, &s, &ok, t); /* stage 1: 200 */
	t += 10 * TICK;
	aimd_update(&p, &s, &ok, t); /* stage 2: 1000 */
	assert_float_equal(s.rate, 1000, 1e-9);
	/* Overload at 1000: the ramp stops at once, the rate drops from here,
	 * and what was good is the stage that held: 200. */
	t += TICK;
	aimd_update(&p, &s, &over, t);
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	assert_float_equal(s.rate, 900, 1e-9);
	assert_float_equal(s.last_good, 200, 1e-9);
	/* The next ramp climbs towards 200, not 2000: from 900 * 0.9^40 =
	 * 13.3, stages 20 (10 %), 100 (50 %), 200. */
	for (i = 0; i < 40; i++, t += TICK)
		aimd_update(&p, &s, &over, t);
	aimd_update(&p, &s, &ok, t);
	assert_float_equal(s.rate, 20, 1e-9);
	t += 10 * TICK;
	aimd_update(&p, &s, &ok, t);
	assert_float_equal(s.rate, 100, 1e-9);
	t += 10 * TICK;
	aimd_update(&p, &s, &ok, t);
	assert_float_equal(s.rate, 200, 1e-9);
}

static void no_ramp_means_straight_to_steady(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals over = calm(5000), ok = calm(5000);

	p.nr_stages = 0;
	over.overflows = 1;
	aimd_init(&s, &p, 1000);
	aimd_update(&p, &s, &over, TICK);
	aimd_update(&p, &s, &ok, 2 * TICK);
	assert_int_equal(s.mode, AIMD_STEADY);
	assert_float_equal(s.rate, 900, 1e-9);
}

/* A controller in the first ramp stage after an overload episode. */
static __u64 into_recovery(const struct aimd_params *p, struct aimd_state *s)
{
	struct aimd_signals over = calm(5000), ok = calm(5000);
	__u64 t = TICK;
	int i;

	over.overflows = 1;
	over.sojourn_count = 1000;
	aimd_init(s, p, 2000);
	for (i = 0; i < 30; i++, t += TICK)
		aimd_update(p, s, &over, t);
	aimd_update(p, s, &ok, t);
	assert_int_equal(s->mode, AIMD_RECOVERING);
	assert_float_equal(s->rate, 200, 1e-9);
	return t;
}

/* A restart mid-recovery (export, a new process imports) carries on the
 * ramp tick for tick as if nothing happened: 2 s to the last good rate,
 * not an additive climb from 200 (36 ticks at +50). */
static void restart_mid_ramp_carries_on(void **state)
{
	struct aimd_params p = params();
	struct aimd_state before, after, fresh;
	struct aimd_signals ok = calm(5000);
	struct shedd_ctl_state rec;
	__u64 t = into_recovery(&p, &before);
	int i;

	t += 3 * TICK; /* three ticks into stage 1 */
	aimd_update(&p, &before, &ok, t);
	aimd_export(&before, t, &rec);
	assert_int_equal(rec.version, SHEDD_CTL_STATE_VERSION);
	assert_int_equal(rec.mode, AIMD_RECOVERING);
	assert_int_equal(rec.limit_mrate, 200000);
	assert_int_equal(rec.last_good_mrate, 2000000);
	memset(&after, 0xa5, sizeof(after));
	assert_int_equal(aimd_import(&p, &after, &rec, t + TICK / 2), 0);
	assert_int_equal(after.mode, AIMD_RECOVERING);
	assert_int_equal(after.stage, before.stage);
	assert_float_equal(after.rate, before.rate, 1e-3);
	assert_float_equal(after.last_good, before.last_good, 1e-3);
	assert_float_equal(after.peak_accept, before.peak_accept, 1e-3);
	aimd_init(&fresh, &p, before.rate); /* what a restart did before */
	for (i = 0; i < 20; i++) {
		t += TICK;
		aimd_update(&p, &before, &ok, t);
		aimd_update(&p, &after, &ok, t);
		aimd_update(&p, &fresh, &ok, t);
		assert_float_equal(after.rate, before.rate, 1e-3);
		assert_int_equal(after.mode, before.mode);
	}
	/* Stage 2 after 7 ticks, stage 3 (the last good rate) after 17. */
	assert_float_equal(after.rate, 2000, 1e-3);
	/* A fresh start at the same limit climbs by alpha from 200 instead. */
	assert_float_equal(fresh.rate, 200 + 20 * 50, 1e-3);
}

/* A record from another version, never written or absurd is refused and
 * leaves the state alone; today's bounds and ramp win over the record's. */
static void import_checks_the_record(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s, got;
	struct shedd_ctl_state rec, bad;
	__u64 t = into_recovery(&p, &s);

	aimd_export(&s, t, &rec);
	aimd_init(&got, &p, 777);
	memset(&bad, 0, sizeof(bad));
	assert_int_equal(aimd_import(&p, &got, &bad, t), -1);
	bad = rec;
	bad.version = SHEDD_CTL_STATE_VERSION + 1;
	assert_int_equal(aimd_import(&p, &got, &bad, t), -1);
	bad = rec;
	bad.mode = 3;
	assert_int_equal(aimd_import(&p, &got, &bad, t), -1);
	bad = rec;
	bad.limit_mrate = 0;
	assert_int_equal(aimd_import(&p, &got, &bad, t), -1);
	assert_float_equal(got.rate, 777, 1e-9);
	assert_int_equal(got.mode, AIMD_STEADY);

	/* Today's --max-rate is below the record's limit. */
	p.max_rate = 100;
	assert_int_equal(aimd_import(&p, &got, &rec, t), 0);
	assert_float_equal(got.rate, 100, 1e-9);
	assert_float_equal(got.last_good, 100, 1e-9);
	/* Today's ramp has one stage: stage 2 of 3 is past it, the ramp ends. */
	p = params();
	rec.stage = 1;
	p.nr_stages = 1;
	assert_int_equal(aimd_import(&p, &got, &rec, t), 0);
	assert_int_equal(got.mode, AIMD_STEADY);
	/* A stage end from a clock that is not ours is cut to one hold. */
	p = params();
	rec.stage = 0;
	rec.stage_end_ns = t + 3600 * 1000 * MS;
	assert_int_equal(aimd_import(&p, &got, &rec, t), 0);
	assert_int_equal(got.mode, AIMD_RECOVERING);
	assert_true(got.stage_end_ns == t + p.stage_hold_ns);
}

/* One reading of overload is one decision: a tick three times as long as
 * the nominal one (a daemon slow to be scheduled) cuts by beta once, not
 * beta^3; a tick of a tenth of it cuts by a tenth of the step. */
static void a_long_tick_cuts_once(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals over = calm(5000);

	over.overflows = 1;
	over.sojourn_count = 10000; /* the service takes far more: no cap */
	aimd_init(&s, &p, 1000);
	over.dt_ns = 3 * TICK;
	aimd_update(&p, &s, &over, 3 * TICK);
	assert_float_equal(s.rate, 1000 * p.beta, 1e-6);
	over.dt_ns = TICK / 10;
	aimd_update(&p, &s, &over, 3 * TICK + TICK / 10);
	assert_float_equal(s.rate, 1000 * p.beta * pow(p.beta, 0.1), 1e-6);
}

/* The accept rate is the tick's accepts over its measured length: with
 * 10 ms ticks (--tick-ms 10), 10 accepts a tick are 1000/s, and an overload
 * from far above comes down to good_cap x 1000/s, not x 100/s. */
static void accept_rate_uses_the_measured_tick(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig = calm(5000);
	__u64 t = 0;
	int i;

	p.tick_ns = 100 * MS; /* the nominal tick must not be used */
	aimd_init(&s, &p, 10000);
	sig.dt_ns = 10 * MS;
	sig.sojourn_count = 10;
	for (i = 0; i < 5; i++) {
		t += 10 * MS;
		aimd_update(&p, &s, &sig, t);
	}
	assert_float_equal(s.peak_accept, 1000, 1e-6);
	sig.overflows = 1;
	t += 10 * MS;
	aimd_update(&p, &s, &sig, t);
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	assert_float_equal(s.rate, p.good_cap * 1000, 1e-6);
	/* The peak decays per 100 ms of measured time: one 2 s tick (a stall
	 * of the daemon) decays it as much as twenty 100 ms ticks. */
	sig = calm(0);
	sig.sojourn_count = 0;
	sig.dt_ns = 2000 * MS;
	t += 2000 * MS;
	aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.peak_accept, 1000 * pow(p.peak_decay, 20), 1e-6);
}

/* A spoofed flood: the limit binds (demand far above it), everything it
 * admits is admitted, and almost nothing completes its handshake. The limit
 * must not climb to max_rate. */
static void no_wind_up_on_syns_that_never_complete(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig = calm(1e6);
	__u64 t = TICK;
	int i;

	aimd_init(&s, &p, 1000);
	for (i = 0; i < 1000; i++, t += TICK) {
		sig.admitted_per_sec = s.rate;
		sig.completed = 5; /* 50/s of real clients */
		aimd_update(&p, &s, &sig, t);
	}
	assert_float_equal(s.rate, 1000, 1e-9);
	/* No measure of completion at all: no evidence, no growth either. */
	sig = calm(1e6);
	sig.have_completed = false;
	for (i = 0; i < 100; i++, t += TICK)
		aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 1000, 1e-9);
	/* Real clients at half the limit, the flood taking the other half:
	 * half of what is admitted completes. No growth either. */
	sig = calm(1e6);
	for (i = 0; i < 100; i++, t += TICK) {
		sig.admitted_per_sec = s.rate;
		sig.completed = 50; /* 500/s of 1000/s admitted */
		aimd_update(&p, &s, &sig, t);
	}
	assert_float_equal(s.rate, 1000, 1e-9);
	/* Real clients completing what is admitted: the limit grows. */
	sig = calm(1e6);
	sig.admitted_per_sec = 1000;
	sig.completed = 90; /* 900/s of 1000/s admitted */
	aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 1050, 1e-9);
}

/* No sojourn, no depth, no latency: the law would ramp open-loop to
 * max_rate on demand alone. It holds instead. */
static void blind_controller_holds(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig = {
		.demand = 1e6, .dt_ns = TICK, .have_completed = true, .completed = 100000,
	};
	__u64 t = TICK;
	int i;

	aimd_init(&s, &p, 1000);
	for (i = 0; i < 1000; i++, t += TICK)
		aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 1000, 1e-9);
	assert_int_equal(s.mode, AIMD_STEADY);
}

/* io_uring accepts and connections queued before the probes attached give
 * no sojourn sample; connections leaving the queue show the application
 * is taking them: not a stall. */
static void queue_draining_without_accept_samples_is_not_a_stall(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig = calm(100);

	aimd_init(&s, &p, 1000);
	sig.sojourn_count = 0;
	sig.depth = 20;
	sig.have_queue_left = true;
	sig.queue_left = 10;
	for (int t = 1; t < 20; t++)
		assert_int_equal(aimd_overloaded(&p, &s, &sig, (__u64)t * TICK), 0);
	/* Nothing left the queue for 300 ms: the application stopped. */
	sig.queue_left = 0;
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 20 * TICK), 0);
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 21 * TICK), 0);
	assert_int_equal(aimd_overloaded(&p, &s, &sig, 22 * TICK), AIMD_WHY_STALL);
}

/* A proxy: it accepts whatever is admitted at once (accepts = admitted),
 * and its request log says how many requests were answered. */
static struct aimd_signals proxy_tick(double admitted, double served, __u64 p99_ms)
{
	struct aimd_signals s = calm(admitted);

	s.sojourn_count = (__u64)(admitted / 10);
	s.have_latency = true;
	s.latency_count = (__u64)(admitted / 10);
	s.latency_served = (__u64)(served / 10);
	s.latency_p99_ns = p99_ms * MS;
	s.latency_mid_ns = p99_ms * MS;
	return s;
}

/* What a proxy behind an upstream of 200 requests/s answers while its
 * latency is high: 200/s whatever it admits (a queue); what it admits, up
 * to 200/s, one request a connection (no queue: a service that got slower,
 * not busier); or half of that, the clients of the other half giving up
 * (a queue the SYN limit does not reach, as on keep-alive connections). */
enum proxy_kind { QUEUE, NO_QUEUE, GIVING_UP };

/* A proxy calm at 100/s, then offered 800/s and answering 200/s at a
 * latency of @p99_ms until the explicit target's verdict says overload
 * (the tests give it an interval of a second, so the served rate is the
 * 200/s of the surge by then); the time of that tick. */
static __u64 proxy_surge(const struct aimd_params *p, struct aimd_state *s, __u64 p99_ms)
{
	__u64 now = 0;
	int i;

	aimd_init(s, p, 10000);
	for (i = 0; i < 10; i++)
		aimd_update(p, s, &(struct aimd_signals[1]){ proxy_tick(100, 100, 20) }[0], now += TICK);
	for (i = 0; !(s->why & AIMD_WHY_LATENCY); i++) {
		assert_true(i < 30);
		aimd_update(p, s, &(struct aimd_signals[1]){ proxy_tick(800, 200, p99_ms) }[0],
			    now += TICK);
	}
	return now;
}

/* proxy_surge(), then the proxy answers as @kind says for @ticks ticks
 * from the first overloaded one; the limit at the end. */
static double proxy_run(const struct aimd_params *p, struct aimd_state *s, __u64 p99_ms,
			int ticks, enum proxy_kind kind)
{
	__u64 now = proxy_surge(p, s, p99_ms);
	int i;

	for (i = 1; i < ticks; i++) {
		double served = kind == QUEUE || s->rate > 200 ? 200 : s->rate;

		if (kind == GIVING_UP)
			served /= 2;
		aimd_update(p, s, &(struct aimd_signals[1]){ proxy_tick(s->rate, served, p99_ms) }[0],
			    now += TICK);
	}
	return s->rate;
}

static double proxy_overload(const struct aimd_params *p, struct aimd_state *s, __u64 p99_ms,
			     int ticks)
{
	return proxy_run(p, s, p99_ms, ticks, QUEUE);
}

/* Latency overload at a proxy: its accept rate is only what it is offered,
 * so the one-step cut and the floor come from the requests answered, both
 * scaled by the drain factor d = 1 - excess / drain_ns (at least
 * drain_min): the queue behind the excess latency drains in drain_ns. */
static void latency_overload_is_cut_to_what_is_served(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	double r;

	(void)state;
	p.latency_target_ns = 50 * MS;
	p.auto_interval_ns = 1000 * MS;
	p.served_floor = 0.9;
	/* p99 400 ms: 350 ms over the target, d = 1 - 0.35 = 0.65. One step
	 * to good_cap x d x served (1.5 x 0.65 x 200 = 195), not 1.5 x the
	 * 800 accepted, nor 1.5 x the 200 served. */
	r = proxy_overload(&p, &s, 400, 1);
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	assert_int_equal(s.lat_excess_ns, 350 * MS);
	assert_true(r >= p.good_cap * 0.65 * 200 - 1 && r <= p.good_cap * 0.65 * 200 + 1);
	/* Latency stays high while the queue drains: the cuts stop at
	 * served_floor x d x the served peak (117/s), below what is served,
	 * so the queue drains, but they do not empty the service. */
	r = proxy_overload(&p, &s, 400, 15);
	assert_int_equal(s.drain, AIMD_DRAINING);
	assert_true(r >= 0.9 * 0.65 * 200 - 1 && r <= 0.9 * 0.65 * 200 + 1);
	/* The drain needs 0.35 / (1 - 0.65) = 1 s and is given twice that.
	 * A latency still there after it is not a queue that a drain ends,
	 * and no second drain comes in the episode. The floor returns in
	 * connections: here 117 connections/s brought 200 requests/s (a
	 * queue, or keep-alive), and 0.9 x 117 / 200 x the 200 served is
	 * below the limit: no raise. */
	r = proxy_overload(&p, &s, 400, 20);
	assert_int_equal(s.drain, AIMD_DRAINING);
	r = proxy_overload(&p, &s, 400, 21);
	assert_int_equal(s.drain, AIMD_DRAIN_SPENT);
	assert_true(r >= 0.9 * 0.65 * 200 - 1 && r <= 0.9 * 0.65 * 200 + 1);
	r = proxy_overload(&p, &s, 400, 100);
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	assert_int_equal(s.drain, AIMD_DRAIN_SPENT);
	assert_true(r >= 0.9 * 0.65 * 200 - 1 && r <= 0.9 * 0.65 * 200 + 1);
	/* Without a queue (it answers what it admits, one request a
	 * connection), the latency that stayed is the service's: back to
	 * the served peak the drain began with, 200/s, where the drain alone
	 * followed the served rate down. (With the default floor of 1: below
	 * it, the floor follows a service without a queue down anyway.) */
	p.served_floor = 1.0;
	r = proxy_run(&p, &s, 400, 20, NO_QUEUE);
	assert_int_equal(s.drain, AIMD_DRAINING);
	assert_true(s.peak_served < 0.9 * 200);
	r = proxy_run(&p, &s, 400, 21, NO_QUEUE);
	assert_int_equal(s.drain, AIMD_DRAIN_SPENT);
	assert_true(r >= 200 - 1 && r <= 200 + 1);
	r = proxy_run(&p, &s, 400, 100, NO_QUEUE);
	assert_true(r >= 200 - 1 && r <= 200 + 1);
	/* The excess grew under the drain (it began from a served peak above
	 * what is served): too shallow, it begins again from the excess and
	 * the peak of then, and is not spent. */
	{
		__u64 now = proxy_surge(&p, &s, 400);
		int i;

		for (i = 1; i < 21; i++)
			aimd_update(&p, &s,
				    &(struct aimd_signals[1]){ proxy_tick(s.rate, 200,
									  400 + 10 * (__u64)i) }[0],
				    now += TICK);
		assert_int_equal(s.drain, AIMD_DRAINING);
		assert_int_equal(s.drain_excess0_ns, 550 * MS);
		assert_true(s.drain_end_ns > now);
	}
	/* The excess fell under the drain, from 350 to 150 ms, but stayed
	 * over the target: the queue goes with the drain, which was too
	 * short; it begins again from the excess of then, and is not spent
	 * (spent, the limit held what is served, and the rest of the queue
	 * stood for the episode). */
	{
		__u64 now = proxy_surge(&p, &s, 400);
		int i;

		for (i = 1; i < 21; i++)
			aimd_update(&p, &s,
				    &(struct aimd_signals[1]){ proxy_tick(s.rate, 200,
									  400 - 10 * (__u64)i) }[0],
				    now += TICK);
		assert_int_equal(s.drain, AIMD_DRAINING);
		assert_int_equal(s.drain_excess0_ns, 150 * MS);
		assert_true(s.drain_end_ns > now);
		assert_true(s.rate < 200);
	}
	/* The excess grew under the drain and fell back to where it began
	 * (the latency lags the queue by the queue's length: a drain begun
	 * at 50 ms over the target sees the queue at its height, 400 ms
	 * over, in mid-drain): what fell went with the drain; it begins
	 * again, and is not spent (spent, the limit went back to the served
	 * peak and held the queue standing at the clients' patience). */
	{
		__u64 now = proxy_surge(&p, &s, 100);
		int i;

		assert_int_equal(s.drain_excess0_ns, 50 * MS);
		for (i = 1; i < 21; i++) {
			__u64 p99 = i <= 10 ? 100 + 35 * (__u64)i : 450 - 35 * (__u64)(i - 10);

			aimd_update(&p, &s,
				    &(struct aimd_signals[1]){ proxy_tick(s.rate, 200, p99) }[0],
				    now += TICK);
		}
		assert_int_equal(s.drain, AIMD_DRAINING);
		assert_int_equal(s.drain_excess0_ns, 50 * MS);
		assert_int_equal(s.drain_excess_peak_ns, 50 * MS);
		assert_true(s.drain_end_ns > now);
		assert_true(s.rate < 200);
	}
	/* Half the clients giving up: not a slower service but a queue the
	 * SYN limit does not reach; no raise, though each connection brought
	 * one request. */
	{
		double r20 = proxy_run(&p, &s, 400, 20, GIVING_UP);

		assert_int_equal(s.drain, AIMD_DRAINING);
		r = proxy_run(&p, &s, 400, 21, GIVING_UP);
		assert_int_equal(s.drain, AIMD_DRAIN_SPENT);
		assert_true(r <= r20);
	}
	p.served_floor = 0.9;
	/* Just above the target (60 ms, d = 0.99), the floor is nearly what
	 * is served: a small excess is no reason to refuse much. */
	r = proxy_overload(&p, &s, 60, 15);
	assert_true(r >= 0.9 * 0.99 * 200 - 1 && r <= 0.9 * 0.99 * 200 + 1);
	/* Far above it (2 s), d is drain_min, and the drain needs
	 * 1.95 / 0.5 = 3.9 s: it lasts 7.8 s. */
	r = proxy_overload(&p, &s, 2000, 15);
	assert_true(r >= 0.9 * p.drain_min * 200 - 1 && r <= 0.9 * p.drain_min * 200 + 1);
	r = proxy_overload(&p, &s, 2000, 78);
	assert_int_equal(s.drain, AIMD_DRAINING);
	r = proxy_overload(&p, &s, 2000, 79);
	assert_int_equal(s.drain, AIMD_DRAIN_SPENT);
	/* drain_ns 0: no drain, the floor is served_floor x served. */
	p.drain_ns = 0;
	r = proxy_overload(&p, &s, 400, 15);
	assert_int_equal(s.drain, AIMD_DRAIN_NONE);
	assert_true(r >= 0.9 * 200 - 1 && r <= 0.9 * 200 + 1);
	p.drain_ns = params().drain_ns;
	/* A depth overload is not capped by the served rate. */
	{
		__u64 now = 0;
		struct aimd_signals d = proxy_tick(800, 200, 20);

		aimd_init(&s, &p, 10000);
		for (int i = 0; i < 10; i++)
			aimd_update(&p, &s, &(struct aimd_signals[1]){ proxy_tick(100, 100, 20) }[0],
				    now += TICK);
		d.depth = 120;
		aimd_update(&p, &s, &d, now += TICK);
	}
	assert_int_equal(s.why, AIMD_WHY_DEPTH);
	assert_int_equal(s.lat_excess_ns, 0);
	assert_true(s.rate > p.good_cap * 200 + 1);
}

/* With the derived target, the excess is the last verdict's statistic
 * (the trimmed mean) over the target, and it drives the same drain. */
static void derived_target_drains_by_the_verdict_excess(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	__u64 now = 0, target;
	int i;

	(void)state;
	p.served_floor = 0.9;
	aimd_init(&s, &p, 10000);
	/* 2 s calm at 20 ms, 200/s: baseline 20 ms, target 2 x 20 + 5 =
	 * 45 ms. */
	for (i = 0; i < 20; i++)
		aimd_update(&p, &s, &(struct aimd_signals[1]){ proxy_tick(200, 200, 20) }[0], now += TICK);
	target = aimd_latency_target(&p, &s, NULL);
	assert_int_equal(target, 45 * MS);
	/* 800/s offered, 200/s answered at 345 ms: more than auto_jump x the
	 * target, overload at once. */
	for (i = 0; i < 15; i++)
		aimd_update(&p, &s, &(struct aimd_signals[1]){ proxy_tick(i ? s.rate : 800, 200, 345) }[0],
			    now += TICK);
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	assert_true(s.why & AIMD_WHY_LATENCY);
	assert_int_equal(s.lat_excess_ns, 300 * MS);
	/* d = 0.7: held at 0.9 x 0.7 x 200 = 126/s. */
	assert_true(s.rate >= 0.9 * 0.7 * 200 - 1 && s.rate <= 0.9 * 0.7 * 200 + 1);
}

/* A tick at @rate with its latency: every admitted SYN completes and each
 * connection brings one request, answered, @count of them (rate / 10 when
 * 0), at a statistic (and p99) of @ms. */
static struct aimd_signals lat_tick(double rate, __u64 count, double ms)
{
	struct aimd_signals s = calm(rate);

	if (!count)
		count = (__u64)(rate / 10);
	s.have_latency = true;
	s.latency_count = count;
	s.latency_served = count;
	s.completed = count;
	s.latency_mid_ns = (__u64)(ms * MS);
	s.latency_p99_ns = (__u64)(ms * MS);
	return s;
}

/* The explicit target: one slow request is no overload. At 20 000/s, a
 * tick with one sample of 3 s among four of 10 ms (p99: 3 s), then ticks
 * of five fast ones: the verdict needs auto_verdict_samples, and a verdict
 * above the target only starts auto_interval_ns. A p99 that stays above
 * it is overload once the interval has passed, not before. */
static void explicit_target_needs_samples_and_an_interval(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig;
	__u64 now = 0, above = 0;
	int i;

	(void)state;
	p.latency_target_ns = 200 * MS;
	p.max_rate = 100000;
	aimd_init(&s, &p, 20000);
	sig = lat_tick(20000, 5, 10);
	sig.latency_p99_ns = 3000 * MS;
	aimd_update(&p, &s, &sig, now += TICK);
	assert_int_equal(s.why, 0);
	for (i = 0; i < 30; i++) {
		aimd_update(&p, &s, &(struct aimd_signals[1]){ lat_tick(20000, 5, 10) }[0],
			    now += TICK);
		assert_int_equal(s.why, 0);
		assert_int_not_equal(s.mode, AIMD_OVERLOAD);
	}
	assert_true(s.rate >= 20000);
	/* A sustained p99 of 3 s: overload after auto_interval_ns. */
	for (i = 0; i < 30 && !(s.why & AIMD_WHY_LATENCY); i++) {
		sig = lat_tick(20000, 50, 10);
		sig.latency_p99_ns = 3000 * MS;
		aimd_update(&p, &s, &sig, now += TICK);
		if (!above)
			above = now;
		if (!(s.why & AIMD_WHY_LATENCY))
			assert_true(now < above + p.auto_interval_ns);
	}
	assert_true(s.why & AIMD_WHY_LATENCY);
	assert_int_equal(now, above + p.auto_interval_ns);
	assert_true(s.rate < 20000);
}

/* The served rate is the requests answered over the last second, not a
 * peak of single ticks: 10 and 30 answers in alternate 100 ms ticks are
 * 200/s (the per-tick peak said 300/s), and the floor of a latency
 * overload is taken from it. */
static void served_rate_is_over_a_second(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	__u64 now = 0;
	int i;

	(void)state;
	aimd_init(&s, &p, 1000);
	for (i = 0; i < 40; i++)
		aimd_update(&p, &s, &(struct aimd_signals[1]){ lat_tick(1000, i % 2 ? 30 : 10, 20) }[0],
			    now += TICK);
	assert_in_range((__u64)s.peak_served, 195, 205);
	assert_float_equal(s.served_rate, 200, 1e-6);
}

/* An overload that began from calm: the service answered 100/s of the
 * 1000/s it was let in (demand under the limit), and its served peak is
 * that calm. The episode's aim is lowered to that peak, which says what
 * the service took, not what it can take: the episode ends at it, steady,
 * and climbs on from there, with no ramp stage held at it. */
/* 3 s served at 100/s within the 200 ms target, limit 1000; then a p99 of
 * 900 ms, SYNs offered at @demand/s, until overload; then calm again until
 * the episode ends. */
static void calm_episode_calm(const struct aimd_params *p, struct aimd_state *s, double demand)
{
	struct aimd_signals sig;
	__u64 now = 0;
	int i;

	aimd_init(s, p, 1000);
	for (i = 0; i < 30; i++)
		aimd_update(p, s, &(struct aimd_signals[1]){ lat_tick(100, 10, 20) }[0],
			    now += TICK);
	assert_int_equal(s->mode, AIMD_STEADY);
	for (i = 0; i < 50 && s->mode != AIMD_OVERLOAD; i++) {
		sig = lat_tick(100, 10, 20);
		sig.demand = demand;
		sig.latency_p99_ns = 900 * MS;
		aimd_update(p, s, &sig, now += TICK);
	}
	assert_int_equal(s->mode, AIMD_OVERLOAD);
	for (i = 0; i < 100 && s->mode == AIMD_OVERLOAD; i++)
		aimd_update(p, s, &(struct aimd_signals[1]){ lat_tick(100, 10, 20) }[0],
			    now += TICK);
	assert_true(s->last_good < 110);
}

static void episode_from_calm_climbs_on_from_the_served_peak(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;

	(void)state;
	p.latency_target_ns = 200 * MS;
	calm_episode_calm(&p, &s, 100);
	assert_int_equal(s.mode, AIMD_STEADY);
	assert_float_equal(s.rate, s.last_good, 1e-6);
	/* The same episode begun at a limit that bound (demand above it):
	 * the served peak is the service's own, and the last stage holds. */
	calm_episode_calm(&p, &s, 2000);
	assert_int_equal(s.mode, AIMD_RECOVERING);
}

/* The derived target learned at 20 ms (target 45 ms): a tick whose
 * verdict is above auto_jump x the target (90 ms) is overload at once; one
 * between the target and that waits auto_interval_ns; so does a verdict
 * above it gathered from a trickle over several ticks. */
static void far_above_the_target_is_overload_at_once(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s, base;
	__u64 now = 0, t0;
	int i;

	(void)state;
	p.auto_jump = 2;
	aimd_init(&base, &p, 10000);
	for (i = 0; i < 20; i++)
		aimd_update(&p, &base, &(struct aimd_signals[1]){ lat_tick(1000, 0, 20) }[0],
			    now += TICK);
	assert_int_equal(aimd_latency_target(&p, &base, NULL), 45 * MS);
	t0 = now;

	s = base;
	aimd_update(&p, &s, &(struct aimd_signals[1]){ lat_tick(1000, 0, 100) }[0], now += TICK);
	assert_true(s.why & AIMD_WHY_LATENCY);
	assert_int_equal(s.mode, AIMD_OVERLOAD);

	s = base;
	now = t0;
	for (i = 0; i < 5; i++) {
		aimd_update(&p, &s, &(struct aimd_signals[1]){ lat_tick(1000, 0, 80) }[0],
			    now += TICK);
		assert_int_equal(s.why, 0);
	}
	aimd_update(&p, &s, &(struct aimd_signals[1]){ lat_tick(1000, 0, 80) }[0], now += TICK);
	assert_true(s.why & AIMD_WHY_LATENCY);

	/* Five samples a tick: each verdict spans two ticks. */
	s = base;
	now = t0;
	for (i = 0; i < 4; i++) {
		aimd_update(&p, &s, &(struct aimd_signals[1]){ lat_tick(1000, 5, 200) }[0],
			    now += TICK);
		assert_int_equal(s.why, 0);
	}
}

/* The additive step is headroom_gain times larger while the derived
 * target's last verdict is within a quarter of the way from the baseline
 * to the target (20 to 45 ms: up to 26.25 ms), the plain one above that;
 * with an explicit target there is no such climb. */
static void headroom_climbs_faster_only_near_the_baseline(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	__u64 now = 0;
	double r;
	int i;

	(void)state;
	p.headroom_gain = 4;
	aimd_init(&s, &p, 1000);
	for (i = 0; i < 20; i++)
		aimd_update(&p, &s, &(struct aimd_signals[1]){ lat_tick(s.rate, 0, 20) }[0],
			    now += TICK);
	assert_float_equal(s.rate, 1000 + 20 * p.alpha_per_sec * p.headroom_gain, 1e-6);
	r = s.rate;
	for (i = 0; i < 5; i++)
		aimd_update(&p, &s, &(struct aimd_signals[1]){ lat_tick(s.rate, 0, 30) }[0],
			    now += TICK);
	assert_int_equal(s.mode, AIMD_STEADY);
	assert_float_equal(s.rate, r + 5 * p.alpha_per_sec, 1e-6);
	r = s.rate;
	for (i = 0; i < 5; i++)
		aimd_update(&p, &s, &(struct aimd_signals[1]){ lat_tick(s.rate, 0, 21) }[0],
			    now += TICK);
	assert_float_equal(s.rate, r + 5 * p.alpha_per_sec * p.headroom_gain, 1e-6);

	p.latency_target_ns = 200 * MS;
	aimd_init(&s, &p, 1000);
	for (i = 0; i < 20; i++)
		aimd_update(&p, &s, &(struct aimd_signals[1]){ lat_tick(s.rate, 0, 20) }[0],
			    now += TICK);
	assert_float_equal(s.rate, 1000 + 20 * p.alpha_per_sec, 1e-6);
}

/* A resumed record has an age. Written less than fresh_ns ago it is the
 * present: mode and peaks as they were. Older, it is history: only the
 * limit, in steady state, the peaks decayed by its age. Version 3 carries
 * the calm latency, resumed while its point is inside the window; records
 * of versions 1 and 2 (an older shedd) are read, and their bytes past
 * their size say nothing. */
static void import_ages_the_record(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s, got;
	struct shedd_ctl_state rec, old;
	__u64 t, w;
	double decay;
	int i;

	(void)state;
	p.fresh_ns = 3000 * MS;
	/* Into an overload, peaks known. */
	aimd_init(&s, &p, 5000);
	t = 0;
	for (i = 0; i < 10; i++)
		aimd_update(&p, &s, &(struct aimd_signals[1]){ calm(5000) }[0], t += TICK);
	for (i = 0; i < 3; i++)
		aimd_update(&p, &s, &(struct aimd_signals[1]){ standing(5000) }[0], t += TICK);
	assert_int_equal(s.mode, AIMD_OVERLOAD);
	assert_true(s.peak_accept > 900);
	w = t + 600 * 1000 * MS; /* the record's clock: past one window */
	aimd_export(&s, w, &rec);
	assert_int_equal(rec.version, 3);

	assert_int_equal(aimd_import(&p, &got, &rec, w + p.fresh_ns - TICK), 0);
	assert_int_equal(got.mode, AIMD_OVERLOAD);
	assert_float_equal(got.rate, s.rate, 1e-3);
	assert_float_equal(got.peak_accept, s.peak_accept, 1e-3);
	assert_float_equal(got.last_good, s.last_good, 1e-3);

	assert_int_equal(aimd_import(&p, &got, &rec, w + 10 * 1000 * MS), 0);
	decay = pow(p.peak_decay, 100);
	assert_int_equal(got.mode, AIMD_STEADY);
	assert_int_equal(got.why, 0);
	assert_float_equal(got.rate, s.rate, 1e-3);
	assert_float_equal(got.last_good, s.rate, 1e-3);
	assert_float_equal(got.peak_accept, s.peak_accept * decay, 1e-2);
	assert_float_equal(got.peak_served, s.peak_served * decay, 1e-2);

	/* The baseline: inside the window, resumed with its target; with
	 * the spread it was written with (none: 1, as a shedd that wrote
	 * padding there). */
	rec.baseline_ns = 20 * MS;
	rec.calm_at_ns = w - 60 * 1000 * MS;
	assert_int_equal(rec.spread_milli, 0);
	assert_int_equal(aimd_import(&p, &got, &rec, w), 0);
	assert_int_equal(got.lat.baseline_ns, 20 * MS);
	assert_int_equal(aimd_latency_target(&p, &got, NULL), 45 * MS);
	assert_int_equal(got.lat.calm_at_ns, rec.calm_at_ns);
	rec.spread_milli = 1500;
	assert_int_equal(aimd_import(&p, &got, &rec, w), 0);
	assert_float_equal(got.lat.spread, 1.5, 1e-9);
	assert_int_equal(aimd_latency_target(&p, &got, NULL), 20 * MS + 1.5 * 25 * MS);
	aimd_export(&got, w, &old);
	assert_int_equal(old.spread_milli, 1500);
	assert_int_equal(old.baseline_ns, 20 * MS);
	rec.spread_milli = 0;
	rec.calm_at_ns = w - p.auto_window_ns - TICK;
	assert_int_equal(aimd_import(&p, &got, &rec, w), 0);
	assert_int_equal(got.lat.baseline_ns, 0);
	assert_int_equal(aimd_latency_target(&p, &got, NULL), 0);

	/* Version 2 and version 1, converted (their appended words 0), or
	 * not: a version 2 record has no baseline whatever follows it. */
	rec.calm_at_ns = w - 60 * 1000 * MS;
	old = rec;
	old.version = 2;
	assert_int_equal(aimd_import(&p, &got, &old, w), 0);
	assert_int_equal(got.mode, AIMD_OVERLOAD);
	assert_float_equal(got.rate, s.rate, 1e-3);
	assert_float_equal(got.peak_served, s.peak_served, 1e-3);
	assert_int_equal(got.lat.baseline_ns, 0);
	memset((char *)&old + SHEDD_CTL_STATE_V1_SIZE, 0, sizeof(old) - SHEDD_CTL_STATE_V1_SIZE);
	old.version = 1;
	assert_int_equal(aimd_import(&p, &got, &old, w), 0);
	assert_int_equal(got.mode, AIMD_OVERLOAD);
	assert_float_equal(got.rate, s.rate, 1e-3);
	assert_float_equal(got.peak_served, 0, 0);
	assert_int_equal(got.lat.baseline_ns, 0);
}

/* A fresh start (aimd_open()): while the limit binds and what it admits
 * completes, it doubles a tick, not + alpha; a flood that does not
 * complete stops it; at max_rate it is flagged at_max; the first overload
 * ends the open phase for good, and the climb after it is additive. */
static void open_start_doubles_until_the_first_overload(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig = calm(1e6), over = calm(5000);
	__u64 t = TICK;

	p.max_rate = 100000;
	aimd_init(&s, &p, 1000);
	aimd_open(&s);
	aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 2000, 1e-9);
	t += TICK;
	aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 4000, 1e-9);
	assert_false(s.at_max);
	/* A spoofed flood: a fifth of the admitted SYNs complete. No growth. */
	sig.admitted_per_sec = 4000;
	sig.completed = 80;
	t += TICK;
	aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 4000, 1e-9);
	/* Completing again: up to max_rate, and flagged there. */
	sig = calm(1e6);
	while (s.rate < p.max_rate) {
		t += TICK;
		aimd_update(&p, &s, &sig, t);
	}
	assert_float_equal(s.rate, p.max_rate, 1e-9);
	t += TICK;
	aimd_update(&p, &s, &sig, t);
	assert_true(s.at_max);
	assert_true(s.open);
	/* Not binding: not flagged. */
	sig = calm(1000);
	t += TICK;
	aimd_update(&p, &s, &sig, t);
	assert_false(s.at_max);
	/* An overload (overflows, 500 accepts a tick) cuts to 1.5 x the
	 * accept rate at once and closes the open phase. */
	over.overflows = 1;
	over.sojourn_count = 500;
	t += TICK;
	aimd_update(&p, &s, &over, t);
	assert_float_equal(s.rate, 1.5 * 5000, 1e-6);
	assert_false(s.open);
	/* Back to calm and binding: the ramp, then + alpha, never x 2. */
	sig = calm(1e6);
	for (int i = 0; i < 50; i++) {
		double before = s.rate;

		t += TICK;
		aimd_update(&p, &s, &sig, t);
		if (s.mode == AIMD_STEADY && before >= 7500)
			assert_true(s.rate <= before + p.alpha_per_sec + 1e-9);
	}
}

/* A fresh start under a flood of SYNs that do not complete (spoofed): SYNs
 * admitted above open_floor of which less than complete_frac complete, 3
 * ticks in a row, bring the limit down to the larger of open_floor and
 * open_gain x the peak of completed handshakes; it stays open (no overload
 * was seen) and, once the flood is gone, doubles back to the demand. A
 * flash crowd whose handshakes complete a tick late is not held. */
static void open_start_holds_a_flood_that_does_not_complete(void **state)
{
	struct aimd_params p = params();
	struct aimd_state s;
	struct aimd_signals sig;
	__u64 t = 0;
	int i;

	p.max_rate = 1e7;
	p.open_floor = 10000;
	aimd_init(&s, &p, p.max_rate);
	aimd_open(&s);
	/* A flash crowd of 200 000/s whose first tick's handshakes complete
	 * in the next: the limit stays open at max_rate. */
	sig = calm(200000);
	sig.admitted_per_sec = 200000;
	sig.completed = 0;
	t += TICK;
	aimd_update(&p, &s, &sig, t);
	sig.completed = 20000;
	for (i = 0; i < 5; i++) {
		t += TICK;
		aimd_update(&p, &s, &sig, t);
	}
	assert_float_equal(s.rate, p.max_rate, 1e-6);
	/* 30 000 real clients a second and 500 000 spoofed SYNs: two ticks
	 * are patience, the third holds the limit to twice what completes. */
	aimd_init(&s, &p, p.max_rate);
	aimd_open(&s);
	sig = calm(530000);
	sig.admitted_per_sec = 530000;
	sig.completed = 3000;
	for (i = 0; i < 2; i++) {
		t += TICK;
		aimd_update(&p, &s, &sig, t);
		assert_float_equal(s.rate, p.max_rate, 1e-6);
	}
	t += TICK;
	aimd_update(&p, &s, &sig, t);
	assert_float_equal(s.rate, 2 * s.peak_completed, 1e-6);
	assert_true(s.rate > 50000 && s.rate < 70000);
	assert_true(s.open);
	assert_int_equal(s.mode, AIMD_STEADY);
	/* Held: what it admits is a sample of the demand, 30 of 530 real;
	 * the limit never climbs, and never goes under open_floor. */
	for (i = 0; i < 600; i++) {
		double before = s.rate;

		sig.admitted_per_sec = s.rate;
		sig.completed = (__u64)(s.rate * 30 / 530 / 10);
		t += TICK;
		aimd_update(&p, &s, &sig, t);
		assert_true(s.rate <= before + 1e-6);
		assert_true(s.rate >= p.open_floor - 1e-6);
	}
	assert_float_equal(s.rate, p.open_floor, 1e-6);
	/* The flood ends: the real clients' SYNs complete, the limit doubles
	 * to their demand. */
	sig = calm(30000);
	sig.admitted_per_sec = s.rate;
	for (i = 0; i < 3; i++) {
		t += TICK;
		aimd_update(&p, &s, &sig, t);
	}
	assert_true(s.rate >= 30000);
	assert_true(s.open);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(latency_overload_is_cut_to_what_is_served),
		cmocka_unit_test(derived_target_drains_by_the_verdict_excess),
		cmocka_unit_test(sojourn_must_stay_above_target_for_an_interval),
		cmocka_unit_test(each_signal_is_overload),
		cmocka_unit_test(stall_guard),
		cmocka_unit_test(step_response_is_multiplicative_decrease),
		cmocka_unit_test(no_growth_while_not_binding),
		cmocka_unit_test(start_is_bounded),
		cmocka_unit_test(ramp_climbs_in_stages),
		cmocka_unit_test(shallow_cut_climbs_without_a_ramp),
		cmocka_unit_test(ramp_aims_no_higher_than_the_service_managed),
		cmocka_unit_test(a_draining_queue_is_not_cut_again),
		cmocka_unit_test(the_drain_after_a_stall_holds_the_ramp),
		cmocka_unit_test(no_accepts_with_a_queue_does_not_end_an_episode),
		cmocka_unit_test(ramp_is_abandoned_on_overload),
		cmocka_unit_test(no_ramp_means_straight_to_steady),
		cmocka_unit_test(restart_mid_ramp_carries_on),
		cmocka_unit_test(import_checks_the_record),
		cmocka_unit_test(accept_rate_uses_the_measured_tick),
		cmocka_unit_test(a_long_tick_cuts_once),
		cmocka_unit_test(no_wind_up_on_syns_that_never_complete),
		cmocka_unit_test(blind_controller_holds),
		cmocka_unit_test(queue_draining_without_accept_samples_is_not_a_stall),
		cmocka_unit_test(explicit_target_needs_samples_and_an_interval),
		cmocka_unit_test(served_rate_is_over_a_second),
		cmocka_unit_test(episode_from_calm_climbs_on_from_the_served_peak),
		cmocka_unit_test(far_above_the_target_is_overload_at_once),
		cmocka_unit_test(headroom_climbs_faster_only_near_the_baseline),
		cmocka_unit_test(import_ages_the_record),
		cmocka_unit_test(open_start_doubles_until_the_first_overload),
		cmocka_unit_test(open_start_holds_a_flood_that_does_not_complete),
	};

	return cmocka_run_group_tests_name("aimd", tests, NULL, NULL);
}
