// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* pins.c - shedctl reads and writes shedd's pinned maps by path. Nothing
 * here needs the daemon: the maps outlive it while its program is pinned.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "pindir.h"
#include "pins.h"
#include "settings.h"

int pins_enter_netns(const char *netns, char *err, size_t errlen)
{
	char path[PATH_MAX];
	int fd, ret = 0;

	if (!netns || !netns[0])
		return 0;
	snprintf(path, sizeof(path), "/run/netns/%s", netns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_say(err, errlen, -errno, "open network namespace %s: %s", path,
			       strerror(errno));
	if (setns(fd, CLONE_NEWNET))
		ret = err_say(err, errlen, -errno, "enter network namespace %s: %s", netns,
			      strerror(errno));
	close(fd);
	return ret;
}

static bool has_pins(const char *dir)
{
	char path[2 * PATH_MAX];

	snprintf(path, sizeof(path), "%s/stats", dir);
	return access(path, F_OK) == 0;
}

int pins_find(char *dir, size_t len, const char *iface, char *iface_out, size_t iface_len,
	      char *err, size_t errlen)
{
	char base[PATH_MAX], tag[32], found[IF_NAMESIZE] = "", names[256] = "";
	struct dirent *e;
	int n = 0;
	DIR *d;

	if (pindir_netns_tag(tag, sizeof(tag)))
		return err_say(err, errlen, -EIO, "cannot tell the network namespace");
	if (tag[0])
		snprintf(base, sizeof(base), "%s/%s", SHEDD_PIN_ROOT, tag);
	else
		snprintf(base, sizeof(base), "%s", SHEDD_PIN_ROOT);
	if (iface && iface[0]) {
		if (!iface_name_valid(iface))
			return err_say(err, errlen, -EINVAL, "'%s' is not an interface name", iface);
		snprintf(dir, len, "%s/%s", base, iface);
		snprintf(iface_out, iface_len, "%s", iface);
		if (!has_pins(dir))
			return err_say(err, errlen, -ENOENT,
				       "no shedd pins for %s (%s): shedd never ran there, was "
				       "stopped (which removes them), or runs in another network "
				       "namespace (--netns)", iface, dir);
		return 0;
	}
	d = opendir(base);
	if (!d)
		return err_say(err, errlen, -ENOENT, "no shedd pins in %s: no shedd in this network "
				    "namespace (--netns NAME for another)", base);
	while ((e = readdir(d))) {
		char sub[PATH_MAX + 256];

		if (e->d_name[0] == '.' || !strncmp(e->d_name, "ns:", 3))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", base, e->d_name);
		if (!has_pins(sub))
			continue;
		if (n++ == 0)
			snprintf(found, sizeof(found), "%.*s", IF_NAMESIZE - 1, e->d_name);
		if (strlen(names) + strlen(e->d_name) + 2 < sizeof(names)) {
			strcat(names, " ");
			strcat(names, e->d_name);
		}
	}
	closedir(d);
	if (n == 0)
		return err_say(err, errlen, -ENOENT, "no shedd pins in %s: no shedd in this network "
				    "namespace (--netns NAME for another)", base);
	if (n > 1)
		return err_say(err, errlen, -EINVAL, "shedd runs on several interfaces:%s; "
				    "choose one with --iface", names);
	snprintf(dir, len, "%s/%s", base, found);
	snprintf(iface_out, iface_len, "%s", found);
	return 0;
}

static int open_map(const char *dir, const char *name, bool required, char *err, size_t errlen)
{
	char path[PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0 && (required || errno != ENOENT))
		return err_say(err, errlen, -errno, "open %s: %s", path, strerror(errno));
	return fd < 0 ? -1 : fd;
}

void pins_close(struct pins *p)
{
	int *fds[] = { &p->stats_fd, &p->rates_fd, &p->ctl_state_fd, &p->ctl_cmd_fd,
		       &p->prefix_fd[0], &p->prefix_fd[1], &p->manual_fd[0], &p->manual_fd[1],
		       &p->settings_fd, &p->settings_cur_fd };
	size_t i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int pins_open(struct pins *p, const char *dir, char *err, size_t errlen)
{
	struct {
		int *fd;
		const char *name;
		bool required;
	} maps[] = {
		{ &p->stats_fd, "stats", true },         { &p->rates_fd, "rates", true },
		{ &p->prefix_fd[0], "prefix_v4", true }, { &p->prefix_fd[1], "prefix_v6", true },
		{ &p->ctl_state_fd, "ctl_state", false }, { &p->ctl_cmd_fd, "ctl_cmd", false },
		{ &p->manual_fd[0], "manual_v4", false }, { &p->manual_fd[1], "manual_v6", false },
		{ &p->settings_fd, "settings", false },
		/* Pins of layout 2 and older have one settings record. */
		{ &p->settings_cur_fd, "settings_cur", false },
	};
	size_t i;
	int ret;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		*maps[i].fd = -1;
	snprintf(p->dir, sizeof(p->dir), "%s", dir);
	p->ncpus = libbpf_num_possible_cpus();
	if (p->ncpus <= 0)
		return err_say(err, errlen, -EIO, "count possible CPUs: %s", strerror(-p->ncpus));
	/* The layout first: nothing is read from pins of a newer one. */
	if ((ret = layout_version(dir, &p->layout_version, err, errlen)))
		return ret;
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		struct layout_fit fit;
		int fd = open_map(dir, maps[i].name, maps[i].required, err, errlen);

		if (fd < -1) {
			pins_close(p);
			return fd;
		}
		*maps[i].fd = fd;
		if (fd < 0)
			continue;
		if ((ret = layout_check(fd, layout_find(maps[i].name), dir, &fit, err, errlen))) {
			pins_close(p);
			return ret;
		}
		if (maps[i].fd == &p->stats_fd)
			p->stats_fit = fit;
		else if (maps[i].fd == &p->ctl_state_fd)
			p->ctl_state_fit = fit;
		else if (maps[i].fd == &p->settings_fd)
			p->settings_size = fit.value_size;
	}
	return 0;
}

int pins_read_tx_blocked(struct pins *p, bool *blocked, char *err, size_t errlen)
{
	struct shedd_config cfg;
	__u32 zero = 0;
	int ret = 0;

	*blocked = false;
	if (p->settings_fd < 0)
		return err_say(err, errlen, -ENOENT, "no settings in %s", p->dir);
	if (p->settings_size != sizeof(cfg))
		return err_say(err, errlen, -EINVAL, "%s/settings: a record of %u bytes, not %zu",
			       p->dir, p->settings_size, sizeof(cfg));
	if (p->settings_cur_fd >= 0)
		ret = settings_read(p->settings_fd, p->settings_cur_fd, &cfg);
	else if (bpf_map_lookup_elem(p->settings_fd, &zero, &cfg))
		ret = -errno;
	if (ret)
		return err_say(err, errlen, ret, "read %s/settings: %s", p->dir, strerror(-ret));
	*blocked = cfg.tx_blocked != 0;
	return 0;
}

bool pins_daemon_running(const struct pins *p)
{
	int fd = open(p->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool held = false;

	if (fd < 0)
		return false;
	/* shedd holds an exclusive flock on its pin folder while it runs. */
	if (flock(fd, LOCK_SH | LOCK_NB))
		held = errno == EWOULDBLOCK;
	else
		flock(fd, LOCK_UN);
	close(fd);
	return held;
}

int pins_read_stats(struct pins *p, struct shedd_stats *sum, char *err, size_t errlen)
{
	/* One value per CPU, of the pinned map's size, which layout_check()
	 * found this build can read. */
	size_t stride = layout_percpu_stride(p->stats_fit.value_size);
	__u8 *percpu = calloc((size_t)p->ncpus, stride);
	const size_t words = sizeof(*sum) / sizeof(__u64);
	const struct layout_map *m = layout_find("stats");
	struct shedd_stats one;
	__u32 zero = 0;
	int i, ret = 0;
	size_t w;

	if (!percpu)
		return err_say(err, errlen, -ENOMEM, "out of memory");
	memset(sum, 0, sizeof(*sum));
	if (bpf_map_lookup_elem(p->stats_fd, &zero, percpu)) {
		ret = err_say(err, errlen, -errno, "read %s/stats: %s", p->dir, strerror(errno));
	} else {
		/* Every field is a __u64 counter. */
		for (i = 0; i < p->ncpus; i++) {
			layout_convert(m, &p->stats_fit, percpu + (size_t)i * stride, &one);
			for (w = 0; w < words; w++)
				((__u64 *)sum)[w] += ((const __u64 *)&one)[w];
		}
	}
	free(percpu);
	return ret;
}

int pins_read_rates(struct pins *p, __u64 rate_per_sec[SHEDD_NR_CLASSES], char *err,
		    size_t errlen)
{
	__u32 c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		struct shedd_rate r;

		if (bpf_map_lookup_elem_flags(p->rates_fd, &c, &r, BPF_F_LOCK))
			return err_say(err, errlen, -errno, "read %s/rates: %s", p->dir,
				       strerror(errno));
		rate_per_sec[c] = r.r.flags & SHEDD_RATE_SET ? r.r.rate_per_sec : 0;
	}
	return 0;
}

int pins_read_ctl(struct pins *p, struct shedd_ctl_state *st, char *err, size_t errlen)
{
	__u8 buf[sizeof(*st)];
	__u32 zero = 0;

	memset(st, 0, sizeof(*st));
	if (p->ctl_state_fd < 0)
		return err_say(err, errlen, -ENOENT, "no controller state in %s", p->dir);
	/* layout_check() let through only sizes up to today's. */
	if (bpf_map_lookup_elem(p->ctl_state_fd, &zero, buf))
		return err_say(err, errlen, -errno, "read %s/ctl_state: %s", p->dir,
			       strerror(errno));
	/* An older record is a prefix of today's. */
	layout_convert(layout_find("ctl_state"), &p->ctl_state_fit, buf, st);
	if (!st->version)
		return err_say(err, errlen, -ENOENT, "the controller state was never written");
	return 0;
}

int pins_read_cmd(struct pins *p, struct shedd_ctl_cmd *cmd, char *err, size_t errlen)
{
	__u32 zero = 0;

	memset(cmd, 0, sizeof(*cmd));
	if (p->ctl_cmd_fd < 0)
		return err_say(err, errlen, -EOPNOTSUPP, "%s has no ctl_cmd map: the shedd that made "
				    "it is older than shedctl's rate pin", p->dir);
	if (bpf_map_lookup_elem(p->ctl_cmd_fd, &zero, cmd))
		return err_say(err, errlen, -errno, "read %s/ctl_cmd: %s", p->dir, strerror(errno));
	return 0;
}

int pins_write_cmd(struct pins *p, const struct shedd_ctl_cmd *cmd, char *err, size_t errlen)
{
	__u32 zero = 0;

	if (p->ctl_cmd_fd < 0)
		return err_say(err, errlen, -EOPNOTSUPP, "%s has no ctl_cmd map: the shedd that made "
				    "it is older than shedctl's rate pin", p->dir);
	if (bpf_map_update_elem(p->ctl_cmd_fd, &zero, cmd, BPF_ANY))
		return err_say(err, errlen, -errno, "write %s/ctl_cmd: %s", p->dir, strerror(errno));
	return 0;
}

int pins_read_lease(struct pins *p, struct shedd_lease *v, char *err, size_t errlen)
{
	struct layout_fit fit;
	__u32 zero = 0;
	int fd, ret = 0;

	memset(v, 0, sizeof(*v));
	fd = open_map(p->dir, "lease", false, err, errlen);
	if (fd < -1)
		return fd;
	if (fd < 0)
		return err_say(err, errlen, -ENOENT, "%s has no lease map: the shedd that made "
				    "it is older than the lease", p->dir);
	if (!(ret = layout_check(fd, layout_find("lease"), p->dir, &fit, err, errlen)) &&
	    bpf_map_lookup_elem_flags(fd, &zero, v, BPF_F_LOCK))
		ret = err_say(err, errlen, -errno, "read %s/lease: %s", p->dir, strerror(errno));
	close(fd);
	return ret;
}
