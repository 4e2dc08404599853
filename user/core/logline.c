// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* logline.c - request latency from nginx's and HAProxy's log lines (see
 * logline.h): the syslog header, then shedd's fields at the message's start.
 * A hand-written scanner rather than strtod: strtod follows the locale,
 * takes inf, nan, hex and exponents, and cannot be told to stop at the
 * datagram's length. Every byte is looked at a bounded number of times.
 */
#include <string.h>

#include "logline.h"

#define MARKER "shedd"
#define MARKER_LEN (sizeof(MARKER) - 1)
#define NS_PER_SEC 1000000000ULL
#define NS_PER_MS 1000000ULL
#define MAX_SEC (LOGLINE_MAX_NS / NS_PER_SEC)
#define MAX_MS (LOGLINE_MAX_NS / NS_PER_MS)
#define MAX_STATUS 999
#define MAX_CONN_REQ 1000000000ULL

struct cursor {
	const char *b;
	size_t i, len;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool at_end(const struct cursor *c)
{
	return c->i >= c->len;
}

/* The end of a value: the line's end or a space; inside a list of upstream
 * times also `,` and `:`. */
static bool value_ends(const struct cursor *c, bool list)
{
	char ch;

	if (at_end(c))
		return true;
	ch = c->b[c->i];
	return is_space(ch) || (list && (ch == ',' || ch == ':'));
}

static void skip_spaces(struct cursor *c)
{
	while (!at_end(c) && is_space(c->b[c->i]))
		c->i++;
}

/* A `-` alone (up to the value's end): no value. */
static bool at_none(struct cursor *c, bool list)
{
	struct cursor t = *c;

	if (at_end(c) || c->b[c->i] != '-')
		return false;
	t.i++;
	if (!value_ends(&t, list))
		return false;
	c->i = t.i;
	return true;
}

/* Digits into *@v, saturating above @max (more digits are still read, so
 * the value's end is found); false if there is none. */
static bool digits(struct cursor *c, __u64 max, __u64 *v, bool *over)
{
	size_t start = c->i;

	*v = 0;
	*over = false;
	while (!at_end(c) && is_digit(c->b[c->i])) {
		if (!*over) {
			*v = *v * 10 + (__u64)(c->b[c->i] - '0');
			if (*v > max)
				*over = true;
		}
		c->i++;
	}
	return c->i > start;
}

/* Decimal seconds, [0-9]+(\.[0-9]+)?, into nanoseconds: digits past the
 * ninth decimal are read and dropped. */
static enum logline_reject seconds(struct cursor *c, bool list, __u64 *ns)
{
	__u64 sec, frac = 0, scale = NS_PER_SEC;
	bool over;

	if (!at_end(c) && c->b[c->i] == '-') {
		c->i++;
		return at_end(c) || !is_digit(c->b[c->i]) ? LOGLINE_REJ_BAD_NUMBER
							   : LOGLINE_REJ_NEGATIVE;
	}
	if (!digits(c, MAX_SEC, &sec, &over))
		return LOGLINE_REJ_BAD_NUMBER;
	if (!at_end(c) && c->b[c->i] == '.') {
		c->i++;
		if (at_end(c) || !is_digit(c->b[c->i]))
			return LOGLINE_REJ_BAD_NUMBER;
		while (!at_end(c) && is_digit(c->b[c->i])) {
			if (scale > 1) {
				scale /= 10;
				frac += (__u64)(c->b[c->i] - '0') * scale;
			}
			c->i++;
		}
	}
	if (!value_ends(c, list))
		return LOGLINE_REJ_BAD_NUMBER;
	if (over || sec * NS_PER_SEC + frac > LOGLINE_MAX_NS)
		return LOGLINE_REJ_RANGE;
	*ns = sec * NS_PER_SEC + frac;
	return LOGLINE_OK;
}

/* Upstream times: one value or `-`, or several joined by `,` or `:` with
 * spaces around (nginx, when it tried several upstreams), summed. */
static enum logline_reject upstream_seconds(struct cursor *c, bool *have, __u64 *ns)
{
	enum logline_reject err;
	struct cursor look;
	__u64 one;

	*have = false;
	*ns = 0;
	for (;;) {
		if (!at_none(c, true)) {
			err = seconds(c, true, &one);
			if (err)
				return err;
			*ns += one;
			*have = true;
			if (*ns > LOGLINE_MAX_NS)
				return LOGLINE_REJ_RANGE;
		}
		look = *c;
		skip_spaces(&look);
		if (at_end(&look) || (look.b[look.i] != ',' && look.b[look.i] != ':'))
			return LOGLINE_OK; /* the list ended at c->i */
		look.i++;
		skip_spaces(&look);
		if (at_end(&look))
			return LOGLINE_REJ_BAD_NUMBER; /* a separator with nothing after */
		*c = look;
	}
}

/* Integer milliseconds (HAProxy): -1 means none. */
static enum logline_reject millis(struct cursor *c, bool *have, __u64 *ns)
{
	__u64 ms;
	bool over;

	*have = false;
	if (!at_end(c) && c->b[c->i] == '-') {
		c->i++;
		if (!digits(c, MAX_MS, &ms, &over) || !value_ends(c, false))
			return LOGLINE_REJ_BAD_NUMBER;
		return ms == 1 && !over ? LOGLINE_OK : LOGLINE_REJ_NEGATIVE;
	}
	if (!digits(c, MAX_MS, &ms, &over) || !value_ends(c, false))
		return LOGLINE_REJ_BAD_NUMBER;
	if (over)
		return LOGLINE_REJ_RANGE;
	*ns = ms * NS_PER_MS;
	*have = true;
	return LOGLINE_OK;
}

/* HTTP status: up to MAX_STATUS; `-` or -1 means none was sent (left 0,
 * *@none set). */
static enum logline_reject status_code(struct cursor *c, __u32 *status, bool *none)
{
	__u64 v;
	bool over;

	if (at_none(c, false)) {
		*none = true;
		return LOGLINE_OK;
	}
	if (!at_end(c) && c->b[c->i] == '-') {
		c->i++;
		if (!digits(c, MAX_STATUS, &v, &over) || !value_ends(c, false))
			return LOGLINE_REJ_BAD_NUMBER;
		if (v != 1 || over)
			return LOGLINE_REJ_NEGATIVE;
		*none = true;
		return LOGLINE_OK;
	}
	if (!digits(c, MAX_STATUS, &v, &over) || !value_ends(c, false))
		return LOGLINE_REJ_BAD_NUMBER;
	if (over)
		return LOGLINE_REJ_RANGE;
	*status = (__u32)v;
	return LOGLINE_OK;
}

/* cr=: which request of its connection this was, from 1; `-` for none. */
static enum logline_reject conn_request(struct cursor *c, __u32 *out)
{
	__u64 v;
	bool over;

	if (at_none(c, false))
		return LOGLINE_OK;
	if (!digits(c, MAX_CONN_REQ, &v, &over) || !value_ends(c, false))
		return LOGLINE_REJ_BAD_NUMBER;
	if (over || !v)
		return LOGLINE_REJ_RANGE;
	*out = (__u32)v;
	return LOGLINE_OK;
}

/* The byte @ch is next: past it, or false. */
static bool expect(struct cursor *c, char ch)
{
	if (at_end(c) || c->b[c->i] != ch)
		return false;
	c->i++;
	return true;
}

/* @n digits: past them, or false. */
static bool n_digits(struct cursor *c, size_t n)
{
	for (; n; n--, c->i++)
		if (at_end(c) || !is_digit(c->b[c->i]))
			return false;
	return true;
}

/* A run of bytes that are not blanks, at least one (a header field). */
static bool token(struct cursor *c)
{
	size_t start = c->i;

	while (!at_end(c) && !is_space(c->b[c->i]))
		c->i++;
	return c->i > start;
}

/* <PRI>: up to three digits, 0 to 191 (facility * 8 + severity). */
static bool priority(struct cursor *c)
{
	size_t start;
	__u64 v;
	bool over;

	if (!expect(c, '<'))
		return false;
	start = c->i;
	return digits(c, 191, &v, &over) && !over && c->i - start <= 3 && expect(c, '>');
}

/* A month's name and a space begin here ("Dec "). */
static bool month_here(const struct cursor *c)
{
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	size_t m;

	if (c->len - c->i < 4 || c->b[c->i + 3] != ' ')
		return false;
	for (m = 0; m < 12; m++)
		if (!memcmp(c->b + c->i, months + 3 * m, 3))
			return true;
	return false;
}

/* An RFC 3164 time stamp and the space after it: "Dec  1 17:38:02 " (the
 * day padded with a space or a zero). */
static bool bsd_time(struct cursor *c)
{
	if (!month_here(c))
		return false;
	c->i += 4;
	if (!expect(c, ' ') && !n_digits(c, 1))
		return false;
	return n_digits(c, 1) && expect(c, ' ') && n_digits(c, 2) && expect(c, ':') &&
	       n_digits(c, 2) && expect(c, ':') && n_digits(c, 2) && expect(c, ' ');
}

/* An RFC 3339 time stamp begins here ("2026-12-01T"). */
static bool iso_time_here(const struct cursor *c)
{
	struct cursor t = *c;

	return n_digits(&t, 4) && expect(&t, '-') && n_digits(&t, 2) && expect(&t, '-') &&
	       n_digits(&t, 2) && expect(&t, 'T');
}

/* An RFC 3164 header after the time stamp: an optional host name, then the
 * tag ("shedd:", "haproxy[4242]:") and one space. Neither holds a blank,
 * and a host name does not end with ':'. */
static bool bsd_host_tag(struct cursor *c)
{
	if (!token(c))
		return false;
	if (c->b[c->i - 1] != ':') { /* a host name: the tag follows */
		if (!expect(c, ' ') || !token(c) || c->b[c->i - 1] != ':')
			return false;
	}
	return expect(c, ' ');
}

/* RFC 5424 structured data: `-`, or elements [ID NAME="VALUE" ...] one
 * after the other, where a value may hold `\"`, `\\` and `\]`. */
static bool structured_data(struct cursor *c)
{
	if (expect(c, '-'))
		return true;
	if (at_end(c) || c->b[c->i] != '[')
		return false;
	while (expect(c, '[')) {
		bool quoted = false;

		for (;; c->i++) {
			char ch;

			if (at_end(c))
				return false;
			ch = c->b[c->i];
			if (quoted && ch == '\\') {
				c->i++; /* the escaped byte */
				if (at_end(c))
					return false;
			} else if (ch == '"') {
				quoted = !quoted;
			} else if (ch == ']' && !quoted) {
				c->i++;
				break;
			}
		}
	}
	return true;
}

/* An RFC 5424 header after "<PRI>1 ": time stamp, host name, application,
 * process id, message id, structured data; then one space before the
 * message, or the datagram's end (no message). */
static bool rfc5424_rest(struct cursor *c)
{
	int f;

	for (f = 0; f < 5; f++)
		if (!token(c) || !expect(c, ' '))
			return false;
	return structured_data(c) && (at_end(c) || expect(c, ' '));
}

/* Past the syslog header, to the message's first byte. The header is the
 * server's own (priority, time, host name, tag), never its client's, so
 * the message begins at a place no client can move. What the servers send:
 *   <PRI>Mmm dd hh:mm:ss [HOST ]TAG: MSG        RFC 3164 (nginx, HAProxy's
 *                                               rfc3164 and local, logger)
 *   <PRI>1 TIME HOST APP PID MSGID SD MSG      RFC 5424
 *   <PRI>TIME MSG, TIME MSG                    HAProxy timed, iso (RFC 3339)
 *   <PRI>MSG                                   HAProxy short, priority
 *   MSG                                        HAProxy raw
 * A message itself never begins with '<', a month's name, "1 " or a time:
 * it begins with the marker. */
static enum logline_reject skip_header(struct cursor *c)
{
	bool ok = true;

	if (!at_end(c) && c->b[c->i] == '<') {
		if (!priority(c))
			return LOGLINE_REJ_HEADER;
		if (c->len - c->i >= 2 && c->b[c->i] == '1' && c->b[c->i + 1] == ' ') {
			c->i += 2;
			ok = rfc5424_rest(c);
		} else if (month_here(c)) {
			ok = bsd_time(c) && bsd_host_tag(c);
		} else if (iso_time_here(c)) {
			ok = token(c) && expect(c, ' ');
		}
	} else if (iso_time_here(c)) {
		ok = token(c) && expect(c, ' ');
	}
	return ok ? LOGLINE_OK : LOGLINE_REJ_HEADER;
}

/* The message begins with the word `shedd`: past it, or false. */
static bool marker(struct cursor *c)
{
	if (c->len - c->i < MARKER_LEN || memcmp(c->b + c->i, MARKER, MARKER_LEN))
		return false;
	c->i += MARKER_LEN;
	return at_end(c) || is_space(c->b[c->i]);
}

enum key { KEY_RT, KEY_URT, KEY_RT_MS, KEY_URT_MS, KEY_CR, KEY_ST, KEY_UNKNOWN };

static enum key key_of(const char *k, size_t n)
{
	static const struct {
		const char *name;
		enum key key;
	} keys[] = {
		{ "rt", KEY_RT }, { "urt", KEY_URT }, { "rt_ms", KEY_RT_MS },
		{ "urt_ms", KEY_URT_MS }, { "cr", KEY_CR }, { "st", KEY_ST },
	};
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i].name) == n && !memcmp(keys[i].name, k, n))
			return keys[i].key;
	return KEY_UNKNOWN;
}

enum logline_reject logline_parse(const char *buf, size_t len, struct logline_sample *out)
{
	/* rt and rt_ms are one quantity, as are urt and urt_ms: one bit each */
	enum { SEEN_RT = 1, SEEN_URT = 2, SEEN_ST = 4, SEEN_CR = 8 };
	struct cursor c = { .b = buf, .len = len };
	enum logline_reject err = LOGLINE_OK;
	unsigned int seen = 0, bit;
	bool have_rt = false;

	if (len > LOGLINE_MAX_LEN)
		return LOGLINE_REJ_TOO_LONG;
	if (memchr(buf, '\0', len))
		return LOGLINE_REJ_NUL;
	err = skip_header(&c);
	if (err)
		return err;
	if (!marker(&c))
		return LOGLINE_REJ_NO_MARKER;
	memset(out, 0, sizeof(*out));
	/* shedd's fields, up to st= or the message's end: nothing after st=
	 * is read, and any other word before it refuses the line, so what a
	 * client writes behind them can never be taken for a field. */
	while (!(seen & SEEN_ST)) {
		size_t start;
		enum key k;

		skip_spaces(&c);
		if (at_end(&c))
			break;
		start = c.i;
		while (!at_end(&c) && !is_space(c.b[c.i]) && c.b[c.i] != '=')
			c.i++;
		if (at_end(&c) || c.b[c.i] != '=')
			return LOGLINE_REJ_UNCLOSED; /* a word that is not key=value */
		k = key_of(buf + start, c.i - start);
		if (k == KEY_UNKNOWN)
			return LOGLINE_REJ_UNCLOSED;
		c.i++; /* '=' */
		bit = k == KEY_RT || k == KEY_RT_MS ? SEEN_RT :
		      k == KEY_ST ? SEEN_ST : k == KEY_CR ? SEEN_CR : SEEN_URT;
		if (seen & bit)
			return LOGLINE_REJ_DUPLICATE;
		seen |= bit;
		switch (k) {
		case KEY_RT:
			have_rt = !at_none(&c, false);
			if (have_rt)
				err = seconds(&c, false, &out->rt_ns);
			break;
		case KEY_URT:
			err = upstream_seconds(&c, &out->have_urt, &out->urt_ns);
			out->urt_none = !err && !out->have_urt;
			break;
		case KEY_RT_MS:
			err = millis(&c, &have_rt, &out->rt_ns);
			break;
		case KEY_URT_MS:
			err = millis(&c, &out->have_urt, &out->urt_ns);
			out->urt_none = !err && !out->have_urt;
			break;
		case KEY_CR:
			err = conn_request(&c, &out->conn_req);
			break;
		case KEY_ST:
			err = status_code(&c, &out->status, &out->no_response);
			out->have_status = true;
			break;
		case KEY_UNKNOWN:
			break;
		}
		if (err)
			return err;
	}
	return have_rt ? LOGLINE_OK : LOGLINE_REJ_NO_RT;
}

const char *logline_reject_name(enum logline_reject r)
{
	static const char *const names[LOGLINE_NR_REJECTS] = {
		[LOGLINE_OK] = "ok",
		[LOGLINE_REJ_NO_MARKER] = "no_marker",
		[LOGLINE_REJ_NO_RT] = "no_rt",
		[LOGLINE_REJ_BAD_NUMBER] = "bad_number",
		[LOGLINE_REJ_NEGATIVE] = "negative",
		[LOGLINE_REJ_RANGE] = "range",
		[LOGLINE_REJ_DUPLICATE] = "duplicate",
		[LOGLINE_REJ_TOO_LONG] = "too_long",
		[LOGLINE_REJ_NUL] = "nul",
		[LOGLINE_REJ_BINARY] = "binary",
		[LOGLINE_REJ_TRUNCATED] = "truncated",
		[LOGLINE_REJ_HEADER] = "header",
		[LOGLINE_REJ_UNCLOSED] = "unclosed",
	};

	return (unsigned int)r < LOGLINE_NR_REJECTS ? names[r] : "?";
}
