/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* listeners.h - the listeners judged one by one. Each listening socket of
 * the protected service (and of each backend port) as one sock_diag dump
 * shows it, and a tick's verdict: a listener whose accept queue is full or
 * overflows while another listener of its port has room (a stopped worker
 * of an SO_REUSEPORT group) is its own trouble, named, and left out of the
 * overload signals; so is a port every listener of which is in trouble
 * while another port of its group accepts; trouble every port shares is
 * the service's. Pure: no I/O.
 */
#ifndef SHEDD_LISTENERS_H
#define SHEDD_LISTENERS_H

#include <stdbool.h>
#include <linux/types.h>
#include "shedd.h"

#ifndef MAX_LISTENERS
#define MAX_LISTENERS 1024 /* listening sockets judged in one dump */
#endif
/* Stuck listeners a report names (log, status line, metric series): the
 * metric's cardinality stays bounded however many there are. */
#ifndef LISTENERS_TOLD
#define LISTENERS_TOLD 8
#endif

/* Accept-queue depth and backlog of one group of listeners: the
 * protected ports' together, or one backend port's. */
struct queue_group {
	__u64 depth;
	__u64 backlog;
};

#define QUEUE_GROUPS (1 + MAX_BACKEND_PORTS) /* [0] protected, then backends */

/* Who a listener is: the socket's inode and cookie (ss -e shows both) and
 * its bound address and port. */
struct listener_id {
	__u64 ino;
	__u64 cookie;
	__u8 family;   /* AF_INET or AF_INET6 */
	__u8 addr[16]; /* bound address; IPv4 in the first 4 bytes */
	__u16 port;    /* host order */
};

/**
 * struct listener_sample - one listening socket in one dump.
 * @id:          who it is
 * @group:       its queue group: 0 protected, 1 + i backend port i
 * @depth:       connections in its accept queue (idiag_rqueue)
 * @backlog:     its listen() backlog (idiag_wqueue)
 * @have_drops:  @drops was read (INET_DIAG_SKMEMINFO)
 * @drops:       its drop counter (sk_drops), 32-bit, wraps
 * @stuck_ticks: ticks in a row it was judged stuck, up to this dump
 *               (listeners_judge() carries it over by inode)
 */
struct listener_sample {
	struct listener_id id;
	int group;
	__u32 depth;
	__u32 backlog;
	bool have_drops;
	__u32 drops;
	__u32 stuck_ticks;
};

struct listener_table {
	int n;
	struct listener_sample l[MAX_LISTENERS];
};

/* Ports of a dump said whole in trouble (every listener of the port in
 * trouble), at most: the protected ports (MAX_PORTS) and the backends. */
#ifndef PORTS_JUDGED
#define PORTS_JUDGED (MAX_PORTS + MAX_BACKEND_PORTS)
#endif

/* The ports that accepted a connection lately, as the sojourn probes count
 * them port by port (a tick's accepts, or any within a few ticks): the
 * evidence that a port beside one in trouble is served. */
#ifndef PORTS_ACCEPTING
#define PORTS_ACCEPTING 256
#endif
struct port_accepts {
	int n;
	__u16 port[PORTS_ACCEPTING]; /* host order */
};

/* The accepts of one port in a tick, from the sojourn probes. */
struct port_count {
	__u16 port;
	__u64 accepts;
};

/**
 * struct port_trouble - a port every listener of which is in trouble.
 * @port:      host order
 * @group:     its queue group
 * @own:       its trouble is its own: a listener of another port of its
 *             group is not in trouble and that port accepts (struct
 *             port_accepts); it is left out of the overload signals
 * @listeners: its listeners
 * @depth:     their accept queues ...
 * @backlog:   ... of these backlogs
 * @overflows: their overflows in the tick
 */
struct port_trouble {
	__u16 port;
	int group;
	bool own;
	int listeners;
	__u64 depth;
	__u64 backlog;
	__u64 overflows;
};

/**
 * struct listener_verdict - what one tick says of the listeners.
 * @judged:          listeners in the dump
 * @stuck:           of which stuck: in trouble (full or deep queue, or an
 *                   overflow) while another listener of their port is not
 * @drops:           drops added since the last dump, every listener
 * @overflows:       of those, the overflows of listeners not stuck: the
 *                   group's overload signal
 * @stuck_overflows: the overflows of the stuck ones: their own trouble
 * @groups:          depth and backlog of each group without its stuck
 *                   listeners
 * @told:            entries used in @stuck_id, @stuck_ticks
 * @stuck_id:        the stuck listeners, the longest stuck first
 * @stuck_ticks:     ... and for how many ticks in a row
 * @ports_own:       ports in trouble of their own (port_trouble.own): their
 *                   listeners are in none of the counts above but @judged
 * @port_overflows:  the overflows of their listeners: their own trouble
 * @nr_ports:        entries used in @ports
 * @ports:           the ports whole in trouble, own or not, in the order
 *                   of the dump, the first PORTS_JUDGED
 */
struct listener_verdict {
	int judged;
	int stuck;
	__u64 drops;
	__u64 overflows;
	__u64 stuck_overflows;
	struct queue_group groups[QUEUE_GROUPS];
	int told;
	struct listener_id stuck_id[LISTENERS_TOLD];
	__u32 stuck_ticks[LISTENERS_TOLD];
	int ports_own;
	__u64 port_overflows;
	int nr_ports;
	struct port_trouble ports[PORTS_JUDGED];
};

/*
 * listeners_judge() - the verdict on the listeners of @cur (this tick's
 * dump) against @prev (the last one; n = 0 for none), @ngroups groups.
 * A listener's drops are the growth of its counter since @prev (a listener
 * not in @prev adds none); they are overflows when @overflows_moved (the
 * namespace's ListenOverflows moved, see overflow_drops()). A listener is
 * in trouble when it overflowed or its depth passes @depth_frac of its
 * backlog (or its backlog is 0 and it holds any); it is stuck when a
 * listener of the same group and port is not in trouble: the kernel
 * hashes each SYN to one member of an SO_REUSEPORT group, and a member
 * that stops accepting fills its own queue and drops the SYNs hashed to
 * it while its siblings accept theirs (listeners.bats). Cutting the
 * admissions of all does not help it; it only sheds the siblings' share.
 * Trouble every listener of a port shares is the service's: overload, as
 * before, whatever other ports do. Sets @cur's stuck_ticks.
 */
void listeners_judge(const struct listener_table *prev, struct listener_table *cur, int ngroups,
		     double depth_frac, bool overflows_moved, struct listener_verdict *v);

/*
 * listeners_judge_ports() - listeners_judge(), and port by port: a port
 * whose listeners are all in trouble while a listener of another port of
 * its group is not, and that port accepts (@acc), is in trouble of its
 * own (several --port, or every port without one: a stopped service, or
 * another service beside the protected one): its listeners are left out
 * of the overload signals as a stuck listener is, and it is named in
 * v->ports, for a limit of its own (port_limit.h) that sheds its SYNs
 * alone. A port beside only idle ones (no accepts) is the service's
 * trouble, as is trouble every port shares: nothing says anything else is
 * served. Without @acc (no sojourn probes: nothing counts the accepts of
 * a port) no port is judged its own, and every port in trouble is
 * overload, as listeners_judge() has it.
 */
void listeners_judge_ports(const struct listener_table *prev, struct listener_table *cur,
			   int ngroups, double depth_frac, bool overflows_moved,
			   const struct port_accepts *acc, struct listener_verdict *v);

/* Is @port in @acc? */
bool port_accepts_has(const struct port_accepts *acc, __u16 port);

/* Drops added between two dumps, listener by listener: a listener that was
 * not in @prev (new, or the first dump) adds nothing, so neither a restart
 * of shedd nor a new listener counts old drops; counters wrap at 32 bits. */
__u64 listener_drops_delta(const struct listener_table *prev, const struct listener_table *cur);

/* Without --port, whether a listener is of the protected service: one the
 * interface's SYNs can reach. Not one bound to a loopback address
 * (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104), nor one bound to a device
 * (@bound_if, SO_BINDTODEVICE) other than the interface @ifindex (0:
 * unknown, not judged on). @addr holds @family's address. */
bool listener_reachable(__u8 family, const __u8 addr[16], __u32 bound_if, __u32 ifindex);

/* "ADDR:PORT" ("[ADDR]:PORT" for IPv6) of @id into @buf. */
void listener_name(const struct listener_id *id, char *buf, size_t len);

#endif /* SHEDD_LISTENERS_H */
