// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_alloc.c - the allocator (user/core/alloc.c): floors, priority order,
 * headroom nobody demands, integer rounding in priority order, and each
 * class's burst, lease and batch.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "alloc.h"

#define CP SHEDD_CRITICAL_PLUS
#define CR SHEDD_CRITICAL
#define SP SHEDD_SHEDDABLE_PLUS
#define SH SHEDD_SHEDDABLE

static const struct alloc_params floors10 = {
	.floor = { 0.1, 0.1, 0.1, 0.1 },
};

static double sum4(const double *v)
{
	return v[0] + v[1] + v[2] + v[3];
}

static void demand_below_total_is_met_and_rest_is_headroom(void **state)
{
	double demand[4] = { 100, 200, 50, 0 }, out[4];

	alloc_classes(&floors10, 1000, demand, out);
	/* Demand 350 met; the 650 left is shared by the floors: 162.5 each. */
	assert_float_equal(out[CP], 262.5, 1e-9);
	assert_float_equal(out[CR], 362.5, 1e-9);
	assert_float_equal(out[SP], 212.5, 1e-9);
	assert_float_equal(out[SH], 162.5, 1e-9);
	assert_float_equal(sum4(out), 1000, 1e-9);
}

static void overload_sheds_lowest_class_first(void **state)
{
	double demand[4] = { 300, 300, 300, 5000 }, out[4];

	alloc_classes(&floors10, 1000, demand, out);
	/* Floors: 100 each; then 600 in priority order: cp +200, cr +200,
	 * sp +200; sheddable keeps its floor only. */
	assert_float_equal(out[CP], 300, 1e-9);
	assert_float_equal(out[CR], 300, 1e-9);
	assert_float_equal(out[SP], 300, 1e-9);
	assert_float_equal(out[SH], 100, 1e-9);
}

static void floor_protects_low_class_from_a_high_flood(void **state)
{
	double demand[4] = { 100000, 0, 0, 500 }, out[4];

	alloc_classes(&floors10, 1000, demand, out);
	assert_float_equal(out[SH], 100, 1e-9);
	assert_float_equal(out[CP], 900, 1e-9);
	/* Classes with no demand get nothing beyond what is left: nothing. */
	assert_float_equal(out[CR], 0, 1e-9);
	assert_float_equal(out[SP], 0, 1e-9);
}

static void floor_is_capped_by_demand(void **state)
{
	double demand[4] = { 10, 20, 5000, 5000 }, out[4];

	alloc_classes(&floors10, 1000, demand, out);
	/* cp and cr use 30 of their 200 of floors; sp takes the rest in
	 * priority order after its floor; sh keeps its floor. */
	assert_float_equal(out[CP], 10, 1e-9);
	assert_float_equal(out[CR], 20, 1e-9);
	assert_float_equal(out[SH], 100, 1e-9);
	assert_float_equal(out[SP], 870, 1e-9);
	assert_float_equal(sum4(out), 1000, 1e-9);
}

static void headroom_is_taken_from_lower_classes(void **state)
{
	struct alloc_params p = floors10;
	double demand[4] = { 300, 300, 0, 20000 }, out[4];

	p.headroom = 0.1;
	alloc_classes(&p, 1000, demand, out);
	/* cp and cr get their demand plus 10 %, so their own jitter is not
	 * shed; the flood of sheddable pays for it. */
	assert_float_equal(out[CP], 330, 1e-9);
	assert_float_equal(out[CR], 330, 1e-9);
	assert_float_equal(out[SH], 340, 1e-9);
	assert_float_equal(out[SP], 0, 1e-9);
}

static void zero_floors_share_headroom_evenly(void **state)
{
	struct alloc_params p = { .floor = { 0, 0, 0, 0 } };
	double demand[4] = { 0, 0, 0, 0 }, out[4];

	alloc_classes(&p, 400, demand, out);
	assert_float_equal(out[CP], 100, 1e-9);
	assert_float_equal(out[SH], 100, 1e-9);
	/* Without floors a flood of a high class takes everything. */
	demand[CP] = 1000;
	demand[SH] = 1000;
	alloc_classes(&p, 400, demand, out);
	assert_float_equal(out[CP], 400, 1e-9);
	assert_float_equal(out[SH], 0, 1e-9);
}

static void rounding_keeps_the_sum(void **state)
{
	double in[4] = { 2.5, 2.5, 2.5, 2.5 }, in3[3] = { 1.0 / 3, 1.0 / 3, 1.0 / 3 };
	__u64 out[4];

	alloc_round(in, 4, out);
	assert_int_equal(out[0] + out[1] + out[2] + out[3], 10);
	alloc_round(in3, 3, out);
	assert_int_equal(out[0] + out[1] + out[2], 1);
	/* The fraction goes to the first entry, not the largest remainder:
	 * a critical class of 1.1/s gets 2, a flood of 38.9/s gets 38. */
	in[0] = 1.1;
	in[1] = 0;
	in[2] = 0;
	in[3] = 38.9;
	alloc_round(in, 4, out);
	assert_int_equal(out[0], 2);
	assert_int_equal(out[3], 38);
}

static void demand_rises_fast_and_decays_slowly(void **state)
{
	assert_float_equal(alloc_demand(10, 1000), 1000, 1e-9);
	assert_float_equal(alloc_demand(1000, 0), 500, 1e-9);
	assert_float_equal(alloc_demand(500, 100), 300, 1e-9);
}

static void class_rates_add_up(void **state)
{
	enum { NCPU = 3 };
	double demand[4 * NCPU] = {
		/* cp */ 0, 0, 0, /* cr */ 100, 100, 0,
		/* sp */ 0, 0, 0, /* sh */ 30000, 0, 0,
	};
	struct shedd_class_rate out[4];
	int c;

	alloc_rates(&floors10, 1000, 100, demand, NCPU, out);
	assert_int_equal(out[CP].rate_per_sec + out[CR].rate_per_sec + out[SP].rate_per_sec +
				 out[SH].rate_per_sec,
			 1000);
	/* cr: 200 demanded, met; sh: all the rest, since cp and sp demand
	 * nothing and an unused floor is not held back from a flood. */
	assert_int_equal(out[CR].rate_per_sec, 200);
	assert_int_equal(out[SH].rate_per_sec, 800);
	assert_int_equal(out[CP].rate_per_sec, 0);
	/* Bursts: the share of the total depth, at least twice the floor's
	 * share (20 of 100 here). */
	assert_int_equal(out[SH].burst, 80);
	assert_int_equal(out[CR].burst, 20);
	assert_int_equal(out[CP].burst, 20);
	for (c = 0; c < 4; c++) {
		assert_true(out[c].batch >= 1);
		assert_in_range(out[c].lease_ns, ALLOC_MIN_LEASE_NS, ALLOC_MAX_LEASE_NS);
	}
}

/* The lease is a sixteenth of the time the burst lasts, within bounds; the
 * batch lets the CPUs that see the class take about one lease of tokens. */
static void lease_and_batch(void **state)
{
	enum { NCPU = 4 };
	double demand[4 * NCPU] = { 0 };
	struct shedd_class_rate out[4];

	/* 1M/s flood on 4 CPUs, burst 100 000: the burst lasts 100 ms,
	 * 6.25 ms > the 1 ms bound; 1M/s * 1 ms / 4 CPUs = 250. */
	demand[SH * NCPU + 0] = demand[SH * NCPU + 1] = 500000;
	demand[SH * NCPU + 2] = demand[SH * NCPU + 3] = 500000;
	alloc_rates(&floors10, 1000000, 100000, demand, NCPU, out);
	assert_int_equal(out[SH].rate_per_sec, 1000000);
	assert_int_equal(out[SH].lease_ns, ALLOC_MAX_LEASE_NS);
	assert_int_equal(out[SH].batch, 250);
	/* 100/s, burst 10: 100 ms / 16 = 6.25 ms -> 1 ms; 0.1 token: 1. */
	memset(demand, 0, sizeof(demand));
	demand[SH * NCPU] = 1000;
	alloc_rates(&floors10, 100, 10, demand, NCPU, out);
	assert_int_equal(out[SH].lease_ns, ALLOC_MAX_LEASE_NS);
	assert_int_equal(out[SH].batch, 1);
	/* 10 000/s all to a flood, burst 1: 100 us / 16 = 6.25 us. */
	demand[SH * NCPU] = 1000000;
	alloc_rates(&floors10, 10000, 1, demand, NCPU, out);
	assert_int_equal(out[SH].rate_per_sec, 10000);
	assert_int_equal(out[SH].lease_ns, 6250);
}

/* A new rate is published with the mean rate since the reserve's last
 * refill, so an idle reserve is credited exactly over several changes. */
static void publish_keeps_the_idle_mean(void **state)
{
	struct shedd_class_rate pub = { 0 }, next = { .rate_per_sec = 100, .burst = 10 };

	alloc_publish(&pub, &next, 0, 1000);
	assert_int_equal(pub.flags, SHEDD_RATE_SET);
	assert_int_equal(pub.changed_ns, 1000);
	/* Refilled at 1500, after the change: prev is the old rate. */
	next.rate_per_sec = 300;
	alloc_publish(&pub, &next, 1500, 2000);
	assert_int_equal(pub.prev_rate_per_sec, 100);
	assert_int_equal(pub.changed_ns, 2000);
	/* Still last refilled at 1500: 500 ns at 100, 1000 ns at 300. */
	next.rate_per_sec = 50;
	alloc_publish(&pub, &next, 1500, 3000);
	assert_int_equal(pub.prev_rate_per_sec, (100 * 500 + 300 * 1000) / 1500);
	assert_int_equal(pub.rate_per_sec, 50);
	/* The same rate again changes nothing of the piecewise refill. */
	alloc_publish(&pub, &next, 1500, 4000);
	assert_int_equal(pub.changed_ns, 3000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(demand_below_total_is_met_and_rest_is_headroom),
		cmocka_unit_test(overload_sheds_lowest_class_first),
		cmocka_unit_test(floor_protects_low_class_from_a_high_flood),
		cmocka_unit_test(floor_is_capped_by_demand),
		cmocka_unit_test(headroom_is_taken_from_lower_classes),
		cmocka_unit_test(zero_floors_share_headroom_evenly),
		cmocka_unit_test(rounding_keeps_the_sum),
		cmocka_unit_test(demand_rises_fast_and_decays_slowly),
		cmocka_unit_test(class_rates_add_up),
		cmocka_unit_test(lease_and_batch),
		cmocka_unit_test(publish_keeps_the_idle_mean),
	};

	return cmocka_run_group_tests_name("alloc", tests, NULL, NULL);
}
