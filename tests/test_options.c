// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* test_options.c - shedd's command line: defaults, every option, and the
 * refusal of junk with a message that names what is wrong.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "aimd.h"
#include "controller_params.h"
#include "options.h"
#include "fair.h"

static char out[16384], err[512];

static int parse(struct shedd_options *o, int argc, const char **argv)
{
	out[0] = err[0] = '\0';
	return options_parse(argc, (char **)argv, o, out, sizeof(out), err, sizeof(err));
}

#define PARSE(o, ...)                                                        \
	({                                                                   \
		const char *argv_[] = { "shedd", __VA_ARGS__ };              \
		parse(o, (int)(sizeof(argv_) / sizeof(argv_[0])), argv_);    \
	})

static void defaults(void **state)
{
	struct shedd_options o;

	assert_int_equal(PARSE(&o, "--iface", "eth0"), OPTIONS_RUN);
	assert_string_equal(o.iface, "eth0");
	assert_int_equal(o.rate_per_sec, DEFAULT_RATE_PER_SEC);
	assert_int_equal(o.nr_ports, 0);
	assert_int_equal(o.default_class, SHEDD_SHEDDABLE);
	assert_int_equal(o.source_check, SHEDD_SRC_STRICT);
	assert_int_equal(o.reject[SHEDD_CRITICAL], SHEDD_REJECT_DROP);
	assert_int_equal(o.xdp_mode, XDP_MODE_NATIVE);
	assert_false(o.nic_vlan_tag); /* a device-bound program only when asked */
	assert_true(o.conn_limit);
	assert_int_equal(o.recall_rate, 0); /* no connection is ended unless asked */
	assert_int_equal(o.tick_ms, DEFAULT_TICK_MS);
	assert_float_equal(o.floor[SHEDD_SHEDDABLE], DEFAULT_FLOOR, 1e-12);
	assert_false(o.keep_on_exit);
	/* Verified admission: the sheddable classes while shedding. */
	assert_int_equal(o.verify[SHEDD_CRITICAL_PLUS], SHEDD_VERIFY_OFF);
	assert_int_equal(o.verify[SHEDD_CRITICAL], SHEDD_VERIFY_OFF);
	assert_int_equal(o.verify[SHEDD_SHEDDABLE_PLUS], SHEDD_VERIFY_SHEDDING);
	assert_int_equal(o.verify[SHEDD_SHEDDABLE], SHEDD_VERIFY_SHEDDING);
	assert_false(o.verify_explicit);
	assert_int_equal(o.handoff, HANDOFF_AUTO);
	assert_int_equal(o.cookie_rate_per_sec, DEFAULT_COOKIE_RATE_PER_SEC);
	assert_int_equal(o.verify_hold_ns, 10000000000ULL);
	options_free(&o);
}

static void every_option(void **state)
{
	struct shedd_options o;

	assert_int_equal(PARSE(&o, "-i", "veth0", "--port", "80,443", "-p", "8080",
			       "--port", "80", "--rate", "5000", "--burst", "50",
			       "--prefix", "198.18.1.0/24=critical_plus",
			       "--prefix", "2001:db8:1::/48=CRITICAL",
			       "--prefix", "198.18.9.9=sheddable-plus",
			       "--default-class", "sheddable_plus",
			       "--floor", "critical=0.25", "--reject", "rst",
			       "--reject", "critical_plus=drop", "--xdp-mode", "generic",
			       "--nic-vlan-tag", "auto", "--conn-limit", "off", "--recall", "200", "--tick-ms", "50", "--netns", "ns1", "--keep-on-exit",
			       "--force", "-v", "-v"),
			 OPTIONS_RUN);
	assert_int_equal(o.nr_ports, 3); /* 80 given twice counts once */
	assert_int_equal(o.ports[2], 8080);
	assert_int_equal(o.rate_per_sec, 5000);
	assert_int_equal(o.burst, 50);
	assert_int_equal(o.nr_prefixes, 3);
	assert_int_equal(o.prefixes[0].family, AF_INET);
	assert_int_equal(o.prefixes[0].prefixlen, 24);
	assert_int_equal(o.prefixes[0].cls, SHEDD_CRITICAL_PLUS);
	assert_int_equal(o.prefixes[1].family, AF_INET6);
	assert_int_equal(o.prefixes[1].prefixlen, 48);
	assert_int_equal(o.prefixes[1].cls, SHEDD_CRITICAL);
	assert_int_equal(o.prefixes[2].prefixlen, 32);
	assert_int_equal(o.prefixes[2].cls, SHEDD_SHEDDABLE_PLUS);
	assert_int_equal(o.default_class, SHEDD_SHEDDABLE_PLUS);
	assert_float_equal(o.floor[SHEDD_CRITICAL], 0.25, 1e-12);
	assert_int_equal(o.reject[SHEDD_CRITICAL_PLUS], SHEDD_REJECT_DROP);
	assert_int_equal(o.reject[SHEDD_SHEDDABLE], SHEDD_REJECT_RST);
	assert_int_equal(o.xdp_mode, XDP_MODE_GENERIC);
	assert_true(o.nic_vlan_tag);
	assert_false(o.conn_limit);
	assert_int_equal(o.recall_rate, 200);
	assert_int_equal(o.tick_ms, 50);
	assert_string_equal(o.netns, "ns1");
	assert_true(o.keep_on_exit && o.force);
	assert_int_equal(o.verbose, 2);
	options_free(&o);
}

static void controller_options(void **state)
{
	struct shedd_options o;

	/* No --rate: the controller finds the rate; a --rate fixes it... */
	assert_int_equal(PARSE(&o, "-i", "e"), OPTIONS_RUN);
	assert_int_equal(o.controller, CONTROLLER_AIMD);
	assert_string_equal(o.latency_socket, "/run/shedd/e.sock");
	/* The default stages, from the option table. */
	assert_int_equal(o.nr_ramp, 3);
	assert_float_equal(o.ramp[0], 0.1, 1e-12);
	assert_float_equal(o.ramp[2], 1.0, 1e-12);
	/* No --latency-target: derived (neither a target nor off). */
	assert_int_equal(o.latency_target_ns, 0);
	assert_false(o.latency_target_off);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--latency-target", "off"), OPTIONS_RUN);
	assert_int_equal(o.latency_target_ns, 0);
	assert_true(o.latency_target_off);
	options_free(&o);
	/* The last one given wins. */
	assert_int_equal(PARSE(&o, "-i", "e", "--latency-target", "off", "--latency-target",
			       "auto"), OPTIONS_RUN);
	assert_int_equal(o.latency_target_ns, 0);
	assert_false(o.latency_target_off);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--latency-target", "off", "--latency-target",
			       "40ms"), OPTIONS_RUN);
	assert_int_equal(o.latency_target_ns, 40000000);
	assert_false(o.latency_target_off);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--rate", "500"), OPTIONS_RUN);
	assert_int_equal(o.controller, CONTROLLER_OFF);
	options_free(&o);
	/* ...unless a controller is asked for: then --rate is its start. */
	assert_int_equal(PARSE(&o, "-i", "e", "--rate", "500", "--controller", "aimd",
			       "--target-delay", "2.5ms", "--interval", "200ms",
			       "--min-rate", "50", "--max-rate", "9000", "--step", "20",
			       "--depth-frac", "0.5", "--ramp", "0.2,0.6,1", "--ramp-hold", "2s",
			       "--latency-target", "250us", "--latency-socket", "/tmp/x.sock"),
			 OPTIONS_RUN);
	assert_int_equal(o.controller, CONTROLLER_AIMD);
	assert_int_equal(o.rate_per_sec, 500);
	assert_int_equal(o.target_delay_ns, 2500000);
	assert_int_equal(o.interval_ns, 200000000);
	assert_int_equal(o.min_rate, 50);
	assert_int_equal(o.max_rate, 9000);
	assert_int_equal(o.step, 20);
	assert_float_equal(o.depth_frac, 0.5, 1e-12);
	assert_int_equal(o.nr_ramp, 3);
	assert_float_equal(o.ramp[0], 0.2, 1e-12);
	assert_float_equal(o.ramp[2], 1.0, 1e-12);
	assert_int_equal(o.ramp_hold_ns, 2000000000ULL);
	assert_int_equal(o.latency_target_ns, 250000);
	assert_string_equal(o.latency_socket, "/tmp/x.sock");
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--ramp", "none", "--target-delay", "7"),
			 OPTIONS_RUN);
	assert_int_equal(o.nr_ramp, 0);
	assert_int_equal(o.target_delay_ns, 7000000); /* a bare number is ms */
	options_free(&o);
}

static void help_and_version(void **state)
{
	struct shedd_options o;

	assert_int_equal(PARSE(&o, "--help"), OPTIONS_EXIT);
	assert_non_null(strstr(out, "--iface IFACE"));
	assert_non_null(strstr(out, "--verify CLASS=MODE"));
	assert_non_null(strstr(out, "--handoff auto|tc|kernel"));
	assert_non_null(strstr(out, "--cookie-rate N"));
	assert_non_null(strstr(out, "--verify-hold DUR"));
	assert_non_null(strstr(out, "--backend-port PORT[,PORT...]"));
	/* Whole: its last line is there (a short buffer cuts it). */
	assert_non_null(strstr(out, "(a bare number is ms).\n"));
	options_free(&o);
	assert_int_equal(PARSE(&o, "--version"), OPTIONS_EXIT);
	assert_non_null(strstr(out, SHEDD_VERSION));
	options_free(&o);
}

/* --backend-port: parsed like --port, kept apart from it, and refused
 * where it would be protected too. */
static void backend_ports(void **state)
{
	char list[400];
	int i, off = 0;
	struct shedd_options o;

	assert_int_equal(PARSE(&o, "-i", "e", "-p", "80", "--backend-port", "8080,8081",
			       "--backend-port", "8080"), OPTIONS_RUN);
	assert_int_equal(o.nr_ports, 1);
	assert_int_equal(o.ports[0], 80);
	assert_int_equal(o.nr_backend_ports, 2); /* 8080 given twice counts once */
	assert_int_equal(o.backend_ports[0], 8080);
	assert_int_equal(o.backend_ports[1], 8081);
	options_free(&o);

	assert_int_equal(PARSE(&o, "-i", "e", "--port", "80,8080", "--backend-port", "8080"),
			 OPTIONS_ERROR);
	assert_non_null(strstr(err, "port 8080 is also given to --port"));
	/* In either order. */
	assert_int_equal(PARSE(&o, "-i", "e", "--backend-port", "443", "-p", "443"),
			 OPTIONS_ERROR);
	assert_non_null(strstr(err, "port 443 is also given to --port"));
	assert_int_equal(PARSE(&o, "-i", "e", "--backend-port", "8080"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "--backend-port needs --port"));
	assert_int_equal(PARSE(&o, "-i", "e", "-p", "80", "--backend-port", "0"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "--backend-port: '0' is not a port"));
	assert_int_equal(PARSE(&o, "-i", "e", "-p", "80", "--backend-port", "65536"),
			 OPTIONS_ERROR);
	assert_non_null(strstr(err, "--backend-port: '65536' is not a port"));
	assert_int_equal(PARSE(&o, "-i", "e", "-p", "80", "--backend-port", "x"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "not a port"));

	/* MAX_BACKEND_PORTS is the limit, one more is refused. */
	for (i = 0; i < MAX_BACKEND_PORTS; i++)
		off += snprintf(list + off, sizeof(list) - (size_t)off, "%s%d", i ? "," : "",
				9000 + i);
	assert_int_equal(PARSE(&o, "-i", "e", "-p", "80", "--backend-port", list), OPTIONS_RUN);
	assert_int_equal(o.nr_backend_ports, MAX_BACKEND_PORTS);
	options_free(&o);
	snprintf(list + off, sizeof(list) - (size_t)off, ",%d", 9000 + i);
	assert_int_equal(PARSE(&o, "-i", "e", "-p", "80", "--backend-port", list), OPTIONS_ERROR);
	assert_non_null(strstr(err, "--backend-port: at most"));
}

/* Each bad command line, and a word its error must contain. */
static const struct {
	const char *args[4];
	const char *says;
} bad[] = {
	{ { "--rate", "1000" }, "--iface is required" },
	{ { "-i", "e", "--rate", "12x" }, "not a whole number" },
	{ { "-i", "e", "--latency-target", "0" }, "--latency-target: '0' is not a target (a duration such as 200ms, auto or off)" },
	{ { "-i", "e", "--latency-target", "fast" }, "--latency-target: 'fast' is not a target" },
	{ { "-i", "e", "--latency-target", "5parsecs" }, "--latency-target: '5parsecs' is not a target" },
	{ { "-i", "e", "--latency-target", "" }, "--latency-target: '' is not a target" },
	{ { "-i", "e", "--rate", "-5" }, "not a whole number" },
	{ { "-i", "e", "--rate", "99999999999999999999" }, "not a whole number" },
	{ { "-i", "e", "--rate", "100000001" }, "out of range" },
	{ { "-i", "e", "--burst", "0" }, "out of range" },
	{ { "-i", "e", "--rst-rate", "1000001" }, "out of range" },
	{ { "-i", "e", "--rst-rate", "5x" }, "not a whole number" },
	{ { "-i", "e", "--source-check", "loose" }, "is not strict, verify or off" },
	{ { "-i", "e", "--port", "0" }, "not a port" },
	{ { "-i", "e", "--port", "80,,x" }, "not a port" },
	{ { "-i", "e", "--port", "65536" }, "not a port" },
	{ { "-i", "e", "--prefix", "198.18.0.0/24" }, "CIDR=CLASS" },
	{ { "-i", "e", "--prefix", "198.18.0.1/24=critical" }, "bits set past /24" },
	{ { "-i", "e", "--prefix", "198.18.0.0/33=critical" }, "prefix length" },
	{ { "-i", "e", "--prefix", "198.18.300.0/24=critical" }, "not an IPv4 or IPv6" },
	{ { "-i", "e", "--prefix", "2001:db8::/24=critical" }, "bits set past" },
	{ { "-i", "e", "--prefix", "198.18.0.0/24=gold" }, "unknown class 'gold'" },
	{ { "-i", "e", "--default-class", "urgent" }, "unknown class" },
	{ { "-i", "e", "--reject", "bounce" }, "--reject" },
	{ { "-i", "e", "--floor", "critical=1.5" }, "--floor" },
	{ { "-i", "e", "--fair", "0.5" }, "--fair: '0.5' is not off nor a slack in [1, 1000]" },
	{ { "-i", "e", "--fair", "gold=2" }, "unknown class 'gold'" },
	{ { "-i", "e", "--fair", "critical=" }, "--fair: '' is not off nor a slack" },
	{ { "-i", "e", "--fair-levels", "addr+25" }, "'25' is not a level" },
	{ { "-i", "e", "--fair-levels", "addr+" }, "a '+' with no level after it" },
	{ { "-i", "e", "--fair-levels", "24+24" }, "level '24' given twice" },
	{ { "-i", "e", "--fair-levels", "sheddable=" }, "no level given" },
	{ { "-i", "e", "--xdp-mode", "offload" }, "native or generic" },
	{ { "-i", "e", "--nic-vlan-tag", "on" }, "--nic-vlan-tag: 'on' is not auto or off" },
	{ { "-i", "e", "--conn-limit", "on" }, "--conn-limit: 'on' is not auto or off" },
	{ { "-i", "e", "--recall", "0" }, "--recall: " },
	{ { "-i", "e", "--recall", "fast" }, "--recall: " },
	{ { "-i", "e", "--tick-ms", "1" }, "out of range" },
	{ { "-i", "e", "--bogus" }, "unknown option '--bogus'" },
	{ { "-i", "e", "stray" }, "unexpected argument 'stray'" },
	{ { "-i", "e", "--rate" }, "needs a value" },
	{ { "-i", "e", "--netns", "../x" }, "not a namespace name" },
	{ { "-i", "e", "--controller", "pid" }, "not off or aimd" },
	{ { "-i", "e", "--target-delay", "5parsecs" }, "not a duration" },
	{ { "-i", "e", "--target-delay", "0" }, "more than 0" },
	{ { "-i", "e", "--interval", "2h" }, "not a duration" },
	{ { "-i", "e", "--ramp", "0.5,0.1,1" }, "rising fractions" },
	{ { "-i", "e", "--ramp", "0.1,0.5" }, "last stage must be 1" },
	{ { "-i", "e", "--ramp", "0,1" }, "rising fractions" },
	{ { "-i", "e", "--max-rate", "0" }, "out of range" },
	{ { "-i", "e", "--depth-frac", "0" }, "fraction in (0, 1]" },
	{ { "--iface", "..", "--remove" }, "not an interface name" },
	{ { "--iface", "." }, "not an interface name" },
	{ { "--iface", "../../x" }, "not an interface name" },
	{ { "--iface", "a/b" }, "not an interface name" },
	{ { "--iface", "eth0:1" }, "not an interface name" },
	{ { "--iface", "et h0" }, "not an interface name" },
	{ { "--iface", "" }, "not an interface name" },
	{ { "--iface", "sixteen-chars-xx" }, "not an interface name" },
	{ { "-i", "e", "--verify", "sometimes" }, "MODE off, shedding or always" },
	{ { "-i", "e", "--verify", "critical" }, "'critical': expected MODE" },
	{ { "-i", "e", "--verify", "critical=on" }, "'critical=on'" },
	{ { "-i", "e", "--verify", "gold=always" }, "'gold=always'" },
	{ { "-i", "e", "--verify", "critical=off,,sheddable=always" }, "'': expected MODE" },
	{ { "-i", "e", "--verify", "critical=off," }, "'': expected MODE" },
	{ { "-i", "e", "--verify", "" }, "'': expected MODE" },
	{ { "-i", "e", "--verify", "=always" }, "'=always'" },
	{ { "-i", "e", "--verify", "Always" }, "expected MODE" },
	{ { "-i", "e", "--verify" }, "needs a value" },
	{ { "-i", "e", "--handoff", "xdp" }, "'xdp' is not auto, tc or kernel" },
	{ { "-i", "e", "--handoff", "" }, "is not auto, tc or kernel" },
	{ { "-i", "e", "--cookie-rate", "10000001" }, "--cookie-rate: 10000001 is out of range" },
	{ { "-i", "e", "--cookie-rate", "-1" }, "--cookie-rate: '-1' is not a whole number" },
	{ { "-i", "e", "--cookie-rate", "4e6" }, "not a whole number" },
	{ { "-i", "e", "--verify-hold", "0" }, "--verify-hold: must be more than 0" },
	{ { "-i", "e", "--verify-hold", "10 s" }, "--verify-hold: '10 s' is not a duration" },
	{ { "-i", "e", "--verify-hold", "2h" }, "--verify-hold" },
	{ { "-i", "e", "--verify-hold", "3601s" }, "longer than an hour" },
};

static int parse_file(struct shedd_options *o, const char *text);

/* --source-check off and verify; --rst-rate: the RST budget of the host, default 10000/s, 0 allowed (never
 * answer), at most MAX_RST_RATE_PER_SEC. */
static void rst_rate_option(void **state)
{
	struct shedd_options o;

	(void)state;
	assert_int_equal(PARSE(&o, "-i", "e"), OPTIONS_RUN);
	assert_int_equal(o.rst_rate_per_sec, DEFAULT_RST_RATE_PER_SEC);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--source-check", "off"), OPTIONS_RUN);
	assert_int_equal(o.source_check, SHEDD_SRC_OFF);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--source-check", "verify"), OPTIONS_RUN);
	assert_int_equal(o.source_check, SHEDD_SRC_VERIFY);
	options_free(&o);
	assert_int_equal(parse_file(&o, "[shedd]\niface = e0\nsource_check = verify\n"), OPTIONS_RUN);
	assert_int_equal(o.source_check, SHEDD_SRC_VERIFY);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--rst-rate", "250"), OPTIONS_RUN);
	assert_int_equal(o.rst_rate_per_sec, 250);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--rst-rate", "0"), OPTIONS_RUN);
	assert_int_equal(o.rst_rate_per_sec, 0);
	options_free(&o);
}

/* --verify, --handoff, --cookie-rate, --verify-hold: command lines and the
 * verify modes, hand-off and numbers they give. */
static const struct {
	const char *args[6];
	__u8 verify[SHEDD_NR_CLASSES];
	bool explicit_;
	enum handoff_choice handoff;
	__u64 cookie_rate, hold_ns;
} good_verify[] = {
	{ { "--verify", "critical=always" }, { 0, 2, 1, 1 }, true, HANDOFF_AUTO,
	  DEFAULT_COOKIE_RATE_PER_SEC, DEFAULT_VERIFY_HOLD_NS },
	{ { "--verify", "critical_plus=shedding,sheddable=off" }, { 1, 0, 1, 0 }, true,
	  HANDOFF_AUTO, DEFAULT_COOKIE_RATE_PER_SEC, DEFAULT_VERIFY_HOLD_NS },
	{ { "--verify", "Sheddable-Plus=always", "--verify", "critical=shedding" }, { 0, 1, 2, 1 },
	  true, HANDOFF_AUTO, DEFAULT_COOKIE_RATE_PER_SEC, DEFAULT_VERIFY_HOLD_NS },
	{ { "--verify", "always" }, { 2, 2, 2, 2 }, true, HANDOFF_AUTO,
	  DEFAULT_COOKIE_RATE_PER_SEC, DEFAULT_VERIFY_HOLD_NS },
	{ { "--verify", "off" }, { 0, 0, 0, 0 }, false, HANDOFF_AUTO,
	  DEFAULT_COOKIE_RATE_PER_SEC, DEFAULT_VERIFY_HOLD_NS },
	/* Only off named: the defaults stay, and nothing was asked for. */
	{ { "--verify", "critical=off,sheddable=shedding" }, { 0, 0, 1, 1 }, true, HANDOFF_AUTO,
	  DEFAULT_COOKIE_RATE_PER_SEC, DEFAULT_VERIFY_HOLD_NS },
	{ { "--verify", "critical=off" }, { 0, 0, 1, 1 }, false, HANDOFF_AUTO,
	  DEFAULT_COOKIE_RATE_PER_SEC, DEFAULT_VERIFY_HOLD_NS },
	/* Asked, then taken back. */
	{ { "--verify", "critical=always", "--verify", "critical=off" }, { 0, 0, 1, 1 }, false,
	  HANDOFF_AUTO, DEFAULT_COOKIE_RATE_PER_SEC, DEFAULT_VERIFY_HOLD_NS },
	{ { "--handoff", "tc" }, { 0, 0, 1, 1 }, false, HANDOFF_TC,
	  DEFAULT_COOKIE_RATE_PER_SEC, DEFAULT_VERIFY_HOLD_NS },
	{ { "--handoff", "kernel", "--handoff", "auto" }, { 0, 0, 1, 1 }, false, HANDOFF_AUTO,
	  DEFAULT_COOKIE_RATE_PER_SEC, DEFAULT_VERIFY_HOLD_NS },
	{ { "--handoff", "kernel", "--cookie-rate", "0" }, { 0, 0, 1, 1 }, false, HANDOFF_KERNEL,
	  0, DEFAULT_VERIFY_HOLD_NS },
	{ { "--cookie-rate", "10000000", "--verify-hold", "250ms" }, { 0, 0, 1, 1 }, false,
	  HANDOFF_AUTO, MAX_COOKIE_RATE_PER_SEC, 250000000 },
};

static void verify_options(void **state)
{
	size_t i;
	int c;

	for (i = 0; i < sizeof(good_verify) / sizeof(good_verify[0]); i++) {
		const char *argv[10] = { "shedd", "-i", "e" };
		struct shedd_options o;
		int argc = 3;

		while (argc - 3 < 6 && good_verify[i].args[argc - 3])
			argv[argc] = good_verify[i].args[argc - 3], argc++;
		if (parse(&o, argc, argv) != OPTIONS_RUN)
			fail_msg("case %zu (%s %s): refused: %s", i, argv[3], argv[4], err);
		for (c = 0; c < SHEDD_NR_CLASSES; c++)
			if (o.verify[c] != good_verify[i].verify[c])
				fail_msg("case %zu (%s %s): class %d verify %u, wanted %u", i,
					 argv[3], argv[4], c, o.verify[c], good_verify[i].verify[c]);
		if (o.verify_explicit != good_verify[i].explicit_ ||
		    o.handoff != good_verify[i].handoff ||
		    o.cookie_rate_per_sec != good_verify[i].cookie_rate ||
		    o.verify_hold_ns != good_verify[i].hold_ns)
			fail_msg("case %zu (%s %s): explicit %d handoff %d cookie rate %llu hold %llu",
				 i, argv[3], argv[4], o.verify_explicit, o.handoff,
				 (unsigned long long)o.cookie_rate_per_sec,
				 (unsigned long long)o.verify_hold_ns);
		options_free(&o);
	}
}

static void bad_input_is_refused(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *argv[6] = { "shedd" };
		struct shedd_options o;
		int argc = 1, ret;

		while (argc <= 4 && bad[i].args[argc - 1])
			argv[argc] = bad[i].args[argc - 1], argc++;
		ret = parse(&o, argc, argv);
		if (ret != OPTIONS_ERROR || !strstr(err, bad[i].says))
			fail_msg("case %zu (%s %s): got %d, '%s'; wanted an error with '%s'",
				 i, bad[i].args[0], bad[i].args[1] ? bad[i].args[1] : "", ret,
				 err, bad[i].says);
		options_free(&o);
	}
}

/* Interface names the kernel accepts pass; the rest never reach a path. */
static void iface_names(void **state)
{
	struct shedd_options o;

	assert_true(iface_name_valid("eth0"));
	assert_true(iface_name_valid("fifteen-chars-x"));
	assert_true(iface_name_valid("veth.100"));
	assert_true(iface_name_valid("..."));
	assert_false(iface_name_valid("sixteen-chars-xx"));
	assert_false(iface_name_valid(".."));
	assert_false(iface_name_valid("."));
	assert_false(iface_name_valid("a/b"));
	assert_false(iface_name_valid("ns:1"));
	assert_false(iface_name_valid("a\tb"));
	assert_false(iface_name_valid(""));
	assert_int_equal(PARSE(&o, "--iface", "fifteen-chars-x"), OPTIONS_RUN);
	assert_string_equal(o.iface, "fifteen-chars-x");
	assert_false(o.latency_socket_set);
	options_free(&o);
	assert_int_equal(PARSE(&o, "--iface", "e", "--latency-socket", "/tmp/l.sock"), OPTIONS_RUN);
	assert_true(o.latency_socket_set);
	options_free(&o);
}

/* The latency socket's group: a name from the group database, or a
 * number; an unknown name is refused with its name in the message. */
static void latency_group(void **state)
{
	struct shedd_options o;

	assert_int_equal(PARSE(&o, "-i", "e"), OPTIONS_RUN);
	assert_false(o.latency_group_set);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--latency-group", "root"), OPTIONS_RUN);
	assert_true(o.latency_group_set);
	assert_int_equal(o.latency_gid, 0);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--latency-group", "33"), OPTIONS_RUN);
	assert_int_equal(o.latency_gid, 33);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--latency-group", "no-such-group-shedd"),
			 OPTIONS_ERROR);
	assert_non_null(strstr(err, "--latency-group: no group 'no-such-group-shedd'"));
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--latency-group", "12x"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "--latency-group"));
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--latency-group", ""), OPTIONS_ERROR);
	options_free(&o);
}

static void status_interval(void **state)
{
	struct shedd_options o;

	assert_int_equal(PARSE(&o, "-i", "e"), OPTIONS_RUN);
	assert_int_equal(o.status_interval_ns, 1000000000ULL);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--status-interval", "250ms"), OPTIONS_RUN);
	assert_int_equal(o.status_interval_ns, 250000000ULL);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--status-interval", "0"), OPTIONS_RUN);
	assert_int_equal(o.status_interval_ns, 0);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--status-interval", "often"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "--status-interval: 'often' is not a duration"));
	options_free(&o);
}

/* --lease DUR (0, the default: off; at least 1 s and 3 ticks) and
 * --fail-static-rate N (1 and up; unset: --rate), on the command line and
 * in the file. */
static void lease_options(void **state)
{
	struct shedd_options o;

	(void)state;
	assert_int_equal(PARSE(&o, "-i", "e"), OPTIONS_RUN);
	assert_int_equal(o.lease_ns, 0);
	assert_int_equal(o.fail_static_rate, 0);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--lease", "60s", "--fail-static-rate", "2000"),
			 OPTIONS_RUN);
	assert_int_equal(o.lease_ns, 60000000000ULL);
	assert_int_equal(o.fail_static_rate, 2000);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--lease", "0"), OPTIONS_RUN);
	assert_int_equal(o.lease_ns, 0);
	options_free(&o);
	/* A bare number is milliseconds, as for every duration: too short. */
	assert_int_equal(PARSE(&o, "-i", "e", "--lease", "60"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "--lease: '60' is shorter than 1s (a bare number is "
				    "milliseconds"));
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--lease", "2h"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "--lease: '2h' is not a duration"));
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--lease", "2s", "--tick-ms", "1000"),
			 OPTIONS_ERROR);
	assert_non_null(strstr(err, "--lease 2000ms is less than 3 ticks of 1000ms"));
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--fail-static-rate", "0"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "--fail-static-rate: ") &&
			strstr(err, "(the lease never relaxes to 0; --lease 0 turns it off)"));
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--fail-static-rate", "lots"), OPTIONS_ERROR);
	options_free(&o);
	assert_int_equal(parse_file(&o, "[shedd]\niface = e0\nlease = 90s\n"
				    "fail_static_rate = 500\n"), OPTIONS_RUN);
	assert_int_equal(o.lease_ns, 90000000000ULL);
	assert_int_equal(o.fail_static_rate, 500);
	options_free(&o);
}

/* --fair and --fair-levels: every class, then one; and [class.NAME]. */
static void fair_options(void **state)
{
	struct shedd_options o;
	int c;

	(void)state;
	assert_int_equal(PARSE(&o, "-i", "e"), OPTIONS_RUN);
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		assert_float_equal(o.fair_slack[c], FAIR_DEFAULT_SLACK, 1e-12);
		assert_int_equal(o.fair_levels[c], FAIR_ALL_LEVELS);
	}
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--fair", "3", "--fair", "critical=off",
			       "--fair-levels", "sheddable=addr+64", "--fair-levels", "48"),
			 OPTIONS_RUN);
	assert_float_equal(o.fair_slack[SHEDD_CRITICAL_PLUS], 3, 1e-12);
	assert_float_equal(o.fair_slack[SHEDD_CRITICAL], 0, 1e-12);
	assert_int_equal(o.fair_levels[SHEDD_SHEDDABLE], FAIR_NET48);
	assert_int_equal(o.fair_levels[SHEDD_CRITICAL], FAIR_NET48);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--fair-levels", "sheddable=addr+64"), OPTIONS_RUN);
	assert_int_equal(o.fair_levels[SHEDD_SHEDDABLE], FAIR_ADDR | FAIR_NET64);
	assert_int_equal(o.fair_levels[SHEDD_CRITICAL], FAIR_ALL_LEVELS);
	options_free(&o);
	assert_int_equal(parse_file(&o, "[shedd]\niface = e0\nfair = 4\n[class.critical]\n"
				       "fair = off\nfair_levels = addr\n"),
			 OPTIONS_RUN);
	assert_float_equal(o.fair_slack[SHEDD_SHEDDABLE], 4, 1e-12);
	assert_float_equal(o.fair_slack[SHEDD_CRITICAL], 0, 1e-12);
	assert_int_equal(o.fair_levels[SHEDD_CRITICAL], FAIR_ADDR);
	assert_int_equal(o.fair_levels[SHEDD_SHEDDABLE], FAIR_ALL_LEVELS);
	options_free(&o);
}

static void floors_must_not_pass_one(void **state)
{
	struct shedd_options o;

	assert_int_equal(PARSE(&o, "-i", "e", "--min-rate", "500", "--max-rate", "100"),
			 OPTIONS_ERROR);
	assert_non_null(strstr(err, "above --max-rate"));
	options_free(&o);

	assert_int_equal(PARSE(&o, "-i", "e", "--floor", "critical=0.5", "--floor",
			       "sheddable=0.5"),
			 OPTIONS_ERROR);
	assert_non_null(strstr(err, "must not pass 1"));
	options_free(&o);
}

/* The config file, handed in from memory. */
static const char *file_text;

static int from_text(const char *path, char **buf, size_t *len, char *errbuf, size_t errlen)
{
	if (!file_text) {
		snprintf(errbuf, errlen, "%s: No such file or directory", path);
		return -1;
	}
	*len = strlen(file_text);
	*buf = malloc(*len + 1);
	memcpy(*buf, file_text, *len + 1);
	return 0;
}

static int parse_file(struct shedd_options *o, const char *text)
{
	file_text = text;
	options_read_file = from_text;
	return PARSE(o, "--config", "t.conf");
}

/* One table: every option has a config key (unless the command line is
 * its only place), and --help shows its default or says it is required. */
static void table_is_whole(void **state)
{
	char help[16384], want[200];
	int i;

	options_usage(help, sizeof(help));
	assert_true(strlen(help) < sizeof(help) - 1);
	for (i = 0; i < OPT_COUNT; i++) {
		const struct opt_def *d = &options_table[i];
		char key[32], *line;
		size_t k;

		assert_int_equal(d->id, i);
		/* Its default is one its own parser takes. */
		if (d->def) {
			struct shedd_options scratch;
			struct options_state st = { .o = &scratch };

			memset(&scratch, 0, sizeof(scratch));
			if (options_apply(&st, d, d->def, err, sizeof(err)))
				fail_msg("--%s: default '%s' refused: %s", d->name, d->def, err);
			options_free(&scratch);
		}
		/* Its entry: "  -X, --name" or "      --name", at a line start. */
		if (d->short_name)
			snprintf(want, sizeof(want), "\n  -%c, --%s", d->short_name, d->name);
		else
			snprintf(want, sizeof(want), "\n      --%s", d->name);
		line = strstr(help, want);
		assert_non_null(line);
		if (d->flags & OPTF_CLI)
			continue;
		for (k = 0; d->name[k]; k++)
			key[k] = d->name[k] == '-' ? '_' : d->name[k];
		key[k] = '\0';
		assert_ptr_equal(options_by_key(key), d);
		assert_non_null(d->section);
		if (d->flags & OPTF_REQUIRED) {
			snprintf(want, sizeof(want), "(required)");
		} else {
			assert_true(d->def || d->def_text);
			snprintf(want, sizeof(want), "(default: %s)",
				 d->def_text ? d->def_text : d->def);
		}
		/* In this option's entry, wrapped lines joined. */
		{
			char *next = strstr(line + 2, "\n  -"), entry[1024];
			size_t n = 0;
			const char *p;

			for (p = line + 1; *p && (!next || p < next) && n + 1 < sizeof(entry); p++) {
				if (isspace((unsigned char)*p)) {
					if (n && entry[n - 1] != ' ')
						entry[n++] = ' ';
				} else {
					entry[n++] = *p;
				}
			}
			entry[n] = '\0';
			if (!strstr(entry, want))
				fail_msg("--%s: no '%s' in its help '%s'", d->name, want, entry);
		}
	}
}

/* The table's defaults are the program's: what options_parse gives with no
 * option, what the controller defaults to (aimd_defaults()), and the
 * constants the rest of the code uses. */
static void table_defaults_are_used(void **state)
{
	struct shedd_options o;
	struct aimd_params p;
	int i;

	aimd_defaults(&p);
	assert_int_equal(PARSE(&o, "-i", "e"), OPTIONS_RUN);
	assert_int_equal(o.target_delay_ns, p.target_delay_ns);
	assert_int_equal(o.interval_ns, p.interval_ns);
	assert_float_equal((double)o.min_rate, p.min_rate, 1e-9);
	assert_float_equal((double)o.max_rate, p.max_rate, 1e-9);
	assert_float_equal(o.depth_frac, p.depth_frac, 1e-12);
	assert_int_equal(o.ramp_hold_ns, p.stage_hold_ns);
	assert_int_equal(o.patience_ns / 4, p.auto_max_ns);
	assert_int_equal(o.nr_ramp, p.nr_stages);
	for (i = 0; i < p.nr_stages; i++)
		assert_float_equal(o.ramp[i], p.ramp[i], 1e-12);
	assert_int_equal((__u64)o.tick_ms * 1000000ULL, p.tick_ns);
	assert_int_equal(o.step, 0); /* 0: aimd's own, 1 % of the last good rate */
	assert_float_equal(p.alpha_per_sec, 0, 0);
	assert_true(p.latency_auto && !o.latency_target_off && !o.latency_target_ns);
	assert_float_equal(p.beta, 0.95, 1e-12);
	assert_int_equal(o.rate_per_sec, DEFAULT_RATE_PER_SEC);
	assert_int_equal(o.tick_ms, DEFAULT_TICK_MS);
	assert_int_equal(o.rst_rate_per_sec, DEFAULT_RST_RATE_PER_SEC);
	assert_int_equal(o.cookie_rate_per_sec, DEFAULT_COOKIE_RATE_PER_SEC);
	assert_int_equal(o.verify_hold_ns, DEFAULT_VERIFY_HOLD_NS);
	for (i = 0; i < SHEDD_NR_CLASSES; i++)
		assert_float_equal(o.floor[i], DEFAULT_FLOOR, 1e-12);
	assert_string_equal(o.metrics_addr, DEFAULT_METRICS_ADDR);
	assert_int_equal(o.status_interval_ns, 1000000000ULL);
	assert_false(o.rate_set || o.verify_explicit || o.keep_on_exit || o.force);
	assert_int_equal(o.verbose, 0);
	options_free(&o);
}

/* --patience: the derived target stays under a quarter of it; given (on
 * the command line or in the file), the target is also at least an
 * eighth of it, never under aimd's own floor; the default 2 s sets no
 * floor. */
static void patience_bounds_the_target(void **state)
{
	struct shedd_options o;
	struct aimd_params d, p;

	aimd_defaults(&d);
	assert_int_equal(PARSE(&o, "-i", "e"), OPTIONS_RUN);
	assert_false(o.patience_set);
	controller_params(&o, &p);
	assert_int_equal(p.auto_min_ns, d.auto_min_ns);
	assert_int_equal(p.auto_max_ns, 500 * 1000000ULL);
	options_free(&o);

	assert_int_equal(PARSE(&o, "-i", "e", "--patience", "500ms"), OPTIONS_RUN);
	assert_true(o.patience_set);
	controller_params(&o, &p);
	assert_int_equal(p.auto_min_ns, 62500000ULL);
	assert_int_equal(p.auto_max_ns, 125 * 1000000ULL);
	options_free(&o);

	/* An eighth under aimd's floor leaves the floor. */
	assert_int_equal(PARSE(&o, "-i", "e", "--patience", "40ms"), OPTIONS_RUN);
	controller_params(&o, &p);
	assert_int_equal(p.auto_min_ns, d.auto_min_ns);
	assert_int_equal(p.auto_max_ns, 10 * 1000000ULL);
	options_free(&o);

	/* Given in the file, the same as on the command line; the default
	 * written out is given too. */
	assert_int_equal(parse_file(&o, "[shedd]\niface = e\n[controller]\npatience = 2s\n"),
			 OPTIONS_RUN);
	assert_true(o.patience_set);
	controller_params(&o, &p);
	assert_int_equal(p.auto_min_ns, 250 * 1000000ULL);
	options_free(&o);
	(void)state;
}

static void config_file(void **state)
{
	struct shedd_options o;

	assert_int_equal(parse_file(&o,
		"; comment\n"
		"[shedd]\n"
		"iface = veth7\n"
		"port = 80\n"
		"port = 443,8443\n"
		"rate = 2500          ; inline comment\n"
		"reject = rst\n"
		"keep_on_exit = yes\n"
		"prefix = 2001:db8::/32=critical\n"
		"[controller]\n"
		"controller = off\n"
		"target_delay = 7ms\n"
		"[verify]\n"
		"cookie_rate = 0\n"
		"[class.critical_plus]\n"
		"floor = 0.3\n"
		"reject = drop\n"
		"verify = always\n"
		"prefix = 198.18.0.0/24\n"), OPTIONS_RUN);
	assert_string_equal(o.iface, "veth7");
	assert_string_equal(o.config, "t.conf");
	assert_int_equal(o.nr_ports, 3);
	assert_int_equal(o.ports[2], 8443);
	assert_int_equal(o.rate_per_sec, 2500);
	assert_true(o.rate_set);
	assert_int_equal(o.controller, CONTROLLER_OFF);
	assert_int_equal(o.target_delay_ns, 7000000);
	assert_int_equal(o.cookie_rate_per_sec, 0);
	assert_true(o.keep_on_exit);
	assert_float_equal(o.floor[SHEDD_CRITICAL_PLUS], 0.3, 1e-12);
	assert_float_equal(o.floor[SHEDD_CRITICAL], DEFAULT_FLOOR, 1e-12);
	assert_int_equal(o.reject[SHEDD_CRITICAL_PLUS], SHEDD_REJECT_DROP);
	assert_int_equal(o.reject[SHEDD_SHEDDABLE], SHEDD_REJECT_RST);
	assert_int_equal(o.verify[SHEDD_CRITICAL_PLUS], SHEDD_VERIFY_ALWAYS);
	assert_true(o.verify_explicit);
	assert_int_equal(o.nr_prefixes, 2);
	assert_int_equal(o.prefixes[0].family, AF_INET6);
	assert_int_equal(o.prefixes[0].cls, SHEDD_CRITICAL);
	assert_int_equal(o.prefixes[1].family, AF_INET);
	assert_int_equal(o.prefixes[1].prefixlen, 24);
	assert_int_equal(o.prefixes[1].cls, SHEDD_CRITICAL_PLUS);
	options_free(&o);
}

/* The command line wins: a value replaces the file's, a list too. */
static void flags_override_file(void **state)
{
	struct shedd_options o;
	const char *argv[] = { "shedd", "--config", "t.conf", "--rate", "99", "-p", "22",
			       "--floor", "critical=0.4", "-P", "198.19.0.0/16=sheddable" };

	file_text = "[shedd]\niface = e1\nrate = 5\nport = 80\nport = 81\n"
		    "floor = critical=0.2\nfloor = sheddable=0.2\n"
		    "prefix = 198.18.0.0/24=critical\n";
	options_read_file = from_text;
	assert_int_equal(parse(&o, 11, argv), OPTIONS_RUN);
	assert_string_equal(o.iface, "e1");
	assert_int_equal(o.rate_per_sec, 99);
	assert_int_equal(o.nr_ports, 1);
	assert_int_equal(o.ports[0], 22);
	assert_float_equal(o.floor[SHEDD_CRITICAL], 0.4, 1e-12);
	assert_float_equal(o.floor[SHEDD_SHEDDABLE], 0.2, 1e-12);
	assert_int_equal(o.nr_prefixes, 1);
	assert_int_equal(o.prefixes[0].cls, SHEDD_SHEDDABLE);
	options_free(&o);
}

/* Every error names the file, the line and the problem. */
static void config_errors(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "[shedd]\niface = e0\nrat = 5\n", "t.conf:3: unknown key 'rat' in [shedd]" },
		{ "[shedd]\niface = e0\n\n\nrate = 5x\n",
		  "t.conf:5: rate: '5x' is not a whole number" },
		{ "iface = e0\n", "t.conf:1: key 'iface' comes before any [section]" },
		{ "[shedd]\niface = e0\n[shed]\nrate = 1\n", "t.conf:3: unknown section [shed]" },
		{ "[shedd]\niface = e0\ntarget_delay = 5ms\n",
		  "t.conf:3: key 'target_delay' belongs in [controller]" },
		{ "[shedd]\niface = e0\nrate = 1\nrate = 2\n",
		  "t.conf:4: key 'rate' is given twice (also on line 3)" },
		{ "[shedd]\niface = e0\njunk\n", "t.conf:3: not a [section] nor a 'key = value'" },
		{ "[shedd]\niface = e0\nsource_check = loose\n",
		  "t.conf:3: source_check: 'loose' is not strict, verify or off" },
		{ "[shedd]\niface = e0\n[class.vip]\nfloor = 0.1\n",
		  "t.conf:3: unknown section [class.vip]: unknown class 'vip'" },
		{ "[shedd]\niface = e0\n[bogus]\n", "t.conf:3: unknown section [bogus]" },
		{ "[shedd]\niface = e0\n[shedd\n", "t.conf:3: not a [section] nor" },
		{ "[shedd]\niface = e0\n[class.critical]\nrate = 1\n",
		  "t.conf:4: unknown key 'rate' in [class.critical]" },
		{ "[shedd]\niface = e0\nfloor = critical=0.7\nfloor = sheddable=0.7\n",
		  "t.conf:4: --floor: the floors add up to" },
		{ "[shedd]\niface = e0\nport = \n", "t.conf:3: key 'port' has no value" },
		{ "[shedd]\niface = e0\nforce = maybe\n", "t.conf:3: force: 'maybe' is not yes or no" },
		{ "[shedd]\n[controller]\ntarget_delay = 1ms\n", "--iface is required" },
		{ "[shedd]\niface = e0\nprefix = 198.18.0.1/24=critical\n",
		  "t.conf:3: prefix: '198.18.0.1/24' has bits set past /24" },
	};
	struct shedd_options o;
	char longline[400];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse_file(&o, cases[i].text), OPTIONS_ERROR);
		if (!strstr(err, cases[i].msg))
			fail_msg("case %zu: got '%s', want '%s'", i, err, cases[i].msg);
		options_free(&o);
	}
	/* A line longer than libinih's buffer is refused, not cut in two. */
	snprintf(longline, sizeof(longline), "[shedd]\niface = e0\nport = 80%0300d\n", 0);
	assert_int_equal(parse_file(&o, longline), OPTIONS_ERROR);
	assert_non_null(strstr(err, "t.conf:3: longer than"));
	options_free(&o);
	/* A file that cannot be read. */
	file_text = NULL;
	assert_int_equal(PARSE(&o, "--config", "none.conf"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "none.conf: No such file"));
	options_free(&o);
}

/* The shipped example parses clean. */
static void example_parses(void **state)
{
	static char text[16384];
	struct shedd_options o;
	FILE *f = fopen(SRCDIR "/contrib/shedd.conf.example", "r");
	size_t n;

	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (parse_file(&o, text) != OPTIONS_RUN)
		fail_msg("contrib/shedd.conf.example: %s", err);
	assert_string_equal(o.iface, "veth0");
	assert_int_equal(o.nr_ports, 2);
	assert_int_equal(o.nr_prefixes, 3);
	options_free(&o);
}

/* --rate 0 admits nothing: every new connection would be shed, which no
 * operator means (--remove stops shedding). With the controller, --rate is
 * its start: one outside bounds also given is a contradiction, as
 * --min-rate above --max-rate is; a bound left at its default clamps. */
static void rate_bounds(void **state)
{
	struct shedd_options o;

	(void)state;
	assert_int_equal(PARSE(&o, "-i", "e", "--rate", "0"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "--rate: 0 is out of range [1, 100000000]"));
	assert_non_null(strstr(err, "would shed every new connection"));
	options_free(&o);
	assert_int_equal(parse_file(&o, "[shedd]\niface = e0\nrate = 0\n"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "t.conf:3: rate: 0 is out of range [1, 100000000]"));
	options_free(&o);
	file_text = NULL;
	assert_int_equal(PARSE(&o, "-i", "e", "--rate", "1"), OPTIONS_RUN);
	assert_int_equal(o.rate_per_sec, 1);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--rate", "100000000"), OPTIONS_RUN);
	options_free(&o);

	assert_int_equal(PARSE(&o, "-i", "e", "--controller", "aimd", "--rate", "20000",
			       "--max-rate", "10000"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "--rate 20000 is above --max-rate 10000"));
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--controller", "aimd", "--rate", "5",
			       "--min-rate", "50"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "--rate 5 is below --min-rate 50"));
	options_free(&o);
	assert_int_equal(parse_file(&o, "[shedd]\niface = e0\nrate = 20000\n[controller]\n"
				    "controller = aimd\nmax_rate = 10000\n"), OPTIONS_ERROR);
	assert_non_null(strstr(err, "t.conf:3: --rate 20000 is above --max-rate 10000"));
	options_free(&o);
	file_text = NULL;
	/* A fixed rate knows no controller bounds; a default bound clamps. */
	assert_int_equal(PARSE(&o, "-i", "e", "--rate", "20000", "--max-rate", "10000"),
			 OPTIONS_RUN);
	options_free(&o);
	assert_int_equal(PARSE(&o, "-i", "e", "--controller", "aimd", "--rate", "200000"),
			 OPTIONS_RUN);
	options_free(&o);
}

/* A text of @n distinct IPv4 (v6: IPv6) /32 (/128) prefixes in [shedd],
 * each on its own line, and @extra after them. */
static char *prefix_file(int n4, int n6, const char *extra)
{
	size_t cap = 64 + (size_t)(n4 + n6) * 48 + strlen(extra);
	char *t = malloc(cap);
	size_t off = 0;
	int i;

	assert_non_null(t);
	off += (size_t)snprintf(t + off, cap - off, "[shedd]\niface = e0\n");
	for (i = 0; i < n4; i++)
		off += (size_t)snprintf(t + off, cap - off, "prefix = 198.%d.%d.%d/32=critical\n",
					18 + i / 65536, (i / 256) % 256, i % 256);
	for (i = 0; i < n6; i++)
		off += (size_t)snprintf(t + off, cap - off, "prefix = 2001:db8::%x:%x/128=critical\n",
					i / 65536, i % 65536);
	snprintf(t + off, cap - off, "%s", extra);
	return t;
}

/* Each family's prefixes go into one LPM trie of MAX_PREFIXES entries:
 * one more is refused at parse time, naming the limit, not found when a
 * map write fails after the program is loaded. The same prefix twice is
 * one entry. */
static void prefix_limits(void **state)
{
	struct shedd_options o;
	char *t;

	(void)state;
	t = prefix_file(MAX_PREFIXES, MAX_PREFIXES, "");
	assert_int_equal(parse_file(&o, t), OPTIONS_RUN);
	assert_int_equal(o.nr_prefixes, 2 * MAX_PREFIXES);
	options_free(&o);
	free(t);

	t = prefix_file(MAX_PREFIXES + 1, 0, "");
	assert_int_equal(parse_file(&o, t), OPTIONS_ERROR);
	if (!strstr(err, "t.conf:16387: --prefix: 16385 IPv4 prefixes; the IPv4 trie holds at "
		    "most 16384 (MAX_PREFIXES)"))
		fail_msg("got '%s'", err);
	options_free(&o);
	free(t);

	t = prefix_file(0, MAX_PREFIXES + 1, "");
	assert_int_equal(parse_file(&o, t), OPTIONS_ERROR);
	assert_non_null(strstr(err, "16385 IPv6 prefixes; the IPv6 trie holds at most 16384"));
	options_free(&o);
	free(t);

	/* 20 000 in one family, as a file might hold them. */
	t = prefix_file(20000, 0, "");
	assert_int_equal(parse_file(&o, t), OPTIONS_ERROR);
	assert_non_null(strstr(err, "20000 IPv4 prefixes"));
	options_free(&o);
	free(t);

	/* A prefix given twice (in another class, too) takes one entry. */
	t = prefix_file(MAX_PREFIXES, 0, "prefix = 198.18.0.0/32=sheddable\n");
	assert_int_equal(parse_file(&o, t), OPTIONS_RUN);
	options_free(&o);
	free(t);

	/* The command line's list replaces the file's: counted after it. */
	t = prefix_file(MAX_PREFIXES + 1, 0, "");
	file_text = t;
	assert_int_equal(PARSE(&o, "--config", "t.conf", "--prefix", "198.18.0.0/24=critical"),
			 OPTIONS_RUN);
	assert_int_equal(o.nr_prefixes, 1);
	options_free(&o);
	free(t);
	file_text = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(defaults),
		cmocka_unit_test(every_option),
		cmocka_unit_test(controller_options),
		cmocka_unit_test(help_and_version),
		cmocka_unit_test(rst_rate_option),
		cmocka_unit_test(bad_input_is_refused),
		cmocka_unit_test(verify_options),
		cmocka_unit_test(floors_must_not_pass_one),
		cmocka_unit_test(fair_options),
		cmocka_unit_test(backend_ports),
		cmocka_unit_test(latency_group),
		cmocka_unit_test(iface_names),
		cmocka_unit_test(table_is_whole),
		cmocka_unit_test(table_defaults_are_used),
		cmocka_unit_test(patience_bounds_the_target),
		cmocka_unit_test(config_file),
		cmocka_unit_test(flags_override_file),
		cmocka_unit_test(config_errors),
		cmocka_unit_test(example_parses),
		cmocka_unit_test(status_interval),
		cmocka_unit_test(lease_options),
		cmocka_unit_test(rate_bounds),
		cmocka_unit_test(prefix_limits),
	};

	return cmocka_run_group_tests_name("options", tests, NULL, NULL);
}
