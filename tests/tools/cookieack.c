/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* cookieack.c - one handshake by hand, through AF_PACKET: a SYN from --src
 * (any address the server routes back to this interface), the SYN-ACK read
 * off the wire, then the ACK that returns its cookie, changed by --corrupt
 * (XOR on the acknowledgement number: a forged cookie). IPv4, with the
 * options of a Linux SYN. One line on stdout:
 *   cookie=0xC ack=0xA tsval=N tsecr=N synack_ms=X
 * Exit 0 when the SYN-ACK came and the ACK left, 1 otherwise, 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <net/if_arp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "cookieack"
#include "toolopts.h"

#define MAX_TIMEOUT_MS 60000ULL
#define DEFAULT_TIMEOUT_MS 2000ULL
#define ISN 0x1000beefu
#define TSVAL 0x00c0ffeeu
#define FRAME_MAX 2048

struct cfg {
	const char *iface;
	int ifindex;
	uint8_t src_mac[ETH_ALEN];
	uint8_t dst_mac[ETH_ALEN];
	struct in_addr src, dst;
	uint16_t sport, dport;
	uint32_t corrupt;
	uint64_t timeout_ms;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " --iface IF --dst-mac MAC --src ADDR --dst ADDR --sport P\n"
"       --dport P [--corrupt MASK] [--timeout-ms MS]\n"
"\n"
"Sends a SYN (MSS 1460, SACK permitted, timestamps, window scale 7) from\n"
"ADDR:P out of IF to the MAC, waits for the SYN-ACK (at most MS ms, 1-%llu,\n"
"default %llu), and answers it with an ACK whose acknowledgement number is\n"
"cookie + 1 XOR MASK (decimal or 0x hex, default 0: the genuine cookie),\n"
"echoing the SYN-ACK's timestamp. IPv4 only.\n"
"Exit: 0 the ACK left, 1 no SYN-ACK or an error, 2 usage error.\n",
		MAX_TIMEOUT_MS, DEFAULT_TIMEOUT_MS);
}

static int parse_mac(const char *s, uint8_t *mac)
{
	unsigned int b[ETH_ALEN];
	char tail;
	int i;

	if (sscanf(s, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
		   &tail) != ETH_ALEN)
		return -1;
	for (i = 0; i < ETH_ALEN; i++) {
		if (b[i] > 0xff)
			return -1;
		mac[i] = (uint8_t)b[i];
	}
	return 0;
}

enum { OPT_IFACE = 256, OPT_DST_MAC, OPT_SRC, OPT_DST, OPT_SPORT, OPT_DPORT, OPT_CORRUPT,
       OPT_TIMEOUT, OPT_HELP };

static const struct option long_opts[] = {
	{ "iface", required_argument, NULL, OPT_IFACE },
	{ "dst-mac", required_argument, NULL, OPT_DST_MAC },
	{ "src", required_argument, NULL, OPT_SRC },
	{ "dst", required_argument, NULL, OPT_DST },
	{ "sport", required_argument, NULL, OPT_SPORT },
	{ "dport", required_argument, NULL, OPT_DPORT },
	{ "corrupt", required_argument, NULL, OPT_CORRUPT },
	{ "timeout-ms", required_argument, NULL, OPT_TIMEOUT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static int parse_args(int argc, char **argv, struct cfg *c)
{
	bool mac = false, src = false, dst = false;
	uint64_t v;
	char *end;
	int opt;

	c->timeout_ms = DEFAULT_TIMEOUT_MS;
	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_IFACE:
			c->iface = optarg;
			break;
		case OPT_DST_MAC:
			if (parse_mac(optarg, c->dst_mac)) {
				fprintf(stderr, PROG ": --dst-mac: '%s' is not a MAC\n", optarg);
				return -1;
			}
			mac = true;
			break;
		case OPT_SRC:
		case OPT_DST:
			if (inet_pton(AF_INET, optarg, opt == OPT_SRC ? &c->src : &c->dst) != 1) {
				fprintf(stderr, PROG ": '%s' is not an IPv4 address\n", optarg);
				return -1;
			}
			*(opt == OPT_SRC ? &src : &dst) = true;
			break;
		case OPT_SPORT:
		case OPT_DPORT:
			if (parse_u64(opt == OPT_SPORT ? "sport" : "dport", optarg, 1, 65535, &v))
				return -1;
			*(opt == OPT_SPORT ? &c->sport : &c->dport) = (uint16_t)v;
			break;
		case OPT_CORRUPT:
			errno = 0;
			v = strtoull(optarg, &end, 0);
			if (errno || *end || optarg[0] == '-' || v > UINT32_MAX) {
				fprintf(stderr, PROG ": --corrupt: '%s' is not a 32-bit mask\n",
					optarg);
				return -1;
			}
			c->corrupt = (uint32_t)v;
			break;
		case OPT_TIMEOUT:
			if (parse_u64("timeout-ms", optarg, 1, MAX_TIMEOUT_MS, &c->timeout_ms))
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
	if (!c->iface || !mac || !src || !dst || !c->sport || !c->dport) {
		fprintf(stderr, PROG ": --iface, --dst-mac, --src, --dst, --sport and "
			"--dport are required\n");
		return -1;
	}
	return 0;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *b, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* An Ethernet + IPv4 + TCP frame from the client to the server into @f;
 * its length. */
static size_t build(const struct cfg *c, uint8_t *f, uint8_t flags, uint32_t seq,
		    uint32_t ack, const uint8_t *opts, size_t opt_len)
{
	uint8_t *ip = f + 14, *tcp = ip + 20;
	size_t tcp_len = 20 + opt_len;
	uint32_t sum;

	memset(f, 0, 14 + 20 + tcp_len);
	memcpy(f, c->dst_mac, ETH_ALEN);
	memcpy(f + 6, c->src_mac, ETH_ALEN);
	put16(f + 12, ETH_P_IP);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(20 + tcp_len));
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = IPPROTO_TCP;
	memcpy(ip + 12, &c->src, 4);
	memcpy(ip + 16, &c->dst, 4);
	put16(ip + 10, csum_fold(csum_add(0, ip, 20)));
	put16(tcp, c->sport);
	put16(tcp + 2, c->dport);
	put32(tcp + 4, seq);
	put32(tcp + 8, ack);
	tcp[12] = (uint8_t)(tcp_len / 4 << 4);
	tcp[13] = flags;
	put16(tcp + 14, 64240);
	memcpy(tcp + 20, opts, opt_len);
	sum = csum_add(0, ip + 12, 8) + IPPROTO_TCP + (uint32_t)tcp_len;
	put16(tcp + 16, csum_fold(csum_add(sum, tcp, tcp_len)));
	return 14 + 20 + tcp_len;
}

/* The SYN-ACK to our SYN in frame @f of @len bytes: 1 and its seq and
 * timestamp value, or 0. */
static int synack_of(const struct cfg *c, const uint8_t *f, size_t len, uint32_t *seq,
		     uint32_t *tsval)
{
	const uint8_t *ip = f + 14, *tcp, *o;
	size_t ihl, doff, i;

	if (len < 14 + 20 || f[12] != 0x08 || f[13] != 0x00 || (ip[0] >> 4) != 4 ||
	    ip[9] != IPPROTO_TCP)
		return 0;
	ihl = (size_t)(ip[0] & 0xf) * 4;
	if (len < 14 + ihl + 20 || memcmp(ip + 12, &c->dst, 4) || memcmp(ip + 16, &c->src, 4))
		return 0;
	tcp = ip + ihl;
	doff = (size_t)(tcp[12] >> 4) * 4;
	if ((uint16_t)(tcp[0] << 8 | tcp[1]) != c->dport ||
	    (uint16_t)(tcp[2] << 8 | tcp[3]) != c->sport || (tcp[13] & 0x17) != 0x12 ||
	    get32(tcp + 8) != ISN + 1 || doff < 20 || len < 14 + ihl + doff)
		return 0;
	*seq = get32(tcp + 4);
	*tsval = 0;
	o = tcp + 20;
	for (i = 0; i < doff - 20;) {
		if (o[i] == 0)
			break;
		if (o[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= doff - 20 || o[i + 1] < 2)
			break;
		if (o[i] == 8 && o[i + 1] == 10 && i + 10 <= doff - 20)
			*tsval = get32(o + i + 2);
		i += o[i + 1];
	}
	return 1;
}

static int open_iface(struct cfg *c)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_IP) };
	struct ifreq ifr = {};
	int fd;

	if (strlen(c->iface) >= IFNAMSIZ || !(c->ifindex = (int)if_nametoindex(c->iface))) {
		fprintf(stderr, PROG ": no interface '%s'\n", c->iface);
		return -1;
	}
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_IP));
	if (fd < 0) {
		fprintf(stderr, PROG ": AF_PACKET socket: %s\n", strerror(errno));
		return -1;
	}
	strcpy(ifr.ifr_name, c->iface);
	sll.sll_ifindex = c->ifindex;
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) || ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		fprintf(stderr, PROG ": %s: %s\n", c->iface, strerror(errno));
		close(fd);
		return -1;
	}
	memcpy(c->src_mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	return fd;
}

static int send_frame(const struct cfg *c, int fd, const uint8_t *f, size_t len)
{
	struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_ifindex = c->ifindex,
				  .sll_halen = ETH_ALEN };

	memcpy(to.sll_addr, c->dst_mac, ETH_ALEN);
	if (sendto(fd, f, len, 0, (struct sockaddr *)&to, sizeof(to)) != (ssize_t)len) {
		fprintf(stderr, PROG ": send: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const uint8_t syn_opts[20] = {
		2, 4, 0x05, 0xb4, 4, 2,
		8, 10, TSVAL >> 24, (TSVAL >> 16) & 0xff, (TSVAL >> 8) & 0xff, TSVAL & 0xff,
		0, 0, 0, 0, 1, 3, 3, 7,
	};
	uint8_t f[FRAME_MAX], ack_opts[12] = { 1, 1, 8, 10 };
	struct cfg c = { 0 };
	uint32_t cookie = 0, tsval = 0, ack;
	uint64_t start, deadline;
	int r = parse_args(argc, argv, &c), fd, got = 0;
	size_t len;

	if (r)
		return r < 0 ? 2 : 0;
	fd = open_iface(&c);
	if (fd < 0)
		return 1;
	start = now_ns();
	deadline = start + c.timeout_ms * 1000000ULL;
	len = build(&c, f, 0x02, ISN, 0, syn_opts, sizeof(syn_opts));
	if (send_frame(&c, fd, f, len))
		return 1;
	while (!got) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ns();
		ssize_t n;

		if (now >= deadline) {
			fprintf(stderr, PROG ": no SYN-ACK within %" PRIu64 " ms\n", c.timeout_ms);
			return 1;
		}
		if (poll(&p, 1, (int)((deadline - now) / 1000000) + 1) <= 0)
			continue;
		n = recv(fd, f, sizeof(f), 0);
		if (n > 0)
			got = synack_of(&c, f, (size_t)n, &cookie, &tsval);
	}
	ack = (cookie + 1) ^ c.corrupt;
	put32(ack_opts + 4, TSVAL + 1);
	put32(ack_opts + 8, tsval);
	len = build(&c, f, 0x10, ISN + 1, ack, ack_opts, sizeof(ack_opts));
	if (send_frame(&c, fd, f, len))
		return 1;
	printf("cookie=0x%08x ack=0x%08x tsval=%u tsecr=%u synack_ms=%.1f\n", cookie, ack,
	       TSVAL + 1, tsval, (double)(now_ns() - start) / 1e6);
	close(fd);
	return 0;
}
