// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_signals.c - the pure parts of the signal sources: /proc/net/netstat
 * and /proc/net/snmp parsing, the passive-opens estimate of completed
 * handshakes, the latency wire format, sample aggregation and percentiles,
 * listener drops from sock_diag, the two-slot sojourn protocol.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include "shedd_latency.h"
#include "signal_parse.h"

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

/* /proc/net/snmp of this kernel (6.18), MaxConn -1 included. */
static const char snmp_text[] =
	"Ip: Forwarding DefaultTTL InReceives InHdrErrors\n"
	"Ip: 2 64 12890 0\n"
	"IcmpMsg: InType3\n"
	"IcmpMsg: 3\n"
	"Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens PassiveOpens AttemptFails "
	"EstabResets CurrEstab InSegs OutSegs RetransSegs InErrs OutRsts InCsumErrors\n"
	"Tcp: 1 200 120000 -1 69 6 3 0 0 12728 9490 0 0 3 0\n"
	"Udp: InDatagrams NoPorts InErrors OutDatagrams\n"
	"Udp: 159 0 0 162\n"
	"UdpLite: InDatagrams NoPorts\n"
	"UdpLite: 0 0\n";

/* A string literal and its length, NULs inside included. */
#define LIT(s) s, sizeof(s) - 1

static void snmp_counters_are_found_by_name(void **state)
{
	__u64 v = 0;

	assert_int_equal(proc_counter_parse(snmp_text, strlen(snmp_text), "Tcp", "PassiveOpens", &v),
			 0);
	assert_int_equal(v, 6);
	assert_int_equal(proc_counter_parse(snmp_text, strlen(snmp_text), "Tcp", "ActiveOpens", &v),
			 0);
	assert_int_equal(v, 69);
	assert_int_equal(proc_counter_parse(snmp_text, strlen(snmp_text), "Udp", "OutDatagrams", &v),
			 0);
	assert_int_equal(v, 162);
	/* The largest value. */
	assert_int_equal(proc_counter_parse(LIT("Tcp: PassiveOpens\nTcp: 18446744073709551615\n"),
					    "Tcp", "PassiveOpens", &v), 0);
	assert_int_equal(v, 18446744073709551615ULL);
	/* Separated by runs of spaces. */
	assert_int_equal(proc_counter_parse(LIT("Tcp:  A   PassiveOpens\nTcp: 1    2\n"), "Tcp",
					    "PassiveOpens", &v), 0);
	assert_int_equal(v, 2);
}

/* Only @len bytes are read: the text need not end in a NUL, and a text cut
 * anywhere (a file larger than the buffer) gives the value whole or an
 * error, never half a number or a byte past it. */
static void snmp_reads_only_its_bytes(void **state)
{
	size_t len = strlen(snmp_text), cut;
	size_t whole = (size_t)(strchr(strstr(snmp_text, "Tcp: 1 "), '\n') - snmp_text) + 1;
	char *buf = malloc(len);
	__u64 v;

	assert_non_null(buf);
	memcpy(buf, snmp_text, len); /* no NUL at the end */
	for (cut = 0; cut <= len; cut++) {
		v = 12345;
		if (cut < whole) {
			assert_int_equal(proc_counter_parse(buf, cut, "Tcp", "PassiveOpens", &v), -1);
			assert_int_equal(v, 12345);
		} else {
			assert_int_equal(proc_counter_parse(buf, cut, "Tcp", "PassiveOpens", &v), 0);
			assert_int_equal(v, 6);
		}
	}
	/* Cut in the middle of "12890": not taken as 12. */
	v = 12345;
	assert_int_equal(proc_counter_parse(buf, (size_t)(strstr(snmp_text, "12890") - snmp_text) + 2,
					    "Ip", "InReceives", &v), -1);
	assert_int_equal(v, 12345);
	free(buf);
}

static void snmp_garbage_is_an_error(void **state)
{
	static const char *const bad[] = {
		"",
		"\n\n\n",
		"Tcp: PassiveOpens\n",                  /* no values line */
		"Tcp: PassiveOpens\nUdp: 5\n",          /* the next line is another group */
		"Tcp: A PassiveOpens\nTcp: 1\n",        /* fewer values than names */
		"Tcp: PassiveOpens\nTcp: -5\n",         /* a sign */
		"Tcp: PassiveOpens\nTcp: +5\n",
		"Tcp: PassiveOpens\nTcp: 12x\n",        /* junk after the digits */
		"Tcp: PassiveOpens\nTcp: 0x10\n",
		"Tcp: PassiveOpens\nTcp: 18446744073709551616\n", /* 2^64 */
		"Tcp: PassiveOpens\nTcp: 000000000000000000001\n", /* 21 digits */
		"Tcp: PassiveOpensX\nTcp: 5\n",         /* another name */
		"Tcp: Passive\nTcp: 5\n",
		"XTcp: PassiveOpens\nXTcp: 5\n",        /* another group */
		"Tcpx: PassiveOpens\nTcpx: 5\n",
		" Tcp: PassiveOpens\n Tcp: 5\n",        /* not at the start of a line */
		"Udp: Tcp: PassiveOpens\nUdp: 1 2 3\n",
		"Tcp\nTcp: 5\n",
		"Tcp:",
		"Tcp: PassiveOpens\nTcp:",
		"Tcp: PassiveOpens\nTcp",
		"Tcp: PassiveOpens\nTcp: 5",             /* cut short: no newline */
	};
	size_t i;
	__u64 v;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 777;
		if (proc_counter_parse(bad[i], strlen(bad[i]), "Tcp", "PassiveOpens", &v) != -1)
			fail_msg("case %zu ('%s') was parsed as %llu", i, bad[i],
				 (unsigned long long)v);
		assert_int_equal(v, 777);
	}
	/* The first group of the name counts, a later one is not looked at. */
	assert_int_equal(proc_counter_parse(LIT("Tcp: A\nTcp: 1\nTcp: PassiveOpens\nTcp: 5\n"),
					    "Tcp", "PassiveOpens", &v), -1);
	/* A group whose name ends in the one asked for is another group. */
	assert_int_equal(proc_counter_parse(LIT("MPTcp: PassiveOpens\nMPTcp: 5\nTcp: PassiveOpens\n"
						"Tcp: 7\n"), "Tcp", "PassiveOpens", &v), 0);
	assert_int_equal(v, 7);
	/* A NUL inside the bytes ends nothing early and matches nothing. */
	assert_int_equal(proc_counter_parse(LIT("Tcp: Passive\0Opens\nTcp: 5\n"), "Tcp",
					    "PassiveOpens", &v), -1);
}

/* A long line of names (bounded by the buffer the daemon reads into):
 * walked to its end, the field found after thousands of others. */
static void snmp_long_lines(void **state)
{
	size_t cap = 65536, off = 0, i, n = 5000;
	char *t = malloc(cap);
	__u64 v = 0;

	assert_non_null(t);
	off += (size_t)snprintf(t + off, cap - off, "Tcp:");
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(t + off, cap - off, " F%zu", i);
	off += (size_t)snprintf(t + off, cap - off, " PassiveOpens\nTcp:");
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(t + off, cap - off, " %zu", i);
	off += (size_t)snprintf(t + off, cap - off, " 424242\n");
	assert_true(off < cap);
	assert_int_equal(proc_counter_parse(t, off, "Tcp", "PassiveOpens", &v), 0);
	assert_int_equal(v, 424242);
	free(t);
}

static void passive_opens_estimate_is_bounded(void **state)
{
	/* All opens the protected ports': at most what was admitted. */
	assert_int_equal(completed_from_passive_opens(100, 0, 200), 100);
	assert_int_equal(completed_from_passive_opens(500, 0, 200), 200);
	/* Less the SYNs XDP passed to other ports, never below 0. */
	assert_int_equal(completed_from_passive_opens(100, 30, 200), 70);
	assert_int_equal(completed_from_passive_opens(100, 150, 200), 0);
	/* A spoofed flood admitted, nobody opened: nothing completed. */
	assert_int_equal(completed_from_passive_opens(0, 0, 5000), 0);
	assert_int_equal(completed_from_passive_opens(0, 0, 0), 0);
	assert_int_equal(completed_from_passive_opens(~0ULL, 0, ~0ULL), ~0ULL);
}

static void latency_wire_format(void **state)
{
	struct shedd_latency_sample s = {
		.magic = SHEDD_LATENCY_MAGIC, .version = SHEDD_LATENCY_VERSION,
		.latency_ns = 12345678,
	};
	__u8 buf[32];
	__u64 ns = 0;
	__u32 unsent = 7;

	memcpy(buf, &s, sizeof(s));
	assert_int_equal(latency_decode(buf, 16, &ns, &unsent), LOGLINE_OK);
	assert_int_equal(ns, 12345678);
	/* Wrong length, magic, version or flags: rejected. */
	assert_int_equal(latency_decode(buf, 15, &ns, &unsent), LOGLINE_REJ_BINARY);
	assert_int_equal(latency_decode(buf, 17, &ns, &unsent), LOGLINE_REJ_BINARY);
	buf[0] ^= 1;
	assert_int_equal(latency_decode(buf, 16, &ns, &unsent), LOGLINE_REJ_BINARY);
	buf[0] ^= 1;
	buf[4] = 2;
	assert_int_equal(latency_decode(buf, 16, &ns, &unsent), LOGLINE_REJ_BINARY);
	buf[4] = 1;
	buf[6] = 1;
	assert_int_equal(latency_decode(buf, 16, &ns, &unsent), LOGLINE_REJ_BINARY);
	buf[6] = 0;
	assert_int_equal(latency_decode(buf, 16, &ns, &unsent), LOGLINE_OK);
	assert_int_equal(unsent, 0); /* version 1 tells no loss */
}

/* Version 2 carries the sender's count of samples it could not send. */
static void latency_wire_format_2_counts_losses(void **state)
{
	struct shedd_latency_sample2 s = {
		.magic = SHEDD_LATENCY_MAGIC, .version = SHEDD_LATENCY_VERSION_2,
		.latency_ns = 777, .unsent = 41,
	};
	__u8 buf[32];
	__u64 ns = 0;
	__u32 unsent = 0;

	memcpy(buf, &s, sizeof(s));
	assert_int_equal(latency_decode(buf, 24, &ns, &unsent), LOGLINE_OK);
	assert_int_equal(ns, 777);
	assert_int_equal(unsent, 41);
	/* Version 2 in 16 bytes, version 1 in 24, a reserved word set: no. */
	assert_int_equal(latency_decode(buf, 16, &ns, &unsent), LOGLINE_REJ_BINARY);
	buf[4] = 1;
	assert_int_equal(latency_decode(buf, 24, &ns, &unsent), LOGLINE_REJ_BINARY);
	buf[4] = 2;
	buf[20] = 1;
	assert_int_equal(latency_decode(buf, 24, &ns, &unsent), LOGLINE_REJ_BINARY);
}

/* Both formats on one socket: the binary magic picks the decoder; anything
 * else is a log line; a truncated datagram is refused whatever it holds. */
static void latency_datagram_either_format(void **state)
{
	struct shedd_latency_sample2 b = {
		.magic = SHEDD_LATENCY_MAGIC, .version = SHEDD_LATENCY_VERSION_2,
		.latency_ns = 777, .unsent = 3,
	};
	const char *nginx = "<190>Nov 30 14:51:02 shedd: shedd rt=0.004 urt=0.003 st=200";
	const char *haproxy = "shedd rt_ms=9 urt_ms=-1 st=200";
	struct latency_datagram d;

	assert_int_equal(latency_datagram_decode(&b, sizeof(b), false, &d), LOGLINE_OK);
	assert_false(d.log);
	assert_int_equal(d.ns, 777);
	assert_int_equal(d.unsent, 3);
	assert_false(d.have_upstream);
	/* a binary sample cut short is a malformed binary one */
	assert_int_equal(latency_datagram_decode(&b, 20, false, &d), LOGLINE_REJ_BINARY);
	assert_int_equal(latency_datagram_decode(&b, sizeof(b), true, &d), LOGLINE_REJ_TRUNCATED);

	assert_int_equal(latency_datagram_decode(nginx, strlen(nginx), false, &d), LOGLINE_OK);
	assert_true(d.log);
	assert_int_equal(d.ns, 4000000);
	assert_true(d.have_upstream);
	assert_int_equal(d.upstream_ns, 3000000);
	assert_int_equal(d.unsent, 0);
	assert_int_equal(latency_datagram_decode(nginx, strlen(nginx), true, &d),
			 LOGLINE_REJ_TRUNCATED);

	assert_int_equal(latency_datagram_decode(haproxy, strlen(haproxy), false, &d), LOGLINE_OK);
	assert_true(d.log);
	assert_int_equal(d.ns, 9000000);
	assert_false(d.have_upstream);

	assert_int_equal(latency_datagram_decode("garbage", 7, false, &d), LOGLINE_REJ_NO_MARKER);
	assert_int_equal(latency_datagram_decode("", 0, false, &d), LOGLINE_REJ_NO_MARKER);
	assert_int_equal(latency_datagram_decode("SHD", 3, false, &d), LOGLINE_REJ_NO_MARKER);
}

/* A binary sample is bounded as a log line is: above LOGLINE_MAX_NS (one
 * hour) it is refused as out of range, in either version, and nothing of
 * it is taken; at the bound it is a sample. */
static void latency_binary_sample_capped(void **state)
{
	static const __u64 refused[] = { LOGLINE_MAX_NS + 1, 1ULL << 63, UINT64_MAX };
	struct shedd_latency_sample v1 = {
		.magic = SHEDD_LATENCY_MAGIC, .version = SHEDD_LATENCY_VERSION,
		.latency_ns = LOGLINE_MAX_NS,
	};
	struct shedd_latency_sample2 v2 = {
		.magic = SHEDD_LATENCY_MAGIC, .version = SHEDD_LATENCY_VERSION_2,
		.latency_ns = LOGLINE_MAX_NS, .unsent = 5,
	};
	struct latency_datagram d;
	size_t i;

	(void)state;
	assert_int_equal(latency_datagram_decode(&v1, sizeof(v1), false, &d), LOGLINE_OK);
	assert_int_equal(d.ns, LOGLINE_MAX_NS);
	assert_int_equal(latency_datagram_decode(&v2, sizeof(v2), false, &d), LOGLINE_OK);
	assert_int_equal(d.ns, LOGLINE_MAX_NS);
	assert_int_equal(d.unsent, 5);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		v1.latency_ns = v2.latency_ns = refused[i];
		if (latency_datagram_decode(&v1, sizeof(v1), false, &d) != LOGLINE_REJ_RANGE)
			fail_msg("version 1, %llu ns: not refused as range",
				 (unsigned long long)refused[i]);
		assert_int_equal(d.ns, 0);
		if (latency_datagram_decode(&v2, sizeof(v2), false, &d) != LOGLINE_REJ_RANGE)
			fail_msg("version 2, %llu ns: not refused as range",
				 (unsigned long long)refused[i]);
		assert_int_equal(d.ns, 0);
		assert_int_equal(d.unsent, 0);
	}
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

/* The mean of the middle 80 %: deaf to a tenth of outliers, and moving
 * with the mix of a bimodal service where a quantile jumps from one mode to
 * the other. */
static void mid_mean_of_the_middle_80_percent(void **state)
{
	static struct sample_agg a;
	__u64 i, m40, m50, m60;

	memset(&a, 0, sizeof(a));
	assert_int_equal(agg_mid_mean(&a), 0);
	agg_add(&a, 7000000);
	assert_int_equal(agg_mid_mean(&a), 7000000); /* one sample: itself */

	/* 1..10000 us, uniform: the middle is 1..9 ms, mean 5 ms. */
	memset(&a, 0, sizeof(a));
	for (i = 1; i <= 10000; i++)
		agg_add(&a, i * 1000);
	assert_in_range(agg_mid_mean(&a), 5000000 * 0.95, 5000000 * 1.05);

	/* 91 samples of 10 ms and 9 of 60 s (long polls): 10 ms. */
	memset(&a, 0, sizeof(a));
	for (i = 0; i < 100; i++)
		agg_add(&a, i < 91 ? 10000000 : 60000000000ULL);
	assert_in_range(agg_mid_mean(&a), 10000000 * 0.94, 10000000 * 1.06);

	/* Hits of 1 ms and misses of 50 ms: 40, 50 and 60 % of misses move
	 * the statistic in even steps ((500 + 300 x 50) / 800 ms, ...). */
	for (i = 40; i <= 60; i += 10) {
		__u64 n, *m = i == 40 ? &m40 : i == 50 ? &m50 : &m60;

		memset(&a, 0, sizeof(a));
		for (n = 0; n < 1000; n++)
			agg_add(&a, n < 10 * i ? 50000000 : 1000000);
		*m = agg_mid_mean(&a);
	}
	assert_in_range(m40, 19375000 * 0.94, 19375000 * 1.06);
	assert_in_range(m50, 25500000 * 0.94, 25500000 * 1.06);
	assert_in_range(m60, 31625000 * 0.94, 31625000 * 1.06);
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

/* A listener's drop counter is read from its INET_DIAG_SKMEMINFO
 * attribute, wherever it sits among the attributes. */
static void listener_drops_from_a_diag_message(void **state)
{
	/* inet_diag_msg, an INET_DIAG_TOS of one byte (padded to 8), then
	 * INET_DIAG_SKMEMINFO: the layout the kernel sends. */
	static __u8 buf[sizeof(struct inet_diag_msg) + 8 + RTA_LENGTH(SK_MEMINFO_VARS * 4)];
	struct rtattr *a1 = (struct rtattr *)(buf + sizeof(struct inet_diag_msg));
	struct rtattr *a2 = (struct rtattr *)((__u8 *)a1 + 8);
	__u32 mem[SK_MEMINFO_VARS] = { 0 }, drops = 0;
	const struct inet_diag_msg *m = (const struct inet_diag_msg *)buf;

	_Static_assert(sizeof(struct inet_diag_msg) % 4 == 0, "aligned");
	a1->rta_type = INET_DIAG_TOS;
	a1->rta_len = RTA_LENGTH(1);
	a2->rta_type = INET_DIAG_SKMEMINFO;
	a2->rta_len = RTA_LENGTH(sizeof(mem));
	mem[SK_MEMINFO_DROPS] = 4242;
	memcpy(RTA_DATA(a2), mem, sizeof(mem));
	assert_int_equal(diag_msg_drops(m, sizeof(buf), &drops), 0);
	assert_int_equal(drops, 4242);
	/* Without the attribute (the kernel did not send it): an error. */
	assert_int_equal(diag_msg_drops(m, sizeof(struct inet_diag_msg) + 8, &drops), -1);
	/* A truncated meminfo is not read past its end. */
	a2->rta_len = RTA_LENGTH(SK_MEMINFO_DROPS * sizeof(__u32));
	assert_int_equal(diag_msg_drops(m, sizeof(buf), &drops), -1);
}

/* Drops are counted listener by listener: only increases of a listener
 * seen in both dumps; a new one (or a restart of shedd) adds nothing. */
static void listener_drops_count_only_increases_of_known_listeners(void **state)
{
	static struct listener_table prev, cur;
	static const __u64 ino_prev[] = { 10, 11 }, ino_cur[] = { 11, 12, 10 };
	static const __u32 drops_prev[] = { 5, 0xfffffffe }, drops_cur[] = { 3, 900, 8 };
	int i;

	(void)state;
	prev.n = 2;
	for (i = 0; i < prev.n; i++)
		prev.l[i] = (struct listener_sample){ .id.ino = ino_prev[i], .have_drops = true,
						      .drops = drops_prev[i] };
	cur.n = 3;
	for (i = 0; i < cur.n; i++)
		cur.l[i] = (struct listener_sample){ .id.ino = ino_cur[i], .have_drops = true,
						     .drops = drops_cur[i] };
	/* 10: 5 -> 8 (+3); 11: wraps 0xfffffffe -> 3 (+5); 12 is new (+0). */
	assert_int_equal(listener_drops_delta(&prev, &cur), 8);
	/* The first dump of all: nothing known, nothing counted. */
	prev.n = 0;
	assert_int_equal(listener_drops_delta(&prev, &cur), 0);
}

/* The two-slot sojourn protocol against a probe on another CPU: the probe
 * loads the epoch, and is still adding its sample while the daemon reads
 * and clears (the window between bpf_map_lookup_elem and the zeroing
 * update). Every sample written must be read exactly once. */
struct race {
	__u32 epoch;
	__u64 slot[2];    /* the kernel's two slots */
	__u64 copy;       /* what the daemon read */
	__u64 read_total; /* summed over ticks */
	int inflight;     /* the slot a probe is about to write, or -1 */
};

static int race_read(void *ctx, __u32 slot)
{
	struct race *r = ctx;

	r->copy = r->slot[slot];
	/* The probe on the other CPU completes its write now, between the
	 * daemon's read and its clear. */
	if (r->inflight >= 0) {
		r->slot[r->inflight]++;
		r->inflight = -1;
	}
	return 0;
}

static int race_clear(void *ctx, __u32 slot)
{
	struct race *r = ctx;

	r->slot[slot] = 0;
	r->read_total += r->copy;
	return 0;
}

static void sojourn_slots_lose_no_sample(void **state)
{
	struct race r = { .inflight = -1 };
	__u64 written = 0;
	int tick, i;

	for (tick = 0; tick < 10; tick++) {
		/* Samples of the tick, written at leisure. */
		for (i = 0; i < 5; i++) {
			r.slot[r.epoch & 1]++;
			written++;
		}
		/* One more, begun just before the daemon's tick. */
		r.inflight = (int)(r.epoch & 1);
		written++;
		assert_int_equal(sojourn_collect(&r.epoch, race_read, race_clear, &r), 0);
	}
	/* Two more ticks with no traffic collect what is still in flight. */
	for (tick = 0; tick < 2; tick++)
		assert_int_equal(sojourn_collect(&r.epoch, race_read, race_clear, &r), 0);
	assert_int_equal(r.read_total, written);
}

/* The depth judgement: each listener group against its own backlog. */
static void fullest_group_is_judged_on_its_own_backlog(void **state)
{
	/* An eager front-end with a large, empty backlog and a backend whose
	 * small backlog is full: a sum (16 of 4112) would be 0.4 %. */
	struct queue_group front_full_backend[] = { { 0, 4096 }, { 16, 16 } };
	struct queue_group calm[] = { { 3, 4096 }, { 1, 128 } };
	struct queue_group two_backends[] = { { 10, 100 }, { 5, 128 }, { 60, 64 } };
	struct queue_group none_yet[] = { { 0, 0 }, { 0, 16 } };
	/* listen(fd, 0) has a backlog of 0 and still queues one connection. */
	struct queue_group zero_backlog[] = { { 5, 10 }, { 1, 0 } };
	struct queue_group tie[] = { { 1, 2 }, { 8, 16 } };
	struct queue_group g;

	g = queue_fullest(front_full_backend, 2);
	assert_int_equal(g.depth, 16);
	assert_int_equal(g.backlog, 16);
	g = queue_fullest(calm, 2); /* 1 of 128 is fuller than 3 of 4096 */
	assert_int_equal(g.depth, 1);
	assert_int_equal(g.backlog, 128);
	g = queue_fullest(two_backends, 3);
	assert_int_equal(g.depth, 60);
	assert_int_equal(g.backlog, 64);
	g = queue_fullest(none_yet, 2);
	assert_int_equal(g.depth, 0);
	g = queue_fullest(zero_backlog, 2);
	assert_int_equal(g.depth, 1);
	assert_int_equal(g.backlog, 0);
	g = queue_fullest(tie, 2);
	assert_int_equal(g.depth, 8);
	/* One group (no backends) is today's sum over the protected ports. */
	g = queue_fullest(calm, 1);
	assert_int_equal(g.depth, 3);
	assert_int_equal(g.backlog, 4096);
}

/* The standing queue of the worse group counts: a front-end that takes at
 * once must not hide its backend's sojourn in a shared minimum. */
/* A listener's stray drop (an ACK it could not match) is no overflow; a
 * real one moves ListenOverflows in the same tick or, read a hair later,
 * in the tick before the drops show. */
static void listener_drops_count_as_overflows_only_with_listen_overflows(void **state)
{
	(void)state;
	/* No netstat to ask: every drop counts. */
	assert_int_equal(overflow_drops(3, false, 0, false), 3);
	/* ListenOverflows quiet now and before: a stray drop. */
	assert_int_equal(overflow_drops(1, true, 0, false), 0);
	assert_int_equal(overflow_drops(7, true, 0, false), 0);
	/* It moved in this tick, or in the one before. */
	assert_int_equal(overflow_drops(4, true, 2, false), 4);
	assert_int_equal(overflow_drops(4, true, 0, true), 4);
	/* Another listener's overflows with none of ours: nothing. */
	assert_int_equal(overflow_drops(0, true, 9, true), 0);
}

static void worst_minimum_of_two_groups(void **state)
{
	struct sample_agg front = { 0 }, backend = { 0 };

	assert_int_equal(agg_worst_min(&front, &backend), 0);
	agg_add(&front, 20000);  /* 20 us */
	agg_add(&front, 50000);
	assert_int_equal(agg_worst_min(&front, &backend), 20000);
	agg_add(&backend, 80000000); /* 80 ms */
	agg_add(&backend, 90000000);
	assert_int_equal(agg_worst_min(&front, &backend), 80000000);
	assert_int_equal(agg_worst_min(&backend, &front), 80000000);
	/* A group without samples has no minimum, not a zero one. */
	memset(&front, 0, sizeof(front));
	front.min_ns = 123456789012ULL; /* stale, count 0: ignored */
	assert_int_equal(agg_worst_min(&front, &backend), 80000000);
}

/* Answered: binary samples, log lines without a status or with one that is
 * neither 499 (the client gave up) nor 5xx (the upstream failed), nor a 400
 * or 408 no upstream took part in (a request that never came whole). */
static void served_requests_by_status(void **state)
{
	static const struct {
		const char *line;
		bool served;
	} rows[] = {
		{ "<190>Nov 30 14:00:00 shedd: shedd rt=0.020 urt=0.019 st=200", true },
		{ "<190>Nov 30 14:00:00 shedd: shedd rt=0.020 st=404", true },
		{ "<190>Nov 30 14:00:00 shedd: shedd rt=0.020", true },
		{ "<190>Nov 30 14:00:00 shedd: shedd rt=0.500 urt=- st=499", false },
		{ "<190>Nov 30 14:00:00 shedd: shedd rt=1.000 urt=1.000 st=504", false },
		{ "<134>Nov 30 14:00:00 haproxy[7]: shedd rt_ms=20 urt_ms=19 st=503", false },
		{ "<134>Nov 30 14:00:00 haproxy[7]: shedd rt_ms=20 urt_ms=19 st=302", true },
		{ "<134>Nov 30 14:00:00 haproxy[7]: shedd rt_ms=500 urt_ms=-1 st=-1", false },
		/* a request that never came whole: no upstream took part */
		{ "<134>Nov 30 14:00:00 haproxy[7]: shedd rt_ms=502 urt_ms=-1 st=400", false },
		{ "<190>Nov 30 14:00:00 shedd: shedd rt=60.000 urt=- st=408", false },
		/* the same statuses from an upstream, or from a feed without
		 * its time, are answers */
		{ "<134>Nov 30 14:00:00 haproxy[7]: shedd rt_ms=20 urt_ms=19 st=400", true },
		{ "<190>Nov 30 14:00:00 shedd: shedd rt=0.020 urt=0.019 st=408", true },
		{ "<190>Nov 30 14:00:00 shedd: shedd rt=0.020 st=400", true },
		/* any other status the proxy gave itself is an answer */
		{ "<190>Nov 30 14:00:00 shedd: shedd rt=0.001 urt=- st=404", true },
		{ "<190>Nov 30 14:00:00 shedd: shedd rt=0.500 urt=- st=-", false },
		/* a client's User-Agent after st= does not turn a 499 into a 200 */
		{ "<190>Nov 30 14:00:00 shedd: shedd rt=0.500 urt=- st=499 ua=x shedd rt=0.001 st=200 x",
		  false },
	};
	struct latency_datagram d;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		assert_int_equal(latency_datagram_decode(rows[i].line, strlen(rows[i].line),
							 false, &d), LOGLINE_OK);
		if (latency_served(&d) != rows[i].served)
			fail_msg("%s: served %d, expected %d", rows[i].line, latency_served(&d),
				 rows[i].served);
	}
	memset(&d, 0, sizeof(d)); /* a binary sample: no status */
	assert_true(latency_served(&d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(netstat_fields_are_found_by_name),
		cmocka_unit_test(netstat_without_the_fields_is_an_error),
		cmocka_unit_test(snmp_counters_are_found_by_name),
		cmocka_unit_test(snmp_reads_only_its_bytes),
		cmocka_unit_test(snmp_garbage_is_an_error),
		cmocka_unit_test(snmp_long_lines),
		cmocka_unit_test(passive_opens_estimate_is_bounded),
		cmocka_unit_test(latency_wire_format),
		cmocka_unit_test(latency_wire_format_2_counts_losses),
		cmocka_unit_test(latency_datagram_either_format),
		cmocka_unit_test(latency_binary_sample_capped),
		cmocka_unit_test(served_requests_by_status),
		cmocka_unit_test(percentiles_within_the_bucket_error),
		cmocka_unit_test(mid_mean_of_the_middle_80_percent),
		cmocka_unit_test(merge_keeps_exact_extremes),
		cmocka_unit_test(sojourn_slots_lose_no_sample),
		cmocka_unit_test(listener_drops_from_a_diag_message),
		cmocka_unit_test(listener_drops_count_only_increases_of_known_listeners),
		cmocka_unit_test(fullest_group_is_judged_on_its_own_backlog),
		cmocka_unit_test(worst_minimum_of_two_groups),
		cmocka_unit_test(listener_drops_count_as_overflows_only_with_listen_overflows),
	};

	return cmocka_run_group_tests_name("signals", tests, NULL, NULL);
}
