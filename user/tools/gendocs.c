// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gendocs - the reference tables of the docs, from the tables in code:
 *   gendocs options   the options of user/core/options.c (options_table)
 *   gendocs metrics   the metric families that metrics_format() writes
 * Each prints a markdown table on stdout. scripts/docs.sh puts them in
 * docs/usage.md and docs/metrics.md (`make docs`) and checks that the
 * committed ones are the same (`make docs-check`, and make test).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "metrics.h"
#include "options.h"

/* @s with '|' escaped for a markdown table cell. */
static void cell(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', stdout);
		fputc(*s, stdout);
	}
}

static int gen_options(void)
{
	int i;

	printf("| option | value | default | config key | on SIGHUP | meaning |\n");
	printf("| --- | --- | --- | --- | --- | --- |\n");
	for (i = 0; i < OPT_COUNT; i++) {
		const struct opt_def *d = &options_table[i];
		char key[64];
		size_t k;

		printf("| `--%s`", d->name);
		if (d->short_name)
			printf(", `-%c`", d->short_name);
		printf(" | ");
		if (d->metavar) {
			printf("`");
			cell(d->metavar);
			printf("`");
		}
		printf(" | ");
		if (d->flags & OPTF_REQUIRED)
			printf("required");
		else if (d->def_text)
			cell(d->def_text);
		else if (d->def) {
			printf("`");
			cell(d->def);
			printf("`");
		}
		printf(" | ");
		if (d->flags & OPTF_CLI) {
			printf("command line only");
		} else {
			for (k = 0; d->name[k] && k + 1 < sizeof(key); k++)
				key[k] = d->name[k] == '-' ? '_' : d->name[k];
			key[k] = '\0';
			printf("`[%s] %s`", d->section, key);
		}
		printf(" | %s | ", d->flags & OPTF_CLI ? "" :
		       d->flags & OPTF_RESTART ? "kept (a restart applies it)" : "applied");
		cell(d->help);
		printf(" |\n");
	}
	return 0;
}

/* The families of a snapshot in which every one of them has a sample: a
 * listener behind the protected one, the queue read, the fairness maps
 * with a heavy hitter. */
static int gen_metrics(void)
{
	static struct metrics_snapshot s;
	struct fair_hitter *h;
	char *buf = NULL, *line, *save = NULL, name[128] = "", type[32] = "", help[512] = "";
	char labels[256] = "";
	size_t len = 0;
	FILE *f;
	__u32 c;

	snprintf(s.iface, sizeof(s.iface), "eth0");
	s.aimd = true;
	s.have_depth = true;
	s.backend = true;
	s.listeners = 4;
	s.stuck = 1;
	s.told = 1;
	s.stuck_id[0] = (struct listener_id){ .ino = 123456, .cookie = 4242, .family = 2,
					      .addr = { 198, 18, 0, 1 }, .port = 8080 };
	s.fair.have = true;
	s.have_conns = true;
	s.have_conn_limit = true;
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		s.fair.cls[c].cfg.levels = FAIR_ADDR | FAIR_NET24 | FAIR_NET64 | FAIR_NET48;
		s.fair.cls[c].cfg.limit[0] = 1;
		s.fair.cls[c].cfg.limit[1] = 1;
		s.fair.cls[c].cfg.limit[2] = 1;
	}
	h = &s.fair.cls[0].top[0];
	h->family = 4;
	h->prefixlen = 32;
	s.fair.cls[0].ntop = 1;

	f = open_memstream(&buf, &len);
	if (!f || metrics_format(f, &s) || fclose(f)) {
		fprintf(stderr, "gendocs: metrics_format failed\n");
		free(buf);
		return 1;
	}
	printf("| metric | type | labels | meaning |\n");
	printf("| --- | --- | --- | --- |\n");
	/* A family: its HELP and TYPE lines, then its samples (whose labels,
	 * beside iface, are the family's). */
	for (line = strtok_r(buf, "\n", &save);; line = strtok_r(NULL, "\n", &save)) {
		if (!line || !strncmp(line, "# HELP ", 7)) {
			if (name[0]) {
				printf("| `%s` | %s | %s | ", name, type, labels[0] ? labels : "");
				cell(help);
				printf(" |\n");
			}
			if (!line)
				break;
			if (sscanf(line, "# HELP %127s %511[^\n]", name, help) != 2) {
				fprintf(stderr, "gendocs: a HELP line without help: %s\n", line);
				free(buf);
				return 1;
			}
			type[0] = labels[0] = '\0';
		} else if (!strncmp(line, "# TYPE ", 7)) {
			sscanf(line, "# TYPE %*s %31s", type);
		} else {
			char *b = strchr(line, '{'), *e = b ? strchr(b, '}') : NULL, *p;

			/* Each label NAME= of the sample, once, in order. */
			for (p = b ? b + 1 : NULL; p && p < e;) {
				char lbl[64], pat[70];
				size_t n = strcspn(p, "=");

				if (n >= sizeof(lbl))
					break;
				memcpy(lbl, p, n);
				lbl[n] = '\0';
				snprintf(pat, sizeof(pat), "`%s`", lbl);
				if (strcmp(lbl, "iface") && strcmp(lbl, "le") && !strstr(labels, pat) &&
				    strlen(labels) + strlen(pat) + 3 < sizeof(labels)) {
					if (labels[0])
						strcat(labels, ", ");
					strcat(labels, pat);
				}
				/* past the quoted value */
				p = strchr(p + n + 2, '"');
				p = p ? p + 1 : NULL;
				if (p && *p == ',')
					p++;
			}
		}
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "options"))
		return gen_options();
	if (argc == 2 && !strcmp(argv[1], "metrics"))
		return gen_metrics();
	fprintf(stderr, "usage: gendocs options|metrics\n");
	return 2;
}
