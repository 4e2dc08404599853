/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* config.h - the reader of shedd's config file (--config FILE): INI, split
 * by libinih into [section] lines and key = value pairs, each handed to the
 * caller's callbacks with its line. It knows nothing of what a section or a
 * key means (options.c does). Pure: errors are returned as text, nothing is
 * printed.
 */
#ifndef SHEDD_CONFIG_H
#define SHEDD_CONFIG_H

#include <stddef.h>

/* The longest line a config file may have (libinih's line buffer). */
#define CONFIG_MAX_LINE 199

/* A [section] line, as it is read (before any of its keys): 0 to go on,
 * else nonzero with the problem in @why. */
typedef int (*config_section_fn)(void *user, const char *name, char *why, size_t whylen);

/* One key = value pair of @section ("" before any section) on @line: 0 to
 * go on, else nonzero with the problem in @why. */
typedef int (*config_pair_fn)(void *user, const char *section, const char *key,
			      const char *value, int line, char *why, size_t whylen);

/* Read the config file @buf (@len bytes, not necessarily NUL-terminated)
 * named @file: every section to @on_section, every pair to @on_pair, in
 * order, until the first problem. A line longer than CONFIG_MAX_LINE, a
 * NUL byte, or a line that is neither a section nor a pair is a problem
 * of the reader's. Returns 0, or -1 with "FILE:LINE: problem" in @err (the
 * earliest line's problem). */
int config_read(const char *file, const char *buf, size_t len, config_section_fn on_section,
		config_pair_fn on_pair, void *user, char *err, size_t errlen);

#endif /* SHEDD_CONFIG_H */
