/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* floodgen.c - live-frames SYN flood generator of the flood testbed: runs
 * floodgen.bpf.c through BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES
 * as if it had received frames on IF, so its XDP_TX sends spoofed SYNs out
 * of IF (on veth: into the peer's receive ring), IPv4 or IPv6 by --dst. Paced, bounded in count and
 * time, on one CPU. One line on stdout: sent=N skipped=N elapsed_ms=N rate_pps=N.
 * Exit 0 ok, 1 runtime error (or interrupted), 2 usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define PROG "floodgen"
#include "toolopts.h"
#include "floodgen.h"
#include "floodgen.skel.h"

#define MAX_COUNT UINT64_C(1000000000)
#define MAX_DURATION_S UINT64_C(600)
#define MAX_RATE_PPS UINT64_C(100000000)
#define MAX_CPU 4095ULL
#define MAX_BATCH UINT64_C(256) /* TEST_XDP_MAX_BATCH in the kernel */
#define DEFAULT_BATCH UINT64_C(64)
/* Program runs per BPF_PROG_TEST_RUN call. Each call costs the kernel
 * milliseconds of set-up (a page pool made and destroyed), during which
 * nothing is sent, so calls are long: the program paces itself and stops
 * sending at the deadline, and a call that runs on past it only drops. */
#define CALL_REPEAT (1U << 22)
/* A SYN due longer ago than this (the generator was descheduled, or between
 * two calls) is skipped, not sent in a catch-up burst that no wire would
 * deliver; skipped SYNs are counted. */
#define LATE_NS (100 * NSEC_PER_USEC)
#define NSEC_PER_SEC ((uint64_t)1000000000)
#define NSEC_PER_MSEC ((uint64_t)1000000)
#define NSEC_PER_USEC ((uint64_t)1000)

struct cfg {
	const char *iface;
	int ifindex;
	uint8_t src_mac[ETH_ALEN], dst_mac[ETH_ALEN];
	bool have_src_mac, have_dst_mac;
	int family; /* of --dst; --src must match */
	struct in_addr dst, spoof;
	struct in6_addr dst6, spoof6;
	unsigned int spoof_len;
	uint64_t dport, sport_base, sport_count;
	uint64_t rate; /* 0: as fast as it goes */
	uint64_t count, duration_s, batch;
	int64_t cpu;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " --iface IF --dst-mac MAC --dst ADDR --dport PORT --src CIDR\n"
"       --rate PPS|max --duration SEC [--count N] [--cpu N] [--src-mac MAC]\n"
"       [--sport-base P] [--sport-count N] [--batch N]\n"
"       " PROG " --help\n"
"\n"
"Sends TCP SYNs (IPv4 or IPv6 by ADDR, MSS 1460) to ADDR:PORT out of IF,\n"
"whose MAC is the source (or --src-mac) and MAC the destination, through\n"
"BPF_PROG_TEST_RUN in live-frames mode (Linux >= 5.18): an XDP program\n"
"writes each frame and returns XDP_TX on IF. On a veth the frames enter the\n"
"peer's receive ring, as frames from a NIC would, provided the peer runs an\n"
"XDP program. Run it in IF's network namespace.\n"

"  --src CIDR        spoofed sources, of ADDR's family (A.B.C.D/8..30 or an\n"
"                    IPv6 prefix /8..126): SYN number n comes from host n of\n"
"                    the prefix (host 0 skipped), port --sport-base (1024) +\n"
"                    (n / hosts) %% --sport-count (64000); an IPv6 prefix\n"
"                    varies only its last 32 bits (at most 2^32 hosts)\n"
"  --rate PPS        paced at PPS (1-%" PRIu64 "), or 'max': unpaced\n"
"  --duration SEC    stop after SEC seconds (1-%" PRIu64 ")\n"
"  --count N         and after N SYNs (default: rate x duration; max %" PRIu64 ")\n"
"  --cpu N           run on CPU N (default: where the scheduler puts it)\n"
"  --batch N         frames per live-frames batch (1-%" PRIu64 ", default %" PRIu64 ")\n"
"'sent' counts the frames the program sent with XDP_TX; frames the device\n"
"could not take (a full peer ring) are dropped there, not here. A paced\n"
"generator that fell behind (descheduled) skips the late SYNs rather than\n"
"send them in one burst; 'skipped' counts them.\n",
		MAX_RATE_PPS, MAX_DURATION_S, MAX_COUNT, MAX_BATCH, DEFAULT_BATCH);
}

static int parse_mac(const char *opt, const char *s, uint8_t mac[ETH_ALEN])
{
	unsigned int b[ETH_ALEN];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &tail) != ETH_ALEN) {
		fprintf(stderr, PROG ": --%s: '%s' is not aa:bb:cc:dd:ee:ff\n",
			opt, s);
		return -1;
	}
	for (i = 0; i < ETH_ALEN; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

/* --src: an IPv4 prefix /8..30 (family AF_INET) or an IPv6 one /8..126. */
static int parse_cidr(const char *s, struct cfg *c, int *family)
{
	char buf[INET6_ADDRSTRLEN + 5], *slash;
	uint64_t l;
	int i;

	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash)
		goto bad;
	*slash = '\0';
	if (inet_pton(AF_INET, buf, &c->spoof) == 1) {
		if (parse_u64("src", slash + 1, 8, 30, &l))
			goto bad;
		*family = AF_INET;
		c->spoof_len = (unsigned int)l;
		if (ntohl(c->spoof.s_addr) & (0xffffffffu >> l))
			goto host_bits;
		return 0;
	}
	if (inet_pton(AF_INET6, buf, &c->spoof6) != 1 ||
	    parse_u64("src", slash + 1, 8, 126, &l))
		goto bad;
	*family = AF_INET6;
	c->spoof_len = (unsigned int)l;
	for (i = 0; i < 16; i++) {
		unsigned int keep = l >= (uint64_t)(i + 1) * 8 ? 8 :
				    l > (uint64_t)i * 8 ? (unsigned int)(l - (uint64_t)i * 8) : 0;

		if (c->spoof6.s6_addr[i] & (0xffu >> keep))
			goto host_bits;
	}
	return 0;
host_bits:
	fprintf(stderr, PROG ": --src: '%s' has host bits set\n", s);
	return -1;
bad:
	fprintf(stderr, PROG ": --src: want an IPv4 prefix A.B.C.D/8..30 or an IPv6 "
		"prefix /8..126, got '%s'\n", s);
	return -1;
}

enum {
	OPT_IFACE = 256, OPT_DST_MAC, OPT_SRC_MAC, OPT_DST, OPT_DPORT, OPT_SRC,
	OPT_SPORT_BASE, OPT_SPORT_COUNT, OPT_RATE, OPT_COUNT, OPT_DURATION,
	OPT_CPU, OPT_BATCH, OPT_HELP,
};

static const struct option long_opts[] = {
	{ "iface", required_argument, NULL, OPT_IFACE },
	{ "dst-mac", required_argument, NULL, OPT_DST_MAC },
	{ "src-mac", required_argument, NULL, OPT_SRC_MAC },
	{ "dst", required_argument, NULL, OPT_DST },
	{ "dport", required_argument, NULL, OPT_DPORT },
	{ "src", required_argument, NULL, OPT_SRC },
	{ "sport-base", required_argument, NULL, OPT_SPORT_BASE },
	{ "sport-count", required_argument, NULL, OPT_SPORT_COUNT },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "cpu", required_argument, NULL, OPT_CPU },
	{ "batch", required_argument, NULL, OPT_BATCH },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Return: 0 to run, 1 after --help, -1 on a usage error (already printed). */
static int parse_args(int argc, char **argv, struct cfg *c)
{
	bool have_dport = false, have_src = false, have_rate = false;
	bool have_duration = false, have_count = false, have_dst = false;
	int src_family = 0;
	uint64_t v;
	int opt;

	c->sport_base = 1024;
	c->sport_count = 64000;
	c->batch = DEFAULT_BATCH;
	c->cpu = -1;
	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_IFACE:
			c->iface = optarg;
			break;
		case OPT_DST_MAC:
			if (parse_mac("dst-mac", optarg, c->dst_mac))
				return -1;
			c->have_dst_mac = true;
			break;
		case OPT_SRC_MAC:
			if (parse_mac("src-mac", optarg, c->src_mac))
				return -1;
			c->have_src_mac = true;
			break;
		case OPT_DST:
			if (inet_pton(AF_INET, optarg, &c->dst) == 1) {
				c->family = AF_INET;
			} else if (inet_pton(AF_INET6, optarg, &c->dst6) == 1) {
				c->family = AF_INET6;
			} else {
				fprintf(stderr, PROG ": --dst: '%s' is not an "
					"IPv4 or IPv6 address\n", optarg);
				return -1;
			}
			have_dst = true;
			break;
		case OPT_DPORT:
			if (parse_u64("dport", optarg, 1, 65535, &c->dport))
				return -1;
			have_dport = true;
			break;
		case OPT_SRC:
			if (parse_cidr(optarg, c, &src_family))
				return -1;
			have_src = true;
			break;
		case OPT_SPORT_BASE:
			if (parse_u64("sport-base", optarg, 1, 65535, &c->sport_base))
				return -1;
			break;
		case OPT_SPORT_COUNT:
			if (parse_u64("sport-count", optarg, 1, 65535, &c->sport_count))
				return -1;
			break;
		case OPT_RATE:
			if (!strcmp(optarg, "max"))
				c->rate = 0;
			else if (parse_u64("rate", optarg, 1, MAX_RATE_PPS, &c->rate))
				return -1;
			have_rate = true;
			break;
		case OPT_COUNT:
			if (parse_u64("count", optarg, 1, MAX_COUNT, &c->count))
				return -1;
			have_count = true;
			break;
		case OPT_DURATION:
			if (parse_u64("duration", optarg, 1, MAX_DURATION_S,
				      &c->duration_s))
				return -1;
			have_duration = true;
			break;
		case OPT_CPU:
			if (parse_u64("cpu", optarg, 0, MAX_CPU, &v))
				return -1;
			c->cpu = (int64_t)v;
			break;
		case OPT_BATCH:
			if (parse_u64("batch", optarg, 1, MAX_BATCH, &c->batch))
				return -1;
			break;
		case OPT_HELP:
			usage(stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!c->iface || !c->have_dst_mac || !have_dst || !have_dport ||
	    !have_src || !have_rate || !have_duration) {
		fprintf(stderr, PROG ": --iface, --dst-mac, --dst, --dport, --src, "
			"--rate and --duration are required\n");
		return -1;
	}
	if (src_family != c->family) {
		fprintf(stderr, PROG ": --src is an %s prefix, --dst an %s address\n",
			src_family == AF_INET ? "IPv4" : "IPv6",
			c->family == AF_INET ? "IPv4" : "IPv6");
		return -1;
	}
	if (c->sport_base + c->sport_count - 1 > 65535) {
		fprintf(stderr, PROG ": --sport-base + --sport-count go past port 65535\n");
		return -1;
	}
	if (!have_count)
		c->count = c->rate && c->rate * c->duration_s <= MAX_COUNT ?
			   c->rate * c->duration_s : MAX_COUNT;
	return 0;
}

/* IF's index and MAC, in this network namespace. */
static int iface_info(struct cfg *c)
{
	struct ifreq ifr;
	int fd, err = 0;

	c->ifindex = (int)if_nametoindex(c->iface);
	if (!c->ifindex) {
		fprintf(stderr, PROG ": --iface %s: %s (run in its network "
			"namespace)\n", c->iface, strerror(errno));
		return -1;
	}
	if (c->have_src_mac)
		return 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, PROG ": open a socket: %s\n", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", c->iface);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		fprintf(stderr, PROG ": MAC of %s: %s\n", c->iface, strerror(errno));
		err = -1;
	} else {
		memcpy(c->src_mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	}
	close(fd);
	return err;
}

static int pin_cpu(int64_t cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, PROG ": run on CPU %" PRId64 ": %s\n", cpu,
			strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct floodgen_bpf *skel = NULL;
	union {
		struct floodgen_frame v4;
		struct floodgen_frame6 v6;
	} frame;
	char dst_str[INET6_ADDRSTRLEN];
	uint32_t frame_size;
	struct xdp_md ctx_in;
	struct cfg cfg;
	struct sigaction sa;
	uint64_t start, end, sent, skipped, elapsed;
	int prog_fd, err, ret = 1, r;

	memset(&cfg, 0, sizeof(cfg));
	r = parse_args(argc, argv, &cfg);
	if (r)
		return r > 0 ? 0 : 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (iface_info(&cfg) || pin_cpu(cfg.cpu))
		return 1;

	skel = floodgen_bpf__open();
	if (!skel) {
		fprintf(stderr, PROG ": open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	memcpy((void *)skel->rodata->dst_mac, cfg.dst_mac, ETH_ALEN);
	memcpy((void *)skel->rodata->src_mac, cfg.src_mac, ETH_ALEN);
	skel->rodata->dst_port = htons((uint16_t)cfg.dport);
	if (cfg.family == AF_INET) {
		skel->rodata->dst_addr = cfg.dst.s_addr;
		skel->rodata->spoof_net = cfg.spoof.s_addr;
		skel->rodata->spoof_host_mask = 0xffffffffu >> cfg.spoof_len;
		bpf_program__set_autoload(skel->progs.floodgen_syn6, false);
		frame_size = sizeof(frame.v4);
	} else {
		memcpy((void *)skel->rodata->dst_addr6, &cfg.dst6, 16);
		memcpy((void *)skel->rodata->spoof_net6, &cfg.spoof6, 16);
		skel->rodata->spoof_host_mask = cfg.spoof_len >= 96 ?
			0xffffffffu >> (cfg.spoof_len - 96) : 0xffffffffu;
		bpf_program__set_autoload(skel->progs.floodgen_syn, false);
		frame_size = sizeof(frame.v6);
	}
	skel->rodata->sport_base = (uint32_t)cfg.sport_base;
	skel->rodata->sport_count = (uint32_t)cfg.sport_count;
	err = floodgen_bpf__load(skel);
	if (err) {
		fprintf(stderr, PROG ": load the BPF program: %s\n", strerror(-err));
		goto out;
	}
	prog_fd = bpf_program__fd(cfg.family == AF_INET ? skel->progs.floodgen_syn :
				  skel->progs.floodgen_syn6);

	/* The program writes every byte; the template only gives the size. */
	memset(&frame, 0, sizeof(frame));
	memset(&ctx_in, 0, sizeof(ctx_in));
	ctx_in.data_end = frame_size;
	ctx_in.ingress_ifindex = (uint32_t)cfg.ifindex;

	fprintf(stderr, PROG ": %s -> %s:%" PRIu64 " rate=%s%.0f count=%" PRIu64
		" duration=%" PRIu64 " cpu=%" PRId64 "\n", cfg.iface,
		inet_ntop(cfg.family, cfg.family == AF_INET ? (void *)&cfg.dst :
			  (void *)&cfg.dst6, dst_str, sizeof(dst_str)), cfg.dport, cfg.rate ? "" : "max ",
		(double)cfg.rate, cfg.count, cfg.duration_s, cfg.cpu);
	start = now_ns();
	end = start + cfg.duration_s * NSEC_PER_SEC;
	skel->bss->interval_ns = cfg.rate ? NSEC_PER_SEC / cfg.rate : 0;
	skel->bss->next_ns = start;
	skel->bss->late_ns = LATE_NS;
	skel->bss->end_ns = end;
	skel->bss->max_sent = cfg.count;
	while (!stop && now_ns() < end && skel->bss->sent < cfg.count) {
		LIBBPF_OPTS(bpf_test_run_opts, opts,
			.data_in = &frame,
			.data_size_in = frame_size,
			.ctx_in = &ctx_in,
			.ctx_size_in = sizeof(ctx_in),
			.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
			.batch_size = (uint32_t)cfg.batch,
			.repeat = CALL_REPEAT,
		);

		err = bpf_prog_test_run_opts(prog_fd, &opts);
		if (err && errno == EINTR)
			continue; /* the loop condition sees a stop */
		if (err) {
			fprintf(stderr, PROG ": BPF_PROG_TEST_RUN (live frames) on "
				"%s: %s%s\n", cfg.iface, strerror(errno),
				errno == EINVAL ? " (Linux >= 5.18 needed)" : "");
			goto out;
		}
	}
	sent = skel->bss->sent;
	skipped = skel->bss->skipped;
	elapsed = now_ns() - start;
	printf("sent=%" PRIu64 " skipped=%" PRIu64 " elapsed_ms=%" PRIu64
	       " rate_pps=%.0f\n", sent, skipped, elapsed / NSEC_PER_MSEC,
	       elapsed ? (double)sent * (double)NSEC_PER_SEC / (double)elapsed : 0.0);
	ret = stop ? 1 : 0;
	if (stop)
		fprintf(stderr, PROG ": interrupted\n");
out:
	floodgen_bpf__destroy(skel);
	return ret;
}
