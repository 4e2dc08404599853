/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* uringserver.c - testbed server that accepts through io_uring
 * (IORING_OP_ACCEPT), never through accept(2): one connection at a time,
 * answered "OK\n" after --service-ms, then closed. The accept tracepoints
 * do not see these accepts. Raw io_uring syscalls, no liburing.
 * Stops after --duration seconds once a connection comes (the teardown
 * kills it otherwise). Exit 0 ok, 1 runtime error, 2 usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/io_uring.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PROG "uringserver"
#include "toolopts.h"

#define MAX_DURATION_S 600ULL
#define MAX_SERVICE_MS 10000ULL
#define MAX_BACKLOG 65535ULL

struct ring {
	int fd;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_sqe *sqes;
	struct io_uring_cqe *cqes;
};

static int ring_open(struct ring *r)
{
	struct io_uring_params p;
	size_t sq_len, cq_len;
	char *sq, *cq;

	memset(&p, 0, sizeof(p));
	r->fd = (int)syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -1;
	sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	sq = mmap(NULL, sq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL, cq_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r->fd,
		  IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || r->sqes == MAP_FAILED)
		return -1;
	r->sq_tail = (unsigned int *)(sq + p.sq_off.tail);
	r->sq_mask = (unsigned int *)(sq + p.sq_off.ring_mask);
	r->sq_array = (unsigned int *)(sq + p.sq_off.array);
	r->cq_head = (unsigned int *)(cq + p.cq_off.head);
	r->cq_tail = (unsigned int *)(cq + p.cq_off.tail);
	r->cq_mask = (unsigned int *)(cq + p.cq_off.ring_mask);
	r->cqes = (struct io_uring_cqe *)(cq + p.cq_off.cqes);
	return 0;
}

/* One accept through the ring: the new fd, or -errno. */
static int ring_accept(struct ring *r, int lfd)
{
	unsigned int tail = *r->sq_tail, idx = tail & *r->sq_mask, head;
	struct io_uring_sqe *sqe = &r->sqes[idx];
	int res;

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_ACCEPT;
	sqe->fd = lfd;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
		return -errno;
	head = *r->cq_head;
	while (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) {
		if (syscall(__NR_io_uring_enter, r->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0)
			return -errno;
	}
	res = r->cqes[head & *r->cq_mask].res;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: " PROG " --addr ADDR --port P --service-ms MS [--backlog B] "
		   "[--duration SEC]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'p' },
		{ "service-ms", required_argument, NULL, 's' },
		{ "backlog", required_argument, NULL, 'b' },
		{ "duration", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint64_t port = 0, service_ms = 0, backlog = 128, duration = 30, accepted = 0;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct ring r;
	const char *addr = NULL;
	time_t end;
	int c, lfd, one = 1;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'a':
			addr = optarg;
			break;
		case 'p':
			if (parse_u64("port", optarg, 1, 65535, &port))
				return 2;
			break;
		case 's':
			if (parse_u64("service-ms", optarg, 0, MAX_SERVICE_MS, &service_ms))
				return 2;
			break;
		case 'b':
			if (parse_u64("backlog", optarg, 1, MAX_BACKLOG, &backlog))
				return 2;
			break;
		case 'd':
			if (parse_u64("duration", optarg, 1, MAX_DURATION_S, &duration))
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
	if (!addr || !port || optind != argc || inet_pton(AF_INET, addr, &sa.sin_addr) != 1) {
		usage(stderr);
		return 2;
	}
	sa.sin_port = htons((uint16_t)port);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, (int)backlog)) {
		fprintf(stderr, PROG ": listen on %s:%" PRIu64 ": %s\n", addr, port, strerror(errno));
		return 1;
	}
	if (ring_open(&r)) {
		fprintf(stderr, PROG ": io_uring setup: %s\n", strerror(errno));
		return 1;
	}
	end = time(NULL) + (time_t)duration;
	while (time(NULL) < end) {
		struct timespec svc = {
			.tv_sec = (time_t)(service_ms / 1000),
			.tv_nsec = (long)(service_ms % 1000) * 1000000L,
		};
		int fd = ring_accept(&r, lfd);
		ssize_t w;

		if (fd < 0) {
			fprintf(stderr, PROG ": io_uring accept: %s\n", strerror(-fd));
			return 1;
		}
		accepted++;
		nanosleep(&svc, NULL);
		/* The client may have gone: nothing to do then. */
		w = write(fd, "OK\n", 3);
		(void)w;
		close(fd);
	}
	printf("accepted=%" PRIu64 "\n", accepted);
	return 0;
}
