// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* fair_maps.c - the fairness maps read into a fair_view (fair_maps.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fair_maps.h"
#include "layout.h"
#include "log.h"
#include "handle.h"
#include "shedd.skel.h"

static const char *const names[] = { "fair_config", "fair_stats", "fair_heavy" };
static const __u32 entries[] = { SHEDD_NR_CLASSES, SHEDD_NR_CLASSES,
				 SHEDD_NR_CLASSES * FAIR_HEAVY_SLOTS };

/* Today's layout and the entries this build reads, nothing older: the
 * values are read straight into today's structs. */
static int check(int fd, size_t i, const char *dir, char *err, size_t errlen)
{
	const struct layout_map *lm = layout_find(names[i]);
	struct layout_fit fit;
	int ret = layout_check(fd, lm, dir, &fit, err, errlen);

	if (ret)
		return ret;
	if (fit.from || fit.max_entries != entries[i])
		return err_say(err, errlen, -EPROTO, "%s/%s: %u-byte values in %u entries, a layout "
			       "this build does not read (it reads %zu bytes in %u)", dir,
			       names[i], fit.value_size, fit.max_entries, (size_t)lm->value_size,
			       entries[i]);
	return 0;
}

void fair_maps_close(struct fair_maps *m)
{
	int *fds[] = { &m->config_fd, &m->stats_fd, &m->heavy_fd, &m->pending_fd };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (m->owned && *fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

int fair_maps_open_pins(struct fair_maps *m, const char *dir, char *err, size_t errlen)
{
	int *fds[] = { &m->config_fd, &m->stats_fd, &m->heavy_fd };
	char path[PATH_MAX + 32];
	size_t i;
	int ret;

	memset(m, 0, sizeof(*m));
	m->owned = true;
	m->pending_fd = -1;
	for (i = 0; i < 3; i++)
		*fds[i] = -1;
	m->ncpus = libbpf_num_possible_cpus();
	if (m->ncpus <= 0)
		return err_say(err, errlen, -EIO, "count possible CPUs: %s", strerror(-m->ncpus));
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		*fds[i] = bpf_obj_get(path);
		if (*fds[i] < 0) {
			ret = -errno;
			if (ret == -ENOENT)
				err_say(err, errlen, ret, "%s has no %s map: the shedd that made these "
					"pins is older than per-source fairness (restart it with this "
					"version to upgrade them)", dir, names[i]);
			else
				err_say(err, errlen, ret, "open %s: %s", path, strerror(-ret));
			fair_maps_close(m);
			return ret;
		}
		if ((ret = check(*fds[i], i, dir, err, errlen))) {
			fair_maps_close(m);
			return ret;
		}
	}
	/* Pins older than it have none: their program adds every shed to
	 * the slot at once. */
	snprintf(path, sizeof(path), "%s/fair_heavy_cpu", dir);
	m->pending_fd = bpf_obj_get(path);
	if (m->pending_fd < 0 && errno != ENOENT) {
		ret = -errno;
		err_say(err, errlen, ret, "open %s: %s", path, strerror(-ret));
		fair_maps_close(m);
		return ret;
	}
	if (m->pending_fd >= 0) {
		struct layout_fit fit;

		ret = layout_check(m->pending_fd, layout_find("fair_heavy_cpu"), dir, &fit, err,
				   errlen);
		if (!ret && (fit.from || fit.max_entries != SHEDD_NR_CLASSES * FAIR_HEAVY_SLOTS))
			ret = err_say(err, errlen, -EPROTO, "%s/fair_heavy_cpu: %u-byte values in %u "
				      "entries, a layout this build does not read", dir,
				      fit.value_size, fit.max_entries);
		if (ret) {
			fair_maps_close(m);
			return ret;
		}
	}
	return 0;
}

/* The sheds each CPU holds in fair_heavy_cpu (@fd, -1: none) for the source
 * of each slot of @heavy, added to the slot's. */
static int add_pending(int fd, int ncpus, struct shedd_fair_heavy *heavy, char *err,
		       size_t errlen)
{
	const __u32 n = SHEDD_NR_CLASSES * FAIR_HEAVY_SLOTS;
	struct shedd_fair_heavy_cpu *pending;
	__u32 k;
	int ret = 0;

	_Static_assert(sizeof(struct shedd_fair_heavy_cpu) % 8 == 0,
		       "a per-CPU value of fair_heavy_cpu needs no padding");
	if (fd < 0)
		return 0;
	pending = calloc((size_t)n * (size_t)ncpus, sizeof(*pending));
	if (!pending)
		return err_say(err, errlen, -ENOMEM, "out of memory");
	for (k = 0; k < n && !ret; k++)
		if (bpf_map_lookup_elem(fd, &k, &pending[(size_t)k * (size_t)ncpus]))
			ret = err_say(err, errlen, -errno, "read fair_heavy_cpu: %s", strerror(errno));
	if (!ret)
		fair_heavy_add_pending(heavy, pending, n, ncpus);
	free(pending);
	return ret;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

/* Every entry of the array @fd (@n of @size bytes) into @out: in one
 * batch where the kernel has it, else one by one. */
static int read_array(int fd, __u32 n, size_t size, void *out)
{
	__u32 *keys = calloc(n, sizeof(*keys)), count = n, next, k;
	int ret = 0;

	if (!keys)
		return -ENOMEM;
	if (bpf_map_lookup_batch(fd, NULL, &next, keys, out, &count, NULL) &&
	    errno != ENOENT)
		count = 0;
	if (count != n) {
		for (k = 0; k < n && !ret; k++)
			if (bpf_map_lookup_elem(fd, &k, (char *)out + (size_t)k * size))
				ret = -errno;
	}
	free(keys);
	return ret;
}

int fair_maps_read(const struct fair_maps *m, struct fair_view *v, char *err, size_t errlen)
{
	struct shedd_fair_class cfg[SHEDD_NR_CLASSES];
	struct shedd_fair_stats *percpu;
	struct shedd_fair_heavy *heavy;
	__u32 c;
	int ret = 0;

	_Static_assert(sizeof(struct shedd_fair_stats) % 8 == 0,
		       "a per-CPU value of fair_stats needs no padding");
	memset(v, 0, sizeof(*v));
	percpu = calloc((size_t)SHEDD_NR_CLASSES * (size_t)m->ncpus, sizeof(*percpu));
	heavy = calloc(SHEDD_NR_CLASSES * FAIR_HEAVY_SLOTS, sizeof(*heavy));
	if (!percpu || !heavy) {
		ret = err_say(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	if ((ret = read_array(m->config_fd, SHEDD_NR_CLASSES, sizeof(cfg[0]), cfg))) {
		err_say(err, errlen, ret, "read fair_config: %s", strerror(-ret));
		goto out;
	}
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		if (bpf_map_lookup_elem(m->stats_fd, &c, &percpu[(size_t)c * (size_t)m->ncpus])) {
			ret = err_say(err, errlen, -errno, "read fair_stats: %s", strerror(errno));
			goto out;
		}
	if ((ret = read_array(m->heavy_fd, SHEDD_NR_CLASSES * FAIR_HEAVY_SLOTS, sizeof(*heavy),
			      heavy))) {
		err_say(err, errlen, ret, "read fair_heavy: %s", strerror(-ret));
		goto out;
	}
	if ((ret = add_pending(m->pending_fd, m->ncpus, heavy, err, errlen)))
		goto out;
	/* The time after the read: no slot is newer. */
	fair_view_build(v, cfg, percpu, m->ncpus, heavy, mono_ns());
out:
	free(percpu);
	free(heavy);
	return ret;
}

int loader_read_fair(struct loader *l, struct fair_view *v)
{
	struct fair_maps m = {
		.config_fd = bpf_map__fd(l->skel->maps.fair_config),
		.stats_fd = bpf_map__fd(l->skel->maps.fair_stats),
		.heavy_fd = bpf_map__fd(l->skel->maps.fair_heavy),
		.pending_fd = bpf_map__fd(l->skel->maps.fair_heavy_cpu),
		.ncpus = l->ncpus,
		.owned = false,
	};
	char err[256];

	memset(v, 0, sizeof(*v));
	if (m.config_fd < 0 || m.stats_fd < 0 || m.heavy_fd < 0)
		return -ENOENT;
	return fair_maps_read(&m, v, err, sizeof(err));
}
