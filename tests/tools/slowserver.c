/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* slowserver.c - testbed TCP server of known capacity WORKERS / SERVICE_MS:
 * it accepts only when a worker is free, so the excess waits in the kernel
 * accept queue (whose sojourn shedd measures). A worker reads one line,
 * sleeps the service time, writes "OK\n" and closes first; with --http it
 * reads an HTTP/1.0 or 1.1 request head and answers 200 with a 3-byte body
 * and "Connection: close". At the end stdout gets `accepted=N served=N`. Exit 0 ok, 1 runtime error, 2 usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "shedd_latency.h"

#define PROG "slowserver"
#include "toolopts.h"
#include "../splitmix.h"

#ifndef MAX_WORKERS
#define MAX_WORKERS 4096ULL
#endif
#define MAX_DURATION_S 3600ULL
#define DEFAULT_DURATION_S 60ULL
#define MAX_BACKLOG 65535ULL
#define DEFAULT_BACKLOG 128ULL
#define MAX_SERVICE_MS 60000.0
#define MIN_SERVICE_MS 0.001 /* 1 us; below that the sleep is all overhead */
/* An exponential draw is cut at this many means: P(longer) = e^-20, and a
 * stray enormous sleep would hold a worker past any test's end. */
#define EXP_CAP_MEANS 20.0
#define REQUEST_MAX 256          /* bytes of a request line, '\n' included */
#define HTTP_HEAD_MAX 8192       /* bytes of an HTTP request head (--http) */
#define READ_TIMEOUT_NS 1000000000ULL
/* After the stop, in-service requests may finish for this long; then the
 * workers abandon them (close without a response). */
#define STOP_GRACE_NS 2000000000ULL
/* --paced: a request taken within this long of the worker's previous reply
 * is on the worker's grid (the worker was busy); a longer gap starts anew. */
#define PACE_SLACK_NS 5000000ULL
#define SLEEP_SLICE_NS 100000000ULL /* a sleeping worker checks abort this often */
#define WORKER_STACK (256 << 10)    /* room for ASan; the default is 8 MiB */
#define FD_SPARE 32 /* descriptors besides one connection per worker */
#define NSEC_PER_SEC ((uint64_t)1000000000)
#define NSEC_PER_MSEC ((uint64_t)1000000)

enum dist { DIST_EXP, DIST_FIXED };

struct cfg {
	int family;
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} addr;
	socklen_t addr_len;
	const char *addr_str;
	uint64_t port;
	uint64_t workers;
	double service_ms;
	enum dist dist;
	uint64_t backlog;
	uint64_t duration_s;
	bool accept_null;
	bool reuseport;
	bool http;
	bool paced;
	const char *latency_path;
	uint64_t seed;
	bool have_seed;
};

/*
 * struct pool - the hand-off between the acceptor and the workers, all
 * under @lock.
 * @idle:     workers not serving and not promised a connection; the acceptor
 *            accepts only while it is > 0, which is what keeps the excess in
 *            the kernel's accept queue.
 * @fds, @accept_ns: ring of accepted connections not yet taken, with their
 *            accept time; it never holds more than @workers entries because
 *            every entry was promised to an idle worker.
 * @stop:     no more accepting; workers leave when the ring is empty.
 * @exited:   workers that have returned, so main can wait with a deadline.
 */
struct pool {
	pthread_mutex_t lock;
	pthread_cond_t work_cv;  /* a connection is in the ring, or @stop */
	pthread_cond_t free_cv;  /* @idle rose, or @stop */
	pthread_cond_t exit_cv;  /* @exited rose */
	uint64_t idle;
	uint64_t head, count;
	int *fds;
	uint64_t *accept_ns;
	bool stop;
	uint64_t exited;
	uint64_t served;
	uint64_t no_request; /* closed: nothing, junk or EOF within the timeout */
	uint64_t failed;     /* read/write error or abandoned at the stop */
};

struct worker {
	pthread_t thread;
	uint64_t rng;
	uint64_t last_reply_ns; /* --paced: when the last reply was due */
};

static struct cfg cfg;
static struct pool pool;
static int latency_fd = -1;
static int stop_efd = -1;          /* wakes the acceptor out of poll() */
static pthread_t main_thread;      /* takes SIGTERM from a failed acceptor */
static atomic_bool abort_service;  /* the stop grace is over */
static atomic_bool latency_warned;
static atomic_uint_fast64_t latency_sent, latency_dropped;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static struct timespec to_timespec(uint64_t ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(ns / NSEC_PER_SEC),
		.tv_nsec = (long)(ns % NSEC_PER_SEC),
	};

	return ts;
}

/* Milliseconds from now to @t, rounded up, 0 if past. */
static int ms_until(uint64_t t)
{
	uint64_t now = now_ns();

	return now >= t ? 0 : (int)((t - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
}

static uint64_t service_ns(struct worker *w)
{
	double ms = cfg.service_ms;

	if (cfg.dist == DIST_EXP) {
		ms = -cfg.service_ms * log(rng_unit_open(&w->rng));
		if (ms > EXP_CAP_MEANS * cfg.service_ms)
			ms = EXP_CAP_MEANS * cfg.service_ms;
	}
	return (uint64_t)(ms * (double)NSEC_PER_MSEC);
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " --addr ADDR --port P --workers N --service-ms MEAN\n"
"       [--dist exp|fixed] [--backlog B] [--duration SEC] [--accept-null]\n"
"       [--latency-socket PATH] [--seed N] [--http] [--paced] [--reuseport]\n"
"       " PROG " --help\n"
"\n"
"A TCP server of known capacity, N * 1000 / MEAN requests per second. It\n"
"listens on ADDR:P (IPv4 or IPv6 by ADDR) with listen(B) and accepts only\n"
"when one of its N workers is free, so excess connections wait in the\n"
"kernel's accept queue (at most B of them; the kernel also caps B at\n"
"net.core.somaxconn) and SYNs beyond that are dropped by the kernel.\n"
"A worker reads one request line ending in '\\n' (at most %d bytes, within\n"
"1 s; otherwise it just closes), sleeps the service time, writes \"OK\\n\"\n"
"and closes first, so the client keeps no TIME_WAIT.\n"
"\n"
"--http             speak HTTP instead: a worker reads a request head (up to\n"
"                   the empty line, at most %d bytes, within 1 s), sleeps\n"
"                   the service time and answers\n"
"                   \"HTTP/1.1 200 OK\" with \"Content-Length: 3\",\n"
"                   \"Connection: close\" and the body \"OK\\n\", then closes\n"
"                   first: one request per connection, whatever the client\n"
"                   asked (HTTP/1.0 or 1.1; a request body is not read)\n"
"\n"
"--service-ms MEAN  mean service time in ms, %g-%g, fractions allowed\n"
"--dist exp|fixed   service time exponential with mean MEAN (default; cut\n"
"                   at %gx MEAN) or always MEAN\n"
"--workers N        1-%llu\n"
"--backlog B        1-%llu, default %llu\n"
"--duration SEC     1-%llu, default %llu; SIGTERM or SIGINT stop it sooner\n"
"--accept-null      accept with accept(fd, NULL, NULL) instead of accept4()\n"
"                   with an address (shedd hooks both paths)\n"
"--reuseport        set SO_REUSEPORT before bind: several servers on one\n"
"                   ADDR:P make an SO_REUSEPORT group, each with its own\n"
"                   accept queue; the kernel hashes each SYN's 4-tuple to\n"
"                   one of them\n"
"--latency-socket PATH  send each request's latency (accept to response\n"
"                   written) to shedd's UNIX datagram socket PATH, one\n"
"                   16-byte sample per request (shedd_latency.h); if it\n"
"                   cannot be opened, warn and serve anyway\n"
"--seed N           seed of the service-time draws (default: time and pid)\n"
"--paced            a busy worker answers on a grid of service times: a\n"
"                   request it takes within %g ms of its previous reply is\n"
"                   answered one service time after that reply was due, not\n"
"                   after it was taken, so the hand-off, accept and read\n"
"                   between two requests do not come out of the capacity\n"
"                   (4 workers x 20 ms, saturated: 198-199 requests/s;\n"
"                   194-195 without it, measured on a 2-CPU VM)\n"
"\n"
"stderr gets a `listening ...` line once the socket listens, and a line of\n"
"details at the end. At the end stdout gets `accepted=N served=N`; in-service\n"
"requests get %llu s to finish after the stop.\n"
"Exit: 0 ran to the end or was stopped by a signal, 1 runtime error,\n"
"      2 usage error.\n",
		REQUEST_MAX, HTTP_HEAD_MAX, MIN_SERVICE_MS, MAX_SERVICE_MS, EXP_CAP_MEANS,
		MAX_WORKERS, MAX_BACKLOG, DEFAULT_BACKLOG, MAX_DURATION_S,
		DEFAULT_DURATION_S, (double)PACE_SLACK_NS / NSEC_PER_MSEC,
		(unsigned long long)(STOP_GRACE_NS / NSEC_PER_SEC));
}

enum {
	OPT_ADDR = 256, OPT_PORT, OPT_WORKERS, OPT_SERVICE_MS, OPT_DIST,
	OPT_BACKLOG, OPT_DURATION, OPT_ACCEPT_NULL, OPT_LATENCY_SOCKET,
	OPT_SEED, OPT_HTTP, OPT_PACED, OPT_REUSEPORT, OPT_HELP,
};

static const struct option long_opts[] = {
	{ "addr", required_argument, NULL, OPT_ADDR },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "workers", required_argument, NULL, OPT_WORKERS },
	{ "service-ms", required_argument, NULL, OPT_SERVICE_MS },
	{ "dist", required_argument, NULL, OPT_DIST },
	{ "backlog", required_argument, NULL, OPT_BACKLOG },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "accept-null", no_argument, NULL, OPT_ACCEPT_NULL },
	{ "latency-socket", required_argument, NULL, OPT_LATENCY_SOCKET },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "http", no_argument, NULL, OPT_HTTP },
	{ "paced", no_argument, NULL, OPT_PACED },
	{ "reuseport", no_argument, NULL, OPT_REUSEPORT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Return: 0 to run, 1 after --help, -1 on a usage error (already printed). */
static int parse_args(int argc, char **argv, struct cfg *c)
{
	bool have_port = false, have_workers = false, have_service = false;
	int opt;

	c->dist = DIST_EXP;
	c->backlog = DEFAULT_BACKLOG;
	c->duration_s = DEFAULT_DURATION_S;
	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_ADDR:
			c->addr_str = optarg;
			break;
		case OPT_PORT:
			if (parse_u64("port", optarg, 1, 65535, &c->port))
				return -1;
			have_port = true;
			break;
		case OPT_WORKERS:
			if (parse_u64("workers", optarg, 1, MAX_WORKERS,
				      &c->workers))
				return -1;
			have_workers = true;
			break;
		case OPT_SERVICE_MS:
			if (parse_double("service-ms", optarg, MIN_SERVICE_MS,
					 MAX_SERVICE_MS, &c->service_ms))
				return -1;
			have_service = true;
			break;
		case OPT_DIST:
			if (!strcmp(optarg, "exp")) {
				c->dist = DIST_EXP;
			} else if (!strcmp(optarg, "fixed")) {
				c->dist = DIST_FIXED;
			} else {
				fprintf(stderr, PROG ": --dist: '%s' is not exp "
					"or fixed\n", optarg);
				return -1;
			}
			break;
		case OPT_BACKLOG:
			if (parse_u64("backlog", optarg, 1, MAX_BACKLOG,
				      &c->backlog))
				return -1;
			break;
		case OPT_DURATION:
			if (parse_u64("duration", optarg, 1, MAX_DURATION_S,
				      &c->duration_s))
				return -1;
			break;
		case OPT_ACCEPT_NULL:
			c->accept_null = true;
			break;
		case OPT_REUSEPORT:
			c->reuseport = true;
			break;
		case OPT_LATENCY_SOCKET:
			if (!optarg[0]) {
				fprintf(stderr, PROG ": --latency-socket: empty "
					"path\n");
				return -1;
			}
			c->latency_path = optarg;
			break;
		case OPT_SEED:
			if (parse_u64("seed", optarg, 0, UINT64_MAX, &c->seed))
				return -1;
			c->have_seed = true;
			break;
		case OPT_HTTP:
			c->http = true;
			break;
		case OPT_PACED:
			c->paced = true;
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
	if (!c->addr_str || !have_port || !have_workers || !have_service) {
		fprintf(stderr, PROG ": --addr, --port, --workers and "
			"--service-ms are required\n");
		return -1;
	}
	memset(&c->addr, 0, sizeof(c->addr));
	if (inet_pton(AF_INET, c->addr_str, &c->addr.v4.sin_addr) == 1) {
		c->family = AF_INET;
		c->addr.v4.sin_family = AF_INET;
		c->addr.v4.sin_port = htons((uint16_t)c->port);
		c->addr_len = sizeof(c->addr.v4);
	} else if (inet_pton(AF_INET6, c->addr_str,
			     &c->addr.v6.sin6_addr) == 1) {
		c->family = AF_INET6;
		c->addr.v6.sin6_family = AF_INET6;
		c->addr.v6.sin6_port = htons((uint16_t)c->port);
		c->addr_len = sizeof(c->addr.v6);
	} else {
		fprintf(stderr, PROG ": --addr: '%s' is not an IPv4 or IPv6 "
			"address\n", c->addr_str);
		return -1;
	}
	if (!c->have_seed)
		c->seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	return 0;
}

static void latency_report(uint64_t ns)
{
	if (latency_fd < 0)
		return;
	if (!shedd_latency_report(latency_fd, ns)) {
		atomic_fetch_add(&latency_sent, 1);
		return;
	}
	atomic_fetch_add(&latency_dropped, 1);
	/* EAGAIN is shedd being behind; anything else (ECONNREFUSED: shedd
	 * went away) is worth one line, not one per request. */
	if (errno != EAGAIN && !atomic_exchange(&latency_warned, true))
		fprintf(stderr, PROG ": report latency to %s: %s (samples are "
			"dropped from now on; warning once)\n",
			cfg.latency_path, strerror(errno));
}

/* Whether @buf holds a whole HTTP request head: it ends with an empty line
 * ("\r\n\r\n", or bare "\n\n" from lenient clients). */
static bool http_head_done(const char *buf, size_t len)
{
	return memmem(buf, len, "\r\n\r\n", 4) || memmem(buf, len, "\n\n", 2);
}

/* Read one request line (or, with --http, one request head) within
 * READ_TIMEOUT_NS. Return: true for a whole request. */
static bool read_request(int fd)
{
	uint64_t end = now_ns() + READ_TIMEOUT_NS;
	size_t max = cfg.http ? HTTP_HEAD_MAX : REQUEST_MAX;
	char buf[HTTP_HEAD_MAX];
	size_t got = 0;

	while (got < max) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int r;

		if (atomic_load(&abort_service))
			return false;
		r = poll(&pfd, 1, ms_until(end));
		if (r < 0 && errno != EINTR)
			return false;
		if (r == 0 && now_ns() >= end)
			return false; /* a silent client */
		n = recv(fd, buf + got, max - got, MSG_DONTWAIT);
		if (n == 0)
			return false; /* the client closed */
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return false; /* a RST, most likely the client's patience */
		}
		if (!cfg.http && memchr(buf + got, '\n', (size_t)n))
			return true;
		got += (size_t)n;
		if (cfg.http && http_head_done(buf, got))
			return true;
	}
	return false; /* longer than any request */
}

/* Sleep until @t (CLOCK_MONOTONIC), in slices so the stop can cut it short.
 * Return: false when cut short. */
static bool sleep_until(uint64_t t)
{
	for (;;) {
		uint64_t now = now_ns(), until = t;
		struct timespec ts;

		if (now >= t)
			return true;
		if (atomic_load(&abort_service))
			return false;
		if (until - now > SLEEP_SLICE_NS)
			until = now + SLEEP_SLICE_NS;
		ts = to_timespec(until);
		/* EINTR just loops; the signals are blocked here anyway. */
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

enum outcome { SERVED, NO_REQUEST, FAILED };

/* --paced: when the reply to a request taken at @taken_ns is due. */
static uint64_t paced_due(struct worker *w, uint64_t taken_ns)
{
	uint64_t start = taken_ns;

	if (w->last_reply_ns && taken_ns >= w->last_reply_ns &&
	    taken_ns - w->last_reply_ns < PACE_SLACK_NS)
		start = w->last_reply_ns;
	w->last_reply_ns = start + service_ns(w);
	return w->last_reply_ns;
}

static enum outcome serve_one(struct worker *w, int fd, uint64_t accept_ns)
{
	uint64_t taken = now_ns(), due;

	static const char line_reply[] = "OK\n";
	static const char http_reply[] = "HTTP/1.1 200 OK\r\n"
		"Content-Length: 3\r\n"
		"Connection: close\r\n"
		"\r\n"
		"OK\n";
	const char *reply = cfg.http ? http_reply : line_reply;
	size_t len = cfg.http ? sizeof(http_reply) - 1 : sizeof(line_reply) - 1;
	ssize_t n;

	if (!read_request(fd))
		return NO_REQUEST;
	due = cfg.paced ? paced_due(w, taken) : now_ns() + service_ns(w);
	if (!sleep_until(due))
		return FAILED;
	/* A reply of a few dozen bytes to a fresh socket fits its send
	 * buffer: it does not block. MSG_NOSIGNAL: a client that gave up must
	 * not kill us. */
	do
		n = send(fd, reply, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)len)
		return FAILED;
	latency_report(now_ns() - accept_ns);
	return SERVED;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	pthread_mutex_lock(&pool.lock);
	for (;;) {
		enum outcome out;
		uint64_t t;
		int fd;

		while (!pool.count && !pool.stop)
			pthread_cond_wait(&pool.work_cv, &pool.lock);
		if (!pool.count)
			break; /* stopped and nothing left to serve */
		fd = pool.fds[pool.head];
		t = pool.accept_ns[pool.head];
		pool.head = (pool.head + 1) % cfg.workers;
		pool.count--;
		pthread_mutex_unlock(&pool.lock);

		out = serve_one(w, fd, t);
		close(fd); /* the server closes first: no TIME_WAIT at the client */

		pthread_mutex_lock(&pool.lock);
		if (out == SERVED)
			pool.served++;
		else if (out == NO_REQUEST)
			pool.no_request++;
		else
			pool.failed++;
		pool.idle++;
		pthread_cond_signal(&pool.free_cv);
	}
	pool.exited++;
	pthread_cond_signal(&pool.exit_cv);
	pthread_mutex_unlock(&pool.lock);
	return NULL;
}

struct acceptor {
	pthread_t thread;
	int lfd;
	uint64_t accepted;
	int err; /* 0, or the errno that stopped it */
};

/* Wait for a free worker, then for a connection, then accept it. */
static void *acceptor_main(void *arg)
{
	struct acceptor *a = arg;

	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = a->lfd, .events = POLLIN },
			{ .fd = stop_efd, .events = POLLIN },
		};
		struct sockaddr_storage peer;
		socklen_t peer_len = sizeof(peer);
		uint64_t t;
		int fd;

		pthread_mutex_lock(&pool.lock);
		while (!pool.idle && !pool.stop)
			pthread_cond_wait(&pool.free_cv, &pool.lock);
		if (pool.stop) {
			pthread_mutex_unlock(&pool.lock);
			break;
		}
		pthread_mutex_unlock(&pool.lock);

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			a->err = errno;
			fprintf(stderr, PROG ": wait for a connection: %s\n",
				strerror(errno));
			pthread_kill(main_thread, SIGTERM); /* end the run */
			break;
		}
		if (pfd[1].revents)
			break;
		if (!pfd[0].revents)
			continue;
		if (cfg.accept_null)
			fd = accept(a->lfd, NULL, NULL);
		else
			fd = accept4(a->lfd, (struct sockaddr *)&peer, &peer_len,
				     SOCK_CLOEXEC);
		if (fd < 0) {
			/* Gone before we took it, or a signal: try again. */
			if (errno == EAGAIN || errno == EINTR ||
			    errno == ECONNABORTED || errno == EPROTO)
				continue;
			a->err = errno;
			fprintf(stderr, PROG ": accept: %s%s\n", strerror(errno),
				errno == EMFILE || errno == ENFILE ?
				" (raise the open-file limit)" : "");
			pthread_kill(main_thread, SIGTERM); /* end the run */
			break;
		}
		t = now_ns();
		a->accepted++;

		pthread_mutex_lock(&pool.lock);
		pool.fds[(pool.head + pool.count) % cfg.workers] = fd;
		pool.accept_ns[(pool.head + pool.count) % cfg.workers] = t;
		pool.count++;
		pool.idle--;
		pthread_cond_signal(&pool.work_cv);
		pthread_mutex_unlock(&pool.lock);
	}
	return NULL;
}

static int open_listener(void)
{
	int lfd, one = 1;
	FILE *f;

	lfd = socket(cfg.family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0) {
		fprintf(stderr, PROG ": open listening socket: %s\n",
			strerror(errno));
		return -1;
	}
	/* The server closes first, so its port collects TIME_WAITs; a rerun
	 * must still bind. */
	if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) {
		fprintf(stderr, PROG ": set SO_REUSEADDR: %s\n", strerror(errno));
		goto fail;
	}
	if (cfg.reuseport && setsockopt(lfd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one))) {
		fprintf(stderr, PROG ": set SO_REUSEPORT: %s\n", strerror(errno));
		goto fail;
	}
	if (bind(lfd, (const struct sockaddr *)&cfg.addr, cfg.addr_len)) {
		fprintf(stderr, PROG ": bind %s port %" PRIu64 ": %s%s\n",
			cfg.addr_str, cfg.port, strerror(errno),
			errno == EADDRNOTAVAIL ? " (is --addr on an interface "
			"here?)" : errno == EADDRINUSE ? " (port taken)" : "");
		goto fail;
	}
	if (listen(lfd, (int)cfg.backlog)) {
		fprintf(stderr, PROG ": listen: %s\n", strerror(errno));
		goto fail;
	}
	/* The kernel silently caps the backlog; say so, as the accept queue
	 * depth is the point of this server. */
	f = fopen("/proc/sys/net/core/somaxconn", "r");
	if (f) {
		unsigned long long max;

		if (fscanf(f, "%llu", &max) == 1 && cfg.backlog > max)
			fprintf(stderr, PROG ": warning: --backlog %" PRIu64
				" is above net.core.somaxconn %llu; the kernel "
				"uses %llu\n", cfg.backlog, max, max);
		fclose(f);
	}
	return lfd;
fail:
	close(lfd);
	return -1;
}

/* Wait for SIGINT/SIGTERM or the end of --duration. The signals are
 * blocked in every thread and taken here synchronously, so no handler
 * runs in the middle of a worker. */
static void wait_for_end(const sigset_t *sigs, uint64_t end)
{
	for (;;) {
		uint64_t now = now_ns();
		struct timespec ts;

		if (now >= end)
			return;
		ts = to_timespec(end - now);
		if (sigtimedwait(sigs, NULL, &ts) > 0)
			return;
		/* EAGAIN: the time is up (checked above); EINTR: again. */
	}
}

/* Tell everyone to stop, give in-service requests STOP_GRACE_NS, then cut
 * the rest short and join. */
static void stop_all(struct acceptor *a, struct worker *w, uint64_t started)
{
	uint64_t one = 1, grace_end;
	struct timespec ts;
	uint64_t i;

	pthread_mutex_lock(&pool.lock);
	pool.stop = true;
	pthread_cond_broadcast(&pool.free_cv);
	pthread_cond_broadcast(&pool.work_cv);
	pthread_mutex_unlock(&pool.lock);
	if (write(stop_efd, &one, sizeof(one)) != sizeof(one))
		fprintf(stderr, PROG ": wake the acceptor: %s\n", strerror(errno));
	pthread_join(a->thread, NULL);

	/* pthread_cond_timedwait takes CLOCK_REALTIME unless told otherwise;
	 * the pool's exit_cv was made with CLOCK_MONOTONIC. */
	grace_end = now_ns() + STOP_GRACE_NS;
	ts = to_timespec(grace_end);
	pthread_mutex_lock(&pool.lock);
	while (pool.exited < started &&
	       pthread_cond_timedwait(&pool.exit_cv, &pool.lock, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&pool.lock);
	atomic_store(&abort_service, true);
	for (i = 0; i < started; i++)
		pthread_join(w[i].thread, NULL);
}

/* At most one connection per worker is open (held or in the ring), so
 * --workers + FD_SPARE descriptors are enough; the soft limit may rise to
 * the hard one without privilege. */
static int raise_fd_limit(void)
{
	uint64_t need = cfg.workers + FD_SPARE;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, PROG ": read the open-file limit: %s\n",
			strerror(errno));
		return -1;
	}
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		fprintf(stderr, PROG ": open-file hard limit %llu is below "
			"--workers + %d\n", (unsigned long long)rl.rlim_max,
			FD_SPARE);
		return -1;
	}
	rl.rlim_cur = need;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, PROG ": raise the open-file limit to %" PRIu64
			": %s\n", need, strerror(errno));
		return -1;
	}
	return 0;
}

static int pool_init(void)
{
	pthread_condattr_t ca;

	pool.fds = calloc(cfg.workers, sizeof(*pool.fds));
	pool.accept_ns = calloc(cfg.workers, sizeof(*pool.accept_ns));
	if (!pool.fds || !pool.accept_ns) {
		fprintf(stderr, PROG ": allocate the worker pool: %s\n",
			strerror(errno));
		return -1;
	}
	pool.idle = cfg.workers;
	pthread_mutex_init(&pool.lock, NULL);
	pthread_cond_init(&pool.work_cv, NULL);
	pthread_cond_init(&pool.free_cv, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&pool.exit_cv, &ca);
	pthread_condattr_destroy(&ca);
	return 0;
}

int main(int argc, char **argv)
{
	struct acceptor acc = { .lfd = -1 };
	struct worker *w = NULL;
	uint64_t started = 0, i, end;
	pthread_attr_t attr;
	bool have_attr = false, have_acceptor = false;
	sigset_t sigs;
	int ret = 1, r;

	r = parse_args(argc, argv, &cfg);
	if (r)
		return r > 0 ? 0 : 2;
	/* Lines, not blocks, so a harness sees them as they come. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	/* Before any thread exists, so every thread inherits the mask. */
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);

	main_thread = pthread_self();
	if (raise_fd_limit() || pool_init())
		goto out;
	w = calloc(cfg.workers, sizeof(*w));
	if (!w) {
		fprintf(stderr, PROG ": allocate workers: %s\n", strerror(errno));
		goto out;
	}
	stop_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (stop_efd < 0) {
		fprintf(stderr, PROG ": open eventfd: %s\n", strerror(errno));
		goto out;
	}
	if (cfg.latency_path) {
		latency_fd = shedd_latency_open(cfg.latency_path);
		if (latency_fd < 0)
			fprintf(stderr, PROG ": warning: open latency socket %s: "
				"%s; serving without latency reports\n",
				cfg.latency_path, strerror(errno));
	}
	acc.lfd = open_listener();
	if (acc.lfd < 0)
		goto out;

	pthread_attr_init(&attr);
	have_attr = true;
	pthread_attr_setstacksize(&attr, WORKER_STACK);
	for (i = 0; i < cfg.workers; i++) {
		w[i].rng = cfg.seed + i * 0x632be59bd9b4e019ULL;
		r = pthread_create(&w[i].thread, &attr, worker_main, &w[i]);
		if (r) {
			fprintf(stderr, PROG ": start worker %" PRIu64 ": %s\n",
				i, strerror(r));
			goto stop;
		}
		started++;
	}
	r = pthread_create(&acc.thread, &attr, acceptor_main, &acc);
	if (r) {
		fprintf(stderr, PROG ": start acceptor: %s\n", strerror(r));
		goto stop;
	}
	have_acceptor = true;
	fprintf(stderr, PROG ": listening on %s port %" PRIu64 " workers=%"
		PRIu64 " service_ms=%g dist=%s backlog=%" PRIu64
		" capacity_per_sec=%.1f accept=%s seed=%" PRIu64 "\n",
		cfg.addr_str, cfg.port, cfg.workers, cfg.service_ms,
		cfg.dist == DIST_EXP ? "exp" : "fixed", cfg.backlog,
		(double)cfg.workers * 1000.0 / cfg.service_ms,
		cfg.accept_null ? "accept-null" : "accept4", cfg.seed);

	end = now_ns() + cfg.duration_s * NSEC_PER_SEC;
	wait_for_end(&sigs, end);
	ret = 0;
stop:
	if (!have_acceptor) {
		/* Failed while starting: only workers to stop, none busy. */
		pthread_mutex_lock(&pool.lock);
		pool.stop = true;
		pthread_cond_broadcast(&pool.work_cv);
		pthread_mutex_unlock(&pool.lock);
		for (i = 0; i < started; i++)
			pthread_join(w[i].thread, NULL);
	} else {
		stop_all(&acc, w, started);
		if (acc.err)
			ret = 1;
	}
	printf("accepted=%" PRIu64 " served=%" PRIu64 "\n", acc.accepted,
	       pool.served);
	if (cfg.latency_path)
		fprintf(stderr, PROG ": no_request=%" PRIu64 " failed=%" PRIu64
			" latency_sent=%" PRIuFAST64 " latency_dropped=%"
			PRIuFAST64 "\n", pool.no_request, pool.failed,
			atomic_load(&latency_sent), atomic_load(&latency_dropped));
	else
		fprintf(stderr, PROG ": no_request=%" PRIu64 " failed=%" PRIu64
			"\n", pool.no_request, pool.failed);
out:
	if (have_attr)
		pthread_attr_destroy(&attr);
	if (acc.lfd >= 0)
		close(acc.lfd); /* RSTs whatever still waits in the queue */
	if (latency_fd >= 0)
		close(latency_fd);
	if (stop_efd >= 0)
		close(stop_efd);
	free(w);
	free(pool.fds);
	free(pool.accept_ns);
	/* The signals stay blocked: one that came during the stop must not
	 * turn this exit status into death by signal. */
	return ret;
}
