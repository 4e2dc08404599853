// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_bucket.c - the token-bucket arithmetic of include/token_bucket.h, the
 * same code the XDP program runs, driven by a simulated clock.
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

/* Offer @n SYNs at time @t; return how many were admitted. */
static int offer(struct shedd_bucket *b, const struct shedd_rate *r, __u64 t, int n)
{
	int admitted = 0;

	while (n--)
		admitted += tb_charge(b, r, t);
	return admitted;
}

static void fresh_bucket_starts_full(void **state)
{
	struct shedd_bucket b = { 0 };
	struct shedd_rate r = { .rate_per_sec = 10, .burst = 5 };

	assert_int_equal(offer(&b, &r, T0, 100), 5);
}

static void refill_is_exact(void **state)
{
	struct shedd_bucket b = { 0 };
	struct shedd_rate r = { .rate_per_sec = 10, .burst = 5 };

	assert_int_equal(offer(&b, &r, T0, 5), 5);
	/* 99 ms at 10/s is 0.99 of a token: nothing yet. */
	assert_int_equal(offer(&b, &r, T0 + 99 * MS, 3), 0);
	/* At 100 ms the fraction completes one token. */
	assert_int_equal(offer(&b, &r, T0 + 100 * MS, 3), 1);
	/* One second more refills 10 tokens, capped at the burst of 5. */
	assert_int_equal(offer(&b, &r, T0 + 1100 * MS, 100), 5);
}

static void fractions_carry_over(void **state)
{
	struct shedd_bucket b = { 0 };
	struct shedd_rate r = { .rate_per_sec = 3, .burst = 1 };
	int admitted = 0;
	__u64 t;

	assert_int_equal(offer(&b, &r, T0, 1), 1);
	/* 10 s of one SYN per ms at 3/s admits exactly 30. */
	for (t = T0 + MS; t <= T0 + 10 * SEC; t += MS)
		admitted += tb_charge(&b, &r, t);
	assert_int_equal(admitted, 30);
}

static void sustained_rate_matches(void **state)
{
	struct shedd_bucket b = { 0 };
	struct shedd_rate r = { .rate_per_sec = 1000, .burst = 10 };
	__u64 t;
	int admitted;

	admitted = offer(&b, &r, T0, 10);
	/* Offered 5000/s (one every 200 us) for 2 s: 1000/s pass. */
	for (t = T0 + 200000; t <= T0 + 2 * SEC; t += 200000)
		admitted += tb_charge(&b, &r, t);
	assert_int_equal(admitted, 10 + 2000);
}

static void zero_rate_admits_nothing_new(void **state)
{
	struct shedd_bucket b = { 0 };
	struct shedd_rate r = { .rate_per_sec = 0, .burst = 0 };

	assert_int_equal(offer(&b, &r, T0, 10), 0);
	assert_int_equal(offer(&b, &r, T0 + 100 * SEC, 10), 0);
}

static void time_backwards_refills_nothing(void **state)
{
	struct shedd_bucket b = { 0 };
	struct shedd_rate r = { .rate_per_sec = 10, .burst = 2 };

	assert_int_equal(offer(&b, &r, T0, 2), 2);
	assert_int_equal(offer(&b, &r, T0 - SEC, 2), 0);
	/* The later stamp is kept: going back did not move last_ns. */
	assert_int_equal(b.last_ns, T0);
	assert_int_equal(offer(&b, &r, T0 + 100 * MS, 2), 1);
}

static void rate_change_keeps_tokens(void **state)
{
	struct shedd_bucket b = { 0 };
	struct shedd_rate r = { .rate_per_sec = 100, .burst = 50 };

	assert_int_equal(offer(&b, &r, T0, 40), 40); /* 10 left */
	r.rate_per_sec = 1;
	r.burst = 50;
	assert_int_equal(offer(&b, &r, T0, 100), 10);
	/* A lower burst caps what is left at the next refill. */
	b.tokens = 0;
	assert_int_equal(offer(&b, &r, T0 + 30 * SEC, 100), 30);
	r.burst = 3;
	assert_int_equal(offer(&b, &r, T0 + 100 * SEC, 100), 3);
}

static void extremes_do_not_overflow(void **state)
{
	struct shedd_bucket b = { 0 };
	struct shedd_rate r = { .rate_per_sec = ~0ULL, .burst = ~0ULL };

	/* Clamped to MAX_RATE_PER_SEC and MAX_BURST: a full bucket after
	 * the longest idle, never a wrapped one. */
	assert_int_equal(offer(&b, &r, ~0ULL, 1), 1);
	assert_int_equal(b.tokens, (MAX_BURST - 1) * SHEDD_NSEC_PER_SEC);
	/* A full bucket keeps the fraction of its next token. */
	b.last_ns = 1000;
	b.tokens = 0;
	r.rate_per_sec = 3;
	r.burst = 1;
	assert_int_equal(offer(&b, &r, 1000 + 500 * MS, 1), 1);
	assert_int_equal(b.tokens, 500000000ULL);
	assert_int_equal(offer(&b, &r, 1000 + 1500 * MS, 1), 1);
	assert_int_equal(b.tokens, SHEDD_NSEC_PER_SEC - 1);
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
	};

	return cmocka_run_group_tests_name("bucket", tests, NULL, NULL);
}
