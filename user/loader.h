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
	bool adopted;        /* takes over a running shedd's link and maps */
	char pin_dir[PATH_MAX];
	int lock_fd;         /* flock on pin_dir: this shedd owns the interface */
	bool attached;       /* loader_attach() succeeded: our program sheds */
	char ns_tag[32];     /* "" in the initial network namespace, else ns:INODE */
};

/* Enter --netns, check root, take the interface (a second shedd on it, in
 * this network namespace, gets -EBUSY), load the program and its maps
 * (reusing a running shedd's), but attach nothing yet. Prints what failed
 * and why; returns 0 or a negative errno. */
int loader_open(struct loader *l, const struct shedd_options *o);

/* After every map is written: attach afresh, or swap our program into the
 * running shedd's link (adoption). */
int loader_attach(struct loader *l, const struct shedd_options *o);

/* "" in the initial network namespace, "ns:INODE" in another (INODE as
 * `stat -L -c %i /run/netns/NAME` prints it). 0 or a negative errno. */
int loader_netns_tag(char *tag, size_t len);

/* The controller's pinned state (ctl_state). */
int loader_read_ctl(struct loader *l, struct shedd_ctl_state *st);
int loader_write_ctl(struct loader *l, const struct shedd_ctl_state *st);

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

/* Detach and unpin, or with @keep leave the program attached and pinned
 * (a program that was never attached nor adopted is always unpinned); then
 * let go of the interface. */
void loader_close(struct loader *l, bool keep);

/* --remove: detach a shedd left on the interface and remove its pins;
 * refused (-EBUSY) while a shedd runs there. */
int loader_remove(const struct shedd_options *o);


#endif /* SHEDD_LOADER_H */
