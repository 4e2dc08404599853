/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* lease.h - the daemon's lease on its rates, compiled by the XDP program
 * (bpf/shedd.bpf.c, when a CPU borrows from a reserve) and by the tests,
 * so both agree by construction. The map's record is struct shedd_lease
 * (include/shedd.h); this is the law that reads it for one class.
 */
#ifndef SHEDD_LEASE_H
#define SHEDD_LEASE_H

#include "shedd.h"

/* The climb is computed in units of 2^20 ns (about 1 ms), so the product
 * below stays in 64 bits: 1e7 SYN/s * 2^32 units < 2^56. */
#define LEASE_UNIT_SHIFT 20
#define LEASE_MAX_UNITS 0xffffffffULL

/* When the lease of @l runs out: never (0) with no lease, no heartbeat yet,
 * or a rate an operator pinned (SHEDD_LEASE_PINNED): those hold their rates
 * as written. */
static __always_inline __u64 lease_expiry(const struct shedd_lease *l)
{
	if (!l->lease_ns || !l->heartbeat_ns || (l->flags & SHEDD_LEASE_PINNED))
		return 0;
	return l->heartbeat_ns + l->lease_ns;
}

/* Has the daemon let its lease run out at @now? */
static __always_inline int lease_expired(const struct shedd_lease *l, __u64 now)
{
	__u64 e = lease_expiry(l);

	return e && now > e;
}

/**
 * lease_relax() - the rate record a class runs at under the lease.
 * @r:   the class's record as the daemon wrote it; changed in place
 * @l:   the lease record (the program holds its lock: no calls here)
 * @cls: the class, in range
 * @now: CLOCK_MONOTONIC, as the heartbeat
 *
 * Law, once the lease ran out at e = heartbeat + lease: with f the class's
 * fail-static rate and r0 its last rate,
 *   rate(t) = r0 + (f - r0) * min(1, (t - e) / relax)   when f > r0,
 *   rate(t) = r0                                        otherwise;
 * the burst climbs the same way to the fail-static burst and never below
 * the last one. So the limit never falls (a daemon that admitted more than
 * the fail-static rate had measured that it fits), never reaches zero (f is
 * at least 1), climbs rather than jumps (a service handed its full traffic
 * at once goes straight back down), and is the last rate exactly until the
 * lease ends.
 */
static __always_inline void lease_relax(struct shedd_class_rate *r, const struct shedd_lease *l,
					__u32 cls, __u64 now)
{
	__u64 e = lease_expiry(l), rate, burst, since, span;

	if (!e || now <= e || cls >= SHEDD_NR_CLASSES)
		return;
	rate = l->fail_rate_per_sec[cls];
	burst = l->fail_burst[cls];
	if (rate > MAX_RATE_PER_SEC)
		rate = MAX_RATE_PER_SEC;
	if (burst > MAX_BURST)
		burst = MAX_BURST;
	if (rate <= r->rate_per_sec)
		return;
	since = (now - e) >> LEASE_UNIT_SHIFT;
	span = l->relax_ns >> LEASE_UNIT_SHIFT;
	if (span > LEASE_MAX_UNITS)
		span = LEASE_MAX_UNITS;
	if (since < span) {
		rate = r->rate_per_sec + (rate - r->rate_per_sec) * since / span;
		burst = burst > r->burst ? r->burst + (burst - r->burst) * since / span : r->burst;
	}
	r->rate_per_sec = rate;
	if (burst > r->burst)
		r->burst = burst;
}

#endif /* SHEDD_LEASE_H */
