/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* detach.h - taking shedd off an interface, and how its tc filter is known
 * (the hand-off's: tc_handoff.c attaches it).
 */
#ifndef SHEDD_DETACH_H
#define SHEDD_DETACH_H

#include <stdarg.h>
#include <stdbool.h>
#include <bpf/libbpf.h>
#include <linux/types.h>
#include "options.h"

/* The tc filter of the hand-off: fixed, so a restarted shedd replaces its
 * predecessor's filter in place (BPF_TC_F_REPLACE) and --remove finds it. */
#define SHEDD_TC_HANDLE 0x5edd
#define SHEDD_TC_PRIORITY 1
#define SHEDD_TC_PROG_NAME "shedd_handoff"

/* A libbpf print callback that prints nothing: set while asking tc what
 * may not be there (a missing filter or an existing qdisc is an answer,
 * not a warning for the operator). */
int tc_print_nothing(enum libbpf_print_level level, const char *fmt, va_list args);

/* The tc ingress hook of @ifindex. */
void tc_hook_of(struct bpf_tc_hook *hook, int ifindex);

/* The program id at shedd's handle and priority: 0 if none, and in @ours
 * whether it is a shedd hand-off: @own_id (our own program's id, 0 if
 * none), or by its name. Reading another program's name takes
 * CAP_SYS_ADMIN, which the running daemon has dropped: its own id needs
 * none. <0 on error. */
int tc_query(int ifindex, __u32 own_id, bool *ours);

/* Detach a shedd hand-off from @ifindex; a foreign filter is left alone.
 * The clsact qdisc stays: other programs may hang on it. 0 or a negative
 * errno. */
int tc_detach_ours(int ifindex, __u32 own_id);

/* shedd --remove and shedctl detach: detach a shedd left on @o->iface (in
 * @o->netns) (XDP and the tc hand-off) and remove its pins; refused
 * (-EBUSY) while a shedd runs there. 0 or a negative errno, said. */
int detach_remove(const struct shedd_options *o);

#endif /* SHEDD_DETACH_H */
