/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* fair_view.h - what an operator is shown of per-source fairness, per
 * class: its fair_config entry, its fair_stats summed over CPUs and its
 * heavy hitters (fair_top()), built from the maps' values as read. Pure:
 * shedctl (status, top) and the metrics build and print the same view;
 * user/maps/fair_maps.c reads the maps into it.
 */
#ifndef SHEDD_FAIR_VIEW_H
#define SHEDD_FAIR_VIEW_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

#include "fair.h"

struct fair_view_class {
	struct shedd_fair_class cfg;   /* fair_config[cls] */
	struct shedd_fair_stats stats; /* fair_stats[cls], summed over CPUs */
	int ntop;                      /* heavy hitters in @top */
	struct fair_hitter top[FAIR_TOP_MAX]; /* highest rate first */
};

struct fair_view {
	bool have; /* the pins (or the program) have the fairness maps */
	struct fair_view_class cls[SHEDD_NR_CLASSES];
};

/*
 * fair_view_build() - the view from the maps' values: @cfg (fair_config,
 * SHEDD_NR_CLASSES entries), @percpu (fair_stats, SHEDD_NR_CLASSES x
 * @ncpus, class-major), @heavy (fair_heavy, SHEDD_NR_CLASSES x
 * FAIR_HEAVY_SLOTS) at @now (CLOCK_MONOTONIC, taken after fair_heavy was
 * read: a slot newer than @now would be left out).
 */
void fair_view_build(struct fair_view *v, const struct shedd_fair_class *cfg,
		     const struct shedd_fair_stats *percpu, int ncpus,
		     const struct shedd_fair_heavy *heavy, __u64 now);

/* Whether the class counts sources at sketch level @level (0..2). */
bool fair_view_level_used(const struct shedd_fair_class *cfg, __u32 level);

/* The name of sketch level @level as the metrics and status say it:
 * "addr", "24+64" (level 1 holds the IPv4 /24s and the IPv6 /64s), "48". */
const char *fair_view_level_label(__u32 level);

/* A heavy hitter's level as --fair-levels says it: "addr", "24", "64",
 * "48". */
const char *fair_view_hitter_level(const struct fair_hitter *h);

/* A limit of fair_config (admissions a window) in admissions a second;
 * 0: no limit. */
double fair_view_limit_per_sec(__u32 limit);

/* The class's "fair" object of shedctl's JSON (status and top). */
void fair_view_json(FILE *f, const struct fair_view_class *c);

#endif /* SHEDD_FAIR_VIEW_H */
