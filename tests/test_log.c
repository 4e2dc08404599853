// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_log.c - shedd's log lines: the plain form, the journal's "<N>"
 * level prefix, one prefixed line per line of text, cut lines that still
 * end in a newline.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "log.h"

static void plain_lines(void **state)
{
	char buf[256];

	log_format(buf, sizeof(buf), false, LOG_ERR, NULL, "read stats: No such file");
	assert_string_equal(buf, "shedd: read stats: No such file\n");
	log_format(buf, sizeof(buf), false, LOG_INFO, "eth1", "mode=fixed limit=100/s");
	assert_string_equal(buf, "shedd eth1: mode=fixed limit=100/s\n");
}

static void journal_lines(void **state)
{
	char buf[256];

	log_format(buf, sizeof(buf), true, LOG_WARNING, NULL, "sock_diag unavailable");
	assert_string_equal(buf, "<4>sock_diag unavailable\n");
	log_format(buf, sizeof(buf), true, LOG_NOTICE, "eth1", "mode=overload");
	assert_string_equal(buf, "<5>eth1: mode=overload\n");
	/* Levels out of range are clamped to the journal's. */
	log_format(buf, sizeof(buf), true, 42, NULL, "x");
	assert_string_equal(buf, "<7>x\n");
	log_format(buf, sizeof(buf), true, -1, NULL, "x");
	assert_string_equal(buf, "<0>x\n");
}

/* A text of several lines (libbpf's verifier log) is several events at
 * the same level; its trailing newline is no empty line. */
static void every_line_prefixed(void **state)
{
	char buf[256];

	log_format(buf, sizeof(buf), true, LOG_DEBUG, NULL, "libbpf: a\n0: r1 = 0\n");
	assert_string_equal(buf, "<7>libbpf: a\n<7>0: r1 = 0\n");
	log_format(buf, sizeof(buf), false, LOG_DEBUG, NULL, "a\n\nb");
	assert_string_equal(buf, "shedd: a\nshedd: \nshedd: b\n");
}

static void cut_lines_end_in_newline(void **state)
{
	char buf[16];
	size_t n;

	n = log_format(buf, sizeof(buf), true, LOG_ERR, NULL, "a long message that is cut");
	assert_int_equal(n, sizeof(buf) - 1);
	assert_int_equal(strlen(buf), n);
	assert_memory_equal(buf, "<3>a long mess\n", n);
	assert_int_equal(log_format(buf, 1, true, LOG_ERR, NULL, "x"), 0);
	assert_string_equal(buf, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_lines),
		cmocka_unit_test(journal_lines),
		cmocka_unit_test(every_line_prefixed),
		cmocka_unit_test(cut_lines_end_in_newline),
	};

	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
