// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_conc.c - the door's concurrency limit (user/core/conc.c): off until
 * an overload the latency shows on connections of several requests; then
 * Little's cap (live - served x (latency - target)), split by priority,
 * each class's SYN rate at most its closes plus its room; growth while it
 * binds and the latency is calm, lifted after a calm with room to spare;
 * the allocator's rates under the caps (alloc_rates_capped()).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "conc.h"

#define CP SHEDD_CRITICAL_PLUS
#define CR SHEDD_CRITICAL
#define SP SHEDD_SHEDDABLE_PLUS
#define SH SHEDD_SHEDDABLE
#define MS 1000000ULL
#define SEC 1000000000ULL
#define TICK (100 * MS)

static const struct alloc_params floors10 = {
	.floor = { 0.1, 0.1, 0.1, 0.1 },
};

struct rig {
	struct conc_params p;
	struct conc_state s;
	struct shedd_conn_count conns[SHEDD_CONN_SLOTS];
	double syn[SHEDD_NR_CLASSES];
	struct conc_input in;
};

static void rig_init(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	conc_defaults(&r->p);
	conc_init(&r->s);
	r->in = (struct conc_input){
		.have_conns = true,
		.conns = r->conns,
		.default_class = SH,
		.rpc = 20,
		.served = 200,
		.latency_ns = 50 * MS,
		.target_ns = 200 * MS,
		.syn_demand = r->syn,
		.now_ns = 10 * SEC,
		.dt_ns = TICK,
	};
}

/* live connections of slot @slot: @n more opened. */
static void open_n(struct rig *r, int slot, __u64 n)
{
	r->conns[slot].opened += n;
}

static void close_n(struct rig *r, int slot, __u64 n)
{
	r->conns[slot].closed += n;
}

static void step(struct rig *r)
{
	conc_step(&r->p, &floors10, &r->s, &r->in);
	r->in.now_ns += r->in.dt_ns;
}

static void calm_sets_no_limit(void **state)
{
	struct rig r;
	int c;

	rig_init(&r);
	open_n(&r, SH, 240);
	step(&r);
	assert_false(r.s.engaged);
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		assert_true(r.s.rate_cap[c] < 0);
	assert_float_equal(conc_live(&r.s), 240, 1e-9);
}

/* 240 live, 200 answered/s at 1.2 s against a target of 200 ms: 200
 * requests wait beyond the target, so 40 connections are what the
 * service serves in time. */
static void latency_overload_caps_at_littles_law(void **state)
{
	struct rig r;

	rig_init(&r);
	open_n(&r, SH, 240);
	r.in.latency_overload = true;
	r.in.latency_ns = 1200 * MS;
	step(&r);
	assert_true(r.s.engaged);
	assert_float_equal(r.s.cap, 40, 1e-9);
	/* All of it in the one class that holds connections, but for the
	 * headroom shared by floors: the classes' shares add up to it. */
	assert_float_equal(r.s.class_cap[CP] + r.s.class_cap[CR] + r.s.class_cap[SP] +
				   r.s.class_cap[SH], 40, 1e-9);
	/* 240 live against its share: no room, nothing closes: shut. */
	assert_float_equal(r.s.rate_cap[SH], 0, 1e-9);
}

/* The latency after a cut is of requests queued before it: the cut holds
 * until the live connections are down to it and then for the latency it
 * was made at; after that, an overload cuts again from what is live. */
static void a_cut_holds_while_its_queue_drains(void **state)
{
	struct rig r;
	int i;

	rig_init(&r);
	open_n(&r, SH, 240);
	r.in.latency_overload = true;
	r.in.latency_ns = 1200 * MS; /* cap 40 */
	step(&r);
	assert_float_equal(r.s.cap, 40, 1e-9);
	/* 140 leave; the latency is still the queue's: held, however long
	 * it takes the others to leave. */
	close_n(&r, SH, 140);
	for (i = 0; i < 30; i++) {
		step(&r);
		assert_float_equal(r.s.cap, 40, 1e-9);
	}
	/* Down to it: held 1.2 s more. */
	close_n(&r, SH, 60);
	for (i = 0; i < 12; i++) {
		step(&r);
		assert_float_equal(r.s.cap, 40, 1e-9);
	}
	/* Still overloaded at 40 live, 1.2 s: 40 - 200, the floor. */
	step(&r);
	assert_float_equal(r.s.cap, r.p.min_cap, 1e-9);
}

/* Clients that pace their requests (2 a second each): 50 calm, answered
 * in 20 ms, spend Z = 50 / 100 - 0.02 = 0.48 s outside the service. 400
 * more come; under the overload each sends its next request as soon as
 * the last is answered, so Z is gone (450 / 200 - 2.2 = 0.05) and the
 * law alone would cut to 30 where 200 x (0.1 + 0.48) = 116 fit. The
 * first cut is 116; once held, an overload that goes on cuts again from
 * what is live, by the law. */
static void paced_clients_are_cut_from_their_calm_think_time(void **state)
{
	struct rig r;
	int i;

	rig_init(&r);
	r.in.target_ns = 100 * MS;
	r.in.served = 100;
	r.in.latency_ns = 20 * MS;
	open_n(&r, SH, 50);
	for (i = 0; i < 60; i++)
		step(&r);
	assert_false(r.s.engaged);
	assert_true(r.s.have_think);
	assert_float_equal(r.s.think_sec, 0.48, 1e-6);
	open_n(&r, SH, 400);
	r.in.served = 200;
	r.in.latency_overload = true;
	r.in.latency_ns = 2200 * MS;
	step(&r);
	assert_true(r.s.engaged);
	assert_float_equal(r.s.cap, 116, 1e-6);
	/* 335 go (recalled, or gone); the latency is still the queue's for
	 * 2.2 s: held. */
	close_n(&r, SH, 335);
	for (i = 0; i < 22; i++) {
		step(&r);
		assert_float_equal(r.s.cap, 116, 1e-6);
	}
	/* Still over at 300 ms: 115 live - 200 x 0.2. */
	r.in.latency_ns = 300 * MS;
	step(&r);
	assert_float_equal(r.s.cap, 75, 1e-6);
}

/* Clients that never think (wrk): Z is 0 calm too, and the first cut is
 * the law's. A calm Z from too few answers (under 10/s), or from a
 * latency above the target, is not taken. */
static void clients_that_never_think_are_cut_by_the_law(void **state)
{
	struct rig r;
	int i;

	rig_init(&r);
	r.in.target_ns = 300 * MS;
	r.in.served = 5;
	r.in.latency_ns = 20 * MS;
	open_n(&r, SH, 50);
	step(&r);
	assert_false(r.s.have_think);
	/* Nor from a latency above the target before its verdict (a queue:
	 * 50 / 15 - 1 s would read 2.3 s of thinking). */
	r.in.served = 15;
	r.in.latency_ns = 1000 * MS;
	step(&r);
	assert_false(r.s.have_think);
	r.in.served = 200;
	r.in.latency_ns = 250 * MS; /* 50 / 200: no time outside */
	for (i = 0; i < 60; i++)
		step(&r);
	assert_true(r.s.have_think);
	assert_float_equal(r.s.think_sec, 0, 1e-9);
	open_n(&r, SH, 400);
	r.in.latency_overload = true;
	r.in.latency_ns = 2250 * MS;
	step(&r);
	assert_float_equal(r.s.cap, 450 - 200 * 1.95, 1e-6);
}

static void one_request_per_connection_is_the_syn_limits(void **state)
{
	struct rig r;

	rig_init(&r);
	open_n(&r, SH, 240);
	r.in.latency_overload = true;
	r.in.latency_ns = 1200 * MS;
	r.in.rpc = 1;
	step(&r);
	assert_false(r.s.engaged);
	assert_true(r.s.rate_cap[SH] < 0);
}

static void other_overloads_set_no_limit(void **state)
{
	struct rig r;

	rig_init(&r);
	open_n(&r, SH, 240);
	/* A verdict without latency among its reasons (a full accept
	 * queue): latency below the target. */
	r.in.latency_overload = false;
	r.in.latency_ns = 1200 * MS;
	step(&r);
	assert_false(r.s.engaged);
	/* Latency over target, but no verdict yet (the interval). */
	r.in.latency_overload = false;
	step(&r);
	assert_false(r.s.engaged);
}

static void never_below_min_cap(void **state)
{
	struct rig r;

	rig_init(&r);
	open_n(&r, SH, 20);
	r.in.latency_overload = true;
	r.in.latency_ns = 5 * SEC;
	step(&r);
	assert_true(r.s.engaged);
	assert_float_equal(r.s.cap, r.p.min_cap, 1e-9);
}

/* The connections no prefix names count in the default class. */
static void unnamed_peers_count_in_the_default_class(void **state)
{
	struct rig r;

	rig_init(&r);
	r.in.default_class = SP;
	open_n(&r, SHEDD_NR_CLASSES, 30);
	open_n(&r, SP, 5);
	open_n(&r, CR, 7);
	step(&r);
	assert_float_equal(r.s.live[SP], 35, 1e-9);
	assert_float_equal(r.s.live[CR], 7, 1e-9);
	assert_float_equal(r.s.live[SH], 0, 1e-9);
}

/* Under the cap, the higher class keeps its connections and its room;
 * the lowest gives up what is too many. */
static void priority_decides_who_waits(void **state)
{
	struct rig r;

	rig_init(&r);
	open_n(&r, CR, 30);
	open_n(&r, SH, 210);
	r.syn[CR] = 10; /* 5 more over tau */
	r.syn[SH] = 100;
	r.in.latency_overload = true;
	r.in.latency_ns = 1200 * MS; /* cap 40 */
	step(&r);
	assert_float_equal(r.s.cap, 40, 1e-9);
	/* Floors 4 each, then critical's want (30 + 5) first. */
	assert_true(r.s.class_cap[CR] >= 35 - 1e-9);
	assert_true(r.s.class_cap[SH] < 210);
	/* Critical has room: 10 SYN/s over tau; sheddable none. */
	assert_true(r.s.rate_cap[CR] >= (35 - 30) / r.p.tau_sec - 1e-9);
	assert_float_equal(r.s.rate_cap[SH], 0, 1e-9);
}

/* A class at its cap takes one in as one leaves: its rate is its
 * closes, smoothed. */
static void a_class_at_its_cap_follows_its_closes(void **state)
{
	struct rig r;
	int i;

	rig_init(&r);
	open_n(&r, SH, 240);
	r.in.latency_overload = true;
	r.in.latency_ns = 1200 * MS;
	step(&r);
	r.in.latency_overload = false;
	r.in.latency_ns = 50 * MS;
	r.p.growth = 0; /* hold the cap: only one step of one a tick */
	for (i = 0; i < 50; i++) {
		/* 5 close and 5 open a tick: 50/s each way. */
		close_n(&r, SH, 5);
		open_n(&r, SH, 5);
		step(&r);
	}
	assert_true(r.s.engaged);
	assert_float_equal(r.s.close_rate[SH], 50, 1);
}

/* Calm (the latency within its target), a binding cap climbs; with room
 * to spare for release_ns, lifted. */
static void calm_grows_then_lifts(void **state)
{
	struct rig r;
	double cap0;
	int i;

	rig_init(&r);
	open_n(&r, SH, 100);
	r.in.latency_overload = true;
	r.in.latency_ns = 400 * MS; /* 100 - 200 x 0.2 = 60 */
	step(&r);
	cap0 = r.s.cap;
	assert_float_equal(cap0, 60, 1e-9);
	/* A tick between two verdicts, the latency still over its target:
	 * no verdict, and no calm either; the cap holds. */
	r.in.latency_overload = false;
	step(&r);
	assert_float_equal(r.s.cap, 60, 1e-9);
	r.in.latency_ns = 50 * MS;
	step(&r);
	/* 100 live >= 90 % of 60: binds, +5 % (3). */
	assert_float_equal(r.s.cap, 63, 1e-9);
	/* Most leave: 10 live; the cap no longer binds and stops growing. */
	close_n(&r, SH, 90);
	step(&r);
	cap0 = r.s.cap;
	for (i = 0; i < 99; i++)
		step(&r);
	assert_true(r.s.engaged);
	assert_float_equal(r.s.cap, cap0, 1e-9);
	for (i = 0; i < 2; i++)
		step(&r);
	assert_false(r.s.engaged);
	assert_true(r.s.rate_cap[SH] < 0);
}

static void off_or_uncounted_sets_no_limit(void **state)
{
	struct rig r;

	rig_init(&r);
	open_n(&r, SH, 240);
	r.in.latency_overload = true;
	r.in.latency_ns = 1200 * MS;
	r.p.on = false;
	step(&r);
	assert_false(r.s.engaged);
	r.p.on = true;
	r.in.have_conns = false;
	step(&r);
	assert_false(r.s.engaged);
	/* Engaged, then the counts go: lifted. */
	r.in.have_conns = true;
	step(&r);
	assert_true(r.s.engaged);
	r.in.have_conns = false;
	step(&r);
	assert_false(r.s.engaged);
}

/* The allocator under the caps: a capped class gets its cap and a burst
 * of its own rate's share, an uncapped one its split; nothing moves from
 * one to the other. */
static void rates_under_the_caps(void **state)
{
	double demand[SHEDD_NR_CLASSES] = { 0, 100, 0, 2000 };
	double cap[SHEDD_NR_CLASSES] = { -1, -1, -1, 25 };
	struct shedd_class_rate free_[SHEDD_NR_CLASSES], capped[SHEDD_NR_CLASSES];

	memset(free_, 0, sizeof(free_));
	memset(capped, 0, sizeof(capped));

	alloc_rates(&floors10, 1000, 100, demand, 1, free_);
	alloc_rates_capped(&floors10, 1000, 100, demand, 1, cap, capped);
	assert_true(free_[SH].rate_per_sec > 25);
	assert_int_equal(capped[SH].rate_per_sec, 25);
	assert_int_equal(capped[SH].burst, 3); /* 100 x 25 / 1000, rounded up */
	assert_int_equal(capped[CR].rate_per_sec, free_[CR].rate_per_sec);
	assert_int_equal(capped[CP].rate_per_sec, free_[CP].rate_per_sec);
	/* NULL is alloc_rates(). */
	alloc_rates_capped(&floors10, 1000, 100, demand, 1, NULL, capped);
	assert_memory_equal(capped, free_, sizeof(free_));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(calm_sets_no_limit),
		cmocka_unit_test(latency_overload_caps_at_littles_law),
		cmocka_unit_test(a_cut_holds_while_its_queue_drains),
		cmocka_unit_test(paced_clients_are_cut_from_their_calm_think_time),
		cmocka_unit_test(clients_that_never_think_are_cut_by_the_law),
		cmocka_unit_test(one_request_per_connection_is_the_syn_limits),
		cmocka_unit_test(other_overloads_set_no_limit),
		cmocka_unit_test(never_below_min_cap),
		cmocka_unit_test(unnamed_peers_count_in_the_default_class),
		cmocka_unit_test(priority_decides_who_waits),
		cmocka_unit_test(a_class_at_its_cap_follows_its_closes),
		cmocka_unit_test(calm_grows_then_lifts),
		cmocka_unit_test(off_or_uncounted_sets_no_limit),
		cmocka_unit_test(rates_under_the_caps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
