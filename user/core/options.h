/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* options.h - shedd's command line, its config file (config.h) and the
 * strict parsers behind them (numbers, CIDR prefixes, class names). Errors
 * are returned as text, nothing is printed and nothing exits here; the only
 * I/O is reading the --config file, through a hook tests replace.
 */
#ifndef SHEDD_OPTIONS_H
#define SHEDD_OPTIONS_H

#include <net/if.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "shedd.h"

#define SHEDD_VERSION "0.1.0"
#define DEFAULT_RATE_PER_SEC 10000
#define DEFAULT_TICK_MS 100
#define DEFAULT_FLOOR 0.10
#define DEFAULT_HEADROOM 0.10
#define MAX_RECALL_RATE 100000
#define MAX_TICK_MS 10000
#define MAX_TOTAL_RATE_PER_SEC 100000000ULL
#define DEFAULT_RST_RATE_PER_SEC 10000 /* RSTs per second, all CPUs together */
/* Cookie SYN-ACKs per second, all CPUs together: what a spoofed flood
 * can reflect off the host (one SYN-ACK per SYN, never more: about
 * 600 Mbit/s at this rate, a bound that no longer grows with the CPUs), and
 * enough to answer every SYN of a flood several times what the kernel's
 * own cookie path takes, so verified clients keep being served. */
#define DEFAULT_COOKIE_RATE_PER_SEC 1000000
#define DEFAULT_VERIFY_HOLD_NS 10000000000ULL /* 10 s */
#define DEFAULT_STATUS_INTERVAL_NS 1000000000ULL /* 1 s */
#define MIN_LEASE_NS 1000000000ULL /* --lease: 1 s at least */

#define MAX_RAMP_STAGES 8

#define DEFAULT_METRICS_ADDR "127.0.0.1:9464"

enum controller_kind {
	CONTROLLER_OFF = 0,  /* the rate is --rate, fixed */
	CONTROLLER_AIMD = 1, /* the rate is found by the AIMD loop */
};

enum xdp_mode {
	XDP_MODE_NATIVE = 0,
	XDP_MODE_GENERIC = 1,
};

/* --handoff: how a proven connection reaches the listener. */
enum handoff_choice {
	HANDOFF_AUTO = 0,   /* tc where the kernel has the kfunc, else off */
	HANDOFF_TC = 1,     /* SHEDD_HANDOFF_TC, or refuse to start */
	HANDOFF_KERNEL = 2, /* SHEDD_HANDOFF_KERNEL: sets tcp_syncookies=2 and
			     * tcp_timestamps=2 in shedd's network namespace */
};

/* One --prefix CIDR=CLASS. */
struct prefix_rule {
	int family;     /* AF_INET or AF_INET6 */
	__u32 prefixlen;
	__u8 addr[16];  /* network byte order; IPv4 in the first 4 bytes */
	__u32 cls;
};

struct shedd_options {
	char iface[IF_NAMESIZE];
	char netns[256];          /* --netns NAME: setns() into /run/netns/NAME */
	__u16 ports[MAX_PORTS];   /* host order; none = every port */
	int nr_ports;
	/* --backend-port: listeners of the service behind the protected
	 * ports (an upstream in shedd's namespace); their queues count as
	 * overload, their SYNs are not judged by XDP */
	__u16 backend_ports[MAX_BACKEND_PORTS];
	int nr_backend_ports;
	__u64 rate_per_sec;       /* total admitted SYNs per second (start, with aimd) */
	bool rate_set;            /* --rate given */
	bool metrics_addr_set;    /* --metrics-addr given: it must be had */
	/* --user: who the daemon is once attached (0: it stays root); without
	 * it the user shedd, if there is one */
	bool user_set;
	__u32 run_uid, run_gid;
	char user_name[64];
	enum controller_kind controller;
	__u64 target_delay_ns;    /* 0 = the controller's default */
	__u64 interval_ns;
	__u64 min_rate;           /* 0 = default */
	__u64 max_rate;
	double ramp[MAX_RAMP_STAGES];
	int nr_ramp;              /* -1 = default stages; 0 = --ramp none */
	__u64 ramp_hold_ns;
	__u64 patience_ns; /* --patience: clients' patience; the derived target stays under a quarter */
	bool patience_set; /* --patience given: the derived target is at least an eighth of it */
	__u64 latency_target_ns;  /* 0 = none given: derived, unless off */
	double depth_frac;        /* 0 = default */
	__u64 step;               /* additive step, SYN/s per 100 ms; 0 = default */
	char latency_socket[108]; /* UNIX datagram socket for latency samples */
	__u64 burst;              /* total bucket depth; 0 = rate / 10 */
	struct prefix_rule *prefixes;
	int nr_prefixes;
	__u32 default_class;
	__u8 reject[SHEDD_NR_CLASSES];
	double floor[SHEDD_NR_CLASSES];
	/* Per-source fairness (fair.h): a source may take fair_slack times an
	 * equal share of its class while the class sheds; 0: off. */
	double fair_slack[SHEDD_NR_CLASSES];
	__u32 fair_levels[SHEDD_NR_CLASSES]; /* FAIR_* bits */
	enum xdp_mode xdp_mode;
	bool xdp_mode_set;        /* --xdp-mode given: an adopted program must run so */
	bool nic_vlan_tag;        /* --nic-vlan-tag auto: the bound program where the driver gives the tag */
	bool conn_limit;          /* --conn-limit auto: the live connections held at the door (conc.h) */
	__u64 recall_rate;        /* --recall: idle connections ended per second at most; 0: off (recall.h) */
	__u32 tick_ms;
	bool keep_on_exit;
	bool force;
	bool remove;
	bool check_config;        /* --check-config: parse, say, exit */
	int verbose;
	__u64 rst_rate_per_sec;   /* --rst-rate: RST budget of the host */
	__u8 source_check;        /* --source-check: enum shedd_source_check */
	bool latency_socket_set;  /* --latency-socket given (else the default) */
	bool latency_target_off;  /* --latency-target off: latency is no signal */
	bool latency_group_set;   /* --latency-group given */
	__u32 latency_gid;        /* the latency socket's group (mode 0660) */
	/* Verified admission. */
	__u8 verify[SHEDD_NR_CLASSES]; /* enum shedd_verify, per class */
	bool verify_explicit;     /* --verify asked a class for a mode other than off */
	unsigned int verify_named; /* classes --verify named (bit per class) */
	enum handoff_choice handoff;
	__u64 cookie_rate_per_sec; /* --cookie-rate: the host's, all CPUs */
	__u64 verify_hold_ns;     /* --verify-hold */
	char config[256];         /* --config FILE; "" = none */
	char metrics_addr[64];    /* --metrics-addr HOST:PORT; "none" = off */
	__u64 status_interval_ns; /* --status-interval; 0 = no status line */
	/* --lease: a daemon silent this long lets the program climb to the
	 * fail-static rate (include/lease.h); 0: off, fail static */
	__u64 lease_ns;
	__u64 fail_static_rate;   /* --fail-static-rate, SYN/s; 0 = --rate */
};

/* The options, in the order of --help. Each has a long option, maybe a
 * short one, a config file key (the long name with '_' for '-') in a
 * section, and a default: options_table[] holds them all, once. */
enum opt_id {
	OPT_IFACE, OPT_NETNS, OPT_PORT, OPT_BACKEND_PORT, OPT_RATE, OPT_BURST, OPT_LEASE,
	OPT_FAIL_STATIC_RATE,
	OPT_PREFIX, OPT_DEFAULT_CLASS, OPT_SOURCE_CHECK, OPT_FLOOR, OPT_REJECT, OPT_RST_RATE,
	OPT_CONTROLLER, OPT_TARGET_DELAY, OPT_INTERVAL, OPT_MIN_RATE, OPT_MAX_RATE,
	OPT_STEP, OPT_DEPTH_FRAC, OPT_RAMP, OPT_RAMP_HOLD, OPT_LATENCY_TARGET, OPT_PATIENCE, OPT_CONN_LIMIT, OPT_RECALL,
	OPT_LATENCY_SOCKET, OPT_LATENCY_GROUP, OPT_VERIFY, OPT_HANDOFF,
	OPT_COOKIE_RATE, OPT_VERIFY_HOLD, OPT_FAIR, OPT_FAIR_LEVELS, OPT_XDP_MODE, OPT_NIC_VLAN_TAG,
	OPT_TICK_MS,
	OPT_METRICS_ADDR, OPT_USER, OPT_STATUS_INTERVAL, OPT_KEEP_ON_EXIT, OPT_FORCE,
	OPT_VERBOSE, OPT_CONFIG, OPT_REMOVE, OPT_CHECK_CONFIG, OPT_HELP, OPT_VERSION,
	OPT_COUNT
};

enum opt_flag {
	OPTF_FLAG = 1 << 0,     /* takes no value on the command line */
	OPTF_CLI = 1 << 1,      /* command line only: no config key */
	OPTF_REPEAT = 1 << 2,   /* repeatable: values add up (lists, per class) */
	OPTF_REPLACE = 1 << 3,  /* a list the command line replaces, not extends */
	OPTF_RESTART = 1 << 4,  /* fixed for the daemon's life: SIGHUP keeps it */
	OPTF_REQUIRED = 1 << 5, /* no default: must be given */
};

struct opt_def {
	enum opt_id id;
	const char *name;     /* long option; the key is the same with '_' */
	char short_name;      /* 0: none */
	const char *section;  /* config file section; NULL with OPTF_CLI */
	const char *metavar;  /* the value's name in --help; NULL with OPTF_FLAG */
	const char *def;      /* the default, as the option takes it (applied
			       * at start through the option's own parser) */
	const char *def_text; /* the default in words where it is derived */
	const char *help;
	unsigned int flags;
};

extern const struct opt_def options_table[OPT_COUNT];

/* The option whose config key is @key (any section), or NULL. */
const struct opt_def *options_by_key(const char *key);

/* Parsing, from the command line and a config file alike. */
struct options_state {
	struct shedd_options *o;
	bool controller_set;      /* --controller given */
	unsigned int verify_given; /* classes --verify named (bit per class) */
	bool cli;                 /* applying the command line */
	bool cli_seen[OPT_COUNT]; /* the command line gave it */
	const char *file;         /* the config file, for messages */
	int line[OPT_COUNT];      /* its line that last set each option; 0 none */
};

/* Apply one option's value (@arg NULL for a flag on the command line) to
 * @st->o; 0, or -1 with the problem in @err ("--rate: ..."). */
int options_apply(struct options_state *st, const struct opt_def *d, const char *arg,
		  char *err, size_t errlen);

/* The whole --help text. */
void options_usage(char *out, size_t outlen);

/* How the config file is read: a hook, so a fuzzer can hand in bytes. It
 * returns 0 with a malloc'd buffer, or -1 with the problem in @err. */
extern int (*options_read_file)(const char *path, char **buf, size_t *len,
				char *err, size_t errlen);

enum options_result {
	OPTIONS_RUN = 0,   /* parsed: run the daemon */
	OPTIONS_EXIT = 1,  /* --help or --version printed into out: exit 0 */
	OPTIONS_ERROR = -1 /* err says what is wrong: exit 2 (SHEDD_EXIT_USAGE) */
};

/* Parse argv into @o (which it initialises). On OPTIONS_EXIT, @out holds the
 * text to print; on OPTIONS_ERROR, @err holds the message. */
int options_parse(int argc, char **argv, struct shedd_options *o,
		  char *out, size_t outlen, char *err, size_t errlen);
void options_free(struct shedd_options *o);

/* Strict parsers; each returns 0 or -1 with a message in @err. */
int parse_u64(const char *s, __u64 min, __u64 max, __u64 *v, char *err, size_t errlen);
int parse_fraction(const char *s, double *v, char *err, size_t errlen);
/* A duration: a number with ns, us, ms or s (a bare number is ms). */
int parse_duration(const char *s, __u64 *ns, char *err, size_t errlen);
int parse_cidr(const char *s, struct prefix_rule *r, char *err, size_t errlen);
int parse_class(const char *s, __u32 *cls, char *err, size_t errlen);
/* A group name (looked up) or number, as --latency-group takes it. */
int parse_group(const char *s, __u32 *gid, char *err, size_t errlen);
/* A user, by name or uid, into its uid, its group and its name; 0 if it
 * exists, else -1 and @err says why. */
int parse_user(const char *s, __u32 *uid, __u32 *gid, char *name, size_t namelen, char *err,
	       size_t errlen);
const char *class_name(__u32 cls);
const char *verify_name(__u8 mode);
/* An interface name as the kernel accepts one: 1..IF_NAMESIZE-1 printable
 * characters, no '/', ':' or space, not "." or "..". */
bool iface_name_valid(const char *name);

/* Is @port (host order) one of @ports (@nr_ports of them; none: every
 * port is protected)? */
static inline bool options_port_protected(const __u16 *ports, int nr_ports, unsigned int port)
{
	int i;

	if (!nr_ports)
		return true;
	for (i = 0; i < nr_ports; i++)
		if (ports[i] == port)
			return true;
	return false;
}

#endif /* SHEDD_OPTIONS_H */
