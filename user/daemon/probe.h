/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* probe.h - what shedd reads from the running kernel: the BPF helpers the
 * XDP program calls and the kfunc of the tc hand-off, and the sysctls of
 * shedd's network namespace (read and written through /proc/sys, which
 * shows the namespace of the process: call these after entering --netns,
 * but for probe_host_rmem_max()).
 */
#ifndef SHEDD_PROBE_H
#define SHEDD_PROBE_H

#include <stdbool.h>
#include "kernel_features.h"

/* Fill @f from the kernel: helper probes in XDP, the kfunc in vmlinux BTF. */
void probe_features(struct shedd_features *f);

/* Note net.core.rmem_max as the namespace shedd starts in sees it: before
 * Linux 6.15 it is the host's, and a network namespace other than the
 * initial one has no file for it. Call before entering --netns. */
void probe_host_rmem_max(void);

/* The window scale and ECN the kernel's SYN-ACKs offer in this namespace
 * (syn_wscale(), syn_ecn()). net.core.rmem_max comes from the namespace,
 * else from probe_host_rmem_max(), else it counts as 0 (tcp_rmem decides),
 * said in a warning. 0 or a negative errno, with a message. */
int probe_syn_options(__u8 *wscale, __u8 *ecn);

/* The SYN-ACK options the namespace's sysctls turn off in the kernel's
 * own SYN-ACKs and cookies: tcp_timestamps, tcp_sack, tcp_window_scaling
 * at 0 (SHEDD_SYNOPT_*, syn_opts_off()). 0 or a negative errno, with a
 * message naming the sysctl. */
int probe_syn_opts_off(__u8 *off);

/* The namespace's IPv4 subnet broadcast addresses (for the map
 * broadcast), network order, which
 * the kernel makes RTN_BROADCAST routes of (fib_add_ifaddr()): the last
 * address of each prefix shorter than /31 (an explicit "brd" other than
 * that is not seen). At most @max in @brd, the rest zero; the number
 * found, or a negative errno with a message. */
int probe_brd4(__u32 *brd, unsigned int max);

/* What one SIOCGIFHWADDR and one SIOCGIFMTU tell of a device: its link
 * type (ARPHRD_*), its MAC address and its MTU. */
struct iface_link {
	unsigned short type;
	__u8 mac[6];
	__u32 mtu;
};

/* Read @iface's link type, MAC and MTU into @out. 0, or a negative errno
 * with a message. */
int probe_iface_link(const char *iface, struct iface_link *out);

/* Does @iface forward IPv4 (@v6 0) or IPv6? bpf_fib_lookup() answers
 * only there. 1, 0, or a negative errno. */
int probe_forwarding(const char *iface, int v6);

/**
 * struct xdptx_probe - what the driver of shedd's interface says about the
 * frames the program sends back with XDP_TX (xdptx.h): its XDP_TX error
 * counters (ethtool statistics, ETHTOOL_GSTATS) and, for a veth attached
 * natively, its xdp-features (netdev netlink, kernel >= 6.3).
 * @fd:       socket for the ethtool ioctls; -1 when closed
 * @genl_fd:  generic netlink socket of the netdev family; -1: none
 * @family:   the netdev family's id
 * @ifindex:  the interface
 * @iface:    its name
 * @driver:   its driver, as ethtool -i names it
 * @veth:     the driver is veth, attached in native mode: the features
 *            tell whether the peer takes XDP_TX frames
 * @n_stats:  statistics the driver had when @err_idx was made
 * @err_idx:  indices of the XDP_TX error counters among them
 * @nr_err:   how many
 */
struct xdptx_probe {
	int fd, genl_fd;
	__u16 family;
	int ifindex;
	char iface[16];
	char driver[32];
	bool veth;
	__u32 n_stats;
	__u32 *err_idx;
	__u32 nr_err;
};

/* Open the probe of @iface (@ifindex), attached natively when @native.
 * Reads the driver's name and the names of its statistics. 0 or a
 * negative errno (no ethtool statistics at all is not an error: then
 * nr_err is 0). */
int probe_xdptx_open(struct xdptx_probe *p, const char *iface, int ifindex, bool native);

/* The driver's XDP_TX errors, summed over every counter that names them.
 * Returns 1 with @errors set, 0 when the driver has none, or a negative
 * errno. Re-reads the names when the driver's count of statistics
 * changed (queues added or removed). */
int probe_xdptx_errors(struct xdptx_probe *p, __u64 *errors);

/* What the driver's features say (enum xdptx_hint): for a veth attached
 * natively, whether NETDEV_XDP_ACT_NDO_XMIT is set, which veth sets
 * exactly while its peer runs an XDP program or has GRO on; NONE for any
 * other driver or mode, or a kernel without the netdev family. */
int probe_xdptx_hint(struct xdptx_probe *p);

void probe_xdptx_close(struct xdptx_probe *p);

/* Does the driver of @ifindex give XDP the VLAN tag it strips into its
 * receive descriptor (bpf_xdp_metadata_rx_vlan_tag(), kernel 6.8)? From
 * netdev's xdp-rx-metadata-features, which the kernel sets from the
 * driver's xdp_metadata_ops. 1 yes, 0 no (or a kernel without the netdev
 * family or the attribute, or SHEDD_TEST_NO_XDP_FEATURES set), or a
 * negative errno. */
int probe_xdp_rx_vlan(int ifindex);

#endif /* SHEDD_PROBE_H */
