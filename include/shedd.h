/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* shedd.h - every map key, map value, class and limit that the XDP program
 * (bpf/) and the daemon (user/) share. The includer provides __u8/__u16/
 * __u32/__u64 (vmlinux.h on the BPF side, <linux/types.h> in userspace), so
 * this header includes nothing that only one side has; struct bpf_spin_lock
 * comes from vmlinux.h on the BPF side and from <linux/bpf.h> here.
 */
#ifndef SHEDD_H
#define SHEDD_H

#ifndef __VMLINUX_H__
#include <linux/bpf.h>
#endif

/* Priority classes, most important first. The index is the priority: a
 * lower index is shed later. */
enum shedd_class {
	SHEDD_CRITICAL_PLUS = 0,
	SHEDD_CRITICAL = 1,
	SHEDD_SHEDDABLE_PLUS = 2,
	SHEDD_SHEDDABLE = 3,
	SHEDD_NR_CLASSES = 4,
};

/* How a class proves its clients' addresses before it spends a token on
 * them (verified admission, bpf/syncookie.h). A verified SYN is answered at
 * XDP with a SYN-ACK carrying a SYN cookie and costs no token; the ACK that
 * returns a valid cookie is charged to the class instead. */
enum shedd_verify {
	SHEDD_VERIFY_OFF = 0,      /* every SYN is charged as it comes */
	SHEDD_VERIFY_SHEDDING = 1, /* cookies on a CPU that shed the class within
				    * verify_hold_ns; charged directly otherwise */
	SHEDD_VERIFY_ALWAYS = 2,   /* every SYN is answered with a cookie */
	SHEDD_NR_VERIFY,
};

/* How a proven connection reaches the listener. */
enum shedd_handoff {
	/* A tc ingress program checks the cookie again and gives the listener
	 * a request socket with bpf_sk_assign_tcp_reqsk() (kernel >= 6.9).
	 * The timestamp carries the MSS index in bits 6-7. */
	SHEDD_HANDOFF_TC = 0,
	/* The kernel checks the cookie itself: tcp_syncookies=2,
	 * tcp_timestamps=2, the listener's overflow stamp refreshed by XDP,
	 * the timestamp in the kernel's own layout (kernel 6.0-6.8). */
	SHEDD_HANDOFF_KERNEL = 1,
};

/* The MSS values of the kernel's SYN cookie tables (msstab in
 * net/ipv4/syncookies.c and net/ipv6/syncookies.c), index 0..3; the cookie
 * helpers return one of them. Macros, not arrays: the BPF side must not
 * hold static const arrays. */
#define SHEDD_MSS4(i) ((i) == 0 ? 536 : (i) == 1 ? 1300 : (i) == 2 ? 1440 : 1460)
#define SHEDD_MSS6(i) ((i) == 0 ? 1220 : (i) == 1 ? 1420 : (i) == 2 ? 1440 : 8940)

/* The low bits of the timestamp value a cookie SYN-ACK sends, echoed by
 * the client in its ACK (the kernel's layout, net/ipv4/syncookies.c, plus
 * the MSS index for the tc hand-off). */
#define SHEDD_TS_WSCALE_MASK 0x0fU /* the client's window scale; 0xf: none */
#define SHEDD_TS_SACK 0x10U
#define SHEDD_TS_ECN 0x20U
#define SHEDD_TS_KERNEL_BITS 6     /* bits the kernel's own layout uses */
#define SHEDD_TS_MSS_SHIFT 6       /* tc hand-off only: MSS index, 2 bits */
#define SHEDD_TS_TC_BITS 8
/* tc hand-off only: the other 24 bits are shedd's tag of the cookie, the
 * flow hash (include/flow_hash.h, under shedd's own key) XOR the cookie.
 * Both kinds of cookie pass the kernel's check (they share its secret),
 * but the kernel's own (tcp_syncookies=2, a listener's overflow) echo its
 * clock plus a per-flow offset there (tcp_conn_request(),
 * secure_tcp_ts_off()), which its cookie_v4_check() takes off before it
 * decodes the options: an echo without the tag is the kernel's to decode,
 * and the tc hand-off leaves it to the kernel. */
#define SHEDD_TS_TAG_MASK 0xffffff00U
static inline __attribute__((always_inline)) __u32 shedd_ts_tag(__u32 flow_hash, __u32 cookie)
{
	return (flow_hash ^ cookie) & SHEDD_TS_TAG_MASK;
}

/* How a shed SYN is refused. */
enum shedd_reject {
	SHEDD_REJECT_DROP = 0, /* XDP_DROP: the client retransmits (1 s, 2 s, 4 s...) */
	SHEDD_REJECT_RST = 1,  /* XDP_TX of a RST: the client fails fast */
};

#ifndef MAX_PORTS
#define MAX_PORTS 64 /* protected destination ports */
#endif
#ifndef MAX_BACKEND_PORTS
#define MAX_BACKEND_PORTS 16 /* --backend-port: signals only, never shed */
#endif
#ifndef MAX_PORT_LIMITS
#define MAX_PORT_LIMITS 16 /* protected ports with a limit of their own at once */
#endif
#ifndef MAX_PREFIXES
#define MAX_PREFIXES 16384 /* entries in each LPM trie */
#endif
/* VLAN tags walked before a frame is refused. The kernel strips any
 * number of priority (VID 0) tags and follows a VLAN device per non-zero
 * VID, so a frame still tagged after the walk could carry a SYN that is
 * delivered (a 6.18 of 2026 drops a frame behind nine priority tags,
 * RECURSION_LIMIT; the source of earlier kernels has no bound).
 * 802.1ad + 802.1Q is two; a priority tag in front of each, a
 * tag a switch adds and room for one more stack make eight, still cheap
 * to walk (4 bytes a step) and to copy into a reply (46 bytes of L2). */
#ifndef MAX_VLAN_TAGS
#define MAX_VLAN_TAGS 8
#endif
#ifndef SHEDD_MAX_BRD4
#define SHEDD_MAX_BRD4 8 /* IPv4 broadcast addresses in settings */
#endif
#ifndef MAX_IPV6_EXT_HDRS
#define MAX_IPV6_EXT_HDRS 6 /* extension headers walked before giving up */
#endif

#ifndef MAX_TUN_UDP_PORTS
#define MAX_TUN_UDP_PORTS 8 /* UDP ports of VXLAN and Geneve devices judged */
#endif
#ifndef MAX_TUN_LOCAL
#define MAX_TUN_LOCAL 1024 /* local addresses a tunnel may end on (tun_local) */
#endif

/* Tunnels whose inner SYNs are judged, by what the outer header says
 * (shedd_tun_config.kinds): one bit per kind of device that ends here. */
#define SHEDD_TUN_IPIP    (1U << 0) /* IPv4 in IPv4, protocol 4: ipip, sit mode any */
#define SHEDD_TUN_SIT     (1U << 1) /* IPv6 in IPv4, protocol 41: sit */
#define SHEDD_TUN_4IN6    (1U << 2) /* IPv4 in IPv6, next header 4: ip6tnl */
#define SHEDD_TUN_6IN6    (1U << 3) /* IPv6 in IPv6, next header 41: ip6tnl */
#define SHEDD_TUN_GRE     (1U << 4) /* GRE in IPv4 carrying IP: gre */
#define SHEDD_TUN_GRETAP  (1U << 5) /* GRE in IPv4 carrying Ethernet: gretap */
#define SHEDD_TUN_GRE6    (1U << 6) /* GRE in IPv6 carrying IP: ip6gre */
#define SHEDD_TUN_GRETAP6 (1U << 7) /* GRE in IPv6 carrying Ethernet: ip6gretap */

/* What a UDP port of shedd_tun_config.udp_port carries. */
enum shedd_tun_udp {
	SHEDD_UDP_NONE = 0,
	SHEDD_UDP_VXLAN = 1,  /* RFC 7348: 8 bytes, then Ethernet */
	SHEDD_UDP_GENEVE = 2, /* RFC 8926: 8 bytes and options, then Ethernet or IP */
	SHEDD_UDP_FOU = 3,    /* foo-over-UDP: the payload is protocol udp_proto */
	SHEDD_UDP_GUE = 4,    /* GUE: a GUE header, then what it names */
};

/* tun_config: written by userspace only. ARRAY with one entry: the tunnels
 * that end on this host, found by the daemon (user/daemon/tunnels.h), whose inner
 * SYNs are judged (bpf/tunnel.h). A map of its own, not settings: only
 * the tunnel path reads it, and settings keeps the layout older readers
 * know. All 0: nothing is decapsulated. */
struct shedd_tun_config {
	__u32 kinds;                      /* SHEDD_TUN_* */
	__u16 udp_port[MAX_TUN_UDP_PORTS]; /* host order; 0: unused */
	__u8 udp_kind[MAX_TUN_UDP_PORTS];  /* enum shedd_tun_udp */
	/* Once padding: 0 from a daemon that did not read the devices'
	 * parameters. Bits 0-7: the SHEDD_TDEV_* kinds whose devices are
	 * all in tun_devs (a tunnel of one that matches none is the
	 * kernel's to drop); bits 8-12: the TUN_SHAPE_* of the keys there. */
	__u32 match;
	/* Appended for FOU and GUE, whose sockets are of one family. */
	__u8 udp_proto[MAX_TUN_UDP_PORTS];  /* SHEDD_UDP_FOU: the IP protocol it carries */
	__u8 udp_family[MAX_TUN_UDP_PORTS]; /* 0: UDP over both; 4, 6: over IPv4, IPv6 only */
};

#define SHEDD_TUN_MATCH(kind) (1U << (kind))
#define SHEDD_TUN_SHAPES_SHIFT 8

/* The kinds of device whose parameters the program matches
 * (shedd_tun_key.kind): those the kernel looks a device up by. */
enum shedd_tdev_kind {
	SHEDD_TDEV_NONE = 0,
	SHEDD_TDEV_VXLAN = 1,  /* by UDP port and VNI (vxlan_vs_find_vni()) */
	SHEDD_TDEV_GENEVE = 2, /* by UDP port, VNI and remote (geneve_lookup()) */
	SHEDD_TDEV_GRE = 3,    /* gre, ip6gre: by key, remote, local (ip_tunnel_lookup()) */
	SHEDD_TDEV_GRETAP = 4, /* gretap, ip6gretap: the same, in a table of their own */
	SHEDD_TDEV_IPIP = 5,   /* IPv4 in IPv4: ipip, sit of mode ipip or any: remote, local */
	SHEDD_TDEV_SIT = 6,    /* IPv6 in IPv4: sit of mode ip6ip or any: remote, local */
	SHEDD_TDEV_IP6TNL = 7, /* IP in IPv6: ip6tnl: remote, local (ip6_tnl_lookup()) */
};

/*
 * tun_devs: HASH, written by the daemon only: the tunnel devices that end
 * here, by what the kernel looks them up by when it decapsulates, at most
 * MAX_TUN_DEVS. A key holds a device's parameters as the kernel compares
 * them; an address the device leaves open is all zeros (VXLAN compares no
 * address at all; Geneve only the remote; GRE and IP in IP both, either
 * may be open; a multicast remote is kept as the local address, as the
 * kernel takes a packet to the group from anyone). A device that takes
 * every packet of its kind (collect_md, "external"; the fallback devices
 * gre0, tunl0, sit0..., when up) is one key of flags TUN_KEY_ANY and
 * port, kind only. The program tries the key's shapes (TUN_SHAPE_*) the
 * daemon says are present, the exact addresses first, as
 * ip_tunnel_lookup() does.
 */
#ifndef MAX_TUN_DEVS
#define MAX_TUN_DEVS 256
#endif
#define TUN_KEY_KEYED 1U /* GRE: the device (and the packet) has a key */
#define TUN_KEY_ANY 2U   /* a device that takes every packet of its kind */
struct shedd_tun_key {
	__u8 kind;       /* enum shedd_tdev_kind */
	__u8 flags;      /* TUN_KEY_* */
	__u16 port;      /* VXLAN, Geneve: the UDP port, host order */
	__u32 id;        /* VXLAN, Geneve: the VNI, host order; GRE: the key as on the wire */
	__u8 local[16];  /* the outer destination (IPv4 as ::ffff:a.b.c.d), 0: any */
	__u8 remote[16]; /* the outer source, 0: any */
};
/* The shapes of key the program tries, in this order. */
#define TUN_SHAPE_BOTH 0   /* remote and local */
#define TUN_SHAPE_REMOTE 1 /* remote, any local */
#define TUN_SHAPE_LOCAL 2  /* local, any remote */
#define TUN_SHAPE_NONE 3   /* neither */
#define TUN_SHAPE_ANY 4    /* TUN_KEY_ANY */
#define TUN_NR_SHAPES 5
struct shedd_tun_dev {
	__u32 ifindex; /* the device: what the inner packet comes in on */
	__u32 _pad;
};

/* The TUN_SHAPE_* of a key of tun_devs: which addresses it holds. */
static inline __u32 shedd_tun_key_shape(const struct shedd_tun_key *k)
{
	__u8 r = 0, l = 0;
	int i;

	if (k->flags & TUN_KEY_ANY)
		return TUN_SHAPE_ANY;
	for (i = 0; i < 16; i++) {
		r |= k->remote[i];
		l |= k->local[i];
	}
	return r ? (l ? TUN_SHAPE_BOTH : TUN_SHAPE_REMOTE) : (l ? TUN_SHAPE_LOCAL : TUN_SHAPE_NONE);
}

/* tun_local: HASH, a local address (IPv4 as ::ffff:a.b.c.d) -> __u8 (1),
 * written by the daemon: the kernel decapsulates only what is addressed
 * to the host itself. */
struct shedd_tun_addr {
	__u8 addr[16];
};

/* A token is worth NSEC_PER_SEC bucket units, so a refill is
 * elapsed_ns * rate_per_sec units and needs no division. */
#define SHEDD_NSEC_PER_SEC 1000000000ULL
/* Bounds that keep elapsed_ns * rate_per_sec inside 64 bits:
 * 1e12 ns * 1e7 /s = 1e19 < 1.8e19. */
#define MAX_RATE_PER_SEC 10000000ULL   /* per class */
#define MAX_REFILL_NS 1000000000000ULL /* 1000 s of idle refills a bucket fully */
#define MAX_BURST 1000000ULL           /* tokens */
#define MAX_BATCH 65536U               /* tokens a CPU borrows at once */

/*
 * A class's admitted rate is one token bucket per class, the reserve, shared
 * by every CPU; each CPU borrows a few tokens at a time from it into a local
 * cache and spends them without touching shared memory. See token_bucket.h.
 */

/* The rate of one class, as userspace publishes it. */
struct shedd_class_rate {
	__u64 rate_per_sec;      /* tokens added to the reserve per second, now */
	__u64 prev_rate_per_sec; /* mean rate from the reserve's last refill
				  * before changed_ns up to changed_ns */
	__u64 changed_ns;        /* when rate_per_sec took effect (CLOCK_MONOTONIC) */
	__u64 burst;             /* depth of the reserve, in tokens */
	__u64 lease_ns;          /* how long a CPU may keep borrowed tokens, and
				  * how long it waits after finding the reserve empty */
	__u32 batch;             /* most tokens a CPU borrows at once (>= 1) */
	__u32 flags;             /* SHEDD_RATE_SET once userspace wrote it */
};
#define SHEDD_RATE_SET 1U /* without it the class is not configured: admit */

/* rates: written by userspace only (BPF_F_LOCK). ARRAY, key = class. The
 * lock makes the record one value for the program, which copies it under
 * the lock before it uses it. */
struct shedd_rate {
	struct bpf_spin_lock lock;
	__u32 pad;
	struct shedd_class_rate r;
};

/*
 * lease: the daemon's lease on the rates it wrote. Written by the daemon
 * only (BPF_F_LOCK), every tick; read by the program when a CPU borrows
 * from a class's reserve. ARRAY with one entry. Fail static is the rule
 * (docs/datapath.md): a dead daemon leaves its last rates. With a lease
 * (lease_ns > 0), a daemon silent for longer than lease_ns lets each class
 * climb from its last rate to fail_rate_per_sec[class], linearly over
 * relax_ns, never below the last rate (include/lease.h). A heartbeat
 * restores the daemon's rates at once. Every field 0 (pins of an older
 * shedd, --lease 0): fail static as before.
 */
#define SHEDD_LEASE_PINNED 1U /* flags: an operator pinned the rate: no lease */
struct shedd_lease {
	struct bpf_spin_lock lock;
	__u32 flags;            /* SHEDD_LEASE_PINNED */
	__u64 heartbeat_ns;     /* the daemon's last tick (CLOCK_MONOTONIC); 0: never */
	__u64 lease_ns;         /* 0: no lease, fail static */
	__u64 relax_ns;         /* how long the climb to the fail-static rate takes */
	__u64 fail_rate_per_sec[SHEDD_NR_CLASSES]; /* where each class climbs to */
	__u64 fail_burst[SHEDD_NR_CLASSES];        /* and its burst there */
};

/* The shared bucket of one class. */
struct shedd_reserve_state {
	__u64 tokens;  /* in units of 1/NSEC_PER_SEC token */
	__u64 last_ns; /* time of the last refill; 0 = never: starts full */
};

/* reserve: written by the XDP program only, under its lock. ARRAY,
 * key = class. Kept apart from rates so a rate update never clobbers the
 * bucket. */
struct shedd_reserve {
	struct bpf_spin_lock lock;
	__u32 pad;
	struct shedd_reserve_state s;
};

/* buckets: the local cache of one class on one CPU, written by the XDP
 * program only. PERCPU_ARRAY, key = class. */
struct shedd_bucket {
	__u64 tokens;   /* whole tokens borrowed from the reserve, not yet spent */
	__u64 until_ns; /* they are good until then; stale ones are dropped */
	__u64 retry_ns; /* the reserve was empty: do not ask it before then */
	__u32 batch;    /* tokens this CPU borrowed last time (adapts) */
	__u32 pad;
	__u64 verify_until_ns; /* SHEDD_VERIFY_SHEDDING: this CPU answers the
				* class with cookies until then */
};

/* Counters of one class on one CPU. */
struct shedd_class_stats {
	__u64 syn;      /* protected SYNs classified into this class (offered) */
	__u64 admitted; /* passed to the stack */
	__u64 dropped;  /* shed by XDP_DROP */
	__u64 rst_sent; /* shed by an RST sent back with XDP_TX */
	/* Verified admission. */
	__u64 charged;        /* token requests: SYNs charged directly and
			       * proven ACKs; the class's demand */
	__u64 cookie_sent;    /* SYNs answered with a cookie SYN-ACK */
	__u64 cookie_limited; /* SYNs over the cookie budget: shed as above */
	__u64 ack_valid;      /* ACKs to a listener with a valid cookie: proven */
	__u64 ack_invalid;    /* ACKs to a listener with a forged or stale
			       * cookie: dropped */
	__u64 ack_admitted;   /* proven and within the bucket: passed */
	__u64 ack_refused;    /* proven, no token: refused with a RST (or
			       * dropped when no RST may be sent, see
			       * rst_refused and rst_limited) */
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
	/* Added after the first layout; new counters go at the end. */
	__u64 frag_judged;  /* IP first fragments that hold a SYN: judged (in cls[]) */
	__u64 frag_refused; /* TCP fragments refused (RFC 1858, RFC 7112): dropped */
	__u64 deep_refused; /* IPv6 chains or VLAN stacks deeper than the walk: dropped */
	__u64 bad_syn;      /* SYN with RST or FIN, discarded by a listener: passed */
	__u64 rst_refused;  /* shed SYNs not answered: multicast, broadcast or
			     * unspecified address, not sent to this host's
			     * MAC, or no XDP_TX that reaches the wire
			     * (shedd_config.tx_blocked) */
	__u64 rst_limited;  /* shed SYNs not answered: over the RST budget */
	__u64 cookie_failed; /* SYN-ACK not built (no helper, odd frame):
			      * the SYN was shed instead */
	__u64 ack_probed;    /* ACKs to a protected port of a verified class
			      * looked up in the socket table */
	__u64 refreshed;     /* SHEDD_HANDOFF_KERNEL: listener stamps refreshed */
	__u64 ack_queue_full; /* proven ACKs to a listener whose accept queue is
			       * full: dropped as the kernel would, no token */
	__u64 ack_after_rst;  /* proven segments of a flow just refused with a
			       * RST: dropped, no token */
	__u64 ack_repeat;     /* proven segments of a flow just admitted, its
			       * connection not made yet: passed, no token */
	__u64 syn_tuple_busy; /* SYNs of a verified class whose 4-tuple a
			       * socket holds (TIME_WAIT, a request, a
			       * connection), or whose headers the lookup
			       * cannot read: no cookie, judged as unverified */
	__u64 syn_no_listener; /* SYNs of a verified class whose lookup finds
				* no socket (a closed port, or one a NAT
				* redirect, TPROXY or IPVS takes after XDP):
				* no cookie, judged as unverified */
	__u64 syn_not_local;   /* SYNs of a verified class to an address not of
				* this host (forwarded, or a DNAT's): no
				* cookie, judged as unverified */
	__u64 ack_to_kernel;   /* ACKs of a verified class with no valid cookie
				* to a port that sent no cookie within a
				* cookie's life: passed to the kernel, which
				* resets them (within the RST budget) */
	__u64 syn_martian;    /* SYNs the kernel drops for their addresses
			       * (martian or loopback source or destination,
			       * broadcast destination, source == destination):
			       * dropped, no token, no answer */
	__u64 syn_bad_csum;   /* SYNs with a wrong TCP checksum, which the
			       * kernel drops: dropped, no token, no answer */
	__u64 src_failed;     /* SYNs of a class above the default whose source
			       * is not routed back through the interface they
			       * came in on, or whose headers the check cannot
			       * read: judged as the default class */
	__u64 src_unchecked;  /* SYNs of a class above the default whose route
			       * the kernel could not look up (forwarding off
			       * on the interface): verified while shedding */
};

/* tun_stats: written by the XDP program only. PERCPU_ARRAY with one entry:
 * the tunnels that end on this host (bpf/tunnel.h). A map of its own, so
 * readers of stats built before it (an older shedctl) read stats as they
 * always did. */
struct shedd_tun_stats {
	__u64 decap;   /* packets of a tunnel that ends here, its header read
			* to reach the inner packet */
	__u64 judged;  /* inner SYNs to a protected port: judged (in stats.cls[]) */
	__u64 refused; /* a tunnel inside a tunnel, or an inner packet that
			* could hide a SYN from us: dropped */
};

/* tun_checks: written by the XDP program only. PERCPU_ARRAY with one
 * entry: what the checks of tunnels found (bpf/tunnel.h). */
struct shedd_tun_checks {
	__u64 no_device;  /* a tunnel of a kind matched (shedd_tun_config.match)
			   * whose VNI, key or endpoints no device has: the
			   * kernel drops it; passed, uncharged */
	__u64 acks;       /* inner ACKs judged by verified admission */
	__u64 _spare[2];
};

/* syn_checks: written by the XDP program only. PERCPU_ARRAY with one
 * entry: what verified admission found of a SYN's listener (bpf/syncookie.h,
 * shedd_syn_sock()). A map of its own, so readers of stats built before it
 * read stats as they always did. */
struct shedd_syn_checks {
	__u64 syn_signed; /* SYNs of a verified class that the listener must
			   * answer itself: signed with TCP-MD5 or TCP-AO to a
			   * listener that holds keys of that kind, or any SYN
			   * to an MPTCP listener: no cookie, judged as
			   * unverified */
	__u64 _spare[3];
};

/*
 * The tunnel class space. An inner SYN is charged to its class's bucket
 * in a space of its own: tun_buckets (PERCPU_ARRAY, per class, as
 * buckets) and tun_reserve (ARRAY, per class, as reserve), written by the
 * program only, refilled at the class's own rate record (rates). So the
 * tunnels that end here admit at most what a class admits directly, and
 * an encapsulated flood spends only tokens of the tunnel space, never a
 * direct client's. Counted in stats as the class's SYNs.
 */

/* settings: written by userspace only. ARRAY with one entry. */
struct shedd_config {
	__u32 all_ports;     /* 1: every port is protected, ports map unused */
	__u32 default_class; /* class of a source that matches no prefix */
	__u8 reject[SHEDD_NR_CLASSES]; /* enum shedd_reject, per class */
	/* A RST answers only a SYN sent to this unicast MAC (all zero: none). */
	__u8 mac[6];
	/* In what was padding: 0 in an older record is what shedd did then. */
	__u8 syn_opts_off;  /* SHEDD_SYNOPT_*: options the kernel's SYN-ACKs do
			     * not offer (their sysctl is 0) */
	__u8 source_check;  /* enum shedd_source_check */
	__u32 rst_rate_per_sec; /* RST budget of each CPU: RSTs per second */
	__u32 rst_burst;        /* and its depth, in RSTs */
	/* Verified admission. */
	__u8 verify[SHEDD_NR_CLASSES]; /* enum shedd_verify, per class */
	__u8 handoff;  /* enum shedd_handoff */
	__u8 wscale;   /* window scale the SYN-ACK offers: the kernel's own */
	__u8 ecn;      /* 1: accept ECN as the kernel does (tcp_ecn 1 or 2) */
	/* 1: XDP_TX frames from this interface do not reach the wire (a veth
	 * whose peer has neither an XDP program nor GRO): no cookie and no
	 * RST; a verified class is judged as unverified, a RST is a drop.
	 * Set by the daemon from the driver (user/daemon/xdptx.h); 0 in a record
	 * of an older shedd, which had padding here. */
	__u8 tx_blocked;
	__u32 cookie_rate_per_sec; /* cookie SYN-ACKs of each CPU per second */
	__u32 cookie_burst;        /* and its depth */
	__u32 mtu;                 /* the interface's: the SYN-ACK's MSS is at
				    * most mtu - 40 (IPv4) or - 60 (IPv6), the
				    * kernel's own advertised MSS; 0: no cap */
	__u64 verify_hold_ns;      /* SHEDD_VERIFY_SHEDDING: how long a CPU
				    * that shed keeps answering with cookies */
};

/* port_set: written by userspace only, from the same list as the ports map.
 * ARRAY with one entry: bit p % 64 of word p / 64 is set when destination
 * port p is protected. The XDP program tests a bit where a hash lookup in
 * ports would cost it more than the rest of an established packet's path;
 * the tc hand-off reads ports. */
#define SHEDD_PORT_WORDS (65536 / 64)
struct shedd_port_set {
	__u64 bits[SHEDD_PORT_WORDS];
};

static inline __attribute__((always_inline)) void
shedd_port_set_add(struct shedd_port_set *ps, __u16 port)
{
	ps->bits[port / 64] |= 1ULL << (port % 64);
}

static inline __attribute__((always_inline)) int
shedd_port_set_has(const struct shedd_port_set *ps, __u16 port)
{
	return (ps->bits[port / 64] >> (port % 64)) & 1;
}

/* broadcast: written by userspace only. ARRAY with one entry: the
 * namespace's IPv4 subnet broadcast addresses (the kernel's RTN_BROADCAST
 * routes of its addresses), network order, 0 = none. A SYN to one is
 * dropped by the kernel, so it is neither charged nor answered. */
struct shedd_broadcast {
	__u32 addr[SHEDD_MAX_BRD4];
};

/* shedd_config.syn_opts_off: a sysctl of the namespace turns an option
 * off in the kernel's SYN-ACKs and in what its cookies accept. */
#define SHEDD_SYNOPT_NO_TS 1U   /* net.ipv4.tcp_timestamps = 0 */
#define SHEDD_SYNOPT_NO_SACK 2U /* net.ipv4.tcp_sack = 0 */
#define SHEDD_SYNOPT_NO_WS 4U   /* net.ipv4.tcp_window_scaling = 0 */

/* shedd_config.source_check: the reverse-path check of a SYN whose source
 * falls in a class above the default class. */
enum shedd_source_check {
	SHEDD_SRC_OFF = 0,    /* the class of the source is taken as it is */
	SHEDD_SRC_STRICT = 1, /* the route back to the source must leave by
			       * the interface the SYN came in on (rp_filter
			       * 1); else the SYN is judged as the default
			       * class */
	SHEDD_SRC_VERIFY = 2, /* as strict, but a SYN that fails the check
			       * is answered with a SYN cookie, charged only
			       * once its ACK proves the address, in the
			       * class it claims; demoted as under strict
			       * where no cookie can answer it */
};

/* rst_budget: written by the XDP program only. PERCPU_ARRAY, one entry: the
 * token bucket of RST replies on this CPU, in the units of shedd_bucket. */
struct shedd_rst_budget {
	__u64 tokens;  /* in units of 1/NSEC_PER_SEC RST */
	__u64 last_ns; /* time of the last refill */
};
#define MAX_RST_RATE_PER_SEC 1000000U /* per CPU; keeps the refill in 64 bits */
#define MAX_RST_BURST 100000U

/* cookie_budget: written by the XDP program only. PERCPU_ARRAY, one entry,
 * of struct shedd_rst_budget: the cookie SYN-ACKs' own budget on this CPU,
 * so the program reflects at most that many SYN-ACKs per second. */
#define MAX_COOKIE_RATE_PER_SEC 10000000U /* per CPU; 1000 s * 1e7 * 1e9 < 2^64 */
#define MAX_COOKIE_BURST 1000000U

/* refresh: written by the XDP program only, SHEDD_HANDOFF_KERNEL.
 * PERCPU_ARRAY of REFRESH_SLOTS, key = port % REFRESH_SLOTS: when this CPU
 * last refreshed the overflow stamp of the listener on that port. A prime:
 * ports that differ by a multiple of 1000 or a small number (80 and 8080,
 * 443 and 8443, 8080 and 8081) never share a slot, and two ports that do
 * share one take it in turn, each refreshed as often as its SYNs ask. */
#define REFRESH_SLOTS 251
#define REFRESH_NS 1000000000ULL /* at most once a second per port and CPU */
struct shedd_refresh {
	__u64 ns;
	__u16 port;
	__u16 _pad[3];
};

/* mss_cache: the MSS of a client without timestamps, for the tc hand-off
 * (its ACK echoes no options). ARRAY, shared by the XDP program, which
 * writes it when it answers such a SYN, and the tc program, which reads it
 * for the ACK: key = flow hash % MSS_CACHE_SLOTS, value = the upper 24 bits
 * of the flow hash << 8 | the MSS index. A direct-mapped cache: a flow
 * another flow evicted gets the table's smallest MSS, still a working
 * connection. */
#define MSS_CACHE_SLOTS 65536U
#define MSS_CACHE_NONE 0xffU /* no entry: index byte of an empty slot */

/* proven: the last verdict on a flow that proved its address, or that
 * was charged at its SYN. ARRAY of struct shedd_proven, shared by the XDP
 * program and the tc hand-off: key = flow hash % PROVEN_SLOTS. The
 * segments that follow a proven ACK closely (the request, sent before the
 * kernel made the connection or before the RST reached the client; on a
 * NIC or veth, those of the same NAPI poll, which GRO hands to the kernel
 * only at its end) follow the ACK's verdict instead of being charged again
 * or, from the second data segment on, whose sequence number fails the
 * cookie check, taken for forged: if they carry its acknowledgment number
 * and a sequence number at most PROVEN_SEQ_SPAN past its own, within
 * PROVEN_REPEAT_UNITS (the kernel makes the connection from the first of
 * them) and before an inbound RST or FIN of the flow. */
#define PROVEN_SLOTS 65536U
#define PROVEN_SEQ_SPAN (1U << 20)
#define PROVEN_HOLD_UNITS 3000U /* about 3 s, in units of 2^20 ns */
#define PROVEN_REPEAT_UNITS 48U /* about 50 ms: a repeat of an admitted ACK */
#define PROVEN_TIME_MASK 0x1fffffffU /* the time's 29 bits */

/* cookie_sent: when the program last answered a SYN to a port with a
 * cookie, so that an ACK without a valid cookie is dropped only while one
 * may still be outstanding and is otherwise left to the kernel, which
 * resets it. ARRAY, written by XDP: key = the port, value = the time in
 * units of 2^30 ns (about 1.07 s) | 1, 0 = never. A cookie is valid for
 * two minutes at most: the kernel takes one made in this minute of its
 * clock or the one before (MAX_SYNCOOKIE_AGE in net/ipv4/syncookies.c),
 * and it checks its own listener's cookies only within two minutes of its
 * last overflow (TCP_SYNCOOKIE_VALID). */
#define COOKIE_SENT_SLOTS 65536U
#define COOKIE_LIFE_UNITS 112U /* 120.3 s, and one unit for rounding */

/* handoff_stats: written by the tc program only. PERCPU_ARRAY, one entry. */
struct shedd_handoff_stats {
	__u64 acks;         /* ACKs to a protected port of a verified class */
	__u64 assigned;     /* given to the listener as a request socket */
	__u64 not_listener; /* the flow has a socket: established, passed */
	__u64 no_socket;    /* no listener: left to the kernel (RST) */
	__u64 invalid;      /* no cookie of shedd's that XDP admitted in this
			     * ACK's pass (forged, the kernel's own, not
			     * judged): left to the kernel */
	__u64 failed;       /* bpf_sk_assign_tcp_reqsk() refused it */
	__u64 malformed;    /* headers the program could not read: passed */
	__u64 mss_missed;   /* no timestamp and the MSS cache had no entry:
			     * handed off with the smallest MSS */
	__u64 repeat;       /* a segment of a flow just given its request
			     * socket: passed to the connection being made */
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
 * PERCPU_ARRAY of two slots per listener group; the probes write slot
 * (epoch & 1) of the connection's group, at index group * 2 + slot. Every
 * tick the daemon reads and clears the other slot, which the probes left
 * at the previous flip, a whole tick ago, then flips epoch: a probe that
 * loaded the epoch just before the flip still writes a slot nobody is
 * clearing. The groups are kept apart because the controller judges the
 * worst of them: an eager front-end's near-zero sojourn must not hide its
 * backend's standing queue in a shared minimum. sj_ports: HASH, port in
 * host byte order -> __u8 group. */
enum shedd_sojourn_group {
	SHEDD_SJ_PROTECTED = 0, /* --port, or every port without it */
	SHEDD_SJ_BACKEND = 1,   /* --backend-port */
	SHEDD_SJ_GROUPS = 2,
};
#ifndef SJ_ACCEPT_PORTS
#define SJ_ACCEPT_PORTS 1024 /* ports whose accepts the probes count */
#endif
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

/* conn_count (sojourn.bpf.c): connections to protected ports whose
 * handshake completed (opened) and that have closed since, per CPU, by the
 * class of their peer's address. Slot SHEDD_NR_CLASSES: peers no prefix
 * names, which are the default class (--default-class, as it is when the
 * counts are read). Live connections are what opened and has not closed;
 * the counts start when the daemon loads the probes. */
#define SHEDD_CONN_SLOTS (SHEDD_NR_CLASSES + 1)
struct shedd_conn_count {
	__u64 opened;
	__u64 closed;
};

/* conn_notes (sojourn.bpf.c): a counted connection's socket storage. slot:
 * the conn_count slot it was opened in; counted: its close is still to
 * come; opened_ns: when (CLOCK_MONOTONIC). */
struct shedd_conn_note {
	__u32 slot;
	__u32 counted;
	__u64 opened_ns;
};

/* ctl_state: written by the daemon only, every tick. ARRAY with one entry.
 * The controller's memory, so a restarted shedd that adopts the program
 * carries on a recovery where it was rather than starting over, and what an
 * operator (shedctl, bpftool) reads about the controller. Rates are in
 * thousandths of a SYN per second; times are CLOCK_MONOTONIC, which a
 * restart on the same boot shares. version 0 means never written.
 * Version 2 appends fields to version 1 and changes none: a version 1
 * record is a version 2 one whose appended fields are 0 (the loader
 * converts the pinned map of an older shedd so, see user/maps/ctl.c). */
#define SHEDD_CTL_STATE_VERSION 3
#define SHEDD_CTL_STATE_V1_SIZE 72
#define SHEDD_CTL_STATE_V2_SIZE 184
enum shedd_ctl_controller {
	SHEDD_CTL_AIMD = 0,  /* the limit is found by the AIMD controller */
	SHEDD_CTL_FIXED = 1, /* the limit is the fixed --rate: no controller state */
};
#define SHEDD_CTL_PINNED 1U /* flags: an operator pinned the rate (ctl_cmd) */
struct shedd_ctl_state {
	__u32 version;              /* SHEDD_CTL_STATE_VERSION once written */
	__u32 mode;                 /* 0 steady, 1 overload, 2 recovering */
	__u32 stage;                /* ramp stage while recovering, from 0 */
	__u32 why;                  /* reasons of the last overload verdict
				     * (bits: 1 sojourn, 2 depth, 4 overflow,
				     * 8 latency, 16 stall) */
	__u64 limit_mrate;          /* the controller's limit, mSYN/s; 0 with
				     * SHEDD_CTL_FIXED */
	__u64 last_good_mrate;      /* the rate the ramp climbs back to */
	__u64 floor_mrate;          /* the limit when the episode ended */
	__u64 held_mrate;           /* the last ramp stage that held its time */
	__u64 peak_accept_mrate;    /* recent peak accept rate, mconn/s */
	__u64 stage_end_ns;         /* when the current ramp stage is done */
	__u64 written_ns;           /* when this was written */
	/* Version 2. */
	__u64 peak_served_mrate;    /* recent peak of requests served, mreq/s */
	__u64 applied_mrate;        /* the limit written to the rates map:
				     * the pinned rate while pinned, else the
				     * controller's (or the fixed) limit */
	__u64 pinned_mrate;         /* the operator's rate while pinned */
	__u32 controller;           /* enum shedd_ctl_controller */
	__u32 flags;                /* SHEDD_CTL_PINNED */
	__u32 nr_stages;            /* stages of the ramp in force */
	__u32 tick_ms;              /* the daemon's tick */
	/* The signals of the last tick, as the controller saw them. */
	__u64 sojourn_min_ns;       /* minimum accept-queue sojourn (worst group) */
	__u64 sojourn_count;        /* connections accepted in the tick */
	__u64 depth;                /* accept-queue depth ... */
	__u64 backlog;              /* ... of this backlog (fullest group) */
	__u64 latency_p99_ns;       /* service latency p99; 0 without samples */
	__u64 latency_target_ns;    /* the latency target in force; 0: none */
	__u64 demand_mrate;         /* token requests (charged), mSYN/s */
	__u64 admitted_mrate;       /* admitted SYNs and proven ACKs, mSYN/s */
	__u32 have;                 /* which signals the tick had: 1 sojourn,
				     * 2 depth, 4 latency */
	__u32 spread_milli;         /* the derived target's spread x 1000,
				     * with the baseline below; 0: none
				     * measured (or written by a shedd for
				     * which this word was padding) */
	/* Version 3. */
	__u64 baseline_ns;          /* the derived target's calm latency; 0:
				     * none learned */
	__u64 calm_at_ns;           /* when its newest calm point was taken
				     * (CLOCK_MONOTONIC, as written_ns) */
};
#define SHEDD_CTL_HAVE_SOJOURN 1U
#define SHEDD_CTL_HAVE_DEPTH 2U
#define SHEDD_CTL_HAVE_LATENCY 4U

/* ctl_cmd: what an operator asks of the daemon (shedctl writes, the daemon
 * reads every tick; the program never reads it). ARRAY with one entry. */
#define SHEDD_CMD_RATE_PINNED 1U
struct shedd_ctl_cmd {
	__u32 flags;          /* SHEDD_CMD_RATE_PINNED: hold the limit */
	__u32 _pad;
	__u64 pinned_mrate;   /* the limit to hold, mSYN/s (> 0) */
	__u64 changed_ns;     /* CLOCK_REALTIME of the last change, for people */
};

/* manual_v4 / manual_v6: the prefixes an operator added with shedctl, HASH
 * of the LPM key -> struct shedd_manual_prefix. They are also in
 * prefix_v4/prefix_v6, where the program reads them; this is their record,
 * so that shedd writing its configured prefixes (at start, at a reload)
 * neither deletes nor overrides them: a manual prefix wins over a
 * configured one, whose class it keeps for the day it is deleted. */
#ifndef MAX_MANUAL_PREFIXES
#define MAX_MANUAL_PREFIXES 1024
#endif
#define SHEDD_NO_CLASS 0xffffffffU
struct shedd_manual_prefix {
	__u32 cls;        /* the operator's class */
	__u32 config_cls; /* the class shedd's configuration gives the same
			   * prefix (SHEDD_NO_CLASS: none): what deleting the
			   * manual prefix puts back */
};

/* daemon_stats: written by the daemon only, every tick. ARRAY with one
 * entry. What the daemon counts (not the program), cumulative, so the
 * Prometheus counters built from it continue across a restart, as those of
 * the stats map do: an adopting shedd loads it and carries on. The program
 * never reads it. Histograms hold one count per bound of the exposition
 * (user/core/metrics.c, SHEDD_HIST_BOUNDS, not cumulative) and one above them.
 * version 0 means never written. Version 2 appends layout_migrations to
 * version 1 and changes none: a version 1 record is a version 2 one whose
 * appended field is 0 (an upgrade converts it, see user/maps/migrate.c). */
#define SHEDD_DAEMON_STATS_VERSION 2
#define SHEDD_DAEMON_STATS_V1_SIZE (8 + (9 + SHEDD_OVERLOAD_REASONS + SHEDD_LATENCY_REFUSALS + \
					 3 * (SHEDD_HIST_BOUNDS + 3)) * 8)
#define SHEDD_HIST_BOUNDS 18          /* le bounds of an exposed histogram */
#define SHEDD_OVERLOAD_REASONS 5      /* sojourn, depth, overflow, latency, stall */
#define SHEDD_LATENCY_REFUSALS 16     /* refused datagrams, by reason (logline.h) */
struct shedd_daemon_hist {
	__u64 bucket[SHEDD_HIST_BOUNDS + 1]; /* per bound; the last is above all */
	__u64 count;
	__u64 sum_ns;
};
struct shedd_daemon_stats {
	__u32 version;           /* SHEDD_DAEMON_STATS_VERSION once written */
	__u32 _pad;
	__u64 ticks;             /* control ticks run */
	__u64 ticks_skipped;     /* ticks skipped after stalls of the daemon */
	__u64 overload_ticks;    /* ticks the controller judged overloaded */
	__u64 overload[SHEDD_OVERLOAD_REASONS]; /* of which, by reason (a tick
						  * may have several) */
	__u64 listen_overflows;  /* TcpExtListenOverflows seen grow */
	__u64 listen_drops;      /* TcpExtListenDrops seen grow */
	__u64 listener_drops;    /* drops of the protected and backend listeners */
	__u64 latency_served;    /* latency samples of answered requests */
	__u64 latency_unserved;  /* samples of requests not answered (499, 5xx) */
	__u64 latency_lost;      /* samples their senders could not send */
	__u64 latency_refused[SHEDD_LATENCY_REFUSALS]; /* datagrams refused */
	struct shedd_daemon_hist sojourn;         /* protected listeners */
	struct shedd_daemon_hist backend_sojourn; /* --backend-port listeners */
	struct shedd_daemon_hist latency;         /* service latency samples */
	/* Version 2. */
	__u64 layout_migrations; /* upgrades that carried these pins into maps
				  * of a newer layout (user/maps/migrate.c) */
};

/*
 * sysctls: the sysctls of the network namespace shedd changed for a
 * hand-off (user/maps/sysctls.c), with what it found, so whichever shedd
 * stops shedding (a stop that detaches, --remove) puts them back: the
 * program outlives the daemon that set them. ARRAY with one entry, written
 * by the daemon, never read by the program. Slot i is SHEDD_SYSCTL_*;
 * bit i of changed says shedd set it from found[i] to set[i].
 */
#define SHEDD_SYSCTL_SYNCOOKIES 0 /* net.ipv4.tcp_syncookies */
#define SHEDD_SYSCTL_TIMESTAMPS 1 /* net.ipv4.tcp_timestamps */
#define SHEDD_MAX_SYSCTLS 4
struct shedd_sysctls {
	__u64 found[SHEDD_MAX_SYSCTLS]; /* the value before shedd changed it */
	__u64 set[SHEDD_MAX_SYSCTLS];   /* the value shedd wrote */
	__u32 changed;                  /* bit i: slot i is shedd's change */
	__u32 _pad;
};

/*
 * layout: the version of the layouts of every pinned map, as one number,
 * written by the daemon that made the pins. ARRAY with one entry; the
 * program never reads it. Pins without it are of version 1. A reader
 * (shedctl, an upgrading shedd) checks it, and each map's key and value
 * sizes, before it reads a value (user/maps/layout.c):
 *   1: the layouts up to the one that added this map;
 *   2: the layout map; daemon_stats version 2 (layout_migrations);
 *   3: settings of two entries and settings_cur; proven of struct
 *      shedd_proven; flow_key; refresh of REFRESH_SLOTS 251;
 *   4: port_set;
 *   5: fair_sketch, fair_config, fair_heavy, fair_stats;
 *   6: lease;
 *   7: fair_cells, the sketch of FAIR_COLS 16384 cells a row counted by a
 *      conservative update, in place of fair_sketch (1024 cells a row),
 *      which is no longer this build's: left in the folder for a build of
 *      version 5 or 6 that adopts the pins again, removed with the rest;
 *      port_limit, port_reserve, port_buckets (and SHEDD_CUR_PORT_LIMITS,
 *      bit 1 of settings_cur, which older programs ignore);
 *   8: tun_devs, tun_checks, tun_buckets, tun_reserve (and
 *      shedd_tun_config.match, once padding, 0 for older daemons);
 *   9: syn_checks;
 *  10: fair_heavy_cpu.
 * A change to any pinned map's layout raises it, and user/maps/layout.c says
 * how a value of each older layout becomes today's.
 */
#define SHEDD_LAYOUT_VERSION 10
/*
 * layout_compat: forward compatibility, an interface that never changes.
 * ARRAY with one entry, written with layout by the daemon that made the
 * pins; the program never reads it. oldest is the oldest layout version
 * whose shedd may adopt these pins as they are: each map it knows kept its
 * layout (type, key and value sizes, entries, flags), and the maps it does
 * not know may be left alone while its program sheds. A shedd of version
 * V adopts pins of a newer version N when oldest <= V, and refuses them
 * otherwise (user/maps/layout.c, docs/pins.md). A release that changes
 * the layout of a map an older shedd reads sets oldest to its own version.
 */
#define SHEDD_LAYOUT_COMPAT 5
struct shedd_layout_compat {
	__u32 oldest; /* the oldest SHEDD_LAYOUT_VERSION that may adopt the pins */
};
struct shedd_layout {
	__u32 version; /* SHEDD_LAYOUT_VERSION of the daemon that wrote it */
	__u32 prog_id; /* the id of its XDP program: an upgrade cut short is
			* told by the program in the link (user/maps/migrate.c) */
};

/*
 * Per-source fairness (include/fair_sketch.h, bpf/fair.h, user/core/fair.c).
 * While a class sheds, a source whose recent admissions exceed its share
 * of the class's rate is shed before it takes a token. Sources are counted
 * at three levels: 0, the address; 1, the IPv4 /24 or the IPv6 /64; 2, the
 * IPv6 /48 (IPv4 has no level 2). What is counted is an admission: a SYN
 * that took a token in an unverified class, a proven ACK that took one in
 * a verified class (a cookie proves nothing yet, so a spoofed flood cannot
 * make a real client look heavy).
 *
 * fair_cells: ARRAY (BPF_F_MMAPABLE) of struct shedd_fair_cell, shared by
 * every CPU: per class and level, FAIR_ROWS rows of FAIR_COLS cells, a
 * count-min sketch with conservative update of each source's admissions
 * over a sliding window of 2^FAIR_WINDOW_SHIFT ns (6 MiB in all). Cell
 * (c, l, r, k) is at ((c * FAIR_LEVELS + l) * FAIR_ROWS + r) * FAIR_COLS + k:
 * where a value lies depends on FAIR_COLS, so a sketch of another size is
 * another map (fair_sketch, of 1024 cells a row, was layout version 5 and
 * 6's: an upgrade starts this one afresh). Bounded whatever the sources: a
 * spoofed flood only adds to counts. Its width sets the noise floor, about
 * the admissions of a window over FAIR_ROWS * FAIR_COLS (user/core/fair.h).
 */
#define FAIR_LEVELS 3
#define FAIR_ROWS 2
#define FAIR_COLS 16384U /* a power of two, at most 2^32 */
#define FAIR_CELLS (SHEDD_NR_CLASSES * FAIR_LEVELS * FAIR_ROWS * FAIR_COLS)
#define FAIR_WINDOW_SHIFT 31 /* 2^31 ns, 2.147 s */
#define FAIR_HEAVY_SLOTS 64U  /* heavy hitters remembered per class */
#define FAIR_NOTE_SHIFT 26    /* a source's slot is rewritten at most once
			       * per 2^26 ns (67 ms) by each CPU */
#define FAIR_NOTE_NS (1ULL << FAIR_NOTE_SHIFT)
/* The levels a class counts, as bits of shedd_fair_class.levels. */
#define FAIR_ADDR 1U  /* level 0: the address (IPv4 and IPv6) */
#define FAIR_NET24 2U /* level 1 of IPv4: the /24 */
#define FAIR_NET64 4U /* level 1 of IPv6: the /64 */
#define FAIR_NET48 8U /* level 2 of IPv6: the /48 */
#define FAIR_ALL_LEVELS (FAIR_ADDR | FAIR_NET24 | FAIR_NET64 | FAIR_NET48)

struct shedd_fair_cell {
	__u32 epoch; /* the window (time >> FAIR_WINDOW_SHIFT, low 32 bits) */
	__u32 cur;   /* admissions counted in that window */
	__u32 prev;  /* and in the one before it */
	__u32 _pad;
};

/* fair_config: ARRAY of SHEDD_NR_CLASSES, written by the daemon every tick.
 * The program reads it for every SYN of a class that counts. */
struct shedd_fair_class {
	__u32 levels; /* FAIR_* bits; 0: fairness off for the class */
	__u32 active; /* 1: the class shed SYNs lately: over-share sources are
		       * shed; 0: nothing is shed for fairness (but counted) */
	__u32 limit[FAIR_LEVELS]; /* most admissions a source may have in the
				   * window at each level; 0: no limit */
	__u32 sources[FAIR_LEVELS]; /* the daemon's estimate of the sources
				     * counted at each level, for readers */
};

/* fair_heavy: ARRAY of SHEDD_NR_CLASSES * FAIR_HEAVY_SLOTS, written by the
 * program: a source seen over its limit at any level (shed, or counted
 * over while the class was not shedding), at a slot of its hash. Shared by
 * every CPU, so a CPU rewrites the slot of the source it holds at most
 * once per FAIR_NOTE_NS, not for every SYN of a flood: estimate and
 * last_ns are then up to FAIR_NOTE_NS old, and the sheds of each CPU are
 * added to shed then, counted in fair_heavy_cpu meanwhile. */
struct shedd_fair_heavy {
	__u8 addr[16];   /* the source's prefix (IPv4 in the first 4 bytes) */
	__u8 family;     /* 4 or 6; 0: empty slot */
	__u8 level;      /* 0, 1, 2 */
	__u8 prefixlen;  /* 32, 24, 128, 64, 48 */
	__u8 _pad;
	__u32 estimate;  /* its count in the window when last seen */
	__u64 last_ns;   /* when (CLOCK_MONOTONIC) */
	__u64 shed;      /* SYNs of it shed for fairness in this slot, but
			  * for those still in fair_heavy_cpu */
};

/* fair_heavy_cpu: PERCPU_ARRAY of SHEDD_NR_CLASSES * FAIR_HEAVY_SLOTS, as
 * fair_heavy, written by the program: the sheds of the source this CPU
 * last noted at the slot, not yet added to the slot's shed. A reader adds
 * those whose source (addr, family, level) holds the slot (fair_top()'s
 * callers: user/maps/fair_maps.c). */
struct shedd_fair_heavy_cpu {
	__u8 addr[16]; /* the source's prefix, as in fair_heavy */
	__u8 family;   /* 4 or 6; 0: none */
	__u8 level;
	__u8 _pad[6];
	__u64 shed;    /* its SYNs shed by this CPU, not yet in the slot */
};

/* fair_stats: PERCPU_ARRAY of SHEDD_NR_CLASSES. */
struct shedd_fair_stats {
	__u64 counted; /* admissions counted into the sketch */
	__u64 checked; /* SYNs checked against the limits (class shedding) */
	__u64 shed;    /* of which shed: over the limit at some level */
	__u64 over;    /* admissions counted over a limit (class not shedding) */
};

/* proven: one flow's last verdict (see PROVEN_SLOTS). */
struct shedd_proven {
	__u32 stamp; /* the time of the verdict in units of 2^20 ns, modulo
		      * 2^29, << 3 | a FLOW_* verdict (bpf/config_maps.h); 0: none */
	__u32 hash;  /* the flow hash */
	__u32 seq;   /* FLOW_ADMITTED, _COOKIE, _REFUSED, _ASSIGNED: the sequence and */
	__u32 ack;   /* acknowledgment numbers of the ACK judged (network
		      * order); FLOW_SYN_CHARGED: seq = the SYN's ISN + 1 */
};

/* flow_key: the key of the flow hash (include/flow_hash.h), drawn by the
 * daemon from getrandom() when it first makes the pins and kept with them
 * (an adopting, restarted or upgraded daemon keeps the key the program
 * hashes with). ARRAY, one entry; never 0 once written. */
struct shedd_flow_key {
	__u64 k0;
	__u64 k1;
};

/* settings_cur: the entry of settings (0 or 1) the programs read, in bit
 * 0. The daemon writes the other entry whole, then flips this index: a
 * packet reads the index once and sees one record, old or new, never a mix
 * (user/maps/settings.c). ARRAY, one entry of __u32. Bit 1,
 * SHEDD_CUR_PORT_LIMITS, says some port has a limit of its own
 * (port_limit): read with the index a SYN reads anyway, so a program pays
 * no lookup for the port limits while there are none. Every program reads
 * the index as bit 0 only, so the flag changes no layout. */
#define SETTINGS_SLOTS 2
#define SHEDD_CUR_SLOT 1U
#define SHEDD_CUR_PORT_LIMITS 2U

/*
 * Port limits. A protected port whose listeners are all in trouble (accept
 * queue full, overflowing) while the listeners of another protected port
 * accept is in trouble of its own (user/core/port_limit.h): its SYNs are
 * judged by a token bucket of the port's own before they reach their
 * class's, at a rate the daemon finds from what the port still accepts,
 * so they do not fill a queue nobody drains, and the other ports keep
 * their admissions.
 *
 * port_limit: HASH, destination port (host order) -> struct
 * shedd_port_limit, at most MAX_PORT_LIMITS, written by the daemon only
 * (BPF_F_LOCK). slot is the entry of port_reserve and port_buckets the
 * port uses, chosen by the daemon when it adds the port and never changed
 * while the entry lives. The program looks the map up only while
 * settings_cur has SHEDD_CUR_PORT_LIMITS.
 */
struct shedd_port_limit {
	struct bpf_spin_lock lock;
	__u32 slot;               /* < MAX_PORT_LIMITS */
	struct shedd_class_rate r; /* the port's rate, as a class's */
};

/* port_reserve: ARRAY of MAX_PORT_LIMITS struct shedd_reserve, the shared
 * bucket of each slot, written by the program under its lock; the daemon
 * empties a slot's (last_ns 0: it starts full) before it gives the slot
 * to a port. port_buckets: PERCPU_ARRAY of MAX_PORT_LIMITS, each CPU's
 * cache of a slot's tokens and its counters, written by the program only;
 * the counters are never reset (the daemon takes differences). */
struct shedd_port_bucket {
	struct shedd_bucket b; /* this CPU's cache of the slot's tokens */
	__u64 syn;      /* SYNs to the slot's port judged by its limit */
	__u64 admitted; /* of which admitted: on to their class's bucket */
	__u64 shed;     /* of which shed by the port's limit */
};

#ifndef __bpf__
_Static_assert(sizeof(struct shedd_proven) == 16, "shedd_proven is a map value");
_Static_assert(sizeof(struct shedd_flow_key) == 16, "shedd_flow_key is a map value");
_Static_assert(80 % REFRESH_SLOTS != 8080 % REFRESH_SLOTS &&
	       443 % REFRESH_SLOTS != 8443 % REFRESH_SLOTS &&
	       8080 % REFRESH_SLOTS != 8081 % REFRESH_SLOTS &&
	       80 % REFRESH_SLOTS != 8000 % REFRESH_SLOTS &&
	       443 % REFRESH_SLOTS != 9443 % REFRESH_SLOTS &&
	       80 % REFRESH_SLOTS != 443 % REFRESH_SLOTS, "common ports share no refresh slot");
_Static_assert(sizeof(struct shedd_class_rate) == 48, "shedd_class_rate is a map value");
_Static_assert(sizeof(struct shedd_rate) == 56, "shedd_rate is a map value");
_Static_assert(sizeof(struct shedd_lease) == 8 + 11 * 8, "shedd_lease is a map value");
_Static_assert(sizeof(struct shedd_reserve) == 24, "shedd_reserve is a map value");
_Static_assert(sizeof(struct shedd_port_limit) == 56, "shedd_port_limit is a map value");
_Static_assert(sizeof(struct shedd_port_bucket) == 64, "shedd_port_bucket is a map value");
_Static_assert((MAX_PORT_LIMITS & (MAX_PORT_LIMITS - 1)) == 0, "MAX_PORT_LIMITS is a power of two");
_Static_assert(sizeof(struct shedd_bucket) == 40, "shedd_bucket is a map value");
_Static_assert(sizeof(struct shedd_class_stats) == 11 * 8, "shedd_class_stats");
_Static_assert(sizeof(struct shedd_stats) == 4 * 88 + 27 * 8, "shedd_stats is a map value");
_Static_assert(sizeof(struct shedd_config) == 56, "shedd_config is a map value");
_Static_assert(sizeof(struct shedd_port_set) == 8192, "shedd_port_set is a map value");
_Static_assert(sizeof(struct shedd_broadcast) == 4 * SHEDD_MAX_BRD4, "shedd_broadcast is a map value");
_Static_assert(sizeof(struct shedd_tun_stats) == 3 * 8, "shedd_tun_stats is a map value");
_Static_assert(sizeof(struct shedd_tun_config) == 48, "shedd_tun_config is a map value");
_Static_assert(sizeof(struct shedd_tun_addr) == 16, "tun_local key");
_Static_assert(sizeof(struct shedd_tun_key) == 40, "tun_devs key");
_Static_assert(sizeof(struct shedd_tun_dev) == 8, "tun_devs value");
_Static_assert(sizeof(struct shedd_tun_checks) == 4 * 8, "shedd_tun_checks is a map value");
_Static_assert(sizeof(struct shedd_syn_checks) == 4 * 8, "shedd_syn_checks is a map value");
_Static_assert(SHEDD_TDEV_IP6TNL < SHEDD_TUN_SHAPES_SHIFT, "the match bits below the shapes");
_Static_assert(sizeof(struct shedd_refresh) == 16, "shedd_refresh is a map value");
_Static_assert(sizeof(struct shedd_handoff_stats) == 9 * 8, "shedd_handoff_stats");
_Static_assert(sizeof(struct shedd_rst_budget) == 16, "shedd_rst_budget is a map value");
_Static_assert(sizeof(struct shedd_ctl_state) == 8 * 4 + 20 * 8 + 2 * 4, "shedd_ctl_state");
_Static_assert(SHEDD_CTL_STATE_V1_SIZE == 4 * 4 + 7 * 8, "version 1 of shedd_ctl_state");
_Static_assert(sizeof(struct shedd_ctl_state) == SHEDD_CTL_STATE_V2_SIZE + 16,
	       "version 3 of shedd_ctl_state appends two words to version 2");
_Static_assert(sizeof(struct shedd_ctl_cmd) == 24, "shedd_ctl_cmd is a map value");
_Static_assert(sizeof(struct shedd_manual_prefix) == 8, "shedd_manual_prefix is a map value");
_Static_assert(sizeof(struct shedd_daemon_stats) == SHEDD_DAEMON_STATS_V1_SIZE + 8,
	       "shedd_daemon_stats is a map value");
_Static_assert(sizeof(struct shedd_layout) == 8, "shedd_layout is a map value");
_Static_assert(sizeof(struct shedd_layout_compat) == 4, "shedd_layout_compat never changes");
_Static_assert(sizeof(struct shedd_sysctls) == 72, "shedd_sysctls is a map value");
_Static_assert(sizeof(struct shedd_fair_cell) == 16, "shedd_fair_cell is a map value");
_Static_assert(sizeof(struct shedd_fair_class) == 32, "shedd_fair_class is a map value");
_Static_assert(sizeof(struct shedd_fair_heavy) == 40, "shedd_fair_heavy is a map value");
_Static_assert(sizeof(struct shedd_fair_heavy_cpu) == 32, "shedd_fair_heavy_cpu is a map value");
_Static_assert(sizeof(struct shedd_fair_stats) == 32, "shedd_fair_stats is a map value");
_Static_assert((FAIR_COLS & (FAIR_COLS - 1)) == 0, "FAIR_COLS is a power of two");
_Static_assert(sizeof(struct shedd_lpm_v4) == 8, "LPM key");
_Static_assert(sizeof(struct shedd_lpm_v6) == 20, "LPM key");
#endif

#endif /* SHEDD_H */
