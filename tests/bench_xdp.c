// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* bench_xdp.c - what shedd's XDP program costs per packet, measured with
 * BPF_PROG_TEST_RUN side by side with a program that only passes, in the
 * same run, rounds interleaved; the median round is reported. The verified
 * paths (a SYN answered with a cookie, the ACK that returns it) are then
 * measured beside a program that only drops: one packet per run, since the
 * reply rewrites the frame, in a network namespace of the benchmark's own
 * where a listener holds the port. A benchmark: it prints figures and
 * asserts nothing.
 */
#include <arpa/inet.h>
#include <net/if.h>
#include <sched.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "packets.h"
#include "tun_packets.h"
#include "shedd.h"
#include "shedd.skel.h"

#define REPEAT 1000000
#define ROUNDS 7
#define SINGLE_RUNS 200000 /* runs of one packet each, per verified case */

/* @ifindex: the device the packet comes in on; 0: lo. */
static int run_on(int prog_fd, const struct pkt *p, int ifindex, __u32 *retval, __u32 *ns)
{
	__u8 out[PKT_MAX + 64];
	struct xdp_md ctx = { .data_end = (__u32)p->len, .ingress_ifindex = (__u32)ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p->data, .data_size_in = (__u32)p->len,
		    .data_out = out, .data_size_out = sizeof(out), .repeat = REPEAT,
		    .ctx_in = ifindex ? &ctx : NULL, .ctx_size_in = ifindex ? sizeof(ctx) : 0);

	if (bpf_prog_test_run_opts(prog_fd, &o))
		return -errno;
	*retval = o.retval;
	*ns = o.duration;
	return 0;
}

static int run(int prog_fd, const struct pkt *p, __u32 *retval, __u32 *ns)
{
	return run_on(prog_fd, p, 0, retval, ns);
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* Publish sheddable's rate and start it from a full reserve and empty
 * caches, so every round measures the same path. */
static int set_rate_of(struct shedd_bpf *skel, __u32 cls, int ncpus, __u64 rate, __u32 batch,
		       __u64 lease_ns)
{
	struct shedd_rate r = { .r = { .rate_per_sec = rate, .burst = MAX_BURST, .batch = batch,
				       .lease_ns = lease_ns, .flags = SHEDD_RATE_SET } };
	struct shedd_reserve full = { 0 };
	struct shedd_bucket b[ncpus];

	memset(b, 0, sizeof(b));
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.rates), &cls, &r, BPF_F_LOCK) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.reserve), &cls, &full, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.buckets), &cls, b, BPF_ANY))
		return -1;
	return 0;
}

static int set_rate(struct shedd_bpf *skel, int ncpus, __u64 rate, __u32 batch, __u64 lease_ns)
{
	return set_rate_of(skel, SHEDD_SHEDDABLE, ncpus, rate, batch, lease_ns);
}

/* The source check (--source-check strict): a SYN of CRITICAL_PLUS, whose
 * prefix is routed through the veth it comes in on, with the check off
 * and on, beside the pass-only program; and one on a veth that does not
 * forward, where the FIB lookup gives up at once. In the namespace of
 * bench_verified(). */
static int bench_source_check(struct shedd_bpf *skel, int pass_fd, int ncpus)
{
	static const char *const verdicts[] = { "ABORTED", "DROP", "PASS", "TX", "REDIRECT" };
	struct shedd_lpm_v4 key = { .prefixlen = 24 };
	__u32 zero = 0, cls = SHEDD_CRITICAL_PLUS, c;
	struct shedd_config cfg = { .default_class = SHEDD_SHEDDABLE };
	int fwd, nofwd;
	struct pkt syn;
	struct {
		const char *name;
		__u8 check;
		int *ifindex;
	} cases[] = {
		{ "SYN admit, check off", SHEDD_SRC_OFF, &fwd },
		{ "SYN admit, source check", SHEDD_SRC_STRICT, &fwd },
		{ "SYN, no forwarding", SHEDD_SRC_STRICT, &nofwd },
	};

	if (system("ip link add shb0 type veth peer name shb0p && ip link add shb1 type veth "
		   "peer name shb1p && ip link set shb0 up && ip link set shb0p up && "
		   "ip link set shb1 up && ip link set shb1p up && "
		   "ip route add 198.18.1.0/24 dev shb0 && "
		   "sysctl -qw net.ipv4.conf.shb0.forwarding=1")) {
		fprintf(stderr, "bench: source check devices\n");
		return -1;
	}
	fwd = (int)if_nametoindex("shb0");
	nofwd = (int)if_nametoindex("shb1");
	inet_pton(AF_INET, "198.18.1.0", key.addr);
	pkt_build(&syn, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1,
					    .saddr = "198.18.1.10" });
	if (!fwd || !nofwd ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.prefix_v4), &key, &cls, BPF_ANY))
		return -1;
	printf("\n%-24s %8s %10s %10s %7s\n", "CRITICAL_PLUS SYN", "verdict", "shedd",
	       "pass-only", "ratio");
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		__u32 shedd_ns[ROUNDS], pass_ns[ROUNDS], ret = 0, pret = 0;
		int r;

		cfg.source_check = cases[c].check;
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.settings), &zero, &cfg, BPF_ANY))
			return -1;
		for (r = 0; r < ROUNDS; r++) {
			if (set_rate_of(skel, cls, ncpus, MAX_RATE_PER_SEC, 64, 1000000) ||
			    run_on(bpf_program__fd(skel->progs.shedd_xdp), &syn, *cases[c].ifindex,
				   &ret, &shedd_ns[r]) ||
			    run_on(pass_fd, &syn, *cases[c].ifindex, &pret, &pass_ns[r]))
				return -1;
		}
		qsort(shedd_ns, ROUNDS, sizeof(__u32), cmp_u32);
		qsort(pass_ns, ROUNDS, sizeof(__u32), cmp_u32);
		printf("%-24s %8s %10u %10u %6.2fx\n", cases[c].name,
		       ret < 5 ? verdicts[ret] : "?", shedd_ns[ROUNDS / 2], pass_ns[ROUNDS / 2],
		       pass_ns[ROUNDS / 2] ? (double)shedd_ns[ROUNDS / 2] / pass_ns[ROUNDS / 2] : 0);
	}
	return 0;
}

/* Mean program time of @n runs of one packet each (the frame is fresh for
 * every run). */
static int run_single(int prog_fd, const struct pkt *p, int n, __u32 *retval, double *ns)
{
	__u8 out[PKT_MAX + 64];
	__u64 sum = 0;
	int i;

	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = p->data,
			    .data_size_in = (__u32)p->len, .data_out = out,
			    .data_size_out = sizeof(out), .repeat = 1);

		if (bpf_prog_test_run_opts(prog_fd, &o))
			return -errno;
		*retval = o.retval;
		sum += o.duration;
	}
	*ns = (double)sum / n;
	return 0;
}

/* A network namespace of our own, lo up with the server's address, and a
 * listener on the protected port, so the program's socket lookups find it. */
static int listener_netns(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(PKT_DPORT) };
	int fd, one = 1;

	if (unshare(CLONE_NEWNET))
		return -1;
	if (system("ip link set lo up && ip addr add " PKT_V4_SERVER "/32 dev lo"))
		return -1;
	inet_pton(AF_INET, PKT_V4_SERVER, &sa.sin_addr);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 128))
		return -1;
	return fd;
}

/* The ACK that completes the handshake of @synack (the program's reply to
 * a plain IPv4 SYN, tcp_opts set, no VLAN). */
static void ack_of(struct pkt *ack, const __u8 *synack)
{
	__u32 cookie, ack_seq;
	size_t tcp = 14 + 20;

	memcpy(&cookie, synack + tcp + 4, 4);
	ack_seq = htonl(ntohl(cookie) + 1);
	pkt_build(ack, &(struct pkt_spec){ .flags = TCP_ACK, .seq = PKT_SEQ + 1 });
	memcpy(ack->data + tcp + 8, &ack_seq, 4);
}

static int bench_verified(struct shedd_bpf *skel, const char *drop_path, const struct pkt *syn)
{
	static const char *const verdicts[] = { "ABORTED", "DROP", "PASS", "TX", "REDIRECT" };
	struct shedd_config cfg = { .default_class = SHEDD_SHEDDABLE, .wscale = 7,
				    .cookie_rate_per_sec = MAX_COOKIE_RATE_PER_SEC,
				    .cookie_burst = MAX_COOKIE_BURST };
	struct bpf_object *drop_obj = bpf_object__open_file(drop_path, NULL);
	__u8 out[PKT_MAX + 64];
	struct pkt ack, forged, stray, wild, closed;
	__u32 zero = 0, ret = 0, i;
	int drop_fd, lfd, err = -1;
	struct {
		const char *name;
		const struct pkt *pkt;
		int prog; /* 0 shedd, 1 drop-only */
	} cases[] = {
		{ "XDP_DROP (trivial)", syn, 1 },
		{ "SYN -> cookie SYN-ACK", syn, 0 },
		{ "ACK, valid cookie", &ack, 0 },
		{ "ACK, forged cookie", &forged, 0 },
		{ "ACK, no socket", &stray, 0 },
		{ "SYN, wildcard listener", &wild, 0 },
		{ "SYN, no listener", &closed, 0 },
	};
	__u16 wild_port = PKT_DPORT + 2, closed_port = PKT_DPORT + 3;
	__u8 one = 1;
	int wfd;

	if (!drop_obj || bpf_object__load(drop_obj)) {
		fprintf(stderr, "bench: load %s: %s\n", drop_path, strerror(errno));
		goto out;
	}
	drop_fd = bpf_program__fd(bpf_object__next_program(drop_obj, NULL));
	lfd = listener_netns();
	if (lfd < 0) {
		fprintf(stderr, "bench: listener namespace: %s\n", strerror(errno));
		goto out;
	}
	/* A listener on the wildcard address, and a port nobody listens
	 * on, both protected. */
	wfd = socket(AF_INET, SOCK_STREAM, 0);
	{
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(wild_port) };

		if (wfd < 0 || bind(wfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(wfd, 128)) {
			fprintf(stderr, "bench: wildcard listener: %s\n", strerror(errno));
			goto out;
		}
	}
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.ports), &wild_port, &one, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.ports), &closed_port, &one, BPF_ANY))
		goto out;
	pkt_build(&wild, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1, .dport = wild_port });
	pkt_build(&closed, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1,
					       .dport = closed_port });
	cfg.verify[SHEDD_SHEDDABLE] = SHEDD_VERIFY_ALWAYS;
	/* A cookie answers only a SYN sent to this host's MAC. */
	memcpy(cfg.mac, pkt_server_mac, sizeof(cfg.mac));
	/* Tokens for every proven ACK, from the CPU's cache. */
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.settings), &zero, &cfg, BPF_ANY) ||
	    set_rate(skel, libbpf_num_possible_cpus(), MAX_RATE_PER_SEC, 64, 1000000))
		goto out;
	{
		LIBBPF_OPTS(bpf_test_run_opts, o, .data_in = syn->data,
			    .data_size_in = (__u32)syn->len, .data_out = out,
			    .data_size_out = sizeof(out), .repeat = 1);

		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.shedd_xdp), &o) ||
		    o.retval != XDP_TX) {
			fprintf(stderr, "bench: the SYN got no cookie (verdict %u)\n", o.retval);
			goto out;
		}
	}
	ack_of(&ack, out);
	forged = ack;
	forged.data[14 + 20 + 11] ^= 0x5a; /* ack_seq: a cookie nobody issued */
	stray = ack;
	stray.data[14 + 20 + 2] ^= 0x01; /* another port: no listener */

	printf("\nVerified admission: %d runs of one packet each, mean ns per packet\n",
	       SINGLE_RUNS);
	printf("%-24s %8s %10s\n", "packet", "verdict", "ns");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double ns = 0;
		int fd = cases[i].prog ? drop_fd : bpf_program__fd(skel->progs.shedd_xdp);

		if (run_single(fd, cases[i].pkt, SINGLE_RUNS, &ret, &ns)) {
			fprintf(stderr, "bench: test run: %s\n", strerror(errno));
			goto out;
		}
		printf("%-24s %8s %10.1f\n", cases[i].name, ret < 5 ? verdicts[ret] : "?", ns);
	}
	close(lfd);
	close(wfd);
	err = 0;
out:
	bpf_object__close(drop_obj);
	return err;
}

int main(int argc, char **argv)
{
	static const char *const verdicts[] = { "ABORTED", "DROP", "PASS", "TX", "REDIRECT" };
	/* A host where IPIP and VXLAN tunnels end: the plain cases pay what
	 * such a host pays, the tunnel cases open one level. */
	struct shedd_config cfg = { .all_ports = 0, .default_class = SHEDD_SHEDDABLE };
	struct shedd_tun_config tc = { .kinds = SHEDD_TUN_IPIP,
				       .udp_port = { TUNP_VXLAN_PORT },
				       .udp_kind = { SHEDD_UDP_VXLAN } };
	struct shedd_tun_addr local = { .addr = { [10] = 0xff, [11] = 0xff } };
	struct bpf_object *pass_obj = NULL;
	struct shedd_bpf *skel = NULL;
	struct pkt syn, ack, udp, fin, syn_qinq, syn_prio8, ipip_syn, vxlan_syn, vxlan_ack;
	__u32 zero = 0, port = 8080;
	__u16 port16 = (__u16)port;
	__u8 one = 1;
	int ncpus = libbpf_num_possible_cpus(), pass_fd, c, err = 1;
	struct {
		const char *name;
		const struct pkt *pkt;
		__u64 rate;     /* sheddable's rate for the case */
		__u32 batch;    /* tokens borrowed at once */
		__u64 lease_ns; /* 0: every SYN goes to the reserve */
	} cases[] = {
		{ "SYN admit, CPU cache", &syn, MAX_RATE_PER_SEC, 64, 1000000 },
		{ "SYN admit, reserve", &syn, MAX_RATE_PER_SEC, 1, 0 },
		{ "SYN shed, backed off", &syn, 0, 1, 1000000 },
		{ "SYN shed, reserve", &syn, 0, 1, 0 },
		{ "SYN shed, 802.1ad+802.1Q", &syn_qinq, 0, 1, 1000000 },
		{ "SYN shed, 8 VID 0 tags", &syn_prio8, 0, 1, 1000000 },
		{ "TCP ACK (established)", &ack, 0, 1, 0 },
		{ "TCP FIN|ACK", &fin, 0, 1, 0 },
		{ "UDP", &udp, 0, 1, 0 },
		{ "IPIP SYN shed, backed off", &ipip_syn, 0, 1, 1000000 },
		{ "VXLAN SYN admit, cache", &vxlan_syn, MAX_RATE_PER_SEC, 64, 1000000 },
		{ "VXLAN SYN shed, backed off", &vxlan_syn, 0, 1, 1000000 },
		{ "VXLAN TCP ACK", &vxlan_ack, 0, 1, 0 },
	};

	if (argc != 3) {
		fprintf(stderr, "usage: %s XDP_PASS_OBJECT XDP_DROP_OBJECT\n", argv[0]);
		return 2;
	}
	pkt_build(&syn, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1 });
	pkt_build(&ack, &(struct pkt_spec){ .flags = TCP_ACK, .payload_len = 64 });
	pkt_build(&syn_qinq, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1, .vlans = 2 });
	pkt_build(&syn_prio8, &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1, .vlans = 8,
						  .vid0 = 1 });
	pkt_build(&udp, &(struct pkt_spec){ .l4 = IPPROTO_UDP, .payload_len = 64 });
	pkt_build(&fin, &(struct pkt_spec){ .flags = TCP_FIN | TCP_ACK });
	tun_pkt_build(&ipip_syn, &(struct tun_pkt_spec){ .kind = TUNP_IPIP },
		      &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1 });
	tun_pkt_build(&vxlan_syn, &(struct tun_pkt_spec){ .kind = TUNP_VXLAN },
		      &(struct pkt_spec){ .flags = TCP_SYN, .tcp_opts = 1 });
	tun_pkt_build(&vxlan_ack, &(struct tun_pkt_spec){ .kind = TUNP_VXLAN },
		      &(struct pkt_spec){ .flags = TCP_ACK, .payload_len = 64 });
	inet_pton(AF_INET, PKT_V4_SERVER, &local.addr[12]);

	skel = shedd_bpf__open();
	if (skel)
		skel->rodata->verify_enabled = 1;
	if (!skel || shedd_bpf__load(skel)) {
		fprintf(stderr, "bench: load shedd: %s\n", strerror(errno));
		goto out;
	}
	pass_obj = bpf_object__open_file(argv[1], NULL);
	if (!pass_obj || bpf_object__load(pass_obj)) {
		fprintf(stderr, "bench: load %s: %s\n", argv[1], strerror(errno));
		goto out;
	}
	pass_fd = bpf_program__fd(bpf_object__next_program(pass_obj, NULL));
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.settings), &zero, &cfg, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.ports), &port16, &one, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.tun_config), &zero, &tc, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(skel->maps.tun_local), &local, &one, BPF_ANY)) {
		fprintf(stderr, "bench: configure: %s\n", strerror(errno));
		goto out;
	}

	printf("BPF_PROG_TEST_RUN, %d runs x %d rounds, median round; ns per packet\n",
	       REPEAT, ROUNDS);
	printf("%-24s %8s %10s %10s %7s\n", "packet", "verdict", "shedd", "pass-only", "ratio");
	for (c = 0; c < (int)(sizeof(cases) / sizeof(cases[0])); c++) {
		__u32 shedd_ns[ROUNDS], pass_ns[ROUNDS], ret = 0, pret = 0;
		int r;

		for (r = 0; r < ROUNDS; r++) {
			if (set_rate(skel, ncpus, cases[c].rate, cases[c].batch, cases[c].lease_ns)) {
				fprintf(stderr, "bench: set rate: %s\n", strerror(errno));
				goto out;
			}
			if (run(bpf_program__fd(skel->progs.shedd_xdp), cases[c].pkt, &ret,
				&shedd_ns[r]) ||
			    run(pass_fd, cases[c].pkt, &pret, &pass_ns[r])) {
				fprintf(stderr, "bench: test run: %s\n", strerror(errno));
				goto out;
			}
		}
		qsort(shedd_ns, ROUNDS, sizeof(__u32), cmp_u32);
		qsort(pass_ns, ROUNDS, sizeof(__u32), cmp_u32);
		printf("%-24s %8s %10u %10u %6.2fx\n", cases[c].name,
		       ret < 5 ? verdicts[ret] : "?", shedd_ns[ROUNDS / 2], pass_ns[ROUNDS / 2],
		       pass_ns[ROUNDS / 2] ? (double)shedd_ns[ROUNDS / 2] / pass_ns[ROUNDS / 2] : 0);
	}
	err = bench_verified(skel, argv[2], &syn) ? 1 : 0;
	if (!err && bench_source_check(skel, pass_fd, ncpus)) {
		fprintf(stderr, "bench: source check: %s\n", strerror(errno));
		err = 1;
	}
out:
	bpf_object__close(pass_obj);
	shedd_bpf__destroy(skel);
	return err;
}
