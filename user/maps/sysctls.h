/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* sysctls.h - the sysctls of shedd's network namespace, read and written
 * through /proc/sys (which shows the namespace of the process: call these
 * after entering --netns), and those a hand-off needs: set with what shedd
 * found saved in the pinned map sysctls, and put back by whichever shedd
 * stops shedding, as the program may outlive the daemon that set them.
 */
#ifndef SHEDD_SYSCTLS_H
#define SHEDD_SYSCTLS_H

#include <stddef.h>
#include <linux/types.h>

/* One line of a sysctl (dotted name) into @buf; as a whole number; a
 * whole number written. 0 or a negative errno. */
int sysctl_read_text(const char *name, char *buf, size_t len);
int sysctl_read_u64(const char *name, __u64 *v);
int sysctl_write_u64(const char *name, __u64 v);

/*
 * sysctls_apply() - bring the sysctls @handoff needs to a value it works
 * with, one line on stderr for each value changed, and note in the map
 * behind @saved_fd what was found before the first change (a change an
 * earlier shedd noted keeps its first value). Returns 0, or a negative
 * errno after a message naming the sysctl that could not be read, written
 * or noted.
 */
int sysctls_apply(int saved_fd, __u8 handoff);

/*
 * sysctls_restore() - put back every sysctl noted in the map behind
 * @saved_fd (or, with @saved_fd < 0, the sysctls pin in @dir) that still
 * holds what shedd set; one that changed since is left as it is, and said.
 * Call when shedding stops, before the pins are removed.
 */
void sysctls_restore(int saved_fd, const char *dir);

#endif /* SHEDD_SYSCTLS_H */
