// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_layout.c - the conversions of older pinned values into today's
 * layouts (user/maps/layout.c): an appended layout is a prefix, its new fields
 * 0; the stats of the layouts before verified admission move each
 * per-class counter to its field; every map the program has is known.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "layout.h"

static const struct layout_older *older_of(const struct layout_map *m, __u32 size)
{
	const struct layout_older *o;

	for (o = m->older; o && o->value_size; o++)
		if (o->value_size == size)
			return o;
	return NULL;
}

static void test_every_map_known(void **state)
{
	const char *names[] = { "settings", "ports", "prefix_v4", "prefix_v6", "rates", "reserve",
				"buckets", "stats", "rst_budget", "ctl_state", "cookie_budget",
				"refresh", "mss_cache", "proven", "handoff_stats", "ctl_cmd",
				"manual_v4", "manual_v6", "daemon_stats", "cookie_sent", "layout",
				"settings_cur", "flow_key", "broadcast", "tun_config", "tun_stats",
				"tun_local", "port_set", "fair_cells", "fair_config", "fair_heavy",
				"fair_stats", "sysctls", "layout_compat", "lease", "port_limit",
				"port_reserve", "port_buckets", "tun_devs", "tun_checks",
				"tun_reserve", "tun_buckets", "syn_checks",
				"fair_heavy_cpu" };
	size_t i, n;

	(void)state;
	layout_all(&n);
	assert_int_equal(n, sizeof(names) / sizeof(names[0]));
	for (i = 0; i < n; i++)
		assert_non_null(layout_find(names[i]));
	assert_null(layout_find("nosuch"));
	assert_int_equal(layout_find("stats")->value_size, sizeof(struct shedd_stats));
	assert_true(layout_find("stats")->flags & LAYOUT_COUNTERS);
}

/* proven of layout 2 (hash << 32 | stamp): its words are today's stamp
 * and hash, the segment's numbers 0. */
static void test_proven_older(void **state)
{
	const struct layout_map *m = layout_find("proven");
	struct layout_fit fit = { .value_size = sizeof(__u64) };
	__u64 in = (__u64)0xdeadbeefU << 32 | 0x1235U;
	struct shedd_proven out;

	(void)state;
	assert_int_equal(m->value_size, sizeof(struct shedd_proven));
	fit.from = older_of(m, sizeof(__u64));
	assert_non_null(fit.from);
	memset(&out, 0xab, sizeof(out));
	layout_convert(m, &fit, &in, &out);
	assert_int_equal(out.stamp, 0x1235U);
	assert_int_equal(out.hash, 0xdeadbeefU);
	assert_int_equal(out.seq, 0);
	assert_int_equal(out.ack, 0);
}

/* daemon_stats version 1: a prefix; layout_migrations starts at 0. */
static void test_prefix(void **state)
{
	const struct layout_map *m = layout_find("daemon_stats");
	struct layout_fit fit = { .value_size = SHEDD_DAEMON_STATS_V1_SIZE };
	struct shedd_daemon_stats in, out;

	(void)state;
	fit.from = older_of(m, SHEDD_DAEMON_STATS_V1_SIZE);
	assert_non_null(fit.from);
	memset(&in, 0xab, sizeof(in));
	in.version = 1;
	in.ticks = 12345;
	in.latency.sum_ns = 777;
	layout_convert(m, &fit, &in, &out);
	assert_int_equal(out.version, 1);
	assert_int_equal(out.ticks, 12345);
	assert_int_equal(out.latency.sum_ns, 777);
	assert_int_equal(out.layout_migrations, 0);
}

/* stats of the first layout: cls[4] of {syn, admitted, dropped, rst_sent},
 * then packets..malformed. */
static void test_stats_word_map(void **state)
{
	const struct layout_map *m = layout_find("stats");
	struct layout_fit fit = { .value_size = 4 * 32 + 7 * 8 };
	__u64 in[4 * 4 + 7];
	struct shedd_stats out;
	int c, i;

	(void)state;
	fit.from = older_of(m, fit.value_size);
	assert_non_null(fit.from);
	assert_non_null(fit.from->word_of);
	for (i = 0; i < 4 * 4 + 7; i++)
		in[i] = 100 + (__u64)i;
	layout_convert(m, &fit, in, &out);
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		assert_int_equal(out.cls[c].syn, 100 + c * 4);
		assert_int_equal(out.cls[c].admitted, 101 + c * 4);
		assert_int_equal(out.cls[c].dropped, 102 + c * 4);
		assert_int_equal(out.cls[c].rst_sent, 103 + c * 4);
		assert_int_equal(out.cls[c].charged, 0);
		assert_int_equal(out.cls[c].ack_refused, 0);
	}
	assert_int_equal(out.packets, 116);
	assert_int_equal(out.malformed, 122);
	assert_int_equal(out.frag_judged, 0);
	assert_int_equal(out.syn_tuple_busy, 0);
}

/* The layout after verified admission but before syn_tuple_busy: a prefix. */
static void test_stats_prefix(void **state)
{
	const struct layout_map *m = layout_find("stats");
	struct layout_fit fit = { .value_size = 4 * 88 + 19 * 8 };
	struct shedd_stats in, out;

	(void)state;
	fit.from = older_of(m, fit.value_size);
	assert_non_null(fit.from);
	assert_null(fit.from->word_of);
	memset(&in, 0, sizeof(in));
	in.cls[2].ack_valid = 9;
	in.ack_repeat = 5;
	in.syn_tuple_busy = 0xdead; /* beyond the older value: not read */
	layout_convert(m, &fit, &in, &out);
	assert_int_equal(out.cls[2].ack_valid, 9);
	assert_int_equal(out.ack_repeat, 5);
	assert_int_equal(out.syn_tuple_busy, 0);
	/* Today's layout converts to itself. */
	fit.from = NULL;
	fit.value_size = sizeof(in);
	layout_convert(m, &fit, &in, &out);
	assert_memory_equal(&in, &out, sizeof(in));
	/* A size no layout had is not an older layout. */
	assert_null(older_of(m, 4 * 88 + 21 * 8));
	assert_null(older_of(layout_find("rates"), 16));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_map_known),
		cmocka_unit_test(test_prefix),
		cmocka_unit_test(test_proven_older),
		cmocka_unit_test(test_stats_word_map),
		cmocka_unit_test(test_stats_prefix),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
