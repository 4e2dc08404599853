// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_options.c - libFuzzer target for shedd's command line: the bytes,
 * cut at NUL bytes, are argv (with a short valid file for any --config),
 * through getopt and every option's parser, under ASan and UBSan (`make
 * fuzz-options`). Beyond "no crash": each outcome is one of three, an
 * error has a message, and an accepted command line gives options within
 * their limits.
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

#define MAX_ARGS 64

static int small_file(const char *path, char **buf, size_t *len, char *err, size_t errlen)
{
	static const char text[] = "[shedd]\niface = f0\nport = 80\n[class.critical]\n"
				   "floor = 0.2\nprefix = 198.18.0.0/24\n";

	(void)path;
	(void)err;
	(void)errlen;
	*buf = malloc(sizeof(text));
	if (!*buf)
		return -1;
	memcpy(*buf, text, sizeof(text));
	*len = sizeof(text) - 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2], *copy, out[8192], err[512];
	struct shedd_options o;
	double floors = 0;
	int argc = 1, ret, c;
	size_t i;

	if (size > 4096)
		return 0;
	copy = malloc(size + 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = "shedd";
	argv[argc++] = copy;
	for (i = 0; i < size && argc <= MAX_ARGS; i++)
		if (!copy[i])
			argv[argc++] = copy + i + 1;
	argv[argc] = NULL;
	options_read_file = small_file;
	out[0] = err[0] = '\0';
	ret = options_parse(argc, argv, &o, out, sizeof(out), err, sizeof(err));
	if (ret == OPTIONS_ERROR) {
		CHECK(err[0]);
	} else if (ret == OPTIONS_EXIT) {
		CHECK(out[0]);
	} else {
		CHECK(ret == OPTIONS_RUN);
		CHECK(iface_name_valid(o.iface));
		CHECK(o.nr_ports >= 0 && o.nr_ports <= MAX_PORTS);
		CHECK(o.nr_backend_ports >= 0 && o.nr_backend_ports <= MAX_BACKEND_PORTS);
		for (c = 0; c < SHEDD_NR_CLASSES; c++)
			floors += o.floor[c];
		CHECK(floors <= 1.0 + 1e-9);
		CHECK(o.tick_ms >= 10 && o.tick_ms <= MAX_TICK_MS);
		CHECK(o.latency_socket[0]);
	}
	options_free(&o);
	free(copy);
	return 0;
}
