/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* logline.h - request latency from a web server's own log line, as nginx and
 * HAProxy send it to shedd's latency socket over syslog. Pure: no I/O, no
 * allocation, no locale; reads exactly the bytes it is given.
 *
 * The syslog header is the server's (priority, time, host name, tag; RFC
 * 3164 or 5424, HAProxy's short, timed, iso or raw), so the message begins
 * at a place no client moves. The message begins with the word `shedd`,
 * then shedd's fields, `key=value`:
 *   rt=SECONDS    request time, decimal seconds (nginx $request_time)
 *   urt=SECONDS   upstream time; `-` for none, several values joined by
 *                 `,` or `:` (several upstreams tried) are summed
 *   rt_ms=MS      request time, integer milliseconds (HAProxy %Ta); -1: none
 *   urt_ms=MS     upstream time in ms (HAProxy %Tr); -1: none
 *   cr=N          which request of its connection this was, from 1 (nginx
 *                 $connection_requests); `-` for none. Optional: it gives
 *                 the controller the requests per connection
 *                 (req_per_conn.h)
 *   st=CODE       HTTP status; it closes the fields
 * Nothing after st= is read: fields of the operator's own, and anything a
 * client wrote (a URL, a header), follow it. Without st=, the fields run
 * to the message's end, and any other word refuses the line.
 */
#ifndef SHEDD_LOGLINE_H
#define SHEDD_LOGLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

/* Longest log line accepted, bytes. nginx and HAProxy lines with a long
 * header stay well below it; the latency socket's receive buffer is this
 * large plus one, so a longer datagram is seen as truncated. */
#ifndef LOGLINE_MAX_LEN
#define LOGLINE_MAX_LEN 4096
#endif

/* Largest latency accepted: one hour. A request that took longer is not a
 * delay a load shedder acts on (clients give up within seconds), a clock
 * step or a garbled field is likelier; and the cap keeps a second's sum of
 * samples far from overflowing 64 bits of nanoseconds. */
#ifndef LOGLINE_MAX_NS
#define LOGLINE_MAX_NS (3600ULL * 1000000000ULL)
#endif

/* Why a datagram on the latency socket was refused. The parser returns
 * LOGLINE_REJ_NO_MARKER..LOGLINE_REJ_NUL, LOGLINE_REJ_HEADER and
 * LOGLINE_REJ_UNCLOSED; the receiver adds the ones it alone can tell (a
 * malformed binary sample, a truncated datagram; a binary sample above
 * LOGLINE_MAX_NS is LOGLINE_REJ_RANGE). The values index pinned counters
 * (shedd_daemon_stats.latency_refused): new ones go at the end. */
enum logline_reject {
	LOGLINE_OK = 0,
	LOGLINE_REJ_NO_MARKER,  /* the message does not begin with the word `shedd` */
	LOGLINE_REJ_NO_RT,      /* no request time (missing, `-`, -1) */
	LOGLINE_REJ_BAD_NUMBER, /* not a plain decimal (inf, nan, 1e9, 0x10, +1, ...) */
	LOGLINE_REJ_NEGATIVE,   /* a time below zero (other than -1 for none) */
	LOGLINE_REJ_RANGE,      /* above LOGLINE_MAX_NS (either format), a status
	                         * above 999, or cr= of 0 or above 10^9 */
	LOGLINE_REJ_DUPLICATE,  /* a key twice, or rt with rt_ms, urt with urt_ms */
	LOGLINE_REJ_TOO_LONG,   /* more than LOGLINE_MAX_LEN bytes */
	LOGLINE_REJ_NUL,        /* a NUL byte inside the datagram */
	LOGLINE_REJ_BINARY,     /* (receiver) binary format, malformed */
	LOGLINE_REJ_TRUNCATED,  /* (receiver) longer than the receive buffer */
	LOGLINE_REJ_HEADER,     /* began with '<' or a time, not a syslog header */
	LOGLINE_REJ_UNCLOSED,   /* a word other than a field before st= */
	LOGLINE_NR_REJECTS
};

/* One request's sample. */
struct logline_sample {
	__u64 rt_ns;      /* request time */
	bool have_urt;
	bool urt_none;    /* urt= or urt_ms= given as none (`-`, -1): no
	                   * upstream took part */
	__u64 urt_ns;     /* upstream time, summed over the upstreams tried */
	__u32 status;     /* HTTP status, 0 when not given */
	bool have_status; /* st= was given (it closed the fields) */
	bool no_response; /* st= given as `-` or -1: no response was sent
	                   * (HAProxy, a request its client abandoned) */
	__u32 conn_req;   /* cr=: the request's number on its connection;
	                   * 0 when not given */
};

/* Parse one datagram of @len bytes: LOGLINE_OK and @out filled, or the
 * reason it was refused (@out then undefined). Work is linear in @len. */
enum logline_reject logline_parse(const char *buf, size_t len, struct logline_sample *out);

/* A short name of @r for the status line ("no_marker", "range", ...). */
const char *logline_reject_name(enum logline_reject r);

#endif /* SHEDD_LOGLINE_H */
