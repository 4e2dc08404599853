// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* migrate.c - upgrades without a gap. A map pinned by a running shedd whose
 * layout is today's is reused as it is; one of another layout is replaced:
 * the new program gets a map of today's layout, the values are carried over
 * by field (user/maps/layout.c) while the old program keeps shedding, the new
 * maps are pinned as NAME_pending, the program is swapped into the pinned
 * link in one bpf_link_update(), and the pending pins are renamed over the
 * old ones. The counters the old program made are carried after the swap,
 * once it can no longer make any: the new program sheds from the first
 * packet, and the daemon reads the sums again before its first tick. Any
 * failure puts back the old program and the old pins.
 *
 * Two settings of the environment exist only for the tests:
 * SHEDD_TEST_MIGRATE=all replaces every pinned map as if its layout had
 * changed, and SHEDD_TEST_MIGRATE_FAIL=copy|swap|commit fails the upgrade
 * at that step (crash: exits at once after the swap, as if killed).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "carry.skel.h"
#include "layout.h"
#include "log.h"
#include "migrate.h"
#include "pindir.h"
#include "settings.h"
#include "shedd.skel.h"

#define MIGRATE_MAX_MAPS 48

struct migrate_map {
	const struct layout_map *m;
	struct bpf_map *map;   /* the new program's */
	int old_fd;            /* the running shedd's; -1: it had none */
	struct layout_fit fit; /* how its values read */
	bool known;            /* its layout is one layout.c knows */
	bool reused;           /* the pinned map, of today's layout */
	bool replaced;         /* a new map, not the pinned one */
	bool decided;          /* pin path set or left unset */
	bool pending;          /* pinned as NAME_pending */
	bool committed;        /* renamed to NAME */
};

struct migrate {
	char src_dir[PATH_MAX];  /* the running shedd's pins */
	bool older_path;         /* at /sys/fs/bpf/shedd/IFACE, not under ns:INODE */
	int older_lock_fd;
	__u32 from_version;      /* their layout version; 0: no pins, a fresh start */
	bool version_read;
	bool needed;             /* some map is replaced: an upgrade */
	bool forward;            /* pins of a newer layout this build may adopt */
	bool force_all;          /* SHEDD_TEST_MIGRATE=all */
	struct migrate_map maps[MIGRATE_MAX_MAPS];
	int n;
	int old_prog_fd;         /* the program the link ran before the swap */
	int old_handoff_fd;      /* the tc hand-off pinned by the running shedd */
	bool link_pinned;        /* older path: our pin of the link */
};

static bool fault(const char *step)
{
	const char *e = getenv("SHEDD_TEST_MIGRATE_FAIL");

	if (!e || strcmp(e, step))
		return false;
	log_err("upgrade: failing at step '%s', as SHEDD_TEST_MIGRATE_FAIL asks", step);
	return true;
}

static struct migrate *get(struct loader *l)
{
	struct migrate *mg = l->mig;
	const char *e;

	if (mg)
		return mg;
	mg = calloc(1, sizeof(*mg));
	if (!mg)
		return NULL;
	snprintf(mg->src_dir, sizeof(mg->src_dir), "%s", l->pin_dir);
	mg->older_lock_fd = mg->old_prog_fd = mg->old_handoff_fd = -1;
	e = getenv("SHEDD_TEST_MIGRATE");
	mg->force_all = e && !strcmp(e, "all");
	l->mig = mg;
	return mg;
}

static void path_of(char *buf, size_t len, const char *dir, const char *name, const char *sfx)
{
	snprintf(buf, len, "%s/%s%s", dir, name, sfx);
}

/* The program id of an XDP link, 0 on error. */
static __u32 link_prog_id(int link_fd, __u32 *ifindex)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(link_fd, &info, &len) || info.type != BPF_LINK_TYPE_XDP)
		return 0;
	if (ifindex)
		*ifindex = info.xdp.ifindex;
	return info.prog_id;
}

int migrate_find_older(struct loader *l, const struct shedd_options *o)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	__u32 ifindex = 0, prog_id;
	struct migrate *mg;
	int fd, lock_fd;

	/* In the initial namespace the older path is today's. */
	if (!l->ns_tag[0] || l->link_fd >= 0)
		return 0;
	snprintf(dir, sizeof(dir), "%s/%s", SHEDD_PIN_ROOT, o->iface);
	path_of(path, sizeof(path), dir, "link", "");
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	/* An interface of that name in another namespace may own it: only
	 * the link that holds this interface's XDP program is ours. */
	prog_id = link_prog_id(fd, &ifindex);
	if (!prog_id || (int)ifindex != l->ifindex || bpf_xdp_query(l->ifindex, 0, &q) ||
	    q.prog_id != prog_id) {
		close(fd);
		return 0;
	}
	lock_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lock_fd < 0 || flock(lock_fd, LOCK_EX | LOCK_NB)) {
		log_err("another shedd is running on %s with its pins in %s; stop it first",
			o->iface, dir);
		if (lock_fd >= 0)
			close(lock_fd);
		close(fd);
		return -EBUSY;
	}
	mg = get(l);
	if (!mg) {
		close(lock_fd);
		close(fd);
		return -ENOMEM;
	}
	snprintf(mg->src_dir, sizeof(mg->src_dir), "%s", dir);
	mg->older_path = true;
	mg->older_lock_fd = lock_fd;
	mg->needed = true;
	l->link_fd = fd;
	l->adopted = true;
	log_notice("found the running shedd of %s at the older path %s: moving it to %s",
		   o->iface, dir, l->pin_dir);
	return 0;
}

int migrate_decide(struct loader *l)
{
	struct migrate *mg = l->mig;
	char path[PATH_MAX + 32];
	int i, err;

	if (!mg)
		return 0;
	for (i = 0; i < mg->n; i++) {
		struct migrate_map *mm = &mg->maps[i];

		if (mm->decided)
			continue;
		mm->decided = true;
		/* A map the running shedd did not have is made and pinned
		 * at the load, unless this is an upgrade: then its pin waits
		 * for the swap with the others. */
		if (!mm->reused && mm->old_fd < 0)
			mm->replaced = mg->needed;
		if (mm->replaced)
			continue;
		path_of(path, sizeof(path), l->pin_dir, mm->m->name, "");
		if ((err = bpf_map__set_pin_path(mm->map, path))) {
			log_err("set pin path %s: %s", path, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* NAME_pending pins are what an upgrade left when it was cut short. If the
 * link runs the program its pending layout record names, it was cut after
 * its swap: they are the running maps, renamed into place now; otherwise
 * they serve nobody. */
static void recover_pending(struct loader *l)
{
	char path[PATH_MAX + 32], to[PATH_MAX + 32];
	const struct layout_map *all;
	struct shedd_layout v = { 0 };
	bool commit = false;
	__u32 zero = 0;
	size_t i, n;
	int fd, renamed = 0;

	all = layout_all(&n);
	/* The layout record is pending too, or was reused (written before
	 * the swap). */
	path_of(path, sizeof(path), l->pin_dir, "layout", "_pending");
	fd = l->link_fd >= 0 ? bpf_obj_get(path) : -1;
	path_of(path, sizeof(path), l->pin_dir, "layout", "");
	if (fd < 0 && l->link_fd >= 0)
		fd = bpf_obj_get(path);
	if (fd >= 0) {
		commit = !bpf_map_lookup_elem(fd, &zero, &v) && v.prog_id &&
			 v.prog_id == link_prog_id(l->link_fd, NULL);
		close(fd);
	}
	for (i = 0; i < n; i++) {
		path_of(path, sizeof(path), l->pin_dir, all[i].name, "_pending");
		if (access(path, F_OK))
			continue;
		path_of(to, sizeof(to), l->pin_dir, all[i].name, "");
		if (commit && !rename(path, to)) {
			renamed++;
			continue;
		}
		unlink(path);
	}
	if (renamed)
		log_notice("an upgrade of %s was cut short after its swap: its maps, which the "
			   "running program uses, are renamed into place", l->pin_dir);
}

/* Whether @dir holds a pin of shedd's: a map of any layout this build
 * knows, or the link. A folder without one (none at all, or only the lock
 * a start made) is a fresh start, not pins of layout version 1. */
static bool pins_present(const char *dir)
{
	char path[PATH_MAX + 32];
	const struct layout_map *all;
	size_t i, n;

	path_of(path, sizeof(path), dir, "link", "");
	if (!access(path, F_OK))
		return true;
	all = layout_all(&n);
	for (i = 0; i < n; i++) {
		path_of(path, sizeof(path), dir, all[i].name, "");
		if (!access(path, F_OK))
			return true;
	}
	return false;
}

int migrate_plan(struct loader *l, struct bpf_map *map)
{
	char path[PATH_MAX + 32], msg[512];
	const char *name = bpf_map__name(map);
	const struct layout_map *m = layout_find(name);
	struct migrate *mg = get(l);
	struct migrate_map *mm;
	int fd, err;

	if (!mg)
		return -ENOMEM;
	if (!m || bpf_map__key_size(map) != m->key_size ||
	    bpf_map__value_size(map) != m->value_size || bpf_map__type(map) != m->type) {
		log_err("internal: the map %s of the program has no layout in user/maps/layout.c "
			"or another one", name);
		return -EINVAL;
	}
	if (mg->n == MIGRATE_MAX_MAPS) {
		log_err("internal: more than %d maps", MIGRATE_MAX_MAPS);
		return -E2BIG;
	}
	if (!mg->version_read) {
		mg->version_read = true;
		if (!mg->older_path)
			recover_pending(l);
		/* The tc hand-off it ran, to put back if the upgrade fails. */
		path_of(path, sizeof(path), mg->src_dir, "handoff", "");
		mg->old_handoff_fd = bpf_obj_get(path);
		if ((err = layout_version(mg->src_dir, &mg->from_version, msg, sizeof(msg)))) {
			log_err("%s%s", msg, err == -EPROTO ? " (this shedd does not downgrade "
				"them; remove them with --remove to start afresh)" : "");
			return err;
		}
		/* No pin at all: nothing to upgrade, every map is made and
		 * pinned at the load. */
		if (mg->from_version == 1 && !mg->older_path && !pins_present(mg->src_dir)) {
			const char *iface = strrchr(l->pin_dir, '/');

			mg->from_version = 0;
			log_notice("no pins of %s in %s: a fresh start", iface ? iface + 1 : l->pin_dir,
				   l->pin_dir);
		}
		/* Pins of an older layout run an older program, which lacks
		 * what the newer layout added (a map of its own, such as
		 * port_set): it is replaced, even if every map it has is
		 * reused. */
		if (mg->from_version && mg->from_version < SHEDD_LAYOUT_VERSION)
			mg->needed = true;
		/* Pins of a newer layout whose layout_compat lets this build
		 * adopt them as they are: each map it knows is reused, the
		 * others are left alone (the newer shedd's program used them;
		 * ours does not). */
		if (mg->from_version > SHEDD_LAYOUT_VERSION) {
			mg->forward = true;
			log_notice("the pins in %s are of layout version %u, newer than this "
				   "build's %u, and say a shedd of version %u may adopt them as they "
				   "are: adopted, the maps it does not know left as they are",
				   mg->src_dir, mg->from_version, SHEDD_LAYOUT_VERSION,
				   layout_compat(mg->src_dir));
		}
	}
	mm = &mg->maps[mg->n++];
	memset(mm, 0, sizeof(*mm));
	mm->m = m;
	mm->map = map;
	mm->old_fd = -1;
	path_of(path, sizeof(path), mg->src_dir, name, "");
	fd = bpf_obj_get(path);
	if (fd < 0) {
		if (errno != ENOENT) {
			err = -errno;
			log_err("open %s: %s", path, strerror(errno));
			return err;
		}
		return 0;
	}
	err = layout_check(fd, m, mg->src_dir, &mm->fit, msg, sizeof(msg));
	if (err && err != -EPROTO) {
		log_err("%s", msg);
		close(fd);
		return err;
	}
	mm->known = !err;
	if (mm->known && !mm->fit.from && mm->fit.max_entries == bpf_map__max_entries(map) &&
	    mm->fit.map_flags == bpf_map__map_flags(map) && !mg->older_path && !mg->force_all) {
		close(fd); /* today's layout: reused (libbpf checks it again) */
		mm->reused = true;
		return 0;
	}
	/* Newer pins that said this build may adopt them as they are, with a
	 * map it reads in another layout: their promise does not hold, and
	 * this build does not convert a newer layout into its own. */
	if (mg->forward) {
		log_err("the pins in %s (layout version %u) say this build may adopt them, but "
			"%s is not of its layout%s%s; refusing, the running program keeps shedding "
			"(use a shedd of version %u or later, or --remove to start afresh)",
			mg->src_dir, mg->from_version, name, mm->known ? "" : ": ",
			mm->known ? "" : msg, mg->from_version);
		close(fd);
		return -EPROTO;
	}
	if (!mm->known)
		log_warn("upgrade: %s; its values are not carried over: it starts afresh", msg);
	mm->old_fd = fd;
	mm->replaced = true;
	mg->needed = true;
	return 0;
}

bool migrate_needed(const struct loader *l)
{
	return l->mig && l->mig->needed;
}

int migrate_old_handoff_fd(const struct loader *l)
{
	return l->mig ? l->mig->old_handoff_fd : -1;
}

static bool is_array(__u32 type)
{
	return type == BPF_MAP_TYPE_ARRAY || type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

static bool is_percpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_ARRAY || type == BPF_MAP_TYPE_PERCPU_HASH;
}

/* Copy one value of @key from the old map into the new one, converted. */
static int copy_one(struct migrate_map *mm, int ncpus, const void *key, __u8 *obuf, __u8 *nbuf)
{
	int cpus = is_percpu(mm->m->type) ? ncpus : 1, c;
	size_t ostride = cpus > 1 ? layout_percpu_stride(mm->fit.value_size) : mm->fit.value_size;
	size_t nstride = cpus > 1 ? layout_percpu_stride(mm->m->value_size) : mm->m->value_size;

	if (bpf_map_lookup_elem(mm->old_fd, key, obuf))
		return errno == ENOENT ? 0 : -errno; /* deleted meanwhile */
	memset(nbuf, 0, nstride * (size_t)cpus);
	for (c = 0; c < cpus; c++)
		layout_convert(mm->m, &mm->fit, obuf + (size_t)c * ostride,
			       nbuf + (size_t)c * nstride);
	if (bpf_map_update_elem(bpf_map__fd(mm->map), key, nbuf, BPF_ANY))
		return -errno;
	return 0;
}

/* Every value of the old map into the new one: by index for an array (as
 * many as both have), by key for a hash or an LPM trie. */
static int copy_map(struct migrate_map *mm, int ncpus, __u64 *copied)
{
	size_t osz = layout_percpu_stride(mm->fit.value_size) * (size_t)ncpus;
	size_t nsz = layout_percpu_stride(mm->m->value_size) * (size_t)ncpus;
	__u8 *obuf = calloc(1, osz), *nbuf = calloc(1, nsz);
	__u8 key[64], next[64];
	int err = 0;

	*copied = 0;
	if (!obuf || !nbuf || mm->m->key_size > sizeof(key)) {
		err = -ENOMEM;
		goto out;
	}
	if (is_array(mm->m->type)) {
		__u32 i, n = mm->fit.max_entries < bpf_map__max_entries(mm->map) ?
			     mm->fit.max_entries : bpf_map__max_entries(mm->map);

		for (i = 0; i < n && !err; i++, (*copied)++)
			err = copy_one(mm, ncpus, &i, obuf, nbuf);
	} else {
		void *prev = NULL;

		while (!err && !bpf_map_get_next_key(mm->old_fd, prev, next)) {
			memcpy(key, next, mm->m->key_size);
			prev = key;
			err = copy_one(mm, ncpus, key, obuf, nbuf);
			(*copied)++;
		}
	}
out:
	free(obuf);
	free(nbuf);
	return err;
}

/* daemon_stats: a record of an older version becomes today's (its
 * appended fields are 0), and counts this upgrade; one never written (the
 * old daemon stopped before its first tick) starts from 0 with it. */
static void note_daemon_stats(struct migrate_map *mm)
{
	struct shedd_daemon_stats d;
	int fd = bpf_map__fd(mm->map);
	__u32 zero = 0;

	if (bpf_map_lookup_elem(fd, &zero, &d))
		return;
	if (!d.version)
		memset(&d, 0, sizeof(d));
	d.version = SHEDD_DAEMON_STATS_VERSION;
	d.layout_migrations++;
	bpf_map_update_elem(fd, &zero, &d, BPF_ANY);
}

/* ctl_state: an older record reads as today's with its appended fields 0
 * (aimd_import() takes either version); the daemon writes today's at its
 * first tick. */
static void note_ctl_state(struct migrate_map *mm)
{
	struct shedd_ctl_state st;
	__u32 zero = 0;

	if (!bpf_map_lookup_elem(bpf_map__fd(mm->map), &zero, &st) && st.version)
		log_notice("controller state of version %u converted to version %u", st.version,
			   SHEDD_CTL_STATE_VERSION);
}

int migrate_copy(struct loader *l)
{
	struct migrate *mg = l->mig;
	int i, err;

	if (!migrate_needed(l))
		return 0;
	for (i = 0; i < mg->n; i++) {
		struct migrate_map *mm = &mg->maps[i];
		__u64 n;

		if (!mm->replaced || mm->old_fd < 0 || !mm->known ||
		    (mm->m->flags & LAYOUT_COUNTERS))
			continue;
		if ((err = copy_map(mm, l->ncpus, &n))) {
			log_err("upgrade: copy %s/%s into a map of today's layout: %s%s", mg->src_dir,
				mm->m->name, strerror(-err),
				err == -E2BIG || err == -ENOSPC ? " (the new map is full)" : "");
			return err;
		}
		if (!strcmp(mm->m->name, "daemon_stats"))
			note_daemon_stats(mm);
		else if (!strcmp(mm->m->name, "ctl_state") && mm->fit.from)
			note_ctl_state(mm);
		log_info("upgrade: %s: %llu entries carried over%s", mm->m->name,
			 (unsigned long long)n, mm->fit.from ? " from an older layout" : "");
	}
	if (fault("copy"))
		return -ECANCELED;
	return 0;
}

/* Add the counters of the old stats map, summed over its CPUs, into the
 * new one while the new program counts into it: with the carry program's
 * atomic adds (bpf/carry.bpf.c); without it (a kernel that cannot run it),
 * by a read and a write of CPU 0's value, which may lose what the new
 * program counted there between the two. */
static int carry_counters(struct migrate_map *mm, int ncpus)
{
	const size_t words = sizeof(struct shedd_stats) / sizeof(__u64);
	size_t ostride = layout_percpu_stride(mm->fit.value_size);
	__u8 *obuf = calloc((size_t)ncpus, ostride);
	struct shedd_stats one, sum, *cur = NULL;
	LIBBPF_OPTS(bpf_test_run_opts, run);
	struct carry_bpf *skel = NULL;
	__u32 zero = 0;
	int c, err = 0;
	size_t w;

	if (!obuf)
		return -ENOMEM;
	if (strcmp(mm->m->name, "stats") || bpf_map_lookup_elem(mm->old_fd, &zero, obuf)) {
		err = strcmp(mm->m->name, "stats") ? -EINVAL : -errno;
		goto out;
	}
	memset(&sum, 0, sizeof(sum));
	for (c = 0; c < ncpus; c++) {
		layout_convert(mm->m, &mm->fit, obuf + (size_t)c * ostride, &one);
		for (w = 0; w < words; w++)
			((__u64 *)&sum)[w] += ((const __u64 *)&one)[w];
	}
	skel = carry_bpf__open();
	if (skel && !bpf_map__reuse_fd(skel->maps.stats, bpf_map__fd(mm->map)) &&
	    !carry_bpf__load(skel)) {
		memcpy(skel->bss->carry, &sum, sizeof(sum));
		if (!bpf_prog_test_run_opts(bpf_program__fd(skel->progs.shedd_carry), &run) &&
		    run.retval == 0)
			goto out;
	}
	log_warn("upgrade: the carry program does not run here (%s); the old counters are "
		 "added by a read and a write, which may lose a few counts of the new program",
		 strerror(errno));
	cur = calloc((size_t)ncpus, layout_percpu_stride(sizeof(*cur)));
	if (!cur || bpf_map_lookup_elem(bpf_map__fd(mm->map), &zero, cur)) {
		err = cur ? -errno : -ENOMEM;
		goto out;
	}
	for (w = 0; w < words; w++)
		((__u64 *)cur)[w] += ((const __u64 *)&sum)[w];
	if (bpf_map_update_elem(bpf_map__fd(mm->map), &zero, cur, BPF_ANY))
		err = -errno;
out:
	carry_bpf__destroy(skel);
	free(cur);
	free(obuf);
	return err;
}

/* Put the pins back as they were, and with @swapped the old program into
 * the link. */
static void rollback(struct loader *l, bool swapped)
{
	struct migrate *mg = l->mig;
	char path[PATH_MAX + 32];
	int i;

	if (swapped && bpf_link_update(l->link_fd, mg->old_prog_fd, NULL))
		log_err("upgrade: put the old program back into the link: %s; the new one "
			"stays attached", strerror(errno));
	for (i = 0; i < mg->n; i++) {
		struct migrate_map *mm = &mg->maps[i];

		if (mm->committed) {
			path_of(path, sizeof(path), l->pin_dir, mm->m->name, "");
			unlink(path);
			if (mm->old_fd >= 0 && !mg->older_path && bpf_obj_pin(mm->old_fd, path))
				log_err("upgrade: pin the old %s back at %s: %s", mm->m->name, path,
					strerror(errno));
			mm->committed = false;
		}
		if (mm->pending) {
			path_of(path, sizeof(path), l->pin_dir, mm->m->name, "_pending");
			unlink(path);
			mm->pending = false;
		}
	}
	if (mg->link_pinned) {
		path_of(path, sizeof(path), l->pin_dir, "link", "");
		unlink(path);
		mg->link_pinned = false;
	}
	log_notice("upgrade rolled back: the running program and its pins in %s are as they "
		   "were", mg->src_dir);
}

/* The older path, once everything is pinned under today's. */
static void remove_older(struct migrate *mg)
{
	char path[PATH_MAX + 32];
	size_t i, n;
	const struct layout_map *all = layout_all(&n);

	path_of(path, sizeof(path), mg->src_dir, "link", "");
	unlink(path);
	path_of(path, sizeof(path), mg->src_dir, "handoff", "");
	unlink(path);
	for (i = 0; i < n; i++) {
		path_of(path, sizeof(path), mg->src_dir, all[i].name, "");
		unlink(path);
	}
	if (rmdir(mg->src_dir))
		log_warn("upgrade: %s is not empty (%s): left as it is", mg->src_dir,
			 strerror(errno));
}

int migrate_swap(struct loader *l, const struct shedd_options *o)
{
	struct migrate *mg = l->mig;
	char path[PATH_MAX + 32], to[PATH_MAX + 32];
	int prog_fd = bpf_program__fd(l->xdp_prog);
	/* No link (pins left without a program): only the pins move, and
	 * loader_attach() attaches afresh. */
	bool fresh = l->link_fd < 0, swapped = false;
	__u32 old_id = fresh ? 0 : link_prog_id(l->link_fd, NULL);
	int i, err = 0, nrep = 0;

	mg->old_prog_fd = old_id ? bpf_prog_get_fd_by_id(old_id) : -1;
	if (!fresh && mg->old_prog_fd < 0) {
		err = -errno;
		log_err("upgrade: find the running program of %s (id %u): %s; nothing changed",
			o->iface, old_id, strerror(errno));
		return err ? err : -ENOENT;
	}
	for (i = 0; i < mg->n; i++) {
		struct migrate_map *mm = &mg->maps[i];

		if (!mm->replaced)
			continue;
		nrep++;
		path_of(path, sizeof(path), l->pin_dir, mm->m->name, "_pending");
		unlink(path);
		if (bpf_obj_pin(bpf_map__fd(mm->map), path)) {
			err = -errno;
			log_err("upgrade: pin %s: %s", path, strerror(errno));
			goto fail;
		}
		mm->pending = true;
	}
	if (fault("swap")) {
		err = -ECANCELED;
		goto fail;
	}
	/* One step: every packet meets the old program or the new one. */
	if (!fresh && bpf_link_update(l->link_fd, prog_fd, NULL)) {
		err = -errno;
		log_err("upgrade: swap the program of %s: %s", o->iface, strerror(errno));
		goto fail;
	}
	swapped = !fresh;
	if (fault("crash"))
		_exit(1); /* a shedd killed between the swap and the renames */
	if (fault("commit")) {
		err = -ECANCELED;
		goto fail;
	}
	for (i = 0; i < mg->n; i++) {
		struct migrate_map *mm = &mg->maps[i];

		if (!mm->pending)
			continue;
		path_of(path, sizeof(path), l->pin_dir, mm->m->name, "_pending");
		path_of(to, sizeof(to), l->pin_dir, mm->m->name, "");
		/* Over the old pin in one step: a reader finds one or the other. */
		if (rename(path, to)) {
			err = -errno;
			log_err("upgrade: rename %s to %s: %s", path, to, strerror(errno));
			goto fail;
		}
		mm->pending = false;
		mm->committed = true;
	}
	if (mg->older_path) {
		path_of(path, sizeof(path), l->pin_dir, "link", "");
		unlink(path);
		if (bpf_obj_pin(l->link_fd, path)) {
			err = -errno;
			log_err("upgrade: pin the link at %s: %s", path, strerror(errno));
			goto fail;
		}
		mg->link_pinned = true;
	}
	/* Committed. The old program has run its last packet once every run
	 * that began before the swap is over: its counters are final. */
	settings_wait_readers(); /* no run of the old program is left */
	for (i = 0; i < mg->n; i++) {
		struct migrate_map *mm = &mg->maps[i];

		if (!mm->replaced || mm->old_fd < 0 || !mm->known ||
		    !(mm->m->flags & LAYOUT_COUNTERS))
			continue;
		if ((err = carry_counters(mm, l->ncpus)))
			log_warn("upgrade: carry the counters of %s: %s; they start from 0",
				 mm->m->name, strerror(-err));
	}
	if (mg->older_path)
		remove_older(mg);
	log_notice("upgraded the pins of %s from layout version %u to %u: %d maps of a new "
		   "layout (their values carried over)%s", o->iface, mg->from_version,
		   SHEDD_LAYOUT_VERSION, nrep,
		   fresh ? "" : ", the program swapped in one step");
	return 0;
fail:
	rollback(l, swapped);
	return err;
}

void migrate_free(struct loader *l)
{
	struct migrate *mg = l->mig;
	int i;

	if (!mg)
		return;
	for (i = 0; i < mg->n; i++)
		if (mg->maps[i].old_fd >= 0)
			close(mg->maps[i].old_fd);
	if (mg->old_prog_fd >= 0)
		close(mg->old_prog_fd);
	if (mg->old_handoff_fd >= 0)
		close(mg->old_handoff_fd);
	if (mg->older_lock_fd >= 0)
		close(mg->older_lock_fd);
	free(mg);
	l->mig = NULL;
}
