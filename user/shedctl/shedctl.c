// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* shedctl.c - shedd's control for a person at a terminal, working from the
 * pins under /sys/fs/bpf/shedd/: status, a live view with the heavy hitters
 * of per-source fairness, manual prefixes, a pinned rate, detach. It works while shedd runs and after it died. Exit
 * codes: 0 done, 1 runtime failure, 2 usage error.
 */
#include <curses.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/libbpf.h>

#include "aimd.h"
#include "detach.h"
#include "fair_maps.h"
#include "options.h"
#include "pins.h"
#include "prefixes.h"
#include "status.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define MAX_ARGS 8
#define VIEW_LINES 48
#define VIEW_COLS 80

static const char usage_text[] =
	"Usage: shedctl [OPTIONS] COMMAND [ARGS]\n"
	"Inspect and steer shedd from its pins; works while shedd runs and after it died.\n"
	"\n"
	"Commands:\n"
	"  status [--json] [--interval DUR]   classes, limit, controller, signals\n"
	"  top [--class CLASS] [--json]       the same, refreshed, with the heavy hitters\n"
	"                                     of per-source fairness; q quits\n"
	"  prefix add CIDR CLASS              classify sources in CIDR as CLASS\n"
	"  prefix del CIDR                    remove a prefix added with shedctl\n"
	"  prefix list [--json]               every prefix, its class and origin\n"
	"  rate pin N                         hold the limit at N SYN/s\n"
	"  rate unpin                         give the limit back to the controller\n"
	"  detach                             detach shedd and remove its pins\n"
	"\n"
	"Options:\n"
	"  -i, --iface IF       shedd's interface (default: the only one with pins)\n"
	"  -n, --netns NAME     the network namespace /run/netns/NAME of the interface\n"
	"  -j, --json           status, top, prefix list: one JSON object\n"
	"  -c, --class CLASS    top: only the heavy hitters of CLASS\n"
	"  -t, --interval DUR   status, top: time between the two reads of the\n"
	"                       counters (default 1s; 100ms..60s)\n"
	"  -h, --help           this help, or a command's: shedctl COMMAND --help\n"
	"  -V, --version        print the version\n"
	"\n"
	"CLASS: critical_plus, critical, sheddable_plus, sheddable.\n"
	"Exit status: 0 done, 1 runtime failure, 2 usage error.\n";

static const char *const command_help[][2] = {
	{ "status", "Usage: shedctl status [--iface IF] [--netns NAME] [--json] [--interval DUR]\n"
		    "Per class offered, admitted and shed SYN/s (two reads of the counters\n"
		    "--interval apart), the limit, the controller's mode, stage and reasons,\n"
		    "the last signals, and whether the rate is pinned.\n" },
	{ "top", "Usage: shedctl top [--class CLASS] [--json] [--iface IF] [--netns NAME]\n"
		 "                   [--interval DUR]\n"
		 "The status, refreshed every --interval (1s), with the heavy hitters of\n"
		 "per-source fairness: the sources (addresses, IPv4 /24s, IPv6 /64s and\n"
		 "/48s) seen over their share in the last 5 s, the heaviest first, up to 10\n"
		 "per class, each with its estimated admissions/s, its level, the class's\n"
		 "limit at that level (/s) and its SYNs shed for fairness; q quits. With\n"
		 "--json, or when the output is not a terminal, the heavy hitters and each\n"
		 "class's fairness once. --class CLASS: that class only.\n" },
	{ "prefix", "Usage: shedctl prefix add CIDR CLASS [--iface IF] [--netns NAME]\n"
		    "       shedctl prefix del CIDR [--iface IF] [--netns NAME]\n"
		    "       shedctl prefix list [--json] [--iface IF] [--netns NAME]\n"
		    "add: sources in CIDR are classified as CLASS at once; the prefix wins\n"
		    "over a configured one and stays across shedd restarts. del: removes a\n"
		    "prefix added with shedctl (the configured class it replaced comes\n"
		    "back). list: every prefix the program classifies by, with its class\n"
		    "and origin (config or manual).\n" },
	{ "rate", "Usage: shedctl rate pin N [--iface IF] [--netns NAME]\n"
		  "       shedctl rate unpin [--iface IF] [--netns NAME]\n"
		  "pin: from its next tick shedd admits N SYN/s in all, split among the\n"
		  "classes as usual; the controller keeps measuring but does not set the\n"
		  "limit. unpin: the controller carries on from the pinned rate.\n" },
	{ "detach", "Usage: shedctl detach --iface IF [--netns NAME]\n"
		    "Detach shedd from IF and remove its pins, as shedd --iface IF --remove;\n"
		    "refused while a shedd runs there (stop it with SIGTERM instead).\n" },
};

struct cli {
	const char *iface;
	const char *netns;
	bool json;
	bool help;
	bool cls_set;       /* --class */
	__u32 cls;
	__u64 interval_ns;
	bool interval_set;
	const char *args[MAX_ARGS];
	int nargs;
};

/* What shedctl found in the pins: one snapshot for status and top. */
struct view {
	char iface[IF_NAMESIZE];
	char dir[PATH_MAX];
	bool running;
	bool have_ctl, have_cmd;
	bool have_tx, tx_blocked; /* settings.tx_blocked, when readable */
	struct shedd_ctl_state st;
	struct shedd_ctl_cmd cmd;
	struct shedd_stats a, b; /* two reads, dt apart */
	double dt;
	__u64 rates[SHEDD_NR_CLASSES];
	double age_s;            /* since ctl_state was written */
	__u64 read_ns;           /* when b was read */
	struct fair_view fair;   /* fair.have: the pins have the fairness maps */
	char fair_err[256];      /* why not */
	bool have_lease;         /* the pins have a lease map */
	struct lease_state lease; /* and what it says now */
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "shedctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'shedctl --help'.\n");
	return EXIT_USAGE;
}

static int runtime_error(const char *msg)
{
	fprintf(stderr, "shedctl: %s\n", msg);
	return EXIT_RUNTIME;
}

static int parse_cli(int argc, char **argv, struct cli *c)
{
	char why[256];
	int i;

	memset(c, 0, sizeof(*c));
	c->interval_ns = 1000000000ULL;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char **val = NULL;

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			c->help = true;
		} else if (!strcmp(a, "-V") || !strcmp(a, "--version")) {
			printf("shedctl %s\n", SHEDD_VERSION);
			exit(0);
		} else if (!strcmp(a, "-j") || !strcmp(a, "--json")) {
			c->json = true;
		} else if (!strcmp(a, "-i") || !strcmp(a, "--iface")) {
			val = &c->iface;
		} else if (!strcmp(a, "-n") || !strcmp(a, "--netns")) {
			val = &c->netns;
		} else if (!strcmp(a, "-c") || !strcmp(a, "--class")) {
			if (i + 1 >= argc)
				return usage_error("%s needs a value", a);
			if (parse_class(argv[++i], &c->cls, why, sizeof(why)))
				return usage_error("--class: %s", why);
			c->cls_set = true;
		} else if (!strcmp(a, "-t") || !strcmp(a, "--interval")) {
			if (i + 1 >= argc)
				return usage_error("%s needs a value", a);
			if (parse_duration(argv[++i], &c->interval_ns, why, sizeof(why)))
				return usage_error("--interval: %s", why);
			if (c->interval_ns < 100000000ULL || c->interval_ns > 60000000000ULL)
				return usage_error("--interval %s: must be 100ms..60s", argv[i]);
			c->interval_set = true;
		} else if (a[0] == '-' && a[1] && !(a[1] >= '0' && a[1] <= '9')) {
			return usage_error("unknown option %s", a);
		} else {
			if (c->nargs == MAX_ARGS)
				return usage_error("too many arguments at '%s'", a);
			c->args[c->nargs++] = a;
		}
		if (val) {
			if (i + 1 >= argc || !argv[i + 1][0])
				return usage_error("%s needs a value", a);
			*val = argv[++i];
		}
	}
	return 0;
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static __u64 real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

static void sleep_ns(__u64 ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ULL),
			       .tv_nsec = (long)(ns % 1000000000ULL) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Find and open the pins of the interface the command names. */
static int open_pins(const struct cli *c, struct pins *p, char *iface, size_t iface_len)
{
	char dir[PATH_MAX], err[512];

	if (pins_enter_netns(c->netns, err, sizeof(err)) ||
	    pins_find(dir, sizeof(dir), c->iface, iface, iface_len, err, sizeof(err)) ||
	    pins_open(p, dir, err, sizeof(err)))
		return runtime_error(err);
	return 0;
}

/* The fairness maps, opened for each read: pins of a shedd older than
 * them have none (fair.have false, fair_err says so), and a shedd
 * restarted meanwhile may have made them. */
static void fair_read(const char *dir, struct view *v)
{
	struct fair_maps m;

	v->fair_err[0] = '\0';
	if (fair_maps_open_pins(&m, dir, v->fair_err, sizeof(v->fair_err)) ||
	    fair_maps_read(&m, &v->fair, v->fair_err, sizeof(v->fair_err)))
		v->fair.have = false;
	fair_maps_close(&m);
}

/* The counters (the first time twice, @wait_ns apart; then against the
 * previous read), the rates, the controller's record and the command. */
static int view_read(struct pins *p, struct view *v, bool first, __u64 wait_ns)
{
	char err[512];
	__u64 t1;

	if (first) {
		if (pins_read_stats(p, &v->b, err, sizeof(err)))
			return runtime_error(err);
		v->read_ns = mono_ns();
	}
	sleep_ns(wait_ns);
	v->a = v->b;
	if (pins_read_stats(p, &v->b, err, sizeof(err)) ||
	    pins_read_rates(p, v->rates, err, sizeof(err)))
		return runtime_error(err);
	t1 = mono_ns();
	v->dt = (double)(t1 - v->read_ns) / 1e9;
	v->read_ns = t1;
	v->have_ctl = !pins_read_ctl(p, &v->st, err, sizeof(err));
	v->have_cmd = !pins_read_cmd(p, &v->cmd, err, sizeof(err));
	v->have_tx = !pins_read_tx_blocked(p, &v->tx_blocked, err, sizeof(err));
	{
		struct shedd_lease l;

		v->have_lease = !pins_read_lease(p, &l, err, sizeof(err));
		if (v->have_lease)
			status_lease(&l, v->rates, t1, &v->lease);
		/* What the program admits at now, the lease's climb included. */
		if (v->have_lease && v->lease.expired)
			memcpy(v->rates, v->lease.rate_per_sec, sizeof(v->rates));
	}
	v->age_s = v->have_ctl && v->st.written_ns && v->st.written_ns <= t1 ?
			   (double)(t1 - v->st.written_ns) / 1e9 : -1;
	v->running = pins_daemon_running(p);
	snprintf(v->dir, sizeof(v->dir), "%s", p->dir);
	fair_read(p->dir, v);
	return 0;
}

static double per_sec(__u64 a, __u64 b, double dt)
{
	return b >= a && dt > 0 ? (double)(b - a) / dt : 0;
}

struct class_row {
	double offered, admitted, shed, cookies;
};

static void class_rows(const struct view *v, struct class_row rows[SHEDD_NR_CLASSES + 1])
{
	int c;

	memset(rows, 0, sizeof(*rows) * (SHEDD_NR_CLASSES + 1));
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		const struct shedd_class_stats *a = &v->a.cls[c], *b = &v->b.cls[c];
		struct class_row *r = &rows[c];

		r->offered = per_sec(a->syn, b->syn, v->dt);
		r->admitted = per_sec(a->admitted, b->admitted, v->dt) +
			      per_sec(a->ack_admitted, b->ack_admitted, v->dt);
		r->shed = per_sec(a->dropped, b->dropped, v->dt) +
			  per_sec(a->rst_sent, b->rst_sent, v->dt);
		r->cookies = per_sec(a->cookie_sent, b->cookie_sent, v->dt);
		rows[SHEDD_NR_CLASSES].offered += r->offered;
		rows[SHEDD_NR_CLASSES].admitted += r->admitted;
		rows[SHEDD_NR_CLASSES].shed += r->shed;
		rows[SHEDD_NR_CLASSES].cookies += r->cookies;
	}
}

static const char *controller_name(const struct view *v)
{
	if (!v->have_ctl)
		return "unknown";
	return v->st.controller == SHEDD_CTL_FIXED ? "fixed" : "aimd";
}

static const char *mode_name(const struct view *v)
{
	if (!v->have_ctl || v->st.controller == SHEDD_CTL_FIXED)
		return "-";
	return v->st.mode <= AIMD_RECOVERING ? aimd_mode_name((enum aimd_mode)v->st.mode) : "?";
}

static const char *const why_names[] = { "sojourn", "depth", "overflow", "latency", "stall" };
#define NR_WHY (sizeof(why_names) / sizeof(why_names[0]))

static void why_list(const struct view *v, char *buf, size_t len, const char *sep)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < NR_WHY && off < len; i++)
		if (v->have_ctl && (v->st.why & (1U << i)))
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? sep : "",
						why_names[i]);
}

static bool pinned(const struct view *v)
{
	return v->have_cmd && (v->cmd.flags & SHEDD_CMD_RATE_PINNED) && v->cmd.pinned_mrate;
}

static double limit_now(const struct view *v)
{
	double sum = 0;
	int c;

	if (v->have_ctl && v->st.applied_mrate && !(v->have_lease && v->lease.expired))
		return (double)v->st.applied_mrate / 1000;
	for (c = 0; c < SHEDD_NR_CLASSES; c++)
		sum += (double)v->rates[c];
	return sum;
}

/* A line of the view, cut at VIEW_COLS columns on purpose. */
static void add_line(char lines[][VIEW_COLS + 1], int *n, int max, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void add_line(char lines[][VIEW_COLS + 1], int *n, int max, const char *fmt, ...)
{
	va_list ap;

	if (*n >= max)
		return;
	va_start(ap, fmt);
	vsnprintf(lines[(*n)++], VIEW_COLS + 1, fmt, ap);
	va_end(ap);
}

/* The human view, one line per entry of @lines, each at most VIEW_COLS
 * columns; returns the number of lines. status prints them, top draws them. */
static void hitter_lines(const struct view *v, int only, char lines[][VIEW_COLS + 1], int *n,
			 int max);
static void lease_line(const struct view *v, char lines[][VIEW_COLS + 1], int *n, int max);

static int view_lines(const struct view *v, int only, char lines[][VIEW_COLS + 1], int max)
{
	struct class_row rows[SHEDD_NR_CLASSES + 1];
	const struct shedd_ctl_state *s = &v->st;
	char why[64];
	int n = 0, c;


	class_rows(v, rows);
	why_list(v, why, sizeof(why), ",");
	add_line(lines, &n, max, "shedd on %s: %s", v->iface,
	     v->running ? "running" : "NOT RUNNING (the pinned program keeps its last rates)");
	add_line(lines, &n, max, "limit %.0f SYN/s%s  controller %s  mode %s", limit_now(v),
	     pinned(v) ? " PINNED" : "", controller_name(v), mode_name(v));
	if (v->have_ctl && s->controller == SHEDD_CTL_AIMD) {
		if (s->mode == AIMD_RECOVERING)
			add_line(lines, &n, max, "stage %u/%u  last good %.0f/s  controller limit %.0f/s", s->stage + 1,
			     s->nr_stages, (double)s->last_good_mrate / 1000,
			     (double)s->limit_mrate / 1000);
		else
			add_line(lines, &n, max, "why %s  last good %.0f/s  controller limit %.0f/s", why[0] ? why : "-",
			     (double)s->last_good_mrate / 1000, (double)s->limit_mrate / 1000);
		add_line(lines, &n, max, "peak accept %.0f/s  peak served %.0f/s", (double)s->peak_accept_mrate / 1000,
		     (double)s->peak_served_mrate / 1000);
	}
	if (v->have_lease)
		lease_line(v, lines, &n, max);
	if (v->have_tx && v->tx_blocked)
		add_line(lines, &n, max, "XDP_TX frames go nowhere: cookies and RSTs are OFF (see shedd's log)");
	if (pinned(v))
		add_line(lines, &n, max, "rate pinned at %.0f SYN/s (shedctl rate unpin gives it back)",
		     (double)v->cmd.pinned_mrate / 1000);
	if (v->have_ctl) {
		char soj[32] = "-", dep[32] = "-", lat[32] = "-", tgt[32] = "-";

		if (s->have & SHEDD_CTL_HAVE_SOJOURN)
			snprintf(soj, sizeof(soj), "%.2fms", (double)s->sojourn_min_ns / 1e6);
		if (s->have & SHEDD_CTL_HAVE_DEPTH)
			snprintf(dep, sizeof(dep), "%llu/%llu", (unsigned long long)s->depth,
				 (unsigned long long)s->backlog);
		if (s->have & SHEDD_CTL_HAVE_LATENCY)
			snprintf(lat, sizeof(lat), "%.2fms", (double)s->latency_p99_ns / 1e6);
		if (s->latency_target_ns)
			snprintf(tgt, sizeof(tgt), "%.2fms", (double)s->latency_target_ns / 1e6);
		add_line(lines, &n, max, "sojourn min %s  depth %s  latency p99 %s (target %s)", soj, dep, lat, tgt);
		add_line(lines, &n, max, "demand %.0f/s  admitted %.0f/s  (last tick; state %.1fs old)",
		     (double)s->demand_mrate / 1000, (double)s->admitted_mrate / 1000, v->age_s);
	} else {
		add_line(lines, &n, max, "no controller state in the pins");
	}
	add_line(lines, &n, max, "%s", "");
	add_line(lines, &n, max, "%-15s %12s %12s %12s %12s", "class", "offered/s", "admitted/s", "shed/s", "rate/s");
	for (c = 0; c <= SHEDD_NR_CLASSES; c++) {
		char rate[32];

		if (c < SHEDD_NR_CLASSES)
			snprintf(rate, sizeof(rate), "%llu", (unsigned long long)v->rates[c]);
		else
			snprintf(rate, sizeof(rate), "%.0f", limit_now(v));
		add_line(lines, &n, max, "%-15s %12.0f %12.0f %12.0f %12s",
		     c < SHEDD_NR_CLASSES ? class_name((__u32)c) : "total", rows[c].offered,
		     rows[c].admitted, rows[c].shed, rate);
	}
	if (rows[SHEDD_NR_CLASSES].cookies > 0)
		add_line(lines, &n, max, "cookie SYN-ACKs %.0f/s (verified admission)", rows[SHEDD_NR_CLASSES].cookies);
	hitter_lines(v, only, lines, &n, max);
	return n;
}

/* The heavy hitters of every class (@only < 0) or of class @only, in 80
 * columns: class, source, level, rate/s, the class's limit/s there, shed. */
static void hitter_lines(const struct view *v, int only, char lines[][VIEW_COLS + 1], int *n,
			 int max)
{
	int c, i, any = 0;

	add_line(lines, n, max, "%s", "");
	if (!v->fair.have) {
		add_line(lines, n, max, "heavy hitters: %.64s", v->fair_err);
		return;
	}
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		const struct fair_view_class *fc = &v->fair.cls[c];

		if (only >= 0 && c != only)
			continue;
		for (i = 0; i < fc->ntop; i++) {
			const struct fair_hitter *h = &fc->top[i];
			char src[64], lim[16] = "-";

			if (!any++)
				add_line(lines, n, max, "%-14s %-29s %-4s %9s %9s %9s", "class",
					 "heavy hitter", "lvl", "rate/s", "limit/s", "shed");
			if (fc->cfg.limit[h->level])
				snprintf(lim, sizeof(lim), "%.1f",
					 fair_view_limit_per_sec(fc->cfg.limit[h->level]));
			fair_hitter_source(h, src, sizeof(src));
			add_line(lines, n, max, "%-14s %-29s %-4s %9.1f %9s %9llu", class_name((__u32)c),
				 src, fair_view_hitter_level(h), h->rate_per_sec, lim,
				 (unsigned long long)h->shed);
		}
	}
	if (!any)
		add_line(lines, n, max, "heavy hitters: none over its share in the last %.0fs%s%s",
			 (double)FAIR_HEAVY_AGE_NS / 1e9, only >= 0 ? " in " : "",
			 only >= 0 ? class_name((__u32)only) : "");
}

/* The lease: off, held, running or run out, and the heartbeat's age. */
static void lease_line(const struct view *v, char lines[][VIEW_COLS + 1], int *n, int max)
{
	const struct lease_state *l = &v->lease;
	char age[32] = "never";

	if (l->age_s >= 0)
		snprintf(age, sizeof(age), "%.1fs ago", l->age_s);
	if (!l->on)
		add_line(lines, n, max, "lease off (fail static)  heartbeat %s", age);
	else if (l->expired)
		add_line(lines, n, max, "lease %.0fs EXPIRED  heartbeat %s: climbing to the "
			 "fail-static %.0f SYN/s", l->lease_s, age, l->fail_static_rate);
	else
		add_line(lines, n, max, "lease %.0fs%s  heartbeat %s  fail-static %.0f SYN/s",
			 l->lease_s, l->pinned ? " (held by the rate pin)" : "", age,
			 l->fail_static_rate);
}

static void json_num(const char *key, double v, bool have, bool comma)
{
	if (have)
		printf("\"%s\":%.3f%s", key, v, comma ? "," : "");
	else
		printf("\"%s\":null%s", key, comma ? "," : "");
}

/* One JSON object with stable keys; a value the pins do not hold is null.
 * Interface names have no characters that JSON must escape (iface_name_valid
 * allows printable ones; '"' and '\\' are refused below). */
static void view_json(const struct view *v)
{
	struct class_row rows[SHEDD_NR_CLASSES + 1];
	const struct shedd_ctl_state *s = &v->st;
	bool aimd = v->have_ctl && s->controller == SHEDD_CTL_AIMD;
	size_t i;
	int c;

	class_rows(v, rows);
	printf("{\"iface\":\"%s\",\"pin_dir\":\"%s\",\"daemon_running\":%s,\"interval_s\":%.3f,",
	       v->iface, v->dir, v->running ? "true" : "false", v->dt);
	json_num("limit_per_sec", limit_now(v), true, true);
	printf("\"pinned\":%s,", pinned(v) ? "true" : "false");
	printf("\"xdp_tx_blocked\":%s,", !v->have_tx ? "null" : v->tx_blocked ? "true" : "false");
	json_num("pinned_rate_per_sec", (double)v->cmd.pinned_mrate / 1000, pinned(v), true);
	json_num("lease_s", v->lease.lease_s, v->have_lease && v->lease.on, true);
	printf("\"lease_expired\":%s,", !v->have_lease ? "null" : v->lease.expired ? "true" : "false");
	json_num("heartbeat_age_s", v->lease.age_s, v->have_lease && v->lease.age_s >= 0, true);
	json_num("fail_static_per_sec", v->lease.fail_static_rate, v->have_lease && v->lease.on,
		 true);
	printf("\"controller\":\"%s\",\"mode\":\"%s\",", controller_name(v), mode_name(v));
	if (aimd && s->mode == AIMD_RECOVERING)
		printf("\"stage\":%u,\"stages\":%u,", s->stage + 1, s->nr_stages);
	else
		printf("\"stage\":null,\"stages\":%u,", aimd ? s->nr_stages : 0);
	printf("\"why\":[");
	for (i = 0, c = 0; i < NR_WHY; i++)
		if (v->have_ctl && (s->why & (1U << i)))
			printf("%s\"%s\"", c++ ? "," : "", why_names[i]);
	printf("],");
	json_num("controller_limit_per_sec", (double)s->limit_mrate / 1000, aimd, true);
	json_num("last_good_per_sec", (double)s->last_good_mrate / 1000, aimd, true);
	json_num("peak_accept_per_sec", (double)s->peak_accept_mrate / 1000, aimd, true);
	json_num("peak_served_per_sec", (double)s->peak_served_mrate / 1000, aimd, true);
	json_num("state_age_s", v->age_s, v->have_ctl && v->age_s >= 0, true);
	printf("\"signals\":{");
	json_num("sojourn_min_ms", (double)s->sojourn_min_ns / 1e6,
		 v->have_ctl && (s->have & SHEDD_CTL_HAVE_SOJOURN), true);
	json_num("depth", (double)s->depth, v->have_ctl && (s->have & SHEDD_CTL_HAVE_DEPTH), true);
	json_num("backlog", (double)s->backlog, v->have_ctl && (s->have & SHEDD_CTL_HAVE_DEPTH),
		 true);
	json_num("latency_p99_ms", (double)s->latency_p99_ns / 1e6,
		 v->have_ctl && (s->have & SHEDD_CTL_HAVE_LATENCY), true);
	json_num("latency_target_ms", (double)s->latency_target_ns / 1e6,
		 v->have_ctl && s->latency_target_ns, true);
	json_num("demand_per_sec", (double)s->demand_mrate / 1000, v->have_ctl, true);
	json_num("admitted_per_sec", (double)s->admitted_mrate / 1000, v->have_ctl, false);
	printf("},\"classes\":[");
	for (c = 0; c < SHEDD_NR_CLASSES; c++) {
		printf("%s{\"class\":\"%s\",\"offered_per_sec\":%.3f,\"admitted_per_sec\":%.3f,"
		       "\"shed_per_sec\":%.3f,\"cookies_per_sec\":%.3f,\"rate_per_sec\":%llu,"
		       "\"fair\":", c ? "," : "", class_name((__u32)c), rows[c].offered,
		       rows[c].admitted, rows[c].shed, rows[c].cookies,
		       (unsigned long long)v->rates[c]);
		if (v->fair.have)
			fair_view_json(stdout, &v->fair.cls[c]);
		else
			printf("null");
		printf("}");
	}
	printf("],\"total\":{\"offered_per_sec\":%.3f,\"admitted_per_sec\":%.3f,"
	       "\"shed_per_sec\":%.3f}}\n",
	       rows[SHEDD_NR_CLASSES].offered, rows[SHEDD_NR_CLASSES].admitted,
	       rows[SHEDD_NR_CLASSES].shed);
}

static int cmd_status(const struct cli *c)
{
	char lines[VIEW_LINES][VIEW_COLS + 1];
	struct pins p;
	struct view v;
	int ret, n, i;

	if (c->nargs != 1)
		return usage_error("status takes no argument (got '%s')", c->args[1]);
	memset(&v, 0, sizeof(v));
	if ((ret = open_pins(c, &p, v.iface, sizeof(v.iface))))
		return ret;
	ret = view_read(&p, &v, true, c->interval_ns);
	pins_close(&p);
	if (ret)
		return ret;
	if (c->json) {
		view_json(&v);
		return 0;
	}
	n = view_lines(&v, -1, lines, VIEW_LINES);
	for (i = 0; i < n; i++)
		printf("%s\n", lines[i]);
	return 0;
}

/* top --json, or top into a pipe: each class's fairness and its heavy
 * hitters, once. */
static int top_once(const struct cli *c)
{
	char lines[VIEW_LINES][VIEW_COLS + 1];
	struct pins p;
	struct view v;
	int ret, n, i, k;

	memset(&v, 0, sizeof(v));
	if ((ret = open_pins(c, &p, v.iface, sizeof(v.iface))))
		return ret;
	snprintf(v.dir, sizeof(v.dir), "%s", p.dir);
	v.running = pins_daemon_running(&p);
	fair_read(p.dir, &v);
	pins_close(&p);
	if (!v.fair.have)
		return runtime_error(v.fair_err);
	if (c->json) {
		printf("{\"iface\":\"%s\",\"pin_dir\":\"%s\",\"daemon_running\":%s,"
		       "\"window_s\":%.3f,\"classes\":[", v.iface, v.dir,
		       v.running ? "true" : "false", FAIR_WINDOW_S);
		for (i = 0, k = 0; i < SHEDD_NR_CLASSES; i++) {
			if (c->cls_set && (__u32)i != c->cls)
				continue;
			printf("%s{\"class\":\"%s\",\"fair\":", k++ ? "," : "", class_name((__u32)i));
			fair_view_json(stdout, &v.fair.cls[i]);
			printf("}");
		}
		printf("]}\n");
		return 0;
	}
	printf("shedd on %s: %s\n", v.iface, v.running ? "running" : "NOT RUNNING");
	for (i = 0; i < SHEDD_NR_CLASSES; i++) {
		const struct fair_view_class *fc = &v.fair.cls[i];
		char levels[32];
		__u32 l;

		if (c->cls_set && (__u32)i != c->cls)
			continue;
		if (!fc->cfg.levels) {
			printf("%-14s fairness off\n", class_name((__u32)i));
			continue;
		}
		fair_format_levels(fc->cfg.levels, levels, sizeof(levels));
		printf("%-14s fairness %s (%s), %llu shed; sources/limit per s:",
		       class_name((__u32)i), fc->cfg.active ? "ACTIVE" : "idle", levels,
		       (unsigned long long)fc->stats.shed);
		for (l = 0; l < FAIR_LEVELS; l++)
			if (fair_view_level_used(&fc->cfg, l))
				printf(" %s %u/%.1f", fair_view_level_label(l), fc->cfg.sources[l],
				       fair_view_limit_per_sec(fc->cfg.limit[l]));
		printf("\n");
	}
	n = 0;
	hitter_lines(&v, c->cls_set ? (int)c->cls : -1, lines, &n, VIEW_LINES);
	for (i = 0; i < n; i++)
		printf("%s\n", lines[i]);
	return 0;
}

static int cmd_top(const struct cli *c)
{
	char lines[VIEW_LINES][VIEW_COLS + 1];
	struct pins p;
	struct view v;
	int ret, n, i, ch = 0;
	bool first = true;

	if (c->nargs != 1)
		return usage_error("top takes no argument (got '%s')", c->args[1]);
	if (c->json || !isatty(STDOUT_FILENO))
		return top_once(c);
	memset(&v, 0, sizeof(v));
	if ((ret = open_pins(c, &p, v.iface, sizeof(v.iface))))
		return ret;
	if (!isatty(STDIN_FILENO)) {
		pins_close(&p);
		return runtime_error("top needs a terminal for its keys (top --json prints once)");
	}
	initscr();
	cbreak();
	noecho();
	curs_set(0);
	/* The first screen after a short read, then one every interval; a key
	 * press ends the wait early. */
	timeout(0);
	while (ch != 'q' && ch != 'Q') {
		ret = view_read(&p, &v, first, first ? 200000000ULL : 0);
		if (ret)
			break;
		first = false;
		n = view_lines(&v, c->cls_set ? (int)c->cls : -1, lines, VIEW_LINES);
		erase();
		for (i = 0; i < n && i < LINES - 1; i++)
			mvaddnstr(i, 0, lines[i], COLS);
		mvaddnstr(LINES - 1, 0, "q quits", COLS);
		refresh();
		timeout((int)(c->interval_ns / 1000000ULL));
		ch = getch();
	}
	endwin();
	pins_close(&p);
	return ret;
}

static int cmd_rate(const struct cli *c)
{
	struct shedd_ctl_cmd cmd;
	char err[512], iface[IF_NAMESIZE];
	struct pins p;
	__u64 n;
	int ret;

	if (c->nargs < 2)
		return usage_error("rate needs pin N or unpin");
	if (!strcmp(c->args[1], "pin")) {
		if (c->nargs != 3)
			return usage_error("rate pin needs one rate N (SYN/s)");
		if (parse_u64(c->args[2], 1, MAX_TOTAL_RATE_PER_SEC, &n, err, sizeof(err)))
			return usage_error("rate pin: %s", err);
		memset(&cmd, 0, sizeof(cmd));
		cmd.flags = SHEDD_CMD_RATE_PINNED;
		cmd.pinned_mrate = n * 1000;
	} else if (!strcmp(c->args[1], "unpin")) {
		if (c->nargs != 2)
			return usage_error("rate unpin takes no argument (got '%s')", c->args[2]);
		memset(&cmd, 0, sizeof(cmd));
	} else {
		return usage_error("rate: unknown subcommand '%s' (pin, unpin)", c->args[1]);
	}
	cmd.changed_ns = real_ns();
	if ((ret = open_pins(c, &p, iface, sizeof(iface))))
		return ret;
	ret = pins_write_cmd(&p, &cmd, err, sizeof(err)) ? runtime_error(err) : 0;
	if (!ret) {
		if (cmd.flags & SHEDD_CMD_RATE_PINNED)
			printf("%s: rate pinned at %llu SYN/s%s\n", iface, (unsigned long long)n,
			       pins_daemon_running(&p) ? " (from shedd's next tick)"
						       : " (shedd is not running: it holds "
							 "from its next start)");
		else
			printf("%s: rate unpinned\n", iface);
	}
	pins_close(&p);
	return ret;
}

static void print_rule(const struct prefix_rule *r, char *buf, size_t len)
{
	char addr[INET6_ADDRSTRLEN];

	inet_ntop(r->family, r->addr, addr, sizeof(addr));
	snprintf(buf, len, "%s/%u", addr, r->prefixlen);
}

static int prefix_list(const struct cli *c, struct pins *p)
{
	struct prefix_entry *list;
	char err[512], cidr[INET6_ADDRSTRLEN + 8];
	int n, i;

	if (prefixes_list(p, &list, &n, err, sizeof(err)))
		return runtime_error(err);
	if (c->json)
		printf("{\"prefixes\":[");
	else
		printf("%-44s %-15s %s\n", "prefix", "class", "origin");
	for (i = 0; i < n; i++) {
		const char *origin = list[i].manual ? "manual" : "config";

		print_rule(&list[i].rule, cidr, sizeof(cidr));
		bool over = list[i].manual && list[i].config_cls < SHEDD_NR_CLASSES;

		if (c->json) {
			printf("%s{\"prefix\":\"%s\",\"class\":\"%s\",\"origin\":\"%s\","
			       "\"applied\":%s,\"replaces\":", i ? "," : "", cidr,
			       class_name(list[i].rule.cls), origin,
			       list[i].applied ? "true" : "false");
			if (over)
				printf("\"%s\"}", class_name(list[i].config_cls));
			else
				printf("null}");
		} else {
			printf("%-44s %-15s %s%s%s%s\n", cidr, class_name(list[i].rule.cls), origin,
			       over ? " (over config " : "", over ? class_name(list[i].config_cls) : "",
			       over ? ")" : "");
			if (!list[i].applied)
				printf("%-44s %-15s (not applied yet: shedd applies it at start)\n",
				       "", "");
		}
	}
	if (c->json)
		printf("]}\n");
	free(list);
	return 0;
}

static int cmd_prefix(const struct cli *c)
{
	char err[512], iface[IF_NAMESIZE];
	struct prefix_rule r;
	const char *sub;
	struct pins p;
	int ret = 0;

	if (c->nargs < 2)
		return usage_error("prefix needs add, del or list");
	sub = c->args[1];
	memset(&r, 0, sizeof(r));
	if (!strcmp(sub, "add")) {
		if (c->nargs != 4)
			return usage_error("prefix add needs CIDR CLASS");
		if (parse_cidr(c->args[2], &r, err, sizeof(err)) ||
		    parse_class(c->args[3], &r.cls, err, sizeof(err)))
			return usage_error("prefix add: %s", err);
	} else if (!strcmp(sub, "del")) {
		if (c->nargs != 3)
			return usage_error("prefix del needs one CIDR");
		if (parse_cidr(c->args[2], &r, err, sizeof(err)))
			return usage_error("prefix del: %s", err);
	} else if (!strcmp(sub, "list")) {
		if (c->nargs != 2)
			return usage_error("prefix list takes no argument (got '%s')", c->args[2]);
	} else {
		return usage_error("prefix: unknown subcommand '%s' (add, del, list)", sub);
	}
	if (c->json && strcmp(sub, "list"))
		return usage_error("--json: only for prefix list");
	if ((ret = open_pins(c, &p, iface, sizeof(iface))))
		return ret;
	if (!strcmp(sub, "list")) {
		ret = prefix_list(c, &p);
	} else if (!strcmp(sub, "add")) {
		if (prefixes_add(&p, &r, err, sizeof(err)))
			ret = runtime_error(err);
		else
			printf("%s: %s -> %s\n", iface, c->args[2], class_name(r.cls));
	} else {
		if (prefixes_del(&p, &r, err, sizeof(err)))
			ret = runtime_error(err);
		else
			printf("%s: %s removed\n", iface, c->args[2]);
	}
	pins_close(&p);
	return ret;
}

static int quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	return 0;
}

static int cmd_detach(const struct cli *c)
{
	struct shedd_options o;

	if (c->nargs != 1)
		return usage_error("detach takes no argument (got '%s')", c->args[1]);
	if (!c->iface || !c->iface[0])
		return usage_error("detach needs --iface IF");
	if (!iface_name_valid(c->iface))
		return usage_error("'%s' is not an interface name", c->iface);
	memset(&o, 0, sizeof(o));
	snprintf(o.iface, sizeof(o.iface), "%s", c->iface);
	if (c->netns)
		snprintf(o.netns, sizeof(o.netns), "%s", c->netns);
	o.remove = true;
	/* The same code as shedd --remove; its lines say what happened. */
	return detach_remove(&o) ? EXIT_RUNTIME : 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*run)(const struct cli *c);
	} commands[] = {
		{ "status", cmd_status }, { "top", cmd_top },	    { "prefix", cmd_prefix },
		{ "rate", cmd_rate },	  { "detach", cmd_detach },
	};
	struct cli c;
	size_t i;
	int ret;

	if ((ret = parse_cli(argc, argv, &c)))
		return ret;
	if (c.nargs == 0) {
		if (c.help) {
			fputs(usage_text, stdout);
			return 0;
		}
		fputs(usage_text, stderr);
		return EXIT_USAGE;
	}
	if (c.iface && (strchr(c.iface, '"') || strchr(c.iface, '\\')))
		return usage_error("'%s' is not an interface name", c.iface);
	libbpf_set_print(quiet);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(c.args[0], commands[i].name))
			continue;
		if (c.help) {
			fputs(command_help[i][1], stdout);
			return 0;
		}
		if (c.interval_set && strcmp(c.args[0], "status") && strcmp(c.args[0], "top"))
			return usage_error("--interval: only for status and top");
		if (c.json && strcmp(c.args[0], "status") && strcmp(c.args[0], "prefix") &&
		    strcmp(c.args[0], "top"))
			return usage_error("--json: only for status, top and prefix list");
		if (c.cls_set && strcmp(c.args[0], "top"))
			return usage_error("--class: only for top");
		return commands[i].run(&c);
	}
	return usage_error("unknown command '%s'", c.args[0]);
}
