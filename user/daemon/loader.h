/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* loader.h - the lifecycle of shedd's XDP program on one interface: load,
 * attach through a pinned BPF link or adopt the one already pinned, write the
 * configuration maps, and detach or leave it shedding on exit.
 */
#ifndef SHEDD_LOADER_H
#define SHEDD_LOADER_H

#include <limits.h>
#include <stdbool.h>
#include "kernel_features.h"
#include "options.h"

#define SHEDD_PIN_ROOT "/sys/fs/bpf/shedd"

/* The tc filter of the hand-off: fixed, so a restarted shedd replaces its
 * predecessor's filter in place (BPF_TC_F_REPLACE) and --remove finds it. */
#define SHEDD_TC_HANDLE 0x5edd
#define SHEDD_TC_PRIORITY 1
#define SHEDD_TC_PROG_NAME "shedd_handoff"

struct shedd_bpf;
struct handoff_bpf;

struct loader {
	struct shedd_bpf *skel;
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
	const struct shedd_fair_cell *fair_cells; /* fair_sketch, mapped read-only */
};

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

/* For a daemon that goes on as another user (--user): the pin folder and
 * the folders above it up to the shedd folder of the bpffs become root's
 * and group @gid's, mode 0770, so that the user can unlink the pins and
 * the folders at a stop; a restarted shedd (uid 0) is still their owner.
 * Needs CAP_CHOWN. 0 or a negative errno. */
int loader_share_dirs(const struct loader *l, __u32 gid);

/* "" in the initial network namespace, "ns:INODE" in another (INODE as
 * `stat -L -c %i /run/netns/NAME` prints it). 0 or a negative errno. */
int loader_netns_tag(char *tag, size_t len);

/* The controller's pinned state (ctl_state). */
int loader_read_ctl(struct loader *l, struct shedd_ctl_state *st);
int loader_write_ctl(struct loader *l, const struct shedd_ctl_state *st);

/* The daemon's pinned counters (daemon_stats). */
int loader_read_daemon_stats(struct loader *l, struct shedd_daemon_stats *st);
int loader_write_daemon_stats(struct loader *l, const struct shedd_daemon_stats *st);

/* Write settings, ports and prefixes. New entries go in before stale ones
 * are deleted, so an adopted program never sees a half-written set. With
 * verified admission, first the sysctls its hand-off needs (probe.h). */
int loader_configure(struct loader *l, const struct shedd_options *o);

/* Read again what the namespace may change while shedd runs (the sysctls
 * behind the SYN-ACK's options, the IPv4 broadcast addresses) and rewrite
 * settings if it changed, saying so. Only the daemon's thread writes
 * settings. 0 or a negative errno, with a message. */
int loader_refresh_host(struct loader *l);

/* settings.tx_blocked (xdptx.h): what the running program has, and a new
 * value for it (kept in l->tx_blocked, which loader_configure() writes
 * too). 0 or a negative errno, said on stderr. */
int loader_read_tx_blocked(struct loader *l, __u8 *v);
int loader_write_tx_blocked(struct loader *l, __u8 v);

struct tun_found;
/* The tunnels that end here (tunnels.h): the local addresses into tun_local
 * (new ones first, then the stale ones deleted), then the kinds and UDP
 * ports into tun_config. 0 or a negative errno, said on stderr. */
int loader_write_tunnels(struct loader *l, const struct tun_found *f);

/* The tun_stats map, summed over CPUs. 0 or a negative errno. */
int loader_read_tun_stats(struct loader *l, struct shedd_tun_stats *sum);

/* Publish every class's rate record (alloc_publish() at @now_ns). */
int loader_write_rates(struct loader *l, const struct shedd_class_rate *next, __u64 now_ns);

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

/* Detach and unpin, or with @keep leave the program attached and pinned
 * (a program that was never attached nor adopted is always unpinned); then
 * let go of the interface. */
void loader_close(struct loader *l, bool keep);

/* --remove: detach a shedd left on the interface (XDP and the tc hand-off)
 * and remove its pins; refused (-EBUSY) while a shedd runs there. */
int loader_remove(const struct shedd_options *o);


#endif /* SHEDD_LOADER_H */
