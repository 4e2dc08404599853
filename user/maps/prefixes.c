// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* prefixes.c - the classes' source prefixes in the pinned maps, for the
 * daemon's configuration and shedctl's manual prefixes alike.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "log.h"
#include "prefixes.h"
#include "shedd.skel.h"

#define SHEDD_STR_(x) #x
#define SHEDD_STR(x) SHEDD_STR_(x)

size_t prefix_key(const struct prefix_rule *r, __u8 key[sizeof(struct shedd_lpm_v6)])
{
	size_t alen = r->family == AF_INET ? 4 : 16;

	memset(key, 0, sizeof(struct shedd_lpm_v6));
	memcpy(key, &r->prefixlen, sizeof(__u32));
	memcpy(key + sizeof(__u32), r->addr, alen);
	return sizeof(__u32) + alen;
}

/* Whether the LPM map holds exactly this key: a lookup answers the
 * longest match, so walk the keys. */
static bool key_held(int fd, const __u8 *key, size_t klen)
{
	__u8 cur[sizeof(struct shedd_lpm_v6)], next[sizeof(struct shedd_lpm_v6)];
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		if (!memcmp(next, key, klen))
			return true;
		memcpy(cur, next, klen);
		prev = cur;
	}
	return false;
}

static int manual_fd(struct loader *l, int family)
{
	return bpf_map__fd(family == AF_INET ? l->skel->maps.manual_v4 : l->skel->maps.manual_v6);
}

/* True when an operator added this LPM key (@family AF_INET: struct
 * shedd_lpm_v4, else shedd_lpm_v6): configured prefixes leave it alone.
 * With @config_cls other than SHEDD_NO_CLASS, the configuration gives the
 * key that class: it is recorded, for the day the manual one is deleted. */
static bool manual_has(struct loader *l, int family, const void *key, __u32 config_cls)
{
	struct shedd_manual_prefix m;
	int fd = manual_fd(l, family);

	if (bpf_map_lookup_elem(fd, key, &m))
		return false;
	if (config_cls != SHEDD_NO_CLASS && m.config_cls != config_cls) {
		m.config_cls = config_cls;
		/* BPF_EXIST: one shedctl deleted meanwhile stays deleted. */
		bpf_map_update_elem(fd, key, &m, BPF_EXIST);
	}
	return true;
}

/* Before the configured prefixes are written: forget which classes the
 * configuration gave the manual prefixes (manual_has() records them
 * again). */
static void manual_forget_config(struct loader *l, int family)
{
	__u8 key[sizeof(struct shedd_lpm_v6)], next[sizeof(struct shedd_lpm_v6)];
	struct shedd_manual_prefix m;
	int fd = manual_fd(l, family);
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		memcpy(key, next, sizeof(key));
		prev = key;
		if (bpf_map_lookup_elem(fd, key, &m) || m.config_cls == SHEDD_NO_CLASS)
			continue;
		m.config_cls = SHEDD_NO_CLASS;
		bpf_map_update_elem(fd, key, &m, BPF_EXIST);
	}
}

static bool rule_matches(const struct prefix_rule *r, int family, const __u8 *addr,
			 __u32 prefixlen)
{
	return r->family == family && r->prefixlen == prefixlen &&
	       !memcmp(r->addr, addr, family == AF_INET ? 4 : 16);
}

/* Delete the entries of @family's trie (@fd) that neither a rule of @o
 * nor an operator's prefix names. */
static int delete_stale(struct loader *l, const struct shedd_options *o, int family, int fd)
{
	size_t klen = sizeof(__u32) + (family == AF_INET ? 4 : 16);
	__u8 key[20], next[20];
	__u8 (*stale)[20] = NULL;
	int i, n = 0, cap = 0, err = 0;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, next)) {
		__u32 plen;
		bool keep = false;

		memcpy(key, next, klen);
		prev = key;
		memcpy(&plen, key, sizeof(plen));
		keep = manual_has(l, family, key, SHEDD_NO_CLASS);
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

/* Insert every rule of @family, then delete the trie's entries that no rule
 * names any more: a SYN meanwhile finds each prefix in its old or its new
 * class, never missing. Should the trie fill before the stale entries are
 * gone (old and new lists together past MAX_PREFIXES, though each fits:
 * options.c refuses a list that does not), they are deleted first and
 * the insert goes on; for that moment a source of a removed prefix is
 * judged as it will be once the reload is done, but one that moves to a
 * new prefix may meet the default class. */
static int sync_family(struct loader *l, const struct shedd_options *o, int family)
{
	struct bpf_map *map = family == AF_INET ? l->skel->maps.prefix_v4 : l->skel->maps.prefix_v6;
	size_t alen = family == AF_INET ? 4 : 16;
	int fd = bpf_map__fd(map);
	bool purged = false;
	__u8 key[20];
	int i, err;

	manual_forget_config(l, family);
	for (i = 0; i < o->nr_prefixes; i++) {
		const struct prefix_rule *r = &o->prefixes[i];

		if (r->family != family)
			continue;
		memcpy(key, &r->prefixlen, sizeof(__u32));
		memcpy(key + sizeof(__u32), r->addr, alen);
		if (manual_has(l, family, key, r->cls))
			continue; /* an operator's prefix wins (shedctl) */
		if (!bpf_map_update_elem(fd, key, &r->cls, BPF_ANY))
			continue;
		err = -errno;
		if ((err == -ENOSPC || err == -E2BIG) && !purged) {
			purged = true;
			log_info("the prefix trie (IPv%c) holds the old and the new prefixes only "
				 "if the old ones go first: removing them before the rest is "
				 "written", family == AF_INET ? '4' : '6');
			if ((err = delete_stale(l, o, family, fd)))
				return err;
			i--; /* this rule again */
			continue;
		}
		log_err("add prefix: %s%s", strerror(-err),
			err == -ENOSPC || err == -E2BIG ? " (the prefix trie is full)" : "");
		return err;
	}
	return delete_stale(l, o, family, fd);
}

int prefixes_configure(struct loader *l, const struct shedd_options *o)
{
	int err = sync_family(l, o, AF_INET);

	return err ? err : sync_family(l, o, AF_INET6);
}

static int apply_family(struct loader *l, int family)
{
	struct bpf_map *man = family == AF_INET ? l->skel->maps.manual_v4 : l->skel->maps.manual_v6;
	struct bpf_map *lpm = family == AF_INET ? l->skel->maps.prefix_v4 : l->skel->maps.prefix_v6;
	__u8 key[sizeof(struct shedd_lpm_v6)], next[sizeof(struct shedd_lpm_v6)];
	int mfd = bpf_map__fd(man), lfd = bpf_map__fd(lpm);
	struct shedd_manual_prefix m;
	void *prev = NULL;

	while (!bpf_map_get_next_key(mfd, prev, next)) {
		memcpy(key, next, sizeof(key));
		prev = key;
		if (bpf_map_lookup_elem(mfd, key, &m))
			continue; /* deleted meanwhile by shedctl */
		if (m.cls >= SHEDD_NR_CLASSES)
			continue;
		if (bpf_map_update_elem(lfd, key, &m.cls, BPF_ANY)) {
			int err = -errno;

			log_err("apply a manual prefix: %s%s", strerror(errno),
				err == -ENOSPC || err == -E2BIG ? " (the prefix trie is full)" : "");
			return err;
		}
	}
	return 0;
}

int prefixes_apply_manual(struct loader *l)
{
	int err = apply_family(l, AF_INET);

	return err ? err : apply_family(l, AF_INET6);
}

int prefixes_add(struct pins *p, const struct prefix_rule *r, char *err, size_t errlen)
{
	struct shedd_manual_prefix m = { .cls = r->cls, .config_cls = SHEDD_NO_CLASS }, old;
	__u8 key[sizeof(struct shedd_lpm_v6)];
	int f = r->family == AF_INET ? 0 : 1;
	size_t klen = prefix_key(r, key);
	__u32 cur;

	if (p->manual_fd[f] < 0)
		return err_say(err, errlen, -EOPNOTSUPP, "%s has no manual prefix maps: the shedd "
				    "that made it is older than shedctl's prefixes", p->dir);
	/* A configured entry of the same prefix is replaced: keep its class
	 * for del. Over a manual one, keep what that one kept. */
	if (!bpf_map_lookup_elem(p->manual_fd[f], key, &old))
		m.config_cls = old.config_cls;
	else if (key_held(p->prefix_fd[f], key, klen) &&
		 !bpf_map_lookup_elem(p->prefix_fd[f], key, &cur))
		m.config_cls = cur;
	/* The record first: a shedd writing its configured prefixes
	 * meanwhile then leaves this one alone. */
	if (bpf_map_update_elem(p->manual_fd[f], key, &m, BPF_ANY))
		return err_say(err, errlen, -errno, "record the prefix: %s%s", strerror(errno),
			       errno == E2BIG || errno == ENOSPC ?
				       " (the manual prefixes of this family are "
				       "MAX_MANUAL_PREFIXES, " SHEDD_STR(MAX_MANUAL_PREFIXES) ")" : "");
	if (bpf_map_update_elem(p->prefix_fd[f], key, &r->cls, BPF_ANY)) {
		int ret = -errno;

		err_say(err, errlen, ret, "add the prefix to %s/prefix_v%c: %s%s", p->dir,
			f ? '6' : '4', strerror(errno),
			errno == E2BIG || errno == ENOSPC ? " (the prefix trie is full)" : "");
		bpf_map_delete_elem(p->manual_fd[f], key);
		return ret;
	}
	return 0;
}

int prefixes_del(struct pins *p, const struct prefix_rule *r, char *err, size_t errlen)
{
	__u8 key[sizeof(struct shedd_lpm_v6)];
	int f = r->family == AF_INET ? 0 : 1;
	size_t klen = prefix_key(r, key);
	struct shedd_manual_prefix m;

	if (p->manual_fd[f] < 0 || bpf_map_lookup_elem(p->manual_fd[f], key, &m)) {
		if (key_held(p->prefix_fd[f], key, klen))
			return err_say(err, errlen, -EPERM, "the prefix comes from shedd's "
					    "configuration (--prefix), not from shedctl: change "
					    "it there");
		return err_say(err, errlen, -ENOENT, "no such prefix");
	}
	/* The trie first, while the record keeps a configured write away:
	 * the configured class the manual one replaced comes back, or the
	 * prefix goes. */
	if (m.config_cls < SHEDD_NR_CLASSES) {
		if (bpf_map_update_elem(p->prefix_fd[f], key, &m.config_cls, BPF_ANY))
			return err_say(err, errlen, -errno, "restore the configured class in "
					    "%s/prefix_v%c: %s", p->dir, f ? '6' : '4',
				       strerror(errno));
	} else if (bpf_map_delete_elem(p->prefix_fd[f], key) && errno != ENOENT) {
		return err_say(err, errlen, -errno, "delete the prefix from %s/prefix_v%c: %s",
			       p->dir, f ? '6' : '4', strerror(errno));
	}
	if (bpf_map_delete_elem(p->manual_fd[f], key) && errno != ENOENT)
		return err_say(err, errlen, -errno, "delete the prefix's record: %s", strerror(errno));
	return 0;
}

static int list_add(struct prefix_entry **out, int *n, int *cap, int family, const __u8 *key,
		    __u32 cls, const struct shedd_manual_prefix *manual, bool applied)
{
	struct prefix_entry *e;

	if (*n == *cap) {
		int ncap = *cap ? *cap * 2 : 64;
		void *grown = realloc(*out, sizeof(**out) * (size_t)ncap);

		if (!grown)
			return -ENOMEM;
		*out = grown;
		*cap = ncap;
	}
	e = &(*out)[(*n)++];
	memset(e, 0, sizeof(*e));
	e->rule.family = family;
	memcpy(&e->rule.prefixlen, key, sizeof(__u32));
	memcpy(e->rule.addr, key + sizeof(__u32), family == AF_INET ? 4 : 16);
	e->rule.cls = cls;
	e->manual = manual != NULL;
	e->config_cls = manual ? manual->config_cls : SHEDD_NO_CLASS;
	e->applied = applied;
	return 0;
}

int prefixes_list(struct pins *p, struct prefix_entry **out, int *n, char *err,
		     size_t errlen)
{
	__u8 cur[sizeof(struct shedd_lpm_v6)], next[sizeof(struct shedd_lpm_v6)];
	int f, cap = 0, ret;

	*out = NULL;
	*n = 0;
	for (f = 0; f < 2; f++) {
		int family = f ? AF_INET6 : AF_INET;
		size_t klen = sizeof(__u32) + (f ? 16 : 4);
		struct shedd_manual_prefix m;
		void *prev = NULL;
		bool manual;
		__u32 cls;

		while (!bpf_map_get_next_key(p->prefix_fd[f], prev, next)) {
			memcpy(cur, next, klen);
			prev = cur;
			/* The LPM lookup answers the longest match, which for
			 * a key in the map is that key's own entry. */
			if (bpf_map_lookup_elem(p->prefix_fd[f], cur, &cls))
				continue;
			manual = p->manual_fd[f] >= 0 &&
				 !bpf_map_lookup_elem(p->manual_fd[f], cur, &m) && m.cls == cls;
			if ((ret = list_add(out, n, &cap, family, cur, cls, manual ? &m : NULL, true)))
				goto oom;
		}
		if (p->manual_fd[f] < 0)
			continue;
		/* Manual records the trie lacks, or holds with another class
		 * (shedd has not applied them yet). */
		prev = NULL;
		while (!bpf_map_get_next_key(p->manual_fd[f], prev, next)) {
			memcpy(cur, next, klen);
			prev = cur;
			if (bpf_map_lookup_elem(p->manual_fd[f], cur, &m))
				continue;
			if (key_held(p->prefix_fd[f], cur, klen) &&
			    !bpf_map_lookup_elem(p->prefix_fd[f], cur, &cls) && cls == m.cls)
				continue;
			if ((ret = list_add(out, n, &cap, family, cur, m.cls, &m, false)))
				goto oom;
		}
	}
	return 0;
oom:
	free(*out);
	*out = NULL;
	*n = 0;
	return err_say(err, errlen, ret, "out of memory");
}
