/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* metrics.h - Prometheus metrics: the daemon's own counters (pinned in
 * daemon_stats, so they continue across a restart), a snapshot the tick
 * publishes under a mutex, and an HTTP endpoint (libmicrohttpd, its own
 * thread) that formats the latest snapshot in the text exposition format
 * 0.0.4. The tick never waits for a scraper: it copies, the thread formats.
 */
#ifndef SHEDD_METRICS_H
#define SHEDD_METRICS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <net/if.h>
#include <sys/socket.h>
#include <linux/types.h>
#include "fair_view.h"
#include "shedd.h"
#include "signal_parse.h"
#include "tun_unjudged.h"

#define METRICS_DEFAULT_ADDR "127.0.0.1:9464"
#define METRICS_FAIR_TOP 5 /* heavy hitters exported per class */

/* The le bounds of the exposed histograms, in ns (SHEDD_HIST_BOUNDS). */
extern const __u64 metrics_hist_bounds_ns[SHEDD_HIST_BOUNDS];

/* What the tick hands the HTTP thread: copied under the lock, no pointers. */
struct metrics_snapshot {
	char iface[IF_NAMESIZE];
	struct shedd_stats stats;        /* the stats map, summed over CPUs */
	struct shedd_tun_stats tun;      /* the tun_stats map, summed */
	struct shedd_tun_checks tun_checks; /* the tun_checks map, summed */
	struct shedd_syn_checks syn_checks; /* the syn_checks map, summed */
	struct shedd_daemon_stats d;     /* the daemon's counters */
	double limit;                    /* SYN/s being allocated */
	double class_rate[SHEDD_NR_CLASSES];   /* published, SYN/s */
	double class_demand[SHEDD_NR_CLASSES]; /* smoothed token requests/s */
	bool aimd;                       /* false: a fixed rate */
	int mode;                        /* enum aimd_mode */
	int stage;                       /* ramp stage while recovering (0-based) */
	double last_good;                /* SYN/s */
	double peak_accept;              /* connections/s */
	double served_rate;              /* requests answered/s, over 1 s */
	__u64 latency_baseline_ns;       /* the derived target's calm latency */
	double latency_spread;           /* ... and the spread factor of its
					  * wait, 1-2; 0 = no baseline */
	double feed_cover;               /* requests answered per handshake the
					  * feed shows, at most 1; 0 = not known */
	double rpc;                      /* requests per connection (req_per_conn.h) */
	int rpc_src;                     /* enum aimd_rpc_src */
	__u64 calm_probes;               /* calm probes since start */
	bool probing;                    /* one runs */
	bool at_max;                     /* the limit binds at --max-rate while
					  * what it admits completes */
	__u64 at_max_ticks;              /* ticks it did, since this daemon
					  * started (not pinned) */
	bool have_depth;                 /* depth/backlog read at least once */
	__u64 depth, backlog;
	/* The listeners judged one by one (listeners.h), as of the last dump;
	 * the stuck ones' overflows since this daemon started (not pinned). */
	int listeners, stuck;
	int told;
	struct listener_id stuck_id[LISTENERS_TOLD];
	__u64 stuck_overflows;
	/* Ports in trouble of their own (listeners.h) and their limits
	 * (port_limit.h), as of the last tick; their overflows since this
	 * daemon started; the port limits' counters (port_buckets, pinned,
	 * every slot summed). */
	int ports_own;
	int nr_port_limits;
	__u16 limit_port[MAX_PORT_LIMITS];
	double limit_rate[MAX_PORT_LIMITS];
	__u64 port_overflows;
	__u64 port_limit_syn, port_limit_shed;
	bool backend;                    /* --backend-port listeners exist */
	bool tx_blocked;                 /* cookies and RSTs off: XDP_TX goes nowhere */
	/* Protected ports with a listener a cookie cannot answer
	 * (signed_ports.h), by kind. */
	__u32 signed_md5_ports, signed_mptcp_ports;
	/* Devices up whose inner SYNs the program does not judge, by enum
	 * tun_unjudged. */
	__u32 unjudged_tun[TUN_UJ_NR];
	double pinned_rate;              /* shedctl rate pin, SYN/s; 0: not pinned */
	double lease_s;                  /* --lease; 0: off */
	double fail_static_rate;         /* --fail-static-rate (or --rate), SYN/s */
	double heartbeat_gap_s;          /* age of the heartbeat the last tick found */
	__u64 lease_expiries;            /* heartbeats found older than the lease */
	int completion;                  /* enum signals_completion */
	struct fair_view fair;           /* per-source fairness (have: the maps exist) */
	/* SIGHUP reloads of --config since this daemon started (not pinned:
	 * a restart reads the file afresh, as a reload does). */
	__u64 reloads_ok, reloads_refused;
	bool reload_refused;             /* the last reload was refused */
	/* Connections to protected ports by the class of their peer, since
	 * this daemon loaded its probes (have_conns: counted), those of no
	 * prefix in the default class as it is now. */
	bool have_conns;
	struct shedd_conn_count conns[SHEDD_NR_CLASSES];
	/* The concurrency limit in force (conc.h), per class. */
	bool have_conn_limit;
	double conn_limit[SHEDD_NR_CLASSES];
	/* Idle connections ended by --recall (recall.h), since start. */
	__u64 recalled[SHEDD_NR_CLASSES];
	__u64 recall_failed;
};

/* One tick's worth of what the daemon measured. */
struct metrics_tick {
	const struct shedd_stats *percpu; /* ncpus entries, just read */
	int ncpus;
	const struct signal_report *sig;  /* NULL: publish, count nothing */
	double limit;
	const struct shedd_class_rate *rates; /* SHEDD_NR_CLASSES */
	const double *demand;             /* [class * ncpus + cpu] */
	bool aimd;
	int mode, stage;
	unsigned int why;                 /* enum aimd_reason bits of the tick */
	double last_good, peak_accept;
	double served_rate;
	__u64 latency_baseline_ns, calm_probes;
	double latency_spread;
	double feed_cover;
	double rpc;                       /* requests per connection, >= 1 */
	int rpc_src;                      /* enum aimd_rpc_src: where it comes from */
	bool probing;
	bool at_max;                      /* a tick of the last second found
					   * aimd_state.at_max */
	__u64 at_max_ticks;               /* ticks that did, since start */
	__u64 skipped;                    /* the daemon's ticks skipped, in all */
	bool tx_blocked;                  /* settings.tx_blocked (xdptx.h) */
	__u32 signed_md5_ports, signed_mptcp_ports; /* signed_ports.h */
	const unsigned int *unjudged_tun; /* TUN_UJ_NR counts (tunnels.h); NULL: none */
	double pinned_rate;               /* shedctl rate pin, SYN/s; 0: none */
	double lease_s;                   /* the lease (include/lease.h); 0: off */
	double fail_static_rate;          /* SYN/s */
	double heartbeat_gap_s;           /* the heartbeat's age when last stamped */
	__u64 lease_expiries;             /* since the daemon started */
	int completion;                   /* enum signals_completion */
	/* The ports limited now (port_limit.h), and the port limits'
	 * counters summed over every slot and CPU (NULL: not read). */
	int nr_port_limits;
	const __u16 *limit_port;          /* nr_port_limits entries */
	const double *limit_rate;         /* SYN/s, the same */
	const struct shedd_port_bucket *port_counts; /* MAX_PORT_LIMITS slots */
	__u32 default_class;              /* --default-class as it is */
	const double *conn_limit;         /* per class, the concurrency limit's
					   * share (conc.h); NULL: none in force */
	const __u64 *recalled;            /* per class, idle connections ended
					   * (recall.h), since start; NULL: none */
	__u64 recall_failed;              /* ends the kernel refused */
};

struct MHD_Daemon;
struct loader;

struct metrics {
	struct shedd_daemon_stats d;   /* the counters; the tick's own copy */
	__u64 skipped_seen;
	bool write_failed;             /* the last write of daemon_stats failed */
	struct metrics_snapshot next;  /* built by the tick, outside the lock */
	struct MHD_Daemon *http;       /* NULL with --metrics-addr none */
	bool listening;                /* listen_fd is bound, the thread not started */
	int listen_fd;
	bool ipv6;
	pthread_mutex_t lock;          /* guards snap */
	struct metrics_snapshot snap;  /* what the HTTP thread formats */
	char addr[64];
};

/* Parse ADDR:PORT, [IPV6]:PORT or "none" (returns 1, nothing to serve).
 * 0 and @ss/@len filled, or -1 with a message in @err. Pure. */
int metrics_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len,
		       char *err, size_t errlen);

/* Pure helpers, tested without root. */
/* The slot of kernel histogram bucket @idx (histogram.h) among the bounds:
 * the first bound at or above everything the bucket holds, or
 * SHEDD_HIST_BOUNDS (above every bound). */
int metrics_hist_slot(__u32 idx);
/* Add a tick's samples (@a, histogram.h buckets) to @h. */
void metrics_hist_add(struct shedd_daemon_hist *h, const struct sample_agg *a);
/* Count one tick into @d: its signals, the controller's verdict. */
void metrics_count(struct shedd_daemon_stats *d, const struct signal_report *r, bool aimd,
		   unsigned int why);
/* Count a reload of the config file into @s: applied (or unchanged), or
 * refused with the running configuration kept. */
void metrics_reload(struct metrics_snapshot *s, bool ok);
/* The exposition of @s into @f. 0, or -1 if @f failed. */
int metrics_format(FILE *f, const struct metrics_snapshot *s);

/* Load the pinned counters (an adopting shedd carries them on) and, unless
 * @addr is "none", listen on it. Call inside the protected network
 * namespace, before attaching. A bind failure names the address; it is an
 * error for an address the operator gave (@required), and for the default
 * one a warning, and shedd runs without metrics: protection comes first.
 * 0 or a negative errno. */
int metrics_open(struct metrics *m, struct loader *l, const char *addr, bool required,
		 const char *iface, bool backend);
/* Start the HTTP thread on the socket metrics_open() bound. Call after the
 * daemon dropped its capabilities: a thread inherits its creator's, and
 * the thread that parses requests from the network must hold none. 0 or a
 * negative errno. */
int metrics_start(struct metrics *m);
/* Every tick: count it (t->sig), write the pinned counters, publish a
 * snapshot. 0 or a negative errno from the map write (said on stderr;
 * the caller may go on). */
int metrics_tick(struct metrics *m, struct loader *l, const struct metrics_tick *t);
/* Stop the HTTP thread (waits for it). Accepts a metrics never opened. */
void metrics_close(struct metrics *m);

#endif /* SHEDD_METRICS_H */
