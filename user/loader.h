/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* loader.h - the lifecycle of shedd's XDP program on one interface: load,
 * attach through a pinned BPF link or adopt the one already pinned, write the
 * configuration maps, and detach or leave it shedding on exit.
 */
#ifndef SHEDD_LOADER_H
#define SHEDD_LOADER_H

#include <limits.h>
#include <stdbool.h>
#include "options.h"

#define SHEDD_PIN_ROOT "/sys/fs/bpf/shedd"

struct shedd_bpf;

struct loader {
	struct shedd_bpf *skel;
	int ifindex;
	int link_fd;
	int ncpus;           /* possible CPUs: the width of per-CPU values */
	bool adopted;        /* took over a running shedd's link and maps */
	char pin_dir[PATH_MAX];
};

/* Enter --netns, check root, load, then attach or adopt. Prints what failed
 * and why; returns 0 or a negative errno. */
int loader_open(struct loader *l, const struct shedd_options *o);

/* Write settings, ports and prefixes. New entries go in before stale ones
 * are deleted, so an adopted program never sees a half-written set. */
int loader_configure(struct loader *l, const struct shedd_options *o);

/* Publish every class's rate record (alloc_publish() at @now_ns). */
int loader_write_rates(struct loader *l, const struct shedd_class_rate *next, __u64 now_ns);

/* The total rate the program is shedding at now: every class, every CPU
 * (what an adopting shedd starts from). */
int loader_read_total_rate(struct loader *l, double *total);

/* Read the per-CPU stats (ncpus entries). */
int loader_read_stats(struct loader *l, struct shedd_stats *percpu);

/* Detach and unpin, or with @keep leave the program attached and pinned. */
void loader_close(struct loader *l, bool keep);

/* --remove: detach a shedd left on the interface and remove its pins. */
int loader_remove(const struct shedd_options *o);


#endif /* SHEDD_LOADER_H */
