// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* metrics_http.c - the I/O half of the metrics: the pinned daemon counters
 * and the /metrics endpoint, served by libmicrohttpd's own polling thread.
 * The tick copies a snapshot under the lock and leaves; the thread copies
 * it out under the same lock and formats it with no lock held, so neither a
 * slow scraper nor a stuck one can hold up a tick.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <microhttpd.h>

#include "fair_maps.h"
#include "loader.h"
#include "log.h"
#include "metrics.h"
#include "service.h"
#include "status.h"

#define METRICS_CONN_LIMIT 32   /* scrapers at once */
#define METRICS_CONN_TIMEOUT 10 /* seconds a silent connection is kept */

static const char index_page[] =
	"<html><head><title>shedd</title></head><body>"
	"<h1>shedd</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code, const char *type,
			     void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!resp) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *conn, const char *url,
			     const char *method, const char *version, const char *upload_data,
			     size_t *upload_data_size, void **con_cls)
{
	struct metrics *m = cls;
	struct metrics_snapshot *snap;
	char *body = NULL;
	size_t len = 0;
	FILE *f;

	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain",
			     (void *)"GET only\n", 9, MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/"))
		return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8", (void *)index_page,
			     sizeof(index_page) - 1, MHD_RESPMEM_PERSISTENT);
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain", (void *)"not found\n", 10,
			     MHD_RESPMEM_PERSISTENT);
	/* A copy under the lock, the formatting without it. */
	snap = malloc(sizeof(*snap));
	if (!snap)
		return MHD_NO;
	pthread_mutex_lock(&m->lock);
	memcpy(snap, &m->snap, sizeof(*snap));
	pthread_mutex_unlock(&m->lock);
	f = open_memstream(&body, &len);
	if (!f || metrics_format(f, snap)) {
		if (f)
			fclose(f);
		free(body);
		free(snap);
		return MHD_NO;
	}
	free(snap);
	if (fclose(f)) {
		free(body);
		return MHD_NO;
	}
	return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body, len,
		     MHD_RESPMEM_MUST_FREE);
}

/* libmicrohttpd's own complaints go to stderr with our prefix. */
static void http_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_warn("metrics: %s", buf);
}

/* Our own socket, bound and listening, so a bind failure says why: an
 * error when the address was @required, else a warning. */
static int listen_on(const struct sockaddr_storage *ss, socklen_t len, const char *addr,
		     bool required)
{
	const char *then = required ? "" : "; the default address: shedd runs without "
					   "metrics (choose one with --metrics-addr, or none)";
	int fd, one = 1;

	fd = socket(ss->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		fd = -errno;
		log_msg(required ? LOG_ERR : LOG_WARNING, "metrics: socket for %s: %s%s", addr,
			strerror(errno), then);
		return fd;
	}
	/* A restarted shedd binds again over its predecessor's TIME_WAITs. */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)ss, len) || listen(fd, 64)) {
		int err = -errno;

		log_msg(required ? LOG_ERR : LOG_WARNING, "metrics: listen on %s: %s%s", addr,
			strerror(errno), !required ? then : err == -EADDRINUSE ?
			" (another process has it: choose one with --metrics-addr, or none)" : "");
		close(fd);
		return err;
	}
	return fd;
}

int metrics_open(struct metrics *m, struct loader *l, const char *addr, bool required,
		 const char *iface, bool backend)
{
	struct sockaddr_storage ss;
	char why[256];
	socklen_t len;
	int fd, ret;

	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	snprintf(m->addr, sizeof(m->addr), "%s", addr);
	snprintf(m->next.iface, sizeof(m->next.iface), "%s", iface);
	m->next.backend = backend;
	/* An adopting shedd carries its predecessor's counters on; a record
	 * of another layout starts afresh. */
	if (!loader_read_daemon_stats(l, &m->d) && m->d.version != SHEDD_DAEMON_STATS_VERSION)
		memset(&m->d, 0, sizeof(m->d));
	m->next.d = m->d;
	m->snap = m->next;
	ret = metrics_parse_addr(addr, &ss, &len, why, sizeof(why));
	if (ret < 0) {
		log_err("%s", why);
		return -EINVAL;
	}
	if (ret == 1)
		return 0;
	fd = listen_on(&ss, len, addr, required);
	if (fd < 0)
		return required ? fd : 0;
	m->listen_fd = fd;
	m->listening = true;
	m->ipv6 = ss.ss_family == AF_INET6;
	return 0;
}

/* MHD's thread inherits the capabilities of the thread that starts it:
 * start it from a thread that first drops all of its own. */
static void *start_unprivileged(void *arg)
{
	struct metrics *m = arg;

	service_drop_thread_caps();
	m->http = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
				   (m->ipv6 ? MHD_USE_IPv6 : 0),
				   0, NULL, NULL, serve, m,
				   MHD_OPTION_EXTERNAL_LOGGER, http_log, NULL,
				   MHD_OPTION_LISTEN_SOCKET, m->listen_fd,
				   MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_CONN_LIMIT,
				   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_CONN_TIMEOUT,
				   MHD_OPTION_END);
	return NULL;
}

int metrics_start(struct metrics *m)
{
	pthread_t t;
	int err;

	if (!m->listening)
		return 0;
	err = pthread_create(&t, NULL, start_unprivileged, m);
	if (err) {
		log_err("metrics: start the HTTP server on %s: %s", m->addr, strerror(err));
		return -err;
	}
	pthread_join(t, NULL);
	if (!m->http) {
		log_err("metrics: start the HTTP server on %s failed", m->addr);
		return -EIO;
	}
	/* The HTTP server owns the socket now and closes it when it stops. */
	m->listening = false;
	log_info("metrics on http://%s/metrics", m->addr);
	return 0;
}

int metrics_tick(struct metrics *m, struct loader *l, const struct metrics_tick *t)
{
	struct metrics_snapshot *n = &m->next;
	int c, i, err = 0;

	if (t->sig) {
		metrics_count(&m->d, t->sig, t->aimd, t->why);
		if (t->skipped > m->skipped_seen)
			m->d.ticks_skipped += t->skipped - m->skipped_seen;
		m->skipped_seen = t->skipped;
		/* Not fatal: the metrics are for people, the shedding goes on.
		 * Said once, not ten times a second. */
		err = loader_write_daemon_stats(l, &m->d);
		if (err && !m->write_failed)
			log_warn("write daemon_stats: %s (the daemon's counters "
				 "will not survive a restart)", strerror(-err));
		m->write_failed = err != 0;
		if (t->sig->have_conns) {
			__u32 dc = t->default_class < SHEDD_NR_CLASSES ? t->default_class
								       : SHEDD_SHEDDABLE;

			n->have_conns = true;
			for (c = 0; c < SHEDD_NR_CLASSES; c++)
				n->conns[c] = t->sig->conns[c];
			n->conns[dc].opened += t->sig->conns[SHEDD_NR_CLASSES].opened;
			n->conns[dc].closed += t->sig->conns[SHEDD_NR_CLASSES].closed;
		}
		for (c = 0; t->recalled && c < SHEDD_NR_CLASSES; c++)
			n->recalled[c] = t->recalled[c];
		n->recall_failed = t->recall_failed;
		n->have_conn_limit = t->conn_limit != NULL;
		for (c = 0; t->conn_limit && c < SHEDD_NR_CLASSES; c++)
			n->conn_limit[c] = t->conn_limit[c];
		if (t->sig->have_depth) {
			n->have_depth = true;
			n->depth = t->sig->depth;
			n->backlog = t->sig->backlog;
		}
		if (t->sig->have_listen_drops) {
			const struct listener_verdict *v = &t->sig->listeners;

			n->listeners = v->judged;
			n->stuck = v->stuck;
			n->told = v->told;
			memcpy(n->stuck_id, v->stuck_id, sizeof(n->stuck_id));
			n->stuck_overflows += v->stuck_overflows;
			n->ports_own = v->ports_own;
			n->port_overflows += v->port_overflows;
		}
	}
	n->nr_port_limits = t->nr_port_limits < MAX_PORT_LIMITS ? t->nr_port_limits
								  : MAX_PORT_LIMITS;
	for (i = 0; i < n->nr_port_limits; i++) {
		n->limit_port[i] = t->limit_port[i];
		n->limit_rate[i] = t->limit_rate[i];
	}
	if (t->port_counts) {
		n->port_limit_syn = n->port_limit_shed = 0;
		for (i = 0; i < MAX_PORT_LIMITS; i++) {
			n->port_limit_syn += t->port_counts[i].syn;
			n->port_limit_shed += t->port_counts[i].shed;
		}
	}
	stats_sum(t->percpu, t->ncpus, &n->stats);
	/* Not fatal either: the tunnel counters keep their last values. */
	loader_read_tun_stats(l, &n->tun);
	loader_read_tun_checks(l, &n->tun_checks);
	loader_read_syn_checks(l, &n->syn_checks);
	/* Nor the fairness maps: none in a program older than them. */
	if (loader_read_fair(l, &n->fair))
		n->fair.have = false;
	n->d = m->d;
	n->limit = t->limit;
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		n->class_rate[c] = (double)t->rates[c].rate_per_sec;
		n->class_demand[c] = 0;
		for (i = 0; t->demand && i < t->ncpus; i++)
			n->class_demand[c] += t->demand[c * t->ncpus + i];
	}
	n->aimd = t->aimd;
	n->mode = t->mode;
	n->stage = t->stage;
	n->last_good = t->last_good;
	n->peak_accept = t->peak_accept;
	n->served_rate = t->served_rate;
	n->latency_baseline_ns = t->latency_baseline_ns;
	n->latency_spread = t->latency_spread;
	n->feed_cover = t->feed_cover;
	n->rpc = t->rpc;
	n->rpc_src = t->rpc_src;
	n->calm_probes = t->calm_probes;
	n->probing = t->probing;
	n->at_max = t->aimd && t->at_max;
	n->at_max_ticks = t->at_max_ticks;
	n->tx_blocked = t->tx_blocked;
	n->signed_md5_ports = t->signed_md5_ports;
	n->signed_mptcp_ports = t->signed_mptcp_ports;
	for (i = 0; i < TUN_UJ_NR; i++)
		n->unjudged_tun[i] = t->unjudged_tun ? t->unjudged_tun[i] : 0;
	n->pinned_rate = t->pinned_rate;
	n->lease_s = t->lease_s;
	n->fail_static_rate = t->fail_static_rate;
	n->heartbeat_gap_s = t->heartbeat_gap_s;
	n->lease_expiries = t->lease_expiries;
	n->completion = t->completion;
	/* Copy only: no syscall, no formatting under the lock. */
	pthread_mutex_lock(&m->lock);
	memcpy(&m->snap, n, sizeof(*n));
	pthread_mutex_unlock(&m->lock);
	return err;
}

void metrics_close(struct metrics *m)
{
	if (m->http)
		MHD_stop_daemon(m->http);
	m->http = NULL;
	if (m->listening)
		close(m->listen_fd);
	m->listening = false;
}
