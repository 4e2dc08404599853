// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_spread.c - class rates on 1 to 128 CPUs, simulated with the real
 * admission code (include/token_bucket.h: CPU caches, shared reserves) and
 * the real allocator (user/core/alloc.c: alloc_rates(), alloc_publish()).
 *
 * A NIC spreads SYNs over its RSS queues, one CPU each; this VM has 2, so
 * the CPUs are simulated: every SYN of a Poisson arrival stream is charged
 * on the CPU the spread gives it (even, skewed, all on one, or moving to
 * another CPU every tick), and every 100 ms a tick measures per-CPU demand
 * and publishes new class rates, as the daemon does. Each case asserts,
 * per class, over a measuring window:
 *   - a class offered more than its allocation admits its allocation
 *     (the time integral of the published rate) within +-5 %;
 *   - a class offered less than its allocation loses nothing: at least
 *     99.5 % of its SYNs are admitted.
 * And a spike after a pause admits the class's burst, on 2 to 128 CPUs.
 * The CPUs judge from their caches by the kernel's coarse clock, as the
 * XDP program does (bpf_ktime_get_coarse_ns(): the time of the last tick),
 * and refill the reserve by the fine one: every case runs with one clock,
 * and with ticks of 1, 4 and 10 ms (CONFIG_HZ 1000, 250 and 100).
 * Each case prints its figures as a TAP comment.
 *
 * With SHEDD_SIM_CSV=DIR the figures are also rows of DIR/spread.csv (a
 * class of a case a row), spread_burst.csv and spread_fair.csv;
 * SHEDD_SIM_QUICK=1 leaves out the cases offered more than 100 000 SYN/s
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
#include <cmocka.h>
#include <linux/types.h>

#include <arpa/inet.h>

#include "token_bucket.h"
#include "fair_sketch.h"
#include "alloc.h"
#include "fair.h"
#include "splitmix.h"
#include "sim_table.h"

#define NCLS SHEDD_NR_CLASSES
#define SEC 1000000000ULL
#define MS 1000000ULL
#define TICK_NS (100 * MS)
#define T0 SEC /* the clock starts here: time 0 is never a refill stamp */

enum spread {
	SPREAD_EVEN,   /* every SYN on a uniformly random CPU */
	SPREAD_SKEWED, /* half of them on CPU 0, the rest uniform */
	SPREAD_ONE,    /* all on the last CPU */
	SPREAD_MOVING, /* all of a class on one CPU that changes every tick */
	SPREAD_NR,
};

static const char *const spread_names[] = { "even", "skewed", "one CPU", "moving" };

struct scenario {
	const char *name;
	int ncpus;
	double rate;          /* total admitted rate (--rate), SYN/s */
	double wave;          /* 0, or the total swings +-wave every tick */
	double offered[NCLS]; /* SYN/s per class */
	double on_s, off_s;   /* 0, or critical_plus comes and goes */
	double measure_s;     /* length of the measuring window */
};

struct sim {
	const struct scenario *sc;
	__u64 hz_tick;              /* the kernel's tick, 0: one clock */
	enum spread spread;
	int n;
	struct shedd_bucket *cache; /* [cls * n + cpu] */
	struct shedd_rate rates[NCLS];
	struct shedd_reserve res[NCLS];
	struct alloc_params ap;
	__u64 *syn;                 /* this tick, [cls * n + cpu] */
	double *demand, *instant;
	double total;               /* the total published at the last tick */
	__u64 now, tick_no;
	int measuring;
	__u64 offered[NCLS], admitted[NCLS];
	double alloc_tokens[NCLS];  /* integral of the published class rate */
	uint64_t rng;
};

static int pick_cpu(struct sim *s, int cls)
{
	switch (s->spread) {
	case SPREAD_EVEN:
		return (int)(rng_next(&s->rng) % (uint64_t)s->n);
	case SPREAD_SKEWED:
		if (rng_next(&s->rng) & 1)
			return 0;
		return (int)(rng_next(&s->rng) % (uint64_t)s->n);
	case SPREAD_ONE:
		return s->n - 1;
	default:
		return (int)((s->tick_no * 7 + (__u64)cls * 3) % (__u64)s->n);
	}
}

/* One tick of the daemon's rate pipeline: per-CPU demand from the SYN
 * counters, alloc_rates(), then alloc_publish() against each reserve. */
static void sim_tick(struct sim *s, double dt_s)
{
	struct shedd_class_rate next[NCLS];
	double burst;
	int c, i;

	for (c = 0; c < NCLS; c++) {
		if (s->measuring)
			s->alloc_tokens[c] += (double)s->rates[c].r.rate_per_sec * dt_s;
	}
	for (i = 0; i < NCLS * s->n; i++) {
		s->instant[i] = dt_s > 0 ? (double)s->syn[i] / dt_s : 0;
		s->demand[i] = alloc_demand(s->demand[i], s->instant[i]);
		s->syn[i] = 0;
	}
	s->total = s->sc->rate;
	if (s->sc->wave)
		s->total += (s->tick_no & 1) ? s->sc->wave : -s->sc->wave;
	burst = s->total / 10; /* the daemon's default depth: 100 ms */
	alloc_rates(&s->ap, s->total, burst, s->demand, s->n, next);
	for (c = 0; c < NCLS; c++)
		alloc_publish(&s->rates[c].r, &next[c], s->res[c].s.last_ns, s->now);
	s->tick_no++;
}

static double next_gap(struct sim *s, double rate)
{
	return -log(rng_unit_open(&s->rng)) / rate * 1e9;
}

static int cls_active(const struct sim *s, int c, double t_s)
{
	double period = s->sc->on_s + s->sc->off_s;

	if (c != SHEDD_CRITICAL_PLUS || period <= 0)
		return 1;
	return fmod(t_s, period) < s->sc->on_s;
}

/* The coarse clock at @now: the time of the kernel's last tick. */
static __u64 coarse_at(const struct sim *s, __u64 now)
{
	return s->hz_tick ? now - now % s->hz_tick : now;
}

static int sim_charge(struct sim *s, int cls, int cpu, __u64 now)
{
	return tb_charge_at(&s->cache[cls * s->n + cpu], &s->rates[cls], &s->res[cls],
			    coarse_at(s, now), now);
}

static void sim_run(struct sim *s)
{
	const double warmup_s = 2;
	double end_s = warmup_s + s->sc->measure_s;
	double next_at[NCLS];
	__u64 next_tick = T0;
	int c;

	for (c = 0; c < NCLS; c++)
		next_at[c] = s->sc->offered[c] > 0 ? T0 + next_gap(s, s->sc->offered[c]) : INFINITY;
	s->now = T0;
	sim_tick(s, 0); /* the daemon publishes before it attaches */
	next_tick += TICK_NS;

	for (;;) {
		double t = INFINITY;
		int cls = -1;

		for (c = 0; c < NCLS; c++) {
			if (next_at[c] < t) {
				t = next_at[c];
				cls = c;
			}
		}
		if ((double)next_tick <= t) {
			s->now = next_tick;
			if ((double)(s->now - T0) / 1e9 >= end_s - 1e-9) {
				for (c = 0; c < NCLS && s->measuring; c++)
					s->alloc_tokens[c] += (double)s->rates[c].r.rate_per_sec *
							      (double)TICK_NS / 1e9;
				break;
			}
			sim_tick(s, (double)TICK_NS / 1e9);
			s->measuring = (double)(s->now - T0) / 1e9 >= warmup_s - 1e-9;
			next_tick += TICK_NS;
			continue;
		}
		s->now = (__u64)t;
		next_at[cls] = t + next_gap(s, s->sc->offered[cls]);
		if (!cls_active(s, cls, (t - T0) / 1e9))
			continue;
		{
			int cpu = pick_cpu(s, cls);
			int ok = sim_charge(s, cls, cpu, s->now);

			s->syn[cls * s->n + cpu]++;
			if (s->measuring) {
				s->offered[cls]++;
				s->admitted[cls] += (__u64)ok;
			}
		}
	}
}

static struct sim_table csv_spread = {
	.name = "spread",
	.header = "case,cpus,rate_per_sec,spread,clock_tick_ms,class,offered_per_sec,"
		  "admitted_per_sec,allocated_per_sec,saturated,admitted_pct",
};
static struct sim_table csv_burst = {
	.name = "spread_burst",
	.header = "cpus,clock_tick_ms,spike_syns,admitted,burst,rate_per_sec",
};
static struct sim_table csv_fair = {
	.name = "spread_fair",
	.header = "heavy,cpus,rate_per_sec,share_per_sec,light_alone_pct,light_fair_pct,"
		  "light_nofair_pct,heavy_fair_per_sec,heavy_limit_per_sec,"
		  "heavy_nofair_per_sec,heavy_fits_per_sec",
};
static const char *const class_names[] = { "critical_plus", "critical", "sheddable_plus",
					   "sheddable" };

/* Saturated: admitted_pct is of the allocation; otherwise of the offer.
 * The case's name with its commas as semicolons, one CSV field. */
static void csv_case(const struct sim *s, const char *label, int c, double offered,
		     double admitted, double alloc, int saturated)
{
	char name[128], *p;

	snprintf(name, sizeof(name), "%s", label);
	for (p = name; *p; p++)
		if (*p == ',')
			*p = ';';
	sim_table_row(&csv_spread, "%s,%d,%.0f,%s,%llu,%s,%.1f,%.1f,%.1f,%s,%.2f", name,
		      s->n, s->sc->rate, spread_names[s->spread],
		      (unsigned long long)(s->hz_tick / MS), class_names[c], offered, admitted,
		      alloc, saturated ? "yes" : "no",
		      100 * admitted / (saturated ? alloc : offered));
}

static void check(const struct sim *s, const char *label)
{
	static const char *const names[] = { "cp", "cr", "sp", "sh" };
	double d = s->sc->measure_s;
	char line[512];
	int off = 0, c, bad = -1;
	double bad_ratio = 0;

	off += snprintf(line + off, sizeof(line) - (size_t)off, "%-54s %-7s %2llu ms", label,
			spread_names[s->spread], (unsigned long long)(s->hz_tick / MS));
	for (c = 0; c < NCLS; c++) {
		double offered = (double)s->offered[c] / d;
		double admitted = (double)s->admitted[c] / d;
		double alloc = s->alloc_tokens[c] / d;
		double ratio;

		if (!s->offered[c])
			continue;
		if (offered > alloc * 1.05) {
			/* Saturated: within 5 % of the allocation, or within
			 * 2 SYNs over the window for a class of a few per second. */
			ratio = admitted / alloc;
			csv_case(s, label, c, offered, admitted, alloc, 1);
			off += snprintf(line + off, sizeof(line) - (size_t)off,
					" %s %.0f/%.0f/s=%.3f", names[c], admitted, alloc, ratio);
			if (fabs(admitted - alloc) > fmax(0.05 * alloc, 2 / d) && bad < 0) {
				bad = c;
				bad_ratio = ratio;
			}
		} else {
			ratio = admitted / offered;
			csv_case(s, label, c, offered, admitted, alloc, 0);
			off += snprintf(line + off, sizeof(line) - (size_t)off,
					" %s %.1f%% of %.0f/s", names[c], 100 * ratio, offered);
			if (ratio < 0.995 && bad < 0) {
				bad = c;
				bad_ratio = ratio;
			}
		}
	}
	print_message("# %s\n", line);
	if (bad >= 0)
		fail_msg("%s, %s: class %s admitted %.3f of what it should",
			 label, spread_names[s->spread], names[bad], bad_ratio);
}

static const struct scenario scenarios[] = {
	{ "16 CPUs, rate 1000: cp 20/s beside a 20000/s flood", 16, 1000, 0,
	  { 20, 0, 0, 20000 }, 0, 0, 10 },
	{ "32 CPUs, rate 500: cp 10/s beside a 20000/s flood", 32, 500, 0,
	  { 10, 0, 0, 20000 }, 0, 0, 10 },
	{ "64 CPUs, rate 100: cp 5/s, no flood", 64, 100, 0, { 5, 0, 0, 0 }, 0, 0, 10 },
	{ "128 CPUs, rate 400: cp 1/s beside a 2000/s flood", 128, 400, 0,
	  { 1, 0, 0, 2000 }, 0, 0, 30 },
	{ "2 CPUs, rate 1000: four classes, 100/200/300/2000", 2, 1000, 0,
	  { 100, 200, 300, 2000 }, 0, 0, 10 },
	{ "1 CPU, rate 1000: four classes, 100/200/300/2000", 1, 1000, 0,
	  { 100, 200, 300, 2000 }, 0, 0, 10 },
	{ "128 CPUs, rate 1.5M: cp 1M/s, sh 1M/s", 128, 1500000, 0,
	  { 1000000, 0, 0, 1000000 }, 0, 0, 2 },
	{ "16 CPUs, rate 1000: cp 50/s 1 s on, 2 s off, flood", 16, 1000, 0,
	  { 50, 0, 0, 20000 }, 1, 2, 12 },
	{ "64 CPUs, rate 1000+-300 every tick: cp 20/s, flood", 64, 1000, 300,
	  { 20, 0, 200, 20000 }, 0, 0, 10 },
};

/* A simulation of @n CPUs with the daemon's default floors and headroom. */
static void sim_setup(struct sim *s, const struct scenario *sc, enum spread spread, int n,
		      uint64_t seed, __u64 hz_tick)
{
	size_t cells = (size_t)(NCLS * n);
	int c;

	*s = (struct sim){ .sc = sc, .spread = spread, .n = n, .rng = seed, .hz_tick = hz_tick };
	for (c = 0; c < NCLS; c++)
		s->ap.floor[c] = 0.10;
	s->ap.headroom = 0.10;
	s->cache = calloc(cells, sizeof(*s->cache));
	s->syn = calloc(cells, sizeof(*s->syn));
	s->demand = calloc(cells, sizeof(*s->demand));
	s->instant = calloc(cells, sizeof(*s->instant));
	assert_true(s->cache && s->syn && s->demand && s->instant);
}

static void sim_free(struct sim *s)
{
	free(s->cache);
	free(s->syn);
	free(s->demand);
	free(s->instant);
}

/* The burst is what --burst makes it on any number of CPUs: a flood, a
 * pause long enough for every cache to go stale and the reserve to fill,
 * then a spike of SYNs over every CPU within 1 ms admits the class's burst
 * (plus what 1 ms of rate adds), not one burst per CPU. */
static void spike_after_pause(void **state)
{
	static const int cpus[] = { 2, 16, 64, 128 };
	const __u64 *hz_tick = *state;
	static const struct scenario sc = { "spike", 0, 1000, 0, { 0, 0, 0, 20000 }, 0, 0, 0 };
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(cpus) / sizeof(cpus[0]); k++) {
		int n = cpus[k], i;
		__u64 admitted = 0, burst, rate, t;
		struct sim s;

		sim_setup(&s, &sc, SPREAD_EVEN, n, 7, *hz_tick);

		/* 3 s of flood at 20 000/s, evenly spaced, round robin. */
		s.now = T0;
		sim_tick(&s, 0);
		for (t = T0, i = 0; t < T0 + 8 * SEC; t += 50000, i++) {
			if ((t - T0) % TICK_NS == 0 && t > T0) {
				s.now = t;
				sim_tick(&s, (double)TICK_NS / 1e9);
			}
			if (t < T0 + 3 * SEC) {
				s.syn[SHEDD_SHEDDABLE * n + i % n]++;
				sim_charge(&s, SHEDD_SHEDDABLE, i % n, t);
			}
		}
		/* The spike: 5000 SYNs within 1 ms, every CPU. */
		burst = s.rates[SHEDD_SHEDDABLE].r.burst;
		rate = s.rates[SHEDD_SHEDDABLE].r.rate_per_sec;
		for (i = 0; i < 5000; i++)
			admitted += (__u64)sim_charge(&s, SHEDD_SHEDDABLE, i % n,
						      t + (__u64)i * 200);
		print_message("# spike after a pause, %3d CPUs, tick %2llu ms: admitted %llu, "
			      "burst %llu, rate %llu/s\n", n, (unsigned long long)(*hz_tick / MS),
			      (unsigned long long)admitted, (unsigned long long)burst,
			      (unsigned long long)rate);
		sim_table_row(&csv_burst, "%d,%llu,5000,%llu,%llu,%llu", n,
			      (unsigned long long)(*hz_tick / MS), (unsigned long long)admitted,
			      (unsigned long long)burst, (unsigned long long)rate);
		sim_free(&s);
		assert_in_range(admitted, burst, burst + rate / 1000 + 1);
	}
}

/*
 * Per-source fairness on 2 to 128 CPUs: the real sketch and its
 * arithmetic (include/fair_sketch.h), the real limits (user/core/fair.c), the
 * real buckets. The sketch is one array every simulated CPU counts into,
 * as the map is shared by the CPUs; what this cannot show is two CPUs
 * turning one cell's window at the same instant (fair_cell_count(): a few
 * increments lost, never invented). 100 light sources at 10/s each (the
 * class's rate over them: an equal share each) and one heavy source at
 * 10 times that, each SYN on a random CPU (RSS spreads a source's flows);
 * the heavy load from one address, from 200 addresses of one /24, or from
 * IPv6 addresses of one /64. Every 100 ms a tick publishes the rate and
 * the limits, as the daemon does. And with the light sources at half
 * their share, the heavy one fits: nothing of it is shed.
 */
#define FAIR_LIGHT 100
#define FAIR_LIGHT_RATE 10.0
#define FAIR_HEAVY_RATE 100.0

enum fair_heavy_kind { FH_ADDR4, FH_NET24, FH_NET64, FH_NR };
static const char *const fh_names[] = { "one IPv4 address", "200 addresses of one /24",
					"IPv6 addresses of one /64" };

struct fair_result {
	double light_pct;     /* light sources' SYNs admitted, % */
	double heavy_per_s;   /* the heavy source's admitted rate */
	double limit_per_s;   /* its limit at the level that holds it, per second */
	double rate;          /* the class's rate */
};

static void fair_source(enum fair_heavy_kind k, int heavy, int i, uint64_t r, __u32 *a,
			int *family)
{
	memset(a, 0, 16);
	if (k == FH_NET64) {
		__u8 *b = (__u8 *)a;

		*family = 6;
		b[0] = 0x20, b[1] = 0x01, b[2] = 0x0d, b[3] = 0xb8;
		if (heavy) {
			b[4] = 0xff, b[7] = 1; /* 2001:db8:ff00:1::/64 */
			memcpy(b + 8, &r, 8);
		} else {
			b[4] = (__u8)(i >> 8), b[5] = (__u8)(i + 1); /* a /48 each */
			b[15] = 2;
		}
		return;
	}
	*family = 4;
	if (heavy)
		a[0] = htonl(0xc6130000U | (k == FH_NET24 ? 1 + (__u32)(r % 200) : 1));
	else
		a[0] = htonl(0xc6120002U | (__u32)i << 8); /* 198.18.i.2 */
}

static void fair_sim(int n, enum fair_heavy_kind k, double slack, int with_heavy,
		     double light_rate, struct fair_result *out)
{
	static const struct scenario sc = { "fair", 0, 1000, 0, { 0, 0, 0, 1 }, 0, 0, 10 };
	const __u32 cls = SHEDD_SHEDDABLE;
	const struct sip_state key = { 0x1111, 0x2222, 0x3333, 0x4444 };
	struct fair_class_opts fo = { slack, FAIR_ALL_LEVELS };
	struct shedd_fair_cell *cells = calloc(FAIR_CELLS, sizeof(*cells));
	struct shedd_fair_class fc = {};
	double total = FAIR_LIGHT * light_rate + (with_heavy ? FAIR_HEAVY_RATE : 0);
	__u64 next_tick = T0 + TICK_NS, last_shed = 0, light_off = 0, light_ok = 0, heavy_ok = 0;
	__u64 asked = 0, fair_shed = 0;
	double t = T0, limit_sum = 0, rate_sum = 0;
	int ticks = 0;
	struct sim s;

	assert_non_null(cells);
	sim_setup(&s, &sc, SPREAD_EVEN, n, 0xfa1eULL + (uint64_t)n, 4 * MS);
	for (int c = 0; c < NCLS; c++)
		s.ap.floor[c] = 0;
	s.now = T0;
	sim_tick(&s, 0);
	for (;;) {
		__u32 a[4], mask, l;
		int family, heavy, cpu, over = 0, ok = 0;
		__u64 coarse;

		t += next_gap(&s, total);
		while ((double)next_tick <= t) {
			int shedding;

			/* As the daemon judges it: the class shed, or would
			 * have without fairness (fair_would_shed()). */
			if (fair_would_shed(asked, fair_shed, (double)TICK_NS / 1e9,
					    (double)s.rates[cls].r.rate_per_sec))
				last_shed = next_tick;
			asked = fair_shed = 0;
			shedding = last_shed && next_tick - last_shed < FAIR_HOLD_NS;
			s.now = next_tick;
			sim_tick(&s, (double)TICK_NS / 1e9);
			fair_class_config(&fo, cells, cls, (double)s.rates[cls].r.rate_per_sec,
					  shedding, coarse_at(&s, s.now), &fc);
			if (next_tick >= T0 + 2 * SEC) {
				limit_sum += fc.limit[k == FH_ADDR4 ? 0 : 1];
				rate_sum += (double)s.rates[cls].r.rate_per_sec;
				ticks++;
			}
			next_tick += TICK_NS;
		}
		if (t >= (double)(T0 + 12 * SEC))
			break;
		s.now = (__u64)t;
		coarse = coarse_at(&s, s.now);
		heavy = with_heavy && rng_unit_open(&s.rng) * total < FAIR_HEAVY_RATE;
		fair_source(k, heavy, (int)(rng_next(&s.rng) % FAIR_LIGHT), rng_next(&s.rng), a,
			    &family);
		cpu = pick_cpu(&s, (int)cls);
		mask = fair_level_mask(fc.levels, family);
		if (fc.levels && fc.active) {
			for (l = 0; l < FAIR_LEVELS && !over; l++)
				if ((mask & (1U << l)) && fc.limit[l] &&
				    fair_estimate(cells, cls, l, fair_hash(&key, a, family, l),
						  coarse) >= fc.limit[l])
					over = 1;
		}
		fair_shed += (__u64)over;
		/* Demand, as the program counts it (charged). */
		s.syn[cls * (__u32)n + (__u32)cpu]++;
		if (!over) {
			asked++;
			ok = sim_charge(&s, (int)cls, cpu, s.now);
			if (!ok)
				last_shed = s.now;
			for (l = 0; ok && fc.levels && l < FAIR_LEVELS; l++)
				if (mask & (1U << l))
					fair_count(cells, cls, l, fair_hash(&key, a, family, l), coarse);
		}
		if (s.now < T0 + 2 * SEC)
			continue;
		if (heavy)
			heavy_ok += (__u64)ok;
		else
			light_off++, light_ok += (__u64)ok;
	}
	out->light_pct = light_off ? 100.0 * (double)light_ok / (double)light_off : 0;
	out->heavy_per_s = (double)heavy_ok / 10;
	out->limit_per_s = ticks ? limit_sum / ticks / FAIR_WINDOW_S : 0;
	out->rate = ticks ? rate_sum / ticks : 0;
	sim_free(&s);
	free(cells);
}

/* The light sources keep 95 % of what they get without the heavy one;
 * the heavy one is held to its limit (which is slack times an equal share
 * and FAIR_MIN_LIMIT a window); without fairness it takes what they lose. */
static void fair_heavy_source(void **state)
{
	static const int cpus[] = { 2, 8, 32, 128 };
	const enum fair_heavy_kind k = *(const enum fair_heavy_kind *)*state;
	size_t i;

	for (i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++) {
		struct fair_result base, fair, none;
		double share;

		struct fair_result fits;

		fair_sim(cpus[i], k, FAIR_DEFAULT_SLACK, 0, FAIR_LIGHT_RATE, &base);
		fair_sim(cpus[i], k, FAIR_DEFAULT_SLACK, 1, FAIR_LIGHT_RATE, &fair);
		fair_sim(cpus[i], k, 0, 1, FAIR_LIGHT_RATE, &none);
		/* Light sources at half their share: the heavy one fits. */
		fair_sim(cpus[i], k, FAIR_DEFAULT_SLACK, 1, FAIR_LIGHT_RATE / 2, &fits);
		share = fair.rate / (FAIR_LIGHT + 1);
		print_message("# %-26s %3d CPUs: rate %.0f/s, share %.1f/s; light %.1f%% alone, "
			      "%.1f%% beside the heavy one, %.1f%% without fairness; heavy "
			      "admitted %.1f/s (limit %.1f/s), %.1f/s without fairness, %.1f/s "
			      "where it fits (rate %.0f/s, light %.1f%%)\n",
			      fh_names[k], cpus[i], fair.rate, share, base.light_pct,
			      fair.light_pct, none.light_pct, fair.heavy_per_s, fair.limit_per_s,
			      none.heavy_per_s, fits.heavy_per_s, fits.rate, fits.light_pct);
		sim_table_row(&csv_fair, "%s,%d,%.0f,%.2f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f",
			      fh_names[k], cpus[i], fair.rate, share, base.light_pct,
			      fair.light_pct, none.light_pct, fair.heavy_per_s, fair.limit_per_s,
			      none.heavy_per_s, fits.heavy_per_s);
		assert_true(fair.light_pct >= 0.95 * base.light_pct);
		assert_true(fair.heavy_per_s <= 1.1 * fair.limit_per_s);
		assert_true(fair.heavy_per_s >= share);
		assert_true(none.light_pct < 0.95 * base.light_pct);
		assert_true(none.heavy_per_s > 2 * fair.heavy_per_s);
		assert_true(fits.heavy_per_s >= 0.95 * FAIR_HEAVY_RATE && fits.light_pct >= 99.5);
	}
}

struct tcase {
	const struct scenario *sc;
	enum spread spread;
	__u64 hz_tick;
	char name[160];
};

/* The clocks the cases run with: one clock, then the kernel's ticks of
 * CONFIG_HZ 1000, 250 (Debian's and Ubuntu's) and 100. */
static const __u64 hz_ticks[] = { 0, 1 * MS, 4 * MS, 10 * MS };
static const char *const hz_names[] = { "one clock", "tick 1 ms", "tick 4 ms", "tick 10 ms" };
#define NR_TICKS (sizeof(hz_ticks) / sizeof(hz_ticks[0]))

static struct tcase tcases[sizeof(scenarios) / sizeof(scenarios[0]) * SPREAD_NR * NR_TICKS];

static void run_case(void **state)
{
	const struct tcase *tc = *state;
	const struct scenario *sc = tc->sc;
	struct sim s;

	sim_setup(&s, sc, tc->spread, sc->ncpus, 0x5eedULL + (uint64_t)tc->spread, tc->hz_tick);
	sim_run(&s);
	sim_free(&s);
	check(&s, sc->name);
}

int main(void)
{
	static const enum fair_heavy_kind fkinds[FH_NR] = { FH_ADDR4, FH_NET24, FH_NET64 };
	static char fair_names[FH_NR][96];
	struct CMUnitTest tests[sizeof(tcases) / sizeof(tcases[0]) + NR_TICKS + FH_NR];
	static char spike_names[NR_TICKS][96];
	size_t i, k, n = 0;
	int sp, rc;

	for (k = 0; k < NR_TICKS; k++) {
		for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++) {
			double offered = 0;

			for (sp = 0; sp < NCLS; sp++)
				offered += scenarios[i].offered[sp];
			if (sim_quick() && offered > 100000)
				continue;
			for (sp = 0; sp < SPREAD_NR; sp++, n++) {
				tcases[n].sc = &scenarios[i];
				tcases[n].spread = (enum spread)sp;
				tcases[n].hz_tick = hz_ticks[k];
				snprintf(tcases[n].name, sizeof(tcases[n].name), "%s, %s, %s",
					 scenarios[i].name, spread_names[sp], hz_names[k]);
				tests[n] = (struct CMUnitTest){ tcases[n].name, run_case, NULL, NULL,
								&tcases[n] };
			}
		}
	}
	for (k = 0; k < NR_TICKS; k++) {
		snprintf(spike_names[k], sizeof(spike_names[k]),
			 "burst: a spike after a pause admits the burst, %s", hz_names[k]);
		tests[n++] = (struct CMUnitTest){ spike_names[k], spike_after_pause, NULL, NULL,
						  (void *)&hz_ticks[k] };
	}
	for (k = 0; k < FH_NR; k++) {
		snprintf(fair_names[k], sizeof(fair_names[k]),
			 "fairness: a heavy source, %s, on 2 to 128 CPUs", fh_names[k]);
		tests[n++] = (struct CMUnitTest){ fair_names[k], fair_heavy_source, NULL, NULL,
						  (void *)&fkinds[k] };
	}
	rc = _cmocka_run_group_tests("spread", tests, n, NULL, NULL);
	sim_table_close(&csv_spread);
	sim_table_close(&csv_burst);
	sim_table_close(&csv_fair);
	return rc;
}
