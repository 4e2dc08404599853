// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sockdiag.c - see sockdiag.h. */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>

#include "sockdiag.h"

/* One batch of the dump: the kernel fills what fits, at least a message. */
#define SOCKDIAG_BUF 32768

int sockdiag_dump(int nl, __u8 family, __u32 states, __u8 ext, sockdiag_fn fn, void *arg)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
		},
		.req = {
			.sdiag_family = family,
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_ext = ext,
			.idiag_states = states,
		},
	};
	/* Aligned for the nlmsghdr walk; static, as both callers run on the
	 * daemon's main thread. */
	static char buf[SOCKDIAG_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));

	if (send(nl, &msg, sizeof(msg), 0) < 0)
		return -errno;
	for (;;) {
		ssize_t len = recv(nl, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (len < 0)
			return -errno;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)len); h = NLMSG_NEXT(h, len)) {
			if (h->nlmsg_type == NLMSG_DONE)
				return 0;
			if (h->nlmsg_type == NLMSG_ERROR)
				return -EIO;
			fn(NLMSG_DATA(h), h->nlmsg_len - NLMSG_LENGTH(0), arg);
		}
	}
}
