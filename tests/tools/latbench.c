/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* latbench.c - load for shedd's latency socket: sends --rate samples a
 * second for --duration seconds through include/shedd_latency.h (wire
 * version 2, or 1 with --v1), paced in 1 ms slots, never blocking, and
 * counts what the socket refused. One summary line on stdout:
 *   sent=N unsent=N seconds=S rate=R/s
 * Exit 0 ok, 1 runtime error, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROG "latbench"
#include "toolopts.h"
#include "shedd_latency.h"

#define MAX_RATE 10000000ULL
#define MAX_DURATION_S 600ULL
#define SLOT_NS 1000000ULL

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: " PROG " --socket PATH --rate N --duration SEC [--v1]\n"
"--socket PATH   shedd's latency socket\n"
"--rate N        samples per second, 1-%llu\n"
"--duration SEC  1-%llu\n"
"--v1            send 16-byte version 1 datagrams (no loss count)\n",
		MAX_RATE, MAX_DURATION_S);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "rate", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "v1", no_argument, NULL, '1' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct shedd_latency_sender snd;
	uint64_t rate = 0, duration = 0, sent = 0, unsent = 0, start, end, slot, due;
	const char *path = NULL;
	bool v1 = false;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			path = optarg;
			break;
		case 'r':
			if (parse_u64("rate", optarg, 1, MAX_RATE, &rate))
				return 2;
			break;
		case 'd':
			if (parse_u64("duration", optarg, 1, MAX_DURATION_S, &duration))
				return 2;
			break;
		case '1':
			v1 = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!path || !rate || !duration || optind != argc) {
		usage(stderr);
		return 2;
	}
	if (shedd_latency_sender_open(&snd, path)) {
		fprintf(stderr, PROG ": connect to %s: %s\n", path, strerror(errno));
		return 1;
	}
	start = now_ns();
	end = start + duration * 1000000000ULL;
	/* Every 1 ms slot sends what the rate owes up to its end. */
	for (slot = start; slot < end; slot += SLOT_NS) {
		struct timespec ts;

		due = (uint64_t)((double)(slot + SLOT_NS - start) * (double)rate / 1e9);
		while (sent + unsent < due) {
			uint64_t ns = 1000000 + (sent + unsent) % 1000; /* ~1 ms */
			int r = v1 ? shedd_latency_report(snd.fd, ns) : shedd_latency_send(&snd, ns);

			if (r && errno != EAGAIN) {
				fprintf(stderr, PROG ": send: %s\n", strerror(errno));
				shedd_latency_sender_close(&snd);
				return 1;
			}
			if (r)
				unsent++;
			else
				sent++;
		}
		ts.tv_sec = (time_t)((slot + SLOT_NS) / 1000000000ULL);
		ts.tv_nsec = (long)((slot + SLOT_NS) % 1000000000ULL);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
	/* The last losses travel with one more sample, if any are pending:
	 * tried for up to 100 ms. */
	for (c = 0; !v1 && snd.unsent && c < 100; c++) {
		struct timespec ms = { .tv_nsec = 1000000 };

		if (shedd_latency_send(&snd, 1000000) == 0) {
			sent++;
			break;
		}
		unsent++;
		nanosleep(&ms, NULL);
	}
	end = now_ns();
	printf("sent=%" PRIu64 " unsent=%" PRIu64 " seconds=%.2f rate=%.0f/s\n", sent, unsent,
	       (double)(end - start) / 1e9, (double)(sent + unsent) * 1e9 / (double)(end - start));
	shedd_latency_sender_close(&snd);
	return 0;
}
