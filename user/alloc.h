/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* alloc.h - the allocator: splits a total admitted SYN rate across classes
 * (reserved floors, then priority order, then headroom) and each class rate
 * across CPUs in proportion to their demand. Pure: no I/O, no globals.
 */
#ifndef SHEDD_ALLOC_H
#define SHEDD_ALLOC_H

#include <linux/types.h>
#include "shedd.h"

/**
 * struct alloc_params - how the total is shared.
 * @floor:         fraction of the total reserved for each class (0..1); the
 *                 sum must not pass 1
 * @cpu_min_share: fraction of each class rate spread evenly over all CPUs
 *                 whatever their demand, so a CPU that saw nothing can still
 *                 admit a first burst (0..1)
 * @headroom:      a class's demand counts as demand * (1 + headroom), so a
 *                 class whose demand is met is not held exactly at its
 *                 measured mean and does not shed its own jitter (>= 0)
 */
struct alloc_params {
	double floor[SHEDD_NR_CLASSES];
	double cpu_min_share;
	double headroom;
};

/*
 * alloc_classes() - class rates from the total rate and class demand.
 * Control law, with want = demand * (1 + headroom):
 *   1. each class gets min(want, floor * total);
 *   2. what is left goes to unmet want in priority order
 *      (critical_plus first);
 *   3. what nobody demands is shared in proportion to the floors (evenly if
 *      all floors are 0), so a burst of any class is not refused for nothing.
 * The class rates always add up to @total_rate.
 */
void alloc_classes(const struct alloc_params *p, double total_rate,
		   const double demand[SHEDD_NR_CLASSES],
		   double out[SHEDD_NR_CLASSES]);

/*
 * alloc_cpus() - split @class_rate across @ncpus: @min_share of it evenly,
 * the rest in proportion to @cpu_demand (evenly when nobody demands).
 */
void alloc_cpus(double class_rate, const double *cpu_demand, int ncpus,
		double min_share, double *out);

/*
 * alloc_round() - round @n non-negative reals to integers whose sum is the
 * rounded sum of the reals (largest remainder), so no rate is lost to
 * truncation when it is split.
 */
void alloc_round(const double *in, int n, __u64 *out);

/*
 * alloc_demand() - smoothed demand: rises at once to a new peak, decays by
 * half a tick towards a lower reading, so a flood is seen in one tick and a
 * pause of one tick does not forget it.
 */
double alloc_demand(double smoothed, double instant);

/*
 * alloc_rates() - the whole split: class rates from @total_rate and the
 * per-class, per-CPU demand (demand[class * ncpus + cpu], SYN/s), then
 * per-CPU integer rates and bursts written to out[class * ncpus + cpu].
 * Each class's burst is @total_burst scaled by its share of the rate,
 * split like the rate, and at least one token on every CPU.
 */
void alloc_rates(const struct alloc_params *p, double total_rate,
		 double total_burst, const double *demand, int ncpus,
		 struct shedd_rate *out);

#endif /* SHEDD_ALLOC_H */
