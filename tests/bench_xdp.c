// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* bench_xdp.c - what shedd's XDP program costs per packet, measured with
 * BPF_PROG_TEST_RUN beside trivial programs (XDP_PASS, XDP_DROP, and one
 * that reads the headers and drops a SYN) in the same run: every case runs
 * once per round, round-robin, each run a million repetitions or more;
 * min / median / max per case and ratios of the medians. A benchmark: it
 * asserts nothing, unless asked to with --check-ratio.
 *
 * BPF_PROG_TEST_RUN repeats a program on one buffer that it does not
 * re-initialise (bpf_test_run() in net/bpf/test_run.c), so the cases whose
 * reply rewrites the frame run behind tests/tools/xdp_replay.bpf.c, which
 * writes the frame back before every repetition; that harness is measured
 * in front of a trivial XDP_DROP, and its cost is taken out of the ratios.
 * Each run's counters are checked: a case whose repetitions did not all
 * take the path it names is flagged.
 *
 * Everything runs in a network namespace of the benchmark's own, with the
 * listeners and the veths the socket lookups and the source check need.
 * The setup of shedd's maps is done by the small set_* functions below.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <net/if.h>
#include <pthread.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "packets.h"
#include "tun_packets.h"
#include "shedd.h"
#include "shedd.skel.h"

#define DEFAULT_ROUNDS 7
#define MIN_ROUNDS 5        /* fewer are allowed, with a warning */
#define DEFAULT_REPEAT 1000000U
#define MIN_REPEAT 1000000U /* fewer are allowed, with a warning */
#define MAX_CASES 64
#define MAX_CHECKS 16
#define MAX_ROUNDS 101

/* The daemon's defaults (user/core/options.h) that the cases reproduce. */
#define BENCH_VERIFY_HOLD_NS 10000000000ULL
#define BENCH_LEASE_NS 1000000ULL

/* Ports: the protected listener, an established connection's (no cookie is
 * ever sent to it), a wildcard listener, a protected port without one. */
#define PORT_MAIN PKT_DPORT
#define PORT_EST (PKT_DPORT + 1)
#define PORT_WILD (PKT_DPORT + 2)
#define PORT_CLOSED (PKT_DPORT + 3)
#define EST_SPORT 41000

/* The replay harness's frame record (tests/tools/xdp_replay.bpf.c). */
#define REPLAY_MAX 256
#define REPLAY_NO_SCRUB 0xffffffffU
struct replay_frame {
	__u32 len;
	__u32 scrub_slot;
	__u8 data[REPLAY_MAX];
};

enum prog_kind { P_SHEDD, P_PASS, P_DROP, P_READDROP, P_NR };
static const char *const prog_names[P_NR] = { "shedd", "xdp_pass", "xdp_drop", "xdp_readdrop" };

/* How a case sets a class's bucket: admitted from the CPU's cache or by
 * borrowing from the reserve every time; shed from a CPU that backed off
 * (asks the reserve again after the lease) or asking the reserve each time. */
enum rate_profile { R_ADMIT_CACHE, R_ADMIT_RESERVE, R_SHED_BACKOFF, R_SHED_RESERVE };

/* The verification a case runs with. */
enum verify_profile {
	V_OFF,     /* every class charged directly */
	V_DEFAULT, /* the daemon's default: sheddable_plus and sheddable verified
		    * while shedding */
	V_ALWAYS,  /* sheddable answered with cookies */
};

/* Per-source fairness in the sheddable class (bpf/fair.h). */
enum fair_profile {
	F_OFF,   /* no class counts its sources */
	F_COUNT, /* every level counted, the class not shedding: an admitted SYN
		  * is counted, nothing checked */
	F_CHECK, /* shedding, limits out of reach: checked, then counted */
	F_SHED,  /* shedding, the source at its limit of 1: shed for fairness */
};

/* Port limits (include/shedd.h, "Port limits"). */
enum port_profile {
	PL_OFF,   /* no port limited: the flag clear */
	PL_OTHER, /* another port limited: the flag set, the SYN's port looked
		   * up and not found */
	PL_SHED,  /* the SYN's port limited at 1/s, its token spent: shed */
};

/* What a case runs before each of its runs, beyond rates and settings. */
enum case_prep {
	PREP_NONE,
	PREP_COOKIE_SENT, /* one SYN answered with a cookie just before: the
			   * port has a cookie outstanding */
	PREP_COOKIE_EST,  /* the same, on the established connection's port */
	PREP_VALID_ACK,   /* a fresh cookie, and the ACK that returns it */
};

#define NO_COUNTER 0 /* cls[0].syn, which no case checks */
#define CLS_CTR(c, f) (offsetof(struct shedd_stats, cls) + (c) * sizeof(struct shedd_class_stats) + \
		       offsetof(struct shedd_class_stats, f))
#define ST_CTR(f) offsetof(struct shedd_stats, f)

struct bench_case {
	const char *id;   /* for --cases, --check-ratio and the CSV */
	const char *desc; /* for people */
	enum prog_kind prog;
	struct pkt *pkt;
	int replay;       /* 1: behind the replay harness */
	enum rate_profile rate;
	enum verify_profile verify;
	enum case_prep prep;
	enum fair_profile fair;
	enum port_profile port_lim;
	int prefixes;     /* 1: the realistic prefix table; 2: only the source
			   * check's 198.18.1.0/24 in critical_plus; 0: none */
	__u8 source_check;
	int *ifindex;     /* the device it comes in on; NULL: lo */
	size_t counter;   /* offset of the __u64 in struct shedd_stats that every
			   * repetition must add one to; NO_COUNTER (0): none */
	__u32 verdict;    /* the XDP action expected */
	/* Results. */
	__u32 ns[MAX_ROUNDS];
	__u32 got_verdict;
	int path_bad;     /* runs whose counter did not grow by the repeat */
	__u64 path_seen;  /* the counter's growth in the last bad run */
	int selected;
};

struct bench {
	struct shedd_bpf *skel;
	struct bpf_object *obj[P_NR];
	int prog_fd[P_NR];
	struct bpf_object *replay_obj;
	int replay_fd, replay_frame_fd, replay_target_fd;
	int scrub_ok;     /* replay_scrub is shedd's proven map */
	__u32 scrub_slot; /* the valid ACK's entry there */
	int ncpus;
	int also_cpu; /* --also-cpu: a second CPU runs each direct case at
		       * the same time; -1: none */
	__u32 repeat;
	int rounds;
	int fwd, nofwd;   /* veths for the source check */
	struct pkt syn4;  /* the SYN the cookie cases answer */
	struct pkt syn_est; /* a SYN to the established connection's port */
	struct pkt ack4;  /* the ACK that returns its cookie */
};

static struct bench B;

/* kernel.bpf_stats_enabled, put back on exit. */
static char stats_saved[16], stats_before[16] = "?";
static int stats_changed;

static void stats_restore(void)
{
	int fd;

	if (!stats_changed)
		return;
	fd = open("/proc/sys/kernel/bpf_stats_enabled", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, stats_saved, strlen(stats_saved)) < 0) {
			/* Nothing more to do on the way out. */
		}
		close(fd);
	}
	stats_changed = 0;
}

static void on_signal(int sig)
{
	stats_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, (int)n, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* Turn the kernel's per-program run-time statistics off while measuring:
 * with them on, every run of every program reads the clock twice. */
static int stats_off(char *now, size_t n)
{
	FILE *f;

	if (read_line("/proc/sys/kernel/bpf_stats_enabled", stats_saved, sizeof(stats_saved))) {
		fprintf(stderr, "bench: read kernel.bpf_stats_enabled: %s\n", strerror(errno));
		return -1;
	}
	snprintf(stats_before, sizeof(stats_before), "%s", stats_saved);
	if (strcmp(stats_saved, "0")) {
		f = fopen("/proc/sys/kernel/bpf_stats_enabled", "w");
		if (!f || fputs("0\n", f) < 0 || fclose(f)) {
			fprintf(stderr, "bench: set kernel.bpf_stats_enabled to 0: %s\n",
				strerror(errno));
			return -1;
		}
		stats_changed = 1;
		strcat(stats_saved, "\n");
	}
	return read_line("/proc/sys/kernel/bpf_stats_enabled", now, n);
}

/* ---- the setup of shedd's maps: one small function per map ---- */

static int settings_fd(void) { return bpf_map__fd(B.skel->maps.settings); }

static void config_base(struct shedd_config *cfg, enum verify_profile v, __u8 source_check)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->default_class = SHEDD_SHEDDABLE;
	cfg->wscale = 7;
	cfg->cookie_rate_per_sec = MAX_COOKIE_RATE_PER_SEC;
	cfg->cookie_burst = MAX_COOKIE_BURST;
	cfg->verify_hold_ns = BENCH_VERIFY_HOLD_NS;
	cfg->source_check = source_check;
	/* A cookie or a RST answers only a SYN sent to this host's MAC. */
	memcpy(cfg->mac, pkt_server_mac, sizeof(cfg->mac));
	if (v == V_DEFAULT) {
		cfg->verify[SHEDD_SHEDDABLE_PLUS] = SHEDD_VERIFY_SHEDDING;
		cfg->verify[SHEDD_SHEDDABLE] = SHEDD_VERIFY_SHEDDING;
	} else if (v == V_ALWAYS) {
		cfg->verify[SHEDD_SHEDDABLE] = SHEDD_VERIFY_ALWAYS;
	}
}

/* Every slot of settings, so whichever settings_cur names holds it. */
static int set_settings(const struct shedd_config *cfg)
{
	__u32 slot;

	for (slot = 0; slot < SETTINGS_SLOTS; slot++)
		if (bpf_map_update_elem(settings_fd(), &slot, cfg, BPF_ANY))
			return -1;
	return 0;
}

/* A class's rate, its reserve full and every CPU's cache empty, in the
 * direct and the tunnel class space, so every run of a case starts from
 * the same state. */
static int set_class_rate(__u32 cls, enum rate_profile prof)
{
	struct shedd_rate r = { .r = { .burst = MAX_BURST, .batch = 1, .flags = SHEDD_RATE_SET } };
	struct shedd_reserve full = { 0 };
	struct shedd_bucket b[B.ncpus];

	switch (prof) {
	case R_ADMIT_CACHE:
		r.r.rate_per_sec = MAX_RATE_PER_SEC;
		r.r.batch = 64;
		r.r.lease_ns = BENCH_LEASE_NS;
		break;
	case R_ADMIT_RESERVE:
		r.r.rate_per_sec = MAX_RATE_PER_SEC;
		break;
	case R_SHED_BACKOFF:
		r.r.lease_ns = BENCH_LEASE_NS;
		break;
	case R_SHED_RESERVE:
		break;
	}
	memset(b, 0, sizeof(b));
	if (bpf_map_update_elem(bpf_map__fd(B.skel->maps.rates), &cls, &r, BPF_F_LOCK) ||
	    bpf_map_update_elem(bpf_map__fd(B.skel->maps.reserve), &cls, &full, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(B.skel->maps.buckets), &cls, b, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(B.skel->maps.tun_reserve), &cls, &full, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(B.skel->maps.tun_buckets), &cls, b, BPF_ANY))
		return -1;
	return 0;
}

static int set_rates(enum rate_profile prof)
{
	__u32 c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		if (set_class_rate(c, prof))
			return -1;
	return 0;
}

static int set_port(__u16 port)
{
	static struct shedd_port_set ps;
	__u32 zero = 0;
	__u8 one = 1;

	/* As the daemon: the ports map (the tc hand-off's) and port_set. */
	shedd_port_set_add(&ps, port);
	return bpf_map_update_elem(bpf_map__fd(B.skel->maps.ports), &port, &one, BPF_ANY) ||
	       bpf_map_update_elem(bpf_map__fd(B.skel->maps.port_set), &zero, &ps, BPF_ANY);
}

/* A realistic prefix table: 20 IPv4 and 10 IPv6 prefixes in three classes
 * above the default. A SYN from PKT_V4_CLIENT matches none of them; one
 * from PREFIX_MATCH_V4 falls in 198.18.64.0/18, sheddable_plus. */
#define PREFIX_MATCH_V4 "198.18.77.9"
static const struct {
	const char *addr;
	__u32 len, cls;
} prefixes4[] = {
	{ "198.18.1.0", 24, SHEDD_CRITICAL_PLUS },  { "198.18.2.0", 24, SHEDD_CRITICAL_PLUS },
	{ "198.18.3.0", 24, SHEDD_CRITICAL },       { "198.18.4.0", 22, SHEDD_CRITICAL },
	{ "198.18.8.0", 21, SHEDD_CRITICAL },       { "198.18.16.0", 20, SHEDD_SHEDDABLE_PLUS },
	{ "198.18.32.0", 19, SHEDD_SHEDDABLE_PLUS }, { "198.18.64.0", 18, SHEDD_SHEDDABLE_PLUS },
	{ "198.18.128.0", 25, SHEDD_CRITICAL },     { "198.18.128.128", 26, SHEDD_CRITICAL_PLUS },
	{ "198.18.129.0", 24, SHEDD_CRITICAL },     { "198.18.130.0", 23, SHEDD_SHEDDABLE_PLUS },
	{ "198.18.132.0", 22, SHEDD_CRITICAL },     { "198.18.136.0", 29, SHEDD_CRITICAL_PLUS },
	{ "198.18.140.0", 24, SHEDD_SHEDDABLE_PLUS }, { "198.18.141.16", 28, SHEDD_CRITICAL },
	{ "198.18.200.0", 24, SHEDD_CRITICAL },     { "198.19.128.0", 17, SHEDD_SHEDDABLE_PLUS },
	{ "198.19.2.0", 24, SHEDD_CRITICAL_PLUS },  { "198.19.3.4", 32, SHEDD_CRITICAL },
};
static const struct {
	const char *addr;
	__u32 len, cls;
} prefixes6[] = {
	{ "2001:db8:1::", 48, SHEDD_CRITICAL_PLUS },  { "2001:db8:2::", 48, SHEDD_CRITICAL },
	{ "2001:db8:3::", 56, SHEDD_CRITICAL },       { "2001:db8:4::", 64, SHEDD_SHEDDABLE_PLUS },
	{ "2001:db8:5:1::", 64, SHEDD_CRITICAL_PLUS }, { "2001:db8:6::", 40, SHEDD_SHEDDABLE_PLUS },
	{ "2001:db8:a::", 48, SHEDD_CRITICAL },       { "2001:db8:b::", 48, SHEDD_SHEDDABLE_PLUS },
	{ "2001:db8:c:d::", 64, SHEDD_CRITICAL },     { "2001:db8:f000::", 39, SHEDD_CRITICAL_PLUS },
};

/* @mode: 0 no prefix, 1 the table above, 2 only its first entry (the
 * source check's 198.18.1.0/24). */
static int set_prefixes(int mode)
{
	int fd4 = bpf_map__fd(B.skel->maps.prefix_v4), fd6 = bpf_map__fd(B.skel->maps.prefix_v6);
	size_t i;

	for (i = 0; i < sizeof(prefixes4) / sizeof(prefixes4[0]); i++) {
		struct shedd_lpm_v4 k = { .prefixlen = prefixes4[i].len };
		int want = mode == 1 || (mode == 2 && i == 0);

		inet_pton(AF_INET, prefixes4[i].addr, k.addr);
		if (want ? bpf_map_update_elem(fd4, &k, &prefixes4[i].cls, BPF_ANY)
			 : (bpf_map_delete_elem(fd4, &k) && errno != ENOENT))
			return -1;
	}
	for (i = 0; i < sizeof(prefixes6) / sizeof(prefixes6[0]); i++) {
		struct shedd_lpm_v6 k = { .prefixlen = prefixes6[i].len };

		inet_pton(AF_INET6, prefixes6[i].addr, k.addr);
		if (mode == 1 ? bpf_map_update_elem(fd6, &k, &prefixes6[i].cls, BPF_ANY)
			      : (bpf_map_delete_elem(fd6, &k) && errno != ENOENT))
			return -1;
	}
	return 0;
}

/* The tunnels that end here: IPIP and VXLAN to PKT_V4_SERVER. The plain
 * cases pay what such a host pays, the tunnel cases open one level. */
static int set_tunnels(void)
{
	struct shedd_tun_config tc = { .kinds = SHEDD_TUN_IPIP, .udp_port = { TUNP_VXLAN_PORT },
				       .udp_kind = { SHEDD_UDP_VXLAN } };
	struct shedd_tun_addr local = { .addr = { [10] = 0xff, [11] = 0xff } };
	__u32 zero = 0;
	__u8 one = 1;

	inet_pton(AF_INET, PKT_V4_SERVER, &local.addr[12]);
	if (bpf_map_update_elem(bpf_map__fd(B.skel->maps.tun_config), &zero, &tc, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(B.skel->maps.tun_local), &local, &one, BPF_ANY))
		return -1;
	return 0;
}

/* The sum over CPUs of the counter at @off of the stats map. */
static int stats_counter(size_t off, __u64 *sum)
{
	size_t stride = (sizeof(struct shedd_stats) + 7) & ~(size_t)7;
	__u8 *v = calloc((size_t)B.ncpus, stride);
	__u32 zero = 0;
	int c;

	if (!v)
		return -1;
	if (bpf_map_lookup_elem(bpf_map__fd(B.skel->maps.stats), &zero, v)) {
		free(v);
		return -1;
	}
	*sum = 0;
	for (c = 0; c < B.ncpus; c++) {
		__u64 x;

		memcpy(&x, v + (size_t)c * stride + off, sizeof(x));
		*sum += x;
	}
	free(v);
	return 0;
}

/* ---- running a program ---- */

static int test_run(int fd, const struct pkt *p, int ifindex, __u32 repeat, __u32 *retval,
		    __u32 *ns, __u8 *out, __u32 *out_len)
{
	__u8 buf[PKT_MAX + 64];
	struct xdp_md ctx = { .data_end = (__u32)p->len, .ingress_ifindex = (__u32)ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p->data, .data_size_in = (__u32)p->len,
		    .data_out = out ? out : buf, .data_size_out = sizeof(buf), .repeat = repeat,
		    .ctx_in = ifindex ? &ctx : NULL, .ctx_size_in = ifindex ? sizeof(ctx) : 0);

	if (bpf_prog_test_run_opts(fd, &o))
		return -errno;
	*retval = o.retval;
	if (ns)
		*ns = o.duration;
	if (out_len)
		*out_len = o.data_size_out;
	return 0;
}

/* Point the replay harness at @target, replaying @p. */
static int replay_load(int target, const struct pkt *p, __u32 scrub_slot)
{
	struct replay_frame f = { .len = (__u32)p->len, .scrub_slot = scrub_slot };
	__u32 zero = 0;

	if (p->len > REPLAY_MAX)
		return -E2BIG;
	memcpy(f.data, p->data, p->len);
	if (bpf_map_update_elem(B.replay_frame_fd, &zero, &f, BPF_ANY) ||
	    bpf_map_update_elem(B.replay_target_fd, &zero, &target, BPF_ANY))
		return -errno;
	return 0;
}

/* One SYN (@syn) answered with a cookie; its SYN-ACK in @synack. */
static int send_cookie(const struct pkt *syn, __u8 *synack)
{
	struct shedd_config cfg;
	__u32 ret = 0, len = 0;
	int err;

	config_base(&cfg, V_ALWAYS, SHEDD_SRC_OFF);
	if (set_settings(&cfg) || set_rates(R_ADMIT_CACHE))
		return -errno;
	err = test_run(B.prog_fd[P_SHEDD], syn, 0, 1, &ret, NULL, synack, &len);
	if (err)
		return err;
	if (ret != XDP_TX || len != syn->len) {
		fprintf(stderr, "bench: the SYN got no cookie SYN-ACK of its own length "
			"(verdict %u, %u bytes of %zu)\n", ret, len, syn->len);
		return -EPROTO;
	}
	return 0;
}

/* The ACK that completes the handshake of @synack (the program's reply to
 * B.syn4: IPv4, no VLAN). */
static void ack_of(struct pkt *ack, const __u8 *synack)
{
	__u32 cookie, ack_seq;
	size_t tcp = 14 + 20;

	memcpy(&cookie, synack + tcp + 4, 4);
	ack_seq = htonl(ntohl(cookie) + 1);
	pkt_build(ack, &(struct pkt_spec){ .flags = TCP_ACK, .seq = PKT_SEQ + 1 });
	memcpy(ack->data + tcp + 8, &ack_seq, 4);
}

/* The entry of shedd's proven map that the valid ACK writes, found by
 * running it once from a clean map: the replay clears it before every
 * repetition, so each one is the first ACK of its flow. */
static int find_scrub_slot(void)
{
	struct bpf_map *m = bpf_object__find_map_by_name(B.skel->obj, "proven");
	__u32 n, vsz, key, ret = 0;
	__u8 *v, zero[64] = { 0 };
	int fd, err = -1;

	if (!m || !B.scrub_ok)
		return -1;
	fd = bpf_map__fd(m);
	n = bpf_map__max_entries(m);
	vsz = bpf_map__value_size(m);
	if (vsz > sizeof(zero))
		return -1;
	v = malloc(vsz);
	if (!v)
		return -1;
	for (key = 0; key < n; key++)
		bpf_map_update_elem(fd, &key, zero, BPF_ANY);
	if (test_run(B.prog_fd[P_SHEDD], &B.ack4, 0, 1, &ret, NULL, NULL, NULL))
		goto out;
	for (key = 0; key < n; key++) {
		if (!bpf_map_lookup_elem(fd, &key, v) && memcmp(v, zero, vsz)) {
			B.scrub_slot = key;
			err = 0;
			break;
		}
	}
out:
	free(v);
	return err;
}

static int set_fair_class(const struct shedd_fair_class *fc)
{
	__u32 cls;

	for (cls = 0; cls < SHEDD_NR_CLASSES; cls++) {
		const struct shedd_fair_class off = {};

		if (bpf_map__update_elem(B.skel->maps.fair_config, &cls, sizeof(cls),
					 cls == SHEDD_SHEDDABLE ? fc : &off, sizeof(*fc), BPF_ANY))
			return -errno;
	}
	return 0;
}

/* The fairness of @c; for F_SHED, its packet admitted and counted once
 * first, so that its source is at the limit of 1 (for two windows, 4 s:
 * longer than a run). */
static int set_fair(const struct bench_case *c)
{
	struct shedd_fair_class fc = { .levels = FAIR_ALL_LEVELS };
	__u32 ret;
	int err;

	switch (c->fair) {
	case F_OFF:
		fc.levels = 0;
		break;
	case F_COUNT:
		break;
	case F_CHECK:
		fc.active = 1;
		fc.limit[0] = fc.limit[1] = fc.limit[2] = 4000000000U;
		break;
	case F_SHED:
		if ((err = set_fair_class(&fc)) ||
		    (err = test_run(B.prog_fd[P_SHEDD], c->pkt, 0, 1, &ret, NULL, NULL, NULL)))
			return err;
		if (ret != XDP_PASS)
			return -EAGAIN;
		fc.active = 1;
		fc.limit[0] = fc.limit[1] = fc.limit[2] = 1;
		break;
	}
	return set_fair_class(&fc);
}

/* The port limits of @c: the flag of settings_cur (entry 0), the limited
 * port's record, its slot's reserve and caches empty. */
static int set_port_limit(const struct bench_case *c)
{
	struct shedd_port_limit pl = {
		.slot = 0,
		.r = { .rate_per_sec = 1, .prev_rate_per_sec = 1, .burst = 1,
		       .lease_ns = 1000000, .batch = 1, .flags = SHEDD_RATE_SET },
	};
	struct shedd_port_bucket pb[B.ncpus];
	struct shedd_reserve empty = { 0 };
	__u32 zero = 0, cur = c->port_lim == PL_OFF ? 0 : SHEDD_CUR_PORT_LIMITS;
	__u16 port = c->port_lim == PL_SHED ? PORT_MAIN : PORT_CLOSED;
	__u16 key;
	int fd = bpf_map__fd(B.skel->maps.port_limit);

	memset(pb, 0, sizeof(pb));
	/* Spent: a refill from a time ahead of the clock credits nothing
	 * (tb_refill()), so every repetition is shed. */
	if (c->port_lim == PL_SHED)
		empty.s.last_ns = ~0ULL >> 1;
	while (!bpf_map_get_next_key(fd, NULL, &key))
		if (bpf_map_delete_elem(fd, &key))
			return -errno;
	if (bpf_map_update_elem(bpf_map__fd(B.skel->maps.settings_cur), &zero, &cur, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(B.skel->maps.port_reserve), &zero, &empty, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(B.skel->maps.port_buckets), &zero, pb, BPF_ANY))
		return -errno;
	if (c->port_lim != PL_OFF && bpf_map_update_elem(fd, &port, &pl, BPF_ANY))
		return -errno;
	return 0;
}

/* Before every run of @c: rates, settings, prefixes, and what its packet
 * needs to find. */
static int prepare(struct bench_case *c)
{
	struct shedd_config cfg;
	__u8 synack[PKT_MAX + 64];
	int err;

	if (c->prep != PREP_NONE) {
		err = send_cookie(c->prep == PREP_COOKIE_EST ? &B.syn_est : &B.syn4, synack);
		if (err)
			return err;
		if (c->prep == PREP_VALID_ACK)
			ack_of(&B.ack4, synack);
	}
	config_base(&cfg, c->verify, c->source_check);
	if (set_settings(&cfg) || set_rates(c->rate) || set_prefixes(c->prefixes))
		return -errno ? -errno : -EIO;
	if ((err = set_fair(c)) || (err = set_port_limit(c)))
		return err;
	if (c->prep == PREP_VALID_ACK && B.scrub_slot == REPLAY_NO_SCRUB && find_scrub_slot())
		fprintf(stderr, "bench: no proven entry to clear: the valid ACK's repeats "
			"follow the first one's verdict\n");
	return 0;
}

/* --also-cpu: the same program on the same frame, on another CPU, started
 * with the measured run: what the shared maps cost when two CPUs write
 * them at once. */
struct also_run {
	int fd, ifindex, cpu, err;
	const struct pkt *pkt;
	pthread_barrier_t *start;
};

static void *also_run(void *arg)
{
	struct also_run *a = arg;
	cpu_set_t set;
	__u32 ret = 0;

	CPU_ZERO(&set);
	CPU_SET(a->cpu, &set);
	a->err = sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
	pthread_barrier_wait(a->start);
	if (!a->err)
		a->err = test_run(a->fd, a->pkt, a->ifindex, B.repeat, &ret, NULL, NULL, NULL);
	return NULL;
}

/* One run of @c: its ns per packet in *ns. */
static int measure(struct bench_case *c, __u32 *ns)
{
	int ifindex = c->ifindex ? *c->ifindex : 0, err, also = B.also_cpu >= 0 && !c->replay;
	struct also_run a = { .fd = B.prog_fd[c->prog], .ifindex = ifindex, .cpu = B.also_cpu,
			      .pkt = c->pkt };
	pthread_barrier_t start;
	__u64 before = 0, after = 0;
	pthread_t t;
	__u32 ret = 0;

	if (c->prog == P_SHEDD) {
		err = prepare(c);
		if (err)
			return err;
	}
	if (c->counter != NO_COUNTER && stats_counter(c->counter, &before))
		return -errno;
	if (c->replay) {
		err = replay_load(B.prog_fd[c->prog], c->pkt,
				  c->prep == PREP_VALID_ACK ? B.scrub_slot : REPLAY_NO_SCRUB);
		if (!err)
			err = test_run(B.replay_fd, c->pkt, ifindex, B.repeat, &ret, ns, NULL, NULL);
	} else if (also) {
		pthread_barrier_init(&start, NULL, 2);
		a.start = &start;
		if (pthread_create(&t, NULL, also_run, &a)) {
			pthread_barrier_destroy(&start);
			return -EAGAIN;
		}
		pthread_barrier_wait(&start);
		err = test_run(B.prog_fd[c->prog], c->pkt, ifindex, B.repeat, &ret, ns, NULL, NULL);
		pthread_join(t, NULL);
		pthread_barrier_destroy(&start);
		if (!err)
			err = a.err;
	} else {
		err = test_run(B.prog_fd[c->prog], c->pkt, ifindex, B.repeat, &ret, ns, NULL, NULL);
	}
	if (err)
		return err;
	c->got_verdict = ret;
	if (c->counter != NO_COUNTER) {
		if (stats_counter(c->counter, &after))
			return -errno;
		if (after - before != (__u64)B.repeat * (also ? 2 : 1)) {
			c->path_bad++;
			c->path_seen = after - before;
		}
	}
	return 0;
}

/* ---- the network namespace ---- */

static int sock_listen(int family, const char *addr, __u16 port)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	socklen_t len = family == AF_INET ? sizeof(*s4) : sizeof(*s6);
	int fd = socket(family, SOCK_STREAM, 0), one = 1;

	if (family == AF_INET) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		if (addr)
			inet_pton(AF_INET, addr, &s4->sin_addr);
	} else {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		if (addr)
			inet_pton(AF_INET6, addr, &s6->sin6_addr);
	}
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 128))
		return -1;
	return fd;
}

/* An established connection PKT_V4_CLIENT:EST_SPORT -> PKT_V4_SERVER:PORT_EST,
 * whose segments the program's socket lookup finds. */
static int establish(void)
{
	struct sockaddr_in cli = { .sin_family = AF_INET, .sin_port = htons(EST_SPORT) };
	struct sockaddr_in srv = { .sin_family = AF_INET, .sin_port = htons(PORT_EST) };
	int lfd = sock_listen(AF_INET, PKT_V4_SERVER, PORT_EST), fd, afd, one = 1;

	inet_pton(AF_INET, PKT_V4_CLIENT, &cli.sin_addr);
	inet_pton(AF_INET, PKT_V4_SERVER, &srv.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&cli, sizeof(cli)) ||
	    connect(fd, (struct sockaddr *)&srv, sizeof(srv)))
		return -1;
	afd = accept(lfd, NULL, NULL);
	return afd < 0 ? -1 : 0;
}

static int netns_setup(void)
{
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "bench: network namespace: %s\n", strerror(errno));
		return -1;
	}
	if (system("ip link set lo up && ip addr add " PKT_V4_SERVER "/32 dev lo && "
		   "ip addr add " PKT_V4_CLIENT "/32 dev lo && "
		   "ip addr add " PKT_V6_SERVER "/128 dev lo nodad && "
		   "ip link add shb0 type veth peer name shb0p && "
		   "ip link add shb1 type veth peer name shb1p && ip link set shb0 up && "
		   "ip link set shb0p up && ip link set shb1 up && ip link set shb1p up && "
		   "ip route add 198.18.1.0/24 dev shb0 && "
		   "sysctl -qw net.ipv4.conf.shb0.forwarding=1")) {
		fprintf(stderr, "bench: addresses and veths in the namespace\n");
		return -1;
	}
	B.fwd = (int)if_nametoindex("shb0");
	B.nofwd = (int)if_nametoindex("shb1");
	if (!B.fwd || !B.nofwd) {
		fprintf(stderr, "bench: veths: %s\n", strerror(errno));
		return -1;
	}
	if (sock_listen(AF_INET, PKT_V4_SERVER, PORT_MAIN) < 0 ||
	    sock_listen(AF_INET6, PKT_V6_SERVER, PORT_MAIN) < 0 ||
	    sock_listen(AF_INET, NULL, PORT_WILD) < 0 || establish()) {
		fprintf(stderr, "bench: listeners and the established connection: %s\n",
			strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- loading ---- */

static int load_obj(enum prog_kind k, const char *dir)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/%s.bpf.o", dir, prog_names[k]);
	B.obj[k] = bpf_object__open_file(path, NULL);
	if (!B.obj[k] || bpf_object__load(B.obj[k])) {
		fprintf(stderr, "bench: load %s: %s\n", path, strerror(errno));
		return -1;
	}
	B.prog_fd[k] = bpf_program__fd(bpf_object__next_program(B.obj[k], NULL));
	return 0;
}

static int load_all(const char *dir)
{
	char path[PATH_MAX + 32];
	struct bpf_map *scrub, *proven;
	int k;

	B.skel = shedd_bpf__open();
	if (B.skel)
		B.skel->rodata->verify_enabled = 1;
	if (!B.skel || shedd_bpf__load(B.skel)) {
		fprintf(stderr, "bench: load shedd: %s\n", strerror(errno));
		return -1;
	}
	B.prog_fd[P_SHEDD] = bpf_program__fd(B.skel->progs.shedd_xdp);
	for (k = P_PASS; k < P_NR; k++)
		if (load_obj(k, dir))
			return -1;
	snprintf(path, sizeof(path), "%s/xdp_replay.bpf.o", dir);
	B.replay_obj = bpf_object__open_file(path, NULL);
	if (!B.replay_obj) {
		fprintf(stderr, "bench: open %s: %s\n", path, strerror(errno));
		return -1;
	}
	/* The harness clears the valid ACK's entry of shedd's proven map,
	 * if the program has one whose value starts with its stamp. */
	scrub = bpf_object__find_map_by_name(B.replay_obj, "replay_scrub");
	proven = bpf_object__find_map_by_name(B.skel->obj, "proven");
	if (scrub && proven && bpf_map__type(proven) == BPF_MAP_TYPE_ARRAY &&
	    bpf_map__value_size(proven) >= 4 && !bpf_map__reuse_fd(scrub, bpf_map__fd(proven)))
		B.scrub_ok = 1;
	if (bpf_object__load(B.replay_obj)) {
		fprintf(stderr, "bench: load %s: %s\n", path, strerror(errno));
		return -1;
	}
	B.replay_fd = bpf_program__fd(bpf_object__find_program_by_name(B.replay_obj, "xdp_replay"));
	B.replay_frame_fd = bpf_object__find_map_fd_by_name(B.replay_obj, "replay_frame");
	B.replay_target_fd = bpf_object__find_map_fd_by_name(B.replay_obj, "replay_target");
	if (B.replay_fd < 0 || B.replay_frame_fd < 0 || B.replay_target_fd < 0) {
		fprintf(stderr, "bench: %s lacks its program or maps\n", path);
		return -1;
	}
	if (set_port(PORT_MAIN) || set_port(PORT_EST) || set_port(PORT_WILD) ||
	    set_port(PORT_CLOSED) || set_tunnels()) {
		fprintf(stderr, "bench: configure shedd's maps: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- the cases ---- */

static struct pkt syn4, syn6, syn4_vlan, syn4_qinq, syn4_prio8, syn4_pfx, syn4_crit,
	syn6_pfx, ack4_est, ack4_forged, ack4_stray, fin4, udp4, ipip_syn, vxlan_syn, vxlan_ack,
	syn_wild, syn_closed;

#define SHED(c) CLS_CTR(c, dropped)
#define ADMIT(c) CLS_CTR(c, admitted)
/* A case: id, description, program, packet, then what differs from the
 * defaults (rates R_ADMIT_CACHE, verification off, direct run, lo). */
#define CASE(ID, DESC, PROG, PKT, ...) \
	{ .id = ID, .desc = DESC, .prog = PROG, .pkt = PKT, __VA_ARGS__ }
static struct bench_case cases[] = {
	/* The floors, measured like every case. */
	CASE("pass", "trivial XDP_PASS", P_PASS, &syn4, .verdict = XDP_PASS),
	CASE("drop", "trivial XDP_DROP", P_DROP, &syn4, .verdict = XDP_DROP),
	CASE("readdrop", "read headers, drop the SYN", P_READDROP, &syn4, .verdict = XDP_DROP),
	CASE("replay_drop", "replay harness + XDP_DROP", P_DROP, &syn4, .replay = 1,
	     .verdict = XDP_DROP),
	/* Unverified SYNs. */
	CASE("syn4_admit_cache", "IPv4 SYN admitted, CPU cache", P_SHEDD, &syn4,
	     .counter = ADMIT(SHEDD_SHEDDABLE), .verdict = XDP_PASS),
	CASE("syn4_admit_reserve", "IPv4 SYN admitted, borrow", P_SHEDD, &syn4,
	     .rate = R_ADMIT_RESERVE, .counter = ADMIT(SHEDD_SHEDDABLE), .verdict = XDP_PASS),
	CASE("syn6_admit_cache", "IPv6 SYN admitted, CPU cache", P_SHEDD, &syn6,
	     .counter = ADMIT(SHEDD_SHEDDABLE), .verdict = XDP_PASS),
	CASE("syn6_admit_reserve", "IPv6 SYN admitted, borrow", P_SHEDD, &syn6,
	     .rate = R_ADMIT_RESERVE, .counter = ADMIT(SHEDD_SHEDDABLE), .verdict = XDP_PASS),
	CASE("syn4_shed", "IPv4 SYN shed, backed off", P_SHEDD, &syn4, .rate = R_SHED_BACKOFF,
	     .counter = SHED(SHEDD_SHEDDABLE), .verdict = XDP_DROP),
	CASE("syn4_shed_reserve", "IPv4 SYN shed, asks the reserve", P_SHEDD, &syn4,
	     .rate = R_SHED_RESERVE, .counter = SHED(SHEDD_SHEDDABLE), .verdict = XDP_DROP),
	CASE("syn6_shed", "IPv6 SYN shed, backed off", P_SHEDD, &syn6, .rate = R_SHED_BACKOFF,
	     .counter = SHED(SHEDD_SHEDDABLE), .verdict = XDP_DROP),
	CASE("syn6_shed_reserve", "IPv6 SYN shed, asks the reserve", P_SHEDD, &syn6,
	     .rate = R_SHED_RESERVE, .counter = SHED(SHEDD_SHEDDABLE), .verdict = XDP_DROP),
	CASE("syn4_vlan_shed", "802.1Q SYN shed, backed off", P_SHEDD, &syn4_vlan,
	     .rate = R_SHED_BACKOFF, .counter = SHED(SHEDD_SHEDDABLE), .verdict = XDP_DROP),
	CASE("syn4_qinq_shed", "802.1ad+802.1Q SYN shed", P_SHEDD, &syn4_qinq,
	     .rate = R_SHED_BACKOFF, .counter = SHED(SHEDD_SHEDDABLE), .verdict = XDP_DROP),
	CASE("syn4_prio8_shed", "8 VID 0 tags, SYN shed", P_SHEDD, &syn4_prio8,
	     .rate = R_SHED_BACKOFF, .counter = SHED(SHEDD_SHEDDABLE), .verdict = XDP_DROP),
	/* Per-source fairness, beside the cases above without it. */
	CASE("syn4_admit_fair", "IPv4 SYN admitted, counted (fairness)", P_SHEDD, &syn4,
	     .fair = F_COUNT, .counter = ADMIT(SHEDD_SHEDDABLE), .verdict = XDP_PASS),
	CASE("syn4_admit_fair_check", "IPv4 SYN admitted, checked, counted", P_SHEDD, &syn4,
	     .fair = F_CHECK, .counter = ADMIT(SHEDD_SHEDDABLE), .verdict = XDP_PASS),
	CASE("syn6_admit_fair_check", "IPv6 SYN admitted, checked, counted", P_SHEDD, &syn6,
	     .fair = F_CHECK, .counter = ADMIT(SHEDD_SHEDDABLE), .verdict = XDP_PASS),
	CASE("syn4_fair_shed", "IPv4 SYN shed for fairness", P_SHEDD, &syn4, .fair = F_SHED,
	     .counter = SHED(SHEDD_SHEDDABLE), .verdict = XDP_DROP),
	CASE("syn6_fair_shed", "IPv6 SYN shed for fairness", P_SHEDD, &syn6, .fair = F_SHED,
	     .counter = SHED(SHEDD_SHEDDABLE), .verdict = XDP_DROP),
	CASE("syn4_shed_fair", "IPv4 SYN shed, backed off, fairness on", P_SHEDD, &syn4,
	     .rate = R_SHED_BACKOFF, .fair = F_CHECK, .counter = SHED(SHEDD_SHEDDABLE),
	     .verdict = XDP_DROP),
	CASE("syn6_shed_fair", "IPv6 SYN shed, backed off, fairness on", P_SHEDD, &syn6,
	     .rate = R_SHED_BACKOFF, .fair = F_CHECK, .counter = SHED(SHEDD_SHEDDABLE),
	     .verdict = XDP_DROP),
	/* Port limits: another port limited (the flag set, the lookup
	 * misses), and the SYN's own port limited and spent. */
	CASE("syn4_admit_portlim", "IPv4 SYN admitted, another port limited", P_SHEDD, &syn4,
	     .port_lim = PL_OTHER, .counter = ADMIT(SHEDD_SHEDDABLE), .verdict = XDP_PASS),
	CASE("syn4_port_shed", "IPv4 SYN shed by its port's limit", P_SHEDD, &syn4,
	     .port_lim = PL_SHED, .counter = SHED(SHEDD_SHEDDABLE), .verdict = XDP_DROP),
	/* Classification with a prefix table. */
	CASE("syn4_pfx_none", "IPv4 SYN shed, 30 prefixes, in none", P_SHEDD, &syn4,
	     .rate = R_SHED_BACKOFF, .prefixes = 1, .counter = SHED(SHEDD_SHEDDABLE),
	     .verdict = XDP_DROP),
	CASE("syn4_pfx_match", "IPv4 SYN shed, 30 prefixes, in one", P_SHEDD, &syn4_pfx,
	     .rate = R_SHED_BACKOFF, .prefixes = 1, .counter = SHED(SHEDD_SHEDDABLE_PLUS),
	     .verdict = XDP_DROP),
	CASE("syn6_pfx_none", "IPv6 SYN shed, 30 prefixes, in none", P_SHEDD, &syn6,
	     .rate = R_SHED_BACKOFF, .prefixes = 1, .counter = SHED(SHEDD_SHEDDABLE),
	     .verdict = XDP_DROP),
	CASE("syn6_pfx_match", "IPv6 SYN shed, 30 prefixes, in one", P_SHEDD, &syn6_pfx,
	     .rate = R_SHED_BACKOFF, .prefixes = 1, .counter = SHED(SHEDD_SHEDDABLE_PLUS),
	     .verdict = XDP_DROP),
	/* Verified admission. */
	CASE("syn4_cookie", "IPv4 SYN -> cookie SYN-ACK", P_SHEDD, &syn4, .replay = 1,
	     .verify = V_ALWAYS, .counter = CLS_CTR(SHEDD_SHEDDABLE, cookie_sent),
	     .verdict = XDP_TX),
	CASE("syn6_cookie", "IPv6 SYN -> cookie SYN-ACK", P_SHEDD, &syn6, .replay = 1,
	     .verify = V_ALWAYS, .counter = CLS_CTR(SHEDD_SHEDDABLE, cookie_sent),
	     .verdict = XDP_TX),
	/* The harness's calibration: a case that needs no replay, replayed;
	 * its net should be syn4_shed's. */
	CASE("syn4_shed_replayed", "IPv4 SYN shed, through the replay", P_SHEDD, &syn4,
	     .replay = 1, .rate = R_SHED_BACKOFF, .counter = SHED(SHEDD_SHEDDABLE),
	     .verdict = XDP_DROP),
	CASE("ack4_cookie_valid", "ACK, valid cookie, admitted", P_SHEDD, &B.ack4, .replay = 1,
	     .verify = V_ALWAYS, .prep = PREP_VALID_ACK,
	     .counter = CLS_CTR(SHEDD_SHEDDABLE, ack_admitted), .verdict = XDP_PASS),
	CASE("ack4_cookie_forged", "ACK, forged cookie, dropped", P_SHEDD, &ack4_forged,
	     .verify = V_ALWAYS, .prep = PREP_COOKIE_SENT,
	     .counter = CLS_CTR(SHEDD_SHEDDABLE, ack_invalid), .verdict = XDP_DROP),
	CASE("ack4_no_socket", "ACK, verified, no listener", P_SHEDD, &ack4_stray,
	     .verify = V_ALWAYS, .counter = ST_CTR(non_syn), .verdict = XDP_PASS),
	CASE("syn4_cookie_wild", "SYN -> cookie, wildcard listener", P_SHEDD, &syn_wild,
	     .replay = 1, .verify = V_ALWAYS, .counter = CLS_CTR(SHEDD_SHEDDABLE, cookie_sent),
	     .verdict = XDP_TX),
	CASE("syn4_no_listener", "SYN, verified, no listener", P_SHEDD, &syn_closed,
	     .verify = V_ALWAYS, .counter = ST_CTR(syn_no_listener), .verdict = XDP_PASS),
	/* Everything that is not a SYN. */
	CASE("ack4_est_off", "established ACK, verify off", P_SHEDD, &ack4_est,
	     .counter = ST_CTR(non_syn), .verdict = XDP_PASS),
	CASE("ack4_est_default", "established ACK, default verify", P_SHEDD, &ack4_est,
	     .verify = V_DEFAULT, .counter = ST_CTR(non_syn), .verdict = XDP_PASS),
	CASE("ack4_est_cookie", "established ACK, cookie outstanding", P_SHEDD, &ack4_est,
	     .verify = V_DEFAULT, .prep = PREP_COOKIE_EST, .counter = ST_CTR(non_syn),
	     .verdict = XDP_PASS),
	CASE("fin4", "TCP FIN|ACK, verify off", P_SHEDD, &fin4, .counter = ST_CTR(non_syn),
	     .verdict = XDP_PASS),
	CASE("udp4", "UDP", P_SHEDD, &udp4, .counter = ST_CTR(non_tcp), .verdict = XDP_PASS),
	/* Tunnels that end here. */
	CASE("ipip_syn_shed", "IPIP SYN shed, backed off", P_SHEDD, &ipip_syn,
	     .rate = R_SHED_BACKOFF, .counter = SHED(SHEDD_SHEDDABLE), .verdict = XDP_DROP),
	CASE("vxlan_syn_admit", "VXLAN SYN admitted, CPU cache", P_SHEDD, &vxlan_syn,
	     .counter = ADMIT(SHEDD_SHEDDABLE), .verdict = XDP_PASS),
	CASE("vxlan_syn_shed", "VXLAN SYN shed, backed off", P_SHEDD, &vxlan_syn,
	     .rate = R_SHED_BACKOFF, .counter = SHED(SHEDD_SHEDDABLE), .verdict = XDP_DROP),
	CASE("vxlan_ack", "VXLAN TCP ACK", P_SHEDD, &vxlan_ack, .verdict = XDP_PASS),
	/* The source check of a SYN of critical_plus (198.18.1.0/24 is
	 * routed through shb0): off, on, and on a veth that does not
	 * forward, where the FIB lookup gives up at once. */
	CASE("src_off", "critical_plus SYN, check off", P_SHEDD, &syn4_crit, .ifindex = &B.fwd,
	     .prefixes = 2, .counter = ADMIT(SHEDD_CRITICAL_PLUS), .verdict = XDP_PASS),
	CASE("src_strict", "critical_plus SYN, source check", P_SHEDD, &syn4_crit,
	     .ifindex = &B.fwd, .prefixes = 2, .source_check = SHEDD_SRC_STRICT,
	     .counter = ADMIT(SHEDD_CRITICAL_PLUS), .verdict = XDP_PASS),
	CASE("src_nofwd", "critical_plus SYN, no forwarding", P_SHEDD, &syn4_crit,
	     .ifindex = &B.nofwd, .prefixes = 2, .source_check = SHEDD_SRC_STRICT,
	     .counter = ADMIT(SHEDD_CRITICAL_PLUS), .verdict = XDP_PASS),
};
#define NR_CASES ((int)(sizeof(cases) / sizeof(cases[0])))

static void build_packets(void)
{
	const __u8 est_payload = 64;

	pkt_build(&syn4, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1 });
	B.syn4 = syn4;
	pkt_build(&B.syn_est, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1,
						  .dport = PORT_EST });
	pkt_build(&syn6, &(struct pkt_spec){ .l3 = ETH_P_IPV6, .flags = TCP_SYN, .tcp_opts = 1 });
	pkt_build(&syn4_vlan, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1, .vlans = 1 });
	pkt_build(&syn4_qinq, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1, .vlans = 2 });
	pkt_build(&syn4_prio8, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1, .vlans = 8,
						   .vid0 = 1 });
	pkt_build(&syn4_pfx, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1,
						 .saddr = PREFIX_MATCH_V4 });
	pkt_build(&syn6_pfx, &(struct pkt_spec){ .l3 = ETH_P_IPV6, .flags = TCP_SYN, .tcp_opts = 1,
						 .saddr = "2001:db8:6:7::9" });
	pkt_build(&syn4_crit, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1,
						  .saddr = "198.18.1.10" });
	pkt_build(&ack4_est, &(struct pkt_spec){ .flags = TCP_ACK, .sport = EST_SPORT,
						 .dport = PORT_EST, .payload_len = est_payload });
	/* An ACK of the protected listener's port with a cookie nobody
	 * issued; one to a port nobody listens on. */
	pkt_build(&ack4_forged, &(struct pkt_spec){ .flags = TCP_ACK, .seq = PKT_SEQ + 1,
						    .ack_seq = 0x5a5a5a5a });
	pkt_build(&ack4_stray, &(struct pkt_spec){ .flags = TCP_ACK, .seq = PKT_SEQ + 1,
						   .dport = PORT_CLOSED });
	pkt_build(&fin4, &(struct pkt_spec){ .flags = TCP_FIN | TCP_ACK });
	pkt_build(&udp4, &(struct pkt_spec){ .l4 = IPPROTO_UDP, .payload_len = 64 });
	pkt_build(&syn_wild, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1,
						 .dport = PORT_WILD });
	pkt_build(&syn_closed, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1,
						   .dport = PORT_CLOSED });
	tun_pkt_build(&ipip_syn, &(struct tun_pkt_spec){ .kind = TUNP_IPIP },
		      &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1 });
	tun_pkt_build(&vxlan_syn, &(struct tun_pkt_spec){ .kind = TUNP_VXLAN },
		      &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1 });
	tun_pkt_build(&vxlan_ack, &(struct tun_pkt_spec){ .kind = TUNP_VXLAN },
		      &(struct pkt_spec){ .flags = TCP_ACK, .payload_len = 64 });
}

static struct bench_case *case_by_id(const char *id, size_t len)
{
	int i;

	for (i = 0; i < NR_CASES; i++)
		if (strlen(cases[i].id) == len && !strncmp(cases[i].id, id, len))
			return &cases[i];
	return NULL;
}

/* ---- figures ---- */

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

struct summary {
	double min, median, max;
	double net; /* the median without the replay harness's own cost */
};

static void summarize(const struct bench_case *c, struct summary *s)
{
	__u32 v[MAX_ROUNDS];
	int n = B.rounds;

	memcpy(v, c->ns, sizeof(__u32) * (size_t)n);
	qsort(v, (size_t)n, sizeof(v[0]), cmp_u32);
	s->min = v[0];
	s->max = v[n - 1];
	s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
	s->net = s->median;
}

static struct summary sums[MAX_CASES];

static void compute_summaries(void)
{
	struct bench_case *rd = case_by_id("replay_drop", 11), *dr = case_by_id("drop", 4);
	double harness = 0;
	int i;

	for (i = 0; i < NR_CASES; i++)
		if (cases[i].selected)
			summarize(&cases[i], &sums[i]);
	if (rd && dr)
		harness = sums[rd - cases].median - sums[dr - cases].median;
	for (i = 0; i < NR_CASES; i++)
		if (cases[i].selected && cases[i].replay && cases[i].prog == P_SHEDD)
			sums[i].net = sums[i].median - harness;
}

static double net_of(const char *id)
{
	struct bench_case *c = case_by_id(id, strlen(id));

	return c && c->selected ? sums[c - cases].net : 0;
}

static const char *verdict_name(__u32 v)
{
	static const char *const names[] = { "ABORTED", "DROP", "PASS", "TX", "REDIRECT" };

	return v < 5 ? names[v] : "?";
}

static void print_table(FILE *csv)
{
	double pass = net_of("pass"), drop = net_of("drop"), readdrop = net_of("readdrop");
	int i, r;

	printf("\n%-20s %-36s %-7s %7s %7s %7s %7s %6s %6s %6s %s\n", "case", "packet", "verdict",
	       "min", "median", "max", "net", "/pass", "/drop", "/read", "path");
	for (i = 0; i < NR_CASES; i++) {
		const struct bench_case *c = &cases[i];
		const struct summary *s = &sums[i];
		char path[48] = "ok";

		if (!c->selected)
			continue;
		if (c->counter == NO_COUNTER)
			snprintf(path, sizeof(path), "-");
		else if (c->path_bad)
			snprintf(path, sizeof(path), "OFF in %d runs (%llu of %u)", c->path_bad,
				 (unsigned long long)c->path_seen, B.repeat);
		if (c->got_verdict != c->verdict && c->counter != NO_COUNTER)
			snprintf(path + strlen(path), sizeof(path) - strlen(path), ", verdict");
		printf("%-20s %-36s %-7s %7.0f %7.0f %7.0f %7.0f %6.2f %6.2f %6.2f %s\n", c->id,
		       c->desc, verdict_name(c->got_verdict), s->min, s->median, s->max, s->net,
		       pass ? s->net / pass : 0, drop ? s->net / drop : 0,
		       readdrop ? s->net / readdrop : 0, path);
		for (r = 0; csv && r < B.rounds; r++)
			fprintf(csv, "round,%s,%d,%u,,,,,,,,%s,%s,%u,\"%s\"\n", c->id, r + 1, c->ns[r],
				verdict_name(c->got_verdict), c->replay ? "replay" : "direct",
				B.repeat, c->desc);
		if (csv)
			fprintf(csv, "summary,%s,,,%.0f,%.0f,%.0f,%.0f,%.3f,%.3f,%.3f,%s,%s,%u,\"%s\"\n",
				c->id, s->min, s->median, s->max, s->net, pass ? s->net / pass : 0,
				drop ? s->net / drop : 0, readdrop ? s->net / readdrop : 0,
				verdict_name(c->got_verdict), c->path_bad ? "path-off" :
				c->replay ? "replay" : "direct", B.repeat, c->desc);
	}
	printf("\nns per packet, %d rounds of %u repetitions per case, round-robin.\n"
	       "net: the median less the replay harness's own cost (replay_drop - drop), for\n"
	       "the cases run behind it (they rewrite the frame); /pass, /drop, /read: net over\n"
	       "the median of trivial XDP_PASS, XDP_DROP and xdp_readdrop in the same run.\n"
	       "path: every repetition counted where the case says (shedd's stats map).\n",
	       B.rounds, B.repeat);
	if (B.also_cpu >= 0)
		printf("Each case without replay ran on CPU %d too, at the same time, on the\n"
		       "same maps (its repetitions counted in path too).\n", B.also_cpu);
}

/* --check-ratio CASE:REF:MAX, parsed before the run. */
struct ratio_check {
	const char *spec;
	struct bench_case *c, *ref;
	double max;
};

static int parse_check(const char *spec, struct ratio_check *k)
{
	const char *a = strchr(spec, ':'), *b = a ? strchr(a + 1, ':') : NULL;
	char *end;

	if (!a || !b)
		return -1;
	k->spec = spec;
	k->c = case_by_id(spec, (size_t)(a - spec));
	k->ref = case_by_id(a + 1, (size_t)(b - a - 1));
	errno = 0;
	k->max = strtod(b + 1, &end);
	if (!k->c || !k->ref || errno || end == b + 1 || *end || !(k->max > 0))
		return -1;
	return 0;
}

/* Return 0 if CASE's median is within MAX x REF's and every repetition of
 * CASE took its path, else 1. */
static int check_ratio(const struct ratio_check *k)
{
	double c = sums[k->c - cases].net, ref = sums[k->ref - cases].net;
	double ratio = ref > 0 ? c / ref : 0;
	int ok = ref > 0 && ratio <= k->max && !k->c->path_bad;

	printf("check-ratio %s: %s %.0f ns = %.2f x %s %.0f ns, limit %.2f: %s\n", k->spec,
	       k->c->id, c, ratio, k->ref->id, ref, k->max,
	       ok ? "ok" : k->c->path_bad ? "FAIL (not every repetition took its path)" : "FAIL");
	return !ok;
}

static int parse_uint(const char *s, unsigned long min, unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(s, &end, 10);
	return !errno && end != s && !*end && *v >= min && *v <= max && s[0] != '-' ? 0 : -1;
}

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [--rounds N] [--repeat N] [--cases ID,...] [--check-ratio CASE:REF:MAX]...\n"
		"          [--objdir DIR] [--cpu N] [--also-cpu N] [--list]\n"
		"  --rounds N   rounds (BENCH_ROUNDS, default %d; at least %d for figures)\n"
		"  --repeat N   repetitions per run (BENCH_REPEAT, default %u)\n"
		"  --cases LIST only these cases (BENCH_CASES), and the references\n"
		"  --check-ratio CASE:REF:MAX  exit 1 if CASE's median exceeds MAX x REF's\n"
		"  --objdir DIR where xdp_pass/drop/readdrop/replay.bpf.o are (the binary's)\n"
		"  --cpu N      the CPU to run on (default: the one it starts on)\n"
		"  --also-cpu N run each case that needs no replay on CPU N too, at the\n"
		"               same time (the cost of the maps two CPUs write at once)\n"
		"CSV: $BENCH_OUT/perpkt.csv (default a new directory in $TMPDIR)\n",
		argv0, DEFAULT_ROUNDS, MIN_ROUNDS, DEFAULT_REPEAT);
}

static int select_cases(const char *list)
{
	const char *p = list;
	int i;

	for (i = 0; i < NR_CASES; i++)
		cases[i].selected = !list;
	while (list && *p) {
		size_t n = strcspn(p, ",");
		struct bench_case *c = case_by_id(p, n);

		if (!c) {
			fprintf(stderr, "bench: --cases: no case '%.*s' (--list names them)\n",
				(int)n, p);
			return -1;
		}
		c->selected = 1;
		p += n + (p[n] == ',');
	}
	return 0;
}

/* The references are always measured: the trivial programs, and the
 * replay harness when a case runs behind it. */
static void select_references(void)
{
	int i, any_replay = 0;

	for (i = 0; i < NR_CASES; i++)
		any_replay |= cases[i].selected && cases[i].replay;
	for (i = 0; i < NR_CASES; i++)
		if (cases[i].prog != P_SHEDD && (!cases[i].replay || any_replay))
			cases[i].selected = 1;
}

static void exe_dir(char *dir, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", dir, n - 1);
	char *slash;

	if (len <= 0) {
		snprintf(dir, n, ".");
		return;
	}
	dir[len] = 0;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
}

static void record_env(FILE *out, const char *stats_now)
{
	char cpu[256] = "unknown", line[512], date[64];
	struct utsname u;
	time_t t = time(NULL);
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
			snprintf(cpu, sizeof(cpu), "%s", strchr(line, ':') + 2);
			cpu[strcspn(cpu, "\n")] = 0;
			break;
		}
	}
	if (f)
		fclose(f);
	uname(&u);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	fprintf(out, "date=%s\nkernel=%s %s\ncpu=%s\nonline_cpus=%ld\nbench_cpu=%d\n"
		"bpf_stats_enabled=%s (was %s, restored after)\nrounds=%d\nrepeat=%u\n", date,
		u.release, u.version, cpu, sysconf(_SC_NPROCESSORS_ONLN), sched_getcpu(), stats_now,
		stats_before, B.rounds, B.repeat);
	fflush(out);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "rounds", required_argument, NULL, 'r' }, { "repeat", required_argument, NULL, 'n' },
		{ "cases", required_argument, NULL, 'c' },  { "check-ratio", required_argument, NULL, 'k' },
		{ "objdir", required_argument, NULL, 'o' }, { "cpu", required_argument, NULL, 'p' },
		{ "list", no_argument, NULL, 'l' },         { "help", no_argument, NULL, 'h' },
		{ "also-cpu", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	struct ratio_check checks[MAX_CHECKS];
	const char *list = getenv("BENCH_CASES"), *outdir = getenv("BENCH_OUT");
	char objdir[PATH_MAX], stats_now[16] = "?", csv_path[PATH_MAX], tmpdir[PATH_MAX];
	unsigned long v, repeat = DEFAULT_REPEAT, rounds = DEFAULT_ROUNDS;
	int nchecks = 0, opt, cpu = -1, also_cpu = -1, i, r, err = 1, nsel = 0;
	struct timespec t0, t1;
	FILE *csv = NULL, *env;
	cpu_set_t set;

	exe_dir(objdir, sizeof(objdir));
	if (getenv("BENCH_ROUNDS") && parse_uint(getenv("BENCH_ROUNDS"), 1, MAX_ROUNDS, &rounds)) {
		fprintf(stderr, "bench: BENCH_ROUNDS: 1 to %d\n", MAX_ROUNDS);
		return 2;
	}
	if (getenv("BENCH_REPEAT") && parse_uint(getenv("BENCH_REPEAT"), 1, 100000000, &repeat)) {
		fprintf(stderr, "bench: BENCH_REPEAT: 1 to 100000000\n");
		return 2;
	}
	while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			if (parse_uint(optarg, 1, MAX_ROUNDS, &rounds)) {
				fprintf(stderr, "bench: --rounds: 1 to %d\n", MAX_ROUNDS);
				return 2;
			}
			break;
		case 'n':
			if (parse_uint(optarg, 1, 100000000, &repeat)) {
				fprintf(stderr, "bench: --repeat: 1 to 100000000\n");
				return 2;
			}
			break;
		case 'c':
			list = optarg;
			break;
		case 'k':
			if (nchecks == MAX_CHECKS) {
				fprintf(stderr, "bench: at most %d --check-ratio\n", MAX_CHECKS);
				return 2;
			}
			if (parse_check(optarg, &checks[nchecks])) {
				fprintf(stderr, "bench: --check-ratio %s: CASE:REF:MAX, two case ids "
					"(--list) and a ratio > 0\n", optarg);
				return 2;
			}
			nchecks++;
			break;
		case 'o':
			snprintf(objdir, sizeof(objdir), "%s", optarg);
			break;
		case 'p':
			if (parse_uint(optarg, 0, CPU_SETSIZE - 1, &v)) {
				fprintf(stderr, "bench: --cpu: a CPU number\n");
				return 2;
			}
			cpu = (int)v;
			break;
		case 'a':
			if (parse_uint(optarg, 0, CPU_SETSIZE - 1, &v)) {
				fprintf(stderr, "bench: --also-cpu: a CPU number\n");
				return 2;
			}
			also_cpu = (int)v;
			break;
		case 'l':
			for (i = 0; i < NR_CASES; i++)
				printf("%-20s %s\n", cases[i].id, cases[i].desc);
			return 0;
		default:
			usage(argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (optind != argc) {
		usage(argv[0]);
		return 2;
	}
	B.rounds = (int)rounds;
	B.repeat = (__u32)repeat;
	B.scrub_slot = REPLAY_NO_SCRUB;
	B.ncpus = libbpf_num_possible_cpus();
	B.also_cpu = also_cpu;
	if (select_cases(list))
		return 2;
	for (i = 0; i < nchecks; i++)
		checks[i].c->selected = checks[i].ref->selected = 1;
	select_references();
	for (i = 0; i < NR_CASES; i++)
		nsel += cases[i].selected;
	if (B.rounds < MIN_ROUNDS)
		fprintf(stderr, "bench: %d rounds, fewer than %d: not figures to publish\n",
			B.rounds, MIN_ROUNDS);
	if (B.repeat < MIN_REPEAT)
		fprintf(stderr, "bench: %u repetitions, fewer than %u: not figures to publish\n",
			B.repeat, MIN_REPEAT);

	/* One CPU for the whole run: the per-CPU state the cases reset, and
	 * the clock, are those of one core. */
	if (cpu < 0)
		cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (cpu < 0 || sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "bench: run on CPU %d: %s\n", cpu, strerror(errno));
		return 1;
	}
	if (also_cpu >= 0 && (also_cpu == cpu || also_cpu >= B.ncpus)) {
		fprintf(stderr, "bench: --also-cpu %d: another CPU than %d, below %d\n", also_cpu,
			cpu, B.ncpus);
		return 2;
	}

	if (!outdir || !*outdir) {
		snprintf(tmpdir, sizeof(tmpdir), "%s/shedd-bench.XXXXXX",
			 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : P_tmpdir);
		outdir = mkdtemp(tmpdir);
		if (!outdir) {
			fprintf(stderr, "bench: temporary directory: %s\n", strerror(errno));
			return 1;
		}
	} else if (mkdir(outdir, 0755) && errno != EEXIST) {
		fprintf(stderr, "bench: BENCH_OUT %s: %s\n", outdir, strerror(errno));
		return 1;
	}

	build_packets();
	if (netns_setup() || load_all(objdir))
		goto out;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	atexit(stats_restore);
	if (stats_off(stats_now, sizeof(stats_now)))
		goto out;

	printf("Per-packet cost, BPF_PROG_TEST_RUN\n");
	record_env(stdout, stats_now);
	snprintf(csv_path, sizeof(csv_path), "%s/perpkt.env", outdir);
	env = fopen(csv_path, "w");
	if (!env) {
		fprintf(stderr, "bench: write %s: %s\n", csv_path, strerror(errno));
		goto out;
	}
	record_env(env, stats_now);
	fclose(env);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (r = 0; r < B.rounds; r++) {
		double el;

		/* Round-robin, from a different case each round, so that no
		 * case always follows the same one. */
		for (i = 0; i < NR_CASES; i++) {
			struct bench_case *c = &cases[(i + r) % NR_CASES];
			int e;

			if (!c->selected)
				continue;
			e = measure(c, &c->ns[r]);
			if (e) {
				fprintf(stderr, "bench: case %s, round %d: %s\n", c->id, r + 1,
					strerror(-e));
				goto out;
			}
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		el = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
		fprintf(stderr, "bench: round %d/%d, %d cases, %.1f s, ETA %.0f s\n", r + 1, B.rounds,
			nsel, el, el / (r + 1) * (B.rounds - r - 1));
	}
	stats_restore();

	compute_summaries();
	snprintf(csv_path, sizeof(csv_path), "%s/perpkt.csv", outdir);
	csv = fopen(csv_path, "w");
	if (!csv) {
		fprintf(stderr, "bench: write %s: %s\n", csv_path, strerror(errno));
		goto out;
	}
	fprintf(csv, "kind,case,round,ns,min,median,max,net,vs_pass,vs_drop,vs_readdrop,verdict,"
		"how,repeat,description\n");
	print_table(csv);
	if (fclose(csv)) {
		fprintf(stderr, "bench: write %s: %s\n", csv_path, strerror(errno));
		goto out;
	}
	printf("CSV: %s\n", csv_path);
	err = 0;
	for (i = 0; i < nchecks; i++)
		if (check_ratio(&checks[i]))
			err = 1;
out:
	stats_restore();
	for (i = 0; i < P_NR; i++)
		if (i != P_SHEDD)
			bpf_object__close(B.obj[i]);
	bpf_object__close(B.replay_obj);
	shedd_bpf__destroy(B.skel);
	return err;
}
