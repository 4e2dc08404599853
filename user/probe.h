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

/* The window scale and ECN the kernel's SYN-ACKs offer in this namespace
 * (syn_wscale(), syn_ecn()). 0 or a negative errno, with a message. */
int probe_syn_options(__u8 *wscale, __u8 *ecn);

#endif /* SHEDD_PROBE_H */
