/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* migrate.h - upgrades without a gap: a shedd that finds the pins of an
 * older layout (or at the older path /sys/fs/bpf/shedd/IFACE outside the
 * initial network namespace) carries their values into maps of today's
 * layout while the old program keeps shedding, swaps its program into the
 * pinned link in one bpf_link_update(), then renames the new maps' pins
 * into place; on a failure the old program and its pins stay.
 */
#ifndef SHEDD_MIGRATE_H
#define SHEDD_MIGRATE_H

#include <stdbool.h>
#include "handle.h"

struct bpf_map;

/* Before anything is loaded: if @l has no link in its pin folder, look for
 * one of this interface at the older path; adopt it from there. 0 or a
 * negative errno (printed). */
int migrate_find_older(struct loader *l, const struct shedd_options *o);

/* Before the load, for every map of the program (and of the tc hand-off):
 * reuse the pinned map where its layout is today's, else leave the map to
 * be made afresh and remember the pinned one to carry its values over.
 * Refuses pins of a newer layout version. 0 or a negative errno (printed). */
int migrate_plan(struct loader *l, struct bpf_map *map);
/* After the maps of an object are planned: set the pin path of those that
 * are reused or pinned at the load. 0 or a negative errno (printed). */
int migrate_decide(struct loader *l);
/* After the last migrate_plan(): whether this start is an upgrade. */
bool migrate_needed(const struct loader *l);

/* After the load, before the configuration: copy every value of the older
 * maps into the new ones (the counters of the stats map wait for the swap),
 * converting each by its layout (user/maps/layout.c), and write the layout map.
 * 0 or a negative errno (printed): nothing is changed in the pins. */
int migrate_copy(struct loader *l);

/* In place of adopt(): pin the new maps under NAME_pending, swap the
 * program in one bpf_link_update(), rename the pins into place, then carry
 * the counters the old program made up to the swap. On failure everything
 * is put back (the old program in the link, the old maps under their
 * names) and a negative errno is returned (printed). */
int migrate_swap(struct loader *l, const struct shedd_options *o);

/* The tc hand-off the running shedd had (an fd, -1 if none), for
 * loader_attach() to put back when the swap fails. */
int migrate_old_handoff_fd(const struct loader *l);

void migrate_free(struct loader *l);

#endif /* SHEDD_MIGRATE_H */
