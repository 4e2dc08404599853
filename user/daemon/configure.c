// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* configure.c - what the XDP program is told: the protected ports, the
 * prefixes of the classes (an operator's manual ones win), the settings
 * record (MAC and MTU, RST and cookie budgets, verified admission, the
 * source check, what the kernel's SYN-ACK carries), the namespace's IPv4
 * broadcast addresses and the tunnels that end here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "configure.h"
#include "log.h"
#include "prefixes.h"
#include "probe.h"
#include "redirects.h"
#include "settings.h"
#include "sysctls.h"
#include "shedd.skel.h"
#include "tunnels.h"

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

/* Are cookies answered for some class? */
static bool cfg_verifies(const struct shedd_config *cfg)
{
	__u32 c;

	if (cfg->tx_blocked)
		return false;
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		if (cfg->verify[c] != SHEDD_VERIFY_OFF)
			return true;
	return cfg->source_check == SHEDD_SRC_VERIFY && cfg->default_class > 0;
}

int loader_configure(struct loader *l, const struct shedd_options *o)
{
	__u64 rst_per_cpu;
	struct shedd_config cfg;
	struct iface_link link;
	int err;

	/* Ports and prefixes first: the settings may turn all_ports off. */
	if ((err = sync_ports(l, o)) || (err = prefixes_configure(l, o)))
		return err;
	memset(&cfg, 0, sizeof(cfg));
	cfg.all_ports = o->nr_ports == 0;
	cfg.default_class = o->default_class;
	memcpy(cfg.reject, o->reject, sizeof(cfg.reject));
	/* The unicast MAC of the interface, which a SYN must be sent to for
	 * the program to answer it with a RST (an interface without one, all
	 * zero, gets no RST), and its MTU, which caps the MSS a cookie
	 * SYN-ACK offers. */
	if ((err = probe_iface_link(o->iface, &link)))
		return err;
	memcpy(cfg.mac, link.mac, sizeof(cfg.mac));
	cfg.mtu = link.mtu;
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
		if ((err = sysctls_apply(bpf_map__fd(l->skel->maps.sysctls), l->plan.handoff)) ||
		    (err = probe_syn_options(&cfg.wscale, &cfg.ecn)) ||
		    (err = probe_syn_opts_off(&cfg.syn_opts_off)))
			return err;
	}
	cfg.source_check = o->source_check;
	/* Without verified admission no cookie can answer a SYN that fails
	 * the check: it is judged as the default class, as under strict. */
	if (cfg.source_check == SHEDD_SRC_VERIFY && !l->plan.enabled) {
		cfg.source_check = SHEDD_SRC_STRICT;
		log_notice("source check: verify needs verified admission, off in this run: "
			   "a SYN that fails the check is judged as the default class (strict)");
	}
	if (cfg.source_check != SHEDD_SRC_OFF)
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
	/* What netfilter and IPVS take elsewhere after XDP: said, at start
	 * and on a reload (the ruleset is not read every tick: a large one
	 * takes a while to list). */
	redirects_check(o->ports, o->nr_ports, cfg_verifies(&cfg));
	return 0;
}

/* Is the key @key, of @size bytes, one of the @n keys at @keys? */
static bool key_in(const void *keys, unsigned int n, size_t size, const void *key)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!memcmp((const char *)keys + i * size, key, size))
			return true;
	return false;
}

#define MAP_PRUNE_KEY_MAX 64
_Static_assert(sizeof(struct shedd_tun_addr) <= MAP_PRUNE_KEY_MAX &&
		       sizeof(struct shedd_tun_key) <= MAP_PRUNE_KEY_MAX,
	       "map_prune() takes the tunnel maps' keys");

/* Delete the keys of map @fd (keys of @size bytes, at most MAP_PRUNE_KEY_MAX) that are
 * not among the @n at @keep, a batch at a time: a deletion during the walk
 * would restart it. */
static void map_prune(int fd, size_t size, const void *keep, unsigned int n)
{
	unsigned char key[MAP_PRUNE_KEY_MAX], next[MAP_PRUNE_KEY_MAX], stale[32][MAP_PRUNE_KEY_MAX];
	unsigned int i, nstale;
	bool more;

	if (size > sizeof(key))
		return;
	do {
		more = false;
		nstale = 0;
		if (bpf_map_get_next_key(fd, NULL, next))
			break;
		do {
			memcpy(key, next, size);
			if (!key_in(keep, n, size, key)) {
				if (nstale == sizeof(stale) / sizeof(stale[0])) {
					more = true;
					break;
				}
				memcpy(stale[nstale++], key, size);
			}
		} while (bpf_map_get_next_key(fd, key, next) == 0);
		for (i = 0; i < nstale; i++)
			bpf_map_delete_elem(fd, stale[i]);
	} while (more);
}

int loader_write_tunnels(struct loader *l, const struct tun_found *f)
{
	int dfd = bpf_map__fd(l->skel->maps.tun_devs);
	int fd = bpf_map__fd(l->skel->maps.tun_local), cfd = bpf_map__fd(l->skel->maps.tun_config);
	struct shedd_tun_config cfg = { 0 };
	unsigned int i;
	__u32 zero = 0;
	__u8 one = 1;

	for (i = 0; i < f->nr_local; i++) {
		if (bpf_map_update_elem(fd, &f->local[i], &one, BPF_ANY)) {
			int err = -errno;

			log_err("write tun_local: %s", strerror(errno));
			return err;
		}
	}
	/* Delete what is no longer local. */
	map_prune(fd, sizeof(f->local[0]), f->local, f->nr_local);

	/* The devices before the record that says to match them, the stale
	 * ones deleted after it: a device the program misses lets its
	 * packets pass unjudged for a moment, it never drops them. */
	for (i = 0; i < f->nr_devs; i++) {
		struct shedd_tun_dev v = { .ifindex = f->dev_ifindex[i] };

		if (bpf_map_update_elem(dfd, &f->dev_key[i], &v, BPF_ANY)) {
			int err = -errno;

			log_err("write tun_devs: %s", strerror(errno));
			return err;
		}
	}

	/* One value: the program sees the old record or the new one. */
	cfg.kinds = f->kinds;
	cfg.match = tun_match(f);
	memcpy(cfg.udp_port, f->udp_port, sizeof(f->udp_port[0]) * f->nr_ports);
	memcpy(cfg.udp_kind, f->udp_kind, sizeof(f->udp_kind[0]) * f->nr_ports);
	memcpy(cfg.udp_proto, f->udp_proto, sizeof(f->udp_proto[0]) * f->nr_ports);
	memcpy(cfg.udp_family, f->udp_family, sizeof(f->udp_family[0]) * f->nr_ports);
	if (bpf_map_update_elem(cfd, &zero, &cfg, BPF_ANY)) {
		int err = -errno;

		log_err("write tun_config: %s", strerror(errno));
		return err;
	}
	map_prune(dfd, sizeof(f->dev_key[0]), f->dev_key, f->nr_devs);
	return 0;
}
