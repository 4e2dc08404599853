/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* fair_maps.h - reading the fairness maps (fair_config, fair_stats,
 * fair_heavy) into a fair_view: shedctl's from the pins by path, the
 * daemon's metrics from its own program's maps. Every map is checked
 * (type, key and value size, entries) before anything is read.
 */
#ifndef SHEDD_FAIR_MAPS_H
#define SHEDD_FAIR_MAPS_H

#include <stddef.h>

#include "fair_view.h"

struct fair_maps {
	int config_fd, stats_fd, heavy_fd; /* -1: not open */
	int pending_fd; /* fair_heavy_cpu; -1: pins older than it */
	int ncpus;
	bool owned; /* opened by path: fair_maps_close() closes them */
};

/* Open the three maps pinned under @dir, and fair_heavy_cpu where the pins
 * have it (layout version 10). 0; -ENOENT when one of the three is missing
 * (pins of a shedd older than per-source fairness: the message says so);
 * -EPROTO for a map of a layout this build does not know; another
 * negative errno. */
int fair_maps_open_pins(struct fair_maps *m, const char *dir, char *err, size_t errlen);
void fair_maps_close(struct fair_maps *m);

/* Read the maps into @v at the monotonic time after the read. 0 or a
 * negative errno with a message. */
int fair_maps_read(const struct fair_maps *m, struct fair_view *v, char *err, size_t errlen);

struct loader;
/* The daemon's: its program's maps. 0 or a negative errno (@v->have
 * false). */
int loader_read_fair(struct loader *l, struct fair_view *v);

#endif /* SHEDD_FAIR_MAPS_H */
