/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* token_bucket.h - admission arithmetic, compiled by the XDP program and by
 * the userspace tests and simulations, so both agree by construction.
 * Fixed point: one token is SHEDD_NSEC_PER_SEC units; no division on the
 * path that admits or sheds from a CPU's own cache.
 *
 * Design. A class has ONE bucket, the reserve, refilled at the class rate
 * and shared by every CPU, so what the class admits does not depend on how
 * RSS spreads its SYNs (evenly, skewed, all on one CPU, moving every tick).
 * Touching shared memory on every SYN would make 128 CPUs fight over one
 * cache line, so each CPU borrows tokens into a per-CPU cache and spends
 * them without a lock:
 *   - a borrowed token is good for r->lease_ns. A CPU that comes back
 *     within one more lease returns its stale tokens to the reserve (capped
 *     at the burst); older ones are dropped. So in any window W a class
 *     admits at most burst + rate * (W + 2 * lease): the burst is --burst,
 *     whatever the number of CPUs, and a CPU that sees the class often
 *     wastes nothing;
 *   - a CPU borrows 1 token, then twice as many each time it spent its
 *     batch within the lease, up to r->batch, and half as many after a
 *     batch went stale: a busy CPU takes the lock once per many SYNs, a
 *     quiet one borrows one at a time and wastes nothing;
 *   - a CPU that found the reserve empty sheds without asking it again for
 *     r->lease_ns, so a flood costs no shared write per SYN;
 *   - the reserve refills piecewise across a rate change: from its last
 *     refill to r->changed_ns at r->prev_rate_per_sec (userspace sets it to
 *     the mean rate of that span), then at r->rate_per_sec, so a rate that
 *     changes while a class is idle neither loses nor invents tokens.
 * Userspace keeps lease_ns * rate_per_sec a small part of the burst.
 */
#ifndef TOKEN_BUCKET_H
#define TOKEN_BUCKET_H

#include "shedd.h"
#include "lease.h"

/* The XDP program serialises each reserve and each rate record with
 * bpf_spin_lock. Userspace callers (tests, simulations) run the CPUs of a
 * simulation one at a time and need no lock. */
#ifdef __bpf__
#define TB_LOCK(l) bpf_spin_lock(l)
#define TB_UNLOCK(l) bpf_spin_unlock(l)
#else
#define TB_LOCK(l) ((void)(l))
#define TB_UNLOCK(l) ((void)(l))
#endif

/**
 * tb_refill() - bring a reserve up to @now.
 * @s:   the reserve of one class (under its lock)
 * @r:   the class's rate record
 * @now: current time in nanoseconds
 *
 * Refill law: tokens = min(tokens + credit, cap) where credit is
 * (changed_ns - last_ns) * prev_rate + (now - changed_ns) * rate when the
 * rate changed since the last refill, else (now - last_ns) * rate, and
 * cap = burst * 1e9 + (1e9 - 1): a full reserve admits @burst SYNs and
 * keeps the fraction of the next token, so a saturated class admits exactly
 * rate_per_sec per second. A fresh reserve (last_ns == 0) or one idle for
 * MAX_REFILL_NS holds exactly @burst tokens, unless its rate is 0. Rates
 * are clamped to MAX_RATE_PER_SEC, so every product fits in 64 bits. Time
 * that runs backwards refills nothing.
 */
static inline void tb_refill(struct shedd_reserve_state *s, const struct shedd_class_rate *r,
			     __u64 now)
{
	__u64 rate = r->rate_per_sec, prev = r->prev_rate_per_sec;
	__u64 burst = r->burst, cap, elapsed = 0;

	if (rate > MAX_RATE_PER_SEC)
		rate = MAX_RATE_PER_SEC;
	if (prev > MAX_RATE_PER_SEC)
		prev = MAX_RATE_PER_SEC;
	if (burst > MAX_BURST)
		burst = MAX_BURST;
	/* A bucket can never hold less than one token, or it admits nothing
	 * at any rate below one per lease. */
	if (burst == 0)
		burst = 1;
	cap = burst * SHEDD_NSEC_PER_SEC + (SHEDD_NSEC_PER_SEC - 1);

	if (now > s->last_ns)
		elapsed = now - s->last_ns;
	if (rate && ((s->last_ns == 0 && now > 0) || elapsed >= MAX_REFILL_NS)) {
		s->tokens = burst * SHEDD_NSEC_PER_SEC;
	} else if (elapsed) {
		__u64 credit;

		if (s->last_ns < r->changed_ns) {
			__u64 mid = r->changed_ns < now ? r->changed_ns : now;

			credit = (mid - s->last_ns) * prev + (now - mid) * rate;
		} else {
			credit = elapsed * rate;
		}
		s->tokens += credit;
	}
	if (s->tokens > cap)
		s->tokens = cap;
	if (now > s->last_ns)
		s->last_ns = now;
}

/* tb_take() - take up to @want whole tokens from a refilled reserve. */
static inline __u64 tb_take(struct shedd_reserve_state *s, __u64 want)
{
	__u64 got = want;

	if (s->tokens < want * SHEDD_NSEC_PER_SEC)
		got = s->tokens / SHEDD_NSEC_PER_SEC;
	s->tokens -= got * SHEDD_NSEC_PER_SEC;
	return got;
}

/* tb_give_back() - return @n stale tokens to a reserve, up to its cap. */
static inline void tb_give_back(struct shedd_reserve_state *s, const struct shedd_class_rate *r,
				__u64 n)
{
	__u64 burst = r->burst > MAX_BURST ? MAX_BURST : (r->burst ? r->burst : 1);
	__u64 cap = burst * SHEDD_NSEC_PER_SEC + (SHEDD_NSEC_PER_SEC - 1);

	if (n > MAX_BATCH)
		n = MAX_BATCH;
	s->tokens += n * SHEDD_NSEC_PER_SEC;
	if (s->tokens > cap)
		s->tokens = cap;
}

/**
 * tb_cached() - the lock-free part of judging a SYN on the current CPU.
 * @b:      this CPU's cache for the class (per-CPU: no lock)
 * @now_ns: current time in nanoseconds
 *
 * Return: 1 to admit (a good cached token), 0 to shed (the reserve was
 * found empty less than a lease ago), -1 to ask the reserve (tb_borrow()).
 */
static __always_inline int tb_cached(struct shedd_bucket *b, __u64 now_ns)
{
	if (b->tokens && now_ns < b->until_ns) {
		b->tokens--;
		return 1;
	}
	if (now_ns < b->retry_ns)
		return 0;
	return -1;
}

/**
 * tb_borrow_rate() - refill the class's reserve under its lock and borrow
 * the CPU's next batch from it; spend one token of it on this SYN.
 * @b:      this CPU's cache for the class (per-CPU: no lock)
 * @r:      a copy of the class's rate record, taken under its lock
 * @res:    the class's reserve (updated under its lock)
 * @now_ns: current time in nanoseconds
 *
 * Return: 1 to admit, 0 to shed. A class whose rate was never written
 * admits (the program fails open before it is configured).
 */
static __always_inline int tb_borrow_rate(struct shedd_bucket *b,
					  const struct shedd_class_rate *r,
					  struct shedd_reserve *res, __u64 now_ns)
{
	__u64 want, got;

	if (!(r->flags & SHEDD_RATE_SET))
		return 1;

	want = b->batch;
	if (b->tokens)
		want >>= 1;   /* the last batch went stale */
	else if (now_ns < b->until_ns)
		want <<= 1;   /* spent within its lease */
	if (want > r->batch)
		want = r->batch;
	if (want > MAX_BATCH)
		want = MAX_BATCH;
	if (want < 1)
		want = 1;

	TB_LOCK(&res->lock);
	tb_refill(&res->s, r, now_ns);
	if (b->tokens && now_ns - b->until_ns < r->lease_ns)
		tb_give_back(&res->s, r, b->tokens);
	got = tb_take(&res->s, want);
	TB_UNLOCK(&res->lock);

	b->batch = (__u32)want;
	if (!got) {
		b->tokens = 0;
		b->retry_ns = now_ns + r->lease_ns;
		return 0;
	}
	b->tokens = got - 1;
	b->until_ns = now_ns + r->lease_ns;
	return 1;
}

/**
 * tb_borrow_leased() - tb_borrow_rate() with the record read under its
 * lock, relaxed by the daemon's lease @l (lease.h) once it ran out; @l
 * NULL: the record as written.
 */
static __always_inline int tb_borrow_leased(struct shedd_bucket *b, struct shedd_rate *rv,
					    struct shedd_reserve *res,
					    const struct shedd_lease *l, __u32 cls, __u64 now_ns)
{
	struct shedd_class_rate r;

	TB_LOCK(&rv->lock);
	r = rv->r;
	TB_UNLOCK(&rv->lock);
	if (l)
		lease_relax(&r, l, cls, now_ns);
	return tb_borrow_rate(b, &r, res, now_ns);
}

/* tb_borrow() - tb_borrow_leased() without a lease: the rates as written. */
static __always_inline int tb_borrow(struct shedd_bucket *b, struct shedd_rate *rv,
				     struct shedd_reserve *res, __u64 now_ns)
{
	return tb_borrow_leased(b, rv, res, NULL, 0, now_ns);
}

/* tb_charge_at() - judge one SYN of a class on the current CPU with the
 * XDP program's two clocks: the cache by @coarse_ns, the clock as of the
 * kernel's last tick (at most @now_ns, less than a tick behind it), the
 * reserve by @now_ns. 1 admit, 0 shed. The XDP program calls the two
 * halves itself, so that it looks up the shared maps, and reads the fine
 * clock, only when it borrows. */
static inline int tb_charge_at(struct shedd_bucket *b, struct shedd_rate *rv,
			       struct shedd_reserve *res, __u64 coarse_ns, __u64 now_ns)
{
	int v = tb_cached(b, coarse_ns);

	return v >= 0 ? v : tb_borrow(b, rv, res, now_ns);
}

/* tb_charge() - tb_charge_at() with one clock. */
static inline int tb_charge(struct shedd_bucket *b, struct shedd_rate *rv,
			    struct shedd_reserve *res, __u64 now_ns)
{
	return tb_charge_at(b, rv, res, now_ns, now_ns);
}

#endif /* TOKEN_BUCKET_H */
