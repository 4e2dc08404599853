/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* alloc.h - the allocator: splits a total admitted SYN rate across classes
 * (reserved floors, then priority order, then headroom) into whole SYN/s,
 * sizes each class's burst, lease and batch for the CPUs that see it, and
 * publishes a new rate so the reserve refills piecewise across the change.
 * Pure: no I/O, no globals.
 */
#ifndef SHEDD_ALLOC_H
#define SHEDD_ALLOC_H

#include <linux/types.h>
#include "shedd.h"

/**
 * struct alloc_params - how the total is shared.
 * @floor:    fraction of the total reserved for each class (0..1); the sum
 *            must not pass 1
 * @headroom: a class's demand counts as demand * (1 + headroom), so a class
 *            whose demand is met is not held exactly at its measured mean
 *            and does not shed its own jitter (>= 0)
 */
struct alloc_params {
	double floor[SHEDD_NR_CLASSES];
	double headroom;
};

/* A CPU keeps borrowed tokens at most this long, and at most 1/LEASE_DIV of
 * the time the burst lasts at the class rate. */
#define ALLOC_MAX_LEASE_NS 1000000ULL
#define ALLOC_MIN_LEASE_NS 1000ULL
#define ALLOC_LEASE_DIV 16

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
 * alloc_round() - round @n non-negative reals to integers whose sum is the
 * rounded sum of the reals, so no rate is lost to truncation: each is
 * rounded down, then the missing units go one each to the entries with a
 * fraction, in index order (for classes: priority order).
 */
void alloc_round(const double *in, int n, __u64 *out);

/*
 * alloc_demand() - smoothed demand: rises at once to a new peak, decays by
 * half a tick towards a lower reading, so a flood is seen in one tick and a
 * pause of one tick does not forget it.
 */
double alloc_demand(double smoothed, double instant);

/*
 * alloc_rates() - the whole split: whole class rates from @total_rate and
 * the per-class, per-CPU demand (demand[class * ncpus + cpu], SYN/s), rounded
 * by alloc_round(), and for each class:
 *   burst = @total_burst * class share of the total, at least
 *           2 * @total_burst * floor and at least 1 token;
 *   lease = burst time / ALLOC_LEASE_DIV, within [ALLOC_MIN_LEASE_NS,
 *           ALLOC_MAX_LEASE_NS], so tokens cached on CPUs stay a small part
 *           of the burst;
 *   batch = rate * lease / (CPUs that saw the class, at least 1), at least
 *           1: together those CPUs borrow about one lease of tokens.
 * Writes rate_per_sec, burst, lease_ns and batch of out[class]; the other
 * fields are alloc_publish()'s.
 */
void alloc_rates(const struct alloc_params *p, double total_rate,
		 double total_burst, const double *demand, int ncpus,
		 struct shedd_class_rate out[SHEDD_NR_CLASSES]);

/*
 * alloc_rates_capped() - alloc_rates(), then each class's rate at most
 * @cap[class] SYN/s where that is >= 0 (conc.h: the concurrency limit's
 * rate caps; NULL: none). What a cap takes from a class goes to no other:
 * the rates then add up to less than @total_rate. A capped class's burst
 * is its rate's share of @total_burst, at least 1 (not twice its floor's
 * share): a burst would let that many connections in at once.
 */
void alloc_rates_capped(const struct alloc_params *p, double total_rate, double total_burst,
			const double *demand, int ncpus, const double *cap,
			struct shedd_class_rate out[SHEDD_NR_CLASSES]);

/*
 * alloc_publish() - turn the published record @pub of a class into @next
 * at time @now_ns. When the rate changes, changed_ns becomes @now_ns and
 * prev_rate_per_sec the mean rate from the reserve's last refill
 * (@last_refill_ns, read from the reserve) up to @now_ns, so the XDP refill,
 * which knows only one change, credits an idle reserve exactly over any
 * number of changes. Sets SHEDD_RATE_SET.
 */
void alloc_publish(struct shedd_class_rate *pub, const struct shedd_class_rate *next,
		   __u64 last_refill_ns, __u64 now_ns);

#endif /* SHEDD_ALLOC_H */
