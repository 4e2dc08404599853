/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* ctl.h - the daemon's side of the operator's commands, over the pinned
 * maps: the rate pin (ctl_cmd) and the manual prefixes (manual_v4/manual_v6).
 */
#ifndef SHEDD_CTL_H
#define SHEDD_CTL_H

#include <stdbool.h>
#include "ctl_state.h"
#include "handle.h"

/* Read ctl_cmd into @c->cmd, with a line on stderr when the pin changes.
 * A read that fails keeps the previous command. 0 or a negative errno. */
int ctl_read_cmd(struct ctl *c, struct loader *l, const char *iface);

/* True when an operator added this LPM key (@family AF_INET: struct
 * shedd_lpm_v4, else shedd_lpm_v6): configured prefixes leave it alone.
 * With @config_cls other than SHEDD_NO_CLASS, the configuration gives the
 * key that class: it is recorded, for the day the manual one is deleted. */
bool ctl_manual_has(struct loader *l, int family, const void *key, __u32 config_cls);

/* Before the configured prefixes are written: forget which classes the
 * configuration gave the manual prefixes (ctl_manual_has() records them
 * again). */
void ctl_manual_forget_config(struct loader *l, int family);

/* Write every manual prefix into prefix_v4/prefix_v6 (over a configured
 * entry for the same prefix: the manual one wins). Called after the
 * configured prefixes are written, at start and after a reload. 0 or a
 * negative errno (a line on stderr says which). */
int loader_apply_manual_prefixes(struct loader *l);

#endif /* SHEDD_CTL_H */
