// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sojourn.bpf.c - accept-queue sojourn, measured per connection: stamped when
 * the handshake completes and the child is queued for accept (SYN_RECV ->
 * ESTABLISHED), read when accept() or accept4() hands its fd to the
 * application, with or without a peer address. Aggregated in the kernel per
 * CPU and per tick; userspace is never woken per event.
 *
 * The same tracepoint counts the live connections to protected ports by
 * the class of their peer: opened when the child leaves SYN_RECV (for the
 * established state, or, with TCP Fast Open, straight for CLOSE_WAIT or
 * FIN_WAIT1), closed when it reaches TCP_CLOSE, which every end of a full
 * TCP socket passes through (tcp_set_state(), tcp_done()). The class is
 * looked up once, in the XDP program's own prefix tries, and kept in the
 * socket's local storage, so the close counts where the open did whatever
 * the prefixes became meanwhile.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "shedd.h"
#include "histogram.h"

_Static_assert(SOJOURN_HIST_BUCKETS == HIST_BUCKETS, "one histogram layout");

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define TCP_ESTABLISHED_ 1
#define TCP_SYN_RECV_ 3
#define TCP_CLOSE_ 7
#define AF_INET_ 2
#define AF_INET6_ 10
#define IPPROTO_TCP_ 6
#define MAX_QUEUED 65536 /* connections stamped and not yet accepted */

/* Tracepoints are global: only sockets of this network namespace count. */
const volatile __u32 netns_ino = 0;
/* 1: every port, in the protected group; else the ports in sj_ports. */
const volatile __u8 all_ports = 1;
/* 1: count live connections by class (the daemon shares the XDP program's
 * prefix tries with prefix_v4 and prefix_v6 below; 0 where it could not). */
const volatile __u8 count_conns = 0;
/* Flipped by userspace every tick: which slot of `sojourn` to fill. */
__u32 epoch = 0;

/* A queued child: when, which listener group it counts in, and its
 * listener's port. */
struct sj_stamp {
	__u64 ns;
	__u32 group;
	__u32 port;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MAX_QUEUED);
	__type(key, __u64); /* the child socket's address */
	__type(value, struct sj_stamp);
} queued SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MAX_PORTS + MAX_BACKEND_PORTS);
	__type(key, __u16);
	__type(value, __u8); /* enum shedd_sojourn_group */
} sj_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * SHEDD_SJ_GROUPS);
	__type(key, __u32);
	__type(value, struct shedd_sojourn);
} sojourn SEC(".maps");

/* Connections accepted, port by port, since the probes attached (never
 * reset: the daemon takes differences): whether a port is served while
 * another is in trouble, and what a port in trouble still takes
 * (user/core/port_limit.h). Ports beyond its size are not counted. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, SJ_ACCEPT_PORTS);
	__type(key, __u16);
	__type(value, __u64);
} sj_accepts SEC(".maps");

/* The XDP program's prefix tries, the same maps: the daemon hands their
 * fds over before the load. */
#include "prefix_maps.h"

/* struct shedd_conn_note per socket: the daemon reads them with the
 * sockets (sock_diag) when it ends idle connections (recall.h). */
struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct shedd_conn_note);
} conn_notes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, SHEDD_CONN_SLOTS);
	__type(key, __u32);
	__type(value, struct shedd_conn_count);
} conn_count SEC(".maps");

/* The slot of the peer of @sk: the class its address's longest prefix
 * names, else SHEDD_NR_CLASSES (no prefix: the default class). An IPv4
 * peer of an IPv6 socket (::ffff:a.b.c.d) is looked up as IPv4, as XDP
 * saw its SYN. */
static __always_inline __u32 conn_slot(const struct sock *sk)
{
	struct shedd_lpm_v6 k6 = { .prefixlen = 128 };
	struct shedd_lpm_v4 k4 = { .prefixlen = 32 };
	__u16 family = sk->__sk_common.skc_family;
	__u32 *cls = NULL;

	if (family == AF_INET_) {
		__builtin_memcpy(k4.addr, &sk->__sk_common.skc_daddr, 4);
		cls = bpf_map_lookup_elem(&prefix_v4, &k4);
	} else if (family == AF_INET6_) {
		__builtin_memcpy(k6.addr, &sk->__sk_common.skc_v6_daddr, 16);
		if (!k6.addr[0] && !k6.addr[1] && !k6.addr[2] && !k6.addr[3] &&
		    !k6.addr[4] && !k6.addr[5] && !k6.addr[6] && !k6.addr[7] &&
		    !k6.addr[8] && !k6.addr[9] && k6.addr[10] == 0xff && k6.addr[11] == 0xff) {
			__builtin_memcpy(k4.addr, &k6.addr[12], 4);
			cls = bpf_map_lookup_elem(&prefix_v4, &k4);
		} else {
			cls = bpf_map_lookup_elem(&prefix_v6, &k6);
		}
	}
	return cls && *cls < SHEDD_NR_CLASSES ? *cls : SHEDD_NR_CLASSES;
}

/* A protected connection opened: counted in its peer's slot, once. */
static __always_inline void conn_open(const struct sock *sk)
{
	struct shedd_conn_count *c;
	struct shedd_conn_note *n;
	__u32 slot;

	n = bpf_sk_storage_get(&conn_notes, (struct sock *)sk, NULL, BPF_SK_STORAGE_GET_F_CREATE);
	if (!n || n->counted)
		return;
	slot = conn_slot(sk);
	c = bpf_map_lookup_elem(&conn_count, &slot);
	if (!c)
		return;
	n->slot = slot;
	n->counted = 1;
	n->opened_ns = bpf_ktime_get_ns();
	c->opened++;
}

/* A connection reached TCP_CLOSE: closed in the slot it was opened in. */
static __always_inline void conn_close(const struct sock *sk)
{
	struct shedd_conn_count *c;
	struct shedd_conn_note *n;
	__u32 slot;

	n = bpf_sk_storage_get(&conn_notes, (struct sock *)sk, NULL, 0);
	if (!n || !n->counted)
		return;
	n->counted = 0;
	slot = n->slot;
	c = bpf_map_lookup_elem(&conn_count, &slot);
	if (c)
		c->closed++;
}

static __always_inline void count_accept(__u16 port)
{
	__u64 one = 1, *n = bpf_map_lookup_elem(&sj_accepts, &port);

	if (n)
		(*n)++;
	else
		bpf_map_update_elem(&sj_accepts, &port, &one, BPF_NOEXIST);
}

/* A handshake completed: the admitted SYN became a queued connection. The
 * controller grows the limit only on this evidence, and counts the
 * connections that left the queue by any path against it. */
static __always_inline void count_established(__u32 group)
{
	__u32 slot = group * 2 + (epoch & 1);
	struct shedd_sojourn *agg = bpf_map_lookup_elem(&sojourn, &slot);

	if (agg)
		agg->established++;
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(on_set_state, const struct sock *sk, const int oldstate, const int newstate)
{
	__u64 key = (__u64)(unsigned long)sk;
	struct sj_stamp st = { .group = SHEDD_SJ_PROTECTED };
	__u16 port;
	__u8 *group;

	if (count_conns && newstate == TCP_CLOSE_ && sk->sk_protocol == IPPROTO_TCP_) {
		if (sk->__sk_common.skc_net.net->ns.inum == netns_ino)
			conn_close(sk);
		return 0;
	}
	if (oldstate != TCP_SYN_RECV_)
		return 0;
	if (sk->__sk_common.skc_net.net->ns.inum != netns_ino)
		return 0;
	port = sk->__sk_common.skc_num;
	if (!all_ports) {
		group = bpf_map_lookup_elem(&sj_ports, &port);
		if (!group || *group >= SHEDD_SJ_GROUPS)
			return 0;
		st.group = *group;
	}
	if (count_conns && st.group == SHEDD_SJ_PROTECTED && sk->sk_protocol == IPPROTO_TCP_)
		conn_open(sk);
	if (newstate != TCP_ESTABLISHED_)
		return 0;
	st.ns = bpf_ktime_get_ns();
	st.port = port;
	bpf_map_update_elem(&queued, &key, &st, BPF_ANY);
	count_established(st.group);
	return 0;
}

static __always_inline void record(__u32 group, __u64 ns)
{
	__u32 slot = group * 2 + (epoch & 1), b = hist_bucket(ns);
	struct shedd_sojourn *agg = bpf_map_lookup_elem(&sojourn, &slot);

	if (!agg)
		return;
	agg->count++;
	agg->sum_ns += ns;
	if (!agg->min_ns || ns < agg->min_ns)
		agg->min_ns = ns ? ns : 1;
	if (ns > agg->max_ns)
		agg->max_ns = ns;
	if (b < SOJOURN_HIST_BUCKETS)
		agg->hist[b]++;
}

/* The socket behind the fd accept() just returned, walked with CO-RE reads:
 * current->files->fdt->fd[fd]->private_data (a struct socket)->sk. */
static __always_inline __u64 sock_of_fd(long fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds;
	struct file *file = NULL;
	struct socket *sock;
	unsigned int max;

	if (!fdt)
		return 0;
	max = BPF_CORE_READ(fdt, max_fds);
	if (fd < 0 || fd >= max)
		return 0;
	fds = BPF_CORE_READ(fdt, fd);
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[fd]) || !file)
		return 0;
	sock = BPF_CORE_READ(file, private_data);
	if (!sock)
		return 0;
	return (__u64)(unsigned long)BPF_CORE_READ(sock, sk);
}

static __always_inline int on_accept(long ret)
{
	struct sj_stamp *stamp;
	__u64 key, now;

	if (ret < 0)
		return 0;
	key = sock_of_fd(ret);
	if (!key)
		return 0;
	stamp = bpf_map_lookup_elem(&queued, &key);
	if (!stamp)
		return 0; /* not the child of a protected or backend listener */
	now = bpf_ktime_get_ns();
	record(stamp->group, now > stamp->ns ? now - stamp->ns : 0);
	count_accept((__u16)stamp->port);
	bpf_map_delete_elem(&queued, &key);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_accept4")
int on_accept4(struct trace_event_raw_sys_exit *ctx)
{
	return on_accept(ctx->ret);
}

SEC("tracepoint/syscalls/sys_exit_accept")
int on_accept3(struct trace_event_raw_sys_exit *ctx)
{
	return on_accept(ctx->ret);
}
