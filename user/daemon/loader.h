/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* loader.h - the lifecycle of shedd's XDP program on one interface: load,
 * attach through a pinned BPF link or adopt the one already pinned, and
 * detach or leave it shedding on exit. What the program is told is
 * configure.h's; its maps are read and written through handle.h.
 */
#ifndef SHEDD_LOADER_H
#define SHEDD_LOADER_H

#include <stdbool.h>
#include "handle.h"
#include "options.h"

/* Enter --netns, check root, take the interface (a second shedd on it, in
 * this network namespace, gets -EBUSY), decide about verified admission
 * (one line on stderr; -EOPNOTSUPP when --verify or --handoff asks what the
 * kernel cannot do), load the program and its maps (reusing a running
 * shedd's) and, for the tc hand-off, the tc program, but attach nothing
 * yet. Prints what failed and why; returns 0 or a negative errno. */
int loader_open(struct loader *l, const struct shedd_options *o);

/* After every map is written: attach afresh, or swap our program into the
 * running shedd's link (adoption). The tc hand-off is attached first (or
 * replaces its predecessor's), so no cookie ACK arrives before it; a
 * hand-off left by an earlier shedd that this one does not use is detached
 * once our XDP program runs. */
int loader_attach(struct loader *l, const struct shedd_options *o);

/* Detach and unpin, or with @keep leave the program attached and pinned
 * (a program that was never attached nor adopted is always unpinned); then
 * let go of the interface. */
void loader_close(struct loader *l, bool keep);

/* The fd of the XDP program's map @name, or -1. */
int loader_map_fd(const struct loader *l, const char *name);

#endif /* SHEDD_LOADER_H */
