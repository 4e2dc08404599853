// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* ctl.c - the daemon reads what an operator wrote into the pins with
 * shedctl: the rate pin each tick, the manual prefixes at start and after a
 * reload; and converts the ctl_state of an older shedd it adopts.
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

int ctl_migrate_begin(const char *pin_dir, struct shedd_ctl_state *old, bool *have)
{
	char path[PATH_MAX + 32], buf[4096];
	struct bpf_map_info info;
	__u32 len = sizeof(info), zero = 0;
	int fd, err = 0;

	*have = false;
	memset(old, 0, sizeof(*old));
	snprintf(path, sizeof(path), "%s/ctl_state", pin_dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0; /* nothing pinned: a fresh start */
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		err = -errno;
		goto out;
	}
	if (info.value_size == sizeof(*old))
		goto out; /* today's layout: reused as it is */
	if (info.value_size > sizeof(buf) || bpf_map_lookup_elem(fd, &zero, buf))
		log_warn("the pinned controller state (%u bytes) cannot be read; "
			 "the controller starts afresh", info.value_size);
	else if (info.value_size < sizeof(*old)) {
		/* An older layout: a prefix of today's, see shedd.h. */
		memcpy(old, buf, info.value_size);
		*have = old->version != 0;
	} else {
		log_warn("the pinned controller state comes from a newer shedd "
			 "(%u bytes); the controller starts afresh", info.value_size);
	}
	if (unlink(path)) {
		err = -errno;
		log_err("replace the pinned controller state %s: %s", path, strerror(errno));
	}
out:
	close(fd);
	return err;
}

int ctl_migrate_finish(struct loader *l, const struct shedd_ctl_state *old, bool have)
{
	int err;

	if (!have)
		return 0;
	err = loader_write_ctl(l, old);
	if (err)
		log_err("write the converted controller state: %s", strerror(-err));
	else
		log_notice("controller state of version %u converted to version %u",
			   old->version, SHEDD_CTL_STATE_VERSION);
	return err;
}
