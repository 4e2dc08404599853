// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* alloc.c - total rate -> class rate records -> published rates. See alloc.h for the
 * law; everything here is arithmetic on its arguments.
 */
#include <math.h>
#include <stdbool.h>
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
	/* One missing unit each to the entries with a fraction, first first. */
	for (i = 0; i < n && have < target; i++) {
		if (in[i] > (double)out[i]) {
			out[i]++;
			have++;
		}
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
		 struct shedd_class_rate out[SHEDD_NR_CLASSES])
{
	alloc_rates_capped(p, total_rate, total_burst, demand, ncpus, NULL, out);
}

void alloc_rates_capped(const struct alloc_params *p, double total_rate, double total_burst,
			const double *demand, int ncpus, const double *cap,
			struct shedd_class_rate out[SHEDD_NR_CLASSES])
{
	bool capped[SHEDD_NR_CLASSES] = { false };
	double cls_demand[SHEDD_NR_CLASSES] = { 0 };
	double cls_rate[SHEDD_NR_CLASSES];
	__u64 ints[SHEDD_NR_CLASSES];
	int c, i;

	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		for (i = 0; i < ncpus; i++)
			cls_demand[c] += demand[c * ncpus + i];
	alloc_classes(p, total_rate, cls_demand, cls_rate);
	for (c = 0; cap && c < SHEDD_NR_CLASSES; c++) {
		if (cap[c] >= 0 && cap[c] < cls_rate[c]) {
			cls_rate[c] = cap[c];
			capped[c] = true;
		}
	}
	/* The fractions go to the most important classes first, so a class
	 * of a few SYN/s keeps its headroom and the least important one
	 * absorbs the rounding. */
	alloc_round(cls_rate, SHEDD_NR_CLASSES, ints);

	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		struct shedd_class_rate *o = &out[c];
		double burst = total_rate > 0 ? total_burst * cls_rate[c] / total_rate : 0;
		double rate = (double)ints[c], lease, batch;
		int active = 0;

		/* A class may always burst twice its floor's share of the
		 * depth: a small class's Poisson arrivals need more than 100 ms
		 * of its mean (measured: critical classes of 2-3 % of a 4x load
		 * lost 1-1.5 % of their SYNs at the door with one share). */
		if (!capped[c] && burst < 2 * total_burst * p->floor[c])
			burst = 2 * total_burst * p->floor[c];
		burst = ceil(burst);
		if (burst < 1)
			burst = 1;
		if (burst > (double)MAX_BURST)
			burst = (double)MAX_BURST;
		if (rate > (double)MAX_RATE_PER_SEC)
			rate = (double)MAX_RATE_PER_SEC;

		lease = rate > 0 ? burst / rate * 1e9 / ALLOC_LEASE_DIV : (double)ALLOC_MAX_LEASE_NS;
		if (lease > (double)ALLOC_MAX_LEASE_NS)
			lease = (double)ALLOC_MAX_LEASE_NS;
		if (lease < (double)ALLOC_MIN_LEASE_NS)
			lease = (double)ALLOC_MIN_LEASE_NS;

		for (i = 0; i < ncpus; i++)
			active += demand[c * ncpus + i] > 0;
		batch = floor(rate * lease / 1e9 / (active > 0 ? active : 1));
		if (batch < 1)
			batch = 1;
		if (batch > MAX_BATCH)
			batch = MAX_BATCH;

		o->rate_per_sec = (__u64)rate;
		o->burst = (__u64)burst;
		o->lease_ns = (__u64)lease;
		o->batch = (__u32)batch;
	}
}

void alloc_publish(struct shedd_class_rate *pub, const struct shedd_class_rate *next,
		   __u64 last_refill_ns, __u64 now_ns)
{
	__u64 prev = next->rate_per_sec, changed = now_ns;

	if (pub->flags & SHEDD_RATE_SET) {
		if (pub->rate_per_sec == next->rate_per_sec) {
			/* Same rate: the piecewise refill stays as it was. */
			prev = pub->prev_rate_per_sec;
			changed = pub->changed_ns;
		} else if (last_refill_ns >= pub->changed_ns || last_refill_ns == 0 ||
			   now_ns <= pub->changed_ns) {
			/* Refilled since the last change (or never): the span from
			 * the last refill to now ran at the published rate. */
			prev = pub->rate_per_sec;
		} else {
			/* Idle across the last change too: prev_rate covered
			 * [last refill, changed_ns], rate_per_sec the rest. */
			double before = (double)(pub->changed_ns - last_refill_ns);
			double after = (double)(now_ns - pub->changed_ns);

			prev = (__u64)llround(((double)pub->prev_rate_per_sec * before +
					       (double)pub->rate_per_sec * after) / (before + after));
		}
	}
	*pub = *next;
	pub->prev_rate_per_sec = prev;
	pub->changed_ns = changed;
	pub->flags = SHEDD_RATE_SET;
}
