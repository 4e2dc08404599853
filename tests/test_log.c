// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_log.c - shedd's log lines: the plain form, the journal's "<N>"
 * level prefix, one prefixed line per line of text, cut lines that still
 * end in a newline.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

/* An event far longer than a line buffer (libbpf's verifier log) is
 * written whole, each of its lines prefixed. */
static void long_events_are_not_cut(void **state)
{
	enum { NR_LINES = 5000, WIDTH = 40 };
	char *text = malloc(NR_LINES * (WIDTH + 1) + 1), got[128];
	FILE *f = tmpfile();
	int saved = dup(STDERR_FILENO), i, n = 0;

	assert_non_null(text);
	assert_non_null(f);
	for (i = 0; i < NR_LINES; i++) {
		memset(text + i * (WIDTH + 1), 'a' + i % 26, WIDTH);
		text[i * (WIDTH + 1) + WIDTH] = '\n';
	}
	text[NR_LINES * (WIDTH + 1)] = '\0';
	unsetenv("JOURNAL_STREAM");
	log_init();
	fflush(stderr);
	assert_int_not_equal(dup2(fileno(f), STDERR_FILENO), -1);
	log_msg(LOG_DEBUG, "%s", text);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(f);
	while (fgets(got, sizeof(got), f)) {
		assert_int_equal(strlen(got), strlen("shedd: ") + WIDTH + 1);
		assert_int_equal(got[strlen("shedd: ")], 'a' + n % 26);
		n++;
	}
	assert_int_equal(n, NR_LINES);
	fclose(f);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plain_lines),
		cmocka_unit_test(journal_lines),
		cmocka_unit_test(every_line_prefixed),
		cmocka_unit_test(cut_lines_end_in_newline),
		cmocka_unit_test(long_events_are_not_cut),
	};

	return cmocka_run_group_tests_name("log", tests, NULL, NULL);
}
