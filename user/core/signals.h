/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* signals.h - what the service experiences, read once per tick: accept-queue
 * sojourn (BPF probes), accept-queue depth and backlog (sock_diag), listen
 * overflows and drops (/proc/net/netstat) and service latency (samples on a
 * UNIX datagram socket). A source that cannot be opened is reported once and
 * left out; shedd sheds on the signals it has.
 */
#ifndef SHEDD_SIGNALS_H
#define SHEDD_SIGNALS_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <linux/types.h>
#include <linux/inet_diag.h>
#include "logline.h"
#include "sample_agg.h"
#include "options.h"
#include "shedd.h"

#ifndef MAX_LISTENERS
#define MAX_LISTENERS 1024 /* protected listening sockets followed for drops */
#endif

/* Drop counters (sk_drops, SK_MEMINFO_DROPS) of the protected listeners in
 * one sock_diag dump, by socket inode. */
struct listener_drops {
	int n;
	__u64 ino[MAX_LISTENERS];
	__u32 drops[MAX_LISTENERS];
};

/* Accept-queue depth and backlog of one group of listeners: the
 * protected ports' together, or one backend port's. */
struct queue_group {
	__u64 depth;
	__u64 backlog;
};

#define QUEUE_GROUPS (1 + MAX_BACKEND_PORTS) /* [0] protected, then backends */

struct signal_report {
	bool have_sojourn;
	struct sample_agg sojourn; /* of the protected listeners */
	struct sample_agg backend_sojourn; /* of the backend listeners */
	bool have_depth;
	__u64 depth;   /* of the listener group nearest its backlog, see */
	__u64 backlog; /* queue_fullest() */
	bool have_netstat;
	__u64 overflows; /* ListenOverflows added in the tick */
	__u64 drops;     /* ListenDrops added in the tick (includes overflows) */
	bool have_latency;
	struct sample_agg latency; /* request latency, both formats */
	__u64 latency_log;  /* of which from log lines (the rest binary) */
	__u64 latency_served; /* of which answered (latency_served()) */
	struct sample_agg upstream; /* upstream times of log lines that carry one */
	__u64 latency_bad; /* refused datagrams in the tick (the sum of below) */
	__u64 latency_why[LOGLINE_NR_REJECTS]; /* refused, by reason */
	__u64 latency_lost; /* samples senders could not send (socket full) */
	bool have_completed;
	__u64 completed;   /* handshakes completed on protected ports */
	__u64 backend_completed; /* and on backend ports */
	bool have_queue_left;
	__u64 queue_left;  /* connections that left the accept queues, any path */
	bool have_listen_drops;
	__u64 listen_drops; /* drops and overflows of the protected and backend
			     * listeners */
	__u64 listen_overflows; /* those of them that overflow_drops() takes
				 * for overflows: the overload signal */
	bool have_passive_opens;
	__u64 passive_opens; /* TcpPassiveOpens of the namespace added in the tick */
};

/* Where the measure of completed handshakes comes from (the evidence the
 * controller needs to raise the limit). */
enum signals_completion {
	SIGNALS_COMPLETION_NONE = 0,   /* none: the controller could only cut */
	SIGNALS_COMPLETION_PROBES = 1, /* the sojourn probes, per protected port */
	SIGNALS_COMPLETION_PASSIVE_OPENS = 2, /* the namespace's TcpPassiveOpens,
					       * see completed_from_passive_opens() */
};

struct sojourn_bpf;

struct signals {
	struct sojourn_bpf *skel;
	int ncpus;
	struct shedd_sojourn *percpu; /* ncpus entries, protected group */
	struct shedd_sojourn *percpu_bk; /* ncpus entries, backend group */
	struct shedd_sojourn *zero;
	int diag_fd;
	bool have_netstat;
	__u64 last_overflows, last_drops;
	bool overflowed_before;   /* ListenOverflows moved in the last tick */
	bool have_snmp;           /* /proc/net/snmp's TcpPassiveOpens is read */
	__u64 last_passive_opens;
	int lat_fd;
	char lat_path[108];
	/* the drain thread and what it gathered since the last tick */
	pthread_t lat_thread;
	bool lat_threaded;
	bool lat_stopping;
	int lat_stop[2];          /* a pipe that wakes the thread to stop */
	struct latency_bufs *lat_bufs; /* the drain's receive buffers */
	pthread_mutex_t lat_lock; /* guards the five below */
	struct sample_agg lat_agg, lat_upstream;
	__u64 lat_log, lat_lost, lat_served;
	__u64 lat_why[LOGLINE_NR_REJECTS];
	__u16 ports[MAX_PORTS];
	int nr_ports;
	__u16 backend_ports[MAX_BACKEND_PORTS];
	int nr_backend_ports;
	struct queue_group groups[QUEUE_GROUPS]; /* this tick's dump */
	/* depth at the last two ticks, to line up with the sojourn slot read
	 * (the previous tick's samples) */
	bool have_depth_at[2];
	__u64 depth_at[2]; /* [0]: two ticks ago, [1]: one tick ago */
	__u64 collected; /* sojourn slots read */
	struct listener_drops *drops_prev, *drops_cur;
	bool have_drops_prev;
};

/* Open every source; failures are reported on stderr and leave that source
 * out. Must run inside the protected network namespace. */
void signals_open(struct signals *s, const struct shedd_options *o, int ncpus);

/* New protected ports (a reload, never between every port and a list: the
 * sojourn program has that as a constant): the sojourn probes and the depth
 * readings follow, new ports in before the removed ones go. */
void signals_set_ports(struct signals *s, const __u16 *ports, int nr);
/* Read and reset a tick's worth of samples. */
void signals_read(struct signals *s, struct signal_report *r);
void signals_close(struct signals *s);
/* True when a source of delay (sojourn probes, sock_diag depth, the latency
 * socket) is open: the controller has a loop to close. */
bool signals_have_delay(const struct signals *s);
/* Where completed handshakes are measured: the probes; without them the
 * namespace's passive opens, unless listeners of backend ports share the
 * namespace (their opens, through loopback, would count as the protected
 * ports'); else none. */
enum signals_completion signals_completion(const struct signals *s);

/* Pure helpers, tested without root. */
/* One tick of the two-slot sojourn protocol: read and clear the slot the
 * probes left a tick ago, then flip *@epoch. The samples read are those of
 * the previous tick: late by one tick, never lost to a probe still
 * writing. */
int sojourn_collect(__u32 *epoch, int (*read_slot)(void *ctx, __u32 slot),
		    int (*clear_slot)(void *ctx, __u32 slot), void *ctx);
/* ListenOverflows and ListenDrops from the text of /proc/net/netstat. */
int netstat_parse(const char *text, __u64 *overflows, __u64 *drops);
/* Counter @name of @group ("Tcp") from the first @len bytes of the text of
 * /proc/net/snmp or /proc/net/netstat (a line "GROUP: NAME...", the next
 * "GROUP: VALUE...", both ending in a newline; NUL not needed): 0, or -1 if
 * the group or the name is not there, or the lines do not pair up or are
 * cut short, or the value is not a decimal that fits 64 bits. */
int proc_counter_parse(const char *text, size_t len, const char *group, const char *name,
		       __u64 *v);
/* Handshakes completed on the protected ports in a tick, from the
 * namespace's TcpPassiveOpens added in it: every passive open of the
 * namespace counts there, so less the SYNs the XDP program passed to ports
 * it does not protect (@unprotected_syn; each of those is at most one
 * open), and at most the SYNs and proven ACKs it admitted to the protected
 * ports (@admitted; a handshake completes from one of them). Opens through
 * another interface (loopback) stay in: an estimate bounded above by what
 * was admitted. */
__u64 completed_from_passive_opens(__u64 passive_opens, __u64 unprotected_syn, __u64 admitted);
/* The listener's drop counter (SK_MEMINFO_DROPS) from the attributes of a
 * sock_diag message of @len bytes that asked for INET_DIAG_SKMEMINFO: 0, or
 * -1 if the attribute is not there. */
int diag_msg_drops(const struct inet_diag_msg *m, size_t len, __u32 *drops);
/* Drops added between two dumps, listener by listener: a listener that was
 * not in @prev (new, or the first dump) adds nothing, so neither a restart
 * of shedd nor a new listener counts old drops; counters wrap at 32 bits. */
__u64 listener_drops_delta(const struct listener_drops *prev, const struct listener_drops *cur);
/* The protected listeners' drops that count as overflows. A listener's
 * sk_drops also moves for drops that are not an overflow (an ACK it could
 * not match to a request, a SYN dropped for a full SYN backlog, ...), each
 * of which says nothing of the accept queue; every overflow also moves the
 * namespace's ListenOverflows. So the drops count while ListenOverflows
 * moved in this tick or the one before (the listeners are read before
 * /proc/net/netstat: an overflow between the two reads shows in the next
 * tick's drops), and all of them count when there is no netstat to ask. */
__u64 overflow_drops(__u64 listener_drops, bool have_netstat, __u64 ns_overflows,
		     bool overflowed_before);
/* The group whose accept queue is fullest against its backlog (depth /
 * backlog; a queue with no backlog and a connection in it is full). Each
 * group is judged on its own, so a front-end's large, empty backlog does
 * not hide a backend's small, full one, as a sum would. Ties go to the
 * deeper queue, then to the first group. @n > 0. */
struct queue_group queue_fullest(const struct queue_group *g, int n);
/* One latency datagram (version 1 or 2): LOGLINE_OK, the latency and the
 * sender's count of samples it could not send before it (0 for version 1);
 * LOGLINE_REJ_BINARY if malformed, LOGLINE_REJ_RANGE for a latency above
 * LOGLINE_MAX_NS (the log lines' cap); *@ns and *@unsent are then left. */
enum logline_reject latency_decode(const void *buf, size_t len, __u64 *ns, __u32 *unsent);

/* One datagram on the latency socket, in either format. */
struct latency_datagram {
	bool log;          /* a log line (else the binary format) */
	__u64 ns;          /* request latency */
	__u32 unsent;      /* binary version 2: the sender's losses before it */
	bool have_upstream;
	__u64 upstream_ns; /* log lines: the upstream time */
	__u32 status;      /* log lines: the HTTP status; 0 when not given */
	bool no_response;  /* log lines: st= said no response was sent */
};

/* A request the service answered: a binary sample, a log line without a
 * status, or one whose status is neither 499 (nginx: the client closed
 * the connection before the answer, it gave up), nor 5xx (the proxy could
 * not get an answer from its upstream), nor -1 (HAProxy: no response was
 * sent, the client left first). */
bool latency_served(const struct latency_datagram *d);

/* A datagram of @len bytes (@truncated: longer than the buffer that
 * received it): one that begins with the binary format's magic is decoded
 * as that, any other is parsed as a log line. LOGLINE_OK and @d filled, or
 * why it is refused. */
enum logline_reject latency_datagram_decode(const void *buf, size_t len, bool truncated,
					    struct latency_datagram *d);

#endif /* SHEDD_SIGNALS_H */
