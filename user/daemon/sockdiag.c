// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sockdiag.c - see sockdiag.h. */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <stddef.h>
#include <string.h>

#include "sockdiag.h"

/* One batch of the dump: the kernel fills what fits, at least a message. */
#define SOCKDIAG_BUF 32768

/* The request: a header, the v2 request, and an optional nested
 * INET_DIAG_REQ_SK_BPF_STORAGES with one map fd. */
struct dump_req {
	struct nlmsghdr nlh;
	struct inet_diag_req_v2 req;
	struct nlattr stgs;
	struct nlattr fd_attr;
	__u32 fd;
};

static int dump(int nl, __u8 family, __u32 states, __u8 ext, int map_fd, sockdiag_fn fn,
		void *arg)
{
	struct dump_req msg = {
		.nlh = {
			.nlmsg_len = offsetof(struct dump_req, stgs),
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
	/* Aligned for the nlmsghdr walk; static, as every caller runs on the
	 * daemon's main thread. */
	static char buf[SOCKDIAG_BUF] __attribute__((aligned(NLMSG_ALIGNTO)));

	if (map_fd >= 0) {
		msg.stgs.nla_type = NLA_F_NESTED | INET_DIAG_REQ_SK_BPF_STORAGES;
		msg.stgs.nla_len = (__u16)(sizeof(msg.stgs) + sizeof(msg.fd_attr) + sizeof(msg.fd));
		msg.fd_attr.nla_type = SK_DIAG_BPF_STORAGE_REQ_MAP_FD;
		msg.fd_attr.nla_len = (__u16)(sizeof(msg.fd_attr) + sizeof(msg.fd));
		msg.fd = (__u32)map_fd;
		msg.nlh.nlmsg_len = sizeof(msg);
	}
	if (send(nl, &msg, msg.nlh.nlmsg_len, 0) < 0)
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

int sockdiag_dump(int nl, __u8 family, __u32 states, __u8 ext, sockdiag_fn fn, void *arg)
{
	return dump(nl, family, states, ext, -1, fn, arg);
}

int sockdiag_dump_storage(int nl, __u8 family, __u32 states, __u8 ext, int map_fd,
			  sockdiag_fn fn, void *arg)
{
	return dump(nl, family, states, ext, map_fd, fn, arg);
}

/* The attributes of a list that starts at @p and runs @len bytes. */
static const struct nlattr *find(const void *p, size_t len, int type)
{
	const struct nlattr *a = p;

	while (len >= sizeof(*a) && a->nla_len >= sizeof(*a) && a->nla_len <= len) {
		if ((a->nla_type & NLA_TYPE_MASK) == type)
			return a;
		if ((size_t)NLA_ALIGN(a->nla_len) >= len)
			break;
		len -= (size_t)NLA_ALIGN(a->nla_len);
		a = (const struct nlattr *)((const char *)a + NLA_ALIGN(a->nla_len));
	}
	return NULL;
}

const void *sockdiag_attr(const struct inet_diag_msg *m, size_t len, int type, size_t *alen)
{
	size_t off = NLMSG_ALIGN(sizeof(*m));
	const struct nlattr *a;

	if (len < off)
		return NULL;
	a = find((const char *)m + off, len - off, type);
	if (!a)
		return NULL;
	*alen = a->nla_len - NLA_HDRLEN;
	return (const char *)a + NLA_HDRLEN;
}

const void *sockdiag_storage(const struct inet_diag_msg *m, size_t len, size_t *vlen)
{
	const struct nlattr *stg, *val;
	const void *p;
	size_t n;

	p = sockdiag_attr(m, len, INET_DIAG_SK_BPF_STORAGES, &n);
	if (!p || !(stg = find(p, n, SK_DIAG_BPF_STORAGE)))
		return NULL;
	val = find((const char *)stg + NLA_HDRLEN, stg->nla_len - NLA_HDRLEN,
		   SK_DIAG_BPF_STORAGE_MAP_VALUE);
	if (!val)
		return NULL;
	*vlen = val->nla_len - NLA_HDRLEN;
	return (const char *)val + NLA_HDRLEN;
}

int sockdiag_destroy(int nl, const struct inet_diag_msg *m)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} msg = {
		.nlh = {
			.nlmsg_len = sizeof(msg),
			.nlmsg_type = SOCK_DESTROY,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
		},
		.req = {
			.sdiag_family = m->idiag_family,
			.sdiag_protocol = IPPROTO_TCP,
			.idiag_states = ~0U,
			.id = m->id,
		},
	};
	union {
		char buf[256];
		struct nlmsghdr h;
	} ans;
	ssize_t len;

	if (send(nl, &msg, sizeof(msg), 0) < 0)
		return -errno;
	len = recv(nl, ans.buf, sizeof(ans.buf), 0);
	if (len < 0)
		return -errno;
	if (!NLMSG_OK(&ans.h, (size_t)len) || ans.h.nlmsg_type != NLMSG_ERROR ||
	    ans.h.nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
		return -EIO;
	return ((const struct nlmsgerr *)NLMSG_DATA(&ans.h))->error;
}
