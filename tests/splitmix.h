/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* splitmix.h - splitmix64 (Steele, Lea, Flood 2014): a tiny seedable PRNG
 * shared by the simulations and the testbed tools, so their runs are
 * reproducible from a seed, and the draws the simulations make of it.
 * Not for anything but tests.
 */
#ifndef SHEDD_SPLITMIX_H
#define SHEDD_SPLITMIX_H

#include <math.h>
#include <stdint.h>

static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1]: never 0, so log() is finite. */
static inline double rng_unit_open(uint64_t *s)
{
	return (double)((rng_next(s) >> 11) + 1) * 0x1.0p-53;
}

/* Uniform in [0, 1). */
static inline double rng_unit(uint64_t *s)
{
	return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

/* Exponential of mean @mean_ns, at least 1 ns. */
static inline uint64_t rng_exp_ns(uint64_t *s, double mean_ns)
{
	double v = -mean_ns * log1p(-rng_unit(s));

	return v < 1 ? 1 : (uint64_t)v;
}

#endif /* SHEDD_SPLITMIX_H */
