// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* logline.c - request latency from nginx's and HAProxy's log lines (see
 * logline.h). A hand-written scanner rather than strtod: strtod follows the
 * locale, takes inf, nan, hex and exponents, and cannot be told to stop at
 * the datagram's length. Every byte is looked at a bounded number of times.
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

/* The end of the last word `shedd` standing alone (spaces or the line's
 * ends around it): a host or program name in the header may be `shedd`
 * too, the message's marker comes after it; a value never is one. */
static bool find_marker(const char *b, size_t len, size_t *after)
{
	bool found = false;
	size_t i;

	for (i = 0; i + MARKER_LEN <= len; i++) {
		if (b[i] != MARKER[0] || memcmp(b + i, MARKER, MARKER_LEN))
			continue;
		if (i > 0 && !is_space(b[i - 1]))
			continue;
		if (i + MARKER_LEN < len && !is_space(b[i + MARKER_LEN]))
			continue;
		*after = i + MARKER_LEN;
		found = true;
	}
	return found;
}

enum key { KEY_RT, KEY_URT, KEY_RT_MS, KEY_URT_MS, KEY_ST, KEY_UNKNOWN };

static enum key key_of(const char *k, size_t n)
{
	static const struct {
		const char *name;
		enum key key;
	} keys[] = {
		{ "rt", KEY_RT }, { "urt", KEY_URT }, { "rt_ms", KEY_RT_MS },
		{ "urt_ms", KEY_URT_MS }, { "st", KEY_ST },
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
	enum { SEEN_RT = 1, SEEN_URT = 2, SEEN_ST = 4 };
	struct cursor c = { .b = buf, .len = len };
	enum logline_reject err = LOGLINE_OK;
	unsigned int seen = 0, bit;
	bool have_rt = false;

	if (len > LOGLINE_MAX_LEN)
		return LOGLINE_REJ_TOO_LONG;
	if (memchr(buf, '\0', len))
		return LOGLINE_REJ_NUL;
	if (!find_marker(buf, len, &c.i))
		return LOGLINE_REJ_NO_MARKER;
	memset(out, 0, sizeof(*out));
	for (;;) {
		size_t start;
		enum key k;

		skip_spaces(&c);
		if (at_end(&c))
			break;
		start = c.i;
		while (!at_end(&c) && !is_space(c.b[c.i]) && c.b[c.i] != '=')
			c.i++;
		if (at_end(&c) || c.b[c.i] != '=') {
			continue; /* a word that is not key=value: ignored */
		}
		k = key_of(buf + start, c.i - start);
		c.i++; /* '=' */
		if (k == KEY_UNKNOWN) {
			while (!at_end(&c) && !is_space(c.b[c.i]))
				c.i++;
			continue;
		}
		bit = k == KEY_RT || k == KEY_RT_MS ? SEEN_RT :
		      k == KEY_ST ? SEEN_ST : SEEN_URT;
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
			break;
		case KEY_RT_MS:
			err = millis(&c, &have_rt, &out->rt_ns);
			break;
		case KEY_URT_MS:
			err = millis(&c, &out->have_urt, &out->urt_ns);
			break;
		case KEY_ST:
			err = status_code(&c, &out->status, &out->no_response);
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
	};

	return (unsigned int)r < LOGLINE_NR_REJECTS ? names[r] : "?";
}
