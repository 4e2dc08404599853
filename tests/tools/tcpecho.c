/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tcpecho.c - one real TCP conversation, both ways: `serve` echoes back what
 * each connection sends; `connect` opens one connection, sends BYTES,
 * reads them back and compares, says so on stdout (`exchanged ...`), keeps
 * the connection open for --hold-ms (so `ss` can look at both ends), then
 * closes. The last stdout line is `result=ok ...` or `result=ERRNO
 * stage=connect|send|recv|hold elapsed_ms=N`, with ERRNO a name
 * (ECONNRESET, ECONNREFUSED, ETIMEDOUT...; stage=hold: the connection did
 * not last the hold, EPIPE if the server closed it). Exit 0 ok, 1 failed,
 * 2 usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG "tcpecho"
#include "toolopts.h"

#define MAX_DURATION_S 600ULL
#define DEFAULT_DURATION_S 60ULL
#define MAX_BYTES (64ULL << 20)
#define DEFAULT_BYTES (1ULL << 20)
#define MAX_MS 60000ULL
#define DEFAULT_TIMEOUT_MS 5000ULL
#define BACKLOG 128
#define BUF 65536
#define NSEC_PER_MSEC ((uint64_t)1000000)

struct cfg {
	bool serve;
	int family;
	union {
		struct sockaddr sa;
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} addr;
	socklen_t addr_len;
	uint64_t duration_s;
	uint64_t bytes;
	uint64_t hold_ms;
	uint64_t timeout_ms;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static const char *errno_name(int e)
{
	switch (e) {
	case ECONNRESET: return "ECONNRESET";
	case ECONNREFUSED: return "ECONNREFUSED";
	case ETIMEDOUT: return "ETIMEDOUT";
	case EPIPE: return "EPIPE";
	case EHOSTUNREACH: return "EHOSTUNREACH";
	case ENETUNREACH: return "ENETUNREACH";
	case EPROTO: return "EPROTO"; /* used below for a wrong echo */
	}
	return "EOTHER";
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " serve --addr ADDR --port P [--duration SEC]\n"
"       " PROG " connect --addr ADDR --port P [--bytes N] [--hold-ms MS]\n"
"                [--timeout-ms MS]\n"
"\n"
"serve    accept connections on ADDR:P (IPv4 or IPv6) for SEC seconds\n"
"         (1-%llu, default %llu) and echo back what each one sends, a\n"
"         thread per connection.\n"
"connect  connect to ADDR:P, send N bytes (1-%llu, default %llu), read\n"
"         them back, print `exchanged bytes=N connect_ms=X elapsed_ms=Y`,\n"
"         keep the connection open MS ms (0-%llu, default 0; SIGTERM\n"
"         ends the hold sooner), close.\n"
"         Every step must finish within --timeout-ms of the start\n"
"         (default %llu).\n"
"The last line of connect is `result=ok elapsed_ms=N` or\n"
"`result=ERRNO stage=connect|send|recv|hold elapsed_ms=N` (EPROTO: the\n"
"echo differed or ended early; stage=hold: the connection did not last\n"
"the hold, ECONNRESET a RST, EPIPE a close by the server).\n"
"Exit: 0 ok, 1 failed, 2 usage error.\n",
		MAX_DURATION_S, DEFAULT_DURATION_S, MAX_BYTES, DEFAULT_BYTES, MAX_MS,
		DEFAULT_TIMEOUT_MS);
}

enum { OPT_ADDR = 256, OPT_PORT, OPT_DURATION, OPT_BYTES, OPT_HOLD, OPT_TIMEOUT, OPT_HELP };

static const struct option long_opts[] = {
	{ "addr", required_argument, NULL, OPT_ADDR },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "bytes", required_argument, NULL, OPT_BYTES },
	{ "hold-ms", required_argument, NULL, OPT_HOLD },
	{ "timeout-ms", required_argument, NULL, OPT_TIMEOUT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

/* Return: 0 to run, 1 after --help, -1 on a usage error (already printed). */
static int parse_args(int argc, char **argv, struct cfg *c)
{
	bool client_opt = false, serve_opt = false;
	const char *addr = NULL;
	uint64_t port = 0;
	int opt;

	if (argc >= 2 && !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 1;
	}
	if (argc < 2 || (strcmp(argv[1], "serve") && strcmp(argv[1], "connect"))) {
		fprintf(stderr, PROG ": want a mode, serve or connect\n");
		return -1;
	}
	c->serve = !strcmp(argv[1], "serve");
	c->duration_s = DEFAULT_DURATION_S;
	c->bytes = DEFAULT_BYTES;
	c->timeout_ms = DEFAULT_TIMEOUT_MS;
	optind = 2;
	while ((opt = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_ADDR:
			addr = optarg;
			break;
		case OPT_PORT:
			if (parse_u64("port", optarg, 1, 65535, &port))
				return -1;
			break;
		case OPT_DURATION:
			if (parse_u64("duration", optarg, 1, MAX_DURATION_S, &c->duration_s))
				return -1;
			serve_opt = true;
			break;
		case OPT_BYTES:
			if (parse_u64("bytes", optarg, 1, MAX_BYTES, &c->bytes))
				return -1;
			client_opt = true;
			break;
		case OPT_HOLD:
			if (parse_u64("hold-ms", optarg, 0, MAX_MS, &c->hold_ms))
				return -1;
			client_opt = true;
			break;
		case OPT_TIMEOUT:
			if (parse_u64("timeout-ms", optarg, 1, MAX_MS, &c->timeout_ms))
				return -1;
			client_opt = true;
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
	if (!addr || !port) {
		fprintf(stderr, PROG ": --addr and --port are required\n");
		return -1;
	}
	if ((c->serve && client_opt) || (!c->serve && serve_opt)) {
		fprintf(stderr, PROG ": --duration is for serve, --bytes, --hold-ms and "
			"--timeout-ms for connect\n");
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
		fprintf(stderr, PROG ": --addr: '%s' is not an IPv4 or IPv6 address\n", addr);
		return -1;
	}
	return 0;
}

/* ---- serve --------------------------------------------------------------- */

static void *echo_conn(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char buf[BUF];
	ssize_t n, off, w;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (off = 0; off < n; off += w) {
			w = write(fd, buf + off, (size_t)(n - off));
			if (w <= 0)
				goto out;
		}
	}
out:
	close(fd);
	return NULL;
}

static int serve(const struct cfg *c)
{
	uint64_t end = now_ns() + c->duration_s * 1000000000ULL;
	int one = 1, fd;

	fd = socket(c->family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, &c->addr.sa, c->addr_len) || listen(fd, BACKLOG)) {
		fprintf(stderr, PROG ": listen: %s\n", strerror(errno));
		return 1;
	}
	fprintf(stderr, PROG ": listening\n");
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = now_ns();
		pthread_attr_t attr;
		pthread_t t;
		int cfd;

		if (now >= end)
			break;
		if (poll(&p, 1, (int)((end - now) / NSEC_PER_MSEC) + 1) <= 0)
			continue;
		cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0)
			continue;
		pthread_attr_init(&attr);
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		if (pthread_create(&t, &attr, echo_conn, (void *)(intptr_t)cfd))
			close(cfd);
		pthread_attr_destroy(&attr);
	}
	close(fd);
	return 0;
}

/* ---- connect ------------------------------------------------------------- */

/* Wait for @events on @fd until @deadline; 0 ready, else an errno. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	uint64_t now = now_ns();
	int r;

	if (now >= deadline)
		return ETIMEDOUT;
	r = poll(&p, 1, (int)((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC));
	if (r < 0)
		return errno;
	if (r == 0)
		return ETIMEDOUT;
	return 0;
}

static int fail(const char *stage, int err, uint64_t start)
{
	printf("result=%s stage=%s elapsed_ms=%.1f\n", errno_name(err), stage,
	       (double)(now_ns() - start) / 1e6);
	return 1;
}

/* connect: SIGTERM during the hold ends the hold (the connection's state
 * is then said as at its end); at any other time it ends the process, as
 * the default action would. */
static volatile sig_atomic_t holding;

static void on_term(int sig)
{
	(void)sig;
	if (!holding)
		_exit(128 + SIGTERM);
}

static int do_connect(const struct cfg *c)
{
	uint64_t start = now_ns(), deadline = start + c->timeout_ms * NSEC_PER_MSEC;
	uint64_t sent = 0, got = 0, connected;
	unsigned char *out = malloc(c->bytes), *in = malloc(c->bytes);
	socklen_t len = sizeof(int);
	int fd, err = 0, ret = 1;
	uint64_t i;

	if (!out || !in) {
		fprintf(stderr, PROG ": out of memory\n");
		goto done;
	}
	for (i = 0; i < c->bytes; i++)
		out[i] = (unsigned char)(i * 7 + (i >> 8));
	fd = socket(c->family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fprintf(stderr, PROG ": socket: %s\n", strerror(errno));
		goto done;
	}
	if (connect(fd, &c->addr.sa, c->addr_len) && errno != EINPROGRESS) {
		ret = fail("connect", errno, start);
		goto close_fd;
	}
	err = wait_fd(fd, POLLOUT, deadline);
	if (!err && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len))
		err = errno;
	if (err) {
		ret = fail("connect", err, start);
		goto close_fd;
	}
	connected = now_ns();
	/* Send and read back at once, so neither side's buffers fill up. */
	while (got < c->bytes) {
		struct pollfd p = { .fd = fd, .events = POLLIN | (sent < c->bytes ? POLLOUT : 0) };
		uint64_t now = now_ns();
		ssize_t n;

		if (now >= deadline) {
			ret = fail(sent < c->bytes ? "send" : "recv", ETIMEDOUT, start);
			goto close_fd;
		}
		if (poll(&p, 1, (int)((deadline - now) / NSEC_PER_MSEC) + 1) < 0)
			continue;
		if (p.revents & POLLOUT) {
			n = send(fd, out + sent, c->bytes - sent, MSG_NOSIGNAL);
			if (n < 0 && errno != EAGAIN) {
				ret = fail("send", errno, start);
				goto close_fd;
			}
			if (n > 0)
				sent += (uint64_t)n;
		}
		if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
			n = recv(fd, in + got, c->bytes - got, 0);
			if (n < 0 && errno != EAGAIN) {
				ret = fail("recv", errno, start);
				goto close_fd;
			}
			if (n == 0) {
				ret = fail("recv", EPROTO, start);
				goto close_fd;
			}
			if (n > 0)
				got += (uint64_t)n;
		}
	}
	if (memcmp(in, out, c->bytes)) {
		ret = fail("recv", EPROTO, start);
		goto close_fd;
	}
	printf("exchanged bytes=%" PRIu64 " connect_ms=%.1f elapsed_ms=%.1f\n", c->bytes,
	       (double)(connected - start) / 1e6, (double)(now_ns() - start) / 1e6);
	fflush(stdout);
	if (c->hold_ms) {
		struct timespec ts = { .tv_sec = (time_t)(c->hold_ms / 1000),
				       .tv_nsec = (long)(c->hold_ms % 1000) * 1000000L };

		ssize_t n;
		char b;

		sigset_t term, old;

		/* SIGTERM ends the hold early: blocked until ppoll() waits,
		 * which takes it atomically (no signal lost before the wait). */
		sigemptyset(&term);
		sigaddset(&term, SIGTERM);
		sigprocmask(SIG_BLOCK, &term, &old);
		holding = 1;
		ppoll(NULL, 0, &ts, &old);
		holding = 0;
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* Still open at the end of the hold? A RST meanwhile (a
		 * connection ended by the server's host) is ECONNRESET, a
		 * close by the server EPIPE. */
		n = recv(fd, &b, 1, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
			ret = fail("hold", n == 0 ? EPIPE : errno, start);
			goto close_fd;
		}
	}
	printf("result=ok elapsed_ms=%.1f\n", (double)(now_ns() - start) / 1e6);
	ret = 0;
close_fd:
	close(fd);
done:
	free(out);
	free(in);
	return ret;
}


int main(int argc, char **argv)
{
	struct cfg c = { 0 };
	int r = parse_args(argc, argv, &c);
	struct sigaction sa = { .sa_handler = on_term }; /* no SA_RESTART */

	if (r)
		return r < 0 ? 2 : 0;
	signal(SIGPIPE, SIG_IGN);
	/* connect: on_term(); serve: the default action. */
	if (!c.serve)
		sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return c.serve ? serve(&c) : do_connect(&c);
}
