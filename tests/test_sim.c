// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_sim.c - the whole control loop in simulated time: Poisson clients of
 * four classes, the XDP token buckets (tb_charge), the controller (aimd.c)
 * and the allocator (alloc.c), in front of a server of W workers with a
 * bounded accept queue. Checks goodput, class protection, floors and
 * recovery against the same server without shedding. Deterministic: a
 * seeded generator of our own (splitmix64), no rand(), no wall clock; the
 * whole group runs in well under a second. SHEDD_SIM_TRACE=N in the
 * environment prints each run's controller trace every N ticks.
 *
 * Model, and what it leaves out:
 * - Server: W workers, exponential service time of mean SERVICE_MEAN_NS, so
 *   capacity C = W / mean (variants: other W, mean, backlog and patience,
 *   fixed or log-normal service times, another tick, several CPUs). An admitted connection joins the accept queue
 *   (BACKLOG entries; full = listen overflow, the connection is lost); a
 *   free worker accepts the oldest one, and the wait is its sojourn. The
 *   server cannot tell that a client gave up: it serves every connection it
 *   accepts, late or not (the work a collapse wastes).
 * - Clients: Poisson arrivals at load x C per second, class drawn from
 *   CLASS_MIX, patience PATIENCE_NS from the SYN: a request completed
 *   within it is goodput, later it is late (worthless). A SYN that is shed
 *   or overflows is not served: retransmits are not modelled (as a client
 *   that fails fast on an RST would behave).
 * - Shedder: the daemon's own tick pipeline, tick_step() of user/core/tick.c
 *   (signals -> aimd_update() -> alloc_rates()), on one or more CPUs (SYNs
 *   spread evenly at random, as RSS does), each class's bucket on each CPU
 *   charged by sim_admit(), the one place the bucket model lives.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "aimd.h"
#include "tick.h"
#include "splitmix.h"
#include "sim_daemon.h"
#include "alloc.h"
#include "options.h" /* DEFAULT_FLOOR, DEFAULT_HEADROOM */
#include "token_bucket.h"

#define CP SHEDD_CRITICAL_PLUS
#define CR SHEDD_CRITICAL
#define SP SHEDD_SHEDDABLE_PLUS
#define SH SHEDD_SHEDDABLE
#define NCLS SHEDD_NR_CLASSES

#define MS 1000000ULL
#define SEC 1000000000ULL

/* The base server; struct sim_config changes it for a variant. */
#define WORKERS 8
#define SERVICE_MEAN_NS (8 * MS)
#define CAPACITY ((double)WORKERS * SEC / SERVICE_MEAN_NS) /* 1000 req/s */
#define BACKLOG 1024
#define PATIENCE_NS (500 * MS)
#define MAX_WORKERS 16
#define MAX_BACKLOG 1024
#define TICK_NS (100 * MS)
#define RUN_NS (60 * SEC)
/* Arrivals in [WIN_START_NS, WIN_END_NS) are measured; the run goes on past
 * the end by more than PATIENCE_NS, so each of them is settled by then. */
#define WIN_START_NS (10 * SEC)
#define WIN_END_NS (55 * SEC)
#define MIN_TICK_NS (10 * MS)
#define MAX_TICKS (RUN_NS / MIN_TICK_NS)
#define MAX_CPUS 8
#define MAX_PHASES 4
#ifndef SIM_SEED
#define SIM_SEED 0x5eedd5eeddULL /* -DSIM_SEED=n to try another draw */
#endif

/* Share of arrivals per class, in percent: critical traffic (5 %) stays
 * under capacity even at 10x. */
static const unsigned int CLASS_MIX[NCLS] = { 2, 3, 15, 80 };

/* Sojourn histogram: 100 us bins up to 2 s, the last bin holds the rest. */
#define SOJ_BIN_NS (100 * 1000ULL)
#define SOJ_BINS 20000

/* The offered load (multiple of C) until @until_ns. */
struct phase {
	__u64 until_ns;
	double load;
};

struct conn {
	__u64 syn_ns;
	int cls;
};

/* Counters of the arrivals in the measured window, by class. */
struct sim_counts {
	__u64 offered[NCLS];
	__u64 admitted[NCLS]; /* passed the bucket (all of them without shedd) */
	__u64 overflow[NCLS]; /* admitted, then lost to a full accept queue */
	__u64 good[NCLS];     /* completed within patience */
};

/* One tick of the trace, for failure reports. */
struct sim_tick {
	double rate;
	enum aimd_mode mode;
	unsigned int why;
	__u64 depth;
	__u64 accepts;
	__u64 overflows;
	__u64 sojourn_min_ns;
};

struct sim {
	/* configuration */
	bool shedd;
	struct phase phases[MAX_PHASES];
	int nr_phases;
	__u64 win_start_ns, win_end_ns;

	/* clients and server */
	uint64_t arr_rng, svc_rng;
	__u64 now_ns, next_arrival_ns;
	int workers;
	double service_mean_ns;
	double service_sigma; /* log-normal sigma; 0 = exponential */
	bool service_fixed;
	unsigned int backlog;
	__u64 patience_ns;
	double capacity;      /* workers / mean service time, req/s */
	struct conn queue[MAX_BACKLOG];
	unsigned int q_head, q_len;
	bool busy[MAX_WORKERS];
	__u64 done_ns[MAX_WORKERS];
	struct conn serving[MAX_WORKERS];

	/* shedder */
	int ncpus;
	__u64 tick_ns;
	struct tick_params tp;
	struct tick_state ts;
	double demand[NCLS * MAX_CPUS]; /* smoothed SYN/s, as the daemon keeps it */
	double instant[NCLS * MAX_CPUS];
	struct shedd_class_rate next[NCLS]; /* what the tick allocated */
	struct shedd_rate rates[NCLS];      /* what the program sees */
	struct shedd_reserve reserve[NCLS];
	struct shedd_bucket buckets[NCLS * MAX_CPUS];

	/* this tick */
	__u64 t_syn[NCLS * MAX_CPUS], t_accepts, t_min_ns, t_overflows;
	__u64 t_admitted, t_completed, last_depth, last_tick_ns;

	/* results */
	struct sim_counts n;
	double rate_sum;
	unsigned int rate_ticks;
	__u32 soj_hist[SOJ_BINS];
	__u64 soj_total;
	bool seen_recovering[MAX_PHASES]; /* by phase */
	struct sim_tick trace[MAX_TICKS];
	unsigned int nr_ticks;
};

static bool in_window(const struct sim *s, __u64 syn_ns)
{
	return syn_ns >= s->win_start_ns && syn_ns < s->win_end_ns;
}

static int phase_of(const struct sim *s, __u64 t_ns)
{
	int i;

	for (i = 0; i < s->nr_phases - 1; i++)
		if (t_ns < s->phases[i].until_ns)
			return i;
	return s->nr_phases - 1;
}

/* Poisson arrivals whose rate changes at phase ends: an interval that
 * crosses one is drawn again from the boundary (memorylessness). */
static void schedule_arrival(struct sim *s)
{
	__u64 t = s->now_ns;

	for (;;) {
		int ph = phase_of(s, t);
		double rate = s->phases[ph].load * s->capacity;
		__u64 next = t + rng_exp_ns(&s->arr_rng, SEC / rate);

		if (ph == s->nr_phases - 1 || next < s->phases[ph].until_ns) {
			s->next_arrival_ns = next;
			return;
		}
		t = s->phases[ph].until_ns;
	}
}

static int draw_class(struct sim *s)
{
	unsigned int u = (unsigned int)(rng_next(&s->arr_rng) % 100), acc = 0;
	int c;

	for (c = 0; c < NCLS - 1; c++) {
		acc += CLASS_MIX[c];
		if (u < acc)
			return c;
	}
	return NCLS - 1;
}

/* Log-normal of mean @mean_ns and shape @sigma (Box-Muller), at least 1 ns:
 * mu = ln(mean) - sigma^2 / 2 keeps the mean. */
static __u64 rng_lognormal_ns(uint64_t *s, double mean_ns, double sigma)
{
	double u1 = 1 - rng_unit(s), u2 = rng_unit(s);
	double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
	double v = exp(log(mean_ns) - sigma * sigma / 2 + sigma * z);

	return v < 1 ? 1 : (__u64)v;
}

static __u64 service_ns(struct sim *s)
{
	if (s->service_fixed)
		return (__u64)s->service_mean_ns;
	if (s->service_sigma > 0)
		return rng_lognormal_ns(&s->svc_rng, s->service_mean_ns, s->service_sigma);
	return rng_exp_ns(&s->svc_rng, s->service_mean_ns);
}

/* Worker @w takes @cn: the accept, and its sojourn sample. */
static void start(struct sim *s, int w, struct conn cn)
{
	__u64 soj = s->now_ns - cn.syn_ns;

	s->busy[w] = true;
	s->serving[w] = cn;
	s->done_ns[w] = s->now_ns + service_ns(s);
	if (!s->t_accepts || soj < s->t_min_ns)
		s->t_min_ns = soj;
	s->t_accepts++;
	if (in_window(s, cn.syn_ns)) {
		__u64 bin = soj / SOJ_BIN_NS;

		s->soj_hist[bin < SOJ_BINS ? bin : SOJ_BINS - 1]++;
		s->soj_total++;
	}
}

static void complete(struct sim *s, int w)
{
	struct conn cn = s->serving[w];

	s->busy[w] = false;
	if (in_window(s, cn.syn_ns) && s->now_ns - cn.syn_ns <= s->patience_ns)
		s->n.good[cn.cls]++;
	if (s->q_len) {
		struct conn next = s->queue[s->q_head];

		s->q_head = (s->q_head + 1) % s->backlog;
		s->q_len--;
		start(s, w, next);
	}
}

/* The daemon's rate write: alloc_publish() of what the tick allocated,
 * against each class's reserve. */
static void publish(struct sim *s)
{
	int c;

	for (c = 0; c < NCLS; c++)
		alloc_publish(&s->rates[c].r, &s->next[c], s->reserve[c].s.last_ns, s->now_ns);
}

/* The XDP program's verdict on a SYN of class @cls on @cpu: the one place
 * the bucket model lives (token_bucket.h, the program's own code). */
static bool sim_admit(struct sim *s, int cls, int cpu)
{
	return tb_charge(&s->buckets[cls * s->ncpus + cpu], &s->rates[cls], &s->reserve[cls],
			 s->now_ns);
}

static void arrive(struct sim *s)
{
	struct conn cn = { .syn_ns = s->now_ns, .cls = draw_class(s) };
	int cpu = (int)(rng_next(&s->arr_rng) % (__u64)s->ncpus);
	bool win = in_window(s, cn.syn_ns);
	int w;

	s->t_syn[cn.cls * s->ncpus + cpu]++;
	if (win)
		s->n.offered[cn.cls]++;
	if (s->shedd && !sim_admit(s, cn.cls, cpu))
		return;
	s->t_admitted++;
	if (win)
		s->n.admitted[cn.cls]++;
	/* An idle worker blocked in accept() takes it at once (sojourn 0);
	 * the queue is then empty, since idle workers drain it. */
	for (w = 0; w < s->workers; w++) {
		if (!s->busy[w]) {
			s->t_completed++;
			start(s, w, cn);
			return;
		}
	}
	if (s->q_len >= s->backlog) {
		s->t_overflows++;
		if (win)
			s->n.overflow[cn.cls]++;
		return;
	}
	s->t_completed++;
	s->queue[(s->q_head + s->q_len) % s->backlog] = cn;
	s->q_len++;
}

/* The daemon's tick, through the daemon's own pipeline: what the probes,
 * sock_diag and the stats map would have read -> tick_step(). */
static void tick(struct sim *s)
{
	struct signal_report r = {
		.have_sojourn = true,
		.sojourn = { .count = s->t_accepts, .min_ns = s->t_accepts ? s->t_min_ns : 0 },
		.have_depth = true,
		.depth = s->q_len,
		.backlog = s->backlog,
		.have_netstat = true,
		.overflows = s->t_overflows,
		.drops = s->t_overflows,
		.have_listen_drops = true,
		.listen_drops = s->t_overflows,
		.listen_overflows = s->t_overflows,
		.have_completed = true,
		.completed = s->t_completed,
		.have_queue_left = true,
		/* Queued in the tick, less the growth of the queue. */
		.queue_left = s->last_depth + s->t_completed - s->q_len,
	};
	struct tick_input in = {
		.now_ns = s->now_ns,
		.dt_ns = s->now_ns - s->last_tick_ns,
		.sig = &r,
		.syn = s->t_syn,
		.admitted = s->t_admitted,
	};
	double rate = 0;
	struct sim_tick *tr;

	if (s->shedd) {
		rate = tick_step(&s->tp, &s->ts, &in, s->next);
		publish(s);
		if (s->ts.cs.mode == AIMD_RECOVERING)
			s->seen_recovering[phase_of(s, s->now_ns)] = true;
		if (s->now_ns >= s->win_start_ns && s->now_ns < s->win_end_ns) {
			s->rate_sum += rate;
			s->rate_ticks++;
		}
	}
	if (s->nr_ticks < MAX_TICKS) {
		tr = &s->trace[s->nr_ticks++];
		*tr = (struct sim_tick){
			.rate = rate,
			.mode = s->ts.cs.mode,
			.why = s->ts.cs.why,
			.depth = r.depth,
			.accepts = r.sojourn.count,
			.overflows = r.overflows,
			.sojourn_min_ns = r.sojourn.min_ns,
		};
	}
	memset(s->t_syn, 0, sizeof(s->t_syn));
	s->t_accepts = s->t_min_ns = s->t_overflows = 0;
	s->t_admitted = s->t_completed = 0;
	s->last_depth = s->q_len;
	s->last_tick_ns = s->now_ns;
}

/* A run's shape beyond its load phases. */
struct sim_config {
	int ncpus;      /* 0 = 1 */
	__u64 tick_ns;  /* 0 = TICK_NS */
	int workers;    /* 0 = WORKERS */
	__u64 service_mean_ns; /* 0 = SERVICE_MEAN_NS */
	double service_sigma;  /* log-normal service times; 0 = exponential */
	bool service_fixed;    /* every service takes exactly the mean */
	unsigned int backlog;  /* 0 = BACKLOG */
	__u64 patience_ns;     /* 0 = PATIENCE_NS */
};

static void sim_init(struct sim *s, bool shedd, const struct phase *phases,
		     int nr_phases, __u64 win_start_ns, __u64 win_end_ns,
		     const struct sim_config *cfg)
{
	memset(s, 0, sizeof(*s));
	s->shedd = shedd;
	memcpy(s->phases, phases, sizeof(*phases) * (size_t)nr_phases);
	s->nr_phases = nr_phases;
	s->win_start_ns = win_start_ns;
	s->win_end_ns = win_end_ns;
	s->ncpus = cfg && cfg->ncpus ? cfg->ncpus : 1;
	s->tick_ns = cfg && cfg->tick_ns ? cfg->tick_ns : TICK_NS;
	s->workers = cfg && cfg->workers ? cfg->workers : WORKERS;
	s->service_mean_ns = (double)(cfg && cfg->service_mean_ns ? cfg->service_mean_ns :
				      SERVICE_MEAN_NS);
	s->service_sigma = cfg ? cfg->service_sigma : 0;
	s->service_fixed = cfg && cfg->service_fixed;
	s->backlog = cfg && cfg->backlog ? cfg->backlog : BACKLOG;
	s->patience_ns = cfg && cfg->patience_ns ? cfg->patience_ns : PATIENCE_NS;
	s->capacity = (double)s->workers * SEC / s->service_mean_ns;
	/* Two streams, so arrivals are the same with and without shedd. */
	s->arr_rng = SIM_SEED;
	s->svc_rng = SIM_SEED ^ 0xa5a5a5a5a5a5a5a5ULL;

	/* The controller's defaults, with a ceiling of 10x capacity and a
	 * start there, so it has to find the rate by itself. */
	sim_daemon_defaults(&s->tp, &s->ts, s->ncpus, s->demand, s->instant);
	s->tp.cp.tick_ns = s->tick_ns;
	s->tp.cp.max_rate = 10 * s->capacity;
	tick_init(&s->tp, &s->ts, s->tp.cp.max_rate);
	/* A fresh program starts with an even split, as the daemon does. */
	tick_allocate(&s->tp, &s->ts, s->next);
	publish(s);
}

static void sim_run(struct sim *s, __u64 end_ns)
{
	__u64 next_tick_ns = s->tick_ns;

	schedule_arrival(s);
	for (;;) {
		__u64 t = s->next_arrival_ns;
		int w, first = -1;

		for (w = 0; w < s->workers; w++)
			if (s->busy[w] && (first < 0 || s->done_ns[w] < s->done_ns[first]))
				first = w;
		if (first >= 0 && s->done_ns[first] < t)
			t = s->done_ns[first];
		if (next_tick_ns <= t)
			t = next_tick_ns;
		if (t >= end_ns)
			break;
		s->now_ns = t;
		if (first >= 0 && t == s->done_ns[first]) {
			complete(s, first);
		} else if (t == next_tick_ns) {
			tick(s);
			next_tick_ns += s->tick_ns;
		} else {
			arrive(s);
			schedule_arrival(s);
		}
	}
}

/* What one run measured, over its window. */
struct sim_result {
	double load;            /* of the last phase */
	double capacity;        /* of the server, req/s */
	double goodput;         /* requests/s completed within patience */
	double served[NCLS];    /* fraction of offered completed within patience */
	double offered_ps[NCLS];
	double admitted_ps[NCLS];
	double admitted_total_ps;
	double late_ps;         /* admitted but completed past patience, or never */
	double overflow_ps;     /* admitted, then lost to a full accept queue */
	double mean_rate;       /* controller's mean limit, SYN/s */
	double p99_sojourn_ms;
	double mode_share[3];   /* of the window's ticks, by enum aimd_mode */
	unsigned int why_ticks[5]; /* ticks overloaded by each enum aimd_reason bit */
	bool seen_recovering[MAX_PHASES];
};

/* Upper edge of the bin that holds the 99th percentile. */
static double p99_ms(const struct sim *s)
{
	__u64 rank, seen = 0;
	unsigned int i;

	if (!s->soj_total)
		return 0;
	rank = (__u64)(0.99 * (double)s->soj_total);
	for (i = 0; i < SOJ_BINS; i++) {
		seen += s->soj_hist[i];
		if (seen > rank)
			return (double)((i + 1) * SOJ_BIN_NS) / MS;
	}
	return (double)(SOJ_BINS * SOJ_BIN_NS) / MS;
}

/* The controller's trace every @step ticks, as TAP comments. */
static void print_trace(const struct sim *s, const char *title, unsigned int step)
{
	unsigned int i;

	printf("# trace of %s: t(s) rate mode why depth accepts overflows min_sojourn(ms)\n",
	       title);
	for (i = step - 1; i < s->nr_ticks; i += step) {
		const struct sim_tick *t = &s->trace[i];

		printf("#   %5.1f %8.1f %-10s 0x%02x %5llu %5llu %5llu %8.2f\n",
		       (double)(i + 1) * s->tick_ns / SEC, t->rate, aimd_mode_name(t->mode),
		       t->why, (unsigned long long)t->depth,
		       (unsigned long long)t->accepts, (unsigned long long)t->overflows,
		       (double)t->sojourn_min_ns / MS);
	}
}

static void summarize(const struct sim *s, struct sim_result *r)
{
	double win_s = (double)(s->win_end_ns - s->win_start_ns) / SEC;
	unsigned int i, b, ticks = 0;
	__u64 good = 0, late = 0, ovf = 0, adm = 0;
	int c;

	memset(r, 0, sizeof(*r));
	r->load = s->phases[s->nr_phases - 1].load;
	r->capacity = s->capacity;
	for (c = 0; c < NCLS; c++) {
		good += s->n.good[c];
		ovf += s->n.overflow[c];
		adm += s->n.admitted[c];
		/* Admitted, not lost, not on time: late, or still waiting
		 * at the end, which is past patience by the window's end. */
		late += s->n.admitted[c] - s->n.overflow[c] - s->n.good[c];
		r->served[c] = s->n.offered[c] ?
			(double)s->n.good[c] / (double)s->n.offered[c] : 1;
		r->offered_ps[c] = (double)s->n.offered[c] / win_s;
		r->admitted_ps[c] = (double)s->n.admitted[c] / win_s;
	}
	r->goodput = (double)good / win_s;
	r->admitted_total_ps = (double)adm / win_s;
	r->late_ps = (double)late / win_s;
	r->overflow_ps = (double)ovf / win_s;
	r->mean_rate = s->rate_ticks ? s->rate_sum / s->rate_ticks : 0;
	r->p99_sojourn_ms = p99_ms(s);
	memcpy(r->seen_recovering, s->seen_recovering, sizeof(r->seen_recovering));
	for (i = 0; i < s->nr_ticks; i++) {
		__u64 t = (__u64)(i + 1) * s->tick_ns;

		if (t < s->win_start_ns || t >= s->win_end_ns)
			continue;
		ticks++;
		r->mode_share[s->trace[i].mode]++;
		for (b = 0; b < 5; b++)
			if (s->trace[i].why & (1u << b))
				r->why_ticks[b]++;
	}
	for (i = 0; i < 3 && ticks; i++)
		r->mode_share[i] /= ticks;
}

static void simulate(bool shedd, const struct phase *phases, int nr_phases,
		     __u64 win_start_ns, const struct sim_config *cfg, struct sim_result *r)
{
	struct sim *s = calloc(1, sizeof(*s));
	const char *trace = getenv("SHEDD_SIM_TRACE");

	assert_non_null(s);
	sim_init(s, shedd, phases, nr_phases, win_start_ns, WIN_END_NS, cfg);
	sim_run(s, RUN_NS);
	summarize(s, r);
	/* SHEDD_SIM_TRACE=N prints every run's trace every N ticks. */
	if (trace && atoi(trace) > 0)
		print_trace(s, shedd ? "shedd" : "no shedding", (unsigned int)atoi(trace));
	free(s);
}

/* ---- the scenarios, run once by the group setup ---- */

#define NR_LOADS 3
static const double LOADS[NR_LOADS] = { 2, 4, 10 };

static struct sim_result with_shedd[NR_LOADS], without[NR_LOADS], recovery;

/* Variants at 4x: what must hold beyond the base model. */
enum variant {
	V_TICK_10MS, /* --tick-ms 10 */
	V_4_CPUS,    /* SYNs spread over 4 CPUs */
	V_EXPERIMENT, /* the experiments' server: 4 x 10 ms fixed, backlog 128, patience 250 ms */
	V_LOGNORMAL, /* log-normal service times, sigma 1.5 */
	NR_VARIANTS,
};
static const char *const VARIANT_NAME[NR_VARIANTS] = {
	"tick 10 ms", "4 CPUs", "4 x 10 ms fixed, backlog 128, patience 250 ms",
	"log-normal service, sigma 1.5",
};
static const struct sim_config VARIANT_CFG[NR_VARIANTS] = {
	[V_TICK_10MS] = { .tick_ns = 10 * MS },
	[V_4_CPUS] = { .ncpus = 4 },
	[V_EXPERIMENT] = { .workers = 4, .service_mean_ns = 10 * MS, .service_fixed = true,
			   .backlog = 128, .patience_ns = 250 * MS },
	[V_LOGNORMAL] = { .service_sigma = 1.5 },
};
static struct sim_result variant[NR_VARIANTS];

/* Recovery: 4x for 20 s, 0.5x for 10 s, 4x again, measured from 5 s after
 * the load came back. */
static const struct phase RECOVERY[] = {
	{ 20 * SEC, 4 }, { 30 * SEC, 0.5 }, { RUN_NS, 4 },
};
#define RECOVERY_NR_PHASES 3
#define RECOVERY_WIN_START_NS (35 * SEC)

static const char *const CLASS_NAME[NCLS] = {
	"critical_plus", "critical", "sheddable_plus", "sheddable",
};

static void print_table(void)
{
	int i;

	printf("# %d workers, exponential service of mean %llu ms: C = %.0f req/s; "
	       "backlog %d; patience %llu ms; window %llu-%llu s of %llu s\n",
	       WORKERS, SERVICE_MEAN_NS / MS, CAPACITY, BACKLOG, PATIENCE_NS / MS,
	       WIN_START_NS / SEC, WIN_END_NS / SEC, RUN_NS / SEC);
	printf("# load | goodput shedd | goodput none | served %% with shedd: cp / cr / sp / sh | mean rate | p99 sojourn shedd | none\n");
	for (i = 0; i < NR_LOADS; i++) {
		const struct sim_result *r = &with_shedd[i], *b = &without[i];

		printf("# %3.0fx | %11.1f %% | %10.1f %% | %8.1f / %5.1f / %5.1f / %5.1f         | %6.0f/s | %14.1f ms | %.1f ms\n",
		       r->load, 100 * r->goodput / CAPACITY, 100 * b->goodput / CAPACITY,
		       100 * r->served[CP], 100 * r->served[CR], 100 * r->served[SP],
		       100 * r->served[SH], r->mean_rate, r->p99_sojourn_ms,
		       b->p99_sojourn_ms);
	}
	for (i = 0; i < NR_LOADS; i++) {
		const struct sim_result *r = &with_shedd[i];

		printf("# %3.0fx controller: steady %.0f %%, overload %.0f %%, recovering %.0f %% "
		       "of ticks; overloaded by sojourn %u, depth %u, overflow %u ticks; "
		       "admitted %.0f/s\n",
		       r->load, 100 * r->mode_share[AIMD_STEADY],
		       100 * r->mode_share[AIMD_OVERLOAD], 100 * r->mode_share[AIMD_RECOVERING],
		       r->why_ticks[0], r->why_ticks[1], r->why_ticks[2], r->admitted_total_ps);
	}
	printf("# recovery 4x 0-20 s, 0.5x 20-30 s, 4x 30-60 s: goodput %.1f %% of C in %llu-%llu s, "
	       "mean rate %.0f/s, served cp %.1f %% cr %.1f %%; recovering seen in phases:%s%s%s\n",
	       100 * recovery.goodput / CAPACITY, RECOVERY_WIN_START_NS / SEC,
	       WIN_END_NS / SEC, recovery.mean_rate, 100 * recovery.served[CP],
	       100 * recovery.served[CR], recovery.seen_recovering[0] ? " 1" : "",
	       recovery.seen_recovering[1] ? " 2" : "", recovery.seen_recovering[2] ? " 3" : "");
	fflush(stdout);
}

static int run_scenarios(void **state)
{
	int i;

	for (i = 0; i < NR_LOADS; i++) {
		struct phase ph = { RUN_NS, LOADS[i] };

		simulate(true, &ph, 1, WIN_START_NS, NULL, &with_shedd[i]);
		simulate(false, &ph, 1, WIN_START_NS, NULL, &without[i]);
	}
	simulate(true, RECOVERY, RECOVERY_NR_PHASES, RECOVERY_WIN_START_NS, NULL, &recovery);
	for (i = 0; i < NR_VARIANTS; i++) {
		struct phase ph = { RUN_NS, 4 };

		simulate(true, &ph, 1, WIN_START_NS, &VARIANT_CFG[i], &variant[i]);
		printf("# variant %s, 4x: goodput %.1f %% of C, mean rate %.0f/s, "
		       "served cp %.1f %% cr %.1f %%, p99 sojourn %.1f ms; steady/overload/"
		       "recovering %.0f/%.0f/%.0f %% of ticks; overloaded by sojourn %u, "
		       "depth %u, overflow %u, stall %u ticks\n", VARIANT_NAME[i],
		       100 * variant[i].goodput / variant[i].capacity, variant[i].mean_rate,
		       100 * variant[i].served[CP], 100 * variant[i].served[CR],
		       variant[i].p99_sojourn_ms, 100 * variant[i].mode_share[AIMD_STEADY],
		       100 * variant[i].mode_share[AIMD_OVERLOAD],
		       100 * variant[i].mode_share[AIMD_RECOVERING], variant[i].why_ticks[0],
		       variant[i].why_ticks[1], variant[i].why_ticks[2], variant[i].why_ticks[4]);
	}
	print_table();
	return 0;
}

/* ---- the checks: every case is checked and told, then the test fails ---- */


static void check_none(const struct failures *f)
{
	if (f->n)
		fail_msg("%d case(s) failed, figures above", f->n);
}

static void shedd_keeps_goodput_near_capacity(void **state)
{
	struct failures f = { .n = 0 };
	int i;

	for (i = 0; i < NR_LOADS; i++) {
		const struct sim_result *r = &with_shedd[i];

		if (r->goodput < 0.90 * CAPACITY)
			failed(&f, "load %.0fx: goodput with shedd %.1f %% of C < 90 %% "
			       "(%.0f/s; admitted %.0f/s, late %.1f/s, overflow %.1f/s; "
			       "mean rate %.0f/s; steady/overload/recovering %.0f/%.0f/%.0f %% "
			       "of ticks; SHEDD_SIM_TRACE=10 prints the trace)",
			       LOADS[i], 100 * r->goodput / CAPACITY, r->goodput,
			       r->admitted_total_ps, r->late_ps, r->overflow_ps, r->mean_rate,
			       100 * r->mode_share[AIMD_STEADY], 100 * r->mode_share[AIMD_OVERLOAD],
			       100 * r->mode_share[AIMD_RECOVERING]);
	}
	check_none(&f);
}

static void without_shedding_goodput_collapses(void **state)
{
	struct failures f = { .n = 0 };

	/* The queue fills and holds BACKLOG / C ~ 1 s of work: every request
	 * waits past its patience, and is still served. Only 2x is required;
	 * 4x and 10x are in the table. */
	if (without[0].goodput >= 0.50 * CAPACITY)
		failed(&f, "load 2x: goodput without shedding %.1f %% of C >= 50 %% "
		       "(p99 sojourn %.1f ms)",
		       100 * without[0].goodput / CAPACITY, without[0].p99_sojourn_ms);
	check_none(&f);
}

static void critical_is_served_sheddable_is_shed(void **state)
{
	struct failures f = { .n = 0 };
	int i, c;

	for (i = 0; i < NR_LOADS; i++) {
		const struct sim_result *r = &with_shedd[i];

		for (c = CP; c <= CR; c++)
			if (r->served[c] < 0.99)
				failed(&f, "load %.0fx: %s served %.2f %% < 99 %% (offered %.1f/s, "
				       "admitted %.1f/s)", LOADS[i], CLASS_NAME[c],
				       100 * r->served[c], r->offered_ps[c], r->admitted_ps[c]);
		/* At 2x, the 600/s that critical and sheddable_plus leave is
		 * all sheddable can get: 37.5 % of its 1600/s. */
		if (r->served[SH] > 0.50)
			failed(&f, "load %.0fx: sheddable served %.1f %%: not shed",
			       LOADS[i], 100 * r->served[SH]);
	}
	check_none(&f);
}

static void every_class_gets_its_floor(void **state)
{
	struct failures f = { .n = 0 };
	int i, c;

	for (i = 0; i < NR_LOADS; i++) {
		const struct sim_result *r = &with_shedd[i];

		for (c = 0; c < NCLS; c++) {
			double floor = DEFAULT_FLOOR * r->mean_rate;
			double want = r->offered_ps[c] < floor ? r->offered_ps[c] : floor;

			/* 2 %: Poisson noise through a bucket over 45 s. */
			if (r->admitted_ps[c] < 0.98 * want)
				failed(&f, "load %.0fx: %s admitted %.1f/s < 98 %% of "
				       "min(demand %.1f/s, floor %.1f/s)", LOADS[i],
				       CLASS_NAME[c], r->admitted_ps[c], r->offered_ps[c], floor);
		}
	}
	check_none(&f);
}

static void recovers_after_a_lull(void **state)
{
	struct failures f = { .n = 0 };

	if (!recovery.seen_recovering[0] && !recovery.seen_recovering[1] &&
	    !recovery.seen_recovering[2])
		failed(&f, "the controller never ramped (mode recovering not seen)");
	if (recovery.goodput < 0.90 * CAPACITY)
		failed(&f, "final overload: goodput %.1f %% of C < 90 %% (admitted %.0f/s, "
		       "mean rate %.0f/s; steady/overload/recovering %.0f/%.0f/%.0f %% of ticks)",
		       100 * recovery.goodput / CAPACITY, recovery.admitted_total_ps,
		       recovery.mean_rate, 100 * recovery.mode_share[AIMD_STEADY],
		       100 * recovery.mode_share[AIMD_OVERLOAD],
		       100 * recovery.mode_share[AIMD_RECOVERING]);
	check_none(&f);
}

static void check_variants(struct failures *f)
{
	int i;

	for (i = 0; i < NR_VARIANTS; i++) {
		const struct sim_result *r = &variant[i];

		if (r->goodput < 0.90 * r->capacity)
			failed(f, "%s, 4x: goodput %.1f %% of C < 90 %% (admitted %.0f/s, "
			       "mean rate %.0f/s, late %.1f/s, overflow %.1f/s)", VARIANT_NAME[i],
			       100 * r->goodput / r->capacity, r->admitted_total_ps, r->mean_rate,
			       r->late_ps, r->overflow_ps);
		if (r->served[CP] < 0.99 || r->served[CR] < 0.99)
			failed(f, "%s, 4x: critical served %.1f %% / %.1f %% < 99 %%",
			       VARIANT_NAME[i], 100 * r->served[CP], 100 * r->served[CR]);
	}
}

/* The pipeline must hold whatever the tick, the CPU count and the server:
 * the controller turns a tick's counts into rates with the tick's length. */
static void variants_keep_goodput(void **state)
{
	struct failures f = { .n = 0 };

	check_variants(&f);
	check_none(&f);
}

/* A daemon stalled for 2 s at 100 ms ticks: the missed ticks are skipped,
 * and the next one is a whole tick away (not 19 ticks back to back). */
static void a_stall_skips_missed_ticks(void **state)
{
	__u64 deadline = 10 * SEC, now = 10 * SEC + 2 * SEC + 5 * MS;
	__u64 skipped = tick_next_deadline(&deadline, now, TICK_NS);

	assert_int_equal(skipped, 20);
	assert_int_equal(deadline, now + TICK_NS);
	/* On time: one tick later, nothing skipped. */
	deadline = 10 * SEC;
	assert_int_equal(tick_next_deadline(&deadline, 10 * SEC + 30 * MS, TICK_NS), 0);
	assert_int_equal(deadline, 10 * SEC + TICK_NS);
}

/* Backend listeners reach the controller as the protected ones do: the
 * worse group's minimum sojourn against the target (an eager front-end's
 * near-zero one does not hide it), the accepts of both, and the stall
 * guard when a backend's queue holds connections and nobody takes any. */
static void backend_signals_reach_the_controller(void **state)
{
	struct signal_report r = {
		.have_sojourn = true,
		.have_depth = true,
		.depth = 0, .backlog = 4096,
		.have_queue_left = true, .queue_left = 30,
		.have_completed = true, .completed = 30,
	};
	struct tick_input in = { .dt_ns = TICK_NS, .sig = &r };
	struct aimd_params p;
	struct aimd_state cs;
	struct aimd_signals sig;
	unsigned int why = 0;
	int i;

	aimd_defaults(&p);
	aimd_init(&cs, &p, 1000);
	/* The front takes at once (20 us); the backend's queue stands (80 ms). */
	for (i = 0; i < 30; i++)
		agg_add(&r.sojourn, 20000);
	for (i = 0; i < 20; i++)
		agg_add(&r.backend_sojourn, 80 * MS);
	tick_controller_signals(&in, 100, &sig);
	assert_int_equal(sig.sojourn_count, 50);
	assert_int_equal(sig.sojourn_min_ns, 80 * MS);
	for (i = 1; i <= 3; i++)
		why |= aimd_overloaded(&p, &cs, &sig, (__u64)i * TICK_NS);
	assert_true(why & AIMD_WHY_SOJOURN);
	/* Without the backend's samples the same tick is calm. */
	memset(&r.backend_sojourn, 0, sizeof(r.backend_sojourn));
	tick_controller_signals(&in, 100, &sig);
	aimd_init(&cs, &p, 1000);
	for (i = 1, why = 0; i <= 3; i++)
		why |= aimd_overloaded(&p, &cs, &sig, (__u64)i * TICK_NS);
	assert_int_equal(why, 0);

	/* The backend stopped, and so did the front: its queue (the fullest
	 * group, 10 of 16) holds connections, nobody accepts, none left. */
	memset(&r.sojourn, 0, sizeof(r.sojourn));
	r.depth = 10;
	r.backlog = 16;
	r.queue_left = 0;
	r.completed = 0;
	tick_controller_signals(&in, 100, &sig);
	aimd_init(&cs, &p, 1000);
	for (i = 1, why = 0; i <= 4; i++)
		why |= aimd_overloaded(&p, &cs, &sig, (__u64)i * TICK_NS);
	assert_true(why & AIMD_WHY_STALL);
}

/* No delay source at all: aimd falls back to the fixed start rate, and a
 * tick then neither ramps nor moves the limit, whatever the demand. */
static void blind_aimd_falls_back_to_a_fixed_rate(void **state)
{
	struct sim *s = calloc(1, sizeof(*s));
	struct signal_report r = { .have_completed = true, .completed = 100000 };
	__u64 syn[NCLS] = { 0, 0, 0, 100000 };
	struct tick_input in = { .dt_ns = TICK_NS, .sig = &r, .syn = syn, .admitted = 1000 };
	struct phase ph = { RUN_NS, 1 };
	int i;

	assert_non_null(s);
	sim_init(s, true, &ph, 1, WIN_START_NS, WIN_END_NS, NULL);
	assert_true(tick_blind_fallback(&s->tp, false, 700));
	assert_false(s->tp.aimd);
	tick_init(&s->tp, &s->ts, 700);
	for (i = 1; i <= 100; i++) {
		in.now_ns = (__u64)i * TICK_NS;
		assert_float_equal(tick_step(&s->tp, &s->ts, &in, s->next), 700, 1e-9);
	}
	/* With a source, aimd stays. */
	s->tp.aimd = true;
	assert_false(tick_blind_fallback(&s->tp, true, 700));
	assert_true(s->tp.aimd);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shedd_keeps_goodput_near_capacity),
		cmocka_unit_test(without_shedding_goodput_collapses),
		cmocka_unit_test(critical_is_served_sheddable_is_shed),
		cmocka_unit_test(every_class_gets_its_floor),
		cmocka_unit_test(recovers_after_a_lull),
		cmocka_unit_test(variants_keep_goodput),
		cmocka_unit_test(a_stall_skips_missed_ticks),
		cmocka_unit_test(blind_aimd_falls_back_to_a_fixed_rate),
		cmocka_unit_test(backend_signals_reach_the_controller),
	};

	return cmocka_run_group_tests_name("sim", tests, run_scenarios, NULL);
}
