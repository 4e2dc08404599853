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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "options.h"

static const char *const class_names[SHEDD_NR_CLASSES] = {
	[SHEDD_CRITICAL_PLUS] = "critical_plus",
	[SHEDD_CRITICAL] = "critical",
	[SHEDD_SHEDDABLE_PLUS] = "sheddable_plus",
	[SHEDD_SHEDDABLE] = "sheddable",
};

static const char usage_text[] =
	"Usage: shedd --iface IFACE [options]\n"
	"Sheds new TCP connections (SYNs) at XDP, by priority class, so the\n"
	"service behind IFACE keeps its goodput under overload.\n"
	"\n"
	"  -i, --iface IFACE          interface to protect (required)\n"
	"  -p, --port PORT[,PORT...]  protected destination ports (repeatable;\n"
	"                             default: every port)\n"
	"      --backend-port PORT[,PORT...]  listeners of the service behind the\n"
	"                             protected ports (an upstream on this host):\n"
	"                             their accept queues and drops are overload\n"
	"                             signals; their SYNs are never shed (repeatable;\n"
	"                             needs --port)\n"
	"  -r, --rate SYN_PER_SEC     total admitted SYN rate: fixed with --controller\n"
	"                             off, the start with aimd (default 10000)\n"
	"  -c, --controller off|aimd  find the rate from queue delay (default: aimd\n"
	"                             without --rate, off with it)\n"
	"      --target-delay DUR     accept-queue sojourn target (default 5ms)\n"
	"      --interval DUR         how long above target is overload (100ms)\n"
	"      --min-rate N           the controller's lower bound (default 10)\n"
	"      --max-rate N           its upper bound (default 100000)\n"
	"      --step N               additive increase per 100 ms (default 1 % of\n"
	"                             the last good rate)\n"
	"      --depth-frac F         queue depth over backlog that is overload (0.7)\n"
	"      --ramp F,F,...|none    recovery stages of the last good rate\n"
	"                             (default 0.1,0.5,1)\n"
	"      --ramp-hold DUR        how long each stage is held (default 1s)\n"
	"      --latency-target DUR|auto|off  service p99 above DUR is overload;\n"
	"                             auto (default): derived from the service's\n"
	"                             calm latency; off: latency is no signal\n"
	"  -L, --latency-socket PATH  UNIX datagram socket for service latency\n"
	"                             samples or log lines of nginx and HAProxy\n"
	"                             (default /run/shedd/IFACE.sock)\n"
	"      --latency-group GROUP  group of the latency socket (mode 0660), so a\n"
	"                             server's workers can write to it (www-data,\n"
	"                             haproxy); a name or a number (default root's)\n"
	"  -b, --burst N              total bucket depth in SYNs (default rate/10)\n"
	"  -P, --prefix CIDR=CLASS    source prefix to class (repeatable)\n"
	"  -d, --default-class CLASS  class of unmatched sources (default sheddable)\n"
	"  -f, --floor CLASS=FRACTION reserved share of the rate (default 0.10 each)\n"
	"  -R, --reject drop|rst|CLASS=drop|rst\n"
	"                             how shed SYNs are refused (default drop)\n"
	"      --rst-rate N           RSTs sent per second at most, over all CPUs\n"
	"                             (default 10000; 0: shed SYNs are only dropped)\n"
	"      --verify CLASS=MODE[,CLASS=MODE...]  verified admission per class\n"
	"                             (repeatable; MODE off|shedding|always, or a bare\n"
	"                             MODE for every class; default: sheddable_plus and\n"
	"                             sheddable shedding, critical_plus and critical off)\n"
	"      --handoff auto|tc|kernel  how a proven connection reaches the listener\n"
	"                             (default auto: tc on kernels >= 6.9, else off;\n"
	"                             kernel sets tcp_syncookies=2 and tcp_timestamps=2)\n"
	"      --cookie-rate N        cookie SYN-ACKs per second per CPU (default\n"
	"                             4000000; 0: none, SYNs to verify are shed)\n"
	"      --verify-hold DUR      how long a CPU that shed a class keeps answering\n"
	"                             it with cookies (shedding mode; default 10s)\n"
	"      --metrics-addr ADDR:PORT|none  Prometheus metrics over HTTP at /metrics\n"
	"                             ([IPV6]:PORT too; default 127.0.0.1:9464)\n"
	"  -m, --xdp-mode native|generic  XDP attach mode (default native)\n"
	"  -t, --tick-ms MS           control tick (default 100)\n"
	"  -n, --netns NAME           run in network namespace /run/netns/NAME\n"
	"  -k, --keep-on-exit         leave the program shedding when shedd exits\n"
	"      --force                replace another program's XDP attachment\n"
	"      --remove               detach shedd from IFACE, remove its pins, exit\n"
	"  -v, --verbose              more output (libbpf and verifier log)\n"
	"  -h, --help                 this text\n"
	"  -V, --version              print the version\n"
	"\n"
	"Classes, most important first: critical_plus, critical, sheddable_plus,\n"
	"sheddable. Pins: /sys/fs/bpf/shedd/IFACE/{link,stats,rates,...}, in another\n"
	"network namespace /sys/fs/bpf/shedd/ns:INODE/IFACE/ (the latency socket too:\n"
	"/run/shedd/ns:INODE/IFACE.sock). One shedd per interface: a second is refused.\n"
	"DUR is a number with ns, us, ms or s (a bare number is ms).\n";

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
	if (o->nr_prefixes >= 2 * MAX_PREFIXES) {
		errf(err, errlen, "--prefix: at most %d prefixes per family", MAX_PREFIXES);
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

static int set_floor(struct shedd_options *o, char *arg, char *err, size_t errlen)
{
	char *name, *val;
	double f;
	__u32 c;

	if (split_eq(arg, &name, &val) || parse_class(name, &c, err, errlen) ||
	    parse_fraction(val, &f, err, errlen)) {
		errf(err, errlen, "--floor: expected CLASS=FRACTION with FRACTION in [0, 1]");
		return -1;
	}
	o->floor[c] = f;
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

static void options_init(struct shedd_options *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->rate_per_sec = DEFAULT_RATE_PER_SEC;
	o->controller = CONTROLLER_AIMD;
	o->nr_ramp = -1;
	o->default_class = SHEDD_SHEDDABLE;
	o->tick_ms = DEFAULT_TICK_MS;
	o->rst_rate_per_sec = DEFAULT_RST_RATE_PER_SEC;
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		o->floor[c] = DEFAULT_FLOOR;
	/* Spoofed floods hit the classes of unknown sources: verify those
	 * while they are shed; known, critical sources are charged directly. */
	o->verify[SHEDD_SHEDDABLE_PLUS] = SHEDD_VERIFY_SHEDDING;
	o->verify[SHEDD_SHEDDABLE] = SHEDD_VERIFY_SHEDDING;
	o->cookie_rate_per_sec = DEFAULT_COOKIE_RATE_PER_SEC;
	o->verify_hold_ns = DEFAULT_VERIFY_HOLD_NS;
	snprintf(o->metrics_addr, sizeof(o->metrics_addr), "127.0.0.1:9464");
}

void options_free(struct shedd_options *o)
{
	free(o->prefixes);
	o->prefixes = NULL;
	o->nr_prefixes = 0;
}

enum {
	OPT_FORCE = 256,
	OPT_REMOVE,
	OPT_TARGET_DELAY,
	OPT_INTERVAL,
	OPT_MIN_RATE,
	OPT_MAX_RATE,
	OPT_STEP,
	OPT_DEPTH_FRAC,
	OPT_RAMP,
	OPT_RAMP_HOLD,
	OPT_LATENCY_TARGET,
	OPT_RST_RATE,
	OPT_VERIFY,
	OPT_HANDOFF,
	OPT_COOKIE_RATE,
	OPT_VERIFY_HOLD,
	OPT_BACKEND_PORT,
	OPT_LATENCY_GROUP,
	OPT_METRICS_ADDR,
};

static const struct option long_opts[] = {
	{ "iface", required_argument, NULL, 'i' },
	{ "port", required_argument, NULL, 'p' },
	{ "backend-port", required_argument, NULL, OPT_BACKEND_PORT },
	{ "rate", required_argument, NULL, 'r' },
	{ "controller", required_argument, NULL, 'c' },
	{ "target-delay", required_argument, NULL, OPT_TARGET_DELAY },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "min-rate", required_argument, NULL, OPT_MIN_RATE },
	{ "max-rate", required_argument, NULL, OPT_MAX_RATE },
	{ "step", required_argument, NULL, OPT_STEP },
	{ "depth-frac", required_argument, NULL, OPT_DEPTH_FRAC },
	{ "ramp", required_argument, NULL, OPT_RAMP },
	{ "ramp-hold", required_argument, NULL, OPT_RAMP_HOLD },
	{ "latency-target", required_argument, NULL, OPT_LATENCY_TARGET },
	{ "latency-socket", required_argument, NULL, 'L' },
	{ "latency-group", required_argument, NULL, OPT_LATENCY_GROUP },
	{ "burst", required_argument, NULL, 'b' },
	{ "prefix", required_argument, NULL, 'P' },
	{ "default-class", required_argument, NULL, 'd' },
	{ "floor", required_argument, NULL, 'f' },
	{ "reject", required_argument, NULL, 'R' },
	{ "rst-rate", required_argument, NULL, OPT_RST_RATE },
	{ "verify", required_argument, NULL, OPT_VERIFY },
	{ "handoff", required_argument, NULL, OPT_HANDOFF },
	{ "cookie-rate", required_argument, NULL, OPT_COOKIE_RATE },
	{ "verify-hold", required_argument, NULL, OPT_VERIFY_HOLD },
	{ "metrics-addr", required_argument, NULL, OPT_METRICS_ADDR },
	{ "xdp-mode", required_argument, NULL, 'm' },
	{ "tick-ms", required_argument, NULL, 't' },
	{ "netns", required_argument, NULL, 'n' },
	{ "keep-on-exit", no_argument, NULL, 'k' },
	{ "force", no_argument, NULL, OPT_FORCE },
	{ "remove", no_argument, NULL, OPT_REMOVE },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ 0 },
};

static const char *long_opt_name(int val)
{
	const struct option *l;

	for (l = long_opts; l->name; l++)
		if (l->val == val)
			return l->name;
	return "?";
}

int options_parse(int argc, char **argv, struct shedd_options *o,
		  char *out, size_t outlen, char *err, size_t errlen)
{
	char why[200], arg[512];
	bool controller_set = false;
	unsigned int verify_given = 0;
	double floors = 0;
	__u64 v;
	int opt, c;

	options_init(o);
	optind = 0; /* GNU getopt: start afresh (tests parse many times) */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":i:p:r:c:L:b:P:d:f:R:m:t:n:kvhV",
				  long_opts, NULL)) != -1) {
		/* The helpers cut their argument up: give them a copy, argv
		 * stays as it was. */
		if (optarg && snprintf(arg, sizeof(arg), "%s", optarg) >= (int)sizeof(arg)) {
			errf(err, errlen, "'%.40s...' is too long", optarg);
			return OPTIONS_ERROR;
		}
		switch (opt) {
		case 'i':
			if (!iface_name_valid(optarg)) {
				errf(err, errlen,
				     "--iface: '%s' is not an interface name (1 to %d characters, "
				     "no '/', ':' or spaces, not '.' or '..')",
				     optarg, IF_NAMESIZE - 1);
				return OPTIONS_ERROR;
			}
			strcpy(o->iface, optarg);
			break;
		case 'p':
			if (add_ports("port", o->ports, &o->nr_ports, MAX_PORTS, arg, err, errlen))
				return OPTIONS_ERROR;
			break;
		case OPT_BACKEND_PORT:
			if (add_ports("backend-port", o->backend_ports, &o->nr_backend_ports,
				      MAX_BACKEND_PORTS, arg, err, errlen))
				return OPTIONS_ERROR;
			break;
		case 'r':
			if (parse_u64(optarg, 0, MAX_TOTAL_RATE_PER_SEC, &o->rate_per_sec, why, sizeof(why))) {
				errf(err, errlen, "--rate: %s", why);
				return OPTIONS_ERROR;
			}
			o->rate_set = true;
			break;
		case 'c':
			if (!strcmp(optarg, "off")) {
				o->controller = CONTROLLER_OFF;
			} else if (!strcmp(optarg, "aimd")) {
				o->controller = CONTROLLER_AIMD;
			} else {
				errf(err, errlen, "--controller: '%s' is not off or aimd", optarg);
				return OPTIONS_ERROR;
			}
			controller_set = true;
			break;
		case OPT_TARGET_DELAY:
		case OPT_INTERVAL:
		case OPT_RAMP_HOLD:
		case OPT_VERIFY_HOLD: {
			__u64 *dst = opt == OPT_TARGET_DELAY ? &o->target_delay_ns :
				     opt == OPT_INTERVAL     ? &o->interval_ns :
				     opt == OPT_RAMP_HOLD    ? &o->ramp_hold_ns :
							       &o->verify_hold_ns;

			why[0] = '\0';
			if (parse_duration(optarg, dst, why, sizeof(why)) || *dst == 0) {
				errf(err, errlen, "--%s: %s", long_opt_name(opt),
				     *why ? why : "must be more than 0");
				return OPTIONS_ERROR;
			}
			break;
		}
		case OPT_LATENCY_TARGET:
			o->latency_target_ns = 0;
			o->latency_target_off = !strcmp(optarg, "off");
			if (o->latency_target_off || !strcmp(optarg, "auto"))
				break;
			if (parse_duration(optarg, &o->latency_target_ns, why, sizeof(why)) ||
			    !o->latency_target_ns) {
				errf(err, errlen, "--latency-target: '%s' is not a target "
				     "(a duration such as 200ms, auto or off)", optarg);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_MIN_RATE:
		case OPT_MAX_RATE:
		case OPT_STEP:
			if (parse_u64(optarg, 1, MAX_TOTAL_RATE_PER_SEC, &v, why, sizeof(why))) {
				errf(err, errlen, "--%s: %s", long_opt_name(opt), why);
				return OPTIONS_ERROR;
			}
			*(opt == OPT_MIN_RATE ? &o->min_rate :
			  opt == OPT_MAX_RATE ? &o->max_rate : &o->step) = v;
			break;
		case OPT_DEPTH_FRAC:
			if (parse_fraction(optarg, &o->depth_frac, why, sizeof(why)) ||
			    o->depth_frac == 0) {
				errf(err, errlen, "--depth-frac: '%s' is not a fraction in (0, 1]", optarg);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_RAMP:
			if (parse_ramp(o, arg, err, errlen))
				return OPTIONS_ERROR;
			break;
		case 'L':
			if (!*optarg || strlen(optarg) >= sizeof(o->latency_socket)) {
				errf(err, errlen, "--latency-socket: '%s' is not a usable path", optarg);
				return OPTIONS_ERROR;
			}
			strcpy(o->latency_socket, optarg);
			o->latency_socket_set = true;
			break;
		case OPT_LATENCY_GROUP:
			if (parse_group(optarg, &o->latency_gid, err, errlen))
				return OPTIONS_ERROR;
			o->latency_group_set = true;
			break;
		case 'b':
			if (parse_u64(optarg, 1, MAX_BURST, &o->burst, why, sizeof(why))) {
				errf(err, errlen, "--burst: %s", why);
				return OPTIONS_ERROR;
			}
			break;
		case 'P':
			if (add_prefix(o, arg, err, errlen))
				return OPTIONS_ERROR;
			break;
		case 'd':
			if (parse_class(optarg, &o->default_class, why, sizeof(why))) {
				errf(err, errlen, "--default-class: %s", why);
				return OPTIONS_ERROR;
			}
			break;
		case 'f':
			if (set_floor(o, arg, err, errlen))
				return OPTIONS_ERROR;
			break;
		case 'R':
			if (set_reject(o, arg, err, errlen))
				return OPTIONS_ERROR;
			break;
		case OPT_RST_RATE:
			if (parse_u64(optarg, 0, MAX_RST_RATE_PER_SEC, &o->rst_rate_per_sec,
				      why, sizeof(why))) {
				errf(err, errlen, "--rst-rate: %s", why);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_VERIFY:
			if (set_verify(o, arg, &verify_given, err, errlen))
				return OPTIONS_ERROR;
			break;
		case OPT_HANDOFF:
			if (!strcmp(optarg, "auto")) {
				o->handoff = HANDOFF_AUTO;
			} else if (!strcmp(optarg, "tc")) {
				o->handoff = HANDOFF_TC;
			} else if (!strcmp(optarg, "kernel")) {
				o->handoff = HANDOFF_KERNEL;
			} else {
				errf(err, errlen, "--handoff: '%s' is not auto, tc or kernel", optarg);
				return OPTIONS_ERROR;
			}
			break;
		case OPT_COOKIE_RATE:
			if (parse_u64(optarg, 0, MAX_COOKIE_RATE_PER_SEC, &o->cookie_rate_per_sec,
				      why, sizeof(why))) {
				errf(err, errlen, "--cookie-rate: %s", why);
				return OPTIONS_ERROR;
			}
			break;
		case 'm':
			if (!strcmp(optarg, "native")) {
				o->xdp_mode = XDP_MODE_NATIVE;
			} else if (!strcmp(optarg, "generic")) {
				o->xdp_mode = XDP_MODE_GENERIC;
			} else {
				errf(err, errlen, "--xdp-mode: '%s' is not native or generic", optarg);
				return OPTIONS_ERROR;
			}
			break;
		case 't':
			if (parse_u64(optarg, 10, MAX_TICK_MS, &v, why, sizeof(why))) {
				errf(err, errlen, "--tick-ms: %s", why);
				return OPTIONS_ERROR;
			}
			o->tick_ms = (__u32)v;
			break;
		case 'n':
			if (!*optarg || strchr(optarg, '/') || strlen(optarg) >= sizeof(o->netns)) {
				errf(err, errlen, "--netns: '%s' is not a namespace name", optarg);
				return OPTIONS_ERROR;
			}
			strcpy(o->netns, optarg);
			break;
		case OPT_METRICS_ADDR:
			if (!*optarg || strlen(optarg) >= sizeof(o->metrics_addr)) {
				errf(err, errlen, "--metrics-addr: '%s' is not ADDR:PORT or none", optarg);
				return OPTIONS_ERROR;
			}
			strcpy(o->metrics_addr, optarg);
			break;
		case 'k':
			o->keep_on_exit = true;
			break;
		case OPT_FORCE:
			o->force = true;
			break;
		case OPT_REMOVE:
			o->remove = true;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			snprintf(out, outlen, "%s", usage_text);
			return OPTIONS_EXIT;
		case 'V':
			snprintf(out, outlen, "shedd %s\n", SHEDD_VERSION);
			return OPTIONS_EXIT;
		case ':':
			errf(err, errlen, "option '%s' needs a value", argv[optind - 1]);
			return OPTIONS_ERROR;
		default:
			errf(err, errlen, "unknown option '%s' (see --help)", argv[optind - 1]);
			return OPTIONS_ERROR;
		}
	}
	if (optind < argc) {
		errf(err, errlen, "unexpected argument '%s' (see --help)", argv[optind]);
		return OPTIONS_ERROR;
	}
	if (!o->iface[0]) {
		errf(err, errlen, "--iface is required (see --help)");
		return OPTIONS_ERROR;
	}
	/* A fixed --rate means no controller, unless one is asked for. */
	if (!controller_set)
		o->controller = o->rate_set ? CONTROLLER_OFF : CONTROLLER_AIMD;
	if (check_backend_ports(o, err, errlen))
		return OPTIONS_ERROR;
	if (o->min_rate && o->max_rate && o->min_rate > o->max_rate) {
		errf(err, errlen, "--min-rate %llu is above --max-rate %llu",
		     (unsigned long long)o->min_rate, (unsigned long long)o->max_rate);
		return OPTIONS_ERROR;
	}
	/* Asked for, not only the default: a kernel that cannot verify then
	 * refuses to start rather than run without it. */
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		if ((verify_given & (1U << c)) && o->verify[c] != SHEDD_VERIFY_OFF)
			o->verify_explicit = true;
	if (!o->latency_socket[0])
		snprintf(o->latency_socket, sizeof(o->latency_socket), "/run/shedd/%s.sock", o->iface);
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		floors += o->floor[c];
	if (floors > 1.0 + 1e-9) {
		errf(err, errlen, "--floor: the floors add up to %.2f; they must not pass 1", floors);
		return OPTIONS_ERROR;
	}
	return OPTIONS_RUN;
}
