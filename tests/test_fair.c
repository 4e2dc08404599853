// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_fair.c - per-source fairness, the pure side: a cell's sliding
 * window (include/fair_sketch.h), the count-min sketch's error measured on
 * uniform, Zipf-like and heavy-hitter workloads against its stated bound,
 * the levels and their hashes, and the daemon's side (user/core/fair.c): sources
 * by linear counting, the noise floor, the limit, the heavy hitters, the
 * levels' syntax.
 * The sketch cases print what they measured as TAP comments.
 */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>
#include <linux/types.h>

#include "fair.h"
#include "fair_sketch.h"
#include "splitmix.h"

#define W FAIR_WINDOW_NS
#define SEC 1000000000ULL

/* A fixed flow key: the cases are the same on every run. */
static struct sip_state key_state(__u64 k0, __u64 k1)
{
	struct sip_state s;

	sip_init(&s, k0, k1);
	return s;
}

static struct shedd_fair_cell *new_sketch(void)
{
	struct shedd_fair_cell *c = calloc(FAIR_CELLS, sizeof(*c));

	assert_non_null(c);
	return c;
}

/* The words of the IPv4 address @s as they lie in a packet. */
static __u32 v4(const char *s)
{
	struct in_addr a;

	assert_int_equal(inet_pton(AF_INET, s, &a), 1);
	return a.s_addr;
}

static void v6(const char *s, __u32 w[4])
{
	assert_int_equal(inet_pton(AF_INET6, s, w), 1);
}

/* --- one cell ------------------------------------------------------------ */

/* One admission into the cell @c alone, as fair_cells_raise() makes it
 * into the least of a source's cells; its estimate before. */
static __u32 cell_count(struct shedd_fair_cell *c, __u64 now)
{
	__u32 est = fair_cell_estimate(c, now);

	fair_cell_turn(c, now);
	c->cur++;
	return est;
}

/* Admissions of one window read whole in it, then fall off linearly over
 * the next one: at 0, 1/4, 1/2 and 3/4 of it, 100 %, 75 %, 50 %, 25 %. */
static void test_cell_window(void **state)
{
	const __u64 t0 = 7 * W + W / 8; /* inside window 7 */
	static const struct {
		__u64 at;     /* from the start of window 8 */
		__u32 expect; /* of 1000 admissions in window 7 */
	} table[] = {
		{ 0, 1000 }, { W / 4, 750 }, { W / 2, 500 }, { 3 * W / 4, 250 }, { W - 1, 0 },
	};
	struct shedd_fair_cell c;
	size_t i;
	int k;

	memset(&c, 0, sizeof(c));
	for (k = 0; k < 1000; k++)
		assert_int_equal(cell_count(&c, t0 + (__u64)k), (__u32)k);
	assert_int_equal(c.epoch, 7);
	/* Within its own window the count reads whole, at any point. */
	assert_int_equal(fair_cell_estimate(&c, t0 + 1000), 1000);
	assert_int_equal(fair_cell_estimate(&c, 8 * W - 1), 1000);
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		__u32 e = fair_cell_estimate(&c, 8 * W + table[i].at);

		if (e != table[i].expect)
			fail_msg("at %llu ns into the next window: %u, not %u",
				 (unsigned long long)table[i].at, e, table[i].expect);
	}
	/* Untouched for two windows: 0, and counting again starts from 0. */
	assert_int_equal(fair_cell_estimate(&c, 9 * W), 0);
	assert_int_equal(fair_cell_estimate(&c, 100 * W + 5), 0);
	assert_int_equal(cell_count(&c, 9 * W + 3), 0);
	assert_int_equal(c.prev, 0);
	assert_int_equal(c.cur, 1);
	assert_int_equal(fair_cell_estimate(&c, 9 * W + 4), 1);
}

/* Two windows in use: cur + prev * (1 - f). */
static void test_cell_sliding(void **state)
{
	static const struct {
		__u64 at; /* into window 1 */
		__u32 expect;
	} table[] = {
		{ 0, 400 + 800 }, { W / 4, 400 + 600 }, { W / 2, 400 + 400 },
		{ 3 * W / 4, 400 + 200 },
	};
	struct shedd_fair_cell c;
	size_t i;
	int k;

	memset(&c, 0, sizeof(c));
	for (k = 0; k < 800; k++)
		cell_count(&c, W / 2);
	for (k = 0; k < 400; k++)
		cell_count(&c, W + 1);
	assert_int_equal(c.epoch, 1);
	assert_int_equal(c.prev, 800);
	assert_int_equal(c.cur, 400);
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		assert_int_equal(fair_cell_estimate(&c, W + table[i].at), table[i].expect);
	/* One more window on: only the 400 are left, falling off. */
	assert_int_equal(fair_cell_estimate(&c, 2 * W), 400);
	assert_int_equal(fair_cell_estimate(&c, 2 * W + W / 2), 200);
	/* A count in window 2 moves the 400 into prev. */
	assert_int_equal(cell_count(&c, 2 * W + W / 2), 200);
	assert_int_equal(c.prev, 400);
	assert_int_equal(c.cur, 1);
	assert_int_equal(fair_cell_estimate(&c, 2 * W + W / 2), 201);
}

/* The window number is kept in 32 bits: across its wrap, the window
 * before still reads as the window before. */
static void test_cell_epoch_wrap(void **state)
{
	const __u64 last = ((__u64)0xffffffffU << FAIR_WINDOW_SHIFT) + 5;
	struct shedd_fair_cell c;
	int k;

	memset(&c, 0, sizeof(c));
	for (k = 0; k < 100; k++)
		cell_count(&c, last);
	assert_int_equal(c.epoch, 0xffffffffU);
	assert_int_equal(fair_cell_estimate(&c, last + W - 5 + W / 2), 50);
	assert_int_equal(fair_cell_estimate(&c, last + 2 * W), 0);
}

/* --- the count-min sketch's error ---------------------------------------- */

struct workload {
	const char *name;
	int nsrc;
	__u32 *count; /* true admissions of source i */
};

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

/* Source i of a workload: 198.18.0.0/15, one address each. */
static __u32 src_addr(int i)
{
	return htonl(0xc6120000U + (__u32)i * 7U);
}

/* Count every admission of @w into level 0 of class 3 at one instant,
 * then compare each source's estimate with its truth: never below; above
 * by more than e/FAIR_COLS of the total for at most e^-FAIR_ROWS of the
 * sources (the bound holds for each source with that probability; a few
 * percent more are allowed for the sampling of a few thousand). Prints the
 * measured overestimate. */
static void measure(const struct workload *w)
{
	struct shedd_fair_cell *cells = new_sketch();
	struct sip_state ks = key_state(0x0123456789abcdefULL, 0xfedcba9876543210ULL);
	const __u64 now = 42 * W + W / 3;
	__u32 *over = calloc((size_t)w->nsrc, sizeof(*over));
	__u64 total = 0, sum = 0, sum_row0 = 0;
	double bound, mean, mean_row0, frac;
	int i, beyond = 0;
	__u32 k;

	assert_non_null(over);
	for (i = 0; i < w->nsrc; i++) {
		__u32 a = src_addr(i);
		__u64 h = fair_hash(&ks, &a, 4, 0);

		for (k = 0; k < w->count[i]; k++)
			fair_count(cells, 3, 0, h, now);
		total += w->count[i];
	}
	bound = M_E / FAIR_COLS * (double)total;
	for (i = 0; i < w->nsrc; i++) {
		__u32 a = src_addr(i);
		__u32 e = fair_estimate(cells, 3, 0, fair_hash(&ks, &a, 4, 0), now);

		if (e < w->count[i])
			fail_msg("%s: source %d estimated %u below its %u", w->name, i, e,
				 w->count[i]);
		over[i] = e - w->count[i];
		sum += over[i];
		/* What one row alone would say. */
		sum_row0 += fair_cell_estimate(&cells[fair_cell_index(3, 0, 0, fair_col(
			fair_hash(&ks, &a, 4, 0), 0))], now) - w->count[i];
		if (over[i] > bound)
			beyond++;
	}
	qsort(over, (size_t)w->nsrc, sizeof(*over), cmp_u32);
	mean = (double)sum / w->nsrc;
	mean_row0 = (double)sum_row0 / w->nsrc;
	frac = (double)beyond / w->nsrc;
	printf("# %s: %d sources, %llu admissions; overestimate mean %.2f p50 %u p90 %u "
	       "p99 %u max %u (%.3f %% of the total); bound e/%u*total = %.1f, exceeded by "
	       "%.2f %% of sources (allowed e^-%d = %.1f %%); one row alone: mean %.2f\n",
	       w->name, w->nsrc, (unsigned long long)total, mean, over[w->nsrc / 2],
	       over[(int)(w->nsrc * 0.9)], over[(int)(w->nsrc * 0.99)], over[w->nsrc - 1],
	       100.0 * over[w->nsrc - 1] / (double)total, FAIR_COLS, bound, 100 * frac,
	       FAIR_ROWS, 100 * exp(-FAIR_ROWS), mean_row0);
	assert_true(frac <= exp(-FAIR_ROWS) + 0.02);
	/* The rows are independent, and the least of them is taken: well
	 * under what one row says. */
	assert_true(mean <= 0.85 * mean_row0);
	/* The mean of the least of the rows is well under the bound. */
	assert_true(mean <= bound);
	free(over);
	free(cells);
}

static void test_sketch_uniform(void **state)
{
	struct workload w = { "uniform", 5000, NULL };
	int i;

	w.count = calloc((size_t)w.nsrc, sizeof(*w.count));
	assert_non_null(w.count);
	for (i = 0; i < w.nsrc; i++)
		w.count[i] = 10;
	measure(&w);
	free(w.count);
}

/* Zipf-like: source i has about C / i^1.1 admissions, at least 1. */
static void test_sketch_zipf(void **state)
{
	struct workload w = { "zipf s=1.1", 8000, NULL };
	uint64_t rng = 22;
	int i;

	w.count = calloc((size_t)w.nsrc, sizeof(*w.count));
	assert_non_null(w.count);
	for (i = 0; i < w.nsrc; i++)
		w.count[i] = (__u32)ceil(20000.0 / pow(i + 1, 1.1) * (0.5 + rng_unit_open(&rng)));
	measure(&w);
	free(w.count);
}

/* A few heavy sources among thousands of light ones: the heavy ones are
 * estimated within a few percent, the light ones never above the bound
 * more often than it allows. */
static void test_sketch_heavy(void **state)
{
	struct workload w = { "5 heavy + 4000 light", 4005, NULL };
	struct shedd_fair_cell *cells = new_sketch();
	struct sip_state ks = key_state(0x0123456789abcdefULL, 0xfedcba9876543210ULL);
	const __u64 now = 42 * W + W / 3;
	uint64_t rng = 7;
	__u64 total = 0;
	int i;
	__u32 k;

	w.count = calloc((size_t)w.nsrc, sizeof(*w.count));
	assert_non_null(w.count);
	for (i = 0; i < w.nsrc; i++)
		w.count[i] = i < 5 ? 2000 + 500 * (__u32)i : 1 + (__u32)(rng_next(&rng) % 9);
	measure(&w);
	for (i = 0; i < w.nsrc; i++) {
		__u32 a = src_addr(i);
		__u64 h = fair_hash(&ks, &a, 4, 0);

		for (k = 0; k < w.count[i]; k++)
			fair_count(cells, 0, 0, h, now);
		total += w.count[i];
	}
	for (i = 0; i < 5; i++) {
		__u32 a = src_addr(i);
		__u32 e = fair_estimate(cells, 0, 0, fair_hash(&ks, &a, 4, 0), now);

		printf("# heavy source %d: %u admissions, estimated %u (+%.2f %%)\n", i, w.count[i], e,
		       100.0 * (e - w.count[i]) / w.count[i]);
		assert_true(e >= w.count[i]);
		assert_true(e - w.count[i] <= M_E / FAIR_COLS * (double)total);
	}
	/* Other classes and levels saw nothing. */
	for (i = 0; i < 5; i++) {
		__u32 a = src_addr(i);

		assert_int_equal(fair_estimate(cells, 1, 0, fair_hash(&ks, &a, 4, 0), now), 0);
		assert_int_equal(fair_estimate(cells, 0, 1, fair_hash(&ks, &a, 4, 1), now), 0);
	}
	free(w.count);
	free(cells);
}

/* A spread of counts over time: the sketch's estimate is never below the
 * sliding-window count of any source, at any point of a window. */
static void test_sketch_over_time(void **state)
{
	enum { NSRC = 2000 };
	struct shedd_fair_cell *cells = new_sketch();
	struct sip_state ks = key_state(1, 2);
	static __u32 cur[NSRC], prev[NSRC];
	const __u64 base = 1000 * W;
	uint64_t rng = 99;
	int win, i, q;

	for (win = 0; win < 3; win++) {
		memcpy(prev, cur, sizeof(cur));
		memset(cur, 0, sizeof(cur));
		for (i = 0; i < 20000; i++) {
			/* Half of them from the first ten sources. */
			int s = (int)(rng_next(&rng) % (i % 2 ? NSRC : 10));
			__u32 a = src_addr(s);

			fair_count(cells, 2, 0, fair_hash(&ks, &a, 4, 0), base + (__u64)win * W +
				   (__u64)i * (W / 40000));
			cur[s]++;
		}
	}
	/* In window 3, at each quarter: the truth is cur + prev * (1 - f)
	 * as the cell computes it. */
	for (q = 0; q < 4; q++) {
		__u64 now = base + 3 * W + (__u64)q * (W / 4);
		__u64 rest = W - (now & FAIR_WINDOW_MASK);

		for (i = 0; i < NSRC; i++) {
			__u32 a = src_addr(i);
			__u32 truth = (__u32)(((__u64)cur[i] * rest) >> FAIR_WINDOW_SHIFT);

			assert_true(fair_estimate(cells, 2, 0, fair_hash(&ks, &a, 4, 0), now) >= truth);
		}
	}
	free(cells);
}

/* --- levels -------------------------------------------------------------- */

static void count_source(struct shedd_fair_cell *cells, const struct sip_state *ks, __u32 cls,
			 const __u32 *a, int family, __u32 levels, __u64 now)
{
	__u32 mask = fair_level_mask(levels, family), l;

	for (l = 0; l < FAIR_LEVELS; l++)
		if (mask & (1U << l))
			fair_count(cells, cls, l, fair_hash(ks, a, family, l), now);
}

static void test_level_mask(void **state)
{
	assert_int_equal(fair_level_mask(FAIR_ALL_LEVELS, 4), 3);
	assert_int_equal(fair_level_mask(FAIR_ALL_LEVELS, 6), 7);
	assert_int_equal(fair_level_mask(FAIR_ADDR, 6), 1);
	assert_int_equal(fair_level_mask(FAIR_NET24, 6), 0);
	assert_int_equal(fair_level_mask(FAIR_NET64 | FAIR_NET48, 4), 0);
	assert_int_equal(fair_level_mask(FAIR_NET48, 6), 4);
	assert_int_equal(fair_prefixlen(4, 0), 32);
	assert_int_equal(fair_prefixlen(4, 1), 24);
	assert_int_equal(fair_prefixlen(6, 0), 128);
	assert_int_equal(fair_prefixlen(6, 1), 64);
	assert_int_equal(fair_prefixlen(6, 2), 48);
}

/* 200 addresses of one IPv4 /24, one admission each: each address reads
 * about 1, the /24 at least 200. */
static void test_level_v4_24(void **state)
{
	struct shedd_fair_cell *cells = new_sketch();
	struct sip_state ks = key_state(11, 12);
	const __u64 now = 5 * W;
	__u32 a, b;
	int i;

	for (i = 0; i < 200; i++) {
		a = htonl(0xc6120500U + (__u32)i); /* 198.18.5.i */
		count_source(cells, &ks, 1, &a, 4, FAIR_ALL_LEVELS, now);
	}
	a = v4("198.18.5.17");
	b = v4("198.18.5.255"); /* never seen, same /24 */
	assert_true(fair_estimate(cells, 1, 0, fair_hash(&ks, &a, 4, 0), now) <= 2);
	assert_true(fair_estimate(cells, 1, 1, fair_hash(&ks, &a, 4, 1), now) >= 200);
	assert_true(fair_estimate(cells, 1, 1, fair_hash(&ks, &b, 4, 1), now) >= 200);
	/* The next /24 is apart. */
	b = v4("198.18.6.1");
	assert_true(fair_estimate(cells, 1, 1, fair_hash(&ks, &b, 4, 1), now) <= 2);
	/* Only the levels asked for are counted. */
	a = v4("198.19.0.1");
	for (i = 0; i < 50; i++)
		count_source(cells, &ks, 2, &a, 4, FAIR_ADDR, now);
	assert_int_equal(fair_estimate(cells, 2, 0, fair_hash(&ks, &a, 4, 0), now), 50);
	assert_int_equal(fair_estimate(cells, 2, 1, fair_hash(&ks, &a, 4, 1), now), 0);
	free(cells);
}

/* IPv6: 100 addresses of one /64 aggregate at level 1; 50 /64s of one /48,
 * two addresses each, at level 2, while each /64 stays light. */
static void test_level_v6(void **state)
{
	struct shedd_fair_cell *cells = new_sketch();
	struct sip_state ks = key_state(21, 22);
	const __u64 now = 9 * W + 1;
	uint64_t rng = 5;
	__u32 a[4], b[4];
	int i, j;

	for (i = 0; i < 100; i++) {
		v6("2001:db8:1:2::", a);
		a[2] = (__u32)rng_next(&rng);
		a[3] = (__u32)rng_next(&rng);
		count_source(cells, &ks, 0, a, 6, FAIR_ALL_LEVELS, now);
	}
	v6("2001:db8:1:2::1", b);
	assert_true(fair_estimate(cells, 0, 0, fair_hash(&ks, b, 6, 0), now) <= 2);
	assert_true(fair_estimate(cells, 0, 1, fair_hash(&ks, b, 6, 1), now) >= 100);
	assert_true(fair_estimate(cells, 0, 2, fair_hash(&ks, b, 6, 2), now) >= 100);
	for (i = 0; i < 50; i++)
		for (j = 0; j < 2; j++) {
			char s[64];

			snprintf(s, sizeof(s), "2001:db8:7:%x::%x", i, j + 1);
			v6(s, a);
			count_source(cells, &ks, 0, a, 6, FAIR_ALL_LEVELS, now);
		}
	v6("2001:db8:7:ffff::9", b);
	assert_true(fair_estimate(cells, 0, 2, fair_hash(&ks, b, 6, 2), now) >= 100);
	assert_true(fair_estimate(cells, 0, 1, fair_hash(&ks, b, 6, 1), now) <= 2);
	v6("2001:db8:7:3::77", b);
	assert_true(fair_estimate(cells, 0, 1, fair_hash(&ks, b, 6, 1), now) >= 2);
	assert_true(fair_estimate(cells, 0, 1, fair_hash(&ks, b, 6, 1), now) <= 4);
	/* Another /48 is apart. */
	v6("2001:db8:8::1", b);
	assert_true(fair_estimate(cells, 0, 2, fair_hash(&ks, b, 6, 2), now) <= 2);
	free(cells);
}

/* The hash of a prefix: the same for every address inside it, and never
 * shared by prefixes of another level or family whose masked words are the
 * same (the tag word). */
static void test_level_hashes(void **state)
{
	struct sip_state ks = key_state(0x1111, 0x2222), other = key_state(0x1111, 0x2223);
	__u32 a = v4("198.18.5.7"), b = v4("198.18.5.200"), net = v4("198.18.5.0");
	__u32 x[4], y[4], z[4];

	assert_int_equal(fair_hash(&ks, &a, 4, 1), fair_hash(&ks, &b, 4, 1));
	assert_int_not_equal(fair_hash(&ks, &a, 4, 0), fair_hash(&ks, &b, 4, 0));
	/* 198.18.5.0 the address and 198.18.5.0/24 the network. */
	assert_int_not_equal(fair_hash(&ks, &net, 4, 0), fair_hash(&ks, &net, 4, 1));
	/* An IPv6 address whose first words are the IPv4 word and 0: the
	 * same message words at level 1, another family. */
	memset(x, 0, sizeof(x));
	x[0] = net;
	assert_int_not_equal(fair_hash(&ks, x, 6, 1), fair_hash(&ks, &net, 4, 1));
	/* 2001:db8:1::/64 and 2001:db8:1::/48 mask to the same words. */
	v6("2001:db8:1::", x);
	assert_int_not_equal(fair_hash(&ks, x, 6, 1), fair_hash(&ks, x, 6, 2));
	assert_int_not_equal(fair_hash(&ks, x, 6, 0), fair_hash(&ks, x, 6, 1));
	/* Inside the /64, inside the /48. */
	v6("2001:db8:1:0:dead:beef:1:2", y);
	assert_int_equal(fair_hash(&ks, x, 6, 1), fair_hash(&ks, y, 6, 1));
	v6("2001:db8:1:ab12::5", z);
	assert_int_equal(fair_hash(&ks, x, 6, 2), fair_hash(&ks, z, 6, 2));
	assert_int_not_equal(fair_hash(&ks, x, 6, 1), fair_hash(&ks, z, 6, 1));
	v6("2001:db8:2::", z);
	assert_int_not_equal(fair_hash(&ks, x, 6, 2), fair_hash(&ks, z, 6, 2));
	/* The rows' columns are independent: two rows agree for about one
	 * source in FAIR_COLS. */
	{
		int i, same = 0;

		for (i = 0; i < 20000; i++) {
			__u32 s = src_addr(i);
			__u64 h = fair_hash(&ks, &s, 4, 0);

			same += fair_col(h, 0) == fair_col(h, 1);
		}
		assert_true(same < 3 * 20000 / (int)FAIR_COLS);
	}
	/* Another key, another hash. */
	assert_int_not_equal(fair_hash(&ks, &a, 4, 0), fair_hash(&other, &a, 4, 0));
	/* The cell index spans the map: class 3, level 2, row 1, last col. */
	assert_int_equal(fair_cell_index(SHEDD_NR_CLASSES - 1, FAIR_LEVELS - 1, FAIR_ROWS - 1,
					 FAIR_COLS - 1), FAIR_CELLS - 1);
	assert_int_equal(fair_cell_index(0, 0, 0, FAIR_COLS), 0);
	assert_true(fair_slot(~0ULL) < FAIR_HEAVY_SLOTS);
}

/* --- the daemon's side ---------------------------------------------------- */

/* Linear counting over one row, n = 10, 100, 1000 sources under 20 keys:
 * the mean within 2 %, and each run within 3.5 standard errors of linear
 * counting, sqrt(m (e^t - t - 1)) / n at the load t = n / m (Whang et al.;
 * 2.6 % at 1000 of 1024 cells). */
static void test_sources(void **state)
{
	static const int table[] = { 10, 100, 1000 };
	struct shedd_fair_cell *cells = new_sketch();
	const __u64 now = 3 * W + W / 2;
	size_t t;

	for (t = 0; t < sizeof(table) / sizeof(table[0]); t++) {
		const int n = table[t];
		const double load = (double)n / FAIR_COLS;
		const double se = sqrt(FAIR_COLS * (exp(load) - load - 1)) / n;
		double sum = 0, worst = 0;
		int key, i;

		for (key = 0; key < 20; key++) {
			struct sip_state ks = key_state(0xabc + (__u64)key, 0x55 * (__u64)key);
			double est, err;

			memset(cells, 0, FAIR_CELLS * sizeof(*cells));
			for (i = 0; i < n; i++) {
				__u32 a = src_addr(i);

				fair_count(cells, 1, 0, fair_hash(&ks, &a, 4, 0), now);
			}
			est = fair_sources(&cells[fair_cell_index(1, 0, 0, 0)], now);
			err = fabs(est - n) / n;
			sum += est;
			if (err > worst)
				worst = err;
		}
		printf("# sources: n = %d, mean of 20 keys %.1f (%+.2f %%), worst run %.2f %% off "
		       "(standard error %.2f %%)\n", n, sum / 20, 100 * (sum / 20 - n) / n,
		       100 * worst, 100 * se);
		assert_true(fabs(sum / 20 - n) <= 0.02 * n);
		/* At n = 10 with no two in a cell it reads 10.05. */
		assert_true(worst <= 3.5 * se || worst < 0.01);
	}
	/* Empty: 0. Every cell taken: m ln m. */
	memset(cells, 0, FAIR_CELLS * sizeof(*cells));
	assert_true(fair_sources(cells, now) == 0);
	{
		__u32 k;

		for (k = 0; k < FAIR_COLS; k++)
			cell_count(&cells[k], now);
		assert_true(fabs(fair_sources(cells, now) - FAIR_COLS * log(FAIR_COLS)) < 1e-6);
		/* Two windows on, every source has gone. */
		assert_true(fair_sources(cells, now + 2 * W) == 0);
	}
	free(cells);
}

/* Sources that come once each, 500 a window, steadily: what fair_sources()
 * counts through a window, against the 500 of the last window. A cell
 * holds a source while its unrounded estimate is at least one half
 * (fair_cell_present()), so a source seen once is held for a window on
 * average: the count swings with the window's turn, around 500 (at 3/4
 * of a window only the sources of its first three quarters are held, 375
 * when no two share a cell; at 2/4 the last window's too, 750), and is
 * within 20 % of it on average over the points. */
static void test_sources_one_shot(void **state)
{
	struct shedd_fair_cell *cells = new_sketch();
	struct sip_state ks = key_state(77, 78);
	const __u64 base = 50 * W, step = W / 500;
	double sum = 0;
	int q, i = 0, points = 0;

	for (q = 0; q <= 8; q++) {
		__u64 now = base + W + (__u64)q * (W / 4), t;
		double n;

		/* Every source until @now, one each: since base. */
		for (t = base + (__u64)i * step; t < now; t += step, i++) {
			__u32 a = htonl(0xc6120000U + (__u32)i);

			fair_count(cells, 3, 0, fair_hash(&ks, &a, 4, 0), t);
		}
		n = fair_sources(&cells[fair_cell_index(3, 0, 0, 0)], now);
		printf("# one-shot sources, %d a window: at %d/4 of window %d, %.0f counted "
		       "(the last window held 500)\n", 500, q % 4, 1 + q / 4, n);
		assert_true(n >= 500 * 0.7 && n <= 500 * 1.6);
		if (q < 8) {
			sum += n;
			points++;
		}
	}
	printf("# one-shot sources: %.0f counted on average over a window\n", sum / points);
	assert_true(fabs(sum / points - 500) <= 0.2 * 500);
	free(cells);
}

static void test_limit(void **state)
{
	/* 2 x 1000/s x 2.147 s / 100 = 42.9 -> 43, + FAIR_MIN_LIMIT */
	assert_int_equal(fair_limit(2, 1000, 100), 43 + FAIR_MIN_LIMIT);
	assert_int_equal(fair_limit(1, 1000, 100), 22 + FAIR_MIN_LIMIT);
	/* Fewer than one source counts as one. */
	assert_int_equal(fair_limit(1, 100, 0), 215 + FAIR_MIN_LIMIT);
	assert_int_equal(fair_limit(1, 100, 0.3), 215 + FAIR_MIN_LIMIT);
	/* No rate: only the minimum. */
	assert_int_equal(fair_limit(2, 0, 10), FAIR_MIN_LIMIT);
	/* Off, or nonsense: no limit. */
	assert_int_equal(fair_limit(0, 1000, 10), 0);
	assert_int_equal(fair_limit(-1, 1000, 10), 0);
	assert_int_equal(fair_limit(NAN, 1000, 10), 0);
	assert_int_equal(fair_limit(2, -5, 10), 0);
	assert_int_equal(fair_limit(2, NAN, 10), 0);
	/* An unknown number of sources is one source, not a cast of NaN. */
	assert_int_equal(fair_limit(1, 100, NAN), 215 + FAIR_MIN_LIMIT);
	/* Huge: capped. */
	assert_int_equal(fair_limit(FAIR_MAX_SLACK, 1e12, 1), 4000000000U);
	assert_int_equal(fair_limit(2, INFINITY, 1), 4000000000U);
	/* A limit never falls as the rate rises, nor rises with the sources. */
	{
		__u32 prev = 0;
		double r;

		for (r = 0; r < 1e6; r = r * 1.7 + 1) {
			__u32 l = fair_limit(2, r, 50);

			assert_true(l >= prev);
			prev = l;
		}
		assert_true(fair_limit(2, 1000, 10) >= fair_limit(2, 1000, 11));
	}
}

/* The noise floor, for crowds of 500 to 50 000 sources of counts from 1
 * to 40 (uniform, and a few heavy ones among them): the share of
 * never-seen sources whose estimate is over it is at most the bound, and
 * over the floor less one it is more (it is the least such count). The
 * bound holds for each source with its probability; the sampling of 20 000
 * of them is allowed 3 standard deviations. */
static void test_noise(void **state)
{
	static const struct {
		int nsrc;
		__u32 max_count; /* counts 1 .. max_count */
		int heavy;       /* sources at 5 000 among them */
	} table[] = {
		{ 500, 4, 0 }, { 2000, 2, 0 }, { 5000, 10, 0 }, { 20000, 1, 0 }, { 50000, 40, 0 },
		{ 20000, 3, 30 },
	};
	struct shedd_fair_cell *cells = new_sketch();
	const __u64 now = 9 * W + W / 5;
	const int probes = 20000;
	size_t t;

	for (t = 0; t < sizeof(table) / sizeof(table[0]); t++) {
		struct sip_state ks = key_state(0x77 + t, 0x99 * t);
		const double eps = FAIR_NOISE_EPS, sd = sqrt(eps * (1 - eps) / probes);
		uint64_t rng = 5 + t;
		const int all = table[t].nsrc + table[t].heavy;
		__u32 f, f_none, k, *count = calloc((size_t)all, sizeof(*count));
		int i, over = 0, over_less = 0, counted_over = 0;

		assert_non_null(count);
		memset(cells, 0, FAIR_CELLS * sizeof(*cells));
		f_none = fair_noise(&cells[fair_cell_index(0, 0, 0, 0)], now, eps);
		assert_int_equal(f_none, 0);
		for (i = 0; i < table[t].nsrc + table[t].heavy; i++) {
			__u32 a = htonl(0xc6120000U + (__u32)i), n;
			__u64 h = fair_hash(&ks, &a, 4, 0);

			n = i < table[t].heavy ? 5000 : 1 + (__u32)(rng_next(&rng) % table[t].max_count);
			for (k = 0; k < n; k++)
				fair_count(cells, 0, 0, h, now);
			count[i] = n;
		}
		f = fair_noise(&cells[fair_cell_index(0, 0, 0, 0)], now, eps);
		/* The sources counted: over their own count and the floor? */
		for (i = 0; i < all; i++) {
			__u32 a = htonl(0xc6120000U + (__u32)i);

			counted_over += fair_estimate(cells, 0, 0, fair_hash(&ks, &a, 4, 0), now) >
					count[i] + f;
		}
		free(count);
		for (i = 0; i < probes; i++) {
			__u32 a[4] = { htonl(0x20010db8U), htonl((__u32)i), 0, htonl(1) };
			__u32 e = fair_estimate(cells, 0, 0, fair_hash(&ks, a, 6, 0), now);

			over += e > f;
			over_less += f > 0 && e > f - 1;
		}
		printf("# noise: %d sources of 1..%u admissions%s: floor %u; never-seen sources over "
		       "it %.2f %%, over %u %.2f %% (bound %.1f %%); sources of the crowd over their "
		       "count and it %.3f %%\n", table[t].nsrc, table[t].max_count,
		       table[t].heavy ? " and 30 heavy" : "", f, 100.0 * over / probes, f ? f - 1 : 0,
		       100.0 * over_less / probes, 100 * eps, 100.0 * counted_over / all);
		assert_true((double)over / probes <= eps + 3 * sd);
		assert_true((double)counted_over / all <= eps);
		if (f > 0)
			assert_true((double)over_less / probes > eps - 3 * sd);
		/* 30 heavy sources fill 3 % of a row's cells: not the crowd's
		 * floor, whose sources meet in both rows far more often. */
		if (table[t].heavy)
			assert_true(f < 100);
	}
	/* A few sources, however heavy, rarely meet in both rows: no floor. */
	memset(cells, 0, FAIR_CELLS * sizeof(*cells));
	{
		struct sip_state ks = key_state(1, 1);
		int i;

		for (i = 0; i < 50; i++) {
			__u32 a = htonl(0xc6120000U + (__u32)i), k;

			for (k = 0; k < 1000; k++)
				fair_count(cells, 0, 0, fair_hash(&ks, &a, 4, 0), now);
		}
		assert_int_equal(fair_noise(&cells[fair_cell_index(0, 0, 0, 0)], now, FAIR_NOISE_EPS), 0);
		/* Two windows on the cells read 0. */
		assert_int_equal(fair_noise(&cells[fair_cell_index(0, 0, 0, 0)], now + 2 * W, 0), 0);
	}
	free(cells);
}

/* fair_noise() against its definition, the least F whose every-row
 * chance is at most eps, found another way: each row's estimates sorted,
 * the cells over F counted by a binary search, and every F tried that can
 * change that chance (0 and each count a cell holds). Levels whose cells
 * read from 0 to a few, to a few thousand, and past the histogram's last
 * count (a floor of 4 096 or more, searched for), at both ends of a
 * window and at several eps. */
static __u32 over_in_sorted(const __u32 *sorted, __u32 f)
{
	__u32 lo = 0, hi = FAIR_COLS;

	while (lo < hi) { /* the first cell over f */
		__u32 mid = lo + (hi - lo) / 2;

		if (sorted[mid] > f)
			hi = mid;
		else
			lo = mid + 1;
	}
	return FAIR_COLS - lo;
}

static __u32 noise_by_definition(const struct shedd_fair_cell *level, __u64 now, double eps)
{
	__u32 *est = malloc(sizeof(*est) * FAIR_ROWS * FAIR_COLS), *cand, k, r, f = 0;

	assert_non_null(est);
	for (k = 0; k < FAIR_ROWS * FAIR_COLS; k++)
		est[k] = fair_cell_estimate(&level[k], now);
	for (r = 0; r < FAIR_ROWS; r++)
		qsort(est + (size_t)r * FAIR_COLS, FAIR_COLS, sizeof(*est), cmp_u32);
	cand = malloc(sizeof(*cand) * (FAIR_ROWS * FAIR_COLS + 1));
	assert_non_null(cand);
	memcpy(cand + 1, est, sizeof(*est) * FAIR_ROWS * FAIR_COLS);
	cand[0] = 0;
	qsort(cand, FAIR_ROWS * FAIR_COLS + 1, sizeof(*cand), cmp_u32);
	for (k = 0; k <= FAIR_ROWS * FAIR_COLS; k++) {
		double p = 1;

		for (r = 0; r < FAIR_ROWS; r++)
			p *= (double)over_in_sorted(est + (size_t)r * FAIR_COLS, cand[k]) / FAIR_COLS;
		if (p <= eps) {
			f = cand[k];
			break;
		}
	}
	free(cand);
	free(est);
	return f;
}

static void test_noise_definition(void **state)
{
	static const struct {
		__u32 filled; /* cells of each row with a count, out of FAIR_COLS */
		__u32 max;    /* counts 1..max */
	} table[] = {
		{ 0, 1 }, { 1, 1 }, { 300, 3 }, { 5000, 2 }, { 16384, 1 }, { 12000, 40 },
		{ 16000, 3000 }, { 16384, 9000 }, { 15000, 200000 }, { 2000, 100000 },
	};
	const double eps_of[] = { FAIR_NOISE_EPS, 0.0001, 0.3 };
	const __u64 now_of[] = { 20 * W + 1, 20 * W + W - 1, 20 * W + W / 3 };
	struct shedd_fair_cell *level = calloc((size_t)FAIR_ROWS * FAIR_COLS, sizeof(*level));
	size_t t, e, w;
	uint64_t rng = 99;

	(void)state;
	assert_non_null(level);
	for (t = 0; t < sizeof(table) / sizeof(table[0]); t++)
		for (w = 0; w < sizeof(now_of) / sizeof(now_of[0]); w++) {
			__u64 now = now_of[w];
			__u32 k;

			memset(level, 0, (size_t)FAIR_ROWS * FAIR_COLS * sizeof(*level));
			for (k = 0; k < FAIR_ROWS * FAIR_COLS; k++) {
				struct shedd_fair_cell *c = &level[k];

				if (rng_next(&rng) % FAIR_COLS >= table[t].filled)
					continue;
				/* This window's count and the last one's. */
				c->epoch = (__u32)(now >> FAIR_WINDOW_SHIFT);
				c->cur = 1 + (__u32)(rng_next(&rng) % table[t].max);
				c->prev = (__u32)(rng_next(&rng) % (table[t].max + 1));
			}
			for (e = 0; e < sizeof(eps_of) / sizeof(eps_of[0]); e++) {
				__u32 got = fair_noise(level, now, eps_of[e]);


				if (got != noise_by_definition(level, now, eps_of[e]))
					fail_msg("%u cells of 1..%u at %llu, eps %g: %u, by definition %u",
						 table[t].filled, table[t].max, (unsigned long long)now,
						 eps_of[e], got, noise_by_definition(level, now, eps_of[e]));
			}
		}
	free(level);
}

/* The conservative update against the truth: 40 000 sources, each
 * active in a window or not, 1 to 5 admissions (a few 300), over 6
 * windows; every few thousand admissions, every source's estimate is at
 * least its true sliding count (its own cell, counted alone), across the
 * turns of the windows too, where a cell's count of the window before
 * stands in for the source's. */
static void test_conservative_never_under(void **state)
{
	const int nsrc = 40000, windows = 6;
	struct shedd_fair_cell *cells = new_sketch();
	struct shedd_fair_cell *truth = calloc((size_t)nsrc, sizeof(*truth));
	struct sip_state ks = key_state(41, 42);
	__u64 *h = calloc((size_t)nsrc, sizeof(*h)), base = 20 * W;
	uint64_t rng = 99;
	int w, i, checks = 0;

	assert_non_null(truth);
	assert_non_null(h);
	for (i = 0; i < nsrc; i++) {
		__u32 a = htonl(0x0a000000U + (__u32)i);

		h[i] = fair_hash(&ks, &a, 4, 0);
	}
	for (w = 0; w < windows; w++) {
		__u64 t = base + (__u64)w * W;
		const __u64 step = W / (4 * (__u64)nsrc);

		for (i = 0; i < nsrc; i++, t += step) {
			__u32 n, k;

			if (rng_next(&rng) % 2)
				continue;
			n = i % 1000 == 0 ? 300 : 1 + (__u32)(rng_next(&rng) % 5);
			for (k = 0; k < n; k++) {
				fair_count(cells, 1, 0, h[i], t);
				cell_count(&truth[i], t);
			}
			if (i % 5000 == 4999) {
				int j;

				for (j = 0; j < nsrc; j++)
					assert_true(fair_estimate(cells, 1, 0, h[j], t) >=
						    fair_cell_estimate(&truth[j], t));
				checks++;
			}
		}
	}
	printf("# conservative update: %d sources over %d windows, %d checks of every "
	       "source: none under its true count\n", nsrc, windows, checks);
	free(h);
	free(truth);
	free(cells);
}

/* One admission into every row's cell of the source: plain count-min. */
static void plain_count(struct shedd_fair_cell *cells, __u32 cls, __u64 h, __u64 now)
{
	__u32 r;

	for (r = 0; r < FAIR_ROWS; r++)
		cell_count(&cells[fair_cell_index(cls, 0, r, fair_col(h, r))], now);
}

/* A crowd of 200 000 sources, once each: the conservative update spreads
 * its admissions over the FAIR_ROWS * FAIR_COLS cells (balanced: each
 * raises the lesser of its two), where plain count-min adds them all to
 * each row. The floor is near the total over the cells, well under plain
 * count-min's, and a never-seen source still reads over it at most
 * FAIR_NOISE_EPS of the time; so does a source of the crowd over its own
 * count plus the floor (what the floor's bound asks of a counted source,
 * which the conservative update does not prove). */
static void test_conservative_crowd(void **state)
{
	const int nsrc = 200000, probes = 20000;
	struct shedd_fair_cell *cu = new_sketch(), *plain = new_sketch();
	struct sip_state ks = key_state(5, 6);
	const __u64 now = 30 * W + W / 3;
	const double per_cell = (double)nsrc / (FAIR_ROWS * FAIR_COLS);
	__u32 f_cu, f_plain;
	int i, over = 0, counted_over = 0;

	for (i = 0; i < nsrc; i++) {
		__u32 a = htonl(0x0a000000U + (__u32)i);
		__u64 h = fair_hash(&ks, &a, 4, 0);

		fair_count(cu, 0, 0, h, now);
		plain_count(plain, 0, h, now);
	}
	f_cu = fair_noise(&cu[fair_cell_index(0, 0, 0, 0)], now, FAIR_NOISE_EPS);
	f_plain = fair_noise(&plain[fair_cell_index(0, 0, 0, 0)], now, FAIR_NOISE_EPS);
	for (i = 0; i < probes; i++) {
		__u32 a[4] = { htonl(0x20010db8U), htonl((__u32)i), 0, htonl(1) };

		over += fair_estimate(cu, 0, 0, fair_hash(&ks, a, 6, 0), now) > f_cu;
	}
	for (i = 0; i < nsrc; i++) {
		__u32 a = htonl(0x0a000000U + (__u32)i);

		counted_over += fair_estimate(cu, 0, 0, fair_hash(&ks, &a, 4, 0), now) > 1 + f_cu;
	}
	printf("# conservative update: %d sources once each, %.1f a cell: floor %u (plain "
	       "count-min %u); never-seen sources over it %.2f %%, sources of the crowd over "
	       "1 + it %.3f %%\n", nsrc, per_cell, f_cu, f_plain, 100.0 * over / probes,
	       100.0 * counted_over / nsrc);
	assert_true((double)counted_over / nsrc <= FAIR_NOISE_EPS);
	assert_true(f_cu >= per_cell - 1 && f_cu <= 1.3 * per_cell + 2);
	assert_true(f_cu * 3 <= f_plain * 2);
	assert_true((double)over / probes <= FAIR_NOISE_EPS + 3 * sqrt(FAIR_NOISE_EPS / probes));
	free(cu);
	free(plain);
}

static void test_class_config(void **state)
{
	struct shedd_fair_cell *cells = new_sketch();
	struct sip_state ks = key_state(3, 4);
	struct fair_class_opts o = { .slack = 2, .levels = FAIR_ALL_LEVELS };
	struct shedd_fair_class out;
	const __u64 now = 11 * W;
	int i;

	/* 6 000 addresses in 24 /24s of class 2. */
	for (i = 0; i < 6000; i++) {
		__u32 a = htonl(0xc6120000U + (__u32)i);

		count_source(cells, &ks, 2, &a, 4, FAIR_ALL_LEVELS, now);
	}
	fair_class_config(&o, cells, 2, 1000, true, now, &out);
	assert_int_equal(out.levels, FAIR_ALL_LEVELS);
	assert_int_equal(out.active, 1);
	assert_true(out.sources[0] >= 5700 && out.sources[0] <= 6300);
	assert_int_equal(out.sources[1], 24);
	assert_int_equal(out.sources[2], 0);
	/* The share, and the noise of 6 000 sources in 16 384 cells a row:
	 * 31 % of a row's cells hold one or more, 9.5 % of sources meet one
	 * in each row, too many: the floor is 1. */
	assert_int_equal(fair_noise(&cells[fair_cell_index(2, 0, 0, 0)], now, FAIR_NOISE_EPS), 1);
	assert_int_equal(out.limit[0], fair_limit(2, 1000, fair_sources(&cells[fair_cell_index(2, 0, 0, 0)], now)) + 1);
	/* 24 /24s: too few to meet in both rows. */
	assert_int_equal(out.limit[1], fair_limit(2, 1000, fair_sources(&cells[fair_cell_index(2, 1, 0, 0)], now)));
	assert_int_equal(out.limit[2], fair_limit(2, 1000, 0));
	/* Another class is empty. */
	fair_class_config(&o, cells, 0, 1000, false, now, &out);
	assert_int_equal(out.active, 0);
	assert_int_equal(out.sources[0], 0);
	assert_int_equal(out.limit[0], fair_limit(2, 1000, 1));
	/* Without a sketch: limits as for one source. */
	fair_class_config(&o, NULL, 1, 500, true, now, &out);
	assert_int_equal(out.limit[1], fair_limit(2, 500, 1));
	/* Off: all zero. */
	memset(&out, 0xff, sizeof(out));
	o.slack = 0;
	fair_class_config(&o, cells, 2, 1000, true, now, &out);
	assert_int_equal(out.levels, 0);
	assert_int_equal(out.limit[0], 0);
	assert_int_equal(out.active, 0);
	o.slack = 2;
	o.levels = 0;
	fair_class_config(&o, cells, 2, 1000, true, now, &out);
	assert_int_equal(out.levels, 0);
	o.levels = FAIR_ADDR;
	fair_class_config(&o, cells, SHEDD_NR_CLASSES, 1000, true, now, &out);
	assert_int_equal(out.levels, 0);
	free(cells);
}

static void slot_v4(struct shedd_fair_heavy *s, const char *addr, __u32 level, __u32 est,
		    __u64 last, __u64 shed)
{
	memset(s, 0, sizeof(*s));
	assert_int_equal(inet_pton(AF_INET, addr, s->addr), 1);
	s->family = 4;
	s->level = (__u8)level;
	s->prefixlen = (__u8)fair_prefixlen(4, level);
	s->estimate = est;
	s->last_ns = last;
	s->shed = shed;
}

static void test_top(void **state)
{
	struct shedd_fair_heavy slots[FAIR_HEAVY_SLOTS];
	struct fair_hitter out[FAIR_HEAVY_SLOTS];
	const __u64 now = 100 * SEC;
	char buf[64];
	int n;

	memset(slots, 0, sizeof(slots));
	/* Empty slots: nothing. */
	assert_int_equal(fair_top(slots, 1, now, out, FAIR_TOP_MAX), 0);
	slot_v4(&slots[3], "198.18.0.7", 0, 100, now - SEC, 5);
	slot_v4(&slots[9], "198.18.5.0", 1, 900, now - 2 * SEC, 70);
	slot_v4(&slots[10], "198.18.0.9", 0, 100, now, 1);       /* ties slot 3 on rate */
	slot_v4(&slots[11], "198.18.9.0", 1, 100, now, 0);       /* ties: level 1 after 0 */
	slot_v4(&slots[20], "198.18.0.1", 0, 5000, now - FAIR_HEAVY_AGE_NS - 1, 9); /* aged */
	slot_v4(&slots[21], "198.18.0.2", 0, 5000, now + 1, 9);  /* from the future */
	slot_v4(&slots[22], "198.18.0.3", 3, 5000, now, 9);      /* no such level */
	slots[23] = slots[3];
	slots[23].family = 5;                                     /* no such family */
	memset(&slots[30], 0, sizeof(slots[30]));
	slots[30].family = 6;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8:1:2::", slots[30].addr), 1);
	slots[30].level = 1;
	slots[30].estimate = 400;
	slots[30].last_ns = now - FAIR_HEAVY_AGE_NS; /* just in time */
	n = fair_top(slots, 2, now, out, FAIR_TOP_MAX);
	assert_int_equal(n, 5);
	fair_hitter_source(&out[0], buf, sizeof(buf));
	assert_string_equal(buf, "198.18.5.0/24");
	assert_int_equal(out[0].cls, 2);
	assert_int_equal(out[0].level, 1);
	assert_int_equal(out[0].prefixlen, 24);
	assert_int_equal(out[0].shed, 70);
	assert_int_equal(out[0].age_ns, 2 * SEC);
	assert_true(fabs(out[0].rate_per_sec - 900 / FAIR_WINDOW_S) < 1e-9);
	fair_hitter_source(&out[1], buf, sizeof(buf));
	assert_string_equal(buf, "2001:db8:1:2::/64");
	assert_int_equal(out[1].family, 6);
	fair_hitter_source(&out[2], buf, sizeof(buf));
	assert_string_equal(buf, "198.18.0.7");
	fair_hitter_source(&out[3], buf, sizeof(buf));
	assert_string_equal(buf, "198.18.0.9");
	fair_hitter_source(&out[4], buf, sizeof(buf));
	assert_string_equal(buf, "198.18.9.0/24");
	/* At most @max, the highest first. */
	n = fair_top(slots, 2, now, out, 2);
	assert_int_equal(n, 2);
	assert_int_equal(out[0].level, 1);
	assert_int_equal(out[0].family, 4);
	assert_int_equal(fair_top(slots, 2, now, out, 0), 0);
	/* Later, all of them have aged out. */
	assert_int_equal(fair_top(slots, 2, now + FAIR_HEAVY_AGE_NS + 2, out, FAIR_TOP_MAX), 0);
	/* Every slot full: at most FAIR_HEAVY_SLOTS come back. */
	{
		__u32 i;

		for (i = 0; i < FAIR_HEAVY_SLOTS; i++) {
			char a[32];

			snprintf(a, sizeof(a), "198.18.1.%u", i);
			slot_v4(&slots[i], a, 0, 10 + i, now, i);
		}
		n = fair_top(slots, 0, now, out, FAIR_HEAVY_SLOTS);
		assert_int_equal(n, FAIR_HEAVY_SLOTS);
		for (i = 1; i < FAIR_HEAVY_SLOTS; i++)
			assert_true(out[i - 1].rate_per_sec > out[i].rate_per_sec);
		assert_int_equal(out[0].shed, FAIR_HEAVY_SLOTS - 1);
	}
}

/* What each CPU holds in fair_heavy_cpu is added to the slot of its source
 * only: not to another address, level or family in the slot, not from an
 * empty entry. */
static void test_heavy_add_pending(void **state)
{
	enum { NCPUS = 3 };
	struct shedd_fair_heavy slots[2];
	struct shedd_fair_heavy_cpu pending[2 * NCPUS];

	(void)state;
	memset(pending, 0, sizeof(pending));
	slot_v4(&slots[0], "198.18.0.7", 0, 100, SEC, 5);
	slot_v4(&slots[1], "198.18.5.0", 1, 900, SEC, 70);
	/* Slot 0: its source on CPUs 0 and 2, another address on CPU 1. */
	memcpy(pending[0].addr, slots[0].addr, 16);
	pending[0].family = 4;
	pending[0].shed = 11;
	pending[1] = pending[0];
	assert_int_equal(inet_pton(AF_INET, "198.18.0.8", pending[1].addr), 1);
	pending[1].shed = 1000;
	pending[2] = pending[0];
	pending[2].shed = 3;
	/* Slot 1: the same prefix at another level, then of another family,
	 * then an empty entry that claims sheds. */
	memcpy(pending[3].addr, slots[1].addr, 16);
	pending[3].family = 4;
	pending[3].level = 0;
	pending[3].shed = 500;
	pending[4] = pending[3];
	pending[4].level = 1;
	pending[4].family = 6;
	pending[5].shed = 7;
	fair_heavy_add_pending(slots, pending, 2, NCPUS);
	assert_int_equal(slots[0].shed, 5 + 11 + 3);
	assert_int_equal(slots[1].shed, 70);
}

static void test_level_names(void **state)
{
	assert_string_equal(fair_level_name(4, 0), "addr");
	assert_string_equal(fair_level_name(4, 1), "/24");
	assert_string_equal(fair_level_name(6, 0), "addr");
	assert_string_equal(fair_level_name(6, 1), "/64");
	assert_string_equal(fair_level_name(6, 2), "/48");
	assert_string_equal(fair_level_name(4, 2), "?");
}

static void test_parse_levels(void **state)
{
	static const struct {
		const char *in;
		const char *why; /* a word of the reason */
	} bad[] = {
		{ "", "no level" },
		{ "addr+", "'+'" },
		{ "+addr", "not a level" },
		{ "addr++24", "not a level" },
		{ "addr+32", "'32'" },
		{ "ADDR", "not a level" },
		{ "24+24", "twice" },
		{ "addr,24", "not a level" },
		{ " addr", "not a level" },
		{ "/24", "not a level" },
	};
	char why[128], buf[64];
	__u32 v, l;
	size_t i;

	assert_int_equal(fair_parse_levels("addr+24+64+48", &v, why, sizeof(why)), 0);
	assert_int_equal(v, FAIR_ALL_LEVELS);
	assert_int_equal(fair_parse_levels("48+addr", &v, why, sizeof(why)), 0);
	assert_int_equal(v, FAIR_NET48 | FAIR_ADDR);
	assert_int_equal(fair_parse_levels("64", &v, why, sizeof(why)), 0);
	assert_int_equal(v, FAIR_NET64);
	assert_int_equal(fair_parse_levels(NULL, &v, why, sizeof(why)), -1);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 12345;
		why[0] = '\0';
		if (fair_parse_levels(bad[i].in, &v, why, sizeof(why)) != -1)
			fail_msg("'%s' was taken", bad[i].in);
		if (!strstr(why, bad[i].why))
			fail_msg("'%s': '%s' does not say '%s'", bad[i].in, why, bad[i].why);
		assert_int_equal(v, 12345);
	}
	/* Every set of levels goes round, in the canonical order. */
	for (l = 1; l <= FAIR_ALL_LEVELS; l++) {
		fair_format_levels(l, buf, sizeof(buf));
		assert_int_equal(fair_parse_levels(buf, &v, why, sizeof(why)), 0);
		assert_int_equal(v, l);
	}
	fair_format_levels(FAIR_ALL_LEVELS, buf, sizeof(buf));
	assert_string_equal(buf, "addr+24+64+48");
	fair_format_levels(FAIR_NET24 | FAIR_NET48, buf, sizeof(buf));
	assert_string_equal(buf, "24+48");
	fair_format_levels(0, buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* A short buffer is cut, never overrun. */
	memset(buf, 'x', sizeof(buf));
	fair_format_levels(FAIR_ALL_LEVELS, buf, 6);
	assert_string_equal(buf, "addr+");
	assert_int_equal(buf[6], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cell_window),
		cmocka_unit_test(test_cell_sliding),
		cmocka_unit_test(test_cell_epoch_wrap),
		cmocka_unit_test(test_sketch_uniform),
		cmocka_unit_test(test_sketch_zipf),
		cmocka_unit_test(test_sketch_heavy),
		cmocka_unit_test(test_sketch_over_time),
		cmocka_unit_test(test_level_mask),
		cmocka_unit_test(test_level_v4_24),
		cmocka_unit_test(test_level_v6),
		cmocka_unit_test(test_level_hashes),
		cmocka_unit_test(test_sources),
		cmocka_unit_test(test_sources_one_shot),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_noise),
		cmocka_unit_test(test_noise_definition),
		cmocka_unit_test(test_conservative_never_under),
		cmocka_unit_test(test_conservative_crowd),
		cmocka_unit_test(test_class_config),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_heavy_add_pending),
		cmocka_unit_test(test_level_names),
		cmocka_unit_test(test_parse_levels),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
