// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* reload.c - SIGHUP reloads the config file. The new configuration is
 * parsed and checked whole, exactly as at start (options_parse() on the
 * saved command line, so flags still win over the file); only then is
 * anything written. Options that are fixed for the daemon's life keep
 * their running value and are named as needing a restart.
 */
#include <stdio.h>
#include <string.h>

#include "ctl.h"
#include "prefixes.h"
#include "log.h"
#include "configure.h"
#include "reload.h"

static int saved_argc;
static char **saved_argv;

void reload_save_argv(int argc, char **argv)
{
	saved_argc = argc;
	saved_argv = argv;
}

/* Is option @id the same in @a and @b? Only the options fixed for the
 * daemon's life (OPTF_RESTART) are compared. */
static bool same(enum opt_id id, const struct shedd_options *a, const struct shedd_options *b)
{
	switch (id) {
	case OPT_IFACE:
		return !strcmp(a->iface, b->iface);
	case OPT_NETNS:
		return !strcmp(a->netns, b->netns);
	case OPT_BACKEND_PORT:
		return a->nr_backend_ports == b->nr_backend_ports &&
		       !memcmp(a->backend_ports, b->backend_ports,
			       sizeof(a->backend_ports[0]) * (size_t)a->nr_backend_ports);
	case OPT_CONTROLLER:
		return a->controller == b->controller;
	case OPT_LATENCY_SOCKET:
		/* The running default may carry the namespace: compare what
		 * was asked for. */
		return a->latency_socket_set == b->latency_socket_set &&
		       (!a->latency_socket_set || !strcmp(a->latency_socket, b->latency_socket));
	case OPT_LATENCY_GROUP:
		return a->latency_group_set == b->latency_group_set &&
		       a->latency_gid == b->latency_gid;
	case OPT_HANDOFF:
		return a->handoff == b->handoff;
	case OPT_XDP_MODE:
		return a->xdp_mode == b->xdp_mode;
	case OPT_NIC_VLAN_TAG:
		return a->nic_vlan_tag == b->nic_vlan_tag;
	case OPT_TICK_MS:
		return a->tick_ms == b->tick_ms;
	case OPT_METRICS_ADDR:
		return !strcmp(a->metrics_addr, b->metrics_addr);
	case OPT_USER:
		return a->user_set == b->user_set && a->run_uid == b->run_uid &&
		       a->run_gid == b->run_gid;
	case OPT_STATUS_INTERVAL:
		return a->status_interval_ns == b->status_interval_ns;
	case OPT_FORCE:
		return a->force == b->force;
	case OPT_VERBOSE:
		return a->verbose == b->verbose;
	default:
		return true;
	}
}

/* Put the running value of option @id back into @n. */
static void keep(enum opt_id id, struct shedd_options *n, const struct shedd_options *o)
{
	switch (id) {
	case OPT_IFACE:
		memcpy(n->iface, o->iface, sizeof(n->iface));
		break;
	case OPT_NETNS:
		memcpy(n->netns, o->netns, sizeof(n->netns));
		break;
	case OPT_BACKEND_PORT:
		memcpy(n->backend_ports, o->backend_ports, sizeof(n->backend_ports));
		n->nr_backend_ports = o->nr_backend_ports;
		break;
	case OPT_CONTROLLER:
		n->controller = o->controller;
		break;
	case OPT_HANDOFF:
		n->handoff = o->handoff;
		break;
	case OPT_XDP_MODE:
		n->xdp_mode = o->xdp_mode;
		break;
	case OPT_NIC_VLAN_TAG:
		n->nic_vlan_tag = o->nic_vlan_tag;
		break;
	case OPT_TICK_MS:
		n->tick_ms = o->tick_ms;
		break;
	case OPT_METRICS_ADDR:
		memcpy(n->metrics_addr, o->metrics_addr, sizeof(n->metrics_addr));
		break;
	case OPT_USER:
		n->user_set = o->user_set;
		n->run_uid = o->run_uid;
		n->run_gid = o->run_gid;
		memcpy(n->user_name, o->user_name, sizeof(n->user_name));
		break;
	case OPT_STATUS_INTERVAL:
		n->status_interval_ns = o->status_interval_ns;
		break;
	case OPT_FORCE:
		n->force = o->force;
		break;
	case OPT_VERBOSE:
		n->verbose = o->verbose;
		break;
	case OPT_LATENCY_SOCKET:
	case OPT_LATENCY_GROUP:
	default:
		break;
	}
}

/* Does @n ask for exactly what @o runs? Both come from options_parse(),
 * which zeroes the whole struct first (padding and the tails of strings
 * too), and @n has had the running values of what cannot change copied
 * in: the bytes compare, the prefix list by its contents. */
static bool options_same(const struct shedd_options *o, const struct shedd_options *n)
{
	struct shedd_options a = *o, b = *n;

	if (o->nr_prefixes != n->nr_prefixes ||
	    (o->nr_prefixes && memcmp(o->prefixes, n->prefixes,
				      sizeof(*o->prefixes) * (size_t)o->nr_prefixes)))
		return false;
	a.prefixes = b.prefixes = NULL;
	return !memcmp(&a, &b, sizeof(a));
}

static void append(char *buf, size_t len, const char *what)
{
	size_t off = strlen(buf);

	snprintf(buf + off, len - off, "%s%s", off ? ", " : "", what);
}

int reload_config(struct shedd_options *o, struct loader *l, struct signals *sig,
		  struct tick_params *tp, struct tick_state *ts)
{
	char out[64], err[512], restart[512] = "", changed[512] = "";
	struct shedd_options n;
	struct aimd_params cp;
	int i, c, ret;

	if (!o->config[0]) {
		log_notice("SIGHUP: shedd runs without --config, nothing to reload");
		return 0;
	}
	ret = options_parse(saved_argc, saved_argv, &n, out, sizeof(out), err, sizeof(err));
	if (ret != OPTIONS_RUN) {
		log_err("reload refused, the running configuration stays: %s",
			ret == OPTIONS_ERROR ? err : "no configuration");
		options_free(&n);
		return -1;
	}
	/* What cannot change while shedd runs keeps its running value. */
	for (i = 0; i < OPT_COUNT; i++) {
		if (!(options_table[i].flags & OPTF_RESTART) || same((enum opt_id)i, o, &n))
			continue;
		append(restart, sizeof(restart), options_table[i].name);
		keep((enum opt_id)i, &n, o);
	}
	memcpy(n.latency_socket, o->latency_socket, sizeof(n.latency_socket));
	n.latency_socket_set = o->latency_socket_set;
	n.latency_gid = o->latency_gid;
	n.latency_group_set = o->latency_group_set;
	/* Without --user the daemon took the user shedd, if any, at start. */
	if (!n.user_set && !o->user_set) {
		n.run_uid = o->run_uid;
		n.run_gid = o->run_gid;
		memcpy(n.user_name, o->user_name, sizeof(n.user_name));
	}
	/* The sojourn program has "every port" as a constant. */
	if ((n.nr_ports == 0) != (o->nr_ports == 0)) {
		append(restart, sizeof(restart), "port (between every port and a list)");
		memcpy(n.ports, o->ports, sizeof(n.ports));
		n.nr_ports = o->nr_ports;
	}
	/* A file that asks for what runs changes nothing: no map is written
	 * and the limit stays where the controller, or a fallback, put it
	 * (the fixed rate of a fallback is not the file's --rate). */
	if (!*restart && options_same(o, &n)) {
		log_notice("reload: %s: the configuration is unchanged; nothing to do", o->config);
		options_free(&n);
		return 0;
	}
	/* With the controller, --rate is where it starts. */
	if (tp->aimd && n.rate_per_sec != o->rate_per_sec)
		append(restart, sizeof(restart), "rate (the controller's start)");
	if (!l->plan.enabled && memcmp(n.verify, o->verify, sizeof(n.verify)))
		append(restart, sizeof(restart), "verify (verified admission is off in this run)");
	/* No hand-off was loaded to take the proven ACKs of failing SYNs. */
	if (!l->plan.enabled && n.source_check == SHEDD_SRC_VERIFY &&
	    o->source_check != SHEDD_SRC_VERIFY) {
		append(restart, sizeof(restart),
		       "source_check verify (verified admission is off in this run)");
		n.source_check = o->source_check;
	}

	/* The maps: ports and prefixes are written new entries first, stale
	 * ones deleted after (loader_configure()), then the settings record.
	 * A SYN that arrives meanwhile sees, for each port and each prefix,
	 * either its old or its new entry, never neither: a port being
	 * removed is protected a moment longer, one being added a moment
	 * sooner, and a prefix whose class changes is one trie element
	 * replaced whole. The settings (reject modes, default class, RST and
	 * cookie budgets, verification modes) are one array element, copied
	 * by the kernel in one update. */
	if (loader_configure(l, &n)) {
		log_err("reload refused, the running configuration stays: writing the maps "
			"failed (said above); writing the running configuration back");
		loader_configure(l, o);
		options_free(&n);
		return -1;
	}
	/* The prefixes an operator added with shedctl win over the file's:
	 * loader_configure() left them alone, this puts them back where a
	 * configured prefix of the same key was written meanwhile. */
	if (prefixes_apply_manual(l))
		log_warn("reload: the manual prefixes could not all be applied");
	if (n.nr_ports != o->nr_ports || memcmp(n.ports, o->ports, sizeof(n.ports)))
		signals_set_ports(sig, n.ports, n.nr_ports);

	/* The tick's parameters: read by the next tick, on this thread. */
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		tp->ap.floor[c] = n.floor[c];
	controller_params(&n, &cp);
	cp.tick_ns = tp->cp.tick_ns;
	sig->depth_frac = cp.depth_frac; /* a listener's trouble (listeners.h) */
	tp->burst_per_rate = n.burst ? (double)n.burst /
			     (double)(n.rate_per_sec ? n.rate_per_sec : 1) : 0.1;
	tp->conc.on = n.conn_limit;
	tp->default_class = (int)n.default_class;
	if (tp->aimd) {
		tp->cp = cp;
		/* The state stays within the new bounds and stages. */
		if (ts->cs.rate > cp.max_rate)
			ts->cs.rate = cp.max_rate;
		if (ts->cs.rate < cp.min_rate)
			ts->cs.rate = cp.min_rate;
		if (ts->cs.stage >= cp.nr_stages)
			ts->cs.stage = cp.nr_stages > 0 ? cp.nr_stages - 1 : 0;
		ts->limit = ts->cs.rate;
	} else {
		tp->cp = cp;
		/* A rate the file changes is the new fixed rate; an unchanged
		 * one leaves the rate that runs, which a fallback may have
		 * chosen (main.c: the start rate, an adopted one). */
		if (n.rate_per_sec != o->rate_per_sec) {
			tp->fixed_rate = (double)n.rate_per_sec;
			ts->limit = tp->fixed_rate;
		}
	}

	if (n.nr_ports != o->nr_ports || memcmp(n.ports, o->ports, sizeof(n.ports)))
		append(changed, sizeof(changed), "port");
	if (n.nr_prefixes != o->nr_prefixes ||
	    (n.nr_prefixes && memcmp(n.prefixes, o->prefixes,
				     sizeof(*n.prefixes) * (size_t)n.nr_prefixes)))
		append(changed, sizeof(changed), "prefix");
	if (memcmp(n.floor, o->floor, sizeof(n.floor)))
		append(changed, sizeof(changed), "floor");
	if (memcmp(n.reject, o->reject, sizeof(n.reject)))
		append(changed, sizeof(changed), "reject");
	/* Read by the next tick (main.c: fair_tick()). */
	if (memcmp(n.fair_slack, o->fair_slack, sizeof(n.fair_slack)) ||
	    memcmp(n.fair_levels, o->fair_levels, sizeof(n.fair_levels)))
		append(changed, sizeof(changed), "fair");
	if (!tp->aimd && n.rate_per_sec != o->rate_per_sec)
		append(changed, sizeof(changed), "rate");
	if (n.conn_limit != o->conn_limit)
		append(changed, sizeof(changed), "conn_limit");
	/* Read by the next tick (main.c: recall_step()). */
	if (n.recall_rate != o->recall_rate)
		append(changed, sizeof(changed), "recall");
	options_free(o);
	*o = n;
	log_notice("reloaded %s: limit %.0f SYN/s, %d port(s), %d prefix(es)%s%s",
		o->config, ts->limit, o->nr_ports, o->nr_prefixes, *changed ? "; changed: " : "",
		changed);
	if (*restart)
		log_warn("reload: %s: needs a restart; the running value stays",
			restart);
	return 0;
}
