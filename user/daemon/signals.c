// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* signals.c - the signal sources of the control loop. Every read is
 * non-blocking and bounded, so a tick costs the same whatever the load.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
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
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "aimd.h"
#include "log.h"
#include "service.h"
#include "shedd_latency.h"
#include "signals.h"
#include "sockdiag.h"
#include "sojourn.skel.h"

/* A small /proc file into @buf as a string, in one read: 0, or -1. */
static int read_proc_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

/* /proc/net/snmp is about 1.6 KiB: a larger file is cut, which
 * proc_counter_parse() reads as far as it goes. */
static int read_passive_opens(__u64 *v)
{
	char buf[8192];

	if (read_proc_file("/proc/net/snmp", buf, sizeof(buf)))
		return -1;
	return proc_counter_parse(buf, strlen(buf), "Tcp", "PassiveOpens", v);
}

static int read_netstat(__u64 *overflows, __u64 *drops)
{
	char buf[16384];

	if (read_proc_file("/proc/net/netstat", buf, sizeof(buf)))
		return -1;
	return netstat_parse(buf, overflows, drops);
}

/* The queue group of a listener on @port: 0 for a protected port (any
 * port without --port), 1 + i for backend port i, -1 for a listener that
 * is neither, which never counts. */
static int port_group(const struct signals *s, __u16 port)
{
	int i;

	if (!s->nr_ports)
		return 0;
	for (i = 0; i < s->nr_ports; i++)
		if (s->ports[i] == port)
			return 0;
	for (i = 0; i < s->nr_backend_ports; i++)
		if (s->backend_ports[i] == port)
			return 1 + i;
	return -1;
}

/* Without --port every port is protected, but not every listener of the
 * namespace is the protected service: only one the interface's SYNs can
 * reach (listener_reachable()). */
static bool reachable(const struct signals *s, const struct inet_diag_msg *d)
{
	return listener_reachable(d->idiag_family, (const __u8 *)d->id.idiag_src,
				  d->id.idiag_if, s->ifindex);
}

/* One listener of the dump into this tick's table, if it is protected or
 * a backend. */
static void diag_listener(const struct inet_diag_msg *d, size_t len, void *arg)
{
	struct signals *s = arg;
	struct listener_table *t = s->lt_cur;
	struct listener_sample *l;
	int g = port_group(s, ntohs(d->id.idiag_sport));

	if (g < 0 || t->n >= MAX_LISTENERS || (!s->nr_ports && !reachable(s, d)))
		return;
	l = &t->l[t->n++];
	*l = (struct listener_sample){
		.id = {
			.ino = d->idiag_inode,
			.cookie = (__u64)d->id.idiag_cookie[1] << 32 | d->id.idiag_cookie[0],
			.family = d->idiag_family,
			.port = ntohs(d->id.idiag_sport),
		},
		.group = g,
		.depth = d->idiag_rqueue,
		.backlog = d->idiag_wqueue,
	};
	memcpy(l->id.addr, d->id.idiag_src, d->idiag_family == AF_INET6 ? 16 : 4);
	l->have_drops = !diag_msg_drops(d, len, &l->drops);
}

/* Add the protected and backend listeners of one address family to their
 * groups. */
static int diag_family(struct signals *s, __u8 family)
{
	return sockdiag_dump(s->diag_fd, family, 1 << TCP_LISTEN, 1 << (INET_DIAG_SKMEMINFO - 1),
			     diag_listener, s);
}

/* The latency drain: a thread that sleeps in poll() on the socket and
 * empties it in batches of recvmmsg() as soon as anything arrives, so the
 * socket never holds more than a burst; signals_read() takes what it
 * gathered under a lock. A datagram is a binary sample or a log line
 * (nginx, HAProxy): the buffers hold the longest line accepted and one byte
 * more, so a longer one comes back with MSG_TRUNC and is counted. */
#define LATENCY_BATCH 256
#define LATENCY_DGRAM_MAX (LOGLINE_MAX_LEN + 1)

/* 1 MiB: on the heap, drained by one thread at a time (the drain thread,
 * or signals_read() when it could not start). */
struct latency_bufs {
	__u8 buf[LATENCY_BATCH][LATENCY_DGRAM_MAX];
	struct mmsghdr msgs[LATENCY_BATCH];
	struct iovec iov[LATENCY_BATCH];
};

static void latency_take(struct signals *s, const __u8 *buf, size_t len, bool truncated)
{
	struct latency_datagram d;
	enum logline_reject r = latency_datagram_decode(buf, len, truncated, &d);

	if (r != LOGLINE_OK) {
		s->lat_why[r]++;
		return;
	}
	agg_add(&s->lat_agg, d.ns);
	s->lat_lost += d.unsent;
	if (d.log)
		s->lat_log++;
	if (latency_served(&d))
		s->lat_served++;
	if (d.conn_req)
		s->lat_seq++;
	if (d.conn_req > 1)
		s->lat_next++;
	if (d.have_upstream)
		agg_add(&s->lat_upstream, d.upstream_ns);
}

static void latency_drain(struct signals *s)
{
	struct latency_bufs *b = s->lat_bufs;
	int i, n;

	for (;;) {
		for (i = 0; i < LATENCY_BATCH; i++) {
			b->iov[i] = (struct iovec){ .iov_base = b->buf[i],
						    .iov_len = sizeof(b->buf[i]) };
			b->msgs[i] = (struct mmsghdr){
				.msg_hdr = { .msg_iov = &b->iov[i], .msg_iovlen = 1 } };
		}
		n = recvmmsg(s->lat_fd, b->msgs, LATENCY_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			return;
		pthread_mutex_lock(&s->lat_lock);
		for (i = 0; i < n; i++)
			latency_take(s, b->buf[i], b->msgs[i].msg_len,
				     b->msgs[i].msg_hdr.msg_flags & MSG_TRUNC);
		pthread_mutex_unlock(&s->lat_lock);
		if (n < LATENCY_BATCH)
			return;
	}
}

static void *latency_thread(void *arg)
{
	struct signals *s = arg;
	struct pollfd p[2] = {
		{ .fd = s->lat_fd, .events = POLLIN },
		{ .fd = s->lat_stop[0], .events = POLLIN },
	};

	/* The thread only reads a bound socket: it keeps no capability
	 * (they are per thread; the main thread drops its own after attach). */
	service_drop_thread_caps();
	while (!__atomic_load_n(&s->lat_stopping, __ATOMIC_ACQUIRE)) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (p[0].revents & POLLIN)
			latency_drain(s);
	}
	return NULL;
}

static int latency_thread_start(struct signals *s)
{
	int err;

	if (pipe2(s->lat_stop, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	pthread_mutex_init(&s->lat_lock, NULL);
	err = pthread_create(&s->lat_thread, NULL, latency_thread, s);
	if (err) {
		log_warn("latency thread: %s; reading the latency socket "
			 "once a tick", strerror(err));
		return 0;
	}
	s->lat_threaded = true;
	return 0;
}

static void latency_thread_stop(struct signals *s)
{
	if (s->lat_threaded) {
		__atomic_store_n(&s->lat_stopping, true, __ATOMIC_RELEASE);
		if (write(s->lat_stop[1], "x", 1) < 0)
			log_warn("stop the latency thread: %s", strerror(errno));
		pthread_join(s->lat_thread, NULL);
		s->lat_threaded = false;
	}
	if (s->lat_stop[0] >= 0) {
		close(s->lat_stop[0]);
		close(s->lat_stop[1]);
		pthread_mutex_destroy(&s->lat_lock);
	}
	s->lat_stop[0] = s->lat_stop[1] = -1;
}

/* A UNIX datagram socket takes net.unix.max_dgram_qlen (10 by default)
 * from its namespace when it is made, and a sender finds it full past that
 * many datagrams, whatever SO_RCVBUF says. Make ours with a deeper queue:
 * raise the sysctl for the socket() call only, then put it back. */
#define LATENCY_QLEN 16384
#define LATENCY_RCVBUF (8 << 20)
#define QLEN_PATH "/proc/sys/net/unix/max_dgram_qlen"

static int read_int_file(const char *path, long *v)
{
	char buf[32];

	if (read_proc_file(path, buf, sizeof(buf)))
		return -1;
	*v = strtol(buf, NULL, 10);
	return 0;
}

static int write_int_file(const char *path, long v)
{
	char buf[32];
	int fd = open(path, O_WRONLY | O_CLOEXEC), len, ok;

	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%ld\n", v);
	ok = write(fd, buf, (size_t)len) == len;
	close(fd);
	return ok ? 0 : -1;
}

static int latency_socket_deep(void)
{
	long old = 0;
	bool raised = false;
	int fd, rcvbuf = LATENCY_RCVBUF;

	if (!read_int_file(QLEN_PATH, &old) && old < LATENCY_QLEN) {
		raised = !write_int_file(QLEN_PATH, LATENCY_QLEN);
		if (!raised)
			log_warn("raise %s to %d: %s; the latency socket queues "
				 "only %ld samples", QLEN_PATH, LATENCY_QLEN,
				 strerror(errno), old);
	}
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (raised && write_int_file(QLEN_PATH, old))
		log_warn("restore %s to %ld: %s", QLEN_PATH, old, strerror(errno));
	/* Root may pass net.core.rmem_max; the queue length is the real bound. */
	if (fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	return fd;
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
		log_warn("latency socket %s: exists and is not a socket; "
			 "leaving it alone and running without service latency", path);
		return true;
	}
	probe = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (probe < 0)
		return false;
	live = !connect(probe, (const struct sockaddr *)sa, sizeof(*sa));
	close(probe);
	if (live)
		log_warn("latency socket %s: another process receives on it; "
			 "running without service latency", path);
	return live;
}

static int open_latency_socket(struct signals *s, const char *path,
			       const struct shedd_options *o)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)];
	char *slash;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_warn("latency socket path too long: %s", path);
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
	fd = latency_socket_deep();
	if (fd < 0)
		return -errno;
	unlink(path); /* a stale socket of an earlier shedd (checked above) */
	/* The group first, then the mode: a server's workers (www-data,
	 * haproxy) write to it through the group. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int err = -errno;

		log_warn("latency socket %s: %s; running without service latency",
			 path, strerror(errno));
		close(fd);
		return err;
	}
	if ((o->latency_group_set && chown(path, (uid_t)-1, (gid_t)o->latency_gid)) ||
	    chmod(path, 0660)) {
		int err = -errno;

		log_warn("latency socket %s: %s %s: %s; running without service "
			 "latency", path, o->latency_group_set ? "group and mode" : "mode",
			 "0660", strerror(errno));
		close(fd);
		unlink(path);
		return err;
	}
	s->lat_bufs = calloc(1, sizeof(*s->lat_bufs));
	if (!s->lat_bufs) {
		log_warn("latency socket %s: out of memory; running without "
			 "service latency", path);
		close(fd);
		unlink(path);
		return -ENOMEM;
	}
	s->lat_fd = fd;
	snprintf(s->lat_path, sizeof(s->lat_path), "%s", path);
	if (o->latency_group_set)
		log_info("latency socket %s (group %u, mode 0660): binary samples "
			 "and nginx/HAProxy log lines", path, o->latency_gid);
	else
		log_info("latency socket %s (mode 0660): binary samples and "
			 "nginx/HAProxy log lines", path);
	return latency_thread_start(s);
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
		log_warn("mount tracefs on /sys/kernel/tracing: %s", strerror(errno));
}

static int open_sojourn(struct signals *s, const struct shedd_options *o, int prefix_v4_fd,
			int prefix_v6_fd)
{
	struct stat st;
	__u8 prot = SHEDD_SJ_PROTECTED, backend = SHEDD_SJ_BACKEND;
	int i, err;

	if (stat("/proc/self/ns/net", &st))
		return -errno;
	ensure_tracefs();
	s->skel = sojourn_bpf__open();
	if (!s->skel)
		return -errno;
	s->skel->rodata->netns_ino = (__u32)st.st_ino;
	s->skel->rodata->all_ports = o->nr_ports == 0;
	/* The live connections by class: in the XDP program's own prefix
	 * tries, or not at all (their own empty ones, never filled). */
	if (prefix_v4_fd >= 0 && prefix_v6_fd >= 0) {
		err = bpf_map__reuse_fd(s->skel->maps.prefix_v4, prefix_v4_fd);
		if (!err)
			err = bpf_map__reuse_fd(s->skel->maps.prefix_v6, prefix_v6_fd);
		if (err)
			log_warn("share the prefixes with the connection counts: %s; live "
				 "connections are not counted", strerror(-err));
		else
			s->skel->rodata->count_conns = 1;
	}
	s->conns = s->skel->rodata->count_conns;
	err = sojourn_bpf__load(s->skel);
	if (err)
		return err;
	for (i = 0; i < o->nr_ports; i++) {
		__u16 port = o->ports[i];

		bpf_map_update_elem(bpf_map__fd(s->skel->maps.sj_ports), &port, &prot, BPF_ANY);
	}
	for (i = 0; i < o->nr_backend_ports; i++) {
		__u16 port = o->backend_ports[i];

		bpf_map_update_elem(bpf_map__fd(s->skel->maps.sj_ports), &port, &backend, BPF_ANY);
	}
	err = sojourn_bpf__attach(s->skel);
	if (err)
		return err;
	s->percpu = calloc((size_t)s->ncpus, sizeof(*s->percpu));
	s->percpu_bk = calloc((size_t)s->ncpus, sizeof(*s->percpu_bk));
	s->zero = calloc((size_t)s->ncpus, sizeof(*s->zero));
	s->acc_percpu = calloc((size_t)s->ncpus, sizeof(*s->acc_percpu));
	s->conn_percpu = calloc((size_t)s->ncpus, sizeof(*s->conn_percpu));
	return s->percpu && s->percpu_bk && s->zero && s->acc_percpu && s->conn_percpu ? 0 :
	       -ENOMEM;
}

void signals_set_ports(struct signals *s, const __u16 *ports, int nr)
{
	__u8 prot = SHEDD_SJ_PROTECTED;
	int i, j, fd;

	if (s->skel) {
		fd = bpf_map__fd(s->skel->maps.sj_ports);
		for (i = 0; i < nr; i++)
			bpf_map_update_elem(fd, &ports[i], &prot, BPF_ANY);
		for (i = 0; i < s->nr_ports; i++) {
			for (j = 0; j < nr && ports[j] != s->ports[i]; j++)
				;
			if (j == nr)
				bpf_map_delete_elem(fd, &s->ports[i]);
		}
	}
	memcpy(s->ports, ports, sizeof(*ports) * (size_t)nr);
	s->nr_ports = nr;
}

void signals_open(struct signals *s, const struct shedd_options *o, int ncpus)
{
	signals_open_conns(s, o, ncpus, -1, -1);
}

void signals_open_conns(struct signals *s, const struct shedd_options *o, int ncpus,
			int prefix_v4_fd, int prefix_v6_fd)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->ncpus = ncpus;
	s->diag_fd = -1;
	s->lat_fd = -1;
	s->lat_stop[0] = s->lat_stop[1] = -1;
	memcpy(s->ports, o->ports, sizeof(s->ports));
	s->nr_ports = o->nr_ports;
	memcpy(s->backend_ports, o->backend_ports, sizeof(s->backend_ports));
	s->nr_backend_ports = o->nr_backend_ports;

	err = open_sojourn(s, o, prefix_v4_fd, prefix_v6_fd);
	if (err) {
		log_warn("accept-queue sojourn probes unavailable (%s); "
			 "running without them", strerror(-err));
		sojourn_bpf__destroy(s->skel);
		s->skel = NULL;
		s->conns = false;
	}

	{
		struct aimd_params p;

		aimd_defaults(&p);
		s->depth_frac = o->depth_frac > 0 ? o->depth_frac : p.depth_frac;
	}
	s->ifindex = if_nametoindex(o->iface);
	s->lt_prev = calloc(1, sizeof(*s->lt_prev));
	s->lt_cur = calloc(1, sizeof(*s->lt_cur));
	if (!s->lt_prev || !s->lt_cur) {
		free(s->lt_prev);
		free(s->lt_cur);
		s->lt_prev = s->lt_cur = NULL;
		log_warn("out of memory for the listeners' table; running without "
			 "accept-queue depth and listen overflows");
	}
	s->diag_fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (s->diag_fd < 0)
		log_warn("sock_diag unavailable (%s); running without "
			 "accept-queue depth", strerror(errno));

	s->have_netstat = read_netstat(&s->last_overflows, &s->last_drops) == 0;
	if (!s->have_netstat)
		log_warn("/proc/net/netstat unreadable; running without "
			 "listen overflows");
	/* Read only where it is the measure of completed handshakes. */
	if (!s->skel) {
		s->have_snmp = read_passive_opens(&s->last_passive_opens) == 0;
		if (!s->have_snmp)
			log_warn("/proc/net/snmp: no TcpPassiveOpens to read");
	}

	if (o->latency_socket[0])
		open_latency_socket(s, o->latency_socket, o);
}

/* A slot is read and cleared in every group at once. */
static int sojourn_read_slot(void *ctx, __u32 slot)
{
	struct signals *s = ctx;
	int fd = bpf_map__fd(s->skel->maps.sojourn);
	__u32 bk = SHEDD_SJ_BACKEND * 2 + slot;

	return bpf_map_lookup_elem(fd, &slot, s->percpu) ?:
	       bpf_map_lookup_elem(fd, &bk, s->percpu_bk);
}

static int sojourn_clear_slot(void *ctx, __u32 slot)
{
	struct signals *s = ctx;
	int fd = bpf_map__fd(s->skel->maps.sojourn);
	__u32 bk = SHEDD_SJ_BACKEND * 2 + slot;

	return bpf_map_update_elem(fd, &slot, s->zero, BPF_ANY) ?:
	       bpf_map_update_elem(fd, &bk, s->zero, BPF_ANY);
}

static void read_sojourn(struct signals *s, struct signal_report *r)
{
	__u64 established = 0, bk_established = 0;
	int c;

	if (!s->skel)
		return;
	if (sojourn_collect(&s->skel->bss->epoch, sojourn_read_slot, sojourn_clear_slot, s))
		return;
	/* The first slot read holds no whole tick (it is the one nobody
	 * wrote): no sojourn yet, rather than a tick without accepts. */
	if (!s->collected++)
		return;
	agg_from_sojourn(&r->sojourn, s->percpu, s->ncpus);
	agg_from_sojourn(&r->backend_sojourn, s->percpu_bk, s->ncpus);
	for (c = 0; c < s->ncpus; c++) {
		established += s->percpu[c].established;
		bk_established += s->percpu_bk[c].established;
	}
	r->have_sojourn = true;
	r->have_completed = true;
	r->completed = established;
	r->backend_completed = bk_established;
}

/* The accepts of each port since the last read (sj_accepts, per CPU,
 * never reset), and the ports that accepted lately. */
static void read_port_accepts(struct signals *s, struct signal_report *r)
{
	int fd, i, k, c;
	__u16 key, next;
	bool first = true;

	s->reads++;
	if (!s->skel || !s->acc_percpu)
		return;
	fd = bpf_map__fd(s->skel->maps.sj_accepts);
	while (!bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		__u64 total = 0, d;

		first = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, s->acc_percpu))
			continue;
		for (c = 0; c < s->ncpus; c++)
			total += s->acc_percpu[c];
		for (k = 0; k < s->nr_acc && s->acc_port[k] != key; k++)
			;
		if (k == s->nr_acc) {
			if (k == PORTS_ACCEPTING)
				continue;
			s->acc_port[k] = key;
			s->acc_total[k] = 0;
			s->acc_read[k] = 0;
			s->nr_acc++;
		}
		d = total >= s->acc_total[k] ? total - s->acc_total[k] : 0;
		s->acc_total[k] = total;
		if (!d)
			continue;
		s->acc_read[k] = s->reads;
		if (r->nr_port_accepts < PORTS_ACCEPTING)
			r->port_accepts[r->nr_port_accepts++] = (struct port_count){ key, d };
	}
	r->have_port_accepts = true;
	for (i = 0; i < s->nr_acc; i++)
		if (s->acc_read[i] && s->reads - s->acc_read[i] < PORT_ACCEPT_TICKS)
			r->accepting.port[r->accepting.n++] = s->acc_port[i];
}

static void read_latency(struct signals *s, struct signal_report *r)
{
	int i;

	if (s->lat_fd < 0)
		return;
	r->have_latency = true;
	/* Without the thread (it could not start), drain here. */
	if (!s->lat_threaded)
		latency_drain(s);
	if (s->lat_stop[0] >= 0)
		pthread_mutex_lock(&s->lat_lock);
	r->latency = s->lat_agg;
	r->latency_log = s->lat_log;
	r->latency_served = s->lat_served;
	r->have_conn_seq = s->lat_seq > 0;
	r->latency_next = s->lat_next;
	r->upstream = s->lat_upstream;
	r->latency_lost = s->lat_lost;
	for (i = 0; i < LOGLINE_NR_REJECTS; i++) {
		r->latency_why[i] = s->lat_why[i];
		r->latency_bad += s->lat_why[i];
	}
	memset(&s->lat_agg, 0, sizeof(s->lat_agg));
	memset(&s->lat_upstream, 0, sizeof(s->lat_upstream));
	memset(s->lat_why, 0, sizeof(s->lat_why));
	s->lat_log = s->lat_lost = s->lat_served = s->lat_seq = s->lat_next = 0;
	if (s->lat_stop[0] >= 0)
		pthread_mutex_unlock(&s->lat_lock);
}

/* A stuck listener is said once it has been stuck this many ticks in a
 * row (a second at the default tick), and again when it is no longer. */
#define LISTENER_TELL_TICKS 10

static void tell_listeners(struct signals *s, const struct listener_verdict *v)
{
	const struct listener_table *t = s->lt_cur;
	char name[64];
	int i, k;

	/* Those said before that are no longer stuck, or gone. */
	for (k = 0; k < s->told;) {
		for (i = 0; i < t->n && t->l[i].id.ino != s->told_id[k].ino; i++)
			;
		if (i < t->n && t->l[i].stuck_ticks) {
			k++;
			continue;
		}
		listener_name(&s->told_id[k], name, sizeof(name));
		log_notice("listener %s (inode %llu): %s", name,
			   (unsigned long long)s->told_id[k].ino,
			   i < t->n ? "no longer stuck" : "closed");
		s->told_id[k] = s->told_id[--s->told];
	}
	for (k = 0; k < v->told && s->told < LISTENERS_TOLD; k++) {
		const struct listener_id *id = &v->stuck_id[k];

		if (v->stuck_ticks[k] != LISTENER_TELL_TICKS)
			continue;
		for (i = 0; i < t->n && t->l[i].id.ino != id->ino; i++)
			;
		listener_name(id, name, sizeof(name));
		log_warn("listener %s (inode %llu, cookie %llu): accept queue %u/%u, "
			 "in trouble for %u ticks while %d of the %d listeners judged "
			 "are not: stuck on its own (a worker that stopped accepting?); "
			 "the SYNs the kernel hashes to it are lost as without shedd, "
			 "the others' admissions are not cut for it",
			 name, (unsigned long long)id->ino, (unsigned long long)id->cookie,
			 i < t->n ? t->l[i].depth : 0, i < t->n ? t->l[i].backlog : 0,
			 v->stuck_ticks[k], v->judged - v->stuck, v->judged);
		s->told_id[s->told++] = *id;
	}
}

/* The listeners of the protected and backend ports, one by one: their own
 * drops and overflows (the namespace's TcpExt counters also count every
 * other listener's), their queues, and which of them are stuck alone.
 * @overflows_moved: ListenOverflows moved (overflow_drops()). */
static void read_listeners(struct signals *s, struct signal_report *r, bool overflows_moved)
{
	struct listener_table *swap;
	struct listener_verdict v;

	if (!r->have_depth) {
		s->have_lt_prev = false;
		return;
	}
	if (!s->have_lt_prev)
		s->lt_prev->n = 0;
	/* Port by port only where the accepts of each port are counted. */
	listeners_judge_ports(s->lt_prev, s->lt_cur, 1 + s->nr_backend_ports, s->depth_frac,
			      overflows_moved, r->have_port_accepts ? &r->accepting : NULL, &v);
	listeners_report(r, &v, 1 + s->nr_backend_ports);
	r->have_listen_drops = s->have_lt_prev;
	if (!r->have_listen_drops)
		r->listen_overflows = 0;
	tell_listeners(s, &v);
	swap = s->lt_prev;
	s->lt_prev = s->lt_cur;
	s->lt_cur = swap;
	s->have_lt_prev = true;
}

/* Connections that left the accept queues in the window of the sojourn
 * slot just read (the previous tick): depth at its start + handshakes
 * completed in it - depth at its end, over the protected and backend
 * listeners. Counts accepts the probes do not see (io_uring, connections
 * queued before they attached). */
static void queue_left(struct signals *s, struct signal_report *r, __u64 depth)
{
	if (r->have_completed && s->have_depth_at[0] && s->have_depth_at[1]) {
		__u64 in = s->depth_at[0] + r->completed + r->backend_completed;

		r->have_queue_left = true;
		r->queue_left = in > s->depth_at[1] ? in - s->depth_at[1] : 0;
	}
	s->have_depth_at[0] = s->have_depth_at[1];
	s->depth_at[0] = s->depth_at[1];
	s->have_depth_at[1] = r->have_depth;
	s->depth_at[1] = depth;
}

/* The live connections' counts, summed over CPUs (cumulative). */
static void read_conns(struct signals *s, struct signal_report *r)
{
	struct shedd_conn_count *pc = s->conn_percpu;
	__u32 slot;
	int cpu;

	if (!s->skel || !s->conns || !pc)
		return;
	for (slot = 0; slot < SHEDD_CONN_SLOTS; slot++) {
		if (bpf_map_lookup_elem(bpf_map__fd(s->skel->maps.conn_count), &slot, pc))
			return;
		for (cpu = 0; cpu < s->ncpus; cpu++) {
			r->conns[slot].opened += pc[cpu].opened;
			r->conns[slot].closed += pc[cpu].closed;
		}
	}
	r->have_conns = true;
}

void signals_read(struct signals *s, struct signal_report *r)
{
	__u64 ovf, drops, depth = 0;
	int i;

	memset(r, 0, sizeof(*r));
	read_conns(s, r);
	read_sojourn(s, r);
	read_port_accepts(s, r);
	if (s->diag_fd >= 0 && s->lt_cur) {
		s->lt_cur->n = 0;
		r->have_depth = diag_family(s, AF_INET) == 0 && diag_family(s, AF_INET6) == 0;
		for (i = 0; i < s->lt_cur->n; i++)
			depth += s->lt_cur->l[i].depth;
	}
	if (s->have_netstat && read_netstat(&ovf, &drops) == 0) {
		r->have_netstat = true;
		r->overflows = ovf >= s->last_overflows ? ovf - s->last_overflows : 0;
		r->drops = drops >= s->last_drops ? drops - s->last_drops : 0;
		s->last_overflows = ovf;
		s->last_drops = drops;
	}
	/* A listener's drops are overflows while ListenOverflows moves, in
	 * this tick or the one before: the listeners are read before
	 * /proc/net/netstat (overflow_drops()). */
	read_listeners(s, r, !r->have_netstat || r->overflows > 0 || s->overflowed_before);
	s->overflowed_before = r->have_netstat && r->overflows > 0;
	queue_left(s, r, depth);
	if (s->have_snmp && read_passive_opens(&ovf) == 0) {
		r->have_passive_opens = true;
		r->passive_opens = ovf >= s->last_passive_opens ? ovf - s->last_passive_opens : 0;
		s->last_passive_opens = ovf;
	}
	read_latency(s, r);
}

void signals_close(struct signals *s)
{
	sojourn_bpf__destroy(s->skel);
	s->skel = NULL;
	if (s->diag_fd >= 0)
		close(s->diag_fd);
	latency_thread_stop(s);
	if (s->lat_fd >= 0) {
		struct stat st;

		close(s->lat_fd);
		if (!lstat(s->lat_path, &st) && S_ISSOCK(st.st_mode))
			unlink(s->lat_path);
	}
	s->diag_fd = s->lat_fd = -1;
	free(s->lat_bufs);
	s->lat_bufs = NULL;
	free(s->percpu);
	free(s->percpu_bk);
	free(s->zero);
	s->percpu = s->percpu_bk = s->zero = NULL;
	free(s->lt_prev);
	free(s->lt_cur);
	s->lt_prev = s->lt_cur = NULL;
	free(s->acc_percpu);
	s->acc_percpu = NULL;
	free(s->conn_percpu);
	s->conn_percpu = NULL;
}

int signals_conn_notes_fd(const struct signals *s)
{
	return s->skel && s->conns ? bpf_map__fd(s->skel->maps.conn_notes) : -1;
}

bool signals_have_delay(const struct signals *s)
{
	return s->skel || s->diag_fd >= 0 || s->lat_fd >= 0;
}

enum signals_completion signals_completion(const struct signals *s)
{
	if (s->skel)
		return SIGNALS_COMPLETION_PROBES;
	if (s->have_snmp && !s->nr_backend_ports)
		return SIGNALS_COMPLETION_PASSIVE_OPENS;
	return SIGNALS_COMPLETION_NONE;
}
