// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_port_limit.c - the port limits of the XDP program under
 * BPF_PROG_TEST_RUN: a port with a limit of its own sheds over it while
 * another protected port admits all it gets; no limit is looked up while
 * settings_cur does not say one exists. Test clock, one CPU; needs root.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "shedd.h"
#include "shedd.skel.h"
#include "xdp_harness.h"
#include "packets.h"
#include "settings.h"

#define STUCK_PORT 8085   /* protected, limited by the cases */
#define HEALTHY_PORT 8086 /* protected, never limited */
#define SLOT 5            /* the stuck port's slot */
#define T0_NS (10000ULL * SHEDD_NSEC_PER_SEC)

#define expect(cond, name, fmt, ...)                                         \
	do {                                                                 \
		if (!(cond))                                                 \
			fail_msg("%s: " fmt, (name), ##__VA_ARGS__);         \
	} while (0)

static const struct shedd_config cfg = { .default_class = SHEDD_SHEDDABLE };

/* settings_cur: entry 0, and @flags beside it. */
static void set_cur(__u32 flags)
{
	__u32 zero = 0, cur = flags;

	assert_int_equal(bpf_map__update_elem(skel->maps.settings_cur, &zero, sizeof(zero), &cur,
					      sizeof(cur), BPF_ANY), 0);
}

/* The stuck port's limit: @rate SYN/s, @burst tokens, in SLOT. */
static void limit_port(__u64 rate, __u64 burst)
{
	struct shedd_port_limit v = {
		.slot = SLOT,
		.r = { .rate_per_sec = rate, .prev_rate_per_sec = rate, .burst = burst,
		       .lease_ns = 1000000, .batch = 1, .flags = SHEDD_RATE_SET },
	};
	__u16 port = STUCK_PORT;

	assert_int_equal(bpf_map__update_elem(skel->maps.port_limit, &port, sizeof(port), &v,
					      sizeof(v), BPF_ANY), 0);
}

/* Every case starts from the same state: settings, a plenty rate for
 * every class, fresh class and slot buckets, no lease, no port limit, the
 * clock at T0. */
static int reset(void **state)
{
	struct shedd_rate rate = { .r = { .rate_per_sec = 1000000, .prev_rate_per_sec = 1000000,
					  .burst = 1000000, .lease_ns = 1000000, .batch = 1,
					  .flags = SHEDD_RATE_SET } };
	const struct shedd_port_bucket fresh_pb = {};
	const struct shedd_bucket fresh = {};
	const struct shedd_reserve empty = {};
	const struct shedd_stats zero_stats = {};
	const struct shedd_lease none = {};
	__u16 port = STUCK_PORT;
	__u32 zero = 0, i;
	int err = 0;

	(void)state;
	err = bpf_map__update_elem(skel->maps.settings, &zero, sizeof(zero), &cfg, sizeof(cfg),
				   BPF_ANY);
	for (i = 0; !err && i < SHEDD_NR_CLASSES; i++) {
		err = bpf_map__update_elem(skel->maps.rates, &i, sizeof(i), &rate, sizeof(rate),
					   BPF_F_LOCK);
		if (!err)
			err = bpf_map__update_elem(skel->maps.reserve, &i, sizeof(i), &empty,
						   sizeof(empty), BPF_ANY);
		if (!err)
			err = update_percpu(skel->maps.buckets, i, &fresh, sizeof(fresh));
	}
	for (i = 0; !err && i < MAX_PORT_LIMITS; i++) {
		err = update_percpu(skel->maps.port_buckets, i, &fresh_pb, sizeof(fresh_pb));
		if (!err)
			err = bpf_map__update_elem(skel->maps.port_reserve, &i, sizeof(i), &empty,
						   sizeof(empty), BPF_ANY);
	}
	if (!err)
		err = update_percpu(skel->maps.stats, 0, &zero_stats, sizeof(zero_stats));
	if (!err)
		err = bpf_map__update_elem(skel->maps.lease, &zero, sizeof(zero), &none,
					   sizeof(none), BPF_F_LOCK);
	if (err)
		return -1;
	bpf_map__delete_elem(skel->maps.port_limit, &port, sizeof(port), 0);
	set_cur(0);
	skel->bss->test_clock_ns = T0_NS;
	return 0;
}

/* Send @n SYNs to @dport; the number passed. Any other verdict than
 * XDP_PASS or XDP_DROP fails @name. */
static unsigned int syns(const char *name, __u16 dport, unsigned int n)
{
	struct pkt_spec spec = { .l3 = ETH_P_IP, .flags = TCP_SYN, .dport = dport };
	unsigned int i, passed = 0;
	__u8 out[PKT_MAX];
	struct pkt p;

	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_out = out, .data_size_out = sizeof(out),
			    .repeat = 1);
		int err;

		spec.sport = (__u16)(PKT_SPORT + i); /* each SYN a new client */
		pkt_build(&p, &spec);
		opts.data_in = p.data;
		opts.data_size_in = (__u32)p.len;
		err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.shedd_xdp), &opts);
		expect(err == 0, name, "BPF_PROG_TEST_RUN: %s", strerror(-err));
		expect(opts.retval == XDP_PASS || opts.retval == XDP_DROP, name,
		       "SYN %u to port %u: verdict %u", i + 1, dport, opts.retval);
		passed += opts.retval == XDP_PASS;
	}
	return passed;
}

/* The slot's counters, summed over the CPUs. */
static struct shedd_port_bucket slot_counts(__u32 slot)
{
	struct shedd_port_bucket *vals = calloc((size_t)nr_cpus, sizeof(*vals)), sum = {};
	int i, err;

	assert_non_null(vals);
	err = bpf_map__lookup_elem(skel->maps.port_buckets, &slot, sizeof(slot), vals,
				   (size_t)nr_cpus * sizeof(*vals), 0);
	if (err) {
		free(vals);
		fail_msg("read port_buckets[%u]: %s", slot, strerror(-err));
	}
	for (i = 0; i < nr_cpus; i++) {
		sum.syn += vals[i].syn;
		sum.admitted += vals[i].admitted;
		sum.shed += vals[i].shed;
	}
	free(vals);
	return sum;
}

/* A limit in the map but no flag in settings_cur: the program does not
 * look it up; every SYN is its class's to judge. */
static void no_flag_no_lookup(void **state)
{
	const char *name = "port limit without the flag";
	struct shedd_port_bucket pb;

	(void)state;
	limit_port(1, 1);
	expect(syns(name, STUCK_PORT, 20) == 20, name, "SYNs to the port were shed");
	pb = slot_counts(SLOT);
	expect(pb.syn == 0, name, "the slot judged %llu SYNs: the limit was looked up",
	       (unsigned long long)pb.syn);
}

/* The stuck port limited to 1/s with a burst of 2: two SYNs pass, the
 * rest are shed and counted; the healthy port admits every SYN. A second
 * later one more token. What the port's limit sheds is no demand of its
 * class: charged counts only what reached the class's bucket. */
static void limited_port_sheds_other_admits(void **state)
{
	const char *name = "limited port beside a healthy one";
	struct shedd_port_bucket pb;
	struct shedd_stats st;
	unsigned int stuck, healthy;

	(void)state;
	limit_port(1, 2);
	set_cur(SHEDD_CUR_PORT_LIMITS);
	stuck = syns(name, STUCK_PORT, 50);
	healthy = syns(name, HEALTHY_PORT, 50);
	expect(stuck == 2, name, "%u of 50 SYNs to the limited port passed, expected 2", stuck);
	expect(healthy == 50, name, "%u of 50 SYNs to the healthy port passed", healthy);
	pb = slot_counts(SLOT);
	expect(pb.syn == 50 && pb.admitted == 2 && pb.shed == 48, name,
	       "slot counters syn %llu admitted %llu shed %llu, expected 50 2 48",
	       (unsigned long long)pb.syn, (unsigned long long)pb.admitted,
	       (unsigned long long)pb.shed);
	read_stats(&st);
	expect(st.cls[SHEDD_SHEDDABLE].syn == 100, name, "class syn %llu, expected 100",
	       (unsigned long long)st.cls[SHEDD_SHEDDABLE].syn);
	expect(st.cls[SHEDD_SHEDDABLE].charged == 52, name, "class charged %llu, expected 52",
	       (unsigned long long)st.cls[SHEDD_SHEDDABLE].charged);
	expect(st.cls[SHEDD_SHEDDABLE].dropped == 48, name, "class dropped %llu, expected 48",
	       (unsigned long long)st.cls[SHEDD_SHEDDABLE].dropped);
	expect(st.cls[SHEDD_SHEDDABLE].admitted == 52, name, "class admitted %llu, expected 52",
	       (unsigned long long)st.cls[SHEDD_SHEDDABLE].admitted);

	skel->bss->test_clock_ns = T0_NS + SHEDD_NSEC_PER_SEC;
	stuck = syns(name, STUCK_PORT, 10);
	expect(stuck == 1, name, "a second later %u of 10 passed, expected 1", stuck);
	expect(syns(name, HEALTHY_PORT, 10) == 10, name, "the healthy port shed a SYN");
}

/* The limit is the daemon's judgement of now: once its lease ran out, the
 * port's SYNs go on to their class. */
static void lease_run_out_lifts_the_limit(void **state)
{
	const char *name = "port limit after the lease ran out";
	struct shedd_lease ls = { .heartbeat_ns = T0_NS - 5 * SHEDD_NSEC_PER_SEC,
				  .lease_ns = SHEDD_NSEC_PER_SEC, .relax_ns = SHEDD_NSEC_PER_SEC };
	__u32 zero = 0, c;

	(void)state;
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		ls.fail_rate_per_sec[c] = 1000000;
		ls.fail_burst[c] = 1000000;
	}
	limit_port(1, 1);
	set_cur(SHEDD_CUR_PORT_LIMITS);
	assert_int_equal(bpf_map__update_elem(skel->maps.lease, &zero, sizeof(zero), &ls,
					      sizeof(ls), BPF_F_LOCK), 0);
	expect(syns(name, STUCK_PORT, 20) == 20, name, "the port's limit held past the lease");
	ls.heartbeat_ns = T0_NS;
	assert_int_equal(bpf_map__update_elem(skel->maps.lease, &zero, sizeof(zero), &ls,
					      sizeof(ls), BPF_F_LOCK), 0);
	expect(syns(name, STUCK_PORT, 20) == 1, name, "within the lease the limit did not hold");
}

/* A flagged port without an entry (removed between the flag's reads) is
 * judged by its class alone. */
static void flag_without_entry_admits(void **state)
{
	const char *name = "flag without the port's entry";

	(void)state;
	set_cur(SHEDD_CUR_PORT_LIMITS);
	expect(syns(name, STUCK_PORT, 20) == 20, name, "a port without a limit shed SYNs");
}

/* The daemon's writers (user/maps/settings.c): the flag set beside the
 * index, kept by a switch of the settings record, and cleared without
 * moving the index; the program follows each. */
static void flag_survives_a_settings_switch(void **state)
{
	const char *name = "flag across settings_publish()";
	int slots = bpf_map__fd(skel->maps.settings), cur = bpf_map__fd(skel->maps.settings_cur);
	__u32 zero = 0, word = 0;

	(void)state;
	limit_port(1, 1);
	assert_int_equal(settings_set_flags(cur, SHEDD_CUR_PORT_LIMITS), 0);
	assert_int_equal(settings_publish(slots, cur, &cfg), 0);
	assert_int_equal(bpf_map_lookup_elem(cur, &zero, &word), 0);
	expect(word == (SHEDD_CUR_PORT_LIMITS | 1), name, "settings_cur %#x, expected %#x", word,
	       SHEDD_CUR_PORT_LIMITS | 1);
	assert_int_equal(settings_flags(cur), SHEDD_CUR_PORT_LIMITS);
	expect(syns(name, STUCK_PORT, 10) == 1, name, "the limit did not hold after the switch");
	assert_int_equal(settings_set_flags(cur, 0), 0);
	assert_int_equal(bpf_map_lookup_elem(cur, &zero, &word), 0);
	expect(word == 1, name, "settings_cur %#x after the flag was cleared, expected 1", word);
	expect(syns(name, STUCK_PORT, 10) == 10, name, "the limit held without the flag");
}

static int group_setup(void **state)
{
	(void)state;
	(void)flow_hash_of; /* the harness's, for the cases of proven flows */
	libbpf_set_print(libbpf_print_warn);
	if (harness_pin_cpu(NULL))
		return -1;
	nr_cpus = libbpf_num_possible_cpus();
	if (nr_cpus <= 0 || harness_load())
		return -1;
	return protect_port(STUCK_PORT) || protect_port(HEALTHY_PORT) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(no_flag_no_lookup, reset),
		cmocka_unit_test_setup(limited_port_sheds_other_admits, reset),
		cmocka_unit_test_setup(lease_run_out_lifts_the_limit, reset),
		cmocka_unit_test_setup(flag_without_entry_admits, reset),
		cmocka_unit_test_setup(flag_survives_a_settings_switch, reset),
	};

	return cmocka_run_group_tests_name("port limits (XDP)", tests, group_setup,
					   group_teardown);
}
