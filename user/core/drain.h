/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* drain.h - the drain of a latency overload: while latency is above its
 * target, the cuts' floor and cap are scaled below the served rate so the
 * queue behind the excess drains (aimd_params.drain_ns in aimd_types.h has
 * the law). Pure, as aimd.h.
 */
#ifndef SHEDD_DRAIN_H
#define SHEDD_DRAIN_H

#include <linux/types.h>
#include "aimd_types.h"

/* The drain factor of a latency-overloaded tick, and the drain's course
 * through the episode (aimd_params.drain_ns in aimd_types.h): it begins on the first
 * tick with an excess; at its end it begins again if the excess grew, or
 * fell to AIMD_DRAIN_FELL of its start but stayed, or is spent, and the rate returns to the served floor in connections if
 * the service answered what it was asked. */
double drain_step(const struct aimd_params *p, struct aimd_state *s,
		  const struct aimd_signals *sig, __u64 now_ns);

#endif /* SHEDD_DRAIN_H */
