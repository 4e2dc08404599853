/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tc_handoff.h - verified admission's tc hand-off (SHEDD_HANDOFF_TC) of a
 * loader: its program on the XDP program's maps, its tc filter.
 */
#ifndef SHEDD_TC_HANDOFF_H
#define SHEDD_TC_HANDOFF_H

#include <linux/types.h>
#include "handle.h"
#include "options.h"

/* Open and load the hand-off on the XDP program's settings, ports,
 * prefixes, MSS cache, proven flows and flow key (the very same maps, not
 * copies); its counters are pinned beside them. 0 or a negative errno. */
int handoff_load(struct loader *l, const struct shedd_options *o);

/* The id of this shedd's own hand-off program; 0 if it has none. */
__u32 handoff_id(const struct loader *l);

/* Attach the hand-off at tc ingress: the clsact qdisc is made if missing,
 * a filter of an earlier shedd is replaced in one step, another program's
 * only with --force. Pinned as "handoff" for bpftool. 0 or a negative
 * errno, said. */
int handoff_attach(struct loader *l, const struct shedd_options *o);

/* No hand-off in this shedd: take away one an earlier shedd left. */
void handoff_drop_stale(struct loader *l, const struct shedd_options *o);

/* An upgrade failed after our hand-off was attached: put back the one the
 * running shedd had, or take ours away if it had none. */
void handoff_restore(struct loader *l, const struct shedd_options *o);

#endif /* SHEDD_TC_HANDOFF_H */
