// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_config.c - libFuzzer target for the config file: any byte string as
 * the file of `shedd --config fuzz.conf`, through libinih, the option
 * parsers and the checks across options, under ASan and UBSan (`make
 * fuzz-config`). Beyond "no crash": a refused file is named with a line
 * that exists, and an accepted one gives options within their limits.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond))                                                \
			__builtin_trap();                                   \
	} while (0)

static const uint8_t *in;
static size_t in_size;

static int from_input(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	(void)path;
	(void)err;
	(void)errlen;
	*buf = malloc(in_size ? in_size : 1);
	if (!*buf)
		return -1;
	memcpy(*buf, in, in_size);
	*len = in_size;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[] = { "shedd", "--config", "fuzz.conf", NULL };
	char out[8192], err[512];
	struct shedd_options o;
	double floors = 0;
	size_t i, lines = 1;
	int ret, c;

	if (size > 65536)
		return 0;
	in = data;
	in_size = size;
	options_read_file = from_input;
	err[0] = '\0';
	ret = options_parse(3, argv, &o, out, sizeof(out), err, sizeof(err));
	if (ret == OPTIONS_ERROR) {
		char *end;
		long line;

		CHECK(err[0]);
		/* "fuzz.conf:LINE: ..." and the line is in the file, or a
		 * problem of the whole ("--iface is required"). */
		if (!strncmp(err, "fuzz.conf:", 10)) {
			for (i = 0; i < size; i++)
				lines += data[i] == '\n';
			line = strtol(err + 10, &end, 10);
			CHECK(end != err + 10 && *end == ':');
			CHECK(line >= 1 && (size_t)line <= lines);
		}
	} else {
		CHECK(ret == OPTIONS_RUN);
		CHECK(iface_name_valid(o.iface));
		CHECK(o.nr_ports >= 0 && o.nr_ports <= MAX_PORTS);
		CHECK(o.nr_prefixes >= 0 && o.nr_prefixes <= 2 * MAX_PREFIXES);
		for (c = 0; c < SHEDD_NR_CLASSES; c++)
			floors += o.floor[c];
		CHECK(floors <= 1.0 + 1e-9);
		CHECK(o.default_class < SHEDD_NR_CLASSES);
		CHECK(o.tick_ms >= 10 && o.tick_ms <= MAX_TICK_MS);
		CHECK(o.nr_ramp >= 0 && o.nr_ramp <= MAX_RAMP_STAGES);
		CHECK(!o.nr_ramp || o.ramp[o.nr_ramp - 1] == 1.0);
	}
	options_free(&o);
	return 0;
}
