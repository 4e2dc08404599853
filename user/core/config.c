// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* config.c - the config file's reader: libinih splits it into sections and
 * key = value pairs and reads through our reader, which counts lines and
 * refuses the ones it must not cut (too long, a NUL byte), so every
 * section and pair reaches its callback with the line it was on. What
 * sections and keys mean is options.c's.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <ini.h>

#include "config.h"

struct config_reader {
	const char *p, *end;
	int line;          /* the line just handed to libinih */
	int bad_line;      /* the first line the reader refused; 0 none */
	char bad[400];
	config_section_fn on_section;
	void *user;
};

struct config_ctx {
	struct config_reader *rd;
	config_pair_fn on_pair;
	void *user;
	int err_line;      /* the first line the handler refused; 0 none */
	char err[400];
};

/* A section is handed on from its own line, keys or none. */
static void check_section(struct config_reader *rd, const char *line)
{
	const char *p = line + strspn(line, " \t"), *close;
	char name[64];
	size_t n;

	if (*p != '[' || rd->bad_line || !(close = strchr(p, ']')))
		return; /* not a section; a missing ']' is libinih's to report */
	n = (size_t)(close - p - 1);
	snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1),
		 p + 1);
	if (rd->on_section(rd->user, name, rd->bad, sizeof(rd->bad)))
		rd->bad_line = rd->line;
}

/* libinih's reader, over a buffer: one line per call, counted. A line too
 * long for libinih's buffer, or with a NUL byte in it, is refused here
 * (and handed on empty), so it is never cut into two lines. */
static char *read_line(char *str, int num, void *stream)
{
	struct config_reader *rd = stream;
	const char *nl;
	size_t len;

	if (rd->p >= rd->end)
		return NULL;
	nl = memchr(rd->p, '\n', (size_t)(rd->end - rd->p));
	len = nl ? (size_t)(nl - rd->p) + 1 : (size_t)(rd->end - rd->p);
	rd->line++;
	if (len > (size_t)num - 1 || len > CONFIG_MAX_LINE || memchr(rd->p, '\0', len)) {
		if (!rd->bad_line) {
			rd->bad_line = rd->line;
			if (memchr(rd->p, '\0', len))
				snprintf(rd->bad, sizeof(rd->bad), "a NUL byte: not a text file");
			else
				snprintf(rd->bad, sizeof(rd->bad),
					 "longer than %d characters (split a list over "
					 "repeated keys)", CONFIG_MAX_LINE);
		}
		snprintf(str, (size_t)num, "\n");
	} else {
		memcpy(str, rd->p, len);
		str[len] = '\0';
		check_section(rd, str);
	}
	rd->p += len;
	return str;
}

static int pair_of(void *user, const char *section, const char *key, const char *value)
{
	struct config_ctx *cx = user;

	if (cx->err_line)
		return 0;
	if (cx->on_pair(cx->user, section, key, value, cx->rd->line, cx->err, sizeof(cx->err))) {
		cx->err_line = cx->rd->line;
		return 0; /* an error for libinih, which goes on to the end */
	}
	return 1;
}

int config_read(const char *file, const char *buf, size_t len, config_section_fn on_section,
		config_pair_fn on_pair, void *user, char *err, size_t errlen)
{
	struct config_reader rd = { .p = buf, .end = buf + len, .on_section = on_section,
				    .user = user };
	struct config_ctx cx = { .rd = &rd, .on_pair = on_pair, .user = user };
	int first;

	first = ini_parse_stream(read_line, &rd, pair_of, &cx);
	if (first < 0) {
		snprintf(err, errlen, "%s: out of memory", file);
		return -1;
	}
	/* The earliest of: the reader's refusal, the handler's, libinih's own
	 * (a line that is neither [section] nor key = value). */
	if (rd.bad_line && (!cx.err_line || rd.bad_line <= cx.err_line) &&
	    (!first || rd.bad_line <= first)) {
		snprintf(err, errlen, "%s:%d: %s", file, rd.bad_line, rd.bad);
		return -1;
	}
	if (cx.err_line && (!first || cx.err_line <= first)) {
		snprintf(err, errlen, "%s:%d: %s", file, cx.err_line, cx.err);
		return -1;
	}
	if (first) {
		snprintf(err, errlen, "%s:%d: not a [section] nor a 'key = value' line", file,
			 first);
		return -1;
	}
	return 0;
}
