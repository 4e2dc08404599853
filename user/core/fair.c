// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fair.c - per-source fairness on the daemon's side (fair.h). */
#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fair.h"
#include "fair_sketch.h"

double fair_sources(const struct shedd_fair_cell *row, __u64 now)
{
	__u32 k, empty = 0;

	for (k = 0; k < FAIR_COLS; k++)
		if (!fair_cell_present(&row[k], now))
			empty++;
	if (empty == FAIR_COLS)
		return 0;
	if (empty == 0)
		return (double)FAIR_COLS * log((double)FAIR_COLS);
	return -(double)FAIR_COLS * log((double)empty / FAIR_COLS);
}

/* The chance that every row's cell of a source reads more than @v: the
 * product over the rows of the fraction of their cells over @v (once it is
 * @eps or less it stops: only that is asked). */
static double above_all_rows(const struct shedd_fair_cell *level, __u32 v, __u64 now, double eps)
{
	double p = 1;
	__u32 r, k, n;

	for (r = 0; r < FAIR_ROWS && p > eps; r++) {
		const struct shedd_fair_cell *row = level + (size_t)r * FAIR_COLS;

		for (k = 0, n = 0; k < FAIR_COLS; k++)
			n += fair_cell_estimate(&row[k], now) > v;
		p *= (double)n / FAIR_COLS;
	}
	return p;
}

/* Counts of up to NOISE_BINS - 1 a window are told apart one by one;
 * a higher floor is searched for. */
#define NOISE_BINS 4096U

/* One pass over the level makes a histogram of each row's estimates; the
 * least count F then comes from its tail sums, count by count. Only a
 * floor of NOISE_BINS or more (a class of few, heavy sources) takes a
 * binary search, each step a pass over the rows. No allocation: a tick's
 * every class and level costs one read of each cell. */
__u32 fair_noise(const struct shedd_fair_cell *level, __u64 now, double eps)
{
	__u32 hist[FAIR_ROWS][NOISE_BINS + 1], above[FAIR_ROWS], r, k, v, lo, hi = 0, bins;

	memset(hist, 0, sizeof(hist));
	for (r = 0; r < FAIR_ROWS; r++) {
		above[r] = 0;
		for (k = 0; k < FAIR_COLS; k++) {
			__u32 e = fair_cell_estimate(&level[(size_t)r * FAIR_COLS + k], now);

			/* Most cells of a sketch read 0: those are not counted. */
			if (!e)
				continue;
			if (e > hi)
				hi = e;
			hist[r][e < NOISE_BINS ? e : NOISE_BINS]++;
			above[r]++;
		}
	}
	/* No cell reads more than the highest: the least F is in [0, hi]. */
	if (!hi)
		return 0;
	bins = hi < NOISE_BINS ? hi : NOISE_BINS;
	/* above[r]: the cells of row r that read more than v. */
	for (v = 0; v < bins; v++) {
		double p = 1;

		for (r = 0; r < FAIR_ROWS; r++)
			p *= (double)above[r] / FAIR_COLS;
		if (p <= eps)
			return v;
		for (r = 0; r < FAIR_ROWS; r++)
			above[r] -= hist[r][v + 1];
	}
	if (bins == hi)
		return hi;
	for (lo = bins; lo < hi;) {
		__u32 mid = lo + (hi - lo) / 2;

		if (above_all_rows(level, mid, now, eps) <= eps)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

__u32 fair_limit(double slack, double rate_per_sec, double sources)
{
	double l;

	if (!(slack > 0) || !(rate_per_sec >= 0))
		return 0;
	/* NaN sources too: a cast of NaN to __u32 is undefined (it read 0
	 * here, no limit at all). */
	if (!(sources >= 1))
		sources = 1;
	l = ceil(slack * rate_per_sec * FAIR_WINDOW_S / sources) + FAIR_MIN_LIMIT;
	if (l > 4e9)
		return 4000000000U;
	return (__u32)l;
}

bool fair_would_shed(__u64 asked, __u64 fair_shed, double dt_s, double rate_per_sec)
{
	if (!fair_shed || !(dt_s > 0))
		return false;
	return (double)(asked + fair_shed) > rate_per_sec * dt_s;
}

void fair_class_config(const struct fair_class_opts *o, const struct shedd_fair_cell *cells,
		       __u32 cls, double rate_per_sec, bool active, __u64 now,
		       struct shedd_fair_class *out)
{
	__u32 l;

	memset(out, 0, sizeof(*out));
	if (!(o->slack > 0) || !o->levels || cls >= SHEDD_NR_CLASSES)
		return;
	out->levels = o->levels;
	out->active = active;
	for (l = 0; l < FAIR_LEVELS; l++) {
		double n = cells ? fair_sources(&cells[fair_cell_index(cls, l, 0, 0)], now) : 0;
		__u64 lim = fair_limit(o->slack, rate_per_sec, n);

		out->sources[l] = n > 4e9 ? 4000000000U : (__u32)(n + 0.5);
		/* 0 is no limit: it stays so. */
		if (cells && lim)
			lim += fair_noise(&cells[fair_cell_index(cls, l, 0, 0)], now, FAIR_NOISE_EPS);
		out->limit[l] = lim > 4000000000ULL ? 4000000000U : (__u32)lim;
	}
}

static int hitter_cmp(const void *a, const void *b)
{
	const struct fair_hitter *x = a, *y = b;

	if (x->rate_per_sec != y->rate_per_sec)
		return x->rate_per_sec < y->rate_per_sec ? 1 : -1;
	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

void fair_heavy_add_pending(struct shedd_fair_heavy *heavy, const struct shedd_fair_heavy_cpu *pending,
			    __u32 n, int ncpus)
{
	__u32 k;
	int c;

	for (k = 0; k < n; k++)
		for (c = 0; c < ncpus; c++) {
			const struct shedd_fair_heavy_cpu *p = &pending[(size_t)k * (size_t)ncpus + c];
			struct shedd_fair_heavy *s = &heavy[k];

			if (p->shed && p->family && p->family == s->family && p->level == s->level &&
			    !memcmp(p->addr, s->addr, sizeof(p->addr)))
				s->shed += p->shed;
		}
}

int fair_top(const struct shedd_fair_heavy *slots, __u32 cls, __u64 now, struct fair_hitter *out,
	     int max)
{
	struct fair_hitter all[FAIR_HEAVY_SLOTS];
	__u32 i;
	int n = 0;

	if (max <= 0)
		return 0;
	for (i = 0; i < FAIR_HEAVY_SLOTS; i++) {
		const struct shedd_fair_heavy *s = &slots[i];
		struct fair_hitter *h = &all[n];

		if ((s->family != 4 && s->family != 6) || s->level >= FAIR_LEVELS ||
		    s->last_ns > now || now - s->last_ns > FAIR_HEAVY_AGE_NS)
			continue;
		memset(h, 0, sizeof(*h));
		h->cls = cls;
		h->level = s->level;
		h->family = s->family;
		h->prefixlen = fair_prefixlen(s->family, s->level);
		memcpy(h->addr, s->addr, s->family == 4 ? 4 : 16);
		h->rate_per_sec = s->estimate / FAIR_WINDOW_S;
		h->shed = s->shed;
		h->age_ns = now - s->last_ns;
		n++;
	}
	qsort(all, (size_t)n, sizeof(all[0]), hitter_cmp);
	if (n > max)
		n = max;
	memcpy(out, all, (size_t)n * sizeof(all[0]));
	return n;
}

void fair_hitter_source(const struct fair_hitter *h, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(h->family == 4 ? AF_INET : AF_INET6, h->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	if (h->level == 0)
		snprintf(buf, len, "%s", a);
	else
		snprintf(buf, len, "%s/%u", a, h->prefixlen);
}

const char *fair_level_name(int family, __u32 level)
{
	if (level == 0)
		return "addr";
	if (family == 4)
		return level == 1 ? "/24" : "?";
	return level == 1 ? "/64" : level == 2 ? "/48" : "?";
}

static const struct {
	const char *name;
	__u32 bit;
} level_names[] = {
	{ "addr", FAIR_ADDR },
	{ "24", FAIR_NET24 },
	{ "64", FAIR_NET64 },
	{ "48", FAIR_NET48 },
};

int fair_parse_levels(const char *s, __u32 *levels, char *why, size_t whylen)
{
	__u32 v = 0;
	const char *p = s;

	if (!s || !*s) {
		snprintf(why, whylen, "no level given (addr, 24, 64, 48, joined by '+')");
		return -1;
	}
	while (*p) {
		size_t n = strcspn(p, "+"), i;

		for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++)
			if (strlen(level_names[i].name) == n && !strncmp(p, level_names[i].name, n))
				break;
		if (i == sizeof(level_names) / sizeof(level_names[0])) {
			snprintf(why, whylen, "'%.*s' is not a level (addr, 24, 64, 48)", (int)n, p);
			return -1;
		}
		if (v & level_names[i].bit) {
			snprintf(why, whylen, "level '%s' given twice", level_names[i].name);
			return -1;
		}
		v |= level_names[i].bit;
		p += n;
		if (*p == '+') {
			p++;
			if (!*p) {
				snprintf(why, whylen, "a '+' with no level after it");
				return -1;
			}
		}
	}
	*levels = v;
	return 0;
}

void fair_format_levels(__u32 levels, char *buf, size_t len)
{
	size_t i, used = 0;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		int w;

		if (!(levels & level_names[i].bit))
			continue;
		w = snprintf(buf + used, len > used ? len - used : 0, "%s%s", used ? "+" : "",
			     level_names[i].name);
		if (w < 0)
			return;
		used += (size_t)w;
	}
}
