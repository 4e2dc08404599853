// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* main.c - shedd, the daemon: load or adopt the XDP shedder on one interface,
 * then every tick read the counters, split the admitted rate across classes
 * and CPUs, and write the rates back; a status line every second.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>

#include "alloc.h"
#include "loader.h"
#include "options.h"
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
	const struct shedd_options *o;
	struct alloc_params ap;
	struct shedd_stats *prev, *cur; /* per-CPU snapshots */
	struct shedd_stats status_prev; /* summed, at the last status line */
	double *demand;                 /* smoothed SYN/s, [class * ncpus + cpu] */
	double *instant;
	struct shedd_rate *rates;
	double last_tick, last_status;
};

static double total_burst(const struct shedd_options *o)
{
	double b = o->burst ? (double)o->burst : (double)o->rate_per_sec / 10;

	return b < 1 ? 1 : b;
}

static int apply_rates(struct daemon *d)
{
	int err;

	alloc_rates(&d->ap, (double)d->o->rate_per_sec, total_burst(d->o), d->demand,
		    d->l.ncpus, d->rates);
	err = loader_write_rates(&d->l, d->rates);
	if (err)
		fprintf(stderr, "shedd: write rates: %s\n", strerror(-err));
	return err;
}

static int tick(struct daemon *d)
{
	int n = d->l.ncpus, i, err;
	double t = now_sec();
	struct shedd_stats *swap;

	err = loader_read_stats(&d->l, d->cur);
	if (err) {
		fprintf(stderr, "shedd: read stats: %s\n", strerror(-err));
		return err;
	}
	stats_demand(d->prev, d->cur, n, t - d->last_tick, d->instant);
	for (i = 0; i < SHEDD_NR_CLASSES * n; i++)
		d->demand[i] = alloc_demand(d->demand[i], d->instant[i]);
	d->last_tick = t;
	swap = d->prev;
	d->prev = d->cur;
	d->cur = swap;

	if ((err = apply_rates(d)))
		return err;

	if (t - d->last_status >= 1.0) {
		struct shedd_stats sum;
		char line[512];

		stats_sum(d->prev, n, &sum);
		status_format(line, sizeof(line), &d->status_prev, &sum,
			      t - d->last_status, (double)d->o->rate_per_sec);
		fprintf(stderr, "shedd %s: %s\n", d->o->iface, line);
		d->status_prev = sum;
		d->last_status = t;
	}
	return 0;
}

static int run(const struct shedd_options *o)
{
	struct daemon d = { .o = o };
	struct timespec deadline;
	int err, c, n;

	err = loader_open(&d.l, o);
	if (err)
		return err;
	n = d.l.ncpus;
	d.prev = calloc((size_t)n, sizeof(*d.prev));
	d.cur = calloc((size_t)n, sizeof(*d.cur));
	d.demand = calloc((size_t)(SHEDD_NR_CLASSES * n), sizeof(*d.demand));
	d.instant = calloc((size_t)(SHEDD_NR_CLASSES * n), sizeof(*d.instant));
	d.rates = calloc((size_t)(SHEDD_NR_CLASSES * n), sizeof(*d.rates));
	if (!d.prev || !d.cur || !d.demand || !d.instant || !d.rates) {
		fprintf(stderr, "shedd: out of memory\n");
		err = -ENOMEM;
		goto out;
	}
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		d.ap.floor[c] = o->floor[c];
	d.ap.cpu_min_share = DEFAULT_CPU_MIN_SHARE;
	d.ap.headroom = DEFAULT_HEADROOM;

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
	fprintf(stderr, "shedd: %s %s (ifindex %d, %d CPUs), rate %llu SYN/s, pins in %s\n",
		d.l.adopted ? "adopted the running shedd on" : "attached to", o->iface,
		d.l.ifindex, n, (unsigned long long)o->rate_per_sec, d.l.pin_dir);

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
	loader_close(&d.l, o->keep_on_exit);
	if (o->keep_on_exit && !err)
		fprintf(stderr, "shedd: exiting; the program stays attached to %s "
				"(remove it with: shedd --iface %s --remove)\n", o->iface, o->iface);
	free(d.prev);
	free(d.cur);
	free(d.demand);
	free(d.instant);
	free(d.rates);
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
