/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* relay.c - testbed front-end that accepts eagerly, as nginx or HAProxy in
 * front of an upstream: it takes every connection at once (its own accept
 * queue stays empty), opens one connection to the backend per client and
 * relays the request and the answer both ways; when either side closes, the
 * pair is closed. The overload then queues at the backend's listener. At
 * the end stdout gets `accepted=N relayed=N backend_failed=N`. Bounded by
 * --duration and --max-conns. Exit 0 ok, 1 runtime error, 2 usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
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

#define PROG "relay"
#include "toolopts.h"

#define MAX_DURATION_S 3600ULL
#define MAX_CONNS 100000ULL
#define DEFAULT_MAX_CONNS 20000ULL
#define DEFAULT_BACKLOG 4096ULL
#define MAX_BACKLOG 65535ULL
#define FD_SPARE 64
#define EVENT_BATCH 256
#define BUF_BYTES 256 /* a request line or an answer; more is relayed in turns */
#define NSEC_PER_SEC ((uint64_t)1000000000)

/* One client and its backend connection. A side's buffer holds what was
 * read from it and not yet written to the other. */
struct pair {
	int fd[2];          /* [0] client, [1] backend */
	char buf[2][BUF_BYTES];
	size_t len[2];
	bool connected;     /* the backend connect() completed */
	bool eof[2];        /* the side sent FIN: the other gets it after buf */
	bool used;
};

/* An epoll tag: the pair index and the side, or the listener. */
#define TAG_LISTENER UINT64_MAX
#define TAG(i, side) (((uint64_t)(i) << 1) | (uint64_t)(side))

static struct pair *pairs;
static uint64_t nr_pairs, max_conns;
static uint64_t *free_list, nr_free;
/* Closed in this batch of events: free only after it, so a later event of
 * the batch for an old descriptor never reaches a reused pair. */
static uint64_t *closed_list, nr_closed;
static int ep = -1;
static uint64_t accepted, relayed, backend_failed;
static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void pair_close(uint64_t i)
{
	struct pair *p = &pairs[i];
	int s;

	for (s = 0; s < 2; s++)
		if (p->fd[s] >= 0)
			close(p->fd[s]); /* also leaves the epoll set */
	p->used = false;
	closed_list[nr_closed++] = i;
}

/* Interest of one side: read while its buffer has room and it sent no FIN;
 * write while the other side's buffer holds bytes (or, for the backend,
 * until connect() completes). */
static int side_update(uint64_t i, int s)
{
	struct pair *p = &pairs[i];
	struct epoll_event ev = { .data.u64 = TAG(i, s) };

	if (!p->eof[s] && p->len[s] < BUF_BYTES && (s == 0 || p->connected))
		ev.events |= EPOLLIN;
	if (p->len[!s] > 0 || (s == 1 && !p->connected))
		ev.events |= EPOLLOUT;
	return epoll_ctl(ep, EPOLL_CTL_MOD, p->fd[s], &ev);
}

static int pair_open(int cfd, const struct sockaddr *backend, socklen_t blen)
{
	struct epoll_event ev = { 0 };
	struct pair *p;
	uint64_t i;
	int bfd;

	if (!nr_free) {
		close(cfd);
		return 0;
	}
	bfd = socket(backend->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (bfd < 0) {
		close(cfd);
		backend_failed++;
		return 0;
	}
	if (connect(bfd, backend, blen) && errno != EINPROGRESS) {
		close(bfd);
		close(cfd);
		backend_failed++;
		return 0;
	}
	i = free_list[--nr_free];
	p = &pairs[i];
	*p = (struct pair){ .fd = { cfd, bfd }, .used = true };
	ev.data.u64 = TAG(i, 0);
	ev.events = EPOLLIN;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, cfd, &ev))
		goto fail;
	ev.data.u64 = TAG(i, 1);
	ev.events = EPOLLOUT;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, bfd, &ev))
		goto fail;
	return 0;
fail:
	fprintf(stderr, PROG ": epoll_ctl: %s\n", strerror(errno));
	pair_close(i);
	return -1;
}

/* Move what side @s has for the other side; false when the pair is done. */
static bool flush_to(struct pair *p, int s)
{
	int to = !s;
	ssize_t n;

	while (p->len[s] > 0) {
		n = send(p->fd[to], p->buf[s], p->len[s], MSG_NOSIGNAL);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK;
		memmove(p->buf[s], p->buf[s] + n, p->len[s] - (size_t)n);
		p->len[s] -= (size_t)n;
	}
	if (p->eof[s]) {
		/* The backend answered and closed: the answer is delivered,
		 * the client gets the close. A client that closed first is
		 * gone: so is its backend connection. */
		if (s == 1)
			relayed++;
		return false;
	}
	return true;
}

/* One event on side @s of pair @i; false when the pair is done. */
static bool on_event(uint64_t i, int s, uint32_t events)
{
	struct pair *p = &pairs[i];
	ssize_t n;

	if (s == 1 && !p->connected) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return true;
		if (getsockopt(p->fd[1], SOL_SOCKET, SO_ERROR, &err, &len) || err) {
			backend_failed++;
			return false;
		}
		p->connected = true;
	}
	if (events & EPOLLIN && !p->eof[s]) {
		n = recv(p->fd[s], p->buf[s] + p->len[s], BUF_BYTES - p->len[s], 0);
		if (n == 0)
			p->eof[s] = true;
		else if (n > 0)
			p->len[s] += (size_t)n;
		else if (errno != EAGAIN && errno != EWOULDBLOCK)
			return false; /* a RST: the other side is closed too */
	} else if (events & (EPOLLERR | EPOLLHUP) && !(events & EPOLLIN)) {
		return false;
	}
	if (p->connected && !flush_to(p, s))
		return false;
	if (p->connected && !flush_to(p, !s))
		return false;
	return !side_update(i, 0) && !side_update(i, 1);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: relay --addr ADDR --port PORT --backend-addr ADDR --backend-port PORT\n"
		"             [--duration SEC] [--max-conns N] [--backlog N]\n"
		"Accepts every connection on ADDR:PORT at once and relays each to the\n"
		"backend over a connection of its own, for --duration seconds (60).\n"
		"  --max-conns N  client connections open at once (%llu; more are closed)\n"
		"  --backlog N    the front's listen backlog (%llu)\n",
		DEFAULT_MAX_CONNS, DEFAULT_BACKLOG);
}

static int parse_addr(const char *opt, const char *s, uint64_t port,
		      struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		*len = sizeof(*v4);
		return 0;
	}
	if (inet_pton(AF_INET6, s, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*v6);
		return 0;
	}
	fprintf(stderr, PROG ": --%s: '%s' is not an IPv4 or IPv6 address\n", opt, s);
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "backend-addr", required_argument, NULL, 'A' },
		{ "backend-port", required_argument, NULL, 'P' },
		{ "duration", required_argument, NULL, 'd' },
		{ "max-conns", required_argument, NULL, 'm' },
		{ "backlog", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *addr = NULL, *baddr = NULL;
	uint64_t port = 0, bport = 0, duration = 60, backlog = DEFAULT_BACKLOG, deadline, i;
	struct sockaddr_storage front, back;
	socklen_t flen, blen;
	struct epoll_event evs[EVENT_BATCH], ev = { .events = EPOLLIN, .data.u64 = TAG_LISTENER };
	struct rlimit rl;
	struct sigaction sa = { .sa_handler = on_signal };
	int opt, lfd, one = 1, n, k, rc = 0;

	max_conns = DEFAULT_MAX_CONNS;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'a': addr = optarg; break;
		case 'A': baddr = optarg; break;
		case 'p':
			if (parse_u64("port", optarg, 1, 65535, &port))
				return 2;
			break;
		case 'P':
			if (parse_u64("backend-port", optarg, 1, 65535, &bport))
				return 2;
			break;
		case 'd':
			if (parse_u64("duration", optarg, 1, MAX_DURATION_S, &duration))
				return 2;
			break;
		case 'm':
			if (parse_u64("max-conns", optarg, 1, MAX_CONNS, &max_conns))
				return 2;
			break;
		case 'b':
			if (parse_u64("backlog", optarg, 1, MAX_BACKLOG, &backlog))
				return 2;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !addr || !baddr || !port || !bport) {
		usage(stderr);
		return 2;
	}
	if (parse_addr("addr", addr, port, &front, &flen) ||
	    parse_addr("backend-addr", baddr, bport, &back, &blen))
		return 2;

	/* Two descriptors per client connection: raise the soft limit, within
	 * the hard one; past it, fewer connections. */
	if (getrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, PROG ": read the open-file limit: %s\n", strerror(errno));
		return 1;
	}
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 2 * max_conns + FD_SPARE) {
		if (rl.rlim_max <= 2 * FD_SPARE) {
			fprintf(stderr, PROG ": open-file hard limit %llu is too low\n",
				(unsigned long long)rl.rlim_max);
			return 1;
		}
		max_conns = (rl.rlim_max - FD_SPARE) / 2;
	}
	rl.rlim_cur = 2 * max_conns + FD_SPARE;
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		fprintf(stderr, PROG ": open-file limit %llu: %s\n",
			(unsigned long long)rl.rlim_cur, strerror(errno));
		return 1;
	}
	pairs = calloc(max_conns, sizeof(*pairs));
	free_list = calloc(max_conns, sizeof(*free_list));
	closed_list = calloc(max_conns, sizeof(*closed_list));
	if (!pairs || !free_list || !closed_list) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	for (i = 0; i < max_conns; i++)
		free_list[nr_free++] = max_conns - 1 - i;
	nr_pairs = max_conns;

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	lfd = socket(front.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (lfd < 0 || ep < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&front, flen) || listen(lfd, (int)backlog) ||
	    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev)) {
		fprintf(stderr, PROG ": listen on %s port %llu: %s\n", addr,
			(unsigned long long)port, strerror(errno));
		return 1;
	}

	deadline = now_ns() + duration * NSEC_PER_SEC;
	while (!stop && now_ns() < deadline) {
		n = epoll_wait(ep, evs, EVENT_BATCH, 100);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, PROG ": epoll_wait: %s\n", strerror(errno));
			rc = 1;
			break;
		}
		for (k = 0; k < n; k++) {
			uint64_t tag = evs[k].data.u64;

			if (tag == TAG_LISTENER) {
				/* Eager: everything the queue holds, now. */
				for (;;) {
					int cfd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

					if (cfd < 0)
						break;
					accepted++;
					if (pair_open(cfd, (struct sockaddr *)&back, blen)) {
						rc = 1;
						stop = 1;
						break;
					}
				}
				continue;
			}
			/* A pair closed earlier in this batch may still have
			 * an event queued for its other side. */
			if (!pairs[tag >> 1].used)
				continue;
			if (!on_event(tag >> 1, (int)(tag & 1), evs[k].events))
				pair_close(tag >> 1);
		}
		while (nr_closed)
			free_list[nr_free++] = closed_list[--nr_closed];
	}
	for (i = 0; i < nr_pairs; i++)
		if (pairs[i].used)
			pair_close(i);
	close(lfd);
	close(ep);
	free(pairs);
	free(free_list);
	free(closed_list);
	printf("accepted=%llu relayed=%llu backend_failed=%llu\n", (unsigned long long)accepted,
	       (unsigned long long)relayed, (unsigned long long)backend_failed);
	return rc;
}
