// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* loader.c - load, configure, then attach or adopt, and remove shedd's XDP
 * program and, with verified admission's tc hand-off, its tc program.
 * Everything lives under /sys/fs/bpf/shedd/IFACE/ (another network
 * namespace: /sys/fs/bpf/shedd/ns:INODE/IFACE/): the link (whose pin keeps
 * the program attached when shedd is gone) and every map, with BTF. The
 * folder is also the lock that makes one shedd the owner of the interface.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <time.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "alloc.h"
#include "ctl.h"
#include "flow_hash.h"
#include "settings.h"
#include "handoff.skel.h"
#include "loader.h"
#include "tunnels.h"
#include "log.h"
#include "migrate.h"
#include "service.h"
#include "probe.h"
#include "shedd.skel.h"

/* The inode number recent kernels give the initial network namespace
 * (PROC_NET_INIT_INO; seen on 6.18). Older ones number it like any other. */
#define SHEDD_NET_INIT_INO 0xEFFFFFF9U

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

/* What shedd pins, by name: the maps (not the programs' .bss/.rodata), and
 * the tc hand-off's program (its filter, not a link, keeps it attached). */
static const char *const pinned_names[] = {
	"settings", "ports", "prefix_v4", "prefix_v6", "rates", "reserve", "buckets", "stats",
	"rst_budget", "ctl_state", "cookie_budget", "refresh", "mss_cache", "proven",
	"handoff_stats", "handoff", "ctl_cmd", "manual_v4", "manual_v6", "daemon_stats",
	"cookie_sent", "layout", "settings_cur", "flow_key", "broadcast", "tun_config",
	"tun_local", "tun_stats", "port_set", "fair_sketch", "fair_config", "fair_heavy",
	"fair_stats",
	/* Pinned by older shedd, removed with the rest. */
	"closing",
};

static int enter_netns(const char *name)
{
	char path[PATH_MAX];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		log_err("open network namespace %s: %s", path, strerror(errno));
		return err;
	}
	if (setns(fd, CLONE_NEWNET)) {
		err = -errno;
		log_err("enter network namespace %s: %s", name, strerror(errno));
	}
	close(fd);
	return err;
}

static int ensure_bpffs(void)
{
	struct statfs st;

	if (statfs("/sys/fs/bpf", &st) == 0 && st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mkdir("/sys/fs/bpf", 0700) && errno != EEXIST) {
		log_err("mkdir /sys/fs/bpf: %s", strerror(errno));
		return -errno;
	}
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700")) {
		log_err("mount bpffs on /sys/fs/bpf: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static int mkdir_p(const char *dir)
{
	char tmp[PATH_MAX];
	char *p;

	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

static void pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

/* Remove @dir's parent if it is a namespace folder (ns:INODE) left empty. */
static void parent_dir_remove(const char *dir)
{
	char parent[PATH_MAX];
	char *slash;

	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (!slash)
		return;
	*slash = '\0';
	if (strcmp(parent, SHEDD_PIN_ROOT))
		rmdir(parent);
}

/* Remove the pins and the IFACE folder (and the shedd folder if empty). */
/* The pins are unlinked through @dir_fd (the locked folder) where there
 * is one, and the folder through its parent reached from it: a daemon that
 * runs as another user than root has lost the right to walk through
 * /sys/fs/bpf (mode 1700) with its capabilities, not the folder it holds
 * open. */
static void unpin_all(const char *dir, int dir_fd)
{
	char path[PATH_MAX + 32];
	const char *base = strrchr(dir, '/');
	int parent_fd = -1;
	size_t i;

	pin_path(path, sizeof(path), dir, "link");
	if (dir_fd < 0 || unlinkat(dir_fd, "link", 0))
		unlink(path);
	for (i = 0; i < sizeof(pinned_names) / sizeof(pinned_names[0]); i++) {
		char pending[64];

		pin_path(path, sizeof(path), dir, pinned_names[i]);
		if (dir_fd < 0 || unlinkat(dir_fd, pinned_names[i], 0))
			unlink(path);
		/* And what an upgrade that was cut short left (migrate.c). */
		snprintf(pending, sizeof(pending), "%s_pending", pinned_names[i]);
		pin_path(path, sizeof(path), dir, pending);
		if (dir_fd < 0 || unlinkat(dir_fd, pending, 0))
			unlink(path);
	}
	if (dir_fd >= 0 && base)
		parent_fd = openat(dir_fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (parent_fd < 0 || unlinkat(parent_fd, base + 1, AT_REMOVEDIR))
		rmdir(dir);
	/* Its namespace folder (ns:INODE), if left empty, the same way. */
	if (parent_fd >= 0) {
		char parent[PATH_MAX];
		const char *pbase;
		int gp_fd;

		snprintf(parent, sizeof(parent), "%.*s", (int)(base - dir), dir);
		pbase = strrchr(parent, '/');
		if (pbase && strcmp(parent, SHEDD_PIN_ROOT) &&
		    (gp_fd = openat(parent_fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0) {
			unlinkat(gp_fd, pbase + 1, AT_REMOVEDIR);
			close(gp_fd);
		}
		close(parent_fd);
	}
	parent_dir_remove(dir);
	rmdir(SHEDD_PIN_ROOT);
}

int loader_share_dirs(const struct loader *l, __u32 gid)
{
	char dir[PATH_MAX], *slash;
	int err;

	snprintf(dir, sizeof(dir), "%s", l->pin_dir);
	for (;;) {
		if (chown(dir, (uid_t)-1, (gid_t)gid) || chmod(dir, 0770)) {
			err = -errno;
			log_err("give %s to group %u: %s", dir, gid, strerror(errno));
			return err;
		}
		if (!strcmp(dir, SHEDD_PIN_ROOT) || !(slash = strrchr(dir, '/')))
			return 0;
		*slash = '\0';
	}
}

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

int loader_netns_tag(char *tag, size_t len)
{
	struct stat self, init;

	if (stat("/proc/self/ns/net", &self)) {
		int err = -errno;

		log_err("identify the network namespace (/proc/self/ns/net): %s",
			strerror(errno));
		return err;
	}
	/* The initial namespace keeps the plain IFACE path: the kernel's own
	 * (known by its fixed inode number), or PID 1's where that can be read
	 * (the host's on older kernels, or a container's). */
	if (self.st_ino == SHEDD_NET_INIT_INO ||
	    (!stat("/proc/1/ns/net", &init) && init.st_ino == self.st_ino &&
	     init.st_dev == self.st_dev)) {
		tag[0] = '\0';
		return 0;
	}
	snprintf(tag, len, "ns:%llu", (unsigned long long)self.st_ino);
	return 0;
}

static void pin_dir_of(char *buf, size_t len, const char *tag, const char *iface)
{
	if (tag[0])
		snprintf(buf, len, "%s/%s/%s", SHEDD_PIN_ROOT, tag, iface);
	else
		snprintf(buf, len, "%s/%s", SHEDD_PIN_ROOT, iface);
}

/* Take the interface: an exclusive flock on the pin folder, which the
 * kernel drops when the process dies, however it dies. A folder removed and
 * made again by the owner while we waited is not the one we locked: retry.
 * Returns the locked fd, -EBUSY if another process holds it, or an error. */
static int lock_pin_dir(const char *dir)
{
	struct stat held, now;
	int attempt, fd, err;

	for (attempt = 0; attempt < 3; attempt++) {
		if ((err = mkdir_p(dir))) {
			log_err("mkdir %s: %s", dir, strerror(-err));
			return err;
		}
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			err = -errno;
			if (err == -ENOENT)
				continue;
			log_err("open %s: %s", dir, strerror(errno));
			return err;
		}
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			err = errno == EWOULDBLOCK ? -EBUSY : -errno;
			if (err != -EBUSY)
				log_err("lock %s: %s", dir, strerror(errno));
			close(fd);
			return err;
		}
		if (!fstat(fd, &held) && !stat(dir, &now) && held.st_ino == now.st_ino &&
		    held.st_dev == now.st_dev)
			return fd;
		close(fd);
	}
	log_err("lock %s: the folder keeps being removed", dir);
	return -EAGAIN;
}

/* Quiet libbpf while asking tc what may not be there: a missing filter or
 * an existing qdisc is an answer, not a warning for the operator. */
static int print_nothing(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
}

/* The tc filter of the hand-off on @ifindex, whoever attached it. */
static void tc_hook_of(struct bpf_tc_hook *hook, int ifindex)
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
static int tc_query(int ifindex, __u32 own_id, bool *ours)
{
	LIBBPF_OPTS(bpf_tc_opts, q, .handle = SHEDD_TC_HANDLE, .priority = SHEDD_TC_PRIORITY);
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	libbpf_print_fn_t print;
	struct bpf_tc_hook hook;
	int fd, err;

	*ours = false;
	tc_hook_of(&hook, ifindex);
	print = libbpf_set_print(print_nothing);
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

/* The id of this shedd's own tc hand-off program; 0 if it has none. */
static __u32 handoff_id(const struct loader *l)
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

/* Detach a shedd hand-off from @ifindex; a foreign filter is left alone.
 * The clsact qdisc stays: other programs may hang on it. */
static int tc_detach_ours(int ifindex, __u32 own_id)
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

/* Attach our hand-off at tc ingress: the clsact qdisc is made if missing,
 * and a filter of an earlier shedd is replaced in one step. */
static int tc_attach(struct loader *l, const struct shedd_options *o)
{
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = SHEDD_TC_HANDLE, .priority = SHEDD_TC_PRIORITY,
		    .flags = BPF_TC_F_REPLACE);
	char path[PATH_MAX + 32];
	libbpf_print_fn_t print;
	struct bpf_tc_hook hook;
	bool ours;
	int id, err;

	tc_hook_of(&hook, l->ifindex);
	print = libbpf_set_print(print_nothing);
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
	pin_path(path, sizeof(path), l->pin_dir, "handoff");
	unlink(path);
	if (bpf_program__pin(l->handoff->progs.shedd_handoff, path)) {
		err = -errno;
		log_err("pin the tc hand-off at %s: %s", path, strerror(errno));
		return err;
	}
	return 0;
}

/* No tc hand-off in this shedd: take away one an earlier shedd left. */
static void tc_drop_stale(struct loader *l, const struct shedd_options *o)
{
	char path[PATH_MAX + 32];
	int err = tc_detach_ours(l->ifindex, 0);

	if (err)
		log_err("detach the tc hand-off from %s: %s", o->iface,
			strerror(-err));
	pin_path(path, sizeof(path), l->pin_dir, "handoff");
	unlink(path);
	pin_path(path, sizeof(path), l->pin_dir, "handoff_stats");
	unlink(path);
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
	int prog_fd = bpf_program__fd(l->skel->progs.shedd_xdp);
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
	pin_path(path, sizeof(path), l->pin_dir, "link");
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
	int prog_fd = bpf_program__fd(l->skel->progs.shedd_xdp);

	if (bpf_link_update(l->link_fd, prog_fd, NULL)) {
		int err = -errno;

		log_err("adopt the running shedd on %s: %s",
			o->iface, strerror(errno));
		return err;
	}
	return 0;
}

/* An upgrade failed after our tc hand-off was attached: put back the one
 * the running shedd had, or take ours away if it had none. */
static void tc_restore(struct loader *l, const struct shedd_options *o)
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
	pin_path(path, sizeof(path), l->pin_dir, "handoff");
	unlink(path);
	if (bpf_obj_pin(old, path))
		log_err("pin the running tc hand-off back at %s: %s", path, strerror(errno));
}

int loader_attach(struct loader *l, const struct shedd_options *o)
{
	int err = 0;

	/* The hand-off first: our XDP program may answer SYNs with cookies as
	 * soon as it runs, and their ACKs need the hand-off. */
	if (l->handoff && (err = tc_attach(l, o))) {
		if (migrate_needed(l))
			tc_restore(l, o);
		return err;
	}
	if (migrate_needed(l)) {
		if ((err = migrate_swap(l, o))) {
			tc_restore(l, o);
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
		tc_drop_stale(l, o);
	return 0;
}

static int print_libbpf_error(const char *step, int err)
{
	char buf[128];

	libbpf_strerror(err, buf, sizeof(buf));
	log_err("%s: %s", step, buf);
	return err;
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

/* The tc hand-off shares the XDP program's settings, ports, prefixes, MSS
 * cache and proven flows: the very same maps, not copies; its counters are
 * pinned beside them. */
static int handoff_load(struct loader *l, const struct shedd_options *o)
{
	struct {
		struct bpf_map *mine, *xdp;
	} shared[8];
	size_t i;
	int err;

	l->handoff = handoff_bpf__open();
	if (!l->handoff)
		return print_libbpf_error("open the tc hand-off", -errno);
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
			return print_libbpf_error("share the maps with the tc hand-off", err);
	if ((err = migrate_plan(l, l->handoff->maps.handoff_stats)) || (err = migrate_decide(l)))
		return err;
	err = handoff_bpf__load(l->handoff);
	if (err) {
		print_libbpf_error("load the tc hand-off", err);
		if (!o->verbose)
			log_info("run with -v for the verifier log");
	}
	return err;
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

	pin_path(path, sizeof(path), dir, "flow_key");
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
	struct bpf_prog_info info;
	__u32 zero = 0, len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(l->skel->progs.shedd_xdp), &info, &len))
		v.prog_id = info.id;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.layout), &zero, &v, BPF_ANY)) {
		int err = -errno;

		log_err("write the layout version: %s", strerror(errno));
		return err;
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
	if (o->netns[0] && (err = enter_netns(o->netns)))
		return err;
	if (!service_may_attach()) {
		log_err("needs CAP_BPF and CAP_NET_ADMIN (and CAP_PERFMON for the sojourn "
			"probes) to load BPF and attach XDP: run as root or grant them");
		return -EPERM;
	}
	l->ifindex = (int)if_nametoindex(o->iface);
	if (!l->ifindex) {
		log_err("interface %s: %s", o->iface, strerror(errno));
		return -ENODEV;
	}
	l->ncpus = libbpf_num_possible_cpus();
	if (l->ncpus <= 0)
		return print_libbpf_error("count possible CPUs", l->ncpus);
	if ((err = ensure_bpffs()) || (err = loader_netns_tag(l->ns_tag, sizeof(l->ns_tag))))
		return err;
	pin_dir_of(l->pin_dir, sizeof(l->pin_dir), l->ns_tag, o->iface);
	l->lock_fd = lock_pin_dir(l->pin_dir);
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
	pin_path(path, sizeof(path), l->pin_dir, "link");
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
		print_libbpf_error("open BPF object", err);
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
		    map == l->skel->maps.csum_scratch)
			continue;
		if ((err = migrate_plan(l, map)))
			goto fail;
	}
	if ((err = migrate_decide(l)))
		goto fail;
	err = shedd_bpf__load(l->skel);
	if (err) {
		print_libbpf_error("load BPF program", err);
		if (err == -EINVAL)
			log_info("if maps pinned under %s come from another shedd build, "
				 "remove them with: shedd --iface %s --remove",
				 l->pin_dir, o->iface);
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

/* The XDP program's copy of the port list, one bit a port, written whole:
 * a packet sees each word old or new. */
static int write_port_set(struct loader *l, const struct shedd_options *o)
{
	static struct shedd_port_set ps;
	__u32 zero = 0;
	int i;

	memset(&ps, 0, sizeof(ps));
	for (i = 0; i < o->nr_ports; i++)
		shedd_port_set_add(&ps, o->ports[i]);
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.port_set), &zero, &ps, BPF_ANY)) {
		int err = -errno;

		log_err("write port_set: %s", strerror(errno));
		return err;
	}
	return 0;
}

static int sync_ports(struct loader *l, const struct shedd_options *o)
{
	int fd = bpf_map__fd(l->skel->maps.ports);
	__u16 key, next, stale[MAX_PORTS];
	int i, n = 0, err;
	__u8 one = 1;

	for (i = 0; i < o->nr_ports; i++) {
		key = o->ports[i];
		if (bpf_map_update_elem(fd, &key, &one, BPF_ANY)) {
			err = -errno;
			log_err("protect port %u: %s", key, strerror(errno));
			return err;
		}
	}
	for (err = bpf_map_get_next_key(fd, NULL, &next); !err && n < MAX_PORTS;
	     err = bpf_map_get_next_key(fd, &key, &next)) {
		key = next;
		for (i = 0; i < o->nr_ports && o->ports[i] != key; i++)
			;
		if (i == o->nr_ports)
			stale[n++] = key;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &stale[i]);
	return write_port_set(l, o);
}

static bool rule_matches(const struct prefix_rule *r, int family, const __u8 *addr,
			 __u32 prefixlen)
{
	return r->family == family && r->prefixlen == prefixlen &&
	       !memcmp(r->addr, addr, family == AF_INET ? 4 : 16);
}

/* Insert every rule of @family, then delete the trie's entries that no rule
 * names any more. */
static int sync_prefixes(struct loader *l, const struct shedd_options *o, int family)
{
	struct bpf_map *map = family == AF_INET ? l->skel->maps.prefix_v4 : l->skel->maps.prefix_v6;
	size_t alen = family == AF_INET ? 4 : 16;
	size_t klen = sizeof(__u32) + alen;
	int fd = bpf_map__fd(map);
	__u8 key[20], next[20];
	__u8 (*stale)[20] = NULL;
	int i, n = 0, cap = 0, err = 0;
	void *prev = NULL;

	ctl_manual_forget_config(l, family);
	for (i = 0; i < o->nr_prefixes; i++) {
		const struct prefix_rule *r = &o->prefixes[i];

		if (r->family != family)
			continue;
		memcpy(key, &r->prefixlen, sizeof(__u32));
		memcpy(key + sizeof(__u32), r->addr, alen);
		if (ctl_manual_has(l, family, key, r->cls))
			continue; /* an operator's prefix wins (shedctl) */
		if (bpf_map_update_elem(fd, key, &r->cls, BPF_ANY)) {
			err = -errno;
			log_err("add prefix: %s%s", strerror(errno),
				err == -ENOSPC || err == -E2BIG ? " (the prefix trie is full)" : "");
			return err;
		}
	}
	while (!bpf_map_get_next_key(fd, prev, next)) {
		__u32 plen;
		bool keep = false;

		memcpy(key, next, klen);
		prev = key;
		memcpy(&plen, key, sizeof(plen));
		keep = ctl_manual_has(l, family, key, SHEDD_NO_CLASS);
		for (i = 0; i < o->nr_prefixes && !keep; i++)
			keep = rule_matches(&o->prefixes[i], family, key + sizeof(__u32), plen);
		if (keep)
			continue;
		if (n == cap) {
			void *grown = realloc(stale, sizeof(*stale) * (size_t)(cap ? cap * 2 : 16));

			if (!grown) {
				err = -ENOMEM;
				break;
			}
			stale = grown;
			cap = cap ? cap * 2 : 16;
		}
		memcpy(stale[n++], key, klen);
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(fd, stale[i]);
	free(stale);
	return err;
}

/* The unicast MAC of @iface, which a SYN must be sent to for the program
 * to answer it with a RST (an interface without one, all zero, gets no
 * RST), and its MTU, which caps the MSS a cookie SYN-ACK offers. */
static int iface_mac_mtu(const char *iface, __u8 mac[6], __u32 *mtu)
{
	struct ifreq ifr;
	int fd, err = 0;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", iface);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr)) {
		err = -errno;
		log_err("read the MAC address of %s: %s", iface,
			strerror(errno));
	} else {
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
		if (ioctl(fd, SIOCGIFMTU, &ifr)) {
			err = -errno;
			log_err("read the MTU of %s: %s", iface, strerror(errno));
		} else {
			*mtu = ifr.ifr_mtu > 0 ? (__u32)ifr.ifr_mtu : 0;
		}
	}
	if (fd >= 0)
		close(fd);
	return err;
}

/* The source check needs the kernel's FIB lookup, which answers only on
 * an interface that forwards. Where it cannot run, a spoofed flood from a
 * top class's prefix would spend that class's tokens: the classes above
 * the default class that --verify does not name verify while shedding
 * instead (@cfg, with verified admission on), so such a flood must prove
 * its addresses once the class sheds. Says which. */
static void source_check_fallback(const struct shedd_options *o, struct shedd_config *cfg,
				  bool can_verify)
{
	int v4 = probe_forwarding(o->iface, 0), v6 = probe_forwarding(o->iface, 1);
	char names[128] = "";
	size_t len = 0;
	__u32 c;

	if (v4 == 1 && v6 == 1)
		return;
	for (c = 0; can_verify && c < o->default_class && c < SHEDD_NR_CLASSES; c++) {
		if ((o->verify_named & (1U << c)) || cfg->verify[c] != SHEDD_VERIFY_OFF)
			continue;
		cfg->verify[c] = SHEDD_VERIFY_SHEDDING;
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
					class_name(c));
		if (len >= sizeof(names))
			len = sizeof(names) - 1;
	}
	if (names[0])
		log_notice("source check: %s%s%s does not forward on %s: the kernel's FIB lookup "
			   "cannot answer there (SYNs counted src_unchecked), so %s verify while "
			   "shedding instead (--verify CLASS=off to keep a class unverified)",
			   v4 == 1 ? "" : "IPv4", v4 != 1 && v6 != 1 ? " and " : "",
			   v6 == 1 ? "" : "IPv6", o->iface, names);
	else
		log_notice("source check: %s%s%s does not forward on %s: the kernel's FIB lookup "
			   "cannot answer there, and SYNs of classes above the default class are "
			   "taken as their class (counted src_unchecked)",
			   v4 == 1 ? "" : "IPv4", v4 != 1 && v6 != 1 ? " and " : "",
			   v6 == 1 ? "" : "IPv6", o->iface);
}

/* The namespace's IPv4 broadcast addresses into the map broadcast, if
 * they changed (@changed: set to 1 then). 0 or a negative errno. */
static int sync_broadcast(struct loader *l, int *changed)
{
	int fd = bpf_map__fd(l->skel->maps.broadcast), err;
	struct shedd_broadcast cur = { 0 }, next;
	__u32 zero = 0;

	if ((err = probe_brd4(next.addr, SHEDD_MAX_BRD4)) < 0)
		return err;
	if (bpf_map_lookup_elem(fd, &zero, &cur) == 0 && !memcmp(&cur, &next, sizeof(cur)))
		return 0;
	if (bpf_map_update_elem(fd, &zero, &next, BPF_ANY)) {
		err = -errno;
		log_err("write broadcast: %s", strerror(errno));
		return err;
	}
	*changed = 1;
	return 0;
}

int loader_refresh_host(struct loader *l)
{
	int fd = bpf_map__fd(l->skel->maps.settings), err, brd_changed = 0;
	int cur_fd = bpf_map__fd(l->skel->maps.settings_cur);
	struct shedd_config cfg, next;

	if ((err = settings_read(fd, cur_fd, &cfg))) {
		log_err("read settings: %s", strerror(-err));
		return err;
	}
	next = cfg;
	if (l->plan.enabled &&
	    ((err = probe_syn_options(&next.wscale, &next.ecn)) ||
	     (err = probe_syn_opts_off(&next.syn_opts_off))))
		return err;
	if ((err = sync_broadcast(l, &brd_changed)))
		return err;
	if (brd_changed)
		log_notice("the namespace's IPv4 broadcast addresses changed: SYNs to them are "
			   "dropped as the kernel drops them");
	if (!memcmp(&cfg, &next, sizeof(cfg)))
		return 0;
	if ((err = settings_publish(fd, cur_fd, &next))) {
		log_err("write settings: %s", strerror(-err));
		return err;
	}
	log_notice("the namespace changed what the kernel answers: SYN-ACK window scale %u, "
		   "ECN %u, options off 0x%x (timestamps 1, SACK 2, window scaling 4)",
		   next.wscale, next.ecn, next.syn_opts_off);
	return 0;
}

int loader_configure(struct loader *l, const struct shedd_options *o)
{
	__u64 rst_per_cpu;
	struct shedd_config cfg;
	int err;

	/* Ports and prefixes first: the settings may turn all_ports off. */
	if ((err = sync_ports(l, o)) || (err = sync_prefixes(l, o, AF_INET)) ||
	    (err = sync_prefixes(l, o, AF_INET6)))
		return err;
	memset(&cfg, 0, sizeof(cfg));
	cfg.all_ports = o->nr_ports == 0;
	cfg.default_class = o->default_class;
	memcpy(cfg.reject, o->reject, sizeof(cfg.reject));
	if ((err = iface_mac_mtu(o->iface, cfg.mac, &cfg.mtu)))
		return err;
	/* The RST budget is per CPU: each gets its share, rounded up, and a
	 * tenth of a second of it as depth. */
	rst_per_cpu = (o->rst_rate_per_sec + (__u64)l->ncpus - 1) / (__u64)l->ncpus;
	cfg.rst_rate_per_sec = (__u32)rst_per_cpu;
	cfg.rst_burst = rst_per_cpu / 10 ? (__u32)(rst_per_cpu / 10) : 1;
	/* Verified admission: with the plan off every class is charged
	 * directly, whatever --verify says. */
	/* --cookie-rate is the host's, as --rst-rate: each CPU gets its
	 * share, rounded up, and 10 ms of it as depth. */
	cfg.cookie_rate_per_sec = cookie_rate_per_cpu(o->cookie_rate_per_sec, l->ncpus);
	cfg.cookie_burst = cookie_burst_for(cfg.cookie_rate_per_sec);
	cfg.verify_hold_ns = o->verify_hold_ns;
	if (l->plan.enabled) {
		memcpy(cfg.verify, o->verify, sizeof(cfg.verify));
		cfg.handoff = l->plan.handoff;
		if ((err = probe_apply_sysctls(l->plan.handoff)) ||
		    (err = probe_syn_options(&cfg.wscale, &cfg.ecn)) ||
		    (err = probe_syn_opts_off(&cfg.syn_opts_off)))
			return err;
	}
	cfg.source_check = o->source_check;
	if (cfg.source_check == SHEDD_SRC_STRICT)
		source_check_fallback(o, &cfg, l->plan.enabled);
	{
		int changed = 0;

		if ((err = sync_broadcast(l, &changed)))
			return err;
	}
	cfg.tx_blocked = l->tx_blocked;
	if ((err = settings_publish(bpf_map__fd(l->skel->maps.settings),
				    bpf_map__fd(l->skel->maps.settings_cur), &cfg))) {
		log_err("write settings: %s", strerror(-err));
		return err;
	}
	return 0;
}

int loader_read_tx_blocked(struct loader *l, __u8 *v)
{
	struct shedd_config cfg;
	int err = settings_read(bpf_map__fd(l->skel->maps.settings),
				bpf_map__fd(l->skel->maps.settings_cur), &cfg);

	if (err) {
		log_err("read settings: %s", strerror(-err));
		return err;
	}
	*v = cfg.tx_blocked;
	return 0;
}

/* Only the daemon's tick writes settings while it runs (a reload runs in
 * the same thread), so the read and the write need no lock. */
int loader_write_tx_blocked(struct loader *l, __u8 v)
{
	int fd = bpf_map__fd(l->skel->maps.settings), err;
	int cur_fd = bpf_map__fd(l->skel->maps.settings_cur);
	struct shedd_config cfg;

	err = settings_read(fd, cur_fd, &cfg);
	if (!err) {
		cfg.tx_blocked = v;
		err = settings_publish(fd, cur_fd, &cfg);
	}
	if (!err) {
		l->tx_blocked = v;
		return 0;
	}
	log_err("write settings.tx_blocked=%u: %s", v, strerror(-err));
	return err;
}

int loader_read_tun_stats(struct loader *l, struct shedd_tun_stats *sum)
{
	struct shedd_tun_stats *percpu = calloc((size_t)l->ncpus, sizeof(*percpu));
	__u32 zero = 0;
	int i, err = 0;

	memset(sum, 0, sizeof(*sum));
	if (!percpu)
		return -ENOMEM;
	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.tun_stats), &zero, percpu)) {
		err = -errno;
	} else {
		for (i = 0; i < l->ncpus; i++) {
			sum->decap += percpu[i].decap;
			sum->judged += percpu[i].judged;
			sum->refused += percpu[i].refused;
		}
	}
	free(percpu);
	return err;
}

static bool tun_has_local(const struct tun_found *f, const struct shedd_tun_addr *a)
{
	unsigned int i;

	for (i = 0; i < f->nr_local; i++)
		if (!memcmp(&f->local[i], a, sizeof(*a)))
			return true;
	return false;
}

int loader_write_tunnels(struct loader *l, const struct tun_found *f)
{
	int fd = bpf_map__fd(l->skel->maps.tun_local), cfd = bpf_map__fd(l->skel->maps.tun_config);
	struct shedd_tun_addr key, next, stale[64];
	struct shedd_tun_config cfg = { 0 };
	unsigned int i, nstale;
	__u32 zero = 0;
	__u8 one = 1;
	bool more;

	for (i = 0; i < f->nr_local; i++) {
		if (bpf_map_update_elem(fd, &f->local[i], &one, BPF_ANY)) {
			int err = -errno;

			log_err("write tun_local: %s", strerror(errno));
			return err;
		}
	}
	/* Delete what is no longer local, a batch at a time: a deletion
	 * during the walk would restart it. */
	do {
		more = false;
		nstale = 0;
		if (bpf_map_get_next_key(fd, NULL, &next))
			break;
		do {
			key = next;
			if (!tun_has_local(f, &key)) {
				if (nstale == sizeof(stale) / sizeof(stale[0])) {
					more = true;
					break;
				}
				stale[nstale++] = key;
			}
		} while (bpf_map_get_next_key(fd, &key, &next) == 0);
		for (i = 0; i < nstale; i++)
			bpf_map_delete_elem(fd, &stale[i]);
	} while (more);

	/* One value: the program sees the old record or the new one. */
	cfg.kinds = f->kinds;
	memcpy(cfg.udp_port, f->udp_port, sizeof(f->udp_port[0]) * f->nr_ports);
	memcpy(cfg.udp_kind, f->udp_kind, sizeof(f->udp_kind[0]) * f->nr_ports);
	memcpy(cfg.udp_proto, f->udp_proto, sizeof(f->udp_proto[0]) * f->nr_ports);
	memcpy(cfg.udp_family, f->udp_family, sizeof(f->udp_family[0]) * f->nr_ports);
	if (bpf_map_update_elem(cfd, &zero, &cfg, BPF_ANY)) {
		int err = -errno;

		log_err("write tun_config: %s", strerror(errno));
		return err;
	}
	return 0;
}

int loader_write_rates(struct loader *l, const struct shedd_class_rate *next, __u64 now_ns)
{
	int fd = bpf_map__fd(l->skel->maps.rates);
	int res_fd = bpf_map__fd(l->skel->maps.reserve);
	__u32 c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		struct shedd_reserve res = { 0 };
		struct shedd_rate cur = { 0 };

		/* Read what is published and when the reserve last refilled, so
		 * the change is published piecewise (alloc_publish()). */
		if (bpf_map_lookup_elem_flags(fd, &c, &cur, BPF_F_LOCK) ||
		    bpf_map_lookup_elem_flags(res_fd, &c, &res, BPF_F_LOCK))
			return -errno;
		alloc_publish(&cur.r, &next[c], res.s.last_ns, now_ns);
		if (bpf_map_update_elem(fd, &c, &cur, BPF_F_LOCK))
			return -errno;
	}
	return 0;
}

int loader_read_total_rate(struct loader *l, double *total)
{
	int fd = bpf_map__fd(l->skel->maps.rates);
	__u32 c;

	*total = 0;
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		struct shedd_rate r;

		if (bpf_map_lookup_elem_flags(fd, &c, &r, BPF_F_LOCK))
			return -errno;
		*total += (double)r.r.rate_per_sec;
	}
	return 0;
}

int loader_read_stats(struct loader *l, struct shedd_stats *percpu)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.stats), &zero, percpu))
		return -errno;
	return 0;
}

const struct shedd_fair_cell *loader_fair_cells(struct loader *l)
{
	size_t len = (size_t)FAIR_CELLS * sizeof(struct shedd_fair_cell);
	void *m;

	if (l->fair_cells)
		return l->fair_cells;
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, bpf_map__fd(l->skel->maps.fair_sketch), 0);
	if (m == MAP_FAILED) {
		log_warn("map the fairness sketch: %s; each class is held as one source",
			 strerror(errno));
		return NULL;
	}
	l->fair_cells = m;
	return l->fair_cells;
}

int loader_write_fair(struct loader *l, const struct shedd_fair_class *cfg)
{
	int fd = bpf_map__fd(l->skel->maps.fair_config);
	__u32 c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		if (bpf_map_update_elem(fd, &c, &cfg[c], BPF_ANY))
			return -errno;
	return 0;
}

int loader_read_fair_stats(struct loader *l, struct shedd_fair_stats *sum)
{
	int fd = bpf_map__fd(l->skel->maps.fair_stats), i;
	struct shedd_fair_stats *percpu = calloc((size_t)l->ncpus, sizeof(*percpu));
	__u32 c;

	if (!percpu)
		return -ENOMEM;
	memset(sum, 0, sizeof(*sum) * SHEDD_NR_CLASSES);
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		if (bpf_map_lookup_elem(fd, &c, percpu)) {
			int err = -errno;

			free(percpu);
			return err;
		}
		for (i = 0; i < l->ncpus; i++) {
			sum[c].counted += percpu[i].counted;
			sum[c].checked += percpu[i].checked;
			sum[c].shed += percpu[i].shed;
			sum[c].over += percpu[i].over;
		}
	}
	free(percpu);
	return 0;
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
		unpin_all(l->pin_dir, l->lock_fd);
	/* Last: the interface is free only once the pins are settled. */
	if (l->lock_fd >= 0)
		close(l->lock_fd);
	l->lock_fd = -1;
}

int loader_read_ctl(struct loader *l, struct shedd_ctl_state *st)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.ctl_state), &zero, st))
		return -errno;
	return 0;
}

int loader_write_ctl(struct loader *l, const struct shedd_ctl_state *st)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.ctl_state), &zero, st, BPF_ANY))
		return -errno;
	return 0;
}

int loader_read_daemon_stats(struct loader *l, struct shedd_daemon_stats *st)
{
	__u32 zero = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.daemon_stats), &zero, st))
		return -errno;
	return 0;
}

int loader_write_daemon_stats(struct loader *l, const struct shedd_daemon_stats *st)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.daemon_stats), &zero, st, BPF_ANY))
		return -errno;
	return 0;
}

int loader_remove(const struct shedd_options *o)
{
	char dir[PATH_MAX], path[PATH_MAX + 32], tag[32];
	int fd, lock_fd, err, ifindex;

	if (o->netns[0] && (err = enter_netns(o->netns)))
		return err;
	if (!service_may_attach()) {
		log_err("needs CAP_BPF and CAP_NET_ADMIN to remove shedd: run as root or "
			"grant them");
		return -EPERM;
	}
	if ((err = ensure_bpffs()) || (err = loader_netns_tag(tag, sizeof(tag))))
		return err;
	pin_dir_of(dir, sizeof(dir), tag, o->iface);
	if (access(dir, F_OK)) {
		log_notice("nothing to remove: %s does not exist", dir);
		return 0;
	}
	/* A running shedd owns its program: --remove is for one left behind
	 * (killed, or --keep-on-exit). */
	lock_fd = lock_pin_dir(dir);
	if (lock_fd < 0) {
		if (lock_fd == -EBUSY)
			log_err("--remove: a shedd is running on %s (it holds the lock on %s); "
				"stop it with SIGTERM, which detaches it, instead",
				o->iface, dir);
		return lock_fd;
	}
	pin_path(path, sizeof(path), dir, "link");
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
	unpin_all(dir, lock_fd);
	close(lock_fd);
	log_notice("removed from %s", o->iface);
	return 0;
}
