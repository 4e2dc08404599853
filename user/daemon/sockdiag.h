/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* sockdiag.h - one dump of the kernel's TCP sockets over NETLINK_SOCK_DIAG,
 * message by message: the listeners the signals read every tick.
 */
#ifndef SHEDD_SOCKDIAG_H
#define SHEDD_SOCKDIAG_H

#include <stddef.h>
#include <linux/inet_diag.h>
#include <linux/types.h>

/* Called for each socket of the dump: @len is the length of @m with its
 * attributes. */
typedef void (*sockdiag_fn)(const struct inet_diag_msg *m, size_t len, void *arg);

/*
 * sockdiag_dump() - dump the TCP sockets of @family in the states of the
 * mask @states (1 << TCP_LISTEN, ...) over the NETLINK_SOCK_DIAG socket
 * @nl, asking for the extensions @ext (1 << (INET_DIAG_x - 1), or 0), and
 * call @fn for each one. Blocks until the kernel ends the dump.
 * Return: 0, or a negative errno (-EIO: the kernel refused the request).
 */
int sockdiag_dump(int nl, __u8 family, __u32 states, __u8 ext, sockdiag_fn fn, void *arg);

#endif
