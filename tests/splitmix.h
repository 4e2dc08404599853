/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* splitmix.h - splitmix64 (Steele, Lea, Flood 2014): a tiny seedable PRNG
 * shared by the simulation test and the testbed tools, so their runs are
 * reproducible from a seed. Not for anything but tests.
 */
#ifndef SHEDD_SPLITMIX_H
#define SHEDD_SPLITMIX_H

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

#endif /* SHEDD_SPLITMIX_H */
