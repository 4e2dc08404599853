// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_fair_scale.c - per-source fairness at the scale of real hosts: one
 * class simulated SYN by SYN through the sketch's own code
 * (include/fair_sketch.h, judged and counted as bpf/fair.h does) and the
 * daemon's limit law every 100 ms tick (user/core/fair.c,
 * fair_class_config()), from 10 to 1 M sources a window, fairness on and
 * off. Prints the table (sources, fresh sources shed, the light crowd's
 * success on and off from its arrival, the heavy sources' admissions over
 * their share) as TAP comments; with SHEDD_SIM_CSV=DIR also as
 * DIR/fair_scale.csv, and SHEDD_SIM_QUICK=1 stops at 10 000 sources
 * (tests/sim_table.h).
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
#include "sim_table.h"

#define W FAIR_WINDOW_NS
#define SEC 1e9
#define TICK_NS 100000000ULL
#define SIM_WINDOWS 5  /* simulated; the first two fill the sketch */
#define WARM_WINDOWS 2
#define PROBES 4000    /* never-seen sources judged in the measured windows */
#define HEAVY_NET_ADDRS 10 /* addresses of the heavy /64 and of the heavy /24 */
#define CLS 2U

/*
 * The scenario at N sources: N light sources, each its own address in its
 * own IPv6 /64 (2001:db8::/32, the /48s spread), each asking 2 SYNs a
 * window on average (Poisson; never below 1 100 SYN/s in all, so a small
 * crowd still asks a real rate); the class's rate is what they ask over
 * 1.1, so it sheds throughout and fairness is active. Beside them a heavy
 * address, a heavy /64 and a heavy IPv4 /24, each asking 10 times the
 * share (the rate over the N + 3 sources); the /64 and the /24 spread it
 * over HEAVY_NET_ADDRS addresses each, so none of their addresses is over
 * its own share: only the prefix's level can hold them. Every level is
 * counted (addr+24+64+48; the /24 is among the /64s of the crowd at level
 * 1). The addresses are only hashed, never sent. The bucket: the class's
 * rate, a burst of a tenth of a second, on one CPU.
 */
struct scale_run {
	int nsrc;
	int fair;            /* fairness on */
	double rate_fixed;   /* the class's rate, SYN/s; 0: what the crowd asks
			      * (2 a source a window) over 1.1 */
	/* Results: the light crowd's over the whole run, the others' over
	 * the measured windows. */
	__u64 light_asked, light_ok;
	__u64 heavy_ok, heavy64_ok, heavy24_ok;
	double share_per_sec, rate_per_sec, measured_s;
	int probes, probes_shed;
	__u32 limit[FAIR_LEVELS], noise[FAIR_LEVELS], sources[FAIR_LEVELS];
};

/* A bijection of 32 bits: light i, the heavy ones and the probes get
 * distinct /64s, their /48s spread over 2001:db8::/32. */
static __u32 scramble(__u32 i)
{
	return i * 0x9e3779b1U ^ (i >> 16);
}

static void addr_of(__u32 net64, __u32 host, __u32 a[4])
{
	a[0] = htonl(0x20010db8U);
	a[1] = htonl(net64);
	a[2] = 0;
	a[3] = htonl(host);
}

/* The IPv4 address @host of the /24 @net24 (hashed only, as the program
 * reads it: network order in the first word). */
static void addr4_of(__u32 net24, __u32 host, __u32 a[4])
{
	a[0] = htonl(net24 << 8 | (host & 0xff));
	a[1] = a[2] = a[3] = 0;
}

struct sim {
	struct shedd_fair_cell *cells;
	struct sip_state key;
	struct shedd_fair_class cfg;
	double tokens, burst, rate;
};

/* One SYN from @a at @now: judged, charged, counted (bpf/fair.h's order);
 * 1 if admitted. */
static int syn(struct sim *s, const __u32 a[4], int family, int fair, __u64 now, double *last_ns)
{
	__u64 h[FAIR_LEVELS];
	__u32 l, mask = fair_level_mask(s->cfg.levels, family);

	s->tokens += (double)(now - (__u64)*last_ns) * s->rate / SEC;
	*last_ns = (double)now;
	if (s->tokens > s->burst)
		s->tokens = s->burst;
	if (fair)
		fair_hashes(&s->key, a, family, h);
	if (fair && s->cfg.active)
		for (l = 0; l < FAIR_LEVELS; l++)
			if ((mask & (1U << l)) && s->cfg.limit[l] &&
			    fair_estimate(s->cells, CLS, l, h[l], now) >= s->cfg.limit[l])
				return 0;
	if (s->tokens < 1)
		return 0;
	s->tokens -= 1;
	if (fair)
		for (l = 0; l < FAIR_LEVELS; l++)
			if (mask & (1U << l))
				fair_count(s->cells, CLS, l, h[l], now);
	return 1;
}

/* Would a never-seen source's first SYN be shed for fairness at @now? */
static int probe_shed(const struct sim *s, const __u32 a[4], __u64 now)
{
	__u64 h[FAIR_LEVELS];
	__u32 l, mask = fair_level_mask(s->cfg.levels, 6);

	fair_hashes(&s->key, a, 6, h);
	for (l = 0; l < FAIR_LEVELS; l++)
		if ((mask & (1U << l)) && s->cfg.limit[l] &&
		    fair_estimate(s->cells, CLS, l, h[l], now) >= s->cfg.limit[l])
			return 1;
	return 0;
}

static void run(struct scale_run *r)
{
	const struct fair_class_opts o = { FAIR_DEFAULT_SLACK, FAIR_ALL_LEVELS };
	const double wsec = (double)W / SEC;
	const __u64 t0 = 1000 * W, t_end = t0 + SIM_WINDOWS * W, t_meas = t0 + WARM_WINDOWS * W;
	double light_rate = r->rate_fixed > 0 ? 1.1 * r->rate_fixed : fmax(1100, 2 * r->nsrc / wsec);
	double heavy_rate, total, t, last_ns = (double)t0;
	struct sim s = { 0 };
	uint64_t rng = 0x5eed0000ULL + (uint64_t)r->nsrc;
	__u64 next_tick = t0, next_probe;
	__u32 heavy64_i = 0, heavy24_i = 0, a[4];
	int probe_i = 0;

	s.cells = calloc(FAIR_CELLS, sizeof(*s.cells));
	assert_non_null(s.cells);
	sip_init(&s.key, 0x0123456789abcdefULL ^ (__u64)r->nsrc, 0xfedcba9876543210ULL);
	s.rate = light_rate / 1.1;
	s.burst = s.rate / 10;
	s.tokens = s.burst;
	r->rate_per_sec = s.rate;
	r->share_per_sec = s.rate / (r->nsrc + 3);
	heavy_rate = 10 * r->share_per_sec;
	total = light_rate + 3 * heavy_rate;
	r->measured_s = (double)(t_end - t_meas) / SEC;
	next_probe = t_meas;
	for (t = (double)t0;;) {
		double u = rng_unit_open(&rng) * total;
		__u64 now;
		int ok, meas;

		t += -log(rng_unit_open(&rng)) / total * SEC;
		now = (__u64)t;
		if (now >= t_end)
			break;
		/* The daemon's tick: the limits from the sketch. */
		while (next_tick <= now) {
			fair_class_config(&o, r->fair ? s.cells : NULL, CLS, s.rate, true, next_tick,
					  &s.cfg);
			if (!r->fair)
				s.cfg.levels = 0;
			next_tick += TICK_NS;
		}
		/* Never-seen sources, judged, not counted (they would add to
		 * the crowd they measure). */
		while (r->fair && next_probe <= now) {
			addr_of(scramble((__u32)r->nsrc + 2 + (__u32)probe_i), 1, a);
			r->probes_shed += probe_shed(&s, a, next_probe);
			r->probes++;
			probe_i++;
			next_probe = t_meas + (__u64)probe_i * (t_end - t_meas) / PROBES;
		}
		meas = now >= t_meas;
		if (u < light_rate) {
			addr_of(scramble((__u32)(rng_next(&rng) % (__u64)r->nsrc)), 1, a);
			/* A flash crowd: counted from its arrival, into an
			 * empty sketch. */
			ok = syn(&s, a, 6, r->fair, now, &last_ns);
			r->light_asked++;
			r->light_ok += ok;
		} else if (u < light_rate + heavy_rate) {
			addr_of(scramble((__u32)r->nsrc), 1, a);
			ok = syn(&s, a, 6, r->fair, now, &last_ns);
			if (meas)
				r->heavy_ok += ok;
		} else if (u < light_rate + 2 * heavy_rate) {
			addr_of(scramble((__u32)r->nsrc + 1), 1 + heavy64_i++ % HEAVY_NET_ADDRS, a);
			ok = syn(&s, a, 6, r->fair, now, &last_ns);
			if (meas)
				r->heavy64_ok += ok;
		} else {
			addr4_of(0xc61200, 1 + heavy24_i++ % HEAVY_NET_ADDRS, a);
			ok = syn(&s, a, 4, r->fair, now, &last_ns);
			if (meas)
				r->heavy24_ok += ok;
		}
	}
	if (r->fair) {
		__u32 l;

		/* The last tick's limits, and what the noise added to the share's. */
		for (l = 0; l < FAIR_LEVELS; l++) {
			__u32 share = fair_limit(FAIR_DEFAULT_SLACK, s.rate,
						 fair_sources(&s.cells[fair_cell_index(CLS, l, 0, 0)],
							      next_tick - TICK_NS));

			r->limit[l] = s.cfg.limit[l];
			r->sources[l] = s.cfg.sources[l];
			r->noise[l] = s.cfg.limit[l] - share;
		}
	}
	free(s.cells);
}

/* One row of a sweep: the sources, and the most each heavy source may
 * take over its share there (0: no claim, it may take what it asks). */
struct scale_row {
	int nsrc;
	double max_heavy_x;
};

/*
 * A sweep of one scenario (@rate_fixed as struct scale_run's) over @rows,
 * printed and written as the table @name. At every scale: a never-seen
 * source is shed for fairness at most as often as the noise floor allows,
 * FAIR_NOISE_EPS a level (three levels, and the sampling of PROBES), and
 * the light crowd's success with fairness (a flash crowd, from its
 * arrival) is at least 95 % of its success without it. Where the sketch
 * can tell a source at 10 times the share from the crowd, each heavy
 * source (the address, the /64, the /24) takes at most the row's
 * max_heavy_x times its share; at every scale the heavy address takes at
 * most what its limit allows and a half.
 */
static void sweep(const char *name, double rate_fixed, const struct scale_row *rows, size_t n)
{
	struct sim_table csv = {
		.name = name,
		.header = "sources,fresh_shed_pct,light_ok_fair_pct,light_ok_nofair_pct,"
			  "heavy_addr_x_share,heavy_net64_x_share,heavy_net24_x_share,"
			  "limit_addr_per_window,noise_addr_per_window,counted_addr,rate_per_sec,"
			  "share_per_sec",
	};
	size_t i;

	printf("# %s: %s\n", name, rate_fixed > 0 ? "the class at a fixed rate, its sources more "
	       "and lighter" : "each source 2 SYNs a window, the class's rate grows with them");
	printf("# %9s %9s %11s %11s %12s %12s %12s %9s %9s %9s\n", "sources", "fresh", "light ok",
	       "light ok", "heavy addr", "heavy /64", "heavy /24", "limit", "noise", "counted");
	printf("# %9s %9s %11s %11s %12s %12s %12s %9s %9s %9s\n", "", "shed %",
	       "fair on %", "fair off %", "adm./share", "adm./share", "adm./share", "addr/win",
	       "addr/win", "addr");
	for (i = 0; i < n; i++) {
		struct scale_run on = { .nsrc = rows[i].nsrc, .fair = 1, .rate_fixed = rate_fixed };
		struct scale_run off = { .nsrc = rows[i].nsrc, .fair = 0, .rate_fixed = rate_fixed };
		double shed_pct, ok_on, ok_off, heavy, heavy64, heavy24, share_s, most;

		run(&on);
		run(&off);
		share_s = on.share_per_sec * on.measured_s;
		shed_pct = 100.0 * on.probes_shed / on.probes;
		ok_on = 100.0 * (double)on.light_ok / (double)on.light_asked;
		ok_off = 100.0 * (double)off.light_ok / (double)off.light_asked;
		heavy = (double)on.heavy_ok / share_s;
		heavy64 = (double)on.heavy64_ok / share_s;
		heavy24 = (double)on.heavy24_ok / share_s;
		most = fmax(heavy, fmax(heavy64, heavy24));
		printf("# %9d %9.2f %11.1f %11.1f %12.2f %12.2f %12.2f %9u %9u %9u\n", rows[i].nsrc,
		       shed_pct, ok_on, ok_off, heavy, heavy64, heavy24, on.limit[0], on.noise[0],
		       on.sources[0]);
		sim_table_row(&csv, "%d,%.2f,%.1f,%.1f,%.2f,%.2f,%.2f,%u,%u,%u,%.1f,%.4f",
			      rows[i].nsrc, shed_pct, ok_on, ok_off, heavy, heavy64, heavy24,
			      on.limit[0], on.noise[0], on.sources[0], on.rate_per_sec,
			      on.share_per_sec);
		if (i == n - 1)
			sim_table_close(&csv); /* (a failed check leaves it open) */
		if (shed_pct > 100 * 3 * FAIR_NOISE_EPS + 0.5)
			fail_msg("%s, %d sources: %.2f %% of fresh sources shed", name, rows[i].nsrc,
				 shed_pct);
		if (ok_on < 0.95 * ok_off)
			fail_msg("%s, %d sources: the light crowd's success %.1f %% with fairness, "
				 "%.1f %% without", name, rows[i].nsrc, ok_on, ok_off);
		if (rows[i].max_heavy_x > 0 && most > rows[i].max_heavy_x)
			fail_msg("%s, %d sources: heavy sources at %.2f, %.2f and %.2f x their share "
				 "(at most %.1f)", name, rows[i].nsrc, heavy, heavy64, heavy24,
				 rows[i].max_heavy_x);
		/* Never more than its limit allows and a half. */
		if ((double)on.heavy_ok / on.measured_s > 1.5 * on.limit[0] / ((double)W / SEC) +
		    on.share_per_sec)
			fail_msg("%s, %d sources: the heavy address at %.2f x its share, limit %u",
				 name, rows[i].nsrc, heavy, on.limit[0]);
	}
}

/*
 * Each source 2 SYNs a window (the class's rate R grows with the sources
 * N, R x window = 1.82 N): the noise floor grows with N as well, about
 * m + 2 sqrt(m), m = R x window / (FAIR_ROWS x FAIR_COLS) (user/core/fair.h),
 * while a source at 10 x its share asks 18 a window whatever N. It is held
 * near its share up to 10 000 sources, under what it asks up to 100 000,
 * and from about 130 000 on it is one of the crowd.
 */
static void test_scale(void **state)
{
	static const struct scale_row rows[] = {
		{ 10, 2.5 }, { 1000, 4 }, { 10000, 6.5 }, { 100000, 9 }, { 300000, 0 }, { 1000000, 0 },
	};

	(void)state;
	sweep("fair_scale", 0, rows, sim_quick() ? 3 : sizeof(rows) / sizeof(rows[0]));
}

/*
 * The class at 10 000 SYN/s whatever its sources (R x window = 21 475):
 * the floor stays 1-3, and a source at 10 x its share asks 215 000 / N a
 * window, so it is held under what it asks while that is over its limit,
 * N < 8 R window / (2 + floor), about 40 000 sources; from 1 000 000 on it
 * asks less than one SYN a window, which nothing can tell from the crowd.
 */
static void test_scale_rate(void **state)
{
	static const struct scale_row rows[] = {
		{ 10, 2.5 }, { 1000, 3 }, { 10000, 6 }, { 30000, 0 }, { 100000, 0 }, { 1000000, 0 },
	};

	(void)state;
	sweep("fair_scale_rate", 10000, rows, sim_quick() ? 3 : sizeof(rows) / sizeof(rows[0]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_scale_rate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
