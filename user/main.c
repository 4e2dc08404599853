// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* main.c - shedd, the daemon: load or adopt the XDP shedder on one interface,
 * then every tick: read signals -> controller -> allocator -> write the
 * per-class, per-CPU rates; a status line every second.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "aimd.h"
#include "alloc.h"
#include "shedd.h"
#include "loader.h"
#include "options.h"
#include "signals.h"
#include "status.h"

static volatile sig_atomic_t exiting;
static int verbosity;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && verbosity < 2)
		return 0;
	if (level == LIBBPF_INFO && verbosity < 1)
		return 0;
	return vfprintf(stderr, fmt, args);
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_until(struct timespec *deadline, __u32 tick_ms)
{
	deadline->tv_nsec += (long)tick_ms * 1000000L;
	while (deadline->tv_nsec >= 1000000000L) {
		deadline->tv_nsec -= 1000000000L;
		deadline->tv_sec++;
	}
	/* EINTR from SIGTERM ends the wait early: the loop then sees exiting. */
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline, NULL);
}

struct daemon {
	struct loader l;
	struct signals sig;
	const struct shedd_options *o;
	struct alloc_params ap;
	struct aimd_params cp;
	struct aimd_state cs;
	double limit;                   /* the total rate being allocated */
	struct signal_report second;    /* merged over the status interval */
	__u64 second_overflows, second_drops;
	struct shedd_stats *prev, *cur; /* per-CPU snapshots */
	struct shedd_stats status_prev; /* summed, at the last status line */
	double *demand;                 /* smoothed SYN/s, [class * ncpus + cpu] */
	double *instant;
	struct shedd_class_rate rates[SHEDD_NR_CLASSES];
	double last_tick, last_status;
};

/* --burst is the depth for --rate; a controlled limit keeps the same depth
 * in time. Without --burst: rate / 10, 100 ms of traffic. */
static double total_burst(const struct daemon *d)
{
	double b = d->limit / 10;

	if (d->o->burst)
		b = (double)d->o->burst * d->limit /
		    (double)(d->o->rate_per_sec ? d->o->rate_per_sec : 1);
	return b < 1 ? 1 : b;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static int apply_rates(struct daemon *d)
{
	int err;

	alloc_rates(&d->ap, d->limit, total_burst(d), d->demand, d->l.ncpus, d->rates);
	err = loader_write_rates(&d->l, d->rates, now_ns());
	if (err)
		fprintf(stderr, "shedd: write rates: %s\n", strerror(-err));
	return err;
}

/* The controller's state into the pinned ctl_state, for a restart. */
static int save_controller(struct daemon *d)
{
	struct shedd_ctl_state st;
	int err;

	/* A fixed rate leaves no controller state: an empty record, so a
	 * later adoption starts from the program's rate, not an older one. */
	memset(&st, 0, sizeof(st));
	if (d->o->controller == CONTROLLER_AIMD)
		aimd_export(&d->cs, now_ns(), &st);
	err = loader_write_ctl(&d->l, &st);
	if (err)
		fprintf(stderr, "shedd: write controller state: %s\n", strerror(-err));
	return err;
}

/* Keep a second's worth of signals for the status line. */
static void merge_second(struct daemon *d, const struct signal_report *r)
{
	struct signal_report *s = &d->second;

	s->have_sojourn |= r->have_sojourn;
	agg_merge(&s->sojourn, &r->sojourn);
	s->have_depth |= r->have_depth;
	if (r->have_depth) {
		s->depth = r->depth; /* the latest reading */
		s->backlog = r->backlog;
	}
	s->have_netstat |= r->have_netstat;
	s->overflows += r->overflows;
	s->drops += r->drops;
	s->have_latency |= r->have_latency;
	agg_merge(&s->latency, &r->latency);
	s->latency_bad += r->latency_bad;
}

/* signals -> controller: one tick of the AIMD law, and a line whenever the
 * controller changes mode or ramp stage, so the ramp can be followed. */
static void control(struct daemon *d, const struct signal_report *r, double demand, __u64 now)
{
	struct aimd_signals in = {
		.have_sojourn = r->have_sojourn,
		.sojourn_count = r->sojourn.count,
		.sojourn_min_ns = r->sojourn.min_ns,
		.have_depth = r->have_depth,
		.depth = r->depth,
		.backlog = r->backlog,
		.overflows = r->drops > r->overflows ? r->drops : r->overflows,
		.have_latency = r->have_latency && r->latency.count > 0,
		.latency_p99_ns = agg_quantile(&r->latency, 0.99),
		.demand = demand,
	};
	enum aimd_mode was = d->cs.mode;
	unsigned int why = d->cs.why;
	int stage = d->cs.stage;

	d->limit = aimd_update(&d->cp, &d->cs, &in, now);
	/* A line at every change of mode, of ramp stage, or of the reasons
	 * for an overload. */
	if (d->cs.mode != was || (d->cs.mode == AIMD_RECOVERING && d->cs.stage != stage) ||
	    (d->cs.mode == AIMD_OVERLOAD && (d->cs.why & ~why))) {
		if (d->cs.mode == AIMD_RECOVERING)
			fprintf(stderr, "shedd %s: mode=recovering stage=%d/%d limit=%.0f/s "
					"(%.0f%% of last good %.0f/s)\n",
				d->o->iface, d->cs.stage + 1, d->cp.nr_stages, d->limit,
				100 * d->cp.ramp[d->cs.stage], d->cs.last_good);
		else
			fprintf(stderr, "shedd %s: mode=%s limit=%.0f/s last_good=%.0f/s "
					"peak_accept=%.0f/s%s%s%s%s%s\n", d->o->iface,
				aimd_mode_name(d->cs.mode), d->limit, d->cs.last_good, d->cs.peak_accept,
				d->cs.why & AIMD_WHY_SOJOURN ? " why=sojourn" : "",
				d->cs.why & AIMD_WHY_DEPTH ? " why=depth" : "",
				d->cs.why & AIMD_WHY_OVERFLOW ? " why=overflow" : "",
				d->cs.why & AIMD_WHY_LATENCY ? " why=latency" : "",
				d->cs.why & AIMD_WHY_STALL ? " why=stall" : "");
	}
}

/* The signal half of the status line; returns its length. */
static size_t signals_format(char *buf, size_t len, const struct daemon *d, double dt)
{
	const struct signal_report *s = &d->second;
	int off;

	off = snprintf(buf, len, "mode=%s ",
		       d->o->controller == CONTROLLER_AIMD ? aimd_mode_name(d->cs.mode) : "fixed");
	if (s->have_sojourn)
		off += snprintf(buf + off, len - (size_t)off,
				"accepts=%.1f/s sojourn_ms=%.2f/%.2f/%.2f/%.2f ",
				dt > 0 ? (double)s->sojourn.count / dt : 0, s->sojourn.min_ns / 1e6,
				agg_quantile(&s->sojourn, 0.5) / 1e6,
				agg_quantile(&s->sojourn, 0.99) / 1e6, s->sojourn.max_ns / 1e6);
	if (s->have_depth)
		off += snprintf(buf + off, len - (size_t)off, "depth=%llu/%llu ",
				(unsigned long long)s->depth, (unsigned long long)s->backlog);
	if (s->have_netstat)
		off += snprintf(buf + off, len - (size_t)off, "overflows=%llu drops=%llu ",
				(unsigned long long)s->overflows, (unsigned long long)s->drops);
	if (s->have_latency)
		off += snprintf(buf + off, len - (size_t)off, "latency_n=%llu latency_p99_ms=%.2f bad=%llu ",
				(unsigned long long)s->latency.count,
				agg_quantile(&s->latency, 0.99) / 1e6,
				(unsigned long long)s->latency_bad);
	return off < 0 ? 0 : (size_t)off < len ? (size_t)off : len - 1;
}

static int tick(struct daemon *d)
{
	int n = d->l.ncpus, i, err;
	double t = now_sec(), total_demand;
	struct shedd_stats *swap;
	struct signal_report r;

	err = loader_read_stats(&d->l, d->cur);
	if (err) {
		fprintf(stderr, "shedd: read stats: %s\n", strerror(-err));
		return err;
	}
	stats_demand(d->prev, d->cur, n, t - d->last_tick, d->instant);
	total_demand = 0;
	for (i = 0; i < SHEDD_NR_CLASSES * n; i++) {
		d->demand[i] = alloc_demand(d->demand[i], d->instant[i]);
		total_demand += d->instant[i];
	}
	d->last_tick = t;
	swap = d->prev;
	d->prev = d->cur;
	d->cur = swap;

	signals_read(&d->sig, &r);
	merge_second(d, &r);
	if (d->o->controller == CONTROLLER_AIMD)
		control(d, &r, total_demand, now_ns());

	if ((err = apply_rates(d)) || (err = save_controller(d)))
		return err;

	if (t - d->last_status >= 1.0) {
		struct shedd_stats sum;
		char line[1024];
		size_t off;

		stats_sum(d->prev, n, &sum);
		off = signals_format(line, sizeof(line), d, t - d->last_status);
		status_format(line + off, sizeof(line) - off, &d->status_prev, &sum,
			      t - d->last_status, d->limit);
		fprintf(stderr, "shedd %s: %s\n", d->o->iface, line);
		d->status_prev = sum;
		d->last_status = t;
		memset(&d->second, 0, sizeof(d->second));
	}
	return 0;
}

static void controller_params(const struct shedd_options *o, struct aimd_params *p)
{
	int i;

	aimd_defaults(p);
	if (o->target_delay_ns)
		p->target_delay_ns = o->target_delay_ns;
	if (o->interval_ns)
		p->interval_ns = o->interval_ns;
	if (o->min_rate)
		p->min_rate = (double)o->min_rate;
	if (o->max_rate)
		p->max_rate = (double)o->max_rate;
	if (p->min_rate > p->max_rate)
		p->min_rate = p->max_rate;
	if (o->step)
		p->alpha_per_sec = (double)o->step;
	if (o->depth_frac > 0)
		p->depth_frac = o->depth_frac;
	if (o->ramp_hold_ns)
		p->stage_hold_ns = o->ramp_hold_ns;
	p->latency_target_ns = o->latency_target_ns;
	if (o->nr_ramp >= 0) {
		p->nr_stages = o->nr_ramp;
		for (i = 0; i < o->nr_ramp; i++)
			p->ramp[i] = o->ramp[i];
	}
}

/* An adopting shedd's controller: without --rate, from the state the last
 * one pinned (mode, ramp stage, last good rate), or failing that from the
 * rate the program is shedding at; otherwise from --rate. */
static void controller_start(struct daemon *d)
{
	const struct shedd_options *o = d->o;
	struct shedd_ctl_state st;
	double adopted = 0;

	aimd_init(&d->cs, &d->cp, (double)o->rate_per_sec);
	if (!d->l.adopted || o->rate_set)
		return;
	if (o->controller == CONTROLLER_AIMD && !loader_read_ctl(&d->l, &st) &&
	    !aimd_import(&d->cp, &d->cs, &st, now_ns())) {
		fprintf(stderr, "shedd: controller resumes: mode=%s stage=%d limit=%.0f/s "
				"last_good=%.0f/s peak_accept=%.0f/s\n",
			aimd_mode_name(d->cs.mode), d->cs.stage + 1, d->cs.rate, d->cs.last_good,
			d->cs.peak_accept);
		return;
	}
	if (!loader_read_total_rate(&d->l, &adopted) && adopted > 0)
		aimd_init(&d->cs, &d->cp, adopted);
}

static int run(struct shedd_options *o)
{
	struct daemon d = { .o = o };
	struct timespec deadline;
	int err, c, n;

	err = loader_open(&d.l, o);
	if (err)
		return err;
	/* Two namespaces may each have an IFACE: outside the initial one the
	 * default latency socket carries the namespace, as the pins do. */
	if (!o->latency_socket_set && d.l.ns_tag[0])
		snprintf(o->latency_socket, sizeof(o->latency_socket), "/run/shedd/%s/%s.sock",
			 d.l.ns_tag, o->iface);
	n = d.l.ncpus;
	d.prev = calloc((size_t)n, sizeof(*d.prev));
	d.cur = calloc((size_t)n, sizeof(*d.cur));
	d.demand = calloc((size_t)(SHEDD_NR_CLASSES * n), sizeof(*d.demand));
	d.instant = calloc((size_t)(SHEDD_NR_CLASSES * n), sizeof(*d.instant));
	if (!d.prev || !d.cur || !d.demand || !d.instant) {
		fprintf(stderr, "shedd: out of memory\n");
		err = -ENOMEM;
		goto out;
	}
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		d.ap.floor[c] = o->floor[c];
	d.ap.headroom = DEFAULT_HEADROOM;
	controller_params(o, &d.cp);
	controller_start(&d);
	d.limit = o->controller == CONTROLLER_AIMD ? d.cs.rate : (double)o->rate_per_sec;
	signals_open(&d.sig, o, n);

	if ((err = loader_configure(&d.l, o)))
		goto out;
	if ((err = loader_read_stats(&d.l, d.prev))) {
		fprintf(stderr, "shedd: read stats: %s\n", strerror(-err));
		goto out;
	}
	stats_sum(d.prev, n, &d.status_prev);
	/* A fresh program starts with an even split; an adopted one keeps its
	 * rates until the first tick has measured demand. */
	if (!d.l.adopted && (err = apply_rates(&d)))
		goto out;
	if ((err = save_controller(&d)))
		goto out;
	/* Only now, with every map written, does the program see a packet. */
	if ((err = loader_attach(&d.l, o)))
		goto out;
	fprintf(stderr, "shedd: %s %s (ifindex %d, %d CPUs), %s rate %.0f SYN/s, pins in %s\n",
		d.l.adopted ? "adopted the running shedd on" : "attached to", o->iface,
		d.l.ifindex, n, o->controller == CONTROLLER_AIMD ? "aimd, start" : "fixed",
		d.limit, d.l.pin_dir);
	if (o->controller == CONTROLLER_AIMD)
		fprintf(stderr, "shedd: aimd target_delay=%.1fms interval=%.0fms depth=%.0f%% "
				"min=%.0f max=%.0f beta=%.2f ramp=%d stages x %.1fs latency_target=%s\n",
			d.cp.target_delay_ns / 1e6, d.cp.interval_ns / 1e6, 100 * d.cp.depth_frac,
			d.cp.min_rate, d.cp.max_rate, d.cp.beta, d.cp.nr_stages,
			d.cp.stage_hold_ns / 1e9, o->latency_target_ns ? "on" : "off");

	d.last_tick = d.last_status = now_sec();
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	while (!exiting) {
		sleep_until(&deadline, o->tick_ms);
		if (exiting)
			break;
		if ((err = tick(&d)))
			break;
	}
out:
	signals_close(&d.sig);
	if (!o->latency_socket_set && d.l.ns_tag[0]) {
		char dir[sizeof(o->latency_socket)];

		snprintf(dir, sizeof(dir), "/run/shedd/%s", d.l.ns_tag);
		rmdir(dir); /* only if empty: the folder of the default socket */
	}
	/* Fail static: only a stop asked for (SIGINT/SIGTERM without
	 * --keep-on-exit) detaches. An error leaves the program shedding at
	 * its last rates for a supervisor to restart and adopt. */
	loader_close(&d.l, o->keep_on_exit || err);
	if (err && (d.l.attached || d.l.adopted))
		fprintf(stderr, "shedd: exiting on error; the program stays attached to %s and "
				"keeps shedding at its last rates (a restarted shedd adopts it; "
				"remove it with: shedd --iface %s --remove)\n", o->iface, o->iface);
	else if (o->keep_on_exit && !err)
		fprintf(stderr, "shedd: exiting; the program stays attached to %s "
				"(remove it with: shedd --iface %s --remove)\n", o->iface, o->iface);
	free(d.prev);
	free(d.cur);
	free(d.demand);
	free(d.instant);
	return err;
}

int main(int argc, char **argv)
{
	struct shedd_options o;
	char out[4096], err_msg[512];
	struct sigaction sa;
	int ret;

	ret = options_parse(argc, argv, &o, out, sizeof(out), err_msg, sizeof(err_msg));
	if (ret == OPTIONS_EXIT) {
		fputs(out, stdout);
		options_free(&o);
		return 0;
	}
	if (ret == OPTIONS_ERROR) {
		fprintf(stderr, "shedd: %s\n", err_msg);
		options_free(&o);
		return 2;
	}
	verbosity = o.verbose;
	libbpf_set_print(libbpf_print);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	ret = o.remove ? loader_remove(&o) : run(&o);
	options_free(&o);
	return ret ? 1 : 0;
}
