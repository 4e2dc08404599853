// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sample_agg.c - merged sojourn or latency samples: count, sum, exact
 * extremes and a log-linear histogram. Pure.
 */
#include <string.h>
#include "sample_agg.h"

void agg_add(struct sample_agg *a, __u64 ns)
{
	if (!a->count || ns < a->min_ns)
		a->min_ns = ns;
	if (ns > a->max_ns)
		a->max_ns = ns;
	a->count++;
	a->sum_ns += ns;
	a->hist[hist_bucket(ns)]++;
}

/* Fold a count, sum and exact extremes into @into (histogram aside). */
static void agg_fold(struct sample_agg *into, __u64 count, __u64 sum, __u64 min, __u64 max)
{
	if (!count)
		return;
	if (!into->count || min < into->min_ns)
		into->min_ns = min;
	if (max > into->max_ns)
		into->max_ns = max;
	into->count += count;
	into->sum_ns += sum;
}

void agg_merge(struct sample_agg *into, const struct sample_agg *from)
{
	int i;

	agg_fold(into, from->count, from->sum_ns, from->min_ns, from->max_ns);
	for (i = 0; i < HIST_BUCKETS && from->count; i++)
		into->hist[i] += from->hist[i];
}

void agg_from_sojourn(struct sample_agg *a, const struct shedd_sojourn *percpu, int ncpus)
{
	int c, i;

	memset(a, 0, sizeof(*a));
	for (c = 0; c < ncpus; c++) {
		const struct shedd_sojourn *p = &percpu[c];

		agg_fold(a, p->count, p->sum_ns, p->min_ns, p->max_ns);
		for (i = 0; i < HIST_BUCKETS && p->count; i++)
			a->hist[i] += p->hist[i];
	}
}

__u64 agg_quantile(const struct sample_agg *a, double q)
{
	__u64 v = hist_quantile(a->hist, HIST_BUCKETS, a->count, q);

	/* The exact extremes beat a bucket's midpoint. */
	if (a->count && v < a->min_ns)
		v = a->min_ns;
	if (a->count && v > a->max_ns)
		v = a->max_ns;
	return v;
}

/* The mean of the samples between ranks n/10 and 9n/10 (ranks are a
 * continuum: a bucket of c samples covers [seen, seen + c)), each read at
 * its bucket's middle, kept within the exact extremes. */
__u64 agg_mid_mean(const struct sample_agg *a)
{
	double lo = (double)a->count / 10, hi = 9 * (double)a->count / 10;
	double seen = 0, sum = 0;
	__u32 i;

	if (!a->count)
		return 0;
	for (i = 0; i < HIST_BUCKETS && seen < hi; i++) {
		double from = seen, to = seen + (double)a->hist[i];
		double v = (double)(hist_lower_ns(i) + hist_lower_ns(i + 1)) / 2;

		seen = to;
		if (to <= lo)
			continue;
		if (v < (double)a->min_ns)
			v = (double)a->min_ns;
		if (v > (double)a->max_ns)
			v = (double)a->max_ns;
		sum += v * ((to < hi ? to : hi) - (from > lo ? from : lo));
	}
	return (__u64)(sum / (hi - lo) + 0.5);
}

__u64 agg_worst_min(const struct sample_agg *a, const struct sample_agg *b)
{
	__u64 am = a->count ? a->min_ns : 0, bm = b->count ? b->min_ns : 0;

	return am > bm ? am : bm;
}

/* An exponential distribution's interdecile range, ln 10 - ln(10 / 9) =
 * 2.1972 times its mean, over the mean of its middle 80 %, 0.8307 times its
 * mean: the ratio at which agg_spread() reads cs = 1. */
#define EXP_IDR_PER_MID 2.6450

double agg_spread(const struct sample_agg *a)
{
	__u64 mid, p10, p90;
	double cs;

	if (a->count < AGG_SPREAD_SAMPLES)
		return 0;
	mid = agg_mid_mean(a);
	if (!mid)
		return 0;
	p10 = agg_quantile(a, 0.1);
	p90 = agg_quantile(a, 0.9);
	/* Quantiles are read at their bucket's middle (within 6.25 %): a
	 * fixed time reads a spread of a bucket at most, cs 0.05. */
	cs = (double)(p90 > p10 ? p90 - p10 : 0) / (EXP_IDR_PER_MID * (double)mid);
	return 1 + cs * cs;
}
