/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* port_maps.h - writing the port limits the daemon decides
 * (user/core/port_limit.h) into port_limit, port_reserve and the flag of
 * settings_cur, and reading the slots' counters (port_buckets). Each
 * returns 0 or a negative errno.
 */
#ifndef SHEDD_PORT_MAPS_H
#define SHEDD_PORT_MAPS_H

#include <stdbool.h>
#include "handle.h"
#include "port_limit.h"

/* Give @e's slot to its port: the slot's reserve emptied (it starts full
 * at the port's burst), then the port's record at @now_ns. */
int port_maps_add(struct loader *l, const struct port_limit_entry *e, __u64 now_ns);
/* A new rate for a limited port, published piecewise (alloc_publish()). */
int port_maps_set(struct loader *l, const struct port_limit_entry *e, __u64 now_ns);
/* The port's limit removed. */
int port_maps_del(struct loader *l, __u16 port);
/* Every port's limit removed (a start: the daemon judges again). */
int port_maps_clear(struct loader *l);
/* SHEDD_CUR_PORT_LIMITS of settings_cur on or off. */
int port_maps_flag(struct loader *l, bool on);
/* The counters of every slot, summed over the CPUs. */
int port_maps_read(struct loader *l, struct shedd_port_bucket sum[MAX_PORT_LIMITS]);

#endif
