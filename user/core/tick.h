/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* tick.h - one tick of the control loop, as a pure function: the signals of
 * the tick (with its measured length) -> controller -> allocator -> per-class
 * rate records. The daemon does the I/O around it; the simulation calls the
 * same function, so what is tested is what runs.
 */
#ifndef SHEDD_TICK_H
#define SHEDD_TICK_H

#include <stdbool.h>
#include <linux/types.h>
#include "aimd.h"
#include "alloc.h"
#include "conc.h"
#include "signal_parse.h"

/**
 * struct tick_params - fixed for the daemon's life.
 * @aimd:           true: the controller finds the limit; false: @fixed_rate
 * @fixed_rate:     the limit without the controller (SYN/s)
 * @burst_per_rate: bucket depth in seconds of the limit (0.1: 100 ms)
 * @ncpus:          CPUs the demand is counted on
 * @cp:             the controller's parameters
 * @ap:             the allocator's parameters
 * @conc:           the door's concurrency limit (conc.h; with the
 *                  controller only)
 * @default_class:  the class of peers no prefix names
 */
struct tick_params {
	bool aimd;
	double fixed_rate;
	double burst_per_rate;
	int ncpus;
	struct aimd_params cp;
	struct alloc_params ap;
	struct conc_params conc;
	int default_class;
};

/**
 * struct tick_state - what the pipeline keeps between ticks.
 * @cs:      the controller's state
 * @limit:   the total rate being allocated (SYN/s)
 * @demand:  smoothed offered SYN/s, [class * ncpus + cpu]; owned by caller
 * @instant: scratch, the same size; owned by caller
 * @conc:    the concurrency limit's state (its rate caps apply in
 *           tick_allocate())
 */
struct tick_state {
	struct aimd_state cs;
	double limit;
	double *demand;
	double *instant;
	struct conc_state conc;
};

/**
 * struct tick_input - what one tick measured.
 * @now_ns:   monotonic time of the tick
 * @dt_ns:    measured time since the previous tick (not the nominal tick:
 *            after a stall it is the whole stall)
 * @sig:      the signals read in the tick
 * @syn:      SYNs offered in the tick, [class * ncpus + cpu]
 * @admitted: SYNs admitted in the tick, all classes and CPUs
 */
struct tick_input {
	__u64 now_ns;
	__u64 dt_ns;
	const struct signal_report *sig;
	const __u64 *syn;
	__u64 admitted;
};

/* Start at @start_rate (the controller's start, or the fixed rate). */
void tick_init(const struct tick_params *p, struct tick_state *s, double start_rate);

/* A daemon's fresh start: with the controller, open (aimd_open(): no
 * evidence of overload yet) at @start_rate, or at max_rate when @start_rate
 * is 0 (no --rate, no running program's rate): a shedder that knows
 * nothing of the service admits what arrives until the service shows it
 * cannot take it. Without it, as tick_init(). */
void tick_start(const struct tick_params *p, struct tick_state *s, double start_rate);

/* The class rate records for the current limit and demand: the one place
 * the allocator is called. The caller publishes them (alloc_publish()). */
void tick_allocate(const struct tick_params *p, const struct tick_state *s,
		   struct shedd_class_rate out[SHEDD_NR_CLASSES]);

/* The controller's view of a tick's signals. */
void tick_controller_signals(const struct tick_input *in, double demand,
			     struct aimd_signals *out);

/* One tick: demand from @in->syn over the measured length, the controller
 * (with aimd), then tick_allocate() into @out. Returns the new limit. */
double tick_step(const struct tick_params *p, struct tick_state *s,
		 const struct tick_input *in, struct shedd_class_rate out[SHEDD_NR_CLASSES]);

/* The lease record of a tick (include/lease.h) into @out: the heartbeat
 * @now_ns, the lease @lease_ns (0: off; the heartbeat is still stamped,
 * for readers), the climb as long as the lease, and the fail-static total
 * @fail_rate split among the classes by the allocator with the demand the
 * tick measured, each class's floor of it counted as demanded (so every
 * class keeps its floor), at least 1 SYN/s and 1 token each; @pinned: an
 * operator's pin holds, no lease. */
void tick_lease(const struct tick_params *p, const struct tick_state *s, double fail_rate,
		__u64 lease_ns, bool pinned, __u64 now_ns, struct shedd_lease *out);

/* Advance @deadline_ns by one tick of @tick_ns. Ticks missed while the
 * daemon was stalled (the new deadline already past at @now_ns) are skipped,
 * not replayed back to back: the deadline becomes @now_ns + @tick_ns, and the
 * next tick measures the stall in its length. Returns the ticks skipped. */
__u64 tick_next_deadline(__u64 *deadline_ns, __u64 now_ns, __u64 tick_ns);

/* With no source of delay at all (@have_delay_source false), an aimd law
 * is an open-loop ramp to max_rate: switch @p to the fixed rate
 * @start_rate. Returns true when it fell back (the caller says so, loudly). */
bool tick_blind_fallback(struct tick_params *p, bool have_delay_source, double start_rate);

/* True when @r holds a delay signal (sojourn, depth or latency) the
 * controller can close its loop on. */
bool tick_has_delay_signal(const struct signal_report *r);

#endif /* SHEDD_TICK_H */
