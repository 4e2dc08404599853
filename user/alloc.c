// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* alloc.c - total rate -> class rates -> per-CPU rates. See alloc.h for the
 * law; everything here is arithmetic on its arguments.
 */
#include <math.h>
#include <string.h>

#include "alloc.h"

static double min_d(double a, double b)
{
	return a < b ? a : b;
}

void alloc_classes(const struct alloc_params *p, double total_rate,
		   const double demand[SHEDD_NR_CLASSES],
		   double out[SHEDD_NR_CLASSES])
{
	double left = total_rate > 0 ? total_rate : 0;
	double want[SHEDD_NR_CLASSES];
	double floors = 0;
	int c;

	/* 1. Reserved floors, up to what each class asks for. */
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		want[c] = demand[c] > 0 ? demand[c] * (1 + p->headroom) : 0;
		out[c] = min_d(want[c], p->floor[c] * left);
		floors += p->floor[c];
	}
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		left -= out[c];

	/* 2. Unmet demand, most important class first. */
	for (c = 0; c < SHEDD_NR_CLASSES && left > 0; c++) {
		double unmet = want[c] - out[c];

		if (unmet <= 0)
			continue;
		unmet = min_d(unmet, left);
		out[c] += unmet;
		left -= unmet;
	}

	/* 3. Headroom nobody asked for, kept available to every class. */
	if (left > 0) {
		for (c = 0; c < SHEDD_NR_CLASSES; c++)
			out[c] += floors > 0 ? left * p->floor[c] / floors
					     : left / SHEDD_NR_CLASSES;
	}
}

void alloc_cpus(double class_rate, const double *cpu_demand, int ncpus,
		double min_share, double *out)
{
	double total = 0;
	int i;

	if (ncpus <= 0)
		return;
	for (i = 0; i < ncpus; i++)
		total += cpu_demand[i] > 0 ? cpu_demand[i] : 0;
	if (total <= 0) {
		for (i = 0; i < ncpus; i++)
			out[i] = class_rate / ncpus;
		return;
	}
	for (i = 0; i < ncpus; i++) {
		double d = cpu_demand[i] > 0 ? cpu_demand[i] : 0;

		out[i] = class_rate * (min_share / ncpus +
				       (1 - min_share) * d / total);
	}
}

void alloc_round(const double *in, int n, __u64 *out)
{
	double sum = 0;
	__u64 target, have = 0;
	int i;

	for (i = 0; i < n; i++) {
		double v = in[i] > 0 ? in[i] : 0;

		sum += v;
		out[i] = (__u64)floor(v);
		have += out[i];
	}
	target = (__u64)llround(sum);
	/* Hand the missing units to the largest remainders, one each. */
	while (have < target) {
		double best = -1;
		int bi = -1;

		for (i = 0; i < n; i++) {
			double v = in[i] > 0 ? in[i] : 0;
			double rem = v - (double)out[i];

			if (rem > best) {
				best = rem;
				bi = i;
			}
		}
		if (bi < 0)
			break;
		out[bi]++;
		have++;
	}
}

double alloc_demand(double smoothed, double instant)
{
	if (instant >= smoothed)
		return instant;
	return (smoothed + instant) / 2;
}

void alloc_rates(const struct alloc_params *p, double total_rate,
		 double total_burst, const double *demand, int ncpus,
		 struct shedd_rate *out)
{
	double cls_demand[SHEDD_NR_CLASSES] = { 0 };
	double cls_rate[SHEDD_NR_CLASSES];
	/* On the stack: the tick allocates nothing. */
	double share[ncpus > 0 ? ncpus : 1];
	__u64 ints[ncpus > 0 ? ncpus : 1];
	int c, i;

	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		for (i = 0; i < ncpus; i++)
			cls_demand[c] += demand[c * ncpus + i];
	alloc_classes(p, total_rate, cls_demand, cls_rate);

	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		double burst = total_rate > 0 ? total_burst * cls_rate[c] / total_rate : 0;

		/* A class may always burst its floor's share of the depth: a
		 * small class's Poisson arrivals need more than its mean. */
		if (burst < total_burst * p->floor[c])
			burst = total_burst * p->floor[c];

		alloc_cpus(cls_rate[c], &demand[c * ncpus], ncpus,
			   p->cpu_min_share, share);
		alloc_round(share, ncpus, ints);
		for (i = 0; i < ncpus; i++)
			out[c * ncpus + i].rate_per_sec = ints[i];

		/* The burst is split like the rate. */
		for (i = 0; i < ncpus; i++)
			share[i] = cls_rate[c] > 0 ? burst * (double)share[i] / cls_rate[c]
						   : burst / ncpus;
		alloc_round(share, ncpus, ints);
		for (i = 0; i < ncpus; i++)
			out[c * ncpus + i].burst = ints[i] ? ints[i] : 1;
	}
}
