/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* fair.h - per-source fairness on the daemon's side: how many sources a
 * class's sketch holds, the limit each may take, and its heavy hitters.
 * Pure: no I/O, no clock; the daemon, shedctl and the tests call it. */
#ifndef SHEDD_FAIR_H
#define SHEDD_FAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "shedd.h"

#define FAIR_DEFAULT_SLACK 2.0 /* a source may take twice an equal share */
#define FAIR_MAX_SLACK 1000.0
#define FAIR_MIN_LIMIT 2U       /* admissions a window above the share */
#define FAIR_HEAVY_AGE_NS 5000000000ULL /* a heavy hitter unseen for 5 s is gone */
#define FAIR_TOP_MAX 10          /* heavy hitters exported per class */
#define FAIR_HOLD_NS 1000000000ULL /* fairness stays active 1 s after a shed */
/* Cells not raised for two windows read 0: a class that counted nothing
 * for that long (and a tick's slack, the program's clock being the
 * coarse one) has an empty sketch. */
#define FAIR_IDLE_NS (2 * (1ULL << FAIR_WINDOW_SHIFT) + 100000000ULL)
/* The most a source within its share may be shed for the noise of the
 * sketch, per level: see fair_noise(). */
#ifndef FAIR_NOISE_EPS
#define FAIR_NOISE_EPS 0.01
#endif

/* The window of the sketch in seconds. */
#define FAIR_WINDOW_S ((double)(1ULL << FAIR_WINDOW_SHIFT) / 1e9)

/* One class's fairness, from the options. */
struct fair_class_opts {
	double slack;  /* 0: off */
	__u32 levels;  /* FAIR_* bits */
};

/*
 * fair_sources() - the number of sources counted in one row of a level's
 * sketch (@row: FAIR_COLS cells) at @now: linear counting (Whang et al.,
 * 1990) over the cells whose estimate is at least one, n = -m ln(z / m)
 * with z empty cells of m; m ln m when none is empty.
 */
double fair_sources(const struct shedd_fair_cell *row, __u64 now);

/*
 * fair_noise() - the noise floor of one level of a class's sketch (@level:
 * its FAIR_ROWS rows of FAIR_COLS cells) at @now: the least count F such
 * that a source's cells all read more than F, from the admissions of the
 * other sources in them, with probability at most @eps. A source's cells
 * are one per row, at random under a key it cannot know, the rows
 * independent, so that probability is the product over the rows of the
 * fraction of the row's cells that read more than F: read from the cells
 * themselves, whatever the sources and their counts. An empty sketch, or
 * one whose few sources fill too few cells to meet in every row, gives 0.
 * Counted by conservative update (fair_sketch.h), a crowd of light
 * sources (a few admissions each) spreads its A admissions of a window
 * evenly over the 2 x FAIR_COLS cells, and the floor is about m + 2
 * sqrt(m), m = A / (2 x FAIR_COLS) (measured: tests/test_fair_scale.c),
 * half or less of plain count-min's, A / FAIR_COLS and its tail; sources
 * of unequal counts raise it (tests/test_fair.c: 75 for 50 000 sources of
 * 1 to 40, m = 31).
 */
__u32 fair_noise(const struct shedd_fair_cell *level, __u64 now, double eps);

/*
 * fair_limit() - the most admissions a source may have in the window:
 * @slack times an equal share of what @rate_per_sec admits in a window
 * among @sources sources, plus FAIR_MIN_LIMIT, rounded up; 0 when @slack
 * is 0 (no limit).
 */
__u32 fair_limit(double slack, double rate_per_sec, double sources);

/*
 * fair_would_shed() - would the class have shed in the last @dt_s seconds
 * without fairness? When what asked for a token (@asked) and what
 * fairness shed before asking (@fair_shed) came faster than @rate_per_sec.
 * A class that shed outright also counts (the daemon's own test), so
 * fairness stays on while it holds a heavy source back, and goes off when
 * that source would fit.
 */
bool fair_would_shed(__u64 asked, __u64 fair_shed, double dt_s, double rate_per_sec);

/*
 * fair_class_config() - the fair_config entry of a class: its levels, the
 * limit of each level from its sketch (@cells: the whole map) at @now,
 * @active when the class shed lately. A level's limit is fair_limit() of
 * the sources it holds plus its noise floor, fair_noise() at
 * FAIR_NOISE_EPS: a source that took less than fair_limit() is then shed
 * for the noise of the sketch with probability at most FAIR_NOISE_EPS at
 * that level, however many sources share the cells, and a source heavier
 * than the limit, once its count and its cells' noise reach it.
 */
void fair_class_config(const struct fair_class_opts *o, const struct shedd_fair_cell *cells,
		       __u32 cls, double rate_per_sec, bool active, __u64 now,
		       struct shedd_fair_class *out);

struct fair_hitter {
	__u32 cls;
	__u32 level;
	int family;       /* 4 or 6 */
	__u32 prefixlen;
	__u8 addr[16];
	double rate_per_sec; /* its estimate over the window */
	__u64 shed;
	__u64 age_ns;     /* since it was last seen over its limit */
};

/*
 * fair_heavy_add_pending() - add to each of the @n slots @heavy the sheds
 * each CPU still holds for the source the slot holds: @pending, @n
 * entries of fair_heavy_cpu, each @ncpus values (a per-CPU map's lookup).
 */
void fair_heavy_add_pending(struct shedd_fair_heavy *heavy, const struct shedd_fair_heavy_cpu *pending,
			    __u32 n, int ncpus);

/*
 * fair_top() - the heavy hitters of class @cls from its FAIR_HEAVY_SLOTS
 * slots @slots, seen within FAIR_HEAVY_AGE_NS of @now, highest rate first,
 * at most @max of them. Return: how many were written to @out.
 */
int fair_top(const struct shedd_fair_heavy *slots, __u32 cls, __u64 now, struct fair_hitter *out,
	     int max);

/* "198.18.5.0/24", "2001:db8::/64", "198.18.0.7" (an address: no length). */
void fair_hitter_source(const struct fair_hitter *h, char *buf, size_t len);

/* "addr", "/24", "/64", "/48"; level 1 and 2 by @family. */
const char *fair_level_name(int family, __u32 level);

/*
 * fair_parse_levels() - "addr+24+64+48" (any of them, joined by '+') into
 * FAIR_* bits. Return 0, or -1 with a reason in @why.
 */
int fair_parse_levels(const char *s, __u32 *levels, char *why, size_t whylen);

/* The inverse of fair_parse_levels(), "addr+24+64+48" order. */
void fair_format_levels(__u32 levels, char *buf, size_t len);

#endif /* SHEDD_FAIR_H */
