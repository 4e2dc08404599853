/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* pindir.h - the pin folder of one interface: /sys/fs/bpf/shedd/IFACE/ in
 * the initial network namespace, /sys/fs/bpf/shedd/ns:INODE/IFACE/ in
 * another. It holds the link (whose pin keeps the program attached when
 * shedd is gone) and every map, and an exclusive flock on it makes one
 * shedd the owner of the interface. Errors are said on stderr.
 */
#ifndef SHEDD_PINDIR_H
#define SHEDD_PINDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define SHEDD_PIN_ROOT "/sys/fs/bpf/shedd"

/* Whether this process may load, attach, pin and detach: CAP_BPF (or
 * CAP_SYS_ADMIN) and CAP_NET_ADMIN in its effective set. */
bool pindir_may_attach(void);

/* Enter the network namespace /run/netns/@name. 0 or a negative errno. */
int pindir_enter_netns(const char *name);

/* Mount the bpffs at /sys/fs/bpf unless it is there. 0 or a negative errno. */
int pindir_mount_bpffs(void);

/* "" in the initial network namespace, "ns:INODE" in another (INODE as
 * `stat -L -c %i /run/netns/NAME` prints it). 0 or a negative errno. */
int pindir_netns_tag(char *tag, size_t len);

/* The pin folder of @iface in the namespace tagged @tag. */
void pindir_of(char *buf, size_t len, const char *tag, const char *iface);

/* @dir/@name. */
void pindir_path(char *buf, size_t len, const char *dir, const char *name);

/* Make @dir (and the folders above it) and take its exclusive flock, which
 * the kernel drops when the process dies, however it dies. A folder
 * removed and made again while we waited is not the one we locked: tried
 * again. The locked fd, -EBUSY if another process holds it, or another
 * negative errno (said). */
int pindir_lock(const char *dir);

/* Remove every pin shedd makes (and what an upgrade cut short left), the
 * folder, and its namespace folder and the shedd folder if left empty.
 * Through @dir_fd (the locked folder, or -1) where there is one: a daemon
 * that runs as another user than root has lost the right to walk through
 * /sys/fs/bpf (mode 1700) with its capabilities, not the folder it holds
 * open. */
void pindir_unpin_all(const char *dir, int dir_fd);

/* For a daemon that goes on as another user (--user): @dir and the folders
 * above it up to the shedd folder of the bpffs become root's and group
 * @gid's, mode 0770, so that the user can unlink the pins and the folders
 * at a stop; a restarted shedd (uid 0) is still their owner. Needs
 * CAP_CHOWN. 0 or a negative errno. */
int pindir_share(const char *dir, __u32 gid);

#endif /* SHEDD_PINDIR_H */
