/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* shedd_latency.h - report service latency to shedd. Header only: an
 * application opens the socket once and sends one datagram per request.
 *
 *   struct shedd_latency_sender s;
 *   shedd_latency_sender_open(&s, "/run/shedd/eth0.sock");
 *   ... serve a request that took ns nanoseconds ...
 *   shedd_latency_send(&s, ns);  // never blocks; a full socket drops it,
 *                                // and the next datagram tells shedd so
 *
 * Wire format: one datagram per sample, host byte order (the socket is
 * local):
 *   offset 0  __u32 magic    SHEDD_LATENCY_MAGIC ("SHDL")
 *   offset 4  __u16 version  1 or 2
 *   offset 6  __u16 flags    0
 *   offset 8  __u64 latency_ns
 * version 2 (24 bytes) adds:
 *   offset 16 __u32 unsent   samples this sender dropped (socket full)
 *                            since its last datagram that went through
 *   offset 20 __u32 reserved 0
 * Version 1 (16 bytes, shedd_latency_open/shedd_latency_report) stays
 * accepted; its losses are invisible to shedd. shedd counts and ignores any
 * datagram that is neither, and one whose latency_ns is above one hour
 * (3600 * 10^9, the cap of the log lines: a request that took longer is
 * no delay a load shedder acts on, and the sums could wrap).
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
#define SHEDD_LATENCY_VERSION 1   /* 16 bytes, no loss count */
#define SHEDD_LATENCY_VERSION_2 2 /* 24 bytes, with the sender's loss count */
#ifndef SHEDD_LATENCY_SNDBUF
#define SHEDD_LATENCY_SNDBUF (4 << 20) /* asked of SO_SNDBUF, bytes */
#endif

struct shedd_latency_sample {
	uint32_t magic;
	uint16_t version;
	uint16_t flags;
	uint64_t latency_ns;
};

struct shedd_latency_sample2 {
	uint32_t magic;
	uint16_t version;
	uint16_t flags;
	uint64_t latency_ns;
	uint32_t unsent;
	uint32_t reserved;
};

_Static_assert(sizeof(struct shedd_latency_sample) == 16, "wire format");
_Static_assert(sizeof(struct shedd_latency_sample2) == 24, "wire format");

/* A connected, non-blocking datagram socket to shedd, or -1 with errno. */
static inline int shedd_latency_open(const char *path)
{
	struct sockaddr_un sa;
	int fd, sndbuf = SHEDD_LATENCY_SNDBUF;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* A datagram in flight is charged to the sender until shedd reads
	 * it: a larger send buffer rides out a longer pause of shedd (the
	 * kernel caps it at net.core.wmem_max; failure is harmless). */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
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

/* A sender that counts what it could not send, and tells shedd. One per
 * thread (it is not locked). */
struct shedd_latency_sender {
	int fd;
	uint32_t unsent; /* dropped since the last datagram that went through */
};

/* Open @s on shedd's socket; 0, or -1 with errno. */
static inline int shedd_latency_sender_open(struct shedd_latency_sender *s, const char *path)
{
	s->unsent = 0;
	s->fd = shedd_latency_open(path);
	return s->fd < 0 ? -1 : 0;
}

/* Send one sample; 0, or -1 with errno (EAGAIN: shedd is behind; the
 * sample is counted and reported with the next one that goes through). */
static inline int shedd_latency_send(struct shedd_latency_sender *s, uint64_t latency_ns)
{
	struct shedd_latency_sample2 m = {
		.magic = SHEDD_LATENCY_MAGIC,
		.version = SHEDD_LATENCY_VERSION_2,
		.flags = 0,
		.latency_ns = latency_ns,
		.unsent = s->unsent,
		.reserved = 0,
	};

	if (send(s->fd, &m, sizeof(m), MSG_DONTWAIT) == (ssize_t)sizeof(m)) {
		s->unsent = 0;
		return 0;
	}
	if (s->unsent != UINT32_MAX)
		s->unsent++;
	return -1;
}

static inline void shedd_latency_sender_close(struct shedd_latency_sender *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

#endif /* SHEDD_LATENCY_H */
