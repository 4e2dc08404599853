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
#include <linux/types.h>
#include "histogram.h"
#include "options.h"
#include "shedd.h"

/* A tick's (or a second's) merged sojourn or latency samples. */
struct sample_agg {
	__u64 count;
	__u64 sum_ns;
	__u64 min_ns;
	__u64 max_ns;
	__u64 hist[HIST_BUCKETS];
};

struct signal_report {
	bool have_sojourn;
	struct sample_agg sojourn;
	bool have_depth;
	__u64 depth;
	__u64 backlog;
	bool have_netstat;
	__u64 overflows; /* ListenOverflows added in the tick */
	__u64 drops;     /* ListenDrops added in the tick (includes overflows) */
	bool have_latency;
	struct sample_agg latency;
	__u64 latency_bad; /* malformed samples in the tick */
};

struct sojourn_bpf;

struct signals {
	struct sojourn_bpf *skel;
	int ncpus;
	struct shedd_sojourn *percpu; /* ncpus entries */
	struct shedd_sojourn *zero;
	int diag_fd;
	bool have_netstat;
	__u64 last_overflows, last_drops;
	int lat_fd;
	char lat_path[108];
	__u16 ports[MAX_PORTS];
	int nr_ports;
};

/* Open every source; failures are reported on stderr and leave that source
 * out. Must run inside the protected network namespace. */
void signals_open(struct signals *s, const struct shedd_options *o, int ncpus);
/* Read and reset a tick's worth of samples. */
void signals_read(struct signals *s, struct signal_report *r);
void signals_close(struct signals *s);

/* Pure helpers (signal_parse.c), tested without root. */
void agg_add(struct sample_agg *a, __u64 ns);
void agg_merge(struct sample_agg *into, const struct sample_agg *from);
void agg_from_sojourn(struct sample_agg *a, const struct shedd_sojourn *percpu, int ncpus);
__u64 agg_quantile(const struct sample_agg *a, double q);
/* ListenOverflows and ListenDrops from the text of /proc/net/netstat. */
int netstat_parse(const char *text, __u64 *overflows, __u64 *drops);
/* One latency datagram: 0 and the latency, or -1 if malformed. */
int latency_decode(const void *buf, size_t len, __u64 *ns);

#endif /* SHEDD_SIGNALS_H */
