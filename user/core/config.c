// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* config.c - the config file: libinih splits it into sections and
 * key = value pairs; each key is an option of options_table[] and its value
 * goes through the same parser as on the command line.
 *
 *   [shedd]           the options of the table's "shedd" section
 *   [controller]      the controller's ("controller" section)
 *   [verify]          verified admission's ("verify" section)
 *   [class.NAME]      floor, reject, verify, prefix, fair and fair_levels
 *                     of one class:
 *                     "floor = 0.2" there is "floor = NAME=0.2" in [shedd]
 *
 * Repeated keys add to lists (port, prefix, ...); any other key given twice
 * is an error, as is an unknown section or key. libinih reads through our
 * reader, which counts lines, so the handler knows the line of each pair.
 */
#include <stdarg.h>
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
};

struct config_ctx {
	struct options_state *st;
	struct config_reader *rd;
	const char *file;
	int err_line;      /* the first line the handler refused; 0 none */
	char err[400];
};

/* A section is known or refused on its own line, keys or none. */
static void check_section(struct config_reader *rd, const char *line)
{
	const char *p = line + strspn(line, " \t"), *close;
	char name[64], why[200];
	size_t n;
	__u32 c;

	if (*p != '[' || rd->bad_line || !(close = strchr(p, ']')))
		return; /* not a section; a missing ']' is libinih's to report */
	n = (size_t)(close - p - 1);
	snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1),
		 p + 1);
	if (!strcmp(name, "shedd") || !strcmp(name, "controller") || !strcmp(name, "verify"))
		return;
	if (!strncmp(name, "class.", 6) && !parse_class(name + 6, &c, why, sizeof(why)))
		return;
	rd->bad_line = rd->line;
	if (!strncmp(name, "class.", 6))
		snprintf(rd->bad, sizeof(rd->bad), "unknown section [%s]: %s", name, why);
	else
		snprintf(rd->bad, sizeof(rd->bad),
			 "unknown section [%s] (shedd, controller, verify, class.NAME)", name);
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

/* The first problem, at the line being read; 0 for libinih (an error). */
__attribute__((format(printf, 2, 3)))
static int fail(struct config_ctx *cx, const char *fmt, ...)
{
	va_list ap;

	if (!cx->err_line) {
		cx->err_line = cx->rd->line;
		va_start(ap, fmt);
		vsnprintf(cx->err, sizeof(cx->err), fmt, ap);
		va_end(ap);
	}
	return 0;
}

static int on_pair(void *user, const char *section, const char *key, const char *value)
{
	struct config_ctx *cx = user;
	struct options_state *st = cx->st;
	const struct opt_def *d = options_by_key(key);
	char arg[512], why[400];
	const char *cls = NULL, *val = value;
	__u32 c;

	if (!*section) {
		return fail(cx, "key '%s' comes before any [section] (start with [shedd])", key);
	} else if (!strncmp(section, "class.", 6)) {
		cls = section + 6;
		if (parse_class(cls, &c, why, sizeof(why)))
			return fail(cx, "[%s]: %s", section, why);
		if (!d || (d->id != OPT_FLOOR && d->id != OPT_REJECT && d->id != OPT_VERIFY &&
			   d->id != OPT_PREFIX && d->id != OPT_FAIR && d->id != OPT_FAIR_LEVELS))
			return fail(cx, "unknown key '%s' in [%s] (floor, reject, verify, prefix, "
				    "fair, fair_levels)",
				    key, section);
		/* The class's own value, as the option takes it. */
		if (d->id == OPT_PREFIX)
			snprintf(arg, sizeof(arg), "%s=%s", value, cls);
		else
			snprintf(arg, sizeof(arg), "%s=%s", cls, value);
		val = arg;
	} else if (strcmp(section, "shedd") && strcmp(section, "controller") &&
		   strcmp(section, "verify")) {
		return fail(cx, "unknown section [%s] (shedd, controller, verify, class.NAME)",
			    section);
	} else if (!d) {
		return fail(cx, "unknown key '%s' in [%s]", key, section);
	} else if (strcmp(section, d->section)) {
		return fail(cx, "key '%s' belongs in [%s]", key, d->section);
	}
	if (!*value)
		return fail(cx, "key '%s' has no value", key);
	/* Once each, but lists and per-class values may repeat. */
	if (st->line[d->id] && !(d->flags & OPTF_REPEAT))
		return fail(cx, "key '%s' is given twice (also on line %d)", key,
			    st->line[d->id]);
	if (options_apply(st, d, val, why, sizeof(why))) {
		/* "--rate: ..." reads "rate: ..." here, the key's name. */
		const char *msg = why, *colon = strchr(why, ':');

		if (!strncmp(why, "--", 2) && colon)
			msg = colon + 1 + (colon[1] == ' ');
		else if (!strncmp(why, "--", 2))
			msg = why + 2;
		return fail(cx, "%s: %s", key, msg);
	}
	st->line[d->id] = cx->rd->line;
	return 1;
}

int config_parse(struct options_state *st, const char *file, const char *buf, size_t len,
		 char *err, size_t errlen)
{
	struct config_reader rd = { .p = buf, .end = buf + len };
	struct config_ctx cx = { .st = st, .rd = &rd, .file = file };
	int first;

	st->file = file;
	first = ini_parse_stream(read_line, &rd, on_pair, &cx);
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
