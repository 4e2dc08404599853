/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* ctl.h - the daemon's side of the operator's commands, over the pinned
 * maps: the rate pin (ctl_cmd), the manual prefixes (manual_v4/manual_v6),
 * and the conversion of a ctl_state pinned by an older shedd.
 */
#ifndef SHEDD_CTL_H
#define SHEDD_CTL_H

#include <stdbool.h>
#include "ctl_state.h"
#include "loader.h"

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

/*
 * A ctl_state pinned by an older shedd has a smaller value (version 1) and
 * cannot be reused by the loader as it is. Before the load,
 * ctl_migrate_begin() reads its record into @old (zeroed beyond it) and
 * removes that pin, so the load makes a new map; ctl_migrate_finish()
 * writes @old into it. *@have says whether there was one. 0 or a negative
 * errno (a record it cannot read is dropped, with a line, not an error).
 */
int ctl_migrate_begin(const char *pin_dir, struct shedd_ctl_state *old, bool *have);
int ctl_migrate_finish(struct loader *l, const struct shedd_ctl_state *old, bool have);

#endif /* SHEDD_CTL_H */
