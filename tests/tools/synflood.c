/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* synflood.c - testbed SYN source: paced, crafted TCP SYNs through AF_PACKET,
 * one distinct (spoofed source address, source port) flow per SYN, and a count
 * of the distinct SYNs answered by SYN-ACK or RST. Prints one line on stdout:
 * sent=N synack=N rst=N elapsed_ms=N rate_pps=N.N. Exit 0 ok, 1 error, 2 usage.
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

#define PROG "synflood"
#include "toolopts.h"

#ifndef MAX_COUNT
#define MAX_COUNT 10000000ULL /* SYNs per run; bounds the reply bitmaps */
#endif
#define MAX_DURATION_S 600ULL
#define MAX_WAIT_S 600ULL
#define MAX_RATE_PPS 10000000ULL
#define DEFAULT_RATE_PPS 1000ULL
#define DEFAULT_DURATION_S 5ULL
#define DEFAULT_WAIT_S 1ULL
#define DEFAULT_SPORT_BASE 1024ULL
/* Host addresses walked in an IPv6 prefix. More than MAX_COUNT, so every SYN
 * of a run can have its own address. */
#define MAX_V6_HOSTS (1ULL << 24)
#define TX_BATCH 64        /* SYNs per sendmmsg() */
#define RX_BATCH 64        /* frames per recvmmsg() */
#define RX_DRAIN_MAX 64    /* recvmmsg() calls per drain, so pacing goes on */
#define RX_FRAME_MAX 256   /* bytes kept of a received frame; headers only */
#define RX_RCVBUF (8 << 20)
#define TX_STALL_NS 1000000000ULL /* give up when no SYN leaves for this long */
#define TX_RETRY_NS 50000ULL      /* back-off while the device queue is full */
/* How late the last SYNs of a --duration may leave. Every SYN's deadline is
 * inside the duration (count <= rate * duration); the grace absorbs the
 * wake-up latency of the final sleep, and a sender that cannot keep up
 * still stops here. */
#define TX_GRACE_NS 20000000ULL
#define NSEC_PER_SEC ((uint64_t)1000000000)
#define NSEC_PER_MSEC ((uint64_t)1000000)

#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_ACK 0x10

#define ETH_HLEN_ 14
#define IPV4_HLEN 20
#define IPV6_HLEN 40
#define TCP_HLEN_SYN 24 /* 20-byte header + 4-byte MSS option */
/* --fragment: a SYN with 12 option bytes (MSS, SACK permitted, window
 * scale), sent as two IP fragments: the first holds the first 24 bytes
 * (the whole fixed header and the MSS), the second the last 8 at offset 3. */
#define TCP_HLEN_FRAG 32
#define FRAG1_TCP 24
#define FRAG6_HLEN 8
#define SYN_FRAME_MAX (ETH_HLEN_ + IPV6_HLEN + FRAG6_HLEN + TCP_HLEN_FRAG)

typedef unsigned __int128 u128;

struct cfg {
	const char *iface;
	int ifindex;
	uint8_t src_mac[ETH_ALEN];
	uint8_t dst_mac[ETH_ALEN];
	int family;          /* AF_INET or AF_INET6, from --dst */
	u128 dst;            /* IPv4 in the low 32 bits */
	uint16_t dport;
	u128 src_first;      /* first host address of --src */
	uint64_t hosts;      /* host addresses walked in --src */
	uint64_t sport_base;
	uint64_t rate_pps;
	uint64_t count;      /* SYNs planned: min(--count, rate * duration) */
	uint64_t duration_ns;
	uint64_t wait_ns;
	uint64_t seed;
	uint64_t start_at_ms; /* --start-at: wall-clock ms, 0 = at once */
	bool fragment;       /* --fragment: each SYN as two IP fragments */
	bool verbose;
};

/* What came back. Bitmaps are indexed by flow, so a retransmitted SYN-ACK
 * counts once. */
struct replies {
	uint64_t *synack_map;
	uint64_t *rst_map;
	uint64_t synack;
	uint64_t rst;
	uint64_t unmatched; /* TCP from dst:dport to a flow not sent, or bad ack */
	uint64_t other;     /* neither SYN-ACK nor RST (e.g. a bare ACK) */
};

/* SIGINT and SIGTERM interrupt the run (exit 1); SIGUSR1 ends the sending
 * phase as if --duration had run out, replies still counted for --wait. */
static volatile sig_atomic_t stop, finish;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		finish = 1;
	else
		stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(t_ns / NSEC_PER_SEC),
		.tv_nsec = (long)(t_ns % NSEC_PER_SEC),
	};

	/* EINTR only cuts a sleep short; the caller re-reads the clock. */
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " --iface IF --dst-mac MAC --dst ADDR --dport PORT --src CIDR\n"
"                [--rate PPS] [--count N] [--duration SEC] [--wait SEC]\n"
"                [--sport-base N] [--seed N] [--start-at MS] [--fragment]\n"
"                [--verbose] [--help]\n"
"\n"
"Send crafted TCP SYNs out of IF through an AF_PACKET socket, paced at PPS,\n"
"each from its own (source address, source port) in CIDR, and count the\n"
"distinct SYNs answered by a SYN-ACK or a RST from ADDR:PORT.\n"
"Use only on networks you own (test namespaces): the sources are spoofed.\n"
"\n"
"  --iface IF         interface to send on; its MAC is the source MAC\n"
"  --dst-mac MAC      next-hop MAC, aa:bb:cc:dd:ee:ff\n"
"  --dst ADDR         target address; IPv4 or IPv6 picks the family\n"
"  --dport PORT       target TCP port, 1-65535\n"
"  --src CIDR         spoofed source prefix, same family as --dst,\n"
"                     e.g. 198.19.0.0/16 or 2001:db8:ff::/64\n"
"  --rate PPS         SYNs per second, 1-%llu (default %llu)\n"
"  --count N          stop after N SYNs, 1-%llu\n"
"  --duration SEC     stop after SEC seconds, 1-%llu (default %llu without\n"
"                     --count); the first of --count and --duration wins\n"
"  --wait SEC         keep counting replies SEC seconds after the last SYN,\n"
"                     0-%llu (default %llu)\n"
"  --sport-base N     first source port, 1-65535 (default %llu)\n"
"  --start-at MS      send the first SYN at this wall-clock time, in ms\n"
"                     since the epoch (date +%%s%%3N), at most 600 s ahead;\n"
"                     a time already past starts at once. Two floods given\n"
"                     the same MS overlap, however slow each was to start\n"
"  --seed N           seed of the initial sequence numbers (default: from\n"
"                     the clock, so replies to an earlier run do not match)\n"
"  --fragment         send each SYN as two IP fragments (IPv6: with a\n"
"                     Fragment header): the first holds the TCP header and\n"
"                     the MSS option, the second the rest of the options\n"
"  --verbose          details on stderr\n"
"  --help             this text\n"
"\n"
"SYN i leaves from address (i %% hosts) of CIDR and port sport-base + i / hosts,\n"
"so each reply maps back to one SYN. A reply counts only if its ack number is\n"
"that SYN's sequence number + 1. The same flags give the same flows: within\n"
"about a minute of an earlier run the server may still hold those flows in\n"
"SYN-RECV and answer them with a stale ack, so give each run its own\n"
"--sport-base or --src.\n"
"Output: sent=N synack=N rst=N elapsed_ms=N rate_pps=N.N\n"
"  elapsed_ms and rate_pps cover the sending phase, not --wait.\n"
"Signals: SIGUSR1 ends the sending phase at once (replies still counted for\n"
"  --wait, exit 0); SIGINT and SIGTERM interrupt the run (exit 1).\n"
"Exit: 0 done, 1 runtime error or interrupted, 2 usage error.\n",
		MAX_RATE_PPS, DEFAULT_RATE_PPS, MAX_COUNT, MAX_DURATION_S,
		DEFAULT_DURATION_S, MAX_WAIT_S, DEFAULT_WAIT_S,
		DEFAULT_SPORT_BASE);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly six colon-separated pairs of hex digits. */
static int parse_mac(const char *s, uint8_t mac[ETH_ALEN])
{
	int i;

	for (i = 0; i < ETH_ALEN; i++) {
		int hi = hexval(s[0]), lo = hi < 0 ? -1 : hexval(s[1]);

		if (hi < 0 || lo < 0)
			goto bad;
		mac[i] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (i < ETH_ALEN - 1 && *s++ != ':')
			goto bad;
	}
	if (*s == '\0')
		return 0;
bad:
	fprintf(stderr, PROG ": --dst-mac: want aa:bb:cc:dd:ee:ff\n");
	return -1;
}

static u128 addr_from_bytes(const uint8_t *b, int len)
{
	u128 v = 0;
	int i;

	for (i = 0; i < len; i++)
		v = v << 8 | b[i];
	return v;
}

static void addr_to_bytes(u128 v, uint8_t *b, int len)
{
	int i;

	for (i = len - 1; i >= 0; i--) {
		b[i] = (uint8_t)v;
		v >>= 8;
	}
}

static int addr_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

static int parse_addr(const char *s, int *family, u128 *out)
{
	uint8_t buf[16];

	if (inet_pton(AF_INET, s, buf) == 1) {
		*family = AF_INET;
		*out = addr_from_bytes(buf, 4);
		return 0;
	}
	if (inet_pton(AF_INET6, s, buf) == 1) {
		*family = AF_INET6;
		*out = addr_from_bytes(buf, 16);
		return 0;
	}
	return -1;
}

/* --src: a prefix of @family with no host bits set. IPv4 skips the network
 * and broadcast addresses (except /31, /32); IPv6 skips the all-zeros
 * subnet-router anycast address (except /128) and walks at most
 * MAX_V6_HOSTS addresses. */
static int parse_src(const char *s, struct cfg *c)
{
	int bits = addr_len(c->family) * 8, fam;
	char buf[INET6_ADDRSTRLEN + 8], *slash;
	uint64_t plen;
	u128 net, host_mask;

	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (!slash)
		goto bad;
	*slash = '\0';
	if (parse_addr(buf, &fam, &net) || fam != c->family) {
		fprintf(stderr, PROG ": --src: '%s' is not an %s prefix (the family "
			"of --dst)\n", s, c->family == AF_INET ? "IPv4" : "IPv6");
		return -1;
	}
	if (parse_u64("src prefix length", slash + 1, 0, (uint64_t)bits, &plen))
		return -1;
	host_mask = plen == 0 ? ~(u128)0 : (((u128)1 << (bits - plen)) - 1);
	if (bits == 32)
		host_mask &= 0xffffffffu;
	if (net & host_mask) {
		fprintf(stderr, PROG ": --src: '%s' has host bits set\n", s);
		return -1;
	}
	if (c->family == AF_INET) {
		uint64_t size = (uint64_t)1 << (32 - plen);

		c->src_first = size > 2 ? net + 1 : net;
		c->hosts = size > 2 ? size - 2 : size;
	} else {
		u128 size_m1 = host_mask; /* size - 1, fits even for /0 */

		c->src_first = size_m1 ? net + 1 : net;
		c->hosts = size_m1 == 0 ? 1 :
			   size_m1 > MAX_V6_HOSTS ? MAX_V6_HOSTS : (uint64_t)size_m1;
	}
	return 0;
bad:
	fprintf(stderr, PROG ": --src: want ADDR/LEN, got '%s'\n", s);
	return -1;
}

/* splitmix64: a cheap bijective mixer, so ISNs look random yet any flow's
 * ISN is recomputed from (seed, i) when its reply comes back. */
static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint32_t flow_isn(const struct cfg *c, uint64_t i)
{
	return (uint32_t)mix64(c->seed * 0x100000001b3ULL ^ i);
}

static void flow_tuple(const struct cfg *c, uint64_t i, u128 *addr,
		       uint16_t *port)
{
	*addr = c->src_first + i % c->hosts;
	*port = (uint16_t)(c->sport_base + i / c->hosts);
}

/* Inverse of flow_tuple(). Return: true and the flow in @i if (@addr, @port)
 * is one of ours. */
static bool flow_index(const struct cfg *c, u128 addr, uint16_t port,
		       uint64_t *i)
{
	u128 off;

	if (addr < c->src_first || port < c->sport_base)
		return false;
	off = addr - c->src_first;
	if (off >= c->hosts)
		return false;
	*i = (uint64_t)(port - c->sport_base) * c->hosts + (uint64_t)off;
	return true;
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

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

/* Internet checksum, RFC 1071: add big-endian 16-bit words, fold, invert. */
static uint64_t csum_add(uint64_t sum, const uint8_t *p, size_t len)
{
	while (len > 1) {
		sum += get16(p);
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint64_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* Write SYN @i into @buf. Return: the frame length. */
static size_t build_syn(const struct cfg *c, uint64_t i, uint8_t *buf)
{
	int alen = addr_len(c->family);
	uint8_t src[16], dst[16], *l3 = buf + ETH_HLEN_, *tcp;
	uint64_t sum;
	uint16_t sport;
	u128 saddr;

	flow_tuple(c, i, &saddr, &sport);
	addr_to_bytes(saddr, src, alen);
	addr_to_bytes(c->dst, dst, alen);

	memcpy(buf, c->dst_mac, ETH_ALEN);
	memcpy(buf + ETH_ALEN, c->src_mac, ETH_ALEN);
	put16(buf + 12, c->family == AF_INET ? ETH_P_IP : ETH_P_IPV6);

	if (c->family == AF_INET) {
		tcp = l3 + IPV4_HLEN;
		l3[0] = 0x45;                       /* version 4, 5 words */
		l3[1] = 0;                          /* DSCP/ECN */
		put16(l3 + 2, IPV4_HLEN + TCP_HLEN_SYN);
		put16(l3 + 4, (uint16_t)i);         /* id */
		put16(l3 + 6, 0x4000);              /* DF */
		l3[8] = 64;                         /* TTL */
		l3[9] = IPPROTO_TCP;
		put16(l3 + 10, 0);
		memcpy(l3 + 12, src, 4);
		memcpy(l3 + 16, dst, 4);
		put16(l3 + 10, csum_fold(csum_add(0, l3, IPV4_HLEN)));
	} else {
		tcp = l3 + IPV6_HLEN;
		put32(l3, 6u << 28);                /* version 6, no class/flow */
		put16(l3 + 4, TCP_HLEN_SYN);
		l3[6] = IPPROTO_TCP;
		l3[7] = 64;                         /* hop limit */
		memcpy(l3 + 8, src, 16);
		memcpy(l3 + 24, dst, 16);
	}

	put16(tcp, sport);
	put16(tcp + 2, c->dport);
	put32(tcp + 4, flow_isn(c, i));
	put32(tcp + 8, 0);                          /* ack */
	tcp[12] = (TCP_HLEN_SYN / 4) << 4;          /* data offset */
	tcp[13] = TCP_SYN;
	put16(tcp + 14, 64240);                     /* window */
	put16(tcp + 16, 0);                         /* checksum, below */
	put16(tcp + 18, 0);                         /* urgent pointer */
	tcp[20] = 2;                                /* MSS option, length 4 */
	tcp[21] = 4;
	put16(tcp + 22, c->family == AF_INET ? 1460 : 1440);

	/* Pseudo header: addresses, protocol, TCP length (RFC 793, RFC 8200). */
	sum = csum_add(0, src, (size_t)alen);
	sum = csum_add(sum, dst, (size_t)alen);
	sum += IPPROTO_TCP + TCP_HLEN_SYN;
	sum = csum_add(sum, tcp, TCP_HLEN_SYN);
	put16(tcp + 16, csum_fold(sum));

	return (size_t)(tcp + TCP_HLEN_SYN - buf);
}

/* Write SYN @i as two fragments into @f1 and @f2, setting their lengths.
 * The TCP checksum covers the whole segment, as the receiver reassembles
 * it before TCP sees it. */
static void build_syn_frags(const struct cfg *c, uint64_t i, uint8_t *f1,
			    size_t *len1, uint8_t *f2, size_t *len2)
{
	int alen = addr_len(c->family);
	uint8_t src[16], dst[16], tcp[TCP_HLEN_FRAG];
	uint8_t *frames[2] = { f1, f2 };
	size_t *lens[2] = { len1, len2 };
	uint64_t sum;
	uint16_t sport;
	u128 saddr;
	int k;

	flow_tuple(c, i, &saddr, &sport);
	addr_to_bytes(saddr, src, alen);
	addr_to_bytes(c->dst, dst, alen);

	memset(tcp, 0, sizeof(tcp));
	put16(tcp, sport);
	put16(tcp + 2, c->dport);
	put32(tcp + 4, flow_isn(c, i));
	tcp[12] = (TCP_HLEN_FRAG / 4) << 4;
	tcp[13] = TCP_SYN;
	put16(tcp + 14, 64240);
	tcp[20] = 2;                               /* MSS */
	tcp[21] = 4;
	put16(tcp + 22, c->family == AF_INET ? 1460 : 1440);
	tcp[24] = 1;                               /* NOP, NOP, SACK permitted */
	tcp[25] = 1;
	tcp[26] = 4;
	tcp[27] = 2;
	tcp[28] = 1;                               /* NOP, window scale 7 */
	tcp[29] = 3;
	tcp[30] = 3;
	tcp[31] = 7;
	sum = csum_add(0, src, (size_t)alen);
	sum = csum_add(sum, dst, (size_t)alen);
	sum += IPPROTO_TCP + TCP_HLEN_FRAG;
	sum = csum_add(sum, tcp, TCP_HLEN_FRAG);
	put16(tcp + 16, csum_fold(sum));

	for (k = 0; k < 2; k++) {
		uint8_t *buf = frames[k], *l3 = buf + ETH_HLEN_, *data;
		size_t off = k ? FRAG1_TCP : 0;
		size_t n = k ? TCP_HLEN_FRAG - FRAG1_TCP : FRAG1_TCP;
		/* Offset in 8-byte units, and more fragments on the first. */
		uint16_t fo = (uint16_t)(off / 8);

		memcpy(buf, c->dst_mac, ETH_ALEN);
		memcpy(buf + ETH_ALEN, c->src_mac, ETH_ALEN);
		put16(buf + 12, c->family == AF_INET ? ETH_P_IP : ETH_P_IPV6);
		if (c->family == AF_INET) {
			data = l3 + IPV4_HLEN;
			l3[0] = 0x45;
			l3[1] = 0;
			put16(l3 + 2, (uint16_t)(IPV4_HLEN + n));
			put16(l3 + 4, (uint16_t)i);        /* id, shared */
			put16(l3 + 6, (uint16_t)(fo | (k ? 0 : 0x2000)));
			l3[8] = 64;
			l3[9] = IPPROTO_TCP;
			put16(l3 + 10, 0);
			memcpy(l3 + 12, src, 4);
			memcpy(l3 + 16, dst, 4);
			put16(l3 + 10, csum_fold(csum_add(0, l3, IPV4_HLEN)));
		} else {
			uint8_t *fh = l3 + IPV6_HLEN;

			data = fh + FRAG6_HLEN;
			put32(l3, 6u << 28);
			put16(l3 + 4, (uint16_t)(FRAG6_HLEN + n));
			l3[6] = 44;                        /* Fragment header */
			l3[7] = 64;
			memcpy(l3 + 8, src, 16);
			memcpy(l3 + 24, dst, 16);
			fh[0] = IPPROTO_TCP;
			fh[1] = 0;
			put16(fh + 2, (uint16_t)(fo << 3 | (k ? 0 : 1)));
			put32(fh + 4, (uint32_t)i);        /* id, shared */
		}
		memcpy(data, tcp + off, n);
		*lens[k] = (size_t)(data + n - buf);
	}
}

static void bit_set_count(uint64_t *map, uint64_t i, uint64_t *count)
{
	uint64_t bit = 1ULL << (i % 64);

	if (!(map[i / 64] & bit)) {
		map[i / 64] |= bit;
		(*count)++;
	}
}

/* Count @frame if it is TCP from dst:dport answering one of the first @sent
 * SYNs: a SYN-ACK or a RST whose ack is that SYN's ISN + 1 (or a RST with
 * no ACK at all). */
static void classify(const struct cfg *c, struct replies *r, uint64_t sent,
		     const uint8_t *frame, size_t len)
{
	const uint8_t *l3 = frame + ETH_HLEN_, *tcp;
	uint16_t proto, dport;
	uint64_t i;
	uint8_t flags;
	u128 saddr, daddr;
	int tags;

	if (len < ETH_HLEN_)
		return;
	proto = get16(frame + 12);
	/* VLAN tags in the frame (when not offloaded): step over them. */
	for (tags = 0; tags < 2 && (proto == ETH_P_8021Q || proto == ETH_P_8021AD);
	     tags++) {
		if ((size_t)(l3 - frame) + 4 > len)
			return;
		proto = get16(l3 + 2);
		l3 += 4;
	}
	len -= (size_t)(l3 - frame);

	if (c->family == AF_INET) {
		size_t ihl;

		if (proto != ETH_P_IP || len < IPV4_HLEN || (l3[0] >> 4) != 4)
			return;
		ihl = (size_t)(l3[0] & 0x0f) * 4;
		/* Any fragment: the TCP header may not be here. */
		if (ihl < IPV4_HLEN || len < ihl + 20 || l3[9] != IPPROTO_TCP ||
		    (get16(l3 + 6) & 0x3fff))
			return;
		saddr = addr_from_bytes(l3 + 12, 4);
		daddr = addr_from_bytes(l3 + 16, 4);
		tcp = l3 + ihl;
	} else {
		/* Replies from a TCP stack carry no extension headers. */
		if (proto != ETH_P_IPV6 || len < IPV6_HLEN + 20 ||
		    (l3[0] >> 4) != 6 || l3[6] != IPPROTO_TCP)
			return;
		saddr = addr_from_bytes(l3 + 8, 16);
		daddr = addr_from_bytes(l3 + 24, 16);
		tcp = l3 + IPV6_HLEN;
	}
	if (saddr != c->dst || get16(tcp) != c->dport)
		return;
	dport = get16(tcp + 2);
	if (!flow_index(c, daddr, dport, &i))
		return;
	flags = tcp[13];
	/* A RST without ACK carries no ack to check (RFC 793 sends one only
	 * in reply to a segment with ACK, so a SYN should never get it). */
	if (i >= sent || (flags & TCP_ACK ?
			  get32(tcp + 8) != flow_isn(c, i) + 1 :
			  !(flags & TCP_RST))) {
		r->unmatched++;
		return;
	}
	if (flags & TCP_RST)
		bit_set_count(r->rst_map, i, &r->rst);
	else if (flags & TCP_SYN)
		bit_set_count(r->synack_map, i, &r->synack);
	else
		r->other++;
}

/* Read what is queued on @fd without blocking, at most RX_DRAIN_MAX batches. */
static int drain(int fd, const struct cfg *c, struct replies *r, uint64_t sent)
{
	static uint8_t frames[RX_BATCH][RX_FRAME_MAX];
	struct sockaddr_ll from[RX_BATCH];
	struct mmsghdr msgs[RX_BATCH];
	struct iovec iov[RX_BATCH];
	int round, k, n;

	for (round = 0; round < RX_DRAIN_MAX; round++) {
		memset(msgs, 0, sizeof(msgs));
		for (k = 0; k < RX_BATCH; k++) {
			iov[k].iov_base = frames[k];
			iov[k].iov_len = RX_FRAME_MAX;
			msgs[k].msg_hdr.msg_iov = &iov[k];
			msgs[k].msg_hdr.msg_iovlen = 1;
			msgs[k].msg_hdr.msg_name = &from[k];
			msgs[k].msg_hdr.msg_namelen = sizeof(from[k]);
		}
		n = recvmmsg(fd, msgs, RX_BATCH, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return 0;
			fprintf(stderr, PROG ": receive replies on %s: %s\n",
				c->iface, strerror(errno));
			return -1;
		}
		for (k = 0; k < n; k++) {
			size_t len = msgs[k].msg_len;

			if (from[k].sll_pkttype == PACKET_OUTGOING)
				continue;
			if (len > RX_FRAME_MAX) /* truncated: headers are all we read */
				len = RX_FRAME_MAX;
			classify(c, r, sent, frames[k], len);
		}
		if (n < RX_BATCH)
			return 0;
	}
	return 0;
}

/* Send SYNs [@first, @first + @n). Return: how many left, or -1 on error. */
static int send_batch(int fd, const struct cfg *c, uint64_t first, int n)
{
	static uint8_t frames[2 * TX_BATCH][SYN_FRAME_MAX];
	struct mmsghdr msgs[2 * TX_BATCH];
	struct iovec iov[2 * TX_BATCH];
	int per_syn = c->fragment ? 2 : 1, m;
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_ifindex = c->ifindex,
		.sll_protocol = htons(c->family == AF_INET ? ETH_P_IP : ETH_P_IPV6),
		.sll_halen = ETH_ALEN,
	};
	int k, done;

	memcpy(to.sll_addr, c->dst_mac, ETH_ALEN);
	memset(msgs, 0, sizeof(msgs));
	for (k = 0; k < n; k++) {
		m = k * per_syn;
		if (c->fragment)
			build_syn_frags(c, first + (uint64_t)k, frames[m], &iov[m].iov_len,
					frames[m + 1], &iov[m + 1].iov_len);
		else
			iov[m].iov_len = build_syn(c, first + (uint64_t)k, frames[m]);
	}
	for (m = 0; m < n * per_syn; m++) {
		iov[m].iov_base = frames[m];
		msgs[m].msg_hdr.msg_iov = &iov[m];
		msgs[m].msg_hdr.msg_iovlen = 1;
		msgs[m].msg_hdr.msg_name = &to;
		msgs[m].msg_hdr.msg_namelen = sizeof(to);
	}
	done = sendmmsg(fd, msgs, (unsigned int)(n * per_syn), 0);
	if (done < 0) {
		/* A full device queue is back-pressure, not failure. */
		if (errno == ENOBUFS || errno == EAGAIN || errno == EINTR)
			return 0;
		fprintf(stderr, PROG ": send SYNs on %s: %s\n", c->iface,
			strerror(errno));
		if (errno == ENETDOWN || errno == ENXIO)
			fprintf(stderr, PROG ": is %s up?\n", c->iface);
		return -1;
	}
	/* SYNs whose every fragment left; a lone first fragment is sent
	 * again with its SYN. */
	return done / per_syn;
}

static int open_iface(struct cfg *c, int *tx, int *rx)
{
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	int rcvbuf = RX_RCVBUF, fd;
	struct ifreq ifr = {};

	if (strlen(c->iface) >= IFNAMSIZ) {
		fprintf(stderr, PROG ": --iface: name '%s' too long\n", c->iface);
		return -1;
	}
	c->ifindex = (int)if_nametoindex(c->iface);
	if (!c->ifindex) {
		fprintf(stderr, PROG ": find interface %s: %s\n", c->iface,
			strerror(errno));
		return -1;
	}

	/* Protocol 0: the sending socket receives nothing. */
	*tx = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (*tx < 0) {
		fprintf(stderr, PROG ": open AF_PACKET socket: %s%s\n",
			strerror(errno), errno == EPERM ?
			" (needs CAP_NET_RAW)" : "");
		return -1;
	}
	strcpy(ifr.ifr_name, c->iface);
	if (ioctl(*tx, SIOCGIFHWADDR, &ifr) < 0) {
		fprintf(stderr, PROG ": read MAC of %s: %s\n", c->iface,
			strerror(errno));
		return -1;
	}
	if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
		fprintf(stderr, PROG ": %s is not an Ethernet interface\n",
			c->iface);
		return -1;
	}
	memcpy(c->src_mac, ifr.ifr_hwaddr.sa_data, ETH_ALEN);
	if (ioctl(*tx, SIOCGIFFLAGS, &ifr) < 0) {
		fprintf(stderr, PROG ": read flags of %s: %s\n", c->iface,
			strerror(errno));
		return -1;
	}
	if (!(ifr.ifr_flags & IFF_UP)) {
		fprintf(stderr, PROG ": %s is down\n", c->iface);
		return -1;
	}

	/* Replies go to a second socket bound to one ethertype on this device
	 * only: unlike ETH_P_ALL it gets no copy of our own SYNs, which at high
	 * rates would fill its buffer. Created with protocol 0 so that nothing
	 * from other devices queues up before bind(). */
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, PROG ": open AF_PACKET socket: %s\n",
			strerror(errno));
		return -1;
	}
	*rx = fd;
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf))) {
		fprintf(stderr, PROG ": set receive buffer: %s\n", strerror(errno));
		return -1;
	}
	sll.sll_ifindex = c->ifindex;
	sll.sll_protocol = htons(c->family == AF_INET ? ETH_P_IP : ETH_P_IPV6);
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll))) {
		fprintf(stderr, PROG ": bind reply socket to %s: %s\n", c->iface,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* Deadline of SYN @k: start + k / rate seconds. */
static uint64_t deadline_ns(const struct cfg *c, uint64_t start, uint64_t k)
{
	return start + (uint64_t)((u128)k * NSEC_PER_SEC / c->rate_pps);
}

/* SYNs due by @t: those whose deadline is <= t, at most c->count. */
static uint64_t due_by(const struct cfg *c, uint64_t start, uint64_t t)
{
	u128 due = (u128)(t - start) * c->rate_pps / NSEC_PER_SEC + 1;

	return due > c->count ? c->count : (uint64_t)due;
}

struct run {
	uint64_t sent;
	uint64_t start_ns, first_ns, last_ns;
	uint64_t tx_backoffs;
};

/* Absolute-deadline pacing: SYN k leaves at start + k / rate. Each wake-up
 * sends every SYN that is due (so a late wake-up catches up instead of
 * lowering the rate), drains replies, then sleeps until about 1 ms of SYNs
 * are due again. Sending ends at the last SYN, or TX_GRACE_NS after the
 * end of --duration when the sender falls behind. */
static int send_all(int tx, int rx, const struct cfg *c, struct replies *r,
		    struct run *run)
{
	uint64_t per_wake = c->rate_pps / 1000 ? c->rate_pps / 1000 : 1;
	uint64_t start, end;

	if (c->start_at_ms) {
		struct timespec at = { .tv_sec = (time_t)(c->start_at_ms / 1000),
				       .tv_nsec = (long)(c->start_at_ms % 1000) * 1000000 };

		while (!stop && !finish &&
		       clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &at, NULL) == EINTR)
			;
	}
	start = now_ns();
	end = start + c->duration_ns + TX_GRACE_NS;
	uint64_t progress_ns = start;

	run->start_ns = start;
	while (run->sent < c->count && !stop && !finish) {
		uint64_t now = now_ns(), due;

		if (now >= end)
			break;
		due = due_by(c, start, now);
		while (run->sent < due && !stop && !finish) {
			uint64_t left = due - run->sent;
			int n = left > TX_BATCH ? TX_BATCH : (int)left;
			int done = send_batch(tx, c, run->sent, n);

			if (done < 0)
				return -1;
			now = now_ns();
			if (done == 0) {
				if (now - progress_ns > TX_STALL_NS) {
					fprintf(stderr, PROG ": send SYNs on %s: "
						"device queue stays full\n", c->iface);
					return -1;
				}
				run->tx_backoffs++;
				sleep_until(now + TX_RETRY_NS);
				continue;
			}
			if (!run->sent)
				run->first_ns = now;
			run->sent += (uint64_t)done;
			run->last_ns = now;
			progress_ns = now;
			if (now >= end)
				break;
		}
		if (drain(rx, c, r, run->sent))
			return -1;
		if (run->sent < c->count) {
			uint64_t k = run->sent + per_wake;

			/* Never past the last SYN's own deadline, or it would
			 * miss the end of --duration. */
			sleep_until(deadline_ns(c, start,
						(k < c->count ? k : c->count) - 1));
		}
	}
	if (run->sent < c->count && !stop && !finish) {
		fprintf(stderr, PROG ": warning: sent %" PRIu64 " of %" PRIu64
			" SYNs in the time given; the rate is too high for this "
			"host\n", run->sent, c->count);
	}
	return 0;
}

/* Count replies for @c->wait_ns after the last SYN. */
static int wait_replies(int rx, const struct cfg *c, struct replies *r,
			const struct run *run)
{
	uint64_t end = now_ns() + c->wait_ns;

	for (;;) {
		struct pollfd pfd = { .fd = rx, .events = POLLIN };
		uint64_t now = now_ns();
		int ms;

		if (drain(rx, c, r, run->sent))
			return -1;
		if (now >= end || stop)
			return 0;
		ms = (int)((end - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
		if (poll(&pfd, 1, ms) < 0 && errno != EINTR) {
			fprintf(stderr, PROG ": wait for replies: %s\n",
				strerror(errno));
			return -1;
		}
	}
}

enum {
	OPT_IFACE = 256, OPT_DST_MAC, OPT_DST, OPT_DPORT, OPT_SRC, OPT_RATE,
	OPT_COUNT, OPT_DURATION, OPT_WAIT, OPT_SPORT_BASE, OPT_SEED,
	OPT_VERBOSE, OPT_HELP, OPT_FRAGMENT, OPT_START_AT,
};

static const struct option long_opts[] = {
	{ "iface", required_argument, NULL, OPT_IFACE },
	{ "dst-mac", required_argument, NULL, OPT_DST_MAC },
	{ "dst", required_argument, NULL, OPT_DST },
	{ "dport", required_argument, NULL, OPT_DPORT },
	{ "src", required_argument, NULL, OPT_SRC },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "wait", required_argument, NULL, OPT_WAIT },
	{ "sport-base", required_argument, NULL, OPT_SPORT_BASE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "fragment", no_argument, NULL, OPT_FRAGMENT },
	{ "start-at", required_argument, NULL, OPT_START_AT },
	{ "verbose", no_argument, NULL, OPT_VERBOSE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Return: 0 to run, 1 after --help, -1 on a usage error (already printed). */
static int parse_args(int argc, char **argv, struct cfg *c)
{
	const char *dst = NULL, *src = NULL, *mac = NULL;
	uint64_t count = 0, duration_s = 0, wait_s = DEFAULT_WAIT_S, v;
	bool have_count = false, have_duration = false, have_dport = false;
	u128 planned;
	int opt;

	c->rate_pps = DEFAULT_RATE_PPS;
	c->sport_base = DEFAULT_SPORT_BASE;
	c->seed = now_ns() ^ ((uint64_t)getpid() << 32);
	opterr = 1;
	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_IFACE:
			c->iface = optarg;
			break;
		case OPT_DST_MAC:
			mac = optarg;
			break;
		case OPT_DST:
			dst = optarg;
			break;
		case OPT_DPORT:
			if (parse_u64("dport", optarg, 1, 65535, &v))
				return -1;
			c->dport = (uint16_t)v;
			have_dport = true;
			break;
		case OPT_SRC:
			src = optarg;
			break;
		case OPT_RATE:
			if (parse_u64("rate", optarg, 1, MAX_RATE_PPS, &c->rate_pps))
				return -1;
			break;
		case OPT_COUNT:
			if (parse_u64("count", optarg, 1, MAX_COUNT, &count))
				return -1;
			have_count = true;
			break;
		case OPT_DURATION:
			if (parse_u64("duration", optarg, 1, MAX_DURATION_S,
				      &duration_s))
				return -1;
			have_duration = true;
			break;
		case OPT_WAIT:
			if (parse_u64("wait", optarg, 0, MAX_WAIT_S, &wait_s))
				return -1;
			break;
		case OPT_SPORT_BASE:
			if (parse_u64("sport-base", optarg, 1, 65535, &c->sport_base))
				return -1;
			break;
		case OPT_SEED:
			if (parse_u64("seed", optarg, 0, UINT64_MAX, &c->seed))
				return -1;
			break;
		case OPT_VERBOSE:
			c->verbose = true;
			break;
		case OPT_FRAGMENT:
			c->fragment = true;
			break;
		case OPT_START_AT:
			if (parse_u64("start-at", optarg, 1, UINT64_MAX / 2, &c->start_at_ms))
				return -1;
			break;
		case OPT_HELP:
			usage(stdout);
			return 1;
		default:
			return -1; /* getopt_long said what was wrong */
		}
	}
	if (optind < argc) {
		fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!c->iface || !mac || !dst || !have_dport || !src) {
		fprintf(stderr, PROG ": --iface, --dst-mac, --dst, --dport and "
			"--src are required\n");
		return -1;
	}
	if (parse_mac(mac, c->dst_mac))
		return -1;
	if (parse_addr(dst, &c->family, &c->dst)) {
		fprintf(stderr, PROG ": --dst: '%s' is not an IPv4 or IPv6 "
			"address\n", dst);
		return -1;
	}
	if (parse_src(src, c))
		return -1;
	if (c->start_at_ms) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		if (c->start_at_ms > (uint64_t)ts.tv_sec * 1000 + 600000) {
			fprintf(stderr, PROG ": --start-at %" PRIu64 " is more than 600 s "
				"ahead\n", c->start_at_ms);
			return -1;
		}
	}

	/* Without --count the run is timed (5 s by default); with --count only,
	 * the time bound is the maximum, so the count decides. */
	if (!have_duration)
		duration_s = have_count ? MAX_DURATION_S : DEFAULT_DURATION_S;
	c->duration_ns = duration_s * NSEC_PER_SEC;
	c->wait_ns = wait_s * NSEC_PER_SEC;
	planned = (u128)c->rate_pps * duration_s;
	if (have_count && count < planned)
		planned = count;
	if (planned > MAX_COUNT) {
		fprintf(stderr, PROG ": --rate %" PRIu64 " for %" PRIu64 " s is "
			"more than %llu SYNs; lower one or set --count\n",
			c->rate_pps, duration_s, MAX_COUNT);
		return -1;
	}
	c->count = (uint64_t)planned;
	/* Each SYN needs its own (address, port). */
	if ((u128)c->hosts * (65536 - c->sport_base) < planned) {
		fprintf(stderr, PROG ": --src %s with ports %" PRIu64 "-65535 has "
			"fewer than %" PRIu64 " (address, port) pairs\n", src,
			c->sport_base, c->count);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct replies r = {};
	struct cfg c = {};
	struct run run = {};
	struct tpacket_stats pst = {};
	socklen_t pst_len = sizeof(pst);
	struct sigaction sa = { .sa_handler = on_signal };
	int tx = -1, rx = -1, err = 1, ret;
	uint64_t words, elapsed_ns;
	double rate = 0;

	ret = parse_args(argc, argv, &c);
	if (ret) {
		if (ret < 0)
			fprintf(stderr, "Try '" PROG " --help'.\n");
		return ret > 0 ? 0 : 2;
	}

	words = (c.count + 63) / 64;
	r.synack_map = calloc(words, sizeof(uint64_t));
	r.rst_map = calloc(words, sizeof(uint64_t));
	if (!r.synack_map || !r.rst_map) {
		fprintf(stderr, PROG ": allocate reply bitmaps: %s\n",
			strerror(errno));
		goto cleanup;
	}
	if (open_iface(&c, &tx, &rx))
		goto cleanup;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);

	if (c.verbose)
		fprintf(stderr, PROG ": %s: %" PRIu64 " SYNs at %" PRIu64 " pps, "
			"%" PRIu64 " source addresses, ports from %" PRIu64
			", seed %" PRIu64 "\n", c.iface, c.count, c.rate_pps,
			c.hosts, c.sport_base, c.seed);

	if (send_all(tx, rx, &c, &r, &run))
		goto report;
	if (wait_replies(rx, &c, &r, &run))
		goto report;
	err = stop ? 1 : 0;
	if (stop)
		fprintf(stderr, PROG ": interrupted\n");
report:
	elapsed_ns = run.sent ? run.last_ns - run.start_ns : 0;
	/* The rate between the first and the last SYN: n SYNs span n-1 gaps. */
	if (run.sent > 1 && run.last_ns > run.first_ns)
		rate = (double)(run.sent - 1) * NSEC_PER_SEC /
		       (double)(run.last_ns - run.first_ns);
	else if (elapsed_ns)
		rate = (double)run.sent * NSEC_PER_SEC / (double)elapsed_ns;
	printf("sent=%" PRIu64 " synack=%" PRIu64 " rst=%" PRIu64
	       " elapsed_ms=%" PRIu64 " rate_pps=%.1f\n", run.sent, r.synack,
	       r.rst, elapsed_ns / NSEC_PER_MSEC, rate);
	if (getsockopt(rx, SOL_PACKET, PACKET_STATISTICS, &pst, &pst_len) == 0 &&
	    pst.tp_drops)
		fprintf(stderr, PROG ": warning: the reply socket dropped %u "
			"frames; synack/rst may be low\n", pst.tp_drops);
	if (r.unmatched)
		fprintf(stderr, PROG ": note: %" PRIu64 " replies from the target "
			"matched no SYN of this run (an earlier run's flows? vary "
			"--sport-base or --src)\n", r.unmatched);
	if (c.verbose)
		fprintf(stderr, PROG ": other replies %" PRIu64 ", send back-offs "
			"%" PRIu64 "\n", r.other, run.tx_backoffs);
cleanup:
	if (tx >= 0)
		close(tx);
	if (rx >= 0)
		close(rx);
	free(r.synack_map);
	free(r.rst_map);
	return err;
}
