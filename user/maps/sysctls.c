// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* sysctls.c - the sysctls a hand-off needs, set in shedd's network
 * namespace with what was there noted in the pins (the map sysctls), and
 * put back when shedding stops: a stop that detaches, --remove. Not when a
 * daemon exits leaving its program shedding: the program still needs them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "kernel_features.h"
#include "log.h"
#include "pindir.h"
#include "sysctls.h"

/* The slot of each sysctl shedd may change (SHEDD_SYSCTL_*). */
static const char *const slot_names[SHEDD_MAX_SYSCTLS] = {
	[SHEDD_SYSCTL_SYNCOOKIES] = "net.ipv4.tcp_syncookies",
	[SHEDD_SYSCTL_TIMESTAMPS] = "net.ipv4.tcp_timestamps",
};

static int slot_of(const char *name)
{
	int i;

	for (i = 0; i < SHEDD_MAX_SYSCTLS; i++)
		if (slot_names[i] && !strcmp(slot_names[i], name))
			return i;
	return -1;
}

int sysctl_read_text(const char *name, char *buf, size_t len)
{
	char path[256];
	ssize_t n;
	int fd, err;

	if (sysctl_path(name, path, sizeof(path)))
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	buf[n] = '\0';
	return 0;
}

int sysctl_read_u64(const char *name, __u64 *v)
{
	char buf[64];
	int err = sysctl_read_text(name, buf, sizeof(buf));

	if (err)
		return err;
	return parse_sysctl_u64(buf, v) ? -EINVAL : 0;
}

int sysctl_write_u64(const char *name, __u64 v)
{
	char path[256], buf[32];
	int fd, n, err = 0;

	if (sysctl_path(name, path, sizeof(path)))
		return -EINVAL;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)v);
	errno = 0;
	if (write(fd, buf, (size_t)n) != n)
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

int sysctls_apply(int saved_fd, __u8 handoff)
{
	const struct sysctl_need *needs;
	int i, n = verify_sysctl_needs(handoff, &needs), err;
	struct shedd_sysctls saved;
	__u32 zero = 0;
	__u64 cur;

	/* What an earlier shedd of these pins noted: its first values stay. */
	if (bpf_map_lookup_elem(saved_fd, &zero, &saved))
		memset(&saved, 0, sizeof(saved));
	for (i = 0; i < n; i++) {
		const struct sysctl_need *w = &needs[i];
		int slot = slot_of(w->name);

		if (slot < 0) {
			log_err("internal: %s has no slot in the pinned sysctls", w->name);
			return -EINVAL;
		}
		err = sysctl_read_u64(w->name, &cur);
		if (err) {
			log_err("verified admission: read %s: %s", w->name, strerror(-err));
			return err;
		}
		if (cur >= w->min && cur <= w->max)
			continue;
		/* Noted before it is written: a shedd killed in between still
		 * leaves what to put back. */
		if (!(saved.changed & (1U << slot))) {
			saved.found[slot] = cur;
			saved.changed |= 1U << slot;
		}
		saved.set[slot] = w->set;
		if (bpf_map_update_elem(saved_fd, &zero, &saved, BPF_ANY)) {
			err = -errno;
			log_err("verified admission: note %s=%llu in the pins, to put it back "
				"later: %s; refusing to change it", w->name,
				(unsigned long long)cur, strerror(errno));
			return err;
		}
		err = sysctl_write_u64(w->name, w->set);
		if (err) {
			log_err("verified admission: set %s=%llu: %s; refusing to "
				"start (or run with --verify off)", w->name,
				(unsigned long long)w->set, strerror(-err));
			return err;
		}
		log_notice("set %s=%llu (was %llu; put back when shedding stops)", w->name,
			   (unsigned long long)w->set, (unsigned long long)cur);
	}
	return 0;
}

void sysctls_restore(int saved_fd, const char *dir)
{
	char path[PATH_MAX + 32];
	struct shedd_sysctls saved;
	int fd = saved_fd, i, err;
	__u32 zero = 0;
	__u64 cur;

	if (fd < 0) {
		pindir_path(path, sizeof(path), dir, "sysctls");
		fd = bpf_obj_get(path);
		if (fd < 0)
			return; /* pins of a shedd that noted none */
	}
	if (bpf_map_lookup_elem(fd, &zero, &saved) || !saved.changed)
		goto out;
	for (i = 0; i < SHEDD_MAX_SYSCTLS; i++) {
		const char *name = slot_names[i];

		if (!(saved.changed & (1U << i)) || !name)
			continue;
		if ((err = sysctl_read_u64(name, &cur))) {
			log_warn("put %s back to %llu: read it: %s; left as it is", name,
				 (unsigned long long)saved.found[i], strerror(-err));
			continue;
		}
		/* Someone changed it since shedd did: theirs stands. */
		if (cur != saved.set[i]) {
			log_notice("left %s=%llu as it is: it changed since shedd set %llu "
				   "(it was %llu before)", name, (unsigned long long)cur,
				   (unsigned long long)saved.set[i],
				   (unsigned long long)saved.found[i]);
			continue;
		}
		if ((err = sysctl_write_u64(name, saved.found[i]))) {
			log_warn("put %s back to %llu: %s; it stays %llu", name,
				 (unsigned long long)saved.found[i], strerror(-err),
				 (unsigned long long)cur);
			continue;
		}
		log_notice("put %s back to %llu (shedd had set %llu)", name,
			   (unsigned long long)saved.found[i], (unsigned long long)cur);
	}
	/* Put back once: a second stop of the same pins finds nothing. */
	memset(&saved, 0, sizeof(saved));
	bpf_map_update_elem(fd, &zero, &saved, BPF_ANY);
out:
	if (fd != saved_fd)
		close(fd);
}
