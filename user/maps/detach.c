// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* detach.c - taking shedd off an interface: its tc filter, found by its
 * handle and priority and told from another program's by id or name, and
 * --remove (shedd's and shedctl's), which also detaches the pinned link
 * and removes the pins.
 */
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "detach.h"
#include "log.h"
#include "pindir.h"
#include "sysctls.h"

/* Quiet libbpf while asking tc what may not be there: a missing filter or
 * an existing qdisc is an answer, not a warning for the operator. */
int tc_print_nothing(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
}

/* The tc filter of the hand-off on @ifindex, whoever attached it. */
void tc_hook_of(struct bpf_tc_hook *hook, int ifindex)
{
	memset(hook, 0, sizeof(*hook));
	hook->sz = sizeof(*hook);
	hook->ifindex = ifindex;
	hook->attach_point = BPF_TC_INGRESS;
}

/* The program id at shedd's handle and priority: 0 if none, and whether it
 * is a shedd hand-off: @own_id (our own program's id, 0 if none), or by its
 * name. Reading another program's name takes CAP_SYS_ADMIN, which the
 * running daemon has dropped: its own id needs none. <0 on error. */
int tc_query(int ifindex, __u32 own_id, bool *ours)
{
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = SHEDD_TC_HANDLE, .priority = SHEDD_TC_PRIORITY);
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	libbpf_print_fn_t print;
	struct bpf_tc_hook hook;
	int fd, err;

	*ours = false;
	tc_hook_of(&hook, ifindex);
	print = libbpf_set_print(tc_print_nothing);
	err = bpf_tc_query(&hook, &q);
	libbpf_set_print(print);
	if (err == -ENOENT || err == -EINVAL) /* no filter, or no clsact qdisc */
		return 0;
	if (err)
		return err;
	if (own_id && q.prog_id == own_id) {
		*ours = true;
		return (int)q.prog_id;
	}
	fd = bpf_prog_get_fd_by_id(q.prog_id);
	if (fd < 0)
		return -errno;
	memset(&info, 0, sizeof(info));
	err = bpf_obj_get_info_by_fd(fd, &info, &len) ? -errno : 0;
	close(fd);
	if (err)
		return err;
	*ours = !strcmp(info.name, SHEDD_TC_PROG_NAME);
	return (int)q.prog_id;
}

/* Detach a shedd hand-off from @ifindex; a foreign filter is left alone.
 * The clsact qdisc stays: other programs may hang on it. */
int tc_detach_ours(int ifindex, __u32 own_id)
{
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = SHEDD_TC_HANDLE, .priority = SHEDD_TC_PRIORITY);
	struct bpf_tc_hook hook;
	bool ours;
	int id = tc_query(ifindex, own_id, &ours), err;

	if (id <= 0 || !ours)
		return id < 0 ? id : 0;
	tc_hook_of(&hook, ifindex);
	err = bpf_tc_detach(&hook, &opts);
	if (err && err != -ENOENT)
		return err;
	return 0;
}

int detach_remove(const struct shedd_options *o)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], tag[32];
	int fd, lock_fd, err, ifindex;

	if (o->netns[0] && (err = pindir_enter_netns(o->netns)))
		return err;
	if (!pindir_may_attach()) {
		log_err("needs CAP_BPF and CAP_NET_ADMIN to remove shedd: run as root or "
			"grant them");
		return -EPERM;
	}
	if ((err = pindir_mount_bpffs()) || (err = pindir_netns_tag(tag, sizeof(tag))))
		return err;
	pindir_of(dir, sizeof(dir), tag, o->iface);
	if (access(dir, F_OK)) {
		log_notice("nothing to remove: %s does not exist", dir);
		return 0;
	}
	/* A running shedd owns its program: --remove is for one left behind
	 * (killed, or --keep-on-exit). */
	lock_fd = pindir_lock(dir);
	if (lock_fd < 0) {
		if (lock_fd == -EBUSY)
			log_err("--remove: a shedd is running on %s (it holds the lock on %s); "
				"stop it with SIGTERM, which detaches it, instead",
				o->iface, dir);
		return lock_fd;
	}
	pindir_path(path, sizeof(path), dir, "link");
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		if (bpf_link_detach(fd) && errno != ENOLINK)
			log_warn("detach %s: %s", path, strerror(errno));
		close(fd);
	}
	/* The tc hand-off, if the interface is still there. */
	ifindex = (int)if_nametoindex(o->iface);
	if (ifindex && (err = tc_detach_ours(ifindex, 0)))
		log_warn("detach the tc hand-off from %s: %s", o->iface,
			 strerror(-err));
	/* Nothing sheds any more: the sysctls shedd set go back. */
	sysctls_restore(-1, dir);
	pindir_unpin_all(dir, lock_fd);
	close(lock_fd);
	log_notice("removed from %s", o->iface);
	return 0;
}
