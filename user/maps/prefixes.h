/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* prefixes.h - the classes' source prefixes in the pinned maps: the LPM
 * tries the program reads (prefix_v4, prefix_v6) and the records of an
 * operator's manual prefixes (manual_v4, manual_v6). The configuration's
 * prefixes and shedctl's meet here: a manual prefix wins over a configured
 * one of the same prefix, and takes back the configured class when it is
 * deleted. The daemon works through its loader, shedctl through its pins.
 */
#ifndef SHEDD_PREFIXES_H
#define SHEDD_PREFIXES_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "handle.h"
#include "options.h"
#include "pins.h"
#include "shedd.h"

/* The LPM key of @r (struct shedd_lpm_v4 or _v6) in @key, zero-padded to
 * the larger; returns its length. */
size_t prefix_key(const struct prefix_rule *r, __u8 key[sizeof(struct shedd_lpm_v6)]);

/* The daemon, after its ports: insert every configured prefix of both
 * families, then delete the tries' entries no rule names any more. New
 * entries go in before stale ones are deleted. An operator's manual prefix
 * is left alone, and the configured class of its prefix recorded. 0 or a
 * negative errno (a line on stderr says which). */
int prefixes_configure(struct loader *l, const struct shedd_options *o);

/* Write every manual prefix into prefix_v4/prefix_v6 (over a configured
 * entry for the same prefix: the manual one wins). Called after the
 * configured prefixes are written, at start and after a reload. 0 or a
 * negative errno (a line on stderr says which). */
int prefixes_apply_manual(struct loader *l);

/* shedctl: a manual prefix is recorded in manual_v4/v6 and written into the
 * LPM maps the program reads. add replaces the class of a prefix already
 * there (keeping a configured one's class in the record); del removes a
 * manual prefix and puts back the configured class it replaced, if any
 * (-ENOENT if it is not a manual prefix; -EPERM if it is a configured one,
 * which shedd owns). */
int prefixes_add(struct pins *p, const struct prefix_rule *r, char *err, size_t errlen);
int prefixes_del(struct pins *p, const struct prefix_rule *r, char *err, size_t errlen);

/* One entry of the LPM maps, for list. */
struct prefix_entry {
	struct prefix_rule rule;
	bool manual;   /* recorded by shedctl (else: shedd's configuration) */
	__u32 config_cls; /* manual: the configured class it replaced, or
			   * SHEDD_NO_CLASS */
	bool applied;  /* in the LPM map (a manual one not yet applied: false) */
};
/* Every prefix of the LPM maps and every manual one, IPv4 first; *@out is
 * malloc'd (free it), *@n its length. */
int prefixes_list(struct pins *p, struct prefix_entry **out, int *n, char *err,
		  size_t errlen);

#endif /* SHEDD_PREFIXES_H */
