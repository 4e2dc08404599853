// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_xdptx.c - the judgement whether XDP_TX frames leave the interface
 * (user/daemon/xdptx.h), tick by tick in simulated time: the driver's features
 * and its error counters against what the program sent; the trials that
 * bring the answers back, and the names of the drivers' counters.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "xdptx.h"

#define TICK_NS 100000000ULL /* 100 ms */

/* A driver and a program, as the daemon reads them every tick. */
struct sim {
	struct xdptx_state s;
	struct xdptx_sample in;
};

static void sim_init(struct sim *m, int hint, bool have_errors)
{
	memset(m, 0, sizeof(*m));
	m->in.now_ns = 1000000000ULL;
	m->in.hint = hint;
	m->in.have_errors = have_errors;
	m->in.sent = 5000; /* counters that did not start at 0 */
	m->in.errors = 300;
	assert_int_equal(xdptx_update(&m->s, &m->in), hint == XDPTX_HINT_BLOCKED ?
			 XDPTX_EV_BLOCKED : XDPTX_EV_NONE);
}

/* One tick in which the program sent @sent frames and the driver lost
 * @lost of them. Returns the event. */
static enum xdptx_event sim_tick(struct sim *m, __u64 sent, __u64 lost)
{
	m->in.now_ns += TICK_NS;
	m->in.sent += sent;
	m->in.errors += lost;
	return xdptx_update(&m->s, &m->in);
}

static void names_of_error_counters(void **state)
{
	(void)state;
	/* veth, mlx5, virtio_net, mvneta/fec */
	assert_true(xdptx_is_error_stat("rx_queue_0_xdp_tx_errors"));
	assert_true(xdptx_is_error_stat("rx_queue_15_xdp_tx_errors"));
	assert_true(xdptx_is_error_stat("rx_xdp_tx_err"));
	assert_true(xdptx_is_error_stat("tx_queue_3_xdp_tx_drops"));
	assert_true(xdptx_is_error_stat("rx_xdp_tx_errors"));
	/* what is sent, and ndo_xdp_xmit's (redirected into the interface) */
	assert_false(xdptx_is_error_stat("rx_queue_0_xdp_tx"));
	assert_false(xdptx_is_error_stat("rx_xdp_tx_xmit"));
	assert_false(xdptx_is_error_stat("tx_queue_0_xdp_xmit_errors"));
	assert_false(xdptx_is_error_stat("rx_queue_0_xdp_drops"));
	assert_false(xdptx_is_error_stat("peer_ifindex"));
	/* mlx5's total beside its channels' */
	assert_true(xdptx_is_total_stat("rx_xdp_tx_err"));
	assert_false(xdptx_is_total_stat("rx0_xdp_tx_err"));
	assert_false(xdptx_is_total_stat("rx_queue_0_xdp_tx_errors"));
}

/* A veth whose peer has neither XDP nor GRO: off at the first sample,
 * once; the counters then see nothing (nothing is sent). */
static void hint_blocks_at_start(void **state)
{
	struct sim m;
	int i;

	(void)state;
	sim_init(&m, XDPTX_HINT_BLOCKED, true);
	assert_int_equal(m.s.why, XDPTX_WHY_HINT);
	assert_int_equal(xdptx_blocked_flag(&m.s), 1);
	/* A minute without a trial: the driver says it cannot work. */
	for (i = 0; i < 600; i++)
		assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_NONE);
	assert_int_equal(xdptx_blocked_flag(&m.s), 1);
}

/* The operator gives the peer an XDP program: back on at once, once;
 * it loses its program again: off again, once. */
static void hint_turns_ok_and_back(void **state)
{
	struct sim m;

	(void)state;
	sim_init(&m, XDPTX_HINT_BLOCKED, true);
	m.in.hint = XDPTX_HINT_OK;
	assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_RESTORED);
	assert_int_equal(m.s.why, XDPTX_WHY_HINT);
	assert_int_equal(xdptx_blocked_flag(&m.s), 0);
	assert_int_equal(sim_tick(&m, 500, 0), XDPTX_EV_NONE);
	m.in.hint = XDPTX_HINT_BLOCKED;
	assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_BLOCKED);
	assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_NONE);
	assert_int_equal(xdptx_blocked_flag(&m.s), 1);
}

/* A working path (the NIC-like testbed), judged by the counters alone:
 * the odd drop of a full ring, even a tick that loses most in a burst, is
 * no black hole, whatever the load. */
static void working_path_never_blocks(void **state)
{
	struct sim m;
	int i;

	(void)state;
	sim_init(&m, XDPTX_HINT_NONE, true);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(sim_tick(&m, 400, i % 50 == 0 ? 30 : 0), XDPTX_EV_NONE);
		assert_int_equal(xdptx_blocked_flag(&m.s), 0);
		/* A burst that overflows the ring for one tick. */
		if (i % 100 == 7)
			assert_int_equal(sim_tick(&m, 100, 90), XDPTX_EV_NONE);
	}
	/* Quiet ticks, and ticks of errors fewer than the minimum. */
	assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_NONE);
	assert_int_equal(sim_tick(&m, 3, XDPTX_MIN_ERRORS - 1), XDPTX_EV_NONE);
	assert_int_equal(sim_tick(&m, 3, XDPTX_MIN_ERRORS - 1), XDPTX_EV_NONE);
	assert_int_equal(xdptx_blocked_flag(&m.s), 0);
}

/* A veth whose features say the peer takes the frames loses them only to
 * a full ring: its errors are never a black hole. */
static void hint_ok_errors_are_no_black_hole(void **state)
{
	struct sim m;
	int i;

	(void)state;
	sim_init(&m, XDPTX_HINT_OK, true);
	for (i = 0; i < 10; i++)
		assert_int_equal(sim_tick(&m, 100, 90), XDPTX_EV_NONE);
	assert_int_equal(xdptx_blocked_flag(&m.s), 0);
}

/* Without a hint (a kernel before 6.3, another driver): the counters find
 * the black hole in the first tick that sheds; the message gets the
 * figures of that tick. */
static void counters_block(void **state)
{
	struct sim m;

	(void)state;
	sim_init(&m, XDPTX_HINT_NONE, true);
	assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_NONE);
	assert_int_equal(sim_tick(&m, 120, 119), XDPTX_EV_NONE);
	assert_int_equal(xdptx_blocked_flag(&m.s), 0);
	assert_int_equal(sim_tick(&m, 100, 100), XDPTX_EV_BLOCKED);
	assert_int_equal(m.s.why, XDPTX_WHY_ERRORS);
	assert_int_equal(m.s.lost, 219);
	assert_int_equal(m.s.of, 220);
	assert_int_equal(xdptx_blocked_flag(&m.s), 1);
	/* Said once: blocked ticks are no news. */
	assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_NONE);
	/* Half lost is a black hole too; less than half is not. */
	sim_init(&m, XDPTX_HINT_NONE, true);
	assert_int_equal(sim_tick(&m, 100, 49), XDPTX_EV_NONE);
	assert_int_equal(sim_tick(&m, 100, 50), XDPTX_EV_NONE);
	assert_int_equal(sim_tick(&m, 100, 50), XDPTX_EV_BLOCKED);
	/* A quiet tick (a lull in the shedding) does not break the row ... */
	sim_init(&m, XDPTX_HINT_NONE, true);
	assert_int_equal(sim_tick(&m, 100, 100), XDPTX_EV_NONE);
	assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_NONE);
	assert_int_equal(sim_tick(&m, 2, 0), XDPTX_EV_NONE);
	assert_int_equal(sim_tick(&m, 100, 100), XDPTX_EV_BLOCKED);
	/* ... a tick that delivers does. */
	sim_init(&m, XDPTX_HINT_NONE, true);
	assert_int_equal(sim_tick(&m, 100, 100), XDPTX_EV_NONE);
	assert_int_equal(sim_tick(&m, 100, 0), XDPTX_EV_NONE);
	assert_int_equal(sim_tick(&m, 100, 100), XDPTX_EV_NONE);
	assert_int_equal(xdptx_blocked_flag(&m.s), 0);
}

/* A driver without error counters: the counters judge nothing. */
static void no_counters_no_verdict(void **state)
{
	struct sim m;

	(void)state;
	sim_init(&m, XDPTX_HINT_NONE, false);
	assert_int_equal(sim_tick(&m, 100, 100), XDPTX_EV_NONE);
	assert_int_equal(xdptx_blocked_flag(&m.s), 0);
}

/* A counter that goes back (a driver reset) is no loss. */
static void counter_reset_is_no_loss(void **state)
{
	struct sim m;

	(void)state;
	sim_init(&m, XDPTX_HINT_NONE, true);
	m.in.errors = 0;
	assert_int_equal(sim_tick(&m, 100, 0), XDPTX_EV_NONE);
	assert_int_equal(xdptx_blocked_flag(&m.s), 0);
}

/* Blocked on the counters: every XDPTX_TRIAL_EVERY_NS the answers are
 * on for a trial; a trial that loses most ends at once, quietly; one
 * that delivers brings them back, once. */
static void trials(void **state)
{
	struct sim m;
	__u64 ticks = XDPTX_TRIAL_EVERY_NS / TICK_NS, i;

	(void)state;
	sim_init(&m, XDPTX_HINT_NONE, true);
	assert_int_equal(sim_tick(&m, 100, 100), XDPTX_EV_NONE);
	assert_int_equal(sim_tick(&m, 100, 100), XDPTX_EV_BLOCKED);
	for (i = 1; i < ticks; i++) {
		assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_NONE);
		assert_int_equal(xdptx_blocked_flag(&m.s), 1);
	}
	/* The trial starts: the flag is off while it runs. */
	assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_NONE);
	assert_true(m.s.trial);
	assert_int_equal(xdptx_blocked_flag(&m.s), 0);
	/* Still a black hole: off again in the tick it shows, quietly. */
	assert_int_equal(sim_tick(&m, 40, 40), XDPTX_EV_NONE);
	assert_false(m.s.trial);
	assert_int_equal(xdptx_blocked_flag(&m.s), 1);
	/* The next trial, after another interval, delivers. */
	for (i = 1; i < ticks; i++)
		assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_NONE);
	assert_int_equal(xdptx_blocked_flag(&m.s), 1);
	assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_NONE);
	assert_true(m.s.trial);
	assert_int_equal(sim_tick(&m, 3, 0), XDPTX_EV_NONE); /* too few to tell */
	assert_int_equal(sim_tick(&m, 40, 1), XDPTX_EV_RESTORED);
	assert_int_equal(m.s.why, XDPTX_WHY_TRIAL);
	assert_int_equal(m.s.of, 43);
	assert_int_equal(m.s.lost, 1);
	assert_int_equal(xdptx_blocked_flag(&m.s), 0);
	assert_int_equal(sim_tick(&m, 40, 0), XDPTX_EV_NONE);
}

/* A trial with nothing to send (no shedding) ends after XDPTX_TRIAL_NS,
 * still blocked: no evidence is no news. */
static void idle_trial_ends_blocked(void **state)
{
	struct sim m;
	__u64 ticks = XDPTX_TRIAL_EVERY_NS / TICK_NS, i;

	(void)state;
	sim_init(&m, XDPTX_HINT_NONE, true);
	assert_int_equal(sim_tick(&m, 100, 100), XDPTX_EV_NONE);
	assert_int_equal(sim_tick(&m, 100, 100), XDPTX_EV_BLOCKED);
	for (i = 0; i < ticks; i++)
		sim_tick(&m, 0, 0);
	assert_true(m.s.trial);
	for (i = 0; i < XDPTX_TRIAL_NS / TICK_NS; i++)
		assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_NONE);
	assert_false(m.s.trial);
	assert_int_equal(xdptx_blocked_flag(&m.s), 1);
}

/* An adopted program its shedd had found blocked stays blocked, and is
 * tried like one blocked on the counters. */
static void carried_over(void **state)
{
	struct sim m;
	__u64 ticks = XDPTX_TRIAL_EVERY_NS / TICK_NS, i;

	(void)state;
	sim_init(&m, XDPTX_HINT_NONE, true);
	xdptx_carry_blocked(&m.s, m.in.now_ns);
	assert_int_equal(xdptx_blocked_flag(&m.s), 1);
	for (i = 1; i < ticks; i++)
		assert_int_equal(sim_tick(&m, 0, 0), XDPTX_EV_NONE);
	assert_int_equal(xdptx_blocked_flag(&m.s), 1);
	sim_tick(&m, 0, 0);
	assert_true(m.s.trial);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(names_of_error_counters),
		cmocka_unit_test(hint_blocks_at_start),
		cmocka_unit_test(hint_turns_ok_and_back),
		cmocka_unit_test(working_path_never_blocks),
		cmocka_unit_test(counters_block),
		cmocka_unit_test(no_counters_no_verdict),
		cmocka_unit_test(counter_reset_is_no_loss),
		cmocka_unit_test(trials),
		cmocka_unit_test(idle_trial_ends_blocked),
		cmocka_unit_test(hint_ok_errors_are_no_black_hole),
		cmocka_unit_test(carried_over),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
