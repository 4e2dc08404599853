/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* signals.h - what the service experiences, read once per tick: accept-queue
 * sojourn (BPF probes), accept-queue depth and backlog (sock_diag), listen
 * overflows and drops (/proc/net/netstat) and service latency (samples on a
 * UNIX datagram socket). A source that cannot be opened is reported once and
 * left out; shedd sheds on the signals it has. The parsers are in
 * signal_parse.h (core/).
 */
#ifndef SHEDD_SIGNALS_H
#define SHEDD_SIGNALS_H

#include <stdbool.h>
#include <pthread.h>
#include <linux/types.h>
#include "options.h"
#include "signal_parse.h"

struct sojourn_bpf;

struct signals {
	struct sojourn_bpf *skel;
	bool conns;                   /* the probes count live connections */
	struct shedd_conn_count *conn_percpu; /* ncpus entries, a read's buffer */
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
	__u64 lat_seq, lat_next; /* log lines with cr=, and of them cr > 1 */
	__u64 lat_why[LOGLINE_NR_REJECTS];
	__u16 ports[MAX_PORTS];
	int nr_ports;
	__u16 backend_ports[MAX_BACKEND_PORTS];
	int nr_backend_ports;
	/* depth at the last two ticks, to line up with the sojourn slot read
	 * (the previous tick's samples) */
	bool have_depth_at[2];
	__u64 depth_at[2]; /* [0]: two ticks ago, [1]: one tick ago */
	__u64 collected; /* sojourn slots read */
	/* the listeners of the last dump and of this one (listeners.h) */
	struct listener_table *lt_prev, *lt_cur;
	bool have_lt_prev;
	double depth_frac;        /* a listener's queue past this is in trouble */
	unsigned int ifindex;     /* the protected interface */
	/* stuck listeners said in the log, to say when they accept again */
	int told;
	struct listener_id told_id[LISTENERS_TOLD];
	/* accepts port by port (the probes' sj_accepts): each port's total
	 * at the last read, and the last read it grew at */
	__u64 reads;
	int nr_acc;
	__u16 acc_port[PORTS_ACCEPTING];
	__u64 acc_total[PORTS_ACCEPTING];
	__u64 acc_read[PORTS_ACCEPTING];
	__u64 *acc_percpu; /* ncpus */
};

/* A port accepts while it accepted a connection within this many ticks
 * (a second at the default tick): a port served at a few connections a
 * second is not taken for idle between two of them. */
#define PORT_ACCEPT_TICKS 10

/* Open every source; failures are reported on stderr and leave that source
 * out. Must run inside the protected network namespace. */
void signals_open(struct signals *s, const struct shedd_options *o, int ncpus);
/* As signals_open(), and the live connections counted by the class of
 * their peer in the XDP program's prefix tries @prefix_v4_fd and
 * @prefix_v6_fd (-1: not counted). */
void signals_open_conns(struct signals *s, const struct shedd_options *o, int ncpus,
			int prefix_v4_fd, int prefix_v6_fd);

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

/* The probe's conn_notes map (struct shedd_conn_note by socket), or -1
 * when the live connections are not counted. */
int signals_conn_notes_fd(const struct signals *s);
/* Where completed handshakes are measured: the probes; without them the
 * namespace's passive opens, unless listeners of backend ports share the
 * namespace (their opens, through loopback, would count as the protected
 * ports'); else none. */
enum signals_completion signals_completion(const struct signals *s);

#endif /* SHEDD_SIGNALS_H */
