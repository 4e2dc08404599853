// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* log.c - one line per event on stderr, with a level: "<N>" when stderr is
 * the journal, the plain "shedd: " form otherwise. A line is formatted
 * whole and written with one write(), so the latency thread's lines never
 * interleave with the tick's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

#define LOG_LINE_MAX 4096

static bool journal;

/* systemd sets JOURNAL_STREAM=DEV:INODE for a stream it connected to the
 * journal; stderr is that stream only if its fstat agrees (a shell started
 * by the service and redirected elsewhere inherits the variable). */
void log_init(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	journal = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && !fstat(STDERR_FILENO, &st) &&
		  (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

bool log_journal(void)
{
	return journal;
}

static size_t put(char *buf, size_t len, size_t off, const char *s, size_t n)
{
	if (off + 1 >= len)
		return off;
	if (n > len - 1 - off)
		n = len - 1 - off;
	memcpy(buf + off, s, n);
	return off + n;
}

size_t log_format(char *buf, size_t len, bool to_journal, int level, const char *tag,
		  const char *text)
{
	char prefix[64];
	size_t off = 0, plen;
	const char *p = text, *nl;

	if (!len)
		return 0;
	if (level < LOG_EMERG)
		level = LOG_EMERG;
	if (level > LOG_DEBUG)
		level = LOG_DEBUG;
	/* The journal knows the program's name: the level and the tag are
	 * enough there. */
	if (to_journal)
		plen = (size_t)snprintf(prefix, sizeof(prefix), "<%d>%s%s", level, tag ? tag : "",
					tag ? ": " : "");
	else
		plen = (size_t)snprintf(prefix, sizeof(prefix), "shedd%s%s: ", tag ? " " : "",
					tag ? tag : "");
	if (plen >= sizeof(prefix))
		plen = sizeof(prefix) - 1;
	do {
		nl = strchr(p, '\n');
		off = put(buf, len, off, prefix, plen);
		off = put(buf, len, off, p, nl ? (size_t)(nl - p) : strlen(p));
		off = put(buf, len, off, "\n", 1);
		p = nl ? nl + 1 : NULL;
	} while (p && *p); /* a trailing newline ends the text, not a line */
	/* A cut line still ends with its newline. */
	if (off > 0 && off == len - 1 && buf[off - 1] != '\n')
		buf[off - 1] = '\n';
	buf[off] = '\0';
	return off;
}

/* Most events fit in a line on the stack; libbpf's verifier log, one
 * event of thousands of lines, is formatted on the heap, whole. */
static void emit(int level, const char *tag, const char *fmt, va_list ap)
{
	char text[LOG_LINE_MAX], line[LOG_LINE_MAX + 256];
	char *t = text, *out = line, *big_text = NULL, *big_out = NULL;
	size_t cap = sizeof(line), lines = 1, n;
	const char *p;
	va_list again;
	int len;

	va_copy(again, ap);
	len = vsnprintf(text, sizeof(text), fmt, ap);
	if (len >= (int)sizeof(text) && (big_text = malloc((size_t)len + 1))) {
		vsnprintf(big_text, (size_t)len + 1, fmt, again);
		t = big_text;
	}
	va_end(again);
	for (p = t; (p = strchr(p, '\n')); p++)
		lines++;
	/* Room for every line's prefix (at most 64) and newline. */
	n = strlen(t) + lines * 65 + 1;
	if (n > cap && (big_out = malloc(n))) {
		out = big_out;
		cap = n;
	}
	n = log_format(out, cap, journal, level, tag, t);
	if (write(STDERR_FILENO, out, n) < 0) {
		/* Nowhere left to say it. */
	}
	free(big_out);
	free(big_text);
}

void log_vmsg(int level, const char *fmt, va_list ap)
{
	emit(level, NULL, fmt, ap);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(level, NULL, fmt, ap);
	va_end(ap);
}

void log_iface(int level, const char *iface, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(level, iface, fmt, ap);
	va_end(ap);
}

int err_say(char *err, size_t errlen, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return ret;
}
