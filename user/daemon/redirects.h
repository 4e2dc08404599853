/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* redirects.h - the protected ports whose SYNs netfilter or IPVS gives,
 * after XDP has run, to a socket other than the one they are addressed to:
 * nftables rules that redirect, DNAT or TPROXY them (iptables-nft's
 * included), and IPVS services. XDP sees such a SYN as it arrives, and its
 * socket lookup cannot find the listener it reaches: verified admission
 * judges it as in an unverified class (bpf/shedd.bpf.c), and shedd says
 * so at start. The parsers here take the text the kernel's tools give (the
 * ruleset as `nft -j list ruleset` prints it, /proc/net/ip_vs) and do no
 * I/O; redirects_check() reads them from the namespace.
 */
#ifndef SHEDD_REDIRECTS_H
#define SHEDD_REDIRECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "shedd.h"

_Static_assert(MAX_PORTS <= 64, "a note's protected ports fit one word");

#ifndef REDIR_MAX_NOTES
#define REDIR_MAX_NOTES 16
#endif

/* One rule or service that takes some ports. */
struct redir_note {
	__u16 lo, hi;     /* the destination ports it takes (0-65535: any, or
			   * ports it cannot tell); with --port, of a hit: 0 */
	__u64 which;      /* with --port, of a hit: the protected ports it
			   * takes, bit i for the i-th (MAX_PORTS: 64) */
	__u16 to_port;    /* the port it sends them to; 0: not said (the
			   * same port, a map, or a real server's) */
	char what[24];    /* "redirect", "dnat", "tproxy", "xt REDIRECT",
			   * "IPVS TCP", "IPVS fwmark" */
	char where[72];   /* "nftables FAMILY TABLE CHAIN", or "IPVS ADDR" */
};

struct redir_found {
	/* Rules that take protected ports: one note a rule (with every port
	 * protected, one a range it takes). */
	struct redir_note hit[REDIR_MAX_NOTES];
	unsigned int nr_hit;
	unsigned int hit_over;  /* past REDIR_MAX_NOTES */
	/* Rules that send ports not protected to a protected port: XDP sees
	 * their SYNs by the port they are sent to, unprotected. */
	struct redir_note into[REDIR_MAX_NOTES];
	unsigned int nr_into;
	unsigned int into_over;
};

/**
 * redirects_parse_nft() - the rules of an nftables ruleset that take TCP
 * destination ports to another socket, into @f (added to what it holds).
 * @json: the ruleset as `nft -j list ruleset` prints it
 * @ports, @nr_ports: the protected ports (none: every port)
 *
 * A rule counts if it redirects, DNATs or TPROXYs (nft's own statements,
 * or iptables-nft's xt targets REDIRECT, DNAT, TPROXY), in a chain that
 * hooks prerouting or in a chain without a hook (one a jump may reach).
 * Its ports are those its `tcp dport` or `th dport` matches take: a
 * number, a range, an anonymous or named set; one it cannot tell (no port
 * match, `!=`, a map, an xt match) takes every port.
 *
 * Return: 0, or -EINVAL if @json is not such a ruleset.
 */
int redirects_parse_nft(const char *json, const __u16 *ports, int nr_ports,
			struct redir_found *f);

/**
 * redirects_parse_ipvs() - the TCP and fwmark services of /proc/net/ip_vs
 * into @f (added to what it holds). A fwmark service takes every port.
 * @text: the file's text
 * @ports, @nr_ports: as for redirects_parse_nft()
 *
 * Return: 0, or -EINVAL if a service line cannot be read.
 */
int redirects_parse_ipvs(const char *text, const __u16 *ports, int nr_ports,
			 struct redir_found *f);

/* @n as "port 7000 (redirect to :8080, nftables inet t pre)", "ports
 * 7100-7105 (...)", "every port (...)" or, of a hit with @nr_ports
 * protected @ports, "ports 80, 443 (...)". */
void redir_note_str(const struct redir_note *n, const __u16 *ports, int nr_ports, char *buf,
		    size_t len);

/**
 * redirects_check() - say which protected ports the namespace's nftables
 * rules and IPVS services take after XDP: at start and on a reload.
 * @ports, @nr_ports: the protected ports (none: every port)
 * @verifying: some class is verified
 *
 * Reads the ruleset through libnftables (CAP_NET_ADMIN), the legacy
 * iptables tables in /proc/net/ip_tables_names and ip6_tables_names (whose
 * rules it cannot read), and /proc/net/ip_vs. Only says; changes nothing.
 */
void redirects_check(const __u16 *ports, int nr_ports, bool verifying);

/* The watch: nftables announces each change of its ruleset on the netlink
 * group NFNLGRP_NFTABLES; a change is read REDIR_SETTLE_NS after it came
 * (a restore of a ruleset is a burst of events), IPVS and legacy iptables,
 * which announce nothing, every REDIR_RESCAN_NS; never two scans within
 * REDIR_GAP_NS (the tick waits for a scan, and listing a large ruleset
 * takes a while). */
#define REDIR_SETTLE_NS 1000000000ULL
#define REDIR_GAP_NS 5000000000ULL
#define REDIR_RESCAN_NS 30000000000ULL

struct redir_watch {
	int fd;            /* NETLINK_NETFILTER, NFNLGRP_NFTABLES; -1: none */
	__u64 last_ns;     /* the last scan */
	__u64 changed_ns;  /* the first event not yet read; 0: none */
	unsigned long scans, changes;
};

/* Subscribe to nftables' events (CAP_NET_ADMIN): before the daemon drops
 * its privileges. Without them (said once), the periodic scan alone. */
int redirects_watch_start(struct redir_watch *w);
void redirects_watch_stop(struct redir_watch *w);

/**
 * redirects_watch_tick() - once a tick: scan again when nftables announced
 * a change (or REDIR_RESCAN_NS passed), with the ports and classes of the
 * last redirects_check(), and say what takes protected ports now if that
 * changed (the same lines as at start, after one that says it changed).
 * @now_ns: CLOCK_MONOTONIC
 */
void redirects_watch_tick(struct redir_watch *w, __u64 now_ns);

#endif /* SHEDD_REDIRECTS_H */
