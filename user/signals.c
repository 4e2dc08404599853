// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* signals.c - the signal sources of the control loop. Every read is
 * non-blocking and bounded, so a tick costs the same whatever the load.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <unistd.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "shedd_latency.h"
#include "signals.h"
#include "sojourn.skel.h"

#define MAX_LATENCY_PER_TICK 200000 /* samples read per tick, at most */
#define DIAG_BUF 32768

static int read_netstat(__u64 *overflows, __u64 *drops)
{
	char buf[16384];
	ssize_t n;
	int fd = open("/proc/net/netstat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return netstat_parse(buf, overflows, drops);
}

static bool port_protected(const struct signals *s, __u16 port)
{
	int i;

	if (!s->nr_ports)
		return true;
	for (i = 0; i < s->nr_ports; i++)
		if (s->ports[i] == port)
			return true;
	return false;
}

/* Sum accept-queue depth (idiag_rqueue) and backlog (idiag_wqueue) of the
 * protected listeners of one address family. */
static int diag_family(struct signals *s, __u8 family, __u64 *depth, __u64 *backlog)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		},
		.req = {
			.sdiag_family = family,
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_states = 1 << TCP_LISTEN,
		},
	};
	static char buf[DIAG_BUF];

	if (send(s->diag_fd, &msg, sizeof(msg), 0) < 0)
		return -errno;
	for (;;) {
		ssize_t len = recv(s->diag_fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (len < 0)
			return -errno;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			struct inet_diag_msg *d;

			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EIO;
			d = NLMSG_DATA(h);
			if (!port_protected(s, ntohs(d->id.idiag_sport)))
				continue;
			*depth += d->idiag_rqueue;
			*backlog += d->idiag_wqueue;
		}
	}
}

/* Only a stale socket may be unlinked to bind @path: never a file that is
 * not a socket, never a socket someone still receives on (a connect()
 * reaches it). True, with the reason printed, when @path is taken. */
static bool latency_path_taken(const char *path, const struct sockaddr_un *sa)
{
	struct stat st;
	int probe, live;

	if (lstat(path, &st))
		return false;
	if (!S_ISSOCK(st.st_mode)) {
		fprintf(stderr, "shedd: latency socket %s: exists and is not a socket; "
				"leaving it alone and running without service latency\n", path);
		return true;
	}
	probe = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return false;
	live = !connect(probe, (const struct sockaddr *)sa, sizeof(*sa));
	close(probe);
	if (live)
		fprintf(stderr, "shedd: latency socket %s: another process receives on it; "
				"running without service latency\n", path);
	return live;
}

static int open_latency_socket(struct signals *s, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)];
	char *slash;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "shedd: latency socket path too long: %s\n", path);
		return -ENAMETOOLONG;
	}
	/* Make the missing folders of the path (/run/shedd/ns:INODE/). */
	snprintf(dir, sizeof(dir), "%s", path);
	for (slash = strchr(dir + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(dir, 0755);
		*slash = '/';
	}
	strcpy(sa.sun_path, path);
	if (latency_path_taken(path, &sa))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(path); /* a stale socket of an earlier shedd (checked above) */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0660)) {
		int err = -errno;

		fprintf(stderr, "shedd: latency socket %s: %s; running without service latency\n",
			path, strerror(errno));
		close(fd);
		return err;
	}
	s->lat_fd = fd;
	snprintf(s->lat_path, sizeof(s->lat_path), "%s", path);
	return 0;
}

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

/* libbpf attaches tracepoints through tracefs: mount it if nobody has. */
static void ensure_tracefs(void)
{
	struct statfs st;

	if (statfs("/sys/kernel/tracing", &st) == 0 && st.f_type == TRACEFS_MAGIC)
		return;
	if (statfs("/sys/kernel/debug/tracing", &st) == 0 && st.f_type == TRACEFS_MAGIC)
		return;
	if (mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL))
		fprintf(stderr, "shedd: mount tracefs on /sys/kernel/tracing: %s\n", strerror(errno));
}

static int open_sojourn(struct signals *s, const struct shedd_options *o)
{
	struct stat st;
	__u8 one = 1;
	int i, err;

	if (stat("/proc/self/ns/net", &st))
		return -errno;
	ensure_tracefs();
	s->skel = sojourn_bpf__open();
	if (!s->skel)
		return -errno;
	s->skel->rodata->netns_ino = (__u32)st.st_ino;
	s->skel->rodata->all_ports = o->nr_ports == 0;
	err = sojourn_bpf__load(s->skel);
	if (err)
		return err;
	for (i = 0; i < o->nr_ports; i++) {
		__u16 port = o->ports[i];

		bpf_map_update_elem(bpf_map__fd(s->skel->maps.sj_ports), &port, &one, BPF_ANY);
	}
	err = sojourn_bpf__attach(s->skel);
	if (err)
		return err;
	s->percpu = calloc((size_t)s->ncpus, sizeof(*s->percpu));
	s->zero = calloc((size_t)s->ncpus, sizeof(*s->zero));
	return s->percpu && s->zero ? 0 : -ENOMEM;
}

void signals_open(struct signals *s, const struct shedd_options *o, int ncpus)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->ncpus = ncpus;
	s->diag_fd = -1;
	s->lat_fd = -1;
	memcpy(s->ports, o->ports, sizeof(s->ports));
	s->nr_ports = o->nr_ports;

	err = open_sojourn(s, o);
	if (err) {
		fprintf(stderr, "shedd: accept-queue sojourn probes unavailable (%s); "
				"running without them\n", strerror(-err));
		sojourn_bpf__destroy(s->skel);
		s->skel = NULL;
	}

	s->diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (s->diag_fd < 0)
		fprintf(stderr, "shedd: sock_diag unavailable (%s); running without "
				"accept-queue depth\n", strerror(errno));

	s->have_netstat = read_netstat(&s->last_overflows, &s->last_drops) == 0;
	if (!s->have_netstat)
		fprintf(stderr, "shedd: /proc/net/netstat unreadable; running without "
				"listen overflows\n");

	if (o->latency_socket[0])
		open_latency_socket(s, o->latency_socket);
}

static void read_sojourn(struct signals *s, struct signal_report *r)
{
	__u32 slot;
	int fd;

	if (!s->skel)
		return;
	/* Flip first: the probes move to the other slot, this one is ours. */
	slot = s->skel->bss->epoch & 1;
	__atomic_store_n(&s->skel->bss->epoch, s->skel->bss->epoch + 1, __ATOMIC_RELEASE);
	fd = bpf_map__fd(s->skel->maps.sojourn);
	if (bpf_map_lookup_elem(fd, &slot, s->percpu))
		return;
	bpf_map_update_elem(fd, &slot, s->zero, BPF_ANY);
	agg_from_sojourn(&r->sojourn, s->percpu, s->ncpus);
	r->have_sojourn = true;
}

static void read_latency(struct signals *s, struct signal_report *r)
{
	__u8 buf[64];
	int i;

	if (s->lat_fd < 0)
		return;
	r->have_latency = true;
	for (i = 0; i < MAX_LATENCY_PER_TICK; i++) {
		ssize_t n = recv(s->lat_fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
		__u64 ns;

		if (n < 0)
			break;
		if (latency_decode(buf, (size_t)n, &ns)) {
			r->latency_bad++;
			continue;
		}
		agg_add(&r->latency, ns);
	}
}

void signals_read(struct signals *s, struct signal_report *r)
{
	__u64 ovf, drops;

	memset(r, 0, sizeof(*r));
	read_sojourn(s, r);
	if (s->diag_fd >= 0) {
		r->have_depth = diag_family(s, AF_INET, &r->depth, &r->backlog) == 0 &&
				diag_family(s, AF_INET6, &r->depth, &r->backlog) == 0;
	}
	if (s->have_netstat && read_netstat(&ovf, &drops) == 0) {
		r->have_netstat = true;
		r->overflows = ovf >= s->last_overflows ? ovf - s->last_overflows : 0;
		r->drops = drops >= s->last_drops ? drops - s->last_drops : 0;
		s->last_overflows = ovf;
		s->last_drops = drops;
	}
	read_latency(s, r);
}

void signals_close(struct signals *s)
{
	sojourn_bpf__destroy(s->skel);
	s->skel = NULL;
	if (s->diag_fd >= 0)
		close(s->diag_fd);
	if (s->lat_fd >= 0) {
		struct stat st;

		close(s->lat_fd);
		if (!lstat(s->lat_path, &st) && S_ISSOCK(st.st_mode))
			unlink(s->lat_path);
	}
	s->diag_fd = s->lat_fd = -1;
	free(s->percpu);
	free(s->zero);
	s->percpu = s->zero = NULL;
}
