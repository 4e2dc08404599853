/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* xdprouter.c - loads the flood testbed's XDP router (xdprouter.bpf.c) on
 * the router's two veths for a bounded time, its counters pinned so that
 * `xdprouter --stats PIN` reads them while it runs. The attachments are
 * links held by this process: they go when it ends, however it ends.
 * Exit 0 ok, 1 runtime error, 2 usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <net/if.h>
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

#define PROG "xdprouter"
#include "toolopts.h"
#include "xdprouter.h"
#include "xdprouter.skel.h"

#define MAX_DURATION_S 3600ULL
#define MAC_LEN 6

struct net4 {
	uint32_t net, mask; /* network order */
};

struct net6 {
	uint32_t net[4], mask[4]; /* network order */
};

struct cfg {
	const char *cli_if, *srv_if, *pin, *stats_pin;
	int cli_ifindex, srv_ifindex;
	uint8_t cli_mac[MAC_LEN], srv_mac[MAC_LEN];
	uint8_t cli_if_mac[MAC_LEN], srv_if_mac[MAC_LEN];
	bool have_cli_mac, have_srv_mac;
	struct net4 cli_net, srv_net, spoof_net;
	bool have_cli_net, have_srv_net, have_spoof_net;
	struct net6 spoof_net6;
	bool have_spoof_net6;
	uint64_t duration_s;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " --cli-if IF --srv-if IF --cli-mac MAC --srv-mac MAC\n"
"       --cli-net CIDR --srv-net CIDR --spoof-net CIDR --pin PATH\n"
"       --duration SEC [--spoof-net6 CIDR]\n"
"       " PROG " --stats PATH\n"
"\n"
"Runs in the router's network namespace (with the host's bpffs: nsenter\n"
"--net, not ip netns exec). Attaches XDP to --cli-if (the veth towards the\n"
"clients) and --srv-if (towards the server) for SEC seconds (1-%llu) or\n"
"until SIGINT/SIGTERM:\n"
"  --cli-if: IPv4 to --srv-net goes out of --srv-if to --srv-mac\n"
"  --srv-if: IPv4 to --cli-net goes out of --cli-if to --cli-mac; IPv4 to\n"
"            --spoof-net (the flood's sources) is counted and dropped, and\n"
"            so is IPv6 to --spoof-net6 when given\n"
"  anything else passes to the router's kernel (ARP, its own addresses).\n"
"The counters map is pinned at PATH and unpinned at the end, when their sums\n"
"are printed. --stats PATH prints the sums of a running router's counters:\n"
"  to_srv=N to_cli=N spoof_synack=N spoof_rst=N spoof_other=N passed=N\n",
		MAX_DURATION_S);
}

static int parse_mac(const char *opt, const char *s, uint8_t mac[MAC_LEN])
{
	unsigned int b[MAC_LEN];
	char tail;
	int i;

	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &tail) != MAC_LEN) {
		fprintf(stderr, PROG ": --%s: '%s' is not aa:bb:cc:dd:ee:ff\n",
			opt, s);
		return -1;
	}
	for (i = 0; i < MAC_LEN; i++)
		mac[i] = (uint8_t)b[i];
	return 0;
}

static int parse_net(const char *opt, const char *s, struct net4 *n)
{
	char buf[INET_ADDRSTRLEN + 4], *slash;
	struct in_addr a;
	uint64_t len;

	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash)
		goto bad;
	*slash = '\0';
	if (inet_pton(AF_INET, buf, &a) != 1 || parse_u64(opt, slash + 1, 1, 32, &len))
		goto bad;
	n->mask = htonl(0xffffffffu << (32 - len));
	n->net = a.s_addr & n->mask;
	if (n->net != a.s_addr) {
		fprintf(stderr, PROG ": --%s: '%s' has host bits set\n", opt, s);
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, PROG ": --%s: want an IPv4 prefix A.B.C.D/LEN, got '%s'\n",
		opt, s);
	return -1;
}

static int parse_net6(const char *opt, const char *s, struct net6 *n)
{
	char buf[INET6_ADDRSTRLEN + 5], *slash;
	struct in6_addr a;
	uint32_t w[4];
	uint64_t len;
	int i;

	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash)
		goto bad;
	*slash = '\0';
	if (inet_pton(AF_INET6, buf, &a) != 1 || parse_u64(opt, slash + 1, 1, 128, &len))
		goto bad;
	memcpy(w, &a, sizeof(w));
	for (i = 0; i < 4; i++) {
		uint64_t bits = len > (uint64_t)i * 32 ? len - (uint64_t)i * 32 : 0;

		n->mask[i] = htonl(bits >= 32 ? 0xffffffffu :
				   bits ? 0xffffffffu << (32 - bits) : 0);
		n->net[i] = w[i] & n->mask[i];
		if (n->net[i] != w[i]) {
			fprintf(stderr, PROG ": --%s: '%s' has host bits set\n", opt, s);
			return -1;
		}
	}
	return 0;
bad:
	fprintf(stderr, PROG ": --%s: want an IPv6 prefix ADDR/LEN, got '%s'\n", opt, s);
	return -1;
}

enum {
	OPT_CLI_IF = 256, OPT_SRV_IF, OPT_CLI_MAC, OPT_SRV_MAC, OPT_CLI_NET,
	OPT_SRV_NET, OPT_SPOOF_NET, OPT_SPOOF_NET6, OPT_PIN, OPT_DURATION, OPT_STATS, OPT_HELP,
};

static const struct option long_opts[] = {
	{ "cli-if", required_argument, NULL, OPT_CLI_IF },
	{ "srv-if", required_argument, NULL, OPT_SRV_IF },
	{ "cli-mac", required_argument, NULL, OPT_CLI_MAC },
	{ "srv-mac", required_argument, NULL, OPT_SRV_MAC },
	{ "cli-net", required_argument, NULL, OPT_CLI_NET },
	{ "srv-net", required_argument, NULL, OPT_SRV_NET },
	{ "spoof-net", required_argument, NULL, OPT_SPOOF_NET },
	{ "spoof-net6", required_argument, NULL, OPT_SPOOF_NET6 },
	{ "pin", required_argument, NULL, OPT_PIN },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "stats", required_argument, NULL, OPT_STATS },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Return: 0 to run, 1 after --help, -1 on a usage error (already printed). */
static int parse_args(int argc, char **argv, struct cfg *c)
{
	bool have_duration = false;
	int opt;

	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_CLI_IF:
			c->cli_if = optarg;
			break;
		case OPT_SRV_IF:
			c->srv_if = optarg;
			break;
		case OPT_CLI_MAC:
			if (parse_mac("cli-mac", optarg, c->cli_mac))
				return -1;
			c->have_cli_mac = true;
			break;
		case OPT_SRV_MAC:
			if (parse_mac("srv-mac", optarg, c->srv_mac))
				return -1;
			c->have_srv_mac = true;
			break;
		case OPT_CLI_NET:
			if (parse_net("cli-net", optarg, &c->cli_net))
				return -1;
			c->have_cli_net = true;
			break;
		case OPT_SRV_NET:
			if (parse_net("srv-net", optarg, &c->srv_net))
				return -1;
			c->have_srv_net = true;
			break;
		case OPT_SPOOF_NET:
			if (parse_net("spoof-net", optarg, &c->spoof_net))
				return -1;
			c->have_spoof_net = true;
			break;
		case OPT_SPOOF_NET6:
			if (parse_net6("spoof-net6", optarg, &c->spoof_net6))
				return -1;
			c->have_spoof_net6 = true;
			break;
		case OPT_PIN:
			c->pin = optarg;
			break;
		case OPT_DURATION:
			if (parse_u64("duration", optarg, 1, MAX_DURATION_S,
				      &c->duration_s))
				return -1;
			have_duration = true;
			break;
		case OPT_STATS:
			c->stats_pin = optarg;
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
	if (c->stats_pin)
		return 0;
	if (!c->cli_if || !c->srv_if || !c->have_cli_mac || !c->have_srv_mac ||
	    !c->have_cli_net || !c->have_srv_net || !c->have_spoof_net ||
	    !c->pin || !have_duration) {
		fprintf(stderr, PROG ": --cli-if, --srv-if, --cli-mac, --srv-mac, "
			"--cli-net, --srv-net, --spoof-net, --pin and --duration "
			"are required\n");
		return -1;
	}
	return 0;
}

/* IF's index and MAC in this network namespace. */
static int iface_info(const char *name, int *ifindex, uint8_t mac[MAC_LEN])
{
	struct ifreq ifr;
	int fd, err = 0;

	*ifindex = (int)if_nametoindex(name);
	if (!*ifindex) {
		fprintf(stderr, PROG ": interface %s: %s (run in its network "
			"namespace)\n", name, strerror(errno));
		return -1;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, PROG ": open a socket: %s\n", strerror(errno));
		return -1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		fprintf(stderr, PROG ": MAC of %s: %s\n", name, strerror(errno));
		err = -1;
	} else {
		memcpy(mac, ifr.ifr_hwaddr.sa_data, MAC_LEN);
	}
	close(fd);
	return err;
}

/* The counters of map @fd summed over the CPUs. */
static int read_stats(int fd, struct xdprouter_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	struct xdprouter_stats *v;
	uint32_t zero = 0;

	if (ncpu <= 0)
		return -1;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -1;
	if (bpf_map_lookup_elem(fd, &zero, v)) {
		free(v);
		return -1;
	}
	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < ncpu; i++) {
		sum->to_srv += v[i].to_srv;
		sum->to_cli += v[i].to_cli;
		sum->spoof_synack += v[i].spoof_synack;
		sum->spoof_rst += v[i].spoof_rst;
		sum->spoof_other += v[i].spoof_other;
		sum->passed += v[i].passed;
	}
	free(v);
	return 0;
}

static int print_stats(int fd)
{
	struct xdprouter_stats s;

	if (read_stats(fd, &s)) {
		fprintf(stderr, PROG ": read the counters: %s\n", strerror(errno));
		return -1;
	}
	printf("to_srv=%llu to_cli=%llu spoof_synack=%llu spoof_rst=%llu "
	       "spoof_other=%llu passed=%llu\n", (unsigned long long)s.to_srv,
	       (unsigned long long)s.to_cli, (unsigned long long)s.spoof_synack,
	       (unsigned long long)s.spoof_rst, (unsigned long long)s.spoof_other,
	       (unsigned long long)s.passed);
	return 0;
}

static int stats_only(const char *pin)
{
	int fd = bpf_obj_get(pin), ret;

	if (fd < 0) {
		fprintf(stderr, PROG ": open %s: %s\n", pin, strerror(errno));
		return 1;
	}
	ret = print_stats(fd) ? 1 : 0;
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	struct xdprouter_bpf *skel = NULL;
	struct bpf_link *cli_link = NULL, *srv_link = NULL;
	struct timespec end, now;
	struct sigaction sa;
	struct cfg cfg;
	bool pinned = false;
	int err, ret = 1, r;

	memset(&cfg, 0, sizeof(cfg));
	r = parse_args(argc, argv, &cfg);
	if (r)
		return r > 0 ? 0 : 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (cfg.stats_pin)
		return stats_only(cfg.stats_pin);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (iface_info(cfg.cli_if, &cfg.cli_ifindex, cfg.cli_if_mac) ||
	    iface_info(cfg.srv_if, &cfg.srv_ifindex, cfg.srv_if_mac))
		return 1;

	skel = xdprouter_bpf__open();
	if (!skel) {
		fprintf(stderr, PROG ": open the BPF object: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->cli_ifindex = (uint32_t)cfg.cli_ifindex;
	skel->rodata->srv_ifindex = (uint32_t)cfg.srv_ifindex;
	memcpy((void *)skel->rodata->cli_if_mac, cfg.cli_if_mac, MAC_LEN);
	memcpy((void *)skel->rodata->srv_if_mac, cfg.srv_if_mac, MAC_LEN);
	memcpy((void *)skel->rodata->cli_mac, cfg.cli_mac, MAC_LEN);
	memcpy((void *)skel->rodata->srv_mac, cfg.srv_mac, MAC_LEN);
	skel->rodata->cli_net = cfg.cli_net.net;
	skel->rodata->cli_mask = cfg.cli_net.mask;
	skel->rodata->srv_net = cfg.srv_net.net;
	skel->rodata->srv_mask = cfg.srv_net.mask;
	skel->rodata->spoof_net = cfg.spoof_net.net;
	skel->rodata->spoof_mask = cfg.spoof_net.mask;
	skel->rodata->spoof6_on = cfg.have_spoof_net6;
	memcpy((void *)skel->rodata->spoof6_net, cfg.spoof_net6.net, sizeof(cfg.spoof_net6.net));
	memcpy((void *)skel->rodata->spoof6_mask, cfg.spoof_net6.mask, sizeof(cfg.spoof_net6.mask));
	err = xdprouter_bpf__load(skel);
	if (err) {
		fprintf(stderr, PROG ": load the BPF programs: %s\n", strerror(-err));
		goto out;
	}
	err = bpf_map__pin(skel->maps.rtr_stats, cfg.pin);
	if (err) {
		fprintf(stderr, PROG ": pin the counters at %s: %s\n", cfg.pin,
			strerror(-err));
		goto out;
	}
	pinned = true;
	cli_link = bpf_program__attach_xdp(skel->progs.xdprouter_from_cli,
					   cfg.cli_ifindex);
	if (!cli_link) {
		fprintf(stderr, PROG ": attach XDP to %s: %s\n", cfg.cli_if,
			strerror(errno));
		goto out;
	}
	srv_link = bpf_program__attach_xdp(skel->progs.xdprouter_from_srv,
					   cfg.srv_ifindex);
	if (!srv_link) {
		fprintf(stderr, PROG ": attach XDP to %s: %s\n", cfg.srv_if,
			strerror(errno));
		goto out;
	}
	fprintf(stderr, PROG ": attached to %s and %s for %" PRIu64 " s\n",
		cfg.cli_if, cfg.srv_if, cfg.duration_s);

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)cfg.duration_s;
	while (!stop) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			break;
		usleep(50000);
	}
	if (print_stats(bpf_map__fd(skel->maps.rtr_stats)))
		goto out;
	ret = 0;
out:
	bpf_link__destroy(srv_link);
	bpf_link__destroy(cli_link);
	if (pinned)
		bpf_map__unpin(skel->maps.rtr_stats, cfg.pin);
	xdprouter_bpf__destroy(skel);
	return ret;
}
