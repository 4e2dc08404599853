/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* xdptx.h - do the frames shedd's program sends back with XDP_TX (cookie
 * SYN-ACKs, RSTs) leave the interface? A pure judgement, tick by tick, of
 * what the driver says (a veth's xdp-features) and of its XDP transmit
 * error counters against what the program sent; the daemon reads those
 * (probe.h) and writes the verdict into settings.tx_blocked.
 *
 * veth (drivers/net/veth.c) hands an XDP_TX frame to its peer only when
 * the peer's receive queue has NAPI, i.e. the peer runs an XDP program or
 * has GRO on; otherwise the frame is dropped and counted in the sender's
 * rx_queue_N_xdp_tx_errors. The same condition sets NETDEV_XDP_ACT_NDO_XMIT
 * in the sender's xdp-features (netdev netlink, kernel >= 6.3).
 */
#ifndef SHEDD_XDPTX_H
#define SHEDD_XDPTX_H

#include <stdbool.h>
#include <linux/types.h>

/* The fewest frames lost, in a tick or a trial, that show a black hole:
 * below it a few drops of a full ring are noise. */
#ifndef XDPTX_MIN_ERRORS
#define XDPTX_MIN_ERRORS 8
#endif
/* Ticks in a row that lose most of what they send before the counters
 * call it a black hole, which loses every frame every tick: a burst that
 * overflows a ring for a moment does not. */
#ifndef XDPTX_CONFIRM_TICKS
#define XDPTX_CONFIRM_TICKS 2
#endif
/* Blocked on the counters' word alone (no driver hint that says it
 * works again), the answers are tried again this often, for at most
 * XDPTX_TRIAL_NS: a trial that loses frames ends at once. */
#define XDPTX_TRIAL_EVERY_NS (30ULL * 1000000000ULL)
#define XDPTX_TRIAL_NS (2ULL * 1000000000ULL)

/* What the driver's features say about XDP_TX, for the interface and the
 * attach mode: nothing (not a veth, generic XDP, a kernel before 6.3), or
 * that frames do or do not reach the peer. */
enum xdptx_hint {
	XDPTX_HINT_NONE = 0,
	XDPTX_HINT_BLOCKED = 1,
	XDPTX_HINT_OK = 2,
};

/* Why the answers are off, or came back. */
enum xdptx_why {
	XDPTX_WHY_NONE = 0,
	XDPTX_WHY_HINT = 1,   /* the driver's features */
	XDPTX_WHY_ERRORS = 2, /* the driver counted the frames as errors */
	XDPTX_WHY_TRIAL = 3,  /* a trial delivered them (restored only) */
};

/* What changed in a tick: the caller logs each once. */
enum xdptx_event {
	XDPTX_EV_NONE = 0,
	XDPTX_EV_BLOCKED = 1,  /* answers off from now on */
	XDPTX_EV_RESTORED = 2, /* answers on again */
};

/**
 * struct xdptx_sample - one tick's readings, cumulative counters.
 * @now_ns:      CLOCK_MONOTONIC
 * @sent:        frames the program answered with XDP_TX (cookies, RSTs)
 * @errors:      the driver's XDP_TX error counters, summed over queues
 * @have_errors: the driver has such counters (@errors means something)
 * @hint:        enum xdptx_hint
 */
struct xdptx_sample {
	__u64 now_ns;
	__u64 sent;
	__u64 errors;
	bool have_errors;
	int hint;
};

/**
 * struct xdptx_state - the judgement between ticks.
 * @started:      a first sample was taken (the deltas start from it)
 * @blocked:      the answers are off
 * @trial:        blocked, but the answers are on for a trial
 * @why:          enum xdptx_why of the last event
 * @prev_sent:    the last sample's @sent ...
 * @prev_errors:  ... and @errors
 * @prev_hint:    ... and @hint
 * @trial_sent:   frames sent in the current trial ...
 * @trial_errors: ... and lost
 * @trial_end_ns: when the current trial ends without evidence
 * @next_trial_ns: when the next trial may start
 * @streak:       ticks in a row that lost most of what they sent
 * @lost:         frames lost in those ticks (or the trial) of the last
 *                event ...
 * @of:           ... of so many sent
 */
struct xdptx_state {
	bool started;
	bool blocked;
	bool trial;
	int why;
	__u64 prev_sent, prev_errors;
	int prev_hint;
	__u64 trial_sent, trial_errors;
	__u64 trial_end_ns, next_trial_ns;
	unsigned int streak;
	__u64 lost, of;
};

/* Judge one tick. Off when the driver's features say the frames go
 * nowhere, or when, without features that say they arrive, the driver
 * counted at least XDPTX_MIN_ERRORS of them, and at least half of what
 * the program sent, as errors in XDPTX_CONFIRM_TICKS ticks in a row (a
 * tick that sends XDPTX_MIN_ERRORS and loses less breaks the row). A
 * veth whose features say its peer takes the frames loses them only to a
 * full ring (or a frame over the peer's MTU): no black hole. On again
 * when the features turn from blocked to ok (the operator gave the peer
 * XDP or GRO), or when a trial (the counters' verdict only) sends
 * XDPTX_MIN_ERRORS frames and loses fewer than half. Returns the event. */
enum xdptx_event xdptx_update(struct xdptx_state *s, const struct xdptx_sample *in);

/* A shedd that adopts a program its predecessor had found blocked (the
 * pinned settings.tx_blocked) and that the driver's features do not
 * clear: blocked from the start, the next trial XDPTX_TRIAL_EVERY_NS
 * from @now_ns. Takes a first sample first (xdptx_update()). */
void xdptx_carry_blocked(struct xdptx_state *s, __u64 now_ns);

/* The value of settings.tx_blocked for @s: off, but on during a trial. */
static inline __u8 xdptx_blocked_flag(const struct xdptx_state *s)
{
	return s->blocked && !s->trial;
}

/* The ethtool statistics name (ETH_SS_STATS) of an XDP_TX error counter
 * of a driver: veth's rx_queue_N_xdp_tx_errors, mlx5's rx_xdp_tx_err,
 * virtio_net's tx_queue_N_xdp_tx_drops. Not ndo_xdp_xmit's (xdp_xmit_*:
 * frames redirected into the interface, not shedd's). */
bool xdptx_is_error_stat(const char *name);

/* A statistic of the whole device, not of one queue or channel: a name
 * without a digit. A driver that has both (mlx5: rx_xdp_tx_err beside
 * rx0_xdp_tx_err, ...) would count each error twice: only its totals are
 * summed then. */
bool xdptx_is_total_stat(const char *name);

#endif /* SHEDD_XDPTX_H */
