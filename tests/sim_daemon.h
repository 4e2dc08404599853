/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* sim_daemon.h - what the simulations that run the daemon's own tick
 * (test_sim.c, test_cold_start.c, test_keepalive.c, test_listeners.c)
 * share: its tick parameters at the daemon's defaults, and failures told
 * one by one as TAP comments before the test fails.
 */
#ifndef SHEDD_SIM_DAEMON_H
#define SHEDD_SIM_DAEMON_H

#include <stdarg.h>
#include <stdio.h>

#include "aimd.h"
#include "tick.h"
#include "options.h" /* DEFAULT_FLOOR, DEFAULT_HEADROOM */

/* The daemon's defaults (options_table[] and aimd_defaults()) on @ncpus
 * CPUs, the controller on; @demand and @instant are the caller's arrays
 * of SHEDD_NR_CLASSES x @ncpus. A simulation sets what it varies after. */
static inline void sim_daemon_defaults(struct tick_params *tp, struct tick_state *ts, int ncpus,
				       double *demand, double *instant)
{
	int c;

	tp->aimd = true;
	tp->ncpus = ncpus;
	tp->burst_per_rate = 0.1;
	aimd_defaults(&tp->cp);
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		tp->ap.floor[c] = DEFAULT_FLOOR;
	tp->ap.headroom = DEFAULT_HEADROOM;
	conc_defaults(&tp->conc); /* --conn-limit auto */
	tp->default_class = SHEDD_SHEDDABLE;
	ts->demand = demand;
	ts->instant = instant;
}

/* Failed checks: each told at once with its figures, the test failed
 * once all are told. */
struct failures {
	int n;
};

static inline void __attribute__((format(printf, 2, 3)))
failed(struct failures *f, const char *fmt, ...)
{
	va_list ap;

	f->n++;
	fputs("# FAIL: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

#endif /* SHEDD_SIM_DAEMON_H */
