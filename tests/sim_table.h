/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* sim_table.h - what the scale simulations give the scale experiment
 * (scripts/exp/scale.sh) besides their TAP comments:
 *   SHEDD_SIM_CSV=DIR    each table a binary prints is also written as
 *                        DIR/TABLE.csv: a header line, then a row a line.
 *   SHEDD_SIM_QUICK=1    each sweep leaves out its largest size(s), for a
 *                        short run (the experiment's own test); the checks
 *                        run on the rows that remain.
 * Unset, no file is opened and every sweep runs whole: the TAP output, the
 * assertions and the runtime are those of the plain test.
 */
#ifndef SHEDD_SIM_TABLE_H
#define SHEDD_SIM_TABLE_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One table: its file is made at its first row, so a table left out by a
 * failed or shortened run is missing, not empty. */
struct sim_table {
	const char *name;   /* DIR/NAME.csv */
	const char *header; /* its columns, comma-separated */
	FILE *f;
	bool tried;
};

static inline bool sim_quick(void)
{
	const char *q = getenv("SHEDD_SIM_QUICK");

	return q && *q && strcmp(q, "0") != 0;
}

static inline bool sim_table_open(struct sim_table *t)
{
	const char *dir;
	char path[4096];

	if (t->tried)
		return t->f != NULL;
	t->tried = true;
	dir = getenv("SHEDD_SIM_CSV");
	if (!dir || !*dir)
		return false;
	if (snprintf(path, sizeof(path), "%s/%s.csv", dir, t->name) >= (int)sizeof(path)) {
		fprintf(stderr, "SHEDD_SIM_CSV: %s/%s.csv: path too long\n", dir, t->name);
		return false;
	}
	t->f = fopen(path, "w");
	if (!t->f) {
		fprintf(stderr, "SHEDD_SIM_CSV: %s: %s\n", path, strerror(errno));
		return false;
	}
	fprintf(t->f, "%s\n", t->header);
	return true;
}

/* One row: printf-style, without the newline; flushed, so the rows of a
 * run that fails a check afterwards are there. */
__attribute__((format(printf, 2, 3)))
static inline void sim_table_row(struct sim_table *t, const char *fmt, ...)
{
	va_list ap;

	if (!sim_table_open(t))
		return;
	va_start(ap, fmt);
	vfprintf(t->f, fmt, ap);
	va_end(ap);
	fputc('\n', t->f);
	fflush(t->f);
}

/* A write error is said; the experiment then finds the table short. */
static inline void sim_table_close(struct sim_table *t)
{
	if (t->f && fclose(t->f))
		fprintf(stderr, "SHEDD_SIM_CSV: %s.csv: %s\n", t->name, strerror(errno));
	t->f = NULL;
}

#endif /* SHEDD_SIM_TABLE_H */
