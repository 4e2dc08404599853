/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* shedd.h - every map key, map value, class and limit that the XDP program
 * (bpf/) and the daemon (user/) share. The includer provides __u8/__u16/
 * __u32/__u64 (vmlinux.h on the BPF side, <linux/types.h> in userspace), so
 * this header includes nothing that only one side has.
 */
#ifndef SHEDD_H
#define SHEDD_H

/* Priority classes, most important first. The index is the priority: a
 * lower index is shed later. */
enum shedd_class {
	SHEDD_CRITICAL_PLUS = 0,
	SHEDD_CRITICAL = 1,
	SHEDD_SHEDDABLE_PLUS = 2,
	SHEDD_SHEDDABLE = 3,
	SHEDD_NR_CLASSES = 4,
};

/* How a shed SYN is refused. */
enum shedd_reject {
	SHEDD_REJECT_DROP = 0, /* XDP_DROP: the client retransmits (1 s, 2 s, 4 s...) */
	SHEDD_REJECT_RST = 1,  /* XDP_TX of a RST: the client fails fast */
};

#ifndef MAX_PORTS
#define MAX_PORTS 64 /* protected destination ports */
#endif
#ifndef MAX_PREFIXES
#define MAX_PREFIXES 16384 /* entries in each LPM trie */
#endif
#ifndef MAX_VLAN_TAGS
#define MAX_VLAN_TAGS 2 /* 802.1ad outer + 802.1Q inner */
#endif
#ifndef MAX_IPV6_EXT_HDRS
#define MAX_IPV6_EXT_HDRS 6 /* extension headers walked before giving up */
#endif

/* A token is worth NSEC_PER_SEC bucket units, so a refill is
 * elapsed_ns * rate_per_sec units and needs no division. */
#define SHEDD_NSEC_PER_SEC 1000000000ULL
/* Bounds that keep elapsed_ns * rate_per_sec inside 64 bits:
 * 1e12 ns * 1e7 /s = 1e19 < 1.8e19. */
#define MAX_RATE_PER_SEC 10000000ULL   /* per class, per CPU */
#define MAX_REFILL_NS 1000000000000ULL /* 1000 s of idle refills a bucket fully */
#define MAX_BURST 1000000ULL           /* tokens */

/* rates: written by userspace only. PERCPU_ARRAY, key = class. Each CPU's
 * value is that CPU's share of the class rate. */
struct shedd_rate {
	__u64 rate_per_sec; /* tokens added per second on this CPU */
	__u64 burst;        /* bucket depth, in tokens */
};

/* buckets: written by the XDP program only. PERCPU_ARRAY, key = class.
 * Kept apart from shedd_rate so a rate update never clobbers bucket state. */
struct shedd_bucket {
	__u64 tokens;  /* in units of 1/NSEC_PER_SEC token */
	__u64 last_ns; /* time of the last refill */
};

/* Counters of one class on one CPU. */
struct shedd_class_stats {
	__u64 syn;      /* protected SYNs classified into this class (offered) */
	__u64 admitted; /* passed to the stack */
	__u64 dropped;  /* shed by XDP_DROP */
	__u64 rst_sent; /* shed by an RST sent back with XDP_TX */
};

/* stats: written by the XDP program only. PERCPU_ARRAY with one entry. */
struct shedd_stats {
	struct shedd_class_stats cls[SHEDD_NR_CLASSES];
	__u64 packets;     /* every packet seen */
	__u64 non_syn;     /* TCP that is not a pure SYN: passed */
	__u64 unprotected; /* pure SYN to a port that is not protected: passed */
	__u64 non_ip;      /* not IPv4/IPv6 (ARP, LLDP...): passed */
	__u64 non_tcp;     /* IPv4/IPv6 that is not TCP: passed */
	__u64 fragment;    /* IP fragments: passed (no TCP header to trust) */
	__u64 malformed;   /* truncated or invalid headers: passed */
};

/* settings: written by userspace only. ARRAY with one entry. */
struct shedd_config {
	__u32 all_ports;     /* 1: every port is protected, ports map unused */
	__u32 default_class; /* class of a source that matches no prefix */
	__u8 reject[SHEDD_NR_CLASSES]; /* enum shedd_reject, per class */
};

/* prefix_v4 / prefix_v6: LPM tries, source prefix -> class (__u32). */
struct shedd_lpm_v4 {
	__u32 prefixlen;
	__u8 addr[4];
};

struct shedd_lpm_v6 {
	__u32 prefixlen;
	__u8 addr[16];
};

/* ports: HASH, destination port in host byte order -> __u8 (1). */

/* Accept-queue sojourn aggregate of one tick on one CPU. sojourn: a
 * PERCPU_ARRAY of two slots; the probes write slot (epoch & 1). Every tick
 * the daemon reads and clears the other slot, which the probes left at the
 * previous flip, a whole tick ago, then flips epoch: a probe that loaded
 * the epoch just before the flip still writes a slot nobody is clearing. */
#ifndef SOJOURN_HIST_BUCKETS
#define SOJOURN_HIST_BUCKETS 224 /* = HIST_BUCKETS of histogram.h */
#endif
struct shedd_sojourn {
	__u64 count;  /* connections accepted */
	__u64 sum_ns; /* sum of their sojourn times */
	__u64 min_ns; /* 0 when count == 0 */
	__u64 max_ns;
	__u32 hist[SOJOURN_HIST_BUCKETS];
	__u64 established; /* handshakes completed: connections queued */
};

#ifndef __bpf__
_Static_assert(sizeof(struct shedd_rate) == 16, "shedd_rate is a map value");
_Static_assert(sizeof(struct shedd_bucket) == 16, "shedd_bucket is a map value");
_Static_assert(sizeof(struct shedd_stats) == 4 * 32 + 7 * 8, "shedd_stats is a map value");
_Static_assert(sizeof(struct shedd_config) == 12, "shedd_config is a map value");
_Static_assert(sizeof(struct shedd_lpm_v4) == 8, "LPM key");
_Static_assert(sizeof(struct shedd_lpm_v6) == 20, "LPM key");
#endif

#endif /* SHEDD_H */
