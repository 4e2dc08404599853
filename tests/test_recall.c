// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_recall.c - which open connections --recall ends
 * (user/core/recall_pick.c): only idle ones (the server answered last,
 * nothing unread, unsent or unacknowledged, quiet for RECALL_IDLE_MS, at
 * least one exchange), the lowest class first, the youngest first, within
 * each class's excess and the budget.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "recall_pick.h"

#define CP SHEDD_CRITICAL_PLUS
#define CR SHEDD_CRITICAL
#define SP SHEDD_SHEDDABLE_PLUS
#define SH SHEDD_SHEDDABLE

static struct recall_seen idle_one(void)
{
	return (struct recall_seen){
		.last_data_sent_ms = 800,
		.last_data_recv_ms = 810, /* the request, then its answer */
		.bytes_received = 120,
		.bytes_acked = 4000,
	};
}

static void idle_is_answered_quiet_and_empty(void **state)
{
	struct recall_seen s = idle_one();

	assert_true(recall_idle(&s));
	s = idle_one();
	s.last_data_recv_ms = 700; /* a request came after the last answer */
	assert_false(recall_idle(&s));
	s = idle_one();
	s.rqueue = 80; /* a request not read yet */
	assert_false(recall_idle(&s));
	s = idle_one();
	s.wqueue = 1000; /* an answer not sent yet */
	assert_false(recall_idle(&s));
	s = idle_one();
	s.unacked = 2; /* an answer on its way */
	assert_false(recall_idle(&s));
	s = idle_one();
	s.last_data_sent_ms = s.last_data_recv_ms = RECALL_IDLE_MS - 1; /* just answered */
	assert_false(recall_idle(&s));
	s = idle_one();
	s.bytes_received = 0; /* connected, no request yet */
	assert_false(recall_idle(&s));
	s = idle_one();
	s.bytes_acked = 0; /* nothing answered yet */
	assert_false(recall_idle(&s));
}

static void lowest_class_then_youngest_first(void **state)
{
	struct recall_cand c[] = {
		{ .opened_ns = 100, .cls = SH, .idx = 0 },
		{ .opened_ns = 300, .cls = SH, .idx = 1 },
		{ .opened_ns = 200, .cls = CR, .idx = 2 },
		{ .opened_ns = 900, .cls = CR, .idx = 3 },
		{ .opened_ns = 500, .cls = SH, .idx = 4 },
	};
	double want[SHEDD_NR_CLASSES] = { [CR] = 1, [SH] = 2 };
	int k;

	k = recall_pick(c, 5, want, 10);
	assert_int_equal(k, 3);
	/* sheddable's two youngest, then critical's youngest */
	assert_int_equal(c[0].idx, 4);
	assert_int_equal(c[1].idx, 1);
	assert_int_equal(c[2].idx, 3);
}

static void within_the_budget_and_each_excess(void **state)
{
	struct recall_cand c[] = {
		{ .opened_ns = 1, .cls = SH, .idx = 0 },
		{ .opened_ns = 2, .cls = SH, .idx = 1 },
		{ .opened_ns = 3, .cls = SP, .idx = 2 },
	};
	double want[SHEDD_NR_CLASSES] = { [SP] = 5, [SH] = 1.9 };
	double none[SHEDD_NR_CLASSES] = { 0 };

	/* 1.9 rounds down: one of sheddable; the budget of 2 ends there. */
	assert_int_equal(recall_pick(c, 3, want, 2), 2);
	assert_int_equal(c[0].idx, 1);
	assert_int_equal(c[1].idx, 2);
	assert_int_equal(recall_pick(c, 3, want, 0), 0);
	assert_int_equal(recall_pick(c, 3, none, 10), 0);
	/* A class not over its share gives nothing, whoever is idle. */
	want[SH] = 0;
	assert_int_equal(recall_pick(c, 3, want, 10), 1);
	assert_int_equal(c[0].idx, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(idle_is_answered_quiet_and_empty),
		cmocka_unit_test(lowest_class_then_youngest_first),
		cmocka_unit_test(within_the_budget_and_each_excess),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
