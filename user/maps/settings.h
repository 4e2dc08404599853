/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* settings.h - the settings record the programs read, switched whole: two
 * entries of the settings map and the index settings_cur of the one in
 * use (include/shedd.h). A packet reads the index once, so it sees the
 * old record or the new one, never a mix of both.
 */
#ifndef SHEDD_SETTINGS_H
#define SHEDD_SETTINGS_H

#include <linux/types.h>

#include "shedd.h"

/*
 * settings_read() - the record in use, from the settings map @slots_fd and
 * its index @cur_fd. Return: 0, or a negative errno.
 */
int settings_read(int slots_fd, int cur_fd, struct shedd_config *cfg);

/*
 * settings_publish() - make @cfg the record the programs read: wait until
 * no program still reads the entry not in use (it was the record in use
 * before the last switch, and a packet that began then may still hold
 * it), write @cfg there whole, then point settings_cur at it.
 * Return: 0, or a negative errno (the record in use is then unchanged).
 */
int settings_publish(int slots_fd, int cur_fd, const struct shedd_config *cfg);

/* The flags of settings_cur beside the index (SHEDD_CUR_PORT_LIMITS). */
__u32 settings_flags(int cur_fd);

/*
 * settings_set_flags() - set the flags of settings_cur to @flags, the
 * index kept: the daemon is its only writer, so the word is read and
 * written whole. A program reads the flag with the index, per packet.
 * Return: 0, or a negative errno.
 */
int settings_set_flags(int cur_fd, __u32 flags);

/*
 * settings_wait_readers() - return once every BPF program run that began
 * before the call has ended: an update of a map-in-map waits for an RCU
 * grace period (maybe_wait_bpf_programs() in the kernel), which ends every
 * XDP and tc run that began before it.
 */
void settings_wait_readers(void);

#endif
