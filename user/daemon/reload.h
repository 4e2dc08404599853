/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* reload.h - SIGHUP: read the config file again (the command line still
 * wins), check it whole, and apply what can change while shedd runs; an
 * invalid file changes nothing.
 */
#ifndef SHEDD_RELOAD_H
#define SHEDD_RELOAD_H

#include "controller_params.h"
#include "loader.h"
#include "options.h"
#include "signals.h"
#include "tick.h"

/* The command line, kept to parse again at each reload. */
void reload_save_argv(int argc, char **argv);

/* Reload @o's config file into the running daemon: the maps through @l,
 * the signals' ports, the tick's parameters and, where they must follow,
 * the controller's state. One line on stderr says what happened. Returns
 * 0 when applied (or with no --config, nothing to do), -1 when the file or
 * its application was refused and the running configuration stays. */
int reload_config(struct shedd_options *o, struct loader *l, struct signals *sig,
		  struct tick_params *tp, struct tick_state *ts);

#endif /* SHEDD_RELOAD_H */
