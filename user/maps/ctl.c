// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ctl.c - the daemon reads what an operator wrote into the pins with
 * shedctl: the rate pin each tick, the manual prefixes at start and after a
 * reload. (An older ctl_state is converted with every other map by an
 * upgrade, user/maps/migrate.c.)
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

static int manual_fd(struct loader *l, int family)
{
	return bpf_map__fd(family == AF_INET ? l->skel->maps.manual_v4 : l->skel->maps.manual_v6);
}

bool ctl_manual_has(struct loader *l, int family, const void *key, __u32 config_cls)
{
	struct shedd_manual_prefix m;
	int fd = manual_fd(l, family);

	if (bpf_map_lookup_elem(fd, key, &m))
		return false;
	if (config_cls != SHEDD_NO_CLASS && m.config_cls != config_cls) {
		m.config_cls = config_cls;
		/* BPF_EXIST: one shedctl deleted meanwhile stays deleted. */
		bpf_map_update_elem(fd, key, &m, BPF_EXIST);
	}
	return true;
}

void ctl_manual_forget_config(struct loader *l, int family)
{
	__u8 key[sizeof(struct shedd_lpm_v6)], next[sizeof(struct shedd_lpm_v6)];
	struct shedd_manual_prefix m;
	int fd = manual_fd(l, family);
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, sizeof(key));
		prev = key;
		if (bpf_map_lookup_elem(fd, key, &m) || m.config_cls == SHEDD_NO_CLASS)
			continue;
		m.config_cls = SHEDD_NO_CLASS;
		bpf_map_update_elem(fd, key, &m, BPF_EXIST);
	}
}

static int apply_family(struct loader *l, int family)
{
	struct bpf_map *man = family == AF_INET ? l->skel->maps.manual_v4 : l->skel->maps.manual_v6;
	struct bpf_map *lpm = family == AF_INET ? l->skel->maps.prefix_v4 : l->skel->maps.prefix_v6;
	__u8 key[sizeof(struct shedd_lpm_v6)], next[sizeof(struct shedd_lpm_v6)];
	int mfd = bpf_map__fd(man), lfd = bpf_map__fd(lpm);
	struct shedd_manual_prefix m;
	void *prev = NULL;

	while (!bpf_map_get_next_key(mfd, prev, next)) {
		memcpy(key, next, sizeof(key));
		prev = key;
		if (bpf_map_lookup_elem(mfd, key, &m))
			continue; /* deleted meanwhile by shedctl */
		if (m.cls >= SHEDD_NR_CLASSES)
			continue;
		if (bpf_map_update_elem(lfd, key, &m.cls, BPF_ANY)) {
			int err = -errno;

			log_err("apply a manual prefix: %s%s", strerror(errno),
				err == -ENOSPC || err == -E2BIG ? " (the prefix trie is full)" : "");
			return err;
		}
	}
	return 0;
}

int loader_apply_manual_prefixes(struct loader *l)
{
	int err = apply_family(l, AF_INET);

	return err ? err : apply_family(l, AF_INET6);
}
