// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_logline.c - libFuzzer target for what shedd reads from its latency
 * socket: any byte string through the log-line parser, the binary decoder
 * and the dispatch between them, under ASan and UBSan (built with clang
 * -fsanitize=fuzzer,address,undefined; `make fuzz-logline`). libFuzzer hands
 * over a buffer of exactly @size bytes, so a read past the datagram's length
 * is an ASan report. Beyond "no crash", each result is checked: a sample is
 * within the caps, a refusal is one the parser may give, a sample is the
 * same with a space added after it; what a client may write (anything after
 * shedd's fields) never changes a sample, at worst gets it refused; and the
 * syslog headers the servers write all lead to the same message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "logline.h"
#include "shedd_latency.h"
#include "signal_parse.h"

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond))                                                \
			__builtin_trap();                                   \
	} while (0)

static bool same_sample(const struct logline_sample *a, const struct logline_sample *b)
{
	return a->rt_ns == b->rt_ns && a->have_urt == b->have_urt && a->urt_none == b->urt_none &&
	       (!a->have_urt || a->urt_ns == b->urt_ns) && a->status == b->status &&
	       a->no_response == b->no_response;
}

/* A refusal the parser itself may give. */
static bool parser_reason(enum logline_reject r)
{
	return (r > LOGLINE_OK && r < LOGLINE_REJ_BINARY) || r == LOGLINE_REJ_HEADER ||
	       r == LOGLINE_REJ_UNCLOSED;
}

/* @a then @b (@na + @nb bytes) into a buffer of exactly that size. */
static char *join(const void *a, size_t na, const void *b, size_t nb)
{
	char *j = malloc(na + nb + 1);

	CHECK(j);
	memcpy(j, a, na);
	memcpy(j + na, b, nb);
	return j;
}

static void check_logline(const char *buf, size_t size)
{
	struct logline_sample s, again;
	enum logline_reject r = logline_parse(buf, size, &s);
	char *longer;

	CHECK(r == LOGLINE_OK || parser_reason(r));
	if (r != LOGLINE_OK)
		return;
	CHECK(size <= LOGLINE_MAX_LEN);
	CHECK(s.rt_ns <= LOGLINE_MAX_NS);
	CHECK(!s.have_urt || s.urt_ns <= LOGLINE_MAX_NS);
	CHECK(s.status <= 999);
	if (size == LOGLINE_MAX_LEN)
		return;
	/* A space after the line changes nothing. */
	longer = join(buf, size, " ", 1);
	CHECK(logline_parse(longer, size + 1, &again) == LOGLINE_OK);
	CHECK(same_sample(&again, &s));
	free(longer);
}

/* An accepted line @line, then what a client wrote, @tail: the sample is
 * the line's, or the whole is refused. After fields that st= closed, any
 * tail behind a blank (@sep: a space, tab, CR or LF); after fields that end
 * with the line, any tail behind a word no field begins with (" x"). */
static void check_tail(const char *line, size_t nline, char sep, const char *tail,
		       size_t ntail)
{
	struct logline_sample s, t;
	enum logline_reject r;
	char *head, *whole;
	size_t nhead;

	if (logline_parse(line, nline, &s) != LOGLINE_OK)
		return;
	head = s.have_status ? join(line, nline, &sep, 1) : join(line, nline, " x", 2);
	nhead = nline + (s.have_status ? 1 : 2);
	whole = join(head, nhead, tail, ntail);
	r = logline_parse(whole, nhead + ntail, &t);
	CHECK(r == LOGLINE_OK ? same_sample(&t, &s) : parser_reason(r));
	free(whole);
	free(head);
}

/* Each blank of @buf (the first MAX_SPLITS) splits it into a line and a
 * client's tail. */
#define MAX_SPLITS 32
static void check_tails(const char *buf, size_t size)
{
	size_t k, n = 0;

	for (k = 0; k < size && n < MAX_SPLITS; k++) {
		if (buf[k] != ' ' && buf[k] != '\t' && buf[k] != '\r' && buf[k] != '\n')
			continue;
		check_tail(buf, k, buf[k], buf + k + 1, size - k - 1);
		n++;
	}
}

/* The message @msg behind each header the servers write: the same result
 * as the message alone (raw), when the message begins with the marker;
 * refused when it does not. */
static void check_headers(const char *msg, size_t size)
{
	static const char *const headers[] = {
		"<190>Dec  1 17:38:02 shedd: ",            /* nginx, nohostname */
		"<190>Dec  1 17:38:02 shedd shedd: ",      /* nginx, host shedd */
		"<190>Dec 31 23:59:59 web1 nginx: ",       /* nginx, defaults */
		"<134>Dec  1 17:38:02 haproxy[17599]: ",   /* HAProxy rfc3164, local */
		"<134>Dec  1 17:38:02 vm shedd[1]: ",      /* log-send-hostname, log-tag */
		"<134>1 2026-12-01T17:38:02.919156+00:00 vm haproxy 17599 - - ",
		"<13>1 2026-12-01T17:38:02Z shedd shedd - - [timeQuality tzKnown=\"1\"] ",
		"<6>2026-12-01T17:38:02.919177+00:00 ",    /* HAProxy timed */
		"2026-12-01T17:38:02.919179+00:00 ",       /* HAProxy iso */
		"<134>",                                   /* HAProxy short, priority */
	};
	struct logline_sample raw, s;
	enum logline_reject rr, r;
	bool marked;
	size_t i;

	marked = size >= 5 && !memcmp(msg, "shedd", 5) &&
		 (size == 5 || msg[5] == ' ' || msg[5] == '\t' || msg[5] == '\n' || msg[5] == '\r');
	rr = logline_parse(msg, size, &raw);
	for (i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		size_t nh = strlen(headers[i]);
		char *whole = join(headers[i], nh, msg, size);

		r = logline_parse(whole, nh + size, &s);
		if (nh + size > LOGLINE_MAX_LEN)
			CHECK(r == LOGLINE_REJ_TOO_LONG);
		else if (marked)
			CHECK(r == rr && (r != LOGLINE_OK || same_sample(&s, &raw)));
		else if (i != sizeof(headers) / sizeof(headers[0]) - 1)
			/* (behind a bare priority, the message may itself
			 * read as the rest of a header) */
			CHECK(r != LOGLINE_OK);
		free(whole);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const __u32 magic = SHEDD_LATENCY_MAGIC;
	struct latency_datagram d;
	enum logline_reject r;
	__u64 ns;
	__u32 unsent;

	check_logline((const char *)data, size);
	check_headers((const char *)data, size);
	check_tails((const char *)data, size);

	r = latency_decode(data, size, &ns, &unsent);
	if (r == LOGLINE_OK)
		CHECK((size == 16 || size == 24) && ns <= LOGLINE_MAX_NS);
	else
		CHECK(r == LOGLINE_REJ_BINARY || r == LOGLINE_REJ_RANGE);

	r = latency_datagram_decode(data, size, false, &d);
	CHECK(r < LOGLINE_NR_REJECTS && r != LOGLINE_REJ_TRUNCATED);
	if (size >= sizeof(magic) && !memcmp(data, &magic, sizeof(magic)))
		CHECK(r == LOGLINE_OK ? !d.log && d.ns <= LOGLINE_MAX_NS
				      : r == LOGLINE_REJ_BINARY || r == LOGLINE_REJ_RANGE);
	else
		CHECK(r == LOGLINE_OK ? d.log : r != LOGLINE_REJ_BINARY);
	CHECK(latency_datagram_decode(data, size, true, &d) == LOGLINE_REJ_TRUNCATED);
	return 0;
}
