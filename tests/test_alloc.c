// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_alloc.c - the allocator (user/alloc.c): floors, priority order,
 * headroom nobody demands, the per-CPU split and integer rounding.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "alloc.h"

#define CP SHEDD_CRITICAL_PLUS
#define CR SHEDD_CRITICAL
#define SP SHEDD_SHEDDABLE_PLUS
#define SH SHEDD_SHEDDABLE

static const struct alloc_params floors10 = {
	.floor = { 0.1, 0.1, 0.1, 0.1 },
	.cpu_min_share = 0.05,
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

static void cpu_split_follows_demand(void **state)
{
	double demand[2] = { 9000, 0 }, out[2];

	/* An RSS-skewed flood on CPU 0: it gets all but the minimum share. */
	alloc_cpus(1000, demand, 2, 0.05, out);
	assert_float_equal(out[0], 975, 1e-9);
	assert_float_equal(out[1], 25, 1e-9);

	demand[0] = 300;
	demand[1] = 100;
	alloc_cpus(1000, demand, 2, 0, out);
	assert_float_equal(out[0], 750, 1e-9);
	assert_float_equal(out[1], 250, 1e-9);

	demand[0] = demand[1] = 0;
	alloc_cpus(1000, demand, 2, 0.05, out);
	assert_float_equal(out[0], 500, 1e-9);
	assert_float_equal(out[1], 500, 1e-9);
}

static void rounding_keeps_the_sum(void **state)
{
	double in[4] = { 2.5, 2.5, 2.5, 2.5 }, in3[3] = { 1.0 / 3, 1.0 / 3, 1.0 / 3 };
	__u64 out[4];

	alloc_round(in, 4, out);
	assert_int_equal(out[0] + out[1] + out[2] + out[3], 10);
	alloc_round(in3, 3, out);
	assert_int_equal(out[0] + out[1] + out[2], 1);
}

static void demand_rises_fast_and_decays_slowly(void **state)
{
	assert_float_equal(alloc_demand(10, 1000), 1000, 1e-9);
	assert_float_equal(alloc_demand(1000, 0), 500, 1e-9);
	assert_float_equal(alloc_demand(500, 100), 300, 1e-9);
}

static void rates_per_cpu_add_up(void **state)
{
	enum { NCPU = 3 };
	double demand[4 * NCPU] = {
		/* cp */ 0, 0, 0, /* cr */ 100, 100, 0,
		/* sp */ 0, 0, 0, /* sh */ 30000, 0, 0,
	};
	struct shedd_rate out[4 * NCPU];
	__u64 cls[4] = { 0 };
	int c, i;

	alloc_rates(&floors10, 1000, 100, demand, NCPU, out);
	for (c = 0; c < 4; c++) {
		for (i = 0; i < NCPU; i++) {
			cls[c] += out[c * NCPU + i].rate_per_sec;
			assert_true(out[c * NCPU + i].burst >= 1);
		}
	}
	assert_int_equal(cls[0] + cls[1] + cls[2] + cls[3], 1000);
	/* cr: 200 demanded, met; sh: all the rest, since cp and sp demand
	 * nothing and an unused floor is not held back from a flood. */
	assert_int_equal(cls[CR], 200);
	assert_int_equal(cls[SH], 800);
	assert_int_equal(cls[CP], 0);
	/* sheddable's flood is all on CPU 0: 95 % of 800 plus its third of
	 * the 5 % spread evenly. */
	assert_in_range(out[SH * NCPU + 0].rate_per_sec, 773, 774);
	/* cr is split evenly between the two CPUs that see it. */
	assert_int_equal(out[CR * NCPU + 0].rate_per_sec, out[CR * NCPU + 1].rate_per_sec);
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
		cmocka_unit_test(cpu_split_follows_demand),
		cmocka_unit_test(rounding_keeps_the_sum),
		cmocka_unit_test(demand_rises_fast_and_decays_slowly),
		cmocka_unit_test(rates_per_cpu_add_up),
	};

	return cmocka_run_group_tests_name("alloc", tests, NULL, NULL);
}
