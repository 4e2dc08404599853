/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* config.h - shedd's config file (--config FILE): INI, parsed by libinih,
 * every key one of the options (options_table[]). Pure: errors are
 * returned as text, nothing is printed.
 */
#ifndef SHEDD_CONFIG_H
#define SHEDD_CONFIG_H

#include <stddef.h>
#include "options.h"

/* The longest line a config file may have (libinih's line buffer). */
#define CONFIG_MAX_LINE 199

/* Apply the config file @buf (@len bytes, not necessarily NUL-terminated)
 * named @file to @st->o, recording in @st->line which line set what.
 * Returns 0, or -1 with "FILE:LINE: problem" in @err (the first problem). */
int config_parse(struct options_state *st, const char *file, const char *buf, size_t len,
		 char *err, size_t errlen);

#endif /* SHEDD_CONFIG_H */
