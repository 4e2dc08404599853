/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* probe.h - what verified admission reads from the running kernel: the BPF
 * helpers and kfunc it needs, and the sysctls of shedd's network namespace
 * (read and written through /proc/sys, which shows the namespace of the
 * process: call these after entering --netns).
 */
#ifndef SHEDD_PROBE_H
#define SHEDD_PROBE_H

#include "kernel_features.h"

/* Fill @f from the kernel: helper probes in XDP, the kfunc in vmlinux BTF. */
void probe_features(struct shedd_features *f);

/* Read a sysctl (dotted name) as a whole number. 0 or a negative errno. */
int sysctl_read_u64(const char *name, __u64 *v);

/* Bring the sysctls @handoff needs to a value it works with; one line on
 * stderr for each value changed. Returns 0, or a negative errno after a
 * message naming the sysctl that could not be read or written. */
int probe_apply_sysctls(__u8 handoff);

/* Note net.core.rmem_max as the namespace shedd starts in sees it: before
 * Linux 6.15 it is the host's, and a network namespace other than the
 * initial one has no file for it. Call before entering --netns. */
void probe_host_rmem_max(void);

/* The window scale and ECN the kernel's SYN-ACKs offer in this namespace
 * (syn_wscale(), syn_ecn()). net.core.rmem_max comes from the namespace,
 * else from probe_host_rmem_max(), else it counts as 0 (tcp_rmem decides),
 * said in a warning. 0 or a negative errno, with a message. */
int probe_syn_options(__u8 *wscale, __u8 *ecn);

#endif /* SHEDD_PROBE_H */
