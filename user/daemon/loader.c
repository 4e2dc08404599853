// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* loader.c - load, then attach or adopt, and close shedd's XDP program
 * (with verified admission's tc hand-off, tc_handoff.c, beside it). The
 * link and every map are pinned in the interface's pin folder (pindir.h),
 * whose lock makes one shedd the owner of the interface.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <time.h>
#include <linux/if_arp.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "detach.h"
#include "flow_hash.h"
#include "handoff.skel.h"
#include "loader.h"
#include "log.h"
#include "migrate.h"
#include "pindir.h"
#include "probe.h"
#include "sysctls.h"
#include "shedd.skel.h"
#include "tc_handoff.h"

/* The ifindex an XDP link is attached to, 0 if defunct, <0 on error. */
static int link_ifindex(int link_fd)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(link_fd, &info, &len))
		return -errno;
	if (info.type != BPF_LINK_TYPE_XDP)
		return -EINVAL;
	return (int)info.xdp.ifindex;
}

/* --force: detach whatever holds XDP on @ifindex, in every mode, whether it
 * was attached through netlink or through a BPF link. */
static int detach_foreign(int ifindex, const struct bpf_xdp_query_opts *q)
{
	const struct {
		__u32 prog_id;
		__u32 flag;
	} modes[] = {
		{ q->skb_prog_id, XDP_FLAGS_SKB_MODE },
		{ q->drv_prog_id, XDP_FLAGS_DRV_MODE },
		{ q->hw_prog_id, XDP_FLAGS_HW_MODE },
	};
	LIBBPF_OPTS(bpf_xdp_query_opts, again);
	__u32 id = 0;
	size_t i;

	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (modes[i].prog_id)
			bpf_xdp_detach(ifindex, modes[i].flag, NULL);
	if (!bpf_xdp_query(ifindex, 0, &again) && !again.prog_id)
		return 0;
	/* Held by a BPF link: find it and detach it. */
	while (!bpf_link_get_next_id(id, &id)) {
		int fd = bpf_link_get_fd_by_id(id), err;

		if (fd < 0)
			continue;
		if (link_ifindex(fd) == ifindex) {
			err = bpf_link_detach(fd) ? -errno : 0;
			close(fd);
			return err;
		}
		close(fd);
	}
	log_err("cannot detach XDP program %u", q->prog_id);
	return -EBUSY;
}

static const char *xdp_mode_name(enum xdp_mode m)
{
	return m == XDP_MODE_GENERIC ? "generic" : "native";
}

static int attach_new(struct loader *l, const struct shedd_options *o)
{
	LIBBPF_OPTS(bpf_link_create_opts, lopts);
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	char path[PATH_MAX + 32];
	int prog_fd = bpf_program__fd(l->xdp_prog);
	int err;

	err = bpf_xdp_query(l->ifindex, 0, &q);
	if (!err && q.prog_id) {
		if (!o->force) {
			log_err("%s already has an XDP program (id %u); "
				"shedd will not replace it without --force",
				o->iface, q.prog_id);
			return -EBUSY;
		}
		log_warn("--force: detaching XDP program %u from %s",
			 q.prog_id, o->iface);
		err = detach_foreign(l->ifindex, &q);
		if (err)
			return err;
	}

	lopts.flags = o->xdp_mode == XDP_MODE_GENERIC ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	l->link_fd = bpf_link_create(prog_fd, l->ifindex, BPF_XDP, &lopts);
	if (l->link_fd < 0) {
		err = -errno;
		log_err("attach XDP (%s mode) to %s: %s%s",
			xdp_mode_name(o->xdp_mode), o->iface,
			strerror(-err),
			err == -EOPNOTSUPP || err == -EINVAL
			? " (the driver may lack native XDP: try --xdp-mode generic)"
			: "");
		return err;
	}
	pindir_path(path, sizeof(path), l->pin_dir, "link");
	if (bpf_obj_pin(l->link_fd, path)) {
		err = -errno;
		log_err("pin link at %s: %s", path, strerror(errno));
		return err;
	}
	return 0;
}

/* A shedd link is pinned: swap its program for ours in one step, so the
 * interface is never without a shedder and the (reused) maps keep counting. */
static int adopt(struct loader *l, const struct shedd_options *o)
{
	int prog_fd = bpf_program__fd(l->xdp_prog);

	if (bpf_link_update(l->link_fd, prog_fd, NULL)) {
		int err = -errno;

		log_err("adopt the running shedd on %s: %s",
			o->iface, strerror(errno));
		return err;
	}
	return 0;
}

int loader_attach(struct loader *l, const struct shedd_options *o)
{
	int err = 0;

	/* The hand-off first: our XDP program may answer SYNs with cookies as
	 * soon as it runs, and their ACKs need the hand-off. */
	if (l->handoff && (err = handoff_attach(l, o))) {
		if (migrate_needed(l))
			handoff_restore(l, o);
		return err;
	}
	if (migrate_needed(l)) {
		if ((err = migrate_swap(l, o))) {
			handoff_restore(l, o);
			return err;
		}
		/* Pins without a program: theirs are carried, ours attaches. */
		if (!l->adopted)
			err = attach_new(l, o);
	} else {
		err = l->adopted ? adopt(l, o) : attach_new(l, o);
	}
	if (err)
		return err;
	l->attached = true;
	if (!l->handoff)
		handoff_drop_stale(l, o);
	return 0;
}

/* Verified admission: what the kernel can do, what the options ask, one
 * line about it; refuse what cannot be done. */
static int verify_setup(struct loader *l, const struct shedd_options *o)
{
	char msg[512];

	probe_features(&l->features);
	if (kernel_baseline(&l->features, msg, sizeof(msg))) {
		log_err("%s", msg);
		return -EOPNOTSUPP;
	}
	if (verify_decide(&l->features, o, &l->plan, msg, sizeof(msg))) {
		log_err("%s", msg);
		return -EOPNOTSUPP;
	}
	log_info("%s", msg);
	return 0;
}

#ifndef BPF_F_XDP_DEV_BOUND_ONLY
#define BPF_F_XDP_DEV_BOUND_ONLY (1U << 6) /* include/uapi/linux/bpf.h, 6.3 */
#endif

/* Which of the object's two XDP programs runs: shedd_xdp_vlan where the
 * operator asked for it (--nic-vlan-tag auto) and the driver gives XDP the
 * VLAN tag it strips (and puts it back in replies), bound to the device as
 * the kernel requires of a program that asks for it; shedd_xdp anywhere
 * else. Not by default: Debian's 6.12.118 oopses in
 * bpf_dev_bound_netdev_unregister() when a device goes away while a
 * program this large is bound to it (docs/limits.md). A program bound
 * to the device attaches natively only; bpf_link_update() swaps one for
 * the other in a running link, either way, so an upgrade or an adoption
 * changes variant without a gap. */
static void xdp_prog_choose(struct loader *l, const struct shedd_options *o)
{
	struct bpf_program *vlan = l->skel->progs.shedd_xdp_vlan;
	int has = l->xdp_mode == XDP_MODE_NATIVE ? probe_xdp_rx_vlan(l->ifindex) : 0;

	l->xdp_prog = l->skel->progs.shedd_xdp;
	if (has < 0)
		log_warn("ask the driver of %s for the XDP metadata it gives: %s", o->iface,
			 strerror(-has));
	if (has <= 0) {
		log_info("XDP: a VLAN tag the NIC strips from a frame is not seen on %s (%s): "
			 "a cookie or RST answers such a SYN without it",
			 o->iface, l->xdp_mode != XDP_MODE_NATIVE
			 ? "generic XDP" : "its driver or the kernel, before 6.8, does not give it");
		return;
	}
	if (!kernel_at_least(l->features.release, NIC_VLAN_TAG_MIN_MAJOR, NIC_VLAN_TAG_MIN_MINOR)) {
		log_msg(o->nic_vlan_tag ? LOG_WARNING : LOG_INFO,
			"XDP: the driver of %s gives the VLAN tag the NIC strips, but shedd binds "
			"no program to read it on kernel %s, before %d.%d (Debian's 6.12.118 "
			"oopses when a device goes while a program is bound to it, "
			"docs/limits.md): a cookie or RST answers such a SYN without it",
			o->iface, l->features.release, NIC_VLAN_TAG_MIN_MAJOR,
			NIC_VLAN_TAG_MIN_MINOR);
		return;
	}
	if (!o->nic_vlan_tag) {
		log_info("XDP: a VLAN tag the NIC strips from a frame is not read on %s "
			 "(--nic-vlan-tag off): a cookie or RST answers such a SYN without it; "
			 "its driver gives the tag, which --nic-vlan-tag auto reads",
			 o->iface);
		return;
	}
	bpf_program__set_autoload(l->skel->progs.shedd_xdp, false);
	bpf_program__set_autoload(vlan, true);
	bpf_program__set_ifindex(vlan, (__u32)l->ifindex);
	bpf_program__set_flags(vlan, bpf_program__flags(vlan) | BPF_F_XDP_DEV_BOUND_ONLY);
	l->xdp_prog = vlan;
	log_info("XDP: shedd_xdp_vlan, bound to %s: a VLAN tag the NIC strips from a frame is "
		 "read from its descriptor and put back in the cookies and RSTs it answers",
		 o->iface);
	log_warn("the program is bound to %s: on a kernel that follows a stale pointer when a "
		 "device with a bound program goes (Debian's 6.12.118 oopses), removing %s while "
		 "shedd runs brings the host down; remove shedd first (shedd --iface %s --remove), "
		 "see docs/limits.md", o->iface, o->iface, o->iface);
}

/* The mode of the running shedd's attachment, which an adoption keeps: it
 * swaps the program inside the link. The kernel never runs native and
 * generic XDP on one interface at once, so going from one to the other
 * would leave the interface unprotected between a detach and an attach:
 * an --xdp-mode that asks for the other mode is refused, not ignored. */
static int adopt_mode(struct loader *l, const struct shedd_options *o)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int err = bpf_xdp_query(l->ifindex, 0, &q);

	if (err) {
		log_err("query the XDP attachment of %s: %s", o->iface, strerror(-err));
		return err;
	}
	l->xdp_mode = q.skb_prog_id ? XDP_MODE_GENERIC : XDP_MODE_NATIVE;
	if (!o->xdp_mode_set || o->xdp_mode == l->xdp_mode)
		return 0;
	log_err("the running shedd on %s is attached in %s mode and --xdp-mode asks for %s: "
		"the kernel runs only one of them at a time, so switching would leave %s "
		"unprotected for a moment; refusing. Adopt it as it runs (start without "
		"--xdp-mode %s), or remove it first (shedd --iface %s --remove) and start again",
		o->iface, xdp_mode_name(l->xdp_mode), xdp_mode_name(o->xdp_mode), o->iface,
		xdp_mode_name(o->xdp_mode), o->iface);
	return -EEXIST;
}

/* The key of the flow hash: the one pinned in @dir (a running shedd's,
 * which its flows were hashed with), else a new one from getrandom(). */
static int flow_key_choose(struct loader *l, const char *dir)
{
	char path[PATH_MAX + 32];
	struct shedd_flow_key k = { 0 };
	__u32 zero = 0;
	ssize_t n;
	int fd;

	pindir_path(path, sizeof(path), dir, "flow_key");
	fd = bpf_obj_get(path);
	if (fd >= 0) {
		if (bpf_map_lookup_elem(fd, &zero, &k))
			memset(&k, 0, sizeof(k));
		close(fd);
	}
	while (!k.k0 && !k.k1) {
		n = getrandom(&k, sizeof(k), 0);
		if (n != (ssize_t)sizeof(k)) {
			int err = n < 0 ? -errno : -EIO;

			log_err("draw the flow hash key with getrandom: %s",
				n < 0 ? strerror(errno) : "short read");
			return err;
		}
	}
	l->flow_key = k;
	return 0;
}

/* The key into the pinned flow_key map, for the next daemon. */
static int flow_key_store(struct loader *l)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.flow_key), &zero, &l->flow_key,
				BPF_ANY)) {
		int err = -errno;

		log_err("write the flow hash key: %s", strerror(errno));
		return err;
	}
	return 0;
}

/* The layout version of the pins this program makes or reuses. */
static int write_layout(struct loader *l)
{
	struct shedd_layout v = { .version = SHEDD_LAYOUT_VERSION };
	struct shedd_layout_compat c = { .oldest = SHEDD_LAYOUT_COMPAT };
	struct bpf_prog_info info;
	__u32 zero = 0, len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(l->xdp_prog), &info, &len))
		v.prog_id = info.id;

	/* Which older builds may adopt these pins as they are: with the
	 * version, before any reader can see the one without the other. */
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.layout_compat), &zero, &c, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(l->skel->maps.layout), &zero, &v, BPF_ANY)) {
		int err = -errno;

		log_err("write the layout version: %s", strerror(errno));
		return err;
	}
	return 0;
}

/* The program parses Ethernet frames: on a device without an Ethernet
 * header (wireguard, xfrm, vti, bareudp, ipip, tun: ARPHRD_NONE,
 * ARPHRD_TUNNEL, ...) generic XDP hands it the IP header first, which it
 * would read as an Ethernet header, judging nothing. 0 for an Ethernet
 * device (lo too: its frames carry an Ethernet header), a negative errno
 * (said) otherwise. */
static int iface_ethernet(const char *iface)
{
	struct iface_link link;
	int err = probe_iface_link(iface, &link);

	if (err)
		return err;
	if (link.type != ARPHRD_ETHER && link.type != ARPHRD_LOOPBACK) {
		log_err("%s is not an Ethernet device (link type %u): shedd parses Ethernet "
			"frames and would judge nothing on it; run shedd on the Ethernet "
			"interface the packets arrive on (docs/datapath.md, \"Decapsulations "
			"shedd does not open\")", iface, (unsigned int)link.type);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

int loader_open(struct loader *l, const struct shedd_options *o)
{
	char path[PATH_MAX + 32];
	struct bpf_map *map;
	int err, link_fd = -1;

	memset(l, 0, sizeof(*l));
	l->link_fd = -1;
	l->lock_fd = -1;
	probe_host_rmem_max();
	if (o->netns[0] && (err = pindir_enter_netns(o->netns)))
		return err;
	if (!pindir_may_attach()) {
		log_err("needs CAP_BPF and CAP_NET_ADMIN (and CAP_PERFMON for the sojourn "
			"probes) to load BPF and attach XDP: run as root or grant them");
		return -EPERM;
	}
	l->ifindex = (int)if_nametoindex(o->iface);
	if (!l->ifindex) {
		log_err("interface %s: %s", o->iface, strerror(errno));
		return -ENODEV;
	}
	if ((err = iface_ethernet(o->iface)))
		return err;
	l->ncpus = libbpf_num_possible_cpus();
	if (l->ncpus <= 0)
		return log_libbpf("count possible CPUs", l->ncpus);
	if ((err = pindir_mount_bpffs()) || (err = pindir_netns_tag(l->ns_tag, sizeof(l->ns_tag))))
		return err;
	pindir_of(l->pin_dir, sizeof(l->pin_dir), l->ns_tag, o->iface);
	l->lock_fd = pindir_lock(l->pin_dir);
	if (l->lock_fd < 0) {
		err = l->lock_fd;
		if (err == -EBUSY)
			log_err("another shedd is running on %s (it holds the lock on %s); "
				"refusing to share or replace it: stop that one first",
				o->iface, l->pin_dir);
		l->pin_dir[0] = '\0'; /* not ours: loader_close must not touch it */
		return err;
	}

	/* A pinned link whose interface is gone (or was re-created) is stale:
	 * drop it, keep the maps, and attach afresh. */
	pindir_path(path, sizeof(path), l->pin_dir, "link");
	link_fd = bpf_obj_get(path);
	if (link_fd >= 0 && link_ifindex(link_fd) != l->ifindex) {
		log_warn("pinned link %s is stale; attaching afresh", path);
		close(link_fd);
		link_fd = -1;
		unlink(path);
	}
	/* A live link: the program keeps shedding with its maps while this
	 * one is loaded and configured; loader_attach() then swaps it in. */
	l->xdp_mode = o->xdp_mode;
	if (link_fd >= 0) {
		l->link_fd = link_fd;
		l->adopted = true;
		if ((err = adopt_mode(l, o)))
			goto fail;
	}
	/* Or one an older shedd pinned at the older path. */
	if ((err = migrate_find_older(l, o)))
		goto fail;

	if ((err = verify_setup(l, o)))
		goto fail;

	l->skel = shedd_bpf__open();
	if (!l->skel) {
		err = -errno;
		log_libbpf("open BPF object", err);
		goto fail;
	}
	/* A kernel without the cookie helpers was refused already
	 * (kernel_baseline()): kernels before 6.8 verify the global functions
	 * that call them whatever this flag says. */
	l->skel->rodata->verify_enabled = l->features.cookie_helpers;
	if ((err = flow_key_choose(l, l->pin_dir)))
		goto fail;
	SET_FLOW_SIP(l->skel->rodata, l->flow_key);
	/* Reuse the maps of a running shedd where their layout is today's,
	 * pin new ones there, or, for an upgrade, make maps of today's layout
	 * to carry the running shedd's values into (migrate.c). */
	bpf_object__for_each_map(map, l->skel->obj) {
		/* A scratch map holds nothing between packets: each program
		 * has its own, unpinned. */
		if (bpf_map__is_internal(map) || map == l->skel->maps.reply_scratch ||
		    map == l->skel->maps.rst_scratch || map == l->skel->maps.settings_pkt ||
		    map == l->skel->maps.tun_pkt ||
		    map == l->skel->maps.csum_scratch || map == l->skel->maps.fib_scratch)
			continue;
		if ((err = migrate_plan(l, map)))
			goto fail;
	}
	if ((err = migrate_decide(l)))
		goto fail;
	xdp_prog_choose(l, o);
	err = shedd_bpf__load(l->skel);
	if (err) {
		log_libbpf("load BPF program", err);
		if (err == -EINVAL)
			log_info("if maps pinned under %s come from another shedd build, "
				 "remove them with: shedd --iface %s --remove",
				 l->pin_dir, o->iface);
		if (l->xdp_prog == l->skel->progs.shedd_xdp_vlan)
			log_info("the program bound to %s (--nic-vlan-tag auto) did not load: "
				 "--nic-vlan-tag off loads the one that is not bound", o->iface);
		if (!o->verbose)
			log_info("run with -v for the verifier log");
		goto fail;
	}
	if (l->plan.enabled && l->plan.handoff == SHEDD_HANDOFF_TC && (err = handoff_load(l, o)))
		goto fail;
	/* An upgrade: the running shedd's values into the new maps, while its
	 * program sheds. */
	if ((err = migrate_copy(l)) || (err = flow_key_store(l)) || (err = write_layout(l)))
		goto fail;
	return 0;
fail:
	loader_close(l, l->adopted);
	return err;
}

void loader_close(struct loader *l, bool keep)
{
	if (l->fair_cells) {
		munmap((void *)l->fair_cells, (size_t)FAIR_CELLS * sizeof(struct shedd_fair_cell));
		l->fair_cells = NULL;
	}
	/* Nothing of ours sheds yet (a fresh load that never attached): the
	 * pins it made serve nobody. */
	if (!l->attached && !l->adopted)
		keep = false;
	if (!keep && l->link_fd >= 0) {
		/* Detach now, even if someone else holds a link fd. */
		bpf_link_detach(l->link_fd);
	}
	/* Shedding stops: the sysctls set for it go back, as noted in the
	 * pins (by this shedd or the one it adopted from). */
	if (!keep && l->pin_dir[0])
		sysctls_restore(l->skel ? bpf_map__fd(l->skel->maps.sysctls) : -1, l->pin_dir);
	if (l->link_fd >= 0)
		close(l->link_fd);
	l->link_fd = -1;
	if (!keep && l->pin_dir[0] && l->ifindex) {
		int err = tc_detach_ours(l->ifindex, handoff_id(l));

		if (err)
			log_warn("detach the tc hand-off: %s", strerror(-err));
	}
	handoff_bpf__destroy(l->handoff);
	l->handoff = NULL;
	shedd_bpf__destroy(l->skel);
	l->skel = NULL;
	migrate_free(l);
	if (!keep && l->pin_dir[0])
		pindir_unpin_all(l->pin_dir, l->lock_fd);
	/* Last: the interface is free only once the pins are settled. */
	if (l->lock_fd >= 0)
		close(l->lock_fd);
	l->lock_fd = -1;
}

int loader_map_fd(const struct loader *l, const char *name)
{
	struct bpf_map *m = l->skel ? bpf_object__find_map_by_name(l->skel->obj, name) : NULL;

	return m ? bpf_map__fd(m) : -1;
}
