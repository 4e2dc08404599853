/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tcpstream.c - proves an established TCP connection keeps flowing: `serve`
 * accepts one connection and discards what it reads; `send` writes for a
 * fixed time and reports the bytes of its slowest second (0 = a stall).
 * Exit 0 when the connection never failed, 1 otherwise, 2 on a usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "tcpstream"
#include "toolopts.h"

#define MAX_DURATION_S 600ULL
#define DEFAULT_SERVE_DURATION_S 60ULL
#define MAX_CHUNK (16ULL << 20)
#define DEFAULT_CHUNK (64ULL << 10)
#define READ_BUF (256 << 10)
#define SINK_BACKLOG 4096
#define CONNECT_TIMEOUT_MS 5000
#define CLOSE_TIMEOUT_MS 5000 /* wait for the server's EOF after ours */
#define NSEC_PER_SEC ((uint64_t)1000000000)
#define NSEC_PER_MSEC ((uint64_t)1000000)

struct cfg {
	bool serve;
	bool sink;       /* serve, but accept and close every connection */
	int family;
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} addr;
	socklen_t addr_len;
	uint64_t duration_s;
	uint64_t chunk;
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

/* Milliseconds from now to @t, rounded up, 0 if past. */
static int ms_until(uint64_t t)
{
	uint64_t now = now_ns();

	return now >= t ? 0 : (int)((t - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
}

static double secs(uint64_t ns)
{
	return (double)ns / (double)NSEC_PER_SEC;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " serve --addr ADDR --port P [--duration SEC]\n"
"       " PROG " sink --addr ADDR --port P [--duration SEC]\n"
"       " PROG " send --addr ADDR --port P --duration SEC [--chunk BYTES]\n"
"       " PROG " --help\n"
"\n"
"serve  listen on ADDR:P (IPv4 or IPv6 by ADDR), accept one connection, read\n"
"       and discard until EOF or until SEC seconds after start (default %llu),\n"
"       then print `received=BYTES seconds=S.S` (seconds since the accept).\n"
"sink   listen on ADDR:P, accept and close every connection until SEC\n"
"       seconds after start, then print `accepted=N`.\n"
"send   connect to ADDR:P and write chunks of BYTES (default %llu, at most\n"
"       %llu) for SEC seconds. Every second stderr gets `t=N bytes=B`, the\n"
"       bytes written during second N; at the end stdout gets\n"
"       `sent=BYTES seconds=S.S min_per_sec=N`, N the fewest bytes written in\n"
"       any full second (0 shows a stall).\n"
"SEC is 1-%llu.\n"
"Exit: 0 the connection never failed, 1 it failed (or was interrupted),\n"
"      2 usage error.\n",
		DEFAULT_SERVE_DURATION_S, DEFAULT_CHUNK, MAX_CHUNK, MAX_DURATION_S);
}

enum { OPT_ADDR = 256, OPT_PORT, OPT_DURATION, OPT_CHUNK, OPT_HELP };

static const struct option long_opts[] = {
	{ "addr", required_argument, NULL, OPT_ADDR },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "chunk", required_argument, NULL, OPT_CHUNK },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Return: 0 to run, 1 after --help, -1 on a usage error (already printed). */
static int parse_args(int argc, char **argv, struct cfg *c)
{
	bool have_port = false, have_duration = false, have_chunk = false;
	const char *addr = NULL;
	uint64_t port = 0;
	int opt;

	if (argc >= 2 && !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 1;
	}
	if (argc < 2 || (strcmp(argv[1], "serve") && strcmp(argv[1], "send") &&
			 strcmp(argv[1], "sink"))) {
		fprintf(stderr, PROG ": want a mode, serve, sink or send\n");
		return -1;
	}
	c->sink = !strcmp(argv[1], "sink");
	c->serve = c->sink || !strcmp(argv[1], "serve");
	c->chunk = DEFAULT_CHUNK;
	c->duration_s = DEFAULT_SERVE_DURATION_S;
	optind = 2;
	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_ADDR:
			addr = optarg;
			break;
		case OPT_PORT:
			if (parse_u64("port", optarg, 1, 65535, &port))
				return -1;
			have_port = true;
			break;
		case OPT_DURATION:
			if (parse_u64("duration", optarg, 1, MAX_DURATION_S,
				      &c->duration_s))
				return -1;
			have_duration = true;
			break;
		case OPT_CHUNK:
			if (parse_u64("chunk", optarg, 1, MAX_CHUNK, &c->chunk))
				return -1;
			have_chunk = true;
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
	if (!addr || !have_port) {
		fprintf(stderr, PROG ": --addr and --port are required\n");
		return -1;
	}
	if (!c->serve && !have_duration) {
		fprintf(stderr, PROG ": send needs --duration\n");
		return -1;
	}
	if (c->serve && have_chunk) {
		fprintf(stderr, PROG ": --chunk is for send only\n");
		return -1;
	}
	memset(&c->addr, 0, sizeof(c->addr));
	if (inet_pton(AF_INET, addr, &c->addr.v4.sin_addr) == 1) {
		c->family = AF_INET;
		c->addr.v4.sin_family = AF_INET;
		c->addr.v4.sin_port = htons((uint16_t)port);
		c->addr_len = sizeof(c->addr.v4);
	} else if (inet_pton(AF_INET6, addr, &c->addr.v6.sin6_addr) == 1) {
		c->family = AF_INET6;
		c->addr.v6.sin6_family = AF_INET6;
		c->addr.v6.sin6_port = htons((uint16_t)port);
		c->addr_len = sizeof(c->addr.v6);
	} else {
		fprintf(stderr, PROG ": --addr: '%s' is not an IPv4 or IPv6 "
			"address\n", addr);
		return -1;
	}
	return 0;
}

/* The socket's pending error, for a POLLERR/POLLHUP or a failed connect. */
static int sock_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		return errno;
	return err;
}

/* sink: accept and close until @end; the listener stays open throughout. */
static int sink(const struct cfg *c, int lfd, uint64_t end)
{
	uint64_t accepted = 0;

	while (!stop && now_ns() < end) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		int fd;

		if (poll(&pfd, 1, ms_until(end)) <= 0)
			continue;
		while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0) {
			accepted++;
			close(fd);
		}
	}
	close(lfd);
	printf("accepted=%" PRIu64 "\n", accepted);
	return stop ? 1 : 0;
}

static int serve(const struct cfg *c)
{
	uint64_t start = now_ns(), end = start + c->duration_s * NSEC_PER_SEC;
	uint64_t received = 0, accepted_ns = 0;
	int lfd, fd = -1, one = 1, err = 1;
	char *buf = NULL;

	lfd = socket(c->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lfd < 0) {
		fprintf(stderr, PROG ": open listening socket: %s\n",
			strerror(errno));
		return 1;
	}
	if (setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one))) {
		fprintf(stderr, PROG ": set SO_REUSEADDR: %s\n", strerror(errno));
		goto out;
	}
	/* An IPv6 listener takes IPv6 only, so a v4 one can share the port. */
	if (c->family == AF_INET6 &&
	    setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one))) {
		fprintf(stderr, PROG ": set IPV6_V6ONLY: %s\n", strerror(errno));
		goto out;
	}
	if (bind(lfd, (const struct sockaddr *)&c->addr, c->addr_len)) {
		fprintf(stderr, PROG ": bind: %s%s\n", strerror(errno),
			errno == EADDRNOTAVAIL ? " (is --addr on an interface "
			"here?)" : errno == EADDRINUSE ? " (port taken)" : "");
		goto out;
	}
	if (listen(lfd, c->sink ? SINK_BACKLOG : 1)) {
		fprintf(stderr, PROG ": listen: %s\n", strerror(errno));
		goto out;
	}

	if (c->sink)
		return sink(c, lfd, end);
	while (fd < 0) {
		struct pollfd pfd = { .fd = lfd, .events = POLLIN };
		int n;

		if (stop || now_ns() >= end) {
			fprintf(stderr, PROG ": accept: %s\n", stop ? "interrupted" :
				"no connection before --duration ran out");
			goto out;
		}
		n = poll(&pfd, 1, ms_until(end));
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, PROG ": wait for a connection: %s\n",
				strerror(errno));
			goto out;
		}
		if (n <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0 && errno != EAGAIN && errno != EINTR &&
		    errno != ECONNABORTED) {
			fprintf(stderr, PROG ": accept: %s\n", strerror(errno));
			goto out;
		}
	}
	accepted_ns = now_ns();
	close(lfd);
	lfd = -1;

	buf = malloc(READ_BUF);
	if (!buf) {
		fprintf(stderr, PROG ": allocate read buffer: %s\n",
			strerror(errno));
		goto report;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (stop) {
			fprintf(stderr, PROG ": interrupted\n");
			goto report;
		}
		if (now_ns() >= end) { /* the time bound, not a failure */
			err = 0;
			goto report;
		}
		if (poll(&pfd, 1, ms_until(end)) < 0 && errno != EINTR) {
			fprintf(stderr, PROG ": wait for data: %s\n",
				strerror(errno));
			goto report;
		}
		n = read(fd, buf, READ_BUF);
		if (n > 0) {
			received += (uint64_t)n;
		} else if (n == 0) {
			err = 0;
			goto report;
		} else if (errno != EAGAIN && errno != EINTR) {
			fprintf(stderr, PROG ": read: %s\n", strerror(errno));
			goto report;
		}
	}
report:
	printf("received=%" PRIu64 " seconds=%.1f\n", received,
	       secs(now_ns() - accepted_ns));
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	return err;
}

/* Non-blocking connect bounded by CONNECT_TIMEOUT_MS. Return: fd or -1. */
static int connect_to(const struct cfg *c)
{
	uint64_t end = now_ns() + CONNECT_TIMEOUT_MS * NSEC_PER_MSEC;
	int fd, err;

	fd = socket(c->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		fprintf(stderr, PROG ": open socket: %s\n", strerror(errno));
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)&c->addr, c->addr_len) == 0)
		return fd;
	if (errno != EINPROGRESS) {
		err = errno;
		goto fail;
	}
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int n = poll(&pfd, 1, ms_until(end));

		if (n < 0 && errno != EINTR) {
			err = errno;
			goto fail;
		}
		if (n > 0)
			break;
		if (stop) {
			err = EINTR;
			goto fail;
		}
		if (now_ns() >= end) {
			err = ETIMEDOUT;
			goto fail;
		}
	}
	err = sock_error(fd);
	if (!err)
		return fd;
fail:
	fprintf(stderr, PROG ": connect: %s\n", strerror(err));
	close(fd);
	return -1;
}

/* After our FIN, wait for the server's EOF: it confirms the server read
 * everything, and a RST here is a failure. Return: 0 or -1. */
static int close_cleanly(int fd)
{
	uint64_t end = now_ns() + CLOSE_TIMEOUT_MS * NSEC_PER_MSEC;
	char buf[4096];

	if (shutdown(fd, SHUT_WR)) {
		fprintf(stderr, PROG ": shutdown: %s\n", strerror(errno));
		return -1;
	}
	while (!stop && now_ns() < end) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, ms_until(end)) <= 0)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n == 0)
			return 0;
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			fprintf(stderr, PROG ": after sending: %s\n",
				strerror(errno));
			return -1;
		}
	}
	fprintf(stderr, PROG ": warning: no EOF from the server within %d ms "
		"of ours\n", CLOSE_TIMEOUT_MS);
	return 0;
}

/* Second t covers [start + t-1, start + t). Writes count in the second in
 * which they returned. */
static int send_stream(const struct cfg *c)
{
	uint64_t sent = 0, this_sec = 0, min_per_sec = UINT64_MAX, t = 0;
	uint64_t start, end, tick;
	int fd, err = 1;
	char *buf;

	buf = calloc(1, c->chunk);
	if (!buf) {
		fprintf(stderr, PROG ": allocate %" PRIu64 " byte chunk: %s\n",
			c->chunk, strerror(errno));
		return 1;
	}
	fd = connect_to(c);
	start = now_ns();
	end = start + c->duration_s * NSEC_PER_SEC;
	tick = start + NSEC_PER_SEC;
	if (fd < 0)
		goto report;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		uint64_t now = now_ns();
		int n;

		while (now >= tick && tick <= end) {
			t++;
			fprintf(stderr, "t=%" PRIu64 " bytes=%" PRIu64 "\n", t,
				this_sec);
			if (this_sec < min_per_sec)
				min_per_sec = this_sec;
			this_sec = 0;
			tick += NSEC_PER_SEC;
		}
		if (now >= end)
			break;
		if (stop) {
			fprintf(stderr, PROG ": interrupted\n");
			goto report;
		}
		n = poll(&pfd, 1, ms_until(tick < end ? tick : end));
		if (n < 0 && errno != EINTR) {
			fprintf(stderr, PROG ": wait to send: %s\n", strerror(errno));
			goto report;
		}
		if (n <= 0)
			continue;
		if (pfd.revents & (POLLERR | POLLHUP)) {
			int e = sock_error(fd);

			fprintf(stderr, PROG ": connection failed after %" PRIu64
				" bytes: %s\n", sent, e ? strerror(e) : "hung up");
			goto report;
		}
		/* Fill the socket buffer, but come back to the clock by the tick. */
		while (now_ns() < tick) {
			ssize_t w = send(fd, buf, c->chunk,
					 MSG_NOSIGNAL | MSG_DONTWAIT);

			if (w < 0) {
				if (errno == EAGAIN || errno == EINTR)
					break;
				fprintf(stderr, PROG ": send after %" PRIu64
					" bytes: %s\n", sent, strerror(errno));
				goto report;
			}
			sent += (uint64_t)w;
			this_sec += (uint64_t)w;
		}
	}
	if (close_cleanly(fd))
		goto report;
	err = 0;
report:
	printf("sent=%" PRIu64 " seconds=%.1f min_per_sec=%" PRIu64 "\n", sent,
	       secs((end < now_ns() ? end : now_ns()) - start),
	       min_per_sec == UINT64_MAX ? 0 : min_per_sec);
	if (fd >= 0)
		close(fd);
	free(buf);
	return err;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct cfg c = {};
	int ret;

	ret = parse_args(argc, argv, &c);
	if (ret) {
		if (ret < 0)
			fprintf(stderr, "Try '" PROG " --help'.\n");
		return ret > 0 ? 0 : 2;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return c.serve ? serve(&c) : send_stream(&c);
}
