// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_redirects.c - what the daemon makes of the rules and services that
 * take protected ports after XDP (user/daemon/redirects.c): an nftables
 * ruleset as `nft -j list ruleset` printed it (nft 1.0.6, the rules of
 * nft's own syntax and of iptables-nft), and /proc/net/ip_vs. The reads
 * themselves, and what shedd says of them, are tested on a real ruleset by
 * tests/integration/redirect.bats.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "redirects.h"

/* A rule of table inet t, chain CHAIN: "{"rule": ...}". */
#define RULE(chain, expr)                                                                  \
	"{\"rule\": {\"family\": \"inet\", \"table\": \"t\", \"chain\": \"" chain "\", "    \
	"\"handle\": 9, \"expr\": [" expr "]}}"
#define DPORT(op, right)                                                                   \
	"{\"match\": {\"op\": \"" op "\", \"left\": {\"payload\": {\"protocol\": \"tcp\", " \
	"\"field\": \"dport\"}}, \"right\": " right "}}"
#define L4TCP "{\"match\": {\"op\": \"==\", \"left\": {\"meta\": {\"key\": \"l4proto\"}}, \"right\": \"tcp\"}}"

/* As nft -j list ruleset printed the ruleset of redirect.bats and more
 * (nft 1.0.6): the chains and the named set before the rules. */
static const char ruleset[] =
	"{\"nftables\": [{\"metainfo\": {\"version\": \"1.0.6\", \"json_schema_version\": 1}}, "
	"{\"table\": {\"family\": \"inet\", \"name\": \"t\", \"handle\": 1}}, "
	"{\"set\": {\"family\": \"inet\", \"name\": \"web\", \"table\": \"t\", "
	"\"type\": \"inet_service\", \"handle\": 4, \"elem\": [9000, 9001]}}, "
	"{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"sub\", \"handle\": 1}}, "
	"{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"pre\", \"handle\": 2, "
	"\"type\": \"nat\", \"hook\": \"prerouting\", \"prio\": -100, \"policy\": \"accept\"}}, "
	"{\"chain\": {\"family\": \"inet\", \"table\": \"t\", \"name\": \"out\", \"handle\": 3, "
	"\"type\": \"nat\", \"hook\": \"output\", \"prio\": -100, \"policy\": \"accept\"}}, "
	RULE("pre", DPORT("==", "7000") ", {\"redirect\": {\"port\": 8080}}") ", "
	RULE("pre", DPORT("==", "{\"set\": [7001, 7002]}") ", {\"redirect\": {\"port\": 8080}}") ", "
	RULE("pre", DPORT("==", "{\"range\": [7100, 7105]}")
	     ", {\"dnat\": {\"family\": \"ip\", \"addr\": \"198.18.0.2\", \"port\": 8080}}") ", "
	RULE("pre", DPORT("==", "\"@web\"") ", {\"redirect\": null}") ", "
	RULE("pre", DPORT("==", "7300") ", {\"tproxy\": {\"family\": \"ip\", \"port\": 8081}}") ", "
	/* A chain that hooks output: this host's own connections. */
	RULE("out", DPORT("==", "7400") ", {\"redirect\": {\"port\": 8080}}") ", "
	/* Not a NAT: nothing taken. */
	RULE("pre", DPORT("==", "7500") ", {\"counter\": {\"packets\": 0, \"bytes\": 0}}, "
	     "{\"accept\": null}")
	"]}";

/* Rules that take every port, each alone in a ruleset. */
static const char any_l4[] = "{\"nftables\": [" RULE("sub", L4TCP ", {\"redirect\": {\"port\": 8083}}") "]}";
static const char any_ne[] =
	"{\"nftables\": [" RULE("sub", DPORT("!=", "22") ", {\"redirect\": {\"port\": 8082}}") "]}";
/* iptables-nft: iptables -t nat -A PREROUTING -p tcp --dport 7600 -j REDIRECT
 * --to-ports 8080, and one with -m multiport --dports 7601,7602 -j DNAT. */
static const char xt[] =
	"{\"nftables\": [{\"chain\": {\"family\": \"ip\", \"table\": \"nat\", \"name\": "
	"\"PREROUTING\", \"handle\": 1, \"type\": \"nat\", \"hook\": \"prerouting\", \"prio\": -100, "
	"\"policy\": \"accept\"}}, "
	"{\"rule\": {\"family\": \"ip\", \"table\": \"nat\", \"chain\": \"PREROUTING\", \"handle\": 2, "
	"\"expr\": [" DPORT("==", "7600") ", {\"counter\": {\"packets\": 0, \"bytes\": 0}}, "
	"{\"xt\": {\"type\": \"target\", \"name\": \"REDIRECT\"}}]}}, "
	"{\"rule\": {\"family\": \"ip\", \"table\": \"nat\", \"chain\": \"PREROUTING\", \"handle\": 3, "
	"\"expr\": [" L4TCP ", {\"xt\": {\"type\": \"match\", \"name\": \"multiport\"}}, "
	"{\"counter\": {\"packets\": 0, \"bytes\": 0}}, "
	"{\"xt\": {\"type\": \"target\", \"name\": \"DNAT\"}}]}}]}";

/* The protected ports of the note being printed. */
static const __u16 *cur_ports;
static int cur_nr;

static const char *note(const struct redir_note *n)
{
	static char buf[256];

	redir_note_str(n, cur_ports, cur_nr, buf, sizeof(buf));
	return buf;
}

static void test_protected_ports_taken(void **state)
{
	static const __u16 ports[] = { 7000, 7002, 7103, 9001, 7300, 7400, 7500, 8080 };
	struct redir_found f;

	(void)state;
	cur_ports = ports;
	cur_nr = 8;
	memset(&f, 0, sizeof(f));
	assert_int_equal(redirects_parse_nft(ruleset, ports, 8, &f), 0);
	assert_int_equal(f.nr_hit, 5);
	assert_string_equal(note(&f.hit[0]), "port 7000 (redirect to :8080, nftables inet t pre)");
	assert_string_equal(note(&f.hit[1]), "port 7002 (redirect to :8080, nftables inet t pre)");
	assert_string_equal(note(&f.hit[2]), "port 7103 (dnat to :8080, nftables inet t pre)");
	assert_string_equal(note(&f.hit[3]), "port 9001 (redirect, nftables inet t pre)");
	assert_string_equal(note(&f.hit[4]), "port 7300 (tproxy to :8081, nftables inet t pre)");
	/* 7001, 7100-7105 but 7103 and 9000 are not protected, and all of
	 * them go to protected 8080 (the named set to its own port). */
	cur_nr = 0;
	assert_int_equal(f.nr_into, 2);
	assert_string_equal(note(&f.into[0]), "port 7001 (redirect to :8080, nftables inet t pre)");
	assert_string_equal(note(&f.into[1]), "ports 7100-7105 (dnat to :8080, nftables inet t pre)");
	assert_int_equal(f.hit_over + f.into_over, 0);
}

static void test_every_port_protected(void **state)
{
	struct redir_found f;

	(void)state;
	cur_nr = 0;
	memset(&f, 0, sizeof(f));
	assert_int_equal(redirects_parse_nft(ruleset, NULL, 0, &f), 0);
	assert_int_equal(f.nr_hit, 7);
	assert_string_equal(note(&f.hit[0]), "port 7000 (redirect to :8080, nftables inet t pre)");
	assert_string_equal(note(&f.hit[1]), "port 7001 (redirect to :8080, nftables inet t pre)");
	assert_string_equal(note(&f.hit[2]), "port 7002 (redirect to :8080, nftables inet t pre)");
	assert_string_equal(note(&f.hit[3]), "ports 7100-7105 (dnat to :8080, nftables inet t pre)");
	assert_string_equal(note(&f.hit[4]), "port 9000 (redirect, nftables inet t pre)");
	assert_string_equal(note(&f.hit[5]), "port 9001 (redirect, nftables inet t pre)");
	assert_string_equal(note(&f.hit[6]), "port 7300 (tproxy to :8081, nftables inet t pre)");
	assert_int_equal(f.nr_into, 0); /* nothing is unprotected */
}

/* A rule that names no port, or names one it does not take, takes every
 * port: each protected one is named, in a chain without a hook too. */
static void test_every_port_taken(void **state)
{
	static const __u16 ports[] = { 80, 443 };
	struct redir_found f;

	(void)state;
	cur_ports = ports;
	cur_nr = 2;
	memset(&f, 0, sizeof(f));
	assert_int_equal(redirects_parse_nft(any_l4, ports, 2, &f), 0);
	assert_int_equal(f.nr_hit, 1);
	assert_string_equal(note(&f.hit[0]), "ports 80, 443 (redirect to :8083, nftables inet t sub)");
	cur_nr = 0;
	memset(&f, 0, sizeof(f));
	assert_int_equal(redirects_parse_nft(any_ne, NULL, 0, &f), 0);
	assert_int_equal(f.nr_hit, 1);
	assert_string_equal(note(&f.hit[0]), "every port (redirect to :8082, nftables inet t sub)");
}

static void test_iptables_nft(void **state)
{
	static const __u16 ports[] = { 7600, 443 };
	struct redir_found f;

	(void)state;
	cur_ports = ports;
	cur_nr = 2;
	memset(&f, 0, sizeof(f));
	assert_int_equal(redirects_parse_nft(xt, ports, 2, &f), 0);
	/* The REDIRECT of 7600; the DNAT behind an xt match takes both. */
	assert_int_equal(f.nr_hit, 2);
	assert_string_equal(note(&f.hit[0]), "port 7600 (xt REDIRECT, nftables ip nat PREROUTING)");
	assert_string_equal(note(&f.hit[1]), "ports 7600, 443 (xt DNAT, nftables ip nat PREROUTING)");
}

static void test_bounded_and_bad_input(void **state)
{
	static const __u16 ports[] = { 1000 };
	char many[8192];
	struct redir_found f;
	size_t used;
	int i;

	(void)state;
	/* One rule a note: past REDIR_MAX_NOTES, counted. */
	used = (size_t)snprintf(many, sizeof(many), "{\"nftables\": [");
	for (i = 0; i < REDIR_MAX_NOTES + 3; i++)
		used += (size_t)snprintf(many + used, sizeof(many) - used, "%s%s", i ? ", " : "",
					 RULE("sub", L4TCP ", {\"redirect\": {\"port\": 8083}}"));
	snprintf(many + used, sizeof(many) - used, "]}");
	assert_true(used < sizeof(many) - 3);
	memset(&f, 0, sizeof(f));
	assert_int_equal(redirects_parse_nft(many, ports, 1, &f), 0);
	assert_int_equal(f.nr_hit, REDIR_MAX_NOTES);
	assert_int_equal(f.hit_over, 3);
	assert_int_equal(redirects_parse_nft("", ports, 1, &f), -EINVAL);
	assert_int_equal(redirects_parse_nft("{\"nftables\": 3}", ports, 1, &f), -EINVAL);
	assert_int_equal(redirects_parse_nft("[1, 2", ports, 1, &f), -EINVAL);
	/* An empty ruleset takes nothing. */
	memset(&f, 0, sizeof(f));
	assert_int_equal(redirects_parse_nft("{\"nftables\": [{\"metainfo\": {}}]}", ports, 1, &f),
			 0);
	assert_int_equal(f.nr_hit + f.nr_into, 0);
}

/* /proc/net/ip_vs as ipvsadm -A -t 198.18.0.2:80 and -A -t [2001:db8::2]:443
 * and -A -f 1 leave it. */
static const char ipvs[] =
	"IP Virtual Server version 1.2.1 (size=4096)\n"
	"Prot LocalAddress:Port Scheduler Flags\n"
	"  -> RemoteAddress:Port Forward Weight ActiveConn InActConn\n"
	"TCP  C6120002:0050 rr\n"
	"  -> C6120002:1F90      Masq    1      0          0\n"
	"TCP  [2001:0db8:0000:0000:0000:0000:0000:0002]:01BB rr\n"
	"UDP  C6120002:0035 rr\n"
	"FWM  00000001 rr\n";

static void test_ipvs(void **state)
{
	static const __u16 ports[] = { 80, 443, 53 };
	struct redir_found f;

	(void)state;
	cur_ports = ports;
	cur_nr = 3;
	memset(&f, 0, sizeof(f));
	assert_int_equal(redirects_parse_ipvs(ipvs, ports, 3, &f), 0);
	assert_int_equal(f.nr_hit, 3);
	assert_string_equal(note(&f.hit[0]), "port 80 (IPVS TCP, IPVS 198.18.0.2:80)");
	assert_string_equal(note(&f.hit[1]),
			    "port 443 (IPVS TCP, IPVS [2001:0db8:0000:0000:0000:0000:0000:0002]:443)");
	/* A fwmark takes whatever the rules mark: every port. */
	assert_string_equal(note(&f.hit[2]), "ports 80, 443, 53 (IPVS fwmark, IPVS fwmark 00000001)");
	assert_int_equal(redirects_parse_ipvs("TCP  C6120002:zz rr\n", ports, 3, &f), -EINVAL);
	assert_int_equal(redirects_parse_ipvs("TCP  C6120002 rr\n", ports, 3, &f), -EINVAL);
	memset(&f, 0, sizeof(f));
	assert_int_equal(redirects_parse_ipvs("", ports, 3, &f), 0);
	assert_int_equal(f.nr_hit, 0);
	/* Every port protected: the service's port. */
	cur_nr = 0;
	memset(&f, 0, sizeof(f));
	assert_int_equal(redirects_parse_ipvs(ipvs, NULL, 0, &f), 0);
	assert_int_equal(f.nr_hit, 3);
	assert_string_equal(note(&f.hit[0]), "port 80 (IPVS TCP, IPVS 198.18.0.2:80)");
	assert_string_equal(note(&f.hit[2]), "every port (IPVS fwmark, IPVS fwmark 00000001)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_protected_ports_taken),
		cmocka_unit_test(test_every_port_protected),
		cmocka_unit_test(test_every_port_taken),
		cmocka_unit_test(test_iptables_nft),
		cmocka_unit_test(test_bounded_and_bad_input),
		cmocka_unit_test(test_ipvs),
	};

	return cmocka_run_group_tests_name("redirects", tests, NULL, NULL);
}
