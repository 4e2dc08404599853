/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* toolopts.h - strict number parsing shared by the testbed tools. The
 * includer defines PROG (its name, for messages) and includes <errno.h>,
 * <inttypes.h>, <stdio.h>, <stdlib.h> and <string.h> first.
 */
#ifndef SHEDD_TOOLOPTS_H
#define SHEDD_TOOLOPTS_H

#ifndef PROG
#error "define PROG before including toolopts.h"
#endif

/* Strict decimal: digits only, no sign, no blanks, inside [min, max]. */
static inline int parse_u64(const char *opt, const char *s, uint64_t min,
			    uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s[0] < '0' || s[0] > '9')
		goto bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, PROG ": --%s: '%s' is not an integer in [%" PRIu64
		", %" PRIu64 "]\n", opt, s, min, max);
	return -1;
}

/* Strict decimal number (no hex, inf or nan), inside [min, max]. */
static inline int parse_double(const char *opt, const char *s, double min,
			       double max, double *out)
{
	char *end;
	double v;

	if ((s[0] < '0' || s[0] > '9') && s[0] != '.')
		goto bad;
	if (strchr(s, 'x') || strchr(s, 'X'))
		goto bad;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end != '\0' || !(v >= min && v <= max))
		goto bad;
	*out = v;
	return 0;
bad:
	fprintf(stderr, PROG ": --%s: '%s' is not a number in [%g, %g]\n", opt,
		s, min, max);
	return -1;
}

#endif /* SHEDD_TOOLOPTS_H */
