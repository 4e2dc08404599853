// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_metrics.c - the pure half of the metrics: kernel histogram buckets
 * onto Prometheus bounds, the daemon's counting, the exposition's shape
 * (one HELP and TYPE per family, cumulative buckets, escaped labels), the
 * fairness families and their bounded heavy hitters, and the
 * --metrics-addr parser.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <cmocka.h>

#include "aimd.h"
#include "metrics.h"
#include "sample_agg.h"

/* Every kernel bucket counts under a bound none of its values passes, and
 * under the smallest such bound, so no sample is reported late by more
 * than its own bucket. */
static void test_slot_never_below_a_value(void **state)
{
	__u32 i;
	int prev = 0;

	for (i = 0; i < HIST_BUCKETS - 1; i++) {
		int s = metrics_hist_slot(i);
		__u64 top = hist_lower_ns(i + 1); /* first value beyond the bucket */

		assert_true(s >= prev);
		prev = s;
		if (s < SHEDD_HIST_BOUNDS)
			assert_true(top <= metrics_hist_bounds_ns[s]);
		if (s > 0)
			assert_true(top > metrics_hist_bounds_ns[s - 1]);
	}
	/* The last kernel bucket also holds everything above it. */
	assert_int_equal(metrics_hist_slot(HIST_BUCKETS - 1), SHEDD_HIST_BOUNDS);
}

static void test_bounds_increase(void **state)
{
	int b;

	for (b = 1; b < SHEDD_HIST_BOUNDS; b++)
		assert_true(metrics_hist_bounds_ns[b] > metrics_hist_bounds_ns[b - 1]);
}

/* Samples land at or under the first bound at or above them, within a
 * bucket's width (12.5 %). */
static void test_hist_add(void **state)
{
	static const __u64 values[] = { 0, 1000, 99000, 2000000, 4900000, 5000000, 40000000,
					 900000000, 59000000000ULL, 100000000000ULL };
	struct shedd_daemon_hist h;
	size_t k;

	for (k = 0; k < sizeof(values) / sizeof(values[0]); k++) {
		struct sample_agg a;
		int b, at = -1;

		memset(&a, 0, sizeof(a));
		memset(&h, 0, sizeof(h));
		agg_add(&a, values[k]);
		metrics_hist_add(&h, &a);
		assert_int_equal(h.count, 1);
		assert_int_equal(h.sum_ns, values[k]);
		for (b = 0; b <= SHEDD_HIST_BOUNDS; b++)
			if (h.bucket[b])
				at = b;
		assert_true(at >= 0);
		if (at < SHEDD_HIST_BOUNDS) {
			assert_true(values[k] <= metrics_hist_bounds_ns[at]);
			/* Past a bound it is at or under only when its bucket
			 * straddles that bound: within 12.5 % under it. */
			if (at > 0)
				assert_true((double)values[k] * 1.125 >
					    (double)metrics_hist_bounds_ns[at - 1]);
		} else {
			assert_true(values[k] > metrics_hist_bounds_ns[SHEDD_HIST_BOUNDS - 1] / 1.125);
		}
	}
}

static void test_count(void **state)
{
	struct shedd_daemon_stats d;
	struct signal_report r;

	memset(&d, 0, sizeof(d));
	memset(&r, 0, sizeof(r));
	r.have_netstat = true;
	r.overflows = 3;
	r.drops = 5;
	r.have_latency = true;
	agg_add(&r.latency, 1000000);
	agg_add(&r.latency, 2000000);
	agg_add(&r.latency, 3000000);
	r.latency_served = 2;
	r.latency_lost = 7;
	r.latency_why[LOGLINE_REJ_RANGE] = 4;
	metrics_count(&d, &r, true, AIMD_WHY_DEPTH | AIMD_WHY_LATENCY);
	metrics_count(&d, &r, true, 0);
	/* A fixed rate has no verdicts, whatever why says. */
	metrics_count(&d, &r, false, AIMD_WHY_SOJOURN);
	assert_int_equal(d.version, SHEDD_DAEMON_STATS_VERSION);
	assert_int_equal(d.ticks, 3);
	assert_int_equal(d.overload_ticks, 1);
	assert_int_equal(d.overload[0], 0);
	assert_int_equal(d.overload[1], 1);
	assert_int_equal(d.overload[3], 1);
	assert_int_equal(d.listen_overflows, 9);
	assert_int_equal(d.listen_drops, 15);
	assert_int_equal(d.latency_served, 6);
	assert_int_equal(d.latency_unserved, 3);
	assert_int_equal(d.latency_lost, 21);
	assert_int_equal(d.latency_refused[LOGLINE_REJ_RANGE], 12);
	assert_int_equal(d.latency.count, 9);
	assert_int_equal(d.sojourn.count, 0);
}

/* The exposition of @s, in a malloc'd string. */
static char *format(const struct metrics_snapshot *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(metrics_format(f, s), 0);
	fclose(f);
	return buf;
}

static int count_of(const char *text, const char *needle)
{
	int n = 0;

	for (; (text = strstr(text, needle)); text++)
		n++;
	return n;
}

/* Reloads: ok and refused counted apart; the gauge says whether the last
 * one was applied, 1 before any. */
static void test_format_reloads(void **state)
{
	struct metrics_snapshot s;
	char *out;

	(void)state;
	memset(&s, 0, sizeof(s));
	snprintf(s.iface, sizeof(s.iface), "eth0");
	out = format(&s);
	assert_non_null(strstr(out, "# TYPE shedd_config_reloads_total counter\n"));
	assert_non_null(strstr(out, "shedd_config_reloads_total{iface=\"eth0\",result=\"ok\"} 0\n"));
	assert_non_null(strstr(out, "shedd_config_reloads_total{iface=\"eth0\",result=\"refused\"} 0\n"));
	assert_non_null(strstr(out, "# TYPE shedd_config_last_reload_successful gauge\n"));
	assert_non_null(strstr(out, "shedd_config_last_reload_successful{iface=\"eth0\"} 1\n"));
	free(out);
	metrics_reload(&s, true);
	metrics_reload(&s, false);
	metrics_reload(&s, false);
	out = format(&s);
	assert_non_null(strstr(out, "shedd_config_reloads_total{iface=\"eth0\",result=\"ok\"} 1\n"));
	assert_non_null(strstr(out, "shedd_config_reloads_total{iface=\"eth0\",result=\"refused\"} 2\n"));
	assert_non_null(strstr(out, "shedd_config_last_reload_successful{iface=\"eth0\"} 0\n"));
	free(out);
	metrics_reload(&s, true);
	out = format(&s);
	assert_non_null(strstr(out, "shedd_config_last_reload_successful{iface=\"eth0\"} 1\n"));
	free(out);
}

static void test_format_shape(void **state)
{
	struct metrics_snapshot s;
	struct sample_agg a;
	char *out, *line, *save = NULL;
	char prev_family[128] = "";
	unsigned long long prev_bucket = 0;
	int i;

	memset(&s, 0, sizeof(s));
	snprintf(s.iface, sizeof(s.iface), "a\"b\\c");
	s.stats.cls[SHEDD_CRITICAL].admitted = 42;
	s.aimd = true;
	s.mode = AIMD_RECOVERING;
	s.stage = 1;
	s.limit = 1234.5;
	s.feed_cover = 0.125;
	s.latency_spread = 1.75;
	memset(&a, 0, sizeof(a));
	for (i = 0; i < 100; i++)
		agg_add(&a, (__u64)i * 1000000);
	metrics_hist_add(&s.d.sojourn, &a);
	s.d.latency.sum_ns = 41819225;
	out = format(&s);
	/* Numbers as short as they read back exactly. */
	assert_non_null(strstr(out, "shedd_service_latency_seconds_sum{iface=\"a\\\"b\\\\c\"} "
				    "0.041819225\n"));
	assert_non_null(strstr(out, "shedd_syn_packets_total{iface=\"a\\\"b\\\\c\",class=\"critical\","
				    "verdict=\"admitted\"} 42\n"));
	assert_non_null(strstr(out, "shedd_controller_mode{iface=\"a\\\"b\\\\c\","
				    "mode=\"recovering\"} 1\n"));
	assert_non_null(strstr(out, "shedd_controller_mode{iface=\"a\\\"b\\\\c\",mode=\"steady\"} 0\n"));
	assert_non_null(strstr(out, "shedd_ramp_stage{iface=\"a\\\"b\\\\c\"} 2\n"));
	assert_non_null(strstr(out, "shedd_admit_limit_syn_per_second{iface=\"a\\\"b\\\\c\"} 1234.5\n"));
	/* No rate pinned: said as 0, and a pinned rate of 0. */
	assert_non_null(strstr(out, "shedd_rate_pinned{iface=\"a\\\"b\\\\c\"} 0\n"));
	assert_non_null(strstr(out, "shedd_rate_pinned_syn_per_second{iface=\"a\\\"b\\\\c\"} 0\n"));
	/* XDP_TX reaches the wire: the answers are on. */
	assert_non_null(strstr(out, "shedd_xdp_tx_blocked{iface=\"a\\\"b\\\\c\"} 0\n"));
	assert_non_null(strstr(out, "# TYPE shedd_latency_spread gauge\n"));
	assert_non_null(strstr(out, "shedd_latency_spread{iface=\"a\\\"b\\\\c\"} 1.75\n"));
	assert_non_null(strstr(out, "# TYPE shedd_latency_feed_coverage gauge\n"));
	assert_non_null(strstr(out, "shedd_latency_feed_coverage{iface=\"a\\\"b\\\\c\"} 0.125\n"));
	assert_non_null(strstr(out, "le=\"+Inf\"} 100\n"));
	assert_non_null(strstr(out, "shedd_accept_queue_sojourn_seconds_count{iface=\"a\\\"b\\\\c\","
				    "listener=\"protected\"} 100\n"));
	/* No backend listeners, no backend series; no depth read, no gauge. */
	assert_null(strstr(out, "listener=\"backend\""));
	assert_null(strstr(out, "shedd_accept_queue_length"));
	/* Families one after the other, and buckets that never fall. */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char fam[128];

		if (!strncmp(line, "# TYPE ", 7)) {
			char *sp;

			snprintf(fam, sizeof(fam), "%s", line + 7);
			sp = strchr(fam, ' ');
			assert_non_null(sp);
			*sp = '\0';
			assert_string_not_equal(fam, prev_family);
			snprintf(prev_family, sizeof(prev_family), "%s", fam);
			prev_bucket = 0;
		} else if (strstr(line, "_bucket{")) {
			unsigned long long v = strtoull(strrchr(line, ' ') + 1, NULL, 10);

			assert_true(v >= prev_bucket);
			prev_bucket = v;
		}
	}
	free(out);
	out = format(&s);
	assert_int_equal(count_of(out, "# TYPE shedd_syn_packets_total "), 1);
	assert_int_equal(count_of(out, "# HELP shedd_syn_packets_total "), 1);
	assert_int_equal(count_of(out, "# TYPE "), count_of(out, "# HELP "));
	free(out);
	/* An operator's pin: said as a gauge of 1, with the pinned rate. */
	s.pinned_rate = 500;
	out = format(&s);
	assert_non_null(strstr(out, "# TYPE shedd_rate_pinned gauge\n"));
	assert_non_null(strstr(out, "shedd_rate_pinned{iface=\"a\\\"b\\\\c\"} 1\n"));
	assert_non_null(strstr(out, "# TYPE shedd_rate_pinned_syn_per_second gauge\n"));
	assert_non_null(strstr(out, "shedd_rate_pinned_syn_per_second{iface=\"a\\\"b\\\\c\"} 500\n"));
	free(out);
	s.pinned_rate = 0;
	/* The lease: its length, the fail-static rate, the heartbeat's age
	 * the daemon found, and how often it found it past the lease. */
	s.lease_s = 300;
	s.fail_static_rate = 5000;
	s.heartbeat_gap_s = 412.5;
	s.lease_expiries = 1;
	out = format(&s);
	assert_non_null(strstr(out, "# TYPE shedd_lease_seconds gauge\n"));
	assert_non_null(strstr(out, "shedd_lease_seconds{iface=\"a\\\"b\\\\c\"} 300\n"));
	assert_non_null(strstr(out, "shedd_lease_fail_static_syn_per_second{iface=\"a\\\"b\\\\c\"} 5000\n"));
	assert_non_null(strstr(out, "shedd_lease_heartbeat_age_seconds{iface=\"a\\\"b\\\\c\"} 412.5\n"));
	assert_non_null(strstr(out, "# TYPE shedd_lease_expiries_total counter\n"));
	assert_non_null(strstr(out, "shedd_lease_expiries_total{iface=\"a\\\"b\\\\c\"} 1\n"));
	free(out);
	/* The answers off (settings.tx_blocked): said as a gauge of 1. */
	s.tx_blocked = true;
	out = format(&s);
	assert_non_null(strstr(out, "# TYPE shedd_xdp_tx_blocked gauge\n"));
	assert_non_null(strstr(out, "shedd_xdp_tx_blocked{iface=\"a\\\"b\\\\c\"} 1\n"));
	free(out);
	/* Decapsulating devices the program does not open, by kind. */
	s.unjudged_tun[TUN_UJ_WIREGUARD] = 2;
	out = format(&s);
	assert_non_null(strstr(out, "# TYPE shedd_unjudged_tunnel_devices gauge\n"));
	assert_non_null(strstr(out, "shedd_unjudged_tunnel_devices{iface=\"a\\\"b\\\\c\","
				    "kind=\"wireguard\"} 2\n"));
	assert_non_null(strstr(out, "shedd_unjudged_tunnel_devices{iface=\"a\\\"b\\\\c\","
				    "kind=\"vxlan_gpe\"} 0\n"));
	free(out);
	/* Where completed handshakes come from: one source at 1. */
	s.completion = SIGNALS_COMPLETION_PASSIVE_OPENS;
	out = format(&s);
	assert_non_null(strstr(out, "# TYPE shedd_completion_source gauge\n"));
	assert_non_null(strstr(out, "shedd_completion_source{iface=\"a\\\"b\\\\c\","
				    "source=\"passive_opens\"} 1\n"));
	assert_non_null(strstr(out, "shedd_completion_source{iface=\"a\\\"b\\\\c\","
				    "source=\"probes\"} 0\n"));
	assert_non_null(strstr(out, "shedd_completion_source{iface=\"a\\\"b\\\\c\","
				    "source=\"none\"} 0\n"));
	free(out);
}

/* Per-source fairness: no family without the maps; with them, the
 * counters and gauges of each class and level it counts, and at most
 * METRICS_FAIR_TOP heavy hitters per class, the heaviest. */
static void test_format_fair(void **state)
{
	static struct shedd_fair_heavy heavy[SHEDD_NR_CLASSES * FAIR_HEAVY_SLOTS];
	struct shedd_fair_class cfg[SHEDD_NR_CLASSES];
	struct shedd_fair_stats percpu[SHEDD_NR_CLASSES * 2];
	const __u64 now = 1000000000000ULL;
	struct metrics_snapshot s;
	char *out;
	__u32 c, i;

	memset(&s, 0, sizeof(s));
	snprintf(s.iface, sizeof(s.iface), "veth0");
	out = format(&s);
	assert_null(strstr(out, "shedd_fair_"));
	free(out);

	memset(cfg, 0, sizeof(cfg));
	memset(percpu, 0, sizeof(percpu));
	memset(heavy, 0, sizeof(heavy));
	/* sheddable: every level, shedding; critical: addresses only, calm;
	 * critical_plus: off. */
	cfg[SHEDD_SHEDDABLE] = (struct shedd_fair_class){ .levels = FAIR_ALL_LEVELS, .active = 1,
		.limit = { 45, 300, 3000 }, .sources = { 120, 3, 1 } };
	cfg[SHEDD_CRITICAL] = (struct shedd_fair_class){ .levels = FAIR_ADDR, .active = 0,
		.limit = { 10, 20, 30 }, .sources = { 7, 0, 0 } };
	percpu[SHEDD_SHEDDABLE * 2].shed = 70;
	percpu[SHEDD_SHEDDABLE * 2 + 1].shed = 7;
	percpu[SHEDD_SHEDDABLE * 2 + 1].counted = 999;
	/* Seven heavy hitters in sheddable, 198.18.0.1 .. .7, the last the
	 * heaviest; one IPv6 /64 in critical. */
	for (i = 0; i < 7; i++) {
		struct shedd_fair_heavy *h = &heavy[SHEDD_SHEDDABLE * FAIR_HEAVY_SLOTS + i * 3];

		h->addr[0] = 198;
		h->addr[1] = 18;
		h->addr[3] = (__u8)(i + 1);
		h->family = 4;
		h->estimate = 100 * (i + 1);
		h->last_ns = now - 1000;
		h->shed = i;
	}
	{
		struct shedd_fair_heavy *h = &heavy[SHEDD_CRITICAL * FAIR_HEAVY_SLOTS + 5];

		assert_int_equal(inet_pton(AF_INET6, "2001:db8:7:9::", h->addr), 1);
		h->family = 6;
		h->level = 1;
		h->estimate = 2147;
		h->last_ns = now;
	}
	fair_view_build(&s.fair, cfg, percpu, 2, heavy, now);
	out = format(&s);
	assert_non_null(strstr(out, "# TYPE shedd_fair_shed_total counter\n"));
	assert_non_null(strstr(out, "shedd_fair_shed_total{iface=\"veth0\",class=\"sheddable\"} 77\n"));
	assert_non_null(strstr(out, "shedd_fair_counted_total{iface=\"veth0\",class=\"sheddable\"} 999\n"));
	assert_non_null(strstr(out, "shedd_fair_active{iface=\"veth0\",class=\"sheddable\"} 1\n"));
	assert_non_null(strstr(out, "shedd_fair_active{iface=\"veth0\",class=\"critical\"} 0\n"));
	assert_non_null(strstr(out, "shedd_fair_sources{iface=\"veth0\",class=\"sheddable\","
				    "level=\"24+64\"} 3\n"));
	assert_non_null(strstr(out, "shedd_fair_sources{iface=\"veth0\",class=\"critical\","
				    "level=\"addr\"} 7\n"));
	/* Levels a class does not count, and a class that is off: none. */
	assert_null(strstr(out, "class=\"critical\",level=\"24+64\""));
	assert_null(strstr(out, "class=\"critical_plus\",level="));
	/* 45 admissions a window of 2^31 ns: 20.95/s. */
	assert_non_null(strstr(out, "shedd_fair_limit_per_second{iface=\"veth0\",class=\"sheddable\","
				    "level=\"addr\"} 20.95"));
	/* The five heaviest of sheddable, the IPv6 /64 of critical. */
	assert_int_equal(count_of(out, "shedd_fair_heavy_hitter_rate{"), METRICS_FAIR_TOP + 1);
	/* 700 admissions a window: 325.96/s. */
	assert_non_null(strstr(out, "shedd_fair_heavy_hitter_rate{iface=\"veth0\",class=\"sheddable\","
				    "level=\"addr\",source=\"198.18.0.7\"} 325.96"));
	assert_non_null(strstr(out, "source=\"198.18.0.3\"}"));
	assert_null(strstr(out, "source=\"198.18.0.2\"}"));
	assert_non_null(strstr(out, "shedd_fair_heavy_hitter_rate{iface=\"veth0\",class=\"critical\","
				    "level=\"64\",source=\"2001:db8:7:9::/64\"} 999.77"));
	assert_int_equal(count_of(out, "# TYPE shedd_fair_"), 6);
	assert_int_equal(count_of(out, "# TYPE "), count_of(out, "# HELP "));
	free(out);
	/* Every class full of heavy hitters: still at most 20 series. */
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		cfg[c].levels = FAIR_ALL_LEVELS;
		for (i = 0; i < FAIR_HEAVY_SLOTS; i++) {
			struct shedd_fair_heavy *h = &heavy[c * FAIR_HEAVY_SLOTS + i];

			memset(h, 0, sizeof(*h));
			h->addr[0] = 198;
			h->addr[1] = 19;
			h->addr[2] = (__u8)c;
			h->addr[3] = (__u8)i;
			h->family = 4;
			h->estimate = 10 + i;
			h->last_ns = now;
		}
	}
	fair_view_build(&s.fair, cfg, percpu, 2, heavy, now);
	out = format(&s);
	assert_int_equal(count_of(out, "shedd_fair_heavy_hitter_rate{"), 20);
	assert_int_equal(count_of(out, "shedd_fair_sources{"), SHEDD_NR_CLASSES * FAIR_LEVELS);
	free(out);
}

static void test_parse_addr(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char err[256];

	assert_int_equal(metrics_parse_addr("127.0.0.1:9464", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9464);
	assert_int_equal(len, sizeof(struct sockaddr_in));
	assert_int_equal(metrics_parse_addr("[::1]:9465", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(ntohs(((struct sockaddr_in6 *)&ss)->sin6_port), 9465);
	assert_int_equal(metrics_parse_addr("0.0.0.0:1", &ss, &len, err, sizeof(err)), 0);
	assert_int_equal(metrics_parse_addr("none", &ss, &len, err, sizeof(err)), 1);
	static const char *const bad[] = {
		"", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:+80",
		"127.0.0.1:80x", "localhost:80", "::1:80", "[::1]80", "[::1]:", "[127.0.0.1]:80",
		":80", "[]:80", "127.0.0.1: 80",
	};
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (metrics_parse_addr(bad[i], &ss, &len, err, sizeof(err)) != -1)
			fail_msg("'%s' was taken", bad[i]);
		assert_non_null(strstr(err, "--metrics-addr"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_increase),
		cmocka_unit_test(test_slot_never_below_a_value),
		cmocka_unit_test(test_hist_add),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_format_shape),
		cmocka_unit_test(test_format_reloads),
		cmocka_unit_test(test_format_fair),
		cmocka_unit_test(test_parse_addr),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
