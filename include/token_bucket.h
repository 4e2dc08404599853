/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* token_bucket.h - the token-bucket arithmetic, compiled by the XDP program
 * and by the userspace unit tests, so both agree by construction.
 * Fixed point: one token is SHEDD_NSEC_PER_SEC units; no division.
 */
#ifndef TOKEN_BUCKET_H
#define TOKEN_BUCKET_H

#include "shedd.h"

/**
 * tb_charge() - refill @b for the time since its last refill, then try to
 * take one token.
 * @b:      bucket state of this class on this CPU (written here only)
 * @r:      rate and depth of this class on this CPU (read only)
 * @now_ns: current time in nanoseconds
 *
 * Refill law: tokens = min(tokens + elapsed_ns * rate_per_sec, cap), where
 * cap = burst * 1e9 + (1e9 - 1): a full bucket admits @burst SYNs and keeps
 * the fraction of the next token, so a saturated bucket admits exactly
 * rate_per_sec per second instead of losing a fraction at every token.
 * rate_per_sec is clamped to MAX_RATE_PER_SEC; a bucket idle for
 * MAX_REFILL_NS or more (or a fresh one, last_ns == 0) with a non-zero rate
 * holds exactly @burst tokens, so the product elapsed_ns * rate_per_sec always fits in 64 bits.
 * Time that runs backwards refills nothing.
 *
 * Return: 1 if a token was taken (admit), 0 if the bucket is empty (shed).
 */
static inline int tb_charge(struct shedd_bucket *b, const struct shedd_rate *r,
			    __u64 now_ns)
{
	__u64 rate = r->rate_per_sec;
	__u64 burst = r->burst;
	__u64 elapsed = 0;
	__u64 cap;

	if (rate > MAX_RATE_PER_SEC)
		rate = MAX_RATE_PER_SEC;
	if (burst > MAX_BURST)
		burst = MAX_BURST;
	/* A bucket can never hold less than one token, or it admits nothing
	 * at any rate below one per tick. */
	if (burst == 0)
		burst = 1;
	cap = burst * SHEDD_NSEC_PER_SEC + (SHEDD_NSEC_PER_SEC - 1);

	if (now_ns > b->last_ns)
		elapsed = now_ns - b->last_ns;
	/* A fresh bucket (never refilled) or one idle for MAX_REFILL_NS is full,
	 * unless its rate is 0: a zero rate never adds a token. Time 0 is never
	 * a fresh bucket's first stamp: nothing refills there. */
	if (rate && ((b->last_ns == 0 && now_ns > 0) || elapsed >= MAX_REFILL_NS)) {
		b->tokens = burst * SHEDD_NSEC_PER_SEC;
	} else {
		b->tokens += elapsed * rate;
		if (b->tokens > cap)
			b->tokens = cap;
	}
	if (now_ns > b->last_ns)
		b->last_ns = now_ns;

	if (b->tokens < SHEDD_NSEC_PER_SEC)
		return 0;
	b->tokens -= SHEDD_NSEC_PER_SEC;
	return 1;
}

#endif /* TOKEN_BUCKET_H */
