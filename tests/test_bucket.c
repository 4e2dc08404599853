// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_bucket.c - the admission arithmetic of include/token_bucket.h, the
 * same code the XDP program runs, driven by a simulated clock: the reserve
 * alone (batch 1, no lease), then CPU caches, leases and rate changes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <linux/types.h>

#include "token_bucket.h"

#define MS 1000000ULL
#define SEC 1000000000ULL
#define T0 (5 * SEC)

/* One class seen by one CPU: its cache, rate record and reserve. */
struct cls1 {
	struct shedd_bucket b;
	struct shedd_rate r;
	struct shedd_reserve res;
};

#define CLS(rate, depth)                                                       \
	{ .r = { .r = { .rate_per_sec = (rate), .burst = (depth), .batch = 1,   \
			.flags = SHEDD_RATE_SET } } }

static int charge(struct cls1 *c, __u64 t)
{
	return tb_charge(&c->b, &c->r, &c->res, t);
}

/* Offer @n SYNs at time @t; return how many were admitted. */
static int offer(struct cls1 *c, __u64 t, int n)
{
	int admitted = 0;

	while (n--)
		admitted += charge(c, t);
	return admitted;
}

static void fresh_bucket_starts_full(void **state)
{
	struct cls1 c = CLS(10, 5);

	assert_int_equal(offer(&c, T0, 100), 5);
}

static void refill_is_exact(void **state)
{
	struct cls1 c = CLS(10, 5);

	assert_int_equal(offer(&c, T0, 5), 5);
	/* 99 ms at 10/s is 0.99 of a token: nothing yet. */
	assert_int_equal(offer(&c, T0 + 99 * MS, 3), 0);
	/* At 100 ms the fraction completes one token. */
	assert_int_equal(offer(&c, T0 + 100 * MS, 3), 1);
	/* One second more refills 10 tokens, capped at the burst of 5. */
	assert_int_equal(offer(&c, T0 + 1100 * MS, 100), 5);
}

static void fractions_carry_over(void **state)
{
	struct cls1 c = CLS(3, 1);
	int admitted = 0;
	__u64 t;

	assert_int_equal(offer(&c, T0, 1), 1);
	/* 10 s of one SYN per ms at 3/s admits exactly 30. */
	for (t = T0 + MS; t <= T0 + 10 * SEC; t += MS)
		admitted += charge(&c, t);
	assert_int_equal(admitted, 30);
}

static void sustained_rate_matches(void **state)
{
	struct cls1 c = CLS(1000, 10);
	__u64 t;
	int admitted;

	admitted = offer(&c, T0, 10);
	/* Offered 5000/s (one every 200 us) for 2 s: 1000/s pass. */
	for (t = T0 + 200000; t <= T0 + 2 * SEC; t += 200000)
		admitted += charge(&c, t);
	assert_int_equal(admitted, 10 + 2000);
}

static void zero_rate_admits_nothing_new(void **state)
{
	struct cls1 c = CLS(0, 0);

	assert_int_equal(offer(&c, T0, 10), 0);
	assert_int_equal(offer(&c, T0 + 100 * SEC, 10), 0);
}

static void time_backwards_refills_nothing(void **state)
{
	struct cls1 c = CLS(10, 2);

	assert_int_equal(offer(&c, T0, 2), 2);
	assert_int_equal(offer(&c, T0 - SEC, 2), 0);
	/* The later stamp is kept: going back did not move last_ns. */
	assert_int_equal(c.res.s.last_ns, T0);
	assert_int_equal(offer(&c, T0 + 100 * MS, 2), 1);
}

static void rate_change_keeps_tokens(void **state)
{
	struct cls1 c = CLS(100, 50);

	assert_int_equal(offer(&c, T0, 40), 40); /* 10 left */
	c.r.r.rate_per_sec = 1;
	c.r.r.burst = 50;
	assert_int_equal(offer(&c, T0, 100), 10);
	/* A lower burst caps what is left at the next refill. */
	c.res.s.tokens = 0;
	assert_int_equal(offer(&c, T0 + 30 * SEC, 100), 30);
	c.r.r.burst = 3;
	assert_int_equal(offer(&c, T0 + 100 * SEC, 100), 3);
}

static void extremes_do_not_overflow(void **state)
{
	struct cls1 c = CLS(~0ULL, ~0ULL);

	/* Clamped to MAX_RATE_PER_SEC and MAX_BURST: a full bucket after
	 * the longest idle, never a wrapped one. */
	assert_int_equal(offer(&c, ~0ULL, 1), 1);
	assert_int_equal(c.res.s.tokens, (MAX_BURST - 1) * SHEDD_NSEC_PER_SEC);
	/* A full bucket keeps the fraction of its next token. */
	c.res.s.last_ns = 1000;
	c.res.s.tokens = 0;
	c.b = (struct shedd_bucket){ 0 };
	c.r.r.rate_per_sec = 3;
	c.r.r.burst = 1;
	assert_int_equal(offer(&c, 1000 + 500 * MS, 1), 1);
	assert_int_equal(c.res.s.tokens, 500000000ULL);
	assert_int_equal(offer(&c, 1000 + 1500 * MS, 1), 1);
	assert_int_equal(c.res.s.tokens, SHEDD_NSEC_PER_SEC - 1);
}

/* Two CPUs of one class share its reserve: whatever the spread, the class
 * admits its rate, not each CPU its share. */
static void cpus_share_the_class_rate(void **state)
{
	struct shedd_bucket cpu[2] = { { 0 } };
	struct cls1 c = CLS(1000, 10);
	int admitted = 0, i = 0;
	__u64 t;

	c.r.r.batch = 4;
	c.r.r.lease_ns = 1 * MS;
	/* 10 000/s offered for 2 s; every 10th SYN on CPU 1, the rest on 0. */
	for (t = T0; t < T0 + 2 * SEC; t += 100000, i++)
		admitted += tb_charge(&cpu[i % 10 == 0], &c.r, &c.res, t);
	/* burst + 2 s at 1000/s, less what sits in the caches at the end. */
	assert_in_range(admitted, 2000 + 10 - 20, 2000 + 10);
}

/* Tokens a CPU cached and did not spend are dropped when the lease ends,
 * so a burst after a pause is the burst, not burst + every CPU's cache. */
static void lease_keeps_the_burst(void **state)
{
	struct shedd_bucket cpu[8] = { { 0 } };
	struct cls1 c = CLS(100, 20);
	int admitted = 0, i;

	c.r.r.batch = 5;
	c.r.r.lease_ns = 1 * MS;
	/* Each CPU borrows 1, then 2 and keeps one: 3 tokens a CPU until the
	 * 20 run out (the seventh gets 1 + 1, the eighth nothing). */
	for (i = 0; i < 16; i++)
		admitted += tb_charge(&cpu[i / 2], &c.r, &c.res, T0);
	assert_int_equal(admitted, 14);
	assert_int_equal(cpu[0].tokens, 1);
	/* 10 s later: full again; the 6 cached tokens are stale. */
	admitted = 0;
	for (i = 0; i < 8 * 100; i++)
		admitted += tb_charge(&cpu[i % 8], &c.r, &c.res, T0 + 10 * SEC);
	assert_int_equal(admitted, 20);
}

/* The batch grows while a CPU spends it within its lease, up to the
 * class's batch, and shrinks after it went stale. */
static void batch_adapts(void **state)
{
	struct cls1 c = CLS(1000, 100);
	int i;

	c.r.r.batch = 10;
	c.r.r.lease_ns = 1 * MS;
	for (i = 0; i < 16; i++)
		assert_int_equal(charge(&c, T0), 1);
	/* 1 + 2 + 4 + 8 + 10 borrowed: 9 cached, 75 in the reserve. */
	assert_int_equal(c.b.batch, 10);
	assert_int_equal(c.b.tokens, 9);
	assert_int_equal(c.res.s.tokens, 75 * SHEDD_NSEC_PER_SEC);
	/* Stale after 2 ms: dropped; 2 ms refilled 2; the next batch is 5. */
	assert_int_equal(charge(&c, T0 + 2 * MS), 1);
	assert_int_equal(c.b.batch, 5);
	assert_int_equal(c.b.tokens, 4);
	assert_int_equal(c.res.s.tokens, 72 * SHEDD_NSEC_PER_SEC);
}

/* A rate change while the class is idle: the reserve is credited the old
 * rate up to the change and the new one after it. */
static void idle_rate_change_is_piecewise(void **state)
{
	struct cls1 c = CLS(10, 1000);

	assert_int_equal(offer(&c, T0, 1000), 1000);
	c.r.r.prev_rate_per_sec = 10;
	c.r.r.rate_per_sec = 0;
	c.r.r.changed_ns = T0 + 2 * SEC;
	/* 2 s at 10/s, then nothing: 20 tokens whenever it is asked. */
	assert_int_equal(offer(&c, T0 + 50 * SEC, 100), 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fresh_bucket_starts_full),
		cmocka_unit_test(refill_is_exact),
		cmocka_unit_test(fractions_carry_over),
		cmocka_unit_test(sustained_rate_matches),
		cmocka_unit_test(zero_rate_admits_nothing_new),
		cmocka_unit_test(time_backwards_refills_nothing),
		cmocka_unit_test(rate_change_keeps_tokens),
		cmocka_unit_test(extremes_do_not_overflow),
		cmocka_unit_test(cpus_share_the_class_rate),
		cmocka_unit_test(lease_keeps_the_burst),
		cmocka_unit_test(batch_adapts),
		cmocka_unit_test(idle_rate_change_is_piecewise),
	};

	return cmocka_run_group_tests_name("bucket", tests, NULL, NULL);
}
