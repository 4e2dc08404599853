// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* metrics.c - the pure half of the metrics: the daemon's counters, the
 * kernel histogram mapped onto Prometheus bounds, the text exposition, and
 * the --metrics-addr parser. No I/O but the FILE it is given; the HTTP
 * thread and the pins are in metrics_http.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "aimd.h"
#include "histogram.h"
#include "logline.h"
#include "metrics.h"
#include "options.h"

#define METRICS_STR_(x) #x
#define METRICS_STR(x) METRICS_STR_(x)

_Static_assert(LOGLINE_NR_REJECTS <= SHEDD_LATENCY_REFUSALS, "refusals fit the pinned counters");

/* From 100 us (a calm accept queue) to a minute (a client's patience is
 * long gone): the decades of 1, 2.5 and 5 that dashboards expect. */
const __u64 metrics_hist_bounds_ns[SHEDD_HIST_BOUNDS] = {
	100000ULL, 250000ULL, 500000ULL,
	1000000ULL, 2500000ULL, 5000000ULL,
	10000000ULL, 25000000ULL, 50000000ULL,
	100000000ULL, 250000000ULL, 500000000ULL,
	1000000000ULL, 2500000000ULL, 5000000000ULL,
	10000000000ULL, 30000000000ULL, 60000000000ULL,
};

/* Bit i of enum aimd_reason, as the label says it. */
static const char *const overload_reasons[SHEDD_OVERLOAD_REASONS] = {
	"sojourn", "depth", "overflow", "latency", "stall",
};

int metrics_hist_slot(__u32 idx)
{
	int b;

	/* The last kernel bucket also holds everything beyond it. */
	if (idx >= HIST_BUCKETS - 1)
		return SHEDD_HIST_BOUNDS;
	/* A bucket holds [lower(idx), lower(idx + 1)): it counts under the
	 * first bound none of its samples can pass, so a bucket is never
	 * counted below a value it holds (a bucket that straddles a bound
	 * counts at the next one: at most one bucket width, 12.5 %, late). */
	for (b = 0; b < SHEDD_HIST_BOUNDS; b++)
		if (hist_lower_ns(idx + 1) <= metrics_hist_bounds_ns[b])
			return b;
	return SHEDD_HIST_BOUNDS;
}

void metrics_hist_add(struct shedd_daemon_hist *h, const struct sample_agg *a)
{
	__u32 i;

	/* The count is the buckets' sum, so the +Inf bucket and _count agree
	 * whatever the aggregate's own count says. */
	for (i = 0; i < HIST_BUCKETS; i++) {
		if (!a->hist[i])
			continue;
		h->bucket[metrics_hist_slot(i)] += a->hist[i];
		h->count += a->hist[i];
	}
	h->sum_ns += a->sum_ns;
}

void metrics_count(struct shedd_daemon_stats *d, const struct signal_report *r, bool aimd,
		   unsigned int why)
{
	int i;

	d->version = SHEDD_DAEMON_STATS_VERSION;
	d->ticks++;
	if (aimd && why) {
		d->overload_ticks++;
		for (i = 0; i < SHEDD_OVERLOAD_REASONS; i++)
			if (why & (1U << i))
				d->overload[i]++;
	}
	if (r->have_netstat) {
		d->listen_overflows += r->overflows;
		d->listen_drops += r->drops;
	}
	if (r->have_listen_drops)
		d->listener_drops += r->listen_drops;
	if (r->have_sojourn) {
		metrics_hist_add(&d->sojourn, &r->sojourn);
		metrics_hist_add(&d->backend_sojourn, &r->backend_sojourn);
	}
	if (r->have_latency) {
		metrics_hist_add(&d->latency, &r->latency);
		d->latency_served += r->latency_served;
		d->latency_unserved += r->latency.count >= r->latency_served ?
					       r->latency.count - r->latency_served : 0;
		d->latency_lost += r->latency_lost;
		for (i = 1; i < LOGLINE_NR_REJECTS; i++)
			d->latency_refused[i] += r->latency_why[i];
	}
}

/* --- the exposition ------------------------------------------------------ */

struct out {
	FILE *f;
	const struct metrics_snapshot *s;
	char iface[4 * IF_NAMESIZE]; /* escaped */
};

/* A label value as the format wants it: backslash, quote and newline
 * escaped. An interface name may hold the first two. */
static void escape(char *dst, size_t len, const char *src)
{
	size_t o = 0;

	for (; *src && o + 3 < len; src++) {
		if (*src == '\\' || *src == '"') {
			dst[o++] = '\\';
			dst[o++] = *src;
		} else if (*src == '\n') {
			dst[o++] = '\\';
			dst[o++] = 'n';
		} else {
			dst[o++] = *src;
		}
	}
	dst[o] = '\0';
}

static void family(struct out *o, const char *name, const char *type, const char *help)
{
	fprintf(o->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One sample: NAME{iface="..."[,EXTRA]} VALUE. @extra is a label list
 * without braces ("class=\"critical\"") or "". */
static void sample_u64(struct out *o, const char *name, const char *extra, __u64 v)
{
	fprintf(o->f, "%s{iface=\"%s\"%s%s} %llu\n", name, o->iface, *extra ? "," : "", extra,
		(unsigned long long)v);
}

static void sample_f(struct out *o, const char *name, const char *extra, double v)
{
	char num[32];

	/* The shortest of 15 or 17 digits that reads back as the same double:
	 * 0.041819225, not 0.041819225000000002. */
	snprintf(num, sizeof(num), "%.15g", v);
	if (strtod(num, NULL) != v)
		snprintf(num, sizeof(num), "%.17g", v);
	fprintf(o->f, "%s{iface=\"%s\"%s%s} %s\n", name, o->iface, *extra ? "," : "", extra, num);
}

static void counter1(struct out *o, const char *name, const char *help, __u64 v)
{
	family(o, name, "counter", help);
	sample_u64(o, name, "", v);
}

static void gauge1(struct out *o, const char *name, const char *help, double v)
{
	family(o, name, "gauge", help);
	sample_f(o, name, "", v);
}

/* A bound as a label value: the shortest exact decimal of seconds. */
static void bound_label(char *buf, size_t len, __u64 ns)
{
	snprintf(buf, len, "%.10g", (double)ns / 1e9);
}

static void histogram(struct out *o, const char *name, const char *extra,
		      const struct shedd_daemon_hist *h)
{
	char lbl[128], le[32], sub[160];
	__u64 cum = 0;
	int b;

	for (b = 0; b <= SHEDD_HIST_BOUNDS; b++) {
		cum += h->bucket[b];
		if (b < SHEDD_HIST_BOUNDS)
			bound_label(le, sizeof(le), metrics_hist_bounds_ns[b]);
		else
			snprintf(le, sizeof(le), "+Inf");
		snprintf(lbl, sizeof(lbl), "%s%sle=\"%s\"", extra, *extra ? "," : "", le);
		snprintf(sub, sizeof(sub), "%s_bucket", name);
		sample_u64(o, sub, lbl, cum);
	}
	snprintf(sub, sizeof(sub), "%s_sum", name);
	sample_f(o, sub, extra, (double)h->sum_ns / 1e9);
	snprintf(sub, sizeof(sub), "%s_count", name);
	sample_u64(o, sub, extra, cum);
}

/* Per-class counters of the XDP program: FIELD of struct
 * shedd_class_stats, with LABEL="VALUE" beside the class. */
#define CLASS_FIELD(st, c, field) ((st)->cls[c].field)

static void xdp_families(struct out *o)
{
	const struct shedd_stats *st = &o->s->stats;
	char lbl[128];
	int c, i;
	static const struct {
		const char *verdict;
		size_t off;
	} syn_verdicts[] = {
		{ "admitted", offsetof(struct shedd_class_stats, admitted) },
		{ "dropped", offsetof(struct shedd_class_stats, dropped) },
		{ "rst", offsetof(struct shedd_class_stats, rst_sent) },
		{ "cookie", offsetof(struct shedd_class_stats, cookie_sent) },
	}, ack_verdicts[] = {
		{ "admitted", offsetof(struct shedd_class_stats, ack_admitted) },
		{ "refused", offsetof(struct shedd_class_stats, ack_refused) },
		{ "invalid", offsetof(struct shedd_class_stats, ack_invalid) },
	};
	static const struct {
		const char *kind;
		size_t off;
	} kinds[] = {
		{ "non_syn", offsetof(struct shedd_stats, non_syn) },
		{ "unprotected", offsetof(struct shedd_stats, unprotected) },
		{ "non_ip", offsetof(struct shedd_stats, non_ip) },
		{ "non_tcp", offsetof(struct shedd_stats, non_tcp) },
		{ "fragment", offsetof(struct shedd_stats, fragment) },
		{ "malformed", offsetof(struct shedd_stats, malformed) },
		{ "bad_syn", offsetof(struct shedd_stats, bad_syn) },
		{ "frag_judged", offsetof(struct shedd_stats, frag_judged) },
		{ "frag_refused", offsetof(struct shedd_stats, frag_refused) },
		{ "deep_refused", offsetof(struct shedd_stats, deep_refused) },
		{ "syn_martian", offsetof(struct shedd_stats, syn_martian) },
		{ "syn_bad_csum", offsetof(struct shedd_stats, syn_bad_csum) },
	}, events[] = {
		{ "rst_refused", offsetof(struct shedd_stats, rst_refused) },
		{ "rst_limited", offsetof(struct shedd_stats, rst_limited) },
		{ "cookie_failed", offsetof(struct shedd_stats, cookie_failed) },
		{ "ack_probed", offsetof(struct shedd_stats, ack_probed) },
		{ "listener_refreshed", offsetof(struct shedd_stats, refreshed) },
		{ "ack_queue_full", offsetof(struct shedd_stats, ack_queue_full) },
		{ "ack_after_rst", offsetof(struct shedd_stats, ack_after_rst) },
		{ "ack_repeat", offsetof(struct shedd_stats, ack_repeat) },
		{ "syn_tuple_busy", offsetof(struct shedd_stats, syn_tuple_busy) },
		{ "syn_no_listener", offsetof(struct shedd_stats, syn_no_listener) },
		{ "syn_not_local", offsetof(struct shedd_stats, syn_not_local) },
		{ "ack_to_kernel", offsetof(struct shedd_stats, ack_to_kernel) },
		{ "src_failed", offsetof(struct shedd_stats, src_failed) },
		{ "src_unchecked", offsetof(struct shedd_stats, src_unchecked) },
	};
#define U64_AT(base, off) (*(const __u64 *)((const char *)(base) + (off)))

	counter1(o, "shedd_xdp_packets_total", "Packets the XDP program saw on the interface.",
		 st->packets);
	family(o, "shedd_packets_total", "counter",
	       "Packets the XDP program passed or refused without judging them as a SYN, by kind.");
	for (i = 0; i < (int)(sizeof(kinds) / sizeof(kinds[0])); i++) {
		snprintf(lbl, sizeof(lbl), "kind=\"%s\"", kinds[i].kind);
		sample_u64(o, "shedd_packets_total", lbl, U64_AT(st, kinds[i].off));
	}
	/* Tunnels that end here (the tun_stats map). */
	sample_u64(o, "shedd_packets_total", "kind=\"tun_decap\"", o->s->tun.decap);
	sample_u64(o, "shedd_packets_total", "kind=\"tun_judged\"", o->s->tun.judged);
	sample_u64(o, "shedd_packets_total", "kind=\"tun_refused\"", o->s->tun.refused);
	sample_u64(o, "shedd_packets_total", "kind=\"tun_no_device\"", o->s->tun_checks.no_device);
	sample_u64(o, "shedd_packets_total", "kind=\"tun_acks\"", o->s->tun_checks.acks);
	family(o, "shedd_syn_packets_total", "counter",
	       "Protected SYNs judged by XDP, by class and verdict (admitted, dropped, "
	       "rst: refused with a RST, cookie: answered with a SYN cookie).");
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		for (i = 0; i < (int)(sizeof(syn_verdicts) / sizeof(syn_verdicts[0])); i++) {
			snprintf(lbl, sizeof(lbl), "class=\"%s\",verdict=\"%s\"",
				 class_name((__u32)c), syn_verdicts[i].verdict);
			sample_u64(o, "shedd_syn_packets_total", lbl,
				   U64_AT(&st->cls[c], syn_verdicts[i].off));
		}
	family(o, "shedd_cookie_acks_total", "counter",
	       "ACKs to a listener of a verified class, by class and verdict (admitted: "
	       "proven and within the bucket, refused: proven, no token, invalid: no "
	       "valid cookie).");
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		for (i = 0; i < (int)(sizeof(ack_verdicts) / sizeof(ack_verdicts[0])); i++) {
			snprintf(lbl, sizeof(lbl), "class=\"%s\",verdict=\"%s\"",
				 class_name((__u32)c), ack_verdicts[i].verdict);
			sample_u64(o, "shedd_cookie_acks_total", lbl,
				   U64_AT(&st->cls[c], ack_verdicts[i].off));
		}
	family(o, "shedd_token_requests_total", "counter",
	       "Token requests by class (SYNs charged directly and proven ACKs): the "
	       "demand the controller sees.");
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		snprintf(lbl, sizeof(lbl), "class=\"%s\"", class_name((__u32)c));
		sample_u64(o, "shedd_token_requests_total", lbl, CLASS_FIELD(st, c, charged));
	}
	family(o, "shedd_syn_cookie_limited_total", "counter",
	       "SYNs of a verified class over the cookie budget, shed as unverified (also "
	       "counted as dropped or rst).");
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		snprintf(lbl, sizeof(lbl), "class=\"%s\"", class_name((__u32)c));
		sample_u64(o, "shedd_syn_cookie_limited_total", lbl,
			   CLASS_FIELD(st, c, cookie_limited));
	}
	gauge1(o, "shedd_xdp_tx_blocked",
	       "1 while the frames XDP_TX sends go nowhere (a veth peer without XDP or GRO): "
	       "cookies and RSTs are off, verified classes judged unverified, RSTs dropped.",
	       o->s->tx_blocked);
	family(o, "shedd_signed_listener_ports", "gauge",
	       "Protected ports with a listener a SYN cookie cannot answer, by kind (md5: "
	       "TCP-MD5 keys, its signed SYNs; mptcp: an MPTCP listener, every SYN): the "
	       "kernel answers them, charged as in an unverified class.");
	sample_u64(o, "shedd_signed_listener_ports", "kind=\"md5\"", o->s->signed_md5_ports);
	sample_u64(o, "shedd_signed_listener_ports", "kind=\"mptcp\"", o->s->signed_mptcp_ports);
	family(o, "shedd_unjudged_tunnel_devices", "gauge",
	       "Devices up that decapsulate or decrypt what the XDP program does not open, by "
	       "kind (bareudp, erspan, ip6erspan, l2tpeth, wireguard, xfrm, vti, vti6, "
	       "vxlan_gpe; mpls: devices that take MPLS frames): SYNs inside them reach the "
	       "stack unjudged.");
	for (i = 0; i < TUN_UJ_NR; i++) {
		snprintf(lbl, sizeof(lbl), "kind=\"%s\"", tun_unjudged_name((unsigned int)i));
		sample_u64(o, "shedd_unjudged_tunnel_devices", lbl, o->s->unjudged_tun[i]);
	}
	family(o, "shedd_xdp_events_total", "counter",
	       "Other events of the XDP program, by event (RSTs not sent, cookies not "
	       "built, ACKs looked up, ...).");
	for (i = 0; i < (int)(sizeof(events) / sizeof(events[0])); i++) {
		snprintf(lbl, sizeof(lbl), "event=\"%s\"", events[i].kind);
		sample_u64(o, "shedd_xdp_events_total", lbl, U64_AT(st, events[i].off));
	}
	/* The syn_checks map. */
	sample_u64(o, "shedd_xdp_events_total", "event=\"syn_signed\"",
		   o->s->syn_checks.syn_signed);
#undef U64_AT
}

static void controller_families(struct out *o)
{
	const struct metrics_snapshot *s = o->s;
	static const char *const modes[] = { "steady", "overload", "recovering", "fixed" };
	/* By enum signals_completion. */
	static const char *const sources[] = { "none", "probes", "passive_opens" };
	char lbl[128];
	int c, i, mode = s->aimd ? s->mode : 3;

	gauge1(o, "shedd_admit_limit_syn_per_second",
	       "The total admitted SYN rate being allocated (the controller's limit, or --rate).",
	       s->limit);
	gauge1(o, "shedd_rate_pinned",
	       "1 while an operator pins the total admitted SYN rate (shedctl rate pin): the "
	       "limit is the pinned rate, not the controller's.",
	       s->pinned_rate > 0);
	gauge1(o, "shedd_rate_pinned_syn_per_second",
	       "The total admitted SYN rate an operator pinned with shedctl rate pin; 0 while "
	       "none is pinned.",
	       s->pinned_rate);
	gauge1(o, "shedd_lease_seconds",
	       "The lease on the rates (--lease): a daemon silent this long lets the program "
	       "climb to the fail-static rate; 0: no lease, fail static.",
	       s->lease_s);
	gauge1(o, "shedd_lease_fail_static_syn_per_second",
	       "The total SYN rate the program climbs to once the lease runs out "
	       "(--fail-static-rate, or --rate).",
	       s->fail_static_rate);
	gauge1(o, "shedd_lease_heartbeat_age_seconds",
	       "How old the heartbeat was when the daemon last stamped it: about a tick, "
	       "longer after a stall, or at start the time since the last daemon's.",
	       s->heartbeat_gap_s);
	counter1(o, "shedd_lease_expiries_total",
		 "Heartbeats found older than the lease since the daemon started (at the "
		 "adoption of a program left alone too long, or after a stall): the program "
		 "had been climbing to the fail-static rate.",
		 s->lease_expiries);
	family(o, "shedd_class_rate_syn_per_second", "gauge",
	       "The admitted SYN rate published for each class.");
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		snprintf(lbl, sizeof(lbl), "class=\"%s\"", class_name((__u32)c));
		sample_f(o, "shedd_class_rate_syn_per_second", lbl, s->class_rate[c]);
	}
	family(o, "shedd_class_demand_syn_per_second", "gauge",
	       "Token requests per second of each class, smoothed, as the allocator sees them.");
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		snprintf(lbl, sizeof(lbl), "class=\"%s\"", class_name((__u32)c));
		sample_f(o, "shedd_class_demand_syn_per_second", lbl, s->class_demand[c]);
	}
	family(o, "shedd_controller_mode", "gauge",
	       "1 for the controller's current mode (fixed: --rate, no controller), 0 for the others.");
	for (i = 0; i < 4; i++) {
		snprintf(lbl, sizeof(lbl), "mode=\"%s\"", modes[i]);
		sample_u64(o, "shedd_controller_mode", lbl, i == mode);
	}
	gauge1(o, "shedd_ramp_stage",
	       "The recovery ramp stage being held (1 = the first), 0 when not recovering.",
	       s->aimd && s->mode == AIMD_RECOVERING ? s->stage + 1 : 0);
	gauge1(o, "shedd_controller_last_good_syn_per_second",
	       "The limit before the last overload episode: what the ramp climbs back to.",
	       s->aimd ? s->last_good : 0);
	gauge1(o, "shedd_controller_peak_accept_per_second",
	       "The recent peak rate of connections the service accepted.",
	       s->aimd ? s->peak_accept : 0);
	gauge1(o, "shedd_controller_served_per_second",
	       "Requests the service answered per second over the last second (latency samples, "
	       "over the share of connections the feed covers).",
	       s->aimd ? s->served_rate : 0);
	gauge1(o, "shedd_latency_baseline_seconds",
	       "The calm latency the derived latency target is learned from (0: none yet).",
	       s->aimd ? (double)s->latency_baseline_ns / 1e9 : 0);
	gauge1(o, "shedd_latency_spread",
	       "The spread of the service's calm latency, 1 + cs^2 held within [1, 2]: the wait "
	       "the derived latency target allows is scaled by it (0: no baseline yet).",
	       s->aimd ? s->latency_spread : 0);
	gauge1(o, "shedd_latency_feed_coverage",
	       "The share of connections the latency feed covers: requests answered per "
	       "handshake completed while calm (1: all; 0: not known yet).",
	       s->aimd ? s->feed_cover : 0);
	gauge1(o, "shedd_requests_per_connection",
	       "Requests per connection the controller divides the served rate by: from the "
	       "log's session shape (cr=), else from calm ticks, else 1 (see "
	       "shedd_requests_per_connection_known).",
	       s->aimd && s->rpc >= 1 ? s->rpc : 1);
	gauge1(o, "shedd_requests_per_connection_known",
	       "Where the requests per connection come from: 1 the log's session shape (cr=), "
	       "2 calm ticks, 0 not known (taken as 1).",
	       s->aimd ? (double)s->rpc_src : 0);
	gauge1(o, "shedd_requests_on_open_connections_ratio",
	       "The share of the service's requests that come on connections already open "
	       "(1 - 1 / requests per connection): load the SYN door cannot refuse, only the "
	       "connection limit can hold.",
	       s->aimd && s->rpc > 1 ? 1 - 1 / s->rpc : 0);
	counter1(o, "shedd_calm_probes_total",
		 "Calm probes run since start: the limit held at half the served rate (a fifth "
		 "of that until the queue from before the probe is gone) until the latency "
		 "stopped falling, to learn the calm latency.", s->calm_probes);
	gauge1(o, "shedd_calm_probe_running", "1 while a calm probe holds the limit.",
	       s->aimd && s->probing ? 1 : 0);
	gauge1(o, "shedd_max_rate_binding",
	       "1 while the limit binds at --max-rate and the SYNs it admits complete (a tick "
	       "of the last second found it): a service healthy by every signal is shed by the "
	       "ceiling alone.",
	       s->aimd && s->at_max ? 1 : 0);
	counter1(o, "shedd_max_rate_bound_ticks_total",
		 "Control ticks the limit bound at --max-rate while the SYNs it admitted "
		 "completed, since this daemon started.", s->at_max_ticks);
	family(o, "shedd_controller_overload_total", "counter",
	       "Control ticks judged overloaded, by reason (a tick may have several).");
	for (i = 0; i < SHEDD_OVERLOAD_REASONS; i++) {
		snprintf(lbl, sizeof(lbl), "reason=\"%s\"", overload_reasons[i]);
		sample_u64(o, "shedd_controller_overload_total", lbl, s->d.overload[i]);
	}
	counter1(o, "shedd_controller_overloaded_ticks_total",
		 "Control ticks judged overloaded, for any reason.", s->d.overload_ticks);
	family(o, "shedd_completion_source", "gauge",
	       "1 for where completed handshakes are measured (probes: the sojourn probes; "
	       "passive_opens: the namespace's TcpPassiveOpens, estimated; none: the "
	       "controller cannot raise the limit and runs at a fixed rate), 0 for the others.");
	for (i = 0; i < 3; i++) {
		snprintf(lbl, sizeof(lbl), "source=\"%s\"", sources[i]);
		sample_u64(o, "shedd_completion_source", lbl, i == s->completion);
	}
	counter1(o, "shedd_ticks_total", "Control ticks run.", s->d.ticks);
	counter1(o, "shedd_ticks_skipped_total",
		 "Control ticks skipped after a stall of the daemon.", s->d.ticks_skipped);
	counter1(o, "shedd_layout_migrations_total",
		 "Upgrades that carried the pins into maps of a newer layout.",
		 s->d.layout_migrations);
	family(o, "shedd_config_reloads_total", "counter",
	       "Reloads of the config file (SIGHUP) since the daemon started: ok (applied, "
	       "or unchanged), refused (the running configuration stays).");
	sample_u64(o, "shedd_config_reloads_total", "result=\"ok\"", s->reloads_ok);
	sample_u64(o, "shedd_config_reloads_total", "result=\"refused\"", s->reloads_refused);
	gauge1(o, "shedd_config_last_reload_successful",
	       "0 if the last reload of the config file was refused (the running "
	       "configuration stays), else 1 (also before any reload).",
	       s->reload_refused ? 0 : 1);
}

void metrics_reload(struct metrics_snapshot *s, bool ok)
{
	if (ok)
		s->reloads_ok++;
	else
		s->reloads_refused++;
	s->reload_refused = !ok;
}

static void signal_families(struct out *o)
{
	const struct metrics_snapshot *s = o->s;
	char lbl[128];
	int i;

	family(o, "shedd_accept_queue_sojourn_seconds", "histogram",
	       "Time accepted connections waited in the accept queue, by listener group "
	       "(protected: --port, backend: --backend-port).");
	histogram(o, "shedd_accept_queue_sojourn_seconds", "listener=\"protected\"", &s->d.sojourn);
	if (s->backend)
		histogram(o, "shedd_accept_queue_sojourn_seconds", "listener=\"backend\"",
			  &s->d.backend_sojourn);
	if (s->have_depth) {
		gauge1(o, "shedd_accept_queue_length",
		       "Connections waiting in the accept queue of the listener group nearest "
		       "its backlog.", (double)s->depth);
		gauge1(o, "shedd_accept_queue_backlog",
		       "The backlog of that accept queue.", (double)s->backlog);
	}
	counter1(o, "shedd_listen_overflows_total",
		 "TcpExtListenOverflows of shedd's network namespace, as seen growing by shedd.",
		 s->d.listen_overflows);
	counter1(o, "shedd_listen_drops_total",
		 "TcpExtListenDrops of shedd's network namespace, as seen growing by shedd.",
		 s->d.listen_drops);
	counter1(o, "shedd_listener_drops_total",
		 "Drops and overflows of the protected and backend listeners themselves.",
		 s->d.listener_drops);
	gauge1(o, "shedd_listeners",
	       "Listening sockets of the protected service and the backend ports judged one "
	       "by one in the last dump.", (double)s->listeners);
	gauge1(o, "shedd_listeners_stuck",
	       "Of those, the listeners stuck on their own: a full or overflowing accept "
	       "queue while another listener of their port has room. Not an overload of "
	       "the service: the limit is not cut for them.", (double)s->stuck);
	family(o, "shedd_listener_stuck", "gauge",
	       "1 for each stuck listener, the longest stuck first, at most 8 series: its "
	       "bound address and port, its socket inode and cookie (ss -e).");
	for (i = 0; i < s->told && i < LISTENERS_TOLD; i++) {
		char name[64];

		listener_name(&s->stuck_id[i], name, sizeof(name));
		snprintf(lbl, sizeof(lbl), "listener=\"%s\",inode=\"%llu\",cookie=\"%llu\"",
			 name, (unsigned long long)s->stuck_id[i].ino,
			 (unsigned long long)s->stuck_id[i].cookie);
		sample_u64(o, "shedd_listener_stuck", lbl, 1);
	}
	counter1(o, "shedd_listener_stuck_overflows_total",
		 "Overflows of stuck listeners since this daemon started: SYNs and handshakes "
		 "the kernel hashed to them and dropped, left out of the overload signal.",
		 s->stuck_overflows);
	gauge1(o, "shedd_ports_own_trouble",
	       "Protected ports every listener of which is in trouble (a full or "
	       "overflowing accept queue) while a listener of another protected port has room "
	       "and that port accepts: their trouble is their own, left out of the overload "
	       "signals; in the last dump.", (double)s->ports_own);
	counter1(o, "shedd_port_own_overflows_total",
		 "Overflows of the listeners of ports in trouble of their own since this daemon "
		 "started, left out of the overload signal.", s->port_overflows);
	family(o, "shedd_port_limit_rate", "gauge",
	       "The limit of its own (SYN/s) of each port in trouble of its own, judged by the "
	       "XDP program before the SYN's class; at most 16 series, one per limited port.");
	for (i = 0; i < s->nr_port_limits && i < MAX_PORT_LIMITS; i++) {
		snprintf(lbl, sizeof(lbl), "port=\"%u\"", s->limit_port[i]);
		sample_f(o, "shedd_port_limit_rate", lbl, s->limit_rate[i]);
	}
	counter1(o, "shedd_port_limit_syn_total",
		 "SYNs to a port with a limit of its own judged by that limit, every port.",
		 s->port_limit_syn);
	counter1(o, "shedd_port_limit_shed_total",
		 "Of those, SYNs shed by their port's limit (also counted as dropped or "
		 "rst_sent in their class, not as its demand).", s->port_limit_shed);
	family(o, "shedd_service_latency_seconds", "histogram",
	       "Request latency samples received on the latency socket.");
	histogram(o, "shedd_service_latency_seconds", "", &s->d.latency);
	family(o, "shedd_latency_samples_total", "counter",
	       "Latency samples by result (served: answered, unserved: 499, 5xx, no "
	       "response, or 400/408 without an upstream, refused: datagram refused, "
	       "lost: the sender could not send it).");
	{
		__u64 refused = 0;

		for (i = 1; i < LOGLINE_NR_REJECTS; i++)
			refused += s->d.latency_refused[i];
		sample_u64(o, "shedd_latency_samples_total", "result=\"served\"",
			   s->d.latency_served);
		sample_u64(o, "shedd_latency_samples_total", "result=\"unserved\"",
			   s->d.latency_unserved);
		sample_u64(o, "shedd_latency_samples_total", "result=\"refused\"", refused);
		sample_u64(o, "shedd_latency_samples_total", "result=\"lost\"", s->d.latency_lost);
	}
	family(o, "shedd_latency_datagrams_refused_total", "counter",
	       "Datagrams on the latency socket refused, by reason.");
	for (i = 1; i < LOGLINE_NR_REJECTS; i++) {
		snprintf(lbl, sizeof(lbl), "reason=\"%s\"",
			 logline_reject_name((enum logline_reject)i));
		sample_u64(o, "shedd_latency_datagrams_refused_total", lbl, s->d.latency_refused[i]);
	}
}

/* Live connections to protected ports, by the class of their peer: only
 * when the probes count them. */
static void conn_families(struct out *o)
{
	const struct metrics_snapshot *s = o->s;
	char lbl[64];
	__u32 c;

	family(o, "shedd_connections_recalled_total", "counter",
	       "Idle keep-alive connections ended by --recall (a RST) so that their clients "
	       "come back through the door, by class, since this daemon started.");
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		snprintf(lbl, sizeof(lbl), "class=\"%s\"", class_name(c));
		sample_u64(o, "shedd_connections_recalled_total", lbl, s->recalled[c]);
	}
	counter1(o, "shedd_connections_recall_failures_total",
		 "Connections --recall chose and the kernel refused to end (the first refusal "
		 "is logged; one that says the kernel cannot turns --recall off).",
		 s->recall_failed);
	if (!s->have_conns)
		return;
	family(o, "shedd_connections_live", "gauge",
	       "Connections to protected ports open now, by the class of their peer (those "
	       "no prefix names in the default class), of those opened since this daemon "
	       "started.");
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		__u64 open = s->conns[c].opened, closed = s->conns[c].closed;

		snprintf(lbl, sizeof(lbl), "class=\"%s\"", class_name(c));
		sample_u64(o, "shedd_connections_live", lbl, open > closed ? open - closed : 0);
	}
	gauge1(o, "shedd_connections_limit_in_force",
	       "1 while the connection limit (--conn-limit) holds the live connections, after "
	       "an overload the latency showed on connections of several requests; else 0.",
	       s->have_conn_limit ? 1 : 0);
	family(o, "shedd_connections_limit", "gauge",
	       "The live connections each class may hold while the connection limit is in "
	       "force (0 while it is not: see shedd_connections_limit_in_force).");
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		snprintf(lbl, sizeof(lbl), "class=\"%s\"", class_name(c));
		sample_u64(o, "shedd_connections_limit", lbl,
			   s->have_conn_limit && s->conn_limit[c] > 0 ?
				   (__u64)(s->conn_limit[c] + 0.5) : 0);
	}
}

/* Per-source fairness: only when the program has its maps. Bounded: per
 * class 2 counters, 1 + 3 + 3 gauges, and at most METRICS_FAIR_TOP heavy
 * hitters (20 series for the four classes). */
_Static_assert(METRICS_FAIR_TOP <= FAIR_TOP_MAX, "the view holds the exported hitters");
static void fair_families(struct out *o)
{
	const struct fair_view *v = &o->s->fair;
	char lbl[192], src[64];
	__u32 c, l;
	int i;

	if (!v->have)
		return;
	family(o, "shedd_fair_shed_total", "counter",
	       "SYNs shed for per-source fairness (a source over its share while its class "
	       "sheds), by class; also counted as dropped or rst.");
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		snprintf(lbl, sizeof(lbl), "class=\"%s\"", class_name(c));
		sample_u64(o, "shedd_fair_shed_total", lbl, v->cls[c].stats.shed);
	}
	family(o, "shedd_fair_counted_total", "counter",
	       "Admissions counted into the per-source sketch, by class.");
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		snprintf(lbl, sizeof(lbl), "class=\"%s\"", class_name(c));
		sample_u64(o, "shedd_fair_counted_total", lbl, v->cls[c].stats.counted);
	}
	family(o, "shedd_fair_active", "gauge",
	       "1 while a class sheds and its over-share sources are shed first, else 0.");
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		snprintf(lbl, sizeof(lbl), "class=\"%s\"", class_name(c));
		sample_u64(o, "shedd_fair_active", lbl, v->cls[c].cfg.levels && v->cls[c].cfg.active);
	}
	family(o, "shedd_fair_sources", "gauge",
	       "Sources counted in the window, by class and level (addr; 24+64: the IPv4 /24s "
	       "and IPv6 /64s; 48: the IPv6 /48s), for the levels a class counts.");
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		for (l = 0; l < FAIR_LEVELS; l++) {
			if (!fair_view_level_used(&v->cls[c].cfg, l))
				continue;
			snprintf(lbl, sizeof(lbl), "class=\"%s\",level=\"%s\"", class_name(c),
				 fair_view_level_label(l));
			sample_u64(o, "shedd_fair_sources", lbl, v->cls[c].cfg.sources[l]);
		}
	family(o, "shedd_fair_limit_per_second", "gauge",
	       "The most admissions per second a source may have while its class sheds, by "
	       "class and level.");
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		for (l = 0; l < FAIR_LEVELS; l++) {
			if (!fair_view_level_used(&v->cls[c].cfg, l) || !v->cls[c].cfg.limit[l])
				continue;
			snprintf(lbl, sizeof(lbl), "class=\"%s\",level=\"%s\"", class_name(c),
				 fair_view_level_label(l));
			sample_f(o, "shedd_fair_limit_per_second", lbl,
				 fair_view_limit_per_sec(v->cls[c].cfg.limit[l]));
		}
	family(o, "shedd_fair_heavy_hitter_rate", "gauge",
	       "Admissions per second of the heaviest sources seen over their limit lately "
	       "(at most " METRICS_STR(METRICS_FAIR_TOP) " per class), by class, level (addr, 24, 64, "
	       "48) and source.");
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		for (i = 0; i < v->cls[c].ntop && i < METRICS_FAIR_TOP; i++) {
			const struct fair_hitter *h = &v->cls[c].top[i];

			fair_hitter_source(h, src, sizeof(src));
			snprintf(lbl, sizeof(lbl), "class=\"%s\",level=\"%s\",source=\"%s\"",
				 class_name(c), fair_view_hitter_level(h), src);
			sample_f(o, "shedd_fair_heavy_hitter_rate", lbl, h->rate_per_sec);
		}
}

int metrics_format(FILE *f, const struct metrics_snapshot *s)
{
	struct out o = { .f = f, .s = s };

	escape(o.iface, sizeof(o.iface), s->iface);
	family(&o, "shedd_build_info", "gauge", "shedd's version; always 1.");
	fprintf(f, "shedd_build_info{iface=\"%s\",version=\"%s\"} 1\n", o.iface, SHEDD_VERSION);
	xdp_families(&o);
	controller_families(&o);
	signal_families(&o);
	fair_families(&o);
	conn_families(&o);
	return ferror(f) ? -1 : 0;
}

/* --- --metrics-addr ------------------------------------------------------ */

static void errf(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int metrics_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len,
		       char *err, size_t errlen)
{
	char host[64];
	const char *port, *end;
	char *num_end;
	unsigned long p;
	size_t hlen;

	memset(ss, 0, sizeof(*ss));
	*len = 0;
	if (!strcmp(s, "none"))
		return 1;
	if (s[0] == '[') {
		end = strchr(s, ']');
		if (!end || end[1] != ':') {
			errf(err, errlen, "--metrics-addr: '%s' is not [IPV6]:PORT", s);
			return -1;
		}
		hlen = (size_t)(end - s - 1);
		port = end + 2;
		if (hlen >= sizeof(host))
			goto bad_host;
		memcpy(host, s + 1, hlen);
	} else {
		end = strrchr(s, ':');
		if (!end || end == s) {
			errf(err, errlen, "--metrics-addr: '%s' is not ADDR:PORT, [IPV6]:PORT or none",
			     s);
			return -1;
		}
		hlen = (size_t)(end - s);
		port = end + 1;
		if (hlen >= sizeof(host))
			goto bad_host;
		memcpy(host, s, hlen);
	}
	host[hlen] = '\0';
	errno = 0;
	p = strtoul(port, &num_end, 10);
	if (!*port || *num_end || errno || p < 1 || p > 65535 || *port < '0' || *port > '9') {
		errf(err, errlen, "--metrics-addr: '%s' has no port in 1..65535", s);
		return -1;
	}
	if (s[0] == '[') {
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &a6->sin6_addr) != 1)
			goto bad_host;
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((__u16)p);
		*len = sizeof(*a6);
	} else {
		struct sockaddr_in *a4 = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &a4->sin_addr) != 1)
			goto bad_host;
		a4->sin_family = AF_INET;
		a4->sin_port = htons((__u16)p);
		*len = sizeof(*a4);
	}
	return 0;
bad_host:
	errf(err, errlen, "--metrics-addr: '%s': the address is not a numeric IPv4 address, or "
			  "an IPv6 one in brackets", s);
	return -1;
}
