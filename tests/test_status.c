// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_status.c - the counters the daemon turns into demand and into the
 * status line: demand is what asked for a token (charged), not the SYNs
 * offered; cookies and proven ACKs show only where there are any.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lease.h"
#include "status.h"

/* Two CPUs; sheddable on CPU 1 is flooded: 1000 SYNs answered with
 * cookies, 30 proven, plus 20 charged directly. */
static void demand_is_charged(void **state)
{
	struct shedd_stats prev[2], cur[2];
	double demand[SHEDD_NR_CLASSES * 2];

	memset(prev, 0, sizeof(prev));
	memset(cur, 0, sizeof(cur));
	cur[1].cls[SHEDD_SHEDDABLE].syn = 1020;
	cur[1].cls[SHEDD_SHEDDABLE].cookie_sent = 1000;
	cur[1].cls[SHEDD_SHEDDABLE].ack_valid = 30;
	cur[1].cls[SHEDD_SHEDDABLE].charged = 50;
	cur[0].cls[SHEDD_CRITICAL].syn = 8;
	cur[0].cls[SHEDD_CRITICAL].charged = 8;
	stats_demand(prev, cur, 2, 0.5, demand);
	assert_float_equal(demand[SHEDD_SHEDDABLE * 2 + 1], 100.0, 1e-9);
	assert_float_equal(demand[SHEDD_SHEDDABLE * 2 + 0], 0.0, 1e-9);
	assert_float_equal(demand[SHEDD_CRITICAL * 2 + 0], 16.0, 1e-9);
}

static void status_line_shows_cookies_where_there_are(void **state)
{
	struct shedd_stats prev, cur;
	char line[1024];

	memset(&prev, 0, sizeof(prev));
	memset(&cur, 0, sizeof(cur));
	cur.cls[SHEDD_CRITICAL].syn = 10;
	cur.cls[SHEDD_CRITICAL].admitted = 10;
	cur.cls[SHEDD_SHEDDABLE].syn = 1020;
	cur.cls[SHEDD_SHEDDABLE].cookie_sent = 1000;
	cur.cls[SHEDD_SHEDDABLE].ack_valid = 30;
	status_format(line, sizeof(line), &prev, &cur, 2.0, 100);
	assert_non_null(strstr(line, "| critical in=5 adm=5 drop=0 rst=0 |"));
	assert_non_null(strstr(line, "| sheddable in=510 adm=0 drop=0 rst=0 cookies=500 proven=15"));
	/* Once in the line: only the class that has them. */
	assert_null(strstr(strstr(line, "cookies=") + 1, "cookies="));
}

/* STATUS= for a service manager: totals over the classes, per second. */
static void summary_sums_the_classes(void **state)
{
	struct shedd_stats prev, cur;
	char line[256];

	memset(&prev, 0, sizeof(prev));
	memset(&cur, 0, sizeof(cur));
	cur.cls[SHEDD_CRITICAL].syn = 10;
	cur.cls[SHEDD_CRITICAL].admitted = 10;
	cur.cls[SHEDD_SHEDDABLE].syn = 1020;
	cur.cls[SHEDD_SHEDDABLE].admitted = 20;
	cur.cls[SHEDD_SHEDDABLE].ack_admitted = 30;
	cur.cls[SHEDD_SHEDDABLE].dropped = 900;
	cur.cls[SHEDD_SHEDDABLE].rst_sent = 100;
	status_summary(line, sizeof(line), "overload", &prev, &cur, 2.0, 30);
	assert_string_equal(line, "mode=overload limit=30/s offered=515/s admitted=30/s shed=500/s");
	/* A replaced map (counters smaller) is no negative rate. */
	status_summary(line, sizeof(line), "fixed", &cur, &prev, 1.0, 30);
	assert_string_equal(line, "mode=fixed limit=30/s offered=0/s admitted=0/s shed=0/s");
}

/* The latency target in force, and where it comes from. */
static void latency_target_says_where_it_comes_from(void **state)
{
	char buf[64];

	status_latency_target(buf, sizeof(buf), true, false, 0);
	assert_string_equal(buf, "latency_target=off");
	status_latency_target(buf, sizeof(buf), false, true, 0);
	assert_string_equal(buf, "latency_target=auto:learning");
	status_latency_target(buf, sizeof(buf), false, true, 42400000);
	assert_string_equal(buf, "latency_target=auto:42ms");
	status_latency_target(buf, sizeof(buf), false, false, 50000000);
	assert_string_equal(buf, "latency_target=50ms");
	status_latency_target(buf, sizeof(buf), false, false, 250000);
	assert_string_equal(buf, "latency_target=0.25ms");
	status_latency_target(buf, sizeof(buf), false, true, 7500000);
	assert_string_equal(buf, "latency_target=auto:7.5ms");
}

/* The latency part: log samples and the upstream p99 only when log lines
 * came, refusals by reason only when there were any. */
static void status_line_latency_by_source(void **state)
{
	struct signal_report r;
	char line[512];
	int i;

	memset(&r, 0, sizeof(r));
	r.have_latency = true;
	for (i = 0; i < 100; i++)
		agg_add(&r.latency, 2000000); /* 2 ms, binary */
	status_latency_format(line, sizeof(line), &r);
	assert_string_equal(line, "latency_n=100 latency_p99_ms=2.00 bad=0 lost=0 ");

	for (i = 0; i < 50; i++) {
		agg_add(&r.latency, 8000000); /* 8 ms, from log lines */
		agg_add(&r.upstream, 5000000);
	}
	r.latency_log = 50;
	r.latency_why[LOGLINE_REJ_TRUNCATED] = 2;
	r.latency_why[LOGLINE_REJ_NO_MARKER] = 1;
	r.latency_bad = 3;
	r.latency_lost = 4;
	status_latency_format(line, sizeof(line), &r);
	assert_string_equal(line, "latency_n=150 log_n=50 latency_p99_ms=8.00 "
				  "upstream_p99_ms=5.00 bad=3 bad_why=no_marker:1,truncated:2 "
				  "lost=4 ");
	/* A short buffer: cut, terminated, never past it. */
	memset(line, 'z', sizeof(line));
	assert_int_equal(status_latency_format(line, 20, &r), 19);
	assert_int_equal(line[19], '\0');
	assert_int_equal(line[20], 'z');
}

/* What shedctl shows of the lease: the heartbeat's age, and once it ran
 * out the rates the program admits, half way up the climb at half its
 * length, never under the written rate; pinned or off, the written ones. */
static void lease_state_as_read(void **state)
{
	const __u64 sec = 1000000000ULL, hb = 100 * sec;
	const __u64 written[SHEDD_NR_CLASSES] = { 10, 10, 10, 2000 };
	struct shedd_lease l = { .heartbeat_ns = hb, .lease_ns = 60 * sec,
				 .relax_ns = 8192ULL << LEASE_UNIT_SHIFT };
	struct lease_state ls;
	int c;

	(void)state;
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		l.fail_rate_per_sec[c] = 1000;
	status_lease(&l, written, hb + 30 * sec, &ls);
	assert_true(ls.stamped && ls.on && !ls.expired && !ls.pinned);
	assert_float_equal(ls.age_s, 30, 1e-9);
	assert_float_equal(ls.lease_s, 60, 1e-9);
	assert_float_equal(ls.fail_static_rate, 4000, 1e-9);
	assert_int_equal(ls.rate_per_sec[0], 10);
	/* To the nanosecond of the lease: not run out. */
	status_lease(&l, written, hb + 60 * sec, &ls);
	assert_false(ls.expired);
	status_lease(&l, written, hb + 60 * sec + (4096ULL << LEASE_UNIT_SHIFT), &ls);
	assert_true(ls.expired);
	assert_int_equal(ls.rate_per_sec[0], 505);
	assert_int_equal(ls.rate_per_sec[3], 2000);
	status_lease(&l, written, hb + 3600 * sec, &ls);
	assert_int_equal(ls.rate_per_sec[1], 1000);
	l.flags = SHEDD_LEASE_PINNED;
	status_lease(&l, written, hb + 3600 * sec, &ls);
	assert_true(ls.pinned && !ls.expired);
	assert_int_equal(ls.rate_per_sec[1], 10);
	l.flags = 0;
	l.lease_ns = 0;
	status_lease(&l, written, hb + 3600 * sec, &ls);
	assert_true(!ls.on && !ls.expired && ls.stamped);
	assert_float_equal(ls.age_s, 3600, 1e-9);
	memset(&l, 0, sizeof(l));
	status_lease(&l, written, hb, &ls);
	assert_true(!ls.stamped && ls.age_s < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(demand_is_charged),
		cmocka_unit_test(status_line_shows_cookies_where_there_are),
		cmocka_unit_test(latency_target_says_where_it_comes_from),
		cmocka_unit_test(status_line_latency_by_source),
		cmocka_unit_test(summary_sums_the_classes),
		cmocka_unit_test(lease_state_as_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
