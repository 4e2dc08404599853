// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* main.c - shedd, the daemon: load or adopt the XDP shedder on one interface,
 * then every tick: read signals -> controller -> allocator -> publish the
 * per-class rates; a status line every --status-interval; under systemd,
 * readiness, status and watchdog through sd_notify.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "ctl.h"
#include "prefixes.h"
#include "configure.h"
#include "detach.h"
#include "loader.h"
#include "pindir.h"
#include "port_maps.h"
#include "fair.h"
#include "migrate.h"
#include "log.h"
#include "metrics.h"
#include "options.h"
#include "probe.h"
#include "reload.h"
#include "service.h"
#include "signals.h"
#include "recall.h"
#include "status.h"
#include "tick.h"
#include "req_per_conn.h"
#include "redirects.h"
#include "signed_scan.h"
#include "tunnels.h"
#include "xdptx.h"

static volatile sig_atomic_t exiting;
static volatile sig_atomic_t reload_asked; /* SIGHUP: reload --config */
static int verbosity;

static void on_signal(int sig)
{
	(void)sig;
	exiting = 1;
}

static void on_hup(int sig)
{
	(void)sig;
	reload_asked = 1;
}

/* libbpf's messages (the verifier log among them) go out line by line,
 * each with its level. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && verbosity < 2)
		return 0;
	if (level == LIBBPF_INFO && verbosity < 1)
		return 0;
	log_vmsg(level == LIBBPF_WARN ? LOG_WARNING : level == LIBBPF_INFO ? LOG_INFO : LOG_DEBUG,
		 fmt, args);
	return 0;
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static void sleep_until(__u64 deadline_ns)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline_ns / 1000000000ULL),
		.tv_nsec = (long)(deadline_ns % 1000000000ULL),
	};

	/* EINTR from SIGTERM ends the wait early: the loop then sees exiting. */
	clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
}

struct daemon {
	struct loader l;
	struct signals sig;
	struct recall recall;
	const struct shedd_options *o;
	struct tick_params tp;
	struct tick_state ts;
	struct service svc;
	struct signal_report second;    /* merged over the status interval */
	__u64 second_overflows, second_drops;
	struct shedd_stats *prev, *cur; /* per-CPU snapshots */
	__u64 host_read_ns;             /* when loader_refresh_host() last ran */
	struct shedd_stats status_prev; /* summed, at the last status line */
	__u64 *syn;                     /* token requests of the tick (charged),
					 * [class * ncpus + cpu] */
	struct shedd_class_rate rates[SHEDD_NR_CLASSES];
	double last_status;
	__u64 last_tick_ns;
	__u64 skipped;                  /* ticks skipped after stalls */
	struct ctl ctl;                 /* the operator's commands (shedctl) */
	struct metrics metrics;         /* counters and the /metrics endpoint */
	struct xdptx_probe txp;         /* the driver's word on XDP_TX ... */
	struct xdptx_state txs;         /* ... and the judgement (xdptx.h) */
	int tun_fd;                     /* hears of link and address changes */
	struct tun_found tun, tun_next; /* the tunnels that end here (tunnels.h) */
	struct signed_watch signed_w;   /* listeners a cookie cannot answer */
	struct redir_watch redir_w;     /* netfilter's and IPVS's changes */
	__u64 tun_fou_ns;               /* when the FOU ports were last asked for */
	unsigned long ticks;            /* ticks run since start */
	unsigned long fail_tick;        /* SHEDD_TEST_FAIL_TICK: 0, or the tick to fail */
	enum signals_completion completion; /* where completed handshakes come from */
	/* Per-source fairness: SYNs and ACKs each class shed this tick, its
	 * fair_stats.shed at the last tick, when it last shed otherwise
	 * than for fairness. */
	__u64 cls_shed[SHEDD_NR_CLASSES];
	__u64 fair_shed_prev[SHEDD_NR_CLASSES];
	__u64 fair_last_shed_ns[SHEDD_NR_CLASSES];
	/* fair_stats.counted at the last tick, and when it last moved: a
	 * class that counted no admission for two windows has an empty
	 * sketch, not read again until it counts. */
	__u64 fair_counted_prev[SHEDD_NR_CLASSES];
	__u64 fair_counted_ns[SHEDD_NR_CLASSES];
	bool fair_warned;
	bool recall_said;        /* recall_step() said it ends connections, this episode */
	__u64 at_max_warned_ns;         /* the last warning of a limit bound at
					 * --max-rate (tell_at_max()); 0: none */
	__u64 at_max_ns;                /* the last tick it bound there; 0: none */
	__u64 at_max_ticks;             /* ticks it bound there, since start */
	double heartbeat_gap_s;         /* the heartbeat's age when last stamped */
	__u64 lease_expiries;           /* of them, older than the lease */
	/* Ports in trouble of their own and their limits (port_limit.h):
	 * the controller of each, what the last tick exported, the slots'
	 * counters; a failed write of the maps is said once. */
	struct port_limit_params plp;
	struct port_limit_state pls;
	int nr_port_limits;
	__u16 limit_port[MAX_PORT_LIMITS];
	double limit_rate[MAX_PORT_LIMITS];
	struct shedd_port_bucket port_counts[MAX_PORT_LIMITS];
	bool have_port_counts;
	bool port_warned;
};

/* The ceiling alone sheds a service healthy by every signal (the limit
 * binds at --max-rate while what it admits completes): said loudly, at
 * most once every AT_MAX_WARN_NS while it goes on, and shown (status
 * line, metrics) while a tick within AT_MAX_SHOW_NS found it: a tick
 * whose completions fall short by a few (the probes count a handshake
 * a tick late or early) does not end it. */
#define AT_MAX_WARN_NS (60ULL * 1000000000ULL)
#define AT_MAX_SHOW_NS 1000000000ULL

static bool at_max_shown(const struct daemon *d)
{
	return d->tp.aimd && d->at_max_ns && d->last_tick_ns - d->at_max_ns < AT_MAX_SHOW_NS;
}

/* Per-source fairness, once a tick: is each class shedding, or would it
 * be without fairness (fair_would_shed()), within FAIR_HOLD_NS; the limit of
 * each level from the sketch and the class's rate (fair.h). A failure is
 * said once; the program keeps the entries it has. */
static void fair_tick(struct daemon *d, __u64 now, double dt_s)
{
	struct shedd_fair_class cfg[SHEDD_NR_CLASSES];
	struct shedd_fair_stats fs[SHEDD_NR_CLASSES];
	const struct shedd_fair_cell *cells = loader_fair_cells(&d->l);
	int err = loader_read_fair_stats(&d->l, fs);
	__u32 c;

	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		struct fair_class_opts fo = { d->o->fair_slack[c], d->o->fair_levels[c] };
		__u64 fair = 0;

		bool idle = false;

		if (!err) {
			fair = fs[c].shed >= d->fair_shed_prev[c] ? fs[c].shed - d->fair_shed_prev[c] : 0;
			d->fair_shed_prev[c] = fs[c].shed;
			/* The first tick (an adopted sketch may hold counts) reads it. */
			if (!d->fair_counted_ns[c] || fs[c].counted != d->fair_counted_prev[c]) {
				d->fair_counted_prev[c] = fs[c].counted;
				d->fair_counted_ns[c] = now;
			}
			idle = now - d->fair_counted_ns[c] >= FAIR_IDLE_NS;
		}
		__u64 asked = 0;
		int i;

		/* charged holds fairness's sheds too (unverified classes). */
		for (i = 0; i < d->l.ncpus; i++)
			asked += d->syn[c * (__u32)d->l.ncpus + (__u32)i];
		if (d->o->verify[c] == SHEDD_VERIFY_OFF)
			asked = asked >= fair ? asked - fair : 0;
		if (d->cls_shed[c] > fair ||
		    fair_would_shed(asked, fair, dt_s, (double)d->rates[c].rate_per_sec))
			d->fair_last_shed_ns[c] = now;
		/* An empty sketch reads as none: the same limits, no cell read. */
		fair_class_config(&fo, idle ? NULL : cells, c, (double)d->rates[c].rate_per_sec,
				  d->fair_last_shed_ns[c] && now - d->fair_last_shed_ns[c] < FAIR_HOLD_NS,
				  now, &cfg[c]);
	}
	if (!err)
		err = loader_write_fair(&d->l, cfg);
	if (err && !d->fair_warned) {
		log_warn("per-source fairness: %s; the classes keep their last limits",
			 strerror(-err));
		d->fair_warned = true;
	}
}

/* For the test suite only: SHEDD_TEST_FAIL_TICK=N makes the Nth tick fail
 * as a failed read of the stats map would, so a test can see the error
 * path of a running daemon. Unset (or empty), it does nothing. */
static int fail_tick_from_env(struct daemon *d)
{
	const char *e = getenv("SHEDD_TEST_FAIL_TICK");
	char *end;
	unsigned long n;

	if (!e || !*e)
		return 0;
	errno = 0;
	n = strtoul(e, &end, 10);
	if (errno || *end || !n || *e == '-') {
		log_err("SHEDD_TEST_FAIL_TICK: '%s' is not a tick number (1, 2, ...)", e);
		return -EINVAL;
	}
	d->fail_tick = n;
	log_warn("SHEDD_TEST_FAIL_TICK=%lu: tick %lu will fail (a fault injected for tests)", n, n);
	return 0;
}

/* For the test suite only: SHEDD_TEST_HOLD_ATTACH_MS=N holds the start for
 * N ms (at most 60000) between the configuration and the attach, so a test
 * can see that every map the program reads is written before it sees a
 * packet. Unset (or empty), it does nothing. */
static int hold_before_attach(void)
{
	const char *e = getenv("SHEDD_TEST_HOLD_ATTACH_MS");
	struct timespec ts;
	unsigned long ms;
	char *end;

	if (!e || !*e)
		return 0;
	errno = 0;
	ms = strtoul(e, &end, 10);
	if (errno || *end || *e == '-' || ms > 60000) {
		log_err("SHEDD_TEST_HOLD_ATTACH_MS: '%s' is not a number of ms up to 60000", e);
		return -EINVAL;
	}
	log_warn("SHEDD_TEST_HOLD_ATTACH_MS=%lu: holding %lu ms before the attach, every map "
		 "written (a pause for tests)", ms, ms);
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	return 0;
}

/* Frames the program sent back with XDP_TX, every CPU: cookie SYN-ACKs,
 * RSTs to SYNs and to refused proven ACKs (a few of those were dropped
 * instead, over the RST budget: an overestimate, which only makes a black
 * hole harder to find, never one where there is none). */
static __u64 tx_sent(const struct shedd_stats *percpu, int n)
{
	__u64 sum = 0;
	int i, c;

	for (i = 0; i < n; i++)
		for (c = 0; c < SHEDD_NR_CLASSES; c++)
			sum += percpu[i].cls[c].cookie_sent + percpu[i].cls[c].rst_sent +
			       percpu[i].cls[c].ack_refused;
	return sum;
}

/* Once per change: why the answers are off, what it costs, what the
 * operator can do; or that they are back. */
static void tx_tell(const struct daemon *d, enum xdptx_event ev)
{
	const struct xdptx_state *s = &d->txs;
	const char *ifc = d->o->iface;

	if (ev == XDPTX_EV_BLOCKED && s->why == XDPTX_WHY_HINT)
		log_iface(LOG_WARNING, ifc, "XDP_TX frames go nowhere: the veth peer of %s runs "
			  "no XDP program and has GRO off, so the kernel drops what shedd sends "
			  "back (its xdp-features lack ndo-xmit). Cookies and RSTs are OFF on %s: "
			  "verified classes are judged unverified, RST classes drop. To have them, "
			  "attach an XDP program to the peer or turn GRO on there "
			  "(ethtool -K PEER gro on)", ifc, ifc);
	else if (ev == XDPTX_EV_BLOCKED && s->of)
		log_iface(LOG_WARNING, ifc, "XDP_TX frames go nowhere: the driver (%s) counted "
			  "%llu of the %llu frames shedd sent back as XDP transmit errors. Cookies "
			  "and RSTs are OFF on %s: verified classes are judged unverified, RST "
			  "classes drop; tried again every %llu s. On a veth: attach an XDP "
			  "program to the peer or turn GRO on there (ethtool -K PEER gro on)",
			  d->txp.driver[0] ? d->txp.driver : "?", (unsigned long long)s->lost,
			  (unsigned long long)s->of, ifc, XDPTX_TRIAL_EVERY_NS / 1000000000ULL);
	else if (ev == XDPTX_EV_BLOCKED)
		log_iface(LOG_WARNING, ifc, "XDP_TX frames go nowhere, as the shedd before this "
			  "one found: cookies and RSTs stay OFF on %s, tried again every %llu s",
			  ifc, XDPTX_TRIAL_EVERY_NS / 1000000000ULL);
	else if (ev == XDPTX_EV_RESTORED && s->why == XDPTX_WHY_HINT)
		log_iface(LOG_NOTICE, ifc, "XDP_TX frames reach the veth peer of %s again (it "
			  "runs an XDP program or has GRO on): cookies and RSTs are back on", ifc);
	else if (ev == XDPTX_EV_RESTORED)
		log_iface(LOG_NOTICE, ifc, "XDP_TX frames leave %s again: a trial sent %llu, the "
			  "driver counted %llu errors; cookies and RSTs are back on", ifc,
			  (unsigned long long)s->of, (unsigned long long)s->lost);
}

/* Judge this tick's XDP_TX (@percpu: the stats just read) and write the
 * verdict into settings.tx_blocked when it changed. */
static void tx_judge(struct daemon *d, const struct shedd_stats *percpu)
{
	struct xdptx_sample in = {
		.now_ns = now_ns(),
		.sent = tx_sent(percpu, d->l.ncpus),
		.hint = probe_xdptx_hint(&d->txp),
	};
	__u8 flag;

	in.have_errors = probe_xdptx_errors(&d->txp, &in.errors) == 1;
	tx_tell(d, xdptx_update(&d->txs, &in));
	flag = xdptx_blocked_flag(&d->txs);
	if (flag != d->l.tx_blocked)
		loader_write_tx_blocked(&d->l, flag); /* said; tried again next tick */
}

static double fail_static_rate(const struct shedd_options *o)
{
	return (double)(o->fail_static_rate ? o->fail_static_rate : o->rate_per_sec);
}

/* Hand the tick's figures to the metrics (@r NULL: publish, count nothing). */
static void publish_metrics(struct daemon *d, const struct signal_report *r)
{
	const struct aimd_state *cs = &d->ts.cs;
	enum aimd_rpc_src rpc_src = AIMD_RPC_NONE;

	metrics_tick(&d->metrics, &d->l, &(struct metrics_tick){
		.percpu = d->prev, .ncpus = d->l.ncpus, .sig = r, .limit = d->ts.limit,
		.rates = d->rates, .demand = d->ts.demand, .aimd = d->tp.aimd,
		.mode = cs->mode, .stage = cs->stage, .why = cs->why,
		.last_good = cs->last_good, .peak_accept = cs->peak_accept,
		.served_rate = cs->served_rate, .latency_baseline_ns = cs->lat.baseline_ns,
		.rpc = rpc_get(cs, &rpc_src), .rpc_src = (int)rpc_src,
		.latency_spread = cs->lat.spread, .feed_cover = cs->lat.cover,
		.calm_probes = cs->lat.probes, .probing = cs->lat.probing, .at_max = at_max_shown(d),
		.at_max_ticks = d->at_max_ticks,
		.skipped = d->skipped, .tx_blocked = d->l.tx_blocked,
		.signed_md5_ports = signed_ports_count(&d->signed_w.cur, SIGNED_MD5),
		.signed_mptcp_ports = signed_ports_count(&d->signed_w.cur, SIGNED_MPTCP),
		.unjudged_tun = d->tun.unjudged,
		.pinned_rate = ctl_pinned_rate(&d->ctl.cmd), .completion = (int)d->completion,
		.lease_s = (double)d->o->lease_ns / 1e9, .fail_static_rate = fail_static_rate(d->o),
		.heartbeat_gap_s = d->heartbeat_gap_s, .lease_expiries = d->lease_expiries,
		.nr_port_limits = d->nr_port_limits, .limit_port = d->limit_port,
		.limit_rate = d->limit_rate,
		.port_counts = d->have_port_counts ? d->port_counts : NULL,
		.default_class = d->o->default_class,
		.conn_limit = d->ts.conc.engaged ? d->ts.conc.class_cap : NULL,
		.recalled = d->recall.ended, .recall_failed = d->recall.failed });
}

static int write_rates(struct daemon *d)
{
	int err = loader_write_rates(&d->l, d->rates, now_ns());

	if (err)
		log_err("write rates: %s", strerror(-err));
	return err;
}

/* The heartbeat and the lease (include/lease.h), every tick and before
 * the program is attached or adopted: a program whose lease ran out while
 * no daemon ran goes back to the rates written from the first stamp. */
static int write_lease(struct daemon *d)
{
	const struct shedd_options *o = d->o;
	struct shedd_lease was, v;
	__u64 now = now_ns();
	int err;

	/* The heartbeat found: the last tick's, or at start the last
	 * daemon's. Older than its lease, the program had been climbing. */
	if (!loader_read_lease(&d->l, &was) && was.heartbeat_ns && now > was.heartbeat_ns) {
		__u64 gap = now - was.heartbeat_ns;

		d->heartbeat_gap_s = (double)gap / 1e9;
		if (was.lease_ns && gap > was.lease_ns && !(was.flags & SHEDD_LEASE_PINNED)) {
			d->lease_expiries++;
			log_iface(LOG_WARNING, o->iface, "the heartbeat was %.1fs old, past the "
				  "lease of %.0fs: the program had been climbing to the fail-static "
				  "rate; the daemon's rates hold again", (double)gap / 1e9,
				  (double)was.lease_ns / 1e9);
		}
	}
	tick_lease(&d->tp, &d->ts, fail_static_rate(o), o->lease_ns,
		   ctl_pinned_rate(&d->ctl.cmd) > 0, now, &v);
	err = loader_write_lease(&d->l, &v);
	if (err)
		log_err("write lease: %s", strerror(-err));
	return err;
}

/* The controller's state into the pinned ctl_state, for a restart. */
static int save_controller(struct daemon *d)
{
	struct shedd_ctl_state st;
	int err;

	ctl_state_fill(&d->ctl, &d->tp, &d->ts, now_ns(), &st);
	err = loader_write_ctl(&d->l, &st);
	if (err)
		log_err("write controller state: %s", strerror(-err));
	return err;
}

static void port_warn(struct daemon *d, const char *step, int err)
{
	if (!err || d->port_warned)
		return;
	log_warn("port limits: %s: %s; the ports' own limits may not be what shedd decided",
		 step, strerror(-err));
	d->port_warned = true;
}

/* The ports in trouble of their own, said once when a limit is added and
 * once when it is removed. */
static void port_tell(const struct daemon *d, const struct signal_report *r)
{
	const struct port_limit_state *s = &d->pls;
	int i, k, j;

	for (k = 0; k < s->nr_events; k++) {
		const struct port_trouble *t = NULL;
		const struct port_limit_entry *e = NULL;
		char others[128] = "";
		int off = 0;

		for (i = 0; i < r->listeners.nr_ports; i++)
			if (r->listeners.ports[i].port == s->ev_port[k])
				t = &r->listeners.ports[i];
		for (i = 0; i < s->n; i++)
			if (s->e[i].port == s->ev_port[k])
				e = &s->e[i];
		for (j = 0; j < r->accepting.n && off < (int)sizeof(others) - 8; j++)
			if (r->accepting.port[j] != s->ev_port[k])
				off += snprintf(others + off, sizeof(others) - (size_t)off, "%s%u",
						off ? "," : "", r->accepting.port[j]);
		switch (s->ev[k]) {
		case PORT_LIMIT_ADDED:
			log_iface(LOG_WARNING, d->o->iface, "port %u: every listener in trouble "
				  "(listeners: %d, accept queue %llu/%llu) while port %s accepts: "
				  "its own trouble, not the service's overload; its SYNs are limited "
				  "to %.0f/s at XDP (it accepted %.1f/s), the other ports keep their "
				  "admissions", s->ev_port[k], t ? t->listeners : 0,
				  t ? (unsigned long long)t->depth : 0ULL,
				  t ? (unsigned long long)t->backlog : 0ULL, others[0] ? others : "?",
				  e ? e->rate : 0, e ? e->accept_rate : 0);
			break;
		case PORT_LIMIT_REMOVED:
			log_iface(LOG_NOTICE, d->o->iface, "port %u accepts again: its own limit "
				  "is removed", s->ev_port[k]);
			break;
		case PORT_LIMIT_FULL:
			log_iface(LOG_WARNING, d->o->iface, "port %u: in trouble of its own, but "
				  "%d ports have a limit of their own already: its SYNs go to their "
				  "class as before", s->ev_port[k], MAX_PORT_LIMITS);
			break;
		default:
			break;
		}
	}
}

/* One tick of the ports' own limits (port_limit.h) and their maps: the
 * removed deleted, the added given their slot, the changed republished;
 * the flag of settings_cur on while any port is limited. */
static void port_tick(struct daemon *d, const struct signal_report *r, __u64 now, __u64 dt_ns)
{
	struct port_limit_input in = {
		.v = r->have_listen_drops ? &r->listeners : NULL,
		.accepts = r->port_accepts,
		.nr_accepts = r->nr_port_accepts,
		.dt_ns = dt_ns,
		.service_limit = d->ts.limit,
	};
	bool was = d->nr_port_limits > 0;
	int i, k;

	port_limit_update(&d->plp, &d->pls, &in);
	for (k = 0; k < d->pls.nr_removed; k++)
		port_warn(d, "delete a port's limit", port_maps_del(&d->l, d->pls.removed[k]));
	d->nr_port_limits = 0;
	for (i = 0; i < d->pls.n; i++) {
		const struct port_limit_entry *e = &d->pls.e[i];
		bool added = false;

		if (!e->active)
			continue;
		for (k = 0; k < d->pls.nr_events; k++)
			added |= d->pls.ev_port[k] == e->port && d->pls.ev[k] == PORT_LIMIT_ADDED;
		if (added)
			port_warn(d, "add a port's limit", port_maps_add(&d->l, e, now));
		else if (e->changed)
			port_warn(d, "write a port's limit", port_maps_set(&d->l, e, now));
		if (d->nr_port_limits < MAX_PORT_LIMITS) {
			d->limit_port[d->nr_port_limits] = e->port;
			d->limit_rate[d->nr_port_limits++] = e->rate;
		}
	}
	if ((d->nr_port_limits > 0) != was)
		port_warn(d, "flag the port limits", port_maps_flag(&d->l, d->nr_port_limits > 0));
	port_tell(d, r);
	d->have_port_counts = !port_maps_read(&d->l, d->port_counts);
}

/* Keep a second's worth of signals for the status line. */
static void merge_second(struct daemon *d, const struct signal_report *r)
{
	struct signal_report *s = &d->second;
	int i;

	s->have_sojourn |= r->have_sojourn;
	agg_merge(&s->sojourn, &r->sojourn);
	s->have_depth |= r->have_depth;
	if (r->have_depth) {
		s->depth = r->depth; /* the latest reading */
		s->backlog = r->backlog;
	}
	s->have_netstat |= r->have_netstat;
	s->overflows += r->overflows;
	s->drops += r->drops;
	s->have_latency |= r->have_latency;
	agg_merge(&s->latency, &r->latency);
	s->latency_log += r->latency_log;
	s->latency_served += r->latency_served;
	agg_merge(&s->upstream, &r->upstream);
	s->latency_bad += r->latency_bad;
	for (i = 0; i < LOGLINE_NR_REJECTS; i++)
		s->latency_why[i] += r->latency_why[i];
	s->latency_lost += r->latency_lost;
	s->have_listen_drops |= r->have_listen_drops;
	s->listen_drops += r->listen_drops;
	if (r->have_listen_drops) {
		__u64 ovf = s->listeners.stuck_overflows + r->listeners.stuck_overflows;

		s->listeners = r->listeners; /* the latest verdict ... */
		s->listeners.stuck_overflows = ovf; /* ... and the second's overflows */
	}
	s->have_completed |= r->have_completed;
	s->completed += r->completed;
}

static void tell_at_max(struct daemon *d, __u64 now)
{
	double offered = 0;
	int i;

	if (!d->tp.aimd || !d->ts.cs.at_max)
		return;
	d->at_max_ns = now;
	d->at_max_ticks++;
	if (d->at_max_warned_ns && now - d->at_max_warned_ns < AT_MAX_WARN_NS)
		return;
	d->at_max_warned_ns = now;
	for (i = 0; i < SHEDD_NR_CLASSES * d->l.ncpus; i++)
		offered += d->ts.instant[i];
	log_iface(LOG_WARNING, d->o->iface, "the limit binds at --max-rate %.0f SYN/s while the "
		  "SYNs it admits complete: %.0f SYN/s offered, about %.0f/s of a service healthy "
		  "by every signal SHED BY THE CEILING ALONE (%llu tick(s) so far); raise --max-rate",
		  d->tp.cp.max_rate, offered, offered > d->ts.limit ? offered - d->ts.limit : 0,
		  (unsigned long long)d->at_max_ticks);
}

/* --recall: the idle connections of the classes over their share of the
 * concurrency limit go back to the door (recall.h). Said when it begins to
 * end connections in an episode. */
static void recall_step(struct daemon *d, double dt_sec)
{
	const struct conc_state *c = &d->ts.conc;
	double want[SHEDD_NR_CLASSES] = { 0 };
	int k, cls;

	d->recall.rate = (double)d->o->recall_rate;
	d->recall.ports = d->o->ports;
	d->recall.nr_ports = d->o->nr_ports;
	d->recall.default_class = (int)d->o->default_class;
	if (!c->engaged) {
		d->recall_said = false;
		return;
	}
	for (cls = 0; cls < SHEDD_NR_CLASSES; cls++)
		want[cls] = c->live[cls] - c->class_cap[cls];
	k = recall_tick(&d->recall, want, dt_sec);
	if (k > 0 && !d->recall_said) {
		d->recall_said = true;
		log_iface(LOG_NOTICE, d->o->iface, "recall: ending idle connections of the "
			  "classes over their share (%d this tick, at most %llu/s): their "
			  "clients come back through the door", k,
			  (unsigned long long)d->o->recall_rate);
	}
}

/* A line when the concurrency limit (conc.h) comes into force, and when it
 * is lifted. */
static void tell_conc(const struct daemon *d, bool was)
{
	const struct conc_state *c = &d->ts.conc;

	if (c->engaged == was)
		return;
	if (c->engaged)
		log_iface(LOG_NOTICE, d->o->iface, "connection limit: %.0f live connections at "
			  "most (%.0f live now, requests queued beyond the latency target): new "
			  "connections wait at the door until some close", c->cap, conc_live(c));
	else
		log_iface(LOG_NOTICE, d->o->iface, "connection limit lifted: %.0f live "
			  "connections, calm", conc_live(c));
}

/* A line whenever the controller changes mode or ramp stage, or finds a
 * new reason for an overload, so the ramp can be followed. */
static void tell_mode(const struct daemon *d, enum aimd_mode was, int stage, unsigned int why,
		      enum aimd_drain drain, __u64 drain_end_ns, __u64 drain_excess0_ns)
{
	const struct aimd_state *cs = &d->ts.cs;
	const struct aimd_params *cp = &d->tp.cp;
	/* Again in the same episode; a drain left from the last episode
	 * (it lasts past the episode's end) is no reason to say so. */
	const char *again = cs->drain != drain || was != AIMD_OVERLOAD ? "" :
			    cs->drain_excess0_ns > drain_excess0_ns ? " (again: the excess grew)" :
			    (double)cs->drain_excess0_ns <= AIMD_DRAIN_FELL * (double)drain_excess0_ns ?
								" (again: the excess fell, not away)" :
								" (again: the excess rose and fell back)";

	/* The drain (aimd.h): when it begins, again, and when the latency
	 * outlived it: a service that got slower, or a queue the SYN limit
	 * does not reach. */
	if (cs->mode == AIMD_OVERLOAD && cs->drain == AIMD_DRAINING &&
	    (cs->drain != drain || cs->drain_end_ns != drain_end_ns))
		log_iface(LOG_NOTICE, d->o->iface, "drain%s: latency %.0f ms over target; "
			  "limit %.0f/s, %.0f%% of the served %.0f/s, for at most %.1f s",
			  again, cs->lat_excess_ns / 1e6, cs->rate,
			  cs->drain_ref > 0 ? 100 * cs->rate / cs->drain_ref : 0, cs->drain_ref,
			  (double)(cs->drain_end_ns - d->last_tick_ns) / 1e9);
	if (cs->mode == AIMD_OVERLOAD && cs->drain != drain && cs->drain == AIMD_DRAIN_SPENT)
		log_iface(LOG_NOTICE, d->o->iface, "drain: latency still %.0f ms over target "
			  "after the drain, not a queue it ends; limit %.0f/s",
			  cs->lat_excess_ns / 1e6, cs->rate);
	if (!(cs->mode != was || (cs->mode == AIMD_RECOVERING && cs->stage != stage) ||
	      (cs->mode == AIMD_OVERLOAD && (cs->why & ~why))))
		return;
	if (cs->mode == AIMD_RECOVERING)
		log_iface(LOG_NOTICE, d->o->iface, "mode=recovering stage=%d/%d limit=%.0f/s "
			  "(%.0f%% of last good %.0f/s)",
			  cs->stage + 1, cp->nr_stages, d->ts.limit,
			  100 * cp->ramp[cs->stage], cs->last_good);
	else
		log_iface(LOG_NOTICE, d->o->iface, "mode=%s limit=%.0f/s last_good=%.0f/s "
			  "peak_accept=%.0f/s%s%s%s%s%s",
			  aimd_mode_name(cs->mode), d->ts.limit, cs->last_good, cs->peak_accept,
			  cs->why & AIMD_WHY_SOJOURN ? " why=sojourn" : "",
			  cs->why & AIMD_WHY_DEPTH ? " why=depth" : "",
			  cs->why & AIMD_WHY_OVERFLOW ? " why=overflow" : "",
			  cs->why & AIMD_WHY_LATENCY ? " why=latency" : "",
			  cs->why & AIMD_WHY_STALL ? " why=stall" : "");
}

/* The signal half of the status line; returns its length. */
static size_t signals_format(char *buf, size_t len, const struct daemon *d, double dt)
{
	const struct signal_report *s = &d->second;
	int off;

	off = snprintf(buf, len, "mode=%s %s",
		       d->tp.aimd ? aimd_mode_name(d->ts.cs.mode) : "fixed",
		       d->l.tx_blocked ? "xdp_tx=blocked " : "");
	/* The ceiling alone sheds a healthy service (tell_at_max()). */
	if (at_max_shown(d))
		off += snprintf(buf + off, len - (size_t)off, "AT_MAX_RATE ");
	/* An operator's pin (shedctl rate pin) sets the limit: said first. */
	if (ctl_pinned_rate(&d->ctl.cmd) > 0)
		off += snprintf(buf + off, len - (size_t)off, "pinned=%.0f/s ",
				ctl_pinned_rate(&d->ctl.cmd));
	if (d->tp.aimd) {
		bool derived;
		__u64 target = aimd_latency_target(&d->tp.cp, &d->ts.cs, &derived);

		if (derived && d->ts.cs.lat.probing)
			off += snprintf(buf + off, len - (size_t)off, "latency_target=auto:probing");
		else
			off += status_latency_target(buf + off, len - (size_t)off,
						     !target && !derived, derived, target);
		off += snprintf(buf + off, len - (size_t)off, " ");
	}
	if (s->have_sojourn)
		off += snprintf(buf + off, len - (size_t)off,
				"accepts=%.1f/s sojourn_ms=%.2f/%.2f/%.2f/%.2f ",
				dt > 0 ? (double)s->sojourn.count / dt : 0, s->sojourn.min_ns / 1e6,
				agg_quantile(&s->sojourn, 0.5) / 1e6,
				agg_quantile(&s->sojourn, 0.99) / 1e6, s->sojourn.max_ns / 1e6);
	/* Estimated without the probes (with them, accepts= tells). */
	if (d->completion == SIGNALS_COMPLETION_PASSIVE_OPENS && s->have_completed)
		off += snprintf(buf + off, len - (size_t)off, "completed=%.1f/s ",
				dt > 0 ? (double)s->completed / dt : 0);
	if (s->have_depth)
		off += snprintf(buf + off, len - (size_t)off, "depth=%llu/%llu ",
				(unsigned long long)s->depth, (unsigned long long)s->backlog);
	if (s->have_netstat)
		off += snprintf(buf + off, len - (size_t)off, "overflows=%llu drops=%llu ",
				(unsigned long long)s->overflows, (unsigned long long)s->drops);
	if (s->have_listen_drops)
		off += snprintf(buf + off, len - (size_t)off, "listen_drops=%llu ",
				(unsigned long long)s->listen_drops);
	if (s->have_listen_drops && s->listeners.stuck)
		off += snprintf(buf + off, len - (size_t)off, "stuck_listeners=%d/%d "
				"stuck_overflows=%llu ", s->listeners.stuck, s->listeners.judged,
				(unsigned long long)s->listeners.stuck_overflows);
	if (s->have_listen_drops && s->listeners.ports_own)
		off += snprintf(buf + off, len - (size_t)off, "own_trouble_ports=%d ",
				s->listeners.ports_own);
	if (d->nr_port_limits) {
		int i;

		off += snprintf(buf + off, len - (size_t)off, "port_limits=");
		for (i = 0; i < d->nr_port_limits && off >= 0 && (size_t)off < len; i++)
			off += snprintf(buf + off, len - (size_t)off, "%s%u:%.0f/s", i ? "," : "",
					d->limit_port[i], d->limit_rate[i]);
		if (off >= 0 && (size_t)off < len)
			off += snprintf(buf + off, len - (size_t)off, " ");
	}
	if (s->have_latency && off >= 0 && (size_t)off < len)
		off += (int)status_latency_format(buf + off, len - (size_t)off, s);
	return off < 0 ? 0 : (size_t)off < len ? (size_t)off : len - 1;
}

static double status_period(const struct daemon *d)
{
	return d->o->status_interval_ns ? (double)d->o->status_interval_ns / 1e9 : 1.0;
}

static int tick(struct daemon *d)
{
	int n = d->l.ncpus, c, i, err;
	__u64 now = now_ns(), admitted = 0, unprotected = 0;
	double t = now_sec();
	struct shedd_stats *swap;
	struct signal_report r;
	struct tick_input in;
	enum aimd_mode was = d->ts.cs.mode;
	bool conc_was;
	unsigned int why = d->ts.cs.why;
	int stage = d->ts.cs.stage;
	enum aimd_drain drain = d->ts.cs.drain;
	__u64 drain_end_ns = d->ts.cs.drain_end_ns;
	__u64 drain_excess0_ns = d->ts.cs.drain_excess0_ns;

	if (++d->ticks == d->fail_tick) {
		log_err("read stats: %s (tick %lu, as SHEDD_TEST_FAIL_TICK asks)", strerror(EIO),
			d->ticks);
		return -EIO;
	}
	err = loader_read_stats(&d->l, d->cur);
	if (err) {
		log_err("read stats: %s", strerror(-err));
		return err;
	}
	for (i = 0; i < n; i++)
		unprotected += d->cur[i].unprotected >= d->prev[i].unprotected ?
				       d->cur[i].unprotected - d->prev[i].unprotected : 0;
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		for (i = 0; i < n; i++) {
			const struct shedd_class_stats *p = &d->prev[i].cls[c], *q = &d->cur[i].cls[c];

			/* Demand is what asked for a token: SYNs charged
			 * directly and ACKs that proved their address, not
			 * SYNs answered with a cookie (a spoofed flood). */
			d->syn[c * n + i] = q->charged >= p->charged ? q->charged - p->charged : 0;
			admitted += q->admitted >= p->admitted ? q->admitted - p->admitted : 0;
			admitted += q->ack_admitted >= p->ack_admitted ?
					    q->ack_admitted - p->ack_admitted : 0;
		}
		d->cls_shed[c] = 0;
		for (i = 0; i < n; i++) {
			const struct shedd_class_stats *p = &d->prev[i].cls[c], *q = &d->cur[i].cls[c];
			__u64 before = p->dropped + p->rst_sent + p->ack_refused;
			__u64 is = q->dropped + q->rst_sent + q->ack_refused;

			d->cls_shed[c] += is >= before ? is - before : 0;
		}
	}
	swap = d->prev;
	d->prev = d->cur;
	d->cur = swap;
	tx_judge(d, d->prev);
	/* The sysctls behind the SYN-ACK's options and the broadcast
	 * addresses may change under us: read again once a second. A
	 * failure is said and tried again. */
	if (now - d->host_read_ns >= 1000000000ULL) {
		d->host_read_ns = now;
		loader_refresh_host(&d->l);
	}

	signals_read(&d->sig, &r);
	/* Without the probes, the handshakes completed come from the
	 * namespace's passive opens, bounded (signals.h). */
	if (d->completion == SIGNALS_COMPLETION_PASSIVE_OPENS && !r.have_completed &&
	    r.have_passive_opens) {
		r.have_completed = true;
		r.completed = completed_from_passive_opens(r.passive_opens, unprotected, admitted);
	}
	merge_second(d, &r);
	in = (struct tick_input){
		.now_ns = now,
		.dt_ns = now - d->last_tick_ns,
		.sig = &r,
		.syn = d->syn,
		.admitted = admitted,
	};
	d->last_tick_ns = now;
	ctl_read_cmd(&d->ctl, &d->l, d->o->iface);
	ctl_pin_before(&d->tp, &d->ts, &d->ctl.cmd);
	conc_was = d->ts.conc.engaged;
	tick_step(&d->tp, &d->ts, &in, d->rates);
	tell_conc(d, conc_was);
	recall_step(d, (double)in.dt_ns / 1e9);
	ctl_pin_after(&d->tp, &d->ts, &d->ctl.cmd, d->rates);
	ctl_note_signals(&d->ctl, &d->tp, &d->ts, &in);
	if (d->tp.aimd)
		tell_mode(d, was, stage, why, drain, drain_end_ns, drain_excess0_ns);
	tell_at_max(d, now);
	if ((err = write_rates(d)) || (err = write_lease(d)) || (err = save_controller(d)))
		return err;
	fair_tick(d, now, (double)in.dt_ns / 1e9);
	port_tick(d, &r, now, in.dt_ns);
	publish_metrics(d, &r);

	/* The status line: logged every --status-interval (never with 0); its
	 * short form goes to the service manager as STATUS= at the same pace,
	 * or every second when the line is not logged. */
	if (t - d->last_status >= status_period(d)) {
		struct shedd_stats sum;
		char line[1024];
		size_t off;

		stats_sum(d->prev, n, &sum);
		off = signals_format(line, sizeof(line), d, t - d->last_status);
		status_format(line + off, sizeof(line) - off, &d->status_prev, &sum,
			      t - d->last_status, d->ts.limit);
		if (d->o->status_interval_ns)
			log_iface(LOG_INFO, d->o->iface, "%s", line);
		status_summary(line, sizeof(line),
			       d->tp.aimd ? aimd_mode_name(d->ts.cs.mode) : "fixed", &d->status_prev,
			       &sum, t - d->last_status, d->ts.limit);
		service_status(line);
		d->status_prev = sum;
		d->last_status = t;
		memset(&d->second, 0, sizeof(d->second));
	}
	return 0;
}

/* An adopting shedd's controller, without --rate: the state the last one
 * pinned (mode, ramp stage, last good rate), when it can be imported. */
static void controller_resume(struct daemon *d)
{
	struct shedd_ctl_state st;

	if (!d->l.adopted || d->o->rate_set || !d->tp.aimd)
		return;
	if (loader_read_ctl(&d->l, &st) || aimd_import(&d->tp.cp, &d->ts.cs, &st, now_ns()))
		return;
	d->ts.limit = d->ts.cs.rate;
	log_notice("controller resumes: mode=%s stage=%d limit=%.0f/s "
		   "last_good=%.0f/s peak_accept=%.0f/s latency_baseline=%.1fms "
		   "(state written %.1fs ago%s)",
		   aimd_mode_name(d->ts.cs.mode), d->ts.cs.stage + 1, d->ts.cs.rate,
		   d->ts.cs.last_good, d->ts.cs.peak_accept, d->ts.cs.lat.baseline_ns / 1e6,
		   now_ns() > st.written_ns ? (double)(now_ns() - st.written_ns) / 1e9 : 0,
		   now_ns() > st.written_ns + d->tp.cp.fresh_ns ? ": history, only the limit" : "");
}

/* Who the daemon goes on as once attached: --user, or the user shedd if
 * there is one; @uid 0: it stays root. -EPERM when --user was given and
 * the process cannot change users (checked before attaching). */
static int run_as(struct shedd_options *o, __u32 *uid, __u32 *gid)
{
	char why[256];

	*uid = *gid = 0;
	if (!o->user_set &&
	    parse_user("shedd", &o->run_uid, &o->run_gid, o->user_name, sizeof(o->user_name),
		       why, sizeof(why))) {
		log_info("no user shedd: the daemon stays uid 0 once attached "
			 "(create a system user shedd, or choose one with --user)");
		return 0;
	}
	/* root, or the user it already is (a unit with User=). */
	if (!o->run_uid || o->run_uid == getuid())
		return 0;
	if (!service_may_change_id()) {
		if (o->user_set) {
			log_err("--user %s needs CAP_SETUID, CAP_SETGID and CAP_CHOWN at start "
				"(run as root or grant them)", o->user_name);
			return -EPERM;
		}
		log_warn("cannot become user %s (no CAP_SETUID, CAP_SETGID and CAP_CHOWN): "
			 "the daemon stays uid %u once attached", o->user_name, getuid());
		return 0;
	}
	*uid = o->run_uid;
	*gid = o->run_gid;
	service_plan_change_id();
	return 0;
}

/* The latency socket's own folder (the default one's: /run/shedd, or the
 * namespace's under it) to group @gid too, so that the user unlinks the
 * socket at exit. A folder the operator chose is left as it is. */
static void share_latency_dir(const struct shedd_options *o, __u32 gid)
{
	char dir[sizeof(o->latency_socket)], *slash;
	struct stat st;

	if (o->latency_socket_set)
		return;
	snprintf(dir, sizeof(dir), "%s", o->latency_socket);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	if (stat(dir, &st) || chown(dir, (uid_t)-1, (gid_t)gid) ||
	    chmod(dir, (st.st_mode & 07777) | 0070))
		log_warn("give %s to group %u: %s; the latency socket stays after exit",
			 dir, gid, strerror(errno));
}

/* Before the settings are written: can the program's XDP_TX frames leave
 * the interface? The driver's features answer for a veth; an adopted
 * program keeps what its shedd had found. */
static int tx_start(struct daemon *d)
{
	const struct shedd_options *o = d->o;
	struct xdptx_sample in = { .now_ns = now_ns() };
	__u8 pinned = 0;
	int err;

	err = probe_xdptx_open(&d->txp, o->iface, d->l.ifindex, o->xdp_mode != XDP_MODE_GENERIC);
	if (err)
		log_warn("read the driver statistics of %s: %s; a loss of the cookies and RSTs "
			 "shedd sends back (XDP_TX) would not be seen", o->iface, strerror(-err));
	else if (!d->txp.nr_err && o->xdp_mode != XDP_MODE_GENERIC)
		log_info("the driver of %s (%s) counts no XDP_TX errors: a loss of the cookies "
			 "and RSTs shedd sends back would not be seen", o->iface,
			 d->txp.driver[0] ? d->txp.driver : "?");
	if ((err = loader_read_stats(&d->l, d->prev))) {
		log_err("read stats: %s", strerror(-err));
		return err;
	}
	in.sent = tx_sent(d->prev, d->l.ncpus);
	in.hint = probe_xdptx_hint(&d->txp);
	in.have_errors = probe_xdptx_errors(&d->txp, &in.errors) == 1;
	tx_tell(d, xdptx_update(&d->txs, &in));
	if (d->l.adopted && !d->txs.blocked && in.hint != XDPTX_HINT_OK &&
	    !loader_read_tx_blocked(&d->l, &pinned) && pinned) {
		xdptx_carry_blocked(&d->txs, in.now_ns);
		tx_tell(d, XDPTX_EV_BLOCKED);
	}
	d->l.tx_blocked = xdptx_blocked_flag(&d->txs);
	return 0;
}

/* Runs the daemon; returns its exit status (enum shedd_exit). */
static void tunnels_tell(const struct daemon *d)
{
	const struct tun_found *f = &d->tun;
	char what[256];

	tun_describe(f, what, sizeof(what));
	log_info("tunnels that end here: %s; their inner SYNs are judged as direct ones, in a "
		 "class space of their own, when sent to one of %u local addresses and taken by "
		 "one of %u devices", what, f->nr_local, f->nr_devs);
	if (f->dev_unread)
		log_warn("tunnel devices shedd could not read, or past the %d it keeps: their "
			 "kinds (0x%x) are judged without matching a device", MAX_TUN_DEVS,
			 f->dev_unread);
	if (f->ports_over)
		log_warn("%u UDP tunnel ports past the %d shedd reads: SYNs inside them are not "
			 "judged", f->ports_over, MAX_TUN_UDP_PORTS);
	if (f->local_over)
		log_warn("%u local addresses past the %d shedd keeps: tunnels to them are not "
			 "judged", f->local_over, MAX_TUN_LOCAL);
}

/* Each device of a kind the program does not open, once: at start and
 * when it appears (@old: what was read before; NULL at start). */
static void tunnels_tell_unjudged(const struct tun_found *now, const struct tun_found *old)
{
	unsigned int i, k, all = 0;

	for (i = 0; i < now->nr_uj; i++) {
		const struct tun_unjudged_dev *u = &now->uj_dev[i];
		bool crypt = u->kind == TUN_UJ_WIREGUARD || u->kind == TUN_UJ_XFRM ||
			     u->kind == TUN_UJ_VTI || u->kind == TUN_UJ_VTI6;

		if (old && !tun_unjudged_new(old, u))
			continue;
		/* MPLS: the labels popped, the packet is routed on. */
		log_warn("%s (%s): SYNs %s are not judged by shedd, which passes the outer "
			 "packets as it passes established traffic; see docs/datapath.md, "
			 "\"Decapsulations shedd does not open\"", u->name,
			 tun_unjudged_name(u->kind),
			 crypt ? "decrypted on it" :
			 u->kind == TUN_UJ_MPLS ? "in MPLS frames taken on it" : "decapsulated on it");
	}
	for (k = 0; k < TUN_UJ_NR; k++)
		all += now->unjudged[k];
	if (all > now->nr_uj &&
	    (!old || memcmp(now->unjudged, old->unjudged, sizeof(now->unjudged))))
		log_warn("%u more devices whose inner SYNs shedd does not judge (past the %d it "
			 "names; shedd_unjudged_tunnel_devices counts them by kind)",
			 all - now->nr_uj, MAX_TUN_UNJUDGED);
}

/* Before attach: the tunnels that end here, and a watch on the links and
 * addresses that may change them. */
static int tunnels_start(struct daemon *d)
{
	int err;

	d->tun_fd = tun_watch_open();
	if (d->tun_fd < 0)
		log_warn("watch links and addresses: %s: tunnels are read at start and reload "
			 "only", strerror(-d->tun_fd));
	err = tun_scan(&d->tun);
	if (err) {
		log_err("read the tunnel devices and local addresses (rtnetlink): %s",
			strerror(-err));
		return err;
	}
	tunnels_tell(d);
	tunnels_tell_unjudged(&d->tun, NULL);
	return loader_write_tunnels(&d->l, &d->tun);
}

/* Every tick: read them again when a link or an address changed, or a
 * FOU port or an MPLS setting (asked for every TUN_FOU_RESCAN_NS). A
 * failed read keeps what the program has. */
static void tunnels_tick(struct daemon *d)
{
	int err;

	bool changed = d->tun_fd >= 0 && tun_watch_changed(d->tun_fd);
	__u64 now = now_ns();

	/* FOU and GUE ports, and the MPLS settings, have no event we hear:
	 * asked for once a second. */
	if (!changed && now - d->tun_fou_ns >= TUN_FOU_RESCAN_NS) {
		d->tun_fou_ns = now;
		changed = tun_fou_changed(&d->tun) || tun_mpls_changed(&d->tun, TUN_MPLS_ROOT);
	}
	if (!changed)
		return;
	err = tun_scan(&d->tun_next);
	if (err) {
		log_warn("read the tunnel devices and local addresses (rtnetlink): %s; "
			 "judging tunnels as before", strerror(-err));
		return;
	}
	if (!memcmp(&d->tun_next, &d->tun, sizeof(d->tun)))
		return;
	tunnels_tell_unjudged(&d->tun_next, &d->tun);
	d->tun = d->tun_next;
	tunnels_tell(d);
	loader_write_tunnels(&d->l, &d->tun); /* said; tried again on a change */
}

static int run(struct shedd_options *o)
{
	struct daemon d = { .o = o, .txp = { .fd = -1, .genl_fd = -1 }, .tun_fd = -1,
			   .redir_w = { .fd = -1 }, .recall = { .nl = -1, .notes_fd = -1 } };
	double start, adopted = 0;
	bool start_given;
	bool started = false;
	__u64 deadline;
	__u32 uid, gid;
	int err, c, n;

	service_init(&d.svc);

	if (fail_tick_from_env(&d))
		return SHEDD_EXIT_USAGE;
	err = loader_open(&d.l, o);
	if (err)
		return SHEDD_EXIT_ENV;
	/* Two namespaces may each have an IFACE: outside the initial one the
	 * default latency socket carries the namespace, as the pins do. */
	if (!o->latency_socket_set && d.l.ns_tag[0])
		snprintf(o->latency_socket, sizeof(o->latency_socket), "/run/shedd/%s/%s.sock",
			 d.l.ns_tag, o->iface);
	n = d.l.ncpus;
	d.prev = calloc((size_t)n, sizeof(*d.prev));
	d.cur = calloc((size_t)n, sizeof(*d.cur));
	d.ts.demand = calloc((size_t)(SHEDD_NR_CLASSES * n), sizeof(*d.ts.demand));
	d.ts.instant = calloc((size_t)(SHEDD_NR_CLASSES * n), sizeof(*d.ts.instant));
	d.syn = calloc((size_t)(SHEDD_NR_CLASSES * n), sizeof(*d.syn));
	if (!d.prev || !d.cur || !d.ts.demand || !d.ts.instant || !d.syn) {
		log_err("out of memory");
		err = -ENOMEM;
		goto out;
	}
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		d.tp.ap.floor[c] = o->floor[c];
	d.tp.ap.headroom = DEFAULT_HEADROOM;
	controller_params(o, &d.tp.cp);
	conc_defaults(&d.tp.conc);
	d.tp.conc.on = o->conn_limit;
	d.tp.default_class = (int)o->default_class;
	d.tp.ncpus = n;
	d.tp.aimd = o->controller == CONTROLLER_AIMD;
	/* --burst is the depth for --rate; a controlled limit keeps the same
	 * depth in time. Without --burst: 100 ms of traffic. */
	d.tp.burst_per_rate = o->burst ? (double)o->burst /
			      (double)(o->rate_per_sec ? o->rate_per_sec : 1) : 0.1;
	start = (double)o->rate_per_sec;
	/* Adopting without --rate: carry on from the rate the program has,
	 * so a restart does not forget what the controller had found (and
	 * from the controller's pinned state, below, when there is one). */
	if (d.l.adopted && !o->rate_set && !loader_read_total_rate(&d.l, &adopted) && adopted > 0)
		start = adopted;
	start_given = o->rate_set || adopted > 0;
	d.tp.fixed_rate = (double)o->rate_per_sec;
	/* Before the latency thread starts (service_plan_change_id()). */
	if ((err = run_as(o, &uid, &gid)))
		goto out;
	signals_open_conns(&d.sig, o, n, loader_map_fd(&d.l, "prefix_v4"),
			   loader_map_fd(&d.l, "prefix_v6"));
	if ((err = recall_open(&d.recall, signals_conn_notes_fd(&d.sig),
			       (double)o->recall_rate))) {
		log_warn("recall: %s; idle connections are not ended", strerror(-err));
		err = 0;
	} else if (o->recall_rate && !o->conn_limit) {
		log_warn("--recall %llu acts only while the connection limit is in force: "
			 "with --conn-limit off it ends no connection",
			 (unsigned long long)o->recall_rate);
	} else if (o->recall_rate && signals_conn_notes_fd(&d.sig) < 0) {
		log_warn("--recall %llu: the live connections are not counted (no sojourn "
			 "probes); idle connections are not ended",
			 (unsigned long long)o->recall_rate);
	}
	/* With no delay signal at all, the control law is an open-loop ramp
	 * to --max-rate: run at a fixed rate instead, and say so. */
	if (tick_blind_fallback(&d.tp, signals_have_delay(&d.sig), start))
		log_warn("no delay signal (no sojourn probes, no sock_diag depth, "
			 "no latency socket): the aimd controller cannot close its loop; "
			 "FALLING BACK to a fixed rate of %.0f SYN/s", start);
	/* Growth needs evidence that the admitted SYNs complete: without a
	 * measure of it the limit could only fall, episode after episode
	 * and across restarts. Run at a fixed rate instead, and say so. */
	d.completion = signals_completion(&d.sig);
	if (d.completion == SIGNALS_COMPLETION_PASSIVE_OPENS && d.tp.aimd)
		log_warn("no sojourn probes: completed handshakes are estimated from the "
			 "network namespace's TcpPassiveOpens, less the SYNs to unprotected "
			 "ports, at most the SYNs admitted (opens through another interface, "
			 "loopback, count too)");
	else if (d.completion == SIGNALS_COMPLETION_NONE && d.tp.aimd) {
		d.tp.aimd = false;
		d.tp.fixed_rate = start;
		log_warn("no measure of completed handshakes (no sojourn probes; %s): the "
			 "aimd controller could only lower its limit; FALLING BACK to a "
			 "fixed rate of %.0f SYN/s", o->nr_backend_ports ?
			 "TcpPassiveOpens would count the backend ports' opens too" :
			 "no TcpPassiveOpens in /proc/net/snmp", start);
	}
	/* First, do no harm: without --rate or a running program's rate,
	 * the controller starts open at --max-rate (tick_start()); --rate
	 * stays the fixed rate of a fallback above. */
	tick_start(&d.tp, &d.ts, start_given ? start : 0);
	controller_resume(&d);

	if ((err = tx_start(&d)) || (err = tunnels_start(&d)) || (err = loader_configure(&d.l, o)) ||
	    (err = prefixes_apply_manual(&d.l)) || (err = redirects_watch_start(&d.redir_w)))
		goto out;
	/* The ports' own limits are judged again from the first ticks: a
	 * limit a shedd before this one left is no evidence of now. */
	port_limit_defaults(&d.plp);
	port_limit_init(&d.pls);
	port_warn(&d, "clear the ports' limits", port_maps_clear(&d.l));
	ctl_read_cmd(&d.ctl, &d.l, o->iface);
	ctl_pin_start(&d.tp, &d.ts, &d.ctl.cmd);
	if ((err = loader_read_stats(&d.l, d.prev))) {
		log_err("read stats: %s", strerror(-err));
		goto out;
	}
	stats_sum(d.prev, n, &d.status_prev);
	/* Before attaching: a metrics address given that cannot be had stops
	 * us; the default one only costs the metrics. */
	if ((err = metrics_open(&d.metrics, &d.l, o->metrics_addr, o->metrics_addr_set,
				o->iface, o->nr_backend_ports > 0)))
		goto out;
	/* A fresh program starts with an even split; an adopted one keeps its
	 * rates until the first tick has measured demand. */
	if (!d.l.adopted) {
		tick_allocate(&d.tp, &d.ts, d.rates);
		if ((err = write_rates(&d)))
			goto out;
	}
	fair_tick(&d, now_ns(), 0);
	if ((err = write_lease(&d)) || (err = save_controller(&d)))
		goto out;
	publish_metrics(&d, NULL);
	/* Only now, with every map written, does the program see a packet. */
	if ((err = hold_before_attach()) || (err = loader_attach(&d.l, o)))
		goto out;
	started = true;
	/* An upgrade carried the old program's counters in at the swap: the
	 * first tick counts from them. */
	if (migrate_needed(&d.l)) {
		if ((err = loader_read_stats(&d.l, d.prev))) {
			log_err("read stats: %s", strerror(-err));
			goto out;
		}
		stats_sum(d.prev, n, &d.status_prev);
	}
	err = 0;
	/* Attached, sockets bound, sysctls set: from here on the daemon
	 * needs only what service_drop_caps() keeps, as the user it runs as. */
	if (uid) {
		if ((err = pindir_share(d.l.pin_dir, gid)))
			goto out;
		share_latency_dir(o, gid);
		if ((err = service_drop_caps(uid, gid)))
			goto out;
		log_info("running as user %s (uid %u, gid %u) with CAP_BPF and CAP_NET_ADMIN",
			 o->user_name, uid, gid);
	} else if (service_drop_caps(0, 0)) {
		log_warn("could not drop capabilities; running with those it was given");
	}
	/* After the drop: the thread that parses requests holds nothing. */
	if ((err = metrics_start(&d.metrics)))
		goto out;
	log_notice("%s %s (ifindex %d, %d CPUs, %s XDP), %s rate %.0f SYN/s%s, pins in %s",
		   d.l.adopted ? "adopted the running shedd on" : "attached to", o->iface,
		   d.l.ifindex, n, d.l.xdp_mode == XDP_MODE_GENERIC ? "generic" : "native",
		   d.tp.aimd ? "aimd, start" : "fixed", d.ts.limit,
		   d.tp.aimd && d.ts.cs.open ? " (open: no overload seen yet)" : "", d.l.pin_dir);
	if (d.tp.aimd) {
		char lt[64];
		bool derived;
		__u64 target = aimd_latency_target(&d.tp.cp, &d.ts.cs, &derived);

		status_latency_target(lt, sizeof(lt), !target && !derived, derived, target);
		log_info("aimd target_delay=%.1fms interval=%.0fms depth=%.0f%% "
			 "min=%.0f max=%.0f beta=%.2f ramp=%d stages x %.1fs %s",
			 d.tp.cp.target_delay_ns / 1e6, d.tp.cp.interval_ns / 1e6,
			 100 * d.tp.cp.depth_frac, d.tp.cp.min_rate, d.tp.cp.max_rate, d.tp.cp.beta,
			 d.tp.cp.nr_stages, d.tp.cp.stage_hold_ns / 1e9, lt);
	}

	d.last_status = now_sec();
	d.last_tick_ns = deadline = now_ns();
	while (!exiting) {
		__u64 skipped = tick_next_deadline(&deadline, now_ns(), d.tp.cp.tick_ns);

		if (skipped) {
			d.skipped += skipped;
			log_iface(LOG_WARNING, o->iface, "%llu tick(s) skipped after a stall of the "
				  "daemon (%llu in all)",
				  (unsigned long long)skipped, (unsigned long long)d.skipped);
		}
		/* A SIGHUP wakes the sleep: reload, then sleep on to the tick. */
		do {
			sleep_until(deadline);
			if (reload_asked && !exiting) {
				bool ok;

				reload_asked = 0;
				service_reloading();
				ok = !reload_config(o, &d.l, &d.sig, &d.tp, &d.ts);
				service_reloaded(ok ? "configuration reloaded" :
						 "reload refused: the running configuration stays");
				/* Counted and published at once, for a scrape
				 * that follows the reload. */
				if (o->config[0]) {
					metrics_reload(&d.metrics.next, ok);
					publish_metrics(&d, NULL);
				}
			}
		} while (!exiting && now_ns() < deadline);
		if (exiting)
			break;
		if ((err = tick(&d)))
			break;
		tunnels_tick(&d);
		signed_watch_tick(&d.signed_w, d.sig.diag_fd, d.o, d.o->iface, now_ns());
		redirects_watch_tick(&d.redir_w, now_ns());
		service_ready(&d.svc, "attached; the first tick ran");
		service_tick(&d.svc, now_ns());
	}
	service_stopping();
out:
	if (d.tun_fd >= 0)
		close(d.tun_fd);
	redirects_watch_stop(&d.redir_w);
	metrics_close(&d.metrics);
	signals_close(&d.sig);
	recall_close(&d.recall);
	probe_xdptx_close(&d.txp);
	if (!o->latency_socket_set && d.l.ns_tag[0]) {
		char dir[sizeof(o->latency_socket)];

		snprintf(dir, sizeof(dir), "/run/shedd/%s", d.l.ns_tag);
		rmdir(dir); /* only if empty: the folder of the default socket */
	}
	/* Fail static: only a stop asked for (SIGINT/SIGTERM without
	 * --keep-on-exit) detaches. An error leaves the program shedding at
	 * its last rates for a supervisor to restart and adopt. */
	loader_close(&d.l, o->keep_on_exit || err);
	if (err && (d.l.attached || d.l.adopted))
		log_err("exiting on error; the program stays attached to %s and "
			"keeps shedding at its last rates (a restarted shedd adopts it; "
			"remove it with: shedd --iface %s --remove)", o->iface, o->iface);
	else if (o->keep_on_exit && !err)
		log_notice("exiting; the program stays attached to %s "
			   "(remove it with: shedd --iface %s --remove)", o->iface, o->iface);
	free(d.prev);
	free(d.cur);
	free(d.ts.demand);
	free(d.ts.instant);
	free(d.syn);
	if (!err)
		return SHEDD_EXIT_OK;
	return started ? SHEDD_EXIT_FAILURE : SHEDD_EXIT_ENV;
}

/* A reload reads the config file as the user the daemon becomes once
 * attached (--user, or the user shedd if there is one): can that user
 * read it? Asked of the kernel by a child that becomes that user, as the
 * daemon does (setresgid, no supplementary groups, setresuid). 0 yes (or
 * nothing to ask: no file, root, or no right to change users here), else
 * the errno of its open(). */
static int config_readable_by_run_user(struct shedd_options *o)
{
	char why[256];
	int status;
	pid_t pid;

	if (!o->config[0] || geteuid() != 0)
		return 0;
	if (!o->user_set && parse_user("shedd", &o->run_uid, &o->run_gid, o->user_name,
				       sizeof(o->user_name), why, sizeof(why)))
		return 0; /* no user shedd: the daemon stays root */
	if (!o->run_uid)
		return 0;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		int fd;

		if (setgroups(0, NULL) || setresgid(o->run_gid, o->run_gid, o->run_gid) ||
		    setresuid(o->run_uid, o->run_uid, o->run_uid))
			_exit(0); /* cannot change users here: not asked */
		fd = open(o->config, O_RDONLY | O_CLOEXEC);
		_exit(fd < 0 ? (errno & 0x7f ? errno & 0x7f : EIO) : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return 0;
	return WEXITSTATUS(status);
}

/* --check-config found nothing wrong: say so, with what a start would
 * run, on stdout. */
static void check_config_say(const struct shedd_options *o)
{
	int i, n4 = 0, n6 = 0;
	char ports[32];

	for (i = 0; i < o->nr_prefixes; i++) {
		if (o->prefixes[i].family == AF_INET)
			n4++;
		else
			n6++;
	}
	snprintf(ports, sizeof(ports), "%d port(s)", o->nr_ports);
	printf("shedd: %s%sthe configuration is good: iface %s, %s, %s %llu SYN/s, %d IPv4 and "
	       "%d IPv6 prefix(es)\n",
	       o->config[0] ? o->config : "", o->config[0] ? ": " : "", o->iface,
	       o->nr_ports ? ports : "every port",
	       o->controller == CONTROLLER_AIMD ? "aimd from" : "fixed at",
	       /* Without --rate the controller starts open at --max-rate
		* (unless it adopts a running program's rate). */
	       (unsigned long long)(o->controller == CONTROLLER_AIMD && !o->rate_set ?
				    o->max_rate : o->rate_per_sec), n4, n6);
}

int main(int argc, char **argv)
{
	struct shedd_options o;
	char out[16384], err_msg[512];
	struct sigaction sa;
	int ret;

	log_init();
	/* A reader of stderr that goes away (shedd 2>&1 | head -1, a log
	 * collector restarted) must not kill the daemon mid-start or while
	 * it sheds: a line nobody can read is lost (log.c ignores the
	 * EPIPE), the daemon carries on. Set first, before any line. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	ret = options_parse(argc, argv, &o, out, sizeof(out), err_msg, sizeof(err_msg));
	if (ret == OPTIONS_EXIT) {
		fputs(out, stdout);
		options_free(&o);
		return SHEDD_EXIT_OK;
	}
	if (ret == OPTIONS_ERROR) {
		log_err("%s", err_msg);
		options_free(&o);
		return SHEDD_EXIT_USAGE;
	}
	if (o.check_config && o.remove) {
		log_err("--check-config and --remove: one or the other");
		options_free(&o);
		return SHEDD_EXIT_USAGE;
	}
	if (!o.remove && metrics_parse_addr(o.metrics_addr, &(struct sockaddr_storage){ 0 },
					    &(socklen_t){ 0 }, err_msg, sizeof(err_msg)) < 0) {
		log_err("%s", err_msg);
		options_free(&o);
		return SHEDD_EXIT_USAGE;
	}
	/* Every check a start makes before it touches the kernel has been
	 * made: options_parse() (the file, the values, the prefixes and
	 * their limits, the classes' options, the users and groups named)
	 * and the metrics address. Nothing is loaded, attached, locked or
	 * bound. */
	if (o.check_config) {
		int e = config_readable_by_run_user(&o);

		if (e) {
			log_err("%s: the daemon reads it at a reload as user %s, who cannot: %s; "
				"every reload would be refused (make it readable by %s: mode "
				"0644, or 0640 in its group)", o.config, o.user_name, strerror(e),
				o.user_name);
			options_free(&o);
			return SHEDD_EXIT_USAGE;
		}
		check_config_say(&o);
		options_free(&o);
		return SHEDD_EXIT_OK;
	}
	verbosity = o.verbose;
	libbpf_set_print(libbpf_print);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_hup;
	sigaction(SIGHUP, &sa, NULL);
	reload_save_argv(argc, argv);

	/* --remove fails only where it cannot act: the environment. */
	if (o.remove)
		ret = detach_remove(&o) ? SHEDD_EXIT_ENV : SHEDD_EXIT_OK;
	else
		ret = run(&o);
	options_free(&o);
	return ret;
}
