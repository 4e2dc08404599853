// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* signal_parse.c - the pure parts of the signals: /proc/net/netstat and
 * /proc/net/snmp text, latency datagrams, sock_diag drop attributes, the
 * fullest listener group, the listeners' verdict into a report (the
 * verdict itself is listeners.c's) and the two-slot sojourn protocol. No
 * BPF skeleton, no I/O: unit-tested without root, clang or bpftool.
 */
#include <string.h>
#include <stdio.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>

#include "shedd_latency.h"
#include "signal_parse.h"

int netstat_parse(const char *text, __u64 *overflows, __u64 *drops)
{
	const char *names = strstr(text, "TcpExt:");
	const char *values;
	int found = 0;

	if (!names)
		return -1;
	values = strstr(names + 7, "TcpExt:");
	if (!values)
		return -1;
	names += 7;
	values += 7;
	/* Walk both lines field by field. */
	while (*names && *names != '\n') {
		char name[64];
		unsigned long long v;
		int nlen = 0, vlen = 0;

		if (sscanf(names, " %63s%n", name, &nlen) != 1 ||
		    sscanf(values, " %llu%n", &v, &vlen) != 1)
			break;
		names += nlen;
		values += vlen;
		if (!strcmp(name, "ListenOverflows")) {
			*overflows = v;
			found |= 1;
		} else if (!strcmp(name, "ListenDrops")) {
			*drops = v;
			found |= 2;
		}
	}
	return found == 3 ? 0 : -1;
}

/* The end of the line that begins at @p, within @end. */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl : end;
}

/* The next space-separated word of [*p, end): its start and length, *p past
 * it; false at the end of the range. */
static bool next_word(const char **p, const char *end, const char **w, size_t *wlen)
{
	const char *q = *p;

	while (q < end && *q == ' ')
		q++;
	if (q == end)
		return false;
	*w = q;
	while (q < end && *q != ' ')
		q++;
	*wlen = (size_t)(q - *w);
	*p = q;
	return true;
}

/* A whole word of decimal digits into @v: 0, or -1 (a sign, junk, more than
 * 20 digits, or past 2^64 - 1). */
static int word_u64(const char *w, size_t len, __u64 *v)
{
	__u64 n = 0;
	size_t i;

	if (!len || len > 20)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned int d = (unsigned int)(w[i] - '0');

		if (d > 9 || n > (~0ULL - d) / 10)
			return -1;
		n = n * 10 + d;
	}
	*v = n;
	return 0;
}

int proc_counter_parse(const char *text, size_t len, const char *group, const char *name,
		       __u64 *v)
{
	const char *end = text + len, *p = text;
	size_t glen = strlen(group);

	/* The first line that begins with "GROUP:" names the fields, the next
	 * line, which must begin so too, holds their values in the same
	 * order. A group named again further down is not looked at. */
	while (p < end) {
		const char *e = line_end(p, end);

		if ((size_t)(e - p) > glen && !memcmp(p, group, glen) && p[glen] == ':') {
			const char *names = p + glen + 1, *vals, *ve, *n, *x;
			size_t nlen, xlen;

			if (e == end)
				return -1;
			vals = e + 1;
			ve = line_end(vals, end);
			/* A line the text cuts short (no newline: a read that
			 * did not take the whole file) may end in half a
			 * number: not taken. */
			if (ve == end || (size_t)(ve - vals) <= glen || memcmp(vals, group, glen) ||
			    vals[glen] != ':')
				return -1;
			vals += glen + 1;
			while (next_word(&names, e, &n, &nlen)) {
				if (!next_word(&vals, ve, &x, &xlen))
					return -1;
				if (nlen == strlen(name) && !memcmp(n, name, nlen))
					return word_u64(x, xlen, v);
			}
			return -1;
		}
		p = e + 1;
	}
	return -1;
}

__u64 completed_from_passive_opens(__u64 passive_opens, __u64 unprotected_syn, __u64 admitted)
{
	__u64 c = passive_opens > unprotected_syn ? passive_opens - unprotected_syn : 0;

	return c < admitted ? c : admitted;
}

enum logline_reject latency_decode(const void *buf, size_t len, __u64 *ns, __u32 *unsent)
{
	struct shedd_latency_sample2 s;

	if (len == sizeof(struct shedd_latency_sample)) {
		memcpy(&s, buf, sizeof(struct shedd_latency_sample));
		s.unsent = s.reserved = 0;
		if (s.version != SHEDD_LATENCY_VERSION)
			return LOGLINE_REJ_BINARY;
	} else if (len == sizeof(s)) {
		memcpy(&s, buf, sizeof(s));
		if (s.version != SHEDD_LATENCY_VERSION_2 || s.reserved)
			return LOGLINE_REJ_BINARY;
	} else {
		return LOGLINE_REJ_BINARY;
	}
	if (s.magic != SHEDD_LATENCY_MAGIC || s.flags)
		return LOGLINE_REJ_BINARY;
	/* The log lines' cap: beyond it the sum of a second's samples, and
	 * the histogram's _sum, could wrap. */
	if (s.latency_ns > LOGLINE_MAX_NS)
		return LOGLINE_REJ_RANGE;
	*ns = s.latency_ns;
	*unsent = s.unsent;
	return LOGLINE_OK;
}

enum logline_reject latency_datagram_decode(const void *buf, size_t len, bool truncated,
					    struct latency_datagram *d)
{
	const __u32 magic = SHEDD_LATENCY_MAGIC;
	struct logline_sample ls;
	enum logline_reject r;

	memset(d, 0, sizeof(*d));
	if (truncated)
		return LOGLINE_REJ_TRUNCATED;
	if (len >= sizeof(magic) && !memcmp(buf, &magic, sizeof(magic)))
		return latency_decode(buf, len, &d->ns, &d->unsent);
	r = logline_parse(buf, len, &ls);
	if (r != LOGLINE_OK)
		return r;
	d->log = true;
	d->ns = ls.rt_ns;
	d->have_upstream = ls.have_urt;
	d->no_upstream = ls.urt_none;
	d->upstream_ns = ls.urt_ns;
	d->status = ls.status;
	d->no_response = ls.no_response;
	d->conn_req = ls.conn_req;
	return LOGLINE_OK;
}

bool latency_served(const struct latency_datagram *d)
{
	if (d->no_response)
		return false;
	if (d->no_upstream && (d->status == 400 || d->status == 408))
		return false;
	return !d->status || (d->status != 499 && d->status < 500);
}

int diag_msg_drops(const struct inet_diag_msg *m, size_t len, __u32 *drops)
{
	const struct rtattr *a;
	size_t left;

	if (len < NLMSG_ALIGN(sizeof(*m)))
		return -1;
	a = (const struct rtattr *)((const char *)m + NLMSG_ALIGN(sizeof(*m)));
	left = len - NLMSG_ALIGN(sizeof(*m));
	for (; RTA_OK(a, left); a = RTA_NEXT(a, left)) {
		__u32 mem[SK_MEMINFO_VARS];

		if (a->rta_type != INET_DIAG_SKMEMINFO)
			continue;
		if (RTA_PAYLOAD(a) < (SK_MEMINFO_DROPS + 1) * sizeof(__u32))
			return -1;
		memcpy(mem, RTA_DATA(a), (SK_MEMINFO_DROPS + 1) * sizeof(__u32));
		*drops = mem[SK_MEMINFO_DROPS];
		return 0;
	}
	return -1;
}

__u64 overflow_drops(__u64 listener_drops, bool have_netstat, __u64 ns_overflows,
		     bool overflowed_before)
{
	if (!have_netstat || ns_overflows > 0 || overflowed_before)
		return listener_drops;
	return 0;
}

struct queue_group queue_fullest(const struct queue_group *g, int n)
{
	struct queue_group best = g[0];
	int i;

	/* depth_i / backlog_i > depth_b / backlog_b, without a division:
	 * both are socket counters far below 2^32, so the products fit. */
	for (i = 1; i < n; i++) {
		__u64 mine = g[i].depth * best.backlog, theirs = best.depth * g[i].backlog;

		if (mine > theirs || (mine == theirs && g[i].depth > best.depth))
			best = g[i];
	}
	return best;
}

void listeners_report(struct signal_report *r, const struct listener_verdict *v, int ngroups)
{
	struct queue_group full = queue_fullest(v->groups, ngroups > 0 ? ngroups : 1);

	r->depth = full.depth;
	r->backlog = full.backlog;
	r->listen_drops = v->drops;
	r->listen_overflows = v->overflows;
	r->listeners = *v;
}

int sojourn_collect(__u32 *epoch, int (*read_slot)(void *ctx, __u32 slot),
		    int (*clear_slot)(void *ctx, __u32 slot), void *ctx)
{
	/* The probes write slot (epoch & 1). The other one they left at the
	 * last flip, a whole tick ago: a probe that loaded the epoch before
	 * that flip has long finished, so nobody writes it while it is read
	 * and cleared. Only then flip: the probes move to the cleared slot,
	 * and one that loaded the epoch just before this flip still writes
	 * the slot read at the next tick. */
	__u32 slot = (__atomic_load_n(epoch, __ATOMIC_ACQUIRE) + 1) & 1;
	int err = read_slot(ctx, slot);

	if (!err)
		err = clear_slot(ctx, slot);
	__atomic_store_n(epoch, *epoch + 1, __ATOMIC_RELEASE);
	return err;
}
