// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_signals.c - the pure parts of the signal sources: /proc/net/netstat
 * parsing, the latency wire format, sample aggregation and percentiles.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "shedd_latency.h"
#include "signals.h"

static void netstat_fields_are_found_by_name(void **state)
{
	const char *text =
		"TcpExt: SyncookiesSent SyncookiesRecv ListenOverflows ListenDrops TCPHPHits\n"
		"TcpExt: 1 2 3456 7890 12\n"
		"IpExt: InNoRoutes InTruncatedPkts\n"
		"IpExt: 0 0\n";
	__u64 ovf = 0, drops = 0;

	assert_int_equal(netstat_parse(text, &ovf, &drops), 0);
	assert_int_equal(ovf, 3456);
	assert_int_equal(drops, 7890);
}

static void netstat_without_the_fields_is_an_error(void **state)
{
	__u64 ovf, drops;

	assert_int_equal(netstat_parse("IpExt: A\nIpExt: 1\n", &ovf, &drops), -1);
	assert_int_equal(netstat_parse("TcpExt: ListenOverflows\n", &ovf, &drops), -1);
	assert_int_equal(netstat_parse("TcpExt: A B\nTcpExt: 1 2\n", &ovf, &drops), -1);
	assert_int_equal(netstat_parse("", &ovf, &drops), -1);
}

static void latency_wire_format(void **state)
{
	struct shedd_latency_sample s = {
		.magic = SHEDD_LATENCY_MAGIC, .version = SHEDD_LATENCY_VERSION,
		.latency_ns = 12345678,
	};
	__u8 buf[32];
	__u64 ns = 0;

	memcpy(buf, &s, sizeof(s));
	assert_int_equal(latency_decode(buf, 16, &ns), 0);
	assert_int_equal(ns, 12345678);
	/* Wrong length, magic, version or flags: rejected. */
	assert_int_equal(latency_decode(buf, 15, &ns), -1);
	assert_int_equal(latency_decode(buf, 17, &ns), -1);
	buf[0] ^= 1;
	assert_int_equal(latency_decode(buf, 16, &ns), -1);
	buf[0] ^= 1;
	buf[4] = 2;
	assert_int_equal(latency_decode(buf, 16, &ns), -1);
	buf[4] = 1;
	buf[6] = 1;
	assert_int_equal(latency_decode(buf, 16, &ns), -1);
}

static void percentiles_within_the_bucket_error(void **state)
{
	static struct sample_agg a;
	__u64 i, p50, p99;

	memset(&a, 0, sizeof(a));
	/* 1..10000 us, uniform: p50 = 5 ms, p99 = 9.9 ms. */
	for (i = 1; i <= 10000; i++)
		agg_add(&a, i * 1000);
	assert_int_equal(a.count, 10000);
	assert_int_equal(a.min_ns, 1000);
	assert_int_equal(a.max_ns, 10000000);
	p50 = agg_quantile(&a, 0.5);
	p99 = agg_quantile(&a, 0.99);
	assert_in_range(p50, 5000000 * 0.9, 5000000 * 1.1);
	assert_in_range(p99, 9900000 * 0.9, 9900000 * 1.1);
}

static void merge_keeps_exact_extremes(void **state)
{
	static struct sample_agg a, b;
	struct shedd_sojourn percpu[2];

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	agg_add(&a, 5000);
	agg_add(&b, 3000);
	agg_add(&b, 90000);
	agg_merge(&a, &b);
	assert_int_equal(a.count, 3);
	assert_int_equal(a.min_ns, 3000);
	assert_int_equal(a.max_ns, 90000);
	assert_int_equal(a.sum_ns, 98000);

	/* Per-CPU kernel aggregates merge the same way; empty CPUs add nothing. */
	memset(percpu, 0, sizeof(percpu));
	percpu[1].count = 2;
	percpu[1].sum_ns = 30;
	percpu[1].min_ns = 10;
	percpu[1].max_ns = 20;
	percpu[1].hist[0] = 2;
	agg_from_sojourn(&a, percpu, 2);
	assert_int_equal(a.count, 2);
	assert_int_equal(a.min_ns, 10);
	assert_int_equal(a.max_ns, 20);
	assert_int_equal(agg_quantile(&a, 0.5), 20); /* clamped to the exact max */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(netstat_fields_are_found_by_name),
		cmocka_unit_test(netstat_without_the_fields_is_an_error),
		cmocka_unit_test(latency_wire_format),
		cmocka_unit_test(percentiles_within_the_bucket_error),
		cmocka_unit_test(merge_keeps_exact_extremes),
	};

	return cmocka_run_group_tests_name("signals", tests, NULL, NULL);
}
