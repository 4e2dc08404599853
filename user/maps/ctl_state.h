/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* ctl_state.h - the operator's hand on the control loop, as pure functions:
 * the rate pin (ctl_cmd) applied around one tick, and the pinned record of
 * the controller (ctl_state) that shedctl and a restarted shedd read. No
 * I/O: the daemon reads and writes the maps (ctl.c), the tests call these.
 */
#ifndef SHEDD_CTL_STATE_H
#define SHEDD_CTL_STATE_H

#include <stdbool.h>
#include "options.h"
#include "tick.h"

/* The largest rate an operator may pin, mSYN/s: --rate's bound. */
#define CTL_MAX_PINNED_MRATE (MAX_TOTAL_RATE_PER_SEC * 1000ULL)

/**
 * struct ctl - what the daemon keeps about the operator's commands.
 * @cmd:     the command read at the start of the tick (ctl_cmd)
 * @signals: the signal fields of the last tick, for ctl_state
 */
struct ctl {
	struct shedd_ctl_cmd cmd;
	struct shedd_ctl_state signals;
};

/* The pinned rate in SYN/s, or 0 when not pinned. */
double ctl_pinned_rate(const struct shedd_ctl_cmd *cmd);

/*
 * ctl_pin_before() - before tick_step(): while pinned, the controller runs
 * from the pinned rate, so its verdicts, its mode and its ramp are about the
 * rate in force and it keeps measuring; after an unpin it carries on from
 * the pinned rate. A fixed-rate shedd allocates the pinned rate, and its
 * --rate again once unpinned.
 */
void ctl_pin_before(const struct tick_params *p, struct tick_state *s,
		    const struct shedd_ctl_cmd *cmd);

/* At start: ctl_pin_before(), and the limit a fresh program is first
 * given is the pinned rate, if any. */
void ctl_pin_start(const struct tick_params *p, struct tick_state *s,
		   const struct shedd_ctl_cmd *cmd);

/*
 * ctl_pin_after() - after tick_step(): while pinned, the pinned rate
 * replaces the controller's limit and the allocator splits it into @out.
 */
void ctl_pin_after(const struct tick_params *p, struct tick_state *s,
		   const struct shedd_ctl_cmd *cmd, struct shedd_class_rate out[SHEDD_NR_CLASSES]);

/* Keep the signals of the tick @in (after tick_step(), whose demand it
 * takes from @s) for the record. */
void ctl_note_signals(struct ctl *c, const struct tick_params *p, const struct tick_state *s,
		      const struct tick_input *in);

/*
 * ctl_state_fill() - the ctl_state record: the controller's state
 * (aimd_export()) or a fixed rate's, what is applied, the pin, the last
 * tick's signals; stamped @now_ns.
 */
void ctl_state_fill(const struct ctl *c, const struct tick_params *p, const struct tick_state *s,
		    __u64 now_ns, struct shedd_ctl_state *out);

#endif /* SHEDD_CTL_STATE_H */
