// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* layout.c - every map shedd pins, its layout today and the older layouts
 * this build still reads, and the checks before a pinned value is read.
 * A layout changes by appending fields where it can (an older value is
 * then a prefix of today's, the new fields 0); where fields were inserted,
 * a word map says where each old field went.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "layout.h"

#define STATS_CLS_WORDS (sizeof(struct shedd_class_stats) / sizeof(__u64))

/* stats before verified admission (fcc6d1a): four counters per class
 * (syn, admitted, dropped, rst_sent, today's first four), then the global
 * counters, which only ever grew at the end. */
static __u32 stats_v0_word(__u32 i)
{
	if (i < SHEDD_NR_CLASSES * 4)
		return (i / 4) * STATS_CLS_WORDS + i % 4;
	return SHEDD_NR_CLASSES * STATS_CLS_WORDS + (i - SHEDD_NR_CLASSES * 4);
}

static const struct layout_older stats_older[] = {
	{ 4 * 32 + 7 * 8, stats_v0_word },  /* the first layout */
	{ 4 * 32 + 13 * 8, stats_v0_word }, /* RST budget, fragments */
	{ 4 * 88 + 16 * 8, NULL },          /* verified admission */
	{ 4 * 88 + 17 * 8, NULL },
	{ 4 * 88 + 18 * 8, NULL },
	{ 4 * 88 + 19 * 8, NULL },
	{ 4 * 88 + 20 * 8, NULL },
	{ 0 },
};


static const struct layout_older ctl_state_older[] = {
	{ SHEDD_CTL_STATE_V1_SIZE, NULL },
	{ SHEDD_CTL_STATE_V2_SIZE, NULL },
	{ 0 },
};

static const struct layout_older daemon_stats_older[] = {
	{ SHEDD_DAEMON_STATS_V1_SIZE, NULL },
	{ 0 },
};

/* proven before the verdict was bound to its segment: the stamp, then the
 * hash, today's first two words (the flow key changes with the upgrade, so
 * no entry matches again). */
static const struct layout_older proven_older[] = {
	{ 8, NULL },
	{ 0 },
};

#define U32 sizeof(__u32)
static const struct layout_map maps[] = {
	{ "settings", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_config), 0, NULL },
	{ "settings_cur", BPF_MAP_TYPE_ARRAY, U32, U32, 0, NULL },
	{ "flow_key", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_flow_key), 0, NULL },
	{ "broadcast", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_broadcast), 0, NULL },
	{ "ports", BPF_MAP_TYPE_HASH, sizeof(__u16), sizeof(__u8), 0, NULL },
	{ "prefix_v4", BPF_MAP_TYPE_LPM_TRIE, sizeof(struct shedd_lpm_v4), U32, 0, NULL },
	{ "prefix_v6", BPF_MAP_TYPE_LPM_TRIE, sizeof(struct shedd_lpm_v6), U32, 0, NULL },
	{ "rates", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_rate), 0, NULL },
	{ "reserve", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_reserve), 0, NULL },
	{ "lease", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_lease), 0, NULL },
	{ "port_limit", BPF_MAP_TYPE_HASH, sizeof(__u16), sizeof(struct shedd_port_limit), 0, NULL },
	{ "port_reserve", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_reserve), 0, NULL },
	{ "port_buckets", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_port_bucket), 0,
	  NULL },
	{ "buckets", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_bucket), 0, NULL },
	{ "stats", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_stats), LAYOUT_COUNTERS,
	  stats_older },
	{ "rst_budget", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_rst_budget), 0, NULL },
	{ "ctl_state", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_ctl_state), 0,
	  ctl_state_older },
	{ "cookie_budget", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_rst_budget), 0,
	  NULL },
	{ "refresh", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_refresh), 0, NULL },
	{ "mss_cache", BPF_MAP_TYPE_ARRAY, U32, U32, 0, NULL },
	{ "proven", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_proven), 0, proven_older },
	{ "handoff_stats", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_handoff_stats), 0,
	  NULL },
	{ "ctl_cmd", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_ctl_cmd), 0, NULL },
	{ "manual_v4", BPF_MAP_TYPE_HASH, sizeof(struct shedd_lpm_v4),
	  sizeof(struct shedd_manual_prefix), 0, NULL },
	{ "manual_v6", BPF_MAP_TYPE_HASH, sizeof(struct shedd_lpm_v6),
	  sizeof(struct shedd_manual_prefix), 0, NULL },
	{ "daemon_stats", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_daemon_stats), 0,
	  daemon_stats_older },
	{ "cookie_sent", BPF_MAP_TYPE_ARRAY, U32, U32, 0, NULL },
	{ "tun_config", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_tun_config), 0, NULL },
	{ "tun_stats", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_tun_stats),
	  LAYOUT_COUNTERS, NULL },
	{ "tun_local", BPF_MAP_TYPE_HASH, sizeof(struct shedd_tun_addr), sizeof(__u8), 0, NULL },
	{ "tun_devs", BPF_MAP_TYPE_HASH, sizeof(struct shedd_tun_key), sizeof(struct shedd_tun_dev), 0,
	  NULL },
	{ "tun_checks", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_tun_checks),
	  LAYOUT_COUNTERS, NULL },
	{ "syn_checks", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_syn_checks),
	  LAYOUT_COUNTERS, NULL },
	{ "tun_reserve", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_reserve), 0, NULL },
	{ "tun_buckets", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_bucket), 0, NULL },
	{ "layout", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_layout), 0, NULL },
	{ "layout_compat", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_layout_compat), 0, NULL },
	{ "port_set", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_port_set), 0, NULL },
	{ "sysctls", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_sysctls), 0, NULL },
	{ "fair_cells", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_fair_cell), 0, NULL },
	{ "fair_config", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_fair_class), 0, NULL },
	{ "fair_heavy", BPF_MAP_TYPE_ARRAY, U32, sizeof(struct shedd_fair_heavy), 0, NULL },
	{ "fair_heavy_cpu", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_fair_heavy_cpu), 0,
	  NULL },
	{ "fair_stats", BPF_MAP_TYPE_PERCPU_ARRAY, U32, sizeof(struct shedd_fair_stats),
	  LAYOUT_COUNTERS, NULL },
};

const struct layout_map *layout_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++)
		if (!strcmp(maps[i].name, name))
			return &maps[i];
	return NULL;
}

const struct layout_map *layout_all(size_t *n)
{
	*n = sizeof(maps) / sizeof(maps[0]);
	return maps;
}

int layout_check(int fd, const struct layout_map *m, const char *dir, struct layout_fit *fit,
		 char *err, size_t errlen)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	const struct layout_older *o;

	memset(fit, 0, sizeof(*fit));
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		int ret = -errno;

		snprintf(err, errlen, "inspect %s/%s: %s", dir, m->name, strerror(errno));
		return ret;
	}
	fit->value_size = info.value_size;
	fit->max_entries = info.max_entries;
	fit->map_flags = info.map_flags;
	if (info.type != m->type || info.key_size != m->key_size) {
		snprintf(err, errlen, "%s/%s: a map of type %u with %u-byte keys, a layout this "
			 "build does not know (it reads type %u, %u-byte keys)", dir, m->name,
			 info.type, info.key_size, m->type, m->key_size);
		return -EPROTO;
	}
	if (info.value_size == m->value_size)
		return 0;
	for (o = m->older; o && o->value_size; o++) {
		if (o->value_size == info.value_size) {
			fit->from = o;
			return 0;
		}
	}
	snprintf(err, errlen, "%s/%s: %u-byte values, a layout this build does not know (it "
		 "reads %u bytes%s): the pins come from a %s shedd", dir, m->name, info.value_size,
		 m->value_size, m->older ? " and some older layouts" : "",
		 info.value_size > m->value_size ? "newer" : "different");
	return -EPROTO;
}

void layout_convert(const struct layout_map *m, const struct layout_fit *fit, const void *in,
		    void *out)
{
	__u32 i, words;

	memset(out, 0, m->value_size);
	if (!fit->from) {
		memcpy(out, in, m->value_size);
		return;
	}
	if (!fit->from->word_of) {
		memcpy(out, in, fit->value_size < m->value_size ? fit->value_size : m->value_size);
		return;
	}
	words = fit->value_size / sizeof(__u64);
	for (i = 0; i < words; i++) {
		__u32 w = fit->from->word_of(i);

		if ((w + 1) * sizeof(__u64) <= m->value_size)
			memcpy((__u8 *)out + w * sizeof(__u64), (const __u8 *)in + i * sizeof(__u64),
			       sizeof(__u64));
	}
}

int layout_version(const char *dir, __u32 *version, char *err, size_t errlen)
{
	char path[PATH_MAX + 32];
	struct shedd_layout v = { 0 };
	struct layout_fit fit;
	__u32 zero = 0;
	int fd, ret = 0;

	*version = 1;
	snprintf(path, sizeof(path), "%s/layout", dir);
	fd = bpf_obj_get(path);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		ret = -errno;
		snprintf(err, errlen, "open %s: %s", path, strerror(errno));
		return ret;
	}
	if ((ret = layout_check(fd, layout_find("layout"), dir, &fit, err, errlen)))
		goto out;
	if (bpf_map_lookup_elem(fd, &zero, &v)) {
		ret = -errno;
		snprintf(err, errlen, "read %s: %s", path, strerror(errno));
		goto out;
	}
	/* 0: made, not yet written (a shedd between its load and its
	 * configuration): the pins are still of the layout it found. */
	*version = v.version ? v.version : 1;
	if (v.version > SHEDD_LAYOUT_VERSION) {
		__u32 oldest = layout_compat(dir);

		if (oldest && oldest <= SHEDD_LAYOUT_VERSION)
			goto out; /* newer, and readable by this build as they are */
		if (oldest)
			snprintf(err, errlen, "the pins in %s are of layout version %u, which a "
				 "shedd of version %u or later may adopt; this build knows versions "
				 "up to %u: use the shedctl of the shedd that made them", dir,
				 v.version, oldest, SHEDD_LAYOUT_VERSION);
		else
			snprintf(err, errlen, "the pins in %s are of layout version %u; this build "
				 "knows versions up to %u: use the shedctl of the shedd that made "
				 "them", dir, v.version, SHEDD_LAYOUT_VERSION);
		ret = -EPROTO;
	}
out:
	close(fd);
	return ret;
}

__u32 layout_compat(const char *dir)
{
	char path[PATH_MAX + 32];
	struct shedd_layout_compat c = { 0 };
	struct layout_fit fit;
	char msg[256];
	__u32 zero = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/layout_compat", dir);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (layout_check(fd, layout_find("layout_compat"), dir, &fit, msg, sizeof(msg)) ||
	    bpf_map_lookup_elem(fd, &zero, &c))
		c.oldest = 0;
	close(fd);
	return c.oldest;
}
