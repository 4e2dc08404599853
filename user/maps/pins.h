/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* pins.h - shedctl's access to what shedd pinned under
 * /sys/fs/bpf/shedd/[ns:INODE/]IFACE/: the maps, read and written by path,
 * so it works while shedd runs and after it died. Every function returns 0
 * or a negative errno and, on error, a message in the caller's buffer.
 */
#ifndef SHEDD_PINS_H
#define SHEDD_PINS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "layout.h"
#include "options.h"

struct pins {
	char dir[PATH_MAX];
	int ncpus;
	int stats_fd, rates_fd, ctl_state_fd, ctl_cmd_fd, settings_fd, settings_cur_fd;
	int prefix_fd[2], manual_fd[2]; /* [0] IPv4, [1] IPv6 */
	__u32 settings_size;            /* the pinned settings record's size */
	__u32 layout_version;           /* of the pins (layout.h) */
	struct layout_fit stats_fit, ctl_state_fit; /* how their values read */
};

/* Enter the network namespace /run/netns/@netns ("" or NULL: stay). */
int pins_enter_netns(const char *netns, char *err, size_t errlen);

/* The pin folder of @iface in the current network namespace; with @iface
 * NULL or "", the only interface that has pins there (an error names them
 * when there are several, or says there are none). @iface_out gets the
 * name. */
int pins_find(char *dir, size_t len, const char *iface, char *iface_out, size_t iface_len,
	      char *err, size_t errlen);

/* Open the maps under @dir. The stats map must be there; ctl_state,
 * ctl_cmd and the manual maps may be missing (an older shedd): their fd is
 * -1. Every map is checked against the layouts this build knows
 * (layout_check()) before anything is read: pins of a newer layout
 * version, or a map of an unknown layout, give -EPROTO and a message that
 * says so. */
int pins_open(struct pins *p, const char *dir, char *err, size_t errlen);
void pins_close(struct pins *p);

/* Whether a shedd holds the interface now (the lock on the pin folder). */
bool pins_daemon_running(const struct pins *p);

/* The stats summed over every CPU. */
int pins_read_stats(struct pins *p, struct shedd_stats *sum, char *err, size_t errlen);
/* The rate records of every class (rate_per_sec summed is the limit the
 * program sheds at). */
int pins_read_rates(struct pins *p, __u64 rate_per_sec[SHEDD_NR_CLASSES], char *err,
		    size_t errlen);
/* The controller's record; one of an older version is zero beyond it.
 * -ENOENT when there is none (never written, or no such map). */
int pins_read_ctl(struct pins *p, struct shedd_ctl_state *st, char *err, size_t errlen);
int pins_read_cmd(struct pins *p, struct shedd_ctl_cmd *cmd, char *err, size_t errlen);
/* settings.tx_blocked: the program sends no cookie and no RST because its
 * XDP_TX frames go nowhere. -ENOENT without a settings map, -EINVAL for a
 * record of another size (another layout). */
int pins_read_tx_blocked(struct pins *p, bool *blocked, char *err, size_t errlen);
/* The lease record (include/lease.h), opened for each read: pins of a
 * shedd older than it have none (-ENOENT). */
int pins_read_lease(struct pins *p, struct shedd_lease *v, char *err, size_t errlen);
int pins_write_cmd(struct pins *p, const struct shedd_ctl_cmd *cmd, char *err, size_t errlen);

#endif /* SHEDD_PINS_H */
