// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* signed_scan.c - see signed_scan.h. */
#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <syslog.h>

#include "log.h"
#include "signed_scan.h"
#include "sockdiag.h"

struct scan {
	const struct shedd_options *o;
	struct signed_ports found;
};

static void scan_listener(const struct inet_diag_msg *m, size_t len, void *arg)
{
	struct scan *s = arg;
	__u16 port = ntohs(m->id.idiag_sport);

	if (options_port_protected(s->o->ports, s->o->nr_ports, port))
		signed_ports_add(&s->found, port, signed_listener_kinds(m, len));
}

void signed_watch_tick(struct signed_watch *w, int diag_fd, const struct shedd_options *o,
		       const char *iface, __u64 now_ns)
{
	/* INET_DIAG_INFO brings tcp_diag_get_aux()'s attributes: the MD5
	 * keys and the ULP, shown to CAP_NET_ADMIN, which shedd has. */
	const __u8 ext = 1 << (INET_DIAG_INFO - 1);
	struct scan s = { .o = o };
	char what[1024];
	int err;

	if (diag_fd < 0 || (w->read && now_ns - w->last_ns < SIGNED_RESCAN_NS))
		return;
	w->last_ns = now_ns;
	err = sockdiag_dump(diag_fd, AF_INET, 1 << TCP_LISTEN, ext, scan_listener, &s);
	if (!err)
		err = sockdiag_dump(diag_fd, AF_INET6, 1 << TCP_LISTEN, ext, scan_listener, &s);
	if (err) {
		if (!w->failed)
			log_warn("read the listeners' TCP-MD5 keys and ULPs (sock_diag): %s; the "
				 "XDP program still finds them itself", strerror(-err));
		w->failed = true;
		return;
	}
	w->failed = false;
	if (w->read && signed_ports_equal(&w->cur, &s.found))
		return;
	signed_ports_describe(&s.found, what, sizeof(what));
	if (s.found.n)
		log_iface(LOG_INFO, iface, "listeners a SYN cookie cannot answer on ports %s: "
			  "their signed SYNs (to MPTCP: every SYN) go to the kernel, charged as "
			  "in an unverified class, never a cookie (syn_checks.syn_signed)", what);
	else if (w->read)
		log_iface(LOG_INFO, iface, "no listener with TCP-MD5 keys or MPTCP on the "
			  "protected ports any more: every SYN of a verified class may get a "
			  "cookie");
	w->cur = s.found;
	w->read = true;
}
