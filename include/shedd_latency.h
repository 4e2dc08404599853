/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* shedd_latency.h - report service latency to shedd. Header only: an
 * application opens the socket once and sends one datagram per request.
 *
 *   int fd = shedd_latency_open("/run/shedd/eth0.sock");
 *   ... serve a request that took ns nanoseconds ...
 *   shedd_latency_report(fd, ns);   // never blocks; a full socket drops it
 *
 * Wire format: one 16-byte datagram per sample, host byte order (the socket
 * is local):
 *   offset 0  __u32 magic    SHEDD_LATENCY_MAGIC ("SHDL")
 *   offset 4  __u16 version  SHEDD_LATENCY_VERSION (1)
 *   offset 6  __u16 flags    0
 *   offset 8  __u64 latency_ns
 * shedd counts and ignores any datagram that is not exactly this.
 */
#ifndef SHEDD_LATENCY_H
#define SHEDD_LATENCY_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define SHEDD_LATENCY_MAGIC 0x4c444853u /* "SHDL" read as little endian */
#define SHEDD_LATENCY_VERSION 1

struct shedd_latency_sample {
	uint32_t magic;
	uint16_t version;
	uint16_t flags;
	uint64_t latency_ns;
};

_Static_assert(sizeof(struct shedd_latency_sample) == 16, "wire format");

/* A connected, non-blocking datagram socket to shedd, or -1 with errno. */
static inline int shedd_latency_open(const char *path)
{
	struct sockaddr_un sa;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	strcpy(sa.sun_path, path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* Send one sample; 0 or -1 with errno (EAGAIN: shedd is behind, dropped). */
static inline int shedd_latency_report(int fd, uint64_t latency_ns)
{
	struct shedd_latency_sample s = {
		.magic = SHEDD_LATENCY_MAGIC,
		.version = SHEDD_LATENCY_VERSION,
		.flags = 0,
		.latency_ns = latency_ns,
	};

	return send(fd, &s, sizeof(s), MSG_DONTWAIT) == (ssize_t)sizeof(s) ? 0 : -1;
}

#endif /* SHEDD_LATENCY_H */
