/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* handle.h - struct loader, the handle on one interface's shedd: the
 * skeleton of its XDP program (loaded here, or adopted from a running
 * shedd's pins), the pinned link, the pin folder and its lock, and what
 * the start decided (the XDP mode, verified admission's plan, the flow
 * hash's key). daemon/loader.c opens and closes it; the functions below
 * read and write the maps behind it. Each returns 0 or a negative errno.
 */
#ifndef SHEDD_HANDLE_H
#define SHEDD_HANDLE_H

#include <limits.h>
#include <stdbool.h>
#include "kernel_features.h"
#include "options.h"
#include "shedd.h"

struct shedd_bpf;
struct handoff_bpf;

struct loader {
	struct shedd_bpf *skel;
	struct bpf_program *xdp_prog; /* skel's shedd_xdp, or shedd_xdp_vlan bound to the device */
	int ifindex;
	int link_fd;
	int ncpus;           /* possible CPUs: the width of per-CPU values */
	bool adopted;        /* takes over a running shedd's link and maps */
	char pin_dir[PATH_MAX];
	int lock_fd;         /* flock on pin_dir: this shedd owns the interface */
	bool attached;       /* loader_attach() succeeded: our program sheds */
	enum xdp_mode xdp_mode; /* what it runs in: --xdp-mode, or the adopted link's */
	char ns_tag[32];     /* "" in the initial network namespace, else ns:INODE */
	struct shedd_features features; /* what the kernel offers */
	struct verify_plan plan;        /* verified admission: on? which hand-off? */
	struct handoff_bpf *handoff;    /* the tc hand-off, with SHEDD_HANDOFF_TC */
	__u8 tx_blocked;     /* settings.tx_blocked: XDP_TX frames go nowhere */
	struct shedd_flow_key flow_key; /* the key of the flow hash, in flow_key */
	struct migrate *mig;            /* an upgrade from older pins (migrate.h) */
	const struct shedd_fair_cell *fair_cells; /* fair_cells, mapped read-only */
};

/* Say on stderr that @step failed with libbpf's error @err; returns @err. */
int log_libbpf(const char *step, int err);

/* The controller's pinned state (ctl_state). */
int loader_read_ctl(struct loader *l, struct shedd_ctl_state *st);
int loader_write_ctl(struct loader *l, const struct shedd_ctl_state *st);

/* The daemon's pinned counters (daemon_stats). */
int loader_read_daemon_stats(struct loader *l, struct shedd_daemon_stats *st);
int loader_write_daemon_stats(struct loader *l, const struct shedd_daemon_stats *st);

/* settings.tx_blocked (xdptx.h): what the running program has, and a new
 * value for it (kept in l->tx_blocked, which loader_configure() writes
 * too). 0 or a negative errno, said on stderr. */
int loader_read_tx_blocked(struct loader *l, __u8 *v);
int loader_write_tx_blocked(struct loader *l, __u8 v);

/* The tun_stats map, summed over CPUs. 0 or a negative errno. */
int loader_read_tun_stats(struct loader *l, struct shedd_tun_stats *sum);
/* The tun_checks map, summed over CPUs. 0 or a negative errno. */
int loader_read_tun_checks(struct loader *l, struct shedd_tun_checks *sum);
/* The syn_checks map, summed over CPUs. 0 or a negative errno. */
int loader_read_syn_checks(struct loader *l, struct shedd_syn_checks *sum);

/* Publish every class's rate record (alloc_publish() at @now_ns). */
int loader_write_rates(struct loader *l, const struct shedd_class_rate *next, __u64 now_ns);

/* The lease record (include/lease.h), whole under its lock. */
int loader_write_lease(struct loader *l, const struct shedd_lease *v);
int loader_read_lease(struct loader *l, struct shedd_lease *v);

/* The total rate the program is shedding at now: every class, every CPU
 * (what an adopting shedd starts from). */
int loader_read_total_rate(struct loader *l, double *total);

/* Read the per-CPU stats (ncpus entries). */
int loader_read_stats(struct loader *l, struct shedd_stats *percpu);

/* Per-source fairness: the sketch, mapped read-only once (NULL if it
 * cannot be: the limits then count every class as one source); the
 * fair_config entries of every class; fair_stats of each class summed
 * over the CPUs. 0 or a negative errno. */
const struct shedd_fair_cell *loader_fair_cells(struct loader *l);
int loader_write_fair(struct loader *l, const struct shedd_fair_class *cfg);
int loader_read_fair_stats(struct loader *l, struct shedd_fair_stats *sum);

#endif /* SHEDD_HANDLE_H */
