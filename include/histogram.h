/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* histogram.h - log-linear latency histogram shared by the BPF sojourn
 * probes and the daemon: HIST_SUB buckets per power of two of microseconds,
 * so any bucket's width is at most 1/HIST_SUB of its lower bound (12.5 %),
 * and a percentile read at a bucket's midpoint is within 6.25 %.
 */
#ifndef SHEDD_HISTOGRAM_H
#define SHEDD_HISTOGRAM_H

#define HIST_SUB_BITS 3
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS 224 /* (27 powers of two + 1) * 8: up to ~67 s */
#define HIST_SHIFT 10    /* ns -> ~us (1024 ns) */

/* Index of the highest set bit of a non-zero @v (0..63), without loops. */
static inline __u32 hist_msb(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) { v >>= 32; r += 32; }
	if (v >> 16) { v >>= 16; r += 16; }
	if (v >> 8) { v >>= 8; r += 8; }
	if (v >> 4) { v >>= 4; r += 4; }
	if (v >> 2) { v >>= 2; r += 2; }
	if (v >> 1) { r += 1; }
	return r;
}

/* The bucket of @ns: values below HIST_SUB units map linearly, above them
 * (msb - HIST_SUB_BITS + 1) * HIST_SUB + the next HIST_SUB_BITS bits. */
static inline __u32 hist_bucket(__u64 ns)
{
	__u64 u = ns >> HIST_SHIFT;
	__u32 msb, idx;

	if (u < HIST_SUB)
		return (__u32)u;
	msb = hist_msb(u);
	idx = (msb - HIST_SUB_BITS + 1) * HIST_SUB +
	      (__u32)((u >> (msb - HIST_SUB_BITS)) & (HIST_SUB - 1));
	return idx < HIST_BUCKETS ? idx : HIST_BUCKETS - 1;
}

/* The smallest ns value that falls in bucket @idx. */
static inline __u64 hist_lower_ns(__u32 idx)
{
	__u32 group = idx / HIST_SUB, sub = idx % HIST_SUB;

	if (group == 0)
		return (__u64)sub << HIST_SHIFT;
	return ((__u64)(HIST_SUB + sub) << (group - 1)) << HIST_SHIFT;
}

/* The @q quantile (0..1) of @n buckets of counts @hist holding @total
 * samples, read at the middle of its bucket; 0 when empty. */
static inline __u64 hist_quantile(const __u64 *hist, __u32 n, __u64 total, double q)
{
	__u64 rank, seen = 0;
	__u32 i;

	if (!total)
		return 0;
	rank = (__u64)(q * (double)total);
	if (rank >= total)
		rank = total - 1;
	for (i = 0; i < n; i++) {
		seen += hist[i];
		if (seen > rank)
			return (hist_lower_ns(i) + hist_lower_ns(i + 1)) / 2;
	}
	return hist_lower_ns(n);
}

#endif /* SHEDD_HISTOGRAM_H */
