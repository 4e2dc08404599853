/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* log.h - shedd's messages: one line per event, each with a level. On a
 * terminal or in a file a line reads "shedd: TEXT"; when stderr is the
 * journal (systemd's JOURNAL_STREAM names it) each line starts with the
 * sd-daemon level prefix "<N>" instead, so journald files it at that level.
 */
#ifndef SHEDD_LOG_H
#define SHEDD_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <syslog.h> /* LOG_ERR ... LOG_DEBUG: the same numbers as SD_ERR ... */

/* Look at the environment once: is stderr the journal? */
void log_init(void);
/* True when lines carry the "<N>" prefix (stderr is the journal). */
bool log_journal(void);

/* One event at @level. @fmt has no trailing newline; an embedded newline
 * starts a new line with the same level (each line is prefixed). Safe from
 * several threads: a line is written with one write(). */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_vmsg(int level, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* The same, for an event of one interface: "shedd IFACE: TEXT". */
void log_iface(int level, const char *iface, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* An error for the caller to say: @fmt into @err (at most @errlen bytes,
 * NUL-terminated); returns @ret, so "return err_say(err, errlen, -EINVAL,
 * ...)" reports and fails in one. */
int err_say(char *err, size_t errlen, int ret, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#define log_err(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/* Format the lines of one event into @buf (for tests): returns the length
 * written, at most @len - 1, always NUL-terminated. */
size_t log_format(char *buf, size_t len, bool journal, int level, const char *tag,
		  const char *text);

#endif /* SHEDD_LOG_H */
