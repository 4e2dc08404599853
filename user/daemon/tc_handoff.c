// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* tc_handoff.c - verified admission's tc hand-off: loaded beside the XDP
 * program on the same maps, attached at tc ingress before the XDP program
 * runs (cookie ACKs need it), put back or taken away when an upgrade or a
 * start fails.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "detach.h"
#include "flow_hash.h"
#include "handoff.skel.h"
#include "log.h"
#include "migrate.h"
#include "pindir.h"
#include "shedd.skel.h"
#include "tc_handoff.h"

/* The id of this shedd's own tc hand-off program; 0 if it has none. */
__u32 handoff_id(const struct loader *l)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	if (!l->handoff)
		return 0;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(l->handoff->progs.shedd_handoff), &info, &len))
		return 0;
	return info.id;
}

/* Attach our hand-off at tc ingress: the clsact qdisc is made if missing,
 * and a filter of an earlier shedd is replaced in one step. */
int handoff_attach(struct loader *l, const struct shedd_options *o)
{
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = SHEDD_TC_HANDLE, .priority = SHEDD_TC_PRIORITY,
		    .flags = BPF_TC_F_REPLACE);
	char path[PATH_MAX + 32];
	libbpf_print_fn_t print;
	struct bpf_tc_hook hook;
	bool ours;
	int id, err;

	tc_hook_of(&hook, l->ifindex);
	print = libbpf_set_print(tc_print_nothing);
	err = bpf_tc_hook_create(&hook);
	libbpf_set_print(print);
	if (err && err != -EEXIST) {
		log_err("create the clsact qdisc of %s: %s", o->iface,
			strerror(-err));
		return err;
	}
	id = tc_query(l->ifindex, 0, &ours);
	if (id < 0) {
		log_err("query tc ingress of %s: %s", o->iface, strerror(-id));
		return id;
	}
	if (id > 0 && !ours) {
		if (!o->force) {
			log_err("%s has a tc ingress filter of another program (id %d) "
				"at handle 0x%x priority %d; shedd will not replace it without "
				"--force", o->iface, id, SHEDD_TC_HANDLE, SHEDD_TC_PRIORITY);
			return -EBUSY;
		}
		log_warn("--force: replacing tc program %d on %s", id, o->iface);
	}
	opts.prog_fd = bpf_program__fd(l->handoff->progs.shedd_handoff);
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		log_err("attach the tc hand-off to %s ingress: %s", o->iface,
			strerror(-err));
		return err;
	}
	/* The pin is for bpftool: the filter holds the program. */
	pindir_path(path, sizeof(path), l->pin_dir, "handoff");
	unlink(path);
	if (bpf_program__pin(l->handoff->progs.shedd_handoff, path)) {
		err = -errno;
		log_err("pin the tc hand-off at %s: %s", path, strerror(errno));
		return err;
	}
	return 0;
}

/* No tc hand-off in this shedd: take away one an earlier shedd left. */
void handoff_drop_stale(struct loader *l, const struct shedd_options *o)
{
	char path[PATH_MAX + 32];
	int err = tc_detach_ours(l->ifindex, 0);

	if (err)
		log_err("detach the tc hand-off from %s: %s", o->iface,
			strerror(-err));
	pindir_path(path, sizeof(path), l->pin_dir, "handoff");
	unlink(path);
	pindir_path(path, sizeof(path), l->pin_dir, "handoff_stats");
	unlink(path);
}

/* An upgrade failed after our tc hand-off was attached: put back the one
 * the running shedd had, or take ours away if it had none. */
void handoff_restore(struct loader *l, const struct shedd_options *o)
{
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = SHEDD_TC_HANDLE, .priority = SHEDD_TC_PRIORITY,
		    .flags = BPF_TC_F_REPLACE);
	int old = migrate_old_handoff_fd(l), err;
	char path[PATH_MAX + 32];
	struct bpf_tc_hook hook;

	if (!l->handoff)
		return;
	if (old < 0) {
		if ((err = tc_detach_ours(l->ifindex, handoff_id(l))))
			log_err("detach the tc hand-off from %s: %s", o->iface, strerror(-err));
		return;
	}
	tc_hook_of(&hook, l->ifindex);
	opts.prog_fd = old;
	if ((err = bpf_tc_attach(&hook, &opts)))
		log_err("put back the running tc hand-off of %s: %s", o->iface, strerror(-err));
	pindir_path(path, sizeof(path), l->pin_dir, "handoff");
	unlink(path);
	if (bpf_obj_pin(old, path))
		log_err("pin the running tc hand-off back at %s: %s", path, strerror(errno));
}

/* The tc hand-off shares the XDP program's settings, ports, prefixes, MSS
 * cache and proven flows: the very same maps, not copies; its counters are
 * pinned beside them. */
int handoff_load(struct loader *l, const struct shedd_options *o)
{
	struct {
		struct bpf_map *mine, *xdp;
	} shared[8];
	size_t i;
	int err;

	l->handoff = handoff_bpf__open();
	if (!l->handoff)
		return log_libbpf("open the tc hand-off", -errno);
	SET_FLOW_SIP(l->handoff->rodata, l->flow_key);
	shared[0].mine = l->handoff->maps.settings, shared[0].xdp = l->skel->maps.settings;
	shared[1].mine = l->handoff->maps.ports, shared[1].xdp = l->skel->maps.ports;
	shared[2].mine = l->handoff->maps.prefix_v4, shared[2].xdp = l->skel->maps.prefix_v4;
	shared[3].mine = l->handoff->maps.prefix_v6, shared[3].xdp = l->skel->maps.prefix_v6;
	shared[4].mine = l->handoff->maps.mss_cache, shared[4].xdp = l->skel->maps.mss_cache;
	shared[5].mine = l->handoff->maps.proven, shared[5].xdp = l->skel->maps.proven;
	shared[6].mine = l->handoff->maps.settings_cur, shared[6].xdp = l->skel->maps.settings_cur;
	shared[7].mine = l->handoff->maps.flow_key, shared[7].xdp = l->skel->maps.flow_key;
	for (i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
		if ((err = bpf_map__reuse_fd(shared[i].mine, bpf_map__fd(shared[i].xdp))))
			return log_libbpf("share the maps with the tc hand-off", err);
	if ((err = migrate_plan(l, l->handoff->maps.handoff_stats)) || (err = migrate_decide(l)))
		return err;
	err = handoff_bpf__load(l->handoff);
	if (err) {
		log_libbpf("load the tc hand-off", err);
		if (!o->verbose)
			log_info("run with -v for the verifier log");
	}
	return err;
}
