/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* layout.h - the layouts of shedd's pinned maps, today's and the older ones
 * a reader still understands, and the checks made before a pinned value is
 * read: the pins' layout version, the map's type, key size and value size.
 * Used by the loader (adoption, upgrades: user/maps/migrate.c) and by shedctl
 * (user/maps/pins.c) alike, so neither reads a value into a struct of another
 * layout.
 */
#ifndef SHEDD_LAYOUT_H
#define SHEDD_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "shedd.h"

/* A value of an older layout, and how it becomes today's. */
struct layout_older {
	__u32 value_size;      /* of the older layout; 0 ends a list */
	/* NULL: a prefix of today's value (fields were appended since; they
	 * start at 0). Else the __u64 word of today's value that word @i of
	 * the older value becomes (fields were inserted before others). */
	__u32 (*word_of)(__u32 i);
};

#define LAYOUT_COUNTERS 1U /* per-CPU counters the program writes: carried
			    * after the program swap (user/maps/migrate.c) */

struct layout_map {
	const char *name;
	__u32 type;
	__u32 key_size;
	__u32 value_size;                 /* today's */
	__u32 flags;                      /* LAYOUT_* */
	const struct layout_older *older; /* NULL or a list ended by 0 */
};

/* The map called @name, or NULL if shedd pins nothing by that name. */
const struct layout_map *layout_find(const char *name);
/* Every map, for a walk: *@n is set to their number. */
const struct layout_map *layout_all(size_t *n);

/* How a pinned map's values read. */
struct layout_fit {
	__u32 value_size;               /* the pinned map's */
	__u32 max_entries;
	__u32 map_flags;
	const struct layout_older *from; /* NULL: today's layout */
};

/*
 * layout_check() - whether the map behind @fd, pinned as @m->name, holds
 * values this build can read: the same type and key size, and a value of
 * today's size or of an older layout it knows. Fills @fit. Return: 0, or
 * -EPROTO with a message in @err naming the map, what it found and what
 * this build knows; another negative errno when the map cannot be
 * inspected.
 */
int layout_check(int fd, const struct layout_map *m, const char *dir, struct layout_fit *fit,
		 char *err, size_t errlen);

/* Today's value from one of @fit's layout (@in: fit->value_size bytes,
 * @out: m->value_size bytes). */
void layout_convert(const struct layout_map *m, const struct layout_fit *fit, const void *in,
		    void *out);

/*
 * layout_version() - the layout version of the pins in @dir: the layout
 * map's, 1 when there is none (pins of a shedd older than it). Return: 0
 * (*@version may then be newer than SHEDD_LAYOUT_VERSION, when the pins
 * say this build may adopt them as they are: layout_compat()), -EPROTO
 * (with a message) when it is newer and they do not, or another negative
 * errno.
 */
int layout_version(const char *dir, __u32 *version, char *err, size_t errlen);

/*
 * layout_compat() - the oldest layout version that may adopt the pins in
 * @dir as they are (their layout_compat pin), 0 when there is none or it
 * cannot be read. layout_version() accepts pins of a newer version than
 * this build's when it is this build's version or older: forward
 * compatibility, see include/shedd.h.
 */
__u32 layout_compat(const char *dir);

/* Bytes of one CPU's value in a per-CPU map's lookup buffer. */
static inline size_t layout_percpu_stride(__u32 value_size)
{
	return ((size_t)value_size + 7) & ~(size_t)7;
}

#endif /* SHEDD_LAYOUT_H */
