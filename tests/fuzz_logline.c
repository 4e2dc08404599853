// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_logline.c - libFuzzer target for what shedd reads from its latency
 * socket: any byte string through the log-line parser, the binary decoder
 * and the dispatch between them, under ASan and UBSan (built with clang
 * -fsanitize=fuzzer,address,undefined; `make fuzz-logline`). libFuzzer hands
 * over a buffer of exactly @size bytes, so a read past the datagram's length
 * is an ASan report. Beyond "no crash", each result is checked: a sample is
 * within the caps, a refusal is one the parser may give, and a sample is
 * the same with a space added after it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "logline.h"
#include "shedd_latency.h"
#include "signals.h"

#define CHECK(cond)                                                         \
	do {                                                                \
		if (!(cond))                                                \
			__builtin_trap();                                   \
	} while (0)

static void check_logline(const char *buf, size_t size)
{
	struct logline_sample s, again;
	enum logline_reject r = logline_parse(buf, size, &s);
	char *longer;

	CHECK(r < LOGLINE_REJ_BINARY);
	if (r != LOGLINE_OK)
		return;
	CHECK(size <= LOGLINE_MAX_LEN);
	CHECK(s.rt_ns <= LOGLINE_MAX_NS);
	CHECK(!s.have_urt || s.urt_ns <= LOGLINE_MAX_NS);
	CHECK(s.status <= 999);
	if (size == LOGLINE_MAX_LEN)
		return;
	/* A space after the line changes nothing. */
	longer = malloc(size + 1);
	CHECK(longer);
	memcpy(longer, buf, size);
	longer[size] = ' ';
	CHECK(logline_parse(longer, size + 1, &again) == LOGLINE_OK);
	CHECK(again.rt_ns == s.rt_ns && again.have_urt == s.have_urt &&
	      (!s.have_urt || again.urt_ns == s.urt_ns) && again.status == s.status);
	free(longer);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const __u32 magic = SHEDD_LATENCY_MAGIC;
	struct latency_datagram d;
	enum logline_reject r;
	__u64 ns;
	__u32 unsent;

	check_logline((const char *)data, size);

	if (!latency_decode(data, size, &ns, &unsent))
		CHECK(size == 16 || size == 24);

	r = latency_datagram_decode(data, size, false, &d);
	CHECK(r < LOGLINE_NR_REJECTS && r != LOGLINE_REJ_TRUNCATED);
	if (size >= sizeof(magic) && !memcmp(data, &magic, sizeof(magic)))
		CHECK(r == LOGLINE_OK ? !d.log : r == LOGLINE_REJ_BINARY);
	else
		CHECK(r == LOGLINE_OK ? d.log : r != LOGLINE_REJ_BINARY);
	CHECK(latency_datagram_decode(data, size, true, &d) == LOGLINE_REJ_TRUNCATED);
	return 0;
}
