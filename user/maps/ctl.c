// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ctl.c - the daemon reads the rate an operator pinned with shedctl, each
 * tick (the manual prefixes are prefixes.c's). An older ctl_state is
 * converted with every other map by an upgrade, user/maps/migrate.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ctl.h"
#include "log.h"
#include "shedd.skel.h"

int ctl_read_cmd(struct ctl *c, struct loader *l, const char *iface)
{
	struct shedd_ctl_cmd cmd;
	double was = ctl_pinned_rate(&c->cmd), now;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.ctl_cmd), &zero, &cmd))
		return -errno;
	c->cmd = cmd;
	now = ctl_pinned_rate(&cmd);
	if (now > 0 && now != was)
		log_iface(LOG_NOTICE, iface, "rate pinned at %.0f SYN/s by an operator (shedctl); "
			  "the controller keeps measuring and does not write", now);
	else if (now <= 0 && was > 0)
		log_iface(LOG_NOTICE, iface, "rate unpinned; the controller carries on from "
			  "%.0f SYN/s", was);
	return 0;
}
