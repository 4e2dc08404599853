/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* ctl.h - the daemon's side of the operator's commands, over the pinned
 * maps: the rate pin (ctl_cmd). The manual prefixes are prefixes.h's.
 */
#ifndef SHEDD_CTL_H
#define SHEDD_CTL_H

#include <stdbool.h>
#include "ctl_state.h"
#include "handle.h"

/* Read ctl_cmd into @c->cmd, with a line on stderr when the pin changes.
 * A read that fails keeps the previous command. 0 or a negative errno. */
int ctl_read_cmd(struct ctl *c, struct loader *l, const char *iface);

#endif /* SHEDD_CTL_H */
