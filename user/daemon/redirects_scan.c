// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* redirects_scan.c - redirects_check() and redirects_watch_tick()
 * (redirects.h): reads the network namespace's nftables ruleset through
 * libnftables, the legacy iptables tables and IPVS services from /proc, and
 * says which protected ports they take after XDP: at start, on a reload,
 * and when they change.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/netfilter/nfnetlink.h>
#include <nftables/libnftables.h>

#include "log.h"
#include "redirects.h"

/* /proc/net/ip_vs of a host with thousands of services: read this much. */
#define REDIR_PROC_MAX (1U << 20)

/* The whole of a /proc file (NUL-terminated, to be freed), or NULL if it
 * is not there. */
static char *read_proc(const char *path)
{
	FILE *fp = fopen(path, "re");
	size_t n = 0, cap = 4096;
	char *buf;

	if (!fp)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - 1 - n, fp);

		n += got;
		if (got == 0 || n >= REDIR_PROC_MAX)
			break;
		if (n == cap - 1) {
			char *more = realloc(buf, cap * 2);

			if (!more) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = more;
			cap *= 2;
		}
	}
	if (buf)
		buf[n] = '\0';
	fclose(fp);
	return buf;
}

/* The ruleset, as `nft -j list ruleset`, into @f. Listing needs
 * CAP_NET_ADMIN, which the daemon keeps. */
static int scan_nft(const __u16 *ports, int nr_ports, struct redir_found *f)
{
	struct nft_ctx *ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	const char *out;
	int err;

	if (!ctx)
		return -ENOMEM;
	nft_ctx_output_set_flags(ctx, NFT_CTX_OUTPUT_JSON);
	if (nft_ctx_buffer_output(ctx) || nft_ctx_buffer_error(ctx)) {
		nft_ctx_free(ctx);
		return -ENOMEM;
	}
	if (nft_run_cmd_from_buffer(ctx, "list ruleset")) {
		const char *err_buf = nft_ctx_get_error_buffer(ctx);
		char why[160];

		snprintf(why, sizeof(why), "%s", err_buf && *err_buf ? err_buf : "failed");
		why[strcspn(why, "\n")] = '\0';
		/* No nf_tables in the kernel, or no right to list it: the
		 * SYNs are judged all the same (bpf/shedd.bpf.c), only not
		 * named here. */
		log_info("nftables ruleset not read (%s): the ports its rules take after XDP "
			 "are not named", why);
		nft_ctx_free(ctx);
		return -EIO;
	}
	out = nft_ctx_get_output_buffer(ctx);
	err = redirects_parse_nft(out ? out : "", ports, nr_ports, f);
	if (err)
		log_warn("read the nftables ruleset: not the JSON it should be");
	nft_ctx_free(ctx);
	return err;
}

/* Legacy iptables (ip_tables, not iptables-nft) keeps its rules where
 * nftables does not list them: its tables that can redirect are named. */
static void scan_legacy(char *names, size_t len)
{
	static const char *const files[] = { "/proc/net/ip_tables_names",
					     "/proc/net/ip6_tables_names" };
	size_t i, used = 0;

	names[0] = '\0';
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char *t = read_proc(files[i]), *tok, *save = NULL;

		if (!t)
			continue;
		for (tok = strtok_r(t, "\n", &save); tok; tok = strtok_r(NULL, "\n", &save)) {
			if (strcmp(tok, "nat") && strcmp(tok, "mangle"))
				continue;
			used += (size_t)snprintf(names + used, len - used, "%s%s %s",
						 used ? ", " : "", i ? "ip6tables" : "iptables", tok);
			if (used >= len)
				used = len - 1;
		}
		free(t);
	}
}

/* What the last scan found, and of which configuration: the watch
 * (redirects_watch_tick()) scans again with the same and tells a change. */
struct redir_seen {
	struct redir_found f;
	char legacy[128];
	__u16 ports[MAX_PORTS];
	int nr_ports;
	bool verifying;
	bool have;
};

static struct redir_seen seen;

/* Scan the namespace into @f and @legacy (zeroed first, so two scans that
 * found the same compare equal). */
static void redirects_scan(const __u16 *ports, int nr_ports, struct redir_found *f,
			   char legacy[128])
{
	char *ipvs;

	memset(f, 0, sizeof(*f));
	memset(legacy, 0, 128);
	scan_nft(ports, nr_ports, f);
	ipvs = read_proc("/proc/net/ip_vs");
	if (ipvs && redirects_parse_ipvs(ipvs, ports, nr_ports, f))
		log_warn("read /proc/net/ip_vs: a service line it cannot read");
	free(ipvs);
	scan_legacy(legacy, 128);
}

/* Has redirects_say() something to say of @f and @legacy? */
static bool says(const struct redir_found *f, const char *legacy, bool verifying)
{
	return (verifying && (f->nr_hit || f->hit_over)) || f->nr_into || f->into_over || legacy[0];
}

/* Say what @f and @legacy mean for the protected @ports. */
static void redirects_say(const struct redir_found *f, const char *legacy, const __u16 *ports,
			  int nr_ports, bool verifying)
{
	char note[256];
	unsigned int i;

	for (i = 0; verifying && i < f->nr_hit; i++) {
		redir_note_str(&f->hit[i], ports, nr_ports, note, sizeof(note));
		log_warn("verified admission: %s: their SYNs go to another socket after XDP, "
			 "where its socket lookup cannot follow: they are judged directly, as in "
			 "an unverified class (charged, no cookie), unless this host also listens "
			 "on the port as addressed", note);
	}
	if (verifying && f->hit_over)
		log_warn("verified admission: %u more rules or services take protected ports",
			 f->hit_over);
	for (i = 0; i < f->nr_into; i++) {
		redir_note_str(&f->into[i], ports, nr_ports, note, sizeof(note));
		log_warn("%s: netfilter gives SYNs of ports not protected to protected port %u "
			 "after XDP, which judges a SYN by the port it arrives for: protect them "
			 "too (--port)", note, f->into[i].to_port);
	}
	if (f->into_over)
		log_warn("%u more rules send ports not protected to protected ones", f->into_over);
	if (legacy[0])
		log_warn("legacy iptables tables are in use (%s): shedd cannot read their "
			 "rules; a REDIRECT, DNAT or TPROXY there to a protected port is not "
			 "named here%s", legacy,
			 verifying ? " (its SYNs are still judged as in an unverified class)" : "");
}

void redirects_check(const __u16 *ports, int nr_ports, bool verifying)
{
	int n = nr_ports < 0 ? 0 : nr_ports > MAX_PORTS ? MAX_PORTS : nr_ports;

	redirects_scan(ports, n, &seen.f, seen.legacy);
	redirects_say(&seen.f, seen.legacy, ports, n, verifying);
	memcpy(seen.ports, ports, (size_t)n * sizeof(*ports));
	seen.nr_ports = n;
	seen.verifying = verifying;
	seen.have = true;
}

int redirects_watch_start(struct redir_watch *w)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	int grp = NFNLGRP_NFTABLES;

	memset(w, 0, sizeof(*w));
	w->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_NETFILTER);
	if (w->fd < 0 || bind(w->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(w->fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &grp, sizeof(grp))) {
		/* Without the events, the periodic scan still sees the
		 * ruleset, only later. */
		log_info("nftables change events not available (%s): the ports netfilter "
			 "takes after XDP are read again every %u s",
			 strerror(errno), (unsigned int)(REDIR_RESCAN_NS / 1000000000ULL));
		if (w->fd >= 0)
			close(w->fd);
		w->fd = -1;
	}
	return 0;
}

void redirects_watch_stop(struct redir_watch *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

/* Read every pending event of @fd; true if there was one (or some were
 * lost: the socket's buffer overran, which is a change all the same). */
static bool events_drain(int fd)
{
	char buf[8192];
	bool any = false;

	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n > 0) {
			any = true;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == ENOBUFS) {
			any = true;
			continue;
		}
		return any;
	}
}

void redirects_watch_tick(struct redir_watch *w, __u64 now_ns)
{
	struct redir_found f;
	char legacy[128];
	bool due;

	if (!seen.have)
		return;
	if (!w->last_ns)
		w->last_ns = now_ns; /* the start's own scan was redirects_check() */
	if (w->fd >= 0 && events_drain(w->fd) && !w->changed_ns)
		w->changed_ns = now_ns;
	/* A change is read once the burst of it settles (a restore of a
	 * whole ruleset is many events), at most every REDIR_GAP_NS: a
	 * large ruleset takes a while to list, and the tick waits for it.
	 * IPVS and legacy iptables announce nothing: every REDIR_RESCAN_NS. */
	due = (w->changed_ns && now_ns - w->changed_ns >= REDIR_SETTLE_NS) ||
	      now_ns - w->last_ns >= REDIR_RESCAN_NS;
	if (!due || now_ns - w->last_ns < REDIR_GAP_NS)
		return;
	w->last_ns = now_ns;
	w->changed_ns = 0;
	w->scans++;
	redirects_scan(seen.ports, seen.nr_ports, &f, legacy);
	if (!memcmp(&f, &seen.f, sizeof(f)) && !strcmp(legacy, seen.legacy))
		return;
	w->changes++;
	if (says(&f, legacy, seen.verifying)) {
		log_info("netfilter or IPVS changed; what takes protected ports after XDP now:");
		redirects_say(&f, legacy, seen.ports, seen.nr_ports, seen.verifying);
	} else if (says(&seen.f, seen.legacy, seen.verifying)) {
		log_info("netfilter or IPVS changed: nothing takes a protected port after XDP "
			 "any more");
	}
	memcpy(&seen.f, &f, sizeof(f));
	memcpy(seen.legacy, legacy, sizeof(legacy));
}
