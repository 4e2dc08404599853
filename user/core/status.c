// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* status.c - sums and rates of the stats map, and the status line. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "options.h"
#include "lease.h"
#include "status.h"

void stats_sum(const struct shedd_stats *percpu, int ncpus, struct shedd_stats *sum)
{
	const size_t words = sizeof(*sum) / sizeof(__u64);
	__u64 *out = (__u64 *)sum;
	size_t w;
	int i;

	memset(sum, 0, sizeof(*sum));
	/* struct shedd_stats is all __u64 counters: add them word by word. */
	for (i = 0; i < ncpus; i++) {
		const __u64 *in = (const __u64 *)&percpu[i];

		for (w = 0; w < words; w++)
			out[w] += in[w];
	}
}

static double per_sec(__u64 prev, __u64 cur, double dt_sec)
{
	/* Counters only grow; a smaller value means the map was replaced. */
	if (cur < prev || dt_sec <= 0)
		return 0;
	return (double)(cur - prev) / dt_sec;
}

void stats_demand(const struct shedd_stats *prev, const struct shedd_stats *cur,
		  int ncpus, double dt_sec, double *demand)
{
	int c, i;

	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		for (i = 0; i < ncpus; i++)
			demand[c * ncpus + i] = per_sec(prev[i].cls[c].charged,
							cur[i].cls[c].charged, dt_sec);
}

void status_summary(char *buf, size_t len, const char *mode, const struct shedd_stats *prev,
		    const struct shedd_stats *cur, double dt_sec, double limit_per_sec)
{
	double offered = 0, admitted = 0, shed = 0;
	int c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		const struct shedd_class_stats *p = &prev->cls[c], *n = &cur->cls[c];

		offered += per_sec(p->syn, n->syn, dt_sec);
		admitted += per_sec(p->admitted, n->admitted, dt_sec) +
			    per_sec(p->ack_admitted, n->ack_admitted, dt_sec);
		shed += per_sec(p->dropped, n->dropped, dt_sec) +
			per_sec(p->rst_sent, n->rst_sent, dt_sec);
	}
	snprintf(buf, len, "mode=%s limit=%.0f/s offered=%.0f/s admitted=%.0f/s shed=%.0f/s",
		 mode, limit_per_sec, offered, admitted, shed);
}

void status_format(char *buf, size_t len, const struct shedd_stats *prev,
		   const struct shedd_stats *cur, double dt_sec, double limit_per_sec)
{
	size_t off;
	int c;

	off = (size_t)snprintf(buf, len, "limit=%.0f/s", limit_per_sec);
	for (c = 0; c < SHEDD_NR_CLASSES && off < len; c++) {
		const struct shedd_class_stats *p = &prev->cls[c], *n = &cur->cls[c];
		double cookies = per_sec(p->cookie_sent, n->cookie_sent, dt_sec);
		double proven = per_sec(p->ack_valid, n->ack_valid, dt_sec);

		off += (size_t)snprintf(buf + off, len - off,
					" | %s in=%.0f adm=%.0f drop=%.0f rst=%.0f",
					class_name((__u32)c), per_sec(p->syn, n->syn, dt_sec),
					per_sec(p->admitted, n->admitted, dt_sec),
					per_sec(p->dropped, n->dropped, dt_sec),
					per_sec(p->rst_sent, n->rst_sent, dt_sec));
		/* Verified admission, only where it happens: the line stays
		 * short for classes charged directly. */
		if ((cookies > 0 || proven > 0) && off < len)
			off += (size_t)snprintf(buf + off, len - off, " cookies=%.0f proven=%.0f",
						cookies, proven);
	}
}

int status_latency_target(char *buf, size_t len, bool off, bool derived, __u64 target_ns)
{
	double ms = (double)target_ns / 1e6;
	const char *how = derived ? "auto:" : "";

	if (off)
		return snprintf(buf, len, "latency_target=off");
	if (derived && !target_ns)
		return snprintf(buf, len, "latency_target=auto:learning");
	/* Whole milliseconds from 10 ms up; three digits below. */
	if (ms >= 10)
		return snprintf(buf, len, "latency_target=%s%.0fms", how, ms);
	return snprintf(buf, len, "latency_target=%s%.3gms", how, ms);
}

/* snprintf at @off, never past @len: the offset it returns stays < len. */
static size_t append(char *buf, size_t len, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t append(char *buf, size_t len, size_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (off + 1 >= len)
		return off;
	va_start(ap, fmt);
	n = vsnprintf(buf + off, len - off, fmt, ap);
	va_end(ap);
	if (n < 0)
		return off;
	return off + (size_t)n < len ? off + (size_t)n : len - 1;
}

size_t status_latency_format(char *buf, size_t len, const struct signal_report *s)
{
	size_t off = 0;
	const char *sep = "";
	int r;

	if (!len)
		return 0;
	buf[0] = '\0';
	off = append(buf, len, off, "latency_n=%llu ", (unsigned long long)s->latency.count);
	if (s->latency_log)
		off = append(buf, len, off, "log_n=%llu ", (unsigned long long)s->latency_log);
	off = append(buf, len, off, "latency_p99_ms=%.2f ", agg_quantile(&s->latency, 0.99) / 1e6);
	if (s->upstream.count)
		off = append(buf, len, off, "upstream_p99_ms=%.2f ",
			     agg_quantile(&s->upstream, 0.99) / 1e6);
	off = append(buf, len, off, "bad=%llu ", (unsigned long long)s->latency_bad);
	if (s->latency_bad) {
		off = append(buf, len, off, "bad_why=");
		for (r = 1; r < LOGLINE_NR_REJECTS; r++) {
			if (!s->latency_why[r])
				continue;
			off = append(buf, len, off, "%s%s:%llu", sep,
				     logline_reject_name((enum logline_reject)r),
				     (unsigned long long)s->latency_why[r]);
			sep = ",";
		}
		off = append(buf, len, off, " ");
	}
	return append(buf, len, off, "lost=%llu ", (unsigned long long)s->latency_lost);
}

void status_lease(const struct shedd_lease *l, const __u64 written[SHEDD_NR_CLASSES],
		  __u64 now_ns, struct lease_state *out)
{
	int c;

	memset(out, 0, sizeof(*out));
	out->stamped = l->heartbeat_ns != 0;
	out->on = l->lease_ns != 0;
	out->pinned = (l->flags & SHEDD_LEASE_PINNED) != 0;
	out->age_s = out->stamped && now_ns >= l->heartbeat_ns ?
			     (double)(now_ns - l->heartbeat_ns) / 1e9 : -1;
	out->lease_s = (double)l->lease_ns / 1e9;
	out->expired = lease_expired(l, now_ns);
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		struct shedd_class_rate r = { .rate_per_sec = written[c] };

		lease_relax(&r, l, (__u32)c, now_ns);
		out->rate_per_sec[c] = r.rate_per_sec;
		out->fail_static_rate += out->on ? (double)l->fail_rate_per_sec[c] : 0;
	}
}
