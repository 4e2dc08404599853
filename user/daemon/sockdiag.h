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

/*
 * sockdiag_dump_storage() - sockdiag_dump(), asking also for each socket's
 * value in the socket storage map @map_fd (its INET_DIAG_SK_BPF_STORAGES
 * attribute; needs CAP_BPF).
 */
int sockdiag_dump_storage(int nl, __u8 family, __u32 states, __u8 ext, int map_fd,
			  sockdiag_fn fn, void *arg);

/*
 * sockdiag_attr() - the payload of attribute @type of the socket @m (@len
 * as given to the sockdiag_fn), and its length in *@alen; NULL if absent.
 */
const void *sockdiag_attr(const struct inet_diag_msg *m, size_t len, int type, size_t *alen);

/*
 * sockdiag_storage() - in the INET_DIAG_SK_BPF_STORAGES attribute of @m,
 * the first map value; its length in *@vlen. NULL if there is none.
 */
const void *sockdiag_storage(const struct inet_diag_msg *m, size_t len, size_t *vlen);

/*
 * sockdiag_destroy() - end the TCP socket @m names (its family, addresses,
 * ports, interface and cookie) with SOCK_DESTROY: the kernel aborts it as
 * tcp_abort() does (a RST to the peer, ECONNABORTED to its owner). Needs
 * CAP_NET_ADMIN and CONFIG_INET_DIAG_DESTROY.
 * Return: 0, or a negative errno (-EOPNOTSUPP: the kernel cannot; -ENOENT:
 * the socket is gone).
 */
int sockdiag_destroy(int nl, const struct inet_diag_msg *m);

#endif
