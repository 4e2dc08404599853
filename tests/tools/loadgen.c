/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* loadgen.c - testbed open-loop TCP client with patience, the measure of
 * goodput: starts requests at a fixed (or Poisson) rate, or one that
 * changes in phases, each on a new connection ("GET\n", ok when "OK\n"
 * came back within --patience-ms) or, with --http, as HTTP/1.1 GETs (ok on
 * a 2xx whose whole body arrived in time), optionally several per
 * keep-alive connection. At its deadline an attempt gives up with a RST; a
 * failed one may be retried, within a retry budget. One summary line on
 * stdout.
 * Exit 0 ok, 1 runtime error (or interrupted), 2 usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "loadgen"
#include "toolopts.h"
#include "../splitmix.h"

#ifndef MAX_INFLIGHT
#define MAX_INFLIGHT 1000000ULL
#endif
#define DEFAULT_MAX_INFLIGHT 20000ULL
#define MAX_DURATION_S 3600ULL
#define MAX_PATIENCE_MS 600000ULL
#define MIN_RATE 0.01
#define MAX_RATE 1000000.0
#define FD_SPARE 64          /* descriptors besides the connections */
#define EVENT_BATCH 1024     /* epoll events per wait */
/* Connections started per loop turn when the loop runs late, so replies
 * are still read between the starts; the late starts follow at once. */
#define START_BATCH 256
#define NSEC_PER_SEC ((uint64_t)1000000000)
#define NSEC_PER_MSEC ((uint64_t)1000000)
#define NSEC_PER_USEC ((uint64_t)1000)
#define NIL UINT32_MAX
#define MAX_REQUESTS_PER_CONN 1000000ULL
#define HTTP_LINE_MAX 96 /* bytes of a response line kept; the rest ignored */
#define HTTP_REQUEST_MAX 512
#define MAX_PHASES 64
#define PHASES_SPEC_MAX 4096 /* characters of a --phases argument */
#define MAX_RETRIES 100ULL
#define MAX_RETRY_DELAY_MS 60000ULL
#define MAX_RETRY_BUDGET 10.0
#define MAX_SOURCES 65536ULL
/* The retry budget's balance in millionths of a token: F is taken to six
 * decimals, and deposits add up exactly (0.1 x 10 is one whole token). */
#define TOKEN_UNIT 1000000ULL

/* Latency histogram, log-linear in microseconds: values below HIST_SUB are
 * exact, above it every power of two has HIST_SUB buckets, so a bucket's
 * midpoint is within 1 / (2 * HIST_SUB) of any value in it (0.4 %). */
#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB)

static const char request[] = "GET\n";
static const char reply[] = "OK\n";

enum outcome {
	OUT_OK,
	OUT_REFUSED,
	OUT_TIMEOUT_CONNECT,
	OUT_TIMEOUT_RESPONSE,
	OUT_ERROR,
	OUT_BAD_STATUS,
	OUT_NR,
};

static const char *const outcome_name[OUT_NR] = {
	"ok", "refused", "timeout_connect", "timeout_response", "error",
	"bad_status",
};

/* One phase of the offered rate: @rate arrivals a second for @secs. */
struct phase {
	uint64_t secs;
	double rate;
};

/* An IPv4 or IPv6 socket address. */
union sa46 {
	struct sockaddr_in v4;
	struct sockaddr_in6 v6;
};

struct cfg {
	int family;
	union sa46 dst, src;
	socklen_t addr_len;
	bool have_bind;
	uint64_t nsources;      /* --sources N: addresses from --bind on */
	uint64_t source_prefix; /* --source-prefix P: each in its own /P */
	bool have_source_prefix;
	bool per_source;
	const char *dst_str, *bind_str;
	uint64_t port;
	double rate;       /* the highest of the phases' rates */
	bool poisson;
	uint64_t duration_s; /* the sum of the phases */
	const char *phases_str; /* --phases as given, or NULL */
	struct phase phases[MAX_PHASES];
	uint32_t nphases;
	uint64_t retries, retry_delay_ms;
	bool have_budget;
	uint64_t budget_micro; /* --retry-budget F, in millionths of a token */
	uint64_t patience_ms;
	uint64_t max_inflight;
	bool max_inflight_set;
	uint64_t seed;
	bool http;
	const char *host;
	uint64_t requests_per_conn;
	uint64_t warmup_s;
	/* --http: the request, with and without "Connection: close" */
	char req_close[HTTP_REQUEST_MAX], req_keep[HTTP_REQUEST_MAX];
	size_t req_close_len, req_keep_len;
};

/* C_IDLE: an HTTP keep-alive connection between requests, in the idle
 * list, not in the deadline list. */
enum conn_state { C_FREE, C_CONNECTING, C_WAIT_REPLY, C_WAIT_EOF, C_IDLE };

/* Where the response of an HTTP request has got to. */
enum http_phase { H_STATUS, H_FIELDS, H_BODY, H_BODY_TO_EOF };

/*
 * struct http_resp - the parse of one HTTP response, byte by byte, so a
 * response split anywhere across reads parses the same.
 * @line:      the current status or header line, cut at HTTP_LINE_MAX - 1
 *             bytes (only short ones matter: the status line,
 *             Content-Length, Connection, Transfer-Encoding).
 * @left:      body bytes still to come (H_BODY).
 * @close:     the connection ends after this response (Connection: close,
 *             or HTTP/1.0 without keep-alive, or a body up to the close).
 */
struct http_resp {
	enum http_phase phase;
	uint16_t status;
	bool have_length, close, bad;
	uint64_t left;
	uint32_t line_len;
	char line[HTTP_LINE_MAX];
};

/*
 * struct conn - one connection slot.
 * @prev, @next: the deadline list, or the idle list for C_IDLE. Every
 *          attempt (a request's arrival, or a retry) has the same patience
 *          and takes its connection when it starts, so start order is
 *          deadline order: the deadline list is kept in start order (a
 *          reused connection goes to its tail), its head expires first,
 *          and finishing unlinks in O(1).
 * @gen:    bumped on every reuse of the slot, carried in the epoll data, so
 *          an event for a closed connection cannot be taken for its
 *          successor.
 * @got:    bytes of "OK\n" matched so far (line protocol).
 * @second, @start_ns: start of the attempt the connection carries now
 *          (the arrival of a request, or the start of its retry).
 * @attempt: 0 for a request's first attempt, k for its k-th retry.
 * @requests: requests sent on this connection so far.
 * @resp:   --http: the parse of the current response.
 */
struct conn {
	int fd;
	enum conn_state state;
	uint32_t gen;
	uint32_t got;
	uint32_t second;
	uint32_t attempt;
	uint32_t src; /* the index of its source address (--sources) */
	uint32_t prev, next;
	uint64_t start_ns;
	uint64_t requests;
	struct http_resp resp;
};

struct second {
	uint64_t count[OUT_NR];
	uint64_t retries; /* retry attempts started in this second */
	uint64_t pending; /* started in this second and not finished */
};

/* A retry to start at @due_ns (the start of the run's clock), as attempt
 * @attempt of its request. */
struct retry {
	uint64_t due_ns;
	uint32_t attempt;
	uint32_t src; /* its request's source: a retry comes from the same */
};

static volatile sig_atomic_t stop;

static struct cfg cfg;
static struct conn *conns;
static uint32_t *free_stack;
static uint64_t free_top;
static uint32_t dl_head = NIL, dl_tail = NIL;
static uint32_t idle_head = NIL, idle_tail = NIL;
static uint64_t inflight; /* slots in use, idle connections included */
static uint64_t conns_opened; /* after the warm-up */
static struct second *seconds;
static uint64_t nseconds;
static uint64_t total[OUT_NR];
/* --sources: each source's address, and its attempts' outcomes (after the
 * warm-up), for --per-source. */
static union sa46 *srcs;
static uint64_t (*src_total)[OUT_NR];
static uint32_t next_src;

/* Source @i's address as text, into @buf (INET6_ADDRSTRLEN bytes). */
static void source_str(uint64_t i, char *buf)
{
	const void *a = cfg.family == AF_INET ? (const void *)&srcs[i].v4.sin_addr :
						(const void *)&srcs[i].v6.sin6_addr;

	if (!inet_ntop(cfg.family, a, buf, INET6_ADDRSTRLEN))
		strcpy(buf, "?");
}
static uint64_t hist[HIST_BUCKETS];
static int epfd = -1;
static bool warned_ports, warned_inflight, warned_fds, warned_retry_mem;
/* Retries are started only while this is true, and only those due before
 * offer_end_ns; the queue is in due order, as every retry waits the same
 * --retry-delay-ms after a failure and failures are seen in time order. */
static bool retries_open;
static uint64_t offer_end_ns;
static struct retry *rq;
static uint64_t rq_head, rq_len, rq_cap;
static uint64_t balance_micro; /* the retry budget's balance */
static uint64_t total_requests, total_retries, total_denied, total_late;

static void on_signal(int sig)
{
	if (stop < 2)
		stop++;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static unsigned int hist_index(uint64_t v)
{
	unsigned int e;

	if (v < HIST_SUB)
		return (unsigned int)v;
	e = 63 - (unsigned int)__builtin_clzll(v); /* >= HIST_SUB_BITS */
	return (e - HIST_SUB_BITS + 1) * HIST_SUB +
	       (unsigned int)((v >> (e - HIST_SUB_BITS)) - HIST_SUB);
}

/* The midpoint of bucket @i, in microseconds. */
static double hist_value(unsigned int i)
{
	unsigned int e, sub;
	uint64_t lo, width;

	if (i < HIST_SUB)
		return (double)i;
	e = i / HIST_SUB + HIST_SUB_BITS - 1;
	sub = i % HIST_SUB;
	lo = (uint64_t)(HIST_SUB + sub) << (e - HIST_SUB_BITS);
	width = (uint64_t)1 << (e - HIST_SUB_BITS);
	return (double)lo + (double)(width - 1) / 2.0;
}

/* Nearest rank: the smallest value with at least ceil(p * n) samples at or
 * below it; NAN without samples. In milliseconds. */
static double hist_percentile_ms(double p)
{
	uint64_t n = total[OUT_OK], rank, sum = 0;
	unsigned int i;

	if (!n)
		return NAN;
	rank = (uint64_t)ceil(p * (double)n);
	if (rank < 1)
		rank = 1;
	for (i = 0; i < HIST_BUCKETS; i++) {
		sum += hist[i];
		if (sum >= rank)
			return hist_value(i) / 1000.0;
	}
	return NAN; /* not reached: the buckets hold n samples */
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " --dst ADDR --port P --rate CONN_PER_SEC --duration SEC\n"
"       --patience-ms MS [--bind ADDR] [--poisson] [--max-inflight N]\n"
"       [--seed N] [--warmup W] [--retries N [--retry-delay-ms D]\n"
"       [--sources N [--source-prefix P]] [--per-source]\n"
"       [--retry-budget F]] [--http [--host NAME]\n"
"       [--requests-per-conn N]]\n"
"       " PROG " --phases SECS:RATE[,SECS:RATE...] (instead of --rate and\n"
"       --duration) ...\n"
"       " PROG " --help\n"
"\n"
"An open-loop client: it starts connections to ADDR:P at CONN_PER_SEC\n"
"(%g-%g, fractions allowed), evenly spaced, or with exponential gaps under\n"
"--poisson, whatever the server does, for SEC seconds (1-%llu). Each one\n"
"does a non-blocking connect (from --bind ADDR, same family as --dst, with\n"
"an ephemeral port), sends \"GET\\n\" and waits for \"OK\\n\" and the server's\n"
"close. Each has a deadline MS after its start (1-%llu):\n"
"  ok                \"OK\\n\" arrived before the deadline\n"
"  timeout_connect   not connected at the deadline (SYN unanswered)\n"
"  timeout_response  connected, no reply at the deadline\n"
"  refused           the connect got a RST (ECONNREFUSED)\n"
"  error             anything else: a reset or close before the reply, a\n"
"                    wrong reply, no free local port (EADDRNOTAVAIL), no\n"
"                    free descriptor, or --max-inflight reached\n"
"At the deadline it gives up with SO_LINGER {1, 0}: a RST, no TIME_WAIT.\n"
"After SEC it starts nothing more and waits for the ones in flight (at\n"
"most MS). SIGINT or SIGTERM end the offering early (a second one gives\n"
"up on the ones in flight).\n"
"\n"
"--max-inflight N   connections open at once, 1-%llu, default %llu; a start\n"
"                   beyond it counts as error. The open-file limit is\n"
"                   raised to N + %d; where it cannot be, the default\n"
"                   shrinks to fit (with a warning if the run may need\n"
"                   more).\n"
"--seed N           seed of the Poisson gaps (default: time and pid)\n"
"--warmup W         leave the requests that arrive in the first W seconds\n"
"                   (0 to SEC-1, default 0) out of the summary line; the\n"
"                   per-second lines still show them\n"
"--phases SECS:RATE[,SECS:RATE...]  a rate that changes: RATE (0, or\n"
"                   %g-%g, fractions allowed) for SECS seconds (1-%llu),\n"
"                   then the next phase's, up to %d phases; SEC is their\n"
"                   sum (1-%llu). It replaces --rate and --duration (not\n"
"                   with either). Each phase spaces its arrivals (or draws\n"
"                   their gaps, under --poisson) at its own RATE, the first\n"
"                   at its start; a phase of RATE 0 starts nothing.\n"
"\n"
"--retries N        an attempt that does not end ok (refused, timeouts,\n"
"                   error, bad_status) is retried on a new connection, up\n"
"                   to N more attempts per request (0-%llu, default 0). Each\n"
"                   attempt has its own deadline, MS after its own start,\n"
"                   and counts as offered in the second it starts.\n"
"--retry-delay-ms D a retry starts D ms after its attempt failed (0-%llu,\n"
"                   default 0). A retry due at or after the end of the\n"
"                   offering (SEC, or the signal that ends it) is not\n"
"                   started, and is counted neither as a retry nor as\n"
"                   denied.\n"
"--retry-budget F   a retry budget (0-%g, taken to 6 decimals): every\n"
"                   request's first attempt deposits F tokens, every retry\n"
"                   takes one whole token, and a failed attempt that finds\n"
"                   less than one is not retried (retries_denied). The\n"
"                   balance starts at 0 and is capped at one second's\n"
"                   deposits, max(1, F x the current phase's RATE), so a\n"
"                   calm spell cannot bank a storm. Retries never exceed\n"
"                   F x requests + 1 (over the whole run; the per-second\n"
"                   and summary counts of one stretch may carry up to the\n"
"                   cap more). Without it only N bounds the retries.\n"
"                   --retry-delay-ms and --retry-budget need N >= 1.\n"
"\n"
"--sources N        N source addresses (1-%llu, default 1, needs --bind when\n"
"                   more): source i is the --bind address + i x 2^(W - P)\n"
"                   (W 32 or 128), so each is in its own /P; a request's\n"
"                   first attempt takes the next source in turn, its\n"
"                   retries the same one. Every one must be bindable here\n"
"                   (an address of an interface, or inside a local route:\n"
"                   ip route add local PREFIX dev lo).\n"
"--source-prefix P  the sources' stride, 1-32 (IPv4) or 1-128 (IPv6),\n"
"                   default 32 or 128: consecutive addresses\n"
"--per-source       after the summary, one stdout line per source:\n"
"                   source=ADDR offered=N ok=N ... bad_status=N\n"
"--http             speak HTTP/1.1: each request is \"GET / HTTP/1.1\" with\n"
"                   \"Host: NAME\" (--host, default ADDR); the rate is one of\n"
"                   requests. A request is ok only on a 2xx status whose\n"
"                   whole body (Content-Length, or up to the close) arrived\n"
"                   within MS of the attempt's start (the request's\n"
"                   arrival, or its retry's start); another status is\n"
"                   bad_status (a late one is timeout_response); chunked\n"
"                   bodies are not supported (error).\n"
"--requests-per-conn N  with --http, keep-alive: a connection carries up\n"
"                   to N requests (1-%llu, default 1), one after another.\n"
"                   A request that arrives takes an idle connection (the\n"
"                   one idle the shortest) and otherwise opens a new one at\n"
"                   once: requests never wait for a connection, so the\n"
"                   arrivals stay open-loop and the connections opened\n"
"                   (connections=) grow with the load. The N-th request, and\n"
"                   every request when N is 1, asks \"Connection: close\",\n"
"                   so the server closes first; a connection the server\n"
"                   closes while idle is just let go. A request that gives\n"
"                   up takes its connection with it (RST).\n"
"\n"
"Local ports: every connection in flight holds one, up to about\n"
"CONN_PER_SEC * MS / 1000 at once. Widen the range in the client's network\n"
"namespace first, e.g.\n"
"  sysctl -w net.ipv4.ip_local_port_range=\"1024 65000\"\n"
"Running out shows as EADDRNOTAVAIL, counted as error with a warning.\n"
"\n"
"Every second stderr gets, for the attempts STARTED in second N (printed\n"
"once all of them are finished):\n"
"  t=N offered=N ok=N refused=N timeout_connect=N timeout_response=N error=N\n"
"  bad_status=N retries=N\n"
"At the end stdout gets one line:\n"
"  offered=N ok=N refused=N timeout_connect=N timeout_response=N error=N\n"
"  bad_status=N goodput_per_sec=X.X p50_ms=X p99_ms=X connections=N\n"
"  requests=N retries=N retries_denied=N retries_late=N\n"
"Counts are of attempts, a request's first one and each of its retries\n"
"(connections without --http): offered and the outcomes include the\n"
"retries, so a retry storm shows as offered load; retries= counts the\n"
"retry attempts started, requests= the first attempts, retries_denied= the\n"
"failed attempts that the budget did not let retry, retries_late= the\n"
"retries the requests still had when the run ended before they were due\n"
"(with --retries R and no budget, retries + retries_late = R x requests);\n"
"goodput_per_sec is ok / (SEC - W) (the seconds actually offered when\n"
"stopped early); p50/p99 are over the ok attempts' times from their start\n"
"to the whole reply, within 0.4 %%, and nan without any ok; connections is\n"
"the number of connections opened for them.\n"
"Exit: 0 done, 1 runtime error or interrupted, 2 usage error.\n",
		MIN_RATE, MAX_RATE, MAX_DURATION_S, MAX_PATIENCE_MS,
		MAX_INFLIGHT, DEFAULT_MAX_INFLIGHT, FD_SPARE,
		MIN_RATE, MAX_RATE, MAX_DURATION_S, MAX_PHASES, MAX_DURATION_S,
		MAX_RETRIES, MAX_RETRY_DELAY_MS, MAX_RETRY_BUDGET,
		MAX_SOURCES, MAX_REQUESTS_PER_CONN);
}

/* Fill @sa from @s with @port. Return: the family, or -1. */
static int parse_addr(const char *s, uint16_t port, void *sa)
{
	struct sockaddr_in *v4 = sa;
	struct sockaddr_in6 *v6 = sa;

	memset(sa, 0, sizeof(struct sockaddr_in6));
	if (inet_pton(AF_INET, s, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(port);
		return AF_INET;
	}
	if (inet_pton(AF_INET6, s, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(port);
		return AF_INET6;
	}
	return -1;
}

enum {
	OPT_DST = 256, OPT_PORT, OPT_RATE, OPT_DURATION, OPT_PATIENCE,
	OPT_BIND, OPT_POISSON, OPT_MAX_INFLIGHT, OPT_SEED, OPT_HTTP, OPT_HOST,
	OPT_REQUESTS_PER_CONN, OPT_WARMUP, OPT_PHASES, OPT_RETRIES,
	OPT_RETRY_DELAY, OPT_RETRY_BUDGET, OPT_SOURCES, OPT_SOURCE_PREFIX,
	OPT_PER_SOURCE, OPT_HELP,
};

static const struct option long_opts[] = {
	{ "dst", required_argument, NULL, OPT_DST },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "rate", required_argument, NULL, OPT_RATE },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "patience-ms", required_argument, NULL, OPT_PATIENCE },
	{ "bind", required_argument, NULL, OPT_BIND },
	{ "poisson", no_argument, NULL, OPT_POISSON },
	{ "max-inflight", required_argument, NULL, OPT_MAX_INFLIGHT },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "http", no_argument, NULL, OPT_HTTP },
	{ "host", required_argument, NULL, OPT_HOST },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "requests-per-conn", required_argument, NULL, OPT_REQUESTS_PER_CONN },
	{ "phases", required_argument, NULL, OPT_PHASES },
	{ "retries", required_argument, NULL, OPT_RETRIES },
	{ "retry-delay-ms", required_argument, NULL, OPT_RETRY_DELAY },
	{ "retry-budget", required_argument, NULL, OPT_RETRY_BUDGET },
	{ "sources", required_argument, NULL, OPT_SOURCES },
	{ "source-prefix", required_argument, NULL, OPT_SOURCE_PREFIX },
	{ "per-source", no_argument, NULL, OPT_PER_SOURCE },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* The two HTTP requests of --http. Return: 0, or -1 on a bad --host. */
static int build_requests(struct cfg *c)
{
	char host[HTTP_REQUEST_MAX / 2];
	int n;

	if (c->host) {
		if (!c->host[0] || strlen(c->host) >= sizeof(host) ||
		    strpbrk(c->host, " \t\r\n")) {
			fprintf(stderr, PROG ": --host: '%s' is not a host name\n",
				c->host);
			return -1;
		}
		snprintf(host, sizeof(host), "%s", c->host);
	} else if (c->family == AF_INET6) {
		snprintf(host, sizeof(host), "[%s]:%" PRIu64, c->dst_str, c->port);
	} else {
		snprintf(host, sizeof(host), "%s:%" PRIu64, c->dst_str, c->port);
	}
	n = snprintf(c->req_close, sizeof(c->req_close), "GET / HTTP/1.1\r\n"
		     "Host: %s\r\nConnection: close\r\n\r\n", host);
	c->req_close_len = (size_t)n;
	n = snprintf(c->req_keep, sizeof(c->req_keep), "GET / HTTP/1.1\r\n"
		     "Host: %s\r\n\r\n", host);
	c->req_keep_len = (size_t)n;
	return 0;
}

/* One phase of --phases, "SECS:RATE", at @item (@len bytes, no ','), the
 * @n-th (from 1). Return: 0, or -1 after saying what is wrong with it. */
static int parse_phase(const char *spec, const char *item, size_t len,
		       uint32_t n, struct phase *ph)
{
	char buf[64], *colon, *end;
	const char *why;

	if (len == 0) {
		why = "is empty";
		goto bad;
	}
	if (len >= sizeof(buf)) {
		why = "is too long for SECS:RATE";
		goto bad;
	}
	memcpy(buf, item, len);
	buf[len] = '\0';
	colon = strchr(buf, ':');
	if (!colon || strchr(colon + 1, ':')) {
		why = "is not SECS:RATE";
		goto bad;
	}
	*colon = '\0';
	errno = 0;
	ph->secs = strtoull(buf, &end, 10);
	if (buf[0] < '0' || buf[0] > '9' || *end || errno || ph->secs < 1 ||
	    ph->secs > MAX_DURATION_S) {
		why = "has SECS not an integer in [1, 3600]";
		goto bad;
	}
	/* As parse_double: plain decimal, no sign, hex, inf or nan. */
	errno = 0;
	ph->rate = strtod(colon + 1, &end);
	if (((colon[1] < '0' || colon[1] > '9') && colon[1] != '.') ||
	    strpbrk(colon + 1, "xX") || *end || errno ||
	    !(ph->rate == 0 || (ph->rate >= MIN_RATE && ph->rate <= MAX_RATE))) {
		why = "has RATE neither 0 nor a number in [0.01, 1e+06]";
		goto bad;
	}
	return 0;
bad:
	fprintf(stderr, PROG ": --phases: '%s': phase %" PRIu32 " ('%.*s') %s\n",
		spec, n, (int)(len < 64 ? len : 64), item, why);
	return -1;
}

/* --phases SECS:RATE[,SECS:RATE...] into @c. Return: 0, or -1 (printed). */
static int parse_phases(const char *spec, struct cfg *c)
{
	const char *p = spec;
	uint64_t sum = 0;

	if (strlen(spec) > PHASES_SPEC_MAX) {
		fprintf(stderr, PROG ": --phases: longer than %d characters\n",
			PHASES_SPEC_MAX);
		return -1;
	}
	c->nphases = 0;
	for (;;) {
		size_t len = strcspn(p, ",");

		if (c->nphases == MAX_PHASES) {
			fprintf(stderr, PROG ": --phases: '%s': more than %d "
				"phases\n", spec, MAX_PHASES);
			return -1;
		}
		if (parse_phase(spec, p, len, c->nphases + 1,
				&c->phases[c->nphases]))
			return -1;
		sum += c->phases[c->nphases].secs;
		c->nphases++;
		if (!p[len])
			break;
		p += len + 1;
	}
	if (sum > MAX_DURATION_S) {
		fprintf(stderr, PROG ": --phases: '%s': %" PRIu64 " seconds in "
			"all, more than %llu\n", spec, sum, MAX_DURATION_S);
		return -1;
	}
	c->duration_s = sum;
	return 0;
}

/* Add @i x 2^@shift to the big-endian @len-byte number @a. Return: the
 * carry out of its top (nonzero: past the end of the address space). */
static unsigned add_shifted(uint8_t *a, unsigned len, uint64_t i, unsigned shift)
{
	uint64_t carry = i << (shift % 8);
	int k;

	for (k = (int)len - 1 - (int)(shift / 8); k >= 0 && carry; k--) {
		carry += a[k];
		a[k] = (uint8_t)carry;
		carry >>= 8;
	}
	return carry ? 1 : 0;
}

/* The addresses of --sources from --bind (one: the --bind address, or
 * none). Return: 0, or -1 (printed). */
static int make_sources(struct cfg *c)
{
	unsigned width = c->family == AF_INET ? 32 : 128, len = width / 8;
	uint64_t i;

	if (c->nsources > 1 && !c->have_bind) {
		fprintf(stderr, PROG ": --sources %" PRIu64 " needs --bind, the "
			"first source's address\n", c->nsources);
		return -1;
	}
	if (!c->have_source_prefix)
		c->source_prefix = width;
	if (c->source_prefix > width) {
		fprintf(stderr, PROG ": --source-prefix %" PRIu64 ": an %s "
			"prefix is 1-%u bits\n", c->source_prefix,
			c->family == AF_INET ? "IPv4" : "IPv6", width);
		return -1;
	}
	srcs = calloc(c->nsources, sizeof(*srcs));
	src_total = calloc(c->nsources, sizeof(*src_total));
	if (!srcs || !src_total) {
		fprintf(stderr, PROG ": allocate %" PRIu64 " sources: %s\n",
			c->nsources, strerror(errno));
		return -1;
	}
	for (i = 0; i < c->nsources; i++) {
		uint8_t *a;

		srcs[i] = c->src;
		a = c->family == AF_INET ? (uint8_t *)&srcs[i].v4.sin_addr :
					   (uint8_t *)&srcs[i].v6.sin6_addr;
		if (add_shifted(a, len, i, width - (unsigned)c->source_prefix)) {
			fprintf(stderr, PROG ": --sources %" PRIu64 " from --bind "
				"%s in steps of a /%" PRIu64 " go past the end of "
				"the address space\n", c->nsources,
				c->bind_str, c->source_prefix);
			return -1;
		}
	}
	return 0;
}

/* Return: 0 to run, 1 after --help, -1 on a usage error (already printed). */
static int parse_args(int argc, char **argv, struct cfg *c)
{
	bool have_port = false, have_rate = false, have_duration = false;
	bool have_patience = false, have_seed = false, have_delay = false;
	double budget = 0;
	uint32_t k;
	int opt, fam;

	c->max_inflight = DEFAULT_MAX_INFLIGHT;
	c->requests_per_conn = 1;
	c->nsources = 1;
	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_DST:
			c->dst_str = optarg;
			break;
		case OPT_PORT:
			if (parse_u64("port", optarg, 1, 65535, &c->port))
				return -1;
			have_port = true;
			break;
		case OPT_RATE:
			if (parse_double("rate", optarg, MIN_RATE, MAX_RATE,
					 &c->rate))
				return -1;
			have_rate = true;
			break;
		case OPT_DURATION:
			if (parse_u64("duration", optarg, 1, MAX_DURATION_S,
				      &c->duration_s))
				return -1;
			have_duration = true;
			break;
		case OPT_PATIENCE:
			if (parse_u64("patience-ms", optarg, 1, MAX_PATIENCE_MS,
				      &c->patience_ms))
				return -1;
			have_patience = true;
			break;
		case OPT_BIND:
			c->bind_str = optarg;
			break;
		case OPT_POISSON:
			c->poisson = true;
			break;
		case OPT_MAX_INFLIGHT:
			if (parse_u64("max-inflight", optarg, 1, MAX_INFLIGHT,
				      &c->max_inflight))
				return -1;
			c->max_inflight_set = true;
			break;
		case OPT_SEED:
			if (parse_u64("seed", optarg, 0, UINT64_MAX, &c->seed))
				return -1;
			have_seed = true;
			break;
		case OPT_HTTP:
			c->http = true;
			break;
		case OPT_HOST:
			c->host = optarg;
			break;
		case OPT_WARMUP:
			if (parse_u64("warmup", optarg, 0, MAX_DURATION_S - 1,
				      &c->warmup_s))
				return -1;
			break;
		case OPT_REQUESTS_PER_CONN:
			if (parse_u64("requests-per-conn", optarg, 1,
				      MAX_REQUESTS_PER_CONN,
				      &c->requests_per_conn))
				return -1;
			break;
		case OPT_PHASES:
			c->phases_str = optarg;
			break;
		case OPT_RETRIES:
			if (parse_u64("retries", optarg, 0, MAX_RETRIES,
				      &c->retries))
				return -1;
			break;
		case OPT_RETRY_DELAY:
			if (parse_u64("retry-delay-ms", optarg, 0,
				      MAX_RETRY_DELAY_MS, &c->retry_delay_ms))
				return -1;
			have_delay = true;
			break;
		case OPT_RETRY_BUDGET:
			if (parse_double("retry-budget", optarg, 0,
					 MAX_RETRY_BUDGET, &budget))
				return -1;
			c->have_budget = true;
			break;
		case OPT_SOURCES:
			if (parse_u64("sources", optarg, 1, MAX_SOURCES,
				      &c->nsources))
				return -1;
			break;
		case OPT_SOURCE_PREFIX:
			if (parse_u64("source-prefix", optarg, 1, 128,
				      &c->source_prefix))
				return -1;
			c->have_source_prefix = true;
			break;
		case OPT_PER_SOURCE:
			c->per_source = true;
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
	if (c->phases_str && (have_rate || have_duration)) {
		fprintf(stderr, PROG ": --phases replaces --rate and --duration: "
			"give either --phases or both of them\n");
		return -1;
	}
	if (!c->dst_str || !have_port || !have_patience ||
	    (!c->phases_str && (!have_rate || !have_duration))) {
		fprintf(stderr, PROG ": --dst, --port, --rate, --duration (or "
			"--phases) and --patience-ms are required\n");
		return -1;
	}
	if (c->phases_str) {
		if (parse_phases(c->phases_str, c))
			return -1;
	} else {
		c->phases[0].secs = c->duration_s;
		c->phases[0].rate = c->rate;
		c->nphases = 1;
	}
	c->rate = 0;
	for (k = 0; k < c->nphases; k++)
		if (c->phases[k].rate > c->rate)
			c->rate = c->phases[k].rate;
	if (!c->retries && (have_delay || c->have_budget)) {
		fprintf(stderr, PROG ": --retry-delay-ms and --retry-budget need "
			"--retries 1 or more\n");
		return -1;
	}
	c->budget_micro = (uint64_t)llround(budget * (double)TOKEN_UNIT);
	c->family = parse_addr(c->dst_str, (uint16_t)c->port, &c->dst);
	if (c->family < 0) {
		fprintf(stderr, PROG ": --dst: '%s' is not an IPv4 or IPv6 "
			"address\n", c->dst_str);
		return -1;
	}
	c->addr_len = c->family == AF_INET ? sizeof(c->dst.v4) :
					     sizeof(c->dst.v6);
	if (c->bind_str) {
		fam = parse_addr(c->bind_str, 0, &c->src);
		if (fam < 0) {
			fprintf(stderr, PROG ": --bind: '%s' is not an IPv4 or "
				"IPv6 address\n", c->bind_str);
			return -1;
		}
		if (fam != c->family) {
			fprintf(stderr, PROG ": --bind %s and --dst %s are of "
				"different families\n", c->bind_str, c->dst_str);
			return -1;
		}
		c->have_bind = true;
	}
	if (make_sources(c))
		return -1;
	if (!have_seed)
		c->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (c->warmup_s >= c->duration_s) {
		fprintf(stderr, PROG ": --warmup %" PRIu64 " leaves nothing of "
			"--duration %" PRIu64 "\n", c->warmup_s, c->duration_s);
		return -1;
	}
	if (!c->http && (c->host || c->requests_per_conn > 1)) {
		fprintf(stderr, PROG ": --host and --requests-per-conn need "
			"--http\n");
		return -1;
	}
	if (c->http && build_requests(c))
		return -1;
	return 0;
}

/* Queue attempt @attempt of a request, due at @due. Return: false when
 * there is no memory for it. */
static bool rq_push(uint64_t due, uint32_t attempt, uint32_t src)
{
	if (rq_len == rq_cap) {
		uint64_t cap = rq_cap ? 2 * rq_cap : 1024, k;
		struct retry *n = malloc(cap * sizeof(*n));

		if (!n)
			return false;
		for (k = 0; k < rq_len; k++)
			n[k] = rq[(rq_head + k) % rq_cap];
		free(rq);
		rq = n;
		rq_cap = cap;
		rq_head = 0;
	}
	rq[(rq_head + rq_len) % rq_cap] = (struct retry){ due, attempt, src };
	rq_len++;
	return true;
}

/* The failure of attempt @attempt of a request, in @second: queue its
 * retry if --retries leaves one, the offering lasts until it is due and
 * the budget (if any) has a whole token for it. */
static void retry_after(uint32_t second, uint32_t attempt, uint32_t src)
{
	uint64_t due;

	if (attempt >= cfg.retries || !retries_open)
		return;
	due = now_ns() + cfg.retry_delay_ms * NSEC_PER_MSEC;
	if (due >= offer_end_ns) {
		/* Neither a retry nor denied: the retries this request had
		 * left, had the run gone on. */
		if (second >= cfg.warmup_s)
			total_late += cfg.retries - attempt;
		return;
	}
	if (cfg.have_budget) {
		if (balance_micro < TOKEN_UNIT) {
			if (second >= cfg.warmup_s)
				total_denied++;
			return;
		}
		balance_micro -= TOKEN_UNIT;
	}
	if (!rq_push(due, attempt + 1, src) && !warned_retry_mem) {
		warned_retry_mem = true;
		fprintf(stderr, PROG ": queue a retry: %s (not retried, "
			"warning once)\n", strerror(ENOMEM));
	}
}

/* Count @out for attempt @attempt of a request from source @src, started
 * in @second. */
static void record(uint32_t second, uint32_t attempt, uint32_t src,
		   enum outcome out)
{
	seconds[second].count[out]++;
	seconds[second].pending--;
	if (second >= cfg.warmup_s) {
		total[out]++;
		src_total[src][out]++;
	}
	if (out != OUT_OK)
		retry_after(second, attempt, src);
}

/* An ok request from source @src that arrived in @second took @ns. */
static void record_ok(uint32_t second, uint32_t src, uint64_t ns)
{
	record(second, 0, src, OUT_OK);
	if (second >= cfg.warmup_s)
		hist[hist_index(ns / NSEC_PER_USEC)]++;
}

static void warn_once(bool *warned, const char *what, int err,
		      const char *advice)
{
	if (*warned)
		return;
	*warned = true;
	fprintf(stderr, PROG ": %s: %s (%s; counted as error, warning once)\n",
		what, strerror(err), advice);
}

static void list_del(uint32_t i, uint32_t *head, uint32_t *tail)
{
	struct conn *c = &conns[i];

	if (c->prev != NIL)
		conns[c->prev].next = c->next;
	else
		*head = c->next;
	if (c->next != NIL)
		conns[c->next].prev = c->prev;
	else
		*tail = c->prev;
	c->prev = c->next = NIL;
}

static void list_add_tail(uint32_t i, uint32_t *head, uint32_t *tail)
{
	struct conn *c = &conns[i];

	c->prev = *tail;
	c->next = NIL;
	if (*tail != NIL)
		conns[*tail].next = i;
	else
		*head = i;
	*tail = i;
}

/* Close slot @i and put it back; @rst: abort with a RST, no TIME_WAIT. */
static void release(uint32_t i, bool rst)
{
	struct conn *c = &conns[i];

	if (rst) {
		struct linger lg = { .l_onoff = 1, .l_linger = 0 };

		/* Cannot fail on a TCP socket; if it did, a FIN is fine. */
		setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	}
	close(c->fd); /* also leaves the epoll set */
	c->fd = -1;
	if (c->state == C_IDLE)
		list_del(i, &idle_head, &idle_tail);
	else
		list_del(i, &dl_head, &dl_tail);
	c->state = C_FREE;
	free_stack[free_top++] = i;
	inflight--;
}

static bool is_port_shortage(int err)
{
	/* EADDRNOTAVAIL: no free local port for this destination; EAGAIN is
	 * how older kernels said the same for connect(). */
	return err == EADDRNOTAVAIL || err == EAGAIN;
}

static void watch(uint32_t i, uint32_t events, int op)
{
	struct epoll_event ev = {
		.events = events,
		.data.u64 = ((uint64_t)conns[i].gen << 32) | i,
	};

	/* Fails only for lack of memory; the deadline still ends the slot. */
	if (epoll_ctl(epfd, op, conns[i].fd, &ev))
		fprintf(stderr, PROG ": watch a connection: %s\n",
			strerror(errno));
}

/* Connected, or an idle connection taken: send the request and wait for
 * the reply. Return: false when the slot was finished here. */
static bool send_request(uint32_t i)
{
	struct conn *c = &conns[i];
	const char *req = request;
	size_t len = sizeof(request) - 1;
	ssize_t n;

	c->requests++;
	if (cfg.http) {
		bool last = c->requests >= cfg.requests_per_conn;

		req = last ? cfg.req_close : cfg.req_keep;
		len = last ? cfg.req_close_len : cfg.req_keep_len;
		memset(&c->resp, 0, sizeof(c->resp));
		c->resp.phase = H_STATUS;
	}
	/* A few hundred bytes into an empty send buffer (a fresh connection,
	 * or one whose last response was read whole): never partial. */
	n = send(c->fd, req, len, MSG_NOSIGNAL);
	if (n != (ssize_t)len) {
		record(c->second, c->attempt, c->src, OUT_ERROR);
		release(i, true);
		return false;
	}
	c->state = C_WAIT_REPLY;
	return true;
}

/* Whether idle connection @i can take a request: the server may have
 * closed it (or sent junk) since, and the event is not read yet. */
static bool idle_usable(uint32_t i)
{
	char b;
	ssize_t n = recv(conns[i].fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* A request arrived: give it an idle keep-alive connection if one is
 * usable. Return: true when it was given one (and sent, or finished). */
static bool reuse_idle(uint64_t now, uint32_t sec)
{
	while (idle_tail != NIL) {
		uint32_t i = idle_tail;
		struct conn *c = &conns[i];

		if (!idle_usable(i)) {
			release(i, false);
			continue;
		}
		list_del(i, &idle_head, &idle_tail);
		c->second = sec;
		c->attempt = 0;
		c->start_ns = now;
		c->state = C_WAIT_REPLY; /* on the deadline list from now */
		list_add_tail(i, &dl_head, &dl_tail);
		send_request(i);
		return true;
	}
	return false;
}

/* Let go of every idle connection: nothing more will be offered. */
static void close_idle(void)
{
	while (idle_head != NIL)
		release(idle_head, false);
}

/* Start attempt @attempt of a request in second @sec: a first attempt
 * on an idle connection, or a new one from the next source in turn; a
 * retry always on a new one, from its request's source @src. */
static void start_request(uint64_t now, uint32_t sec, uint32_t attempt,
			  uint32_t src)
{
	struct conn *c;
	uint32_t i;
	int fd, one = 1;

	if (!attempt) {
		src = next_src;
		next_src = (uint32_t)((next_src + 1) % cfg.nsources);
	}

	seconds[sec].pending++;
	if (attempt) {
		seconds[sec].retries++;
		if (sec >= cfg.warmup_s)
			total_retries++;
	} else if (sec >= cfg.warmup_s) {
		total_requests++;
	}
	if (!attempt && reuse_idle(now, sec))
		return;
	if (!free_top) {
		if (!warned_inflight) {
			warned_inflight = true;
			fprintf(stderr, PROG ": --max-inflight %" PRIu64 " reached"
				" (counted as error, warning once)\n",
				cfg.max_inflight);
		}
		record(sec, attempt, src, OUT_ERROR);
		return;
	}
	fd = socket(cfg.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		warn_once(&warned_fds, "open a socket", errno,
			  "out of descriptors or memory");
		record(sec, attempt, src, OUT_ERROR);
		return;
	}
	if (cfg.have_bind) {
		/* Take the port at connect(), not at bind(): then a port is
		 * only unique per destination, and the range goes further.
		 * An IP-level option, honoured by IPv6 sockets too; without
		 * it bind() takes the port, which only narrows the range. */
		setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one,
			   sizeof(one));
		if (bind(fd, (const struct sockaddr *)&srcs[src], cfg.addr_len)) {
			warn_once(&warned_ports, "bind --bind address", errno,
				  "widen net.ipv4.ip_local_port_range");
			close(fd);
			record(sec, attempt, src, OUT_ERROR);
			return;
		}
	}

	i = free_stack[--free_top];
	c = &conns[i];
	c->fd = fd;
	c->gen++;
	c->got = 0;
	c->requests = 0;
	c->second = sec;
	c->attempt = attempt;
	c->src = src;
	c->start_ns = now;
	c->state = C_CONNECTING;
	list_add_tail(i, &dl_head, &dl_tail);
	inflight++;
	if (sec >= cfg.warmup_s)
		conns_opened++;

	if (connect(fd, (const struct sockaddr *)&cfg.dst, cfg.addr_len) == 0) {
		if (send_request(i))
			watch(i, EPOLLIN, EPOLL_CTL_ADD);
		return;
	}
	if (errno == EINPROGRESS) {
		watch(i, EPOLLOUT, EPOLL_CTL_ADD);
		return;
	}
	if (errno == ECONNREFUSED) {
		record(sec, attempt, src, OUT_REFUSED);
	} else {
		if (is_port_shortage(errno))
			warn_once(&warned_ports, "connect: no free local port",
				  errno, "widen net.ipv4.ip_local_port_range");
		record(sec, attempt, src, OUT_ERROR);
	}
	release(i, false);
}

/* Trim blanks at both ends of @s in place. */
static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = '\0';
	return s;
}

/* One whole line of the response head (no line end) in @r->line. */
static void http_line(struct http_resp *r)
{
	char *l = r->line, *colon, *val;

	if (r->phase == H_STATUS) {
		/* "HTTP/1.x SSS reason": only the version and the code. */
		if (strncmp(l, "HTTP/1.", 7) || (l[7] != '0' && l[7] != '1') ||
		    l[8] != ' ' || l[9] < '1' || l[9] > '5' || l[10] < '0' ||
		    l[10] > '9' || l[11] < '0' || l[11] > '9' ||
		    (l[12] != ' ' && l[12] != '\0')) {
			r->bad = true;
			return;
		}
		r->status = (uint16_t)((l[9] - '0') * 100 + (l[10] - '0') * 10 +
				       (l[11] - '0'));
		r->close = l[7] == '0'; /* HTTP/1.0 closes unless told */
		r->phase = H_FIELDS;
		return;
	}
	if (!l[0]) { /* the end of the head */
		if (r->status < 200) { /* 1xx: the real status follows */
			r->phase = H_STATUS;
		} else if (r->status == 204 || r->status == 304) {
			r->phase = H_BODY;
			r->left = 0;
		} else if (r->have_length) {
			r->phase = H_BODY;
		} else {
			r->phase = H_BODY_TO_EOF;
			r->close = true;
		}
		return;
	}
	colon = strchr(l, ':');
	if (!colon)
		return; /* not a field; ignored */
	*colon = '\0';
	val = trim(colon + 1);
	if (!strcasecmp(l, "content-length")) {
		char *end;

		errno = 0;
		r->left = strtoull(val, &end, 10);
		if (val[0] < '0' || val[0] > '9' || *end || errno)
			r->bad = true;
		r->have_length = true;
	} else if (!strcasecmp(l, "connection")) {
		if (strcasestr(val, "close"))
			r->close = true;
		else if (strcasestr(val, "keep-alive"))
			r->close = false;
	} else if (!strcasecmp(l, "transfer-encoding")) {
		if (strcasecmp(val, "identity"))
			r->bad = true; /* chunked: not supported */
	}
}

/* Feed @n bytes of the response to @r. Return: how many were used, up to
 * the end of the response; *@done when it is whole (a body up to the
 * close is whole only at the EOF). */
static size_t http_feed(struct http_resp *r, const char *buf, size_t n,
			bool *done)
{
	size_t k = 0;

	*done = false;
	while (k < n && !r->bad) {
		if (r->phase == H_BODY_TO_EOF)
			return n;
		if (r->phase == H_BODY) {
			size_t take = r->left < n - k ? (size_t)r->left : n - k;

			r->left -= take;
			k += take;
			if (!r->left) {
				*done = true;
				return k;
			}
			continue;
		}
		if (buf[k] == '\n') {
			if (r->line_len && r->line[r->line_len - 1] == '\r')
				r->line_len--;
			r->line[r->line_len] = '\0';
			r->line_len = 0;
			http_line(r);
			k++;
			if (r->phase == H_BODY && !r->left) {
				*done = true;
				return k;
			}
			continue;
		}
		if (r->line_len < HTTP_LINE_MAX - 1)
			r->line[r->line_len++] = buf[k];
		k++;
	}
	return k;
}

/* The HTTP response of connection @i is whole (@eof: it ended with the
 * connection). Count it, then keep the connection or let it go. */
static void http_done(uint32_t i, uint64_t now, bool eof)
{
	struct conn *c = &conns[i];

	/* The deadline is checked after the events, so a reply read in the
	 * same turn could be a little late: late is not ok. */
	if (now - c->start_ns > cfg.patience_ms * NSEC_PER_MSEC) {
		record(c->second, c->attempt, c->src, OUT_TIMEOUT_RESPONSE);
		release(i, true);
		return;
	}
	if (c->resp.status / 100 == 2) {
		record_ok(c->second, c->src, now - c->start_ns);
	} else {
		record(c->second, c->attempt, c->src, OUT_BAD_STATUS);
	}
	if (eof) {
		release(i, false);
		return;
	}
	if (c->resp.close || c->requests >= cfg.requests_per_conn) {
		char b;

		/* We asked for the close (or the server announced it): wait
		 * for its FIN, so the server closes first. */
		c->state = C_WAIT_EOF;
		if (recv(c->fd, &b, 1, MSG_DONTWAIT) == 0)
			release(i, false);
		return;
	}
	list_del(i, &dl_head, &dl_tail);
	c->state = C_IDLE;
	list_add_tail(i, &idle_head, &idle_tail);
}

/* Bytes (or the end) of the response on connection @i. */
static void on_http_data(uint32_t i, const char *buf, ssize_t n, uint64_t now)
{
	struct conn *c = &conns[i];
	size_t used;
	bool done;

	if (n == 0 && c->resp.phase == H_BODY_TO_EOF) {
		http_done(i, now, true);
		return;
	}
	if (n <= 0) { /* reset or closed before the whole reply */
		record(c->second, c->attempt, c->src, OUT_ERROR);
		release(i, true);
		return;
	}
	used = http_feed(&c->resp, buf, (size_t)n, &done);
	if (c->resp.bad) {
		record(c->second, c->attempt, c->src, OUT_ERROR);
		release(i, true);
		return;
	}
	if (!done)
		return;
	if (used < (size_t)n)
		c->resp.close = true; /* bytes nobody asked for: do not reuse */
	http_done(i, now, false);
}

static void on_event(uint64_t data, uint64_t now)
{
	uint32_t i = (uint32_t)data;
	struct conn *c = &conns[i];
	char buf[4096];
	ssize_t n;
	int err = 0;
	socklen_t len = sizeof(err);

	if (c->state == C_FREE || c->gen != (uint32_t)(data >> 32))
		return; /* finished earlier in this batch */

	if (c->state == C_CONNECTING) {
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len))
			err = errno;
		if (err == EINPROGRESS || err == EALREADY)
			return;
		if (err) {
			record(c->second, c->attempt, c->src,
			       err == ECONNREFUSED ? OUT_REFUSED : OUT_ERROR);
			release(i, false);
			return;
		}
		if (send_request(i))
			watch(i, EPOLLIN, EPOLL_CTL_MOD);
		return;
	}

	n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (c->state == C_IDLE) {
		/* Closed, reset or junk between requests: let it go; no
		 * request is on it. */
		release(i, n != 0);
		return;
	}
	if (c->state == C_WAIT_EOF) {
		/* After the reply: wait for the server's FIN so it is the
		 * server that closes first; trailing bytes are ignored. */
		if (n <= 0)
			release(i, n < 0);
		return;
	}
	if (cfg.http) {
		on_http_data(i, buf, n, now);
		return;
	}
	if (n <= 0) { /* reset or closed before the reply */
		record(c->second, c->attempt, c->src, OUT_ERROR);
		release(i, true);
		return;
	}
	for (ssize_t k = 0; k < n && c->got < sizeof(reply) - 1; k++) {
		if (buf[k] != reply[c->got]) {
			record(c->second, c->attempt, c->src, OUT_ERROR);
			release(i, true);
			return;
		}
		c->got++;
	}
	if (c->got < sizeof(reply) - 1)
		return;
	/* The deadline is checked after the events, so a reply read in the
	 * same turn could be a little late: late is not ok. */
	if (now - c->start_ns > cfg.patience_ms * NSEC_PER_MSEC) {
		record(c->second, c->attempt, c->src, OUT_TIMEOUT_RESPONSE);
		release(i, true);
		return;
	}
	record_ok(c->second, c->src, now - c->start_ns);
	c->state = C_WAIT_EOF;
	/* The FIN usually came with the reply: take it now. */
	if (recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT) == 0)
		release(i, false);
}

/* Give up on every connection whose deadline is at or before @t. */
static void expire(uint64_t t)
{
	uint64_t patience_ns = cfg.patience_ms * NSEC_PER_MSEC;

	while (dl_head != NIL && conns[dl_head].start_ns + patience_ns <= t) {
		uint32_t i = dl_head;
		struct conn *c = &conns[i];

		if (c->state == C_CONNECTING)
			record(c->second, c->attempt, c->src, OUT_TIMEOUT_CONNECT);
		else if (c->state == C_WAIT_REPLY)
			record(c->second, c->attempt, c->src, OUT_TIMEOUT_RESPONSE);
		/* C_WAIT_EOF: counted ok already; just let go. */
		release(i, true);
	}
}

/* One fprintf per line: stderr is unbuffered, and a reader of a pipe
 * should get whole lines. */
static void print_second(uint64_t k)
{
	const uint64_t *n = seconds[k].count;

	fprintf(stderr, "t=%" PRIu64 " offered=%" PRIu64 " ok=%" PRIu64
		" refused=%" PRIu64 " timeout_connect=%" PRIu64
		" timeout_response=%" PRIu64 " error=%" PRIu64 " bad_status=%"
		PRIu64 " retries=%" PRIu64 "\n", k + 1,
		n[OUT_OK] + n[OUT_REFUSED] + n[OUT_TIMEOUT_CONNECT] +
		n[OUT_TIMEOUT_RESPONSE] + n[OUT_ERROR] + n[OUT_BAD_STATUS],
		n[OUT_OK], n[OUT_REFUSED], n[OUT_TIMEOUT_CONNECT],
		n[OUT_TIMEOUT_RESPONSE], n[OUT_ERROR], n[OUT_BAD_STATUS],
		seconds[k].retries);
}

/* Make room for --max-inflight connections. Without CAP_SYS_RESOURCE the
 * hard limit stays: the default --max-inflight then shrinks to fit, with a
 * warning; one given explicitly is an error. */
/* The one line on stdout; goodput over @offered_s seconds. */
static void print_summary(double offered_s)
{
	uint64_t offered = 0;
	int o;

	for (o = 0; o < OUT_NR; o++)
		offered += total[o];
	printf("offered=%" PRIu64, offered);
	for (o = 0; o < OUT_NR; o++)
		printf(" %s=%" PRIu64, outcome_name[o], total[o]);
	printf(" goodput_per_sec=%.1f p50_ms=%.2f p99_ms=%.2f connections=%"
	       PRIu64 " requests=%" PRIu64 " retries=%" PRIu64
	       " retries_denied=%" PRIu64 " retries_late=%" PRIu64 "\n",
	       offered_s > 0 ? (double)total[OUT_OK] / offered_s : 0.0,
	       hist_percentile_ms(0.50), hist_percentile_ms(0.99),
	       conns_opened, total_requests, total_retries, total_denied, total_late);
	if (!cfg.per_source)
		return;
	for (uint64_t i = 0; i < cfg.nsources; i++) {
		char a[INET6_ADDRSTRLEN] = "any";

		offered = 0;
		for (o = 0; o < OUT_NR; o++)
			offered += src_total[i][o];
		if (cfg.have_bind)
			source_str(i, a);
		printf("source=%s offered=%" PRIu64, a, offered);
		for (o = 0; o < OUT_NR; o++)
			printf(" %s=%" PRIu64, outcome_name[o], src_total[i][o]);
		printf("\n");
	}
}

/* The connections in flight at the highest rate, at most: every attempt
 * takes its whole patience, and a request makes at most 1 + N attempts,
 * or 1 + F on average under a budget. */
static double inflight_wanted(void)
{
	double per_request = 1.0 + (double)cfg.retries;
	double budget = (double)cfg.budget_micro / (double)TOKEN_UNIT;

	if (cfg.have_budget && 1.0 + budget < per_request)
		per_request = 1.0 + budget;
	return cfg.rate * per_request * (double)cfg.patience_ms / 1000.0;
}

static int raise_fd_limit(bool explicit_max)
{
	uint64_t need = cfg.max_inflight + FD_SPARE;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, PROG ": read the open-file limit: %s\n",
			strerror(errno));
		return -1;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) {
		rl.rlim_cur = need;
	} else {
		struct rlimit more = { .rlim_cur = need, .rlim_max = need };

		if (!setrlimit(RLIMIT_NOFILE, &more))
			return 0;
		if (explicit_max || rl.rlim_max <= 2 * FD_SPARE) {
			fprintf(stderr, PROG ": raise the open-file limit to %"
				PRIu64 ": %s (hard limit %llu; lower "
				"--max-inflight)\n", need, strerror(errno),
				(unsigned long long)rl.rlim_max);
			return -1;
		}
		cfg.max_inflight = rl.rlim_max - FD_SPARE;
		/* Quiet unless this run may want more than that. */
		if (inflight_wanted() >= (double)cfg.max_inflight)
			fprintf(stderr, PROG ": warning: open-file hard limit "
				"%llu (cannot raise it: %s); --max-inflight is %"
				PRIu64 "\n", (unsigned long long)rl.rlim_max,
				strerror(errno), cfg.max_inflight);
		rl.rlim_cur = rl.rlim_max;
	}
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, PROG ": raise the open-file limit to %llu: %s\n",
			(unsigned long long)rl.rlim_cur, strerror(errno));
		return -1;
	}
	return 0;
}

/* Fail now, not once per connection, when a --bind or --sources address
 * is not local. */
static int check_bind(void)
{
	uint64_t i;
	int fd, err;

	if (!cfg.have_bind)
		return 0;
	fd = socket(cfg.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, PROG ": open a socket: %s\n", strerror(errno));
		return -1;
	}
	for (i = 0; i < cfg.nsources; i++) {
		err = bind(fd, (const struct sockaddr *)&srcs[i], cfg.addr_len) ?
		      errno : 0;
		close(fd);
		if (err) {
			char a[INET6_ADDRSTRLEN];

			source_str(i, a);
			fprintf(stderr, PROG ": bind %s%s: %s%s\n", a,
				cfg.nsources > 1 ? " (of --sources)" : "",
				strerror(err), err == EADDRNOTAVAIL ? " (is it on an "
				"interface here, or in a local route?)" : "");
			return -1;
		}
		/* A socket binds once: the next one on a new socket. */
		if (i + 1 < cfg.nsources) {
			fd = socket(cfg.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
			if (fd < 0) {
				fprintf(stderr, PROG ": open a socket: %s\n",
					strerror(errno));
				return -1;
			}
		}
	}
	return 0;
}

/* Warn when the local port range is narrower than the expected number of
 * connections in flight; the run still goes, the shortage is counted. */
static void check_port_range(void)
{
	double want = inflight_wanted();
	unsigned long lo, hi;
	FILE *f;

	f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
	if (!f)
		return;
	if (fscanf(f, "%lu %lu", &lo, &hi) == 2 && hi >= lo &&
	    (double)(hi - lo + 1) < want)
		fprintf(stderr, PROG ": warning: net.ipv4.ip_local_port_range "
			"%lu-%lu has %lu ports, fewer than the up to %.0f "
			"connections in flight; widen it\n", lo, hi,
			hi - lo + 1, want);
	fclose(f);
}

static int wait_events(struct epoll_event *evs, uint64_t until, uint64_t now)
{
	uint64_t d = until > now ? until - now : 0;
	struct timespec ts = {
		.tv_sec = (time_t)(d / NSEC_PER_SEC),
		.tv_nsec = (long)(d % NSEC_PER_SEC),
	};
	int n;

	n = epoll_pwait2(epfd, evs, EVENT_BATCH, &ts, NULL);
	if (n < 0 && errno == ENOSYS) /* before Linux 5.11: ms are enough */
		n = epoll_wait(epfd, evs, EVENT_BATCH,
			       (int)((d + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC));
	return n;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * struct arrivals - where the arrivals of the phases have got to.
 * @phase:   the phase of @next_at (cfg.nphases when none is left).
 * @n:       arrivals of this phase started so far.
 * @base_ns, @end_ns: the phase's start and end on the run's clock.
 * @gap_ns:  its mean gap, 1 s / RATE.
 * @next_at: the next arrival; the run's end when none is left.
 */
struct arrivals {
	uint32_t phase;
	uint64_t n;
	uint64_t base_ns, end_ns;
	double gap_ns;
	uint64_t next_at;
};

/* Enter phase @p, or the first after it that starts anything; its first
 * arrival is at its start. */
static void phase_enter(struct arrivals *a, uint32_t p, uint64_t start,
			uint64_t end)
{
	uint64_t off = 0;
	uint32_t k;

	for (k = 0; k < p; k++)
		off += cfg.phases[k].secs;
	for (; p < cfg.nphases && cfg.phases[p].rate == 0; p++)
		off += cfg.phases[p].secs;
	a->phase = p;
	a->n = 0;
	if (p == cfg.nphases) {
		a->next_at = end;
		return;
	}
	a->base_ns = start + off * NSEC_PER_SEC;
	a->end_ns = a->base_ns + cfg.phases[p].secs * NSEC_PER_SEC;
	a->gap_ns = (double)NSEC_PER_SEC / cfg.phases[p].rate;
	a->next_at = a->base_ns;
}

/* The arrival at @a->next_at was started: the next one, evenly spaced in
 * its phase or after an exponential gap, or the next phase's first. */
static void arrival_next(struct arrivals *a, uint64_t *rng, uint64_t start,
			 uint64_t end)
{
	a->n++;
	if (cfg.poisson)
		a->next_at += (uint64_t)(-a->gap_ns * log(rng_unit_open(rng)));
	else
		a->next_at = a->base_ns + (uint64_t)((double)a->n * a->gap_ns);
	if (a->next_at >= a->end_ns)
		phase_enter(a, a->phase + 1, start, end);
}

/* A request of phase @p arrived: its deposit into the retry budget, up to
 * one second's deposits at the phase's rate (at least one token). */
static void budget_deposit(uint32_t p)
{
	double cap_d = (double)cfg.budget_micro * cfg.phases[p].rate;
	uint64_t cap = cap_d > (double)TOKEN_UNIT ? (uint64_t)cap_d : TOKEN_UNIT;

	if (!cfg.have_budget)
		return;
	balance_micro += cfg.budget_micro;
	if (balance_micro > cap)
		balance_micro = cap;
}

/* Whether second @k may be reported: none of its attempts pending, and no
 * start to come that would count in it (an arrival, or a retry due, in
 * it; after the offering's last arrival, only queued retries start). */
static bool second_done(uint64_t k, uint64_t now, uint64_t start,
			bool offering, uint64_t next_at)
{
	uint64_t sec_end = start + (k + 1) * NSEC_PER_SEC;

	if (seconds[k].pending)
		return false;
	if (!offering && !rq_len)
		return true;
	return now >= sec_end && (!offering || next_at >= sec_end) &&
	       (!rq_len || rq[rq_head].due_ns >= sec_end);
}

int main(int argc, char **argv)
{
	uint64_t start, end, reported = 0, rng;
	uint64_t patience_ns, max_lag = 0;
	struct arrivals arr;
	struct epoll_event *evs = NULL;
	struct sigaction sa;
	bool offering = true, cut_short = false, gave_up = false;
	int ret = 1, r;
	uint64_t i;

	r = parse_args(argc, argv, &cfg);
	if (r)
		return r > 0 ? 0 : 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (raise_fd_limit(cfg.max_inflight_set) || check_bind())
		return 1;
	check_port_range();
	nseconds = cfg.duration_s;
	conns = calloc(cfg.max_inflight, sizeof(*conns));
	free_stack = calloc(cfg.max_inflight, sizeof(*free_stack));
	seconds = calloc(nseconds, sizeof(*seconds));
	evs = calloc(EVENT_BATCH, sizeof(*evs));
	if (!conns || !free_stack || !seconds || !evs) {
		fprintf(stderr, PROG ": allocate connection table: %s\n",
			strerror(errno));
		goto out;
	}
	for (i = 0; i < cfg.max_inflight; i++) {
		conns[i].fd = -1;
		/* Lowest slot on top: a short run touches few pages. */
		free_stack[i] = (uint32_t)(cfg.max_inflight - 1 - i);
	}
	free_top = cfg.max_inflight;
	epfd = epoll_create1(EPOLL_CLOEXEC);
	if (epfd < 0) {
		fprintf(stderr, PROG ": create epoll: %s\n", strerror(errno));
		goto out;
	}

	rng = cfg.seed;
	patience_ns = cfg.patience_ms * NSEC_PER_MSEC;
	if (cfg.phases_str)
		fprintf(stderr, PROG ": dst %s port %" PRIu64 " phases=%s%s "
			"duration=%" PRIu64, cfg.dst_str, cfg.port,
			cfg.phases_str, cfg.poisson ? " (poisson)" : "",
			cfg.duration_s);
	else
		fprintf(stderr, PROG ": dst %s port %" PRIu64 " rate=%g%s "
			"duration=%" PRIu64, cfg.dst_str, cfg.port, cfg.rate,
			cfg.poisson ? " (poisson)" : "", cfg.duration_s);
	if (cfg.retries && cfg.have_budget)
		fprintf(stderr, " retries=%" PRIu64 " retry_delay_ms=%" PRIu64
			" retry_budget=%.6f", cfg.retries, cfg.retry_delay_ms,
			(double)cfg.budget_micro / (double)TOKEN_UNIT);
	else if (cfg.retries)
		fprintf(stderr, " retries=%" PRIu64 " retry_delay_ms=%" PRIu64,
			cfg.retries, cfg.retry_delay_ms);
	fprintf(stderr, " patience_ms=%" PRIu64 " bind=%s seed=%" PRIu64 "\n",
		cfg.patience_ms, cfg.bind_str ? cfg.bind_str : "any", cfg.seed);

	start = now_ns();
	end = start + cfg.duration_s * NSEC_PER_SEC;
	offer_end_ns = end; /* unless a signal cuts it short */
	retries_open = cfg.retries > 0;
	phase_enter(&arr, 0, start, end);
	for (;;) {
		uint64_t now = now_ns(), until;
		int n, burst = 0, e;

		/* A signal ends the offering: the arrivals, and the retries
		 * that could still start before its end. */
		if (stop && (offering || (retries_open && now < end))) {
			offering = false;
			retries_open = false;
			rq_len = 0; /* due after the new end: not started */
			cut_short = true;
			offer_end_ns = now;
			/* The seconds not yet begun are not reported. */
			nseconds = (now - start + NSEC_PER_SEC - 1) / NSEC_PER_SEC;
		}
		if (stop >= 2 && inflight) {
			gave_up = true;
			expire(UINT64_MAX);
		}
		/* The retries due, each counted in the second it was due. */
		while (rq_len && rq[rq_head].due_ns <= now &&
		       burst < START_BATCH) {
			struct retry due = rq[rq_head];

			rq_head = (rq_head + 1) % rq_cap;
			rq_len--;
			start_request(now, (uint32_t)((due.due_ns - start) /
						   NSEC_PER_SEC), due.attempt, due.src);
			burst++;
		}
		while (offering && arr.next_at <= now && burst < START_BATCH) {
			if (arr.next_at >= end) {
				offering = false;
				break;
			}
			if (now - arr.next_at > max_lag)
				max_lag = now - arr.next_at;
			budget_deposit(arr.phase);
			start_request(now, (uint32_t)((arr.next_at - start) /
						   NSEC_PER_SEC), 0, 0);
			burst++;
			arrival_next(&arr, &rng, start, end);
		}
		if (offering && arr.next_at >= end)
			offering = false;
		if (!offering)
			close_idle();
		expire(now);
		while (reported < nseconds &&
		       second_done(reported, now, start, offering, arr.next_at))
			print_second(reported++);
		if (!offering && !inflight && !rq_len && reported >= nseconds)
			break;

		/* Sleep until the next start, retry, deadline or report
		 * second. */
		until = UINT64_MAX;
		if (offering)
			until = burst == START_BATCH ? now : arr.next_at;
		if (rq_len)
			until = min_u64(until, rq[rq_head].due_ns);
		if (dl_head != NIL)
			until = min_u64(until, conns[dl_head].start_ns +
					       patience_ns);
		/* A second is reported once it is over and none of its
		 * connections is pending: wake at its end, but not again and
		 * again while connections of it are still pending (they end
		 * by an event or a deadline, both waited for here). */
		if (reported < nseconds &&
		    start + (reported + 1) * NSEC_PER_SEC > now)
			until = min_u64(until, start + (reported + 1) *
						       NSEC_PER_SEC);
		if (until == UINT64_MAX) /* only finished seconds left */
			until = now;
		n = wait_events(evs, until, now);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, PROG ": wait for events: %s\n",
				strerror(errno));
			goto out;
		}
		now = now_ns();
		for (e = 0; e < n; e++)
			on_event(evs[e].data.u64, now);
	}

	print_summary((cut_short ? (double)(offer_end_ns - start) /
				   (double)NSEC_PER_SEC : (double)cfg.duration_s) -
		      (double)cfg.warmup_s);
	fprintf(stderr, PROG ": max_start_lag_ms=%.2f\n",
		(double)max_lag / (double)NSEC_PER_MSEC);
	if (cut_short || gave_up) {
		fprintf(stderr, PROG ": interrupted\n");
		goto out;
	}
	ret = 0;
out:
	if (epfd >= 0)
		close(epfd);
	for (i = 0; conns && i < cfg.max_inflight; i++)
		if (conns[i].fd >= 0)
			close(conns[i].fd);
	free(conns);
	free(free_stack);
	free(seconds);
	free(evs);
	free(rq);
	free(srcs);
	free(src_total);
	return ret;
}
