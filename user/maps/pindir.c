// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pindir.c - the pin folder of one interface under /sys/fs/bpf/shedd/
 * (another network namespace: /sys/fs/bpf/shedd/ns:INODE/IFACE/): where it
 * is, its lock, and taking it away. The link's pin keeps the program
 * attached when shedd is gone; every map is pinned beside it, with BTF.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <cap-ng.h>

#include "log.h"
#include "pindir.h"

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
	"tun_local", "tun_stats", "port_set", "fair_cells", "fair_config", "fair_heavy",
	"fair_stats", "sysctls", "layout_compat", "lease", "port_limit", "port_reserve",
	"port_buckets", "tun_devs", "tun_checks", "tun_reserve", "tun_buckets", "syn_checks",
	"fair_heavy_cpu",
	/* Pinned by older shedd, removed with the rest (fair_sketch: the
	 * sketch of 1024 cells a row of layout versions 5 and 6, left for
	 * them should they adopt these pins again). */
	"closing", "fair_sketch",
};

bool pindir_may_attach(void)
{
	if (capng_get_caps_process())
		return false;
	return (capng_have_capability(CAPNG_EFFECTIVE, CAP_BPF) ||
		capng_have_capability(CAPNG_EFFECTIVE, CAP_SYS_ADMIN)) &&
	       capng_have_capability(CAPNG_EFFECTIVE, CAP_NET_ADMIN);
}

int pindir_enter_netns(const char *name)
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

int pindir_mount_bpffs(void)
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

void pindir_path(char *buf, size_t len, const char *dir, const char *name)
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
/* Every pin left in @dir, whatever its name (no folder is made there). */
static void unpin_rest(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (e->d_type != DT_DIR)
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

void pindir_unpin_all(const char *dir, int dir_fd)
{
	char path[PATH_MAX + 32];
	const char *base = strrchr(dir, '/');
	int parent_fd = -1;
	size_t i;

	pindir_path(path, sizeof(path), dir, "link");
	if (dir_fd < 0 || unlinkat(dir_fd, "link", 0))
		unlink(path);
	for (i = 0; i < sizeof(pinned_names) / sizeof(pinned_names[0]); i++) {
		char pending[64];

		pindir_path(path, sizeof(path), dir, pinned_names[i]);
		if (dir_fd < 0 || unlinkat(dir_fd, pinned_names[i], 0))
			unlink(path);
		/* And what an upgrade that was cut short left (migrate.c). */
		snprintf(pending, sizeof(pending), "%s_pending", pinned_names[i]);
		pindir_path(path, sizeof(path), dir, pending);
		if (dir_fd < 0 || unlinkat(dir_fd, pending, 0))
			unlink(path);
	}
	/* And what a newer shedd pinned that this build does not know (pins
	 * it adopted as they are: docs/pins.md): the folder is shedd's. */
	unpin_rest(dir);
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

int pindir_share(const char *pin_dir, __u32 gid)
{
	char dir[PATH_MAX], *slash;
	int err;

	snprintf(dir, sizeof(dir), "%s", pin_dir);
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

int pindir_netns_tag(char *tag, size_t len)
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

void pindir_of(char *buf, size_t len, const char *tag, const char *iface)
{
	if (tag[0])
		snprintf(buf, len, "%s/%s/%s", SHEDD_PIN_ROOT, tag, iface);
	else
		snprintf(buf, len, "%s/%s", SHEDD_PIN_ROOT, iface);
}

/* A shedctl tells a running shedd by a shared flock it takes and drops at
 * once (pins_daemon_running()): a start that meets one must not take it for
 * an owner. An owner holds its lock for its whole life, a probe for a few
 * microseconds (longer only if it is descheduled in between): wait that
 * long before calling the folder taken. */
#define PINDIR_LOCK_WAIT_MS 1000
#define PINDIR_LOCK_STEP_MS 10

/* flock(LOCK_EX) on @fd, retried while only a probe may hold it. 0, or
 * -EBUSY when it stays held, or another negative errno. */
static int lock_ex(int fd)
{
	const struct timespec step = { 0, PINDIR_LOCK_STEP_MS * 1000000L };
	int waited;

	for (waited = 0;; waited += PINDIR_LOCK_STEP_MS) {
		if (!flock(fd, LOCK_EX | LOCK_NB))
			return 0;
		if (errno != EWOULDBLOCK)
			return -errno;
		if (waited >= PINDIR_LOCK_WAIT_MS)
			return -EBUSY;
		nanosleep(&step, NULL);
	}
}

/* Take the interface: an exclusive flock on the pin folder, which the
 * kernel drops when the process dies, however it dies. A folder removed and
 * made again by the owner while we waited is not the one we locked: retry.
 * Returns the locked fd, -EBUSY if another process holds it (for longer
 * than a shedctl's probe does), or an error. */
int pindir_lock(const char *dir)
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
		if ((err = lock_ex(fd))) {
			if (err != -EBUSY)
				log_err("lock %s: %s", dir, strerror(-err));
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
