// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fuzz_cidr.c - libFuzzer target for the CIDR and class parsers (--prefix,
 * [class.NAME] prefix = ...), under ASan and UBSan (`make fuzz-cidr`). Any
 * byte string is handed over NUL-terminated. Beyond "no crash": an accepted
 * prefix has a family, a length within it and no bit set past the length,
 * and it reads back the same from its own text form.
 */
#include <arpa/inet.h>
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prefix_rule r, again;
	char *s, err[256], text[INET6_ADDRSTRLEN + 8], addr[INET6_ADDRSTRLEN];
	__u32 bits, i, cls;

	if (size > 4096)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	err[0] = '\0';
	if (parse_cidr(s, &r, err, sizeof(err))) {
		CHECK(err[0]);
	} else {
		CHECK(r.family == AF_INET || r.family == AF_INET6);
		bits = r.family == AF_INET ? 32 : 128;
		CHECK(r.prefixlen <= bits);
		for (i = r.prefixlen; i < bits; i++)
			CHECK(!(r.addr[i / 8] & (0x80 >> (i % 8))));
		CHECK(inet_ntop(r.family, r.addr, addr, sizeof(addr)));
		snprintf(text, sizeof(text), "%s/%u", addr, r.prefixlen);
		CHECK(!parse_cidr(text, &again, err, sizeof(err)));
		CHECK(again.family == r.family && again.prefixlen == r.prefixlen &&
		      !memcmp(again.addr, r.addr, sizeof(r.addr)));
	}
	err[0] = '\0';
	if (parse_class(s, &cls, err, sizeof(err)))
		CHECK(err[0]);
	else
		CHECK(cls < SHEDD_NR_CLASSES);
	free(s);
	return 0;
}
