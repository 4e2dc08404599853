// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* options.c - command line of shedd. Every value is parsed strictly:
 * junk, overflow and out-of-range numbers are refused with a message that
 * names the option and the accepted range.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "options.h"
#include "fair.h"

static const char *const class_names[SHEDD_NR_CLASSES] = {
	[SHEDD_CRITICAL_PLUS] = "critical_plus",
	[SHEDD_CRITICAL] = "critical",
	[SHEDD_SHEDDABLE_PLUS] = "sheddable_plus",
	[SHEDD_SHEDDABLE] = "sheddable",
};

static void errf(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int parse_group(const char *s, __u32 *gid, char *err, size_t errlen)
{
	struct group gr, *found = NULL;
	char buf[4096], why[128];
	__u64 v;
	int e;

	if (*s >= '0' && *s <= '9') {
		if (parse_u64(s, 0, (__u32)-2, &v, why, sizeof(why))) {
			errf(err, errlen, "--latency-group: %s", why);
			return -1;
		}
		*gid = (__u32)v;
		return 0;
	}
	e = getgrnam_r(s, &gr, buf, sizeof(buf), &found);
	if (!found) {
		errf(err, errlen, "--latency-group: no group '%s'%s%s", s, e ? ": " : "",
		     e ? strerror(e) : " (see /etc/group; a number is taken as a gid)");
		return -1;
	}
	*gid = (__u32)gr.gr_gid;
	return 0;
}

int parse_user(const char *s, __u32 *uid, __u32 *gid, char *name, size_t namelen, char *err,
	       size_t errlen)
{
	struct passwd pw, *found = NULL;
	char buf[4096], why[128];
	__u64 v;
	int e;

	if (*s >= '0' && *s <= '9') {
		if (parse_u64(s, 0, (__u32)-2, &v, why, sizeof(why))) {
			errf(err, errlen, "--user: %s", why);
			return -1;
		}
		e = getpwuid_r((uid_t)v, &pw, buf, sizeof(buf), &found);
	} else {
		e = getpwnam_r(s, &pw, buf, sizeof(buf), &found);
	}
	if (!found) {
		errf(err, errlen, "--user: no user '%s'%s%s", s, e ? ": " : "",
		     e ? strerror(e) : " (see /etc/passwd)");
		return -1;
	}
	*uid = (__u32)pw.pw_uid;
	*gid = (__u32)pw.pw_gid;
	snprintf(name, namelen, "%s", pw.pw_name);
	return 0;
}

const char *class_name(__u32 cls)
{
	return cls < SHEDD_NR_CLASSES ? class_names[cls] : "?";
}

const char *verify_name(__u8 mode)
{
	switch (mode) {
	case SHEDD_VERIFY_OFF:
		return "off";
	case SHEDD_VERIFY_SHEDDING:
		return "shedding";
	case SHEDD_VERIFY_ALWAYS:
		return "always";
	}
	return "?";
}

int parse_u64(const char *s, __u64 min, __u64 max, __u64 *v, char *err, size_t errlen)
{
	unsigned long long x;
	char *end;

	if (!s || !*s || !isdigit((unsigned char)*s)) {
		errf(err, errlen, "'%s' is not a whole number", s ? s : "");
		return -1;
	}
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end) {
		errf(err, errlen, "'%s' is not a whole number", s);
		return -1;
	}
	if (x < min || x > max) {
		errf(err, errlen, "%s is out of range [%llu, %llu]", s,
		     (unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*v = x;
	return 0;
}

int parse_fraction(const char *s, double *v, char *err, size_t errlen)
{
	double x;
	char *end;

	errno = 0;
	x = strtod(s, &end);
	if (!*s || errno || *end || !(x >= 0 && x <= 1)) {
		errf(err, errlen, "'%s' is not a fraction in [0, 1]", s);
		return -1;
	}
	*v = x;
	return 0;
}

int parse_duration(const char *s, __u64 *ns, char *err, size_t errlen)
{
	static const struct {
		const char *unit;
		double scale;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e6 } };
	double x;
	char *end;
	size_t i;

	errno = 0;
	x = strtod(s, &end);
	if (end == s || errno || !(x >= 0)) {
		errf(err, errlen, "'%s' is not a duration (e.g. 5ms, 1s)", s);
		return -1;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].unit)) {
			if (x * units[i].scale > 3600e9) {
				errf(err, errlen, "'%s' is longer than an hour", s);
				return -1;
			}
			*ns = (__u64)(x * units[i].scale + 0.5);
			return 0;
		}
	}
	errf(err, errlen, "'%s' is not a duration (units: ns, us, ms, s)", s);
	return -1;
}

static int parse_ramp(struct shedd_options *o, char *list, char *err, size_t errlen)
{
	char *save = NULL, *tok;
	double f, prev = 0;

	o->nr_ramp = 0;
	if (!strcmp(list, "none"))
		return 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nr_ramp >= MAX_RAMP_STAGES) {
			errf(err, errlen, "--ramp: at most %d stages", MAX_RAMP_STAGES);
			return -1;
		}
		if (parse_fraction(tok, &f, err, errlen) || f <= 0 || f < prev) {
			errf(err, errlen, "--ramp: '%s': stages are rising fractions in (0, 1]", tok);
			return -1;
		}
		o->ramp[o->nr_ramp++] = prev = f;
	}
	if (!o->nr_ramp || o->ramp[o->nr_ramp - 1] != 1.0) {
		errf(err, errlen, "--ramp: the last stage must be 1");
		return -1;
	}
	return 0;
}

int parse_class(const char *s, __u32 *cls, char *err, size_t errlen)
{
	char norm[32];
	size_t i;
	__u32 c;

	for (i = 0; s[i] && i < sizeof(norm) - 1; i++)
		norm[i] = s[i] == '-' ? '_' : (char)tolower((unsigned char)s[i]);
	norm[i] = '\0';
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		if (!s[i] && !strcmp(norm, class_names[c])) {
			*cls = c;
			return 0;
		}
	}
	errf(err, errlen,
	     "unknown class '%s' (critical_plus, critical, sheddable_plus, sheddable)", s);
	return -1;
}

int parse_cidr(const char *s, struct prefix_rule *r, char *err, size_t errlen)
{
	char addr[INET6_ADDRSTRLEN + 1];
	const char *slash = strchr(s, '/');
	size_t alen = slash ? (size_t)(slash - s) : strlen(s);
	__u32 bits, i;
	__u64 len;

	memset(r, 0, sizeof(*r));
	if (alen == 0 || alen >= sizeof(addr)) {
		errf(err, errlen, "'%s' is not a CIDR prefix", s);
		return -1;
	}
	memcpy(addr, s, alen);
	addr[alen] = '\0';
	if (inet_pton(AF_INET, addr, r->addr) == 1) {
		r->family = AF_INET;
		bits = 32;
	} else if (inet_pton(AF_INET6, addr, r->addr) == 1) {
		r->family = AF_INET6;
		bits = 128;
	} else {
		errf(err, errlen, "'%s' is not an IPv4 or IPv6 address", addr);
		return -1;
	}
	len = bits;
	if (slash && parse_u64(slash + 1, 0, bits, &len, err, errlen)) {
		errf(err, errlen, "'%s': prefix length must be 0..%u", s, bits);
		return -1;
	}
	r->prefixlen = (__u32)len;
	/* Host bits set usually means a typo: refuse rather than guess. */
	for (i = r->prefixlen; i < bits; i++) {
		if (r->addr[i / 8] & (0x80 >> (i % 8))) {
			errf(err, errlen, "'%s' has bits set past /%u", s, r->prefixlen);
			return -1;
		}
	}
	return 0;
}

/* CLASS=VALUE, for --prefix, --floor and --reject. */
static int split_eq(char *arg, char **left, char **right)
{
	char *eq = strrchr(arg, '=');

	if (!eq)
		return -1;
	*eq = '\0';
	*left = arg;
	*right = eq + 1;
	return 0;
}

static int parse_reject_mode(const char *s, __u8 *mode)
{
	if (!strcmp(s, "drop"))
		*mode = SHEDD_REJECT_DROP;
	else if (!strcmp(s, "rst"))
		*mode = SHEDD_REJECT_RST;
	else
		return -1;
	return 0;
}

static int parse_verify_mode(const char *s, __u8 *mode)
{
	if (!strcmp(s, "off"))
		*mode = SHEDD_VERIFY_OFF;
	else if (!strcmp(s, "shedding"))
		*mode = SHEDD_VERIFY_SHEDDING;
	else if (!strcmp(s, "always"))
		*mode = SHEDD_VERIFY_ALWAYS;
	else
		return -1;
	return 0;
}

/* --verify MODE, or CLASS=MODE[,CLASS=MODE...]. @given collects the
 * classes the command line named (bit per class). */
static int set_verify(struct shedd_options *o, char *list, unsigned int *given,
		      char *err, size_t errlen)
{
	char *rest = list, *tok, *name, *val;
	__u8 mode;
	__u32 c;

	if (!parse_verify_mode(list, &mode)) {
		for (c = 0; c < SHEDD_NR_CLASSES; c++)
			o->verify[c] = mode;
		*given = (1U << SHEDD_NR_CLASSES) - 1;
		return 0;
	}
	/* strsep, not strtok: an empty item ("a,,b", "a,") is an error. */
	while ((tok = strsep(&rest, ","))) {
		char item[128];

		snprintf(item, sizeof(item), "%s", tok); /* split_eq cuts tok */
		if (split_eq(tok, &name, &val) || parse_class(name, &c, err, errlen) ||
		    parse_verify_mode(val, &mode)) {
			errf(err, errlen, "--verify: '%s': expected MODE or "
			     "CLASS=MODE[,CLASS=MODE...] with MODE off, shedding or always", item);
			return -1;
		}
		o->verify[c] = mode;
		*given |= 1U << c;
	}
	return 0;
}

/* A comma-separated port list into @ports (duplicates once), for --@opt. */
static int add_ports(const char *opt, __u16 *ports, int *nr, int max, char *list,
		     char *err, size_t errlen)
{
	char *save = NULL, *tok;
	__u64 port;
	int i;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_u64(tok, 1, 65535, &port, err, errlen)) {
			errf(err, errlen, "--%s: '%s' is not a port (1..65535)", opt, tok);
			return -1;
		}
		for (i = 0; i < *nr; i++)
			if (ports[i] == port)
				break;
		if (i < *nr)
			continue;
		if (*nr >= max) {
			errf(err, errlen, "--%s: at most %d ports", opt, max);
			return -1;
		}
		ports[(*nr)++] = (__u16)port;
	}
	return 0;
}

/* A backend port is a signal, never a door: it must not be protected too,
 * and it needs protected ports, since without --port XDP judges them all. */
static int check_backend_ports(const struct shedd_options *o, char *err, size_t errlen)
{
	int i, j;

	if (o->nr_backend_ports && !o->nr_ports) {
		errf(err, errlen, "--backend-port needs --port: without it every port is "
		     "protected, the backend's too");
		return -1;
	}
	for (i = 0; i < o->nr_backend_ports; i++)
		for (j = 0; j < o->nr_ports; j++)
			if (o->backend_ports[i] == o->ports[j]) {
				errf(err, errlen, "--backend-port: port %u is also given to "
				     "--port; a port is protected or a backend, not both",
				     o->backend_ports[i]);
				return -1;
			}
	return 0;
}

static int add_prefix(struct shedd_options *o, char *arg, char *err, size_t errlen)
{
	struct prefix_rule r, *grown;
	char *cidr, *cls;

	if (split_eq(arg, &cidr, &cls)) {
		errf(err, errlen, "--prefix '%s': expected CIDR=CLASS", arg);
		return -1;
	}
	if (parse_cidr(cidr, &r, err, errlen) || parse_class(cls, &r.cls, err, errlen)) {
		char why[160];

		snprintf(why, sizeof(why), "%s", err);
		errf(err, errlen, "--prefix: %s", why);
		return -1;
	}
	/* Bounds the memory only: each family's own limit, on distinct
	 * prefixes, is check_prefix_limits()'s. */
	if (o->nr_prefixes >= 2 * MAX_PREFIXES) {
		errf(err, errlen, "--prefix: more than %d prefixes; each family's trie holds "
		     "at most %d (MAX_PREFIXES)", 2 * MAX_PREFIXES, MAX_PREFIXES);
		return -1;
	}
	grown = realloc(o->prefixes, sizeof(*grown) * (size_t)(o->nr_prefixes + 1));
	if (!grown) {
		errf(err, errlen, "--prefix: out of memory");
		return -1;
	}
	o->prefixes = grown;
	o->prefixes[o->nr_prefixes++] = r;
	return 0;
}

static int prefix_cmp(const void *a, const void *b)
{
	const struct prefix_rule *x = a, *y = b;

	if (x->family != y->family)
		return x->family < y->family ? -1 : 1;
	if (x->prefixlen != y->prefixlen)
		return x->prefixlen < y->prefixlen ? -1 : 1;
	return memcmp(x->addr, y->addr, sizeof(x->addr));
}

/* Each family's prefixes are the entries of one LPM trie of MAX_PREFIXES
 * (prefix_v4, prefix_v6): more would fail when the maps are written, after
 * the program is loaded, or make a reload fail half-way. A prefix given
 * twice is one entry. Checked once the command line has replaced the
 * file's list. */
static int check_prefix_limits(const struct shedd_options *o, char *err, size_t errlen)
{
	struct prefix_rule *sorted;
	int i, n4 = 0, n6 = 0;

	if (o->nr_prefixes <= MAX_PREFIXES)
		return 0;
	sorted = malloc(sizeof(*sorted) * (size_t)o->nr_prefixes);
	if (!sorted) {
		errf(err, errlen, "--prefix: out of memory");
		return -1;
	}
	memcpy(sorted, o->prefixes, sizeof(*sorted) * (size_t)o->nr_prefixes);
	qsort(sorted, (size_t)o->nr_prefixes, sizeof(*sorted), prefix_cmp);
	for (i = 0; i < o->nr_prefixes; i++) {
		if (i && !prefix_cmp(&sorted[i - 1], &sorted[i]))
			continue;
		if (sorted[i].family == AF_INET)
			n4++;
		else
			n6++;
	}
	free(sorted);
	if (n4 > MAX_PREFIXES || n6 > MAX_PREFIXES) {
		errf(err, errlen, "--prefix: %d %s prefixes; the %s trie holds at most %d "
		     "(MAX_PREFIXES)", n4 > MAX_PREFIXES ? n4 : n6,
		     n4 > MAX_PREFIXES ? "IPv4" : "IPv6", n4 > MAX_PREFIXES ? "IPv4" : "IPv6",
		     MAX_PREFIXES);
		return -1;
	}
	return 0;
}

static int set_floor(struct shedd_options *o, char *arg, char *err, size_t errlen)
{
	char *name, *val;
	double f;
	__u32 c;

	/* A bare FRACTION: the floor of every class. */
	if (!strchr(arg, '=') && !parse_fraction(arg, &f, err, errlen)) {
		for (c = 0; c < SHEDD_NR_CLASSES; c++)
			o->floor[c] = f;
		return 0;
	}
	if (split_eq(arg, &name, &val) || parse_class(name, &c, err, errlen) ||
	    parse_fraction(val, &f, err, errlen)) {
		errf(err, errlen, "--floor: expected FRACTION or CLASS=FRACTION with "
		     "FRACTION in [0, 1]");
		return -1;
	}
	o->floor[c] = f;
	return 0;
}

/* --fair [CLASS=]off|SLACK */
static int set_fair(struct shedd_options *o, char *arg, char *err, size_t errlen)
{
	char *name = NULL, *val = arg, why[160];
	double f = 0;
	__u32 c, from = 0, to = SHEDD_NR_CLASSES;

	if (strchr(arg, '=')) {
		if (split_eq(arg, &name, &val) || parse_class(name, &c, why, sizeof(why))) {
			errf(err, errlen, "--fair: %s", why);
			return -1;
		}
		from = c;
		to = c + 1;
	}
	if (strcmp(val, "off")) {
		char *end;

		errno = 0;
		f = strtod(val, &end);
		if (errno || end == val || *end || !(f >= 1.0) || f > FAIR_MAX_SLACK) {
			errf(err, errlen, "--fair: '%s' is not off nor a slack in [1, %g]", val,
			     FAIR_MAX_SLACK);
			return -1;
		}
	}
	for (c = from; c < to; c++)
		o->fair_slack[c] = f;
	return 0;
}

/* --fair-levels [CLASS=]LEVEL+LEVEL... */
static int set_fair_levels(struct shedd_options *o, char *arg, char *err, size_t errlen)
{
	char *name = NULL, *val = arg, why[96];
	__u32 c, from = 0, to = SHEDD_NR_CLASSES, levels;

	if (strchr(arg, '=')) {
		if (split_eq(arg, &name, &val) || parse_class(name, &c, why, sizeof(why))) {
			errf(err, errlen, "--fair-levels: %s", why);
			return -1;
		}
		from = c;
		to = c + 1;
	}
	if (fair_parse_levels(val, &levels, why, sizeof(why))) {
		errf(err, errlen, "--fair-levels: %s", why);
		return -1;
	}
	for (c = from; c < to; c++)
		o->fair_levels[c] = levels;
	return 0;
}

static int set_reject(struct shedd_options *o, char *arg, char *err, size_t errlen)
{
	char *name, *val;
	__u8 mode;
	__u32 c;

	if (!parse_reject_mode(arg, &mode)) {
		for (c = 0; c < SHEDD_NR_CLASSES; c++)
			o->reject[c] = mode;
		return 0;
	}
	if (split_eq(arg, &name, &val) || parse_class(name, &c, err, errlen) ||
	    parse_reject_mode(val, &mode)) {
		errf(err, errlen, "--reject: expected drop, rst or CLASS=drop|rst");
		return -1;
	}
	o->reject[c] = mode;
	return 0;
}

/* The kernel's rule for a device name (dev_valid_name()): the name becomes
 * a folder under /sys/fs/bpf/shedd/ and a file under /run/shedd/, so "..",
 * a '/' or a ':' would lead out of them or collide with the namespace
 * folders (ns:INODE). */
bool iface_name_valid(const char *name)
{
	const char *c;

	if (!name || !*name || strlen(name) >= IF_NAMESIZE || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return false;
	for (c = name; *c; c++)
		if (*c == '/' || *c == ':' || isspace((unsigned char)*c) ||
		    !isprint((unsigned char)*c))
			return false;
	return true;
}

/* The one table: long and short options, config keys and sections, the
 * defaults (applied at start through each option's own parser, so the
 * default shown is the default used) and the --help text. The
 * controller's defaults are aimd_defaults()'s; test_options checks that
 * they agree. */
const struct opt_def options_table[OPT_COUNT] = {
	{ OPT_IFACE, "iface", 'i', "shedd", "IFACE", NULL, NULL,
	  "interface to protect", OPTF_RESTART | OPTF_REQUIRED },
	{ OPT_NETNS, "netns", 'n', "shedd", "NAME", NULL, "the current one",
	  "run in network namespace /run/netns/NAME", OPTF_RESTART },
	{ OPT_PORT, "port", 'p', "shedd", "PORT[,PORT...]", NULL, "every port",
	  "protected destination ports (repeatable)", OPTF_REPEAT | OPTF_REPLACE },
	{ OPT_BACKEND_PORT, "backend-port", 0, "shedd", "PORT[,PORT...]", NULL, "none",
	  "listeners of the service behind the protected ports (an upstream on this "
	  "host): their accept queues and drops are overload signals; their SYNs are "
	  "never shed (repeatable; needs --port)",
	  OPTF_REPEAT | OPTF_REPLACE | OPTF_RESTART },
	{ OPT_RATE, "rate", 'r', "shedd", "SYN_PER_SEC", "10000", NULL,
	  "total admitted SYN rate: fixed with --controller off; with aimd the start "
	  "(unset: --max-rate) and the most unfinished SYNs get", 0 },
	{ OPT_BURST, "burst", 'b', "shedd", "N", NULL, "rate/10",
	  "total bucket depth in SYNs", 0 },
	{ OPT_LEASE, "lease", 0, "shedd", "DUR", "0", NULL,
	  "a daemon gone this long lets the program climb from its last rates to "
	  "--fail-static-rate over as long again, never lower (0: off, the last rates "
	  "hold)", 0 },
	{ OPT_FAIL_STATIC_RATE, "fail-static-rate", 0, "shedd", "N", NULL, "--rate",
	  "total SYN rate the program climbs to once the lease ran out, split among "
	  "the classes as the allocator splits the limit", 0 },
	{ OPT_PREFIX, "prefix", 'P', "shedd", "CIDR=CLASS", NULL, "none",
	  "source prefix to class (repeatable)", OPTF_REPEAT | OPTF_REPLACE },
	{ OPT_DEFAULT_CLASS, "default-class", 'd', "shedd", "CLASS", "sheddable", NULL,
	  "class of unmatched sources", 0 },
	{ OPT_SOURCE_CHECK, "source-check", 0, "shedd", "strict|verify|off", "strict", NULL,
	  "a SYN whose source claims a class above the default class must be routed back "
	  "through the interface it came in on (the kernel's FIB, as rp_filter 1), else it "
	  "is judged as the default class (strict) or must prove its address with a SYN "
	  "cookie to keep its class (verify); needs forwarding on the interface", 0 },
	{ OPT_FLOOR, "floor", 'f', "shedd", "[CLASS=]FRACTION", "0.10", NULL,
	  "reserved share of the rate, for one class or each (repeatable)", OPTF_REPEAT },
	{ OPT_REJECT, "reject", 'R', "shedd", "drop|rst|CLASS=drop|rst", "drop", NULL,
	  "how shed SYNs are refused (repeatable)", OPTF_REPEAT },
	{ OPT_RST_RATE, "rst-rate", 0, "shedd", "N", "10000", NULL,
	  "RSTs sent per second at most, over all CPUs (0: shed SYNs are only dropped)", 0 },
	{ OPT_CONTROLLER, "controller", 'c', "controller", "off|aimd", NULL,
	  "aimd without --rate, off with it", "find the rate from queue delay",
	  OPTF_RESTART },
	{ OPT_TARGET_DELAY, "target-delay", 0, "controller", "DUR", "5ms", NULL,
	  "accept-queue sojourn target", 0 },
	{ OPT_INTERVAL, "interval", 0, "controller", "DUR", "100ms", NULL,
	  "how long above target is overload", 0 },
	{ OPT_MIN_RATE, "min-rate", 0, "controller", "N", "10", NULL,
	  "the controller's lower bound", 0 },
	{ OPT_MAX_RATE, "max-rate", 0, "controller", "N", "10000000", NULL,
	  "its upper bound (warned of where it binds)", 0 },
	{ OPT_STEP, "step", 0, "controller", "N", NULL, "1 % of the last good rate",
	  "additive increase per 100 ms", 0 },
	{ OPT_DEPTH_FRAC, "depth-frac", 0, "controller", "F", "0.7", NULL,
	  "queue depth over backlog that is overload", 0 },
	{ OPT_RAMP, "ramp", 0, "controller", "F,F,...|none", "0.1,0.5,1", NULL,
	  "recovery stages of the last good rate", 0 },
	{ OPT_RAMP_HOLD, "ramp-hold", 0, "controller", "DUR", "1s", NULL,
	  "how long each stage is held", 0 },
	{ OPT_LATENCY_TARGET, "latency-target", 0, "controller", "DUR|auto|off", "auto", NULL,
	  "service p99 above DUR is overload; auto: derived from the service's calm "
	  "latency; off: latency is no signal", 0 },
	{ OPT_PATIENCE, "patience", 0, "controller", "DUR", "2s", NULL,
	  "how long clients wait for an answer: the derived latency target stays under a "
	  "quarter of it, and when given is at least an eighth of it", 0 },
	{ OPT_CONN_LIMIT, "conn-limit", 0, "controller", "auto|off", "auto", NULL,
	  "auto: after an overload the latency shows on connections of several requests, "
	  "hold the live connections of each class at what the service serves within its "
	  "latency target (Little's law), letting a new one in as an old one closes; off: "
	  "the SYN rate alone", 0 },
	{ OPT_RECALL, "recall", 0, "controller", "N|off", "off", NULL,
	  "while the connection limit leaves a class more live connections than its share, "
	  "end up to N a second of its idle keep-alive connections (the lowest class, the "
	  "youngest first; a RST), so their clients come back through the door; off: never "
	  "end a connection", 0 },
	{ OPT_LATENCY_SOCKET, "latency-socket", 'L', "shedd", "PATH", NULL,
	  "/run/shedd/IFACE.sock",
	  "UNIX datagram socket for service latency samples or log lines of nginx and "
	  "HAProxy", OPTF_RESTART },
	{ OPT_LATENCY_GROUP, "latency-group", 0, "shedd", "GROUP", NULL, "root's",
	  "group of the latency socket (mode 0660), so a server's workers can write to "
	  "it (www-data, haproxy); a name or a number", OPTF_RESTART },
	{ OPT_VERIFY, "verify", 0, "verify", "CLASS=MODE[,CLASS=MODE...]",
	  "sheddable_plus=shedding,sheddable=shedding", NULL,
	  "verified admission per class (repeatable; MODE off|shedding|always, or a bare "
	  "MODE for every class)", OPTF_REPEAT },
	{ OPT_HANDOFF, "handoff", 0, "verify", "auto|tc|kernel", "auto", NULL,
	  "how a proven connection reaches the listener (auto: tc on kernels >= 6.9, "
	  "else off; kernel sets tcp_syncookies=2 and tcp_timestamps=2)", OPTF_RESTART },
	{ OPT_COOKIE_RATE, "cookie-rate", 0, "verify", "N", "1000000", NULL,
	  "cookie SYN-ACKs sent per second at most, over all CPUs (0: none, SYNs to verify "
	  "are shed)", 0 },
	{ OPT_VERIFY_HOLD, "verify-hold", 0, "verify", "DUR", "10s", NULL,
	  "how long a CPU that shed a class keeps answering it with cookies "
	  "(shedding mode)", 0 },
	{ OPT_FAIR, "fair", 0, "shedd", "[CLASS=]off|SLACK", "2", NULL,
	  "while a class sheds, each source may take SLACK times an equal share of the "
	  "class's rate (the class's rate over the sources it admitted lately), and never "
	  "less than the noise of the sketch; one over it is shed first (repeatable; off: "
	  "first come, first served)", OPTF_REPEAT },
	{ OPT_FAIR_LEVELS, "fair-levels", 0, "shedd", "[CLASS=]LEVEL+...", "addr+24+64+48",
	  NULL,
	  "what a source is: the address (addr), the IPv4 /24 (24), the IPv6 /64 (64) "
	  "and /48 (48), each held to its share (repeatable)", OPTF_REPEAT },
	{ OPT_XDP_MODE, "xdp-mode", 'm', "shedd", "native|generic", "native", NULL,
	  "XDP attach mode", OPTF_RESTART },
	{ OPT_NIC_VLAN_TAG, "nic-vlan-tag", 0, "shedd", "auto|off", "off", NULL,
	  "auto: where the driver gives XDP the VLAN tag the NIC strips, on kernels from "
	  "6.18, load the program bound to IFACE that reads it and puts it back into "
	  "cookies and RSTs; off: such replies leave untagged (a kernel bug with "
	  "device-bound programs: see docs/limits.md)", OPTF_RESTART },
	{ OPT_TICK_MS, "tick-ms", 't', "shedd", "MS", "100", NULL,
	  "control tick", OPTF_RESTART },
	{ OPT_METRICS_ADDR, "metrics-addr", 0, "shedd", "HOST:PORT|none", DEFAULT_METRICS_ADDR,
	  NULL, "where Prometheus metrics are served (none: not at all)", OPTF_RESTART },
	{ OPT_USER, "user", 0, "shedd", "USER", NULL, "shedd if there is one, else root",
	  "who the daemon runs as once attached, with CAP_BPF and CAP_NET_ADMIN only "
	  "(a name or a uid; root: stay uid 0)", OPTF_RESTART },
	{ OPT_STATUS_INTERVAL, "status-interval", 0, "shedd", "DUR", "1s", NULL,
	  "how often the status line is printed (0: never)", OPTF_RESTART },
	{ OPT_KEEP_ON_EXIT, "keep-on-exit", 'k', "shedd", NULL, "no", NULL,
	  "leave the program shedding when shedd exits", OPTF_FLAG },
	{ OPT_FORCE, "force", 0, "shedd", NULL, "no", NULL,
	  "replace another program's XDP attachment", OPTF_FLAG | OPTF_RESTART },
	{ OPT_VERBOSE, "verbose", 'v', "shedd", NULL, "0", NULL,
	  "more output (libbpf and verifier log; repeatable)", OPTF_FLAG | OPTF_RESTART },
	{ OPT_CONFIG, "config", 'C', NULL, "FILE", NULL, "none",
	  "read options from FILE (INI); options given here win; SIGHUP reloads it",
	  OPTF_CLI },
	{ OPT_REMOVE, "remove", 0, NULL, NULL, NULL, NULL,
	  "detach shedd from IFACE, remove its pins, exit", OPTF_FLAG | OPTF_CLI },
	{ OPT_CHECK_CONFIG, "check-config", 0, NULL, NULL, NULL, NULL,
	  "check the command line and --config FILE as a start would, say what is wrong "
	  "(exit 2) or that they are good (exit 0); loads and attaches nothing",
	  OPTF_FLAG | OPTF_CLI },
	{ OPT_HELP, "help", 'h', NULL, NULL, NULL, NULL, "this text", OPTF_FLAG | OPTF_CLI },
	{ OPT_VERSION, "version", 'V', NULL, NULL, NULL, NULL, "print the version",
	  OPTF_FLAG | OPTF_CLI },
};

static void key_of(const struct opt_def *d, char *key, size_t len)
{
	size_t i;

	for (i = 0; d->name[i] && i + 1 < len; i++)
		key[i] = d->name[i] == '-' ? '_' : d->name[i];
	key[i] = '\0';
}

const struct opt_def *options_by_key(const char *key)
{
	char k[32];
	int i;

	for (i = 0; i < OPT_COUNT; i++) {
		if (options_table[i].flags & OPTF_CLI)
			continue;
		key_of(&options_table[i], k, sizeof(k));
		if (!strcmp(k, key))
			return &options_table[i];
	}
	return NULL;
}

/* Append @word-wrapped @text to @out at column @indent, lines under 79. */
static size_t wrap(char *out, size_t outlen, size_t off, size_t col, size_t indent,
		   const char *text)
{
	const char *p = text;

	while (*p) {
		size_t w = strcspn(p, " ");

		if (col > indent && col + 1 + w > 78) {
			off += (size_t)snprintf(out + off, off < outlen ? outlen - off : 0,
						"\n%*s", (int)indent, "");
			col = indent;
		} else if (col > indent) {
			off += (size_t)snprintf(out + off, off < outlen ? outlen - off : 0, " ");
			col++;
		}
		off += (size_t)snprintf(out + off, off < outlen ? outlen - off : 0, "%.*s",
					(int)w, p);
		for (size_t i = off - w; i < off && i < outlen; i++)
			if (out[i] == '\001')
				out[i] = ' ';
		col += w;
		p += w;
		while (*p == ' ')
			p++;
	}
	return off;
}

void options_usage(char *out, size_t outlen)
{
	size_t off = 0;
	int i;

#define ADD(...) (off += (size_t)snprintf(out + off, off < outlen ? outlen - off : 0, __VA_ARGS__))
	ADD("Usage: shedd --iface IFACE [options]\n"
	    "Sheds new TCP connections (SYNs) at XDP, by priority class, so the\n"
	    "service behind IFACE keeps its goodput under overload.\n\n");
	for (i = 0; i < OPT_COUNT; i++) {
		const struct opt_def *d = &options_table[i];
		char head[80], text[512];
		int n;

		n = snprintf(head, sizeof(head), "  %c%c%s--%s%s%s", d->short_name ? '-' : ' ',
			     d->short_name ? d->short_name : ' ', d->short_name ? ", " : "  ",
			     d->name, d->metavar ? " " : "", d->metavar ? d->metavar : "");
		if (d->flags & OPTF_REQUIRED)
			snprintf(text, sizeof(text), "%s (required)", d->help);
		else if (d->def_text || d->def)
			/* \001: a space the wrap does not break at */
			snprintf(text, sizeof(text), "%s (default:\001%s)", d->help,
				 d->def_text ? d->def_text : d->def);
		else
			snprintf(text, sizeof(text), "%s", d->help);
		ADD("%s", head);
		if (n >= 29) {
			ADD("\n%29s", "");
		} else {
			ADD("%*s", 29 - n, "");
		}
		off = wrap(out, outlen, off, 29, 29, text);
		ADD("\n");
	}
	ADD("\n"
	    "Classes, most important first: critical_plus, critical, sheddable_plus,\n"
	    "sheddable. Pins: /sys/fs/bpf/shedd/IFACE/{link,stats,rates,...}, in another\n"
	    "network namespace /sys/fs/bpf/shedd/ns:INODE/IFACE/ (the latency socket too:\n"
	    "/run/shedd/ns:INODE/IFACE.sock). One shedd per interface: a second is refused.\n"
	    "DUR is a number with ns, us, ms or s (a bare number is ms).\n"
	    "Config file keys are the long options with '_' for '-', in the section\n"
	    "[shedd], [controller] or [verify]; see docs/service.md.\n"
	    "\n"
	    "Exit status: 0 success (also --remove with nothing to remove), 1 failure\n"
	    "while running, 2 usage error, 3 cannot start here (no permission, no such\n"
	    "interface, kernel lacks a feature, BPF load or attach refused, another\n"
	    "shedd owns IFACE).\n");
#undef ADD
}

static void options_init(struct options_state *st, struct shedd_options *o)
{
	char err[256];
	int i;

	memset(o, 0, sizeof(*o));
	memset(st, 0, sizeof(*st));
	st->o = o;
	o->nr_ramp = -1;
	for (i = 0; i < OPT_COUNT; i++)
		/* A default its own option refused would leave the field at
		 * 0: test_options checks every default is taken. */
		if (options_table[i].def)
			(void)options_apply(st, &options_table[i], options_table[i].def, err,
					    sizeof(err));
	/* Defaults are not "given". */
	o->rate_set = false;
	o->patience_set = false;
	o->xdp_mode_set = false;
	o->metrics_addr_set = false;
	st->controller_set = false;
	st->verify_given = 0;
	memset(st->line, 0, sizeof(st->line));
}

void options_free(struct shedd_options *o)
{
	free(o->prefixes);
	o->prefixes = NULL;
	o->nr_prefixes = 0;
}

static int parse_bool(const char *s, bool *v)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (!strcmp(s, yes[i]) || !strcmp(s, no[i])) {
			*v = !strcmp(s, yes[i]);
			return 0;
		}
	}
	return -1;
}

int options_apply(struct options_state *st, const struct opt_def *d, const char *val,
		  char *err, size_t errlen)
{
	struct shedd_options *o = st->o;
	char why[200], arg[512];
	bool flag = true;
	__u64 v;

	if (val && snprintf(arg, sizeof(arg), "%s", val) >= (int)sizeof(arg)) {
		errf(err, errlen, "--%s: '%.40s...' is too long", d->name, val);
		return -1;
	}
	/* A flag takes no value on the command line; in a file (or as a
	 * default) it is yes or no. */
	if ((d->flags & OPTF_FLAG) && val && d->id != OPT_VERBOSE &&
	    parse_bool(val, &flag)) {
		errf(err, errlen, "--%s: '%s' is not yes or no", d->name, val);
		return -1;
	}
	switch (d->id) {
	case OPT_IFACE:
		if (!iface_name_valid(val)) {
			errf(err, errlen,
			     "--iface: '%s' is not an interface name (1 to %d characters, "
			     "no '/', ':' or spaces, not '.' or '..')",
			     val, IF_NAMESIZE - 1);
			return -1;
		}
		strcpy(o->iface, val);
		break;
	case OPT_PORT:
		return add_ports("port", o->ports, &o->nr_ports, MAX_PORTS, arg, err, errlen);
	case OPT_BACKEND_PORT:
		return add_ports("backend-port", o->backend_ports, &o->nr_backend_ports,
				 MAX_BACKEND_PORTS, arg, err, errlen);
	case OPT_RATE:
		/* 0 would shed every new connection: never what is meant
		 * (the controller's --min-rate is at least 1 too). */
		if (parse_u64(val, 1, MAX_TOTAL_RATE_PER_SEC, &o->rate_per_sec, why,
			      sizeof(why))) {
			errf(err, errlen, "--rate: %s%s", why, strcmp(val, "0") ? "" :
			     " (0 would shed every new connection; to stop shedding: "
			     "shedd --iface IFACE --remove)");
			return -1;
		}
		o->rate_set = true;
		break;
	case OPT_CONTROLLER:
		if (!strcmp(val, "off")) {
			o->controller = CONTROLLER_OFF;
		} else if (!strcmp(val, "aimd")) {
			o->controller = CONTROLLER_AIMD;
		} else {
			errf(err, errlen, "--controller: '%s' is not off or aimd", val);
			return -1;
		}
		st->controller_set = true;
		break;
	case OPT_TARGET_DELAY:
	case OPT_INTERVAL:
	case OPT_RAMP_HOLD:
	case OPT_PATIENCE:
	case OPT_VERIFY_HOLD: {
		__u64 *dst = d->id == OPT_TARGET_DELAY ? &o->target_delay_ns :
			     d->id == OPT_INTERVAL     ? &o->interval_ns :
			     d->id == OPT_RAMP_HOLD    ? &o->ramp_hold_ns :
			     d->id == OPT_PATIENCE     ? &o->patience_ns :
							 &o->verify_hold_ns;

		why[0] = '\0';
		if (parse_duration(val, &v, why, sizeof(why)) || v == 0) {
			errf(err, errlen, "--%s: %s", d->name, *why ? why : "must be more than 0");
			return -1;
		}
		*dst = v;
		if (d->id == OPT_PATIENCE)
			o->patience_set = true;
		break;
	}
	case OPT_LEASE:
		if (parse_duration(val, &v, why, sizeof(why))) {
			errf(err, errlen, "--lease: %s", why);
			return -1;
		}
		if (v && v < MIN_LEASE_NS) {
			errf(err, errlen, "--lease: '%s' is shorter than 1s (a bare number is "
			     "milliseconds; 0: no lease)", val);
			return -1;
		}
		o->lease_ns = v;
		break;
	case OPT_FAIL_STATIC_RATE:
		if (parse_u64(val, 1, MAX_TOTAL_RATE_PER_SEC, &o->fail_static_rate, why,
			      sizeof(why))) {
			errf(err, errlen, "--fail-static-rate: %s%s", why, strcmp(val, "0") ? "" :
			     " (the lease never relaxes to 0; --lease 0 turns it off)");
			return -1;
		}
		break;
	case OPT_STATUS_INTERVAL:
		if (parse_duration(val, &o->status_interval_ns, why, sizeof(why))) {
			errf(err, errlen, "--status-interval: %s", why);
			return -1;
		}
		break;
	case OPT_LATENCY_TARGET:
		if (!strcmp(val, "off") || !strcmp(val, "auto")) {
			o->latency_target_ns = 0;
			o->latency_target_off = !strcmp(val, "off");
			break;
		}
		if (parse_duration(val, &v, why, sizeof(why)) || !v) {
			errf(err, errlen, "--latency-target: '%s' is not a target "
			     "(a duration such as 200ms, auto or off)", val);
			return -1;
		}
		o->latency_target_ns = v;
		o->latency_target_off = false;
		break;
	case OPT_MIN_RATE:
	case OPT_MAX_RATE:
	case OPT_STEP:
		if (parse_u64(val, 1, MAX_TOTAL_RATE_PER_SEC, &v, why, sizeof(why))) {
			errf(err, errlen, "--%s: %s", d->name, why);
			return -1;
		}
		*(d->id == OPT_MIN_RATE ? &o->min_rate :
		  d->id == OPT_MAX_RATE ? &o->max_rate : &o->step) = v;
		break;
	case OPT_DEPTH_FRAC: {
		double f;

		if (parse_fraction(val, &f, why, sizeof(why)) || f == 0) {
			errf(err, errlen, "--depth-frac: '%s' is not a fraction in (0, 1]", val);
			return -1;
		}
		o->depth_frac = f;
		break;
	}
	case OPT_RAMP:
		return parse_ramp(o, arg, err, errlen);
	case OPT_LATENCY_SOCKET:
		if (!*val || strlen(val) >= sizeof(o->latency_socket)) {
			errf(err, errlen, "--latency-socket: '%s' is not a usable path", val);
			return -1;
		}
		strcpy(o->latency_socket, val);
		o->latency_socket_set = true;
		break;
	case OPT_LATENCY_GROUP:
		if (parse_group(val, &o->latency_gid, err, errlen))
			return -1;
		o->latency_group_set = true;
		break;
	case OPT_BURST:
		if (parse_u64(val, 1, MAX_BURST, &o->burst, why, sizeof(why))) {
			errf(err, errlen, "--burst: %s", why);
			return -1;
		}
		break;
	case OPT_PREFIX:
		return add_prefix(o, arg, err, errlen);
	case OPT_DEFAULT_CLASS:
		if (parse_class(val, &o->default_class, why, sizeof(why))) {
			errf(err, errlen, "--default-class: %s", why);
			return -1;
		}
		break;
	case OPT_SOURCE_CHECK:
		if (!strcmp(val, "strict")) {
			o->source_check = SHEDD_SRC_STRICT;
		} else if (!strcmp(val, "verify")) {
			o->source_check = SHEDD_SRC_VERIFY;
		} else if (!strcmp(val, "off")) {
			o->source_check = SHEDD_SRC_OFF;
		} else {
			errf(err, errlen, "--source-check: '%s' is not strict, verify or off", val);
			return -1;
		}
		break;
	case OPT_FLOOR:
		return set_floor(o, arg, err, errlen);
	case OPT_REJECT:
		return set_reject(o, arg, err, errlen);
	case OPT_RST_RATE:
		if (parse_u64(val, 0, MAX_RST_RATE_PER_SEC, &o->rst_rate_per_sec,
			      why, sizeof(why))) {
			errf(err, errlen, "--rst-rate: %s", why);
			return -1;
		}
		break;
	case OPT_VERIFY:
		return set_verify(o, arg, &st->verify_given, err, errlen);
	case OPT_FAIR:
		return set_fair(o, arg, err, errlen);
	case OPT_FAIR_LEVELS:
		return set_fair_levels(o, arg, err, errlen);
	case OPT_HANDOFF:
		if (!strcmp(val, "auto")) {
			o->handoff = HANDOFF_AUTO;
		} else if (!strcmp(val, "tc")) {
			o->handoff = HANDOFF_TC;
		} else if (!strcmp(val, "kernel")) {
			o->handoff = HANDOFF_KERNEL;
		} else {
			errf(err, errlen, "--handoff: '%s' is not auto, tc or kernel", val);
			return -1;
		}
		break;
	case OPT_COOKIE_RATE:
		if (parse_u64(val, 0, MAX_COOKIE_RATE_PER_SEC, &o->cookie_rate_per_sec,
			      why, sizeof(why))) {
			errf(err, errlen, "--cookie-rate: %s", why);
			return -1;
		}
		break;
	case OPT_XDP_MODE:
		if (!strcmp(val, "native")) {
			o->xdp_mode = XDP_MODE_NATIVE;
		} else if (!strcmp(val, "generic")) {
			o->xdp_mode = XDP_MODE_GENERIC;
		} else {
			errf(err, errlen, "--xdp-mode: '%s' is not native or generic", val);
			return -1;
		}
		o->xdp_mode_set = true;
		break;
	case OPT_CONN_LIMIT:
		if (!strcmp(val, "auto")) {
			o->conn_limit = true;
		} else if (!strcmp(val, "off")) {
			o->conn_limit = false;
		} else {
			errf(err, errlen, "--conn-limit: '%s' is not auto or off", val);
			return -1;
		}
		break;
	case OPT_RECALL:
		if (!strcmp(val, "off")) {
			o->recall_rate = 0;
		} else if (parse_u64(val, 1, MAX_RECALL_RATE, &o->recall_rate, why, sizeof(why))) {
			errf(err, errlen, "--recall: %s (or off)", why);
			return -1;
		}
		break;
	case OPT_NIC_VLAN_TAG:
		if (!strcmp(val, "auto")) {
			o->nic_vlan_tag = true;
		} else if (!strcmp(val, "off")) {
			o->nic_vlan_tag = false;
		} else {
			errf(err, errlen, "--nic-vlan-tag: '%s' is not auto or off", val);
			return -1;
		}
		break;
	case OPT_TICK_MS:
		if (parse_u64(val, 10, MAX_TICK_MS, &v, why, sizeof(why))) {
			errf(err, errlen, "--tick-ms: %s", why);
			return -1;
		}
		o->tick_ms = (__u32)v;
		break;
	case OPT_METRICS_ADDR:
		if (!*val || strlen(val) >= sizeof(o->metrics_addr) ||
		    (strcmp(val, "none") && !strrchr(val, ':'))) {
			errf(err, errlen, "--metrics-addr: '%s' is not HOST:PORT or none", val);
			return -1;
		}
		strcpy(o->metrics_addr, val);
		o->metrics_addr_set = true;
		break;
	case OPT_USER:
		if (parse_user(val, &o->run_uid, &o->run_gid, o->user_name, sizeof(o->user_name),
			       err, errlen))
			return -1;
		o->user_set = true;
		break;
	case OPT_NETNS:
		if (!*val || strchr(val, '/') || strlen(val) >= sizeof(o->netns)) {
			errf(err, errlen, "--netns: '%s' is not a namespace name", val);
			return -1;
		}
		strcpy(o->netns, val);
		break;
	case OPT_CONFIG:
		if (!*val || strlen(val) >= sizeof(o->config)) {
			errf(err, errlen, "--config: '%s' is not a usable path", val);
			return -1;
		}
		strcpy(o->config, val);
		break;
	case OPT_KEEP_ON_EXIT:
		o->keep_on_exit = flag;
		break;
	case OPT_FORCE:
		o->force = flag;
		break;
	case OPT_REMOVE:
		o->remove = true;
		break;
	case OPT_CHECK_CONFIG:
		o->check_config = true;
		break;
	case OPT_VERBOSE:
		if (!val) {
			o->verbose++;
			break;
		}
		if (parse_u64(val, 0, 3, &v, why, sizeof(why))) {
			errf(err, errlen, "--verbose: %s", why);
			return -1;
		}
		o->verbose = (int)v;
		break;
	case OPT_HELP:
	case OPT_VERSION:
	case OPT_COUNT:
		break;
	}
	return 0;
}

static int default_read_file(const char *path, char **buf, size_t *len, char *err,
			     size_t errlen)
{
	FILE *f = fopen(path, "r");
	size_t cap = 0, n = 0, got;
	char *b = NULL, *grown;

	if (!f) {
		errf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	do {
		if (n + 4096 > cap) {
			if (cap >= (1 << 20)) {
				errf(err, errlen, "%s: larger than 1 MiB", path);
				goto fail;
			}
			grown = realloc(b, cap = cap ? cap * 2 : 8192);
			if (!grown) {
				errf(err, errlen, "%s: out of memory", path);
				goto fail;
			}
			b = grown;
		}
		got = fread(b + n, 1, cap - n, f);
		n += got;
	} while (got);
	if (ferror(f)) {
		errf(err, errlen, "%s: %s", path, strerror(errno));
		goto fail;
	}
	fclose(f);
	*buf = b;
	*len = n;
	return 0;
fail:
	fclose(f);
	free(b);
	return -1;
}

int (*options_read_file)(const char *path, char **buf, size_t *len, char *err,
			 size_t errlen) = default_read_file;

/* Checks across options: which names the option at fault in @bad. */
static int options_check(struct options_state *st, enum opt_id *bad, char *err, size_t errlen)
{
	struct shedd_options *o = st->o;
	double floors = 0;
	int c;

	if (!o->iface[0]) {
		*bad = OPT_IFACE;
		errf(err, errlen, "--iface is required (see --help)");
		return -1;
	}
	*bad = OPT_BACKEND_PORT;
	if (check_backend_ports(o, err, errlen))
		return -1;
	/* Both given: a contradiction. One alone past the other's default is
	 * clamped by the controller (min_rate is capped at max_rate). */
	if ((st->cli_seen[OPT_MIN_RATE] || st->line[OPT_MIN_RATE]) &&
	    (st->cli_seen[OPT_MAX_RATE] || st->line[OPT_MAX_RATE]) && o->min_rate > o->max_rate) {
		*bad = st->line[OPT_MIN_RATE] > st->line[OPT_MAX_RATE] ? OPT_MIN_RATE : OPT_MAX_RATE;
		errf(err, errlen, "--min-rate %llu is above --max-rate %llu",
		     (unsigned long long)o->min_rate, (unsigned long long)o->max_rate);
		return -1;
	}
	/* With the controller --rate is its start, which the bounds would
	 * clamp: given with a bound it passes, a contradiction. (A fixed
	 * --rate has no bounds; the controller runs with --rate only when
	 * --controller aimd is given.) */
	if (st->controller_set && o->controller == CONTROLLER_AIMD &&
	    (st->cli_seen[OPT_RATE] || st->line[OPT_RATE])) {
		bool min_given = st->cli_seen[OPT_MIN_RATE] || st->line[OPT_MIN_RATE];
		bool max_given = st->cli_seen[OPT_MAX_RATE] || st->line[OPT_MAX_RATE];

		*bad = OPT_RATE;
		if (max_given && o->rate_per_sec > o->max_rate) {
			errf(err, errlen, "--rate %llu is above --max-rate %llu: the controller "
			     "starts within its bounds", (unsigned long long)o->rate_per_sec,
			     (unsigned long long)o->max_rate);
			return -1;
		}
		if (min_given && o->rate_per_sec < o->min_rate) {
			errf(err, errlen, "--rate %llu is below --min-rate %llu: the controller "
			     "starts within its bounds", (unsigned long long)o->rate_per_sec,
			     (unsigned long long)o->min_rate);
			return -1;
		}
	}
	/* A lease that runs out between two ticks of a live daemon would
	 * relax its rates while it runs. */
	if (o->lease_ns && o->lease_ns < 3ULL * o->tick_ms * 1000000ULL) {
		*bad = OPT_LEASE;
		errf(err, errlen, "--lease %llums is less than 3 ticks of %ums: a live daemon "
		     "would let it run out", (unsigned long long)(o->lease_ns / 1000000),
		     o->tick_ms);
		return -1;
	}
	*bad = OPT_PREFIX;
	if (check_prefix_limits(o, err, errlen))
		return -1;
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		floors += o->floor[c];
	if (floors > 1.0 + 1e-9) {
		*bad = OPT_FLOOR;
		errf(err, errlen, "--floor: the floors add up to %.2f; they must not pass 1", floors);
		return -1;
	}
	return 0;
}

static const struct opt_def *by_getopt(int opt)
{
	int i;

	if (opt >= 256 && opt < 256 + OPT_COUNT)
		return &options_table[opt - 256];
	for (i = 0; i < OPT_COUNT; i++)
		if (opt && options_table[i].short_name == opt)
			return &options_table[i];
	return NULL;
}

/* Run getopt over argv: with @st NULL only --config, --help and --version
 * are looked at (the first pass), else every option is applied. */
static int getopt_pass(int argc, char **argv, struct options_state *st, struct shedd_options *o,
		       char *out, size_t outlen, char *err, size_t errlen)
{
	struct option long_opts[OPT_COUNT + 1];
	char shorts[3 * OPT_COUNT + 2];
	size_t ns = 0;
	int i, opt;

	shorts[ns++] = ':';
	for (i = 0; i < OPT_COUNT; i++) {
		const struct opt_def *d = &options_table[i];

		long_opts[i] = (struct option){ d->name,
			d->flags & OPTF_FLAG ? no_argument : required_argument, NULL, 256 + i };
		if (d->short_name) {
			shorts[ns++] = d->short_name;
			if (!(d->flags & OPTF_FLAG))
				shorts[ns++] = ':';
		}
	}
	long_opts[OPT_COUNT] = (struct option){ 0 };
	shorts[ns] = '\0';
	optind = 0; /* GNU getopt: start afresh (tests parse many times) */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, shorts, long_opts, NULL)) != -1) {
		const struct opt_def *d = by_getopt(opt);

		if (opt == ':') {
			errf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			return OPTIONS_ERROR;
		}
		if (!d) {
			errf(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
			return OPTIONS_ERROR;
		}
		if (!st) {
			if (d->id == OPT_HELP) {
				options_usage(out, outlen);
				return OPTIONS_EXIT;
			}
			if (d->id == OPT_VERSION) {
				snprintf(out, outlen, "shedd %s\n", SHEDD_VERSION);
				return OPTIONS_EXIT;
			}
			if (d->id == OPT_CONFIG) {
				struct options_state tmp = { .o = o };

				if (options_apply(&tmp, d, optarg, err, errlen))
					return OPTIONS_ERROR;
			}
			continue;
		}
		/* A list on the command line replaces the file's. */
		if ((d->flags & OPTF_REPLACE) && !st->cli_seen[d->id]) {
			if (d->id == OPT_PORT)
				o->nr_ports = 0;
			else if (d->id == OPT_BACKEND_PORT)
				o->nr_backend_ports = 0;
			else if (d->id == OPT_PREFIX)
				options_free(o);
		}
		st->cli_seen[d->id] = true;
		st->line[d->id] = 0;
		if (options_apply(st, d, optarg, err, errlen))
			return OPTIONS_ERROR;
	}
	if (optind < argc) {
		errf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
		return OPTIONS_ERROR;
	}
	return OPTIONS_RUN;
}

/* The config file's sections: [shedd], [controller], [verify], the
 * sections of the table, and [class.NAME] for floor, reject, verify,
 * prefix, fair and fair_levels of one class ("floor = 0.2" in
 * [class.NAME] is "floor = NAME=0.2" in [shedd]). A section is known or
 * refused on its own line, keys or none. */
static int config_section(void *user, const char *name, char *why, size_t whylen)
{
	char bad[200];
	__u32 c;

	(void)user;
	if (!strcmp(name, "shedd") || !strcmp(name, "controller") || !strcmp(name, "verify"))
		return 0;
	if (!strncmp(name, "class.", 6) && !parse_class(name + 6, &c, bad, sizeof(bad)))
		return 0;
	if (!strncmp(name, "class.", 6))
		errf(why, whylen, "unknown section [%s]: %s", name, bad);
	else
		errf(why, whylen, "unknown section [%s] (shedd, controller, verify, class.NAME)",
		     name);
	return -1;
}

/* A key = value pair of the config file: the option of that key, through
 * the same parser as on the command line. Repeated keys add to lists
 * (port, prefix, ...); any other key given twice is an error, as is an
 * unknown section or key. */
static int config_pair(void *user, const char *section, const char *key, const char *value,
		       int line, char *err, size_t errlen)
{
	struct options_state *st = user;
	const struct opt_def *d = options_by_key(key);
	char arg[512], why[400];
	const char *cls = NULL, *val = value;
	__u32 c;

	if (!*section) {
		errf(err, errlen, "key '%s' comes before any [section] (start with [shedd])", key);
		return -1;
	} else if (!strncmp(section, "class.", 6)) {
		cls = section + 6;
		if (parse_class(cls, &c, why, sizeof(why))) {
			errf(err, errlen, "[%s]: %s", section, why);
			return -1;
		}
		if (!d || (d->id != OPT_FLOOR && d->id != OPT_REJECT && d->id != OPT_VERIFY &&
			   d->id != OPT_PREFIX && d->id != OPT_FAIR && d->id != OPT_FAIR_LEVELS)) {
			errf(err, errlen, "unknown key '%s' in [%s] (floor, reject, verify, prefix, "
			     "fair, fair_levels)", key, section);
			return -1;
		}
		/* The class's own value, as the option takes it. */
		if (d->id == OPT_PREFIX)
			snprintf(arg, sizeof(arg), "%s=%s", value, cls);
		else
			snprintf(arg, sizeof(arg), "%s=%s", cls, value);
		val = arg;
	} else if (strcmp(section, "shedd") && strcmp(section, "controller") &&
		   strcmp(section, "verify")) {
		errf(err, errlen, "unknown section [%s] (shedd, controller, verify, class.NAME)",
		     section);
		return -1;
	} else if (!d) {
		errf(err, errlen, "unknown key '%s' in [%s]", key, section);
		return -1;
	} else if (strcmp(section, d->section)) {
		errf(err, errlen, "key '%s' belongs in [%s]", key, d->section);
		return -1;
	}
	if (!*value) {
		errf(err, errlen, "key '%s' has no value", key);
		return -1;
	}
	/* Once each, but lists and per-class values may repeat. */
	if (st->line[d->id] && !(d->flags & OPTF_REPEAT)) {
		errf(err, errlen, "key '%s' is given twice (also on line %d)", key,
		     st->line[d->id]);
		return -1;
	}
	if (options_apply(st, d, val, why, sizeof(why))) {
		/* "--rate: ..." reads "rate: ..." here, the key's name. */
		const char *msg = why, *colon = strchr(why, ':');

		if (!strncmp(why, "--", 2) && colon)
			msg = colon + 1 + (colon[1] == ' ');
		else if (!strncmp(why, "--", 2))
			msg = why + 2;
		errf(err, errlen, "%s: %s", key, msg);
		return -1;
	}
	st->line[d->id] = line;
	return 0;
}

int options_parse(int argc, char **argv, struct shedd_options *o,
		  char *out, size_t outlen, char *err, size_t errlen)
{
	struct options_state st;
	struct shedd_options first;
	enum opt_id bad;
	char why[400];
	int ret, c;

	/* First pass: --help, --version and --config; then the defaults, the
	 * file, and the command line over it. */
	memset(&first, 0, sizeof(first));
	ret = getopt_pass(argc, argv, NULL, &first, out, outlen, err, errlen);
	options_init(&st, o);
	if (ret != OPTIONS_RUN)
		return ret;
	if (first.config[0]) {
		char *buf = NULL;
		size_t len = 0;

		strcpy(o->config, first.config);
		if (options_read_file(o->config, &buf, &len, err, errlen))
			return OPTIONS_ERROR;
		st.file = o->config;
		ret = config_read(o->config, buf, len, config_section, config_pair, &st, err,
				  errlen);
		free(buf);
		if (ret)
			return OPTIONS_ERROR;
	}
	st.cli = true;
	ret = getopt_pass(argc, argv, &st, o, out, outlen, err, errlen);
	if (ret != OPTIONS_RUN)
		return ret;
	if (options_check(&st, &bad, why, sizeof(why))) {
		/* Name the file's line when the value at fault came from it. */
		if (st.line[bad])
			errf(err, errlen, "%s:%d: %s", o->config, st.line[bad], why);
		else
			errf(err, errlen, "%s", why);
		return OPTIONS_ERROR;
	}
	/* A fixed --rate means no controller, unless one is asked for. */
	if (!st.controller_set)
		o->controller = o->rate_set ? CONTROLLER_OFF : CONTROLLER_AIMD;
	/* Asked for, not only the default: a kernel that cannot verify then
	 * refuses to start rather than run without it. */
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		if ((st.verify_given & (1U << c)) && o->verify[c] != SHEDD_VERIFY_OFF)
			o->verify_explicit = true;
	o->verify_named = st.verify_given;
	if (!o->latency_socket[0])
		snprintf(o->latency_socket, sizeof(o->latency_socket), "/run/shedd/%s.sock", o->iface);
	return OPTIONS_RUN;
}
