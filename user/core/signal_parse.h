/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* signal_parse.h - a tick's signals as the controller gets them (struct
 * signal_report) and the pure parsers and rules behind them: the sojourn
 * slots, /proc/net/netstat and snmp, sock_diag's drop counters, the
 * fullest accept queue, the latency datagrams. No I/O: daemon/signals.c
 * reads the sources, these turn what it read into a report.
 */
#ifndef SHEDD_SIGNAL_PARSE_H
#define SHEDD_SIGNAL_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include <linux/inet_diag.h>
#include "logline.h"
#include "sample_agg.h"
#include "listeners.h"
#include "options.h"
#include "shedd.h"

struct signal_report {
	/* Connections to protected ports opened and closed since the probes
	 * loaded, by the class of their peer (SHEDD_CONN_SLOTS, the last: no
	 * prefix, the default class); have_conns: counted. */
	bool have_conns;
	struct shedd_conn_count conns[SHEDD_CONN_SLOTS];
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
	bool have_conn_seq;   /* some log lines said which request of their
			       * connection they were (cr=) */
	__u64 latency_next;   /* of which not the first on their connection */
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
				 * for overflows, of listeners not stuck: the
				 * overload signal */
	struct listener_verdict listeners; /* listener by listener (with
					    * have_listen_drops) */
	bool have_port_accepts; /* the probes count accepts port by port */
	int nr_port_accepts;
	struct port_count port_accepts[PORTS_ACCEPTING]; /* the ports that
					    * accepted in the tick, and how many */
	struct port_accepts accepting; /* those that accepted lately (in the
					* last PORT_ACCEPT_TICKS ticks) */
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
/* The listeners' part of @r from the verdict @v on a dump of @ngroups
 * groups (listeners_judge()): the fullest group's depth and backlog
 * without the stuck listeners, the drops of all, the overflows of those
 * not stuck. */
void listeners_report(struct signal_report *r, const struct listener_verdict *v, int ngroups);
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
	bool no_upstream;  /* log lines: the upstream time given as none */
	__u64 upstream_ns; /* log lines: the upstream time */
	__u32 status;      /* log lines: the HTTP status; 0 when not given */
	bool no_response;  /* log lines: st= said no response was sent */
	__u32 conn_req;    /* log lines: cr=, the request's number on its
			    * connection; 0 when not given */
};

/* A request the service answered: a binary sample, a log line without a
 * status, or one whose status is neither 499 (nginx: the client closed
 * the connection before the answer, it gave up), nor 5xx (the proxy could
 * not get an answer from its upstream), nor -1 (HAProxy: no response was
 * sent, the client left first); nor a 400 or 408 that no upstream took part
 * in (the upstream time given as none): a request that never came whole,
 * its client gone first or too slow (HAProxy logs a connection its client
 * closed before the request as 400, both proxies a request that did not
 * come in time as 408). Such lines come by the hundred a second when
 * clients give up at a proxy's door, and counted as answers they read as
 * a service 10-30 % faster than it is. */
bool latency_served(const struct latency_datagram *d);

/* A datagram of @len bytes (@truncated: longer than the buffer that
 * received it): one that begins with the binary format's magic is decoded
 * as that, any other is parsed as a log line. LOGLINE_OK and @d filled, or
 * why it is refused. */
enum logline_reject latency_datagram_decode(const void *buf, size_t len, bool truncated,
					    struct latency_datagram *d);

#endif /* SHEDD_SIGNAL_PARSE_H */
