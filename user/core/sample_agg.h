/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* sample_agg.h - a tick's (or a second's) merged sojourn or latency samples,
 * and the arithmetic on them. Pure: shared by the signal readers, the tick
 * pipeline and the simulation.
 */
#ifndef SHEDD_SAMPLE_AGG_H
#define SHEDD_SAMPLE_AGG_H

#include <linux/types.h>
#include "histogram.h"
#include "shedd.h"

/* Fewer samples than this tell no spread (agg_spread()): a tenth of them
 * on either side must be two samples or more. */
#ifndef AGG_SPREAD_SAMPLES
#define AGG_SPREAD_SAMPLES 20
#endif

struct sample_agg {
	__u64 count;
	__u64 sum_ns;
	__u64 min_ns;
	__u64 max_ns;
	__u64 hist[HIST_BUCKETS];
};

void agg_add(struct sample_agg *a, __u64 ns);
void agg_merge(struct sample_agg *into, const struct sample_agg *from);
void agg_from_sojourn(struct sample_agg *a, const struct shedd_sojourn *percpu, int ncpus);
__u64 agg_quantile(const struct sample_agg *a, double q);
/* The trimmed mean of the middle 80 % of the samples (0 when empty):
 * deaf to up to a tenth of outliers on either side, and, unlike a quantile,
 * continuous in the mix of a bimodal distribution. */
__u64 agg_mid_mean(const struct sample_agg *a);
/* The larger of the two minimums, of those aggregates that hold samples (0
 * when neither does): the worst standing queue of two listener groups. */
__u64 agg_worst_min(const struct sample_agg *a, const struct sample_agg *b);
/* The samples' spread as Kingman's approximation weighs a service's times
 * (queueing wait at a given utilisation ~ (1 + cs^2) / 2 with Poisson
 * arrivals): 1 + cs^2, with cs, the coefficient of variation, read
 * robustly as the interdecile range over the mid-mean and scaled so an
 * exponential distribution reads 1. A fixed time reads 1, an exponential
 * one 2; not clamped. 0 below AGG_SPREAD_SAMPLES samples (not measured). */
double agg_spread(const struct sample_agg *a);

#endif /* SHEDD_SAMPLE_AGG_H */
