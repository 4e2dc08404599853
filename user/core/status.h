/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* status.h - counter arithmetic for the control tick and the status line:
 * per-CPU snapshots of the stats map, their sums and their rates. Pure.
 */
#ifndef SHEDD_STATUS_H
#define SHEDD_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "shedd.h"
#include "signal_parse.h"

/* Sum of the per-CPU values. */
void stats_sum(const struct shedd_stats *percpu, int ncpus, struct shedd_stats *sum);

/* Demand of each class on each CPU, token requests per second (charged:
 * SYNs charged directly and proven ACKs, not cookie SYN-ACKs) between two
 * snapshots taken @dt_sec apart, into demand[class * ncpus + cpu]. */
void stats_demand(const struct shedd_stats *prev, const struct shedd_stats *cur,
		  int ncpus, double dt_sec, double *demand);

/* One status line: per class offered/s, admitted/s, dropped/s, RST/s, and
 * where nonzero cookie SYN-ACKs/s and proven ACKs/s, from two summed
 * snapshots @dt_sec apart. */
void status_format(char *buf, size_t len, const struct shedd_stats *prev,
		   const struct shedd_stats *cur, double dt_sec, double limit_per_sec);

/* The short form, for a service manager's STATUS=: "mode=M limit=N/s
 * offered=N/s admitted=N/s shed=N/s", over every class (admitted counts
 * proven ACKs admitted; shed is dropped and RST-answered SYNs). */
void status_summary(char *buf, size_t len, const char *mode, const struct shedd_stats *prev,
		    const struct shedd_stats *cur, double dt_sec, double limit_per_sec);

/* The latency target in force, for the status line and the start-up
 * message: "latency_target=off" (@off), "latency_target=auto:learning"
 * (@derived, no baseline yet), "latency_target=auto:42ms" (@derived) or
 * "latency_target=50ms" (given). Returns what snprintf() returns. */
int status_latency_target(char *buf, size_t len, bool off, bool derived, __u64 target_ns);
/* The service latency part of the status line, from a second's merged
 * report with have_latency set: "latency_n=N [log_n=N] latency_p99_ms=X
 * [upstream_p99_ms=X] bad=N [bad_why=REASON:N,...] lost=N ". log_n (samples
 * from log lines; the rest are binary), upstream_p99_ms and bad_why only
 * where there are any. Returns the length written (truncated to @len). */
size_t status_latency_format(char *buf, size_t len, const struct signal_report *s);

/* The lease as a reader sees it at @now_ns (shedctl): @l the pinned record
 * (include/lease.h), @written the rates the daemon wrote. */
struct lease_state {
	bool stamped;          /* a heartbeat was ever stamped */
	bool on;               /* a lease is set */
	bool pinned;           /* an operator's pin holds: no lease */
	bool expired;          /* the program relaxes the rates */
	double age_s;          /* since the last heartbeat; -1: none */
	double lease_s;
	double fail_static_rate; /* the classes' fail-static rates, summed */
	__u64 rate_per_sec[SHEDD_NR_CLASSES]; /* what the program admits now */
};
void status_lease(const struct shedd_lease *l, const __u64 written[SHEDD_NR_CLASSES],
		  __u64 now_ns, struct lease_state *out);

#endif /* SHEDD_STATUS_H */
