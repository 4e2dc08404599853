// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* xdptx.c - the judgement of xdptx.h: are XDP_TX frames reaching the wire?
 * Pure: the daemon reads the driver and the program's counters and hands
 * them in; what it logs and writes follows from the returned event.
 */
#include <string.h>

#include "xdptx.h"

bool xdptx_is_error_stat(const char *name)
{
	return strstr(name, "xdp_tx_err") || strstr(name, "xdp_tx_drop");
}

bool xdptx_is_total_stat(const char *name)
{
	return !strpbrk(name, "0123456789");
}

/* A counter that went back (a driver reset, a queue removed) counts from
 * where it is now. */
static __u64 delta(__u64 now, __u64 before)
{
	return now >= before ? now - before : 0;
}

/* At least XDPTX_MIN_ERRORS of @sent frames lost, and at least half. */
static bool lost_most(__u64 errors, __u64 sent)
{
	return errors >= XDPTX_MIN_ERRORS && errors * 2 >= sent;
}

static enum xdptx_event block(struct xdptx_state *s, const struct xdptx_sample *in, int why,
			      __u64 lost, __u64 of)
{
	s->blocked = true;
	s->trial = false;
	s->streak = 0;
	s->why = why;
	s->lost = lost;
	s->of = of;
	s->next_trial_ns = in->now_ns + XDPTX_TRIAL_EVERY_NS;
	return XDPTX_EV_BLOCKED;
}

static enum xdptx_event restore(struct xdptx_state *s, int why, __u64 lost, __u64 of)
{
	s->blocked = false;
	s->trial = false;
	s->why = why;
	s->lost = lost;
	s->of = of;
	return XDPTX_EV_RESTORED;
}

enum xdptx_event xdptx_update(struct xdptx_state *s, const struct xdptx_sample *in)
{
	__u64 sent = s->started ? delta(in->sent, s->prev_sent) : 0;
	__u64 errors = s->started && in->have_errors ? delta(in->errors, s->prev_errors) : 0;
	int prev_hint = s->started ? s->prev_hint : XDPTX_HINT_NONE;

	s->started = true;
	s->prev_sent = in->sent;
	s->prev_errors = in->errors;
	s->prev_hint = in->hint;

	if (!s->blocked) {
		if (in->hint == XDPTX_HINT_BLOCKED)
			return block(s, in, XDPTX_WHY_HINT, errors, sent);
		if (in->hint == XDPTX_HINT_OK) {
			s->streak = 0;
			return XDPTX_EV_NONE;
		}
		if (lost_most(errors, sent)) {
			if (!s->streak)
				s->lost = s->of = 0;
			s->lost += errors;
			s->of += sent;
			if (++s->streak >= XDPTX_CONFIRM_TICKS)
				return block(s, in, XDPTX_WHY_ERRORS, s->lost, s->of);
		} else if (sent >= XDPTX_MIN_ERRORS) {
			s->streak = 0;
		}
		return XDPTX_EV_NONE;
	}
	/* Blocked. The operator's fix, as the driver reports it. */
	if (in->hint == XDPTX_HINT_OK && prev_hint == XDPTX_HINT_BLOCKED)
		return restore(s, XDPTX_WHY_HINT, 0, 0);
	if (s->trial) {
		s->trial_sent += sent;
		s->trial_errors += errors;
		if (in->hint == XDPTX_HINT_BLOCKED || lost_most(s->trial_errors, s->trial_sent) ||
		    in->now_ns >= s->trial_end_ns) {
			/* Still a black hole, or no evidence either way:
			 * off again, quietly (nothing changed for anyone). */
			s->trial = false;
			s->next_trial_ns = in->now_ns + XDPTX_TRIAL_EVERY_NS;
			return XDPTX_EV_NONE;
		}
		if (s->trial_sent >= XDPTX_MIN_ERRORS)
			return restore(s, XDPTX_WHY_TRIAL, s->trial_errors, s->trial_sent);
		return XDPTX_EV_NONE;
	}
	/* Only the counters can tell whether it works again: try. The
	 * driver's hint, when it has one that says blocked, is not tried
	 * against. */
	if (in->have_errors && in->hint != XDPTX_HINT_BLOCKED && in->now_ns >= s->next_trial_ns) {
		s->trial = true;
		s->trial_sent = 0;
		s->trial_errors = 0;
		s->trial_end_ns = in->now_ns + XDPTX_TRIAL_NS;
	}
	return XDPTX_EV_NONE;
}

void xdptx_carry_blocked(struct xdptx_state *s, __u64 now_ns)
{
	if (s->blocked)
		return;
	s->blocked = true;
	s->trial = false;
	s->why = XDPTX_WHY_ERRORS;
	s->lost = s->of = 0;
	s->next_trial_ns = now_ns + XDPTX_TRIAL_EVERY_NS;
}
