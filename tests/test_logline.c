// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_logline.c - request latency from nginx's and HAProxy's log lines:
 * one table row per line as the servers send it (nginx with and without a
 * host name; HAProxy rfc3164, rfc5424 and raw), and per hostile line, with
 * the sample or the reason it is refused. Every row checks every field.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "logline.h"

#define MS 1000000ULL
#define NONE UINT64_MAX /* no upstream time */

struct row {
	const char *what;
	const char *line;
	enum logline_reject want;
	__u64 rt_ns;
	__u64 urt_ns; /* NONE: no upstream time */
	__u32 status;
};

static const struct row rows[] = {
	/* nginx, as it sends them */
	{ "nginx, nohostname",
	  "<190>Nov 30 14:51:02 shedd: shedd rt=0.123 urt=0.120 st=200",
	  LOGLINE_OK, 123 * MS, 120 * MS, 200 },
	{ "nginx, with its host name",
	  "<190>Nov 30 14:51:02 web1 shedd: shedd rt=1.500 urt=1.498 st=502",
	  LOGLINE_OK, 1500 * MS, 1498 * MS, 502 },
	{ "nginx, host named shedd",
	  "<190>Nov  3 04:01:02 shedd shedd: shedd rt=0.002 urt=- st=404",
	  LOGLINE_OK, 2 * MS, NONE, 404 },
	{ "nginx, static return: no upstream",
	  "<190>Nov 30 14:51:02 shedd: shedd rt=0.000 urt=- st=200",
	  LOGLINE_OK, 0, NONE, 200 },
	{ "nginx, two upstreams with a comma",
	  "<190>Nov 30 14:51:02 shedd: shedd rt=0.031 urt=0.010, 0.020 st=200",
	  LOGLINE_OK, 31 * MS, 30 * MS, 200 },
	{ "nginx, upstreams with a colon (internal redirect)",
	  "<190>Nov 30 14:51:02 shedd: shedd rt=0.040 urt=0.010 : 0.025 st=200",
	  LOGLINE_OK, 40 * MS, 35 * MS, 200 },
	{ "nginx, three upstreams, one not reached",
	  "<190>Nov 30 14:51:02 shedd: shedd rt=0.050 urt=0.010, -, 0.005 : 0.001 st=504",
	  LOGLINE_OK, 50 * MS, 16 * MS, 504 },
	{ "nginx, upstreams without spaces",
	  "shedd rt=0.050 urt=0.010,0.020:0.003 st=200",
	  LOGLINE_OK, 50 * MS, 33 * MS, 200 },
	{ "nginx, every upstream '-'",
	  "shedd rt=0.050 urt=-, - st=502",
	  LOGLINE_OK, 50 * MS, NONE, 502 },
	{ "microseconds and beyond: nine decimals kept, the rest dropped",
	  "shedd rt=0.0000012349 st=200",
	  LOGLINE_OK, 1234, NONE, 200 },
	{ "whole seconds without a point",
	  "shedd rt=3 st=200",
	  LOGLINE_OK, 3000 * MS, NONE, 200 },
	{ "status left out",
	  "shedd rt=0.5",
	  LOGLINE_OK, 500 * MS, NONE, 0 },
	{ "a trailing newline",
	  "shedd rt=0.5 st=200\n",
	  LOGLINE_OK, 500 * MS, NONE, 200 },
	{ "fields of one's own after st= are not read",
	  "shedd rt=0.007 st=201 ua=curl/8 x= =y word foo=bar=baz",
	  LOGLINE_OK, 7 * MS, NONE, 201 },
	{ "exactly the cap: one hour",
	  "shedd rt=3600.000",
	  LOGLINE_OK, 3600000 * MS, NONE, 0 },
	/* HAProxy */
	{ "haproxy, rfc3164",
	  "<134>Nov 30 14:51:02 haproxy[4242]: shedd rt_ms=87 urt_ms=80 st=200",
	  LOGLINE_OK, 87 * MS, 80 * MS, 200 },
	{ "haproxy, rfc5424",
	  "<134>1 2026-11-30T14:51:02.123456+00:00 web1 haproxy 4242 - - shedd rt_ms=5 urt_ms=3 st=200",
	  LOGLINE_OK, 5 * MS, 3 * MS, 200 },
	{ "haproxy, rfc5424, program named shedd",
	  "<134>1 2026-11-30T14:51:02Z web1 shedd 4242 - - shedd rt_ms=6 urt_ms=-1 st=503",
	  LOGLINE_OK, 6 * MS, NONE, 503 },
	{ "haproxy, raw",
	  "shedd rt_ms=0 urt_ms=0 st=200",
	  LOGLINE_OK, 0, 0, 200 },
	{ "haproxy, no server reached: urt_ms=-1, st=-1",
	  "shedd rt_ms=3001 urt_ms=-1 st=-1",
	  LOGLINE_OK, 3001 * MS, NONE, 0 },
	/* HAProxy's other headers, and util-linux logger's */
	{ "haproxy, rfc3164 with log-send-hostname",
	  "<134>Dec  1 17:38:02 vm haproxy[17599]: shedd rt_ms=1 urt_ms=1 st=200\n",
	  LOGLINE_OK, 1 * MS, 1 * MS, 200 },
	{ "haproxy, format short: <severity> and the message",
	  "<6>shedd rt_ms=4 urt_ms=2 st=200\n",
	  LOGLINE_OK, 4 * MS, 2 * MS, 200 },
	{ "haproxy, format priority",
	  "<134>shedd rt_ms=4 urt_ms=2 st=200\n",
	  LOGLINE_OK, 4 * MS, 2 * MS, 200 },
	{ "haproxy, format timed",
	  "<6>2026-12-01T17:38:02.919177+00:00 shedd rt_ms=4 urt_ms=2 st=200\n",
	  LOGLINE_OK, 4 * MS, 2 * MS, 200 },
	{ "haproxy, format iso",
	  "2026-12-01T17:38:02.919179+00:00 shedd rt_ms=4 urt_ms=2 st=200\n",
	  LOGLINE_OK, 4 * MS, 2 * MS, 200 },
	{ "haproxy, log-send-hostname shedd, log-tag shedd",
	  "<134>Dec  1 17:58:15 shedd shedd[13306]: shedd rt_ms=0 urt_ms=0 st=200\n",
	  LOGLINE_OK, 0, 0, 200 },
	{ "haproxy, rfc5424, host and program named shedd",
	  "<134>1 2026-12-01T17:38:02Z shedd shedd 7 - - shedd rt_ms=6 urt_ms=5 st=200\n",
	  LOGLINE_OK, 6 * MS, 5 * MS, 200 },
	{ "nginx, without nohostname or tag: host shedd, tag nginx",
	  "<190>Dec  1 17:38:02 shedd nginx: shedd rt=0.003 urt=0.002 st=200",
	  LOGLINE_OK, 3 * MS, 2 * MS, 200 },
	{ "logger -u: no host name",
	  "<13>Dec  1 17:38:02 app: shedd rt=0.250 st=200",
	  LOGLINE_OK, 250 * MS, NONE, 200 },
	{ "logger --rfc5424: structured data",
	  "<13>1 2026-12-01T17:38:02.942353+00:00 vm app - - [timeQuality tzKnown=\"1\" "
	  "isSynced=\"0\"] shedd rt=0.250 st=200",
	  LOGLINE_OK, 250 * MS, NONE, 200 },
	{ "rfc5424: structured data holding ] and a marker, escaped",
	  "<134>1 - vm haproxy 7 - [ua@1 v=\"\\] shedd rt=9 \\\"\"][x@1] shedd rt_ms=6 st=200",
	  LOGLINE_OK, 6 * MS, NONE, 200 },
	/* Injection: what a client writes (a header, a URL) is placed after
	 * shedd's fields; it never changes the sample. */
	{ "nginx, a User-Agent with a sample: the true one counts",
	  "<190>Dec  1 17:38:02 shedd: shedd rt=0.004 urt=0.003 st=200 "
	  "ua=x shedd rt=0.001 st=200 x",
	  LOGLINE_OK, 4 * MS, 3 * MS, 200 },
	{ "nginx, a 499 is not turned into a 200",
	  "<190>Dec  1 17:38:02 shedd: shedd rt=0.500 urt=- st=499 x shedd rt=0.001 st=200 x",
	  LOGLINE_OK, 500 * MS, NONE, 499 },
	{ "nginx, an overload is not hidden",
	  "<190>Dec  1 17:38:02 web1 shedd: shedd rt=2.750 urt=2.749 st=200 shedd rt=0.001",
	  LOGLINE_OK, 2750 * MS, 2749 * MS, 200 },
	{ "nginx, no fake hour-long latency",
	  "<190>Dec  1 17:38:02 shedd: shedd rt=0.004 urt=0.003 st=200 shedd rt=3599 st=200",
	  LOGLINE_OK, 4 * MS, 3 * MS, 200 },
	{ "nginx, escapes it writes (\\x22, \\x5C, \\x09) after st=",
	  "<190>Dec  1 17:38:02 shedd: shedd rt=0.000 urt=0.000 st=200 ua=x shedd rt=0.001 "
	  "st=200 x \\x22q\\x22 \\x5C tab\\x09end",
	  LOGLINE_OK, 0, 0, 200 },
	{ "haproxy, an unescaped header: quotes, backslash, tab, newline",
	  "<134>Dec  1 17:38:02 haproxy[17599]: shedd rt_ms=1 urt_ms=1 st=200 "
	  "ua=\"x shedd rt=0.001 st=200 x \"q\" \\ tab\tend\" x\nshedd rt_ms=9000 st=200\n",
	  LOGLINE_OK, 1 * MS, 1 * MS, 200 },
	{ "haproxy, rfc5424, the same",
	  "<134>1 2026-12-01T17:38:02.919156+00:00 vm haproxy 17599 - - shedd rt_ms=1 "
	  "urt_ms=1 st=200 x shedd rt_ms=9000 urt_ms=9000 st=503\n",
	  LOGLINE_OK, 1 * MS, 1 * MS, 200 },
	{ "haproxy, raw, the same",
	  "shedd rt_ms=1 urt_ms=-1 st=-1 shedd rt_ms=5 urt_ms=5 st=200\n",
	  LOGLINE_OK, 1 * MS, NONE, 0 },
	{ "right after st=: rt= is not read",
	  "shedd rt=0.002 st=200 rt=9", LOGLINE_OK, 2 * MS, NONE, 200 },
	{ "right after st=: st= is not read",
	  "shedd rt=0.002 st=499 st=200", LOGLINE_OK, 2 * MS, NONE, 499 },
	{ "right after st=: urt= is not read",
	  "shedd rt=0.002 st=200 urt=5", LOGLINE_OK, 2 * MS, NONE, 200 },
	{ "right after st=: '=' and bare keys",
	  "shedd rt=0.002 st=200 = =rt=1 rt= =", LOGLINE_OK, 2 * MS, NONE, 200 },
	{ "right after st=: carriage return and newline",
	  "shedd rt=0.002 st=200\r\nshedd rt=9 st=200", LOGLINE_OK, 2 * MS, NONE, 200 },
	{ "right after st= '-'",
	  "shedd rt_ms=3 st=- shedd rt_ms=1 st=200", LOGLINE_OK, 3 * MS, NONE, 0 },
	{ "glued to the status: a digit more is out of range",
	  "shedd rt=0.002 st=2009", LOGLINE_REJ_RANGE, 0, NONE, 0 },
	{ "glued to the status: a letter",
	  "shedd rt=0.002 st=200x", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "glued to the status: a quote (\\x22)",
	  "shedd rt=0.002 st=200\\x22", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "words after fields st= did not close: refused",
	  "shedd rt=0.002 x shedd rt=9", LOGLINE_REJ_UNCLOSED, 0, NONE, 0 },
	{ "an unknown key inside shedd's fields: refused",
	  "shedd rt=0.002 ua=curl/8 st=200", LOGLINE_REJ_UNCLOSED, 0, NONE, 0 },
	{ "an unknown key first: refused",
	  "shedd ua=x rt=0.002 st=200", LOGLINE_REJ_UNCLOSED, 0, NONE, 0 },
	{ "a second marker before st=: refused",
	  "shedd rt=0.002 shedd rt=9 st=200", LOGLINE_REJ_UNCLOSED, 0, NONE, 0 },
	{ "a client string before the marker: not shedd's line",
	  "<190>Dec  1 17:38:02 shedd: x shedd rt=0.001 st=200",
	  LOGLINE_REJ_NO_MARKER, 0, NONE, 0 },
	{ "a client string before the marker, raw",
	  "GET /?shedd rt=0.001 st=200", LOGLINE_REJ_NO_MARKER, 0, NONE, 0 },
	{ "the marker after a space: not at the message's start",
	  "<190>Dec  1 17:38:02 shedd:  shedd rt=0.001 st=200",
	  LOGLINE_REJ_NO_MARKER, 0, NONE, 0 },
	{ "the marker glued to the tag",
	  "<190>Dec  1 17:38:02 shedd:shedd rt=0.001 st=200", LOGLINE_REJ_HEADER, 0, NONE, 0 },
	{ "a priority out of range", "<192>shedd rt=0.001", LOGLINE_REJ_HEADER, 0, NONE, 0 },
	{ "a priority not closed", "<190 shedd rt=0.001", LOGLINE_REJ_HEADER, 0, NONE, 0 },
	{ "an empty priority", "<>shedd rt=0.001", LOGLINE_REJ_HEADER, 0, NONE, 0 },
	{ "a timestamp cut short", "<190>Dec  1 17:38 shedd: shedd rt=0.001",
	  LOGLINE_REJ_HEADER, 0, NONE, 0 },
	{ "rfc3164: host, then no tag", "<190>Dec  1 17:38:02 web1 x shedd rt=0.001",
	  LOGLINE_REJ_HEADER, 0, NONE, 0 },
	{ "rfc5424: fields missing", "<134>1 - vm haproxy shedd rt_ms=1",
	  LOGLINE_REJ_HEADER, 0, NONE, 0 },
	{ "rfc5424: structured data not closed",
	  "<134>1 - vm haproxy 7 - [a b=\"] shedd rt_ms=1", LOGLINE_REJ_HEADER, 0, NONE, 0 },
	{ "rfc5424: structured data glued to the message",
	  "<134>1 - vm haproxy 7 - [a]shedd rt_ms=1", LOGLINE_REJ_HEADER, 0, NONE, 0 },
	/* refused */
	{ "empty", "", LOGLINE_REJ_NO_MARKER, 0, NONE, 0 },
	{ "no marker", "<190>Nov 30 14:51:02 nginx: rt=0.1 st=200",
	  LOGLINE_REJ_NO_MARKER, 0, NONE, 0 },
	{ "marker only", "shedd", LOGLINE_REJ_NO_RT, 0, NONE, 0 },
	{ "marker and spaces", "shedd   ", LOGLINE_REJ_NO_RT, 0, NONE, 0 },
	{ "marker inside a word", "sheddy rt=0.1", LOGLINE_REJ_NO_MARKER, 0, NONE, 0 },
	{ "marker at a word's end", "xshedd rt=0.1", LOGLINE_REJ_NO_MARKER, 0, NONE, 0 },
	{ "nginx tag alone is not the marker", "<190>Nov 30 14:51:02 shedd: rt=0.1",
	  LOGLINE_REJ_NO_MARKER, 0, NONE, 0 },
	{ "a second marker at the end", "shedd rt=0.1 shedd",
	  LOGLINE_REJ_UNCLOSED, 0, NONE, 0 },
	{ "missing request time", "shedd urt=0.1 st=200", LOGLINE_REJ_NO_RT, 0, NONE, 0 },
	{ "request time '-'", "shedd rt=- st=200", LOGLINE_REJ_NO_RT, 0, NONE, 0 },
	{ "request time -1 ms", "shedd rt_ms=-1 st=200", LOGLINE_REJ_NO_RT, 0, NONE, 0 },
	{ "empty value", "shedd rt= st=200", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "exponent", "shedd rt=1e9", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "exponent after a point", "shedd rt=0.1e-3", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "nan", "shedd rt=nan", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "inf", "shedd rt=inf", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "hex", "shedd rt=0x10", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "plus sign", "shedd rt=+1", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "comma decimal (a locale's)", "shedd rt=0,5", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "point without decimals", "shedd rt=1.", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "point first", "shedd rt=.5", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "two points", "shedd rt=1.2.3", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "several request times", "shedd rt=0.1, 0.2", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "upstream list ends on a separator", "shedd rt=0.1 urt=0.1,",
	  LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "upstream list ends on a colon and space", "shedd rt=0.1 urt=0.1 : ",
	  LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "upstream list with junk", "shedd rt=0.1 urt=0.1, x", LOGLINE_REJ_BAD_NUMBER,
	  0, NONE, 0 },
	{ "ms with a point", "shedd rt_ms=1.5", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "ms '-'", "shedd rt_ms=-", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "status not a number", "shedd rt=0.1 st=OK", LOGLINE_REJ_BAD_NUMBER, 0, NONE, 0 },
	{ "negative seconds", "shedd rt=-0.5", LOGLINE_REJ_NEGATIVE, 0, NONE, 0 },
	{ "negative upstream", "shedd rt=0.5 urt=-0.1", LOGLINE_REJ_NEGATIVE, 0, NONE, 0 },
	{ "negative ms", "shedd rt_ms=-5", LOGLINE_REJ_NEGATIVE, 0, NONE, 0 },
	{ "negative ms -10", "shedd rt_ms=-10", LOGLINE_REJ_NEGATIVE, 0, NONE, 0 },
	{ "above an hour", "shedd rt=3600.000000001", LOGLINE_REJ_RANGE, 0, NONE, 0 },
	{ "a year", "shedd rt=31536000", LOGLINE_REJ_RANGE, 0, NONE, 0 },
	{ "more digits than 64 bits hold",
	  "shedd rt=123456789012345678901234567890.5", LOGLINE_REJ_RANGE, 0, NONE, 0 },
	{ "ms above an hour", "shedd rt_ms=3600001", LOGLINE_REJ_RANGE, 0, NONE, 0 },
	{ "ms beyond 64 bits", "shedd rt_ms=99999999999999999999999",
	  LOGLINE_REJ_RANGE, 0, NONE, 0 },
	{ "upstreams summing past an hour", "shedd rt=1 urt=3000, 3000",
	  LOGLINE_REJ_RANGE, 0, NONE, 0 },
	{ "status of four digits", "shedd rt=0.1 st=2000", LOGLINE_REJ_RANGE, 0, NONE, 0 },
	{ "duplicate rt", "shedd rt=0.1 rt=0.2", LOGLINE_REJ_DUPLICATE, 0, NONE, 0 },
	{ "rt and rt_ms", "shedd rt=0.1 rt_ms=100", LOGLINE_REJ_DUPLICATE, 0, NONE, 0 },
	{ "urt and urt_ms", "shedd rt=0.1 urt=0.1 urt_ms=100", LOGLINE_REJ_DUPLICATE,
	  0, NONE, 0 },
	{ "rt '-' then rt", "shedd rt=- rt=0.1", LOGLINE_REJ_DUPLICATE, 0, NONE, 0 },
};

static void table(void **state)
{
	size_t i, failed = 0;

	/* Every row is checked and reported before the test fails. */
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct logline_sample s;
		enum logline_reject got;

		memset(&s, 0xa5, sizeof(s));
		got = logline_parse(r->line, strlen(r->line), &s);
		if (got != r->want) {
			print_error("FAIL %s: \"%s\": %s, expected %s\n", r->what, r->line,
				    logline_reject_name(got), logline_reject_name(r->want));
			failed++;
			continue;
		}
		if (r->want != LOGLINE_OK)
			continue;
		if (s.rt_ns != r->rt_ns || s.status != r->status ||
		    s.have_urt != (r->urt_ns != NONE) ||
		    (s.have_urt && s.urt_ns != r->urt_ns)) {
			print_error("FAIL %s: rt %llu urt %s%llu st %u, expected rt %llu "
				    "urt %llu st %u\n", r->what, (unsigned long long)s.rt_ns,
				    s.have_urt ? "" : "none ", (unsigned long long)s.urt_ns,
				    s.status, (unsigned long long)r->rt_ns,
				    (unsigned long long)r->urt_ns, r->status);
			failed++;
		}
	}
	assert_int_equal(failed, 0);
}

/* The parser reads @len bytes, no more, and needs no terminating NUL: a
 * line cut short inside the buffer is parsed as the shorter line. */
static void reads_only_len(void **state)
{
	const char line[] = "shedd rt=0.123456 st=200";
	struct logline_sample s;

	/* cut after "rt=0.12" */
	assert_int_equal(logline_parse(line, 13, &s), LOGLINE_OK);
	assert_int_equal(s.rt_ns, 120 * MS);
	assert_int_equal(s.status, 0);
	/* cut after "rt=" */
	assert_int_equal(logline_parse(line, 9, &s), LOGLINE_REJ_BAD_NUMBER);
	/* cut inside the marker */
	assert_int_equal(logline_parse(line, 4, &s), LOGLINE_REJ_NO_MARKER);
	assert_int_equal(logline_parse(line, 0, &s), LOGLINE_REJ_NO_MARKER);
}

static void nul_bytes_refused(void **state)
{
	const char line[] = "shedd rt=0.1\0 st=200";
	struct logline_sample s;

	assert_int_equal(logline_parse(line, sizeof(line) - 1, &s), LOGLINE_REJ_NUL);
	assert_int_equal(logline_parse("\0shedd rt=0.1", 13, &s), LOGLINE_REJ_NUL);
	/* before the cut, no NUL: fine */
	assert_int_equal(logline_parse(line, 12, &s), LOGLINE_OK);
	/* a NUL a client wrote after st= gets the line refused, no more */
	assert_int_equal(logline_parse("shedd rt=0.1 st=200 ua=\0", 24, &s), LOGLINE_REJ_NUL);
}

/* A line of exactly LOGLINE_MAX_LEN bytes (padded with an unknown key) is
 * parsed; one byte more is too long. */
static void length_limit(void **state)
{
	static char line[LOGLINE_MAX_LEN + 2];
	struct logline_sample s;
	size_t i;
	int n = snprintf(line, sizeof(line), "<190>Nov 30 14:51:02 shedd: shedd rt=0.250 st=200 pad=");

	memset(line + n, 'x', sizeof(line) - (size_t)n);
	assert_int_equal(logline_parse(line, LOGLINE_MAX_LEN, &s), LOGLINE_OK);
	assert_int_equal(s.rt_ns, 250 * MS);
	assert_int_equal(logline_parse(line, LOGLINE_MAX_LEN + 1, &s), LOGLINE_REJ_TOO_LONG);
	/* a value after st= as long as the line allows, full of markers and
	 * fields: the line's own sample */
	for (i = (size_t)n; i + 18 <= sizeof(line); i += 18)
		memcpy(line + i, " shedd rt=9 st=499", 18);
	assert_int_equal(logline_parse(line, LOGLINE_MAX_LEN, &s), LOGLINE_OK);
	assert_int_equal(s.rt_ns, 250 * MS);
	assert_int_equal(s.status, 200);
}

static void reject_names(void **state)
{
	int r;

	for (r = 0; r < LOGLINE_NR_REJECTS; r++) {
		assert_non_null(logline_reject_name((enum logline_reject)r));
		assert_string_not_equal(logline_reject_name((enum logline_reject)r), "?");
	}
	assert_string_equal(logline_reject_name(LOGLINE_REJ_TRUNCATED), "truncated");
	assert_string_equal(logline_reject_name(LOGLINE_NR_REJECTS), "?");
}

/* cr=: the request's number on its connection (nginx
 * $connection_requests), for the requests per connection. */
static void connection_requests(void **state)
{
	static const struct {
		const char *line;
		enum logline_reject want;
		__u32 conn_req;
	} cases[] = {
		{ "shedd rt=0.010 urt=0.009 cr=3 st=200", LOGLINE_OK, 3 },
		{ "shedd cr=1 rt=0.010 st=200", LOGLINE_OK, 1 },
		{ "shedd rt=0.010 cr=1000000000 st=200", LOGLINE_OK, 1000000000 },
		{ "shedd rt=0.010 cr=- st=200", LOGLINE_OK, 0 },
		{ "shedd rt=0.010 st=200", LOGLINE_OK, 0 },
		{ "shedd rt=0.010 st=200 cr=7", LOGLINE_OK, 0 }, /* after st=: not read */
		{ "shedd rt=0.010 cr=0 st=200", LOGLINE_REJ_RANGE, 0 },
		{ "shedd rt=0.010 cr=1000000001 st=200", LOGLINE_REJ_RANGE, 0 },
		{ "shedd rt=0.010 cr=-1 st=200", LOGLINE_REJ_BAD_NUMBER, 0 },
		{ "shedd rt=0.010 cr=2x st=200", LOGLINE_REJ_BAD_NUMBER, 0 },
		{ "shedd rt=0.010 cr=1.5 st=200", LOGLINE_REJ_BAD_NUMBER, 0 },
		{ "shedd rt=0.010 cr=2 cr=3 st=200", LOGLINE_REJ_DUPLICATE, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct logline_sample s;
		enum logline_reject got = logline_parse(cases[i].line, strlen(cases[i].line), &s);

		if (got != cases[i].want)
			fail_msg("%s: %s, want %s", cases[i].line, logline_reject_name(got),
				 logline_reject_name(cases[i].want));
		if (got == LOGLINE_OK && s.conn_req != cases[i].conn_req)
			fail_msg("%s: cr %u, want %u", cases[i].line, s.conn_req,
				 cases[i].conn_req);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),
		cmocka_unit_test(connection_requests),
		cmocka_unit_test(reads_only_len),
		cmocka_unit_test(nul_bytes_refused),
		cmocka_unit_test(length_limit),
		cmocka_unit_test(reject_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
