/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* xdp_harness.h - what the XDP tests (test_xdp.c, test_port_limit.c) and
 * the packet fuzzer (fuzz_xdp.c) share: the loaded program, per-CPU map
 * writes, counters summed over the CPUs as the daemon reads them, the
 * group teardown, pinning to one CPU, the flow hash of the proven-flow
 * cache. Each includes it once, after cmocka.h, libbpf and shedd.skel.h.
 */
#ifndef SHEDD_XDP_HARNESS_H
#define SHEDD_XDP_HARNESS_H

#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <string.h>

#include "flow_hash.h"

static struct shedd_bpf *skel;
static int nr_cpus; /* possible CPUs: length of every per-CPU value array */
/* The flow hash key the harness gives the program, as the daemon draws one. */
static const struct shedd_flow_key harness_key = { 0x5eddf10e4b3c2a19ULL, 0x0123456789abcdefULL };

static int libbpf_print_warn(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level != LIBBPF_WARN)
		return 0;
	return vfprintf(stderr, fmt, args);
}

/* Pin this process to the first CPU it may run on (into @cpu_out if not
 * NULL): BPF_PROG_TEST_RUN runs on the caller's CPU, and a bucket is per
 * CPU, so token counts are exact only if every run lands on the same one.
 * Counters are still summed over all CPUs. */
static int harness_pin_cpu(int *cpu_out)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set)) {
		print_error("sched_getaffinity: %s\n", strerror(errno));
		return -1;
	}
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++)
		;
	if (cpu == CPU_SETSIZE)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		print_error("pin to CPU %d: %s\n", cpu, strerror(errno));
		return -1;
	}
	if (cpu_out)
		*cpu_out = cpu;
	return 0;
}

/* The flow hash the programs key `proven`, `mss_cache` and `closing` with
 * (include/flow_hash.h, which the daemon uses too), of addresses as bytes
 * in network order (@words 32-bit words) and ports in host order. */
static __u32 flow_hash_of(const __u8 *saddr, const __u8 *daddr, int words, __u16 sport,
			  __u16 dport)
{
	__u32 s[4] = { 0 }, d[4] = { 0 };

	memcpy(s, saddr, 4 * (size_t)words);
	memcpy(d, daddr, 4 * (size_t)words);
	return flow_hash_keyed(harness_key.k0, harness_key.k1, s, d, words, htons(sport),
			       htons(dport));
}

/* Write the same value for every CPU of a per-CPU map. */
static int update_percpu(struct bpf_map *map, __u32 key, const void *val, size_t size)
{
	char *vals = calloc((size_t)nr_cpus, size);
	int err, i;

	if (!vals)
		return -ENOMEM;
	for (i = 0; i < nr_cpus; i++)
		memcpy(vals + (size_t)i * size, val, size);
	err = bpf_map__update_elem(map, &key, sizeof(key), vals, (size_t)nr_cpus * size,
				   BPF_ANY);
	free(vals);
	return err;
}

/* Counters summed over the CPUs, as the daemon reads them. */
/* Protect destination port @port as the daemon does: in the ports map
 * (the tc hand-off's) and in port_set (the XDP program's). */
static int protect_port(__u16 port)
{
	static struct shedd_port_set ps;
	__u32 zero = 0;
	__u8 one = 1;
	int err;

	err = bpf_map__update_elem(skel->maps.ports, &port, sizeof(port), &one, sizeof(one),
				   BPF_ANY);
	if (err)
		return err;
	shedd_port_set_add(&ps, port);
	return bpf_map__update_elem(skel->maps.port_set, &zero, sizeof(zero), &ps, sizeof(ps),
				    BPF_ANY);
}

static void read_stats(struct shedd_stats *sum)
{
	struct shedd_stats *vals = calloc((size_t)nr_cpus, sizeof(*vals));
	__u64 *acc = (__u64 *)sum;
	__u32 zero = 0;
	size_t w;
	int i, err;

	assert_non_null(vals);
	err = bpf_map__lookup_elem(skel->maps.stats, &zero, sizeof(zero), vals,
				   (size_t)nr_cpus * sizeof(*vals), 0);
	if (err) {
		free(vals);
		fail_msg("read stats: %s", strerror(-err));
	}
	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < nr_cpus; i++) {
		__u64 words[sizeof(*vals) / sizeof(__u64)];

		memcpy(words, &vals[i], sizeof(words));
		for (w = 0; w < sizeof(words) / sizeof(words[0]); w++)
			acc[w] += words[w];
	}
	free(vals);
}

/* Open and load the program with the test clock (use_test_clock): the
 * verdicts of a case do not depend on when it runs. 0, or -1 said. */
static int harness_load(void)
{
	int err;

	skel = shedd_bpf__open();
	if (!skel) {
		print_error("open shedd skeleton: %s\n", strerror(errno));
		return -1;
	}
	skel->rodata->use_test_clock = 1;
	SET_FLOW_SIP(skel->rodata, harness_key);
	/* This kernel has the SYN cookie helpers: verify the whole program. */
	skel->rodata->verify_enabled = 1;
	err = shedd_bpf__load(skel);
	if (err) {
		print_error("load shedd program: %s (needs root)\n", strerror(-err));
		shedd_bpf__destroy(skel);
		skel = NULL;
		return -1;
	}
	{
		__u32 zero = 0;

		err = bpf_map__update_elem(skel->maps.flow_key, &zero, sizeof(zero), &harness_key,
					   sizeof(harness_key), BPF_ANY);
	}
	if (err) {
		print_error("write the flow hash key: %s\n", strerror(-err));
		shedd_bpf__destroy(skel);
		skel = NULL;
		return -1;
	}
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	shedd_bpf__destroy(skel);
	skel = NULL;
	return 0;
}

#endif /* SHEDD_XDP_HARNESS_H */
