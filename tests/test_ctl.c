// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_ctl.c - the operator's rate pin around the tick pipeline, and the
 * ctl_state record: while pinned the allocator splits the pinned rate and
 * the controller keeps measuring; after an unpin it carries on from the
 * pinned rate; a record of version 1 (an older shedd) still resumes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ctl_state.h"

#define NCPUS 2
#define MS 1000000ULL

struct rig {
	struct tick_params p;
	struct tick_state s;
	double demand[SHEDD_NR_CLASSES * NCPUS];
	double instant[SHEDD_NR_CLASSES * NCPUS];
	__u64 syn[SHEDD_NR_CLASSES * NCPUS];
	struct signal_report sig;
	struct shedd_class_rate out[SHEDD_NR_CLASSES];
	__u64 now;
};

static void rig_init(struct rig *r, bool aimd, double start)
{
	int c;

	memset(r, 0, sizeof(*r));
	r->p.aimd = aimd;
	r->p.fixed_rate = start;
	r->p.burst_per_rate = 0.1;
	r->p.ncpus = NCPUS;
	aimd_defaults(&r->p.cp);
	r->p.cp.tick_ns = 100 * MS;
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		r->p.ap.floor[c] = 0.1;
	r->s.demand = r->demand;
	r->s.instant = r->instant;
	tick_init(&r->p, &r->s, start);
	r->now = 1000 * MS;
}

/* One tick with the daemon's order of calls: offered SYN/s of the lowest
 * class, and the accept queue's depth over its backlog of 100. */
static void rig_tick(struct rig *r, const struct shedd_ctl_cmd *cmd, __u64 offered, __u64 depth)
{
	struct ctl c = { .cmd = *cmd };
	struct tick_input in;

	r->now += 100 * MS;
	memset(r->syn, 0, sizeof(r->syn));
	r->syn[SHEDD_SHEDDABLE * NCPUS] = offered / 10;
	memset(&r->sig, 0, sizeof(r->sig));
	r->sig.have_depth = true;
	r->sig.depth = depth;
	r->sig.backlog = 100;
	in = (struct tick_input){ .now_ns = r->now, .dt_ns = 100 * MS, .sig = &r->sig,
				  .syn = r->syn, .admitted = 0 };
	ctl_pin_before(&r->p, &r->s, cmd);
	tick_step(&r->p, &r->s, &in, r->out);
	ctl_pin_after(&r->p, &r->s, cmd, r->out);
	ctl_note_signals(&c, &r->p, &r->s, &in);
}

static double out_total(const struct rig *r)
{
	double t = 0;
	int c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		t += (double)r->out[c].rate_per_sec;
	return t;
}

static struct shedd_ctl_cmd pin_cmd(double rate)
{
	return (struct shedd_ctl_cmd){ .flags = SHEDD_CMD_RATE_PINNED,
				       .pinned_mrate = (__u64)(rate * 1000) };
}

/* The lease record of a tick (tick_lease()): the heartbeat always; with a
 * lease, the fail-static total split as the allocator splits a limit, by
 * the demand measured, every class's floor counted as demanded (a flood in
 * the lowest class: the idle ones keep their floors of 10 %), at least
 * 1 SYN/s a class; a pin marks it held; off, no lease. */
static void lease_record_of_a_tick(void **state)
{
	const struct shedd_ctl_cmd none = { 0 };
	struct shedd_lease l;
	__u64 sum = 0;
	struct rig r;
	int c;

	(void)state;
	rig_init(&r, false, 100);
	rig_tick(&r, &none, 5000, 0);
	tick_lease(&r.p, &r.s, 1000, 60000 * MS, false, r.now, &l);
	assert_int_equal(l.heartbeat_ns, r.now);
	assert_int_equal(l.lease_ns, 60000 * MS);
	assert_int_equal(l.relax_ns, 60000 * MS);
	assert_int_equal(l.flags, 0);
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		assert_true(l.fail_rate_per_sec[c] >= 1 && l.fail_burst[c] >= 1);
		sum += l.fail_rate_per_sec[c];
	}
	assert_int_equal(sum, 1000);
	assert_int_equal(l.fail_rate_per_sec[SHEDD_CRITICAL_PLUS], 100);
	assert_int_equal(l.fail_rate_per_sec[SHEDD_SHEDDABLE], 700);
	assert_int_equal(l.fail_burst[SHEDD_SHEDDABLE], 70);
	/* Floors of 0 and a rate too small to share: 1 a class all the same. */
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		r.p.ap.floor[c] = 0;
	tick_lease(&r.p, &r.s, 1, 60000 * MS, false, r.now, &l);
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		assert_int_equal(l.fail_rate_per_sec[c], 1);
	tick_lease(&r.p, &r.s, 1000, 60000 * MS, true, r.now, &l);
	assert_int_equal(l.flags, SHEDD_LEASE_PINNED);
	tick_lease(&r.p, &r.s, 1000, 0, false, r.now, &l);
	assert_int_equal(l.heartbeat_ns, r.now);
	assert_int_equal(l.lease_ns, 0);
	assert_int_equal(l.fail_rate_per_sec[SHEDD_SHEDDABLE], 0);
}

/* Overload while pinned: the controller sees it (mode, reasons) but the
 * allocator gets the pinned rate, tick after tick. */
static void pinned_rate_is_written_while_the_controller_measures(void **state)
{
	struct shedd_ctl_cmd pin = pin_cmd(700);
	struct shedd_ctl_state st;
	struct ctl c = { .cmd = pin };
	struct rig r;
	int i;

	rig_init(&r, true, 2000);
	for (i = 0; i < 10; i++) {
		rig_tick(&r, &pin, 5000, 95); /* depth 95 % of the backlog */
		assert_float_equal(r.s.limit, 700, 1e-9);
		assert_float_equal(out_total(&r), 700, 1.0);
	}
	assert_int_equal(r.s.cs.mode, AIMD_OVERLOAD);
	assert_true(r.s.cs.why & AIMD_WHY_DEPTH);
	/* It decides from the pinned rate: its own cut is below it. */
	assert_true(r.s.cs.rate < 700);
	ctl_state_fill(&c, &r.p, &r.s, r.now, &st);
	assert_int_equal(st.version, SHEDD_CTL_STATE_VERSION);
	assert_int_equal(st.flags & SHEDD_CTL_PINNED, SHEDD_CTL_PINNED);
	assert_int_equal(st.pinned_mrate, 700000);
	assert_int_equal(st.applied_mrate, 700000);
	assert_int_equal(st.mode, AIMD_OVERLOAD);
	assert_true(st.limit_mrate < 700000);
}

/* Unpinned, the controller carries on from the pinned rate, not from where
 * it was before the pin: its last pinned tick cut 700 by beta, the first
 * unpinned one cuts that again. */
static void unpin_carries_on_from_the_pinned_rate(void **state)
{
	struct shedd_ctl_cmd pin = pin_cmd(700), none = { 0 };
	struct rig r;
	int i;

	rig_init(&r, true, 2000);
	for (i = 0; i < 5; i++)
		rig_tick(&r, &pin, 5000, 95);
	rig_tick(&r, &none, 5000, 95);
	assert_float_equal(r.s.limit, 700 * r.p.cp.beta * r.p.cp.beta, 1.0);
	assert_float_equal(out_total(&r), r.s.limit, 1.0);
}

/* A fixed rate: the pin replaces it, the unpin gives it back. */
static void fixed_rate_pin_and_unpin(void **state)
{
	struct shedd_ctl_cmd pin = pin_cmd(300), none = { 0 };
	struct shedd_ctl_state st;
	struct ctl c = { .cmd = pin };
	struct rig r;

	rig_init(&r, false, 1000);
	rig_tick(&r, &pin, 5000, 0);
	assert_float_equal(out_total(&r), 300, 1.0);
	ctl_state_fill(&c, &r.p, &r.s, r.now, &st);
	assert_int_equal(st.controller, SHEDD_CTL_FIXED);
	assert_int_equal(st.limit_mrate, 0);
	assert_int_equal(st.applied_mrate, 300000);
	rig_tick(&r, &none, 5000, 0);
	assert_float_equal(out_total(&r), 1000, 1.0);
}

/* A flag without a rate, or no flag, is no pin; a rate past --rate's bound
 * is held at the bound. */
static void pinned_rate_bounds(void **state)
{
	struct shedd_ctl_cmd cmd = { .flags = SHEDD_CMD_RATE_PINNED };

	assert_float_equal(ctl_pinned_rate(&cmd), 0, 0);
	cmd = (struct shedd_ctl_cmd){ .pinned_mrate = 5000 };
	assert_float_equal(ctl_pinned_rate(&cmd), 0, 0);
	cmd = pin_cmd(5);
	assert_float_equal(ctl_pinned_rate(&cmd), 5, 1e-9);
	cmd.pinned_mrate = ~0ULL;
	assert_float_equal(ctl_pinned_rate(&cmd), (double)MAX_TOTAL_RATE_PER_SEC, 0);
}

/* A version 1 record (an older shedd: the appended fields are 0) resumes;
 * a fixed-rate record does not. */
static void older_record_resumes_fixed_does_not(void **state)
{
	struct shedd_ctl_state st;
	struct ctl c = { 0 };
	struct aimd_state got;
	struct rig r;
	int i;

	rig_init(&r, true, 2000);
	for (i = 0; i < 5; i++)
		rig_tick(&r, &c.cmd, 5000, 95);
	ctl_state_fill(&c, &r.p, &r.s, r.now, &st);
	memset((char *)&st + SHEDD_CTL_STATE_V1_SIZE, 0, sizeof(st) - SHEDD_CTL_STATE_V1_SIZE);
	st.version = 1;
	assert_int_equal(aimd_import(&r.p.cp, &got, &st, r.now), 0);
	assert_int_equal(got.mode, AIMD_OVERLOAD);
	assert_float_equal(got.rate, r.s.cs.rate, 1e-3);
	st.version = SHEDD_CTL_STATE_VERSION + 1;
	assert_int_equal(aimd_import(&r.p.cp, &got, &st, r.now), -1);

	rig_init(&r, false, 1000);
	ctl_state_fill(&c, &r.p, &r.s, r.now, &st);
	assert_int_equal(aimd_import(&r.p.cp, &got, &st, r.now), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pinned_rate_is_written_while_the_controller_measures),
		cmocka_unit_test(unpin_carries_on_from_the_pinned_rate),
		cmocka_unit_test(fixed_rate_pin_and_unpin),
		cmocka_unit_test(pinned_rate_bounds),
		cmocka_unit_test(older_record_resumes_fixed_does_not),
		cmocka_unit_test(lease_record_of_a_tick),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
